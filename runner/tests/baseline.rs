//! `poscheck baseline`: new results are checked against the bugs the baseline lists (exit 1
//! when one is lost or missing, 0 otherwise), `--update` writes the baseline, and results of
//! another seed or fewer tries are refused (exit 2). Also checks the baseline kept in the
//! repository is one for the nightly run's seed and at most its tries.

use crate::common;

use common::{poscheck, text};
use serde_json::json;
use std::path::Path;

fn compare_doc(hits: &[(&str, &str, u64)], seed: u64) -> serde_json::Value {
    let programs: Vec<_> = hits
        .iter()
        .map(|(n, e, h)| {
            json!({"name": n, "expect": e, "tries": 50, "hits": h,
                   "hit_ratio": *h as f64 / 50.0})
        })
        .collect();
    json!({"seed": seed, "tries": 50, "algos": ["pos"],
           "runs": [{"algo": "pos", "seed": seed, "tries": 50, "programs": programs}]})
}

fn write(dir: &Path, name: &str, v: &serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_lost_bug_fails_and_update_takes_the_new_results() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let base = d.join("b/pos-bugs.json");
    let base = base.to_str().unwrap();
    let night1 = write(
        d,
        "n1.json",
        &compare_doc(
            &[("a", "assert", 3), ("b", "deadlock", 1), ("ok", "none", 0)],
            9,
        ),
    );
    let o = poscheck(&["baseline", "--baseline", base, "--update", &night1]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    assert_eq!(
        b,
        json!({"algo": "pos", "tries": 50, "seed": 9, "programs": ["a", "b"]})
    );

    // Same bugs again, and one more: passes, the new one is reported.
    let night2 = write(
        d,
        "n2.json",
        &compare_doc(
            &[("a", "assert", 1), ("b", "deadlock", 2), ("c", "assert", 1)],
            9,
        ),
    );
    let o = poscheck(&["baseline", "--baseline", base, &night2]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("2 of 2 listed bug(s) found again"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("new (not in the baseline"),
        "{}",
        text(&o)
    );

    // b lost: exit 1, named.
    let night3 = write(
        d,
        "n3.json",
        &compare_doc(&[("a", "assert", 1), ("b", "deadlock", 0)], 9),
    );
    let o = poscheck(&["baseline", "--baseline", base, &night3]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("LOST: b"), "{}", text(&o));

    // b not in the results at all (a shard left out): exit 1 as well.
    let night4 = write(d, "n4.json", &compare_doc(&[("a", "assert", 1)], 9));
    let o = poscheck(&["baseline", "--baseline", base, &night4]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("MISSING: b"), "{}", text(&o));

    // Another seed is another session: a one-line error, exit 2.
    let other = write(
        d,
        "n5.json",
        &compare_doc(&[("a", "assert", 1), ("b", "deadlock", 1)], 10),
    );
    let o = poscheck(&["baseline", "--baseline", base, &other]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    // More tries with the same seed extend the session: checked.
    let mut longer = compare_doc(&[("a", "assert", 1), ("b", "deadlock", 1)], 9);
    longer["runs"][0]["tries"] = json!(500);
    let longer = write(d, "n6.json", &longer);
    let o = poscheck(&["baseline", "--baseline", base, &longer]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut fewer = compare_doc(&[("a", "assert", 1), ("b", "deadlock", 1)], 9);
    fewer["runs"][0]["tries"] = json!(10);
    let fewer = write(d, "n7.json", &fewer);
    let o = poscheck(&["baseline", "--baseline", base, &fewer]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn the_repository_baseline_matches_the_nightly_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let b: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("benchmarks/baseline/pos-bugs.json")).unwrap(),
    )
    .unwrap();
    let wf = std::fs::read_to_string(root.join(".github/workflows/nightly.yml")).unwrap();
    let env = |k: &str| -> u64 {
        wf.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{k}: ")))
            .and_then(|v| v.trim_matches('"').parse().ok())
            .unwrap_or_else(|| panic!("nightly.yml has no {k}"))
    };
    assert_eq!(b["algo"], "pos");
    assert!(b["tries"].as_u64().unwrap() <= env("TRIES"), "{b}");
    assert_eq!(b["seed"], env("SEED"));
    let manifest = std::fs::read_to_string(root.join("benchmarks/manifest.toml")).unwrap();
    let progs = b["programs"].as_array().unwrap();
    assert!(progs.len() >= 10, "{b}");
    for p in progs {
        let p = p.as_str().unwrap();
        assert!(
            manifest.contains(&format!("name = \"{p}\"")),
            "{p} is not in the suite"
        );
    }
    assert!(
        wf.contains("poscheck baseline"),
        "the nightly workflow checks the baseline"
    );
}
