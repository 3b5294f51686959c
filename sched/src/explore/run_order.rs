//! The partial orders of one recorded run: its happens-before order, its races, and the
//! race-pruned order that the hitting families and R4 reorder.
//!
//! Happens-before here is the synchronisation order and nothing else: program order,
//! create → everything the child does, a thread's exit → its join, and release → later
//! acquire on the same object: unlock → lock (mutex, rwlock, and the mutex a condvar wait
//! gives up and takes back), post → wait (semaphore), signal/broadcast → woken wait (condvar),
//! arrival → leave (barrier), wake/requeue → woken wait (futex), end → begin (once). Every
//! acquire is ordered after *all* earlier releases of its object (object vector clocks, as in
//! FastTrack), which is exact for mutexes and a safe over-approximation for semaphores.
//! Atomic operations create no order: two conflicting atomics race, which is what lets the
//! reorderings of lock-free code be tried (R4, Jensen et al., OOPSLA'15 §3: the events a
//! schedule may reorder are the conflicting ones unordered by synchronisation).
//!
//! A race is a pair of conflicting memory accesses (plain or atomic, same bytes, at least one
//! write) of different threads that happens-before does not order. The pruned order keeps the
//! events that take part in a race, ordered by happens-before among themselves; a schedule of
//! it ([`RunOrder::complete`]) is turned back into a target sequence for the whole run.

use super::trace::{acquired, TEv};
use crate::event::{Obj, ObjKind, Op, Tid};
use crate::hitting::Order;
use crate::race::VClock;
use std::collections::HashMap;

/// Happens-before and races of one recorded run.
#[derive(Clone, Debug)]
pub struct RunOrder {
    pub events: Vec<TEv>,
    /// Per event: its vector clock (its thread's clock after the event).
    clocks: Vec<VClock>,
    /// Per event: its 1-based index among its thread's events.
    local: Vec<u32>,
}

/// How an operation synchronises on one of its objects.
fn releases(op: &Op, o: &Obj) -> bool {
    use Op::*;
    match op {
        Unlock { .. } | RwUnlock { .. } | SemPost { .. } | CondSignal { .. } => true,
        CondBroadcast { .. } | BarrierWait { .. } | FutexWake { .. } | FutexRequeue { .. } => true,
        OnceEnd { .. } => true,
        // A condvar wait gives up its mutex (and waits on the condvar: no release there).
        CondWait { .. } => o.kind == ObjKind::Mutex,
        _ => false,
    }
}

/// An acquire: an attempt to take a lock-like resource ([`acquired`]), a barrier leave, a
/// woken futex wait, the start of a once routine.
fn acquires(op: &Op) -> bool {
    use Op::*;
    acquired(op).is_some()
        || matches!(
            op,
            BarrierLeave { .. } | FutexWait { .. } | FutexRequeued { .. } | OnceBegin { .. }
        )
}

/// What a synchronisation operation does to its object (the first, or a wake's mutex), for [`RunOrder::sync_races`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Mutex acquisition, or a write acquisition of a read-write lock.
    Exclusive,
    /// Read acquisition of a read-write lock.
    Shared,
    SemWait,
    SemPost,
    CondWait,
    CondNotify,
}

impl Role {
    fn conflicts(self, other: Role) -> bool {
        use Role::*;
        matches!(
            (self, other),
            (Exclusive, Exclusive | Shared)
                | (Shared, Exclusive)
                | (SemWait, SemWait | SemPost)
                | (SemPost, SemWait)
                | (CondWait, CondNotify)
                | (CondNotify, CondWait)
        )
    }
}

fn sync_role(op: &Op) -> Option<(Obj, Role)> {
    use Op::*;
    let role = match op {
        Lock { .. } | TryLock { .. } | TimedLock { .. } => Role::Exclusive,
        WrLock { .. } | TryWrLock { .. } | TimedWrLock { .. } => Role::Exclusive,
        RdLock { .. } | TryRdLock { .. } | TimedRdLock { .. } => Role::Shared,
        SemWait { .. } | SemTryWait { .. } | SemTimedWait { .. } => Role::SemWait,
        SemPost { .. } => Role::SemPost,
        CondWait { .. } => Role::CondWait,
        CondSignal { .. } | CondBroadcast { .. } => Role::CondNotify,
        // The second half of a condition wait re-acquires the mutex: it competes with the
        // other threads' acquisitions (`cond_if`: the woken consumer and the other one, which
        // takes the item first when its lock runs before the wake).
        CondWake { .. } => return op.objects()[1].map(|m| (m, Role::Exclusive)),
        _ => return None,
    };
    op.objects()[0].map(|o| (o, role))
}

impl RunOrder {
    /// The orders of the run that executed `events` in this order (with their `child` facts,
    /// as the exploration guide records them).
    pub fn new(events: Vec<TEv>) -> Self {
        Self::build(events, true)
    }

    /// The order of the run without the edges of mutexes, read-write locks and semaphores
    /// (release → later acquire): program order, creation, joins, condition-variable wakes,
    /// barriers, once, futexes. Under it the order of two critical sections (of two
    /// semaphore operations) is not fixed, so [`RunOrder::sync_races`] can reorder them: the
    /// reorderings a program with synchronisation points only (`--points sync`) has.
    pub fn without_locks(events: Vec<TEv>) -> Self {
        Self::build(events, false)
    }

    fn build(events: Vec<TEv>, lock_edges: bool) -> Self {
        let counts = |o: &Obj| {
            lock_edges || !matches!(o.kind, ObjKind::Mutex | ObjKind::RwLock | ObjKind::Sem)
        };
        let mut thread: Vec<VClock> = Vec::new();
        let mut count: Vec<u32> = Vec::new();
        let mut objects: HashMap<(ObjKind, u64), VClock> = HashMap::new();
        let mut exits: HashMap<Tid, VClock> = HashMap::new();
        let mut clocks = Vec::with_capacity(events.len());
        let mut local = Vec::with_capacity(events.len());
        for e in &events {
            let t = e.tid() as usize;
            if thread.len() <= t {
                thread.resize(t + 1, VClock::default());
                count.resize(t + 1, 0);
            }
            thread[t].tick(e.tid());
            count[t] += 1;
            let op = &e.ev.op;
            if let Op::Join { target } | Op::TimedJoin { target, .. } | Op::TryJoin { target } = op
            {
                if let Some(c) = exits.get(target) {
                    thread[t].join(c);
                }
            }
            let syncs = || {
                op.objects()
                    .into_iter()
                    .flatten()
                    .filter(|o| o.kind != ObjKind::Mem && counts(o))
            };
            if acquires(op) {
                for o in syncs() {
                    if let Some(c) = objects.get(&(o.kind, o.addr)) {
                        thread[t].join(c);
                    }
                }
            }
            for o in syncs().filter(|o| releases(op, o)) {
                objects
                    .entry((o.kind, o.addr))
                    .or_default()
                    .join(&thread[t]);
            }
            if matches!(op, Op::Exit) {
                exits.insert(e.tid(), thread[t].clone());
            }
            if let Some(child) = e.child {
                let c = child as usize;
                if thread.len() <= c {
                    thread.resize(c + 1, VClock::default());
                    count.resize(c + 1, 0);
                }
                let parent = thread[t].clone();
                thread[c].join(&parent);
            }
            clocks.push(thread[t].clone());
            local.push(count[t]);
        }
        RunOrder {
            events,
            clocks,
            local,
        }
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Whether event `i` happens before event `j` (`i ≠ j`).
    pub fn hb(&self, i: usize, j: usize) -> bool {
        i < j && self.clocks[j].get(self.events[i].tid()) >= self.local[i]
    }

    /// The races: pairs `(i, j)`, `i < j` in the run, of conflicting memory accesses of
    /// different threads unordered by happens-before. Sorted.
    pub fn races(&self) -> Vec<(usize, usize)> {
        // Sweep the accesses by address so only overlapping ones are compared.
        let mut mem: Vec<(u64, u64, usize)> = self
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.ev.op.is_memory())
            .filter_map(|(i, e)| {
                let o = e.ev.op.objects()[0]?;
                Some((o.addr, o.addr + u64::from(o.size.max(1)), i))
            })
            .collect();
        mem.sort_unstable();
        let mut out = Vec::new();
        for (k, &(_, end, i)) in mem.iter().enumerate() {
            for &(start2, _, j) in &mem[k + 1..] {
                if start2 >= end {
                    break;
                }
                let (a, b) = (i.min(j), i.max(j));
                if self.events[a].ev.races_with(&self.events[b].ev, false) && !self.hb(a, b) {
                    out.push((a, b));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Conflicting synchronisation operations of different threads that this order leaves
    /// unordered, pairs `(i, j)`, `i < j`, sorted: two acquisitions of one mutex, two
    /// acquisitions of one read-write lock of which one writes, a semaphore wait and another
    /// wait or a post of that semaphore, a condition wait and a signal or broadcast of that
    /// condition. Meant for [`RunOrder::without_locks`], whose order leaves critical
    /// sections free; under [`RunOrder::new`] most such pairs are ordered.
    pub fn sync_races(&self) -> Vec<(usize, usize)> {
        let mut by_obj: HashMap<(ObjKind, u64), Vec<usize>> = HashMap::new();
        for (i, e) in self.events.iter().enumerate() {
            if let Some((o, _)) = sync_role(&e.ev.op) {
                by_obj.entry((o.kind, o.addr)).or_default().push(i);
            }
        }
        let mut out = Vec::new();
        for evs in by_obj.values() {
            for (x, &i) in evs.iter().enumerate() {
                for &j in &evs[x + 1..] {
                    let (a, b) = (&self.events[i], &self.events[j]);
                    if a.tid() == b.tid() || self.hb(i, j) {
                        continue;
                    }
                    if let (Some((_, ra)), Some((_, rb))) =
                        (sync_role(&a.ev.op), sync_role(&b.ev.op))
                    {
                        if ra.conflicts(rb) {
                            out.push((i, j));
                        }
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The events that take part in a race, in run order.
    pub fn racing_events(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.races().into_iter().flat_map(|(a, b)| [a, b]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Happens-before restricted to `kept` (event indices in run order), as an order on
    /// `0..kept.len()`.
    pub fn order_among(&self, kept: &[usize]) -> Order {
        let mut edges = Vec::new();
        for (x, &i) in kept.iter().enumerate() {
            for (y, &j) in kept.iter().enumerate().skip(x + 1) {
                if self.hb(i, j) {
                    edges.push((x, y));
                }
            }
        }
        Order::from_edges(kept.len(), &edges).expect("happens-before follows the run: acyclic")
    }

    /// The whole happens-before order.
    pub fn order(&self) -> Order {
        let all: Vec<usize> = (0..self.len()).collect();
        self.order_among(&all)
    }

    /// The race-pruned order: the racing events (returned, in run order) with happens-before.
    pub fn pruned(&self) -> (Vec<usize>, Order) {
        let kept = self.racing_events();
        let order = self.order_among(&kept);
        (kept, order)
    }

    /// A linearization of the whole run that runs the kept events in the order `schedule`
    /// (indices into `kept`, a linearization of [`RunOrder::order_among`]`(kept)`; returns
    /// event indices). Programs have hidden shared accesses (code between scheduling points),
    /// so the events the schedule does not order are placed where they do the least harm:
    /// - before each kept event, every event the recorded run had before it that needs no
    ///   kept event still to come (in run order): a thread that read a flag right after its
    ///   start in the run still does so before the schedule's next kept event;
    /// - after each kept event, its thread goes on up to its next kept event, as far as that
    ///   needs no kept event still to come: it leaves its critical section (its unlock is no
    ///   kept event) before the next kept event, which the order without lock edges
    ///   ([`RunOrder::without_locks`]) does not force — were the unlocks left for the end,
    ///   the next thread's lock could not be granted where the schedule puts it.
    pub fn complete(&self, kept: &[usize], schedule: &[usize]) -> Vec<usize> {
        let n = self.len();
        let mut is_kept = vec![false; n];
        for &k in kept {
            is_kept[k] = true;
        }
        // Per event: its kept predecessors not placed yet; per kept event: its successors.
        let mut waiting = vec![0u32; n];
        let mut succ: HashMap<usize, Vec<usize>> = HashMap::new();
        for &k in kept {
            let s: Vec<usize> = (k + 1..n).filter(|&f| self.hb(k, f)).collect();
            for &f in &s {
                waiting[f] += 1;
            }
            succ.insert(k, s);
        }
        let mut placed = vec![false; n];
        let mut out = Vec::with_capacity(n);
        // Place `e` after its predecessors not placed yet (none of them waits for a kept
        // event: the callers check `e`, and a predecessor's wait would be `e`'s too).
        let place = |e: usize, placed: &mut Vec<bool>, out: &mut Vec<usize>| {
            for (p, done) in placed.iter_mut().enumerate().take(e) {
                if !*done && self.hb(p, e) {
                    *done = true;
                    out.push(p);
                }
            }
            if !placed[e] {
                placed[e] = true;
                out.push(e);
            }
        };
        for &x in schedule {
            let e = kept[x];
            for f in 0..e {
                if !placed[f] && !is_kept[f] && waiting[f] == 0 {
                    place(f, &mut placed, &mut out);
                }
            }
            place(e, &mut placed, &mut out);
            for &f in succ.get(&e).map(Vec::as_slice).unwrap_or(&[]) {
                waiting[f] -= 1;
            }
            let t = self.events[e].tid();
            for f in (e + 1..n).filter(|&f| self.events[f].tid() == t) {
                if is_kept[f] || waiting[f] > 0 {
                    break;
                }
                place(f, &mut placed, &mut out);
            }
        }
        out.extend((0..n).filter(|&i| !placed[i]));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::tev::{create, ev, lock, r, unlock, w};
    use super::*;

    /// main creates 1 and 2; each writes x unprotected and y under a lock; main joins both
    /// and reads x.
    fn two_writers() -> Vec<TEv> {
        vec![
            create(0, 1),    // 0
            create(0, 2),    // 1
            w(1, 100),       // 2
            lock(1),         // 3
            w(1, 200),       // 4
            unlock(1),       // 5
            ev(1, Op::Exit), // 6
            w(2, 100),       // 7
            lock(2),         // 8
            w(2, 200),       // 9
            unlock(2),       // 10
            ev(2, Op::Exit), // 11
            ev(0, Op::Join { target: 1 }),
            ev(0, Op::Join { target: 2 }),
            r(0, 100), // 14
        ]
    }

    #[test]
    fn happens_before_follows_creation_locks_and_joins() {
        let o = RunOrder::new(two_writers());
        assert!(o.hb(0, 2), "create happens before the child's events");
        assert!(
            !o.hb(1, 2),
            "the second create does not order the first child"
        );
        assert!(o.hb(5, 8), "unlock before the next lock");
        assert!(o.hb(4, 9), "so the protected writes are ordered");
        assert!(!o.hb(2, 7), "the unprotected writes are not");
        assert!(o.hb(6, 12) && o.hb(7, 14), "exit → join → the read");
        assert!(!o.hb(7, 2), "only forwards");
    }

    #[test]
    fn races_are_the_unordered_conflicting_accesses_only() {
        let o = RunOrder::new(two_writers());
        assert_eq!(o.races(), vec![(2, 7)]);
        let (kept, order) = o.pruned();
        assert_eq!(kept, vec![2, 7]);
        assert!(order.is_antichain());
    }

    #[test]
    fn atomics_create_no_order_and_race_with_each_other() {
        let load = |t| {
            ev(
                t,
                Op::AtomicLoad {
                    addr: 8,
                    size: 8,
                    mo: Default::default(),
                },
            )
        };
        let rmw = |t| {
            ev(
                t,
                Op::AtomicRmw {
                    addr: 8,
                    size: 8,
                    mo: Default::default(),
                    fail: None,
                },
            )
        };
        let o = RunOrder::new(vec![create(0, 1), load(0), rmw(0), load(1), rmw(1)]);
        assert_eq!(o.races(), vec![(1, 4), (2, 3), (2, 4)]);
    }

    #[test]
    fn a_semaphore_post_orders_the_wait_after_it() {
        let post = |t| ev(t, Op::SemPost { s: 5 });
        let wait = |t| ev(t, Op::SemWait { s: 5 });
        let o = RunOrder::new(vec![create(0, 1), w(0, 1), post(0), wait(1), r(1, 1)]);
        assert!(o.hb(1, 4));
        assert!(o.races().is_empty());
    }

    #[test]
    fn a_condition_wake_competes_for_the_mutex_with_the_other_threads_locks() {
        // `cond_if`: thread 1 waits, main signals, thread 2 locks the mutex; whether 2's lock
        // runs before 1's wake (2 takes the item first) is a reordering of the run.
        let (c, m) = (7, 3);
        let o = RunOrder::without_locks(vec![
            create(0, 1),
            create(0, 2),
            ev(
                1,
                Op::Lock {
                    m,
                    kind: Default::default(),
                },
            ), // 2
            ev(1, Op::CondWait { c, m }), // 3
            ev(0, Op::CondSignal { c }),  // 4
            ev(
                1,
                Op::CondWake {
                    c,
                    m,
                    deadline: crate::event::NO_DEADLINE,
                },
            ), // 5
            ev(
                1,
                Op::Unlock {
                    m,
                    kind: Default::default(),
                },
            ),
            ev(
                2,
                Op::Lock {
                    m,
                    kind: Default::default(),
                },
            ), // 7
        ]);
        let races = o.sync_races();
        assert!(races.contains(&(5, 7)), "{races:?}");
        assert!(races.contains(&(2, 7)), "{races:?}");
        assert!(races.contains(&(3, 4)), "wait and signal: {races:?}");
        assert!(o.hb(4, 5), "the signal happens before the wake it causes");
    }

    #[test]
    fn completion_runs_each_kept_event_after_its_predecessors() {
        let o = RunOrder::new(two_writers());
        let (kept, _) = o.pruned();
        // Reverse the race: thread 2's write first.
        let full = o.complete(&kept, &[1, 0]);
        assert_eq!(full.len(), o.len());
        let pos = |i| full.iter().position(|&x| x == i).unwrap();
        assert!(pos(7) < pos(2));
        assert!(o.order().is_linearization(&full));
    }
}
