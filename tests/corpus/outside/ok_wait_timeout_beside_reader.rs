// Correct: a reader thread blocks in a read of a pipe (outside poscheck's control) until
// main writes to it at the end; meanwhile main polls a Condvar with wait_timeout, three
// times 20 ms, for a flag nobody sets. Before 2026-11-28: a `hang` in every run.
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::Duration;

fn main() {
    let (mut a, mut b) = UnixStream::pair().expect("socketpair");
    let reader = thread::spawn(move || {
        let mut c = [0u8; 1];
        b.read_exact(&mut c).expect("read");
        assert_eq!(c[0], b'q');
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
