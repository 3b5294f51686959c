//! Correct programs that use the C library's and the C++ standard library's less common
//! corners (`tests/corpus/stdlib/`), each once reported as a bug in every run: a once
//! control reused in heap memory (every `std::promise`, `std::async` and
//! `std::packaged_task` after the first), a signal blocked in every thread and taken by
//! `sigwait`, and the error codes of an error-checking mutex. They are never flagged in 200
//! tries of rw, pct3, pos and auto, with gcc and clang-14 (g++ and clang++-14), and they are
//! scheduled (mean steps above their thread count).
//!
//! Each test prints its figures (`--nocapture`).

mod common;

use common::{outcome_count, require_libpos, text};
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/stdlib")
}

/// Compile `file` of the corpus with `compiler` into `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let out = dir.join(format!(
        "{}_{}",
        file.replace('.', "_"),
        compiler.replace('+', "x")
    ));
    let mut cmd = Command::new(compiler);
    if compiler.contains("++") {
        cmd.arg("-std=c++17");
    }
    let o = cmd
        .args(["-O1", "-pthread", "-o"])
        .arg(&out)
        .arg(corpus().join(file))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (scripts/install-deps.sh): {e}"));
    assert!(o.status.success(), "{compiler} {file}: {}", text(&o));
    out
}

const C: &[&str] = &["gcc", "clang-14"];
const CXX: &[&str] = &["g++", "clang++-14"];

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "once_reuse.c", 3),
    (C, "sigwait.c", 2),
    (C, "errcheck_trylock.c", 2),
    (CXX, "futures.cpp", 3),
];

#[test]
fn correct_programs_on_library_corners_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, threads) in CORRECT {
        for cc in *compilers {
            let prog = build(dir.path(), cc, file);
            for algo in common::ALGOS {
                let (p, o) = common::run_200(dir.path(), &prog, algo, &[], |_| {});
                let what = format!("{cc} {file} under {algo}");
                let steps = p["mean_steps"].as_f64().unwrap_or(0.0);
                eprintln!(
                    "correct {what}: ok {}/200, mean steps {steps:.1}",
                    outcome_count(&p, "ok")
                );
                assert_eq!(outcome_count(&p, "ok"), 200, "{what}: {}", text(&o));
                assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}: {p}");
                assert!(steps > f64::from(*threads), "{what}: scheduled? {p}");
            }
        }
    }
}
