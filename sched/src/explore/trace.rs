//! Happens-before analysis of one executed trace: vector clocks, races, `notdep`, initials.
//!
//! Notation and definitions follow Abdulla, Aronis, Jonsson, Sagonas, "Optimal Dynamic Partial
//! Order Reduction", POPL'14 (§3 and §4): `e →E e'` is the happens-before relation induced by
//! the dependency relation, a race `e ⋖E e'` is a pair of dependent events of different threads
//! with no event in between in happens-before, `notdep(e, E)` is the subsequence of events after
//! `e` that do not happen after `e`, `I(w)` the initials and `WI(w)` the weak initials of `w`.

use crate::event::{Event, Op, Tid};
use crate::state::State;
use std::collections::HashMap;

/// An executed event plus the one fact the analysis needs beyond `(tid, op)`: for a create,
/// the child it created (a create happens before everything its child does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TEv {
    pub ev: Event,
    pub child: Option<Tid>,
}

impl TEv {
    pub fn new(ev: Event) -> Self {
        TEv { ev, child: None }
    }
    pub fn tid(&self) -> Tid {
        self.ev.tid
    }
}

/// The dependency relation used by every algorithm: [`Event::dependent`] (same thread, or same
/// object with a write), plus create → child, plus process exit, which ends every thread.
pub fn dependent(a: &TEv, b: &TEv) -> bool {
    a.ev.dependent(&b.ev)
        || matches!(a.ev.op, Op::ProcessExit { .. })
        || matches!(b.ev.op, Op::ProcessExit { .. })
        || a.child == Some(b.ev.tid)
        || b.child == Some(a.ev.tid)
}

/// A mutex acquisition that blocks while the mutex is held (lock, or the re-acquiring half of
/// a condition wait), with its mutex.
fn blocking_acquire(op: &Op) -> Option<u64> {
    match *op {
        Op::Lock { m, .. } | Op::CondWake { m, .. } => Some(m),
        _ => None,
    }
}

/// Any successful-or-not attempt to take mutex `m` that may own it afterwards.
fn acquires(op: &Op, m: u64) -> bool {
    match *op {
        Op::Lock { m: x, .. }
        | Op::TryLock { m: x, .. }
        | Op::TimedLock { m: x, .. }
        | Op::CondWake { m: x, .. } => x == m,
        _ => false,
    }
}

/// A release of mutex `m` (unlock, or the releasing half of a condition wait).
fn releases(op: &Op, m: u64) -> bool {
    match *op {
        Op::Unlock { m: x, .. } | Op::CondWait { m: x, .. } => x == m,
        _ => false,
    }
}

/// Initial semaphore values a trace needs: the largest excess of waits over posts.
pub fn infer_sem_init(trace: &[TEv]) -> HashMap<u64, u32> {
    let mut bal: HashMap<u64, i64> = HashMap::new();
    let mut need: HashMap<u64, u32> = HashMap::new();
    for t in trace {
        match t.ev.op {
            Op::SemPost { s } => *bal.entry(s).or_insert(0) += 1,
            Op::SemWait { s } => {
                let b = bal.entry(s).or_insert(0);
                *b -= 1;
                let n = need.entry(s).or_insert(0);
                *n = (*n).max((-*b).max(0) as u32);
            }
            _ => {}
        }
    }
    need
}

/// Barrier counts a trace implies: the arrivals at each barrier before its first departure
/// (`pthread_barrier_init` is a notification, not an event; the first generation is complete
/// exactly when the first waiter leaves).
pub fn infer_barrier_counts(trace: &[TEv]) -> HashMap<u64, u32> {
    let mut arrived: HashMap<u64, u32> = HashMap::new();
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for t in trace {
        match t.ev.op {
            Op::BarrierWait { b } if !counts.contains_key(&b) => {
                *arrived.entry(b).or_insert(0) += 1;
            }
            Op::BarrierLeave { b } => {
                let n = arrived.get(&b).copied().unwrap_or(1);
                counts.entry(b).or_insert(n);
            }
            _ => {}
        }
    }
    counts
}

/// Vector-clock happens-before of a trace.
pub struct Hb {
    pub trace: Vec<TEv>,
    /// 1-based index of each event within its thread.
    idx: Vec<u32>,
    /// Vector clock of each event (indexed by tid).
    vc: Vec<Vec<u32>>,
    /// Direct dependency predecessors of each event (earlier, dependent), latest first.
    preds: Vec<Vec<usize>>,
    /// Initial semaphore values the trace implies (not events, see [`infer_sem_init`]).
    sem_init: HashMap<u64, u32>,
    /// Barrier counts the trace implies (see [`infer_barrier_counts`]).
    barriers: HashMap<u64, u32>,
}

impl Hb {
    /// Compute the happens-before relation of `trace` (quadratic; traces are short).
    pub fn new(trace: Vec<TEv>) -> Self {
        let nthreads = trace
            .iter()
            .flat_map(|t| [Some(t.ev.tid), t.child])
            .flatten()
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut counts = vec![0u32; nthreads];
        let mut idx = Vec::with_capacity(trace.len());
        let mut vc: Vec<Vec<u32>> = Vec::with_capacity(trace.len());
        let mut preds = Vec::with_capacity(trace.len());
        for (j, e) in trace.iter().enumerate() {
            let t = e.tid() as usize;
            counts[t] += 1;
            idx.push(counts[t]);
            let mut clock = vec![0u32; nthreads];
            let mut p = Vec::new();
            for k in (0..j).rev() {
                if dependent(&trace[k], e) {
                    p.push(k);
                    for (c, &o) in clock.iter_mut().zip(&vc[k]) {
                        *c = (*c).max(o);
                    }
                }
            }
            clock[t] = counts[t];
            vc.push(clock);
            preds.push(p);
        }
        Hb {
            sem_init: infer_sem_init(&trace),
            barriers: infer_barrier_counts(&trace),
            trace,
            idx,
            vc,
            preds,
        }
    }

    pub fn len(&self) -> usize {
        self.trace.len()
    }

    pub fn is_empty(&self) -> bool {
        self.trace.is_empty()
    }

    /// `trace[i] →E trace[k]` (reflexive).
    #[inline]
    pub fn hb(&self, i: usize, k: usize) -> bool {
        let t = self.trace[i].tid() as usize;
        self.vc[k].get(t).copied().unwrap_or(0) >= self.idx[i]
    }

    /// Whether `i` happens before some direct predecessor of `j` later than `i`, ignoring
    /// those `skip` selects — then `i` and `j` are not adjacent in happens-before.
    fn covered(&self, i: usize, j: usize, skip: impl Fn(usize) -> bool) -> bool {
        self.preds[j]
            .iter()
            .take_while(|&&k| k > i)
            .any(|&k| !skip(k) && self.hb(i, k))
    }

    /// The races `(e, j)` whose second event is `j` (POPL'14 Def. of `⋖E`), restricted to
    /// pairs that may be co-enabled.
    ///
    /// Blocking acquisitions get one refinement (as in Nidhugg): a lock that waited for an
    /// unlock is in race with the *lock* that unlock released, since the unlock itself can
    /// never be reordered after the waiting lock. Likewise a condition wake races with the
    /// last wake of another waiter on the same condition since its own wait: both waited for
    /// the same signal, even when happens-before runs from the first wake to the second
    /// through a later broadcast (without this, readers-writers with 2 writers lost traces:
    /// 54 of DFS's 56 with 1 reader). Pairs that are not co-enabled (an exit and
    /// the join waiting for it, a create and its child, a post and the wait it enabled) are
    /// dropped by replaying `pre(E, e).notdep(e, E).e'` on the pure state machine (see
    /// [`Hb::feasible`]); `initial` is the number of threads existing at step 0.
    pub fn races_of(&self, j: usize, initial: usize) -> Vec<usize> {
        let ej = &self.trace[j];
        let mut out: Vec<usize> = Vec::new();
        for &i in &self.preds[j] {
            let ei = &self.trace[i];
            if ei.tid() == ej.tid() || ei.child == Some(ej.tid()) {
                continue;
            }
            if !self.covered(i, j, |_| false) {
                out.push(i);
            }
            if let Some(m) = blocking_acquire(&ej.ev.op) {
                if releases(&ei.ev.op, m) {
                    if let Some(a) = (0..i).rev().find(|&a| {
                        self.trace[a].tid() == ei.tid() && acquires(&self.trace[a].ev.op, m)
                    }) {
                        // The critical section `a..=i` moves as a whole: its own events
                        // do not separate `a` from `j` (a signal inside it that `j` really
                        // needs makes the reversal infeasible, which the replay detects).
                        let inside = |k: usize| k <= i && self.trace[k].tid() == ei.tid();
                        if !self.covered(a, j, inside) && !out.contains(&a) {
                            out.push(a);
                        }
                    }
                }
            }
        }
        // Two waiters competing for one signal: a wake that was only enabled later (by a
        // broadcast or signal that happens after the first wake) may still have taken the
        // first wake's signal; happens-before passes through that later enabler, so the pair
        // is not adjacent, yet reversing it is a different trace (as for two locks above).
        if let Op::CondWake { c, .. } = ej.ev.op {
            // The wait `j` completes: the last event of its thread before it.
            let wait = (0..j).rev().find(|&k| self.trace[k].tid() == ej.tid());
            let last = (wait.map_or(0, |w| w + 1)..j).rev().find(|&i| {
                let ei = &self.trace[i];
                ei.tid() != ej.tid() && matches!(ei.ev.op, Op::CondWake { c: x, .. } if x == c)
            });
            if let Some(i) = last.filter(|i| !out.contains(i)) {
                out.push(i);
            }
        }
        out.retain(|&i| self.feasible(i, j, initial));
        out.sort_unstable();
        out
    }

    /// `notdep(e, E).e'` for the race `(e, e')`: the events after `e` that do not happen after
    /// it, followed by `e'`. Source-DPOR (POPL'14 Alg. 1) takes the events before `e'` only;
    /// Optimal-DPOR (Alg. 2) the whole rest of the execution (`whole = true`).
    pub fn reversal(&self, e: usize, e2: usize, whole: bool) -> Vec<TEv> {
        let end = if whole { self.len() } else { e2 };
        let mut v: Vec<TEv> = (e + 1..end)
            .filter(|&k| k != e2 && !self.hb(e, k))
            .map(|k| self.trace[k])
            .collect();
        v.push(self.trace[e2]);
        v
    }

    /// Whether `pre(E, e).notdep(e, E).e'` (Optimal-DPOR's reversal, which contains
    /// Source-DPOR's) is an execution: every event enabled when its turn comes.
    fn feasible(&self, e: usize, e2: usize, initial: usize) -> bool {
        let mut s = State::with_initial_threads(initial.max(1));
        for (&sem, &v) in &self.sem_init {
            s.init_sem(sem, v);
        }
        for (&b, &count) in &self.barriers {
            s.init_barrier(b, count);
        }
        let seq = self.trace[..e]
            .iter()
            .copied()
            .chain(self.reversal(e, e2, true));
        for t in seq {
            if s.pending(t.tid()).is_none() && s.post(t.tid(), t.ev.op).is_err() {
                return false;
            }
            if !s.is_enabled(t.tid()) || s.execute(t.tid()).is_err() {
                return false;
            }
        }
        true
    }
}

/// Whether thread `p` is an initial of `w` (POPL'14 §3: `p ∈ I(w)`): it occurs in `w` and its
/// first event there does not happen after any earlier event of `w`. A direct-dependency check
/// suffices: a happens-before chain ending at that event ends with a direct dependency.
pub fn is_initial(w: &[TEv], p: Tid) -> bool {
    match w.iter().position(|e| e.tid() == p) {
        Some(k) => w[..k].iter().all(|x| !dependent(x, &w[k])),
        None => false,
    }
}

/// The initials of `w`, in order of first occurrence.
pub fn initials(w: &[TEv]) -> Vec<Tid> {
    let mut out: Vec<Tid> = Vec::new();
    for e in w {
        if !out.contains(&e.tid()) && is_initial(w, e.tid()) {
            out.push(e.tid());
        }
    }
    out
}

/// Whether the event `next` (the pending event of its thread in the current state) is a weak
/// initial of `w` (POPL'14 §6: `p ∈ WI(w)`): an initial of `w`, or a thread absent from `w`
/// whose next event is independent of all of `w`.
pub fn is_weak_initial(w: &[TEv], next: &TEv) -> bool {
    if w.iter().any(|e| e.tid() == next.tid()) {
        is_initial(w, next.tid())
    } else {
        w.iter().all(|x| !dependent(x, next))
    }
}

/// `w` without the first event of thread `p` (`w \ p`), or `w` unchanged if `p` is absent.
pub fn remove_first(w: &[TEv], p: Tid) -> Vec<TEv> {
    let mut out = w.to_vec();
    if let Some(k) = out.iter().position(|e| e.tid() == p) {
        out.remove(k);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MutexKind;

    fn ev(tid: Tid, op: Op) -> TEv {
        TEv::new(Event::new(tid, op))
    }
    fn w(tid: Tid, addr: u64) -> TEv {
        ev(tid, Op::Write { addr, size: 8 })
    }
    fn r(tid: Tid, addr: u64) -> TEv {
        ev(tid, Op::Read { addr, size: 8 })
    }
    fn lock(tid: Tid) -> TEv {
        ev(
            tid,
            Op::Lock {
                m: 1,
                kind: MutexKind::Normal,
            },
        )
    }
    fn unlock(tid: Tid) -> TEv {
        ev(
            tid,
            Op::Unlock {
                m: 1,
                kind: MutexKind::Normal,
            },
        )
    }

    #[test]
    fn adjacent_races_only() {
        // t0 writes x, t1 writes x, t2 writes x: races (0,1) and (1,2), not (0,2).
        let hb = Hb::new(vec![w(0, 8), w(1, 8), w(2, 8)]);
        assert_eq!(hb.races_of(1, 3), vec![0]);
        assert_eq!(hb.races_of(2, 3), vec![1]);
        assert!(hb.hb(0, 2));
        // Reads do not race with reads.
        let hb = Hb::new(vec![r(0, 8), r(1, 8), w(2, 8)]);
        assert!(hb.races_of(1, 3).is_empty());
        assert_eq!(hb.races_of(2, 3), vec![0, 1]);
    }

    #[test]
    fn a_waiting_lock_races_with_the_previous_lock_not_the_unlock() {
        let hb = Hb::new(vec![lock(0), w(0, 8), unlock(0), lock(1), unlock(1)]);
        assert_eq!(hb.races_of(3, 2), vec![0]);
        assert_eq!(hb.reversal(0, 3, true), vec![lock(1)]);
    }

    #[test]
    fn exit_and_join_are_not_co_enabled() {
        let mut create = ev(0, Op::Create);
        create.child = Some(1);
        let hb = Hb::new(vec![
            create,
            w(1, 8),
            ev(1, Op::Exit),
            ev(0, Op::Join { target: 1 }),
        ]);
        assert!(hb.races_of(3, 1).is_empty(), "join waits for the exit");
        assert!(
            hb.races_of(1, 1).is_empty(),
            "the child cannot run before its create"
        );
        assert!(hb.hb(0, 1));
    }

    #[test]
    fn barrier_arrivals_do_not_race_with_the_departures_they_enable() {
        let b = |t, op| ev(t, op);
        let trace = vec![
            b(1, Op::BarrierWait { b: 9 }),
            b(2, Op::BarrierWait { b: 9 }),
            b(1, Op::BarrierLeave { b: 9 }),
            b(2, Op::BarrierLeave { b: 9 }),
        ];
        assert_eq!(infer_barrier_counts(&trace).get(&9), Some(&2));
        let hb = Hb::new(trace);
        // t1 cannot leave before t2 arrives: that race is not reversible.
        assert!(hb.races_of(2, 3).is_empty());
        // The two arrivals may come in either order.
        assert_eq!(hb.races_of(1, 3), vec![0]);
    }

    #[test]
    fn two_waiters_race_for_one_signal() {
        let op = |t, op| ev(t, op);
        let (c, m) = (32, 1);
        let wake = |t| op(t, Op::CondWake { c, m, timed: false });
        let trace = vec![
            lock(1),
            op(1, Op::CondWait { c, m }),
            lock(2),
            op(2, Op::CondWait { c, m }),
            lock(3),
            op(3, Op::CondSignal { c }),
            unlock(3),
            wake(1),
            op(1, Op::CondBroadcast { c }),
            unlock(1),
            wake(2),
        ];
        let hb = Hb::new(trace);
        // t2's wake follows t1's through t1's broadcast and unlock, yet it could have taken
        // t3's signal instead of t1: the two wakes race.
        assert!(hb.hb(7, 10));
        assert!(hb.races_of(10, 4).contains(&7), "{:?}", hb.races_of(10, 4));
        assert_eq!(hb.reversal(7, 10, true), vec![wake(2)]);
    }

    #[test]
    fn initials_and_weak_initials() {
        let v = vec![w(1, 8), w(2, 16), r(3, 8)];
        assert_eq!(initials(&v), vec![1, 2]);
        assert!(is_weak_initial(&v, &w(4, 24)), "absent and independent");
        assert!(!is_weak_initial(&v, &w(4, 16)), "absent but dependent");
        assert!(!is_weak_initial(&v, &r(3, 8)));
        assert_eq!(remove_first(&v, 2), vec![w(1, 8), r(3, 8)]);
    }
}
