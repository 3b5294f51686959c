// Correct: a worker publishes a value and then sets a flag with Release; main spins on the
// flag with Acquire (yielding) and then reads the value.
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let value = Arc::new(AtomicU32::new(0));
    let ready = Arc::new(AtomicBool::new(false));
    let w = {
        let (value, ready) = (Arc::clone(&value), Arc::clone(&ready));
        thread::spawn(move || {
            value.store(42, Ordering::Relaxed);
            ready.store(true, Ordering::Release);
        })
    };
    while !ready.load(Ordering::Acquire) {
        thread::yield_now();
    }
    assert_eq!(value.load(Ordering::Relaxed), 42);
    w.join().unwrap();
}
