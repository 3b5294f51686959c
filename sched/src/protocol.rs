//! The wire protocol between libpos (one connection per program thread) and the coordinator.
//!
//! Fixed-size little-endian frames keep a scheduling step to one small write and one small
//! read each way. A thread sends [`Msg`] frames (32 bytes, optionally followed by a text
//! payload) and, after a [`Msg::Post`], blocks reading one [`Reply`] (16 bytes).

use crate::event::{MemOrder, MutexKind, Op, Tid};
use std::fmt;

pub mod fork;
pub mod inproc;
pub mod journal;

/// Environment variable carrying the coordinator's socket path to libpos.
pub const ENV_SOCKET: &str = "POSCHECK_SOCKET";

/// What libpos renames [`ENV_SOCKET`] to, in place (the same length: no allocation, the
/// program's memory laid out as before): the program's children do not take themselves for
/// controlled runs, and every process descended from the run, even one that left its
/// process group and exec'd, still names the run's socket, which is how the runner finds and
/// kills those that would outlive a spawned run.
pub const ENV_RUN_MARK: &str = "POSCHECK_RUNDIR";

/// A symbol that libpos.so exports for this protocol revision: the runner refuses a
/// libpos.so without it (an old build next to a new `poscheck` misbehaves in obscure ways).
/// Bump it, and the function of that name in `preload/src/lib.rs`, whenever the protocol
/// changes.
pub const LIBPOS_MARKER: &str =
    "pos_protocol_futex_cancel_vtime_fork_observe_morder_at_inproc_journal_once_robust_oncedone_mutexinit_kwait_leave_14";

pub const MSG_LEN: usize = 32;
pub const REPLY_LEN: usize = 16;
/// Longest text payload accepted (assertion messages are truncated to this).
pub const MAX_TEXT: usize = 4096;

/// A message from a program thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// First message on every connection: who this thread is (0 for main, else the child id
    /// the create grant returned) and the process id; `ktid`, the kernel's id of the thread
    /// (0: not sent), and `fd`, its connection's descriptor in the program (-1: not sent),
    /// let the coordinator see in `/proc` whether a granted thread is blocked in the kernel
    /// outside control. The two ride in fields older frames left zero (`code` and `c`).
    Hello {
        tid: Tid,
        pid: u32,
        ktid: u32,
        fd: i32,
    },
    /// The thread is about to perform `op` and waits for a [`Reply`].
    Post(Op),
    /// `sem_init`: no reply, not a scheduling point.
    SemInit { s: u64, value: u32 },
    /// `pthread_barrier_init`: no reply, not a scheduling point.
    BarrierInit { b: u64, count: u32 },
    /// `pthread_once` on a control that reads as never run (`PTHREAD_ONCE_INIT`), or with
    /// `done` as completed: no reply, not a scheduling point. The memory may hold a new
    /// control where a finished one was (a `std::promise`'s once flag lives in a
    /// heap-allocated state); a completed one may have run before libpos took control (a
    /// library's constructor), and the coordinator then has no record of it.
    OnceInit { o: u64, done: bool },
    /// `pthread_mutex_init`, `pthread_rwlock_init` or `pthread_spin_init`: no reply, not a
    /// scheduling point. The lock starts afresh, whatever the model knew of the memory (an
    /// owner died holding it, it was made not recoverable, a fork child re-initialises what
    /// its parent held, ...).
    MutexInit { m: u64 },
    /// `__assert_fail` is about to abort: where and what.
    Assert { text: String },
    /// A fatal signal in this thread at `pc` (sent from libpos's signal handler).
    Crash { signal: i32, pc: u64 },
    /// `auto` points: a plain access that was *not* a scheduling point, observed for the
    /// coordinator's race detector (no reply). The sending thread is the only one running
    /// (serialised scheduling), so frames arrive in execution order before its next post.
    Observed {
        write: bool,
        addr: u64,
        size: u32,
        pc: u64,
    },
    /// The sending thread's next [`Msg::Post`] is made at `pc` (the return address of the
    /// call that reached the scheduling point); no reply. Sent only when the runner asks for
    /// caller pcs ([`ENV_CALLER_PCS`]), in the same write as the post.
    At { pc: u64 },
    /// A run decided in the program ([`inproc`]) is over: the verdict and the schedule (JSON
    /// of an [`inproc::End`] as the payload). Sent once, on the main thread's connection.
    End { json: Vec<u8> },
    /// A run decided in the program is still making progress: `steps` so far. Sent on the
    /// main thread's connection at most about once a second, so that the runner can tell a
    /// long run from a stuck one without hearing every step.
    Alive { steps: u64 },
    /// A run decided in the program is over after `steps` steps, and its end report (the
    /// schedule of every step) is being made: that takes time in proportion to the steps
    /// (about 10 s for 8 million), during which no [`Msg::Alive`] comes
    /// ([`concluding_grace`]). Sent on the main thread's connection just before
    /// [`Msg::End`], by runs long enough for the wait to matter (libpos's
    /// `CONCLUDING_AFTER` steps).
    Concluding { steps: u64 },
    /// The sending thread, blocked in a wait of the model (its post waits for a reply), got
    /// a signal from outside the run (a child's `SIGCHLD`, a `kill` from another process)
    /// whose handler libpos runs once the thread is granted: the coordinator ends the wait
    /// for it when every thread is blocked
    /// ([`crate::state::State::interrupt_from_outside`]). Sent from the signal handler; no
    /// reply.
    Interrupted,
    /// The sending thread, running (granted) and about to wait in the kernel outside control,
    /// will be back within `ns` nanoseconds of real time: its wait has a timeout (`poll`,
    /// `recv` on a socket with `SO_RCVTIMEO`, `sigtimedwait`, ...). No reply. Until then a
    /// silence is no hang: before 2026-11-28 a 5 s receive timeout that the program relied on
    /// was a hang after the 2 s step timeout whenever nothing else could run.
    KernelWait { ns: u64 },
    /// The sending thread, running (granted), is about to wait outside control in a call
    /// known to spin without a scheduling point (libgomp's doacross wait): set it aside now,
    /// as a spin-wait would be after a quarter of the step timeout. No reply.
    Leaving,
}

/// Environment variable telling libpos whether to send a [`Msg::At`] before each post
/// (`1`) or not (`0`). The runner always sets it, with a value of one character, so that the
/// program's initial stack (where the environment lives, and with it the addresses of
/// stack-allocated objects) is the same with and without caller pcs.
pub const ENV_CALLER_PCS: &str = "POSCHECK_CALLER_PCS";

/// Environment variable: `1` has libpos keep each run's process on the CPU it starts on
/// (one thread runs at a time; the kernel would wake each granted thread on another core),
/// hiding that from the program; `0` leaves it free (`--no-pin`). Always set by the runner,
/// with one character, for the same reason as [`ENV_CALLER_PCS`].
pub const ENV_PIN: &str = "POSCHECK_PIN";

/// Set to `1` by the runner for a program built with AddressSanitizer or LeakSanitizer:
/// libpos then has LeakSanitizer ignore the blocks it allocates (its seats, the run's
/// bookkeeping), which live on in memory the leak checker does not scan and were reported
/// as the program's leaks, failing every run.
pub const ENV_LSAN: &str = "POSCHECK_LSAN";

/// Set by the runner for an executable that has a sanitizer runtime linked in (clang's
/// `-fsanitize=address` or `thread`): `LO-HI`, hexadecimal offsets from the start of the
/// executable's first mapping, the span of the runtime's code. libpos does not trap the raw
/// futex calls made there (the runtime's own locks; see `preload/src/trap.rs`).
pub const ENV_UNTRAPPED: &str = "POSCHECK_UNTRAPPED";

/// The coordinator's answer to a [`Msg::Post`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Return code for the operation (see [`crate::state::code`]), or [`Reply::ABORT`].
    pub result: i32,
    /// Extra value: the child's thread id for a create; for every other grant the virtual
    /// time after the step (ns since the run's start, see [`crate::state::clock`]), so that
    /// libpos's clock reads follow the coordinator's clock at no extra cost.
    pub value: u64,
}

impl Reply {
    /// The run is over: the thread must stop (the coordinator will kill the process).
    pub const ABORT: i32 = i32::MIN;

    /// The reply to a grant ([`crate::Decision::Grant`]): its result, and the child's id for a
    /// create or else the virtual time after the step.
    pub fn grant(result: i32, child: Option<Tid>, now: u64) -> Reply {
        Reply {
            result,
            value: child.map_or(now, u64::from),
        }
    }

    pub fn encode(&self) -> [u8; REPLY_LEN] {
        let mut b = [0u8; REPLY_LEN];
        b[0..4].copy_from_slice(&self.result.to_le_bytes());
        b[8..16].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    /// Encode with the *debug stop* mark of scheduling step `step` (`poscheck debug`): the
    /// thread that receives it calls libpos's `pos_debug_stop(step)` before it returns to the
    /// program, where gdb has a breakpoint. The mark (`step + 1`) rides in bytes 4..8, zero in
    /// every other reply.
    pub fn encode_stop(&self, step: u64) -> [u8; REPLY_LEN] {
        let mut b = self.encode();
        let mark = u32::try_from(step + 1).unwrap_or(u32::MAX);
        b[4..8].copy_from_slice(&mark.to_le_bytes());
        b
    }

    /// The step of an encoded reply's debug stop mark ([`Reply::encode_stop`]), if any.
    pub fn stop_step(b: &[u8; REPLY_LEN]) -> Option<u64> {
        let mark = u32::from_le_bytes(b[4..8].try_into().expect("4 bytes"));
        (mark != 0).then(|| u64::from(mark) - 1)
    }

    pub fn decode(b: &[u8; REPLY_LEN]) -> Reply {
        Reply {
            result: i32::from_le_bytes(b[0..4].try_into().expect("4 bytes")),
            value: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        }
    }
}

/// A frame that does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

const K_HELLO: u32 = 1;
const K_POST: u32 = 2;
const K_SEM_INIT: u32 = 3;
const K_BARRIER_INIT: u32 = 4;
const K_ASSERT: u32 = 5;
const K_CRASH: u32 = 6;
const K_ONCE_INIT: u32 = 7;
const K_MUTEX_INIT: u32 = 8;
/// Message kind of [`Msg::Observed`] (in this feature's wire range, 80-84).
const K_OBSERVED: u32 = 80;
/// Message kind of [`Msg::At`].
const K_AT: u32 = 81;
const K_END: u32 = 82;
const K_ALIVE: u32 = 83;
const K_INTERRUPTED: u32 = 84;
const K_KERNEL_WAIT: u32 = 85;
const K_LEAVING: u32 = 86;
const K_CONCLUDING: u32 = 87;

/// Bit of a mutex kind's code for a robust mutex (glibc's `PTHREAD_MUTEX_ROBUST_NORMAL_NP`).
const KIND_ROBUST: u64 = 16;

fn kind_code(k: MutexKind) -> u64 {
    let robust = if k.robust() { KIND_ROBUST } else { 0 };
    robust
        | match k.base() {
            MutexKind::Recursive => 1,
            MutexKind::ErrorCheck => 2,
            _ => 0,
        }
}

fn kind_of(c: u64) -> Result<MutexKind, ProtocolError> {
    let base = match c & !KIND_ROBUST {
        0 => MutexKind::Normal,
        1 => MutexKind::Recursive,
        2 => MutexKind::ErrorCheck,
        _ => return Err(ProtocolError(format!("bad mutex kind {c}"))),
    };
    Ok(if c & KIND_ROBUST != 0 {
        base.made_robust()
    } else {
        base
    })
}

/// Op ↔ (code, a, b, c).
fn op_fields(op: &Op) -> (u32, u64, u64, u64) {
    use Op::*;
    match *op {
        Start => (1, 0, 0, 0),
        Exit => (2, 0, 0, 0),
        Create => (3, 0, 0, 0),
        Join { target } => (4, target as u64, 0, 0),
        Detach { target } => (5, target as u64, 0, 0),
        Lock { m, kind } => (6, m, 0, kind_code(kind)),
        TryLock { m, kind } => (7, m, 0, kind_code(kind)),
        TimedLock { m, kind, deadline } => (8, m, deadline, kind_code(kind)),
        Unlock { m, kind } => (9, m, 0, kind_code(kind)),
        CondWait { c, m } => (10, c, m, 0),
        CondWake { c, m, deadline } => (11, c, m, deadline),
        CondSignal { c } => (12, c, 0, 0),
        CondBroadcast { c } => (13, c, 0, 0),
        RdLock { l } => (14, l, 0, 0),
        WrLock { l } => (15, l, 0, 0),
        TryRdLock { l } => (16, l, 0, 0),
        TryWrLock { l } => (17, l, 0, 0),
        TimedRdLock { l, deadline } => (18, l, deadline, 0),
        TimedWrLock { l, deadline } => (19, l, deadline, 0),
        RwUnlock { l } => (20, l, 0, 0),
        SemWait { s } => (21, s, 0, 0),
        SemTryWait { s } => (22, s, 0, 0),
        SemTimedWait { s, deadline } => (23, s, deadline, 0),
        SemPost { s } => (24, s, 0, 0),
        BarrierWait { b } => (25, b, 0, 0),
        BarrierLeave { b } => (26, b, 0, 0),
        OnceBegin { o } => (27, o, 0, 0),
        OnceEnd { o } => (28, o, 0, 0),
        Yield => (29, 0, 0, 0),
        Sleep => (30, 0, 0, 0),
        Read { addr, size } => (31, addr, 0, size as u64),
        Write { addr, size } => (32, addr, 0, size as u64),
        AtomicLoad { addr, size, mo } => (33, addr, 0, atomic_c(size, mo, None)),
        AtomicStore { addr, size, mo } => (34, addr, 0, atomic_c(size, mo, None)),
        AtomicRmw {
            addr,
            size,
            mo,
            fail,
        } => (35, addr, 0, atomic_c(size, mo, fail)),
        ProcessExit { code } => (36, code as i64 as u64, 0, 0),
        SleepUntil { deadline } => (53, deadline, 0, 0),
        TimedJoin { target, deadline } => (54, target as u64, deadline, 0),
        TryJoin { target } => (55, target as u64, 0, 0),
        FutexWait {
            addr,
            bitset,
            deadline,
        } => (37, addr, deadline, bitset as u64),
        FutexWake { addr, n, bitset } => (38, addr, n as u64, bitset as u64),
        // The two counts share the third field: n1 in the low 32 bits, n2 in the high ones.
        FutexRequeue {
            addr,
            addr2,
            n1,
            n2,
        } => (39, addr, addr2, pack(n1, n2)),
        FutexRequeued {
            addr,
            addr2,
            n1,
            n2,
        } => (40, addr, addr2, pack(n1, n2)),
        Cancel { target } => (45, target as u64, 0, 0),
        TestCancel => (46, 0, 0, 0),
        SetCancelState { enabled } => (47, enabled as u64, 0, 0),
        SetCancelType { asynchronous } => (61, asynchronous as u64, 0, 0),
        Fork => (69, 0, 0, 0),
        WaitProc { target } => (70, target as u64, 0, 0),
        Exec => (71, 0, 0, 0),
        ForkFailed { target } => (72, target as u64, 0, 0),
        Consistent { m } => (73, m, 0, 0),
        Kill { target } => (74, target as u64, 0, 0),
        Handler => (75, 0, 0, 0),
    }
}

/// The `c` field of an atomic operation: the access size in bits 0..32, then the memory
/// order plus one in bits 32..40 and a compare-exchange's failure order plus one in bits
/// 40..48 (0: none). A frame whose order byte is 0 (libpos before orders were sent) decodes
/// as `seq_cst`, what libpos performs.
fn atomic_c(size: u32, mo: MemOrder, fail: Option<MemOrder>) -> u64 {
    let byte = |o: MemOrder| u64::from(o.tsan()) + 1;
    u64::from(size) | byte(mo) << 32 | fail.map_or(0, byte) << 40
}

/// Inverse of [`atomic_c`]: size, order and failure order.
fn atomic_fields(c: u64) -> Result<(u32, MemOrder, Option<MemOrder>), ProtocolError> {
    let order = |b: u64| -> Result<Option<MemOrder>, ProtocolError> {
        match b {
            0 => Ok(None),
            _ => MemOrder::ALL
                .get(b as usize - 1)
                .copied()
                .map(Some)
                .ok_or_else(|| ProtocolError(format!("bad memory order {}", b - 1))),
        }
    };
    if c >> 48 != 0 {
        return Err(ProtocolError(format!("bad atomic access field {c:#x}")));
    }
    let mo = order((c >> 32) & 0xff)?.unwrap_or_default();
    Ok((c as u32, mo, order((c >> 40) & 0xff)?))
}

/// Two counts in one 64-bit field (a requeue's wake and move counts).
fn pack(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

fn op_from(code: u32, a: u64, b: u64, c: u64) -> Result<Op, ProtocolError> {
    use Op::*;
    let tid = |x: u64| -> Result<Tid, ProtocolError> {
        Tid::try_from(x).map_err(|_| ProtocolError(format!("bad thread id {x}")))
    };
    let word = |x: u64| -> Result<u32, ProtocolError> {
        u32::try_from(x).map_err(|_| ProtocolError(format!("bad 32-bit field {x}")))
    };
    let size = |x: u64| -> Result<u32, ProtocolError> {
        u32::try_from(x).map_err(|_| ProtocolError(format!("bad access size {x}")))
    };
    Ok(match code {
        1 => Start,
        2 => Exit,
        3 => Create,
        4 => Join { target: tid(a)? },
        5 => Detach { target: tid(a)? },
        6 => Lock {
            m: a,
            kind: kind_of(c)?,
        },
        7 => TryLock {
            m: a,
            kind: kind_of(c)?,
        },
        8 => TimedLock {
            m: a,
            kind: kind_of(c)?,
            deadline: b,
        },
        9 => Unlock {
            m: a,
            kind: kind_of(c)?,
        },
        10 => CondWait { c: a, m: b },
        11 => CondWake {
            c: a,
            m: b,
            deadline: c,
        },
        12 => CondSignal { c: a },
        13 => CondBroadcast { c: a },
        14 => RdLock { l: a },
        15 => WrLock { l: a },
        16 => TryRdLock { l: a },
        17 => TryWrLock { l: a },
        18 => TimedRdLock { l: a, deadline: b },
        19 => TimedWrLock { l: a, deadline: b },
        20 => RwUnlock { l: a },
        21 => SemWait { s: a },
        22 => SemTryWait { s: a },
        23 => SemTimedWait { s: a, deadline: b },
        24 => SemPost { s: a },
        25 => BarrierWait { b: a },
        26 => BarrierLeave { b: a },
        27 => OnceBegin { o: a },
        28 => OnceEnd { o: a },
        29 => Yield,
        30 => Sleep,
        31 => Read {
            addr: a,
            size: size(c)?,
        },
        32 => Write {
            addr: a,
            size: size(c)?,
        },
        33 | 34 => {
            let (size, mo, fail) = atomic_fields(c)?;
            if fail.is_some() {
                return Err(ProtocolError(format!(
                    "a failure order on a plain atomic {}",
                    if code == 33 { "load" } else { "store" }
                )));
            }
            if code == 33 {
                AtomicLoad { addr: a, size, mo }
            } else {
                AtomicStore { addr: a, size, mo }
            }
        }
        35 => {
            let (size, mo, fail) = atomic_fields(c)?;
            AtomicRmw {
                addr: a,
                size,
                mo,
                fail,
            }
        }
        36 => ProcessExit {
            code: a as i64 as i32,
        },
        53 => SleepUntil { deadline: a },
        54 => TimedJoin {
            target: tid(a)?,
            deadline: b,
        },
        55 => TryJoin { target: tid(a)? },
        37 => FutexWait {
            addr: a,
            deadline: b,
            bitset: word(c)?,
        },
        38 => FutexWake {
            addr: a,
            n: word(b)?,
            bitset: word(c)?,
        },
        39 => FutexRequeue {
            addr: a,
            addr2: b,
            n1: c as u32,
            n2: (c >> 32) as u32,
        },
        40 => FutexRequeued {
            addr: a,
            addr2: b,
            n1: c as u32,
            n2: (c >> 32) as u32,
        },
        45 => Cancel { target: tid(a)? },
        46 => TestCancel,
        47 => SetCancelState { enabled: a != 0 },
        61 => SetCancelType {
            asynchronous: a != 0,
        },
        69 => Fork,
        70 => WaitProc { target: tid(a)? },
        71 => Exec,
        72 => ForkFailed { target: tid(a)? },
        73 => Consistent { m: a },
        74 => Kill { target: tid(a)? },
        75 => Handler,
        _ => return Err(ProtocolError(format!("unknown operation code {code}"))),
    })
}

fn frame(kind: u32, code: u32, a: u64, b: u64, c: u64) -> [u8; MSG_LEN] {
    let mut f = [0u8; MSG_LEN];
    f[0..4].copy_from_slice(&kind.to_le_bytes());
    f[4..8].copy_from_slice(&code.to_le_bytes());
    f[8..16].copy_from_slice(&a.to_le_bytes());
    f[16..24].copy_from_slice(&b.to_le_bytes());
    f[24..32].copy_from_slice(&c.to_le_bytes());
    f
}

impl Msg {
    /// [`Msg::encode`]'s header and payload together, for one write.
    pub fn encode_whole(&self) -> Vec<u8> {
        let (head, payload) = self.encode();
        let mut b = Vec::with_capacity(MSG_LEN + payload.len());
        b.extend_from_slice(&head);
        b.extend_from_slice(payload);
        b
    }

    /// Encode into a fixed header plus an optional text payload.
    pub fn encode(&self) -> ([u8; MSG_LEN], &[u8]) {
        match self {
            Msg::Hello { tid, pid, ktid, fd } => {
                let fd = (*fd as i64 + 1).max(0) as u64;
                (frame(K_HELLO, *ktid, *tid as u64, *pid as u64, fd), &[])
            }
            Msg::Post(op) => {
                let (code, a, b, c) = op_fields(op);
                (frame(K_POST, code, a, b, c), &[])
            }
            Msg::SemInit { s, value } => (frame(K_SEM_INIT, 0, *s, *value as u64, 0), &[]),
            Msg::BarrierInit { b, count } => (frame(K_BARRIER_INIT, 0, *b, *count as u64, 0), &[]),
            Msg::OnceInit { o, done } => (frame(K_ONCE_INIT, 0, *o, *done as u64, 0), &[]),
            Msg::MutexInit { m } => (frame(K_MUTEX_INIT, 0, *m, 0, 0), &[]),
            Msg::Assert { text } => {
                let bytes = &text.as_bytes()[..text.len().min(MAX_TEXT)];
                (frame(K_ASSERT, 0, 0, 0, bytes.len() as u64), bytes)
            }
            Msg::Crash { signal, pc } => (frame(K_CRASH, 0, *signal as i64 as u64, *pc, 0), &[]),
            Msg::Observed {
                write,
                addr,
                size,
                pc,
            } => (Msg::encode_observed(*write, *addr, *size, *pc), &[]),
            Msg::At { pc } => (Msg::encode_at(*pc), &[]),
            Msg::End { json } => (frame(K_END, 0, 0, 0, json.len() as u64), json),
            Msg::Alive { steps } => (frame(K_ALIVE, 0, *steps, 0, 0), &[]),
            Msg::Interrupted => (frame(K_INTERRUPTED, 0, 0, 0, 0), &[]),
            Msg::KernelWait { ns } => (frame(K_KERNEL_WAIT, 0, *ns, 0, 0), &[]),
            Msg::Leaving => (frame(K_LEAVING, 0, 0, 0, 0), &[]),
            Msg::Concluding { steps } => (frame(K_CONCLUDING, 0, *steps, 0, 0), &[]),
        }
    }

    /// Encode a [`Msg::At`] frame (allocation-free, for libpos's posts).
    pub fn encode_at(pc: u64) -> [u8; MSG_LEN] {
        frame(K_AT, 0, pc, 0, 0)
    }

    /// Encode a [`Msg::Post`] of a memory access (`Read`, `Write`, `Atomic*`) that also
    /// carries `pc`, the instrumented instruction's address, in the frame's `b` field (unused
    /// by those operations). It decodes as the plain `Post(op)`; [`frame_pc`] reads the pc
    /// back (for the race detector of the `races` point mode). Other operations carry none.
    pub fn encode_post_at(op: &Op, pc: u64) -> [u8; MSG_LEN] {
        let (code, a, b, c) = op_fields(op);
        let b = if op.is_memory() { pc } else { b };
        frame(K_POST, code, a, b, c)
    }

    /// Encode a [`Msg::Observed`] frame (allocation-free, for libpos's access callbacks).
    pub fn encode_observed(write: bool, addr: u64, size: u32, pc: u64) -> [u8; MSG_LEN] {
        frame(K_OBSERVED, u32::from(write), addr, u64::from(size), pc)
    }

    /// Decode a header. `Ok(Err(len))` means a payload of `len` bytes follows; pass it with
    /// the header to [`Msg::with_payload`].
    pub fn decode(f: &[u8; MSG_LEN]) -> Result<Result<Msg, usize>, ProtocolError> {
        let u32_at = |i: usize| u32::from_le_bytes(f[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(f[i..i + 8].try_into().expect("8 bytes"));
        let (kind, code, a, b, c) = (u32_at(0), u32_at(4), u64_at(8), u64_at(16), u64_at(24));
        let narrow = |x: u64, what: &str| {
            u32::try_from(x).map_err(|_| ProtocolError(format!("bad {what} {x}")))
        };
        Ok(Ok(match kind {
            K_HELLO => Msg::Hello {
                tid: narrow(a, "thread id")?,
                pid: narrow(b, "pid")?,
                ktid: code,
                fd: i32::try_from(c).map_err(|_| ProtocolError(format!("bad descriptor {c}")))? - 1,
            },
            K_POST => Msg::Post(op_from(code, a, b, c)?),
            K_SEM_INIT => Msg::SemInit {
                s: a,
                value: narrow(b, "semaphore value")?,
            },
            K_BARRIER_INIT => Msg::BarrierInit {
                b: a,
                count: narrow(b, "barrier count")?,
            },
            K_ONCE_INIT => Msg::OnceInit { o: a, done: b != 0 },
            K_MUTEX_INIT => Msg::MutexInit { m: a },
            K_ASSERT => {
                if c as usize > MAX_TEXT {
                    return Err(ProtocolError(format!("assert text of {c} bytes")));
                }
                return Ok(Err(c as usize));
            }
            K_CRASH => Msg::Crash {
                signal: a as i64 as i32,
                pc: b,
            },
            K_OBSERVED => Msg::Observed {
                write: code != 0,
                addr: a,
                size: narrow(b, "access size")?,
                pc: c,
            },
            K_AT => Msg::At { pc: a },
            K_END => {
                if c as usize > inproc::MAX_JSON {
                    return Err(ProtocolError(format!("end report of {c} bytes")));
                }
                return Ok(Err(c as usize));
            }
            K_ALIVE => Msg::Alive { steps: a },
            K_INTERRUPTED => Msg::Interrupted,
            K_KERNEL_WAIT => Msg::KernelWait { ns: a },
            K_LEAVING => Msg::Leaving,
            K_CONCLUDING => Msg::Concluding { steps: a },
            _ => return Err(ProtocolError(format!("unknown message kind {kind}"))),
        }))
    }

    /// Complete a message whose header `head` announced a payload.
    pub fn with_payload(head: &[u8; MSG_LEN], payload: &[u8]) -> Msg {
        if u32::from_le_bytes(head[0..4].try_into().expect("4 bytes")) == K_END {
            return Msg::End {
                json: payload.to_vec(),
            };
        }
        Msg::Assert {
            text: String::from_utf8_lossy(payload).into_owned(),
        }
    }
}

/// The pc carried by a `Post` frame of a memory access (see [`Msg::encode_post_at`]),
/// `None` for any other frame or when the sender attached none.
pub fn frame_pc(f: &[u8; MSG_LEN]) -> Option<u64> {
    let u32_at = |i: usize| u32::from_le_bytes(f[i..i + 4].try_into().expect("4 bytes"));
    let pc = u64::from_le_bytes(f[16..24].try_into().expect("8 bytes"));
    let memory = u32_at(0) == K_POST && (31..=35).contains(&u32_at(4));
    (memory && pc != 0).then_some(pc)
}

/// How long the runner waits for the end report of a run that said it is
/// [`Msg::Concluding`] after `steps` steps: a minute, plus 20 µs a step (the report of 8
/// million steps took about 10 s to make, send and read on a loaded machine). Before
/// 2026-11-28 it waited the step timeout plus 5 s, and such a long correct run was a
/// `hang` (probe 22).
pub fn concluding_grace(steps: u64) -> std::time::Duration {
    std::time::Duration::from_secs(60)
        + std::time::Duration::from_micros(20) * steps.min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_round_trips() {
        use Op::*;
        let k = MutexKind::Recursive;
        let ops = [
            Start,
            Exit,
            Create,
            Join { target: 3 },
            Detach { target: 4 },
            Lock { m: 1, kind: k },
            TryLock {
                m: 2,
                kind: MutexKind::ErrorCheck,
            },
            TimedLock {
                m: 3,
                kind: MutexKind::Normal,
                deadline: 5_000_000_000,
            },
            Unlock { m: 4, kind: k },
            CondWait { c: 5, m: 6 },
            CondWake {
                c: 5,
                m: 6,
                deadline: 7,
            },
            CondWake {
                c: 5,
                m: 6,
                deadline: crate::event::NO_DEADLINE,
            },
            CondSignal { c: 7 },
            CondBroadcast { c: 8 },
            RdLock { l: 9 },
            WrLock { l: 10 },
            TryRdLock { l: 11 },
            TryWrLock { l: 12 },
            TimedRdLock { l: 13, deadline: 1 },
            TimedWrLock { l: 14, deadline: 2 },
            RwUnlock { l: 15 },
            SemWait { s: 16 },
            SemTryWait { s: 17 },
            SemTimedWait { s: 18, deadline: 3 },
            SemPost { s: 19 },
            BarrierWait { b: 20 },
            BarrierLeave { b: 21 },
            OnceBegin { o: 22 },
            OnceEnd { o: 23 },
            Yield,
            Sleep,
            Read { addr: 24, size: 1 },
            Write { addr: 25, size: 8 },
            AtomicLoad {
                addr: 26,
                size: 4,
                mo: MemOrder::Acquire,
            },
            AtomicStore {
                addr: 27,
                size: 2,
                mo: MemOrder::Release,
            },
            AtomicRmw {
                addr: 28,
                size: 16,
                mo: MemOrder::SeqCst,
                fail: None,
            },
            ProcessExit { code: -1 },
            SleepUntil { deadline: 1_000 },
            TimedJoin {
                target: 2,
                deadline: 9,
            },
            TryJoin { target: 3 },
            FutexWait {
                addr: 0x4000,
                bitset: u32::MAX,
                deadline: crate::event::NO_DEADLINE,
            },
            FutexWait {
                addr: 0x4004,
                bitset: 5,
                deadline: 77,
            },
            FutexWake {
                addr: 0x4000,
                n: i32::MAX as u32,
                bitset: 3,
            },
            FutexRequeue {
                addr: 0x4000,
                addr2: 0x4008,
                n1: 1,
                n2: i32::MAX as u32,
            },
            FutexRequeued {
                addr: 0x4000,
                addr2: 0x4008,
                n1: u32::MAX,
                n2: 7,
            },
            Cancel { target: 3 },
            Kill { target: 2 },
            Handler,
            TestCancel,
            SetCancelState { enabled: false },
            SetCancelState { enabled: true },
            SetCancelType { asynchronous: true },
            SetCancelType {
                asynchronous: false,
            },
            Fork,
            WaitProc { target: 4 },
            WaitProc {
                target: crate::event::ANY_PROCESS,
            },
            Exec,
            ForkFailed { target: 5 },
            Lock {
                m: 29,
                kind: MutexKind::RobustNormal,
            },
            TryLock {
                m: 30,
                kind: MutexKind::RobustRecursive,
            },
            Unlock {
                m: 31 | crate::event::SHARED_BIT,
                kind: MutexKind::RobustErrorCheck,
            },
            Consistent { m: 32 },
        ];
        for op in ops {
            let msg = Msg::Post(op);
            let (h, p) = msg.encode();
            assert!(p.is_empty());
            assert_eq!(Msg::decode(&h).unwrap(), Ok(Msg::Post(op)), "{op:?}");
        }
    }

    #[test]
    fn other_messages_round_trip_and_garbage_is_an_error() {
        for m in [
            Msg::Hello {
                tid: 5,
                pid: 77,
                ktid: 78,
                fd: 0,
            },
            Msg::Hello {
                tid: 1,
                pid: 77,
                ktid: 0,
                fd: -1,
            },
            Msg::SemInit { s: 1, value: 3 },
            Msg::BarrierInit { b: 2, count: 4 },
            Msg::OnceInit { o: 5, done: false },
            Msg::OnceInit { o: 6, done: true },
            Msg::MutexInit { m: 7 },
            Msg::Observed {
                write: true,
                addr: 0x4040,
                size: 8,
                pc: 0x401136,
            },
            Msg::Crash {
                signal: 11,
                pc: 0x401000,
            },
            Msg::At {
                pc: 0x5555_5555_5189,
            },
            Msg::Alive { steps: 12_345 },
            Msg::Interrupted,
            Msg::KernelWait { ns: 5_000_000_000 },
            Msg::Leaving,
            Msg::Concluding { steps: 8_000_009 },
        ] {
            let (h, _) = m.encode();
            assert_eq!(Msg::decode(&h).unwrap(), Ok(m));
        }
        let m = Msg::Assert {
            text: "a.c:3: main: x == 1".into(),
        };
        let (h, p) = m.encode();
        assert_eq!(Msg::decode(&h).unwrap(), Err(p.len()));
        assert_eq!(Msg::with_payload(&h, p), m);
        // An end report's payload is its JSON, whatever its length (past the text limit).
        let m = Msg::End {
            json: vec![b'x'; MAX_TEXT * 3],
        };
        let (h, p) = m.encode();
        assert_eq!(Msg::decode(&h).unwrap(), Err(p.len()));
        assert_eq!(Msg::with_payload(&h, p), m);
        // In one piece for one write: the header, then the payload.
        let w = m.encode_whole();
        assert_eq!((&w[..MSG_LEN], &w[MSG_LEN..]), (&h[..], p));
        assert!(Msg::decode(&[0xff; MSG_LEN]).is_err());
        // A hello of the earlier layout (nothing in `code` and `c`) has no task details.
        assert_eq!(
            Msg::decode(&frame(K_HELLO, 0, 2, 9, 0)).unwrap(),
            Ok(Msg::Hello {
                tid: 2,
                pid: 9,
                ktid: 0,
                fd: -1
            })
        );
        let r = Reply {
            result: -1,
            value: 9,
        };
        assert_eq!(Reply::decode(&r.encode()), r);
        // The debug stop mark decodes to the same reply and is seen only where it was set.
        assert_eq!(Reply::decode(&r.encode_stop(0)), r);
        assert_eq!(Reply::stop_step(&r.encode_stop(0)), Some(0));
        assert_eq!(Reply::stop_step(&r.encode_stop(41)), Some(41));
        assert_eq!(Reply::stop_step(&r.encode()), None);
        let abort = Reply {
            result: Reply::ABORT,
            value: u64::MAX,
        };
        assert_eq!(Reply::stop_step(&abort.encode()), None);
    }

    #[test]
    fn atomics_carry_every_memory_order_through_the_wire() {
        use MemOrder::*;
        for mo in MemOrder::ALL {
            let ops = [
                Op::AtomicLoad {
                    addr: 0x601040,
                    size: 4,
                    mo,
                },
                Op::AtomicStore {
                    addr: 0x601040,
                    size: 8,
                    mo,
                },
                Op::AtomicRmw {
                    addr: 0x601040,
                    size: 1,
                    mo,
                    fail: None,
                },
            ];
            for op in ops {
                // With and without a pc in the frame (libpos always attaches one).
                for f in [Msg::Post(op).encode().0, Msg::encode_post_at(&op, 0x401136)] {
                    assert_eq!(Msg::decode(&f).unwrap(), Ok(Msg::Post(op)), "{op:?}");
                }
            }
            for fail in MemOrder::ALL {
                let cas = Op::AtomicRmw {
                    addr: 0x601040,
                    size: 16,
                    mo,
                    fail: Some(fail),
                };
                let f = Msg::encode_post_at(&cas, 0x401136);
                assert_eq!(Msg::decode(&f).unwrap(), Ok(Msg::Post(cas)));
                assert_eq!(frame_pc(&f), Some(0x401136));
            }
        }
        // A frame of the layout before orders (size alone) is seq_cst, and no CAS.
        assert_eq!(
            Msg::decode(&frame(K_POST, 35, 0x10, 0, 4)).unwrap(),
            Ok(Msg::Post(Op::AtomicRmw {
                addr: 0x10,
                size: 4,
                mo: SeqCst,
                fail: None
            }))
        );
        // Orders out of range, stray bits and a failure order on a load are errors.
        for (code, c) in [(33, 4 | 7 << 32), (35, 4 | 9 << 40), (34, 4 | 1 << 50)] {
            assert!(
                Msg::decode(&frame(K_POST, code, 0x10, 0, c)).is_err(),
                "{c:#x}"
            );
        }
        assert!(Msg::decode(&frame(K_POST, 33, 0x10, 0, 4 | 3 << 32 | 3 << 40)).is_err());
    }

    #[test]
    fn memory_posts_carry_a_pc_and_still_decode_as_posts() {
        let read = Op::Read {
            addr: 0x1000,
            size: 4,
        };
        let f = Msg::encode_post_at(&read, 0x4011a3);
        assert_eq!(Msg::decode(&f).unwrap(), Ok(Msg::Post(read)));
        assert_eq!(frame_pc(&f), Some(0x4011a3));
        let (plain, _) = Msg::Post(read).encode();
        assert_eq!(frame_pc(&plain), None);
        // A non-memory operation keeps its own fields; no pc is attached.
        let wait = Op::CondWait { c: 1, m: 2 };
        let f = Msg::encode_post_at(&wait, 0x99);
        assert_eq!(Msg::decode(&f).unwrap(), Ok(Msg::Post(wait)));
        assert_eq!(frame_pc(&f), None);
    }
}
