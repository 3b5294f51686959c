//! The I/O thread of one run: a single thread that polls the listening socket, every
//! program-thread connection, the program's stdout/stderr pipes and a pidfd (or the fork
//! server's notices), and turns what it sees into [`Ev`]s on the decision loop's channel.
//!
//! One thread instead of an acceptor, a reader per connection, an exit waiter and two output
//! readers: for a short program, creating and waking those threads was a large share of a
//! run's cost. Connections are read with `MSG_DONTWAIT`, so their descriptors stay blocking
//! for the decision loop, which writes the replies on its own handle.

use crate::exec::forkserver;
use crate::exec::process::Exit;
use crossbeam_channel::Sender;
use pos_sched::protocol::fork::Notice;
use pos_sched::protocol::{frame_pc, Msg, MSG_LEN};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of each output stream is kept (the tail).
pub const CAPTURE_BYTES: usize = 64 * 1024;

/// What the I/O thread reports to the decision loop.
#[derive(Debug)]
pub enum Ev {
    /// A new connection (id, in accept order) and its write half.
    Conn(usize, UnixStream),
    Msg(usize, Msg),
    /// The pc carried by the next `Msg` of this connection (a memory access's post).
    Pc(usize, u64),
    Eof(usize),
    Bad(usize, String),
    /// The program's main process ended (seen without reaping it).
    Exited(Exit),
    /// The fork server's connection broke: the run's end cannot be known.
    ServerLost,
}

/// How the I/O thread sees the main process end.
pub enum ExitWatch {
    /// Not at all (the kernel has no pidfd; a waiter thread reports it).
    Elsewhere,
    /// A pidfd of our own child.
    Pidfd(OwnedFd),
    /// The fork server's notices about its child `pid` (a handle on its control connection).
    Server { feed: UnixStream, pid: u32 },
}

/// What the I/O thread watches.
pub struct Sources {
    pub listener: UnixListener,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    pub exit: ExitWatch,
    /// A main-thread connection made before the run (a fork server's spare): connection 0.
    pub main_conn: Option<UnixStream>,
    /// Also report each memory post's pc ([`Ev::Pc`]).
    pub want_pc: bool,
}

/// The running I/O thread.
pub struct Pump {
    stop: Option<UnixStream>,
    handle: Option<JoinHandle<(Vec<u8>, Vec<u8>)>>,
}

impl Pump {
    /// Start the thread. After [`Pump::finish`] it keeps reading the output pipes for at
    /// most `grace` (a process that left the group may hold them open).
    pub fn start(src: Sources, tx: Sender<Ev>, grace: Duration) -> std::io::Result<Pump> {
        let (stop, stop_rx) = UnixStream::pair()?;
        src.listener.set_nonblocking(true)?;
        let handle = std::thread::Builder::new()
            .name("poscheck-io".into())
            .spawn(move || run(src, tx, stop_rx, grace))?;
        Ok(Pump {
            stop: Some(stop),
            handle: Some(handle),
        })
    }

    /// Stop watching the sockets and return the output tails (stdout, stderr).
    pub fn finish(mut self) -> (Vec<u8>, Vec<u8>) {
        self.stop.take();
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        // Closing our end wakes the thread, which then ends within its grace by itself.
        self.stop.take();
    }
}

/// A connection being read: its stream and the bytes of a frame not yet complete.
struct Conn {
    id: usize,
    stream: UnixStream,
    buf: Vec<u8>,
}

/// The tail of one output stream, read from its pipe until EOF.
struct Tail {
    pipe: Option<std::fs::File>,
    kept: Vec<u8>,
}

impl Tail {
    fn new(pipe: Option<OwnedFd>) -> Tail {
        Tail {
            pipe: pipe.map(std::fs::File::from),
            kept: Vec::new(),
        }
    }

    /// The descriptor to poll, or -1 (ignored by `poll`) once the pipe is closed.
    fn fd(&self) -> RawFd {
        self.pipe.as_ref().map_or(-1, |p| p.as_raw_fd())
    }

    /// Read what is available (the pipe is readable, so one read does not block).
    fn pull(&mut self) {
        let Some(p) = self.pipe.as_mut() else { return };
        let mut chunk = [0u8; 8192];
        match p.read(&mut chunk) {
            Ok(0) | Err(_) => self.pipe = None,
            Ok(n) => {
                self.kept.extend_from_slice(&chunk[..n]);
                if self.kept.len() > 2 * CAPTURE_BYTES {
                    self.kept.drain(..self.kept.len() - CAPTURE_BYTES);
                }
            }
        }
    }

    fn take(mut self) -> Vec<u8> {
        if self.kept.len() > CAPTURE_BYTES {
            self.kept.drain(..self.kept.len() - CAPTURE_BYTES);
        }
        self.kept
    }
}

fn pfd(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

fn ready(p: &libc::pollfd) -> bool {
    p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

/// `poll` with a timeout in milliseconds (-1: none); EINTR counts as "nothing ready".
fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) {
    // SAFETY: fds is a valid array of pollfd for its whole length.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
}

/// Watch a new connection under the next id and hand its write half to the decision loop;
/// false if the decision loop is gone.
fn add_conn(
    conns: &mut Vec<Conn>,
    next_id: &mut usize,
    stream: UnixStream,
    tx: &Sender<Ev>,
) -> bool {
    let Ok(write_half) = stream.try_clone() else {
        return true;
    };
    let id = *next_id;
    *next_id += 1;
    if tx.send(Ev::Conn(id, write_half)).is_err() {
        return false;
    }
    conns.push(Conn {
        id,
        stream,
        buf: Vec::with_capacity(MSG_LEN),
    });
    true
}

fn run(mut src: Sources, tx: Sender<Ev>, stop: UnixStream, grace: Duration) -> (Vec<u8>, Vec<u8>) {
    let mut out = Tail::new(src.stdout);
    let mut err = Tail::new(src.stderr);
    let mut exit = src.exit;
    let mut conns: Vec<Conn> = Vec::new();
    let mut next_id = 0usize;
    let mut fds: Vec<libc::pollfd> = Vec::new();
    // Watch everything until told to stop (or the decision loop went away).
    'watch: loop {
        if let Some(stream) = src.main_conn.take() {
            if !add_conn(&mut conns, &mut next_id, stream, &tx) {
                break;
            }
        }
        fds.clear();
        fds.push(pfd(stop.as_raw_fd()));
        fds.push(pfd(src.listener.as_raw_fd()));
        fds.push(pfd(match &exit {
            ExitWatch::Elsewhere => -1,
            ExitWatch::Pidfd(fd) => fd.as_raw_fd(),
            ExitWatch::Server { feed, .. } => feed.as_raw_fd(),
        }));
        fds.push(pfd(out.fd()));
        fds.push(pfd(err.fd()));
        fds.extend(conns.iter().map(|c| pfd(c.stream.as_raw_fd())));
        poll(&mut fds, -1);
        if ready(&fds[0]) {
            break;
        }
        // Connections first: what a thread wrote before the process died precedes its exit.
        let mut closed = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            if ready(&fds[5 + i]) && !read_conn(c, &tx, src.want_pc) {
                closed.push(i);
            }
        }
        for i in closed.into_iter().rev() {
            conns.swap_remove(i);
        }
        if ready(&fds[1]) {
            while let Ok((stream, _)) = src.listener.accept() {
                if !add_conn(&mut conns, &mut next_id, stream, &tx) {
                    break 'watch;
                }
            }
        }
        if ready(&fds[3]) {
            out.pull();
        }
        if ready(&fds[4]) {
            err.pull();
        }
        if ready(&fds[2]) {
            let seen = match &exit {
                ExitWatch::Elsewhere => None,
                ExitWatch::Pidfd(fd) => exit_of(fd.as_raw_fd()).map(Ev::Exited),
                ExitWatch::Server { feed, pid } => match forkserver::read_notice(feed) {
                    Ok(Notice::Exited { pid: p, code }) if p == *pid => {
                        Some(Ev::Exited(Exit::Code(code)))
                    }
                    Ok(Notice::Killed { pid: p, signal }) if p == *pid => {
                        Some(Ev::Exited(Exit::Signal(signal)))
                    }
                    Ok(_) => None,
                    Err(_) => Some(Ev::ServerLost),
                },
            };
            if let Some(ev) = seen {
                exit = ExitWatch::Elsewhere;
                if tx.send(ev).is_err() {
                    break 'watch;
                }
            }
        }
    }
    drop(conns);
    // Finish the output tails, for at most the grace.
    let deadline = Instant::now() + grace;
    while out.pipe.is_some() || err.pipe.is_some() {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        let mut p = [pfd(out.fd()), pfd(err.fd())];
        poll(&mut p, left.as_millis().clamp(1, i32::MAX as u128) as i32);
        if ready(&p[0]) {
            out.pull();
        }
        if ready(&p[1]) {
            err.pull();
        }
    }
    (out.take(), err.take())
}

/// Read what a readable connection holds and forward its complete frames. False when the
/// connection is finished (EOF, error or garbage; the decision loop has been told).
fn read_conn(c: &mut Conn, tx: &Sender<Ev>, want_pc: bool) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe {
            libc::recv(
                c.stream.as_raw_fd(),
                chunk.as_mut_ptr().cast(),
                chunk.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n == 0 {
            let _ = tx.send(Ev::Eof(c.id));
            return false;
        }
        if n < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return true,
                _ => {
                    let _ = tx.send(Ev::Eof(c.id));
                    return false;
                }
            }
        }
        c.buf.extend_from_slice(&chunk[..n as usize]);
        if !frames(c, tx, want_pc) {
            return false;
        }
        if (n as usize) < chunk.len() {
            return true;
        }
    }
}

/// Forward every complete frame at the front of the connection's buffer. False on garbage.
fn frames(c: &mut Conn, tx: &Sender<Ev>, want_pc: bool) -> bool {
    let mut at = 0;
    while c.buf.len() - at >= MSG_LEN {
        let head: [u8; MSG_LEN] = match c.buf[at..at + MSG_LEN].try_into() {
            Ok(h) => h,
            Err(_) => break,
        };
        let (msg, len) = match Msg::decode(&head) {
            Ok(Ok(m)) => (m, MSG_LEN),
            Ok(Err(payload)) => {
                if c.buf.len() - at < MSG_LEN + payload {
                    break;
                }
                let p = &c.buf[at + MSG_LEN..at + MSG_LEN + payload];
                (Msg::with_payload(&head, p), MSG_LEN + payload)
            }
            Err(e) => {
                let _ = tx.send(Ev::Bad(c.id, e.to_string()));
                return false;
            }
        };
        at += len;
        if let Msg::At { pc } = msg {
            // The pc of the post that follows: only the pc is passed on.
            if want_pc {
                let _ = tx.send(Ev::Pc(c.id, pc));
            }
            continue;
        }
        if let Some(pc) = frame_pc(&head).filter(|_| want_pc) {
            let _ = tx.send(Ev::Pc(c.id, pc));
        }
        let _ = tx.send(Ev::Msg(c.id, msg));
    }
    c.buf.drain(..at);
    true
}

/// A pidfd for `pid` (Linux ≥ 5.3), so the I/O thread can see the exit; `None` otherwise.
pub fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: a plain syscall; on success the result is a new descriptor we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: fd is a fresh descriptor returned to us by the kernel.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// The exit of the process behind a readable pidfd, without reaping it.
fn exit_of(pidfd: RawFd) -> Option<Exit> {
    const P_PIDFD: libc::idtype_t = 3;
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our pidfd, writing into `info`.
        let r = unsafe {
            libc::waitid(
                P_PIDFD,
                pidfd as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return None;
        }
        // SAFETY: waitid filled a SIGCHLD siginfo (si_pid 0 means nothing changed yet).
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        if pid == 0 {
            return None;
        }
        return Some(if info.si_code == libc::CLD_EXITED {
            Exit::Code(status)
        } else {
            Exit::Signal(status)
        });
    }
}

#[cfg(test)]
mod tests {
    //! The I/O thread over real sockets, pipes and a child process.
    use super::*;
    use crossbeam_channel::{unbounded, Receiver};
    use pos_sched::Op;
    use std::io::Write;
    use std::process::{Command, Stdio};

    fn next(rx: &Receiver<Ev>) -> Ev {
        rx.recv_timeout(Duration::from_secs(5)).expect("an event")
    }

    /// Sources without output pipes.
    fn sources(listener: UnixListener, pidfd: Option<OwnedFd>, want_pc: bool) -> Sources {
        Sources {
            listener,
            stdout: None,
            stderr: None,
            exit: pidfd.map_or(ExitWatch::Elsewhere, ExitWatch::Pidfd),
            main_conn: None,
            want_pc,
        }
    }

    fn listener() -> (tempfile::TempDir, std::path::PathBuf, UnixListener) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let l = UnixListener::bind(&path).unwrap();
        (dir, path, l)
    }

    #[test]
    fn frames_split_across_writes_and_payloads_arrive_whole_and_in_order() {
        let (_dir, path, l) = listener();
        let (tx, rx) = unbounded();
        let src = sources(l, None, true);
        let pump = Pump::start(src, tx, Duration::from_millis(10)).unwrap();
        let mut c = UnixStream::connect(&path).unwrap();
        assert!(matches!(next(&rx), Ev::Conn(0, _)));
        let hello = Msg::Hello {
            tid: 0,
            pid: 7,
            ktid: 8,
            fd: 3,
        }
        .encode()
        .0;
        let read = Op::Read {
            addr: 0x5000,
            size: 4,
        };
        let post = Msg::encode_post_at(&read, 0x1234);
        let text = "a.c:1: f: Assertion `x' failed.".to_string();
        let assert = Msg::Assert { text: text.clone() };
        let (ah, ap) = assert.encode();
        // Split the hello in two writes and send the post and the assert's header and
        // payload in one.
        c.write_all(&hello[..5]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut rest = hello[5..].to_vec();
        rest.extend_from_slice(&post);
        rest.extend_from_slice(&ah);
        rest.extend_from_slice(ap);
        c.write_all(&rest).unwrap();
        assert!(matches!(
            next(&rx),
            Ev::Msg(
                0,
                Msg::Hello {
                    tid: 0,
                    pid: 7,
                    ktid: 8,
                    fd: 3
                }
            )
        ));
        assert!(matches!(next(&rx), Ev::Pc(0, 0x1234)));
        match next(&rx) {
            Ev::Msg(0, Msg::Post(op)) => assert_eq!(op, read),
            e => panic!("{e:?}"),
        }
        match next(&rx) {
            Ev::Msg(0, Msg::Assert { text: t }) => assert_eq!(t, text),
            e => panic!("{e:?}"),
        }
        // A second connection gets the next id; closing the first is its EOF.
        let _c2 = UnixStream::connect(&path).unwrap();
        assert!(matches!(next(&rx), Ev::Conn(1, _)));
        drop(c);
        assert!(matches!(next(&rx), Ev::Eof(0)));
        pump.finish();
    }

    #[test]
    fn garbage_is_reported_and_ends_the_connection() {
        let (_dir, path, l) = listener();
        let (tx, rx) = unbounded();
        let src = sources(l, None, false);
        let _pump = Pump::start(src, tx, Duration::from_millis(10)).unwrap();
        let mut c = UnixStream::connect(&path).unwrap();
        assert!(matches!(next(&rx), Ev::Conn(0, _)));
        c.write_all(&[0xff; MSG_LEN]).unwrap();
        assert!(matches!(next(&rx), Ev::Bad(0, _)));
    }

    #[test]
    fn the_exit_status_and_the_output_tails_of_a_child_arrive() {
        let (_dir, _path, l) = listener();
        let mut child = Command::new("sh")
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(pidfd) = pidfd_open(child.id()) else {
            // No pidfd on this kernel: the session falls back to a waiter thread.
            let _ = child.wait();
            return;
        };
        let (tx, rx) = unbounded();
        let src = Sources {
            stdout: child.stdout.take().map(OwnedFd::from),
            stderr: child.stderr.take().map(OwnedFd::from),
            ..sources(l, Some(pidfd), false)
        };
        let pump = Pump::start(src, tx, Duration::from_secs(5)).unwrap();
        assert!(matches!(next(&rx), Ev::Exited(Exit::Code(3))));
        // Seen without reaping: the child is still ours to wait for.
        assert_eq!(child.wait().unwrap().code(), Some(3));
        let (out, err) = pump.finish();
        assert_eq!(out, b"out\n");
        assert_eq!(err, b"err\n");
    }

    #[test]
    fn a_death_by_signal_is_reported_as_a_signal() {
        let (_dir, _path, l) = listener();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let Some(pidfd) = pidfd_open(child.id()) else {
            let _ = child.kill();
            let _ = child.wait();
            return;
        };
        let (tx, rx) = unbounded();
        let src = sources(l, Some(pidfd), false);
        let _pump = Pump::start(src, tx, Duration::from_millis(10)).unwrap();
        child.kill().unwrap();
        assert!(matches!(next(&rx), Ev::Exited(Exit::Signal(9))));
        let _ = child.wait();
    }
}
