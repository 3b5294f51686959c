//! `pos`, `pos*`, `basicpos`: partial order sampling, Yuan, Yang, Gu, "Partial Order Aware
//! Concurrency Sampling", CAV'18.
//!
//! Every pending event carries a random priority, drawn uniformly when the event becomes
//! pending; each step runs the enabled event with the highest priority.
//!
//! * `basicpos` (the paper's Algorithm 2, "BasicPOS"): a priority, once drawn, is never
//!   changed; only new pending events get fresh ones.
//! * `pos` (Algorithm 4): after an event `e` executes, every *other* pending event that races
//!   with `e` gets a fresh priority. This makes the probability of each partial order depend
//!   only on its races, not on the length of the independent stretches around them (§4). Plain
//!   POS counts two reads of one object as a race ([`Event::races_with`] with `reads_race`).
//! * `pos*` (also `posstar`): the same, but reads of one object do not race (§4, POS*).
//!
//! Fairness (§5): spin-waiting programs only progress if the waiter eventually lets the thread
//! it waits for run, so every 1000 executed yield/sleep events all pending events get fresh
//! priorities (all three variants).
//!
//! Determinism: priorities are not drawn in [`Strategy::pending`], whose call order follows
//! the order in which real threads happen to post, but at the next [`Strategy::choose`], in
//! thread order. Every decision happens once all live threads have posted, so the same seed
//! draws the same numbers for the same events whatever the arrival order was. Priorities are
//! random `u64`s (ties have probability 2^-64); an exact tie goes to the lower thread id.

use super::{Divergence, Strategy};
use crate::event::Event;
use crate::rng::Rng;

/// Fresh priorities for all pending events after this many executed yield/sleep events (§5).
pub const FAIRNESS_PERIOD: u64 = 1000;

/// Which member of the POS family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Algorithm 4; reads race with reads.
    Pos,
    /// Algorithm 4; reads do not race with reads.
    PosStar,
    /// Algorithm 2: no reassignment.
    Basic,
}

/// The pending event of one thread and its priority.
#[derive(Clone, Copy, Debug)]
struct Slot {
    ev: Option<Event>,
    prio: u64,
    /// The priority must be (re)drawn before the next decision.
    stale: bool,
}

const EMPTY: Slot = Slot {
    ev: None,
    prio: 0,
    stale: false,
};

pub struct Pos {
    variant: Variant,
    rng: Rng,
    /// Indexed by thread id.
    slots: Vec<Slot>,
    /// Some slot is stale.
    any_stale: bool,
    /// Yield/sleep events executed in this run.
    yields: u64,
}

impl Pos {
    pub fn new(variant: Variant) -> Self {
        Pos {
            variant,
            rng: Rng::new(0),
            slots: Vec::new(),
            any_stale: false,
            yields: 0,
        }
    }

    /// Draw priorities for the stale slots, in thread order.
    fn refresh(&mut self) {
        for s in &mut self.slots {
            if s.stale {
                s.prio = self.rng.next_u64();
                s.stale = false;
            }
        }
        self.any_stale = false;
    }

    fn set_pending(&mut self, ev: &Event) {
        let t = ev.tid as usize;
        if t >= self.slots.len() {
            self.slots.resize(t + 1, EMPTY);
        }
        self.slots[t] = Slot {
            ev: Some(*ev),
            prio: 0,
            stale: true,
        };
        self.any_stale = true;
    }

    /// Every pending event gets a fresh priority (fairness, §5).
    fn redraw_all(&mut self) {
        for s in &mut self.slots {
            if s.ev.is_some() {
                s.stale = true;
                self.any_stale = true;
            }
        }
    }

    /// Other pending events racing with the executed `ev` get fresh priorities (Alg. 4).
    fn redraw_racing(&mut self, ev: &Event, reads_race: bool) {
        for s in &mut self.slots {
            if let Some(other) = s.ev {
                if other.races_with(ev, reads_race) {
                    s.stale = true;
                    self.any_stale = true;
                }
            }
        }
    }
}

impl Strategy for Pos {
    fn name(&self) -> String {
        match self.variant {
            Variant::Pos => "pos",
            Variant::PosStar => "pos*",
            Variant::Basic => "basicpos",
        }
        .into()
    }

    fn begin(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
        self.slots.clear();
        self.any_stale = false;
        self.yields = 0;
    }

    fn pending(&mut self, ev: &Event) {
        self.set_pending(ev);
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        // An enabled event never announced through `pending` still gets a priority.
        for e in enabled {
            if self.slots.get(e.tid as usize).and_then(|s| s.ev) != Some(*e) {
                self.set_pending(e);
            }
        }
        if self.any_stale {
            self.refresh();
        }
        let mut best = 0;
        let mut best_prio = self.slots[enabled[0].tid as usize].prio;
        for (i, e) in enabled.iter().enumerate().skip(1) {
            let p = self.slots[e.tid as usize].prio;
            if p > best_prio {
                best = i;
                best_prio = p;
            }
        }
        Ok(best)
    }

    fn executed(&mut self, ev: &Event) {
        if let Some(s) = self.slots.get_mut(ev.tid as usize) {
            *s = EMPTY;
        }
        match self.variant {
            Variant::Pos => self.redraw_racing(ev, true),
            Variant::PosStar => self.redraw_racing(ev, false),
            Variant::Basic => {}
        }
        if ev.op.is_yield() {
            self.yields += 1;
            if self.yields.is_multiple_of(FAIRNESS_PERIOD) {
                self.redraw_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;
    use crate::strategy::testkit::{
        self, assert_ratio, count, delay7, delay7_bug, race_twice, race_twice_bug, read, write,
        Instr::*, Prog,
    };

    const X: u64 = testkit::X;

    #[test]
    fn delay7_pos_and_basicpos_hit_one_in_eight() {
        let n = 200_000;
        for v in [Variant::Pos, Variant::Basic] {
            let mut s = Pos::new(v);
            let hits = count(&mut s, &delay7(), 7, n, delay7_bug);
            assert_ratio(&s.name(), hits, n, 1.0 / 8.0);
        }
    }

    #[test]
    fn race_twice_pos_quarter_basicpos_sixth() {
        let n = 200_000;
        for (v, p) in [
            (Variant::Pos, 0.25),
            (Variant::PosStar, 0.25),
            (Variant::Basic, 1.0 / 6.0),
        ] {
            let mut s = Pos::new(v);
            let hits = count(&mut s, &race_twice(), 11, n, race_twice_bug);
            assert_ratio(&s.name(), hits, n, p);
        }
    }

    #[test]
    fn reads_race_only_in_plain_pos() {
        // A: read x; B: read x, read x. Under POS B's second read gets a fresh priority after
        // B's first (reads race): P(A between) = 1/4. Under POS* nothing is redrawn: A lands
        // between B's reads when p(B1) > p(A) > p(B2): 1/6.
        let prog = Prog(vec![vec![Do(read(X))], vec![Do(read(X)), Do(read(X))]]);
        let between = |t: &[Event]| {
            let a = testkit::position(t, 0, read(X));
            let b = testkit::positions(t, 1, read(X));
            matches!(a, Some(a) if b[0] < a && a < b[1])
        };
        let n = 100_000;
        for (v, p) in [(Variant::Pos, 0.25), (Variant::PosStar, 1.0 / 6.0)] {
            let mut s = Pos::new(v);
            let hits = count(&mut s, &prog, 5, n, between);
            assert_ratio(&s.name(), hits, n, p);
        }
    }

    #[test]
    fn fairness_redraws_all_priorities_after_1000_yields() {
        // Thread A yields 2000 times; B's single write has one fixed priority under basicpos.
        // Whether B overtakes A can only change when A's priorities are redrawn, which they
        // are at each new event anyway; what the fairness rule adds is a redraw of B's.
        let mut s = Pos::new(Variant::Basic);
        s.begin(1);
        s.pending(&Event::new(0, Op::Yield));
        s.pending(&Event::new(1, write(X)));
        s.choose(&[Event::new(0, Op::Yield), Event::new(1, write(X))])
            .unwrap();
        let b_prio = s.slots[1].prio;
        for i in 1..=FAIRNESS_PERIOD {
            s.executed(&Event::new(0, Op::Yield));
            assert_eq!(s.slots[1].stale, i == FAIRNESS_PERIOD, "after {i} yields");
            s.pending(&Event::new(0, Op::Yield));
            s.choose(&[Event::new(0, Op::Yield)]).unwrap();
        }
        assert_ne!(s.slots[1].prio, b_prio, "B's priority was redrawn");
    }
}
