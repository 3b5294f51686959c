//! A recorded schedule: the sequence of chosen events of one run, enough to replay it.

use crate::event::{ThreadName, Tid};
use serde::{Deserialize, Serialize};

/// One scheduling decision: which thread ran and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Dense id in this run (deterministic for a given schedule prefix).
    pub tid: Tid,
    /// Stable name of the thread.
    pub thread: ThreadName,
    /// The operation, e.g. `lock(mutex@0x4040a0)`; replay checks the operation name.
    pub op: String,
}

impl Step {
    /// The operation's name without its objects (`lock`), used to detect divergence.
    pub fn op_name(&self) -> &str {
        self.op.split('(').next().unwrap_or("")
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
