//! `poscheck races --classify` end to end on small C programs of `tests/corpus/classify/`:
//! a benign race (two threads write the same value), a statistics counter nobody prints
//! (both harmless), a "last to finish" record that only changes the output (harmful, with the
//! first differing line), a lost update asserted after the joins (harmful, and the saved reversed
//! schedule replays the assertion 20 of 20 times), a race-free program (no race), and with
//! `--sync` on an uninstrumented build a lock-order inversion (the reversed lock
//! acquisition deadlocks), and a cycle of three locks (three tellers transferring around a
//! ring) that no single reversal deadlocks and two do (`--depth 2`: harmful together), next
//! to its correct version (one global lock order: no pair is harmful). Every run gets its own TMPDIR, which must be empty afterwards: the
//! command leaves no temporary file behind. libpos.so must sit next to `poscheck`.

use crate::common;

use common::TRIES;

use common::{assert_replays, require_libpos, text, POSCHECK};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn corpus(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/classify")
        .join(file)
}

/// `tests/corpus/classify/NAME.c` built with `poscheck cc` (instrumented) or plain gcc.
fn build(name: &str, instrumented: bool) -> PathBuf {
    require_libpos();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("races-classify");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(if instrumented {
        name.to_string()
    } else {
        format!("{name}_plain")
    });
    let src = corpus(&format!("{name}.c"));
    // Tests run in parallel and build the same programs: each builds into its own file and
    // renames it into place, so no test runs a binary another one is still writing.
    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    let part = dir.join(format!(
        ".{}.{}.{}",
        bin.file_name().unwrap().to_string_lossy(),
        std::process::id(),
        BUILDS.fetch_add(1, Ordering::Relaxed)
    ));
    let o = if instrumented {
        Command::new(POSCHECK)
            .args(["cc", "-O1", "-g", "-pthread", "-o"])
            .arg(&part)
            .arg(&src)
            .output()
            .unwrap()
    } else {
        Command::new("gcc")
            .args(["-O1", "-pthread", "-o"])
            .arg(&part)
            .arg(&src)
            .output()
            .unwrap()
    };
    assert!(o.status.success(), "building {name}: {}", text(&o));
    std::fs::rename(&part, &bin).unwrap();
    bin
}

/// `poscheck races --classify EXTRA BIN` with a JSON report, saved schedules and TMPDIR in a
/// fresh directory: the JSON document, the output and the directory.
fn classify(bin: &Path, extra: &[&str]) -> (Value, Output, PathBuf) {
    let dir = common::kept_dir();
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let json = dir.join("classify.json");
    let o = Command::new(POSCHECK)
        .args(["races", "--classify", "--json"])
        .arg(&json)
        .arg("--out-dir")
        .arg(dir.join("out"))
        .args(extra)
        .arg(bin)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(
        left.is_empty(),
        "temporary files left: {left:?}\n{}",
        text(&o)
    );
    let doc = std::fs::read_to_string(&json)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| panic!("no JSON report: {}", text(&o)));
    (doc, o, dir)
}

fn classes(doc: &Value) -> Vec<String> {
    doc["races"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["reversed"].as_array().unwrap().iter())
        .map(|r| r["class"].as_str().unwrap().to_string())
        .collect()
}

fn assert_harmless(name: &str, variable: &str) {
    let bin = build(name, true);
    let (doc, o, _) = classify(&bin, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let races = doc["races"].as_array().unwrap();
    assert!(
        !races.is_empty(),
        "the recorded run has the race: {}",
        text(&o)
    );
    for g in races {
        assert_eq!(g["kind"], "data", "{g}");
        assert_eq!(g["variable"], variable, "{g}");
    }
    let c = classes(&doc);
    assert!(!c.is_empty(), "{}", text(&o));
    assert!(c.iter().all(|c| c == "harmless"), "{c:?}: {}", text(&o));
    assert_eq!(doc["harmful"], 0);
    assert_eq!(doc["depth"], 2, "pairs are tried by default");
    assert_eq!(doc["harmful_pairs"], 0, "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("({variable})")) && out.contains(&format!("{name}.c:")),
        "the sites are symbolised as `poscheck races` prints them: {out}"
    );
}

#[test]
fn two_threads_writing_the_same_value_is_a_harmless_race() {
    assert_harmless("benign_flag", "work_started");
}

#[test]
fn a_statistics_counter_nobody_prints_is_a_harmless_race() {
    assert_harmless("benign_stats", "jobs_seen");
}

#[test]
fn a_lost_update_checked_after_the_joins_is_a_harmful_race_that_replays() {
    let bin = build("lost_update", true);
    let (doc, o, _) = classify(&bin, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(doc["original_kind"], "ok", "the default schedule is serial");
    let harmful: Vec<&Value> = doc["races"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["reversed"].as_array().unwrap().iter())
        .filter(|r| r["class"] == "harmful")
        .collect();
    assert!(!harmful.is_empty(), "{}", text(&o));
    for r in &harmful {
        let what = r["detail"].as_str().unwrap();
        assert!(
            what.starts_with("outcome ok (exit code 0) -> assertion failed:")
                && what.contains("balance == 130"),
            "{what}"
        );
        let saved = Path::new(r["schedule"].as_str().unwrap());
        assert_replays(saved, 20);
    }
    // The recorded run's schedule is saved too and replays to its outcome, ok.
    let original = doc["original_schedule"].as_str().expect("saved");
    let o2 = common::poscheck(&["replay", "--times", "5", original]);
    assert!(
        String::from_utf8_lossy(&o2.stdout).contains("recorded outcome ok: reproduced 5 of 5"),
        "{}",
        text(&o2)
    );
    // Not every reordering of the increments loses one: the serial one (thread 2 first) is
    // harmless, and is classified so.
    assert!(
        classes(&doc).iter().any(|c| c == "harmless"),
        "{}",
        text(&o)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("poscheck replay "));
}

#[test]
fn a_race_that_only_changes_the_output_is_harmful_and_says_where() {
    let bin = build("last_finisher", true);
    let (doc, o, _) = classify(&bin, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = &doc["races"][0]["reversed"][0];
    assert_eq!(r["class"], "harmful", "{}", text(&o));
    assert_eq!(r["outcome_kind"], "ok", "the reversed run does not fail");
    assert_eq!(
        r["detail"],
        "output differs at line 2: \"last to finish: worker 2\" vs \"last to finish: worker 1\"",
        "{}",
        text(&o)
    );
}

#[test]
fn a_race_free_program_has_no_race_to_classify() {
    let bin = build("race_free", true);
    for extra in [&[][..], &["--points", "mem"][..]] {
        let (doc, o, _) = classify(&bin, extra);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(doc["races"].as_array().unwrap().len(), 0, "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("0 race(s)"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn with_sync_a_lock_order_inversion_is_a_harmful_conflict_that_deadlocks() {
    let bin = build("lock_order", false);
    // Uninstrumented: only synchronisation can be classified, and only on request.
    let o = common::poscheck(&["races", "--classify", bin.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one-line error: {err}");
    assert!(err.contains("--sync"), "{err}");

    let (doc, o, _) = classify(&bin, &["--sync"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(doc["points"], "sync");
    let g = &doc["races"][0];
    assert_eq!(g["kind"], "sync", "{g}");
    let r = &g["reversed"][0];
    assert_eq!(r["class"], "harmful", "{r}");
    assert_eq!(r["detail"], "outcome ok (exit code 0) -> deadlock", "{r}");
    assert_replays(Path::new(r["schedule"].as_str().unwrap()), 20);
}

/// The reversals of a race harmless alone tried together with another race: every pair
/// found harmful, with both races named, its final run a deadlock replaying 20 of 20.
fn together(doc: &Value) -> Vec<(usize, Value)> {
    let mut out = Vec::new();
    for (g, group) in doc["races"].as_array().unwrap().iter().enumerate() {
        for r in group["reversed"].as_array().unwrap() {
            if !r["together"].is_null() {
                assert_eq!(r["class"], "harmless", "single classes unchanged: {r}");
                out.push((g + 1, r["together"].clone()));
            }
        }
    }
    out
}

#[test]
fn a_cycle_of_three_locks_is_harmful_only_as_a_pair_of_reversals() {
    let bin = build("transfer_ring", false);
    // One reversal at a time: every lock-order swap of the serial run is harmless.
    let (doc, o, _) = classify(&bin, &["--sync", "--depth", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(doc["races"].as_array().unwrap().len(), 3, "{}", text(&o));
    assert_eq!(doc["harmful"], 0, "{}", text(&o));
    assert_eq!(doc["harmless"], 3, "{}", text(&o));
    assert_eq!(doc["pair_runs"], 0);
    assert!(together(&doc).is_empty());

    // Two at a time (the default): the deadlock, named as a pair.
    let (doc, o, _) = classify(&bin, &["--sync"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        doc["harmful"],
        0,
        "still no race harmful alone: {}",
        text(&o)
    );
    let pairs = together(&doc);
    assert!(!pairs.is_empty(), "{}", text(&o));
    assert_eq!(doc["harmful_pairs"], pairs.len());
    for (own, t) in &pairs {
        assert_eq!(t["detail"], "outcome ok (exit code 0) -> deadlock", "{t}");
        assert_eq!(t["outcome_kind"], "deadlock");
        let other = t["race"]
            .as_u64()
            .expect("the other race is one of the report's") as usize;
        assert_ne!(other, *own, "two different site pairs: {t}");
        assert!(
            String::from_utf8_lossy(&o.stdout)
                .contains(&format!("harmful together with race {other}")),
            "{}",
            text(&o)
        );
        assert_replays(Path::new(t["schedule"].as_str().unwrap()), 20);
    }
    // --depth is 1 or 2, with a one-line error otherwise.
    let o = common::poscheck(&[
        "races",
        "--classify",
        "--sync",
        "--depth",
        "3",
        bin.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);
}

#[test]
fn with_one_global_lock_order_no_pair_of_reversals_is_harmful() {
    let bin = build("transfer_ring_ordered", false);
    let (doc, o, _) = classify(&bin, &["--sync"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!classes(&doc).is_empty(), "{}", text(&o));
    assert_eq!(doc["harmful"], 0, "{}", text(&o));
    assert_eq!(doc["harmful_pairs"], 0, "{}", text(&o));
    assert!(
        doc["pair_runs"].as_u64().unwrap() > 0,
        "pairs were tried: {}",
        text(&o)
    );
}

/// The corpus programs themselves, as every corpus test checks them: the correct ones
/// (the benign races change nothing the program shows) give no bug in 100 tries of each
/// algorithm and no run takes the step timeout; the buggy ones are found and their saved
/// schedules replay 20 of 20 times.
#[test]
fn the_corpus_programs_are_what_they_claim_under_sampling() {
    let dir = tempfile::tempdir().unwrap();
    for (name, instrumented) in [
        ("benign_flag", true),
        ("benign_stats", true),
        ("race_free", true),
        ("last_finisher", true),
        ("lock_order", false),
        ("transfer_ring", false),
        ("transfer_ring_ordered", false),
    ] {
        let prog = build(name, instrumented);
        for algo in common::ALGOS {
            let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
            let want = if name == "lock_order" || name == "transfer_ring" {
                "deadlock"
            } else {
                "ok"
            };
            if want == "ok" {
                assert_eq!(
                    common::outcome_count(&p, "ok"),
                    u64::from(TRIES),
                    "{name} {algo}: {}",
                    text(&o)
                );
                continue;
            }
            assert!(
                common::outcome_count(&p, want) > 0,
                "{name} {algo}: {}",
                text(&o)
            );
            assert_replays(Path::new(p["schedule"].as_str().unwrap()), 20);
        }
    }
    let prog = build("lost_update", true);
    for algo in common::ALGOS {
        let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
        assert!(
            common::outcome_count(&p, "assert") > 0,
            "lost_update {algo}: {}",
            text(&o)
        );
        assert_replays(Path::new(p["schedule"].as_str().unwrap()), 20);
    }
}
