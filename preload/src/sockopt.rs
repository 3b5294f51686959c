//! Socket receive timeouts (`SO_RCVTIMEO`) in virtual time.
//!
//! A blocking `read`/`recv`/`recvfrom`/`recvmsg` on a socket with a receive timeout waits in
//! the kernel, in real time, while the program's clock is virtual: a 15 ms timeout showed
//! 0 ms elapsed and a receive loop until a clock deadline never reached it (probe 18). As
//! `poll` does (`crate::poll`), when such a call times out (`EAGAIN` on a blocking socket)
//! the thread sleeps in virtual time to the timeout's deadline from the call's start.
//! `setsockopt` records each descriptor's timeout; `close` forgets it. A descriptor beyond
//! [`MAX_FD`] or duplicated with `dup` keeps the kernel's real-time timeout.

use crate::conn;
use crate::poll::kernel_wait_in_virtual_time;
use crate::real;
use libc::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// Descriptors below this have their receive timeout recorded.
pub const MAX_FD: usize = 1024;

/// `SO_RCVTIMEO_NEW` (the 64-bit-time form; the same `timeval` layout on 64-bit targets).
const SO_RCVTIMEO_NEW: c_int = 66;

/// By descriptor: its receive timeout in ns (0: none).
static RCVTIMEO: [AtomicU64; MAX_FD] = [const { AtomicU64::new(0) }; MAX_FD];

/// `setsockopt`: the real one; a receive timeout set on a socket is recorded.
///
/// # Safety
/// As `setsockopt(2)`.
#[no_mangle]
pub unsafe extern "C" fn setsockopt(
    fd: c_int,
    level: c_int,
    name: c_int,
    val: *const c_void,
    len: libc::socklen_t,
) -> c_int {
    let r = real::setsockopt(fd, level, name, val, len);
    let timeout = level == libc::SOL_SOCKET
        && (name == libc::SO_RCVTIMEO || name == SO_RCVTIMEO_NEW)
        && !val.is_null()
        && len as usize >= std::mem::size_of::<libc::timeval>();
    if r == 0 && timeout {
        let tv = &*(val as *const libc::timeval);
        let ns = (tv.tv_sec.max(0) as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(tv.tv_usec.max(0) as u64 * 1_000);
        if let Some(slot) = slot(fd) {
            slot.store(ns, Ordering::Relaxed);
        }
    }
    r
}

/// The timeout cell of descriptor `fd` (`None` beyond [`MAX_FD`]).
fn slot(fd: c_int) -> Option<&'static AtomicU64> {
    usize::try_from(fd).ok().and_then(|f| RCVTIMEO.get(f))
}

/// Descriptor `fd` is being closed: its timeout is forgotten.
pub(crate) fn closing(fd: c_int) {
    if let Some(slot) = slot(fd) {
        slot.store(0, Ordering::Relaxed);
    }
}

/// Every descriptor in `first..=last` is being closed (`close_range`, `closefrom`).
pub(crate) fn closing_range(first: u64, last: u64) {
    let last = last.min(i32::MAX as u64);
    for fd in first..=last {
        match slot(fd as c_int) {
            Some(slot) => slot.store(0, Ordering::Relaxed),
            None => break,
        }
    }
}

/// Run `call`, a receive on `fd` (with `MSG_DONTWAIT` when `dontwait`), in virtual time
/// when `fd` has a receive timeout and blocks (see the module doc).
pub(crate) fn receive(fd: c_int, dontwait: bool, call: impl FnOnce() -> isize) -> isize {
    let ns = slot(fd).map_or(0, |s| s.load(Ordering::Relaxed));
    // SAFETY: F_GETFL on any descriptor number is harmless (EBADF for a closed one).
    let blocking =
        ns > 0 && !dontwait && unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_NONBLOCK == 0;
    if !blocking {
        return call();
    }
    kernel_wait_in_virtual_time(Some(ns), call, |r| {
        r < 0 && conn::errno() == libc::EAGAIN // EWOULDBLOCK on Linux
    })
}

/// `recv`: see the module doc.
///
/// # Safety
/// As `recv(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn recv(fd: c_int, buf: *mut c_void, n: usize, flags: c_int) -> isize {
    receive(fd, flags & libc::MSG_DONTWAIT != 0, || {
        real::recv(fd, buf, n, flags)
    })
}

/// `recvfrom`: see the module doc.
///
/// # Safety
/// As `recvfrom(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    n: usize,
    flags: c_int,
    from: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
) -> isize {
    receive(fd, flags & libc::MSG_DONTWAIT != 0, || {
        real::recvfrom(fd, buf, n, flags, from, len)
    })
}

/// `recvmsg`: see the module doc.
///
/// # Safety
/// As `recvmsg(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> isize {
    receive(fd, flags & libc::MSG_DONTWAIT != 0, || {
        real::recvmsg(fd, msg, flags)
    })
}
