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

/// A controlled thread's virtual time, when the call is to be kept in virtual time.
fn start() -> Option<u64> {
    clock::virtual_now()
}

/// After a kernel wait that timed out: sleep to `start + ns` in virtual time.
fn timed_out(start: u64, ns: u64) {
    clock::sleep_until_virtual(start.saturating_add(ns));
}

const MS: u64 = 1_000_000;

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
    let Some(t0) = (timeout > 0).then(start).flatten() else {
        return real::poll(fds, n, timeout);
    };
    let ns = timeout as u64 * MS;
    if no_fds(fds, n) {
        timed_out(t0, ns);
        return 0;
    }
    let r = real::poll(fds, n, timeout);
    if r == 0 {
        timed_out(t0, ns);
    }
    r
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
    let ns = if timeout.is_null() {
        None
    } else {
        clock::to_ns(&*timeout).filter(|&ns| ns > 0)
    };
    let (Some(ns), Some(t0)) = (ns, ns.and_then(|_| start())) else {
        return real::ppoll(fds, n, timeout, mask);
    };
    if no_fds(fds, n) && mask.is_null() {
        timed_out(t0, ns);
        return 0;
    }
    let r = real::ppoll(fds, n, timeout, mask);
    if r == 0 {
        timed_out(t0, ns);
    }
    r
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
    let (Some(ns), Some(t0)) = (ns, ns.and_then(|_| start())) else {
        return real::select(nfds, r, w, e, tv);
    };
    if no_sets(nfds, r, w, e) {
        timed_out(t0, ns);
        (*tv).tv_sec = 0;
        (*tv).tv_usec = 0;
        return 0;
    }
    let n = real::select(nfds, r, w, e, tv);
    if n == 0 {
        timed_out(t0, ns);
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
    let ns = if timeout.is_null() {
        None
    } else {
        clock::to_ns(&*timeout).filter(|&ns| ns > 0)
    };
    let (Some(ns), Some(t0)) = (ns, ns.and_then(|_| start())) else {
        return real::pselect(nfds, r, w, e, timeout, mask);
    };
    if no_sets(nfds, r, w, e) && mask.is_null() {
        timed_out(t0, ns);
        return 0;
    }
    let n = real::pselect(nfds, r, w, e, timeout, mask);
    if n == 0 {
        timed_out(t0, ns);
    }
    n
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
    let Some(t0) = (timeout > 0).then(start).flatten() else {
        return real::epoll_wait(epfd, events, max, timeout);
    };
    let r = real::epoll_wait(epfd, events, max, timeout);
    if r == 0 {
        timed_out(t0, timeout as u64 * MS);
    }
    r
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
    let Some(t0) = (timeout > 0).then(start).flatten() else {
        return real::epoll_pwait(epfd, events, max, timeout, mask);
    };
    let r = real::epoll_pwait(epfd, events, max, timeout, mask);
    if r == 0 {
        timed_out(t0, timeout as u64 * MS);
    }
    r
}
