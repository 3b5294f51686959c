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
//!
//! Robust mutexes: the model frees one whose owner dies and answers `EOWNERDEAD`,
//! `pthread_mutex_consistent` and `ENOTRECOVERABLE` (see `pos_sched::state`); the real mutex
//! is never locked by a controlled thread, so its kernel robust list never holds it. One in
//! `MAP_SHARED` memory is one object for every process of the run ([`mutex_addr`]).

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

/// glibc's robust bit of `__kind` (`PTHREAD_MUTEX_ROBUST_NORMAL_NP`), set by
/// `pthread_mutexattr_setrobust(PTHREAD_MUTEX_ROBUST)` (checked on glibc 2.36: kinds 656,
/// 145 and 146 for the robust normal, recursive and error-checking mutex).
const KIND_ROBUST: c_int = 16;

/// The mutex type stored in the mutex itself (`PTHREAD_MUTEX_TYPE`, low bits of `__kind`,
/// and the robust bit), so statically initialised recursive/error-checking mutexes are
/// recognised too. Adaptive mutexes (3) behave as normal ones.
///
/// # Safety
/// `m` must point to a `pthread_mutex_t`.
pub unsafe fn mutex_kind(m: *const pthread_mutex_t) -> MutexKind {
    kind_of(kind_word(m))
}

/// glibc's `__kind` word of mutex `m`.
///
/// # Safety
/// `m` must point to a `pthread_mutex_t`.
unsafe fn kind_word(m: *const pthread_mutex_t) -> c_int {
    glibc_word(m, KIND_OFFSET)
}

/// The 32-bit word at byte `offset` of glibc's object at `p` (a field of its layout, read
/// as the program's threads may be changing it).
///
/// # Safety
/// `p + offset` must be a readable, aligned 4-byte word.
unsafe fn glibc_word<T>(p: *const T, offset: usize) -> c_int {
    std::ptr::read_volatile((p as *const u8).add(offset) as *const c_int)
}

/// [`mutex_kind`] of a mutex whose `__kind` word is `kind`.
fn kind_of(kind: c_int) -> MutexKind {
    let base = match kind & 3 {
        1 => MutexKind::Recursive,
        2 => MutexKind::ErrorCheck,
        _ => MutexKind::Normal,
    };
    if kind & KIND_ROBUST != 0 {
        base.made_robust()
    } else {
        base
    }
}

/// The model's address of mutex `m` whose `__kind` word is `kind`: a process-shared mutex
/// (`PTHREAD_PROCESS_SHARED`) or a robust mutex in `MAP_SHARED` memory gets
/// [`pos_sched::event::SHARED_BIT`], so that a forked child and its parent lock the same
/// object (a robust one's owner process's end frees it with `EOWNERDEAD`, as the kernel
/// does). Every other mutex keeps its plain address (an object per process).
fn mutex_addr(m: *const pthread_mutex_t, kind: c_int) -> u64 {
    // glibc sets the pshared bit on every robust mutex (the kernel's robust-list wakes are
    // never private): for those, shared memory decides.
    let shared = if kind & KIND_ROBUST != 0 {
        in_shared_mapping(m as u64)
    } else {
        kind & KIND_PSHARED != 0
    };
    model_addr(m, shared)
}

/// Whether `addr` lies in a `MAP_SHARED` mapping of this process: its `/proc/self/maps`
/// line's permissions end in `s`. Read into stack buffers (no allocation on the program's
/// thread, which would move the addresses of its later `malloc`s); false if unreadable.
fn in_shared_mapping(addr: u64) -> bool {
    // SAFETY: a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    let mut buf = [0u8; 4096];
    // The head of the current line: `start-end perms` fits in 64 bytes.
    let mut head = [0u8; 64];
    let mut len = 0;
    let mut found = None;
    'read: loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        for &b in &buf[..n as usize] {
            if b == b'\n' {
                found = maps_line_shared(&head[..len], addr);
                if found.is_some() {
                    break 'read;
                }
                len = 0;
            } else if len < head.len() {
                head[len] = b;
                len += 1;
            }
        }
    }
    // SAFETY: our own descriptor.
    unsafe { real::close(fd) };
    found.unwrap_or(false)
}

/// For the head `start-end perms ...` of a `/proc/self/maps` line: `Some(shared)` when
/// `addr` lies in its range, `None` otherwise.
fn maps_line_shared(head: &[u8], addr: u64) -> Option<bool> {
    let line = std::str::from_utf8(head).ok()?;
    let mut fields = line.split(' ');
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    (start <= addr && addr < end).then(|| perms.as_bytes().get(3) == Some(&b's'))
}

/// The model's address and kind of mutex `m` ([`mutex_kind`], [`mutex_addr`]).
///
/// # Safety
/// `m` must point to a `pthread_mutex_t`.
unsafe fn mutex(m: *const pthread_mutex_t) -> (u64, MutexKind) {
    let kind = kind_word(m);
    (mutex_addr(m, kind), kind_of(kind))
}

fn addr<T>(p: *const T) -> u64 {
    p as u64
}

/// glibc's `PTHREAD_MUTEX_PSHARED_BIT` in a mutex's kind word.
const KIND_PSHARED: c_int = 128;
/// glibc's `struct new_sem`: the count word, then `private` at this offset.
const SEM_PRIVATE_OFFSET: usize = 8;
/// `private` of a process-shared semaphore: glibc's `FUTEX_SHARED`, 128, the futex private
/// flag (glibc's naming is the other way round).
const SEM_SHARED: c_int = 128;
/// glibc's `pthread_cond_t`: `__wrefs` at this offset, its bit 0 set when process-shared.
const COND_WREFS_OFFSET: usize = 36;

/// The model's address of the object at `p`: with [`pos_sched::event::SHARED_BIT`] when it
/// is `shared` between processes (one object for a forked child and its parent), else the
/// plain address (an object per process).
fn model_addr<T>(p: *const T, shared: bool) -> u64 {
    if shared {
        p as u64 | pos_sched::event::SHARED_BIT
    } else {
        p as u64
    }
}

/// The model's address of semaphore `s`: a process-shared one (`sem_init(s, 1, n)` in
/// shared memory, `sem_open`) gets [`pos_sched::event::SHARED_BIT`], so that a forked
/// child's `sem_post` wakes its parent's `sem_wait` in the model too (before, two objects:
/// a false deadlock in every run): glibc marks it in `private` ([`SEM_SHARED`]).
fn sem_addr(s: *const sem_t) -> u64 {
    // SAFETY: `s` points to an initialised semaphore (the caller's contract).
    let private = unsafe { glibc_word(s, SEM_PRIVATE_OFFSET) };
    model_addr(s, private == SEM_SHARED)
}

/// The model's address of condition variable `c`: a process-shared one
/// (`PTHREAD_PROCESS_SHARED`) gets [`pos_sched::event::SHARED_BIT`], as [`sem_addr`]
/// (glibc's mark: bit 0 of `__wrefs`).
fn cond_addr(c: *const pthread_cond_t) -> u64 {
    // SAFETY: `c` points to a condition variable (the caller's contract).
    let wrefs = unsafe { glibc_word(c, COND_WREFS_OFFSET) };
    model_addr(c, wrefs & 1 != 0)
}

/// Offset of glibc's `__shared` word in `pthread_rwlock_t` (x86-64): 1 for a process-shared
/// rwlock, 0 for a private one (and for `PTHREAD_RWLOCK_INITIALIZER`).
const RWLOCK_SHARED_OFFSET: usize = 28;

/// Offset of glibc's `shared` word in `pthread_barrier_t` (x86-64): the futex flag, 128
/// (`FUTEX_SHARED`) for a process-shared barrier, 0 for a private one.
const BARRIER_SHARED_OFFSET: usize = 12;

/// The model's address of rwlock `l`: a process-shared one gets
/// [`pos_sched::event::SHARED_BIT`], as [`cond_addr`].
fn rwlock_addr(l: *const pthread_rwlock_t) -> u64 {
    // SAFETY: `l` points to a rwlock (the caller's contract).
    let shared = unsafe { glibc_word(l, RWLOCK_SHARED_OFFSET) };
    model_addr(l, shared != 0)
}

/// The model's address of barrier `b`: a process-shared one gets
/// [`pos_sched::event::SHARED_BIT`], so that a forked child and its parent wait at the same
/// barrier (before 2026-11-28 each process had its own copy, 1 of 2 arrived in each: a
/// false deadlock in every run).
fn barrier_addr(b: *const pthread_barrier_t) -> u64 {
    // SAFETY: `b` points to a barrier (the caller's contract).
    let shared = unsafe { glibc_word(b, BARRIER_SHARED_OFFSET) };
    model_addr(b, shared != 0)
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
    /// `pthread_mutex_lock`: `Op::Lock` (EOWNERDEAD, ENOTRECOVERABLE for a robust one).
    fn pthread_mutex_lock(m: *mut pthread_mutex_t) => |me| {
        let (m, kind) = mutex(m);
        lock_op(me, Op::Lock { m, kind })
    }
}
point! {
    /// `pthread_mutex_trylock`: `Op::TryLock` (EBUSY when held).
    fn pthread_mutex_trylock(m: *mut pthread_mutex_t) => |me| {
        let (m, kind) = mutex(m);
        lock_op(me, Op::TryLock { m, kind })
    }
}
point! {
    /// `pthread_mutex_timedlock`: `Op::TimedLock` with the `CLOCK_REALTIME` deadline in
    /// virtual time (ETIMEDOUT only once virtual time reaches it, see [`clock`]).
    fn pthread_mutex_timedlock(m: *mut pthread_mutex_t, t: *const timespec) => |me| {
        let (m, kind) = mutex(m);
        timed_op(me, libc::CLOCK_REALTIME, t, |deadline| Op::TimedLock { m, kind, deadline })
    }
}
point! {
    /// `pthread_mutex_clocklock`: as `pthread_mutex_timedlock`, on clock `c`.
    fn pthread_mutex_clocklock(m: *mut pthread_mutex_t, c: clockid_t, t: *const timespec) => |me| {
        let (m, kind) = mutex(m);
        timed_op(me, c, t, |deadline| Op::TimedLock { m, kind, deadline })
    }
}
point! {
    /// `pthread_mutex_unlock`: `Op::Unlock` (EPERM for a non-owner of a checking or robust
    /// mutex).
    fn pthread_mutex_unlock(m: *mut pthread_mutex_t) => |me| {
        let (m, kind) = mutex(m);
        lock_op(me, Op::Unlock { m, kind })
    }
}
point! {
    /// `pthread_mutex_consistent`: `Op::Consistent` (a scheduling point only programs with
    /// robust mutexes reach: they call it after `EOWNERDEAD`).
    fn pthread_mutex_consistent(m: *mut pthread_mutex_t) => |me| {
        let (m, _) = mutex(m);
        lock_op(me, Op::Consistent { m })
    }
}

/// `pthread_mutex_init`: always real; for a controlled thread, then `Msg::MutexInit` (not a
/// scheduling point), so that the model forgets what it knew of the memory: a robust mutex
/// made not recoverable is reused by initialising it again, and a fork child's handler
/// (`pthread_atfork`) re-initialises a mutex its parent held at the fork. Before
/// 2026-11-28 only robust mutexes sent it, and that idiom was a false deadlock.
///
/// # Safety
/// As `pthread_mutex_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_init(
    m: *mut pthread_mutex_t,
    a: *const libc::pthread_mutexattr_t,
) -> c_int {
    let r = real::pthread_mutex_init(m, a);
    initialised(r, || mutex(m).0)
}

/// After a lock's real initialisation returned `r`: on success, for a controlled thread,
/// `Msg::MutexInit` of the lock's model address `m()`. Returns `r`.
fn initialised(r: c_int, m: impl FnOnce() -> u64) -> c_int {
    if let (0, Some(me)) = (r, conn::me()) {
        me.notify(&Msg::MutexInit { m: m() });
    }
    r
}

/// `pthread_rwlock_init`: always real; for a controlled thread, then `Msg::MutexInit` of the
/// rwlock's address, as [`pthread_mutex_init`]: the model forgets the lock it knew there.
///
/// # Safety
/// As `pthread_rwlock_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_init(
    l: *mut pthread_rwlock_t,
    a: *const libc::pthread_rwlockattr_t,
) -> c_int {
    initialised(real::pthread_rwlock_init(l, a), || rwlock_addr(l))
}

/// `pthread_spin_init`: always real; then `Msg::MutexInit`, as [`pthread_mutex_init`] (a
/// spinlock is a normal mutex of the model).
///
/// # Safety
/// As `pthread_spin_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_spin_init(s: *mut pthread_spinlock_t, pshared: c_int) -> c_int {
    initialised(real::pthread_spin_init(s, pshared), || addr(s))
}

/// `pthread_mutex_consistent_np`: the old name of `pthread_mutex_consistent`.
///
/// # Safety
/// As `pthread_mutex_consistent(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_mutex_consistent_np(m: *mut pthread_mutex_t) -> c_int {
    pthread_mutex_consistent(m)
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
    fn pthread_rwlock_rdlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::RdLock { l: rwlock_addr(l) })
}
point! {
    /// `pthread_rwlock_wrlock`: `Op::WrLock`.
    fn pthread_rwlock_wrlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::WrLock { l: rwlock_addr(l) })
}
point! {
    /// `pthread_rwlock_tryrdlock`: `Op::TryRdLock`.
    fn pthread_rwlock_tryrdlock(l: *mut pthread_rwlock_t) =>
        |me| lock_op(me, Op::TryRdLock { l: rwlock_addr(l) })
}
point! {
    /// `pthread_rwlock_trywrlock`: `Op::TryWrLock`.
    fn pthread_rwlock_trywrlock(l: *mut pthread_rwlock_t) =>
        |me| lock_op(me, Op::TryWrLock { l: rwlock_addr(l) })
}
point! {
    /// `pthread_rwlock_timedrdlock`: `Op::TimedRdLock` (`CLOCK_REALTIME` deadline).
    fn pthread_rwlock_timedrdlock(l: *mut pthread_rwlock_t, t: *const timespec) =>
        |me| timed_op(me, libc::CLOCK_REALTIME, t, |deadline| Op::TimedRdLock { l: rwlock_addr(l), deadline })
}
point! {
    /// `pthread_rwlock_timedwrlock`: `Op::TimedWrLock` (`CLOCK_REALTIME` deadline).
    fn pthread_rwlock_timedwrlock(l: *mut pthread_rwlock_t, t: *const timespec) =>
        |me| timed_op(me, libc::CLOCK_REALTIME, t, |deadline| Op::TimedWrLock { l: rwlock_addr(l), deadline })
}
point! {
    /// `pthread_rwlock_clockrdlock`: `Op::TimedRdLock` (deadline on clock `c`).
    fn pthread_rwlock_clockrdlock(l: *mut pthread_rwlock_t, c: clockid_t, t: *const timespec) =>
        |me| timed_op(me, c, t, |deadline| Op::TimedRdLock { l: rwlock_addr(l), deadline })
}
point! {
    /// `pthread_rwlock_clockwrlock`: `Op::TimedWrLock` (deadline on clock `c`).
    fn pthread_rwlock_clockwrlock(l: *mut pthread_rwlock_t, c: clockid_t, t: *const timespec) =>
        |me| timed_op(me, c, t, |deadline| Op::TimedWrLock { l: rwlock_addr(l), deadline })
}
point! {
    /// `pthread_rwlock_unlock`: `Op::RwUnlock`.
    fn pthread_rwlock_unlock(l: *mut pthread_rwlock_t) => |me| lock_op(me, Op::RwUnlock { l: rwlock_addr(l) })
}

/// An emulated condvar wait: `CondWait` releases the mutex and makes us a waiter, then
/// `CondWake` is enabled once we are signalled (or, with a `deadline`, once virtual time
/// reaches it) and the mutex is free. Emulation means the serialisation itself can lose no
/// wakeup.
fn cond_wait(me: Me, c: *mut pthread_cond_t, m: *mut pthread_mutex_t, deadline: u64) -> c_int {
    // SAFETY: `m` is the caller's mutex.
    let (c, m) = (cond_addr(c), unsafe { mutex(m) }.0);
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
    fn pthread_cond_signal(c: *mut pthread_cond_t) => |me| lock_op(me, Op::CondSignal { c: cond_addr(c) })
}
point! {
    /// `pthread_cond_broadcast`: `Op::CondBroadcast`.
    fn pthread_cond_broadcast(c: *mut pthread_cond_t) =>
        |me| lock_op(me, Op::CondBroadcast { c: cond_addr(c) })
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
        me.notify(&Msg::SemInit {
            s: sem_addr(s),
            value,
        });
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
                    s: sem_addr(s),
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
    fn sem_wait(s: *mut sem_t) => |me| sem_op(me, s, Op::SemWait { s: sem_addr(s) })
}
point! {
    /// `sem_trywait`: `Op::SemTryWait` (-1/EAGAIN when the count is zero).
    fn sem_trywait(s: *mut sem_t) => |me| sem_op(me, s, Op::SemTryWait { s: sem_addr(s) })
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
                s: sem_addr(s),
                deadline,
            },
        ),
        Err(e) => sem_result(e),
    }
}
point! {
    /// `sem_post`: `Op::SemPost`.
    fn sem_post(s: *mut sem_t) => |me| sem_op(me, s, Op::SemPost { s: sem_addr(s) })
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
        me.notify(&Msg::BarrierInit {
            b: barrier_addr(b),
            count,
        });
    }
    r
}

point! {
    /// `pthread_barrier_wait`: `BarrierWait` (arrival) then `BarrierLeave` (enabled once all
    /// have arrived); the last arriver gets `PTHREAD_BARRIER_SERIAL_THREAD`.
    fn pthread_barrier_wait(b: *mut pthread_barrier_t) => |me| {
        let r = me.post(Op::BarrierWait { b: barrier_addr(b) }).result;
        me.post(Op::BarrierLeave { b: barrier_addr(b) });
        if r == code::BARRIER_SERIAL {
            libc::PTHREAD_BARRIER_SERIAL_THREAD
        } else {
            r
        }
    }
}

extern "C" fn once_noop() {}

/// glibc's `__PTHREAD_ONCE_DONE`: the once control's word has this bit once the init ran
/// (in-progress words are the fork generation, a multiple of 4, plus 1).
const ONCE_DONE_BIT: c_int = 2;

point! {
    /// `pthread_once`: `OnceBegin` behaves as a lock on the control; unless the grant says
    /// the init already ran (`ONCE_DONE`) we run it and post `OnceEnd`.
    fn pthread_once(o: *mut libc::pthread_once_t, init: extern "C" fn()) => |me| {
        // A control that reads as never run may be a new one in the memory of a finished
        // one (every `std::promise` has its once flag in a heap-allocated state): say so
        // before taking it, or the coordinator answers for the old one.
        // SAFETY: `o` is the caller's once control, an int, read atomically.
        let word = unsafe { &*o.cast::<std::sync::atomic::AtomicI32>() };
        let w = word.load(std::sync::atomic::Ordering::SeqCst);
        // A control that reads as completed (glibc's `__PTHREAD_ONCE_DONE` bit, never set
        // while in progress) may have been completed before libpos took control, unknown
        // to the coordinator: say so, or its init would run a second time.
        if w == libc::PTHREAD_ONCE_INIT || w & ONCE_DONE_BIT != 0 {
            let done = w != libc::PTHREAD_ONCE_INIT;
            me.notify(&Msg::OnceInit { o: addr(o), done });
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
    fn robust_mutexes_are_recognised_and_shared_memory_found() {
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST);
            let mut m: pthread_mutex_t = std::mem::zeroed();
            libc::pthread_mutex_init(&mut m, &attr);
            assert_eq!(mutex_kind(&m), MutexKind::RobustNormal);
            assert_eq!(mutex(&m).0, addr(&m), "private memory: a plain address");
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
            libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            let len = std::mem::size_of::<pthread_mutex_t>();
            let (prot, flags) = (
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            );
            let p = libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0);
            assert_ne!(p, libc::MAP_FAILED);
            let sm = p.cast::<pthread_mutex_t>();
            libc::pthread_mutex_init(sm, &attr);
            assert_eq!(mutex_kind(sm), MutexKind::RobustRecursive);
            assert_eq!(mutex(sm).0, addr(sm) | pos_sched::event::SHARED_BIT);
            libc::munmap(p, len);
        }
        // A process-shared mutex (not robust), a semaphore and a condvar: the shared bit
        // from glibc's own marks; private ones keep their address.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            let (mut m, mut p): (pthread_mutex_t, pthread_mutex_t) = std::mem::zeroed();
            libc::pthread_mutex_init(&mut m, &attr);
            libc::pthread_mutex_init(&mut p, std::ptr::null());
            assert_eq!(mutex(&m).0, addr(&m) | pos_sched::event::SHARED_BIT);
            assert_eq!(mutex(&p).0, addr(&p));
            let (mut a, mut b): (sem_t, sem_t) = std::mem::zeroed();
            libc::sem_init(&mut a, 1, 0);
            libc::sem_init(&mut b, 0, 0);
            assert_eq!(sem_addr(&a), addr(&a) | pos_sched::event::SHARED_BIT);
            assert_eq!(sem_addr(&b), addr(&b));
            let mut cattr: libc::pthread_condattr_t = std::mem::zeroed();
            libc::pthread_condattr_init(&mut cattr);
            libc::pthread_condattr_setpshared(&mut cattr, libc::PTHREAD_PROCESS_SHARED);
            let (mut c, mut d): (pthread_cond_t, pthread_cond_t) = std::mem::zeroed();
            libc::pthread_cond_init(&mut c, &cattr);
            libc::pthread_cond_init(&mut d, std::ptr::null());
            assert_eq!(cond_addr(&c), addr(&c) | pos_sched::event::SHARED_BIT);
            assert_eq!(cond_addr(&d), addr(&d));
        }
        assert_eq!(
            maps_line_shared(b"1000-2000 rw-s 00000000 00:01 5", 0x1fff),
            Some(true)
        );
        assert_eq!(
            maps_line_shared(b"1000-2000 rw-p 00000000 00:01 5", 0x1000),
            Some(false)
        );
        assert_eq!(
            maps_line_shared(b"1000-2000 rw-s 00000000 00:01 5", 0x2000),
            None
        );
        assert_eq!(maps_line_shared(b"garbage", 0x2000), None);
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
