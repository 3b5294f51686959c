//! The POS paper's worked examples (Yuan et al. CAV'18, §2 and §4), on the shipped models:
//! exact random-walk values and sampled values of the other strategies, each within 4.5
//! standard errors of the value the paper derives (a correct implementation fails one such
//! check with probability < 7e-6).

use super::sample::{options_for, sample};
use super::{analyze, Estimate, Orders, Program};

const DELAY7: &str = include_str!("../../../benchmarks/models/delay7.model");
const RACE_TWICE: &str = include_str!("../../../benchmarks/models/race-twice.model");
const SAMPLES: u64 = 20_000;

/// The index of the one order satisfying the model's `bug:` line.
fn bug_order(o: &Orders) -> usize {
    let bugs: Vec<usize> = (0..o.len()).filter(|&i| o.orders[i].bug).collect();
    assert_eq!(bugs.len(), 1, "exactly one bug order");
    bugs[0]
}

fn check(p: &Program, o: &Orders, algo: &str, order: usize, expected: f64) {
    let e = sample(p, o, algo, &options_for(o), SAMPLES, 2024).unwrap();
    let se = (expected * (1.0 - expected) / SAMPLES as f64).sqrt();
    let got = e.probs[order];
    assert!(
        (got - expected).abs() <= 4.5 * se,
        "{algo}: sampled {got}, expected {expected} (se {se})"
    );
}

#[test]
fn delay7_matches_the_paper() {
    let p = Program::parse(DELAY7).unwrap();
    let o = Orders::enumerate(&p, 1000).unwrap();
    assert_eq!(o.len(), 2);
    let bug = bug_order(&o);
    assert_eq!(Estimate::exact_rw(&o).probs[bug], 1.0 / 128.0);
    check(&p, &o, "rw", bug, 1.0 / 128.0);
    check(&p, &o, "pos", bug, 1.0 / 8.0);
    check(&p, &o, "basicpos", bug, 1.0 / 8.0);
    check(&p, &o, "pct1", bug, 1.0 / 2.0);
}

#[test]
fn race_twice_needs_priority_reassignment() {
    let p = Program::parse(RACE_TWICE).unwrap();
    let o = Orders::enumerate(&p, 1000).unwrap();
    assert_eq!(o.len(), 3);
    let bug = bug_order(&o);
    assert_eq!(Estimate::exact_rw(&o).probs[bug], 0.25);
    check(&p, &o, "rw", bug, 0.25);
    check(&p, &o, "pos", bug, 0.25);
    check(&p, &o, "basicpos", bug, 1.0 / 6.0);
}

#[test]
fn analysis_reports_every_strategy_in_order() {
    let p = Program::parse(RACE_TWICE).unwrap();
    let algos: Vec<String> = ["rw", "pos"].iter().map(|s| s.to_string()).collect();
    let a = analyze(&p, &algos, 1000, 1, true).unwrap();
    assert!(a.estimates[0].exact && !a.estimates[1].exact);
    assert_eq!(a.estimates[0].coverage(), 0.25);
    let total: f64 = a.estimates[1].probs.iter().sum();
    assert!((total - 1.0).abs() < 1e-9);
}

#[test]
fn lost_update_in_real_program_mode() {
    let p = Program::parse(include_str!("../../../benchmarks/models/lost-update.model")).unwrap();
    let o = Orders::enumerate(&p, 10_000).unwrap();
    // Reads commute, so the orders are fixed by (A.1,B.2), (B.1,A.2), (A.2,B.2): 8 choices
    // minus the 4 cyclic ones.
    assert_eq!(o.len(), 4);
    assert_eq!(o.orders.iter().filter(|x| x.bug).count(), 2);
    let exact = Estimate::exact_rw(&o);
    let bug: f64 = (0..o.len())
        .filter(|&i| o.orders[i].bug)
        .map(|i| exact.probs[i])
        .sum();
    let est = sample(&p, &o, "rw", &options_for(&o), SAMPLES, 9).unwrap();
    let sampled: f64 = (0..o.len())
        .filter(|&i| o.orders[i].bug)
        .map(|i| est.probs[i])
        .sum();
    let se = (bug * (1.0 - bug) / SAMPLES as f64).sqrt();
    assert!((sampled - bug).abs() <= 4.5 * se, "{sampled} vs {bug}");
}

/// A 2-party barrier orders everything before it in one thread before everything after it
/// in the other: of the 3 racing pairs below only the post-barrier one can go both ways.
#[test]
fn barrier_orders_events_across_threads() {
    let p = Program::parse(
        "barrier b = 2\n\
         thread A: write x; barrier_wait b; barrier_leave b; read y\n\
         thread B: write y; barrier_wait b; barrier_leave b; read x\n\
         bug: B.4 < A.1",
    )
    .unwrap();
    let o = Orders::enumerate(&p, 1000).unwrap();
    // Orders differ only in the order of the two arrivals and of the two leaves (both
    // touch the barrier, so each pair is dependent): 2 x 2, and never the bug.
    assert!(o.orders.iter().all(|ord| !ord.bug));
    assert_eq!(o.len(), 4);
    let rw = Estimate::exact_rw(&o);
    assert!((rw.probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

/// urw, surw and tapct (sched/src/strategy/surw.rs, tapct.rs) on their hand-checked models.
mod uniform {
    use super::*;

    /// As [`super::check`] but within 5.5 standard errors: one check fails a correct
    /// implementation with probability 4e-8, all 20 of this module together < 1e-6.
    fn check(p: &Program, o: &Orders, algo: &str, order: usize, expected: f64) {
        let e = sample(p, o, algo, &options_for(o), SAMPLES, 2024).unwrap();
        let se = (expected * (1.0 - expected) / SAMPLES as f64).sqrt();
        let got = e.probs[order];
        assert!(
            (got - expected).abs() <= 5.5 * se,
            "{algo}: order {order} sampled {got}, expected {expected} (se {se})"
        );
    }

    fn load(text: &str) -> (Program, Orders) {
        let p = Program::parse(text).unwrap();
        let o = Orders::enumerate(&p, 1000).unwrap();
        (p, o)
    }

    /// Every order of `o` (by its index) at its expected probability under `algo`.
    fn check_all(p: &Program, o: &Orders, algo: &str, expected: impl Fn(usize) -> f64) {
        for i in 0..o.len() {
            check(p, o, algo, i, expected(i));
        }
    }

    #[test]
    fn urw_is_uniform_where_rw_is_not() {
        let (p, o) = load(include_str!("../../../benchmarks/models/uniform-xx.model"));
        assert_eq!(o.len(), 6);
        let bug = bug_order(&o);
        assert_eq!(Estimate::exact_rw(&o).probs[bug], 1.0 / 8.0);
        check_all(&p, &o, "urw", |_| 1.0 / 6.0);
        check_all(&p, &o, "surw", |_| 1.0 / 6.0);
    }

    #[test]
    fn surw_is_uniform_over_the_racing_writes_only() {
        let (p, o) = load(include_str!(
            "../../../benchmarks/models/surw-private.model"
        ));
        assert_eq!(o.len(), 6);
        let bug = bug_order(&o);
        check_all(&p, &o, "surw", |_| 1.0 / 6.0);
        check(&p, &o, "urw", bug, 1.0 / 20.0);
    }

    #[test]
    fn tapct_counts_change_points_among_racing_events() {
        let (p, o) = load(include_str!(
            "../../../benchmarks/models/tapct-depth2.model"
        ));
        let bug = bug_order(&o);
        check(&p, &o, "tapct2", bug, 1.0 / 6.0);
        check(&p, &o, "pct2", bug, 1.0 / 38.0);
    }
}
