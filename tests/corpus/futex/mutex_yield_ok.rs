// Correct: three threads add to a counter under a std Mutex and yield while holding it,
// so the others block on the Mutex (a futex wait). Never a bug.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let counter = Arc::new(Mutex::new(0u32));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let c = Arc::clone(&counter);
            thread::spawn(move || {
                for _ in 0..3 {
                    let mut g = c.lock().unwrap();
                    let v = *g;
                    thread::yield_now();
                    *g = v + 1;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 9);
}
