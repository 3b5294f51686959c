//! The ptrace backend (`runner/src/exec/ptrace/`): statically linked programs (glibc with
//! `gcc -static`, musl with `musl-gcc -static`), and a dynamically linked one with
//! `--backend ptrace`, from `tests/ptrace/`.
//!
//! - A lost update with `sched_yield` in its window is found by rw, pct3 and pos within 200
//!   tries and its saved schedule replays 20 of 20 times.
//! - A correct program with a contended mutex and a condition variable is never flagged.
//! - A lock-order inversion is a `deadlock` that names both threads and both mutexes.
//! - A crash in a thread is blamed on that thread, with the function.
//! - A program that forks or calls ptrace itself ends with a clear `error`, and nothing of
//!   any run is left running.
//! - The same seed gives the same schedule.

use crate::common;

use common::{outcome_count, run_report, text, POSCHECK};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the programs are built: one directory for this test file.
fn build_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ptrace_backend");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `tool --version` runs; the test says so and skips that compiler otherwise
/// (`scripts/install-deps.sh` installs musl-tools).
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

/// `tests/ptrace/NAME.c` built with `cc` (`-static` unless `dynamic`), once per name.
fn build(cc: &str, name: &str, dynamic: bool) -> PathBuf {
    build_from(cc, "ptrace", &format!("{name}.c"), dynamic)
}

/// `tests/DIR/FILE` built with `cc` (`-static` unless `dynamic`), once per file.
fn build_from(cc: &str, dir: &str, file: &str, dynamic: bool) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let kind = if dynamic { "dyn" } else { "static" };
    let name = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let bin = build_dir().join(format!("{name}_{}_{kind}", cc.replace(['-', '+'], "_")));
    if bin.is_file() {
        return bin;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests")
        .join(dir)
        .join(file);
    let mut cmd = Command::new(cc);
    if cc.ends_with("++") {
        cmd.arg("-std=c++20");
    }
    if !dynamic {
        cmd.arg("-static");
    }
    let o = cmd
        .args(["-O1", "-g", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{cc} {name}: {}", text(&o));
    bin
}

/// The static compilers available: gcc (glibc) always, musl-gcc when installed.
fn compilers() -> Vec<&'static str> {
    let mut v = vec!["gcc"];
    if have("musl-gcc") {
        v.push("musl-gcc");
    }
    v
}

/// The processes running `bin` (by their executable), to check none is left.
fn running(bin: &Path) -> Vec<String> {
    let mut left = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let exe = e.path().join("exe");
        if std::fs::read_link(&exe).is_ok_and(|p| p == bin) {
            left.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    left
}

#[test]
fn a_static_lost_update_is_found_by_rw_pct3_and_pos_and_replays() {
    for cc in compilers() {
        let bin = build(cc, "lost_update", false);
        for algo in ["rw", "pct3", "pos"] {
            let (p, saved, o) = run_report(
                &bin,
                &[
                    "--algo", algo, "--tries", "200", "--seed", "1", "--jobs", "2",
                ],
            );
            assert_eq!(p["backend"], "ptrace", "{cc} {algo}: auto picks ptrace");
            assert!(
                outcome_count(&p, "assert") > 0,
                "{cc} {algo}: not found: {}",
                text(&o)
            );
            assert_eq!(
                p["hits"],
                outcome_count(&p, "assert"),
                "{cc} {algo}: only the assertion: {p}"
            );
            let saved = saved.unwrap_or_else(|| panic!("{cc} {algo}: no schedule saved"));
            let sched = std::fs::read_to_string(&saved).unwrap();
            assert!(sched.contains("\"backend\": \"ptrace\""), "{sched}");
            // The runs are scheduled at their system calls: creates, starts, yields.
            assert!(sched.contains("\"yield\""), "{sched}");
            if algo == "rw" {
                common::assert_replays(&saved, 20);
            }
        }
    }
}

#[test]
fn a_static_correct_program_with_a_contended_mutex_and_condvar_is_never_flagged() {
    for cc in compilers() {
        let bin = build(cc, "mutex_cond_ok", false);
        for algo in ["rw", "pct3", "pos"] {
            let (p, _, o) = run_report(
                &bin,
                &[
                    "--algo", algo, "--tries", "300", "--seed", "2", "--jobs", "2",
                ],
            );
            assert_eq!(p["hits"], 0, "{cc} {algo}: flagged: {}", text(&o));
            assert_eq!(outcome_count(&p, "ok"), 300, "{cc} {algo}: {p}");
            assert!(p.get("partial").is_none(), "{cc} {algo}: {p}");
            // Contended: futex waits and wakes are scheduled, well beyond the creates,
            // starts, yields and exits of the 4 workers.
            let steps = p["mean_steps"].as_f64().unwrap();
            assert!(steps > 30.0, "{cc} {algo}: {steps} steps per run");
        }
    }
}

#[test]
fn a_static_lock_order_inversion_is_a_deadlock_naming_threads_and_mutexes() {
    for cc in compilers() {
        let bin = build(cc, "lock_order", false);
        let (p, saved, o) = run_report(
            &bin,
            &[
                "--algo", "rw", "--tries", "100", "--seed", "1", "--jobs", "2",
            ],
        );
        assert!(outcome_count(&p, "deadlock") > 0, "{cc}: {}", text(&o));
        let first = p["first_outcome"]["report"].to_string();
        for needle in ["0.1", "0.2", "futex_wait", "lock_a", "lock_b"] {
            assert!(first.contains(needle), "{cc}: {needle} not in {first}");
        }
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("deadlock: thread"), "{out}");
        common::assert_replays(&saved.unwrap(), 20);
        assert!(running(&bin).is_empty(), "{cc}: left running");
    }
}

#[test]
fn a_crash_in_a_thread_is_blamed_on_it() {
    for cc in compilers() {
        let bin = build(cc, "crash_thread", false);
        let (p, _, o) = run_report(&bin, &["--algo", "pos", "--tries", "5", "--seed", "1"]);
        assert_eq!(outcome_count(&p, "crash"), 5, "{cc}: {}", text(&o));
        let c = &p["first_outcome"];
        assert_eq!(c["signal"], 11, "{c}");
        assert_eq!(c["thread"], "0.1", "{c}");
        assert!(
            c["symbol"].as_str().unwrap_or("").starts_with("worker+"),
            "{c}"
        );
    }
}

#[test]
fn a_program_that_forks_or_traces_itself_is_a_clear_error_and_leaves_nothing() {
    for (name, needle) in [
        ("forks", "creates a process"),
        ("traceme", "calls ptrace(2)"),
    ] {
        let bin = build("gcc", name, false);
        let (p, _, o) = run_report(&bin, &["--algo", "rw", "--tries", "3", "--seed", "1"]);
        assert_eq!(outcome_count(&p, "error"), 3, "{name}: {}", text(&o));
        assert_eq!(p["hits"], 0, "{name}: an error is not a bug");
        let why = p["first_error"].as_str().unwrap_or_default();
        assert!(why.contains(needle), "{name}: {why}");
        assert!(running(&bin).is_empty(), "{name}: left running");
    }
}

#[test]
fn same_seed_same_schedule() {
    let bin = build("gcc", "mutex_cond_ok", false);
    let racy = build("gcc", "lost_update", false);
    for algo in ["rw", "pct3", "pos"] {
        let run = |b: &Path| {
            let (p, saved, _) = run_report(b, &["--algo", algo, "--tries", "40", "--seed", "9"]);
            let steps = saved.map(|s| {
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(s).unwrap()).unwrap();
                v["steps"].clone()
            });
            (p["outcomes"].clone(), p["mean_steps"].clone(), steps)
        };
        assert_eq!(run(&bin), run(&bin), "{algo}: correct program");
        let (a, b) = (run(&racy), run(&racy));
        assert!(a.2.is_some(), "{algo}: the lost update is found");
        assert_eq!(a, b, "{algo}: racy program");
    }
}

#[test]
fn a_dynamic_program_runs_under_backend_ptrace_and_replays_with_it() {
    let bin = build("gcc", "lost_update", true);
    let (p, saved, o) = run_report(
        &bin,
        &[
            "--backend",
            "ptrace",
            "--algo",
            "rw",
            "--tries",
            "100",
            "--seed",
            "1",
        ],
    );
    assert_eq!(p["backend"], "ptrace", "{}", text(&o));
    assert!(outcome_count(&p, "assert") > 0, "{}", text(&o));
    // `replay` (backend auto) takes the recorded backend: the preload backend would see
    // other scheduling points and diverge.
    common::assert_replays(&saved.unwrap(), 10);
    // The breakpoints go into the C library once the loader has mapped it.
    let bin = build("gcc", "lock_order_plain", true);
    let (p, saved, o) = run_report(
        &bin,
        &[
            "--backend",
            "ptrace",
            "--algo",
            "pos",
            "--tries",
            "200",
            "--seed",
            "1",
        ],
    );
    assert!(outcome_count(&p, "deadlock") > 0, "{}", text(&o));
    common::assert_replays(&saved.unwrap(), 10);
}

#[test]
fn what_the_ptrace_backend_cannot_do_is_refused_in_one_line() {
    let bin = build("gcc", "lost_update", false);
    let b = bin.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["run", "--points", "mem", "--tries", "1", b],
            "not available with the ptrace backend",
        ),
        (
            vec!["run", "--backend", "preload", "--tries", "1", b],
            "statically linked",
        ),
        (
            vec!["run", "--backend", "nope", "--tries", "1", b],
            "--backend must be",
        ),
    ] {
        let o = Command::new(POSCHECK).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn correct_programs_of_the_futex_time_and_blocking_corpora_built_static_are_never_flagged() {
    // Condition variables with timeouts, C++20 atomic waits, semaphores, latches, barriers,
    // shared mutexes, stop tokens, hand-written futex locks and requeues, sleeps, and a
    // spin-wait on a flag (set aside as in the preload backend: partial, never a hang).
    let programs = [
        ("gcc", "corpus/futex", "ok_futex_mutex.c"),
        ("gcc", "corpus/futex", "ok_futex_requeue_cond.c"),
        ("g++", "corpus/futex", "ok_cxx_atomic_wait.cpp"),
        ("g++", "corpus/futex", "ok_cxx_jthread_stop.cpp"),
        ("g++", "corpus/futex", "ok_cxx_sem_latch_barrier.cpp"),
        ("g++", "corpus/futex", "ok_cxx_shared_mutex.cpp"),
        ("gcc", "corpus/vtime", "ok_cond_poll.c"),
        ("gcc", "corpus/vtime", "ok_deadlock_broken_by_timeout.c"),
        ("gcc", "corpus/vtime", "ok_sleep_handoff.c"),
        ("gcc", "corpus/vtime", "ok_timed_objects.c"),
        ("g++", "corpus/vtime", "ok_cxx_timed.cpp"),
        ("gcc", "corpus/blocked", "spin_flag.c"),
    ];
    for (cc, dir, file) in programs {
        let bin = build_from(cc, dir, file, false);
        for algo in ["rw", "pos"] {
            let (p, _, o) = run_report(
                &bin,
                &[
                    "--algo", algo, "--tries", "30", "--seed", "4", "--jobs", "2",
                ],
            );
            assert_eq!(p["backend"], "ptrace", "{file}");
            assert_eq!(p["hits"], 0, "{file} {algo}: flagged: {}", text(&o));
            assert_eq!(outcome_count(&p, "ok"), 30, "{file} {algo}: {p}");
        }
    }
}

#[test]
fn breakpoints_at_lock_calls_find_an_inversion_with_no_system_call_in_its_window() {
    for cc in compilers() {
        let bin = build(cc, "lock_order_plain", false);
        let (p, saved, o) = run_report(
            &bin,
            &[
                "--algo", "pos", "--tries", "200", "--seed", "1", "--jobs", "2",
            ],
        );
        assert!(outcome_count(&p, "deadlock") > 0, "{cc}: {}", text(&o));
        let first = p["first_outcome"]["report"].to_string();
        for needle in ["0.1", "0.2", "first", "second"] {
            assert!(first.contains(needle), "{cc}: {needle} not in {first}");
        }
        let saved = saved.unwrap();
        let sched = std::fs::read_to_string(&saved).unwrap();
        assert!(sched.contains("\"call_points\": true"), "{sched}");
        common::assert_replays(&saved, 20);
        // System-call points only: each thread takes and releases both locks at once.
        let (p, _, o) = run_report(
            &bin,
            &[
                "--syscall-points-only",
                "--algo",
                "pos",
                "--tries",
                "200",
                "--seed",
                "1",
                "--jobs",
                "2",
            ],
        );
        assert_eq!(p["hits"], 0, "{cc}: {}", text(&o));
    }
}

#[test]
fn nothing_survives_a_sigint_sigterm_or_kill_9_of_poscheck() {
    let bin = build("gcc", "spin_forever", false);
    for sig in ["-INT", "-TERM", "-KILL"] {
        let mut child = Command::new(POSCHECK)
            .args(["run", "--algo", "rw", "--tries", "100", "--jobs", "2"])
            .args(["--step-timeout", "60", "--seed", "1"])
            .arg(&bin)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the programs run (spinning under the tracer).
        let start = std::time::Instant::now();
        while running(&bin).is_empty() {
            assert!(start.elapsed().as_secs() < 30, "the program never started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let st = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let _ = child.wait().unwrap();
        let t = std::time::Instant::now();
        while !running(&bin).is_empty() && t.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            running(&bin).is_empty(),
            "{sig}: {:?} survived",
            running(&bin)
        );
    }
}

#[test]
fn a_set_user_id_program_is_refused_in_one_line() {
    use std::os::unix::fs::PermissionsExt;
    let bin = build("gcc", "lost_update", false);
    let copy = build_dir().join("lost_update_setuid");
    std::fs::copy(&bin, &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let o = Command::new(POSCHECK)
        .args(["run", "--algo", "rw", "--tries", "2"])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("set-user-ID"), "{err}");
    assert!(running(&copy).is_empty());
}
