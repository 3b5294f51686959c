//! `poscheck races --classify PROG [-- ARGS]`: which races matter (R4's report phase, Jensen,
//! Møller, Raychev, Dimitrov, Vechev, OOPSLA'15, §5).
//!
//! 1. Record one run: the exploration guide's default schedule (lowest thread first), in
//!    `races` points mode (the profiled racing accesses and the atomics are events) or
//!    `mem`, or `sync` for an uninstrumented program with `--sync`.
//! 2. Its races ([`target::memory_races`]), plus with `--sync` its synchronisation conflicts
//!    ([`target::sync_conflicts`]), grouped per pair of sites (instructions; for
//!    synchronisation, the object and the two operations).
//! 3. For `--per-pair` dynamic races of each group (the widest first, then in run order),
//!    run the reversal ([`target::reversal`]) with the guide in approximate mode, check that
//!    the run realised it ([`target::realised`]) and compare its outcome and output with the
//!    recorded run's ([`rule::classify`]): harmless, harmful or not reversible. The run goes
//!    on after the reversal with the rest of the recorded order; when that changes nothing,
//!    a second run goes on with the default rule instead ([`target::Rest`]): approximate
//!    replay of the recorded order lets a thread that waited for the reversed lock fall
//!    behind (its events are skipped while it waits), the default rule lets it in first.
//!    The race is harmful when a run that realised it differs ([`rule::combine`]).
//!
//! A harmful race's reversed run and the recorded run are saved as schedules
//! (`poscheck replay`). The program's standard output is compared as the session captures it
//! (its last [`crate::exec::pump::CAPTURE_BYTES`] bytes), in memory: no file is written per run.
//!
//! Exit codes: 1 when a race is harmful, 0 otherwise, 2 on error.

pub mod pair;
pub mod rule;
pub mod target;

use crate::cli::RacesArgs;
use crate::cmd::races::Symbols;
use crate::exec::session::{self, RunConfig, RunResult};
use crate::exec::{elf, libpos};
use crate::points;
use crate::report::SavedSchedule;
use crate::suite::outcome::Outcome;
use anyhow::{bail, Context, Result};
use pos_sched::event::{Event, Obj, Op};
use pos_sched::explore::guide::{Guide, Rule};
use pos_sched::explore::run_order::RunOrder;
use pos_sched::explore::trace::{Hb, Init, TEv};
use pos_sched::race::Site;
use pos_sched::schedule::Schedule;
use rule::{Class, Ending};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;
use target::{Conflict, Kind, Rest};

/// The seed of every run (the guide makes every decision; recorded in saved schedules).
const SEED: u64 = crate::cmd::explore::SEED;

/// One event of a race, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct EventDoc {
    /// Index in the recorded run.
    pub index: usize,
    pub thread: u32,
    pub op: String,
    pub pc: String,
}

/// One reversed race.
#[derive(Clone, Debug, Serialize)]
pub struct Reversal {
    pub first: EventDoc,
    pub second: EventDoc,
    #[serde(flatten)]
    pub class: Class,
    /// The reversed run's outcome, and its kind (`ok`, `assert`, `deadlock`, ...).
    pub outcome: String,
    pub outcome_kind: String,
    /// How the run the class comes from went on after the reversal.
    pub continuation: Rest,
    /// Runs made for this race (one per continuation tried).
    pub runs: usize,
    /// Target events the approximate replay skipped in that run.
    pub skipped: u64,
    /// Harmful: the reversed run's saved schedule.
    pub schedule: Option<String>,
    /// `--depth 2`, harmless alone: races of its reversed run tried with it (see [`pair`]).
    pub pairs_tried: usize,
    /// `--depth 2`: the first of them that made the run differ.
    pub together: Option<Together>,
}

/// A race harmful together with another one: the second race, reversed in the run that
/// reversing the first realised ([`pair`]).
#[derive(Clone, Debug, Serialize)]
pub struct Together {
    /// The second race's site pair: its number in the report (1-based), `None` when only
    /// the first race's reversed run has that site pair.
    pub race: Option<usize>,
    /// Its two sites, symbolised.
    pub sites: [String; 2],
    /// Its two events, as indices in the first race's reversed run.
    pub first: EventDoc,
    pub second: EventDoc,
    /// What differs from the recorded run.
    pub detail: String,
    pub outcome: String,
    pub outcome_kind: String,
    pub continuation: Rest,
    /// The final run's saved schedule (both reversals).
    pub schedule: String,
}

/// The races of one site pair.
#[derive(Clone, Debug, Serialize)]
pub struct Group {
    pub kind: Kind,
    /// The object of the first dynamic race (memory address or synchronisation object).
    pub addr: String,
    /// The global variable at `addr`, if any.
    pub variable: Option<String>,
    /// The two sites, symbolised.
    pub sites: [String; 2],
    /// Dynamic races of this pair in the recorded run.
    pub dynamic: usize,
    /// The first of them, reversed.
    pub reversed: Vec<Reversal>,
}

/// The `--json` document.
#[derive(Clone, Debug, Serialize)]
pub struct Doc {
    pub program: String,
    pub args: Vec<String>,
    pub points: String,
    /// Events of the recorded run.
    pub events: usize,
    /// The recorded run's outcome.
    pub original: String,
    pub original_kind: String,
    /// The recorded run's saved schedule (when a race is harmful or the run is a bug).
    pub original_schedule: Option<String>,
    pub races: Vec<Group>,
    pub harmful: usize,
    pub harmless: usize,
    pub not_reversible: usize,
    /// `--depth`: 1, single reversals; 2, also pairs for the races harmless alone.
    pub depth: u8,
    /// Races harmless alone found harmful together with another race.
    pub harmful_pairs: usize,
    /// Runs made for pairs (within `--max-runs`).
    pub pair_runs: usize,
    /// Dynamic races not reversed (beyond `--per-pair` or `--max-runs`).
    pub not_reversed: usize,
    pub elapsed_s: f64,
}

/// Identity of a site pair: the kind, the two sites (pc and operation; pc 0 for
/// synchronisation) in a fixed order, and for synchronisation the object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    kind: Kind,
    sites: [(u64, &'static str); 2],
    obj: u64,
}

fn op_label(op: &Op) -> &'static str {
    match op {
        Op::Read { .. } => "read",
        Op::Write { .. } => "write",
        other => other.name(),
    }
}

fn key(c: &Conflict, orig: &[(Event, u64)]) -> Key {
    let site = |i: usize| (orig[i].1, op_label(&orig[i].0.op));
    let (a, b) = (site(c.first), site(c.second));
    let sites = if a <= b { [a, b] } else { [b, a] };
    let obj = match c.kind {
        Kind::Sync => shared_object(c, orig).map_or(0, |o| o.addr),
        _ => 0,
    };
    Key {
        kind: c.kind,
        sites,
        obj,
    }
}

/// The object both events of a race touch (a condition wake touches its condvar and its
/// mutex: with a lock, the race is on the mutex).
fn shared_object(c: &Conflict, orig: &[(Event, u64)]) -> Option<Obj> {
    let second = orig[c.second].0.op.objects();
    let mut mine = orig[c.first].0.op.objects().into_iter().flatten();
    mine.find(|o| second.iter().flatten().any(|x| x.addr == o.addr))
        .or_else(|| orig[c.first].0.op.objects()[0])
}

/// Group the conflicts per site pair, groups in the order of their first race.
fn group(conflicts: &[Conflict], orig: &[(Event, u64)]) -> Vec<(Key, Vec<Conflict>)> {
    let mut at: HashMap<Key, usize> = HashMap::new();
    let mut out: Vec<(Key, Vec<Conflict>)> = Vec::new();
    let mut sorted = conflicts.to_vec();
    sorted.sort_by_key(|c| (c.second, c.first));
    for c in sorted {
        let k = key(&c, orig);
        match at.get(&k) {
            Some(&i) => out[i].1.push(c),
            None => {
                at.insert(k.clone(), out.len());
                out.push((k, vec![c]));
            }
        }
    }
    // The widest race of a group first (earliest first event, then latest second event):
    // in a loop or among many threads, the first races in run order are usually alike
    // (neighbouring iterations or threads), while the widest reversal moves the most.
    for (_, list) in &mut out {
        if let Some(w) = (0..list.len()).min_by_key(|&i| (list[i].first, Reverse(list[i].second))) {
            let widest = list.remove(w);
            list.insert(0, widest);
        }
    }
    out
}

/// The scheduling-point mode of the recorded run (see the module doc).
fn mode(a: &RacesArgs, instrumented: bool) -> Result<&'static str> {
    Ok(match a.points.as_deref() {
        None if instrumented => points::RACES,
        None if a.sync => points::SYNC,
        None => bail!(
            "{} is not instrumented (build it with `poscheck cc`): only its synchronisation \
             conflicts can be classified, with --sync",
            a.program.display()
        ),
        Some("races") => points::RACES,
        Some("mem") => points::MEM,
        Some("sync") if a.sync => points::SYNC,
        Some("sync") => bail!("--points sync has no memory races to classify: add --sync"),
        Some(other) => bail!("--points {other:?}: expected races, mem or sync"),
    })
}

fn event_doc(i: usize, orig: &[(Event, u64)]) -> EventDoc {
    let (ev, pc) = orig[i];
    EventDoc {
        index: i,
        thread: ev.tid,
        op: ev.op.to_string(),
        pc: format!("{pc:#x}"),
    }
}

/// File name for a schedule of this command: `DIR/<program>.classify.<what>.json`.
fn schedule_path(dir: &Path, program: &Path, what: &str) -> PathBuf {
    let name: String = crate::program_name(program)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{name}.classify.{what}.json"))
}

fn save(cfg: &RunConfig, points: &str, r: &RunResult, path: &Path, index: u64) -> Result<String> {
    let schedule = Schedule {
        program: cfg.program.display().to_string(),
        args: cfg.args.clone(),
        algo: "races-classify".into(),
        seed: SEED,
        try_index: index,
        points: points.to_string(),
        outcome: r.outcome.kind().to_string(),
        timeouts: crate::report::timeouts_label(cfg),
        real_sleep: cfg.real_sleep,
        steps: r.schedule.clone(),
    };
    let saved = SavedSchedule {
        partial: (r.outside > 0).then_some(r.outside),
        ..SavedSchedule::of_run(schedule, cfg, r.outcome.to_string())
    };
    saved.save(path)?;
    Ok(path.display().to_string())
}

/// The recorded (or reversed) run's events with their pcs.
fn events_of(guide: &Guide, r: &RunResult) -> (Vec<TEv>, Vec<(Event, u64)>) {
    let steps: Vec<TEv> = guide.steps.iter().map(|s| s.ev).collect();
    let with = target::with_pcs(&steps, &r.trace);
    (steps, with)
}

/// `poscheck races --classify`.
pub fn run(a: &RacesArgs) -> Result<i32> {
    let started = Instant::now();
    if a.per_pair == 0 || a.max_runs == 0 {
        bail!("--per-pair and --max-runs must be at least 1");
    }
    if !(1..=2).contains(&a.depth) {
        bail!("--depth {}: expected 1 or 2", a.depth);
    }
    guard_out_dir(a)?;
    let program = std::fs::canonicalize(&a.program)
        .with_context(|| format!("cannot resolve {}", a.program.display()))?;
    let info = elf::check(&program)?;
    if info.is_static {
        bail!(
            "{}: statically linked: races --classify needs the preload backend (libpos.so \
             through LD_PRELOAD); relink dynamically",
            program.display()
        );
    }
    let mode = mode(a, info.instrumented)?;
    let mut cfg = RunConfig::new(program.clone(), a.args.clone(), libpos::find()?);
    crate::apply_control(&mut cfg, &a.control)?;
    if a.control.max_steps.is_none() {
        cfg.max_steps = crate::cmd::explore::EXPLORE_MAX_STEPS;
    }
    cfg.points = Some(mode.to_string());
    let mut profiled = BTreeSet::new();
    let known = if mode == points::RACES {
        let prof = points::profile(&cfg, a.seed, a.runs.max(1))?;
        if prof.cut_off > 0 {
            sayln!(
                "note: {} of {} profiling run(s) reached the step limit: races after it were \
                 not seen",
                prof.cut_off,
                a.runs.max(1)
            );
        }
        profiled.clone_from(&prof.pcs);
        Some(prof.pcs)
    } else {
        None
    };
    let prepared = points::prepare(&cfg, a.seed, known)?;
    let mut run_cfg = prepared.cfg.clone();
    run_cfg.record_trace = true;
    let recorded_points = prepared.recorded();

    // 1. The recorded run.
    let mut guide = Guide::new(Rule::Lowest, false, 1);
    guide.plan(Vec::new(), 0, Vec::new());
    let r0 = session::run_once(&run_cfg, &mut guide, SEED).context("the recorded run")?;
    if let Outcome::Error { reason } = &r0.outcome {
        bail!("the recorded run failed: {reason}");
    }
    let original = Ending::of(&r0.outcome, &r0.stdout);
    let (steps, orig) = events_of(&guide, &r0);
    let inits = guide.inits.clone();

    // 2. Its races, per site pair.
    let (hb, order, conflicts) = analyse(steps, inits, a.sync);
    let groups = group(&conflicts, &orig);
    let mut pcs: BTreeSet<u64> = orig.iter().map(|x| x.1).filter(|&p| p != 0).collect();
    pcs.extend(profiled);
    let maps = if r0.maps.is_empty() {
        run_cfg.maps.get().cloned().unwrap_or_default()
    } else {
        r0.maps.clone()
    };
    let syms_maps = maps.clone();
    let syms = Symbols::new(&pcs, maps);

    sayln!(
        "{}: recorded run: {} events (points {mode}, default schedule): {}; {} race(s) on {} \
         site pair(s){}",
        program.display(),
        orig.len(),
        r0.outcome,
        conflicts.len(),
        groups.len(),
        if a.sync {
            " (memory and synchronisation)"
        } else {
            ""
        }
    );

    // 3. Reverse each group's first races.
    let mut doc = Doc {
        program: program.display().to_string(),
        args: a.args.clone(),
        points: mode.to_string(),
        events: orig.len(),
        original: r0.outcome.to_string(),
        original_kind: r0.outcome.kind().to_string(),
        original_schedule: None,
        races: Vec::new(),
        harmful: 0,
        harmless: 0,
        not_reversible: 0,
        depth: a.depth,
        harmful_pairs: 0,
        pair_runs: 0,
        not_reversed: 0,
        elapsed_s: 0.0,
    };
    if r0.outcome.is_bug() {
        // The recorded run is itself a bug: its schedule is what reproduces it.
        let p = schedule_path(&a.out_dir, &program, "original");
        doc.original_schedule = Some(save(&run_cfg, &recorded_points, &r0, &p, 0)?);
    }
    let mut runs = 0usize;
    guide.approximate = true;
    // The races harmless alone, with the run that realised each: (group, reversal, race,
    // that run's events, initialisations and events with pcs), for the second level.
    let mut harmless: Vec<(usize, usize, Conflict, Realisation)> = Vec::new();
    for (g, (k, list)) in groups.iter().enumerate() {
        let first = list[0];
        let obj = shared_object(&first, &orig);
        let addr = obj.map_or(0, |o| o.addr);
        let sites = k.sites.map(|(pc, name)| site_text(&syms, k, pc, name, obj));
        let variable = syms.variable(addr);
        let mut out = Group {
            kind: k.kind,
            addr: format!("{addr:#x}"),
            variable: (!variable.is_empty())
                .then(|| variable.trim_matches([' ', '(', ')']).to_string()),
            sites,
            dynamic: list.len(),
            reversed: Vec::new(),
        };
        for (n, c) in list.iter().take(a.per_pair).enumerate() {
            if runs >= a.max_runs {
                break;
            }
            // Reverse, continuing with the recorded order; if that changes nothing, also
            // with the default rule (see `target::Rest`).
            let mut tried: Vec<(Class, Rest, RunResult, u64, Realisation)> = Vec::new();
            for rest in [Rest::Recorded, Rest::Rule] {
                if tried.iter().any(|t| matches!(t.0, Class::Harmful(_))) {
                    break;
                }
                guide.plan(
                    target::reversal_events(&hb, &order, c.first, c.second, rest),
                    0,
                    Vec::new(),
                );
                runs += 1;
                let r = session::run_once(&run_cfg, &mut guide, SEED)
                    .with_context(|| format!("the reversed run of race {}", g + 1))?;
                let (new_steps, new) = events_of(&guide, &r);
                let real = target::realised(&orig, c.first, c.second, &new);
                let class = rule::classify(&original, &Ending::of(&r.outcome, &r.stdout), &real);
                let realisation = (new_steps, guide.inits.clone(), new);
                tried.push((class, rest, r, guide.skipped, realisation));
            }
            let classes: Vec<Class> = tried.iter().map(|t| t.0.clone()).collect();
            let Some((at, class)) = rule::combine(&classes) else {
                continue;
            };
            let (_, rest, r, skipped, realisation) = tried.swap_remove(at);
            let schedule = if matches!(class, Class::Harmful(_)) {
                if doc.original_schedule.is_none() {
                    let p = schedule_path(&a.out_dir, &program, "original");
                    doc.original_schedule = Some(save(&run_cfg, &recorded_points, &r0, &p, 0)?);
                }
                let p = schedule_path(&a.out_dir, &program, &format!("race{}.{}", g + 1, n + 1));
                Some(save(&run_cfg, &recorded_points, &r, &p, runs as u64)?)
            } else {
                None
            };
            match class {
                Class::Harmless => {
                    doc.harmless += 1;
                    harmless.push((g, out.reversed.len(), *c, realisation));
                }
                Class::Harmful(_) => doc.harmful += 1,
                Class::NotReversible(_) => doc.not_reversible += 1,
            }
            out.reversed.push(Reversal {
                first: event_doc(c.first, &orig),
                second: event_doc(c.second, &orig),
                class,
                outcome: r.outcome.to_string(),
                outcome_kind: r.outcome.kind().to_string(),
                continuation: rest,
                runs: classes.len(),
                skipped,
                schedule,
                pairs_tried: 0,
                together: None,
            });
        }
        doc.not_reversed += out.dynamic - out.reversed.len();
        doc.races.push(out);
    }

    // 4. `--depth 2`: each race harmless alone, together with one other race.
    if a.depth >= 2 {
        let keys: Vec<Key> = groups.iter().map(|g| g.0.clone()).collect();
        let alone: BTreeSet<usize> = (0..doc.races.len())
            .filter(|&g| {
                doc.races[g]
                    .reversed
                    .iter()
                    .any(|x| matches!(x.class, Class::Harmful(_)))
            })
            .collect();
        let ctx = PairCtx {
            cfg: &run_cfg,
            points: &recorded_points,
            program: &program,
            out_dir: &a.out_dir,
            original: &original,
            orig: &orig,
            keys: &keys,
            alone: &alone,
            sync: a.sync,
            maps: &syms_maps,
        };
        // First the widest race of each site pair for every A, then the next ones (up to
        // --per-pair per site pair) for the As still harmless.
        for ranks in [0..1, 1..a.per_pair] {
            for (g, n, c, (st, ini, with)) in &harmless {
                if runs >= a.max_runs {
                    break;
                }
                let x = &doc.races[*g].reversed[*n];
                if x.together.is_some() || ranks.is_empty() {
                    continue;
                }
                let before = runs;
                let found = pairs(
                    &ctx,
                    &mut guide,
                    &mut runs,
                    a.max_runs,
                    (*g, *n, *c, ranks.clone()),
                    st.clone(),
                    ini.clone(),
                    with,
                )?;
                doc.pair_runs += runs - before;
                let x = &mut doc.races[*g].reversed[*n];
                x.pairs_tried += found.0;
                if let Some(t) = found.1 {
                    doc.harmful_pairs += 1;
                    if doc.original_schedule.is_none() {
                        let p = schedule_path(&a.out_dir, &program, "original");
                        doc.original_schedule = Some(save(&run_cfg, &recorded_points, &r0, &p, 0)?);
                    }
                    x.together = Some(t);
                }
            }
        }
    }
    doc.elapsed_s = started.elapsed().as_secs_f64();
    print(&doc, a);
    if let Some(path) = &a.json {
        let json = serde_json::to_string_pretty(&doc).context("cannot encode the report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(i32::from(doc.harmful + doc.harmful_pairs > 0))
}

/// A run's events, initialisations and events with pcs.
type Realisation = (Vec<TEv>, Vec<Init>, Vec<(Event, u64)>);

/// A run's happens-before, memory order and races (memory, and with `sync` the
/// synchronisation conflicts and lock acquisition orders).
fn analyse(steps: Vec<TEv>, inits: Vec<Init>, sync: bool) -> (Hb, RunOrder, Vec<Conflict>) {
    let order = RunOrder::new(steps.clone());
    let hb = Hb::with_inits(steps, inits);
    let mut conflicts = target::memory_races(&order);
    if sync {
        let mut more = target::sync_conflicts(&hb, 1);
        for c in target::acquisition_orders(&hb.trace) {
            if !more.contains(&c) {
                more.push(c);
            }
        }
        conflicts.extend(more);
    }
    (hb, order, conflicts)
}

/// What the second level needs of the first.
struct PairCtx<'a> {
    cfg: &'a RunConfig,
    points: &'a str,
    program: &'a Path,
    out_dir: &'a Path,
    original: &'a Ending,
    /// The recorded run's events with pcs, and its groups' keys.
    orig: &'a [(Event, u64)],
    keys: &'a [Key],
    /// Groups of the recorded run with a race harmful alone.
    alone: &'a BTreeSet<usize>,
    sync: bool,
    maps: &'a [crate::exec::elf::Mapping],
}

/// Race A (group `g`, its reversal `n`, the conflict `c`), harmless alone, together with
/// each candidate race of its realised run (`steps`, `inits`, `with`; [`pair::candidates`]
/// at `ranks`),
/// until one makes the run differ or `max_runs` is reached: the number of races tried and
/// the finding.
#[allow(clippy::too_many_arguments)]
fn pairs(
    ctx: &PairCtx,
    guide: &mut Guide,
    runs: &mut usize,
    max_runs: usize,
    (g, n, c, ranks): (usize, usize, Conflict, std::ops::Range<usize>),
    steps: Vec<TEv>,
    inits: Vec<Init>,
    with: &[(Event, u64)],
) -> Result<(usize, Option<Together>)> {
    let (hb, order, conflicts) = analyse(steps, inits, ctx.sync);
    let groups = group(&conflicts, with);
    let a_events = (
        pair::locate(ctx.orig, c.first, with),
        pair::locate(ctx.orig, c.second, with),
    );
    let recorded_group = |k: &Key| pair::group_of(k, ctx.keys);
    let lists: Vec<Vec<Conflict>> = groups.iter().map(|x| x.1.clone()).collect();
    let cands = pair::candidates(&lists, a_events, ranks, |i| {
        recorded_group(&groups[i].0).is_some_and(|r| ctx.alone.contains(&r))
    });
    let mut tried = 0;
    for b in cands {
        if *runs >= max_runs {
            break;
        }
        tried += 1;
        for rest in [Rest::Recorded, Rest::Rule] {
            if *runs >= max_runs {
                break;
            }
            guide.plan(
                target::reversal_events(&hb, &order, b.first, b.second, rest),
                0,
                Vec::new(),
            );
            *runs += 1;
            let r = session::run_once(ctx.cfg, guide, SEED)
                .with_context(|| format!("the run of race {} together with another race", g + 1))?;
            let (_, new) = events_of(guide, &r);
            let real = pair::both(
                target::realised(ctx.orig, c.first, c.second, &new),
                target::realised(with, b.first, b.second, &new),
            );
            let class = rule::classify(ctx.original, &Ending::of(&r.outcome, &r.stdout), &real);
            let Class::Harmful(detail) = class else {
                continue;
            };
            let k = key(&b, with);
            let race = recorded_group(&k);
            let obj = shared_object(&b, with);
            let pcs: BTreeSet<u64> = k.sites.iter().map(|s| s.0).filter(|&p| p != 0).collect();
            let syms = Symbols::new(&pcs, ctx.maps.to_vec());
            let sites = k
                .sites
                .map(|(pc, name)| site_text(&syms, &k, pc, name, obj));
            let what = format!("race{}.{}.pair", g + 1, n + 1);
            let p = schedule_path(ctx.out_dir, ctx.program, &what);
            let schedule = save(ctx.cfg, ctx.points, &r, &p, *runs as u64)?;
            return Ok((
                tried,
                Some(Together {
                    race: race.map(|r| r + 1),
                    sites,
                    first: event_doc(b.first, with),
                    second: event_doc(b.second, with),
                    detail,
                    outcome: r.outcome.to_string(),
                    outcome_kind: r.outcome.kind().to_string(),
                    continuation: rest,
                    schedule,
                }),
            ));
        }
    }
    Ok((tried, None))
}

/// `--out-dir` must be a directory if it exists (checked before the runs, not after).
fn guard_out_dir(a: &RacesArgs) -> Result<()> {
    if a.out_dir.exists() && !a.out_dir.is_dir() {
        bail!("--out-dir {} is not a directory", a.out_dir.display());
    }
    Ok(())
}

/// One site of a group, as `poscheck races` prints it; for synchronisation the operation
/// on its object.
fn site_text(syms: &Symbols, k: &Key, pc: u64, name: &str, obj: Option<Obj>) -> String {
    match k.kind {
        Kind::Sync => {
            let (kind, addr) = obj.map_or(("object".to_string(), 0), |o| {
                (format!("{:?}", o.kind).to_lowercase(), o.addr)
            });
            format!("{name} of {kind} {addr:#x}{}", syms.variable(addr))
        }
        Kind::Data if name == "read" || name == "write" => syms.site(&Site {
            pc,
            write: name == "write",
        }),
        _ => syms.place(name, pc),
    }
}

fn print(d: &Doc, a: &RacesArgs) {
    for (g, r) in d.races.iter().enumerate() {
        let label = match r.kind {
            Kind::Data => "data race",
            Kind::Atomic => "atomic conflict",
            Kind::Sync => "synchronisation conflict",
        };
        let count = |name: &str| r.reversed.iter().filter(|x| x.class.name() == name).count();
        sayln!(
            "race {} ({label}): on {}{}: {} dynamic pair(s), reversed {}{}: {} harmful, {} \
             harmless, {} not reversible",
            g + 1,
            r.addr,
            r.variable
                .as_ref()
                .map_or(String::new(), |v| format!(" ({v})")),
            r.dynamic,
            if r.reversed.len() == r.dynamic {
                "all".to_string()
            } else {
                format!(
                    "{} (the widest, then the first in run order)",
                    r.reversed.len()
                )
            },
            if r.reversed.is_empty() {
                " (--max-runs reached)"
            } else {
                ""
            },
            count("harmful"),
            count("harmless"),
            count("not reversible")
        );
        for s in &r.sites {
            sayln!("  {s}");
        }
        for (n, x) in r.reversed.iter().enumerate() {
            let detail = match &x.class {
                Class::Harmless => String::new(),
                Class::Harmful(w) | Class::NotReversible(w) => format!(": {w}"),
            };
            let how = match (&x.class, x.continuation) {
                (Class::Harmful(_), Rest::Rule) => " (then the default rule)",
                (Class::Harmful(_), Rest::Recorded) => " (then the recorded order)",
                _ => "",
            };
            sayln!(
                "  #{} events {} (thread {}) -> {} (thread {}): {}{how}{detail}",
                n + 1,
                x.first.index,
                x.first.thread,
                x.second.index,
                x.second.thread,
                x.class.name()
            );
            if let Some(s) = &x.schedule {
                sayln!("     reversed run: poscheck replay {s}");
                if let Some(o) = &d.original_schedule {
                    sayln!("     recorded run: poscheck replay {o}");
                }
            }
            if let Some(t) = &x.together {
                let other = t
                    .race
                    .map_or("a race of the reversed run".to_string(), |k| {
                        format!("race {k}")
                    });
                sayln!(
                    "     harmful together with {other}: events {} (thread {}) -> {} (thread \
                     {}) of the reversed run{}: {}",
                    t.first.index,
                    t.first.thread,
                    t.second.index,
                    t.second.thread,
                    match t.continuation {
                        Rest::Rule => " (then the default rule)",
                        Rest::Recorded => " (then the reversed run's order)",
                    },
                    t.detail
                );
                for s in &t.sites {
                    sayln!("       {s}");
                }
                sayln!("     both reversed: poscheck replay {}", t.schedule);
                if let Some(o) = &d.original_schedule {
                    sayln!("     recorded run:  poscheck replay {o}");
                }
            } else if x.pairs_tried > 0 {
                sayln!(
                    "     harmless together with each of {} other race(s) of its reversed run",
                    x.pairs_tried
                );
            }
        }
    }
    let pairs = if d.depth >= 2 {
        format!(
            "; {} harmless race(s) harmful together with another ({} run(s) of pairs)",
            d.harmful_pairs, d.pair_runs
        )
    } else {
        String::new()
    };
    sayln!(
        "{}: {} harmful, {} harmless, {} not reversible{pairs}; {} dynamic race(s) not \
         reversed (--per-pair {}, --max-runs {}); {:.1} s",
        d.program,
        d.harmful,
        d.harmless,
        d.not_reversible,
        d.not_reversed,
        a.per_pair,
        a.max_runs,
        d.elapsed_s
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use pos_sched::event::Tid;

    fn at(tid: Tid, op: Op, pc: u64) -> (Event, u64) {
        (Event::new(tid, op), pc)
    }

    #[test]
    fn races_group_per_site_pair_in_order_of_their_first_occurrence() {
        let w = |t, addr, pc| at(t, Op::Write { addr, size: 4 }, pc);
        let orig = vec![
            w(1, 8, 0x10),
            w(2, 8, 0x20),
            w(1, 16, 0x10),
            w(2, 16, 0x20),
            w(1, 24, 0x30),
        ];
        let c = |first, second| Conflict {
            first,
            second,
            kind: Kind::Data,
        };
        // (0,1) and (2,3) are the same two instructions; (3,4) mixes sites 0x20 and 0x30;
        // (0,3) is the same site pair again, the widest.
        let groups = group(&[c(0, 1), c(2, 3), c(3, 4), c(0, 3)], &orig);
        let sizes: Vec<usize> = groups.iter().map(|g| g.1.len()).collect();
        assert_eq!(sizes, vec![3, 1]);
        assert_eq!(groups[0].0.sites, [(0x10, "write"), (0x20, "write")]);
        assert_eq!(
            groups[0].1,
            vec![c(0, 3), c(0, 1), c(2, 3)],
            "the widest race first, then run order"
        );
    }

    #[test]
    fn schedule_files_are_named_after_the_program_and_the_race() {
        let p = schedule_path(Path::new("out"), Path::new("/x/lost update"), "race2.1");
        assert_eq!(p, Path::new("out/lost_update.classify.race2.1.json"));
    }
}
