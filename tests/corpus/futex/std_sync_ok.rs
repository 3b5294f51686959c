// Correct: Condvar, RwLock, Barrier, OnceLock, mpsc and park/unpark together, each used as
// its documentation says. Never a bug, and scheduled at their futex operations.
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Condvar, Mutex, OnceLock, RwLock};
use std::thread;

static CONFIG: OnceLock<u32> = OnceLock::new();

fn main() {
    let barrier = Arc::new(Barrier::new(3));
    let table = Arc::new(RwLock::new(vec![0u32; 4]));
    let slot = Arc::new((Mutex::new(None::<u32>), Condvar::new()));
    let (tx, rx) = mpsc::channel::<u32>();
    let mut handles = Vec::new();
    for id in 0..2u32 {
        let (barrier, table, slot, tx) = (barrier.clone(), table.clone(), slot.clone(), tx.clone());
        handles.push(thread::spawn(move || {
            let base = *CONFIG.get_or_init(|| 40);
            barrier.wait();
            {
                let mut t = table.write().unwrap();
                t[id as usize] += base + id;
            }
            let seen = table.read().unwrap().iter().sum::<u32>();
            assert!(seen >= base);
            tx.send(id).unwrap();
            if id == 0 {
                let (m, cv) = &*slot;
                let mut g = m.lock().unwrap();
                while g.is_none() {
                    g = cv.wait(g).unwrap();
                }
                assert_eq!(*g, Some(7));
            } else {
                let (m, cv) = &*slot;
                *m.lock().unwrap() = Some(7);
                cv.notify_all();
            }
        }));
    }
    drop(tx);
    barrier.wait();
    let mut got: Vec<u32> = rx.iter().collect();
    got.sort();
    assert_eq!(got, vec![0, 1]);
    // park / unpark handshake.
    let main = thread::current();
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let f2 = flag.clone();
    let waker = thread::spawn(move || {
        f2.store(true, std::sync::atomic::Ordering::SeqCst);
        main.unpark();
    });
    while !flag.load(std::sync::atomic::Ordering::SeqCst) {
        thread::park();
    }
    waker.join().unwrap();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*CONFIG.get().unwrap(), 40);
    let t = table.read().unwrap();
    assert_eq!(t[0] + t[1], 81);
    // Scoped threads.
    let mut parts = [0u32; 2];
    thread::scope(|s| {
        for (i, p) in parts.iter_mut().enumerate() {
            s.spawn(move || *p = i as u32 + 1);
        }
    });
    assert_eq!(parts, [1, 2]);
}
