//! Soundness regression tests: on synchronisation programs (semaphores, condition variables,
//! rwlocks, barriers), DPOR, Optimal-DPOR and reachability testing explore each Mazurkiewicz
//! trace, and the counts agree with an independent enumeration ([`super::canon`]) and, where
//! it is small enough, with exhaustive DFS.

use super::canon::{annotate, count_traces, key, Key};
use super::testprog::{self, Interp, Prog};
use super::{explore, Algo, Execution, Executor, Limits};
use crate::strategy::Strategy;
use std::collections::HashSet;

/// Records the canonical form of every complete run of an exploration.
struct Keys {
    inner: Interp,
    seen: HashSet<Key>,
    duplicates: u64,
}

impl Keys {
    fn new(p: &Prog) -> Self {
        Keys {
            inner: Interp::new(p.clone()),
            seen: HashSet::new(),
            duplicates: 0,
        }
    }
}

impl Executor for Keys {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        let ex = self.inner.execute(strategy);
        if ex.diverged.is_none() {
            let t = annotate(
                &ex.trace,
                self.inner.initial_threads(),
                &self.inner.prog.barrier_counts(),
            );
            if !self.seen.insert(key(&t)) {
                self.duplicates += 1;
            }
        }
        ex
    }
    fn initial_threads(&self) -> usize {
        self.inner.initial_threads()
    }
}

/// One explorer's result: complete runs, sleep-set-blocked runs, distinct traces, repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    executions: u64,
    blocked: u64,
    distinct: usize,
    duplicates: u64,
}

fn explore_keys(algo: Algo, p: &Prog) -> (Run, HashSet<Key>) {
    let mut k = Keys::new(p);
    let r = explore(algo, &mut k, Limits::default());
    assert!(r.complete && r.diverged.is_none(), "{algo:?}: {r:?}");
    let run = Run {
        executions: r.executions,
        blocked: r.blocked,
        distinct: k.seen.len(),
        duplicates: k.duplicates,
    };
    (run, k.seen)
}

/// Measurement table (not an assertion): `cargo test --release -p pos-sched sound::table --
/// --ignored --nocapture`.
#[test]
#[ignore = "prints the counts table"]
fn table() {
    let progs: Vec<(&str, Prog, bool)> = vec![
        ("buffer 2+1+1", testprog::bounded_buffer(2, 1, 1, 1), true),
        ("buffer 2+2+1", testprog::bounded_buffer(2, 2, 1, 1), false),
        ("buffer 2+2+2", testprog::bounded_buffer(2, 2, 2, 1), false),
        ("buffer 3+1+2", testprog::bounded_buffer(3, 1, 2, 1), false),
        ("buffer 3+2+2", testprog::bounded_buffer(3, 2, 2, 1), false),
        ("buffer 1+2+1", testprog::bounded_buffer(1, 2, 1, 1), true),
        ("barrier 3", testprog::start_barrier(3, true), true),
        ("buffer 3+3+2", testprog::bounded_buffer(3, 3, 2, 1), false),
        ("x sem_lock 3", testprog::sem_lock(3), true),
        ("x sem_as_mutex 1", testprog::sem_as_mutex(1), false),
        ("x sem_as_mutex 2", testprog::sem_as_mutex(2), false),
        ("x rw 1r1w", testprog::readers_writers(1, 1), true),
        ("x rw 2r1w", testprog::readers_writers(2, 1), false),
        ("x rw 1r2w", testprog::readers_writers(1, 2), false),
        ("x rw_sections 2", testprog::rw_sections(2), true),
        ("x rw_sections 3", testprog::rw_sections(3), false),
        ("x rwlock_upgrade", testprog::rwlock_upgrade(), true),
        ("x barrier 2", testprog::start_barrier(2, true), true),
        ("x philosophers 3", testprog::philosophers(3), true),
        ("x philosophers 4", testprog::philosophers(4), false),
        ("x mutex_rounds 3x2", testprog::mutex_rounds(3, 2), false),
        ("x futex 2", testprog::futex_requeue_broadcast(2, false), false),
        ("x futex 2 bad", testprog::futex_requeue_broadcast(2, true), false),
    ];
    let only = std::env::var("TABLE_ONLY").unwrap_or_default();
    for (name, p, dfs) in progs.into_iter().filter(|x| x.0.contains(only.as_str())) {
        let t = std::time::Instant::now();
        let c = count_traces(&p, 400_000).unwrap_or_default();
        let d = if dfs {
            Some(explore_keys(Algo::Dfs, &p).1.len())
        } else {
            None
        };
        let (dp, _) = explore_keys(Algo::Dpor, &p);
        let (od, _) = explore_keys(Algo::Odpor, &p);
        let (rt, _) = explore_keys(Algo::Rt, &p);
        let name = format!("{name} (buggy {})", c.buggy);
        eprintln!(
            "{name}: enum {} ({} prefixes) dfs {d:?} | dpor {dp:?} | odpor {od:?} | rt {rt:?} [{:?}]",
            c.traces,
            c.prefixes,
            t.elapsed()
        );
    }
}

#[test]
#[ignore = "debug"]
fn debug_missing() {
    struct Rec2(Interp, Vec<(Key, Vec<crate::event::Event>, bool)>);
    impl Executor for Rec2 {
        fn execute(&mut self, s: &mut dyn Strategy) -> Execution {
            let ex = self.0.execute(s);
            let t = annotate(&ex.trace, 1, &self.0.prog.barrier_counts());
            self.1.push((key(&t), ex.trace.clone(), ex.diverged.is_some()));
            ex
        }
    }
    let p = testprog::bounded_buffer(3, 1, 2, 1);
    let mut o = Rec2(Interp::new(p.clone()), vec![]);
    explore(Algo::Odpor, &mut o, Limits::default());
    let mut r = Rec2(Interp::new(p.clone()), vec![]);
    explore(Algo::Rt, &mut r, Limits::default());
    let rk: HashSet<Key> = r.1.iter().filter(|x| !x.2).map(|x| x.0.clone()).collect();
    let show = |t: &[crate::event::Event]| {
        t.iter()
            .filter(|e| {
                !matches!(
                    e.op,
                    crate::event::Op::Create | crate::event::Op::Join { .. } | crate::event::Op::Exit
                )
            })
            .map(|e| format!("{e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (k, t, _) in &o.1 {
        if !rk.contains(k) {
            eprintln!("MISSING: {}", show(t));
        }
    }
    for (_, t, d) in &r.1 {
        if *d {
            eprintln!("BLOCKED: {}", show(t));
        }
    }
}

#[test]
#[ignore = "debug"]
fn debug_rt() {
    let p = testprog::rwlock_upgrade();
    let mut r = Interp::new(p);
    explore(Algo::Rt, &mut r, Limits::default());
}
