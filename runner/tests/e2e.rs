//! End-to-end tests: compile the C programs of `tests/c/` with gcc, run them under the real
//! `poscheck` binary and libpos.so, and check what the issue says must be shown.
//!
//! libpos.so must sit next to the `poscheck` binary: `cargo test --workspace` (or
//! `cargo build -p pos-preload` first) builds it there.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common;

use common::{text, POSCHECK};

/// The strategies the counter claims are checked with.
const STRATEGIES: &[&str] = &[
    "rw", "pct1", "pct3", "pos", "pos*", "basicpos", "rapos", "urw", "surw", "tapct3",
];

/// Compile every `tests/c/*.c` once per test binary; returns the output directory.
fn bins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        common::require_libpos();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-c");
        std::fs::create_dir_all(&out).unwrap();
        for e in std::fs::read_dir(&src).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "c") {
                let bin = out.join(p.file_stem().unwrap());
                let st = Command::new("gcc")
                    .args(["-O1", "-g", "-pthread", "-no-pie", "-Wall", "-o"])
                    .arg(&bin)
                    .arg(&p)
                    .status()
                    .expect("gcc is needed for the end-to-end tests");
                assert!(st.success(), "gcc failed on {}", p.display());
            }
        }
        out
    })
}

fn bin(name: &str) -> PathBuf {
    bins().join(name)
}

/// A scratch directory per test: the working directory (for poscheck-out/) and TMPDIR (so
/// the test can see that every run's temp dir is removed).
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Scratch { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn tmp(&self) -> PathBuf {
        self.path().join("tmp")
    }
    fn poscheck(&self, args: &[&str]) -> Output {
        self.poscheck_env(args, &[])
    }
    fn poscheck_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(POSCHECK)
            .args(args)
            .current_dir(self.path())
            .env("TMPDIR", self.tmp())
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }
    /// `poscheck run ... --json`: the program's JSON entry and the process output.
    fn run_json(&self, args: &[&str]) -> (Value, Output) {
        let json = self.path().join("report.json");
        let mut a = vec!["run", "--json", json.to_str().unwrap()];
        a.extend_from_slice(args);
        let out = self.poscheck(&a);
        let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
            panic!(
                "no JSON report; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (serde_json::from_str(&text).unwrap(), out)
    }
    fn tmp_is_empty(&self) -> bool {
        std::fs::read_dir(self.tmp()).unwrap().next().is_none()
    }
}

fn outcomes(p: &Value) -> BTreeMap<String, u64> {
    p["outcomes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

#[test]
fn protected_counter_never_fails_and_racy_counter_always_found() {
    let s = Scratch::new();
    let good = bin("counter_mutex");
    let bad = bin("counter_racy");
    for algo in STRATEGIES {
        let (r, out) = s.run_json(&[
            "--algo",
            algo,
            "--tries",
            "500",
            "--seed",
            "11",
            good.to_str().unwrap(),
        ]);
        let p = &r["programs"][0];
        assert_eq!(p["hits"], 0, "{algo}: {}", text(&out));
        assert_eq!(outcomes(p).get("ok"), Some(&500), "{algo}");
        assert_eq!(out.status.code(), Some(0), "{algo}");
        let (r, out) = s.run_json(&[
            "--algo",
            algo,
            "--tries",
            "2000",
            "--seed",
            "11",
            "--stop-on-first",
            bad.to_str().unwrap(),
        ]);
        let p = &r["programs"][0];
        assert!(p["hits"].as_u64().unwrap() >= 1, "{algo}: {}", text(&out));
        assert_eq!(p["first_outcome"]["kind"], "assert", "{algo}");
        assert_eq!(out.status.code(), Some(1), "{algo}");
    }
    assert!(s.tmp_is_empty());
}

#[test]
fn lock_order_inversion_is_a_deadlock_naming_threads_and_mutexes() {
    let s = Scratch::new();
    let prog = bin("lock_order");
    let addrs = Command::new(&prog).arg("addrs").output().unwrap();
    let addrs = String::from_utf8(addrs.stdout).unwrap();
    let (r, out) = s.run_json(&[
        "--algo",
        "pos",
        "--tries",
        "500",
        "--seed",
        "5",
        "--stop-on-first",
        prog.to_str().unwrap(),
    ]);
    let p = &r["programs"][0];
    assert_eq!(p["first_outcome"]["kind"], "deadlock", "{}", text(&out));
    let report = text(&out);
    // Each mutex by its address and its symbol (the model knows addresses only).
    for (a, name) in addrs.split_whitespace().zip(["a", "b"]) {
        assert!(
            report.contains(&format!("mutex {a} <{name}> held by")),
            "{a}: {report}"
        );
    }
    assert!(report.contains("thread 0.1 at lock") && report.contains("thread 0.2 at lock"));
}

#[test]
fn synchronisation_primitives_behave_as_the_model_says() {
    let s = Scratch::new();
    // Correct programs: no bug in 300 tries.
    for prog in [
        "condvar_ok",
        "sem_prodcons",
        "barrier",
        "rwlock",
        "recursive",
        "many_threads",
    ] {
        let (r, out) = s.run_json(&[
            "--algo",
            "pos",
            "--tries",
            "300",
            "--seed",
            "2",
            bin(prog).to_str().unwrap(),
        ]);
        let p = &r["programs"][0];
        assert_eq!(outcomes(p).get("ok"), Some(&300), "{prog}: {}", text(&out));
    }
    // The lost wakeup deadlocks on the condition variable.
    let (r, out) = s.run_json(&[
        "--algo",
        "pos",
        "--tries",
        "500",
        "--seed",
        "2",
        "--stop-on-first",
        bin("lost_wakeup").to_str().unwrap(),
    ]);
    let p = &r["programs"][0];
    assert_eq!(p["first_outcome"]["kind"], "deadlock", "{}", text(&out));
    assert!(text(&out).contains("waits for a signal on condvar"));
    // A 1 s timed lock behind a short critical section never times out in virtual time.
    let (r, out) = s.run_json(&[
        "--algo",
        "rw",
        "--tries",
        "300",
        "--seed",
        "2",
        bin("timedlock").to_str().unwrap(),
    ]);
    let o = outcomes(&r["programs"][0]);
    assert_eq!(o.get("ok"), Some(&300), "{o:?}: {}", text(&out));
    // trylock, and timedlock with `--timeouts any`: both results happen, and nothing else.
    for (prog, busy, extra) in [("trylock", 3, None), ("timedlock", 4, Some("any"))] {
        let mut args = vec!["--algo", "rw", "--tries", "300", "--seed", "2"];
        if let Some(t) = extra {
            args.extend(["--timeouts", t]);
        }
        let path = bin(prog);
        args.push(path.to_str().unwrap());
        let (r, out) = s.run_json(&args);
        let o = outcomes(&r["programs"][0]);
        // Each order has probability >= 1/4 under rw: 300 tries miss one with p < 1e-30.
        assert!(
            o.get("ok").copied().unwrap_or(0) > 0,
            "{prog}: {}",
            text(&out)
        );
        assert!(
            o.get("exit-code").copied().unwrap_or(0) > 0,
            "{prog}: {o:?}"
        );
        assert_eq!(o.values().sum::<u64>(), 300, "{prog}: {o:?}");
        assert!(text(&out).contains(&format!("exit code {busy}")), "{prog}");
    }
}

/// Pids the program recorded (main process and forked children).
fn recorded_pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Live processes (not zombies) whose executable is `exe` and whose environment names the
/// scratch dir `s` (so other tests' processes do not count): a fork server or a run left
/// over.
fn processes_of(exe: &Path, s: &Scratch) -> Vec<i32> {
    let exe = exe.canonicalize().unwrap();
    let mark = s.tmp().to_str().unwrap().as_bytes().to_vec();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe)
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.windows(mark.len()).any(|w| w == mark))
                && alive(pid)
        })
        .collect()
}

/// A process is alive if /proc has it and it is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn abnormal_programs_are_classified_and_leave_nothing_behind() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("segfault", "crash", Some("SIGSEGV in thread 0.1")),
        ("segfault", "crash", Some("crash_here")),
        ("do_abort", "crash", Some("SIGABRT in thread 0.1")),
        ("thread_exit", "exit-code", Some("exit code 3")),
        ("pipe_read", "hang", Some("thread(s) 0.1")),
        ("spin", "hang", Some("thread(s) 0.1 kept computing for")),
        ("forker", "ok", None),
        ("close_stdout", "ok", None),
    ];
    for (prog, kind, needle) in cases {
        let s = Scratch::new();
        let pidfile = s.path().join("pids");
        let json = s.path().join("r.json");
        let out = s.poscheck_env(
            &[
                "run",
                "--algo",
                "pos",
                "--tries",
                "3",
                "--seed",
                "1",
                "--step-timeout",
                "1",
                // An endless spin runs on a CPU: a hang after the compute timeout.
                "--compute-timeout",
                "2",
                // Three tries, three processes (a minimisation would replay the bug).
                "--no-minimize",
                "--json",
                json.to_str().unwrap(),
                bin(prog).to_str().unwrap(),
            ],
            &[("E2E_PIDFILE", pidfile.to_str().unwrap())],
        );
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let o = outcomes(&r["programs"][0]);
        assert_eq!(o.get(*kind), Some(&3), "{prog}: {o:?} {}", text(&out));
        if let Some(n) = needle {
            assert!(
                text(&out).contains(n),
                "{prog}: {n:?} not in {}",
                text(&out)
            );
        }
        let pids = recorded_pids(&pidfile);
        let expect = if *prog == "forker" { 6 } else { 3 };
        assert_eq!(pids.len(), expect, "{prog}: pids {pids:?}");
        for pid in pids {
            assert!(!alive(pid), "{prog}: process {pid} survived the run");
        }
        let left = processes_of(&bin(prog), &s);
        assert!(
            left.is_empty(),
            "{prog}: processes {left:?} (fork server?) survived"
        );
        assert!(s.tmp_is_empty(), "{prog}: a run's temp dir was left");
    }
}

/// Ctrl-C or `kill` while runs are in flight (two programs blocked in `read`): poscheck exits
/// with 128 + the signal, and no program process and no temp dir is left.
#[test]
fn an_interrupted_session_leaves_no_process_and_no_temp_dir() {
    for (sig, code) in [(libc_sig::SIGINT, 130), (libc_sig::SIGTERM, 143)] {
        let s = Scratch::new();
        let pidfile = s.path().join("pids");
        let mut child = Command::new(POSCHECK)
            .args(["run", "--algo", "pos", "--tries", "1000", "--jobs", "2"])
            .args(["--step-timeout", "60", "--seed", "1"])
            .arg(bin("pipe_read"))
            .current_dir(s.path())
            .env("TMPDIR", s.tmp())
            .env("E2E_PIDFILE", &pidfile)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until both jobs have a program blocked in read().
        let start = std::time::Instant::now();
        while recorded_pids(&pidfile).len() < 2 {
            assert!(start.elapsed().as_secs() < 30, "the programs never started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        let st = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}");
        let pids = recorded_pids(&pidfile);
        assert_eq!(pids.len(), 2, "{pids:?}");
        for pid in pids {
            // A SIGKILLed group is gone at once; allow the kernel a moment to reap.
            let t = std::time::Instant::now();
            while alive(pid) && t.elapsed().as_secs() < 5 {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            assert!(!alive(pid), "signal {sig}: process {pid} survived");
        }
        let t = std::time::Instant::now();
        while !processes_of(&bin("pipe_read"), &s).is_empty() && t.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let left = processes_of(&bin("pipe_read"), &s);
        assert!(left.is_empty(), "signal {sig}: processes {left:?} survived");
        assert!(s.tmp_is_empty(), "signal {sig}: a temp dir was left");
    }
}

/// Signal numbers for `kill -N` (Linux).
mod libc_sig {
    pub const SIGINT: i32 = 2;
    pub const SIGTERM: i32 = 15;
}

/// Same seed, same schedule file: with one job or two, and with runs forked from a fork
/// server (the default) or spawned one by one. heap_locks names mutexes in static storage,
/// on the stack and on the heap, so a forked run must lay out memory as a spawned one.
#[test]
fn same_seed_same_schedule_for_every_strategy() {
    for (prog, algos) in [
        (
            "counter_racy",
            STRATEGIES
                .iter()
                .chain(&["pct2", "pct5"])
                .copied()
                .collect(),
        ),
        ("heap_locks", vec!["rw", "pos", "pct3"]),
    ] {
        for algo in algos {
            let mut files = Vec::new();
            for (jobs, mode) in [("1", None), ("2", None), ("2", Some("--no-fork-server"))] {
                let s = Scratch::new();
                let mut args = vec!["--algo", algo, "--tries", "60", "--seed", "77"];
                args.extend(["--jobs", jobs]);
                args.extend(mode);
                let path = bin(prog);
                args.push(path.to_str().unwrap());
                let (r, out) = s.run_json(&args);
                let p = &r["programs"][0];
                let sched = p["schedule"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{prog} {algo}: {}", text(&out)));
                // Each run has its own scratch directory, which the schedule records (`cwd`).
                let mut saved: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(s.path().join(sched)).unwrap()).unwrap();
                assert!(saved["cwd"].is_string(), "{prog} {algo}: no cwd recorded");
                saved.as_object_mut().unwrap().remove("cwd");
                files.push((saved, outcomes(p), p["first_hit"].clone()));
            }
            assert!(
                files.windows(2).all(|w| w[0] == w[1]),
                "{prog} {algo}: runs with the same seed differ"
            );
        }
    }
}

#[test]
fn replaying_a_buggy_schedule_reproduces_it_every_time() {
    let s = Scratch::new();
    for prog in ["counter_racy", "lock_order"] {
        let (r, _) = s.run_json(&[
            "--algo",
            "pos",
            "--tries",
            "500",
            "--seed",
            "9",
            "--stop-on-first",
            bin(prog).to_str().unwrap(),
        ]);
        let sched = r["programs"][0]["schedule"].as_str().unwrap().to_string();
        let kind = r["programs"][0]["first_outcome"]["kind"]
            .as_str()
            .unwrap()
            .to_string();
        let out = s.poscheck(&["replay", "--times", "20", &sched]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            text(&out).contains(&format!(
                "recorded outcome {kind}: reproduced 20 of 20 times"
            )),
            "{}",
            text(&out)
        );
    }
    // A schedule the program cannot follow says where and why.
    let (r, _) = s.run_json(&[
        "--algo",
        "pos",
        "--tries",
        "500",
        "--seed",
        "9",
        "--stop-on-first",
        bin("counter_racy").to_str().unwrap(),
    ]);
    let path = s
        .path()
        .join(r["programs"][0]["schedule"].as_str().unwrap());
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["program"] = Value::from(bin("lock_order").to_str().unwrap());
    std::fs::write(&path, v.to_string()).unwrap();
    let out = s.poscheck(&["replay", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("diverged from the schedule at step"),
        "{}",
        text(&out)
    );
    assert!(s.tmp_is_empty());
}

#[test]
fn standalone_preload_prints_its_seed_and_pos_seed_reproduces() {
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    let s = Scratch::new();
    let run = |seed: Option<&str>, out: &Path| {
        let mut c = Command::new(bin("counter_racy"));
        c.env("LD_PRELOAD", &lib).env("POS_SCHEDULE_OUT", out);
        c.env_remove("POSCHECK_SOCKET");
        if let Some(seed) = seed {
            c.env("POS_SEED", seed);
        }
        c.output().unwrap()
    };
    let first = run(None, &s.path().join("a.json"));
    let err = String::from_utf8_lossy(&first.stderr).to_string();
    let seed = err
        .lines()
        .find_map(|l| l.strip_prefix("poscheck: algo=pos seed="))
        .unwrap_or_else(|| panic!("no seed line in {err:?}"))
        .trim()
        .to_string();
    let again = run(Some(&seed), &s.path().join("b.json"));
    assert_eq!(first.status.code(), again.status.code());
    let a = std::fs::read(s.path().join("a.json")).unwrap();
    let b = std::fs::read(s.path().join("b.json")).unwrap();
    assert_eq!(a, b, "POS_SEED={seed} did not reproduce the schedule");
}

#[test]
fn bad_input_is_one_clear_error_line_and_exit_2() {
    let s = Scratch::new();
    let script = s.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let bits32 = s.path().join("elf32");
    let mut bytes = std::fs::read(bin("counter_mutex")).unwrap();
    bytes[4] = 1; // EI_CLASS = ELFCLASS32
    std::fs::write(&bits32, bytes).unwrap();
    let notelf = s.path().join("notelf");
    std::fs::write(&notelf, "just text").unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [&script, &bits32, &notelf] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let noexec = s.path().join("noexec");
    std::fs::copy(bin("counter_mutex"), &noexec).unwrap();
    std::fs::set_permissions(&noexec, std::fs::Permissions::from_mode(0o644)).unwrap();
    let static_bin = s.path().join("static");
    let st = Command::new("gcc")
        .args(["-static", "-O1", "-pthread", "-o"])
        .arg(&static_bin)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c/counter_mutex.c"))
        .status()
        .unwrap();
    let badjson = s.path().join("bad.json");
    std::fs::write(&badjson, "{\"program\": 3").unwrap();
    let mut cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["run".into(), "/nonexistent/prog".into()],
            "no such file",
        ),
        (vec!["run".into(), script.display().to_string()], "script"),
        (vec!["run".into(), bits32.display().to_string()], "32-bit"),
        (
            vec!["run".into(), notelf.display().to_string()],
            "not an ELF",
        ),
        (
            vec!["run".into(), noexec.display().to_string()],
            "not executable",
        ),
        (
            vec![
                "run".into(),
                "--algo".into(),
                "nope".into(),
                bin("counter_mutex").display().to_string(),
            ],
            "unknown algorithm",
        ),
        (
            vec!["replay".into(), badjson.display().to_string()],
            "not a poscheck schedule",
        ),
        (
            vec!["replay".into(), "/nonexistent.json".into()],
            "cannot read schedule",
        ),
    ];
    if st.success() {
        // The preload backend cannot control a static program (auto picks ptrace for it).
        cases.push((
            vec![
                "run".into(),
                "--backend".into(),
                "preload".into(),
                static_bin.display().to_string(),
            ],
            "statically linked",
        ));
    }
    for (args, needle) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = s.poscheck(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("poscheck: error: "), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
    // A libpos.so from another build (here: some other shared library) is refused.
    let other = s.path().join("libother.so");
    shared_library(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c/counter_mutex.c"),
        &other,
    );
    let out = s.poscheck_env(
        &[
            "run",
            "--tries",
            "2",
            bin("counter_mutex").to_str().unwrap(),
        ],
        &[("POSCHECK_LIBPOS", other.to_str().unwrap())],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not match this poscheck"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = s.poscheck(&["run", "--tries", "2", bin("no_pthread").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("creates no thread"));
}

/// Build the C file `src` as the shared library `out`.
fn shared_library(src: &Path, out: &Path) {
    let st = Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(out)
        .arg(src)
        .status()
        .unwrap();
    assert!(st.success(), "gcc -shared {}", src.display());
}

/// A library that passes for libpos (it has the marker) but never connects: the fork
/// server cannot start, which is said once (not once per job), the runs are spawned
/// instead, and each is an `error` with the reason; nothing is left behind.
#[test]
fn a_fork_server_that_cannot_start_falls_back_to_spawning() {
    let s = Scratch::new();
    let src = s.path().join("fake.c");
    // A library with libpos's marker but no fork server in it.
    let marker = pos_sched::protocol::LIBPOS_MARKER;
    std::fs::write(&src, format!("void {marker}(void) {{}}\n")).unwrap();
    let fake = s.path().join("libfake.so");
    shared_library(&src, &fake);
    let json = s.path().join("r.json");
    let out = s.poscheck_env(
        &[
            "run",
            "--tries",
            "4",
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
            bin("counter_mutex").to_str().unwrap(),
        ],
        &[("POSCHECK_LIBPOS", fake.to_str().unwrap())],
    );
    let all = text(&out);
    assert_eq!(
        all.matches("no fork server for").count(),
        1,
        "the warning once: {all}"
    );
    assert!(all.contains("spawning every run"), "{all}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(outcomes(&r["programs"][0]).get("error"), Some(&4), "{all}");
    assert!(all.contains("without ever connecting"), "{all}");
    assert!(processes_of(&bin("counter_mutex"), &s).is_empty());
    assert!(s.tmp_is_empty(), "a temp dir was left");
}

#[test]
fn a_directory_runs_every_executable_in_it() {
    let s = Scratch::new();
    let d = s.path().join("progs");
    std::fs::create_dir(&d).unwrap();
    for p in ["counter_mutex", "counter_racy"] {
        std::fs::copy(bin(p), d.join(p)).unwrap();
    }
    std::fs::write(d.join("README"), "not a program").unwrap();
    let (r, out) = s.run_json(&[
        "--algo",
        "rw",
        "--tries",
        "200",
        "--seed",
        "4",
        d.to_str().unwrap(),
    ]);
    let names: Vec<&str> = r["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["counter_mutex", "counter_racy"]);
    assert_eq!(out.status.code(), Some(1));
    for key in ["algo", "seed", "tries"] {
        assert!(r.get(key).is_some());
    }
    for key in [
        "name",
        "path",
        "tries",
        "hits",
        "hit_ratio",
        "first_hit",
        "outcomes",
        "mean_steps",
        "wall_s",
        "schedule",
    ] {
        assert!(r["programs"][0].get(key).is_some(), "{key}");
    }
}

/// More threads in creation at once than libpos's 64 static start slots (`threads_in_creation.c`
/// creates 100 before joining any; under DFS its first execution creates them all before
/// any starts, and the records past the slots go through the heap): the correct program is
/// never flagged by rw, pct3 or DFS, and the lost update of its racy mode is found.
#[test]
fn more_threads_in_creation_than_start_slots() {
    let s = Scratch::new();
    let prog = bin("threads_in_creation");
    for algo in ["rw", "pct3"] {
        for (mode, correct) in [("1", true), ("0", false)] {
            let (p, o) = common::run_tries(s.path(), &prog, algo, 40, &[], |c| {
                c.args(["--", mode]);
            });
            let hits = p["hits"].as_u64().unwrap_or(u64::MAX);
            if correct {
                assert_eq!(hits, 0, "{algo}, locked: {}", text(&o));
                assert_eq!(common::outcome_count(&p, "ok"), 40, "{}", text(&o));
            } else {
                assert!(hits > 0, "{algo}, racy: {}", text(&o));
            }
        }
    }
    let json = s.path().join("dfs.json");
    let o = Command::new(POSCHECK)
        .args([
            "explore",
            "--algo",
            "dfs",
            "--max-executions",
            "3",
            "--json",
        ])
        .arg(&json)
        .arg(&prog)
        .args(["--", "1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["buggy"].as_u64(), Some(0), "{v}: {}", text(&o));
    assert!(v["executions"].as_u64() >= Some(3), "{v}");
}
