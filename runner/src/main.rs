//! `poscheck`: runs native pthread programs under controlled scheduling.
//!
//! Exit codes: 0 = no bug found, 1 = bug found, 2 = usage or setup error.

/// `print!` to stdout, ignoring a closed pipe (`poscheck run ... | head` must not panic).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($t)*);
    }};
}

/// `println!` to stdout, ignoring a closed pipe.
macro_rules! sayln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

mod bench;
mod build;
mod cc;
mod classify;
mod cleanup;
mod cli;
mod cmd;
mod compare;
mod elf;
mod explore;
mod forkserver;
mod harness;
mod libpos;
mod manifest;
mod merge;
mod outcome;
mod points;
mod process;
mod ptrace;
mod pump;
mod races;
mod replay;
mod report;
mod session;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    if let Err(e) = cleanup::install() {
        eprintln!("poscheck: error: cannot set up signal handling: {e}");
        return ExitCode::from(2);
    }
    if let Err(e) = process::disable_aslr() {
        eprintln!("poscheck: error: {e:#}");
        return ExitCode::from(2);
    }
    let r = match &cli.command {
        cli::Command::Run(a) => run_cmd(a),
        cli::Command::Replay(a) => replay::run(a),
        cli::Command::Bench(a) => bench::run(a),
        cli::Command::Model(a) => cmd::model::run(a),
        cli::Command::Micro(a) => cmd::micro::run(a),
        cli::Command::Build(a) => build::run(
            &a.dir,
            &a.names,
            a.cc.as_deref(),
            a.force,
            a.jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        ),
        cli::Command::Compare(a) => compare::cmd(a),
        cli::Command::Cc(a) => libpos_dir().and_then(|d| cc::compile(cc::Lang::C, &a.args, &d)),
        cli::Command::Cxx(a) => libpos_dir().and_then(|d| cc::compile(cc::Lang::Cxx, &a.args, &d)),
        cli::Command::Races(a) => races::run(a),
        cli::Command::Merge(a) => merge::cmd(a),
        cli::Command::Explore(a) => explore::run(a),
    };
    forkserver::shut_down();
    match r {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("poscheck: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// A command line clap rejects: help and version go out as clap prints them (exit 0); a
/// usage error is one line `poscheck: error: ...` (exit 2) like every other bad input.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                2
            } else {
                0
            },
        );
    }
    let text = e.render().to_string();
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("invalid command line");
    let line = line.strip_prefix("error: ").unwrap_or(line);
    eprintln!("poscheck: error: {line} (see poscheck --help)");
    ExitCode::from(2)
}

/// Longest accepted `--step-timeout` (a day): longer is surely a typo, and far longer does
/// not fit the timers.
pub(crate) const MAX_STEP_TIMEOUT_SECS: f64 = 86_400.0;

/// The directory of libpos.so, which `poscheck cc` links against (with an rpath).
fn libpos_dir() -> Result<PathBuf> {
    let lib = libpos::find()?;
    lib.parent()
        .map(Path::to_path_buf)
        .with_context(|| format!("{} has no parent directory", lib.display()))
}

/// Apply the options shared by `run` and `replay` to a run configuration.
pub(crate) fn apply_control(cfg: &mut session::RunConfig, c: &cli::ControlArgs) -> Result<()> {
    if !(c.step_timeout.is_finite()
        && c.step_timeout > 0.0
        && c.step_timeout <= MAX_STEP_TIMEOUT_SECS)
    {
        bail!(
            "--step-timeout {}: must be a positive number of seconds, at most {MAX_STEP_TIMEOUT_SECS}",
            c.step_timeout
        );
    }
    cfg.step_timeout = Duration::try_from_secs_f64(c.step_timeout)
        .with_context(|| format!("--step-timeout {}", c.step_timeout))?;
    if c.max_steps == 0 {
        bail!("--max-steps must be at least 1");
    }
    cfg.max_steps = c.max_steps;
    cfg.ok_exit_codes = c.ok_exit_codes.clone();
    cfg.real_sleep = c.real_sleep;
    cfg.timeouts_any = match c.timeouts.as_str() {
        "deadline" => false,
        "any" => true,
        other => bail!("--timeouts must be `deadline` or `any`, not {other:?}"),
    };
    cfg.fork_server = !c.no_fork_server;
    cfg.requested = session::Backend::parse(&c.backend)?;
    cfg.call_points = !c.syscall_points_only;
    cfg.blocked_after = (c.blocked_after > 0).then(|| Duration::from_millis(c.blocked_after));
    Ok(())
}

/// The programs named by the PATH arguments: files as given (checked, errors are fatal);
/// directories contribute their executable ELF files (others are skipped with a note).
fn targets(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|e| e.is_file())
                .collect();
            entries.sort();
            for e in entries {
                match elf::check(&e) {
                    Ok(_) => out.push(e),
                    Err(elf::ElfError::NotExecutable(_)) => {}
                    Err(why) => eprintln!("poscheck: skipping {why}"),
                }
            }
        } else {
            out.push(p.clone());
        }
    }
    for p in &out {
        let info = elf::check(p)?;
        if !info.makes_threads {
            eprintln!(
                "poscheck: warning: {} creates no thread (neither it nor its libraries import \
                 pthread_create, thrd_create, std::thread or an OpenMP parallel region); \
                 nothing will be scheduled",
                p.display()
            );
        }
    }
    if out.is_empty() {
        bail!("no executable program found in the given paths");
    }
    Ok(out)
}

fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = t ^ (u64::from(std::process::id()) << 32);
    pos_sched::rng::splitmix64(&mut x)
}

fn program_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn run_cmd(r: &cli::RunArgs) -> Result<i32> {
    let a = &r.tries;
    let (mut s, programs) = compare::Session::prepare(a, std::slice::from_ref(&r.algo), "--algo")?;
    s.plan.algo = r.algo.clone();
    s.plan.stop_on_first = r.stop_on_first;
    let seed = s.plan.seed;
    sayln!(
        "poscheck: algo={} seed={seed} tries={} jobs={}{}",
        r.algo,
        a.tries,
        s.plan.jobs,
        s.shard.map_or(String::new(), |s| format!(" shard={s}"))
    );
    let results = compare::run_algo(&s, &r.algo, &programs)?;
    let all_errors = results
        .iter()
        .any(|r| r.tally.tries > 0 && r.tally.outcomes.get("error") == Some(&r.tally.tries));
    let table: Vec<report::ProgramReport> = results.iter().map(|r| r.report.clone()).collect();
    say!("{}", report::table(&table));
    for one in &results {
        let (r, t) = (&one.report, &one.tally);
        if let Some((i, run)) = &t.first_hit {
            sayln!("{}: first bug at try {i}: {}", r.name, run.outcome);
            if let Some(s) = &r.schedule {
                sayln!("  schedule: {s} (poscheck replay {s})");
            }
            if run.outside > 0 {
                sayln!(
                    "  partial run: {} time(s) a thread was blocked outside control; the \
                     schedule may not replay exactly",
                    run.outside
                );
            }
            if !run.stdout.is_empty() {
                say!("  stdout (tail):\n{}", report::tail_text(&run.stdout, 2048));
            }
            if !run.stderr.is_empty() {
                say!("  stderr (tail):\n{}", report::tail_text(&run.stderr, 2048));
            }
        }
        if let Some(e) = &r.first_error {
            sayln!("{}: run error: {e}", r.name);
        }
        if r.backend == session::Backend::Ptrace.name() {
            sayln!(
                "{}: backend ptrace: the scheduling points are system calls (contended futex \
                 operations, yields, sleeps, thread creation and exit) and the entries of the \
                 mutex, rwlock, spinlock, condition and semaphore functions (breakpoints; \
                 not in a stripped static program)",
                r.name
            );
        }
        if r.partial > 0 {
            sayln!(
                "{}: {} of {} runs partial: a thread blocked in a call libpos does not control \
                 (read, poll, waitpid, ...), running without a scheduling point (a spin-wait) or \
                 computing with asynchronous cancellation was set aside while the others ran ({} \
                 time(s) in all); their schedules may not replay exactly",
                r.name,
                r.partial,
                r.tries,
                r.outside_episodes
            );
        }
        for what in &r.uncontrolled {
            sayln!("{}: warning: {what}", r.name);
        }
        if r.step_limits > 0 && !s.plan.step_limit_is_bug {
            sayln!(
                "{}: {} run(s) reached the step limit (--max-steps {}): shown apart, not \
                 counted as bugs (--step-limit-is-bug counts them)",
                r.name,
                r.step_limits,
                s.plan.cfg.max_steps
            );
        }
        if r.profiling_cut_off > 0 {
            sayln!(
                "{}: points races: profiling was incomplete: {} of {} profiling run(s) reached \
                 the step limit (--max-steps {}), so races after it were not seen{}",
                r.name,
                r.profiling_cut_off,
                crate::points::PROFILE_RUNS,
                s.plan.cfg.max_steps,
                if r.racing_sites == Some(0) {
                    "; no race found in what ran, the tries used sync and atomic points"
                } else {
                    ""
                }
            );
        }
        if r.points == crate::points::AUTO {
            let first = r.learned_sites.iter().map(|l| l.try_index).min();
            sayln!(
                "{}: points auto: {} racing site(s) at the end, {} learned{}",
                r.name,
                r.racing_sites.unwrap_or(0),
                r.learned_sites.len(),
                first.map_or(String::new(), |t| format!(" (first from try {t})"))
            );
        }
        if !r.members.is_empty() {
            let parts: Vec<String> = r
                .members
                .iter()
                .map(|(m, t)| format!("{m} {}/{}", t.hits, t.tries))
                .collect();
            sayln!("{}: hits by member: {}", r.name, parts.join(", "));
        }
        if let Some(c) = &r.corpus {
            sayln!(
                "{}: rff corpus: {} schedule(s), {} reads-from pair(s)",
                r.name,
                c.entries,
                c.pairs
            );
        }
        match r.racing_sites {
            _ if r.points == crate::points::AUTO => {}
            Some(0) if r.profiling_cut_off > 0 => {}
            Some(0) => sayln!(
                "{}: points races: the profiling runs found no race; the tries used sync and \
                 atomic points",
                r.name
            ),
            Some(n) => sayln!("{}: points races: {n} racing site(s)", r.name),
            None => {}
        }
        if let Some(f) = &r.flag {
            sayln!("{}: FLAG: {f}", r.name);
            eprintln!("poscheck: {}: {f}", r.name);
        }
    }
    if let Some(path) = &a.json {
        let doc = report::SessionReport {
            algo: r.algo.clone(),
            seed,
            tries: a.tries,
            programs: table,
            interrupted: cleanup::interrupted(),
        };
        let json = serde_json::to_string_pretty(&doc).context("cannot encode the report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if cleanup::interrupted() {
        sayln!("poscheck: interrupted (SIGINT): the results above are those of the finished tries");
        return Ok(cleanup::INTERRUPTED_EXIT);
    }
    let bug = results.iter().any(|r| r.report.hits > 0);
    Ok(if bug {
        1
    } else if all_errors {
        2
    } else {
        0
    })
}
