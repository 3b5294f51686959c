//! The baton: how one thread of the program hands the turn to another without a socket
//! (issue 15, "the scheduler inside the program": the thread that finishes a step computes
//! the next decision and hands the baton to the chosen thread over shared memory).
//!
//! Each controlled thread owns one [`Baton`], a 32-bit futex word. Handing over is a store
//! plus, only when the receiver is asleep, one `FUTEX_WAKE`; waiting is a short bounded spin
//! (only worth it when a core is idle: the caller passes 0 otherwise) and then `FUTEX_WAIT`.
//! A thread that is chosen again by its own decision never touches its baton: it just
//! continues, with no system call and no context switch.
//!
//! The word has three values: [`EMPTY`] (no grant pending, nobody asleep), [`SLEEPING`] (the
//! owner is, or is about to be, in `FUTEX_WAIT`) and [`GRANTED`] (a grant waits to be taken).
//! Only the owner moves the word away from `GRANTED` and into `SLEEPING`; only a granter
//! moves it into `GRANTED`. The granter wakes the kernel only when it replaced `SLEEPING`, and
//! the owner sleeps only on `SLEEPING` (the kernel compares before it sleeps), so a grant is
//! never lost and a wake is never paid for when the owner was still spinning.
//!
//! Everything here is async-signal-safe (atomics and raw `futex` system calls), and the word
//! may live in memory shared between processes (the futex calls are not `PRIVATE`).

use std::sync::atomic::{AtomicU32, Ordering};

/// No grant pending, the owner is not asleep.
pub const EMPTY: u32 = 0;
/// A grant is pending and not yet taken.
pub const GRANTED: u32 = 1;
/// The owner is asleep (or about to be) in `FUTEX_WAIT` on the word.
pub const SLEEPING: u32 = 2;

/// One thread's futex word.
#[repr(C)]
#[derive(Debug, Default)]
pub struct Baton {
    word: AtomicU32,
}

impl Baton {
    pub const fn new() -> Baton {
        Baton {
            word: AtomicU32::new(EMPTY),
        }
    }

    /// Hand the turn to the owner: a store, plus a `FUTEX_WAKE` only if the owner sleeps.
    /// Returns whether a wake was needed.
    #[inline]
    pub fn grant(&self) -> bool {
        if self.word.swap(GRANTED, Ordering::Release) == SLEEPING {
            futex_wake(&self.word);
            true
        } else {
            false
        }
    }

    /// Take a pending grant without waiting.
    #[inline]
    pub fn try_take(&self) -> bool {
        self.word
            .compare_exchange(GRANTED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Wait until granted, then take the grant. Polls the word for up to `spin_ns`
    /// nanoseconds first (0: sleep at once), then sleeps in `FUTEX_WAIT`. Only the owner
    /// calls this.
    pub fn wait(&self, spin_ns: u64) {
        if self.try_take() {
            return;
        }
        if spin_ns > 0 {
            // Poll, yielding the CPU between polls (as a reply is polled for): the thread
            // that will hand the turn over may be queued on this very CPU, and a busy spin
            // would keep it waiting for the whole spin (55 us hand-overs with both cores
            // busy, against a few us when one is free).
            let start = now_ns();
            loop {
                if self.try_take() {
                    return;
                }
                if now_ns().saturating_sub(start) >= spin_ns {
                    break;
                }
                // SAFETY: no preconditions (libpos's own interposer passes it through: the
                // waiting thread is busy in libpos).
                unsafe { libc::sched_yield() };
            }
        }
        loop {
            match self
                .word
                .compare_exchange(EMPTY, SLEEPING, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) | Err(SLEEPING) => futex_wait(&self.word, SLEEPING),
                Err(_) => {} // GRANTED: taken below
            }
            if self.try_take() {
                return;
            }
        }
    }

    /// Like [`Baton::wait`] without the spin, giving up after `ns` nanoseconds: whether
    /// the grant was taken. A grant that comes later stays pending.
    pub fn wait_for(&self, ns: u64) -> bool {
        let start = now_ns();
        loop {
            if self.try_take() {
                return true;
            }
            let left = ns.saturating_sub(now_ns().saturating_sub(start));
            if left == 0 {
                return false;
            }
            let sleeping = match self.word.compare_exchange(
                EMPTY,
                SLEEPING,
                Ordering::Acquire,
                Ordering::Acquire,
            ) {
                Ok(_) | Err(SLEEPING) => true,
                Err(_) => false, // GRANTED: taken above
            };
            if sleeping {
                let t = crate::clock::to_timespec(left);
                futex(&self.word, libc::FUTEX_WAIT, SLEEPING, Some(&t));
            }
        }
    }

    /// The word's current value ([`EMPTY`], [`GRANTED`] or [`SLEEPING`]), for diagnostics
    /// and a watchdog's view of who waits.
    pub fn state(&self) -> u32 {
        self.word.load(Ordering::Relaxed)
    }

    /// Address of the word (what `/proc/<pid>/task/<tid>/syscall` shows as the first
    /// argument of the owner's `futex` call while it sleeps here).
    pub fn addr(&self) -> usize {
        self.word.as_ptr() as usize
    }
}

/// `futex(word, op, val, timeout)` through libc's real `syscall` (libpos interposes
/// `syscall`; its own futexes must not become scheduling points).
fn futex(word: &AtomicU32, op: i32, val: u32, timeout: Option<&libc::timespec>) {
    let t = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: a futex call on a valid, aligned 32-bit word, with a valid or null timeout;
    // no other memory is touched.
    unsafe {
        crate::real::syscall(
            libc::SYS_futex,
            word.as_ptr() as libc::c_long,
            op as libc::c_long,
            val as libc::c_long,
            t as libc::c_long,
            0,
            0,
        );
    }
}

fn futex_wake(word: &AtomicU32) {
    futex(word, libc::FUTEX_WAKE, 1, None);
}

/// Sleep while the word holds `expected` (returns at once if it does not; spurious returns
/// are possible, the caller re-checks).
fn futex_wait(word: &AtomicU32, expected: u32) {
    futex(word, libc::FUTEX_WAIT, expected, None);
}

/// CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
fn now_ns() -> u64 {
    // SAFETY: an all-zero timespec is valid; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn a_grant_before_the_wait_is_kept_and_costs_no_wake() {
        let b = Baton::new();
        assert!(!b.try_take());
        assert!(!b.grant(), "nobody sleeps: no wake");
        assert_eq!(b.state(), GRANTED);
        b.wait(0); // returns at once
        assert_eq!(b.state(), EMPTY);
        assert!(!b.try_take(), "a grant is taken once");
    }

    #[test]
    fn a_sleeping_owner_is_woken_by_the_grant() {
        let b = Arc::new(Baton::new());
        let taken = Arc::new(AtomicU64::new(0));
        let (b2, t2) = (b.clone(), taken.clone());
        let h = std::thread::spawn(move || {
            b2.wait(0);
            t2.store(1, Ordering::SeqCst);
        });
        // Until the owner sleeps, nothing may wake it.
        let start = Instant::now();
        while b.state() != SLEEPING {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "owner never slept"
            );
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(taken.load(Ordering::SeqCst), 0, "woke without a grant");
        assert!(b.grant(), "the owner slept: a wake is needed");
        h.join().expect("owner thread");
        assert_eq!(taken.load(Ordering::SeqCst), 1);
        assert_eq!(b.state(), EMPTY);
    }

    /// Two threads pass the turn back and forth many times; a counter only the holder of
    /// the turn touches (non-atomically in spirit: load then store) must come out exact,
    /// with and without the spin phase.
    #[test]
    fn ping_pong_keeps_one_holder_at_a_time() {
        for spin in [0, 50_000] {
            let batons = Arc::new([Baton::new(), Baton::new()]);
            let count = Arc::new(AtomicU64::new(0));
            const ROUNDS: u64 = 20_000;
            let spawn = |me: usize| {
                let (b, c) = (batons.clone(), count.clone());
                std::thread::spawn(move || {
                    for _ in 0..ROUNDS {
                        b[me].wait(spin);
                        let v = c.load(Ordering::Relaxed);
                        c.store(v + 1, Ordering::Relaxed);
                        b[1 - me].grant();
                    }
                })
            };
            let (h0, h1) = (spawn(0), spawn(1));
            batons[0].grant();
            h0.join().expect("thread 0");
            h1.join().expect("thread 1");
            assert_eq!(count.load(Ordering::SeqCst), 2 * ROUNDS, "spin {spin}");
            // The last grant (thread 1's to thread 0) is pending, nothing else.
            assert_eq!(batons[0].state(), GRANTED);
            assert_eq!(batons[1].state(), EMPTY);
        }
    }

    #[test]
    fn a_bounded_wait_gives_up_then_a_late_grant_stays_pending() {
        let b = Baton::new();
        let t = Instant::now();
        assert!(!b.wait_for(20_000_000));
        assert!(t.elapsed() >= Duration::from_millis(20));
        b.grant();
        assert_eq!(b.state(), GRANTED);
        assert!(b.wait_for(1_000_000));
        assert_eq!(b.state(), EMPTY);
    }

    /// Median round trip of the baton between two threads against a Unix-socket ping-pong
    /// between two threads (a 32-byte request, a 16-byte reply, as libpos's protocol), in
    /// one run. Prints the figures; run with
    /// `cargo test --release -p pos-preload baton::tests::latency -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn latency_versus_socket_ping_pong() {
        let n: usize = std::env::var("BATON_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000);
        let reps = 5;
        let mut lines = Vec::new();
        for spin in [0u64, 20_000] {
            let (mut bs, mut ss) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                // Interleaved, so that load changes hit both alike.
                bs.push(baton_round_trip(n, spin));
                ss.push(socket_round_trip(n, spin));
            }
            bs.sort_unstable();
            ss.sort_unstable();
            let (b, s) = (bs[reps / 2], ss[reps / 2]);
            lines.push(format!(
                "spin {:>5} ns: baton round trip {b} ns, Unix-socket ping-pong {s} ns, ratio {:.2}x",
                spin,
                b as f64 / s.max(1) as f64
            ));
        }
        for l in lines {
            println!("{l}");
        }
    }

    fn median(mut v: Vec<u64>) -> u64 {
        v.sort_unstable();
        v[v.len() / 2]
    }

    fn baton_round_trip(n: usize, spin: u64) -> u64 {
        let batons = Arc::new([Baton::new(), Baton::new()]);
        let b = batons.clone();
        let echo = std::thread::spawn(move || {
            for _ in 0..=n {
                b[1].wait(spin);
                b[0].grant();
            }
        });
        let mut lat = Vec::with_capacity(n);
        batons[1].grant();
        batons[0].wait(spin);
        for _ in 0..n {
            let t = Instant::now();
            batons[1].grant();
            batons[0].wait(spin);
            lat.push(t.elapsed().as_nanos() as u64);
        }
        echo.join().expect("echo thread");
        median(lat)
    }

    /// The socket side polls with `MSG_DONTWAIT` for up to `spin` ns before a blocking
    /// read, as libpos's `read_reply` does with `POSCHECK_SPIN_US`.
    fn socket_round_trip(n: usize, spin: u64) -> u64 {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid out-array of two descriptors.
        let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) };
        assert_eq!(r, 0, "socketpair");
        let (a, b) = (fds[0], fds[1]);
        let echo = std::thread::spawn(move || {
            let mut req = [0u8; 32];
            for _ in 0..=n {
                assert!(read_spin(b, &mut req, spin));
                assert!(crate::conn::write_all(b, &req[..16]));
            }
        });
        let req = [7u8; 32];
        let mut rep = [0u8; 16];
        let mut lat = Vec::with_capacity(n);
        assert!(crate::conn::write_all(a, &req));
        assert!(read_spin(a, &mut rep, spin));
        for _ in 0..n {
            let t = Instant::now();
            assert!(crate::conn::write_all(a, &req));
            assert!(read_spin(a, &mut rep, spin));
            lat.push(t.elapsed().as_nanos() as u64);
        }
        echo.join().expect("echo thread");
        // SAFETY: closing the pair we opened.
        unsafe {
            libc::close(a);
            libc::close(b);
        }
        median(lat)
    }

    fn read_spin(fd: i32, buf: &mut [u8], spin: u64) -> bool {
        if spin > 0 {
            let start = now_ns();
            while now_ns() - start < spin {
                // SAFETY: reading into buf, within its length.
                let k = unsafe {
                    libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT)
                };
                if k == buf.len() as isize {
                    return true;
                }
                if k > 0 {
                    return crate::conn::read_exact(fd, &mut buf[k as usize..]);
                }
                std::hint::spin_loop();
            }
        }
        crate::conn::read_exact(fd, buf)
    }
}
