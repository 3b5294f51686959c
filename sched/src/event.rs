//! The event model: what a thread is about to do (thread, operation, object, access kind).
//!
//! A *pending event* is the next visible operation of a thread. Strategies only ever see events;
//! the coordinator state machine ([`crate::state`]) decides which of them are enabled.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Dense per-run thread index: 0 is the main thread, then threads in creation order.
/// Stable across runs only together with [`ThreadName`]; schedules store names.
pub type Tid = u32;

/// Stable thread identity: the path of child indices from the main thread.
/// Main is `0`, its first child `0.1`, that child's second child `0.1.2`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct ThreadName(pub Vec<u32>);

/// Marks the first path element of a thread of a forked child process: the element is
/// `PROC_MARK | p` for process `p` (numbered from 1 in fork order), and the rest of the path
/// is the thread's path inside that process. Threads of the main process keep plain paths,
/// so their names (and every schedule without forks) are unchanged.
pub const PROC_MARK: u32 = 1 << 31;

impl ThreadName {
    pub fn main() -> Self {
        ThreadName(Vec::new())
    }
    /// The initial thread of forked child process `p` (>= 1), displayed `p<p>.t0`.
    pub fn process_main(p: u32) -> Self {
        ThreadName(vec![PROC_MARK | p])
    }
    /// The process this thread belongs to (0: the main process).
    pub fn process(&self) -> u32 {
        match self.0.first() {
            Some(&x) if x & PROC_MARK != 0 => x & !PROC_MARK,
            _ => 0,
        }
    }
    /// The name of this thread's `index`-th child (1-based).
    pub fn child(&self, index: u32) -> Self {
        let mut v = self.0.clone();
        v.push(index);
        ThreadName(v)
    }
}

impl fmt::Display for ThreadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.process();
        let rest = if p == 0 {
            write!(f, "0")?;
            &self.0[..]
        } else {
            write!(f, "p{p}.t0")?;
            &self.0[1..]
        };
        for i in rest {
            write!(f, ".{i}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ThreadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{self}")
    }
}

impl From<ThreadName> for String {
    fn from(n: ThreadName) -> String {
        n.to_string()
    }
}

impl TryFrom<String> for ThreadName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for ThreadName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split('.');
        let mut v = Vec::new();
        let first = parts.next();
        if let Some(p) = first.and_then(|x| x.strip_prefix('p')) {
            // `p<n>.t0...`: a thread of forked child process n.
            let n = p
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0 && n & PROC_MARK == 0)
                .ok_or_else(|| format!("bad process number in thread name {s:?}"))?;
            if parts.next() != Some("t0") {
                return Err(format!("bad thread name {s:?}: expected p<n>.t0..."));
            }
            v.push(PROC_MARK | n);
        } else if first != Some("0") {
            return Err(format!("bad thread name {s:?}: must start with 0"));
        }
        for p in parts {
            v.push(
                p.parse::<u32>()
                    .map_err(|_| format!("bad thread name {s:?}"))?,
            );
        }
        Ok(ThreadName(v))
    }
}

/// The mutex flavour, read by libpos from the mutex itself (static initialisers included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum MutexKind {
    #[default]
    Normal,
    Recursive,
    ErrorCheck,
    /// Robust (`PTHREAD_MUTEX_ROBUST`) mutexes of the three types: when the owner dies
    /// holding one, the next locker gets it with `EOWNERDEAD` (see [`crate::state`]).
    RobustNormal,
    RobustRecursive,
    RobustErrorCheck,
}

impl MutexKind {
    /// The type without robustness: how a lock by the owner behaves.
    #[inline]
    pub fn base(self) -> MutexKind {
        use MutexKind::*;
        match self {
            Normal | RobustNormal => Normal,
            Recursive | RobustRecursive => Recursive,
            ErrorCheck | RobustErrorCheck => ErrorCheck,
        }
    }

    /// Whether the mutex is robust.
    #[inline]
    pub fn robust(self) -> bool {
        self != self.base()
    }

    /// The robust mutex of this type.
    pub fn made_robust(self) -> MutexKind {
        use MutexKind::*;
        match self.base() {
            Recursive => RobustRecursive,
            ErrorCheck => RobustErrorCheck,
            _ => RobustNormal,
        }
    }
}

/// The memory order a C11/C++ atomic operation asked for: the `morder` argument libpos's
/// `__tsan_atomic*` callbacks receive (`__atomic_*` builtins, C11 `atomic_*`, C++
/// `std::atomic` and `__sync_*` builtins compiled with `-fsanitize=thread` all reach them).
///
/// poscheck explores sequentially consistent interleavings: libpos performs every atomic
/// operation as `seq_cst`, and the state machine, the race rule, POS and DPOR treat atomics
/// the same whatever their order (the order is a static property of the instruction, so it
/// never tells apart events that were alike before). The order is recorded for reports
/// (event display, saved schedules, replay's check) and for future weak-memory work.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum MemOrder {
    Relaxed,
    Consume,
    Acquire,
    Release,
    AcqRel,
    /// Also what an event saved without an order (an older schedule) is taken to be.
    #[default]
    SeqCst,
}

impl MemOrder {
    /// Every order, weakest first (tsan's numbering 0..=5).
    pub const ALL: [MemOrder; 6] = [
        MemOrder::Relaxed,
        MemOrder::Consume,
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
        MemOrder::SeqCst,
    ];

    /// The order of tsan's `morder` value `v` (0 relaxed, 1 consume, 2 acquire, 3 release,
    /// 4 acq_rel, 5 seq_cst, as gcc's `__ATOMIC_*` and clang's numbering). Flag bits from
    /// bit 15 up are dropped as libtsan drops them (gcc's `MEMMODEL_SYNC` on `__sync_*`
    /// builtins, x86 HLE hints); any other value (an order computed at run time out of
    /// range) is `seq_cst`, which is what libpos performs.
    pub fn from_tsan(v: i32) -> MemOrder {
        usize::try_from(v & 0x7fff)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
            .unwrap_or(MemOrder::SeqCst)
    }

    /// tsan's number for the order (the inverse of [`MemOrder::from_tsan`]).
    pub fn tsan(self) -> u32 {
        self as u32
    }

    /// The C11 name without `memory_order_`: `relaxed`, `acquire`, `acq_rel`, `seq_cst`, ...
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Consume => "consume",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "seq_cst",
        }
    }
}

impl fmt::Display for MemOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MemOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("bad memory order {s:?}"))
    }
}

/// The orders of an atomic operation as its display and saved schedules show them:
/// `acquire`, or `success/failure` for a compare-exchange (`acq_rel/relaxed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Orders {
    pub mo: MemOrder,
    pub fail: Option<MemOrder>,
}

impl fmt::Display for Orders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fail {
            Some(fail) => write!(f, "{}/{fail}", self.mo),
            None => write!(f, "{}", self.mo),
        }
    }
}

impl std::str::FromStr for Orders {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (mo, fail) = match s.split_once('/') {
            Some((a, b)) => (a.parse()?, Some(b.parse()?)),
            None => (s.parse()?, None),
        };
        Ok(Orders { mo, fail })
    }
}

/// A visible operation. Addresses identify synchronisation objects (the address of the
/// `pthread_mutex_t`, ...) and memory locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// First event of every thread.
    Start,
    /// Thread exit (return from the start routine or `pthread_exit`).
    Exit,
    /// `pthread_create`; the child's [`Tid`] is assigned when this executes.
    Create,
    Join {
        target: Tid,
    },
    Detach {
        target: Tid,
    },
    Lock {
        m: u64,
        kind: MutexKind,
    },
    TryLock {
        m: u64,
        kind: MutexKind,
    },
    /// `pthread_mutex_timedlock`/`clocklock`: takes the mutex once it is free, or times out
    /// at `deadline` (virtual ns, see [`crate::state::clock`]).
    TimedLock {
        m: u64,
        kind: MutexKind,
        deadline: u64,
    },
    Unlock {
        m: u64,
        kind: MutexKind,
    },
    /// `pthread_mutex_consistent`: the owner of a robust mutex it acquired with `EOWNERDEAD`
    /// marks it usable again (EINVAL when the mutex is not robust or not in that state).
    Consistent {
        m: u64,
    },
    /// First half of `pthread_cond_wait`: releases `m` and starts waiting on `c`.
    CondWait {
        c: u64,
        m: u64,
    },
    /// Second half of a wait: woken by a signal/broadcast and re-acquiring `m`.
    /// `deadline` ([`NO_DEADLINE`] for an untimed wait): it may also time out once the clock
    /// reaches it (and only while the mutex is free, as it must be re-acquired).
    CondWake {
        c: u64,
        m: u64,
        deadline: u64,
    },
    CondSignal {
        c: u64,
    },
    CondBroadcast {
        c: u64,
    },
    RdLock {
        l: u64,
    },
    WrLock {
        l: u64,
    },
    TryRdLock {
        l: u64,
    },
    TryWrLock {
        l: u64,
    },
    /// Timed rwlock acquisition: takes it once available, or times out at `deadline`.
    TimedRdLock {
        l: u64,
        deadline: u64,
    },
    TimedWrLock {
        l: u64,
        deadline: u64,
    },
    RwUnlock {
        l: u64,
    },
    SemWait {
        s: u64,
    },
    SemTryWait {
        s: u64,
    },
    /// Takes a unit once the count is positive, or times out at `deadline`.
    SemTimedWait {
        s: u64,
        deadline: u64,
    },
    SemPost {
        s: u64,
    },
    /// Arrival at a barrier; the thread then waits with [`Op::BarrierLeave`].
    BarrierWait {
        b: u64,
    },
    BarrierLeave {
        b: u64,
    },
    /// Entering `pthread_once`: behaves as a lock on the once control (init runs inside).
    OnceBegin {
        o: u64,
    },
    OnceEnd {
        o: u64,
    },
    Yield,
    Sleep,
    Read {
        addr: u64,
        size: u32,
    },
    Write {
        addr: u64,
        size: u32,
    },
    /// An atomic load with its memory order (see [`MemOrder`]: explored as SC).
    AtomicLoad {
        addr: u64,
        size: u32,
        #[serde(default)]
        mo: MemOrder,
    },
    /// An atomic store with its memory order.
    AtomicStore {
        addr: u64,
        size: u32,
        #[serde(default)]
        mo: MemOrder,
    },
    /// An atomic read-modify-write (exchange, fetch-op, compare-exchange) with its memory
    /// order; a compare-exchange also has the order of its failure path in `fail` (`None`
    /// for the other operations).
    AtomicRmw {
        addr: u64,
        size: u32,
        #[serde(default)]
        mo: MemOrder,
        #[serde(default)]
        fail: Option<MemOrder>,
    },
    /// `exit()`/`_exit()`/return from main: the process ends when this executes.
    ProcessExit {
        code: i32,
    },
    /// A sleep in virtual time (`sleep`, `usleep`, `nanosleep`, `clock_nanosleep`): enabled
    /// once the virtual clock reaches `deadline` (see [`crate::state::clock`]). [`Op::Sleep`]
    /// stays for real sleeps (`--real-sleep`): a yield point that then sleeps for real.
    SleepUntil {
        deadline: u64,
    },
    /// `pthread_timedjoin_np`: as [`Op::Join`], or times out (ETIMEDOUT) at `deadline`.
    TimedJoin {
        target: Tid,
        deadline: u64,
    },
    /// `pthread_tryjoin_np`: joins a finished target, otherwise returns EBUSY (never waits).
    TryJoin {
        target: Tid,
    },
    /// `futex(FUTEX_WAIT[_BITSET])` whose word held the expected value: libpos compares it
    /// while its thread is the only controlled one running, and the post registers the
    /// waiter at once, so no wake can fall between the check and the wait. Enabled once a
    /// [`Op::FutexWake`] woke it (returns 0), or at `deadline` (ETIMEDOUT).
    FutexWait {
        addr: u64,
        bitset: u32,
        deadline: u64,
    },
    /// `futex(FUTEX_WAKE[_BITSET])`: wakes up to `n` waiters whose bitset meets `bitset`;
    /// which of them is a scheduling choice (the woken waiters' events run in some order).
    /// Returns the number woken.
    FutexWake {
        addr: u64,
        n: u32,
        bitset: u32,
    },
    /// `futex(FUTEX_REQUEUE / FUTEX_CMP_REQUEUE)`, the scheduling point before it: nothing
    /// changes yet. Once granted, libpos compares the word (`CMP_REQUEUE`: EAGAIN if it
    /// differs, and no further event) and posts [`Op::FutexRequeued`], whose post performs
    /// the operation while its thread is still the only one running (atomic, as in the kernel).
    FutexRequeue {
        addr: u64,
        addr2: u64,
        n1: u32,
        n2: u32,
    },
    /// The second half of a requeue, applied when posted (see [`crate::state`]): wakes up to
    /// `n1` waiters of `addr` (which ones is a scheduling choice, as for
    /// [`Op::FutexWake`]) and moves up to `n2` of the others to `addr2`. Its event returns
    /// the number woken plus moved.
    FutexRequeued {
        addr: u64,
        addr2: u64,
        n1: u32,
        n2: u32,
    },
    /// `pthread_cancel`: marks `target` cancelled; it acts on it at its next cancellation
    /// point (see [`crate::state`]).
    Cancel {
        target: Tid,
    },
    /// `pthread_testcancel`: a cancellation point and nothing else.
    TestCancel,
    /// `pthread_kill` of another controlled thread of the process that does not block the
    /// signal and has a handler for it: the handler will run on `target`, so a wait it is
    /// blocked in must end (see [`crate::state`]: the wait returns `EINTR` or is posted
    /// again once the handler ran, as POSIX says for each call).
    Kill {
        target: Tid,
    },
    /// The calling thread is about to run a signal handler for a signal a [`Op::Kill`] sent
    /// it: its waits are no longer interrupted.
    Handler,
    /// `pthread_setcancelstate`: whether the calling thread acts on a cancellation request.
    SetCancelState {
        enabled: bool,
    },
    /// `pthread_setcanceltype`: whether the calling thread is cancelled asynchronously
    /// (`PTHREAD_CANCEL_ASYNCHRONOUS`). Such a thread computing without scheduling points is
    /// set aside by the runner like one blocked outside control, and a cancellation then
    /// reaches it for real.
    SetCancelType {
        asynchronous: bool,
    },
    /// `fork()` of a controlled thread: a new process whose initial thread is a new thread
    /// of the run (its [`Tid`] is assigned when this executes, as for [`Op::Create`]). The
    /// child's objects start as copies of the parent process's (see [`crate::state`]).
    Fork,
    /// `waitpid`/`wait` (without `WNOHANG`) for the process whose initial thread is
    /// `target`, or for any child process of the caller's ([`ANY_PROCESS`]): enabled once
    /// that process left control (exit, exec, crash) — or at once when there is none.
    WaitProc {
        target: Tid,
    },
    /// `exec*` in a forked child process: the process leaves control (its threads are
    /// gone; the new image runs uncontrolled).
    Exec,
    /// The `fork()` of [`Op::Fork`] failed: the child `target` (which will never connect)
    /// and its process are gone.
    ForkFailed {
        target: Tid,
    },
}

/// [`Op::WaitProc`]'s target for `wait()`/`waitpid(-1)`: any child process.
pub const ANY_PROCESS: Tid = Tid::MAX;

/// The high bits of an object address that carry its process ([`Op::in_process`]): user
/// space addresses stay below 2^56 on every supported architecture.
pub const PROCESS_SHIFT: u32 = 56;

/// The bit libpos sets in the address of a robust mutex that lies in memory shared between
/// processes (`MAP_SHARED`): it is one object in every process of the run, so
/// [`addr_in_process`] leaves it alone. Below [`PROCESS_SHIFT`], above user space.
pub const SHARED_BIT: u64 = 1 << 55;

/// An object address for people: `0x...` in the main process, `p1:0x...` in forked child
/// process 1 (see [`Op::in_process`]), `shared:0x...` with [`SHARED_BIT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr(pub u64);

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0 >> PROCESS_SHIFT;
        if self.0 & SHARED_BIT != 0 {
            write!(f, "shared:{:#x}", self.0 & (SHARED_BIT - 1))
        } else if p == 0 {
            write!(f, "{:#x}", self.0)
        } else {
            write!(f, "p{p}:{:#x}", self.0 & ((1u64 << PROCESS_SHIFT) - 1))
        }
    }
}

/// Object address `addr` of process `p` in the run's name space (see [`Op::in_process`]);
/// an address with [`SHARED_BIT`] is the same in every process.
#[inline]
pub fn addr_in_process(addr: u64, p: u32) -> u64 {
    if addr & SHARED_BIT != 0 {
        return addr;
    }
    addr | ((p as u64) << PROCESS_SHIFT)
}

/// The deadline of an untimed wait ([`Op::CondWake`] of `pthread_cond_wait`).
pub const NO_DEADLINE: u64 = u64::MAX;

/// What kind of thing an object is; two objects can only be the same when the kinds match
/// (memory and atomics share [`ObjKind::Mem`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ObjKind {
    Thread,
    Mutex,
    Cond,
    RwLock,
    Sem,
    Barrier,
    Once,
    Mem,
    Process,
    /// A futex word (`futex(2)`), keyed by its address.
    Futex,
}

/// An object an event touches. For memory it is the byte range `[addr, addr+size)`;
/// two overlapping ranges are the same object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Obj {
    pub kind: ObjKind,
    pub addr: u64,
    pub size: u32,
}

impl Obj {
    pub fn sync(kind: ObjKind, addr: u64) -> Self {
        Obj {
            kind,
            addr,
            size: 1,
        }
    }
    pub fn mem(addr: u64, size: u32) -> Self {
        Obj {
            kind: ObjKind::Mem,
            addr,
            size: size.max(1),
        }
    }
    /// Same object: same kind and overlapping ranges.
    #[inline]
    pub fn overlaps(&self, o: &Obj) -> bool {
        self.kind == o.kind
            && self.addr < o.addr + o.size as u64
            && o.addr < self.addr + self.size as u64
    }
}

impl fmt::Display for Obj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ObjKind::Thread => write!(f, "thread#{}", self.addr),
            ObjKind::Mem => write!(f, "mem[{}+{}]", Addr(self.addr), self.size),
            ObjKind::Process => write!(f, "process"),
            k => write!(f, "{}@{}", format!("{k:?}").to_lowercase(), Addr(self.addr)),
        }
    }
}

/// Read or write access of an event to its objects. Synchronisation operations are writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Access {
    Read,
    Write,
    /// Touches no shared object (start, yield, sleep).
    None,
}

/// A pending event of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Event {
    pub tid: Tid,
    pub op: Op,
}

impl Op {
    /// The objects this operation touches (at most two: a condvar wait also touches its mutex).
    pub fn objects(&self) -> [Option<Obj>; 2] {
        use ObjKind::*;
        use Op::*;
        let s = Obj::sync;
        match *self {
            Start | Create | Yield | Sleep => [None, None],
            Exit => [None, None],
            Join { target } | Detach { target } => [Some(s(Thread, target as u64)), None],
            TimedJoin { target, .. } | TryJoin { target } => [Some(s(Thread, target as u64)), None],
            SleepUntil { .. } => [None, None],
            FutexWait { addr, .. } | FutexWake { addr, .. } => [Some(s(Futex, addr)), None],
            FutexRequeue { addr, addr2, .. } | FutexRequeued { addr, addr2, .. } => {
                [Some(s(Futex, addr)), Some(s(Futex, addr2))]
            }
            Lock { m, .. } | TryLock { m, .. } | TimedLock { m, .. } | Unlock { m, .. } => {
                [Some(s(Mutex, m)), None]
            }
            Consistent { m } => [Some(s(Mutex, m)), None],
            CondWait { c, m } | CondWake { c, m, .. } => [Some(s(Cond, c)), Some(s(Mutex, m))],
            CondSignal { c } | CondBroadcast { c } => [Some(s(Cond, c)), None],
            RdLock { l }
            | WrLock { l }
            | TryRdLock { l }
            | TryWrLock { l }
            | TimedRdLock { l, .. }
            | TimedWrLock { l, .. }
            | RwUnlock { l } => [Some(s(RwLock, l)), None],
            SemWait { s: a }
            | SemTryWait { s: a }
            | SemTimedWait { s: a, .. }
            | SemPost { s: a } => [Some(s(Sem, a)), None],
            BarrierWait { b } | BarrierLeave { b } => [Some(s(Barrier, b)), None],
            OnceBegin { o } | OnceEnd { o } => [Some(s(Once, o)), None],
            Read { addr, size }
            | Write { addr, size }
            | AtomicLoad { addr, size, .. }
            | AtomicStore { addr, size, .. }
            | AtomicRmw { addr, size, .. } => [Some(Obj::mem(addr, size)), None],
            ProcessExit { .. } => [Some(s(Process, 0)), None],
            Cancel { target } | Kill { target } => [Some(s(Thread, target as u64)), None],
            TestCancel | SetCancelState { .. } | SetCancelType { .. } | Handler => [None, None],
            Fork => [None, None],
            WaitProc { .. } | Exec | ForkFailed { .. } => [Some(s(Process, 0)), None],
        }
    }

    /// The operation with its object addresses put in the name space of process `p`
    /// (address spaces differ: the same address in a forked child is another object). The
    /// main process (0) keeps plain addresses. Thread ids are not addresses and stay.
    pub fn in_process(self, p: u32) -> Op {
        if p == 0 {
            return self;
        }
        let a = |x: u64| addr_in_process(x, p);
        use Op::*;
        match self {
            Lock { m, kind } => Lock { m: a(m), kind },
            TryLock { m, kind } => TryLock { m: a(m), kind },
            TimedLock { m, kind, deadline } => TimedLock {
                m: a(m),
                kind,
                deadline,
            },
            Unlock { m, kind } => Unlock { m: a(m), kind },
            Consistent { m } => Consistent { m: a(m) },
            CondWait { c, m } => CondWait { c: a(c), m: a(m) },
            CondWake { c, m, deadline } => CondWake {
                c: a(c),
                m: a(m),
                deadline,
            },
            CondSignal { c } => CondSignal { c: a(c) },
            CondBroadcast { c } => CondBroadcast { c: a(c) },
            RdLock { l } => RdLock { l: a(l) },
            WrLock { l } => WrLock { l: a(l) },
            TryRdLock { l } => TryRdLock { l: a(l) },
            TryWrLock { l } => TryWrLock { l: a(l) },
            TimedRdLock { l, deadline } => TimedRdLock { l: a(l), deadline },
            TimedWrLock { l, deadline } => TimedWrLock { l: a(l), deadline },
            RwUnlock { l } => RwUnlock { l: a(l) },
            SemWait { s } => SemWait { s: a(s) },
            SemTryWait { s } => SemTryWait { s: a(s) },
            SemTimedWait { s, deadline } => SemTimedWait { s: a(s), deadline },
            SemPost { s } => SemPost { s: a(s) },
            BarrierWait { b } => BarrierWait { b: a(b) },
            BarrierLeave { b } => BarrierLeave { b: a(b) },
            OnceBegin { o } => OnceBegin { o: a(o) },
            OnceEnd { o } => OnceEnd { o: a(o) },
            Read { addr, size } => Read {
                addr: a(addr),
                size,
            },
            Write { addr, size } => Write {
                addr: a(addr),
                size,
            },
            AtomicLoad { addr, size, mo } => AtomicLoad {
                addr: a(addr),
                size,
                mo,
            },
            AtomicStore { addr, size, mo } => AtomicStore {
                addr: a(addr),
                size,
                mo,
            },
            AtomicRmw {
                addr,
                size,
                mo,
                fail,
            } => AtomicRmw {
                addr: a(addr),
                size,
                mo,
                fail,
            },
            FutexWait {
                addr,
                bitset,
                deadline,
            } => FutexWait {
                addr: a(addr),
                bitset,
                deadline,
            },
            FutexWake { addr, n, bitset } => FutexWake {
                addr: a(addr),
                n,
                bitset,
            },
            FutexRequeue {
                addr,
                addr2,
                n1,
                n2,
            } => FutexRequeue {
                addr: a(addr),
                addr2: a(addr2),
                n1,
                n2,
            },
            FutexRequeued {
                addr,
                addr2,
                n1,
                n2,
            } => FutexRequeued {
                addr: a(addr),
                addr2: a(addr2),
                n1,
                n2,
            },
            Start | Exit | Create | Join { .. } | Detach { .. } | Yield | Sleep => self,
            ProcessExit { .. } | SleepUntil { .. } | TimedJoin { .. } | TryJoin { .. } => self,
            Cancel { .. } | TestCancel | SetCancelState { .. } | SetCancelType { .. } => self,
            Kill { .. } | Handler => self,
            Fork | WaitProc { .. } | Exec | ForkFailed { .. } => self,
        }
    }

    /// How the operation accesses its objects.
    pub fn access(&self) -> Access {
        use Op::*;
        match self {
            Start | Create | Yield | Sleep | SleepUntil { .. } | Exit => Access::None,
            Fork => Access::None,
            TestCancel | SetCancelState { .. } | SetCancelType { .. } | Handler => Access::None,
            Read { .. } | AtomicLoad { .. } => Access::Read,
            RdLock { .. } | TryRdLock { .. } | TimedRdLock { .. } => Access::Write,
            _ => Access::Write,
        }
    }

    /// A yield point the program uses to wait for others (spin loops): `sched_yield`, sleeps.
    pub fn is_yield(&self) -> bool {
        matches!(self, Op::Yield | Op::Sleep | Op::SleepUntil { .. })
    }

    /// The virtual deadline of a timed operation (one that may time out, or a sleep), `None`
    /// for every other operation (an untimed [`Op::CondWake`] included).
    #[inline]
    pub fn deadline(&self) -> Option<u64> {
        use Op::*;
        match *self {
            TimedLock { deadline, .. }
            | CondWake { deadline, .. }
            | TimedRdLock { deadline, .. }
            | TimedWrLock { deadline, .. }
            | SemTimedWait { deadline, .. }
            | SleepUntil { deadline }
            | FutexWait { deadline, .. }
            | TimedJoin { deadline, .. } => (deadline != NO_DEADLINE).then_some(deadline),
            _ => None,
        }
    }

    /// Memory access (plain or atomic), as opposed to a synchronisation call.
    pub fn is_memory(&self) -> bool {
        matches!(
            self,
            Op::Read { .. }
                | Op::Write { .. }
                | Op::AtomicLoad { .. }
                | Op::AtomicStore { .. }
                | Op::AtomicRmw { .. }
        )
    }

    /// The memory orders of an atomic operation, `None` for every other operation.
    pub fn orders(&self) -> Option<Orders> {
        match *self {
            Op::AtomicLoad { mo, .. } | Op::AtomicStore { mo, .. } => {
                Some(Orders { mo, fail: None })
            }
            Op::AtomicRmw { mo, fail, .. } => Some(Orders { mo, fail }),
            _ => None,
        }
    }

    /// Short lowercase name of the operation, used in schedules and reports.
    pub fn name(&self) -> &'static str {
        use Op::*;
        match self {
            Start => "start",
            Exit => "exit",
            Create => "create",
            Join { .. } => "join",
            Detach { .. } => "detach",
            Lock { .. } => "lock",
            TryLock { .. } => "trylock",
            TimedLock { .. } => "timedlock",
            Unlock { .. } => "unlock",
            Consistent { .. } => "consistent",
            CondWait { .. } => "cond_wait",
            CondWake { .. } => "cond_wake",
            CondSignal { .. } => "cond_signal",
            CondBroadcast { .. } => "cond_broadcast",
            RdLock { .. } => "rdlock",
            WrLock { .. } => "wrlock",
            TryRdLock { .. } => "tryrdlock",
            TryWrLock { .. } => "trywrlock",
            TimedRdLock { .. } => "timedrdlock",
            TimedWrLock { .. } => "timedwrlock",
            RwUnlock { .. } => "rwunlock",
            SemWait { .. } => "sem_wait",
            SemTryWait { .. } => "sem_trywait",
            SemTimedWait { .. } => "sem_timedwait",
            SemPost { .. } => "sem_post",
            BarrierWait { .. } => "barrier_wait",
            BarrierLeave { .. } => "barrier_leave",
            OnceBegin { .. } => "once_begin",
            OnceEnd { .. } => "once_end",
            Yield => "yield",
            Sleep => "sleep",
            Read { .. } => "read",
            Write { .. } => "write",
            AtomicLoad { .. } => "atomic_load",
            AtomicStore { .. } => "atomic_store",
            AtomicRmw { .. } => "atomic_rmw",
            ProcessExit { .. } => "process_exit",
            SleepUntil { .. } => "sleep_until",
            TimedJoin { .. } => "timedjoin",
            TryJoin { .. } => "tryjoin",
            FutexWait { .. } => "futex_wait",
            FutexWake { .. } => "futex_wake",
            FutexRequeue { .. } => "futex_requeue",
            FutexRequeued { .. } => "futex_requeued",
            Cancel { .. } => "cancel",
            Kill { .. } => "kill",
            Handler => "handler",
            TestCancel => "testcancel",
            SetCancelState { .. } => "setcancelstate",
            SetCancelType { .. } => "setcanceltype",
            Fork => "fork",
            WaitProc { .. } => "waitproc",
            Exec => "exec",
            ForkFailed { .. } => "fork_failed",
        }
    }
}

/// `name(objects)`, e.g. `lock(mutex@0x4040a0)`; an atomic operation shows its orders first:
/// `atomic_load(acquire, mem[0x4040+4])`, `atomic_rmw(acq_rel/relaxed, mem[0x4040+4])` for a
/// compare-exchange (see [`Orders`]). Saved schedules store this text.
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())?;
        if let Some(o) = self.orders() {
            if let [Some(a), None] = self.objects() {
                return write!(f, "({o}, {a})");
            }
        }
        let objs = self.objects();
        match (objs[0], objs[1]) {
            (Some(a), Some(b)) => write!(f, "({a}, {b})"),
            (Some(a), None) => write!(f, "({a})"),
            _ => Ok(()),
        }
    }
}

impl Event {
    pub fn new(tid: Tid, op: Op) -> Self {
        Event { tid, op }
    }

    /// The objects the event touches: its operation's, except that the exit event of a thread
    /// touches the thread object (joins race with it), and so do its own cancellation
    /// operations and its [`Op::Handler`] (a `pthread_cancel` or `pthread_kill` of it races
    /// with them). Public so that strategies can compute
    /// an event's footprint once and test many races against it.
    #[inline]
    pub fn objects(&self) -> [Option<Obj>; 2] {
        match self.op {
            Op::Exit
            | Op::TestCancel
            | Op::SetCancelState { .. }
            | Op::SetCancelType { .. }
            | Op::Handler => [Some(Obj::sync(ObjKind::Thread, self.tid as u64)), None],
            _ => self.op.objects(),
        }
    }

    #[inline]
    fn touches_same(&self, other: &Event) -> bool {
        let (a, b) = (self.objects(), other.objects());
        a.iter()
            .flatten()
            .any(|x| b.iter().flatten().any(|y| x.overlaps(y)))
    }

    /// POS race rule (seed paper, Def. of race in §4): different threads, same object, and
    /// not both reads. With `reads_race` (plain POS) two reads of one object race too.
    #[inline]
    pub fn races_with(&self, other: &Event, reads_race: bool) -> bool {
        if self.tid == other.tid || !self.touches_same(other) {
            return false;
        }
        reads_race || !(self.op.access() == Access::Read && other.op.access() == Access::Read)
    }

    /// Dependency for partial-order reduction: same thread, or same object with a write.
    pub fn dependent(&self, other: &Event) -> bool {
        self.tid == other.tid || self.races_with(other, false)
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}:{}", self.tid, self.op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_names_round_trip() {
        let n = ThreadName::main().child(1).child(3);
        assert_eq!(n.to_string(), "0.1.3");
        assert_eq!("0.1.3".parse::<ThreadName>().unwrap(), n);
        assert!("1.2".parse::<ThreadName>().is_err());
        assert_eq!(
            serde_json_like(&ThreadName::main()),
            "0",
            "main displays as 0"
        );
    }

    fn serde_json_like(n: &ThreadName) -> String {
        String::from(n.clone())
    }

    #[test]
    fn overlapping_ranges_are_one_object() {
        let w = |t, a, s| Event::new(t, Op::Write { addr: a, size: s });
        let r = |t, a, s| Event::new(t, Op::Read { addr: a, size: s });
        assert!(w(1, 100, 4).races_with(&w(2, 102, 1), false));
        assert!(!w(1, 100, 4).races_with(&w(2, 104, 4), false));
        assert!(
            !w(1, 100, 4).races_with(&w(1, 100, 4), true),
            "same thread never races"
        );
        assert!(
            !r(1, 100, 4).races_with(&r(2, 100, 4), false),
            "POS*: reads do not race"
        );
        assert!(
            r(1, 100, 4).races_with(&r(2, 100, 4), true),
            "POS: reads race"
        );
        assert!(r(1, 100, 4).races_with(&w(2, 100, 4), false));
    }

    #[test]
    fn atomics_race_like_accesses_of_their_bytes() {
        // `auto`/`races` points: atomic loads are reads (two never race for POS*), atomic
        // stores and RMWs writes, and an atomic and a plain access of the same bytes race.
        let mo = MemOrder::SeqCst;
        let al = |t| {
            Event::new(
                t,
                Op::AtomicLoad {
                    addr: 64,
                    size: 8,
                    mo,
                },
            )
        };
        let rmw = |t| {
            let fail = None;
            Event::new(
                t,
                Op::AtomicRmw {
                    addr: 64,
                    size: 8,
                    mo,
                    fail,
                },
            )
        };
        let st = |t| {
            Event::new(
                t,
                Op::AtomicStore {
                    addr: 64,
                    size: 8,
                    mo,
                },
            )
        };
        let w = |t| Event::new(t, Op::Write { addr: 64, size: 8 });
        let r = |t| Event::new(t, Op::Read { addr: 68, size: 4 });
        assert!(!al(1).races_with(&al(2), false), "POS*: atomic reads");
        assert!(al(1).races_with(&al(2), true), "POS: reads race");
        assert!(al(1).races_with(&rmw(2), false));
        assert!(st(1).races_with(&al(2), false));
        assert!(al(1).races_with(&w(2), false), "atomic vs plain write");
        assert!(rmw(1).races_with(&r(2), false), "atomic RMW vs plain read");
        assert!(!al(1).races_with(&r(2), false), "two reads, one atomic");
    }

    #[test]
    fn memory_orders_come_from_tsan_values_and_show_in_the_display() {
        use MemOrder::*;
        let want = [Relaxed, Consume, Acquire, Release, AcqRel, SeqCst];
        for (v, mo) in want.into_iter().enumerate() {
            assert_eq!(MemOrder::from_tsan(v as i32), mo);
            assert_eq!(mo.tsan(), v as u32);
            assert_eq!(mo.name().parse::<MemOrder>(), Ok(mo));
        }
        // gcc's `__sync_*` builtins pass MEMMODEL_SYNC (bit 15), x86 HLE hints bits 16-17.
        assert_eq!(MemOrder::from_tsan(5 | 1 << 15), SeqCst);
        assert_eq!(MemOrder::from_tsan(2 | 1 << 16), Acquire);
        assert_eq!(MemOrder::from_tsan(3 | 1 << 17), Release);
        for bad in [6, 100, -1] {
            assert_eq!(MemOrder::from_tsan(bad), SeqCst, "{bad}");
        }
        let ld = Op::AtomicLoad {
            addr: 0x4040,
            size: 4,
            mo: Acquire,
        };
        assert_eq!(ld.to_string(), "atomic_load(acquire, mem[0x4040+4])");
        let st = Op::AtomicStore {
            addr: 0x4040,
            size: 8,
            mo: Relaxed,
        };
        assert_eq!(
            st.in_process(1).to_string(),
            "atomic_store(relaxed, mem[p1:0x4040+8])"
        );
        let rmw = Op::AtomicRmw {
            addr: 0x4040,
            size: 4,
            mo: SeqCst,
            fail: None,
        };
        assert_eq!(rmw.to_string(), "atomic_rmw(seq_cst, mem[0x4040+4])");
        assert_eq!(
            Event::new(2, rmw).to_string(),
            "t2:atomic_rmw(seq_cst, mem[0x4040+4])"
        );
        assert_eq!(Op::Read { addr: 16, size: 4 }.orders(), None);
        // Serialised operations without an order (older files) are seq_cst.
        let old: Op = serde_json::from_str(r#"{"AtomicLoad":{"addr":64,"size":4}}"#).unwrap();
        assert_eq!(
            old,
            Op::AtomicLoad {
                addr: 64,
                size: 4,
                mo: SeqCst
            }
        );
        let cas = Op::AtomicRmw {
            addr: 64,
            size: 4,
            mo: AcqRel,
            fail: Some(Acquire),
        };
        let text = serde_json::to_string(&cas).unwrap();
        assert!(
            text.contains(r#""mo":"acq_rel","fail":"acquire""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Op>(&text).unwrap(), cas);
    }

    #[test]
    fn orders_of_atomics_do_not_change_races_or_dependence() {
        // poscheck explores SC interleavings: the race rule sees only objects and access.
        for a in MemOrder::ALL {
            for b in MemOrder::ALL {
                let ld = |t, mo| {
                    Event::new(
                        t,
                        Op::AtomicLoad {
                            addr: 8,
                            size: 4,
                            mo,
                        },
                    )
                };
                let st = |t, mo| {
                    Event::new(
                        t,
                        Op::AtomicStore {
                            addr: 8,
                            size: 4,
                            mo,
                        },
                    )
                };
                assert!(!ld(1, a).races_with(&ld(2, b), false));
                assert!(ld(1, a).races_with(&st(2, b), false));
                assert!(st(1, a).dependent(&st(2, b)));
            }
        }
    }

    #[test]
    fn sync_objects_race_by_kind_and_address() {
        let l = |t, m| {
            Event::new(
                t,
                Op::Lock {
                    m,
                    kind: MutexKind::Normal,
                },
            )
        };
        assert!(l(1, 8).races_with(&l(2, 8), false));
        assert!(!l(1, 8).races_with(&l(2, 16), false));
        let wait = Event::new(1, Op::CondWait { c: 32, m: 8 });
        assert!(
            wait.races_with(&l(2, 8), false),
            "a cond wait releases its mutex"
        );
        let sig = Event::new(2, Op::CondSignal { c: 32 });
        assert!(wait.races_with(&sig, false));
        let exit = Event::new(3, Op::Exit);
        let join = Event::new(1, Op::Join { target: 3 });
        assert!(exit.races_with(&join, false));
    }
}
