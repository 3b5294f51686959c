//! `poll`, `ppoll`, `select`, `pselect`, `epoll_wait` and `epoll_pwait` with a timeout, in
//! virtual time.
//!
//! These calls wait in the kernel, outside control. Their timeouts counted real time while
//! the program's clock reads are virtual, so an event loop (GLib's main loop, libuv,
//! libevent) that polls "until the next timer is due" and then reads the clock saw no time
//! pass: it polled again forever (a false hang), and a thread that used `select` with no
//! descriptor as a sleep was never set aside like a sleeper (a starved thread under pct).
//!
//! - With no descriptor to watch (`poll(NULL, 0, ms)`, `select(0, NULL, NULL, NULL, &tv)`),
//!   the call is a sleep: a sleep in virtual time, as `nanosleep` (no kernel wait).
//! - Otherwise the kernel waits as before (whoever makes a descriptor ready, another process
//!   included, is seen), and when it timed out, the calling thread sleeps in virtual time
//!   until the timeout's deadline from the call's start: the clock it reads afterwards has
//!   moved by the timeout, as the program expects.
//!
//! A wait without a timeout, a zero timeout, an uncontrolled thread and `--real-sleep` pass
//! through untouched.

use crate::clock;
use crate::real;
use libc::{c_int, timespec};

const MS: u64 = 1_000_000;

/// Run `call`, a kernel wait with a timeout of `ns` (`None`: no timeout, or zero), in virtual
/// time (see the module doc): a sleep when it watches nothing (`idle`; returns 0), else the
/// call and, when it timed out (returned 0), a sleep to its deadline. Uncontrolled threads
/// and `--real-sleep` just make the call.
fn in_virtual_time(ns: Option<u64>, idle: bool, call: impl FnOnce() -> c_int) -> c_int {
    if idle && ns.is_some_and(|_| clock::virtual_now().is_some()) {
        // No kernel wait: nothing to announce.
        return wait_then_sleep(ns, false, || 0, |_| true);
    }
    kernel_wait_in_virtual_time(ns, call, |r| r == 0)
}

/// Run `call`, a kernel wait with the relative timeout `ns` (`None`: none, or zero), and
/// when `timed_out` says its result is a timeout, sleep in virtual time to the timeout's
/// deadline from the call's start, `errno` kept (`sigtimedwait`, `semtimedop`: `EAGAIN`).
/// The kernel's wait counts real time while the program's clock is virtual: without the
/// sleep a 15 ms timeout showed 0 ms elapsed, and a loop waiting until a clock deadline
/// never reached it (probe 18). Uncontrolled threads and `--real-sleep` just make the call.
pub(crate) fn kernel_wait_in_virtual_time<R: Copy>(
    ns: Option<u64>,
    call: impl FnOnce() -> R,
    timed_out: impl FnOnce(R) -> bool,
) -> R {
    wait_then_sleep(ns, true, call, timed_out)
}

/// [`kernel_wait_in_virtual_time`]; `in_kernel`: `call` waits in the kernel, so the thread
/// first announces the wait's timeout (`Msg::KernelWait`): it ends by itself within `ns` of
/// real time, which is no hang even when nothing else can run (a 5 s receive timeout the
/// program relies on).
fn wait_then_sleep<R: Copy>(
    ns: Option<u64>,
    in_kernel: bool,
    call: impl FnOnce() -> R,
    timed_out: impl FnOnce(R) -> bool,
) -> R {
    let (Some(ns), Some(t0)) = (ns, ns.and_then(|_| clock::virtual_now())) else {
        return call();
    };
    if let Some(me) = crate::conn::me().filter(|_| in_kernel) {
        me.notify(&pos_sched::protocol::Msg::KernelWait { ns });
    }
    let r = call();
    if timed_out(r) {
        let e = crate::conn::errno();
        clock::sleep_until_virtual(t0.saturating_add(ns));
        crate::conn::set_errno(e);
    }
    r
}

/// A timeout given as a timespec, in ns (`None`: none, zero or invalid).
///
/// # Safety
/// `t` is NULL or points to a timespec.
pub(crate) unsafe fn ns_of(t: *const timespec) -> Option<u64> {
    if t.is_null() {
        None
    } else {
        clock::to_ns(&*t).filter(|&ns| ns > 0)
    }
}

/// A timeout in milliseconds, in ns (`None`: none or zero).
fn ns_of_ms(ms: c_int) -> Option<u64> {
    (ms > 0).then(|| ms as u64 * MS)
}

/// Whether `poll` watches no descriptor (a sleep).
///
/// # Safety
/// `fds` points to `n` pollfds, or `n` is 0.
unsafe fn no_fds(fds: *const libc::pollfd, n: libc::nfds_t) -> bool {
    n == 0 || fds.is_null() || (0..n as usize).all(|i| (*fds.add(i)).fd < 0)
}

/// Whether `select` watches no descriptor (a sleep).
///
/// # Safety
/// The sets are NULL or point to `fd_set`s.
unsafe fn no_sets(
    nfds: c_int,
    r: *const libc::fd_set,
    w: *const libc::fd_set,
    e: *const libc::fd_set,
) -> bool {
    let empty = |s: *const libc::fd_set| s.is_null() || (0..nfds).all(|fd| !libc::FD_ISSET(fd, s));
    nfds <= 0 || (empty(r) && empty(w) && empty(e))
}

/// `poll`: see the module doc.
///
/// # Safety
/// As `poll(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn poll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: c_int,
) -> c_int {
    in_virtual_time(ns_of_ms(timeout), no_fds(fds, n), || {
        real::poll(fds, n, timeout)
    })
}

/// `ppoll`: see the module doc.
///
/// # Safety
/// As `ppoll(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn ppoll(
    fds: *mut libc::pollfd,
    n: libc::nfds_t,
    timeout: *const timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    in_virtual_time(ns_of(timeout), no_fds(fds, n) && mask.is_null(), || {
        real::ppoll(fds, n, timeout, mask)
    })
}

/// `select`: see the module doc. The timeout is left at zero after a timeout, as Linux does.
///
/// # Safety
/// As `select(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn select(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    tv: *mut libc::timeval,
) -> c_int {
    let ns = if tv.is_null() || (*tv).tv_sec < 0 || !(0..1_000_000).contains(&(*tv).tv_usec) {
        None
    } else {
        Some((*tv).tv_sec as u64 * 1_000_000_000 + (*tv).tv_usec as u64 * 1_000)
            .filter(|&ns| ns > 0)
    };
    let idle = no_sets(nfds, r, w, e);
    let n = in_virtual_time(ns, idle, || real::select(nfds, r, w, e, tv));
    if idle && n == 0 && !tv.is_null() {
        (*tv).tv_sec = 0;
        (*tv).tv_usec = 0;
    }
    n
}

/// `pselect`: see the module doc.
///
/// # Safety
/// As `pselect(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pselect(
    nfds: c_int,
    r: *mut libc::fd_set,
    w: *mut libc::fd_set,
    e: *mut libc::fd_set,
    timeout: *const timespec,
    mask: *const libc::sigset_t,
) -> c_int {
    in_virtual_time(
        ns_of(timeout),
        no_sets(nfds, r, w, e) && mask.is_null(),
        || real::pselect(nfds, r, w, e, timeout, mask),
    )
}

/// `epoll_wait`: see the module doc.
///
/// # Safety
/// As `epoll_wait(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn epoll_wait(
    epfd: c_int,
    events: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
) -> c_int {
    in_virtual_time(ns_of_ms(timeout), false, || {
        real::epoll_wait(epfd, events, max, timeout)
    })
}

/// `epoll_pwait`: see the module doc.
///
/// # Safety
/// As `epoll_pwait(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn epoll_pwait(
    epfd: c_int,
    events: *mut libc::epoll_event,
    max: c_int,
    timeout: c_int,
    mask: *const libc::sigset_t,
) -> c_int {
    in_virtual_time(ns_of_ms(timeout), false, || {
        real::epoll_pwait(epfd, events, max, timeout, mask)
    })
}
