//! Reports: the per-program table, the JSON document, saved schedules, and the HTML report
//! (`html`: a page of tables, `charts` and `lanes` diagrams drawn with the `svg` builder).

pub mod charts;
pub mod html;
pub mod lanes;
pub mod svg;

pub mod github;
pub mod junit;

pub mod source;
pub mod trace;

use crate::suite::harness::Tally;
use crate::suite::outcome::Outcome;
use anyhow::{Context, Result};
use pos_sched::schedule::Schedule;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `timeouts` field of a saved schedule for a run configuration.
pub fn timeouts_label(cfg: &crate::exec::session::RunConfig) -> String {
    if cfg.timeouts_any {
        "any".into()
    } else {
        String::new()
    }
}

/// A schedule file: the core's [`Schedule`] plus the runner's extras.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedSchedule {
    #[serde(flatten)]
    pub schedule: Schedule,
    /// PCT's k the run used (see `harness`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_k: Option<u64>,
    /// The recorded outcome in words, for people reading the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Times the recorded run set a thread aside as blocked outside control: the schedule
    /// may not replay exactly (when that thread came back was up to the kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<u64>,
    /// The working directory the program ran in: `replay` runs it there too (a program
    /// that opens files by relative path does something else elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The backend the run used (`preload` when absent: files saved before there was a
    /// choice); `replay --backend auto` uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<crate::exec::session::Backend>,
    /// Ptrace backend: whether the synchronisation functions had breakpoints
    /// (`--syscall-points-only` when false); `replay` does the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_points: Option<bool>,
    /// `poscheck minimize`: the schedule file this one was minimised from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimized_from: Option<String>,
    /// The environment variables that change how the program's threads run, as the
    /// recorded run had them ([`scheduling_env`]); `replay` sets exactly these (absent:
    /// a file saved before they were recorded, replayed in the current environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
}

/// Whether environment variable `name` changes how a program's threads run: Rust's
/// backtraces (a panic that captures one takes locks the other runs do not: a schedule
/// recorded without `RUST_BACKTRACE` went off track when replayed from a shell that sets
/// it), its thread stacks, OpenMP's team sizes and waiting (`OMP_*`, libgomp's `GOMP_*`,
/// LLVM's `KMP_*`) and glibc's tunables.
fn schedules_threads(name: &str) -> bool {
    matches!(
        name,
        "RUST_BACKTRACE" | "RUST_LIB_BACKTRACE" | "RUST_MIN_STACK" | "GLIBC_TUNABLES"
    ) || ["OMP_", "GOMP_", "KMP_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The variables of [`schedules_threads`] set in this process's environment, which the
/// programs it runs inherit: what a saved schedule records.
fn scheduling_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| schedules_threads(k))
        .collect()
}

/// Make the variables of [`schedules_threads`] in this process's environment (inherited by
/// the programs it runs) exactly `recorded`; returns the names it changed.
pub fn restore_scheduling_env(recorded: &BTreeMap<String, String>) -> Vec<String> {
    let mut changed = Vec::new();
    for (k, _) in std::env::vars_os() {
        if let Ok(k) = k.into_string() {
            if schedules_threads(&k) && !recorded.contains_key(&k) {
                std::env::remove_var(&k);
                changed.push(k);
            }
        }
    }
    for (k, v) in recorded {
        if std::env::var(k).ok().as_deref() != Some(v.as_str()) {
            std::env::set_var(k, v);
            changed.push(k.clone());
        }
    }
    changed
}

/// [`SavedSchedule::call_points`] of a run with `cfg`.
fn call_points_of(cfg: &crate::exec::session::RunConfig) -> Option<bool> {
    (cfg.backend == crate::exec::session::Backend::Ptrace).then_some(cfg.call_points)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The working directory to record in a saved schedule.
fn current_dir() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string())
}

impl SavedSchedule {
    /// `schedule`, recorded by a run with `cfg` whose outcome `detail` says, with what
    /// `replay` needs to run it the same way: the working directory, the scheduling
    /// environment ([`scheduling_env`]), the backend and its call points. The other extras
    /// are unset.
    pub fn of_run(
        schedule: Schedule,
        cfg: &crate::exec::session::RunConfig,
        detail: String,
    ) -> Self {
        SavedSchedule {
            schedule,
            pct_k: None,
            detail: Some(detail),
            partial: None,
            cwd: current_dir(),
            backend: Some(cfg.backend),
            call_points: call_points_of(cfg),
            minimized_from: None,
            env: Some(scheduling_env()),
        }
    }

    pub fn load(path: &Path) -> Result<SavedSchedule> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read schedule {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a poscheck schedule file", path.display()))
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self).context("cannot encode the schedule")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// One program's line of the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramReport {
    pub name: String,
    pub path: String,
    pub tries: u64,
    pub hits: u64,
    pub hit_ratio: f64,
    pub first_hit: Option<u64>,
    /// Seconds from the start of the program's tries until the first buggy try finished
    /// (absent in files written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_hit_s: Option<f64>,
    pub outcomes: BTreeMap<String, u64>,
    pub mean_steps: f64,
    pub wall_s: f64,
    /// Where the first buggy schedule was saved.
    pub schedule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_k: Option<u64>,
    /// The first bug in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Scheduling points the tries used (`sync`, `mem`, `races`, `auto`).
    pub points: String,
    /// How the program was controlled (`preload`, `ptrace`).
    pub backend: String,
    /// `--points races`: racing sites the profiling runs found (0: tries used sync points).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub racing_sites: Option<usize>,
    /// Partial runs: a thread was set aside as blocked outside control (their schedules may
    /// not replay exactly), and the number of such episodes over all runs.
    #[serde(skip_serializing_if = "is_zero")]
    pub partial: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub outside_episodes: u64,
    /// Position in the manifest (or command-line) order, before sharding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The manifest's expected outcome (`assert`, `crash`, `deadlock`, `none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// What the observed outcomes contradict in the manifest (see `compare::flag`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// Runs that reached the step limit: not in `hits` unless `--step-limit-is-bug`.
    #[serde(default)]
    pub step_limits: u64,
    /// `--points races`: profiling runs cut off by the step limit (the racing sites may be
    /// incomplete).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub profiling_cut_off: u64,
    /// `--points auto`: racing sites learned by the tries, each with the first try that
    /// exhibited it (a point from the next batch of tries on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned_sites: Vec<LearnedSite>,
    /// What ran uncontrolled in some run (a forked child's threads, an exec'd image).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncontrolled: Vec<String>,
    /// `auto`: the tries and hits of each member strategy (every hit is attributed to the
    /// member that ran its try).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub members: BTreeMap<String, MemberTally>,
    /// `rff`/`auto`: the reads-from corpus at the end of the tries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<CorpusSize>,
}

/// One member's share of an `auto` session.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct MemberTally {
    pub tries: u64,
    pub hits: u64,
}

/// The size of `rff`'s corpus.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CorpusSize {
    /// Schedules kept (each brought a new reads-from pair).
    pub entries: usize,
    /// Distinct reads-from pairs seen.
    pub pairs: usize,
}

/// A racing site learned by `auto` points.
#[derive(Clone, Debug, Serialize)]
pub struct LearnedSite {
    /// The instrumented instruction's address, in hex.
    pub pc: String,
    /// The try whose run first exhibited the race.
    pub try_index: u64,
}

/// The whole `--json` document.
#[derive(Clone, Debug, Serialize)]
pub struct SessionReport {
    pub algo: String,
    pub seed: u64,
    pub tries: u64,
    pub programs: Vec<ProgramReport>,
    /// The session was interrupted (SIGINT): these are the finished tries only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl ProgramReport {
    pub fn new(name: &str, path: &Path, t: &Tally, schedule: Option<&Path>) -> Self {
        ProgramReport {
            name: name.to_string(),
            path: path.display().to_string(),
            tries: t.tries,
            hits: t.hits,
            hit_ratio: if t.tries == 0 {
                0.0
            } else {
                t.hits as f64 / t.tries as f64
            },
            first_hit: t.first_hit.as_ref().map(|(i, _)| *i),
            first_hit_s: t.first_hit_s,
            outcomes: t.outcomes.clone(),
            mean_steps: if t.tries == 0 {
                0.0
            } else {
                t.total_steps as f64 / t.tries as f64
            },
            wall_s: t.wall_s,
            schedule: schedule.map(|p| p.display().to_string()),
            pct_k: t.pct_k,
            first_outcome: t.first_hit.as_ref().map(|(_, r)| r.outcome.clone()),
            first_error: t.first_error.clone(),
            points: t.points.split(':').next().unwrap_or_default().to_string(),
            backend: crate::exec::session::Backend::Preload.name().to_string(),
            racing_sites: t.racing_sites,
            partial: t.partial,
            outside_episodes: t.outside,
            step_limits: t.step_limits,
            profiling_cut_off: t.profile_cut_off,
            learned_sites: t
                .learned
                .iter()
                .map(|&(pc, i)| LearnedSite {
                    pc: format!("{pc:#x}"),
                    try_index: i,
                })
                .collect(),
            uncontrolled: t.uncontrolled.iter().cloned().collect(),
            members: t
                .members
                .iter()
                .map(|(m, &(tries, hits))| (m.clone(), MemberTally { tries, hits }))
                .collect(),
            corpus: t
                .corpus
                .map(|(entries, pairs)| CorpusSize { entries, pairs }),
            index: None,
            expect: None,
            flag: None,
        }
    }
}

/// File name for a program's first buggy schedule under `dir`.
pub fn schedule_path(dir: &Path, name: &str, algo: &str, seed: u64) -> PathBuf {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                '*' => 's',
                c if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' => c,
                _ => '_',
            })
            .collect()
    };
    dir.join(format!("{}.{}.seed{seed}.json", clean(name), clean(algo)))
}

/// The human table.
pub fn table(reports: &[ProgramReport]) -> String {
    let w = reports
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(7)
        .max(7);
    let mut s = format!(
        "{:<w$}  {:>7}  {:>6}  {:>8}  {:>9}  {:>9}  outcomes\n",
        "program", "tries", "hits", "ratio", "first hit", "mean steps"
    );
    for r in reports {
        let mut outcomes: Vec<String> =
            r.outcomes.iter().map(|(k, n)| format!("{k}={n}")).collect();
        if r.partial > 0 {
            outcomes.push(format!("partial={}", r.partial));
        }
        s += &format!(
            "{:<w$}  {:>7}  {:>6}  {:>8.4}  {:>9}  {:>10.1}  {}\n",
            r.name,
            r.tries,
            r.hits,
            r.hit_ratio,
            r.first_hit.map_or("-".to_string(), |i| i.to_string()),
            r.mean_steps,
            outcomes.join(" ")
        );
    }
    s
}

/// The last `max` bytes of captured output as text, indented.
pub fn tail_text(bytes: &[u8], max: usize) -> String {
    let start = bytes.len().saturating_sub(max);
    String::from_utf8_lossy(&bytes[start..])
        .lines()
        .map(|l| format!("    | {l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_variables_that_change_threads_are_recorded() {
        for n in [
            "RUST_BACKTRACE",
            "OMP_NUM_THREADS",
            "GOMP_SPINCOUNT",
            "KMP_BLOCKTIME",
        ] {
            assert!(schedules_threads(n), "{n}");
        }
        for n in ["HOME", "PATH", "LD_PRELOAD", "POS_SEED", "RUSTFLAGS"] {
            assert!(!schedules_threads(n), "{n}");
        }
    }

    #[test]
    fn schedule_names_are_file_safe() {
        let p = schedule_path(Path::new("out"), "a b", "pos*", 7);
        assert_eq!(p, Path::new("out/a_b.poss.seed7.json"));
    }

    #[test]
    fn saved_schedules_round_trip_with_extras() {
        let s = SavedSchedule {
            cwd: Some("/w".into()),
            backend: Some(crate::exec::session::Backend::Ptrace),
            call_points: Some(false),
            minimized_from: None,
            env: Some(BTreeMap::from([("OMP_NUM_THREADS".into(), "3".into())])),
            schedule: Schedule {
                program: "/bin/x".into(),
                algo: "pct3".into(),
                seed: 4,
                try_index: 2,
                ..Default::default()
            },
            pct_k: Some(12),
            detail: None,
            partial: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        s.save(&p).unwrap();
        let back = SavedSchedule::load(&p).unwrap();
        assert_eq!(back.schedule, s.schedule);
        assert_eq!(back.pct_k, Some(12));
        assert_eq!(back.env, s.env);
        assert_eq!(back.backend, Some(crate::exec::session::Backend::Ptrace));
        assert_eq!(back.call_points, Some(false));
        std::fs::write(&p, "{").unwrap();
        assert!(SavedSchedule::load(&p).is_err());
    }
}
