//! Rust's view of its CPUs under control: `available_parallelism` (which reads the affinity
//! mask) must report what it reports natively (`print` prints it; the test passes it back),
//! and a pool of that many threads sums correctly under a mutex.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let n = thread::available_parallelism().map_or(1, |n| n.get());
    if arg == "print" {
        println!("{n}");
        return;
    }
    assert_eq!(n, arg.parse::<usize>().expect("the expected count"));
    let total = Arc::new(Mutex::new(0));
    let pool: Vec<_> = (0..n)
        .map(|_| {
            let total = Arc::clone(&total);
            thread::spawn(move || *total.lock().unwrap() += 1)
        })
        .collect();
    for t in pool {
        t.join().unwrap();
    }
    assert_eq!(*total.lock().unwrap(), n);
}
