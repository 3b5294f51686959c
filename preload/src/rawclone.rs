//! `clone(2)` called by the program itself (not through `pthread_create`, whose glibc calls
//! `clone3` internally): the task runs outside control, and its exit wakes the word given
//! as `CLONE_CHILD_CLEARTID` in the kernel, where the model never sees it.
//!
//! A thread that waits for such a task with `FUTEX_WAIT` on that word used to be a false
//! deadlock whenever the task had not exited yet (probe 19's `clone_vm_futex`: deadlock in
//! 34 to 46 of 50 runs): the model knew no thread that could wake it. Now the words are
//! remembered here, and a wait on one goes to the kernel while the waiter keeps its turn:
//! the task ends on its own, so the step ends when it does, and the schedule replays. A
//! task that runs past the step timeout gets the waiter set aside, as any call
//! blocked outside control does.

use libc::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The `CLONE_CHILD_CLEARTID` words of tasks cloned with a shared address space. A program
/// clones a handful; past the table's end a word is not remembered (and a wait on it is
/// modelled, as before).
static WORDS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];

/// Remember `word`, which the kernel will clear and wake when a task exits.
fn remember(word: usize) {
    if word == 0 || cleared_by_kernel(word) {
        return;
    }
    for slot in &WORDS {
        if slot
            .compare_exchange(0, word, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Whether the kernel wakes `word` at a cloned task's exit (see the module doc).
pub fn cleared_by_kernel(word: usize) -> bool {
    word != 0 && WORDS.iter().any(|s| s.load(Ordering::SeqCst) == word)
}

type TaskFn = extern "C" fn(*mut c_void) -> c_int;

/// `clone`: remembers the `CLONE_CHILD_CLEARTID` word of a task that shares this address
/// space, then forwards every argument. glibc's `clone` is variadic (`ptid, tls, ctid`
/// follow `arg`); on x86-64 the seven arguments travel as a fixed-argument call passes them
/// (six registers, then the stack), so they are declared and forwarded as fixed.
///
/// # Safety
/// As `clone(2)`'s glibc wrapper.
#[no_mangle]
pub unsafe extern "C" fn clone(
    f: TaskFn,
    stack: *mut c_void,
    flags: c_int,
    arg: *mut c_void,
    ptid: *mut libc::pid_t,
    tls: *mut c_void,
    ctid: *mut libc::pid_t,
) -> c_int {
    if flags & libc::CLONE_VM != 0 && flags & libc::CLONE_CHILD_CLEARTID != 0 {
        remember(ctid as usize);
    }
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let real = crate::real::lookup(&CACHE, "clone\0", &[]);
    // SAFETY: glibc's `clone`, called with the arguments its caller gave.
    let real: unsafe extern "C" fn(
        TaskFn,
        *mut c_void,
        c_int,
        *mut c_void,
        *mut libc::pid_t,
        *mut c_void,
        *mut libc::pid_t,
    ) -> c_int = std::mem::transmute(real);
    real(f, stack, flags, arg, ptid, tls, ctid)
}
