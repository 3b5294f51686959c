//! The O(n^(d-2)) construction for any d ≥ 3: one bag of schedules per admissible
//! `(d-2)`-tuple `(a1, …, a(d-2))`, all of whose schedules agree on a prefix that runs
//! `a1, …, a(d-2)` in this order as early as possible; the bag then finishes with each
//! schedule of a 2-hitting family (λ and ρ on a tree) restricted to the events left: λ', ρ'.

use super::check::for_each_admissible;
use super::order::{dedup, restrict, Order};

/// The prefix of the bag of `firsts` (an admissible tuple): for each `a` of `firsts` in turn,
/// the not yet placed events below `a` (in the order of `base`, a linearization), then `a`.
/// Returns the prefix and the set of placed events.
fn prefix(order: &Order, firsts: &[usize], base: &[usize]) -> (Vec<usize>, Vec<bool>) {
    let mut placed = vec![false; order.len()];
    let mut out = Vec::new();
    for &a in firsts {
        for &v in base {
            if !placed[v] && order.lt(v, a) {
                placed[v] = true;
                out.push(v);
            }
        }
        // `a` is not placed yet: it is below no earlier event of an admissible tuple.
        placed[a] = true;
        out.push(a);
    }
    (out, placed)
}

/// The d-hitting family of bags. `two` must be a 2-hitting family of `order` (e.g.
/// [`super::forest::dfs_pair`] on a tree, [`super::greedy::extremes_and_greedy`] otherwise).
///
/// Rule: for every admissible `(d-2)`-tuple `(a1, …, a(d-2))`, the prefix runs, for `i = 1, …,
/// d-2`, the events below `ai` not yet run, then `ai`; each schedule `s` of `two` then
/// contributes `prefix · s'`, `s'` being `s` restricted to the events not in the prefix.
/// Why it hits an admissible `(a1, …, ad)`: the prefix of `(a1, …, a(d-2))` runs them in order
/// and contains only events below some `ai` (i ≤ d-2), which `a(d-1)` and `ad` are not
/// (admissibility); the rest is an up-set on which the restrictions of `two` are
/// linearizations and still 2-hitting, so one of them runs `a(d-1)` before `ad`.
/// Bound: at most `|two| · n·(n-1)⋯(n-d+3) ≤ |two| · n^(d-2)` schedules (2n for d = 3 on a
/// tree), fewer after removing repeats (n+1 on a chain ∥ {†}, which is optimal). For `d ≤ 2`
/// this is `two` itself.
pub fn bags(order: &Order, d: usize, two: &[Vec<usize>]) -> Vec<Vec<usize>> {
    bags_among(order, d, two, None)
}

/// [`bags`] with the first event `a1` of the bags restricted to `firsts` when given (the
/// race-pruned variant: `a1` among the racing events gives at most `2r` schedules for d = 3 on
/// a tree). The family hits every admissible d-tuple whose first event is in `firsts` (see
/// [`super::check::check_among`]).
pub fn bags_among(
    order: &Order,
    d: usize,
    two: &[Vec<usize>],
    firsts: Option<&[usize]>,
) -> Vec<Vec<usize>> {
    if d <= 2 || order.len() < d {
        return two.to_vec();
    }
    let Some(base) = two.first() else {
        return Vec::new();
    };
    let mut family = Vec::new();
    for_each_admissible(order, d - 2, |t| {
        if let Some(f) = firsts {
            if !f.contains(&t[0]) {
                return true;
            }
        }
        let (pre, placed) = prefix(order, t, base);
        let rest: Vec<bool> = placed.iter().map(|&p| !p).collect();
        for s in two {
            let mut sched = pre.clone();
            sched.extend(restrict(s, &rest));
            family.push(sched);
        }
        true
    });
    dedup(family)
}
