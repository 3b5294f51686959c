//! Running a list of programs under one algorithm (`run`, `compare`), checking what they did
//! against the manifest's expectation, and the algorithm-comparison table.
//!
//! The table has the shape of Table 3 of the POS paper (Yuan, Yang, Gu: "Partial Order Aware
//! Concurrency Sampling", CAV'18): a row per buggy program with its bug hit ratio under each
//! algorithm, rows sorted by their smallest ratio (hardest bugs first), the best ratio of each
//! row marked with `*`, then how many bugs each algorithm hit and the geometric mean of the
//! hit ratios. A ratio of zero would make the geometric mean zero, so a program an algorithm
//! never hit enters it as 1/(2·tries) (half of the smallest non-zero ratio the run could have
//! measured); the mean over the programs every algorithm hit needs no such substitution and
//! is printed as well.

use crate::report::MemberTally;
use crate::report::{self, ProgramReport, SavedSchedule, SessionReport};
use crate::suite::harness::{self, Plan, Tally};
use crate::suite::manifest::{Expect, Manifest, Shard};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One program to run.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    /// Absolute path of the binary.
    pub path: PathBuf,
    pub args: Vec<String>,
    /// Points mode from the manifest (`--points` overrides it).
    pub points: Option<String>,
    /// From the manifest; `None` for programs given by path.
    pub expect: Option<Expect>,
    /// The manifest's `backend` (`None`: auto, or a program given by path).
    pub backend: Option<crate::exec::session::Backend>,
    /// Position in the full list (manifest order), before sharding.
    pub index: usize,
    /// The source file, when known (a suite's manifest names it): where annotations point.
    pub source: Option<PathBuf>,
}

/// Session parameters shared by every program and algorithm.
#[derive(Clone, Debug)]
pub struct Session {
    /// The plan of one program; `algo`, `cfg.program`, `cfg.args` and `cfg.points` are set
    /// per job.
    pub plan: Plan,
    /// `--points`: overrides the manifest's points of every program.
    pub points: Option<String>,
    /// Where the first buggy schedule of each program is saved.
    pub out_dir: PathBuf,
    /// `--shard`: the part of the programs this session runs.
    pub shard: Option<Shard>,
}

impl Session {
    /// The session `run` and `compare` set up from their shared options: seed (fresh unless
    /// given), shard, a plan checked against every algorithm of `algos` (named by the option
    /// `flag` in errors), and the programs.
    pub fn prepare(
        a: &crate::cli::TriesArgs,
        algos: &[String],
        flag: &str,
    ) -> Result<(Session, Vec<Job>)> {
        let seed = a.seed.unwrap_or_else(crate::fresh_seed);
        let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
        let jobs = a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            anyhow::bail!("--jobs must be at least 1");
        }
        if a.tries == 0 {
            anyhow::bail!("--tries must be at least 1");
        }
        if a.depth == Some(0) {
            anyhow::bail!("--depth must be at least 1");
        }
        let libpos = crate::exec::libpos::find()?;
        let mut cfg = crate::exec::session::RunConfig::new(PathBuf::new(), Vec::new(), libpos);
        crate::apply_control(&mut cfg, &a.control)?;
        let mut plan = Plan {
            algo: String::new(),
            depth: a.depth,
            seed,
            tries: a.tries,
            jobs,
            stop_on_first: false,
            step_limit_is_bug: a.step_limit_is_bug,
            cfg,
        };
        for algo in algos {
            plan.algo = algo.clone();
            harness::make_strategy(&plan, None).with_context(|| format!("{flag} {algo}"))?;
        }
        let programs = jobs_of(&a.paths, &a.args, shard)?;
        let s = Session {
            plan,
            points: a.points.clone(),
            out_dir: a.out_dir.clone(),
            shard,
        };
        Ok((s, programs))
    }
}

/// The programs named by PATHs, in order: a suite directory (with a manifest) contributes
/// its entries' binaries in `DIR/bin` with their args, points and expectation; other paths
/// are programs or directories of programs run with `args`. With a shard, only its part.
pub fn jobs_of(paths: &[PathBuf], args: &[String], shard: Option<Shard>) -> Result<Vec<Job>> {
    let mut all = Vec::new();
    for p in paths {
        if Manifest::is_suite(p) {
            let m = Manifest::load(p)?;
            for e in &m.programs {
                let bin = m.binary(e);
                if !bin.is_file() {
                    anyhow::bail!(
                        "{}: not built (run `poscheck build {}`)",
                        bin.display(),
                        p.display()
                    );
                }
                all.push(Job {
                    name: e.name.clone(),
                    path: std::fs::canonicalize(&bin).unwrap_or(bin),
                    args: e.args.clone(),
                    points: Some(e.points.clone()),
                    expect: Some(e.expect),
                    backend: e
                        .backend
                        .as_deref()
                        .map(crate::exec::session::Backend::parse)
                        .transpose()?
                        .flatten(),
                    index: 0,
                    source: Some(m.dir.join(&e.source)),
                });
            }
        } else {
            for t in crate::targets(std::slice::from_ref(p))? {
                all.push(Job {
                    name: crate::program_name(&t),
                    path: std::fs::canonicalize(&t).unwrap_or(t),
                    args: args.to_vec(),
                    points: None,
                    expect: None,
                    backend: None,
                    index: 0,
                    source: None,
                });
            }
        }
    }
    for (k, j) in all.iter_mut().enumerate() {
        j.index = k;
    }
    disambiguate(&mut all);
    Ok(match shard {
        Some(s) => all.into_iter().filter(|j| s.contains(j.index)).collect(),
        None => all,
    })
}

/// Give programs that share a name (`a/prog` and `b/prog`) the shortest trailing part of
/// their path that tells them apart (`a/prog`, `b/prog`), so that their table rows and saved
/// schedules stay apart; unique names are kept. Depends only on the paths: stable from run
/// to run.
fn disambiguate(jobs: &mut [Job]) {
    let names: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
    let dirs: Vec<Vec<String>> = jobs
        .iter()
        .map(|j| {
            j.path
                .parent()
                .unwrap_or(Path::new(""))
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    let tail = |v: &[String], n: usize| v[v.len().saturating_sub(n)..].join("/");
    for i in 0..jobs.len() {
        let twins: Vec<usize> = (0..jobs.len())
            .filter(|&k| k != i && names[k] == names[i] && jobs[k].path != jobs[i].path)
            .collect();
        if twins.is_empty() {
            continue;
        }
        let n = (1..=dirs[i].len())
            .find(|&n| {
                twins
                    .iter()
                    .all(|&k| tail(&dirs[k], n) != tail(&dirs[i], n))
            })
            .unwrap_or(dirs[i].len());
        jobs[i].name = format!("{}/{}", tail(&dirs[i], n), names[i]);
    }
}

/// One program's result under one algorithm.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    pub report: ProgramReport,
    pub tally: Tally,
}

/// Outcome kinds that are not a bug (see `outcome::Outcome::is_bug`); `step-limit` is shown
/// apart unless `--step-limit-is-bug`.
const NOT_BUGS: &[&str] = &["ok", "diverged", "error", "step-limit"];

/// What is wrong with a program's outcome counts given its expectation: a bug-free program
/// that reported a bug, or a buggy one that failed in another way than its bug does (e.g.
/// expected a deadlock, got an assertion failure).
pub fn flag(expect: Expect, outcomes: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let bugs: Vec<String> = outcomes
        .iter()
        .filter(|(k, n)| **n > 0 && !NOT_BUGS.contains(&k.as_str()))
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    if !expect.is_buggy() {
        return (!bugs.is_empty()).then(|| {
            format!(
                "BUG-FREE PROGRAM REPORTED A BUG ({}): a harness error or a broken benchmark",
                bugs.join(" ")
            )
        });
    }
    let other: Vec<String> = outcomes
        .iter()
        .filter(|(k, n)| **n > 0 && !NOT_BUGS.contains(&k.as_str()) && *k != expect.kind())
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
    (!other.is_empty()).then(|| {
        format!(
            "unexpected outcome (expected {}): {}",
            expect.kind(),
            other.join(" ")
        )
    })
}

/// The plan of `job` under `algo`: the session's, with the program, its arguments, points
/// and backend.
fn job_plan(s: &Session, algo: &str, job: &Job) -> Result<Plan> {
    let mut plan = s.plan.clone();
    plan.algo = algo.to_string();
    plan.cfg.program = job.path.clone();
    plan.cfg.args = job.args.clone();
    plan.cfg.points = s.points.clone().or_else(|| job.points.clone());
    // The memory map read in the first run belongs to this program only: another program
    // of the same session must not symbolise its crashes with it.
    plan.cfg.maps = Default::default();
    if plan.cfg.requested.is_none() {
        plan.cfg.requested = job.backend;
    }
    crate::exec::session::resolve_backend(&mut plan.cfg)?;
    Ok(plan)
}

/// Say what the session is about to do: programs, algorithms, tries (on stdout, with the
/// session's other facts: stderr keeps a failing command's one error line alone). Every
/// program's set-up is checked first. The estimated time follows once the first
/// program's tries are done ([`run_algo`]): they are the pilot, and they count.
pub fn announce(s: &Session, algos: &[String], jobs: &[Job]) -> Result<()> {
    for algo in algos {
        for job in jobs {
            job_plan(s, algo, job)?;
        }
    }
    let runs = jobs.len() as u64 * algos.len() as u64 * s.plan.tries;
    sayln!(
        "poscheck: about to run {} program(s) x {} algorithm(s) ({}) x {} tries = {runs} runs \
         on {} worker(s)",
        jobs.len(),
        algos.len(),
        algos.join(","),
        s.plan.tries,
        s.plan.jobs
    );
    Ok(())
}

/// The estimated time of `pairs` program-algorithm sessions like the first one, which took
/// `first_s` seconds for `tries` tries, as a line.
pub fn estimate_line(name: &str, algo: &str, tries: u64, first_s: f64, pairs: usize) -> String {
    format!(
        "poscheck: estimated time about {} in all (the first program, {name} under {algo}, \
         took {first_s:.1} s for its {tries} tries; times {pairs} program-algorithm pairs)",
        crate::suite::progress::duration_text(first_s * pairs as f64)
    )
}

/// Run `job` under `algo`: its tries, the saved first buggy schedule, its report line.
pub fn run_program(s: &Session, algo: &str, job: &Job) -> Result<ProgramRun> {
    let plan = job_plan(s, algo, job)?;
    let tally = harness::run_tries(&plan, &job.name)
        .with_context(|| format!("{} under {algo}", job.name))?;
    let mut saved_at = None;
    if let Some((i, r)) = &tally.first_hit {
        let path = report::schedule_path(&s.out_dir, &job.name, algo, plan.seed);
        let schedule = pos_sched::schedule::Schedule {
            program: job.path.display().to_string(),
            args: job.args.clone(),
            algo: algo.to_string(),
            seed: plan.seed,
            try_index: *i,
            // The mode the tries used, with the racing pcs in races mode (`points`).
            points: tally.points.clone(),
            outcome: r.outcome.kind().to_string(),
            timeouts: report::timeouts_label(&plan.cfg),
            real_sleep: plan.cfg.real_sleep,
            steps: r.schedule.clone(),
        };
        SavedSchedule {
            pct_k: tally.pct_k,
            partial: (r.outside > 0).then_some(r.outside),
            ..SavedSchedule::of_run(schedule, &plan.cfg, r.outcome.to_string())
        }
        .save(&path)?;
        saved_at = Some(path);
    }
    let mut report = ProgramReport::new(&job.name, &job.path, &tally, saved_at.as_deref());
    report.backend = plan.cfg.backend.name().to_string();
    report.index = Some(job.index);
    report.expect = job.expect.map(|e| e.kind().to_string());
    let mut counted = tally.outcomes.clone();
    if s.plan.step_limit_is_bug {
        // Counted as a bug: flagged as one (renamed out of NOT_BUGS).
        if let Some(n) = counted.remove("step-limit") {
            counted.insert("step-limit (counted as a bug)".into(), n);
        }
    }
    report.flag = job.expect.and_then(|e| flag(e, &counted));
    Ok(ProgramRun { report, tally })
}

/// Run every job under `algo`, printing one progress line per algorithm to stderr. With
/// `estimate` (the number of program-algorithm pairs of the session, given for its first
/// algorithm), the first program's tries are the pilot of the session's estimated time.
pub fn run_algo(
    s: &Session,
    algo: &str,
    jobs: &[Job],
    estimate: Option<usize>,
) -> Result<Vec<ProgramRun>> {
    let start = Instant::now();
    let mut out = Vec::new();
    for j in jobs {
        if crate::exec::cleanup::interrupted() {
            break;
        }
        let r = run_program(s, algo, j)?;
        if let Some(pairs) = estimate.filter(|&p| out.is_empty() && p > 1) {
            sayln!(
                "{}",
                estimate_line(&j.name, algo, r.tally.tries, r.tally.wall_s, pairs)
            );
        }
        out.push(r);
    }
    eprintln!(
        "poscheck: {algo}: {} program(s), {} tries each, {:.1} s",
        jobs.len(),
        s.plan.tries,
        start.elapsed().as_secs_f64()
    );
    Ok(out)
}

/// The JSON of `compare` (and of `merge`): per algorithm the run JSON, plus the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareDoc {
    pub seed: u64,
    pub tries: u64,
    /// The shard this document covers (`i/n`), absent for a whole suite or a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub algos: Vec<String>,
    pub runs: Vec<AlgoRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Table>,
    /// The session was interrupted (SIGINT): these are the finished tries only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// One algorithm's run JSON (`report::SessionReport`), with the program lines kept as they
/// are so that merging passes every field through.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AlgoRun {
    pub algo: String,
    pub seed: u64,
    pub tries: u64,
    pub programs: Vec<serde_json::Value>,
}

impl AlgoRun {
    pub fn from_session(r: &SessionReport) -> Result<AlgoRun> {
        let v = serde_json::to_value(r).context("cannot encode the report")?;
        serde_json::from_value(v).context("cannot re-read the report")
    }
}

/// The fields of a program line the table needs.
#[derive(Clone, Debug, Deserialize)]
pub struct Line {
    pub name: String,
    pub tries: u64,
    pub hits: u64,
    pub hit_ratio: f64,
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub expect: Option<String>,
    #[serde(default)]
    pub flag: Option<String>,
    #[serde(default)]
    pub members: BTreeMap<String, MemberTally>,
}

impl Line {
    pub fn parse(v: &serde_json::Value) -> Result<Line> {
        serde_json::from_value(v.clone()).context("not a poscheck program report")
    }

    /// Bug-free by the manifest; programs without an expectation count as buggy.
    fn bug_free(&self) -> bool {
        self.expect.as_deref() == Some("none")
    }
}

/// One row of the table: a program's ratio under each algorithm (column order of
/// [`Table::algos`]; `None` where that algorithm has no line for the program).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub expect: Option<String>,
    pub hits: Vec<Option<u64>>,
    pub tries: Vec<Option<u64>>,
    pub ratios: Vec<Option<f64>>,
    /// The columns holding the row's largest non-zero ratio.
    pub best: Vec<bool>,
}

/// The comparison table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    pub algos: Vec<String>,
    /// Buggy programs, hardest first, then the bug-free ones.
    pub rows: Vec<Row>,
    /// Buggy programs each algorithm hit at least once.
    pub bugs_hit: Vec<usize>,
    pub buggy_programs: usize,
    /// Geometric mean of the hit ratios over the buggy programs, zeros as 1/(2·tries).
    pub geomean: Vec<Option<f64>>,
    /// Geometric mean over the buggy programs every algorithm hit.
    pub geomean_all_hit: Vec<Option<f64>>,
    pub all_hit_programs: usize,
    /// Manifest mismatches, one line each (`program [algo]: what`).
    pub flags: Vec<String>,
    /// `auto` columns: each member's share, over the buggy programs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<MemberRow>,
}

/// What one member of a portfolio column (`auto`) did over the buggy programs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemberRow {
    pub algo: String,
    pub member: String,
    pub tries: u64,
    pub hits: u64,
    /// Buggy programs in which this member produced at least one hit.
    pub bugs_hit: usize,
}

/// Ratio a zero enters the geometric mean with (see the module doc).
pub fn zero_substitute(tries: u64) -> f64 {
    1.0 / (2.0 * tries as f64)
}

fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

impl Table {
    /// Build the table from per-algorithm runs (each program at most once per algorithm).
    pub fn build(runs: &[AlgoRun]) -> Result<Table> {
        let algos: Vec<String> = runs.iter().map(|r| r.algo.clone()).collect();
        // One entry per program: name, index, expect and its line in each column.
        type Gathered = (String, Option<usize>, Option<String>, Vec<Option<Line>>);
        let mut by_name: Vec<Gathered> = Vec::new();
        let mut flags = Vec::new();
        let mut members: BTreeMap<(usize, String), MemberRow> = BTreeMap::new();
        for (c, run) in runs.iter().enumerate() {
            for v in &run.programs {
                let line = Line::parse(v).with_context(|| format!("in the {} run", run.algo))?;
                if let Some(f) = &line.flag {
                    flags.push(format!("{} [{}]: {f}", line.name, run.algo));
                }
                for (m, t) in line.members.iter().filter(|_| !line.bug_free()) {
                    let row = members.entry((c, m.clone())).or_insert_with(|| MemberRow {
                        algo: run.algo.clone(),
                        member: m.clone(),
                        tries: 0,
                        hits: 0,
                        bugs_hit: 0,
                    });
                    row.tries += t.tries;
                    row.hits += t.hits;
                    row.bugs_hit += usize::from(t.hits > 0);
                }
                let pos = match by_name.iter().position(|e| e.0 == line.name) {
                    Some(p) => p,
                    None => {
                        by_name.push((
                            line.name.clone(),
                            line.index,
                            line.expect.clone(),
                            vec![None; runs.len()],
                        ));
                        by_name.len() - 1
                    }
                };
                by_name[pos].3[c] = Some(line);
            }
        }
        let mut rows: Vec<(bool, f64, Option<usize>, Row)> = by_name
            .into_iter()
            .map(|(name, index, expect, lines)| {
                let ratios: Vec<Option<f64>> = lines
                    .iter()
                    .map(|l| l.as_ref().map(|l| l.hit_ratio))
                    .collect();
                let max = ratios.iter().flatten().copied().fold(0.0, f64::max);
                let min = ratios
                    .iter()
                    .flatten()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
                let bug_free = lines.iter().flatten().any(|l| l.bug_free());
                let row = Row {
                    name,
                    expect,
                    hits: lines.iter().map(|l| l.as_ref().map(|l| l.hits)).collect(),
                    tries: lines.iter().map(|l| l.as_ref().map(|l| l.tries)).collect(),
                    best: ratios
                        .iter()
                        .map(|r| max > 0.0 && *r == Some(max))
                        .collect(),
                    ratios,
                };
                (bug_free, min, index, row)
            })
            .collect();
        rows.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.name.cmp(&b.3.name))
        });
        let buggy: Vec<&Row> = rows.iter().filter(|r| !r.0).map(|r| &r.3).collect();
        let n = algos.len();
        let bugs_hit = (0..n)
            .map(|c| buggy.iter().filter(|r| r.hits[c].unwrap_or(0) > 0).count())
            .collect();
        let geo = (0..n)
            .map(|c| {
                let xs: Vec<f64> = buggy
                    .iter()
                    .filter_map(|r| match (r.ratios[c], r.tries[c]) {
                        (Some(x), Some(t)) if t > 0 => {
                            Some(if x > 0.0 { x } else { zero_substitute(t) })
                        }
                        _ => None,
                    })
                    .collect();
                geomean(&xs)
            })
            .collect();
        let all_hit: Vec<&&Row> = buggy
            .iter()
            .filter(|r| r.hits.iter().all(|h| h.unwrap_or(0) > 0))
            .collect();
        let geo_all = (0..n)
            .map(|c| {
                let xs: Vec<f64> = all_hit.iter().filter_map(|r| r.ratios[c]).collect();
                geomean(&xs)
            })
            .collect();
        Ok(Table {
            algos,
            buggy_programs: buggy.len(),
            all_hit_programs: all_hit.len(),
            bugs_hit,
            geomean: geo,
            geomean_all_hit: geo_all,
            rows: rows.into_iter().map(|r| r.3).collect(),
            flags,
            members: members.into_values().collect(),
        })
    }

    /// Programs the manifest calls buggy that no algorithm hit.
    pub fn missed(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.expect.as_deref().is_some_and(|e| e != "none"))
            .filter(|r| r.hits.iter().all(|h| h.unwrap_or(0) == 0))
            .map(|r| r.name.as_str())
            .collect()
    }

    /// Programs without an expectation (no manifest) in which no algorithm found a bug:
    /// nothing says they are buggy, so they are not "missed".
    pub fn no_bug_found(&self) -> Vec<&str> {
        self.rows
            .iter()
            .filter(|r| r.expect.is_none())
            .filter(|r| r.hits.iter().all(|h| h.unwrap_or(0) == 0))
            .map(|r| r.name.as_str())
            .collect()
    }

    /// The table as text (a header, a row per program, the summary rows and a footer).
    pub fn render(&self, tries: u64, seed: u64) -> String {
        let w = self
            .rows
            .iter()
            .map(|r| r.name.len())
            .chain(["geomean (all hit)".len()])
            .max()
            .unwrap_or(7);
        let cw = self.algos.iter().map(|a| a.len()).max().unwrap_or(0).max(9);
        let cell = |r: Option<f64>, best: bool| -> String {
            let t = match r {
                None => "-".to_string(),
                Some(0.0) => "0".to_string(),
                Some(x) => format!("{x:.4}"),
            };
            format!("{t}{}", if best { "*" } else { " " })
        };
        let mut s = format!("{:<w$}  {:<8}", "program", "expect");
        for a in &self.algos {
            s += &format!("  {a:>cw$} ");
        }
        s.push('\n');
        let mut in_bug_free = false;
        for r in &self.rows {
            let bug_free = r.expect.as_deref() == Some("none");
            if bug_free && !in_bug_free {
                in_bug_free = true;
                s += "-- bug-free programs (any hit is flagged) --\n";
            }
            s += &format!("{:<w$}  {:<8}", r.name, r.expect.as_deref().unwrap_or("?"));
            for (c, x) in r.ratios.iter().enumerate() {
                s += &format!("  {:>cw$}", cell(*x, r.best[c]), cw = cw + 1);
            }
            s.push('\n');
        }
        s += &format!("{:<w$}  {:<8}", "bugs hit", "");
        for n in &self.bugs_hit {
            s += &format!(
                "  {:>cw$} ",
                format!("{n}/{}", self.buggy_programs),
                cw = cw
            );
        }
        s.push('\n');
        for (label, xs) in [
            ("geomean", &self.geomean),
            ("geomean (all hit)", &self.geomean_all_hit),
        ] {
            s += &format!("{label:<w$}  {:<8}", "");
            let best = xs.iter().flatten().copied().fold(0.0, f64::max);
            for x in xs {
                s += &format!(
                    "  {:>cw$}",
                    cell(*x, x.is_some_and(|x| x > 0.0 && x == best)),
                    cw = cw + 1
                );
            }
            s.push('\n');
        }
        s += &format!(
            "hit ratio = buggy tries / tries ({tries} tries per program, seed {seed}); * = best \
             of the row. geomean: over the {} buggy programs, a ratio of 0 counted as \
             1/(2*tries) = {:.2e}; geomean (all hit): over the {} programs every algorithm hit.\n",
            self.buggy_programs,
            zero_substitute(tries.max(1)),
            self.all_hit_programs
        );
        let missed = self.missed();
        if !missed.is_empty() {
            s += &format!("hit by no algorithm: {}\n", missed.join(", "));
        }
        let quiet = self.no_bug_found();
        if !quiet.is_empty() {
            s += &format!(
                "no bug found by any algorithm (no manifest, so no expectation): {}\n",
                quiet.join(", ")
            );
        }
        let mut portfolios: Vec<&str> = Vec::new();
        for m in &self.members {
            if !portfolios.contains(&m.algo.as_str()) {
                portfolios.push(&m.algo);
            }
        }
        for algo in portfolios {
            let parts: Vec<String> = self
                .members
                .iter()
                .filter(|m| m.algo == algo)
                .map(|m| format!("{} {}, {}/{}", m.member, m.bugs_hit, m.hits, m.tries))
                .collect();
            s += &format!(
                "{algo} by member (bugs hit, hits/tries over the buggy programs): {}\n",
                parts.join("; ")
            );
        }
        for f in &self.flags {
            s += &format!("FLAG {f}\n");
        }
        s
    }
}

/// `poscheck compare`: every algorithm over the same programs with the same seed.
/// Exit code 1 when some program had a bug (as `run`), 0 otherwise.
pub fn cmd(c: &crate::cli::CompareArgs) -> Result<i32> {
    if c.algos.is_empty() {
        anyhow::bail!("--algos: name at least one algorithm");
    }
    for (k, x) in c.algos.iter().enumerate() {
        if c.algos[..k].contains(x) {
            anyhow::bail!("--algos: {x} is listed twice");
        }
    }
    let a = &c.tries;
    let (s, programs) = Session::prepare(a, &c.algos, "--algos")?;
    let (seed, shard) = (s.plan.seed, s.shard);
    sayln!(
        "poscheck compare: algos={} seed={seed} tries={} jobs={} programs={}{}",
        c.algos.join(","),
        a.tries,
        s.plan.jobs,
        programs.len(),
        shard.map_or(String::new(), |s| format!(" shard={s}"))
    );
    announce(&s, &c.algos, &programs)?;
    let mut runs = Vec::new();
    let mut suites = Vec::new();
    let mut reports: Vec<ProgramReport> = Vec::new();
    let mut bug = false;
    for (k, algo) in c.algos.iter().enumerate() {
        if crate::exec::cleanup::interrupted() {
            break;
        }
        let pairs = (k == 0).then_some(programs.len() * c.algos.len());
        let results = run_algo(&s, algo, &programs, pairs)?;
        for r in &results {
            bug |= r.report.hits > 0;
            if let Some(e) = &r.report.first_error {
                sayln!("{} [{algo}]: run error: {e}", r.report.name);
            }
            for what in &r.report.uncontrolled {
                sayln!("{} [{algo}]: warning: {what}", r.report.name);
            }
        }
        suites.push(junit_suite(&s, algo, &programs, &results));
        reports.extend(results.iter().map(|r| r.report.clone()));
        runs.push(AlgoRun::from_session(&SessionReport {
            algo: algo.clone(),
            seed,
            tries: a.tries,
            programs: results.into_iter().map(|r| r.report).collect(),
            interrupted: false,
        })?);
    }
    let table = Table::build(&runs)?;
    say!("{}", table.render(a.tries, seed));
    if let Some(note) = plain_build_note(&reports) {
        sayln!("{note}");
    }
    let doc = CompareDoc {
        seed,
        tries: a.tries,
        shard: shard.map(|s| s.to_string()),
        algos: c.algos.clone(),
        runs,
        table: Some(table),
        interrupted: crate::exec::cleanup::interrupted(),
    };
    let cases: Vec<report::junit::Case> = suites.iter().flat_map(|s| s.cases.clone()).collect();
    report::github::emit(&cases);
    if let Some(path) = &a.junit {
        report::junit::write(path, &suites)?;
    }
    if let Some(path) = &a.json {
        write_doc(&doc, path)?;
    }
    if let Some(path) = &a.html {
        report::html::write(vec![report::html::Input::of("compare", &doc)?], path)?;
        sayln!("poscheck: report written to {}", path.display());
    }
    if crate::exec::cleanup::interrupted() {
        sayln!("poscheck: interrupted (SIGINT): the results above are those of the finished tries");
        return Ok(crate::exec::cleanup::INTERRUPTED_EXIT);
    }
    Ok(i32::from(bug))
}

/// The JUnit suite of `algo`'s results (in the order of `jobs`, as `run_algo` returns them).
/// A note naming the programs that showed no bug in a plain (not `poscheck cc`/`c++`) C or
/// C++ build at synchronisation points: atomics and shared variables between two
/// synchronisation calls made no scheduling point, so their orders were never varied (probe
/// 18: five atomics and plain-read bugs were ok 50/50 in their gcc builds and found in their
/// `poscheck cc` builds, with nothing said). Rust programs get their note before the runs,
/// and so do programs that create no thread.
pub fn plain_build_note<'a>(
    reports: impl IntoIterator<Item = &'a ProgramReport>,
) -> Option<String> {
    let reports: Vec<&ProgramReport> = reports.into_iter().collect();
    let mut names: Vec<&str> = Vec::new();
    for (k, r) in reports.iter().enumerate() {
        // Each program once (compare has a report per algorithm), its ELF read only if it
        // qualifies otherwise.
        let first = !reports[..k].iter().any(|o| o.path == r.path);
        let plain = first
            && !reports.iter().any(|o| o.path == r.path && o.hits > 0)
            && r.points == crate::points::SYNC
            && r.backend == crate::exec::session::Backend::Preload.name()
            && r.tries > 0
            && crate::exec::elf::check(Path::new(&r.path))
                .is_ok_and(|i| i.makes_threads && !i.instrumented && !i.rust_std);
        if plain {
            names.push(&r.name);
        }
    }
    (!names.is_empty()).then(|| {
        format!(
            "note: no bug found in {} plain build(s) ({}): only synchronisation calls were \
             scheduling points, so atomics and shared variables accessed between them were not \
             reordered; a `poscheck cc` (or `poscheck c++`) build tests them too",
            names.len(),
            names.join(", ")
        )
    })
}

pub fn junit_suite(
    s: &Session,
    algo: &str,
    jobs: &[Job],
    results: &[ProgramRun],
) -> report::junit::Suite {
    report::junit::Suite {
        name: algo.to_string(),
        properties: vec![
            ("algo".into(), algo.to_string()),
            ("seed".into(), s.plan.seed.to_string()),
            ("tries".into(), s.plan.tries.to_string()),
        ],
        cases: results
            .iter()
            .zip(jobs)
            .map(|(r, j)| report::junit::case_of(algo, &r.report, j.source.as_deref()))
            .collect(),
    }
}

/// Write a compare document as pretty JSON.
pub fn write_doc(doc: &CompareDoc, path: &Path) -> Result<()> {
    let json = serde_json::to_string_pretty(doc).context("cannot encode the comparison")?;
    std::fs::write(path, json + "\n").with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn programs_with_the_same_name_get_distinct_stable_names() {
        let job = |p: &str| Job {
            name: crate::program_name(std::path::Path::new(p)),
            path: p.into(),
            args: Vec::new(),
            points: None,
            expect: None,
            backend: None,
            index: 0,
            source: None,
        };
        let mut jobs = vec![
            job("/t/x/a/prog"),
            job("/t/y/a/prog"),
            job("/t/b/prog"),
            job("/t/other"),
        ];
        disambiguate(&mut jobs);
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["x/a/prog", "y/a/prog", "b/prog", "other"]);
        let again: Vec<PathBuf> = names
            .iter()
            .map(|n| report::schedule_path(Path::new("o"), n, "pos", 1))
            .collect();
        let unique: std::collections::BTreeSet<_> = again.iter().collect();
        assert_eq!(unique.len(), 4, "{again:?}");
    }

    use super::*;
    use serde_json::json;

    fn run(algo: &str, lines: &[(&str, &str, u64)]) -> AlgoRun {
        AlgoRun {
            algo: algo.into(),
            seed: 1,
            tries: 100,
            programs: lines
                .iter()
                .enumerate()
                .map(|(k, (name, expect, hits))| {
                    json!({"name": name, "index": k, "expect": expect, "tries": 100,
                           "hits": hits, "hit_ratio": *hits as f64 / 100.0})
                })
                .collect(),
        }
    }

    #[test]
    fn rows_sort_by_smallest_ratio_and_mark_the_best() {
        let t = Table::build(&[
            run(
                "rw",
                &[
                    ("easy", "assert", 50),
                    ("hard", "deadlock", 0),
                    ("ok", "none", 0),
                ],
            ),
            run(
                "pos",
                &[
                    ("easy", "assert", 80),
                    ("hard", "deadlock", 4),
                    ("ok", "none", 0),
                ],
            ),
        ])
        .unwrap();
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, vec!["hard", "easy", "ok"]);
        assert_eq!(t.rows[0].best, vec![false, true]);
        assert_eq!(t.rows[2].best, vec![false, false]);
        assert_eq!(t.bugs_hit, vec![1, 2]);
        assert_eq!(t.buggy_programs, 2);
        // rw: sqrt(0.5 * 1/200); pos: sqrt(0.8 * 0.04).
        let g = t.geomean[0].unwrap();
        assert!((g - (0.5f64 / 200.0).sqrt()).abs() < 1e-12, "{g}");
        assert!((t.geomean[1].unwrap() - (0.8f64 * 0.04).sqrt()).abs() < 1e-12);
        assert_eq!(t.all_hit_programs, 1);
        assert!((t.geomean_all_hit[0].unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(t.missed(), Vec::<&str>::new());
        let text = t.render(100, 1);
        assert!(text.contains("0.0400*"), "{text}");
        assert!(text.contains("1/(2*tries)"), "{text}");
    }

    #[test]
    fn programs_without_expectation_are_not_missed() {
        let line = |name: &str, hits: u64| json!({"name": name, "tries": 10, "hits": hits, "hit_ratio": hits as f64 / 10.0});
        let mut with = run("rw", &[("buggy", "assert", 0)]);
        with.programs.push(line("plain_ok", 0));
        with.programs.push(line("plain_bug", 3));
        let t = Table::build(&[with]).unwrap();
        assert_eq!(t.missed(), vec!["buggy"]);
        assert_eq!(t.no_bug_found(), vec!["plain_ok"]);
        let text = t.render(10, 1);
        assert!(text.contains("hit by no algorithm: buggy\n"), "{text}");
        assert!(
            text.contains(
                "no bug found by any algorithm (no manifest, so no expectation): plain_ok"
            ),
            "{text}"
        );
    }

    #[test]
    fn flags_mismatched_and_bug_free_hits() {
        let mut o = std::collections::BTreeMap::new();
        o.insert("ok".to_string(), 10);
        assert_eq!(flag(Expect::None, &o), None);
        assert_eq!(flag(Expect::Deadlock, &o), None);
        o.insert("deadlock".to_string(), 2);
        assert_eq!(flag(Expect::Deadlock, &o), None);
        let f = flag(Expect::None, &o).unwrap();
        assert!(f.starts_with("BUG-FREE"), "{f}");
        o.insert("assert".to_string(), 1);
        let f = flag(Expect::Deadlock, &o).unwrap();
        assert!(f.contains("assert=1") && !f.contains("deadlock="), "{f}");
    }
}
