//! libpos's own heap for the code it runs on the program's threads under the baton
//! transport (issue 15).
//!
//! With sockets every decision is computed on libpos's hidden thread, whose allocations stay
//! in that thread's malloc arena. With the baton the thread that completes a step decides
//! the next one itself, so the coordinator's allocations (the trace, the strategy's tables,
//! the posts) would land in the program's own arenas and move the addresses the program's
//! later `malloc`s return; addresses name objects in schedules (`mutex@0x...`), so the same
//! seed would no longer give the same schedule, byte for byte, as with sockets.
//!
//! So once [`ON`] is set, Rust allocations that libpos makes in a [`Private`] scope (the
//! decisions and seats on the program's threads; libpos's other bookkeeping stays in glibc's
//! heap exactly as with sockets) come from a private region reserved at a fixed address far from the program's heap and from
//! the kernel's top-down `mmap` area ([`reserve`]; `MAP_NORESERVE`, pages are committed on
//! first touch), so that no mapping of the program moves either. The allocator is a plain
//! power-of-two size-class free list with a bump pointer, behind a spin lock: only one
//! controlled thread runs at a time, so it is hardly ever contended. Memory from glibc (all
//! allocations before [`ON`], and the hidden thread's) goes back to glibc: a block's address
//! tells where it came from.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Where the private region is mapped (32 TiB: between a PIE's heap near 0x5555_5555_0000
/// and the libraries and stacks below 0x7fff_ffff_f000).
pub(crate) const BASE: usize = 0x2000_0000_0000;
/// Size of the reservation.
const SIZE: usize = 1 << 34;
/// The first address past the region (the run's journal is mapped there, see `journal`).
pub const END: usize = BASE + SIZE;
/// Largest alignment served from the region (larger ones go to glibc).
const MAX_ALIGN: usize = 4096;

/// Private allocation is on (baton transport, after [`reserve`]).
pub static ON: AtomicBool = AtomicBool::new(false);
/// A [`Private::force`] scope is open: its thread allocates privately even before [`ON`].
static FORCED: AtomicBool = AtomicBool::new(false);
/// The region is mapped.
static MAPPED: AtomicBool = AtomicBool::new(false);
/// Next unused byte of the region (offset from [`BASE`]).
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Heads of the free lists, one per power-of-two class (block address, 0: empty).
static FREE: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
static LOCK: AtomicBool = AtomicBool::new(false);

/// The thread (`pthread_self`) in a [`Private`] scope, 0 if none. One at a time: scopes are
/// entered under a lock (the run's, or the assertion text's). A global rather than a
/// thread-local: libpos's static TLS size is part of the main thread's start-up
/// allocations, which must stay as they are with sockets.
static OWNER: AtomicUsize = AtomicUsize::new(0);

fn me() -> usize {
    // SAFETY: pthread_self has no preconditions (it reads the thread pointer).
    unsafe { libc::pthread_self() as usize }
}

/// Allocations of the calling thread come from the private region (when [`ON`]) until
/// dropped. Enter it only while holding a lock that every other scope is entered under.
pub struct Private(usize);

impl Private {
    pub fn enter() -> Private {
        Private(OWNER.swap(me(), Ordering::SeqCst))
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        OWNER.store(self.0, Ordering::SeqCst);
    }
}

/// A scope whose allocations come from the private region whatever the transport (the
/// region is mapped first if it is not): for what libpos reads before the program runs
/// and whose size varies from run to run (an exploration's forced prefix in the start
/// message). In the program's heap, the blocks it leaves behind moved the addresses the
/// program's `malloc`s returned from one execution to the next, and an exploration then
/// took one heap object for several (1 execution, "complete", on a refcount double free
/// that sampling finds in 1 try of 5). `None` when the region cannot be mapped.
pub struct Forced {
    _scope: Private,
}

impl Private {
    /// See [`Forced`]. Single-threaded use only (the run's start, before the program runs).
    pub fn force() -> Option<Forced> {
        if !MAPPED.load(Ordering::SeqCst) && !reserve() {
            return None;
        }
        let p = Private::enter();
        FORCED.store(true, Ordering::SeqCst);
        Some(Forced { _scope: p })
    }
}

impl Drop for Forced {
    fn drop(&mut self) {
        FORCED.store(false, Ordering::SeqCst);
    }
}

/// Map the private region; false if the address is taken (then the baton transport is not
/// used). Allocates nothing.
pub fn reserve() -> bool {
    if MAPPED.load(Ordering::SeqCst) {
        return true;
    }
    // Through `syscall`, which libpos imports anyway: a new import from libc (a new symbol
    // version) changes what the dynamic loader allocates at start-up, and so the program's
    // heap addresses.
    // SAFETY: an anonymous private mapping at a fixed address that must be free
    // (MAP_FIXED_NOREPLACE fails instead of replacing anything).
    let p = unsafe {
        crate::real::syscall(
            libc::SYS_mmap,
            BASE as libc::c_long,
            SIZE as libc::c_long,
            (libc::PROT_READ | libc::PROT_WRITE) as libc::c_long,
            (libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE) as libc::c_long,
            -1,
            0,
        )
    } as *mut libc::c_void;
    if p == libc::MAP_FAILED || p as usize != BASE {
        if p != libc::MAP_FAILED {
            // SAFETY: unmapping the mapping just made elsewhere (a kernel without
            // MAP_FIXED_NOREPLACE treats the address as a hint).
            unsafe { libc::munmap(p, SIZE) };
        }
        return false;
    }
    MAPPED.store(true, Ordering::SeqCst);
    true
}

fn in_region(p: *mut u8) -> bool {
    let a = p as usize;
    (BASE..BASE + SIZE).contains(&a)
}

/// Size class of a layout: log2 of its block size.
fn class(layout: Layout) -> usize {
    layout
        .size()
        .max(layout.align())
        .max(16)
        .next_power_of_two()
        .trailing_zeros() as usize
}

fn lock() {
    let mut spins = 0u32;
    while LOCK
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        spins += 1;
        if spins.is_multiple_of(64) {
            // SAFETY: sched_yield through the raw system call (libpos interposes the
            // function, which may be a scheduling point).
            unsafe { libc::syscall(libc::SYS_sched_yield) };
        } else {
            std::hint::spin_loop();
        }
    }
}

fn unlock() {
    LOCK.store(false, Ordering::Release);
}

fn private_alloc(layout: Layout) -> *mut u8 {
    let c = class(layout);
    let size = 1usize << c;
    lock();
    let head = FREE[c].load(Ordering::Relaxed);
    let p = if head != 0 {
        // SAFETY: a free block's first word holds the next free block of its class.
        let next = unsafe { *(head as *const usize) };
        FREE[c].store(next, Ordering::Relaxed);
        head as *mut u8
    } else {
        // Blocks are aligned to their size, up to a page: any request of the class fits.
        let align = size.min(MAX_ALIGN);
        let off = NEXT.load(Ordering::Relaxed).next_multiple_of(align);
        if off + size > SIZE {
            std::ptr::null_mut()
        } else {
            NEXT.store(off + size, Ordering::Relaxed);
            (BASE + off) as *mut u8
        }
    };
    unlock();
    p
}

fn private_free(p: *mut u8, layout: Layout) {
    let c = class(layout);
    lock();
    // SAFETY: the block is ours, at least 16 bytes and aligned; its first word links it.
    unsafe { *(p as *mut usize) = FREE[c].load(Ordering::Relaxed) };
    FREE[c].store(p as usize, Ordering::Relaxed);
    unlock();
}

fn private_here(layout: Layout) -> bool {
    MAPPED.load(Ordering::Relaxed)
        && layout.align() <= MAX_ALIGN
        && (((ON.load(Ordering::Relaxed) || FORCED.load(Ordering::Relaxed))
            && OWNER.load(Ordering::Relaxed) == me())
            || hidden_here())
}

/// Whether the calling thread is the hidden thread allocating privately ([`HIDDEN`]).
fn hidden_here() -> bool {
    let h = HIDDEN.load(Ordering::Relaxed);
    h != 0 && h == me()
}

/// The hidden thread (`pthread_self`), when its allocations come from the private region
/// too (see [`hidden_thread_allocates_privately`]); 0 otherwise.
static HIDDEN: AtomicUsize = AtomicUsize::new(0);

/// Called on the hidden thread as it starts: its allocations come from the private region
/// from here on (when it is mapped), for two reasons.
/// - Its first `malloc` made glibc open a malloc arena for it: a 64 MiB reservation, three
///   more system calls, page faults, and the arena's teardown at exit, in every run.
/// - Under LeakSanitizer, the leak check at the program's exit locks the sanitizer's
///   allocator on the exiting thread and then waits for its tracer with `sched_yield`, a
///   scheduling point that takes the run's lock; the hidden thread, holding that lock and
///   allocating from the sanitizer's heap, waited for the allocator: a deadlock that ended
///   a few runs in a hundred of a correct clang `-fsanitize=address` program as a `hang`.
pub fn hidden_thread_allocates_privately() {
    if MAPPED.load(Ordering::Relaxed) {
        HIDDEN.store(me(), Ordering::SeqCst);
    }
}

/// LeakSanitizer's `__lsan_disable` and `__lsan_enable` (0: not loaded), see [`find_lsan`].
static LSAN: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// In a program built with AddressSanitizer or LeakSanitizer (the runner says so with
/// [`pos_sched::protocol::ENV_LSAN`]), find LeakSanitizer's interface: the blocks libpos
/// takes from glibc's heap are then made between `__lsan_disable` and `__lsan_enable`, which
/// tell the leak checker they are no leaks. They are kept on in libpos's private region and
/// its hidden thread, which the checker does not scan, and every run ended in a leak
/// report. Looked up only when asked: a failed `dlsym` allocates its error message in the
/// program's heap, and so would move the addresses of the program's own blocks.
pub fn find_lsan() {
    // SAFETY: getenv and dlsym with NUL-terminated literals.
    unsafe {
        let flag = libc::getenv(c"POSCHECK_LSAN".as_ptr());
        if flag.is_null() || *flag != b'1' as libc::c_char {
            return;
        }
        let off = libc::dlsym(libc::RTLD_DEFAULT, c"__lsan_disable".as_ptr());
        let on = libc::dlsym(libc::RTLD_DEFAULT, c"__lsan_enable".as_ptr());
        if !off.is_null() && !on.is_null() {
            LSAN[0].store(off as usize, Ordering::SeqCst);
            LSAN[1].store(on as usize, Ordering::SeqCst);
        }
    }
}

/// Whether LeakSanitizer runs in this process (and the runner said so, see [`find_lsan`]).
pub fn lsan_present() -> bool {
    LSAN[0].load(Ordering::Relaxed) != 0
}

/// `f`, with LeakSanitizer told that the blocks it allocates are no leaks (see
/// [`find_lsan`]); just `f` without LeakSanitizer.
fn not_leaks<T>(f: impl FnOnce() -> T) -> T {
    let off = LSAN[0].load(Ordering::Relaxed);
    if off == 0 {
        return f();
    }
    // SAFETY: LeakSanitizer's `void __lsan_disable(void)` and `void __lsan_enable(void)`.
    unsafe {
        let off: extern "C" fn() = std::mem::transmute(off);
        let on: extern "C" fn() = std::mem::transmute(LSAN[1].load(Ordering::Relaxed));
        off();
        let r = f();
        on();
        r
    }
}

/// libpos's global allocator: glibc, or the private region (see the module documentation).
pub struct Alloc;

// SAFETY: blocks come from glibc (System) or from the private region, each returned to
// where it came from (told by its address); private blocks are at least as large and as
// aligned as their layout asks.
unsafe impl GlobalAlloc for Alloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if private_here(layout) {
            private_alloc(layout)
        } else {
            // SAFETY: as the caller's contract.
            not_leaks(|| unsafe { System.alloc(layout) })
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if private_here(layout) {
            let p = private_alloc(layout);
            if !p.is_null() {
                // SAFETY: the block holds at least layout.size() bytes.
                unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            }
            p
        } else {
            // SAFETY: as the caller's contract (glibc's calloc, as without this allocator).
            not_leaks(|| unsafe { System.alloc_zeroed(layout) })
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if in_region(p) {
            private_free(p, layout);
        } else {
            // SAFETY: p came from System with this layout.
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_region(p) && !private_here(layout) {
            // SAFETY: as the caller's contract; p came from System.
            return not_leaks(|| unsafe { System.realloc(p, layout, new_size) });
        }
        // SAFETY: the caller guarantees new_size, rounded to align, does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if in_region(p) && class(new) == class(layout) {
            return p; // the block already has room
        }
        // SAFETY: a non-zero-sized layout (as the caller's).
        let q = unsafe { self.alloc(new) };
        if !q.is_null() {
            // SAFETY: both blocks hold at least the smaller size and do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_fit_their_layouts() {
        let l = |s, a| Layout::from_size_align(s, a).expect("layout");
        assert_eq!(class(l(1, 1)), 4);
        assert_eq!(class(l(16, 8)), 4);
        assert_eq!(class(l(17, 8)), 5);
        assert_eq!(class(l(8, 64)), 6);
        assert_eq!(class(l(4096, 4096)), 12);
        assert_eq!(class(l(5000, 8)), 13);
    }

    #[test]
    fn the_lsan_flag_is_read_under_the_runner_s_name() {
        // `find_lsan` reads it with `getenv` and a C literal (no allocation).
        assert_eq!(pos_sched::protocol::ENV_LSAN, "POSCHECK_LSAN");
    }
}
