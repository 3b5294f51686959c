//! `rw`: random walk — a uniformly random enabled event at every step (the baseline of the POS
//! paper, Yuan et al. CAV'18, §6, and of SCTBench's "Rand").

use super::{Divergence, Strategy};
use crate::event::Event;
use crate::rng::Rng;

pub struct RandomWalk {
    rng: Rng,
}

impl RandomWalk {
    pub fn new() -> Self {
        RandomWalk { rng: Rng::new(0) }
    }
}

impl Default for RandomWalk {
    fn default() -> Self {
        Self::new()
    }
}

impl Strategy for RandomWalk {
    fn name(&self) -> String {
        "rw".into()
    }

    fn spec(&self, _seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        Some(crate::protocol::inproc::StrategySpec::Named {
            algo: self.name(),
            depth: None,
            pct_k: None,
        })
    }
    fn begin(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
    }
    fn pending(&mut self, _ev: &Event) {}
    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        Ok(self.rng.index(enabled.len()))
    }
    fn executed(&mut self, _ev: &Event) {}
}
