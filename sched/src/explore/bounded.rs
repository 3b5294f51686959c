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
//!
//! Yields (`sched_yield`, sleeps) follow CHESS (Musuvathi & Qadeer, PLDI'07 and "Fair
//! stateless model checking", PLDI'08): switching away from a thread that just yielded is
//! free (for delay bounding, the round-robin scheduler moves on to the next thread), and a
//! thread the fairness rule holds back ([`super::guide::Rec::deferred`]: it yielded to a
//! thread that is still waiting to run) is not branched to, so a spin loop cannot make the
//! search infinite.

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
    /// The previous step was a yield of `last`.
    yielded: bool,
    /// Threads the fairness rule holds back here.
    deferred: Vec<Tid>,
    /// Cost of the choices made before this state.
    cost_before: u32,
    done: Vec<Tid>,
}

/// The cost of choosing `choice` at a state with `enabled` events after `last` ran;
/// `yielded`: `last`'s step was a yield, after which a switch is free.
pub fn cost(kind: Kind, enabled: &[Event], last: Option<Tid>, yielded: bool, choice: Tid) -> u32 {
    let Some(last) = last else {
        return match kind {
            Kind::Preemption => 0,
            Kind::Delay => enabled.iter().position(|e| e.tid == choice).unwrap_or(0) as u32,
        };
    };
    let last_enabled = !yielded && enabled.iter().any(|e| e.tid == last);
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
                if node.done.contains(&e.tid) || node.deferred.contains(&e.tid) {
                    continue;
                }
                let c = cost(kind, &node.enabled, node.last, node.yielded, e.tid);
                if node.cost_before + c <= bound {
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
        let (last, yielded, cost_before) = match stack.last() {
            Some(p) => (
                Some(p.ev.tid),
                p.ev.op.is_yield(),
                p.cost_before + cost(kind, &p.enabled, p.last, p.yielded, p.ev.tid),
            ),
            None => (None, false, 0),
        };
        stack.push(Node {
            ev: step.ev.ev,
            enabled: step.enabled.clone(),
            last,
            yielded,
            deferred: step.deferred.clone(),
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
        assert_eq!(cost(Kind::Preemption, &en, Some(2), false, 2), 0);
        assert_eq!(cost(Kind::Preemption, &en, Some(2), false, 3), 1);
        assert_eq!(
            cost(Kind::Preemption, &en, Some(1), false, 3),
            0,
            "t1 is blocked"
        );
        assert_eq!(cost(Kind::Delay, &en, Some(2), false, 3), 1);
        assert_eq!(cost(Kind::Delay, &en, Some(2), false, 0), 2);
        assert_eq!(
            cost(Kind::Delay, &en, Some(1), false, 2),
            0,
            "next after t1 is t2"
        );
        assert_eq!(cost(Kind::Delay, &en, Some(1), false, 0), 2);
        // After t2's yield, switching is free; round robin moves on to t3.
        assert_eq!(cost(Kind::Preemption, &en, Some(2), true, 3), 0);
        assert_eq!(cost(Kind::Delay, &en, Some(2), true, 3), 0);
        assert_eq!(cost(Kind::Delay, &en, Some(2), true, 0), 1);
    }
}
