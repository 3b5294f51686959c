//! The sanitizer corpus (`tests/corpus/sanitizers/`): programs built as nightly sanitizer
//! builds are, with gcc and clang-14 (C) and g++ and clang++-14 (C++), `-fsanitize=address`
//! or `-fsanitize=thread`. gcc links the sanitizer runtimes as shared libraries, which the
//! runner puts before libpos in `LD_PRELOAD`; clang links them into the executable, whose
//! runtime code libpos then does not trap. LeakSanitizer's exit check does not see libpos's
//! own blocks as leaks, and its tracer's futexes are not the program's.
//!
//! Before 2026-11-28 a gcc AddressSanitizer build was an error in every run (its runtime
//! refused to start behind libpos), a gcc ThreadSanitizer build crashed or hung most runs,
//! and LeakSanitizer reported libpos's blocks as leaks; the correct programs here are now
//! never flagged in rw, pct3, pos and auto (60 tries, 15 for ThreadSanitizer builds). A use after free that needs one
//! preemption is found by AddressSanitizer's report, and its schedule replays.

use crate::common;

use common::{outcome_count, require_libpos, text};
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/sanitizers")
}

/// Build `file` with `compiler` and `-fsanitize=<sanitizer>` into `dir`.
fn build(dir: &Path, compiler: &str, sanitizer: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_{}_{sanitizer}", compiler.replace('+', "x")));
    let mut cmd = Command::new(compiler);
    if file.ends_with(".cpp") {
        cmd.arg("-std=c++20");
    }
    let o = cmd
        .args(["-O1", "-g", "-pthread"])
        .arg(format!("-fsanitize={sanitizer}"))
        .arg("-o")
        .arg(&out)
        .arg(corpus().join(file))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (scripts/install-deps.sh): {e}"));
    assert!(
        o.status.success(),
        "{compiler} -fsanitize={sanitizer} {file}: {}",
        text(&o)
    );
    out
}

#[test]
fn correct_sanitizer_builds_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A ThreadSanitizer run takes about ten times an AddressSanitizer one: fewer tries.
    let progs = [
        (build(d, "gcc", "address", "ok_counter.c"), 60),
        (build(d, "clang-14", "address", "ok_counter.c"), 60),
        (build(d, "g++", "address", "ok_queue.cpp"), 60),
        (build(d, "clang++-14", "address", "ok_queue.cpp"), 60),
        (build(d, "gcc", "thread", "ok_counter.c"), 15),
        (build(d, "clang-14", "thread", "ok_counter.c"), 15),
    ];
    for (prog, tries) in &progs {
        for algo in common::ALGOS {
            let (p, o) = common::run_tries(d, prog, algo, *tries, &[], |_| {});
            assert_eq!(
                outcome_count(&p, "ok"),
                u64::from(*tries),
                "{} {algo}: {}",
                prog.display(),
                text(&o)
            );
        }
    }
}

#[test]
fn a_use_after_free_race_is_reported_by_addresssanitizer_and_replays() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prog = build(d, "gcc", "address", "bug_use_after_free.c");
    // Reports without symbolised stacks: a symbolised one takes 0.4 s.
    let quick = ("ASAN_OPTIONS", "symbolize=0");
    for algo in ["rw", "pct3", "pos"] {
        let (p, o) = common::run_tries(d, &prog, algo, 100, &[], |c| {
            c.env(quick.0, quick.1);
        });
        let hits = outcome_count(&p, "exit-code");
        assert!(hits > 0, "{algo}: {}", text(&o));
        assert_eq!(hits + outcome_count(&p, "ok"), 100, "{algo}: {}", text(&o));
        assert!(
            text(&o).contains("AddressSanitizer: heap-use-after-free"),
            "{algo}: {}",
            text(&o)
        );
        if algo == "pos" {
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let r = Command::new(common::POSCHECK)
                .args(["replay", "--times", "20", schedule])
                .env(quick.0, quick.1)
                .output()
                .unwrap();
            assert!(
                text(&r).contains("recorded outcome exit-code: reproduced 20 of 20 times"),
                "{algo}: {}",
                text(&r)
            );
        }
    }
}
