//! An explicit 3-hitting family for tree (forest) orders of size O(height · log(fan-out)):
//! `4(h-1)` schedules on the balanced binary tree `T^h` with `h` levels, i.e. O(log n). The
//! paper (§4) gives an explicit O(log n) family of size at most `4h` for balanced trees; its
//! text was not available here, so this is a construction of ours that meets the same bound,
//! with the proof below (and every family is verified by enumeration in the tests).
//!
//! Each event `v` at depth `ℓ ≥ 1` (roots at depth 0; a forest with several roots gets a
//! virtual root above them, so its roots are at depth 1) has a child index `idx(v)` among its
//! parent's children (in increasing event number). A *cut* is a pair `(ℓ, j)` of a level and a
//! bit position `j < B(ℓ) = max(1, ⌈log2 k(ℓ)⌉)`, `k(ℓ)` being the largest number of children
//! of a node at depth `ℓ-1`. For a cut and a side `g ∈ {0,1}`, `D(ℓ, j, g)` holds the events of
//! depth `< ℓ` and those whose ancestor-or-self `u` at depth `ℓ` has bit `j` of `idx(u)` equal
//! to `g`; `U` is the rest. `D` is closed downwards. The family: for every cut, side and
//! depth-first order `o ∈ {λ, ρ}`, the schedule `o|D · o|U` (each part in the order of `o`).
//!
//! Why it is 3-hitting. Let `(a, b, c)` be admissible. Say `x` *agrees with `c`* at a cut if
//! `x` has depth `≥ ℓ` and its depth-`ℓ` ancestor has the same bit `j` as `c`'s. At a cut
//! `(ℓ, j)` with `ℓ ≤ depth(c)`, take `g` = the other side than `c`'s, so `c ∈ U`:
//! - if neither `a` nor `b` agrees with `c`, both are in `D`, and `o` can be chosen to run `a`
//!   before `b` (they are unordered, or `a < b`): hit;
//! - if `a` does not agree and `b` agrees, `a ∈ D` and `b, c ∈ U`, and `o` can be chosen to run
//!   `b` before `c`: hit.
//!
//! So a miss needs `a` to agree with `c` at every cut of the levels `1..=depth(c)` (every level
//! has at least one cut): `a`'s ancestor at depth `depth(c)` has the same child index as `c`
//! on every level, so it is `c`, and `c ≤ a`, which admissibility forbids.
//!
//! Bound: `4 · Σ_{ℓ=1..H} B(ℓ)` schedules before repeats are removed (`H` = the largest depth);
//! `4(h-1) ≤ 4h` on `T^h`.

use super::forest::Forest;
use super::order::{dedup, restrict, Order};

/// Depth, child index and parent of every event of a forest, and the fan-out `k(ℓ)` feeding
/// each level `ℓ ≥ 1` (index 0 unused).
struct Levels {
    depth: Vec<usize>,
    idx: Vec<usize>,
    parent: Vec<usize>,
    fan: Vec<usize>,
}

impl Levels {
    fn of(forest: &Forest, n: usize) -> Levels {
        let virtual_root = forest.roots.len() > 1;
        let mut depth = vec![0usize; n];
        let mut idx = vec![0usize; n];
        let mut parent = vec![usize::MAX; n];
        let mut stack: Vec<usize> = Vec::new();
        for (i, &r) in forest.roots.iter().enumerate() {
            depth[r] = usize::from(virtual_root);
            idx[r] = i;
            stack.push(r);
        }
        while let Some(v) = stack.pop() {
            for (i, &c) in forest.children[v].iter().enumerate() {
                depth[c] = depth[v] + 1;
                idx[c] = i;
                parent[c] = v;
                stack.push(c);
            }
        }
        let max_depth = depth.iter().copied().max().unwrap_or(0);
        let mut fan = vec![0usize; max_depth + 1];
        if virtual_root {
            fan[1] = forest.roots.len();
        }
        for v in 0..n {
            if depth[v] < max_depth {
                fan[depth[v] + 1] = fan[depth[v] + 1].max(forest.children[v].len());
            }
        }
        Levels {
            depth,
            idx,
            parent,
            fan,
        }
    }

    /// `v`'s ancestor-or-self at depth `l` (`l ≤ depth(v)`).
    fn ancestor_at(&self, mut v: usize, l: usize) -> usize {
        while self.depth[v] > l {
            v = self.parent[v];
        }
        v
    }

    /// The number of cuts, `Σ_ℓ B(ℓ)`.
    fn cuts(&self) -> usize {
        self.fan.iter().skip(1).map(|&k| bits_for(k)).sum()
    }
}

/// The cut family described in the module doc; `None` if `order` is not a forest.
pub fn tree3(order: &Order) -> Option<Vec<Vec<usize>>> {
    let forest = Forest::of(order)?;
    let n = order.len();
    let lv = Levels::of(&forest, n);
    let orders = [forest.dfs(false), forest.dfs(true)];
    let mut family = Vec::new();
    for (l, &k) in lv.fan.iter().enumerate().skip(1) {
        for j in 0..bits_for(k) {
            for g in 0..2usize {
                let in_d: Vec<bool> = (0..n)
                    .map(|v| lv.depth[v] < l || (lv.idx[lv.ancestor_at(v, l)] >> j) & 1 == g)
                    .collect();
                let in_u: Vec<bool> = in_d.iter().map(|&x| !x).collect();
                for o in &orders {
                    let mut s = restrict(o, &in_d);
                    s.extend(restrict(o, &in_u));
                    family.push(s);
                }
            }
        }
    }
    if family.is_empty() {
        family.extend(orders);
    }
    Some(dedup(family))
}

/// `max(1, ⌈log2 k⌉)`: the bits that tell `k` child indices apart (one even for a single child).
fn bits_for(k: usize) -> usize {
    let mut bits = 1;
    while (1usize << bits) < k {
        bits += 1;
    }
    bits
}

/// The bound of [`tree3`] before removing repeats: `4 · Σ_ℓ B(ℓ)` (at least 1); `4(h-1)` on
/// `T^h`. `None` if `order` is not a forest.
pub fn tree3_bound(order: &Order) -> Option<usize> {
    let forest = Forest::of(order)?;
    Some((4 * Levels::of(&forest, order.len()).cuts()).max(1))
}
