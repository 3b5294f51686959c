// Buggy (Rust, std only): two threads increment a shared counter with a separate atomic
// load and store and a yield in between; an interleaving loses an update and the final
// assert! panics. poscheck reports it as `panic` with this message.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let counter = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let c = Arc::clone(&counter);
            thread::spawn(move || {
                let v = c.load(Ordering::SeqCst);
                thread::yield_now();
                c.store(v + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let v = counter.load(Ordering::SeqCst);
    assert!(v == 2, "lost update: counter is {v}, expected 2");
}
