//! Signal handlers run under control (`tests/corpus/signals/`, `preload/src/signal.rs`).
//!
//! A `pthread_kill` to a thread parked in a wait of the model (a semaphore, a mutex, a
//! condition variable) ran the handler while that thread waited for its turn, outside the
//! model: a handler's `sem_post` went to the real semaphore, the thread it should have woken
//! stayed blocked in the model, and every run of a correct program ended as a deadlock
//! (`ok_kill_sem_wait.c`: 200 of 200). Now the kill is a step that ends the target's wait
//! for its handler, which runs as steps of the target; `sem_wait` then returns `EINTR` (as
//! POSIX says), a lock or a condition wait is waited for again.
//!
//! A `kill` of the process by a thread that blocks the signal goes to the controlled thread
//! with the lowest id that does not (a choice the kernel may make), as a `pthread_kill`:
//! workers that block SIGUSR1 report to main, parked in `pthread_join`, whose handler posts
//! a semaphore (`ok_kill_process.c`: deadlock 100 of 100 before).
//!
//! Programs also start with the signal mask poscheck was started with: they inherited
//! poscheck's own, with SIGHUP, SIGINT and SIGTERM blocked for its signal thread, so a
//! SIGINT handler never ran (`ok_raise_sigint.c`: assertion failed 50 of 50) and a worker
//! stopped by SIGTERM slept forever (`ok_sigterm_worker_stop.c`: step limit 50 of 50).
//!
//! Correct programs (C with gcc and clang-14, C++ with g++ and clang++-14, Rust) are never
//! flagged in 200 tries of rw, pct3, pos and auto, and ODPOR explores the C ones completely
//! without a bug. A worker that takes an item after `sem_wait` without looking for `EINTR`
//! is found by ODPOR, rw and pos, and its schedule replays 20 of 20 times.

use crate::common;

use common::{require_libpos, text};
use std::path::{Path, PathBuf};

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("signals", dir, compiler, file)
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;
const RUST: &[&str] = &["rustc"];

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "ok_kill_sem_wait.c", 2),
    (C, "ok_kill_lock_waiter.c", 2),
    (C, "ok_kill_cond_waiter.c", 2),
    (C, "ok_kill_masked.c", 2),
    (C, "ok_sigterm_worker_stop.c", 2),
    (C, "ok_raise_sigint.c", 3),
    (C, "ok_kill_process.c", 3),
    (C, "ok_altstack_handler.c", 2),
    // A signal from outside the run (a child's SIGCHLD) ends the wait its handler posts for.
    (C, "ok_sigchld_sem.c", 3),
    (CXX, "ok_sigchld_cpp.cpp", 4),
    (CXX, "ok_kill_cpp.cpp", 3),
    (RUST, "ok_kill.rs", 2),
];

#[test]
fn correct_programs_that_signal_waiting_threads_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// Two `pthread_kill`s to a thread blocked in `read` (outside control, so its runs are
/// partial): its handler runs once per signal, under every algorithm, never merged into one
/// call and never waiting for a kill already handled. 15 tries each: every run waits for
/// the reader to be set aside.
#[test]
fn a_thread_blocked_in_read_handles_each_of_two_kills() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file) in [
        (C, "ok_kill_twice_read.c"),
        (CXX, "ok_kill_twice_read_cpp.cpp"),
    ] {
        for cc in compilers {
            let prog = build(dir.path(), cc, file);
            for algo in ["rw", "pos", "surw", "auto"] {
                let (p, o) = common::run_tries(dir.path(), &prog, algo, 15, &[], |_| {});
                assert_eq!(
                    common::outcome_count(&p, "ok"),
                    15,
                    "{cc} {file} {algo}: {}",
                    text(&o)
                );
            }
        }
    }
}

/// ODPOR explores the correct C programs completely and finds no bug: a kill depends on
/// every event of its target, and a handler step never comes before its kill.
#[test]
fn odpor_explores_correct_signal_programs_without_a_bug() {
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

/// `sem_wait` interrupted by a handler returns -1 with `EINTR`; a worker that does not look
/// takes from an empty queue. Found by ODPOR (it needs the wait to block before the kill),
/// rw and pos; a saved schedule replays 20 of 20 times.
#[test]
fn a_sem_wait_that_ignores_eintr_is_found() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_sem_wait_eintr.c";
    for cc in C {
        let prog = build(dir.path(), cc, file);
        common::assert_found_by_odpor_and_sampling(dir.path(), &prog, file, "assert");
    }
    let prog = build(dir.path(), "gcc", file);
    common::assert_pos_finds_and_replays(&prog, "assert");
}

/// A SIGCHLD handler that forgets to post the semaphore main waits on: still a deadlock
/// (after the wait for a signal from outside the run), under the in-program decisions (rw,
/// pos) and the socket ones (surw), and it replays.
#[test]
fn a_sigchld_handler_that_forgets_to_post_is_a_deadlock() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_sigchld_lost.c";
    let prog = build(dir.path(), "gcc", file);
    for algo in ["rw", "pos", "surw"] {
        let (p, o) = common::run_tries(dir.path(), &prog, algo, 20, &[], |_| {});
        assert_eq!(
            common::outcome_count(&p, "deadlock"),
            20,
            "{algo}: {}",
            text(&o)
        );
    }
    common::assert_pos_finds_and_replays(&prog, "deadlock");
}
