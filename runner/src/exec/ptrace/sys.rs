//! The system interface of the ptrace backend: starting the traced program with its
//! seccomp filter, ptrace requests and reads of the tracee's memory (raw `libc`, all from
//! the one tracer thread that started the program).

use anyhow::{Context, Result};
use libc::{c_long, pid_t, sock_filter, sock_fprog, user_regs_struct};
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The system calls that are scheduling points (x86-64 numbers). Every other call runs at
/// full speed: the filter returns `SECCOMP_RET_ALLOW` for it.
pub const TRACED: &[c_long] = &[
    libc::SYS_clone,
    libc::SYS_clone3,
    libc::SYS_fork,
    libc::SYS_vfork,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_futex,
    libc::SYS_futex_waitv,
    libc::SYS_sched_yield,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_tgkill,
    libc::SYS_tkill,
    libc::SYS_kill,
    libc::SYS_ptrace,
];

/// `SECCOMP_RET_DATA` of the stop of a system call made through another ABI (the 32-bit
/// `int 0x80` one): reported, never modelled.
pub const FOREIGN_ABI: u64 = 0xffff;

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
const BPF_LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const BPF_JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The seccomp-BPF program: `TRACE` for the calls of [`TRACED`] and for any call of another
/// architecture's ABI (data [`FOREIGN_ABI`]), `ALLOW` for the rest.
pub fn filter() -> Vec<sock_filter> {
    // struct seccomp_data { int nr; __u32 arch; ... }
    let mut f = vec![
        stmt(BPF_LD_W_ABS, 4),
        jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(BPF_RET_K, SECCOMP_RET_TRACE | FOREIGN_ABI as u32),
        stmt(BPF_LD_W_ABS, 0),
    ];
    let n = TRACED.len();
    for (i, &nr) in TRACED.iter().enumerate() {
        // Matching: jump over the remaining comparisons and the ALLOW to the TRACE.
        let to_trace = (n - i) as u8;
        f.push(jump(BPF_JEQ_K, nr as u32, to_trace, 0));
    }
    f.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    f.push(stmt(BPF_RET_K, SECCOMP_RET_TRACE));
    f
}

/// The started program: its pid and output pipes.
pub struct Started {
    pub pid: pid_t,
    pub stdout: Option<OwnedFd>,
    pub stderr: Option<OwnedFd>,
}

/// Start `program` traced by the calling thread: in the child, `PTRACE_TRACEME`, a new
/// process group, `PR_SET_PDEATHSIG` (SIGKILL), `PR_SET_NO_NEW_PRIVS` and the seccomp
/// filter, then `exec`. The child stops with SIGTRAP after its exec; the caller then sets
/// the options ([`set_options`]) before anything else runs.
pub fn spawn(program: &Path, args: &[String], env: &[(OsString, OsString)]) -> Result<Started> {
    let prog = filter();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: only async-signal-safe calls (ptrace, prctl) on memory prepared before the
    // fork; no allocation.
    unsafe {
        cmd.pre_exec(move || {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1
                || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1
            {
                return Err(io::Error::last_os_error());
            }
            let fprog = sock_fprog {
                len: prog.len() as u16,
                filter: prog.as_ptr() as *mut sock_filter,
            };
            if libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &fprog as *const sock_fprog,
            ) == -1
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => anyhow::anyhow!(
            "cannot trace {}: ptrace is not permitted here ({}; see \
             /proc/sys/kernel/yama/ptrace_scope, or a container without CAP_SYS_PTRACE)",
            program.display(),
            e
        ),
        _ => anyhow::Error::new(e).context(format!("cannot start {}", program.display())),
    })?;
    Ok(Started {
        pid: child.id() as pid_t,
        stdout: child.stdout.take().map(OwnedFd::from),
        stderr: child.stderr.take().map(OwnedFd::from),
    })
}

/// The ptrace options of a run: seccomp stops, new threads and processes traced, exec
/// reported, and the tracees killed if poscheck dies.
pub fn set_options(pid: pid_t) -> io::Result<()> {
    let opts = libc::PTRACE_O_TRACESECCOMP
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: a ptrace request on our stopped tracee.
    check(unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts as c_long) })
}

fn check(r: c_long) -> io::Result<()> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Resume stopped tracee `tid`, delivering `sig` (0: none).
pub fn cont(tid: pid_t, sig: i32) -> io::Result<()> {
    // SAFETY: a ptrace request; the kernel checks the tracee.
    check(unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, sig as c_long) })
}

/// The registers of stopped tracee `tid`.
pub fn get_regs(tid: pid_t) -> io::Result<user_regs_struct> {
    // SAFETY: all-zero is a valid user_regs_struct; the kernel fills it.
    let mut regs: user_regs_struct = unsafe { std::mem::zeroed() };
    // SAFETY: regs is a valid out-pointer of the right type for PTRACE_GETREGS.
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGS,
            tid,
            0,
            &mut regs as *mut user_regs_struct,
        )
    })?;
    Ok(regs)
}

/// Set the registers of stopped tracee `tid`.
pub fn set_regs(tid: pid_t, regs: &user_regs_struct) -> io::Result<()> {
    // SAFETY: regs points to a valid user_regs_struct.
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_SETREGS,
            tid,
            0,
            regs as *const user_regs_struct,
        )
    })
}

/// The event message of the latest ptrace stop of `tid` (a new thread's id, seccomp data).
pub fn event_msg(tid: pid_t) -> io::Result<u64> {
    let mut m: libc::c_ulong = 0;
    // SAFETY: m is a valid out-pointer.
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            tid,
            0,
            &mut m as *mut libc::c_ulong,
        )
    })?;
    Ok(m)
}

/// Read `buf.len()` bytes at `addr` of process `pid`.
pub fn read_mem(pid: pid_t, addr: u64, buf: &mut [u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one local iovec over buf; the kernel checks the remote range.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != buf.len() {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(())
}

/// The 32-bit word at `addr` of `pid`.
pub fn read_u32(pid: pid_t, addr: u64) -> io::Result<u32> {
    let mut b = [0u8; 4];
    read_mem(pid, addr, &mut b)?;
    Ok(u32::from_ne_bytes(b))
}

/// The `struct timespec` at `addr` of `pid`, in nanoseconds; `Err(EINVAL)` when malformed.
pub fn read_timespec(pid: pid_t, addr: u64) -> Result<u64, i32> {
    let mut b = [0u8; 16];
    read_mem(pid, addr, &mut b).map_err(|_| libc::EFAULT)?;
    let sec = i64::from_ne_bytes(b[..8].try_into().map_err(|_| libc::EFAULT)?);
    let nsec = i64::from_ne_bytes(b[8..].try_into().map_err(|_| libc::EFAULT)?);
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(libc::EINVAL);
    }
    Ok((sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(nsec as u64))
}

/// The current value of clock `c` in nanoseconds (`None` for a clock that cannot be read).
pub fn clock_now(c: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    if unsafe { libc::clock_gettime(c, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Read `fd` until EOF in a thread of its own, keeping the last
/// [`crate::exec::pump::CAPTURE_BYTES`]; the tail arrives on the returned channel at EOF.
pub fn tail_reader(fd: Option<OwnedFd>) -> Result<crossbeam_channel::Receiver<Vec<u8>>> {
    use std::io::Read;
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::Builder::new()
        .name("poscheck-out".into())
        .spawn(move || {
            let mut kept = Vec::new();
            let cap = crate::exec::pump::CAPTURE_BYTES;
            if let Some(fd) = fd {
                let mut f = std::fs::File::from(fd);
                let mut chunk = [0u8; 8192];
                loop {
                    match f.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            kept.extend_from_slice(&chunk[..n]);
                            if kept.len() > 2 * cap {
                                kept.drain(..kept.len() - cap);
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            if kept.len() > cap {
                kept.drain(..kept.len() - cap);
            }
            let _ = tx.send(kept);
        })
        .context("cannot start an output reader thread")?;
    Ok(rx)
}

/// The word at `addr` of stopped tracee `tid`.
pub fn peek(tid: pid_t, addr: u64) -> io::Result<u64> {
    // SAFETY: errno is thread-local; PEEKDATA returns the word or -1 with errno set.
    unsafe {
        *libc::__errno_location() = 0;
        let w = libc::ptrace(libc::PTRACE_PEEKDATA, tid, addr as *mut libc::c_void, 0);
        if w == -1 && *libc::__errno_location() != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(w as u64)
    }
}

/// Write `word` at `addr` of stopped tracee `tid` (text included: ptrace writes through
/// the page protection).
pub fn poke(tid: pid_t, addr: u64, word: u64) -> io::Result<()> {
    // SAFETY: a ptrace request; the kernel checks the address.
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_POKEDATA,
            tid,
            addr as *mut libc::c_void,
            word as *mut libc::c_void,
        )
    })
}

/// Set the byte at `addr` of `tid`, returning the one it replaces.
pub fn set_byte(tid: pid_t, addr: u64, byte: u8) -> io::Result<u8> {
    let w = peek(tid, addr)?;
    poke(tid, addr, (w & !0xff) | u64::from(byte))?;
    Ok((w & 0xff) as u8)
}

/// Execute one instruction of stopped tracee `tid`.
pub fn single_step(tid: pid_t) -> io::Result<()> {
    // SAFETY: a ptrace request; the kernel checks the tracee.
    check(unsafe { libc::ptrace(libc::PTRACE_SINGLESTEP, tid, 0, 0) })
}

/// One `waitpid(pid, flags | WNOHANG)`: the pid and status of a change, `None` when there is
/// none yet (or the call was interrupted), the error otherwise (`ECHILD`: nothing to wait for).
pub fn wait_nohang(pid: pid_t, flags: libc::c_int) -> io::Result<Option<(pid_t, libc::c_int)>> {
    let mut st: libc::c_int = 0;
    // SAFETY: waitpid with a valid status pointer.
    let r = unsafe { libc::waitpid(pid, &mut st, flags | libc::WNOHANG) };
    if r > 0 {
        return Ok(Some((r, st)));
    }
    if r == 0 {
        return Ok(None);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EINTR) {
        Ok(None)
    } else {
        Err(e)
    }
}

/// The pause between two polls of [`wait_nohang`]: yield the CPU while less than `spin` has
/// passed since the start (a resumed tracee usually stops again within microseconds), then
/// nap, the nap doubling from `first` up to `max`.
pub struct Backoff {
    start: std::time::Instant,
    spin: std::time::Duration,
    nap: std::time::Duration,
    max: std::time::Duration,
}

impl Backoff {
    pub fn new(
        spin: std::time::Duration,
        first: std::time::Duration,
        max: std::time::Duration,
    ) -> Self {
        Backoff {
            start: std::time::Instant::now(),
            spin,
            nap: first,
            max,
        }
    }

    /// Time since the start.
    pub fn elapsed(&self) -> std::time::Duration {
        self.start.elapsed()
    }

    /// Yield or nap, napping at most `cap`.
    pub fn pause(&mut self, cap: std::time::Duration) {
        if self.start.elapsed() < self.spin {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.nap.min(cap));
            self.nap = (self.nap * 2).min(self.max);
        }
    }
}
