//! `poscheck explore`: systematic exploration (stateless model checking) of a real binary.
//!
//! The algorithms live in [`pos_sched::explore`] (DFS, Source-DPOR, Optimal-DPOR, preemption
//! and delay bounding, reachability testing); they only need an [`Executor`]. This module
//! provides one over [`session::run_once`]: every execution is a fresh process run under the
//! algorithm's guide strategy, which makes every scheduling decision, so the seed is fixed and
//! unused. Thread ids are dense in creation order and each thread's events come in program
//! order, so an event's identity (thread, index in thread) is the same in every execution
//! that follows the same prefix; when the program does not follow a forced prefix (it is not
//! deterministic under the schedule: time, randomness, uncontrolled input), the guide reports
//! a divergence and the exploration stops there instead of exploring the wrong program —
//! unless `--approximate` (and always for `--algo hitting`, and by default for odpor, dpor
//! and rt with sync points, whose hidden accesses between points decide paths; `--strict`
//! stops there too): the prefix is then replayed approximately and a run that leaves it is
//! counted as divergent, its actual trace analysed.
//!
//! Each bug found is saved as a [`SavedSchedule`] under `--out-dir`, the format
//! `poscheck replay` reads.

use crate::cli::ControlArgs;
use crate::exec::session::{self, RunConfig};
use crate::report::SavedSchedule;
use crate::suite::outcome::Outcome;
use anyhow::{bail, Context, Result};
use clap::Args;
use pos_sched::explore::{self, Algo, Execution, Executor, Limits, Report};
use pos_sched::schedule::Schedule;
use pos_sched::strategy::Divergence;
use pos_sched::Strategy;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Step limit of one execution unless `--max-steps` says otherwise (the `run` default,
/// [`pos_sched::coordinator::DEFAULT_MAX_STEPS`], is far too high here). The guide's
/// deterministic rule is fair to threads that wait with `sched_yield` or a sleep (see
/// [`pos_sched::explore::guide`]), but a busy-wait without a yield (a spin on a memory
/// location, with memory points) can still keep one thread running, and a million-event
/// trace is far too long for the algorithms to analyse. Such a run ends as a `step-limit`
/// outcome (a livelock under that schedule).
pub const EXPLORE_MAX_STEPS: u64 = 10_000;

/// The seed handed to every run (the guide ignores it) and recorded in saved schedules; also
/// the base seed of the `--points races` profiling runs.
pub const SEED: u64 = 0;

#[derive(Args, Debug, Clone)]
pub struct ExploreArgs {
    /// Exploration algorithm: dfs, dpor (Source-DPOR), odpor (Optimal-DPOR), ipb (iterative
    /// preemption bounding), idb (iterative delay bounding), rt (reachability testing), r4
    /// (conflict-reversal bounding over executed traces, with approximate replay), hitting (a
    /// d-hitting family of schedules of one recorded run).
    #[arg(long, default_value = "odpor")]
    pub algo: String,
    /// Largest preemption (ipb) or delay (idb) bound explored (default 3); for r4 the
    /// largest conflict-reversal depth (default 2).
    #[arg(long, value_name = "K")]
    pub bound: Option<u32>,
    /// odpor, dpor, rt: follow forced prefixes with approximate replay, so that a run that
    /// does not follow its prefix (a divergence) is counted and analysed instead of ending
    /// the exploration (the default with --points sync)
    #[arg(long)]
    pub approximate: bool,
    /// odpor, dpor, rt: stop at the first run that does not follow its forced prefix (the
    /// default with --points mem or races, where that means the program is not determined by
    /// its schedule: time, input, randomness)
    #[arg(long, conflicts_with = "approximate")]
    pub strict: bool,
    /// hitting: the depth d of the family (every admissible order of d events is run by
    /// some schedule; default 3).
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// hitting: the events the family orders: races (those that take part in a data race,
    /// the default) or none (every event of the run).
    #[arg(long, value_name = "WHICH")]
    pub prune: Option<String>,
    /// hitting: check the family d-hitting by enumeration before running it.
    #[arg(long)]
    pub verify: bool,
    /// hitting: record the run of this saved schedule (the file `poscheck replay` reads)
    /// instead of the default first run.
    #[arg(long, value_name = "SCHEDULE.json")]
    pub from: Option<PathBuf>,
    /// Scheduling points: sync, mem or races (the last two need `poscheck cc` builds).
    /// Default: races for instrumented programs, sync otherwise.
    #[arg(long, value_name = "MODE")]
    pub points: Option<String>,
    /// Stop after this many executions (complete plus sleep-set blocked).
    #[arg(long, value_name = "N")]
    pub max_executions: Option<u64>,
    /// Stop after this long: seconds, or a number with s, m or h.
    #[arg(long, value_name = "T")]
    pub time_limit: Option<String>,
    /// Write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML report (the bugs' interleavings) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the result as JUnit XML to this file: one test case, a failure when a bug was
    /// found (the first bug's outcome, schedule and replay command).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Where the schedules of the bugs found are saved.
    #[arg(long, default_value = "poscheck-out", value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Count executions that reach the step limit (--max-steps, 10000 by default here) as
    /// bugs; by default they are counted apart (`step_limits` in the JSON) and the
    /// exploration is not complete: a long correct program reaches the limit too.
    #[arg(long)]
    pub step_limit_is_bug: bool,
    #[command(flatten)]
    pub control: ControlArgs,
    /// The program (for `mem`/`races` points, built with `poscheck cc`).
    #[arg(value_name = "PROG")]
    pub program: PathBuf,
    /// Arguments for the program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Parse `--time-limit`: `90`, `90s`, `1.5m`, `2h`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, c @ ('s' | 'm' | 'h'))) => (&t[..i], c),
        _ => (t, 's'),
    };
    let v: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("--time-limit {s:?}: expected seconds, or a number with s/m/h"))?;
    let secs = v * match unit {
        'm' => 60.0,
        'h' => 3600.0,
        _ => 1.0,
    };
    // At most a year: longer does not fit the timers (and is surely a typo).
    if !(secs.is_finite() && secs > 0.0 && secs <= 366.0 * 86_400.0) {
        bail!("--time-limit {s:?}: must be a positive duration of at most a year");
    }
    Duration::try_from_secs_f64(secs).with_context(|| format!("--time-limit {s:?}"))
}

/// Runs the real program once per execution (see the module doc).
pub struct RealExecutor<'c> {
    cfg: &'c RunConfig,
    /// Processes started.
    pub runs: u64,
    /// The outcomes of the buggy runs, in order (the report keeps the first
    /// [`explore::MAX_KEPT_BUGS`] of them, in the same order).
    pub bug_outcomes: Vec<Outcome>,
    /// A setup failure or run error: the exploration is stopped and the command fails.
    pub error: Option<String>,
    /// When the executor was made (the exploration's start) and the seconds from then until
    /// the first buggy execution finished.
    started: std::time::Instant,
    pub first_bug_s: Option<f64>,
    /// Step-limited executions are bugs (`--step-limit-is-bug`); else they are counted in
    /// `step_limits`.
    pub step_limit_is_bug: bool,
    pub step_limits: u64,
}

impl<'c> RealExecutor<'c> {
    pub fn new(cfg: &'c RunConfig) -> Self {
        RealExecutor {
            cfg,
            runs: 0,
            bug_outcomes: Vec::new(),
            error: None,
            started: std::time::Instant::now(),
            first_bug_s: None,
            step_limit_is_bug: false,
            step_limits: 0,
        }
    }

    /// An execution that stops the exploration (the algorithms stop on any divergence).
    fn stop(&mut self, step: u64, reason: String) -> Execution {
        self.error.get_or_insert_with(|| reason.clone());
        Execution {
            diverged: Some(Divergence { step, reason }),
            ..Default::default()
        }
    }
}

impl Executor for RealExecutor<'_> {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        if let Some(e) = self.error.clone() {
            return self.stop(0, e);
        }
        self.runs += 1;
        let r = match session::run_once(self.cfg, strategy, SEED) {
            Ok(r) => r,
            Err(e) => return self.stop(0, format!("cannot run the program: {e:#}")),
        };
        let trace = r.trace.iter().map(|(ev, _)| *ev).collect();
        let mut ex = Execution {
            trace,
            ..Default::default()
        };
        match r.outcome {
            Outcome::Diverged { step, reason } => ex.diverged = Some(Divergence { step, reason }),
            Outcome::Error { reason } => {
                let stopped = self.stop(r.steps, format!("run {}: {reason}", self.runs));
                return Execution {
                    trace: ex.trace,
                    ..stopped
                };
            }
            Outcome::StepLimit { .. } if !self.step_limit_is_bug => {
                self.step_limits += 1;
                ex.cut_short = true;
            }
            o if o.is_bug() => {
                ex.bug = Some(o.to_string());
                let started = self.started;
                self.first_bug_s
                    .get_or_insert_with(|| started.elapsed().as_secs_f64());
                if self.bug_outcomes.len() < explore::MAX_KEPT_BUGS {
                    self.bug_outcomes.push(o);
                }
            }
            _ => {}
        }
        ex
    }
}

/// One bug in the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct BugReport {
    pub kind: String,
    pub description: String,
    /// ipb/idb: the bound the run was explored at.
    pub bound: Option<u32>,
    pub steps: usize,
    /// The saved schedule (replay it with `poscheck replay FILE`); only the first run of
    /// each distinct bug (description) is saved.
    pub schedule: Option<String>,
}

/// The `--json` document.
#[derive(Clone, Debug, Serialize)]
pub struct ExploreReport {
    pub program: String,
    pub args: Vec<String>,
    pub algo: String,
    pub bound: Option<u32>,
    pub points: String,
    pub executions: u64,
    pub blocked: u64,
    pub buggy: u64,
    /// Approximate replay (hitting, or `--approximate`): executions that skipped events of
    /// their target, the events skipped, and those per execution.
    pub approximate: bool,
    pub divergent: u64,
    pub skipped_events: u64,
    pub skipped_per_execution: f64,
    /// hitting: the family that was run.
    pub family: Option<FamilyReport>,
    /// The number of the first complete execution that hit a bug (1-based).
    pub first_bug_execution: Option<u64>,
    /// Seconds from the start of the exploration until the first buggy execution finished.
    pub first_bug_s: Option<f64>,
    pub complete: bool,
    /// Executions cut by the step limit without a bug (unless `--step-limit-is-bug`): an
    /// exploration with one is not complete.
    pub step_limits: u64,
    /// Why the exploration was cut short, when it was (a limit, a divergence, an error, the
    /// step limit).
    pub stopped: Option<String>,
    pub diverged: Option<String>,
    pub first_bug_bound: Option<u32>,
    pub bound_completed: Option<u32>,
    pub executions_per_bound: Vec<u64>,
    pub rt_peak_pending: Option<u64>,
    /// r4: runs that could not follow their target exactly, target events skipped, and
    /// reversals not run because an equivalent target was already run.
    pub r4: Option<R4Summary>,
    pub elapsed_s: f64,
    pub executions_per_s: f64,
    pub bugs: Vec<BugReport>,
}

/// What `r4` adds to the report (see [`pos_sched::explore::r4`]).
#[derive(Clone, Debug, Serialize)]
pub struct R4Summary {
    pub divergent: u64,
    pub skipped_events: u64,
    pub pruned: u64,
}

/// hitting: the family in the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct FamilyReport {
    pub depth: u32,
    pub prune: String,
    /// The saved schedule whose run the family was built from (`--from`).
    pub from: Option<String>,
    /// The recorded run's events and races, and the family built from them.
    #[serde(flatten)]
    pub family: explore::hitting::FamilyInfo,
}

/// Check the flags that belong to one algorithm and build the algorithm.
fn algo_of(a: &ExploreArgs) -> Result<Algo> {
    let algo = Algo::parse(&a.algo, a.bound).map_err(anyhow::Error::msg)?;
    if a.bound.is_some() && bound_of(algo).is_none() {
        bail!("--bound applies to ipb, idb and r4 only");
    }
    let hitting_flags = [
        ("--depth", a.depth.is_some()),
        ("--prune", a.prune.is_some()),
        ("--verify", a.verify),
        ("--from", a.from.is_some()),
    ];
    let Algo::Hitting { .. } = algo else {
        if let Some((flag, _)) = hitting_flags.iter().find(|(_, on)| *on) {
            bail!("{flag} applies to --algo hitting only");
        }
        if a.approximate && !replays_approximately(algo) {
            bail!("--approximate applies to --algo odpor, dpor and rt only");
        }
        if a.strict && !replays_approximately(algo) {
            bail!("--strict applies to --algo odpor, dpor and rt only");
        }
        return Ok(algo);
    };
    if a.approximate {
        bail!("--approximate is implied by --algo hitting (its schedules are always replayed approximately)");
    }
    let depth = a.depth.unwrap_or(3);
    if depth == 0 {
        bail!("--depth must be at least 1");
    }
    let prune = match &a.prune {
        Some(p) => explore::hitting::Prune::parse(p).map_err(anyhow::Error::msg)?,
        None => explore::hitting::Prune::Races,
    };
    Ok(Algo::Hitting {
        depth,
        prune,
        verify: a.verify,
    })
}

/// `--from`: the events of the saved schedule's run, replayed once under `cfg`.
fn start_events(cfg: &RunConfig, file: &Path) -> Result<Vec<pos_sched::event::Event>> {
    let saved = crate::report::SavedSchedule::load(file)?;
    let mut st = pos_sched::strategy::replay(saved.schedule.steps.clone());
    let r = session::run_once(cfg, st.as_mut(), SEED)
        .with_context(|| format!("--from {}: cannot run the program", file.display()))?;
    if let Outcome::Diverged { step, reason } = &r.outcome {
        bail!(
            "--from {}: the program did not follow the saved schedule (step {step}: {reason}); \
             was it saved for this program, arguments and --points?",
            file.display()
        );
    }
    if let Outcome::Error { reason } = &r.outcome {
        bail!("--from {}: {reason}", file.display());
    }
    sayln!(
        "hitting: recorded the run of {} ({} events, outcome {})",
        file.display(),
        r.trace.len(),
        r.outcome.kind()
    );
    Ok(r.trace.iter().map(|(ev, _)| *ev).collect())
}

/// The bound of an algorithm, if it has one.
fn bound_of(algo: Algo) -> Option<u32> {
    match algo {
        Algo::Ipb { max } | Algo::Idb { max } | Algo::R4 { bound: max } => Some(max),
        _ => None,
    }
}

/// File name of bug `i` of an exploration: `DIR/<program>.explore-<algo>.bug<i>.json`.
fn bug_path(dir: &Path, program: &Path, algo: &str, i: usize) -> PathBuf {
    let name: String = crate::program_name(program)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.explore-{algo}.bug{i}.json"))
}

/// `poscheck explore`. Exit code 1 when a bug was found, 0 otherwise; setup errors and
/// divergences (the program does not follow a forced prefix) are errors (2).
pub fn run(a: &ExploreArgs) -> Result<i32> {
    let algo = algo_of(a)?;
    if a.max_executions == Some(0) {
        bail!("--max-executions must be at least 1");
    }
    let limits = Limits {
        max_executions: a.max_executions,
        time_limit: a.time_limit.as_deref().map(parse_duration).transpose()?,
    };
    let elf = crate::exec::elf::check(&a.program)?;
    // An absolute path: a bare `prog` is the file in the working directory (not a PATH
    // search), and the saved schedules replay from any directory.
    let program = std::fs::canonicalize(&a.program)
        .with_context(|| format!("cannot resolve {}", a.program.display()))?;
    let a = &ExploreArgs {
        program,
        ..a.clone()
    };
    let mut cfg = RunConfig::new(
        a.program.clone(),
        a.args.clone(),
        crate::exec::libpos::find()?,
    );
    crate::apply_control(&mut cfg, &a.control)?;
    crate::exec::session::resolve_backend(&mut cfg)?;
    if a.control.max_steps.is_none() {
        cfg.max_steps = EXPLORE_MAX_STEPS;
    }
    // Systematic exploration keeps `races` (profiled sites plus atomics) as its default: its
    // traces must hold scheduled events only, and sites learned mid-search would change the
    // program's event structure under the algorithm.
    cfg.points = a
        .points
        .clone()
        .or_else(|| elf.instrumented.then(|| crate::points::RACES.to_string()));
    cfg.record_trace = true;
    if let Some(mode) = cfg
        .points
        .as_deref()
        .filter(|m| *m != "sync" && algo == Algo::Rt)
    {
        // rt pairs synchronisation operations only: with memory points it would run once and
        // say complete while the accesses' orders were never explored (the default points of
        // an instrumented program are `races`).
        bail!(
            "--algo rt explores synchronisation only (memory accesses are not reordered): use \
             --points sync, or odpor or dpor for {mode} points"
        );
    }
    let prepared = crate::points::prepare(&cfg, SEED, None)?;
    sayln!(
        "poscheck explore: algo={}{} points={} program={}",
        algo.name(),
        bound_of(algo).map_or(String::new(), |b| format!(" bound={b}")),
        prepared.mode,
        a.program.display()
    );
    let start = match &a.from {
        Some(f) => start_events(&prepared.cfg, f)?,
        None => Vec::new(),
    };
    let mut exec = RealExecutor::new(&prepared.cfg);
    exec.step_limit_is_bug = a.step_limit_is_bug;
    // With sync points the atomics and memory between points decide paths that the
    // schedule does not fix (which thread of an OpenMP barrier wakes the others, how often
    // libstdc++'s atomic wait spins): a run that leaves its forced prefix is expected, and
    // stopping there left correct programs with an error (exit 2). With memory points it
    // means the program is not determined by its schedule: an error unless asked otherwise.
    let defaulted = !a.approximate
        && !a.strict
        && prepared.mode == crate::points::SYNC
        && replays_approximately(algo);
    let approximate = a.approximate || defaulted;
    let opts = explore::Options {
        start,
        approximate,
        futex_arrivals: prepared.mode != crate::points::SYNC,
    };
    let report = explore::explore_with(algo, &mut exec, limits, opts);
    let doc = summarise(
        a,
        algo,
        approximate,
        &prepared.recorded(),
        &report,
        &exec,
        elf.rust_std,
    )?;
    print_summary(&doc, &report);
    if defaulted && doc.divergent > 0 {
        sayln!(
            "points sync: {} execution(s) did not follow their forced prefix (atomics or \
             memory between scheduling points decided their path); they were replayed \
             approximately and the exploration went on, so some orders may not be explored \
             (--strict stops at the first)",
            doc.divergent
        );
    }
    if doc.points == crate::points::SYNC
        && prepared.cfg.backend != crate::exec::session::Backend::Ptrace
        && doc.complete
        && !elf.rust_std
    {
        // A plain build's atomics and shared variables are no events: the orders of what
        // runs between two synchronisation operations are not explored (a lost update
        // across a `sched_yield` window: odpor explored 1 execution and said complete).
        sayln!(
            "points sync: the exploration covers the orders of synchronisation operations; \
             atomics and shared variables accessed between them are not reordered (a \
             `poscheck cc` build explores them with --points races or mem)"
        );
    }
    if doc.complete && !elf.other_libraries.is_empty() {
        // Probe 20: twelve oneTBB programs, instrumented, explored in 108 executions each
        // and said complete, while sampling found the bugs of two of them: a worker taking
        // part of a `parallel_for` is decided by libtbb's atomics, which no event shows.
        sayln!(
            "libraries: {} not instrumented: how their threads share memory (atomics, \
             spin-waits, task queues) is not seen, so orders decided there are not explored; \
             `complete` covers the orders of the events poscheck sees (sampling with `run` \
             still varies the rest)",
            elf.other_libraries.join(", ")
        );
    }
    if prepared.cfg.backend == crate::exec::session::Backend::Ptrace {
        sayln!(
            "backend ptrace: the exploration covers the orders of its points only: system \
             calls (contended futex operations, yields, sleeps, thread creation and exit) and \
             the breakpoints at the synchronisation functions; what runs between them \
             (atomics, memory accesses, any synchronisation of a stripped static program) is \
             not reordered"
        );
    }
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&doc).context("cannot encode the report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &a.html {
        crate::report::html::write(vec![crate::report::html::Input::of("explore", &doc)?], path)?;
        sayln!("poscheck: report written to {}", path.display());
    }
    let case = junit_case(&doc, exec.error.as_deref());
    crate::report::github::emit(std::slice::from_ref(&case));
    if let Some(path) = &a.junit {
        let suite = crate::report::junit::Suite {
            name: format!("explore-{}", doc.algo),
            properties: vec![
                ("algo".into(), doc.algo.clone()),
                ("points".into(), doc.points.clone()),
                ("executions".into(), doc.executions.to_string()),
                ("complete".into(), doc.complete.to_string()),
            ],
            cases: vec![case],
        };
        crate::report::junit::write(path, &[suite])?;
    }
    if report.buggy > 0 {
        return Ok(1);
    }
    if let Some(e) = &exec.error {
        bail!("exploration stopped: {e}");
    }
    if let Some(d) = &report.diverged {
        bail!(
            "the program did not follow a forced schedule prefix ({d}), so the exploration \
             stopped: something the schedule does not fix decided its path (memory or atomics \
             between scheduling points, which only a `poscheck cc` build with --points mem \
             makes points; real time; input). --approximate counts such runs and goes on"
        );
    }
    Ok(0)
}

/// The exploration as one JUnit case: a failure when a bug was found (the first one), an
/// error when the exploration stopped on an error or a divergence, else a pass.
fn junit_case(d: &ExploreReport, error: Option<&str>) -> crate::report::junit::Case {
    use crate::report::junit::{Case, Verdict};
    let program = Path::new(&d.program);
    let mut text = format!(
        "{} executions explored ({}), {} buggy\n",
        d.executions,
        d.stopped
            .as_deref()
            .map_or("complete".to_string(), |s| format!("incomplete: {s}")),
        d.buggy
    );
    let first = d.bugs.first();
    let verdict = if let Some(b) = first {
        text += &format!("first bug: {}\n", b.description);
        if let Some(s) = d.bugs.iter().find_map(|b| b.schedule.as_ref()) {
            text += &format!("schedule: {s}\nreplay: poscheck replay {s}\n");
        }
        Verdict::Failure {
            kind: b.kind.clone(),
            message: b
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    } else if let Some(why) = error.map(str::to_string).or_else(|| d.diverged.clone()) {
        Verdict::Error { message: why }
    } else {
        Verdict::Pass
    };
    Case {
        classname: format!("explore-{}", d.algo),
        name: crate::program_name(program),
        time_s: d.elapsed_s,
        location: Some(crate::report::github::location(
            program,
            first.map(|b| b.description.as_str()),
        )),
        verdict,
        text,
    }
}

/// Save the bugs' schedules and build the report document (`rust`: the program links Rust's
/// std, whose bug-free searches are never called complete).
/// The algorithms whose forced prefixes may be replayed approximately (`--approximate`,
/// `--strict`); hitting always is.
fn replays_approximately(algo: Algo) -> bool {
    matches!(algo, Algo::Odpor | Algo::Dpor | Algo::Rt)
}

/// The report of an exploration; `approximate`: its prefixes were replayed approximately
/// (asked, or the default with sync points).
fn summarise(
    a: &ExploreArgs,
    algo: Algo,
    approximate: bool,
    points: &str,
    r: &Report,
    exec: &RealExecutor<'_>,
    rust: bool,
) -> Result<ExploreReport> {
    let mut bugs: Vec<BugReport> = Vec::new();
    for (i, b) in r.bugs.iter().enumerate() {
        let kind = exec
            .bug_outcomes
            .get(i)
            .map_or("bug", Outcome::kind)
            .to_string();
        // One schedule file per distinct bug (same description): the first run that hit it.
        let repeat = bugs.iter().any(|o| o.description == b.description);
        let schedule = if repeat {
            None
        } else {
            let path = bug_path(&a.out_dir, &a.program, algo.name(), i);
            let saved = SavedSchedule::of_run(
                Schedule {
                    program: a.program.display().to_string(),
                    args: a.args.clone(),
                    algo: format!("explore-{}", algo.name()),
                    seed: SEED,
                    try_index: i as u64,
                    points: points.to_string(),
                    outcome: kind.clone(),
                    timeouts: crate::report::timeouts_label(exec.cfg),
                    real_sleep: exec.cfg.real_sleep,
                    steps: b.schedule.clone(),
                },
                exec.cfg,
                b.description.clone(),
            );
            saved.save(&path)?;
            Some(path.display().to_string())
        };
        bugs.push(BugReport {
            kind,
            description: b.description.clone(),
            bound: b.bound,
            steps: b.schedule.len(),
            schedule,
        });
    }
    let elapsed = r.elapsed.as_secs_f64();
    let runs = r.executions + r.blocked;
    let cut = exec.step_limits > 0;
    // Rust's std takes an uncontended `Mutex` and every atomic inline: with `sync` points
    // they are no events at all, and in a `poscheck rustc` build std's precompiled code (the
    // slow paths of `Mutex`, `Condvar`, channels, `Once`) still changes atomics without
    // instrumentation. Either way the traces miss orders, so a search that found nothing is
    // not called complete.
    let unseen = rust && r.buggy == 0;
    let stopped = if r.complete && unseen {
        Some(if points == crate::points::SYNC {
            "Rust std: an uncontended Mutex and atomics are no scheduling points at --points \
             sync, so every order may not have been explored; build with `poscheck rustc` \
             and sample it (`poscheck run`)"
                .to_string()
        } else {
            "Rust std: its precompiled code changes atomics that the exploration does not \
             see, so every order may not have been explored; sample it (`poscheck run`)"
                .to_string()
        })
    } else if r.complete && cut {
        Some(format!(
            "step limit: {} execution(s) reached --max-steps {} and were cut there, so what \
             comes after is not explored (not counted as bugs; --step-limit-is-bug counts \
             them); raise --max-steps for a long program",
            exec.step_limits, exec.cfg.max_steps
        ))
    } else if r.complete {
        None
    } else if let Some(e) = &exec.error {
        Some(format!("error: {e}"))
    } else if let Some(d) = &r.diverged {
        Some(format!("divergence: {d}"))
    } else if bound_of(algo).is_some() && r.bound_completed.is_some() {
        Some(format!(
            "bound: executions beyond bound {} were not explored",
            bound_of(algo).unwrap_or_default()
        ))
    } else {
        Some("limit: --max-executions or --time-limit reached".into())
    };
    Ok(ExploreReport {
        program: a.program.display().to_string(),
        args: a.args.clone(),
        algo: algo.name().into(),
        bound: bound_of(algo),
        points: points.split(':').next().unwrap_or_default().to_string(),
        executions: r.executions,
        blocked: r.blocked,
        buggy: r.buggy,
        approximate: approximate || r.family.is_some(),
        divergent: r.divergent,
        skipped_events: r.skipped_events,
        skipped_per_execution: if r.executions > 0 {
            r.skipped_events as f64 / r.executions as f64
        } else {
            0.0
        },
        family: match (algo, &r.family) {
            (Algo::Hitting { depth, prune, .. }, Some(f)) => Some(FamilyReport {
                depth,
                prune: prune.name().into(),
                from: a.from.as_ref().map(|p| p.display().to_string()),
                family: f.clone(),
            }),
            _ => None,
        },
        first_bug_execution: r.first_bug_execution,
        first_bug_s: exec.first_bug_s,
        complete: r.complete && !cut && !unseen,
        step_limits: exec.step_limits,
        stopped,
        diverged: r.diverged.as_ref().map(ToString::to_string),
        first_bug_bound: r.first_bug_bound,
        bound_completed: r.bound_completed,
        executions_per_bound: r.executions_per_bound.clone(),
        rt_peak_pending: (algo == Algo::Rt).then_some(r.rt_peak_pending),
        r4: matches!(algo, Algo::R4 { .. }).then_some(R4Summary {
            divergent: r.divergent,
            skipped_events: r.skipped_events,
            pruned: r.r4_pruned,
        }),
        elapsed_s: elapsed,
        executions_per_s: if elapsed > 0.0 {
            runs as f64 / elapsed
        } else {
            0.0
        },
        bugs,
    })
}

fn print_summary(d: &ExploreReport, r: &Report) {
    if let Some(h) = &d.family {
        let f = &h.family;
        sayln!(
            "family: {} schedules ({}), depth {}, from a run of {} events{}: {} ordered \
             (prune {}), {} races{}",
            f.size,
            f.construction,
            h.depth,
            f.events,
            h.from
                .as_ref()
                .map_or(String::new(), |p| format!(" (--from {p})")),
            f.ordered,
            h.prune,
            f.races,
            match f.verified {
                Some(true) => ", verified d-hitting",
                Some(false) => ", NOT d-hitting (verification failed)",
                None => "",
            }
        );
    }
    sayln!("executions explored: {}", d.executions);
    if d.approximate {
        sayln!(
            "divergent executions (approximate replay skipped events): {} ({} events skipped, \
             {:.2} per execution)",
            d.divergent,
            d.skipped_events,
            d.skipped_per_execution
        );
    }
    sayln!("executions blocked by sleep sets: {}", d.blocked);
    if d.step_limits > 0 {
        sayln!("executions cut by the step limit: {}", d.step_limits);
    }
    sayln!(
        "buggy executions: {}{}",
        d.buggy,
        d.first_bug_execution
            .map_or(String::new(), |n| format!(" (the first is execution {n})"))
    );
    match &d.stopped {
        None => sayln!("exploration: complete"),
        Some(why) => sayln!("exploration: incomplete ({why})"),
    }
    if let Some(b) = d.bound {
        sayln!(
            "bound: {b}; fully explored up to {}; executions per bound {:?}",
            d.bound_completed
                .map_or("none".to_string(), |c| c.to_string()),
            d.executions_per_bound
        );
        match d.first_bug_bound {
            Some(f) => sayln!("first bug at bound {f}"),
            None => sayln!("no bug up to the explored bound"),
        }
    }
    if let Some(r4) = &d.r4 {
        sayln!(
            "r4: {} executions could not follow their target exactly ({} target events \
             skipped); {} reversals not run (an equivalent target was run at a depth no larger)",
            r4.divergent,
            r4.skipped_events,
            r4.pruned
        );
    }
    if let Some(p) = d.rt_peak_pending {
        sayln!("rt: at most {p} race variants pending at once (no history of explored runs)");
    }
    sayln!(
        "time: {:.2} s ({:.1} executions/s)",
        d.elapsed_s,
        d.executions_per_s
    );
    for b in d.bugs.iter().filter(|b| b.schedule.is_some()) {
        let runs = d
            .bugs
            .iter()
            .filter(|o| o.description == b.description)
            .count();
        sayln!(
            "bug: {}{}{}",
            b.description,
            b.bound
                .map_or(String::new(), |x| format!(" [first at bound {x}]")),
            if runs > 1 {
                format!(" ({runs} runs)")
            } else {
                String::new()
            }
        );
        if let Some(s) = &b.schedule {
            sayln!("  schedule: {s} (poscheck replay {s})");
        }
    }
    if r.buggy > r.bugs.len() as u64 {
        sayln!(
            "({} more buggy executions not saved: the first {} are kept)",
            r.buggy - r.bugs.len() as u64,
            explore::MAX_KEPT_BUGS
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_parse_with_units() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration(" 3s").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn bug_files_are_named_after_the_program_algorithm_and_index() {
        let p = bug_path(Path::new("out"), Path::new("/x/lastzero"), "odpor", 3);
        assert_eq!(p, Path::new("out/lastzero.explore-odpor.bug3.json"));
    }
}
