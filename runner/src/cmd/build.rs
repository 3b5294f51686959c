//! `poscheck build DIR`: compiles every program of a suite's manifest into `DIR/bin/NAME`.
//!
//! The compiler is `poscheck cc` (this executable's `cc` subcommand: `-fsanitize=thread`
//! instrumentation linked against libpos, so `mem` and `races` points work), or `--cc CMD`.
//! Flags: `-O1 -g -pthread -std=gnu11` plus the entry's `flags`. A binary is up to date when
//! it is newer than its source and the headers next to it and was built by the same command
//! line (recorded in `bin/.NAME.cmd`); up-to-date binaries are skipped.

use crate::suite::manifest::{Entry, Manifest};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

/// Flags every program is built with (before the manifest's own).
pub const BASE_FLAGS: &[&str] = &["-O1", "-g", "-pthread", "-std=gnu11"];

/// The compiler command: program and leading arguments.
fn compiler(cc: Option<&str>) -> Result<Vec<String>> {
    if let Some(c) = cc {
        let words: Vec<String> = c.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            bail!("--cc: empty compiler command");
        }
        return Ok(words);
    }
    use clap::CommandFactory;
    if crate::cli::Cli::command().find_subcommand("cc").is_some() {
        let me = std::env::current_exe().context("cannot find the poscheck executable")?;
        Ok(vec![me.display().to_string(), "cc".into()])
    } else {
        eprintln!(
            "poscheck: warning: this poscheck has no `cc` subcommand; building with gcc \
             (no memory-access scheduling points)"
        );
        Ok(vec!["gcc".into()])
    }
}

/// The full command line that builds `e` into `out`.
fn command_line(cc: &[String], m: &Manifest, e: &Entry, out: &Path) -> Vec<String> {
    let mut v = cc.to_vec();
    v.extend(BASE_FLAGS.iter().map(|s| s.to_string()));
    v.extend(e.flags.iter().cloned());
    v.push("-o".into());
    v.push(out.display().to_string());
    v.push(m.dir.join(&e.source).display().to_string());
    v
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest input of `e`: its source and the headers in the source's directory.
fn newest_input(m: &Manifest, e: &Entry) -> Result<SystemTime> {
    let src = m.dir.join(&e.source);
    let mut t = mtime(&src).with_context(|| format!("source {} not found", src.display()))?;
    if let Some(dir) = src.parent() {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for h in rd.flatten().map(|d| d.path()) {
                if h.extension().is_some_and(|x| x == "h") {
                    t = t.max(mtime(&h).unwrap_or(t));
                }
            }
        }
    }
    Ok(t)
}

fn stamp_path(bin: &Path, name: &str) -> PathBuf {
    bin.join(format!(".{name}.cmd"))
}

/// Whether `out` is newer than every input and was built by `cmd`.
fn up_to_date(m: &Manifest, e: &Entry, out: &Path, cmd: &str) -> Result<bool> {
    let newest = newest_input(m, e)?;
    let built = mtime(out);
    let stamp = std::fs::read_to_string(stamp_path(&m.bin_dir(), &e.name)).ok();
    Ok(built.is_some_and(|b| b >= newest) && stamp.as_deref() == Some(cmd))
}

/// What happened to one program.
enum Built {
    Fresh,
    Skipped,
    Failed(String),
}

fn build_one(m: &Manifest, e: &Entry, cc: &[String], force: bool) -> Result<Built> {
    let bin = m.bin_dir();
    let out = m.binary(e);
    let argv = command_line(cc, m, e, &out);
    let cmd = argv.join(" ");
    if !force && up_to_date(m, e, &out, &cmd)? {
        return Ok(Built::Skipped);
    }
    let _ = std::fs::remove_file(stamp_path(&bin, &e.name));
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .with_context(|| format!("cannot run the compiler {:?}", argv[0]))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let tail: Vec<&str> = err.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Ok(Built::Failed(format!(
            "{} ({}): {} failed ({}):\n  $ {cmd}\n{}",
            e.name,
            e.source.display(),
            argv[0],
            o.status,
            tail.iter()
                .map(|l| format!("  | {l}\n"))
                .collect::<String>()
        )));
    }
    std::fs::write(stamp_path(&bin, &e.name), &cmd)
        .with_context(|| format!("cannot write the build stamp of {}", e.name))?;
    Ok(Built::Fresh)
}

/// Build the suite in `dir` (the `names` only, if any) with `jobs` compilers at a time.
/// Returns the exit code: 0 when every program built, 2 otherwise.
pub fn run(
    dir: &Path,
    names: &[String],
    cc: Option<&str>,
    force: bool,
    jobs: usize,
) -> Result<i32> {
    let m = Manifest::load(dir)?;
    for n in names {
        if !m.programs.iter().any(|e| &e.name == n) {
            bail!(
                "{n}: not in {}",
                dir.join(crate::suite::manifest::FILE).display()
            );
        }
    }
    let entries: Vec<&Entry> = m
        .programs
        .iter()
        .filter(|e| names.is_empty() || names.contains(&e.name))
        .collect();
    let cc = compiler(cc)?;
    let bin = m.bin_dir();
    std::fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<Built>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(e) = entries.get(k) else { return };
                let r = build_one(&m, e, &cc, force);
                if let Ok(mut v) = results.lock() {
                    v.push((k, r));
                }
            });
        }
    });
    let mut results = results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a build worker panicked"))?;
    results.sort_by_key(|r| r.0);
    let (mut fresh, mut skipped, mut failed) = (0, 0, Vec::new());
    for (k, r) in results {
        match r {
            Ok(Built::Fresh) => fresh += 1,
            Ok(Built::Skipped) => skipped += 1,
            Ok(Built::Failed(msg)) => {
                eprint!("poscheck: build error: {msg}");
                failed.push(entries[k].name.clone());
            }
            Err(e) => {
                eprintln!("poscheck: build error: {}: {e:#}", entries[k].name);
                failed.push(entries[k].name.clone());
            }
        }
    }
    sayln!(
        "poscheck build: {fresh} built, {skipped} up to date, {} failed, into {} with: {} {}",
        failed.len(),
        bin.display(),
        cc.join(" "),
        BASE_FLAGS.join(" ")
    );
    if failed.is_empty() {
        Ok(0)
    } else {
        eprintln!("poscheck: build failed for: {}", failed.join(", "));
        Ok(2)
    }
}
