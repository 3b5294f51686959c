//! The ptrace backend: one controlled run of a program without LD_PRELOAD (statically
//! linked programs, or any program with `--backend ptrace`).
//!
//! The program is started traced by the calling thread (`PTRACE_TRACEME`) with a seccomp
//! filter that stops it only at the system calls that are scheduling points
//! ([`sys::TRACED`]); every other call runs at full speed. The decision loop runs on the
//! tracer thread (ptrace requests must come from it) over the same
//! [`pos_sched::Coordinator`] as the preload backend, and the stops become the same
//! [`Op`]s libpos posts:
//!
//! | system call | operation |
//! |---|---|
//! | `clone`/`clone3` of a thread | `Create`; the new thread is kept stopped until its `Start` is granted |
//! | `exit` | `FutexWake` of its `CLONE_CHILD_CLEARTID` word (the kernel's wake at a thread's end: glibc's `pthread_join`, musl's thread-list lock), then `Exit`; the next decision waits until the kernel shows the thread gone |
//! | `exit_group` | `ProcessExit { code }` |
//! | `futex` `WAIT`/`WAIT_BITSET` | `FutexWait` (EAGAIN at once, no point, when the word differs) |
//! | `futex` `WAKE`/`WAKE_BITSET` | `FutexWake` |
//! | `futex` `REQUEUE`/`CMP_REQUEUE` | `FutexRequeue` then `FutexRequeued` |
//! | `sched_yield` | `Yield` |
//! | `nanosleep`/`clock_nanosleep` | `SleepUntil` in virtual time (`Sleep` and a real sleep with `--real-sleep`) |
//!
//! The futex is emulated entirely: no program thread ever waits in the kernel's futex, the
//! system call is skipped (its number set to -1) and its result put in `rax`. Other futex
//! operations (PI, `WAKE_OP`, `futex_waitv`), forks, `exec` and `ptrace` by the program end
//! the run with an `error` outcome that says so. Signals sent with `kill`/`tgkill`/`tkill`,
//! and `wait4`/`waitid`, are not scheduling points: they stop only so that a death by
//! signal is blamed on the right thread.
//!
//! An uncontended mutex, condvar or semaphore makes no system call. Breakpoints at the
//! entries of the synchronisation functions ([`CALL_POINTS`]: in a statically linked
//! program with a symbol table, or in a dynamically linked one's C library) make those
//! calls points too (a `Write` of the object, no state change); otherwise (a stripped static
//! program, `--syscall-points-only`) a program is scheduled at the granularity of its
//! contended operations, yields, sleeps, thread creations and exits (see the README).

mod emulate;
pub mod sys;

use crate::exec::cleanup;
use crate::exec::elf::{self, Mapping};
use crate::exec::process::Exit;
use crate::exec::session::{RunConfig, RunResult};
use crate::exec::silence::{set_aside, Silence};
use crate::suite::outcome::Outcome;
use anyhow::{bail, Result};
use libc::{c_int, pid_t, user_regs_struct};
use pos_sched::coordinator::{Coordinator, Decision};
use pos_sched::event::{Event, Op, Tid};
use pos_sched::silent::{self, Silent};
use pos_sched::state::Status;
use pos_sched::{Strategy, NO_DEADLINE};
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::time::{Duration, Instant};

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_REQUEUE: u64 = 3;
const FUTEX_CMP_REQUEUE: u64 = 4;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
const FUTEX_PRIVATE_FLAG: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;
const MATCH_ANY: u32 = u32::MAX;
/// The breakpoint instruction.
const INT3: u8 = 0xcc;
const CLONE_THREAD: u64 = libc::CLONE_THREAD as u64;
const CLONE_CHILD_CLEARTID: u64 = libc::CLONE_CHILD_CLEARTID as u64;

/// Absolute deadlines of timed waits are on the program's real clock (its clock reads go
/// through the vDSO, out of reach): what is left of them is rounded up to this, so that a
/// deadline "now + 1 s" is the same virtual deadline in every run.
const DEADLINE_GRAIN: u64 = 10_000_000;
/// At most how long to wait for a thread whose `exit` was granted to be gone.
const EXIT_WAIT: Duration = Duration::from_millis(500);
/// How long to wait for the output pipes to close after the program is gone.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// The synchronisation functions of a statically linked program that get a breakpoint: an
/// uncontended call makes no system call, so without it a thread would run through all of
/// them between two system calls. glibc's and musl's names (aliases share an address).
const CALL_POINTS: &[&str] = &[
    "pthread_mutex_lock",
    "pthread_mutex_trylock",
    "pthread_mutex_timedlock",
    "pthread_mutex_clocklock",
    "pthread_mutex_unlock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_trywrlock",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock",
    "pthread_rwlock_unlock",
    "pthread_spin_lock",
    "pthread_spin_trylock",
    "pthread_spin_unlock",
    "pthread_cond_signal",
    "pthread_cond_broadcast",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "sem_wait",
    "sem_trywait",
    "sem_timedwait",
    "sem_post",
    "mtx_lock",
    "mtx_trylock",
    "mtx_timedlock",
    "mtx_unlock",
];

/// [`CALL_POINTS`]' addresses: in `cfg.program` when it is statically linked, else in the C
/// library `maps` show loaded (`libc.so.*`, `libpthread.so.*`), read once per program and
/// placement.
fn call_points(cfg: &RunConfig, maps: &[Mapping]) -> Vec<u64> {
    type Cache = std::sync::Mutex<HashMap<(std::path::PathBuf, u64), Vec<u64>>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let base = maps.first().map_or(0, |m| m.start);
    let key = (cfg.program.clone(), base);
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return v;
    }
    let v = match elf::check(&cfg.program) {
        Ok(info) if info.is_static => elf::function_addresses(&cfg.program, CALL_POINTS, maps),
        Ok(_) => {
            let mut libs: Vec<&str> = maps
                .iter()
                .map(|m| m.path.as_str())
                .filter(|p| {
                    let name = p.rsplit('/').next().unwrap_or_default();
                    name.starts_with("libc.so") || name.starts_with("libpthread.so")
                })
                .collect();
            libs.dedup();
            let mut v: Vec<u64> = libs
                .iter()
                .flat_map(|l| elf::function_addresses(std::path::Path::new(l), CALL_POINTS, maps))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        Err(_) => Vec::new(),
    };
    if let Ok(mut c) = cache.lock() {
        c.insert(key, v.clone());
    }
    v
}

/// Whether `program` is statically linked ([`elf::check`]: the whole file read and its
/// symbols parsed), remembered per file: asked at the start of every run.
fn is_static(program: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    type Key = (std::path::PathBuf, u64, u64, u64, i64, i64);
    static CACHE: std::sync::OnceLock<std::sync::Mutex<HashMap<Key, bool>>> =
        std::sync::OnceLock::new();
    // The same path rebuilt is another file: its identity is in the key.
    let key = std::fs::metadata(program).ok().map(|m| {
        (
            program.to_path_buf(),
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
        )
    });
    let cache = CACHE.get_or_init(Default::default);
    if let Some(known) = key
        .as_ref()
        .and_then(|k| cache.lock().ok().and_then(|c| c.get(k).copied()))
    {
        return known;
    }
    let known = elf::check(program).is_ok_and(|i| i.is_static);
    if let (Some(k), Ok(mut c)) = (key, cache.lock()) {
        c.insert(k, known);
    }
    known
}

/// How long to poll (yielding) for the stop after a single step before blocking.
const SINGLE_STEP_SPIN: Duration = Duration::from_micros(50);
/// At most how long to wait for the killed program's tracees to be reaped.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// Run `cfg.program` once under the ptrace backend (see the module doc): the same
/// [`RunResult`] as [`crate::exec::session::run_once`].
pub fn run_once(cfg: &RunConfig, strategy: &mut dyn Strategy, seed: u64) -> Result<RunResult> {
    if cfg.points.as_deref().is_some_and(|p| p != "sync") {
        bail!(
            "--points {}: the ptrace backend schedules system calls only (--points sync)",
            cfg.points.as_deref().unwrap_or_default()
        );
    }
    // Deadlines of waits are short: no timer slack on the tracer thread.
    // SAFETY: affects this thread's timers only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1) };
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (var, value) in [("OMP_WAIT_POLICY", "passive"), ("GOMP_SPINCOUNT", "0")] {
        if std::env::var_os(var).is_none() {
            env.push((var.into(), value.into()));
        }
    }
    let started = sys::spawn(&cfg.program, &cfg.args, &env)?;
    let pid = started.pid;
    let _group_guard = cleanup::Guard::group(pid as u32);
    let mut tr = Tracer::new(cfg, pid);
    let tails = match sys::tails(started.stdout, started.stderr) {
        Ok(t) => t,
        Err(e) => {
            tr.kill_and_reap();
            return Err(e);
        }
    };
    let mut coord = Coordinator::new(strategy, seed, cfg.max_steps);
    if cfg.timeouts_any {
        coord
            .state_mut()
            .set_timeout_policy(pos_sched::state::clock::TimeoutPolicy::Any);
    }
    let outcome = match tr.start() {
        Ok(()) if cleanup::interrupted() => Some(Outcome::Error {
            reason: "interrupted".into(),
        }),
        Ok(()) => tr.drive(&mut coord),
        Err(reason) => Some(Outcome::Error { reason }),
    };
    tr.kill_and_reap();
    let [stdout, stderr] = tails.join(DRAIN_GRACE);
    let outcome = match outcome {
        Some(o) => o,
        None => tr.classify_exit(&coord, &stderr),
    };
    let outcome = crate::suite::outcome::refine(outcome, &stderr);
    let steps = coord.steps();
    let schedule = coord.finish();
    Ok(RunResult {
        outcome,
        schedule,
        steps,
        stdout,
        stderr,
        latencies_ns: tr.latencies,
        trace: tr.trace,
        step_pcs: Vec::new(),
        maps: tr.maps,
        outside: tr.outside_episodes,
    })
}

/// What a stopped thread does once its posted operation is granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnGrant {
    /// Skip the system call and return the grant's result: `Errno` maps 0 to 0 and a code
    /// to `-code`; `Count` returns the result as is (woken waiters).
    SkipErrno,
    SkipCount,
    /// Skip and return 0 (yield, sleep).
    SkipZero,
    /// Let the system call run (clone, exit_group, a real sleep).
    Run,
    /// Let `exit` run and wait for the thread to be gone.
    Exit,
    /// The wake of the thread's exit word that the kernel does when it ends: let `exit` run,
    /// wait for the thread to be gone (the kernel has then cleared the word), then post its
    /// `Exit` on its behalf.
    ExitWake,
    /// The `Exit` of a thread already gone: nothing to do.
    Gone,
    /// A breakpoint at a synchronisation function: execute its first instruction (the
    /// original byte put back for one step), put the breakpoint back, go on.
    StepOver(u64),
    /// First half of a requeue: compare the word (with `Some(val3)`), then post the second.
    Requeue {
        addr: u64,
        addr2: u64,
        n1: u32,
        n2: u32,
        cmp: Option<u32>,
    },
}

/// Where a program thread is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Resumed: it will stop at its next traced call (or is blocked outside control).
    Running,
    /// A new thread whose initial stop has not been seen yet.
    Unstarted,
    /// Stopped with a posted operation.
    Posted(OnGrant),
}

/// A breakpoint at one of [`CALL_POINTS`]: the words written over its address to arm it and
/// to disarm it (the 8 bytes from the address, with the `int3`s of every breakpoint in
/// them, or with the original byte back at this one), so that each is one `POKEDATA`.
#[derive(Clone, Copy)]
struct Breakpoint {
    armed: u64,
    disarmed: u64,
    /// The 8 bytes from the address as the program has them (its first instruction).
    orig: u64,
}

struct Th {
    tid: Tid,
    at: At,
    /// The registers at the current stop.
    regs: user_regs_struct,
    /// After a granted `Create`: the model's id for the thread the clone makes, and its
    /// `CLONE_CHILD_CLEARTID` word.
    expect: Option<(Tid, u64)>,
    /// The exit word of the clone this thread posted.
    clone_word: u64,
}

/// What a stop leads to.
enum Step {
    /// Nothing to decide.
    Nothing,
    /// An operation was posted: decide.
    Posted,
    /// The run's verdict.
    Verdict(Outcome),
}

struct Tracer<'c> {
    cfg: &'c RunConfig,
    pid: pid_t,
    threads: HashMap<pid_t, Th>,
    tid_ktid: Vec<Option<pid_t>>,
    /// New threads seen stopped before their creator's clone event.
    early: HashSet<pid_t>,
    /// The `CLONE_CHILD_CLEARTID` word of each thread (what the kernel clears and wakes when
    /// it ends: glibc's `pthread_join` waits on it, musl's thread-list lock is one).
    exit_words: HashMap<Tid, u64>,
    exit: Option<Exit>,
    /// The main process was reaped (its pid may be reused: no group kill after).
    reaped: bool,
    exiting: bool,
    last_granted: Option<Tid>,
    /// The latest delivery of a signal: (signal, pc, thread).
    crash: Option<(i32, u64, Tid)>,
    /// The latest thread to send a signal with kill/tgkill/tkill.
    sender: Option<Tid>,
    maps: Vec<Mapping>,
    /// Breakpoints at [`CALL_POINTS`], by address.
    breakpoints: HashMap<u64, Breakpoint>,
    /// A dynamically linked program: the breakpoints go into its C library at the first
    /// stop (the loader has mapped it by then).
    lazy_points: bool,
    granted_at: Vec<Option<Instant>>,
    latencies: Vec<u64>,
    trace: Vec<(Event, u64)>,
    silence: Silence,
    outside_episodes: u64,
}

/// `-errno` as a register value.
fn neg(e: i32) -> u64 {
    (-(e as i64)) as u64
}

impl<'c> Tracer<'c> {
    fn new(cfg: &'c RunConfig, pid: pid_t) -> Self {
        Tracer {
            cfg,
            pid,
            threads: HashMap::new(),
            tid_ktid: Vec::new(),
            early: HashSet::new(),
            exit_words: HashMap::new(),
            exit: None,
            reaped: false,
            exiting: false,
            last_granted: None,
            crash: None,
            sender: None,
            maps: Vec::new(),
            breakpoints: HashMap::new(),
            lazy_points: false,
            granted_at: Vec::new(),
            latencies: Vec::new(),
            trace: Vec::new(),
            silence: Silence::new(),
            outside_episodes: 0,
        }
    }

    /// Wait for the stop after the program's exec, set the options and let it run.
    fn start(&mut self) -> Result<(), String> {
        let limit = self.cfg.step_timeout.max(Duration::from_secs(5));
        let st = match sys::wait_for(self.pid, libc::__WALL, Duration::ZERO, limit) {
            Ok(Some((_, st))) => st,
            Ok(None) => return Err("the traced program did not stop after its exec".into()),
            Err(e) => return Err(format!("cannot wait for the traced program: {e}")),
        };
        if !libc::WIFSTOPPED(st) || libc::WSTOPSIG(st) != libc::SIGTRAP {
            if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
                self.reaped = true;
            }
            return Err(format!(
                "the traced program did not stop after its exec (wait status {st:#x})"
            ));
        }
        sys::set_options(self.pid).map_err(|e| format!("PTRACE_SETOPTIONS: {e}"))?;
        self.threads.insert(
            self.pid,
            Th {
                tid: 0,
                at: At::Running,
                // SAFETY: all-zero is a valid user_regs_struct.
                regs: unsafe { std::mem::zeroed() },
                expect: None,
                clone_word: 0,
            },
        );
        self.tid_ktid.push(Some(self.pid));
        let is_static = is_static(&self.cfg.program);
        self.read_maps(is_static);
        if self.cfg.call_points && is_static {
            self.set_breakpoints(self.pid)?;
        }
        self.lazy_points = self.cfg.call_points && !is_static;
        sys::cont(self.pid, 0).map_err(|e| format!("PTRACE_CONT: {e}"))?;
        Ok(())
    }

    /// Breakpoints at [`CALL_POINTS`], through stopped thread `k`: the original words read
    /// in one `process_vm_readv` (one `PEEKDATA` each if that fails), then one `POKEDATA`
    /// each.
    fn set_breakpoints(&mut self, k: pid_t) -> Result<(), String> {
        let addrs = call_points(self.cfg, &self.maps);
        let orig = match sys::read_words(self.pid, &addrs) {
            Ok(w) => w,
            Err(_) => addrs
                .iter()
                .map(|&a| sys::peek(k, a))
                .collect::<std::io::Result<Vec<u64>>>()
                .map_err(|e| format!("cannot set a breakpoint: {e}"))?,
        };
        for (&addr, &word) in addrs.iter().zip(&orig) {
            // The int3 of every breakpoint within the word, this one's included.
            let mut armed = word.to_le_bytes();
            for (i, b) in armed.iter_mut().enumerate() {
                if addrs.contains(&(addr + i as u64)) {
                    *b = INT3;
                }
            }
            let armed = u64::from_le_bytes(armed);
            let disarmed = (armed & !0xff) | (word & 0xff);
            self.breakpoints.insert(
                addr,
                Breakpoint {
                    armed,
                    disarmed,
                    orig: word,
                },
            );
        }
        for &addr in &addrs {
            let armed = self.breakpoints[&addr].armed;
            sys::poke(k, addr, armed)
                .map_err(|e| format!("cannot set a breakpoint at {addr:#x}: {e}"))?;
        }
        Ok(())
    }

    /// The program's mappings (`cache`: shared with the later runs of the program; a
    /// dynamically linked program's are read again once its libraries are mapped).
    fn read_maps(&mut self, cache: bool) {
        let fresh = || {
            std::fs::read_to_string(format!("/proc/{}/maps", self.pid))
                .map(|text| elf::parse_maps(&text))
                .unwrap_or_default()
        };
        if !cache {
            self.maps = fresh();
            return;
        }
        self.maps = match self.cfg.maps.get() {
            Some(m) if !m.is_empty() => m.clone(),
            _ => {
                let m = std::fs::read_to_string(format!("/proc/{}/maps", self.pid))
                    .map(|text| elf::parse_maps(&text))
                    .unwrap_or_default();
                let _ = self.cfg.maps.set(m.clone());
                m
            }
        };
    }

    /// Run until a verdict (`Some`) or the program's end (`None`: classify its status).
    fn drive(&mut self, coord: &mut Coordinator<'_>) -> Option<Outcome> {
        self.silence.heard();
        loop {
            if cleanup::interrupted() {
                return Some(Outcome::Error {
                    reason: "interrupted".into(),
                });
            }
            let left = self
                .cfg
                .step_timeout
                .saturating_sub(self.silence.quiet_for());
            let probe = self.probe_in(coord);
            let wait = probe.map_or(left, |p| p.min(left));
            let tick = self.silence.tick_in(coord.waits_outside());
            let wait = tick.map_or(wait, |t| t.min(wait));
            let got = match self.next_stop(wait) {
                Ok(g) => g,
                Err(reason) => return Some(Outcome::Error { reason }),
            };
            let Some((k, st)) = got else {
                if self.silence.quiet_for() >= self.cfg.step_timeout {
                    // A tick of virtual time that is due may end a wait: progress.
                    let (after, step) = (self.cfg.blocked_after, self.cfg.step_timeout);
                    if self.silence.tick(coord, after, step) {
                        self.silence.heard();
                        if let Some(o) = self.decide(coord) {
                            return Some(o);
                        }
                        continue;
                    }
                    let paths = self.silent_stats(coord);
                    let (limit, step) = (self.cfg.compute_timeout, self.cfg.step_timeout);
                    if let Some(computing) = self.silence.hang(&paths, limit, step) {
                        return Some(self.hang(coord, computing));
                    }
                    continue;
                }
                if self.probe_in(coord) == Some(Duration::ZERO) && self.set_aside(coord) {
                    if let Some(o) = self.decide(coord) {
                        return Some(o);
                    }
                }
                let (after, step) = (self.cfg.blocked_after, self.cfg.step_timeout);
                if self.silence.tick(coord, after, step) {
                    if let Some(o) = self.decide(coord) {
                        return Some(o);
                    }
                }
                continue;
            };
            self.silence.heard();
            match self.on_status(coord, k, st) {
                Ok(Step::Nothing) => {}
                Ok(Step::Posted) => {
                    if let Some(o) = self.decide(coord) {
                        return Some(o);
                    }
                }
                Ok(Step::Verdict(o)) => return Some(o),
                Err(reason) => return Some(Outcome::Error { reason }),
            }
            if self.exit.is_some() {
                return None;
            }
        }
    }

    /// The next wait status of a tracee (or of the program), waiting at most `timeout`:
    /// polls, yielding, for the spin time (a granted thread usually stops again within
    /// microseconds), then blocks until the stop or the deadline ([`sys::wait_for`]).
    fn next_stop(&mut self, timeout: Duration) -> Result<Option<(pid_t, c_int)>, String> {
        // __WNOTHREAD: only this thread's children and tracees (other workers run other
        // programs).
        sys::wait_for(-1, libc::__WALL | libc::__WNOTHREAD, self.cfg.spin, timeout)
            .map_err(|e| format!("waiting for the traced program: {e}"))
    }

    fn tid_of(&self, k: pid_t) -> Option<Tid> {
        self.threads.get(&k).map(|t| t.tid)
    }

    fn on_status(
        &mut self,
        coord: &mut Coordinator<'_>,
        k: pid_t,
        st: c_int,
    ) -> Result<Step, String> {
        if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) {
            let how = if libc::WIFEXITED(st) {
                Exit::Code(libc::WEXITSTATUS(st))
            } else {
                Exit::Signal(libc::WTERMSIG(st))
            };
            if k == self.pid {
                self.reaped = true;
                self.exit = Some(how);
                return Ok(Step::Nothing);
            }
            // A thread gone without its exit granted (those are reaped where granted): a
            // thread cannot die alone, so the process is ending (a fatal signal, an
            // `exit_group`); its status comes next. Deciding meanwhile would see the dead
            // thread's waiters stuck (a false deadlock).
            self.threads.remove(&k);
            return Ok(Step::Nothing);
        }
        if !libc::WIFSTOPPED(st) {
            return Ok(Step::Nothing);
        }
        let sig = libc::WSTOPSIG(st);
        let event = (st >> 16) & 0xff;
        if sig == libc::SIGTRAP && event != 0 {
            return match event {
                libc::PTRACE_EVENT_SECCOMP => self.syscall_stop(coord, k),
                libc::PTRACE_EVENT_CLONE => self.clone_event(coord, k),
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => Ok(Step::Verdict(forks())),
                libc::PTRACE_EVENT_EXEC => Ok(Step::Verdict(Outcome::Error {
                    reason: "unsupported by the ptrace backend: the program executes another \
                             program (exec)"
                        .into(),
                })),
                _ => self.resume(k, 0).map(|_| Step::Nothing),
            };
        }
        if sig == libc::SIGSTOP {
            match self.threads.get(&k).map(|t| t.at) {
                None => {
                    // A new thread stopped before its creator's clone event was seen.
                    self.early.insert(k);
                    return Ok(Step::Nothing);
                }
                Some(At::Unstarted) => return self.started(coord, k),
                Some(_) => {}
            }
        }
        if sig == libc::SIGTRAP && !self.breakpoints.is_empty() {
            let regs = sys::get_regs(k).map_err(|e| format!("PTRACE_GETREGS: {e}"))?;
            let at = regs.rip.wrapping_sub(1);
            if self.breakpoints.contains_key(&at) {
                return self.breakpoint(coord, k, regs, at);
            }
        }
        // A signal to deliver: remember who gets it and where (a death by it is blamed
        // there), then deliver it.
        if let Some(t) = self.tid_of(k) {
            let pc = sys::get_regs(k).map_or(0, |r| r.rip);
            self.crash = Some((sig, pc, t));
        }
        self.resume(k, sig).map(|_| Step::Nothing)
    }

    /// Thread `k` hit the breakpoint at `addr` (the entry of a synchronisation function): a
    /// scheduling point, posted as a write of the object its first argument points to (so
    /// that calls on one object conflict for the strategies and exploration). A thread that
    /// cannot post any more (its process's exit was granted) steps over at once.
    fn breakpoint(
        &mut self,
        coord: &mut Coordinator<'_>,
        k: pid_t,
        regs: user_regs_struct,
        addr: u64,
    ) -> Result<Step, String> {
        let Some(th) = self.threads.get_mut(&k) else {
            return self.step_over(k, addr).map(|_| Step::Nothing);
        };
        th.regs = regs;
        th.regs.rip = addr;
        let t = th.tid;
        let can_post = !coord.state().is_over()
            && matches!(coord.state().status(t), Status::Running | Status::Outside);
        if !can_post {
            return self.step_over(k, addr).map(|_| Step::Nothing);
        }
        let op = Op::Write {
            addr: regs.rdi,
            size: 1,
        };
        self.post(coord, k, op, OnGrant::StepOver(addr))
    }

    /// Execute the instruction at breakpoint `addr` of stopped thread `k` and let it go on.
    fn step_over(&mut self, k: pid_t, addr: u64) -> Result<(), String> {
        let Some(&bp) = self.breakpoints.get(&addr) else {
            return self.resume(k, 0);
        };
        // The registers of the stop (the thread has not run since), else read now.
        let regs = match self.threads.get(&k) {
            Some(th) => Ok(th.regs),
            None => sys::get_regs(k),
        };
        let mut regs = match regs {
            Ok(r) => r,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
            Err(e) => return Err(format!("PTRACE_GETREGS: {e}")),
        };
        regs.rip = addr;
        let fail = |e: std::io::Error| format!("stepping over the breakpoint at {addr:#x}: {e}");
        // A simple first instruction is carried out here ([`emulate`]): no single step.
        if let Some((after, effect)) = emulate::step(&regs, bp.orig) {
            let done = match effect {
                emulate::Effect::None => true,
                // A stack that cannot take it faults in the single step instead.
                emulate::Effect::Push(at, v) => {
                    sys::write_mem(self.pid, at, &v.to_le_bytes()).is_ok()
                }
            };
            if done {
                return match sys::set_regs(k, &after) {
                    Ok(()) => self.resume(k, 0),
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
                    Err(e) => Err(fail(e)),
                };
            }
        }
        match sys::set_regs(k, &regs) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
            Err(e) => return Err(fail(e)),
        }
        sys::poke(k, addr, bp.disarmed).map_err(fail)?;
        sys::single_step(k).map_err(fail)?;
        // One instruction: it stops at once unless the machine is busy; yield the CPU to it,
        // then block (a busy-wait starved it on a loaded machine).
        let limit = self.cfg.step_timeout.max(Duration::from_secs(2));
        let start = Instant::now();
        let mut pending = 0;
        loop {
            let left = limit.saturating_sub(start.elapsed());
            match sys::wait_for(k, libc::__WALL, SINGLE_STEP_SPIN, left) {
                Ok(Some((_, st))) if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) => {
                    // Gone (its process is ending): the breakpoint goes back through
                    // another thread, if any is left.
                    self.threads.remove(&k);
                    if let Some(&other) = self.threads.keys().next() {
                        let _ = sys::poke(other, addr, bp.armed);
                    }
                    return Ok(());
                }
                Ok(Some((_, st))) if libc::WIFSTOPPED(st) => {
                    let sig = libc::WSTOPSIG(st);
                    if sig != libc::SIGTRAP {
                        pending = sig;
                    }
                    break;
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(format!(
                        "stepping over the breakpoint at {addr:#x}: thread {k} did not stop"
                    ))
                }
                Err(_) => return Ok(()),
            }
        }
        sys::poke(k, addr, bp.armed).map_err(fail)?;
        if pending != 0 {
            if let Some(t) = self.tid_of(k) {
                let pc = sys::get_regs(k).map_or(0, |r| r.rip);
                self.crash = Some((pending, pc, t));
            }
        }
        self.resume(k, pending)
    }

    fn resume(&self, k: pid_t, sig: i32) -> Result<(), String> {
        match sys::cont(k, sig) {
            Ok(()) => Ok(()),
            // Killed meanwhile (the process is ending): its exit status tells.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
            Err(e) => Err(format!("PTRACE_CONT of thread {k}: {e}")),
        }
    }

    /// New thread `k` is at its initial stop: post its `Start`.
    fn started(&mut self, coord: &mut Coordinator<'_>, k: pid_t) -> Result<Step, String> {
        let th = self
            .threads
            .get_mut(&k)
            .ok_or("internal: unknown new thread")?;
        th.at = At::Posted(OnGrant::Run);
        coord.post(th.tid, Op::Start).map_err(|e| e.to_string())?;
        Ok(Step::Posted)
    }

    /// `PTRACE_EVENT_CLONE` of thread `k`: register the new thread under the id its granted
    /// `Create` got, and let the creator go on.
    fn clone_event(&mut self, coord: &mut Coordinator<'_>, k: pid_t) -> Result<Step, String> {
        let new = sys::event_msg(k).map_err(|e| format!("PTRACE_GETEVENTMSG: {e}"))? as pid_t;
        let expect = self.threads.get_mut(&k).and_then(|t| t.expect.take());
        let Some((tid, word)) = expect else {
            return Err(format!("thread {k} made a thread without a granted create"));
        };
        self.threads.insert(
            new,
            Th {
                tid,
                at: At::Unstarted,
                // SAFETY: all-zero is a valid user_regs_struct.
                regs: unsafe { std::mem::zeroed() },
                expect: None,
                clone_word: 0,
            },
        );
        if self.tid_ktid.len() <= tid as usize {
            self.tid_ktid.resize(tid as usize + 1, None);
        }
        self.tid_ktid[tid as usize] = Some(new);
        if word != 0 {
            self.exit_words.insert(tid, word);
        }
        self.resume(k, 0)?;
        if self.early.remove(&new) {
            return self.started(coord, new);
        }
        Ok(Step::Nothing)
    }

    /// Skip the system call thread `k` is stopped at, returning `ret`, and resume it.
    fn skip_now(&mut self, k: pid_t, ret: u64) -> Result<Step, String> {
        let th = self.threads.get_mut(&k).ok_or("internal: unknown thread")?;
        th.regs.orig_rax = u64::MAX;
        th.regs.rax = ret;
        th.at = At::Running;
        match sys::set_regs(k, &th.regs) {
            Ok(()) => self.resume(k, 0)?,
            // Killed meanwhile (the process is ending): its exit status tells.
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(format!("PTRACE_SETREGS: {e}")),
        }
        Ok(Step::Nothing)
    }

    /// Post `op` for stopped thread `k`.
    fn post(
        &mut self,
        coord: &mut Coordinator<'_>,
        k: pid_t,
        op: Op,
        then: OnGrant,
    ) -> Result<Step, String> {
        let th = self.threads.get_mut(&k).ok_or("internal: unknown thread")?;
        th.at = At::Posted(then);
        let t = th.tid;
        if let Some(at) = self.granted_at.get_mut(t as usize).and_then(Option::take) {
            self.latencies.push(at.elapsed().as_nanos() as u64);
        }
        coord.post(t, op).map_err(|e| e.to_string())?;
        Ok(Step::Posted)
    }

    /// A seccomp stop: thread `k` is at one of the traced system calls.
    fn syscall_stop(&mut self, coord: &mut Coordinator<'_>, k: pid_t) -> Result<Step, String> {
        let data = sys::event_msg(k).map_err(|e| format!("PTRACE_GETEVENTMSG: {e}"))?;
        if data == sys::FOREIGN_ABI {
            return Ok(Step::Verdict(Outcome::Error {
                reason: "unsupported by the ptrace backend: the program makes 32-bit \
                         (int 0x80) system calls"
                    .into(),
            }));
        }
        if std::mem::take(&mut self.lazy_points) {
            self.read_maps(false);
            self.set_breakpoints(k)?;
        }
        let regs = sys::get_regs(k).map_err(|e| format!("PTRACE_GETREGS: {e}"))?;
        let Some(th) = self.threads.get_mut(&k) else {
            return Err(format!("a system call of unknown thread {k}"));
        };
        th.regs = regs;
        th.at = At::Running;
        let tid = th.tid;
        if let Some((child, _)) = th.expect.take() {
            // The creator is back without a clone event: its clone failed.
            coord.state_mut().mark_finished(child);
        }
        let nr = regs.orig_rax as i64;
        let [a1, a2, a3, a4, a5, a6] = [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9];
        match nr {
            libc::SYS_clone | libc::SYS_clone3 => {
                let (flags, word) = if nr == libc::SYS_clone {
                    (a1, a4)
                } else {
                    let mut b = [0u8; 24];
                    if sys::read_mem(self.pid, a1, &mut b).is_err() {
                        return self.skip_now(k, neg(libc::EFAULT));
                    }
                    let f = u64::from_ne_bytes(b[..8].try_into().unwrap_or_default());
                    let w = u64::from_ne_bytes(b[16..24].try_into().unwrap_or_default());
                    (f, w)
                };
                if flags & CLONE_THREAD == 0 {
                    return Ok(Step::Verdict(forks()));
                }
                let word = if flags & CLONE_CHILD_CLEARTID != 0 {
                    word
                } else {
                    0
                };
                if let Some(th) = self.threads.get_mut(&k) {
                    th.clone_word = word;
                }
                self.post(coord, k, Op::Create, OnGrant::Run)
            }
            libc::SYS_fork | libc::SYS_vfork => Ok(Step::Verdict(forks())),
            libc::SYS_exit => match self.exit_words.get(&tid).copied() {
                // The kernel clears the word and wakes one waiter when the thread ends: a
                // wake in the model, then the exit.
                Some(addr) if k != self.pid => {
                    let op = Op::FutexWake {
                        addr,
                        n: 1,
                        bitset: MATCH_ANY,
                    };
                    self.post(coord, k, op, OnGrant::ExitWake)
                }
                _ => self.post(coord, k, Op::Exit, OnGrant::Exit),
            },
            libc::SYS_exit_group => {
                self.post(coord, k, Op::ProcessExit { code: a1 as i32 }, OnGrant::Run)
            }
            libc::SYS_sched_yield => self.post(coord, k, Op::Yield, OnGrant::SkipZero),
            libc::SYS_nanosleep => match sys::read_timespec(self.pid, a1) {
                Ok(ns) => self.sleep(coord, k, coord.state().now().saturating_add(ns)),
                Err(e) => self.skip_now(k, neg(e)),
            },
            libc::SYS_clock_nanosleep => {
                let clock = a1 as libc::clockid_t;
                let Some(now_real) = virtual_clock(clock).and_then(sys::clock_now) else {
                    // A CPU-time clock: not virtual; it runs as it is.
                    self.resume(k, 0)?;
                    return Ok(Step::Nothing);
                };
                match sys::read_timespec(self.pid, a3) {
                    Ok(t) => {
                        let now = coord.state().now();
                        let until = if a2 as c_int & libc::TIMER_ABSTIME != 0 {
                            now.saturating_add(left_of(t, now_real))
                        } else {
                            now.saturating_add(t)
                        };
                        self.sleep(coord, k, until)
                    }
                    Err(e) => self.skip_now(k, neg(e)),
                }
            }
            libc::SYS_futex => self.futex(coord, k, [a1, a2, a3, a4, a5, a6]),
            libc::SYS_futex_waitv => Ok(Step::Verdict(unsupported_futex("futex_waitv"))),
            libc::SYS_kill | libc::SYS_tgkill | libc::SYS_tkill => {
                self.sender = Some(tid);
                self.resume(k, 0)?;
                Ok(Step::Nothing)
            }
            libc::SYS_wait4 | libc::SYS_waitid => {
                self.resume(k, 0)?;
                Ok(Step::Nothing)
            }
            libc::SYS_ptrace => Ok(Step::Verdict(Outcome::Error {
                reason: "unsupported by the ptrace backend: the program calls ptrace(2) (a \
                         process has one tracer, and poscheck is it); a dynamically linked build runs with --backend preload"
                    .into(),
            })),
            other => Err(format!("internal: unexpected traced system call {other}")),
        }
    }

    /// A sleep until virtual time `until` (with `--real-sleep`: a yield point, then the real
    /// sleep).
    fn sleep(&mut self, coord: &mut Coordinator<'_>, k: pid_t, until: u64) -> Result<Step, String> {
        if self.cfg.real_sleep {
            self.post(coord, k, Op::Sleep, OnGrant::Run)
        } else {
            self.post(
                coord,
                k,
                Op::SleepUntil { deadline: until },
                OnGrant::SkipZero,
            )
        }
    }

    /// The futex system call of thread `k` (see the module doc).
    fn futex(
        &mut self,
        coord: &mut Coordinator<'_>,
        k: pid_t,
        [uaddr, op, val, timeout, uaddr2, val3]: [u64; 6],
    ) -> Result<Step, String> {
        let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
        let val3 = val3 as u32;
        match cmd {
            FUTEX_WAIT | FUTEX_WAIT_BITSET => {
                let bitset = if cmd == FUTEX_WAIT { MATCH_ANY } else { val3 };
                if bitset == 0 || uaddr == 0 || uaddr % 4 != 0 {
                    return self.skip_now(k, neg(libc::EINVAL));
                }
                let word = match sys::read_u32(self.pid, uaddr) {
                    Ok(w) => w,
                    Err(_) => return self.skip_now(k, neg(libc::EFAULT)),
                };
                if word != val as u32 {
                    return self.skip_now(k, neg(libc::EAGAIN));
                }
                let now = coord.state().now();
                let deadline = if timeout == 0 {
                    NO_DEADLINE
                } else {
                    let t = match sys::read_timespec(self.pid, timeout) {
                        Ok(t) => t,
                        Err(e) => return self.skip_now(k, neg(e)),
                    };
                    if cmd == FUTEX_WAIT {
                        now.saturating_add(t)
                    } else {
                        let clock = if op & FUTEX_CLOCK_REALTIME != 0 {
                            libc::CLOCK_REALTIME
                        } else {
                            libc::CLOCK_MONOTONIC
                        };
                        let real = sys::clock_now(clock).unwrap_or(0);
                        now.saturating_add(left_of(t, real))
                    }
                };
                let op = Op::FutexWait {
                    addr: uaddr,
                    bitset,
                    deadline,
                };
                self.post(coord, k, op, OnGrant::SkipErrno)
            }
            FUTEX_WAKE | FUTEX_WAKE_BITSET => {
                let bitset = if cmd == FUTEX_WAKE { MATCH_ANY } else { val3 };
                if bitset == 0 {
                    return self.skip_now(k, neg(libc::EINVAL));
                }
                let n = (val as i32).max(0) as u32;
                let op = Op::FutexWake {
                    addr: uaddr,
                    n,
                    bitset,
                };
                self.post(coord, k, op, OnGrant::SkipCount)
            }
            FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
                let (n1, n2) = (val as i32, timeout as i32);
                if uaddr == 0
                    || uaddr % 4 != 0
                    || uaddr2 == 0
                    || uaddr2 % 4 != 0
                    || n1 < 0
                    || n2 < 0
                {
                    return self.skip_now(k, neg(libc::EINVAL));
                }
                let (n1, n2) = (n1 as u32, n2 as u32);
                let op = Op::FutexRequeue {
                    addr: uaddr,
                    addr2: uaddr2,
                    n1,
                    n2,
                };
                let then = OnGrant::Requeue {
                    addr: uaddr,
                    addr2: uaddr2,
                    n1,
                    n2,
                    cmp: (cmd == FUTEX_CMP_REQUEUE).then_some(val3),
                };
                self.post(coord, k, op, then)
            }
            other => Ok(Step::Verdict(unsupported_futex(&futex_name(other)))),
        }
    }

    /// Grant events while the coordinator can decide.
    fn decide(&mut self, coord: &mut Coordinator<'_>) -> Option<Outcome> {
        loop {
            match coord.decide() {
                Decision::Grant {
                    tid,
                    op,
                    result,
                    child,
                    ..
                } => {
                    if let (Op::Create, Some(child)) = (op, child) {
                        if let Some(th) = self.ktid(tid).and_then(|k| self.threads.get_mut(&k)) {
                            th.expect = Some((child, th.clone_word));
                        }
                    }
                    if matches!(op, Op::ProcessExit { .. }) {
                        self.exiting = true;
                    }
                    self.last_granted = Some(tid);
                    self.silence.heard();
                    if self.cfg.record_trace {
                        let pc = self.ktid(tid).and_then(|k| self.threads.get(&k));
                        let pc = pc.map_or(0, |t| t.regs.rip);
                        self.trace.push((Event::new(tid, op), pc));
                    }
                    if let Err(reason) = self.grant(coord, tid, result) {
                        return Some(Outcome::Error { reason });
                    }
                }
                Decision::Wait | Decision::Over => return None,
                Decision::Deadlock(mut report) => {
                    for b in &mut report.blocked {
                        b.op = self.name_addresses(&b.op, coord);
                        b.waits_for = self.name_addresses(&b.waits_for, coord);
                    }
                    return Some(Outcome::Deadlock { report });
                }
                Decision::StepLimit => {
                    let st = coord.state();
                    let live = (0..st.num_threads())
                        .filter(|&t| st.status(t as Tid) != Status::Finished)
                        .count();
                    return Some(Outcome::StepLimit {
                        steps: coord.steps(),
                        live,
                    });
                }
                Decision::Diverged(d) => {
                    return Some(Outcome::Diverged {
                        step: d.step,
                        reason: d.reason,
                    })
                }
            }
        }
    }

    fn ktid(&self, t: Tid) -> Option<pid_t> {
        self.tid_ktid.get(t as usize).copied().flatten()
    }

    /// Carry out the grant of thread `t`'s posted operation (with `result`).
    fn grant(&mut self, coord: &mut Coordinator<'_>, t: Tid, result: i32) -> Result<(), String> {
        let k = self
            .ktid(t)
            .ok_or_else(|| format!("internal: thread {t} has no task"))?;
        let Some(th) = self.threads.get_mut(&k) else {
            // Gone already (killed with its process, or its exit outlived the wait for it).
            return Ok(());
        };
        let At::Posted(then) = th.at else {
            return Err(format!("internal: thread {t} granted while {:?}", th.at));
        };
        th.at = At::Running;
        if self.cfg.record_latency {
            if self.granted_at.len() <= t as usize {
                self.granted_at.resize(t as usize + 1, None);
            }
            self.granted_at[t as usize] = Some(Instant::now());
        }
        let ret = match then {
            OnGrant::SkipErrno => Some(if result == 0 { 0 } else { neg(result) }),
            OnGrant::SkipCount => Some(result.max(0) as u64),
            OnGrant::SkipZero => Some(0),
            OnGrant::Gone => {
                self.threads.remove(&k);
                return Ok(());
            }
            OnGrant::Requeue {
                addr,
                addr2,
                n1,
                n2,
                cmp,
            } => {
                if let Some(v) = cmp {
                    match sys::read_u32(self.pid, addr) {
                        Ok(w) if w == v => {}
                        Ok(_) => {
                            self.skip_now(k, neg(libc::EAGAIN))?;
                            return Ok(());
                        }
                        Err(_) => {
                            self.skip_now(k, neg(libc::EFAULT))?;
                            return Ok(());
                        }
                    }
                }
                let op = Op::FutexRequeued {
                    addr,
                    addr2,
                    n1,
                    n2,
                };
                self.post(coord, k, op, OnGrant::SkipCount)?;
                return Ok(());
            }
            OnGrant::StepOver(addr) => return self.step_over(k, addr),
            OnGrant::Run | OnGrant::Exit | OnGrant::ExitWake => None,
        };
        match ret {
            Some(r) => {
                self.skip_now(k, r)?;
            }
            None => self.resume(k, 0)?,
        }
        if then == OnGrant::Exit && k != self.pid {
            self.await_gone(k)?;
            self.threads.remove(&k);
        }
        if then == OnGrant::ExitWake {
            self.await_gone(k)?;
            self.exit_words.remove(&t);
            self.post(coord, k, Op::Exit, OnGrant::Gone)?;
        }
        Ok(())
    }

    /// Wait (at most [`EXIT_WAIT`]) until thread `k`, whose exit was granted, is gone: only
    /// then has the kernel cleared its exit word, which a joiner granted next reads.
    fn await_gone(&mut self, k: pid_t) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let left = EXIT_WAIT.saturating_sub(start.elapsed());
            // The thread is about to vanish: yield to it first.
            match sys::wait_for(k, libc::__WALL, self.cfg.spin, left) {
                Ok(Some((_, st))) if libc::WIFEXITED(st) || libc::WIFSIGNALED(st) => return Ok(()),
                Ok(Some((_, st))) if libc::WIFSTOPPED(st) => {
                    let sig = libc::WSTOPSIG(st);
                    self.resume(k, if sig == libc::SIGTRAP { 0 } else { sig })?;
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return Ok(()),
            }
        }
    }

    /// Append the program's symbol to the hexadecimal addresses in `text` (or, for a
    /// thread's exit word, that it is).
    fn name_addresses(&self, text: &str, coord: &Coordinator<'_>) -> String {
        elf::name_addresses(text, &self.maps, |a| {
            let (&t, _) = self.exit_words.iter().find(|(_, &w)| w == a)?;
            Some(format!("exit word of thread {}", coord.state().name(t)))
        })
    }

    /// When to look at the silent running threads in `/proc` (as the preload backend).
    fn probe_in(&self, coord: &Coordinator<'_>) -> Option<Duration> {
        let after = self.cfg.blocked_after?;
        coord.state().running().next()?;
        Some(self.silence.probe_in(after))
    }

    /// Set aside the running threads the kernel shows blocked in a call that is not a
    /// scheduling point (`read` of a pipe, `poll`, ...), or running user code without a
    /// point for [`silent::spin_after`] while another thread could use the turn (a
    /// spin-wait on a flag another thread sets), as the preload backend does: they rejoin
    /// with their next stop, and the run is partial.
    fn set_aside(&mut self, coord: &mut Coordinator<'_>) -> bool {
        let spun = self
            .silence
            .start_probe(self.cfg.blocked_after, self.cfg.step_timeout);
        let running: Vec<Tid> = coord.state().running().collect();
        let mut any = false;
        for t in running {
            let Some(k) = self.ktid(t) else { continue };
            if self.threads.get(&k).map(|th| th.at) != Some(At::Running) {
                continue;
            }
            let dir = format!("/proc/{}/task/{k}", self.pid);
            let view = match std::fs::read_to_string(format!("{dir}/stat")) {
                Ok(stat) => silent::classify(
                    &stat,
                    || std::fs::read_to_string(format!("{dir}/syscall")).ok(),
                    -1,
                ),
                Err(_) => Silent::Other,
            };
            let outside = set_aside(view, spun, coord.state().others_could_run(t));
            if outside && coord.mark_outside(t).is_ok() {
                self.outside_episodes += 1;
                any = true;
                self.silence
                    .note_outside(t, format!("{dir}/stat"), view == Silent::BlockedOutside);
            }
        }
        any
    }

    /// The `stat` paths of the threads a silence waits for: granted and not stopped, or set
    /// aside outside control.
    fn silent_stats(&self, coord: &Coordinator<'_>) -> Vec<(Tid, String)> {
        let st = coord.state();
        st.running()
            .chain(st.outside())
            .filter_map(|t| {
                let k = self.ktid(t)?;
                Some((t, format!("/proc/{}/task/{k}/stat", self.pid)))
            })
            .collect()
    }

    /// The run is a hang: nothing came for the step timeout, or (`computing`: for so long)
    /// the silent threads kept computing for the compute timeout.
    fn hang(&self, coord: &Coordinator<'_>, computing: Option<Duration>) -> Outcome {
        let st = coord.state();
        let mut threads: Vec<String> = st
            .running()
            .chain(st.outside())
            .map(|t| st.name(t).to_string())
            .collect();
        if threads.is_empty() {
            threads.extend(self.last_granted.map(|t| st.name(t).to_string()));
        }
        Outcome::Hang {
            threads,
            waited_ms: computing.unwrap_or(self.cfg.step_timeout).as_millis() as u64,
            computing: computing.is_some(),
        }
    }

    /// Kill the program's process group and reap every tracee (the main process last).
    fn kill_and_reap(&mut self) {
        if !self.reaped {
            // SAFETY: signals our own child's group (its pid is not reaped, so not reused).
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
        let start = Instant::now();
        loop {
            let left = REAP_WAIT.saturating_sub(start.elapsed());
            // On this thread's children only.
            match sys::wait_for(-1, libc::__WALL | libc::__WNOTHREAD, Duration::ZERO, left) {
                Ok(Some((r, st))) => {
                    if r == self.pid && (libc::WIFEXITED(st) || libc::WIFSIGNALED(st)) {
                        self.reaped = true;
                        if self.exit.is_none() {
                            self.exit = Some(if libc::WIFEXITED(st) {
                                Exit::Code(libc::WEXITSTATUS(st))
                            } else {
                                Exit::Signal(libc::WTERMSIG(st))
                            });
                        }
                    }
                }
                Ok(None) => return,
                Err(_) => return, // ECHILD: nothing left
            }
        }
    }

    /// The verdict when the program ended by itself.
    fn classify_exit(&self, coord: &Coordinator<'_>, stderr: &[u8]) -> Outcome {
        let st = coord.state();
        let name = |t: Option<Tid>| {
            t.or(self.last_granted)
                .filter(|&t| (t as usize) < st.num_threads())
                .map_or_else(|| "?".to_string(), |t| st.name(t).to_string())
        };
        match self.exit {
            None => Outcome::Error {
                reason: "the program's end was not observed".into(),
            },
            Some(Exit::Code(code)) => Outcome::from_exit(code, &self.cfg.ok_exit_codes),
            Some(Exit::Signal(sig)) => {
                let (pc, t) = match self.crash {
                    Some((s, pc, t)) if s == sig => (Some(pc), Some(t)),
                    _ => (None, self.sender),
                };
                if sig == libc::SIGABRT {
                    if let Some(text) = assertion(stderr, &self.cfg.program) {
                        return Outcome::Assert {
                            text,
                            thread: name(t),
                        };
                    }
                }
                Outcome::Crash {
                    signal: sig,
                    thread: name(t),
                    pc,
                    symbol: pc.and_then(|pc| elf::symbolise(pc, &self.maps)),
                    exception: None,
                }
            }
        }
    }
}

/// The outcome of a fork by the program.
fn forks() -> Outcome {
    Outcome::Error {
        reason: "unsupported by the ptrace backend: the program creates a process (fork, vfork, \
                 posix_spawn, system); the ptrace backend schedules the threads of one \
                 process (a dynamically linked build runs with --backend preload)"
            .into(),
    }
}

fn unsupported_futex(what: &str) -> Outcome {
    Outcome::Error {
        reason: format!(
            "unsupported futex op {what}: the ptrace backend emulates FUTEX_WAIT, FUTEX_WAKE, \
             their _BITSET forms and (CMP_)REQUEUE (a dynamically linked build runs with --backend \
             preload)"
        ),
    }
}

/// The name of a futex command, for messages.
fn futex_name(cmd: u64) -> String {
    match cmd {
        2 => "FUTEX_FD".into(),
        5 => "FUTEX_WAKE_OP".into(),
        6 => "FUTEX_LOCK_PI".into(),
        7 => "FUTEX_UNLOCK_PI".into(),
        8 => "FUTEX_TRYLOCK_PI".into(),
        11 => "FUTEX_WAIT_REQUEUE_PI".into(),
        12 => "FUTEX_CMP_REQUEUE_PI".into(),
        13 => "FUTEX_LOCK_PI2".into(),
        n => format!("{n}"),
    }
}

/// The real clock behind a virtual one (`None` for CPU-time clocks).
fn virtual_clock(c: libc::clockid_t) -> Option<libc::clockid_t> {
    match c {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => {
            Some(libc::CLOCK_REALTIME)
        }
        libc::CLOCK_MONOTONIC
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_MONOTONIC_COARSE
        | libc::CLOCK_BOOTTIME => Some(libc::CLOCK_MONOTONIC),
        _ => None,
    }
}

/// What is left until absolute time `t` on a clock now at `now`, rounded up to
/// [`DEADLINE_GRAIN`] (0 when passed).
fn left_of(t: u64, now: u64) -> u64 {
    let left = t.saturating_sub(now);
    left.div_ceil(DEADLINE_GRAIN) * DEADLINE_GRAIN
}

/// The failed assertion's message in the program's stderr: glibc's
/// `prog: file:line: function: Assertion `x' failed.` (without the `prog: `) or musl's
/// `Assertion failed: x (file: function: line)`.
fn assertion(stderr: &[u8], program: &std::path::Path) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let prefix = program
        .file_name()
        .map(|n| format!("{}: ", n.to_string_lossy()));
    text.lines().rev().find_map(|l| {
        if l.starts_with("Assertion failed: ") {
            return Some(l.to_string());
        }
        if l.contains(": Assertion `") && l.ends_with("' failed.") {
            let l = prefix
                .as_deref()
                .and_then(|p| l.strip_prefix(p))
                .unwrap_or(l);
            return Some(l.to_string());
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_deadlines_round_up_to_the_grain() {
        assert_eq!(left_of(5, 10), 0);
        assert_eq!(left_of(1_000_000_000, 3_000), 1_000_000_000);
        assert_eq!(left_of(1_000_000_001, 0), 1_010_000_000);
    }

    #[test]
    fn assertion_messages_of_glibc_and_musl() {
        let p = std::path::Path::new("/x/lost");
        let g = b"out\nlost: a.c:9: main: Assertion `n == 2' failed.\n";
        assert_eq!(
            assertion(g, p).as_deref(),
            Some("a.c:9: main: Assertion `n == 2' failed.")
        );
        let m = b"Assertion failed: n == 2 (a.c: main: 9)\n";
        assert_eq!(
            assertion(m, p).as_deref(),
            Some("Assertion failed: n == 2 (a.c: main: 9)")
        );
        assert_eq!(assertion(b"Segmentation fault\n", p), None);
    }

    #[test]
    fn the_filter_traces_exactly_the_listed_calls() {
        let f = sys::filter();
        // arch load, arch check, foreign return, nr load, one compare per call, two returns.
        assert_eq!(f.len(), 4 + sys::TRACED.len() + 2);
        // Every compare jumps to the last instruction (TRACE) when it matches.
        for (i, ins) in f[4..4 + sys::TRACED.len()].iter().enumerate() {
            let at = 4 + i;
            assert_eq!(at + 1 + ins.jt as usize, f.len() - 1);
        }
    }
}
