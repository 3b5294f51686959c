//! Exploration counts on the classic benchmarks of the DPOR literature (Flanagan & Godefroid
//! POPL'05; Abdulla et al. POPL'14), run through the scripted-thread interpreter.

use super::testprog::{self, Interp, Prog};
use super::{explore, Algo, Execution, Executor, Limits, Report};
use crate::event::Op;
use crate::strategy::Strategy;
use std::collections::HashSet;

/// A Mazurkiewicz trace: the ordered dependent pairs, events named (thread, index).
pub(super) type TraceKey = Vec<((u32, u32), (u32, u32))>;

/// Wraps an executor and records the Mazurkiewicz trace of every complete run (the order of
/// every dependent pair of events, events named by (thread, index in thread)), to check that
/// an algorithm never explores a trace twice. Test-only: the algorithms keep no such history.
pub(super) struct Distinct {
    inner: Interp,
    pub(super) seen: HashSet<TraceKey>,
    duplicates: u64,
    /// SYN-sequences (reachability testing's equivalence: the send → receive pairing).
    syn: HashSet<Vec<String>>,
}

impl Distinct {
    pub(super) fn new(prog: Prog) -> Self {
        Distinct {
            inner: Interp::new(prog),
            seen: HashSet::new(),
            duplicates: 0,
            syn: HashSet::new(),
        }
    }
}

impl Executor for Distinct {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        let ex = self.inner.execute(strategy);
        if ex.diverged.is_none() {
            let mut count = std::collections::HashMap::new();
            let named: Vec<(u32, u32)> = ex
                .trace
                .iter()
                .map(|e| {
                    let c = count.entry(e.tid).or_insert(0u32);
                    *c += 1;
                    (e.tid, *c)
                })
                .collect();
            let mut key = Vec::new();
            for i in 0..ex.trace.len() {
                for j in i + 1..ex.trace.len() {
                    if ex.trace[i].dependent(&ex.trace[j]) {
                        key.push((named[i], named[j]));
                    }
                }
            }
            key.sort_unstable();
            let t: Vec<super::trace::TEv> = ex
                .trace
                .iter()
                .map(|e| super::trace::TEv::new(*e))
                .collect();
            let (slots, _) = super::rt::pair(&t);
            let mut sk: Vec<String> = slots
                .iter()
                .map(|s| {
                    let p = s.partner.map(|p| match p {
                        super::rt::Send::At(x) => format!("{:?}", named[x]),
                        i => format!("{i:?}"),
                    });
                    format!("{:?}{:?}<-{p:?}", named[s.ev], s.chan)
                })
                .collect();
            sk.sort();
            self.syn.insert(sk);
            if !self.seen.insert(key) {
                self.duplicates += 1;
            }
        }
        ex
    }
    fn initial_threads(&self) -> usize {
        self.inner.initial_threads()
    }
}

fn run(algo: Algo, prog: Prog) -> Report {
    let mut exec = Interp::new(prog);
    explore(algo, &mut exec, Limits::default())
}

fn counts(algo: Algo, prog: Prog) -> (u64, u64) {
    let r = run(algo, prog);
    assert!(r.complete, "{r:?}");
    assert!(r.diverged.is_none(), "{r:?}");
    assert_eq!(r.buggy, 0, "{:?}", r.bugs.first());
    eprintln!(
        "{algo:?}: {} executions, {} sleep-set blocked",
        r.executions, r.blocked
    );
    (r.executions, r.blocked)
}

fn binom(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn dfs_explores_every_interleaving_of_two_independent_threads() {
    for n in 1..=5 {
        let (ex, blocked) = counts(Algo::Dfs, testprog::independent_pair(n));
        assert_eq!((ex, blocked), (binom(2 * n as u64, n as u64), 0), "n = {n}");
    }
}

#[test]
fn dpor_reduces_two_independent_threads_to_one_run() {
    for algo in [Algo::Dpor, Algo::Odpor] {
        assert_eq!(counts(algo, testprog::independent_pair(4)), (1, 0));
    }
}

#[test]
fn readers_explore_two_to_the_n() {
    for n in [3usize, 5, 8] {
        assert_eq!(
            counts(Algo::Odpor, testprog::readers(n)),
            (1 << n, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::readers(n)).0,
            1 << n,
            "dpor n={n}"
        );
    }
}

#[test]
fn lastzero() {
    for (n, want) in [(5usize, 64u64), (8, 704)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::lastzero(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::lastzero(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
fn indexer() {
    for (n, want) in [(11usize, 1u64), (12, 8), (13, 64)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::indexer(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::indexer(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
fn filesystem() {
    for (n, want) in [(13usize, 1u64), (14, 2), (16, 8)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::filesystem(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::filesystem(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
#[ignore = "large sizes: run with --release -- --ignored"]
fn large_sizes() {
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::lastzero(10)), (3328, 0));
    eprintln!("lastzero(10) odpor {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let (ex, bl) = counts(Algo::Dpor, testprog::lastzero(10));
    eprintln!("lastzero(10) dpor {ex} + {bl} blocked {:?}", t.elapsed());
    assert_eq!(ex, 3328);
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::indexer(14)), (512, 0));
    eprintln!("indexer(14) odpor {:?}", t.elapsed());
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::filesystem(18)), (32, 0));
    eprintln!("filesystem(18) odpor {:?}", t.elapsed());
    let t = std::time::Instant::now();
    assert_eq!(
        rt_vs_odpor("mutex rounds 3x3", testprog::mutex_rounds(3, 3)),
        (1680, 1680, 1680)
    );
    assert_eq!(
        rt_vs_odpor("philosophers(6)", testprog::philosophers(6)),
        (63, 63, 63)
    );
    assert_eq!(
        rt_vs_odpor("readers-writers 3r/1w", testprog::readers_writers(3, 1)),
        (2364, 2364, 2364)
    );
    eprintln!("rt vs odpor, larger sync programs {:?}", t.elapsed());
    // Ground truth for readers-writers 1r/2w: DFS's distinct traces are exactly rt's (and
    // odpor's, `rt_matches_odpor_on_readers_writers_with_two_writers`).
    let t = std::time::Instant::now();
    let mut dfs = Distinct::new(testprog::readers_writers(1, 2));
    assert!(explore(Algo::Dfs, &mut dfs, Limits::default()).complete);
    let mut rt = Distinct::new(testprog::readers_writers(1, 2));
    assert!(explore(Algo::Rt, &mut rt, Limits::default()).complete);
    assert_eq!(dfs.seen.len(), 56);
    assert_eq!(dfs.seen, rt.seen);
    eprintln!(
        "readers-writers 1r/2w: dfs = rt, 56 traces {:?}",
        t.elapsed()
    );
}

/// Explore `p` with ODPOR and rt, recording the traces of both; checks what must hold for
/// any sync-only program: both complete, neither repeats a trace.
fn odpor_and_rt(name: &str, p: Prog) -> (Report, Distinct, Report, Distinct) {
    let mut od = Distinct::new(p.clone());
    let ro = explore(Algo::Odpor, &mut od, Limits::default());
    assert!(
        ro.complete && ro.blocked == 0 && od.duplicates == 0,
        "{name}: {ro:?}"
    );
    let mut d = Distinct::new(p);
    let limits = Limits {
        max_executions: Some(20_000),
        time_limit: None,
    };
    let r = explore(Algo::Rt, &mut d, limits);
    eprintln!(
        "{name}: odpor {} traces ({} SYN-sequences); rt {} runs ({} buggy, {} blocked), \
         {} duplicates, peak pending {}",
        ro.executions,
        od.syn.len(),
        r.executions,
        r.buggy,
        r.blocked,
        d.duplicates,
        r.rt_peak_pending
    );
    assert!(r.complete && r.diverged.is_none(), "{name}: {r:?}");
    assert_eq!(d.duplicates, 0, "{name}: rt explored a trace twice");
    (ro, od, r, d)
}

/// RT on a sync-only program: (executions, distinct SYN-sequences ODPOR's traces contain).
fn rt_vs_odpor(name: &str, p: Prog) -> (u64, u64, u64) {
    let (ro, od, r, d) = odpor_and_rt(name, p);
    assert!(
        d.syn.is_subset(&od.syn),
        "{name}: rt ran a SYN-sequence odpor never saw"
    );
    (ro.executions, od.syn.len() as u64, r.executions)
}

#[test]
fn rt_matches_odpor_on_dining_philosophers() {
    for (n, want) in [(3usize, 7u64), (4, 15), (5, 31)] {
        let (odpor, syn, rt) =
            rt_vs_odpor(&format!("philosophers({n})"), testprog::philosophers(n));
        assert_eq!((odpor, syn, rt), (want, want, want), "philosophers({n})");
    }
}

#[test]
fn rt_matches_odpor_on_mutex_and_condvar_programs() {
    let progs = [
        ("mutex rounds 3x2", testprog::mutex_rounds(3, 2), 90),
        ("readers-writers 2r/1w", testprog::readers_writers(2, 1), 62),
    ];
    for (name, p, want) in progs {
        assert_eq!(rt_vs_odpor(name, p), (want, want, want), "{name}");
    }
}

/// Readers-writers with two writers: a writer woken by an earlier signal can be overtaken by
/// one signalled later. On 1 reader/2 writers exhaustive DFS finds 56 traces (`large_sizes`).
#[test]
fn rt_matches_odpor_on_readers_writers_with_two_writers() {
    for (name, p, want) in [
        ("readers-writers 1r/2w", testprog::readers_writers(1, 2), 56),
        (
            "readers-writers 2r/2w",
            testprog::readers_writers(2, 2),
            2624,
        ),
    ] {
        assert_eq!(rt_vs_odpor(name, p), (want, want, want), "{name}");
    }
}

/// Semaphores are synchronisation objects whose operations are totally ordered (each receives
/// the previous one, see `rt`'s docs): the SYN-sequences are exactly ODPOR's traces.
#[test]
fn rt_matches_odpor_on_a_semaphore_bounded_buffer() {
    let (odpor, syn, rt) = rt_vs_odpor("bounded buffer", testprog::bounded_buffer(2, 2, 2, 1));
    assert_eq!((odpor, syn, rt), (148, 148, 148));
}

/// rt's memory is its stack of pending variants: it stays small while the number of runs
/// grows by orders of magnitude (philosophers 3 → 6: 7 → 63 runs; mutex rounds 3x2: 90 runs).
#[test]
fn rt_keeps_no_history() {
    let peak = |p: Prog| {
        let r = run(Algo::Rt, p);
        assert!(r.complete);
        (r.executions, r.rt_peak_pending)
    };
    for (n, runs) in [(3usize, 7u64), (4, 15), (5, 31), (6, 63)] {
        let (ex, pk) = peak(testprog::philosophers(n));
        assert_eq!(ex, runs);
        // At most one pending variant per racing receive of a run on the stack path.
        assert!(pk < n as u64 * 2, "philosophers({n}): peak {pk}");
    }
    let (ex, pk) = peak(testprog::mutex_rounds(3, 2));
    assert_eq!(ex, 90);
    assert!(pk <= 16, "mutex rounds 3x2: peak {pk} for {ex} runs");
}

#[test]
fn schedule_bounding_reports_the_bound_of_the_first_bug() {
    for (prog, want) in [
        (testprog::lost_update(), 1),
        (testprog::two_preemptions(), 2),
    ] {
        let r = run(Algo::Ipb { max: 3 }, prog.clone());
        eprintln!(
            "ipb: {} runs per bound {:?}, first bug bound {:?}",
            r.executions, r.executions_per_bound, r.first_bug_bound
        );
        assert_eq!(r.first_bug_bound, Some(want));
        assert!(r.bugs.iter().all(|b| b.bound >= Some(want)));
        assert!(!r.bugs[0].schedule.is_empty());
        let r = run(Algo::Idb { max: 3 }, prog.clone());
        eprintln!(
            "idb: {} runs per bound {:?}, first bug bound {:?}",
            r.executions, r.executions_per_bound, r.first_bug_bound
        );
        assert!(r.first_bug_bound.is_some_and(|b| b <= want));
        // Below the bug's bound nothing is found, and the exploration says it was cut off.
        let r = run(Algo::Ipb { max: want - 1 }, prog.clone());
        assert_eq!((r.buggy, r.complete), (0, false));
        // Exhaustive bounding finds every schedule DFS finds.
        let dfs = run(Algo::Dfs, prog.clone());
        let ipb = run(Algo::Ipb { max: 50 }, prog);
        assert!(ipb.complete);
        assert_eq!(
            ipb.executions_per_bound.iter().last(),
            Some(&dfs.executions)
        );
        assert!(dfs.buggy > 0 && ipb.buggy >= dfs.buggy);
    }
}

#[test]
fn every_algorithm_finds_the_lost_update_with_a_replayable_schedule() {
    for algo in [
        Algo::Dfs,
        Algo::Dpor,
        Algo::Odpor,
        Algo::Ipb { max: 2 },
        Algo::Idb { max: 2 },
    ] {
        let r = run(algo, testprog::lost_update());
        assert!(r.buggy > 0, "{algo:?}");
        let bug = &r.bugs[0];
        assert!(bug.description.contains("x == 2"), "{}", bug.description);
        // Replaying the schedule's thread choices reproduces the bug.
        let forced: Vec<crate::event::Event> = bug
            .schedule
            .iter()
            .map(|s| crate::event::Event::new(s.tid, crate::event::Op::Yield))
            .collect();
        let names: Vec<String> = bug.schedule.iter().map(|s| s.thread.to_string()).collect();
        assert!(names.contains(&"0.1".to_string()) && names.contains(&"0.2".to_string()));
        let mut exec = Interp::new(testprog::lost_update());
        let mut replay = Replay {
            tids: forced.iter().map(|e| e.tid).collect(),
            at: 0,
        };
        let out = exec.execute(&mut replay);
        assert_eq!(
            out.bug.as_deref(),
            Some(bug.description.as_str()),
            "{algo:?}"
        );
    }
    // DPOR explores far fewer runs than DFS for the same bug.
    let dfs = run(Algo::Dfs, testprog::lost_update());
    let odpor = run(Algo::Odpor, testprog::lost_update());
    assert!(odpor.executions < dfs.executions);
}

/// Replays a list of thread choices.
struct Replay {
    tids: Vec<u32>,
    at: usize,
}

impl Strategy for Replay {
    fn name(&self) -> String {
        "replay".into()
    }
    fn begin(&mut self, _seed: u64) {
        self.at = 0;
    }
    fn pending(&mut self, _ev: &crate::event::Event) {}
    fn choose(
        &mut self,
        enabled: &[crate::event::Event],
    ) -> Result<usize, crate::strategy::Divergence> {
        let want = self.tids.get(self.at).copied();
        self.at += 1;
        enabled
            .iter()
            .position(|e| Some(e.tid) == want)
            .ok_or(crate::strategy::Divergence {
                step: self.at as u64,
                reason: format!("t{want:?} not enabled"),
            })
    }
    fn executed(&mut self, _ev: &crate::event::Event) {}
}

/// An executor whose program changes after the first run: the second run cannot follow the
/// prefix the first one produced.
struct Flaky {
    runs: u32,
    first: Prog,
    then: Prog,
}

impl Executor for Flaky {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        self.runs += 1;
        let prog = if self.runs == 1 {
            &self.first
        } else {
            &self.then
        };
        Interp::new(prog.clone()).execute(strategy)
    }
}

#[test]
fn a_prefix_the_program_does_not_follow_is_reported_as_divergence() {
    for algo in [
        Algo::Dfs,
        Algo::Dpor,
        Algo::Odpor,
        Algo::Ipb { max: 1 },
        Algo::Rt,
    ] {
        let (first, then) = if algo == Algo::Rt {
            (
                testprog::philosophers(3),
                testprog::bounded_buffer(2, 1, 1, 1),
            )
        } else {
            (testprog::lastzero(2), testprog::readers(2))
        };
        let mut exec = Flaky {
            runs: 0,
            first,
            then,
        };
        let r = explore(algo, &mut exec, Limits::default());
        let d = r
            .diverged
            .as_ref()
            .unwrap_or_else(|| panic!("{algo:?}: {r:?}"));
        assert!(!r.complete, "{algo:?}");
        assert!(d.reason.contains("forced event"), "{algo:?}: {d}");
    }
}

#[test]
fn limits_cut_the_exploration_short() {
    let limits = Limits {
        max_executions: Some(10),
        time_limit: None,
    };
    let mut exec = Interp::new(testprog::lastzero(5));
    let r = explore(Algo::Odpor, &mut exec, limits);
    assert_eq!((r.executions, r.complete), (10, false));
    let limits = Limits {
        max_executions: None,
        time_limit: Some(std::time::Duration::ZERO),
    };
    let r = explore(Algo::Dfs, &mut exec, limits);
    assert_eq!((r.executions, r.complete), (0, false));
}

#[test]
fn dpor_and_odpor_never_explore_a_trace_twice() {
    for algo in [Algo::Dpor, Algo::Odpor] {
        let mut d = Distinct::new(testprog::lastzero(5));
        let r = explore(algo, &mut d, Limits::default());
        assert_eq!(
            (r.executions, d.seen.len() as u64, d.duplicates),
            (64, 64, 0),
            "{algo:?}"
        );
        // DFS explores the same 64 traces through many more interleavings.
        let mut all = Distinct::new(testprog::lastzero(2));
        let dfs = explore(Algo::Dfs, &mut all, Limits::default());
        let mut od = Distinct::new(testprog::lastzero(2));
        explore(algo, &mut od, Limits::default());
        assert!(dfs.executions > all.seen.len() as u64);
        assert_eq!(all.seen, od.seen, "{algo:?} covers every trace DFS finds");
    }
}

/// `bug`'s schedule, replayed by thread choices on the interpreter, hits the same bug.
pub(super) fn assert_replays(prog: Prog, bug: &super::Bug) {
    let mut exec = Interp::new(prog);
    let mut replay = Replay {
        tids: bug.schedule.iter().map(|s| s.tid).collect(),
        at: 0,
    };
    let out = exec.execute(&mut replay);
    assert_eq!(out.bug.as_deref(), Some(bug.description.as_str()));
}

/// The real initial value of a semaphore (passed on by the coordinator) decides which
/// reversals are feasible: initialised to 2, two workers enter at once, which a value
/// inferred from one run (1: every wait preceded by a post) never allows.
#[test]
fn recorded_semaphore_values_let_dpor_find_the_overfull_semaphore() {
    for algo in [Algo::Odpor, Algo::Dpor] {
        let r = run(algo, testprog::sem_as_mutex(2));
        assert!(r.complete && r.diverged.is_none(), "{algo:?}: {r:?}");
        assert!(r.buggy > 0, "{algo:?}: {} executions", r.executions);
        assert_eq!(r.bugs[0].description, "assertion failed: x == 3");
        assert_replays(testprog::sem_as_mutex(2), &r.bugs[0]);
        // Used as a mutex (value 1), there is no bug to find.
        counts(algo, testprog::sem_as_mutex(1));
    }
}

/// Read sections of an rwlock commute: with one writer, a trace is fixed by which readers
/// precede the writer (2^n); treating read locks as conflicting would also order the readers.
#[test]
fn rwlock_read_sections_commute() {
    for n in 1..=3usize {
        let want = 1u64 << n;
        assert_eq!(
            counts(Algo::Odpor, testprog::rw_sections(n)),
            (want, 0),
            "n = {n}"
        );
        assert_eq!(counts(Algo::Dpor, testprog::rw_sections(n)).0, want);
        let mut d = Distinct::new(testprog::rw_sections(n));
        explore(Algo::Odpor, &mut d, Limits::default());
        assert_eq!(d.duplicates, 0);
    }
}

#[test]
fn odpor_and_dpor_find_the_rwlock_upgrade_lost_update() {
    for algo in [Algo::Odpor, Algo::Dpor] {
        let r = run(algo, testprog::rwlock_upgrade());
        assert!(r.complete, "{algo:?}");
        assert!(r.buggy > 0, "{algo:?}: {} executions", r.executions);
        assert_eq!(r.bugs[0].description, "assertion failed: x == 2");
        assert_replays(testprog::rwlock_upgrade(), &r.bugs[0]);
    }
}

/// The default continuation is fair to spin loops: the thread that yields waits for the
/// thread it yielded to, so no run is a step-limited livelock (lowest-thread-first would
/// run the spinning thread 1 until the step limit in the very first run).
#[test]
fn a_spin_wait_is_scheduled_fairly() {
    for algo in [Algo::Odpor, Algo::Dpor] {
        let mut exec = Interp::new(testprog::spin_wait());
        let limits = Limits {
            max_executions: Some(20),
            ..Default::default()
        };
        let r = explore(algo, &mut exec, limits);
        assert!(r.diverged.is_none(), "{algo:?}: {r:?}");
        assert_eq!(r.buggy, 0, "{algo:?}: {:?}", r.bugs.first());
        assert!(r.executions > 1, "{algo:?}");
    }
    // DFS and the bounded searches do not branch to a thread held back by the fairness
    // rule, so their search of the spin loop is finite; a switch after a yield is free.
    for algo in [Algo::Dfs, Algo::Ipb { max: 1 }, Algo::Idb { max: 1 }] {
        let mut exec = Interp::new(testprog::spin_wait());
        let limits = Limits {
            max_executions: Some(10_000),
            ..Default::default()
        };
        let r = explore(algo, &mut exec, limits);
        eprintln!(
            "{algo:?}: {} executions {:?}",
            r.executions, r.executions_per_bound
        );
        assert_eq!(r.buggy, 0, "{algo:?}: {:?}", r.bugs.first());
        assert!(r.executions < 10_000, "{algo:?}: the search is finite");
        if algo == Algo::Dfs {
            assert!(r.complete);
        } else {
            assert_eq!(r.bound_completed, Some(1), "{algo:?}");
        }
    }
}

/// A yield-free lock-polling loop (probe 16: `lock; e = q == 0; unlock` until a worker has
/// run): the fairness rule treats the poll as a yield once it repeats
/// ([`super::guide`]'s `LOCK_POLLS`), so the first run lets the other thread in. Before, the
/// poller kept the turn to the step limit and odpor and dpor ended after that one cut run,
/// calling the buggy version correct. The polls before the publication are a race each, so
/// the trace space is unbounded: a budget ends it.
#[test]
fn a_lock_polling_loop_is_scheduled_fairly() {
    for algo in [Algo::Odpor, Algo::Dpor] {
        let limits = Limits {
            max_executions: Some(200),
            ..Default::default()
        };
        let mut ok = Interp::new(testprog::lock_poll(false));
        let r = explore(algo, &mut ok, limits);
        assert!(r.diverged.is_none(), "{algo:?}: {r:?}");
        // The interpreter calls a step-limited run a bug ("step limit (livelock)").
        let first = r.bugs.first().map(|b| &b.description);
        assert_eq!(r.buggy, 0, "{algo:?}: {first:?}");
        assert!(r.executions > 10, "{algo:?}: {} runs", r.executions);
        let mut bad = Interp::new(testprog::lock_poll(true));
        let r = explore(algo, &mut bad, limits);
        assert!(r.buggy > 0, "{algo:?}: {} runs, none buggy", r.executions);
        for b in &r.bugs {
            assert!(
                b.description.contains("data read"),
                "{algo:?}: {}",
                b.description
            );
        }
    }
}

/// A run that ends with main's exit while another thread's event still waits: that event
/// races with what main did before the exit too, not only with the exit (probe 18: with
/// `--timeouts any`, a timed wait that timed out and then `exit` hid the wake-up path).
#[test]
fn events_left_waiting_at_an_exit_race_with_what_came_before_it() {
    for algo in [Algo::Odpor, Algo::Dpor, Algo::Dfs] {
        let mut exec = Interp::new(testprog::exit_holding_lock());
        let r = explore(algo, &mut exec, Limits::default());
        assert!(r.complete, "{algo:?}");
        assert!(r.buggy > 0, "{algo:?}: {} runs, none buggy", r.executions);
        for b in &r.bugs {
            let d = &b.description;
            assert!(d.contains("the thread ran first"), "{algo:?}: {d}");
        }
    }
}

/// A futex condvar broadcast by `FUTEX_CMP_REQUEUE` (see
/// [`testprog::futex_requeue_broadcast`]): correct, every exploration algorithm completes
/// without a bug; with the relock bug, each finds the lost wake-up.
#[test]
fn futex_requeue_broadcast_is_explored_by_every_algorithm() {
    let algos = [
        Algo::Dfs,
        Algo::Dpor,
        Algo::Odpor,
        Algo::Ipb { max: 2 },
        Algo::Idb { max: 2 },
    ];
    for algo in algos {
        let limits = Limits {
            max_executions: Some(200_000),
            time_limit: None,
        };
        let mut ok = Interp::new(testprog::futex_requeue_broadcast(2, false));
        let r = explore(algo, &mut ok, limits);
        eprintln!("{algo:?} correct: {} runs, {} buggy", r.executions, r.buggy);
        assert!(r.diverged.is_none(), "{algo:?}: {r:?}");
        assert_eq!(r.buggy, 0, "{algo:?}: {:?}", r.bugs.first());
        assert!(r.executions > 1, "{algo:?}");
        let mut bad = Interp::new(testprog::futex_requeue_broadcast(2, true));
        let r = explore(algo, &mut bad, limits);
        eprintln!("{algo:?} buggy: {} runs, {} buggy", r.executions, r.buggy);
        let bug = r.bugs.first().map(|b| format!("{b:?}")).unwrap_or_default();
        assert!(r.buggy > 0 && bug.contains("deadlock"), "{algo:?}: {bug}");
        assert!(bug.contains("futex"), "{bug}");
    }
}

/// Every sampling strategy, 200 seeded runs: never a bug on the correct broadcast, and the
/// lost wake-up of the buggy one is hit.
#[test]
fn futex_requeue_broadcast_under_every_strategy() {
    use crate::strategy::{by_name, Options, NAMES};
    for name in NAMES {
        let mut hits = [0u32; 2];
        for (i, buggy) in [false, true].into_iter().enumerate() {
            let mut s = by_name(name, &Options::default()).expect("listed");
            let mut exec = Interp::new(testprog::futex_requeue_broadcast(3, buggy));
            for seed in 0..200 {
                s.begin(seed);
                let ex = exec.execute(s.as_mut());
                assert!(ex.diverged.is_none());
                if let Some(b) = &ex.bug {
                    assert!(buggy && b.contains("deadlock"), "{name} seed {seed}: {b}");
                    hits[i] += 1;
                }
            }
        }
        eprintln!("{name}: buggy broadcast hit {} of 200", hits[1]);
        assert!(hits[1] > 0, "{name} never hit the lost wake-up");
    }
}

/// The traces DFS sees (every interleaving, keyed by its dependent pairs): the ground truth
/// the reductions must reach.
fn dfs_traces(p: Prog) -> usize {
    let mut dfs = Distinct::new(p);
    assert!(explore(Algo::Dfs, &mut dfs, Limits::default()).complete);
    dfs.seen.len()
}

/// Waits on one semaphore conflict: one can disable the other (a semaphore initialised to 1
/// is a lock). Every explorer must see each order of entry, as with a mutex.
#[test]
fn a_semaphore_used_as_a_lock_is_explored_like_a_mutex() {
    for (n, want) in [(2usize, 2u64), (3, 6)] {
        assert_eq!(dfs_traces(testprog::sem_lock(n)), want as usize, "dfs {n}");
        for algo in [Algo::Odpor, Algo::Dpor, Algo::Rt] {
            let (ex, _) = counts(algo, testprog::sem_lock(n));
            assert_eq!(ex, want, "{algo:?} with {n} threads");
        }
    }
}

/// Barrier arrivals commute until the last one (the one that completes the barrier and
/// returns `PTHREAD_BARRIER_SERIAL_THREAD`), and leaves commute. Every (completing thread,
/// lock order) pair is explored; leaves no longer multiply the runs (before: 216 runs for
/// three threads, n!·n!·n!). Whether an arrival completes depends on its position, which
/// sleep sets and wakeup sequences decide at their place in the run, so the count is exact
/// (`sound::barriers_match_the_independent_count`); the bound below is n! arrival orders ×
/// n! lock orders.
#[test]
fn barrier_arrivals_commute_until_the_last_one() {
    struct Outcomes(Interp, HashSet<(u32, Vec<u32>)>);
    impl Executor for Outcomes {
        fn execute(&mut self, s: &mut dyn Strategy) -> Execution {
            let ex = self.0.execute(s);
            let last = ex
                .trace
                .iter()
                .rev()
                .find(|e| matches!(e.op, Op::BarrierWait { .. }))
                .map_or(0, |e| e.tid);
            let locks = ex
                .trace
                .iter()
                .filter(|e| matches!(e.op, Op::Lock { .. }))
                .map(|e| e.tid)
                .collect();
            // A sleep-set-blocked run (Source-DPOR) is cut short: no outcome.
            if ex.diverged.is_none() {
                self.1.insert((last, locks));
            }
            ex
        }
        fn initial_threads(&self) -> usize {
            self.0.initial_threads()
        }
    }
    for n in [2usize, 3] {
        let fact: u64 = (1..=n as u64).product();
        for algo in [Algo::Odpor, Algo::Dpor] {
            let (plain, _) = counts(algo, testprog::start_barrier(n, false));
            assert_eq!(plain, fact, "{algo:?} without barrier, {n} threads");
            let mut o = Outcomes(
                Interp::new(testprog::start_barrier(n, true)),
                HashSet::new(),
            );
            let r = explore(algo, &mut o, Limits::default());
            assert!(r.complete && r.diverged.is_none(), "{r:?}");
            assert_eq!(o.1.len() as u64, n as u64 * fact, "{algo:?}: {n} threads");
            assert!(
                r.executions <= fact * fact,
                "{algo:?}: {} runs",
                r.executions
            );
            if n == 2 {
                assert_eq!(r.executions, 4, "{algo:?}");
            }
        }
    }
}

/// A semaphore counting one free slot is a lock handed between threads: a producer's wait
/// for the slot, enabled only by a consumer's post, races with the other producer's wait
/// (it could have taken the slot first). ODPOR explored 1 trace of two producers and two
/// consumers with one slot; rt's SYN-sequences are 4 (3+3: 36).
#[test]
fn a_one_slot_semaphore_buffer_is_explored_like_a_lock() {
    for (n, want) in [(2usize, 4u64), (3, 36)] {
        let (odpor, syn, rt) = rt_vs_odpor("one-slot buffer", testprog::bounded_buffer(n, n, 1, 1));
        assert_eq!((odpor, syn, rt), (want, want, want), "{n}+{n}");
    }
}

#[test]
fn a_sleep_before_the_threads_exist_leaves_every_race_to_explore() {
    // main sleeps (usleep(1): a virtual deadline), then creates a worker; both take a lock
    // and main asserts it was first. The race of the two locks was dropped as infeasible:
    // replaying the run's prefix on a fresh state machine, whose clock starts at 0, the
    // sleep was not enabled (rt's check of a race variant likewise). Every explorer must find
    // the bug, and a yield in place of the sleep must not change the counts.
    use testprog::{f, k, reg, with_main, I};
    let prog = |first: I| {
        let worker = vec![
            I::Lock(k(0)),
            I::Store {
                addr: k(0),
                val: k(1),
            },
            I::Unlock(k(0)),
        ];
        let main = vec![
            first,
            I::Spawn {
                body: 0,
                arg: 0,
                dst: 7,
            },
            I::Lock(k(0)),
            I::Load { addr: k(0), dst: 1 },
            I::Assert {
                cond: f(|r| i64::from(r[1] == 0)),
                msg: "main locks first",
            },
            I::Unlock(k(0)),
            I::Join(reg(7)),
        ];
        Prog {
            main: 1,
            bodies: vec![worker, main],
            ..with_main(Vec::new(), &[])
        }
    };
    let of = |r: Report| {
        assert!(r.complete && r.diverged.is_none(), "{r:?}");
        (r.executions, r.buggy)
    };
    for algo in [Algo::Odpor, Algo::Dpor, Algo::Rt, Algo::Dfs] {
        let slept = of(run(algo, prog(I::SleepUntil(1_000))));
        let yielded = of(run(algo, prog(I::Yield)));
        assert_eq!(slept, yielded, "{algo:?}");
        assert!(
            slept.1 > 0,
            "{algo:?} misses the bug after a sleep: {slept:?}"
        );
    }
}

#[test]
fn workers_that_sleep_to_the_same_deadline_may_wake_in_either_order() {
    // Two workers sleep until the same virtual deadline, then each takes the lock and the
    // second asserts that worker 1 was first. Time passes once every thread is posted and
    // none can go on, so both wake at that deadline and either may lock first: rt's check
    // of the race variant let time pass only when every thread had posted in the variant's
    // own sequence, where worker 2 had not yet, and so it dropped the variant (1 execution,
    // no bug). With worker 2's deadline later, worker 1 always locks first: no bug, and no
    // explorer may run an order the clock forbids.
    use testprog::{f, k, with_main, I};
    let prog = |first: I, second: I| {
        let worker = |sleep: I| {
            vec![
                sleep,
                I::Lock(k(0)),
                I::Load { addr: k(0), dst: 1 },
                I::Assert {
                    cond: f(|r| i64::from(r[1] != 0 || r[0] == 1)),
                    msg: "worker 1 locks first",
                },
                I::Store {
                    addr: k(0),
                    val: k(1),
                },
                I::Unlock(k(0)),
            ]
        };
        with_main(vec![worker(first), worker(second)], &[(0, 1), (1, 2)])
    };
    let of = |algo: Algo, r: Report| {
        assert!(r.complete && r.diverged.is_none(), "{algo:?}: {r:?}");
        (r.executions, r.buggy)
    };
    for algo in [Algo::Odpor, Algo::Dpor, Algo::Rt, Algo::Dfs] {
        let slept = of(
            algo,
            run(algo, prog(I::SleepUntil(1_000), I::SleepUntil(1_000))),
        );
        let yielded = of(algo, run(algo, prog(I::Yield, I::Yield)));
        assert!(slept.1 > 0, "{algo:?} misses the bug: {slept:?}");
        if algo != Algo::Dfs {
            assert_eq!(slept, yielded, "{algo:?}");
        }
        let apart = of(
            algo,
            run(algo, prog(I::SleepUntil(1_000), I::SleepUntil(2_000))),
        );
        assert_eq!(apart.1, 0, "{algo:?}: worker 2 wakes later: {apart:?}");
    }
}

#[test]
fn a_timed_lock_may_fail_in_each_holding_of_the_mutex() {
    // Worker 1 takes the mutex twice; worker 2 makes one timed lock whose deadline has
    // passed (main slept first), so it fails at once while worker 1 holds the mutex: before,
    // between or after worker 1's sections it gets the mutex, in either section it times
    // out (the assertion). Five traces, two of them failures. rt paired a failed attempt
    // with the last release as if it had taken it, and had no variant in which an attempt
    // that got the mutex fails instead: it explored 3 traces and missed both failures.
    use testprog::{f, k, with_main, I};
    let section = [I::Lock(k(0)), I::Unlock(k(0))];
    let worker1: Vec<I> = section.iter().chain(&section).cloned().collect();
    let worker2 = vec![
        I::TimedLock {
            m: k(0),
            deadline: 1_000,
            dst: 2,
        },
        I::Assert {
            cond: f(|r| i64::from(r[2] == 0)),
            msg: "the timed lock got the mutex",
        },
        I::Unlock(k(0)),
    ];
    let mut prog = with_main(vec![worker1, worker2], &[(0, 0), (1, 0)]);
    prog.bodies[prog.main].insert(0, I::SleepUntil(1_000));
    for algo in [Algo::Odpor, Algo::Rt] {
        let r = run(algo, prog.clone());
        assert!(r.complete && r.diverged.is_none(), "{algo:?}: {r:?}");
        assert_eq!((r.executions, r.buggy), (5, 2), "{algo:?}");
    }
    let dfs = run(Algo::Dfs, prog);
    assert!(dfs.complete && dfs.buggy > 0, "{dfs:?}");
}
