//! Locating `libpos.so`, the preload library every controlled run needs.

use anyhow::{anyhow, bail, Context, Result};
use pos_sched::protocol::LIBPOS_MARKER;
use std::path::{Path, PathBuf};

/// Environment override for the library's path.
pub const ENV_LIBPOS: &str = "POSCHECK_LIBPOS";

/// Find libpos.so: `$POSCHECK_LIBPOS`, else next to the running `poscheck` executable (cargo
/// puts both in `target/<profile>/`), else in `../lib/poscheck/` from it (where
/// `scripts/install.sh` puts it: `PREFIX/bin/poscheck`, `PREFIX/lib/poscheck/libpos.so`), else,
/// for a binary in cargo's `deps/`, one directory up; and check that it speaks this
/// runner's protocol. The path is absolute.
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
    let exe = absolute(&exe);
    let mut tried = Vec::new();
    for cand in candidates(&exe) {
        if cand.is_file() {
            return Ok(absolute(&cand));
        }
        tried.push(cand.display().to_string());
    }
    bail!(
        "libpos.so not found (looked at {}); build it with `cargo build --release`, install \
         both with `scripts/install.sh`, or set {ENV_LIBPOS}",
        tried.join(", ")
    )
}

/// Where libpos.so may be, in order, for the `poscheck` executable at `exe`.
fn candidates(exe: &Path) -> Vec<PathBuf> {
    let Some(dir) = exe.parent() else {
        return Vec::new();
    };
    let mut v = vec![dir.join("libpos.so")];
    if let Some(up) = dir.parent() {
        v.push(up.join("lib").join("poscheck").join("libpos.so"));
        if dir.file_name().is_some_and(|n| n == "deps") {
            v.push(up.join("libpos.so"));
        }
    }
    v
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_next_to_the_executable_then_in_the_install_layout_then_up() {
        let c = candidates(Path::new("/p/bin/poscheck"));
        assert_eq!(
            c,
            [
                PathBuf::from("/p/bin/libpos.so"),
                PathBuf::from("/p/lib/poscheck/libpos.so"),
            ]
        );
        let c = candidates(Path::new("/t/release/deps/x-123"));
        assert_eq!(c.last(), Some(&PathBuf::from("/t/release/libpos.so")));
    }
}
