//! Scheduling decisions per second for each sampling strategy (not a test: `cargo bench -p
//! pos-sched --bench decisions`).
//!
//! A synthetic 16-thread program, 1,000 events per thread: reads and writes over 48 shared
//! addresses and, one event in ten, a critical section (lock, two accesses, unlock) on one of
//! four mutexes. It runs through the real [`Coordinator`] and [`State`], with the threads'
//! posts done inline, so the figure is the cost of the coordinator loop plus the strategy: the
//! ceiling for a real run, whose threads also pay for the socket round trips.
//!
//! Rates are per run: the median and the best of the decision loop alone (post + decide), and
//! the median including [`Coordinator::finish`], which renders the recorded schedule as text
//! once per run. On a shared machine the best run is the figure least disturbed by others.

use pos_sched::strategy::{by_name, Options};
use pos_sched::{Coordinator, Decision, MutexKind, Op, State};
use std::hint::black_box;
use std::time::{Duration, Instant};

const THREADS: usize = 16;
const EVENTS: usize = 1_000;
const ADDRS: u64 = 48;
const MUTEXES: u64 = 4;
/// Runs per strategy; each has THREADS * (EVENTS + 1) decisions.
const RUNS: u64 = 40;

/// The scripts: per thread, exactly EVENTS operations (its Exit is posted after them).
fn program() -> Vec<Vec<Op>> {
    let mut rng = pos_sched::rng::Rng::new(2024);
    let mem = |rng: &mut pos_sched::rng::Rng| {
        let addr = 0x1000 + 8 * rng.below(ADDRS);
        if rng.chance(0.5) {
            Op::Read { addr, size: 8 }
        } else {
            Op::Write { addr, size: 8 }
        }
    };
    (0..THREADS)
        .map(|_| {
            let mut ops = Vec::with_capacity(EVENTS);
            while ops.len() < EVENTS {
                if ops.len() + 4 <= EVENTS && rng.chance(0.1) {
                    let m = 0x100 + 0x40 * rng.below(MUTEXES);
                    let kind = MutexKind::Normal;
                    ops.push(Op::Lock { m, kind });
                    ops.push(mem(&mut rng));
                    ops.push(mem(&mut rng));
                    ops.push(Op::Unlock { m, kind });
                } else {
                    ops.push(mem(&mut rng));
                }
            }
            ops
        })
        .collect()
}

/// One run; returns (decisions, time in the loop, time in finish).
fn run_once(
    strategy: &mut dyn pos_sched::Strategy,
    prog: &[Vec<Op>],
    seed: u64,
) -> (u64, Duration, Duration) {
    let start = Instant::now();
    let state = State::with_initial_threads(prog.len());
    let mut co = Coordinator::with_state(strategy, seed, u64::MAX, state);
    let mut pc = vec![0usize; prog.len()];
    let op_at = |t: usize, i: usize| prog[t].get(i).copied().unwrap_or(Op::Exit);
    for t in 0..prog.len() {
        co.post(t as u32, op_at(t, 0)).expect("post");
    }
    let mut decisions = 0u64;
    loop {
        match co.decide() {
            Decision::Grant { tid, op, .. } => {
                decisions += 1;
                if op != Op::Exit {
                    let t = tid as usize;
                    pc[t] += 1;
                    co.post(tid, op_at(t, pc[t])).expect("post");
                }
            }
            Decision::Over => break,
            other => panic!("unexpected end of a benchmark run: {other:?}"),
        }
    }
    let looped = start.elapsed();
    let start = Instant::now();
    black_box(co.finish());
    (decisions, looped, start.elapsed())
}

fn main() {
    let prog = program();
    println!(
        "{THREADS} threads x {EVENTS} events, {RUNS} runs per strategy; rates in decisions/s\n\
         (median and best run: the best is the least disturbed by other processes)\n\
         {:<10} {:>10} {:>12} {:>12} {:>20}",
        "strategy", "decisions", "median", "best", "median with finish()"
    );
    // Strategy names on the command line restrict the table (cargo passes `--bench`).
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for name in ["rw", "pct3", "pos", "pos*", "basicpos", "rapos"] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let mut s = by_name(name, &Options::default()).expect("strategy");
        // Warm-up run (also gives PCT its k).
        run_once(s.as_mut(), &prog, u64::MAX);
        let mut total = 0;
        let mut loop_rates = Vec::new();
        let mut full_rates = Vec::new();
        for i in 0..RUNS {
            let (d, l, f) = run_once(s.as_mut(), &prog, pos_sched::rng::try_seed(1, i));
            total += d;
            loop_rates.push(d as f64 / l.as_secs_f64());
            full_rates.push(d as f64 / (l + f).as_secs_f64());
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let best = loop_rates.iter().copied().fold(0.0, f64::max);
        println!(
            "{:<10} {:>10} {:>12.0} {:>12.0} {:>20.0}",
            name,
            total,
            median(&mut loop_rates),
            best,
            median(&mut full_rates)
        );
    }
}
