//! The program's signal handlers, run under control.
//!
//! A handler that the kernel runs on a controlled thread parked in libpos (waiting for its
//! turn, or blocked in a wait of the model) would run outside the model: its `sem_post`
//! would pass through to the real semaphore, the thread it should wake would stay blocked
//! in the model, and the run would end as a false deadlock. So:
//!
//! - `sigaction`/`signal` install [`trampoline`] in place of the program's handler (for
//!   the signals of [`wrapped`]; faults, `SIGABRT` and `SIGSYS` keep theirs; a one-shot
//!   `SA_RESETHAND` action is taken per delivery) and report the program's own action back.
//!   The trampoline runs the handler at once when the thread is in the program's code; when
//!   the thread is inside libpos ([`conn::deferring`]), it only queues the signal, and
//!   libpos runs the handler at the thread's next post ([`drain`]), with the handler's mask,
//!   as the kernel would have.
//! - `pthread_kill` (or `pthread_sigqueue`) of another controlled thread that does not
//!   block the signal and has a handler for it posts [`Op::Kill`] first: in the model a wait
//!   the target is blocked in then ends with `EINTR`. The target runs the handler right
//!   after its next grant ([`after_grant`]: the same place in every replay), after an
//!   [`Op::Handler`] step, and returns `EINTR` from `sem_wait`, `sem_timedwait` and `futex`
//!   waits (POSIX: never restarted) or posts the wait again (mutexes, condvars, joins,
//!   barriers, sleeps, its exit: restarted after the handler, as glibc does).
//! - `kill` of the process by a thread that blocks the signal goes to the controlled thread
//!   with the lowest id that does not, as a `pthread_kill` ([`kill_process`]).
//!
//! Whether the target blocks the signal is the model's business, so each controlled
//! thread's mask is mirrored here ([`note_mask`]) when it starts and when it changes it.
//! A handler gets a fresh `ucontext` when libpos runs it (not the interrupted one).

use crate::conn::{self, Busy};
use crate::real;
use libc::{c_int, c_void, sigset_t};
use pos_sched::{Op, Tid};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Signals 1..=64 (bit `sig - 1` of the masks below).
const NSIG: usize = 65;

/// Whether libpos runs the program's handler for `sig` through [`trampoline`]: the policy of
/// [`pos_sched::signals`] (not the faults, `SIGABRT`, `SIGSYS`, glibc's 32 and 33, nor those
/// no handler can catch), which the runner reads a program's caught signals with too.
pub fn wrapped(sig: c_int) -> bool {
    pos_sched::signals::handled_under_control(sig)
}

/// The program's action for each signal whose handler is the trampoline.
#[allow(clippy::declare_interior_mutable_const)]
const NONE: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_FLAGS: AtomicI32 = AtomicI32::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO_MASK: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO: AtomicBool = AtomicBool::new(false);
static HANDLER: [AtomicUsize; NSIG] = [NONE; NSIG];
static FLAGS: [AtomicI32; NSIG] = [NO_FLAGS; NSIG];
static SA_MASK: [AtomicU64; NSIG] = [NO_MASK; NSIG];
/// The trampoline is installed for the signal.
static OURS: [AtomicBool; NSIG] = [NO; NSIG];

/// Controlled threads' signal masks (the first 64 signals), by run-local id; [`UNKNOWN`]
/// for a thread not seen yet.
const MAX_THREADS: usize = 1024;
const UNKNOWN: u64 = u64::MAX;
#[allow(clippy::declare_interior_mutable_const)]
const NO_THREAD: AtomicU64 = AtomicU64::new(UNKNOWN);
static MASKS: [AtomicU64; MAX_THREADS] = [NO_THREAD; MAX_THREADS];

/// How many signals [`before_kill`] sent each controlled thread, by run-local id: the
/// thread runs their handlers as soon as it is granted its next step ([`after_grant`]),
/// wherever the kernel delivered them, so that the handler's steps sit at the same place in
/// the schedule whenever it is replayed.
#[allow(clippy::declare_interior_mutable_const)]
const NOTHING_SENT: AtomicU32 = AtomicU32::new(0);
static SENT: [AtomicU32; MAX_THREADS] = [NOTHING_SENT; MAX_THREADS];

/// Threads that queued a signal while inside libpos ([`trampoline`]) and have not run its
/// handler yet, by run-local id: when every thread is blocked, the decider ends the wait of
/// such a thread for the handler ([`outside_signal`]) instead of reporting a deadlock.
#[allow(clippy::declare_interior_mutable_const)]
const NO_SIGNAL: AtomicBool = AtomicBool::new(false);
static QUEUED: [AtomicBool; MAX_THREADS] = [NO_SIGNAL; MAX_THREADS];

/// Threads controlled without our `pthread_create` (the main thread, a forked child's):
/// their `pthread_t` and run-local id, for `pthread_kill`.
static ADOPTED: std::sync::Mutex<Vec<(libc::pthread_t, Tid)>> = std::sync::Mutex::new(Vec::new());

/// The program's action for one delivery: handler, flags, mask (taken when the signal
/// came: a one-shot handler is no longer installed by the time libpos runs it).
#[derive(Clone, Copy)]
struct Action(usize, c_int, u64);

impl Action {
    const NONE: Action = Action(0, 0, 0);

    /// `sig`'s action now; a one-shot (`SA_RESETHAND`) one is gone after this delivery,
    /// as the kernel reset it.
    fn take(sig: c_int) -> Action {
        let i = sig as usize;
        let a = Action(
            HANDLER[i].load(Ordering::SeqCst),
            FLAGS[i].load(Ordering::SeqCst),
            SA_MASK[i].load(Ordering::SeqCst),
        );
        if a.1 & libc::SA_RESETHAND != 0 {
            OURS[i].store(false, Ordering::SeqCst);
            HANDLER[i].store(libc::SIG_DFL, Ordering::SeqCst);
        }
        a
    }
}

/// Signals queued for this thread while it was inside libpos.
struct Queue {
    n: usize,
    items: [(c_int, libc::siginfo_t, Action); 8],
}

thread_local! {
    /// Written by [`trampoline`] only while the thread is inside libpos, read by [`drain`]
    /// only outside: never both at once on the one thread that owns it.
    static QUEUE: UnsafeCell<Queue> = const {
        // SAFETY: an all-zero siginfo_t is a valid value.
        UnsafeCell::new(Queue { n: 0, items: [(0, unsafe { std::mem::zeroed() }, Action::NONE); 8] })
    };
    /// A drain runs on this thread: the handlers' own posts do not start another.
    static DRAINING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// How many of the signals [`SENT`] to this thread it has handled.
    static ACKED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The first 64 signals of a set.
fn bits(set: &sigset_t) -> u64 {
    // SAFETY: a sigset_t is at least 8 bytes.
    unsafe { std::ptr::read_unaligned(set as *const sigset_t as *const u64) }
}

fn set_of(bits: u64) -> sigset_t {
    // SAFETY: filling a zeroed set.
    unsafe {
        let mut s: sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in 1..NSIG as c_int {
            if bits & (1u64 << (sig - 1)) != 0 {
                libc::sigaddset(&mut s, sig);
            }
        }
        s
    }
}

/// The calling thread's mask.
fn current_mask() -> u64 {
    // SAFETY: a query into a zeroed set.
    unsafe {
        let mut cur: sigset_t = std::mem::zeroed();
        real::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur);
        bits(&cur)
    }
}

/// Record the calling thread's mask as thread `tid`'s (at its start, and after each change).
pub fn note_mask(tid: Tid) {
    if let Some(slot) = MASKS.get(tid as usize) {
        slot.store(current_mask(), Ordering::SeqCst);
    }
}

/// Record `mask` as thread `tid`'s (a child about to be created takes its creator's).
pub fn note_mask_of(tid: Tid, mask: &sigset_t) {
    if let Some(slot) = MASKS.get(tid as usize) {
        slot.store(bits(mask), Ordering::SeqCst);
    }
}

/// The calling thread, controlled as `tid` but not created through our `pthread_create`
/// (the main thread, a forked child's), is remembered for `pthread_kill`, with its mask.
pub fn remember_self(tid: Tid) {
    note_mask(tid);
    let _b = Busy::enter();
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() };
    let mut v = ADOPTED.lock().unwrap_or_else(|e| e.into_inner());
    v.retain(|&(p, t)| p != me && t != tid);
    v.push((me, tid));
}

/// Whether controlled thread `tid` blocks `sig`, or its mask is not known (not seen yet,
/// exiting, or beyond [`MAX_THREADS`]).
fn blocks(tid: Tid, sig: c_int) -> bool {
    let mask = MASKS
        .get(tid as usize)
        .map_or(UNKNOWN, |m| m.load(Ordering::SeqCst));
    mask == UNKNOWN || mask & (1u64 << (sig - 1)) != 0
}

/// The run-local id of thread `t`, when it is controlled.
fn target_of(t: libc::pthread_t) -> Option<Tid> {
    crate::thread::controlled_tid(t).or_else(|| {
        let _b = Busy::enter();
        let v = ADOPTED.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().find(|&&(p, _)| p == t).map(|&(_, tid)| tid)
    })
}

/// `pthread_kill(t, sig)` is about to be sent by the calling thread: when `t` is another
/// controlled thread, does not block `sig` and the program handles it, post [`Op::Kill`]
/// so that a wait it is blocked in ends for the handler (see the module doc).
pub fn before_kill(t: libc::pthread_t, sig: c_int) {
    if !wrapped(sig) || !OURS[sig as usize].load(Ordering::SeqCst) {
        return;
    }
    let Some(me) = conn::me() else { return };
    // SAFETY: no preconditions.
    if unsafe { libc::pthread_equal(t, libc::pthread_self()) } != 0 {
        return; // delivered before pthread_kill returns, in the program's code
    }
    let Some(target) = target_of(t) else { return };
    if blocks(target, sig) {
        return; // blocked: it stays pending until the target opens its mask
    }
    me.post(Op::Kill { target });
    // Before the real signal, and before any later grant of the target (no decision is
    // made while this thread runs).
    SENT[target as usize].fetch_add(1, Ordering::SeqCst);
}

/// Thread `tid` is exiting: no signal is sent to it in the model any more.
pub fn gone(tid: Tid) {
    if let Some(slot) = MASKS.get(tid as usize) {
        slot.store(UNKNOWN, Ordering::SeqCst);
    }
}

/// `kill(getpid(), sig)` from a controlled thread that blocks `sig`: the kernel gives the
/// signal to some thread that does not block it, perhaps one parked in a wait of the model.
/// libpos makes that choice itself, the controlled thread with the lowest id that does not
/// block `sig` (a choice the kernel may make too), and sends it there as
/// [`before_kill`] and `pthread_kill` do, so that its handler runs under control. `None`:
/// not such a case (the kernel delivers it, to the sender when it does not block it).
pub fn kill_process(sig: c_int) -> Option<c_int> {
    if !wrapped(sig) || !OURS[sig as usize].load(Ordering::SeqCst) {
        return None;
    }
    let me = conn::me()?;
    if !blocks(me.tid, sig) {
        return None; // the kernel gives it to the sender itself, before `kill` returns
    }
    let mut threads = crate::thread::controlled_threads();
    {
        let _b = Busy::enter();
        threads.extend(
            ADOPTED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .copied(),
        );
    }
    threads.sort_by_key(|&(_, tid)| tid);
    let (pt, _) = threads
        .into_iter()
        .find(|&(_, tid)| tid != me.tid && !blocks(tid, sig))?;
    before_kill(pt, sig);
    // SAFETY: a controlled thread of this process that has not exited.
    let r = unsafe { real::pthread_kill(pt, sig) };
    if r == 0 {
        Some(0)
    } else {
        conn::set_errno(r);
        Some(-1)
    }
}

/// Whether signals are queued for this thread.
#[inline]
pub fn queued() -> bool {
    // SAFETY: this thread's own queue; a read of its length.
    QUEUE.with(|q| unsafe { (*q.get()).n > 0 })
}

/// The program's handler `a` for `sig`, as the trampoline's signature.
unsafe fn call_program(sig: c_int, a: Action, info: *mut libc::siginfo_t, uc: *mut c_void) {
    let h = a.0;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        return;
    }
    if a.1 & libc::SA_SIGINFO != 0 {
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = std::mem::transmute(h);
        f(sig, info, uc);
    } else {
        let f: extern "C" fn(c_int) = std::mem::transmute(h);
        f(sig);
    }
}

thread_local! {
    /// The call [`on_alternate_stack`] makes on the alternate stack.
    #[allow(clippy::type_complexity)]
    static ALT_CALL: std::cell::Cell<(c_int, Action, *mut libc::siginfo_t, *mut c_void)> =
        const { std::cell::Cell::new((0, Action::NONE, std::ptr::null_mut(), std::ptr::null_mut())) };
}

extern "C" fn alt_entry() {
    let (sig, action, info, uc) = ALT_CALL.with(|c| c.get());
    // SAFETY: the arguments `on_alternate_stack` stored for this call.
    unsafe { call_program(sig, action, info, uc) };
}

/// Run an `SA_ONSTACK` handler on the thread's alternate signal stack (`sigaltstack`), as
/// the kernel would: false when the thread has none, or already runs on it.
///
/// # Safety
/// As [`call_program`].
unsafe fn on_alternate_stack(
    sig: c_int,
    action: Action,
    info: *mut libc::siginfo_t,
    uc: *mut c_void,
) -> bool {
    let mut ss: libc::stack_t = std::mem::zeroed();
    if libc::sigaltstack(std::ptr::null(), &mut ss) != 0
        || ss.ss_flags & (libc::SS_DISABLE | libc::SS_ONSTACK) != 0
        || ss.ss_sp.is_null()
    {
        return false;
    }
    ALT_CALL.with(|c| c.set((sig, action, info, uc)));
    let mut back: libc::ucontext_t = std::mem::zeroed();
    let mut ctx: libc::ucontext_t = std::mem::zeroed();
    if libc::getcontext(&mut ctx) != 0 {
        return false;
    }
    ctx.uc_stack.ss_sp = ss.ss_sp;
    ctx.uc_stack.ss_size = ss.ss_size;
    ctx.uc_link = &mut back;
    libc::makecontext(&mut ctx, alt_entry, 0);
    libc::swapcontext(&mut back, &ctx) == 0
}

/// The handler libpos installs for the signals of [`wrapped`] that the program handles.
extern "C" fn trampoline(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void) {
    let saved = conn::errno();
    let action = Action::take(sig);
    if conn::deferring() {
        QUEUE.with(|q| {
            // SAFETY: this thread's own queue, which the interrupted code (inside libpos)
            // does not touch; the signal's info is valid for the handler's duration.
            unsafe {
                let q = &mut *q.get();
                if q.n < q.items.len() {
                    q.items[q.n] = (sig, *info, action);
                    q.n += 1;
                }
            }
        });
        if let Some(flag) = conn::controlled_tid().and_then(|t| QUEUED.get(t as usize)) {
            flag.store(true, Ordering::SeqCst);
        }
        // Over a socket, the coordinator is told (the thread waits for its reply).
        if let Some(fd) = conn::awaiting_reply() {
            conn::write_all(fd, &pos_sched::protocol::Msg::Interrupted.encode().0);
        }
    } else {
        if let Some(me) = conn::me() {
            // A signal a `Kill` sent, not handled yet: its handler step first.
            if let Some(sent) = SENT.get(me.tid as usize) {
                if ACKED.with(|a| a.get()) != sent.load(Ordering::SeqCst) {
                    me.post(Op::Handler);
                    acknowledge(me.tid);
                }
            }
        }
        // SAFETY: the arguments the kernel gave us, to the handler the program installed.
        unsafe { call_program(sig, action, info, uc) };
    }
    conn::set_errno(saved);
}

/// A handler step of thread `tid` was granted: it stands for every kill the model ran up to
/// now (one interruption, however many kills), so their signals, when the kernel delivers
/// them apart after all, take no step of their own: one more would wait for a kill that
/// will never come (a false deadlock of two `pthread_kill`s to a thread in `read`).
fn acknowledge(tid: Tid) {
    if let Some(sent) = SENT.get(tid as usize) {
        ACKED.with(|a| a.set(sent.load(Ordering::SeqCst)));
    }
}

/// Run the handlers of the signals queued for this thread under their `sigaction` masks,
/// as the kernel would have run them; after an [`Op::Handler`] step first when
/// `handler_step` (the signals a [`Op::Kill`] sent: one step for all of them).
pub fn drain(handler_step: bool) {
    if DRAINING.with(|d| d.replace(true)) {
        return;
    }
    if let Some(flag) = conn::controlled_tid().and_then(|t| QUEUED.get(t as usize)) {
        flag.store(false, Ordering::SeqCst);
    }
    if handler_step {
        if let Some(me) = conn::me() {
            me.post(Op::Handler);
            acknowledge(me.tid);
        }
    }
    loop {
        // SAFETY: this thread's own queue; not inside libpos here, so the trampoline runs
        // handlers itself instead of queueing meanwhile.
        let next = QUEUE.with(|q| unsafe {
            let q = &mut *q.get();
            (q.n > 0).then(|| {
                let first = q.items[0];
                q.items.copy_within(1..q.n, 0);
                q.n -= 1;
                first
            })
        });
        let Some((sig, mut info, action)) = next else {
            break;
        };
        let flags = action.1;
        let mut block = action.2;
        if flags & libc::SA_NODEFER == 0 {
            block |= 1u64 << (sig - 1);
        }
        // A handler may leave by `siglongjmp` (a timeout pattern): no drain is under way
        // while it runs, and the queue holds only what is still to run.
        DRAINING.with(|d| d.set(false));
        // SAFETY: plain mask switches around the program's handler; a fresh context.
        unsafe {
            let set = set_of(block);
            let mut old: sigset_t = std::mem::zeroed();
            real::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            let mut uc: libc::ucontext_t = std::mem::zeroed();
            libc::getcontext(&mut uc);
            let ucp = (&mut uc as *mut libc::ucontext_t).cast();
            if flags & libc::SA_ONSTACK == 0 || !on_alternate_stack(sig, action, &mut info, ucp) {
                call_program(sig, action, &mut info, ucp);
            }
            real::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        if DRAINING.with(|d| d.replace(true)) {
            return; // the handler's own posts drained the rest
        }
    }
    DRAINING.with(|d| d.set(false));
}

/// Thread `tid` was granted a step: if [`before_kill`] sent it signals it has not handled,
/// wait (inside libpos, so that they are queued) until they arrive, then run their
/// handlers ([`drain`]), before the thread goes on. A wait that ended for a signal
/// ([`code::EINTR`]) comes here too. A signal that does not come (the target blocked it
/// after all) still ends the interruption in the model.
///
/// [`code::EINTR`]: pos_sched::state::code::EINTR
///
/// `interrupted`: the grant ended a wait for a signal (an [`Op::Kill`], or one from outside
/// the run, [`outside_signal`]): a handler step is owed even when no `Kill` is.
#[inline]
pub fn after_grant(tid: Tid, interrupted: bool) {
    let Some(sent) = SENT.get(tid as usize) else {
        return;
    };
    let sent = sent.load(Ordering::SeqCst);
    if sent == ACKED.with(|a| a.get()) {
        if interrupted {
            drain(true);
        }
        return;
    }
    ACKED.with(|a| a.set(sent));
    {
        let _b = Busy::enter();
        for i in 0..20_000 {
            if queued() {
                break;
            }
            // SAFETY: no preconditions; returning from any system call delivers the
            // pending signals the thread does not block.
            unsafe {
                if i < 1_000 {
                    libc::syscall(libc::SYS_getppid);
                } else {
                    libc::sched_yield();
                }
            }
        }
    }
    drain(true);
}

thread_local! {
    /// The thread's mask before [`exiting`] blocked the handled signals.
    static BEFORE_EXIT: std::cell::Cell<Option<sigset_t>> = const { std::cell::Cell::new(None) };
}

/// The calling thread is about to post its exit (`true`): block the signals whose handlers
/// libpos runs, so that one meant for the process (a child's `SIGCHLD`) goes to a thread
/// that will still be there to run its handler, instead of being queued here and lost when
/// the thread is gone; or (`false`) its exit was interrupted by a kill whose handler must
/// run here first: its mask again until it posts the exit anew.
pub fn exiting(on: bool) {
    // SAFETY: plain mask switches of the calling thread with valid sets.
    unsafe {
        if on {
            let handled = OURS
                .iter()
                .enumerate()
                .filter(|(i, o)| *i > 0 && o.load(Ordering::Relaxed))
                .fold(0u64, |m, (i, _)| m | 1u64 << (i - 1));
            if handled == 0 {
                return;
            }
            let mut old: sigset_t = std::mem::zeroed();
            real::pthread_sigmask(libc::SIG_BLOCK, &set_of(handled), &mut old);
            if BEFORE_EXIT.with(|b| b.get()).is_none() {
                BEFORE_EXIT.with(|b| b.set(Some(old)));
            }
        } else if let Some(old) = BEFORE_EXIT.with(|b| b.take()) {
            real::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
}

/// Whether the program has a handler libpos runs ([`trampoline`]) for some signal: only
/// then can a signal from outside the run end a wait of the model.
pub fn handles_any() -> bool {
    OURS.iter().any(|o| o.load(Ordering::Relaxed))
}

/// A peer process's thread `t` (a forked child's, over its connection) queued a signal
/// while waiting for its reply ([`pos_sched::protocol::Msg::Interrupted`]), or (`false`)
/// posted again, its handlers run.
pub fn queued_in_peer(t: Tid, queued: bool) {
    if let Some(flag) = QUEUED.get(t as usize) {
        flag.store(queued, Ordering::SeqCst);
    }
}

/// A controlled thread that queued a signal from outside the run (the kernel, another
/// process) while blocked in a wait of the model, and has not handled it: its id (the flag
/// is taken). The decider ends that wait for the handler when every thread is blocked
/// ([`pos_sched::state::State::interrupt_from_outside`]).
pub fn outside_signal() -> Option<Tid> {
    QUEUED
        .iter()
        .position(|f| f.swap(false, Ordering::SeqCst))
        .map(|t| t as Tid)
}

/// Whether libpos's interrupted wait `op` returns `EINTR` to the program (semaphore and
/// futex waits, which POSIX never restarts) rather than being posted again.
pub fn returns_eintr(op: &Op) -> bool {
    matches!(
        op,
        Op::SemWait { .. } | Op::SemTimedWait { .. } | Op::FutexWait { .. }
    )
}

/// The program's view of `sig`'s action `installed` (the kernel's): its own handler where
/// the trampoline stands.
fn program_view(installed: &mut libc::sigaction, was_ours: bool, prev: (usize, i32, u64)) {
    if was_ours && installed.sa_sigaction == trampoline as *const () as usize {
        installed.sa_sigaction = prev.0;
        installed.sa_flags = prev.1;
        installed.sa_mask = set_of(prev.2);
    }
}

/// `sigaction` for a signal of [`wrapped`]: a handler is installed as the trampoline (the
/// program's is recorded; a one-shot `SA_RESETHAND` one too, the kernel resets it), `SIG_DFL`
/// and `SIG_IGN` as they are; the old action reported is the program's.
///
/// # Safety
/// As `sigaction(2)`; `act` has SIGSYS removed from its mask already (trap.rs).
pub unsafe fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    let i = sig as usize;
    let prev = (
        HANDLER[i].load(Ordering::SeqCst),
        FLAGS[i].load(Ordering::SeqCst),
        SA_MASK[i].load(Ordering::SeqCst),
    );
    let was_ours = OURS[i].load(Ordering::SeqCst);
    let mut before: libc::sigaction = std::mem::zeroed();
    let r = if act.is_null() {
        real::sigaction(sig, act, &mut before)
    } else {
        let a = *act;
        let h = a.sa_sigaction;
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            let r = real::sigaction(sig, &a, &mut before);
            if r == 0 {
                OURS[i].store(false, Ordering::SeqCst);
            }
            r
        } else {
            // The program's action first: a signal may come as soon as the trampoline is in.
            HANDLER[i].store(h, Ordering::SeqCst);
            FLAGS[i].store(a.sa_flags, Ordering::SeqCst);
            SA_MASK[i].store(bits(&a.sa_mask), Ordering::SeqCst);
            let mut b = a;
            b.sa_sigaction = trampoline as *const () as usize;
            b.sa_flags |= libc::SA_SIGINFO;
            let r = real::sigaction(sig, &b, &mut before);
            if r == 0 {
                OURS[i].store(true, Ordering::SeqCst);
            } else {
                HANDLER[i].store(prev.0, Ordering::SeqCst);
                FLAGS[i].store(prev.1, Ordering::SeqCst);
                SA_MASK[i].store(prev.2, Ordering::SeqCst);
            }
            r
        }
    };
    if r == 0 && !old.is_null() {
        program_view(&mut before, was_ours, prev);
        *old = before;
    }
    r
}

/// `signal` for a signal of [`wrapped`]: glibc's BSD semantics (`SA_RESTART`, the signal
/// blocked in its handler) through [`sigaction`].
///
/// # Safety
/// As `signal(2)`.
pub unsafe fn signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    let mut a: libc::sigaction = std::mem::zeroed();
    a.sa_sigaction = h;
    a.sa_flags = libc::SA_RESTART;
    libc::sigemptyset(&mut a.sa_mask);
    libc::sigaddset(&mut a.sa_mask, sig);
    let mut old: libc::sigaction = std::mem::zeroed();
    if sigaction(sig, &a, &mut old) != 0 {
        return libc::SIG_ERR;
    }
    old.sa_sigaction
}
