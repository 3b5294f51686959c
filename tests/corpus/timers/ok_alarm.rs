// Correct: a Rust program that arms alarm(1) through libc and stops its workers when the
// handler has run; the workers sleep with std::thread::sleep and share a Mutex counter.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

static RANG: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_: i32) {
    RANG.store(true, Ordering::SeqCst);
}

extern "C" {
    fn alarm(seconds: u32) -> u32;
    fn signal(sig: i32, handler: usize) -> usize;
}

const SIGALRM: i32 = 14;

fn main() {
    unsafe {
        signal(SIGALRM, on_alarm as *const () as usize);
        alarm(1);
    }
    let total = Arc::new(Mutex::new(0u32));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                while !RANG.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(100));
                    *total.lock().unwrap() += 1;
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let n = *total.lock().unwrap();
    assert!(n >= 16, "{n}");
}
