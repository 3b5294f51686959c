//! The virtual-time corpus (`tests/corpus/vtime/`): timed waits, sleeps, clock reads, and
//! the timeouts of `poll`, `select` and `epoll_wait`, and `timerfd`s.
//! Correct programs are never flagged in 100 tries of rw, pct3, pos and auto (25 for those
//! that wait outside control in every run), and no run takes the step timeout; buggy ones
//! are found and their saved schedules replay 20 of 20 times.

use crate::common;

use common::{outcome_count, poscheck, require_libpos, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Compile `file` of the corpus with `compiler` (a C or C++ compiler, or `rustc`) into
/// `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("vtime", dir, compiler, file)
}

/// Tries of each run: every program here has few schedules that matter (its timeouts'
/// order), all reached well within 100 tries of each algorithm.
const TRIES: u32 = 100;

/// `poscheck run` of [`TRIES`] tries with a JSON report.
fn run(dir: &Path, prog: &Path, algo: &str, extra: &[&str]) -> (Value, Output) {
    common::run_tries(dir, prog, algo, TRIES, extra, |_| {})
}

/// Correct programs: (compiler, file, extra flags).
const CORRECT: &[(&str, &str, &[&str])] = &[
    ("gcc", "ok_timed_objects.c", &[]),
    ("gcc", "ok_cond_poll.c", &[]),
    ("gcc", "ok_cond_poll_busy.c", &[]),
    // Every poll may time out at once: the poller must not starve the producer (PCT's
    // yield rule for timeouts; without it pct3 hit the step limit in 73 of 200 tries).
    ("gcc", "ok_cond_poll_busy.c", &["--timeouts", "any"]),
    ("gcc", "ok_sleep_handoff.c", &[]),
    ("gcc", "ok_clock_busywait.c", &[]),
    ("gcc", "ok_deadlock_broken_by_timeout.c", &[]),
    (
        "gcc",
        "ok_deadlock_broken_by_timeout.c",
        &["--timeouts", "any"],
    ),
    ("g++", "ok_cxx_timed.cpp", &[]),
    ("clang++-14", "ok_cxx_timed.cpp", &[]),
    // Correct as long as timeouts fire only at their deadlines (the default).
    ("gcc", "bug_timeout_path.c", &[]),
    // poll, select and epoll_wait timeouts count virtual time (preload/src/poll.rs): an
    // event loop's timer came due only in real time, and every run hung.
    ("gcc", "ok_poll_event_loop.c", &[]),
    ("gcc", "ok_epoll_timer.c", &[]),
    ("gcc", "ok_select_sleep.c", &[]),
    // timerfds in virtual time: blocking reads, epoll with an absolute deadline.
    ("gcc", "ok_timerfd_periodic.c", &[]),
    ("clang-14", "ok_timerfd_periodic.c", &[]),
    ("gcc", "ok_timerfd_epoll.c", &[]),
    ("g++", "ok_timerfd_cxx.cpp", &[]),
    ("clang++-14", "ok_timerfd_cxx.cpp", &[]),
    ("rustc", "ok_timerfd.rs", &[]),
    // C11 deadlines from timespec_get, which glibc reads past the interposed
    // clock_gettime: real time, so a 2 ms mtx_timedlock never timed out (assert 200/200).
    ("gcc", "ok_c11_deadlines.c", &[]),
    ("clang-14", "ok_c11_deadlines.c", &[]),
    // A watchdog's 30 s sleep while a worker woken from `read` by a pipe write is not yet
    // back: time jumped to the watchdog's deadline (assert in 10 of 50 rw tries); it now
    // passes in ticks of real time (`Coordinator::pass_outside_time`).
    ("gcc", "ok_watchdog_pipe_worker.c", &[]),
    // Kernel waits with timeouts (sigtimedwait, semtimedop, mq_timedreceive/send): a timeout
    // sleeps to its deadline in virtual time (`preload/src/ipc.rs`); before, 0 ms elapsed
    // (assert 50/50 under rw, pct3 and pos).
    ("gcc", "ok_kernel_timeouts.c", &[]),
    ("clang-14", "ok_kernel_timeouts.c", &[]),
];

#[test]
fn correct_timed_programs_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (cc, file, extra) in CORRECT {
        let prog = build(dir.path(), cc, file);
        let tries = if WAIT_OUTSIDE.contains(file) {
            25
        } else {
            TRIES
        };
        for algo in common::ALGOS {
            let (p, o) = common::run_tries(dir.path(), &prog, algo, tries, extra, |_| {});
            assert_eq!(
                outcome_count(&p, "ok"),
                tries as u64,
                "{cc} {file} {extra:?} under {algo}: {}",
                text(&o)
            );
        }
    }
}

/// Correct programs of [`CORRECT`] whose every run has a thread blocked outside control
/// (`epoll_wait` with no timeout, `read` of a pipe) that is set aside only after
/// `--blocked-after` (30 ms), once or more a run: 25 tries each (their schedules are few; 200
/// took 65 s of the test's 180 on a loaded machine).
const WAIT_OUTSIDE: &[&str] = &["ok_timerfd_epoll.c", "ok_watchdog_pipe_worker.c"];

/// Buggy programs: (compiler, file, extra flags, outcome).
const BUGGY: &[(&str, &str, &[&str], &str)] = &[
    ("gcc", "bug_timeout_deadlock.c", &[], "assert"),
    ("gcc", "bug_poll_sleep_lost_update.c", &[], "assert"),
    ("gcc", "bug_timerfd_lost_update.c", &[], "assert"),
    ("g++", "bug_cxx_try_lock_for.cpp", &[], "assert"),
    ("clang++-14", "bug_cxx_try_lock_for.cpp", &[], "assert"),
    // The worker never comes back from `read`: the ticks still bring the watchdog's end.
    ("gcc", "bug_watchdog_pipe_worker.c", &[], "assert"),
    ("gcc", "bug_semtimedop_short.c", &[], "assert"),
    (
        "gcc",
        "bug_timeout_path.c",
        &["--timeouts", "any"],
        "assert",
    ),
];

#[test]
fn buggy_timed_programs_are_found_and_replay() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (cc, file, extra, kind) in BUGGY {
        let prog = build(dir.path(), cc, file);
        for algo in common::ALGOS {
            let (p, o) = run(dir.path(), &prog, algo, extra);
            assert!(
                outcome_count(&p, kind) > 0,
                "{cc} {file} under {algo}: {}",
                text(&o)
            );
            assert_eq!(
                outcome_count(&p, kind) + outcome_count(&p, "ok"),
                u64::from(TRIES),
                "{cc} {file} under {algo}: {}",
                text(&o)
            );
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let r = poscheck(&["replay", "--times", "20", schedule]);
            assert!(
                String::from_utf8_lossy(&r.stdout).contains(&format!(
                    "recorded outcome {kind}: reproduced 20 of 20 times"
                )),
                "{cc} {file} {algo}: {}",
                text(&r)
            );
        }
    }
}

#[test]
fn real_sleep_keeps_the_old_model() {
    // With --real-sleep a timed wait times out at once when it cannot proceed, as before:
    // the timeout path (correct under virtual time) is taken again.
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "bug_timeout_path.c");
    let (p, o) = run(dir.path(), &prog, "rw", &["--real-sleep"]);
    assert!(outcome_count(&p, "assert") > 0, "{}", text(&o));
    let bad = poscheck(&["run", "--timeouts", "sometimes", prog.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with("poscheck: error: --timeouts"));
}

#[test]
fn explore_takes_the_timeout_path_only_with_timeouts_any() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "bug_timeout_path.c");
    let out = dir.path().join("ex");
    for (extra, bugs) in [(&[][..], false), (&["--timeouts", "any"][..], true)] {
        let mut args = vec![
            "explore",
            "--algo",
            "dpor",
            "--out-dir",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(prog.to_str().unwrap());
        let o = poscheck(&args);
        let t = text(&o);
        assert!(t.contains("exploration: complete"), "{t}");
        assert_eq!(t.contains("buggy executions: 0"), !bugs, "{extra:?}: {t}");
    }
    // The saved schedule records the rule and replays with it.
    let schedule = out.join(format!(
        "{}.explore-dpor.bug0.json",
        prog.file_name().unwrap().to_str().unwrap()
    ));
    let r = poscheck(&["replay", "--times", "20", schedule.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&r.stdout).contains("recorded outcome assert: reproduced 20 of 20"),
        "{}",
        text(&r)
    );
}

/// Kernel waits with a timeout longer than the step timeout (`--step-timeout 0.5`, a 1 s
/// timeout): the thread announces the wait (`Msg::KernelWait`), so its silence is no hang,
/// and virtual time does not pass the wait's deadline while it is outside. Correct: Rust's
/// `set_read_timeout` (SO_RCVTIMEO) and a C++ `poll`, whose wait must end as a timeout after
/// its whole duration (before 2026-11-28: a hang in every run). Buggy: a receive timeout
/// shorter than the sender's sleep, which the ticks of virtual time used to end within
/// milliseconds, so the data came in time (ok in every run); now an assertion in every run.
#[test]
fn kernel_waits_longer_than_the_step_timeout_are_no_hang_and_time_out_in_order() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let flags: &[&str] = &["--step-timeout", "0.5"];
    let one_second = |c: &mut std::process::Command| {
        c.args(["--", "1"]);
    };
    for (cc, file) in [
        ("rustc", "ok_read_timeout.rs"),
        ("g++", "ok_poll_timeout.cpp"),
        ("clang++-14", "ok_poll_timeout.cpp"),
    ] {
        let prog = build(dir.path(), cc, file);
        for algo in ["rw", "pct3", "pos"] {
            let (p, o) = common::run_tries(dir.path(), &prog, algo, 2, flags, one_second);
            assert_eq!(
                outcome_count(&p, "ok"),
                2,
                "{cc} {file} {algo}: {}",
                text(&o)
            );
        }
    }
    let prog = build(dir.path(), "gcc", "bug_rcvtimeo_short.c");
    for algo in ["rw", "pct3", "pos"] {
        let (p, o) = common::run_tries(dir.path(), &prog, algo, 2, flags, one_second);
        assert_eq!(outcome_count(&p, "assert"), 2, "{algo}: {}", text(&o));
        let schedule = p["schedule"].as_str().expect("a saved schedule");
        let r = poscheck(&["replay", "--times", "3", schedule]);
        assert!(
            String::from_utf8_lossy(&r.stdout)
                .contains("recorded outcome assert: reproduced 3 of 3 times"),
            "{algo}: {}",
            text(&r)
        );
    }
}
