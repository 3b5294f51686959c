//! Fork-server mode (`POSCHECK_SERVER`, see [`pos_sched::protocol::fork`]).
//!
//! The runner starts the program once per worker. libpos's constructor, which runs before
//! the program's own constructors and while the process still has a single thread, connects
//! to the runner's control socket and becomes the server: it forks the children the runs
//! are made of. Each child takes its run's output pipes and socket path and goes on exactly
//! as a freshly executed program would, without paying `exec` and dynamic loading again
//! (for a short program that was a third of a controlled run's time).
//!
//! A child is forked ahead of its run: this *spare* connects to the runner's control socket
//! itself and waits there. The runner starts a run by sending the spare its request, which
//! costs the spare's wake-up and nothing else; the spare's connection becomes the run's
//! main-thread connection. When the spare has its run it closes a pipe the server watches;
//! the server forks the next spare once that run has ended (a fork next to the running
//! program, competing for the CPU and the memory system, slowed the run's first steps more
//! than it saved), or as soon as the runner says the run sent its end report
//! ([`Notice::Ahead`]): the fork then goes on beside the child's exit, which is the longest
//! part of a short run's end (its address space torn down), and the spare is ready when the
//! runner has finished the run. The server stays the
//! parent of its children and reports each run's end, seen through a pidfd and
//! `waitid(WNOWAIT)`, so the pid (the run's process-group id) stays reserved until the
//! runner, having killed the group, asks for the reap.

use crate::conn::errno;
use crate::real;
use libc::c_int;
use pos_sched::protocol::fork::{request, Notice, NOTICE_LEN, REQUEST_LEN};

/// Serve on the control socket whose path `path` holds. Returns only in a forked child that
/// got its run: with the run's socket path in `path`, and the connection that is to be the
/// main thread's. The server itself ends with the control connection.
///
/// Nothing here touches the heap (the run's path replaces the control path in the same
/// allocation, which the runner makes as long): a forked child's heap is then laid out
/// exactly as a spawned program's, and so are the addresses of its heap objects, which
/// appear in schedules.
pub fn serve(path: &mut Vec<u8>) -> Result<c_int, String> {
    match threads() {
        Some(1) => {}
        Some(n) => {
            return Err(format!(
                "cannot fork runs: {n} threads exist before main (a library started them)"
            ))
        }
        None => return Err("cannot fork runs: /proc/self/stat is unreadable".into()),
    }
    let addr = crate::fds::unix_addr(path)?;
    // SAFETY: prctl with constant arguments.
    unsafe {
        // The server lives as long as the runner thread that started it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // A run's descendants that leave its process group (`setsid`, `setpgid`) and lose
        // their parent come to the server instead of init, which kills them once the run
        // is reaped (`sweep`): a daemon a run started does not outlive it. Not inherited
        // by the children the server forks.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    let ctl = connect(&addr)?;
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() } as u32;
    if !send(ctl, Notice::Server { pid: me }) {
        return Err("fork server: the runner hung up".into());
    }
    let mut spare: Option<Spare> = None;
    // The run whose end is watched: (pid, pidfd). At most one, since the next spare is
    // forked only once it has ended or is ending.
    let mut running: Option<(libc::pid_t, c_int)> = None;
    // The runner heard the running child's end report ([`Notice::Ahead`]).
    let mut ending = false;
    loop {
        // The next spare is forked once the current run has ended or sent its end report,
        // not while it goes on: a fork next to a running program slowed its first steps
        // more than it saved.
        if spare.is_none() && (running.is_none() || ending) {
            spare = match fork_spare(ctl, &addr, running.map(|r| r.1)) {
                Forked::Child(run) => return run.start(path),
                Forked::Parent(s) => Some(s),
                Forked::Failed(e) => return Err(format!("fork server: cannot fork: errno {e}")),
            };
        }
        // A spare forked beside an ending run is watched once that run's end is reported
        // (the runner starts no run before it hears it).
        let mut fds = [
            ctl,
            spare
                .as_ref()
                .filter(|_| running.is_none())
                .map_or(-1, |s| s.gate),
            running.map_or(-1, |r| r.1),
        ]
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: polling descriptors we own (or -1, ignored).
        if unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) } < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            shut_down(spare, running);
        }
        // The end first: a reap request may follow its notice.
        if let Some((pid, pidfd)) = running.filter(|_| fds[2].revents != 0) {
            if let Some(n) = ended(pid) {
                send(ctl, n);
                // SAFETY: the pidfd is ours and done with.
                unsafe { real::close(pidfd) };
                running = None;
                ending = false;
            }
        }
        if fds[0].revents != 0 {
            match read_notice(ctl) {
                Some(Notice::Reap { pid }) => {
                    reap(pid as libc::pid_t);
                    // Before the gate below: the runner sends this before the next run's
                    // request, so that run is still the spare here (and kept).
                    sweep(&[spare.as_ref().map(|s| s.pid), running.map(|r| r.0)]);
                }
                Some(Notice::Ahead { pid }) => {
                    ending = running.is_some_and(|(r, _)| r as u32 == pid);
                }
                Some(_) => {}
                None => shut_down(spare, running),
            }
        }
        if fds[1].revents != 0 {
            // The spare has its run (or is gone): watch its end.
            if let Some(s) = spare.take() {
                // SAFETY: our end of the gate pipe.
                unsafe { real::close(s.gate) };
                let pidfd = pidfd_open(s.pid);
                if pidfd < 0 {
                    return Err("fork server: cannot watch a run's end (no pidfd)".into());
                }
                running = Some((s.pid, pidfd));
            }
        }
    }
}

/// The runner is done: end the spare, reap every child, exit.
fn shut_down(spare: Option<Spare>, running: Option<(libc::pid_t, c_int)>) -> ! {
    if let Some(s) = spare {
        // SAFETY: our own child, waiting for a run that will not come.
        unsafe { libc::kill(s.pid, libc::SIGKILL) };
    }
    if let Some((pid, _)) = running {
        // SAFETY: our own child's group (the runner normally killed it already).
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    sweep(&[]);
    // SAFETY: reaping our own children until none is left, then ending the server.
    unsafe {
        while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 || errno() == libc::EINTR {}
        real::_exit(0)
    }
}

/// Connect to the runner's control socket.
fn connect(addr: &(libc::sockaddr_un, libc::socklen_t)) -> Result<c_int, String> {
    // SAFETY: plain socket calls on values we own.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(format!("fork server: socket: errno {}", errno()));
        }
        while libc::connect(fd, (&addr.0 as *const libc::sockaddr_un).cast(), addr.1) != 0 {
            if errno() != libc::EINTR {
                let e = errno();
                real::close(fd);
                return Err(format!(
                    "fork server: cannot connect to the runner: errno {e}"
                ));
            }
        }
        Ok(fd)
    }
}

/// A run request as received: the frame, the run's stdout and stderr pipes, and the
/// connection it came on.
struct Run {
    frame: [u8; REQUEST_LEN],
    out: c_int,
    err: c_int,
    conn: c_int,
}

impl Run {
    /// In the run's child: take the pipes as stdout and stderr and the run's socket path;
    /// the connection becomes the main thread's.
    fn start(self, path: &mut Vec<u8>) -> Result<c_int, String> {
        let run_path = request::decode(&self.frame)?;
        // SAFETY: descriptors we received; the child continues as the program.
        unsafe {
            libc::dup2(self.out, 1);
            libc::dup2(self.err, 2);
        }
        close_all(&[self.out, self.err]);
        path.clear();
        path.extend_from_slice(run_path);
        Ok(self.conn)
    }
}

/// The child forked ahead: its pid, and the read end of the pipe it closes once it has a
/// run.
struct Spare {
    pid: libc::pid_t,
    gate: c_int,
}

enum Forked {
    /// In the new child, once its run arrived.
    Child(Run),
    Parent(Spare),
    Failed(c_int),
}

/// Fork the spare: in its own process group at once (from both sides, so the group exists
/// whenever the runner hears of the pid), connected to the runner, waiting for its run.
/// `watching` is the pidfd of the run still ending, if any: the program must not inherit it.
fn fork_spare(
    ctl: c_int,
    addr: &(libc::sockaddr_un, libc::socklen_t),
    watching: Option<c_int>,
) -> Forked {
    let mut gate = [-1 as c_int; 2];
    // SAFETY: pipe2 into a local array.
    if unsafe { libc::pipe2(gate.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Forked::Failed(errno());
    }
    // SAFETY: the process has one thread here (no thread is started before this point).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the child's copies of the server's descriptors, which the program must not
        // inherit; its own process group.
        unsafe {
            real::close(ctl);
            real::close(gate[0]);
            if let Some(fd) = watching {
                real::close(fd);
            }
            libc::setpgid(0, 0);
        }
        let run = connect(addr).ok().and_then(|conn| {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() } as u32;
            if !send(conn, Notice::Spare { pid: me }) {
                return None;
            }
            match receive(conn) {
                Ok(Some((frame, out, err))) => Some(Run {
                    frame,
                    out,
                    err,
                    conn,
                }),
                _ => None,
            }
        });
        // SAFETY: closing the gate tells the server this spare is taken (or gone).
        unsafe { real::close(gate[1]) };
        match run {
            Some(run) => return Forked::Child(run),
            // SAFETY: no run will come; nothing of the program ran.
            None => unsafe { real::_exit(0) },
        }
    }
    let e = errno();
    // SAFETY: the child's end of the gate, which only the child uses.
    unsafe { real::close(gate[1]) };
    if pid < 0 {
        // SAFETY: our end of a gate nobody will use.
        unsafe { real::close(gate[0]) };
        return Forked::Failed(e);
    }
    // SAFETY: pid is our child.
    unsafe { libc::setpgid(pid, pid) };
    Forked::Parent(Spare { pid, gate: gate[0] })
}

/// A pidfd for our child `pid`, or -1.
fn pidfd_open(pid: libc::pid_t) -> c_int {
    // SAFETY: a plain system call; the result is a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as c_int;
    if fd >= 0 {
        // SAFETY: our fresh descriptor; keep it out of children that exec.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    fd
}

/// Read one notice from the runner; `None` at EOF or on a broken frame.
fn read_notice(fd: c_int) -> Option<Notice> {
    let mut b = [0u8; NOTICE_LEN];
    if !crate::conn::read_exact(fd, &mut b) {
        return None;
    }
    Notice::decode(&b).ok()
}

/// The number of threads of this process (from `/proc/self/stat`, read without the heap).
/// A fork copies only the calling thread, so the server must be alone.
fn threads() -> Option<usize> {
    let mut buf = [0u8; 1024];
    let n = crate::procfs::read_proc(c"/proc/self/stat", &mut buf)?;
    let text = &buf[..n];
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
fn receive(ctl: c_int) -> Result<Option<([u8; REQUEST_LEN], c_int, c_int)>, ()> {
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
    Ok(Some((buf, fds[0], fds[1])))
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

/// The end of our child `pid` if it has ended (not reaped: `WNOWAIT`).
fn ended(pid: libc::pid_t) -> Option<Notice> {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child, writing into `info`.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        // SAFETY: waitid filled a SIGCHLD siginfo (si_pid 0: not ended yet).
        let (who, status) = unsafe { (info.si_pid(), info.si_status()) };
        let pid = pid as u32;
        return if r == 0 && who == 0 {
            None
        } else if r == 0 && info.si_code == libc::CLD_EXITED {
            Some(Notice::Exited { pid, code: status })
        } else if r == 0 {
            Some(Notice::Killed {
                pid,
                signal: status,
            })
        } else {
            // Cannot happen for our own child; report it as killed rather than hang.
            Some(Notice::Killed {
                pid,
                signal: libc::SIGKILL,
            })
        };
    }
}

/// Kill and reap every child of the server but those in `keep` (the spare, the run going
/// on): the descendants of ended runs that left their run's process group and came to the
/// server when their parent died (see `PR_SET_CHILD_SUBREAPER` in [`serve`]). Each is
/// killed with its own process group; what they started comes to the server in turn and
/// goes in the next round.
fn sweep(keep: &[Option<libc::pid_t>]) {
    for _ in 0..1000 {
        let mut buf = [0u8; 4096];
        let kids = children(&mut buf);
        let mut any = false;
        for pid in kids
            .split(|&c| c == b' ')
            .filter_map(|f| {
                std::str::from_utf8(f)
                    .ok()?
                    .trim()
                    .parse::<libc::pid_t>()
                    .ok()
            })
            .filter(|&p| p > 0 && !keep.contains(&Some(p)))
        {
            any = true;
            // SAFETY: our own child and the group it leads (ESRCH if it leads none).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
            }
            reap(pid);
        }
        if !any {
            return;
        }
    }
}

/// The server's children as `/proc/thread-self/children` lists them (pids separated by
/// spaces; the server has one thread), read into `buf` without the heap; empty if
/// unreadable. A longer list is cut at the buffer's end, and the rest is seen once the
/// first are gone.
fn children(buf: &mut [u8; 4096]) -> &[u8] {
    let n = crate::procfs::read_proc(c"/proc/thread-self/children", buf).unwrap_or(0);
    // A cut last entry is dropped (it is read whole in a later round).
    let end = if n == buf.len() {
        buf.iter().rposition(|&c| c == b' ').unwrap_or(0)
    } else {
        n
    };
    &buf[..end]
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
