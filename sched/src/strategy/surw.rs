//! `urw` and `surw`: (selectively) uniform random walk, after Zhao et al., "Selectively
//! Uniform Concurrency Testing" (ASPLOS'25).
//!
//! The rule: at each step, pick an enabled thread with probability proportional to the number
//! of events it still has to execute. If the counts are exact and no thread blocks, every
//! interleaving of the events is equally likely (the weight of a thread is the share of the
//! remaining interleavings that continue with it: a multinomial coefficient ratio), whereas a
//! uniform choice per step (`rw`) favours interleavings that switch early.
//! * `urw` counts every event.
//! * `surw` counts only *interesting* events, and is uniform over the interleavings of
//!   those: plain memory accesses to an address that raced in the profile (two threads, at
//!   least one write), atomic accesses, and synchronisation events (every operation with a
//!   sync object, thread exit, yields and sleeps). A thread whose next event is not
//!   interesting (a private access, a thread start, a create) does not take part in a weighted
//!   choice: such events are run first, one at a time, chosen uniformly among them, so every
//!   weighted decision is between threads standing at interesting events — the paper's
//!   scheme of spending its sampling only on the interesting events while every interleaving
//!   stays reachable. (After [`EAGER_CAP`] such steps in a row the choice is weighted over
//!   all enabled threads, so a thread looping on private accesses cannot starve the others.)
//!
//! Remaining counts are estimates: a [`Profile`] built from a fixed number
//! ([`PROFILE_RUNS`]) of profiling runs of the same program (random walk, seeds derived from
//! the base seed, see [`build_profile`]) gives the mean events and interesting events per
//! thread, keyed by the thread's creation path ([`ThreadName`], `0.1`, `0.2`, ...), and the
//! racing addresses. Every try gets the same immutable profile through
//! [`super::Options::profile`], so a try's schedule depends only on (seed, try index,
//! profile), whatever `--jobs` is. A thread that ran more events than estimated keeps weight
//! 1; a thread the profile does not know gets the profile's mean per-thread count; with no
//! profile at all every weight is 1 (a random walk) and every memory access is interesting.
//! Threads of forked child processes are named as if main created them (estimates only).

use super::{Divergence, Strategy};
use crate::event::{Event, Op, ThreadName, Tid};
use crate::rng::{try_seed, Rng};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

/// Profiling runs behind a [`Profile`].
pub const PROFILE_RUNS: u64 = 4;

/// Consecutive non-interesting steps after which `surw` makes a weighted choice anyway.
pub const EAGER_CAP: u32 = 10_000;

/// Whether `name` (a strategy name) needs a [`Profile`].
pub fn needs_profile(name: &str) -> bool {
    matches!(name, "urw" | "surw" | "auto") || name.starts_with("tapct")
}

/// Estimated events of one thread per run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub total: u64,
    pub interesting: u64,
}

/// What the profiling runs saw: per-thread counts (means over the runs the thread appeared
/// in, rounded up) and the racing addresses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub runs: u64,
    /// Start addresses of plain accesses made by two threads, one a write, in some run.
    pub racy: BTreeSet<u64>,
    pub threads: BTreeMap<ThreadName, Counts>,
    /// The most interesting events of one run (trace-aware PCT's k'); without memory events,
    /// the most events of one run.
    pub max_interesting: u64,
    /// Some run made a memory access at a scheduling point (plain or atomic). Without any
    /// (`--points sync`, or an uninstrumented program) the code between two points touches
    /// memory unseen, right after a thread's start or a create too, so every event can be
    /// where a bug's preemption belongs (see [`super::tapct`]).
    pub memory: bool,
}

impl Profile {
    /// Combine the logs of the profiling runs.
    pub fn from_logs(logs: &[RunLog]) -> Profile {
        let racy: BTreeSet<u64> = logs.iter().flat_map(|l| l.racy()).collect();
        let mut sums: BTreeMap<ThreadName, (u64, u64, u64)> = BTreeMap::new();
        let mut max_interesting = 0;
        let memory = logs.iter().any(|l| l.memory);
        for log in logs {
            let mut run_interesting = 0;
            let mut run_total = 0;
            for (name, t) in &log.threads {
                let int = t.other_interesting
                    + t.plain
                        .iter()
                        .filter(|(a, _)| racy.contains(a))
                        .map(|(_, c)| c)
                        .sum::<u64>();
                run_interesting += int;
                run_total += t.total;
                let s = sums.entry(name.clone()).or_default();
                s.0 += t.total;
                s.1 += int;
                s.2 += 1;
            }
            max_interesting = max_interesting.max(if memory { run_interesting } else { run_total });
        }
        let threads = sums
            .into_iter()
            .map(|(n, (tot, int, runs))| {
                let c = Counts {
                    total: tot.div_ceil(runs),
                    interesting: int.div_ceil(runs),
                };
                (n, c)
            })
            .collect();
        Profile {
            runs: logs.len() as u64,
            racy,
            threads,
            max_interesting,
            memory,
        }
    }

    /// Mean per-thread counts (rounded up), the estimate for a thread the profile lacks.
    fn mean(&self) -> Counts {
        let n = self.threads.len().max(1) as u64;
        let (t, i) = self
            .threads
            .values()
            .fold((0, 0), |(t, i), c| (t + c.total, i + c.interesting));
        Counts {
            total: t.div_ceil(n),
            interesting: i.div_ceil(n),
        }
    }
}

/// One thread's events in one run.
#[derive(Clone, Debug, Default)]
pub struct ThreadLog {
    pub total: u64,
    /// Interesting whatever the racing set: atomics and synchronisation.
    pub other_interesting: u64,
    /// Plain accesses per start address.
    pub plain: BTreeMap<u64, u64>,
}

/// What one run did, for a [`Profile`].
#[derive(Clone, Debug, Default)]
pub struct RunLog {
    pub threads: BTreeMap<ThreadName, ThreadLog>,
    /// Per plain-accessed address: (first thread, another thread accessed it, written).
    access: HashMap<u64, (Tid, bool, bool)>,
    /// A memory access (plain or atomic) was a scheduling point.
    pub memory: bool,
}

impl RunLog {
    fn racy(&self) -> impl Iterator<Item = u64> + '_ {
        self.access
            .iter()
            .filter(|(_, &(_, multi, written))| multi && written)
            .map(|(&a, _)| a)
    }
}

/// Run [`PROFILE_RUNS`] profiling runs (`run` executes one run of the program under the
/// given strategy and seed) and combine them. Seeds are derived from `seed` only.
pub fn build_profile<E>(
    seed: u64,
    mut run: impl FnMut(&mut dyn Strategy, u64) -> Result<(), E>,
) -> Result<Profile, E> {
    let mut logs = Vec::new();
    for i in 0..PROFILE_RUNS {
        let mut s = Surw::new("urw", false, None);
        run(&mut s, try_seed(seed ^ 0x5052_4f46_494c_4500, i))?;
        logs.push(std::mem::take(&mut s.log));
    }
    Ok(Profile::from_logs(&logs))
}

/// Whether `op` is interesting given the racing addresses (`None`: every access is).
pub fn interesting(op: &Op, racy: Option<&BTreeSet<u64>>) -> bool {
    match op {
        Op::Read { addr, .. } | Op::Write { addr, .. } => racy.is_none_or(|r| r.contains(addr)),
        Op::Start | Op::Create => false,
        _ => true,
    }
}

/// Names threads by creation path, as [`crate::state::State`] does: tids are given in
/// creation order, so the n-th new tid is the n-th executed create's child.
#[derive(Clone, Debug, Default)]
pub struct Names {
    names: Vec<ThreadName>,
    children: Vec<u32>,
    created: VecDeque<ThreadName>,
}

impl Names {
    pub fn reset(&mut self) {
        self.names = vec![ThreadName::main()];
        self.children = vec![0];
        self.created.clear();
    }

    /// The name of `t`, naming every tid up to it.
    pub fn of(&mut self, t: Tid) -> &ThreadName {
        if self.names.is_empty() {
            self.reset();
        }
        while self.names.len() <= t as usize {
            let name = self.created.pop_front().unwrap_or_else(|| {
                // Threads that exist from the start (the simulator's paper mode).
                self.children[0] += 1;
                ThreadName::main().child(self.children[0])
            });
            self.names.push(name);
            self.children.push(0);
        }
        &self.names[t as usize]
    }

    /// `t` executed a create.
    pub fn created_by(&mut self, t: Tid) {
        let parent = self.of(t).clone();
        self.children[t as usize] += 1;
        self.created
            .push_back(parent.child(self.children[t as usize]));
    }
}

pub struct Surw {
    name: String,
    selective: bool,
    profile: Option<Arc<Profile>>,
    rng: Rng,
    names: Names,
    /// Per tid: (events, interesting events) executed in this run.
    done: Vec<(u64, u64)>,
    eager_run: u32,
    log: RunLog,
}

impl Surw {
    pub fn new(name: &str, selective: bool, profile: Option<Arc<Profile>>) -> Self {
        Surw {
            name: name.into(),
            selective,
            profile,
            rng: Rng::new(0),
            names: Names::default(),
            done: Vec::new(),
            eager_run: 0,
            log: RunLog::default(),
        }
    }

    fn is_interesting(&self, op: &Op) -> bool {
        !self.selective || interesting(op, self.profile.as_ref().map(|p| &p.racy))
    }

    /// Estimated events `t` still has to run (at least 1).
    fn weight(&mut self, t: Tid) -> u64 {
        let Some(p) = self.profile.clone() else {
            return 1;
        };
        let name = self.names.of(t);
        let est = p.threads.get(name).copied().unwrap_or_else(|| p.mean());
        let (all, int) = self.done.get(t as usize).copied().unwrap_or_default();
        let left = if self.selective {
            est.interesting.saturating_sub(int)
        } else {
            est.total.saturating_sub(all)
        };
        left.max(1)
    }

    fn weighted(&mut self, enabled: &[Event]) -> usize {
        let w: Vec<u64> = enabled.iter().map(|e| self.weight(e.tid)).collect();
        let mut x = self.rng.below(w.iter().sum());
        for (i, &wi) in w.iter().enumerate() {
            if x < wi {
                return i;
            }
            x -= wi;
        }
        enabled.len() - 1
    }
}

impl Strategy for Surw {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn begin(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
        self.names.reset();
        self.done.clear();
        self.eager_run = 0;
        self.log = RunLog::default();
    }

    fn pending(&mut self, ev: &Event) {
        self.names.of(ev.tid);
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        if self.selective && self.eager_run < EAGER_CAP {
            let plain: Vec<usize> = (0..enabled.len())
                .filter(|&i| !self.is_interesting(&enabled[i].op))
                .collect();
            if !plain.is_empty() {
                self.eager_run += 1;
                return Ok(plain[self.rng.index(plain.len())]);
            }
        }
        self.eager_run = 0;
        Ok(self.weighted(enabled))
    }

    fn executed(&mut self, ev: &Event) {
        let t = ev.tid;
        if self.done.len() <= t as usize {
            self.done.resize(t as usize + 1, (0, 0));
        }
        let int = self.is_interesting(&ev.op);
        self.done[t as usize].0 += 1;
        self.done[t as usize].1 += u64::from(int);
        if ev.op == Op::Create {
            self.names.created_by(t);
        }
        let name = self.names.of(t).clone();
        let tl = self.log.threads.entry(name).or_default();
        tl.total += 1;
        self.log.memory |= ev.op.is_memory();
        match ev.op {
            Op::Read { addr, .. } | Op::Write { addr, .. } => {
                *tl.plain.entry(addr).or_default() += 1;
                let write = matches!(ev.op, Op::Write { .. });
                let e = self.log.access.entry(addr).or_insert((t, false, false));
                e.1 |= e.0 != t;
                e.2 |= write;
            }
            _ => tl.other_interesting += u64::from(interesting(&ev.op, None)),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::strategy::testkit::{self, write, Instr::*, Prog, X};

    /// The profile of `prog` as the harness builds it.
    pub fn profile_of(prog: &Prog) -> Arc<Profile> {
        let p = build_profile::<()>(5, |s, seed| {
            testkit::run(s, prog, seed, 10_000);
            Ok(())
        })
        .unwrap();
        Arc::new(p)
    }

    /// Counts of each thread-id sequence of the events `keep` selects, over `n` runs.
    fn interleavings(
        s: &mut dyn Strategy,
        prog: &Prog,
        n: u64,
        keep: impl Fn(&Event) -> bool,
    ) -> BTreeMap<Vec<u32>, u64> {
        let mut m = BTreeMap::new();
        for i in 0..n {
            let r = testkit::run(s, prog, try_seed(31, i), 10_000);
            let seq = r.trace.iter().filter(|e| keep(e)).map(|e| e.tid).collect();
            *m.entry(seq).or_insert(0u64) += 1;
        }
        m
    }

    /// Every count within 6 standard errors of `p` (a correct sampler fails one cell with
    /// probability 2e-9, so well under 1e-6 for all cells together).
    fn assert_uniform(m: &BTreeMap<Vec<u32>, u64>, cells: usize, n: u64) {
        assert_eq!(m.len(), cells, "{m:?}");
        let p = 1.0 / cells as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        for (seq, &c) in m {
            let got = c as f64 / n as f64;
            assert!((got - p).abs() <= 6.0 * se, "{seq:?}: {got} vs {p}");
        }
    }

    fn private(t: u64, i: u64) -> crate::event::Op {
        write(0x1000 * (t + 1) + 8 * i)
    }

    #[test]
    fn urw_is_uniform_over_all_interleavings() {
        // A: 3 events + exit, B: 2 events + exit: C(7, 3) = 35 interleavings, each 1/35.
        let prog = Prog(vec![
            (0..3).map(|i| Do(private(0, i))).collect(),
            (0..2).map(|i| Do(private(1, i))).collect(),
        ]);
        let prof = profile_of(&prog);
        assert_eq!(prof.threads[&ThreadName::main()].total, 4);
        assert_eq!(prof.threads[&ThreadName::main().child(1)].total, 3);
        let mut s = Surw::new("urw", false, Some(prof));
        let n = 70_000;
        assert_uniform(&interleavings(&mut s, &prog, n, |_| true), 35, n);
    }

    #[test]
    fn surw_is_uniform_over_interesting_interleavings() {
        // A: p p X p X, B: X q X; interesting: the X writes and the exits, 3 per thread:
        // C(6, 3) = 20 interleavings of them, each 1/20.
        let prog = Prog(vec![
            vec![
                Do(private(0, 0)),
                Do(private(0, 1)),
                Do(write(X)),
                Do(private(0, 2)),
                Do(write(X)),
            ],
            vec![Do(write(X)), Do(private(1, 0)), Do(write(X))],
        ]);
        let prof = profile_of(&prog);
        assert_eq!(prof.racy, BTreeSet::from([X]));
        assert_eq!(prof.max_interesting, 6);
        let mut s = Surw::new("surw", true, Some(prof));
        let n = 40_000;
        let m = interleavings(&mut s, &prog, n, |e| interesting(&e.op, Some(&[X].into())));
        assert_uniform(&m, 20, n);
    }

    #[test]
    fn without_a_profile_weights_are_equal() {
        let prog = Prog(vec![vec![Do(write(X))], vec![Do(write(X))]]);
        let mut s = Surw::new("urw", false, None);
        let r = testkit::run(&mut s, &prog, 1, 100);
        assert_eq!(r.trace.len(), 4);
        s.begin(1);
        let evs = [Event::new(0, write(X)), Event::new(1, write(X))];
        assert_eq!(s.weight(0), 1);
        let _ = s.choose(&evs).unwrap();
    }

    #[test]
    fn estimates_are_means_and_weights_fall_back() {
        // Run 1: main 3 events, 0.1 5; run 2: main 4 events, no child.
        let log = |counts: &[(ThreadName, u64)]| RunLog {
            threads: counts
                .iter()
                .map(|(n, c)| {
                    let t = ThreadLog {
                        total: *c,
                        other_interesting: 1,
                        plain: BTreeMap::from([(X, c - 1)]),
                    };
                    (n.clone(), t)
                })
                .collect(),
            access: HashMap::from([(X, (0, true, true))]),
            memory: true,
        };
        let (main, c1) = (ThreadName::main(), ThreadName::main().child(1));
        let p = Profile::from_logs(&[
            log(&[(main.clone(), 3), (c1.clone(), 5)]),
            log(&[(main.clone(), 4)]),
        ]);
        assert_eq!(p.racy, BTreeSet::from([X]));
        assert_eq!(
            p.threads[&main],
            Counts {
                total: 4,
                interesting: 4
            },
            "ceil of 3.5"
        );
        assert_eq!(
            p.threads[&c1],
            Counts {
                total: 5,
                interesting: 5
            }
        );
        assert_eq!(p.max_interesting, 8);
        let mut s = Surw::new("urw", false, Some(Arc::new(p)));
        s.begin(0);
        assert_eq!(s.weight(1), 5);
        // Thread 2 (0.2) is unknown: the mean of 4 and 5, rounded up.
        assert_eq!(s.weight(2), 5);
        for _ in 0..6 {
            s.executed(&Event::new(1, write(X)));
        }
        assert_eq!(s.weight(1), 1, "past its estimate");
    }

    #[test]
    fn created_threads_are_named_by_path() {
        let mut n = Names::default();
        n.reset();
        n.created_by(0);
        n.created_by(0);
        assert_eq!(n.of(1).to_string(), ThreadName::main().child(1).to_string());
        n.created_by(1);
        assert_eq!(*n.of(3), ThreadName::main().child(1).child(1));
        assert_eq!(*n.of(2), ThreadName::main().child(2));
    }
}
