//! Starting and ending the program of one run: its own process group, ASLR off, its output
//! pipes (read by the run's I/O thread), an exit waiter thread when the kernel has no pidfd,
//! and a group kill at the end — always.

use anyhow::{Context, Result};
use crossbeam_channel::Sender;
use nix::sys::personality::{self, Persona};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// How the program's main process ended (observed without reaping it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// A running program.
pub struct Program {
    pid: Pid,
    /// The output pipes, until the run's I/O thread takes them.
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
    /// Our own child (a fork server's child is reaped by the server).
    own: bool,
    reaped: bool,
    /// The terminal was handed to this program's group ([`spawn_debugger`]): take it back
    /// at the end.
    took_tty: bool,
    /// An environment entry only this run's processes have ([`Program::sweep_marked`]).
    mark: Option<Vec<u8>>,
}

/// Turn address space randomisation off for this process's future children (the
/// personality is inherited across fork and exec), once at start-up.
pub fn disable_aslr() -> Result<()> {
    let cur = personality::get().context("personality")?;
    personality::set(cur | Persona::ADDR_NO_RANDOMIZE).context("personality(ADDR_NO_RANDOMIZE)")?;
    Ok(())
}

/// Spawn `program args` with `env` added, in a new process group (pgid = pid) with address
/// space randomisation disabled (so crash addresses and pointer-valued object ids are
/// the same in every run). stdin is /dev/null; stdout/stderr are pipes.
pub fn spawn(program: &Path, args: &[String], env: &[(OsString, OsString)]) -> Result<Program> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A new process group through posix_spawn (no pre_exec closure, so std can avoid a full
    // fork of this multi-threaded process); ASLR is off by inheritance, see `disable_aslr`.
    cmd.process_group(0);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    Ok(Program {
        pid: Pid::from_raw(child.id() as i32),
        stdout: child.stdout.take().map(OwnedFd::from),
        stderr: child.stderr.take().map(OwnedFd::from),
        own: true,
        reaped: false,
        took_tty: false,
        mark: None,
    })
}

/// `poscheck debug`: start `gdb` (its command line, then `--args program args`) in a new
/// process group that gets the terminal when there is one, with poscheck's standard streams.
/// `env` goes to the program only (`set environment`: libpos preloaded into gdb itself
/// would take the coordinator's connection), and the program is started without a shell
/// (which would load libpos first and be controlled in its place).
pub fn spawn_debugger(
    gdb: &[OsString],
    program: &Path,
    args: &[String],
    env: &[(OsString, OsString)],
) -> Result<Program> {
    let (first, rest) = gdb.split_first().context("no debugger command")?;
    let mut cmd = Command::new(first);
    cmd.arg("-q").arg("-ex").arg("set startup-with-shell off");
    for (k, v) in env {
        let mut set = OsString::from("set environment ");
        set.push(k);
        set.push("=");
        set.push(v);
        cmd.arg("-ex").arg(set);
    }
    cmd.args(rest).arg("--args").arg(program).args(args);
    cmd.process_group(0);
    // poscheck's threads block SIGINT, SIGTERM and SIGHUP (its signal thread takes them), and
    // a child inherits the mask: gdb's Ctrl-C and the interrupt after a verdict would
    // never arrive.
    // SAFETY: sigemptyset and sigprocmask are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", Path::new(first).display()))?;
    let pid = Pid::from_raw(child.id() as i32);
    // SAFETY: isatty and tcsetpgrp on our standard input; SIGTTOU is ignored meanwhile so
    // that handing the terminal over from this (foreground) group cannot stop us.
    let took_tty = unsafe {
        if libc::isatty(0) == 1 {
            let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            let ok = libc::tcsetpgrp(0, pid.as_raw()) == 0;
            libc::signal(libc::SIGTTOU, old);
            ok
        } else {
            false
        }
    };
    Ok(Program {
        pid,
        stdout: None,
        stderr: None,
        own: true,
        reaped: false,
        took_tty,
        mark: None,
    })
}

impl Program {
    /// A run's child forked by a fork server (already in its own process group).
    pub fn forked(pid: u32, stdout: OwnedFd, stderr: OwnedFd) -> Program {
        Program {
            pid: Pid::from_raw(pid as i32),
            stdout: Some(stdout),
            stderr: Some(stderr),
            own: false,
            reaped: false,
            took_tty: false,
            mark: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid.as_raw() as u32
    }

    /// Report the main process's end on `tx` from a waiter thread, without reaping it (so
    /// its pid, which is the group id, cannot be reused before [`Program::kill`]). Used when
    /// the kernel gives no pidfd for the I/O thread to poll.
    pub fn watch<T: Send + 'static>(&self, tx: Sender<T>, wrap: fn(Exit) -> T) {
        let pid = self.pid;
        std::thread::spawn(move || loop {
            match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
                Ok(WaitStatus::Exited(_, c)) => {
                    let _ = tx.send(wrap(Exit::Code(c)));
                    return;
                }
                Ok(WaitStatus::Signaled(_, s, _)) => {
                    let _ = tx.send(wrap(Exit::Signal(s as i32)));
                    return;
                }
                Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return,
            }
        });
    }

    /// Wait until the main process has ended, without reaping it.
    pub fn wait_exit(&self) {
        loop {
            match waitid(
                Id::Pid(self.pid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
            ) {
                Err(nix::errno::Errno::EINTR) => continue,
                _ => return,
            }
        }
    }

    /// Kill the whole process group (the program, its threads and any child it forked).
    pub fn kill(&self) {
        let _ = killpg(self.pid, Signal::SIGKILL);
    }

    /// At the end also kill the processes whose environment has the entry `key=value`
    /// (one only this run's processes inherit): the descendants that left the program's
    /// process group (`setsid`, a double fork) and would outlive the run. A fork server's
    /// runs need no mark: their server is the reaper of such processes and kills them.
    pub fn sweep_marked(&mut self, key: &OsString, value: &OsString) {
        use std::os::unix::ffi::OsStrExt;
        let mut m = key.as_bytes().to_vec();
        m.push(b'=');
        m.extend_from_slice(value.as_bytes());
        self.mark = Some(m);
    }

    /// Kill the group and reap the main process, once (after the reap the pid, which is the
    /// group id, may belong to someone else). A fork server's child is only killed: its
    /// server reaps it.
    pub fn reap(&mut self) {
        if !self.reaped {
            self.kill();
            if self.own {
                let _ = waitpid(self.pid, None);
            }
            if let Some(m) = &self.mark {
                kill_marked(m);
            }
            if self.took_tty {
                // SAFETY: as in `spawn_debugger`, giving the terminal back to our group.
                unsafe {
                    let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                    libc::tcsetpgrp(0, libc::getpgrp());
                    libc::signal(libc::SIGTTOU, old);
                }
            }
            self.reaped = true;
        }
    }
}

/// Kill every process (with its group) whose environment holds the entry `mark`, in rounds
/// until a scan finds none (a killed one's children are found in the next), at most 8.
fn kill_marked(mark: &[u8]) {
    let me = std::process::id();
    for _ in 0..8 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut found = false;
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if pid as u32 == me {
                continue;
            }
            // Unreadable (another user's, or gone): not ours.
            let Ok(env) = std::fs::read(e.path().join("environ")) else {
                continue;
            };
            if env.split(|&b| b == 0).any(|entry| entry == mark) {
                found = true;
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        if !found {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.reap();
    }
}
