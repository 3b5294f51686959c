//! The checker: enumerates the admissible `d`-tuples of an order and looks for one that no
//! schedule of a family hits. Exponential in `d` (about `n^d · |family|` steps in the worst
//! case), meant for tests and for verifying a family built for a small (pruned) order.

use super::order::{positions, Order};
use std::fmt;

/// Why a family could not be checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// Schedule number `index` of the family is not a linearization of the order.
    NotLinearization { index: usize },
    /// `d` must be at least 1.
    ZeroDepth,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NotLinearization { index } => {
                write!(
                    f,
                    "schedule {index} of the family is not a linearization of the order"
                )
            }
            CheckError::ZeroDepth => write!(f, "the depth d must be at least 1"),
        }
    }
}

impl std::error::Error for CheckError {}

/// Whether `tuple` is admissible: its events are distinct and no later event of the tuple is
/// ordered before an earlier one (`tuple[j] < tuple[i]` for no `i < j`).
pub fn admissible(order: &Order, tuple: &[usize]) -> bool {
    tuple
        .iter()
        .enumerate()
        .all(|(j, &b)| b < order.len() && tuple[..j].iter().all(|&a| a != b && !order.lt(b, a)))
}

/// Whether the schedule with positions `pos` (see [`positions`]) hits `tuple`: runs its events
/// in the tuple's order.
pub fn hits(pos: &[usize], tuple: &[usize]) -> bool {
    tuple.windows(2).all(|w| pos[w[0]] < pos[w[1]])
}

/// Calls `visit` on every admissible `d`-tuple of `order`, in lexicographic order, until it
/// returns `false`.
pub fn for_each_admissible(order: &Order, d: usize, mut visit: impl FnMut(&[usize]) -> bool) {
    let mut tuple = Vec::with_capacity(d);
    walk(order, d, &mut tuple, &mut visit);
}

/// Depth-first walk over admissible tuples, extending `tuple`; `visit` sees each complete
/// tuple and returns `false` to stop.
fn walk(
    order: &Order,
    d: usize,
    tuple: &mut Vec<usize>,
    visit: &mut dyn FnMut(&[usize]) -> bool,
) -> bool {
    if tuple.len() == d {
        return visit(tuple);
    }
    for b in 0..order.len() {
        if tuple.iter().any(|&a| a == b || order.lt(b, a)) {
            continue;
        }
        tuple.push(b);
        let go_on = walk(order, d, tuple, visit);
        tuple.pop();
        if !go_on {
            return false;
        }
    }
    true
}

/// The number of admissible `d`-tuples of `order`.
pub fn count_admissible(order: &Order, d: usize) -> usize {
    let mut count = 0;
    for_each_admissible(order, d, |_| {
        count += 1;
        true
    });
    count
}

/// Checks that `family` is `d`-hitting for `order`: `Ok(None)` if every admissible `d`-tuple is
/// hit by some schedule of the family, `Ok(Some(t))` with the first (lexicographically)
/// admissible tuple `t` that none hits, `Err` if a schedule is not a linearization.
pub fn check(
    order: &Order,
    family: &[Vec<usize>],
    d: usize,
) -> Result<Option<Vec<usize>>, CheckError> {
    check_among(order, family, d, None)
}

/// As [`check`], but only for the tuples whose first event is in `firsts` (when given): the
/// property of a family built with its first events restricted (see
/// [`super::bags::bags_among`]).
pub fn check_among(
    order: &Order,
    family: &[Vec<usize>],
    d: usize,
    firsts: Option<&[usize]>,
) -> Result<Option<Vec<usize>>, CheckError> {
    if d == 0 {
        return Err(CheckError::ZeroDepth);
    }
    if let Some(index) = family.iter().position(|s| !order.is_linearization(s)) {
        return Err(CheckError::NotLinearization { index });
    }
    let pos: Vec<Vec<usize>> = family.iter().map(|s| positions(s)).collect();
    // Depth-first over tuple prefixes, carrying the schedules that hit the prefix so far.
    let mut tuple = Vec::with_capacity(d);
    let mut missed = None;
    let all: Vec<usize> = (0..family.len()).collect();
    prefix_walk(order, d, firsts, &pos, &mut tuple, &all, &mut missed);
    Ok(missed)
}

/// One level of [`check_among`]'s walk: `alive` = the schedules hitting `tuple`. Returns
/// `false` once an unhit tuple is stored in `missed`.
fn prefix_walk(
    order: &Order,
    d: usize,
    firsts: Option<&[usize]>,
    pos: &[Vec<usize>],
    tuple: &mut Vec<usize>,
    alive: &[usize],
    missed: &mut Option<Vec<usize>>,
) -> bool {
    if tuple.len() == d {
        if alive.is_empty() {
            *missed = Some(tuple.clone());
            return false;
        }
        return true;
    }
    for b in 0..order.len() {
        if tuple.is_empty() {
            if let Some(f) = firsts {
                if !f.contains(&b) {
                    continue;
                }
            }
        }
        if tuple.iter().any(|&a| a == b || order.lt(b, a)) {
            continue;
        }
        let next: Vec<usize> = match tuple.last() {
            None => alive.to_vec(),
            Some(&a) => alive
                .iter()
                .copied()
                .filter(|&s| pos[s][a] < pos[s][b])
                .collect(),
        };
        tuple.push(b);
        let go_on = prefix_walk(order, d, firsts, pos, tuple, &next, missed);
        tuple.pop();
        if !go_on {
            return false;
        }
    }
    true
}
