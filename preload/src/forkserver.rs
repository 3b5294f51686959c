//! Fork-server mode (`POSCHECK_SERVER`, see [`pos_sched::protocol::fork`]).
//!
//! The runner starts the program once per worker. libpos's constructor, which runs before
//! the program's own constructors and while the process still has a single thread, connects
//! to the runner's control socket and then forks one child per run on request. Each child
//! takes the run's output pipes and socket path and goes on exactly as a freshly executed
//! program would, without paying `exec` and dynamic loading again (for a short program that
//! was a third of a controlled run's time).
//!
//! The server stays the parent of its children: it reports each child's pid, then its end,
//! seen with `WNOWAIT` so that the pid (the run's process-group id) stays reserved until
//! the runner has killed the group; it reaps the child when the next request or the end of
//! the control connection comes.

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
    loop {
        let next = receive(ctl);
        if let Some(pid) = unreaped.take() {
            reap(pid);
        }
        let (frame, out, err) = match next {
            Ok(Some(r)) => r,
            // The runner is done with us (or gone).
            // SAFETY: ending the server; it has no state worth flushing.
            Ok(None) | Err(_) => unsafe { real::_exit(0) },
        };
        let run_path = match request::decode(&frame) {
            Ok(p) => p,
            Err(_) => {
                close_all(&[out, err]);
                send(
                    ctl,
                    Notice::Failed {
                        errno: libc::EINVAL,
                    },
                );
                continue;
            }
        };
        // SAFETY: the process has one thread here (no thread is started before this point).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: descriptors we received or own; the child continues as the program.
            unsafe {
                real::close(ctl);
                libc::dup2(out, 1);
                libc::dup2(err, 2);
                real::close(out);
                real::close(err);
                libc::setpgid(0, 0);
            }
            path.clear();
            path.extend_from_slice(run_path);
            return Ok(());
        }
        let fork_errno = errno();
        // SAFETY: closing our copies of the run's pipes.
        unsafe {
            real::close(out);
            real::close(err);
        }
        if pid < 0 {
            send(ctl, Notice::Failed { errno: fork_errno });
            continue;
        }
        // Also from here, so the group exists before the runner hears of the pid (the
        // child may not have run yet).
        // SAFETY: pid is our child.
        unsafe { libc::setpgid(pid, pid) };
        let started = send(ctl, Notice::Started { pid: pid as u32 });
        if !started {
            // SAFETY: our child's group; the runner cannot take care of it any more.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        send(ctl, end_of(pid));
        unreaped = Some(pid);
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
