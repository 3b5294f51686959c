//! Happens-before analysis of one executed trace: vector clocks, races, `notdep`, initials.
//!
//! Notation and definitions follow Abdulla, Aronis, Jonsson, Sagonas, "Optimal Dynamic Partial
//! Order Reduction", POPL'14 (§3 and §4): `e →E e'` is the happens-before relation induced by
//! the dependency relation, a race `e ⋖E e'` is a pair of dependent events of different threads
//! with no event in between in happens-before, `notdep(e, E)` is the subsequence of events after
//! `e` that do not happen after `e`, `I(w)` the initials and `WI(w)` the weak initials of `w`.

use crate::event::{Access, Event, MutexKind, Obj, ObjKind, Op, Tid};
use crate::state::State;
use std::collections::HashMap;

/// An executed event plus the facts the analysis needs beyond `(tid, op)`: for a create, the
/// child it created (a create happens before everything its child does); for a read-write
/// lock operation, whether it is in read mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TEv {
    pub ev: Event,
    pub child: Option<Tid>,
    /// A read-mode rwlock operation: a read acquisition (known from the operation), or an
    /// unlock releasing a read lock (known from the thread's previous acquisition of that
    /// lock, see [`rw_unlock_reads`]). Two read-mode operations commute (see [`dependent`]).
    pub reader: bool,
    /// A barrier arrival that did not complete its generation (see [`barrier_open`]): it
    /// commutes with the other open arrivals and the leaves of that barrier. Unknown (an event
    /// not yet executed, or a barrier whose count was not recorded) is `false`, the
    /// conservative answer.
    pub barrier_open: bool,
    /// A lock of a recursive mutex its thread already holds, or an unlock that leaves the
    /// mutex held (see [`nested_in_owner`]): it changes no ownership, so it commutes with
    /// every other thread's operation (see [`dependent`]). Known from the thread's own earlier
    /// events, so it stays true wherever the event is moved.
    pub nested: bool,
    /// The exit of a thread that may hold a robust mutex (see [`exits_after_robust_lock`]):
    /// it may free that mutex for the next locker, with `EOWNERDEAD`, so it depends on every
    /// other thread's mutex operation. Absent in traces recorded before it: `false`.
    #[serde(default)]
    pub robust_exit: bool,
    /// The exit of a thread that may be inside a once routine (see [`exits_in_once`]): it
    /// returns that control to never run, for the thread waiting in its `pthread_once`, so
    /// it depends on every other thread's once operation. Absent in older traces: `false`.
    #[serde(default)]
    pub once_exit: bool,
    /// The futex word whose wait its thread (or, for a create, the thread it created) posts
    /// right after this event: the wait compares the word and registers its waiter when it
    /// is posted, long before the wait returns (the event the trace records). So this event
    /// reads the word and joins its waiters: it depends on the other threads' wakes and
    /// requeues of that futex and on their writes to the word (see [`meets_arrival`]).
    /// Without it a wake run just before the waiter came (a lost wake-up) was not tried:
    /// dpor called `notify_one` before the store correct after 35 executions. Marked by the
    /// guide when [`super::Options::futex_arrivals`] asks for it, else `None`.
    #[serde(default)]
    pub futex_arrival: Option<u64>,
}

impl TEv {
    /// `ev` with what its operation alone tells (an unlock's mode is unknown: write).
    pub fn new(ev: Event) -> Self {
        let reader = matches!(
            ev.op,
            Op::RdLock { .. } | Op::TryRdLock { .. } | Op::TimedRdLock { .. }
        );
        TEv {
            ev,
            child: None,
            reader,
            barrier_open: false,
            nested: false,
            robust_exit: false,
            once_exit: false,
            futex_arrival: None,
        }
    }
    pub fn tid(&self) -> Tid {
        self.ev.tid
    }
}

/// Whether an `RwUnlock` of `l` by `tid` after the events `before` (latest first) releases a
/// read lock: the thread's last acquisition of `l` was a read one. Unknown (no acquisition
/// seen) counts as a write unlock, the conservative answer (more dependencies).
pub fn rw_unlock_reads<'a>(mut before: impl Iterator<Item = &'a TEv>, tid: Tid, l: u64) -> bool {
    before
        .find(|e| e.tid() == tid && acquires(&e.ev.op, Res::Rw(l)))
        .is_some_and(|e| e.reader)
}

/// Whether `ev`, after the events `before` (latest first), is a nested operation on a
/// recursive mutex its thread holds: a lock or a try or timed lock while the thread already
/// holds the mutex (it cannot fail), or an unlock that leaves it held. Another thread can
/// neither take the mutex nor see a change between such an event and its neighbours, so the
/// event commutes with all of theirs; treating it as a lock hid the race of the outer lock
/// (recursive_bad: a nested relock stood between the two threads' outer locks, and DPOR
/// explored 16 of the 20 traces; a nested trylock, 1 of 2). The depth comes from the
/// mutexes' operations replayed in order ([`Holders`]).
pub fn nested_in_owner<'a>(before: impl Iterator<Item = &'a TEv>, ev: &Event) -> bool {
    // Only a recursive mutex nests (an error-checking mutex's relock by its owner fails),
    // so no other operation needs the walk over the events.
    let (m, unlock) = match ev.op {
        Op::Lock {
            m,
            kind: MutexKind::Recursive,
        }
        | Op::TryLock {
            m,
            kind: MutexKind::Recursive,
        }
        | Op::TimedLock {
            m,
            kind: MutexKind::Recursive,
            ..
        } => (m, false),
        Op::Unlock {
            m,
            kind: MutexKind::Recursive,
        } => (m, true),
        _ => return false,
    };
    let ops: Vec<&TEv> = before.collect();
    let mut holders = Holders::default();
    for (j, e) in ops.into_iter().rev().enumerate() {
        holders.apply(j, e);
    }
    match holders.holder(m) {
        Some((o, n)) if o == ev.tid => !unlock || n > 1,
        _ => false,
    }
}

/// One holding of a mutex in a trace: the acquisition that took it free, and the release that
/// freed it again (if any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holding {
    pub m: u64,
    pub acq: usize,
    pub release: Option<usize>,
}

/// Who holds each mutex along a trace, replayed event by event ([`Holders::apply`]) as
/// `State::lock` decides it: a try or timed lock gets the mutex when it is free or its
/// own recursive one, and fails when held. Used to tell a failed attempt from one that got
/// the mutex (rt's pairing) and how deep a thread holds a recursive mutex
/// ([`nested_in_owner`]).
#[derive(Default)]
pub struct Holders {
    /// Mutex → (owner, lock count, robust, the acquisition that took it free).
    held: HashMap<u64, (Tid, u32, bool, usize)>,
    /// Every holding, the ones still going on without a release.
    pub done: Vec<Holding>,
}

impl Holders {
    /// Apply event `e` at position `j`. `Some(acq)`: `e` is a try or timed lock that failed,
    /// in the holding that began with the acquisition at `acq`.
    pub fn apply(&mut self, j: usize, e: &TEv) -> Option<usize> {
        let t = e.tid();
        match e.ev.op {
            Op::Lock { m, kind } => self.take(m, t, kind, j),
            Op::CondWake { m, .. } => self.take(m, t, MutexKind::Normal, j),
            Op::TryLock { m, kind } | Op::TimedLock { m, kind, .. } => {
                if let Some(&(o, _, _, acq)) = self.held.get(&m) {
                    if o != t || kind.base() != MutexKind::Recursive {
                        return Some(acq);
                    }
                }
                self.take(m, t, kind, j);
            }
            Op::Unlock { m, .. } => {
                if let Some(h) = self.held.get_mut(&m) {
                    h.1 = h.1.saturating_sub(1);
                    if h.1 == 0 {
                        self.release(m, j);
                    }
                }
            }
            Op::CondWait { m, .. } => self.release(m, j),
            // The exit of a thread that may hold robust mutexes frees them (owner-dead).
            Op::Exit if e.robust_exit => {
                let freed: Vec<u64> = self
                    .held
                    .iter()
                    .filter(|(_, &(o, _, robust, _))| o == t && robust)
                    .map(|(&m, _)| m)
                    .collect();
                for m in freed {
                    self.release(m, j);
                }
            }
            _ => {}
        }
        None
    }

    /// The owner of `m` and how many times it holds it.
    pub fn holder(&self, m: u64) -> Option<(Tid, u32)> {
        self.held.get(&m).map(|&(o, n, _, _)| (o, n))
    }

    fn take(&mut self, m: u64, t: Tid, kind: MutexKind, j: usize) {
        let e = self.held.entry(m).or_insert_with(|| {
            self.done.push(Holding {
                m,
                acq: j,
                release: None,
            });
            (t, 0, kind.robust(), j)
        });
        e.1 += 1;
    }

    /// `m` is free from `j` on.
    fn release(&mut self, m: u64, j: usize) {
        if let Some((_, _, _, acq)) = self.held.remove(&m) {
            if let Some(h) = self.done.iter_mut().rev().find(|h| h.acq == acq) {
                h.release = Some(j);
            }
        }
    }
}

/// Whether `ev`, after the events `before` (latest first), is the exit of a thread inside a
/// once routine: it began a control (no thread had ended that control's routine before,
/// so the begin ran it) and has not ended it.
pub fn exits_in_once<'a>(before: impl Iterator<Item = &'a TEv>, ev: &Event) -> bool {
    if ev.op != Op::Exit {
        return false;
    }
    let mut past: Vec<&TEv> = before.collect();
    past.reverse();
    let mut done: Vec<u64> = Vec::new();
    let mut running: Vec<u64> = Vec::new();
    for e in past {
        match e.ev.op {
            Op::OnceEnd { o } => {
                done.push(o);
                running.retain(|&r| r != o);
            }
            Op::OnceBegin { o } if e.tid() == ev.tid && !done.contains(&o) => running.push(o),
            _ => {}
        }
    }
    !running.is_empty()
}

/// Whether `ev`, after the events `before` (latest first; other threads' events are
/// skipped), is the exit of a thread that may hold a robust mutex: its locks of one
/// outnumber its unlocks (condition waits on it count both ways), or it tried or timed a
/// lock of one, whose success the trace does not record (`true`, the conservative answer).
pub fn exits_after_robust_lock<'a>(before: impl Iterator<Item = &'a TEv>, ev: &Event) -> bool {
    if ev.op != Op::Exit {
        return false;
    }
    let mut robust: Vec<u64> = Vec::new();
    let mut depth: HashMap<u64, i64> = HashMap::new();
    for e in before.filter(|e| e.tid() == ev.tid) {
        let (m, d) = match e.ev.op {
            Op::TryLock { kind, .. } | Op::TimedLock { kind, .. } if kind.robust() => return true,
            Op::Lock { m, kind } | Op::Unlock { m, kind } if kind.robust() => {
                if !robust.contains(&m) {
                    robust.push(m);
                }
                (
                    m,
                    if matches!(e.ev.op, Op::Lock { .. }) {
                        1
                    } else {
                        -1
                    },
                )
            }
            Op::CondWake { m, .. } => (m, 1),
            Op::CondWait { m, .. } => (m, -1),
            _ => continue,
        };
        *depth.entry(m).or_insert(0) += d;
    }
    robust.iter().any(|m| depth.get(m).is_some_and(|&d| d > 0))
}

/// Whether `op` operates on a mutex (a robust owner's exit may change what it returns).
fn on_once(op: &Op) -> bool {
    matches!(op, Op::OnceBegin { .. } | Op::OnceEnd { .. })
}

fn on_mutex(op: &Op) -> bool {
    op.objects()
        .iter()
        .flatten()
        .any(|o| o.kind == ObjKind::Mutex)
}

/// Whether an arrival at barrier `b` after the events `before` (latest first) leaves the
/// barrier incomplete: fewer than `count - 1` threads arrived since its last completing
/// arrival. `count` comes from the recorded `pthread_barrier_init`; without it, `false`.
pub fn barrier_open<'a>(before: impl Iterator<Item = &'a TEv>, b: u64, count: Option<u32>) -> bool {
    let Some(count) = count else {
        return false;
    };
    let arrived = before
        .filter(|e| matches!(e.ev.op, Op::BarrierWait { b: x } if x == b))
        .take_while(|e| e.barrier_open)
        .count();
    (arrived as u64) + 1 < u64::from(count)
}

/// Open barrier arrivals and leaves (see [`TEv::barrier_open`]): an arrival that does not
/// complete the barrier only counts, and a leave changes nothing, so two such events of
/// different threads commute and neither disables the other; the completing arrival (which
/// returns `PTHREAD_BARRIER_SERIAL_THREAD` and enables every leave) depends on all of them.
fn barrier_commutes(e: &TEv) -> bool {
    matches!(e.ev.op, Op::BarrierLeave { .. }) || e.barrier_open
}

/// The dependency relation used by every algorithm: [`Event::dependent`] (same thread, or same
/// object with a write), plus create → child, plus a `pthread_kill` and every event of its
/// target ([`kills`]), plus the process operations of [`ends_or_copies_processes`];
/// minus pairs of open barrier arrivals and leaves of different threads ([`barrier_commutes`]),
/// minus pairs of read-mode rwlock operations of different threads (two read acquisitions,
/// or a read acquisition and a read unlock): the state machine has no writer preference, so
/// each leaves the other enabled and both orders reach the same state (the independence
/// condition of Godefroid's partial-order reduction, POPL'14 §2), whereas every write-mode
/// operation (write lock, write unlock) conflicts with every operation on the same rwlock.
pub fn dependent(a: &TEv, b: &TEv) -> bool {
    if a.tid() != b.tid()
        && ((a.reader && b.reader)
            || (barrier_commutes(a) && barrier_commutes(b))
            || a.nested
            || b.nested)
    {
        return false;
    }
    a.ev.dependent(&b.ev)
        || (a.robust_exit && on_mutex(&b.ev.op))
        || (b.robust_exit && on_mutex(&a.ev.op))
        || (a.once_exit && on_once(&b.ev.op))
        || (b.once_exit && on_once(&a.ev.op))
        || ends_or_copies_processes(&a.ev.op)
        || ends_or_copies_processes(&b.ev.op)
        || a.child == Some(b.ev.tid)
        || b.child == Some(a.ev.tid)
        || kills(a, b)
        || kills(b, a)
        || meets_arrival(a, b)
        || meets_arrival(b, a)
}

/// `b` changes what a futex wait posted right after `a` finds (see [`TEv::futex_arrival`]):
/// a wake or requeue of that futex (before the arrival it does not wake the waiter, after it
/// it may), or a write to the word (before the arrival the wait returns `EAGAIN` at once).
fn meets_arrival(a: &TEv, b: &TEv) -> bool {
    let Some(w) = a.futex_arrival else {
        return false;
    };
    if a.tid() == b.tid() {
        return false;
    }
    match b.ev.op {
        Op::FutexWake { addr, .. } => addr == w,
        Op::FutexRequeue { addr, addr2, .. } | Op::FutexRequeued { addr, addr2, .. } => {
            addr == w || addr2 == w
        }
        Op::FutexWait { .. } => false,
        ref op => {
            op.access() == Access::Write
                && op
                    .objects()
                    .iter()
                    .flatten()
                    .any(|o| o.overlaps(&Obj::mem(w, 4)))
        }
    }
}

/// What [`dependent`] looks at, computed once per event of a trace: happens-before compares
/// every pair of a run's events, and most pairs (two threads, no process operation, no
/// create, no kill, no robust exit) only need their objects compared.
struct DepKey {
    tid: Tid,
    objects: [Option<Obj>; 2],
    read: bool,
    /// The pair rule of [`dependent`] that makes two such events of different threads
    /// independent whatever their objects (read-mode rwlock operations, open barrier
    /// arrivals, nested recursive locks).
    reader: bool,
    barrier: bool,
    nested: bool,
    /// A create, kill, process operation or robust exit: [`dependent`] itself decides.
    special: bool,
}

impl DepKey {
    fn of(e: &TEv) -> Self {
        DepKey {
            tid: e.tid(),
            objects: e.ev.objects(),
            read: e.ev.op.access() == Access::Read,
            reader: e.reader,
            barrier: barrier_commutes(e),
            nested: e.nested,
            special: e.child.is_some()
                || e.robust_exit
                || e.once_exit
                || e.futex_arrival.is_some()
                || ends_or_copies_processes(&e.ev.op)
                || matches!(e.ev.op, Op::Kill { .. }),
        }
    }

    /// `dependent(a, b)` for the events `a` and `b` these keys were made of.
    #[inline]
    fn dependent(&self, other: &DepKey, a: &TEv, b: &TEv) -> bool {
        if self.tid == other.tid {
            return true;
        }
        if self.special || other.special {
            return dependent(a, b);
        }
        if (self.reader && other.reader)
            || (self.barrier && other.barrier)
            || self.nested
            || other.nested
        {
            return false;
        }
        !(self.read && other.read)
            && self
                .objects
                .iter()
                .flatten()
                .any(|x| other.objects.iter().flatten().any(|y| x.overlaps(y)))
    }
}

/// `k` is a `pthread_kill` of `e`'s thread: where the handler runs among that thread's
/// events, and whether a wait it is blocked in ends with `EINTR`, depends on their order.
fn kills(k: &TEv, e: &TEv) -> bool {
    matches!(k.ev.op, Op::Kill { target } if target == e.tid())
}

/// [`dependent`] for events taken out of the trace that recorded them (a reversal, a wakeup
/// sequence, a sleep set): whether an arrival leaves its barrier open depends on how many
/// arrived before it, which a reordering changes, so that flag is dropped (the conservative
/// answer: such an arrival depends on every other operation on its barrier). The read mode of
/// a rwlock operation is the thread's own and stays.
pub fn dependent_anywhere(a: &TEv, b: &TEv) -> bool {
    let fixed = |e: &TEv| TEv {
        barrier_open: false,
        ..*e
    };
    dependent(&fixed(a), &fixed(b))
}

/// Process-level operations, dependent with every event: a process exit ends every thread
/// of the run (or of a child process), an exec or failed fork ends a child process, a fork
/// copies its process's objects and memory (the order of any write before or after it
/// matters to the child), and a wait for a child depends on whatever ends that child.
fn ends_or_copies_processes(op: &Op) -> bool {
    matches!(
        op,
        Op::ProcessExit { .. } | Op::Fork | Op::Exec | Op::ForkFailed { .. } | Op::WaitProc { .. }
    )
}

/// A lock-like resource: a mutex, a read-write lock, or a semaphore (a `sem_wait` takes a
/// unit that a `sem_post` gives back: used as a lock, a semaphore initialised to 1 is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Res {
    Mutex(u64),
    Rw(u64),
    Sem(u64),
    /// A `pthread_once` control: `OnceBegin` takes it (the first caller runs the init), its
    /// `OnceEnd` gives it back; a caller that waited for the init races with the caller that
    /// ran it, so that every thread gets to be the one that runs it.
    Once(u64),
}

/// An acquisition that blocks while the resource is held (lock, the re-acquiring half of a
/// condition wait, a read or write lock, and their timed forms, which under the default
/// `deadline` policy wait like them until their deadline), with its resource.
fn blocking_acquire(op: &Op) -> Option<Res> {
    match *op {
        Op::Lock { m, .. } | Op::TimedLock { m, .. } | Op::CondWake { m, .. } => {
            Some(Res::Mutex(m))
        }
        Op::RdLock { l }
        | Op::WrLock { l }
        | Op::TimedRdLock { l, .. }
        | Op::TimedWrLock { l, .. } => Some(Res::Rw(l)),
        Op::SemWait { s } | Op::SemTimedWait { s, .. } => Some(Res::Sem(s)),
        Op::OnceBegin { o } => Some(Res::Once(o)),
        _ => None,
    }
}

/// The resource an attempt to take a lock-like resource (successful or not, which may hold
/// it afterwards) is about: lock, trylock, timed lock, a condition wait taking its mutex back,
/// the read and write locks of a rwlock, a semaphore wait.
pub fn acquired(op: &Op) -> Option<Res> {
    use Op::*;
    match *op {
        Lock { m, .. } | TryLock { m, .. } | TimedLock { m, .. } | CondWake { m, .. } => {
            Some(Res::Mutex(m))
        }
        RdLock { l }
        | WrLock { l }
        | TryRdLock { l }
        | TryWrLock { l }
        | TimedRdLock { l, .. }
        | TimedWrLock { l, .. } => Some(Res::Rw(l)),
        SemWait { s } | SemTryWait { s } | SemTimedWait { s, .. } => Some(Res::Sem(s)),
        _ => None,
    }
}

/// Any successful-or-not attempt to take `r` that may hold it afterwards.
fn acquires(op: &Op, r: Res) -> bool {
    acquired(op) == Some(r) || matches!((*op, r), (Op::OnceBegin { o }, Res::Once(x)) if o == x)
}

/// A release of `r` (unlock, the releasing half of a condition wait, an rwlock unlock).
fn releases(op: &Op, r: Res) -> bool {
    match (*op, r) {
        (Op::Unlock { m: x, .. } | Op::CondWait { m: x, .. }, Res::Mutex(m)) => x == m,
        (Op::RwUnlock { l: x }, Res::Rw(l)) => x == l,
        (Op::SemPost { s: x }, Res::Sem(s)) => x == s,
        (Op::OnceEnd { o: x }, Res::Once(o)) => x == o,
        _ => false,
    }
}

/// A semaphore, barrier or robust mutex initialisation of a recorded run (`sem_init`,
/// `pthread_barrier_init` and `pthread_mutex_init` are notifications, not events; a mutex's
/// `value` is unused): `at` events had executed when it
/// happened, so it follows event `at - 1` in program order (that event's thread, or the child
/// that event created, made it: only they run between two scheduling points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Init {
    pub at: usize,
    pub obj: Obj,
    pub value: u32,
}

/// Initial semaphore values a trace needs: the largest excess of waits over posts. Only a
/// fallback for semaphores whose real initialisation was not recorded ([`Init`]): the real
/// value may be larger, and reversals that need more units than this run consumed would be
/// wrongly judged infeasible (`sem_init(&s, 0, 2)` used as a mutex looks like a value of 1).
pub fn infer_sem_init(trace: &[TEv]) -> HashMap<u64, u32> {
    let mut bal: HashMap<u64, i64> = HashMap::new();
    let mut need: HashMap<u64, u32> = HashMap::new();
    for t in trace {
        match t.ev.op {
            Op::SemPost { s } => *bal.entry(s).or_insert(0) += 1,
            Op::SemWait { s } => {
                let b = bal.entry(s).or_insert(0);
                *b -= 1;
                let n = need.entry(s).or_insert(0);
                *n = (*n).max((-*b).max(0) as u32);
            }
            _ => {}
        }
    }
    need
}

/// Barrier counts a trace implies: the arrivals at each barrier before its first departure
/// (`pthread_barrier_init` is a notification, not an event; the first generation is complete
/// exactly when the first waiter leaves).
pub fn infer_barrier_counts(trace: &[TEv]) -> HashMap<u64, u32> {
    let mut arrived: HashMap<u64, u32> = HashMap::new();
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for t in trace {
        match t.ev.op {
            Op::BarrierWait { b } if !counts.contains_key(&b) => {
                *arrived.entry(b).or_insert(0) += 1;
            }
            Op::BarrierLeave { b } => {
                let n = arrived.get(&b).copied().unwrap_or(1);
                counts.entry(b).or_insert(n);
            }
            _ => {}
        }
    }
    counts
}

/// [`Hb`]'s clock edges of `trace` (a run with the initialisations `inits`): for each event
/// that waited for virtual time to pass, the number of events executed before the clock
/// moved, all of which it follows (see `Hb::clock_cuts`).
pub fn clock_cuts(trace: &[TEv], inits: &[Init]) -> Vec<Option<usize>> {
    Hb::bare(trace.to_vec(), inits.to_vec()).clock_cuts()
}

/// The clock rule in a replayed sequence, for thread `t`, posted and not enabled: time
/// passes only once every thread has posted and none can go on (`state::clock`). The threads
/// still running post `next(u)`, what they posted next in the run the sequence comes from,
/// as the run's threads all had before its clock moved. False when a running thread's next
/// operation is unknown (the run ended before it posted) or cannot be posted.
pub fn let_time_pass(s: &mut State, t: Tid, next: impl Fn(Tid) -> Option<Op>) -> bool {
    let running: Vec<Tid> = s.running().collect();
    for u in running {
        match next(u) {
            Some(op) if s.post(u, op).is_ok() => {}
            _ => return false,
        }
    }
    while !s.is_enabled(t) && s.all_posted() && s.enabled_events().is_empty() && s.advance_clock() {
    }
    true
}

/// `c` := the pointwise maximum of `c` and `o`.
fn join_into(c: &mut [u32], o: &[u32]) {
    for (a, &b) in c.iter_mut().zip(o) {
        *a = (*a).max(b);
    }
}

/// For each event of `trace`, the futex waits its thread (or the thread it created) posts
/// right after it: a futex wait registers its waiter when it is posted, which a thread does
/// as soon as it reaches it, long before the wait returns (the event the trace records, once
/// a wake woke it). A replay of the trace on the state machine posts these at once, or the
/// wake that woke them in the run finds no waiter (see [`Hb::execute`]).
pub fn futex_waits_posted_after(trace: &[TEv]) -> Vec<Vec<usize>> {
    let mut next_wait = vec![Vec::new(); trace.len()];
    // The event after which each thread's next event is posted: its previous one, or the
    // create of the thread.
    let mut last: HashMap<Tid, usize> = HashMap::new();
    for (k, e) in trace.iter().enumerate() {
        if let Some(p) = last.insert(e.tid(), k) {
            if matches!(e.ev.op, Op::FutexWait { .. }) {
                next_wait[p].push(k);
            }
        }
        if let Some(c) = e.child {
            last.insert(c, k);
        }
    }
    next_wait
}

/// Post on `s` the futex waits `waits` (indices into `trace`, see
/// [`futex_waits_posted_after`]) of threads that have no pending event: a replay does so
/// right after the event they follow, or the wake that woke them in the run finds no waiter.
pub fn post_futex_waits(s: &mut State, trace: &[TEv], waits: &[usize]) {
    for &w in waits {
        let u = trace[w].tid();
        if s.pending(u).is_none() {
            let _ = s.post(u, trace[w].ev.op);
        }
    }
}

/// No event (see [`Hb::prev`]).
const NONE: u32 = u32::MAX;

/// Events between two saved states of [`AsRun`].
const SNAP: usize = 64;

/// The state machine before every [`SNAP`]-th event of a trace replayed as it ran (from
/// `initial` threads), up to the first event whose replay failed (`fails_at`; the trace's
/// length when none did). Each race's feasibility check replays the prefix before its first
/// event: from the nearest saved state, that is at most `SNAP` steps instead of the whole
/// prefix, which made race detection quadratic in a long run's length.
struct AsRun {
    initial: usize,
    states: Vec<State>,
    fails_at: usize,
}

/// Vector-clock happens-before of a trace.
pub struct Hb {
    pub trace: Vec<TEv>,
    /// 1-based index of each event within its thread.
    idx: Vec<u32>,
    /// Vector clock of each event (indexed by tid).
    vc: Vec<Vec<u32>>,
    /// Dependency predecessors of each event in other threads (earlier, dependent), latest
    /// first. Its own thread's earlier events, all dependent, are reached through `prev`:
    /// listing them made this quadratic in memory for long runs.
    preds: Vec<Vec<u32>>,
    /// The previous event of each event's thread (`NONE`: its first).
    prev: Vec<u32>,
    /// States of the trace replayed as it ran, made at the first [`Hb::feasible`].
    as_run: std::sync::OnceLock<AsRun>,
    /// The recorded initialisations, by position.
    inits: Vec<Init>,
    /// Semaphores without a recorded initialisation: the values the trace implies (see
    /// [`infer_sem_init`]).
    sem_fallback: HashMap<u64, u32>,
    /// Barriers without a recorded initialisation: the counts the trace implies (see
    /// [`infer_barrier_counts`]).
    barrier_fallback: HashMap<u64, u32>,
    /// For each event, the futex waits posted right after it (see [`Hb::execute`]): its
    /// thread's next event, or the first event of the thread it created, when a wait.
    next_wait: Vec<Vec<usize>>,
}

impl Hb {
    /// Compute the happens-before relation of `trace` (quadratic; traces are short), with
    /// initial values inferred from the trace.
    pub fn new(trace: Vec<TEv>) -> Self {
        Hb::with_inits(trace, Vec::new())
    }

    /// [`Hb::new`] for a run whose semaphore and barrier initialisations were recorded: the
    /// feasibility replays use the real values.
    pub fn with_inits(trace: Vec<TEv>, inits: Vec<Init>) -> Self {
        let mut hb = Hb::bare(trace, inits);
        hb.relate();
        hb
    }

    /// The trace with its initial values, happens-before not yet computed.
    fn bare(trace: Vec<TEv>, mut inits: Vec<Init>) -> Self {
        inits.sort_by_key(|i| i.at);
        let known =
            |kind: ObjKind, a: u64| inits.iter().any(|i| i.obj.kind == kind && i.obj.addr == a);
        let mut sem_fallback = infer_sem_init(&trace);
        sem_fallback.retain(|&a, _| !known(ObjKind::Sem, a));
        let mut barrier_fallback = infer_barrier_counts(&trace);
        barrier_fallback.retain(|&a, _| !known(ObjKind::Barrier, a));
        let next_wait = futex_waits_posted_after(&trace);
        Hb {
            trace,
            next_wait,
            idx: Vec::new(),
            vc: Vec::new(),
            preds: Vec::new(),
            prev: Vec::new(),
            as_run: std::sync::OnceLock::new(),
            inits,
            sem_fallback,
            barrier_fallback,
        }
    }

    /// Compute the vector clocks and dependency predecessors of the trace.
    fn relate(&mut self) {
        let cuts = self.clock_cuts();
        let hb = self;
        let trace = &hb.trace;
        let nthreads = trace
            .iter()
            .flat_map(|t| [Some(t.ev.tid), t.child])
            .flatten()
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut counts = vec![0u32; nthreads];
        let mut idx = Vec::with_capacity(trace.len());
        let mut vc: Vec<Vec<u32>> = Vec::with_capacity(trace.len());
        let mut preds = Vec::with_capacity(trace.len());
        let mut prev = Vec::with_capacity(trace.len());
        let mut last = vec![NONE; nthreads];
        // The join of the clocks of the first `before.len() - 1` events (kept only when some
        // event waited for the clock).
        let timed = cuts.iter().any(Option::is_some);
        let mut before: Vec<Vec<u32>> = vec![vec![0u32; nthreads]];
        let keys: Vec<DepKey> = trace.iter().map(DepKey::of).collect();
        for (j, e) in trace.iter().enumerate() {
            let t = e.tid() as usize;
            counts[t] += 1;
            idx.push(counts[t]);
            let mut clock = match cuts[j] {
                Some(cut) => before[cut].clone(),
                None => vec![0u32; nthreads],
            };
            let mut p = Vec::new();
            let mine = std::mem::replace(&mut last[t], j as u32);
            prev.push(mine);
            if mine != NONE {
                join_into(&mut clock, &vc[mine as usize]);
            }
            for k in (0..j).rev() {
                if keys[k].tid != keys[j].tid && keys[k].dependent(&keys[j], &trace[k], e) {
                    p.push(k as u32);
                    // Latest first: an earlier event already in the clock's past adds
                    // nothing (its clock is below the one that has it).
                    if clock[trace[k].tid() as usize] < idx[k] {
                        for (c, &o) in clock.iter_mut().zip(&vc[k]) {
                            *c = (*c).max(o);
                        }
                    }
                }
            }
            clock[t] = counts[t];
            if timed {
                let mut upto = before[j].clone();
                join_into(&mut upto, &clock);
                before.push(upto);
            }
            vc.push(clock);
            preds.push(p);
        }
        hb.idx = idx;
        hb.vc = vc;
        hb.preds = preds;
        hb.prev = prev;
    }

    /// The clock's part of happens-before (`state::clock`): a sleep ends, and a timed wait
    /// times out, only once virtual time reaches its deadline, and time passes only when no
    /// thread can go on, so such an event comes after every event executed before the clock
    /// reached its deadline. For each event: `Some(cut)` when it waited so, the events
    /// `..cut` being those before the clock moved. A sleep or timeout touches no object the
    /// others wait for, so without these edges a reversal could put it before events the run
    /// had to finish first, where time cannot pass: the reversal was judged infeasible and
    /// the trace missed (two sleepers and a race after them; a timed wait's timeout).
    ///
    /// The clock at each event and whether a timed wait timed out come from replaying the
    /// trace on the state machine, the clock moving when an event needs it as it did in the
    /// run. An event waited when its deadline was beyond the clock at the time its thread
    /// posted it, i.e. right after the thread's previous event (or its creation): the clock
    /// cannot move while a thread runs between two points. The rules are those of the default
    /// `deadline` policy.
    fn clock_cuts(&self) -> Vec<Option<usize>> {
        let n = self.trace.len();
        let mut cuts = vec![None; n];
        if !self.trace.iter().any(|t| t.ev.op.deadline().is_some()) {
            return cuts;
        }
        let children: std::collections::HashSet<Tid> =
            self.trace.iter().filter_map(|t| t.child).collect();
        let initial = self
            .trace
            .iter()
            .map(|t| t.tid())
            .filter(|t| !children.contains(t))
            .max()
            .map_or(1, |m| m as usize + 1);
        let mut s = self.initial_state(initial);
        // The clock after each event, and whether it was a timed wait that timed out.
        let mut now: Vec<u64> = Vec::with_capacity(n);
        let mut timed_out: Vec<bool> = Vec::with_capacity(n);
        for k in 0..n {
            let Some(done) = self.step_as_run(&mut s, k) else {
                break;
            };
            now.push(s.now());
            timed_out.push(done.result == crate::state::code::ETIMEDOUT);
        }
        let mut last: HashMap<Tid, usize> = HashMap::new();
        let mut created: HashMap<Tid, usize> = HashMap::new();
        for (j, e) in self.trace.iter().enumerate().take(now.len()) {
            let tid = e.tid();
            let before = last.get(&tid).or_else(|| created.get(&tid)).copied();
            let waited = matches!(e.ev.op, Op::SleepUntil { .. }) || timed_out[j];
            if let (Some(deadline), true) = (e.ev.op.deadline(), waited) {
                let posted_at = before.map_or(0, |b| now[b]);
                if deadline > posted_at {
                    let from = before.map_or(0, |b| b + 1);
                    let cut = (from..=j).find(|&i| now[i] >= deadline).unwrap_or(j);
                    cuts[j] = Some(cut);
                }
            }
            last.insert(tid, j);
            if let Some(c) = e.child {
                created.insert(c, j);
            }
        }
        cuts
    }

    pub fn len(&self) -> usize {
        self.trace.len()
    }

    pub fn is_empty(&self) -> bool {
        self.trace.is_empty()
    }

    /// The earlier events of other threads that `trace[j]` depends on (by [`dependent`]),
    /// latest first. (Every earlier event of its own thread is dependent too.)
    pub fn dependent_before(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        self.preds[j].iter().map(|&k| k as usize)
    }

    /// `trace[i] →E trace[k]` (reflexive).
    #[inline]
    pub fn hb(&self, i: usize, k: usize) -> bool {
        let t = self.trace[i].tid() as usize;
        self.vc[k].get(t).copied().unwrap_or(0) >= self.idx[i]
    }

    /// Whether `i` happens before some direct predecessor of `j` later than `i`, ignoring
    /// those `skip` selects — then `i` and `j` are not adjacent in happens-before.
    fn covered(&self, i: usize, j: usize, skip: impl Fn(usize) -> bool) -> bool {
        let others = self.preds[j]
            .iter()
            .map(|&k| k as usize)
            .take_while(|&k| k > i)
            .any(|k| !skip(k) && self.hb(i, k));
        // `j`'s own thread: happens-before grows along it, so its latest event after `i`
        // that `skip` keeps decides.
        let mut k = self.prev[j];
        while !others && k != NONE && k as usize > i {
            if !skip(k as usize) {
                return self.hb(i, k as usize);
            }
            k = self.prev[k as usize];
        }
        others
    }

    /// The races `(e, j)` whose second event is `j` (POPL'14 Def. of `⋖E`), restricted to
    /// pairs that may be co-enabled.
    ///
    /// Blocking acquisitions get one refinement (as in Nidhugg): a lock that waited for an
    /// unlock is in race with the *lock* that unlock released, since the unlock itself can
    /// never be reordered after the waiting lock (a robust mutex's owner's exit, which frees
    /// the mutex, counts as its unlock). The same holds for read-write locks: a
    /// read or write lock that waited for a write unlock races with that write lock, and a
    /// write lock that waited for the readers races with each reader's read lock (without
    /// this, the reader-then-writer "upgrade" of two threads, whose lost update needs both
    /// reads before either write, was never explored). Likewise a condition wake races with the
    /// last wake of another waiter on the same condition since its own wait: both waited for
    /// the same signal, even when happens-before runs from the first wake to the second
    /// through a later broadcast (without this, readers-writers with 2 writers lost traces:
    /// 54 of DFS's 56 with 1 reader). Pairs that are not co-enabled (an exit and
    /// the join waiting for it, a create and its child, a post and the wait it enabled) are
    /// dropped by replaying `pre(E, e).notdep(e, E).e'` on the pure state machine (see
    /// [`Hb::feasible`]); `initial` is the number of threads existing at step 0.
    pub fn races_of(&self, j: usize, initial: usize) -> Vec<usize> {
        let ej = &self.trace[j];
        let mut out: Vec<usize> = Vec::new();
        for i in self.preds[j].iter().map(|&i| i as usize) {
            let ei = &self.trace[i];
            if ei.child == Some(ej.tid()) {
                continue;
            }
            if self.covered(i, j, |_| false) {
                // A later predecessor `k` of `j` happens after `i`, hence after the
                // acquisition of the critical section `i` may end (it comes before `i` in
                // `i`'s thread, and `k` is outside the section): no race below either.
                continue;
            }
            out.push(i);
            if let Some(m) = blocking_acquire(&ej.ev.op) {
                // The exit of a robust mutex's owner releases it too (see `robust_exit`).
                let robust_release = ei.robust_exit && matches!(m, Res::Mutex(_));
                if releases(&ei.ev.op, m) || robust_release {
                    // The acquisition the release gave back: a nested relock of a
                    // recursive mutex is not it (the outer lock is).
                    if let Some(a) = (0..i).rev().find(|&a| {
                        let ea = &self.trace[a];
                        ea.tid() == ei.tid() && acquires(&ea.ev.op, m) && !ea.nested
                    }) {
                        // The critical section `a..=i` moves as a whole: its own events
                        // do not separate `a` from `j` (a signal inside it that `j` really
                        // needs makes the reversal infeasible, which the replay detects).
                        let inside = |k: usize| k <= i && self.trace[k].tid() == ei.tid();
                        if !self.covered(a, j, inside) && !out.contains(&a) {
                            out.push(a);
                        }
                    }
                }
            }
        }
        // Two waits competing for one unit of a semaphore: a wait that was only enabled by a
        // post (of any thread) races with the latest earlier wait of another thread on that
        // semaphore — it could have taken that wait's unit — when only posts to the semaphore
        // and that thread's own later events separate them (the releasing rule above covers a
        // unit given back by the same thread).
        if let Op::SemWait { s } | Op::SemTimedWait { s, .. } = ej.ev.op {
            let a = (0..j).rev().find(|&a| {
                let ea = &self.trace[a];
                ea.tid() != ej.tid() && acquires(&ea.ev.op, Res::Sem(s))
            });
            if let Some(a) = a.filter(|a| !out.contains(a)) {
                let ta = self.trace[a].tid();
                let skip = |k: usize| {
                    releases(&self.trace[k].ev.op, Res::Sem(s))
                        || (k > a && self.trace[k].tid() == ta)
                };
                if !self.covered(a, j, skip) {
                    out.push(a);
                }
            }
        }
        // Two waiters competing for one signal: a wake that was only enabled later (by a
        // broadcast or signal that happens after the first wake) may still have taken the
        // first wake's signal; happens-before passes through that later enabler, so the pair
        // is not adjacent, yet reversing it is a different trace (as for two locks above).
        if let Op::CondWake { c, .. } = ej.ev.op {
            // The wait `j` completes: the last event of its thread before it.
            let wait = (0..j).rev().find(|&k| self.trace[k].tid() == ej.tid());
            let last = (wait.map_or(0, |w| w + 1)..j).rev().find(|&i| {
                let ei = &self.trace[i];
                ei.tid() != ej.tid() && matches!(ei.ev.op, Op::CondWake { c: x, .. } if x == c)
            });
            if let Some(i) = last.filter(|i| !out.contains(i)) {
                out.push(i);
            }
        }
        out.retain(|&i| self.feasible(i, j, initial));
        out.sort_unstable();
        out
    }

    /// `notdep(e, E).e'` for the race `(e, e')`: the events after `e` that do not happen after
    /// it, followed by `e'`. Source-DPOR (POPL'14 Alg. 1) takes the events before `e'` only;
    /// Optimal-DPOR (Alg. 2) the whole rest of the execution (`whole = true`).
    pub fn reversal(&self, e: usize, e2: usize, whole: bool) -> Vec<TEv> {
        self.reversal_indices(e, e2, whole)
            .into_iter()
            .map(|k| self.trace[k])
            .collect()
    }

    /// [`Hb::reversal`] as indices into the trace.
    fn reversal_indices(&self, e: usize, e2: usize, whole: bool) -> Vec<usize> {
        let end = if whole { self.len() } else { e2 };
        let mut v: Vec<usize> = (e + 1..end)
            .filter(|&k| k != e2 && !self.hb(e, k))
            .collect();
        v.push(e2);
        v
    }

    /// Apply the recorded initialisations made after `at` events (at the same place of the
    /// replayed sequence: right after the event they follow in program order).
    fn init_at(&self, s: &mut State, at: usize) {
        let from = self.inits.partition_point(|i| i.at < at);
        for i in self.inits[from..].iter().take_while(|i| i.at == at) {
            match i.obj.kind {
                ObjKind::Sem => s.init_sem(i.obj.addr, i.value),
                ObjKind::Barrier => s.init_barrier(i.obj.addr, i.value),
                ObjKind::Mutex => s.init_mutex(i.obj.addr),
                _ => {}
            }
        }
    }

    /// Whether `pre(E, e).notdep(e, E).e'` (Optimal-DPOR's reversal, which contains
    /// Source-DPOR's) is an execution: every event enabled when its turn comes, with the real
    /// initial semaphore values and barrier counts (inferred ones for objects whose
    /// initialisation was not recorded). An initialisation that follows an event left out of
    /// the sequence is not applied: it happens after `e` in program order.
    fn feasible(&self, e: usize, e2: usize, initial: usize) -> bool {
        let Some(mut s) = self.as_run_before(e, initial) else {
            return false;
        };
        let rest = self.reversal_indices(e, e2, true);
        let mut done = vec![false; self.len()];
        done[..e].iter_mut().for_each(|d| *d = true);
        for k in rest {
            if !self.step_clocked(&mut s, k, &done) {
                return false;
            }
            done[k] = true;
        }
        true
    }

    /// The state before event `e` of the trace replayed as it ran from `initial` threads
    /// ([`Self::step_as_run`]); `None` when an event before `e` cannot be replayed so.
    fn as_run_before(&self, e: usize, initial: usize) -> Option<State> {
        let saved = self.as_run.get_or_init(|| self.replay_as_run(initial));
        let (mut s, from) = if saved.initial == initial {
            if saved.fails_at < e {
                return None;
            }
            let c = e / SNAP;
            (saved.states[c].clone(), c * SNAP)
        } else {
            (self.initial_state(initial), 0)
        };
        (from..e)
            .all(|k| self.step_as_run(&mut s, k).is_some())
            .then_some(s)
    }

    /// [`AsRun`] of this trace from `initial` threads.
    fn replay_as_run(&self, initial: usize) -> AsRun {
        let mut s = self.initial_state(initial);
        let mut states = Vec::with_capacity(self.len() / SNAP + 1);
        let mut fails_at = self.len();
        for k in 0..=self.len() {
            if k % SNAP == 0 {
                states.push(s.clone());
            }
            if k == self.len() {
                break;
            }
            if self.step_as_run(&mut s, k).is_none() {
                fails_at = k;
                break;
            }
        }
        AsRun {
            initial,
            states,
            fails_at,
        }
    }

    /// [`Self::step`] for an event of a reordered sequence, by the clock rule: when it is
    /// not enabled, time passes only if every other thread, having posted its next event of
    /// the trace (the first one not `done`), cannot go on either, as the run's clock would
    /// (a timeout that another order lets fire; `state::clock`).
    fn step_clocked(&self, s: &mut State, k: usize, done: &[bool]) -> bool {
        let t = self.trace[k].tid();
        if s.pending(t).is_none() && s.post(t, self.trace[k].ev.op).is_err() {
            return false;
        }
        let next = |u: Tid| {
            (0..self.len())
                .find(|&x| !done[x] && self.trace[x].tid() == u)
                .map(|x| self.trace[x].ev.op)
        };
        if !s.is_enabled(t) && !let_time_pass(s, t, next) {
            return false;
        }
        self.step(s, k)
    }

    /// [`Self::step`] for an event of the run's own prefix: it ran there, so when it is not
    /// enabled yet the clock moves to its deadline first, as the run's clock did (a sleep
    /// before the race is no reason to drop it: the machine's clock starts at 0).
    fn step_as_run(&self, s: &mut State, k: usize) -> Option<crate::state::Executed> {
        let t = self.trace[k].tid();
        if s.pending(t).is_none() && s.post(t, self.trace[k].ev.op).is_err() {
            return None;
        }
        while !s.is_enabled(t) && s.advance_clock() {}
        self.execute(s, k)
    }

    /// The state machine before the first event, with the run's initial values.
    fn initial_state(&self, initial: usize) -> State {
        let mut s = State::with_initial_threads(initial.max(1));
        for (&sem, &v) in &self.sem_fallback {
            s.init_sem(sem, v);
        }
        for (&b, &count) in &self.barrier_fallback {
            s.init_barrier(b, count);
        }
        self.init_at(&mut s, 0);
        s
    }

    /// Execute event `k` on `s` if its thread is there and it is enabled (an event not
    /// enabled stays posted: it is its thread's next event either way).
    fn step(&self, s: &mut State, k: usize) -> bool {
        self.execute(s, k).is_some()
    }

    /// [`Self::step`], with what the execution returned. A futex wait registers its waiter
    /// when it is posted, which a thread does as soon as it reaches it: right after its
    /// previous event, long before the wait returns (the event the trace records, once a
    /// wake woke it). So when the thread's next event is a futex wait, it is posted here at
    /// once; posted only when its turn came, it missed the wake that woke it in the run and
    /// every replay through it failed (odpor and dpor explored 1 execution of any program
    /// whose threads sleep in a futex, OpenMP's barriers say, and called it complete).
    fn execute(&self, s: &mut State, k: usize) -> Option<crate::state::Executed> {
        let t = self.trace[k];
        if s.pending(t.tid()).is_none() && s.post(t.tid(), t.ev.op).is_err() {
            return None;
        }
        if !s.is_enabled(t.tid()) {
            return None;
        }
        let done = s.execute(t.tid()).ok()?;
        self.init_at(s, k + 1);
        post_futex_waits(s, &self.trace, &self.next_wait[k]);
        Some(done)
    }

    /// Realise `order` (a reordering of the trace's indices that keeps each thread's
    /// order) on the state machine as closely as it allows: each event runs in turn when its
    /// thread is there and it is enabled, otherwise it waits, with the later events of its
    /// thread, and after every executed event the waiting ones are retried, earliest first.
    /// Events that never become enabled come last, in order. R4 uses it to turn "reverse this
    /// race, then continue as the parent run did" into a sequence the program can follow
    /// (a lock moved before another thread's critical section waits for its unlock instead
    /// of being skipped).
    pub fn realise(&self, order: &[usize], initial: usize) -> Vec<usize> {
        let mut s = self.initial_state(initial);
        let mut out = Vec::with_capacity(order.len());
        let mut waiting: Vec<usize> = Vec::new();
        // Events run so far; time passes by the clock rule ([`Self::step_clocked`]), so a
        // sleep runs where the run's clock would let it, not last.
        let mut done = vec![false; self.len()];
        for &k in order {
            let t = self.trace[k].tid();
            if waiting.iter().any(|&w| self.trace[w].tid() == t)
                || !self.step_clocked(&mut s, k, &done)
            {
                waiting.push(k);
                continue;
            }
            out.push(k);
            done[k] = true;
            // Retry the waiting events, earliest first, after each one that runs.
            'retry: loop {
                for i in 0..waiting.len() {
                    let w = waiting[i];
                    let tw = self.trace[w].tid();
                    let first_of_thread = waiting[..i].iter().all(|&x| self.trace[x].tid() != tw);
                    if first_of_thread && self.step_clocked(&mut s, w, &done) {
                        waiting.remove(i);
                        out.push(w);
                        done[w] = true;
                        continue 'retry;
                    }
                }
                break;
            }
        }
        out.extend(waiting);
        out
    }
}

/// The races of the blocked events of a deadlocked run (events posted and never executed:
/// a `sem_wait` on an empty semaphore, a lock of a held mutex, ...) with its executed events
/// `done`: `(e, v)` for each race `e ⋖ b` of a blocked event `b`, with `v` its reversal
/// (`notdep(e).b`, the whole rest of the run for `whole`, Optimal-DPOR; up to `b`
/// otherwise). A blocked event never runs, so no race of the trace names it, yet it is
/// dependent with the events that disabled it: the wait that took the last unit of a
/// semaphore could have been this one (the 1-producer/2-consumer buffer has two traces,
/// one per consumer that gets the item, and the run where one consumer takes it shows no
/// race at all). Each blocked event is analysed alone, appended to `done` (blocked events
/// are not ordered among themselves); reversals are checked feasible as for any race.
///
/// The same holds for a run cut short by a failed assertion or a crash: the other threads'
/// posted events (enabled or not) never ran, and the executions where one of them runs
/// before a dependent executed event are other traces (`cond_if`: the consumer that asserts
/// right after reacquiring the mutex ends the run before the producer's second lock, and the
/// bug-free trace where that lock comes first is reached only through this race).
pub fn blocked_races(
    done: &[TEv],
    inits: &[Init],
    blocked: &[Event],
    initial: usize,
    whole: bool,
) -> Vec<(usize, Vec<TEv>)> {
    // A run that ended with a process exit while `blocked` events still waited: they could
    // have run before the exit, so each is also analysed as if appended before it. After
    // it, the exit (dependent with every event of its process) hides the races with what
    // the exiting thread did just before (main's timed wait timing out, then `exit`, while
    // the thread that would signal it waited for the mutex the wait took back: `--timeouts
    // any` explored the wake-up path only so).
    let mut out = match done.split_last() {
        Some((last, before)) if matches!(last.ev.op, Op::ProcessExit { .. }) => {
            blocked_races_after(before, inits, blocked, initial, whole)
        }
        _ => Vec::new(),
    };
    out.extend(blocked_races_after(done, inits, blocked, initial, whole));
    out
}

/// [`blocked_races`] with each blocked event appended after all of `done`.
fn blocked_races_after(
    done: &[TEv],
    inits: &[Init],
    blocked: &[Event],
    initial: usize,
    whole: bool,
) -> Vec<(usize, Vec<TEv>)> {
    let mut out = Vec::new();
    for b in blocked {
        let mut t = done.to_vec();
        t.push(TEv::new(*b));
        let hb = Hb::with_inits(t, inits.to_vec());
        let j = done.len();
        for e in hb.races_of(j, initial) {
            let v = hb.reversal(e, j, whole);
            out.push((e, v));
        }
    }
    out
}

/// Whether thread `p` is an initial of `w` (POPL'14 §3: `p ∈ I(w)`): it occurs in `w` and its
/// first event there does not happen after any earlier event of `w`. A direct-dependency check
/// suffices: a happens-before chain ending at that event ends with a direct dependency.
pub fn is_initial(w: &[TEv], p: Tid) -> bool {
    match w.iter().position(|e| e.tid() == p) {
        Some(k) => w[..k].iter().all(|x| !dependent_anywhere(x, &w[k])),
        None => false,
    }
}

/// The initials of `w`, in order of first occurrence.
pub fn initials(w: &[TEv]) -> Vec<Tid> {
    let mut out: Vec<Tid> = Vec::new();
    for e in w {
        if !out.contains(&e.tid()) && is_initial(w, e.tid()) {
            out.push(e.tid());
        }
    }
    out
}

/// Whether the event `next` (the pending event of its thread in the current state) is a weak
/// initial of `w` (POPL'14 §6: `p ∈ WI(w)`): an initial of `w`, or a thread absent from `w`
/// whose next event is independent of all of `w`.
pub fn is_weak_initial(w: &[TEv], next: &TEv) -> bool {
    if w.iter().any(|e| e.tid() == next.tid()) {
        is_initial(w, next.tid())
    } else {
        w.iter().all(|x| !dependent_anywhere(x, next))
    }
}

/// Barrier counts by address, for [`is_weak_initial_at`].
pub type BarrierCounts = HashMap<u64, u32>;

/// The barrier counts of a run: recorded, else inferred from the trace.
pub fn barrier_counts(trace: &[TEv], inits: &[Init]) -> BarrierCounts {
    let mut out = infer_barrier_counts(trace);
    for i in inits.iter().filter(|i| i.obj.kind == ObjKind::Barrier) {
        out.insert(i.obj.addr, i.value);
    }
    out
}

/// `seq` as it would run after `ctx`: each barrier arrival's [`TEv::barrier_open`] recomputed
/// for that place (the flags of `ctx` are its own).
pub fn placed(ctx: &[TEv], seq: &[TEv], counts: &BarrierCounts) -> Vec<TEv> {
    let mut out: Vec<TEv> = Vec::with_capacity(seq.len());
    for e in seq {
        let mut e = *e;
        if let Op::BarrierWait { b } = e.ev.op {
            let before = out.iter().rev().chain(ctx.iter().rev());
            e.barrier_open = barrier_open(before, b, counts.get(&b).copied());
        }
        out.push(e);
    }
    out
}

/// [`is_weak_initial`] for `w` run after `ctx`: with barrier arrivals, decided by their place
/// instead of conservatively. Absent from `w`, `next` is a weak initial when, run after `w`,
/// it is independent of every event of `w` ([`dependent`] with the flags of that place):
/// two open arrivals stay open when the later one moves first (the earlier one gains one
/// arrival before it, no more than the later one had). Present, its first event must be
/// independent of the events of `w` before it, likewise.
pub fn is_weak_initial_at(ctx: &[TEv], w: &[TEv], next: &TEv, counts: &BarrierCounts) -> bool {
    let arrival = |e: &TEv| matches!(e.ev.op, Op::BarrierWait { .. });
    if !arrival(next) && !w.iter().any(arrival) {
        return is_weak_initial(w, next);
    }
    match w.iter().position(|e| e.tid() == next.tid()) {
        Some(k) => {
            let p = placed(ctx, &w[..=k], counts);
            p[..k].iter().all(|x| !dependent(x, &p[k]))
        }
        None => {
            let mut all = w.to_vec();
            all.push(*next);
            let p = placed(ctx, &all, counts);
            let (q, rest) = p.split_last().expect("non-empty");
            rest.iter().all(|x| !dependent(x, q))
        }
    }
}

/// Per event: its index among its thread's events (0-based). Thread ids are dense in creation
/// order, so (thread, index) names an event across runs that follow the same prefix.
pub fn thread_indices(events: &[Event]) -> Vec<u32> {
    let mut seen: Vec<u32> = Vec::new();
    events
        .iter()
        .map(|e| {
            let t = e.tid as usize;
            if seen.len() <= t {
                seen.resize(t + 1, 0);
            }
            seen[t] += 1;
            seen[t] - 1
        })
        .collect()
}

/// `w` without the first event of thread `p` (`w \ p`), or `w` unchanged if `p` is absent.
pub fn remove_first(w: &[TEv], p: Tid) -> Vec<TEv> {
    let mut out = w.to_vec();
    if let Some(k) = out.iter().position(|e| e.tid() == p) {
        out.remove(k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MutexKind;

    fn ev(tid: Tid, op: Op) -> TEv {
        TEv::new(Event::new(tid, op))
    }
    fn w(tid: Tid, addr: u64) -> TEv {
        ev(tid, Op::Write { addr, size: 8 })
    }
    fn r(tid: Tid, addr: u64) -> TEv {
        ev(tid, Op::Read { addr, size: 8 })
    }
    fn lock(tid: Tid) -> TEv {
        ev(
            tid,
            Op::Lock {
                m: 1,
                kind: MutexKind::Normal,
            },
        )
    }
    fn unlock(tid: Tid) -> TEv {
        ev(
            tid,
            Op::Unlock {
                m: 1,
                kind: MutexKind::Normal,
            },
        )
    }

    /// The exit of a thread that locked a robust mutex depends on another thread's trylock of
    /// a mutex (it may turn its EBUSY into EOWNERDEAD); a thread that never locked a robust
    /// mutex exits independently of it, as before.
    #[test]
    fn a_robust_owner_s_exit_depends_on_mutex_operations() {
        let kind = MutexKind::RobustNormal;
        let held = [ev(1, Op::Lock { m: 2, kind })];
        let exit = Event::new(1, Op::Exit);
        let mut e = TEv::new(exit);
        e.robust_exit = exits_after_robust_lock(held.iter().rev(), &exit);
        assert!(e.robust_exit);
        let trylock = ev(0, Op::TryLock { m: 2, kind });
        assert!(dependent(&e, &trylock) && dependent(&trylock, &e));
        assert!(!dependent(&e, &w(0, 8)), "memory is not freed");
        let plain = [lock(1)];
        assert!(!exits_after_robust_lock(plain.iter().rev(), &exit));
        let released = [held[0], ev(1, Op::Unlock { m: 2, kind })];
        assert!(!exits_after_robust_lock(released.iter().rev(), &exit));
        let tried = [
            ev(1, Op::TryLock { m: 2, kind }),
            ev(1, Op::Unlock { m: 2, kind }),
        ];
        assert!(
            exits_after_robust_lock(tried.iter().rev(), &exit),
            "unknown: may hold"
        );
        assert!(!dependent(&TEv::new(exit), &trylock));
    }

    #[test]
    fn adjacent_races_only() {
        // t0 writes x, t1 writes x, t2 writes x: races (0,1) and (1,2), not (0,2).
        let hb = Hb::new(vec![w(0, 8), w(1, 8), w(2, 8)]);
        assert_eq!(hb.races_of(1, 3), vec![0]);
        assert_eq!(hb.races_of(2, 3), vec![1]);
        assert!(hb.hb(0, 2));
        // Reads do not race with reads.
        let hb = Hb::new(vec![r(0, 8), r(1, 8), w(2, 8)]);
        assert!(hb.races_of(1, 3).is_empty());
        assert_eq!(hb.races_of(2, 3), vec![0, 1]);
    }

    #[test]
    fn a_waiting_lock_races_with_the_previous_lock_not_the_unlock() {
        let hb = Hb::new(vec![lock(0), w(0, 8), unlock(0), lock(1), unlock(1)]);
        assert_eq!(hb.races_of(3, 2), vec![0]);
        assert_eq!(hb.reversal(0, 3, true), vec![lock(1)]);
    }

    #[test]
    fn exit_and_join_are_not_co_enabled() {
        let mut create = ev(0, Op::Create);
        create.child = Some(1);
        let hb = Hb::new(vec![
            create,
            w(1, 8),
            ev(1, Op::Exit),
            ev(0, Op::Join { target: 1 }),
        ]);
        assert!(hb.races_of(3, 1).is_empty(), "join waits for the exit");
        assert!(
            hb.races_of(1, 1).is_empty(),
            "the child cannot run before its create"
        );
        assert!(hb.hb(0, 1));
    }

    #[test]
    fn barrier_arrivals_do_not_race_with_the_departures_they_enable() {
        let b = |t, op| ev(t, op);
        let trace = vec![
            b(1, Op::BarrierWait { b: 9 }),
            b(2, Op::BarrierWait { b: 9 }),
            b(1, Op::BarrierLeave { b: 9 }),
            b(2, Op::BarrierLeave { b: 9 }),
        ];
        assert_eq!(infer_barrier_counts(&trace).get(&9), Some(&2));
        let hb = Hb::new(trace);
        // t1 cannot leave before t2 arrives: that race is not reversible.
        assert!(hb.races_of(2, 3).is_empty());
        // The two arrivals may come in either order.
        assert_eq!(hb.races_of(1, 3), vec![0]);
    }

    #[test]
    fn two_waiters_race_for_one_signal() {
        let op = |t, op| ev(t, op);
        let (c, m) = (32, 1);
        let wake = |t| {
            op(
                t,
                Op::CondWake {
                    c,
                    m,
                    deadline: crate::event::NO_DEADLINE,
                },
            )
        };
        let trace = vec![
            lock(1),
            op(1, Op::CondWait { c, m }),
            lock(2),
            op(2, Op::CondWait { c, m }),
            lock(3),
            op(3, Op::CondSignal { c }),
            unlock(3),
            wake(1),
            op(1, Op::CondBroadcast { c }),
            unlock(1),
            wake(2),
        ];
        let hb = Hb::new(trace);
        // t2's wake follows t1's through t1's broadcast and unlock, yet it could have taken
        // t3's signal instead of t1: the two wakes race.
        assert!(hb.hb(7, 10));
        assert!(hb.races_of(10, 4).contains(&7), "{:?}", hb.races_of(10, 4));
        assert_eq!(hb.reversal(7, 10, true), vec![wake(2)]);
    }

    fn rw(tid: Tid, op: fn(u64) -> Op) -> TEv {
        ev(tid, op(5))
    }
    fn rd(l: u64) -> Op {
        Op::RdLock { l }
    }
    fn wr(l: u64) -> Op {
        Op::WrLock { l }
    }
    fn un(l: u64) -> Op {
        Op::RwUnlock { l }
    }

    /// Marks the unlocks of `trace` the way the guide records them.
    fn with_modes(mut trace: Vec<TEv>) -> Vec<TEv> {
        for k in 0..trace.len() {
            if let Op::RwUnlock { l } = trace[k].ev.op {
                let t = trace[k].tid();
                trace[k].reader = rw_unlock_reads(trace[..k].iter().rev(), t, l);
            }
        }
        trace
    }

    #[test]
    fn read_mode_rwlock_operations_commute() {
        let t = with_modes(vec![rw(1, rd), rw(2, rd), rw(1, un), rw(3, wr), rw(3, un)]);
        assert!(t[0].reader && t[2].reader, "a read lock and its unlock");
        assert!(!t[3].reader && !t[4].reader, "a write lock and its unlock");
        assert!(!dependent(&t[0], &t[1]), "two read locks");
        assert!(!dependent(&t[2], &t[1]), "a read unlock and a read lock");
        assert!(dependent(&t[0], &t[3]), "a read lock and a write lock");
        assert!(dependent(&t[2], &t[3]), "a read unlock and a write lock");
        assert!(dependent(&t[4], &t[1]), "a write unlock and a read lock");
        assert!(dependent(&t[0], &t[2]), "same thread");
        // An unlock whose mode is unknown is a write unlock.
        assert!(!TEv::new(Event::new(1, un(5))).reader);
        assert!(!rw_unlock_reads([].iter(), 1, 5));
    }

    #[test]
    fn a_blocked_rwlock_acquisition_races_with_the_holders_acquisition() {
        // t1: rdlock, unlock, wrlock, unlock; then t2's rdlock, which waited for t1's write
        // unlock. That unlock cannot move after t2's rdlock; t1's wrlock can: both read
        // before either writes (the lost update of the read-then-write "upgrade").
        let trace = with_modes(vec![rw(1, rd), rw(1, un), rw(1, wr), rw(1, un), rw(2, rd)]);
        let hb = Hb::new(trace);
        assert_eq!(hb.races_of(4, 3), vec![2]);
        assert_eq!(hb.reversal(2, 4, true), vec![rw(2, rd)]);
        // A write lock waiting for two readers races with each reader's read lock.
        let trace = with_modes(vec![rw(1, rd), rw(2, rd), rw(1, un), rw(2, un), rw(3, wr)]);
        let hb = Hb::new(trace);
        assert_eq!(hb.races_of(4, 4), vec![0, 1]);
    }

    #[test]
    fn recorded_semaphore_values_decide_which_reversals_are_feasible() {
        let (sw, sp) = (Op::SemWait { s: 7 }, Op::SemPost { s: 7 });
        let trace = vec![ev(1, sw), ev(1, sp), ev(2, sw)];
        // The trace alone implies a value of 1: t2 cannot wait before t1 posts, but it can
        // wait before t1 waits (a semaphore used as a lock: the section moves as a whole).
        assert_eq!(infer_sem_init(&trace).get(&7), Some(&1));
        let hb = Hb::new(trace.clone());
        assert_eq!(hb.races_of(2, 3), vec![0]);
        assert_eq!(hb.reversal(0, 2, true), vec![ev(2, sw)]);
        // Initialised to 2 (before any event), both waits pass first: a race.
        let init = Init {
            at: 0,
            obj: Obj::sync(ObjKind::Sem, 7),
            value: 2,
        };
        // Initialised to 2 (before any event), both waits pass first: t2's wait races with
        // t1's post and with t1's wait (three orders of the three dependent events).
        let hb = Hb::with_inits(trace.clone(), vec![init]);
        assert_eq!(hb.races_of(2, 3), vec![0, 1]);
        assert_eq!(hb.reversal(1, 2, true), vec![ev(2, sw)]);
        // Initialised to 1 it is a lock: only the whole section moves.
        let one = Init { value: 1, ..init };
        assert_eq!(Hb::with_inits(trace, vec![one]).races_of(2, 3), vec![0]);
    }

    #[test]
    fn initials_and_weak_initials() {
        let v = vec![w(1, 8), w(2, 16), r(3, 8)];
        assert_eq!(initials(&v), vec![1, 2]);
        assert!(is_weak_initial(&v, &w(4, 24)), "absent and independent");
        assert!(!is_weak_initial(&v, &w(4, 16)), "absent but dependent");
        assert!(!is_weak_initial(&v, &r(3, 8)));
        assert_eq!(remove_first(&v, 2), vec![w(1, 8), r(3, 8)]);
    }
}
