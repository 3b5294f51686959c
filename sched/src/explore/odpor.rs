//! `odpor`: Optimal-DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL'14, Algorithm 2).
//!
//! Wakeup trees instead of backtrack sets: after each run, every race `e ⋖E e'` inserts the
//! whole reversal `v = notdep(e, E).e'` into the wakeup tree of `pre(E, e)` unless a sleeping
//! thread is a weak initial of `v` (then an equivalent run was or will be explored). Runs then
//! follow the tree's leftmost branches, so no run is ever sleep-set blocked and every
//! Mazurkiewicz trace is explored exactly once.

use super::guide::{Guide, Rec, Rule};
use super::trace::{barrier_counts, blocked_races, is_weak_initial_at, Hb, TEv};
use super::wakeup::{insert, WNode};
use super::{Ctx, Outcome};
use crate::event::Event;

/// One state of the current run.
struct Node {
    /// The event executed from this state in the current run (leftmost branch of its tree).
    ev: TEv,
    sleep: Vec<TEv>,
    /// The other branches of the state's wakeup tree, still to explore.
    pending: Vec<WNode>,
}

pub(crate) fn run(ctx: &mut Ctx) {
    ctx.report.complete = true;
    let mut guide = ctx.guide(Rule::Lowest, true);
    let mut stack: Vec<Node> = Vec::new();
    let mut branch = 0usize;
    // Forced events after the branching state and the pending siblings of each.
    let mut path: Vec<(TEv, Vec<WNode>)> = Vec::new();
    loop {
        if ctx.out_of_budget() {
            return;
        }
        let prefix: Vec<Event> = stack
            .iter()
            .map(|n| n.ev.ev)
            .chain(path.iter().map(|(e, _)| e.ev))
            .collect();
        let sleep = stack
            .get(branch)
            .map(|n| n.sleep.clone())
            .unwrap_or_default();
        let planned = stack.get(branch).map(|n| n.ev);
        guide.plan(prefix, branch, sleep);
        if let Outcome::Stop = ctx.run(&mut guide, None) {
            return;
        }
        // A blocked run would be a bug of this implementation: it is counted, not hidden.
        let mut forced = std::mem::take(&mut path);
        if let Some(s) = guide.first_skip {
            // Approximate replay left the planned path at step `s` (`path[k]` is the event
            // of state branch+1+k): the wakeup branches planned for the states after `s`
            // belong to states this run did not reach.
            forced.truncate(s.saturating_sub(branch));
        }
        integrate(&mut stack, branch, &guide.steps, forced);
        if let (Some(p), Some(n)) = (planned, stack.get_mut(branch)) {
            if p.tid() != n.ev.tid() && !n.sleep.iter().any(|q| q.tid() == p.tid()) {
                // The planned event could not run there (approximate replay skipped it):
                // count it as explored, or the same race would plan it again forever.
                n.sleep.push(p);
            }
        }
        insert_races(&mut stack, branch, &guide, ctx.initial, ctx.cut_short);
        loop {
            let Some(node) = stack.last_mut() else {
                return;
            };
            node.sleep.push(node.ev);
            if !node.pending.is_empty() {
                let mut c = node.pending.remove(0);
                node.ev = c.ev;
                while !c.children.is_empty() {
                    let first = c.children.remove(0);
                    path.push((first.ev, std::mem::take(&mut c.children)));
                    c = first;
                }
                // `path[k]`: the event of state branch+1+k and that state's other branches.
                branch = stack.len() - 1;
                break;
            }
            stack.pop();
        }
    }
}

/// Make the stack describe the run just made; `path` gives the forced events after the
/// branching state, each with the siblings it had in the wakeup tree.
fn integrate(stack: &mut Vec<Node>, branch: usize, steps: &[Rec], path: Vec<(TEv, Vec<WNode>)>) {
    stack.truncate(branch + 1);
    if let (Some(n), Some(r)) = (stack.get_mut(branch), steps.get(branch)) {
        n.ev = r.ev;
    }
    let mut siblings = path.into_iter().map(|(_, s)| s);
    for r in steps.iter().skip(stack.len()) {
        stack.push(Node {
            ev: r.ev,
            sleep: r.sleep.clone(),
            pending: siblings.next().unwrap_or_default(),
        });
    }
}

/// Algorithm 2, lines 3-6: insert the reversal of every race whose second event is new.
/// In a run cut short by a bug (a deadlock, an assertion, a crash), the events posted and
/// never run race too ([`blocked_races`]).
fn insert_races(stack: &mut [Node], from: usize, guide: &Guide, initial: usize, cut_short: bool) {
    let trace: Vec<TEv> = guide.steps.iter().map(|r| r.ev).collect();
    let hb = Hb::with_inits(trace.clone(), guide.inits.clone());
    let mut races: Vec<(usize, Vec<TEv>)> = Vec::new();
    for j in from..hb.len() {
        for e in hb.races_of(j, initial) {
            races.push((e, hb.reversal(e, j, true)));
        }
    }
    if cut_short {
        let blocked: Vec<Event> = guide.left_waiting().collect();
        races.extend(blocked_races(&trace, &guide.inits, &blocked, initial, true));
    }
    let counts = barrier_counts(&trace, &guide.inits);
    for (e, v) in races {
        let ctx = &trace[..e];
        let node = &mut stack[e];
        if node
            .sleep
            .iter()
            .any(|q| is_weak_initial_at(ctx, &v, q, &counts))
        {
            continue;
        }
        insert(&mut node.pending, v, ctx, &counts);
    }
}
