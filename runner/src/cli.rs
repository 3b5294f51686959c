//! The command line (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "poscheck",
    version,
    about = "Controlled scheduling of native pthread programs: finds concurrency bugs and \
             replays them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run programs many times under a scheduling algorithm and report bug hit ratios.
    Run(RunArgs),
    /// Re-run a saved schedule and reproduce its outcome.
    Replay(ReplayArgs),
    /// Measure grant latency and throughput against raw baselines.
    Bench(BenchArgs),
    /// Simulate abstract program models under the strategies (sched::sim).
    Model(crate::cmd::model::ModelArgs),
    /// Micro-benchmarks of the strategies on abstract programs.
    Micro(crate::cmd::micro::MicroArgs),
}

/// Options of a controlled run shared by `run` and `replay`.
#[derive(Args, Debug, Clone)]
pub struct ControlArgs {
    /// Seconds a granted thread may take to reach its next scheduling point before the run
    /// is reported as a hang.
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub step_timeout: f64,
    /// Scheduling steps before a run is reported as a livelock (step-limit).
    #[arg(long, default_value_t = pos_sched::coordinator::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// Exit codes that are not a bug (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0", value_name = "CODES")]
    pub ok_exit_codes: Vec<i32>,
    /// Keep the real delays of sleep/usleep/nanosleep (by default they return at once).
    #[arg(long)]
    pub real_sleep: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scheduling algorithm (rw, pct1..pct5, pos, pos*, basicpos, rapos, ...).
    #[arg(long, default_value = "pos")]
    pub algo: String,
    /// Runs per program.
    #[arg(long, default_value_t = 1000)]
    pub tries: u64,
    /// Base seed (default: fresh, printed); try i runs with try_seed(seed, i).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Parallel runs (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Stop a program's tries at its first bug.
    #[arg(long)]
    pub stop_on_first: bool,
    /// PCT depth for `--algo pct`.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Scheduling points: sync (default), mem, races (needs -fsanitize=thread builds).
    #[arg(long)]
    pub points: Option<String>,
    /// Where the first buggy schedule of each program is saved.
    #[arg(long, default_value = "poscheck-out", value_name = "DIR")]
    pub out_dir: PathBuf,
    #[command(flatten)]
    pub control: ControlArgs,
    /// Programs, or directories (every executable file in them).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Arguments passed to every program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A schedule file saved by `poscheck run` (or POS_SCHEDULE_OUT).
    pub schedule: PathBuf,
    /// Replay this many times and check the outcome is the same every time.
    #[arg(long, default_value_t = 1)]
    pub times: u64,
    #[command(flatten)]
    pub control: ControlArgs,
    /// Arguments for the program, replacing the recorded ones (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Scheduling steps (and ping-pongs) measured for the latency ratio.
    #[arg(long, default_value_t = 20_000)]
    pub steps: u64,
    /// Process runs measured for the throughput ratio.
    #[arg(long, default_value_t = 300)]
    pub runs: u64,
}
