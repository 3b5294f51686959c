// Buggy: two threads add one to a total in two critical sections (read, then write): an
// update between them is lost. Rust takes an uncontended Mutex with an inline atomic, so
// without memory points the two sections never interleave.
use std::sync::{Arc, Mutex};
use std::thread;
fn main() {
    let total = Arc::new(Mutex::new(0u32));
    let hs: Vec<_> = (0..2).map(|_| {
        let t = Arc::clone(&total);
        thread::spawn(move || {
            let v = *t.lock().unwrap();
            *t.lock().unwrap() = v + 1;
        })
    }).collect();
    for h in hs { h.join().unwrap(); }
    assert_eq!(*total.lock().unwrap(), 2);
}
