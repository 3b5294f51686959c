// Correct: Rust calling GLib's GMutex and GCond through FFI declarations, as the glib-sys
// crate does: std::thread workers take a GMutex-guarded ticket each, and main waits on a
// GCond in a predicate loop until all have.
use std::cell::UnsafeCell;
use std::thread;

#[repr(C)]
struct GMutex {
    p: *mut u8,
    i: [u32; 2],
}
#[repr(C)]
struct GCond {
    p: *mut u8,
    i: [u32; 2],
}

#[link(name = "glib-2.0")]
extern "C" {
    fn g_mutex_lock(m: *mut GMutex);
    fn g_mutex_unlock(m: *mut GMutex);
    fn g_cond_wait(c: *mut GCond, m: *mut GMutex);
    fn g_cond_signal(c: *mut GCond);
}

struct Shared {
    m: UnsafeCell<GMutex>,
    c: UnsafeCell<GCond>,
    taken: UnsafeCell<u32>,
}
// SAFETY: every field is used under the GMutex (or is the GMutex/GCond itself).
unsafe impl Sync for Shared {}

static S: Shared = Shared {
    m: UnsafeCell::new(GMutex { p: std::ptr::null_mut(), i: [0; 2] }),
    c: UnsafeCell::new(GCond { p: std::ptr::null_mut(), i: [0; 2] }),
    taken: UnsafeCell::new(0),
};

fn main() {
    let workers: Vec<_> = (0..3)
        .map(|_| {
            thread::spawn(|| unsafe {
                g_mutex_lock(S.m.get());
                *S.taken.get() += 1;
                g_cond_signal(S.c.get());
                g_mutex_unlock(S.m.get());
            })
        })
        .collect();
    unsafe {
        g_mutex_lock(S.m.get());
        while *S.taken.get() < 3 {
            g_cond_wait(S.c.get(), S.m.get());
        }
        assert_eq!(*S.taken.get(), 3);
        g_mutex_unlock(S.m.get());
    }
    for w in workers {
        w.join().unwrap();
    }
}
