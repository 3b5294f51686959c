//! `poscheck run`: one algorithm over one or more programs, a table of hit ratios, the first
//! bug's schedule of each program, and the JSON report.

use crate::cmd::compare;
use crate::exec::{cleanup, session};
use crate::{cli, report};
use anyhow::{Context, Result};

pub fn run(r: &cli::RunArgs) -> Result<i32> {
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
    compare::announce(&s, std::slice::from_ref(&r.algo), &programs)?;
    let results = compare::run_algo(&s, &r.algo, &programs, Some(programs.len()))?;
    let cli_no_minimize = r.no_minimize;
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
                sayln!("  schedule: {s} (poscheck replay --trace {s})");
                let slow = matches!(run.outcome.kind(), "hang" | "step-limit");
                if !cli_no_minimize && !cleanup::interrupted() && !slow {
                    minimize_first(s, &a.control);
                }
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
    if let Some(note) = compare::plain_build_note(&table) {
        sayln!("{note}");
    }
    let doc = report::SessionReport {
        algo: r.algo.clone(),
        seed,
        tries: a.tries,
        programs: table,
        interrupted: cleanup::interrupted(),
    };
    let suite = compare::junit_suite(&s, &r.algo, &programs, &results);
    report::github::emit(&suite.cases);
    if let Some(path) = &a.junit {
        report::junit::write(path, std::slice::from_ref(&suite))?;
    }
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&doc).context("cannot encode the report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &a.html {
        report::html::write(vec![report::html::Input::of("run", &doc)?], path)?;
        sayln!("poscheck: report written to {}", path.display());
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

/// Minimise a first bug's saved schedule (`poscheck minimize` with its budget, at most
/// [`crate::cmd::minimize::RUN_TIME_LIMIT`]; not for hangs and step limits, whose every
/// candidate run lasts the step timeout or the step limit) and say where the result went; a
/// failure is reported in one line and does not end the session.
fn minimize_first(schedule: &str, control: &cli::ControlArgs) {
    let path = std::path::Path::new(schedule);
    let out = crate::cmd::minimize::default_out(path);
    let here = std::env::current_dir().ok();
    let done = crate::cmd::replay::prepare(path, control, &[]).and_then(|prep| {
        crate::cmd::minimize::minimize_prepared(
            &prep,
            &out,
            crate::cmd::minimize::DEFAULT_BUDGET,
            crate::cmd::minimize::RUN_TIME_LIMIT,
            true,
        )
    });
    // `prepare` may have entered the recorded working directory.
    if let Some(h) = here {
        let _ = std::env::set_current_dir(h);
    }
    match done {
        Ok(m) => sayln!(
            "  minimised: {} -> {} preemptions: {} (poscheck replay --trace {})",
            m.before,
            m.after,
            m.path.display(),
            m.path.display()
        ),
        Err(e) => sayln!("  not minimised: {e:#}"),
    }
}
