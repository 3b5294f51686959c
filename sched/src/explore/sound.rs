//! Soundness regression tests: on synchronisation programs (semaphores, condition variables,
//! rwlocks, barriers), DPOR, Optimal-DPOR and reachability testing explore each Mazurkiewicz
//! trace, and the counts agree with an independent enumeration ([`super::canon`]) and, where
//! it is small enough, with exhaustive DFS.

use super::canon::{count_traces, explore_runs, key, Key};
use super::testprog::{self, Prog};
use super::Algo;
use std::collections::HashSet;

/// One explorer's result: complete runs, sleep-set-blocked runs, distinct traces, repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    executions: u64,
    blocked: u64,
    distinct: usize,
    duplicates: u64,
}

fn explore_keys(algo: Algo, p: &Prog) -> (Run, HashSet<Key>) {
    let (r, runs) = explore_runs(algo, p);
    let mut seen = HashSet::new();
    let mut duplicates = 0;
    for (t, _) in &runs {
        if !seen.insert(key(t)) {
            duplicates += 1;
        }
    }
    let run = Run {
        executions: r.executions,
        blocked: r.blocked,
        distinct: seen.len(),
        duplicates,
    };
    (run, seen)
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
        ("barrier 4", testprog::start_barrier(4, true), false),
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
        (
            "x futex 2",
            testprog::futex_requeue_broadcast(2, false),
            false,
        ),
        (
            "x futex 2 bad",
            testprog::futex_requeue_broadcast(2, true),
            false,
        ),
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

/// The checks every program gets: the independent enumeration finds `want` traces (and so
/// does exhaustive DFS when `dfs`), and DPOR, Optimal-DPOR and rt each explore all of them
/// with no sleep-set-blocked run (Source-DPOR may have some: `blocked`, its count here).
/// Returns each explorer's runs and traces for the
/// program-specific checks (exact counts, no repeats).
fn check(name: &str, p: &Prog, want: usize, dfs: bool) -> [(Run, HashSet<Key>); 3] {
    check_blocked(name, p, want, dfs, 0)
}

/// [`check`] allowing `blocked` sleep-set-blocked Source-DPOR runs.
fn check_blocked(
    name: &str,
    p: &Prog,
    want: usize,
    dfs: bool,
    blocked: u64,
) -> [(Run, HashSet<Key>); 3] {
    let c = count_traces(p, 1_000_000).expect("small enough to enumerate");
    assert_eq!(c.traces, want, "{name}: independent enumeration");
    if dfs {
        let (_, all) = explore_keys(Algo::Dfs, p);
        assert_eq!(
            all.len(),
            want,
            "{name}: distinct traces of every interleaving"
        );
    }
    let out = [Algo::Dpor, Algo::Odpor, Algo::Rt].map(|a| explore_keys(a, p));
    for (a, (r, seen)) in ["dpor", "odpor", "rt"].iter().zip(&out) {
        eprintln!("{name}: {a} {r:?}");
        assert_eq!(r.distinct, want, "{name}: {a} misses traces: {r:?}");
        let allowed = if *a == "dpor" { blocked } else { 0 };
        assert_eq!(r.blocked, allowed, "{name}: {a} {r:?}");
        assert!(
            seen == &out[1].1,
            "{name}: {a} and odpor explore other traces"
        );
    }
    out
}

/// [`check`], and each explorer runs every trace exactly once.
fn check_exact(name: &str, p: &Prog, want: usize, dfs: bool) {
    for (r, _) in check(name, p, want, dfs) {
        assert_eq!(
            (r.executions, r.duplicates),
            (want as u64, 0),
            "{name}: {r:?}"
        );
    }
}

/// Bounded buffers with counting semaphores (`empty` = slots, `full` = 0) and a mutex, one
/// item per thread. The counts are those of the independent enumeration; by hand: with one
/// slot, producers and consumers alternate, so a trace is the order of the producers times
/// the order of the consumers (2+1+1: 2, the consumer's place is forced; 2+2+1: 2·2 = 4).
/// Before the fix rt explored 140 (+2 sleep-set blocked) of the 3+1+2 buffer's 144 traces:
/// a sibling variant's exclusion named one (wait, post) pair, and excluded it also in runs
/// where the post had been displaced and re-executed after another post.
#[test]
fn semaphore_bounded_buffers_match_the_independent_count() {
    for (p, c, slots, want, dfs) in [
        (2, 1, 1, 2, true),
        (2, 2, 1, 4, false),
        (2, 2, 2, 148, false),
        (3, 1, 2, 144, false),
    ] {
        let name = format!("buffer {p}+{c}+{slots}");
        check_exact(&name, &testprog::bounded_buffer(p, c, slots, 1), want, dfs);
    }
}

/// The larger buffers of issue 12 (3+2+2: enumeration 1,596; 3+3+2: 12,276 traces for
/// odpor, too many prefixes to enumerate here): rt equals odpor, with no blocked run.
#[test]
#[ignore = "about a minute: cargo test --release -p pos-sched sound -- --ignored"]
fn large_semaphore_bounded_buffers() {
    check_exact(
        "buffer 3+2+2",
        &testprog::bounded_buffer(3, 2, 2, 1),
        1596,
        false,
    );
    let p = testprog::bounded_buffer(3, 3, 2, 1);
    let (od, od_seen) = explore_keys(Algo::Odpor, &p);
    let (rt, rt_seen) = explore_keys(Algo::Rt, &p);
    assert_eq!(od.executions, 12_276);
    assert_eq!(rt, od);
    assert!(rt_seen == od_seen);
}

/// One producer, two consumers, one slot: one consumer gets the item, the other waits
/// forever (a deadlock). Two traces, one per consumer that gets the item (DFS agrees). The
/// run where consumer 1 takes it shows no race (consumer 2's wait never executes), so
/// DPOR and Optimal-DPOR explored 1: the blocked wait now races with the wait that took the
/// unit ([`super::trace::blocked_races`]).
#[test]
fn a_blocked_wait_races_with_the_wait_that_took_its_unit() {
    check_exact(
        "buffer 1+2+1",
        &testprog::bounded_buffer(1, 2, 1, 1),
        2,
        true,
    );
}

/// Semaphores used as locks: `n` threads entering in any order (3! = 6, DFS agrees), and
/// the suite's `sem_wrong_init` at value 1 (a lock: 3! = 6). At value 2 two workers are
/// inside at once and race on `x`, which `--points sync` does not schedule: a trace of the
/// scheduled events no longer fixes the outcome, so that program has no ground truth here.
#[test]
fn semaphores_as_locks_match_the_independent_count() {
    check_exact("sem_lock(3)", &testprog::sem_lock(3), 6, true);
    check_exact("sem_as_mutex(1)", &testprog::sem_as_mutex(1), 6, false);
}

/// Readers-writers with a mutex and a condition variable: 1 reader/1 writer has 4 traces
/// (DFS agrees), 2r/1w 62 and 1r/2w 56 by enumeration (56 is also DFS's count in
/// `tests::large_sizes`).
#[test]
fn condition_variables_match_the_independent_count() {
    check_exact(
        "readers-writers 1r/1w",
        &testprog::readers_writers(1, 1),
        4,
        true,
    );
    check_exact(
        "readers-writers 2r/1w",
        &testprog::readers_writers(2, 1),
        62,
        false,
    );
    check_exact(
        "readers-writers 1r/2w",
        &testprog::readers_writers(1, 2),
        56,
        false,
    );
}

/// Read-write locks: one writer and `n` readers give 2^n traces (which readers precede the
/// writer; read sections commute; DFS agrees for n = 2); the read-then-write upgrade of two
/// threads has 4 (either thread entirely first, or both reads first and either write
/// first: the two lost updates). DPOR and Optimal-DPOR run each once. rt sees every trace
/// too but orders read-mode operations like write-mode ones (an rwlock is a channel whose
/// operations are totally ordered), so it runs read orders that are one trace: 14 runs for
/// 4 traces, 216 for 8.
#[test]
fn rwlocks_match_the_independent_count() {
    for (name, p, want, dfs) in [
        ("rw_sections(2)", testprog::rw_sections(2), 4, true),
        ("rw_sections(3)", testprog::rw_sections(3), 8, false),
        ("rwlock_upgrade", testprog::rwlock_upgrade(), 4, true),
    ] {
        let [dp, od, rt] = check(name, &p, want, dfs);
        for (r, _) in [dp, od] {
            assert_eq!(
                (r.executions, r.duplicates),
                (want as u64, 0),
                "{name}: {r:?}"
            );
        }
        assert!(rt.0.executions > want as u64, "{name}: {:?}", rt.0);
    }
}

/// A start barrier: with `n` threads, n choices of the completing arrival × n! lock orders:
/// 4, 18 (DFS agrees for both) and 96 traces. The open arrivals commute, but whether an
/// arrival completes the barrier depends on how many came before it, so sleep sets and
/// wakeup sequences decide it at their place in the run (`Guide::executed`,
/// `trace::is_weak_initial_at`): Source-DPOR and Optimal-DPOR run each trace once (plus
/// sleep-set-blocked Source-DPOR runs: 1 and 3). Before, both ran the open arrivals in both
/// orders (36 runs for 18 traces). rt's barrier channel orders every arrival: n!·n! runs
/// (36, 576).
#[test]
fn barriers_match_the_independent_count() {
    check_exact(
        "start_barrier(2)",
        &testprog::start_barrier(2, true),
        4,
        true,
    );
    for (n, want, dfs, blocked) in [(3usize, 18usize, true, 1u64), (4, 96, false, 3)] {
        let name = format!("start_barrier({n})");
        let p = testprog::start_barrier(n, true);
        let [dp, od, rt] = check_blocked(&name, &p, want, dfs, blocked);
        for r in [dp.0, od.0] {
            assert_eq!(
                (r.executions, r.duplicates),
                (want as u64, 0),
                "{name}: {r:?}"
            );
        }
        let fact: u64 = (1..=n as u64).product();
        assert_eq!(rt.0.executions, fact * fact, "{name}: {:?}", rt.0);
    }
}

/// rt and Optimal-DPOR explore the same traces on every synchronisation-only program of the
/// abstract suite (tests.rs, testprog.rs), the same number of runs except where rt orders
/// read-mode rwlock operations or barrier arrivals (see the rwlock and barrier tests: 36
/// runs for odpor's 18 on a 3-thread barrier).
/// Not here: `sem_as_mutex(2)` (see the semaphore test) and the futex programs (`futex_requeue_broadcast`): their futex words are plain
/// memory updated between scheduling points, which no explorer's dependency relation sees
/// (2 runs where the events alone give 6 traces); rt does not model futexes at all.
#[test]
fn rt_equals_odpor_on_every_sync_only_program() {
    let progs: Vec<(&str, Prog, bool)> = vec![
        ("philosophers(3)", testprog::philosophers(3), true),
        ("philosophers(4)", testprog::philosophers(4), true),
        ("philosophers(5)", testprog::philosophers(5), true),
        ("mutex rounds 3x2", testprog::mutex_rounds(3, 2), true),
        (
            "readers-writers 1r/1w",
            testprog::readers_writers(1, 1),
            true,
        ),
        (
            "readers-writers 2r/1w",
            testprog::readers_writers(2, 1),
            true,
        ),
        (
            "readers-writers 1r/2w",
            testprog::readers_writers(1, 2),
            true,
        ),
        ("buffer 2+1+1", testprog::bounded_buffer(2, 1, 1, 1), true),
        ("buffer 2+2+1", testprog::bounded_buffer(2, 2, 1, 1), true),
        ("buffer 3+3+1", testprog::bounded_buffer(3, 3, 1, 1), true),
        ("buffer 2+2+2", testprog::bounded_buffer(2, 2, 2, 1), true),
        ("buffer 3+1+2", testprog::bounded_buffer(3, 1, 2, 1), true),
        ("buffer 1+2+1", testprog::bounded_buffer(1, 2, 1, 1), true),
        (
            "buffer 2+2+1, 2 items",
            testprog::bounded_buffer(2, 2, 1, 2),
            true,
        ),
        ("sem_lock(2)", testprog::sem_lock(2), true),
        ("sem_lock(3)", testprog::sem_lock(3), true),
        ("sem_as_mutex(1)", testprog::sem_as_mutex(1), true),
        (
            "start_barrier(3), no barrier",
            testprog::start_barrier(3, false),
            true,
        ),
        ("start_barrier(2)", testprog::start_barrier(2, true), true),
        ("start_barrier(3)", testprog::start_barrier(3, true), false),
        ("rw_sections(2)", testprog::rw_sections(2), false),
        ("rw_sections(3)", testprog::rw_sections(3), false),
        ("rwlock_upgrade", testprog::rwlock_upgrade(), false),
    ];
    for (name, p, same_runs) in progs {
        let (od, od_seen) = explore_keys(Algo::Odpor, &p);
        let (rt, rt_seen) = explore_keys(Algo::Rt, &p);
        eprintln!("{name}: odpor {od:?}, rt {rt:?}");
        assert!(rt_seen == od_seen, "{name}: rt {rt:?}, odpor {od:?}");
        assert_eq!(rt.blocked, 0, "{name}");
        if same_runs {
            assert_eq!(rt.executions, od.executions, "{name}");
        }
    }
}

/// The suite's `account` without its data: two transfers that each take one lock, then the
/// other (never nested), and an auditor that nests A then B. 17 traces by the enumeration;
/// every explorer runs each once.
#[test]
fn transfers_and_a_nested_auditor_match_the_independent_count() {
    use super::testprog::{k, with_main, I};
    let t1 = vec![
        I::Lock(k(0)),
        I::Unlock(k(0)),
        I::Lock(k(1)),
        I::Unlock(k(1)),
    ];
    let t2 = vec![
        I::Lock(k(1)),
        I::Unlock(k(1)),
        I::Lock(k(0)),
        I::Unlock(k(0)),
    ];
    let t3 = vec![
        I::Lock(k(0)),
        I::Lock(k(1)),
        I::Unlock(k(1)),
        I::Unlock(k(0)),
    ];
    let mut p = with_main(vec![t1, t2, t3], &[(0, 0), (1, 0), (2, 0)]);
    p.sync_only = true;
    check_exact("account", &p, 17, false);
}

/// The canonical forms of the bug-free complete runs of an exploration.
fn bug_free_keys(algo: Algo, p: &Prog) -> HashSet<Key> {
    let (_, runs) = explore_runs(algo, p);
    runs.iter()
        .filter(|(_, buggy)| !buggy)
        .map(|(t, _)| key(t))
        .collect()
}

/// A run cut short by a failed assertion still has races: the events the other threads
/// posted and never ran ([`super::trace::blocked_races`]). Before, DPOR and Optimal-DPOR
/// treated only deadlocks so: on `cond_if` (a consumer asserts right after reacquiring the
/// mutex, before the producer's second lock) odpor ran 24 executions where it now runs 26,
/// and on the readers-writers gap 247 where it now runs 320, missing bug-free traces (and
/// whatever they lead to).
/// Here each program is checked twice: with the check non-fatal (every run has all its
/// events) every explorer runs exactly the independent count; with the assertion, the
/// bug-free traces explored are the same ones.
#[test]
fn runs_cut_short_by_an_assertion_still_race() {
    for (name, fatal, checked, want) in [
        (
            "cond_if",
            testprog::cond_if(true),
            testprog::cond_if(false),
            26,
        ),
        (
            "readers_writers_gap",
            testprog::readers_writers_gap(true),
            testprog::readers_writers_gap(false),
            414,
        ),
    ] {
        check_exact(name, &checked, want, false);
        let all = bug_free_keys(Algo::Odpor, &checked);
        for algo in [Algo::Dpor, Algo::Odpor, Algo::Rt] {
            assert!(
                bug_free_keys(algo, &fatal) == all,
                "{name}: {algo:?} misses bug-free traces after a failed assertion"
            );
        }
    }
}

/// A recursive mutex with a nested relock and a lock leaked by an exiting thread
/// (`benchmarks/src/recursive_bad.c`): 20 traces, 8 of them bug-free. DPOR and Optimal-DPOR
/// explored 16 (4 bug-free): a lock that waited for an unlock races with the lock that unlock
/// gave back, and they took the nested relock for it (the reversal, infeasible, was dropped),
/// so a worker's flush never overtook the other's second append. Nested operations are now
/// marked ([`super::trace::nested_in_owner`]) and skipped there.
#[test]
fn recursive_mutexes_match_the_independent_count() {
    check_exact("recursive_leak", &testprog::recursive_leak(), 20, true);
    let good = bug_free_keys(Algo::Odpor, &testprog::recursive_leak());
    assert_eq!(
        good.len(),
        8,
        "bug-free traces (by hand: both flushes find a non-empty log)"
    );
}

/// Threads meeting at one barrier `phases` times (`benchmarks/src/barrier_ok.c`: 3 threads,
/// 4 waits): a trace is which thread completes each phase, `n^phases` of them. Optimal-DPOR
/// ran 1,536 executions for barrier_ok's 81 traces (6 for the 4 of two threads and two
/// phases): a sleeping next-phase arrival woke up at another thread's leave of the phase
/// before, though a leave changes no count of the generation being filled. Now odpor runs
/// each trace once; dpor and rt see every trace (dpor with sleep-set blocked runs, rt with
/// repeats: barrier arrivals are ordered on their channel, see `rt`).
#[test]
fn barrier_phases_match_the_independent_count() {
    use super::testprog::{k, I};
    for (n, phases, want) in [(2usize, 2usize, 4usize), (2, 3, 8), (3, 2, 9), (3, 4, 81)] {
        let body: Vec<I> = (0..phases).map(|_| I::Barrier(k(0))).collect();
        let ts: Vec<(usize, i64)> = (0..n).map(|_| (0, 0)).collect();
        let p = Prog {
            sync_only: true,
            barriers: vec![(0, n as u32)],
            ..testprog::with_main(vec![body], &ts)
        };
        let name = format!("{n} threads, {phases} phases");
        let c = count_traces(&p, 1_000_000).expect("small enough to enumerate");
        assert_eq!(c.traces, want, "{name}: independent enumeration");
        let (od, seen) = explore_keys(Algo::Odpor, &p);
        assert_eq!(
            (od.executions, od.blocked, od.distinct),
            (want as u64, 0, want),
            "{name}: odpor"
        );
        for algo in [Algo::Dpor, Algo::Rt] {
            let (r, other) = explore_keys(algo, &p);
            assert!(other == seen, "{name}: {algo:?} {r:?}");
        }
    }
}

/// `pthread_once` callers, then a mutex section each (`benchmarks/src/once_ok.c`'s shape):
/// which thread runs the init is a choice. dpor and odpor always let the first run's
/// initialiser run it (a caller that waited for the init raced only with its `OnceEnd`, an
/// infeasible reversal: 2 of 4 traces with two threads, 12 of 36 with three), and rt did not
/// model once at all (2 and 6). Now a waiting `OnceBegin` races with the one that ran the
/// init (`trace::Res::Once`), and rt orders a once control's operations on a channel.
#[test]
fn once_matches_the_independent_count() {
    check_exact("once_then_lock(2)", &testprog::once_then_lock(2), 4, true);
    check_exact("once_then_lock(3)", &testprog::once_then_lock(3), 36, true);
}

/// A small random synchronisation program: 2 or 3 threads, each a few snippets (a critical
/// section on one of two mutexes, possibly nested in the other or recursive; a semaphore
/// wait or post; a `pthread_once`; a yield).
fn random_program(seed: u64) -> Prog {
    use super::testprog::{f, k, I};
    let mut rng = crate::rng::Rng::new(seed);
    let threads = 2 + rng.below(2) as usize;
    let mut bodies = Vec::new();
    for _ in 0..threads {
        let mut body: Vec<I> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            match rng.below(7) {
                0 | 1 => {
                    let m = rng.below(2) as i64;
                    body.extend([I::Lock(k(m)), I::Unlock(k(m))]);
                }
                2 => {
                    let (a, b) = if rng.below(2) == 0 { (0, 1) } else { (1, 0) };
                    body.extend([
                        I::Lock(k(a)),
                        I::Lock(k(b)),
                        I::Unlock(k(b)),
                        I::Unlock(k(a)),
                    ]);
                }
                3 => body.extend([
                    I::RecLock(k(2)),
                    I::RecLock(k(2)),
                    I::RecUnlock(k(2)),
                    I::RecUnlock(k(2)),
                ]),
                4 => body.push(I::SemWait(k(0))),
                5 => body.push(I::SemPost(k(0))),
                _ => {
                    let at = body.len();
                    body.extend([
                        I::OnceBegin {
                            o: k(0),
                            done: at + 2,
                        },
                        I::OnceEnd(k(0)),
                    ]);
                }
            }
        }
        bodies.push(body);
    }
    // A flag under mutex 3 and a condition variable: one thread waits for it (`while`
    // loop), another sets it and signals or broadcasts.
    if rng.below(2) == 0 {
        let w = rng.below(threads as u64) as usize;
        let s = (w + 1 + rng.below(threads as u64 - 1) as usize) % threads;
        let at = bodies[w].len();
        bodies[w].extend([
            I::Lock(k(3)),
            I::Load { addr: k(5), dst: 1 },
            I::Jz {
                cond: f(|r| i64::from(r[1] != 0)),
                target: at + 5,
            },
            I::CondWait { c: k(0), m: k(3) },
            I::Jmp(at + 1),
            I::Unlock(k(3)),
        ]);
        let wake = if rng.below(2) == 0 {
            I::Signal(k(0))
        } else {
            I::Broadcast(k(0))
        };
        bodies[s].extend([
            I::Lock(k(3)),
            I::Store {
                addr: k(5),
                val: k(1),
            },
            wake,
            I::Unlock(k(3)),
        ]);
    }
    // Every thread meets at one barrier.
    let barrier = rng.below(3) == 0;
    if barrier {
        for b in &mut bodies {
            let at = rng.below(b.len() as u64 + 1) as usize;
            // Not inside a snippet's jump range: only at the start or the end.
            let at = if at == 0 { 0 } else { b.len() };
            if at == 0 {
                // Shift jump targets of the body by one.
                for ins in b.iter_mut() {
                    match ins {
                        I::Jz { target, .. } | I::Jmp(target) => *target += 1,
                        I::OnceBegin { done, .. } => *done += 1,
                        _ => {}
                    }
                }
            }
            b.insert(at, I::Barrier(k(0)));
        }
    }
    let ts: Vec<(usize, i64)> = (0..threads).map(|t| (t, 0)).collect();
    Prog {
        sync_only: true,
        sems: vec![(0, rng.below(3) as u32)],
        barriers: if barrier {
            vec![(0, threads as u32)]
        } else {
            vec![]
        },
        ..testprog::with_main(bodies, &ts)
    }
}

/// odpor explores `p` (random program `seed`) in exactly its `traces` executions, each a
/// distinct trace, none blocked.
fn odpor_runs_each_trace_once(seed: u64, p: &Prog, traces: usize) {
    let (o, _) = explore_keys(Algo::Odpor, p);
    assert_eq!(
        (o.distinct, o.executions, o.blocked),
        (traces, traces as u64, 0),
        "seed {seed}: odpor runs each trace once"
    );
}

/// Source-DPOR's misses among [`random_programs_match_the_independent_count`]'s seeds: none.
/// Until 2026-11-28 there were 7 (19, 67, 169, 296, 301, 345, 374: deadlocking programs with
/// a semaphore, a barrier and a condition variable, e.g. seed 345: 11 of 12 traces, the one
/// where a thread takes both units of the semaphore before another's first wait); they were
/// reached once the events a sleep-set-blocked run leaves disabled race with its executed
/// ones, as a buggy run's do (`explore::Ctx::run`, `Guide::left_waiting`). odpor and rt
/// explore every trace.
const DPOR_MISSES: [u64; 0] = [];

/// Seeds where rt also has runs stopped by its exclusion constraints (wasted runs, no trace
/// lost; most with a barrier, whose arrivals rt orders on a channel and so repeats traces).
const RT_BLOCKED: [u64; 9] = [156, 164, 169, 283, 296, 301, 345, 353, 366];

/// Differential test: 400 random synchronisation programs ([`random_program`]); for each one
/// small enough to enumerate, odpor runs exactly the independent count of traces, each once,
/// rt explores every one of them, and dpor too except on [`DPOR_MISSES`] (where it explores
/// fewer: a known gap, asserted so that a fix or a new miss shows).
#[test]
fn random_programs_match_the_independent_count() {
    let d = differential(0..400, random_program, 350, true);
    assert_eq!(d.rt_misses, Vec::<u64>::new(), "rt explores every trace");
    assert_eq!(d.dpor_misses, DPOR_MISSES, "Source-DPOR's misses changed");
    assert_eq!(d.rt_blocked, RT_BLOCKED, "rt's blocked runs changed");
}

/// What [`differential`] found besides odpor's exact counts: the seeds where rt or dpor
/// explored fewer traces than the independent count, and where rt had blocked runs.
struct Differential {
    rt_misses: Vec<u64>,
    rt_blocked: Vec<u64>,
    dpor_misses: Vec<u64>,
}

/// For each seed whose program (`program(seed)`) is small enough to enumerate (at least
/// `min` of them must be): odpor runs exactly the independent count of traces, each once;
/// rt's (and, with `dpor`, Source-DPOR's) shortfalls are collected.
fn differential(
    seeds: std::ops::Range<u64>,
    program: impl Fn(u64) -> Prog,
    min: usize,
    dpor: bool,
) -> Differential {
    let mut compared = 0;
    let mut d = Differential {
        rt_misses: Vec::new(),
        rt_blocked: Vec::new(),
        dpor_misses: Vec::new(),
    };
    for seed in seeds {
        let p = program(seed);
        let Some(c) = count_traces(&p, 200_000) else {
            continue;
        };
        compared += 1;
        odpor_runs_each_trace_once(seed, &p, c.traces);
        let (r, _) = explore_keys(Algo::Rt, &p);
        if r.distinct != c.traces {
            d.rt_misses.push(seed);
        }
        if r.blocked > 0 {
            d.rt_blocked.push(seed);
        }
        if dpor && explore_keys(Algo::Dpor, &p).0.distinct != c.traces {
            d.dpor_misses.push(seed);
        }
    }
    assert!(
        compared >= min,
        "most programs are small enough: {compared}"
    );
    d
}

/// [`random_program`] with time: each thread may first sleep until virtual time 1 or 2 µs
/// (the same deadline for two threads lets either wake first; a later one waits until the
/// others are blocked or done), main may sleep before it creates them, and a thread may end
/// with a timed lock of mutex 0 or 1 (unlocked when taken) or a timed wait on the semaphore,
/// whose deadline is 1, 2 or 3 µs (only with `waits`; the sleeps are the same either way).
fn random_timed_program(seed: u64, waits: bool) -> Prog {
    use super::testprog::{f, k, I};
    let mut p = random_program(seed);
    let mut rng = crate::rng::Rng::new(seed ^ 0x5eed_7133);
    let main = p.main;
    for b in 0..p.bodies.len() {
        if b != main {
            let deadline = 1_000 * (1 + rng.below(3));
            let body = &mut p.bodies[b];
            let at = body.len();
            match rng.below(4) {
                _ if !waits => {}
                0 => {
                    let m = rng.below(2) as i64;
                    body.extend([
                        I::TimedLock {
                            m: k(m),
                            deadline,
                            dst: 2,
                        },
                        I::Jz {
                            cond: f(|r| i64::from(r[2] == 0)),
                            target: at + 3,
                        },
                        I::Unlock(k(m)),
                    ]);
                }
                1 => body.push(I::SemTimedWait {
                    s: k(0),
                    deadline,
                    dst: 2,
                }),
                _ => {}
            }
        }
        if rng.below(3) == 0 {
            continue;
        }
        let deadline = 1_000 * (1 + rng.below(2));
        let body = &mut p.bodies[b];
        for ins in body.iter_mut() {
            match ins {
                I::Jz { target, .. } | I::Jmp(target) => *target += 1,
                I::OnceBegin { done, .. } => *done += 1,
                _ => {}
            }
        }
        body.insert(0, I::SleepUntil(deadline));
    }
    p
}

/// rt's misses among [`random_programs_with_time_match_the_independent_count`]'s seeds, each
/// a program with a timed lock: 2 to 16 traces of 68 to 384 (not analysed). rt missed 40 of
/// these seeds before timed semaphore, rwlock and join operations were ordered like the
/// untimed ones, and 25 before a trylock or timed lock that finds the mutex held was seen to
/// fail in that holding, with variants that move it into another holding, and the clock
/// edges of a changed receive were dropped (a timed wait that took a unit instead of timing
/// out kept the edges of its timeout). Without timed waits rt explores every trace (the test
/// below).
const RT_TIMED_MISSES: [u64; 4] = [19, 76, 80, 138];

/// Source-DPOR's misses among the same seeds (as [`DPOR_MISSES`]; 15, 59 and 67 until
/// 2026-11-28).
const DPOR_TIMED_MISSES: [u64; 1] = [19];

/// [`random_programs_match_the_independent_count`] with time ([`random_timed_program`]):
/// odpor runs each trace of the independent count exactly once (a sleep or a timeout that had
/// to wait for time to pass was put before events the run had to finish first, and a timed
/// lock did not race with the lock before it: 19 of the 200 programs lost traces); rt and
/// dpor are held to their known misses.
#[test]
fn random_programs_with_time_match_the_independent_count() {
    let d = differential(0..200, |seed| random_timed_program(seed, true), 150, true);
    assert_eq!(d.rt_misses, RT_TIMED_MISSES, "rt's misses changed");
    assert_eq!(
        d.dpor_misses, DPOR_TIMED_MISSES,
        "Source-DPOR's misses changed"
    );
}

/// With sleeps alone (no timed wait: [`random_timed_program`] without them) odpor runs each
/// trace once and rt explores every one (rt missed the second waker of two same-deadline
/// sleeps; odpor put a sleep before events the run had to finish first).
#[test]
fn random_programs_with_sleeps_match_the_independent_count() {
    let d = differential(0..200, |seed| random_timed_program(seed, false), 150, false);
    assert_eq!(d.rt_misses, Vec::<u64>::new(), "rt explores every trace");
}

/// Trylocks of a recursive mutex, nested in a lock or holding one: two threads each run one
/// of the bodies below. Each explorer must see every trace of the independent count.
#[test]
fn recursive_trylocks_match_the_independent_count() {
    use super::testprog::{f, k, with_main, I};
    let try_lock = || I::TryLock {
        m: k(0),
        recursive: true,
        dst: 2,
    };
    // Skip `n` instructions after a failed trylock.
    let unless_taken = |at: usize, n: usize| I::Jz {
        cond: f(|r| i64::from(r[2] == 0)),
        target: at + n + 1,
    };
    let bodies: Vec<(&str, Vec<I>)> = vec![
        (
            "lock, nested trylock",
            vec![
                I::RecLock(k(0)),
                try_lock(),
                I::RecUnlock(k(0)),
                I::RecUnlock(k(0)),
            ],
        ),
        (
            "trylock, nested lock",
            vec![
                try_lock(),
                unless_taken(1, 3),
                I::RecLock(k(0)),
                I::RecUnlock(k(0)),
                I::RecUnlock(k(0)),
            ],
        ),
        (
            "trylock, nested trylock",
            vec![
                try_lock(),
                unless_taken(1, 3),
                try_lock(),
                I::RecUnlock(k(0)),
                I::RecUnlock(k(0)),
            ],
        ),
    ];
    for (name, body) in &bodies {
        let p = with_main(vec![body.clone()], &[(0, 0), (0, 0)]);
        let c = count_traces(&p, 200_000).expect("small");
        for algo in [Algo::Odpor, Algo::Dpor, Algo::Rt] {
            let (r, _) = explore_keys(algo, &p);
            assert_eq!(r.distinct, c.traces, "{name}: {algo:?} {r:?}");
        }
        odpor_runs_each_trace_once(0, &p, c.traces);
    }
}

/// Threads that sleep in a futex until another wakes them all (a barrier's release, as
/// libgomp's), then take one lock: the waits register when they are posted, long before
/// they return. Replays posted a wait only when its turn came, after the wake that woke it
/// in the run, so every reversal through it failed: odpor and dpor explored 1 of the 12
/// traces and called the exploration complete. With the word set before the wake (as a
/// barrier's generation is), a late waiter returns at once (no wait event).
#[test]
fn threads_woken_from_a_futex_match_the_independent_count() {
    use super::testprog::{k, with_main, I};
    for set_word in [true, false] {
        let waiter = vec![
            I::FutexWait {
                addr: k(0),
                val: k(0),
            },
            I::Lock(k(0)),
            I::Unlock(k(0)),
        ];
        let mut waker = vec![
            I::FutexWake { addr: k(0), n: 100 },
            I::Lock(k(0)),
            I::Unlock(k(0)),
        ];
        if set_word {
            waker.insert(
                0,
                I::Store {
                    addr: k(0),
                    val: k(1),
                },
            );
        }
        let p = with_main(vec![waiter, waker], &[(0, 0), (0, 0), (1, 0)]);
        let c = count_traces(&p, 200_000).expect("small");
        assert_eq!(c.traces, 12, "set_word {set_word}");
        odpor_runs_each_trace_once(0, &p, c.traces);
        let (d, _) = explore_keys(Algo::Dpor, &p);
        assert_eq!(d.distinct, c.traces, "dpor, set_word {set_word}: {d:?}");
    }
}

/// A lost wake-up through a futex: the waker wakes, then (after a critical section) sets
/// the word, so a waiter that reads the word before the store and sleeps after the wake
/// sleeps for ever. The word is plain memory between scheduling points (`sync_only`, as
/// with `--points sync`): the waiter's read and its wait's registration happen right after
/// its previous event (see `TEv::futex_arrival`, marked as the runner does for memory
/// points), which so depends on the wake. Without that, odpor and dpor ran the wake after
/// the registration only (1 run) and called the buggy program correct; with the store
/// before the wake (the fix) nothing is lost.
#[test]
fn a_wake_before_the_waiter_arrives_is_explored() {
    use super::testprog::{k, reg, with_main, Interp, I};
    use super::{explore_with, Limits, Options};
    for buggy in [true, false] {
        let waiter = vec![
            I::Load { addr: k(0), dst: 1 },
            // The word is still 0: wait; else done.
            I::Jz {
                cond: reg(1),
                target: 3,
            },
            I::Jmp(5),
            I::FutexWait {
                addr: k(0),
                val: k(0),
            },
            I::Jmp(0),
            // 5: done
        ];
        let wake = I::FutexWake { addr: k(0), n: 1 };
        let store = I::Store {
            addr: k(0),
            val: k(1),
        };
        let section = [I::Lock(k(0)), I::Unlock(k(0))];
        let waker = if buggy {
            [vec![wake], section.to_vec(), vec![store]].concat()
        } else {
            [vec![store, wake], section.to_vec()].concat()
        };
        // The waker is created first, so the first run (lowest thread first) is a good one.
        let mut p = with_main(vec![waiter, waker], &[(1, 0), (0, 0)]);
        p.sync_only = true;
        for algo in [Algo::Dfs, Algo::Odpor, Algo::Dpor] {
            let opts = Options {
                futex_arrivals: true,
                ..Default::default()
            };
            let r = explore_with(algo, &mut Interp::new(p.clone()), Limits::default(), opts);
            eprintln!(
                "buggy {buggy} {algo:?}: {} runs, {} buggy",
                r.executions, r.buggy
            );
            assert!(r.complete, "{algo:?}: {r:?}");
            assert_eq!(r.buggy > 0, buggy, "{algo:?}, buggy {buggy}: {r:?}");
            if buggy {
                let bug = format!("{:?}", r.bugs[0]);
                assert!(bug.contains("deadlock") && bug.contains("futex"), "{bug}");
            }
        }
    }
}
