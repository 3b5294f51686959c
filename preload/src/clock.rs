//! Virtual time for controlled threads: clock reads, sleeps and the deadlines of timed waits.
//!
//! The coordinator keeps the run's virtual clock (`pos_sched::state::clock`) and sends its
//! value with every grant ([`pos_sched::protocol::Reply::value`]); [`heard`] keeps the
//! latest one per thread. A controlled thread that reads `CLOCK_REALTIME` or
//! `CLOCK_MONOTONIC` (or `time`, `gettimeofday`) sees that clock's real value at the run's
//! start, rounded down to a whole second (so that second-granular deadlines replay too), plus
//! the virtual time. Rules:
//! - Each read advances the thread's view by [`READ_STEP`], and the view never goes back,
//!   so a busy-wait on the clock (`while (now() - t0 < 2 ms) {}`) ends after a fixed number
//!   of reads: deterministically, without scheduling points.
//! - No read is below one any thread was shown before ([`MAX_SHOWN`]): a time stamp passed
//!   to another thread (a new thread's start time, say) is never in that thread's future.
//!   Deterministic too, since only one controlled thread runs between scheduling points.
//! - A sleep posts `Op::SleepUntil` with the deadline view + duration; the coordinator
//!   grants it when virtual time reaches it (see the state machine's clock rules).
//! - A timed wait's absolute deadline on its clock becomes virtual by subtracting the base.
//! - Uncontrolled threads, libpos's own calls (busy threads) and `POS_REAL_SLEEP=1` runs see
//!   the real clock. With `POS_REAL_SLEEP=1` timed waits carry a deadline already passed,
//!   the old model: a timed wait times out at once when its object is unavailable.

use crate::conn::{self, Me};
use crate::process::REAL_SLEEP;
use crate::real;
use libc::{c_int, clockid_t, time_t, timespec, timeval};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// How far one clock read moves the reading thread's view of time (1 µs).
pub const READ_STEP: u64 = 1_000;

const NS: u64 = 1_000_000_000;

thread_local! {
    /// Latest virtual time granted to this thread by the coordinator.
    static NOW: Cell<u64> = const { Cell::new(0) };
    /// Latest virtual time this thread has been shown (reads, sleeps).
    static VIEW: Cell<u64> = const { Cell::new(0) };
}

/// The largest virtual time shown to any thread of the process.
static MAX_SHOWN: AtomicU64 = AtomicU64::new(0);

/// The real clocks' values at the run's start, in whole seconds (0 = not read yet).
static BASE_REALTIME: AtomicI64 = AtomicI64::new(0);
static BASE_MONOTONIC: AtomicI64 = AtomicI64::new(0);

/// Which base a clock id maps to: `None` for clocks that stay real (CPU-time clocks).
fn base_of(c: clockid_t) -> Option<&'static AtomicI64> {
    match c {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => {
            Some(&BASE_REALTIME)
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME => Some(&BASE_MONOTONIC),
        _ => None,
    }
}

/// The base of clock `c` in ns, read once per process (first use by a controlled thread).
fn base_ns(c: clockid_t, cell: &AtomicI64) -> u64 {
    let mut b = cell.load(Ordering::Relaxed);
    if b == 0 {
        let mut ts = timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer.
        unsafe { real::clock_gettime(c, &mut ts) };
        let fresh = ts.tv_sec.max(1);
        b = match cell.compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => fresh,
            Err(other) => other,
        };
    }
    b as u64 * NS
}

/// A grant's reply carried virtual time `v` (not for a create, whose value is the child).
#[inline]
pub fn heard(v: u64) {
    NOW.with(|n| n.set(v));
}

/// Virtual time as this thread knows it, without advancing it.
fn current() -> u64 {
    NOW.with(|n| n.get())
        .max(VIEW.with(|v| v.get()))
        .max(MAX_SHOWN.load(Ordering::Relaxed))
}

/// A clock read: the thread's view moves on by [`READ_STEP`] (and up to the coordinator's).
fn read() -> u64 {
    let v = (VIEW.with(|v| v.get()) + READ_STEP)
        .max(NOW.with(|n| n.get()))
        .max(MAX_SHOWN.load(Ordering::Relaxed));
    VIEW.with(|c| c.set(v));
    MAX_SHOWN.fetch_max(v, Ordering::Relaxed);
    v
}

/// Virtual time is in use for this thread: controlled, and no `POS_REAL_SLEEP`.
fn virtual_me() -> Option<Me> {
    conn::me().filter(|_| !REAL_SLEEP.load(Ordering::Relaxed))
}

/// A valid timespec in ns (`None`: negative or a nanosecond field out of range).
pub(crate) fn to_ns(ts: &timespec) -> Option<u64> {
    (ts.tv_sec >= 0 && (0..NS as i64).contains(&ts.tv_nsec))
        .then(|| ts.tv_sec as u64 * NS + ts.tv_nsec as u64)
}

/// `ns` as a timespec.
pub(crate) fn to_timespec(ns: u64) -> timespec {
    timespec {
        tv_sec: (ns / NS) as time_t,
        tv_nsec: (ns % NS) as _,
    }
}

/// The virtual deadline of a timed wait whose absolute deadline is `*abs` on clock `c`:
/// `Err(EINVAL)` for a malformed timespec (as glibc), 0 (already passed) under
/// `POS_REAL_SLEEP` or for a clock we do not virtualise.
///
/// # Safety
/// `abs` must be NULL or point to a `timespec`.
pub unsafe fn deadline(c: clockid_t, abs: *const timespec) -> Result<u64, c_int> {
    if abs.is_null() {
        return Err(libc::EINVAL);
    }
    let abs = to_ns(&*abs).ok_or(libc::EINVAL)?;
    if REAL_SLEEP.load(Ordering::Relaxed) {
        return Ok(0);
    }
    match base_of(c) {
        Some(cell) => Ok(abs.saturating_sub(base_ns(c, cell))),
        None => Err(libc::EINVAL),
    }
}

/// The virtual deadline of a wait with the relative timeout `*rel` (`futex(FUTEX_WAIT)`):
/// `Err(EINVAL)` for a malformed timespec, 0 (already passed) under `POS_REAL_SLEEP`.
///
/// # Safety
/// `rel` must point to a `timespec`.
pub unsafe fn deadline_after(rel: *const timespec) -> Result<u64, c_int> {
    let ns = to_ns(&*rel).ok_or(libc::EINVAL)?;
    if REAL_SLEEP.load(Ordering::Relaxed) {
        return Ok(0);
    }
    Ok(current().saturating_add(ns))
}

/// The clock of a condvar: glibc keeps `CLOCK_MONOTONIC` as bit 1 of `__wrefs` (offset 36),
/// set by `pthread_cond_init` from the attribute (libpos never writes the condvar).
///
/// # Safety
/// `c` must point to a `pthread_cond_t`.
pub unsafe fn cond_clock(c: *const libc::pthread_cond_t) -> clockid_t {
    let wrefs = std::ptr::read_volatile((c as *const u8).add(36) as *const u32);
    if wrefs & 2 != 0 {
        libc::CLOCK_MONOTONIC
    } else {
        libc::CLOCK_REALTIME
    }
}

/// Post a sleep until virtual time `until` and wait for its grant.
fn sleep_until(me: Me, until: u64) {
    me.post(pos_sched::Op::SleepUntil { deadline: until });
    VIEW.with(|v| v.set(v.get().max(until)));
}

/// A relative sleep of `ns` for a controlled thread in virtual time; `false` when the
/// caller must do what it did before (uncontrolled, or `POS_REAL_SLEEP`).
pub fn sleep_for(ns: u64) -> bool {
    virtual_now().is_some_and(|now| sleep_until_virtual(now.saturating_add(ns)))
}

/// Virtual time as the calling thread knows it, when it runs in virtual time (controlled,
/// no `POS_REAL_SLEEP`); `None` otherwise. Does not advance the thread's view.
pub fn virtual_now() -> Option<u64> {
    virtual_me().map(|_| current())
}

/// The virtual time of `abs` (ns) on clock `c`, when `c` is a clock we virtualise.
pub fn virtual_of(c: clockid_t, abs: u64) -> Option<u64> {
    let cell = base_of(c)?;
    Some(abs.saturating_sub(base_ns(c, cell)))
}

/// Virtual time `t` has been reached and may be shown to any thread: no later clock read
/// is below it (a thread woken by a timer outside the model reads at least its expiry).
pub fn shown(t: u64) {
    MAX_SHOWN.fetch_max(t, Ordering::Relaxed);
}

/// Sleep until virtual time `until`; false (nothing done) when the caller does not run in
/// virtual time.
pub fn sleep_until_virtual(until: u64) -> bool {
    match virtual_me() {
        Some(me) => {
            sleep_until(me, until);
            true
        }
        None => false,
    }
}

/// `clock_nanosleep` in virtual time: `Some(result)` when handled.
///
/// # Safety
/// `req` must be NULL or point to a `timespec`.
pub unsafe fn clock_sleep(c: clockid_t, flags: c_int, req: *const timespec) -> Option<c_int> {
    let me = virtual_me()?;
    let base = base_of(c)?;
    if req.is_null() {
        return Some(libc::EFAULT);
    }
    let Some(t) = to_ns(&*req) else {
        return Some(libc::EINVAL);
    };
    let until = if flags & libc::TIMER_ABSTIME != 0 {
        t.saturating_sub(base_ns(c, base))
    } else {
        current().saturating_add(t)
    };
    sleep_until(me, until);
    Some(0)
}

/// `clock_gettime`: virtual for a controlled thread (see the module doc), else real.
///
/// # Safety
/// As `clock_gettime(2)`.
#[no_mangle]
pub unsafe extern "C" fn clock_gettime(c: clockid_t, tp: *mut timespec) -> c_int {
    if let (Some(_), Some(cell)) = (virtual_me(), base_of(c)) {
        if !tp.is_null() {
            *tp = to_timespec(base_ns(c, cell) + read());
            return 0;
        }
    }
    real::clock_gettime(c, tp)
}

/// C11's `TIME_UTC` (`<time.h>`), the one base `timespec_get` knows.
const TIME_UTC: c_int = 1;

/// C11 `timespec_get`: virtual `CLOCK_REALTIME` for a controlled thread. glibc reads the
/// clock through its internal `__clock_gettime64`, past the interposed `clock_gettime`, so
/// without this C11 deadlines (`cnd_timedwait`, `mtx_timedlock`, `thrd_sleep` elapsed
/// times) were computed from real time, seconds away from the virtual clock that the waits
/// themselves follow: a 2 ms `mtx_timedlock` never timed out.
///
/// # Safety
/// As `timespec_get(3)`.
#[no_mangle]
pub unsafe extern "C" fn timespec_get(tp: *mut timespec, base: c_int) -> c_int {
    if base == TIME_UTC && !tp.is_null() && virtual_me().is_some() {
        *tp = to_timespec(base_ns(libc::CLOCK_REALTIME, &BASE_REALTIME) + read());
        return base;
    }
    real::timespec_get(tp, base)
}

/// `time`: virtual `CLOCK_REALTIME` seconds for a controlled thread.
///
/// # Safety
/// As `time(2)`.
#[no_mangle]
pub unsafe extern "C" fn time(t: *mut time_t) -> time_t {
    if virtual_me().is_none() {
        return real::time(t);
    }
    let now = ((base_ns(libc::CLOCK_REALTIME, &BASE_REALTIME) + read()) / NS) as time_t;
    if !t.is_null() {
        *t = now;
    }
    now
}

/// `gettimeofday`: virtual `CLOCK_REALTIME` for a controlled thread (the time zone argument,
/// obsolete, is passed to the real function).
///
/// # Safety
/// As `gettimeofday(2)`.
#[no_mangle]
pub unsafe extern "C" fn gettimeofday(tv: *mut timeval, tz: *mut libc::c_void) -> c_int {
    if virtual_me().is_none() || tv.is_null() {
        return real::gettimeofday(tv, tz);
    }
    let ns = base_ns(libc::CLOCK_REALTIME, &BASE_REALTIME) + read();
    *tv = timeval {
        tv_sec: (ns / NS) as time_t,
        tv_usec: ((ns % NS) / 1_000) as _,
    };
    if !tz.is_null() {
        let mut scratch: timeval = std::mem::zeroed();
        real::gettimeofday(&mut scratch, tz);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_advance_by_a_step_and_follow_the_coordinator() {
        heard(0);
        let a = read();
        let b = read();
        assert_eq!(b - a, READ_STEP);
        heard(5 * NS);
        assert_eq!(read(), 5 * NS);
        heard(NS); // a stale value never moves the view back
        assert!(read() > 5 * NS);
        // Another thread starts at the largest time shown so far, not at zero.
        let shown = read();
        let other = std::thread::spawn(read).join().unwrap();
        assert!(other >= shown);
        assert_eq!(to_ns(&to_timespec(3 * NS + 7)), Some(3 * NS + 7));
        let bad = timespec {
            tv_sec: 1,
            tv_nsec: NS as i64,
        };
        assert_eq!(to_ns(&bad), None);
    }
}
