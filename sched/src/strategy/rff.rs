//! `rff`: reads-from feedback fuzzing, after Wolff, Shi, Duck, Mathur and Roychoudhury,
//! "Greybox Fuzzing for Concurrency Testing" (ASPLOS'24).
//!
//! Greybox fuzzing whose inputs are *abstract schedules* and whose coverage is the set of
//! *reads-from pairs* a run exhibited:
//! * An event is named across runs by [`EvId`]: its thread's creation path, the object it
//!   touches, and how many events that thread ran on that object before it (`nth`).
//! * A reads-from pair is (the last writer of an object, an event that reads it): a plain or
//!   atomic load reads the last write or atomic update of its address; an atomic update and
//!   every synchronisation operation reads its object's previous operation (a lock reads the
//!   unlock it follows, a `sem_wait` the post it consumes). `None` as the writer is the
//!   initial value. Only scheduling points take part: in `auto` points mode those are the
//!   atomics, the racing sites learned so far and the synchronisation.
//! * An abstract schedule is a small set of [`Constraint`]s "r reads from w" (positive) or
//!   "r does not read from w" (negative). A run follows POS ([`super::pos`]) over the
//!   events that do not violate a constraint *now*: a read with a positive constraint waits
//!   until its writer ran, a read with a negative one waits while its writer is the object's
//!   last writer (§4 of the paper: the constraints are hints, so when every enabled event
//!   waits, or after [`MAX_DELAYS`] waits in a run, POS chooses among all of them).
//! * The [`Corpus`] keeps every schedule whose run exhibited a pair no earlier run had; a
//!   new schedule is a mutation of a corpus entry chosen with energy `1/f` where `f` is the
//!   number of runs that exhibited the entry's rarest pair (the power schedule favouring
//!   rare pairs); the mutation negates one of the entry's observed pairs or redirects its
//!   read to another writer seen in that run (picking the pair with probability
//!   proportional to its rarity), and sometimes drops a constraint.
//!
//! Determinism: every try gets the same immutable corpus snapshot (the runner absorbs the
//! feedback of a batch of tries in try order between batches, see [`Corpus::absorb`]), and
//! the try's mutation and POS priorities come from its seed only.

use super::pos::{Pos, Variant};
use super::surw::Names;
use super::{Divergence, Strategy};
use crate::event::{Access, Event, Op, ThreadName, Tid};
use crate::rng::Rng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Whether strategy `name` learns from feedback between batches of tries (the runner then
/// keeps a [`Corpus`] and passes its snapshot in [`super::Options::corpus`]).
pub fn uses_feedback(name: &str) -> bool {
    matches!(name, "rff" | "auto")
}

/// Constraints a schedule may carry; the oldest is dropped beyond it.
pub const MAX_CONSTRAINTS: usize = 4;
/// Waits forced by constraints in one run before they are ignored (a delayed read whose
/// writer never comes, or a spin loop waiting for the delayed thread).
pub const MAX_DELAYS: u32 = 500;
/// Distinct pairs one run reports (a long run keeps its first ones).
pub const MAX_PAIRS: usize = 4096;
/// Writers per object one run reports, as candidates for redirected reads.
pub const MAX_WRITERS: usize = 8;
/// Corpus entries kept; later runs with new pairs only update the pair counts.
pub const MAX_ENTRIES: usize = 1024;
/// `nth` above this counts as this for coverage (a loop's iterations are one pair).
pub const NTH_CAP: u32 = 3;
/// Share of tries that run a constraint-free POS schedule (exploration).
pub const FRESH_SHARE: f64 = 0.2;

/// An event named across runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EvId {
    pub thread: Arc<ThreadName>,
    /// The object's address.
    pub obj: u64,
    /// Events of this thread on this object before this one.
    pub nth: u32,
}

/// "`read` reads from `write`" (positive) or "does not" (negative); `write: None` is the
/// object's initial value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Constraint {
    pub write: Option<EvId>,
    pub read: EvId,
    pub positive: bool,
}

/// What one run reports to the corpus.
#[derive(Clone, Debug, Default)]
pub struct Feedback {
    /// The schedule the run followed.
    pub constraints: Vec<Constraint>,
    /// Distinct reads-from pairs by coverage key, first occurrence each, in run order.
    pub pairs: Vec<(u64, Option<EvId>, EvId)>,
    /// Writers of each object in the run (at most [`MAX_WRITERS`] each).
    pub writers: BTreeMap<u64, Vec<EvId>>,
}

/// Coverage key of a pair: threads, object and capped positions (FNV-1a, version-stable).
pub fn pair_key(w: Option<&EvId>, r: &EvId) -> u64 {
    key_of(w, &r.thread, r.obj, r.nth)
}

/// [`pair_key`] of a reader given by parts.
fn key_of(w: Option<&EvId>, reader: &ThreadName, obj: u64, nth: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(obj);
    let thread = |t: &ThreadName, nth: u32, eat: &mut dyn FnMut(u64)| {
        eat(t.0.len() as u64);
        t.0.iter().for_each(|&p| eat(u64::from(p)));
        eat(u64::from(nth.min(NTH_CAP)));
    };
    match w {
        Some(w) => thread(&w.thread, w.nth, &mut eat),
        None => eat(u64::MAX),
    }
    thread(reader, nth, &mut eat);
    h
}

/// The schedules kept so far and how often each pair was seen (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// Each kept run: its schedule and what it exhibited.
    entries: Vec<Arc<Feedback>>,
    /// Runs that exhibited each pair.
    freq: HashMap<u64, u64>,
    /// Per entry: its energy (1 / count of its rarest pair), recomputed by `absorb`.
    energy: Vec<f64>,
    runs: u64,
}

impl Corpus {
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Runs absorbed.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Distinct pairs seen.
    pub fn pairs(&self) -> usize {
        self.freq.len()
    }

    /// Take the feedback of a batch of runs, in try order; returns how many entered.
    pub fn absorb(&mut self, batch: impl IntoIterator<Item = Feedback>) -> usize {
        let mut added = 0;
        for fb in batch {
            self.runs += 1;
            let mut new = false;
            for (k, _, _) in &fb.pairs {
                let c = self.freq.entry(*k).or_insert(0);
                new |= *c == 0;
                *c += 1;
            }
            if new && self.entries.len() < MAX_ENTRIES {
                self.entries.push(Arc::new(fb));
                added += 1;
            }
        }
        self.energy = self
            .entries
            .iter()
            .map(|e| {
                let rarest = e.pairs.iter().map(|(k, _, _)| self.freq[k]).min();
                1.0 / rarest.unwrap_or(1).max(1) as f64
            })
            .collect();
        added
    }

    /// The schedule of a new run: a mutation of an entry (see the module doc).
    pub fn mutate(&self, rng: &mut Rng) -> Vec<Constraint> {
        if self.entries.is_empty() || rng.chance(FRESH_SHARE) {
            return Vec::new();
        }
        let e = &self.entries[pick(rng, &self.energy)];
        let mut cs = e.constraints.clone();
        if !cs.is_empty() && rng.chance(0.25) {
            cs.remove(rng.index(cs.len()));
        }
        if let Some(c) = self.new_constraint(e, rng) {
            if !cs.contains(&c) {
                cs.push(c);
            }
        }
        while cs.len() > MAX_CONSTRAINTS {
            cs.remove(0);
        }
        cs
    }

    /// Negate one of `fb`'s pairs, or redirect its read to another writer of the object.
    fn new_constraint(&self, fb: &Feedback, rng: &mut Rng) -> Option<Constraint> {
        if fb.pairs.is_empty() {
            return None;
        }
        let w: Vec<f64> = fb
            .pairs
            .iter()
            .map(|(k, _, _)| 1.0 / self.freq.get(k).copied().unwrap_or(1).max(1) as f64)
            .collect();
        let (_, write, read) = &fb.pairs[pick(rng, &w)];
        if rng.chance(0.5) {
            let others: Vec<&EvId> = fb
                .writers
                .get(&read.obj)
                .into_iter()
                .flatten()
                .filter(|o| Some(*o) != write.as_ref() && o.thread != read.thread)
                .collect();
            if !others.is_empty() {
                return Some(Constraint {
                    write: Some(others[rng.index(others.len())].clone()),
                    read: read.clone(),
                    positive: true,
                });
            }
        }
        Some(Constraint {
            write: write.clone(),
            read: read.clone(),
            positive: false,
        })
    }
}

/// An index drawn with probability proportional to `w` (not all zero).
fn pick(rng: &mut Rng, w: &[f64]) -> usize {
    let total: f64 = w.iter().sum();
    let mut x = rng.unit() * total;
    for (i, &wi) in w.iter().enumerate() {
        if x < wi {
            return i;
        }
        x -= wi;
    }
    w.len() - 1
}

/// Whether `op` reads its object (takes part in a pair as the reader) and writes it.
fn reads_writes(op: &Op) -> (bool, bool) {
    match op {
        Op::Write { .. } | Op::AtomicStore { .. } => (false, true),
        _ => match op.access() {
            Access::Read => (true, false),
            Access::Write => (true, true),
            Access::None => (false, false),
        },
    }
}

pub struct Rff {
    corpus: Option<Arc<Corpus>>,
    inner: Pos,
    names: Names,
    /// Per tid, its name (shared by the run's event ids).
    tnames: Vec<Arc<ThreadName>>,
    /// This run's schedule, and per constraint whether its writer has run.
    constraints: Vec<Constraint>,
    writer_ran: Vec<bool>,
    delays: u32,
    /// Events run per (thread, object).
    count: HashMap<(Tid, u64), u32>,
    last_writer: HashMap<u64, Option<EvId>>,
    seen: HashSet<u64>,
    fb: Feedback,
}

impl Rff {
    pub fn new(corpus: Option<Arc<Corpus>>) -> Self {
        Rff {
            corpus,
            inner: Pos::new(Variant::Pos),
            names: Names::default(),
            tnames: Vec::new(),
            constraints: Vec::new(),
            writer_ran: Vec::new(),
            delays: 0,
            count: HashMap::new(),
            last_writer: HashMap::new(),
            seen: HashSet::new(),
            fb: Feedback::default(),
        }
    }

    /// Run with exactly these constraints (tests; the corpus is not consulted).
    pub fn with_constraints(constraints: Vec<Constraint>) -> Self {
        let mut s = Self::new(None);
        s.constraints = constraints;
        s
    }

    /// The name of `t`, shared.
    fn tname(&mut self, t: Tid) -> Arc<ThreadName> {
        while self.tnames.len() <= t as usize {
            let n = self.names.of(self.tnames.len() as Tid).clone();
            self.tnames.push(Arc::new(n));
        }
        self.tnames[t as usize].clone()
    }

    /// Whether `ev`, if it ran now, would violate a constraint.
    fn violates(&mut self, ev: &Event) -> bool {
        for i in 0..self.constraints.len() {
            let c = &self.constraints[i];
            let obj = c.read.obj;
            if !ev.op.objects().iter().flatten().any(|o| o.addr == obj)
                || self.count.get(&(ev.tid, obj)).copied().unwrap_or(0) != c.read.nth
                || self.tname(ev.tid) != self.constraints[i].read.thread
            {
                continue;
            }
            let c = &self.constraints[i];
            let bad = if c.positive {
                !self.writer_ran[i]
            } else {
                self.last_writer.get(&obj).cloned().unwrap_or(None) == c.write
            };
            if bad {
                return true;
            }
        }
        false
    }
}

impl Strategy for Rff {
    fn name(&self) -> String {
        "rff".into()
    }

    fn begin(&mut self, seed: u64) {
        if let Some(c) = &self.corpus {
            self.constraints = c.mutate(&mut Rng::new(seed ^ 0x5246_465f_4d55_5441));
        }
        self.writer_ran = vec![false; self.constraints.len()];
        self.delays = 0;
        self.names.reset();
        self.tnames.clear();
        self.count.clear();
        self.last_writer.clear();
        self.seen.clear();
        self.fb = Feedback {
            constraints: self.constraints.clone(),
            ..Feedback::default()
        };
        self.inner.begin(seed);
    }

    fn pending(&mut self, ev: &Event) {
        self.tname(ev.tid);
        self.inner.pending(ev);
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        if self.constraints.is_empty() || self.delays >= MAX_DELAYS {
            return self.inner.choose(enabled);
        }
        let allowed: Vec<usize> = (0..enabled.len())
            .filter(|&i| !self.violates(&enabled[i]))
            .collect();
        if allowed.is_empty() || allowed.len() == enabled.len() {
            return self.inner.choose(enabled);
        }
        self.delays += 1;
        let sub: Vec<Event> = allowed.iter().map(|&i| enabled[i]).collect();
        Ok(allowed[self.inner.choose(&sub)?])
    }

    fn executed(&mut self, ev: &Event) {
        self.inner.executed(ev);
        let t = ev.tid;
        let (reads, writes) = reads_writes(&ev.op);
        if !reads && !writes {
            if ev.op == Op::Create {
                self.names.created_by(t);
            }
            return;
        }
        let name = self.tname(t);
        for obj in ev.op.objects().into_iter().flatten() {
            let obj = obj.addr;
            let nth = self.count.get(&(t, obj)).copied().unwrap_or(0);
            if reads {
                let w = self.last_writer.get(&obj).and_then(Option::as_ref);
                let k = key_of(w, &name, obj, nth);
                if self.fb.pairs.len() < MAX_PAIRS && self.seen.insert(k) {
                    let id = EvId {
                        thread: name.clone(),
                        obj,
                        nth,
                    };
                    self.fb.pairs.push((k, w.cloned(), id));
                }
            }
            if writes {
                let id = EvId {
                    thread: name.clone(),
                    obj,
                    nth,
                };
                for (i, c) in self.constraints.iter().enumerate() {
                    if c.write.as_ref() == Some(&id) {
                        self.writer_ran[i] = true;
                    }
                }
                let ws = self.fb.writers.entry(obj).or_default();
                if ws.len() < MAX_WRITERS && !ws.contains(&id) {
                    ws.push(id.clone());
                }
                self.last_writer.insert(obj, Some(id));
            }
            *self.count.entry((t, obj)).or_insert(0) += 1;
        }
        if ev.op == Op::Create {
            self.names.created_by(t);
        }
    }

    fn timed_out(&mut self, ev: &Event) {
        self.inner.timed_out(ev);
    }

    fn end(&mut self, steps: u64) {
        self.inner.end(steps);
    }

    fn take_feedback(&mut self) -> Option<Feedback> {
        Some(std::mem::take(&mut self.fb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::try_seed;
    use crate::strategy::testkit::{self, assert_ratio, read, write, Instr::Do, Prog};

    const X: u64 = 0x100;

    fn id(t: &[u32], obj: u64, nth: u32) -> EvId {
        EvId {
            thread: Arc::new(ThreadName(t.to_vec())),
            obj,
            nth,
        }
    }

    /// A: write x; write x. B: read x. (Threads 0 and 0.1, both existing from step 0.)
    fn two_writes_one_read() -> Prog {
        Prog(vec![vec![Do(write(X)), Do(write(X))], vec![Do(read(X))]])
    }

    /// Which write B's read saw: 0 (initial), 1 or 2.
    fn read_from(trace: &[Event]) -> usize {
        let r = testkit::position(trace, 1, read(X)).unwrap();
        testkit::positions(trace, 0, write(X))
            .iter()
            .filter(|&&w| w < r)
            .count()
    }

    fn dist(s: &mut Rff, n: u64) -> [u64; 3] {
        let mut d = [0; 3];
        for i in 0..n {
            let r = testkit::run(s, &two_writes_one_read(), try_seed(7, i), 100);
            d[read_from(&r.trace)] += 1;
        }
        d
    }

    #[test]
    fn without_constraints_it_is_pos() {
        // POS on A: w w | B: r. The read races with both writes: POS's probabilities are
        // 1/2 (reads the initial value), 1/4 (the first write), 1/4 (the second): B's read
        // and A's next write have fresh independent priorities at each step.
        let n = 40_000;
        let d = dist(&mut Rff::with_constraints(Vec::new()), n);
        assert_ratio("initial", d[0], n, 0.5);
        assert_ratio("first", d[1], n, 0.25);
        assert_ratio("second", d[2], n, 0.25);
    }

    #[test]
    fn a_negative_constraint_on_the_initial_value_moves_its_mass() {
        // "B's read does not read the initial value": the read waits until A's first write;
        // then it and A's second write race as in POS: 1/2 each.
        let c = Constraint {
            write: None,
            read: id(&[1], X, 0),
            positive: false,
        };
        let n = 40_000;
        let d = dist(&mut Rff::with_constraints(vec![c]), n);
        assert_eq!(d[0], 0);
        assert_ratio("first", d[1], n, 0.5);
        assert_ratio("second", d[2], n, 0.5);
    }

    #[test]
    fn a_positive_constraint_makes_the_rare_pair_certain() {
        // "B's read reads from A's first write" (1/4 under POS): the read waits until the
        // first write ran; only reads wait, so it then races with A's second write: the
        // constrained pair rises from 1/4 to 1/2, and the initial value is never read.
        let c = Constraint {
            write: Some(id(&[], X, 0)),
            read: id(&[1], X, 0),
            positive: true,
        };
        let n = 40_000;
        let d = dist(&mut Rff::with_constraints(vec![c]), n);
        assert_eq!(d[0], 0);
        assert_ratio("first", d[1], n, 0.5);
        assert_ratio("second", d[2], n, 0.5);
    }

    #[test]
    fn feedback_names_pairs_by_thread_object_and_position() {
        let mut s = Rff::with_constraints(Vec::new());
        // Find a run where B reads between the writes.
        let r = (0..100)
            .map(|i| {
                (
                    i,
                    testkit::run(&mut s, &two_writes_one_read(), try_seed(3, i), 100),
                )
            })
            .find(|(_, r)| read_from(&r.trace) == 1)
            .unwrap();
        let _ = testkit::run(&mut s, &two_writes_one_read(), try_seed(3, r.0), 100);
        let fb = s.take_feedback().unwrap();
        let pairs: Vec<(Option<EvId>, EvId)> = fb
            .pairs
            .iter()
            .map(|(_, w, r)| (w.clone(), r.clone()))
            .collect();
        assert!(pairs.contains(&(Some(id(&[], X, 0)), id(&[1], X, 0))));
        assert_eq!(fb.writers[&X], vec![id(&[], X, 0), id(&[], X, 1)]);
    }

    #[test]
    fn the_corpus_keeps_runs_with_new_pairs_and_mutations_are_deterministic() {
        let mut s = Rff::with_constraints(Vec::new());
        let mut fbs = Vec::new();
        for i in 0..50 {
            testkit::run(&mut s, &two_writes_one_read(), try_seed(5, i), 100);
            fbs.push(s.take_feedback().unwrap());
        }
        let mut c = Corpus::new();
        let added = c.absorb(fbs.clone());
        // Three distinct reads-from pairs for B's read; A's second write reads nothing
        // (plain writes are not readers): at most 3 runs brought a new pair.
        assert!((1..=3).contains(&added), "{added}");
        assert_eq!(c.pairs(), 3);
        assert_eq!(c.runs(), 50);
        let a: Vec<_> = (0..20).map(|i| c.mutate(&mut Rng::new(i))).collect();
        let b: Vec<_> = (0..20).map(|i| c.mutate(&mut Rng::new(i))).collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|cs| !cs.is_empty()));
        // Every constraint is about B's read.
        for c in a.iter().flatten() {
            assert_eq!(c.read, id(&[1], X, 0));
        }
    }

    #[test]
    fn energy_favours_the_entry_with_the_rarest_pair() {
        let fb = |k: u64| Feedback {
            constraints: Vec::new(),
            pairs: vec![(k, None, id(&[1], X, 0))],
            writers: BTreeMap::new(),
        };
        let mut c = Corpus::new();
        // Pair 1 seen 9 times, pair 2 once: energies 1/9 and 1.
        c.absorb((0..9).map(|_| fb(1)).chain([fb(2)]));
        assert_eq!(c.len(), 2);
        assert_eq!(c.energy, vec![1.0 / 9.0, 1.0]);
        let mut rng = Rng::new(1);
        let n = 100_000;
        let hits = (0..n).filter(|_| pick(&mut rng, &c.energy) == 1).count() as u64;
        assert_ratio("rare entry", hits, n, 0.9);
    }
}
