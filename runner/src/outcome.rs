//! The outcome of one controlled run and its classification (the list: ok, assert,
//! crash, deadlock, hang, step-limit, exit-code, error; plus `diverged` for replays).

use pos_sched::state::Deadlock;
use serde::Serialize;
use std::fmt;

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Outcome {
    /// The program exited with an accepted exit code.
    Ok { code: i32 },
    /// `assert()` failed: the libc message (`file:line: function: Assertion ... failed.`).
    Assert { text: String, thread: String },
    /// The process died from a fatal signal.
    Crash {
        signal: i32,
        thread: String,
        pc: Option<u64>,
        symbol: Option<String>,
    },
    /// Threads remain and none can proceed.
    Deadlock { report: Deadlock },
    /// A granted thread did not come back within the step timeout (blocked in an
    /// uncontrolled call, or spinning without scheduling points).
    Hang {
        threads: Vec<String>,
        waited_ms: u64,
    },
    /// More scheduling steps than allowed: a livelock, or just a long run (`live`: threads
    /// not finished at the limit; with one, it is a long single-threaded stretch).
    StepLimit { steps: u64, live: usize },
    /// The program exited with a code not in `--ok-exit-codes`.
    ExitCode { code: i32 },
    /// A replayed schedule could not be followed.
    Diverged { step: u64, reason: String },
    /// Protocol or setup failure; never a verdict about the program.
    Error { reason: String },
}

impl Outcome {
    /// The short name used in tables, JSON counts and schedule files.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Ok { .. } => "ok",
            Outcome::Assert { .. } => "assert",
            Outcome::Crash { .. } => "crash",
            Outcome::Deadlock { .. } => "deadlock",
            Outcome::Hang { .. } => "hang",
            Outcome::StepLimit { .. } => "step-limit",
            Outcome::ExitCode { .. } => "exit-code",
            Outcome::Diverged { .. } => "diverged",
            Outcome::Error { .. } => "error",
        }
    }

    /// Whether this outcome is a bug of the program (errors and divergences are not).
    pub fn is_bug(&self) -> bool {
        !matches!(
            self,
            Outcome::Ok { .. } | Outcome::Diverged { .. } | Outcome::Error { .. }
        )
    }

    /// Classify a normal process exit.
    pub fn from_exit(code: i32, ok_codes: &[i32]) -> Outcome {
        if ok_codes.contains(&code) {
            Outcome::Ok { code }
        } else {
            Outcome::ExitCode { code }
        }
    }
}

/// The name of a signal number (`SIGSEGV`), or the number.
pub fn signal_name(sig: i32) -> String {
    match nix::sys::signal::Signal::try_from(sig) {
        Ok(s) => s.as_str().to_string(),
        Err(_) => format!("signal {sig}"),
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Ok { code } => write!(f, "ok (exit code {code})"),
            Outcome::Assert { text, thread } => {
                write!(f, "assertion failed in thread {thread}: {text}")
            }
            Outcome::Crash {
                signal,
                thread,
                pc,
                symbol,
            } => {
                write!(f, "crash: {} in thread {thread}", signal_name(*signal))?;
                if let Some(pc) = pc {
                    write!(f, " at pc {pc:#x}")?;
                }
                if let Some(s) = symbol {
                    write!(f, " ({s})")?;
                }
                Ok(())
            }
            Outcome::Deadlock { report } => write!(f, "deadlock: {report}"),
            Outcome::Hang { threads, waited_ms } => write!(
                f,
                "hang: thread(s) {} did not reach a scheduling point within {waited_ms} ms \
                 (blocked in an uncontrolled call or spinning)",
                threads.join(", ")
            ),
            Outcome::StepLimit { steps, live } if *live <= 1 => write!(
                f,
                "step limit: {steps} scheduling steps with one live thread (a long \
                 single-threaded stretch, not a livelock: raise --max-steps)"
            ),
            Outcome::StepLimit { steps, .. } => {
                write!(f, "step limit: {steps} scheduling steps (livelock?)")
            }
            Outcome::ExitCode { code } => write!(f, "exit code {code}"),
            Outcome::Diverged { step, reason } => {
                write!(f, "diverged from the schedule at step {step}: {reason}")
            }
            Outcome::Error { reason } => write!(f, "error: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_classified_by_the_accepted_list() {
        assert_eq!(Outcome::from_exit(0, &[0]).kind(), "ok");
        assert_eq!(Outcome::from_exit(6, &[0]).kind(), "exit-code");
        assert_eq!(Outcome::from_exit(6, &[0, 6]).kind(), "ok");
        assert!(Outcome::from_exit(1, &[0]).is_bug());
        assert!(!Outcome::Error { reason: "x".into() }.is_bug());
        assert_eq!(signal_name(11), "SIGSEGV");
    }
}
