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

    /// Kill the whole process group (the program, its threads and any child it forked).
    pub fn kill(&self) {
        let _ = killpg(self.pid, Signal::SIGKILL);
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
            self.reaped = true;
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.reap();
    }
}
