//! `poscheck merge FILES...`: combines the JSON of `compare --shard i/n` (or `run --shard`)
//! runs into one comparison, so that a suite's work can be split across machines (the
//! nightly workflow runs one job per algorithm × shard).
//!
//! The inputs must agree on the seed and the tries per program, and no program may appear
//! twice under the same algorithm; programs are put back in manifest order.

use crate::cmd::compare::{AlgoRun, CompareDoc, Line, Table};
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Read one input: a `compare` document, or the JSON of one `run`.
pub fn read(path: &Path) -> Result<Vec<AlgoRun>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if v.get("runs").is_some() {
        let d: CompareDoc = serde_json::from_value(v)
            .with_context(|| format!("{}: not a poscheck compare document", path.display()))?;
        Ok(d.runs)
    } else {
        let r: AlgoRun = serde_json::from_value(v).with_context(|| {
            format!(
                "{}: neither a poscheck compare document nor a run report",
                path.display()
            )
        })?;
        Ok(vec![r])
    }
}

/// Merge per-algorithm runs (from any number of shards) into one document with its table.
pub fn merge(inputs: Vec<(PathBuf, Vec<AlgoRun>)>) -> Result<CompareDoc> {
    let mut first: Option<(u64, u64, PathBuf)> = None;
    let mut runs: Vec<AlgoRun> = Vec::new();
    for (path, file_runs) in inputs {
        for r in file_runs {
            match &first {
                None => first = Some((r.seed, r.tries, path.clone())),
                Some((seed, tries, p0)) => {
                    if r.seed != *seed || r.tries != *tries {
                        bail!(
                            "{} ({}) has seed {} and {} tries, but {} has seed {seed} and \
                             {tries} tries: shards of different sessions cannot be merged",
                            path.display(),
                            r.algo,
                            r.seed,
                            r.tries,
                            p0.display()
                        );
                    }
                }
            }
            match runs.iter_mut().find(|m| m.algo == r.algo) {
                Some(m) => m.programs.extend(r.programs),
                None => runs.push(r),
            }
        }
    }
    let Some((seed, tries, _)) = first else {
        bail!("nothing to merge: the inputs hold no run");
    };
    for r in &mut runs {
        let mut lines = Vec::with_capacity(r.programs.len());
        for v in &r.programs {
            lines.push(Line::parse(v).with_context(|| format!("in the {} runs", r.algo))?);
        }
        let mut seen = BTreeSet::new();
        for l in &lines {
            if !seen.insert(l.name.as_str()) {
                bail!(
                    "program {} appears twice under {} (overlapping shards?)",
                    l.name,
                    r.algo
                );
            }
        }
        let mut order: Vec<usize> = (0..lines.len()).collect();
        order.sort_by(|&a, &b| {
            (lines[a].index, &lines[a].name).cmp(&(lines[b].index, &lines[b].name))
        });
        r.programs = order.iter().map(|&k| r.programs[k].clone()).collect();
    }
    let names = |r: &AlgoRun| -> BTreeSet<String> {
        r.programs
            .iter()
            .filter_map(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string))
            .collect()
    };
    if let Some(r0) = runs.first() {
        let n0 = names(r0);
        for r in &runs[1..] {
            if names(r) != n0 {
                eprintln!(
                    "poscheck: warning: {} and {} cover different programs (a shard is \
                     missing?); their cells show -",
                    r0.algo, r.algo
                );
            }
        }
    }
    let table = Table::build(&runs)?;
    Ok(CompareDoc {
        seed,
        tries,
        shard: None,
        algos: runs.iter().map(|r| r.algo.clone()).collect(),
        runs,
        table: Some(table),
        interrupted: false,
    })
}

/// `poscheck merge`: print the merged table, optionally write the merged JSON.
pub fn cmd(a: &crate::cli::MergeArgs) -> Result<i32> {
    let mut inputs = Vec::new();
    for f in &a.files {
        inputs.push((f.clone(), read(f)?));
    }
    let doc = merge(inputs)?;
    if let Some(t) = &doc.table {
        sayln!(
            "poscheck merge: {} file(s), algos={} seed={} tries={}",
            a.files.len(),
            doc.algos.join(","),
            doc.seed,
            doc.tries
        );
        say!("{}", t.render(doc.tries, doc.seed));
    }
    if let Some(path) = &a.json {
        crate::cmd::compare::write_doc(&doc, path)?;
    }
    if let Some(path) = &a.html {
        crate::report::html::write(vec![crate::report::html::Input::of("merge", &doc)?], path)?;
        sayln!("poscheck: report written to {}", path.display());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(algo: &str, seed: u64, progs: &[(&str, usize, u64)]) -> AlgoRun {
        AlgoRun {
            algo: algo.into(),
            seed,
            tries: 10,
            programs: progs
                .iter()
                .map(|(n, k, h)| {
                    json!({"name": n, "index": k, "expect": "assert", "tries": 10, "hits": h,
                           "hit_ratio": *h as f64 / 10.0})
                })
                .collect(),
        }
    }

    #[test]
    fn shards_merge_in_manifest_order() {
        let a = (
            PathBuf::from("a"),
            vec![run("rw", 1, &[("p0", 0, 1), ("p2", 2, 3)])],
        );
        let b = (PathBuf::from("b"), vec![run("rw", 1, &[("p1", 1, 2)])]);
        let d = merge(vec![b, a]).unwrap();
        assert_eq!(d.algos, vec!["rw".to_string()]);
        let names: Vec<&str> = d.runs[0]
            .programs
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["p0", "p1", "p2"]);
        assert_eq!(d.table.unwrap().bugs_hit, vec![3]);
    }

    #[test]
    fn refuses_mixed_sessions_and_duplicates() {
        let a = (PathBuf::from("a"), vec![run("rw", 1, &[("p0", 0, 1)])]);
        let b = (PathBuf::from("b"), vec![run("rw", 2, &[("p1", 1, 1)])]);
        let e = merge(vec![a.clone(), b]).unwrap_err();
        assert!(format!("{e:#}").contains("different sessions"), "{e:#}");
        let e = merge(vec![a.clone(), a]).unwrap_err();
        assert!(format!("{e:#}").contains("appears twice"), "{e:#}");
        assert!(merge(vec![]).is_err());
    }
}
