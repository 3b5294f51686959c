//! Scheduling strategies, in the spirit of Shuttle's `Scheduler`: given the enabled events,
//! pick one; told what ran, update. The coordinator never knows which strategy it drives, so
//! adding an algorithm means adding a file here and a line in [`by_name`].

use crate::event::Event;
use std::fmt;

pub mod pct;
pub mod portfolio;
pub mod pos;
pub mod rapos;
pub mod replay;
pub mod rff;
pub mod rw;
pub mod surw;
pub mod tapct;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

/// A run could not follow the strategy's plan (replay only): where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub step: u64,
    pub reason: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "diverged at step {}: {}", self.step, self.reason)
    }
}

impl std::error::Error for Divergence {}

/// A scheduling algorithm. One instance serves many runs in sequence:
/// `begin`, then for every step some `pending` calls, one `choose`, one `executed`; `end`.
pub trait Strategy: Send {
    /// The name it was created with (`pos`, `pct3`, ...).
    fn name(&self) -> String;

    /// A new run starts; `seed` is derived from (base seed, try index).
    fn begin(&mut self, seed: u64);

    /// Thread `ev.tid` posted a new pending event (its first, or the one after its last ran).
    fn pending(&mut self, ev: &Event);

    /// Pick one of `enabled` (non-empty, in thread order); returns its index.
    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence>;

    /// `ev` (which was chosen) has executed.
    fn executed(&mut self, ev: &Event);

    /// `ev`, a timed wait that [`Self::executed`] just reported, timed out (returned
    /// ETIMEDOUT): the thread is polling, as after a yield.
    fn timed_out(&mut self, _ev: &Event) {}

    /// The run is over after `steps` scheduling steps.
    fn end(&mut self, _steps: u64) {}

    /// A semaphore (its value) or barrier (its count) was initialised, after the events
    /// executed so far; not a scheduling point. Only systematic exploration needs it.
    fn initialised(&mut self, _obj: crate::event::Obj, _value: u32) {}

    /// After [`Self::end`]: what the run exhibited, for a feedback-directed strategy's corpus
    /// (`rff`, and `auto` when its `rff` member ran); `None` for the others.
    fn take_feedback(&mut self) -> Option<rff::Feedback> {
        None
    }

    /// How to build this strategy afresh inside the program for the run seeded `seed`, a run
    /// decided there (issue 15, [`crate::protocol::inproc`]); `None` (the default) when it
    /// needs the runner at every step (data of the runner's own: a profile, a corpus).
    fn spec(&self, _seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        None
    }
}

/// Parameters shared by the strategy constructors.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// PCT depth when the name does not carry one (`pct` + `--depth`).
    pub depth: Option<u32>,
    /// PCT's k (steps per run) when known in advance; otherwise measured by the first run.
    pub pct_k: Option<u64>,
    /// Estimates from profiling runs of the same program, for `urw`, `surw` and `tapct`
    /// (see [`surw::build_profile`]); immutable, shared by every try.
    pub profile: Option<std::sync::Arc<surw::Profile>>,
    /// `rff`'s corpus as of the current batch of tries (see [`rff::Corpus`]); immutable,
    /// shared by every try of the batch. Without one `rff` runs constraint-free POS.
    pub corpus: Option<std::sync::Arc<rff::Corpus>>,
}

/// Names accepted by [`by_name`], for help texts and errors.
pub const NAMES: &[&str] = &[
    "rw", "pos", "pos*", "basicpos", "rapos", "pct1", "pct2", "pct3", "pct4", "pct5", "pct", "urw",
    "surw", "tapct1", "tapct2", "tapct3", "tapct4", "tapct5", "tapct", "rff", "auto",
];

/// PCT depth of `pct` without a number and without [`Options::depth`].
pub const DEFAULT_PCT_DEPTH: u32 = 3;

/// A strategy that replays a recorded schedule (not selectable by name: it needs the steps).
pub fn replay(steps: Vec<crate::schedule::Step>) -> Box<dyn Strategy> {
    Box::new(replay::Replay::new(steps))
}

/// The depth in a `pct<d>`/`tapct<d>` name, or [`Options::depth`] / the default.
fn parse_depth(name: &str, digits: &str, opts: &Options) -> Result<u32, String> {
    let depth = if digits.is_empty() {
        opts.depth.unwrap_or(DEFAULT_PCT_DEPTH)
    } else {
        digits.parse::<u32>().map_err(|_| {
            format!("bad PCT depth in {name:?} (use pct1..pct5, pct, tapct1..tapct5 or tapct)")
        })?
    };
    if depth == 0 {
        return Err(format!("{name:?}: PCT depth must be at least 1"));
    }
    Ok(depth)
}

/// Build a strategy from its command-line name.
pub fn by_name(name: &str, opts: &Options) -> Result<Box<dyn Strategy>, String> {
    if let Some(depth) = name.strip_prefix("tapct") {
        let depth = parse_depth(name, depth, opts)?;
        return Ok(Box::new(tapct::TaPct::new(
            name,
            depth,
            opts.profile.clone(),
        )));
    }
    if let Some(depth) = name.strip_prefix("pct") {
        let depth = parse_depth(name, depth, opts)?;
        return Ok(Box::new(pct::Pct::new(name, depth, opts.pct_k)));
    }
    match name {
        "rw" | "random" => Ok(Box::new(rw::RandomWalk::new())),
        "urw" => Ok(Box::new(surw::Surw::new(name, false, opts.profile.clone()))),
        "surw" => Ok(Box::new(surw::Surw::new(name, true, opts.profile.clone()))),
        "pos" => Ok(Box::new(pos::Pos::new(pos::Variant::Pos))),
        "pos*" | "posstar" => Ok(Box::new(pos::Pos::new(pos::Variant::PosStar))),
        "basicpos" => Ok(Box::new(pos::Pos::new(pos::Variant::Basic))),
        "rapos" => Ok(Box::new(rapos::Rapos::new())),
        "rff" => Ok(Box::new(rff::Rff::new(opts.corpus.clone()))),
        "auto" => Ok(Box::new(portfolio::Portfolio::new(opts)?)),
        _ => Err(format!(
            "unknown algorithm {name:?} (known: {})",
            NAMES.join(", ")
        )),
    }
}
