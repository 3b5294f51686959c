//! OpenMP locks and critical sections (libgomp): `omp_set_lock`, `omp_unset_lock`,
//! `omp_test_lock`, their nestable forms, `#pragma omp critical` (`GOMP_critical_start`/
//! `_end`, and `GOMP_critical_name_start`/`_end` for a named one) and the lock of
//! `#pragma omp atomic` on types without native atomics (`GOMP_atomic_start`/`_end`) are
//! mutexes of the model, so they are scheduling points. libgomp takes them with an inline
//! atomic and makes a futex system call only when contended: the lock and unlock of an
//! uncontended section were invisible, and two critical sections of one thread ran as one
//! block (a lost update between a read in one section and a write in the next was never
//! found, with or without memory points). As with pthread mutexes, a controlled thread never
//! touches the real lock word; an uncontrolled one calls libgomp.
//!
//! Objects: an `omp_lock_t`'s address; a named critical section's pointer (one per name in
//! the program); the unnamed critical section and the atomic lock, each one object of libpos.

use crate::conn::{self, Me};
use libc::{c_int, c_void};
use pos_sched::event::MutexKind;
use pos_sched::Op;
use std::cell::RefCell;
use std::sync::atomic::AtomicUsize;

/// The unnamed `#pragma omp critical` (libgomp: `default_lock`).
static DEFAULT_CRITICAL: u8 = 0;
/// The lock of `#pragma omp atomic` on types without native atomics (libgomp: `atomic_lock`).
static ATOMIC_LOCK: u8 = 0;

fn addr<T>(p: *const T) -> u64 {
    p as u64
}

fn lock(me: Me, m: u64, kind: MutexKind) -> c_int {
    me.post(Op::Lock { m, kind }).result
}

fn unlock(me: Me, m: u64, kind: MutexKind) -> c_int {
    me.post(Op::Unlock { m, kind }).result
}

thread_local! {
    /// This thread's nestable OpenMP locks and how deep it holds each (for the count
    /// `omp_test_nest_lock` returns).
    static NESTED: RefCell<Vec<(u64, c_int)>> = const { RefCell::new(Vec::new()) };
}

/// Change this thread's depth of nestable lock `m` by `d`; returns the new depth.
fn nest(m: u64, d: c_int) -> c_int {
    let _b = conn::Busy::enter();
    NESTED.with(|n| {
        let mut v = n.borrow_mut();
        let i = match v.iter().position(|e| e.0 == m) {
            Some(i) => i,
            None => {
                v.push((m, 0));
                v.len() - 1
            }
        };
        v[i].1 += d;
        let depth = v[i].1;
        if depth <= 0 {
            v.swap_remove(i);
        }
        depth
    })
}

/// Define the interposer `NAME(args) -> ret` (`#[no_mangle]`): `body` with the calling
/// controlled thread as `me`, and for a thread that is not controlled libgomp's function of
/// the same name (found with `dlvsym` in the symbol versions `VERSIONS`, then `dlsym`).
macro_rules! gomp_point {
    ($(#[$doc:meta])*
     fn $name:ident($($arg:ident: $t:ty),*) $(-> $r:ty)?, $versions:ident => |$me:ident| $body:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As libgomp's function of this name (called by the program or its compiled OpenMP
        /// code).
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $t),*) $(-> $r)? {
            match conn::me() {
                Some($me) => $body,
                None => {
                    static CACHE: AtomicUsize = AtomicUsize::new(0);
                    let f = crate::real::lookup(
                        &CACHE,
                        concat!(stringify!($name), "\0"),
                        $versions,
                    );
                    // SAFETY: libgomp's function of this name has this signature.
                    let f: unsafe extern "C" fn($($t),*) $(-> $r)? = std::mem::transmute(f);
                    f($($arg),*)
                }
            }
        }
    };
}

const OMP3: &[&str] = &["OMP_3.0\0", "OMP_1.0\0"];
const GOMP1: &[&str] = &["GOMP_1.0\0"];

gomp_point! {
    /// `omp_set_lock`: `Op::Lock`.
    fn omp_set_lock(l: *mut c_void), OMP3 => |me| {
        lock(me, addr(l), MutexKind::Normal);
    }
}
gomp_point! {
    /// `omp_unset_lock`: `Op::Unlock`.
    fn omp_unset_lock(l: *mut c_void), OMP3 => |me| {
        unlock(me, addr(l), MutexKind::Normal);
    }
}
gomp_point! {
    /// `omp_test_lock`: `Op::TryLock`; nonzero when it got the lock.
    fn omp_test_lock(l: *mut c_void) -> c_int, OMP3 => |me| {
        let r = me.post(Op::TryLock {
            m: addr(l),
            kind: MutexKind::Normal,
        });
        c_int::from(r.result == 0)
    }
}
gomp_point! {
    /// `omp_set_nest_lock`: `Op::Lock` of a recursive mutex.
    fn omp_set_nest_lock(l: *mut c_void), OMP3 => |me| {
        if lock(me, addr(l), MutexKind::Recursive) == 0 {
            nest(addr(l), 1);
        }
    }
}
gomp_point! {
    /// `omp_unset_nest_lock`: `Op::Unlock` of a recursive mutex.
    fn omp_unset_nest_lock(l: *mut c_void), OMP3 => |me| {
        if unlock(me, addr(l), MutexKind::Recursive) == 0 {
            nest(addr(l), -1);
        }
    }
}
gomp_point! {
    /// `omp_test_nest_lock`: `Op::TryLock` of a recursive mutex; the new nesting depth when
    /// it got the lock, 0 otherwise.
    fn omp_test_nest_lock(l: *mut c_void) -> c_int, OMP3 => |me| {
        let r = me.post(Op::TryLock {
            m: addr(l),
            kind: MutexKind::Recursive,
        });
        if r.result == 0 {
            nest(addr(l), 1)
        } else {
            0
        }
    }
}
gomp_point! {
    /// `GOMP_critical_start` (an unnamed `#pragma omp critical`): `Op::Lock`.
    fn GOMP_critical_start(), GOMP1 => |me| {
        lock(me, addr(&DEFAULT_CRITICAL), MutexKind::Normal);
    }
}
gomp_point! {
    /// `GOMP_critical_end`: `Op::Unlock`.
    fn GOMP_critical_end(), GOMP1 => |me| {
        unlock(me, addr(&DEFAULT_CRITICAL), MutexKind::Normal);
    }
}
gomp_point! {
    /// `GOMP_critical_name_start` (`#pragma omp critical (name)`): `Op::Lock` of the name's
    /// pointer.
    fn GOMP_critical_name_start(p: *mut *mut c_void), GOMP1 => |me| {
        lock(me, addr(p), MutexKind::Normal);
    }
}
gomp_point! {
    /// `GOMP_critical_name_end`: `Op::Unlock` of the name's pointer.
    fn GOMP_critical_name_end(p: *mut *mut c_void), GOMP1 => |me| {
        unlock(me, addr(p), MutexKind::Normal);
    }
}
gomp_point! {
    /// `GOMP_atomic_start` (`#pragma omp atomic` on a type without native atomics):
    /// `Op::Lock`.
    fn GOMP_atomic_start(), GOMP1 => |me| {
        lock(me, addr(&ATOMIC_LOCK), MutexKind::Normal);
    }
}
gomp_point! {
    /// `GOMP_atomic_end`: `Op::Unlock`.
    fn GOMP_atomic_end(), GOMP1 => |me| {
        unlock(me, addr(&ATOMIC_LOCK), MutexKind::Normal);
    }
}

/// Define the interposer of libgomp's variadic doacross wait `NAME(first, ...)`: a
/// controlled thread tells the coordinator it goes on outside control ([`Msg::Leaving`]),
/// then libgomp's function runs. libgomp waits for the sink iteration by spinning on memory
/// (no futex, no call libpos sees): a spin-wait was set aside only after a quarter of the
/// step timeout, every iteration, and two threads handing iterations to each other were a
/// hang in a third of the runs (probe 19's `omp_doacross`). The six integer argument
/// registers are forwarded, which covers loop nests of up to six dimensions.
macro_rules! doacross_wait {
    ($(#[$doc:meta])* fn $name:ident($t:ty)) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As libgomp's function of this name, called by compiled OpenMP code with at most
        /// six arguments.
        #[no_mangle]
        pub unsafe extern "C" fn $name(a0: $t, a1: $t, a2: $t, a3: $t, a4: $t, a5: $t) {
            if let Some(me) = conn::me() {
                crate::affinity::free_all(0);
                me.notify(&pos_sched::protocol::Msg::Leaving);
            }
            static CACHE: AtomicUsize = AtomicUsize::new(0);
            let f = crate::real::lookup(&CACHE, concat!(stringify!($name), "\0"), GOMP45);
            // SAFETY: libgomp's function of this name takes `first, ...`.
            let f: unsafe extern "C" fn($t, ...) = std::mem::transmute(f);
            f(a0, a1, a2, a3, a4, a5)
        }
    };
}

const GOMP45: &[&str] = &["GOMP_4.5\0"];

doacross_wait! {
    /// `GOMP_doacross_wait` (`#pragma omp ordered depend(sink: ...)`, `long` iterations).
    fn GOMP_doacross_wait(libc::c_long)
}
doacross_wait! {
    /// `GOMP_doacross_ull_wait` (the same with `unsigned long long` iterations).
    fn GOMP_doacross_ull_wait(u64)
}
