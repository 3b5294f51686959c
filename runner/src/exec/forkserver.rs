//! Fork-server mode: start the program once per worker thread and fork each run from it
//! (libpos's side: `preload/src/forkserver.rs`; the frames: [`pos_sched::protocol::fork`]).
//!
//! For a short program, `exec` and dynamic loading (the C library, libpos, libgcc) were a
//! third of a controlled run's time. The server is the program stopped in libpos's
//! constructor, before the program's own constructors and with a single thread, so every
//! forked child starts from the state a fresh `exec` would reach, with the same
//! environment, arguments and (ASLR being off) the same addresses. The server keeps one
//! child forked ahead (the spare), connected to the control socket and waiting: a run
//! starts with one message to it, and its connection is the run's main-thread connection.
//!
//! Each worker thread keeps its own server in a thread-local slot, for one program
//! configuration at a time. A server that cannot start or breaks is reported once and the
//! runs go back to spawning the program (`--no-fork-server` asks for that from the start).

use crate::exec::cleanup;
use crate::exec::process::{self, Program};
use crate::exec::pump;
use crate::exec::rundirs;
use crate::exec::session::{self, RunDir};
use anyhow::{anyhow, bail, Context, Result};
use pos_sched::protocol::fork::{request, Notice, ENV_FORK_SERVER, NOTICE_LEN};
use std::cell::RefCell;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server may take to reach libpos's constructor, and to have a spare ready.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a killed run's end may take to be reported before the server counts as broken.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a server is given to end by itself once its control connection closes.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// What makes two runs' programs interchangeable: the same file, arguments and environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(OsString, OsString)>,
}

/// A running fork server, its control connection, and the socket its spares connect to.
pub struct ForkServer {
    key: Key,
    ctl: UnixStream,
    listener: UnixListener,
    server: Program,
    _group: cleanup::Guard,
    _dir: RunDir,
}

impl ForkServer {
    /// Start `key.program` with libpos in fork-server mode and wait for it to connect.
    pub fn start(key: Key) -> Result<ForkServer> {
        let (dir, path, listener) = session::socket_dir()?;
        listener
            .set_nonblocking(true)
            .context("cannot make the control socket non-blocking")?;
        let mut env = key.env.clone();
        env.push((ENV_FORK_SERVER.into(), path.clone().into()));
        let mut server = process::spawn(&key.program, &key.args, &env)?;
        let group = cleanup::Guard::group(server.pid());
        let started =
            accept(&listener, Some(&server)).and_then(|mut ctl| match first_notice(&mut ctl)? {
                Notice::Server { pid } if pid == server.pid() => Ok(ctl),
                n => bail!("the fork server introduced itself as {n:?}"),
            });
        let ctl = match started {
            Ok(c) => c,
            Err(e) => {
                server.reap();
                let said = server.stderr.take().map(read_all).unwrap_or_default();
                let said = said.trim();
                return Err(if said.is_empty() {
                    e
                } else {
                    e.context(said.to_string())
                });
            }
        };
        // Its output pipes are not needed: every child gets its run's own.
        server.stdout.take();
        server.stderr.take();
        Ok(ForkServer {
            key,
            ctl,
            listener,
            server,
            _group: group,
            _dir: dir,
        })
    }

    /// Start one run: hand the waiting spare its socket path and fresh output pipes.
    /// Returns the run's process and its main-thread connection.
    pub fn fork(&mut self, socket: &Path) -> Result<(Program, UnixStream)> {
        let req = request::encode(socket.as_os_str().as_bytes()).map_err(|e| anyhow!("{e}"))?;
        let mut conn = accept(&self.listener, None).context("no spare from the fork server")?;
        let pid = match first_notice(&mut conn)? {
            Notice::Spare { pid } => pid,
            n => bail!("a fork-server spare introduced itself as {n:?}"),
        };
        let (out_r, out_w) = pipe()?;
        let (err_r, err_w) = pipe()?;
        send_with_fds(&conn, &req, &[out_w.as_raw_fd(), err_w.as_raw_fd()])
            .context("cannot hand a run to the fork server's spare")?;
        Ok((Program::forked(pid, out_r, err_r), conn))
    }

    /// A second handle on the control connection, for the run's I/O thread to see the
    /// child's end ([`pump::ExitWatch::Server`]).
    pub fn exit_feed(&self) -> Result<UnixStream> {
        self.ctl
            .try_clone()
            .context("cannot duplicate the control connection")
    }

    /// After a run whose end the I/O thread did not report: read notices until the end of
    /// child `pid` (killed by now), so the next run starts on a clean connection.
    pub fn settle(&mut self, pid: u32) -> Result<()> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let left = deadline
                .checked_duration_since(Instant::now())
                .ok_or_else(|| anyhow!("the fork server did not report run {pid}'s end"))?;
            self.ctl
                .set_read_timeout(Some(left))
                .context("cannot set a timeout on the control connection")?;
            match read_notice(&self.ctl).context("the fork server's connection broke")? {
                Notice::Exited { pid: p, .. } | Notice::Killed { pid: p, .. } if p == pid => {
                    return Ok(())
                }
                _ => {}
            }
        }
    }

    /// Child `pid` sent its end report: the server may fork the next spare beside its exit.
    /// A failure shows at the next read or write of the connection.
    pub fn ahead(&self, pid: u32) {
        let _ = (&self.ctl).write_all(&Notice::Ahead { pid }.encode());
    }

    /// The run of child `pid` is over and its group killed: the server may reap it.
    pub fn release(&mut self, pid: u32) -> Result<()> {
        (&self.ctl)
            .write_all(&Notice::Reap { pid }.encode())
            .context("the fork server's connection broke")
    }

    /// Close the control connection, let the server end its spare, reap its children and
    /// exit, and kill it if it does not within [`STOP_GRACE`].
    fn stop(&mut self) {
        let _ = self.ctl.shutdown(std::net::Shutdown::Both);
        let pidfd = pump::pidfd_open(self.server.pid());
        if let Some(fd) = &pidfd {
            let mut p = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: polling one valid descriptor.
            unsafe { libc::poll(&mut p, 1, STOP_GRACE.as_millis() as i32) };
        }
        self.server.reap();
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The first frame of a new connection (its introduction), within [`START_TIMEOUT`].
fn first_notice(conn: &mut UnixStream) -> Result<Notice> {
    conn.set_nonblocking(false)
        .context("cannot make a connection blocking")?;
    conn.set_read_timeout(Some(START_TIMEOUT))
        .context("cannot set a timeout on a connection")?;
    let n = read_notice(&*conn).context("no introduction on a fork-server connection")?;
    conn.set_read_timeout(None)
        .context("cannot clear a connection's timeout")?;
    Ok(n)
}

/// Read one notice (notices are written whole, one frame per write).
pub fn read_notice(mut from: impl Read) -> std::io::Result<Notice> {
    let mut b = [0u8; NOTICE_LEN];
    from.read_exact(&mut b)?;
    Notice::decode(&b).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Accept the next connection, or fail when `server` (if given) ends first or it takes
/// longer than [`START_TIMEOUT`].
fn accept(listener: &UnixListener, server: Option<&Program>) -> Result<UnixStream> {
    let pidfd = server.and_then(|s| pump::pidfd_open(s.pid()));
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match listener.accept() {
            Ok((s, _)) => return Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e).context("cannot accept a fork-server connection"),
        }
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            bail!("the fork server did not connect within {START_TIMEOUT:?}");
        };
        let mut p = [
            libc::pollfd {
                fd: listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd.as_ref().map_or(-1, |f| f.as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let wait = left.min(Duration::from_millis(50)).as_millis().max(1) as i32;
        // SAFETY: polling two descriptors (or -1, ignored) we own.
        unsafe { libc::poll(p.as_mut_ptr(), 2, wait) };
        if p[1].revents != 0 {
            bail!("the program ended before libpos.so started its fork server");
        }
    }
}

fn read_all(fd: OwnedFd) -> String {
    let mut s = String::new();
    let _ = std::fs::File::from(fd).read_to_string(&mut s);
    s
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).context("cannot create a pipe")
}

/// Send `bytes` with `fds` attached (`SCM_RIGHTS`).
pub(crate) fn send_with_fds(s: &UnixStream, bytes: &[u8], fds: &[i32]) -> std::io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let iov = [std::io::IoSlice::new(bytes)];
    let cmsg = [ControlMessage::ScmRights(fds)];
    let n = sendmsg::<()>(s.as_raw_fd(), &iov, &cmsg, MsgFlags::MSG_NOSIGNAL, None)?;
    if n != bytes.len() {
        // The rest without descriptors (a Unix stream socket takes 128 bytes at once in
        // practice).
        (&*s).write_all(&bytes[n..])?;
    }
    Ok(())
}

thread_local! {
    /// This thread's server (one program configuration at a time).
    static SLOT: RefCell<Option<ForkServer>> = const { RefCell::new(None) };
}

/// The configurations whose server could not start or failed (shared by the workers, so
/// the warning is said once).
static FAILED: Mutex<Vec<Key>> = Mutex::new(Vec::new());

fn failed() -> std::sync::MutexGuard<'static, Vec<Key>> {
    FAILED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Give up on `key`'s fork server: spawn its runs from now on, and say so once.
fn mark_failed(key: &Key, what: &str, why: &anyhow::Error) {
    let mut f = failed();
    if !f.contains(key) {
        eprintln!(
            "poscheck: warning: {what} for {} ({why:#}); spawning every run",
            key.program.display()
        );
        f.push(key.clone());
    }
}

/// This thread's server for `key`, started if needed; `None` when the configuration's
/// server could not start or failed. Give it back with [`check_in`] after the run.
pub fn check_out(key: &Key) -> Option<ForkServer> {
    if let Some(s) = SLOT.with(|slot| slot.borrow_mut().take()) {
        if &s.key == key {
            return Some(s);
        }
    }
    if failed().contains(key) {
        return None;
    }
    match ForkServer::start(key.clone()) {
        Ok(s) => Some(s),
        Err(e) => {
            mark_failed(key, "no fork server", &e);
            None
        }
    }
}

/// A server that started could not start a run: spawn this configuration's runs from now
/// on.
pub fn give_up(key: &Key, why: &anyhow::Error) {
    mark_failed(key, "the fork server failed", why);
}

/// Keep `server` for this thread's next run.
pub fn check_in(server: ForkServer) {
    SLOT.with(|slot| *slot.borrow_mut() = Some(server));
}

/// Stop this thread's server now (before the process exits: the main thread's
/// thread-locals are never dropped, and a test may look for leftover processes), and remove
/// the run dirs the thread made ahead or has not removed yet ([`rundirs`]).
pub fn shut_down() {
    let s = SLOT.with(|slot| slot.borrow_mut().take());
    drop(s);
    rundirs::clear();
}
