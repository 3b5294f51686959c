//! C11 `<threads.h>`: `thrd_*`, `mtx_*`, `cnd_*` and `call_once` as scheduling points.
//!
//! glibc (2.34 and later) implements these on its *internal* pthread symbols, so the
//! pthread interposers never see them: we interpose them here and map each onto the
//! pthread interposer glibc itself would use (same `Op`s, same trampoline, same timed-wait
//! handling), translating the result to the C11 codes. The layouts allow it: in glibc
//! `thrd_t` is a `pthread_t`, and `mtx_t`, `cnd_t` and `once_flag` are unions (or a struct)
//! over the storage of `pthread_mutex_t`, `pthread_cond_t` and `pthread_once_t`, which
//! glibc's own C11 functions cast to the pthread types. `tss_*` are no scheduling points
//! and stay glibc's.

use crate::{process, sync, thread};
use libc::{c_int, c_void, pthread_cond_t, pthread_mutex_t, pthread_once_t, pthread_t, timespec};

/// glibc's C11 result codes (`<threads.h>`).
pub const THRD_SUCCESS: c_int = 0;
pub const THRD_BUSY: c_int = 1;
pub const THRD_ERROR: c_int = 2;
pub const THRD_NOMEM: c_int = 3;
pub const THRD_TIMEDOUT: c_int = 4;

/// `mtx_init` types.
const MTX_PLAIN: c_int = 0;
const MTX_RECURSIVE: c_int = 1;
const MTX_TIMED: c_int = 2;

/// A pthread error code as a C11 result, as glibc maps it (`thrd_err_map`).
fn c11(err: c_int) -> c_int {
    match err {
        0 => THRD_SUCCESS,
        libc::ENOMEM => THRD_NOMEM,
        libc::ETIMEDOUT => THRD_TIMEDOUT,
        libc::EBUSY => THRD_BUSY,
        _ => THRD_ERROR,
    }
}

/// A C11 thread's start routine (returns `int`).
type ThrdStart = extern "C-unwind" fn(*mut c_void) -> c_int;

/// What [`c11_start`] runs: the program's routine and argument.
struct C11Start {
    func: ThrdStart,
    arg: *mut c_void,
}

/// Start routine given to `pthread_create` for a C11 thread: runs the `int` routine and
/// returns its value as the thread's result, as glibc stores it (`thrd_join` reads it back).
/// `C-unwind`: `thrd_exit` unwinds through it; it holds no value with a destructor then.
extern "C-unwind" fn c11_start(p: *mut c_void) -> *mut c_void {
    // SAFETY: p is the Box<C11Start> leaked by thrd_create for this thread alone.
    let C11Start { func, arg } = *unsafe { Box::from_raw(p as *mut C11Start) };
    func(arg) as isize as *mut c_void
}

/// `thrd_create`: `pthread_create` (a scheduling point; the child starts controlled).
///
/// # Safety
/// As `thrd_create(3)`.
#[no_mangle]
pub unsafe extern "C" fn thrd_create(
    thr: *mut pthread_t,
    func: ThrdStart,
    arg: *mut c_void,
) -> c_int {
    let start = {
        let _b = crate::conn::Busy::enter();
        Box::into_raw(Box::new(C11Start { func, arg }))
    };
    // SAFETY: same calling convention; C-unwind only additionally allows unwinding out.
    let routine = std::mem::transmute::<
        extern "C-unwind" fn(*mut c_void) -> *mut c_void,
        extern "C" fn(*mut c_void) -> *mut c_void,
    >(c11_start);
    let r = thread::pthread_create(thr, std::ptr::null(), routine, start.cast());
    if r != 0 {
        let _b = crate::conn::Busy::enter();
        drop(Box::from_raw(start));
    }
    c11(r)
}

/// `thrd_join`: `pthread_join`; the thread's `int` result goes to `res`.
///
/// # Safety
/// As `thrd_join(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn thrd_join(thr: pthread_t, res: *mut c_int) -> c_int {
    let mut ret: *mut c_void = std::ptr::null_mut();
    let r = thread::pthread_join(thr, &mut ret);
    if r == 0 && !res.is_null() {
        *res = ret as isize as c_int;
    }
    c11(r)
}

/// `thrd_detach`: `pthread_detach`.
///
/// # Safety
/// As `thrd_detach(3)`.
#[no_mangle]
pub unsafe extern "C" fn thrd_detach(thr: pthread_t) -> c_int {
    c11(thread::pthread_detach(thr))
}

/// `thrd_exit`: `pthread_exit` with the `int` result.
///
/// # Safety
/// As `thrd_exit(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn thrd_exit(res: c_int) -> ! {
    thread::pthread_exit(res as isize as *mut c_void)
}

/// `thrd_yield`: `sched_yield` (glibc's makes the system call directly).
///
/// # Safety
/// As `thrd_yield(3)`.
#[no_mangle]
pub unsafe extern "C" fn thrd_yield() {
    process::sched_yield();
}

/// `thrd_sleep`: `nanosleep`; 0, -1 when interrupted, another negative value on error.
///
/// # Safety
/// As `thrd_sleep(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn thrd_sleep(duration: *const timespec, rem: *mut timespec) -> c_int {
    match process::nanosleep(duration, rem) {
        0 => 0,
        _ if crate::conn::errno() == libc::EINTR => -1,
        _ => -2,
    }
}

/// `mtx_init`: `pthread_mutex_init`, recursive for `mtx_recursive` (as glibc); the kind is
/// then read back from the mutex like any pthread mutex's.
///
/// # Safety
/// As `mtx_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_init(m: *mut pthread_mutex_t, kind: c_int) -> c_int {
    let recursive = match kind {
        MTX_PLAIN | MTX_TIMED => false,
        k if k == MTX_PLAIN | MTX_RECURSIVE || k == MTX_TIMED | MTX_RECURSIVE => true,
        _ => return THRD_ERROR,
    };
    let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
    libc::pthread_mutexattr_init(&mut attr);
    if recursive {
        libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
    }
    let r = libc::pthread_mutex_init(m, &attr);
    libc::pthread_mutexattr_destroy(&mut attr);
    c11(r)
}

/// `mtx_lock`: `pthread_mutex_lock`.
///
/// # Safety
/// As `mtx_lock(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_lock(m: *mut pthread_mutex_t) -> c_int {
    c11(sync::pthread_mutex_lock(m))
}

/// `mtx_trylock`: `pthread_mutex_trylock` (`thrd_busy` when held).
///
/// # Safety
/// As `mtx_trylock(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_trylock(m: *mut pthread_mutex_t) -> c_int {
    c11(sync::pthread_mutex_trylock(m))
}

/// `mtx_timedlock`: `pthread_mutex_timedlock` (`thrd_timedout` when it times out).
///
/// # Safety
/// As `mtx_timedlock(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_timedlock(m: *mut pthread_mutex_t, t: *const timespec) -> c_int {
    c11(sync::pthread_mutex_timedlock(m, t))
}

/// `mtx_unlock`: `pthread_mutex_unlock`.
///
/// # Safety
/// As `mtx_unlock(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_unlock(m: *mut pthread_mutex_t) -> c_int {
    c11(sync::pthread_mutex_unlock(m))
}

/// `mtx_destroy`: `pthread_mutex_destroy`.
///
/// # Safety
/// As `mtx_destroy(3)`.
#[no_mangle]
pub unsafe extern "C" fn mtx_destroy(m: *mut pthread_mutex_t) {
    libc::pthread_mutex_destroy(m);
}

/// `cnd_init`: `pthread_cond_init`.
///
/// # Safety
/// As `cnd_init(3)`.
#[no_mangle]
pub unsafe extern "C" fn cnd_init(c: *mut pthread_cond_t) -> c_int {
    c11(sync::pthread_cond_init(c, std::ptr::null()))
}

/// `cnd_signal`: `pthread_cond_signal`.
///
/// # Safety
/// As `cnd_signal(3)`.
#[no_mangle]
pub unsafe extern "C" fn cnd_signal(c: *mut pthread_cond_t) -> c_int {
    c11(sync::pthread_cond_signal(c))
}

/// `cnd_broadcast`: `pthread_cond_broadcast`.
///
/// # Safety
/// As `cnd_broadcast(3)`.
#[no_mangle]
pub unsafe extern "C" fn cnd_broadcast(c: *mut pthread_cond_t) -> c_int {
    c11(sync::pthread_cond_broadcast(c))
}

/// `cnd_wait`: `pthread_cond_wait`.
///
/// # Safety
/// As `cnd_wait(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_wait(c: *mut pthread_cond_t, m: *mut pthread_mutex_t) -> c_int {
    c11(sync::pthread_cond_wait(c, m))
}

/// `cnd_timedwait`: `pthread_cond_timedwait` (`thrd_timedout` when it times out).
///
/// # Safety
/// As `cnd_timedwait(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn cnd_timedwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    t: *const timespec,
) -> c_int {
    c11(sync::pthread_cond_timedwait(c, m, t))
}

/// `cnd_destroy`: `pthread_cond_destroy`.
///
/// # Safety
/// As `cnd_destroy(3)`.
#[no_mangle]
pub unsafe extern "C" fn cnd_destroy(c: *mut pthread_cond_t) {
    sync::pthread_cond_destroy(c);
}

/// `call_once`: `pthread_once` (`once_flag` wraps a `pthread_once_t`).
///
/// # Safety
/// As `call_once(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn call_once(flag: *mut pthread_once_t, func: extern "C" fn()) {
    sync::pthread_once(flag, func);
}
