// Correct: readers of an RwLock-protected config and a writer that updates it, each
// reporting over an mpsc channel.
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::thread;

fn main() {
    let config = Arc::new(RwLock::new((1u32, 1u32)));
    let (tx, rx) = mpsc::channel();
    let mut hs = Vec::new();
    for _ in 0..2 {
        let (config, tx) = (Arc::clone(&config), tx.clone());
        hs.push(thread::spawn(move || {
            let g = config.read().unwrap();
            tx.send(g.0 == g.1).unwrap();
        }));
    }
    {
        let config = Arc::clone(&config);
        hs.push(thread::spawn(move || {
            let mut g = config.write().unwrap();
            g.0 = 2;
            g.1 = 2;
        }));
    }
    drop(tx);
    for h in hs {
        h.join().unwrap();
    }
    let seen: Vec<bool> = rx.iter().collect();
    assert_eq!(seen.len(), 2);
    assert!(seen.into_iter().all(|consistent| consistent));
}
