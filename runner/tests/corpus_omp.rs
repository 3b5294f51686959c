//! The OpenMP and raw-futex corpus (`tests/corpus/omp/`): libgomp blocks in inline futex
//! system calls, which libpos traps with its seccomp filter and models; its locks and
//! critical sections (`omp_*_lock`, `GOMP_critical_*`) libpos interposes as mutexes. Correct programs
//! are never flagged in 100 tries of rw, pct3 and pos (no run takes the step timeout, and
//! they are really scheduled: mean steps per run above the thread count); buggy ones are
//! found and their saved schedules replay 20 of 20 times.

use crate::common;

use common::TRIES;

use common::{outcome_count, require_libpos, text, POSCHECK};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Threads per OpenMP team (small: the test must stay fast on two cores).
const THREADS: &str = "3";

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/omp")
}

/// Whether `gcc -fopenmp` builds a program here (the test skips, saying so, if not).
fn have_openmp(dir: &Path) -> bool {
    let src = dir.join("probe.c");
    std::fs::write(
        &src,
        "#include <omp.h>\nint main(void){return omp_get_max_threads()<1;}\n",
    )
    .unwrap();
    let ok = Command::new("gcc")
        .args(["-fopenmp", "-o"])
        .arg(dir.join("probe"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: gcc -fopenmp cannot build a program here (libgomp missing)");
    }
    ok
}

/// Compile `file` of the corpus with `compiler` (OpenMP or pthreads) into `dir`.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_{}", compiler.replace('+', "x")));
    let o = Command::new(compiler)
        .args(["-O1", "-fopenmp", "-pthread", "-o"])
        .arg(&out)
        .arg(corpus().join(file))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(o.status.success(), "{compiler} {file}: {}", text(&o));
    out
}

fn poscheck(args: &[&str]) -> Output {
    Command::new(POSCHECK)
        .env("OMP_NUM_THREADS", THREADS)
        .args(args)
        .output()
        .unwrap()
}

/// `poscheck run` of [`common::TRIES`] tries with a JSON report ([`common::run_default`]), with
/// `OMP_NUM_THREADS` set.
fn run(dir: &Path, prog: &Path, algo: &str) -> (Value, Output) {
    common::run_default(dir, prog, algo, &[], |c| {
        c.env("OMP_NUM_THREADS", THREADS);
    })
}

/// Correct programs: (compiler, file, threads in the program).
const CORRECT: &[(&str, &str, f64)] = &[
    ("gcc", "critical_ok.c", 3.0),
    ("gcc", "reduction_ok.c", 3.0),
    ("gcc", "atomic_ok.c", 3.0),
    ("gcc", "tasks_ok.c", 3.0),
    ("gcc", "locks_ok.c", 3.0),
    ("g++", "vector_ok.cpp", 3.0),
    // Runs /bin/sh and /bin/echo: exec'd images inherit the filter and must live.
    ("gcc", "exec_ok.c", 3.0),
    // Forks a child running OpenMP (controlled there too: its futexes are modelled).
    ("gcc", "fork_ok.c", 3.0),
    // Blocks every signal and sets its own SIGSYS handler.
    ("gcc", "sigmask_ok.c", 3.0),
    // Not OpenMP: a futex lock made of inline syscall instructions.
    ("gcc", "raw_futex_ok.c", 4.0),
    // Runs itself with an empty environment (posix_spawn, fork + execve): libpos puts
    // itself back into the image's LD_PRELOAD, or the inherited filter kills it at its
    // first raw futex call (a false assert in 20 of 20 runs before).
    ("gcc", "spawn_cleared_env_ok.c", 1.0),
];

#[test]
fn correct_openmp_programs_are_scheduled_and_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    if !have_openmp(dir.path()) {
        return;
    }
    for (cc, file, threads) in CORRECT {
        let prog = build(dir.path(), cc, file);
        for algo in common::ALGOS {
            let (p, o) = run(dir.path(), &prog, algo);
            let what = format!("{cc} {file} under {algo}: {}", text(&o));
            assert_eq!(outcome_count(&p, "ok"), u64::from(TRIES), "{what}");
            assert_eq!(p["step_limits"].as_u64(), Some(0), "{what}");
            // Never set aside as blocked outside control (as every run was before libgomp's
            // futexes were trapped), except waiting for a child process in `waitpid`.
            if !file.starts_with("exec_")
                && !file.starts_with("fork_")
                && !file.starts_with("spawn_")
            {
                assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}");
            }
            let steps = p["mean_steps"].as_f64().unwrap();
            assert!(steps > *threads, "only {steps} steps per run: {what}");
            eprintln!("{cc} {file} {algo}: ok={TRIES} mean steps {steps}");
        }
    }
}

/// Buggy programs: (compiler, file, outcome).
const BUGGY: &[(&str, &str, &str)] = &[
    ("gcc", "lost_update_bug.c", "assert"),
    ("gcc", "order_bug.c", "assert"),
    ("gcc", "lock_order_bug.c", "deadlock"),
    ("gcc", "raw_futex_bug.c", "deadlock"),
    // Critical sections and OpenMP locks are scheduling points (libpos interposes them).
    ("gcc", "split_critical_bug.c", "assert"),
    ("gcc", "split_lock_bug.c", "assert"),
];

#[test]
fn buggy_openmp_programs_are_found_and_replay() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    if !have_openmp(dir.path()) {
        return;
    }
    for (cc, file, kind) in BUGGY {
        let prog = build(dir.path(), cc, file);
        for algo in common::ALGOS {
            let (p, o) = run(dir.path(), &prog, algo);
            let what = format!("{cc} {file} under {algo}: {}", text(&o));
            let hits = outcome_count(&p, kind);
            assert!(hits > 0, "{what}");
            assert_eq!(hits + outcome_count(&p, "ok"), u64::from(TRIES), "{what}");
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let r = poscheck(&["replay", "--times", "20", schedule]);
            assert!(
                String::from_utf8_lossy(&r.stdout).contains(&format!(
                    "recorded outcome {kind}: reproduced 20 of 20 times"
                )),
                "{cc} {file} {algo}: {}",
                text(&r)
            );
            eprintln!("{cc} {file} {algo}: {kind}={hits}/{TRIES}, replay 20/20");
        }
    }
}

#[test]
fn openmp_programs_get_no_pthread_warning() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    if !have_openmp(dir.path()) {
        return;
    }
    let prog = build(dir.path(), "gcc", "critical_ok.c");
    let o = poscheck(&["run", "--tries", "2", prog.to_str().unwrap()]);
    assert!(
        !text(&o).contains("imports no pthread function"),
        "{}",
        text(&o)
    );
}

/// ODPOR finds the order bug and the split critical section: OpenMP's team threads sleep in
/// a futex until the team starts, and replays posted those waits only when they returned,
/// after the wake that woke them in the run, so every reversal past the team's start was
/// judged infeasible: 1 execution, no bug, "complete", for any OpenMP program. The first
/// bug's saved schedule replays 20 of 20 times (it once stopped at the team's first futex
/// wait, 4 steps, for `atomic_window_bug.c`).
#[test]
fn odpor_reorders_what_openmp_threads_do_after_the_team_starts() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    if !have_openmp(dir.path()) {
        return;
    }
    for file in ["order_bug.c", "split_critical_bug.c", "atomic_window_bug.c"] {
        let prog = build(dir.path(), "gcc", file);
        let o = poscheck(&[
            "explore",
            "--algo",
            "odpor",
            "--out-dir",
            dir.path().join("explore").to_str().unwrap(),
            prog.to_str().unwrap(),
        ]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(1), "{file}: {out}");
        assert!(out.contains("exploration: complete"), "{file}: {out}");
        let executions = out
            .lines()
            .find_map(|l| l.strip_prefix("executions explored: "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
        assert!(executions > 1, "{file}: {out}");
        let schedule = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("schedule: "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("{file}: no bug schedule: {out}"));
        let r = poscheck(&["replay", "--times", "20", schedule]);
        assert!(
            String::from_utf8_lossy(&r.stdout).contains("reproduced 20 of 20 times"),
            "{file}: {}",
            text(&r)
        );
        eprintln!("odpor {file}: {executions} executions, its bug replays 100/100");
    }
}

/// A doacross loop (`ordered depend(sink)`): libgomp's sink wait spins on memory, so each
/// thread tells the coordinator at its first wait that it goes on outside control and is
/// set aside at once: two episodes per run, deterministically (before, one thread at a time
/// was set aside after a quarter of the step timeout of spinning, and with two runs at once
/// on two cores a third of the runs of a 500-iteration loop were a `hang`, probe 19). The
/// buggy program's lost update after the loop, in critical sections, is still found.
#[test]
fn doacross_waits_are_set_aside_at_once_and_bugs_after_them_are_found() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    if !have_openmp(dir.path()) {
        return;
    }
    let ok = build(dir.path(), "gcc", "doacross_ok.c");
    let bug = build(dir.path(), "gcc", "doacross_then_split_bug.c");
    // One run at a time: two runs of two spinning threads on two cores take turns with the
    // kernel's time slices (about 0.3 s a run instead of a few ms).
    let run = |prog: &Path, algo: &str| {
        let json = dir.path().join(format!("doacross-{algo}.json"));
        let out = dir.path().join("out");
        let o = poscheck(&[
            "run",
            "--out-dir",
            out.to_str().unwrap(),
            "--algo",
            algo,
            "--tries",
            "40",
            "--seed",
            "1",
            "--jobs",
            "1",
            "--no-minimize",
            "--json",
            json.to_str().unwrap(),
            prog.to_str().unwrap(),
        ]);
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("{}", text(&o))),
        )
        .unwrap();
        (v["programs"][0].clone(), o)
    };
    for algo in ["rw", "pct3", "pos"] {
        let (p, o) = run(&ok, algo);
        let what = format!("doacross_ok under {algo}: {}", text(&o));
        assert_eq!(outcome_count(&p, "ok"), 40, "{what}");
        assert_eq!(p["outside_episodes"].as_u64(), Some(80), "{what}");
        let (p, o) = run(&bug, algo);
        let what = format!("doacross_then_split_bug under {algo}: {}", text(&o));
        let hits = outcome_count(&p, "assert");
        assert!(hits > 0, "{what}");
        assert_eq!(hits + outcome_count(&p, "ok"), 40, "{what}");
    }
}
