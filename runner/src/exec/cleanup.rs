//! Ctrl-C, `kill` and a closed terminal: poscheck leaves nothing behind. SIGINT, SIGTERM and
//! SIGHUP are blocked in every poscheck thread and taken by one signal thread, which kills
//! the process group of every program still running, removes every registered temp dir,
//! and exits with 128 + the signal number.
//!
//! Runs and temp dirs register themselves with a [`Guard`] for as long as they exist.
//!
//! SIGINT (Ctrl-C) first lets `run`/`compare` report what they have: the signal thread marks
//! the session [`interrupted`] and kills the runs in flight (their results are dropped);
//! the session stops starting tries, prints the results so far (and writes the JSON) and
//! exits with 130. If that takes longer than [`REPORT_WAIT`], or on a second SIGINT, the
//! signal thread cleans up and exits as for the other signals.

use nix::sys::signal::{killpg, SigSet, Signal};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

/// What to undo for one registered item.
enum Item {
    /// A program's process group (its leader's pid).
    Group(i32),
    /// A temp dir to remove.
    Dir(PathBuf),
}

static ITEMS: Mutex<Vec<(u64, Item)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

const SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// The SIGINT that interrupted the session (0: none yet).
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);

/// How long the session is given after SIGINT to report its results before the signal
/// thread exits on its own.
const REPORT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether Ctrl-C (SIGINT) interrupted the session: stop starting runs, drop the results of
/// runs in flight (they were killed), report what is done and exit with
/// [`INTERRUPTED_EXIT`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst) != 0
}

/// The exit status after SIGINT (128 + 2).
pub const INTERRUPTED_EXIT: i32 = 130;

/// Kill the process group of every registered run (the runs in flight end at once).
fn kill_groups() {
    let items = match ITEMS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    for (_, it) in items.iter() {
        if let Item::Group(pid) = it {
            let _ = killpg(Pid::from_raw(*pid), Signal::SIGKILL);
        }
    }
}

/// The signal mask poscheck was started with (the first 64 signals), before [`install`]
/// blocked its own: the mask a program under test gets ([`ENV_SIGMASK`]).
static ORIGINAL_MASK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The variable that gives libpos the mask to start the program with: a spawned program
/// inherits poscheck's, in which [`SIGNALS`] are blocked (`posix_spawn` keeps the mask), so
/// a correct program's SIGTERM or SIGINT handler never ran under poscheck.
pub const ENV_SIGMASK: &str = "POSCHECK_SIGMASK";

/// [`ORIGINAL_MASK`] in hexadecimal, for [`ENV_SIGMASK`].
pub fn original_mask() -> String {
    format!("{:x}", ORIGINAL_MASK.load(Ordering::SeqCst))
}

/// Block the signals in the calling thread (and so in every thread it creates later) and
/// start the signal thread. Call first thing in `main`, before any other thread exists.
/// Programs under test get the mask poscheck had before ([`ENV_SIGMASK`]).
pub fn install() -> std::io::Result<()> {
    let before = SigSet::thread_get_mask().map_err(std::io::Error::from)?;
    let bits = (1..=64)
        .filter(|&n| Signal::try_from(n).is_ok_and(|s| before.contains(s)))
        .fold(0u64, |m, n| m | 1 << (n - 1));
    ORIGINAL_MASK.store(bits, Ordering::SeqCst);
    let mut set = SigSet::empty();
    for s in SIGNALS {
        set.add(s);
    }
    set.thread_block().map_err(std::io::Error::from)?;
    std::thread::Builder::new()
        .name("poscheck-signals".into())
        .spawn(move || {
            let Ok(sig) = set.wait() else { return };
            if sig == Signal::SIGINT {
                INTERRUPTED.store(sig as i32, Ordering::SeqCst);
                kill_groups();
                // The session reports and exits; a second signal or the deadline ends it.
                let (tx, rx) = std::sync::mpsc::channel();
                let waiter = set;
                std::thread::spawn(move || {
                    let _ = tx.send(waiter.wait());
                });
                let _ = rx.recv_timeout(REPORT_WAIT);
            }
            undo_all_and_exit(128 + sig as i32);
        })?;
    Ok(())
}

/// Kill every group and remove every dir registered, then exit with `code` — holding the
/// registry's lock to the end, so that no worker creates a dir after the sweep
/// ([`dir_with`] creates and registers under that lock).
fn undo_all_and_exit(code: i32) -> ! {
    let mut held = match ITEMS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let items = std::mem::take(&mut *held);
    for (_, it) in &items {
        if let Item::Group(pid) = it {
            let _ = killpg(Pid::from_raw(*pid), Signal::SIGKILL);
        }
    }
    for (_, it) in &items {
        if let Item::Dir(d) = it {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    std::process::exit(code)
}

/// Create a temp dir with `make` (which returns it and its path) and register it for
/// removal, both under the registry's lock: a dir is never created after the signal
/// thread's final sweep (the worker blocks until the process is gone), so none is left.
pub fn dir_with<T>(
    make: impl FnOnce() -> std::io::Result<(T, PathBuf)>,
) -> std::io::Result<(T, Guard)> {
    let mut g = match ITEMS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let (made, path) = make()?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    g.push((id, Item::Dir(path)));
    Ok((made, Guard(id)))
}

/// Registration of one item; dropping it unregisters (the owner cleans up normally).
pub struct Guard(u64);

impl Guard {
    /// Kill this process group if poscheck is interrupted.
    pub fn group(pid: u32) -> Guard {
        Guard::add(Item::Group(pid as i32))
    }

    /// Remove this directory if poscheck is interrupted.
    pub fn dir(path: impl Into<PathBuf>) -> Guard {
        Guard::add(Item::Dir(path.into()))
    }

    fn add(it: Item) -> Guard {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        match ITEMS.lock() {
            Ok(mut g) => g.push((id, it)),
            Err(p) => p.into_inner().push((id, it)),
        }
        Guard(id)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut g = match ITEMS.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.retain(|(id, _)| *id != self.0);
    }
}
