//! `poscheck races PROG [-- ARGS]`: the profiling step of `--points races` alone. Runs the
//! instrumented program with every access a scheduling point, detects happens-before races
//! ([`pos_sched::race`]) and prints each racing pair of access sites with symbolised
//! locations: `function+offset` from the ELF symbols, and `file:line` from `addr2line`
//! (binutils) when it is installed and the program has debug info (`poscheck cc` adds `-g`).
//!
//! With `--classify`, each race is reversed once and classified ([`crate::classify`]).
//!
//! Exit codes: 0 = no race found, 1 = races found, 2 = error.

use crate::cli::RacesArgs;
use crate::exec::elf::{self, Mapping};
use crate::exec::libpos;
use crate::exec::session::RunConfig;
use crate::points;
use anyhow::Result;
use pos_sched::race::Site;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// Profile the program and print its races.
pub fn run(a: &RacesArgs) -> Result<i32> {
    if a.classify {
        return crate::classify::run(a);
    }
    if a.sync || a.points.is_some() || a.json.is_some() {
        anyhow::bail!("--sync, --points and --json apply to --classify only");
    }
    points::resolve(Some(points::RACES), &a.program)?;
    let program = std::fs::canonicalize(&a.program).unwrap_or_else(|_| a.program.clone());
    let mut cfg = RunConfig::new(program.clone(), a.args.clone(), libpos::find()?);
    crate::apply_control(&mut cfg, &a.control)?;
    crate::exec::session::resolve_backend(&mut cfg)?;
    let runs = a.runs.max(1);
    let prof = points::profile(&cfg, a.seed, runs)?;
    for n in &prof.notes {
        sayln!("note: {n}");
    }
    let syms = Symbols::new(&prof.pcs, prof.maps.clone());
    sayln!(
        "{}: {} racing pair(s), {} racing site(s) in {runs} profiling run(s) ({} memory \
         accesses, algo {} seed {})",
        program.display(),
        prof.races.len(),
        prof.pcs.len(),
        prof.accesses,
        points::PROFILE_ALGO,
        a.seed
    );
    if prof.cut_off > 0 {
        sayln!(
            "{}: profiling was incomplete: {} of {runs} profiling run(s) reached the step limit \
             (--max-steps {}); races after it were not seen{}",
            program.display(),
            prof.cut_off,
            cfg.max_steps,
            if prof.races.is_empty() {
                " (no race found is not \"no race\")"
            } else {
                ""
            }
        );
    }
    for (k, r) in prof.races.iter().enumerate() {
        sayln!("race {}: on {:#x}{}", k + 1, r.addr, syms.variable(r.addr));
        sayln!("  {}", syms.site(&r.a));
        sayln!("  {}", syms.site(&r.b));
    }
    Ok(i32::from(!prof.races.is_empty()))
}

/// Symbolised locations of one program's access sites and data addresses, as `poscheck
/// races` prints them (also used by `races --classify`).
pub(crate) struct Symbols {
    maps: Vec<Mapping>,
    lines: BTreeMap<u64, String>,
}

impl Symbols {
    /// Symbols for the sites at `pcs` (their source lines are looked up once, here).
    pub fn new(pcs: &BTreeSet<u64>, maps: Vec<Mapping>) -> Self {
        let lines = source_lines(pcs, &maps);
        Symbols { maps, lines }
    }

    /// `write at func+0x1c (file.c:12) [0x401136]`.
    pub fn site(&self, s: &Site) -> String {
        self.place(if s.write { "write" } else { "read" }, s.pc)
    }

    /// `WHAT at func+0x1c (file.c:12) [0x401136]` for the instruction at `pc`.
    pub fn place(&self, what: &str, pc: u64) -> String {
        let sym = elf::symbolise(pc, &self.maps).unwrap_or_else(|| "?".into());
        let line = self
            .lines
            .get(&pc)
            .map_or(String::new(), |l| format!(" ({l})"));
        format!("{what:<5} at {sym}{line} [{pc:#x}]")
    }

    /// ` (name)` of the global or static variable holding `addr`, empty for other memory.
    pub fn variable(&self, addr: u64) -> String {
        data_symbol(addr, &self.maps).map_or(String::new(), |v| format!(" ({v})"))
    }
}

/// `name+0xoff` of the data object (global or static variable) holding `addr`, from the
/// ELF symbols of the file mapped there; `None` for heap or stack memory.
fn data_symbol(addr: u64, maps: &[Mapping]) -> Option<String> {
    let (file, vaddr) = elf::locate(addr, maps)?;
    let bytes = elf::mapped_file(&file)?;
    let e = goblin::elf::Elf::parse(&bytes).ok()?;
    e.syms
        .iter()
        .filter(|s| s.st_type() == goblin::elf::sym::STT_OBJECT)
        .find(|s| s.st_value <= vaddr && vaddr < s.st_value + s.st_size.max(1))
        .and_then(|s| {
            let name = e.strtab.get_at(s.st_name)?;
            Some(match vaddr - s.st_value {
                0 => name.to_string(),
                off => format!("{name}+{off:#x}"),
            })
        })
}

/// `file:line` of each pc via `addr2line`, batched per mapped file. A pc is a return
/// address (just after the `__tsan_*` call), so the line of `pc - 1` is the access's line.
/// Empty when addr2line is missing or finds nothing.
fn source_lines(pcs: &BTreeSet<u64>, maps: &[Mapping]) -> BTreeMap<u64, String> {
    let mut by_file: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for &pc in pcs {
        if let Some((file, vaddr)) = elf::locate(pc, maps) {
            by_file
                .entry(file)
                .or_default()
                .push((pc, vaddr.saturating_sub(1)));
        }
    }
    let mut out = BTreeMap::new();
    for (file, list) in by_file {
        let Ok(o) = Command::new("addr2line")
            .arg("-e")
            .arg(PathBuf::from(&file))
            .args(list.iter().map(|(_, v)| format!("{v:#x}")))
            .output()
        else {
            return out;
        };
        if !o.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&o.stdout);
        for ((pc, _), line) in list.iter().zip(text.lines()) {
            let line = line.split(" (discriminator").next().unwrap_or(line).trim();
            if !line.starts_with("??") {
                let short = line.rsplit('/').next().unwrap_or(line);
                out.insert(*pc, short.to_string());
            }
        }
    }
    out
}
