//! `poscheck rustc`: a drop-in `rustc` wrapper that builds a Rust program with memory-access
//! scheduling points, as `poscheck cc` does for C.
//!
//! Rust's `std::sync` primitives take an uncontended lock, and every atomic, with inline
//! atomic instructions: a program that only ever meets uncontended locks makes no call that
//! libpos can see, so a lost update split over two `Mutex` sections ran as one block per
//! thread and was never found. LLVM's thread-sanitizer pass makes every memory access and
//! atomic of the program's own code (including the generic and inlined parts of `std` it
//! instantiates: `Mutex::lock`'s fast path, `Arc`'s counts, channels) a `__tsan_*` call,
//! which libpos implements: they are scheduling points with the points an instrumented
//! binary gets by default (`auto` for `run`, `races` for `explore`) or `--points mem`.
//!
//! The flags: `-Zsanitizer=thread` (unstable on a stable toolchain, so the wrapper sets
//! `RUSTC_BOOTSTRAP=1` for this one command), `-Zexternal-clangrt` (no sanitizer runtime
//! linked: libpos takes the calls), `-Cunsafe-allow-abi-mismatch=sanitizer` (the
//! precompiled `std` is not instrumented; its non-inlined code runs at its system calls'
//! points), and libpos as a dynamic library with an rpath, so the result runs as it is,
//! under `poscheck run` or standalone. The compiler is `$POSCHECK_RUSTC` (default `rustc`).

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// Environment variable naming the underlying compiler.
pub const ENV_RUSTC: &str = "POSCHECK_RUSTC";

/// The flags added to every command.
fn flags(libpos_dir: &Path) -> Vec<String> {
    let d = libpos_dir.display();
    vec![
        "-Zsanitizer=thread".into(),
        "-Zexternal-clangrt".into(),
        "-Cunsafe-allow-abi-mismatch=sanitizer".into(),
        "-L".into(),
        format!("native={d}"),
        "-l".into(),
        "dylib=pos".into(),
        "-C".into(),
        format!("link-arg=-Wl,-rpath,{d}"),
    ]
}

/// Whether `args` ask for a statically linked result (which cannot load libpos).
fn static_link(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|a| a.contains("crt-static") && !a.contains("-crt-static"))
}

/// Compile as `rustc` would, with scheduling points; returns rustc's exit code. With the
/// single argument `--rustflags`, print the flags as one `RUSTFLAGS` value instead, for a
/// cargo build: `RUSTC_BOOTSTRAP=1 RUSTFLAGS="$(poscheck rustc --rustflags)" cargo build
/// --target x86_64-unknown-linux-gnu` (the explicit target keeps them off build scripts and
/// procedural macros, which would otherwise link libpos too).
pub fn compile(args: &[String], libpos_dir: &Path) -> Result<i32> {
    if args.is_empty() {
        bail!("no input files (usage: poscheck rustc [rustc arguments...])");
    }
    if args == ["--rustflags"] {
        let f = flags(libpos_dir);
        if f.iter().any(|x| x.contains(char::is_whitespace)) {
            bail!(
                "{}: RUSTFLAGS cannot hold a path with spaces; install libpos elsewhere or pass the flags in CARGO_ENCODED_RUSTFLAGS",
                libpos_dir.display()
            );
        }
        println!("{}", f.join(" "));
        return Ok(0);
    }
    if let Some(f) = static_link(args) {
        bail!(
            "{f}: memory-access points need libpos.so's __tsan_* callbacks, which a statically linked program cannot load; build without it"
        );
    }
    let rustc = std::env::var(ENV_RUSTC)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "rustc".to_string());
    let run = |flags: &[String]| -> Result<std::process::Output> {
        Command::new(&rustc)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(flags)
            .args(args)
            .stdin(std::process::Stdio::inherit())
            .stdout(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("cannot run the compiler {rustc:?} (set {ENV_RUSTC})"))
    };
    let mut f = flags(libpos_dir);
    let mut o = run(&f)?;
    if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains(ABI_FLAG) {
        // A rustc without the sanitizer ABI check does not know the option.
        f.retain(|x| !x.contains(ABI_FLAG));
        o = run(&f)?;
    }
    std::io::Write::write_all(&mut std::io::stderr(), &o.stderr)
        .context("cannot write the compiler's messages")?;
    Ok(o.status.code().unwrap_or(1))
}

/// The option that lets instrumented code link with the uninstrumented std.
const ABI_FLAG: &str = "unsafe-allow-abi-mismatch";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_builds_are_refused_and_libpos_is_linked_with_an_rpath() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(static_link(&args(&["-C", "target-feature=+crt-static", "a.rs"])).is_some());
        assert!(static_link(&args(&["-C", "target-feature=-crt-static", "a.rs"])).is_none());
        assert!(static_link(&args(&["-O", "a.rs"])).is_none());
        let f = flags(Path::new("/opt/pos"));
        assert!(f.contains(&"native=/opt/pos".to_string()));
        assert!(f.contains(&"link-arg=-Wl,-rpath,/opt/pos".to_string()));
        assert!(f.contains(&"-Zsanitizer=thread".to_string()));
    }
}
