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

use std::path::{Path, PathBuf};

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
    let std = if compiler.contains("++") {
        "-std=c++17"
    } else {
        "-std=gnu11"
    };
    common::compile(
        compiler,
        &[std, "-O1", "-pthread"],
        &out,
        &corpus().join(file),
    );
    out
}

const C: &[&str] = common::C_COMPILERS;
const CXX: &[&str] = common::CXX_COMPILERS;

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (C, "once_reuse.c", 3),
    (C, "sigwait.c", 2),
    (C, "errcheck_trylock.c", 2),
    (CXX, "futures.cpp", 3),
];

#[test]
fn correct_programs_on_library_corners_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}
