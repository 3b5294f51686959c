//! Schedule minimisation: the fewest preemptions that still reproduce a run's outcome.
//!
//! A schedule is rewritten as its *switches*: after thread A's k-th step, thread B runs. A
//! switch is a *preemption* when A could have continued ([`crate::schedule::Step::preempt`]);
//! otherwise it is *forced* (A blocked, finished or yielded) and only says which thread went
//! next. [`Guided`] runs a program from a set of switches: at each decision it applies the
//! switch keyed by (last thread, its step count) when that switch still fits, and otherwise
//! follows a deterministic non-preemptive policy (the last thread goes on while it can; when
//! it cannot, the next enabled thread in thread order after it). With every switch it
//! replays the schedule step for step; with fewer preemptions the run may leave the recorded
//! interleaving, and from there the policy finishes it (an *approximate* replay). Forced
//! switches never preempt: one that would (its thread can go on in this run) is skipped.
//!
//! [`ddmin`] (Zeller and Hildebrandt's delta debugging, TSE 2002) then searches the subsets
//! of the preemptions for a 1-minimal one whose guided run still shows the outcome; the
//! runner re-checks each candidate by running the real program (`poscheck minimize`).

use crate::event::{Event, Tid};
use crate::schedule::Step;
use crate::strategy::{Divergence, Strategy};
use std::collections::HashMap;

/// Key of the first decision of a run (no thread has run yet).
const NOBODY: Tid = Tid::MAX;

/// One switch of a schedule: after `after`'s `count`-th step, `to` ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    pub after: Tid,
    pub count: u64,
    pub to: Tid,
    /// `after` could have continued: a preemption.
    pub preemption: bool,
}

/// The switches of `steps` (with their recorded [`Step::preempt`] marks), in order; the
/// first step is a forced switch from [`NOBODY`].
pub fn switches(steps: &[Step]) -> Vec<Switch> {
    let mut counts: HashMap<Tid, u64> = HashMap::new();
    let mut out = Vec::new();
    let mut last = NOBODY;
    for s in steps {
        if s.tid != last {
            out.push(Switch {
                after: last,
                count: if last == NOBODY { 0 } else { counts[&last] },
                to: s.tid,
                preemption: s.preempt,
            });
        }
        *counts.entry(s.tid).or_default() += 1;
        last = s.tid;
    }
    out
}

/// Number of preemptions in `steps`.
pub fn preemptions(steps: &[Step]) -> usize {
    steps.iter().filter(|s| s.preempt).count()
}

/// The strategy that runs a program from a set of switches (see the module doc).
pub struct Guided {
    rules: HashMap<(Tid, u64), Switch>,
    counts: Vec<u64>,
    last: Option<Event>,
}

impl Guided {
    /// Run with these switches (forced ones and the preemptions kept).
    pub fn new(rules: &[Switch]) -> Guided {
        Guided {
            rules: rules.iter().map(|s| ((s.after, s.count), *s)).collect(),
            counts: Vec::new(),
            last: None,
        }
    }

    /// The switches of `all` without the preemptions whose positions (among the
    /// preemptions, in order) are not in `keep`.
    pub fn keeping(all: &[Switch], keep: &[usize]) -> Guided {
        let mut p = 0;
        let mut rules = Vec::new();
        for s in all {
            if s.preemption {
                if keep.contains(&p) {
                    rules.push(*s);
                }
                p += 1;
            } else {
                rules.push(*s);
            }
        }
        Guided::new(&rules)
    }

    fn count(&self, t: Tid) -> u64 {
        self.counts.get(t as usize).copied().unwrap_or(0)
    }
}

impl Strategy for Guided {
    fn name(&self) -> String {
        "minimize".into()
    }

    fn begin(&mut self, _seed: u64) {
        self.counts.clear();
        self.last = None;
    }

    fn pending(&mut self, _ev: &Event) {}

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        let index_of = |t: Tid| enabled.iter().position(|e| e.tid == t);
        let (key, cont) = match self.last {
            None => ((NOBODY, 0), None),
            Some(l) => {
                let goes_on = !l.op.is_yield() && index_of(l.tid).is_some();
                ((l.tid, self.count(l.tid)), goes_on.then_some(l.tid))
            }
        };
        let rule = self
            .rules
            .get(&key)
            .and_then(|s| Some((s, index_of(s.to)?)));
        match (cont, rule) {
            // A kept preemption, or a forced switch where the thread cannot go on.
            (Some(_), Some((s, i))) if s.preemption => return Ok(i),
            (None, Some((_, i))) => return Ok(i),
            (Some(t), _) => return Ok(index_of(t).unwrap_or(0)),
            (None, None) => {}
        }
        // The policy's own switch: the next enabled thread after the last one, in thread
        // order, wrapping around; a yielding thread comes last.
        let after = self.last.map_or(0, |l| l.tid.wrapping_add(1));
        let pick = enabled
            .iter()
            .enumerate()
            .filter(|(_, e)| Some(e.tid) != self.last.map(|l| l.tid))
            .min_by_key(|(_, e)| e.tid.wrapping_sub(after))
            .map_or(0, |(i, _)| i);
        Ok(pick)
    }

    fn executed(&mut self, ev: &Event) {
        let t = ev.tid as usize;
        if self.counts.len() <= t {
            self.counts.resize(t + 1, 0);
        }
        self.counts[t] += 1;
        self.last = Some(*ev);
    }
}

/// The switches (forced ones and the preemptions kept) of a schedule with as few
/// preemptions as the search finds, for which `test` (a guided run with these switches
/// shows the outcome) holds; `all` are the switches of a schedule that shows it, `threads`
/// the threads a preemption may switch to. First [`ddmin`] over the preemptions of `all`;
/// then, while that helps, each kept preemption is tried with another target thread and the
/// preemptions are shrunk again (a schedule often reaches the bug's preemption through
/// detours: after thread A's k-th step it switched to C, which later switched to B, where
/// one switch from A to B suffices), and each forced switch with another target (the thread
/// the bug needs may be the one that goes on when another blocks). At most `budget` calls of
/// `test`; with the budget spent, the best found so far.
pub fn minimize(
    all: &[Switch],
    threads: &[Tid],
    budget: usize,
    mut test: impl FnMut(&[Switch]) -> bool,
) -> Vec<Switch> {
    let mut s = Search {
        forced: all.iter().filter(|s| !s.preemption).copied().collect(),
        test: &mut test,
        calls: 0,
        budget,
    };
    let mut best = s.shrink(all.iter().filter(|s| s.preemption).copied().collect());
    'improve: loop {
        if best.is_empty() {
            break;
        }
        for i in 0..best.len() {
            for &c in threads {
                if c == best[i].to || c == best[i].after {
                    continue;
                }
                let mut cand = best.clone();
                cand[i].to = c;
                if !s.check(&cand) {
                    continue;
                }
                let smaller = s.shrink(cand);
                if smaller.len() < best.len() {
                    best = smaller;
                    continue 'improve;
                }
            }
        }
        // A forced switch to another thread (which one goes on when the running thread
        // blocks) may make a preemption unnecessary: the bug's thread is already running.
        for f in 0..s.forced.len() {
            for &c in threads {
                let old = s.forced[f];
                if c == old.to || c == old.after {
                    continue;
                }
                s.forced[f].to = c;
                // The preemptions kept, or all but one of them (one may now get in the way).
                let tries = std::iter::once(best.clone()).chain((0..best.len()).map(|i| {
                    let mut less = best.clone();
                    less.remove(i);
                    less
                }));
                for cand in tries {
                    if s.check(&cand) {
                        let smaller = s.shrink(cand);
                        if smaller.len() < best.len() {
                            best = smaller;
                            continue 'improve;
                        }
                        break;
                    }
                }
                s.forced[f] = old;
            }
        }
        break;
    }
    s.with(&best)
}

/// [`minimize`]'s state: the forced switches every candidate keeps, the test and its budget.
struct Search<'t> {
    forced: Vec<Switch>,
    test: &'t mut dyn FnMut(&[Switch]) -> bool,
    calls: usize,
    budget: usize,
}

impl Search<'_> {
    fn with(&self, pre: &[Switch]) -> Vec<Switch> {
        self.forced.iter().chain(pre).copied().collect()
    }

    /// Whether the guided run with preemptions `pre` shows the outcome (false once the
    /// budget is spent).
    fn check(&mut self, pre: &[Switch]) -> bool {
        if self.calls >= self.budget {
            return false;
        }
        self.calls += 1;
        let rules = self.with(pre);
        (self.test)(&rules)
    }

    /// A 1-minimal subset of `pre` (assumed to pass).
    fn shrink(&mut self, pre: Vec<Switch>) -> Vec<Switch> {
        let pick = |k: &[usize]| -> Vec<Switch> { k.iter().map(|&i| pre[i]).collect() };
        let keep = ddmin(pre.len(), |k| self.check(&pick(k)));
        pick(&keep)
    }
}

/// Delta debugging: a 1-minimal subset of `0..n` (sorted) for which `test` holds, starting
/// from the whole set (assumed to pass). `test` gets a sorted subset. Removing any single
/// element of the result makes `test` fail (unless the result is empty).
pub fn ddmin(n: usize, mut test: impl FnMut(&[usize]) -> bool) -> Vec<usize> {
    let mut cur: Vec<usize> = (0..n).collect();
    if cur.is_empty() || test(&[]) {
        return Vec::new();
    }
    let mut parts = 2usize;
    while cur.len() >= 2 {
        let chunks = split(&cur, parts);
        let mut reduced = false;
        // A chunk alone.
        for c in &chunks {
            if test(c) {
                cur = c.clone();
                parts = 2;
                reduced = true;
                break;
            }
        }
        if !reduced && parts > 2 {
            // The complement of a chunk.
            for i in 0..chunks.len() {
                let rest: Vec<usize> = chunks
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .flat_map(|(_, c)| c.iter().copied())
                    .collect();
                if test(&rest) {
                    cur = rest;
                    parts = (parts - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if parts >= cur.len() {
                break;
            }
            parts = (parts * 2).min(cur.len());
        }
    }
    if cur.len() == 1 && test(&[]) {
        cur.clear();
    }
    cur
}

/// `v` in `n` nearly equal consecutive chunks.
fn split(v: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(v.len()).max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let end = start + (v.len() - start) / (n - i);
        out.push(v[start..end].to_vec());
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::Decision;
    use crate::strategy::pos::{Pos, Variant};
    use crate::strategy::testkit::{self, read, write, Instr::*, Prog};

    #[test]
    fn ddmin_finds_the_elements_the_test_needs_and_nothing_else() {
        for need in [
            vec![],
            vec![3],
            vec![0, 9],
            vec![2, 5, 7],
            (0..12).collect(),
        ] {
            let mut calls = 0;
            let got = ddmin(12, |s| {
                calls += 1;
                need.iter().all(|x| s.contains(x))
            });
            assert_eq!(got, need, "calls {calls}");
        }
        // Either of two elements suffices: one of them is kept, not both.
        let got = ddmin(8, |s| s.contains(&2) || s.contains(&6));
        assert!(got == vec![2] || got == vec![6], "{got:?}");
        // Only the whole set passes: it is returned whole.
        assert_eq!(ddmin(5, |s| s.len() == 5), vec![0, 1, 2, 3, 4]);
        assert_eq!(ddmin(0, |_| true), Vec::<usize>::new());
    }

    #[test]
    fn ddmin_results_are_one_minimal() {
        // Test: the subset's sum is at least 10 (many 1-minimal answers).
        let got = ddmin(10, |s| s.iter().sum::<usize>() >= 10);
        assert!(got.iter().sum::<usize>() >= 10);
        for i in 0..got.len() {
            let mut less = got.clone();
            less.remove(i);
            assert!(less.iter().sum::<usize>() < 10, "{got:?} is not 1-minimal");
        }
    }

    /// Three threads that each write two words and read a third, with yields in between.
    fn busy() -> Prog {
        Prog(vec![
            vec![
                Do(write(0x10)),
                Do(read(0x20)),
                Do(write(0x30)),
                Do(read(0x10)),
            ],
            vec![
                Do(write(0x20)),
                Do(read(0x30)),
                Do(write(0x10)),
                Do(read(0x20)),
            ],
            vec![
                Do(read(0x10)),
                Do(write(0x30)),
                Do(write(0x20)),
                Do(read(0x30)),
            ],
        ])
    }

    #[test]
    fn every_switch_replays_the_schedule_step_for_step() {
        let mut pos = Pos::new(Variant::Pos);
        for seed in 0..40 {
            let rec = testkit::run(&mut pos, &busy(), seed, 10_000);
            assert_eq!(rec.end, Decision::Over);
            let sw = switches(&rec.steps);
            let again = testkit::run(&mut Guided::new(&sw), &busy(), 0, 10_000);
            assert_eq!(again.trace, rec.trace, "seed {seed}");
            assert_eq!(again.steps, rec.steps, "seed {seed}: same preemption marks");
        }
    }

    #[test]
    fn without_preemptions_the_run_is_non_preemptive() {
        let mut pos = Pos::new(Variant::Pos);
        for seed in 0..40 {
            let rec = testkit::run(&mut pos, &busy(), seed, 10_000);
            let sw = switches(&rec.steps);
            let n = sw.iter().filter(|s| s.preemption).count();
            assert_eq!(n, preemptions(&rec.steps));
            let none = testkit::run(&mut Guided::keeping(&sw, &[]), &busy(), 0, 10_000);
            assert_eq!(none.end, Decision::Over);
            assert_eq!(preemptions(&none.steps), 0, "seed {seed}: {:?}", none.steps);
            // Keeping some preemptions never makes more than were kept.
            let some: Vec<usize> = (0..n).step_by(2).collect();
            let part = testkit::run(&mut Guided::keeping(&sw, &some), &busy(), 0, 10_000);
            assert!(preemptions(&part.steps) <= some.len(), "seed {seed}");
        }
    }

    /// Thread 0 checks a pointer then uses it (two reads); thread 1 clears it: the bug is
    /// thread 1's write between thread 0's two reads. Thread 2 is noise.
    fn check_then_act() -> Prog {
        Prog(vec![
            vec![
                Do(write(0x50)),
                Do(read(0x40)),
                Do(read(0x40)),
                Do(write(0x50)),
            ],
            vec![Do(read(0x60)), Do(write(0x40)), Do(read(0x60))],
            vec![
                Do(write(0x60)),
                Do(read(0x50)),
                Do(write(0x60)),
                Do(read(0x50)),
            ],
        ])
    }

    fn atomicity_bug(trace: &[Event]) -> bool {
        let reads = testkit::positions(trace, 0, read(0x40));
        let w = testkit::position(trace, 1, write(0x40));
        matches!((reads.as_slice(), w), ([a, b], Some(w)) if *a < w && w < *b)
    }

    #[test]
    fn a_buggy_schedule_shrinks_to_the_preemptions_the_bug_needs() {
        let mut pos = Pos::new(Variant::Pos);
        let (mut shrunk, mut one) = (0, 0);
        for seed in 0..300 {
            let rec = testkit::run(&mut pos, &check_then_act(), seed, 10_000);
            if !atomicity_bug(&rec.trace) {
                continue;
            }
            let sw = switches(&rec.steps);
            let n = preemptions(&rec.steps);
            let mut runs = 0;
            let rules = minimize(&sw, &[0, 1, 2], 1000, |rules| {
                runs += 1;
                let r = testkit::run(&mut Guided::new(rules), &check_then_act(), 0, 10_000);
                atomicity_bug(&r.trace)
            });
            let min = testkit::run(&mut Guided::new(&rules), &check_then_act(), 0, 10_000);
            assert!(
                atomicity_bug(&min.trace),
                "seed {seed}: the minimised run keeps the bug"
            );
            // One preemption (thread 0 between its reads) is all the bug needs, whichever
            // thread the recorded run began with (the first choice is a forced switch: it
            // is retargeted when that saves a preemption).
            let p = preemptions(&min.steps);
            assert_eq!(p, 1, "seed {seed}: {p} of {n}: {:?}", min.steps);
            if rec.steps[0].tid != 0 {
                one += 1;
            }
            assert!(runs <= 1000);
            shrunk += 1;
        }
        assert!(
            shrunk >= 5 && one >= 2,
            "{shrunk} buggy runs ({one} from thread 0) of 300"
        );
    }

    #[test]
    fn a_schedule_no_candidate_reproduces_stays_whole() {
        // A test that only the full set passes (the program's outcome depends on all of
        // them): nothing is removed.
        let mut pos = Pos::new(Variant::Pos);
        let rec = testkit::run(&mut pos, &busy(), 7, 10_000);
        let n = preemptions(&rec.steps);
        assert!(n >= 2, "seed 7 preempts {n} times");
        let sw = switches(&rec.steps);
        let keep = ddmin(n, |k| {
            let r = testkit::run(&mut Guided::keeping(&sw, k), &busy(), 0, 10_000);
            r.trace == rec.trace
        });
        assert_eq!(keep, (0..n).collect::<Vec<_>>());
        // And the whole search keeps every switch.
        let rules = minimize(&sw, &[0, 1, 2], 1000, |rules| {
            testkit::run(&mut Guided::new(rules), &busy(), 0, 10_000).trace == rec.trace
        });
        let again = testkit::run(&mut Guided::new(&rules), &busy(), 0, 10_000);
        assert_eq!(again.trace, rec.trace);
    }
}
