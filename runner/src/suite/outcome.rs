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
        /// A C++ exception nobody caught (`std::terminate` aborted): its type and `what()`,
        /// from libstdc++'s message on stderr.
        #[serde(skip_serializing_if = "Option::is_none")]
        exception: Option<String>,
    },
    /// A Rust panic ended the process (exit code 101, or SIGABRT with `panic = "abort"`):
    /// the panicking thread's Rust name, the source location and the message, from stderr.
    Panic {
        thread: String,
        location: String,
        message: String,
    },
    /// Threads remain and none can proceed.
    Deadlock { report: Deadlock },
    /// A granted thread did not come back within the step timeout (blocked in an
    /// uncontrolled call), or kept computing without a point for the compute timeout
    /// (`computing`: an endless loop, or a longer computation).
    Hang {
        threads: Vec<String>,
        waited_ms: u64,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        computing: bool,
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
            // An uncaught C++ exception is its own kind: `std::terminate` aborted, and the
            // exception (type and `what()`) says more than the signal.
            Outcome::Crash {
                exception: Some(_), ..
            } => "abort",
            Outcome::Crash { .. } => "crash",
            Outcome::Panic { .. } => "panic",
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

/// libpos's note when a controlled thread switches to asynchronous cancellation
/// (`preload/src/cancel.rs`, `ASYNC_NOTE`).
const ASYNC_CANCEL: &str = "poscheck: uncontrolled: asynchronous cancellation \
                            (PTHREAD_CANCEL_ASYNCHRONOUS)";

/// Refine an outcome with what the program printed on `stderr` (its tail): a Rust panic's
/// message turns an exit code 101 (or a SIGABRT under `panic = "abort"`) into
/// [`Outcome::Panic`], and libstdc++'s `terminate called after throwing ...` adds the
/// exception to a SIGABRT crash.
///
/// A hang in a run where a thread set asynchronous cancellation is an error (unsupported),
/// not a bug: on a real system that thread would have been cancelled wherever it was, but
/// libpos can cancel it only at a scheduling point, so a thread cancelled while it computes
/// is waited for until the compute timeout. What the program would have done is unknown, so
/// the run says nothing about it (a genuine hang of such a program is not told apart).
pub fn refine(outcome: Outcome, stderr: &[u8]) -> Outcome {
    const SIGABRT: i32 = 6;
    if let Outcome::Hang {
        threads, waited_ms, ..
    } = &outcome
    {
        if String::from_utf8_lossy(stderr).contains(ASYNC_CANCEL) {
            return Outcome::Error {
                reason: format!(
                    "unsupported: asynchronous cancellation (PTHREAD_CANCEL_ASYNCHRONOUS): \
                     thread(s) {} reached no scheduling point within {waited_ms} ms; a thread \
                     cancelled while it computes is cancelled only at a scheduling point under \
                     poscheck (not a verdict about the program)",
                    threads.join(", ")
                ),
            };
        }
    }
    let is_abort = matches!(
        outcome,
        Outcome::Crash {
            signal: SIGABRT,
            ..
        }
    );
    if !matches!(outcome, Outcome::ExitCode { code: 101 }) && !is_abort {
        return outcome;
    }
    let text = String::from_utf8_lossy(stderr);
    if let Some(p) = rust_panic(&text) {
        return p;
    }
    if let (Outcome::Crash { thread, .. }, Some(text)) = (&outcome, glib_assertion(&text)) {
        return Outcome::Assert {
            text,
            thread: thread.clone(),
        };
    }
    match (outcome, cxx_exception(&text)) {
        (
            Outcome::Crash {
                signal,
                thread,
                pc,
                symbol,
                ..
            },
            Some(e),
        ) => Outcome::Crash {
            signal,
            thread,
            pc,
            symbol,
            exception: Some(e),
        },
        (o, _) => o,
    }
}

/// The first Rust panic report in `text`: `thread 'NAME' (TID) panicked at FILE:L:C:` (the
/// thread id only in newer Rust), then the message up to the `note:` line.
fn rust_panic(text: &str) -> Option<Outcome> {
    let mut lines = text.lines();
    let head = lines.find(|l| {
        l.starts_with("thread '") && l.contains("' panicked at ")
            || l.starts_with("thread '") && l.contains(") panicked at ")
    })?;
    let rest = head.strip_prefix("thread '")?;
    let (thread, after) = rest.split_once('\'')?;
    let (_, loc) = after.split_once("panicked at ")?;
    let (location, inline) = match loc.strip_suffix(':') {
        Some(l) => (l.to_string(), None),
        // Old format: `panicked at 'message', src/main.rs:3:5`.
        None => match loc.rsplit_once(", ") {
            Some((m, l)) => (l.to_string(), Some(m.trim_matches('\'').to_string())),
            None => (loc.to_string(), None),
        },
    };
    let message = match inline {
        Some(m) => m,
        None => lines
            .take_while(|l| !l.starts_with("note: ") && !l.starts_with("stack backtrace:"))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Some(Outcome::Panic {
        thread: thread.to_string(),
        location,
        message: message.trim().to_string(),
    })
}

/// GLib's report of a failed `g_assert*` (or `g_assert_not_reached`), which then aborts: a
/// `**` line, then `[DOMAIN:]ERROR:FILE:LINE:FUNC: assertion failed ...`; the text from the
/// file on, as glibc's `FILE:LINE: FUNC: Assertion ... failed.` is.
fn glib_assertion(text: &str) -> Option<String> {
    let mut prev = "";
    for line in text.lines() {
        if prev == "**" {
            if let Some((_, at)) = line.split_once("ERROR:") {
                if !at.is_empty() && !line.starts_with('(') {
                    return Some(at.to_string());
                }
            }
        }
        prev = line;
    }
    None
}

/// libstdc++'s report of an uncaught exception: `terminate called after throwing an
/// instance of 'T'` and, for `std::exception`s, `  what():  MESSAGE` on the next line.
fn cxx_exception(text: &str) -> Option<String> {
    const HEAD: &str = "terminate called after throwing an instance of '";
    let at = text.find(HEAD)?;
    let rest = &text[at + HEAD.len()..];
    let (ty, after) = rest.split_once('\'')?;
    let what = after
        .lines()
        .nth(1)
        .and_then(|l| l.trim_start().strip_prefix("what():"))
        .map(|w| w.trim().to_string());
    Some(match what {
        Some(w) => format!("'{ty}': what(): {w}"),
        None => format!("'{ty}'"),
    })
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
                exception: Some(e),
            } => {
                write!(f, "abort: uncaught C++ exception {e} in thread {thread} (")?;
                write!(f, "{}", signal_name(*signal))?;
                if let Some(pc) = pc {
                    write!(f, " at pc {pc:#x}")?;
                }
                if let Some(s) = symbol {
                    write!(f, " in {s}")?;
                }
                write!(f, ")")
            }
            Outcome::Crash {
                signal,
                thread,
                pc,
                symbol,
                exception,
            } => {
                write!(f, "crash: {} in thread {thread}", signal_name(*signal))?;
                if let Some(pc) = pc {
                    write!(f, " at pc {pc:#x}")?;
                }
                if let Some(s) = symbol {
                    write!(f, " ({s})")?;
                }
                if let Some(e) = exception {
                    write!(f, ": uncaught C++ exception {e}")?;
                }
                Ok(())
            }
            Outcome::Panic {
                thread,
                location,
                message,
            } => write!(f, "panic in thread '{thread}' at {location}: {message}"),
            Outcome::Deadlock { report } => write!(f, "deadlock: {report}"),
            Outcome::Hang {
                threads,
                waited_ms,
                computing: true,
            } => write!(
                f,
                "hang: thread(s) {} kept computing for {waited_ms} ms without reaching a \
                 scheduling point (an endless loop, or a computation longer than \
                 --compute-timeout)",
                threads.join(", ")
            ),
            Outcome::Hang {
                threads, waited_ms, ..
            } if threads.is_empty() => write!(
                f,
                "hang: the program reached no scheduling point and did not end within \
                 {waited_ms} ms (blocked in an uncontrolled call or spinning)"
            ),
            Outcome::Hang {
                threads, waited_ms, ..
            } => write!(
                f,
                "hang: thread(s) {} did not reach a scheduling point within {waited_ms} ms \
                 (blocked in a call libpos does not control)",
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

    #[test]
    fn a_hang_with_no_thread_to_name_says_so() {
        let hang = Outcome::Hang {
            threads: Vec::new(),
            waited_ms: 7000,
            computing: false,
        };
        assert_eq!(
            hang.to_string(),
            "hang: the program reached no scheduling point and did not end within 7000 ms \
             (blocked in an uncontrolled call or spinning)"
        );
    }

    #[test]
    fn a_hang_of_threads_that_kept_computing_says_so_and_how_to_allow_longer() {
        let hang = Outcome::Hang {
            threads: vec!["0.1".into()],
            waited_ms: 30_000,
            computing: true,
        };
        assert_eq!(
            hang.to_string(),
            "hang: thread(s) 0.1 kept computing for 30000 ms without reaching a scheduling \
             point (an endless loop, or a computation longer than --compute-timeout)"
        );
        let json = serde_json::to_value(&hang).unwrap();
        assert_eq!(json["computing"], true);
        let blocked = Outcome::Hang {
            threads: vec!["0.1".into()],
            waited_ms: 2000,
            computing: false,
        };
        assert!(serde_json::to_value(&blocked)
            .unwrap()
            .get("computing")
            .is_none());
        assert!(blocked
            .to_string()
            .contains("did not reach a scheduling point within"));
    }

    #[test]
    fn a_hang_waiting_for_an_asynchronous_cancellation_is_unsupported_not_a_bug() {
        let hang = Outcome::Hang {
            threads: vec!["0.1".into()],
            waited_ms: 2000,
            computing: false,
        };
        let note = b"poscheck: uncontrolled: asynchronous cancellation \
                     (PTHREAD_CANCEL_ASYNCHRONOUS): a thread computing with it runs outside \
                     control (partial runs) and is cancelled for real\n";
        let o = refine(hang.clone(), note);
        assert_eq!(o.kind(), "error");
        assert!(!o.is_bug());
        assert!(o
            .to_string()
            .starts_with("error: unsupported: asynchronous cancellation"));
        assert!(o.to_string().contains("thread(s) 0.1"), "{o}");
        // Without the note a hang stays a hang; with it, other outcomes stay what they were.
        assert_eq!(refine(hang.clone(), b"other\n"), hang);
        let assert = Outcome::Assert {
            text: "x".into(),
            thread: "0".into(),
        };
        assert_eq!(refine(assert.clone(), note), assert);
    }

    #[test]
    fn rust_panics_glib_assertions_and_cxx_exceptions_are_read_from_stderr() {
        let new =
            b"x\nthread '<unnamed>' (4242) panicked at src/main.rs:12:9:\nlost update: 1 != 2\n\
                    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\
                    thread 'main' (4241) panicked at src/main.rs:20:5:\nother\n";
        let p = refine(Outcome::ExitCode { code: 101 }, new);
        assert_eq!(
            p,
            Outcome::Panic {
                thread: "<unnamed>".into(),
                location: "src/main.rs:12:9".into(),
                message: "lost update: 1 != 2".into(),
            }
        );
        assert_eq!(p.kind(), "panic");
        assert!(p.is_bug());
        assert_eq!(
            p.to_string(),
            "panic in thread '<unnamed>' at src/main.rs:12:9: lost update: 1 != 2"
        );
        let old = b"thread 'main' panicked at 'boom', src/main.rs:3:5\n";
        match refine(Outcome::ExitCode { code: 101 }, old) {
            Outcome::Panic {
                message, location, ..
            } => {
                assert_eq!(
                    (message.as_str(), location.as_str()),
                    ("boom", "src/main.rs:3:5")
                )
            }
            o => panic!("{o:?}"),
        }
        // Other exit codes, or 101 without a panic message, stay what they were.
        assert_eq!(
            refine(Outcome::ExitCode { code: 1 }, new),
            Outcome::ExitCode { code: 1 }
        );
        assert_eq!(
            refine(Outcome::ExitCode { code: 101 }, b"bye\n"),
            Outcome::ExitCode { code: 101 }
        );
        let abort = |exception| Outcome::Crash {
            signal: 6,
            thread: "0.1".into(),
            pc: None,
            symbol: None,
            exception,
        };
        // GLib's g_assert_cmpint and g_assert: an assertion, not a crash.
        let glib = b"**\nERROR:split.c:17:main: assertion failed (counter == 2): (1 == 2)\n";
        assert_eq!(
            refine(abort(None), glib),
            Outcome::Assert {
                text: "split.c:17:main: assertion failed (counter == 2): (1 == 2)".into(),
                thread: "0.1".into(),
            }
        );
        let domain = b"x\n**\nGLib:ERROR:q.c:3:f: assertion failed: (n > 0)\n";
        assert_eq!(
            refine(abort(None), domain).to_string(),
            "assertion failed in thread 0.1: q.c:3:f: assertion failed: (n > 0)"
        );
        // g_error's own line (no `**` line before it) stays an abort.
        let g_error = b"(process:7): GLib-ERROR **: 10:00:00.000: out of memory\n";
        assert_eq!(refine(abort(None), g_error), abort(None));
        let cxx = b"terminate called after throwing an instance of 'std::runtime_error'\n  \
                    what():  queue empty\n";
        let c = refine(abort(None), cxx);
        assert_eq!(
            c,
            abort(Some("'std::runtime_error': what(): queue empty".into()))
        );
        assert_eq!(c.kind(), "abort");
        assert_eq!(
            c.to_string(),
            "abort: uncaught C++ exception 'std::runtime_error': what(): queue empty in thread \
             0.1 (SIGABRT)"
        );
        assert_eq!(abort(None).kind(), "crash");
        let int = b"terminate called after throwing an instance of 'int'\n";
        assert_eq!(refine(abort(None), int), abort(Some("'int'".into())));
    }
}
