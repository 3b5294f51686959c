//! libpos's own file descriptors: the coordinator address, connecting, and protecting the
//! per-thread connections from the program.
//!
//! Connections are moved to a high fd number (`F_DUPFD_CLOEXEC` from half the fd limit up) so
//! they stay out of the way of programs that assume small fds, and they are recorded in a
//! bitmap. The program may not close or overwrite them: `close` of one of ours pretends to
//! succeed, `dup2`/`dup3` onto one of ours fails with `EBUSY`. Everything else on fds is
//! untouched.

use crate::conn::{self, Busy};
use crate::real;
use libc::{c_int, c_long, sockaddr_un, socklen_t};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Bitmap of fds that belong to libpos (fds beyond its range are never protected).
static OURS: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

/// Where connections go: the runner's socket path or the standalone abstract address.
static ADDR: OnceLock<(sockaddr_un, socklen_t)> = OnceLock::new();

/// Whether `fd` is one of libpos's connections.
pub fn is_ours(fd: c_int) -> bool {
    let i = fd as usize;
    fd >= 0 && i / 64 < OURS.len() && OURS[i / 64].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
}

fn mark(fd: c_int, ours: bool) {
    let i = fd as usize;
    if fd < 0 || i / 64 >= OURS.len() {
        return;
    }
    let bit = 1u64 << (i % 64);
    if ours {
        OURS[i / 64].fetch_or(bit, Ordering::Relaxed);
    } else {
        OURS[i / 64].fetch_and(!bit, Ordering::Relaxed);
    }
}

/// A `sockaddr_un` for `name`; a leading NUL byte makes it an abstract-namespace address.
pub fn unix_addr(name: &[u8]) -> Result<(sockaddr_un, socklen_t), String> {
    // SAFETY: sockaddr_un is plain old data; all-zero is a valid value.
    let mut a: sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if name.is_empty() || name.len() >= a.sun_path.len() {
        return Err(format!("bad socket path ({} bytes)", name.len()));
    }
    for (d, s) in a.sun_path.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + name.len() + (name[0] != 0) as usize;
    Ok((a, len as socklen_t))
}

/// The address of libpos's own watcher in a run the runner had decided in the program
/// ([`crate::standalone::start_for_runner`]): set after the runner's, it takes its place.
static WATCHER_ADDR: OnceLock<(sockaddr_un, socklen_t)> = OnceLock::new();

/// Set the address every thread connects to (from the constructor; a second address, that
/// of a run decided in the program, replaces the runner's).
pub fn set_addr(addr: (sockaddr_un, socklen_t)) {
    if let Err(addr) = ADDR.set(addr) {
        let _ = WATCHER_ADDR.set(addr);
    }
}

/// Move `fd` to a high number, close-on-exec, and record it as ours.
pub fn adopt_fd(fd: c_int) -> c_int {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: lim is a valid out-pointer.
    let base = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        (lim.rlim_cur / 2).clamp(3, 1 << 15) as c_int
    } else {
        3
    };
    // SAFETY: fcntl on an fd we own.
    let high = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, base) };
    let fd = if high >= 0 {
        // SAFETY: fd is ours and now duplicated.
        unsafe { real::close(fd) };
        high
    } else {
        fd
    };
    mark(fd, true);
    fd
}

/// Open a new connection to the coordinator.
pub fn connect() -> Result<c_int, String> {
    let _b = Busy::enter();
    let (addr, len) = WATCHER_ADDR
        .get()
        .or(ADDR.get())
        .ok_or("no coordinator address")?;
    // SAFETY: plain socket calls on values we own.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(no_socket(conn::errno()));
        }
        loop {
            let r = libc::connect(fd, (addr as *const sockaddr_un).cast(), *len);
            if r == 0 {
                break;
            }
            let e = conn::errno();
            if e != libc::EINTR {
                real::close(fd);
                return Err(format!("cannot connect to the coordinator: errno {e}"));
            }
        }
        Ok(adopt_fd(fd))
    }
}

/// Why a thread's connection could not be opened, in words: running out of descriptors is
/// a limit of the harness (every controlled thread holds one), not a bug of the program.
fn no_socket(e: c_int) -> String {
    match e {
        libc::EMFILE => "cannot open a thread's connection to the coordinator: too many open \
                         files (EMFILE; every controlled thread holds one descriptor: raise \
                         `ulimit -n`)"
            .to_string(),
        libc::ENFILE => "cannot open a thread's connection to the coordinator: the system's \
                         file table is full (ENFILE)"
            .to_string(),
        e => format!("cannot open a thread's connection to the coordinator: socket: errno {e}"),
    }
}

/// Close one of our connections for good.
pub fn close_ours(fd: c_int) {
    mark(fd, false);
    // SAFETY: fd is a connection libpos opened and no longer uses.
    unsafe { real::close(fd) };
}

/// Close every connection of libpos (in a forked child: they are the parent's threads').
pub fn close_all_ours() {
    for (w, word) in OURS.iter().enumerate() {
        let mut bits = word.swap(0, Ordering::Relaxed);
        while bits != 0 {
            let fd = (w * 64) as c_int + bits.trailing_zeros() as c_int;
            bits &= bits - 1;
            // SAFETY: fd was one of our connections; the child does not use it.
            unsafe { real::close(fd) };
        }
    }
}

/// `close`: pretend success on libpos's fds (so the program cannot cut a thread's
/// connection), forward everything else.
///
/// # Safety
/// As `close(2)`.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if is_ours(fd) {
        return 0;
    }
    crate::timerfd::closing(fd);
    crate::sockopt::closing(fd);
    real::close(fd)
}

/// `dup2`: refuse (`EBUSY`) to overwrite one of libpos's fds.
///
/// # Safety
/// As `dup2(2)`.
#[no_mangle]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    if is_ours(new) && old != new {
        conn::set_errno(libc::EBUSY);
        return -1;
    }
    if old != new && libc::fcntl(old, libc::F_GETFD) >= 0 {
        crate::timerfd::closing(new);
    }
    real::dup2(old, new)
}

/// `dup3`: refuse (`EBUSY`) to overwrite one of libpos's fds.
///
/// # Safety
/// As `dup3(2)`.
#[no_mangle]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    if is_ours(new) {
        conn::set_errno(libc::EBUSY);
        return -1;
    }
    if old != new && libc::fcntl(old, libc::F_GETFD) >= 0 {
        crate::timerfd::closing(new);
    }
    real::dup3(old, new, flags)
}

/// Our fds in `first..=last`, ascending.
fn ours_between(first: u64, last: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for (w, word) in OURS.iter().enumerate() {
        let mut bits = word.load(Ordering::Relaxed);
        while bits != 0 {
            let fd = (w * 64) as u64 + bits.trailing_zeros() as u64;
            if (first..=last).contains(&fd) {
                v.push(fd);
            }
            bits &= bits - 1;
        }
    }
    v
}

/// `close_range(2)` over `first..=last` minus libpos's fds: the kernel call on each gap.
fn close_range_sparing_ours(first: u64, last: u64, flags: c_int) -> c_int {
    if flags & libc::CLOSE_RANGE_CLOEXEC as c_int == 0 {
        crate::timerfd::closing_range(first, last);
        crate::sockopt::closing_range(first, last);
    }
    let _b = Busy::enter();
    let mut start = first;
    let mut gaps = Vec::new();
    for fd in ours_between(first, last) {
        if fd > start {
            gaps.push((start, fd - 1));
        }
        start = fd + 1;
    }
    if start <= last {
        gaps.push((start, last));
    }
    let mut ret = 0;
    for (a, b) in gaps {
        // The real `syscall` (ours sends `SYS_close_range` back here).
        // SAFETY: the close_range system call on plain integers.
        let r = unsafe {
            real::syscall(
                libc::SYS_close_range,
                a as c_long,
                b as c_long,
                c_long::from(flags),
                0,
                0,
                0,
            )
        };
        if r != 0 {
            ret = -1;
        }
    }
    ret
}

/// `close_range`: closes the range except libpos's fds.
///
/// # Safety
/// As `close_range(2)`.
#[no_mangle]
pub unsafe extern "C" fn close_range(
    first: libc::c_uint,
    last: libc::c_uint,
    flags: c_int,
) -> c_int {
    if first > last {
        conn::set_errno(libc::EINVAL);
        return -1;
    }
    close_range_sparing_ours(first as u64, last as u64, flags)
}

/// `closefrom`: closes every fd from `low` up, except libpos's.
///
/// # Safety
/// As `closefrom(3)`.
#[no_mangle]
pub unsafe extern "C" fn closefrom(low: c_int) {
    close_range_sparing_ours(low.max(0) as u64, u32::MAX as u64, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_bitmap_marks_and_unmarks() {
        assert!(!is_ours(777));
        mark(777, true);
        assert!(is_ours(777) && !is_ours(776) && !is_ours(778));
        mark(777, false);
        assert!(!is_ours(777));
        mark(1 << 20, true); // out of range: ignored
        assert!(!is_ours(1 << 20) && !is_ours(-1));
    }

    #[test]
    fn close_range_spares_our_fds() {
        let open = || unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        let fds: Vec<c_int> = (0..4).map(|_| open()).collect();
        assert!(fds.iter().all(|&f| f >= 0));
        // Ours: the second one (the range stays among the four we opened).
        let mine = fds[1];
        mark(mine, true);
        let (lo, hi) = (fds[0] as u64, fds[3] as u64);
        assert_eq!(close_range_sparing_ours(lo, hi, 0), 0);
        let alive = |fd: c_int| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
        assert!(alive(mine));
        assert!(!alive(fds[0]) && !alive(fds[2]) && !alive(fds[3]));
        close_ours(mine);
        assert!(!alive(mine) && !is_ours(mine));
    }

    #[test]
    fn unix_addresses_have_the_right_length() {
        let (_, len) = unix_addr(b"/tmp/s").unwrap();
        assert_eq!(len as usize, 2 + 6 + 1);
        let (a, len) = unix_addr(b"\0pos-1").unwrap();
        assert_eq!(len as usize, 2 + 6);
        assert_eq!(a.sun_path[0], 0);
        assert!(unix_addr(&[b'x'; 200]).is_err());
        assert!(unix_addr(b"").is_err());
    }
}
