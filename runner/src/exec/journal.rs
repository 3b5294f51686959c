//! The runner's side of a run's journal ([`pos_sched::protocol::journal`]): one memfd per
//! runner thread, reset before each run decided in the program and sent with its start
//! frame; read after the run when the program died without its end message (the schedule so
//! far is rebuilt from it) or when the run's trace is wanted.

use anyhow::{Context, Result};
use pos_sched::protocol::inproc::LogRec;
use pos_sched::protocol::journal;
use std::cell::RefCell;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Records past which the pages a run wrote are given back before the next run (a long run's
/// journal would otherwise keep its memory until the worker ends).
const TRIM_RECORDS: usize = 1 << 16;

/// A journal memfd, mapped read-write.
pub struct Journal {
    fd: OwnedFd,
    ptr: *mut u8,
    len: usize,
}

impl Journal {
    fn create() -> Result<Journal> {
        // SAFETY: memfd_create with a NUL-terminated name; the result is a new descriptor.
        let raw = unsafe { libc::memfd_create(c"poscheck-journal".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error()).context("memfd_create");
        }
        // SAFETY: the descriptor is ours.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate and mmap of our own memfd.
        let ptr = unsafe {
            if libc::ftruncate(fd.as_raw_fd(), journal::SIZE as libc::off_t) != 0 {
                return Err(std::io::Error::last_os_error()).context("ftruncate of the journal");
            }
            libc::mmap(
                std::ptr::null_mut(),
                journal::SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).context("mmap of the journal");
        }
        Ok(Journal {
            fd,
            ptr: ptr.cast(),
            len: journal::SIZE,
        })
    }

    fn page(&self) -> &[u8] {
        // SAFETY: our mapping of `len` bytes, alive as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn page_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `page`; the program that writes it is gone or not started.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// The descriptor to send with a start frame.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Empty it for the next run, giving back the memory of a long previous run.
    pub fn reset(&mut self) {
        let page = self.page();
        // A garbled header (the program scribbled on it): give back everything.
        let written = if journal::is_journal(page) {
            journal::written(page)
        } else {
            usize::MAX
        };
        if written > TRIM_RECORDS {
            let bytes = journal::HEADER_LEN
                .saturating_add(written.saturating_mul(journal::RECORD_LEN))
                .min(self.len);
            // SAFETY: punching a hole in our own memfd: the pages read as zeros again.
            unsafe {
                libc::fallocate(
                    self.fd.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    0,
                    bytes as libc::off_t,
                )
            };
        }
        journal::reset(self.page_mut());
    }

    /// What the run wrote, read once its process is gone. `None` when the journal was
    /// garbled or overflowed (then it does not hold the whole run).
    pub fn records(&self) -> Option<Vec<LogRec>> {
        let page = self.page();
        journal::records(page)
            .ok()
            .filter(|_| !journal::overflowed(page))
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // SAFETY: our mapping, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

thread_local! {
    /// This thread's journal (runs of one thread are one after the other).
    static SLOT: RefCell<Option<Journal>> = const { RefCell::new(None) };
}

/// This thread's journal, reset, for one run; `None` if none can be made (the run then
/// goes without: its end message carries the trace, and a death takes the schedule).
pub fn take() -> Option<Journal> {
    let mut j = SLOT
        .with(|s| s.borrow_mut().take())
        .or_else(|| Journal::create().ok())?;
    j.reset();
    Some(j)
}

/// Give the journal back for this thread's next run.
pub fn give_back(j: Journal) {
    SLOT.with(|s| *s.borrow_mut() = Some(j));
}
