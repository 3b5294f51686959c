//! End-to-end tests of libpos in standalone mode: the C programs of `tests/c/` are compiled
//! with gcc and run with `LD_PRELOAD=libpos.so` (or linked against it, for the
//! `-fsanitize=thread` ones); the in-process coordinator prints the outcome on stderr.
//! Seeds are fixed, so every assertion below is deterministic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

/// Directory of the built libpos.so (this test runs from `<target>/<profile>/deps/`).
/// `cargo test` does not rebuild a cdylib-only crate's library, so the tests refuse a
/// libpos.so older than its sources instead of silently testing old code (`scripts/test.sh`
/// builds the workspace first; by hand: `cargo build -p pos-preload` with the same profile).
fn lib_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        let dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target profile directory")
            .to_path_buf();
        let lib = dir.join("libpos.so");
        let built = std::fs::metadata(&lib)
            .and_then(|m| m.modified())
            .unwrap_or_else(|e| panic!("{}: {e}; build it first", lib.display()));
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
        let newest = newest_mtime(&src);
        assert!(
            built >= newest,
            "{} is older than preload/src: run `cargo build -p pos-preload` first",
            lib.display()
        );
        dir
    })
    .clone()
}

/// The latest modification time of the files under `dir`.
fn newest_mtime(dir: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).expect("read preload/src").flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest_mtime(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .expect("source mtime")
        };
        newest = newest.max(t);
    }
    newest
}

fn libpos() -> PathBuf {
    lib_dir().join("libpos.so")
}

/// Scratch directory for the compiled programs.
fn out_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("libpos-c");
        std::fs::create_dir_all(&d).expect("create scratch dir");
        d
    })
    .clone()
}

fn source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.c"))
}

fn run_checked(cmd: &mut Command) {
    let out = cmd.output().expect("run the compiler");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compile each program once per test process (tests run in parallel and share programs).
fn once(key: &str, make: impl FnOnce() -> PathBuf) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built.entry(key.to_string()).or_insert_with(make).clone()
}

/// Compile `tests/c/<name>.c` with gcc into a plain pthread program.
fn build(name: &str) -> PathBuf {
    once(name, || build_plain(name))
}

fn build_plain(name: &str) -> PathBuf {
    let exe = out_dir().join(name);
    run_checked(
        Command::new("gcc")
            .args(["-O1", "-g", "-pthread", "-o"])
            .arg(&exe)
            .arg(source(name)),
    );
    exe
}

/// Compile with `-fsanitize=thread` and link against libpos instead of libtsan.
fn build_tsan(name: &str) -> PathBuf {
    once(&format!("{name}.tsan"), || build_tsan_uncached(name))
}

fn build_tsan_uncached(name: &str) -> PathBuf {
    let obj = out_dir().join(format!("{name}.o"));
    let exe = out_dir().join(format!("{name}.tsan"));
    run_checked(
        Command::new("gcc")
            .args(["-O1", "-g", "-fsanitize=thread", "-c", "-o"])
            .arg(&obj)
            .arg(source(name)),
    );
    let dir = lib_dir();
    run_checked(
        Command::new("gcc")
            .arg("-pthread")
            .arg(&obj)
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", dir.display()))
            .arg("-lpos")
            .arg(format!("-Wl,-rpath,{}", dir.display())),
    );
    exe
}

/// Run `exe` under libpos's standalone coordinator with the given environment.
fn run(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_PRELOAD", libpos())
        .env_remove("POSCHECK_SOCKET")
        .env_remove("POS_SCHEDULE")
        .env_remove("POSCHECK_POINTS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run the program")
}

/// The `poscheck: outcome=...` line of a run.
fn outcome(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find(|l| l.starts_with("poscheck: outcome="))
        .unwrap_or_else(|| panic!("no outcome line in stderr: {err}"))
        .to_string()
}

fn kind(out: &Output) -> String {
    let o = outcome(out);
    o["poscheck: outcome=".len()..]
        .split(' ')
        .next()
        .unwrap_or("")
        .to_string()
}

#[test]
fn every_primitive_behaves_under_many_schedules() {
    let exe = build("sync_all");
    for algo in ["rw", "pos", "pct3"] {
        for seed in 1..=8 {
            let s = seed.to_string();
            let out = run(&exe, &[], &[("POS_ALGO", algo), ("POS_SEED", &s)]);
            assert_eq!(out.status.code(), Some(0), "{algo} seed {seed}: {out:?}");
            assert_eq!(kind(&out), "ok", "{algo} seed {seed}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.starts_with(&format!("poscheck: algo={algo} seed={seed}\n")));
            assert_eq!(String::from_utf8_lossy(&out.stdout), "sync_all ok\n");
        }
    }
}

#[test]
fn real_sleep_keeps_the_delay() {
    let exe = build("sync_all");
    libpos();
    let start = std::time::Instant::now();
    let out = run(&exe, &[], &[("POS_SEED", "1"), ("POS_REAL_SLEEP", "1")]);
    assert_eq!(kind(&out), "ok");
    // sync_all sleeps 2 s in main (after the grant, with POS_REAL_SLEEP=1).
    assert!(start.elapsed() >= std::time::Duration::from_secs(2));
}

#[test]
fn a_race_around_a_yield_is_found_by_some_schedules_only() {
    let exe = build("lost_update");
    let mut kinds = BTreeSet::new();
    for seed in 1..=20 {
        let out = run(
            &exe,
            &[],
            &[("POS_ALGO", "rw"), ("POS_SEED", &seed.to_string())],
        );
        let k = kind(&out);
        if k == "assert" {
            assert!(outcome(&out).contains("lost_update.c:23: main: Assertion `x == 2' failed."));
            assert_eq!(out.status.code(), None, "killed by SIGABRT");
        }
        kinds.insert(k);
    }
    assert_eq!(
        kinds,
        ["assert", "ok"].into_iter().map(String::from).collect(),
        "20 random-walk runs, each buggy with probability 1/2"
    );
}

#[test]
fn the_same_seed_gives_the_same_schedule_and_replay_reproduces_it() {
    let exe = build("lost_update");
    let dir = out_dir();
    let sched = |name: &str| dir.join(format!("{name}.json"));
    let steps = |p: &Path| -> serde_json::Value {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).expect("schedule written"))
                .expect("schedule is JSON");
        v["steps"].clone()
    };
    for seed in ["11", "12", "13"] {
        let (a, b, r) = (
            sched(&format!("a{seed}")),
            sched(&format!("b{seed}")),
            sched(&format!("r{seed}")),
        );
        let first = run(
            &exe,
            &[],
            &[
                ("POS_SEED", seed),
                ("POS_SCHEDULE_OUT", a.to_str().unwrap()),
            ],
        );
        let again = run(
            &exe,
            &[],
            &[
                ("POS_SEED", seed),
                ("POS_SCHEDULE_OUT", b.to_str().unwrap()),
            ],
        );
        assert_eq!(steps(&a), steps(&b), "seed {seed}");
        assert_eq!(outcome(&first), outcome(&again));
        let replay = run(
            &exe,
            &[],
            &[
                ("POS_SCHEDULE", a.to_str().unwrap()),
                ("POS_SCHEDULE_OUT", r.to_str().unwrap()),
            ],
        );
        assert_eq!(steps(&a), steps(&r), "replay of seed {seed}");
        assert_eq!(outcome(&first), outcome(&replay));
        assert!(String::from_utf8_lossy(&replay.stderr).starts_with("poscheck: algo=replay"));
    }
}

#[test]
fn deadlocks_are_reported_and_end_the_process() {
    let exe = build("abba");
    let mut found = 0;
    for seed in 1..=20 {
        let out = run(
            &exe,
            &[],
            &[("POS_ALGO", "rw"), ("POS_SEED", &seed.to_string())],
        );
        match kind(&out).as_str() {
            "deadlock" => {
                found += 1;
                assert_eq!(out.status.code(), Some(1));
                let o = outcome(&out);
                assert!(o.contains("thread 0.1 at lock(mutex@"), "{o}");
                assert!(o.contains("held by thread 0.2"), "{o}");
            }
            "ok" => assert_eq!(out.status.code(), Some(0)),
            k => panic!("unexpected outcome {k}"),
        }
    }
    assert!((1..20).contains(&found), "{found} deadlocks in 20 runs");
}

#[test]
fn crashes_are_reported_with_signal_and_pc() {
    let exe = build("crash");
    let out = run(&exe, &[], &[("POS_SEED", "1")]);
    assert_eq!(kind(&out), "crash");
    assert!(outcome(&out).contains("signal 11 (SIGSEGV) at pc 0x"));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV));
}

#[test]
fn exit_paths_and_protected_fds() {
    let exe = build("exit_paths");
    // exit(5) after a thread used pthread_exit; the program closed every fd it did not own;
    // its atexit handler sees the once routine done (42 otherwise). The thread's unwind is
    // controlled (its `pthread_once`, libgcc's, done: a step) and so is the atexit handler
    // (lock, unlock, once: three steps before the process exit).
    let out = run(&exe, &["5"], &[("POS_SEED", "3")]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert_eq!(
        outcome(&out),
        "poscheck: outcome=exit-code steps=13: exit code 5"
    );
    // main calls pthread_exit: the run ends when the last thread does.
    let out = run(&exe, &[], &[("POS_SEED", "3")]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(kind(&out), "ok");
}

#[test]
fn programs_the_target_runs_are_not_controlled() {
    let exe = build("exec_child");
    let out = run(
        &exe,
        &[],
        &[
            ("POS_SEED", "1"),
            ("LD_PRELOAD", libpos().to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "child LD_PRELOAD=[] POSCHECK_SOCKET=[]\n"
    );
    // One coordinator only: the shell did not start its own.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("poscheck: algo=").count(), 1, "{err}");
    assert_eq!(kind(&out), "ok");
}

#[test]
fn a_thread_that_never_reaches_a_point_is_reported_as_a_hang() {
    let exe = build("spin");
    libpos(); // built before the clock starts
    let start = std::time::Instant::now();
    let out = run(
        &exe,
        &[],
        &[
            ("POS_SEED", "1"),
            ("POS_STEP_TIMEOUT", "0.3"),
            ("POS_COMPUTE_TIMEOUT", "0.6"),
        ],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(kind(&out), "hang", "{out:?}");
    assert_eq!(out.status.code(), Some(1));
    // Main's join is posted (and waiting); only the spinner, granted its start, still runs,
    // on a CPU: excused for the compute timeout (two step timeouts), then a hang.
    let o = outcome(&out);
    assert!(
        o.starts_with("poscheck: outcome=hang steps=2: thread(s) 0.1 kept computing for 6"),
        "{o}"
    );
    assert!(
        o.ends_with(
            "ms without reaching a scheduling point (an endless loop, or a computation \
             longer than the compute timeout)"
        ),
        "{o}"
    );
}

#[test]
fn bad_configuration_is_an_error_not_a_run() {
    let exe = build("exit_paths");
    for env in [
        [("POS_ALGO", "nonsense"), ("POS_SEED", "1")],
        [("POS_SEED", "twelve"), ("POS_ALGO", "rw")],
        [("POSCHECK_POINTS", "all"), ("POS_SEED", "1")],
        [("POS_STEP_TIMEOUT", "-1"), ("POS_SEED", "1")],
        [("POS_COMPUTE_TIMEOUT", "soon"), ("POS_SEED", "1")],
    ] {
        let out = run(&exe, &["5"], &env);
        // Exit 2 and one line, as the runner's bad input (issue 10, item 7).
        assert_eq!(out.status.code(), Some(2), "{env:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("poscheck: error: "), "{env:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{env:?}: {err}");
    }
}

#[test]
fn memory_points_interleave_plain_accesses_only_in_mem_mode() {
    let exe = build_tsan("tsan_race");
    let mut mem_kinds = BTreeSet::new();
    for seed in 1..=20 {
        let s = seed.to_string();
        let sync = run(&exe, &[], &[("POS_ALGO", "rw"), ("POS_SEED", &s)]);
        assert_eq!(
            kind(&sync),
            "ok",
            "sync mode, seed {seed}: x++ is never split"
        );
        let mem = run(
            &exe,
            &[],
            &[
                ("POS_ALGO", "rw"),
                ("POS_SEED", &s),
                ("POSCHECK_POINTS", "mem"),
            ],
        );
        let k = kind(&mem);
        if k == "assert" {
            // Only the plain counter can lose an update: the atomic ones never do.
            assert!(outcome(&mem).contains("Assertion `x == 2' failed."));
        }
        mem_kinds.insert(k);
    }
    assert_eq!(
        mem_kinds,
        ["assert", "ok"].into_iter().map(String::from).collect()
    );
}

/// Issue 15: with `POS_TRANSPORT=baton` the program's threads decide in-process and pass
/// the turn with a futex baton; every seed must give the schedule, outcome and exit status
/// the socket transport gives: correct runs (`sync_all`, every primitive), assertion
/// failures and correct runs of one program (`lost_update`), deadlocks (`abba`), crashes,
/// and mutexes allocated on the heap during the run (`heap_objects`: libpos's in-process
/// decisions must not move the program's heap).
#[test]
fn the_baton_transport_decides_exactly_as_the_socket_one() {
    let dir = out_dir();
    let mut kinds = BTreeSet::new();
    for name in ["sync_all", "lost_update", "abba", "crash", "heap_objects"] {
        let exe = build(name);
        for algo in ["rw", "pos", "pct3"] {
            for seed in 1..=6 {
                let s = seed.to_string();
                let runs: Vec<(Output, serde_json::Value)> = ["socket", "baton"]
                    .iter()
                    .map(|t| {
                        let file = dir.join(format!("transport-{name}-{algo}-{seed}-{t}.json"));
                        let _ = std::fs::remove_file(&file);
                        // ASLR off: the schedule names objects by address.
                        let out = run(
                            Path::new("setarch"),
                            &["-R", exe.to_str().unwrap()],
                            &[
                                ("POS_TRANSPORT", t),
                                ("POS_ALGO", algo),
                                ("POS_SEED", &s),
                                ("POS_SCHEDULE_OUT", file.to_str().unwrap()),
                            ],
                        );
                        let text = std::fs::read_to_string(&file)
                            .unwrap_or_else(|e| panic!("{name} {algo} {seed} {t}: {e}: {out:?}"));
                        let v: serde_json::Value =
                            serde_json::from_str(&text).expect("schedule is JSON");
                        (out, v)
                    })
                    .collect();
                let (sock, baton) = (&runs[0], &runs[1]);
                let what = format!("{name} {algo} seed {seed}");
                assert_eq!(outcome(&sock.0), outcome(&baton.0), "{what}");
                assert_eq!(sock.0.status.code(), baton.0.status.code(), "{what}");
                assert_eq!(sock.0.stdout, baton.0.stdout, "{what}");
                assert_eq!(sock.1, baton.1, "{what}: schedules differ");
                if name == "sync_all" || name == "heap_objects" {
                    assert_eq!(kind(&baton.0), "ok", "{what}: a correct program");
                }
                kinds.insert(kind(&baton.0));
            }
        }
    }
    // Both transports saw every kind of end, so each path was compared.
    for k in ["ok", "assert", "deadlock", "crash"] {
        assert!(kinds.contains(k), "no {k} run among {kinds:?}");
    }
}

#[test]
fn the_baton_transport_reports_a_hang_and_rejects_an_unknown_transport() {
    let exe = build("spin");
    let out = run(
        &exe,
        &[],
        &[
            ("POS_TRANSPORT", "baton"),
            ("POS_SEED", "1"),
            ("POS_STEP_TIMEOUT", "0.3"),
            ("POS_COMPUTE_TIMEOUT", "0"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // A compute timeout of 0 is the step timeout.
    let o = outcome(&out);
    assert!(
        o.starts_with("poscheck: outcome=hang steps=2: thread(s) 0.1 kept computing for 3"),
        "{o}"
    );
    let out = run(&exe, &[], &[("POS_TRANSPORT", "pigeon")]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "poscheck: error: bad POS_TRANSPORT \"pigeon\" (socket or baton)\n"
    );
}
