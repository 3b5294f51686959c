//! Forest orders (every event has at most one immediate predecessor) and their two depth-first
//! linearizations λ (left to right) and ρ (right to left): a 2-hitting family of size 2.

use super::order::{dedup, Order};

/// The Hasse diagram of a forest order: roots and children, both in increasing event number
/// (that numbering defines "left" and "right").
#[derive(Clone, Debug)]
pub struct Forest {
    pub roots: Vec<usize>,
    pub children: Vec<Vec<usize>>,
}

impl Forest {
    /// The forest of `order`, or `None` if some event has two immediate predecessors.
    pub fn of(order: &Order) -> Option<Forest> {
        let parents = order.forest_parents()?;
        let mut roots = Vec::new();
        let mut children = vec![Vec::new(); order.len()];
        for (v, p) in parents.iter().enumerate() {
            match p {
                None => roots.push(v),
                Some(p) => children[*p].push(v),
            }
        }
        Some(Forest { roots, children })
    }

    /// Preorder depth-first linearization: λ (`reverse == false`, roots and children in
    /// increasing number) or ρ (`reverse == true`, in decreasing number).
    pub fn dfs(&self, reverse: bool) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.children.len());
        let mut stack: Vec<usize> = self.roots.clone();
        if !reverse {
            stack.reverse();
        }
        while let Some(v) = stack.pop() {
            out.push(v);
            let kids = &self.children[v];
            if reverse {
                stack.extend(kids.iter().copied());
            } else {
                stack.extend(kids.iter().rev().copied());
            }
        }
        out
    }
}

/// d = 2 on forests (the paper's tree case): the left-to-right and right-to-left depth-first
/// linearizations λ and ρ. Rule: a depth-first traversal keeps every subtree contiguous, so two
/// unordered events `x`, `y` (disjoint subtrees) are run `x` first by one traversal and `y`
/// first by the other; ordered pairs are hit by any linearization. Bound: size ≤ 2 (1 when the
/// two coincide, e.g. on a chain). `None` if `order` is not a forest.
pub fn dfs_pair(order: &Order) -> Option<Vec<Vec<usize>>> {
    let forest = Forest::of(order)?;
    Some(dedup(vec![forest.dfs(false), forest.dfs(true)]))
}
