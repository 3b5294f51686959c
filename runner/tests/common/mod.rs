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
        .output()
        .unwrap()
}

/// The algorithms every corpus test runs: the three classic samplers and `auto`, the
/// default of `run` (its members pos, surw, pct3, rff and rapos share the tries).
pub const ALGOS: &[&str] = &["rw", "pct3", "pos", "auto"];

/// `poscheck run` of 200 tries (seed 1, two jobs) of `prog` under `algo` with `extra`
/// options, a JSON report in `dir` and saved schedules in `dir/out`; `adjust` may change
/// the command (its environment). Returns the one program's JSON entry and the output.
pub fn run_200(
    dir: &Path,
    prog: &Path,
    algo: &str,
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
        .args([
            "--algo", algo, "--tries", "200", "--seed", "1", "--jobs", "2",
        ])
        .args(extra)
        .arg(prog);
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
