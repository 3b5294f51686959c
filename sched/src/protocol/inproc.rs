//! Runs decided inside the program (issue 15): the runner's one message that starts a run and
//! the program's one message back, instead of a post and a grant per step.
//!
//! The runner sets [`ENV_INPROC`] and writes a [`Start`] on the main thread's connection as
//! soon as it has it; libpos reads it right after the main thread's `Hello`. With a [`Spec`]
//! the program builds the strategy and the coordinator itself: the thread whose post completes
//! a step decides the next one and hands the turn over with a futex baton, and at the end one
//! [`Msg::End`](super::Msg::End) carries the verdict and the schedule back. Without one the run
//! goes over the socket, a post and a grant per step, as before (strategies that learn across
//! runs or need the runner's data, systematic exploration, traces with pcs, `debug`).

use crate::coordinator::{Coordinator, Decision};
use crate::event::{addr_in_process, Event, Op, Tid};
use crate::explore::guide::GuideSpec;
use crate::protocol::Msg;
use crate::schedule::Step;
use crate::state::{Deadlock, State};
use crate::strategy::{self, Options, Strategy};
use serde::{Deserialize, Serialize};

/// Environment variable telling libpos that a [`Start`] follows the main thread's `Hello`
/// (`1`). The runner always sets it, so that the program's environment, hence its initial
/// stack, does not depend on the transport.
pub const ENV_INPROC: &str = "POSCHECK_INPROC";

/// First bytes of a [`Start`] frame's 16-byte header (then the JSON length, little-endian).
pub const START_MAGIC: [u8; 8] = *b"POSSTART";

/// Longest [`Start`] or [`End`] JSON accepted (a replayed schedule of a million steps fits).
pub const MAX_JSON: usize = 1 << 30;

/// How to build, inside the program, the same strategy the runner holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StrategySpec {
    /// [`strategy::by_name`] with a PCT depth and k (the only options the named strategies
    /// that can run in the program take).
    Named {
        algo: String,
        depth: Option<u32>,
        pct_k: Option<u64>,
    },
    /// [`strategy::replay`] of these steps.
    Replay { steps: Vec<Step> },
    /// An exploration's run ([`crate::explore::guide::Guide`]).
    Guide(GuideSpec),
}

impl StrategySpec {
    /// A fresh strategy as described.
    pub fn build(&self) -> Result<Box<dyn Strategy>, String> {
        match self {
            StrategySpec::Named { algo, depth, pct_k } => {
                let opts = Options {
                    depth: *depth,
                    pct_k: *pct_k,
                    ..Options::default()
                };
                strategy::by_name(algo, &opts)
            }
            StrategySpec::Replay { steps } => Ok(strategy::replay(steps.clone())),
            StrategySpec::Guide(g) => Ok(Box::new(g.build())),
        }
    }
}

/// Everything the program needs to run one run's decisions itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    pub strategy: StrategySpec,
    /// The coordinator's seed (already derived from the base seed and the try index).
    pub seed: u64,
    pub max_steps: u64,
    /// Timed waits may time out before their deadline (`--timeouts any`).
    pub timeouts_any: bool,
    /// Milliseconds without progress before the run is a hang (0: never).
    pub step_timeout_ms: u64,
    /// Milliseconds a silent thread may compute before the run is a hang
    /// ([`crate::silent::Computing`]; at least the step timeout).
    #[serde(default)]
    pub compute_timeout_ms: u64,
    /// Milliseconds of silence before a granted thread is looked up in `/proc` for being
    /// blocked outside control (0: never).
    pub blocked_after_ms: u64,
    /// Measure hand-over latencies ([`End::latencies_ns`]).
    pub record_latency: bool,
    /// Send the coordinator's inputs back ([`End::log`]): the runner replays them through
    /// its own strategy, which then knows the run as if it had made every decision (an
    /// exploration's guide records every step's enabled events and sleep set).
    pub record_log: bool,
}

/// The runner's first message to a run: decide in the program (`Some`) or over the socket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    pub spec: Option<Spec>,
}

impl Start {
    /// The frame: [`START_MAGIC`], the JSON's length (u64 LE), the JSON.
    pub fn encode(json: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + json.len());
        b.extend_from_slice(&START_MAGIC);
        b.extend_from_slice(&(json.len() as u64).to_le_bytes());
        b.extend_from_slice(json);
        b
    }

    /// The JSON length announced by a frame header, or why the header is bad.
    pub fn decode_header(h: &[u8; 16]) -> Result<usize, String> {
        if h[..8] != START_MAGIC {
            return Err("the runner's start frame is garbled".into());
        }
        let len = u64::from_le_bytes(h[8..].try_into().expect("8 bytes"));
        usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_JSON)
            .ok_or_else(|| format!("start frame of {len} bytes"))
    }
}

/// How a run decided in the program ended, as far as the program can tell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The main process's `exit(code)` was granted: its exit status decides.
    Exit {
        code: i32,
    },
    /// Every thread finished.
    Finished,
    /// A failed assertion on thread `thread` (its name).
    Assert {
        text: String,
        thread: String,
    },
    /// A fatal signal on thread `thread` at `pc`.
    Crash {
        signal: i32,
        pc: u64,
        thread: String,
    },
    Deadlock {
        report: Deadlock,
    },
    /// More steps than allowed; `live` threads were not finished.
    StepLimit {
        live: usize,
    },
    /// Nothing happened for the step timeout, or the named threads kept computing for the
    /// compute timeout (`computing`); the named threads had the turn.
    Hang {
        threads: Vec<String>,
        waited_ms: u64,
        #[serde(default)]
        computing: bool,
    },
    /// A replayed schedule could not be followed.
    Diverged {
        step: u64,
        reason: String,
    },
}

/// The program's last message of a run decided in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    pub verdict: Verdict,
    pub steps: u64,
    pub schedule: Vec<Step>,
    /// Times a granted thread was set aside as blocked outside control.
    pub outside: u64,
    /// With [`Spec::record_latency`]: nanoseconds from handing a thread the turn to its next
    /// post.
    pub latencies_ns: Vec<u64>,
    /// With [`Spec::record_log`]: everything the program's coordinator was told and decided,
    /// in order.
    pub log: Option<Vec<LogRec>>,
}

/// One input to the program's coordinator, or one of its decisions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LogRec {
    /// [`Coordinator::post`] of thread `t`; `pc`: the instrumented access's (0: none).
    Post {
        t: Tid,
        op: Op,
        pc: u64,
    },
    SemInit {
        s: u64,
        value: u32,
    },
    BarrierInit {
        b: u64,
        count: u32,
    },
    /// [`Coordinator::init_once`].
    OnceInit {
        o: u64,
        /// The control read as completed ([`crate::protocol::Msg::OnceInit`]).
        #[serde(default)]
        done: bool,
    },
    /// [`Coordinator::init_mutex`].
    MutexInit {
        m: u64,
    },
    /// [`Coordinator::mark_outside`].
    Outside {
        t: Tid,
    },
    /// [`Coordinator::pass_outside_time`]: a tick of real time passed while the run waited
    /// for a thread blocked outside control.
    Tick,
    /// [`Coordinator::pass_outside_time`] with every thread outside asleep in the kernel for
    /// `ns` of real time: timed waits' deadlines are passed towards too.
    AsleepTick {
        ns: u64,
    },
    /// [`Coordinator::kernel_wait`]: thread `t` announced a kernel wait of at most `ns`.
    KernelWait {
        t: Tid,
        ns: u64,
    },
    /// Thread `t` vanished (its connection closed).
    Finished {
        t: Tid,
    },
    /// [`crate::state::State::interrupt_from_outside`]: a signal from outside the run ended
    /// thread `t`'s wait (only when every thread was blocked).
    Interrupted {
        t: Tid,
    },
    /// [`Coordinator::decide`]: the granted thread, or `None` for any other decision.
    Decide {
        grant: Option<Tid>,
    },
    /// `auto` points: a plain access of thread `t` that was not a scheduling point, observed
    /// for the runner's race detector (see [`crate::protocol::Msg::Observed`]); it executed
    /// after every step decided so far.
    Observed {
        t: Tid,
        write: bool,
        addr: u64,
        size: u32,
        pc: u64,
    },
}

impl LogRec {
    /// The record of an initialisation message (`SemInit`, `BarrierInit`, `OnceInit`,
    /// `MutexInit`) from a
    /// thread of process `p` (0: the main process; a forked child's objects live in its own
    /// address space), `None` for any other message.
    pub fn of_init(msg: &Msg, p: u32) -> Option<LogRec> {
        Some(match *msg {
            Msg::SemInit { s, value } => LogRec::SemInit {
                s: addr_in_process(s, p),
                value,
            },
            Msg::BarrierInit { b, count } => LogRec::BarrierInit {
                b: addr_in_process(b, p),
                count,
            },
            Msg::OnceInit { o, done } => LogRec::OnceInit {
                o: addr_in_process(o, p),
                done,
            },
            Msg::MutexInit { m } => LogRec::MutexInit {
                m: addr_in_process(m, p),
            },
            _ => return None,
        })
    }

    /// Give an initialisation record to `coord`; false (nothing done) for any other record.
    pub fn initialise(&self, coord: &mut Coordinator<'_>) -> bool {
        match *self {
            LogRec::SemInit { s, value } => coord.init_sem(s, value),
            LogRec::BarrierInit { b, count } => coord.init_barrier(b, count),
            LogRec::OnceInit { o, done } => coord.init_once(o, done),
            LogRec::MutexInit { m } => coord.init_mutex(m),
            _ => return false,
        }
        true
    }
}

/// The trace event of an access that thread `t` made between two points (`auto` points'
/// observed accesses, [`crate::protocol::Msg::Observed`]), in its process's address space.
pub fn observed_event(state: &State, t: Tid, write: bool, addr: u64, size: u32) -> Event {
    let op = if write {
        Op::Write { addr, size }
    } else {
        Op::Read { addr, size }
    };
    Event::new(t, op.in_process(state.space_of(t)))
}

/// The runner's side of [`Spec::record_log`]: feed `log` to `coord` (the runner's strategy,
/// the same seed) and check that every decision is the program's. Returns the executed
/// events with the pc each one's post carried, and the observed accesses where they ran.
pub fn replay_log(
    coord: &mut Coordinator<'_>,
    log: &[LogRec],
) -> Result<Vec<(Event, u64)>, String> {
    let mut pending_pc: Vec<u64> = Vec::new();
    let mut trace = Vec::new();
    for (i, rec) in log.iter().enumerate() {
        match *rec {
            LogRec::Post { t, op, pc } => {
                coord.post(t, op).map_err(|e| format!("record {i}: {e}"))?;
                if pending_pc.len() <= t as usize {
                    pending_pc.resize(t as usize + 1, 0);
                }
                pending_pc[t as usize] = pc;
            }
            LogRec::SemInit { .. }
            | LogRec::BarrierInit { .. }
            | LogRec::OnceInit { .. }
            | LogRec::MutexInit { .. } => {
                rec.initialise(coord);
            }
            LogRec::Outside { t } => coord
                .mark_outside(t)
                .map_err(|e| format!("record {i}: {e}"))?,
            LogRec::Tick => {
                coord.pass_outside_time(None);
            }
            LogRec::AsleepTick { ns } => {
                coord.pass_outside_time(Some(std::time::Duration::from_nanos(ns)));
            }
            LogRec::KernelWait { t, ns } => coord.kernel_wait(t, ns),
            LogRec::Interrupted { t } => {
                if !coord.state_mut().interrupt_from_outside(t) {
                    return Err(format!("record {i}: thread {t} is not blocked in a wait"));
                }
            }
            LogRec::Finished { t } => {
                let st = coord.state_mut();
                if (t as usize) < st.num_threads() {
                    st.mark_finished(t);
                }
            }
            LogRec::Observed {
                t,
                write,
                addr,
                size,
                pc,
            } => trace.push((observed_event(coord.state(), t, write, addr, size), pc)),
            LogRec::Decide { grant } => {
                let here = match coord.decide() {
                    Decision::Grant { tid, op, .. } => {
                        let pc = pending_pc.get(tid as usize).copied().unwrap_or(0);
                        trace.push((Event::new(tid, op), pc));
                        Some(tid)
                    }
                    _ => None,
                };
                if here != grant {
                    return Err(format!(
                        "record {i}: the program decided {grant:?}, the replay {here:?}"
                    ));
                }
            }
        }
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_spec_builds_the_strategy_by_name_with_its_pct_options() {
        let s = StrategySpec::Named {
            algo: "pct".into(),
            depth: Some(2),
            pct_k: Some(40),
        };
        let built = s.build().expect("pct builds");
        assert_eq!(built.name(), "pct");
        assert_eq!(built.spec(0), Some(s));
        let bad = StrategySpec::Named {
            algo: "nope".into(),
            depth: None,
            pct_k: None,
        };
        assert!(bad.build().is_err());
    }

    /// Two threads, each: write x, read x, exit; decided by a random walk with `seed`.
    /// Returns the log the program would send and the executed events.
    fn logged_run(seed: u64) -> (Vec<LogRec>, Vec<Event>) {
        use crate::state::State;
        let ops = [
            Op::Write { addr: 8, size: 4 },
            Op::Read { addr: 8, size: 4 },
            Op::Exit,
        ];
        let mut rw = crate::strategy::rw::RandomWalk::new();
        let mut co = Coordinator::with_state(&mut rw, seed, 100, State::with_initial_threads(2));
        let mut log = Vec::new();
        let mut next = [0usize; 2];
        for t in 0..2 {
            co.post(t, ops[0]).unwrap();
            log.push(LogRec::Post {
                t,
                op: ops[0],
                pc: 0x40 + t as u64,
            });
        }
        loop {
            let d = co.decide();
            let grant = match d {
                Decision::Grant { tid, .. } => Some(tid),
                _ => None,
            };
            log.push(LogRec::Decide { grant });
            let Some(t) = grant else { break };
            next[t as usize] += 1;
            if let Some(&op) = ops.get(next[t as usize]) {
                co.post(t, op).unwrap();
                log.push(LogRec::Post {
                    t,
                    op,
                    pc: 0x40 + t as u64,
                });
            }
        }
        (log, co.trace().to_vec())
    }

    #[test]
    fn a_replayed_log_gives_the_program_s_trace_and_a_different_decision_is_refused() {
        use crate::state::State;
        for seed in 0..20 {
            let (log, trace) = logged_run(seed);
            let mut rw = crate::strategy::rw::RandomWalk::new();
            let mut co =
                Coordinator::with_state(&mut rw, seed, 100, State::with_initial_threads(2));
            let got = replay_log(&mut co, &log).expect("the same strategy and seed replay");
            let events: Vec<Event> = got.iter().map(|(e, _)| *e).collect();
            assert_eq!(events, trace);
            // Each event carries its own thread's pc.
            assert!(got.iter().all(|(e, pc)| *pc == 0x40 + e.tid as u64));
        }
        // Another seed decides differently somewhere: the replay says where, not a trace.
        let (log, _) = logged_run(3);
        let differs = (0..50).any(|other| {
            let mut rw = crate::strategy::rw::RandomWalk::new();
            let mut co =
                Coordinator::with_state(&mut rw, other, 100, State::with_initial_threads(2));
            replay_log(&mut co, &log).is_err()
        });
        assert!(differs);
    }

    #[test]
    fn a_try_of_auto_is_decided_in_the_program_when_its_member_can_be() {
        let auto = strategy::by_name("auto", &Options::default()).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..200 {
            let seed = crate::rng::try_seed(3, i);
            let m = strategy::portfolio::member(seed);
            let want = strategy::by_name(m, &Options::default())
                .unwrap()
                .spec(seed);
            assert_eq!(auto.spec(seed), want, "try {i} ({m})");
            // surw and rff need the runner's profile and corpus.
            assert_eq!(want.is_none(), matches!(m, "surw" | "rff"), "{m}");
            seen.insert(m);
        }
        assert_eq!(seen.len(), strategy::portfolio::MEMBERS.len());
    }

    #[test]
    fn a_start_header_round_trips_and_garbage_is_refused() {
        let f = Start::encode(b"{}");
        let h: [u8; 16] = f[..16].try_into().unwrap();
        assert_eq!(Start::decode_header(&h), Ok(2));
        let mut bad = h;
        bad[0] = b'X';
        assert!(Start::decode_header(&bad).is_err());
        let mut huge = h;
        huge[8..].copy_from_slice(&(u64::MAX).to_le_bytes());
        assert!(Start::decode_header(&huge).is_err());
    }
}
