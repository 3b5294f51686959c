// Buggy: two std Mutexes taken in opposite orders, with a yield between: a deadlock.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let (a2, b2) = (a.clone(), b.clone());
    let t = thread::spawn(move || {
        let _x = a2.lock().unwrap();
        thread::yield_now();
        let _y = b2.lock().unwrap();
    });
    {
        let _y = b.lock().unwrap();
        thread::yield_now();
        let _x = a.lock().unwrap();
    }
    t.join().unwrap();
}
