//! Robust mutexes (`tests/corpus/robust/`): the death of an owner holding a robust mutex
//! hands it to the next locker with `EOWNERDEAD` (a thread's exit, a forked child's end for
//! one in `MAP_SHARED` memory), `pthread_mutex_consistent` recovers it, an unlock without it
//! makes it not recoverable, `pthread_mutex_init` starts it afresh. Correct programs that
//! recover (threads in C and C++, a child process) or initialise a not recoverable one
//! again were all reported as `deadlock` or `assert` before: they are never flagged in
//! 100 tries of rw, pct3, pos and auto, nor by an ODPOR exploration. A program that
//! ignores `EOWNERDEAD` fails its assertion on `ENOTRECOVERABLE` in every run, a normal
//! mutex held by a thread that exited is still a `deadlock`, and a trylock that does not
//! expect a dead owner is found by ODPOR and by sampling.
//!
//! Each test prints its figures (`--nocapture`).

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/robust")
}

/// Compile `file` of the corpus with `compiler` into `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let out = common::corpus_binary(dir, compiler, file);
    let args = [common::corpus_std(compiler), "-O1", "-pthread"];
    common::compile(compiler, &args, &out, &corpus().join(file));
    out
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;

/// (compilers, file, threads including main; a child process's counts too).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "ok_robust_thread.c", 4),
    (C, "ok_robust_fork.c", 3),
    (C, "ok_robust_reinit.c", 3),
    (CXX, "ok_robust_thread.cpp", 4),
];

#[test]
fn correct_programs_that_recover_robust_mutexes_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// `poscheck explore --algo odpor` of each correct program (gcc/g++): complete, no bug.
#[test]
fn odpor_explores_the_correct_programs_without_a_bug() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, _) in CORRECT {
        let prog = build(dir.path(), compilers[0], file);
        let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        assert_eq!(v["complete"], true, "{file}: {v}");
        assert_eq!(v["buggy"].as_u64(), Some(0), "{file}: {v}");
        assert!(v["executions"].as_u64().unwrap_or(0) >= 2, "{file}: {v}");
    }
}

/// A trylock that meets a dead owner only when the owner's exit comes first: found by ODPOR
/// (the exit of a thread that locked a robust mutex depends on other threads' mutex
/// operations; before, ODPOR explored 2 executions and called the program correct) and by
/// some of 100 tries of rw and pos.
#[test]
fn a_trylock_after_the_owner_s_exit_is_found_by_odpor_and_sampling() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let file = "bug_trylock_dead_owner.c";
    let prog = build(dir.path(), "gcc", file);
    common::assert_found_by_odpor_and_sampling(dir.path(), &prog, file, "assert");
}

/// The buggy programs are found in every one of 100 tries, with their outcome.
#[test]
fn ignoring_eownerdead_and_a_dead_owner_of_a_normal_mutex_are_found() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (file, outcome) in [
        ("bug_robust_notrecoverable.c", "assert"),
        ("bug_normal_dead_owner.c", "deadlock"),
    ] {
        let prog = build(dir.path(), "gcc", file);
        for algo in ["rw", "pct3", "pos"] {
            let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
            let n = outcome_count(&p, outcome);
            eprintln!("buggy {file} under {algo}: {outcome} {n}/{TRIES}");
            assert_eq!(n, u64::from(TRIES), "{file} {algo}: {}", text(&o));
        }
    }
}
