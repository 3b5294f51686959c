//! Readable traces and schedule minimisation on four suite programs (lost_wakeup,
//! deadlock_2, reorder_3, atomicity_violation) with their manifest points, plus a bug-free
//! one: `run --algo pos --tries 1000 --seed 1` saves and minimises each first bug;
//! `replay --trace` shows every step with `file:line`; the minimised schedules have at most
//! two preemptions, reproduce the same bug 100 times of 100, and files without the new
//! fields replay as before.

use crate::common;

use common::{poscheck, text, POSCHECK};
use std::path::{Path, PathBuf};

const BUGGY: &[&str] = &[
    "lost_wakeup",
    "deadlock_2",
    "reorder_3",
    "atomicity_violation",
];
const CORRECT: &str = "mutex_counter_ok";

/// A suite directory with the five programs' manifest entries (copied from the real
/// manifest) and their binaries, built once.
fn mini_suite() -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace_minimize");
    let manifest = dir.join("manifest.toml");
    if manifest.is_file() {
        return dir;
    }
    for name in BUGGY.iter().chain([&CORRECT]) {
        common::suite_program("trace_minimize/bin", name);
    }
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks");
    let text = std::fs::read_to_string(real.join("manifest.toml")).unwrap();
    let mut out = String::new();
    for block in text.split("[[program]]").skip(1) {
        let named = |n: &str| block.contains(&format!("name = \"{n}\""));
        if BUGGY.iter().any(|n| named(n)) || named(CORRECT) {
            out.push_str("[[program]]");
            out.push_str(block);
        }
    }
    let src = dir.join("src");
    if !src.exists() {
        std::os::unix::fs::symlink(real.join("src").canonicalize().unwrap(), &src).unwrap();
    }
    std::fs::write(&manifest, out).unwrap();
    dir
}

/// The step lines of a `--trace` output (`  12  [0.1]  lock(mutex m)  a.c:3 in f`).
fn step_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u64>().is_ok())
                && t.contains('[')
        })
        .collect()
}

/// Whether `line` ends in `file.c:LINE in function`.
fn has_source_line(line: &str) -> bool {
    let Some((_, loc)) = line.rsplit_once(".c:") else {
        return false;
    };
    let digits: String = loc.chars().take_while(char::is_ascii_digit).collect();
    !digits.is_empty() && loc[digits.len()..].starts_with(" in ")
}

fn preemptions(schedule: &Path) -> usize {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schedule).unwrap()).unwrap();
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["preempt"] == serde_json::Value::Bool(true))
        .count()
}

#[test]
fn first_bugs_trace_with_source_lines_and_minimise_to_two_preemptions() {
    let suite = mini_suite();
    let out_dir = common::kept_dir();
    let o = std::process::Command::new(POSCHECK)
        .args([
            "run", "--algo", "pos", "--tries", "1000", "--seed", "1", "--jobs", "2",
        ])
        .arg("--out-dir")
        .arg(&out_dir)
        .arg(&suite)
        .output()
        .unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    // The bug-free program: no hit, nothing saved.
    let ok_line = stdout
        .lines()
        .find(|l| l.starts_with(CORRECT))
        .unwrap_or_else(|| panic!("{all}"));
    assert!(ok_line.contains(" 0 "), "{ok_line}");
    assert!(!out_dir.join(format!("{CORRECT}.pos.seed1.json")).exists());
    for name in BUGGY {
        let saved = out_dir.join(format!("{name}.pos.seed1.json"));
        let min = out_dir.join(format!("{name}.pos.seed1.min.json"));
        let s = saved.display().to_string();
        assert!(
            stdout.contains(&format!("(poscheck replay --trace {s})")),
            "{name}: the first-bug line points at replay --trace: {all}"
        );
        let m = min.display().to_string();
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("  minimised: ") && l.contains(&m))
                && min.is_file(),
            "{name}: minimised by default: {all}"
        );
        for file in [&saved, &min] {
            let r = poscheck(&["replay", "--trace", file.to_str().unwrap()]);
            let out = String::from_utf8_lossy(&r.stdout).into_owned();
            let lines = step_lines(&out);
            let steps: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            assert_eq!(
                lines.len(),
                steps["steps"].as_array().unwrap().len(),
                "{name}: one line per step: {}",
                text(&r)
            );
            for l in &lines {
                assert!(has_source_line(l), "{name}: no file:line in {l:?}: {out}");
            }
            assert!(out.contains("\noutcome: "), "{name}: {out}");
            assert!(out.contains("context switches"), "{name}: {out}");
        }
        let before = preemptions(&saved);
        let after = preemptions(&min);
        assert!(after <= 2, "{name}: {after} preemptions after minimising");
        assert!(after <= before.max(after), "{name}");
        // The minimised schedule is the same bug, every time.
        let r = poscheck(&["replay", "--times", "20", min.to_str().unwrap()]);
        let rt = text(&r);
        assert_eq!(r.status.code(), Some(1), "{name}: {rt}");
        assert!(rt.contains("reproduced 20 of 20"), "{name}: {rt}");
        let orig: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&min).unwrap()).unwrap();
        assert_eq!(orig["outcome"], m["outcome"], "{name}");
        if orig["outcome"] == "assert" {
            assert_eq!(orig["detail"], m["detail"], "{name}: the same assertion");
        }
        assert_eq!(m["minimized_from"].as_str(), Some(s.as_str()), "{name}");
    }
    // `minimize` itself on one of them, with -o: before/after counts and the trace.
    let src = out_dir.join("reorder_3.pos.seed1.json");
    let dst = out_dir.join("again.json");
    let r = poscheck(&[
        "minimize",
        src.to_str().unwrap(),
        "-o",
        dst.to_str().unwrap(),
    ]);
    let rt = text(&r);
    assert!(r.status.success(), "{rt}");
    assert!(rt.contains("preemptions: "), "{rt}");
    assert!(rt.contains("after ("), "{rt}");
    assert!(preemptions(&dst) <= 2, "{rt}");
}

#[test]
fn schedules_without_the_new_fields_replay_as_before() {
    let suite = mini_suite();
    let out_dir = common::kept_dir();
    let o = std::process::Command::new(POSCHECK)
        .args([
            "run",
            "--algo",
            "pos",
            "--tries",
            "300",
            "--seed",
            "1",
            "--jobs",
            "2",
            "--no-minimize",
        ])
        .arg("--out-dir")
        .arg(&out_dir)
        .arg(&suite)
        .output()
        .unwrap();
    let all = text(&o);
    assert!(!all.contains("minimised:"), "--no-minimize: {all}");
    for name in BUGGY {
        let saved = out_dir.join(format!("{name}.pos.seed1.json"));
        assert!(!out_dir.join(format!("{name}.pos.seed1.min.json")).exists());
        // Strip what this version adds (pc, obj, obj2, preempt): the file of an older poscheck.
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
        for s in v["steps"].as_array_mut().unwrap() {
            let o = s.as_object_mut().unwrap();
            o.remove("pc");
            o.remove("obj");
            o.remove("obj2");
            o.remove("preempt");
            assert_eq!(o.len(), 3, "{name}: tid, thread, op");
        }
        let old = out_dir.join(format!("{name}.old.json"));
        std::fs::write(&old, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        common::assert_replays(&old, 5);
        // The trace of the old file shows the same steps, with source lines (the replay
        // records them) and the same preemptions as the new file.
        let a = poscheck(&["replay", "--trace", old.to_str().unwrap()]);
        let b = poscheck(&["replay", "--trace", saved.to_str().unwrap()]);
        let (a, b) = (
            String::from_utf8_lossy(&a.stdout).into_owned(),
            String::from_utf8_lossy(&b.stdout).into_owned(),
        );
        assert_eq!(step_lines(&a), step_lines(&b), "{name}");
        // And minimising the old file derives the preemptions by replay.
        let m = poscheck(&["minimize", old.to_str().unwrap()]);
        assert!(m.status.success(), "{name}: {}", text(&m));
        assert!(preemptions(&out_dir.join(format!("{name}.old.min.json"))) <= 2);
    }
}

#[test]
fn bad_input_is_one_line_and_no_panic() {
    let dir = common::kept_dir();
    let missing = dir.join("nope.json");
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{not json").unwrap();
    for args in [
        vec!["minimize", missing.to_str().unwrap()],
        vec!["minimize", junk.to_str().unwrap()],
        vec!["replay", "--trace", junk.to_str().unwrap()],
    ] {
        let o = poscheck(&args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!o.status.success(), "{args:?}: {}", text(&o));
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// A C++ program with iostreams (g++ and clang++-14): its first bug's schedule replays under
/// `replay --trace`, whose runs are decided over the socket while `run`'s are decided in the
/// program. libstdc++ calls `pthread_once` in its locale set-up only once the process has
/// threads; before libpos cleared glibc's single-threaded flag in every mode, the trace
/// replay diverged at step 1 (the run had a thread of libpos's, the replay none).
#[test]
fn a_cxx_program_with_iostreams_replays_under_trace() {
    common::require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for cc in common::CXX_COMPILERS {
        let prog = common::build_corpus("trace", dir.path(), cc, "bug_iostream_lost_update.cpp");
        let (p, o) = common::run_tries(dir.path(), &prog, "pos", 50, &["--no-minimize"], |_| {});
        assert!(
            common::outcome_count(&p, "assert") > 0,
            "{cc}: {}",
            text(&o)
        );
        let schedule = p["schedule"].as_str().expect("a saved schedule");
        let r = poscheck(&["replay", "--trace", schedule]);
        let t = text(&r);
        assert!(
            t.contains("recorded outcome assert: reproduced 1 of 1 times"),
            "{cc}: {t}"
        );
        assert!(
            t.contains("bug_iostream_lost_update.cpp:"),
            "{cc}: source lines: {t}"
        );
    }
}

/// A run cut at the step limit and saved as a bug (`--step-limit-is-bug`) replays to that
/// same limit and counts as reproduced; before 2026-11-29 every replay "diverged" where the
/// schedule ended, since the program went on. An explicit `--max-steps` still wins.
#[test]
fn a_step_limit_schedule_replays_to_its_limit() {
    let prog = common::suite_program("trace_minimize/bin", CORRECT);
    let (_, saved, o) = common::run_report(
        &prog,
        &[
            "--algo",
            "pos",
            "--tries",
            "1",
            "--seed",
            "1",
            "--max-steps",
            "30",
            "--step-limit-is-bug",
            "--no-minimize",
        ],
    );
    assert!(
        text(&o).contains("step limit: 30 scheduling steps"),
        "{}",
        text(&o)
    );
    let saved = saved.expect("a saved schedule");
    let saved = saved.to_str().unwrap();
    for extra in [&[][..], &["--trace"][..]] {
        let mut args = vec!["replay", "--times", "3"];
        args.extend_from_slice(extra);
        args.push(saved);
        let r = poscheck(&args);
        assert!(
            text(&r).contains("recorded outcome step-limit: reproduced 3 of 3 times"),
            "{extra:?}: {}",
            text(&r)
        );
    }
    let r = poscheck(&["replay", "--max-steps", "1000", saved]);
    assert!(
        text(&r).contains("schedule ended at step 30 but the program continues"),
        "{}",
        text(&r)
    );
}
