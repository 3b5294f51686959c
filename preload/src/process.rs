//! Process-level hooks: yields and sleeps, failed assertions, fatal signals and `fork`.

use crate::conn::{self, ACTIVE};
use crate::real;
use libc::{c_char, c_int, c_uint, c_void, clockid_t, timespec, useconds_t};
use pos_sched::Op;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// `POS_REAL_SLEEP=1` (the runner's `--real-sleep`): sleeps keep their delay after the grant.
pub static REAL_SLEEP: AtomicBool = AtomicBool::new(false);

/// `sched_yield`: `Op::Yield`.
///
/// # Safety
/// As `sched_yield(2)`.
#[no_mangle]
pub unsafe extern "C" fn sched_yield() -> c_int {
    match conn::me() {
        None => real::sched_yield(),
        Some(me) => me.post(Op::Yield).result,
    }
}

/// A sleep is a yield point (`Op::Sleep`); by default it then returns at once (time is not
/// what makes a schedule, the coordinator is), with `POS_REAL_SLEEP=1` it also sleeps.
/// Returns true when the caller should perform the real sleep.
fn sleep_point() -> bool {
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
    if sleep_point() {
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
    if sleep_point() {
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
    if sleep_point() {
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
    if sleep_point() {
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
    conn::report_crash(sig, pc_of(uc));
    // SAFETY: signal/raise are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
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

/// `fork` child: the coordinator does not know it; everything passes through there.
extern "C" fn in_fork_child() {
    ACTIVE.store(false, Ordering::SeqCst);
}

/// Register [`in_fork_child`].
pub fn install_fork_handler() {
    // SAFETY: registering a plain handler.
    unsafe { libc::pthread_atfork(None, None, Some(in_fork_child)) };
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
