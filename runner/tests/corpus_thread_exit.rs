//! What a thread runs after its routine (`tests/corpus/thread_exit/`): thread-specific-data
//! destructors, C++ `thread_local` and Rust TLS destructors, the at-thread-exit
//! notifications of the C++ library, and the cleanup handlers and destructors that
//! `pthread_exit` unwinds through. libpos posted the thread's `Exit` before all of that, which
//! then ran uncontrolled: its unlocks, posts and signals never reached the model (deadlocks
//! in every run of correct programs) and its locks ignored the model's owners (assertion
//! failures), while a real race inside a destructor was never found. The `Exit` is now
//! posted at the very end (from libpos's own thread-specific-data destructor). Likewise a
//! process's exit handlers (`atexit`, C++ static destructors: a global service object that
//! stops and joins its worker), which ran after `ProcessExit` and hung the run until the
//! step timeout: the event is now posted by libpos's own exit handler, the last one, which
//! runs after the shared libraries' destructors too (a library that joins its pool threads
//! in its destructor hung every run while that handler was tied to libpos's own).
//!
//! Correct programs are never flagged in 100 tries of rw, pct3, pos and auto (gcc and
//! clang-14, g++ and clang++-14, rustc) and ODPOR explores them without a bug; the lost
//! update in a destructor is found by sampling and by ODPOR, and its schedule replays.

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text};
use std::path::{Path, PathBuf};

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("thread_exit", dir, compiler, file)
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;
const RUST: &[&str] = &["rustc"];

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "ok_tsd_mutex.c", 2),
    (C, "ok_tsd_notify.c", 3),
    (C, "ok_tsd_sem.c", 3),
    (C, "ok_cleanup_exit.c", 2),
    (CXX, "ok_thread_local_notify.cpp", 3),
    (CXX, "ok_at_thread_exit.cpp", 4),
    (CXX, "ok_pthread_exit_raii.cpp", 2),
    (RUST, "ok_tls_drop.rs", 4),
    (C, "ok_atexit_join.c", 2),
    (CXX, "ok_static_dtor_join.cpp", 2),
];

#[test]
fn correct_programs_that_synchronise_at_thread_exit_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// A shared library whose destructor wakes and joins its helper thread (libuv's shutdown):
/// never flagged in 100 tries of rw and pos, with gcc and clang-14.
#[test]
fn a_library_destructor_that_joins_its_thread_is_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/thread_exit/ok_lib_dtor_join.c");
    for cc in C {
        let lib_dir = dir.path().join(cc);
        std::fs::create_dir_all(&lib_dir).unwrap();
        let lib = lib_dir.join("libhelper.so");
        common::compile(
            cc,
            &["-DLIB", "-shared", "-fPIC", "-O1", "-pthread"],
            &lib,
            &src,
        );
        let prog = lib_dir.join("ok_lib_dtor_join");
        let l = format!("-L{}", lib_dir.display());
        let rpath = format!("-Wl,-rpath,{}", lib_dir.display());
        // The library after the source, as the linker needs.
        let o = std::process::Command::new(cc)
            .args(["-O1", "-pthread", "-o"])
            .arg(&prog)
            .arg(&src)
            .args([l.as_str(), rpath.as_str(), "-lhelper"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{cc}: {}", text(&o));
        for algo in ["rw", "pos"] {
            let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
            assert_eq!(
                outcome_count(&p, "ok"),
                u64::from(TRIES),
                "{cc} under {algo}: {}",
                text(&o)
            );
        }
    }
}

/// ODPOR explores the correct programs (gcc, g++, rustc) without a bug. Rust's std
/// `Mutex` and `Condvar` decide in memory (their futex words) whether to make a futex call
/// at all, so a reordered run may take another path there: with sync points such a run is
/// replayed approximately and counted (before, the exploration stopped there with exit 2).
#[test]
fn odpor_finds_no_bug_in_what_threads_run_at_their_exit() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, _) in CORRECT {
        let prog = build(dir.path(), compilers[0], file);
        let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        assert_eq!(v["buggy"].as_u64(), Some(0), "{file}: {v}");
    }
}

/// A lost update between two threads' destructors: found by rw and pos in 100 tries and by
/// ODPOR; a saved schedule replays 20 of 20 times.
#[test]
fn a_race_in_thread_specific_data_destructors_is_found() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_tsd_lost_update.c";
    let prog = build(dir.path(), "gcc", file);
    common::assert_found_by_odpor_and_sampling(dir.path(), &prog, file, "assert");
    common::assert_pos_finds_and_replays(&prog, "assert");
}
