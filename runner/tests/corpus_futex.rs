//! The futex corpus (`tests/corpus/futex/`): programs whose threads block in futex system
//! calls rather than in pthread functions — Rust's std (built with `rustc -O`), C++20's
//! atomic waits, semaphores, latches, barriers, jthread stop tokens and shared mutexes (built
//! with g++ and clang++-14), and hand-written futex code in C calling `syscall(SYS_futex)`
//! (wait, wake, requeue, wake-op, and PI operations that libpos does not model).
//!
//! Correct programs are never flagged in 100 tries of rw, pct3 and pos, no run takes the step
//! timeout or is set aside (`partial`), and each is scheduled at its futex operations (mean
//! steps per run well above its number of threads). Buggy ones are found in 100 tries and
//! their saved schedules replay 20 of 20 times; a Rust panic is reported as `panic` with its
//! message.
//! Built with `poscheck cc`/`c++`, the C and C++ ones are also explored by odpor and dpor with
//! memory points: no divergence, no false bug, every lost wake-up found.

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text, POSCHECK};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/futex")
}

/// Whether `tool --version` runs; the test says so and skips otherwise (install it with
/// `scripts/install-deps.sh`).
fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: {tool} is not installed (scripts/install-deps.sh installs it)");
    }
    ok
}

/// Compile `file` of the corpus with `compiler` into `dir`; returns the binary.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_{}", compiler.replace('+', "x")));
    let mut cmd = Command::new(compiler);
    match compiler {
        "rustc" => cmd.args(["-O", "--edition", "2021"]),
        "gcc" => cmd.args(["-O1", "-pthread"]),
        _ => cmd.args(["-std=c++20", "-O1", "-pthread"]),
    };
    let o = cmd
        .arg("-o")
        .arg(&out)
        .arg(corpus().join(file))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(o.status.success(), "{compiler} {file}: {}", text(&o));
    out
}

/// `poscheck` with `args`. Without `RUST_BACKTRACE`: a panicking Rust program then prints
/// its message only, not a symbolised backtrace (long CPU work after the bug, which a
/// loaded machine can stretch past the spin-wait limit, making the run `partial`).
fn poscheck(args: &[&str]) -> Output {
    Command::new(POSCHECK)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

/// `poscheck run` of [`common::TRIES`] tries with a JSON report ([`common::run_default`]), without
/// `RUST_BACKTRACE` (see [`poscheck`]).
fn run(dir: &Path, prog: &Path, algo: &str) -> (Value, Output) {
    common::run_default(dir, prog, algo, &[], |c| {
        c.env_remove("RUST_BACKTRACE");
    })
}

/// The compilers a file is built with, those missing left out (and said).
fn compilers(file: &str) -> Vec<&'static str> {
    let all: &[&str] = if file.ends_with(".rs") {
        &["rustc"]
    } else if file.ends_with(".cpp") {
        &["g++", "clang++-14"]
    } else {
        &["gcc"]
    };
    all.iter().copied().filter(|c| have(c)).collect()
}

/// Correct programs and their number of threads (main included).
const CORRECT: &[(&str, u32)] = &[
    ("mutex_yield_ok.rs", 4),
    ("std_sync_ok.rs", 3),
    ("ok_cxx_atomic_wait.cpp", 3),
    ("ok_cxx_sem_latch_barrier.cpp", 4),
    ("ok_cxx_jthread_stop.cpp", 2),
    ("ok_cxx_shared_mutex.cpp", 4),
    ("ok_futex_mutex.c", 4),
    ("ok_futex_requeue_cond.c", 4),
    // Passed to the kernel, FUTEX_WAKE_OP woke none of the waiters the model holds: a
    // false deadlock in 40 of 50 rw runs before it was modelled.
    ("ok_futex_wake_op.c", 4),
];

#[test]
fn correct_futex_programs_are_never_flagged_and_are_scheduled_at_their_futex_ops() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (file, threads) in CORRECT {
        for cc in compilers(file) {
            let prog = build(dir.path(), cc, file);
            for algo in common::ALGOS {
                let (p, o) = run(dir.path(), &prog, algo);
                let what = format!("{cc} {file} under {algo}: {p}\n{}", text(&o));
                assert_eq!(p["hits"], 0, "{what}");
                // No hang, no step limit: every run ended normally, none waited for the
                // step timeout, and none had a thread set aside outside control.
                assert_eq!(outcome_count(&p, "ok"), u64::from(TRIES), "{what}");
                assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}");
                assert_eq!(p["step_limits"].as_u64().unwrap_or(0), 0, "{what}");
                let steps = p["mean_steps"].as_f64().unwrap_or(0.0);
                assert!(
                    steps >= 4.0 * f64::from(*threads),
                    "not scheduled at its futex operations: {what}"
                );
                eprintln!("{cc} {file} {algo}: 0 bugs in {TRIES}, mean steps {steps}");
            }
        }
    }
}

/// PI futexes are not modelled: they run in the kernel, a thread blocked there is set aside
/// (the run is `partial`), and the correct program is neither buggy nor hung.
#[test]
fn unmodelled_pi_futexes_run_uncontrolled_without_false_alarms() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "ok_futex_pi.c");
    let mut partial = 0;
    for algo in common::ALGOS {
        let (p, o) = run(dir.path(), &prog, algo);
        let what = format!("ok_futex_pi.c under {algo}: {p}\n{}", text(&o));
        assert_eq!(p["hits"], 0, "{what}");
        assert_eq!(outcome_count(&p, "ok"), u64::from(TRIES), "{what}");
        partial += p["partial"].as_u64().unwrap_or(0);
    }
    assert!(partial > 0, "a contended PI lock blocks in the kernel");
    // Standalone, the unmodelled operation is named on stderr.
    let lib = require_libpos();
    let mut said = false;
    for seed in 1..=20 {
        let o = Command::new(&prog)
            .env("LD_PRELOAD", &lib)
            .env("POS_SEED", seed.to_string())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("FUTEX_LOCK_PI is not modelled") {
            assert_eq!(
                err.matches("FUTEX_LOCK_PI is").count(),
                1,
                "said once: {err}"
            );
            said = true;
            break;
        }
    }
    assert!(said, "FUTEX_LOCK_PI was never named in 20 standalone runs");
}

/// Buggy programs and their outcome.
const BUGGY: &[(&str, &str)] = &[
    ("atomic_lost_update.rs", "panic"),
    ("mutex_lock_order.rs", "deadlock"),
    ("bug_cxx_check_then_act.cpp", "assert"),
    ("bug_cxx_lock_order.cpp", "deadlock"),
    ("bug_futex_lost_wakeup.c", "deadlock"),
    ("bug_futex_requeue_relock.c", "deadlock"),
];

/// Replay `p`'s saved schedule 100 times; it must give `kind` every time.
fn assert_replays(p: &Value, kind: &str, what: &str) {
    let schedule = p["schedule"].as_str().expect("a saved schedule");
    let r = poscheck(&["replay", "--times", "20", schedule]);
    assert!(
        String::from_utf8_lossy(&r.stdout).contains(&format!(
            "recorded outcome {kind}: reproduced 20 of 20 times"
        )),
        "{what}: {}",
        text(&r)
    );
}

#[test]
fn buggy_futex_programs_are_found_and_replay() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (file, kind) in BUGGY {
        for cc in compilers(file) {
            let prog = build(dir.path(), cc, file);
            // The lost update between an atomic load and store is found by every sampling
            // strategy; the others by rw, pct3, pos and auto.
            let algos: &[&str] = if *file == "atomic_lost_update.rs" {
                &[
                    "rw", "pct3", "pos", "pos*", "basicpos", "rapos", "surw", "tapct3", "rff",
                    "auto",
                ]
            } else {
                common::ALGOS
            };
            for algo in algos {
                // 100 tries: each bug is found in tens of them
                let (p, o) = common::run_tries(dir.path(), &prog, algo, 100, &[], |c| {
                    c.env_remove("RUST_BACKTRACE");
                });
                let what = format!("{cc} {file} under {algo}: {p}\n{}", text(&o));
                assert!(outcome_count(&p, kind) > 0, "{what}");
                assert_eq!(
                    outcome_count(&p, kind) + outcome_count(&p, "ok"),
                    100,
                    "{what}"
                );
                assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}");
                if *kind == "panic" {
                    let first = &p["first_outcome"];
                    assert_eq!(first["kind"], "panic", "{what}");
                    let msg = first["message"].as_str().unwrap_or("");
                    assert!(msg.contains("lost update"), "{what}");
                }
                assert_replays(&p, kind, &what);
                eprintln!(
                    "{cc} {file} {algo}: {kind} in {} of 100",
                    outcome_count(&p, kind)
                );
            }
        }
    }
}

/// `poscheck cc` (C) or `poscheck c++` (C++) build of `file` over `compiler`: memory accesses
/// and atomics are points, and so is libpos' own read of a futex word before a wait.
fn build_instrumented(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_inst_{}", compiler.replace('+', "x")));
    common::compile_instrumented(compiler, "-std=c++20", &out, &corpus().join(file));
    out
}

/// Exploration with memory points of programs that sleep in futexes. A futex wait compares
/// its word and registers its waiter before the wait returns: that comparison is now a
/// point (an atomic load of the word), and the event before the wait depends on the other
/// threads' wakes of that futex. Before, odpor left its forced prefix on libstdc++'s
/// `atomic::wait` (a store before the comparison in one run, after it in the next: an
/// `EAGAIN` became a sleep) and on `FUTEX_WAKE_OP`, and odpor and dpor called the lost
/// wake-ups of `bug_futex_lost_wakeup.c` and `bug_cxx_notify_before_store.cpp` correct
/// after 3 and 35 executions. Now the correct programs are explored without a divergence
/// or a bug, odpor and dpor explore the same number of executions, and every lost wake-up
/// is found and replays.
#[test]
fn futex_programs_are_explored_with_memory_points_without_divergence() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    // (file, buggy, the exploration completes within 300 executions)
    let progs: &[(&str, bool, bool)] = &[
        ("ok_futex_store_then_wake.c", false, true),
        ("ok_futex_wake_op.c", false, true),
        ("ok_cxx_atomic_wait.cpp", false, false),
        ("bug_futex_wake_before_store.c", true, true),
        ("bug_futex_lost_wakeup.c", true, true),
        ("bug_cxx_notify_before_store.cpp", true, true),
    ];
    for &(file, buggy, completes) in progs {
        let ccs: &[&str] = if file.ends_with(".cpp") {
            &["g++", "clang++-14"]
        } else {
            &["gcc"]
        };
        for cc in ccs.iter().copied().filter(|c| have(c)) {
            let prog = build_instrumented(dir.path(), cc, file);
            let mut executions = Vec::new();
            for algo in ["odpor", "dpor"] {
                let (v, o) = common::explore_mem(dir.path(), &prog, algo, 300);
                let what = format!("{cc} {file} under {algo}: {v}\n{}", text(&o));
                assert!(v["diverged"].is_null(), "{what}");
                assert_eq!(v["complete"].as_bool(), Some(completes), "{what}");
                let found = v["buggy"].as_u64().unwrap_or(0);
                assert_eq!(found > 0, buggy, "{what}");
                assert_eq!(o.status.code(), Some(i32::from(buggy)), "{what}");
                if buggy {
                    let bug = &v["bugs"][0];
                    let desc = bug["description"].as_str().unwrap_or("");
                    assert!(
                        desc.contains("deadlock") && desc.contains("futex"),
                        "{what}"
                    );
                    let schedule = bug["schedule"].as_str().expect("saved");
                    let r = poscheck(&["replay", "--times", "20", schedule]);
                    assert!(
                        String::from_utf8_lossy(&r.stdout)
                            .contains("recorded outcome deadlock: reproduced 20 of 20 times"),
                        "{what}: {}",
                        text(&r)
                    );
                }
                executions.push(v["executions"].as_u64().unwrap_or(0));
                eprintln!(
                    "{cc} {file} {algo}: {} executions, {found} buggy",
                    executions.last().unwrap()
                );
            }
            if completes {
                assert_eq!(executions[0], executions[1], "{cc} {file}: odpor and dpor");
            }
        }
    }
}
