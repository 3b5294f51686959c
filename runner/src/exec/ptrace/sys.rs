//! The system interface of the ptrace backend: starting the traced program with its
//! seccomp filter, ptrace requests and reads of the tracee's memory (raw `libc`, all from
//! the one tracer thread that started the program).

use anyhow::{bail, Context, Result};
use libc::{c_int, c_long, pid_t, sock_filter, sock_fprog, user_regs_struct};
use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

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

/// The started program: its pid and the read ends of its output pipes.
pub struct Started {
    pub pid: pid_t,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// What the child of [`spawn`] needs, all prepared before the clone: it runs on the
/// caller's memory (`CLONE_VM`) while the caller is suspended, and only makes system calls.
struct ChildArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    stdin: c_int,
    stdout: c_int,
    stderr: c_int,
    filter: sock_fprog,
    /// The failed step's errno (0: the exec happened).
    errno: c_int,
    /// Whether the failed step was `PTRACE_TRACEME`.
    traceme_failed: bool,
}

/// The child of [`spawn`], between the clone and the exec.
extern "C" fn child(arg: *mut libc::c_void) -> c_int {
    // SAFETY: `arg` is the caller's ChildArgs, alive (the caller is suspended until the exec
    // or the exit: CLONE_VFORK); only system calls on prepared memory follow.
    unsafe {
        let a = &mut *(arg as *mut ChildArgs);
        // The caller's handlers must not run here (they would run on its memory): every
        // caught signal goes back to its default; SIGPIPE (ignored by the Rust runtime)
        // too, as `std::process::Command` does. Then the empty mask programs get.
        for sig in 1..=libc::SIGRTMAX() {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL
                && (old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE)
            {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let fail = |a: &mut ChildArgs| -> c_int {
            a.errno = *libc::__errno_location();
            libc::_exit(127)
        };
        if libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0
            || libc::setpgid(0, 0) != 0
            || libc::dup2(a.stdin, 0) < 0
            || libc::dup2(a.stdout, 1) < 0
            || libc::dup2(a.stderr, 2) < 0
        {
            return fail(a);
        }
        if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == -1 {
            a.traceme_failed = true;
            return fail(a);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1
            || libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &a.filter as *const sock_fprog,
            ) == -1
        {
            return fail(a);
        }
        libc::execve(a.path, a.argv, a.envp);
        fail(a)
    }
}

fn cstring(what: &str, b: &[u8]) -> Result<CString> {
    CString::new(b).with_context(|| format!("{what} contains a NUL byte"))
}

/// A pipe, both ends close-on-exec: (read, write).
fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is a valid array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error()).context("cannot make an output pipe");
    }
    // SAFETY: both are fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Size of the stack the child of [`spawn`] runs on until its exec.
const CHILD_STACK: usize = 64 * 1024;

/// Start `program` traced by the calling thread: in the child, a new process group, stdin
/// from /dev/null, stdout and stderr to pipes, `PTRACE_TRACEME`, `PR_SET_PDEATHSIG`
/// (SIGKILL), `PR_SET_NO_NEW_PRIVS` and the seccomp filter, then `exec` with poscheck's
/// environment and `env` over it. The child shares the caller's memory until its exec
/// (`clone(CLONE_VM | CLONE_VFORK)`, as `posix_spawn` does): no copy of poscheck's page
/// tables per run. It stops with SIGTRAP after its exec; the caller then sets the options
/// ([`set_options`]) before anything else runs.
pub fn spawn(program: &Path, args: &[String], env: &[(OsString, OsString)]) -> Result<Started> {
    use std::os::unix::ffi::OsStrExt;
    let path = cstring("the program path", program.as_os_str().as_bytes())?;
    let mut argv_c = vec![path.clone()];
    for a in args {
        argv_c.push(cstring("an argument", a.as_bytes())?);
    }
    let mut envp_c = Vec::new();
    for (k, v) in std::env::vars_os() {
        if env.iter().all(|(ek, _)| *ek != k) {
            envp_c.push(cstring(
                "the environment",
                &[k.as_bytes(), b"=", v.as_bytes()].concat(),
            )?);
        }
    }
    for (k, v) in env {
        envp_c.push(cstring(
            "the environment",
            &[k.as_bytes(), b"=", v.as_bytes()].concat(),
        )?);
    }
    let argv: Vec<*const libc::c_char> = argv_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = envp_c
        .iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let null = std::fs::File::open("/dev/null").context("cannot open /dev/null")?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let prog = filter();
    let mut a = ChildArgs {
        path: path.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        stdin: null.as_raw_fd(),
        stdout: out_w.as_raw_fd(),
        stderr: err_w.as_raw_fd(),
        filter: sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut sock_filter,
        },
        errno: 0,
        traceme_failed: false,
    };
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down from its 16-byte aligned end.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;
    // No handler may run in the child before it resets them: all signals blocked around
    // the clone (the child inherits the mask), the caller's mask back after.
    // SAFETY: sigset operations on local sets.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid set pointers.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: the child runs `child` on its own stack with `a`, both alive until the clone
    // returns (CLONE_VFORK: after the child's exec or exit).
    let pid = unsafe {
        libc::clone(
            child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &mut a as *mut ChildArgs as *mut libc::c_void,
        )
    };
    let clone_err = io::Error::last_os_error();
    // SAFETY: restores the caller's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    drop(stack);
    if pid < 0 {
        return Err(clone_err).with_context(|| format!("cannot start {}", program.display()));
    }
    // SAFETY: `a` was written by the child, which is gone or exec'd.
    let errno = unsafe { std::ptr::read_volatile(&a.errno) };
    if errno != 0 {
        // The child failed before its exec and exits with 127: reap it.
        let mut st = 0;
        // SAFETY: waitpid on our own child.
        unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
        let e = io::Error::from_raw_os_error(errno);
        if a.traceme_failed || errno == libc::EPERM {
            bail!(
                "cannot trace {}: ptrace is not permitted here ({}; see \
                 /proc/sys/kernel/yama/ptrace_scope, or a container without CAP_SYS_PTRACE)",
                program.display(),
                e
            );
        }
        return Err(anyhow::Error::new(e).context(format!("cannot start {}", program.display())));
    }
    Ok(Started {
        pid,
        stdout: out_r,
        stderr: err_r,
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

/// Write `buf` at `addr` of process `pid` (writable memory only).
pub fn write_mem(pid: pid_t, addr: u64, buf: &[u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one local iovec over buf (only read); the kernel checks the remote range.
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
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

/// One run's output pipes, for the calling thread's output reader ([`tails`]).
struct Job {
    fds: [OwnedFd; 2],
    reply: crossbeam_channel::Sender<[Vec<u8>; 2]>,
    /// Set when the run stops waiting for the tails (a pipe still open after the program
    /// is gone: something else holds it): the reader drops the job and takes the next.
    give_up: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// How often a reader with a job whose pipes stay open looks whether it was given up.
const GIVE_UP_POLL_MS: c_int = 20;

/// Read both pipes of `job` until EOF (or until it is given up), keeping the last
/// [`crate::exec::pump::CAPTURE_BYTES`] of each, and send the tails.
fn read_job(job: Job, chunk: &mut [u8]) {
    let cap = crate::exec::pump::CAPTURE_BYTES;
    let mut kept = [Vec::new(), Vec::new()];
    let mut open = [true, true];
    while open.iter().any(|&o| o) {
        let mut pfds: Vec<libc::pollfd> = (0..2)
            .filter(|&i| open[i])
            .map(|i| libc::pollfd {
                fd: job.fds[i].as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: a valid array of pollfds.
        let r = unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                GIVE_UP_POLL_MS,
            )
        };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
        if r <= 0 {
            if job.give_up.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            continue;
        }
        for p in pfds.iter().filter(|p| p.revents != 0) {
            let i = usize::from(p.fd != job.fds[0].as_raw_fd());
            // SAFETY: reads into chunk, within its length.
            let n = unsafe { libc::read(p.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if n > 0 {
                let k = &mut kept[i];
                k.extend_from_slice(&chunk[..n as usize]);
                if k.len() > 2 * cap {
                    k.drain(..k.len() - cap);
                }
            } else if n == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                open[i] = false;
            }
        }
    }
    for k in &mut kept {
        if k.len() > cap {
            k.drain(..k.len() - cap);
        }
    }
    let _ = job.reply.send(kept);
}

thread_local! {
    /// The calling thread's output reader: one thread that reads the output pipes of each
    /// of the runs this thread traces, in turn (started at the first; it ends when this
    /// thread does).
    static READER: std::cell::RefCell<Option<crossbeam_channel::Sender<Job>>> =
        const { std::cell::RefCell::new(None) };
}

/// The tails of a run's stdout and stderr, on their way from the output reader.
pub struct Tails {
    rx: crossbeam_channel::Receiver<[Vec<u8>; 2]>,
    give_up: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Tails {
    /// The tails of stdout and stderr once both pipes are closed, waiting at most `grace`
    /// (then both empty).
    pub fn join(self, grace: std::time::Duration) -> [Vec<u8>; 2] {
        match self.rx.recv_timeout(grace) {
            Ok(t) => t,
            Err(_) => {
                self.give_up
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                [Vec::new(), Vec::new()]
            }
        }
    }
}

/// Hand `stdout` and `stderr` to the calling thread's output reader: it reads them until
/// EOF, keeping the last [`crate::exec::pump::CAPTURE_BYTES`] of each (a program never blocks on a
/// full pipe), while the run goes on.
pub fn tails(stdout: OwnedFd, stderr: OwnedFd) -> Result<Tails> {
    let (reply, rx) = crossbeam_channel::bounded(1);
    let give_up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut job = Job {
        fds: [stdout, stderr],
        reply,
        give_up: give_up.clone(),
    };
    READER.with(|r| -> Result<()> {
        let mut r = r.borrow_mut();
        if let Some(tx) = r.as_ref() {
            match tx.send(job) {
                Ok(()) => return Ok(()),
                // The reader is gone (it cannot end while we hold its sender, unless it
                // panicked): start another.
                Err(crossbeam_channel::SendError(j)) => job = j,
            }
        }
        let (tx, jobs) = crossbeam_channel::unbounded::<Job>();
        std::thread::Builder::new()
            .name("poscheck-out".into())
            .spawn(move || {
                let mut chunk = vec![0u8; 64 * 1024];
                while let Ok(job) = jobs.recv() {
                    read_job(job, &mut chunk);
                }
            })
            .context("cannot start an output reader thread")?;
        tx.send(job)
            .map_err(|_| anyhow::anyhow!("the output reader thread ended at its start"))?;
        *r = Some(tx);
        Ok(())
    })?;
    Ok(Tails { rx, give_up })
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

/// The words at `addrs` of process `pid`, in one `process_vm_readv`.
pub fn read_words(pid: pid_t, addrs: &[u64]) -> io::Result<Vec<u64>> {
    let mut words = vec![0u64; addrs.len()];
    if addrs.is_empty() {
        return Ok(words);
    }
    let local = libc::iovec {
        iov_base: words.as_mut_ptr().cast(),
        iov_len: words.len() * 8,
    };
    let remote: Vec<libc::iovec> = addrs
        .iter()
        .map(|&a| libc::iovec {
            iov_base: a as *mut libc::c_void,
            iov_len: 8,
        })
        .collect();
    // SAFETY: one local iovec over `words`; the kernel checks the remote ranges.
    let n =
        unsafe { libc::process_vm_readv(pid, &local, 1, remote.as_ptr(), remote.len() as u64, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != words.len() * 8 {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(words)
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

/// The signal that ends a blocking wait at its deadline ([`wait_for`]): a real-time signal
/// nothing else in poscheck uses, caught by a handler that does nothing and installed
/// without `SA_RESTART`, so that the interrupted `waitpid` returns `EINTR`.
fn deadline_signal() -> c_int {
    libc::SIGRTMIN() + 2
}

extern "C" fn on_deadline(_: c_int) {}

/// Install the handler of [`deadline_signal`] (once per process).
fn install_deadline_handler() -> io::Result<()> {
    static DONE: std::sync::OnceLock<Result<(), i32>> = std::sync::OnceLock::new();
    let r = DONE.get_or_init(|| {
        // SAFETY: a sigaction with a handler that does nothing (async-signal-safe).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_deadline as extern "C" fn(c_int) as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(deadline_signal(), &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        Ok(())
    });
    r.map_err(io::Error::from_raw_os_error)
}

/// A POSIX timer that sends [`deadline_signal`] to the thread that made it.
struct DeadlineTimer(libc::timer_t);

impl DeadlineTimer {
    fn new() -> io::Result<Self> {
        install_deadline_handler()?;
        // SAFETY: all-zero is a valid sigevent; the fields set are the ones
        // SIGEV_THREAD_ID reads.
        let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
        ev.sigev_notify = libc::SIGEV_THREAD_ID;
        ev.sigev_signo = deadline_signal();
        // SAFETY: gettid has no preconditions.
        ev.sigev_notify_thread_id = unsafe { libc::gettid() };
        let mut id: libc::timer_t = std::ptr::null_mut();
        // SAFETY: valid sigevent and out-pointer.
        if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut ev, &mut id) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(DeadlineTimer(id))
    }

    /// Fire in `after` (then every millisecond: a firing that lands just before the wait
    /// blocks is not lost), or never with `None`.
    fn arm(&self, after: Option<std::time::Duration>) -> io::Result<()> {
        let ts = |d: std::time::Duration| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        let zero = std::time::Duration::ZERO;
        let spec = libc::itimerspec {
            // A zero it_value disarms: the shortest real delay is 1 ns.
            it_value: ts(after.map_or(zero, |a| a.max(std::time::Duration::from_nanos(1)))),
            it_interval: ts(after.map_or(zero, |_| std::time::Duration::from_millis(1))),
        };
        // SAFETY: a timer of ours and a valid itimerspec.
        if unsafe { libc::timer_settime(self.0, 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for DeadlineTimer {
    fn drop(&mut self) {
        // SAFETY: a timer of ours, deleted once.
        unsafe { libc::timer_delete(self.0) };
    }
}

thread_local! {
    /// The calling thread's [`DeadlineTimer`] (made at its first blocking wait).
    static TIMER: std::cell::OnceCell<io::Result<DeadlineTimer>> = const { std::cell::OnceCell::new() };
}

/// `waitpid(pid, flags)` for at most `timeout`: the pid and status of a change, `None` when
/// there is none by then, the error otherwise (`ECHILD`: nothing to wait for). Polls with
/// `WNOHANG`, yielding the CPU in between, for up to `spin` (a resumed tracee usually stops
/// again within microseconds), then blocks in the kernel until the change or the deadline:
/// a per-thread timer ([`DeadlineTimer`]) interrupts the wait then.
pub fn wait_for(
    pid: pid_t,
    flags: c_int,
    spin: std::time::Duration,
    timeout: std::time::Duration,
) -> io::Result<Option<(pid_t, c_int)>> {
    let start = std::time::Instant::now();
    loop {
        if let Some(got) = wait_nohang(pid, flags)? {
            return Ok(Some(got));
        }
        let spent = start.elapsed();
        if spent >= timeout {
            return Ok(None);
        }
        if spent >= spin {
            break;
        }
        std::thread::yield_now();
    }
    TIMER.with(|t| {
        let timer = t
            .get_or_init(DeadlineTimer::new)
            .as_ref()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot make a wait timer: {e}")))?;
        timer.arm(Some(timeout.saturating_sub(start.elapsed())))?;
        let got = loop {
            let mut st: c_int = 0;
            // SAFETY: waitpid with a valid status pointer.
            let r = unsafe { libc::waitpid(pid, &mut st, flags) };
            if r > 0 {
                break Ok(Some((r, st)));
            }
            let e = io::Error::last_os_error();
            if r == 0 || e.raw_os_error() != Some(libc::EINTR) {
                break if r == 0 { Ok(None) } else { Err(e) };
            }
            if start.elapsed() >= timeout {
                break Ok(None);
            }
        };
        timer.arm(None)?;
        got
    })
}
