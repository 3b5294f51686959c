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

/// A dir for a run: the one made ahead (the finished runs' dirs wait for the run's
/// [`tidy`]), else a new one, made after the finished runs' dirs are removed (so they never
/// pile up when no run calls [`tidy`]).
pub fn take() -> Result<Made> {
    if let Some(m) = SLOT.with(|s| s.borrow_mut().next.take()) {
        return Ok(m);
    }
    let done = SLOT.with(|s| std::mem::take(&mut s.borrow_mut().done));
    drop(done);
    session::socket_dir()
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
        clear();
        // A run's life: its dir taken, the next made and the last removed while it goes on
        // (tidy), its dir retired at its end.
        let (first, first_path, _l1) = take().expect("a new dir");
        tidy();
        let ahead = SLOT.with(|s| s.borrow().next.as_ref().map(|m| m.1.clone()));
        let ahead = ahead.expect("tidy made the next run's dir");
        assert!(ahead.exists());
        retire(first);
        let (second, second_path, _l2) = take().expect("the dir made ahead");
        assert_eq!(second_path, ahead, "the dir made ahead is the one taken");
        assert!(
            first_path.exists(),
            "taking the dir made ahead removes nothing: the run's tidy does"
        );
        tidy();
        assert!(!first_path.exists(), "tidy removes the retired dir");
        retire(second);
        clear();
        assert!(!second_path.exists(), "clear removes every dir");
        // Without tidy (runs over the socket), take removes the retired dirs first.
        let (d, fresh, _l3) = take().expect("a new dir");
        retire(d);
        let (d2, _p, _l4) = take().expect("another");
        assert!(
            !fresh.exists(),
            "take removes the retired dirs when none was made ahead"
        );
        drop(d2);
        clear();
    }
}
