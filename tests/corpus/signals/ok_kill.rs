// Correct: a Rust worker waits for a std Mutex that main holds; main sends it SIGUSR1
// (pthread_kill on its pthread_t) and waits, holding the lock, until the handler has run
// on the worker; then it lets the lock go.
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

static HANDLED: AtomicUsize = AtomicUsize::new(0);

extern "C" {
    fn signal(sig: i32, handler: usize) -> usize;
    fn pthread_kill(thread: usize, sig: i32) -> i32;
}

const SIGUSR1: i32 = 10;

extern "C" fn on_usr1(_sig: i32) {
    HANDLED.fetch_add(1, Ordering::SeqCst);
}

fn main() {
    unsafe { signal(SIGUSR1, on_usr1 as usize) };
    let m = Arc::new(Mutex::new(0u32));
    let guard = m.lock().unwrap();
    let m2 = Arc::clone(&m);
    let h = thread::spawn(move || {
        *m2.lock().unwrap() += 1;
    });
    assert_eq!(unsafe { pthread_kill(h.as_pthread_t() as usize, SIGUSR1) }, 0);
    while HANDLED.load(Ordering::SeqCst) == 0 {
        thread::yield_now();
    }
    drop(guard);
    h.join().unwrap();
    assert_eq!(*m.lock().unwrap(), 1);
    assert_eq!(HANDLED.load(Ordering::SeqCst), 1);
}
