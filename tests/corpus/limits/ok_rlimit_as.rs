// A Rust program that limits its own address space with setrlimit(RLIMIT_AS, 512 MiB) (the
// C function, declared here: rustc alone has no libc crate), then three std::threads push
// into a shared Vec under a Mutex. Correct.
use std::sync::{Arc, Mutex};
use std::thread;

#[repr(C)]
struct Rlimit {
    cur: u64,
    max: u64,
}

extern "C" {
    fn setrlimit(resource: i32, rlim: *const Rlimit) -> i32;
    fn getrlimit(resource: i32, rlim: *mut Rlimit) -> i32;
}

const RLIMIT_AS: i32 = 9;

fn main() {
    let r = Rlimit { cur: 512 << 20, max: 512 << 20 };
    assert_eq!(unsafe { setrlimit(RLIMIT_AS, &r) }, 0);
    let v = Arc::new(Mutex::new(Vec::new()));
    let hs: Vec<_> = (0..3)
        .map(|i| {
            let v = Arc::clone(&v);
            thread::spawn(move || {
                let chunk = vec![i; 1 << 16];
                v.lock().unwrap().push(chunk.len());
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let mut g = Rlimit { cur: 0, max: 0 };
    unsafe { getrlimit(RLIMIT_AS, &mut g) };
    assert_eq!((g.cur, g.max), (r.cur, r.max));
    assert_eq!(v.lock().unwrap().iter().sum::<usize>(), 3 << 16);
}
