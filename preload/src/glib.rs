//! GLib's `GMutex` and `GCond` entry points as scheduling points.
//!
//! libglib implements `GMutex` as an atomic word with a futex only when contended, and
//! `GCond` as a counter word and a futex wait (`gthread-posix.c`, "futex" flavour). The
//! futexes are modelled ([`crate::futex`]), but an uncontended `g_mutex_lock` makes no system
//! call: a thread went from one lock to the next with no point between them, and neither an
//! ABBA deadlock nor a lost `g_cond_signal` before `g_cond_wait` could be scheduled (probe 20:
//! 0 hits in 1,300 tries). The calls the program (or another library) makes through its PLT
//! now post the atomic access each begins with, on the object's own word, and then run
//! GLib's code unchanged: the lock word, the contention futexes and the condition's counter
//! stay GLib's, as for a program whose own atomics are instrumented. libglib's calls to
//! itself are bound inside the library (`-Bsymbolic-functions` on Debian) and stay as they
//! were. `GRecMutex` and `GRWLock` are pthread objects underneath, modelled already.

use crate::conn;
use libc::{c_int, c_void};
use pos_sched::{MemOrder, Op};

/// GLib's `gboolean`.
type Gboolean = c_int;

/// The atomic read-modify-write of a 4-byte word at `p` (the lock word of a `GMutex`, the
/// counter of a `GCond`) that the call begins with.
fn rmw(p: *const c_void, fail: Option<MemOrder>) -> Op {
    Op::AtomicRmw {
        addr: p as u64,
        size: 4,
        mo: MemOrder::SeqCst,
        fail,
    }
}

/// The atomic read of a `GCond`'s counter at `c` that a wait begins with.
fn counter_read(c: *const c_void) -> Op {
    Op::AtomicLoad {
        addr: c as u64,
        size: 4,
        mo: MemOrder::SeqCst,
    }
}

/// Post `op` for a controlled thread (a scheduling point), nothing for another.
fn point(op: impl FnOnce() -> Op) {
    if let Some(me) = conn::me() {
        me.post(op());
    }
}

mod real {
    use super::Gboolean;
    use libc::c_void;
    use std::sync::atomic::AtomicUsize;

    /// libglib's function `name` (NUL-terminated): the next definition after libpos, or,
    /// when libglib came with a `dlopen` of `RTLD_LOCAL` (a plugin, a Python extension
    /// module) and so is not in the global scope, its own: the library's callers still reach
    /// libpos's function first, and a lookup of the next one alone failed and stopped the
    /// program. Cached: libglib is never unloaded (`DF_1_NODELETE`).
    fn lookup(cache: &AtomicUsize, name: &'static str) -> usize {
        crate::real::lookup_or_in(cache, name, &[], Some(c"libglib-2.0.so.0"))
    }

    /// Define `real::NAME(args)` forwarding to libglib's function of this name.
    macro_rules! glib_fns {
        ($( fn $name:ident($($arg:ident: $t:ty),*) -> $r:ty; )*) => {
            $(
                /// Forward to libglib's function of this name.
                ///
                /// # Safety
                /// As that function.
                pub unsafe fn $name($($arg: $t),*) -> $r {
                    static CACHE: AtomicUsize = AtomicUsize::new(0);
                    let f = lookup(&CACHE, concat!(stringify!($name), "\0"));
                    // SAFETY: libglib's function has this C signature (glib/gthread.h).
                    let f: unsafe extern "C" fn($($t),*) -> $r = std::mem::transmute(f);
                    f($($arg),*)
                }
            )*
        };
    }

    glib_fns! {
        fn g_mutex_lock(m: *mut c_void) -> ();
        fn g_mutex_unlock(m: *mut c_void) -> ();
        fn g_mutex_trylock(m: *mut c_void) -> Gboolean;
        fn g_cond_wait(c: *mut c_void, m: *mut c_void) -> ();
        fn g_cond_wait_until(c: *mut c_void, m: *mut c_void, end_time: i64) -> Gboolean;
        fn g_cond_signal(c: *mut c_void) -> ();
        fn g_cond_broadcast(c: *mut c_void) -> ();
    }
}

/// `g_mutex_lock`: a point at its exchange of the lock word, then GLib's lock.
///
/// # Safety
/// As `g_mutex_lock`: `m` points to a `GMutex`.
#[no_mangle]
pub unsafe extern "C" fn g_mutex_lock(m: *mut c_void) {
    point(|| rmw(m, None));
    real::g_mutex_lock(m)
}

/// `g_mutex_unlock`: a point at its exchange of the lock word, then GLib's unlock (which
/// wakes a waiter through the modelled futex when there is one).
///
/// # Safety
/// As `g_mutex_unlock`.
#[no_mangle]
pub unsafe extern "C" fn g_mutex_unlock(m: *mut c_void) {
    point(|| rmw(m, None));
    real::g_mutex_unlock(m)
}

/// `g_mutex_trylock`: a point at its compare-exchange of the lock word, then GLib's.
///
/// # Safety
/// As `g_mutex_trylock`.
#[no_mangle]
pub unsafe extern "C" fn g_mutex_trylock(m: *mut c_void) -> Gboolean {
    point(|| rmw(m, Some(MemOrder::SeqCst)));
    real::g_mutex_trylock(m)
}

/// `g_cond_wait`: a point at its read of the condition's counter (a signal before it is
/// lost, one after it ends the futex wait), then GLib's wait.
///
/// # Safety
/// As `g_cond_wait`: `c` points to a `GCond`, `m` to the `GMutex` the caller holds.
#[no_mangle]
pub unsafe extern "C" fn g_cond_wait(c: *mut c_void, m: *mut c_void) {
    point(|| counter_read(c));
    real::g_cond_wait(c, m)
}

/// `g_cond_wait_until`: as [`g_cond_wait`]; its deadline is read from the interposed
/// monotonic clock and its futex wait times out in virtual time ([`crate::futex`]).
///
/// # Safety
/// As `g_cond_wait_until`.
#[no_mangle]
pub unsafe extern "C" fn g_cond_wait_until(c: *mut c_void, m: *mut c_void, end: i64) -> Gboolean {
    point(|| counter_read(c));
    real::g_cond_wait_until(c, m, end)
}

/// `g_cond_signal`: a point at its increment of the counter, then GLib's signal.
///
/// # Safety
/// As `g_cond_signal`.
#[no_mangle]
pub unsafe extern "C" fn g_cond_signal(c: *mut c_void) {
    point(|| rmw(c, None));
    real::g_cond_signal(c)
}

/// `g_cond_broadcast`: a point at its increment of the counter, then GLib's broadcast.
///
/// # Safety
/// As `g_cond_broadcast`.
#[no_mangle]
pub unsafe extern "C" fn g_cond_broadcast(c: *mut c_void) {
    point(|| rmw(c, None));
    real::g_cond_broadcast(c)
}
