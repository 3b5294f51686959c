//! The cancellation and C11/C++/Rust corpus (`tests/corpus/cancel/`): deferred
//! `pthread_cancel` at each kind of cancellation point, cancellation state, C++ forced
//! unwinding (RAII guards, `abi::__forced_unwind` caught and rethrown) with g++ and
//! clang++-14, C11 `<threads.h>` with gcc and clang-14, a Rust panic and a C++ uncaught
//! exception. Correct programs are never flagged in 100 tries of rw, pct3 and pos (no run
//! takes the step timeout, none is partial, and they are scheduled: mean steps above their
//! thread count); buggy ones are found with the right outcome in 100 tries and their saved
//! schedules replay it 20 of 20 times.
//!
//! Each test prints its figures (`--nocapture`): hits per algorithm and replays.

use crate::common;

use common::TRIES;

use common::{outcome_count, poscheck, require_libpos, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/cancel")
}

/// Compile `file` of the corpus with `compiler` (a C or C++ compiler, or `rustc`) into
/// `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let out = common::corpus_binary(dir, compiler, file);
    let args: &[&str] = if compiler == "rustc" {
        &["-O", "--edition", "2021"]
    } else {
        &["-O1", "-pthread"]
    };
    common::compile(compiler, args, &out, &corpus().join(file));
    out
}

/// `poscheck run` of [`common::TRIES`] tries with a JSON report ([`common::run_default`]).
fn run(dir: &Path, prog: &Path, algo: &str) -> (Value, Output) {
    common::run_default(dir, prog, algo, &[], |_| {})
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;

/// Correct programs: (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "condwait_cleanup.c", 2),
    (C, "condtimed.c", 2),
    (C, "disabled.c", 2),
    (C, "join.c", 3),
    (C, "semwait.c", 3),
    (C, "sleep.c", 2),
    (C, "testcancel.c", 2),
    (CXX, "raii.cpp", 2),
    (CXX, "lock_guard.cpp", 2),
    (CXX, "forced_unwind.cpp", 2),
    (C, "c11/counter.c", 4),
    (C, "c11/exit_detach.c", 3),
    (C, "c11/prodcons.c", 4),
    (C, "c11/tss.c", 4),
    // A once routine left by pthread_exit or cancellation returns its control to never run
    // (glibc's cleanup handler): the next pthread_once / std::call_once / C11 call_once runs
    // it again. The model kept the control "run by" the dead thread: a false deadlock in
    // every run.
    // The model's rule is the same for each: one compiler each but for the cancelled one
    // (this binary is among the longest of the test run).
    (&["gcc"], "once_exit_rerun.c", 2),
    (C, "once_cancel_rerun.c", 2),
    (&["g++"], "cpp/call_once_exit.cpp", 3),
    (&["gcc"], "c11/call_once_exit.c", 2),
];

#[test]
fn correct_cancel_and_c11_programs_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// A thread blocked in a call libpos does not control (`read` of a pipe) and cancelled
/// there: before, the request waited for a cancellation point libpos controls, which never
/// came, and every run was a `hang` (a false bug). Now the real cancellation reaches it (the
/// canceller gives it when the target is set aside as blocked outside control, the target
/// gives it to itself after its grant when the request came earlier). Runs where the reader
/// was set aside are `partial` by nature; none is a bug or takes the step timeout.
#[test]
fn a_thread_blocked_outside_control_is_cancelled_for_real() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for cc in C {
        let prog = build(dir.path(), cc, "read_blocked.c");
        for algo in common::ALGOS {
            let (p, o) = run(dir.path(), &prog, algo);
            let what = format!("{cc} read_blocked.c under {algo}");
            eprintln!(
                "correct {what}: ok {}/{TRIES}, partial {}, mean steps {:.1}",
                outcome_count(&p, "ok"),
                p["partial"].as_u64().unwrap_or(0),
                p["mean_steps"].as_f64().unwrap_or(0.0)
            );
            assert_eq!(
                outcome_count(&p, "ok"),
                u64::from(TRIES),
                "{what}: {}",
                text(&o)
            );
        }
    }
}

/// Buggy programs: (compilers, file, outcome kind, texts the outcome must show).
const BUGGY: &[(&[&str], &str, &str, &[&str])] = &[
    (
        C,
        "forgot_unlock.c",
        "deadlock",
        &["deadlock: thread 0 at lock(mutex@"],
    ),
    (
        C,
        "use_after_cancel.c",
        "assert",
        &["buffer used after the worker was cancelled"],
    ),
    (C, "c11/lost_update.c", "assert", &["lost update"]),
    (
        C,
        "c11/missed_signal.c",
        "deadlock",
        &["waits for a signal"],
    ),
    (C, "c11/lazy_init.c", "assert", &["table initialised twice"]),
    // A cancelled once routine is not done: using its result without calling pthread_once
    // again (once_cancel_rerun.c does) reads a half-initialised table.
    (
        C,
        "bug_once_cancel_assumed.c",
        "assert",
        &["initialised && table[0] && table[1]"],
    ),
    // An uncaught exception aborts (SIGABRT): the `abort` outcome, with its type and what().
    (
        CXX,
        "cpp/uncaught.cpp",
        "abort",
        &[
            "abort: uncaught C++ exception 'std::runtime_error': what(): pop from an empty queue",
            "(SIGABRT",
        ],
    ),
    (
        &["rustc"],
        "rust/lost_update.rs",
        "panic",
        &[
            "panic in thread 'main'",
            "lost update: counter is 1, expected 2",
        ],
    ),
];

#[test]
fn buggy_cancel_and_c11_programs_are_found_and_replay() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, kind, shows) in BUGGY {
        for cc in *compilers {
            let prog = build(dir.path(), cc, file);
            for algo in common::ALGOS {
                let what = format!("{cc} {file} under {algo}");
                // 100 tries: each bug is found in tens of them
                let (p, o) = common::run_tries(dir.path(), &prog, algo, 100, &[], |_| {});
                assert!(outcome_count(&p, kind) > 0, "{what}: {}", text(&o));
                assert_eq!(
                    outcome_count(&p, kind) + outcome_count(&p, "ok"),
                    100,
                    "{what}: only {kind} or ok: {}",
                    text(&o)
                );
                assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}: {p}");
                for s in *shows {
                    assert!(text(&o).contains(s), "{what}: {s:?}: {}", text(&o));
                }
                let schedule = p["schedule"].as_str().expect("a saved schedule");
                let r = poscheck(&["replay", "--times", "20", schedule]);
                let replayed = String::from_utf8_lossy(&r.stdout).contains(&format!(
                    "recorded outcome {kind}: reproduced 20 of 20 times"
                ));
                eprintln!(
                    "buggy {what}: {kind} {}/100, replay 100/100: {replayed}",
                    outcome_count(&p, kind)
                );
                assert!(replayed, "{what}: {}", text(&r));
                for s in *shows {
                    assert!(text(&r).contains(s), "{what}: replay {s:?}: {}", text(&r));
                }
            }
        }
    }
}

/// Asynchronous cancellation of a thread that computes (no scheduling point): the runner
/// sets the silent thread aside and the real cancellation reaches it, so every run ends
/// well (partial: the thread ran outside control); the feature's limit is said once.
/// 10 tries per algorithm, at a step timeout of 1 s: each run waits a quarter of it for the
/// computing thread (which spins all the while), and the program has only a handful of
/// schedules.
#[test]
fn asynchronous_cancellation_of_a_computing_thread_ends_well() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for cc in C {
        let prog = build(dir.path(), cc, "async_compute.c");
        for algo in common::ALGOS {
            let what = format!("{cc} async_compute.c under {algo}");
            let (p, o) = common::run_tries(
                dir.path(),
                &prog,
                algo,
                10,
                &["--step-timeout", "1"],
                |_| {},
            );
            let t = text(&o);
            eprintln!(
                "async {what}: ok {}/10, partial {}",
                outcome_count(&p, "ok"),
                p["partial"].as_u64().unwrap_or(0)
            );
            assert_eq!(outcome_count(&p, "ok"), 10, "{what}: {t}");
            assert_eq!(o.status.code(), Some(0), "{what}: {t}");
            let said = t
                .matches("warning: asynchronous cancellation (PTHREAD_CANCEL_ASYNCHRONOUS)")
                .count();
            assert_eq!(said, 1, "said once: {what}: {t}");
        }
    }
}

/// Without setting threads aside (`--blocked-after 0`) the computing thread cannot be
/// reached: each run waits for it until the compute timeout. Such a run is an error of the
/// check (unsupported), never a hang or another bug of the program: no hits, no saved
/// schedule, exit status 2 (nothing could be checked).
#[test]
fn an_unreachable_asynchronous_cancellation_is_unsupported_not_a_bug() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "async_compute.c");
    let json = dir.path().join("async.json");
    let o = poscheck(&[
        "run",
        "--json",
        json.to_str().unwrap(),
        "--out-dir",
        dir.path().join("out").to_str().unwrap(),
        "--tries",
        "3",
        "--seed",
        "1",
        "--blocked-after",
        "0",
        "--step-timeout",
        "0.5",
        "--compute-timeout",
        "0.5",
        prog.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &report["programs"][0];
    assert_eq!(outcome_count(p, "error"), 3, "{t}");
    assert_eq!(p["hits"].as_u64(), Some(0), "{t}");
    assert!(p["schedule"].is_null(), "{p}");
    assert!(
        t.contains("run error: unsupported: asynchronous cancellation"),
        "{t}"
    );
    assert!(!t.contains("hang"), "{t}");
}
