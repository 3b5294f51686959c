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
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/limits")
}

/// Compile `file` of the corpus with `compiler` into `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_{}", compiler.replace('+', "x")));
    let mut cmd = Command::new(compiler);
    match compiler {
        "rustc" => cmd.args(["-O", "--edition", "2021"]),
        "gcc" if file.contains("omp") => cmd.args(["-O1", "-pthread", "-fopenmp"]),
        "gcc" => cmd.args(["-O1", "-pthread"]),
        _ => cmd.args(["-std=c++20", "-O1", "-pthread"]),
    };
    let o = cmd
        .arg("-o")
        .arg(&out)
        .arg(corpus().join(file))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (scripts/install-deps.sh): {e}"));
    assert!(o.status.success(), "{compiler} {file}: {}", text(&o));
    out
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
