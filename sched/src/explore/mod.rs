//! Systematic exploration (stateless model checking): re-execute the program under forced
//! schedule prefixes and decide from each recorded trace which prefixes to try next.
//!
//! The algorithms only need an [`Executor`]: the simulator implements it for abstract programs,
//! the runner for real binaries.

use crate::event::Event;
use crate::strategy::{Divergence, Strategy};

/// The result of executing the program once.
#[derive(Clone, Debug, Default)]
pub struct Execution {
    /// Executed events in order.
    pub trace: Vec<Event>,
    /// `Some(description)` when the run hit a bug (assert, crash, deadlock, ...).
    pub bug: Option<String>,
    /// The strategy could not be followed (a forced prefix the program did not take).
    pub diverged: Option<Divergence>,
}

/// Runs the program under test once, to the end, letting `strategy` make every decision.
pub trait Executor {
    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution;
}
