//! Tests that hold for every strategy: names, determinism per seed, progress of spin loops,
//! and the random-walk baseline figures the POS paper compares with.

use super::testkit::{
    self, assert_ratio, count, delay7, delay7_bug, race_twice, race_twice_bug, read, write,
    Instr::*, Prog,
};
use super::{by_name, Options, NAMES};
use crate::coordinator::Decision;
use crate::event::{MutexKind, Op};

/// Every sampling strategy (all of [`NAMES`]).
fn all() -> Vec<Box<dyn super::Strategy>> {
    NAMES
        .iter()
        .map(|n| by_name(n, &Options::default()).expect("listed names build"))
        .collect()
}

#[test]
fn names_build_and_unknown_names_fail() {
    for (s, n) in all().iter().zip(NAMES) {
        assert_eq!(s.name(), *n);
    }
    assert_eq!(
        by_name("posstar", &Options::default()).unwrap().name(),
        "pos*"
    );
    assert!(by_name("pct0", &Options::default()).is_err());
    assert!(by_name("pctx", &Options::default()).is_err());
    let err = by_name("dfs", &Options::default()).err().unwrap();
    assert!(err.contains("rapos"), "{err}");
}

fn lock(m: u64) -> Op {
    Op::Lock {
        m,
        kind: MutexKind::Normal,
    }
}

fn unlock(m: u64) -> Op {
    Op::Unlock {
        m,
        kind: MutexKind::Normal,
    }
}

/// Three threads with a shared lock, shared and private memory, and a spin loop.
fn mixed() -> Prog {
    let section = |a: u64| {
        vec![
            Do(lock(1)),
            Do(read(a)),
            Do(write(a)),
            Do(unlock(1)),
            Do(write(0x100 + a)),
        ]
    };
    let mut t0 = section(8);
    t0.push(SpinOn(0x80));
    t0.push(Do(read(16)));
    let mut t1 = section(16);
    t1.extend(section(8));
    let mut t2 = section(8);
    t2.push(Do(write(0x80)));
    Prog(vec![t0, t1, t2])
}

#[test]
fn same_seed_same_schedule_for_every_strategy() {
    let prog = mixed();
    for (mut a, mut b) in all().into_iter().zip(all()) {
        let mut distinct = std::collections::BTreeSet::new();
        // The same sequence of seeds on two instances (PCT's k evolves identically).
        for seed in 0..30 {
            let ra = testkit::run(a.as_mut(), &prog, seed, 10_000);
            let rb = testkit::run(b.as_mut(), &prog, seed, 10_000);
            assert_eq!(ra.end, Decision::Over, "{} seed {seed}", a.name());
            assert_eq!(ra.steps, rb.steps, "{} seed {seed}", a.name());
            distinct.insert(format!("{:?}", ra.trace));
        }
        assert!(
            distinct.len() > 1,
            "{}: different seeds should give different schedules",
            a.name()
        );
    }
}

#[test]
fn spin_waits_terminate_under_every_strategy() {
    // A: while (!flag) yield; B: independent work, then flag = 1.
    let progs = [
        Prog(vec![vec![SpinOn(0x20)], vec![Do(write(0x20))]]),
        Prog(vec![
            vec![Do(write(0x10)), SpinOn(0x20), Do(read(0x30))],
            vec![Do(write(0x30)), Do(write(0x40)), Do(write(0x20))],
        ]),
    ];
    // The longest of these runs takes 297 steps (basicpos, which keeps B's priority while A
    // spins; its fairness redraw comes only after 1000 yields).
    const BOUND: u64 = 1_000;
    for mut s in all() {
        for prog in &progs {
            for seed in 0..100 {
                let r = testkit::run(s.as_mut(), prog, seed, BOUND);
                assert_eq!(r.end, Decision::Over, "{} seed {seed}", s.name());
            }
        }
    }
}

#[test]
fn random_walk_baseline_figures() {
    // The POS paper's §2: a random walk must pick B seven times in a row, 1/2^7.
    let n = 200_000;
    let mut rw = by_name("rw", &Options::default()).unwrap();
    let hits = count(rw.as_mut(), &delay7(), 13, n, delay7_bug);
    assert_ratio("rw delay7", hits, n, 1.0 / 128.0);
    let hits = count(rw.as_mut(), &race_twice(), 14, n, race_twice_bug);
    assert_ratio("rw race-twice", hits, n, 0.25);
}

#[test]
fn decisions_do_not_depend_on_the_order_threads_post_in() {
    // Real threads post in whatever order the OS runs them; a seed must still mean one
    // schedule. Three threads post their first events in two different orders.
    let script = |t: u32| -> Vec<Op> {
        (0..6u64)
            .map(|i| match (t as u64 + i) % 3 {
                0 => write(0x10 * (i % 2)),
                1 => read(0x10),
                _ => Op::Yield,
            })
            .collect()
    };
    let scripts: Vec<Vec<Op>> = (0..3).map(script).collect();
    let drive = |s: &mut dyn super::Strategy, first_order: [u32; 3], seed: u64| -> Vec<u32> {
        s.begin(seed);
        let mut pc = [0usize; 3];
        let ev = |t: u32, pc: &[usize; 3]| {
            crate::Event::new(
                t,
                scripts[t as usize]
                    .get(pc[t as usize])
                    .copied()
                    .unwrap_or(Op::Exit),
            )
        };
        for t in first_order {
            s.pending(&ev(t, &pc));
        }
        let mut order = Vec::new();
        let mut live: Vec<u32> = vec![0, 1, 2];
        while !live.is_empty() {
            let enabled: Vec<_> = live.iter().map(|&t| ev(t, &pc)).collect();
            let i = s.choose(&enabled).expect("no divergence");
            let e = enabled[i];
            s.executed(&e);
            order.push(e.tid);
            if e.op == Op::Exit {
                live.retain(|&t| t != e.tid);
            } else {
                pc[e.tid as usize] += 1;
                s.pending(&ev(e.tid, &pc));
            }
        }
        s.end(order.len() as u64);
        order
    };
    for (mut a, mut b) in all().into_iter().zip(all()) {
        for seed in 0..20 {
            let x = drive(a.as_mut(), [0, 1, 2], seed);
            let y = drive(b.as_mut(), [2, 0, 1], seed);
            assert_eq!(x, y, "{} seed {seed}", a.name());
        }
    }
}
