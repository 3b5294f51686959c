//! The second level of `races --classify` (`--depth 2`): a race whose reversal alone is
//! harmless is tried together with one other race. As in R4's report phase (Jensen, Møller,
//! Raychev, Dimitrov, Vechev, OOPSLA'15, §5), where a race is reversed in the context of an
//! explored execution, race B is reversed in the run that reversing race A realised: its
//! target is built from that run's own events, happens-before and races, exactly as the first
//! level builds one from the recorded run ([`super::target::reversal`]).
//!
//! This module holds the pure part: which races of A's run are tried ([`candidates`]), which
//! site pair of the recorded run a race of A's run is ([`group_of`]), and when the final run
//! counts as realising the pair ([`both`]: A still reversed with respect to the recorded run
//! and B with respect to A's run). A pair whose final run differs from the recorded one is
//! "harmful together"; the single-reversal classes are not changed by it.

use super::rule::Realised;
use super::target::{find_event, Conflict};
use pos_sched::event::Event;

/// The pair's final run realised it when both reversals hold in it: A with respect to the
/// recorded run, B with respect to A's run. The first failure, in words, otherwise.
pub fn both(a: Realised, b: Realised) -> Realised {
    match (a, b) {
        (Realised::Yes, Realised::Yes) => Realised::Yes,
        (Realised::No(why), _) => Realised::No(format!("the first race is undone: {why}")),
        (_, Realised::No(why)) => Realised::No(why),
    }
}

/// The races of A's run tried together with A: of each site pair, the races at the ranks
/// `ranks` of its list (rank 0 is the widest, see [`super::group`]), rank by rank, and per
/// rank in the order of the groups (the first level tries rank 0 of every group for every
/// race A before any other rank, so that the budget reaches every A). Left out: A itself, back
/// in its recorded order (the race between A's two events, reversing it undoes A), and the
/// races of a site pair the recorded run has as a group with a race harmful alone (`skip`
/// returns true for it: the pair would add nothing to what that race already says).
///
/// `groups`: A's run's races per site pair; `a`: A's two events in A's run (`None` where
/// an event is not there).
pub fn candidates(
    groups: &[Vec<Conflict>],
    a: (Option<usize>, Option<usize>),
    ranks: std::ops::Range<usize>,
    mut skip: impl FnMut(usize) -> bool,
) -> Vec<Conflict> {
    let undo = |c: &Conflict| {
        let mine = [Some(c.first), Some(c.second)];
        mine.contains(&a.0) && mine.contains(&a.1)
    };
    let kept: Vec<Vec<Conflict>> = groups
        .iter()
        .enumerate()
        .filter(|(g, _)| !skip(*g))
        .map(|(_, list)| list.iter().filter(|c| !undo(c)).copied().collect())
        .collect();
    ranks
        .flat_map(|r| kept.iter().filter_map(move |list| list.get(r).copied()))
        .collect()
}

/// Where A's run has the recorded run's event `at` (same thread, same index in it, same
/// operation, object and instruction), if it ran.
pub fn locate(orig: &[(Event, u64)], at: usize, run: &[(Event, u64)]) -> Option<usize> {
    find_event(orig, at, run).ok().flatten()
}

/// The recorded run's group of a race of A's run: the one with the same key (kind, sites,
/// object); `None` for a race only A's run has.
pub fn group_of<K: PartialEq>(key: &K, recorded: &[K]) -> Option<usize> {
    recorded.iter().position(|k| k == key)
}

#[cfg(test)]
mod tests {
    use super::super::target::{realised, reversal, Kind, Rest};
    use super::*;
    use pos_sched::event::{MutexKind, Op, Tid};
    use pos_sched::explore::run_order::RunOrder;
    use pos_sched::explore::trace::{Hb, TEv};

    fn lock_op(m: u64, take: bool) -> Op {
        let kind = MutexKind::Normal;
        if take {
            Op::Lock { m, kind }
        } else {
            Op::Unlock { m, kind }
        }
    }

    /// Thread `tid` of a ring of three: lock m(tid-1), lock m(tid mod 3), unlock both.
    fn teller(tid: Tid) -> Vec<TEv> {
        let (a, b) = (100 + u64::from(tid) - 1, 100 + u64::from(tid % 3));
        [(a, true), (b, true), (b, false), (a, false)]
            .into_iter()
            .map(|(m, take)| TEv::new(Event::new(tid, lock_op(m, take))))
            .collect()
    }

    fn creates() -> Vec<TEv> {
        (1..=3)
            .map(|c| {
                let mut e = TEv::new(Event::new(0, Op::Create));
                e.child = Some(c);
                e
            })
            .collect()
    }

    fn pcs(run: &[TEv]) -> Vec<(Event, u64)> {
        run.iter().map(|e| (e.ev, 0)).collect()
    }

    #[test]
    fn the_second_race_is_reversed_in_the_first_ones_run_and_both_hold_in_the_deadlock() {
        // Recorded: the three tellers one after the other (events 3-6, 7-10, 11-14).
        let mut rec = creates();
        for t in 1..=3 {
            rec.extend(teller(t));
        }
        // A = (4, 7): teller 2 takes m1 before teller 1's second lock. Its run: teller 1
        // holds m0, teller 2 goes through, then teller 1, then teller 3.
        let mut run_a = creates();
        let (t1, t2) = (teller(1), teller(2));
        run_a.push(t1[0]);
        run_a.extend(t2.iter().copied());
        run_a.extend(t1[1..].iter().copied());
        run_a.extend(teller(3));
        assert_eq!(
            realised(&pcs(&rec), 4, 7, &pcs(&run_a)),
            Realised::Yes,
            "A's run realises A"
        );
        // B = (5, 11) in A's run: teller 3 takes m2 before teller 2's second lock.
        let (hb, order) = (Hb::new(run_a.clone()), RunOrder::new(run_a.clone()));
        let target = reversal(&hb, &order, 5, 11, Rest::Recorded);
        assert_eq!(
            &target[..7],
            &[0, 1, 2, 3, 4, 11, 5],
            "A's order kept, then B's"
        );
        // The run following it: each teller holds its first lock and waits for the next.
        let fin: Vec<TEv> = target[..6].iter().map(|&k| run_a[k]).collect();
        let pair = both(
            realised(&pcs(&rec), 4, 7, &pcs(&fin)),
            realised(&pcs(&run_a), 5, 11, &pcs(&fin)),
        );
        assert_eq!(pair, Realised::Yes);
        // The same race B reversed in the recorded run (8, 11) undoes A: teller 1 ran
        // both its locks before it. That is why B's target comes from A's run.
        let (hb0, order0) = (Hb::new(rec.clone()), RunOrder::new(rec.clone()));
        let t0 = reversal(&hb0, &order0, 8, 11, Rest::Recorded);
        let pos = |k| t0.iter().position(|&x| x == k).unwrap();
        assert!(pos(4) < pos(7), "A back in its recorded order: {t0:?}");
    }

    fn c(first: usize, second: usize) -> Conflict {
        Conflict {
            first,
            second,
            kind: Kind::Sync,
        }
    }

    #[test]
    fn a_pair_is_realised_only_when_both_reversals_hold() {
        let no = |w: &str| Realised::No(w.into());
        assert_eq!(both(Realised::Yes, Realised::Yes), Realised::Yes);
        assert_eq!(
            both(no("x ran before y"), Realised::Yes),
            no("the first race is undone: x ran before y")
        );
        assert_eq!(
            both(Realised::Yes, no("z did not run")),
            no("z did not run")
        );
        assert!(matches!(both(no("a"), no("b")), Realised::No(w) if w.contains("undone")));
    }

    #[test]
    fn candidates_go_rank_by_rank_over_the_site_pairs_without_the_first_race_undone() {
        // A's events are 4 and 7 in A's run. Group 0's first race is A undone: its next
        // race is taken. Group 1 is harmful alone in the recorded run: skipped. Group 2 has
        // one race, taken.
        let groups = vec![
            vec![c(4, 7), c(2, 7)],
            vec![c(1, 3)],
            vec![c(7, 9), c(8, 9)],
        ];
        let got = candidates(&groups, (Some(7), Some(4)), 0..1, |g| g == 1);
        assert_eq!(got, vec![c(2, 7), c(7, 9)]);
        // The next ranks, rank by rank: group 2's second race (group 0 has no third).
        let more = candidates(&groups, (Some(7), Some(4)), 1..3, |g| g == 1);
        assert_eq!(more, vec![c(8, 9)]);
        let all = candidates(&groups, (Some(7), Some(4)), 0..3, |_| false);
        assert_eq!(all, vec![c(2, 7), c(1, 3), c(7, 9), c(8, 9)]);
        // A group whose only race is A undone gives nothing.
        assert_eq!(
            candidates(&[vec![c(4, 7)]], (Some(4), Some(7)), 0..1, |_| false),
            vec![]
        );
        // When A's events did not both run, no race is A undone.
        assert_eq!(
            candidates(&[vec![c(4, 7)]], (Some(4), None), 0..1, |_| false),
            vec![c(4, 7)]
        );
    }

    #[test]
    fn the_first_races_events_are_found_in_its_run_by_thread_and_index() {
        let at = |tid, m, pc| {
            (
                Event::new(
                    tid,
                    Op::Lock {
                        m,
                        kind: pos_sched::event::MutexKind::Normal,
                    },
                ),
                pc,
            )
        };
        // Recorded: thread 1 locks 10 then 20; thread 2 locks 20. A's run: thread 2 first.
        let orig = vec![at(1, 10, 0), at(1, 20, 0), at(2, 20, 0)];
        let run = vec![at(1, 10, 0), at(2, 20, 0), at(1, 20, 0)];
        assert_eq!(locate(&orig, 1, &run), Some(2));
        assert_eq!(locate(&orig, 2, &run), Some(1));
        // Thread 2 never ran in a run cut short.
        assert_eq!(locate(&orig, 2, &run[..1]), None);
        assert_eq!(group_of(&"b", &["a", "b"]), Some(1));
        assert_eq!(group_of(&"c", &["a", "b"]), None);
    }
}
