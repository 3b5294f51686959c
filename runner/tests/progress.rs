//! What `run` and `compare` say while they work, off a terminal: the plan at the start
//! on stdout (programs, algorithms, tries; after the first program, an estimated time from
//! its tries, which count) and a
//! plain progress line every `$POSCHECK_PROGRESS_SECS` (10 s by default) on stderr; the
//! results are those of the tries alone.

use crate::common;

use common::{text, POSCHECK};
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/c/{name}.c"));
    let bin = dir.join(name);
    let st = Command::new("gcc")
        .args(["-O1", "-g", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("gcc is needed");
    assert!(st.success());
    bin
}

#[test]
fn run_announces_its_plan_and_prints_plain_progress_lines() {
    common::require_libpos();
    let tmp = tempfile::tempdir().unwrap();
    let racy = build(tmp.path(), "counter_racy");
    let ok = build(tmp.path(), "counter_mutex");
    let json = tmp.path().join("r.json");
    let o = Command::new(POSCHECK)
        .args([
            "run", "--algo", "pos", "--tries", "600", "--seed", "3", "--jobs", "2",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--out-dir")
        .arg(tmp.path().join("out"))
        .arg(&racy)
        .arg(&ok)
        .env("POSCHECK_PROGRESS_SECS", "0.2")
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "poscheck: about to run 2 program(s) x 1 algorithm(s) (pos) x 600 tries = 1200 runs \
             on 2 worker(s)"
        ),
        "{}",
        text(&o)
    );
    // After the first program, the estimate from its tries (which count).
    assert!(
        out.lines()
            .any(|l| l.starts_with("poscheck: estimated time about ")
                && l.contains("(the first program, counter_racy under pos, took ")
                && l.contains(" s for its 600 tries; times 2 program-algorithm pairs)")),
        "{}",
        text(&o)
    );
    // Plain progress lines, each with counts, rate and ETA; none of the terminal's escapes.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("poscheck: pos counter_"))
        .collect();
    assert!(!lines.is_empty(), "{}", text(&o));
    for l in &lines {
        assert!(
            l.contains("/600 tries, ") && l.contains(" hits, ") && l.contains(" tries/s, ETA "),
            "{l}"
        );
    }
    assert!(!err.contains('\x1b'), "{err}");
    // No extra run: each program has exactly its 600 tries.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for p in doc["programs"].as_array().unwrap() {
        assert_eq!(p["tries"], 600, "{p}");
    }
    // The correct program is never flagged.
    let okp = doc["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "counter_mutex")
        .unwrap();
    assert_eq!(okp["hits"], 0, "{okp}");
}

/// On a terminal (a pseudo-terminal made by util-linux's `script`): one live line per
/// worker, `[w] ALGO PROGRAM: done/total tries, hits, tries/s, ETA | try i`, cleared at the
/// end.
#[test]
fn a_terminal_shows_one_live_line_per_worker() {
    common::require_libpos();
    let tmp = tempfile::tempdir().unwrap();
    let racy = build(tmp.path(), "counter_racy");
    let log = tmp.path().join("tty.log");
    let cmd = format!(
        "{POSCHECK} run --algo pos --tries 1500 --seed 3 --jobs 2 --out-dir {} {} >/dev/null",
        tmp.path().join("out").display(),
        racy.display()
    );
    let o = Command::new("script")
        .arg("-qec")
        .arg(&cmd)
        .arg(&log)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("`script` (util-linux) is needed");
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let raw = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    for w in ["[1] pos counter_racy: ", "[2] pos counter_racy: "] {
        let seen = raw
            .split(['\r', '\n'])
            .filter_map(|l| l.split_once(w).map(|(_, rest)| rest))
            .any(|rest| {
                rest.contains("/1500 tries, ")
                    && rest.contains(" tries/s, ETA ")
                    && rest.contains(" | try ")
            });
        assert!(seen, "no live line {w:?} in:\n{raw}");
    }
}
