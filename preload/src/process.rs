//! Process-level hooks: yields and sleeps, failed assertions, fatal signals and `fork`.

use crate::conn::{self, ACTIVE};
use crate::real;
use libc::{c_char, c_int, c_uint, c_void, clockid_t, timespec, useconds_t};
use pos_sched::Op;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// `POS_REAL_SLEEP=1` (the runner's `--real-sleep`): sleeps keep their delay after the grant.
pub static REAL_SLEEP: AtomicBool = AtomicBool::new(false);

/// `sched_yield`: `Op::Yield`. Not in the exit handlers of a program under LeakSanitizer:
/// its leak check there waits for its tracer (a task outside control) by yielding, and as
/// scheduling points those yields were thousands of steps in every run, and on a loaded
/// machine could reach the step limit.
///
/// # Safety
/// As `sched_yield(2)`.
#[no_mangle]
pub unsafe extern "C" fn sched_yield() -> c_int {
    if crate::alloc::lsan_present() && crate::thread::in_exit_handlers_here() {
        return real::sched_yield();
    }
    match conn::me() {
        None => real::sched_yield(),
        Some(me) => me.post(Op::Yield).result,
    }
}

/// A sleep of a controlled thread waits in virtual time ([`crate::clock`]) for `ns`; with
/// `POS_REAL_SLEEP=1` it is a yield point (`Op::Sleep`) that then sleeps for real.
/// Returns true when the caller should perform the real sleep.
fn sleep_point(ns: u64) -> bool {
    if crate::clock::sleep_for(ns) {
        return false;
    }
    match conn::me() {
        None => true,
        Some(me) => {
            me.post(Op::Sleep);
            REAL_SLEEP.load(Ordering::Relaxed)
        }
    }
}

/// `sleep`: see [`sleep_point`].
///
/// # Safety
/// As `sleep(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn sleep(s: c_uint) -> c_uint {
    if sleep_point(s as u64 * 1_000_000_000) {
        real::sleep(s)
    } else {
        0
    }
}

/// `usleep`: see [`sleep_point`].
///
/// # Safety
/// As `usleep(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn usleep(u: useconds_t) -> c_int {
    if sleep_point(u as u64 * 1_000) {
        real::usleep(u)
    } else {
        0
    }
}

/// `nanosleep`: see [`sleep_point`].
///
/// # Safety
/// As `nanosleep(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn nanosleep(req: *const timespec, rem: *mut timespec) -> c_int {
    if let Some(r) = crate::clock::clock_sleep(libc::CLOCK_MONOTONIC, 0, req) {
        if r != 0 {
            conn::set_errno(r);
            return -1;
        }
        if !rem.is_null() {
            *rem = timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
        }
        return 0;
    }
    if sleep_point(0) {
        real::nanosleep(req, rem)
    } else {
        0
    }
}

/// `clock_nanosleep`: see [`sleep_point`].
///
/// # Safety
/// As `clock_nanosleep(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn clock_nanosleep(
    c: clockid_t,
    flags: c_int,
    req: *const timespec,
    rem: *mut timespec,
) -> c_int {
    if let Some(r) = crate::clock::clock_sleep(c, flags, req) {
        return r;
    }
    if sleep_point(0) {
        real::clock_nanosleep(c, flags, req, rem)
    } else {
        0
    }
}

/// The text glibc prints for a failed assertion: `file:line: function: Assertion `expr' failed.`
pub fn assert_text(expr: &str, file: &str, line: u32, func: Option<&str>) -> String {
    match func {
        Some(f) => format!("{file}:{line}: {f}: Assertion `{expr}' failed."),
        None => format!("{file}:{line}: Assertion `{expr}' failed."),
    }
}

fn c_str<'a>(p: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    // SAFETY: glibc passes NUL-terminated strings (or NULL for the function).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy())
}

/// `__assert_fail`: report the assertion to the coordinator, then the real one (message,
/// abort).
///
/// # Safety
/// As glibc's `__assert_fail`.
#[no_mangle]
pub unsafe extern "C" fn __assert_fail(
    expr: *const c_char,
    file: *const c_char,
    line: c_uint,
    func: *const c_char,
) -> ! {
    if conn::me().is_some() {
        let text = assert_text(
            &c_str(expr).unwrap_or_default(),
            &c_str(file).unwrap_or_default(),
            line,
            c_str(func).as_deref(),
        );
        conn::report_assert(&text);
    }
    real::__assert_fail(expr, file, line, func)
}

/// Signals that end the process and are reported as crashes.
const FATAL: [c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
];

/// The interrupted program counter.
fn pc_of(uc: *mut c_void) -> u64 {
    if uc.is_null() {
        return 0;
    }
    let uc = uc as *const libc::ucontext_t;
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel passes a valid ucontext to SA_SIGINFO handlers.
        unsafe { (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as u64 }
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: as above.
        unsafe { (*uc).uc_mcontext.pc }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// Fatal-signal handler: report `Crash{signal, pc}` (async-signal-safe), then restore the
/// default action; the signal is re-raised and, being blocked in the handler, is delivered
/// with the default action as soon as we return (a fault would also simply recur).
extern "C" fn on_fatal(sig: c_int, _info: *mut libc::siginfo_t, uc: *mut c_void) {
    // The stack walk may call interposed functions (libgcc's unwinder initialises itself
    // with `pthread_once`): they must not post, the run may already be concluded.
    let site = {
        let _b = conn::Busy::enter();
        call_site(pc_of(uc))
    };
    conn::report_crash(sig, site);
    // SAFETY: signal/raise are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Clear glibc's `__libc_single_threaded` before control starts, in every mode alike. glibc
/// clears it at the first `pthread_create`, and libraries read it to skip work: libstdc++'s
/// `std::locale` runs its `pthread_once` only once the process has threads. So the program's
/// first steps depended on whether libpos had started a thread of its own before the
/// program's static initialisation: a run decided in the program (a hidden thread) recorded
/// a `once_begin` that a run decided over the socket (no thread), as `replay --trace` is,
/// never made, and every C++ program with iostreams diverged at step 1 there. Clearing is
/// always safe: it only makes code take its thread-safe path.
pub fn not_single_threaded() {
    // SAFETY: dlsym with a NUL-terminated name; the symbol, where glibc has it (2.32 and
    // later), is a `char` that the process may write.
    unsafe {
        let flag = libc::dlsym(libc::RTLD_DEFAULT, c"__libc_single_threaded".as_ptr());
        if !flag.is_null() {
            std::ptr::write_volatile(flag.cast::<libc::c_char>(), 0);
        }
    }
}

/// Opaque unwinder context (libgcc's `_Unwind_Context`).
#[repr(C)]
pub(crate) struct UnwindContext {
    _private: [u8; 0],
}

/// Walk this thread's stack once with the unwinder, before control starts, so that its
/// one-time initialisation (libgcc's `pthread_once` controls) is done in every process
/// alike. Otherwise its first use decided the events: a run's first panic or exception
/// unwinding made that `pthread_once` a step with its init, while under `--trace` or
/// `minimize` libpos's own walk for caller pcs (uncontrolled) had already completed it, so
/// the schedule of a panic did not replay there.
pub fn warm_up_unwinder() {
    extern "C" fn first(_: *mut UnwindContext, _: *mut c_void) -> c_int {
        4 // _URC_NORMAL_STOP: one frame is enough
    }
    // SAFETY: a walk with a callback that touches nothing.
    unsafe { _Unwind_Backtrace(first, std::ptr::null_mut()) };
}

extern "C" {
    pub(crate) fn _Unwind_Backtrace(
        f: extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int,
        arg: *mut c_void,
    ) -> c_int;
    pub(crate) fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}

/// Frames kept by [`call_site`]'s walk.
const MAX_FRAMES: usize = 48;

/// The stack walk's buffer.
struct Frames {
    ips: [usize; MAX_FRAMES],
    n: usize,
}

extern "C" fn collect_frame(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
    // SAFETY: arg is the `Frames` passed to `_Unwind_Backtrace` below; ctx is libgcc's.
    let f = unsafe { &mut *(arg as *mut Frames) };
    if f.n == MAX_FRAMES {
        return 5; // _URC_END_OF_STACK: stop
    }
    f.ips[f.n] = unsafe { _Unwind_GetIP(ctx) };
    f.n += 1;
    0 // _URC_NO_REASON: go on
}

/// The base address of the object holding `pc` (0 if none).
fn object_of(pc: usize) -> usize {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr with a valid out-pointer.
    if unsafe { libc::dladdr(pc as *const c_void, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}

/// Where to report a crash at `pc`: a fault inside libpos (an interposer given, say, a NULL
/// mutex), or inside libc called from libpos, is the program's fault at its call: walk the
/// stack out of libpos (and libc under it) to the first frame of other code, and report
/// that call site. Other faults keep their pc.
fn call_site(pc: u64) -> u64 {
    let ours = object_of(call_site as *const () as usize);
    let libc_base = object_of(libc::getpid as *const () as usize);
    let first = object_of(pc as usize);
    if ours == 0 || (first != ours && first != libc_base) {
        return pc;
    }
    let mut f = Frames {
        ips: [0; MAX_FRAMES],
        n: 0,
    };
    // SAFETY: the callback only writes into `f`, which outlives the call.
    unsafe { _Unwind_Backtrace(collect_frame, (&mut f as *mut Frames).cast()) };
    // Frames up to the faulting one are the handler's; the faulting frame's ip is `pc`.
    let Some(at) = f.ips[..f.n].iter().position(|&ip| ip as u64 == pc) else {
        return pc;
    };
    let mut through_libpos = first == ours;
    for &ip in &f.ips[at + 1..f.n] {
        // A return address: the call instruction ends just before it.
        let obj = object_of(ip.saturating_sub(1));
        if obj == ours {
            through_libpos = true;
        } else if obj != libc_base {
            return if through_libpos { (ip - 1) as u64 } else { pc };
        }
    }
    pc
}

/// Install the fatal-signal handlers (a program that installs its own replaces them).
pub fn install_crash_handlers() {
    for sig in FATAL {
        // SAFETY: a zeroed sigaction with our handler and an empty mask is valid.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fatal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// `fork` child of a fork the coordinator does not control (standalone mode, a thread
/// outside control): everything passes through there.
extern "C" fn in_fork_child() {
    // The parent's run journal is not this process's to write.
    crate::journal::forget();
    // Timers are not inherited (their threads did not follow).
    crate::timer::forget_all();
    if crate::fork::in_child_handler() {
        return; // a controlled fork: the child is connected as its own thread
    }
    if ACTIVE.swap(false, Ordering::SeqCst) {
        FORKED.store(true, Ordering::SeqCst);
    }
}

/// Standalone mode: libpos stays in `LD_PRELOAD`, so an exec'd image is controlled too
/// (nothing to say at exec).
pub static EXEC_CONTROLLED: AtomicBool = AtomicBool::new(false);

/// This process is a forked child of a controlled one (its threads run uncontrolled).
static FORKED: AtomicBool = AtomicBool::new(false);
/// The forked child's uncontrolled threads have been reported.
static SAID_FORK: AtomicBool = AtomicBool::new(false);

/// The prefix of libpos's notes about what runs uncontrolled (the runner collects these
/// lines from the program's stderr and says each once per program).
pub const UNCONTROLLED: &str = "poscheck: uncontrolled: ";

/// Write one uncontrolled-note line on stderr (one `write`, no allocation).
pub(crate) fn say_uncontrolled(what: &str) {
    let mut line = [0u8; 256];
    let mut n = 0;
    for part in [UNCONTROLLED.as_bytes(), what.as_bytes(), b"\n"] {
        let take = part.len().min(line.len() - n);
        line[n..n + take].copy_from_slice(&part[..take]);
        n += take;
    }
    let _ = conn::write_all_file(2, &line[..n]);
}

/// A thread is being created outside control: if this is a forked child of a controlled
/// process, say once that its threads run uncontrolled.
pub fn note_uncontrolled_thread() {
    if FORKED.load(Ordering::Relaxed) && !SAID_FORK.swap(true, Ordering::SeqCst) {
        say_uncontrolled(
            "threads created in a forked child process run uncontrolled (not scheduled; \
             their races are not found)",
        );
    }
}

/// `exec*` of a controlled process (or of its forked child): say that the new image runs
/// uncontrolled (libpos removes itself from LD_PRELOAD so the image does not start a
/// coordinator of its own).
fn note_exec() {
    if EXEC_CONTROLLED.load(Ordering::Relaxed) {
        return;
    }
    if ACTIVE.load(Ordering::Relaxed) || FORKED.load(Ordering::Relaxed) {
        say_uncontrolled("the program execs another image, which runs uncontrolled");
    }
    crate::fork::leave_for_exec();
}

type Argv = *const *const c_char;

/// `execve`: said once (see [`note_exec`]), then the real call.
///
/// # Safety
/// As `execve(2)`.
#[no_mangle]
pub unsafe extern "C" fn execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::execve(path, argv, crate::trap::env_for_exec(envp))
}

/// `execv`: see [`execve`].
///
/// # Safety
/// As `execv(3)`.
#[no_mangle]
pub unsafe extern "C" fn execv(path: *const c_char, argv: Argv) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::execv(path, argv)
}

/// `execvp`: see [`execve`].
///
/// # Safety
/// As `execvp(3)`.
#[no_mangle]
pub unsafe extern "C" fn execvp(file: *const c_char, argv: Argv) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::execvp(file, argv)
}

/// `execvpe`: see [`execve`].
///
/// # Safety
/// As `execvpe(3)`.
#[no_mangle]
pub unsafe extern "C" fn execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::execvpe(file, argv, crate::trap::env_for_exec(envp))
}

/// `posix_spawn`: the spawned image runs uncontrolled (said once, as for `exec`) and gets an
/// environment that keeps the inherited seccomp filter harmless ([`crate::trap::env_for_exec`]).
///
/// # Safety
/// As `posix_spawn(3)`.
#[no_mangle]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut libc::pid_t,
    path: *const c_char,
    fa: *const libc::posix_spawn_file_actions_t,
    attr: *const libc::posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::posix_spawn(pid, path, fa, attr, argv, crate::trap::env_for_exec(envp))
}

/// `posix_spawnp`: see [`posix_spawn`].
///
/// # Safety
/// As `posix_spawnp(3)`.
#[no_mangle]
pub unsafe extern "C" fn posix_spawnp(
    pid: *mut libc::pid_t,
    file: *const c_char,
    fa: *const libc::posix_spawn_file_actions_t,
    attr: *const libc::posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    note_exec();
    let _mask = crate::affinity::Unpinned::new();
    real::posix_spawnp(pid, file, fa, attr, argv, crate::trap::env_for_exec(envp))
}

/// `system`: the shell starts with the mask the process started with
/// ([`crate::affinity`]); glibc starts it without going through [`posix_spawn`].
///
/// # Safety
/// As `system(3)`.
#[no_mangle]
pub unsafe extern "C" fn system(cmd: *const c_char) -> c_int {
    let _mask = crate::affinity::Unpinned::new();
    real::system(cmd)
}

/// `popen`: see [`system`].
///
/// # Safety
/// As `popen(3)`.
#[no_mangle]
pub unsafe extern "C" fn popen(cmd: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    let _mask = crate::affinity::Unpinned::new();
    real::popen(cmd, mode)
}

/// Register libpos's fork handlers ([`crate::fork::prepare_handler`], [`in_fork_child`]),
/// before the program registers any: prepare handlers run in reverse order of registration
/// (ours last), child handlers in order (ours first).
pub fn install_fork_handler() {
    // SAFETY: registering a plain handler.
    unsafe {
        libc::pthread_atfork(
            Some(crate::fork::prepare_handler),
            None,
            Some(in_fork_child),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assert_text_matches_glibc() {
        assert_eq!(
            assert_text("x == 1", "a.c", 7, Some("main")),
            "a.c:7: main: Assertion `x == 1' failed."
        );
        assert_eq!(
            assert_text("p", "b.c", 1, None),
            "b.c:1: Assertion `p' failed."
        );
    }
}
