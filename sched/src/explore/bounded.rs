//! `ipb` / `idb`: iterative schedule bounding, as compared by SCTBench (Thomson, Donaldson &
//! Betts, PPoPP'14). Depth-first search over the schedules whose cost is at most a bound,
//! the bound raised from 0 until `max` (or the budget ends):
//!
//! - preemption bounding (Musuvathi & Qadeer, PLDI'07): switching away from a thread that is
//!   still enabled costs one preemption;
//! - delay bounding (Emmi, Qadeer & Rakamarić, POPL'11): the deterministic scheduler runs the
//!   current thread while it is enabled, then the next in round-robin order; choosing the
//!   k-th enabled thread after the one it would run costs k delays.
//!
//! Each bound re-runs the schedules of the lower bounds (as SCTBench counts them); a bug is
//! reported with the bound at which it first appeared.

use super::guide::{Rec, Rule};
use super::{Ctx, Outcome};
use crate::event::{Event, Tid};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Preemption,
    Delay,
}

/// One state of the current run.
struct Node {
    ev: Event,
    enabled: Vec<Event>,
    /// Thread of the previous step.
    last: Option<Tid>,
    /// Cost of the choices made before this state.
    cost_before: u32,
    done: Vec<Tid>,
}

/// The cost of choosing `choice` at a state with `enabled` events after `last` ran.
pub fn cost(kind: Kind, enabled: &[Event], last: Option<Tid>, choice: Tid) -> u32 {
    let Some(last) = last else {
        return match kind {
            Kind::Preemption => 0,
            Kind::Delay => enabled.iter().position(|e| e.tid == choice).unwrap_or(0) as u32,
        };
    };
    let last_enabled = enabled.iter().any(|e| e.tid == last);
    match kind {
        Kind::Preemption => u32::from(last_enabled && choice != last),
        Kind::Delay => {
            // Round-robin order starting at `last` (if enabled) or the next thread after it.
            let start = enabled
                .iter()
                .position(|e| {
                    if last_enabled {
                        e.tid == last
                    } else {
                        e.tid > last
                    }
                })
                .unwrap_or(0);
            let n = enabled.len();
            (0..n)
                .position(|k| enabled[(start + k) % n].tid == choice)
                .unwrap_or(0) as u32
        }
    }
}

pub(crate) fn run(ctx: &mut Ctx, kind: Kind, max: u32) {
    ctx.report.complete = true;
    for bound in 0..=max {
        let before = ctx.report.executions;
        let Some(pruned) = explore_bound(ctx, kind, bound) else {
            return;
        };
        ctx.report
            .executions_per_bound
            .push(ctx.report.executions - before);
        ctx.report.bound_completed = Some(bound);
        if !pruned {
            // No schedule exceeded the bound: higher bounds explore nothing new.
            return;
        }
    }
    // Schedules above `max` remain unexplored.
    ctx.report.complete = false;
}

/// Every schedule of cost ≤ `bound`. `None` if the budget ran out or the run diverged,
/// otherwise whether some choice was skipped for exceeding the bound.
fn explore_bound(ctx: &mut Ctx, kind: Kind, bound: u32) -> Option<bool> {
    let rule = match kind {
        Kind::Preemption => Rule::NonPreemptive,
        Kind::Delay => Rule::RoundRobin,
    };
    let mut guide = ctx.guide(rule, false);
    let mut stack: Vec<Node> = Vec::new();
    let mut pruned = false;
    loop {
        if ctx.out_of_budget() {
            return None;
        }
        let prefix: Vec<Event> = stack.iter().map(|n| n.ev).collect();
        guide.plan(prefix, 0, Vec::new());
        if let Outcome::Stop = ctx.run(&mut guide, Some(bound)) {
            return None;
        }
        extend(&mut stack, &guide.steps, kind);
        loop {
            let Some(node) = stack.last_mut() else {
                return Some(pruned);
            };
            node.done.push(node.ev.tid);
            let mut next = None;
            for e in &node.enabled {
                if node.done.contains(&e.tid) {
                    continue;
                }
                if node.cost_before + cost(kind, &node.enabled, node.last, e.tid) <= bound {
                    next = Some(*e);
                    break;
                }
                pruned = true;
            }
            if let Some(e) = next {
                node.ev = e;
                break;
            }
            stack.pop();
        }
    }
}

/// Add the states the last run created beyond the current stack.
fn extend(stack: &mut Vec<Node>, steps: &[Rec], kind: Kind) {
    for step in steps.iter().skip(stack.len()) {
        let (last, cost_before) = match stack.last() {
            Some(p) => (
                Some(p.ev.tid),
                p.cost_before + cost(kind, &p.enabled, p.last, p.ev.tid),
            ),
            None => (None, 0),
        };
        stack.push(Node {
            ev: step.ev.ev,
            enabled: step.enabled.clone(),
            last,
            cost_before,
            done: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

    #[test]
    fn costs() {
        let en: Vec<Event> = [0, 2, 3]
            .iter()
            .map(|&t| Event::new(t, Op::Yield))
            .collect();
        assert_eq!(cost(Kind::Preemption, &en, Some(2), 2), 0);
        assert_eq!(cost(Kind::Preemption, &en, Some(2), 3), 1);
        assert_eq!(cost(Kind::Preemption, &en, Some(1), 3), 0, "t1 is blocked");
        assert_eq!(cost(Kind::Delay, &en, Some(2), 3), 1);
        assert_eq!(cost(Kind::Delay, &en, Some(2), 0), 2);
        assert_eq!(cost(Kind::Delay, &en, Some(1), 2), 0, "next after t1 is t2");
        assert_eq!(cost(Kind::Delay, &en, Some(1), 0), 2);
    }
}
