//! `poscheck debug SCHEDULE.json [--step N]`: replay a schedule with the program under gdb and
//! stop it at scheduling step N (default: the last, where the bug happens), every thread
//! where the schedule has it: the step's thread in libpos's `pos_debug_stop`, about to
//! return into the program with its operation granted, the others blocked in libpos
//! waiting for their turn. The coordinator keeps replaying the schedule when gdb continues.

use crate::cli::ControlArgs;
use crate::cmd::replay;
use crate::exec::session::{self, Backend, DebugRun};
use crate::report::source::Symbols;
use crate::report::trace;
use anyhow::{bail, Context, Result};
use pos_sched::strategy;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  poscheck debug poscheck-out/atomicity_violation.pos.seed1.json\n  \
                        poscheck debug --step 3 --batch --ex bt --ex continue SCHEDULE.json"
)]
pub struct DebugArgs {
    /// A schedule file saved by `poscheck run` or `poscheck minimize`.
    pub schedule: PathBuf,
    /// Stop at this scheduling step (0-based, as `replay --trace` numbers them) [default: the
    /// last step, where the bug happens].
    #[arg(long, value_name = "N")]
    pub step: Option<u64>,
    /// A gdb command to run once stopped (repeatable; gdb's `-ex`).
    #[arg(long = "ex", value_name = "CMD")]
    pub ex: Vec<String>,
    /// gdb in batch mode: run the `--ex` commands and exit (scripts, tests).
    #[arg(long)]
    pub batch: bool,
    /// The debugger to run.
    #[arg(long, default_value = "gdb", value_name = "GDB")]
    pub gdb: String,
    #[command(flatten)]
    pub control: ControlArgs,
}

/// Whether `gdb` can be run (its `--version` works).
pub fn gdb_available(gdb: &str) -> bool {
    std::process::Command::new(gdb)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn run(a: &DebugArgs) -> Result<i32> {
    if !gdb_available(&a.gdb) {
        bail!(
            "cannot run {}: install gdb (scripts/install-deps.sh does) or name it with --gdb",
            a.gdb
        );
    }
    let prep = replay::prepare(&a.schedule, &a.control, &[])?;
    if prep.cfg.backend == Backend::Ptrace {
        bail!("debug needs the preload backend (gdb and the ptrace backend cannot both trace the program)");
    }
    let steps = &prep.saved.schedule.steps;
    let Some(last) = (steps.len() as u64).checked_sub(1) else {
        bail!("the schedule has no steps");
    };
    let stop = a.step.unwrap_or(last);
    if stop > last {
        bail!(
            "--step {stop}: the schedule has {} steps (0 to {last})",
            steps.len()
        );
    }
    // The steps up to the stop, readable (one quick replay for the source lines).
    let mut sym = Symbols::new();
    let before = replay::annotated_run(&prep.cfg, steps, &mut sym)
        .context("the replay before the debugger")?;
    let shown = trace::readable(&before.schedule, &mut sym);
    let upto: Vec<_> = shown.into_iter().take(stop as usize + 1).collect();
    let from = upto.len().saturating_sub(12);
    say!("{}", trace::render(&upto[from..], None));
    let at = &upto[stop as usize];
    sayln!(
        "poscheck debug: stopping at step {stop}: thread {} {} at {}",
        at.thread,
        at.op,
        at.location.as_deref().unwrap_or("?")
    );
    sayln!(
        "  thread {} is the current thread in gdb, stopped in pos_debug_stop with its {} \
         granted (bt shows the program's frames below libpos's); the other threads wait in \
         libpos for their turn.",
        at.thread,
        at.op
    );
    sayln!(
        "  continue: the schedule goes on from step {stop} (to the bug at its end); info threads, \
         thread N, bt, frame N, print VAR as usual; quit ends the run."
    );
    let mut gdb: Vec<OsString> = vec![a.gdb.clone().into()];
    let mut ex = |c: &str| {
        gdb.push("-ex".into());
        gdb.push(c.into());
    };
    ex("set breakpoint pending on");
    ex("set pagination off");
    ex("break pos_debug_stop");
    ex("run");
    ex("bt");
    // The program's frame of the step (its function, from the trace's location).
    if let Some(func) = at.location.as_deref().and_then(|l| l.rsplit_once(" in ")) {
        if !func.1.contains(' ') {
            ex(&format!("frame function {}", func.1));
        }
    }
    for c in &a.ex {
        ex(c);
    }
    if a.batch {
        gdb.push("-batch".into());
    }
    let mut cfg = prep.cfg.clone();
    cfg.debug = Some(DebugRun {
        gdb,
        stop_step: stop,
    });
    // A person at the gdb prompt takes their time: no step timeout, no probing.
    cfg.step_timeout = Duration::from_secs(7 * 24 * 3600);
    cfg.compute_timeout = cfg.step_timeout;
    cfg.blocked_after = None;
    let mut st = strategy::replay(steps.clone());
    let r = session::run_once(&cfg, st.as_mut(), 0)?;
    sayln!(
        "poscheck debug: gdb ended ({} scheduling steps granted)",
        r.steps
    );
    Ok(0)
}
