//! Timers (`tests/corpus/timers/`): `alarm`, `setitimer(ITIMER_REAL)` and POSIX timers with
//! `SIGEV_THREAD` or signal notification. The kernel counted them in real time while the
//! program's sleeps counted virtual time, and glibc ran a `SIGEV_THREAD` notification on a
//! thread of its own, outside control: a timer's notification that posts a semaphore was a
//! deadlock in every run, a worker that sleeps until an alarm's handler sets a flag reached
//! the step limit, and a race between a timer's notification and a worker was reported as a
//! deadlock. libpos now runs each armed timer as a controlled thread that sleeps in virtual
//! time and notifies as the kernel would (`preload/src/timer.rs`).
//!
//! A thread waiting for a timer's signal in `pause`, `sigsuspend` or `sigwait*` waits in the
//! model: deterministic, no partial run, and the clock it reads afterwards has reached the
//! expiry (it read the start time before, and `sigtimedwait`'s timeout was real).
//!
//! Correct programs (gcc and clang-14, g++ and clang++-14, rustc) are never flagged in 100
//! tries of rw, pct3, pos and auto, and ODPOR explores them without a bug; those whose signal
//! wait starts before any timer is armed (it waits in the kernel, outside control, so their
//! runs are partial) end well in 50 of 50 tries. The two races with a timer are found and
//! replay, and so does a notification that outlives `timer_delete`.

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text};
use std::path::{Path, PathBuf};

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("timers", dir, compiler, file)
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;
const RUST: &[&str] = &["rustc"];

/// (compilers, file, threads including main): every thread stays under control.
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "ok_alarm_flag.c", 2),
    (C, "ok_timer_thread.c", 1),
    (C, "ok_timer_periodic.c", 1),
    (C, "ok_setitimer_sem.c", 2),
    (C, "ok_watchdog.c", 2),
    (C, "ok_watchdog_kick.c", 3),
    (C, "ok_alarm_pause.c", 2),
    (C, "ok_sigwaitinfo_abstime.c", 1),
    (C, "ok_fork_child_timers.c", 1),
    (RUST, "ok_alarm.rs", 3),
];

/// Correct programs with a signal wait that starts before any timer is armed, or after the
/// last one ended (`sigwait`, `sigtimedwait`): it waits in the kernel, outside control, and
/// the thread is set aside until the signal comes (partial runs). 50 tries of rw and pos
/// each: every run waits for the set-aside.
const WAIT_OUTSIDE: &[(&[&str], &str)] = &[
    (CXX, "ok_sigwait_timer.cpp"),
    (C, "ok_sigtimedwait.c"),
    (C, "ok_periodic_sigwait.c"),
    // Its sigwait thread, in the kernel before the timer is armed, once raced the timer: the
    // timer thread went on as soon as the wait ended, before the thread posted again, and a
    // periodic timer moved virtual time past main's 2 s `wait_for` (5 of 3,000 pos runs
    // under load; 0 of 9,000 since the timer waits for the post).
    (CXX, "ok_watchdog_sigwait.cpp"),
];

#[test]
fn correct_programs_with_timers_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

#[test]
fn a_signal_wait_outside_control_gets_the_timer_signal() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file) in WAIT_OUTSIDE {
        for cc in *compilers {
            let prog = build(dir.path(), cc, file);
            for algo in ["rw", "pos"] {
                let (p, o) = common::run_tries(dir.path(), &prog, algo, 50, &[], |_| {});
                eprintln!(
                    "{cc} {file} under {algo}: ok {}/50",
                    outcome_count(&p, "ok")
                );
                assert_eq!(
                    outcome_count(&p, "ok"),
                    50,
                    "{cc} {file} {algo}: {}",
                    text(&o)
                );
                assert_eq!(p["step_limits"].as_u64().unwrap_or(0), 0, "{file}: {p}");
            }
        }
    }
}

/// ODPOR explores the correct C programs (every thread controlled) without a bug and
/// completely.
#[test]
fn odpor_finds_no_bug_in_correct_timer_programs() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, _) in CORRECT.iter().filter(|(c, _, _)| *c == C) {
        let prog = build(dir.path(), compilers[0], file);
        let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        assert_eq!(v["buggy"].as_u64(), Some(0), "{file}: {v}");
        assert_eq!(v["complete"].as_bool(), Some(true), "{file}: {v}");
    }
}

/// A timer's notification thread and a worker, due at the same time, update a total in two
/// locked steps: found by ODPOR, rw and pos; a saved schedule replays 20 of 20 times.
#[test]
fn a_race_between_a_timer_notification_and_a_worker_is_found() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_timer_lost_update.c";
    let prog = build(dir.path(), "gcc", file);
    common::assert_found_by_odpor_and_sampling(dir.path(), &prog, file, "assert");
    common::assert_pos_finds_and_replays(&prog, "assert");
}

/// `timer_delete` does not wait for a notification that has started: main frees what the
/// notification uses. Arming and the timer thread's decision to fire are ordered by a model
/// mutex of libpos, so ODPOR sees that race and runs both orders (it explored 1 execution,
/// "complete", before); rw and pos find it too.
#[test]
fn a_notification_racing_with_timer_delete_is_found_by_odpor_and_sampling() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_delete_while_notifying.c";
    let prog = build(dir.path(), "gcc", file);
    common::assert_found_by_odpor_and_sampling(dir.path(), &prog, file, "assert");
}

/// An alarm's handler posts the semaphore main waits on, at the time a worker's sleep ends:
/// main may wake from the handler's post before the worker has done its part. The order
/// lies in memory between scheduling points, so sampling finds it (a sync-only exploration
/// does not see that memory); its schedule replays 20 of 20 times.
#[test]
fn an_alarm_handler_racing_with_a_worker_is_found_by_sampling() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_alarm_order.c";
    let prog = build(dir.path(), "gcc", file);
    for algo in ["rw", "pos"] {
        let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
        let (bugs, ok) = (outcome_count(&p, "assert"), outcome_count(&p, "ok"));
        eprintln!("{file} under {algo}: assert {bugs}/{TRIES}, ok {ok}/{TRIES}");
        assert!(
            bugs > 0 && bugs + ok == u64::from(TRIES),
            "{file} {algo}: {}",
            text(&o)
        );
    }
    let (_, saved, o) = common::run_report(&prog, &["--algo", "pos", "--tries", "200"]);
    let saved = saved.unwrap_or_else(|| panic!("no saved schedule: {}", text(&o)));
    common::assert_replays(&saved, 20);
}

/// A spin on a flag a timer's handler sets, built with `poscheck cc` and every memory access
/// a point: main's reads of the flag are steps, so virtual time never passed and the timer
/// never fired (a step limit in every run of pos and rw with `--points mem`). A thread that
/// repeats a read with nothing but reads since now lets time pass, as a yield does; and
/// under pct3, where the spinner kept the highest priority for ever (a step limit in every
/// run), a spin on memory drops its thread's priority as a yield does.
#[test]
fn a_spin_on_a_timer_flag_lets_virtual_time_pass() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("ok_alarm_flag_spin-cc");
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/timers/ok_alarm_flag_spin.c");
    let o = common::poscheck(&[
        "cc",
        "-O1",
        "-o",
        prog.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "poscheck cc: {}", text(&o));
    for algo in ["rw", "pos", "pct3"] {
        let (p, o) = common::run_tries(dir.path(), &prog, algo, 50, &["--points", "mem"], |_| {});
        assert_eq!(outcome_count(&p, "ok"), 50, "{algo}: {}", text(&o));
        assert!(
            p["mean_steps"].as_f64().unwrap_or(1e9) < 1_000.0,
            "{algo}: {p}"
        );
    }
}
