//! Each run on one CPU (issue 15). Under control one thread runs at a time, yet the kernel
//! wakes each granted thread on whichever core is idle: every hand-over then crosses cores,
//! and every stack `mmap`/`munmap` of a thread's creation and exit interrupts the other core
//! to flush its TLB. With the runner's `POSCHECK_PIN=1`, a run's process keeps to the CPU it
//! starts on ([`pin_here`], once per run, before the program's code; its threads inherit
//! the mask): 12–25 % more odpor executions per second on readers(8), lastzero(10),
//! indexer(14), filesystem(18) and wronglock, 13–15 % more runs of `poscheck bench`'s
//! two-thread program (benchmarks/results/2026-11-29-pin/).
//!
//! The program does not see the pin. `sched_getaffinity` and `pthread_getaffinity_np` of its
//! own threads report the mask the process started with (libgomp and Rust's
//! `available_parallelism` size their thread pools from it), and an image it execs or spawns
//! (`execve`, `posix_spawn`, `system`, `popen`) starts with that mask too. Once the program
//! sets an affinity of its own, every call reports the kernel's masks as they are. A thread
//! that goes on outside control (set aside, or leaving for libgomp's doacross wait) frees the
//! whole process ([`free_all`]): it may spin while the others run.

use crate::real;
use libc::{c_int, cpu_set_t, pid_t, size_t};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

/// Words of a `cpu_set_t` (1,024 CPUs).
const WORDS: usize = std::mem::size_of::<cpu_set_t>() / 8;
const SIZE: size_t = std::mem::size_of::<cpu_set_t>();

/// [`pos_sched::protocol::ENV_PIN`] as `getenv` takes it (read without the heap).
const PIN_VAR: &std::ffi::CStr = c"POSCHECK_PIN";

/// The mask the process had before [`pin_here`].
static ORIGINAL: [AtomicU64; WORDS] = [const { AtomicU64::new(0) }; WORDS];
/// The CPU the run is pinned to, or -1.
static CPU: AtomicI32 = AtomicI32::new(-1);
/// The pin is in place and hidden: the program has not set an affinity of its own.
static HIDDEN: AtomicBool = AtomicBool::new(false);

fn original() -> cpu_set_t {
    let mut w = [0u64; WORDS];
    for (d, s) in w.iter_mut().zip(ORIGINAL.iter()) {
        *d = s.load(Ordering::Relaxed);
    }
    // SAFETY: cpu_set_t is plain bits of this size.
    unsafe { std::mem::transmute_copy(&w) }
}

/// The mask of `cpu` alone.
fn only(cpu: c_int) -> cpu_set_t {
    // SAFETY: a plain bit set, zeroed, then one bit in range (callers pass a CPU the kernel
    // reported).
    unsafe {
        let mut set: cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        set
    }
}

/// Set thread `tid`'s mask (0: the caller's).
fn set_mask(tid: pid_t, set: &cpu_set_t) -> bool {
    // SAFETY: a set of the full size.
    unsafe { real::sched_setaffinity(tid, SIZE, set) == 0 }
}

/// Under the runner with `POSCHECK_PIN=1`: keep this process (its one thread, and so every
/// thread it creates) on the CPU it runs on now. Called once per run, in the process that
/// becomes the program, while it has a single thread.
pub fn pin_here() {
    // SAFETY: getenv with a NUL-terminated name; the value is read at once.
    let on = unsafe {
        let v = libc::getenv(PIN_VAR.as_ptr());
        !v.is_null() && *v == b'1' as libc::c_char
    };
    if !on {
        return;
    }
    // SAFETY: the calling thread's mask into a set of the full size; sched_getcpu has no
    // preconditions.
    let (mask, cpu) = unsafe {
        let mut mask: cpu_set_t = std::mem::zeroed();
        if real::sched_getaffinity(0, SIZE, &mut mask) != 0 {
            return;
        }
        (mask, libc::sched_getcpu())
    };
    if cpu < 0 || cpu as usize >= WORDS * 64 {
        return;
    }
    // SAFETY: bit tests on a plain set, `cpu` in range.
    if unsafe { !libc::CPU_ISSET(cpu as usize, &mask) || libc::CPU_COUNT(&mask) == 1 } {
        return; // not one of ours (a race with a change of mask), or pinned already
    }
    // SAFETY: cpu_set_t is plain bits of this size.
    let words: [u64; WORDS] = unsafe { std::mem::transmute_copy(&mask) };
    for (d, s) in ORIGINAL.iter().zip(words) {
        d.store(s, Ordering::Relaxed);
    }
    if set_mask(0, &only(cpu)) {
        CPU.store(cpu, Ordering::Relaxed);
        HIDDEN.store(true, Ordering::SeqCst);
    }
}

/// Whether `pid` (as the affinity calls take it: 0 is the caller) is a thread of this
/// process.
fn ours(pid: pid_t) -> bool {
    pid == 0 || crate::procfs::our_thread(pid)
}

/// Report the original mask in `mask` (`size` bytes, which the real call accepted).
///
/// # Safety
/// `mask` points to `size` writable bytes.
unsafe fn report(size: size_t, mask: *mut cpu_set_t) {
    let set = original();
    std::ptr::copy_nonoverlapping(
        (&set as *const cpu_set_t).cast::<u8>(),
        mask.cast::<u8>(),
        size.min(SIZE),
    );
}

/// The program set an affinity: from now on it sees the kernel's masks.
fn program_chose() {
    HIDDEN.store(false, Ordering::SeqCst);
}

/// A thread goes on outside control (set aside, or leaving for libgomp's doacross wait): the
/// run is no longer one thread at a time, so every thread of the process may run on any of
/// the original CPUs from now on. The thread that left (`leaver`, a kernel thread id; 0: the
/// caller) is first moved off the run's CPU, when there is another, and only the first one.
/// Measured on libgomp's doacross test (`corpus_omp`), 0.8–1.0 s without the pin: never
/// freed, 163 s (two spinners on one core); only the thread that left freed, 3.3–3.8 s (the
/// next grantee, still pinned, shared its core); everyone freed, 2.6–2.9 s (a spinner stays
/// on the core until the kernel's balancing moves it, about 10 ms a run); every leaver
/// moved off, 92–106 s (two spinners that wait for each other on the same other core); this,
/// 0.7–1.6 s.
pub fn free_all(leaver: u32) {
    let cpu = CPU.swap(-1, Ordering::SeqCst);
    if !HIDDEN.load(Ordering::SeqCst) || cpu < 0 {
        return;
    }
    let all = original();
    let mut others = all;
    // SAFETY: bit operations on a plain set, `cpu` in range (it was pinned).
    if unsafe {
        libc::CPU_CLR(cpu as usize, &mut others);
        libc::CPU_COUNT(&others) > 0
    } {
        set_mask(leaver as pid_t, &others);
    }
    if !crate::procfs::each_thread(|tid| {
        set_mask(tid, &all);
    }) {
        set_mask(0, &all);
    }
    // The leaver itself, also when it is a thread of a forked child of the run (set aside
    // by this process's watcher), which /proc/self/task does not list.
    set_mask(leaver as pid_t, &all);
}

/// While alive, the calling thread has the original mask back (an image started from it
/// inherits its mask); dropped, the pin again.
pub struct Unpinned(bool);

impl Unpinned {
    pub fn new() -> Unpinned {
        Unpinned(HIDDEN.load(Ordering::SeqCst) && set_mask(0, &original()))
    }
}

impl Default for Unpinned {
    fn default() -> Self {
        Unpinned::new()
    }
}

impl Drop for Unpinned {
    fn drop(&mut self) {
        let cpu = CPU.load(Ordering::Relaxed);
        if self.0 && cpu >= 0 {
            set_mask(0, &only(cpu));
        }
    }
}

/// `sched_getaffinity`: of the program's own threads, the mask it started with.
///
/// # Safety
/// As `sched_getaffinity(2)`.
#[no_mangle]
pub unsafe extern "C" fn sched_getaffinity(
    pid: pid_t,
    size: size_t,
    mask: *mut cpu_set_t,
) -> c_int {
    let r = real::sched_getaffinity(pid, size, mask);
    if r == 0 && HIDDEN.load(Ordering::SeqCst) && ours(pid) {
        report(size, mask);
    }
    r
}

/// `pthread_getaffinity_np`: see [`sched_getaffinity`].
///
/// # Safety
/// As `pthread_getaffinity_np(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_getaffinity_np(
    t: libc::pthread_t,
    size: size_t,
    mask: *mut cpu_set_t,
) -> c_int {
    let r = real::pthread_getaffinity_np(t, size, mask);
    if r == 0 && HIDDEN.load(Ordering::SeqCst) {
        report(size, mask);
    }
    r
}

/// `sched_setaffinity`: the program's own choice, after which the pin is no longer hidden.
///
/// # Safety
/// As `sched_setaffinity(2)`.
#[no_mangle]
pub unsafe extern "C" fn sched_setaffinity(
    pid: pid_t,
    size: size_t,
    mask: *const cpu_set_t,
) -> c_int {
    let r = real::sched_setaffinity(pid, size, mask);
    if r == 0 && ours(pid) {
        program_chose();
    }
    r
}

/// `pthread_setaffinity_np`: see [`sched_setaffinity`].
///
/// # Safety
/// As `pthread_setaffinity_np(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_setaffinity_np(
    t: libc::pthread_t,
    size: size_t,
    mask: *const cpu_set_t,
) -> c_int {
    let r = real::pthread_setaffinity_np(t, size, mask);
    if r == 0 {
        program_chose();
    }
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pin_variable_read_here_is_the_one_the_runner_sets() {
        assert_eq!(super::PIN_VAR.to_str(), Ok(pos_sched::protocol::ENV_PIN));
    }
}
