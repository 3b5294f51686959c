//! Helpers shared by the end-to-end test files (each includes this as `mod common;` and
//! uses what it needs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The `poscheck` binary under test.
pub const POSCHECK: &str = env!("CARGO_BIN_EXE_poscheck");

/// A command's exit status and both outputs, for assertion messages and `contains` checks.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// libpos.so next to `poscheck`, where the runner looks for it; fails the test with the
/// way to build it otherwise.
pub fn require_libpos() -> PathBuf {
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    assert!(
        lib.is_file(),
        "{} is missing: build it with `cargo build -p pos-preload` (same profile)",
        lib.display()
    );
    lib
}

/// `poscheck` with `args`, its output.
pub fn poscheck(args: &[&str]) -> Output {
    std::process::Command::new(POSCHECK)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap()
}

/// The algorithms every corpus test runs: the three classic samplers and `auto`, the
/// default of `run` (its members pos, surw, pct3, rff and rapos share the tries).
pub const ALGOS: &[&str] = &["rw", "pct3", "pos", "auto"];

/// `poscheck explore --algo ALGO --points mem` of `prog`, at most `max` executions, with a
/// JSON report and saved schedules in `dir` (`Null` when no report was written).
#[allow(dead_code)]
pub fn explore_mem(dir: &Path, prog: &Path, algo: &str, max: u64) -> (serde_json::Value, Output) {
    let json = dir.join(format!("explore-{algo}.json"));
    let max = max.to_string();
    let o = poscheck(&[
        "explore",
        "--algo",
        algo,
        "--points",
        "mem",
        "--max-executions",
        &max,
        "--json",
        json.to_str().unwrap(),
        "--out-dir",
        dir.join(format!("out-{algo}")).to_str().unwrap(),
        prog.to_str().unwrap(),
    ]);
    let v = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (v, o)
}

/// Tries of a sampling run of the corpora ([`run_default`]): a correct program is never
/// flagged in them under each algorithm, a buggy one is found. Fixed seed, so the same tries
/// each time; 100 rather than 200 since 2026-11-29, to keep CI well under 15 minutes.
pub const TRIES: u32 = 100;

/// `poscheck run` of [`TRIES`] tries (seed 1, two jobs) of `prog` under `algo` with `extra`
/// options, a JSON report in `dir` and saved schedules in `dir/out`; `adjust` may change
/// the command (its environment). Returns the one program's JSON entry and the output.
pub fn run_default(
    dir: &Path,
    prog: &Path,
    algo: &str,
    extra: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> (serde_json::Value, Output) {
    run_tries(dir, prog, algo, TRIES, extra, adjust)
}

/// [`run_default`] with `tries` tries: for programs whose every run costs a real wait (a thread
/// set aside after a quarter of the step timeout) and that have only a few schedules.
pub fn run_tries(
    dir: &Path,
    prog: &Path,
    algo: &str,
    tries: u32,
    extra: &[&str],
    adjust: impl FnOnce(&mut std::process::Command),
) -> (serde_json::Value, Output) {
    let json = dir.join(format!("{algo}.json"));
    let out = dir.join("out");
    let mut cmd = std::process::Command::new(POSCHECK);
    cmd.args(["run", "--json"])
        .arg(&json)
        .arg("--out-dir")
        .arg(&out)
        .args(["--algo", algo, "--tries", &tries.to_string()])
        .args(["--seed", "1", "--jobs", "2"])
        .args(extra)
        .arg(prog)
        // A Rust program under test must not inherit the test environment's backtrace
        // setting: symbolising a panic's backtrace is long CPU work after the bug, which a
        // loaded machine stretched past the spin-wait limit (a `partial` run); and a replay
        // must see the environment its run saw (the backtrace's unwinding is controlled:
        // other steps). So every poscheck command of these tests removes it.
        .env_remove("RUST_BACKTRACE");
    adjust(&mut cmd);
    let o = cmd.output().unwrap();
    let report: serde_json::Value = std::fs::read_to_string(&json)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| panic!("no JSON report: {}", text(&o)));
    (report["programs"][0].clone(), o)
}

/// How many runs of a program's JSON entry `p` ended with outcome `kind`.
pub fn outcome_count(p: &serde_json::Value, kind: &str) -> u64 {
    p["outcomes"][kind].as_u64().unwrap_or(0)
}

/// `benchmarks/src/NAME.c` built once with `poscheck cc` (gcc, `-O1 -g`) into
/// `CARGO_TARGET_TMPDIR/DIR` (one directory per test file: test binaries run in parallel).
pub fn suite_program(dir: &str, name: &str) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    require_libpos();
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&d).unwrap();
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let bin = d.join(name);
    if bin.is_file() {
        return bin;
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../benchmarks/src")
        .join(format!("{name}.c"));
    let o = poscheck(&[
        "cc",
        "-O1",
        "-g",
        "-pthread",
        "-o",
        bin.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "poscheck cc {name}: {}", text(&o));
    bin
}

/// A fresh directory that outlives the call that made it (its caller reads the saved
/// schedules in it): under the build's target/tmp, not the system temporary directory.
pub fn kept_dir() -> PathBuf {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
        .keep()
}

/// `poscheck run ARGS BIN` with a JSON report and saved schedules in a fresh directory: the
/// one program's JSON entry, its saved schedule (if a bug was hit) and the output.
pub fn run_report(bin: &Path, args: &[&str]) -> (serde_json::Value, Option<PathBuf>, Output) {
    let dir = kept_dir();
    let json = dir.join("r.json");
    let out = dir.join("out");
    let o = std::process::Command::new(POSCHECK)
        .env_remove("RUST_BACKTRACE")
        .arg("run")
        .arg("--json")
        .arg(&json)
        .arg("--out-dir")
        .arg(&out)
        .args(args)
        .arg(bin)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("no JSON: {}", text(&o))),
    )
    .unwrap();
    let saved = std::fs::read_dir(&out).ok().and_then(|d| {
        d.map(|e| e.unwrap().path()).find(|p| {
            // The first bug's schedule, not its minimised copy (`NAME.min.json`).
            p.extension().is_some_and(|x| x == "json")
                && !p.to_string_lossy().ends_with(".min.json")
        })
    });
    (v["programs"][0].clone(), saved, o)
}

/// The saved schedule replays to its bug `times` times of `times`.
pub fn assert_replays(saved: &Path, times: u32) {
    let n = times.to_string();
    let o = poscheck(&["replay", "--times", &n, saved.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let want = format!("reproduced {times} of {times}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&want),
        "{}",
        text(&o)
    );
}

/// A correct program's [`TRIES`] tries ([`run_default`]): every run ok, none partial or at
/// the step limit, and scheduled (mean steps above its `threads`, main included). Prints the
/// figures.
pub fn assert_never_flagged(p: &serde_json::Value, o: &Output, what: &str, threads: u32) {
    let steps = p["mean_steps"].as_f64().unwrap_or(0.0);
    eprintln!(
        "correct {what}: ok {}/{TRIES}, mean steps {steps:.1}",
        outcome_count(p, "ok")
    );
    assert_eq!(
        outcome_count(p, "ok"),
        u64::from(TRIES),
        "{what}: {}",
        text(o)
    );
    assert_eq!(p["partial"].as_u64().unwrap_or(0), 0, "{what}: {p}");
    assert_eq!(p["step_limits"].as_u64().unwrap_or(0), 0, "{what}: {p}");
    assert!(steps > f64::from(threads), "{what}: scheduled? {p}");
}

/// Every program of `correct` — (compilers, file, threads including main) — built by
/// `build(dir, compiler, file)` with each of its compilers, under each of [`ALGOS`]:
/// [`assert_never_flagged`].
pub fn assert_all_never_flagged(
    correct: &[(&[&str], &str, u32)],
    build: impl Fn(&Path, &str, &str) -> PathBuf,
) {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (compilers, file, threads) in correct {
        for cc in *compilers {
            let prog = build(dir.path(), cc, file);
            for algo in ALGOS {
                let (p, o) = run_default(dir.path(), &prog, algo, &[], |_| {});
                assert_never_flagged(&p, &o, &format!("{cc} {file} under {algo}"), *threads);
            }
        }
    }
}

/// The C and the C++ compilers the corpora are built with.
pub const C_COMPILERS: &[&str] = &["gcc", "clang-14"];
pub const CXX_COMPILERS: &[&str] = &["g++", "clang++-14"];

/// Where corpus file `file` built with `compiler` goes in `dir`: one binary per (file,
/// compiler), e.g. `c11_counter_c_gcc`, `raii_cpp_gxx`.
#[allow(dead_code)]
pub fn corpus_binary(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    dir.join(format!(
        "{}_{}",
        file.replace(['/', '.'], "_"),
        compiler.replace('+', "x")
    ))
}

/// The language standard the corpus is built with: C++17 for a C++ compiler, else GNU C11.
#[allow(dead_code)]
pub fn corpus_std(compiler: &str) -> &'static str {
    if compiler.contains("++") {
        "-std=c++17"
    } else {
        "-std=gnu11"
    }
}

/// `compiler ARGS -o out src`, failing the test with the compiler's output if it fails.
pub fn compile(compiler: &str, args: &[&str], out: &Path, src: &Path) {
    let o = std::process::Command::new(compiler)
        .args(args)
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (scripts/install-deps.sh): {e}"));
    assert!(
        o.status.success(),
        "{compiler} {}: {}",
        src.display(),
        text(&o)
    );
}

/// Build `src` with `poscheck cc` (C) or `poscheck c++` at `cxx_std` (C++) over `compiler`,
/// `-O1 -pthread`, into `out`: memory accesses and atomics are scheduling points.
#[allow(dead_code)]
pub fn compile_instrumented(compiler: &str, cxx_std: &str, out: &Path, src: &Path) {
    let mut cmd = std::process::Command::new(POSCHECK);
    if src.extension().is_some_and(|e| e == "cpp") {
        cmd.args(["c++", cxx_std]).env("POSCHECK_CXX", compiler);
    } else {
        cmd.arg("cc").env("POSCHECK_CC", compiler);
    }
    let o = cmd
        .args(["-O1", "-pthread", "-o"])
        .arg(out)
        .arg(src)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{compiler} {}: {}",
        src.display(),
        text(&o)
    );
}

/// Build `file` of `tests/corpus/FOLDER/` with `compiler` into `dir` (see [`corpus_binary`]):
/// Rust with `-O --edition 2021`, C and C++ with the corpus standard, `-O1 -pthread`, and
/// `-fopenmp` for an OpenMP program (`omp` a word of its name: `ok_affinity_omp.c`).
#[allow(dead_code)]
pub fn build_corpus(folder: &str, dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let out = corpus_binary(dir, compiler, file);
    let openmp = Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.split('_').any(|w| w == "omp"));
    let args: &[&str] = if compiler == "rustc" {
        &["-O", "--edition", "2021"]
    } else if openmp {
        &[corpus_std(compiler), "-O1", "-pthread", "-fopenmp"]
    } else {
        &[corpus_std(compiler), "-O1", "-pthread"]
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(folder)
        .join(file);
    compile(compiler, args, &out, &src);
    out
}

/// A buggy program (`file`, built as `prog`) found both ways: ODPOR's exploration has a buggy
/// execution (exit 1), and [`TRIES`] tries of rw and of pos each end with `kind` at least once,
/// every other run ok. Prints the figures.
pub fn assert_found_by_odpor_and_sampling(dir: &Path, prog: &Path, file: &str, kind: &str) {
    let (o, v) = explore_report(dir, prog, "odpor");
    assert_eq!(o.status.code(), Some(1), "{file}: {}", text(&o));
    assert!(v["buggy"].as_u64().unwrap_or(0) >= 1, "{file}: {v}");
    for algo in ["rw", "pos"] {
        let (p, o) = run_default(dir, prog, algo, &[], |_| {});
        let (bugs, ok) = (outcome_count(&p, kind), outcome_count(&p, "ok"));
        eprintln!("buggy {file} under {algo}: {kind} {bugs}/{TRIES}, ok {ok}/{TRIES}");
        assert!(
            bugs > 0 && bugs + ok == u64::from(TRIES),
            "{file} {algo}: {}",
            text(&o)
        );
    }
}

/// `poscheck explore --algo ALGO --json` of `prog` (schedules under `dir`): its output and
/// JSON report, which must exist. Prints the counts.
#[allow(dead_code)]
pub fn explore_report(dir: &Path, prog: &Path, algo: &str) -> (Output, serde_json::Value) {
    let name = prog
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let json = dir.join(format!("{name}.{algo}.explore.json"));
    let o = std::process::Command::new(POSCHECK)
        .env_remove("RUST_BACKTRACE")
        .args(["explore", "--algo", algo, "--json"])
        .arg(&json)
        .arg("--out-dir")
        .arg(dir.join("out"))
        .arg(prog)
        .output()
        .expect("cannot run poscheck explore");
    let doc = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{name}: no JSON report ({e}): {}", text(&o)));
    let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
    eprintln!(
        "{algo} {name}: {} executions, {} buggy, complete {}",
        v["executions"], v["buggy"], v["complete"]
    );
    (o, v)
}

/// A buggy program is found by pos in 200 tries with outcome `kind`, and the saved schedule
/// replays it 20 of 20 times.
#[allow(dead_code)]
pub fn assert_pos_finds_and_replays(prog: &Path, kind: &str) {
    let (p, saved, o) = run_report(prog, &["--algo", "pos", "--tries", "200"]);
    assert!(outcome_count(&p, kind) > 0, "{}", text(&o));
    assert_replays(&saved.expect("a saved schedule"), 20);
}
