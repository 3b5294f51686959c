//! Tests of the hitting families: every family is verified d-hitting by enumeration
//! ([`check`]), sizes are compared with the bounds, and the checker itself is shown to find
//! missing tuples.

use super::bags::{bags, bags_among};
use super::check::{admissible, check_among, count_admissible, for_each_admissible, hits};
use super::forest::dfs_pair;
use super::greedy::{antichain_bound, antichain_cover, cover, extremes_and_greedy};
use super::order::positions;
use super::tree3::{tree3, tree3_bound};
use super::*;

/// Panics unless `family` is d-hitting for `order` (naming the first missed tuple).
fn assert_hitting(what: &str, order: &Order, family: &[Vec<usize>], d: usize) {
    match check(order, family, d) {
        Ok(None) => {}
        Ok(Some(t)) => panic!(
            "{what}: d={d}: tuple {t:?} is hit by none of {} schedules",
            family.len()
        ),
        Err(e) => panic!("{what}: d={d}: {e}"),
    }
}

/// `n (n-1) ⋯ (n-k+1)`.
fn falling(n: usize, k: usize) -> usize {
    (0..k).map(|i| n.saturating_sub(i)).product()
}

fn binomial(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    falling(n, k) / falling(k, k)
}

/// Every linearization of a small order (brute force).
fn all_linearizations(order: &Order) -> Vec<Vec<usize>> {
    fn go(order: &Order, placed: &mut Vec<bool>, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == order.len() {
            out.push(cur.clone());
            return;
        }
        for v in 0..order.len() {
            if placed[v] || (0..order.len()).any(|a| order.lt(a, v) && !placed[a]) {
                continue;
            }
            placed[v] = true;
            cur.push(v);
            go(order, placed, cur, out);
            cur.pop();
            placed[v] = false;
        }
    }
    let mut out = Vec::new();
    go(
        order,
        &mut vec![false; order.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// The named test orders: chains, chain ∥ {†}, antichains, balanced trees, random orders and
/// random forests, all with at most `max_n` events.
fn test_orders(max_n: usize) -> Vec<(String, Order)> {
    let mut v = Vec::new();
    for n in 1..=7 {
        v.push((format!("chain({n})"), Order::chain(n)));
        v.push((format!("chain({n})+†"), Order::chain_and_one(n)));
        v.push((format!("A_{n}"), Order::antichain(n)));
    }
    for h in 1..=5 {
        v.push((format!("T^{h}"), Order::binary_tree(h)));
    }
    for seed in 0..12u64 {
        let n = 4 + (seed as usize % 6);
        let density = [0.15, 0.3, 0.5][seed as usize % 3];
        v.push((
            format!("random(n={n},p={density},seed={seed})"),
            Order::random(n, density, seed),
        ));
        let fan = 1 + (seed as usize % 4);
        v.push((
            format!("forest(n={},fan={fan},seed={seed})", n + 3),
            Order::random_forest(n + 3, fan, 0.15, seed),
        ));
    }
    v.into_iter().filter(|(_, o)| o.len() <= max_n).collect()
}

#[test]
fn order_is_transitively_closed_and_rejects_bad_edges() {
    let o = Order::from_edges(4, &[(0, 1), (1, 2)]).unwrap();
    assert!(o.lt(0, 2) && o.lt(0, 1) && o.lt(1, 2));
    assert!(!o.lt(2, 0) && !o.lt(0, 0));
    assert!(o.unordered(3, 0) && o.unordered(2, 3));
    assert_eq!(
        Order::from_edges(3, &[(0, 1), (1, 2), (2, 0)]),
        Err(OrderError::Cycle { event: 0 })
    );
    assert_eq!(
        Order::from_edges(2, &[(0, 2)]),
        Err(OrderError::OutOfRange { edge: (0, 2), n: 2 })
    );
    // The tree order: root first, each node before its children and so before its subtree.
    let t = Order::binary_tree(3);
    assert_eq!(t.len(), 7);
    assert!(t.lt(0, 6) && t.lt(1, 3) && t.lt(1, 4) && t.lt(2, 5));
    assert!(t.unordered(1, 2) && t.unordered(3, 5) && t.unordered(4, 2));
    assert_eq!(t.lower_covers(4), vec![1]);
    let diamond = Order::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    assert!(diamond.forest_parents().is_none());
    assert!(t.forest_parents().is_some());
    assert_eq!(Order::chain_and_one(3).len(), 4);
    assert!(Order::antichain(5).is_antichain() && !t.is_antichain());
    // Random orders are reproducible from their seed.
    assert_eq!(Order::random(8, 0.3, 5), Order::random(8, 0.3, 5));
}

#[test]
fn linearizations_are_recognised() {
    let t = Order::binary_tree(2); // 0 < 1, 0 < 2
    assert!(t.is_linearization(&[0, 1, 2]) && t.is_linearization(&[0, 2, 1]));
    assert!(!t.is_linearization(&[1, 0, 2])); // child before root
    assert!(!t.is_linearization(&[0, 1])); // missing event
    assert!(!t.is_linearization(&[0, 1, 1])); // repeated event
    assert!(!t.is_linearization(&[0, 1, 3])); // out of range
    assert_eq!(all_linearizations(&t).len(), 2);
    assert_eq!(all_linearizations(&Order::antichain(4)).len(), 24);
    assert_eq!(all_linearizations(&Order::chain_and_one(4)).len(), 5);
}

/// The local admissibility test agrees with the definition ("some schedule hits it") on small
/// orders, and the enumeration counts match closed forms.
#[test]
fn admissible_tuples_are_those_some_schedule_hits() {
    for (name, o) in test_orders(7) {
        let lins: Vec<Vec<usize>> = all_linearizations(&o)
            .iter()
            .map(|s| positions(s))
            .collect();
        for d in 1..=3 {
            let mut enumerated = Vec::new();
            for_each_admissible(&o, d, |t| {
                enumerated.push(t.to_vec());
                true
            });
            // Brute force over all d-tuples of distinct events.
            let mut by_definition = Vec::new();
            let mut t = vec![0; d];
            let total = o.len().pow(d as u32);
            for code in 0..total {
                let mut c = code;
                for x in t.iter_mut().rev() {
                    *x = c % o.len();
                    c /= o.len();
                }
                let distinct = (0..d).all(|i| (0..i).all(|j| t[i] != t[j]));
                let hit = distinct && lins.iter().any(|p| hits(p, &t));
                assert_eq!(distinct && admissible(&o, &t), hit, "{name} {t:?}");
                if hit {
                    by_definition.push(t.clone());
                }
            }
            assert_eq!(enumerated, by_definition, "{name} d={d}");
        }
    }
    for n in 1..=7 {
        for d in 1..=4 {
            assert_eq!(count_admissible(&Order::antichain(n), d), falling(n, d));
            assert_eq!(count_admissible(&Order::chain(n), d), binomial(n, d));
        }
        // chain ∥ {†}, d = 3: three chain events, or two and † in any of 3 places.
        assert_eq!(
            count_admissible(&Order::chain_and_one(n), 3),
            binomial(n, 3) + 3 * binomial(n, 2)
        );
    }
}

/// The checker is not vacuous: it finds the tuple a family misses, and rejects schedules that
/// are not linearizations.
#[test]
fn check_finds_missing_tuples_and_bad_schedules() {
    // One linearization of an antichain misses the reversed pairs.
    let a3 = Order::antichain(3);
    let one = vec![vec![0, 1, 2]];
    let missed = check(&a3, &one, 2)
        .unwrap()
        .expect("one schedule is not 2-hitting on A_3");
    assert_eq!(missed, vec![1, 0]);
    assert!(admissible(&a3, &missed) && !hits(&positions(&one[0]), &missed));
    // A schedule and its reverse are 2-hitting on A_3 but not 3-hitting.
    let two = vec![vec![0, 1, 2], vec![2, 1, 0]];
    assert_eq!(check(&a3, &two, 2), Ok(None));
    assert_eq!(check(&a3, &two, 3), Ok(Some(vec![0, 2, 1])));
    // λ alone on a tree misses the pair its subtrees are not run in.
    let t = Order::binary_tree(3);
    let lambda = forest::Forest::of(&t).unwrap().dfs(false);
    assert_eq!(lambda, vec![0, 1, 3, 4, 2, 5, 6]);
    assert_eq!(check(&t, &[lambda], 2), Ok(Some(vec![2, 1])));
    // Non-linearizations are rejected, whichever position they hold.
    let bad = vec![vec![0, 1, 2], vec![1, 0, 2]];
    assert_eq!(
        check(&Order::chain(3), &bad, 2),
        Err(CheckError::NotLinearization { index: 1 })
    );
    assert_eq!(
        check(&Order::chain(3), &[vec![0, 1]], 2),
        Err(CheckError::NotLinearization { index: 0 })
    );
    assert_eq!(
        check(&Order::chain(3), &[vec![0, 1, 2]], 0),
        Err(CheckError::ZeroDepth)
    );
    // A chain has one linearization, which hits every admissible tuple.
    assert_eq!(check(&Order::chain(5), &[vec![0, 1, 2, 3, 4]], 4), Ok(None));
}

#[test]
fn dfs_pair_is_2_hitting_on_forests() {
    let mut forests = 0;
    for (name, o) in test_orders(64) {
        let Some(f) = dfs_pair(&o) else {
            assert!(o.forest_parents().is_none(), "{name}");
            continue;
        };
        forests += 1;
        assert!(f.len() <= 2, "{name}: {} schedules", f.len());
        assert_hitting(&name, &o, &f, 2);
    }
    assert!(forests >= 30, "only {forests} forests tested");
    let diamond = Order::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    assert!(dfs_pair(&diamond).is_none());
}

#[test]
fn extremes_and_greedy_is_2_hitting_on_any_order() {
    for (name, o) in test_orders(64) {
        let f = extremes_and_greedy(&o);
        assert!(f.len() <= 2 + count_admissible(&o, 2), "{name}");
        assert_hitting(&name, &o, &f, 2);
    }
    // A non-forest order: a diamond with a side event.
    let diamond = Order::from_edges(5, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    assert_hitting("diamond+1", &diamond, &extremes_and_greedy(&diamond), 2);
    // The standard example S_3 (a_i < b_j for i != j) has dimension 3: no 2 schedules suffice.
    let s3 = Order::from_edges(6, &[(0, 4), (0, 5), (1, 3), (1, 5), (2, 3), (2, 4)]).unwrap();
    let f = extremes_and_greedy(&s3);
    assert_hitting("S_3", &s3, &f, 2);
    assert!(f.len() >= 3, "S_3 has dimension 3");
}

#[test]
fn bags_are_d_hitting_within_n_to_the_d_minus_2() {
    for (name, o) in test_orders(15) {
        let two = match dfs_pair(&o) {
            Some(f) => f,
            None => extremes_and_greedy(&o),
        };
        for d in 3..=4 {
            if d == 4 && o.len() > 12 && !name.starts_with("T^") {
                continue;
            }
            let f = bags(&o, d, &two);
            assert!(
                f.len() <= (two.len() * falling(o.len(), d - 2)).max(two.len()),
                "{name} d={d}: {} > {}·n^(d-2)",
                f.len(),
                two.len()
            );
            assert_hitting(&name, &o, &f, d);
        }
    }
}

/// Bags on T^5 (31 events) at d = 4: 2·31·30 = 1860 schedules at most.
#[test]
fn bags_on_t5_at_depth_4() {
    let o = Order::binary_tree(5);
    let f = bags(&o, 4, &dfs_pair(&o).unwrap());
    assert!(f.len() <= 2 * 31 * 30);
    assert_hitting("T^5", &o, &f, 4);
}

/// chain ∥ {†} at d = 3: the bags give n + 1 schedules (n chain events), one per place of †:
/// every linearization, so the family is optimal, and dropping any schedule misses a tuple.
#[test]
fn chain_and_one_gets_n_plus_1_schedules_which_is_optimal() {
    for n in 1..=8 {
        let o = Order::chain_and_one(n);
        let f = bags(&o, 3, &dfs_pair(&o).unwrap());
        assert_hitting("chain+†", &o, &f, 3);
        if n >= 2 {
            assert_eq!(f.len(), n + 1, "n={n}");
            assert_eq!(all_linearizations(&o).len(), n + 1);
            for drop in 0..f.len() {
                let mut less = f.clone();
                less.remove(drop);
                assert!(
                    check(&o, &less, 3).unwrap().is_some(),
                    "n={n}: without {drop}"
                );
            }
        }
        let (c, picked) = family(&o, 3);
        assert!(
            picked.len() <= n + 1,
            "n={n}: family() picked {c:?} of {}",
            picked.len()
        );
        assert_hitting("chain+† family()", &o, &picked, 3);
    }
}

/// The race-pruned bags hit every tuple whose first event is among the chosen ones, with
/// at most 2r schedules at d = 3 on a tree; all tuples they do not promise can be missed.
#[test]
fn race_pruned_bags_hit_the_tuples_they_promise() {
    let t = Order::binary_tree(4);
    let two = dfs_pair(&t).unwrap();
    let racing = [3usize, 5, 8, 12];
    let f = bags_among(&t, 3, &two, Some(&racing));
    assert!(f.len() <= 2 * racing.len());
    assert_eq!(check_among(&t, &f, 3, Some(&racing)), Ok(None));
    assert!(
        check(&t, &f, 3).unwrap().is_some(),
        "pruned bags are not 3-hitting on all of T^4"
    );
    for seed in 0..6 {
        let o = Order::random(9, 0.25, 100 + seed);
        let two = extremes_and_greedy(&o);
        let firsts = [0usize, 4, 7];
        let f = bags_among(&o, 3, &two, Some(&firsts));
        assert!(f.len() <= two.len() * firsts.len());
        assert_eq!(
            check_among(&o, &f, 3, Some(&firsts)),
            Ok(None),
            "seed {seed}"
        );
    }
}

#[test]
fn tree3_is_3_hitting_within_4h_on_balanced_trees() {
    for h in 1..=6u32 {
        let o = Order::binary_tree(h);
        let f = tree3(&o).unwrap();
        let bound = (4 * (h as usize - 1)).max(1);
        assert_eq!(tree3_bound(&o), Some(bound));
        assert!(f.len() <= bound, "T^{h}: {} > 4(h-1) = {bound}", f.len());
        assert!(f.len() <= 4 * h as usize);
        assert_hitting(&format!("T^{h}"), &o, &f, 3);
    }
}

#[test]
fn tree3_is_3_hitting_on_any_forest() {
    let mut tested = 0;
    for (name, o) in test_orders(40) {
        let Some(f) = tree3(&o) else { continue };
        tested += 1;
        assert!(f.len() <= tree3_bound(&o).unwrap(), "{name}");
        assert_hitting(&name, &o, &f, 3);
    }
    for seed in 0..20u64 {
        let o = Order::random_forest(20, 1 + seed as usize % 5, 0.1, 1000 + seed);
        let f = tree3(&o).unwrap();
        assert!(f.len() <= tree3_bound(&o).unwrap());
        assert_hitting(&format!("forest seed {seed}"), &o, &f, 3);
        tested += 1;
    }
    assert!(tested >= 50, "only {tested} forests");
    let diamond = Order::from_edges(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    assert!(tree3(&diamond).is_none());
}

#[test]
fn antichain_cover_is_d_hitting_within_the_greedy_bound() {
    for d in 2..=4 {
        let max_n = if d == 4 { 9 } else { 12 };
        for n in d..=max_n {
            let o = Order::antichain(n);
            let f = antichain_cover(&o, d).unwrap();
            assert!(
                f.len() <= antichain_bound(n, d),
                "A_{n} d={d}: {} > {}",
                f.len(),
                antichain_bound(n, d)
            );
            // Each schedule hits C(n, d) tuples of the n!/(n-d)!: at least d! are needed.
            assert!(f.len() >= (1..=d).product::<usize>().min(falling(n, d)));
            assert_hitting(&format!("A_{n}"), &o, &f, d);
        }
    }
    assert!(antichain_cover(&Order::chain(3), 2).is_none());
}

/// The general greedy cover (the heuristic with the forced fallback) also terminates with a
/// d-hitting family on orders that are not antichains.
#[test]
fn greedy_cover_is_d_hitting_on_random_orders() {
    for seed in 0..8u64 {
        let o = Order::random(8, 0.3, 200 + seed);
        for d in 2..=4 {
            let f = cover(&o, d, Vec::new());
            assert!(f.len() <= count_admissible(&o, d).max(1));
            assert_hitting(&format!("random seed {seed}"), &o, &f, d);
        }
    }
}

#[test]
fn family_is_d_hitting_and_within_the_bounds() {
    for (name, o) in test_orders(31) {
        for d in 2..=4 {
            if d == 4 && o.len() > 12 {
                continue;
            }
            let (c, f) = family(&o, d);
            assert!(!f.is_empty());
            assert_hitting(&format!("{name} ({c:?})"), &o, &f, d);
            let is_forest = o.forest_parents().is_some();
            if d == 2 && is_forest {
                assert!(f.len() <= 2, "{name}: {} schedules at d=2", f.len());
            }
            if d == 3 && is_forest {
                assert!(f.len() <= tree3_bound(&o).unwrap(), "{name}");
                assert!(f.len() <= 2 * o.len(), "{name}");
            }
            if o.is_antichain() && o.len() >= d {
                assert!(f.len() <= antichain_bound(o.len(), d), "{name} d={d}");
            }
        }
    }
    for h in 1..=5u32 {
        let (_, f) = family(&Order::binary_tree(h), 3);
        assert!(f.len() <= 4 * h as usize, "T^{h}");
    }
    // Orders too small for d, or total, get one schedule.
    assert_eq!(family(&Order::antichain(2), 3).1.len(), 1);
    assert_eq!(
        family(&Order::chain(6), 4),
        (Construction::Single, vec![vec![0, 1, 2, 3, 4, 5]])
    );
}

/// Prints the size table of the report: `cargo test --release -p pos-sched --lib
/// hitting::tests::size_table -- --ignored --nocapture`.
#[test]
#[ignore]
fn size_table() {
    let mut rows: Vec<(String, Order)> = vec![
        ("chain(8)".into(), Order::chain(8)),
        ("chain(8)+†".into(), Order::chain_and_one(8)),
        ("A_8".into(), Order::antichain(8)),
        ("A_12".into(), Order::antichain(12)),
        ("random(10,0.3,s=3)".into(), Order::random(10, 0.3, 3)),
        ("random(12,0.2,s=7)".into(), Order::random(12, 0.2, 7)),
        ("random(100,0.04,s=77)".into(), Order::random(100, 0.04, 77)),
    ];
    for h in 2..=7 {
        rows.push((format!("T^{h}"), Order::binary_tree(h)));
    }
    println!("| order | n | d | construction | size | bound |");
    println!("|---|---|---|---|---|---|");
    for (name, o) in rows {
        let n = o.len();
        for d in 2..=4usize {
            if d == 4 && n > 15 {
                continue;
            }
            let mut lines: Vec<(String, usize, String)> = Vec::new();
            if let Some(f) = dfs_pair(&o) {
                if d == 2 {
                    lines.push(("λ/ρ".into(), f.len(), "2".into()));
                }
            }
            if d == 2 {
                lines.push((
                    "extremes+greedy".into(),
                    extremes_and_greedy(&o).len(),
                    "-".into(),
                ));
            }
            let two = dfs_pair(&o).unwrap_or_else(|| extremes_and_greedy(&o));
            if d >= 3 {
                let b = two.len() * falling(n, d - 2);
                lines.push(("bags".into(), bags(&o, d, &two).len(), format!("{b}")));
            }
            if d == 3 {
                if let Some(f) = tree3(&o) {
                    lines.push((
                        "tree3".into(),
                        f.len(),
                        format!("{}", tree3_bound(&o).unwrap()),
                    ));
                }
            }
            if !o.is_antichain() && n <= 15 && d >= 3 {
                lines.push((
                    "greedy cover".into(),
                    cover(&o, d, Vec::new()).len(),
                    "-".into(),
                ));
            }
            if let Some(f) = antichain_cover(&o, d) {
                lines.push((
                    "antichain greedy".into(),
                    f.len(),
                    format!("{}", antichain_bound(n, d)),
                ));
            }
            let (c, f) = family(&o, d);
            assert_eq!(check(&o, &f, d), Ok(None));
            lines.push((format!("family() = {c:?}"), f.len(), "-".into()));
            for (c, size, bound) in lines {
                println!("| {name} | {n} | {d} | {c} | {size} | {bound} |");
            }
        }
    }
}

/// A larger order, of the size a pruned run could have: the family is built and verified.
#[test]
fn hundred_event_order_at_depth_3() {
    let o = Order::random(100, 0.04, 77);
    let (c, f) = family(&o, 3);
    assert_eq!(c, Construction::Bags);
    let two = extremes_and_greedy(&o).len();
    assert!(f.len() <= two * 100, "{} > {two}·n", f.len());
    assert_hitting("random(100)", &o, &f, 3);
    let t = Order::binary_tree(7); // 127 events
    let (c, f) = family(&t, 3);
    assert_eq!((c, f.len()), (Construction::Tree3, 24));
    assert_hitting("T^7", &t, &f, 3);
}

#[test]
fn adding_an_edge_closes_transitively_and_refuses_cycles() {
    let mut o = Order::from_edges(5, &[(0, 1), (2, 3)]).unwrap();
    assert!(o.add(1, 2));
    assert!(o.lt(0, 3) && o.lt(1, 3) && o.lt(0, 2));
    assert!(!o.add(3, 0), "3 -> 0 would close a cycle");
    assert!(!o.lt(3, 0) && !o.add(4, 4));
    assert!(o.unordered(4, 0));
    // The result is the order generated by all the edges.
    assert_eq!(o, Order::from_edges(5, &[(0, 1), (2, 3), (1, 2)]).unwrap());
}

#[test]
fn families_are_reproducible() {
    for (name, o) in test_orders(12) {
        for d in 2..=3 {
            assert_eq!(family(&o, d), family(&o, d), "{name} d={d}");
        }
    }
}
