//! The benchmark harness end to end: `poscheck build` of a small suite cut from
//! `benchmarks/`, a deterministic `compare` (fixed seed) with asserted hits, `--shard` +
//! `merge` equal to the unsharded session, and manifest expectation flags in `run DIR`.
//!
//! libpos.so must sit next to the `poscheck` binary (`cargo build -p pos-preload`, same
//! profile), as for the other end-to-end tests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common;

use common::{text, POSCHECK};

/// The suite programs the tests use (all with sync-point bugs, one bug-free).
const PROGRAMS: &[&str] = &[
    "deadlock_2",
    "order_violation",
    "mutex_counter_ok",
    "lost_wakeup",
];

const SEED: &str = "7";
const TRIES: &str = "100";

fn benchmarks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks")
}

fn poscheck(dir: &Path, args: &[&str]) -> Output {
    Command::new(POSCHECK)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cannot run poscheck")
}

/// The `[[program]]` tables of the bundled manifest for `names`, as manifest text.
fn manifest_subset(names: &[&str], edit: impl Fn(&mut toml::Table)) -> String {
    let text = std::fs::read_to_string(benchmarks().join("manifest.toml")).unwrap();
    let all: toml::Table = toml::from_str(&text).unwrap();
    let mut progs: Vec<toml::Value> = all["program"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| names.contains(&p["name"].as_str().unwrap()))
        .cloned()
        .collect();
    // Keep the order of `names`, so shards are predictable.
    progs.sort_by_key(|p| names.iter().position(|n| *n == p["name"].as_str().unwrap()));
    for p in &mut progs {
        if let toml::Value::Table(t) = p {
            edit(t);
        }
    }
    let mut doc = toml::Table::new();
    doc.insert("program".into(), toml::Value::Array(progs));
    toml::to_string(&doc).unwrap()
}

/// A suite directory with the [`PROGRAMS`], built once per test binary with `poscheck build`.
fn suite() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = Path::new(POSCHECK).with_file_name("libpos.so");
        assert!(lib.is_file(), "{} is missing", lib.display());
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-suite");
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        for n in PROGRAMS {
            let from = benchmarks().join("src").join(format!("{n}.c"));
            std::fs::copy(&from, src.join(format!("{n}.c"))).unwrap();
        }
        for e in std::fs::read_dir(benchmarks().join("src")).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "h") {
                std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
            }
        }
        std::fs::write(dir.join("manifest.toml"), manifest_subset(PROGRAMS, |_| {})).unwrap();
        let out = poscheck(&dir, &["build", dir.to_str().unwrap()]);
        assert!(out.status.success(), "build failed: {}", text(&out));
        // Everything is up to date now: a second build compiles nothing.
        let again = poscheck(&dir, &["build", dir.to_str().unwrap()]);
        assert!(again.status.success(), "{}", text(&again));
        assert!(
            text(&again).contains(&format!("0 built, {} up to date", PROGRAMS.len())),
            "{}",
            text(&again)
        );
        dir
    })
}

/// `compare --json` over `args`; the parsed document.
fn compare(tag: &str, extra: &[&str]) -> Value {
    let dir = suite();
    let json = dir.join(format!("{tag}.json"));
    let mut a = vec![
        "compare", "--algos", "rw,pos", "--tries", TRIES, "--seed", SEED, "--jobs", "2", "--json",
    ];
    a.push(json.to_str().unwrap());
    let out_dir = dir.join(format!("out-{tag}"));
    a.extend_from_slice(&["--out-dir", out_dir.to_str().unwrap()]);
    a.extend_from_slice(extra);
    a.push(dir.to_str().unwrap());
    let out = poscheck(dir, &a);
    assert_eq!(out.status.code(), Some(1), "bugs are found: {}", text(&out));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn row<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn deterministic_compare_hits_the_bugs_and_never_the_bug_free_program() {
    let doc = compare("whole", &[]);
    assert_eq!(doc["algos"], serde_json::json!(["rw", "pos"]));
    let t = &doc["table"];
    // 3 buggy programs, each hit by both algorithms within 100 tries.
    assert_eq!(t["buggy_programs"], 3);
    assert_eq!(t["bugs_hit"], serde_json::json!([3, 3]));
    for n in ["deadlock_2", "order_violation", "lost_wakeup"] {
        let r = row(&doc, n);
        for c in 0..2 {
            assert!(r["hits"][c].as_u64().unwrap() > 0, "{n}: {r}");
        }
    }
    let ok = row(&doc, "mutex_counter_ok");
    assert_eq!(ok["hits"], serde_json::json!([0, 0]));
    // Bug-free rows come last; no manifest mismatch is flagged.
    assert_eq!(t["rows"][3]["name"], "mutex_counter_ok");
    assert_eq!(t["flags"], serde_json::json!([]));
    // Buggy rows are sorted by their smallest ratio.
    let mins: Vec<f64> = t["rows"].as_array().unwrap()[..3]
        .iter()
        .map(|r| {
            r["ratios"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .fold(1.0, f64::min)
        })
        .collect();
    assert!(mins.windows(2).all(|w| w[0] <= w[1]), "{mins:?}");
    // Per algorithm, the run JSON of issue 3 with the manifest's expectations.
    let rw = &doc["runs"][0];
    assert_eq!(rw["algo"], "rw");
    assert_eq!(rw["programs"].as_array().unwrap().len(), 4);
    let d2 = &rw["programs"][0];
    assert_eq!(d2["name"], "deadlock_2");
    assert_eq!(d2["expect"], "deadlock");
    assert_eq!(d2["tries"], 100);
    assert_eq!(d2["outcomes"]["deadlock"], d2["hits"]);
}

#[test]
fn shards_merged_equal_the_unsharded_session() {
    let whole = compare("whole-for-merge", &[]);
    let s1 = compare("shard1", &["--shard", "1/2"]);
    let s2 = compare("shard2", &["--shard", "2/2"]);
    let names = |d: &Value| -> Vec<String> {
        d["runs"][0]["programs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Program k goes to shard (k mod 2) + 1.
    assert_eq!(names(&s1), ["deadlock_2", "mutex_counter_ok"]);
    assert_eq!(names(&s2), ["order_violation", "lost_wakeup"]);
    let dir = suite();
    let merged = dir.join("merged.json");
    let out = poscheck(
        dir,
        &[
            "merge",
            "--json",
            merged.to_str().unwrap(),
            dir.join("shard2.json").to_str().unwrap(),
            dir.join("shard1.json").to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("geomean"), "{}", text(&out));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(m["table"], whole["table"]);
    assert_eq!(names(&m), names(&whole));
    // Merging a shard with itself is refused.
    let dup = poscheck(
        dir,
        &[
            "merge",
            dir.join("shard1.json").to_str().unwrap(),
            dir.join("shard1.json").to_str().unwrap(),
        ],
    );
    assert_eq!(dup.status.code(), Some(2));
    assert!(text(&dup).contains("appears twice"), "{}", text(&dup));
}

#[test]
fn run_dir_flags_outcomes_the_manifest_does_not_expect() {
    // A second suite over the same binaries whose manifest is wrong on purpose: deadlock_2
    // "expects" an assertion and order_violation claims to be bug-free.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-wrong");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("bin");
    // The suite first, whether the link is there or not: the binaries are rebuilt once per
    // test binary (their sources are copied anew), and a link left by an earlier run of
    // the tests let this run start while another test rebuilt them ("not executable").
    let built = suite().join("bin");
    if !bin.exists() {
        std::os::unix::fs::symlink(built, &bin).unwrap();
    }
    let wrong = manifest_subset(
        &["deadlock_2", "order_violation", "mutex_counter_ok"],
        |t| match t["name"].as_str() {
            Some("deadlock_2") => {
                t.insert("expect".into(), "assert".into());
            }
            Some("order_violation") => {
                t.insert("expect".into(), "none".into());
            }
            _ => {}
        },
    );
    std::fs::write(dir.join("manifest.toml"), wrong).unwrap();
    let json = dir.join("run.json");
    let out = poscheck(
        &dir,
        &[
            "run",
            "--algo",
            "pos",
            "--tries",
            "50",
            "--seed",
            SEED,
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let progs = doc["programs"].as_array().unwrap();
    let flag = |n: &str| {
        progs.iter().find(|p| p["name"] == n).unwrap()["flag"]
            .as_str()
            .map(str::to_string)
    };
    let d2 = flag("deadlock_2").expect("deadlock_2 is flagged");
    assert!(
        d2.contains("expected assert") && d2.contains("deadlock="),
        "{d2}"
    );
    let ov = flag("order_violation").expect("order_violation is flagged");
    assert!(ov.starts_with("BUG-FREE PROGRAM REPORTED A BUG"), "{ov}");
    assert_eq!(flag("mutex_counter_ok"), None);
    assert!(text(&out).contains("FLAG"), "{}", text(&out));
    // --shard on run: only the second program of three.
    let out = poscheck(
        &dir,
        &[
            "run",
            "--algo",
            "rw",
            "--tries",
            "5",
            "--seed",
            SEED,
            "--shard",
            "2/3",
            "--json",
            json.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", text(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<&str> = doc["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["order_violation"]);
    assert_eq!(doc["programs"][0]["index"], 1);
}

/// The CI compare check: the whole bundled suite builds with `poscheck build` (so with
/// `poscheck cc`), and a small fixed-seed `compare` over all of it flags nothing, never hits
/// a bug-free program, and hits the suite's frequent bugs (each has a hit ratio of at least
/// 0.7 under pos, so 10 tries all miss with probability below 0.3^10 ≈ 6e-6).
#[test]
fn the_whole_suite_builds_and_a_small_compare_hits_its_frequent_bugs() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-full");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        benchmarks().join("manifest.toml"),
        dir.join("manifest.toml"),
    )
    .unwrap();
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for e in std::fs::read_dir(benchmarks().join("src")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
    }
    let out = poscheck(&dir, &["build", dir.to_str().unwrap()]);
    assert!(out.status.success(), "build failed: {}", text(&out));
    assert!(text(&out).contains(", 0 failed,"), "{}", text(&out));
    let json = dir.join("ci.json");
    let out = poscheck(
        &dir,
        &[
            "compare",
            "--algos",
            "pos",
            "--tries",
            "10",
            "--seed",
            SEED,
            "--jobs",
            "2",
            "--json",
            json.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &doc["table"];
    assert_eq!(t["flags"], serde_json::json!([]), "{}", text(&out));
    for r in t["rows"].as_array().unwrap() {
        if r["expect"] == "none" {
            assert_eq!(r["hits"][0], 0, "{r}");
        }
    }
    for n in [
        "order_violation",
        "barrier_phase",
        "sem_wrong_init",
        "lazy_init",
    ] {
        assert!(row(&doc, n)["hits"][0].as_u64().unwrap() > 0, "{n} not hit");
    }
}
