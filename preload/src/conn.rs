//! Who is controlled, and the per-thread connection to the coordinator.
//!
//! A thread is *controlled* when it has a connection (a thread-local fd): the main thread gets
//! one in the constructor, threads created through our `pthread_create` get one in the
//! trampoline. Every other thread (created before libpos was ready, by libpos itself, or by
//! code that bypasses `pthread_create`) has none and passes through to the real functions.
//! Control also stops for the whole process once `exit` has been granted or in a forked child
//! ([`ACTIVE`]), and for one thread while libpos itself runs code that could call back into an
//! interposer ([`Busy`]).
//!
//! Over a connection a scheduling step is one 32-byte `write` of a [`Msg::Post`] frame and
//! one blocking 16-byte `read` of the [`Reply`]: no allocation, no lock. A thread that posts
//! in-process ([`LOCAL`], standalone's default) calls [`crate::standalone::local_post`]
//! instead and waits on its futex baton.

use crate::fds;
use libc::c_int;
use pos_sched::protocol::{Msg, Reply, MSG_LEN, REPLY_LEN};
use pos_sched::state::{code, may_block};
use pos_sched::{Op, Tid};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Interception is on for the process (a coordinator exists, no exit granted, not a fork child).
pub static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The controlled process's pid (set by the constructor).
pub static PID: AtomicU32 = AtomicU32::new(0);

/// In standalone mode the in-process coordinator acknowledges `Assert` and `Crash` with a
/// [`Reply`] once it has printed the outcome, so that the process does not die first.
pub static ACK_REPORTS: AtomicBool = AtomicBool::new(false);

/// Standalone with `POS_TRANSPORT=baton`: the threads of this process post into the
/// in-process coordinator directly and wait on their [`crate::baton::Baton`] instead of a
/// connection ([`crate::standalone`]); a forked child turns it off (its threads connect).
pub static LOCAL: AtomicBool = AtomicBool::new(false);

/// The connection of a thread that posts in-process ([`LOCAL`]): no descriptor.
pub const LOCAL_FD: c_int = c_int::MAX;

thread_local! {
    /// This thread's connection, or -1 when it is not controlled.
    static FD: Cell<c_int> = const { Cell::new(-1) };
    /// This thread's id in the current run.
    static TID: Cell<Tid> = const { Cell::new(0) };
    /// libpos is running its own code on this thread: interposers pass through.
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// This thread reported a failed assertion (its SIGABRT is then no separate crash).
    static ASSERTED: Cell<bool> = const { Cell::new(false) };
    /// The pc to report for this thread's next posts instead of its caller's (0: none).
    static SITE: Cell<u64> = const { Cell::new(0) };
}

/// Report `pc` as the place of this thread's posts until reset with 0 (the thread
/// trampoline's start and exit, which have no caller in the program: the routine's entry,
/// plus one as for a return address).
pub fn set_site(pc: u64) {
    SITE.with(|s| s.set(pc));
}

/// A controlled thread about to perform an intercepted operation.
#[derive(Clone, Copy, Debug)]
pub struct Me {
    pub fd: c_int,
    pub tid: Tid,
}

/// The calling thread, if its operations go to the coordinator.
#[inline]
pub fn me() -> Option<Me> {
    if !ACTIVE.load(Ordering::Relaxed) || BUSY.with(|b| b.get()) {
        return None;
    }
    let fd = FD.with(|f| f.get());
    (fd >= 0).then(|| Me {
        fd,
        tid: TID.with(|t| t.get()),
    })
}

/// Whether a signal handler should wait: the calling thread is controlled and inside
/// libpos (see [`crate::signal`]). Async-signal-safe.
#[inline]
pub fn deferring() -> bool {
    ACTIVE.load(Ordering::Relaxed) && BUSY.with(|b| b.get()) && FD.with(|f| f.get()) >= 0
}

/// The calling thread's run-local id when it is controlled, busy or not.
#[inline]
pub fn controlled_tid() -> Option<Tid> {
    (FD.with(|f| f.get()) >= 0).then(|| TID.with(|t| t.get()))
}

/// Marks the calling thread busy (libpos-internal) until dropped; nests.
pub struct Busy(bool);

impl Busy {
    pub fn enter() -> Busy {
        Busy(BUSY.with(|b| b.replace(true)))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.with(|b| b.set(self.0));
    }
}

/// Print `poscheck: <what>` on stderr and end the process with status 70 (EX_SOFTWARE):
/// libpos cannot go on (no coordinator, broken connection).
pub fn die(what: &str) -> ! {
    let _b = Busy::enter();
    eprintln!("poscheck: libpos: {what}");
    // SAFETY: plain process exit, no atexit handlers (the program's state is unknown).
    unsafe { libc::_exit(70) }
}

/// Write all of `buf` to `fd` (retrying on EINTR and short writes). Async-signal-safe.
/// A socket is written with `MSG_NOSIGNAL`: when its peer is gone, the write fails instead of
/// killing this process with `SIGPIPE` (probe 21: GNU parallel `SIGKILL`s its forked
/// children, and the parent's reply to a dead child's connection was a crash of the parent,
/// `SIGPIPE`, in 1 run in 10). Other descriptors: [`write_all_file`].
pub fn write_all(fd: c_int, buf: &[u8]) -> bool {
    write_loop(fd, buf, true)
}

/// [`write_all`] for a descriptor that is no socket (an eventfd, stderr): one system call a
/// write, no `send` first.
pub fn write_all_file(fd: c_int, buf: &[u8]) -> bool {
    write_loop(fd, buf, false)
}

/// [`write_all`]; `socket`: try `send` with `MSG_NOSIGNAL` (and `write` once the descriptor
/// turns out to be no socket).
fn write_loop(fd: c_int, mut buf: &[u8], mut socket: bool) -> bool {
    while !buf.is_empty() {
        // SAFETY: buf is a valid slice.
        let n = unsafe {
            if socket {
                libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL)
            } else {
                libc::write(fd, buf.as_ptr().cast(), buf.len())
            }
        };
        if n < 0 {
            match errno() {
                libc::EINTR => continue,
                libc::ENOTSOCK if socket => {
                    socket = false;
                    continue;
                }
                _ => return false,
            }
        }
        buf = &buf[n as usize..];
    }
    true
}

/// Fill `buf` from `fd`; false on EOF or error. Async-signal-safe.
pub fn read_exact(fd: c_int, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: the destination range is inside buf.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n == 0 {
            return false;
        }
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return false;
        }
        got += n as usize;
    }
    true
}

/// How long a thread polls for its reply before blocking in `read` (`POSCHECK_SPIN_US`,
/// set by the runner only when a core is free for it; 0 = block at once).
pub static SPIN_NS: AtomicU64 = AtomicU64::new(0);

/// Read a reply: poll for it for up to [`SPIN_NS`] (yielding the CPU between polls), then
/// block. A grant usually comes back within microseconds, and catching it without
/// sleeping saves the wake-up that would otherwise make every step pay a second context
/// switch in the program.
fn read_reply(fd: c_int, r: &mut [u8; REPLY_LEN]) -> bool {
    let spin = SPIN_NS.load(Ordering::Relaxed);
    if spin > 0 {
        let start = now_ns();
        loop {
            // SAFETY: reading into r, within its length.
            let n = unsafe { libc::recv(fd, r.as_mut_ptr().cast(), REPLY_LEN, libc::MSG_DONTWAIT) };
            if n == REPLY_LEN as isize {
                return true;
            }
            if n > 0 {
                return read_exact(fd, &mut r[n as usize..]);
            }
            if n == 0 || (errno() != libc::EAGAIN && errno() != libc::EINTR) {
                return false;
            }
            if now_ns().saturating_sub(start) >= spin {
                break;
            }
            // SAFETY: no preconditions.
            unsafe { libc::sched_yield() };
        }
    }
    read_exact(fd, r)
}

thread_local! {
    /// The connection this thread waits on for the reply to its post (-1: none): a frame
    /// written there meanwhile cannot cut into the post's own.
    static AWAITING: std::cell::Cell<c_int> = const { std::cell::Cell::new(-1) };
}

/// The connection the calling thread waits on for a reply, if it does (a signal handler
/// may send a frame there: [`crate::signal`]). Async-signal-safe.
pub fn awaiting_reply() -> Option<c_int> {
    Some(AWAITING.with(|a| a.get())).filter(|&fd| fd >= 0)
}

/// CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
pub fn now_ns() -> u64 {
    // SAFETY: an all-zero timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn errno() -> c_int {
    // SAFETY: errno location of the calling thread.
    unsafe { *libc::__errno_location() }
}

pub fn set_errno(e: c_int) {
    // SAFETY: errno location of the calling thread.
    unsafe { *libc::__errno_location() = e }
}

/// The run is over for this thread: the coordinator aborted it, or went away. With
/// `ABORT` the coordinator kills the process group, so we wait quietly for that; if the
/// connection broke the coordinator is gone and nobody will, so we exit.
fn stop(aborted: bool) -> ! {
    if aborted {
        loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        }
    }
    die("lost the connection to the coordinator")
}

/// glibc's value (`<pthread.h>`); not exposed by the libc crate.
const PTHREAD_CANCEL_DISABLE: c_int = 1;

extern "C" {
    fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int;
}

/// Send a [`Msg::At`] with the caller's pc before every post (`POSCHECK_CALLER_PCS=1`, set
/// by the runner for `replay --trace` and the schedules it annotates).
pub static CALLER_PCS: AtomicBool = AtomicBool::new(false);

/// libpos's own code: `[start, end)` of its loaded segments, to skip its frames.
static OWN_START: AtomicU64 = AtomicU64::new(0);
static OWN_END: AtomicU64 = AtomicU64::new(0);
/// The C library's, skipped too when a frame of other code follows (the program's `exit`
/// after `main` returns is called by the C library, from `_start`).
static LIBC_START: AtomicU64 = AtomicU64::new(0);
static LIBC_END: AtomicU64 = AtomicU64::new(0);

/// Find where libpos itself and the C library are loaded, once at start-up, so that
/// [`caller_pc`] can skip their frames.
pub fn locate_self() {
    locate(locate_self as *const () as u64, &OWN_START, &OWN_END);
    locate(libc::getpid as *const () as u64, &LIBC_START, &LIBC_END);
}

/// Store in `lo`/`hi` the loaded range of the object holding `here`.
fn locate(here: u64, lo: &'static AtomicU64, hi: &'static AtomicU64) {
    struct Find {
        here: u64,
        lo: &'static AtomicU64,
        hi: &'static AtomicU64,
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _: usize,
        arg: *mut libc::c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid info for the duration of the call; arg is the
        // `Find` below.
        let (info, f) = (&*info, &*(arg as *const Find));
        let base = info.dlpi_addr;
        let (mut lo, mut hi) = (u64::MAX, 0);
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            let ph = &*info.dlpi_phdr.add(i);
            if ph.p_type == libc::PT_LOAD {
                lo = lo.min(base + ph.p_vaddr);
                hi = hi.max(base + ph.p_vaddr + ph.p_memsz);
            }
        }
        if lo <= f.here && f.here < hi {
            f.lo.store(lo, Ordering::Relaxed);
            f.hi.store(hi, Ordering::Relaxed);
            return 1;
        }
        0
    }
    let mut f = Find { here, lo, hi };
    // SAFETY: plain iteration over the loaded objects with a callback that only reads.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut f as *mut Find).cast()) };
}

/// `_URC_NO_REASON` and `_URC_NORMAL_STOP` of the unwinder's interface.
const URC_CONTINUE: c_int = 0;
const URC_STOP: c_int = 4;

/// Where the calling thread's post is made: the pc [`set_site`] gave, else the return
/// address of the first frame on its stack outside libpos and the C library (where the
/// program called into the interposed function), else the first outside libpos, else 0.
/// Uses the unwinder's tables (no frame pointers), so only when [`CALLER_PCS`] asks for it.
/// The pc a post made here reports: the set site ([`set_site`]), else the program's call
/// site.
pub fn caller_pc() -> u64 {
    let site = SITE.with(|s| s.get());
    if site != 0 {
        return site;
    }
    struct Walk {
        /// The first frame outside libpos, and the first outside libpos and the C library.
        first: u64,
        program: u64,
        frames: u32,
    }
    use crate::process::{_Unwind_Backtrace, _Unwind_GetIP, UnwindContext};
    extern "C" fn frame(ctx: *mut UnwindContext, arg: *mut libc::c_void) -> c_int {
        // SAFETY: arg is the Walk below; ctx is the unwinder's context for this frame.
        let (w, ip) = unsafe { (&mut *(arg as *mut Walk), _Unwind_GetIP(ctx) as u64) };
        w.frames += 1;
        let inside = |lo: &AtomicU64, hi: &AtomicU64| {
            (lo.load(Ordering::Relaxed)..hi.load(Ordering::Relaxed)).contains(&ip)
        };
        if ip != 0 && !inside(&OWN_START, &OWN_END) {
            if w.first == 0 {
                w.first = ip;
            }
            if !inside(&LIBC_START, &LIBC_END) {
                w.program = ip;
                return URC_STOP;
            }
        }
        if w.frames >= 64 {
            URC_STOP
        } else {
            URC_CONTINUE
        }
    }
    // The unwinder calls interposed functions (its `pthread_once`): they pass through.
    let _b = Busy::enter();
    let mut w = Walk {
        first: 0,
        program: 0,
        frames: 0,
    };
    // SAFETY: the callback only touches `w`, which outlives the walk.
    unsafe { _Unwind_Backtrace(frame, (&mut w as *mut Walk).cast()) };
    if w.program != 0 {
        w.program
    } else {
        w.first
    }
}

/// Where gdb stops under `poscheck debug`: a thread whose grant carried the debug stop mark
/// calls this before returning to the program; `step` is the scheduling step (0-based) the
/// grant was. It only records the step ([`DEBUG_STEP`], for `print` in gdb).
#[no_mangle]
#[inline(never)]
pub extern "C" fn pos_debug_stop(step: u64) {
    DEBUG_STEP.store(step, Ordering::SeqCst);
    // An instruction the optimiser must keep: without it the call is dropped as having no
    // effect, and gdb's breakpoint is never reached.
    // SAFETY: a no-op instruction.
    unsafe { std::arch::asm!("nop /* {0} */", in(reg) step, options(nomem, nostack)) };
}

/// The step of the last [`pos_debug_stop`].
pub static DEBUG_STEP: AtomicU64 = AtomicU64::new(u64::MAX);

impl Me {
    /// Post `op` and block until the coordinator grants it; returns the grant.
    #[inline]
    pub fn post(self, op: Op) -> Reply {
        crate::timer::back_in_control();
        loop {
            if crate::signal::queued() && !matches!(op, Op::FutexRequeued { .. } | Op::Start) {
                // A signal came while this thread was inside libpos: its handler runs now,
                // before this operation, as a signal just before the call.
                crate::signal::drain(false);
            }
            let reply = self.post_once(op);
            // A wait (or the thread's exit) that ended for a signal handler (`Op::Kill`).
            let interrupted =
                reply.result == code::EINTR && (may_block(&op) || matches!(op, Op::Exit));
            // A handler step is itself the acknowledgement of the kills so far (see
            // `signal::acknowledge`, which its poster calls next): looking for their
            // signals again here posted a second handler step for the same kill, which
            // waited for ever.
            if interrupted
                || !matches!(
                    op,
                    Op::FutexRequeue { .. } | Op::Exit | Op::ProcessExit { .. } | Op::Handler
                )
            {
                // Handlers of signals another thread sent this one run now (an exit
                // interrupted opens its mask for them: see `signal::exiting`).
                let exit = interrupted && matches!(op, Op::Exit);
                if exit {
                    crate::signal::exiting(false);
                }
                crate::signal::after_grant(self.tid, interrupted);
                if exit {
                    crate::signal::exiting(true);
                }
            }
            if interrupted && !crate::signal::returns_eintr(&op) {
                continue; // the handler ran: wait (or exit) again
            }
            return reply;
        }
    }

    /// [`Me::post`] without the signal handlers' part.
    #[inline]
    fn post_once(self, op: Op) -> Reply {
        let reply = if self.fd == LOCAL_FD {
            // Decisions in place ([`crate::baton`]): no frame, and no caller pcs (runs that
            // ask for them go over the socket).
            self.local(op, 0)
        } else if CALLER_PCS.load(Ordering::Relaxed) {
            let (frame, _) = Msg::Post(op).encode();
            let mut two = [0u8; 2 * MSG_LEN];
            two[..MSG_LEN].copy_from_slice(&Msg::encode_at(caller_pc()));
            two[MSG_LEN..].copy_from_slice(&frame);
            self.exchange(&two)
        } else {
            let (frame, _) = Msg::Post(op).encode();
            self.exchange(&frame)
        };
        if !matches!(op, Op::Create | Op::Fork) {
            crate::clock::heard(reply.value);
        }
        if crate::cancel::is_cancelled(reply.result) {
            // A cancellation point acted on a cancellation request: never returns.
            crate::cancel::act();
        }
        crate::cancel::deliver_requested(self.tid);
        reply
    }

    /// Post a memory access with the pc of the instrumented instruction (see
    /// [`Msg::encode_post_at`]) and block until it is granted.
    #[inline]
    pub fn post_at(self, op: Op, pc: u64) -> Reply {
        crate::timer::back_in_control();
        let reply = if self.fd == LOCAL_FD {
            self.local(op, pc) // the pc is for the runner's trace only
        } else {
            self.exchange(&Msg::encode_post_at(&op, pc))
        };
        crate::clock::heard(reply.value);
        crate::signal::after_grant(self.tid, false);
        reply
    }

    /// Send a post frame and read the coordinator's [`Reply`]. Meanwhile the thread is
    /// busy (a signal handler that calls an interposed function, e.g. `sem_post`, passes
    /// through instead of posting twice on this connection) and not cancellable (our
    /// `write`/`read` are cancellation points, and a cancellation unwinding through the
    /// interposers' `extern "C"` frames would abort the process).
    fn exchange(self, frame: &[u8]) -> Reply {
        let _b = Busy::enter();
        let mut cancel = 0;
        // SAFETY: plain state switch of the calling thread.
        unsafe { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut cancel) };
        let mut r = [0u8; REPLY_LEN];
        crate::tsan::flush_observed(self);
        if !write_all(self.fd, frame) {
            stop(false);
        }
        AWAITING.with(|a| a.set(self.fd));
        let replied = read_reply(self.fd, &mut r);
        AWAITING.with(|a| a.set(-1));
        if !replied {
            stop(false);
        }
        // SAFETY: restores the state saved above.
        unsafe { pthread_setcancelstate(cancel, &mut cancel) };
        let reply = Reply::decode(&r);
        if reply.result == Reply::ABORT {
            stop(true);
        }
        if let Some(step) = Reply::stop_step(&r) {
            pos_debug_stop(step);
        }
        reply
    }

    /// Post `op` into the in-process coordinator and wait on this thread's baton for the
    /// grant (busy and not cancellable meanwhile, as [`Me::exchange`]).
    fn local(self, op: Op, pc: u64) -> Reply {
        let _b = Busy::enter();
        let mut cancel = 0;
        // SAFETY: plain state switch of the calling thread.
        unsafe { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut cancel) };
        crate::tsan::flush_observed(self);
        let reply = crate::standalone::local_post(self.tid, op, pc);
        // SAFETY: restores the state saved above.
        unsafe { pthread_setcancelstate(cancel, &mut cancel) };
        reply
    }

    /// Send a notification that has no reply (`SemInit`, `BarrierInit`).
    pub fn notify(self, msg: &Msg) {
        if self.fd == LOCAL_FD {
            let _b = Busy::enter();
            crate::tsan::flush_observed(self);
            crate::standalone::local_notify(self.tid, msg);
            return;
        }
        let (frame, _) = msg.encode();
        crate::tsan::flush_observed(self);
        if !write_all(self.fd, &frame) {
            stop(false);
        }
    }
}

/// Connect the calling thread as `tid`: new connection, `Hello`, then it is controlled.
pub fn adopt(tid: Tid) {
    if LOCAL.load(Ordering::Relaxed) {
        // SAFETY: gettid has no preconditions.
        let ktid = u32::try_from(unsafe { libc::gettid() }).unwrap_or(0);
        {
            let _b = Busy::enter();
            crate::standalone::local_hello(tid, ktid);
        }
        FD.with(|f| f.set(LOCAL_FD));
        TID.with(|t| t.set(tid));
        return;
    }
    adopt_on(tid, fds::connect().unwrap_or_else(|e| die(&e)));
}

/// Make `fd`, an open connection to the coordinator (one of ours), the calling thread's:
/// `Hello` as `tid`, then it is controlled.
pub fn adopt_on(tid: Tid, fd: c_int) {
    let hello = hello(tid, fd);
    let (frame, _) = hello.encode();
    if !write_all(fd, &frame) {
        die("cannot greet the coordinator");
    }
    FD.with(|f| f.set(fd));
    TID.with(|t| t.set(tid));
}

/// The `Hello` of the calling thread as `tid` on connection `fd`, with its kernel thread id.
pub fn hello(tid: Tid, fd: c_int) -> Msg {
    // SAFETY: gettid has no preconditions.
    let ktid = unsafe { libc::gettid() };
    Msg::Hello {
        tid,
        pid: std::process::id(),
        ktid: u32::try_from(ktid).unwrap_or(0),
        fd,
    }
}

/// The calling thread leaves control (after its `Exit` was granted) and closes its connection.
pub fn release() {
    let fd = FD.with(|f| f.replace(-1));
    if fd >= 0 && fd != LOCAL_FD {
        fds::close_ours(fd);
    }
}

/// Report a failed assertion from a controlled thread (before the real `__assert_fail`).
pub fn report_assert(text: &str) {
    let Some(me) = me() else { return };
    let _b = Busy::enter();
    let msg = Msg::Assert {
        text: text.to_string(),
    };
    let buf = msg.encode_whole();
    ASSERTED.with(|a| a.set(true));
    if me.fd == LOCAL_FD {
        crate::standalone::local_report_assert(me.tid, text);
        return;
    }
    if write_all(me.fd, &buf) && ACK_REPORTS.load(Ordering::Relaxed) {
        let mut r = [0u8; REPLY_LEN];
        read_exact(me.fd, &mut r);
    }
}

/// Report a fatal signal from a controlled thread. Called from a signal handler: uses only
/// async-signal-safe calls (thread-local reads, `write`, `read`).
pub fn report_crash(signal: c_int, pc: u64) {
    if !ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let fd = FD.with(|f| f.get());
    if fd < 0 || (signal == libc::SIGABRT && ASSERTED.with(|a| a.get())) {
        return;
    }
    if fd == LOCAL_FD {
        crate::standalone::local_report_crash(TID.with(|t| t.get()), signal, pc);
        return;
    }
    let (frame, _) = Msg::Crash { signal, pc }.encode();
    if write_all(fd, &frame) && ACK_REPORTS.load(Ordering::Relaxed) {
        let mut r = [0u8; REPLY_LEN];
        read_exact(fd, &mut r);
    }
}
