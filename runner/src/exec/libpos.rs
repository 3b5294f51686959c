//! Locating `libpos.so`, the preload library every controlled run needs.

use anyhow::{anyhow, bail, Context, Result};
use pos_sched::protocol::LIBPOS_MARKER;
use std::path::{Path, PathBuf};

/// Environment override for the library's path.
pub const ENV_LIBPOS: &str = "POSCHECK_LIBPOS";

/// Find libpos.so: `$POSCHECK_LIBPOS`, else next to the running `poscheck` executable (cargo
/// puts both in `target/<profile>/`), else one directory up (when running from `deps/`);
/// and check that it speaks this runner's protocol.
pub fn find() -> Result<PathBuf> {
    let lib = locate()?;
    check(&lib)?;
    Ok(lib)
}

/// Refuse a libpos.so from another build: it must export [`LIBPOS_MARKER`].
pub fn check(lib: &Path) -> Result<()> {
    let bytes = std::fs::read(lib).with_context(|| format!("cannot read {}", lib.display()))?;
    let elf = goblin::elf::Elf::parse(&bytes)
        .map_err(|e| anyhow!("{} is not an ELF shared library: {e}", lib.display()))?;
    let found = elf
        .dynsyms
        .iter()
        .any(|s| s.st_value != 0 && elf.dynstrtab.get_at(s.st_name) == Some(LIBPOS_MARKER));
    if !found {
        bail!(
            "{} does not match this poscheck (it lacks the {LIBPOS_MARKER} symbol, so it is \
             another build or not libpos at all); rebuild both with `cargo build --release`",
            lib.display()
        );
    }
    Ok(())
}

fn locate() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(ENV_LIBPOS) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(absolute(&p));
        }
        bail!("{ENV_LIBPOS}={} does not name a file", p.display());
    }
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot locate the poscheck executable: {e}"))?;
    let mut tried = Vec::new();
    let mut dir = exe.parent();
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let cand = d.join("libpos.so");
        if cand.is_file() {
            return Ok(cand);
        }
        tried.push(cand.display().to_string());
        dir = d.parent();
    }
    bail!(
        "libpos.so not found (looked at {}); build it with `cargo build` or set {ENV_LIBPOS}",
        tried.join(", ")
    )
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
