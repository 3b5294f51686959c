//! Test-only ground truth: the Mazurkiewicz traces of an abstract program, counted without
//! any of the exploration algorithms.
//!
//! A trace is named by a canonical form of any of its linearisations ([`key`]): how many events
//! each thread ran, and every ordered pair of dependent events (by [`dependent`], the relation
//! the explorers reduce by), events named (thread, index in thread). Two executions have the
//! same form exactly when one is obtained from the other by swapping adjacent independent
//! events.
//!
//! [`count_traces`] enumerates the trace *prefixes* breadth-first, one representative per
//! canonical form: from each prefix it replays the program (a fresh run forced along the
//! prefix) to learn the enabled events, and extends it by each of them. The maximal prefixes
//! (the run ended: every thread finished, or deadlock) are the traces. Memoising prefixes by
//! form makes it polynomial in their number, where a DFS over interleavings is exponential,
//! so it reaches the configurations DFS cannot; where DFS can run, both are compared.

use super::testprog::{Interp, Prog};
use super::trace::{
    barrier_open, dependent, exits_after_robust_lock, exits_in_once, nested_in_owner,
    rw_unlock_reads, TEv,
};
use super::{explore, Algo, Execution, Executor, Limits, Report};
use crate::event::{Event, Op, Tid};
use crate::strategy::{Divergence, Strategy};
use std::collections::{HashMap, HashSet};

/// Canonical form of a trace: events per thread, ordered dependent pairs.
pub type Key = (Vec<u32>, Vec<((Tid, u32), (Tid, u32))>);

/// The facts [`dependent`] needs beyond `(tid, op)`, recomputed for an executed sequence as
/// the exploration guide records them: a create's child (tids are given in creation order
/// from `initial`), an rwlock unlock's read mode, a barrier arrival that leaves the barrier
/// open (`barriers`: address → count).
pub fn annotate(trace: &[Event], initial: usize, barriers: &HashMap<u64, u32>) -> Vec<TEv> {
    let mut out: Vec<TEv> = Vec::with_capacity(trace.len());
    let mut next = initial as Tid;
    for e in trace {
        let mut t = TEv::new(*e);
        match e.op {
            Op::Create => {
                t.child = Some(next);
                next += 1;
            }
            Op::RwUnlock { l } => t.reader = rw_unlock_reads(out.iter().rev(), e.tid, l),
            Op::Lock { .. } | Op::Unlock { .. } | Op::TryLock { .. } | Op::TimedLock { .. } => {
                t.nested = nested_in_owner(out.iter().rev(), e)
            }
            Op::Exit => {
                t.robust_exit = exits_after_robust_lock(out.iter().rev(), e);
                t.once_exit = exits_in_once(out.iter().rev(), e);
            }
            Op::BarrierWait { b } => {
                t.barrier_open = barrier_open(out.iter().rev(), b, barriers.get(&b).copied())
            }
            _ => {}
        }
        out.push(t);
    }
    out
}

/// The canonical form of the trace `t` is a linearisation of.
pub fn key(t: &[TEv]) -> Key {
    let mut per: HashMap<Tid, u32> = HashMap::new();
    let named: Vec<(Tid, u32)> = t
        .iter()
        .map(|e| {
            let c = per.entry(e.tid()).or_insert(0);
            *c += 1;
            (e.tid(), *c)
        })
        .collect();
    let mut pairs = Vec::new();
    for i in 0..t.len() {
        for j in i + 1..t.len() {
            if t[i].tid() != t[j].tid() && dependent(&t[i], &t[j]) {
                pairs.push((named[i], named[j]));
            }
        }
    }
    pairs.sort_unstable();
    let threads = per.keys().copied().max().map_or(0, |m| m as usize + 1);
    let counts = (0..threads as Tid)
        .map(|t| per.get(&t).copied().unwrap_or(0))
        .collect();
    (counts, pairs)
}

/// Follows a list of thread choices, then stops the run and keeps the enabled events.
struct Probe {
    prefix: Vec<Tid>,
    at: usize,
    /// The events enabled after the prefix (empty: the run ended there).
    enabled: Vec<Event>,
    trace: Vec<Event>,
}

impl Strategy for Probe {
    fn name(&self) -> String {
        "probe".into()
    }
    fn begin(&mut self, _seed: u64) {}
    fn pending(&mut self, _ev: &Event) {}
    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        let reason = match self.prefix.get(self.at) {
            Some(&t) => match enabled.iter().position(|e| e.tid == t) {
                Some(i) => {
                    self.at += 1;
                    return Ok(i);
                }
                None => "not enabled",
            },
            None => {
                self.enabled = enabled.to_vec();
                "end of prefix"
            }
        };
        Err(Divergence {
            step: self.at as u64,
            reason: reason.into(),
        })
    }
    fn executed(&mut self, ev: &Event) {
        self.trace.push(*ev);
    }
}

/// What [`count_traces`] found.
#[derive(Clone, Debug, Default)]
pub struct Count {
    /// Maximal traces (complete, deadlocked or buggy runs).
    pub traces: usize,
    /// Of those, runs that ended in a bug or deadlock.
    pub buggy: usize,
    /// Distinct trace prefixes visited (the enumeration's cost).
    pub prefixes: usize,
}

/// Enumerate the Mazurkiewicz traces of `prog` (see the module doc); `None` once more than
/// `max_prefixes` prefixes are reached.
pub fn count_traces(prog: &Prog, max_prefixes: usize) -> Option<Count> {
    let mut interp = Interp::new(prog.clone());
    let initial = interp.initial_threads();
    let barriers = prog.barrier_counts();
    let mut seen: HashSet<Key> = HashSet::new();
    let mut todo: Vec<Vec<Tid>> = vec![Vec::new()];
    seen.insert(key(&[]));
    let mut count = Count::default();
    while let Some(prefix) = todo.pop() {
        count.prefixes += 1;
        if count.prefixes > max_prefixes {
            return None;
        }
        let mut probe = Probe {
            prefix: prefix.clone(),
            at: 0,
            enabled: Vec::new(),
            trace: Vec::new(),
        };
        let ex = interp.execute(&mut probe);
        assert_eq!(probe.at, prefix.len(), "a recorded prefix must replay");
        if probe.enabled.is_empty() {
            count.traces += 1;
            if ex.bug.is_some() {
                count.buggy += 1;
            }
            continue;
        }
        for e in &probe.enabled {
            let mut t = probe.trace.clone();
            t.push(*e);
            if seen.insert(key(&annotate(&t, initial, &barriers))) {
                let mut next = prefix.clone();
                next.push(e.tid);
                todo.push(next);
            }
        }
    }
    Some(count)
}

/// Records every complete run of an exploration, [`annotate`]d, with whether it hit a bug.
struct Recorder {
    inner: Interp,
    runs: Vec<(Vec<TEv>, bool)>,
}

impl Executor for Recorder {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        let ex = self.inner.execute(strategy);
        if ex.diverged.is_none() {
            let t = annotate(
                &ex.trace,
                self.inner.initial_threads(),
                &self.inner.prog.barrier_counts(),
            );
            self.runs.push((t, ex.bug.is_some()));
        }
        ex
    }
    fn initial_threads(&self) -> usize {
        self.inner.initial_threads()
    }
}

/// Explore `prog` completely with `algo`: the report and every complete run (annotated
/// trace, buggy or not), for tests that compare explorers with [`count_traces`] or inspect
/// the traces.
pub fn explore_runs(algo: Algo, prog: &Prog) -> (Report, Vec<(Vec<TEv>, bool)>) {
    let mut r = Recorder {
        inner: Interp::new(prog.clone()),
        runs: Vec::new(),
    };
    let report = explore(algo, &mut r, Limits::default());
    assert!(
        report.complete && report.diverged.is_none(),
        "{algo:?}: {report:?}"
    );
    (report, r.runs)
}
