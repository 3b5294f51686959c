//! The benchmark suite's `manifest.toml`: one `[[program]]` per binary, with the outcome the
//! bug is expected to produce and the scheduling points it needs.
//!
//! `poscheck build DIR` compiles every entry into `DIR/bin/NAME`; `poscheck run DIR` and
//! `poscheck compare DIR` run those binaries with each entry's arguments and points mode, and
//! check what they observe against `expect`.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name inside a suite directory.
pub const FILE: &str = "manifest.toml";

/// What a program's bug looks like when it is hit, or `None` for a bug-free program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    Assert,
    Crash,
    Deadlock,
    None,
}

impl Expect {
    /// The outcome kind (`outcome::Outcome::kind`) a hit of this bug has.
    pub fn kind(self) -> &'static str {
        match self {
            Expect::Assert => "assert",
            Expect::Crash => "crash",
            Expect::Deadlock => "deadlock",
            Expect::None => "none",
        }
    }

    /// Whether the program has a bug at all.
    pub fn is_buggy(self) -> bool {
        self != Expect::None
    }
}

/// One `[[program]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// File stem of the source and name of the binary in `bin/`.
    pub name: String,
    /// Source file, relative to the suite directory.
    pub source: PathBuf,
    #[serde(default)]
    pub args: Vec<String>,
    pub expect: Expect,
    /// Scheduling points the bug needs: `sync`, `mem`, `races` or `auto`.
    #[serde(default = "default_points")]
    pub points: String,
    /// Extra compiler flags for `poscheck build`.
    #[serde(default)]
    pub flags: Vec<String>,
    /// How the program is controlled: `preload`, `ptrace` or `auto` (the default: ptrace for
    /// a statically linked binary). A `--backend` other than `auto` overrides it.
    #[serde(default)]
    pub backend: Option<String>,
    /// The bug in one line (for people reading the manifest; parsed so that typos in field
    /// names are caught by `deny_unknown_fields`).
    #[serde(default)]
    #[allow(dead_code)]
    pub bug: String,
}

fn default_points() -> String {
    "sync".into()
}

#[derive(Deserialize)]
struct File {
    program: Vec<Entry>,
}

/// A parsed manifest and the directory it describes.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub dir: PathBuf,
    pub programs: Vec<Entry>,
}

impl Manifest {
    /// Whether `dir` is a suite directory (has a manifest).
    pub fn is_suite(dir: &Path) -> bool {
        dir.is_dir() && dir.join(FILE).is_file()
    }

    /// Read and check `dir/manifest.toml`.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text, dir)
    }

    /// Parse manifest text; names must be unique file-name-safe stems and points a known mode.
    /// Errors are one line that starts with `DIR/manifest.toml:LINE:` (the line of the bad
    /// value, or of the bad entry's `[[program]]` header).
    pub fn parse(text: &str, dir: &Path) -> Result<Manifest> {
        let path = dir.join(FILE);
        let f: File = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(String::new(), |s| {
                let (line, col) = line_col(text, s.start);
                format!("{line}:{col}:")
            });
            anyhow::anyhow!(
                "{}:{at} not a valid manifest: {}",
                path.display(),
                one_line(e.message())
            )
        })?;
        let headers = program_headers(text);
        Self::check(&f).map_err(|(k, e)| {
            let line = headers.get(k).map_or(String::new(), |l| format!("{l}:"));
            anyhow::anyhow!("{}:{line} {e:#}", path.display())
        })?;
        Ok(Manifest {
            dir: dir.to_path_buf(),
            programs: f.program,
        })
    }

    /// The checks serde cannot make; an error names the index of the entry at fault.
    fn check(f: &File) -> std::result::Result<(), (usize, anyhow::Error)> {
        let mut seen = BTreeMap::new();
        for (k, e) in f.program.iter().enumerate() {
            Self::check_entry(k, e, &mut seen).map_err(|err| (k, err))?;
        }
        Ok(())
    }

    /// The checks of entry `k` (0-based); `seen` maps the names so far to their index.
    fn check_entry(k: usize, e: &Entry, seen: &mut BTreeMap<String, usize>) -> Result<()> {
        if e.name.is_empty()
            || !e
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        {
            bail!(
                "program #{}: name {:?} is not a plain file name",
                k + 1,
                e.name
            );
        }
        if let Some(j) = seen.insert(e.name.clone(), k) {
            bail!(
                "program {:?} is listed twice (entries #{} and #{})",
                e.name,
                j + 1,
                k + 1
            );
        }
        if let Some(b) = &e.backend {
            crate::exec::session::Backend::parse(b)
                .with_context(|| format!("program {:?}: backend = {b:?}", e.name))?;
        }
        if !matches!(e.points.as_str(), "sync" | "mem" | "races" | "auto") {
            bail!(
                "program {:?}: points = {:?} (expected sync, mem, races or auto)",
                e.name,
                e.points
            );
        }
        Ok(())
    }

    /// Where `poscheck build` puts the binaries.
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// The binary of an entry.
    pub fn binary(&self, e: &Entry) -> PathBuf {
        self.bin_dir().join(&e.name)
    }
}

/// 1-based line and column of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

/// The 1-based line of each `[[program]]` header, in order.
fn program_headers(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[program]]"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A message on one line (TOML's can span several).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `--shard i/n`: the `i`-th of `n` parts (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parse `i/n` with `1 <= i <= n`.
    pub fn parse(s: &str) -> Result<Shard> {
        let (i, n) = s
            .split_once('/')
            .with_context(|| format!("--shard {s:?}: expected i/n, e.g. 2/4"))?;
        let index: usize = i
            .trim()
            .parse()
            .with_context(|| format!("--shard {s:?}: {i:?} is not a number"))?;
        let count: usize = n
            .trim()
            .parse()
            .with_context(|| format!("--shard {s:?}: {n:?} is not a number"))?;
        if count == 0 || index == 0 || index > count {
            bail!("--shard {s:?}: need 1 <= i <= n");
        }
        Ok(Shard { index, count })
    }

    /// Whether program `k` (0-based, manifest or command-line order) belongs to this shard:
    /// program k goes to shard (k mod n) + 1, so shards stay balanced when the heavy
    /// programs are grouped together in the list.
    pub fn contains(&self, k: usize) -> bool {
        k % self.count + 1 == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
[[program]]
name = "a"
source = "src/a.c"
expect = "deadlock"
points = "sync"
bug = "x"

[[program]]
name = "b_ok"
source = "src/b_ok.c"
args = ["3"]
expect = "none"
points = "races"
flags = ["-DN=2"]
"#;

    #[test]
    fn parses_entries_with_defaults() {
        let m = Manifest::parse(TEXT, Path::new("suite")).unwrap();
        assert_eq!(m.programs.len(), 2);
        assert_eq!(m.programs[0].expect, Expect::Deadlock);
        assert!(m.programs[0].args.is_empty());
        assert_eq!(m.programs[1].args, vec!["3".to_string()]);
        assert_eq!(m.programs[1].flags, vec!["-DN=2".to_string()]);
        assert!(!m.programs[1].expect.is_buggy());
        assert_eq!(m.binary(&m.programs[1]), Path::new("suite/bin/b_ok"));
    }

    #[test]
    fn rejects_duplicates_bad_points_and_unknown_fields() {
        let dup =
            format!("{TEXT}\n[[program]]\nname = \"a\"\nsource = \"s.c\"\nexpect = \"none\"\n");
        let e = Manifest::parse(&dup, Path::new(".")).unwrap_err();
        assert!(format!("{e:#}").contains("listed twice"), "{e:#}");
        let bad = TEXT.replace("\"races\"", "\"everything\"");
        assert!(Manifest::parse(&bad, Path::new(".")).is_err());
        let unknown = TEXT.replace("bug = \"x\"", "bgu = \"x\"");
        assert!(Manifest::parse(&unknown, Path::new(".")).is_err());
        let path = TEXT.replace("name = \"a\"", "name = \"../a\"");
        assert!(Manifest::parse(&path, Path::new(".")).is_err());
        let backend = TEXT.replace("bug = \"x\"", "bug = \"x\"\nbackend = \"ptrace\"");
        let m = Manifest::parse(&backend, Path::new(".")).unwrap();
        assert_eq!(m.programs[0].backend.as_deref(), Some("ptrace"));
        assert_eq!(m.programs[1].backend, None);
        let wrong = TEXT.replace("bug = \"x\"", "bug = \"x\"\nbackend = \"gdb\"");
        let e = Manifest::parse(&wrong, Path::new(".")).unwrap_err();
        assert!(format!("{e:#}").contains("backend"), "{e:#}");
    }

    #[test]
    fn errors_are_one_line_with_the_file_and_line() {
        let bad_type = TEXT.replace("args = [\"3\"]", "args = 3");
        let e = format!(
            "{:#}",
            Manifest::parse(&bad_type, Path::new("s")).unwrap_err()
        );
        assert!(
            e.starts_with("s/manifest.toml:12:8: not a valid manifest: "),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let unknown = TEXT.replace("bug = \"x\"", "bgu = \"x\"");
        let e = format!(
            "{:#}",
            Manifest::parse(&unknown, Path::new("s")).unwrap_err()
        );
        assert!(
            e.starts_with("s/manifest.toml:7:") && e.contains("bgu"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let points = TEXT.replace("\"races\"", "\"everything\"");
        let e = format!(
            "{:#}",
            Manifest::parse(&points, Path::new("s")).unwrap_err()
        );
        assert!(
            e.starts_with("s/manifest.toml:9: program \"b_ok\": points"),
            "{e}"
        );
    }

    #[test]
    fn shards_partition_the_programs() {
        let s = Shard::parse("2/3").unwrap();
        let mine: Vec<usize> = (0..8).filter(|&k| s.contains(k)).collect();
        assert_eq!(mine, vec![1, 4, 7]);
        for n in 1..5 {
            for k in 0..20 {
                let owners = (1..=n)
                    .filter(|&i| Shard { index: i, count: n }.contains(k))
                    .count();
                assert_eq!(owners, 1);
            }
        }
        for bad in ["0/2", "3/2", "1/0", "x/2", "2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Shard::parse("1/4").unwrap().to_string(), "1/4");
    }

    #[test]
    fn the_bundled_suite_manifest_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks");
        let m = Manifest::load(&dir).unwrap();
        assert!(m.programs.len() >= 10);
        assert!(m.programs.iter().any(|e| !e.expect.is_buggy()));
    }
}
