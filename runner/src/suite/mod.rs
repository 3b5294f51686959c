//! The suite: manifests of programs with their expected bugs, the harness that runs many
//! tries of one program and tallies them, and the outcome of one run.

pub mod harness;
pub mod manifest;
pub mod outcome;
pub mod progress;
