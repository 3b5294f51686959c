//! Test-only: the depth of a bug in the sense of d-hitting families (Chistikov, Majumdar,
//! Niksic, CAV'16): the least `d` such that some `d` events, run in some order, force the bug
//! (every execution that runs them in that order is buggy). A d-hitting family is guaranteed
//! to hit bugs of depth ≤ d only; this measures the depth of a model program's bug exactly.
//!
//! Every Mazurkiewicz trace of the program is explored (Optimal-DPOR, whose soundness
//! [`super::sound`] checks against an independent count); a trace runs the tuple `(a1, …, ad)`
//! in some linearisation iff all its events occur in it and no `aj` happens before an `ai`
//! with `i < j` (its happens-before order: program order and the explorers' dependence,
//! [`dependent`]). All linearisations of a trace end alike, so a tuple forces the bug iff some
//! buggy trace runs it and no bug-free trace does. Events are named by thread, operation and
//! occurrence (the second `lock` of thread 3), so that they are the same events in every
//! execution where they occur.

use super::canon::explore_runs;
use super::guide::{Guide, Rule};
use super::run_order::RunOrder;
use super::testprog::{self, Interp, Prog};
use super::trace::{dependent, TEv};
use super::{Algo, Executor};
use crate::event::Tid;
use crate::hitting::Order;
use std::collections::{HashMap, HashSet};

/// An event named across executions: thread, operation name, occurrence (1-based) of that
/// operation in the thread.
type Name = (Tid, &'static str, u32);

/// One trace: its events' names, their happens-before order, whether it is buggy.
struct Trace {
    names: Vec<Name>,
    index: HashMap<Name, usize>,
    /// `hb[i][j]`: event `i` happens before event `j`.
    hb: Vec<Vec<bool>>,
    buggy: bool,
}

impl Trace {
    fn new(t: &[TEv], buggy: bool) -> Trace {
        let mut seen: HashMap<(Tid, &'static str), u32> = HashMap::new();
        let names: Vec<Name> = t
            .iter()
            .map(|e| {
                let op = e.ev.op.name();
                let c = seen.entry((e.tid(), op)).or_insert(0);
                *c += 1;
                (e.tid(), op, *c)
            })
            .collect();
        let n = t.len();
        let mut hb = vec![vec![false; n]; n];
        for j in 0..n {
            for i in 0..j {
                if t[i].tid() == t[j].tid() || dependent(&t[i], &t[j]) {
                    hb[i][j] = true;
                    for row in hb.iter_mut().take(i) {
                        if row[i] {
                            row[j] = true;
                        }
                    }
                }
            }
        }
        let index = names.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        Trace {
            names,
            index,
            hb,
            buggy,
        }
    }

    /// Some linearisation of this trace runs `tuple` in order.
    fn runs(&self, tuple: &[Name]) -> bool {
        let Some(ix) = tuple
            .iter()
            .map(|n| self.index.get(n).copied())
            .collect::<Option<Vec<usize>>>()
        else {
            return false;
        };
        (0..ix.len()).all(|i| (i + 1..ix.len()).all(|j| !self.hb[ix[j]][ix[i]]))
    }
}

fn traces(p: &Prog) -> Vec<Trace> {
    let (_, runs) = explore_runs(Algo::Odpor, p);
    runs.iter()
        .map(|(t, buggy)| Trace::new(t, *buggy))
        .collect()
}

/// The `d`-tuples (in the order a buggy trace can run them) that force the bug.
fn forcing(traces: &[Trace], d: usize) -> Vec<Vec<Name>> {
    let good: Vec<&Trace> = traces.iter().filter(|t| !t.buggy).collect();
    let mut tried: HashSet<Vec<Name>> = HashSet::new();
    let mut out = Vec::new();
    for bad in traces.iter().filter(|t| t.buggy) {
        let n = bad.names.len();
        // Ordered tuples of distinct events that `bad` can run in that order, built one
        // event at a time (a prefix it cannot run has no admissible extension).
        let mut stack: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        while let Some(t) = stack.pop() {
            if t.len() == d {
                let named: Vec<Name> = t.iter().map(|&i| bad.names[i]).collect();
                if tried.insert(named.clone()) && !good.iter().any(|g| g.runs(&named)) {
                    out.push(named);
                }
                continue;
            }
            for j in 0..n {
                if !t.contains(&j) && t.iter().all(|&i| !bad.hb[j][i]) {
                    let mut u = t.clone();
                    u.push(j);
                    stack.push(u);
                }
            }
        }
    }
    out
}

fn runs_bug_free(traces: &[Trace], tuple: &[Name]) -> bool {
    traces.iter().any(|t| !t.buggy && t.runs(tuple))
}

/// The run `explore --algo hitting` records (the guide's default order, lowest thread
/// first) and the order its family is built on (happens-before without lock edges,
/// [`RunOrder::without_locks`]): its events' names and that order.
fn recorded(p: &Prog) -> (Vec<Name>, Order) {
    let mut exec = Interp::new(p.clone());
    let mut g = Guide::new(Rule::Lowest, false, exec.initial_threads() as Tid);
    exec.execute(&mut g);
    let events: Vec<TEv> = g.steps.iter().map(|r| r.ev).collect();
    let names = Trace::new(&events, false).names;
    let order = RunOrder::without_locks(events).order();
    (names, order)
}

/// The forcing `d`-tuples that the recorded run's order admits, i.e. those a d-hitting
/// family of it must run: every event occurs in the run, none is ordered before an earlier
/// one of the tuple.
fn forcing_in_recorded(traces: &[Trace], p: &Prog, d: usize) -> Vec<Vec<Name>> {
    let (names, order) = recorded(p);
    let n = names.len();
    let mut out = Vec::new();
    let mut stack: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    while let Some(t) = stack.pop() {
        if t.len() == d {
            let named: Vec<Name> = t.iter().map(|&i| names[i]).collect();
            if traces.iter().any(|x| x.buggy && x.runs(&named)) && !runs_bug_free(traces, &named) {
                out.push(named);
            }
            continue;
        }
        for j in 0..n {
            if !t.contains(&j) && t.iter().all(|&i| !order.lt(j, i)) {
                let mut u = t.clone();
                u.push(j);
                stack.push(u);
            }
        }
    }
    out
}

#[test]
fn the_lost_update_has_depth_three() {
    // r1 < r2 < w1 (or the mirror): three events; no two force it; and the first run's
    // order admits them (the hitting family of depth 3 finds it, see `hitting::tests`).
    let p = testprog::lost_update();
    let ts = traces(&p);
    assert!(ts.iter().any(|t| t.buggy));
    assert!(forcing(&ts, 2).is_empty());
    let three = vec![(1, "read", 1), (2, "read", 1), (1, "write", 1)];
    assert!(forcing(&ts, 3).contains(&three));
    assert!(forcing_in_recorded(&ts, &p, 3).contains(&three));
}

#[test]
fn cond_if_has_depth_two_in_the_recorded_order() {
    // benchmarks/src/cond_if.c, consumers 1 and 2, producer 3, the check non-fatal so that
    // every execution has its events (see `testprog::check`). Two events of the recorded run
    // force the bug: main joining consumer 2 before the producer's second section ends (main
    // joins in order, so both consumers are done with one item). The recorded run's order
    // admits that pair, so every 2-hitting family of it, hence the depth-3 family, has a
    // schedule running them in that order; `explore --algo hitting` still misses the bug on
    // the real program because approximate replay cannot realise that schedule (consumer 2
    // must then be woken by the first signal, not the second as recorded: its events are
    // skipped and the run falls back to the default order).
    let p = testprog::cond_if(false);
    let ts = traces(&p);
    assert_eq!(
        ts.len(),
        26,
        "every trace (the independent count, see `sound`)"
    );
    assert_eq!(
        forcing_in_recorded(&ts, &p, 2),
        vec![vec![(0, "join", 2), (3, "unlock", 2)]]
    );
}
