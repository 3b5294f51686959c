//! `hitting`: run a d-hitting family of schedules of one recorded run (Chistikov, Majumdar,
//! Niksic, CAV'16; see [`crate::hitting`]).
//!
//! 1. Record one run: the guide's default schedule, or the forced start sequence (a saved
//!    schedule the runner replayed).
//! 2. Find what may be reordered: the data races of its happens-before order
//!    ([`RunOrder::races`]) and the conflicting synchronisation operations of different
//!    threads ([`RunOrder::sync_races`]) under the order without lock and semaphore edges
//!    ([`RunOrder::without_locks`]), so that a program explored at synchronisation points
//!    only has reorderings too (of its critical sections). Keep the events that take part
//!    in one (`Prune::Races`, the paper's pruning) or every event (`Prune::None`), ordered
//!    by that order.
//! 3. Build a d-hitting family of it: the paper's bags for d ≥ 3 (see `structured_family`).
//! 4. Run every schedule of the family, completed to the whole run
//!    ([`RunOrder::complete`]), with approximate replay (the guide's approximate mode):
//!    an event that does not exist or is not enabled where the schedule puts it is skipped,
//!    and counted.
//!
//! A bug of depth ≤ d among the kept events is hit by some schedule of the family, as far as
//! approximate replay realises it (the family is built for the recorded run's order; a
//! reordering that changes control flow may leave the rest of the schedule unrealisable).
//! Code between scheduling points is invisible: a bug that also needs such code to run at a
//! given place depends on where the completion puts the events the schedule does not order.

use super::guide::Rule;
use super::run_order::RunOrder;
use super::trace::TEv;
use super::{Ctx, Outcome};
use crate::event::Event;
use crate::hitting::{self, Construction};

/// Which events the family orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prune {
    /// The events that take part in a race (default).
    Races,
    /// Every event of the run.
    None,
}

impl Prune {
    pub fn parse(s: &str) -> Result<Prune, String> {
        match s {
            "races" => Ok(Prune::Races),
            "none" => Ok(Prune::None),
            _ => Err(format!("unknown --prune {s:?} (known: races, none)")),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Prune::Races => "races",
            Prune::None => "none",
        }
    }
}

/// What the family was built from, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FamilyInfo {
    /// Events of the recorded run.
    pub events: usize,
    /// Events the family orders (the racing ones with `Prune::Races`).
    pub ordered: usize,
    /// Races of the recorded run.
    pub races: usize,
    pub size: usize,
    pub construction: String,
    /// With verification: the family was checked d-hitting by enumeration (`Some(false)`: a
    /// tuple was missed, an implementation bug).
    pub verified: Option<bool>,
}

pub(crate) fn run(ctx: &mut Ctx, depth: u32, prune: Prune, verify: bool) {
    ctx.report.complete = true;
    let mut guide = ctx.guide(Rule::Lowest, false);
    guide.plan(std::mem::take(&mut ctx.first), 0, Vec::new());
    if let Outcome::Stop = ctx.run(&mut guide, None) {
        return;
    }
    let events: Vec<TEv> = guide.steps.iter().map(|r| r.ev).collect();
    // Data races under the whole happens-before order; the order of critical sections and
    // semaphore operations is free (see `RunOrder::without_locks`), so programs explored at
    // synchronisation points only have reorderings too.
    let data = RunOrder::new(events.clone()).races();
    let order = RunOrder::without_locks(events);
    let sync = order.sync_races();
    let races = data.len() + sync.len();
    let kept: Vec<usize> = match prune {
        Prune::Races => {
            let mut v: Vec<usize> = data
                .iter()
                .chain(&sync)
                .flat_map(|&(a, b)| [a, b])
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        Prune::None => (0..order.len()).collect(),
    };
    let sub = order.order_among(&kept);
    let (construction, family) = structured_family(&sub, depth as usize);
    let verified =
        verify.then(|| matches!(hitting::check(&sub, &family, depth as usize), Ok(None)));
    ctx.report.family = Some(FamilyInfo {
        events: order.len(),
        ordered: kept.len(),
        races,
        size: family.len(),
        construction: construction_name(construction).into(),
        verified,
    });
    guide.approximate = true;
    for schedule in &family {
        if ctx.out_of_budget() {
            return;
        }
        let target: Vec<Event> = order
            .complete(&kept, schedule)
            .into_iter()
            .map(|i| order.events[i].ev)
            .collect();
        guide.plan(target, 0, Vec::new());
        if let Outcome::Stop = ctx.run(&mut guide, None) {
            return;
        }
    }
}

/// The family run: for d ≥ 3 the paper's bags (one bag per `a1 … a(d-2)`, each finished by
/// λ' and ρ', the restrictions of a 2-hitting family: 2r schedules for d = 3 on a forest of r
/// events), even where [`hitting::family`] has a smaller one (the tree family, a greedy
/// cover). Every d-hitting family hits the same tuples; what differs is how the events
/// outside the tuple are placed, and λ'/ρ' run whole threads' remaining events in a block
/// (depth-first), the way the reorder bugs of the suite need: `reorder_3`'s checker must run
/// between one setter's two writes with every other setter after it, which the tree family
/// (8 schedules) never does and a bag (12) does. Where the bags do not apply (d ≤ 2, a total
/// order, fewer than d events) the smallest family.
///
/// With fewer than d events no d-tuple exists and any one schedule is vacuously d-hitting;
/// the family is then built for d = the number of events, so that a bug needing two racing
/// events in the other order (`delay_7`: 2 racing events) is still run.
fn structured_family(order: &hitting::Order, d: usize) -> (Construction, Vec<Vec<usize>>) {
    let d = d.min(order.len());
    let smallest = hitting::family(order, d);
    if d < 3 || order.len() < d || smallest.0 == Construction::Single {
        return smallest;
    }
    let two = match hitting::forest::dfs_pair(order) {
        Some(f) => f,
        None => hitting::greedy::extremes_and_greedy(order),
    };
    (Construction::Bags, hitting::bags::bags(order, d, &two))
}

fn construction_name(c: Construction) -> &'static str {
    match c {
        Construction::Single => "single",
        Construction::DfsPair => "dfs-pair",
        Construction::ExtremesGreedy => "extremes+greedy",
        Construction::Bags => "bags",
        Construction::Tree3 => "tree3",
        Construction::AntichainCover => "antichain-cover",
        Construction::GreedyCover => "greedy-cover",
    }
}

#[cfg(test)]
mod tests {
    use super::super::testprog::{self, Interp};
    use super::super::{explore, Algo, Limits};
    use super::*;

    fn hitting(depth: u32) -> Algo {
        Algo::Hitting {
            depth,
            prune: Prune::Races,
            verify: true,
        }
    }

    #[test]
    fn depth_three_finds_the_lost_update_in_the_family_of_the_first_run() {
        // The update is lost when r1 < r2 < w1 (or the mirror): three events in an order the
        // first run (r1 w1 r2 w2) does not have.
        let mut exec = Interp::new(testprog::lost_update());
        let two = explore(hitting(2), &mut exec, Limits::default());
        assert_eq!(
            two.buggy, 0,
            "the depth-2 family (λ, ρ) runs the increments serially"
        );
        let r = explore(hitting(3), &mut exec, Limits::default());
        let f = r.family.clone().expect("a family was built");
        // Each increment reads then writes x, the main thread reads it after the joins.
        assert_eq!(f.ordered, 4, "{f:?}");
        assert_eq!(f.verified, Some(true));
        assert!(r.complete);
        assert_eq!(r.executions, 1 + f.size as u64);
        assert!(r.buggy > 0, "{r:?}");
        assert_eq!(
            r.divergent, 0,
            "every schedule of a data-race order is realisable"
        );
    }

    #[test]
    fn depth_four_finds_a_two_preemption_bug() {
        // Needs w1 < r1 < w2 < r2: four events interleaved.
        let mut exec = Interp::new(testprog::two_preemptions());
        let four = explore(hitting(4), &mut exec, Limits::default());
        assert!(four.buggy > 0, "{four:?}");
        assert_eq!(four.family.as_ref().and_then(|f| f.verified), Some(true));
    }

    #[test]
    fn a_race_free_program_gives_a_single_schedule() {
        let mut exec = Interp::new(testprog::independent_pair(3));
        let r = explore(hitting(3), &mut exec, Limits::default());
        let f = r.family.expect("a family");
        assert_eq!((f.races, f.ordered, f.size), (0, 0, 1));
        assert_eq!(r.executions, 2);
        assert_eq!(r.buggy, 0);
    }

    #[test]
    fn critical_sections_are_reordered_at_synchronisation_points() {
        // Two threads taking one lock twice each: every lock of one thread conflicts with
        // every lock of the other, and the order leaves the sections free.
        let mut exec = Interp::new(testprog::mutex_rounds(2, 2));
        let r = explore(hitting(3), &mut exec, Limits::default());
        let f = r.family.expect("a family");
        assert_eq!((f.races, f.ordered), (4, 4), "{f:?}");
        assert_eq!(f.verified, Some(true));
        assert!(
            f.size <= 2 * f.ordered,
            "bags: 2r for d = 3 on a forest: {f:?}"
        );
        assert_eq!(r.buggy, 0);
        // A semaphore initialised to 2 used as a lock (memory hidden: sync points): the lost
        // update needs two workers inside at once, a reordering of two sem_waits before a
        // post; initialised to 1 the program is correct and stays so.
        let bad = explore(
            hitting(3),
            &mut Interp::new(testprog::sem_as_mutex(2)),
            Limits::default(),
        );
        assert!(bad.buggy > 0, "{bad:?}");
        let fam = bad.family.clone().expect("a family");
        assert!(bad.executions <= 2 * fam.ordered as u64 + 2, "{fam:?}");
        let ok = explore(
            hitting(3),
            &mut Interp::new(testprog::sem_as_mutex(1)),
            Limits::default(),
        );
        assert_eq!(ok.buggy, 0, "{ok:?}");
        assert!(ok.family.expect("a family").size > 1);
    }

    #[test]
    fn a_target_event_that_cannot_run_is_skipped_and_counted() {
        use super::super::guide::Guide;
        use super::super::Executor;
        // Record the default run of two threads taking one lock twice each, then ask for
        // thread 2's second lock while thread 1 still holds it: not enabled, skipped.
        let mut exec = Interp::new(testprog::mutex_rounds(2, 1));
        let mut g = Guide::new(Rule::Lowest, false, 1);
        let first = exec.execute(&mut g);
        assert!(first.bug.is_none());
        let trace = first.trace.clone();
        let lock_of = |t| {
            trace
                .iter()
                .position(|e| e.tid == t && e.op.name() == "lock")
        };
        let (l1, l2) = (lock_of(1).unwrap(), lock_of(2).unwrap());
        // Target: everything up to and including thread 1's lock, then thread 2 up to its
        // lock.
        let mut target: Vec<Event> = trace[..=l1].to_vec();
        target.extend(trace[l1 + 1..=l2].iter().filter(|e| e.tid == 2));
        g.approximate = true;
        g.plan(target, 0, Vec::new());
        let again = exec.execute(&mut g);
        assert!(again.bug.is_none() && again.diverged.is_none());
        assert!(g.skipped >= 1, "thread 2's lock is blocked there");
        assert_eq!(again.trace.len(), trace.len(), "the run still completes");
    }

    #[test]
    fn cond_if_and_readers_writers_need_four_ordered_events_once_control_flow_is_followed() {
        // Both bugs have a forcing 3-tuple over all executions (`bug_depth`), but every
        // schedule of the depth-3 family that orders it also reorders a fourth event the
        // tuple depends on (`cond_if`: the first consumer must already wait when the producer
        // locks; readers/writers: the reader's first section must precede the writer's), so
        // the program takes another branch there and approximate replay cannot follow: these
        // are depth-4 bugs of the recorded run. The depth-4 family finds both.
        for (name, prog) in [
            ("cond_if", testprog::cond_if(true)),
            ("readers_writers_gap", testprog::readers_writers_gap(true)),
        ] {
            let mut exec = Interp::new(prog);
            let three = explore(hitting(3), &mut exec, Limits::default());
            assert!(three.complete, "{name}: {three:?}");
            assert_eq!(
                three.buggy, 0,
                "{name}: depth 3 now finds it: update this test and the README"
            );
            let four = explore(hitting(4), &mut exec, Limits::default());
            assert!(four.complete && four.buggy > 0, "{name}: {four:?}");
        }
    }
}
