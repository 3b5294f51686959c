// Correct: scoped threads sum disjoint chunks into their own slots, and a OnceLock is
// initialised once however many threads race to it.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread;

static INIT: OnceLock<u32> = OnceLock::new();
static INITS: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let data: Vec<u32> = (1..=8).collect();
    let mut sums = [0u32; 2];
    thread::scope(|s| {
        for (chunk, slot) in data.chunks(4).zip(sums.iter_mut()) {
            s.spawn(move || {
                let base = *INIT.get_or_init(|| {
                    INITS.fetch_add(1, Ordering::SeqCst);
                    100
                });
                *slot = chunk.iter().sum::<u32>() + base;
            });
        }
    });
    assert_eq!(INITS.load(Ordering::SeqCst), 1);
    assert_eq!(sums[0] + sums[1], 36 + 200);
}
