//! `rff` (reads-from feedback fuzzing) and `auto` (the portfolio `run` uses by default) end to
//! end on suite programs built with `poscheck cc`: they find atomics and learned-race bugs in
//! the default points mode, their saved schedules replay, the result of a seed does not depend
//! on `--jobs` (the corpus and the learned sites change between batches only), every hit of
//! `auto` is attributed to one member, and correct programs are never flagged.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

use common::{assert_replays, run_report, text};

fn build(name: &str) -> PathBuf {
    common::suite_program("rff-auto", name)
}

/// `poscheck run` of `tries` tries (seed 1) with `extra` ([`common::run_report`]).
fn run(bin: &Path, tries: u32, extra: &[&str]) -> (Value, Option<PathBuf>, Output) {
    let n = tries.to_string();
    run_report(bin, &[&["--tries", &n, "--seed", "1"][..], extra].concat())
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
            assert_replays(&saved.expect("a saved schedule"), 20);
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
