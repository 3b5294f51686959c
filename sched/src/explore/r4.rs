//! `r4`: stateless exploration over executed traces with conflict-reversal bounding, after
//! R4 (Jensen, Møller, Raychev, Dimitrov, Vechev, "Stateless Model Checking of Event-Driven
//! Applications", OOPSLA'15): DPOR on recorded events, one conflict reversed at a time
//! relative to the parent run, the rest of the parent replayed approximately, and only runs
//! of conflict-reversal depth ≤ k explored.
//!
//! 1. The root is the default run (or the forced start sequence), depth 0.
//! 2. For an executed run `E` of depth `d`, every race `e ⋖E e'` ([`Hb::races_of`]: two
//!    dependent events of different threads that no other event orders, synchronisation
//!    conflicts included, so lock and semaphore acquisition orders are reversed too; pairs
//!    that cannot be co-enabled are left out) gives a child of depth `d + 1` whose order is
//!
//!    `pre(E, e) · notdep(e, E↾e') · e' · e · (the events between e and e' that happen after
//!    e) · (the rest of E after e')`
//!
//!    where `notdep(e, E↾e')` are the events between `e` and `e'` that do not happen after
//!    `e` (Source-DPOR's reversal, Abdulla et al. POPL'14 Alg. 1, continued by the parent's
//!    own continuation). That order differs from `E` only in the dependent pairs `(x, e')`
//!    with `x` happening after `e` and before `e'` — one pair for an ordinary race, a whole
//!    critical section for a lock that waited. Independent events are never reversed (they
//!    are not races). The order is then realised on the state machine ([`Hb::realise`]): an
//!    event not enabled where the order puts it (the other thread's lock, moved ahead of a
//!    critical section, waits for its unlock) waits until it is, so the target is a sequence
//!    the program can follow.
//! 3. The target runs with approximate replay ([`super::guide`]): an event that does not
//!    exist or is not enabled where the target puts it (the program took another path after
//!    the reversal) is skipped and counted; a run with skips is counted in
//!    [`super::Report::divergent`]. The *executed* run is the parent of the next level.
//! 4. Only runs of depth ≤ k are made. Children are kept on one stack and explored depth
//!    first, the child with the deepest prefix (latest `e`, then latest `e'`) first, as in the
//!    paper's depth-first search over the tree of reversals.
//!
//! ## Pruning (the DPOR part)
//!
//! Every target and every executed run is summarised by its Mazurkiewicz trace: the set of
//! its events, named (thread, index in thread, operation), and the order of every dependent
//! pair of them ([`Hb::dependent_before`]; the process exit, which a run stopped by a bug
//! lacks, is left out), kept as a 128-bit sum of per-element hashes, so that a child's key
//! is its parent's with the pairs it reorders swapped (no quadratic recount per child).
//! `seen` maps each key to the smallest depth it was planned or run at. The rule:
//!
//! - a child whose key was seen at a depth ≤ its own is not run (counted in
//!   [`super::Report::r4_pruned`]); in particular reversing back the race a run was made
//!   from gives its parent's trace, never run again;
//! - a key seen only at a larger depth is run again at the smaller one (its subtree can go
//!   deeper within the bound);
//! - the executed run's own key is recorded too, so a target equivalent to a run realised
//!   differently from its own target is not run again.
//!
//! Why nothing is lost within the bound: the explorer is deterministic, and two equivalent
//! targets that the program follows without skipping execute equivalent runs (they differ
//! by swaps of adjacent independent events, which reach the same state), which have the
//! same races; the children of equivalent runs that reverse the same race are again
//! equivalent. So the subtree of a pruned child is, key for key, the subtree of the earlier
//! equivalent node at a depth no larger, which stays within the bound wherever the pruned
//! one would. The limits, documented rather than hidden: targets the program does not
//! follow (skips: it took another path) may realise different runs from equivalent
//! targets; the rule continuing after the target (fairness to yielding threads) sees a
//! history, not only a state; a 128-bit hash collision could prune a distinct trace
//! (negligible at these sizes). The test `unbounded_r4_explores_every_trace_odpor_explores`
//! checks the claim on the abstract programs.
//!
//! `Report::executions_per_bound[d]` counts the runs of depth `d`; a bug carries the depth of
//! its run ([`super::Bug::bound`]). The exploration is complete when no child was cut by the
//! bound; otherwise it is incomplete with `bound_completed = k`, as for ipb/idb.

use super::guide::Rule;
use super::trace::Hb;
use super::{Ctx, Outcome};
use crate::event::{Event, Op};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// A Mazurkiewicz-trace fingerprint (see the module doc).
type Key = u128;

/// A run to make: the root, or one race of a parent run reversed.
struct Child {
    /// The parent's executed events; `None` for the root.
    parent: Option<Rc<Vec<Event>>>,
    /// The target is the parent's events with those of `lo..lo + window.len()` put in the
    /// order `window` (parent indices).
    lo: usize,
    window: Vec<usize>,
    depth: u32,
    /// `None` for the root.
    key: Option<Key>,
}

impl Child {
    /// The target sequence (see the module doc).
    fn target(&self, root: &[Event]) -> Vec<Event> {
        let Some(p) = &self.parent else {
            return root.to_vec();
        };
        let mut t = Vec::with_capacity(p.len());
        t.extend_from_slice(&p[..self.lo]);
        t.extend(self.window.iter().map(|&k| p[k]));
        t.extend_from_slice(&p[self.lo + self.window.len()..]);
        t
    }
}

/// The parent's order with the race `(e, e2)` reversed: `pre(E, e)`, the events of
/// `e..e2` that do not happen after `e`, `e2`, then `e` and the events of `e..e2` that do
/// (the events of `e2`'s thread stay ahead of it), then the rest. Returned as the window
/// `e..=e2` of the permutation.
fn reversed(hb: &Hb, e: usize, e2: usize) -> Vec<usize> {
    let t = hb.trace[e2].tid();
    let after = |k: usize| hb.hb(e, k) && hb.trace[k].tid() != t;
    let mut w: Vec<usize> = (e..e2).filter(|&k| !after(k)).collect();
    w.push(e2);
    w.extend((e..e2).filter(|&k| after(k)));
    w
}

pub(crate) fn run(ctx: &mut Ctx, bound: u32) {
    ctx.report.complete = true;
    ctx.report.executions_per_bound = vec![0; bound as usize + 1];
    let root = std::mem::take(&mut ctx.first);
    let mut guide = ctx.guide(Rule::Lowest, false);
    guide.approximate = true;
    let mut seen: HashMap<Key, u32> = HashMap::new();
    let mut stack = vec![Child {
        parent: None,
        lo: 0,
        window: Vec::new(),
        depth: 0,
        key: None,
    }];
    // A child beyond the bound was not explored.
    let mut cut = false;
    while let Some(c) = stack.pop() {
        // A shallower equivalent target was planned after this one was: it covers it.
        if c.key
            .is_some_and(|k| seen.get(&k).is_some_and(|&d| d < c.depth))
        {
            ctx.report.r4_pruned += 1;
            continue;
        }
        if ctx.out_of_budget() {
            return;
        }
        guide.plan(c.target(&root), 0, Vec::new());
        match ctx.run(&mut guide, Some(c.depth)) {
            Outcome::Stop => return,
            // The guide runs without sleep sets: never blocked.
            Outcome::Blocked => continue,
            Outcome::Complete => {}
        }
        ctx.report.executions_per_bound[c.depth as usize] += 1;
        let hb = Hb::with_inits(
            guide.steps.iter().map(|r| r.ev).collect(),
            guide.inits.clone(),
        );
        let names = Names::new(&hb);
        let key = names.trace_key(&hb);
        let known = seen.entry(key).or_insert(c.depth);
        *known = (*known).min(c.depth);
        let depth = c.depth + 1;
        let events: Rc<Vec<Event>> = Rc::new(hb.trace.iter().map(|t| t.ev).collect());
        for (e, e2) in races(&hb, ctx.initial) {
            // The reversal, continued as the parent run did, as far as the state machine
            // lets it: its prefix up to `e` is the parent's.
            let mut order: Vec<usize> = (0..e).collect();
            order.extend(reversed(&hb, e, e2));
            order.extend(e2 + 1..hb.len());
            let (lo, window) = trim(hb.realise(&order, ctx.initial));
            let child_key = names.permuted_key(&hb, key, lo, &window);
            if seen.get(&child_key).is_some_and(|&d| d <= depth) {
                if depth <= bound {
                    ctx.report.r4_pruned += 1;
                }
                continue;
            }
            if depth > bound {
                cut = true;
                continue;
            }
            seen.insert(child_key, depth);
            stack.push(Child {
                parent: Some(events.clone()),
                lo,
                window,
                depth,
                key: Some(child_key),
            });
        }
    }
    ctx.report.bound_completed = Some(bound);
    if cut {
        ctx.report.complete = false;
    }
}

/// The races of a run, `(e, e')`, sorted so that the last one has the deepest prefix (the
/// stack pops it first).
fn races(hb: &Hb, initial: usize) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize)> = (0..hb.len())
        .flat_map(|j| hb.races_of(j, initial).into_iter().map(move |e| (e, j)))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `order`, a permutation of the parent's indices, cut to the window where it differs from
/// the parent's order: `(start, window)`.
fn trim(mut order: Vec<usize>) -> (usize, Vec<usize>) {
    let lo = 0;
    let same_tail = order
        .iter()
        .enumerate()
        .rev()
        .take_while(|&(p, &k)| k == lo + p)
        .count();
    order.truncate(order.len() - same_tail);
    let same_head = order
        .iter()
        .enumerate()
        .take_while(|&(p, &k)| k == lo + p)
        .count();
    order.drain(..same_head);
    (lo + same_head, order)
}

/// Per-event hashes of a run's events named (thread, index in thread, operation).
struct Names {
    ev: Vec<(u64, u64)>,
    /// Events left out of the key: the process exit, the last event of a run that ended
    /// normally, which a run stopped by a bug lacks (a target made from a buggy run lacks it
    /// too, and may realise a run that has it; with it in the key, the two would differ).
    skip: Vec<bool>,
}

fn hash2(x: impl Hash) -> (u64, u64) {
    let mut a = DefaultHasher::new();
    (0u8, &x).hash(&mut a);
    let mut b = DefaultHasher::new();
    (1u8, &x).hash(&mut b);
    (a.finish(), b.finish())
}

fn wide((a, b): (u64, u64)) -> u128 {
    (u128::from(a) << 64) | u128::from(b)
}

impl Names {
    fn new(hb: &Hb) -> Self {
        let mut count: HashMap<u32, u32> = HashMap::new();
        let ev = hb
            .trace
            .iter()
            .map(|t| {
                let n = count.entry(t.tid()).or_insert(0);
                *n += 1;
                hash2((t.tid(), *n, t.ev.op.name()))
            })
            .collect();
        let skip = hb
            .trace
            .iter()
            .map(|t| matches!(t.ev.op, Op::ProcessExit { .. }))
            .collect();
        Names { ev, skip }
    }

    /// The hash of "event `a` before event `b`".
    fn pair(&self, a: usize, b: usize) -> u128 {
        wide(hash2((self.ev[a], self.ev[b])))
    }

    /// The key of the run's Mazurkiewicz trace: its events and the order of its dependent
    /// pairs of different threads (a thread's own order is fixed by its events).
    fn trace_key(&self, hb: &Hb) -> Key {
        let mut k: Key = 0;
        for j in (0..hb.len()).filter(|&j| !self.skip[j]) {
            k = k.wrapping_add(wide(self.ev[j]));
            for i in hb.dependent_before(j).filter(|&i| !self.skip[i]) {
                k = k.wrapping_add(self.pair(i, j));
            }
        }
        k
    }

    /// The key of the run that orders the events of `lo..lo + window.len()` as `window`
    /// and the others as the parent (whose key is `key`): the dependent pairs of events of
    /// different threads in the window whose order differs swap (a window keeps each
    /// thread's order, and a pair with an event outside it keeps its order).
    fn permuted_key(&self, hb: &Hb, key: Key, lo: usize, window: &[usize]) -> Key {
        let mut pos = vec![0usize; window.len()];
        for (p, &k) in window.iter().enumerate() {
            pos[k - lo] = p;
        }
        let mut k = key;
        for x in (lo..lo + window.len()).filter(|&x| !self.skip[x]) {
            for y in hb.dependent_before(x).take_while(|&y| y >= lo) {
                if !self.skip[y] && pos[y - lo] > pos[x - lo] {
                    k = k
                        .wrapping_sub(self.pair(y, x))
                        .wrapping_add(self.pair(x, y));
                }
            }
        }
        k
    }
}

#[cfg(test)]
mod tests {
    use super::super::testprog::{self, Interp, Prog};
    use super::super::tests::{assert_replays, Distinct};
    use super::super::{explore, Algo, Limits, Report};

    fn r4(prog: Prog, bound: u32) -> Report {
        explore(
            Algo::R4 { bound },
            &mut Interp::new(prog),
            Limits::default(),
        )
    }

    #[test]
    fn bound_zero_is_the_default_run_alone() {
        let r = r4(testprog::lost_update(), 0);
        assert_eq!((r.executions, r.buggy), (1, 0), "{r:?}");
        assert_eq!(r.executions_per_bound, vec![1]);
        // The run has races whose reversals lie beyond the bound.
        assert_eq!((r.complete, r.bound_completed), (false, Some(0)));
    }

    #[test]
    fn one_reversal_finds_the_lost_update() {
        let r = r4(testprog::lost_update(), 1);
        assert!(r.buggy > 0, "{r:?}");
        assert_eq!(r.first_bug_bound, Some(1));
        assert!(r.bugs.iter().all(|b| b.bound == Some(1)));
        assert_eq!(
            r.divergent, 0,
            "every reversal of a data race is realisable"
        );
        for b in &r.bugs {
            assert_replays(testprog::lost_update(), b);
        }
        eprintln!("lost_update r4/1: {:?}", r.executions_per_bound);
    }

    #[test]
    fn a_two_preemption_bug_of_the_writer_first_run_is_one_reversal_away() {
        // The default run writes x = 1, x = 2, then reads twice: reversing the second write
        // with the first read gives w1 r1 w2 r2, the bug (ipb needs two preemptions).
        let one = r4(testprog::two_preemptions(), 1);
        assert_eq!(one.first_bug_bound, Some(1), "{one:?}");
        assert_replays(testprog::two_preemptions(), &one.bugs[0]);
    }

    #[test]
    fn two_reversals_need_bound_two() {
        let one = r4(testprog::saw_neither(), 1);
        assert_eq!(one.buggy, 0, "{one:?}");
        assert!(one.executions > 1 && !one.complete);
        let two = r4(testprog::saw_neither(), 2);
        assert_eq!(two.first_bug_bound, Some(2), "{two:?}");
        assert!(two.bugs.iter().all(|b| b.bound == Some(2)));
        for b in &two.bugs {
            assert_replays(testprog::saw_neither(), b);
        }
        // Preemption bounding finds it without a preemption: the measures differ.
        let ipb = explore(
            Algo::Ipb { max: 2 },
            &mut Interp::new(testprog::saw_neither()),
            Limits::default(),
        );
        assert_eq!(ipb.first_bug_bound, Some(0));
        eprintln!(
            "saw_neither: r4/1 {:?}, r4/2 {:?}",
            one.executions_per_bound, two.executions_per_bound
        );
    }

    /// The traces (events and order of dependent pairs) of every run of `algo`.
    fn traces(algo: Algo, prog: Prog) -> (Report, Distinct) {
        let mut d = Distinct::new(prog);
        let r = explore(algo, &mut d, Limits::default());
        (r, d)
    }

    #[test]
    fn unbounded_r4_explores_every_trace_odpor_explores() {
        let progs: Vec<(&str, Prog)> = vec![
            ("lost_update", testprog::lost_update()),
            ("two_preemptions", testprog::two_preemptions()),
            ("saw_neither", testprog::saw_neither()),
            ("lastzero(2)", testprog::lastzero(2)),
            ("lastzero(3)", testprog::lastzero(3)),
            ("readers(3)", testprog::readers(3)),
            ("indexer(2)", testprog::indexer(2)),
            ("mutex_rounds(2, 2)", testprog::mutex_rounds(2, 2)),
            ("mutex_rounds(3, 1)", testprog::mutex_rounds(3, 1)),
            ("sem_lock(3)", testprog::sem_lock(3)),
            ("philosophers(3)", testprog::philosophers(3)),
            ("rwlock_upgrade", testprog::rwlock_upgrade()),
            ("readers_writers(1, 2)", testprog::readers_writers(1, 2)),
        ];
        for (name, p) in progs {
            let (od, odt) = traces(Algo::Odpor, p.clone());
            let (r, rt) = traces(Algo::R4 { bound: 100 }, p);
            eprintln!(
                "{name}: odpor {} runs {} traces; r4 {} runs {} traces, {} pruned, per depth {:?}",
                od.executions,
                odt.seen.len(),
                r.executions,
                rt.seen.len(),
                r.r4_pruned,
                r.executions_per_bound
                    .iter()
                    .rposition(|&n| n > 0)
                    .map_or(&[][..], |l| &r.executions_per_bound[..=l])
            );
            assert!(od.complete && r.complete, "{name}");
            let missed = odt.seen.difference(&rt.seen).count();
            assert_eq!(missed, 0, "{name}: r4 missed {missed} of odpor's traces");
            assert_eq!(r.buggy > 0, od.buggy > 0, "{name}");
        }
    }

    /// Without pruning an unbounded search never ends (reversing back the race a run was
    /// made from gives its parent again); with it, programs whose reversals the program
    /// follows exactly run about one execution per trace. The extra run of three lock
    /// sections: the order 2-3-1 is first reached at depth 4 (depth first, along 1-3-2,
    /// 3-1-2, 3-2-1), then at depth 2 from 2-1-3, and run again there.
    #[test]
    fn pruning_runs_about_one_execution_per_trace() {
        for (p, extra) in [
            (testprog::lost_update(), 0),
            (testprog::rwlock_upgrade(), 0),
            (testprog::mutex_rounds(2, 2), 0),
            (testprog::mutex_rounds(3, 1), 1),
            (testprog::sem_lock(3), 1),
        ] {
            let (r, d) = traces(Algo::R4 { bound: 1000 }, p);
            assert!(r.complete && r.r4_pruned > 0, "{r:?}");
            assert_eq!(r.divergent, 0, "{r:?}");
            assert_eq!(r.executions, d.seen.len() as u64 + extra, "{r:?}");
        }
    }

    #[test]
    fn deterministic() {
        for p in [testprog::lastzero(3), testprog::saw_neither()] {
            let a = r4(p.clone(), 2);
            let b = r4(p, 2);
            assert_eq!(
                (a.executions, a.buggy, a.r4_pruned, &a.executions_per_bound),
                (b.executions, b.buggy, b.r4_pruned, &b.executions_per_bound)
            );
            let sched = |r: &Report| -> Vec<Vec<u32>> {
                r.bugs
                    .iter()
                    .map(|b| b.schedule.iter().map(|s| s.tid).collect())
                    .collect()
            };
            assert_eq!(sched(&a), sched(&b));
        }
    }
}
