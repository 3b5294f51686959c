//! The GLib corpus (`tests/corpus/glib/`): programs on GLib's `GMutex`, `GCond`,
//! `GThreadPool`, `GAsyncQueue` and `GOnce`, in C, in C++ (g++ and clang++-14, an RAII guard
//! over `GMutex` and `std::thread`) and in Rust (FFI declarations, as `glib-sys`).
//! `g_mutex_*` and `g_cond_*` are scheduling points (`preload/src/glib.rs`): an ABBA
//! deadlock, a `g_cond_wait` without a predicate and an increment split across two lock
//! sections are found by sampling and by `explore`, and replay; before 2026-11-28 an
//! uncontended `GMutex` made no system call and none of them was ever found (0 of 200 tries
//! of rw, pct3 and pos each). The correct programs are never flagged.

use crate::common;

use common::{outcome_count, poscheck, require_libpos, text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `pkg-config`'s flags for GLib (compile and link).
fn glib_flags() -> Vec<String> {
    let o = Command::new("pkg-config")
        .args(["--cflags", "--libs", "glib-2.0"])
        .output()
        .expect("pkg-config (scripts/install-deps.sh installs libglib2.0-dev)");
    assert!(o.status.success(), "pkg-config glib-2.0: {}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Compile `file` of the corpus with `compiler` into `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/glib")
        .join(file);
    let out = common::corpus_binary(dir, compiler, file);
    let mut cmd = Command::new(compiler);
    if compiler == "rustc" {
        cmd.args(["-O", "--edition", "2021"]);
    } else {
        cmd.args([common::corpus_std(compiler), "-O1", "-pthread"]);
    }
    cmd.arg("-o").arg(&out).arg(&src);
    if compiler != "rustc" {
        cmd.args(glib_flags());
    }
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (scripts/install-deps.sh): {e}"));
    assert!(o.status.success(), "{compiler} {file}: {}", text(&o));
    out
}

#[test]
fn correct_glib_programs_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (cc, file) in [
        ("gcc", "ok_gmutex_queue.c"),
        ("gcc", "ok_gthread_pool.c"),
        ("g++", "ok_gmutex_cxx.cpp"),
        ("clang++-14", "ok_gmutex_cxx.cpp"),
        ("rustc", "ok_glib_ffi.rs"),
    ] {
        let prog = build(d, cc, file);
        for algo in common::ALGOS {
            let (p, o) = common::run_tries(d, &prog, algo, 100, &[], |_| {});
            assert_eq!(
                outcome_count(&p, "ok"),
                100,
                "{cc} {file} {algo}: {}",
                text(&o)
            );
        }
        // An exploration's executions are never buggy either (it is cut at 200: the
        // contention paths inside GLib make the queue's tree large).
        let o = poscheck(&[
            "explore",
            "--algo",
            "odpor",
            "--max-executions",
            "200",
            "--out-dir",
            d.join("explore").to_str().unwrap(),
            prog.to_str().unwrap(),
        ]);
        assert!(
            text(&o).contains("buggy executions: 0"),
            "{cc} {file}: {}",
            text(&o)
        );
    }
}

/// A program without GLib that loads a GLib plugin with `dlopen(RTLD_LOCAL)`: GLib is
/// found all the same, and the plugin's `GMutex` calls are points (before 2026-11-28 the
/// first one stopped the program: `cannot find the real g_mutex_lock`, an `error`).
#[test]
fn a_glib_plugin_loaded_with_rtld_local_is_scheduled_not_stopped() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/glib");
    let plugin = d.join("plugin_counter.so");
    let o = Command::new("gcc")
        .args(["-O1", "-shared", "-fPIC", "-o"])
        .arg(&plugin)
        .arg(src.join("plugin_counter.c"))
        .args(glib_flags())
        .output()
        .expect("gcc");
    assert!(o.status.success(), "plugin: {}", text(&o));
    let prog = d.join("ok_glib_plugin");
    let o = Command::new("gcc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&prog)
        .arg(src.join("ok_glib_plugin.c"))
        .arg("-ldl")
        .output()
        .expect("gcc");
    assert!(o.status.success(), "program: {}", text(&o));
    for algo in ["rw", "pos"] {
        let (p, o) = common::run_tries(d, &prog, algo, 30, &[], |c| {
            c.arg("--").arg(&plugin);
        });
        assert_eq!(outcome_count(&p, "ok"), 30, "{algo}: {}", text(&o));
        // The plugin's six lock and unlock calls are steps, beside the threads' own.
        let steps = p["mean_steps"].as_f64().unwrap_or(0.0);
        assert!(steps >= 10.0, "{algo}: {steps} steps: {}", text(&o));
    }
}

#[test]
fn glib_lock_and_condition_bugs_are_found_and_replay() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (file, kind) in [
        ("bug_gmutex_abba.c", "deadlock"),
        ("bug_gcond_no_predicate.c", "deadlock"),
        // g_assert_cmpint's report is read as an assertion, not as an abort.
        ("bug_gmutex_split.c", "assert"),
    ] {
        let prog = build(d, "gcc", file);
        for algo in ["rw", "pct3", "pos"] {
            let (p, o) = common::run_tries(d, &prog, algo, 100, &[], |_| {});
            let hits = outcome_count(&p, kind);
            eprintln!("{file} {algo}: {kind} {hits}/100");
            assert!(hits > 0, "{file} {algo}: {}", text(&o));
            assert_eq!(
                hits + outcome_count(&p, "ok"),
                100,
                "{file} {algo}: {}",
                text(&o)
            );
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let r = poscheck(&["replay", "--times", "20", schedule]);
            assert!(
                text(&r).contains(&format!(
                    "recorded outcome {kind}: reproduced 20 of 20 times"
                )),
                "{file} {algo}: {}",
                text(&r)
            );
        }
        let (o, v) = common::explore_report(d, &prog, "odpor");
        assert_eq!(o.status.code(), Some(1), "{file}: {}", text(&o));
        assert!(v["buggy"].as_u64().unwrap_or(0) >= 1, "{file}: {v}");
    }
}
