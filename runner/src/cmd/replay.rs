//! `poscheck replay`: re-run a saved schedule, check it reproduces the recorded outcome, and
//! say where and why the program left the schedule if it did.

use crate::cli::{ControlArgs, ReplayArgs};
use crate::exec::libpos;
use crate::exec::session::{self, RunConfig, RunResult};
use crate::report::source::{self, Symbols};
use crate::report::{tail_text, trace, SavedSchedule};
use crate::suite::outcome::Outcome;
use anyhow::{bail, Context, Result};
use pos_sched::strategy;
use std::path::{Path, PathBuf};

/// A saved schedule and the run configuration that replays it.
pub struct Prepared {
    pub saved: SavedSchedule,
    /// The schedule file, made absolute (the run may change directory).
    pub path: PathBuf,
    pub cfg: RunConfig,
    /// Holds the points set-up (the races file `cfg` names) while the runs go on.
    pub points: crate::points::Prepared,
}

/// Load the schedule at `path` and set up its replay: the recorded working directory (the
/// process enters it), backend, time rules and points, with `control` and `args` (replacing
/// the recorded arguments when not empty) given on the command line.
pub fn prepare(path: &Path, control: &ControlArgs, args: &[String]) -> Result<Prepared> {
    let saved = SavedSchedule::load(path)?;
    let sch = &saved.schedule;
    let program = PathBuf::from(&sch.program);
    // The program runs in the recorded working directory (the schedule file and program
    // were resolved before the change).
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let program = if program.is_relative() {
        std::fs::canonicalize(&program).unwrap_or(program)
    } else {
        program
    };
    if let Some(dir) = &saved.cwd {
        let here = std::env::current_dir().ok();
        if here.as_deref() != Some(std::path::Path::new(dir)) {
            if std::path::Path::new(dir).is_dir() {
                std::env::set_current_dir(dir).with_context(|| {
                    format!("cannot enter the recorded working directory {dir}")
                })?;
                sayln!("replay: running in the recorded working directory {dir}");
            } else {
                eprintln!(
                    "poscheck: warning: the recorded working directory {dir} does not exist: the \
                     program runs in {} (what it opens by relative path may differ)",
                    here.map_or_else(|| "?".into(), |h| h.display().to_string())
                );
            }
        }
    }
    if let Some(env) = &saved.env {
        let changed = crate::report::restore_scheduling_env(env);
        if !changed.is_empty() {
            sayln!("replay: environment as recorded for {}", changed.join(", "));
        }
    }
    let args = if args.is_empty() {
        sch.args.clone()
    } else {
        args.to_vec()
    };
    let mut cfg = RunConfig::new(program, args, libpos::find()?);
    crate::apply_control(&mut cfg, control)?;
    // A run cut at the step limit (saved with `--step-limit-is-bug`) ends where its schedule
    // does: the replay stops there too, reproducing the limit, instead of diverging with
    // "schedule ended but the program continues".
    if control.max_steps.is_none() && sch.outcome == "step-limit" {
        cfg.max_steps = sch.steps.len() as u64;
    }
    // `--backend auto`: the recorded one (preload for files saved before the choice).
    if cfg.requested.is_none() {
        cfg.requested = Some(saved.backend.unwrap_or(session::Backend::Preload));
    }
    session::resolve_backend(&mut cfg)?;
    if saved.call_points == Some(false) {
        cfg.call_points = false;
    }
    // The recorded time rules (a flag given to replay adds to them).
    cfg.timeouts_any |= sch.timeouts == "any";
    cfg.real_sleep |= sch.real_sleep;
    // The recorded points mode; `races:` carries the racing pcs. A bare `races` (a schedule
    // saved without them) profiles again with the recorded base seed, which finds the same
    // sites (see `points`).
    let (mode, pcs) = crate::points::decode(&sch.points)?;
    cfg.points = Some(if mode.is_empty() {
        crate::points::SYNC.to_string()
    } else {
        mode
    });
    let points = crate::points::prepare(&cfg, sch.seed, pcs)?;
    let cfg = points.cfg.clone();
    Ok(Prepared {
        saved,
        path,
        cfg,
        points,
    })
}

/// Run `steps` once under strict replay with caller pcs, and return the run with its
/// schedule annotated ([`source::annotate`]): pcs, object symbols, preemption marks.
pub fn annotated_run(
    cfg: &RunConfig,
    steps: &[pos_sched::schedule::Step],
    sym: &mut Symbols,
) -> Result<RunResult> {
    let mut cfg = cfg.clone();
    cfg.caller_pcs = true;
    let mut st = strategy::replay(steps.to_vec());
    let mut r = session::run_once(&cfg, st.as_mut(), 0)?;
    source::annotate(&mut r.schedule, &r.step_pcs, &r.maps, sym);
    Ok(r)
}

/// The outcome of `r` in words, with the source line of a crash.
pub fn outcome_text(r: &RunResult, sym: &mut Symbols) -> String {
    let mut text = r.outcome.to_string();
    if let Outcome::Crash { pc: Some(pc), .. } = &r.outcome {
        if let Some(loc) = sym.site(*pc, &r.maps).and_then(|s| sym.location_exact(&s)) {
            text.push_str(&format!(" (at {loc})"));
        }
    }
    text
}

/// Replay `a.schedule` `a.times` times. Exit code 1 when the replayed run hits a bug.
pub fn run(a: &ReplayArgs) -> Result<i32> {
    let Prepared {
        saved,
        path,
        cfg,
        points: _points,
    } = prepare(&a.schedule, &a.control, &a.args)?;
    let sch = &saved.schedule;
    let a = &ReplayArgs {
        schedule: path,
        ..a.clone()
    };
    let mut cfg = cfg;
    cfg.caller_pcs = a.trace;
    let mut same = 0;
    let mut partial = 0;
    let mut last = None;
    // Divergent replays (a partial run's schedule need not replay exactly): counted, and
    // the first one described; only when every replay diverged is that the error.
    let mut diverged = 0;
    let mut first_divergence = None;
    for n in 0..a.times.max(1) {
        let mut st = strategy::replay(sch.steps.clone());
        let r = session::run_once(&cfg, st.as_mut(), 0)?;
        if let Outcome::Diverged { step, reason } = &r.outcome {
            diverged += 1;
            first_divergence.get_or_insert_with(|| {
                format!(
                    "replay {} of {}: the program diverged from the schedule at step {step}: \
                     {reason}",
                    n + 1,
                    a.times.max(1)
                )
            });
            continue;
        }
        if sch.outcome.is_empty() || r.outcome.kind() == sch.outcome {
            same += 1;
        }
        partial += u64::from(r.outside > 0);
        last = Some(r);
    }
    let Some(mut r) = last else {
        bail!(
            "{}",
            first_divergence.unwrap_or_else(|| "no replay was run".into())
        );
    };
    if a.trace {
        let mut sym = Symbols::new();
        source::annotate(&mut r.schedule, &r.step_pcs, &r.maps, &mut sym);
        let steps = trace::readable(&r.schedule, &mut sym);
        say!(
            "{}",
            trace::render(&steps, Some(&outcome_text(&r, &mut sym)))
        );
    }
    sayln!(
        "replayed {} ({} steps, algo {} seed {} try {}): {}",
        a.schedule.display(),
        r.steps,
        sch.algo,
        sch.seed,
        sch.try_index,
        r.outcome
    );
    if !sch.outcome.is_empty() {
        sayln!(
            "recorded outcome {}: reproduced {same} of {} times",
            sch.outcome,
            a.times.max(1)
        );
    }
    if let Some(n) = saved.partial {
        sayln!(
            "note: the recorded run was partial: {n} time(s) a thread was blocked outside \
             control (blocked in a call libpos does not control, or spinning without a scheduling \
             point) and the others ran meanwhile; when it \
             came back was up to the kernel, so this schedule may not replay exactly"
        );
    }
    if partial > 0 {
        sayln!(
            "note: {partial} of {} replays were partial (a thread blocked outside control)",
            a.times.max(1)
        );
    }
    if let Some(first) = &first_divergence {
        sayln!(
            "note: {diverged} of {} replays diverged from the schedule (first: {first})",
            a.times.max(1)
        );
    }
    if r.outcome.is_bug() && !r.stderr.is_empty() {
        say!("  stderr (tail):\n{}", tail_text(&r.stderr, 2048));
    }
    Ok(i32::from(r.outcome.is_bug()))
}
