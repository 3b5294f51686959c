// Correct: std::thread workers each compute a chunk with no synchronisation call, then add
// it to a shared result under a std::sync::Mutex; main waits on a Condvar until all are in
// (it is blocked while they compute), then joins.
// argv[1]: rounds per chunk in millions (default 100), argv[2]: workers (1-4, default 2).
use std::hint::black_box;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

fn crunch(mut x: u64, millions: u64) -> u64 {
    for _ in 0..millions * 1_000_000 {
        x = black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    x
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    assert!((1..=4).contains(&n));
    let shared = Arc::new((Mutex::new((0u64, 0u64)), Condvar::new()));
    let workers: Vec<_> = (0..n)
        .map(|i| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let h = crunch(i + 1, rounds);
                let (lock, cv) = &*shared;
                let mut g = lock.lock().unwrap();
                g.0 ^= h | 1;
                g.1 += 1;
                cv.notify_one();
            })
        })
        .collect();
    {
        let (lock, cv) = &*shared;
        let g = cv.wait_while(lock.lock().unwrap(), |g| g.1 < n).unwrap();
        assert_eq!(g.1, n);
    }
    for w in workers {
        w.join().unwrap();
    }
}
