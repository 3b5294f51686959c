// Buggy: the consumer loads the producer's flag once and then spins on its own copy, working
// a chunk at a time; if the producer had not stored it yet, the loop never ends. An endless
// computation with no synchronisation call in it.
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let ready = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Vec::new()));
    let consumer = {
        let (ready, log) = (Arc::clone(&ready), Arc::clone(&log));
        thread::spawn(move || {
            let seen = log.lock().map(|_| ready.load(Ordering::Acquire)).unwrap();
            let mut x = 1u64;
            while !seen {
                // BUG: `seen` is never loaded again.
                for _ in 0..1000 {
                    x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            log.lock().unwrap().push(x);
        })
    };
    let producer = {
        let (ready, log) = (Arc::clone(&ready), Arc::clone(&log));
        thread::spawn(move || {
            let _g = log.lock().unwrap();
            ready.store(true, Ordering::Release);
        })
    };
    producer.join().unwrap();
    consumer.join().unwrap();
}
