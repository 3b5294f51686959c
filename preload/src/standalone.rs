//! Standalone mode: `LD_PRELOAD=libpos.so ./prog` with no runner. The process runs the same
//! decision loop ([`pos_sched::Coordinator`]) itself. By default (the baton transport,
//! issue 15) the thread whose post completes a step's set of posts decides the next step in
//! place, under the run's lock, and hands the turn to the chosen thread's futex word
//! ([`crate::baton`]), or simply continues when chosen again; a hidden thread, off that
//! path, watches for hangs and threads blocked outside control, awaits exited threads,
//! prints crash and assertion outcomes and accepts connections on an abstract-namespace
//! Unix socket. With `POS_TRANSPORT=socket` every thread connects to that hidden thread,
//! exactly as it would to the runner, and it makes every decision.
//!
//! Configuration (environment): `POS_ALGO` (default `pos`), `POS_SEED` (default: fresh from
//! the kernel's random source), `POS_DEPTH` (PCT depth), `POS_SCHEDULE=<file>` (replay a
//! recorded schedule), `POS_SCHEDULE_OUT=<file>` (write this run's schedule as JSON),
//! `POS_STEP_TIMEOUT=<seconds>` (default 10, 0 = none: how long nothing may happen before
//! the run is reported as a hang), `POS_BLOCKED_AFTER=<ms>` (default 30, 0 = never: after
//! this long without a post, a granted thread that `/proc` shows asleep in a system call
//! libpos does not control is set aside and the others run, as the runner's
//! `--blocked-after`; the outcome line is then followed by a `partial run` note),
//! `POS_TIMEOUTS=any` (timed waits may also time out before their deadline, as the runner's
//! `--timeouts any`; default `deadline`), `POS_TRANSPORT=socket` (default `baton`: the
//! threads of this process post into the coordinator in-process and pass the turn with a
//! futex baton, [`crate::baton`], issue 15; `socket`: every thread connects to the hidden
//! thread, as before; both give the same schedule for the same seed). The run
//! uses `rng::try_seed(POS_SEED, 0)`, i.e. it is try 0 of a runner session with that base
//! seed, so the same `POS_SEED` gives the same schedule. A bad value of any of these is one
//! line `poscheck: error: ...` on stderr and exit status 2 before the program runs.
//!
//! Output on stderr: `poscheck: algo=NAME seed=N` at start and one
//! `poscheck: outcome=KIND steps=N[: detail]` line at the end, KIND named as the runner
//! names outcomes: `ok` (exit code 0, or every thread ended), `exit-code` (another code),
//! `assert`, `crash`, `deadlock`, `step-limit` (livelock), `hang` or `diverged` (replay).
//! On deadlock, step limit, hang or divergence nothing can continue: after the report the process
//! ends with `_exit(1)`. Otherwise the program's own exit status stands.
//!
//! Wrappers (`LD_PRELOAD=libpos.so timeout 30 ./prog`, `env X=1 ./prog`): control passes
//! through exec until the process creates its first thread. Standalone, libpos stays in
//! `LD_PRELOAD` and the chosen seed is exported as `POS_SEED`, so an exec'd image loads
//! libpos again and controls itself with the same seed; the first process that creates a
//! thread is the program under control, and from then on libpos leaves `LD_PRELOAD`, so the
//! programs it runs (`system`, ...) are not controlled.
//! A process that never creates a thread has nothing to schedule: waiting (for its child) is
//! never a hang there, and when it ends well it prints no outcome line and writes no
//! `POS_SCHEDULE_OUT` (the program behind it reports). Every process prints its start line.

use crate::baton::Baton;
use crate::conn::{self, read_exact, write_all, Busy, ACK_REPORTS};
use crate::fds;
use crate::real;
use libc::c_int;
use pos_sched::coordinator::{DEFAULT_MAX_STEPS, OUTSIDE_TICK};
use pos_sched::protocol::inproc::{self, LogRec, Spec, StrategySpec, Verdict};
use pos_sched::protocol::{frame_pc, Msg, Reply, MSG_LEN};
use pos_sched::schedule::Schedule;
use pos_sched::silent::{self, Judged, Silent};
use pos_sched::state::{Deadlock, Status};
use pos_sched::strategy::{self, Divergence, Options, Strategy};
use pos_sched::{rng, Coordinator, Decision, Op, Tid};
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How often a run decided for the runner says it is alive ([`Msg::Alive`]).
const ALIVE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// Runs of at least this many steps say [`Msg::Concluding`] before they make their end
/// report; a shorter run's report takes milliseconds at most (8 million steps took about
/// 10 s), far within the runner's guard, and goes without it.
const CONCLUDING_AFTER: u64 = 10_000;

/// Default of `POS_STEP_TIMEOUT` (10 s).
const DEFAULT_STEP_TIMEOUT_MS: i32 = 10_000;

/// Where a run's outcome goes.
pub enum Sink {
    /// Standalone: an outcome line on stderr and `POS_SCHEDULE_OUT`.
    Stderr,
    /// A run the runner started with a [`Spec`] (issue 15): one [`Msg::End`] on the main
    /// thread's connection, this descriptor.
    Runner(c_int),
}

/// What the environment (standalone) or the runner's [`Spec`] asks for.
pub struct Config {
    pub algo: String,
    pub seed: u64,
    /// The coordinator's seed: try 0 of `seed` standalone, the runner's as given.
    pub run_seed: u64,
    pub max_steps: u64,
    pub sink: Sink,
    /// Measure hand-over latencies (the runner's `bench`).
    pub record_latency: bool,
    /// Keep the coordinator's inputs and decisions for the runner ([`Spec::record_log`]).
    pub record_log: bool,
    pub depth: Option<u32>,
    pub schedule_in: Option<String>,
    pub schedule_out: Option<String>,
    pub points: String,
    /// Milliseconds without any progress before the run is a hang (0: no limit).
    pub step_timeout_ms: i32,
    /// Milliseconds a silent thread may compute before the run is a hang
    /// ([`silent::Computing`]; at least the step timeout).
    pub compute_timeout_ms: i32,
    /// Milliseconds of silence before a granted thread is looked up in `/proc` for being
    /// blocked outside control (0: never).
    pub blocked_after_ms: i32,
    /// `POS_TIMEOUTS=any`: timed waits may time out before their deadline (the runner's
    /// `--timeouts any`); `deadline` or unset: only at their deadline.
    pub timeouts_any: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Parse a seed in decimal or `0x` hexadecimal.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("bad POS_SEED {s:?}"))
}

fn fresh_seed() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: b is a valid 8-byte buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == 8 {
        u64::from_le_bytes(b)
    } else {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        (ts.tv_sec as u64).wrapping_mul(1_000_000_007)
            ^ ts.tv_nsec as u64
            ^ std::process::id() as u64
    }
}

impl Config {
    pub fn from_env() -> Result<Config, String> {
        let depth = match env("POS_DEPTH") {
            Some(d) => Some(d.parse().map_err(|_| format!("bad POS_DEPTH {d:?}"))?),
            None => None,
        };
        let schedule_in = env("POS_SCHEDULE");
        let seed = match env("POS_SEED") {
            Some(s) => parse_seed(&s)?,
            None => fresh_seed(),
        };
        // Seconds (a number, at least 0) as milliseconds.
        let millis_of = |name: &str, default: i32| match env(name) {
            Some(t) => t
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .map(|secs| (secs * 1000.0).min(i32::MAX as f64) as i32)
                .ok_or_else(|| format!("bad {name} {t:?}")),
            None => Ok(default),
        };
        let step_timeout_ms = millis_of("POS_STEP_TIMEOUT", DEFAULT_STEP_TIMEOUT_MS)?;
        let compute_timeout_ms = millis_of(
            "POS_COMPUTE_TIMEOUT",
            silent::DEFAULT_COMPUTE_TIMEOUT.as_millis() as i32,
        )?;
        let blocked_after_ms = match env("POS_BLOCKED_AFTER") {
            Some(t) => t
                .parse::<u32>()
                .map_err(|_| format!("bad POS_BLOCKED_AFTER {t:?}"))?
                .min(i32::MAX as u32) as i32,
            None => 30,
        };
        let timeouts_any = match env("POS_TIMEOUTS").as_deref() {
            None | Some("deadline") => false,
            Some("any") => true,
            Some(t) => return Err(format!("bad POS_TIMEOUTS {t:?} (deadline or any)")),
        };
        Ok(Config {
            run_seed: rng::try_seed(seed, 0),
            max_steps: DEFAULT_MAX_STEPS,
            sink: Sink::Stderr,
            record_latency: false,
            record_log: false,
            step_timeout_ms,
            compute_timeout_ms,
            blocked_after_ms,
            timeouts_any,
            algo: env("POS_ALGO").unwrap_or_else(|| "pos".into()),
            seed,
            depth,
            schedule_in,
            schedule_out: env("POS_SCHEDULE_OUT"),
            points: env("POSCHECK_POINTS").unwrap_or_else(|| "sync".into()),
        })
    }

    /// The configuration of a run the runner started with `spec`, reporting on `fd`.
    pub fn for_runner(spec: &Spec, fd: c_int) -> Config {
        let ms = |m: u64| m.min(i32::MAX as u64) as i32;
        Config {
            algo: match &spec.strategy {
                StrategySpec::Named { algo, .. } => algo.clone(),
                StrategySpec::Replay { .. } => "replay".into(),
                StrategySpec::Guide(_) => "explore".into(),
            },
            seed: spec.seed,
            run_seed: spec.seed,
            max_steps: spec.max_steps,
            sink: Sink::Runner(fd),
            record_latency: spec.record_latency,
            record_log: spec.record_log,
            depth: None,
            schedule_in: None,
            schedule_out: None,
            points: String::new(),
            step_timeout_ms: ms(spec.step_timeout_ms),
            compute_timeout_ms: ms(spec.compute_timeout_ms),
            blocked_after_ms: ms(spec.blocked_after_ms),
            timeouts_any: spec.timeouts_any,
        }
    }

    fn standalone(&self) -> bool {
        matches!(self.sink, Sink::Stderr)
    }

    /// Build the strategy this run uses (a replay when `POS_SCHEDULE` is set).
    pub fn strategy(&mut self) -> Result<Box<dyn Strategy>, String> {
        if let Some(path) = &self.schedule_in {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read POS_SCHEDULE {path}: {e}"))?;
            let s: Schedule =
                serde_json::from_str(&text).map_err(|e| format!("bad schedule in {path}: {e}"))?;
            self.algo = "replay".into();
            self.seed = s.seed;
            return Ok(strategy::replay(s.steps));
        }
        let opts = Options {
            depth: self.depth,
            ..Options::default()
        };
        strategy::by_name(&self.algo, &opts).map_err(|e| format!("POS_ALGO: {e}"))
    }
}

/// Start the hidden coordinator: listen on a fresh abstract address (set as the one every
/// thread connects to), print the start line, spawn the coordinator thread. With the baton
/// transport (the default; `POS_TRANSPORT=socket` for connections) the threads of this
/// process post in-process instead (see [`local_post`]) and the hidden thread only serves
/// connections (forked children), watches for hangs and blocked threads, awaits exited
/// threads and reports crashes.
pub fn start() -> Result<(), String> {
    let _b = Busy::enter();
    let mut cfg = Config::from_env().unwrap_or_else(|e| config_error(&e));
    let strategy = cfg.strategy().unwrap_or_else(|e| config_error(&e));
    launch(cfg, strategy)
}

/// Runner mode with [`inproc::ENV_INPROC`], on the main thread right after its `Hello`:
/// read the runner's [`inproc::Start`]; with a spec, decide the run in this process
/// ([`start_for_runner`]) and let the main thread post in-process from here, its connection
/// staying the channel of the run's end report. Without one, the run goes over the socket.
pub fn runner_start() {
    let Some(me) = conn::me() else { return };
    let _b = Busy::enter();
    // Its size varies with the run (an exploration's prefix): not in the program's heap.
    let private = crate::alloc::Private::force();
    let mut head = [0u8; 16];
    if !crate::journal::receive_header(me.fd, &mut head) {
        conn::die("the runner hung up before the run started");
    }
    let len = inproc::Start::decode_header(&head).unwrap_or_else(|e| conn::die(&e));
    let mut json = vec![0u8; len];
    if !read_exact(me.fd, &mut json) {
        conn::die("the runner hung up before the run started");
    }
    let start: inproc::Start = serde_json::from_slice(&json)
        .unwrap_or_else(|e| conn::die(&format!("bad start message from the runner: {e}")));
    drop(json);
    drop(private);
    let Some(spec) = start.spec else { return };
    if let Err(e) = start_for_runner(&spec, me.fd) {
        conn::die(&e);
    }
    conn::adopt(0);
}

/// A run the runner started with `spec` ([`pos_sched::protocol::inproc`]): decide it in
/// this process as standalone mode does, and report its end on `fd`, the main thread's
/// connection to the runner. The caller then adopts the main thread again (in-process).
pub fn start_for_runner(spec: &Spec, fd: c_int) -> Result<(), String> {
    let _b = Busy::enter();
    let strategy = {
        // An exploration's guide holds its forced prefix: not in the program's heap.
        let _p = crate::alloc::Private::force();
        spec.strategy.build()?
    };
    launch(Config::for_runner(spec, fd), strategy)
}

/// Set up the in-process run of `cfg` with `strategy` (see [`start`]).
fn launch(cfg: Config, strategy: Box<dyn Strategy>) -> Result<(), String> {
    // Read without allocating: the program's heap must look as with sockets.
    // SAFETY: getenv with a NUL-terminated name; the value is copied before any setenv.
    let transport = unsafe { libc::getenv(c"POS_TRANSPORT".as_ptr()) };
    let local = if transport.is_null() || !cfg.standalone() {
        true
    } else {
        // SAFETY: getenv returned a NUL-terminated string.
        match unsafe { std::ffi::CStr::from_ptr(transport) }.to_bytes() {
            b"socket" => false,
            b"" | b"baton" => true,
            t => config_error(&format!(
                "bad POS_TRANSPORT {:?} (socket or baton)",
                String::from_utf8_lossy(t)
            )),
        }
    };
    let name = format!(
        "\0poscheck-{}-{:x}",
        std::process::id(),
        fresh_seed() & 0xffff_ffff
    );
    let addr = fds::unix_addr(name.as_bytes())?;
    // SAFETY: plain socket calls on values we own.
    let listener = unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0
            || libc::bind(fd, (&addr.0 as *const libc::sockaddr_un).cast(), addr.1) != 0
            || libc::listen(fd, 128) != 0
        {
            return Err(format!("cannot listen: errno {}", conn::errno()));
        }
        fds::adopt_fd(fd)
    };
    // The decisions made on the program's threads need libpos's private heap (see `alloc`);
    // without it (its address taken) the socket transport gives the same schedules.
    let local = local && crate::alloc::reserve();
    // The eventfd is handed to the hidden thread through `WAKE_FD`, not captured: the
    // spawned closure (boxed in the program's heap) keeps its size, so the program's later
    // allocations get the addresses they get with sockets.
    if local {
        // Through `syscall`, as `alloc::reserve`'s mmap: no new libc import.
        // SAFETY: plain eventfd creation.
        let fd = unsafe {
            crate::real::syscall(
                libc::SYS_eventfd2,
                0,
                (libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) as libc::c_long,
                0,
                0,
                0,
                0,
            )
        } as c_int;
        if fd < 0 {
            return Err(format!("cannot create an eventfd: errno {}", conn::errno()));
        }
        let fd = fds::adopt_fd(fd);
        WAKE_FD.store(fd, Ordering::SeqCst);
        // Resolve libc's `syscall` now (dlsym): a crash report waits on a futex from a
        // signal handler.
        // SAFETY: gettid through syscall, no arguments used.
        unsafe { crate::real::syscall(libc::SYS_gettid, 0, 0, 0, 0, 0, 0) };
    }
    fds::set_addr(addr);
    ACK_REPORTS.store(true, Ordering::SeqCst);
    if cfg.standalone() {
        if std::env::var_os("POS_SEED").is_none() && cfg.schedule_in.is_none() {
            // The images this process execs (control passes through exec) use the same seed.
            std::env::set_var("POS_SEED", cfg.seed.to_string());
        }
        eprintln!("poscheck: algo={} seed={}", cfg.algo, cfg.seed);
    }
    spawn_hidden(Box::new(move || {
        crate::alloc::hidden_thread_allocates_privately();
        let _b = Busy::enter();
        block_signals();
        serve(listener, strategy, cfg)
    }))?;
    if local {
        // The run is set up by the hidden thread (its allocations stay in its own arena, as
        // with sockets); the program's threads post into it from their first step.
        while lock().is_none() {
            std::thread::yield_now();
        }
        // From here libpos allocates on the program's threads (seats, decisions): not in
        // the program's heap (see `alloc`).
        crate::alloc::ON.store(true, Ordering::SeqCst);
        conn::LOCAL.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// The hidden thread takes none of the program's signals. The kernel hands a
/// process-directed signal to any thread that does not block it: a program that blocks a
/// signal in all of its threads to `sigwait` for it would otherwise have it delivered here,
/// where its default action ends the process. SIGSYS stays open for the futex trap
/// ([`crate::trap`]); glibc keeps its own internal signals open by itself.
/// Start libpos's hidden thread (named `poscheck`, 2 MiB of stack, detached) running `f`.
///
/// With `pthread_create` rather than `std::thread`, which registers a thread-local
/// destructor as the thread starts: glibc's `calloc` for it opened a malloc arena for the
/// thread before `f` could send its allocations to the private region ([`crate::alloc`]),
/// about 25 µs of each run's start. The closure is boxed in that region when it can be.
/// `pthread_create` is called through the global scope, as `std::thread` did, not the next
/// definition after libpos: a sanitizer runtime preloaded before libpos must see the
/// thread born (ThreadSanitizer's allocator crashed on a thread it had not seen). A panic in
/// `f` ends the thread only.
fn spawn_hidden(f: Box<dyn FnOnce() + Send>) -> Result<(), String> {
    extern "C" fn start(p: *mut libc::c_void) -> *mut libc::c_void {
        // SAFETY: the box spawn_hidden leaked for this thread alone.
        let f = unsafe { Box::from_raw(p as *mut Box<dyn FnOnce() + Send>) };
        // SAFETY: naming the calling thread with a NUL-terminated literal.
        unsafe { libc::prctl(libc::PR_SET_NAME, c"poscheck".as_ptr(), 0, 0, 0) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        std::ptr::null_mut()
    }
    let payload = {
        let _p = crate::alloc::Private::force();
        Box::into_raw(Box::new(f))
    };
    // SAFETY: an attribute object initialised before use and destroyed after; `start` owns
    // the payload, which comes back here only if no thread was created.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        libc::pthread_attr_init(&mut attr);
        libc::pthread_attr_setstacksize(&mut attr, 2 << 20);
        libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        let mut t: libc::pthread_t = 0;
        let r = libc::pthread_create(&mut t, &attr, start, payload.cast());
        libc::pthread_attr_destroy(&mut attr);
        if r != 0 {
            drop(Box::from_raw(payload));
            return Err(format!("cannot start the coordinator thread: error {r}"));
        }
    }
    Ok(())
}

fn block_signals() {
    // Only `sigemptyset`/`sigaddset`, which libpos imports already: a new libc import changes
    // what the dynamic loader allocates at start-up (see `alloc`).
    // SAFETY: building a signal set on the stack and setting this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        // Every signal number a sigset_t of the kernel's 64 can hold.
        for sig in 1..=64 {
            if sig != libc::SIGSYS {
                libc::sigaddset(&mut set, sig);
            }
        }
        crate::real::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// A bad configuration (`POS_ALGO`, `POS_SEED`, `POS_SCHEDULE`, `POSCHECK_POINTS`, ...): one line
/// `poscheck: error: ...` and exit status 2, as for the runner's bad input; the program
/// does not run.
pub fn config_error(what: &str) -> ! {
    eprintln!("poscheck: error: {what}");
    // SAFETY: plain process exit; nothing of the program has run yet.
    unsafe { libc::_exit(2) }
}

/// How a run ended.
enum End {
    Exit(i32),
    /// The text, and the thread that failed when known.
    Assert(String, Option<Tid>),
    Crash {
        signal: c_int,
        pc: u64,
        tid: Option<Tid>,
    },
    Deadlock(Deadlock),
    Livelock,
    /// Why, the threads that had the turn, and (when they kept computing: an endless loop
    /// or a long computation) for how many milliseconds.
    Hang(String, Vec<String>, Option<u64>),
    Diverged(Divergence),
    Finished,
}

impl End {
    /// The outcome's kind, named as the runner names them (`ok`, `exit-code`, `assert`,
    /// `crash`, `deadlock`, `step-limit`, `diverged`).
    fn kind(&self) -> &'static str {
        match self {
            End::Exit(0) | End::Finished => "ok",
            End::Exit(_) => "exit-code",
            End::Assert(..) => "assert",
            End::Crash { .. } => "crash",
            End::Deadlock(_) => "deadlock",
            End::Livelock => "step-limit",
            End::Hang(..) => "hang",
            End::Diverged(_) => "diverged",
        }
    }

    fn detail(&self) -> Option<String> {
        match self {
            End::Exit(c) if *c != 0 => Some(format!("exit code {c}")),
            End::Assert(t, _) | End::Hang(t, ..) => Some(t.clone()),
            End::Deadlock(d) => Some(d.to_string()),
            End::Diverged(d) => Some(d.to_string()),
            End::Crash { signal, pc, .. } => Some(format!(
                "signal {signal} ({}) at pc {pc:#x}",
                signal_name(*signal)
            )),
            _ => None,
        }
    }
}

/// Names of the signals libpos reports as crashes.
fn signal_name(sig: c_int) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        _ => "?",
    }
}

/// One connection: its fd and, after `Hello`, its thread.
struct Peer {
    fd: c_int,
    tid: Option<Tid>,
    /// The kernel's id of the thread (0: unknown).
    ktid: u32,
    /// The thread's end of this connection, in the program (-1: unknown).
    fd_there: c_int,
}

/// Where a thread that posts in-process ([`conn::LOCAL`]) waits for its grant, and the
/// grant's reply.
struct Seat {
    baton: Baton,
    result: AtomicI32,
    value: AtomicU64,
    /// Entries into and exits from [`local_post`] (odd: inside libpos, possibly asleep on
    /// the run's lock or its baton, which is no block outside control).
    inside: AtomicU32,
    /// When the turn was handed to it (monotonic ns; 0: not measured), for
    /// [`Config::record_latency`].
    granted_ns: AtomicU64,
    /// Kernel id of a thread whose exit was granted just before this thread's turn (0:
    /// none): the thread waits for it to be gone before it goes on ([`await_ktid_gone`]).
    await_ktid: AtomicU32,
    /// The value its next `FutexWait` post expects in the futex word ([`NO_EXPECT`]: none),
    /// compared again under the run's lock ([`expect_futex_word`]).
    expect: AtomicU64,
}

/// [`Seat::expect`] when no value is expected.
const NO_EXPECT: u64 = u64::MAX;

/// Thread `tid`'s next `FutexWait` post is made only if the word still holds `val` once
/// the run's lock is taken; otherwise it returns `EAGAIN` unposted, as the kernel would.
/// The caller compared the word already, which is exact while it is the one thread granted;
/// but a thread coming back from outside control runs beside the granted one, and a store
/// and `FUTEX_WAKE` of that one between the comparison and the post were a wake lost: the
/// waiter blocked for ever (probe 20: tokio's park, a false `deadlock` in a few runs in a
/// thousand). Posts take the run's lock, so a wake posted after the store meets the wait.
pub fn expect_futex_word(tid: Tid, val: u32) {
    if let Some(seat) = seat_of(tid) {
        seat.expect.store(u64::from(val), Ordering::Relaxed);
    }
}

/// Thread `tid`'s seat, if it has one.
fn seat_of(tid: Tid) -> Option<&'static Seat> {
    let seat = SEATS.get(tid as usize)?.load(Ordering::Relaxed);
    // SAFETY: seats are leaked, never freed.
    (!seat.is_null()).then(|| unsafe { &*seat })
}

/// A thread of this process that posts in-process.
struct Local {
    tid: Tid,
    ktid: u32,
    seat: &'static Seat,
}

/// Most threads of one run that post in-process.
const MAX_SEATS: usize = 1 << 16;

/// The seats by thread id (null: none). A table rather than a thread-local: libpos's static
/// TLS size is part of the main thread's start-up allocations, which must stay as they are
/// with sockets (the program's heap addresses appear in schedules).
static SEATS: [AtomicPtr<Seat>; MAX_SEATS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_SEATS];

/// How long one deadlock waits for the connections of a killed process's threads to end
/// ([`Run::peer_gone`]).
const GONE_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// The run: shared by the hidden thread and, with the baton transport, by the program's
/// threads, each of which decides the next step in place when its post completes the set.
static RUN: Mutex<Option<Run>> = Mutex::new(None);

/// The hidden thread's eventfd (baton transport; -1 otherwise): written to wake it for a
/// crash or assertion report and for a thread's exit to await.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

/// A report from a thread that posts in-process: 0 none, 1 being written, [`CRASH`] or
/// [`ASSERT`] ready for the hidden thread.
static REPORT: AtomicU32 = AtomicU32::new(0);
const CRASH: u32 = 2;
const ASSERT: u32 = 3;
static CRASH_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The thread that reported (`u32::MAX`: unknown).
static REPORT_TID: AtomicU32 = AtomicU32::new(u32::MAX);
static CRASH_PC: AtomicU64 = AtomicU64::new(0);
static ASSERT_TEXT: Mutex<String> = Mutex::new(String::new());
/// Granted by the hidden thread once a report's outcome is printed.
static ACK: Baton = Baton::new();

/// How long a reporting thread waits for the outcome line before it dies anyway.
const REPORT_WAIT_NS: u64 = 5_000_000_000;

/// The thread of the report being handled, if known.
fn reporter() -> Option<Tid> {
    Some(REPORT_TID.load(Ordering::SeqCst)).filter(|&t| t != u32::MAX)
}

fn lock() -> std::sync::MutexGuard<'static, Option<Run>> {
    RUN.lock().unwrap_or_else(|e| e.into_inner())
}

fn wake_hidden() {
    let fd = WAKE_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let one = 1u64.to_ne_bytes();
        crate::conn::write_all_file(fd, &one);
    }
}

/// How long a thread polls its baton before sleeping (`POSCHECK_SPIN_US`, as for replies).
fn spin_ns() -> u64 {
    conn::SPIN_NS.load(Ordering::Relaxed)
}

/// The calling thread, `tid` (kernel id `ktid`), joins the run in-process.
pub fn local_hello(tid: Tid, ktid: u32) {
    let Some(slot) = SEATS.get(tid as usize) else {
        conn::die(&format!("more than {MAX_SEATS} threads in one run"));
    };
    let mut g = lock();
    let _p = crate::alloc::Private::enter();
    let seat: &'static Seat = Box::leak(Box::new(Seat {
        baton: Baton::new(),
        result: AtomicI32::new(0),
        value: AtomicU64::new(0),
        inside: AtomicU32::new(0),
        granted_ns: AtomicU64::new(0),
        await_ktid: AtomicU32::new(0),
        expect: AtomicU64::new(NO_EXPECT),
    }));
    slot.store(seat as *const Seat as *mut Seat, Ordering::SeqCst);
    if let Some(run) = g.as_mut() {
        run.locals.push(Local { tid, ktid, seat });
        run.quiet = Instant::now();
    }
}

/// Thread `tid` posts `op` in-process and returns with its grant: if its post completes the
/// set, it decides the next step itself, and continues at once when that step is its own;
/// otherwise it waits on its baton for the thread that decides to hand it the turn.
pub fn local_post(tid: Tid, op: Op, pc: u64) -> Reply {
    let seat =
        seat_of(tid).unwrap_or_else(|| conn::die("in-process post from a thread without a seat"));
    seat.inside.fetch_add(1, Ordering::SeqCst);
    let granted = seat.granted_ns.swap(0, Ordering::Relaxed);
    let waited = (granted != 0).then(|| conn::now_ns().saturating_sub(granted));
    let mut g = lock();
    let expect = seat.expect.swap(NO_EXPECT, Ordering::Relaxed);
    if let (Op::FutexWait { addr, .. }, true) = (op, expect != NO_EXPECT) {
        // SAFETY: the word the futex call named (the caller read it already).
        let word = unsafe { &*(addr as *const AtomicU32) };
        if u64::from(word.load(Ordering::SeqCst)) != expect {
            drop(g);
            seat.inside.fetch_add(1, Ordering::SeqCst);
            return Reply {
                result: libc::EAGAIN,
                value: 0,
            };
        }
    }
    let private = crate::alloc::Private::enter();
    let mine = match g.as_mut() {
        Some(run) if run.coord.is_some() => {
            run.latencies.extend(waited);
            run.quiet = Instant::now();
            run.posts.push((tid, op, pc));
            run.flush();
            run.decide_all(Some(tid))
        }
        // The run is over (its outcome printed): this thread waits for the process's end.
        _ => None,
    };
    drop(private);
    drop(g);
    let reply = mine.unwrap_or_else(|| {
        seat.baton.wait(spin_ns());
        Reply {
            result: seat.result.load(Ordering::Relaxed),
            value: seat.value.load(Ordering::Relaxed),
        }
    });
    // A thread whose exit was granted just before this turn must be gone first.
    await_ktid_gone(seat.await_ktid.swap(0, Ordering::Relaxed));
    seat.inside.fetch_add(1, Ordering::SeqCst);
    reply
}

/// Observed accesses (`auto` points: [`Msg::Observed`] frames) of thread `tid`, which posts
/// in-process, made since its last post: logged for the runner's race detector when it
/// asked for a trace, else ignored.
pub fn local_observed(tid: Tid, frames: &[u8]) {
    let mut g = lock();
    let _p = crate::alloc::Private::enter();
    // Without a trace to log (sampling, standalone) there is nothing to decode.
    let Some(run) = g.as_mut().filter(|r| r.log.traced()) else {
        return;
    };
    for f in frames.chunks_exact(MSG_LEN) {
        let Ok(head) = <&[u8; MSG_LEN]>::try_from(f) else {
            continue;
        };
        if let Ok(Ok(msg)) = Msg::decode(head) {
            run.log_observed(tid, &msg);
        }
    }
}

/// A notification from thread `tid`, which posts in-process: an initialisation (`SemInit`,
/// `BarrierInit`, `OnceInit`, `MutexInit`), a kernel wait's timeout (`KernelWait`) or its
/// going on outside control (`Leaving`).
pub fn local_notify(tid: Tid, msg: &Msg) {
    let mut g = lock();
    let _p = crate::alloc::Private::enter();
    if let Some(run) = g.as_mut() {
        run.quiet = Instant::now();
        if let Msg::KernelWait { ns } = *msg {
            run.kernel_wait(tid, ns);
            return;
        }
        if let Msg::Leaving = *msg {
            if run.set_aside(tid) {
                // This thread goes on outside: another gets the turn.
                run.decide_all(None);
            }
            return;
        }
        if let Some(coord) = run.coord.as_mut() {
            initialise(coord, &mut run.log, msg, 0);
        }
    }
}

/// A failed assertion on a thread that posts in-process: the hidden thread prints the
/// outcome; returns once it has (or after [`REPORT_WAIT_NS`]).
pub fn local_report_assert(tid: Tid, text: &str) {
    if REPORT
        .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        REPORT_TID.store(tid, Ordering::SeqCst);
        let mut t = ASSERT_TEXT.lock().unwrap_or_else(|e| e.into_inner());
        let _p = crate::alloc::Private::enter();
        *t = text.to_string();
        REPORT.store(ASSERT, Ordering::SeqCst);
        wake_hidden();
    }
    ACK.wait_for(REPORT_WAIT_NS);
}

/// A fatal signal on a thread that posts in-process, from its signal handler (atomics, an
/// eventfd write and a futex wait only): as [`local_report_assert`].
pub fn local_report_crash(tid: Tid, signal: c_int, pc: u64) {
    if REPORT
        .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        REPORT_TID.store(tid, Ordering::SeqCst);
        CRASH_SIGNAL.store(signal, Ordering::SeqCst);
        CRASH_PC.store(pc, Ordering::SeqCst);
        REPORT.store(CRASH, Ordering::SeqCst);
        wake_hidden();
    }
    ACK.wait_for(REPORT_WAIT_NS);
}

/// The coordinator's inputs and decisions for the runner: appended to the run's journal as
/// they happen (a run killed half-way keeps its schedule), and with [`Config::record_log`]
/// also kept here, for the end message should the journal be missing or full.
struct Log {
    keep: Option<Vec<LogRec>>,
}

impl Log {
    fn push(&mut self, rec: LogRec) {
        crate::journal::append(&rec);
        if let Some(v) = self.keep.as_mut() {
            v.push(rec);
        }
    }

    /// The runner wants the whole trace (observed accesses too).
    fn traced(&self) -> bool {
        self.keep.is_some()
    }

    /// What the end message carries: the kept records unless the journal has them all.
    fn for_end(&mut self) -> Option<Vec<LogRec>> {
        let kept = self.keep.take()?;
        (!crate::journal::complete()).then_some(kept)
    }
}

/// The run's state and decisions.
struct Run {
    /// `None` once the outcome is printed.
    coord: Option<Coordinator<'static>>,
    cfg: &'static Config,
    /// Connections (threads of forked children; every thread with the socket transport).
    peers: Vec<Peer>,
    /// Threads of this process that post in-process.
    locals: Vec<Local>,
    /// Posts not yet handed to the coordinator: they are fed in thread order once every
    /// running thread has posted, so arrival order (OS timing) cannot change the strategy's
    /// view and the same seed gives the same schedule.
    posts: Vec<(Tid, Op, u64)>,
    /// The coordinator's inputs and decisions, for the runner.
    log: Log,
    /// The observed accesses logged since the last post ([`LogRec::Observed`] without the
    /// thread: only the thread granted last runs between two posts). A repeated access adds
    /// nothing to the runner's race detector (same thread, same happens-before), and a
    /// thread spinning on a flag without a point repeats one forever: logged once.
    observed: std::collections::HashSet<(bool, u64, u32, u64)>,
    /// Times a granted thread was set aside as blocked outside control.
    outside: u64,
    /// Virtual time while threads are outside control, and the threads set aside (blocked in the
    /// kernel or running).
    outside_clock: silent::OutsideClock,
    /// Since when a deadlock waits for a killed process's end ([`Run::peer_gone`]).
    gone_since: Option<Instant>,
    /// Since when nothing happened, and when silent threads were last looked up.
    quiet: Instant,
    probed: Instant,
    /// Kernel waits with a timeout that threads announced ([`Msg::KernelWait`]).
    kernel_waits: silent::KernelWaits,
    /// Times a silence was excused for them: added to the steps of the sign of life, so that the
    /// runner sees the run move as well.
    excused: u64,
    /// Whether the silent threads compute, at a step timeout of silence.
    computing: silent::Computing,
    /// When virtual time last ticked while the run waited for a thread outside control
    /// ([`Run::tick`]).
    ticked: Instant,
    /// The exit of this thread was granted by a thread that posts in-process, and the run
    /// has threads of other processes: the hidden thread decides next, once it is gone.
    gone_wait: Option<Tid>,
    /// Kernel id of a thread whose exit was granted, not yet handed to the next grant: the
    /// thread that gets the next turn waits for it to be gone ([`Seat::await_ktid`]).
    gone_next: u32,
    /// With [`Config::record_latency`]: nanoseconds from handing a thread of this process
    /// the turn to its next post.
    latencies: Vec<u64>,
}

/// The hidden thread: set up the run, then serve connections, watch for hangs and threads
/// blocked outside control, and (baton transport) report crashes and await exits.
fn serve(listener: c_int, strategy: Box<dyn Strategy>, cfg: Config) {
    let wake = WAKE_FD.load(Ordering::SeqCst);
    let cfg: &'static Config = Box::leak(Box::new(cfg));
    let strategy: &'static mut dyn Strategy = Box::leak(strategy);
    let mut coord = Coordinator::new(strategy, cfg.run_seed, cfg.max_steps);
    if cfg.timeouts_any {
        coord
            .state_mut()
            .set_timeout_policy(pos_sched::state::clock::TimeoutPolicy::Any);
    }
    let now = Instant::now();
    *lock() = Some(Run {
        coord: Some(coord),
        cfg,
        peers: Vec::new(),
        locals: Vec::new(),
        posts: Vec::new(),
        log: Log {
            keep: cfg.record_log.then(Vec::new),
        },
        observed: std::collections::HashSet::new(),
        outside: 0,
        outside_clock: silent::OutsideClock::default(),
        gone_since: None,
        quiet: now,
        kernel_waits: silent::KernelWaits::default(),
        excused: 0,
        computing: silent::Computing::default(),
        probed: now,
        ticked: now,
        gone_wait: None,
        gone_next: 0,
        latencies: Vec::new(),
    });
    let local = wake >= 0;
    // A run for the runner: a sign of life about once a second (see `Msg::Alive`).
    let mut alive_at = Instant::now();
    let first_peer = if local { 2 } else { 1 };
    let mut pfds: Vec<libc::pollfd> = Vec::new();
    let ms = |d: std::time::Duration| d.as_millis().min(i32::MAX as u128) as i32;
    loop {
        let timeout = {
            let mut g = lock();
            let Some(run) = g.as_mut() else { return };
            if run.coord.is_none() {
                return;
            }
            pfds.clear();
            pfds.push(pollin(listener));
            if local {
                pfds.push(pollin(wake));
            }
            pfds.extend(run.peers.iter().map(|p| pollin(p.fd)));
            let hang_in = (cfg.step_timeout_ms > 0)
                .then(|| (cfg.step_timeout_ms - ms(run.quiet.elapsed())).max(0));
            let probe_in = (cfg.blocked_after_ms > 0 && !run.silent().is_empty())
                .then(|| (cfg.blocked_after_ms - ms(run.quiet.max(run.probed).elapsed())).max(0));
            let t = match (hang_in, probe_in) {
                (Some(h), Some(p)) => h.min(p),
                (h, p) => h.or(p).unwrap_or(-1),
            };
            let t = match run.tick_in() {
                Some(k) if t < 0 || k < t => k,
                _ => t,
            };
            // In-process posts do not wake this thread: look again at least this often
            // (a thread may be silent by then).
            let t = if local && cfg.blocked_after_ms > 0 && (t < 0 || t > cfg.blocked_after_ms) {
                cfg.blocked_after_ms
            } else {
                t
            };
            if let Sink::Runner(fd) = cfg.sink {
                if alive_at.elapsed() >= ALIVE_EVERY {
                    alive_at = Instant::now();
                    let steps = run.coord.as_ref().map_or(0, |c| c.steps()) + run.excused;
                    write_all(fd, &Msg::Alive { steps }.encode().0);
                }
                let every = ms(ALIVE_EVERY);
                if t < 0 || t > every {
                    every
                } else {
                    t
                }
            } else {
                t
            }
        };
        // SAFETY: pfds is a valid array of pollfd.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout) };
        let mut g = lock();
        let Some(run) = g.as_mut() else { return };
        if run.coord.is_none() {
            return;
        }
        if local {
            if n > 0 && pfds[1].revents != 0 {
                let mut b = [0u8; 8];
                read_exact(wake, &mut b);
            }
            let end = match REPORT.load(Ordering::SeqCst) {
                CRASH => Some(End::Crash {
                    signal: CRASH_SIGNAL.load(Ordering::SeqCst),
                    pc: CRASH_PC.load(Ordering::SeqCst),
                    tid: reporter(),
                }),
                ASSERT => Some(End::Assert(
                    std::mem::take(&mut *ASSERT_TEXT.lock().unwrap_or_else(|e| e.into_inner())),
                    reporter(),
                )),
                _ => None,
            };
            if let Some(end) = end {
                run.conclude(end);
                ACK.grant();
                return;
            }
            if let Some(t) = run.gone_wait.take() {
                run.await_gone(t);
                run.quiet = Instant::now();
            }
        }
        // Something other than a wake-up of this thread happened (always, when n > 0, with
        // the socket transport).
        let others = if local {
            n > 0
                && pfds
                    .iter()
                    .enumerate()
                    .any(|(i, p)| i != 1 && p.revents != 0)
        } else {
            n > 0
        };
        let silent_for = |run: &Run| ms(run.quiet.elapsed());
        let mut timed_out = (n == 0 || (local && !others))
            && cfg.step_timeout_ms > 0
            && silent_for(run) >= cfg.step_timeout_ms;
        if timed_out {
            // A tick of virtual time that is due may end a wait (this thread may have had
            // no CPU for a while on a loaded machine): its decision is progress, not a hang.
            run.tick();
            run.flush();
            run.decide_all(None);
            timed_out = silent_for(run) >= cfg.step_timeout_ms;
        }
        if timed_out
            && cfg.standalone()
            && run
                .coord
                .as_ref()
                .is_some_and(|c| c.state().num_threads() == 1)
        {
            // One thread (a wrapper waiting for its child, say): nothing to schedule,
            // so waiting is not a hang, and ending here would orphan the child.
            run.quiet = Instant::now();
            continue;
        }
        if timed_out && run.kernel_waits.excuse(millis(cfg.step_timeout_ms)) {
            // A thread waits in the kernel with a timeout: it comes back by itself.
            run.quiet = Instant::now();
            run.excused += 1;
            continue;
        }
        let computing = if timed_out {
            let limit = millis(cfg.compute_timeout_ms.max(cfg.step_timeout_ms));
            let now = Instant::now();
            let looks = run
                .silent_stats()
                .into_iter()
                .map(|(t, p)| (t, std::fs::read_to_string(p).ok()));
            let ran = run.outside_clock.ran_since(run.quiet);
            match run.computing.judge(run.quiet, now, looks, ran, limit) {
                Judged::Computing => {
                    // Running on a CPU: a long computation (or an endless loop, told
                    // apart only by the compute timeout).
                    run.quiet = now;
                    run.excused += 1;
                    continue;
                }
                Judged::TooLong(spent) => Some(ms(spent).max(0) as u64),
                Judged::Idle => None,
            }
        } else {
            None
        };
        if timed_out {
            let threads = run.unposted_names();
            let why = match computing {
                Some(spent) => format!(
                    "thread(s) {} kept computing for {spent} ms without reaching a scheduling \
                     point (an endless loop, or a computation longer than the compute timeout)",
                    threads.join(", ")
                ),
                None => format!(
                    "thread(s) {} did not reach a scheduling point within {} ms",
                    threads.join(", "),
                    cfg.step_timeout_ms
                ),
            };
            run.conclude(End::Hang(why, threads, computing));
            // SAFETY: nothing can continue; end the process.
            unsafe { libc::_exit(1) }
        }
        let probe = if local {
            !others
                && cfg.blocked_after_ms > 0
                && ms(run.quiet.max(run.probed).elapsed()) >= cfg.blocked_after_ms
        } else {
            n == 0
        };
        if probe {
            run.probe();
        } else if n != 0 && (!local || others) {
            run.quiet = Instant::now();
        }
        if n < 0 {
            if conn::errno() == libc::EINTR {
                continue;
            }
            conn::die("poll failed in the coordinator");
        }
        let ready: Vec<usize> = (first_peer..pfds.len())
            .filter(|&i| pfds[i].revents != 0)
            .collect();
        // Peers are taken from the back, so that a removal does not move those before;
        // a new connection is accepted after them.
        for i in ready.into_iter().rev() {
            if let Some((end, fd)) = run.receive(i - first_peer) {
                run.conclude(end);
                write_all(
                    fd,
                    &Reply {
                        result: 0,
                        value: 0,
                    }
                    .encode(),
                );
                return;
            }
        }
        if pfds[0].revents != 0 {
            run.accept(listener);
        }
        run.tick();
        run.flush();
        run.decide_all(None);
    }
}

impl Run {
    /// Log an observed access of thread `t` ([`Msg::Observed`]; anything else is ignored)
    /// when the runner asked for a trace, once between two posts (see [`Run::observed`]).
    fn log_observed(&mut self, t: Tid, msg: &Msg) {
        let (
            true,
            &Msg::Observed {
                write,
                addr,
                size,
                pc,
            },
        ) = (self.log.traced(), msg)
        else {
            return;
        };
        if self.observed.insert((write, addr, size, pc)) {
            self.log.push(LogRec::Observed {
                t,
                write,
                addr,
                size,
                pc,
            });
        }
    }

    fn fd_of(&self, tid: Tid) -> Option<c_int> {
        self.peers.iter().find(|p| p.tid == Some(tid)).map(|p| p.fd)
    }

    fn posted(&self, t: Tid) -> bool {
        self.posts.iter().any(|&(p, _, _)| p == t)
    }

    /// Set running thread `t` aside as outside control: found so in `/proc` ([`Run::probe`]),
    /// or it said it goes on outside ([`Msg::Leaving`]). Returns whether it was.
    fn set_aside(&mut self, t: Tid) -> bool {
        let Some(coord) = self.coord.as_mut() else {
            return false;
        };
        if coord.mark_outside(t).is_err() {
            return false;
        }
        self.log.push(LogRec::Outside { t });
        self.outside += 1;
        true
    }

    /// Thread `t` waits in the kernel for at most `ns` ([`Msg::KernelWait`]): its silence
    /// is excused until then, and virtual time does not pass the wait's deadline while it
    /// is outside ([`Coordinator::kernel_wait`]).
    fn kernel_wait(&mut self, t: Tid, ns: u64) {
        self.kernel_waits.announce(ns);
        if let Some(coord) = self.coord.as_mut() {
            coord.kernel_wait(t, ns);
            self.log.push(LogRec::KernelWait { t, ns });
        }
    }

    /// The threads a silence waits for: granted and not posted, or set aside outside
    /// control (a hang report's culprits).
    fn awaited(&self) -> Vec<Tid> {
        let Some(coord) = self.coord.as_ref() else {
            return Vec::new();
        };
        let st = coord.state();
        st.running()
            .filter(|&t| !self.posted(t))
            .chain(st.outside())
            .collect()
    }

    /// The `stat` paths of the [`Run::awaited`] threads whose kernel tid is known.
    fn silent_stats(&self) -> Vec<(Tid, String)> {
        self.awaited()
            .into_iter()
            .filter_map(|t| {
                let ktid = match self.locals.iter().find(|l| l.tid == t) {
                    Some(l) => l.ktid,
                    None => self.peers.iter().find(|p| p.tid == Some(t))?.ktid,
                };
                (ktid != 0).then(|| (t, format!("/proc/{ktid}/stat")))
            })
            .collect()
    }

    /// The names of the [`Run::awaited`] threads.
    fn unposted_names(&self) -> Vec<String> {
        let Some(coord) = self.coord.as_ref() else {
            return Vec::new();
        };
        let st = coord.state();
        self.awaited()
            .into_iter()
            .map(|t| st.name(t).to_string())
            .collect()
    }

    /// Milliseconds (rounded up) until virtual time is due a tick, if the run waits for a
    /// thread outside control ([`Coordinator::waits_outside`]).
    fn tick_in(&self) -> Option<i32> {
        let coord = self.coord.as_ref()?;
        coord.waits_outside().then(|| {
            let left = OUTSIDE_TICK.saturating_sub(self.quiet.max(self.ticked).elapsed());
            left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
        })
    }

    /// Let virtual time pass by a tick, if one is due ([`Coordinator::pass_outside_time`]),
    /// logged for the runner's replay.
    fn tick(&mut self) {
        if self.tick_in() != Some(0) {
            return;
        }
        let now = Instant::now();
        self.ticked = now;
        let hold = silent::woken_hold(
            millis(self.cfg.blocked_after_ms),
            millis(self.cfg.step_timeout_ms),
        );
        let Some(coord) = self.coord.as_mut() else {
            return;
        };
        let st = coord.state();
        let passed = self.outside_clock.tick(
            now,
            self.quiet,
            hold,
            st.outside().count(),
            |t| st.status(t) == pos_sched::state::Status::Outside,
            |p| std::fs::read_to_string(p).ok(),
        );
        // None: a thread set aside in the kernel is runnable again, and no time passes
        // before it is back ([`silent::woken_hold`]).
        if let Some(asleep) = passed {
            coord.pass_outside_time(asleep);
            self.log.push(match asleep {
                Some(d) => LogRec::AsleepTick {
                    ns: d.as_nanos().min(u64::MAX as u128) as u64,
                },
                None => LogRec::Tick,
            });
        }
    }

    /// Look up the silent threads in `/proc` and set aside those blocked outside control
    /// (or, past a quarter of the step timeout, spinning while another could run).
    fn probe(&mut self) {
        let cfg = self.cfg;
        self.probed = Instant::now();
        // As the runner: a thread running user code for a quarter of the step
        // timeout (a spin-wait) is set aside too when another could use the turn.
        let spin = silent::spin_after(millis(cfg.blocked_after_ms), millis(cfg.step_timeout_ms));
        let spun = cfg.blocked_after_ms > 0 && self.quiet.elapsed() >= spin;
        for (t, fd_there, ktid, seat) in self.silent() {
            let before = seat.map(|s| s.inside.load(Ordering::SeqCst));
            let view = kernel_view(ktid, fd_there);
            // A thread that entered libpos meanwhile (asleep on the run's lock, say) is
            // not outside control.
            if before.is_some_and(|b| b % 2 == 1)
                || seat.map(|s| s.inside.load(Ordering::SeqCst)) != before
            {
                continue;
            }
            let Some(coord) = self.coord.as_ref() else {
                return;
            };
            let outside = view == Silent::BlockedOutside
                || (spun
                    && view == Silent::RunningUserCode
                    && (coord.state().others_could_run(t)
                        || self.posts.iter().any(|&(p, _, _)| p != t)));
            if outside && self.set_aside(t) {
                crate::affinity::free_all(ktid);
                let stat = format!("/proc/{ktid}/stat");
                self.outside_clock
                    .note(t, stat, view == Silent::BlockedOutside);
            }
        }
    }

    fn accept(&mut self, listener: c_int) {
        // SAFETY: accept on our listening socket.
        let fd = unsafe {
            libc::accept4(
                listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if fd >= 0 {
            let fd = fds::adopt_fd(fd);
            self.peers.push(Peer {
                fd,
                tid: None,
                ktid: 0,
                fd_there: -1,
            });
        }
    }

    /// The running threads that have not posted and can be looked up in `/proc`: (tid, its
    /// connection's descriptor in the program or -1 for one that posts in-process, kernel
    /// tid, its seat if it posts in-process).
    fn silent(&self) -> Vec<(Tid, c_int, u32, Option<&'static Seat>)> {
        let Some(coord) = self.coord.as_ref() else {
            return Vec::new();
        };
        coord
            .state()
            .running()
            .filter(|&t| !self.posted(t))
            .filter_map(|t| {
                if let Some(l) = self.locals.iter().find(|l| l.tid == t) {
                    return (l.ktid != 0).then_some((t, -1, l.ktid, Some(l.seat)));
                }
                let p = self.peers.iter().find(|p| p.tid == Some(t))?;
                (p.ktid != 0).then_some((t, p.fd_there, p.ktid, None))
            })
            .collect()
    }

    /// Wait (at most 100 ms) until thread `tid`, whose exit was just granted, is gone: past
    /// its `Exit` it still runs glibc's teardown outside control (destructors, returning its
    /// malloc arena), which must not race with the next granted thread (the heap a later
    /// thread gets would depend on timing). The main thread stays a zombie: not waited for.
    fn await_gone(&self, tid: Tid) {
        await_ktid_gone(self.ktid_of(tid));
    }

    /// Kernel id of thread `tid` of this run (0: unknown).
    fn ktid_of(&self, tid: Tid) -> u32 {
        self.peers
            .iter()
            .find(|p| p.tid == Some(tid))
            .map(|p| p.ktid)
            .or_else(|| self.locals.iter().find(|l| l.tid == tid).map(|l| l.ktid))
            .unwrap_or(0)
    }

    /// Hand `reply` to thread `tid`: returned when it is the deciding thread `me`, through
    /// its baton when it posts in-process, else on its connection.
    fn deliver(&mut self, tid: Tid, reply: Reply, me: Option<Tid>) -> Option<Reply> {
        let gone = std::mem::take(&mut self.gone_next);
        let local = self.locals.iter().find(|l| l.tid == tid);
        match local {
            Some(l) if gone != 0 => l.seat.await_ktid.store(gone, Ordering::Relaxed),
            Some(_) => {}
            // Not a thread of this process (cannot be, without peers): wait here.
            None => await_ktid_gone(gone),
        }
        if me == Some(tid) {
            return Some(reply);
        }
        if let Some(l) = local {
            if self.cfg.record_latency {
                l.seat.granted_ns.store(conn::now_ns(), Ordering::Relaxed);
            }
            l.seat.result.store(reply.result, Ordering::Relaxed);
            l.seat.value.store(reply.value, Ordering::Relaxed);
            l.seat.baton.grant();
        } else if let Some(fd) = self.fd_of(tid) {
            write_all(fd, &reply.encode());
        }
        None
    }

    /// Decide and grant until the coordinator waits for a post: `me` is the thread of this
    /// process that decides (its own grant is returned, not handed over), `None` for the
    /// hidden thread.
    fn decide_all(&mut self, me: Option<Tid>) -> Option<Reply> {
        if me.is_some() && self.gone_wait.is_some() {
            return None; // the hidden thread decides once the exited thread is gone
        }
        let mut mine = None;
        loop {
            let coord = self.coord.as_mut()?;
            let decision = coord.decide();
            let grant = match decision {
                Decision::Grant { tid, .. } => Some(tid),
                _ => None,
            };
            self.log.push(LogRec::Decide { grant });
            match decision {
                Decision::Wait => return mine,
                Decision::Grant {
                    tid,
                    op,
                    result,
                    child,
                    now,
                } => {
                    let reply = Reply::grant(result, child, now);
                    // Only the main process's exit ends the run (a forked child's ends its
                    // own process: its threads are then finished in the state).
                    let main = coord.state().process_of(tid) == 0;
                    if let (Op::ProcessExit { code }, true) = (op, main) {
                        self.conclude(End::Exit(code));
                        return self.deliver(tid, reply, me).or(mine);
                    }
                    if let Some(r) = self.deliver(tid, reply, me) {
                        mine = Some(r);
                    }
                    self.quiet = Instant::now();
                    if op == Op::Exit {
                        match me {
                            // Only threads of this process: whoever gets the next turn
                            // waits for the exited thread to be gone (no hop through the
                            // hidden thread).
                            Some(_) if self.peers.is_empty() => self.gone_next = self.ktid_of(tid),
                            Some(_) => {
                                self.gone_wait = Some(tid);
                                wake_hidden();
                                return mine;
                            }
                            None => self.await_gone(tid),
                        }
                    }
                }
                Decision::Over => {
                    self.conclude(End::Finished);
                    return mine;
                }
                Decision::Deadlock(d) => {
                    if let Some(t) = await_outside_signal(coord, self.cfg) {
                        self.log.push(LogRec::Interrupted { t });
                        continue;
                    }
                    if self.peer_gone() {
                        // The hidden thread reads its connection's end and decides again.
                        if me.is_some() {
                            wake_hidden();
                        }
                        return mine;
                    }
                    self.conclude(End::Deadlock(d));
                    // SAFETY: nothing can continue; end the process.
                    unsafe { libc::_exit(1) }
                }
                Decision::StepLimit => {
                    self.conclude(End::Livelock);
                    // SAFETY: as above.
                    unsafe { libc::_exit(1) }
                }
                Decision::Diverged(d) => {
                    self.conclude(End::Diverged(d));
                    // SAFETY: as above.
                    unsafe { libc::_exit(1) }
                }
            }
        }
    }

    /// Whether a thread of another process of the run, which the model has not seen finish,
    /// is gone from the kernel or a zombie's (its process was killed: probe 21's Python
    /// `multiprocessing.Pool` terminating its workers was a false `deadlock`): its
    /// connection's end, which the hidden thread reads, tells the model. For at most
    /// [`GONE_GRACE`] of one deadlock, in case that end never comes (a descendant holding
    /// the connection).
    fn peer_gone(&mut self) -> bool {
        let Some(coord) = self.coord.as_ref() else {
            return false;
        };
        let st = coord.state();
        let gone = self.peers.iter().any(|p| {
            p.ktid != 0
                && p.tid.is_some_and(|t| st.status(t) != Status::Finished)
                && !crate::procfs::alive(p.ktid as libc::pid_t)
        });
        if !gone {
            self.gone_since = None;
            return false;
        }
        self.gone_since.get_or_insert_with(Instant::now).elapsed() < GONE_GRACE
    }

    /// Read one message from peer `i`; returns how the run ended if it did, and the fd of
    /// the reporting thread, which waits for an acknowledgement.
    fn receive(&mut self, i: usize) -> Option<(End, c_int)> {
        let fd = self.peers[i].fd;
        let coord = self.coord.as_mut()?;
        let mut head = [0u8; MSG_LEN];
        if !read_exact(fd, &mut head) {
            let peer = self.peers.remove(i);
            fds::close_ours(peer.fd);
            if let Some(t) = peer.tid {
                self.posts.retain(|&(p, _, _)| p != t);
                if (t as usize) < coord.state().num_threads()
                    && coord.state().status(t) != Status::Finished
                {
                    coord.state_mut().mark_finished(t);
                    self.log.push(LogRec::Finished { t });
                }
            }
            return None;
        }
        let msg = match Msg::decode(&head) {
            Ok(Ok(m)) => m,
            Ok(Err(len)) => {
                let mut payload = vec![0u8; len];
                if !read_exact(fd, &mut payload) {
                    conn::die("truncated message");
                }
                Msg::with_payload(&head, &payload)
            }
            Err(e) => conn::die(&e.to_string()),
        };
        match msg {
            Msg::Hello { tid, ktid, fd, .. } => {
                self.peers[i].tid = Some(tid);
                self.peers[i].ktid = ktid;
                self.peers[i].fd_there = fd;
            }
            Msg::Post(op) => match self.peers[i].tid {
                Some(t) => {
                    // Its signals were handled before this post.
                    crate::signal::queued_in_peer(t, false);
                    // A forked child's objects live in its own address space (as the
                    // runner's decision loop keeps them apart).
                    if coord.state().left_with_its_process(t) {
                        return None;
                    }
                    let p = coord.state().space_of(t);
                    let pc = frame_pc(&head).unwrap_or(0);
                    self.posts.push((t, op.in_process(p), pc))
                }
                None => conn::die("post before hello"),
            },
            Msg::SemInit { .. }
            | Msg::BarrierInit { .. }
            | Msg::OnceInit { .. }
            | Msg::MutexInit { .. } => {
                let p = self.peers[i].tid.map_or(0, |t| coord.state().space_of(t));
                initialise(coord, &mut self.log, &msg, p);
            }
            Msg::Assert { text } => return Some((End::Assert(text, self.peers[i].tid), fd)),
            Msg::Crash { signal, pc } => {
                let tid = self.peers[i].tid;
                return Some((End::Crash { signal, pc, tid }, fd));
            }
            // Only a runner sends these, and only the runner reads them.
            Msg::End { .. } | Msg::Alive { .. } | Msg::Concluding { .. } => {}
            Msg::KernelWait { ns } => {
                if let Some(t) = self.peers[i].tid {
                    self.kernel_wait(t, ns);
                }
            }
            Msg::Leaving => {
                if let Some(t) = self.peers[i].tid {
                    self.set_aside(t);
                }
            }
            // An observed access (`auto` points) matters only to the runner's race detector.
            Msg::Observed { .. } => {
                if let Some(t) = self.peers[i].tid {
                    self.log_observed(t, &msg);
                }
            }
            Msg::At { .. } => {}
            Msg::Interrupted => {
                if let Some(t) = self.peers[i].tid {
                    crate::signal::queued_in_peer(t, true);
                }
            }
        }
        None
    }

    /// Hand the buffered posts to the coordinator, in thread order, once every running
    /// thread has posted.
    fn flush(&mut self) {
        let Some(coord) = self.coord.as_mut() else {
            return;
        };
        let all = coord
            .state()
            .running()
            .all(|t| self.posts.iter().any(|&(p, _, _)| p == t));
        if !all {
            return;
        }
        self.posts.sort_by_key(|&(t, _, _)| t);
        for (t, op, pc) in self.posts.drain(..) {
            self.log.push(LogRec::Post { t, op, pc });
            self.observed.clear();
            if let Err(e) = coord.post(t, op) {
                conn::die(&format!("protocol: {e}"));
            }
        }
    }

    /// What the runner is told of `end` (thread names from `coord`).
    fn verdict(&self, end: End, coord: &Coordinator<'_>) -> Verdict {
        let st = coord.state();
        let name = |t: Option<Tid>| {
            // Unknown: the one thread that had the turn, if only one had.
            let t = t.or_else(|| {
                let mut running = st.running();
                match (running.next(), running.next()) {
                    (Some(t), None) => Some(t),
                    _ => None,
                }
            });
            t.filter(|&t| (t as usize) < st.num_threads())
                .map_or_else(|| "?".to_string(), |t| st.name(t).to_string())
        };
        match end {
            End::Exit(code) => Verdict::Exit { code },
            End::Finished => Verdict::Finished,
            End::Assert(text, t) => Verdict::Assert {
                text,
                thread: name(t),
            },
            End::Crash { signal, pc, tid } => Verdict::Crash {
                signal,
                pc,
                thread: name(tid),
            },
            End::Deadlock(report) => Verdict::Deadlock { report },
            End::Livelock => Verdict::StepLimit {
                live: (0..st.num_threads())
                    .filter(|&t| st.status(t as Tid) != Status::Finished)
                    .count(),
            },
            End::Hang(_, threads, computing) => Verdict::Hang {
                threads,
                waited_ms: computing.unwrap_or(self.cfg.step_timeout_ms.max(0) as u64),
                computing: computing.is_some(),
            },
            End::Diverged(d) => Verdict::Diverged {
                step: d.step,
                reason: d.reason,
            },
        }
    }

    /// Print the outcome and write the schedule (the caller then releases the thread that
    /// ended the run, if one waits). The run is over afterwards.
    fn conclude(&mut self, end: End) {
        let Some(coord) = self.coord.take() else {
            return;
        };
        let cfg = self.cfg;
        let steps = coord.steps();
        // A process that never created a thread and ended well (a wrapper such as `timeout`
        // or `env`, whose exec'd program reports for itself) says nothing and writes no
        // schedule: it would overwrite the program's.
        let quiet = coord.state().num_threads() == 1 && end.kind() == "ok";
        if let Sink::Runner(fd) = cfg.sink {
            // Making the report takes a while for a long run: the runner waits for it. A
            // short run's report is made at once, and comes in one write.
            if steps >= CONCLUDING_AFTER {
                write_all(fd, &Msg::Concluding { steps }.encode().0);
            }
            let verdict = self.verdict(end, &coord);
            let report = inproc::End {
                verdict,
                steps,
                schedule: coord.finish(),
                outside: self.outside,
                latencies_ns: std::mem::take(&mut self.latencies),
                log: self.log.for_end(),
            };
            let end = Msg::End {
                json: serde_json::to_vec(&report).unwrap_or_default(),
            };
            if !write_all(fd, &end.encode_whole()) {
                conn::die("cannot report the run's end to the runner");
            }
            return;
        }
        let sched = coord.finish();
        if quiet {
            return;
        }
        match end.detail() {
            Some(d) => eprintln!("poscheck: outcome={} steps={steps}: {d}", end.kind()),
            None => eprintln!("poscheck: outcome={} steps={steps}", end.kind()),
        }
        if self.outside > 0 {
            eprintln!(
                "poscheck: partial run: {} time(s) a thread was blocked outside control (in a \
                 call libpos does not control, or spinning without a point) while the others \
                 ran; this schedule may not replay exactly",
                self.outside
            );
        }
        if let Some(path) = &cfg.schedule_out {
            let (program, args) = command_line();
            let s = Schedule {
                program,
                args,
                algo: cfg.algo.clone(),
                seed: cfg.seed,
                try_index: 0,
                points: cfg.points.clone(),
                outcome: end.kind().into(),
                timeouts: if cfg.timeouts_any {
                    "any".into()
                } else {
                    String::new()
                },
                real_sleep: crate::process::REAL_SLEEP.load(std::sync::atomic::Ordering::Relaxed),
                steps: sched,
            };
            let written = serde_json::to_string_pretty(&s)
                .map_err(|e| e.to_string())
                .and_then(|j| std::fs::write(path, j + "\n").map_err(|e| e.to_string()));
            if let Err(e) = written {
                eprintln!("poscheck: cannot write POS_SCHEDULE_OUT {path}: {e}");
            }
        }
    }
}

/// Wait until thread `ktid` of this process is gone from the kernel (its exit granted, its
/// teardown running uncontrolled), at most 100 ms: what the next turn must not overlap.
/// Allocates nothing (it may run on a program thread outside libpos's private heap, and how
/// often it polls depends on timing): the path and the read use stack buffers.
///
/// A thread of this process is polled with `tgkill(pid, ktid, 0)`, which fails with `ESRCH`
/// once the kernel has released it: a system call, where reading its `/proc` `stat` was an
/// open, a read and a close of procfs, several per thread exit (about 8 % of an execution of
/// readers(8)). A thread of a forked child, which `tgkill` does not find here, is polled
/// through `/proc`.
fn await_ktid_gone(ktid: u32) {
    if ktid == 0 || ktid == std::process::id() {
        return;
    }
    let _b = Busy::enter();
    let start = Instant::now();
    let ours = || crate::procfs::our_thread(ktid as libc::pid_t);
    let alive: &dyn Fn() -> bool = if ours() {
        &ours
    } else {
        &|| crate::procfs::alive(ktid as libc::pid_t)
    };
    while alive() && start.elapsed() < std::time::Duration::from_millis(100) {
        std::thread::yield_now();
    }
}

/// `SemInit`, `BarrierInit`, `OnceInit` or `MutexInit` `msg` from a thread of process `p` (0:
/// this one; a forked child's objects live in its own address space): the coordinator learns
/// it, and the log for the runner records it.
fn initialise(coord: &mut Coordinator<'_>, log: &mut Log, msg: &Msg, p: u32) {
    if let Some(rec) = LogRec::of_init(msg, p) {
        rec.initialise(coord);
        log.push(rec);
    }
}

/// What the kernel shows of silent thread `ktid` of this process, whose connection here is
/// `fd` ([`silent::classify`]).
fn kernel_view(ktid: u32, fd: c_int) -> Silent {
    // `/proc/TID`, not `/proc/self/task/TID`: a silent thread may belong to a forked child
    // process of the run (a daemon's `pause()` was never set aside: a hang).
    let dir = format!("/proc/{ktid}");
    match std::fs::read_to_string(format!("{dir}/stat")) {
        Ok(stat) => silent::classify(
            &stat,
            || std::fs::read_to_string(format!("{dir}/syscall")).ok(),
            fd,
        ),
        Err(_) => Silent::Other,
    }
}

fn pollin(fd: c_int) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// The program and its arguments, from `/proc/self/cmdline`.
fn command_line() -> (String, Vec<String>) {
    let raw = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let mut parts = raw
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned());
    (parts.next().unwrap_or_default(), parts.collect())
}

/// Every thread is blocked. Before that is a deadlock, a signal from outside the run may
/// still end a wait, as it would natively (a child's `SIGCHLD` whose handler posts the
/// semaphore the parent waits on): when the program handles a signal, wait up to
/// `--blocked-after` (half the step timeout while a child process still runs) for one to
/// be queued on a blocked thread, and end that thread's wait for its handler
/// ([`State::interrupt_from_outside`](pos_sched::state::State::interrupt_from_outside)).
/// Returns that thread; `None`: a deadlock indeed.
fn await_outside_signal(coord: &mut Coordinator<'static>, cfg: &Config) -> Option<Tid> {
    if !crate::signal::handles_any() {
        return None;
    }
    let grace = silent::outside_signal_grace(
        millis(cfg.blocked_after_ms),
        millis(cfg.step_timeout_ms),
        children_running(),
    );
    let start = Instant::now();
    loop {
        while let Some(t) = crate::signal::outside_signal() {
            if coord.state_mut().interrupt_from_outside(t) {
                return Some(t);
            }
        }
        if start.elapsed() >= grace {
            return None;
        }
        let ms = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: a real 1 ms sleep (not the program's virtual one).
        unsafe { real::nanosleep(&ms, std::ptr::null_mut()) };
    }
}

/// Whether this process has a child that has not exited yet (whose `SIGCHLD` may come).
fn children_running() -> bool {
    // SAFETY: a zeroed siginfo is a valid out-parameter; WNOWAIT leaves any status in place.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        real::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
            && info.si_pid() == 0
    }
}

/// `m` milliseconds of the configuration (negative: none).
fn millis(m: i32) -> std::time::Duration {
    std::time::Duration::from_millis(m.max(0) as u64)
}
