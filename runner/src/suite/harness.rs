//! Many tries of one program across `--jobs` worker threads.
//!
//! Reproducibility: try `i` runs with seed `try_seed(S, i)` and a *fresh* strategy instance,
//! so its schedule depends only on (algorithm, S, i, PCT's k) and not on which worker ran it
//! or what that worker ran before. PCT needs k (the steps of a run) in advance (Burckhardt et
//! al. ASPLOS'10, §3: change points are drawn in [1, k]): one calibration run with random walk
//! and seed S measures it first, and that k is used by every try and recorded.
//! `urw`, `surw` and `tapct` need per-thread event counts and the racing addresses: a fixed
//! number of profiling runs ([`strategy::surw::build_profile`], seeds derived from S) give
//! one immutable profile before the tries, shared by all of them (for `tapct` its k' is
//! recorded as k).
//! `rff` (and `auto`, whose `rff` member needs it) learns between batches of
//! [`points::LEARN_BATCH`] tries: the feedback of a batch enters the corpus in try order, and
//! every try of the next batch sees the same snapshot, so results do not depend on `--jobs`.
//! `auto` runs try `i` with member [`portfolio::member`]`(try_seed(S, i))` and attributes
//! its outcome to that member ([`Tally::members`]).

use crate::exec::forkserver;
use crate::exec::session::{self, RunConfig, RunResult};
use crate::points;
use crate::suite::outcome::Outcome;
use crate::suite::progress::Progress;
use anyhow::{anyhow, Result};
use pos_sched::race::{Detector, Learner};
use pos_sched::rng::try_seed;
use pos_sched::strategy::rff::{self, Corpus};
use pos_sched::strategy::surw::{self, Profile};
use pos_sched::strategy::{self, portfolio, Options};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A session's parameters for one program.
#[derive(Clone, Debug)]
pub struct Plan {
    pub algo: String,
    pub depth: Option<u32>,
    pub seed: u64,
    pub tries: u64,
    pub jobs: usize,
    pub stop_on_first: bool,
    /// `--step-limit-is-bug`: count runs that reach the step limit as bugs (by default
    /// they are shown apart: a long correct program reaches it too).
    pub step_limit_is_bug: bool,
    pub cfg: RunConfig,
}

/// What the tries of one program gave.
#[derive(Clone, Debug)]
pub struct Tally {
    pub tries: u64,
    pub hits: u64,
    pub outcomes: BTreeMap<String, u64>,
    pub total_steps: u64,
    pub wall_s: f64,
    pub pct_k: Option<u64>,
    /// The buggy run with the smallest try index, with that index.
    pub first_hit: Option<(u64, RunResult)>,
    /// Seconds from the start of the program's session (calibration and profiling runs
    /// included) until the first buggy try finished, whichever try that was: the time to
    /// first bug a user waits.
    pub first_hit_s: Option<f64>,
    /// When the program's session started.
    pub started: Instant,
    /// The first `error` outcome, for the report.
    pub first_error: Option<String>,
    /// The scheduling-point mode the tries used, as saved schedules record it
    /// ([`crate::points::encode`]: `races:` lists the racing pcs).
    pub points: String,
    /// `races` mode: racing sites the profiling runs found (0: the tries used sync points).
    pub racing_sites: Option<usize>,
    /// Runs in which a thread was set aside as blocked outside control (partial runs, whose
    /// schedules may not replay exactly), and how many times in all.
    pub partial: u64,
    pub outside: u64,
    /// `races` mode: profiling runs cut off by the step limit (incomplete profile).
    pub profile_cut_off: u64,
    /// Runs that reached the step limit (bugs only with `--step-limit-is-bug`).
    pub step_limits: u64,
    /// `auto` points: each racing site learned during the session (pc) with the index of
    /// the first try that exhibited it; it was a point from the next batch on.
    pub learned: Vec<(u64, u64)>,
    /// What libpos said runs uncontrolled (a forked child's threads, an exec'd image),
    /// each note once.
    pub uncontrolled: std::collections::BTreeSet<String>,
    /// `auto`: per member, (tries, hits).
    pub members: BTreeMap<String, (u64, u64)>,
    /// `rff`/`auto`: corpus entries and distinct reads-from pairs at the end.
    pub corpus: Option<(usize, usize)>,
}

/// libpos's notes about what runs uncontrolled, from a run's stderr (see
/// `preload/src/process.rs`, `UNCONTROLLED`).
pub fn uncontrolled_notes(stderr: &[u8]) -> impl Iterator<Item = String> + '_ {
    const MARK: &str = "poscheck: uncontrolled: ";
    stderr
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let l = String::from_utf8_lossy(l);
            l.split_once(MARK).map(|(_, what)| what.trim().to_string())
        })
        .filter(|w| !w.is_empty())
}

/// Whether `algo` draws PCT change points and so needs k.
pub fn needs_k(algo: &str) -> bool {
    algo.starts_with("pct") || algo == "auto"
}

/// Build the strategy of one try (validates the name).
pub fn make_strategy(plan: &Plan, pct_k: Option<u64>) -> Result<Box<dyn pos_sched::Strategy>> {
    make_strategy_with(plan, &options(plan, pct_k, None))
}

/// The constructor options of `plan`'s strategy.
pub fn options(plan: &Plan, pct_k: Option<u64>, profile: Option<Arc<Profile>>) -> Options {
    Options {
        depth: plan.depth,
        pct_k,
        profile,
        corpus: None,
    }
}

/// [`make_strategy`] with the options the session prepared (profile, corpus).
pub fn make_strategy_with(plan: &Plan, opts: &Options) -> Result<Box<dyn pos_sched::Strategy>> {
    strategy::by_name(&plan.algo, opts).map_err(|e| anyhow!(e))
}

/// The profile `algo` needs (see the module documentation), from runs seeded by `seed`.
pub fn profile_for(cfg: &RunConfig, algo: &str, seed: u64) -> Result<Option<Arc<Profile>>> {
    if !surw::needs_profile(algo) {
        return Ok(None);
    }
    let p = surw::build_profile(seed, |s, seed| session::run_once(cfg, s, seed).map(|_| ()))?;
    Ok(Some(Arc::new(p)))
}

/// Run the plan's tries; `label` names the program in the progress line.
pub fn run_tries(plan: &Plan, label: &str) -> Result<Tally> {
    let start = Instant::now();
    make_strategy(plan, None)?;
    // `races` points: profile first (see `points`); the races file lives until the end.
    let mut prepared = points::prepare(&plan.cfg, plan.seed, None)?;
    let learning = prepared.mode == points::AUTO;
    let mut cfg = prepared.cfg.clone();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if plan.jobs >= cores {
        // Every core already runs a try: a spinning decision loop would only take CPU
        // from the programs.
        cfg.spin = Duration::ZERO;
    }
    let mut plan = Plan {
        cfg,
        ..plan.clone()
    };
    let pct_k = if needs_k(&plan.algo) {
        let mut rw = strategy::by_name("rw", &Options::default()).map_err(|e| anyhow!(e))?;
        let r = session::run_once(&plan.cfg, rw.as_mut(), plan.seed)?;
        Some(r.steps.max(1))
    } else {
        None
    };
    let profile = profile_for(&plan.cfg, &plan.algo, plan.seed)?;
    let pct_k = pct_k.or_else(|| {
        profile
            .as_ref()
            .filter(|_| plan.algo.starts_with("tapct"))
            .map(|p| p.max_interesting)
    });
    let mut tally = Tally {
        tries: 0,
        hits: 0,
        outcomes: BTreeMap::new(),
        total_steps: 0,
        wall_s: 0.0,
        pct_k,
        first_hit: None,
        first_hit_s: None,
        started: start,
        first_error: None,
        points: prepared.recorded(),
        racing_sites: prepared.racing_sites,
        partial: 0,
        outside: 0,
        profile_cut_off: prepared.cut_off,
        step_limits: 0,
        learned: Vec::new(),
        uncontrolled: Default::default(),
        members: BTreeMap::new(),
        corpus: None,
    };
    let stop = AtomicBool::new(false);
    let progress = Progress::new(&plan.algo, label, plan.tries, plan.jobs);
    let feedback = rff::uses_feedback(&plan.algo);
    let mut opts = options(&plan, pct_k, profile);
    if !learning && !feedback {
        run_batch(
            &plan,
            0..plan.tries,
            &opts,
            &stop,
            &mut tally,
            &progress,
            |_, _, _| {},
        )?;
    } else {
        if learning {
            plan.cfg.record_trace = true;
            plan.cfg.observe = true;
        }
        let mut learner = Learner::new(points::LEARN_BATCH, prepared.pcs.clone());
        let mut corpus = Corpus::new();
        if feedback {
            opts.corpus = Some(Arc::new(corpus.clone()));
        }
        let mut from = 0;
        while from < plan.tries
            && !stop.load(Ordering::Relaxed)
            && !crate::exec::cleanup::interrupted()
        {
            let end = (from + learner.batch()).min(plan.tries);
            let mut found = Vec::new();
            let mut fbs = BTreeMap::new();
            let first_before = tally.first_hit.as_ref().map(|(i, _)| *i);
            run_batch(
                &plan,
                from..end,
                &opts,
                &stop,
                &mut tally,
                &progress,
                |i, r, fb| {
                    if learning {
                        let mut d = Detector::new();
                        for (ev, pc) in &r.trace {
                            d.step(ev, *pc);
                        }
                        found.push((i, d.racing_pcs()));
                    }
                    if let Some(fb) = fb {
                        fbs.insert(i, fb);
                    }
                },
            )?;
            if feedback {
                // In try order, whatever order the workers finished in.
                corpus.absorb(fbs.into_values());
                opts.corpus = Some(Arc::new(corpus.clone()));
            }
            if learning {
                if tally.first_hit.as_ref().map(|(i, _)| *i) != first_before {
                    // The saved schedule records the sites its try ran with.
                    tally.points = prepared.recorded();
                }
                if learner.absorb(found) {
                    prepared.set_pcs(learner.pcs())?;
                    plan.cfg.races_file = prepared.cfg.races_file.clone();
                    if tally.first_hit.is_none() {
                        tally.points = prepared.recorded();
                    }
                }
            }
            from = end;
        }
        if learning {
            tally.learned = learner.learned();
            tally.racing_sites = Some(learner.pcs().len());
        }
        if feedback {
            tally.corpus = Some((corpus.len(), corpus.pairs()));
        }
    }
    progress.finish();
    // The one this thread may hold (from the PCT or profiling runs) serves no other program.
    forkserver::shut_down();
    tally.wall_s = start.elapsed().as_secs_f64();
    Ok(tally)
}

/// A finished try: its index, result and the strategy's feedback.
type Finished = (u64, RunResult, Option<rff::Feedback>);

/// Run tries `range` of `plan` across its workers into `tally`; `each` sees every finished
/// try (index, result, feedback) before the tally keeps or drops it.
#[allow(clippy::too_many_arguments)]
fn run_batch(
    plan: &Plan,
    range: std::ops::Range<u64>,
    opts: &Options,
    stop: &AtomicBool,
    tally: &mut Tally,
    progress: &Progress,
    mut each: impl FnMut(u64, &RunResult, Option<rff::Feedback>),
) -> Result<()> {
    let next = AtomicU64::new(range.start);
    let (tx, rx) = crossbeam_channel::unbounded::<Result<Finished>>();
    std::thread::scope(|s| -> Result<()> {
        for w in 0..plan.jobs.max(1) {
            let tx = tx.clone();
            let next = &next;
            let end = range.end;
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= end
                        || stop.load(Ordering::Relaxed)
                        || crate::exec::cleanup::interrupted()
                    {
                        break;
                    }
                    progress.started(w, i);
                    let r = make_strategy_with(plan, opts).and_then(|mut st| {
                        let r = session::run_once(&plan.cfg, st.as_mut(), try_seed(plan.seed, i))?;
                        Ok((i, r, st.take_feedback()))
                    });
                    let failed = r.is_err();
                    if tx.send(r).is_err() || failed {
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                }
                // Before the scope ends: a thread-local's drop may outlive the join.
                forkserver::shut_down();
            });
        }
        drop(tx);
        let mut setup_error = None;
        loop {
            let msg = match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(m) => m,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    progress.tick();
                    continue;
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            };
            if crate::exec::cleanup::interrupted() {
                // Killed by the interrupt (or finished next to it): not a result.
                continue;
            }
            let (i, mut r, fb) = match msg {
                Ok(x) => x,
                Err(e) => {
                    setup_error.get_or_insert(e);
                    continue;
                }
            };
            each(i, &r, fb);
            // The trace served learning; a kept first hit needs only its schedule.
            r.trace = Vec::new();
            tally.tries += 1;
            tally.total_steps += r.steps;
            tally.partial += u64::from(r.outside > 0);
            tally.outside += r.outside;
            *tally
                .outcomes
                .entry(r.outcome.kind().to_string())
                .or_default() += 1;
            if let Outcome::Error { reason } = &r.outcome {
                tally.first_error.get_or_insert_with(|| reason.clone());
            }
            tally.uncontrolled.extend(uncontrolled_notes(&r.stderr));
            let step_limit = matches!(r.outcome, Outcome::StepLimit { .. });
            tally.step_limits += u64::from(step_limit);
            let hit = r.outcome.is_bug() && (plan.step_limit_is_bug || !step_limit);
            if plan.algo == "auto" {
                let m = tally
                    .members
                    .entry(portfolio::member(try_seed(plan.seed, i)).to_string())
                    .or_default();
                m.0 += 1;
                m.1 += u64::from(hit);
            }
            if hit {
                tally.hits += 1;
                tally
                    .first_hit_s
                    .get_or_insert_with(|| tally.started.elapsed().as_secs_f64());
                if plan.stop_on_first {
                    stop.store(true, Ordering::Relaxed);
                }
                if tally.first_hit.as_ref().is_none_or(|(j, _)| i < *j) {
                    tally.first_hit = Some((i, r));
                }
            }
            progress.update(tally.tries, tally.hits);
        }
        match setup_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}
