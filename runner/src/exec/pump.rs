//! The I/O of one run: one poll over the listening socket, every program-thread connection,
//! the program's stdout/stderr pipes and a pidfd (or the fork server's notices), turned into
//! [`Ev`]s. A run over the socket reads them from a channel fed by one I/O thread ([`Pump`]);
//! a run decided in the program, which only hears its start, its end and its exit, polls
//! them on the watching thread itself ([`Inline`]): starting that thread and the hop of each
//! event between two threads were about a tenth of such a run (issue 15).
//!
//! One thread instead of an acceptor, a reader per connection, an exit waiter and two output
//! readers: for a short program, creating and waking those threads was a large share of a
//! run's cost. Connections are read with `MSG_DONTWAIT`, so their descriptors stay blocking
//! for the decision loop, which writes the replies on its own handle.

use crate::exec::forkserver;
use crate::exec::process::Exit;
use crossbeam_channel::{RecvTimeoutError, Sender};
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
        let src = Poller::new(src)?;
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

/// Where the events go: the decision loop's channel (the I/O thread) or the caller's queue
/// (inline). False when the receiver is gone.
type Sink<'a> = &'a mut dyn FnMut(Ev) -> bool;

/// Everything one run's I/O watches, and what it has read so far. The I/O thread polls it
/// in a loop ([`Pump`]); a run decided in the program, which hears only its start, its end
/// and its exit, polls it on the watching thread itself ([`Inline`]).
pub struct Poller {
    listener: UnixListener,
    main_conn: Option<UnixStream>,
    want_pc: bool,
    out: Tail,
    err: Tail,
    exit: ExitWatch,
    conns: Vec<Conn>,
    next_id: usize,
    fds: Vec<libc::pollfd>,
}

impl Poller {
    pub fn new(src: Sources) -> std::io::Result<Poller> {
        src.listener.set_nonblocking(true)?;
        Ok(Poller {
            listener: src.listener,
            main_conn: src.main_conn,
            want_pc: src.want_pc,
            out: Tail::new(src.stdout),
            err: Tail::new(src.stderr),
            exit: src.exit,
            conns: Vec::new(),
            next_id: 0,
            fds: Vec::new(),
        })
    }

    /// Watch a new connection under the next id and hand its write half on; false if the
    /// receiver is gone.
    fn add_conn(&mut self, stream: UnixStream, sink: Sink<'_>) -> bool {
        let Ok(write_half) = stream.try_clone() else {
            return true;
        };
        let id = self.next_id;
        self.next_id += 1;
        if !sink(Ev::Conn(id, write_half)) {
            return false;
        }
        self.conns.push(Conn {
            id,
            stream,
            buf: Vec::with_capacity(MSG_LEN),
        });
        true
    }

    /// Wait up to `timeout_ms` (-1: no limit) for any source, or for `stop` to become
    /// readable, and hand what the sources say to `sink`. False when `stop` is readable or
    /// the receiver is gone.
    fn step(&mut self, mut timeout_ms: i32, stop: Option<RawFd>, sink: Sink<'_>) -> bool {
        if let Some(stream) = self.main_conn.take() {
            if !self.add_conn(stream, sink) {
                return false;
            }
            // Something to hear already: only look at what is ready besides.
            timeout_ms = 0;
        }
        let fds = &mut self.fds;
        fds.clear();
        fds.push(pfd(stop.unwrap_or(-1)));
        fds.push(pfd(self.listener.as_raw_fd()));
        fds.push(pfd(match &self.exit {
            ExitWatch::Elsewhere => -1,
            ExitWatch::Pidfd(fd) => fd.as_raw_fd(),
            ExitWatch::Server { feed, .. } => feed.as_raw_fd(),
        }));
        fds.push(pfd(self.out.fd()));
        fds.push(pfd(self.err.fd()));
        fds.extend(self.conns.iter().map(|c| pfd(c.stream.as_raw_fd())));
        poll(fds, timeout_ms);
        if ready(&fds[0]) {
            return false;
        }
        // Connections first: what a thread wrote before the process died precedes its exit.
        let mut closed = Vec::new();
        for (i, c) in self.conns.iter_mut().enumerate() {
            if ready(&self.fds[5 + i]) && !read_conn(c, sink, self.want_pc) {
                closed.push(i);
            }
        }
        for i in closed.into_iter().rev() {
            self.conns.swap_remove(i);
        }
        let [_, listener, exit, out, err] = [0, 1, 2, 3, 4].map(|i| ready(&self.fds[i]));
        if listener {
            while let Ok((stream, _)) = self.listener.accept() {
                if !self.add_conn(stream, sink) {
                    return false;
                }
            }
        }
        if out {
            self.out.pull();
        }
        if err {
            self.err.pull();
        }
        if exit {
            let seen = match &self.exit {
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
                self.exit = ExitWatch::Elsewhere;
                if !sink(ev) {
                    return false;
                }
            }
        }
        true
    }

    /// Stop watching the connections and finish the output tails: read the pipes until
    /// EOF, for at most `grace` (a process that left the group may hold them open).
    pub fn finish(mut self, grace: Duration) -> (Vec<u8>, Vec<u8>) {
        drop(std::mem::take(&mut self.conns));
        let (mut out, mut err) = (self.out, self.err);
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
}

fn run(src: Poller, tx: Sender<Ev>, stop: UnixStream, grace: Duration) -> (Vec<u8>, Vec<u8>) {
    let mut poller = src;
    let mut send = |ev: Ev| tx.send(ev).is_ok();
    // Watch everything until told to stop (or the decision loop went away).
    while poller.step(-1, Some(stop.as_raw_fd()), &mut send) {}
    poller.finish(grace)
}

/// The run's sources polled on the calling thread, with the channel's `recv_timeout`: no
/// I/O thread to start, and no hop between threads for each event.
pub struct Inline {
    poller: Poller,
    queue: std::collections::VecDeque<Ev>,
}

impl Inline {
    pub fn new(src: Sources) -> std::io::Result<Inline> {
        Ok(Inline {
            poller: Poller::new(src)?,
            queue: std::collections::VecDeque::new(),
        })
    }

    /// The next event, waiting at most `timeout` for it.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Ev, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(ev) = self.queue.pop_front() {
                return Ok(ev);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(RecvTimeoutError::Timeout);
            }
            // Whole milliseconds, rounded up: `poll` would round a shorter wait down to none.
            let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
            let queue = &mut self.queue;
            self.poller.step(ms, None, &mut |ev| {
                queue.push_back(ev);
                true
            });
        }
    }

    /// The events read but not received yet.
    pub fn pending(&self) -> impl Iterator<Item = &Ev> {
        self.queue.iter()
    }

    /// See [`Poller::finish`].
    pub fn finish(self, grace: Duration) -> (Vec<u8>, Vec<u8>) {
        self.poller.finish(grace)
    }
}

/// Read what a readable connection holds and forward its complete frames. False when the
/// connection is finished (EOF, error or garbage; the decision loop has been told).
fn read_conn(c: &mut Conn, sink: Sink<'_>, want_pc: bool) -> bool {
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
            let _ = sink(Ev::Eof(c.id));
            return false;
        }
        if n < 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return true,
                _ => {
                    let _ = sink(Ev::Eof(c.id));
                    return false;
                }
            }
        }
        c.buf.extend_from_slice(&chunk[..n as usize]);
        if !frames(c, sink, want_pc) {
            return false;
        }
        if (n as usize) < chunk.len() {
            return true;
        }
    }
}

/// Forward every complete frame at the front of the connection's buffer. False on garbage.
fn frames(c: &mut Conn, sink: Sink<'_>, want_pc: bool) -> bool {
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
                let _ = sink(Ev::Bad(c.id, e.to_string()));
                return false;
            }
        };
        at += len;
        if let Msg::At { pc } = msg {
            // The pc of the post that follows: only the pc is passed on.
            if want_pc {
                let _ = sink(Ev::Pc(c.id, pc));
            }
            continue;
        }
        if let Some(pc) = frame_pc(&head).filter(|_| want_pc) {
            let _ = sink(Ev::Pc(c.id, pc));
        }
        let _ = sink(Ev::Msg(c.id, msg));
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

    /// `cmd` started, with a pidfd on it; `None` (the child ended) on a kernel without
    /// pidfds, where the session falls back to a waiter thread.
    fn watched(mut cmd: Command) -> Option<(std::process::Child, OwnedFd)> {
        let mut child = cmd.spawn().unwrap();
        match pidfd_open(child.id()) {
            Some(fd) => Some((child, fd)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        }
    }

    /// `sh -c script` with its three standard streams piped, and the sources that watch
    /// it (its output and a pidfd); `None` on a kernel without pidfds.
    fn shell(script: &str, l: UnixListener) -> Option<(std::process::Child, Sources)> {
        let mut sh = Command::new("sh");
        sh.args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, pidfd) = watched(sh)?;
        let src = Sources {
            stdout: child.stdout.take().map(OwnedFd::from),
            stderr: child.stderr.take().map(OwnedFd::from),
            ..sources(l, Some(pidfd), false)
        };
        Some((child, src))
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
        let Some((mut child, src)) = shell("echo out; echo err >&2; exit 3", l) else {
            return;
        };
        let (tx, rx) = unbounded();
        let pump = Pump::start(src, tx, Duration::from_secs(5)).unwrap();
        assert!(matches!(next(&rx), Ev::Exited(Exit::Code(3))));
        // Seen without reaping: the child is still ours to wait for.
        assert_eq!(child.wait().unwrap().code(), Some(3));
        let (out, err) = pump.finish();
        assert_eq!(out, b"out\n");
        assert_eq!(err, b"err\n");
    }

    #[test]
    fn polled_inline_the_sources_give_the_same_events_and_a_wait_times_out() {
        let (_dir, path, l) = listener();
        let Some((mut child, src)) = shell("read x; echo out; exit 4", l) else {
            return;
        };
        let mut io = Inline::new(src).unwrap();
        let wait = Duration::from_secs(5);
        let short = Duration::from_millis(30);
        let t = Instant::now();
        assert!(matches!(
            io.recv_timeout(short),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(t.elapsed() >= short, "the wait lasted its timeout");
        let mut c = UnixStream::connect(&path).unwrap();
        assert!(matches!(io.recv_timeout(wait), Ok(Ev::Conn(0, _))));
        let alive = Msg::Alive { steps: 9 }.encode().0;
        c.write_all(&alive).unwrap();
        assert!(matches!(
            io.recv_timeout(wait),
            Ok(Ev::Msg(0, Msg::Alive { steps: 9 }))
        ));
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        // The connection stays open: the only other event is the exit.
        assert!(matches!(
            io.recv_timeout(wait),
            Ok(Ev::Exited(Exit::Code(4)))
        ));
        assert_eq!(io.pending().count(), 0);
        assert_eq!(child.wait().unwrap().code(), Some(4));
        let (out, err) = io.finish(wait);
        assert_eq!((out.as_slice(), err.as_slice()), (&b"out\n"[..], &b""[..]));
    }

    #[test]
    fn a_connection_made_before_the_run_is_heard_at_once_inline() {
        // The fork server's spare is connected before the run: its connection is the first
        // event, without waiting for anything else to become readable.
        let (_dir, _path, l) = listener();
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let mut io = Inline::new(Sources {
            main_conn: Some(ours),
            ..sources(l, None, false)
        })
        .unwrap();
        let t = Instant::now();
        assert!(matches!(
            io.recv_timeout(Duration::from_secs(60)),
            Ok(Ev::Conn(0, _))
        ));
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }

    #[test]
    fn a_death_by_signal_is_reported_as_a_signal() {
        let (_dir, _path, l) = listener();
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let Some((mut child, pidfd)) = watched(sleep) else {
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
