//! One module per subcommand: each parses nothing itself (clap does, in `cli.rs`) and turns
//! its arguments into work for the suite (`crate::suite`) and the process layer
//! (`crate::exec`).

pub mod baseline;
pub mod bench;
pub mod build;
pub mod cc;
pub mod compare;
pub mod debug;
pub mod env;
pub mod explore;
pub mod merge;
pub mod micro;
pub mod minimize;
pub mod model;
pub mod races;
pub mod replay;
pub mod report;
pub mod run;
pub mod rustc;
