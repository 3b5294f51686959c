//! Reading `/proc` without the heap: libpos reads it on the program's threads (whose later
//! `malloc`s must keep their addresses) and in the fork server (which must not allocate
//! before a fork).

use libc::pid_t;
use std::ffi::CStr;

/// Read the proc file `path` into `buf` without the heap, until its end or `buf` is full;
/// the bytes read, `None` if it cannot be opened or read.
pub(crate) fn read_proc(path: &CStr, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: open/read/close of a file named by a NUL-terminated path into `buf`.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut n = 0;
        while n < buf.len() {
            let r = libc::read(fd, buf.as_mut_ptr().add(n).cast(), buf.len() - n);
            if r <= 0 {
                if r < 0 && n == 0 {
                    crate::real::close(fd);
                    return None;
                }
                break;
            }
            n += r as usize;
        }
        crate::real::close(fd);
        Some(n)
    }
}

/// `/proc/PID/FILE` (a process's or a thread's) read into `buf` with [`read_proc`]: the
/// bytes read, `None` if it cannot be read (the task is gone).
pub(crate) fn read_task<'a>(pid: pid_t, file: &CStr, buf: &'a mut [u8]) -> Option<&'a [u8]> {
    let mut path = [0u8; 64];
    let mut w = &mut path[..63];
    std::io::Write::write_fmt(&mut w, format_args!("/proc/{pid}/")).ok()?;
    let at = 63 - w.len();
    let name = file.to_bytes();
    path.get_mut(at..at + name.len())?.copy_from_slice(name);
    // NUL-terminated: the buffer is zeroed past the name, whose last byte is at most 62.
    let path = CStr::from_bytes_until_nul(&path).ok()?;
    let n = read_proc(path, buf)?;
    Some(&buf[..n])
}

/// Whether task `pid` (a process or a thread id) exists and has not ended: its `stat`
/// state is none of `Z` (zombie), `X` or `x` (dead).
pub(crate) fn alive(pid: pid_t) -> bool {
    let mut buf = [0u8; 512];
    let Some(stat) = read_task(pid, c"stat", &mut buf) else {
        return false;
    };
    // The state follows the command name, which ends at the last ')'.
    let state = stat
        .iter()
        .rposition(|&b| b == b')')
        .and_then(|i| stat.get(i + 2));
    state.is_some_and(|s| !matches!(s, b'Z' | b'X' | b'x'))
}

/// Whether `tid` is a thread of this process that the kernel has not released yet:
/// `tgkill(pid, tid, 0)`, one system call where reading its `/proc` entry is an open, a read
/// and a close of procfs.
pub(crate) fn our_thread(tid: pid_t) -> bool {
    // SAFETY: getpid has no preconditions; signal 0 only checks that the thread exists.
    unsafe {
        let pid = libc::getpid();
        tid == pid || crate::real::syscall(libc::SYS_tgkill, pid as _, tid as _, 0, 0, 0, 0) == 0
    }
}

/// Call `f` with the id of every thread of this process (`/proc/self/task`, read with
/// `getdents64` into a stack buffer). False if the directory cannot be opened.
pub(crate) fn each_thread(mut f: impl FnMut(pid_t)) -> bool {
    // SAFETY: our own descriptor and buffer; `linux_dirent64` records as the kernel writes
    // them (name at offset 19, record length at 16).
    unsafe {
        let fd = libc::open(
            c"/proc/self/task".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = crate::real::syscall(
                libc::SYS_getdents64,
                fd as _,
                buf.as_mut_ptr() as _,
                buf.len() as _,
                0,
                0,
                0,
            );
            if n <= 0 {
                break;
            }
            let mut at = 0usize;
            while at + 19 < n as usize {
                let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
                let name = &buf[at + 19..at + reclen];
                let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                let tid = name[..len].iter().try_fold(0 as pid_t, |t, &b| {
                    b.is_ascii_digit().then(|| t * 10 + (b - b'0') as pid_t)
                });
                if let Some(tid) = tid.filter(|&t| t > 0) {
                    f(tid);
                }
                if reclen == 0 {
                    break;
                }
                at += reclen;
            }
        }
        crate::real::close(fd);
        true
    }
}
