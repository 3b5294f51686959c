//! The limits corpus (`tests/corpus/limits/`): programs that limit their own address space
//! or data segment with `setrlimit` (C, C++ with g++ and clang++-14, Rust, OpenMP). libpos's
//! own reservations (its 16 GiB private heap among them) are not charged to the program: the
//! correct programs are never flagged in 100 tries of rw, pct3, pos and auto, read their
//! limit back as they set it, and still meet it (a reservation far past it fails); before
//! 2026-11-28 every run failed (`pthread_create` with `EAGAIN`, a `std::thread` or libgomp
//! that could not start). A lost update in such a program is found and replays.

use crate::common;

use common::TRIES;

use common::{outcome_count, poscheck, require_libpos, text};
use std::path::{Path, PathBuf};

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    common::build_corpus("limits", dir, compiler, file)
}

#[test]
fn programs_that_limit_their_address_space_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let progs = [
        build(d, "gcc", "ok_rlimit_as.c"),
        build(d, "gcc", "ok_rlimit_as_omp.c"),
        build(d, "g++", "ok_rlimit_data.cpp"),
        build(d, "clang++-14", "ok_rlimit_data.cpp"),
        build(d, "rustc", "ok_rlimit_as.rs"),
    ];
    for prog in &progs {
        for algo in common::ALGOS {
            let (p, o) = common::run_tries(d, prog, algo, 100, &[], |_| {});
            assert_eq!(
                outcome_count(&p, "ok"),
                100,
                "{} {algo}: {}",
                prog.display(),
                text(&o)
            );
        }
    }
}

#[test]
fn a_lost_update_in_a_limited_program_is_found_and_replays() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prog = build(d, "gcc", "bug_rlimit_as_split.c");
    for algo in ["rw", "pct3", "pos"] {
        let (p, o) = common::run_default(d, &prog, algo, &[], |_| {});
        let hits = outcome_count(&p, "assert");
        assert!(hits > 0, "{algo}: {}", text(&o));
        assert_eq!(
            hits + outcome_count(&p, "ok"),
            u64::from(TRIES),
            "{algo}: {}",
            text(&o)
        );
        let schedule = p["schedule"].as_str().expect("a saved schedule");
        let r = poscheck(&["replay", "--times", "20", schedule]);
        assert!(
            text(&r).contains("recorded outcome assert: reproduced 20 of 20 times"),
            "{algo}: {}",
            text(&r)
        );
    }
}
