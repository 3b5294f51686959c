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
    #[command(
        after_help = "Examples:\n  poscheck run --tries 10000 bench/\n  poscheck run --algo pos --tries 1000 --json out.json ./prog -- arg1"
    )]
    Run(RunArgs),
    /// Re-run a saved schedule and reproduce its outcome.
    #[command(
        after_help = "Example:\n  poscheck replay --times 100 poscheck-out/prog.pos.seed1.json"
    )]
    Replay(ReplayArgs),
    /// Shrink a buggy schedule to the fewest preemptions that still reproduce its bug.
    Minimize(crate::cmd::minimize::MinimizeArgs),
    /// Replay a schedule under gdb, stopped at the failing step (or --step N).
    Debug(crate::cmd::debug::DebugArgs),
    /// Measure grant latency and throughput against raw baselines.
    #[command(after_help = "Example:\n  poscheck bench --steps 20000 --runs 300")]
    Bench(BenchArgs),
    /// Simulate abstract program models under the strategies (sched::sim).
    #[command(after_help = "Example:\n  poscheck model benchmarks/models/delay7.model")]
    Model(crate::cmd::model::ModelArgs),
    /// Micro-benchmarks of the strategies on abstract programs.
    #[command(after_help = "Example:\n  poscheck micro --threads 4 --events 4 --objects 4")]
    Micro(crate::cmd::micro::MicroArgs),
    /// Compile C with scheduling points at memory accesses (wraps $POSCHECK_CC, default gcc).
    #[command(
        name = "cc",
        after_help = "Example:\n  poscheck cc -O1 -g -o prog prog.c"
    )]
    Cc(CcArgs),
    /// Compile C++ with scheduling points at memory accesses (wraps $POSCHECK_CXX, default g++).
    #[command(
        name = "c++",
        after_help = "Example:\n  poscheck c++ -O1 -g -o prog prog.cpp"
    )]
    Cxx(CcArgs),
    /// Compile Rust with scheduling points at memory accesses and atomics (wraps
    /// $POSCHECK_RUSTC, default rustc; uses the thread sanitizer's instrumentation).
    #[command(
        name = "rustc",
        after_help = "Example:\n  poscheck rustc -O --edition 2021 -o prog prog.rs"
    )]
    Rustc(CcArgs),
    /// Find the data races of an instrumented program (the profiling step of --points races).
    #[command(
        after_help = "Examples:\n  poscheck races ./prog\n  poscheck races --classify --sync ./prog"
    )]
    Races(RacesArgs),
    /// Build every program of a suite's manifest into DIR/bin (with `poscheck cc`).
    #[command(after_help = "Example:\n  poscheck build benchmarks/")]
    Build(BuildArgs),
    /// Run several algorithms over programs or a suite and print the comparison table.
    #[command(
        after_help = "Example:\n  poscheck compare --algos pos,pct3,rw --tries 1000 --json cmp.json benchmarks/"
    )]
    Compare(CompareArgs),
    /// Merge the JSON of sharded `compare` (or `run`) sessions into one comparison table.
    #[command(after_help = "Example:\n  poscheck merge --json all.json shard-1.json shard-2.json")]
    Merge(MergeArgs),
    /// Explore the schedules of a program systematically (DFS, DPOR, ODPOR, bounded, RT).
    #[command(
        after_help = "Examples:\n  poscheck explore --algo odpor --points mem ./prog\n  poscheck explore --algo hitting --depth 3 ./prog"
    )]
    Explore(crate::cmd::explore::ExploreArgs),
    /// Write the HTML report (tables, charts, every bug's interleaving) of JSON files
    /// written by run, compare, merge or explore.
    #[command(
        after_help = "Examples:\n  poscheck report out/compare.json -o out/report.html\n  \
                      poscheck report run.json explore.json -o both.html"
    )]
    Report(ReportArgs),
    /// Print `LD_PRELOAD=<absolute path of libpos.so>` for controlled runs without poscheck.
    #[command(
        after_help = "Example:\n  env $(poscheck env) ./prog    # one controlled run (POS), seed printed"
    )]
    Env,
    /// Check results against the bugs an algorithm found before (exit 1 when one is lost).
    #[command(
        after_help = "Examples:\n  poscheck baseline comparison.json    # against benchmarks/baseline/pos-bugs.json\n  poscheck baseline --update comparison.json    # take these results as the new baseline"
    )]
    Baseline(crate::cmd::baseline::BaselineArgs),
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// JSON files written by `run --json`, `compare --json`, `merge --json` or
    /// `explore --json` (several: their programs are shown together).
    #[arg(required = true, value_name = "FILE.json")]
    pub files: Vec<PathBuf>,
    /// The HTML file to write (one self-contained page).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// Options of a controlled run shared by `run` and `replay`.
#[derive(Args, Debug, Clone)]
pub struct ControlArgs {
    /// Seconds a granted thread may take to reach its next scheduling point before the run
    /// is reported as a hang.
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub step_timeout: f64,
    /// Seconds a thread may keep computing (running on a CPU) without reaching a
    /// scheduling point before the run is reported as a hang: an endless loop, or a
    /// computation longer than this. At least the step timeout.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub compute_timeout: f64,
    /// Scheduling steps before a run is reported as a livelock (step-limit) [default:
    /// 1000000; explore and races --classify: 10000].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// Exit codes that are not a bug (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0", value_name = "CODES")]
    pub ok_exit_codes: Vec<i32>,
    /// Real time instead of virtual time: sleeps really sleep, clock reads are real, and a
    /// timed wait times out at once when its object is unavailable (the old model).
    #[arg(long)]
    pub real_sleep: bool,
    /// When a timed wait may time out: `deadline` (default: only once virtual time reaches
    /// its deadline) or `any` (also earlier, as a scheduling choice: explores timeout paths).
    #[arg(long, default_value = "deadline", value_name = "WHEN")]
    pub timeouts: String,
    /// Spawn the program for every run instead of forking runs from one started copy per
    /// worker (slower; for programs that must see a fresh exec).
    #[arg(long)]
    pub no_fork_server: bool,
    /// Let each run's threads move between CPUs. By default a run's process keeps to the
    /// CPU it starts on (one thread runs at a time; hand-overs across cores cost more), and
    /// the program still sees the CPUs poscheck was started with.
    #[arg(long)]
    pub no_pin: bool,
    /// Milliseconds a granted thread may stay silent before the kernel is asked whether it
    /// is blocked in a call libpos does not control (`read` of a pipe, `poll`, `waitpid`,
    /// ...); such a thread is set aside, the others run, and the run is marked partial. A
    /// thread running user code without a point (a spin-wait) is set aside likewise after a
    /// quarter of the step timeout, when another thread could use the turn.
    /// 0: never (a silent thread is a hang after the step timeout).
    #[arg(long, default_value_t = 30, value_name = "MS")]
    pub blocked_after: u64,
    /// Where the preload backend's runs are decided: `baton` (default: in the program, which
    /// hands the turn from thread to thread with a futex and reports once at the end, for
    /// the strategies that can be built there: rw, pos, pos*, basicpos, rapos, pct and
    /// replay; the others, traces and exploration go over the socket) or `socket` (here, a
    /// post and a grant per step: for debugging libpos, or to compare).
    #[arg(long, default_value = "baton", value_name = "HOW")]
    pub transport: String,
    /// How programs are controlled: preload (libpos.so through LD_PRELOAD: every
    /// synchronisation call is a point), ptrace (a seccomp filter and ptrace: only system
    /// calls are points, i.e. contended futex operations, yields, sleeps, thread creation
    /// and exit; works on statically linked programs) or auto (ptrace for statically linked
    /// programs, else preload; replay: the schedule's).
    #[arg(long, default_value = "auto", value_name = "WHICH")]
    pub backend: String,
    /// Ptrace backend: no breakpoints at the synchronisation functions (`pthread_mutex_lock`,
    /// `sem_post`, ...); only system calls are points.
    #[arg(long)]
    pub syscall_points_only: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scheduling algorithm (rw, pct1..pct5, pos, pos*, basicpos, rapos, urw, surw, tapct1..tapct5,
    /// rff, or auto: a portfolio of pos, surw, pct3, rff and rapos sharing the tries).
    #[arg(long, default_value = "auto")]
    pub algo: String,
    /// Stop a program's tries at its first bug.
    #[arg(long)]
    pub stop_on_first: bool,
    /// Do not minimise the first bug's schedule of each program (by default `run` saves a
    /// copy with the fewest preemptions it finds next to it, NAME.min.json).
    #[arg(long)]
    pub no_minimize: bool,
    #[command(flatten)]
    pub tries: TriesArgs,
}

/// What `run` and `compare` share: the tries, their seeds and parallelism, where results
/// go, which part of the programs, and the programs.
#[derive(Args, Debug)]
pub struct TriesArgs {
    /// Runs per program (and per algorithm, for `compare`).
    #[arg(long, default_value_t = 1000)]
    pub tries: u64,
    /// Base seed (default: fresh, printed); try i runs with try_seed(seed, i), whatever the
    /// algorithm.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Parallel runs (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Write the results (and, for `compare`, the table) as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML report (tables, charts, every bug's interleaving) to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the results as JUnit XML to this file: a test case per program and algorithm,
    /// a bug is a failure (its outcome, schedule and replay command), no bug a pass.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// PCT depth for `pct` without a digit.
    #[arg(long)]
    pub depth: Option<u32>,
    /// Scheduling points: sync, mem, races or auto (all but sync need `poscheck cc` builds;
    /// auto, the default for them, learns racing sites while the tries run).
    /// Default: the manifest's for a suite, else auto for instrumented programs and sync
    /// otherwise.
    #[arg(long, value_name = "MODE")]
    pub points: Option<String>,
    /// Count runs that reach the step limit (--max-steps) as bugs; by default they are shown
    /// apart (`step_limits` in the JSON, a note under the table): a long correct program
    /// reaches the limit too.
    #[arg(long)]
    pub step_limit_is_bug: bool,
    /// Where the first buggy schedule of each program (and algorithm) is saved.
    #[arg(long, default_value = "poscheck-out", value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Run only part i of n of the programs: program k (0-based, manifest or command-line
    /// order) belongs to part (k mod n) + 1; combine the parts with `poscheck merge`.
    #[arg(long, value_name = "i/n")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub control: ControlArgs,
    /// Programs, or directories: a suite directory (with manifest.toml) runs its manifest's
    /// programs from DIR/bin with their args and points; any other directory runs every
    /// executable file in it.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Arguments passed to programs given by path (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// A schedule file saved by `poscheck run` (or POS_SCHEDULE_OUT).
    pub schedule: PathBuf,
    /// Replay this many times and check the outcome is the same every time.
    #[arg(long, default_value_t = 1)]
    pub times: u64,
    /// Print the interleaving step by step: thread, operation, object, `file:line in
    /// function`, context switches and preemptions marked, and the outcome.
    #[arg(long)]
    pub trace: bool,
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
    /// The backend measured: preload (dynamically linked programs, libpos.so) or ptrace
    /// (the same programs linked statically, traced; one spawn per run).
    #[arg(long, default_value = "preload", value_name = "WHICH")]
    pub backend: String,
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Suite directory (with manifest.toml).
    pub dir: PathBuf,
    /// Build only these programs of the manifest.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// Compiler command instead of `poscheck cc` (e.g. gcc: no memory-access points).
    #[arg(long, value_name = "CMD")]
    pub cc: Option<String>,
    /// Rebuild up-to-date binaries too.
    #[arg(long)]
    pub force: bool,
    /// Parallel compilers (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Algorithms, one column each (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "rw,pct3,pos,surw,rff,auto"
    )]
    pub algos: Vec<String>,
    #[command(flatten)]
    pub tries: TriesArgs,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// JSON files written by `compare --json` or `run --json` (shards of one session).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged runs and table as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the HTML report of the merged runs to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CcArgs {
    /// Compiler arguments, as for gcc/clang (e.g. `-O1 -o prog prog.c`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RacesArgs {
    /// Reverse each race of one recorded run (the default schedule) once and classify it:
    /// harmless (same outcome and output), harmful (which differs; both schedules saved) or
    /// not reversible. Exit code 1 when a race is harmful.
    #[arg(long)]
    pub classify: bool,
    /// With --classify: also reverse the synchronisation conflicts (lock acquisition orders,
    /// semaphore waits, condition waiters).
    #[arg(long)]
    pub sync: bool,
    /// With --classify: scheduling points of the recorded run: races (default for
    /// instrumented programs: the profiled racing accesses), mem (every access) or sync
    /// (uninstrumented programs, with --sync).
    #[arg(long, value_name = "MODE")]
    pub points: Option<String>,
    /// With --classify: dynamic races reversed per site pair (the first ones of the run).
    #[arg(long, default_value_t = 3, value_name = "K")]
    pub per_pair: usize,
    /// With --classify: runs of reversals at most, over all site pairs (a race takes one or
    /// two).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_runs: usize,
    /// With --classify: 1, each race reversed alone; 2 (default), also each race harmless
    /// alone together with one other race of its reversed run (within --max-runs).
    #[arg(long, default_value_t = 2, value_name = "D")]
    pub depth: u8,
    /// With --classify: write the classification as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// With --classify: where the schedules of harmful races are saved.
    #[arg(long, default_value = "poscheck-out", value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Profiling runs (each under pos with a seed derived from --seed).
    #[arg(long, default_value_t = crate::points::PROFILE_RUNS)]
    pub runs: u64,
    /// Base seed of the profiling runs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub control: ControlArgs,
    /// An instrumented program (built with `poscheck cc`).
    pub program: PathBuf,
    /// Arguments for the program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}
