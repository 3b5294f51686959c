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
mod cli;
mod cmd;
mod elf;
mod harness;
mod libpos;
mod outcome;
mod process;
mod replay;
mod report;
mod session;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
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
    };
    match r {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("poscheck: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Apply the options shared by `run` and `replay` to a run configuration.
pub(crate) fn apply_control(cfg: &mut session::RunConfig, c: &cli::ControlArgs) -> Result<()> {
    if !(c.step_timeout.is_finite() && c.step_timeout > 0.0) {
        bail!("--step-timeout must be a positive number of seconds");
    }
    cfg.step_timeout = Duration::from_secs_f64(c.step_timeout);
    cfg.max_steps = c.max_steps;
    cfg.ok_exit_codes = c.ok_exit_codes.clone();
    cfg.real_sleep = c.real_sleep;
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
        if !info.uses_pthread {
            eprintln!(
                "poscheck: warning: {} imports no pthread function; nothing will be scheduled",
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

fn run_cmd(a: &cli::RunArgs) -> Result<i32> {
    let seed = a.seed.unwrap_or_else(fresh_seed);
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let libpos = libpos::find()?;
    let programs = targets(&a.paths)?;
    let mut base = session::RunConfig::new(PathBuf::new(), a.args.clone(), libpos);
    apply_control(&mut base, &a.control)?;
    base.points = a.points.clone();
    let plan0 = harness::Plan {
        algo: a.algo.clone(),
        depth: a.depth,
        seed,
        tries: a.tries,
        jobs,
        stop_on_first: a.stop_on_first,
        cfg: base,
    };
    harness::make_strategy(&plan0, None)?;
    sayln!(
        "poscheck: algo={} seed={seed} tries={} jobs={jobs}",
        a.algo,
        a.tries
    );
    let mut reports = Vec::new();
    let mut all_errors = false;
    for prog in &programs {
        let abs = std::fs::canonicalize(prog).unwrap_or_else(|_| prog.clone());
        let name = program_name(prog);
        let mut plan = plan0.clone();
        plan.cfg.program = abs.clone();
        let tally = harness::run_tries(&plan, &name)?;
        let mut saved_at = None;
        if let Some((i, r)) = &tally.first_hit {
            let path = report::schedule_path(&a.out_dir, &name, &a.algo, seed);
            report::SavedSchedule {
                schedule: pos_sched::schedule::Schedule {
                    program: abs.display().to_string(),
                    args: a.args.clone(),
                    algo: a.algo.clone(),
                    seed,
                    try_index: *i,
                    points: a.points.clone().unwrap_or_else(|| "sync".into()),
                    outcome: r.outcome.kind().to_string(),
                    steps: r.schedule.clone(),
                },
                pct_k: tally.pct_k,
                detail: Some(r.outcome.to_string()),
            }
            .save(&path)?;
            saved_at = Some(path);
        }
        if tally.tries > 0 && tally.outcomes.get("error") == Some(&tally.tries) {
            all_errors = true;
        }
        reports.push((
            report::ProgramReport::new(&name, &abs, &tally, saved_at.as_deref()),
            tally,
        ));
    }
    let table: Vec<report::ProgramReport> = reports.iter().map(|(r, _)| r.clone()).collect();
    say!("{}", report::table(&table));
    for (r, t) in &reports {
        if let Some((i, run)) = &t.first_hit {
            sayln!("{}: first bug at try {i}: {}", r.name, run.outcome);
            if let Some(s) = &r.schedule {
                sayln!("  schedule: {s} (poscheck replay {s})");
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
    }
    if let Some(path) = &a.json {
        let doc = report::SessionReport {
            algo: a.algo.clone(),
            seed,
            tries: a.tries,
            programs: table,
        };
        let json = serde_json::to_string_pretty(&doc).context("cannot encode the report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let bug = reports.iter().any(|(r, _)| r.hits > 0);
    Ok(if bug {
        1
    } else if all_errors {
        2
    } else {
        0
    })
}
