//! Fork-server mode (`POSCHECK_SERVER`, see [`pos_sched::protocol::fork`]).
//!
//! The runner starts the program once per worker. libpos's constructor, which runs before
//! the program's own constructors and while the process still has a single thread, connects
//! to the runner's control socket and then forks one child per run on request. Each child
//! takes the run's output pipes and socket path and goes on exactly as a freshly executed
//! program would, without paying `exec` and dynamic loading again (for a short program that
//! was a third of a controlled run's time).
//!
//! The server forks each child ahead of its run (while the previous run goes on): the child
//! waits on a private channel, and a request is handed over to it, which costs two wake-ups
//! instead of a fork on the run's critical path. The server stays the parent of its
//! children: it reports each child's pid, then its end, seen with `WNOWAIT` so that the pid
//! (the run's process-group id) stays reserved until the runner has killed the group; it
//! reaps the child when the next request or the end of the control connection comes.

use crate::conn::errno;
use crate::real;
use libc::c_int;
use pos_sched::protocol::fork::{request, Notice, NOTICE_LEN, REQUEST_LEN};

/// Serve fork requests on the control socket whose path `path` holds. Returns only in a
/// forked child, with the socket path of its run in `path`; the server itself ends with the
/// control connection.
///
/// Nothing here touches the heap (the run's path replaces the control path in the same
/// allocation, which the runner makes as long): a forked child's heap is then laid out
/// exactly as a spawned program's, and so are the addresses of its heap objects, which
/// appear in schedules.
pub fn serve(path: &mut Vec<u8>) -> Result<(), String> {
    match threads() {
        Some(1) => {}
        Some(n) => {
            return Err(format!(
                "cannot fork runs: {n} threads exist before main (a library started them)"
            ))
        }
        None => return Err("cannot fork runs: /proc/self/stat is unreadable".into()),
    }
    let (addr, len) = crate::fds::unix_addr(path)?;
    // SAFETY: plain socket calls on values we own; prctl with constant arguments.
    let ctl = unsafe {
        // The server lives as long as the runner thread that started it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(format!("fork server: socket: errno {}", errno()));
        }
        if libc::connect(fd, (&addr as *const libc::sockaddr_un).cast(), len) != 0 {
            return Err(format!(
                "fork server: cannot connect to the runner: errno {}",
                errno()
            ));
        }
        fd
    };
    let mut unreaped: Option<libc::pid_t> = None;
    // A child forked ahead of its run, so a request costs a hand-over, not a fork.
    let mut spare: Result<Spare, c_int> = Err(0);
    loop {
        if spare.is_err() {
            spare = match fork_spare(ctl) {
                Forked::Child(run) => return run.start(path),
                Forked::Parent(s) => Ok(s),
                Forked::Failed(e) => Err(e),
            };
        }
        let next = receive(ctl);
        if let Some(pid) = unreaped.take() {
            reap(pid);
        }
        let run = match next {
            Ok(Some(r)) => r,
            // The runner is done with us (or gone).
            Ok(None) | Err(_) => {
                if let Ok(s) = spare {
                    s.dismiss();
                }
                // SAFETY: ending the server; it has no state worth flushing.
                unsafe { real::_exit(0) }
            }
        };
        if request::decode(&run.frame).is_err() {
            run.close();
            send(
                ctl,
                Notice::Failed {
                    errno: libc::EINVAL,
                },
            );
            continue;
        }
        let child = match std::mem::replace(&mut spare, Err(0)) {
            Ok(s) => s,
            Err(e) => {
                run.close();
                send(ctl, Notice::Failed { errno: e });
                continue;
            }
        };
        let handed = send_with_fds(child.chan, &run.frame, &[run.out, run.err]);
        run.close();
        // SAFETY: our end of the hand-over channel, no longer needed.
        unsafe { real::close(child.chan) };
        if !handed {
            // SAFETY: our own child, which cannot get its run now.
            unsafe { libc::kill(child.pid, libc::SIGKILL) };
            reap(child.pid);
            send(ctl, Notice::Failed { errno: libc::EPIPE });
            continue;
        }
        if !send(
            ctl,
            Notice::Started {
                pid: child.pid as u32,
            },
        ) {
            // SAFETY: our child's group; the runner cannot take care of it any more.
            unsafe { libc::kill(-child.pid, libc::SIGKILL) };
        }
        // The next run's child, forked while this run goes on.
        spare = match fork_spare(ctl) {
            Forked::Child(run) => return run.start(path),
            Forked::Parent(s) => Ok(s),
            Forked::Failed(e) => Err(e),
        };
        send(ctl, end_of(child.pid));
        unreaped = Some(child.pid);
    }
}

/// A run request as received: the frame and the run's stdout and stderr pipes.
struct Run {
    frame: [u8; REQUEST_LEN],
    out: c_int,
    err: c_int,
}

impl Run {
    fn close(&self) {
        close_all(&[self.out, self.err]);
    }

    /// In the run's child: take the pipes as stdout and stderr, and the run's socket path.
    fn start(self, path: &mut Vec<u8>) -> Result<(), String> {
        let run_path = request::decode(&self.frame)?;
        // SAFETY: descriptors we received; the child continues as the program.
        unsafe {
            libc::dup2(self.out, 1);
            libc::dup2(self.err, 2);
        }
        self.close();
        path.clear();
        path.extend_from_slice(run_path);
        Ok(())
    }
}

/// A child forked ahead, waiting on `chan` for its run.
struct Spare {
    pid: libc::pid_t,
    chan: c_int,
}

impl Spare {
    /// No run will come: let it end, and reap it.
    fn dismiss(self) {
        // SAFETY: closing our end makes the child's read see EOF, and it exits.
        unsafe { real::close(self.chan) };
        reap(self.pid);
    }
}

enum Forked {
    /// In the new child, once its run arrived.
    Child(Run),
    Parent(Spare),
    Failed(c_int),
}

/// Fork a child that waits for its run on a private channel. It gets its own process group
/// at once (from here, so the group exists whenever the runner hears of the pid).
fn fork_spare(ctl: c_int) -> Forked {
    let mut sv = [-1 as c_int; 2];
    // SAFETY: socketpair into a local array.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    } != 0
    {
        return Forked::Failed(errno());
    }
    // SAFETY: the process has one thread here (no thread is started before this point).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the child's copies of the server's descriptors.
        unsafe {
            real::close(ctl);
            real::close(sv[0]);
            libc::setpgid(0, 0);
        }
        let run = receive(sv[1]);
        // SAFETY: the channel has served its purpose.
        unsafe { real::close(sv[1]) };
        match run {
            Ok(Some(run)) => return Forked::Child(run),
            // SAFETY: the server is done with this child before it ran anything.
            _ => unsafe { real::_exit(0) },
        }
    }
    let e = errno();
    // SAFETY: the child's end, which only the child uses.
    unsafe { real::close(sv[1]) };
    if pid < 0 {
        // SAFETY: our end of a channel nobody will use.
        unsafe { real::close(sv[0]) };
        return Forked::Failed(e);
    }
    // SAFETY: pid is our child.
    unsafe { libc::setpgid(pid, pid) };
    Forked::Parent(Spare { pid, chan: sv[0] })
}

/// Send a frame with descriptors attached; false if the peer is gone.
fn send_with_fds(to: c_int, frame: &[u8; REQUEST_LEN], fds: &[c_int; 2]) -> bool {
    let mut cbuf = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: frame.as_ptr() as *mut libc::c_void,
        iov_len: frame.len(),
    };
    // SAFETY: msghdr is plain old data; we fill a control message for two descriptors into
    // a local, suitably aligned buffer that is large enough (checked below).
    unsafe {
        let space = libc::CMSG_SPACE(std::mem::size_of_val(fds) as u32) as usize;
        if space > std::mem::size_of_val(&cbuf) {
            return false;
        }
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c) as *mut c_int, 2);
        loop {
            let n = libc::sendmsg(to, &msg, libc::MSG_NOSIGNAL);
            if n == frame.len() as isize {
                return true;
            }
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            return false;
        }
    }
}

/// The number of threads of this process (from `/proc/self/stat`, read without the heap).
/// A fork copies only the calling thread, so the server must be alone.
fn threads() -> Option<usize> {
    let mut buf = [0u8; 1024];
    // SAFETY: open/read/close of a proc file into a local buffer.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/stat".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        real::close(fd);
        n
    };
    let text = buf.get(..usize::try_from(n).ok()?)?;
    // The fields after the command name (which may hold anything but ends at the last ')'):
    // state, ppid, ..., the 18th is num_threads.
    let after = &text[text.iter().rposition(|&c| c == b')')? + 1..];
    let field = after
        .split(|&c| c == b' ')
        .filter(|f| !f.is_empty())
        .nth(17)?;
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// Receive one request frame with its two pipes; `None` at EOF.
fn receive(ctl: c_int) -> Result<Option<Run>, ()> {
    let mut buf = [0u8; REQUEST_LEN];
    let mut got = 0;
    let mut fds = [-1 as c_int; 4];
    let mut nfds = 0;
    // Room for a few descriptors' control message, suitably aligned.
    let mut cbuf = [0u64; 8];
    while got < REQUEST_LEN {
        let mut iov = libc::iovec {
            iov_base: buf[got..].as_mut_ptr().cast(),
            iov_len: REQUEST_LEN - got,
        };
        // SAFETY: msghdr is plain old data; all-zero is valid before we fill it.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        // SAFETY: msg points at live buffers of the given sizes.
        let n = unsafe { libc::recvmsg(ctl, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            close_all(&fds[..nfds]);
            return Err(());
        }
        // SAFETY: walking the control messages recvmsg filled in.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(c) as *const c_int;
                    let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                        / std::mem::size_of::<c_int>();
                    for i in 0..count {
                        let fd = std::ptr::read_unaligned(data.add(i));
                        if nfds < fds.len() {
                            fds[nfds] = fd;
                            nfds += 1;
                        } else {
                            real::close(fd);
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        if n == 0 {
            close_all(&fds[..nfds]);
            return Ok(None);
        }
        got += n as usize;
    }
    if nfds != 2 {
        close_all(&fds[..nfds]);
        return Err(());
    }
    Ok(Some(Run {
        frame: buf,
        out: fds[0],
        err: fds[1],
    }))
}

fn close_all(fds: &[c_int]) {
    for &fd in fds {
        // SAFETY: descriptors we received and own.
        unsafe { real::close(fd) };
    }
}

/// Send one notice; false if the runner is gone.
fn send(ctl: c_int, n: Notice) -> bool {
    let b: [u8; NOTICE_LEN] = n.encode();
    // SAFETY: sending a local buffer; MSG_NOSIGNAL keeps a closed peer from killing us.
    let sent = unsafe { libc::send(ctl, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) };
    sent == b.len() as isize
}

/// Wait for `pid` to end, without reaping it.
fn end_of(pid: libc::pid_t) -> Notice {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child, writing into `info`.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        // SAFETY: waitid filled a SIGCHLD siginfo.
        let status = unsafe { info.si_status() };
        let pid = pid as u32;
        return if r == 0 && info.si_code == libc::CLD_EXITED {
            Notice::Exited { pid, code: status }
        } else if r == 0 {
            Notice::Killed {
                pid,
                signal: status,
            }
        } else {
            // Cannot happen for our own child; report it as killed rather than hang.
            Notice::Killed {
                pid,
                signal: libc::SIGKILL,
            }
        };
    }
}

/// Reap an ended child.
fn reap(pid: libc::pid_t) {
    loop {
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        if r >= 0 || errno() != libc::EINTR {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_count_follows_threads_coming_and_going() {
        let before = threads().expect("readable /proc/self/stat");
        assert!(before >= 1);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv());
        // Other tests' threads may come and go meanwhile: only bounds are certain.
        let during = threads().expect("readable /proc/self/stat");
        assert!(during >= 2, "{during} threads with one spawned");
        drop(tx);
        let _ = t.join();
    }
}
