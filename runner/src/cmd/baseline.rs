//! `poscheck baseline`: the bugs an algorithm must keep finding. A baseline file (kept in
//! the repository, `benchmarks/baseline/pos-bugs.json` for the nightly run) lists the
//! programs in which the algorithm hit a bug within a number of tries at a seed; `baseline
//! RESULTS.json...` checks new results (of `compare`, `merge` or `run --json`) against it and
//! fails (exit 1) when a listed program was not hit any more: a bug lost by a change. A
//! program hit that the baseline does not list is reported and passes; `--update` rewrites
//! the baseline from the results, which is how a bug newly found (or deliberately given up)
//! enters it.
//!
//! The results must have the baseline's seed and at least its tries: try `i` runs with seed
//! `try_seed(S, i)` whatever the number of tries (and the learning algorithms absorb their
//! feedback in try order, by batches), so the first N tries of a longer session are the N
//! tries of the baseline's session, and a bug hit within them is hit by the longer one too.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct BaselineArgs {
    /// The baseline file.
    #[arg(
        long,
        default_value = "benchmarks/baseline/pos-bugs.json",
        value_name = "FILE"
    )]
    pub baseline: PathBuf,
    /// The algorithm whose bugs the baseline lists.
    #[arg(long, default_value = "pos")]
    pub algo: String,
    /// Write the baseline from the results instead of checking them against it.
    #[arg(long)]
    pub update: bool,
    /// JSON written by `compare --json`, `merge --json` or `run --json` (several: the shards
    /// of one session).
    #[arg(required = true, value_name = "RESULTS.json")]
    pub results: Vec<PathBuf>,
}

/// The baseline file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub algo: String,
    pub tries: u64,
    pub seed: u64,
    /// The programs in which `algo` hit a bug, sorted by name.
    pub programs: Vec<String>,
}

/// One algorithm's results: the session's tries and seed, and per program its hits (bug-free
/// programs by the manifest left out: a hit there is flagged by `compare`, not a bug to keep).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Results {
    pub tries: u64,
    pub seed: u64,
    pub hits: BTreeMap<String, u64>,
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Check {
    /// Listed and still hit.
    pub kept: Vec<String>,
    /// Listed, in the results, not hit: a lost bug.
    pub lost: Vec<String>,
    /// Listed but not in the results at all (a shard missing?).
    pub absent: Vec<String>,
    /// Hit but not listed.
    pub new: Vec<String>,
}

/// `algo`'s results in the JSON documents `docs` (compare/merge: `runs`; run: the document).
pub fn results_of(docs: &[(String, Value)], algo: &str) -> Result<Results> {
    let mut found: Option<Results> = None;
    for (file, doc) in docs {
        let runs: Vec<&Value> = match doc.get("runs").and_then(Value::as_array) {
            Some(runs) => runs.iter().collect(),
            None => vec![doc],
        };
        for run in runs.into_iter().filter(|r| r["algo"] == algo) {
            let (Some(tries), Some(seed)) = (run["tries"].as_u64(), run["seed"].as_u64()) else {
                bail!("{file}: a run of {algo} without tries or seed: not a poscheck report");
            };
            let r = found.get_or_insert_with(|| Results {
                tries,
                seed,
                hits: BTreeMap::new(),
            });
            if (r.tries, r.seed) != (tries, seed) {
                bail!(
                    "{file}: {algo} ran {tries} tries with seed {seed}, another file {} tries \
                     with seed {}: not one session",
                    r.tries,
                    r.seed
                );
            }
            let programs = run["programs"]
                .as_array()
                .with_context(|| format!("{file}: a run of {algo} without programs"))?;
            for p in programs {
                let line = crate::cmd::compare::Line::parse(p)
                    .with_context(|| format!("{file}: a program of {algo}"))?;
                if line.expect.as_deref() == Some("none") {
                    continue;
                }
                *r.hits.entry(line.name).or_default() += line.hits;
            }
        }
    }
    found.with_context(|| format!("the results have no run of {algo}"))
}

/// The baseline `results` give.
pub fn baseline_of(algo: &str, r: &Results) -> Baseline {
    Baseline {
        algo: algo.to_string(),
        tries: r.tries,
        seed: r.seed,
        programs: r
            .hits
            .iter()
            .filter(|(_, h)| **h > 0)
            .map(|(n, _)| n.clone())
            .collect(),
    }
}

/// `r` against `b` (same tries and seed: checked by the caller).
pub fn check(b: &Baseline, r: &Results) -> Check {
    let mut c = Check::default();
    for p in &b.programs {
        match r.hits.get(p) {
            Some(0) => c.lost.push(p.clone()),
            Some(_) => c.kept.push(p.clone()),
            None => c.absent.push(p.clone()),
        }
    }
    c.new = r
        .hits
        .iter()
        .filter(|(n, h)| **h > 0 && !b.programs.contains(n))
        .map(|(n, _)| n.clone())
        .collect();
    c
}

fn load_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))
}

/// `poscheck baseline`: exit 0 when every listed bug was hit again (or with `--update`), 1
/// when one was lost or is missing from the results.
pub fn run(a: &BaselineArgs) -> Result<i32> {
    let docs = a
        .results
        .iter()
        .map(|p| Ok((p.display().to_string(), load_json(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let r = results_of(&docs, &a.algo)?;
    if a.update {
        let b = baseline_of(&a.algo, &r);
        if let Some(dir) = a.baseline.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(&b).context("cannot encode the baseline")?;
        std::fs::write(&a.baseline, json + "\n")
            .with_context(|| format!("cannot write {}", a.baseline.display()))?;
        sayln!(
            "baseline: wrote {} ({} at {} tries, seed {}: a bug in {} program(s))",
            a.baseline.display(),
            b.algo,
            b.tries,
            b.seed,
            b.programs.len()
        );
        return Ok(0);
    }
    let b: Baseline = serde_json::from_value(load_json(&a.baseline)?)
        .with_context(|| format!("{}: not a baseline file", a.baseline.display()))?;
    if b.algo != a.algo {
        bail!(
            "{} lists the bugs of {}, not {} (--algo)",
            a.baseline.display(),
            b.algo,
            a.algo
        );
    }
    if b.seed != r.seed || r.tries < b.tries {
        bail!(
            "the results are of {} tries with seed {}, the baseline {} of {} tries with seed {}: \
             the results need the same seed and at least as many tries",
            r.tries,
            r.seed,
            a.baseline.display(),
            b.tries,
            b.seed
        );
    }
    let c = check(&b, &r);
    sayln!(
        "baseline {}: {} at {} tries, seed {}: {} of {} listed bug(s) found again",
        a.baseline.display(),
        b.algo,
        b.tries,
        b.seed,
        c.kept.len(),
        b.programs.len()
    );
    for p in &c.lost {
        sayln!("LOST: {p}: {} no longer hits its bug", b.algo);
    }
    for p in &c.absent {
        sayln!("MISSING: {p}: not in the results (a shard left out?)");
    }
    if !c.new.is_empty() {
        sayln!(
            "new (not in the baseline; add them with --update): {}",
            c.new.join(", ")
        );
    }
    Ok(i32::from(!c.lost.is_empty() || !c.absent.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(algo: &str, lines: &[(&str, &str, u64)]) -> Value {
        json!({"algo": algo, "seed": 7, "tries": 100, "programs": lines.iter().map(|(n, e, h)| {
            json!({"name": n, "expect": e, "tries": 100, "hits": h, "hit_ratio": *h as f64 / 100.0})
        }).collect::<Vec<_>>()})
    }

    #[test]
    fn lost_absent_and_new_bugs_are_told_apart() {
        let shard1 = json!({"seed": 7, "tries": 100, "algos": ["pos", "rw"], "runs": [
            run("pos", &[("a", "assert", 5), ("b", "deadlock", 0)]),
            run("rw", &[("a", "assert", 0), ("c", "assert", 9)]),
        ]});
        let shard2 = run("pos", &[("c", "assert", 3), ("ok", "none", 4)]);
        let docs = vec![("1".to_string(), shard1), ("2".to_string(), shard2)];
        let r = results_of(&docs, "pos").unwrap();
        assert_eq!((r.tries, r.seed), (100, 7));
        // The bug-free program's hits (a flagged harness error) are no bug to keep.
        assert_eq!(r.hits.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        let b = baseline_of("pos", &r);
        assert_eq!(b.programs, ["a", "c"]);
        assert_eq!(check(&b, &r).lost, Vec::<String>::new());
        let older = Baseline {
            programs: vec!["a".into(), "b".into(), "d".into()],
            ..b.clone()
        };
        let c = check(&older, &r);
        assert_eq!(c.kept, ["a"]);
        assert_eq!(c.lost, ["b"]);
        assert_eq!(c.absent, ["d"]);
        assert_eq!(c.new, ["c"]);
        assert!(results_of(&docs, "pct3").is_err());
        let other_seed = vec![
            docs[0].clone(),
            (
                "3".into(),
                json!({"algo": "pos", "seed": 8, "tries": 100, "programs": []}),
            ),
        ];
        assert!(results_of(&other_seed, "pos").is_err());
    }
}
