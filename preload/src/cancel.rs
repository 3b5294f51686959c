//! Deferred thread cancellation: `pthread_cancel`, `pthread_testcancel`,
//! `pthread_setcancelstate` and `pthread_setcanceltype`.
//!
//! The coordinator's model decides when a cancellation request is acted on: at the target's
//! next cancellation point that is a scheduling point (condvar waits, joins, semaphore
//! waits, sleeps, `pthread_testcancel`), where the grant's result is
//! [`code::CANCELED`] (see `pos_sched::state`). Real `pthread_cancel` is never called for a
//! controlled thread. [`act`] then leaves the thread as glibc's cancellation does, through
//! the real `pthread_exit(PTHREAD_CANCELED)`: its forced unwind runs the cleanup handlers
//! (`pthread_cleanup_push`, C++ destructors) while the thread is still controlled, so their
//! unlocks are scheduling points, and `pthread_join` returns `PTHREAD_CANCELED`. The thread's
//! `Exit` is posted at the very end, from a thread-specific-data destructor ([`on_exit`]),
//! which glibc runs after the unwind.
//!
//! Asynchronous cancellation (`PTHREAD_CANCEL_ASYNCHRONOUS`) cannot be modelled step by
//! step (a thread could be cancelled anywhere in its uncontrolled code). Setting it posts
//! `Op::SetCancelType`; a thread that then computes without scheduling points is set aside
//! by the runner like one blocked outside control, and `pthread_cancel` gives it the real
//! cancellation, which glibc acts on at once wherever it is (such runs are `partial`). It is
//! said once per process with an uncontrolled note ([`ASYNC_NOTE`], which the runner says
//! once per program); a run that still waits for such a thread until the step timeout is
//! reported as an error (unsupported), not as a hang of the program.

use crate::conn::{self, Busy};
use crate::real;
use libc::{c_int, c_void, pthread_t};
use pos_sched::state::code;
use pos_sched::Op;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// glibc's `<pthread.h>` values (not all exposed by the libc crate).
const PTHREAD_CANCEL_ENABLE: c_int = 0;
const PTHREAD_CANCEL_DISABLE: c_int = 1;
const PTHREAD_CANCEL_DEFERRED: c_int = 0;
const PTHREAD_CANCEL_ASYNCHRONOUS: c_int = 1;
/// `PTHREAD_CANCELED`: `((void *) -1)`.
const PTHREAD_CANCELED: *mut c_void = usize::MAX as *mut c_void;

/// The key whose destructor posts a cancelled thread's `Exit`; 0 until created (key 0 is
/// glibc's first key and may be ours: stored as key + 1).
static EXIT_KEY: AtomicU32 = AtomicU32::new(0);

/// The note about asynchronous cancellation (after the uncontrolled-note prefix); the runner
/// recognises it (`runner/src/suite/outcome.rs`, `ASYNC_CANCEL`) to tell a run that waited for an
/// asynchronous cancellation from a hang of the program.
const ASYNC_NOTE: &str = "asynchronous cancellation (PTHREAD_CANCEL_ASYNCHRONOUS): a thread \
                          computing with it runs outside control (partial runs) and is \
                          cancelled for real";

/// Controlled threads of this process with a cancellation request in the model that the
/// real cancellation has not been given yet (see [`deliver_requested`]), and whether there
/// is any (the fast path of every post).
static REQUESTED: std::sync::Mutex<Vec<pos_sched::Tid>> = std::sync::Mutex::new(Vec::new());
static ANY_REQUESTED: AtomicBool = AtomicBool::new(false);

/// The asynchronous-cancellation message was printed.
static ASYNC_SAID: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// How many rounds of thread-specific-data destructors have called [`on_exit`].
    static EXIT_ROUNDS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// glibc's `PTHREAD_DESTRUCTOR_ITERATIONS`: the rounds of destructor calls at thread exit.
const DESTRUCTOR_ROUNDS: u32 = 4;

/// Destructor of [`EXIT_KEY`]: the thread has unwound (cleanup handlers ran) or returned,
/// its C++/Rust thread-local destructors ran; now it exits in the model. glibc calls the
/// destructors of a round in key order, and this key may come before the program's: it
/// re-arms itself for every round but the last, so that the program's destructors of the
/// first rounds run under control too.
extern "C" fn on_exit(_: *mut c_void) {
    let round = EXIT_ROUNDS.with(|r| {
        r.set(r.get() + 1);
        r.get()
    });
    if round < DESTRUCTOR_ROUNDS && crate::conn::me().is_some() {
        arm_exit();
        return;
    }
    crate::thread::exit_thread();
}

/// The key of [`on_exit`], created on first use.
fn exit_key() -> libc::pthread_key_t {
    let k = EXIT_KEY.load(Ordering::Acquire);
    if k != 0 {
        return k - 1;
    }
    let _b = Busy::enter();
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: key is a valid out-pointer; on_exit has the destructor signature.
    if unsafe { libc::pthread_key_create(&mut key, Some(on_exit)) } != 0 {
        conn::die("cannot create the key for cancelled threads (pthread_key_create)");
    }
    match EXIT_KEY.compare_exchange(0, key + 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => key,
        Err(other) => {
            // SAFETY: our own key, never used.
            unsafe { libc::pthread_key_delete(key) };
            other - 1
        }
    }
}

/// A cancellation point of the calling thread acted on its cancellation request (the grant
/// said [`code::CANCELED`]): exit as cancelled. The callers' frames between the program and
/// here hold no values with destructors, so the forced unwind passes through them.
pub fn act() -> ! {
    arm_exit();
    // SAFETY: the real pthread_exit: unwinds this thread (cleanup handlers) and ends it.
    unsafe { real::pthread_exit(PTHREAD_CANCELED) }
}

/// Make the calling thread's `Exit` be posted at its very end, however it ends (a return,
/// `pthread_exit`, a cancellation): [`on_exit`] runs after the unwind and the thread-local
/// destructors. Every controlled thread arms it at its start, since a thread blocked outside
/// control is cancelled by the real `pthread_cancel` (see [`pthread_cancel`]) where libpos
/// cannot intervene.
pub fn arm_exit() {
    let key = exit_key();
    // SAFETY: any non-null value makes glibc call the destructor at thread exit.
    unsafe { libc::pthread_setspecific(key, std::ptr::dangling::<c_void>()) };
}

/// `pthread_cancel`: a scheduling point (`Op::Cancel`) that marks the target cancelled in
/// the model; the real function for threads that are not controlled, and for a target the
/// coordinator has set aside as blocked outside control ([`code::CANCEL_OUTSIDE`]: glibc
/// then cancels it in its blocking call, e.g. a reader in `read` at shutdown, and its
/// cleanup handlers rejoin control with their first post).
///
/// # Safety
/// As `pthread_cancel(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_cancel(t: pthread_t) -> c_int {
    let me = conn::me();
    let target = if me.is_some() {
        crate::thread::controlled_tid(t)
    } else {
        None
    };
    match (me, target) {
        (Some(me), Some(target)) => match me.post(Op::Cancel { target }).result {
            code::CANCEL_OUTSIDE => real::pthread_cancel(t),
            code::OK => {
                let _b = Busy::enter();
                REQUESTED
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(target);
                ANY_REQUESTED.store(true, Ordering::Release);
                code::OK
            }
            r => r,
        },
        _ => real::pthread_cancel(t),
    }
}

/// `pthread_testcancel`: a cancellation point (`Op::TestCancel`).
///
/// # Safety
/// As `pthread_testcancel(3)`.
#[no_mangle]
pub unsafe extern "C-unwind" fn pthread_testcancel() {
    match conn::me() {
        None => real::pthread_testcancel(),
        Some(me) => {
            me.post(Op::TestCancel);
        }
    }
}

/// `pthread_setcancelstate`: `Op::SetCancelState` (the model keeps requests pending while
/// disabled), then the real function for the old state and argument checks.
///
/// # Safety
/// As `pthread_setcancelstate(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int {
    if let Some(me) = conn::me() {
        if state == PTHREAD_CANCEL_ENABLE || state == PTHREAD_CANCEL_DISABLE {
            me.post(Op::SetCancelState {
                enabled: state == PTHREAD_CANCEL_ENABLE,
            });
        }
    }
    real::pthread_setcancelstate(state, old)
}

/// `pthread_setcanceltype`: the real function; asynchronous cancellation of a controlled
/// thread is reported once as unsupported.
///
/// # Safety
/// As `pthread_setcanceltype(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_setcanceltype(kind: c_int, old: *mut c_int) -> c_int {
    if let Some(me) = conn::me() {
        if kind == PTHREAD_CANCEL_ASYNCHRONOUS || kind == PTHREAD_CANCEL_DEFERRED {
            me.post(Op::SetCancelType {
                asynchronous: kind == PTHREAD_CANCEL_ASYNCHRONOUS,
            });
        }
        if kind == PTHREAD_CANCEL_ASYNCHRONOUS && !ASYNC_SAID.swap(true, Ordering::Relaxed) {
            let _b = Busy::enter();
            crate::process::say_uncontrolled(ASYNC_NOTE);
        }
    }
    real::pthread_setcanceltype(kind, old)
}

/// After each grant of thread `me`: if another thread requested its cancellation (and no
/// cancellation point has acted on it yet), give it the real cancellation too, once. The
/// model acts at the cancellation points libpos controls; glibc now also acts at the others
/// (a `read`, `poll`, `accept`... where the thread would block outside control and could
/// otherwise never be cancelled), whichever comes first, honouring the thread's cancel
/// state. libpos's own I/O runs with cancellation disabled, so it is never acted on there.
#[inline]
pub fn deliver_requested(me: pos_sched::Tid) {
    if !ANY_REQUESTED.load(Ordering::Acquire) {
        return;
    }
    let mine = {
        let _b = Busy::enter();
        let mut v = REQUESTED.lock().unwrap_or_else(|e| e.into_inner());
        let at = v.iter().position(|&t| t == me);
        at.map(|i| v.swap_remove(i)).is_some()
    };
    if mine {
        // SAFETY: the calling thread's own handle; deferred: only sets the request.
        unsafe { real::pthread_cancel(libc::pthread_self()) };
    }
}

/// Whether `result` is the grant of a cancellation point that acted on a cancellation.
#[inline]
pub fn is_cancelled(result: i32) -> bool {
    result == code::CANCELED
}
