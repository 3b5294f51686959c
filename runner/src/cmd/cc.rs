//! `poscheck cc` / `poscheck c++`: a drop-in compiler wrapper (in the manner of `afl-cc`) that
//! builds a program with memory-access scheduling points.
//!
//! Each translation unit is compiled with `-fsanitize=thread`, so the compiler emits
//! `__tsan_*` calls before every memory access, and `-fno-builtin-memcpy`/`-memmove`/`-memset`
//! so those stay calls libpos can see (only those: a blanket `-fno-builtin` also took away
//! the compiler's knowledge of `malloc` & co., and a legacy program calling an undeclared
//! `malloc` then got `int malloc()`, a truncated pointer and a crash). The link step never uses the sanitizer runtime: it links against
//! libpos (which implements the `__tsan_*` entry points) with an rpath, so the result runs
//! as it is, under `poscheck run` or standalone. A command that compiles and links at once is
//! split into compile steps (to temporary objects) and one link step.
//!
//! The compiler is `$POSCHECK_CC` (default `gcc`) or `$POSCHECK_CXX` (default `g++`).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variables naming the underlying compilers.
pub const ENV_CC: &str = "POSCHECK_CC";
pub const ENV_CXX: &str = "POSCHECK_CXX";

/// Flags added to every compile step.
const COMPILE_FLAGS: &[&str] = &[
    "-fsanitize=thread",
    "-fno-builtin-memcpy",
    "-fno-builtin-memmove",
    "-fno-builtin-memset",
    "-g",
];

/// Options whose value is the next argument (so it is never taken for a source file).
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-L",
    "-l",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-T",
    "-u",
    "-z",
    "-aux-info",
    "--param",
    "-e",
];

const SOURCE_EXT: &[&str] = &["c", "cc", "cpp", "cxx", "c++", "C", "i", "ii"];

/// Which language driver to wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    C,
    Cxx,
}

/// The compiler command for `lang`.
pub fn compiler(lang: Lang) -> String {
    let (var, default) = match lang {
        Lang::C => (ENV_CC, "gcc"),
        Lang::Cxx => (ENV_CXX, "g++"),
    };
    std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// The parts of a compiler command line poscheck cares about.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    /// Everything except source files and the output.
    flags: Vec<String>,
    sources: Vec<String>,
    output: Option<String>,
    /// `-c`, `-S` or `-E`: no link step.
    no_link: bool,
}

fn is_source(arg: &str) -> bool {
    !arg.starts_with('-')
        && Path::new(arg)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| SOURCE_EXT.contains(&e))
}

fn parse(args: &[String]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-o" {
            p.output = args.get(i + 1).cloned();
            i += 2;
            continue;
        }
        if TAKES_VALUE.contains(&a.as_str()) {
            p.flags.push(a.clone());
            if let Some(v) = args.get(i + 1) {
                p.flags.push(v.clone());
            }
            i += 2;
            continue;
        }
        if matches!(a.as_str(), "-c" | "-S" | "-E" | "-M" | "-MM") {
            p.no_link = true;
        }
        if is_source(a) {
            p.sources.push(a.clone());
        } else {
            p.flags.push(a.clone());
        }
        i += 1;
    }
    p
}

/// Flags that only matter when linking (kept off the compile-only steps of a split command).
fn is_link_flag(f: &str) -> bool {
    f.starts_with("-l")
        || f.starts_with("-L")
        || f.starts_with("-Wl,")
        || f.ends_with(".o")
        || f.ends_with(".a")
        || f.ends_with(".so")
        || f == "-pthread"
        || f == "-static"
        || f == "-shared"
        || f == "-rdynamic"
}

/// A user's own `-fsanitize=thread` on a link line would pull in libtsan, whose runtime
/// would take the `__tsan_*` calls from libpos: link steps drop it (compile steps add it).
fn is_sanitizer_flag(f: &str) -> bool {
    f == "-fsanitize=thread"
}

/// Arguments that make a link against libpos (never the sanitizer runtime), with an rpath.
/// The program's own `memcpy`/`memmove`/`memset` calls are redirected (`--wrap`) to libpos's
/// `__wrap_*` functions, which make them scheduling points (libtsan intercepts them for the
/// same reason; see `preload/src/tsan/mem.rs`).
fn link_flags(libpos_dir: &Path) -> Vec<String> {
    let d = libpos_dir.display();
    vec![
        format!("-L{d}"),
        "-lpos".into(),
        format!("-Wl,-rpath,{d}"),
        "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset".into(),
        "-pthread".into(),
    ]
}

fn run(cmd: &mut Command) -> Result<i32> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run the compiler {:?}", cmd.get_program()))?;
    Ok(status.code().unwrap_or(1))
}

/// Compile (and link) as the wrapped compiler would, with scheduling points.
/// Returns the compiler's exit code.
pub fn compile(lang: Lang, args: &[String], libpos_dir: &Path) -> Result<i32> {
    let cc = compiler(lang);
    if args.is_empty() {
        bail!("no input files (usage: poscheck cc [compiler arguments...])");
    }
    let p = parse(args);
    if !p.no_link {
        if let Some(f) = p
            .flags
            .iter()
            .find(|f| matches!(f.as_str(), "-static" | "-static-pie"))
        {
            bail!(
                "{f}: memory-access points need libpos.so's __tsan_* callbacks, which a statically linked program cannot load; build without {f} (preload backend), or build the static program with the plain compiler and test it at system-call and lock-call points (ptrace backend)"
            );
        }
    }
    if p.no_link {
        let mut cmd = Command::new(&cc);
        cmd.args(COMPILE_FLAGS).args(args);
        return run(&mut cmd);
    }
    if p.sources.is_empty() {
        // Link only: objects were compiled with poscheck cc already.
        let mut cmd = Command::new(&cc);
        cmd.args(args.iter().filter(|f| !is_sanitizer_flag(f)))
            .args(link_flags(libpos_dir));
        return run(&mut cmd);
    }
    // Compile each source to a temporary object, then link without the sanitizer.
    let tmp = tempfile::Builder::new()
        .prefix("poscheck-cc-")
        .tempdir()
        .context("cannot create a temporary directory for objects")?;
    let _tmp_guard = crate::exec::cleanup::Guard::dir(tmp.path());
    let compile_flags: Vec<&String> = p.flags.iter().filter(|f| !is_link_flag(f)).collect();
    let mut objects: Vec<PathBuf> = Vec::new();
    for (k, src) in p.sources.iter().enumerate() {
        let stem = Path::new(src)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("unit");
        let obj = tmp.path().join(format!("{k}-{stem}.o"));
        let mut cmd = Command::new(&cc);
        cmd.args(COMPILE_FLAGS)
            .args(&compile_flags)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj);
        let code = run(&mut cmd)?;
        if code != 0 {
            return Ok(code);
        }
        objects.push(obj);
    }
    let mut cmd = Command::new(&cc);
    cmd.args(&objects)
        .args(p.flags.iter().filter(|f| !is_sanitizer_flag(f)));
    if let Some(o) = &p.output {
        cmd.arg("-o").arg(o);
    }
    cmd.args(link_flags(libpos_dir));
    run(&mut cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn splits_sources_output_and_flags() {
        let p = parse(&s(&[
            "-O1", "-I", "inc", "a.c", "b.cpp", "-o", "prog", "-lm",
        ]));
        assert_eq!(p.sources, s(&["a.c", "b.cpp"]));
        assert_eq!(p.output.as_deref(), Some("prog"));
        assert_eq!(p.flags, s(&["-O1", "-I", "inc", "-lm"]));
        assert!(!p.no_link);
        let p = parse(&s(&["-c", "x.c", "-o", "x.o"]));
        assert!(p.no_link);
        // A value of -include is not a source even when it looks like one.
        let p = parse(&s(&["-include", "pre.c", "main.c"]));
        assert_eq!(p.sources, s(&["main.c"]));
    }

    #[test]
    fn link_never_mentions_the_sanitizer() {
        let f = link_flags(Path::new("/opt/pos"));
        assert!(f
            .iter()
            .all(|x| !x.contains("sanitize") && !x.contains("tsan")));
        assert!(f.contains(&"-lpos".to_string()));
        assert!(f.iter().any(|x| x == "-Wl,-rpath,/opt/pos"));
        assert!(f.iter().any(|x| x.contains("--wrap=memcpy")));
        assert!(is_sanitizer_flag("-fsanitize=thread"));
        assert!(!is_sanitizer_flag("-fsanitize=undefined"));
    }
}
