// Correct: a Rust program waits for a one-shot 20 ms timerfd (through libc's functions, as the
// nix or timerfd crates do) in a worker while the main thread sends it work over a channel;
// when the timer fires the worker reports how much it got and how long it waited: all the
// work, and at least 20 ms on Instant.
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

#[repr(C)]
struct Itimerspec {
    it_interval: Timespec,
    it_value: Timespec,
}

extern "C" {
    fn timerfd_create(clock: i32, flags: i32) -> i32;
    fn timerfd_settime(fd: i32, flags: i32, new: *const Itimerspec, old: *mut Itimerspec) -> i32;
    fn read(fd: i32, buf: *mut u8, n: usize) -> isize;
    fn close(fd: i32) -> i32;
}

const CLOCK_MONOTONIC: i32 = 1;

fn main() {
    let fd = unsafe { timerfd_create(CLOCK_MONOTONIC, 0) };
    assert!(fd >= 0);
    let (tx, rx) = mpsc::channel::<u32>();
    let start = Instant::now();
    let worker = thread::spawn(move || {
        let its = Itimerspec {
            it_interval: Timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: Timespec { tv_sec: 0, tv_nsec: 20_000_000 },
        };
        assert_eq!(unsafe { timerfd_settime(fd, 0, &its, std::ptr::null_mut()) }, 0);
        let mut buf = [0u8; 8];
        let r = unsafe { read(fd, buf.as_mut_ptr(), 8) };
        assert_eq!(r, 8);
        assert_eq!(u64::from_ne_bytes(buf), 1);
        let waited = start.elapsed();
        let got: u32 = rx.try_iter().sum();
        (got, waited)
    });
    for i in 1..=4 {
        tx.send(i).unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    let (got, waited) = worker.join().unwrap();
    assert_eq!(got, 10, "all the work arrived before the timer");
    assert!(waited >= Duration::from_millis(20), "waited {waited:?}");
    unsafe { close(fd) };
}
