//! The compute corpus (`tests/corpus/compute/`): threads that compute for longer than the
//! step timeout between two synchronisation calls, as probe 21 found in plzip (its workers
//! compress for about 2 s between locks: a false `hang` in 13–30 of 30 runs on a loaded
//! machine). A silent thread that runs on a CPU is excused for up to `--compute-timeout`
//! (`pos_sched::silent::Computing`); an endless loop is still a hang, after that timeout.
//!
//! The step timeout here is 0.1 s, so that a run of a fraction of a second computes
//! through two or more of them. The correct programs (C, C++ with g++ and clang++-14, Rust,
//! OpenMP) are never flagged, and were a `hang` in every run under the old rule (a compute
//! timeout of 0 is the step timeout); the buggy ones (C, Rust: a loop on a stale copy of a
//! flag) are a `hang` that says the thread kept computing, found by rw, pos and odpor, and
//! their schedules replay.

use crate::common;

use common::{outcome_count, poscheck, require_libpos, text};
use std::path::{Path, PathBuf};
use std::process::Command;

const STEP: &[&str] = &["--step-timeout", "0.1"];

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("compute", dir, compiler, file)
}

/// `ok_compute_omp.c` with `gcc -fopenmp`, or `None` (saying so) where libgomp is missing.
fn build_omp(dir: &Path) -> Option<PathBuf> {
    let out = dir.join("ok_compute_omp");
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/compute/ok_compute_omp.c");
    let o = Command::new("gcc")
        .args(["-O1", "-fopenmp", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!(
            "SKIPPED the OpenMP program: gcc -fopenmp fails here: {}",
            text(&o)
        );
        return None;
    }
    Some(out)
}

#[test]
fn threads_that_compute_past_the_step_timeout_are_never_a_hang() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut progs = vec![
        ("gcc", build(d, "gcc", "ok_compute_between_locks.c")),
        ("g++", build(d, "g++", "ok_compute_between_locks.cpp")),
        (
            "clang++-14",
            build(d, "clang++-14", "ok_compute_between_locks.cpp"),
        ),
        ("rustc", build(d, "rustc", "ok_compute_between_locks.rs")),
    ];
    progs.extend(build_omp(d).map(|p| ("gcc -fopenmp", p)));
    for (i, (cc, prog)) in progs.iter().enumerate() {
        // About 0.2 s of computing per chunk here: two step timeouts.
        let args = [prog.to_str().unwrap(), "--", "150", "2"];
        // Every algorithm on the C program; rw and pos on the others (CI time).
        let algos: &[&str] = if i == 0 {
            common::ALGOS
        } else {
            &["rw", "pos"]
        };
        for &algo in algos {
            let (p, o) = common::run_tries(d, Path::new(args[0]), algo, 2, STEP, |c| {
                c.args(&args[1..]);
            });
            assert_eq!(outcome_count(&p, "ok"), 2, "{cc} {algo}: {}", text(&o));
        }
        if i == 0 {
            // The old rule (no excuse for computing) flagged it: the test can tell.
            let old = [STEP, &["--compute-timeout", "0"]].concat();
            let (p, o) = common::run_tries(d, Path::new(args[0]), "pos", 2, &old, |c| {
                c.args(&args[1..]);
            });
            assert_eq!(outcome_count(&p, "hang"), 2, "{cc} old rule: {}", text(&o));
        }
    }
}

#[test]
fn an_endless_computation_is_a_hang_after_the_compute_timeout_and_replays() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let limits = ["--step-timeout", "0.1", "--compute-timeout", "0.3"];
    for (cc, file) in [
        ("gcc", "bug_stale_flag_loop.c"),
        ("rustc", "bug_stale_flag_loop.rs"),
    ] {
        let prog = build(d, cc, file);
        for algo in ["rw", "pos"] {
            let (p, o) = common::run_tries(d, &prog, algo, 10, &limits, |_| {});
            let (hang, ok) = (outcome_count(&p, "hang"), outcome_count(&p, "ok"));
            eprintln!("{file} {algo}: hang {hang}/10, ok {ok}/10");
            assert!(hang > 0 && hang + ok == 10, "{file} {algo}: {}", text(&o));
            let t = text(&o);
            assert!(
                t.contains("hang: thread(s) 0.1 kept computing for")
                    && t.contains(
                        "(an endless loop, or a computation longer than --compute-timeout)"
                    ),
                "{t}"
            );
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let r = poscheck(&[&["replay", "--times", "2"][..], &limits, &[schedule]].concat());
            assert!(
                text(&r).contains("recorded outcome hang: reproduced 2 of 2"),
                "{file} {algo}: {}",
                text(&r)
            );
        }
    }
    // Exploration finds it too (two executions: the consumer first, or the producer).
    let prog = build(d, "gcc", "bug_stale_flag_loop.c");
    let out = d.join("explore");
    let o = poscheck(
        &[
            &[
                "explore",
                "--algo",
                "odpor",
                "--out-dir",
                out.to_str().unwrap(),
            ][..],
            &limits,
            &[prog.to_str().unwrap()],
        ]
        .concat(),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("buggy executions: 1") && t.contains("kept computing"),
        "{t}"
    );
}
