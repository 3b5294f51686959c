//! Runs decided in the program (the baton transport, the default; issue 15) against runs
//! decided by the runner over the socket (`--transport socket`): same seed, same decisions.
//! Sampling on the C programs of `tests/c/` (every outcome kind: ok, assert, deadlock,
//! crash, abort, a forked child, a thread's own exit) and exploration of `tests/c/explore/`
//! must give the same hits, outcome counts, mean steps, first hits and saved schedules, and
//! the same execution counts and bugs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common;

use common::{text, POSCHECK};

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("transport")
}

/// `tests/c/NAME.c` built with gcc (sampling) once per test binary.
fn c_program(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        common::require_libpos();
        let d = scratch().join("bin");
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    let out = dir.join(name);
    if !out.exists() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/c/{name}.c"));
        let st = Command::new("gcc")
            .args(["-O1", "-g", "-pthread", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .expect("gcc is needed");
        assert!(st.success(), "gcc failed on {}", src.display());
    }
    out
}

/// `poscheck ARGS --json DIR/r.json --out-dir DIR/out TAIL` (`TAIL`: the program and its
/// arguments) run in the fresh directory `dir` (exit 0, or 1 for bugs found); its JSON
/// report.
fn poscheck_json(dir: &Path, args: &[&str], tail: &[&str]) -> Value {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let json = dir.join("r.json");
    let o = Command::new(POSCHECK)
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--out-dir")
        .arg(dir.join("out"))
        .args(tail)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        text(&o)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// `poscheck run` of `prog` under `algo` with `transport`; the program's JSON entry and
/// the saved first-bug schedule's steps as (thread, operation name) pairs.
fn sample(
    prog: &Path,
    prog_args: &[&str],
    algo: &str,
    transport: &str,
) -> (Value, Vec<(String, String)>) {
    let dir = scratch().join(format!(
        "{}{}-{}-{transport}",
        prog.file_name().unwrap().to_string_lossy(),
        prog_args.concat(),
        algo.replace('*', "star")
    ));
    let args = [
        "run",
        "--algo",
        algo,
        "--tries",
        "40",
        "--seed",
        "7",
        "--jobs",
        "1",
        "--no-minimize",
        "--step-timeout",
        "2",
        "--transport",
        transport,
    ];
    let tail: Vec<&str> = [prog.to_str().unwrap(), "--"]
        .into_iter()
        .chain(prog_args.iter().copied())
        .collect();
    let r = poscheck_json(&dir, &args, &tail);
    let p = r["programs"][0].clone();
    let steps = match p["schedule"].as_str() {
        Some(s) => {
            let path = if Path::new(s).is_absolute() {
                PathBuf::from(s)
            } else {
                dir.join(s)
            };
            let sched: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            sched["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    let op = s["op"].as_str().unwrap();
                    let name = op.split('(').next().unwrap().to_string();
                    (s["thread"].as_str().unwrap().to_string(), name)
                })
                .collect()
        }
        None => Vec::new(),
    };
    (p, steps)
}

#[test]
fn runs_decided_in_the_program_are_the_runs_decided_over_the_socket() {
    let programs = [
        "counter_racy",
        "counter_mutex",
        "lost_wakeup",
        "lock_order",
        "segfault",
        "do_abort",
        "heap_locks",
        "forker",
        "thread_exit",
        "sem_prodcons",
        "rwlock",
        "timedlock",
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (i, name) in programs.into_iter().enumerate() {
        let prog = c_program(name);
        // `auto` mixes both: its pos, pct3 and rapos tries are decided in the program, its
        // surw and rff tries (a profile, a corpus) over the socket.
        let algos: &[&str] = if i < 3 {
            &["pos", "rw", "pct3", "auto"]
        } else {
            &["pos", "rw", "pct3"]
        };
        for &algo in algos {
            let (b, bs) = sample(&prog, &[], algo, "baton");
            let (s, ss) = sample(&prog, &[], algo, "socket");
            // Runs with a thread set aside outside control depend on the kernel's timing.
            if b["partial"].as_u64().unwrap_or(0) > 0 || s["partial"].as_u64().unwrap_or(0) > 0 {
                assert_eq!(
                    b["hits"], s["hits"],
                    "{name} {algo}: partial runs, hits differ"
                );
                continue;
            }
            for key in ["hits", "outcomes", "mean_steps", "first_hit", "step_limits"] {
                assert_eq!(b[key], s[key], "{name} {algo}: {key}");
            }
            assert_eq!(bs, ss, "{name} {algo}: saved schedules differ");
            kinds.extend(b["outcomes"].as_object().unwrap().keys().cloned());
        }
    }
    // The programs cover the outcome kinds a run decided in the program reports itself.
    for k in ["ok", "assert", "deadlock", "crash"] {
        assert!(kinds.contains(k), "no {k} outcome among {kinds:?}");
    }
}

/// `poscheck cc -O1` build of `tests/c/explore/NAME.c`.
fn explore_program(name: &str) -> PathBuf {
    cc_program(&format!("tests/c/explore/{name}.c"))
}

/// The repository's C file `rel` built with `poscheck cc -O1` (memory-access points), once.
fn cc_program(rel: &str) -> PathBuf {
    let dir = scratch().join("cc-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let name = Path::new(rel)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = dir.join(&name);
    if !out.exists() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
        let o = Command::new(POSCHECK)
            .args(["cc", "-O1", "-pthread", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .unwrap();
        assert!(o.status.success(), "poscheck cc {rel}: {}", text(&o));
    }
    out
}

fn explore(prog: &Path, arg: &str, algo: &str, transport: &str) -> Value {
    let dir = scratch().join(format!(
        "explore-{}{arg}-{algo}-{transport}",
        prog.file_name().unwrap().to_string_lossy()
    ));
    // Points at memory accesses only where the program was built for them.
    let points = if prog.starts_with(scratch().join("cc-bin")) {
        "mem"
    } else {
        "sync"
    };
    let args = [
        "explore",
        "--algo",
        algo,
        "--points",
        points,
        "--transport",
        transport,
    ];
    poscheck_json(&dir, &args, &[prog.to_str().unwrap(), "--", arg])
}

#[test]
fn an_exploration_decided_in_the_program_explores_what_the_socket_one_does() {
    // lastzero(4): 2^4 + ... traces under odpor; readers(3): 8; the sdpor counts include
    // the executions blocked by sleep sets, which depend on every recorded step.
    for (name, arg) in [("lastzero", "4"), ("readers", "3"), ("indexer", "12")] {
        let prog = explore_program(name);
        for algo in ["odpor", "sdpor", "dpor"] {
            let b = explore(&prog, arg, algo, "baton");
            let s = explore(&prog, arg, algo, "socket");
            assert_eq!(b["complete"], Value::Bool(true), "{name} {algo}: {b}");
            for key in ["executions", "complete", "bugs", "blocked"] {
                assert_eq!(b[key], s[key], "{name} {algo}: {key}");
            }
        }
    }
}

#[test]
fn race_learning_from_accesses_observed_in_the_program_learns_what_the_socket_one_does() {
    // `auto` points: plain accesses are observed, not scheduled, and the runner's race
    // detector learns racing sites from them try after try; under the baton they come back
    // in the end message's log.
    for name in ["reorder_10", "account"] {
        let prog = cc_program(&format!("benchmarks/src/{name}.c"));
        let run = |transport: &str| {
            let args = [
                "run",
                "--algo",
                "pos",
                "--tries",
                "300",
                "--seed",
                "5",
                "--jobs",
                "1",
                "--no-minimize",
                "--points",
                "auto",
                "--transport",
                transport,
            ];
            let r = poscheck_json(
                &scratch().join(format!("auto-{name}-{transport}")),
                &args,
                &[prog.to_str().unwrap()],
            );
            r["programs"][0].clone()
        };
        let (b, s) = (run("baton"), run("socket"));
        for key in [
            "hits",
            "outcomes",
            "mean_steps",
            "first_hit",
            "racing_sites",
            "learned_sites",
        ] {
            assert_eq!(b[key], s[key], "{name}: {key}");
        }
        if name == "reorder_10" {
            assert!(b["racing_sites"].as_u64().unwrap() > 0, "{name}: {b}");
        }
    }
}

#[test]
fn a_thread_spinning_without_a_point_under_auto_points_is_a_hang_with_either_transport() {
    // Its reads of the flag are observed accesses, sent without end: they are no progress
    // (the run once never ended over the socket), and under the baton a repeated one is
    // logged once (the end message once grew without bound).
    let prog = cc_program("tests/corpus/blocked/spinner.c");
    for transport in ["baton", "socket"] {
        let start = std::time::Instant::now();
        let args = [
            "run",
            "--algo",
            "pos",
            "--tries",
            "2",
            "--seed",
            "1",
            "--jobs",
            "1",
            "--no-minimize",
            "--points",
            "auto",
            "--step-timeout",
            "1",
            "--compute-timeout",
            "2",
            "--transport",
            transport,
        ];
        let r = poscheck_json(
            &scratch().join(format!("spin-{transport}")),
            &args,
            &[prog.to_str().unwrap()],
        );
        let p = &r["programs"][0];
        assert_eq!(p["outcomes"]["hang"], 2, "{transport}: {p}");
        // Two compute timeouts and the runner's own margin, not minutes.
        assert!(
            start.elapsed().as_secs() < 60,
            "{transport}: {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn a_run_that_dies_without_its_end_message_keeps_its_schedule_from_the_journal() {
    // SIGKILL and a raw exit_group: libpos cannot report either, so the schedule of a run
    // decided in the program comes from its journal; it must be the socket run's.
    let prog = c_program("dies_mid_run");
    for (how, outcome) in [("kill", "crash"), ("exit", "exit-code")] {
        let (b, bs) = sample(&prog, &[how], "pos", "baton");
        let (s, ss) = sample(&prog, &[how], "pos", "socket");
        for key in ["hits", "outcomes", "mean_steps", "first_hit"] {
            assert_eq!(b[key], s[key], "{how}: {key}");
        }
        assert!(
            b["outcomes"][outcome].as_u64().unwrap_or(0) > 0,
            "{how}: {b}"
        );
        assert!(!bs.is_empty(), "{how}: the saved schedule has no steps");
        assert_eq!(bs, ss, "{how}: saved schedules differ");
        // An exploration learns the dead runs' traces from the journal too.
        let b = explore(&prog, how, "odpor", "baton");
        let s = explore(&prog, how, "odpor", "socket");
        assert_eq!(b["complete"], Value::Bool(true), "{how}: {b}");
        for key in ["executions", "blocked"] {
            assert_eq!(b[key], s[key], "{how} odpor: {key}");
        }
        // The bugs, but for where each transport's run saved its schedule.
        let bugs = |r: &Value| -> Vec<(Value, Value)> {
            let list = r["bugs"].as_array().cloned().unwrap_or_default();
            list.iter()
                .map(|x| (x["description"].clone(), x["steps"].clone()))
                .collect()
        };
        assert_eq!(bugs(&b), bugs(&s), "{how} odpor: bugs");
        assert!(!bugs(&b).is_empty(), "{how}: {b}");
    }
}

#[test]
fn bench_measures_a_baton_hand_over_so_runs_in_the_program_do_use_the_baton() {
    // libpos falls back to sockets inside the program when its private heap cannot have
    // its fixed range (the journal once took it): the runs stay right but lose the baton.
    // `bench` fails when its run measured no hand-over, which only the baton records.
    common::require_libpos();
    let o = Command::new(POSCHECK)
        .args(["bench", "--runs", "10", "--steps", "200"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("hand-over latency (median, two threads, baton)"),
        "{}",
        text(&o)
    );
}

#[test]
fn every_run_starts_with_the_descriptors_the_program_gets_when_run_directly() {
    // The fork server forks each run's process ahead of the run, while the previous run
    // may still go on: none of its descriptors (the previous run's pidfd, its control
    // connection) may reach the program, with either transport, forked or spawned.
    let prog = c_program("descriptors_at_start");
    let listed = Command::new(&prog).arg("list").output().unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    let inherited = String::from_utf8(listed.stdout).unwrap();
    let inherited: Vec<&str> = inherited.split_whitespace().collect();
    for transport in ["baton", "socket"] {
        for fork in ["", "--no-fork-server"] {
            let dir = scratch().join(format!("descriptors-{transport}{fork}"));
            let mut args = vec![
                "run",
                "--algo",
                "pos",
                "--tries",
                "12",
                "--seed",
                "3",
                "--jobs",
                "1",
                "--no-minimize",
                "--transport",
                transport,
            ];
            if !fork.is_empty() {
                args.push(fork);
            }
            let mut tail = vec![prog.to_str().unwrap(), "--"];
            tail.extend(&inherited);
            let r = poscheck_json(&dir, &args, &tail);
            let p = &r["programs"][0];
            assert_eq!(p["hits"], 0, "{transport} {fork}: {p}");
            assert_eq!(p["outcomes"]["ok"], 12, "{transport} {fork}: {p}");
        }
    }
}

#[test]
fn a_program_that_closes_every_descriptor_keeps_its_runs() {
    // Daemon-style code closes everything above stderr; libpos's descriptors (the run's
    // connection, the journal) must survive every route. `syscall(SYS_close_range, ...)`
    // and `syscall(SYS_close, fd)` went straight to the kernel: every run was an error
    // ("cannot report the run's end to the runner").
    let prog = c_program("closes_descriptors");
    let hows = [
        "close_range",
        "sys_close_range",
        "closefrom",
        "close_loop",
        "sys_close_loop",
        "dup2_over",
    ];
    for how in hows {
        let direct = Command::new(&prog).arg(how).output().unwrap();
        assert!(direct.status.success(), "{how}: {}", text(&direct));
        for transport in ["baton", "socket"] {
            let dir = scratch().join(format!("closes-{how}-{transport}"));
            let args = [
                "run",
                "--algo",
                "pos",
                "--tries",
                "8",
                "--seed",
                "5",
                "--no-minimize",
                "--transport",
                transport,
            ];
            let r = poscheck_json(&dir, &args, &[prog.to_str().unwrap(), "--", how]);
            let p = &r["programs"][0];
            assert_eq!(p["outcomes"]["ok"], 8, "{how} {transport}: {p}");
        }
    }
}

/// Whether process `pid` exists and is not a zombie (`/proc/PID/stat`'s state).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
        !matches!(state, Some("Z") | Some("X"))
    })
}

#[test]
fn a_process_that_leaves_the_run_group_does_not_outlive_the_run() {
    // A daemon a run starts (setsid, then exec or a double fork) used to survive the group
    // kill: 10,000 tries left 10,000 processes. With the fork server (the reaper of a run's
    // orphans) and without it (the run's descendants are found by their environment).
    let prog = c_program("escapes_group");
    for how in ["exec_sleep", "double_fork"] {
        for fork in ["", "--no-fork-server"] {
            let dir = scratch().join(format!("escapes-{how}{fork}"));
            std::fs::create_dir_all(&dir).unwrap();
            let pidfile = dir.join("pids");
            let mut args = vec![
                "run",
                "--algo",
                "pos",
                "--tries",
                "4",
                "--seed",
                "2",
                "--no-minimize",
            ];
            if !fork.is_empty() {
                args.push(fork);
            }
            let tail = [prog.to_str().unwrap(), "--", how, pidfile.to_str().unwrap()];
            let r = poscheck_json(&dir, &args, &tail);
            let p = &r["programs"][0];
            assert_eq!(p["outcomes"]["ok"], 4, "{how} {fork}: {p}");
            let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            assert_eq!(pids.len(), 4, "{how} {fork}: one escaped process per run");
            // The kill is sent when each run ends; give the kernel a moment to finish it.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while pids.iter().any(|&q| alive(q)) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let left: Vec<i32> = pids.iter().copied().filter(|&q| alive(q)).collect();
            for &q in &left {
                // SAFETY: cleaning up after a failed check; plain kill of a known pid.
                unsafe { libc::kill(q, libc::SIGKILL) };
            }
            assert!(
                left.is_empty(),
                "{how} {fork}: still alive after the runs: {left:?}"
            );
        }
    }
}

#[test]
fn a_kernel_wait_with_a_timeout_longer_than_the_step_timeout_is_no_hang() {
    // recv on a socket with SO_RCVTIMEO and poll with a timeout wait in the kernel, outside
    // control, for their whole timeout when nothing comes: the thread is silent for longer
    // than the step timeout while nothing else can run. It announces the wait's timeout, so
    // that is no hang (before: `hang` in every run, with either transport).
    let prog = c_program("timed_kernel_wait");
    // One try with a 0.5 s step timeout: the outcome of `timed_kernel_wait HOW SECONDS`.
    let outcome = |name: &str, transport: &str, how: &str, secs: &str| {
        let args = [
            "run",
            "--algo",
            "pos",
            "--tries",
            "1",
            "--seed",
            "1",
            "--no-minimize",
            "--step-timeout",
            "0.5",
            "--transport",
            transport,
        ];
        let tail = [prog.to_str().unwrap(), "--", how, secs];
        let r = poscheck_json(&scratch().join(name), &args, &tail);
        r["programs"][0]["outcomes"].clone()
    };
    for how in ["recv", "poll"] {
        for transport in ["baton", "socket"] {
            let o = outcome(&format!("kwait-{how}-{transport}"), transport, how, "1");
            assert_eq!(o["ok"], 1, "{how} {transport}: {o}");
        }
    }
    // A wait without a timeout that never ends stays a hang.
    let o = outcome("kwait-forever", "baton", "recv", "0");
    assert_eq!(o["hang"], 1, "{o}");
}

#[test]
fn replay_counts_divergent_replays_instead_of_stopping_at_the_first() {
    // Every other run of `alternating` takes a lock the others do not: its schedule, saved
    // on an even run, diverges on the odd replays. `replay --times 4` says 2 of 4
    // reproduced and 2 diverged (it used to stop with an error at the first divergence);
    // when every replay diverges, that stays the error.
    let prog = c_program("alternating");
    let dir = scratch().join("alternating");
    std::fs::create_dir_all(&dir).unwrap();
    let counter = dir.join("count");
    let args = [
        "run",
        "--algo",
        "pos",
        "--tries",
        "1",
        "--seed",
        "1",
        "--no-minimize",
    ];
    let r = poscheck_json(
        &dir,
        &args,
        &[prog.to_str().unwrap(), "--", counter.to_str().unwrap()],
    );
    let schedule = r["programs"][0]["schedule"]
        .as_str()
        .expect("a saved schedule")
        .to_string();
    let schedule = if Path::new(&schedule).is_absolute() {
        PathBuf::from(schedule)
    } else {
        dir.join(schedule)
    };
    // The next run is odd: the replays go odd, even, odd, even.
    let o = Command::new(POSCHECK)
        .args(["replay", "--times", "4", schedule.to_str().unwrap()])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("reproduced 2 of 4 times"), "{t}");
    assert!(
        t.contains("note: 2 of 4 replays diverged from the schedule (first: replay 1 of 4"),
        "{t}"
    );
    // One replay, odd again (the fifth run): every replay diverged, an error.
    std::fs::write(&counter, "5\n").unwrap();
    let o = Command::new(POSCHECK)
        .args(["replay", schedule.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("diverged from the schedule at step"),
        "{}",
        text(&o)
    );
}
