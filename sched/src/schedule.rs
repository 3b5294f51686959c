//! A recorded schedule: the sequence of chosen events of one run, enough to replay it.

use crate::event::{Orders, ThreadName, Tid};
use serde::{Deserialize, Serialize};

/// One scheduling decision: which thread ran and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Dense id in this run (deterministic for a given schedule prefix).
    pub tid: Tid,
    /// Stable name of the thread.
    pub thread: ThreadName,
    /// The operation, e.g. `lock(mutex@0x4040a0)` or `atomic_load(acquire, mem[0x4040+4])`
    /// (see [`crate::Op`]'s display); replay checks the operation name and, for an atomic,
    /// its memory orders.
    pub op: String,
    /// The step switched away from a thread that could have continued: a *preemption*
    /// (the previous step's thread was still enabled and had not yielded). Absent (false)
    /// in files saved before it was recorded; `poscheck minimize` derives it by replay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preempt: bool,
    /// Where the thread was when it posted the step: the return address of the call that
    /// reached the scheduling point (the interposed function's caller, or the instrumented
    /// access's `__tsan_*` call), as its module and the offset in it. Recorded when the run
    /// asked libpos for caller pcs (`replay --trace`, the schedules `run` saves); not by
    /// the ptrace backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<Site>,
    /// The symbol of the operation's first object when it is a global or static variable of
    /// a mapped file (`g_lock`, `ready+0x4`), for people reading the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obj: Option<String>,
    /// The same for its second object (a condition wait's mutex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obj2: Option<String>,
}

/// A code address as the file mapped there and the address in that file's own terms (its
/// link-time virtual address, what `addr2line -e FILE` takes): the same whatever the load
/// address, so independent of ASLR and of where a position-independent file was put.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    pub module: String,
    pub offset: u64,
}

impl Step {
    /// A step without the optional annotations.
    pub fn new(tid: Tid, thread: ThreadName, op: String) -> Step {
        Step {
            tid,
            thread,
            op,
            preempt: false,
            pc: None,
            obj: None,
            obj2: None,
        }
    }

    /// The operation's name without its objects (`lock`), used to detect divergence.
    pub fn op_name(&self) -> &str {
        self.op.split('(').next().unwrap_or("")
    }

    /// The memory orders an atomic step recorded (`acquire` in `atomic_load(acquire, ...)`,
    /// `acq_rel/relaxed` for a compare-exchange). `None` for other operations and for
    /// atomics saved before orders were recorded (`atomic_load(mem[...])`): their order is
    /// unknown, and replay accepts any.
    pub fn orders(&self) -> Option<Orders> {
        let (_, args) = self.op.split_once('(')?;
        args.split([',', ')']).next()?.trim().parse().ok()
    }
}

/// A whole run's schedule plus what is needed to re-run it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub algo: String,
    pub seed: u64,
    #[serde(rename = "try")]
    pub try_index: u64,
    /// Scheduling-point mode the run used (`sync`, `mem`, `races`).
    #[serde(default)]
    pub points: String,
    /// The outcome the recorded run had, e.g. `assert`.
    #[serde(default)]
    pub outcome: String,
    /// `any` when timed waits could time out before their deadline (`--timeouts any`);
    /// empty for the default (see [`crate::state::clock`]). Replay uses the same rule.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub timeouts: String,
    /// Sleeps and clock reads were real (`--real-sleep`); replay does the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub real_sleep: bool,
    pub steps: Vec<Step>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{MemOrder, Op};

    fn step(op: &str) -> Step {
        Step::new(1, ThreadName::main().child(1), op.into())
    }

    #[test]
    fn atomic_steps_read_back_the_orders_they_display() {
        for mo in MemOrder::ALL {
            for fail in [None, Some(MemOrder::Relaxed), Some(mo)] {
                let ops = [
                    Op::AtomicLoad {
                        addr: 0x4040,
                        size: 4,
                        mo,
                    },
                    Op::AtomicStore {
                        addr: 0x4040,
                        size: 4,
                        mo,
                    },
                    Op::AtomicRmw {
                        addr: 0x4040,
                        size: 8,
                        mo,
                        fail,
                    },
                ];
                for op in ops {
                    let s = step(&op.to_string());
                    assert_eq!(s.orders(), op.orders(), "{}", s.op);
                    assert_eq!(s.op_name(), op.name());
                }
            }
        }
        let cas = Op::AtomicRmw {
            addr: 0x4040,
            size: 4,
            mo: MemOrder::AcqRel,
            fail: Some(MemOrder::Relaxed),
        };
        assert_eq!(
            cas.to_string(),
            "atomic_rmw(acq_rel/relaxed, mem[0x4040+4])"
        );
    }

    #[test]
    fn steps_saved_without_orders_have_none() {
        for op in [
            "atomic_load(mem[0x4040+4])",
            "atomic_rmw(p1:0x4040)",
            "lock(mutex@0x4040a0)",
            "write(mem[0x10+4])",
            "yield",
            "atomic_store(weird, mem[0x4040+4])",
        ] {
            assert_eq!(step(op).orders(), None, "{op}");
        }
        // An old schedule file (no orders, no newer fields) still loads.
        let old = r#"{"program":"./a","algo":"pos","seed":1,"try":3,
            "steps":[{"tid":1,"thread":"0.1","op":"atomic_rmw(mem[0x601040+4])"}]}"#;
        let s: Schedule = serde_json::from_str(old).unwrap();
        assert_eq!(s.steps[0].op_name(), "atomic_rmw");
        assert_eq!(s.steps[0].orders(), None);
    }
}
