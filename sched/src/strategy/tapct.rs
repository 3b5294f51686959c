//! `tapct<d>`: trace-aware PCT — PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte,
//! ASPLOS'10) whose `d-1` priority change points are placed among the *interesting* events
//! only, as proposed for trace-aware PCT variants: the change points count only the events
//! that can take part in a bug (racing accesses, atomics, synchronisation), so the
//! probability of hitting a depth-`d` bug is at least `1/(n * k'^(d-1))` with `k'` the number
//! of interesting events of a run, instead of PCT's `1/(n * k^(d-1))` over all `k` steps.
//!
//! The rule: exactly [`super::pct`]'s (random initial ranks `d .. d+n-1`, the highest-ranked
//! enabled thread runs, the thread executing the `k_i`-th change point drops to priority `i`,
//! the yield rule), except that the step numbers `k_1 .. k_{d-1}`, drawn uniformly without
//! repetition in `[1, k']`, count interesting events: the `k_i`-th *interesting* event is
//! the change point. Which events are interesting is [`super::surw::interesting`] with the
//! racing addresses of the program's [`super::surw::Profile`]; `k'` is the profile's most
//! interesting events in one run ([`super::surw::Profile::max_interesting`]). A profile
//! without memory events (`--points sync`, an uninstrumented program: the accesses between
//! points are unseen, e.g. a load right after a thread's start) counts every event, i.e.
//! `tapct<d>` is then `pct<d>` (a Rust lost update between `load` and `yield_now` needs its
//! change point at a thread's start: 0 of 200 tries before this rule, as pct1). Without a
//! profile every memory access is interesting and `k'` is learned like PCT's `k`: the first
//! run of an instance has no change points and measures it.

use super::pct::Pct;
use super::surw::{interesting, Profile};
use super::{Divergence, Strategy};
use crate::event::Event;
use std::sync::Arc;

pub struct TaPct {
    inner: Pct,
    profile: Option<Arc<Profile>>,
    /// Interesting events executed in this run.
    counted: u64,
}

impl TaPct {
    pub fn new(name: &str, depth: u32, profile: Option<Arc<Profile>>) -> Self {
        let k = profile.as_ref().map(|p| p.max_interesting);
        TaPct {
            inner: Pct::new(name, depth, k),
            profile,
            counted: 0,
        }
    }

    /// The current `k'`.
    pub fn k(&self) -> Option<u64> {
        self.inner.k()
    }
}

impl Strategy for TaPct {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn begin(&mut self, seed: u64) {
        self.counted = 0;
        self.inner.begin(seed);
    }
    fn pending(&mut self, ev: &Event) {
        self.inner.pending(ev);
    }
    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        self.inner.choose(enabled)
    }
    fn executed(&mut self, ev: &Event) {
        // Without memory points every event counts: the unseen accesses right after a start
        // or a create are where the preemption may be needed.
        let counted = match &self.profile {
            Some(p) if !p.memory => true,
            p => interesting(&ev.op, p.as_ref().map(|p| &p.racy)),
        };
        self.counted += u64::from(counted);
        self.inner.executed_as(ev, counted);
    }
    fn timed_out(&mut self, ev: &Event) {
        self.inner.timed_out(ev);
    }
    fn end(&mut self, _steps: u64) {
        self.inner.end(self.counted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;
    use crate::strategy::surw::tests::profile_of;
    use crate::strategy::testkit::{self, assert_ratio, count, read, write, Instr::*, Prog, X};

    /// A: 20 private writes, write x, write x; B: 20 private writes, read x. The bug (B's
    /// read between A's writes) has depth 2. Interesting: the 3 x accesses and 2 exits.
    fn prog() -> (Prog, impl Fn(&[Event]) -> bool) {
        let mut a: Vec<_> = (0..20).map(|i| Do(write(0x1000 + 8 * i))).collect();
        a.extend([Do(write(X)), Do(write(X))]);
        let mut b: Vec<_> = (0..20).map(|i| Do(write(0x2000 + 8 * i))).collect();
        b.push(Do(read(X)));
        let bug = |t: &[Event]| {
            let w = testkit::positions(t, 0, write(X));
            let r = testkit::position(t, 1, read(X));
            matches!(r, Some(r) if w[0] < r && r < w[1])
        };
        (Prog(vec![a, b]), bug)
    }

    #[test]
    fn depth2_bug_hit_with_probability_1_over_n_k_prime() {
        let (prog, bug) = prog();
        let prof = profile_of(&prog);
        assert_eq!(prof.max_interesting, 5);
        let n = 20_000;
        let mut s = TaPct::new("tapct2", 2, Some(prof));
        assert_eq!(s.k(), Some(5));
        // Hit iff A is ranked first (1/2) and the change point is the 1st interesting event
        // (A's first write of x, 1/5): exactly 1/(n k') = 1/10.
        let hits = count(&mut s, &prog, 3, n, &bug);
        assert_ratio("tapct2", hits, n, 0.1);
        // Plain PCT spreads its change point over all 45 steps: 1/2 * 1/45.
        let mut p = Pct::new("pct2", 2, Some(45));
        let hits = count(&mut p, &prog, 3, n, &bug);
        assert_ratio("pct2", hits, n, 1.0 / 90.0);
    }

    #[test]
    fn without_memory_events_every_event_counts_as_in_pct() {
        // Sync points only: two threads that only yield (the unseen accesses sit between
        // their start and their yield). The profile has no memory event, so k' is all the
        // events of a run and tapct2 makes the same choices as pct2 with that k.
        let prog = Prog(vec![vec![Do(Op::Yield)], vec![Do(Op::Yield)]]);
        let prof = profile_of(&prog);
        assert!(!prof.memory);
        assert_eq!(prof.max_interesting, 4, "2 yields + 2 exits");
        let mut s = TaPct::new("tapct2", 2, Some(prof));
        let mut p = Pct::new("pct2", 2, Some(4));
        for i in 0..200 {
            let a = testkit::run(&mut s, &prog, crate::rng::try_seed(5, i), 100);
            let b = testkit::run(&mut p, &prog, crate::rng::try_seed(5, i), 100);
            assert_eq!(a.trace, b.trace, "try {i}");
        }
        // With a racing access the private events do not count (see the test above).
        let (prog, _) = super::tests::prog();
        assert!(profile_of(&prog).memory);
    }

    #[test]
    fn without_a_profile_k_prime_is_learned() {
        let (prog, _) = prog();
        let mut s = TaPct::new("tapct3", 3, None);
        assert_eq!(s.k(), None);
        testkit::run(&mut s, &prog, 1, 10_000);
        // Every access is interesting without a profile: 43 accesses + 2 exits.
        assert_eq!(s.k(), Some(45));
    }
}
