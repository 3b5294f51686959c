//! The coordinator state machine: which thread may run, which is blocked, and deadlock.
//!
//! Pure bookkeeping of the synchronisation objects a program uses. A thread *posts* its next
//! pending event; once every live thread has posted (none is running), the enabled set is
//! well defined, a strategy picks one event, and [`State::execute`] applies it. Blocking is
//! modelled here, so a granted operation never blocks in the kernel.

use crate::event::{Addr, Event, MutexKind, Obj, Op, ThreadName, Tid, NO_DEADLINE};
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;

pub mod clock;
mod enabled;
mod futex;
mod procs;
use clock::{Clock, TimeoutPolicy};
use enabled::EnabledSet;
use futex::Futex;

/// Result codes handed back to the program (errno values, as pthread functions return them).
pub mod code {
    pub const OK: i32 = 0;
    pub const EPERM: i32 = 1;
    pub const ESRCH: i32 = 3;
    pub const ECHILD: i32 = 10;
    pub const EAGAIN: i32 = 11;
    pub const EBUSY: i32 = 16;
    pub const EINVAL: i32 = 22;
    pub const EDEADLK: i32 = 35;
    /// A robust mutex acquired after its owner died holding it.
    pub const EOWNERDEAD: i32 = 130;
    /// A robust mutex unlocked without `pthread_mutex_consistent` after `EOWNERDEAD`.
    pub const ENOTRECOVERABLE: i32 = 131;
    pub const ETIMEDOUT: i32 = 110;
    /// A wait ended by a signal whose handler must now run ([`crate::Op::Kill`]): libpos runs
    /// it, then returns `EINTR` (semaphore and futex waits) or posts the wait again.
    pub const EINTR: i32 = 4;
    /// `PTHREAD_BARRIER_SERIAL_THREAD`.
    pub const BARRIER_SERIAL: i32 = -1;
    /// `pthread_once`: the init routine already ran, skip it.
    pub const ONCE_DONE: i32 = 1;
    /// A cancellation point acted on a pending cancellation request: the thread must now
    /// exit as cancelled (after a condvar wait, with the mutex re-acquired). `-ECANCELED`.
    pub const CANCELED: i32 = -125;
    /// `pthread_cancel`'s grant when its target is blocked outside control (in a call libpos
    /// does not see, such as `read` or `poll`, most of them cancellation points): the
    /// canceller delivers the real cancellation, which glibc acts on in that call; the model
    /// counts the request as acted on (the thread unwinds outside control and rejoins with
    /// its cleanup handlers' posts). `-ECANCELED - 1`.
    pub const CANCEL_OUTSIDE: i32 = -126;
}

/// What a blocked event waits for (rendered as text only for reports).
#[derive(Clone, Copy, Debug)]
enum Why {
    /// A join: the target thread has not finished.
    Thread(Tid),
    /// A signal handler's step with no `pthread_kill` sent to its thread.
    Kill,
    /// The mutex and its owner.
    Mutex(u64, Tid),
    /// A condvar wake without a signal for it.
    Signal(u64),
    RwWriter(u64, Tid),
    RwReaders(u64),
    Sem(u64),
    Barrier(u64),
    /// The once control and the thread running its init routine.
    Once(u64, Tid),
    /// A sleep until this virtual time.
    Deadline(u64),
    /// A futex wait without a wake for it.
    Futex(u64),
    /// A wait for a child process (its number, or `None` for any child) to leave control.
    Process(Option<u32>),
}

/// Hasher for object addresses: one multiply (Fibonacci hashing) instead of SipHash, which
/// showed up in decision-loop profiles. Keys are program addresses, not attacker-chosen.
#[derive(Clone, Copy, Default)]
struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 ^= self.0 >> 32;
    }
}

/// Map from an object's address to its state.
type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// Where a thread is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Granted (or just created): executing uncontrolled code until it posts its next event.
    Running,
    /// Waiting at this event for the coordinator's grant (enabled or blocked).
    Pending(Op),
    Finished,
    /// Granted, then seen blocked in the kernel in a call libpos does not control (a `read`
    /// of a pipe, `poll`, `waitpid`, ...): decisions no longer wait for its post, and it
    /// rejoins with its next one ([`State::mark_outside`]). Never enabled.
    Outside,
}

#[derive(Clone, Debug)]
struct Thread {
    name: ThreadName,
    children: u32,
    status: Status,
    /// Barrier generation seen at arrival, for [`Op::BarrierLeave`].
    barrier_gen: u64,
    /// Deferred cancellation: requested, disabled, acted on.
    cancel: CancelState,
    /// A [`Op::Kill`] sent the thread a signal whose handler has not run yet: its blocked
    /// waits are enabled and end with [`code::EINTR`].
    interrupted: bool,
}

/// A thread's deferred cancellation (`pthread_cancel`, `pthread_setcancelstate`).
#[derive(Clone, Copy, Debug, Default)]
struct CancelState {
    /// `pthread_cancel` was executed on the thread.
    requested: bool,
    /// Cancellation is disabled (`PTHREAD_CANCEL_DISABLE`): requests stay pending.
    disabled: bool,
    /// A cancellation point acted on the request: the thread is exiting as cancelled and
    /// its cleanup handlers are no cancellation points any more.
    acted: bool,
    /// `PTHREAD_CANCEL_ASYNCHRONOUS`: the thread may be cancelled anywhere.
    asynchronous: bool,
}

impl CancelState {
    /// The next cancellation point of the thread acts on a cancellation request.
    #[inline]
    fn due(&self) -> bool {
        self.requested && !self.disabled && !self.acted
    }
}

#[derive(Clone, Debug, Default)]
struct Mutex {
    owner: Option<Tid>,
    count: u32,
    /// Robust (`PTHREAD_MUTEX_ROBUST`), as its last lock said: its owner's death frees it.
    robust: bool,
    /// Robust state: `Died` once freed by its owner's death, `Inconsistent` while the next
    /// owner has not called `pthread_mutex_consistent`, `NotRecoverable` after that owner
    /// unlocked it without doing so (every later lock fails).
    health: Health,
}

/// The state of a robust mutex (always `Fine` for the others).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Health {
    #[default]
    Fine,
    Died,
    Inconsistent,
    NotRecoverable,
}

impl Mutex {
    /// The mutex is released (count down to zero, or a condvar wait): an inconsistent
    /// robust mutex becomes not recoverable (glibc's unlock does the same).
    fn release(&mut self) {
        self.owner = None;
        self.count = 0;
        if self.health == Health::Inconsistent {
            self.health = Health::NotRecoverable;
        }
    }

    /// Thread `t` takes the free mutex with recursion count `count`: `EOWNERDEAD` when its
    /// last owner died holding it (it is then inconsistent), else OK.
    fn take(&mut self, t: Tid, count: u32) -> i32 {
        self.owner = Some(t);
        self.count = count;
        if self.health == Health::Died {
            self.health = Health::Inconsistent;
            code::EOWNERDEAD
        } else {
            code::OK
        }
    }
}

#[derive(Clone, Debug)]
struct Waiter {
    tid: Tid,
    seq: u64,
    /// Woken by a broadcast.
    woken: bool,
    /// Recursion count of the mutex released by the wait, restored on wake.
    saved_count: u32,
}

/// A condition variable. Which waiter a signal wakes is a scheduling choice: a signal leaves
/// a *token* usable by any waiter that was waiting when it was sent; the waiter whose
/// [`Op::CondWake`] the strategy schedules takes the oldest token it may use.
#[derive(Clone, Debug, Default)]
struct Cond {
    next_seq: u64,
    waiters: Vec<Waiter>,
    /// For each unconsumed signal, the arrival sequence number bound: waiters with
    /// `seq < upto` may consume it.
    tokens: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
struct RwLock {
    readers: Vec<Tid>,
    writer: Option<Tid>,
}

#[derive(Clone, Debug, Default)]
struct Barrier {
    count: u32,
    arrived: u32,
    generation: u64,
}

#[derive(Clone, Debug, Default)]
struct Once {
    running: Option<Tid>,
    done: bool,
}

/// What executing an event produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executed {
    /// The return value for the program (see [`code`]).
    pub result: i32,
    /// For [`Op::Create`]: the new thread.
    pub child: Option<Tid>,
}

/// Misuse of the protocol by the program side (a bug in libpos or a corrupt stream).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateError {
    UnknownThread(Tid),
    NotRunning(Tid, String),
    NotEnabled(Tid, String),
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::UnknownThread(t) => write!(f, "unknown thread t{t}"),
            StateError::NotRunning(t, s) => write!(f, "thread t{t} posted while {s}"),
            StateError::NotEnabled(t, s) => write!(f, "thread t{t} is not enabled: {s}"),
        }
    }
}

impl std::error::Error for StateError {}

/// One blocked thread in a deadlock report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockedThread {
    pub thread: ThreadName,
    pub op: String,
    pub waits_for: String,
}

/// Threads remain and none is enabled.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Deadlock {
    pub blocked: Vec<BlockedThread>,
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .blocked
            .iter()
            .map(|b| format!("thread {} at {} waits for {}", b.thread, b.op, b.waits_for))
            .collect();
        write!(f, "{}", parts.join("; "))
    }
}

/// The whole synchronisation state of one run.
#[derive(Clone, Debug, Default)]
pub struct State {
    threads: Vec<Thread>,
    mutexes: AddrMap<Mutex>,
    conds: AddrMap<Cond>,
    rwlocks: AddrMap<RwLock>,
    sems: AddrMap<i64>,
    barriers: AddrMap<Barrier>,
    onces: AddrMap<Once>,
    futexes: AddrMap<Futex>,
    /// What each thread's posted [`Op::FutexRequeued`] did (woken + moved), by thread id,
    /// handed back when its event runs.
    requeued: AddrMap<i32>,
    exit_code: Option<i32>,
    /// Threads whose status is [`Status::Running`] / [`Status::Finished`], kept by
    /// [`State::set_status`] so the per-decision checks are O(1).
    running: usize,
    finished: usize,
    /// Threads whose status is [`Status::Outside`].
    outside: usize,
    /// The enabled events, kept up to date by [`State::set_status`] and by re-checking the
    /// blockable threads after synchronisation operations (see [`enabled`]).
    enabled: EnabledSet,
    /// Virtual time (see [`clock`]).
    clock: Clock,
    /// Pending threads whose operation has a deadline, kept by [`State::set_status`], so
    /// that the coordinator looks at the clock only when some thread waits on it.
    timed: usize,
    /// Processes of the run, by number: 0 is the main process, then forked children in fork
    /// order (see [`procs`]).
    procs: Vec<procs::Proc>,
    /// Some robust mutex was locked: exits look for robust mutexes their thread held.
    any_robust: bool,
}

impl State {
    /// A fresh run: the main thread exists and is running (it will post [`Op::Start`]).
    pub fn new() -> Self {
        State {
            threads: vec![Thread {
                name: ThreadName::main(),
                children: 0,
                status: Status::Running,
                barrier_gen: 0,
                cancel: CancelState::default(),
                interrupted: false,
            }],
            running: 1,
            procs: vec![procs::Proc::main()],
            ..Default::default()
        }
    }

    /// Change a thread's status, keeping the running/finished counts and the enabled set.
    #[inline]
    fn set_status(&mut self, t: Tid, status: Status) {
        match self.threads[t as usize].status {
            Status::Running => self.running -= 1,
            Status::Finished => self.finished -= 1,
            Status::Outside => self.outside -= 1,
            Status::Pending(op) => {
                self.enabled.remove(t);
                if may_block(&op) {
                    self.enabled.set_blockable(t, None);
                    if op.deadline().is_some() {
                        self.timed -= 1;
                    }
                }
            }
        }
        self.threads[t as usize].status = status;
        match status {
            Status::Running => self.running += 1,
            Status::Finished => self.finished += 1,
            Status::Outside => self.outside += 1,
            Status::Pending(op) => {
                if op.deadline().is_some() {
                    self.timed += 1;
                }
                if !may_block(&op) {
                    self.enabled.insert(Event::new(t, op));
                } else {
                    let objects = Event::new(t, op).objects();
                    self.enabled.set_blockable(t, Some(objects));
                    if self.why_blocked(t, &op).is_none() {
                        self.enabled.insert(Event::new(t, op));
                    }
                }
            }
        }
    }

    /// Thread `t`, blocked in a wait, was sent a signal from outside the run (the kernel or
    /// another process: a child's `SIGCHLD`, a `kill` from a shell): as after an
    /// [`Op::Kill`], its wait ends for the handler, which runs after an [`Op::Handler`] step.
    /// Not a step itself: the caller (libpos's decider) does this only when every thread is
    /// blocked, so that a wait the program relies on a signal to end is not a deadlock.
    /// False (nothing done) when `t` is not blocked in a wait.
    pub fn interrupt_from_outside(&mut self, t: Tid) -> bool {
        let Some(th) = self.threads.get(t as usize) else {
            return false;
        };
        let Status::Pending(op) = th.status else {
            return false;
        };
        if th.interrupted
            || !may_block(&op)
            || op == Op::Handler
            || self.why_blocked_here(t, &op).is_none()
        {
            return false;
        }
        self.threads[t as usize].interrupted = true;
        self.recheck_blockable();
        true
    }

    /// Re-check every pending thread whose operation may block, after a change to the
    /// synchronisation state (only those can change between enabled and blocked).
    fn recheck_blockable(&mut self) {
        self.recheck_blockable_on(None);
    }

    /// [`State::recheck_blockable`] limited, when `changed` is given, to the threads whose
    /// pending operation touches one of those objects. Enough after an executed event: what
    /// decides whether an operation is blocked is the state of its own objects (the mutex,
    /// condvar, rwlock, semaphore, barrier, once control, or for a join the target thread,
    /// which only its exit changes), and an event changes only its own objects ([`Op::Create`]
    /// and notifications excepted: they re-check everything).
    fn recheck_blockable_on(&mut self, changed: Option<[Option<Obj>; 2]>) {
        if !self.enabled.any_blockable() {
            return;
        }
        let changed_summary = changed.as_ref().map_or(!0, enabled::summary);
        for w in 0..self.enabled.blockable_words() {
            let mut bits = self.enabled.blockable_word(w);
            while bits != 0 {
                let t = (w * 64) as Tid + bits.trailing_zeros();
                bits &= bits - 1;
                if let Some(objs) = &changed {
                    if self.enabled.blockable_summary(t) & changed_summary == 0 {
                        continue; // no object in common
                    }
                    let mine = self.enabled.blockable_objects(t);
                    let meets = |o: &Obj| objs.iter().flatten().any(|x| x.overlaps(o));
                    if !mine.iter().flatten().any(meets) {
                        continue;
                    }
                }
                let Status::Pending(op) = self.threads[t as usize].status else {
                    continue;
                };
                let enabled = self.why_blocked(t, &op).is_none();
                if enabled != self.enabled.contains(t) {
                    if enabled {
                        self.enabled.insert(Event::new(t, op));
                    } else {
                        self.enabled.remove(t);
                    }
                }
            }
        }
    }

    /// A new thread, running; returns its id.
    fn push_thread(&mut self, name: ThreadName) -> Tid {
        let id = self.threads.len() as Tid;
        self.threads.push(Thread {
            name,
            children: 0,
            status: Status::Running,
            barrier_gen: 0,
            cancel: CancelState::default(),
            interrupted: false,
        });
        self.running += 1;
        id
    }

    /// A run in which `n >= 1` threads all exist at step 0 and are running (each will post
    /// its first event): main (`0`) and `n - 1` children named `0.1`, `0.2`, ... as if main had
    /// created them before the first scheduling point. Used by the simulator's paper mode,
    /// where the POS paper's programs start with all their threads (Yuan et al. CAV'18, §2).
    pub fn with_initial_threads(n: usize) -> Self {
        let mut s = State::new();
        for _ in 1..n {
            let parent = &mut s.threads[0];
            parent.children += 1;
            let name = parent.name.child(parent.children);
            s.push_thread(name);
        }
        s
    }

    pub fn num_threads(&self) -> usize {
        self.threads.len()
    }

    pub fn name(&self, t: Tid) -> &ThreadName {
        &self.threads[t as usize].name
    }

    pub fn tid_of(&self, name: &ThreadName) -> Option<Tid> {
        self.threads
            .iter()
            .position(|t| &t.name == name)
            .map(|i| i as Tid)
    }

    pub fn status(&self, t: Tid) -> Status {
        self.threads[t as usize].status
    }

    /// The pending event of `t`, if it has posted one.
    pub fn pending(&self, t: Tid) -> Option<Event> {
        match self.threads.get(t as usize)?.status {
            Status::Pending(op) => Some(Event::new(t, op)),
            _ => None,
        }
    }

    /// `exit()` ran, or every thread finished.
    pub fn is_over(&self) -> bool {
        debug_assert_eq!(
            self.finished,
            self.threads
                .iter()
                .filter(|t| t.status == Status::Finished)
                .count()
        );
        self.exit_code.is_some() || self.finished == self.threads.len()
    }

    /// The code passed to an executed [`Op::ProcessExit`].
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }

    /// No thread is running: every live thread has posted (or is blocked outside control,
    /// [`Status::Outside`]), so a decision can be made.
    pub fn all_posted(&self) -> bool {
        debug_assert_eq!(self.running, self.running().count());
        self.running == 0
    }

    /// Threads that are still running uncontrolled code (not yet posted).
    pub fn running(&self) -> impl Iterator<Item = Tid> + '_ {
        self.threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.status == Status::Running)
            .map(|(i, _)| i as Tid)
    }

    /// Thread `t` posts its next pending event.
    #[inline]
    pub fn post(&mut self, t: Tid, op: Op) -> Result<(), StateError> {
        if let Op::ForkFailed { target } = op {
            self.abandon_process(target);
        }
        let Some(th) = self.threads.get_mut(t as usize) else {
            return Err(StateError::UnknownThread(t));
        };
        if let Op::FutexRequeued {
            addr,
            addr2,
            n1,
            n2,
        } = op
        {
            if matches!(th.status, Status::Running | Status::Outside) {
                self.requeue(t, addr, addr2, n1, n2);
            }
        }
        let th = &mut self.threads[t as usize];
        if th.status != Status::Running {
            if th.status == Status::Outside {
                // Back from a call outside control: it posts like a running thread.
                self.register_futex_waiter(t, &op);
                self.set_status(t, Status::Pending(op));
                return Ok(());
            }
            return Err(StateError::NotRunning(t, format!("{:?}", th.status)));
        }
        // `set_status(t, Status::Pending(op))`, inlined for the common case of an operation
        // that cannot block, so that `op` reaches the enabled set in registers.
        if may_block(&op) {
            self.register_futex_waiter(t, &op);
            self.set_status(t, Status::Pending(op));
        } else {
            th.status = Status::Pending(op);
            self.running -= 1;
            self.enabled.insert(Event::new(t, op));
        }
        Ok(())
    }

    /// Posting a futex wait makes `t` a waiter at once: libpos compared the word while `t`
    /// was the only controlled thread running, so no wake can come between (no lost wake-up).
    #[inline]
    fn register_futex_waiter(&mut self, t: Tid, op: &Op) {
        if let Op::FutexWait { addr, bitset, .. } = *op {
            let f = self.futexes.entry(addr).or_default();
            let seq = f.next_seq;
            f.next_seq += 1;
            f.waiters.push((t, seq, bitset));
        }
    }

    /// Whether waiter `t` of futex `addr` may consume a wake token.
    fn futex_can_wake(&self, addr: u64, t: Tid) -> bool {
        let Some(f) = self.futexes.get(&addr) else {
            return false;
        };
        match f.waiters.iter().find(|w| w.0 == t) {
            Some(&(_, seq, bitset)) => f.token_for(seq, bitset).is_some(),
            None => false,
        }
    }

    /// Running thread `t` is blocked in the kernel outside control: stop waiting for its post
    /// (see [`Status::Outside`]). Not a scheduling step; the strategy never sees it enabled.
    pub fn mark_outside(&mut self, t: Tid) -> Result<(), StateError> {
        match self.threads.get(t as usize).map(|th| th.status) {
            Some(Status::Running) => {
                self.set_status(t, Status::Outside);
                Ok(())
            }
            Some(s) => Err(StateError::NotRunning(t, format!("{s:?}"))),
            None => Err(StateError::UnknownThread(t)),
        }
    }

    /// Threads blocked outside control ([`Status::Outside`]).
    pub fn outside(&self) -> impl Iterator<Item = Tid> + '_ {
        self.threads
            .iter()
            .enumerate()
            .filter(|(_, t)| t.status == Status::Outside)
            .map(|(i, _)| i as Tid)
    }

    /// Whether some thread is blocked outside control.
    pub fn any_outside(&self) -> bool {
        debug_assert_eq!(self.outside, self.outside().count());
        self.outside > 0
    }

    /// Whether a thread other than `t` is waiting at an event that could run without `t`
    /// posting again: enabled now, or timed (virtual time can reach its deadline while `t` is
    /// set aside). A silent thread `t` that is running (a spin-wait on a flag, a long
    /// computation) is set aside only then: otherwise nothing could use the turn.
    pub fn others_could_run(&self, t: Tid) -> bool {
        self.threads.iter().enumerate().any(|(u, th)| {
            u as Tid != t
                && match th.status {
                    Status::Pending(op) => op.deadline().is_some() || self.is_enabled(u as Tid),
                    _ => false,
                }
        })
    }

    /// A thread vanished without posting its exit (killed, `pthread_exit` from a destructor, ...).
    pub fn mark_finished(&mut self, t: Tid) {
        if (t as usize) < self.threads.len() {
            if let Status::Pending(Op::FutexWait { addr, .. }) = self.threads[t as usize].status {
                if let Some(f) = self.futexes.get_mut(&addr) {
                    f.waiters.retain(|w| w.0 != t);
                }
            }
            self.set_status(t, Status::Finished);
            self.owner_died(t);
            self.recheck_blockable();
        }
    }

    /// Thread `t` is gone: the robust mutexes it held are free, their next locker gets
    /// `EOWNERDEAD` (the kernel's robust list does this for real). A normal mutex stays held
    /// by the dead thread, as for real. Returns whether some mutex was freed.
    fn owner_died(&mut self, t: Tid) -> bool {
        if !self.any_robust {
            return false;
        }
        let mut freed = false;
        for mx in self.mutexes.values_mut() {
            if mx.robust && mx.owner == Some(t) {
                mx.release();
                mx.health = Health::Died;
                freed = true;
            }
        }
        freed
    }

    /// Thread `t` ends while it runs once routines (it was cancelled in one, or the routine
    /// called `pthread_exit`): as glibc's cleanup handler does, each such control returns to
    /// never run, and a thread waiting in its `pthread_once` runs the routine itself.
    /// Without it the waiters waited for the dead thread for ever (a false deadlock).
    /// Returns whether any was.
    fn abandon_onces(&mut self, t: Tid) -> bool {
        let mut any = false;
        for once in self.onces.values_mut() {
            if once.running == Some(t) {
                once.running = None;
                any = true;
            }
        }
        any
    }

    /// `sem_init`: not a scheduling point.
    pub fn init_sem(&mut self, s: u64, value: u32) {
        self.sems.insert(s, value as i64);
        self.recheck_blockable();
    }

    /// `pthread_once` on control `o` whose memory reads as never run (`PTHREAD_ONCE_INIT`):
    /// unless its init is running now (libpos marks the real control done only after the
    /// init), the memory holds a new control where one that finished was, freed and reused,
    /// so the old one's record goes. With `done` the memory reads as completed: a control
    /// without a record was completed outside control (before libpos took over), so it is
    /// recorded as done and its init never runs again; a known one is left as it is (its
    /// schedule unchanged). Not a scheduling point.
    pub fn init_once(&mut self, o: u64, done: bool) {
        if done {
            self.onces.entry(o).or_insert(Once {
                running: None,
                done: true,
            });
        } else if self.onces.get(&o).is_some_and(|x| x.running.is_none()) {
            self.onces.remove(&o);
        }
    }

    /// `pthread_mutex_init`, `pthread_rwlock_init` or `pthread_spin_init` at `m`: the memory
    /// holds a new lock, free and consistent, whatever was there (a mutex made not
    /// recoverable is reused so, as POSIX says; a fork child's `pthread_atfork` handler
    /// re-initialises a lock its parent held). Not a scheduling point.
    pub fn init_mutex(&mut self, m: u64) {
        let mutex = self.mutexes.remove(&m).is_some();
        if self.rwlocks.remove(&m).is_some() || mutex {
            self.recheck_blockable();
        }
    }

    /// `pthread_barrier_init`: not a scheduling point.
    pub fn init_barrier(&mut self, b: u64, count: u32) {
        self.barriers.insert(
            b,
            Barrier {
                count: count.max(1),
                ..Default::default()
            },
        );
        self.recheck_blockable();
    }

    /// Whether the pending event of `t` may run now.
    pub fn is_enabled(&self, t: Tid) -> bool {
        match self.threads.get(t as usize).map(|th| th.status) {
            Some(Status::Pending(op)) => self.why_blocked(t, &op).is_none(),
            _ => false,
        }
    }

    /// The enabled events, in thread order (maintained incrementally: no scan). `&mut` only
    /// to tidy the maintained set; the state does not change.
    #[inline]
    pub fn enabled_events(&mut self) -> &[Event] {
        #[cfg(debug_assertions)]
        {
            let scan = self.scan_enabled();
            debug_assert_eq!(self.enabled.events(), scan.as_slice());
        }
        self.enabled.events()
    }

    /// Whether no event is enabled (what `enabled_events().is_empty()` says, without `&mut`).
    pub fn none_enabled(&self) -> bool {
        self.enabled.is_empty()
    }

    /// Replace the contents of `out` by the enabled events (in thread order).
    pub fn enabled_into(&self, out: &mut Vec<Event>) {
        self.enabled.copy_into(out);
        debug_assert_eq!(*out, self.scan_enabled());
    }

    /// The enabled events by a scan of every thread: the definition the incremental set must
    /// agree with (checked in debug builds and by the tests).
    fn scan_enabled(&self) -> Vec<Event> {
        let mut out = Vec::new();
        let mut owners = [(0u64, None::<Tid>); 4];
        let mut known = 0;
        for (i, th) in self.threads.iter().enumerate() {
            let Status::Pending(op) = th.status else {
                continue;
            };
            let t = i as Tid;
            let enabled = if !may_block(&op) {
                true
            } else if let Op::Lock { m, kind } = op {
                let owner = match owners[..known].iter().find(|e| e.0 == m) {
                    Some(e) => e.1,
                    None => {
                        let o = self.mutexes.get(&m).and_then(|mx| mx.owner);
                        if known < owners.len() {
                            owners[known] = (m, o);
                            known += 1;
                        }
                        o
                    }
                };
                owner.is_none_or(|o| o == t && kind.base() != MutexKind::Normal)
            } else {
                self.why_blocked(t, &op).is_none()
            };
            debug_assert_eq!(enabled, self.why_blocked(t, &op).is_none());
            if enabled {
                out.push(Event::new(t, op));
            }
        }
        out
    }

    pub fn enabled(&self) -> Vec<Event> {
        let mut v = Vec::new();
        self.enabled_into(&mut v);
        v
    }

    /// All pending events, enabled or not.
    pub fn pending_events(&self) -> impl Iterator<Item = Event> + '_ {
        self.threads
            .iter()
            .enumerate()
            .filter_map(|(i, th)| match th.status {
                Status::Pending(op) => Some(Event::new(i as Tid, op)),
                _ => None,
            })
    }

    /// Why `op` of thread `t` cannot run now, or `None` when it is enabled (only operations
    /// listed in [`may_block`] can be blocked: keep the two in sync). Allocation-free:
    /// this is the hot path of every decision ([`State::enabled_into`]); the text for reports
    /// is built only when asked for ([`State::blocker`]).
    #[inline]
    fn why_blocked(&self, t: Tid, op: &Op) -> Option<Why> {
        if self.threads[t as usize].interrupted {
            return None; // the wait ends for the signal handler (see `apply`)
        }
        self.why_blocked_here(t, op)
    }

    /// [`State::why_blocked`] regardless of a pending signal handler.
    #[inline]
    fn why_blocked_here(&self, t: Tid, op: &Op) -> Option<Why> {
        use Op::*;
        match *op {
            Join { .. }
            | TimedJoin { .. }
            | SemWait { .. }
            | SemTimedWait { .. }
            | SleepUntil { .. }
                if self.cancel_due(t) =>
            {
                None
            }
            Join { target } => match self.threads.get(target as usize) {
                Some(th) if th.status != Status::Finished => Some(Why::Thread(target)),
                _ => None,
            },
            TimedJoin { target, deadline } => self
                .why_blocked_here(t, &Join { target })
                .filter(|_| !self.clock.may_time_out(deadline)),
            TimedLock { m, kind, deadline } => self
                .why_blocked_here(t, &Lock { m, kind })
                .filter(|_| !self.clock.may_time_out(deadline)),
            TimedRdLock { l, deadline } => self
                .why_blocked_here(t, &RdLock { l })
                .filter(|_| !self.clock.may_time_out(deadline)),
            TimedWrLock { l, deadline } => self
                .why_blocked_here(t, &WrLock { l })
                .filter(|_| !self.clock.may_time_out(deadline)),
            SemTimedWait { s, deadline } => self
                .why_blocked_here(t, &SemWait { s })
                .filter(|_| !self.clock.may_time_out(deadline)),
            SleepUntil { deadline } => {
                (!self.clock.reached(deadline)).then_some(Why::Deadline(deadline))
            }
            FutexWait { addr, deadline, .. } => {
                if (deadline != NO_DEADLINE && self.clock.may_time_out(deadline))
                    || self.futex_can_wake(addr, t)
                {
                    None
                } else {
                    Some(Why::Futex(addr))
                }
            }
            Lock { m, kind } => match self.mutexes.get(&m).and_then(|mx| mx.owner) {
                None => None,
                Some(o) if o == t && kind.base() != MutexKind::Normal => None,
                Some(o) => Some(Why::Mutex(m, o)),
            },
            CondWake { c, m, deadline } => {
                if let Some(o) = self.mutexes.get(&m).and_then(|mx| mx.owner) {
                    return Some(Why::Mutex(m, o));
                }
                if (deadline != NO_DEADLINE && self.clock.may_time_out(deadline))
                    || self.cond_can_wake(c, t)
                    || self.cancel_due(t)
                {
                    None
                } else {
                    Some(Why::Signal(c))
                }
            }
            RdLock { l } => self
                .rwlocks
                .get(&l)
                .and_then(|r| r.writer)
                .map(|w| Why::RwWriter(l, w)),
            WrLock { l } => {
                let r = self.rwlocks.get(&l)?;
                if let Some(w) = r.writer {
                    Some(Why::RwWriter(l, w))
                } else if !r.readers.is_empty() {
                    Some(Why::RwReaders(l))
                } else {
                    None
                }
            }
            SemWait { s } => {
                if self.sems.get(&s).copied().unwrap_or(0) > 0 {
                    None
                } else {
                    Some(Why::Sem(s))
                }
            }
            BarrierLeave { b } => {
                let bar = self.barriers.get(&b)?;
                if bar.generation > self.threads[t as usize].barrier_gen {
                    None
                } else {
                    Some(Why::Barrier(b))
                }
            }
            OnceBegin { o } => match self.onces.get(&o).and_then(|x| x.running) {
                Some(r) if r != t => Some(Why::Once(o, r)),
                _ => None,
            },
            WaitProc { target } => self.why_wait_blocked(t, target),
            // Only a signal a `Kill` sent has a handler step (the thread is interrupted,
            // which `why_blocked` answers first).
            Handler => Some(Why::Kill),
            _ => None,
        }
    }

    /// Why `op` of thread `t` cannot run now, in words, or `None` when it is enabled.
    fn blocker(&self, t: Tid, op: &Op) -> Option<String> {
        let why = self.why_blocked(t, op)?;
        Some(match why {
            Why::Thread(target) => format!("thread {} to finish", self.name(target)),
            Why::Kill => "a pthread_kill of this thread".to_string(),
            Why::Mutex(m, o) => format!("mutex {} held by thread {}", Addr(m), self.name(o)),
            Why::Signal(c) => format!("a signal on condvar {}", Addr(c)),
            Why::RwWriter(l, w) => format!("rwlock {} written by thread {}", Addr(l), self.name(w)),
            Why::RwReaders(l) => {
                let names: Vec<String> = self
                    .rwlocks
                    .get(&l)
                    .map(|r| {
                        r.readers
                            .iter()
                            .map(|&x| self.name(x).to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                format!("rwlock {} read by {}", Addr(l), names.join(","))
            }
            Why::Sem(s) => format!("semaphore {} to be posted", Addr(s)),
            Why::Barrier(b) => {
                let (arrived, count) = self
                    .barriers
                    .get(&b)
                    .map_or((0, 0), |bar| (bar.arrived, bar.count));
                format!("barrier {} ({arrived} of {count} arrived)", Addr(b))
            }
            Why::Once(o, r) => format!("once {} run by thread {}", Addr(o), self.name(r)),
            Why::Deadline(d) => format!("virtual time {d} ns"),
            Why::Futex(a) => format!("a wake on futex {}", Addr(a)),
            Why::Process(Some(p)) => format!("process p{p} to exit"),
            Why::Process(None) => "a child process to exit".to_string(),
        })
    }

    /// Thread `t`'s next cancellation point acts on a pending cancellation request.
    #[inline]
    fn cancel_due(&self, t: Tid) -> bool {
        self.threads[t as usize].cancel.due()
    }

    /// Whether thread `t` set asynchronous cancellation (`PTHREAD_CANCEL_ASYNCHRONOUS`) and
    /// may be cancelled: the runner sets such a thread aside when it computes silently, so
    /// that a cancellation can reach it for real ([`code::CANCEL_OUTSIDE`]).
    pub fn async_cancellable(&self, t: Tid) -> bool {
        self.threads
            .get(t as usize)
            .is_some_and(|th| th.cancel.asynchronous && !th.cancel.disabled && !th.cancel.acted)
    }

    /// Whether thread `t` has been cancelled and acted on it (it is exiting as cancelled).
    pub fn cancelled(&self, t: Tid) -> bool {
        self.threads
            .get(t as usize)
            .is_some_and(|th| th.cancel.acted)
    }

    fn cond_can_wake(&self, c: u64, t: Tid) -> bool {
        let Some(cv) = self.conds.get(&c) else {
            return false;
        };
        match cv.waiters.iter().find(|w| w.tid == t) {
            Some(w) => w.woken || cv.tokens.iter().any(|&upto| upto > w.seq),
            None => true, // not waiting (e.g. the wait failed): nothing to wait for
        }
    }

    /// Apply the pending event of `t`. The thread becomes running (or finished).
    pub fn execute(&mut self, t: Tid) -> Result<Executed, StateError> {
        let op = match self.threads.get(t as usize).map(|th| th.status) {
            Some(Status::Pending(op)) => op,
            Some(s) => return Err(StateError::NotEnabled(t, format!("{s:?}"))),
            None => return Err(StateError::UnknownThread(t)),
        };
        if may_block(&op) && self.why_blocked(t, &op).is_some() {
            let why = self.blocker(t, &op).unwrap_or_default();
            return Err(StateError::NotEnabled(t, why));
        }
        self.set_status(t, Status::Running);
        Ok(self.apply_and_recheck(t, op))
    }

    /// [`State::execute`] for the event at `index` of [`State::enabled_events`] (the
    /// coordinator's choice): it is enabled by construction, so no checks and no search for
    /// its entry; the result comes back in registers, not through a `Result` in memory.
    #[inline]
    pub(crate) fn execute_enabled(&mut self, index: usize) -> Executed {
        let t = self.enabled.remove_at(index);
        let Status::Pending(op) = self.threads[t as usize].status else {
            unreachable!("an enabled thread is pending");
        };
        debug_assert!(!may_block(&op) || self.why_blocked(t, &op).is_none());
        // `set_status(t, Status::Running)`, its enabled entry being gone already.
        self.threads[t as usize].status = Status::Running;
        self.running += 1;
        if is_local(&op) {
            if op == Op::Sleep && self.threads[t as usize].cancel.requested {
                // A sleep is a cancellation point: see `apply`.
                return self.apply_and_recheck(t, op);
            }
            // Memory accesses, yields, ...: no synchronisation state to change or re-check.
            return Executed {
                result: code::OK,
                child: None,
            };
        }
        if may_block(&op) {
            self.enabled.set_blockable(t, None);
        }
        self.apply_and_recheck(t, op)
    }

    /// Apply `t`'s `op` (enabled, `t` now running) and re-check the threads it may concern.
    fn apply_and_recheck(&mut self, t: Tid, op: Op) -> Executed {
        let mut child = None;
        let before = self.clock.now();
        let result = self.apply(t, op, &mut child);
        if op == Op::Create
            || matches!(op, Op::Cancel { .. } | Op::Kill { .. } | Op::Fork)
            || (op == Op::Exit && self.process_of(t) != 0)
            || self.clock.now() != before
        {
            // A cancellation request may enable the target's blocked cancellation point, and
            // a moved clock may end timed waits.
            self.recheck_blockable();
        } else if !is_local(&op) {
            self.recheck_blockable_on(Some(Event::new(t, op).objects()));
        }
        Executed { result, child }
    }

    fn apply(&mut self, t: Tid, op: Op, child: &mut Option<Tid>) -> i32 {
        use code::*;
        use Op::*;
        if is_cancellation_point(&op) && self.cancel_due(t) {
            return self.act_on_cancel(t, op);
        }
        if self.threads[t as usize].interrupted
            && ((may_block(&op) && op != Op::Handler && self.why_blocked_here(t, &op).is_some())
                || op == Op::Exit)
        {
            // A thread does not end with a handler still to run: its exit waits for it too.
            return self.interrupt(t, op);
        }
        match op {
            Start | Yield | Sleep | Detach { .. } => OK,
            Read { .. } | Write { .. } | AtomicLoad { .. } | AtomicStore { .. } => OK,
            AtomicRmw { .. } => OK,
            Exit => {
                self.set_status(t, Status::Finished);
                let robust = self.owner_died(t);
                if self.abandon_onces(t) || robust {
                    self.recheck_blockable();
                }
                OK
            }
            ProcessExit { .. } | Exec if self.process_of(t) != 0 => {
                self.leave_process(self.process_of(t));
                OK
            }
            Exec => OK,
            Fork => {
                *child = Some(self.fork_process(t));
                OK
            }
            WaitProc { target } => self.reap(t, target),
            ForkFailed { .. } => OK,
            ProcessExit { code } => {
                self.exit_code = Some(code);
                for th in &mut self.threads {
                    th.status = Status::Finished;
                }
                self.running = 0;
                self.outside = 0;
                self.finished = self.threads.len();
                self.enabled.clear();
                OK
            }
            Create => {
                let parent = &mut self.threads[t as usize];
                parent.children += 1;
                let name = parent.name.child(parent.children);
                *child = Some(self.push_thread(name));
                OK
            }
            Join { target } => {
                if target == t {
                    EDEADLK
                } else if (target as usize) < self.threads.len() {
                    OK
                } else {
                    ESRCH
                }
            }
            TimedJoin { target, deadline } => match self.apply(t, Join { target }, child) {
                OK if self.threads[target as usize].status != Status::Finished => {
                    self.time_out(deadline)
                }
                r => r,
            },
            TryJoin { target } => match self.apply(t, Join { target }, child) {
                OK if self.threads[target as usize].status != Status::Finished => EBUSY,
                r => r,
            },
            SleepUntil { deadline } => {
                self.clock.advance_to(deadline);
                OK
            }
            FutexWait { addr, deadline, .. } => {
                let f = self.futexes.entry(addr).or_default();
                let mut result = None;
                if let Some(i) = f.waiters.iter().position(|w| w.0 == t) {
                    let (_, seq, bitset) = f.waiters.remove(i);
                    if let Some(k) = f.token_for(seq, bitset) {
                        f.tokens.remove(k);
                        result = Some(OK);
                    }
                }
                if f.waiters.is_empty() {
                    f.tokens.clear();
                }
                match result {
                    Some(r) => r,
                    None => self.time_out(deadline),
                }
            }
            FutexWake { addr, n, bitset } => match self.futexes.get_mut(&addr) {
                Some(f) => {
                    let matching = f.waiters.iter().filter(|w| w.2 & bitset != 0).count();
                    let woken = (n as usize).min(matching.saturating_sub(f.tokens.len()));
                    let upto = f.next_seq;
                    f.tokens
                        .extend(std::iter::repeat_n((0, upto, bitset), woken));
                    woken as i32
                }
                None => 0,
            },
            FutexRequeue { .. } => OK,
            FutexRequeued { .. } => self.requeued.remove(&(t as u64)).unwrap_or(OK),
            Lock { m, kind } => self.lock(t, m, kind, false).unwrap_or(OK),
            // A trylock fails with EBUSY on a mutex held by anyone, its caller included
            // (POSIX, glibc): only lock and timedlock report EDEADLK on an error-checking one
            // (and glibc's trylock of a robust one).
            TryLock { m, kind } => match self.lock(t, m, kind, true) {
                Some(EDEADLK) if !kind.robust() => EBUSY,
                r => r.unwrap_or(OK),
            },
            TimedLock { m, kind, deadline } => match self.lock(t, m, kind, true) {
                Some(EBUSY) => self.time_out(deadline),
                r => r.unwrap_or(OK),
            },
            Unlock { m, kind } => {
                let mx = self.mutexes.entry(m).or_default();
                match mx.owner {
                    Some(o) if o == t => {
                        mx.count -= 1;
                        if mx.count == 0 {
                            mx.release();
                        }
                        OK
                    }
                    // glibc checks the owner of every robust mutex.
                    _ if kind != MutexKind::Normal => EPERM,
                    _ => {
                        mx.owner = None;
                        mx.count = 0;
                        OK
                    }
                }
            }
            Consistent { m } => match self.mutexes.get_mut(&m) {
                Some(mx) if mx.robust && mx.health == Health::Inconsistent => {
                    mx.health = Health::Fine;
                    OK
                }
                _ => EINVAL,
            },
            CondWait { c, m } => {
                let mx = self.mutexes.entry(m).or_default();
                let saved = if mx.owner == Some(t) { mx.count } else { 1 };
                mx.release();
                let cv = self.conds.entry(c).or_default();
                let seq = cv.next_seq;
                cv.next_seq += 1;
                cv.waiters.push(Waiter {
                    tid: t,
                    seq,
                    woken: false,
                    saved_count: saved.max(1),
                });
                OK
            }
            CondWake { c, m, deadline } => {
                let cv = self.conds.entry(c).or_default();
                let mut result = ETIMEDOUT;
                let mut saved = 1;
                if let Some(i) = cv.waiters.iter().position(|w| w.tid == t) {
                    let w = cv.waiters.remove(i);
                    saved = w.saved_count;
                    if w.woken {
                        result = OK;
                    } else if let Some(k) = oldest_token(&cv.tokens, w.seq) {
                        cv.tokens.remove(k);
                        result = OK;
                    }
                } else {
                    result = OK;
                }
                if cv.waiters.is_empty() {
                    cv.tokens.clear();
                }
                let mx = self.mutexes.entry(m).or_default();
                if mx.health == Health::NotRecoverable {
                    // glibc's wait returns without the mutex, which nobody can take again.
                    return ENOTRECOVERABLE;
                }
                // The mutex's state (its owner died during the wait) comes before the wait's.
                let taken = mx.take(t, saved);
                if taken != OK {
                    taken
                } else if result == ETIMEDOUT {
                    self.time_out(deadline)
                } else {
                    result
                }
            }
            CondSignal { c } => {
                if let Some(cv) = self.conds.get_mut(&c) {
                    let unwoken = cv.waiters.iter().filter(|w| !w.woken).count();
                    if cv.tokens.len() < unwoken {
                        cv.tokens.push(cv.next_seq);
                    }
                }
                OK
            }
            CondBroadcast { c } => {
                if let Some(cv) = self.conds.get_mut(&c) {
                    for w in &mut cv.waiters {
                        w.woken = true;
                    }
                    cv.tokens.clear();
                }
                OK
            }
            RdLock { l } => {
                self.rwlocks.entry(l).or_default().readers.push(t);
                OK
            }
            WrLock { l } => {
                self.rwlocks.entry(l).or_default().writer = Some(t);
                OK
            }
            TryRdLock { l } | TimedRdLock { l, .. } => {
                let r = self.rwlocks.entry(l).or_default();
                if r.writer.is_some() {
                    match op {
                        TimedRdLock { deadline, .. } => self.time_out(deadline),
                        _ => EBUSY,
                    }
                } else {
                    r.readers.push(t);
                    OK
                }
            }
            TryWrLock { l } | TimedWrLock { l, .. } => {
                let r = self.rwlocks.entry(l).or_default();
                if r.writer.is_some() || !r.readers.is_empty() {
                    match op {
                        TimedWrLock { deadline, .. } => self.time_out(deadline),
                        _ => EBUSY,
                    }
                } else {
                    r.writer = Some(t);
                    OK
                }
            }
            RwUnlock { l } => {
                let r = self.rwlocks.entry(l).or_default();
                if r.writer == Some(t) {
                    r.writer = None;
                    OK
                } else if let Some(i) = r.readers.iter().position(|&x| x == t) {
                    r.readers.swap_remove(i);
                    OK
                } else {
                    EPERM
                }
            }
            SemWait { s } => {
                *self.sems.entry(s).or_insert(0) -= 1;
                OK
            }
            SemTryWait { s } | SemTimedWait { s, .. } => {
                let v = self.sems.entry(s).or_insert(0);
                if *v > 0 {
                    *v -= 1;
                    OK
                } else if let SemTimedWait { deadline, .. } = op {
                    self.time_out(deadline)
                } else {
                    EAGAIN
                }
            }
            SemPost { s } => {
                *self.sems.entry(s).or_insert(0) += 1;
                OK
            }
            BarrierWait { b } => {
                let bar = self.barriers.entry(b).or_insert(Barrier {
                    count: 1,
                    ..Default::default()
                });
                self.threads[t as usize].barrier_gen = bar.generation;
                bar.arrived += 1;
                if bar.arrived >= bar.count {
                    bar.arrived = 0;
                    bar.generation += 1;
                    BARRIER_SERIAL
                } else {
                    OK
                }
            }
            BarrierLeave { .. } => OK,
            OnceBegin { o } => {
                let once = self.onces.entry(o).or_default();
                if once.done {
                    ONCE_DONE
                } else {
                    once.running = Some(t);
                    OK
                }
            }
            OnceEnd { o } => {
                let once = self.onces.entry(o).or_default();
                once.done = true;
                once.running = None;
                OK
            }
            Cancel { target } => match self.threads.get_mut(target as usize) {
                Some(th) if th.status == Status::Outside && !th.cancel.disabled => {
                    // Only the real cancellation can reach a thread blocked in a call
                    // libpos does not control (a reader blocked in `read` at shutdown).
                    let first = !th.cancel.acted;
                    th.cancel.requested = true;
                    th.cancel.acted = true;
                    if first {
                        code::CANCEL_OUTSIDE
                    } else {
                        OK
                    }
                }
                Some(th) => {
                    if th.status != Status::Finished {
                        th.cancel.requested = true;
                    }
                    OK
                }
                None => ESRCH,
            },
            TestCancel => OK,
            Kill { target } => {
                let mut back = false;
                if let Some(th) = self.threads.get_mut(target as usize) {
                    if th.status != Status::Finished && target != t {
                        th.interrupted = true;
                        back = th.status == Status::Outside;
                    }
                }
                if back {
                    // A thread blocked outside control (in `read`, say) runs the handler
                    // now, for real: wait for its handler step as for a running thread's
                    // post (set aside again if none comes). Deciding on without it, a
                    // second kill reached it before the first was handled, and the
                    // kernel merged the two signals into one handler call.
                    self.set_status(target, Status::Running);
                }
                OK
            }
            Handler => {
                self.threads[t as usize].interrupted = false;
                OK
            }
            SetCancelState { enabled } => {
                self.threads[t as usize].cancel.disabled = !enabled;
                OK
            }
            SetCancelType { asynchronous } => {
                self.threads[t as usize].cancel.asynchronous = asynchronous;
                OK
            }
        }
    }

    /// A timed wait times out: the clock moves to its deadline (it is there already unless
    /// [`TimeoutPolicy::Any`] let it fire early), so that time as the program sees it agrees.
    fn time_out(&mut self, deadline: u64) -> i32 {
        if deadline != NO_DEADLINE {
            self.clock.advance_to(deadline);
        }
        code::ETIMEDOUT
    }

    /// The current virtual time (ns since the start of the run).
    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    /// Choose when timed waits may time out (before the run's first decision).
    pub fn set_timeout_policy(&mut self, policy: TimeoutPolicy) {
        self.clock.set_policy(policy);
        self.recheck_blockable();
    }

    /// Whether some pending thread waits with a deadline (cheap: a counter).
    #[inline]
    pub fn any_timed(&self) -> bool {
        self.timed > 0
    }

    /// The earliest deadline of a pending operation that the clock has not reached yet and
    /// that passing time may end. While a thread is blocked outside control only sleeps
    /// count: it may be about to come back and release what a timed wait waits for.
    pub fn next_deadline(&self) -> Option<u64> {
        let all = self.outside == 0;
        self.earliest_deadline(|op| all || matches!(op, Op::SleepUntil { .. }))
    }

    /// The earliest deadline of a pending operation (a sleep or a timed wait) that the clock
    /// has not reached yet, whether or not a thread is outside control.
    pub fn next_timed_deadline(&self) -> Option<u64> {
        self.earliest_deadline(|_| true)
    }

    /// The earliest deadline not reached yet of the pending operations that `counts`.
    fn earliest_deadline(&self, counts: impl Fn(&Op) -> bool) -> Option<u64> {
        if self.timed == 0 {
            return None;
        }
        let now = self.clock.now();
        self.threads
            .iter()
            .filter_map(|th| match th.status {
                Status::Pending(op) if counts(&op) => op.deadline().filter(|&d| d > now),
                _ => None,
            })
            .min()
    }

    /// Move the clock to `t` if it is later, and re-check who is enabled. Returns whether
    /// it moved.
    pub fn advance_clock_to(&mut self, t: u64) -> bool {
        if t <= self.clock.now() {
            return false;
        }
        self.clock.advance_to(t);
        self.recheck_blockable();
        true
    }

    /// Let virtual time pass: move the clock to the earliest deadline of a pending operation
    /// that it has not reached yet, and re-check who is enabled. The coordinator calls this
    /// when no thread can make progress otherwise (see [`clock`]). Returns whether it moved.
    pub fn advance_clock(&mut self) -> bool {
        self.advance_clock_within(u64::MAX)
    }

    /// [`Self::advance_clock`], by at most `quantum` nanoseconds: the clock moves to the
    /// earliest deadline not reached yet or to `now + quantum`, whichever comes first (the
    /// coordinator lets time pass so while threads spin, see `Coordinator::let_time_pass`).
    /// Returns whether it moved.
    pub fn advance_clock_within(&mut self, quantum: u64) -> bool {
        let now = self.clock.now();
        match self.next_deadline() {
            Some(d) => {
                self.clock.advance_to(d.min(now.saturating_add(quantum)));
                self.recheck_blockable();
                true
            }
            None => false,
        }
    }

    /// Thread `t`'s wait `op`, blocked, ends for a signal handler ([`Op::Kill`]) without
    /// taking effect: a futex waiter leaves the word's waiters (the kernel's `EINTR`); every
    /// other wait leaves nothing behind (a condvar waiter stays one: libpos posts its wake
    /// again after the handler).
    fn interrupt(&mut self, t: Tid, op: Op) -> i32 {
        if let Op::FutexWait { addr, .. } = op {
            if let Some(f) = self.futexes.get_mut(&addr) {
                f.waiters.retain(|w| w.0 != t);
                if f.waiters.is_empty() {
                    f.tokens.clear();
                }
            }
        }
        code::EINTR
    }

    /// Thread `t`'s cancellation point `op` acts on its cancellation request instead of
    /// doing its work: as glibc, a condvar waiter re-acquires the mutex (its wake is
    /// enabled only when the mutex is free) without consuming a signal; everything else
    /// simply returns. The thread then exits as cancelled (libpos runs the cleanup).
    fn act_on_cancel(&mut self, t: Tid, op: Op) -> i32 {
        self.threads[t as usize].cancel.acted = true;
        if let Op::CondWake { c, m, .. } = op {
            let cv = self.conds.entry(c).or_default();
            let mut saved = 1;
            if let Some(i) = cv.waiters.iter().position(|w| w.tid == t) {
                saved = cv.waiters.remove(i).saved_count;
            }
            if cv.waiters.is_empty() {
                cv.tokens.clear();
            }
            let mx = self.mutexes.entry(m).or_default();
            if mx.health != Health::NotRecoverable {
                mx.take(t, saved);
            }
        }
        code::CANCELED
    }

    /// Shared by lock/trylock/timedlock. `Some(code)` when the call fails or self-deadlocks.
    fn lock(&mut self, t: Tid, m: u64, kind: MutexKind, try_only: bool) -> Option<i32> {
        let mx = self.mutexes.entry(m).or_default();
        if kind.robust() {
            mx.robust = true;
            self.any_robust = true;
        } else if mx.robust {
            // Memory of a robust mutex reused for another kind (only robust ones announce
            // their initialisation): its robust state is no longer.
            mx.robust = false;
            mx.health = Health::Fine;
        }
        match mx.owner {
            None if mx.health == Health::NotRecoverable => Some(code::ENOTRECOVERABLE),
            None => match mx.take(t, 1) {
                code::OK => None,
                r => Some(r),
            },
            Some(o) if o == t => match kind.base() {
                MutexKind::Recursive => {
                    mx.count += 1;
                    None
                }
                MutexKind::ErrorCheck => Some(code::EDEADLK),
                _ => Some(code::EBUSY), // a normal one: only reachable for try/timed
            },
            Some(_) => {
                debug_assert!(try_only, "lock executed while the mutex is held");
                Some(code::EBUSY)
            }
        }
    }

    /// Threads remain and none is enabled (only meaningful when [`State::all_posted`]).
    pub fn deadlock(&self) -> Option<Deadlock> {
        if self.is_over() || !self.all_posted() || self.outside > 0 {
            return None;
        }
        let mut blocked = Vec::new();
        for (i, th) in self.threads.iter().enumerate() {
            if let Status::Pending(op) = th.status {
                match self.blocker(i as Tid, &op) {
                    None => return None,
                    Some(why) => {
                        // Objects are named by their name space; past the 255th process
                        // that is not the process number ([`State::space_of`]).
                        let (space, p) = (self.space_of(i as Tid), th.name.process());
                        let named = |text: String| {
                            if space == p {
                                text
                            } else {
                                text.replace(&format!("p{space}:"), &format!("p{p}:"))
                            }
                        };
                        blocked.push(BlockedThread {
                            thread: th.name.clone(),
                            op: named(op.to_string()),
                            waits_for: named(why),
                        })
                    }
                }
            }
        }
        Some(Deadlock { blocked })
    }
}

/// Whether `op` can ever be blocked: only these reach [`State::why_blocked`] from the
/// per-decision scan, which keeps the common case (memory accesses) to one match.
#[inline]
pub fn may_block(op: &Op) -> bool {
    use Op::*;
    matches!(
        op,
        Join { .. }
            | Lock { .. }
            | CondWake { .. }
            | RdLock { .. }
            | WrLock { .. }
            | SemWait { .. }
            | BarrierLeave { .. }
            | OnceBegin { .. }
            | TimedLock { .. }
            | TimedRdLock { .. }
            | TimedWrLock { .. }
            | SemTimedWait { .. }
            | SleepUntil { .. }
            | TimedJoin { .. }
            | FutexWait { .. }
            | WaitProc { .. }
            | Handler
    )
}

/// Whether executing `op` leaves every other thread's enabledness as it was: it touches no
/// synchronisation state and creates or ends no thread (a create matters: a join on the new
/// tid goes from "no such thread" to "wait for it").
#[inline]
fn is_local(op: &Op) -> bool {
    use Op::*;
    matches!(
        op,
        Start
            | Yield
            | Sleep
            | Detach { .. }
            | Read { .. }
            | Write { .. }
            | AtomicLoad { .. }
            | AtomicStore { .. }
            | AtomicRmw { .. }
    )
}

/// Whether `op` is a cancellation point (POSIX) that is a scheduling point: condvar waits
/// (their wake half), joins, semaphore waits, sleeps and `pthread_testcancel`.
#[inline]
fn is_cancellation_point(op: &Op) -> bool {
    use Op::*;
    matches!(
        op,
        CondWake { .. }
            | Join { .. }
            | TimedJoin { .. }
            | SemWait { .. }
            | SemTimedWait { .. }
            | Sleep
            | SleepUntil { .. }
            | TestCancel
    )
}

/// Index of the oldest signal token a waiter with arrival number `seq` may consume.
/// Taking the oldest keeps every other waiter's tokens usable (the token sets are nested).
fn oldest_token(tokens: &[u64], seq: u64) -> Option<usize> {
    tokens.iter().position(|&upto| upto > seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MutexKind::*;

    fn run(s: &mut State, t: Tid, op: Op) -> i32 {
        s.post(t, op).unwrap();
        s.execute(t).unwrap().result
    }

    fn spawn(s: &mut State, parent: Tid) -> Tid {
        s.post(parent, Op::Create).unwrap();
        let c = s.execute(parent).unwrap().child.unwrap();
        run(s, c, Op::Start);
        c
    }

    #[test]
    fn children_get_stable_names() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let b = spawn(&mut s, 0);
        let c = spawn(&mut s, a);
        assert_eq!(s.name(a).to_string(), "0.1");
        assert_eq!(s.name(b).to_string(), "0.2");
        assert_eq!(s.name(c).to_string(), "0.1.1");
        assert_eq!(s.tid_of(&"0.1.1".parse().unwrap()), Some(c));
    }

    #[test]
    fn lock_order_inversion_deadlocks_and_names_both() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let b = spawn(&mut s, 0);
        run(
            &mut s,
            a,
            Op::Lock {
                m: 0x10,
                kind: Normal,
            },
        );
        run(
            &mut s,
            b,
            Op::Lock {
                m: 0x20,
                kind: Normal,
            },
        );
        s.post(
            a,
            Op::Lock {
                m: 0x20,
                kind: Normal,
            },
        )
        .unwrap();
        s.post(
            b,
            Op::Lock {
                m: 0x10,
                kind: Normal,
            },
        )
        .unwrap();
        s.post(0, Op::Join { target: a }).unwrap();
        assert!(s.enabled().is_empty());
        let d = s.deadlock().expect("deadlock");
        assert_eq!(d.blocked.len(), 3);
        let text = d.to_string();
        assert!(text.contains("0x10") && text.contains("0x20"), "{text}");
        assert!(
            text.contains("thread 0.1") && text.contains("thread 0.2"),
            "{text}"
        );
    }

    #[test]
    fn join_on_self_and_lost_signal_deadlock() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        s.post(0, Op::Join { target: 0 }).unwrap();
        assert!(s.deadlock().is_some(), "join on self never returns");

        // Lost wakeup: the signal comes before the wait, so nobody wakes the waiter.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        run(&mut s, 0, Op::CondSignal { c: 1 });
        run(&mut s, a, Op::Lock { m: 2, kind: Normal });
        run(&mut s, a, Op::CondWait { c: 1, m: 2 });
        s.post(
            a,
            Op::CondWake {
                c: 1,
                m: 2,
                deadline: crate::event::NO_DEADLINE,
            },
        )
        .unwrap();
        s.post(0, Op::Join { target: a }).unwrap();
        let d = s.deadlock().expect("lost wakeup deadlocks");
        assert!(d.to_string().contains("signal on condvar"), "{d}");
    }

    #[test]
    fn signal_wakes_a_chosen_waiter_only_among_those_waiting() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let b = spawn(&mut s, 0);
        for t in [a, b] {
            run(&mut s, t, Op::Lock { m: 2, kind: Normal });
            run(&mut s, t, Op::CondWait { c: 1, m: 2 });
            s.post(
                t,
                Op::CondWake {
                    c: 1,
                    m: 2,
                    deadline: crate::event::NO_DEADLINE,
                },
            )
            .unwrap();
        }
        assert!(!s.is_enabled(a) && !s.is_enabled(b));
        run(&mut s, 0, Op::CondSignal { c: 1 });
        // Either may wake: a scheduling choice.
        assert!(s.is_enabled(a) && s.is_enabled(b));
        assert_eq!(s.execute(b).unwrap().result, 0);
        assert!(!s.is_enabled(a), "mutex re-acquired by b");
        run(&mut s, b, Op::Unlock { m: 2, kind: Normal });
        assert!(!s.is_enabled(a), "one signal wakes one waiter");
        // A second signal with only a waiting wakes it; a later waiter cannot steal it.
        run(&mut s, 0, Op::CondSignal { c: 1 });
        assert!(s.is_enabled(a));
    }

    #[test]
    fn timed_waits_time_out_only_at_their_deadline() {
        let timed = |deadline| Op::TimedLock {
            m: 2,
            kind: Normal,
            deadline,
        };
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        run(&mut s, 0, Op::Lock { m: 2, kind: Normal });
        let a = spawn(&mut s, 0);
        // Held: blocked until the clock reaches the deadline, then it times out there.
        s.post(a, timed(5_000)).unwrap();
        assert!(!s.is_enabled(a) && s.any_timed());
        assert!(s.advance_clock());
        assert_eq!(s.now(), 5_000);
        assert!(s.is_enabled(a));
        assert_eq!(s.execute(a).unwrap().result, code::ETIMEDOUT);
        // Freed before the deadline: taken, the clock does not move.
        s.post(a, timed(9_000)).unwrap();
        assert!(!s.is_enabled(a));
        run(&mut s, 0, Op::Unlock { m: 2, kind: Normal });
        assert!(s.is_enabled(a));
        assert_eq!(s.execute(a).unwrap().result, 0);
        assert_eq!(s.now(), 5_000);
        assert!(!s.any_timed());
        // A semaphore, a sleep, a timed join: the same rule; a deadline already passed
        // times out at once, a sleep ends exactly at its deadline.
        assert_eq!(
            run(&mut s, 0, Op::SemTimedWait { s: 9, deadline: 10 }),
            code::ETIMEDOUT
        );
        s.post(0, Op::SleepUntil { deadline: 7_000 }).unwrap();
        assert!(!s.is_enabled(0));
        assert!(s.advance_clock());
        assert_eq!((s.now(), run_posted(&mut s, 0)), (7_000, 0));
        let j = Op::TimedJoin {
            target: a,
            deadline: 8_000,
        };
        s.post(0, j).unwrap();
        assert!(!s.is_enabled(0));
        assert!(s.advance_clock() && !s.advance_clock());
        assert_eq!(run_posted(&mut s, 0), code::ETIMEDOUT);
        assert_eq!(run(&mut s, 0, Op::TryJoin { target: a }), code::EBUSY);
        run(&mut s, 0, Op::SemPost { s: 9 });
        assert_eq!(run(&mut s, 0, Op::SemTimedWait { s: 9, deadline: 1 }), 0);
        // `--timeouts any`: a timed wait may time out before its deadline, which moves the
        // clock there; a sleep still waits for its deadline.
        s.set_timeout_policy(TimeoutPolicy::Any);
        assert_eq!(
            run(
                &mut s,
                0,
                Op::SemTimedWait {
                    s: 9,
                    deadline: 20_000
                }
            ),
            code::ETIMEDOUT
        );
        assert_eq!(s.now(), 20_000);
        s.post(0, Op::SleepUntil { deadline: 30_000 }).unwrap();
        assert!(!s.is_enabled(0));
        // No deadline pending: nothing to advance to, a real deadlock stays one.
        run(&mut s, a, Op::Lock { m: 3, kind: Normal });
        s.post(a, Op::Lock { m: 3, kind: Normal }).unwrap();
        assert!(s.advance_clock() && !s.advance_clock());
        assert_eq!(run_posted(&mut s, 0), 0);
        s.post(0, Op::Join { target: a }).unwrap();
        assert!(s.deadlock().is_some());
    }

    fn run_posted(s: &mut State, t: Tid) -> i32 {
        s.execute(t).unwrap().result
    }

    #[test]
    fn a_timed_cond_wait_times_out_at_its_deadline_with_the_mutex_free() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        run(&mut s, 0, Op::Lock { m: 2, kind: Normal });
        run(&mut s, 0, Op::CondWait { c: 1, m: 2 });
        let wake = Op::CondWake {
            c: 1,
            m: 2,
            deadline: 100,
        };
        s.post(0, wake).unwrap();
        assert!(!s.is_enabled(0));
        assert!(s.advance_clock());
        assert_eq!(run_posted(&mut s, 0), code::ETIMEDOUT);
        run(&mut s, 0, Op::CondWait { c: 1, m: 2 });
        let a = spawn(&mut s, 0);
        s.post(
            0,
            Op::CondWake {
                c: 1,
                m: 2,
                deadline: 300,
            },
        )
        .unwrap();
        run(&mut s, a, Op::CondSignal { c: 1 });
        assert_eq!(run_posted(&mut s, 0), 0);
        assert_eq!(s.now(), 100);
    }

    #[test]
    fn recursive_and_errorcheck_mutexes() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        assert_eq!(
            run(
                &mut s,
                0,
                Op::Lock {
                    m: 1,
                    kind: Recursive
                }
            ),
            0
        );
        assert_eq!(
            run(
                &mut s,
                0,
                Op::Lock {
                    m: 1,
                    kind: Recursive
                }
            ),
            0
        );
        let a = spawn(&mut s, 0);
        run(
            &mut s,
            0,
            Op::Unlock {
                m: 1,
                kind: Recursive,
            },
        );
        s.post(
            a,
            Op::Lock {
                m: 1,
                kind: Recursive,
            },
        )
        .unwrap();
        assert!(!s.is_enabled(a), "still held once");
        assert_eq!(
            run(
                &mut s,
                0,
                Op::Unlock {
                    m: 1,
                    kind: Recursive
                }
            ),
            0
        );
        assert!(s.is_enabled(a));
        s.execute(a).unwrap();
        assert_eq!(
            run(
                &mut s,
                0,
                Op::Unlock {
                    m: 1,
                    kind: ErrorCheck
                }
            ),
            code::EPERM
        );
        assert_eq!(
            run(
                &mut s,
                a,
                Op::Lock {
                    m: 1,
                    kind: ErrorCheck
                }
            ),
            code::EDEADLK
        );
        let held = |op| run(&mut s.clone(), a, op);
        assert_eq!(
            held(Op::TryLock {
                m: 1,
                kind: ErrorCheck
            }),
            code::EBUSY,
            "trylock by the owner"
        );
        assert_eq!(
            held(Op::TimedLock {
                m: 1,
                kind: ErrorCheck,
                deadline: 0
            }),
            code::EDEADLK,
            "timedlock by the owner"
        );
        // A normal mutex relocked by its owner blocks forever.
        run(&mut s, 0, Op::Lock { m: 5, kind: Normal });
        s.post(0, Op::Lock { m: 5, kind: Normal }).unwrap();
        assert!(!s.is_enabled(0));
    }

    #[test]
    fn barrier_releases_all_and_one_is_serial() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        s.init_barrier(7, 2);
        let a = spawn(&mut s, 0);
        assert_eq!(run(&mut s, a, Op::BarrierWait { b: 7 }), 0);
        s.post(a, Op::BarrierLeave { b: 7 }).unwrap();
        assert!(!s.is_enabled(a));
        assert_eq!(
            run(&mut s, 0, Op::BarrierWait { b: 7 }),
            code::BARRIER_SERIAL
        );
        assert!(s.is_enabled(a));
        assert_eq!(run(&mut s, 0, Op::BarrierLeave { b: 7 }), 0);
    }

    #[test]
    fn rwlock_readers_share_writers_exclude() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        run(&mut s, 0, Op::RdLock { l: 3 });
        run(&mut s, a, Op::RdLock { l: 3 });
        assert_eq!(run(&mut s, a, Op::TryWrLock { l: 3 }), code::EBUSY);
        s.post(a, Op::WrLock { l: 3 }).unwrap();
        assert!(!s.is_enabled(a));
        run(&mut s, 0, Op::RwUnlock { l: 3 });
        assert!(!s.is_enabled(a), "a still reads");
        s.post(0, Op::RdLock { l: 3 }).unwrap();
        assert!(s.is_enabled(0));
    }

    #[test]
    fn once_runs_init_exactly_once() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 4 }), 0);
        s.post(a, Op::OnceBegin { o: 4 }).unwrap();
        assert!(!s.is_enabled(a));
        run(&mut s, 0, Op::OnceEnd { o: 4 });
        assert_eq!(s.execute(a).unwrap().result, code::ONCE_DONE);
    }

    #[test]
    fn a_thread_that_ends_inside_its_once_routine_leaves_the_once_to_a_waiter() {
        // The routine called pthread_exit, or its thread was cancelled in it: the control
        // returns to never run, the waiter runs the routine, and others then see it done.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let b = spawn(&mut s, 0);
        assert_eq!(run(&mut s, a, Op::OnceBegin { o: 4 }), 0);
        s.post(0, Op::OnceBegin { o: 4 }).unwrap();
        assert!(!s.is_enabled(0));
        run(&mut s, a, Op::Exit);
        assert!(s.is_enabled(0));
        assert_eq!(s.execute(0).unwrap().result, 0, "main runs the routine");
        s.post(b, Op::OnceBegin { o: 4 }).unwrap();
        assert!(!s.is_enabled(b));
        run(&mut s, 0, Op::OnceEnd { o: 4 });
        assert_eq!(s.execute(b).unwrap().result, code::ONCE_DONE);
        assert!(s.deadlock().is_none());
    }

    #[test]
    fn a_once_control_that_reads_as_new_again_runs_its_init_unless_it_is_running() {
        // Memory of a finished control reused for a new one (a freed std::promise's state):
        // libpos reports it as never run and the next caller runs the init again.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 4 }), 0);
        run(&mut s, 0, Op::OnceEnd { o: 4 });
        s.init_once(4, false);
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 4 }), 0, "a new control");
        // While its init runs, the memory still reads as never run: the report from another
        // caller changes nothing, and that caller waits for the init.
        s.init_once(4, false);
        s.post(a, Op::OnceBegin { o: 4 }).unwrap();
        assert!(!s.is_enabled(a));
        run(&mut s, 0, Op::OnceEnd { o: 4 });
        assert_eq!(s.execute(a).unwrap().result, code::ONCE_DONE);
        // A control never taken has nothing to forget.
        s.init_once(8, false);
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 8 }), 0);
    }

    #[test]
    fn a_once_control_completed_outside_control_never_runs_its_init_again() {
        // A library's constructor completed it before libpos took control: the first
        // controlled call reads it as done, and nobody runs the init.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        s.init_once(4, true);
        assert_eq!(run(&mut s, a, Op::OnceBegin { o: 4 }), code::ONCE_DONE);
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 4 }), code::ONCE_DONE);
        // A known control is left as it is: one running blocks the others until its end.
        assert_eq!(run(&mut s, 0, Op::OnceBegin { o: 8 }), 0);
        s.init_once(8, true);
        s.post(a, Op::OnceBegin { o: 8 }).unwrap();
        assert!(!s.is_enabled(a), "still running");
        run(&mut s, 0, Op::OnceEnd { o: 8 });
        s.init_once(8, true);
        assert_eq!(s.execute(a).unwrap().result, code::ONCE_DONE);
    }

    #[test]
    fn initial_threads_are_named_as_mains_children_and_all_run() {
        let s = State::with_initial_threads(3);
        assert_eq!(s.num_threads(), 3);
        assert_eq!(s.name(2).to_string(), "0.2");
        assert_eq!(s.running().count(), 3);
        assert!(!s.all_posted());
    }

    #[test]
    fn process_exit_ends_the_run() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let _a = spawn(&mut s, 0);
        run(&mut s, 0, Op::ProcessExit { code: 3 });
        assert!(s.is_over());
        assert_eq!(s.exit_code(), Some(3));
        assert!(s.deadlock().is_none());
    }

    #[test]
    fn cancel_acts_at_a_blocked_cond_wait_only_once_the_mutex_is_free() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        let (c, m) = (0x20, 0x10);
        let lock = Op::Lock { m, kind: Normal };
        let unlock = Op::Unlock { m, kind: Normal };
        assert_eq!(run(&mut s, t, lock), 0);
        assert_eq!(run(&mut s, t, Op::CondWait { c, m }), 0);
        let wake = Op::CondWake {
            c,
            m,
            deadline: NO_DEADLINE,
        };
        s.post(t, wake).unwrap();
        assert!(!s.is_enabled(t), "no signal, no cancel");
        assert_eq!(run(&mut s, 0, lock), 0);
        assert_eq!(run(&mut s, 0, Op::Cancel { target: t }), 0);
        assert!(
            !s.is_enabled(t),
            "cancelled, but the mutex must be re-acquired first"
        );
        assert_eq!(run(&mut s, 0, unlock), 0);
        assert!(s.is_enabled(t));
        assert_eq!(s.execute(t).unwrap().result, code::CANCELED);
        assert!(s.cancelled(t));
        // The mutex is held again (the cleanup handler unlocks it): main's lock waits.
        s.post(0, lock).unwrap();
        assert!(!s.is_enabled(0));
        // Cleanup handlers are no cancellation points: a sleep there just sleeps.
        assert_eq!(run(&mut s, t, Op::Sleep), 0);
        assert_eq!(run(&mut s, t, unlock), 0);
        assert!(s.is_enabled(0));
        assert_eq!(run(&mut s, t, Op::Exit), 0);
        assert_eq!(s.execute(0).unwrap().result, 0);
        assert_eq!(run(&mut s, 0, Op::Join { target: t }), 0);
    }

    #[test]
    fn a_kill_ends_the_targets_blocked_wait_once_until_its_handler_runs() {
        let (sem, m) = (0x40, 0x10);
        let lock = Op::Lock { m, kind: Normal };
        for wait in [
            Op::SemWait { s: sem },
            Op::Join { target: 0 },
            lock,
            Op::FutexWait {
                addr: 0x80,
                bitset: u32::MAX,
                deadline: NO_DEADLINE,
            },
        ] {
            let mut s = State::new();
            run(&mut s, 0, Op::Start);
            let t = spawn(&mut s, 0);
            assert_eq!(run(&mut s, 0, lock), 0);
            s.post(t, wait).unwrap();
            assert!(!s.is_enabled(t), "{wait:?}");
            assert_eq!(run(&mut s, 0, Op::Kill { target: t }), 0);
            assert!(s.is_enabled(t), "the handler must run: {wait:?}");
            assert_eq!(s.execute(t).unwrap().result, code::EINTR, "{wait:?}");
            // Still interrupted until its handler runs; then the wait blocks again.
            assert_eq!(run(&mut s, t, Op::Handler), 0);
            s.post(t, wait).unwrap();
            assert!(
                !s.is_enabled(t),
                "blocked again after the handler: {wait:?}"
            );
        }
    }

    #[test]
    fn a_signal_from_outside_ends_a_blocked_wait_once_and_leaves_others_alone() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        let sem = 0x40;
        s.sems.insert(sem, 0);
        s.post(t, Op::SemWait { s: sem }).unwrap();
        assert!(!s.is_enabled(t));
        // Main is running, not waiting: nothing to interrupt there; nor an unknown thread.
        assert!(!s.interrupt_from_outside(0));
        assert!(!s.interrupt_from_outside(99));
        assert!(s.interrupt_from_outside(t));
        assert!(!s.interrupt_from_outside(t), "once, until the handler step");
        assert!(s.is_enabled(t), "the wait ends for the handler");
        assert_eq!(s.execute(t).unwrap().result, code::EINTR);
        assert_eq!(run(&mut s, t, Op::Handler), 0);
        s.post(t, Op::SemWait { s: sem }).unwrap();
        assert!(!s.is_enabled(t), "blocked again after the handler");
        // An enabled wait is not interrupted: it simply runs.
        s.sems.insert(0x48, 1);
        let u = spawn(&mut s, 0);
        s.post(u, Op::SemWait { s: 0x48 }).unwrap();
        assert!(s.is_enabled(u));
        assert!(!s.interrupt_from_outside(u));
        assert_eq!(s.execute(u).unwrap().result, 0);
    }

    #[test]
    fn a_kill_brings_a_thread_blocked_outside_back_for_its_handler() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        s.mark_outside(t).unwrap();
        s.post(0, Op::Kill { target: t }).unwrap();
        assert!(s.all_posted(), "decisions go on without a thread set aside");
        assert_eq!(s.execute(0).unwrap().result, 0);
        assert_eq!(s.status(t), Status::Running);
        s.post(0, Op::Yield).unwrap();
        assert!(
            !s.all_posted(),
            "the next decision waits for its handler step"
        );
        s.post(t, Op::Handler).unwrap();
        assert!(s.is_enabled(t));
        assert_eq!(s.execute(t).unwrap().result, 0);
    }

    #[test]
    fn a_kill_leaves_an_enabled_wait_alone_and_a_killed_futex_waiter_takes_no_wake() {
        // An enabled wait runs as usual: the handler runs after it.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        s.sems.insert(0x40, 1);
        s.post(t, Op::SemWait { s: 0x40 }).unwrap();
        assert_eq!(run(&mut s, 0, Op::Kill { target: t }), 0);
        assert_eq!(s.execute(t).unwrap().result, 0);
        // A futex waiter that a signal interrupted is no waiter any more: a wake is left for
        // the next one (no wake is lost on the interrupted thread).
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        let u = spawn(&mut s, 0);
        let wait = Op::FutexWait {
            addr: 0x80,
            bitset: u32::MAX,
            deadline: NO_DEADLINE,
        };
        s.post(t, wait).unwrap();
        assert_eq!(run(&mut s, 0, Op::Kill { target: t }), 0);
        assert_eq!(s.execute(t).unwrap().result, code::EINTR);
        s.post(u, wait).unwrap();
        let wake = Op::FutexWake {
            addr: 0x80,
            n: 1,
            bitset: u32::MAX,
        };
        assert_eq!(run(&mut s, 0, wake), 1, "one waiter left: u");
        assert_eq!(s.execute(u).unwrap().result, 0);
        // An exit runs the handler first.
        let v = spawn(&mut s, 0);
        assert_eq!(run(&mut s, 0, Op::Kill { target: v }), 0);
        assert_eq!(run(&mut s, v, Op::Exit), code::EINTR);
        assert_eq!(run(&mut s, v, Op::Handler), 0);
        assert_eq!(run(&mut s, v, Op::Exit), 0);
        // A handler step waits for a kill (DPOR's reversal of a kill and its handler is
        // no trace), and a kill of oneself changes nothing.
        s.post(u, Op::Handler).unwrap();
        assert!(!s.is_enabled(u));
        assert_eq!(run(&mut s, 0, Op::Kill { target: 0 }), 0);
        s.post(0, Op::Join { target: t }).unwrap();
        assert!(!s.is_enabled(0));
    }

    #[test]
    fn cancel_acts_at_testcancel_sleep_join_and_sem_wait_but_not_at_a_lock() {
        for point in [
            Op::TestCancel,
            Op::Sleep,
            Op::Join { target: 0 },
            Op::SemWait { s: 0x40 },
            Op::SemTimedWait {
                s: 0x40,
                deadline: NO_DEADLINE,
            },
        ] {
            let mut s = State::new();
            run(&mut s, 0, Op::Start);
            assert_eq!(run(&mut s, 0, Op::Cancel { target: 1 }), code::ESRCH);
            let t = spawn(&mut s, 0);
            s.post(t, point).unwrap();
            assert_eq!(s.is_enabled(t), !may_block(&point), "{point:?}");
            assert_eq!(run(&mut s, 0, Op::Cancel { target: t }), 0);
            assert!(s.is_enabled(t), "{point:?}");
            assert_eq!(s.execute(t).unwrap().result, code::CANCELED, "{point:?}");
            assert_eq!(run(&mut s, t, Op::TestCancel), 0, "acted on once only");
        }
        // Not a cancellation point: a cancelled thread blocked on a lock stays blocked, and
        // the run deadlocks.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        let lock = Op::Lock {
            m: 0x10,
            kind: Normal,
        };
        assert_eq!(run(&mut s, 0, lock), 0);
        s.post(t, lock).unwrap();
        assert_eq!(run(&mut s, 0, Op::Cancel { target: t }), 0);
        assert!(!s.is_enabled(t));
        s.post(0, Op::Join { target: t }).unwrap();
        let d = s.deadlock().expect("deadlock");
        assert_eq!(d.blocked.len(), 2, "{d}");
    }

    #[test]
    fn a_disabled_cancel_state_keeps_the_request_pending_until_enabled_and_a_point() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        assert_eq!(run(&mut s, t, Op::SetCancelState { enabled: false }), 0);
        s.post(t, Op::SemWait { s: 0x40 }).unwrap();
        assert_eq!(run(&mut s, 0, Op::Cancel { target: t }), 0);
        assert!(!s.is_enabled(t), "disabled: the wait stays blocked");
        assert_eq!(run(&mut s, 0, Op::SemPost { s: 0x40 }), 0);
        assert_eq!(s.execute(t).unwrap().result, 0, "woken normally");
        assert_eq!(run(&mut s, t, Op::TestCancel), 0);
        assert_eq!(run(&mut s, t, Op::SetCancelState { enabled: true }), 0);
        assert!(!s.cancelled(t), "enabling is no cancellation point");
        assert_eq!(run(&mut s, t, Op::TestCancel), code::CANCELED);
        assert!(s.cancelled(t));
    }

    #[test]
    fn a_cancel_of_a_thread_blocked_outside_control_is_delivered_for_real_once() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let t = spawn(&mut s, 0);
        run(&mut s, t, Op::Yield);
        s.mark_outside(t).unwrap(); // t blocks in `read`, say
        assert_eq!(
            run(&mut s, 0, Op::Cancel { target: t }),
            code::CANCEL_OUTSIDE
        );
        assert!(
            s.cancelled(t),
            "glibc acts on it: the model must not act again"
        );
        assert_eq!(
            run(&mut s, 0, Op::Cancel { target: t }),
            0,
            "delivered once"
        );
        // t unwinds outside control; its cleanup handler's points are no cancellation points.
        assert_eq!(run(&mut s, t, Op::TestCancel), 0);
        assert_eq!(run(&mut s, t, Op::Exit), 0);
        assert_eq!(run(&mut s, 0, Op::Join { target: t }), 0);

        // With cancellation disabled the request stays pending in the model, as before.
        let u = spawn(&mut s, 0);
        assert_eq!(run(&mut s, u, Op::SetCancelState { enabled: false }), 0);
        s.mark_outside(u).unwrap();
        assert_eq!(run(&mut s, 0, Op::Cancel { target: u }), 0);
        assert!(!s.cancelled(u));
    }

    /// A random operation for the enabled-set test: a mix over two of each object.
    fn random_op(rng: &mut crate::rng::Rng, threads: u32) -> Vec<Op> {
        use Op::*;
        let a = 0x100 + 0x40 * rng.below(2);
        let kind = [Normal, Recursive, ErrorCheck][rng.index(3)];
        match rng.below(19) {
            0 => vec![Lock { m: a, kind }],
            1 => vec![Unlock { m: a, kind }],
            2 => {
                let deadline = rng.below(3) * 1_000;
                vec![
                    TryLock { m: a, kind },
                    TimedLock {
                        m: a,
                        kind,
                        deadline,
                    },
                ][rng.index(2)..][..1]
                    .to_vec()
            }
            3 => vec![
                CondWait { c: a + 8, m: a },
                CondWake {
                    c: a + 8,
                    m: a,
                    deadline: if rng.chance(0.3) {
                        rng.below(4) * 1_000
                    } else {
                        crate::event::NO_DEADLINE
                    },
                },
            ],
            4 => vec![[CondSignal { c: a + 8 }, CondBroadcast { c: a + 8 }][rng.index(2)]],
            5 => vec![
                [
                    RdLock { l: a + 16 },
                    WrLock { l: a + 16 },
                    TryWrLock { l: a + 16 },
                ][rng.index(3)],
            ],
            6 => vec![RwUnlock { l: a + 16 }],
            7 => vec![[SemWait { s: a + 24 }, SemTryWait { s: a + 24 }][rng.index(2)]],
            8 => vec![SemPost { s: a + 24 }],
            9 => vec![BarrierWait { b: a + 32 }, BarrierLeave { b: a + 32 }],
            10 => vec![OnceBegin { o: a + 40 }, OnceEnd { o: a + 40 }],
            11 => vec![Join {
                target: rng.below(threads as u64 + 1) as Tid,
            }],
            12 => vec![Create],
            13 => vec![
                [
                    SleepUntil {
                        deadline: rng.below(4) * 1_000,
                    },
                    SemTimedWait {
                        s: a + 24,
                        deadline: rng.below(4) * 1_000,
                    },
                    TimedWrLock {
                        l: a + 16,
                        deadline: rng.below(4) * 1_000,
                    },
                ][rng.index(3)],
            ],
            14 => {
                let target = rng.below(threads as u64 + 1) as Tid;
                vec![
                    [
                        TimedJoin {
                            target,
                            deadline: rng.below(4) * 1_000,
                        },
                        TryJoin { target },
                    ][rng.index(2)],
                ]
            }
            15 => vec![
                [
                    FutexWait {
                        addr: a + 48,
                        bitset: 1 + rng.below(3) as u32,
                        deadline: if rng.chance(0.3) {
                            rng.below(4) * 1_000
                        } else {
                            crate::event::NO_DEADLINE
                        },
                    },
                    FutexWake {
                        addr: a + 48,
                        n: rng.below(3) as u32,
                        bitset: 1 + rng.below(3) as u32,
                    },
                ][rng.index(2)],
            ],
            16 => vec![
                [
                    Cancel {
                        target: rng.below(threads as u64 + 1) as Tid,
                    },
                    TestCancel,
                    SetCancelState {
                        enabled: rng.chance(0.5),
                    },
                    Sleep,
                ][rng.index(4)],
            ],
            _ => vec![[Write { addr: a, size: 4 }, Read { addr: a, size: 4 }, Yield][rng.index(3)]],
        }
    }

    #[test]
    fn incremental_enabled_set_agrees_with_a_full_scan() {
        // Random programs over every kind of object, with deadlocks, self-joins, failing
        // unlocks and initialisations in between: after every post, execution and
        // notification the maintained set equals the scan of every thread.
        let mut rng = crate::rng::Rng::new(99);
        let (mut decisions, mut with_blocked, mut outside) = (0, 0, 0);
        for _ in 0..800 {
            let mut s = State::with_initial_threads(1 + rng.index(5));
            s.init_barrier(0x100 + 32, 2);
            let mut scripts: Vec<Vec<Op>> = Vec::new();
            for t in 0..s.num_threads() as Tid {
                scripts.push(Vec::new());
                s.post(t, Op::Start).unwrap();
            }
            // Threads blocked outside control, with the post they will come back with.
            let mut away: Vec<(Tid, Op)> = Vec::new();
            for _ in 0..200 {
                let scan = s.scan_enabled();
                assert_eq!(s.enabled(), scan);
                assert_eq!(s.enabled_events(), scan.as_slice());
                assert_eq!(s.outside().count(), away.len());
                if (s.enabled().is_empty() || rng.chance(0.05)) && s.advance_clock() {
                    assert_eq!(s.enabled(), s.scan_enabled());
                }
                let enabled = s.enabled();
                if !away.is_empty() && (enabled.is_empty() || rng.chance(0.2)) && !s.is_over() {
                    // Back from outside control, between two decisions.
                    assert!(s.deadlock().is_none());
                    let (t, op) = away.swap_remove(rng.index(away.len()));
                    s.post(t, op).unwrap();
                    continue;
                }
                if enabled.is_empty() || s.is_over() {
                    break;
                }
                if rng.chance(0.02) {
                    s.init_sem(0x100 + 24, rng.below(2) as u32);
                    continue;
                }
                if s.pending_events().count() > enabled.len() {
                    with_blocked += 1;
                }
                let ev = enabled[rng.index(enabled.len())];
                let done = s.execute(ev.tid).unwrap();
                decisions += 1;
                assert_eq!(s.enabled(), s.scan_enabled());
                if s.is_over() {
                    away.clear(); // the process exited: nobody comes back
                }
                if let Some(c) = done.child {
                    scripts.push(Vec::new());
                    s.post(c, Op::Start).unwrap();
                }
                if ev.op == Op::Exit || s.is_over() {
                    continue;
                }
                let n = s.num_threads() as u32;
                let script = &mut scripts[ev.tid as usize];
                if script.is_empty() {
                    *script = random_op(&mut rng, n);
                    script.reverse();
                    if rng.chance(0.03) {
                        *script = vec![[Op::Exit, Op::ProcessExit { code: 0 }][rng.index(2)]];
                    }
                }
                let next = script.pop().unwrap_or(Op::Exit);
                if rng.chance(0.05) {
                    s.mark_outside(ev.tid).unwrap();
                    assert!(!s.enabled().iter().any(|e| e.tid == ev.tid));
                    away.push((ev.tid, next));
                    outside += 1;
                } else {
                    s.post(ev.tid, next).unwrap();
                }
                if rng.chance(0.01) {
                    let victim = rng.below(n as u64) as Tid;
                    if s.status(victim) != Status::Finished {
                        s.mark_finished(victim);
                        away.retain(|&(t, _)| t != victim);
                    }
                }
            }
        }
        assert!(
            decisions > 15_000 && with_blocked > 2_000 && outside > 500,
            "{decisions} decisions, {with_blocked} with a blocked thread, {outside} outside"
        );
    }

    #[test]
    fn a_futex_wake_wakes_a_chosen_waiter_and_a_wake_before_the_wait_is_lost() {
        let wait = |bitset, deadline| Op::FutexWait {
            addr: 0x40,
            bitset,
            deadline,
        };
        let wake = |n, bitset| Op::FutexWake {
            addr: 0x40,
            n,
            bitset,
        };
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let ts: Vec<Tid> = (0..3).map(|_| spawn(&mut s, 0)).collect();
        // A wake with nobody waiting wakes nobody and is not remembered (as in the kernel).
        assert_eq!(run(&mut s, 0, wake(1, u32::MAX)), 0);
        for &t in &ts {
            s.post(t, wait(u32::MAX, NO_DEADLINE)).unwrap();
            assert!(!s.is_enabled(t));
        }
        s.post(0, Op::Yield).unwrap();
        assert_eq!(s.enabled(), vec![Event::new(0, Op::Yield)]);
        // One wake: any of the three may take it (the strategy chooses), then the others
        // are blocked again.
        s.execute(0).unwrap();
        assert_eq!(run(&mut s, 0, wake(1, u32::MAX)), 1);
        for &t in &ts {
            assert!(s.is_enabled(t), "every waiter may be the woken one");
        }
        assert_eq!(s.execute(ts[1]).unwrap().result, 0);
        assert!(!s.is_enabled(ts[0]) && !s.is_enabled(ts[2]));
        // A wake of more than are waiting wakes those that wait.
        assert_eq!(run(&mut s, 0, wake(10, u32::MAX)), 2);
        assert!(s.is_enabled(ts[0]) && s.is_enabled(ts[2]));
        assert_eq!(s.execute(ts[0]).unwrap().result, 0);
        assert_eq!(s.execute(ts[2]).unwrap().result, 0);
        // Bitsets: a wake meets only waiters whose bitset it shares.
        s.post(ts[0], wait(0b01, NO_DEADLINE)).unwrap();
        s.post(ts[2], wait(0b10, NO_DEADLINE)).unwrap();
        assert_eq!(run(&mut s, 0, wake(5, 0b10)), 1);
        assert!(!s.is_enabled(ts[0]) && s.is_enabled(ts[2]));
        assert_eq!(s.execute(ts[2]).unwrap().result, 0);
        // Nobody left to wake ts[0]: a deadlock that names the futex.
        s.post(ts[2], Op::Exit).unwrap();
        s.execute(ts[2]).unwrap();
        s.post(ts[1], Op::Exit).unwrap();
        s.execute(ts[1]).unwrap();
        s.post(0, Op::Join { target: ts[0] }).unwrap();
        let d = s.deadlock().expect("deadlock").to_string();
        assert!(d.contains("a wake on futex 0x40"), "{d}");
    }

    #[test]
    fn a_requeue_wakes_a_chosen_waiter_and_moves_the_rest_to_the_second_word() {
        let wait = |addr| Op::FutexWait {
            addr,
            bitset: u32::MAX,
            deadline: NO_DEADLINE,
        };
        let requeue = |n1, n2| Op::FutexRequeued {
            addr: 0x40,
            addr2: 0x80,
            n1,
            n2,
        };
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let ts: Vec<Tid> = (0..3).map(|_| spawn(&mut s, 0)).collect();
        for &t in &ts {
            s.post(t, wait(0x40)).unwrap();
        }
        // The point before the requeue changes nothing.
        let before = Op::FutexRequeue {
            addr: 0x40,
            addr2: 0x80,
            n1: 1,
            n2: u32::MAX,
        };
        assert_eq!(run(&mut s, 0, before), 0);
        assert!(ts.iter().all(|&t| !s.is_enabled(t)));
        // Broadcast: wake one, move the other two. Its effect is at the post.
        s.post(0, requeue(1, u32::MAX)).unwrap();
        for &t in &ts {
            assert!(s.is_enabled(t), "any waiter may be the woken one");
            assert!(matches!(
                s.status(t),
                Status::Pending(Op::FutexWait { addr: 0x80, .. })
            ));
        }
        assert_eq!(s.execute(0).unwrap().result, 3, "woken + moved");
        assert_eq!(s.execute(ts[2]).unwrap().result, 0);
        assert!(!s.is_enabled(ts[0]) && !s.is_enabled(ts[1]));
        // A wake on the second word wakes a moved waiter, any of them.
        let wake2 = Op::FutexWake {
            addr: 0x80,
            n: 1,
            bitset: u32::MAX,
        };
        assert_eq!(run(&mut s, 0, wake2), 1);
        assert!(s.is_enabled(ts[0]) && s.is_enabled(ts[1]));
        assert_eq!(s.execute(ts[1]).unwrap().result, 0);
        assert!(!s.is_enabled(ts[0]));
        // A wake on the first word finds nobody there any more.
        let wake1 = Op::FutexWake {
            addr: 0x40,
            n: 1,
            bitset: u32::MAX,
        };
        assert_eq!(run(&mut s, 0, wake1), 0);
        assert!(!s.is_enabled(ts[0]));
        // Nobody wakes ts[0]: the deadlock names the word it waits on now.
        s.post(ts[1], Op::Exit).unwrap();
        s.execute(ts[1]).unwrap();
        s.post(ts[2], Op::Exit).unwrap();
        s.execute(ts[2]).unwrap();
        s.post(0, Op::Join { target: ts[0] }).unwrap();
        let d = s.deadlock().expect("deadlock").to_string();
        assert!(d.contains("a wake on futex 0x80"), "{d}");
    }

    #[test]
    fn a_requeue_that_moves_fewer_than_are_left_keeps_the_oldest_with_the_wakes() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let ts: Vec<Tid> = (0..4).map(|_| spawn(&mut s, 0)).collect();
        for &t in &ts {
            let op = Op::FutexWait {
                addr: 0x40,
                bitset: u32::MAX,
                deadline: NO_DEADLINE,
            };
            s.post(t, op).unwrap();
        }
        // Wake one, move one: two stay unwoken on 0x40, the newest moves.
        let op = Op::FutexRequeued {
            addr: 0x40,
            addr2: 0x80,
            n1: 1,
            n2: 1,
        };
        assert_eq!(run(&mut s, 0, op), 2);
        assert!(matches!(
            s.status(ts[3]),
            Status::Pending(Op::FutexWait { addr: 0x80, .. })
        ));
        assert!(!s.is_enabled(ts[3]));
        for &t in &ts[..3] {
            assert!(s.is_enabled(t), "the woken one is chosen among those left");
        }
        assert_eq!(s.execute(ts[1]).unwrap().result, 0);
        assert!(!s.is_enabled(ts[0]) && !s.is_enabled(ts[2]));
        // Waking none and moving none is a no-op that returns 0.
        let none = Op::FutexRequeued {
            addr: 0x40,
            addr2: 0x80,
            n1: 0,
            n2: 0,
        };
        assert_eq!(run(&mut s, 0, none), 0);
        assert!(!s.is_enabled(ts[0]) && !s.is_enabled(ts[2]));
    }

    #[test]
    fn a_timed_futex_wait_times_out_only_at_its_deadline() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let wait = Op::FutexWait {
            addr: 0x40,
            bitset: u32::MAX,
            deadline: 3_000,
        };
        s.post(a, wait).unwrap();
        s.post(0, Op::Yield).unwrap();
        assert!(!s.is_enabled(a), "main can still wake it");
        s.execute(0).unwrap();
        s.post(0, Op::Join { target: a }).unwrap();
        assert!(s.enabled().is_empty() && s.any_timed());
        assert!(s.advance_clock());
        assert_eq!(s.now(), 3_000);
        assert_eq!(s.execute(a).unwrap().result, code::ETIMEDOUT);
    }

    #[test]
    fn while_a_thread_is_outside_control_only_sleeps_let_time_pass() {
        // main holds the mutex and blocks in the kernel (say, a `read`); a waits 5 s for the
        // mutex; with `sleeper`, another thread sleeps until 9 s.
        let setup = |sleeper: bool| {
            let mut s = State::new();
            run(&mut s, 0, Op::Start);
            run(&mut s, 0, Op::Lock { m: 2, kind: Normal });
            let a = spawn(&mut s, 0);
            let b = spawn(&mut s, 0);
            s.post(0, Op::Yield).unwrap();
            s.execute(0).unwrap();
            s.mark_outside(0).unwrap();
            let timed = Op::TimedLock {
                m: 2,
                kind: Normal,
                deadline: 5_000,
            };
            s.post(a, timed).unwrap();
            s.post(
                b,
                if sleeper {
                    Op::SleepUntil { deadline: 9_000 }
                } else {
                    Op::Exit
                },
            )
            .unwrap();
            if !sleeper {
                s.execute(b).unwrap();
            }
            assert!(s.enabled().is_empty());
            s
        };
        // The timed lock must not time out because of main, which may be about to unlock.
        let mut s = setup(false);
        assert!(!s.advance_clock(), "no sleep: time stands still");
        assert_eq!(s.now(), 0);
        // A sleep still ends (the sleeper does not wait for main).
        let mut s = setup(true);
        assert!(s.advance_clock());
        assert_eq!(s.now(), 9_000);
    }

    #[test]
    fn a_thread_blocked_outside_control_is_not_waited_for_and_rejoins_with_its_post() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        // a is granted a plain write, then blocks in `read` on a pipe main will write.
        s.post(
            a,
            Op::Write {
                addr: 0x10,
                size: 4,
            },
        )
        .unwrap();
        s.post(0, Op::Yield).unwrap();
        s.execute(a).unwrap();
        assert!(!s.all_posted());
        s.mark_outside(a).unwrap();
        assert_eq!(s.status(a), Status::Outside);
        assert!(s.all_posted(), "decisions no longer wait for a");
        assert_eq!(s.enabled(), vec![Event::new(0, Op::Yield)]);
        assert_eq!(s.outside().collect::<Vec<_>>(), [a]);
        // Only running threads can be marked; an outside one cannot be executed.
        assert!(s.mark_outside(a).is_err());
        assert!(s.mark_outside(0).is_err());
        assert!(s.execute(a).is_err());
        // Main runs and joins a: nothing is enabled, yet it is no deadlock while a may return.
        s.execute(0).unwrap();
        s.post(0, Op::Join { target: a }).unwrap();
        assert!(s.enabled().is_empty());
        assert!(s.deadlock().is_none());
        // a comes back with its next post (as a running thread would) and is enabled again.
        s.post(a, Op::Exit).unwrap();
        assert!(!s.any_outside());
        assert_eq!(s.enabled(), vec![Event::new(a, Op::Exit)]);
        s.execute(a).unwrap();
        assert_eq!(s.enabled(), vec![Event::new(0, Op::Join { target: a })]);
        // An outside thread that vanishes counts as finished.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let b = spawn(&mut s, 0);
        s.post(b, Op::Yield).unwrap();
        s.execute(b).unwrap();
        s.mark_outside(b).unwrap();
        s.mark_finished(b);
        assert!(!s.any_outside());
        // A real deadlock is still one once nobody is outside.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        s.post(0, Op::Join { target: a }).unwrap();
        s.post(a, Op::Yield).unwrap();
        s.execute(a).unwrap();
        s.mark_outside(a).unwrap();
        assert!(s.deadlock().is_none());
        s.post(a, Op::Join { target: a }).unwrap();
        assert!(s.deadlock().is_some());
    }

    /// A robust mutex whose owner exits holding it: the next locker takes it with
    /// EOWNERDEAD, `consistent` makes it usable again; not called, the unlock makes it
    /// not recoverable for every later lock, waiters included.
    #[test]
    fn a_robust_mutex_of_a_dead_owner_goes_to_the_next_locker() {
        let (m, kind) = (0x10, RobustNormal);
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        assert_eq!(run(&mut s, a, Op::Lock { m, kind }), code::OK);
        s.post(0, Op::Lock { m, kind }).unwrap();
        assert!(!s.is_enabled(0), "held by a live owner");
        run(&mut s, a, Op::Exit);
        assert!(s.is_enabled(0), "freed by its owner's exit");
        assert_eq!(s.execute(0).unwrap().result, code::EOWNERDEAD);
        assert_eq!(run(&mut s, 0, Op::Consistent { m }), code::OK);
        assert_eq!(run(&mut s, 0, Op::Consistent { m }), code::EINVAL);
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::OK);
        assert_eq!(
            run(&mut s, 0, Op::TryLock { m, kind }),
            code::OK,
            "recovered"
        );
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::OK);

        // The same without `consistent`: a waiter is woken and fails, so does every lock.
        let b = spawn(&mut s, 0);
        let c = spawn(&mut s, 0);
        run(&mut s, b, Op::Lock { m, kind });
        run(&mut s, b, Op::Exit);
        assert_eq!(run(&mut s, 0, Op::TryLock { m, kind }), code::EOWNERDEAD);
        s.post(c, Op::Lock { m, kind }).unwrap();
        assert!(!s.is_enabled(c));
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::OK);
        assert!(s.is_enabled(c));
        assert_eq!(s.execute(c).unwrap().result, code::ENOTRECOVERABLE);
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::ENOTRECOVERABLE);
        let timed = Op::TimedLock {
            m,
            kind,
            deadline: 5,
        };
        assert_eq!(run(&mut s, 0, timed), code::ENOTRECOVERABLE);
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::EPERM);
        assert_eq!(run(&mut s, 0, Op::Consistent { m }), code::EINVAL);
    }

    /// Robustness keeps the type's rules for its owner, and a condvar waiter re-acquiring
    /// the mutex of a dead owner gets EOWNERDEAD from its wait.
    #[test]
    fn robust_recursive_and_errorcheck_mutexes_and_condvar_waits() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        let (m, kind) = (0x20, RobustRecursive);
        run(&mut s, a, Op::Lock { m, kind });
        assert_eq!(run(&mut s, a, Op::Lock { m, kind }), code::OK);
        run(&mut s, a, Op::Exit);
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::EOWNERDEAD);
        assert_eq!(run(&mut s, 0, Op::Consistent { m }), code::OK);
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::OK, "count 1");
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::EPERM);

        let (m, kind) = (0x30, RobustErrorCheck);
        run(&mut s, 0, Op::Lock { m, kind });
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::EDEADLK);
        assert_eq!(run(&mut s, 0, Op::TryLock { m, kind }), code::EDEADLK);
        run(&mut s, 0, Op::Unlock { m, kind });

        // A robust normal mutex: a non-owner's unlock is EPERM (glibc checks), a lock by
        // the owner blocks.
        let (m, kind) = (0x40, RobustNormal);
        run(&mut s, 0, Op::Lock { m, kind });
        let b = spawn(&mut s, 0);
        assert_eq!(run(&mut s, b, Op::Unlock { m, kind }), code::EPERM);
        s.post(0, Op::Lock { m, kind }).unwrap();
        assert!(!s.is_enabled(0));

        // b waits on a condvar with m2; the owner who took it meanwhile dies holding it.
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let (m, kind, c) = (0x50, RobustNormal, 0x60);
        let b = spawn(&mut s, 0);
        let d = spawn(&mut s, 0);
        run(&mut s, b, Op::Lock { m, kind });
        run(&mut s, b, Op::CondWait { c, m });
        let wake = Op::CondWake {
            c,
            m,
            deadline: NO_DEADLINE,
        };
        s.post(b, wake).unwrap();
        run(&mut s, d, Op::Lock { m, kind });
        run(&mut s, d, Op::CondSignal { c });
        assert!(!s.is_enabled(b));
        run(&mut s, d, Op::Exit);
        assert_eq!(s.execute(b).unwrap().result, code::EOWNERDEAD);
        assert_eq!(run(&mut s, b, Op::Consistent { m }), code::OK);
    }

    /// A normal mutex held by a thread that exited stays held: a later lock is a deadlock
    /// (a real bug), robust mutexes or not elsewhere in the program.
    #[test]
    fn a_normal_mutex_of_a_dead_owner_is_still_a_deadlock() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        run(
            &mut s,
            a,
            Op::Lock {
                m: 1,
                kind: RobustNormal,
            },
        );
        run(&mut s, a, Op::Lock { m: 2, kind: Normal });
        run(&mut s, a, Op::Exit);
        assert_eq!(
            run(
                &mut s,
                0,
                Op::Lock {
                    m: 1,
                    kind: RobustNormal
                }
            ),
            code::EOWNERDEAD
        );
        s.post(0, Op::Lock { m: 2, kind: Normal }).unwrap();
        let d = s.deadlock().expect("deadlock");
        assert!(
            d.to_string().contains("mutex 0x2 held by thread 0.1"),
            "{d}"
        );
    }

    /// A robust mutex in shared memory (`SHARED_BIT`) is one object for a forked child and
    /// its parent: the child's end frees it for the parent with EOWNERDEAD, and the mutex
    /// excludes across the processes meanwhile.
    #[test]
    fn a_shared_robust_mutex_is_freed_by_the_end_of_its_owner_process() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let m = 0x7000 | crate::event::SHARED_BIT;
        let kind = RobustNormal;
        let c = s
            .post(0, Op::Fork)
            .and_then(|_| s.execute(0))
            .unwrap()
            .child
            .unwrap();
        run(&mut s, c, Op::Start);
        assert_eq!(run(&mut s, c, Op::Lock { m, kind }.in_process(1)), code::OK);
        s.post(0, Op::Lock { m, kind }).unwrap();
        assert!(!s.is_enabled(0), "held by the child");
        run(&mut s, c, Op::ProcessExit { code: 0 });
        assert_eq!(s.execute(0).unwrap().result, code::EOWNERDEAD);
        // A plain address stays per process: the child's copy is another mutex.
        let c2 = s
            .post(0, Op::Fork)
            .and_then(|_| s.execute(0))
            .unwrap()
            .child
            .unwrap();
        run(&mut s, c2, Op::Start);
        let kind = Normal;
        assert_eq!(
            run(&mut s, c2, Op::Lock { m: 0x8000, kind }.in_process(2)),
            code::OK
        );
        assert_eq!(run(&mut s, 0, Op::Lock { m: 0x8000, kind }), code::OK);
    }

    /// `pthread_mutex_init` of a robust mutex made not recoverable (or freed by a dead
    /// owner) starts it afresh.
    #[test]
    fn an_initialised_robust_mutex_starts_afresh() {
        let (m, kind) = (0x10, RobustNormal);
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let a = spawn(&mut s, 0);
        run(&mut s, a, Op::Lock { m, kind });
        run(&mut s, a, Op::Exit);
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::EOWNERDEAD);
        run(&mut s, 0, Op::Unlock { m, kind });
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::ENOTRECOVERABLE);
        s.init_mutex(m);
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }), code::OK);
        let b = spawn(&mut s, 0);
        run(&mut s, b, Op::Exit);
        s.init_mutex(0x20);
        assert_eq!(run(&mut s, 0, Op::Unlock { m, kind }), code::OK);
        // Memory of a robust mutex freed by a dead owner, reused for a normal mutex (whose
        // initialisation libpos does not announce): a normal lock.
        let c = spawn(&mut s, 0);
        run(&mut s, c, Op::Lock { m, kind });
        run(&mut s, c, Op::Exit);
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind: Normal }), code::OK);
    }
}
