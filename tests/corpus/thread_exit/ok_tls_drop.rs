// Correct: a thread_local whose Drop deregisters its (detached) thread; main waits until
// every thread has. Before 2026-11-27 TLS destructors ran after the thread's exit in the
// model, uncontrolled: a deadlock in most runs.
use std::cell::RefCell;
use std::sync::{Condvar, Mutex};
use std::thread;

static ALIVE: Mutex<u32> = Mutex::new(0);
static CV: Condvar = Condvar::new();

struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        *ALIVE.lock().unwrap() -= 1;
        CV.notify_all();
    }
}

thread_local! {
    static GUARD: RefCell<Option<Guard>> = const { RefCell::new(None) };
}

fn main() {
    for _ in 0..3 {
        *ALIVE.lock().unwrap() += 1;
        drop(thread::spawn(|| GUARD.with(|g| *g.borrow_mut() = Some(Guard))));
    }
    let mut alive = ALIVE.lock().unwrap();
    while *alive > 0 {
        alive = CV.wait(alive).unwrap();
    }
}
