//! `--junit FILE`: the results as JUnit XML, the format CI systems show as test results.
//!
//! One `<testsuite>` per algorithm (`explore`: the one exploration), one `<testcase>` per
//! program in it (`classname` the algorithm, `name` the program): a program in which a bug
//! was hit is a `<failure>` whose text has the outcome, its message, the saved schedule and
//! the command that replays it; a program in which no bug was hit passes; a program whose
//! runs could not be made (every try an `error` outcome, an exploration stopped by an error)
//! is an `<error>`. The document follows the structure of the Ant/Jenkins JUnit schema that
//! common CI tools read: `testsuites` (name, tests, failures, errors, time) holding
//! `testsuite` elements (name, id, package, tests, failures, errors, skipped, time,
//! timestamp, hostname; `properties`, `testcase`s, `system-out`, `system-err`), each
//! `testcase` with name, classname and time and at most one `failure` or `error` (message,
//! type, text).

use crate::report::ProgramReport;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;

/// How one test case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Pass,
    /// A bug: `kind` is the outcome kind (`assert`, `deadlock`, ...), `message` one line.
    Failure {
        kind: String,
        message: String,
    },
    /// The program could not be tested.
    Error {
        message: String,
    },
}

/// One program under one algorithm.
#[derive(Clone, Debug)]
pub struct Case {
    /// The algorithm (or `explore-<algo>`).
    pub classname: String,
    /// The program.
    pub name: String,
    pub time_s: f64,
    pub verdict: Verdict,
    /// The failure's or error's text (or, for a pass, what was run): several lines.
    pub text: String,
    /// Where an annotation points (see `report::github`).
    pub location: Option<crate::report::github::Location>,
}

/// One algorithm's cases.
#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    /// Session facts (`seed`, `tries`, ...), as `<property>` elements.
    pub properties: Vec<(String, String)>,
    pub cases: Vec<Case>,
}

impl Suite {
    fn failures(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Failure { .. }))
            .count()
    }

    fn errors(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Error { .. }))
            .count()
    }

    fn time(&self) -> f64 {
        self.cases.iter().map(|c| c.time_s).sum()
    }
}

/// The case of a program's line in a `run`/`compare` report, under `algo`; `source` is the
/// program's source file when known (a suite's manifest says it), for the annotation.
pub fn case_of(algo: &str, r: &ProgramReport, source: Option<&Path>) -> Case {
    let mut text = format!(
        "{} tries, {} hit a bug (ratio {:.4}); outcomes: {}\n",
        r.tries,
        r.hits,
        r.hit_ratio,
        r.outcomes
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if let Some(e) = &r.expect {
        let _ = writeln!(text, "expected: {e}");
    }
    if let Some(f) = &r.flag {
        let _ = writeln!(text, "FLAG: {f}");
    }
    let message = r.first_outcome.as_ref().map(|o| one_line(&o.to_string()));
    let verdict = if r.hits > 0 {
        let kind = r
            .first_outcome
            .as_ref()
            .map_or("bug", |o| o.kind())
            .to_string();
        let message = message.clone().unwrap_or_else(|| kind.clone());
        let _ = writeln!(
            text,
            "first bug at try {}: {message}",
            r.first_hit.map_or("?".into(), |i| i.to_string())
        );
        if let Some(s) = &r.schedule {
            let _ = writeln!(text, "schedule: {s}");
            let _ = writeln!(text, "replay: poscheck replay {s}");
        }
        Verdict::Failure { kind, message }
    } else if let Some(e) = r
        .first_error
        .as_ref()
        .filter(|_| r.outcomes.get("error") == Some(&r.tries))
    {
        let _ = writeln!(text, "every try failed to run: {e}");
        Verdict::Error {
            message: one_line(e),
        }
    } else {
        if let Some(e) = &r.first_error {
            let _ = writeln!(text, "some tries failed to run: {e}");
        }
        Verdict::Pass
    };
    // The line an assertion names, else the failing step's line from the schedule's pcs.
    let mut location =
        crate::report::github::location(source.unwrap_or(Path::new(&r.path)), message.as_deref());
    if location.line.is_none() && r.hits > 0 {
        if let Some(at) = r
            .schedule
            .as_deref()
            .and_then(|s| crate::report::github::schedule_location(Path::new(s)))
        {
            location = at;
        }
    }
    let location = Some(location);
    Case {
        classname: algo.to_string(),
        name: r.name.clone(),
        time_s: r.wall_s,
        verdict,
        text,
        location,
    }
}

/// The whole document.
pub fn render(suites: &[Suite], timestamp: &str, hostname: &str) -> String {
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(Suite::failures).sum();
    let errors: usize = suites.iter().map(Suite::errors).sum();
    let time: f64 = suites.iter().map(Suite::time).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<testsuites name=\"poscheck\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"{errors}\" time=\"{time:.3}\">"
    );
    for (id, s) in suites.iter().enumerate() {
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" id=\"{id}\" package=\"poscheck\" tests=\"{}\" \
             failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\" timestamp=\"{}\" \
             hostname=\"{}\">",
            escape(&s.name),
            s.cases.len(),
            s.failures(),
            s.errors(),
            s.time(),
            escape(timestamp),
            escape(hostname)
        );
        x += "    <properties>\n";
        for (k, v) in &s.properties {
            let _ = writeln!(
                x,
                "      <property name=\"{}\" value=\"{}\"/>",
                escape(k),
                escape(v)
            );
        }
        x += "    </properties>\n";
        for c in &s.cases {
            let _ = write!(
                x,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
                escape(&c.name),
                escape(&c.classname),
                c.time_s
            );
            match &c.verdict {
                Verdict::Pass => x += "/>\n",
                Verdict::Failure { kind, message } => {
                    let _ = writeln!(
                        x,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                        escape(message),
                        escape(kind),
                        escape(&c.text)
                    );
                }
                Verdict::Error { message } => {
                    let _ = writeln!(
                        x,
                        ">\n      <error message=\"{}\" type=\"error\">{}</error>\n    </testcase>",
                        escape(message),
                        escape(&c.text)
                    );
                }
            }
        }
        x += "    <system-out/>\n    <system-err/>\n  </testsuite>\n";
    }
    x += "</testsuites>\n";
    x
}

/// Write the document to `path`, stamped with the current time and host.
pub fn write(path: &Path, suites: &[Suite]) -> Result<()> {
    let xml = render(suites, &timestamp_now(), &hostname());
    std::fs::write(path, xml).with_context(|| format!("cannot write {}", path.display()))
}

/// Text for an XML attribute or element: the five special characters escaped, and the
/// characters XML 1.0 does not allow at all (control characters other than tab, line feed
/// and carriage return, e.g. from a program's output) replaced by U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&apos;",
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The current UTC time as the schema's `timestamp` (ISO 8601, no zone).
fn timestamp_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    iso8601(secs)
}

/// `secs` since the epoch as `YYYY-MM-DDTHH:MM:SS` (UTC).
fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_characters_xml_forbids() {
        assert_eq!(
            escape("a<b>&\"c\" 'd'\u{1}\t\n"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;\u{FFFD}\t\n"
        );
    }

    #[test]
    fn errors_and_hostile_text_survive_a_parser() {
        let case = |name: &str, verdict: Verdict| Case {
            classname: "pos".into(),
            name: name.into(),
            time_s: 0.25,
            verdict,
            text: "out: <a href=\"x\">&amp;</a> \u{7}bell\n".into(),
            location: None,
        };
        let suite = Suite {
            name: "pos".into(),
            properties: vec![("seed".into(), "1\"2".into())],
            cases: vec![
                case("ok", Verdict::Pass),
                case(
                    "a<b",
                    Verdict::Failure {
                        kind: "assert".into(),
                        message: "x == 'y' && z".into(),
                    },
                ),
                case(
                    "err",
                    Verdict::Error {
                        message: "cannot run".into(),
                    },
                ),
            ],
        };
        let xml = render(&[suite], "2026-01-02T03:04:05", "h");
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        assert_eq!(root.attribute("tests"), Some("3"));
        assert_eq!(root.attribute("failures"), Some("1"));
        assert_eq!(root.attribute("errors"), Some("1"));
        assert_eq!(root.attribute("time"), Some("0.750"));
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases[1].attribute("name"), Some("a<b"));
        let f = cases[1].first_element_child().unwrap();
        assert_eq!(f.tag_name().name(), "failure");
        assert_eq!(f.attribute("message"), Some("x == 'y' && z"));
        assert_eq!(
            f.text(),
            Some("out: <a href=\"x\">&amp;</a> \u{FFFD}bell\n")
        );
        let e = cases[2].first_element_child().unwrap();
        assert_eq!(e.tag_name().name(), "error");
        assert_eq!(e.attribute("message"), Some("cannot run"));
        assert!(cases[0].first_element_child().is_none());
        let prop = doc
            .descendants()
            .find(|n| n.has_tag_name("property"))
            .unwrap();
        assert_eq!(prop.attribute("value"), Some("1\"2"));
    }

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(iso8601(1_795_737_661), "2026-11-27T00:01:01");
    }
}
