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
    use super::super::target::Kind;
    use super::*;
    use pos_sched::event::Op;

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
        assert_eq!(both(Realised::Yes, no("z did not run")), no("z did not run"));
        assert!(matches!(both(no("a"), no("b")), Realised::No(w) if w.contains("undone")));
    }

    #[test]
    fn candidates_are_one_race_per_site_pair_without_the_first_race_undone() {
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
