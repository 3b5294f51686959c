//! Replay of a recorded schedule: step `i` runs the enabled event of the thread the schedule
//! names, provided its operation is the recorded one; anything else is a [`Divergence`] that
//! says where the program left the schedule and what it offered instead.
//!
//! Thread ids are dense in creation order, so the same schedule prefix gives the same ids; the
//! operation *name* (`lock`, `write`, ...) is compared, not its addresses, which change with
//! ASLR from one process to the next. An atomic step's memory orders are compared too when
//! the schedule recorded them (older schedules did not: any order then matches).

use super::{Divergence, Strategy};
use crate::event::{Event, ThreadName, Tid};
use crate::schedule::Step;
use std::collections::BTreeMap;

pub struct Replay {
    steps: Vec<Step>,
    /// Index of the next step to follow.
    next: usize,
    /// Thread names recorded in the schedule, to describe enabled events by name.
    names: BTreeMap<Tid, ThreadName>,
}

impl Replay {
    pub fn new(steps: Vec<Step>) -> Self {
        let names = steps.iter().map(|s| (s.tid, s.thread.clone())).collect();
        Replay {
            steps,
            next: 0,
            names,
        }
    }

    /// Steps followed so far in this run.
    pub fn followed(&self) -> usize {
        self.next
    }

    /// `0.1:write(mem[0x10+4])` when the thread is known from the schedule, else `t3:...`.
    fn describe(&self, e: &Event) -> String {
        match self.names.get(&e.tid) {
            Some(n) => format!("thread {n}: {}", e.op),
            None => format!("thread t{}: {}", e.tid, e.op),
        }
    }

    fn describe_all(&self, enabled: &[Event]) -> String {
        let v: Vec<String> = enabled.iter().map(|e| self.describe(e)).collect();
        v.join("; ")
    }
}

impl Strategy for Replay {
    fn name(&self) -> String {
        "replay".into()
    }

    fn spec(&self, _seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        Some(crate::protocol::inproc::StrategySpec::Replay {
            steps: self.steps.clone(),
        })
    }

    fn begin(&mut self, _seed: u64) {
        self.next = 0;
    }

    fn pending(&mut self, _ev: &Event) {}

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        let i = self.next;
        let Some(step) = self.steps.get(i) else {
            return Err(Divergence {
                step: i as u64,
                reason: format!(
                    "schedule ended at step {i} but the program continues (enabled: {})",
                    self.describe_all(enabled)
                ),
            });
        };
        let want = step.op_name();
        let orders = step.orders();
        match enabled.iter().position(|e| {
            e.tid == step.tid
                && e.op.name() == want
                && orders.is_none_or(|o| e.op.orders() == Some(o))
        }) {
            Some(j) => {
                self.next += 1;
                Ok(j)
            }
            None => Err(Divergence {
                step: i as u64,
                reason: format!(
                    "expected thread {} to run {}, but the enabled events are: {}",
                    step.thread,
                    step.op,
                    self.describe_all(enabled)
                ),
            }),
        }
    }

    fn executed(&mut self, _ev: &Event) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::Decision;
    use crate::event::{MemOrder, Op};
    use crate::strategy::pos::{Pos, Variant};
    use crate::strategy::testkit::{self, read, write, Instr::*, Prog};

    fn prog(last_b: u64) -> Prog {
        Prog(vec![
            vec![Do(write(0x10)), SpinOn(0x20), Do(read(0x30))],
            vec![Do(write(0x30)), Do(write(0x20)), Do(write(last_b))],
            vec![Do(read(0x10)), Do(write(0x10))],
        ])
    }

    #[test]
    fn replays_a_pos_schedule_step_for_step() {
        let mut pos = Pos::new(Variant::Pos);
        for seed in 0..50 {
            let rec = testkit::run(&mut pos, &prog(0x40), seed, 10_000);
            assert_eq!(rec.end, Decision::Over);
            let mut rp = Replay::new(rec.steps.clone());
            let again = testkit::run(&mut rp, &prog(0x40), 999, 10_000);
            assert_eq!(again.end, Decision::Over, "seed {seed}");
            assert_eq!(again.trace, rec.trace, "seed {seed}");
            assert_eq!(again.steps, rec.steps);
            assert_eq!(rp.followed(), rec.steps.len());
        }
    }

    #[test]
    fn reports_divergence_with_the_step_number() {
        let mut pos = Pos::new(Variant::Pos);
        let rec = testkit::run(&mut pos, &prog(0x40), 3, 10_000);
        // B's last operation becomes a read: the replay stops exactly there.
        let changed = Prog(vec![
            prog(0x40).0[0].clone(),
            vec![Do(write(0x30)), Do(write(0x20)), Do(read(0x40))],
            prog(0x40).0[2].clone(),
        ]);
        let at = rec
            .trace
            .iter()
            .position(|e| e.tid == 1 && e.op == write(0x40))
            .expect("B's last write ran");
        let mut rp = Replay::new(rec.steps.clone());
        let got = testkit::run(&mut rp, &changed, 0, 10_000);
        match got.end {
            Decision::Diverged(d) => {
                assert_eq!(d.step, at as u64, "{d}");
                assert!(d.reason.contains("expected thread 0.1 to run write"), "{d}");
                assert!(d.reason.contains("thread 0.1: read(mem[0x40+4])"), "{d}");
            }
            other => panic!("no divergence: {other:?}"),
        }
    }

    /// Two threads: an acquire load and a relaxed/acquire CAS of one word, then a release store.
    fn atomics(store: MemOrder) -> Prog {
        let x = 0x40;
        Prog(vec![
            vec![
                Do(Op::AtomicLoad {
                    addr: x,
                    size: 4,
                    mo: MemOrder::Acquire,
                }),
                Do(Op::AtomicRmw {
                    addr: x,
                    size: 4,
                    mo: MemOrder::AcqRel,
                    fail: Some(MemOrder::Relaxed),
                }),
            ],
            vec![Do(Op::AtomicStore {
                addr: x,
                size: 4,
                mo: store,
            })],
        ])
    }

    #[test]
    fn atomic_orders_are_saved_and_checked_and_old_schedules_still_replay() {
        let mut pos = Pos::new(Variant::Pos);
        let rec = testkit::run(&mut pos, &atomics(MemOrder::Release), 4, 10_000);
        let ops: Vec<&str> = rec.steps.iter().map(|s| s.op.as_str()).collect();
        for want in [
            "atomic_load(acquire, mem[0x40+4])",
            "atomic_rmw(acq_rel/relaxed, mem[0x40+4])",
            "atomic_store(release, mem[0x40+4])",
        ] {
            assert!(ops.contains(&want), "{ops:?}");
        }
        let again = testkit::run(
            &mut Replay::new(rec.steps.clone()),
            &atomics(MemOrder::Release),
            0,
            10_000,
        );
        assert_eq!(again.trace, rec.trace);
        // The program now stores relaxed: the replay stops at that step, and says so.
        let at = rec.trace.iter().position(|e| e.tid == 1).unwrap();
        let got = testkit::run(
            &mut Replay::new(rec.steps.clone()),
            &atomics(MemOrder::Relaxed),
            0,
            10_000,
        );
        match got.end {
            Decision::Diverged(d) => {
                assert_eq!(d.step, at as u64, "{d}");
                assert!(d.reason.contains("to run atomic_store(release,"), "{d}");
                assert!(
                    d.reason.contains("atomic_store(relaxed, mem[0x40+4])"),
                    "{d}"
                );
            }
            other => panic!("no divergence: {other:?}"),
        }
        // A schedule saved before orders were recorded (`atomic_store(mem[0x40+4])`)
        // replays whatever the orders are.
        let old: Vec<Step> = rec
            .steps
            .iter()
            .map(|s| {
                let mut s = s.clone();
                if let Some((name, rest)) = s.op.split_once('(') {
                    if let Some((_, obj)) = rest.split_once(", ") {
                        s.op = format!("{name}({obj}");
                    }
                }
                s
            })
            .collect();
        assert!(old.iter().any(|s| s.op == "atomic_store(mem[0x40+4])"));
        let got = testkit::run(
            &mut Replay::new(old),
            &atomics(MemOrder::Relaxed),
            0,
            10_000,
        );
        assert_eq!(got.end, Decision::Over);
        assert_eq!(got.trace.len(), rec.trace.len());
    }

    #[test]
    fn a_schedule_that_ends_early_diverges() {
        let mut pos = Pos::new(Variant::Pos);
        let rec = testkit::run(&mut pos, &prog(0x40), 5, 10_000);
        let short = rec.steps[..4].to_vec();
        let got = testkit::run(&mut Replay::new(short), &prog(0x40), 0, 10_000);
        match got.end {
            Decision::Diverged(d) => {
                assert_eq!(d.step, 4);
                assert!(
                    d.reason
                        .starts_with("schedule ended at step 4 but the program continues"),
                    "{d}"
                );
            }
            other => panic!("no divergence: {other:?}"),
        }
    }
}
