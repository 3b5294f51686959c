//! `dpor`: Source-DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL'14, Algorithm 1).
//!
//! Sleep sets plus source sets: after each run, every race `e ⋖E e'` found in the
//! happens-before of the trace makes the state before `e` (`E' = pre(E, e)`) explore some
//! initial of `v = notdep(e, E).e'` — not necessarily `e'`'s thread — unless one is already in
//! its backtrack set. A run reaching a state whose enabled events are all in the sleep set is
//! abandoned and counted as *sleep-set blocked*.

use super::guide::{Guide, Rec, Rule};
use super::trace::{blocked_races, initials, Hb, TEv};
use super::{Ctx, Outcome};
use crate::event::{Event, Tid};

/// One state of the current run.
struct Node {
    /// The event executed from this state in the current run.
    ev: TEv,
    enabled: Vec<Event>,
    sleep: Vec<TEv>,
    backtrack: Vec<Tid>,
    done: Vec<Tid>,
}

pub(crate) fn run(ctx: &mut Ctx) {
    ctx.report.complete = true;
    let mut guide = ctx.guide(Rule::Lowest, true);
    let mut stack: Vec<Node> = Vec::new();
    // The state the next run branches at (its event is the first new one).
    let mut branch = 0usize;
    loop {
        if ctx.out_of_budget() {
            return;
        }
        let prefix: Vec<Event> = stack.iter().map(|n| n.ev.ev).collect();
        let sleep = stack
            .get(branch)
            .map(|n| n.sleep.clone())
            .unwrap_or_default();
        let planned = stack.get(branch).map(|n| n.ev.tid());
        guide.plan(prefix, branch, sleep);
        if let Outcome::Stop = ctx.run(&mut guide, None) {
            return;
        }
        integrate(&mut stack, branch, &guide.steps);
        if let (Some(p), Some(n)) = (planned, stack.get_mut(branch)) {
            if p != n.ev.tid() && !n.done.contains(&p) {
                // Approximate replay could not run the planned thread there: done with it,
                // or it would be planned again forever.
                n.done.push(p);
            }
        }
        add_backtracks(&mut stack, branch, &guide, ctx.initial, ctx.cut_short);
        // Backtrack to the deepest state with a backtrack thread neither done nor asleep.
        loop {
            let Some(node) = stack.last_mut() else {
                return;
            };
            let cur = node.ev;
            node.done.push(cur.tid());
            if !node.sleep.contains(&cur) {
                node.sleep.push(cur);
            }
            let next = node
                .backtrack
                .iter()
                .filter(|t| !node.done.contains(t) && !node.sleep.iter().any(|s| s.tid() == **t))
                .filter_map(|t| node.enabled.iter().find(|e| e.tid == *t))
                .min_by_key(|e| e.tid)
                .copied();
            if let Some(e) = next {
                node.ev = TEv::new(e);
                branch = stack.len() - 1;
                break;
            }
            stack.pop();
        }
    }
}

/// Make the stack describe the run just made: states before `branch` are unchanged, the
/// branching state gets its new event, later states are new.
fn integrate(stack: &mut Vec<Node>, branch: usize, steps: &[Rec]) {
    stack.truncate(branch + 1);
    if let (Some(n), Some(r)) = (stack.get_mut(branch), steps.get(branch)) {
        n.ev = r.ev;
    }
    for r in steps.iter().skip(stack.len()) {
        stack.push(Node {
            ev: r.ev,
            enabled: r.enabled.clone(),
            sleep: r.sleep.clone(),
            backtrack: vec![r.ev.tid()],
            done: Vec::new(),
        });
    }
}

/// Algorithm 1, lines 5-9: for each race whose second event is new in this run, make sure the
/// state before the first event will explore an initial of the reversal.
/// In a run cut short by a bug (a deadlock, an assertion, a crash), the events posted and
/// never run race too ([`blocked_races`]).
fn add_backtracks(stack: &mut [Node], from: usize, guide: &Guide, initial: usize, cut_short: bool) {
    let trace: Vec<TEv> = guide.steps.iter().map(|r| r.ev).collect();
    let hb = Hb::with_inits(trace.clone(), guide.inits.clone());
    let mut races: Vec<(usize, Vec<TEv>)> = Vec::new();
    for j in from..hb.len() {
        for e in hb.races_of(j, initial) {
            races.push((e, hb.reversal(e, j, false)));
        }
    }
    if cut_short {
        let blocked: Vec<Event> = guide.left_waiting().collect();
        races.extend(blocked_races(
            &trace,
            &guide.inits,
            &blocked,
            initial,
            false,
        ));
    }
    for (e, v) in races {
        let init = initials(&v);
        let node = &mut stack[e];
        if init.iter().any(|p| node.backtrack.contains(p)) {
            continue;
        }
        let awake = init
            .iter()
            .find(|p| !node.sleep.iter().any(|s| s.tid() == **p));
        if let Some(&p) = awake.or(init.first()) {
            node.backtrack.push(p);
        }
    }
}
