//! Synchronisation primitives as scheduling points: mutexes, spinlocks, rwlocks, condition
//! variables, semaphores, barriers and `pthread_once`.
//!
//! For a controlled thread each operation posts its [`Op`] and returns the granted result
//! *without* calling the real function: the coordinator's model is the lock, so a granted
//! operation never blocks in the kernel and the program's lock words are never touched (they
//! stay in their initial state, which keeps pass-through use after `exit` working; only
//! semaphore counts and once controls are mirrored, as programs read them). Blocking
//! waits become two events (a condvar wait releases the mutex, then is woken and re-acquires
//! it; a barrier wait arrives, then leaves), which is how the state machine models them.
//! Initialisers and destructors always run for real (they validate arguments and set the
//! mutex kind that we read back); uncontrolled threads use the real functions throughout.

use crate::clock;
use crate::conn::{self, Me};
use crate::real;
use libc::{c_int, c_uint, pthread_barrier_t, pthread_cond_t, pthread_mutex_t, pthread_rwlock_t};
use libc::{clockid_t, pthread_spinlock_t, sem_t, timespec};
use pos_sched::protocol::Msg;
use pos_sched::state::code;
use pos_sched::{MutexKind, Op};

/// Byte offset of `__data.__kind` in glibc's `pthread_mutex_t` (64-bit layouts).
const KIND_OFFSET: usize = 16;

/// The mutex type stored in the mutex itself (`PTHREAD_MUTEX_TYPE`, low bits of `__kind`),
/// so statically initialised recursive/error-checking mutexes are recognised too.
/// Adaptive mutexes (3) behave as normal ones.
///
/// # Safety
/// `m` must point to a `pthread_mutex_t`.
pub unsafe fn mutex_kind(m: *const pthread_mutex_t) -> MutexKind {
    let kind = std::ptr::read_volatile((m as *const u8).add(KIND_OFFSET) as *const c_int);
    match kind & 3 {
        1 => MutexKind::Recursive,
        2 => MutexKind::ErrorCheck,
        _ => MutexKind::Normal,
    }
}

fn addr<T>(p: *const T) -> u64 {
    p as u64
}

/// Map a granted result to the `-1`/`errno` convention of the semaphore functions.
fn sem_result(r: i32) -> c_int {
    if r == 0 {
        0
    } else {
        conn::set_errno(r);
        -1
    }
}

/// Defines an interposer that posts `$op` for a controlled thread and returns the grant's
/// result, or forwards to the real function. `C-unwind`: a cancellation point that acts on
/// a cancellation unwinds out of it (see [`crate::cancel`]).
macro_rules! point {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $t:ty),*) => |$me:ident| $body:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As the libc function of this name.
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $name($($arg: $t),*) -> c_int {
            match conn::me() {
                None => real::$name($($arg),*),
                Some($me) => $body,
            }
        }
    };
}

fn lock_op(me: Me, op: Op) -> c_int {
    me.post(op).result
}

/// A timed pthread operation: `op` built from the virtual deadline of `*t` on clock `c`
/// ([`clock::deadline`]), or the error code of a malformed deadline.
///
/// # Safety
/// `t` must be NULL or point to a `timespec`.
unsafe fn timed_op(me: Me, c: clockid_t, t: *const timespec, op: impl FnOnce(u64) -> Op) -> c_int {
    match clock::deadline(c, t) {
        Ok(d) => me.post(op(d)).result,
        Err(e) => e,
    }
}

point! {
    /// `pthread_mutex_lock`: `Op::Lock`.
    fn pthread_mutex_lock(m: *mut pthread_mutex_t) =>
        |me| lock_op(me, Op::Lock { m: addr(m), kind: mutex_kind(m) })
}
point! {
    /// `pthread_mutex_trylock`: `Op::TryLock` (EBUSY when held).
    fn pthread_mutex_trylock(m: *mut pthread_mutex_t) =>
        |me| lock_op(me, Op::TryLock { m: addr(m), kind: mutex_kind(m) })
}
point! {
    /// `pthread_mutex_timedlock`: `Op::TimedLock` with the `CLOCK_REALTIME` deadline in
    /// virtual time (ETIMEDOUT only once virtual time reaches it, see [`clock`]).
    fn pthread_mutex_timedlock(m: *mut pthread_mutex_t, t: *const timespec) =>
        |me| timed_op(me, libc::CLOCK_REALTIME, t, |deadline| {
            Op::TimedLock { m: addr(m), kind: mutex_kind(m), deadline }
        })
}
point! {
    /// `pthread_mutex_clocklock`: as `pthread_mutex_timedlock`, on clock `c`.
    fn pthread_mutex_clocklock(m: *mut pthread_mutex_t, c: clockid_t, t: *const timespec) =>
        |me| timed_op(me, c, t, |deadline| {
            Op::TimedLock { m: addr(m), kind: mutex_kind(m), deadline }
        })
}
point! {
    /// `pthread_mutex_unlock`: `Op::Unlock` (EPERM for a non-owner of a checking mutex).
    fn pthread_mutex_unlock(m: *mut pthread_mutex_t) =>
        |me| lock_op(me, Op::Unlock { m: addr(m), kind: mutex_kind(m) })
}

point! {
    /// `pthread_spin_lock`: a normal mutex.
    fn pthread_spin_lock(s: *mut pthread_spinlock_t) =>
        |me| lock_op(me, Op::Lock { m: addr(s), kind: MutexKind::Normal })
}
point! {
    /// `pthread_spin_trylock`: a normal mutex's trylock.
    fn pthread_spin_trylock(s: *mut pthread_spinlock_t) =>
        |me| lock_op(me, Op::TryLock { m: addr(s), kind: MutexKind::Normal })
}
point! {
    /// `pthread_spin_unlock`: a normal mutex's unlock.
    fn pthread_spin_unlock(s: *mut pthread_spinlock_t) =>
        |me| lock_op(me, Op::Unlock { m: addr(s), kind: MutexKind::Normal })
}

point! {
    /// `pthread_rwlock_rdlock`: `Op::RdLock`.
    fn pthread_rwlock_rdlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::RdLock { l: addr(l) })
}
point! {
    /// `pthread_rwlock_wrlock`: `Op::WrLock`.
    fn pthread_rwlock_wrlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::WrLock { l: addr(l) })
}
point! {
    /// `pthread_rwlock_tryrdlock`: `Op::TryRdLock`.
    fn pthread_rwlock_tryrdlock(l: *mut pthread_rwlock_t) =>
        |me| lock_op(me, Op::TryRdLock { l: addr(l) })
}
point! {
    /// `pthread_rwlock_trywrlock`: `Op::TryWrLock`.
    fn pthread_rwlock_trywrlock(l: *mut pthread_rwlock_t) =>
        |me| lock_op(me, Op::TryWrLock { l: addr(l) })
}
point! {
    /// `pthread_rwlock_timedrdlock`: `Op::TimedRdLock` (`CLOCK_REALTIME` deadline).
    fn pthread_rwlock_timedrdlock(l: *mut pthread_rwlock_t, t: *const timespec) =>
        |me| timed_op(me, libc::CLOCK_REALTIME, t, |deadline| Op::TimedRdLock { l: addr(l), deadline })
}
point! {
    /// `pthread_rwlock_timedwrlock`: `Op::TimedWrLock` (`CLOCK_REALTIME` deadline).
    fn pthread_rwlock_timedwrlock(l: *mut pthread_rwlock_t, t: *const timespec) =>
        |me| timed_op(me, libc::CLOCK_REALTIME, t, |deadline| Op::TimedWrLock { l: addr(l), deadline })
}
point! {
    /// `pthread_rwlock_clockrdlock`: `Op::TimedRdLock` (deadline on clock `c`).
    fn pthread_rwlock_clockrdlock(l: *mut pthread_rwlock_t, c: clockid_t, t: *const timespec) =>
        |me| timed_op(me, c, t, |deadline| Op::TimedRdLock { l: addr(l), deadline })
}
point! {
    /// `pthread_rwlock_clockwrlock`: `Op::TimedWrLock` (deadline on clock `c`).
    fn pthread_rwlock_clockwrlock(l: *mut pthread_rwlock_t, c: clockid_t, t: *const timespec) =>
        |me| timed_op(me, c, t, |deadline| Op::TimedWrLock { l: addr(l), deadline })
}
point! {
    /// `pthread_rwlock_unlock`: `Op::RwUnlock`.
    fn pthread_rwlock_unlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::RwUnlock { l: addr(l) })
}

/// An emulated condvar wait: `CondWait` releases the mutex and makes us a waiter, then
/// `CondWake` is enabled once we are signalled (or, with a `deadline`, once virtual time
/// reaches it) and the mutex is free. Emulation means the serialisation itself can lose no
/// wakeup.
fn cond_wait(me: Me, c: *mut pthread_cond_t, m: *mut pthread_mutex_t, deadline: u64) -> c_int {
    let (c, m) = (addr(c), addr(m));
    let r = me.post(Op::CondWait { c, m }).result;
    if r != 0 {
        return r;
    }
    me.post(Op::CondWake { c, m, deadline }).result
}

/// A timed condvar wait with the absolute deadline `*t` on clock `k`.
///
/// # Safety
/// `c` must point to a condvar, `t` be NULL or point to a `timespec`.
unsafe fn cond_timed(
    me: Me,
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    k: clockid_t,
    t: *const timespec,
) -> c_int {
    match clock::deadline(k, t) {
        Ok(d) => cond_wait(me, c, m, d),
        Err(e) => e,
    }
}

point! {
    /// `pthread_cond_wait`: `CondWait` then `CondWake` with no deadline.
    fn pthread_cond_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) =>
        |me| cond_wait(me, c, m, pos_sched::NO_DEADLINE)
}
point! {
    /// `pthread_cond_timedwait`: `CondWait` then `CondWake` with the deadline on the
    /// condvar's clock (may return ETIMEDOUT once virtual time reaches it).
    fn pthread_cond_timedwait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t, t: *const timespec) =>
        |me| cond_timed(me, c, m, clock::cond_clock(c), t)
}
point! {
    /// `pthread_cond_clockwait`: as `pthread_cond_timedwait`, on clock `k`.
    fn pthread_cond_clockwait(
        c: *mut pthread_cond_t, m: *mut pthread_mutex_t, k: clockid_t, t: *const timespec
    ) => |me| cond_timed(me, c, m, k, t)
}
point! {
    /// `pthread_cond_signal`: `Op::CondSignal`.
    fn pthread_cond_signal(c: *mut pthread_cond_t) => |me| lock_op(me, Op::CondSignal { c: addr(c) })
}
point! {
    /// `pthread_cond_broadcast`: `Op::CondBroadcast`.
    fn pthread_cond_broadcast(c: *mut pthread_cond_t) =>
        |me| lock_op(me, Op::CondBroadcast { c: addr(c) })
}

/// `pthread_cond_init`: always real (exported so that the versioned real one is used).
///
/// # Safety
/// As `pthread_cond_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_cond_init(
    c: *mut pthread_cond_t,
    a: *const libc::pthread_condattr_t,
) -> c_int {
    real::pthread_cond_init(c, a)
}

/// `pthread_cond_destroy`: always real.
///
/// # Safety
/// As `pthread_cond_destroy(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_cond_destroy(c: *mut pthread_cond_t) -> c_int {
    real::pthread_cond_destroy(c)
}

/// `sem_init`: the real initialisation, then `Msg::SemInit` (not a scheduling point).
///
/// # Safety
/// As `sem_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn sem_init(s: *mut sem_t, pshared: c_int, value: c_uint) -> c_int {
    let r = real::sem_init(s, pshared, value);
    if let (0, Some(me)) = (r, conn::me()) {
        me.notify(&Msg::SemInit { s: addr(s), value });
    }
    r
}

/// `sem_open`: the real call, then `Msg::SemInit` with the semaphore's current count, so a
/// named semaphore starts in the model where it really is (an unknown semaphore counts 0,
/// and every wait on it would be a false deadlock). Opening one already open gives the same
/// `sem_t`, whose real count mirrors the model's, so announcing it again changes nothing.
/// `mode` and `value` are variadic in C: on x86-64 they arrive in the same registers as
/// fixed arguments, and are passed on unread when `O_CREAT` is not set.
///
/// # Safety
/// As `sem_open(3)`.
#[no_mangle]
pub unsafe extern "C" fn sem_open(
    name: *const libc::c_char,
    oflag: c_int,
    mode: libc::mode_t,
    value: c_uint,
) -> *mut sem_t {
    let s = real::sem_open(name, oflag, mode, value);
    if s != libc::SEM_FAILED {
        if let Some(me) = conn::me() {
            let mut now: c_int = 0;
            if real::sem_getvalue(s, &mut now) == 0 {
                me.notify(&Msg::SemInit {
                    s: addr(s),
                    value: now.max(0) as c_uint,
                });
            }
        }
    }
    s
}

/// Post a semaphore operation; on success mirror it on the real semaphore (which never
/// blocks then: the model granted it, so the real count is positive for a wait), so that
/// `sem_getvalue` and uses after `exit` see the modelled count.
unsafe fn sem_op(me: Me, s: *mut sem_t, op: Op) -> c_int {
    let r = me.post(op).result;
    if r == 0 {
        match op {
            Op::SemPost { .. } => real::sem_post(s),
            _ => real::sem_trywait(s),
        };
    }
    sem_result(r)
}

point! {
    /// `sem_wait`: `Op::SemWait`.
    fn sem_wait(s: *mut sem_t) => |me| sem_op(me, s, Op::SemWait { s: addr(s) })
}
point! {
    /// `sem_trywait`: `Op::SemTryWait` (-1/EAGAIN when the count is zero).
    fn sem_trywait(s: *mut sem_t) => |me| sem_op(me, s, Op::SemTryWait { s: addr(s) })
}
point! {
    /// `sem_timedwait`: `Op::SemTimedWait` with the `CLOCK_REALTIME` deadline (-1/ETIMEDOUT
    /// once virtual time reaches it with the count still zero).
    fn sem_timedwait(s: *mut sem_t, t: *const timespec) =>
        |me| sem_timed(me, s, libc::CLOCK_REALTIME, t)
}
point! {
    /// `sem_clockwait`: as `sem_timedwait`, on clock `c`.
    fn sem_clockwait(s: *mut sem_t, c: clockid_t, t: *const timespec) =>
        |me| sem_timed(me, s, c, t)
}

/// `sem_timedwait` on clock `c`.
///
/// # Safety
/// `s` must point to a semaphore, `t` be NULL or point to a `timespec`.
unsafe fn sem_timed(me: Me, s: *mut sem_t, c: clockid_t, t: *const timespec) -> c_int {
    match clock::deadline(c, t) {
        Ok(deadline) => sem_op(
            me,
            s,
            Op::SemTimedWait {
                s: addr(s),
                deadline,
            },
        ),
        Err(e) => sem_result(e),
    }
}
point! {
    /// `sem_post`: `Op::SemPost`.
    fn sem_post(s: *mut sem_t) => |me| sem_op(me, s, Op::SemPost { s: addr(s) })
}

/// `pthread_barrier_init`: the real initialisation, then `Msg::BarrierInit`.
///
/// # Safety
/// As `pthread_barrier_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_barrier_init(
    b: *mut pthread_barrier_t,
    a: *const libc::pthread_barrierattr_t,
    count: c_uint,
) -> c_int {
    let r = real::pthread_barrier_init(b, a, count);
    if let (0, Some(me)) = (r, conn::me()) {
        me.notify(&Msg::BarrierInit { b: addr(b), count });
    }
    r
}

point! {
    /// `pthread_barrier_wait`: `BarrierWait` (arrival) then `BarrierLeave` (enabled once all
    /// have arrived); the last arriver gets `PTHREAD_BARRIER_SERIAL_THREAD`.
    fn pthread_barrier_wait(b: *mut pthread_barrier_t) => |me| {
        let r = me.post(Op::BarrierWait { b: addr(b) }).result;
        me.post(Op::BarrierLeave { b: addr(b) });
        if r == code::BARRIER_SERIAL {
            libc::PTHREAD_BARRIER_SERIAL_THREAD
        } else {
            r
        }
    }
}

extern "C" fn once_noop() {}

point! {
    /// `pthread_once`: `OnceBegin` behaves as a lock on the control; unless the grant says
    /// the init already ran (`ONCE_DONE`) we run it and post `OnceEnd`.
    fn pthread_once(o: *mut libc::pthread_once_t, init: extern "C" fn()) => |me| {
        // A control that reads as never run may be a new one in the memory of a finished
        // one (every `std::promise` has its once flag in a heap-allocated state): say so
        // before taking it, or the coordinator answers for the old one.
        // SAFETY: `o` is the caller's once control, an int, read atomically.
        let word = unsafe { &*o.cast::<std::sync::atomic::AtomicI32>() };
        if word.load(std::sync::atomic::Ordering::SeqCst) == libc::PTHREAD_ONCE_INIT {
            me.notify(&Msg::OnceInit { o: addr(o) });
        }
        let r = me.post(Op::OnceBegin { o: addr(o) }).result;
        if r != code::ONCE_DONE {
            init();
            me.post(Op::OnceEnd { o: addr(o) });
            // Mark the real control done too, so pass-through calls (after `exit`) skip it.
            real::pthread_once(o, once_noop);
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutex_kind_is_read_from_static_initialisers() {
        let normal = libc::PTHREAD_MUTEX_INITIALIZER;
        let rec = libc::PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
        let chk = libc::PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
        unsafe {
            assert_eq!(mutex_kind(&normal), MutexKind::Normal);
            assert_eq!(mutex_kind(&rec), MutexKind::Recursive);
            assert_eq!(mutex_kind(&chk), MutexKind::ErrorCheck);
        }
    }

    #[test]
    fn mutex_kind_is_read_from_initialised_mutexes() {
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
            let mut m: pthread_mutex_t = std::mem::zeroed();
            libc::pthread_mutex_init(&mut m, &attr);
            assert_eq!(mutex_kind(&m), MutexKind::Recursive);
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_ERRORCHECK);
            libc::pthread_mutex_init(&mut m, &attr);
            assert_eq!(mutex_kind(&m), MutexKind::ErrorCheck);
        }
    }
}
