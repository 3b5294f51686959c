// Correct: a reader with `set_read_timeout(SECONDS)` (argv[1], default 3) on a UnixStream
// whose peer writes only after a barrier the reader reaches later: the first read must time
// out (WouldBlock) after >= SECONDS of the clock, then the second gets the line. std's
// timeout is SO_RCVTIMEO: the wait is in the kernel, outside control, for SECONDS while
// nothing else can run (before 2026-11-28 a hang after the step timeout).
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let (mut a, mut b) = UnixStream::pair().unwrap();
    let go = Arc::new(Barrier::new(2));
    let g2 = go.clone();
    let t = std::thread::spawn(move || {
        g2.wait();
        b.write_all(b"hello\n").unwrap();
    });
    a.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 16];
    let e = a.read(&mut buf).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{e:?}");
    assert!(start.elapsed() >= Duration::from_secs(secs), "{:?}", start.elapsed());
    go.wait();
    let n = a.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello\n");
    t.join().unwrap();
    println!("ok");
}
