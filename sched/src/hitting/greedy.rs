//! Greedy set cover over admissible tuples: schedules are added one at a time, each built to
//! hit as many not-yet-hit tuples as it can, until every admissible `d`-tuple is hit.
//!
//! Each new schedule is built event by event. The score of placing event `v` next is the change
//! it makes to the expected number of still-unhit tuples that a uniformly random completion of
//! the schedule would hit: with `k` events of a tuple already placed in the tuple's order (and
//! none of its other events), a random order of the rest finishes it with probability
//! `1/(d-k)!`; placing the tuple's next event raises that to `1/(d-k-1)!`, placing a later one
//! drops it to 0. On an antichain every order of the remaining events is possible, so this is
//! the method of conditional expectations and the schedule hits at least `1/d!` of the
//! remaining tuples. On other orders that score is only a heuristic, so each round also builds
//! a schedule that forces a maximal consistent set of the unhit tuples into the order (the
//! first unhit tuple always fits) and keeps whichever of the two hits more: every round hits a
//! new tuple, and the loop ends.

use super::check::{for_each_admissible, hits};
use super::order::{positions, Order};

/// `k!` for small `k` (saturating).
fn factorial(k: usize) -> u64 {
    (1..=k as u64).fold(1u64, |f, i| f.saturating_mul(i))
}

/// The greedy cover: starting from `initial` (linearizations of `order`), adds schedules until
/// every admissible `d`-tuple is hit. Returns `initial` followed by the added schedules.
pub fn cover(order: &Order, d: usize, initial: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
    let mut family = initial;
    let n = order.len();
    if d == 0 || n == 0 {
        if family.is_empty() {
            family.push(order.linearize(|_, _| 0));
        }
        return family;
    }
    let pos: Vec<Vec<usize>> = family.iter().map(|s| positions(s)).collect();
    let mut unhit: Vec<usize> = Vec::new(); // flattened d-tuples
    for_each_admissible(order, d, |t| {
        if !pos.iter().any(|p| hits(p, t)) {
            unhit.extend_from_slice(t);
        }
        true
    });
    // weight[k] = d!/(d-k)!: d! times the chance that a tuple with k events placed is finished.
    let weight: Vec<i64> = (0..=d)
        .map(|k| (factorial(d) / factorial(d - k)) as i64)
        .collect();
    let antichain = order.is_antichain();
    while !unhit.is_empty() || family.is_empty() {
        let mut s = build(order, d, &unhit, &weight);
        if !antichain {
            // Not an antichain: the expectation argument does not hold; also try forcing a
            // maximal consistent set of tuples, and keep whichever schedule hits more.
            let mut best = count_hits(&s, d, &unhit);
            for attempt in 0..FORCE_ATTEMPTS {
                let forced = force(order, d, &unhit, attempt, family.len() as u64);
                let h = count_hits(&forced, d, &unhit);
                if h > best {
                    (s, best) = (forced, h);
                }
            }
        }
        let p = positions(&s);
        unhit = unhit
            .chunks(d)
            .filter(|t| !hits(&p, t))
            .flatten()
            .copied()
            .collect();
        family.push(s);
    }
    family
}

/// How many of the flattened `unhit` tuples the schedule `s` hits.
fn count_hits(s: &[usize], d: usize, unhit: &[usize]) -> usize {
    let p = positions(s);
    unhit.chunks(d).filter(|t| hits(&p, t)).count()
}

/// How many visiting orders of the unhit tuples [`force`] tries per round.
const FORCE_ATTEMPTS: u64 = 4;

/// A schedule hitting a maximal consistent set of the `unhit` tuples: each tuple in turn is
/// added to a copy of the order as the chain `a1 < … < ad` if that makes no cycle, then the
/// copy is linearized. The tuples are visited in their order (`attempt` 0), reversed (1), or
/// shuffled from a seed made of `attempt` and `round` (fixed, so the family is reproducible).
/// The first tuple visited always fits (it is admissible), so it is hit.
fn force(order: &Order, d: usize, unhit: &[usize], attempt: u64, round: u64) -> Vec<usize> {
    let mut visit: Vec<usize> = (0..unhit.len() / d).collect();
    match attempt {
        0 => {}
        1 => visit.reverse(),
        _ => {
            let mut rng = crate::rng::Rng::new(crate::rng::try_seed(round, attempt));
            for i in (1..visit.len()).rev() {
                visit.swap(i, rng.index(i + 1));
            }
        }
    }
    let mut forced = order.clone();
    for t in visit.iter().map(|&k| &unhit[k * d..(k + 1) * d]) {
        let fits = (0..d).all(|j| (0..j).all(|i| !forced.lt(t[j], t[i])));
        if fits {
            for w in t.windows(2) {
                let added = forced.add(w[0], w[1]);
                debug_assert!(added);
            }
        }
    }
    forced.linearize(|_, _| 0)
}

/// One greedy schedule against the flattened `unhit` tuples, by conditional expectations (see
/// the module doc).
fn build(order: &Order, d: usize, unhit: &[usize], weight: &[i64]) -> Vec<usize> {
    let t_count = unhit.len() / d;
    // progress[t] = how many of tuple t's events are placed in its order; DEAD once broken.
    const DEAD: usize = usize::MAX;
    let mut progress = vec![0usize; t_count];
    let mut delta = vec![0i64; order.len()];
    order.linearize(|ready, _placed| {
        delta.iter_mut().for_each(|x| *x = 0);
        for (t, &k) in progress.iter().enumerate() {
            if k == DEAD || k == d {
                continue;
            }
            let tuple = &unhit[t * d..(t + 1) * d];
            delta[tuple[k]] += weight[k + 1] - weight[k];
            for &later in &tuple[k + 1..] {
                delta[later] -= weight[k];
            }
        }
        // The first ready event of largest score (`ready` is never empty).
        let mut i = 0;
        for (j, &v) in ready.iter().enumerate() {
            if delta[v] > delta[ready[i]] {
                i = j;
            }
        }
        let v = ready[i];
        for (t, k) in progress.iter_mut().enumerate() {
            if *k == DEAD || *k == d {
                continue;
            }
            let tuple = &unhit[t * d..(t + 1) * d];
            if tuple[*k] == v {
                *k += 1;
            } else if tuple[*k + 1..].contains(&v) {
                *k = DEAD;
            }
        }
        i
    })
}

/// d-hitting family for the antichain `A_n` by greedy set cover (conditional expectations).
/// Rule: see the module doc; each schedule hits at least a `1/d!` fraction of the admissible
/// tuples still unhit. Bound: at most `⌈d!·d·ln n⌉` schedules, since after `k` schedules fewer
/// than `n^d·(1-1/d!)^k ≤ n^d·e^(-k/d!)` tuples remain, which is below 1 once
/// `k ≥ d!·d·ln n`. `None` if `order` is not an antichain.
pub fn antichain_cover(order: &Order, d: usize) -> Option<Vec<Vec<usize>>> {
    if !order.is_antichain() {
        return None;
    }
    Some(cover(order, d, Vec::new()))
}

/// The bound `⌈d!·d·ln n⌉` of [`antichain_cover`] (at least 1).
pub fn antichain_bound(n: usize, d: usize) -> usize {
    let b = (factorial(d) as f64) * (d as f64) * (n.max(1) as f64).ln();
    (b.ceil() as usize).max(1)
}

/// d = 2 on any order: the two extreme linearizations (always run the smallest-numbered ready
/// event; always the largest) plus greedy completion over the unordered pairs neither hits.
/// Rule: set cover as in the module doc. Bound: no guarantee beyond
/// `2 + (number of unordered pairs)`; the optimum is the order's dimension, NP-hard to
/// compute in general.
pub fn extremes_and_greedy(order: &Order) -> Vec<Vec<usize>> {
    let low = order.linearize(|_, _| 0);
    let high = order.linearize(|ready, _| ready.len() - 1);
    let initial = super::order::dedup(vec![low, high]);
    cover(order, 2, initial)
}
