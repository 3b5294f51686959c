//! `--junit FILE` on `run`, `compare` and `explore`: the XML parses (roxmltree) and has the
//! structure of the Ant/Jenkins JUnit schema CI tools read; a buggy program is a failure
//! whose text has the outcome, the schedule and the replay command, a bug-free program a
//! pass; and with `GITHUB_ACTIONS` set, each bug is an `::error file=...,line=...::`
//! annotation on the source line the assertion names.

use crate::common;

use common::{text, POSCHECK};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A suite of `names` from the bundled one, built in `dir/suite` (sources and manifest
/// entries copied).
fn suite(dir: &Path, names: &[&str]) -> PathBuf {
    let bench = repo().join("benchmarks");
    let s = dir.join("suite");
    std::fs::create_dir_all(s.join("src")).unwrap();
    for e in std::fs::read_dir(bench.join("src")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, s.join("src").join(p.file_name().unwrap())).unwrap();
    }
    let all: toml::Table =
        toml::from_str(&std::fs::read_to_string(bench.join("manifest.toml")).unwrap()).unwrap();
    let progs: Vec<toml::Value> = all["program"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| names.contains(&p["name"].as_str().unwrap()))
        .cloned()
        .collect();
    let mut doc = toml::Table::new();
    doc.insert("program".into(), toml::Value::Array(progs));
    std::fs::write(s.join("manifest.toml"), toml::to_string(&doc).unwrap()).unwrap();
    let o = run_in(dir, &["build", "suite"], false);
    assert!(o.status.success(), "{}", text(&o));
    s
}

fn run_in(dir: &Path, args: &[&str], github: bool) -> Output {
    let mut c = Command::new(POSCHECK);
    c.args(args).current_dir(dir);
    if github {
        c.env("GITHUB_ACTIONS", "true")
            .env_remove("GITHUB_WORKSPACE");
    } else {
        c.env_remove("GITHUB_ACTIONS");
    }
    c.output().unwrap()
}

fn attr<'a>(n: roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    n.attribute(name)
        .unwrap_or_else(|| panic!("<{}> lacks {name}", n.tag_name().name()))
}

fn count(n: roxmltree::Node, name: &str) -> usize {
    attr(n, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name}={:?} is not a count", attr(n, name)))
}

fn seconds(n: roxmltree::Node, name: &str) -> f64 {
    let t: f64 = attr(n, name).parse().expect("time is a decimal");
    assert!(t >= 0.0 && t.is_finite());
    t
}

fn elements<'a, 'i>(n: roxmltree::Node<'a, 'i>) -> Vec<roxmltree::Node<'a, 'i>> {
    n.children().filter(|c| c.is_element()).collect()
}

/// The structure of the common JUnit schema (Ant's `junit.xsd`, Jenkins' `junit-10.xsd`):
/// `testsuites` with tests/failures/errors/time holding only `testsuite`s; each of those with
/// name, id, package, tests, failures, errors, skipped, time, an ISO 8601 timestamp and a
/// hostname, and children `properties`, `testcase`*, `system-out`, `system-err` in that order;
/// each `testcase` with name, classname and time and at most one `failure` or `error`
/// (message, type). The counts must add up. Returns (classname, name, verdict element or
/// "pass", its message, its text) per case.
fn check_schema(xml: &str) -> Vec<(String, String, String, String, String)> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let mut cases = Vec::new();
    let (mut tests, mut failures, mut errors, mut time) = (0, 0, 0, 0.0);
    for s in elements(root) {
        assert_eq!(s.tag_name().name(), "testsuite", "{xml}");
        for a in ["name", "id", "package", "hostname"] {
            assert!(!attr(s, a).is_empty(), "testsuite {a} empty");
        }
        let ts = attr(s, "timestamp");
        assert!(
            ts.len() == 19 && ts.as_bytes()[10] == b'T' && ts[..4].parse::<u32>().is_ok(),
            "timestamp {ts}"
        );
        let kids = elements(s);
        let names: Vec<&str> = kids.iter().map(|k| k.tag_name().name()).collect();
        assert_eq!(names.first(), Some(&"properties"), "{names:?}");
        assert_eq!(&names[names.len() - 2..], ["system-out", "system-err"]);
        assert!(names[1..names.len() - 2].iter().all(|n| *n == "testcase"));
        for p in elements(kids[0]) {
            assert_eq!(p.tag_name().name(), "property");
            attr(p, "name");
            attr(p, "value");
        }
        let (mut f, mut e) = (0, 0);
        let mut t = 0.0;
        let tcs: Vec<_> = kids[1..kids.len() - 2].to_vec();
        for c in &tcs {
            t += seconds(*c, "time");
            let verdict = elements(*c);
            assert!(verdict.len() <= 1, "at most one verdict per testcase");
            let (kind, msg, body) = match verdict.first() {
                None => ("pass".to_string(), String::new(), String::new()),
                Some(v) => {
                    let k = v.tag_name().name().to_string();
                    assert!(k == "failure" || k == "error", "{k}");
                    f += usize::from(k == "failure");
                    e += usize::from(k == "error");
                    attr(*v, "type");
                    (
                        k,
                        attr(*v, "message").to_string(),
                        v.text().unwrap_or("").to_string(),
                    )
                }
            };
            cases.push((
                attr(*c, "classname").to_string(),
                attr(*c, "name").to_string(),
                kind,
                msg,
                body,
            ));
        }
        assert_eq!(count(s, "tests"), tcs.len());
        assert_eq!(count(s, "failures"), f);
        assert_eq!(count(s, "errors"), e);
        assert_eq!(count(s, "skipped"), 0);
        assert!((seconds(s, "time") - t).abs() < 0.01 * tcs.len() as f64 + 0.002);
        tests += tcs.len();
        failures += f;
        errors += e;
        time += t;
    }
    assert_eq!(count(root, "tests"), tests);
    assert_eq!(count(root, "failures"), failures);
    assert_eq!(count(root, "errors"), errors);
    assert!((seconds(root, "time") - time).abs() < 0.01 * tests as f64 + 0.002);
    cases
}

/// The line of `account.c`'s assertion, from its source.
fn assert_line(src: &Path) -> usize {
    std::fs::read_to_string(src)
        .unwrap()
        .lines()
        .position(|l| l.trim_start().starts_with("assert("))
        .expect("account.c asserts")
        + 1
}

#[test]
fn compare_and_run_write_junit_with_failures_passes_and_annotations() {
    common::require_libpos();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    suite(dir, &["account", "deadlock_2", "mutex_counter_ok"]);
    let o = run_in(
        dir,
        &[
            "compare", "--algos", "pos,rw", "--tries", "40", "--seed", "1", "--jobs", "2",
            "--junit", "c.xml", "suite",
        ],
        true,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let xml = std::fs::read_to_string(dir.join("c.xml")).unwrap();
    let cases = check_schema(&xml);
    assert_eq!(cases.len(), 6, "{xml}");
    for algo in ["pos", "rw"] {
        for (prog, want) in [
            ("account", "failure"),
            ("deadlock_2", "failure"),
            ("mutex_counter_ok", "pass"),
        ] {
            let c = cases
                .iter()
                .find(|c| c.0 == algo && c.1 == prog)
                .unwrap_or_else(|| panic!("no case {algo} {prog}: {xml}"));
            assert_eq!(c.2, want, "{algo} {prog}: {xml}");
            if want == "failure" {
                let outcome = if prog == "account" {
                    "assert"
                } else {
                    "deadlock"
                };
                assert!(c.3.contains(outcome) || c.4.contains(outcome), "{c:?}");
                let sched =
                    c.4.lines()
                        .find_map(|l| l.strip_prefix("schedule: "))
                        .unwrap_or_else(|| panic!("no schedule in {c:?}"));
                assert!(dir.join(sched).is_file(), "{sched}");
                assert!(
                    c.4.contains(&format!("replay: poscheck replay {sched}")),
                    "{c:?}"
                );
            }
        }
    }
    // The assertion message's quote survives the escaping.
    let acc = cases.iter().find(|c| c.1 == "account").unwrap();
    assert!(acc.3.contains("Assertion `"), "{acc:?}");
    assert!(acc.3.contains("' failed"), "{acc:?}");
    // One annotation per buggy program, at the suite's source (the assertion's line).
    let out = String::from_utf8_lossy(&o.stdout);
    let notes: Vec<&str> = out.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(notes.len(), 2, "{out}");
    let line = assert_line(&dir.join("suite/src/account.c"));
    assert!(
        notes.iter().any(|n| n.starts_with(&format!(
            "::error file=suite/src/account.c,line={line},title=poscheck%3A account (pos)::"
        ))),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("::error file=suite/src/deadlock_2.c,title=")),
        "{notes:?}"
    );
    assert!(!out.contains("mutex_counter_ok (pos)::"), "{out}");

    // `run`: one suite, and no annotation without GITHUB_ACTIONS.
    let o = run_in(
        dir,
        &[
            "run", "--algo", "pct3", "--tries", "40", "--seed", "2", "--junit", "r.xml", "suite",
        ],
        false,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("::error"));
    let cases = check_schema(&std::fs::read_to_string(dir.join("r.xml")).unwrap());
    assert_eq!(cases.len(), 3);
    assert!(cases.iter().all(|c| c.0 == "pct3"));
    let ok = cases.iter().find(|c| c.1 == "mutex_counter_ok").unwrap();
    assert_eq!(ok.2, "pass");
}

#[test]
fn explore_writes_one_case() {
    common::require_libpos();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    suite(dir, &["deadlock_2", "mutex_counter_ok"]);
    let o = run_in(
        dir,
        &[
            "explore",
            "--algo",
            "dfs",
            "--junit",
            "e.xml",
            "suite/bin/deadlock_2",
        ],
        false,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let cases = check_schema(&std::fs::read_to_string(dir.join("e.xml")).unwrap());
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    assert_eq!(
        (c.0.as_str(), c.1.as_str(), c.2.as_str()),
        ("explore-dfs", "deadlock_2", "failure")
    );
    assert!(c.4.contains("replay: poscheck replay "), "{c:?}");
    let o = run_in(
        dir,
        &[
            "explore",
            "--algo",
            "dfs",
            "--max-executions",
            "20",
            "--junit",
            "ok.xml",
            "suite/bin/mutex_counter_ok",
        ],
        false,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let cases = check_schema(&std::fs::read_to_string(dir.join("ok.xml")).unwrap());
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].2, "pass");
}
