//! Rust programs built with `poscheck rustc` (`tests/corpus/rust_mem/`). Rust's std takes an
//! uncontended `Mutex`, and every atomic, with inline atomic instructions: a plain `rustc`
//! build makes no call libpos sees between the two critical sections of a lost update, which
//! sampling never found (0 of 200 under pos, rw and pct3) and ODPOR called "complete" after
//! one execution. `poscheck rustc` builds with the thread sanitizer's instrumentation, whose
//! `__tsan_*` calls libpos implements: those accesses and atomics become scheduling points.
//!
//! Correct programs (Mutex, atomics with compare-exchange loops, Condvar queue, RwLock and
//! mpsc, scoped threads with OnceLock, a Release/Acquire flag) are never flagged in 100 tries
//! of rw, pct3, pos and auto; the three bugs are found by rw and pos and replay. An
//! exploration of a Rust program that finds no bug is never called complete: std's
//! precompiled code changes atomics that the traces do not hold.

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text, POSCHECK};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/rust_mem")
}

/// Build `file` with `poscheck rustc` (`compiler` "poscheck-rustc") or plain `rustc`.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let out = common::corpus_binary(dir, compiler, file);
    let src = corpus().join(file);
    let args = ["-O", "--edition", "2021"];
    if compiler == "rustc" {
        common::compile("rustc", &args, &out, &src);
        return out;
    }
    if compiler == "rustc-stripped" {
        // As distributions ship Rust programs: no symbol table.
        let stripped = ["-O", "--edition", "2021", "-C", "strip=symbols"];
        common::compile("rustc", &stripped, &out, &src);
        return out;
    }
    let o = std::process::Command::new(POSCHECK)
        .arg("rustc")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .expect("cannot run poscheck rustc");
    assert!(o.status.success(), "poscheck rustc {file}: {}", text(&o));
    out
}

const INSTRUMENTED: &[&str] = &["poscheck-rustc"];

/// (compilers, file, threads including main).
const CORRECT: &[(&[&str], &str, u32)] = &[
    (INSTRUMENTED, "ok_mutex_counter.rs", 4),
    (INSTRUMENTED, "ok_atomic_counter.rs", 4),
    (INSTRUMENTED, "ok_condvar_queue.rs", 3),
    (INSTRUMENTED, "ok_rwlock_mpsc.rs", 4),
    (INSTRUMENTED, "ok_scope_once.rs", 3),
    (INSTRUMENTED, "ok_flag_handoff.rs", 2),
];

const BUGGY: &[&str] = &[
    "bug_split_mutex.rs",
    "bug_atomic_load_store.rs",
    "bug_check_then_act.rs",
];

#[test]
fn correct_rust_programs_with_memory_points_are_never_flagged() {
    common::assert_all_never_flagged(CORRECT, build);
}

/// Each bug is a `panic` in some of 100 tries of rw and of pos, every other try ok; the
/// first one's saved schedule replays 20 of 20 times.
#[test]
fn rust_lost_updates_are_found_with_poscheck_rustc() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (i, file) in BUGGY.iter().enumerate() {
        let prog = build(dir.path(), "poscheck-rustc", file);
        for algo in ["rw", "pos"] {
            let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
            let (bugs, ok) = (outcome_count(&p, "panic"), outcome_count(&p, "ok"));
            eprintln!("{file} under {algo}: panic {bugs}/{TRIES}, ok {ok}/{TRIES}");
            assert!(
                bugs > 0 && bugs + ok == u64::from(TRIES),
                "{file} {algo}: {}",
                text(&o)
            );
        }
        if i == 0 {
            let (_, saved, o) = common::run_report(&prog, &["--algo", "pos", "--tries", "200"]);
            let saved = saved.unwrap_or_else(|| panic!("no saved schedule: {}", text(&o)));
            common::assert_replays(&saved, 20);
        }
    }
}

/// A schedule recorded without `RUST_BACKTRACE` replays from a shell that sets it: the
/// file records the variables that change how threads run, and `replay` sets them as they
/// were (capturing the panic's backtrace took locks the recorded run had not taken: the
/// replay diverged, probe 16).
#[test]
fn a_panic_schedule_replays_whatever_rust_backtrace_the_shell_sets() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "poscheck-rustc", "bug_split_mutex.rs");
    let out = dir.path().join("out");
    let o = std::process::Command::new(POSCHECK)
        .env_remove("RUST_BACKTRACE")
        .args([
            "run",
            "--algo",
            "pos",
            "--tries",
            "200",
            "--seed",
            "1",
            "--out-dir",
        ])
        .arg(&out)
        .arg(&prog)
        .output()
        .unwrap();
    let name = prog.file_name().unwrap().to_str().unwrap();
    let saved = out.join(format!("{name}.pos.seed1.json"));
    assert!(saved.is_file(), "{}", text(&o));
    for backtrace in ["1", "full"] {
        let r = std::process::Command::new(POSCHECK)
            .env("RUST_BACKTRACE", backtrace)
            .args(["replay", "--times", "20"])
            .arg(&saved)
            .output()
            .unwrap();
        let t = text(&r);
        assert!(
            t.contains("environment as recorded for RUST_BACKTRACE"),
            "{t}"
        );
        assert!(t.contains("reproduced 20 of 20"), "{backtrace}: {t}");
    }
}

/// A panic's schedule is minimised and traced. The first panic's unwinding made libgcc's
/// one-time `pthread_once` a step of the run, while `replay --trace` and `minimize` (which
/// walk the stack for caller pcs) had completed it before: "not minimised: the schedule does
/// not replay" for every panic, plain or instrumented. libpos now completes it before control.
#[test]
fn a_rust_panic_schedule_is_minimised_and_traced() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for compiler in ["rustc", "poscheck-rustc"] {
        let prog = if compiler == "rustc" {
            // A plain build's panic: the two-producer channel order, found at sync points.
            let src = dir.path().join("order.rs");
            std::fs::write(
                &src,
                "use std::sync::mpsc; use std::thread;\n\
                 fn main() { let (tx, rx) = mpsc::channel(); let t2 = tx.clone();\n\
                 let a = thread::spawn(move || tx.send(1).unwrap());\n\
                 let b = thread::spawn(move || t2.send(2).unwrap());\n\
                 a.join().unwrap(); b.join().unwrap();\n\
                 assert_eq!((rx.recv().unwrap(), rx.recv().unwrap()), (1, 2)); }\n",
            )
            .unwrap();
            let out = dir.path().join("order");
            common::compile("rustc", &["-O", "--edition", "2021"], &out, &src);
            out
        } else {
            build(dir.path(), compiler, "bug_split_mutex.rs")
        };
        let (p, saved, o) = common::run_report(&prog, &["--algo", "pos", "--tries", "200"]);
        assert!(outcome_count(&p, "panic") > 0, "{compiler}: {}", text(&o));
        let all = text(&o);
        assert!(
            all.lines().any(|l| l.starts_with("  minimised: ")),
            "{compiler}: not minimised: {all}"
        );
        let saved = saved.unwrap_or_else(|| panic!("no saved schedule: {all}"));
        let t = std::process::Command::new(POSCHECK)
            .env_remove("RUST_BACKTRACE")
            .args(["replay", "--trace"])
            .arg(&saved)
            .output()
            .unwrap();
        let tt = text(&t);
        assert!(!tt.contains("diverged"), "{compiler}: replay --trace: {tt}");
        assert!(tt.contains("panic"), "{compiler}: replay --trace: {tt}");
    }
}

/// ODPOR finds the atomic lost update; on the others, and on plain `rustc` builds (where a
/// Mutex is no point at all), a search without a bug ends "incomplete", never "complete",
/// stripped ones included (Rust std found from its source paths; before 2026-11-28 a stripped
/// build, as ripgrep ships, was called complete).
#[test]
fn an_exploration_of_a_rust_program_without_a_bug_is_not_called_complete() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "poscheck-rustc", "bug_atomic_load_store.rs");
    let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(v["buggy"].as_u64().unwrap_or(0) > 0, "{v}");
    for (compiler, file) in [
        ("poscheck-rustc", "ok_atomic_counter.rs"),
        ("rustc", "bug_split_mutex.rs"),
        ("rustc", "bug_check_then_act.rs"),
        ("rustc-stripped", "bug_check_then_act.rs"),
    ] {
        let prog = build(dir.path(), compiler, file);
        let (o, v) = common::explore_report(dir.path(), &prog, "odpor");
        assert_eq!(v["complete"], false, "{compiler} {file}: {v}");
        let stopped = v["stopped"].as_str().unwrap_or_default();
        assert!(
            stopped.starts_with("Rust std"),
            "{compiler} {file}: {}",
            text(&o)
        );
    }
}

/// A cargo project builds with `RUSTFLAGS="$(poscheck rustc --rustflags)"` (and
/// `RUSTC_BOOTSTRAP=1`, an explicit target), and its lost update is found.
#[test]
fn a_cargo_project_builds_with_the_printed_rustflags() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"split\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::copy(
        corpus().join("bug_split_mutex.rs"),
        dir.path().join("src/main.rs"),
    )
    .unwrap();
    let f = common::poscheck(&["rustc", "--rustflags"]);
    assert!(f.status.success(), "{}", text(&f));
    let flags = String::from_utf8_lossy(&f.stdout).trim().to_string();
    let target = "x86_64-unknown-linux-gnu";
    let o = std::process::Command::new("cargo")
        .args(["build", "--release", "--offline", "--target", target])
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", &flags)
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .current_dir(dir.path())
        .output()
        .expect("cannot run cargo");
    assert!(o.status.success(), "cargo build: {}", text(&o));
    let prog = dir.path().join("target").join(target).join("release/split");
    let (p, o) = common::run_default(dir.path(), &prog, "pos", &[], |_| {});
    assert!(outcome_count(&p, "panic") > 0, "{}", text(&o));
}

/// Bad input to `poscheck rustc` is one line and exit 2.
#[test]
fn poscheck_rustc_rejects_bad_input_in_one_line() {
    for args in [
        vec!["rustc"],
        vec!["rustc", "-C", "target-feature=+crt-static", "x.rs"],
    ] {
        let o = common::poscheck(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("poscheck: error: "), "{err}");
    }
}
