//! `poscheck minimize SCHEDULE.json [-o OUT]`: the schedule with the fewest preemptions that
//! still reproduces the recorded bug, found by delta debugging over the preemptions
//! ([`pos_sched::minimize`]); every candidate is checked by running the program, and the
//! result by a strict replay before it is saved.

use crate::cli::ControlArgs;
use crate::cmd::replay::{self, Prepared};
use crate::exec::session::{self, RunResult};
use crate::report::source::Symbols;
use crate::report::{trace, SavedSchedule};
use crate::suite::outcome::Outcome;
use anyhow::{bail, Result};
use pos_sched::minimize::{self, Guided};
use pos_sched::schedule::Schedule;
use pos_sched::Tid;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Example:\n  poscheck minimize poscheck-out/lost_wakeup.pos.seed1.json\n  \
                        poscheck replay --trace poscheck-out/lost_wakeup.pos.seed1.min.json"
)]
pub struct MinimizeArgs {
    /// A schedule file saved by `poscheck run` (or `replay`-able by any other means).
    pub schedule: PathBuf,
    /// Where to save the minimised schedule [default: next to the input, NAME.min.json].
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// At most this many candidate runs of the program.
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    pub budget: usize,
    /// At most this many seconds of candidate runs (then the best schedule found so far).
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub time_limit: u64,
    #[command(flatten)]
    pub control: ControlArgs,
}

/// Default [`MinimizeArgs::budget`].
pub const DEFAULT_BUDGET: usize = 400;

/// How long `run` lets the minimisation of one first bug take.
pub const RUN_TIME_LIMIT: Duration = Duration::from_secs(30);

/// What a minimisation found.
pub struct Minimized {
    pub before: usize,
    pub after: usize,
    /// Candidate runs made.
    pub runs: usize,
    pub path: PathBuf,
    /// The readable traces of the schedule before and after (outcome included).
    pub trace_before: String,
    pub trace_after: String,
}

/// `NAME.json` → `NAME.min.json`.
pub fn default_out(schedule: &Path) -> PathBuf {
    let stem = schedule
        .file_stem()
        .map_or_else(|| "schedule".into(), |s| s.to_string_lossy().into_owned());
    schedule.with_file_name(format!("{stem}.min.json"))
}

pub fn run(a: &MinimizeArgs) -> Result<i32> {
    let out = a.out.clone().unwrap_or_else(|| default_out(&a.schedule));
    // Resolve the output before `prepare` may enter the recorded working directory.
    let out = absolute(&out);
    let prep = replay::prepare(&a.schedule, &a.control, &[])?;
    let m = minimize_prepared(
        &prep,
        &out,
        a.budget,
        Duration::from_secs(a.time_limit),
        false,
    )?;
    say!("before ({} preemptions):\n{}", m.before, m.trace_before);
    say!("after ({} preemptions):\n{}", m.after, m.trace_after);
    sayln!(
        "preemptions: {} before, {} after ({} candidate runs); saved {} (poscheck replay --trace {})",
        m.before,
        m.after,
        m.runs,
        m.path.display(),
        m.path.display()
    );
    Ok(0)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

/// Whether `got` is the same bug as `want`: the same kind of outcome, and for an assertion
/// the same message, for a crash the same signal.
pub fn same_bug(got: &Outcome, want: &Outcome) -> bool {
    match (got, want) {
        (Outcome::Assert { text: a, .. }, Outcome::Assert { text: b, .. }) => a == b,
        (Outcome::Crash { signal: a, .. }, Outcome::Crash { signal: b, .. }) => a == b,
        _ => got.is_bug() && got.kind() == want.kind(),
    }
}

/// Minimise the prepared schedule and save the result at `out`: at most `budget` candidate
/// runs, none started after `time_limit`. With `annotate`, the schedule file itself is
/// rewritten with the source annotations its strict replay recorded (pcs, object symbols,
/// preemption marks; the same decisions): `run` does so for the first bugs it saved, so
/// that their traces and report diagrams show `file:line`.
pub fn minimize_prepared(
    prep: &Prepared,
    out: &Path,
    budget: usize,
    time_limit: Duration,
    annotate: bool,
) -> Result<Minimized> {
    let deadline = Instant::now() + time_limit;
    let sch = &prep.saved.schedule;
    let mut sym = Symbols::new();
    let orig = replay::annotated_run(&prep.cfg, &sch.steps, &mut sym)?;
    if let Outcome::Diverged { step, reason } = &orig.outcome {
        bail!("the schedule does not replay: the program diverged at step {step}: {reason}");
    }
    if !orig.outcome.is_bug() {
        bail!(
            "nothing to minimise: the schedule's run ends {} (recorded: {})",
            orig.outcome,
            if sch.outcome.is_empty() {
                "?"
            } else {
                &sch.outcome
            }
        );
    }
    if !sch.outcome.is_empty() && orig.outcome.kind() != sch.outcome {
        bail!(
            "the schedule does not reproduce its recorded outcome {}: the replay ends {}",
            sch.outcome,
            orig.outcome
        );
    }
    if annotate && orig.schedule.len() == sch.steps.len() {
        let same = orig
            .schedule
            .iter()
            .zip(&sch.steps)
            .all(|(a, b)| a.tid == b.tid && a.op_name() == b.op_name());
        if same {
            let mut annotated = prep.saved.clone();
            annotated.schedule.steps = orig.schedule.clone();
            annotated.save(&prep.path)?;
        }
    }
    let target = orig.outcome.clone();
    let before = minimize::preemptions(&orig.schedule);
    let all = minimize::switches(&orig.schedule);
    let mut threads: Vec<Tid> = orig.schedule.iter().map(|s| s.tid).collect();
    threads.sort_unstable();
    threads.dedup();
    // A candidate that leaves the recorded interleaving may spin much longer; it is no use.
    let mut cfg = prep.cfg.clone();
    cfg.max_steps = cfg.max_steps.min(orig.steps * 20 + 1000);
    let mut runs = 0;
    let mut try_rules = |rules: &[minimize::Switch], last: bool| -> Option<RunResult> {
        if !last && Instant::now() >= deadline {
            return None;
        }
        runs += 1;
        let mut g = Guided::new(rules);
        let r = session::run_once(&cfg, &mut g, 0).ok()?;
        (same_bug(&r.outcome, &target) && r.outside == 0).then_some(r)
    };
    let rules = minimize::minimize(&all, &threads, budget, |rules| {
        try_rules(rules, false).is_some()
    });
    let found = try_rules(&rules, true);
    // The search's result, or the schedule as it was when its run does not come back the
    // same (a program that is not deterministic under control).
    let steps = found.map_or_else(|| orig.schedule.clone(), |r| r.schedule);
    let check = replay::annotated_run(&prep.cfg, &steps, &mut sym)?;
    if !same_bug(&check.outcome, &target) {
        bail!(
            "the minimised schedule does not replay to the same bug: it ends {}",
            check.outcome
        );
    }
    let after = minimize::preemptions(&check.schedule);
    let saved = SavedSchedule {
        schedule: Schedule {
            outcome: check.outcome.kind().to_string(),
            steps: check.schedule.clone(),
            ..sch.clone()
        },
        detail: Some(check.outcome.to_string()),
        partial: None,
        minimized_from: Some(prep.path.display().to_string()),
        ..prep.saved.clone()
    };
    saved.save(out)?;
    let show = |r: &RunResult, sym: &mut Symbols| {
        let steps = trace::readable(&r.schedule, sym);
        trace::render(&steps, Some(&replay::outcome_text(r, sym)))
    };
    Ok(Minimized {
        before,
        after,
        runs,
        path: out.to_path_buf(),
        trace_before: show(&orig, &mut sym),
        trace_after: show(&check, &mut sym),
    })
}
