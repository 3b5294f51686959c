//! Happens-before and race detection of one long execution, as source- and optimal-DPOR do
//! after every run (not a test: `cargo bench -p pos-sched --bench happens_before`).
//!
//! The trace: main creates 4 threads, each runs `P` critical sections (lock, read, write,
//! unlock of one counter under one mutex, taken in turn), exits, and main joins them: the
//! shape of a spinlock or mutex counter loop, where every operation on the lock depends on
//! every other thread's. Prints the time of [`Hb::new`] plus [`Hb::races_of`] for every event,
//! per event, for `P` = 100, 200, 400, 800, and the ratio of each to the previous one: 2.0 is
//! linear growth in the trace's length, 4.0 quadratic.

use pos_sched::explore::trace::{Hb, TEv};
use pos_sched::{Event, MutexKind, Op};
use std::hint::black_box;
use std::time::Instant;

const THREADS: u32 = 4;
const M: u64 = 0x100;
const X: u64 = 0x2000;

fn trace(p: usize) -> Vec<TEv> {
    let ev = |t, op| TEv::new(Event::new(t, op));
    let kind = MutexKind::Normal;
    let mut out = Vec::new();
    for t in 1..=THREADS {
        out.push(TEv {
            child: Some(t),
            ..ev(0, Op::Create)
        });
        out.push(ev(t, Op::Start));
    }
    for _ in 0..p {
        for t in 1..=THREADS {
            out.push(ev(t, Op::Lock { m: M, kind }));
            out.push(ev(t, Op::Read { addr: X, size: 8 }));
            out.push(ev(t, Op::Write { addr: X, size: 8 }));
            out.push(ev(t, Op::Unlock { m: M, kind }));
        }
    }
    for t in 1..=THREADS {
        out.push(ev(t, Op::Exit));
        out.push(ev(0, Op::Join { target: t }));
    }
    out.push(ev(0, Op::Exit));
    out
}

/// Seconds for happens-before and every event's races (best of `reps`), and the races found.
fn measure(t: &[TEv], reps: u32) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut races = 0;
    for _ in 0..reps {
        let start = Instant::now();
        let hb = Hb::new(t.to_vec());
        races = (0..hb.len()).map(|j| hb.races_of(j, 1).len()).sum();
        black_box(&hb);
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, races)
}

fn main() {
    println!("critical sections  events  races  time/event  ratio to previous");
    let mut previous: Option<f64> = None;
    for p in [100, 200, 400, 800] {
        let t = trace(p);
        let (secs, races) = measure(&t, 3);
        let ratio = previous.map_or("-".to_string(), |q| format!("{:.2}", secs / q));
        println!(
            "{:>17}  {:>6}  {:>5}  {:>8.2} us  {ratio}",
            p,
            t.len(),
            races,
            secs * 1e6 / t.len() as f64
        );
        previous = Some(secs);
    }
}
