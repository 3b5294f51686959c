//! `--points auto` end to end (the default for `poscheck cc` builds): atomic operations are
//! scheduling points, the race detector learns racing sites from every try (in batches, so
//! the result of a seed does not depend on `--jobs`), saved schedules carry the site set
//! their try ran with and `replay` uses it.
//!
//! Programs from the suite: `cas_lost_update` (a lost update between an atomic load and a
//! CAS whose failure is ignored: no data race at all), `wsq_bad` (a Chase-Lev queue whose
//! bug needs points at plain accesses the tries learn), `race_twice` (atomics only) and the
//! correct `lockfree_ok`. Fixed seeds throughout. libpos.so must sit next to `poscheck`.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common;

use common::{assert_replays, run_report, text};

fn build(name: &str) -> PathBuf {
    common::suite_program("races-auto", name)
}

fn saved_points(saved: &Path) -> String {
    let s: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    s["points"].as_str().unwrap().to_string()
}

#[test]
fn lost_update_between_atomic_load_and_cas_is_found_in_the_default_mode() {
    let bin = build("cas_lost_update");
    for algo in common::ALGOS {
        let (p, saved, o) = run_report(&bin, &["--algo", algo, "--tries", "200", "--seed", "1"]);
        assert_eq!(p["points"], "auto", "{algo}: {}", text(&o));
        // No data race: nothing is learned, the atomics alone expose the window.
        assert_eq!(p["racing_sites"], 0, "{algo}: {}", text(&o));
        assert!(p["hits"].as_u64().unwrap() > 0, "{algo}: {}", text(&o));
        assert_eq!(p["first_outcome"]["kind"], "assert", "{algo}: {}", text(&o));
        let saved = saved.expect("a saved schedule");
        assert_eq!(saved_points(&saved), "auto");
        assert_replays(&saved, 20);
    }
    // Sync points only (the old fallback of `races` with no race found) never reach it.
    let (p, _, o) = run_report(&bin, &["--points", "sync", "--tries", "200", "--seed", "1"]);
    assert_eq!(p["hits"], 0, "{}", text(&o));
}

#[test]
fn races_mode_stops_at_atomics_too() {
    // race_twice has no data race: `races` profiling finds no site, yet its tries still
    // stop at the atomics (it used to fall back to sync points and miss the bug).
    let bin = build("race_twice");
    let (p, _, o) = run_report(
        &bin,
        &[
            "--points", "races", "--algo", "pos", "--tries", "200", "--seed", "1",
        ],
    );
    assert_eq!(p["points"], "races", "{}", text(&o));
    assert_eq!(p["racing_sites"], 0, "{}", text(&o));
    assert!(p["hits"].as_u64().unwrap() > 0, "{}", text(&o));
    let (p, _, o) = run_report(&bin, &["--algo", "pos", "--tries", "200", "--seed", "1"]);
    assert_eq!(p["points"], "auto", "{}", text(&o));
    assert!(p["hits"].as_u64().unwrap() > 0, "{}", text(&o));
}

#[test]
fn wsq_bad_is_found_from_learned_sites_and_replays_with_them() {
    let bin = build("wsq_bad");
    let args = ["--algo", "rw", "--tries", "200", "--seed", "1"];
    let (p, saved, o) = run_report(&bin, &[&args[..], &["--jobs", "2"]].concat());
    assert_eq!(p["points"], "auto", "{}", text(&o));
    let learned = p["learned_sites"].as_array().expect("learned sites");
    assert!(!learned.is_empty(), "{}", text(&o));
    for l in learned {
        assert!(l["pc"].as_str().unwrap().starts_with("0x"), "{l}");
        assert!(l["try_index"].as_u64().unwrap() < 200, "{l}");
    }
    // The first batch runs with no site at all: the bug needs learned ones, so it comes later.
    let first = p["first_hit"].as_u64().expect("wsq_bad hit in auto mode");
    assert!(
        first >= 16,
        "hit at try {first} before any site was learned"
    );
    let saved = saved.expect("a saved schedule");
    let points = saved_points(&saved);
    assert!(points.starts_with("auto:0x"), "{points}");
    assert_replays(&saved, 20);
    // Same seed, one worker: the same sites learned at the same tries, the same hits.
    let (q, _, o1) = run_report(&bin, &[&args[..], &["--jobs", "1"]].concat());
    for key in [
        "hits",
        "first_hit",
        "learned_sites",
        "racing_sites",
        "mean_steps",
    ] {
        assert_eq!(p[key], q[key], "{key}: {}\n{}", text(&o), text(&o1));
    }
}

#[test]
fn correct_lock_free_code_is_never_flagged() {
    let bin = build("lockfree_ok");
    for algo in common::ALGOS {
        let (p, _, o) = run_report(&bin, &["--algo", algo, "--tries", "200", "--seed", "7"]);
        assert_eq!(p["points"], "auto", "{algo}: {}", text(&o));
        assert_eq!(p["hits"], 0, "{algo}: {}", text(&o));
        let outcomes = p["outcomes"].as_object().unwrap();
        assert_eq!(outcomes.len(), 1, "{algo}: only ok runs: {}", text(&o));
        assert_eq!(outcomes["ok"], 200, "{algo}: {}", text(&o));
        // The atomics are points: far more than the 13 sync steps of the program.
        assert!(
            p["mean_steps"].as_f64().unwrap() > 20.0,
            "{algo}: {}",
            text(&o)
        );
    }
}
