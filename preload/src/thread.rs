//! Thread life cycle: `pthread_create` (with a trampoline that connects the child),
//! `pthread_join`, `pthread_detach`, `pthread_exit`, and the process end (`main` returning,
//! `exit`, `_exit`, `_Exit`).
//!
//! The child's [`Tid`] is the `value` of the create grant (ids are dense in creation order,
//! assigned by the coordinator). We keep a small `pthread_t → Tid` table so that joins and
//! detaches name their target; the parent records the child before its next post, and the
//! child cannot be granted its exit before that post, so the entry is always there in time.

use crate::conn::{self, Busy, ACTIVE};
use crate::real;
use libc::{c_char, c_int, c_void, pthread_attr_t, pthread_t};
use pos_sched::protocol::Msg;
use pos_sched::{Op, Tid};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Controlled threads created by this process: `pthread_t` → run-local id.
static THREADS: Mutex<Vec<(pthread_t, Tid)>> = Mutex::new(Vec::new());

fn remember(t: pthread_t, tid: Tid) {
    let _b = Busy::enter();
    let mut v = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    v.retain(|&(p, _)| p != t);
    v.push((t, tid));
}

fn tid_of(t: pthread_t) -> Option<Tid> {
    let _b = Busy::enter();
    let v = THREADS.lock().unwrap_or_else(|e| e.into_inner());
    v.iter().find(|&&(p, _)| p == t).map(|&(_, tid)| tid)
}

/// The controlled threads created by this process, with their run-local ids.
pub(crate) fn controlled_threads() -> Vec<(pthread_t, Tid)> {
    let _b = Busy::enter();
    THREADS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The run-local id of `t`, a thread created under control (for `pthread_cancel`).
pub(crate) fn controlled_tid(t: pthread_t) -> Option<Tid> {
    tid_of(t)
}

fn forget(t: pthread_t) {
    let _b = Busy::enter();
    THREADS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&(p, _)| p != t);
}

/// A start routine; `C-unwind` because `pthread_exit` unwinds through it.
type Routine = extern "C-unwind" fn(*mut c_void) -> *mut c_void;

/// What the trampoline needs to start a controlled child.
struct Start {
    routine: Routine,
    arg: *mut c_void,
    tid: Tid,
    /// The creator's signal mask: the child starts with every signal blocked and takes
    /// this one once it is controlled, so that no handler runs on it uncontrolled.
    mask: libc::sigset_t,
}

/// Start records in flight from `pthread_create` to the new thread's trampoline, kept here
/// rather than in the heap: the child's `free` of a heap record was its first use of
/// malloc, and glibc opened a malloc arena for it (a 64 MiB reservation, three more system
/// calls, page faults, and its teardown at exit) in every thread of every run, also in a
/// thread that never allocates natively. A record is in flight only until its thread
/// starts, so a few slots serve any program; when all are taken it goes to the heap.
const START_SLOTS: usize = 64;

struct StartSlot {
    taken: AtomicBool,
    start: UnsafeCell<MaybeUninit<Start>>,
}

// SAFETY: a slot's record is written only by the thread that took it (`taken` false ->
// true) and read once by the one thread it was handed to, which then frees the slot.
unsafe impl Sync for StartSlot {}

static STARTS: [StartSlot; START_SLOTS] = [const {
    StartSlot {
        taken: AtomicBool::new(false),
        start: UnsafeCell::new(MaybeUninit::uninit()),
    }
}; START_SLOTS];

/// Hand `s` over: a free slot of [`STARTS`], or a heap block when none is free.
fn put_start(s: Start) -> *mut c_void {
    for slot in &STARTS {
        if slot
            .taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: the slot is ours until `take_start` frees it.
            unsafe { (*slot.start.get()).write(s) };
            return slot.start.get().cast();
        }
    }
    let _b = Busy::enter();
    Box::into_raw(Box::new(s)).cast()
}

/// Take back the record `p` from [`put_start`] (in the new thread, or in its creator when
/// no thread could be created) and free its slot.
///
/// # Safety
/// `p` came from `put_start` and is taken back once.
unsafe fn take_start(p: *mut c_void) -> Start {
    match STARTS
        .iter()
        .find(|slot| slot.start.get().cast::<c_void>() == p)
    {
        Some(slot) => {
            let s = (*slot.start.get()).assume_init_read();
            slot.taken.store(false, Ordering::Release);
            s
        }
        None => *Box::from_raw(p as *mut Start),
    }
}

/// First frame of every controlled child: connect as `tid`, post `Start` and wait for its
/// grant, run the routine. Its `Exit` is posted at the very end of the thread, from the
/// thread-specific-data destructor [`crate::cancel::arm_exit`] sets up: what glibc runs
/// after the routine (C++ `thread_local` and Rust TLS destructors, the at-thread-exit
/// notifications of `std::notify_all_at_thread_exit` and `set_value_at_thread_exit`, the
/// program's own TSD destructors; after `pthread_exit`, the cleanup handlers and the
/// destructors its unwind runs) stays under control. Posting `Exit` here left all of that
/// uncontrolled: its unlocks, posts and signals never reached the model (false deadlocks)
/// and its locks ignored the model's owners (false assertions).
/// It holds no value with a destructor while the routine runs, so `pthread_exit`'s forced
/// unwind passes through it cleanly.
extern "C-unwind" fn trampoline(p: *mut c_void) -> *mut c_void {
    // SAFETY: p is the record pthread_create handed to this thread alone.
    let Start {
        routine,
        arg,
        tid,
        mask,
    } = unsafe { take_start(p) };
    conn::adopt(tid);
    crate::cancel::arm_exit();
    {
        // The creator's mask, as glibc would have set it. A signal sent meanwhile is
        // delivered now, inside libpos: queued, its handler runs once `Start` is granted
        // (`crate::signal`).
        let _b = Busy::enter();
        // SAFETY: a valid mask.
        unsafe { real::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) };
    }
    // Stay stopped at the entry until granted: only one controlled thread ever runs between
    // two scheduling points (otherwise the routine's first steps race with the creator's).
    // A start and a return are at the thread's routine (for readable traces).
    conn::set_site(routine as *const () as u64 + 1);
    if let Some(me) = conn::me() {
        me.post(Op::Start);
    }
    conn::set_site(0);
    let ret = routine(arg);
    EXIT_SITE.with(|s| s.set(routine as *const () as u64 + 1));
    ret
}

thread_local! {
    /// Where this thread's `Exit` is reported: its routine's return, or its `pthread_exit`
    /// call (0: unknown, the post's own caller).
    static EXIT_SITE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Post this thread's `Exit`, then leave control.
pub(crate) fn exit_thread() {
    if let Some(me) = conn::me() {
        conn::set_site(EXIT_SITE.with(|s| s.get()));
        crate::signal::gone(me.tid);
        crate::signal::exiting(true);
        me.post(Op::Exit);
        conn::set_site(0);
        conn::release();
    }
}

/// `pthread_create`: a scheduling point (`Op::Create`); the child starts controlled.
///
/// # Safety
/// As `pthread_create(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut pthread_t,
    attr: *const pthread_attr_t,
    routine: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    let Some(me) = conn::me() else {
        crate::process::note_uncontrolled_thread();
        return real::pthread_create(thread, attr, routine, arg);
    };
    if crate::process::EXEC_CONTROLLED.swap(false, std::sync::atomic::Ordering::SeqCst) {
        // Standalone: this process is the program under control; what it runs is not.
        let _b = Busy::enter();
        crate::strip_preload();
    }
    let grant = me.post(Op::Create);
    let Ok(tid) = Tid::try_from(grant.value) else {
        conn::die(&format!("bad child thread id {}", grant.value));
    };
    // The child starts with every signal blocked (but SIGSYS, libpos's trap) until it is
    // controlled; its own mask is this thread's, mirrored at once for `pthread_kill`.
    let mut mask: libc::sigset_t = std::mem::zeroed();
    let mut all: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    libc::sigdelset(&mut all, libc::SIGSYS);
    real::pthread_sigmask(libc::SIG_SETMASK, &all, &mut mask);
    crate::signal::note_mask_of(tid, &mask);
    let start = put_start(Start {
        // SAFETY: same ABI; C-unwind only additionally allows unwinding out of it.
        routine: std::mem::transmute::<extern "C" fn(*mut c_void) -> *mut c_void, Routine>(routine),
        arg,
        tid,
        mask,
    });
    // SAFETY: the trampoline has the C start-routine ABI (C-unwind is the same calling
    // convention).
    let tramp =
        std::mem::transmute::<Routine, extern "C" fn(*mut c_void) -> *mut c_void>(trampoline);
    let r = real::pthread_create(thread, attr, tramp, start);
    real::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
    if r == 0 {
        remember(*thread, tid);
    } else {
        // Frees its slot (or heap block).
        let _ = take_start(start);
        stillborn(tid);
    }
    r
}

/// The coordinator created `tid` but the real `pthread_create` failed: finish it on its
/// behalf (connect as it and post its `Exit`) so the run does not wait for it forever.
fn stillborn(tid: Tid) {
    let fd = crate::fds::connect().unwrap_or_else(|e| conn::die(&e));
    let ghost = conn::Me { fd, tid };
    // No kernel thread of its own: the coordinator must not look at ours for it.
    let (hello, _) = Msg::Hello {
        tid,
        pid: std::process::id(),
        ktid: 0,
        fd: -1,
    }
    .encode();
    if !conn::write_all(fd, &hello) {
        conn::die("cannot greet the coordinator");
    }
    ghost.post(Op::Exit);
    crate::fds::close_ours(fd);
}

/// `pthread_join`: a scheduling point (`Op::Join`), enabled once the target has exited; then
/// the real join reaps the thread (it returns promptly: the target is already leaving).
///
/// # Safety
/// As `pthread_join(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_join(t: pthread_t, ret: *mut *mut c_void) -> c_int {
    let (Some(me), Some(target)) = (conn::me(), tid_of(t)) else {
        return real::pthread_join(t, ret);
    };
    let r = me.post(Op::Join { target }).result;
    if r != 0 {
        return r;
    }
    forget(t);
    real::pthread_join(t, ret)
}

/// `pthread_timedjoin_np`: `Op::TimedJoin` with the `CLOCK_REALTIME` deadline in virtual
/// time (ETIMEDOUT once it is reached with the target still running), then the real join.
///
/// # Safety
/// As `pthread_timedjoin_np(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_timedjoin_np(
    t: pthread_t,
    ret: *mut *mut c_void,
    abs: *const libc::timespec,
) -> c_int {
    let (Some(me), Some(target)) = (conn::me(), tid_of(t)) else {
        return real::pthread_timedjoin_np(t, ret, abs);
    };
    timed_join(me, t, target, ret, libc::CLOCK_REALTIME, abs)
}

/// `pthread_clockjoin_np`: as `pthread_timedjoin_np`, on clock `c`.
///
/// # Safety
/// As `pthread_clockjoin_np(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_clockjoin_np(
    t: pthread_t,
    ret: *mut *mut c_void,
    c: libc::clockid_t,
    abs: *const libc::timespec,
) -> c_int {
    let (Some(me), Some(target)) = (conn::me(), tid_of(t)) else {
        return real::pthread_clockjoin_np(t, ret, c, abs);
    };
    timed_join(me, t, target, ret, c, abs)
}

/// The timed joins: post `Op::TimedJoin`; on success reap the finished thread.
unsafe fn timed_join(
    me: conn::Me,
    t: pthread_t,
    target: Tid,
    ret: *mut *mut c_void,
    c: libc::clockid_t,
    abs: *const libc::timespec,
) -> c_int {
    let deadline = match crate::clock::deadline(c, abs) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let r = me.post(Op::TimedJoin { target, deadline }).result;
    if r != 0 {
        return r;
    }
    forget(t);
    real::pthread_join(t, ret)
}

/// `pthread_tryjoin_np`: `Op::TryJoin` (EBUSY while the target runs; never waits), then the
/// real join of the finished thread.
///
/// # Safety
/// As `pthread_tryjoin_np(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_tryjoin_np(t: pthread_t, ret: *mut *mut c_void) -> c_int {
    let (Some(me), Some(target)) = (conn::me(), tid_of(t)) else {
        return real::pthread_tryjoin_np(t, ret);
    };
    let r = me.post(Op::TryJoin { target }).result;
    if r != 0 {
        return r;
    }
    forget(t);
    real::pthread_join(t, ret)
}

/// `pthread_detach`: a scheduling point (`Op::Detach`), then the real detach.
///
/// # Safety
/// As `pthread_detach(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_detach(t: pthread_t) -> c_int {
    let (Some(me), Some(target)) = (conn::me(), tid_of(t)) else {
        return real::pthread_detach(t);
    };
    let r = me.post(Op::Detach { target }).result;
    if r != 0 {
        return r;
    }
    forget(t);
    real::pthread_detach(t)
}

/// `pthread_exit`: the real exit, which unwinds (cleanup handlers, destructors) under
/// control; the thread's `Exit` is posted at its very end (see [`trampoline`]).
///
/// # Safety
/// As `pthread_exit(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_exit(ret: *mut c_void) -> ! {
    if conn::me().is_some() {
        EXIT_SITE.with(|s| s.set(conn::caller_pc()));
        crate::cancel::arm_exit();
    }
    real::pthread_exit(ret)
}

/// Post `ProcessExit{code}`; once granted, interception ends for the whole process.
/// A `vfork` child shares our memory and thread-locals without running fork handlers; its
/// `_exit` (after a failed `exec`) must not be taken for the process's exit.
fn process_exit(code: c_int) {
    if conn::me().is_some() && std::process::id() != conn::PID.load(Ordering::Relaxed) {
        return;
    }
    if let Some(me) = conn::me() {
        me.post(Op::ProcessExit { code });
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The code of the `exit` in progress ([`exit`]), for [`at_process_exit`].
static EXIT_CODE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// An `exit` is in progress and its `ProcessExit` not posted yet.
static EXIT_PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// [`at_process_exit`] is registered with the C library.
static EXIT_HOOKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The thread (`pthread_self`) whose `exit` is in progress (with [`EXIT_PENDING`]).
static EXIT_THREAD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether the calling thread is running the process's exit handlers (its `exit` is in
/// progress, its `ProcessExit` not posted yet).
pub(crate) fn in_exit_handlers_here() -> bool {
    EXIT_PENDING.load(Ordering::SeqCst)
        // SAFETY: pthread_self has no preconditions.
        && EXIT_THREAD.load(Ordering::SeqCst) == unsafe { libc::pthread_self() } as usize
}

/// Register [`at_process_exit`] (libpos's constructor, before the program's constructors
/// and `main` register theirs: it runs after them). `atexit` allocates nothing for its first
/// 32 handlers, so the heap is laid out as before.
pub(crate) fn hook_process_exit() {
    extern "C" {
        fn __cxa_atexit(f: extern "C" fn(*mut c_void), arg: *mut c_void, dso: *mut c_void)
            -> c_int;
    }
    extern "C" fn hook(_: *mut c_void) {
        at_process_exit();
    }
    // Registered for no shared object: `atexit` would tie it to libpos's, whose
    // `__cxa_finalize` runs it among the libraries' destructors, before those of the
    // libraries finalised after libpos (libuv's shutdown, which wakes and joins its pool
    // threads, then ran uncontrolled and hung). Registered before `__libc_start_main`
    // registers the loader's finaliser, it runs after every library destructor.
    // SAFETY: registers a handler with the C library; it stays valid (libpos is never
    // unloaded).
    if unsafe { __cxa_atexit(hook, std::ptr::null_mut(), std::ptr::null_mut()) } == 0 {
        EXIT_HOOKED.store(true, Ordering::Relaxed);
    }
}

/// The last exit handler: post the `ProcessExit` of the `exit` in progress, once the
/// program's own handlers (`atexit`, C++ static destructors, library destructors) ran under
/// control.
extern "C" fn at_process_exit() {
    if EXIT_PENDING.swap(false, Ordering::SeqCst) {
        process_exit(EXIT_CODE.load(Ordering::SeqCst));
    }
}

/// `exit` (and `main`'s return): the real exit, whose handlers (`atexit`, C++ static
/// destructors: a global service object that joins its thread, say) run under control; the
/// `ProcessExit` event is posted by the last of them ([`at_process_exit`]). Posting it here
/// left them uncontrolled: a handler that woke or joined a controlled thread hung the run
/// until the step timeout. Without the hook, the event first.
///
/// # Safety
/// As `exit(3)`.
#[no_mangle]
pub unsafe extern "C" fn exit(code: c_int) -> ! {
    let hooked = EXIT_HOOKED.load(Ordering::Relaxed)
        && conn::me().is_some()
        && std::process::id() == conn::PID.load(Ordering::Relaxed);
    if hooked && !EXIT_PENDING.swap(true, Ordering::SeqCst) {
        EXIT_CODE.store(code, Ordering::SeqCst);
        EXIT_THREAD.store(libc::pthread_self() as usize, Ordering::SeqCst);
    } else {
        process_exit(code);
    }
    real::exit(code)
}

/// `_exit`: the `ProcessExit` event, then the real `_exit`.
///
/// # Safety
/// As `_exit(2)`.
#[no_mangle]
pub unsafe extern "C" fn _exit(code: c_int) -> ! {
    process_exit(code);
    real::_exit(code)
}

/// `_Exit`: the `ProcessExit` event, then the real `_Exit`.
///
/// # Safety
/// As `_Exit(2)`.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn _Exit(code: c_int) -> ! {
    process_exit(code);
    real::_Exit(code)
}

/// The program's real `main`, saved by our `__libc_start_main`.
static MAIN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs the program's `main`; its return is a process exit like any `exit` call (glibc
/// calls `exit` internally there, which an interposer would not see).
unsafe extern "C-unwind" fn main_wrapper(
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
) -> c_int {
    // SAFETY: MAIN holds the main function __libc_start_main received.
    let main: real::MainFn = std::mem::transmute(MAIN.load(Ordering::Relaxed));
    let code = main(argc, argv, envp);
    exit(code)
}

/// `__libc_start_main`: run `main` through [`main_wrapper`].
///
/// # Safety
/// Called by the program's `_start` only.
#[no_mangle]
pub unsafe extern "C" fn __libc_start_main(
    main: real::MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    MAIN.store(main as usize, Ordering::Relaxed);
    let wrapper = std::mem::transmute::<
        unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int,
        real::MainFn,
    >(main_wrapper);
    real::__libc_start_main(wrapper, argc, argv, init, fini, rtld_fini, stack_end)
}
