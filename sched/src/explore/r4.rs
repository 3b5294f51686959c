//! `r4`: stateless exploration over executed traces with conflict-reversal bounding, after
//! R4 (Jensen, Møller, Raychev, Dimitrov, Vechev, "Stateless Model Checking of Event-Driven
//! Applications", OOPSLA'15): DPOR on recorded events, one conflict reversed at a time
//! relative to the parent run, the rest of the parent replayed approximately, and only runs
//! of conflict-reversal depth ≤ k explored.
//!
//! 1. The root is the default run (or the forced start sequence), depth 0.
//! 2. For an executed run `E` of depth `d < k`, every race `e ⋖E e'` ([`Hb::races_of`]: two
//!    dependent events of different threads that no other event orders, synchronisation
//!    conflicts included, so lock and semaphore acquisition orders are reversed too; pairs
//!    that cannot be co-enabled are left out) gives a child of depth `d + 1` whose target is
//!
//!    `pre(E, e) · notdep(e, E↾e') · e' · e · (the events between e and e' that happen after
//!    e) · (the rest of E after e')`
//!
//!    where `notdep(e, E↾e')` are the events between `e` and `e'` that do not happen after
//!    `e` (Source-DPOR's reversal, Abdulla et al. POPL'14 Alg. 1, completed by the parent's
//!    own continuation). This sequence differs from `E` in the order of exactly the
//!    dependent pairs `(x, e')` with `x` happening after `e` and before `e'` in `E` — one
//!    pair for an ordinary race, a whole critical section for a lock that waited (its
//!    section moves as a block). Independent events are never reversed (they are not races).
//! 3. The target runs with approximate replay ([`super::guide`]): an event that does not
//!    exist or is not enabled where the target puts it is skipped and counted; a run with
//!    skips is counted in [`super::Report::divergent`]. The *executed* run is the parent of
//!    the next level.
//! 4. Children are kept on one stack and explored depth first, the child with the deepest
//!    prefix (latest `e`, then latest `e'`) first, as in the paper's depth-first search over
//!    the tree of reversals.
//!
//! ## Pruning (the DPOR part)
//!
//! Every target and every executed run is summarised by its Mazurkiewicz trace: the set of
//! events, named (thread, index in thread, operation), and the order of every dependent pair
//! of them ([`Hb::dependent_before`]), kept as a 128-bit sum of per-element hashes so that a
//! child's key is its parent's with the reversed pairs swapped (no quadratic recount per
//! child). `seen` maps each key to the smallest depth it was planned or run at. Rule:
//!
//! - a child whose key was seen at a depth ≤ its own is not run (counted in
//!   [`super::Report::r4_pruned`]); in particular reversing back the race a run was made
//!   from gives its parent's trace, never re-run;
//! - a key seen only at a larger depth is run again at the smaller one (its subtree can now
//!   go deeper within the bound);
//! - the executed run's own key is recorded too, so a target equivalent to a run that was
//!   realised differently from its own target is not run again.
//!
//! Why nothing is lost within the bound: the explorer is deterministic, and two equivalent
//! targets that approximate replay follows without skipping execute equivalent runs (each
//! differs from the other by swaps of adjacent independent events, which reach the same
//! state) that have the same races; children of equivalent runs obtained by reversing the
//! same race are again equivalent. So the subtree of a pruned child is, key for key, the
//! subtree of the earlier equivalent node shifted to a depth no larger, which stays within
//! the bound wherever the pruned one would have. Two limits, both documented rather than
//! hidden: targets that approximate replay cannot follow (skips: the program took another
//! path) may realise different runs from equivalent targets, and a spin loop's fairness
//! bookkeeping after the target ends may differ; a 128-bit hash collision could prune a
//! distinct trace (probability negligible at these sizes).
//!
//! `Report::executions_per_bound[d]` counts the runs of depth `d`; a bug carries the depth of
//! its run ([`super::Bug::bound`]). The exploration is complete when no child was cut by the
//! bound; otherwise it is incomplete with `bound_completed = k`, as for ipb/idb.

use super::guide::Rule;
use super::trace::Hb;
use super::{Ctx, Outcome};
use crate::event::Event;
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
    /// The race `(e, e')` reversed.
    e: usize,
    e2: usize,
    /// The events of `e..e'` that happen after `e` (with `e`), moved behind `e'`.
    moved: Vec<usize>,
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
        let mut is_moved = vec![false; self.e2 - self.e];
        for &k in &self.moved {
            is_moved[k - self.e] = true;
        }
        let mut t = Vec::with_capacity(p.len());
        t.extend_from_slice(&p[..self.e]);
        t.extend((self.e..self.e2).filter(|&k| !is_moved[k - self.e]).map(|k| p[k]));
        t.push(p[self.e2]);
        t.extend(self.moved.iter().map(|&k| p[k]));
        t.extend_from_slice(&p[self.e2 + 1..]);
        t
    }
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
        e: 0,
        e2: 0,
        moved: Vec::new(),
        depth: 0,
        key: None,
    }];
    // A child beyond the bound was not explored.
    let mut cut = false;
    while let Some(c) = stack.pop() {
        // A shallower equivalent target was planned after this one was: it covers it.
        if c.key.is_some_and(|k| seen.get(&k).is_some_and(|&d| d < c.depth)) {
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
            let moved: Vec<usize> = (e..e2)
                .filter(|&k| hb.hb(e, k) && hb.trace[k].tid() != hb.trace[e2].tid())
                .collect();
            let child_key = names.reversed_key(&hb, key, e2, &moved);
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
                e,
                e2,
                moved,
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

/// Per-event hashes of a run's events named (thread, index in thread, operation).
struct Names {
    ev: Vec<(u64, u64)>,
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
        Names { ev }
    }

    /// The hash of "event `a` before event `b`".
    fn pair(&self, a: usize, b: usize) -> u128 {
        wide(hash2((self.ev[a], self.ev[b])))
    }

    /// The key of the run's Mazurkiewicz trace: its events and the order of its dependent
    /// pairs.
    fn trace_key(&self, hb: &Hb) -> Key {
        let mut k: Key = 0;
        for j in 0..hb.len() {
            k = k.wrapping_add(wide(self.ev[j]));
            for &i in hb.dependent_before(j) {
                k = k.wrapping_add(self.pair(i, j));
            }
        }
        k
    }

    /// The key of the child that puts the events of `e..e2` not in `moved` (sorted, `e`
    /// first), then `e2`, before the `moved` ones: the dependent pairs `(y, x)` with `y`
    /// moved and `x` put before it swap. Such an `x` happens after `y`, hence after `e`, so
    /// it is `e2` or an event of `e2`'s thread (the only ones that happen after `e` and are
    /// not moved); every other dependent pair keeps its order.
    fn reversed_key(&self, hb: &Hb, key: Key, e2: usize, moved: &[usize]) -> Key {
        let Some(&e) = moved.first() else {
            return key;
        };
        let t = hb.trace[e2].tid();
        let mut k = key;
        let ahead = (e + 1..e2).filter(|&x| hb.trace[x].tid() == t && hb.hb(e, x));
        for x in ahead.chain([e2]) {
            for &y in hb.dependent_before(x).iter().take_while(|&&y| y >= e) {
                if moved.binary_search(&y).is_ok() {
                    k = k.wrapping_sub(self.pair(y, x)).wrapping_add(self.pair(x, y));
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
        explore(Algo::R4 { bound }, &mut Interp::new(prog), Limits::default())
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
        assert_eq!(r.divergent, 0, "every reversal of a data race is realisable");
        for b in &r.bugs {
            assert_replays(testprog::lost_update(), b);
        }
        eprintln!("lost_update r4/1: {:?}", r.executions_per_bound);
    }

    #[test]
    fn two_preemptions() {
        for k in 1..=2 {
            let r = r4(testprog::two_preemptions(), k);
            eprintln!(
                "two_preemptions r4/{k}: {:?} buggy {} first {:?}",
                r.executions_per_bound, r.buggy, r.first_bug_bound
            );
        }
    }
}
