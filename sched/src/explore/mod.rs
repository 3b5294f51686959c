//! Systematic exploration (stateless model checking): re-execute the program under forced
//! schedule prefixes and decide from each recorded trace which prefixes to try next.
//!
//! The algorithms only need an [`Executor`]: the simulator implements it for abstract programs,
//! the runner for real binaries. Entry point: [`explore`].
//!
//! - [`Algo::Dfs`]: every interleaving of the scheduling points ([`dfs`]).
//! - [`Algo::Dpor`]: Source-DPOR, sleep sets plus source sets ([`sdpor`]).
//! - [`Algo::Odpor`]: Optimal-DPOR with wakeup trees ([`odpor`]).
//! - [`Algo::Ipb`] / [`Algo::Idb`]: iterative preemption / delay bounding ([`bounded`]).
//! - [`Algo::Rt`]: reachability testing ([`rt`]).
//! - [`Algo::R4`]: R4's conflict-reversal bounded exploration over executed traces ([`r4`]).

use crate::event::{Event, ObjKind, Tid};
use crate::schedule::Step;
use crate::state::State;
use crate::strategy::{Divergence, Strategy};
use std::time::{Duration, Instant};

pub mod bounded;
pub mod dfs;
pub mod guide;
pub mod hitting;
pub mod odpor;
pub mod r4;
pub mod rt;
pub mod run_order;
pub mod sdpor;
pub mod tev;
pub mod trace;
mod wakeup;

#[cfg(test)]
mod bug_depth;
#[cfg(test)]
mod canon;
#[cfg(test)]
mod sound;
#[cfg(test)]
mod testprog;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_approx;

use guide::{Guide, Rec};

/// The result of executing the program once.
#[derive(Clone, Debug, Default)]
pub struct Execution {
    /// Executed events in order.
    pub trace: Vec<Event>,
    /// `Some(description)` when the run hit a bug (assert, crash, deadlock, ...).
    pub bug: Option<String>,
    /// The strategy could not be followed (a forced prefix the program did not take), or it
    /// stopped the run on purpose (a sleep-set-blocked exploration step).
    pub diverged: Option<Divergence>,
    /// The run was cut before its threads ended, without a bug (the step limit): the events
    /// its threads had posted never ran, and race with the executed ones as a buggy run's do.
    pub cut_short: bool,
}

/// Runs the program under test once, to the end, letting `strategy` make every decision.
pub trait Executor {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution;

    /// Threads that exist at step 0 (1 for real programs: main; more in the simulator's paper
    /// mode, see [`State::with_initial_threads`]). Tids of created threads start there.
    fn initial_threads(&self) -> usize {
        1
    }
}

/// An exploration algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Dfs,
    Dpor,
    Odpor,
    /// Iterative preemption bounding up to `max` preemptions.
    Ipb {
        max: u32,
    },
    /// Iterative delay bounding up to `max` delays.
    Idb {
        max: u32,
    },
    /// Reachability testing (synchronisation-only programs).
    Rt,
    /// A d-hitting family of schedules of one recorded run, run with approximate replay.
    Hitting {
        depth: u32,
        prune: hitting::Prune,
        /// Check the family d-hitting by enumeration before running it.
        verify: bool,
    },
    /// R4: races of executed runs reversed one at a time, up to `bound` reversals deep.
    R4 {
        bound: u32,
    },
}

impl Algo {
    /// Parse a command-line name; `bound` is the `--bound` for ipb/idb (default 3) and r4
    /// (default 2).
    pub fn parse(name: &str, bound: Option<u32>) -> Result<Algo, String> {
        let max = bound.unwrap_or(3);
        match name {
            "dfs" => Ok(Algo::Dfs),
            "dpor" | "sdpor" => Ok(Algo::Dpor),
            "odpor" => Ok(Algo::Odpor),
            "ipb" => Ok(Algo::Ipb { max }),
            "idb" => Ok(Algo::Idb { max }),
            "rt" => Ok(Algo::Rt),
            "hitting" => Ok(Algo::Hitting {
                depth: 3,
                prune: hitting::Prune::Races,
                verify: false,
            }),
            "r4" => Ok(Algo::R4 {
                bound: bound.unwrap_or(2),
            }),
            _ => Err(format!(
                "unknown exploration algorithm {name:?} (known: dfs, dpor, odpor, ipb, idb, rt, \
                 hitting, r4)"
            )),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Algo::Dfs => "dfs",
            Algo::Dpor => "dpor",
            Algo::Odpor => "odpor",
            Algo::Ipb { .. } => "ipb",
            Algo::Idb { .. } => "idb",
            Algo::Rt => "rt",
            Algo::Hitting { .. } => "hitting",
            Algo::R4 { .. } => "r4",
        }
    }
}

/// When to stop before the exploration is complete.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Runs (complete plus sleep-set blocked).
    pub max_executions: Option<u64>,
    pub time_limit: Option<Duration>,
}

/// A run that hit a bug.
#[derive(Clone, Debug)]
pub struct Bug {
    pub description: String,
    /// Replayable schedule of the run.
    pub schedule: Vec<Step>,
    /// For ipb/idb: the bound the run was explored at (its preemption/delay count); for r4:
    /// the run's conflict-reversal depth.
    pub bound: Option<u32>,
}

/// At most this many bug runs are kept with their schedule; all are counted.
pub const MAX_KEPT_BUGS: usize = 64;

/// What an exploration found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub algo: String,
    /// Complete runs (maximal executions, including deadlocked and buggy ones).
    pub executions: u64,
    /// Runs cut short because every enabled event was in the sleep set (Source-DPOR only).
    pub blocked: u64,
    /// Number of runs that hit a bug.
    pub buggy: u64,
    /// The 1-based number (among complete runs) of the first run that hit a bug.
    pub first_bug_execution: Option<u64>,
    /// The first [`MAX_KEPT_BUGS`] bug runs.
    pub bugs: Vec<Bug>,
    /// Everything was explored (no limit cut the exploration short).
    pub complete: bool,
    /// ipb/idb/r4: the smallest bound at which a bug appeared.
    pub first_bug_bound: Option<u32>,
    /// ipb/idb/r4: the largest bound fully explored.
    pub bound_completed: Option<u32>,
    /// ipb/idb: complete runs per bound (each bound re-runs the schedules of lower ones);
    /// r4: complete runs at each conflict-reversal depth.
    pub executions_per_bound: Vec<u64>,
    /// r4: child targets not run because an equivalent one was planned at a depth no larger.
    pub r4_pruned: u64,
    /// rt: the most race variants waiting at once (its only memory besides the current run).
    pub rt_peak_pending: u64,
    /// hitting: the family of schedules that was run.
    pub family: Option<hitting::FamilyInfo>,
    /// The program did not follow a forced prefix: the exploration stopped there.
    pub diverged: Option<Divergence>,
    /// Approximate replay: runs that skipped target events (could not follow their target
    /// exactly), and the events skipped over all runs.
    pub divergent: u64,
    pub skipped_events: u64,
    pub elapsed: Duration,
}

/// Explore the program run by `exec` with `algo` until done or out of budget.
pub fn explore(algo: Algo, exec: &mut dyn Executor, limits: Limits) -> Report {
    explore_from(algo, exec, limits, Vec::new())
}

/// [`explore`], with the first run of `hitting` forced to follow `start` (the events of a
/// recorded run, e.g. a saved schedule's) instead of the default schedule.
pub fn explore_from(
    algo: Algo,
    exec: &mut dyn Executor,
    limits: Limits,
    start: Vec<Event>,
) -> Report {
    explore_with(
        algo,
        exec,
        limits,
        Options {
            start,
            ..Default::default()
        },
    )
}

/// How an exploration follows its forced prefixes.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The events the first run of `hitting` follows (empty: the default schedule).
    pub start: Vec<Event>,
    /// Follow every forced prefix with approximate replay ([`guide`]'s module doc): a run that
    /// does not follow its prefix (a divergence) is counted in [`Report::divergent`] and its
    /// actual trace analysed as usual, instead of ending the exploration. For odpor, dpor and
    /// rt (hitting always replays approximately).
    ///
    /// The price: the algorithms' bookkeeping assumes each run realises its prefix. With a
    /// divergent run, odpor drops the wakeup-tree branches planned past the first skipped
    /// event and puts an event it planned but could not run into the sleep set of its state,
    /// dpor marks such a thread done there, and rt re-reads the variant's fixed receives from
    /// the actual run and drops race variants that do not fix more receives than their parent
    /// (which keeps its search finite). So traces may be explored twice (the execution count
    /// can exceed the number of traces) or missed: a complete approximate exploration with
    /// divergent runs is a thorough bug search, not a proof.
    pub approximate: bool,
    /// The event after which a thread posts a futex wait depends on the other threads' wakes
    /// of that futex and writes of its word ([`trace::TEv::futex_arrival`]). Right when the
    /// program's atomics are points (`--points mem`/`races`): which thread waits and which
    /// wakes is then decided at points. With synchronisation points only, it is decided by
    /// atomics between them (the last thread into an OpenMP barrier wakes the others), so a
    /// wake moved before an arrival often meets a thread that now waits instead, a
    /// divergence; there the arrivals are left out, as before.
    pub futex_arrivals: bool,
}

/// [`explore`] with [`Options`].
pub fn explore_with(algo: Algo, exec: &mut dyn Executor, limits: Limits, opts: Options) -> Report {
    let mut ctx = Ctx::new(algo, exec, limits);
    ctx.first = opts.start;
    ctx.approximate = opts.approximate;
    ctx.futex_arrivals = opts.futex_arrivals;
    match algo {
        Algo::Dfs => dfs::run(&mut ctx),
        Algo::Dpor => sdpor::run(&mut ctx),
        Algo::Odpor => odpor::run(&mut ctx),
        Algo::Ipb { max } => bounded::run(&mut ctx, bounded::Kind::Preemption, max),
        Algo::Idb { max } => bounded::run(&mut ctx, bounded::Kind::Delay, max),
        Algo::Rt => rt::run(&mut ctx),
        Algo::Hitting {
            depth,
            prune,
            verify,
        } => hitting::run(&mut ctx, depth, prune, verify),
        Algo::R4 { bound } => r4::run(&mut ctx, bound),
    }
    ctx.report.elapsed = ctx.start.elapsed();
    ctx.report
}

/// How one run ended, from the algorithm's point of view.
pub(crate) enum Outcome {
    /// Ran to the end (possibly with a bug, recorded in the report).
    Complete,
    /// Stopped on a sleep-set-blocked state.
    Blocked,
    /// Diverged from the forced prefix, or the budget is exhausted: stop exploring.
    Stop,
}

/// Shared plumbing of the algorithms: runs, budget, report.
pub(crate) struct Ctx<'e> {
    exec: &'e mut dyn Executor,
    limits: Limits,
    start: Instant,
    pub report: Report,
    pub initial: usize,
    /// The last run ended before every thread finished (a deadlock, a failed assertion, a
    /// crash): the events its threads posted and never ran (the guide's `waiting`) can still
    /// race with the executed ones (see [`trace::blocked_races`]).
    pub cut_short: bool,
    /// The events the first run follows (hitting), empty for the default schedule.
    pub first: Vec<Event>,
    /// Guides replay their prefixes approximately ([`Options::approximate`]).
    pub approximate: bool,
    /// Guides mark futex arrivals ([`Options::futex_arrivals`]).
    pub futex_arrivals: bool,
}

impl<'e> Ctx<'e> {
    fn new(algo: Algo, exec: &'e mut dyn Executor, limits: Limits) -> Self {
        let initial = exec.initial_threads().max(1);
        Ctx {
            exec,
            limits,
            start: Instant::now(),
            report: Report {
                algo: algo.name().into(),
                ..Default::default()
            },
            initial,
            cut_short: false,
            first: Vec::new(),
            approximate: false,
            futex_arrivals: false,
        }
    }

    /// A guide for this program.
    pub fn guide(&self, rule: guide::Rule, use_sleep: bool) -> Guide {
        let mut g = Guide::new(rule, use_sleep, self.initial as Tid);
        g.approximate = self.approximate;
        g.futex_arrivals = self.futex_arrivals;
        g
    }

    /// When the time limit runs out, if there is one (for analyses that take long within
    /// one run, e.g. rt's race table).
    pub fn deadline(&self) -> Option<Instant> {
        self.limits.time_limit.map(|t| self.start + t)
    }

    /// The budget is used up: mark the exploration incomplete.
    pub fn out_of_budget(&mut self) -> bool {
        let runs = self.report.executions + self.report.blocked;
        let out = self.limits.max_executions.is_some_and(|m| runs >= m)
            || self
                .limits
                .time_limit
                .is_some_and(|t| self.start.elapsed() >= t);
        if out {
            self.report.complete = false;
        }
        out
    }

    /// Run the program once under `guide` (already planned) and account for the run.
    pub fn run(&mut self, guide: &mut Guide, bound: Option<u32>) -> Outcome {
        let ex = self.exec.execute(guide);
        // Events posted and never run race with the executed ones ([`trace::blocked_races`])
        // whenever the run ended without them: a bug, the step limit, a process exit while
        // other threads still waited to run (`exit` on a timeout path taken with
        // `--timeouts any` ended the run before the thread that would wake the wait ran,
        // and the wake-up path was never explored: probe 18), or a sleep-set-blocked run
        // whose disabled events remain (Source-DPOR then reaches the traces it missed on 10
        // of 600 random programs and on philosophers_ok: 80 of 90).
        self.cut_short = ex.bug.is_some() || ex.cut_short || guide.left_waiting().next().is_some();
        if guide.blocked {
            self.report.blocked += 1;
            return Outcome::Blocked;
        }
        if let Some(d) = guide.diverged.take().or(ex.diverged) {
            self.report.diverged = Some(d);
            self.report.complete = false;
            return Outcome::Stop;
        }
        self.report.executions += 1;
        if guide.skipped > 0 {
            self.report.divergent += 1;
            self.report.skipped_events += guide.skipped;
        }
        if let Some(desc) = ex.bug {
            self.report.buggy += 1;
            if self.report.first_bug_execution.is_none() {
                self.report.first_bug_execution = Some(self.report.executions);
            }
            if let Some(b) = bound {
                let first = self.report.first_bug_bound.map_or(b, |f| f.min(b));
                self.report.first_bug_bound = Some(first);
            }
            if self.report.bugs.len() < MAX_KEPT_BUGS {
                self.report.bugs.push(Bug {
                    description: desc,
                    schedule: schedule(&guide.steps, &guide.inits, self.initial),
                    bound,
                });
            }
        }
        Outcome::Complete
    }
}

/// The replayable schedule (with stable thread names) of a recorded run, replayed on the
/// state machine with the run's semaphore and barrier initialisations (without them a
/// `sem_wait` on a semaphore initialised to 2 is not enabled and the schedule would stop
/// there).
fn schedule(steps: &[Rec], inits: &[trace::Init], initial: usize) -> Vec<Step> {
    let mut s = State::with_initial_threads(initial);
    // The run's events were all enabled when they ran: let every timeout fire, and let time
    // pass to a sleep's deadline (the real run's clock did), so timed events do not cut the
    // schedule short.
    s.set_timeout_policy(crate::state::clock::TimeoutPolicy::Any);
    let init_at = |s: &mut State, at: usize| {
        for i in inits.iter().filter(|i| i.at == at) {
            match i.obj.kind {
                ObjKind::Sem => s.init_sem(i.obj.addr, i.value),
                ObjKind::Barrier => s.init_barrier(i.obj.addr, i.value),
                ObjKind::Mutex => s.init_mutex(i.obj.addr),
                _ => {}
            }
        }
    };
    init_at(&mut s, 0);
    let evs: Vec<trace::TEv> = steps.iter().map(|r| r.ev).collect();
    let next_wait = trace::futex_waits_posted_after(&evs);
    let mut out = Vec::with_capacity(steps.len());
    for (k, r) in steps.iter().enumerate() {
        let t = r.ev.tid();
        if (t as usize) < s.num_threads() {
            out.push(Step::new(t, s.name(t).clone(), r.ev.ev.op.to_string()));
        }
        let posted = s.pending(t).is_some() || s.post(t, r.ev.ev.op).is_ok();
        while posted && !s.is_enabled(t) && s.advance_clock() {}
        let ok = posted && s.execute(t).is_ok();
        if !ok {
            break;
        }
        init_at(&mut s, k + 1);
        // A thread reaching a futex wait posts it at once (an OpenMP barrier's wait, then
        // the other thread's wake): posted only at its turn, it missed its wake and the
        // saved schedule of an odpor bug stopped there (4 steps of an OpenMP program).
        trace::post_futex_waits(&mut s, &evs, &next_wait[k]);
    }
    out
}
