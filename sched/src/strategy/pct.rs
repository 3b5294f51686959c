//! `pct<d>`: probabilistic concurrency testing with depth `d`, Burckhardt, Kothari, Musuvathi,
//! Nagarakatte, "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
//! ASPLOS'10, Algorithm 1.
//!
//! The rule, as in the paper:
//! * threads get distinct random initial priorities `d .. d+n-1`;
//! * `d-1` change points `k_1 .. k_{d-1}` are drawn uniformly in `[1, k]`; when the step
//!   numbered `k_i` executes, the thread that executed it drops to priority `i`, below every
//!   initial priority;
//! * every step runs the enabled thread with the highest priority.
//!
//! Adaptations to real programs, whose threads and length are not known in advance:
//! * Threads appear when created. A thread first seen in [`Strategy::pending`] is inserted at
//!   a uniformly random rank among the threads still holding an initial priority, which keeps
//!   those priorities a uniformly random permutation (all priorities are plain ranks). New
//!   threads are ranked at the next decision in thread order, so the ranks do not depend on the
//!   order in which real threads happen to post. Finished threads leave the ranking.
//! * `k` is the largest step count seen in earlier runs of this instance ([`Strategy::end`]);
//!   a run with `k` still unknown has no change points and measures it, unless
//!   [`super::Options::pct_k`] gives a first estimate. The change points are distinct (drawn
//!   without replacement; fewer when `k < d-1`), which only removes wasted collisions.
//! * Yield rule (as Coyote's and Shuttle's PCT do): a thread that executes a yield or sleep
//!   ([`crate::event::Op::is_yield`]) drops below every other thread's priority, so a
//!   spin-waiting thread lets the thread it waits for run; so does a thread spinning on a
//!   memory location or a try-operation ([`crate::spin::SpinWatch`]: the same read or failed
//!   trylock eight times in a row), or polling under a mutex (a thousand lock-unlock pairs in
//!   a row with only reads inside).

use super::{Divergence, Strategy};
use crate::event::{Event, Op};
use crate::rng::Rng;

pub struct Pct {
    name: String,
    depth: u32,
    /// Steps per run: largest seen so far (or the caller's estimate).
    k: Option<u64>,
    rng: Rng,
    /// Priority per thread id (higher runs first); meaningful once `known`.
    prio: Vec<i64>,
    known: Vec<bool>,
    /// Threads holding an initial priority, lowest first: `prio[high[j]] == depth + j`.
    high: Vec<u32>,
    /// Threads first seen since the last decision, to be ranked.
    arrivals: Vec<u32>,
    /// `(k_i, i)`: the step number and the priority it sets.
    change_points: Vec<(u64, i64)>,
    /// Steps executed in this run.
    step: u64,
    /// The priority the next yielding thread gets: below everything assigned so far.
    next_low: i64,
    /// Spin-waits on memory count as yields.
    spins: crate::spin::SpinWatch,
}

impl Pct {
    /// `name` is what [`Strategy::name`] reports; `depth >= 1`; `k` an optional first estimate.
    pub fn new(name: &str, depth: u32, k: Option<u64>) -> Self {
        Pct {
            name: name.into(),
            depth: depth.max(1),
            k: k.filter(|&k| k > 0),
            rng: Rng::new(0),
            prio: Vec::new(),
            known: Vec::new(),
            high: Vec::new(),
            arrivals: Vec::new(),
            change_points: Vec::new(),
            step: 0,
            next_low: 0,
            spins: Default::default(),
        }
    }

    /// The current estimate of steps per run, if any.
    pub fn k(&self) -> Option<u64> {
        self.k
    }

    /// This run's change points `(step, priority)`, in drawing order.
    pub fn change_points(&self) -> &[(u64, i64)] {
        &self.change_points
    }

    /// Renumber the initial-priority band after an insertion or removal.
    fn renumber(&mut self) {
        for (j, &t) in self.high.iter().enumerate() {
            self.prio[t as usize] = self.depth as i64 + j as i64;
        }
    }

    fn see(&mut self, t: u32) {
        let i = t as usize;
        if i >= self.known.len() {
            self.known.resize(i + 1, false);
            self.prio.resize(i + 1, 0);
        }
        if !self.known[i] {
            self.known[i] = true;
            self.arrivals.push(t);
        }
    }

    /// Rank the new threads (in thread order) at uniformly random positions.
    fn rank_arrivals(&mut self) {
        self.arrivals.sort_unstable();
        for a in 0..self.arrivals.len() {
            let t = self.arrivals[a];
            let r = self.rng.index(self.high.len() + 1);
            self.high.insert(r, t);
        }
        self.arrivals.clear();
        self.renumber();
    }

    /// Take `t` out of the initial band and give it priority `p`.
    fn lower(&mut self, t: u32, p: i64) {
        if let Some(j) = self.high.iter().position(|&x| x == t) {
            self.high.remove(j);
            self.renumber();
        }
        if let Some(slot) = self.prio.get_mut(t as usize) {
            *slot = p;
        }
    }

    /// `ev` executed; only a `counted` event advances the step count that change points
    /// refer to (trace-aware PCT counts interesting events only). Yields and exits are
    /// handled either way.
    pub(crate) fn executed_as(&mut self, ev: &Event, counted: bool) {
        let t = ev.tid;
        if counted {
            self.step += 1;
            if let Some(&(_, p)) = self.change_points.iter().find(|&&(s, _)| s == self.step) {
                self.lower(t, p);
            }
        }
        if self.spins.executed(ev) || ev.op.is_yield() {
            self.next_low -= 1;
            self.lower(t, self.next_low);
        } else if ev.op == Op::Exit {
            if let Some(j) = self.high.iter().position(|&x| x == t) {
                self.high.remove(j);
                self.renumber();
            }
        }
    }
}

impl Strategy for Pct {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn spec(&self, _seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        Some(crate::protocol::inproc::StrategySpec::Named {
            algo: self.name.clone(),
            depth: Some(self.depth),
            pct_k: self.k,
        })
    }

    fn begin(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
        self.prio.clear();
        self.known.clear();
        self.high.clear();
        self.arrivals.clear();
        self.change_points.clear();
        self.step = 0;
        self.next_low = 0;
        self.spins.clear();
        if let Some(k) = self.k {
            let want = (self.depth as u64 - 1).min(k);
            for i in 1..=want {
                let at = loop {
                    let at = 1 + self.rng.below(k);
                    if !self.change_points.iter().any(|&(s, _)| s == at) {
                        break at;
                    }
                };
                self.change_points.push((at, i as i64));
            }
        }
    }

    fn pending(&mut self, ev: &Event) {
        self.see(ev.tid);
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        for e in enabled {
            self.see(e.tid);
        }
        if !self.arrivals.is_empty() {
            self.rank_arrivals();
        }
        let mut best = 0;
        let mut best_prio = self.prio[enabled[0].tid as usize];
        for (i, e) in enabled.iter().enumerate().skip(1) {
            let p = self.prio[e.tid as usize];
            if p > best_prio {
                best = i;
                best_prio = p;
            }
        }
        Ok(best)
    }

    fn executed(&mut self, ev: &Event) {
        self.executed_as(ev, true);
    }

    /// Yield rule for polling with timed waits: a thread whose timed wait timed out (a
    /// `pthread_cond_timedwait` poll loop) drops below every other thread, as after a yield,
    /// so it cannot starve the thread it waits for.
    fn timed_out(&mut self, ev: &Event) {
        self.next_low -= 1;
        self.lower(ev.tid, self.next_low);
    }

    fn end(&mut self, steps: u64) {
        self.k = Some(self.k.map_or(steps, |k| k.max(steps))).filter(|&k| k > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::{
        self, assert_ratio, count, delay7, delay7_bug, read, write, Instr::*, Prog, X,
    };

    #[test]
    fn delay7_depth1_is_a_coin_flip() {
        let n = 200_000;
        let mut s = Pct::new("pct1", 1, None);
        let hits = count(&mut s, &delay7(), 3, n, delay7_bug);
        assert_ratio("pct1", hits, n, 0.5);
    }

    /// A: write x, write x; B: read x. Reading between A's writes needs one priority change.
    fn depth2() -> (Prog, impl Fn(&[Event]) -> bool) {
        let prog = Prog(vec![vec![Do(write(X)), Do(write(X))], vec![Do(read(X))]]);
        let bug = |t: &[Event]| {
            let w = testkit::positions(t, 0, write(X));
            let r = testkit::position(t, 1, read(X));
            matches!(r, Some(r) if w[0] < r && r < w[1])
        };
        (prog, bug)
    }

    #[test]
    fn k_is_learned_and_enables_depth_2_bugs() {
        let (prog, bug) = depth2();
        let mut s = Pct::new("pct2", 2, None);
        let first = testkit::run(&mut s, &prog, 1, 100);
        assert!(s.change_points().is_empty(), "k unknown: no change points");
        assert!(!bug(&first.trace));
        // 2 writes + exit, 1 read + exit.
        assert_eq!(s.k(), Some(5));
        let hits = count(&mut s, &prog, 2, 2000, &bug);
        assert_eq!(s.k(), Some(5));
        // Bug iff A is ranked first and the change point is step 1: 1/2 * 1/5 = 1/10.
        assert_ratio("pct2", hits, 2000, 0.1);
        let mut s1 = Pct::new("pct1", 1, None);
        assert_eq!(count(&mut s1, &prog, 2, 2000, bug), 0, "depth 1 cannot");
    }

    #[test]
    fn a_given_k_is_used_from_the_first_run_and_change_points_are_distinct() {
        let mut s = Pct::new("pct5", 5, Some(6));
        for seed in 0..200 {
            s.begin(seed);
            let mut cps: Vec<_> = s.change_points().iter().map(|c| c.0).collect();
            assert_eq!(cps.len(), 4);
            assert!(cps.iter().all(|&c| (1..=6).contains(&c)), "{cps:?}");
            cps.sort();
            cps.dedup();
            assert_eq!(cps.len(), 4, "distinct");
            let mut prios: Vec<_> = s.change_points().iter().map(|c| c.1).collect();
            prios.sort();
            assert_eq!(prios, vec![1, 2, 3, 4]);
        }
        // Fewer steps than change points: every step is one.
        let mut s = Pct::new("pct5", 5, Some(2));
        s.begin(1);
        assert_eq!(s.change_points().len(), 2);
    }

    #[test]
    fn initial_ranks_are_a_uniform_permutation() {
        // Three threads each write once; the order is the priority order.
        let prog = Prog(vec![
            vec![Do(write(1))],
            vec![Do(write(2))],
            vec![Do(write(3))],
        ]);
        let mut s = Pct::new("pct1", 1, None);
        let mut counts = std::collections::BTreeMap::new();
        let n = 60_000;
        for i in 0..n {
            let r = testkit::run(&mut s, &prog, crate::rng::try_seed(9, i), 100);
            let order: Vec<u32> = r
                .trace
                .iter()
                .filter(|e| matches!(e.op, Op::Write { .. }))
                .map(|e| e.tid)
                .collect();
            *counts.entry(order).or_insert(0u64) += 1;
        }
        assert_eq!(counts.len(), 6, "{counts:?}");
        for (order, c) in counts {
            assert_ratio(&format!("{order:?}"), c, n, 1.0 / 6.0);
        }
    }

    #[test]
    fn a_yielding_thread_drops_below_all_others() {
        let mut s = Pct::new("pct1", 1, None);
        s.begin(4);
        let evs = [Event::new(0, Op::Yield), Event::new(1, write(X))];
        s.pending(&evs[0]);
        s.pending(&evs[1]);
        let first = s.choose(&evs).unwrap();
        if first == 0 {
            s.executed(&evs[0]);
            s.pending(&evs[0]);
            assert_eq!(s.choose(&evs).unwrap(), 1, "after its yield, 0 is lowest");
        } else {
            assert!(s.prio[1] > s.prio[0]);
        }
        // Thread 1 yields too: now it is below thread 0.
        s.executed(&Event::new(1, Op::Yield));
        assert!(s.prio[1] < s.prio[0]);
    }
}
