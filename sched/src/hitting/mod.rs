//! d-hitting families of schedules (Chistikov, Majumdar, Niksic, "Hitting Families of Schedules
//! for Asynchronous Programs", CAV 2016, arXiv:1602.03755), on abstract finite partial orders.
//!
//! Definitions. The paper's abstract and §1 (Introduction) call a family d-hitting when, for
//! every choice of `d` events and every order of them that the partial order allows, some
//! schedule of the family runs them in that order. Its formal §2 could not be consulted here,
//! so the admissibility test below is derived from that statement:
//! - An *order* is a finite strict partial order `<` on events `0..n` ([`order::Order`]); a
//!   *schedule* is a linearization of it: every event once, `a` before `b` whenever `a < b`.
//! - A schedule *hits* a d-tuple `(a1, …, ad)` of distinct events if it runs `a1` before `a2`
//!   before … before `ad`.
//! - A d-tuple is *admissible* (an "allowed ordering" of `d` events) if some schedule hits it.
//!   Implemented as the equivalent local test ([`check::admissible`]): the `ai` are distinct and
//!   `aj < ai` for no `i < j`. (If that holds, adding the edges `a1 → a2 → … → ad` to the order
//!   creates no cycle, since a cycle would need an order edge going back in the tuple, so some
//!   linearization runs them in that order; the converse is immediate.)
//! - A family of schedules is *d-hitting* if every admissible d-tuple is hit by at least one of
//!   its schedules. A bug of depth `d` (exposed by every schedule that runs some `d` events in
//!   some allowed order) is then exposed by some schedule of any d-hitting family.
//!
//! 2-hitting families are exactly realizers, so the smallest one has the order's dimension in
//! size, which is NP-hard to compute in general; on trees and balanced trees the paper gives
//! small explicit families. Constructions here:
//! - d = 2 on forests: λ and ρ, the two depth-first linearizations ([`forest::dfs_pair`], ≤ 2);
//! - d = 2 on any order: two extreme linearizations plus greedy completion
//!   ([`greedy::extremes_and_greedy`]);
//! - any d ≥ 3 on any order: bags agreeing on `a1 … a(d-2)` with λ'/ρ' ([`bags::bags`],
//!   ≤ |2-hitting family| · n^(d-2); its race-pruned variant [`bags::bags_among`]);
//! - d = 3 on forests: the cut family ([`tree3::tree3`], `4(h-1)` on `T^h`, O(log n) on
//!   balanced trees);
//! - antichains, any d: greedy set cover ([`greedy::antichain_cover`], ≤ ⌈d!·d·ln n⌉);
//! - any order, any d: the same greedy cover as a heuristic ([`greedy::cover`]; no bound
//!   beyond the number of admissible tuples), for small orders.
//!
//! [`family`] picks the smallest applicable one; [`check::check`] verifies a family by
//! enumerating the admissible tuples.

pub mod bags;
pub mod check;
pub mod forest;
pub mod greedy;
pub mod order;
pub mod tree3;

#[cfg(test)]
mod tests;

pub use check::{check, CheckError};
pub use order::{Order, OrderError};

/// Which construction [`family`] used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construction {
    /// One linearization: no two events can be reordered, or `d ≤ 1`, or fewer than `d` events.
    Single,
    /// λ and ρ on a forest (d = 2).
    DfsPair,
    /// Extreme linearizations plus greedy completion (d = 2).
    ExtremesGreedy,
    /// Bags on `a1 … a(d-2)` with λ'/ρ' (any d ≥ 3).
    Bags,
    /// The cut family on a forest (d = 3).
    Tree3,
    /// Greedy set cover on an antichain.
    AntichainCover,
    /// Greedy set cover on any order, tried when it has few d-tuples (see [`GREEDY_LIMIT`]).
    GreedyCover,
}

/// [`family`] also tries the general greedy cover ([`greedy::cover`]) when
/// `n·(n-1)⋯(n-d+1)` is at most this: its cost grows with the number of tuples times `n` per
/// schedule, and on small orders it often beats the bags (e.g. 17 against 29 schedules for
/// d = 3 on a random order of 10 events).
pub const GREEDY_LIMIT: usize = 50_000;

/// A d-hitting family for `order`, from the smallest of the constructions that apply (see the
/// module doc), with the construction used. Never empty.
pub fn family(order: &Order, d: usize) -> (Construction, Vec<Vec<usize>>) {
    let single = || vec![order.linearize(|_, _| 0)];
    if d <= 1 || order.len() < d {
        return (Construction::Single, single());
    }
    let two = match forest::dfs_pair(order) {
        Some(f) => (Construction::DfsPair, f),
        None => (
            Construction::ExtremesGreedy,
            greedy::extremes_and_greedy(order),
        ),
    };
    if two.1.len() <= 1 {
        // One schedule hits every admissible pair: the order is total, every tuple too.
        return (Construction::Single, two.1);
    }
    if d == 2 {
        return two;
    }
    let mut best = (Construction::Bags, bags::bags(order, d, &two.1));
    let mut consider = |c: Construction, f: Option<Vec<Vec<usize>>>| {
        if let Some(f) = f {
            if f.len() < best.1.len() {
                best = (c, f);
            }
        }
    };
    if d == 3 {
        consider(Construction::Tree3, tree3::tree3(order));
    }
    consider(
        Construction::AntichainCover,
        greedy::antichain_cover(order, d),
    );
    // n·(n-1)⋯(n-d+1) bounds the number of admissible d-tuples (n ≥ d here).
    let tuples = (0..d)
        .map(|i| order.len() - i)
        .try_fold(1usize, |acc, x| acc.checked_mul(x))
        .unwrap_or(usize::MAX);
    if tuples <= GREEDY_LIMIT && !order.is_antichain() {
        consider(
            Construction::GreedyCover,
            Some(greedy::cover(order, d, Vec::new())),
        );
    }
    best
}
