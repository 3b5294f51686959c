// Correct: a bounded queue with a Mutex and two Condvars, one producer and two consumers.
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

struct Queue {
    items: Mutex<(VecDeque<u32>, bool)>,
    not_empty: Condvar,
    not_full: Condvar,
}

fn main() {
    let q = Arc::new(Queue {
        items: Mutex::new((VecDeque::new(), false)),
        not_empty: Condvar::new(),
        not_full: Condvar::new(),
    });
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let q = Arc::clone(&q);
            thread::spawn(move || {
                let mut sum = 0;
                loop {
                    let mut g = q.items.lock().unwrap();
                    while g.0.is_empty() && !g.1 {
                        g = q.not_empty.wait(g).unwrap();
                    }
                    match g.0.pop_front() {
                        Some(v) => {
                            sum += v;
                            q.not_full.notify_one();
                        }
                        None => return sum,
                    }
                }
            })
        })
        .collect();
    for v in 1..=4 {
        let mut g = q.items.lock().unwrap();
        while g.0.len() == 2 {
            g = q.not_full.wait(g).unwrap();
        }
        g.0.push_back(v);
        q.not_empty.notify_one();
    }
    q.items.lock().unwrap().1 = true;
    q.not_empty.notify_all();
    let total: u32 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(total, 10);
}
