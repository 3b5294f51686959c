//! The run's journal in this process (see [`pos_sched::protocol::journal`]): the memfd the
//! runner sends with the start frame, mapped here, to which the in-process coordinator
//! appends every input and decision as it happens. The runner reads it when the process
//! dies without its end message, so a run killed half-way still has its schedule.

use crate::conn::errno;
use crate::real;
use libc::c_int;
use pos_sched::protocol::inproc::LogRec;
use pos_sched::protocol::journal;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

static PAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static LEN: AtomicUsize = AtomicUsize::new(0);

/// Where the journal is mapped if that range is free: right past libpos's private heap
/// (which must get its own fixed range, or the run falls back to sockets), far below the
/// program's own mappings, which the kernel places top-down from near the stack, so that
/// they land where they would without the journal (object addresses appear in schedules).
const HINT: usize = crate::alloc::END;

/// Read the start frame's 16-byte header from `fd`, taking the journal's descriptor that
/// may come with it. False if the connection ended first.
pub fn receive_header(fd: c_int, head: &mut [u8; 16]) -> bool {
    // Room for one descriptor's control message (CMSG_SPACE(4) is 24 on 64-bit Linux).
    let mut cbuf = [0u64; 4];
    let mut iov = libc::iovec {
        iov_base: head.as_mut_ptr().cast(),
        iov_len: head.len(),
    };
    // SAFETY: msghdr of plain values; zeroed is its empty state.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cbuf);
    let n = loop {
        // SAFETY: the buffers described by msg are ours and live.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 || errno() != libc::EINTR {
            break n;
        }
    };
    if n <= 0 {
        return false;
    }
    // SAFETY: walking the control messages recvmsg filled in.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let jfd = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<c_int>());
                map(jfd);
                real::close(jfd);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    crate::conn::read_exact(fd, &mut head[n as usize..])
}

/// Map the journal memfd `fd` (the descriptor itself is closed by the caller: the program
/// never sees it).
fn map(fd: c_int) {
    // SAFETY: fstat into a local; mmap of a descriptor we were given, shared, read-write.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_size < journal::HEADER_LEN as i64 {
            return;
        }
        let len = st.st_size as usize;
        let p = libc::mmap(
            HINT as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        if p == libc::MAP_FAILED {
            return;
        }
        if !journal::is_journal(std::slice::from_raw_parts(p.cast::<u8>(), len)) {
            libc::munmap(p, len);
            return;
        }
        LEN.store(len, Ordering::SeqCst);
        PAGE.store(p.cast(), Ordering::SeqCst);
    }
}

/// Append `rec` (nothing without a journal). Callers hold the run's lock: one writer.
pub fn append(rec: &LogRec) {
    let p = PAGE.load(Ordering::Acquire);
    if p.is_null() {
        return;
    }
    // SAFETY: the mapping of LEN bytes made in `map`, written only under the run's lock.
    let page = unsafe { std::slice::from_raw_parts_mut(p, LEN.load(Ordering::Relaxed)) };
    journal::append(page, rec);
}

/// The journal holds every record of the run (it exists and did not overflow): the end
/// message need not carry them.
pub fn complete() -> bool {
    let p = PAGE.load(Ordering::Acquire);
    // SAFETY: as in `append`.
    !p.is_null()
        && !journal::overflowed(unsafe {
            std::slice::from_raw_parts(p, LEN.load(Ordering::Relaxed))
        })
}

/// In a forked child: the journal is the parent's run's, not this process's.
pub fn forget() {
    let p = PAGE.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: our mapping of LEN bytes; only this process's view of it goes.
        unsafe { libc::munmap(p.cast(), LEN.load(Ordering::SeqCst)) };
    }
}
