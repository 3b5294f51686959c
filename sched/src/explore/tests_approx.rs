//! `--approximate` for odpor, dpor and rt ([`super::Options::approximate`]): a run that does
//! not follow its forced prefix is counted and analysed instead of ending the exploration.

use super::testprog::{self, Interp};
use super::{explore, explore_with, Algo, Limits, Options, Report};

fn approx(algo: Algo) -> Report {
    let mut exec = Interp::new(testprog::hidden_flag());
    let opts = Options {
        approximate: true,
        ..Default::default()
    };
    let limits = Limits {
        max_executions: Some(10_000),
        ..Default::default()
    };
    explore_with(algo, &mut exec, limits, opts)
}

fn exact(algo: Algo) -> Report {
    let mut exec = Interp::new(testprog::hidden_flag());
    explore(algo, &mut exec, Limits::default())
}

#[test]
fn exact_odpor_and_rt_stop_at_the_divergence_of_a_hidden_flag() {
    for algo in [Algo::Odpor, Algo::Rt] {
        let r = exact(algo);
        assert!(r.diverged.is_some(), "{algo:?}: {r:?}");
        assert!(!r.complete);
        assert_eq!(r.executions, 1, "{algo:?}: the second run diverges");
        assert_eq!(r.buggy, 0, "{algo:?}: the bug lies past the divergence");
    }
}

#[test]
fn approximate_odpor_and_rt_go_on_past_the_divergence_and_find_the_bug() {
    for algo in [Algo::Odpor, Algo::Rt] {
        let r = approx(algo);
        eprintln!(
            "{algo:?}: {} executions, {} divergent, {} skipped events, {} buggy",
            r.executions, r.divergent, r.skipped_events, r.buggy
        );
        assert!(r.diverged.is_none(), "{algo:?}: {r:?}");
        assert!(r.complete, "{algo:?}: the search ends by itself: {r:?}");
        assert!(r.divergent >= 1, "{algo:?}: {r:?}");
        assert!(r.skipped_events >= r.divergent, "{algo:?}: {r:?}");
        assert!(r.executions >= 2 && r.executions < 100, "{algo:?}: {r:?}");
        assert!(r.buggy >= 1, "{algo:?}: {r:?}");
        // The bug's schedule has thread 3's second yield: the run took the other branch.
        let b = &r.bugs[0];
        let yields = b.schedule.iter().filter(|s| s.op == "yield").count();
        assert_eq!(yields, 2, "{b:?}");
    }
}

#[test]
fn approximate_changes_nothing_when_every_prefix_is_followed() {
    // dpor's prefixes are recorded events plus one enabled event: never divergent here; and
    // programs without hidden accesses never diverge under any algorithm.
    let r = approx(Algo::Dpor);
    assert_eq!(r.divergent, 0);
    let e = exact(Algo::Dpor);
    assert_eq!(
        (r.executions, r.blocked, r.buggy),
        (e.executions, e.blocked, e.buggy)
    );
    for algo in [Algo::Odpor, Algo::Dpor, Algo::Rt] {
        let prog = testprog::philosophers(3);
        let a = explore_with(
            algo,
            &mut Interp::new(prog.clone()),
            Limits::default(),
            Options {
                approximate: true,
                ..Default::default()
            },
        );
        let e = explore(algo, &mut Interp::new(prog), Limits::default());
        assert_eq!(a.divergent, 0, "{algo:?}");
        assert_eq!(
            (a.executions, a.blocked, a.buggy, a.complete),
            (e.executions, e.blocked, e.buggy, e.complete),
            "{algo:?}"
        );
    }
}
