//! `timerfd` timers in virtual time.
//!
//! A kernel `timerfd` counts real time while a controlled program's clock reads and sleeps
//! are virtual ([`crate::clock`]): a loop that reads a 10 ms periodic timerfd three times
//! and then checks that 30 ms went by found far less (a false assertion failure in every
//! run), and an event loop that arms a timerfd for "the next timer" and reads the virtual
//! clock when it fires re-armed it again and again.
//!
//! Here `timerfd_create` by a controlled thread, on a clock libpos virtualises, returns an
//! `eventfd` instead, backed by a virtual timer of [`crate::timer`] whose timer thread
//! sleeps until each expiry in virtual time and then adds one to the descriptor's counter.
//! An `eventfd` reads as a `timerfd` does (an 8-byte count of expirations, reset by the
//! read; blocking while zero unless `O_NONBLOCK`) and is readable to `poll`, `select` and
//! `epoll` exactly when the count is not zero, so event loops see it as before.
//! - `timerfd_settime` (relative or `TFD_TIMER_ABSTIME`) and `timerfd_gettime` work in
//!   virtual time; setting the timer resets the count, as the kernel does.
//! - A controlled thread's blocking `read` of the descriptor while the count is zero waits
//!   in the model (a futex wait on a word of libpos) until the timer thread's expiry wakes
//!   it, so the run stays controlled and deterministic; a read of a disarmed timer with a
//!   zero count blocks in the kernel, as it would natively (forever).
//! - `close` (also through `dup2`, `dup3`, `close_range`) disarms and frees the timer.
//!
//! Limits: a duplicate of the descriptor (`dup`, `fcntl(F_DUPFD)`) reads the count but is
//! not known to `timerfd_settime`/`timerfd_gettime` (they fail with `EINVAL` on it, as on
//! any non-timerfd), and closing the original stops its expiries. Uncontrolled threads,
//! `--real-sleep`, other clocks (`CLOCK_*_ALARM`) and `TFD_TIMER_CANCEL_ON_SET`'s
//! cancellation (the virtual clock is never set) stay the kernel's.

use crate::clock;
use crate::fds;
use crate::real;
use crate::timer;
use libc::{c_int, c_void, clockid_t, itimerspec};
use pos_sched::{Op, NO_DEADLINE};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Descriptors below this can be virtual timerfds (a bitmap bit each).
const MAX_FD: usize = 4096;

/// Which descriptors are virtual timerfds.
static VIRTUAL: [AtomicU64; MAX_FD / 64] = [const { AtomicU64::new(0) }; MAX_FD / 64];

/// Per timer slot: the program's descriptor (-1: none) and libpos's own duplicate of it,
/// which the timer thread writes to (so a reused descriptor number never gets a count).
static FD: [AtomicI32; timer::SLOTS] = [const { AtomicI32::new(-1) }; timer::SLOTS];
static OWN: [AtomicI32; timer::SLOTS] = [const { AtomicI32::new(-1) }; timer::SLOTS];

/// Per timer slot: the word controlled readers wait on in the model.
static READERS: [AtomicU32; timer::SLOTS] = [const { AtomicU32::new(0) }; timer::SLOTS];

fn bit(fd: c_int) -> Option<(usize, u64)> {
    let i = usize::try_from(fd).ok().filter(|&i| i < MAX_FD)?;
    Some((i / 64, 1u64 << (i % 64)))
}

/// Whether `fd` is a virtual timerfd (one relaxed load for any other descriptor).
#[inline]
fn is_virtual(fd: c_int) -> bool {
    bit(fd).is_some_and(|(w, b)| VIRTUAL[w].load(Ordering::Relaxed) & b != 0)
}

fn mark(fd: c_int, on: bool) {
    if let Some((w, b)) = bit(fd) {
        if on {
            VIRTUAL[w].fetch_or(b, Ordering::SeqCst);
        } else {
            VIRTUAL[w].fetch_and(!b, Ordering::SeqCst);
        }
    }
}

/// The timer slot of virtual timerfd `fd`.
fn slot_of(fd: c_int) -> Option<usize> {
    if !is_virtual(fd) {
        return None;
    }
    (0..timer::SLOTS).find(|&s| FD[s].load(Ordering::SeqCst) == fd)
}

/// Timer `slot` expired (its timer thread, a step of the run): count it on the descriptor
/// and wake the readers waiting in the model.
pub(crate) fn expired(slot: usize) {
    let own = OWN[slot].load(Ordering::SeqCst);
    if own < 0 {
        return;
    }
    let one: u64 = 1;
    // SAFETY: an 8-byte write to libpos's own duplicate of the eventfd.
    unsafe { libc::write(own, (&one as *const u64).cast(), 8) };
    if let Some(me) = crate::conn::me() {
        me.post(Op::FutexWake {
            addr: READERS[slot].as_ptr() as u64,
            n: u32::MAX,
            bitset: u32::MAX,
        });
    }
}

/// Take the count of `own` without blocking (setting a timerfd resets it).
fn reset_count(own: c_int) {
    // SAFETY: fcntl and an 8-byte read on libpos's own descriptor. No other controlled
    // thread runs meanwhile (no scheduling point here), so the moment of O_NONBLOCK on the
    // shared file description is not seen by one.
    unsafe {
        let flags = libc::fcntl(own, libc::F_GETFL);
        if flags < 0 {
            return;
        }
        libc::fcntl(own, libc::F_SETFL, flags | libc::O_NONBLOCK);
        let mut n: u64 = 0;
        real::read(own, (&mut n as *mut u64).cast(), 8);
        libc::fcntl(own, libc::F_SETFL, flags);
    }
}

/// Whether eventfd `own` has a count to read now.
fn readable(own: c_int) -> bool {
    let mut p = libc::pollfd {
        fd: own,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no timeout.
    unsafe { real::poll(&mut p, 1, 0) == 1 && p.revents & libc::POLLIN != 0 }
}

/// `timerfd_create`: a virtual timer behind an eventfd for a controlled thread on a
/// real-time or monotonic clock (see the module doc); others are the kernel's.
///
/// # Safety
/// As `timerfd_create(2)`.
#[no_mangle]
pub unsafe extern "C" fn timerfd_create(clk: clockid_t, flags: c_int) -> c_int {
    let known = libc::TFD_CLOEXEC | libc::TFD_NONBLOCK;
    if flags & !known != 0 || clock::virtual_now().is_none() || clock::virtual_of(clk, 0).is_none()
    {
        return real::timerfd_create(clk, flags);
    }
    // TFD_CLOEXEC and TFD_NONBLOCK are EFD_CLOEXEC and EFD_NONBLOCK (O_CLOEXEC, O_NONBLOCK).
    let fd = libc::eventfd(0, flags);
    if fd < 0 {
        return -1;
    }
    if bit(fd).is_none() {
        real::close(fd);
        return real::timerfd_create(clk, flags);
    }
    let Some(slot) = timer::claim(clk) else {
        real::close(fd);
        return real::timerfd_create(clk, flags);
    };
    let own = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
    if own < 0 {
        timer::release(slot);
        real::close(fd);
        return real::timerfd_create(clk, flags);
    }
    OWN[slot].store(fds::adopt_fd(own), Ordering::SeqCst);
    FD[slot].store(fd, Ordering::SeqCst);
    timer::notify_fd(slot);
    mark(fd, true);
    fd
}

/// `timerfd_settime` of a virtual timerfd in virtual time (others passed on).
///
/// # Safety
/// As `timerfd_settime(2)`.
#[no_mangle]
pub unsafe extern "C" fn timerfd_settime(
    fd: c_int,
    flags: c_int,
    new: *const itimerspec,
    old: *mut itimerspec,
) -> c_int {
    let (Some(slot), Some(now)) = (slot_of(fd), clock::virtual_now()) else {
        return real::timerfd_settime(fd, flags, new, old);
    };
    if flags & !(libc::TFD_TIMER_ABSTIME | libc::TFD_TIMER_CANCEL_ON_SET) != 0 {
        crate::conn::set_errno(libc::EINVAL);
        return -1;
    }
    // Setting the timer resets its count, as the kernel does (not when the call fails).
    if !new.is_null() && clock::to_ns(&(*new).it_value).is_some() {
        reset_count(OWN[slot].load(Ordering::SeqCst));
    }
    timer::settime(slot, now, flags & libc::TFD_TIMER_ABSTIME != 0, new, old)
}

/// `timerfd_gettime` of a virtual timerfd (others passed on).
///
/// # Safety
/// As `timerfd_gettime(2)`.
#[no_mangle]
pub unsafe extern "C" fn timerfd_gettime(fd: c_int, cur: *mut itimerspec) -> c_int {
    let (Some(slot), Some(now)) = (slot_of(fd), clock::virtual_now()) else {
        return real::timerfd_gettime(fd, cur);
    };
    timer::gettime(slot, now, cur)
}

/// A controlled thread's blocking read of virtual timerfd `fd` with a zero count: wait in
/// the model until an expiry (see the module doc). Returns once the read can be made.
fn await_expiry(fd: c_int) {
    let Some(me) = crate::conn::me() else {
        return;
    };
    // SAFETY: fcntl on the program's descriptor.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_NONBLOCK != 0 {
        return;
    }
    while let Some(slot) = slot_of(fd) {
        if readable(OWN[slot].load(Ordering::SeqCst)) || !timer::armed(slot) {
            return;
        }
        me.post(Op::FutexWait {
            addr: READERS[slot].as_ptr() as u64,
            bitset: u32::MAX,
            deadline: NO_DEADLINE,
        });
    }
}

/// `read`: a virtual timerfd's blocking read waits for its expiry in the model first;
/// every read is then the kernel's (a socket's receive timeout in virtual time, see
/// [`crate::sockopt`]).
///
/// # Safety
/// As `read(2)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize {
    if is_virtual(fd) && n >= 8 {
        await_expiry(fd);
    }
    crate::sockopt::receive(fd, false, || real::read(fd, buf, n))
}

/// `__read_chk` (`_FORTIFY_SOURCE`'s `read`): as [`read`].
///
/// # Safety
/// As `__read_chk`.
#[no_mangle]
pub unsafe extern "C-unwind" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    n: usize,
    size: usize,
) -> isize {
    if is_virtual(fd) && n >= 8 && n <= size {
        await_expiry(fd);
    }
    crate::sockopt::receive(fd, false, || real::__read_chk(fd, buf, n, size))
}

/// Descriptor `fd` is being closed (or replaced by `dup2`/`dup3`): a virtual timerfd's timer
/// is disarmed and freed.
pub(crate) fn closing(fd: c_int) {
    let Some(slot) = slot_of(fd) else {
        return;
    };
    mark(fd, false);
    FD[slot].store(-1, Ordering::SeqCst);
    timer::release(slot);
    let own = OWN[slot].swap(-1, Ordering::SeqCst);
    if own >= 0 {
        fds::close_ours(own);
    }
}

/// Every virtual timerfd in `first..=last` is being closed.
pub(crate) fn closing_range(first: u64, last: u64) {
    for fd in &FD {
        let fd = fd.load(Ordering::SeqCst);
        if fd >= 0 && (first..=last).contains(&(fd as u64)) {
            closing(fd);
        }
    }
}

/// A forked child has no timers ([`timer::forget_all`]): its timerfds become plain
/// eventfds that never count (libpos's duplicates are closed with its other descriptors).
pub(crate) fn forget_all() {
    for w in &VIRTUAL {
        w.store(0, Ordering::SeqCst);
    }
    for fd in FD.iter().chain(OWN.iter()) {
        fd.store(-1, Ordering::SeqCst);
    }
}
