// Correct: atomic counters with fetch_add and a compare-exchange loop, from three threads.
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let hits = Arc::new(AtomicUsize::new(0));
    let max = Arc::new(AtomicU64::new(0));
    let hs: Vec<_> = (1..=3u64)
        .map(|id| {
            let (hits, max) = (Arc::clone(&hits), Arc::clone(&max));
            thread::spawn(move || {
                hits.fetch_add(1, Ordering::Relaxed);
                let mut cur = max.load(Ordering::Relaxed);
                while cur < id {
                    match max.compare_exchange(cur, id, Ordering::AcqRel, Ordering::Relaxed) {
                        Ok(_) => break,
                        Err(seen) => cur = seen,
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(hits.load(Ordering::Relaxed), 3);
    assert_eq!(max.load(Ordering::Relaxed), 3);
}
