//! Partial orders (Mazurkiewicz traces) of a program: their canonical form, their
//! enumeration, and the exact probability of each under random walk.
//!
//! Two runs are equivalent when they order every pair of *dependent* events the same way
//! (Mazurkiewicz 1987; the POS paper, Yuan et al. CAV'18, §2, calls the classes partial
//! orders). Dependence is [`Event::dependent`] (same object, at least one write; reads of one
//! variable commute), plus the causal edge from a `create` to the child's first event.
//! Since a thread's events are fixed, a run's class is determined by how many events each
//! thread executed (a run may stop early at a deadlock) and, for each dependent pair of
//! events of different threads, which came first: that is the [`OrderKey`].

use super::exec::{Cursor, Events, SimError};
use super::program::{EventRef, Program};
use crate::event::{Event, Op, Tid};
use crate::state::State;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A hash map with a fixed hasher, so that iteration (and float summation) order is
/// deterministic from run to run.
pub type FixedMap<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

/// The dependent pairs of a program's events, numbered for the bitset of [`OrderKey`].
#[derive(Clone, Debug)]
pub struct Deps {
    /// For each event `e`: the dependent events `x < e` of other threads, with the bit that
    /// records "`x` ran before `e`".
    earlier: Vec<Vec<(usize, usize)>>,
    /// Same-thread predecessor links are implicit; these are all dependency edges `(x, e)`
    /// with `x < e` (global numbering), cross-thread, with their bit.
    pairs: Vec<(usize, usize)>,
    words: usize,
}

impl Deps {
    pub fn new(events: &Events) -> Deps {
        let list = &events.list;
        let ev = |i: usize| Event::new(list[i].thread as Tid, list[i].op);
        let mut earlier = vec![Vec::new(); list.len()];
        let mut pairs = Vec::new();
        for e in 0..list.len() {
            for x in 0..e {
                if list[x].thread == list[e].thread {
                    continue;
                }
                let creates = |a: usize, b: usize| {
                    list[a].creates == Some(list[b].thread) && list[b].index == 0
                };
                if ev(x).dependent(&ev(e)) || creates(x, e) || creates(e, x) {
                    earlier[e].push((x, pairs.len()));
                    pairs.push((x, e));
                }
            }
        }
        let words = pairs.len().div_ceil(64).max(1);
        Deps {
            earlier,
            pairs,
            words,
        }
    }

    /// Number of dependent cross-thread pairs.
    pub fn num_pairs(&self) -> usize {
        self.pairs.len()
    }
}

/// Canonical form of a partial order: events executed per thread, and for every dependent
/// cross-thread pair `(x, e)` with `x < e` whose events both ran, bit set iff `x` ran first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrderKey {
    pub executed: Vec<u16>,
    pub bits: Vec<u64>,
}

impl OrderKey {
    pub fn empty(events: &Events, deps: &Deps) -> OrderKey {
        OrderKey {
            executed: vec![0; events.len.len()],
            bits: vec![0; deps.words],
        }
    }

    /// Record that `thread` executed its next event (global id `e`).
    pub fn push(&mut self, deps: &Deps, events: &Events, e: usize) {
        for &(x, bit) in &deps.earlier[e] {
            let sx = &events.list[x];
            if (self.executed[sx.thread] as usize) > sx.index {
                self.bits[bit / 64] |= 1 << (bit % 64);
            }
        }
        self.executed[events.list[e].thread] += 1;
    }

    /// The key of a complete run.
    pub fn of_run(deps: &Deps, events: &Events, executed: &[(usize, usize)]) -> OrderKey {
        let mut k = OrderKey::empty(events, deps);
        for &(t, i) in executed {
            k.push(deps, events, events.id(t, i));
        }
        k
    }

    fn ran(&self, events: &Events, e: usize) -> bool {
        let s = &events.list[e];
        (self.executed[s.thread] as usize) > s.index
    }

    fn bit(&self, b: usize) -> bool {
        self.bits[b / 64] >> (b % 64) & 1 == 1
    }

    /// The lexicographically least linearization (smallest thread index first whenever
    /// several events may come next): a stable representative of the order.
    pub fn linearize(&self, deps: &Deps, events: &Events) -> Vec<usize> {
        let n = events.list.len();
        // preds[e]: events that must precede e (cross-thread); program order is implicit.
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, &(x, e)) in deps.pairs.iter().enumerate() {
            if self.ran(events, x) && self.ran(events, e) {
                if self.bit(b) {
                    preds[e].push(x);
                } else {
                    preds[x].push(e);
                }
            }
        }
        let mut done = vec![false; n];
        let mut pc = vec![0usize; events.len.len()];
        let mut out = Vec::new();
        'step: loop {
            for (t, pct) in pc.iter_mut().enumerate() {
                if *pct < self.executed[t] as usize {
                    let e = events.id(t, *pct);
                    if preds[e].iter().all(|&x| done[x]) {
                        done[e] = true;
                        *pct += 1;
                        out.push(e);
                        continue 'step;
                    }
                }
            }
            break;
        }
        out
    }
}

/// Happens-before of an order, from one of its linearizations: `a` happens before `b` iff a
/// chain of dependent events (program order, create edges, dependent pairs) leads from `a`
/// to `b`.
pub fn happens_before(deps: &Deps, events: &Events, lin: &[usize]) -> Vec<Vec<bool>> {
    let n = events.list.len();
    let mut dep = vec![vec![false; n]; n];
    for &(x, e) in &deps.pairs {
        dep[x][e] = true;
        dep[e][x] = true;
    }
    // hb[e][x]: x happens before e (a row per event: its set of predecessors).
    let mut hb = vec![vec![false; n]; n];
    for (i, &e) in lin.iter().enumerate() {
        for &x in &lin[..i] {
            if dep[x][e] || events.list[x].thread == events.list[e].thread {
                let px = hb[x].clone();
                let row = &mut hb[e];
                row[x] = true;
                for (r, q) in row.iter_mut().zip(px) {
                    *r |= q;
                }
            }
        }
    }
    // Transpose to hb[a][b]: a happens before b.
    let mut out = vec![vec![false; n]; n];
    for (b, row) in hb.iter().enumerate() {
        for (a, &v) in row.iter().enumerate() {
            out[a][b] = v;
        }
    }
    out
}

/// One partial order of a program, with what a report needs about it.
#[derive(Clone, Debug)]
pub struct Order {
    pub key: OrderKey,
    /// Its least linearization, as (thread, index) pairs.
    pub linearization: Vec<(usize, usize)>,
    /// Runs of this order end in a deadlock.
    pub deadlock: bool,
    /// The program's `bug:` condition holds in this order.
    pub bug: bool,
    /// Exact probability under random walk.
    pub rw: f64,
}

/// All partial orders of a program, in the order of their least linearizations.
#[derive(Clone, Debug)]
pub struct Orders {
    pub events: Events,
    pub deps: Deps,
    pub orders: Vec<Order>,
    index: FixedMap<OrderKey, usize>,
    /// Distinct trace prefixes the enumeration visited.
    pub prefixes: usize,
}

/// The enumeration needs more than the allowed number of trace prefixes.
pub const DEFAULT_MAX_PREFIXES: usize = 2_000_000;

struct Node {
    state: State,
    cursor: Cursor,
    p: f64,
}

impl Orders {
    /// Enumerate every partial order of `p` and its exact probability under random walk, by
    /// dynamic programming over trace prefixes: the state after a prefix depends only on the
    /// prefix's partial order, so prefixes are merged by [`OrderKey`]; random walk splits a
    /// prefix's probability uniformly among its enabled events. Level `k` holds the prefixes
    /// of `k` events; a prefix with no enabled event is a complete run. (Two creates by
    /// different threads commute, yet hand out tids in execution order: merged prefixes may
    /// then differ in tid numbering only, which random walk does not see.)
    pub fn enumerate(p: &Program, max_prefixes: usize) -> Result<Orders, SimError> {
        let events = Events::new(p);
        let deps = Deps::new(&events);
        let mut state = Cursor::initial_state(p);
        let cursor = Cursor::start(p, &mut state)?;
        let mut level: FixedMap<OrderKey, Node> = FixedMap::default();
        level.insert(
            OrderKey::empty(&events, &deps),
            Node {
                state,
                cursor,
                p: 1.0,
            },
        );
        let mut finals: FixedMap<OrderKey, (f64, bool)> = FixedMap::default();
        let mut prefixes = 1usize;
        let mut enabled = Vec::new();
        while !level.is_empty() {
            let mut next: FixedMap<OrderKey, Node> = FixedMap::default();
            let mut keys: Vec<&OrderKey> = level.keys().collect();
            keys.sort_unstable();
            for key in keys {
                let node = &level[key];
                node.state.enabled_into(&mut enabled);
                if enabled.is_empty() {
                    let deadlock = node.state.deadlock().is_some();
                    finals.entry(key.clone()).or_insert((0.0, deadlock)).0 += node.p;
                    continue;
                }
                let share = node.p / enabled.len() as f64;
                for ev in &enabled {
                    let mut state = node.state.clone();
                    let mut cursor = node.cursor.clone();
                    let done = state.execute(ev.tid)?;
                    let (t, i) = cursor.granted(p, ev.tid, ev.op, done.child, &mut state)?;
                    let mut k = key.clone();
                    k.push(&deps, &events, events.id(t, i));
                    match next.get_mut(&k) {
                        Some(n) => n.p += share,
                        None => {
                            prefixes += 1;
                            if prefixes > max_prefixes {
                                return Err(SimError(format!(
                                    "more than {max_prefixes} trace prefixes: program too large \
                                     for exhaustive enumeration"
                                )));
                            }
                            next.insert(
                                k,
                                Node {
                                    state,
                                    cursor,
                                    p: share,
                                },
                            );
                        }
                    }
                }
            }
            level = next;
        }
        let mut orders: Vec<Order> = finals
            .into_iter()
            .map(|(key, (rw, deadlock))| {
                let lin = key.linearize(&deps, &events);
                let bug = !p.bug.is_empty() && {
                    let hb = happens_before(&deps, &events, &lin);
                    let id = |r: EventRef| events.id(r.thread, r.index);
                    p.bug.iter().all(|&(a, b)| hb[id(a)][id(b)])
                };
                let linearization = lin
                    .iter()
                    .map(|&e| (events.list[e].thread, events.list[e].index))
                    .collect();
                Order {
                    key,
                    linearization,
                    deadlock,
                    bug,
                    rw,
                }
            })
            .collect();
        orders.sort_by(|a, b| a.linearization.cmp(&b.linearization));
        let index = orders
            .iter()
            .enumerate()
            .map(|(i, o)| (o.key.clone(), i))
            .collect();
        Ok(Orders {
            events,
            deps,
            orders,
            index,
            prefixes,
        })
    }

    pub fn len(&self) -> usize {
        self.orders.len()
    }

    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    /// The order a complete run belongs to.
    pub fn classify(&self, executed: &[(usize, usize)]) -> Option<usize> {
        let k = OrderKey::of_run(&self.deps, &self.events, executed);
        self.index.get(&k).copied()
    }

    /// Human-readable linearization: `B.1 A.1 B.2` (synthesized exits print as `A.exit`).
    pub fn describe(&self, p: &Program, order: usize) -> String {
        let parts: Vec<String> = self.orders[order]
            .linearization
            .iter()
            .map(|&(t, i)| {
                if i < p.threads[t].body.len() {
                    p.label(EventRef {
                        thread: t,
                        index: i,
                    })
                } else {
                    let e = &self.events.list[self.events.id(t, i)];
                    let what = if matches!(e.op, Op::ProcessExit { .. }) {
                        "exit(0)"
                    } else {
                        "exit"
                    };
                    format!("{}.{what}", p.threads[t].name)
                }
            })
            .collect();
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> usize {
        Orders::enumerate(&Program::parse(text).unwrap(), 100_000)
            .unwrap()
            .len()
    }

    fn exact(text: &str) -> Orders {
        Orders::enumerate(&Program::parse(text).unwrap(), 100_000).unwrap()
    }

    #[test]
    fn partial_order_counts_match_hand_computed_values() {
        // Independent events: one order whatever the interleaving.
        assert_eq!(count("thread A: write x\nthread B: write y"), 1);
        // Reads commute: one order.
        assert_eq!(count("thread A: read x\nthread B: read x"), 1);
        // One conflicting pair: two orders.
        assert_eq!(count("thread A: read x\nthread B: write y; write x"), 2);
        // A's write relative to B's two writes: before, between, after.
        assert_eq!(count("thread A: write x\nthread B: write x; write x"), 3);
        // Two threads of n writes each to one variable: C(2n, n) interleavings, all distinct.
        assert_eq!(
            count("thread A: write x; write x\nthread B: write x; write x"),
            6
        );
        // Three single writes to one variable: 3! orders.
        assert_eq!(
            count("thread A: write x\nthread B: write x\nthread C: write x"),
            6
        );
        // Two variables, A: x y, B: y x: the pairs (Ax,Bx), (Ay,By) can be ordered
        // independently except the cyclic choice (Bx<Ax and Ay<By? Ay after Ax, Bx after By:
        // Bx<Ax<Ay and Ay<By<Bx is a cycle), so 4 - 1 = 3.
        assert_eq!(
            count("thread A: write x; write y\nthread B: write y; write x"),
            3
        );
        // A critical section per thread: two orders (who locks first), no deadlock.
        assert_eq!(
            count("thread A: lock m; unlock m\nthread B: lock m; unlock m"),
            2
        );
        // Lock inversion: two complete orders plus the deadlock.
        let o = exact("thread A: lock m; lock n; unlock n; unlock m\nthread B: lock n; lock m; unlock m; unlock n");
        assert_eq!(o.len(), 3);
        assert_eq!(o.orders.iter().filter(|x| x.deadlock).count(), 1);
        // Real mode: create/join add no orders; one conflicting pair gives two.
        assert_eq!(
            count("thread main: create A; create B; join A; join B\nthread A: write x\nthread B: read x"),
            2
        );
    }

    #[test]
    fn exact_random_walk_probabilities() {
        // delay-m (POS paper, §2): A's read is delayed past all of B's m events with 1/2^m.
        let o = exact(
            "thread A: read x\nthread B: write y1; write y2; write y3; write y4; write y5; \
             write y6; write x\nbug: B.7 < A.1",
        );
        assert_eq!(o.len(), 2);
        let bug: Vec<&Order> = o.orders.iter().filter(|x| x.bug).collect();
        assert_eq!(bug.len(), 1);
        assert!((bug[0].rw - 1.0 / 128.0).abs() < 1e-12);
        let total: f64 = o.orders.iter().map(|x| x.rw).sum();
        assert!((total - 1.0).abs() < 1e-12);
        // race-twice: A between B's two writes with 1/2 * 1/2.
        let o = exact("thread A: write x\nthread B: write x; write x\nbug: B.1 < A.1, A.1 < B.2");
        let mid = o.orders.iter().find(|x| x.bug).unwrap();
        assert!((mid.rw - 0.25).abs() < 1e-12);
        assert_eq!(
            o.describe(
                &Program::parse("thread A: write x\nthread B: write x; write x").unwrap(),
                1
            ),
            "B.1 A.1 B.2"
        );
    }

    /// Every interleaving, by plain DFS, with its random-walk probability.
    fn brute_force(
        p: &Program,
        o: &Orders,
        state: State,
        cursor: Cursor,
        run: &mut Vec<(usize, usize)>,
        prob: f64,
        out: &mut FixedMap<OrderKey, f64>,
    ) {
        let enabled = state.enabled();
        if enabled.is_empty() {
            let k = OrderKey::of_run(&o.deps, &o.events, run);
            *out.entry(k).or_insert(0.0) += prob;
            return;
        }
        for ev in &enabled {
            let mut s = state.clone();
            let mut c = cursor.clone();
            let done = s.execute(ev.tid).unwrap();
            run.push(c.granted(p, ev.tid, ev.op, done.child, &mut s).unwrap());
            let share = prob / enabled.len() as f64;
            brute_force(p, o, s, c, run, share, out);
            run.pop();
        }
    }

    #[test]
    fn dynamic_programming_agrees_with_brute_force() {
        let programs = [
            "thread A: write x; lock m; write y; unlock m\nthread B: lock m; read y; unlock m; read x\nthread C: write x; write y",
            "thread A: wait w; write x; signal v\nthread B: write x; signal w; wait v\nthread C: read x",
            "sem s = 1\nthread main: create A; create B; write x; join B; join A\nthread A: wait s; read x; signal s\nthread B: create C; wait s; write x; signal s; join C\nthread C: write x",
            "thread A: lock m; lock n; unlock n; unlock m\nthread B: lock n; lock m; unlock m; unlock n\nthread C: write x; read x",
        ];
        for text in programs {
            let p = Program::parse(text).unwrap();
            let o = Orders::enumerate(&p, 1_000_000).unwrap();
            let mut state = Cursor::initial_state(&p);
            let cursor = Cursor::start(&p, &mut state).unwrap();
            let mut all = FixedMap::default();
            brute_force(&p, &o, state, cursor, &mut Vec::new(), 1.0, &mut all);
            assert_eq!(all.len(), o.len(), "{text}");
            for order in &o.orders {
                let q = all[&order.key];
                assert!((q - order.rw).abs() < 1e-12, "{text}: {q} vs {}", order.rw);
            }
        }
    }

    #[test]
    fn classify_agrees_with_enumeration() {
        let p = Program::parse("thread A: write x; read y\nthread B: write y; read x; lock m; unlock m\nthread C: lock m; write x; unlock m").unwrap();
        let o = Orders::enumerate(&p, 100_000).unwrap();
        let mut rw = crate::strategy::rw::RandomWalk::new();
        let mut seen = vec![false; o.len()];
        for seed in 0..2000 {
            let r = super::super::exec::run_once(&p, &o.events, &mut rw, seed).unwrap();
            let i = o.classify(&r.executed).expect("every run is in some order");
            seen[i] = true;
        }
        // An order of probability >= 1% is missed by 2000 runs with probability < 2e-9.
        for (x, s) in o.orders.iter().zip(&seen) {
            assert!(*s || x.rw < 0.01, "order of probability {} never hit", x.rw);
        }
    }
}
