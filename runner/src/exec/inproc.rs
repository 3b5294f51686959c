//! Runs decided inside the program (issue 15, [`pos_sched::protocol::inproc`]): the runner
//! sends one start message with the strategy and the seed, libpos makes every decision in the
//! program and hands the turn from thread to thread with a futex baton, and one end message
//! brings the verdict and the schedule back. Here the runner only watches: the end message,
//! the exit status (pidfd or the fork server), a sign of life about once a second, and its
//! own deadline in case the program's watcher is stuck too.

use crate::exec::elf::{self, Mapping};
use crate::exec::forkserver;
use crate::exec::process::Exit;
use crate::exec::pump::Ev;
use crate::exec::rundirs;
use crate::exec::session::{self, Io, RunConfig, Transport};
use crate::suite::outcome::Outcome;
use crossbeam_channel::RecvTimeoutError;
use pos_sched::protocol::inproc::{End, Spec, Start, Verdict};
use pos_sched::protocol::Msg;
use pos_sched::Strategy;
use std::io::Write;
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// How long past the step timeout the runner waits without progress before it judges the run
/// a hang itself (the program's own watcher normally does at the step timeout).
const GUARD_EXTRA: Duration = Duration::from_secs(5);
/// After the exit status, how long to wait for an end message still queued.
const END_GRACE: Duration = Duration::from_millis(200);

/// The spec of a run decided in the program, if this one can be: the baton transport, a
/// strategy that can be built there, and nothing that needs the runner on every step: caller
/// pcs, the hand on every grant of `debug`. A trace (exploration, race learning) comes back
/// as the coordinator's log ([`Spec::record_log`]), observed accesses included.
pub fn spec_for(cfg: &RunConfig, strategy: &dyn Strategy, seed: u64) -> Option<Spec> {
    if cfg.transport != Transport::Baton || cfg.caller_pcs || cfg.debug.is_some() {
        return None;
    }
    Some(Spec {
        strategy: strategy.spec(seed)?,
        seed,
        max_steps: cfg.max_steps,
        timeouts_any: cfg.timeouts_any,
        step_timeout_ms: cfg.step_timeout.as_millis().min(u64::MAX as u128) as u64,
        compute_timeout_ms: cfg.compute_timeout.as_millis().min(u64::MAX as u128) as u64,
        blocked_after_ms: cfg
            .blocked_after
            .map_or(0, |d| d.as_millis().clamp(1, u64::MAX as u128) as u64),
        record_latency: cfg.record_latency,
        record_log: cfg.record_trace,
    })
}

/// The start frame for the main thread's connection: with `spec`, the run is decided in the
/// program; without, over the socket.
pub fn start_frame(spec: Option<&Spec>) -> Vec<u8> {
    let start = Start {
        spec: spec.cloned(),
    };
    // Serialising plain data cannot fail.
    Start::encode(&serde_json::to_vec(&start).unwrap_or_default())
}

/// What watching a run decided in the program gave.
pub struct Watched {
    pub outcome: Outcome,
    pub end: Option<End>,
    pub maps: Vec<Mapping>,
    /// The exit status was seen (the fork server's notice is consumed).
    pub exit_seen: bool,
}

/// Watch the run: send the start frame on the main thread's connection (with the run's
/// journal, if there is one), then wait for the end message and the exit status. A fork
/// `server` hears of the end message at once, to fork the next run's process while this
/// one exits.
pub fn watch(
    cfg: &RunConfig,
    server: Option<&forkserver::ForkServer>,
    io: &mut Io,
    spec: &Spec,
    pid: u32,
    journal: Option<RawFd>,
) -> Watched {
    let frame = start_frame(Some(spec));
    let guard = cfg.step_timeout + GUARD_EXTRA;
    let mut w = Watch {
        cfg,
        pid,
        main: None,
        end: None,
        exit: None,
        maps: Vec::new(),
        error: None,
        steps: 0,
        progress: Instant::now(),
        concluding: None,
    };
    let mut exited_at: Option<Instant> = None;
    let hang = loop {
        if w.error.is_some() {
            break None;
        }
        if let Some(e) = &w.end {
            if w.exit.is_some() || final_verdict(&e.verdict) {
                break None;
            }
        }
        let timeout = match exited_at {
            Some(at) => END_GRACE.saturating_sub(at.elapsed()),
            None => w
                .concluding
                .unwrap_or(guard)
                .saturating_sub(w.progress.elapsed()),
        };
        match io.recv_timeout(timeout) {
            Ok(Ev::Conn(0, s)) => {
                // The mappings first: once started the program may crash and be gone before
                // its hello is read.
                w.read_maps();
                // A failed write means the program died before the run started: its exit
                // status tells how.
                let _ = match journal {
                    Some(fd) => forkserver::send_with_fds(&s, &frame, &[fd]),
                    None => (&s).write_all(&frame),
                };
                w.main = Some(s);
                // The runner waits from here: the time to clean up after the last run and
                // to prepare the next one.
                rundirs::tidy();
            }
            // Only the main thread connects here: the others, and forked processes, talk to
            // libpos's watcher in the program.
            Ok(Ev::Conn(..)) | Ok(Ev::Pc(..)) | Ok(Ev::Eof(_)) => {}
            Ok(Ev::Msg(_, msg)) => {
                let end = matches!(msg, Msg::End { .. });
                w.message(msg);
                if let (true, Some(s)) = (end && w.end.is_some(), server) {
                    s.ahead(pid);
                }
            }
            Ok(Ev::Bad(id, e)) => w.error = Some(format!("connection {id}: {e}")),
            Ok(Ev::Exited(e)) => {
                w.exit = Some(e);
                exited_at = Some(Instant::now());
            }
            Ok(Ev::ServerLost) => w.error = Some("the fork server ended during the run".into()),
            Err(RecvTimeoutError::Timeout) => {
                if exited_at.is_some() {
                    break None;
                }
                break Some(Outcome::Hang {
                    threads: Vec::new(),
                    waited_ms: guard.as_millis() as u64,
                    computing: false,
                });
            }
            Err(RecvTimeoutError::Disconnected) => {
                w.error = Some("internal: event channel closed".into());
            }
        }
    };
    let outcome = match (hang, w.error.take()) {
        (_, Some(reason)) => Outcome::Error { reason },
        (Some(h), None) => h,
        (None, None) => w.classify(),
    };
    Watched {
        outcome,
        end: w.end,
        maps: w.maps,
        exit_seen: w.exit.is_some(),
    }
}

/// A verdict that needs no exit status (the program ends itself with `_exit(1)` after it).
fn final_verdict(v: &Verdict) -> bool {
    !matches!(v, Verdict::Exit { .. } | Verdict::Finished)
}

struct Watch<'c> {
    cfg: &'c RunConfig,
    pid: u32,
    /// The main thread's connection (kept open until the run ends; none: it never connected).
    main: Option<UnixStream>,
    end: Option<End>,
    exit: Option<Exit>,
    maps: Vec<Mapping>,
    error: Option<String>,
    /// Steps at the last sign of life, and when they last advanced.
    steps: u64,
    progress: Instant,
    /// The program said it makes its end report ([`Msg::Concluding`]): how long it gets.
    concluding: Option<Duration>,
}

impl Watch<'_> {
    /// The program's mappings for crash symbolisation, if not read yet.
    fn read_maps(&mut self) {
        if self.maps.is_empty() {
            self.maps = session::program_maps(self.cfg, self.pid);
        }
    }

    fn message(&mut self, msg: Msg) {
        match msg {
            Msg::Hello { tid: 0, .. } => self.read_maps(),
            Msg::Alive { steps } if steps != self.steps => {
                self.steps = steps;
                self.progress = Instant::now();
            }
            Msg::Concluding { steps } => {
                self.concluding = Some(pos_sched::protocol::concluding_grace(steps));
                self.progress = Instant::now();
            }
            Msg::End { json } => match serde_json::from_slice::<End>(&json) {
                Ok(e) => self.end = Some(e),
                Err(e) => self.error = Some(format!("bad end report from libpos: {e}")),
            },
            _ => {}
        }
    }

    /// The outcome from the end report and the exit status.
    fn classify(&self) -> Outcome {
        let crash = |signal: i32, pc: Option<u64>, thread: String| Outcome::Crash {
            signal,
            thread,
            pc,
            symbol: pc.and_then(|pc| elf::symbolise(pc, &self.maps)),
            exception: None,
        };
        let from_exit = || match self.exit {
            None => Outcome::Error {
                reason: "the program's end was not observed".into(),
            },
            Some(Exit::Signal(sig)) => crash(sig, None, "?".into()),
            Some(Exit::Code(code)) if self.main.is_none() => Outcome::Error {
                reason: format!(
                    "the program exited (code {code}) without ever connecting to the \
                     coordinator: libpos.so was not loaded or did not start"
                ),
            },
            Some(Exit::Code(code)) => Outcome::from_exit(code, &self.cfg.ok_exit_codes),
        };
        let Some(end) = &self.end else {
            return from_exit();
        };
        match &end.verdict {
            Verdict::Exit { .. } | Verdict::Finished => from_exit(),
            Verdict::Assert { text, thread } => Outcome::Assert {
                text: text.clone(),
                thread: thread.clone(),
            },
            Verdict::Crash { signal, pc, thread } => {
                let signal = match self.exit {
                    Some(Exit::Signal(s)) => s,
                    _ => *signal,
                };
                crash(signal, Some(*pc), thread.clone())
            }
            Verdict::Deadlock { report } => Outcome::Deadlock {
                report: report.clone(),
            },
            Verdict::StepLimit { live } => Outcome::StepLimit {
                steps: end.steps,
                live: *live,
            },
            Verdict::Hang {
                threads,
                waited_ms,
                computing,
            } => Outcome::Hang {
                threads: threads.clone(),
                waited_ms: *waited_ms,
                computing: *computing,
            },
            Verdict::Diverged { step, reason } => Outcome::Diverged {
                step: *step,
                reason: reason.clone(),
            },
        }
    }
}
