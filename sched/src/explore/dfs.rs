//! `dfs`: every interleaving of the scheduling points, no reduction (the baseline of stateless
//! model checking, Godefroid, POPL'97 "VeriSoft", without partial-order reduction). Every
//! *fair* one, for programs that yield: a thread the fairness rule holds back
//! ([`super::guide::Rec::deferred`]) is not branched to, or a spin loop would make the
//! search infinite (CHESS's fair search, Musuvathi & Qadeer, PLDI'08). Programs without
//! yields are unaffected.

use super::guide::{Rec, Rule};
use super::{Ctx, Outcome};
use crate::event::{Event, Tid};

/// One state of the current run: the enabled threads and those already explored (the
/// threads the fairness rule holds back count as explored).
struct Node {
    ev: Event,
    enabled: Vec<Event>,
    done: Vec<Tid>,
}

pub(crate) fn run(ctx: &mut Ctx) {
    ctx.report.complete = true;
    let mut guide = ctx.guide(Rule::Lowest, false);
    let mut stack: Vec<Node> = Vec::new();
    loop {
        if ctx.out_of_budget() {
            return;
        }
        let prefix: Vec<Event> = stack.iter().map(|n| n.ev).collect();
        let keep = stack.len();
        guide.plan(prefix, 0, Vec::new());
        if let Outcome::Stop = ctx.run(&mut guide, None) {
            return;
        }
        extend(&mut stack, &guide.steps[keep.min(guide.steps.len())..]);
        // Backtrack: the deepest state with an enabled thread not explored yet.
        loop {
            let Some(node) = stack.last_mut() else {
                return;
            };
            node.done.push(node.ev.tid);
            let done = &node.done;
            if let Some(&e) = node.enabled.iter().find(|e| !done.contains(&e.tid)) {
                node.ev = e;
                break;
            }
            stack.pop();
        }
    }
}

fn extend(stack: &mut Vec<Node>, recs: &[Rec]) {
    for r in recs {
        stack.push(Node {
            ev: r.ev.ev,
            enabled: r.enabled.clone(),
            done: r.deferred.clone(),
        });
    }
}
