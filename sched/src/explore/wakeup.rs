//! Wakeup trees (Abdulla et al., POPL'14, §6.1-6.2): the ordered tree of sequences a state of
//! Optimal-DPOR must still explore, with the insertion operation `insert[E](v, wut)`.

use super::trace::{is_weak_initial_at, placed, remove_first, BarrierCounts, TEv};

/// A node of a wakeup tree: an event and the branches below it, leftmost first.
#[derive(Clone, Debug)]
pub struct WNode {
    pub ev: TEv,
    pub children: Vec<WNode>,
}

impl WNode {
    /// The chain `w[0] → w[1] → ...` (non-empty `w`).
    fn chain(w: &[TEv]) -> Option<WNode> {
        let (first, rest) = w.split_first()?;
        Some(WNode {
            ev: *first,
            children: WNode::chain(rest).into_iter().collect(),
        })
    }
}

/// `insert[E](v, wut)` on the branches `level` of a state: walk down through the leftmost
/// child whose event is a weak initial of what remains of `v`; stop without change at a leaf
/// (an existing branch already covers `v`), otherwise add the rest of `v` as a new rightmost
/// branch where no child matches. `ctx` is `E`, the run up to the state (weak initials of
/// barrier arrivals depend on their place, see [`is_weak_initial_at`]).
pub fn insert(mut level: &mut Vec<WNode>, v: Vec<TEv>, ctx: &[TEv], counts: &BarrierCounts) {
    let mut w = v;
    let mut ctx = ctx.to_vec();
    loop {
        match level
            .iter()
            .position(|c| is_weak_initial_at(&ctx, &w, &c.ev, counts))
        {
            Some(k) => {
                if level[k].children.is_empty() {
                    return;
                }
                let here = placed(&ctx, &[level[k].ev], counts);
                ctx.extend(here);
                w = remove_first(&w, level[k].ev.tid());
                if w.is_empty() {
                    return;
                }
                level = &mut level[k].children;
            }
            None => {
                level.extend(WNode::chain(&w));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, Op};

    fn w(tid: u32, addr: u64) -> TEv {
        TEv::new(Event::new(tid, Op::Write { addr, size: 8 }))
    }

    #[test]
    fn insertion_reuses_equivalent_branches() {
        let mut level = Vec::new();
        let c = BarrierCounts::new();
        insert(&mut level, vec![w(1, 8), w(2, 16)], &[], &c);
        assert_eq!(level.len(), 1);
        // [t2:y, t1:x] is equivalent to [t1:x, t2:y]: it ends at the existing leaf.
        insert(&mut level, vec![w(2, 16), w(1, 8)], &[], &c);
        assert_eq!(level.len(), 1);
        assert_eq!(level[0].children.len(), 1);
        // [t1:x, t3:x]: after t1, t3's write of x is independent of the leaf t2:y, so any
        // run extending t1.t2 covers it: unchanged.
        insert(&mut level, vec![w(1, 8), w(3, 8)], &[], &c);
        assert_eq!(level[0].children.len(), 1);
        // [t1:x, t3:y] conflicts with t2:y: it branches below t1.
        insert(&mut level, vec![w(1, 8), w(3, 16)], &[], &c);
        assert_eq!(level.len(), 1);
        assert_eq!(level[0].children.len(), 2);
        // [t3:x] conflicts with t1's write of x: a new branch at the root.
        insert(&mut level, vec![w(3, 8)], &[], &c);
        assert_eq!(level.len(), 2);
    }
}
