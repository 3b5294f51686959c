//! Correct programs that use the C library's and the C++ standard library's less common
//! corners (`tests/corpus/stdlib/`), each once reported as a bug in every run: a once
//! control reused in heap memory (every `std::promise`, `std::async` and
//! `std::packaged_task` after the first), a signal blocked in every thread and taken by
//! `sigwait`, the error codes of an error-checking mutex, and a once control completed
//! before libpos took control (by a `.preinit_array` function; by a C++ library's static
//! initialiser through `std::call_once`), whose init ran again under control. They are never
//! flagged in 200 tries of rw, pct3, pos and auto, with gcc and clang-14 (g++ and
//! clang++-14), and they are scheduled (mean steps above their thread count); the early
//! once programs are explored by ODPOR without a bug too.
//!
//! Each test prints its figures (`--nocapture`).

use crate::common;

use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/stdlib")
}

/// Programs of the corpus linked with a shared library of the corpus (main, library).
const WITH_LIBRARY: &[(&str, &str)] = &[("once_early_main.cpp", "once_early_lib.cpp")];

/// Compile `file` of the corpus with `compiler` into `dir` (and its library of
/// [`WITH_LIBRARY`], found through its run path); returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let tag = compiler.replace('+', "x");
    let out = common::corpus_binary(dir, compiler, file);
    let std = common::corpus_std(compiler);
    let mut args = vec![std, "-O1", "-pthread"];
    let lib_dir = dir.join(format!("lib_{tag}"));
    let (so, link);
    if let Some((_, lib)) = WITH_LIBRARY.iter().find(|(main, _)| *main == file) {
        std::fs::create_dir_all(&lib_dir).unwrap();
        so = lib_dir.join(format!("lib{}.so", lib.trim_end_matches(".cpp")));
        let lib_args = [std, "-O1", "-pthread", "-shared", "-fPIC"];
        common::compile(compiler, &lib_args, &so, &corpus().join(lib));
        link = format!("-Wl,-rpath,{}", lib_dir.display());
        // Before the program's source on the command line: kept even with --as-needed.
        args.extend(["-Wl,--no-as-needed", so.to_str().unwrap(), &link]);
    }
    common::compile(compiler, &args, &out, &corpus().join(file));
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
    (C, "once_early.c", 3),
    (CXX, "once_early_main.cpp", 3),
];

#[test]
fn correct_programs_on_library_corners_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// ODPOR explores the programs whose once control was completed before control without a
/// bug (gcc, g++): complete, every execution ok.
#[test]
fn odpor_never_runs_an_init_completed_before_control_again() {
    common::require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compiler, file) in [("gcc", "once_early.c"), ("g++", "once_early_main.cpp")] {
        let prog = build(dir.path(), compiler, file);
        let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
        assert_eq!(o.status.code(), Some(0), "{file}: {}", common::text(&o));
        assert_eq!(v["complete"], true, "{file}: {v}");
        assert_eq!(v["buggy"].as_u64(), Some(0), "{file}: {v}");
    }
}
