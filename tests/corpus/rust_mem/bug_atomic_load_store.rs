// Buggy: a counter bumped with a separate atomic load and store instead of fetch_add; two
// threads can both load the old value.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

static COUNT: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let hs: Vec<_> = (0..2)
        .map(|_| {
            thread::spawn(|| {
                let v = COUNT.load(Ordering::SeqCst);
                COUNT.store(v + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(COUNT.load(Ordering::SeqCst), 2);
}
