//! System V semaphores (`semtimedop`) and POSIX message queues (`mq_timedreceive`,
//! `mq_timedsend`) with timeouts, in virtual time.
//!
//! These wait in the kernel, outside control, with timeouts in real time while the
//! program's clock is virtual: a 15 ms `semtimedop` showed 0 ms elapsed, and a message
//! queue's absolute deadline, computed from the virtual clock, was up to a second in the
//! past or the future of the real one (probe 18). As `poll` does (`crate::poll`), the kernel
//! waits for what it has left of the timeout, and when it timed out the thread sleeps in
//! virtual time to the deadline, so the clock it reads afterwards has moved by the timeout.
//! An uncontrolled thread and `--real-sleep` pass through untouched.

use crate::clock;
use crate::conn;
use crate::poll::{kernel_wait_in_virtual_time, ns_of};
use crate::real;
use libc::{c_char, c_int, c_uint, timespec};

/// `semtimedop`: the kernel's wait, then, on `EAGAIN` (its timeout), a sleep to the deadline
/// in virtual time.
///
/// # Safety
/// As `semtimedop(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn semtimedop(
    id: c_int,
    sops: *mut libc::sembuf,
    n: libc::size_t,
    timeout: *const timespec,
) -> c_int {
    kernel_wait_in_virtual_time(
        ns_of(timeout),
        || real::semtimedop(id, sops, n, timeout),
        |r| r < 0 && conn::errno() == libc::EAGAIN,
    )
}

/// Run `call` with the real-time equivalent of `abs`, an absolute `CLOCK_REALTIME` deadline
/// the program computed from the virtual clock: the kernel waits for the virtual time left,
/// and on `ETIMEDOUT` the thread sleeps to the deadline in virtual time
/// ([`kernel_wait_in_virtual_time`]).
///
/// # Safety
/// `abs` is NULL or points to a `timespec`.
unsafe fn at_virtual_deadline<R: Copy>(
    abs: *const timespec,
    call: impl FnOnce(*const timespec) -> R,
    failed: impl FnOnce(R) -> bool,
) -> R {
    let Some(now) = clock::virtual_now() else {
        return call(abs);
    };
    let Ok(until) = clock::deadline(libc::CLOCK_REALTIME, abs) else {
        return call(abs); // NULL or malformed: the kernel says so
    };
    let left = until.saturating_sub(now);
    let mut real_now = clock::to_timespec(0);
    real::clock_gettime(libc::CLOCK_REALTIME, &mut real_now);
    let real_abs = clock::to_timespec(clock::to_ns(&real_now).unwrap_or(0).saturating_add(left));
    kernel_wait_in_virtual_time(
        Some(left),
        || call(&real_abs),
        |r| failed(r) && conn::errno() == libc::ETIMEDOUT,
    )
}

/// `mq_timedreceive`: see the module doc.
///
/// # Safety
/// As `mq_timedreceive(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn mq_timedreceive(
    q: libc::mqd_t,
    msg: *mut c_char,
    len: libc::size_t,
    prio: *mut c_uint,
    abs: *const timespec,
) -> libc::ssize_t {
    at_virtual_deadline(
        abs,
        |t| real::mq_timedreceive(q, msg, len, prio, t),
        |r| r < 0,
    )
}

/// `mq_timedsend`: see the module doc.
///
/// # Safety
/// As `mq_timedsend(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn mq_timedsend(
    q: libc::mqd_t,
    msg: *const c_char,
    len: libc::size_t,
    prio: c_uint,
    abs: *const timespec,
) -> c_int {
    at_virtual_deadline(abs, |t| real::mq_timedsend(q, msg, len, prio, t), |r| r < 0)
}
