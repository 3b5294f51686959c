//! `auto`: a portfolio of strategies interleaved over the tries.
//!
//! No single sampler dominates: POS is best on races between few events (Yuan et al.,
//! CAV'18), PCT on bugs of small depth among long runs (Burckhardt et al., ASPLOS'10), SURW
//! on orderings among many threads (Zhao et al., ASPLOS'25), RFF on rare reads-from pairs
//! (Wolff et al., ASPLOS'24) and RAPOS on the many-thread reorderings that need one thread
//! to run a whole body in between (Sen, ASE'07). Running each on a share of the tries costs
//! at most a constant factor (the number of members) against the best member on every
//! program, while any one member can be arbitrarily worse than it on some program.
//!
//! The rule: try `i`, whose seed is `s = try_seed(S, i)`, runs member [`member`]`(s)`, drawn
//! uniformly from [`MEMBERS`] with a stream of its own, with seed `s` — so a try of `auto`
//! is exactly the try of that member with the same seed, and the runner attributes each hit
//! to the member that produced it.

use super::{by_name, rff, Divergence, Options, Strategy};
use crate::event::{Event, Obj};
use crate::rng::Rng;

/// The members of `auto`, in the order the seed stream indexes them.
pub const MEMBERS: &[&str] = &["pos", "surw", "pct3", "rff", "rapos"];

/// The member that runs the try with seed `seed`.
pub fn member(seed: u64) -> &'static str {
    MEMBERS[Rng::new(seed ^ 0x4155_544f_5f50_4f52).index(MEMBERS.len())]
}

pub struct Portfolio {
    members: Vec<Box<dyn Strategy>>,
    current: usize,
}

impl Portfolio {
    /// Every member built with `opts` (PCT's k, SURW's profile, RFF's corpus).
    pub fn new(opts: &Options) -> Result<Self, String> {
        let members = MEMBERS
            .iter()
            .map(|m| by_name(m, opts))
            .collect::<Result<_, _>>()?;
        Ok(Portfolio {
            members,
            current: 0,
        })
    }

    fn cur(&mut self) -> &mut dyn Strategy {
        self.members[self.current].as_mut()
    }
}

impl Strategy for Portfolio {
    fn name(&self) -> String {
        "auto".into()
    }

    fn begin(&mut self, seed: u64) {
        let m = member(seed);
        self.current = MEMBERS.iter().position(|x| *x == m).unwrap_or(0);
        self.cur().begin(seed);
    }

    fn pending(&mut self, ev: &Event) {
        self.cur().pending(ev);
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        self.cur().choose(enabled)
    }

    fn executed(&mut self, ev: &Event) {
        self.cur().executed(ev);
    }

    fn timed_out(&mut self, ev: &Event) {
        self.cur().timed_out(ev);
    }

    fn end(&mut self, steps: u64) {
        self.cur().end(steps);
    }

    fn initialised(&mut self, obj: Obj, value: u32) {
        self.cur().initialised(obj, value);
    }

    fn take_feedback(&mut self) -> Option<rff::Feedback> {
        self.cur().take_feedback()
    }

    /// The try seeded `seed` is its member's try: decided in the program when that member
    /// can be (pos, pct3, rapos; surw and rff need the runner's profile and corpus).
    fn spec(&self, seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        let m = member(seed);
        let i = MEMBERS.iter().position(|x| *x == m)?;
        self.members[i].spec(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::try_seed;
    use crate::strategy::testkit::{self, assert_ratio};

    #[test]
    fn members_share_the_tries_evenly() {
        let n = 50_000;
        for m in MEMBERS {
            let hits = (0..n).filter(|&i| member(try_seed(9, i)) == *m).count() as u64;
            assert_ratio(m, hits, n, 1.0 / MEMBERS.len() as f64);
        }
    }

    #[test]
    fn a_try_of_auto_is_the_try_of_its_member() {
        let opts = Options {
            pct_k: Some(8),
            ..Options::default()
        };
        let prog = testkit::race_twice();
        let mut auto = Portfolio::new(&opts).unwrap();
        for i in 0..40 {
            let seed = try_seed(11, i);
            let mut alone = by_name(member(seed), &opts).unwrap();
            let a = testkit::run(&mut auto, &prog, seed, 1000);
            let b = testkit::run(alone.as_mut(), &prog, seed, 1000);
            assert_eq!(a.trace, b.trace, "try {i} ({})", member(seed));
        }
    }
}
