//! Futex words: their waiters, the wake *tokens* left for them, and requeue.
//!
//! As for condvar signals, a wake leaves tokens, each usable by one thread that was waiting
//! when the wake ran and whose bitset meets the wake's; the waiter whose [`Op::FutexWait`] the
//! strategy schedules takes the oldest token it may use, so which waiter a wake wakes is a
//! scheduling choice, recorded in the schedule as the order of the woken threads' events.
//!
//! Requeue ([`Op::FutexRequeued`], applied when posted, see [`Op::FutexRequeue`] for why):
//! with `w` waiters and `p` tokens not yet taken on `addr`, it leaves `k = min(n1, w - p)`
//! new tokens there and may move `m = min(n2, w - p - k)` waiters to `addr2`.
//! - `m = 0`: only the wake.
//! - `m = w - p - k` (every waiter is woken or moved: a broadcast, the common case): *all*
//!   waiters move to `addr2`, and the `p + k` tokens move with them, usable only by the
//!   moved group. So which waiters the requeue wakes stays a scheduling choice, and a later
//!   wake on `addr2` may wake any moved waiter not woken, as in the kernel.
//! - otherwise (some stay unwoken on `addr`): the newest `m` waiters move, the oldest stay
//!   with the tokens (every token can be taken by an old enough waiter); the choice of the
//!   woken is then among those that stay.
//!
//! A moved waiter's pending event is rewritten to wait on `addr2`, so its blocking, its
//! deadlock report and its races are those of the word it now waits on.

use super::{AddrMap, State, Status};
use crate::event::{Op, Tid};

#[derive(Clone, Debug, Default)]
pub(super) struct Futex {
    pub(super) next_seq: u64,
    /// (thread, arrival number, bitset), in arrival order.
    pub(super) waiters: Vec<(Tid, u64, u32)>,
    /// (from, upto, wake bitset): waiters with `from <= arrival < upto` may use it.
    pub(super) tokens: Vec<(u64, u64, u32)>,
}

impl Futex {
    /// Index of the oldest token that waiter (`seq`, `bitset`) may consume.
    pub(super) fn token_for(&self, seq: u64, bitset: u32) -> Option<usize> {
        self.tokens
            .iter()
            .position(|&(from, upto, mask)| from <= seq && upto > seq && mask & bitset != 0)
    }
}

/// Take `addr`'s entry out of `map` (empty if none).
fn take(map: &mut AddrMap<Futex>, addr: u64) -> Futex {
    map.remove(&addr).unwrap_or_default()
}

impl State {
    /// Perform a requeue posted by `t` (see the module doc); its result waits for `t`'s event.
    pub(super) fn requeue(&mut self, t: Tid, addr: u64, addr2: u64, n1: u32, n2: u32) {
        let mut f = take(&mut self.futexes, addr);
        let w = f.waiters.len();
        let p = f.tokens.len().min(w);
        let k = (n1 as usize).min(w - p);
        f.tokens
            .extend(std::iter::repeat_n((0, f.next_seq, u32::MAX), k));
        let free = w - p - k;
        let m = (n2 as usize).min(free);
        let mut moved = Vec::new();
        if addr != addr2 && m > 0 {
            let mut g = take(&mut self.futexes, addr2);
            let base = g.next_seq;
            if m == free {
                // The whole group moves with its tokens, renumbered in arrival order.
                let renumber = |old: u64, waiters: &[(Tid, u64, u32)]| {
                    base + waiters.iter().filter(|x| x.1 < old).count() as u64
                };
                for &(from, upto, mask) in &f.tokens {
                    let tok = (renumber(from, &f.waiters), renumber(upto, &f.waiters), mask);
                    g.tokens.push(tok);
                }
                moved = std::mem::take(&mut f.waiters);
                f.tokens.clear();
            } else {
                moved = f.waiters.split_off(w - m);
            }
            for (i, &(th, _, bitset)) in moved.iter().enumerate() {
                g.waiters.push((th, base + i as u64, bitset));
            }
            g.next_seq = base + moved.len() as u64;
            self.futexes.insert(addr2, g);
        }
        if !f.waiters.is_empty() || !f.tokens.is_empty() || f.next_seq != 0 {
            self.futexes.insert(addr, f);
        }
        for &(th, _, _) in &moved {
            if let Status::Pending(Op::FutexWait {
                bitset, deadline, ..
            }) = self.threads[th as usize].status
            {
                let op = Op::FutexWait {
                    addr: addr2,
                    bitset,
                    deadline,
                };
                self.set_status(th, Status::Pending(op));
            }
        }
        // As the kernel counts: woken plus moved (a move onto the same word included).
        self.requeued.insert(t as u64, (k + m) as i32);
        let objs = Op::FutexRequeued {
            addr,
            addr2,
            n1,
            n2,
        }
        .objects();
        self.recheck_blockable_on(Some(objs));
    }
}
