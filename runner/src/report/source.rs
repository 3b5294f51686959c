//! Symbolisation for readable traces: a code address to `file:line in function` (the DWARF
//! line tables and inlining information of the file, through the `addr2line` crate), a data
//! address to the symbol of the global that holds it (the ELF symbol tables, goblin), and a
//! run's raw pcs to the [`Site`]s and object names a saved schedule keeps.
//!
//! Files are read once per [`Symbols`] and kept; a file without debug information still
//! gives its function symbols (`in start_thread (libc.so.6)`).

use crate::exec::elf::{self, Mapping};
use goblin::elf::{header, Elf};
use pos_sched::schedule::{Site, Step};
use std::collections::HashMap;
use std::path::Path;

/// Caches of the files a trace touches.
#[derive(Default)]
pub struct Symbols {
    loaders: HashMap<String, Option<addr2line::Loader>>,
    /// By file: whether it is position-independent (`ET_DYN`), so placed by its mapping.
    pie: HashMap<String, Option<bool>>,
    data: HashMap<u64, Option<String>>,
    /// Paths are shown relative to this directory when under it.
    base: Option<std::path::PathBuf>,
}

impl Symbols {
    pub fn new() -> Symbols {
        Symbols {
            base: std::env::current_dir().ok(),
            ..Symbols::default()
        }
    }

    fn loader(&mut self, module: &str) -> Option<&addr2line::Loader> {
        self.loaders
            .entry(module.to_string())
            .or_insert_with(|| {
                elf::regular_file(module)
                    .then(|| addr2line::Loader::new(module).ok())
                    .flatten()
            })
            .as_ref()
    }

    fn is_pie(&mut self, module: &str) -> Option<bool> {
        *self.pie.entry(module.to_string()).or_insert_with(|| {
            let bytes = elf::mapped_file(module)?;
            let elf = Elf::parse(&bytes).ok()?;
            Some(elf.header.e_type == header::ET_DYN)
        })
    }

    /// The module and file address of absolute code address `pc` in a run with `maps`.
    pub fn site(&mut self, pc: u64, maps: &[Mapping]) -> Option<Site> {
        let m = maps.iter().find(|m| m.start <= pc && pc < m.end)?;
        let pie = self.is_pie(&m.path)?;
        let bias = elf::load_bias(m, maps, pie)?;
        Some(Site {
            module: m.path.clone(),
            offset: pc.checked_sub(bias)?,
        })
    }

    /// `file:line in function` of the call that returns to `site` (the instruction before
    /// the return address), the innermost inlined function first; `in function (file)` from
    /// the symbol table when the module has no line information.
    pub fn location(&mut self, site: &Site) -> Option<String> {
        self.location_of(&site.module, site.offset.checked_sub(1)?)
    }

    /// As [`Symbols::location`], of the instruction at `site` itself (a crash's pc).
    pub fn location_exact(&mut self, site: &Site) -> Option<String> {
        self.location_of(&site.module, site.offset)
    }

    fn location_of(&mut self, module: &str, probe: u64) -> Option<String> {
        let site = Site {
            module: module.to_string(),
            offset: probe,
        };
        let base = self.base.clone();
        let short = Path::new(&site.module)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| site.module.clone());
        let loader = self.loader(&site.module)?;
        if let Ok(mut frames) = loader.find_frames(probe) {
            if let Ok(Some(f)) = frames.next() {
                let func = f
                    .function
                    .as_ref()
                    .and_then(|n| n.demangle().ok().map(|s| s.into_owned()));
                if let Some(loc) = f.location {
                    if let (Some(file), Some(line)) = (loc.file, loc.line) {
                        let file = shorten(file, base.as_deref());
                        return Some(match func {
                            Some(func) => format!("{file}:{line} in {func}"),
                            None => format!("{file}:{line}"),
                        });
                    }
                }
            }
        }
        let sym = loader.find_symbol(probe)?;
        Some(format!("in {sym} ({short})"))
    }

    /// The symbol (`g_lock`, `buf+0x8`) of the global holding absolute address `addr`.
    pub fn data(&mut self, addr: u64, maps: &[Mapping]) -> Option<String> {
        self.data
            .entry(addr)
            .or_insert_with(|| elf::data_symbol(addr, maps))
            .clone()
    }
}

/// `file` relative to `base` when under it.
fn shorten(file: &str, base: Option<&Path>) -> String {
    base.and_then(|b| Path::new(file).strip_prefix(b).ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| file.to_string())
}

/// The addresses in an operation's text, in order (`cond_wait(cond@0x40c0, mutex@0x4100)`:
/// both; `atomic_load(acquire, mem[0x4040+4])`: one; `join(thread#1)`: none).
pub fn addresses(op: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rest = op;
    while let Some(at) = rest.find("0x") {
        let hex: String = rest[at + 2..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .collect();
        if let Ok(a) = u64::from_str_radix(&hex, 16) {
            out.push(a);
        }
        rest = &rest[at + 2 + hex.len()..];
    }
    out
}

/// Fill in the [`Step::pc`], [`Step::obj`] and [`Step::obj2`] of a run's `steps` from its
/// per-step pcs (0: unknown) and mappings.
pub fn annotate(steps: &mut [Step], pcs: &[u64], maps: &[Mapping], sym: &mut Symbols) {
    for (i, s) in steps.iter_mut().enumerate() {
        if let Some(&pc) = pcs.get(i).filter(|&&pc| pc != 0) {
            s.pc = sym.site(pc, maps);
        }
        let a = addresses(&s.op);
        s.obj = a.first().and_then(|&a| sym.data(a, maps));
        s.obj2 = a.get(1).and_then(|&a| sym.data(a, maps));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_object_address_of_an_operation() {
        assert_eq!(addresses("lock(mutex@0x4040a0)"), vec![0x4040a0]);
        assert_eq!(
            addresses("atomic_load(acquire, mem[0x4040+4])"),
            vec![0x4040]
        );
        assert_eq!(
            addresses("cond_wait(cond@0x40c0, mutex@0x4100)"),
            vec![0x40c0, 0x4100]
        );
        assert!(addresses("join(thread#1)").is_empty());
        assert!(addresses("create").is_empty());
    }

    #[test]
    fn paths_under_the_base_are_relative() {
        let base = Path::new("/work/p");
        assert_eq!(shorten("/work/p/src/a.c", Some(base)), "src/a.c");
        assert_eq!(shorten("/usr/include/x.h", Some(base)), "/usr/include/x.h");
        assert_eq!(shorten("a.c", None), "a.c");
    }

    #[test]
    fn a_module_that_is_not_there_has_no_location() {
        let mut s = Symbols::new();
        let site = Site {
            module: "/nonexistent/x".into(),
            offset: 0x1234,
        };
        assert_eq!(s.location(&site), None);
        assert_eq!(s.site(0x1000, &[]), None);
    }
}
