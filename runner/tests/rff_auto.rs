//! `rff` (reads-from feedback fuzzing) and `auto` (the portfolio `run` uses by default) end to
//! end on suite programs built with `poscheck cc`: they find atomics and learned-race bugs in
//! the default points mode, their saved schedules replay, the result of a seed does not depend
//! on `--jobs` (the corpus and the learned sites change between batches only), every hit of
//! `auto` is attributed to one member, and correct programs are never flagged.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod common;

use common::{text, POSCHECK};

fn poscheck(args: &[&str]) -> Output {
    Command::new(POSCHECK).args(args).output().unwrap()
}

/// `benchmarks/src/NAME.c` built once with `poscheck cc` (gcc).
fn build(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let dir = DIR.get_or_init(|| {
        common::require_libpos();
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rff-auto");
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    let _g = LOCK.lock().unwrap();
    let bin = dir.join(name);
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

/// `poscheck run` of `tries` tries (seed 1) with `extra`; the program's JSON entry, the saved
/// schedule if any, and the output.
fn run(bin: &Path, tries: u32, extra: &[&str]) -> (Value, Option<PathBuf>, Output) {
    let dir = tempfile::tempdir().unwrap().keep();
    let json = dir.join("r.json");
    let out = dir.join("out");
    let n = tries.to_string();
    let mut args = vec![
        "run",
        "--json",
        json.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
        "--tries",
        &n,
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    args.push(bin.to_str().unwrap());
    let o = poscheck(&args);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(&json).unwrap_or_else(|_| panic!("no JSON: {}", text(&o))),
    )
    .unwrap();
    let saved = std::fs::read_dir(&out).ok().and_then(|d| {
        d.map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "json"))
    });
    (v["programs"][0].clone(), saved, o)
}

fn assert_replays(saved: &Path) {
    let o = poscheck(&["replay", "--times", "100", saved.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("reproduced 100 of 100"),
        "{}",
        text(&o)
    );
}

#[test]
fn rff_and_auto_find_atomic_and_learned_race_bugs_and_replay() {
    for name in ["cas_lost_update", "wsq_bad", "race_twice"] {
        let bin = build(name);
        for algo in ["rff", "auto"] {
            let (p, saved, o) = run(&bin, 400, &["--algo", algo]);
            let what = format!("{name} under {algo}: {}", text(&o));
            assert_eq!(p["points"], "auto", "{what}");
            assert!(p["hits"].as_u64().unwrap() > 0, "{what}");
            assert_eq!(p["first_outcome"]["kind"], "assert", "{what}");
            // The corpus grew from the runs' reads-from pairs.
            assert!(p["corpus"]["pairs"].as_u64().unwrap() > 0, "{what}");
            assert!(p["corpus"]["entries"].as_u64().unwrap() > 0, "{what}");
            assert_replays(&saved.expect("a saved schedule"));
        }
    }
}

#[test]
fn auto_attributes_every_try_and_hit_to_one_member() {
    let bin = build("cas_lost_update");
    let (p, _, o) = run(&bin, 400, &[]);
    let members = p["members"]
        .as_object()
        .unwrap_or_else(|| panic!("{}", text(&o)));
    // `run` defaults to auto: all five members ran a share of the tries.
    let names: Vec<&str> = members.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        ["pct3", "pos", "rapos", "rff", "surw"],
        "{}",
        text(&o)
    );
    let tries: u64 = members.values().map(|m| m["tries"].as_u64().unwrap()).sum();
    let hits: u64 = members.values().map(|m| m["hits"].as_u64().unwrap()).sum();
    assert_eq!(tries, 400);
    assert_eq!(hits, p["hits"].as_u64().unwrap());
    for m in members.values() {
        // 400 tries over 5 members: 80 expected each; 30 is more than 6 standard errors off.
        assert!(m["tries"].as_u64().unwrap() >= 30, "{members:?}");
    }
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("hits by member: pct3 "),
        "{}",
        text(&o)
    );
}

#[test]
fn a_seed_gives_the_same_result_whatever_the_jobs() {
    let bin = build("wsq_bad");
    for algo in ["rff", "auto"] {
        let (p, _, o2) = run(&bin, 160, &["--algo", algo, "--jobs", "2"]);
        let (q, _, o1) = run(&bin, 160, &["--algo", algo, "--jobs", "1"]);
        for key in [
            "hits",
            "first_hit",
            "outcomes",
            "mean_steps",
            "learned_sites",
            "corpus",
            "members",
        ] {
            assert_eq!(p[key], q[key], "{algo} {key}: {}\n{}", text(&o2), text(&o1));
        }
    }
}

#[test]
fn correct_programs_are_never_flagged() {
    for name in [
        "lockfree_ok",
        "atomic_counter_ok",
        "mutex_counter_ok",
        "bounded_buffer_ok",
        "sem_prodcons_ok",
    ] {
        let bin = build(name);
        for algo in ["rff", "auto"] {
            let (p, _, o) = run(&bin, 200, &["--algo", algo]);
            let what = format!("{name} under {algo}: {}", text(&o));
            assert_eq!(p["hits"], 0, "{what}");
            assert_eq!(p["outcomes"]["ok"], 200, "{what}");
        }
    }
}
