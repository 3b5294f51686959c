//! Timers in virtual time: `alarm`, `setitimer(ITIMER_REAL)` and POSIX `timer_*` timers on
//! the real-time and monotonic clocks.
//!
//! A controlled program's sleeps and timed waits count the run's virtual time
//! ([`crate::clock`]), while the kernel's timers count real time: an `alarm(1)` that a worker
//! awaits in 5 ms sleeps fired after a real second, a thousand virtual sleeps later (a step
//! limit), and a `SIGEV_THREAD` timer's notification ran on a thread glibc creates
//! internally, outside control, whose posts and unlocks the model never saw (false deadlocks
//! in every run). Here an armed timer is a controlled *timer thread* of the run, created by
//! libpos when the timer is armed: it sleeps until the expiry in virtual time (so the clock
//! rules decide when it fires, as for any sleep), then notifies as the kernel would:
//! - `SIGEV_THREAD`: a new detached controlled thread runs the notification function (as
//!   glibc starts one per expiry);
//! - a signal (`alarm`, `setitimer`, `SIGEV_SIGNAL`): to a thread that waits for it in
//!   `pause`, `sigsuspend` or `sigwait*`; else to the timer thread itself when the thread
//!   that armed the timer does not block it, so the handler runs at once on a controlled
//!   thread, its `sem_post` or flag update being a step of the run like any other; else to
//!   the process, where the kernel picks a thread (a program that blocks the signal
//!   everywhere and reads a `signalfd`). Timer threads block every signal otherwise, so a
//!   process-directed signal never lands on them;
//! - `SIGEV_THREAD_ID`: to that thread; `SIGEV_NONE`: nothing.
//!
//! Signal waits: a controlled thread's `pause`, `sigsuspend`, `sigwait`, `sigwaitinfo` or
//! `sigtimedwait` for a signal that an armed timer will send waits *in the model* (a futex
//! wait on a word of libpos, with the `sigtimedwait` timeout as a virtual deadline): the
//! timer thread sends the signal, which stays pending (blocked) for the waiter, and wakes it
//! as a step of the run; the waiter takes it (`pause`/`sigsuspend` let it in under their
//! mask, so the handler runs on a controlled thread). Deterministic, and virtual time stays
//! consistent (the waiter reads at least the expiry). `pthread_kill`, `kill` of this process
//! and disarming a timer wake those waiters to look again. A wait that no armed timer will
//! end goes to the kernel as before: outside control, its thread set aside (`partial`).
//!
//! Re-arming or disarming a timer starts a new generation: a timer thread of an older one
//! ends when it wakes. A periodic timer's thread sleeps again for the interval (no overruns:
//! `timer_getoverrun` is 0). Timers of threads that do not run in virtual time (uncontrolled,
//! `POS_REAL_SLEEP`), CPU-time clocks and `ITIMER_VIRTUAL`/`ITIMER_PROF` stay the kernel's.
//! A forked child starts with none, as POSIX says.
//!
//! Limits: as a sleep, a timer ends while a thread is blocked outside control (the clock
//! rules let sleeps end then; that is what a thread in a `poll` on a self-pipe waits for),
//! so a watchdog `alarm` may fire while real work outside control (a child process, network
//! input) is still going on. A signal from another process does not end a wait in the model
//! until a timer, a `kill` or a `pthread_kill` of this process wakes it. A signal sent with `pthread_kill` to
//! a controlled thread is still delivered by the kernel at once, while that thread waits for
//! its turn: what its handler does (a `sem_post`) is not seen by the model.

use crate::clock;
use crate::conn::Busy;
use crate::real;
use libc::{c_int, c_uint, c_void, clockid_t, itimerspec, itimerval, sigset_t, timespec};
use pos_sched::{MutexKind, Op, NO_DEADLINE};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

const NS: u64 = 1_000_000_000;
/// The timers one process can have at a time (the alarm's included); `timer_create` fails
/// with EAGAIN beyond, as at the kernel's limit.
pub(crate) const SLOTS: usize = 64;
/// The slot `alarm` and `setitimer(ITIMER_REAL)` share (as they do in the kernel).
const ALARM: usize = 0;
/// `timer_t` values of virtual timers: this tag plus the slot (kernel timer ids are small
/// integers, so the two never meet).
const ID_TAG: usize = 0x7e57_0000;
/// `expiry` of a disarmed timer.
const DISARMED: u64 = u64::MAX;
/// `si_code` of a POSIX timer's signal (`SI_TIMER`).
const SI_TIMER: c_int = -2;
/// `sigev_notify` values (`<bits/sigevent-consts.h>`).
const SIGEV_SIGNAL: c_int = 0;
const SIGEV_NONE: c_int = 1;
const SIGEV_THREAD: c_int = 2;
const SIGEV_THREAD_ID: c_int = 4;
/// libpos's own `sigev_notify` for a timer behind a `timerfd` ([`crate::timerfd`]): an
/// expiry is counted on the descriptor, no signal and no thread.
pub(crate) const SIGEV_FD: c_int = 0x7e57;

/// One timer.
struct Slot {
    used: AtomicBool,
    clock: AtomicI32,
    /// `sigev_notify`.
    how: AtomicI32,
    signo: AtomicI32,
    /// `SIGEV_THREAD_ID`'s thread.
    target: AtomicI32,
    /// `sigev_value`, as a pointer-sized integer.
    value: AtomicUsize,
    /// `SIGEV_THREAD`'s notification function and its threads' stack size (0: default).
    func: AtomicUsize,
    stack: AtomicUsize,
    /// Virtual time of the next expiry, or [`DISARMED`].
    expiry: AtomicU64,
    interval: AtomicU64,
    generation: AtomicU64,
    /// The deadline the timer thread of the current generation sleeps until, or
    /// [`DISARMED`] when there is none.
    sleeper: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    used: AtomicBool::new(false),
    clock: AtomicI32::new(0),
    how: AtomicI32::new(0),
    signo: AtomicI32::new(0),
    target: AtomicI32::new(0),
    value: AtomicUsize::new(0),
    func: AtomicUsize::new(0),
    stack: AtomicUsize::new(0),
    expiry: AtomicU64::new(DISARMED),
    interval: AtomicU64::new(0),
    generation: AtomicU64::new(0),
    sleeper: AtomicU64::new(DISARMED),
};

static TIMERS: [Slot; SLOTS] = [EMPTY; SLOTS];

/// Threads waiting for a signal in `pause`, `sigsuspend` or `sigwait*`: kernel thread id
/// (0 = free), the signals that end the wait (bit `sig - 1`) and whether the thread waits
/// in the model (on [`SIGWORD`]) or in the kernel, outside control.
struct Waiter {
    tid: AtomicI32,
    wants: AtomicU64,
    model: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const NO_WAITER: Waiter = Waiter {
    tid: AtomicI32::new(0),
    wants: AtomicU64::new(0),
    model: AtomicBool::new(false),
};

static WAITERS: [Waiter; 32] = [NO_WAITER; 32];

/// The futex word controlled signal waiters wait on in the model: a timer thread that sent
/// one of them its signal wakes them all (each looks at its pending signals).
static SIGWORD: AtomicU32 = AtomicU32::new(0);

fn gettid() -> i32 {
    // SAFETY: gettid has no arguments.
    unsafe { real::syscall(libc::SYS_gettid, 0, 0, 0, 0, 0, 0) as i32 }
}

/// The first 64 signals of a set, bit `sig - 1` for `sig`.
///
/// # Safety
/// `set` must point to a `sigset_t`.
unsafe fn bits(set: *const sigset_t) -> u64 {
    std::ptr::read_unaligned(set as *const u64)
}

/// Set the calling thread's mask to `set` (through libpos's `pthread_sigmask`, which keeps
/// SIGSYS open; glibc keeps its own internal signals open); returns the old mask.
fn set_mask(set: &sigset_t) -> sigset_t {
    // SAFETY: plain mask switch with valid sets.
    unsafe {
        let mut old: sigset_t = std::mem::zeroed();
        crate::trap::pthread_sigmask(libc::SIG_SETMASK, set, &mut old);
        old
    }
}

/// Every signal.
fn full_set() -> sigset_t {
    // SAFETY: filling a zeroed set.
    unsafe {
        let mut all: sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        all
    }
}

thread_local! {
    /// The seat this thread keeps after its wait in the kernel ended, until it posts again
    /// ([`back_in_control`]); `usize::MAX`: none.
    static RETURNING: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Run `wait` as a thread waiting for the signals `wants`, in the model (`model`) or in the
/// kernel: a timer that fires one of them sends it to this thread (see the module doc). A
/// wait in the kernel keeps its seat, wanting nothing, until the thread's next post: the
/// timer thread that woke it waits for that ([`await_wake`]).
fn waiting_for<R>(wants: u64, model: bool, wait: impl FnOnce() -> R) -> R {
    back_in_control();
    let tid = gettid();
    // Claim a free seat (-1 while its signals are written), then show the thread id.
    let seat = WAITERS.iter().position(|w| {
        w.tid
            .compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    if let Some(i) = seat {
        WAITERS[i].wants.store(wants, Ordering::SeqCst);
        WAITERS[i].model.store(model, Ordering::SeqCst);
        WAITERS[i].tid.store(tid, Ordering::SeqCst);
    }
    let r = wait();
    if let Some(i) = seat {
        if model {
            WAITERS[i].tid.store(0, Ordering::SeqCst);
        } else {
            WAITERS[i].wants.store(0, Ordering::SeqCst);
            RETURNING.with(|r| r.set(i));
        }
    }
    r
}

/// The calling thread posts (or waits for a signal again): a seat it kept after a wait in
/// the kernel ([`waiting_for`]) is free, and the timer thread waiting in [`await_wake`] goes
/// on. Called by every post, so one thread-local load when there is none.
#[inline]
pub fn back_in_control() {
    let i = RETURNING.with(|r| r.replace(usize::MAX));
    if i != usize::MAX {
        WAITERS[i].tid.store(0, Ordering::SeqCst);
    }
}

/// The thread that waits for `sig`, if any, and whether it waits in the model.
fn waiter_for(sig: c_int) -> Option<(i32, bool)> {
    let bit = 1u64 << (sig - 1);
    WAITERS.iter().find_map(|w| {
        let tid = w.tid.load(Ordering::SeqCst);
        (tid > 0 && w.wants.load(Ordering::SeqCst) & bit != 0)
            .then(|| (tid, w.model.load(Ordering::SeqCst)))
    })
}

/// Whether an armed timer will send the calling thread one of the signals `wants`.
fn targeted(wants: u64) -> bool {
    let me = gettid();
    TIMERS.iter().any(|s| {
        let sig = s.signo.load(Ordering::SeqCst);
        s.used.load(Ordering::SeqCst)
            && s.expiry.load(Ordering::SeqCst) != DISARMED
            && (1..=64).contains(&sig)
            && wants & (1u64 << (sig - 1)) != 0
            && match s.how.load(Ordering::SeqCst) {
                SIGEV_SIGNAL => true,
                SIGEV_THREAD_ID => s.target.load(Ordering::SeqCst) == me,
                _ => false,
            }
    })
}

/// Wait in the model on [`SIGWORD`] until a timer thread wakes the signal waiters or
/// virtual time reaches `deadline`; true when it timed out.
fn model_wait(deadline: u64) -> bool {
    match crate::conn::me() {
        Some(me) => {
            let op = Op::FutexWait {
                addr: SIGWORD.as_ptr() as u64,
                bitset: u32::MAX,
                deadline,
            };
            me.post(op).result == libc::ETIMEDOUT
        }
        None => true,
    }
}

/// Wake every signal waiter of the model (a step of the calling timer thread).
fn wake_model_waiters() {
    if let Some(me) = crate::conn::me() {
        me.post(Op::FutexWake {
            addr: SIGWORD.as_ptr() as u64,
            n: u32::MAX,
            bitset: u32::MAX,
        });
    }
}

/// A signal may have been sent to a thread waiting in the model, or a timer it waited for
/// was disarmed: wake the model's signal waiters (a step of the calling thread, when it is
/// controlled), which look at their pending signals and timers again.
fn nudge_waiters() {
    let any = WAITERS
        .iter()
        .any(|w| w.tid.load(Ordering::SeqCst) > 0 && w.model.load(Ordering::SeqCst));
    if any {
        wake_model_waiters();
    }
}

/// The model mutex (a word of libpos) that orders arming or disarming a timer against its
/// timer thread's decision to fire: two steps each, so that an exploration sees the race
/// between a `timer_delete` and an expiry and runs both orders.
static TIMER_LOCK: AtomicU32 = AtomicU32::new(0);

/// Run `f` holding [`TIMER_LOCK`] in the model (when the calling thread is controlled).
fn locked<R>(f: impl FnOnce() -> R) -> R {
    let me = crate::conn::me();
    let m = TIMER_LOCK.as_ptr() as u64;
    let kind = MutexKind::Normal;
    if let Some(me) = me {
        me.post(Op::Lock { m, kind });
    }
    let r = f();
    if let Some(me) = me {
        me.post(Op::Unlock { m, kind });
    }
    r
}

/// Send `sig` to thread `tid` (to the process with `None`), with the `SI_TIMER` information
/// of timer `slot` when `timer`.
fn send(tid: Option<i32>, sig: c_int, slot: usize, timer: bool) {
    // SAFETY: plain signal-sending system calls to this process and its threads.
    unsafe {
        let pid = libc::getpid();
        if timer {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let raw = &mut info as *mut libc::siginfo_t as *mut u8;
            *(raw as *mut c_int) = sig;
            *(raw.add(8) as *mut c_int) = SI_TIMER;
            *(raw.add(16) as *mut c_int) = (ID_TAG + slot) as c_int;
            *(raw.add(24) as *mut usize) = TIMERS[slot].value.load(Ordering::SeqCst);
            match tid {
                None => real::syscall(
                    libc::SYS_rt_sigqueueinfo,
                    pid as _,
                    sig as _,
                    raw as _,
                    0,
                    0,
                    0,
                ),
                Some(t) => real::syscall(
                    libc::SYS_rt_tgsigqueueinfo,
                    pid as _,
                    t as _,
                    sig as _,
                    raw as _,
                    0,
                    0,
                ),
            };
        } else {
            match tid {
                None => {
                    real::kill(pid, sig);
                }
                Some(t) => {
                    real::syscall(libc::SYS_tgkill, pid as _, t as _, sig as _, 0, 0, 0);
                }
            }
        }
    }
}

/// Send `sig` for timer `slot` as the module doc says: to a thread waiting for it (woken in
/// the model, or given time to leave its wait in the kernel), else to this timer thread
/// under `creator`, the mask of the thread that armed the timer, when that does not block
/// it (the handler runs here, under control), else to the process. `timer`: with the
/// timer's `SI_TIMER` information (POSIX timers), or plainly (`alarm`, `setitimer`).
fn deliver(slot: usize, sig: c_int, timer: bool, creator: &sigset_t) {
    if !(1..=64).contains(&sig) {
        return;
    }
    match waiter_for(sig) {
        Some((tid, model)) => {
            send(Some(tid), sig, slot, timer);
            if model {
                wake_model_waiters();
            } else {
                await_wake(tid);
            }
        }
        // SAFETY: `creator` is a valid set.
        None if unsafe { bits(creator) } & (1u64 << (sig - 1)) == 0 => {
            let all = set_mask(creator);
            send(Some(gettid()), sig, slot, timer);
            set_mask(&all);
        }
        None => send(None, sig, slot, timer),
    }
}

/// A waiter outside control was sent a signal: give it (up to a second of real time) to
/// leave its wait and post its next operation before this timer thread goes on, so that the
/// run does not race ahead of it: a periodic timer firing again and again, virtual time
/// passing while the waiter was on its way back (a C++ `wait_for` for its result then timed
/// out, 5 runs in 3,000 under load, when this waited only for the kernel wait to end).
fn await_wake(tid: i32) {
    let _b = Busy::enter();
    let start = crate::conn::now_ns();
    while WAITERS.iter().any(|w| w.tid.load(Ordering::SeqCst) == tid)
        && crate::conn::now_ns().saturating_sub(start) < NS
    {
        // SAFETY: a plain yield.
        unsafe { real::sched_yield() };
    }
}

/// What a `SIGEV_THREAD` notification thread runs.
struct Notify {
    func: usize,
    value: usize,
}

extern "C" fn notify_main(arg: *mut c_void) -> *mut c_void {
    let (func, value) = {
        let _b = Busy::enter();
        // SAFETY: `arg` is the box `fire` made for this thread.
        let n = unsafe { Box::from_raw(arg as *mut Notify) };
        (n.func, n.value)
    };
    // SAFETY: `func` is the program's `void (*)(union sigval)`; a sigval is passed as a
    // pointer-sized integer.
    let f: extern "C" fn(usize) = unsafe { std::mem::transmute(func) };
    // As glibc: a notification thread runs with every signal open (its creator, the timer
    // thread, blocks them all).
    // SAFETY: an empty set.
    set_mask(&unsafe { std::mem::zeroed() });
    f(value);
    std::ptr::null_mut()
}

/// Start a detached controlled thread (through libpos's `pthread_create`, a step of the
/// run) running `routine(arg)` with stack size `stack` (0: the default); false if it failed.
fn spawn(
    routine: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
    stack: usize,
) -> bool {
    // SAFETY: a local attribute object, initialised, used and destroyed here.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        if stack != 0 {
            libc::pthread_attr_setstacksize(&mut attr, stack);
        }
        let mut t: libc::pthread_t = 0;
        let r = crate::thread::pthread_create(&mut t, &attr, routine, arg);
        libc::pthread_attr_destroy(&mut attr);
        r == 0
    }
}

/// Timer `slot` expired: notify (`creator`: the mask of the thread that armed it).
fn fire(slot: usize, creator: &sigset_t) {
    let s = &TIMERS[slot];
    let sig = s.signo.load(Ordering::SeqCst);
    match s.how.load(Ordering::SeqCst) {
        SIGEV_THREAD => {
            let arg = {
                let _b = Busy::enter();
                Box::into_raw(Box::new(Notify {
                    func: s.func.load(Ordering::SeqCst),
                    value: s.value.load(Ordering::SeqCst),
                }))
            };
            if !spawn(notify_main, arg.cast(), s.stack.load(Ordering::SeqCst)) {
                let _b = Busy::enter();
                // SAFETY: the thread was not created; the box is still ours.
                drop(unsafe { Box::from_raw(arg) });
            }
        }
        SIGEV_THREAD_ID => {
            let target = s.target.load(Ordering::SeqCst);
            if (1..=64).contains(&sig) {
                send(Some(target), sig, slot, true);
                if waiter_for(sig).is_some_and(|(t, model)| t == target && model) {
                    wake_model_waiters();
                }
            }
        }
        SIGEV_NONE => {}
        SIGEV_FD => crate::timerfd::expired(slot),
        _ => deliver(slot, sig, slot != ALARM, creator),
    }
}

/// The timer thread of `slot`'s generation packed in `arg` (`generation << 8 | slot`): sleep
/// until the expiry, notify, and again for a periodic timer. A timer re-armed to a later
/// expiry keeps its thread, which sleeps on when it wakes before the new expiry; one
/// re-armed earlier gets a new thread (a new generation) and the old one ends when it wakes.
extern "C" fn timer_main(arg: *mut c_void) -> *mut c_void {
    let (slot, generation) = (arg as usize & 0xff, arg as u64 >> 8);
    let s = &TIMERS[slot];
    let mine = || s.generation.load(Ordering::SeqCst) == generation;
    // The timer thread takes no signal meant for the program's threads (a process-directed
    // one would pick it otherwise); the arming thread's mask decides where it delivers.
    let creator = set_mask(&full_set());
    while mine() {
        let at = s.expiry.load(Ordering::SeqCst);
        if at == DISARMED {
            s.sleeper.store(DISARMED, Ordering::SeqCst);
            break;
        }
        s.sleeper.store(at, Ordering::SeqCst);
        if !clock::sleep_until_virtual(at) {
            s.sleeper.store(DISARMED, Ordering::SeqCst);
            break;
        }
        let due = locked(|| {
            if !mine() || s.expiry.load(Ordering::SeqCst) != at {
                return false; // superseded, disarmed or moved later: look again
            }
            let interval = s.interval.load(Ordering::SeqCst);
            s.expiry.store(
                if interval == 0 {
                    DISARMED
                } else {
                    at.saturating_add(interval)
                },
                Ordering::SeqCst,
            );
            true
        });
        if !due {
            continue;
        }
        // The time has come for every thread: one woken by this timer reads it.
        clock::shown(at);
        fire(slot, &creator);
    }
    std::ptr::null_mut()
}

/// Arm timer `slot` to expire at virtual time `expiry` (None: disarm) and then every
/// `interval` ns (0: once); returns the old (expiry, interval). A new timer thread starts
/// unless the current one sleeps until no later than the new expiry.
pub(crate) fn arm(slot: usize, expiry: Option<u64>, interval: u64) -> (u64, u64) {
    let s = &TIMERS[slot];
    let old = locked(|| {
        (
            s.expiry.swap(expiry.unwrap_or(DISARMED), Ordering::SeqCst),
            s.interval.swap(
                if expiry.is_some() { interval } else { 0 },
                Ordering::SeqCst,
            ),
        )
    });
    if expiry.is_none() && old.0 != DISARMED {
        nudge_waiters();
    }
    if let Some(e) = expiry {
        if s.sleeper.load(Ordering::SeqCst) > e {
            let generation = s.generation.fetch_add(1, Ordering::SeqCst) + 1;
            s.sleeper.store(e, Ordering::SeqCst);
            let arg = (generation << 8 | slot as u64) as usize as *mut c_void;
            if !spawn(timer_main, arg, 0) {
                s.expiry.store(DISARMED, Ordering::SeqCst);
                s.sleeper.store(DISARMED, Ordering::SeqCst);
            }
        }
    }
    old
}

/// Time left until `expiry` at virtual time `now` (0 when disarmed).
pub(crate) fn left(expiry: u64, now: u64) -> u64 {
    if expiry == DISARMED {
        0
    } else {
        expiry.saturating_sub(now).max(1)
    }
}

fn ns_of_timeval(t: &libc::timeval) -> Option<u64> {
    (t.tv_sec >= 0 && (0..1_000_000).contains(&t.tv_usec))
        .then(|| t.tv_sec as u64 * NS + t.tv_usec as u64 * 1_000)
}

fn timeval_of(ns: u64) -> libc::timeval {
    // An interval timer never shows less than a microsecond while armed.
    let us = ns.div_ceil(1_000);
    libc::timeval {
        tv_sec: (us / 1_000_000) as _,
        tv_usec: (us % 1_000_000) as _,
    }
}

/// Set up the alarm slot as the kernel's `ITIMER_REAL`: SIGALRM to the process.
fn alarm_slot() -> &'static Slot {
    let s = &TIMERS[ALARM];
    s.used.store(true, Ordering::SeqCst);
    s.clock.store(libc::CLOCK_REALTIME, Ordering::SeqCst);
    s.how.store(SIGEV_SIGNAL, Ordering::SeqCst);
    s.signo.store(libc::SIGALRM, Ordering::SeqCst);
    s
}

/// `alarm`: the alarm slot in virtual time (see the module doc).
///
/// # Safety
/// As `alarm(2)`.
#[no_mangle]
pub unsafe extern "C" fn alarm(seconds: c_uint) -> c_uint {
    let Some(now) = clock::virtual_now() else {
        return real::alarm(seconds);
    };
    alarm_slot();
    let expiry = (seconds > 0).then(|| now.saturating_add(seconds as u64 * NS));
    let (old, _) = arm(ALARM, expiry, 0);
    // As the kernel: whole seconds, rounded to the nearest, never 0 while armed.
    match left(old, now) {
        0 => 0,
        l => ((l + NS / 2) / NS).max(1) as c_uint,
    }
}

/// `setitimer`: `ITIMER_REAL` in virtual time, the others passed on.
///
/// # Safety
/// As `setitimer(2)`.
#[no_mangle]
pub unsafe extern "C" fn setitimer(
    which: c_int,
    new: *const itimerval,
    old: *mut itimerval,
) -> c_int {
    let now = match clock::virtual_now() {
        Some(now) if which == libc::ITIMER_REAL => now,
        _ => return real::setitimer(which, new, old),
    };
    if new.is_null() {
        crate::conn::set_errno(libc::EFAULT);
        return -1;
    }
    let (Some(value), Some(interval)) = (
        ns_of_timeval(&(*new).it_value),
        ns_of_timeval(&(*new).it_interval),
    ) else {
        crate::conn::set_errno(libc::EINVAL);
        return -1;
    };
    alarm_slot();
    let expiry = (value > 0).then(|| now.saturating_add(value));
    let (was, every) = arm(ALARM, expiry, interval);
    if !old.is_null() {
        *old = itimerval {
            it_interval: timeval_of(every),
            it_value: timeval_of(left(was, now)),
        };
    }
    0
}

/// `getitimer`: `ITIMER_REAL` in virtual time, the others passed on.
///
/// # Safety
/// As `getitimer(2)`.
#[no_mangle]
pub unsafe extern "C" fn getitimer(which: c_int, cur: *mut itimerval) -> c_int {
    let now = match clock::virtual_now() {
        Some(now) if which == libc::ITIMER_REAL => now,
        _ => return real::getitimer(which, cur),
    };
    if cur.is_null() {
        crate::conn::set_errno(libc::EFAULT);
        return -1;
    }
    let s = &TIMERS[ALARM];
    *cur = itimerval {
        it_interval: timeval_of(s.interval.load(Ordering::SeqCst)),
        it_value: timeval_of(left(s.expiry.load(Ordering::SeqCst), now)),
    };
    0
}

/// Take a free slot for a disarmed timer on clock `clk`; `None` when all are in use.
pub(crate) fn claim(clk: clockid_t) -> Option<usize> {
    let slot = (ALARM + 1..SLOTS).find(|&i| {
        TIMERS[i]
            .used
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })?;
    let s = &TIMERS[slot];
    s.clock.store(clk, Ordering::SeqCst);
    s.expiry.store(DISARMED, Ordering::SeqCst);
    s.interval.store(0, Ordering::SeqCst);
    Some(slot)
}

/// Make `slot` notify through a `timerfd` ([`SIGEV_FD`]).
pub(crate) fn notify_fd(slot: usize) {
    TIMERS[slot].how.store(SIGEV_FD, Ordering::SeqCst);
}

/// Disarm timer `slot` and free it (its timer thread ends when it wakes).
pub(crate) fn release(slot: usize) {
    arm(slot, None, 0);
    TIMERS[slot].used.store(false, Ordering::SeqCst);
}

/// Whether timer `slot` is armed.
pub(crate) fn armed(slot: usize) -> bool {
    TIMERS[slot].expiry.load(Ordering::SeqCst) != DISARMED
}

/// The slot of a virtual timer's id.
fn slot_of(id: libc::timer_t) -> Option<usize> {
    let v = (id as usize).checked_sub(ID_TAG)?;
    (v > ALARM && v < SLOTS && TIMERS[v].used.load(Ordering::SeqCst)).then_some(v)
}

/// `timer_create`: a virtual timer for a controlled thread on a real-time or monotonic
/// clock (see the module doc); others are the kernel's.
///
/// # Safety
/// As `timer_create(2)`.
#[no_mangle]
pub unsafe extern "C" fn timer_create(
    clk: clockid_t,
    ev: *mut libc::sigevent,
    id: *mut libc::timer_t,
) -> c_int {
    if clock::virtual_now().is_none() || clock::virtual_of(clk, 0).is_none() {
        return real::timer_create(clk, ev, id);
    }
    let Some(slot) = claim(clk) else {
        crate::conn::set_errno(libc::EAGAIN);
        return -1;
    };
    let s = &TIMERS[slot];
    if ev.is_null() {
        s.how.store(SIGEV_SIGNAL, Ordering::SeqCst);
        s.signo.store(libc::SIGALRM, Ordering::SeqCst);
        s.value.store(ID_TAG + slot, Ordering::SeqCst);
    } else {
        // struct sigevent: sigev_value at 0, sigev_signo at 8, sigev_notify at 12, then
        // either the thread id or (function, attributes) at 16.
        let raw = ev as *const u8;
        let how = *(raw.add(12) as *const c_int);
        let signo = *(raw.add(8) as *const c_int);
        let bad_signal =
            matches!(how, SIGEV_SIGNAL | SIGEV_THREAD_ID) && !(1..=64).contains(&signo);
        if bad_signal
            || !matches!(
                how,
                SIGEV_SIGNAL | SIGEV_NONE | SIGEV_THREAD | SIGEV_THREAD_ID
            )
        {
            s.used.store(false, Ordering::SeqCst);
            crate::conn::set_errno(libc::EINVAL);
            return -1;
        }
        s.how.store(how, Ordering::SeqCst);
        s.signo.store(signo, Ordering::SeqCst);
        s.value.store(*(raw as *const usize), Ordering::SeqCst);
        s.target
            .store(*(raw.add(16) as *const c_int), Ordering::SeqCst);
        s.func
            .store(*(raw.add(16) as *const usize), Ordering::SeqCst);
        let attr = *(raw.add(24) as *const *const libc::pthread_attr_t);
        let mut stack = 0;
        if how == SIGEV_THREAD && !attr.is_null() {
            libc::pthread_attr_getstacksize(attr, &mut stack);
        }
        s.stack.store(stack, Ordering::SeqCst);
    }
    *id = (ID_TAG + slot) as libc::timer_t;
    0
}

/// `timer_settime` of a virtual timer (others passed on).
///
/// # Safety
/// As `timer_settime(2)`.
#[no_mangle]
pub unsafe extern "C" fn timer_settime(
    id: libc::timer_t,
    flags: c_int,
    new: *const itimerspec,
    old: *mut itimerspec,
) -> c_int {
    let (Some(slot), Some(now)) = (slot_of(id), clock::virtual_now()) else {
        return real::timer_settime(id, flags, new, old);
    };
    settime(slot, now, flags & libc::TIMER_ABSTIME != 0, new, old)
}

/// Set virtual timer `slot` at virtual time `now` from `*new` (absolute on the timer's
/// clock with `abs`), the old setting to `*old` when not NULL: `timer_settime` and
/// `timerfd_settime` once they know the slot. 0, or -1 with `errno` (`EFAULT`, `EINVAL`).
///
/// # Safety
/// `new` is NULL or points to an itimerspec; `old` is NULL or writable.
pub(crate) unsafe fn settime(
    slot: usize,
    now: u64,
    abs: bool,
    new: *const itimerspec,
    old: *mut itimerspec,
) -> c_int {
    if new.is_null() {
        crate::conn::set_errno(libc::EFAULT);
        return -1;
    }
    let (Some(value), Some(interval)) = (
        clock::to_ns(&(*new).it_value),
        clock::to_ns(&(*new).it_interval),
    ) else {
        crate::conn::set_errno(libc::EINVAL);
        return -1;
    };
    let expiry = if value == 0 {
        None
    } else if abs {
        let clk = TIMERS[slot].clock.load(Ordering::SeqCst);
        Some(clock::virtual_of(clk, value).unwrap_or(0))
    } else {
        Some(now.saturating_add(value))
    };
    let (was, every) = arm(slot, expiry, interval);
    if !old.is_null() {
        *old = itimerspec {
            it_interval: clock::to_timespec(every),
            it_value: clock::to_timespec(left(was, now)),
        };
    }
    0
}

/// `timer_gettime` of a virtual timer (others passed on).
///
/// # Safety
/// As `timer_gettime(2)`.
#[no_mangle]
pub unsafe extern "C" fn timer_gettime(id: libc::timer_t, cur: *mut itimerspec) -> c_int {
    let (Some(slot), Some(now)) = (slot_of(id), clock::virtual_now()) else {
        return real::timer_gettime(id, cur);
    };
    gettime(slot, now, cur)
}

/// Virtual timer `slot`'s setting at virtual time `now` to `*cur`: `timer_gettime` and
/// `timerfd_gettime` once they know the slot. 0, or -1 with `EFAULT`.
///
/// # Safety
/// `cur` is NULL or writable.
pub(crate) unsafe fn gettime(slot: usize, now: u64, cur: *mut itimerspec) -> c_int {
    if cur.is_null() {
        crate::conn::set_errno(libc::EFAULT);
        return -1;
    }
    let s = &TIMERS[slot];
    *cur = itimerspec {
        it_interval: clock::to_timespec(s.interval.load(Ordering::SeqCst)),
        it_value: clock::to_timespec(left(s.expiry.load(Ordering::SeqCst), now)),
    };
    0
}

/// `timer_getoverrun` of a virtual timer: always 0 (each expiry is notified).
///
/// # Safety
/// As `timer_getoverrun(2)`.
#[no_mangle]
pub unsafe extern "C" fn timer_getoverrun(id: libc::timer_t) -> c_int {
    match slot_of(id) {
        Some(_) => 0,
        None => real::timer_getoverrun(id),
    }
}

/// `timer_delete` of a virtual timer: disarmed (its timer thread ends when it wakes) and its
/// slot freed (others passed on).
///
/// # Safety
/// As `timer_delete(2)`.
#[no_mangle]
pub unsafe extern "C" fn timer_delete(id: libc::timer_t) -> c_int {
    let Some(slot) = slot_of(id) else {
        return real::timer_delete(id);
    };
    release(slot);
    0
}

/// `sigsuspend(mask)` for a controlled thread that an armed timer will signal (`pause`: the
/// thread's mask): wait in the model with every signal blocked until one it waits for is
/// pending, then let the pending ones in under `mask`, as `sigsuspend` would (their
/// handlers run here, on a controlled thread), and return -1/EINTR. `None`: the call goes to
/// the kernel (an uncontrolled thread, or no armed timer sends one of its signals).
fn model_suspend(mask: &sigset_t) -> Option<c_int> {
    clock::virtual_now()?;
    // SAFETY: `mask` is a valid set.
    let wants = !unsafe { bits(mask) };
    if !targeted(wants) {
        return None;
    }
    let old = set_mask(&full_set());
    loop {
        // SAFETY: reading this thread's pending signals into a zeroed set.
        let pending = unsafe {
            let mut p: sigset_t = std::mem::zeroed();
            libc::sigpending(&mut p);
            bits(&p)
        };
        if pending & wants != 0 {
            break;
        }
        if !targeted(wants) {
            set_mask(&old);
            return None;
        }
        waiting_for(wants, true, || model_wait(NO_DEADLINE));
    }
    set_mask(mask);
    set_mask(&old);
    crate::conn::set_errno(libc::EINTR);
    Some(-1)
}

/// `sigtimedwait` for a controlled thread that an armed timer will signal: take a pending
/// signal of `set`, else wait in the model until a timer thread wakes the signal waiters or
/// the timeout passes in virtual time (EAGAIN). `None`: the call goes to the kernel.
///
/// # Safety
/// As `sigtimedwait(2)`.
unsafe fn model_sigwait(
    set: *const sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const timespec,
) -> Option<c_int> {
    let now = clock::virtual_now()?;
    if set.is_null() {
        return None;
    }
    let wants = bits(set);
    if !targeted(wants) {
        return None;
    }
    let deadline = if timeout.is_null() {
        NO_DEADLINE
    } else {
        now.saturating_add(clock::to_ns(&*timeout)?)
    };
    let zero = timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        let r = real::sigtimedwait(set, info, &zero);
        if r > 0 {
            return Some(r);
        }
        if deadline != NO_DEADLINE && clock::virtual_now().unwrap_or(deadline) >= deadline {
            crate::conn::set_errno(libc::EAGAIN);
            return Some(-1);
        }
        if !targeted(wants) {
            return None;
        }
        waiting_for(wants, true, || model_wait(deadline));
    }
}

/// `pause`: waits for any signal it does not block, in the model when an armed timer will
/// send one ([`model_suspend`]), else in the kernel.
///
/// # Safety
/// As `pause(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pause() -> c_int {
    // SAFETY: querying the mask into a zeroed set.
    let mut mask: sigset_t = std::mem::zeroed();
    real::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
    if let Some(r) = model_suspend(&mask) {
        return r;
    }
    waiting_for(!bits(&mask), false, || real::pause())
}

/// `sigsuspend`: waits for the signals `mask` does not block (see [`pause`]).
///
/// # Safety
/// As `sigsuspend(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigsuspend(mask: *const sigset_t) -> c_int {
    if mask.is_null() {
        return real::sigsuspend(mask);
    }
    if let Some(r) = model_suspend(&*mask) {
        return r;
    }
    waiting_for(!bits(mask), false, || real::sigsuspend(mask))
}

/// The signals of a set a `sigwait*` call waits for (none for NULL).
///
/// # Safety
/// `set` must be NULL or point to a `sigset_t`.
unsafe fn wanted(set: *const sigset_t) -> u64 {
    if set.is_null() {
        0
    } else {
        bits(set)
    }
}

/// `sigwait`: waits for the signals of `set`, in the model when an armed timer will send
/// one ([`model_sigwait`]), else in the kernel.
///
/// # Safety
/// As `sigwait(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigwait(set: *const sigset_t, sig: *mut c_int) -> c_int {
    match model_sigwait(set, std::ptr::null_mut(), std::ptr::null()) {
        Some(r) if r > 0 => {
            if !sig.is_null() {
                *sig = r;
            }
            0
        }
        Some(_) => crate::conn::errno(),
        None => waiting_for(wanted(set), false, || real::sigwait(set, sig)),
    }
}

/// `sigwaitinfo`: waits for the signals of `set` (see [`sigwait`]).
///
/// # Safety
/// As `sigwaitinfo(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigwaitinfo(
    set: *const sigset_t,
    info: *mut libc::siginfo_t,
) -> c_int {
    match model_sigwait(set, info, std::ptr::null()) {
        Some(r) => r,
        None => waiting_for(wanted(set), false, || real::sigwaitinfo(set, info)),
    }
}

/// `sigtimedwait`: waits for the signals of `set` (see [`sigwait`]); the timeout is in
/// virtual time when the wait is in the model, else the kernel waits in real time and a
/// timeout then sleeps to its deadline in virtual time.
///
/// # Safety
/// As `sigtimedwait(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sigtimedwait(
    set: *const sigset_t,
    info: *mut libc::siginfo_t,
    timeout: *const timespec,
) -> c_int {
    match model_sigwait(set, info, timeout) {
        Some(r) => r,
        // In the kernel, and when it timed out, a sleep to the deadline in virtual time
        // (`crate::poll::kernel_wait_in_virtual_time`).
        None => crate::poll::kernel_wait_in_virtual_time(
            crate::poll::ns_of(timeout),
            || {
                waiting_for(wanted(set), false, || {
                    real::sigtimedwait(set, info, timeout)
                })
            },
            |r| r < 0 && crate::conn::errno() == libc::EAGAIN,
        ),
    }
}

/// `pthread_kill`: as the real one, after [`crate::signal::before_kill`] (a wait of the
/// target ends for its handler); a thread waiting for a signal in the model is woken to
/// look at its pending signals.
///
/// # Safety
/// As `pthread_kill(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_kill(t: libc::pthread_t, sig: c_int) -> c_int {
    to_thread(t, sig, || real::pthread_kill(t, sig))
}

/// A signal `sig` to thread `t`, sent by `send`: see [`pthread_kill`].
fn to_thread(t: libc::pthread_t, sig: c_int, send: impl FnOnce() -> c_int) -> c_int {
    if sig != 0 {
        crate::signal::before_kill(t, sig);
    }
    let r = send();
    if r == 0 && sig != 0 {
        nudge_waiters();
    }
    r
}

/// `pthread_sigqueue`: as [`pthread_kill`], with a value for an `SA_SIGINFO` handler.
///
/// # Safety
/// As `pthread_sigqueue(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_sigqueue(
    t: libc::pthread_t,
    sig: c_int,
    value: libc::sigval,
) -> c_int {
    to_thread(t, sig, || real::pthread_sigqueue(t, sig, value))
}

/// `kill`: as the real one; a signal to this process (or its group, or everyone) wakes the
/// threads waiting for a signal in the model, as [`pthread_kill`].
///
/// # Safety
/// As `kill(2)`.
#[no_mangle]
pub unsafe extern "C" fn kill(pid: libc::pid_t, sig: c_int) -> c_int {
    let r = match (sig != 0 && pid == libc::getpid())
        .then(|| crate::signal::kill_process(sig))
        .flatten()
    {
        Some(r) => r,
        None => real::kill(pid, sig),
    };
    if r == 0 && sig != 0 && (pid <= 0 || pid == libc::getpid()) {
        nudge_waiters();
    }
    if r == 0 && pid > 0 && pid != libc::getpid() && crate::conn::me().is_some() {
        await_end_by(pid, sig);
    }
    r
}

/// Signals whose default action ends a process (`signal(7)`: Term and Core).
const ENDING: &[c_int] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGKILL,
    libc::SIGUSR1,
    libc::SIGSEGV,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGSTKFLT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGIO,
    libc::SIGPWR,
    libc::SIGSYS,
];

/// A controlled thread has just sent `sig` to process `pid`: if the signal ends it (it does
/// not catch, ignore or block it, per `/proc/PID/status`, and its default action ends a
/// process; `SIGKILL` always), wait until the kernel has ended it (a zombie, or gone), at
/// most 1 s. The run's model learns of a process's end when its connections close; a
/// caller that went on at once reached its `waitpid` while the killed process still counted
/// as blocked where it was, and the run was a false `deadlock` (probe 21: Python's
/// `multiprocessing.Pool` terminating its workers, 5 of 20 runs).
fn await_end_by(pid: libc::pid_t, sig: c_int) {
    if !ENDING.contains(&sig) {
        return;
    }
    // Read into stack buffers: no allocation on the program's thread (its later `malloc`s
    // keep their addresses).
    let mut buf = [0u8; 4096];
    let Some(status) = crate::procfs::read_task(pid, c"status", &mut buf) else {
        return;
    };
    let has = |field: &[u8]| {
        status
            .split(|&b| b == b'\n')
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|mask| mask & (1u64 << (sig - 1)) != 0)
    };
    if sig != libc::SIGKILL && (has(b"SigCgt:") || has(b"SigIgn:") || has(b"SigBlk:")) {
        return;
    }
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(1) {
        if !crate::procfs::alive(pid) {
            return;
        }
        let t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000,
        };
        // SAFETY: a real 0.1 ms sleep (not a scheduling point, nor the program's virtual one).
        unsafe { real::nanosleep(&t, std::ptr::null_mut()) };
    }
}

/// A forked child has no timers (POSIX): forget the parent's, whose threads did not follow.
pub fn forget_all() {
    crate::timerfd::forget_all();
    for s in &TIMERS {
        s.generation.fetch_add(1, Ordering::SeqCst);
        s.expiry.store(DISARMED, Ordering::SeqCst);
        s.interval.store(0, Ordering::SeqCst);
        s.used.store(false, Ordering::SeqCst);
        s.sleeper.store(DISARMED, Ordering::SeqCst);
    }
    for w in &WAITERS {
        w.tid.store(0, Ordering::SeqCst);
    }
    RETURNING.with(|r| r.set(usize::MAX));
}
