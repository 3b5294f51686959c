//! GitHub Actions annotations: when `GITHUB_ACTIONS` is set, each bug found is printed as a
//! workflow command `::error file=F,line=L,title=T::MESSAGE`, which GitHub shows on the file
//! and line in the run's summary and the pull request.
//!
//! Where an annotation points is a [`Location`], made by [`location`] (the program's source
//! file when known, else the binary; the line from an assertion's `file:line:` message) and
//! handed to [`annotation`] as a parameter, so a better location (the failing line from the
//! binary's DWARF line table) can replace it without touching the rest.

use crate::report::junit::{Case, Verdict};
use std::path::{Path, PathBuf};

/// A place in a file (as the annotation names it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: Option<u32>,
}

/// Where a bug of the program built from `file` (its source, or the binary when the source
/// is unknown) points: that file, at the line named by `message` when the message has
/// `NAME:LINE:` with NAME that file's name (glibc's assertion message does); failing that,
/// a `PATH:LINE:` of the message whose PATH is an existing file (the source an assertion
/// names, relative to the working directory); else the file without a line.
pub fn location(file: &Path, message: Option<&str>) -> Location {
    let line = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|name| message.and_then(|m| line_in(m, &name)));
    if line.is_none() {
        if let Some(found) = message.and_then(existing_file_line) {
            return found;
        }
    }
    Location {
        file: file.to_path_buf(),
        line,
    }
}

/// Where the bug's schedule failed: the source line of its last step that records the
/// caller's pc (schedules `run` saved for a first bug carry them, see `replay --trace`), as
/// the binary's DWARF line table says; `None` without pcs or line information.
pub fn schedule_location(schedule: &Path) -> Option<Location> {
    let saved = crate::report::SavedSchedule::load(schedule).ok()?;
    let site = saved
        .schedule
        .steps
        .iter()
        .rev()
        .find_map(|s| s.pc.clone())?;
    let text = crate::report::source::Symbols::new().location(&site)?;
    parse_file_line(&text)
}

/// `FILE:LINE` of a location `FILE:LINE in FUNCTION` (or `FILE:LINE`).
fn parse_file_line(text: &str) -> Option<Location> {
    let place = text.split(" in ").next()?;
    let (file, line) = place.rsplit_once(':')?;
    Some(Location {
        file: PathBuf::from(file),
        line: Some(line.parse().ok()?),
    })
}

/// The first `PATH:LINE:` word of `message` whose PATH names an existing file.
fn existing_file_line(message: &str) -> Option<Location> {
    message.split_whitespace().find_map(|w| {
        let (path, line) = w.strip_suffix(':')?.rsplit_once(':')?;
        let line: u32 = line.parse().ok()?;
        let file = PathBuf::from(path);
        file.is_file().then_some(Location {
            file,
            line: Some(line),
        })
    })
}

/// The first `LINE` of `NAME:LINE:` in `message`, where NAME is preceded by a path
/// separator, a space or nothing.
fn line_in(message: &str, name: &str) -> Option<u32> {
    let pat = format!("{name}:");
    let mut from = 0;
    while let Some(k) = message[from..].find(&pat) {
        let at = from + k;
        let before = message[..at].chars().next_back();
        let rest = &message[at + pat.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if before.is_none_or(|c| c == '/' || c == ' ' || c == '\t')
            && !digits.is_empty()
            && rest[digits.len()..].starts_with(':')
        {
            return digits.parse().ok();
        }
        from = at + pat.len();
    }
    None
}

/// Whether annotations are wanted (GitHub Actions sets `GITHUB_ACTIONS=true`).
pub fn enabled() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| !v.is_empty() && v != "false")
}

/// The workflow command of one error at `loc`. The file is named relative to the
/// repository (`GITHUB_WORKSPACE`) or else the working directory when it lies inside it, as
/// GitHub matches annotations to the repository's files.
pub fn annotation(loc: &Location, title: &str, message: &str) -> String {
    let base = std::env::var_os("GITHUB_WORKSPACE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let abs = std::fs::canonicalize(&loc.file).unwrap_or_else(|_| loc.file.clone());
    let file = base
        .and_then(|b| {
            let b = std::fs::canonicalize(&b).unwrap_or(b);
            abs.strip_prefix(&b).ok().map(Path::to_path_buf)
        })
        .unwrap_or_else(|| loc.file.clone());
    let mut props = format!("file={}", property(&file.display().to_string()));
    if let Some(l) = loc.line {
        props += &format!(",line={l}");
    }
    props += &format!(",title={}", property(title));
    format!("::error {props}::{}", data(message))
}

/// The annotations of the failed cases (bugs), one line each: one per program (its first
/// failed case; `compare` finds a bug under several algorithms).
pub fn annotations(cases: &[Case]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    cases
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Failure { .. }))
        .filter(|c| seen.insert(c.name.clone()))
        .filter_map(|c| {
            let Verdict::Failure { message, .. } = &c.verdict else {
                return None;
            };
            let loc = c.location.clone().unwrap_or_else(|| Location {
                file: PathBuf::from(&c.name),
                line: None,
            });
            let replay = c
                .text
                .lines()
                .find_map(|l| l.strip_prefix("replay: "))
                .map_or(String::new(), |r| format!("\nreplay: {r}"));
            Some(annotation(
                &loc,
                &format!("poscheck: {} ({})", c.name, c.classname),
                &format!("{message}{replay}"),
            ))
        })
        .collect()
}

/// Print the annotations of `cases` to stdout when running under GitHub Actions.
pub fn emit(cases: &[Case]) {
    if enabled() {
        for a in annotations(cases) {
            sayln!("{a}");
        }
    }
}

/// A workflow command's message: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,` escaped.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_dwarf_location_gives_its_file_and_line() {
        assert_eq!(
            parse_file_line("benchmarks/src/account.c:31 in withdraw"),
            Some(Location {
                file: PathBuf::from("benchmarks/src/account.c"),
                line: Some(31)
            })
        );
        assert_eq!(parse_file_line("in worker (prog)"), None);
    }

    use super::*;

    #[test]
    fn the_line_comes_from_an_assertion_in_the_source_file() {
        let m = "assertion failed in thread 0.2: benchmarks/src/account.c:55: auditor: \
                 Assertion `total == 150' failed.";
        let l = location(Path::new("/r/benchmarks/src/account.c"), Some(m));
        assert_eq!(l.line, Some(55));
        // Another file of the same message, or no message: no line.
        assert_eq!(location(Path::new("x/count.c"), Some(m)).line, None);
        assert_eq!(location(Path::new("account.c"), None).line, None);
        assert_eq!(line_in("a.c:12x: b.c:7: z", "b.c"), Some(7));
        assert_eq!(line_in("ba.c:7:", "a.c"), None);
        // A binary: the assertion's source file when it exists.
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs");
        let m = format!(
            "assertion failed in thread 0.1: {}:12: f: Assertion",
            src.display()
        );
        let l = location(Path::new("/bin/prog"), Some(&m));
        assert_eq!((l.file, l.line), (src, Some(12)));
        let l = location(Path::new("/bin/prog"), Some("x/none.c:12: f: Assertion"));
        assert_eq!((l.file, l.line), (PathBuf::from("/bin/prog"), None));
    }

    #[test]
    fn annotations_escape_their_data_and_properties() {
        let loc = Location {
            file: PathBuf::from("/nonexistent/dir/a,b.c"),
            line: Some(3),
        };
        let a = annotation(&loc, "t: x", "50% of\nruns");
        assert_eq!(
            a,
            "::error file=/nonexistent/dir/a%2Cb.c,line=3,title=t%3A x::50%25 of%0Aruns"
        );
    }
}
