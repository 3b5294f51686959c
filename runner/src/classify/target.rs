//! The races of a recorded run that `races --classify` reverses, the target sequence of one
//! reversal, and the check that a run realised it. Pure: works on recorded events only.
//!
//! - Data races (and conflicting atomics) come from [`RunOrder::races`]: conflicting memory
//!   accesses of different threads that synchronisation does not order.
//! - Synchronisation conflicts (`--sync`) are the DPOR races ([`Hb::races_of`]) between two
//!   synchronisation events: two acquisitions of one lock, two waits on one semaphore, two
//!   waiters of one signal, ... — the orders a lock or a semaphore leaves to the scheduler;
//!   plus the lock acquisition orders DPOR leaves out as not adjacent ([`acquisition_orders`]:
//!   a thread's acquisition before another thread's *earlier* critical section on the same
//!   lock, the check-then-lock window of a use-after-stop).
//! - The reversal of a race `(e, e')` is DPOR's `pre(E, e).notdep(e, E).e'` (see
//!   [`Hb::reversal`]), followed by `e` and then the rest of the run in its order: the guide
//!   follows it approximately (skipping what cannot run), so the part after `e'` is a hint.

use pos_sched::event::Event;
use pos_sched::explore::run_order::RunOrder;
use pos_sched::explore::trace::{acquired, thread_indices, Hb, Res, TEv};
use serde::Serialize;

use super::rule::Realised;

/// Which kind of conflict a race is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// At least one plain access: a data race.
    Data,
    /// Two atomic operations (never a data race, yet their order can matter).
    Atomic,
    /// Two synchronisation operations (`--sync`).
    Sync,
}

/// One race of the recorded run: event indices, `first` ran before `second`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub first: usize,
    pub second: usize,
    pub kind: Kind,
}

/// The memory races of the run (see the module doc), in run order.
pub fn memory_races(order: &RunOrder) -> Vec<Conflict> {
    order
        .races()
        .into_iter()
        .map(|(first, second)| {
            // An atomic operation is one with memory orders.
            let atomic = |i: usize| order.events[i].ev.op.orders().is_some();
            let both_atomic = atomic(first) && atomic(second);
            Conflict {
                first,
                second,
                kind: if both_atomic {
                    Kind::Atomic
                } else {
                    Kind::Data
                },
            }
        })
        .collect()
}

/// The synchronisation conflicts of the run (see the module doc), sorted by their events.
/// `initial`: threads existing at step 0.
pub fn sync_conflicts(hb: &Hb, initial: usize) -> Vec<Conflict> {
    let mut out = Vec::new();
    for j in 0..hb.len() {
        if hb.trace[j].ev.op.is_memory() {
            continue;
        }
        for i in hb.races_of(j, initial) {
            if !hb.trace[i].ev.op.is_memory() {
                out.push(Conflict {
                    first: i,
                    second: j,
                    kind: Kind::Sync,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.first, c.second));
    out
}

/// How a reversal continues after `e2, e`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rest {
    /// The rest of the recorded run in its order, approximately: the closest run to the
    /// recorded one. An event that cannot run where the order puts it (its thread waits for
    /// the lock the reversal handed over) is skipped, so its thread may fall behind.
    Recorded,
    /// The guide's default rule (lowest thread first), the rule that made the recorded run:
    /// the default schedule from the reversed state.
    Rule,
}

/// Lock acquisition orders beyond DPOR's adjacent pairs: for each acquisition `j` of an
/// object by thread `T`, every acquisition `i` of it by another thread since `T`'s previous
/// acquisition: reversing `(i, j)` lets `T` in before that critical section of the other
/// thread and everything after it (DPOR's race is with the last one only; a reader that
/// checks in one critical section and registers in the next needs the writer between the
/// two). Read-read pairs on a rwlock are left out.
pub fn acquisition_orders(events: &[TEv]) -> Vec<Conflict> {
    // Per resource: its acquisitions (a woken condition wait takes its mutex back: one too),
    // with whether each is a read acquisition (two of a rwlock do not conflict).
    let mut per_obj: std::collections::HashMap<Res, Vec<(usize, u32, bool)>> =
        std::collections::HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if let Some(r) = acquired(&e.ev.op) {
            per_obj.entry(r).or_default().push((i, e.tid(), e.reader));
        }
    }
    let mut out = Vec::new();
    for list in per_obj.values() {
        for (p, &(j, t, jread)) in list.iter().enumerate() {
            let since = list[..p]
                .iter()
                .rposition(|x| x.1 == t)
                .map_or(0, |q| q + 1);
            for &(i, u, iread) in &list[since..p] {
                if u != t && !(iread && jread) {
                    out.push(Conflict {
                        first: i,
                        second: j,
                        kind: Kind::Sync,
                    });
                }
            }
        }
    }
    out.sort_by_key(|c| (c.first, c.second));
    out
}

/// The target sequence of the reversal of `(e, e2)`, as event indices: the run before `e`;
/// then the events between `e` and `e2` that do not happen after `e` (in `hb`, which orders
/// by every dependency, memory included: DPOR's `notdep(e, E)`), and those that `e2` needs
/// (its predecessors in `order`, program order and synchronisation, that synchronisation
/// does not put after `e`); then `e2`, then `e`, then with [`Rest::Recorded`] everything
/// else in run order (with [`Rest::Rule`], nothing: the guide's rule goes on).
///
/// The second set is what a data race needs beyond DPOR's reversal: in a lost update
/// `r1 w1 r2 w2`, the race `(r1, w2)` is not adjacent (`r2` reads `w1`), and `w2` cannot run
/// before `r1` without `r2`. Each thread's events keep their order (both sets are closed
/// under program order towards `e2`), which the guide needs: it names target events by
/// their index in their thread; so a thread that has an event in the second set or is
/// `e2`'s has all its events before it there too.
pub fn reversal(hb: &Hb, order: &RunOrder, e: usize, e2: usize, rest: Rest) -> Vec<usize> {
    let mut out: Vec<usize> = (0..e).collect();
    let mut take: Vec<bool> = (e + 1..e2)
        .map(|k| !hb.hb(e, k) || (order.hb(k, e2) && !order.hb(e, k)))
        .collect();
    // Each thread's taken events must be a prefix of its events after `e`: also take the
    // thread's earlier events (a synchronisation conflict's second event may follow, in its
    // own thread, an event synchronisation put after `e`, e.g. a semaphore wait).
    let mut last: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    last.insert(hb.trace[e2].tid(), e2);
    for (x, k) in (e + 1..e2).enumerate() {
        if take[x] {
            let l = last.entry(hb.trace[k].tid()).or_insert(k);
            *l = (*l).max(k);
        }
    }
    for (x, k) in (e + 1..e2).enumerate() {
        if last.get(&hb.trace[k].tid()).is_some_and(|&l| k < l) {
            take[x] = true;
        }
    }
    out.extend((e + 1..e2).zip(&take).filter(|x| *x.1).map(|x| x.0));
    out.push(e2);
    out.push(e);
    if rest == Rest::Rule {
        return out;
    }
    let mut placed = vec![false; hb.len()];
    for &k in &out {
        placed[k] = true;
    }
    out.extend((0..hb.len()).filter(|&k| !placed[k]));
    out
}

/// [`reversal`] as the guide's target events.
pub fn reversal_events(hb: &Hb, order: &RunOrder, e: usize, e2: usize, rest: Rest) -> Vec<Event> {
    reversal(hb, order, e, e2, rest)
        .into_iter()
        .map(|k| hb.trace[k].ev)
        .collect()
}

/// Where the reversed run has the event that is `orig[at]` in the original run: the same
/// thread's event of the same index; `Err(why)` when it has none, or a different one (another
/// operation, object or instruction: the thread took another path). Events come with their
/// instrumented pc (0 when none).
pub fn find_event(
    orig: &[(Event, u64)],
    at: usize,
    new: &[(Event, u64)],
) -> Result<Option<usize>, String> {
    let (want, pc) = orig[at];
    let oi = thread_indices(&orig.iter().map(|x| x.0).collect::<Vec<_>>());
    let ni = thread_indices(&new.iter().map(|x| x.0).collect::<Vec<_>>());
    let Some(k) = (0..new.len()).find(|&k| new[k].0.tid == want.tid && ni[k] == oi[at]) else {
        return Ok(None);
    };
    let (got, gpc) = new[k];
    if got.op.name() != want.op.name() || got.objects() != want.objects() || gpc != pc {
        return Err(format!(
            "thread {}'s event {} is {got} [pc {gpc:#x}] instead of {want} [pc {pc:#x}]",
            want.tid,
            oi[at] + 1
        ));
    }
    Ok(Some(k))
}

/// Whether the run `new` realised the reversal of the race `(e, e2)` of the run `orig`: `e2`
/// ran, as itself, and `e` ran after it as itself or did not run at all (the run ended
/// first).
pub fn realised(orig: &[(Event, u64)], e: usize, e2: usize, new: &[(Event, u64)]) -> Realised {
    let second = match find_event(orig, e2, new) {
        Ok(Some(k)) => k,
        Ok(None) => return Realised::No(format!("the second event ({}) did not run", orig[e2].0)),
        Err(why) => return Realised::No(format!("the race changed: {why}")),
    };
    match find_event(orig, e, new) {
        Ok(Some(k)) if k < second => Realised::No(format!(
            "the first event ({}) still ran before the second ({})",
            orig[e].0, orig[e2].0
        )),
        Ok(_) => Realised::Yes,
        Err(why) => Realised::No(format!("the race changed: {why}")),
    }
}

/// The recorded events with their pcs: the guide's steps and the session's trace describe
/// the same run; a pc is taken where both agree on the event (0 otherwise).
pub fn with_pcs(steps: &[TEv], trace: &[(Event, u64)]) -> Vec<(Event, u64)> {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let pc = trace
                .get(i)
                .filter(|(ev, _)| *ev == s.ev)
                .map_or(0, |x| x.1);
            (s.ev, pc)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pos_sched::event::Op;
    use pos_sched::explore::tev::{create, ev, lock, r, unlock, w};

    /// main creates 1 and 2; 1 increments x unprotected (read, write), 2 too; 1 and 2 then
    /// take the lock once each; main joins and reads x.
    fn run() -> Vec<TEv> {
        vec![
            create(0, 1),    // 0
            create(0, 2),    // 1
            r(1, 100),       // 2
            w(1, 100),       // 3
            lock(1),         // 4
            unlock(1),       // 5
            ev(1, Op::Exit), // 6
            r(2, 100),       // 7
            w(2, 100),       // 8
            lock(2),         // 9
            unlock(2),       // 10
            ev(2, Op::Exit), // 11
            ev(0, Op::Join { target: 1 }),
            ev(0, Op::Join { target: 2 }),
            r(0, 100), // 14
        ]
    }

    #[test]
    fn memory_races_are_the_unsynchronised_conflicts() {
        let o = RunOrder::new(run());
        let pairs: Vec<(usize, usize)> = memory_races(&o)
            .iter()
            .map(|c| (c.first, c.second))
            .collect();
        assert_eq!(pairs, vec![(2, 8), (3, 7), (3, 8)]);
        assert!(memory_races(&o).iter().all(|c| c.kind == Kind::Data));
    }

    #[test]
    fn sync_conflicts_are_the_lock_acquisition_order() {
        let hb = Hb::new(run());
        let c = sync_conflicts(&hb, 1);
        assert_eq!(
            c,
            vec![Conflict {
                first: 4,
                second: 9,
                kind: Kind::Sync
            }]
        );
    }

    #[test]
    fn acquisition_orders_take_the_other_threads_acquisitions_since_the_last_own() {
        // Thread 1 takes the lock twice, then thread 2 once: DPOR's race is thread 1's
        // second lock with thread 2's; thread 2 can also go before thread 1's first.
        let run = vec![
            create(0, 1),
            create(0, 2),
            lock(1),   // 2
            unlock(1), // 3
            lock(1),   // 4
            unlock(1), // 5
            lock(2),   // 6
            unlock(2), // 7
        ];
        let pairs: Vec<(usize, usize)> = acquisition_orders(&run)
            .iter()
            .map(|c| (c.first, c.second))
            .collect();
        assert_eq!(pairs, vec![(2, 6), (4, 6)]);
        let dpor: Vec<(usize, usize)> = sync_conflicts(&Hb::new(run), 1)
            .iter()
            .map(|c| (c.first, c.second))
            .collect();
        assert_eq!(dpor, vec![(4, 6)]);
    }

    #[test]
    fn the_reversal_keeps_the_second_threads_events_before_it_even_when_synchronised_after_the_first(
    ) {
        let post = |t| ev(t, Op::SemPost { s: 5 });
        let wait = |t| ev(t, Op::SemWait { s: 5 });
        let run = vec![
            create(0, 1),
            create(0, 2),
            lock(1),          // 2
            post(1),          // 3
            unlock(1),        // 4
            ev(2, Op::Start), // 5
            wait(2),          // 6: after 3 in synchronisation
            lock(2),          // 7
            unlock(2),        // 8
        ];
        let hb = Hb::new(run.clone());
        let order = RunOrder::new(run);
        assert!(order.hb(2, 6));
        let t = reversal(&hb, &order, 2, 7, Rest::Recorded);
        assert_eq!(&t[..6], &[0, 1, 5, 6, 7, 2]);
    }

    #[test]
    fn the_reversal_runs_the_second_event_before_the_first_and_keeps_every_event() {
        let hb = Hb::new(run());
        let order = RunOrder::new(run());
        // Race (3, 7): thread 1's write, then thread 2's read.
        let t = reversal(&hb, &order, 3, 7, Rest::Recorded);
        let pos = |i| t.iter().position(|&x| x == i).unwrap();
        assert!(pos(7) < pos(3));
        assert_eq!(&t[..3], &[0, 1, 2], "the run before the first event");
        let mut sorted = t.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..hb.len()).collect::<Vec<_>>());
        // Up to e2 it is DPOR's reversal.
        let dpor: Vec<Event> = hb.reversal(3, 7, false).iter().map(|e| e.ev).collect();
        let ours = reversal_events(&hb, &order, 3, 7, Rest::Recorded);
        let short = reversal(&hb, &order, 3, 7, Rest::Rule);
        assert_eq!(short, t[..short.len()].to_vec());
        assert_eq!(short.last(), Some(&3), "the rule goes on after e2, e");
        assert_eq!(&ours[3..3 + dpor.len()], &dpor[..]);
    }

    #[test]
    fn the_reversal_of_a_non_adjacent_race_takes_what_the_second_event_needs() {
        let hb = Hb::new(run());
        let order = RunOrder::new(run());
        // Race (2, 8): thread 1's read, thread 2's write. Thread 2's read (7) reads thread
        // 1's write (3), so DPOR's notdep leaves it out; the write cannot run without it.
        assert!(hb.hb(2, 7));
        let t = reversal(&hb, &order, 2, 8, Rest::Recorded);
        assert_eq!(&t[..5], &[0, 1, 7, 8, 2]);
        // Every thread's events stay in program order.
        for tid in 0..3 {
            let mine: Vec<usize> = t
                .iter()
                .copied()
                .filter(|&k| hb.trace[k].tid() == tid)
                .collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "thread {tid}: {mine:?}"
            );
        }
    }

    fn pcs(v: &[TEv]) -> Vec<(Event, u64)> {
        v.iter()
            .enumerate()
            .map(|(i, e)| (e.ev, 0x1000 + i as u64))
            .collect()
    }

    #[test]
    fn a_reversal_is_realised_only_when_the_same_second_event_runs_first() {
        let orig = pcs(&run());
        // The same run again: not reversed.
        assert!(matches!(realised(&orig, 3, 7, &orig), Realised::No(_)));
        // Thread 2's read (with its pc) moved before thread 1's write.
        let mut new = orig.clone();
        let moved = new.remove(7);
        new.insert(3, moved);
        assert_eq!(realised(&orig, 3, 7, &new), Realised::Yes);
        // Thread 2's first event at another instruction: the race changed.
        let mut other = new.clone();
        other[3].1 = 0x9999;
        match realised(&orig, 3, 7, &other) {
            Realised::No(why) => assert!(why.contains("changed"), "{why}"),
            Realised::Yes => panic!("a different instruction is not the race"),
        }
        // Thread 2 never ran its read: not realised.
        let missing: Vec<(Event, u64)> = orig.iter().copied().filter(|x| x.0.tid != 2).collect();
        assert!(matches!(realised(&orig, 3, 7, &missing), Realised::No(_)));
        // The run ended after the second event, before the first: realised.
        let cut = new[..4].to_vec();
        assert_eq!(realised(&orig, 3, 7, &cut), Realised::Yes);
    }
}
