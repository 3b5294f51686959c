// Buggy: each worker checks under the lock that no one has claimed the job, releases the
// lock, and claims it under the lock again: both may see it free.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let claims = Arc::new(Mutex::new(Vec::new()));
    let hs: Vec<_> = (0..2)
        .map(|id| {
            let claims = Arc::clone(&claims);
            thread::spawn(move || {
                let free = claims.lock().unwrap().is_empty();
                if free {
                    claims.lock().unwrap().push(id);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(claims.lock().unwrap().len(), 1, "the job was claimed twice");
}
