// Correct: a reader thread computes for a while (no synchronisation call), then blocks in a
// read of a UnixStream until main writes to it at the end; meanwhile main polls a Condvar
// with wait_timeout, three times 20 ms, for a flag nobody sets. The reader is set aside while
// it computes and is asleep in `read` later. Before 2026-11-28: a `hang` in every run.
// argv[1]: the computation in millions of rounds (default 200).
use std::hint::black_box;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::Duration;

fn main() {
    let rounds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let (mut a, mut b) = UnixStream::pair().expect("socketpair");
    let reader = thread::spawn(move || {
        let mut x = 1u64;
        for _ in 0..rounds * 1_000_000 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let mut c = [0u8; 1];
        b.read_exact(&mut c).expect("read");
        assert_eq!(c[0], b'q');
        x
    });
    let pair = (Mutex::new(false), Condvar::new());
    let mut g = pair.0.lock().unwrap();
    let mut timeouts = 0;
    for _ in 0..3 {
        let (ng, r) = pair.1.wait_timeout(g, Duration::from_millis(20)).unwrap();
        g = ng;
        if r.timed_out() {
            timeouts += 1;
        }
    }
    drop(g);
    assert_eq!(timeouts, 3);
    a.write_all(b"q").expect("write");
    reader.join().unwrap();
}
