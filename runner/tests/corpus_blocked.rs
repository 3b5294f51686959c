//! Corpus of `tests/corpus/blocked/`: programs whose threads block in the kernel in calls
//! libpos does not control (`read` of a pipe, `poll`, `waitpid`). The correct ones must
//! never be reported buggy nor hung (the blocked thread is set aside and the others run;
//! such runs are reported `partial`); the genuinely hung ones (every live thread blocked
//! for good, or spinning) must still be a `hang`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod common;

use common::{text, POSCHECK};

/// Compile every `tests/corpus/blocked/*.c` once per test binary.
fn bins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        common::require_libpos();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/blocked");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-blocked");
        std::fs::create_dir_all(&out).unwrap();
        for e in std::fs::read_dir(&src).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "c") {
                let bin = out.join(p.file_stem().unwrap());
                let st = Command::new("gcc")
                    .args(["-O1", "-g", "-pthread", "-Wall", "-o"])
                    .arg(&bin)
                    .arg(&p)
                    .status()
                    .expect("gcc is needed for the corpus tests");
                assert!(st.success(), "gcc failed on {}", p.display());
            }
        }
        out
    })
}

/// `poscheck run` of one program in a scratch directory, with `--json`: the program's
/// JSON entry and the process output.
fn run(dir: &Path, name: &str, args: &[&str]) -> (Value, Output) {
    let json = dir.join(format!("{name}.json"));
    let out = Command::new(POSCHECK)
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg(bins().join(name))
        .current_dir(dir)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("no JSON: {}", text(&out))),
    )
    .unwrap();
    (doc["programs"][0].clone(), out)
}

fn count(entry: &Value, key: &str) -> u64 {
    entry["outcomes"][key].as_u64().unwrap_or(0)
}

#[test]
fn correct_programs_that_block_outside_control_are_never_buggy_nor_hung() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["pipe_pair", "poll_socketpair", "waitpid_child"] {
        for algo in ["rw", "pct3", "pos"] {
            let (e, out) = run(
                dir.path(),
                name,
                &["--algo", algo, "--tries", "200", "--seed", "20261124"],
            );
            let what = format!("{name} under {algo}: {e}\n{}", text(&out));
            assert_eq!(e["tries"], 200, "{what}");
            assert_eq!(e["hits"], 0, "{what}");
            // Every run ended normally: none waited for the step timeout.
            assert_eq!(count(&e, "ok"), 200, "{what}");
            // The blocking happened outside control, and was reported.
            let partial = e["partial"].as_u64().unwrap_or(0);
            assert!(partial > 0, "{what}");
            assert!(
                e["outside_episodes"].as_u64().unwrap_or(0) >= partial,
                "{what}"
            );
            assert!(
                text(&out).contains(&format!("partial={partial}")),
                "the table shows the partial runs: {what}"
            );
        }
    }
}

#[test]
fn every_thread_blocked_for_good_or_spinning_is_still_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    for (name, threads) in [
        ("pipes_nobody_writes", "thread(s) 0.1, 0.2"),
        ("spinner", "thread(s) 0.1"),
    ] {
        for algo in ["rw", "pos"] {
            let (e, out) = run(
                dir.path(),
                name,
                &[
                    "--algo",
                    algo,
                    "--tries",
                    "3",
                    "--seed",
                    "5",
                    "--step-timeout",
                    "0.5",
                ],
            );
            let what = format!("{name} under {algo}: {e}\n{}", text(&out));
            assert_eq!(count(&e, "hang"), 3, "{what}");
            assert!(text(&out).contains(threads), "{what}");
        }
    }
    // With the detection off, a correct program that blocks is a hang again (what the
    // detection is for).
    let (e, out) = run(
        dir.path(),
        "pipe_pair",
        &[
            "--algo",
            "rw",
            "--tries",
            "2",
            "--seed",
            "5",
            "--step-timeout",
            "0.3",
            "--blocked-after",
            "0",
        ],
    );
    assert!(count(&e, "hang") > 0, "{e}\n{}", text(&out));
}

#[test]
fn a_partial_schedule_says_so_when_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let (e, out) = run(
        dir.path(),
        "pipes_nobody_writes",
        &[
            "--algo",
            "rw",
            "--tries",
            "1",
            "--seed",
            "5",
            "--step-timeout",
            "0.3",
        ],
    );
    let schedule = e["schedule"]
        .as_str()
        .unwrap_or_else(|| panic!("a saved schedule: {e}\n{}", text(&out)));
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(schedule)).unwrap()).unwrap();
    assert!(saved["partial"].as_u64().unwrap_or(0) > 0, "{saved}");
    let r = Command::new(POSCHECK)
        .args(["replay", "--step-timeout", "0.3", schedule])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let t = text(&r);
    assert!(
        t.contains("recorded outcome hang: reproduced 1 of 1"),
        "{t}"
    );
    assert!(t.contains("may not replay exactly"), "{t}");
}
