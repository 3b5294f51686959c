//! Polling loops (`tests/corpus/spin/`): a thread that polls `pthread_mutex_trylock` or
//! `omp_test_lock`, or polls a queue under a mutex, without yielding. PCT kept such a poller
//! at the top priority while the thread it waited for sat below it, until the step limit
//! (probe 16: 7, 8 and 2 of 50 runs); `sched/src/spin.rs` now counts these loops as spins,
//! which PCT's yield rule lowers. The correct programs (C with gcc and clang-14, C++ with g++
//! and clang++-14, OpenMP with gcc) are never flagged under rw, pct3, pos and auto; a lost
//! update around a trylock poll is still found by rw, pct3 and pos, and replays. Explored
//! with memory points, a lock-polling loop lets the other threads run (no step-limited
//! first execution), and a publication race behind one is found.

use crate::common;

use common::TRIES;

use std::path::{Path, PathBuf};

/// The pseudo-compiler of OpenMP programs: gcc with `-fopenmp`.
const OPENMP: &str = "gcc-fopenmp";

fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    if compiler != OPENMP {
        return common::build_corpus("spin", dir, compiler, file);
    }
    let out = common::corpus_binary(dir, compiler, file);
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/spin")
        .join(file);
    common::compile("gcc", &["-O1", "-pthread", "-fopenmp"], &out, &src);
    out
}

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (common::C_COMPILERS, "ok_trylock_poll.c", 3),
    (common::CXX_COMPILERS, "ok_lock_poll_drain.cpp", 4),
    (&[OPENMP], "ok_omp_test_lock.c", 3),
];

#[test]
fn correct_polling_loops_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// Found by sampling, and the schedule replays. (Not explored: every failed trylock of a
/// poll is an event, so a polling loop has unboundedly many executions; odpor ran for
/// minutes on this one.)
#[test]
fn a_lost_update_around_a_trylock_poll_is_found() {
    common::require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "bug_trylock_poll_split.c");
    for algo in ["rw", "pct3", "pos"] {
        let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
        let (bugs, ok) = (
            common::outcome_count(&p, "assert"),
            common::outcome_count(&p, "ok"),
        );
        eprintln!("bug_trylock_poll_split under {algo}: assert {bugs}/{TRIES}, ok {ok}/{TRIES}");
        assert!(
            bugs > 0 && bugs + ok == u64::from(TRIES),
            "{algo}: {}",
            common::text(&o)
        );
        let saved = p["schedule"].as_str().expect("a saved schedule");
        common::assert_replays(Path::new(saved), 20);
    }
}

/// Explored, a loop that polls under a mutex without yielding kept the turn to the step
/// limit in the first execution, and odpor and dpor ended after that one cut execution:
/// nothing explored, the publication race of `bug_lock_poll_publish.c` called correct
/// (probe 16). A poll repeated with no other thread's step between now lets the others run
/// first (`sched/src/explore/guide.rs`), so no execution is cut, the correct program is
/// never flagged, and the race is found and replays. Each poll races with the other
/// thread's lock, so both explorations run to their budget.
#[test]
fn lock_polling_loops_are_explored() {
    common::require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for &cc in common::C_COMPILERS {
        for (file, buggy) in [
            ("ok_lock_poll_handoff.c", false),
            ("bug_lock_poll_publish.c", true),
        ] {
            let prog = dir.path().join(format!("{cc}-{file}.inst"));
            let src = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/corpus/spin")
                .join(file);
            common::compile_instrumented(cc, "", &prog, &src);
            for algo in ["odpor", "dpor"] {
                let (v, o) = common::explore_mem(dir.path(), &prog, algo, 200);
                let what = format!("{cc} {file} under {algo}: {v}\n{}", common::text(&o));
                assert!(v["diverged"].is_null(), "{what}");
                assert_eq!(v["step_limits"].as_u64(), Some(0), "{what}");
                assert_eq!(v["executions"].as_u64(), Some(200), "{what}");
                let found = v["buggy"].as_u64().unwrap_or(0);
                assert_eq!(found > 0, buggy, "{what}");
                if buggy {
                    let schedule = v["bugs"][0]["schedule"].as_str().expect("saved");
                    common::assert_replays(Path::new(schedule), 20);
                }
            }
        }
    }
}
