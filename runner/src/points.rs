//! Scheduling-point modes (`--points sync|mem|races|auto`): the default for a program,
//! refusing modes a program cannot have, the profiling step of `races` and the site files
//! of `auto`.
//!
//! - `sync`: only synchronisation, thread and process events are points (any program).
//! - `mem`: also every access of an instrumented program (`poscheck cc`) that is not on the
//!   accessing thread's own stack.
//! - `races`: after the Maple harness behind SCTBench (Thomson, Donaldson, Betts, PPoPP'14,
//!   "Concurrency testing using schedule bounding: an empirical study", §4) and the POS
//!   paper's evaluation (Yuan et al., CAV'18, §6): profiling runs with every access a point
//!   feed a happens-before (vector clock) race detector ([`pos_sched::race`]); the tries
//!   then stop only at the racing instruction addresses plus synchronisation, and libpos
//!   decides every other access locally. Atomic operations (`__tsan_atomic*`) are always
//!   points too: they never race, yet lock-free code's bugs lie between them.
//! - `auto` (the default for instrumented programs): `races` without the up-front profile
//!   and with a race detector that never stops. Atomics and the known racing sites are
//!   points; every other plain access is *observed* (libpos buffers it and sends it before
//!   the thread's next post: no round trip), and the coordinator's happens-before detector
//!   runs over each try's whole trace. Sites found racing become points for later tries,
//!   in fixed-size batches ([`LEARN_BATCH`], [`pos_sched::race::Learner`]): try `i` runs
//!   with the sites learned from the tries before its batch, so a seed gives the same
//!   results whatever `--jobs`. A saved schedule records the site set its try ran with
//!   (`auto:0xPC,...`), and `replay` uses it.
//!
//! Profiling: [`PROFILE_RUNS`] runs under `pos` in `mem` mode. Run `j` uses the seed
//! `try_seed(S, u64::MAX - j)` for the session's base seed `S`: fixed for `S` (so a
//! session, and a replay of one of its schedules, finds the same sites) and distinct from
//! the seeds `try_seed(S, i)` of the tries. POS samples partial orders far more evenly than
//! a random walk (paper §5), so its runs expose more distinct concurrent pairs.
//!
//! Racing pcs are absolute addresses: the runner disables ASLR, so an address seen in a
//! profiling run is the same in every later run. A saved schedule records them in its
//! `points` field as `races:0xPC,0xPC,...` ([`encode`]), so a replay needs nothing else.

use crate::exec::elf;
use crate::exec::session::{self, RunConfig};
use anyhow::{anyhow, bail, Context, Result};
use pos_sched::race::{Detector, Race};
use pos_sched::rng::try_seed;
use pos_sched::strategy::{self, Options};
use std::collections::BTreeSet;
use std::path::Path;

/// Profiling runs before the tries of a `races` session.
pub const PROFILE_RUNS: u64 = 10;
/// The strategy of the profiling runs.
pub const PROFILE_ALGO: &str = "pos";

pub const SYNC: &str = "sync";
pub const MEM: &str = "mem";
pub const RACES: &str = "races";
pub const AUTO: &str = "auto";

/// Tries per learning batch of `auto` mode: every try of a batch runs with the same sites.
pub const LEARN_BATCH: u64 = 16;

/// The mode a session uses for `program`: `requested`, checked, or the default (`auto` for
/// instrumented programs, `sync` otherwise). All but `sync` need an instrumented program.
pub fn resolve(requested: Option<&str>, program: &Path) -> Result<String> {
    let info = elf::check(program)?;
    let mode = match requested {
        None if info.instrumented => AUTO,
        None => SYNC,
        Some(m @ (SYNC | MEM | RACES | AUTO)) => m,
        Some(other) => bail!("--points {other:?}: expected sync, mem, races or auto"),
    };
    if mode != SYNC && !info.instrumented {
        bail!(
            "--points {mode} needs a program compiled with `poscheck cc` (-fsanitize=thread \
             instrumentation); {} is not instrumented, so only --points sync applies",
            program.display()
        );
    }
    Ok(mode.to_string())
}

/// What the profiling runs found.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Memory accesses seen across the runs.
    pub accesses: u64,
    /// Racing pairs of sites, each once.
    pub races: Vec<Race>,
    /// Every pc taking part in a race.
    pub pcs: BTreeSet<u64>,
    /// The program's mappings (from the last run that reported them), to symbolise pcs.
    pub maps: Vec<elf::Mapping>,
    /// Outcome kinds of the profiling runs that were not `ok`, for the user.
    pub notes: Vec<String>,
    /// Profiling runs cut off by the step limit: the races after the cut were not seen.
    pub cut_off: u64,
}

/// The seed of profiling run `j` of a session with base seed `seed`.
pub fn profile_seed(seed: u64, j: u64) -> u64 {
    try_seed(seed, u64::MAX - j)
}

/// Run `runs` profiling runs of `cfg.program` with every access a point and collect the
/// races of each run's trace (one detector per run: races are per execution).
pub fn profile(cfg: &RunConfig, seed: u64, runs: u64) -> Result<Profile> {
    let mut pc = cfg.clone();
    pc.points = Some(MEM.into());
    pc.races_file = None;
    pc.record_trace = true;
    let mut out = Profile::default();
    let mut all = BTreeSet::new();
    for j in 0..runs {
        let mut st =
            strategy::by_name(PROFILE_ALGO, &Options::default()).map_err(|e| anyhow!(e))?;
        let r = session::run_once(&pc, st.as_mut(), profile_seed(seed, j))
            .with_context(|| format!("profiling run {j}"))?;
        let mut d = Detector::new();
        for (ev, pc) in &r.trace {
            if ev.op.is_memory() {
                out.accesses += 1;
            }
            d.step(ev, *pc);
        }
        all.extend(d.races());
        out.pcs.extend(d.racing_pcs());
        if !r.maps.is_empty() {
            out.maps = r.maps;
        }
        out.cut_off += u64::from(matches!(
            r.outcome,
            crate::suite::outcome::Outcome::StepLimit { .. }
        ));
        if r.outcome.kind() != "ok" {
            out.notes.push(format!("profiling run {j}: {}", r.outcome));
        }
    }
    // One entry per pair of sites, whichever run found it.
    let mut seen = BTreeSet::new();
    out.races = all
        .into_iter()
        .filter(|r| seen.insert((r.a, r.b)))
        .collect();
    Ok(out)
}

/// The races-file text libpos reads (`POSCHECK_RACES_FILE`: one hex pc per line).
pub fn races_file_text(pcs: &BTreeSet<u64>) -> String {
    let mut s = String::from("# racing instruction addresses (poscheck races profiling)\n");
    for pc in pcs {
        s.push_str(&format!("{pc:#x}\n"));
    }
    s
}

/// The `points` value a saved schedule records: the mode, plus the racing pcs in `races`
/// and `auto` (a bare `auto` when no site was known).
pub fn encode(mode: &str, pcs: &BTreeSet<u64>) -> String {
    let lists = mode == RACES || (mode == AUTO && !pcs.is_empty());
    if !lists {
        return mode.to_string();
    }
    let list: Vec<String> = pcs.iter().map(|p| format!("{p:#x}")).collect();
    format!("{mode}:{}", list.join(","))
}

/// Inverse of [`encode`]: the mode, and the pcs when the value lists them (`races:...`).
pub fn decode(s: &str) -> Result<(String, Option<BTreeSet<u64>>)> {
    let Some((mode, list)) = s.split_once(':') else {
        return Ok((s.to_string(), None));
    };
    if mode != RACES && mode != AUTO {
        bail!("bad points value {s:?} in the schedule");
    }
    let mut pcs = BTreeSet::new();
    for p in list.split(',').filter(|p| !p.is_empty()) {
        let hex = p.trim().trim_start_matches("0x");
        pcs.insert(
            u64::from_str_radix(hex, 16)
                .with_context(|| format!("bad pc {p:?} in the schedule's points"))?,
        );
    }
    Ok((mode.to_string(), Some(pcs)))
}

/// A run configuration ready for the tries, and what the points step found.
pub struct Prepared {
    pub cfg: RunConfig,
    /// The mode the tries use.
    pub mode: String,
    /// `races` mode: the racing sites found (0 = none).
    pub racing_sites: Option<usize>,
    /// `races` mode: profiling runs cut off by the step limit (the profile is incomplete).
    pub cut_off: u64,
    pub pcs: BTreeSet<u64>,
    /// Holds the races file while the tries run.
    _dir: Option<(tempfile::TempDir, crate::exec::cleanup::Guard)>,
    /// `auto` mode: site files written so far (each set gets a new file, so a fork server
    /// started for an older set, keyed by the environment, is never reused for a newer).
    generation: u32,
}

impl Prepared {
    /// The `points` value for saved schedules ([`encode`]).
    pub fn recorded(&self) -> String {
        encode(&self.mode, &self.pcs)
    }

    /// `auto` mode: make `pcs` the sites of the following tries (a new races file).
    pub fn set_pcs(&mut self, pcs: BTreeSet<u64>) -> Result<()> {
        let Some((dir, _)) = &self._dir else {
            bail!("no races file to update in points mode {}", self.mode);
        };
        self.generation += 1;
        let file = dir.path().join(format!("races-{}.txt", self.generation));
        std::fs::write(&file, races_file_text(&pcs))
            .with_context(|| format!("cannot write {}", file.display()))?;
        self.cfg.races_file = Some(file);
        self.racing_sites = Some(pcs.len());
        self.pcs = pcs;
        Ok(())
    }
}

/// A temporary directory for races files, removed on exit or interrupt.
fn races_dir() -> Result<(tempfile::TempDir, crate::exec::cleanup::Guard)> {
    let dir = tempfile::Builder::new()
        .prefix("poscheck-races-")
        .tempdir()
        .context("cannot create a temporary directory for the races file")?;
    let guard = crate::exec::cleanup::Guard::dir(dir.path());
    Ok((dir, guard))
}

/// Prepare `cfg` for tries: settle the mode ([`resolve`]: `cfg.points` or the program's
/// default); in `races` mode without a races file, profile (base seed `seed`) or take
/// `known` pcs (a replay), write the racing pcs to a file in a temp dir and point
/// `POSCHECK_RACES_FILE` at it (with no race found, the tries stop at atomics and sync).
/// In `auto` mode, no profile: the file holds the `known` sites (or none), and
/// [`Prepared::set_pcs`] replaces it as the tries learn.
pub fn prepare(cfg: &RunConfig, seed: u64, known: Option<BTreeSet<u64>>) -> Result<Prepared> {
    let ptrace = cfg.backend == crate::exec::session::Backend::Ptrace;
    // The ptrace backend has system-call points only: sync unless asked otherwise.
    let requested = cfg.points.as_deref().or(ptrace.then_some(SYNC));
    if let Some(mode) = requested.filter(|&m| ptrace && m != SYNC) {
        bail!(
            "--points {mode}: not available with the ptrace backend, whose scheduling points are \
             system calls only (use --points sync, or --backend preload on a dynamically linked \
             build)"
        );
    }
    let mode = resolve(requested, &cfg.program)?;
    let mut cfg = cfg.clone();
    cfg.points = (mode != SYNC).then(|| mode.clone());
    if mode == AUTO && cfg.races_file.is_none() {
        // No profile: the sites come from the tries (or the replayed schedule).
        let mut p = Prepared {
            cfg,
            mode,
            racing_sites: None,
            cut_off: 0,
            pcs: BTreeSet::new(),
            _dir: Some(races_dir()?),
            generation: 0,
        };
        p.set_pcs(known.unwrap_or_default())?;
        return Ok(p);
    }
    if mode != RACES || cfg.races_file.is_some() {
        return Ok(Prepared {
            cfg,
            mode,
            racing_sites: None,
            cut_off: 0,
            pcs: BTreeSet::new(),
            _dir: None,
            generation: 0,
        });
    }
    let (pcs, cut_off) = match known {
        Some(p) => (p, 0),
        None => {
            let p = profile(&cfg, seed, PROFILE_RUNS)?;
            (p.pcs, p.cut_off)
        }
    };
    // No race found: the tries still stop at atomics and synchronisation (`races` mode
    // with an empty races file), not at sync points only.
    let mut p = Prepared {
        cfg,
        mode: RACES.into(),
        racing_sites: None,
        cut_off,
        pcs: BTreeSet::new(),
        _dir: Some(races_dir()?),
        generation: 0,
    };
    p.set_pcs(pcs)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_points_round_trip() {
        let pcs: BTreeSet<u64> = [0x401136, 0x5555_5555_5180].into_iter().collect();
        let s = encode(RACES, &pcs);
        assert_eq!(s, "races:0x401136,0x555555555180");
        assert_eq!(decode(&s).unwrap(), (RACES.to_string(), Some(pcs.clone())));
        assert_eq!(encode(MEM, &pcs), "mem");
        assert_eq!(decode("mem").unwrap(), (MEM.to_string(), None));
        assert_eq!(decode("races").unwrap(), (RACES.to_string(), None));
        assert!(decode("races:0xzz").is_err());
        assert!(decode("mem:0x1").is_err());
        assert_eq!(encode(AUTO, &BTreeSet::new()), "auto");
        let a = encode(AUTO, &pcs);
        assert_eq!(a, "auto:0x401136,0x555555555180");
        assert_eq!(decode(&a).unwrap(), (AUTO.to_string(), Some(pcs.clone())));
        assert_eq!(decode("auto").unwrap(), (AUTO.to_string(), None));
    }

    #[test]
    fn races_file_lists_hex_pcs() {
        let pcs: BTreeSet<u64> = [0x10, 0x401136].into_iter().collect();
        let t = races_file_text(&pcs);
        let lines: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, vec!["0x10", "0x401136"]);
    }

    #[test]
    fn profile_seeds_are_fixed_and_distinct_from_try_seeds() {
        assert_eq!(profile_seed(7, 0), profile_seed(7, 0));
        let tries: BTreeSet<u64> = (0..1000).map(|i| try_seed(7, i)).collect();
        for j in 0..PROFILE_RUNS {
            assert!(!tries.contains(&profile_seed(7, j)));
        }
    }
}
