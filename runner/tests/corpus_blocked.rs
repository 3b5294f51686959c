//! Corpus of `tests/corpus/blocked/`: programs whose threads block in the kernel in calls
//! libpos does not control (`read` of a pipe, `poll`, `waitpid` of an uncontrolled child). The correct ones must
//! never be reported buggy nor hung (the blocked thread is set aside and the others run;
//! such runs are reported `partial`); the genuinely hung ones (every live thread blocked
//! for good, or spinning) must still be a `hang`. And determinism: a created thread stays
//! stopped at its entry until granted, a thread's teardown after its exit does not race
//! with the next step, so the same seed gives the same hits and schedules, and a lock-heavy
//! program's bug replays 100 times of 100.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common;

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
    for name in [
        "pipe_pair",
        "poll_socketpair",
        "waitpid_child",
        "heap_after_detach",
    ] {
        for algo in common::ALGOS {
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
            // The child of waitpid_child is controlled and its waitpid a scheduling point
            // (tests/corpus/fork): nothing blocks outside control there any more.
            if name == "heap_after_detach" || name == "waitpid_child" {
                assert_eq!(partial, 0, "it never blocks outside control: {what}");
                continue;
            }
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

/// A spin-wait on a flag set by a thread that has not started yet: the spinner is set aside
/// after a quarter of the step timeout (here 0.4 s, so 100 ms) and the producer runs. Never a
/// hang nor a bug; every run is partial (the spinner holds the turn in every schedule).
/// 25 tries per algorithm: every run spins for 100 ms.
#[test]
fn a_spin_wait_is_set_aside_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    for algo in common::ALGOS {
        let (e, out) = run(
            dir.path(),
            "spin_flag",
            &[
                "--algo",
                algo,
                "--tries",
                "25",
                "--seed",
                "20261125",
                "--step-timeout",
                "0.4",
            ],
        );
        let what = format!("spin_flag under {algo}: {e}\n{}", text(&out));
        assert_eq!(count(&e, "ok"), 25, "{what}");
        assert_eq!(e["partial"], 25, "{what}");
        assert!(text(&out).contains("spin-wait"), "{what}");
    }
}

#[test]
fn every_thread_blocked_for_good_or_spinning_is_still_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    // Blocked: a hang after the step timeout; spinning (on a CPU): after the compute timeout.
    for (name, threads) in [
        (
            "pipes_nobody_writes",
            "thread(s) 0.1, 0.2 did not reach a scheduling point within 500 ms",
        ),
        ("spinner", "thread(s) 0.1 kept computing for"),
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
                    "--compute-timeout",
                    "1",
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

/// `poscheck cc` build of a corpus program (memory accesses become scheduling points).
fn cc_build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/blocked")
        .join(format!("{name}.c"));
    let bin = bins().join(format!("{name}-cc"));
    let o = Command::new(POSCHECK)
        .args(["cc", "-O1", "-Wall", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "poscheck cc failed: {}", text(&o));
    bin
}

#[test]
fn a_created_thread_waits_for_its_start_so_the_same_seed_gives_the_same_hits() {
    // Main spins 2 ms after pthread_create, then reads what the child writes first thing
    // (a plain write, no point). The child runs only once its start is granted: whether it
    // wrote before main's read is the schedule's choice (under rw: its start first, 1/2),
    // never the spin's (when it ran in parallel, the write came first in every run).
    let bin = cc_build("spin_after_create");
    let dir = tempfile::tempdir().unwrap();
    for algo in ["rw", "pos"] {
        let mut seen = Vec::new();
        for round in 0..2 {
            let out_dir = dir.path().join(format!("{algo}-{round}"));
            let json = dir.path().join(format!("{algo}-{round}.json"));
            let o = Command::new(POSCHECK)
                .args([
                    "run", "--algo", algo, "--tries", "300", "--seed", "20261124",
                ])
                .args(["--points", "mem", "--json"])
                .arg(&json)
                .arg("--out-dir")
                .arg(&out_dir)
                .arg(&bin)
                .current_dir(dir.path())
                .output()
                .unwrap();
            let doc: Value = serde_json::from_str(
                &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{}", text(&o))),
            )
            .unwrap();
            let e = &doc["programs"][0];
            let hits = e["hits"].as_u64().unwrap();
            assert_eq!(count(e, "assert"), hits, "{e}\n{}", text(&o));
            let schedule = std::fs::read(e["schedule"].as_str().unwrap()).unwrap();
            seen.push((hits, schedule));
        }
        assert_eq!(seen[0].0, seen[1].0, "{algo}: same seed, same hits");
        assert!(
            seen[0].1 == seen[1].1,
            "{algo}: same seed, same saved schedule"
        );
        if algo == "rw" {
            // 300 tries at 1/2: 150, sd 8.7; 5 sd either side.
            let hits = seen[0].0;
            assert!((107..=193).contains(&hits), "rw: {hits} hits of 300");
        }
    }
}

#[test]
fn the_heap_and_the_schedule_are_the_same_every_run_with_the_same_seed() {
    // Standalone mode (its own coordinator, schedule written by POS_SCHEDULE_OUT) with
    // address randomisation off as the runner has it: the later threads' heap addresses are
    // in the schedule's text, which must not vary. Two programs at a time, for some load.
    common::require_libpos();
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    let bin = bins().join("heap_after_detach");
    let dir = tempfile::tempdir().unwrap();
    let mut schedules = Vec::new();
    for round in 0..10 {
        let children: Vec<_> = (0..2)
            .map(|k| {
                let out = dir.path().join(format!("{round}-{k}.json"));
                // LD_PRELOAD set by `env` after `setarch`: libpos must load in the program.
                let child = Command::new("setarch")
                    .args(["-R", "env"])
                    .arg(format!("LD_PRELOAD={}", lib.display()))
                    .arg(&bin)
                    .env("POS_ALGO", "pos")
                    .env("POS_SEED", "3")
                    .env("POS_SCHEDULE_OUT", &out)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("setarch (util-linux) is needed");
                (out, child)
            })
            .collect();
        for (out, child) in children {
            let done = child.wait_with_output().unwrap();
            assert!(done.status.success(), "{}", text(&done));
            schedules.push(std::fs::read(&out).unwrap_or_else(|_| panic!("{}", text(&done))));
        }
    }
    let text0 = String::from_utf8_lossy(&schedules[0]).into_owned();
    assert!(text0.contains("lock"), "{text0}");
    let differing = schedules.iter().filter(|s| **s != schedules[0]).count();
    assert_eq!(differing, 0, "schedules differ from the first: {text0}");
}

#[test]
fn a_lock_heavy_library_bug_replays_100_times_of_100() {
    let dir = tempfile::tempdir().unwrap();
    for algo in common::ALGOS {
        let (e, out) = run(
            dir.path(),
            "lock_library",
            &["--algo", algo, "--tries", "200", "--seed", "20261124"],
        );
        let what = format!("lock_library under {algo}: {e}\n{}", text(&out));
        assert!(
            count(&e, "assert") > 0,
            "the duplicate insert is found: {what}"
        );
        assert_eq!(e["partial"].as_u64().unwrap_or(0), 0, "{what}");
        let schedule = e["schedule"].as_str().unwrap();
        let r = Command::new(POSCHECK)
            .args(["replay", "--times", "100", schedule])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let t = text(&r);
        assert!(
            t.contains("recorded outcome assert: reproduced 100 of 100 times"),
            "{algo}: {t}"
        );
    }
}

#[test]
fn standalone_mode_sets_blocked_threads_aside_too() {
    common::require_libpos();
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    let standalone = |name: &str, seed: u32| {
        Command::new(bins().join(name))
            .env("LD_PRELOAD", &lib)
            .env("POS_ALGO", "rw")
            .env("POS_SEED", seed.to_string())
            .env("POS_STEP_TIMEOUT", "0.5")
            .output()
            .unwrap()
    };
    let mut partial = 0;
    for seed in 0..10 {
        let o = standalone("poll_socketpair", seed);
        let t = text(&o);
        assert!(o.status.success() && t.contains("outcome=ok"), "{t}");
        partial += usize::from(t.contains("poscheck: partial run:"));
    }
    assert!(partial > 0, "the poller was never set aside");
    let o = standalone("pipes_nobody_writes", 1);
    let t = text(&o);
    assert!(t.contains("outcome=hang") && t.contains("0.1, 0.2"), "{t}");
}
