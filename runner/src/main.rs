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

mod classify;
mod cli;
mod cmd;
mod exec;
mod points;
mod report;
mod suite;

use anyhow::{bail, Context, Result};
use clap::Parser;
use exec::{cleanup, elf, forkserver, libpos, process, session};
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
        eprintln!("poscheck: error: {}", one_line(&e));
        return ExitCode::from(2);
    }
    let r = match &cli.command {
        cli::Command::Run(a) => cmd::run::run(a),
        cli::Command::Replay(a) => cmd::replay::run(a),
        cli::Command::Minimize(a) => cmd::minimize::run(a),
        cli::Command::Debug(a) => cmd::debug::run(a),
        cli::Command::Bench(a) => cmd::bench::run(a),
        cli::Command::Model(a) => cmd::model::run(a),
        cli::Command::Micro(a) => cmd::micro::run(a),
        cli::Command::Build(a) => cmd::build::run(
            &a.dir,
            &a.names,
            a.cc.as_deref(),
            a.force,
            a.jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        ),
        cli::Command::Compare(a) => cmd::compare::cmd(a),
        cli::Command::Cc(a) => {
            libpos_dir().and_then(|d| cmd::cc::compile(cmd::cc::Lang::C, &a.args, &d))
        }
        cli::Command::Cxx(a) => {
            libpos_dir().and_then(|d| cmd::cc::compile(cmd::cc::Lang::Cxx, &a.args, &d))
        }
        cli::Command::Rustc(a) => libpos_dir().and_then(|d| cmd::rustc::compile(&a.args, &d)),
        cli::Command::Races(a) => cmd::races::run(a),
        cli::Command::Merge(a) => cmd::merge::cmd(a),
        cli::Command::Explore(a) => cmd::explore::run(a),
        cli::Command::Report(a) => cmd::report::run(a),
        cli::Command::Env => cmd::env::run(),
        cli::Command::Baseline(a) => cmd::baseline::run(a),
    };
    forkserver::shut_down();
    match r {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("poscheck: error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// A command line clap rejects: help and version go out as clap prints them (exit 0); a
/// usage error is one line `poscheck: error: ...` (exit 2) like every other bad input.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::from(0);
    }
    eprintln!("poscheck: error: {}", usage_line(e));
    ExitCode::from(2)
}

/// clap's error as one line: its message and what follows on the next lines (the missing
/// arguments, a tip) up to the usage, joined; the subcommands when none was given.
fn usage_line(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        use clap::CommandFactory;
        let names: Vec<String> = cli::Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().to_string())
            .collect();
        return format!(
            "no subcommand given (one of {}; see poscheck --help)",
            names.join(", ")
        );
    }
    let text = e.render().to_string();
    // `Usage: poscheck run [OPTIONS] ...`: the command whose help to point at.
    let command = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .map(|u| {
            u.split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| c.starts_with("poscheck"))
        .unwrap_or_else(|| "poscheck".to_string());
    let mut parts: Vec<&str> = Vec::new();
    for l in text.lines().map(str::trim) {
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if !l.is_empty() {
            parts.push(l);
        }
    }
    let line = if parts.is_empty() {
        "invalid command line".to_string()
    } else {
        parts.join(" ")
    };
    let line = line.strip_prefix("error: ").unwrap_or(&line).to_string();
    let line = line.replace(": tip:", "; tip:").replace(" tip:", "; tip:");
    format!("{} (see {command} --help)", line.trim_end_matches(':'))
}

/// An error as one line: every message of the chain, a line break inside one becoming a
/// space (a usage or setup error is one line `poscheck: error: ...`).
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
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
    if !(c.compute_timeout.is_finite()
        && c.compute_timeout >= 0.0
        && c.compute_timeout <= MAX_STEP_TIMEOUT_SECS)
    {
        bail!(
            "--compute-timeout {}: must be a number of seconds from 0 to {MAX_STEP_TIMEOUT_SECS}",
            c.compute_timeout
        );
    }
    cfg.compute_timeout = Duration::try_from_secs_f64(c.compute_timeout)
        .with_context(|| format!("--compute-timeout {}", c.compute_timeout))?
        .max(cfg.step_timeout);
    let max_steps = c
        .max_steps
        .unwrap_or(pos_sched::coordinator::DEFAULT_MAX_STEPS);
    if max_steps == 0 {
        bail!("--max-steps must be at least 1");
    }
    cfg.max_steps = max_steps;
    cfg.ok_exit_codes = c.ok_exit_codes.clone();
    cfg.real_sleep = c.real_sleep;
    cfg.timeouts_any = match c.timeouts.as_str() {
        "deadline" => false,
        "any" => true,
        other => bail!("--timeouts must be `deadline` or `any`, not {other:?}"),
    };
    cfg.fork_server = !c.no_fork_server;
    cfg.pin = !c.no_pin;
    cfg.requested = session::Backend::parse(&c.backend)?;
    cfg.call_points = !c.syscall_points_only;
    cfg.blocked_after = (c.blocked_after > 0).then(|| Duration::from_millis(c.blocked_after));
    cfg.transport = session::Transport::parse(&c.transport)?;
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
        if info.raw_clone {
            // Probe 19: a raw task was said to be "no thread"; its CLONE_CHILD_CLEARTID
            // wake is now waited for in the kernel (`preload/src/rawclone.rs`).
            eprintln!(
                "poscheck: warning: {} calls clone() itself: the tasks it creates that way run \
                 uncontrolled (not scheduled) and their futex wakes do not reach the model; a \
                 wait for a task's exit on its CLONE_CHILD_CLEARTID word is left to the kernel",
                p.display()
            );
        }
        if !info.makes_threads && !info.raw_clone {
            eprintln!(
                "poscheck: warning: {} creates no thread (neither it nor its libraries import \
                 pthread_create, thrd_create, std::thread, an OpenMP parallel region, a timer \
                 or fork): its one thread has no interleavings to explore (its runs are \
                 checked for crashes and exit codes only)",
                p.display()
            );
        } else if info.rust_std && !info.instrumented {
            // Probe 16: a Rust Mutex split across two critical sections and a Condvar
            // waited on with `if` were found in 0 of 50 runs of each algorithm, silently.
            eprintln!(
                "poscheck: note: {} is a Rust program not built with `poscheck rustc`: \
                 std's uncontended Mutex and its atomics make no scheduling points, so the \
                 orders of what they protect are not varied; `poscheck rustc` builds it with \
                 them as points",
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
