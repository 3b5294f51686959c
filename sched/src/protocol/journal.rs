//! The journal of a run decided in the program (issue 15, item 3): a memory page the runner
//! creates (a memfd) and hands to libpos with the start frame, to which the program's
//! coordinator appends every input and decision ([`LogRec`]) as it happens. The runner reads
//! it after the run: when the program died without its end message (`SIGKILL`, a raw
//! `exit_group`, the runner's own hang guard) the schedule so far is rebuilt from it
//! ([`rebuild`]), and an exploration takes its trace from it instead of a JSON log.
//!
//! Layout: a [`HEADER_LEN`]-byte header (magic, record capacity, records written, overflow
//! flag; u64 little-endian each), then fixed [`RECORD_LEN`]-byte records: a kind, a thread,
//! a frame of the wire protocol ([`Msg`]: the post, initialisation or observed access, as a
//! connection would carry it) and a pc. A record is written before the count that covers
//! it, so a process killed in the middle of a write leaves every counted record whole.

use super::inproc::LogRec;
use super::{Msg, ProtocolError, MSG_LEN};
use crate::coordinator::Coordinator;
use crate::event::Event;
use crate::schedule::Step;
use crate::strategy::{Divergence, Strategy};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// First header word.
pub const MAGIC: u64 = u64::from_le_bytes(*b"POSJRNL1");
pub const HEADER_LEN: usize = 64;
pub const RECORD_LEN: usize = 48;
/// Size of the page the runner creates: about 1.4 million records. It is a sparse memfd:
/// only the pages a run writes take memory.
pub const SIZE: usize = 64 << 20;

/// A record that holds a wire frame ([`Msg`]): a post, a semaphore or barrier
/// initialisation, an observed access.
const K_FRAME: u32 = 1;
const K_OUTSIDE: u32 = 4;
const K_FINISHED: u32 = 5;
const K_DECIDE: u32 = 6;
const K_INTERRUPTED: u32 = 7;
const K_TICK: u32 = 8;
/// [`LogRec::AsleepTick`]: its real time in the pc field.
const K_ASLEEP_TICK: u32 = 9;
/// [`LogRec::Decide`] without a grant.
const NO_TID: u32 = u32::MAX;

fn word(page: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(page[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

fn set_word(page: &mut [u8], i: usize, v: u64) {
    page[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
}

/// Make `page` an empty journal (the runner, before each run).
pub fn reset(page: &mut [u8]) {
    let cap = page.len().saturating_sub(HEADER_LEN) / RECORD_LEN;
    set_word(page, 0, MAGIC);
    set_word(page, 1, cap as u64);
    set_word(page, 2, 0);
    set_word(page, 3, 0);
}

/// Whether `page` holds a journal the runner reset (the program checks before writing).
pub fn is_journal(page: &[u8]) -> bool {
    page.len() >= HEADER_LEN
        && word(page, 0) == MAGIC
        && word(page, 1) as usize <= (page.len() - HEADER_LEN) / RECORD_LEN
}

/// Append `rec`; `false` (and the overflow flag set) once the page is full.
pub fn append(page: &mut [u8], rec: &LogRec) -> bool {
    let (n, cap) = (word(page, 2) as usize, word(page, 1) as usize);
    if n >= cap {
        set_word(page, 3, 1);
        return false;
    }
    let at = HEADER_LEN + n * RECORD_LEN;
    page[at..at + RECORD_LEN].copy_from_slice(&encode(rec));
    set_word(page, 2, n as u64 + 1);
    true
}

/// How many records were written (as the header says; at most the capacity).
pub fn written(page: &[u8]) -> usize {
    if page.len() < HEADER_LEN {
        return 0;
    }
    (word(page, 2) as usize).min(word(page, 1) as usize)
}

/// Whether records were lost because the page was full.
pub fn overflowed(page: &[u8]) -> bool {
    word(page, 3) != 0
}

/// The records written, in order.
pub fn records(page: &[u8]) -> Result<Vec<LogRec>, ProtocolError> {
    if !is_journal(page) {
        return Err(ProtocolError("the run's journal is garbled".into()));
    }
    (0..written(page))
        .map(|i| {
            let at = HEADER_LEN + i * RECORD_LEN;
            decode(page[at..at + RECORD_LEN].try_into().expect("a record"))
                .map_err(|e| ProtocolError(format!("journal record {i}: {}", e.0)))
        })
        .collect()
}

/// A record: its kind, its thread, a wire frame (zeros for none) and a pc.
fn record(kind: u32, t: u32, frame: [u8; MSG_LEN], pc: u64) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[0..4].copy_from_slice(&kind.to_le_bytes());
    r[4..8].copy_from_slice(&t.to_le_bytes());
    r[8..8 + MSG_LEN].copy_from_slice(&frame);
    r[8 + MSG_LEN..].copy_from_slice(&pc.to_le_bytes());
    r
}

/// One record's bytes (allocation-free: libpos writes them on the hot path). The
/// coordinator's inputs that the wire protocol carries are its frames ([`Msg::encode`]).
pub fn encode(rec: &LogRec) -> [u8; RECORD_LEN] {
    let none = [0u8; MSG_LEN];
    match *rec {
        LogRec::Post { t, op, pc } => record(K_FRAME, t, Msg::Post(op).encode().0, pc),
        LogRec::SemInit { s, value } => record(K_FRAME, 0, Msg::SemInit { s, value }.encode().0, 0),
        LogRec::BarrierInit { b, count } => {
            record(K_FRAME, 0, Msg::BarrierInit { b, count }.encode().0, 0)
        }
        LogRec::OnceInit { o, done } => record(K_FRAME, 0, Msg::OnceInit { o, done }.encode().0, 0),
        LogRec::MutexInit { m } => record(K_FRAME, 0, Msg::MutexInit { m }.encode().0, 0),
        LogRec::Observed {
            t,
            write,
            addr,
            size,
            pc,
        } => record(K_FRAME, t, Msg::encode_observed(write, addr, size, pc), pc),
        LogRec::Outside { t } => record(K_OUTSIDE, t, none, 0),
        LogRec::Finished { t } => record(K_FINISHED, t, none, 0),
        LogRec::Interrupted { t } => record(K_INTERRUPTED, t, none, 0),
        LogRec::Tick => record(K_TICK, 0, none, 0),
        LogRec::AsleepTick { ns } => record(K_ASLEEP_TICK, 0, none, ns),
        LogRec::KernelWait { t, ns } => record(K_FRAME, t, Msg::KernelWait { ns }.encode().0, 0),
        LogRec::Decide { grant } => record(K_DECIDE, grant.unwrap_or(NO_TID), none, 0),
    }
}

/// A record from its bytes.
pub fn decode(r: &[u8; RECORD_LEN]) -> Result<LogRec, ProtocolError> {
    let kind = u32::from_le_bytes(r[0..4].try_into().expect("4 bytes"));
    let t = u32::from_le_bytes(r[4..8].try_into().expect("4 bytes"));
    let frame: &[u8; MSG_LEN] = r[8..8 + MSG_LEN].try_into().expect("a frame");
    let pc = u64::from_le_bytes(r[8 + MSG_LEN..].try_into().expect("8 bytes"));
    Ok(match kind {
        K_FRAME => match Msg::decode(frame)? {
            Ok(Msg::Post(op)) => LogRec::Post { t, op, pc },
            Ok(Msg::SemInit { s, value }) => LogRec::SemInit { s, value },
            Ok(Msg::BarrierInit { b, count }) => LogRec::BarrierInit { b, count },
            Ok(Msg::OnceInit { o, done }) => LogRec::OnceInit { o, done },
            Ok(Msg::MutexInit { m }) => LogRec::MutexInit { m },
            Ok(Msg::KernelWait { ns }) => LogRec::KernelWait { t, ns },
            Ok(Msg::Observed {
                write,
                addr,
                size,
                pc,
            }) => LogRec::Observed {
                t,
                write,
                addr,
                size,
                pc,
            },
            _ => {
                return Err(ProtocolError(
                    "a journal record holds another message".into(),
                ))
            }
        },
        K_OUTSIDE => LogRec::Outside { t },
        K_FINISHED => LogRec::Finished { t },
        K_INTERRUPTED => LogRec::Interrupted { t },
        K_TICK => LogRec::Tick,
        K_ASLEEP_TICK => LogRec::AsleepTick { ns: pc },
        K_DECIDE => LogRec::Decide {
            grant: (t != NO_TID).then_some(t),
        },
        _ => return Err(ProtocolError(format!("unknown journal record kind {kind}"))),
    })
}

/// A strategy that grants what the journal says was granted.
struct Follow {
    /// The next grant ([`NO_TID`]: none).
    next: Arc<AtomicU32>,
}

impl Strategy for Follow {
    fn name(&self) -> String {
        "journal".into()
    }
    fn begin(&mut self, _seed: u64) {}
    fn pending(&mut self, _ev: &Event) {}
    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        let want = Some(self.next.load(Ordering::Relaxed)).filter(|&t| t != NO_TID);
        enabled
            .iter()
            .position(|e| Some(e.tid) == want)
            .ok_or_else(|| Divergence {
                step: 0,
                reason: format!("the journal granted {want:?}, which is not enabled"),
            })
    }
    fn executed(&mut self, _ev: &Event) {}
}

/// What a journal tells of a run that ended without its end message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rebuilt {
    pub schedule: Vec<Step>,
    pub steps: u64,
    /// The thread that had the turn when the process died: the only one not waiting for a
    /// grant if there is one, else the last granted (the socket transport's rule), by name.
    pub suspect: Option<String>,
}

/// The schedule, step count and last running thread of a run from its journal, for a run
/// that ended without its end message. `seed`, `max_steps` and `timeouts_any` as the
/// program's coordinator had them. A journal that stops making sense gives the schedule up
/// to that point.
pub fn rebuild(log: &[LogRec], seed: u64, max_steps: u64, timeouts_any: bool) -> Rebuilt {
    let next = Arc::new(AtomicU32::new(NO_TID));
    let mut follow = Follow { next: next.clone() };
    let mut coord = Coordinator::new(&mut follow, seed, max_steps);
    if timeouts_any {
        coord
            .state_mut()
            .set_timeout_policy(crate::state::clock::TimeoutPolicy::Any);
    }
    let mut last = None;
    // Records one at a time, each decision announced to the follower first.
    for rec in log {
        if let LogRec::Decide { grant } = rec {
            next.store(grant.unwrap_or(NO_TID), Ordering::Relaxed);
            last = grant.or(last);
        }
        if super::inproc::replay_log(&mut coord, std::slice::from_ref(rec)).is_err() {
            break;
        }
    }
    let suspect = {
        let st = coord.state();
        let mut running = st.running();
        match (running.next(), running.next()) {
            (Some(t), None) => Some(t),
            _ => last,
        }
        .filter(|&t| (t as usize) < st.num_threads())
        .map(|t| st.name(t).to_string())
    };
    let steps = coord.steps();
    Rebuilt {
        schedule: coord.finish(),
        steps,
        suspect,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::Decision;
    use crate::event::{MemOrder, MutexKind, Op, Tid};

    fn every_kind() -> Vec<LogRec> {
        vec![
            LogRec::Post {
                t: 3,
                op: Op::Lock {
                    m: 0x4040a0,
                    kind: MutexKind::Normal,
                },
                pc: 0x401234,
            },
            LogRec::Post {
                t: 1,
                op: Op::AtomicRmw {
                    addr: 0x10,
                    size: 8,
                    mo: MemOrder::AcqRel,
                    fail: Some(MemOrder::Acquire),
                },
                pc: 0,
            },
            LogRec::SemInit { s: 0x50, value: 2 },
            LogRec::BarrierInit { b: 0x60, count: 3 },
            LogRec::OnceInit {
                o: 0x70,
                done: false,
            },
            LogRec::OnceInit {
                o: 0x78,
                done: true,
            },
            LogRec::MutexInit { m: 0x80 },
            LogRec::Outside { t: 2 },
            LogRec::Interrupted { t: 1 },
            LogRec::Tick,
            LogRec::AsleepTick { ns: 1_234_567 },
            LogRec::KernelWait {
                t: 2,
                ns: 1_500_000_000,
            },
            LogRec::Finished { t: 4 },
            LogRec::Decide { grant: Some(0) },
            LogRec::Decide { grant: None },
            LogRec::Observed {
                t: 1,
                write: true,
                addr: 0x7000,
                size: 4,
                pc: 0x401000,
            },
        ]
    }

    #[test]
    fn every_record_kind_round_trips_and_garbage_is_refused() {
        for r in every_kind() {
            assert_eq!(decode(&encode(&r)), Ok(r.clone()), "{r:?}");
        }
        let mut bad = encode(&LogRec::Outside { t: 1 });
        bad[0] = 99;
        assert!(decode(&bad).is_err());
    }

    #[test]
    fn a_full_page_keeps_what_fits_and_says_it_overflowed() {
        let mut page = vec![0u8; HEADER_LEN + 3 * RECORD_LEN + 7];
        assert!(!is_journal(&page));
        assert!(records(&page).is_err());
        reset(&mut page);
        let recs = every_kind();
        let kept: Vec<bool> = recs.iter().map(|r| append(&mut page, r)).collect();
        let expected: Vec<bool> = (0..recs.len()).map(|i| i < 3).collect();
        assert_eq!(kept, expected);
        assert!(overflowed(&page));
        assert_eq!(written(&page), 3);
        assert_eq!(records(&page).unwrap(), recs[..3]);
        reset(&mut page);
        assert!(!overflowed(&page));
        assert_eq!(records(&page).unwrap(), []);
    }

    /// The main thread creates a second; each then locks, writes, unlocks and exits, decided
    /// by a random walk with `seed`; every record journalled. Returns the page and the
    /// coordinator's schedule and steps.
    fn journalled_run(seed: u64) -> (Vec<u8>, Vec<Step>, u64) {
        let m = 0x40;
        let body = [
            Op::Lock {
                m,
                kind: MutexKind::Normal,
            },
            Op::Write { addr: 8, size: 4 },
            Op::Unlock {
                m,
                kind: MutexKind::Normal,
            },
            Op::Exit,
        ];
        let ops: [Vec<Op>; 2] = [
            std::iter::once(Op::Create).chain(body).collect(),
            body.to_vec(),
        ];
        let mut page = vec![0u8; 1 << 16];
        reset(&mut page);
        let mut rw = crate::strategy::rw::RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, seed, 100);
        let post = |co: &mut Coordinator<'_>, page: &mut Vec<u8>, t: Tid, op: Op| {
            co.post(t, op).unwrap();
            append(page, &LogRec::Post { t, op, pc: 0 });
        };
        post(&mut co, &mut page, 0, Op::Create);
        let mut next = [0usize; 2];
        loop {
            let grant = match co.decide() {
                Decision::Grant { tid, .. } => Some(tid),
                _ => None,
            };
            append(&mut page, &LogRec::Decide { grant });
            let Some(t) = grant else { break };
            if t == 0 && next[0] == 0 {
                post(&mut co, &mut page, 1, ops[1][0]);
            }
            next[t as usize] += 1;
            if let Some(&op) = ops[t as usize].get(next[t as usize]) {
                post(&mut co, &mut page, t, op);
            }
        }
        let steps = co.steps();
        (page, co.finish(), steps)
    }

    #[test]
    fn a_journal_rebuilds_the_schedule_and_a_cut_one_its_prefix() {
        let mut preempted = 0;
        for seed in 0..30 {
            let (page, schedule, steps) = journalled_run(seed);
            let log = records(&page).unwrap();
            let r = rebuild(&log, seed, 100, false);
            assert_eq!((&r.schedule, r.steps), (&schedule, steps), "seed {seed}");
            // Every thread ended: the suspect is the last one granted.
            let last = schedule.last().map(|s| s.thread.to_string());
            assert_eq!(r.suspect, last);
            let got = r.schedule;
            preempted += got.iter().filter(|s| s.preempt).count();
            // A process killed half-way leaves a journal cut anywhere: its schedule is a
            // prefix of the whole one, as long as the decisions it holds.
            for cut in 0..log.len() {
                let decided = log[..cut]
                    .iter()
                    .filter(|r| matches!(r, LogRec::Decide { grant: Some(_) }))
                    .count();
                let r = rebuild(&log[..cut], seed, 100, false);
                assert_eq!(r.schedule, schedule[..decided], "seed {seed}, cut {cut}");
                assert_eq!(r.steps, decided as u64);
                assert!(decided == 0 || r.suspect.is_some());
            }
        }
        // The runs were not all the same sequential schedule.
        assert!(preempted > 0);
    }
}
