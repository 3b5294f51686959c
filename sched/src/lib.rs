//! `pos-sched`: the pure scheduling core of poscheck.
//!
//! Everything about scheduling that needs no process and no socket: the event model
//! ([`event`]), the coordinator state machine ([`state`]) and decision loop ([`coordinator`]),
//! the strategies ([`strategy`]), the wire protocol types ([`protocol`]), recorded schedules
//! ([`schedule`]), the abstract-program simulator ([`sim`]) and d-hitting families of schedules
//! over abstract partial orders ([`hitting`]).

pub mod coordinator;
pub mod event;
pub mod explore;
pub mod hitting;
pub mod minimize;
pub mod protocol;
pub mod race;
pub mod rng;
pub mod schedule;
pub mod signals;
pub mod silent;
pub mod sim;
pub mod spin;
pub mod state;
pub mod strategy;

pub use coordinator::{Coordinator, Decision};
pub use event::{Event, MemOrder, MutexKind, Obj, ObjKind, Op, ThreadName, Tid, NO_DEADLINE};
pub use state::State;
pub use strategy::Strategy;
