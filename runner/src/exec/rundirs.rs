//! Each worker's run dirs ([`session::socket_dir`]), made ahead and removed late.
//!
//! Between one run's end and the next run's start the program waits for the runner, and
//! making a run's dir and socket (`mkdir`, `socket`, `bind`, `listen`) and removing the
//! last one (a directory walk, `unlink`, `rmdir`) took about 30 µs of that wait per run
//! (issue 15). While a run decided in the program goes on the runner only waits, so then
//! [`tidy`] removes the finished runs' dirs and makes the next run's.

use crate::exec::session::{self, RunDir};
use anyhow::Result;
use std::cell::RefCell;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;

/// A run's dir, its socket's path and the socket listening there.
pub type Made = (RunDir, PathBuf, UnixListener);

#[derive(Default)]
struct Slot {
    /// Made for this worker's next run.
    next: Option<Made>,
    /// Of finished runs, not removed yet.
    done: Vec<RunDir>,
}

thread_local! {
    static SLOT: RefCell<Slot> = RefCell::new(Slot::default());
}

/// A dir for a run: the one made ahead, else a new one (the finished runs' dirs are removed
/// first, so they never pile up when no run calls [`tidy`]).
pub fn take() -> Result<Made> {
    let (next, done) = SLOT.with(|s| {
        let mut s = s.borrow_mut();
        (s.next.take(), std::mem::take(&mut s.done))
    });
    drop(done);
    match next {
        Some(m) => Ok(m),
        None => session::socket_dir(),
    }
}

/// A finished run's dir, to be removed at the next [`tidy`] or [`take`].
pub fn retire(dir: RunDir) {
    SLOT.with(|s| s.borrow_mut().done.push(dir));
}

/// While a run goes on: remove the finished runs' dirs and make the next run's. A dir that
/// cannot be made now is left to [`take`], which reports why.
pub fn tidy() {
    let done = SLOT.with(|s| std::mem::take(&mut s.borrow_mut().done));
    drop(done);
    if SLOT.with(|s| s.borrow().next.is_none()) {
        if let Ok(m) = session::socket_dir() {
            SLOT.with(|s| s.borrow_mut().next = Some(m));
        }
    }
}

/// Remove this worker's dirs now: the main thread's thread-locals are never dropped, and a
/// test may look for leftover files.
pub fn clear() {
    let slot = SLOT.with(|s| std::mem::take(&mut *s.borrow_mut()));
    drop(slot);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirs_are_made_ahead_reused_and_removed() {
        tidy();
        let ahead = SLOT.with(|s| s.borrow().next.as_ref().map(|m| m.1.clone()));
        let ahead = ahead.expect("tidy made the next run's dir");
        assert!(ahead.exists());
        let (dir, path, _listener) = take().expect("a run dir");
        assert_eq!(path, ahead, "the dir made ahead is the one taken");
        retire(dir);
        assert!(
            path.exists(),
            "a retired dir stays until the next tidy or take"
        );
        tidy();
        assert!(!path.exists(), "tidy removes the retired dir");
        let next = SLOT.with(|s| s.borrow().next.as_ref().map(|m| m.1.clone()));
        let next = next.expect("tidy made another");
        let (dir, taken, _l) = take().expect("a run dir");
        retire(dir);
        clear();
        assert!(!next.exists() && !taken.exists(), "clear removes every dir");
        let (dir, fresh, _l) = take().expect("a new dir without tidy");
        assert!(fresh.exists());
        retire(dir);
        let (dir2, _p, _l2) = take().expect("another");
        assert!(!fresh.exists(), "take removes the retired dirs first");
        drop(dir2);
    }
}
