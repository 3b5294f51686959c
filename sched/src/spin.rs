//! Spin-waits: a thread that reads the same location again and again with nothing but
//! reads in between (`while (!flag);` built with `poscheck cc`, where every access is a
//! scheduling point), polls a try-operation (`while (pthread_mutex_trylock(&m));`), or,
//! for PCT and exploration's fairness rule only, polls under a mutex (see
//! [`SpinWatch::POLLS`]). Natively such a thread waits for time to pass or for another
//! core; under control it would keep the turn for ever. The clock rules
//! ([`crate::coordinator`]), PCT's yield rule ([`crate::strategy::pct`]) and exploration's
//! fairness rule (`explore::guide`) treat it as a thread that yields.

use crate::event::{Event, Op};

/// Whether `e` is a read its thread already made among the last few steps, with nothing
/// but reads and yields since (any thread's): a thread spinning on a flag with memory
/// accesses as points (`while (!done);` built with `poscheck cc`). For the clock it waits
/// as a yielding thread does: natively the flag's setter (a timer's handler, a sleeper)
/// comes once time has passed, which here it never would (a step limit).
pub fn spinning(trace: &[Event], e: &Event) -> bool {
    /// How far back a spin's previous read is looked for.
    const WINDOW: usize = 64;
    let Some(at) = read_of(&e.op) else {
        return false;
    };
    for past in trace.iter().rev().take(WINDOW) {
        match read_of(&past.op) {
            Some(was) if past.tid == e.tid && was == at => return true,
            Some(_) => {}
            None if past.op == Op::Yield => {}
            None => return false,
        }
    }
    false
}

/// A read's location, if `op` is a plain or atomic read, or a try-operation that a loop
/// polls (`while (pthread_mutex_trylock(&m));`): one that fails changes nothing, like a read,
/// and one that succeeds is followed by other events (its critical section, an unlock)
/// before the next, which end the streak. A try-operation's size is 0, which no memory read
/// has. Without them, PCT kept a trylock poller at the highest priority while the holder
/// waited below it, to the step limit (probe 16: 7 of 50 runs).
fn read_of(op: &Op) -> Option<(u64, u32)> {
    match *op {
        Op::Read { addr, size } | Op::AtomicLoad { addr, size, .. } => Some((addr, size)),
        Op::TryLock { m, .. } => Some((m, 0)),
        Op::TryRdLock { l } | Op::TryWrLock { l } => Some((l, 0)),
        Op::SemTryWait { s } => Some((s, 0)),
        _ => None,
    }
}

/// A read's location (address, size), how many times in a row, and the count of other
/// events when the streak began.
type Streak = ((u64, u32), u32, u64);

/// Spin detection over executed events, one at a time (for a strategy, which sees no
/// trace): an event is a spin once its thread has made the same read [`SpinWatch::REPEATS`]
/// times in a row with only reads and yields executed since the first.
#[derive(Debug)]
pub struct SpinWatch {
    /// Lock-unlock pairs in a row that make a lock-polling spin ([`SpinWatch::POLLS`] unless
    /// built [`SpinWatch::with_polls`]).
    polls: u32,
    /// Per thread: its last read, how many times in a row, and [`SpinWatch::others`] then.
    last: Vec<Option<Streak>>,
    /// Events that were neither reads nor yields, so far.
    others: u64,
    /// A lock-polling loop (see [`SpinWatch::POLLS`]): thread, mutex, pairs in a row, and
    /// [`SpinWatch::others`] after the last pair's unlock.
    poll: Option<(u32, u64, u32, u64)>,
    /// The last lock: thread, mutex, and [`SpinWatch::others`] before it.
    locked: Option<(u32, u64, u64)>,
}

impl Default for SpinWatch {
    fn default() -> Self {
        Self::with_polls(Self::POLLS)
    }
}

impl SpinWatch {
    /// A watch for which `polls` lock-unlock pairs in a row make a lock-polling spin.
    pub fn with_polls(polls: u32) -> Self {
        SpinWatch {
            polls,
            last: Vec::new(),
            others: 0,
            poll: None,
            locked: None,
        }
    }

    /// Identical reads in a row that make a spin: with points at racing sites only, straight
    /// code re-reads a racing location a few times with no point between (a check, then the
    /// act: `atomicity_violation` reads `g_log` four times in a row).
    pub const REPEATS: u32 = 8;

    /// Lock-unlock pairs of one mutex by one thread in a row, nothing but its reads between
    /// and no other thread's event, that make a spin: `for (;;) { lock; empty = !n; unlock;
    /// if (empty) break; }` waits for the other threads, which PCT never ran while the
    /// poller had the top priority (a C++ `lock_guard` drain loop: step limit, 2 of 50
    /// runs). With sync points a loop of short critical sections looks the same, so the bar
    /// is high: a work loop that long with no other thread running is unusual.
    pub const POLLS: u32 = 1_000;

    pub fn clear(&mut self) {
        self.last.clear();
        self.others = 0;
        self.poll = None;
        self.locked = None;
    }

    /// `ev` executed: whether it continues a spin.
    pub fn executed(&mut self, ev: &Event) -> bool {
        let polled = self.lock_poll(ev);
        self.read_spin(ev) || polled
    }

    /// Lock-polling bookkeeping for `ev`, before it is counted: whether it is the unlock
    /// of the [`Self::POLLS`]-th pair in a row (or a later one; see [`Self::with_polls`]). A
    /// pair is a lock and an unlock of one mutex by one thread with only reads between;
    /// pairs are in a row when only yields and reads come between them.
    fn lock_poll(&mut self, ev: &Event) -> bool {
        match ev.op {
            Op::Lock { m, .. } => {
                self.locked = Some((ev.tid, m, self.others));
                false
            }
            Op::Unlock { m, .. } => {
                let pair = self
                    .locked
                    .take()
                    .filter(|&(t, lm, before)| t == ev.tid && lm == m && self.others == before + 1);
                let Some((t, _, before)) = pair else {
                    self.poll = None;
                    return false;
                };
                let n = match self.poll {
                    Some((pt, pm, n, after)) if pt == t && pm == m && after == before => n + 1,
                    _ => 1,
                };
                self.poll = Some((t, m, n, self.others + 1));
                n >= self.polls
            }
            _ => false,
        }
    }

    /// The read-spin part of [`Self::executed`].
    fn read_spin(&mut self, ev: &Event) -> bool {
        let t = ev.tid as usize;
        if self.last.len() <= t {
            self.last.resize(t + 1, None);
        }
        let Some(at) = read_of(&ev.op) else {
            if ev.op != Op::Yield {
                self.others += 1;
            }
            self.last[t] = None;
            return false;
        };
        let n = match self.last[t] {
            Some((prev, n, others)) if prev == at && others == self.others => n + 1,
            _ => 1,
        };
        self.last[t] = Some((at, n, self.others));
        n >= Self::REPEATS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_repeated_with_only_reads_between_is_a_spin_a_write_ends_it() {
        let read = |t| Event::new(t, Op::Read { addr: 8, size: 4 });
        let mut w = SpinWatch::default();
        assert!(
            !w.executed(&read(1)),
            "another thread's read changes nothing"
        );
        for _ in 1..SpinWatch::REPEATS {
            assert!(!w.executed(&read(0)));
        }
        assert!(w.executed(&read(0)), "the REPEATS-th in a row");
        assert!(w.executed(&read(0)));
        assert!(!w.executed(&Event::new(1, Op::Write { addr: 8, size: 4 })));
        assert!(
            !w.executed(&read(0)),
            "a write in between: counting starts again"
        );
        assert!(!w.executed(&Event::new(0, Op::Read { addr: 16, size: 4 })));
        assert!(!w.executed(&read(0)), "another location in between");
    }

    #[test]
    fn a_long_lock_polling_loop_is_a_spin_and_another_thread_ends_it() {
        let kind = crate::MutexKind::Normal;
        let lock = |t| Event::new(t, Op::Lock { m: 0x40, kind });
        let unlock = |t| Event::new(t, Op::Unlock { m: 0x40, kind });
        let read = |t| Event::new(t, Op::Read { addr: 8, size: 4 });
        let mut w = SpinWatch::default();
        for _ in 1..SpinWatch::POLLS {
            assert!(!w.executed(&lock(0)));
            assert!(!w.executed(&read(0)), "the loop's test of the queue");
            assert!(!w.executed(&unlock(0)));
        }
        assert!(!w.executed(&lock(0)));
        assert!(w.executed(&unlock(0)), "the POLLS-th pair in a row");
        // Another thread's step between two pairs starts the count again.
        assert!(!w.executed(&Event::new(1, Op::Write { addr: 8, size: 4 })));
        assert!(!w.executed(&lock(0)));
        assert!(!w.executed(&unlock(0)));
        // So does a write inside the critical section: a work loop.
        let mut w = SpinWatch::default();
        for _ in 0..2 * SpinWatch::POLLS {
            assert!(!w.executed(&lock(0)));
            assert!(!w.executed(&Event::new(0, Op::Write { addr: 8, size: 4 })));
            assert!(!w.executed(&unlock(0)));
        }
    }

    #[test]
    fn a_polled_trylock_is_a_spin_and_its_critical_section_ends_it() {
        let kind = crate::MutexKind::Normal;
        let try_lock = |t| Event::new(t, Op::TryLock { m: 0x40, kind });
        let mut w = SpinWatch::default();
        for _ in 1..SpinWatch::REPEATS {
            assert!(!w.executed(&try_lock(0)));
        }
        assert!(w.executed(&try_lock(0)), "the holder never ran: a spin");
        // A loop of successful trylocks: each one's unlock comes before the next.
        let mut w = SpinWatch::default();
        for _ in 0..3 * SpinWatch::REPEATS {
            assert!(!w.executed(&try_lock(1)));
            assert!(!w.executed(&Event::new(1, Op::Unlock { m: 0x40, kind })));
        }
        // The clock: a poller's pending trylock waits like a yield.
        let trace = vec![try_lock(0), Event::new(1, Op::Read { addr: 8, size: 4 })];
        assert!(spinning(&trace, &try_lock(0)));
        let trace = vec![try_lock(0), Event::new(1, Op::Unlock { m: 0x40, kind })];
        assert!(!spinning(&trace, &try_lock(0)));
    }
}
