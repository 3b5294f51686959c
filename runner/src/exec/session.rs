//! One controlled run of a real program: a temp dir with a Unix socket, the program (with
//! libpos.so preloaded) forked by the worker's fork server ([`crate::exec::forkserver`]) or
//! spawned, one connection per program thread, the run's I/O thread
//! ([`crate::exec::pump`]) feeding one channel, and one decision loop over
//! [`pos_sched::Coordinator`] that owns all the state and lets at most one program thread
//! run at a time. A run decided in the program ([`crate::exec::inproc`]) is watched on the
//! calling thread, its I/O polled inline.

use crate::exec::cleanup;
use crate::exec::elf::{self, Mapping};
use crate::exec::forkserver;
use crate::exec::process::{self, Exit};
use crate::exec::pump::{self, Ev, ExitWatch, Inline, Pump, Sources};
use crate::exec::silence::{set_aside, Silence};
use crate::exec::{inproc, journal, rundirs};
use crate::suite::outcome::Outcome;
use anyhow::{Context, Result};
use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, TryRecvError};
use pos_sched::coordinator::{Coordinator, Decision};
use pos_sched::event::{Event, Op, Tid};
use pos_sched::protocol::inproc::LogRec;
use pos_sched::protocol::{Msg, Reply, ENV_RUN_MARK, ENV_SOCKET};
use pos_sched::schedule::Step;
use pos_sched::silent::{self, Silent};
use pos_sched::state::Status;
use pos_sched::Strategy;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Default `--step-timeout`.
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(2);
/// Default `--blocked-after`: how long a granted thread may stay silent before the kernel is
/// asked whether it is blocked outside control (well under the step timeout, well over a
/// scheduling step).
pub const DEFAULT_BLOCKED_AFTER: Duration = Duration::from_millis(30);
/// How long a thread whose connection closed unexpectedly is given for the process to die
/// (a crash closes every connection before the exit status is visible) before it is
/// considered finished and the run goes on without it.
const VANISH_GRACE: Duration = Duration::from_millis(200);
/// How long to wait, after the run's end, for queued messages (assert text, crash pc).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// After a death by signal, how long to wait for the dying thread's report (its reader
/// thread, or even its connection's accept, may lag behind the exit status).
const REPORT_GRACE: Duration = Duration::from_millis(100);

/// Everything a run needs besides the strategy and the seed.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub libpos: PathBuf,
    pub step_timeout: Duration,
    /// How long a silent thread may compute before the run is a hang
    /// ([`pos_sched::silent::Computing`]; at least `step_timeout`).
    pub compute_timeout: Duration,
    pub max_steps: u64,
    /// Exit codes that are not a bug.
    pub ok_exit_codes: Vec<i32>,
    /// `POSCHECK_POINTS` for libpos (`sync`, `mem`, `races`, `auto`), if not the default.
    pub points: Option<String>,
    /// `POSCHECK_RACES_FILE` for libpos (the racing pcs of `races` mode).
    pub races_file: Option<PathBuf>,
    /// Keep every executed event with its instrumented pc ([`RunResult::trace`]), for the
    /// race detector of the `races` profiling runs.
    pub record_trace: bool,
    /// With `record_trace`: also put the plain accesses libpos observed (`auto` points,
    /// [`Msg::Observed`]) into the trace where they executed, for online race learning.
    pub observe: bool,
    /// Real sleeps and clock reads, timed waits time out when unavailable
    /// (`POS_REAL_SLEEP=1`, `--real-sleep`).
    pub real_sleep: bool,
    /// `--timeouts any`: a timed wait may also time out before its deadline.
    pub timeouts_any: bool,
    /// Record per-step grant latencies (for `poscheck bench`).
    pub record_latency: bool,
    /// The program's file mappings, read from `/proc` in the first run and shared by the
    /// later ones (with ASLR off every run of the program maps its files at the same
    /// addresses, and reading the maps each time cost a noticeable share of a short run).
    pub maps: Arc<OnceLock<Vec<Mapping>>>,
    /// Fork runs from one started copy of the program per worker thread
    /// ([`crate::exec::forkserver`]) instead of spawning it every time.
    pub fork_server: bool,
    /// How long the decision loop busy-waits for a granted thread's next post before
    /// parking. Worth it only when a core is free for it: `run` sets zero when its jobs
    /// already occupy every core.
    pub spin: Duration,
    /// After this long without a post, a granted thread that the kernel shows blocked in a
    /// call libpos does not control is set aside ([`Status::Outside`]) and the others run;
    /// `None`: never (every silence is a hang after the step timeout).
    pub blocked_after: Option<Duration>,
    /// How the program is controlled: libpos preloaded, or traced ([`crate::exec::ptrace`]).
    /// Settled per program by [`resolve_backend`] from `requested`.
    pub backend: Backend,
    /// `--backend`: `None` is `auto` (ptrace for statically linked programs, else preload).
    pub requested: Option<Backend>,
    /// Ptrace backend: breakpoints at the synchronisation functions (of a statically linked
    /// program with a symbol table, or of a dynamic program's C library) make their calls
    /// scheduling points (off: `--syscall-points-only`).
    pub call_points: bool,
    /// Ask libpos for the caller's pc of every post ([`pos_sched::protocol::ENV_CALLER_PCS`])
    /// and keep them by step ([`RunResult::step_pcs`]): readable traces.
    pub caller_pcs: bool,
    /// Keep each run's process on the CPU it starts on ([`pos_sched::protocol::ENV_PIN`];
    /// off: `--no-pin`).
    pub pin: bool,
    /// `poscheck debug`: run the program under gdb, stop at a step.
    pub debug: Option<DebugRun>,
    /// Where the preload backend's decisions are made: in the program when the run allows
    /// it ([`crate::exec::inproc`]), or always here over the socket (`--transport socket`).
    pub transport: Transport,
}

/// `--transport`: how the preload backend's runs are decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Transport {
    /// In the program, with a futex baton, when the strategy can be built there and the run
    /// needs no per-step record (else over the socket).
    #[default]
    Baton,
    /// Here, a post and a grant per step over the socket.
    Socket,
}

impl Transport {
    pub fn parse(which: &str) -> Result<Transport> {
        match which {
            "baton" => Ok(Transport::Baton),
            "socket" => Ok(Transport::Socket),
            t => anyhow::bail!("unknown transport {t:?} (baton or socket)"),
        }
    }
}

/// How `poscheck debug` runs the program: under `gdb` (this command line, to which the
/// program and its arguments are added), with the grant of scheduling step `stop_step`
/// marked so that the thread stops in `pos_debug_stop` (see
/// [`pos_sched::protocol::Reply::encode_stop`]). gdb owns the terminal: its standard streams
/// are poscheck's, and the run has no step timeout.
#[derive(Clone, Debug)]
pub struct DebugRun {
    pub gdb: Vec<OsString>,
    pub stop_step: u64,
}

/// Settle `cfg.backend` for `cfg.program` from `cfg.requested` (see [`Backend`]); a
/// statically linked program under `--backend preload` is refused with the reason.
pub fn resolve_backend(cfg: &mut RunConfig) -> Result<()> {
    let info = elf::check(&cfg.program)?;
    cfg.backend = match cfg.requested {
        Some(Backend::Preload) if info.is_static => {
            return Err(elf::ElfError::Static(cfg.program.display().to_string()).into())
        }
        Some(b) => b,
        None if info.is_static => Backend::Ptrace,
        None => Backend::Preload,
    };
    if cfg.backend == Backend::Ptrace {
        refuse_set_id(&cfg.program)?;
    }
    Ok(())
}

/// A set-user-ID or set-group-ID program cannot be traced as what it is: the kernel drops the
/// privileges of a traced exec (and the tracer sets `no_new_privs`), so it would run as the
/// user and misbehave in ways that are no bug of its own.
fn refuse_set_id(program: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(program)
        .with_context(|| format!("cannot read {}", program.display()))?
        .permissions()
        .mode();
    let which = match (mode & 0o4000 != 0, mode & 0o2000 != 0) {
        (true, _) => "set-user-ID",
        (false, true) => "set-group-ID",
        (false, false) => return Ok(()),
    };
    anyhow::bail!(
        "{} is {which}: a traced program runs without its privileges (ptrace backend); test a copy without the {which} bit",
        program.display()
    )
}

/// How a run controls its program (`--backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// libpos.so through LD_PRELOAD (dynamically linked programs).
    Preload,
    /// ptrace and a seccomp filter: system-call scheduling points only.
    Ptrace,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Preload => "preload",
            Backend::Ptrace => "ptrace",
        }
    }

    /// `--backend WHICH`: `Some` backend, or `None` for `auto`.
    pub fn parse(which: &str) -> Result<Option<Backend>> {
        match which {
            "auto" => Ok(None),
            "preload" => Ok(Some(Backend::Preload)),
            "ptrace" => Ok(Some(Backend::Ptrace)),
            other => anyhow::bail!("--backend must be preload, ptrace or auto, not {other:?}"),
        }
    }
}

impl RunConfig {
    pub fn new(program: PathBuf, args: Vec<String>, libpos: PathBuf) -> Self {
        RunConfig {
            program,
            args,
            libpos,
            step_timeout: DEFAULT_STEP_TIMEOUT,
            compute_timeout: pos_sched::silent::DEFAULT_COMPUTE_TIMEOUT,
            max_steps: pos_sched::coordinator::DEFAULT_MAX_STEPS,
            ok_exit_codes: vec![0],
            points: None,
            races_file: None,
            record_trace: false,
            observe: false,
            real_sleep: false,
            timeouts_any: false,
            record_latency: false,
            maps: Arc::default(),
            fork_server: true,
            spin: SPIN,
            blocked_after: Some(DEFAULT_BLOCKED_AFTER),
            backend: Backend::Preload,
            requested: None,
            call_points: true,
            caller_pcs: false,
            pin: true,
            debug: None,
            transport: Transport::Baton,
        }
    }
}

/// What one run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub outcome: Outcome,
    /// The executed events in order (the run's schedule).
    pub schedule: Vec<Step>,
    pub steps: u64,
    /// Tails of the program's output.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// With [`RunConfig::record_latency`]: nanoseconds from sending a grant to receiving
    /// the same thread's next post.
    pub latencies_ns: Vec<u64>,
    /// With [`RunConfig::record_trace`]: the executed events in order, each with the
    /// instrumented pc its post carried (0 for events without one).
    pub trace: Vec<(Event, u64)>,
    /// The program's file mappings (read when thread 0 connected), to symbolise pcs.
    pub maps: Vec<Mapping>,
    /// With [`RunConfig::caller_pcs`]: by step, the pc its post was made at (0: unknown).
    pub step_pcs: Vec<u64>,
    /// How many times a granted thread was set aside as blocked outside control: a run with
    /// any is *partial*, its schedule may not replay exactly (when the thread came back
    /// depends on the kernel, not on the schedule).
    pub outside: u64,
}

/// Run `cfg.program` once under `strategy` with `seed`. Setup failures (temp dir, socket,
/// spawn) are `Err`; everything that happens once the program runs is an [`Outcome`].
pub fn run_once(cfg: &RunConfig, strategy: &mut dyn Strategy, seed: u64) -> Result<RunResult> {
    if cfg.backend == Backend::Ptrace {
        return crate::exec::ptrace::run_once(cfg, strategy, seed);
    }
    let spec = inproc::spec_for(cfg, strategy, seed);
    let (dir, sock, listener) = rundirs::take()?;
    let env = program_env(cfg);
    let key = forkserver::Key {
        program: cfg.program.clone(),
        args: cfg.args.clone(),
        env: env.clone(),
    };
    let mut server = if cfg.fork_server && cfg.debug.is_none() {
        forkserver::check_out(&key)
    } else {
        None
    };
    let forked = match server.as_mut().map(|s| s.fork(&sock)) {
        Some(Ok(run)) => Some(run),
        Some(Err(e)) => {
            server = None;
            forkserver::give_up(&key, &e);
            None
        }
        None => None,
    };
    let (mut program, main_conn) = match forked {
        Some((p, conn)) => (p, Some(conn)),
        None => {
            let mut env = env;
            env.push((ENV_SOCKET.into(), sock.clone().into()));
            match &cfg.debug {
                Some(d) => (
                    process::spawn_debugger(&d.gdb, &cfg.program, &cfg.args, &env)?,
                    None,
                ),
                None => {
                    let mut p = process::spawn(&cfg.program, &cfg.args, &env)?;
                    p.sweep_marked(&ENV_RUN_MARK.into(), &sock.clone().into());
                    (p, None)
                }
            }
        }
    };
    let _group_guard = cleanup::Guard::group(program.pid());
    if cleanup::interrupted() {
        // Started next to a Ctrl-C, after the signal thread killed the runs in flight.
        program.kill();
    }
    let (tx, rx) = unbounded();
    let exit = match &server {
        Some(s) => ExitWatch::Server {
            feed: s.exit_feed()?,
            pid: program.pid(),
        },
        None => match pump::pidfd_open(program.pid()) {
            Some(fd) => ExitWatch::Pidfd(fd),
            None => {
                program.watch(tx.clone(), Ev::Exited);
                ExitWatch::Elsewhere
            }
        },
    };
    // A run decided in the program is heard on this thread (start, end, exit); the
    // decision loop of a run over the socket has its I/O thread.
    let inline = spec.is_some() && !matches!(exit, ExitWatch::Elsewhere);
    let sources = Sources {
        listener,
        stdout: program.stdout.take(),
        stderr: program.stderr.take(),
        exit,
        main_conn,
        want_pc: cfg.record_trace || cfg.caller_pcs,
    };
    let mut io = if inline {
        Io::Inline(Inline::new(sources).context("cannot watch the run's sockets")?)
    } else {
        Io::Thread(
            Pump::start(sources, tx, DRAIN_GRACE).context("cannot start the run's I/O thread")?,
            rx,
        )
    };

    if let Some(spec) = spec {
        let journal = journal::take();
        let w = inproc::watch(
            cfg,
            server.as_ref(),
            &mut io,
            &spec,
            program.pid(),
            journal.as_ref().map(|j| j.fd()),
        );
        program.kill();
        let (stdout, stderr) = wind_up(&mut program, io, server, w.exit_seen);
        let mut outcome = name_objects(
            crate::suite::outcome::refine(harness_failure(w.outcome, &stderr), &stderr),
            &w.maps,
        );
        rundirs::retire(dir);
        // The program is gone: what its journal holds is the whole of what it decided.
        let (mut end, journalled) = inproc_end(w.end, &spec, journal.as_ref(), &mut outcome);
        if let Some(j) = journal {
            journal::give_back(j);
        }
        let (mut outcome, mut trace) = (outcome, Vec::new());
        match end.log.take().or(journalled) {
            // The runner's strategy goes through the run as if it had decided it (an
            // exploration's guide records every step).
            Some(log) => {
                let mut coord = Coordinator::new(strategy, seed, cfg.max_steps);
                if cfg.timeouts_any {
                    coord
                        .state_mut()
                        .set_timeout_policy(pos_sched::state::clock::TimeoutPolicy::Any);
                }
                match pos_sched::protocol::inproc::replay_log(&mut coord, &log) {
                    Ok(t) => trace = t,
                    Err(e) => {
                        outcome = Outcome::Error {
                            reason: format!("internal: the program's decisions do not replay: {e}"),
                        }
                    }
                }
                coord.finish();
            }
            // It learns what a run over the socket would have taught it (PCT's k).
            None => {
                strategy.begin(seed);
                strategy.end(end.steps);
            }
        }
        return Ok(RunResult {
            outcome,
            schedule: end.schedule,
            steps: end.steps,
            stdout,
            stderr,
            latencies_ns: end.latencies_ns,
            trace,
            step_pcs: Vec::new(),
            maps: w.maps,
            outside: end.outside,
        });
    }
    let mut coord = Coordinator::new(strategy, seed, cfg.max_steps);
    if cfg.timeouts_any {
        coord
            .state_mut()
            .set_timeout_policy(pos_sched::state::clock::TimeoutPolicy::Any);
    }
    let Io::Thread(pump, rx) = io else {
        unreachable!("a run over the socket has its I/O thread")
    };
    let mut lp = Loop::new(cfg, program.pid());
    lp.start_frame = true;
    let outcome = lp.drive(&mut coord, &rx);
    if cfg.debug.is_some() {
        if let Some(o) = &outcome {
            // The debugger owns the program: say what the run came to, and interrupt the
            // program (its threads wait in libpos for grants that will not come, e.g. after
            // a deadlock) so that gdb stops it and shows its threads; the run ends when gdb
            // does.
            eprintln!("poscheck debug: the run ends here: {o}");
            let main = lp.tasks.first().copied().flatten().map(|t| t.pid);
            if let Some(pid) = main.filter(|&p| p != 0) {
                // SAFETY: a signal to the program's process (gdb's inferior).
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
                eprintln!(
                    "poscheck debug: the program was interrupted (SIGINT) so that gdb shows its \
                     threads; quit gdb to end"
                );
            }
        }
        program.wait_exit();
    }
    program.kill();
    lp.drain(&rx, outcome.is_none());
    let outcome = outcome.unwrap_or_else(|| lp.classify_exit(&coord));

    let exit_seen = lp.exit.is_some();
    let (stdout, stderr) = wind_up(&mut program, Io::Thread(pump, rx), server, exit_seen);
    let outcome = name_objects(
        crate::suite::outcome::refine(harness_failure(outcome, &stderr), &stderr),
        &lp.maps,
    );
    let steps = coord.steps();
    let schedule = coord.finish();
    rundirs::retire(dir);
    Ok(RunResult {
        outcome,
        schedule,
        steps,
        stdout,
        stderr,
        latencies_ns: lp.latencies,
        trace: lp.trace,
        step_pcs: lp.step_pcs,
        maps: lp.maps,
        outside: lp.outside_episodes,
    })
}

/// A deadlock's objects named by the data symbols that hold them (`lock(mutex@0x...
/// <lock_a>)`, `a wake on futex 0x... <a>`): the model knows addresses only.
fn name_objects(outcome: Outcome, maps: &[Mapping]) -> Outcome {
    let Outcome::Deadlock { mut report } = outcome else {
        return outcome;
    };
    for b in &mut report.blocked {
        b.op = elf::name_addresses(&b.op, maps, |_| None);
        b.waits_for = elf::name_addresses(&b.waits_for, maps, |_| None);
    }
    Outcome::Deadlock { report }
}

/// How the runner hears a run: the I/O thread's channel, or its sources polled inline.
pub enum Io {
    Thread(Pump, Receiver<Ev>),
    Inline(Inline),
}

impl Io {
    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Ev, RecvTimeoutError> {
        match self {
            Io::Thread(_, rx) => rx.recv_timeout(timeout),
            Io::Inline(i) => i.recv_timeout(timeout),
        }
    }

    /// Stop watching: the output tails (stdout, stderr), and whether an exit status was
    /// read but not received.
    fn finish(self) -> ((Vec<u8>, Vec<u8>), bool) {
        let exited = |ev: &Ev| matches!(ev, Ev::Exited(_));
        match self {
            Io::Thread(pump, rx) => {
                let tails = pump.finish();
                (tails, rx.try_iter().any(|ev| exited(&ev)))
            }
            Io::Inline(i) => {
                let seen = i.pending().any(exited);
                (i.finish(DRAIN_GRACE), seen)
            }
        }
    }
}

/// After a run whose process was killed: reap it, take the output tails (stdout, stderr)
/// and give the fork server back for the next run. Its next notice must be about the next
/// run: this child's end is taken here if it was not received (`exit_seen`).
fn wind_up(
    program: &mut process::Program,
    io: Io,
    server: Option<forkserver::ForkServer>,
    exit_seen: bool,
) -> (Vec<u8>, Vec<u8>) {
    program.reap();
    let (tails, read) = io.finish();
    if let Some(mut s) = server {
        let seen = exit_seen || read;
        if (seen || s.settle(program.pid()).is_ok()) && s.release(program.pid()).is_ok() {
            forkserver::check_in(s);
        }
    }
    tails
}

/// The file mappings of the program's process `pid`, to symbolise crash pcs: read from
/// `/proc` once per program and kept in [`RunConfig::maps`] (ASLR is off, so every run of
/// it maps the same way).
pub fn program_maps(cfg: &RunConfig, pid: u32) -> Vec<Mapping> {
    if let Some(m) = cfg.maps.get().filter(|m| !m.is_empty()) {
        return m.clone();
    }
    let m = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map(|text| elf::parse_maps(&text))
        .unwrap_or_default();
    if !m.is_empty() {
        let _ = cfg.maps.set(m.clone());
    }
    m
}

/// The end report of a run decided in the program, and the coordinator's log from its
/// `journal` when the runner wants the trace ([`Spec::record_log`]) and the report does not
/// carry it. A program that died without a report (`SIGKILL`, a raw `exit_group`, the hang
/// guard) leaves the schedule and the steps its journal holds, rebuilt by replaying it, and
/// its crash `outcome` is blamed on the thread that had the turn.
fn inproc_end(
    end: Option<pos_sched::protocol::inproc::End>,
    spec: &pos_sched::protocol::inproc::Spec,
    journal: Option<&journal::Journal>,
    outcome: &mut Outcome,
) -> (
    pos_sched::protocol::inproc::End,
    Option<Vec<pos_sched::protocol::inproc::LogRec>>,
) {
    let wanted = match &end {
        Some(e) => spec.record_log && e.log.is_none(),
        None => true,
    };
    let records = journal.filter(|_| wanted).and_then(|j| j.records());
    if let Some(e) = end {
        return (e, records.filter(|_| spec.record_log));
    }
    let r = records.as_deref().map(|log| {
        pos_sched::protocol::journal::rebuild(log, spec.seed, spec.max_steps, spec.timeouts_any)
    });
    // A death by signal is blamed on the thread that had the turn, as over the socket.
    if let (Some(r), Outcome::Crash { thread, .. }) = (&r, outcome) {
        if let Some(s) = r.suspect.as_ref().filter(|_| thread == "?") {
            thread.clone_from(s);
        }
    }
    let (schedule, steps) = r.map_or((Vec::new(), 0), |r| (r.schedule, r.steps));
    let end = pos_sched::protocol::inproc::End {
        verdict: pos_sched::protocol::inproc::Verdict::Finished,
        steps,
        schedule,
        outside: 0,
        latencies_ns: Vec::new(),
        log: None,
    };
    (end, records.filter(|_| spec.record_log))
}

/// libpos's own fatal errors (exit status 70 after a `poscheck: libpos: ...` line, e.g. no
/// descriptor left for a thread's connection) are errors of the harness with their reason,
/// not an `exit-code` bug of the program.
fn harness_failure(outcome: Outcome, stderr: &[u8]) -> Outcome {
    const MARK: &str = "poscheck: libpos: ";
    if outcome != (Outcome::ExitCode { code: LIBPOS_FATAL }) {
        return outcome;
    }
    let text = String::from_utf8_lossy(stderr);
    match text.lines().rev().find_map(|l| l.split_once(MARK)) {
        Some((_, why)) => Outcome::Error {
            reason: format!("libpos stopped the program: {}", why.trim()),
        },
        None => outcome,
    }
}

/// The exit status of `conn::die` in libpos (EX_SOFTWARE).
const LIBPOS_FATAL: i32 = 70;

/// The environment a run's program gets besides the coordinator's socket.
fn program_env(cfg: &RunConfig) -> Vec<(OsString, OsString)> {
    let sanitizers = super::elf::sanitizers(&cfg.program);
    let mut env: Vec<(OsString, OsString)> = vec![
        ("LD_PRELOAD".into(), preload_value(cfg, &sanitizers.preload)),
        (
            super::cleanup::ENV_SIGMASK.into(),
            super::cleanup::original_mask().into(),
        ),
    ];
    if let Some(p) = &cfg.points {
        env.push(("POSCHECK_POINTS".into(), p.into()));
    }
    if let Some(f) = &cfg.races_file {
        env.push(("POSCHECK_RACES_FILE".into(), f.into()));
    }
    if cfg.real_sleep {
        env.push(("POS_REAL_SLEEP".into(), "1".into()));
    }
    if sanitizers.lsan {
        env.push((pos_sched::protocol::ENV_LSAN.into(), "1".into()));
    }
    if let Some((lo, hi)) = sanitizers.linked_in {
        env.push((
            pos_sched::protocol::ENV_UNTRAPPED.into(),
            format!("{lo:x}-{hi:x}").into(),
        ));
    }
    // libgomp (OpenMP) spins before it sleeps in a futex: under control a spin has no
    // scheduling point and only burns the granted thread's time (or, with an active
    // policy, never ends). Passive waiting goes straight to the futex, a scheduling
    // point. The user's own settings are kept.
    for (var, value) in [("OMP_WAIT_POLICY", "passive"), ("GOMP_SPINCOUNT", "0")] {
        if std::env::var_os(var).is_none() {
            env.push((var.into(), value.into()));
        }
    }
    // The program's threads poll for their grants as the decision loop polls for posts.
    // Always set and always six digits: the environment is part of the program's initial
    // stack, and stack addresses (of stack-allocated mutexes, say) appear in schedules,
    // which must not depend on `--jobs`.
    // Always set, with one character, for the same reason.
    env.push((
        pos_sched::protocol::ENV_CALLER_PCS.into(),
        if cfg.caller_pcs { "1" } else { "0" }.into(),
    ));
    env.push((
        pos_sched::protocol::ENV_PIN.into(),
        if cfg.pin { "1" } else { "0" }.into(),
    ));
    // libpos reads the runner's start message (see `crate::exec::inproc`).
    env.push((pos_sched::protocol::inproc::ENV_INPROC.into(), "1".into()));
    env.push((
        "POSCHECK_SPIN_US".into(),
        format!("{:06}", cfg.spin.as_micros().min(999_999)).into(),
    ));
    env
}

/// A temp dir that is removed when dropped, or by the cleanup if poscheck is interrupted.
pub struct RunDir {
    _guard: cleanup::Guard,
    _dir: tempfile::TempDir,
}

/// A fresh `poscheck-PID-XXXX` temp dir (in [`run_dir_parent`], PID this process's) with a
/// Unix socket named `sock` listening in it: a run's, or a fork server's (named alike, see
/// [`pos_sched::protocol::fork::ENV_FORK_SERVER`]).
pub fn socket_dir() -> Result<(RunDir, PathBuf, UnixListener)> {
    let (dir, guard) = cleanup::dir_with(|| {
        let d = tempfile::Builder::new()
            .prefix(&format!("poscheck-{}-", std::process::id()))
            .tempdir_in(run_dir_parent())?;
        let path = d.path().to_path_buf();
        Ok((d, path))
    })
    .context("cannot create a temporary directory")?;
    let sock = dir.path().join("sock");
    let listener = UnixListener::bind(&sock)
        .with_context(|| format!("cannot listen on {}", sock.display()))?;
    Ok((
        RunDir {
            _guard: guard,
            _dir: dir,
        },
        sock,
        listener,
    ))
}

/// Where each run's temp dir goes: `$TMPDIR` when the user set it, else `/dev/shm` (a
/// tmpfs: creating and removing a directory and a socket there costs a fraction of what it
/// costs on a disk file system, and a run does it every time), else the system temp dir.
/// The first use also removes the run dirs that a poscheck killed outright left behind
/// ([`sweep_stale_run_dirs`]).
fn run_dir_parent() -> PathBuf {
    static PARENT: OnceLock<PathBuf> = OnceLock::new();
    PARENT
        .get_or_init(|| {
            let parent = if std::env::var_os("TMPDIR").is_some() {
                std::env::temp_dir()
            } else {
                let shm = Path::new("/dev/shm");
                let writable = shm.is_dir()
                    && tempfile::Builder::new()
                        .prefix("poscheck-probe-")
                        .tempdir_in(shm)
                        .is_ok();
                if writable {
                    shm.to_path_buf()
                } else {
                    std::env::temp_dir()
                }
            };
            sweep_stale_run_dirs(&parent);
            parent
        })
        .clone()
}

/// Remove the `poscheck-PID-*` run dirs in `parent` whose poscheck is gone: a poscheck
/// killed by `SIGKILL` (the OOM killer, a CI timeout) cannot remove its own, and each held a
/// socket in `/dev/shm` for good. Best effort: what cannot be read or removed stays.
fn sweep_stale_run_dirs(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("poscheck-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// `LD_PRELOAD` for the program: `first` (the sanitizer runtimes it links: gcc's shared
/// ASan and TSan runtimes must lead the library list), then libpos, then the user's own.
fn preload_value(cfg: &RunConfig, first: &[String]) -> OsString {
    let mut v = OsString::new();
    for lib in first {
        v.push(lib);
        v.push(":");
    }
    v.push(&cfg.libpos);
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|o| !o.is_empty()) {
        v.push(":");
        v.push(old);
    }
    v
}

/// Default [`RunConfig::spin`].
pub const SPIN: Duration = Duration::from_micros(50);

/// Receive the next event, polling briefly first. A granted thread usually posts again within
/// microseconds; catching that post without parking saves the futex wake-up that otherwise
/// makes a scheduling step cost three context switches instead of the two of a plain socket
/// round trip. The poll yields the CPU between tries: the I/O thread that must deliver the
/// post is often queued on this very CPU (a pure busy-wait kept it waiting: median grant
/// latency 24–38 µs against 16–19 µs with the yield, idle 2-core machine).
fn recv_spinning(
    rx: &Receiver<Ev>,
    spin: Duration,
    timeout: Duration,
) -> Result<Ev, RecvTimeoutError> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(ev) => return Ok(ev),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        let spent = start.elapsed();
        if spent >= spin || spent >= timeout {
            return rx.recv_timeout(timeout.saturating_sub(spent));
        }
        // Yield rather than burn: the thread that will deliver the post may be queued on
        // this CPU.
        std::thread::yield_now();
    }
}

/// What the kernel shows of silent `task` ([`silent::classify`]); `Other` when it cannot be
/// looked at (gone, or `/proc` unreadable).
fn kernel_view(task: &Task) -> Silent {
    let dir = format!("/proc/{}/task/{}", task.pid, task.ktid);
    match std::fs::read_to_string(format!("{dir}/stat")) {
        Ok(stat) => silent::classify(
            &stat,
            || std::fs::read_to_string(format!("{dir}/syscall")).ok(),
            task.fd,
        ),
        Err(_) => Silent::Other,
    }
}

/// CPU clock ticks (USER_HZ, 10 ms) a silent thread with asynchronous cancellation must use
/// between two probes to count as computing (see `Loop::computing`).
const COMPUTING_TICKS: u64 = 2;

/// The CPU time (user + system, in clock ticks) `task` has used, from `/proc`.
fn cpu_ticks(task: &Task) -> Option<u64> {
    let stat =
        std::fs::read_to_string(format!("/proc/{}/task/{}/stat", task.pid, task.ktid)).ok()?;
    silent::cpu_ticks(&stat)
}

/// At most how long the decision loop waits for a thread whose exit was granted to be gone.
const EXIT_WAIT: Duration = Duration::from_millis(100);

/// Wait (at most [`EXIT_WAIT`]) until the kernel shows `task`, whose exit was just granted,
/// gone. Past its `Exit` a thread still runs glibc's teardown outside control (thread-local
/// and key destructors, returning its malloc arena and cache): granting the next step
/// meanwhile would let that race with another thread, and the heap a later thread sees (its
/// addresses in the schedule, anything that depends on them) would depend on timing, not on
/// the schedule (a detached thread's arena is reused by the next new thread, or not yet).
fn await_gone(task: &Task) {
    if task.ktid == 0 || task.ktid == task.pid {
        return; // unknown, or the main thread: it stays a zombie until the process ends
    }
    let stat = format!("/proc/{}/task/{}/stat", task.pid, task.ktid);
    let start = Instant::now();
    loop {
        let Ok(text) = std::fs::read_to_string(&stat) else {
            return;
        };
        let state = text
            .rfind(')')
            .and_then(|i| text[i + 1..].split_whitespace().next());
        if matches!(state, Some("Z" | "X" | "x")) || start.elapsed() >= EXIT_WAIT {
            return;
        }
        std::thread::yield_now();
    }
}

/// Whether a connection holds bytes the I/O thread has not read yet (a post in flight).
fn has_unread(s: &UnixStream) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: a 1-byte peek into a local buffer.
    let n = unsafe {
        libc::recv(
            std::os::fd::AsRawFd::as_raw_fd(s),
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n > 0
}

/// An observed access (or the pc of one) is no progress of the run: a thread spinning on a
/// flag without a point sends them forever, and must still end as a hang after the step
/// timeout.
fn no_progress(ev: &Ev) -> bool {
    matches!(ev, Ev::Msg(_, Msg::Observed { .. }) | Ev::Pc(..))
}

/// The decision loop's bookkeeping.
struct Loop<'c> {
    cfg: &'c RunConfig,
    pid: u32,
    /// Write halves by connection id.
    conns: Vec<Option<UnixStream>>,
    conn_tid: Vec<Option<Tid>>,
    tid_conn: Vec<Option<usize>>,
    open: usize,
    exit: Option<Exit>,
    /// `exit()` was granted: connections closing is expected.
    exiting: bool,
    last_granted: Option<Tid>,
    assert: Option<(String, Option<Tid>)>,
    crash: Option<(i32, u64, Option<Tid>)>,
    /// Threads whose connection closed without their exit, and when.
    vanished: Vec<(Tid, Instant)>,
    maps: Vec<Mapping>,
    granted_at: Vec<Option<Instant>>,
    latencies: Vec<u64>,
    /// The pc announced for the next post of each connection ([`Ev::Pc`]).
    conn_pc: Vec<u64>,
    /// The pc of each thread's pending post.
    pending_pc: Vec<u64>,
    trace: Vec<(Event, u64)>,
    /// By granted step, its post's pc ([`RunConfig::caller_pcs`]).
    step_pcs: Vec<u64>,
    /// The last event handled led to a grant (the decision loop may spin for the reply).
    just_granted: bool,
    /// By tid: the thread's process, kernel thread id and connection descriptor in the
    /// program (from its hello; ktid 0 when not sent), to look it up in `/proc`.
    tasks: Vec<Option<Task>>,
    /// Since when no event arrived and nothing was granted (the step timeout counts from
    /// it), and when `/proc` was last asked about silent threads.
    silence: Silence,
    /// Times a thread was set aside as blocked outside control ([`RunResult::outside`]).
    outside_episodes: u64,
    /// Silent threads with asynchronous cancellation: CPU ticks seen at a probe, with the
    /// scheduling step of that probe (see [`Loop::computing`]).
    cpu_seen: Vec<(Tid, u64, u64)>,
    /// The observed accesses put in the trace since the last grant (see [`Msg::Observed`]).
    observed: std::collections::HashSet<(bool, u64, u32, u64)>,
    /// Send the start message that says "over the socket" on the main thread's connection
    /// (libpos waits for one, see [`inproc::start_frame`]).
    start_frame: bool,
    /// Threads that got a signal from outside the run while blocked ([`Msg::Interrupted`]),
    /// until their next post.
    interrupted: Vec<Tid>,
    /// Every thread is blocked and the program handles a signal: until this moment, a
    /// signal from outside the run may still end a wait ([`Loop::outside_grace`]).
    grace_until: Option<Instant>,
    /// Kernel waits with a timeout that threads announced ([`Msg::KernelWait`]).
    kernel_waits: silent::KernelWaits,
}

/// Where to look for a controlled thread in `/proc`.
#[derive(Clone, Copy, Debug)]
struct Task {
    pid: u32,
    ktid: u32,
    /// Its connection in the program: a thread in a system call on it is in libpos, not
    /// blocked outside control (-1: unknown).
    fd: i32,
}

impl<'c> Loop<'c> {
    fn new(cfg: &'c RunConfig, pid: u32) -> Self {
        Loop {
            cfg,
            pid,
            conns: Vec::new(),
            conn_tid: Vec::new(),
            tid_conn: Vec::new(),
            open: 0,
            exit: None,
            exiting: false,
            last_granted: None,
            assert: None,
            crash: None,
            vanished: Vec::new(),
            maps: Vec::new(),
            granted_at: Vec::new(),
            latencies: Vec::new(),
            conn_pc: Vec::new(),
            pending_pc: Vec::new(),
            trace: Vec::new(),
            step_pcs: Vec::new(),
            just_granted: false,
            tasks: Vec::new(),
            silence: Silence::new(),
            outside_episodes: 0,
            cpu_seen: Vec::new(),
            start_frame: false,
            observed: std::collections::HashSet::new(),
            interrupted: Vec::new(),
            grace_until: None,
            kernel_waits: silent::KernelWaits::default(),
        }
    }

    /// Run until a verdict (`Some`) or the process's exit (`None`: classify from the status).
    fn drive(&mut self, coord: &mut Coordinator<'_>, rx: &Receiver<Ev>) -> Option<Outcome> {
        self.silence.heard();
        loop {
            // The next deadline: a vanished thread's grace, else the step timeout, and the
            // next look in `/proc` at silent granted threads, if any may be blocked.
            let timeout = match self.vanished.first() {
                Some((_, at)) => VANISH_GRACE.saturating_sub(at.elapsed()),
                None => self
                    .cfg
                    .step_timeout
                    .saturating_sub(self.silence.quiet_for()),
            };
            let probe_in = self.probe_in(coord);
            let timeout = probe_in.map_or(timeout, |p| p.min(timeout));
            let tick_in = self.silence.tick_in(coord.waits_outside());
            let timeout = tick_in.map_or(timeout, |t| t.min(timeout));
            let timeout = self.grace_until.map_or(timeout, |g| {
                g.saturating_duration_since(Instant::now()).min(timeout)
            });
            // Spin only right after a grant, when the granted thread's next post is
            // usually microseconds away; while the program starts up or exits, park. A
            // deadline already passed is one, even if observed accesses keep arriving (a
            // thread spinning on a flag without a point sends them forever).
            let next = if timeout.is_zero() {
                match rx.try_recv() {
                    Ok(ev) if !no_progress(&ev) => Ok(ev),
                    Ok(ev) => {
                        if let Err(reason) = self.handle(coord, ev) {
                            return Some(Outcome::Error { reason });
                        }
                        Err(RecvTimeoutError::Timeout)
                    }
                    Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                }
            } else if std::mem::take(&mut self.just_granted) {
                recv_spinning(rx, self.cfg.spin, timeout)
            } else {
                rx.recv_timeout(timeout)
            };
            let ev = match next {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => {
                    if self.grace_until.is_some_and(|g| Instant::now() >= g) {
                        // No signal came: the deadlock stands.
                        if let Some(o) = self.decide(coord) {
                            return Some(o);
                        }
                        continue;
                    }
                    if let Some((_, at)) = self.vanished.first() {
                        if at.elapsed() >= VANISH_GRACE {
                            for (t, _) in std::mem::take(&mut self.vanished) {
                                coord.state_mut().mark_finished(t);
                            }
                            if let Some(o) = self.decide(coord) {
                                return Some(o);
                            }
                        }
                    } else if self.silence.quiet_for() >= self.cfg.step_timeout {
                        // A tick of virtual time that is due may end a wait: the clock
                        // moving is progress, not a hang.
                        let (after, step) = (self.cfg.blocked_after, self.cfg.step_timeout);
                        if self.silence.tick(coord, after, step) {
                            self.silence.heard();
                            if let Some(o) = self.decide(coord) {
                                return Some(o);
                            }
                            continue;
                        }
                        if self.kernel_waits.excuse(self.cfg.step_timeout) {
                            // A thread waits in the kernel with a timeout: it comes back.
                            self.silence.heard();
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
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Some(Outcome::Error {
                        reason: "internal: event channel closed".into(),
                    })
                }
            };
            if !no_progress(&ev) {
                self.silence.heard();
            }
            match self.handle(coord, ev) {
                Ok(Some(o)) => return Some(o),
                Ok(None) if self.exit.is_some() => return None,
                Ok(None) => {}
                Err(reason) => return Some(Outcome::Error { reason }),
            }
        }
    }

    /// How long until the next look in `/proc` at the silent granted threads (zero: due
    /// now), or `None` when no running thread could be looked at (or `--blocked-after` is
    /// off). A look is due `blocked_after` after the last event or the last look.
    fn probe_in(&self, coord: &Coordinator<'_>) -> Option<Duration> {
        let after = self.cfg.blocked_after?;
        let st = coord.state();
        let known = |t: Tid| matches!(self.tasks.get(t as usize), Some(Some(k)) if k.ktid != 0);
        if !st.running().any(known) {
            return None;
        }
        Some(self.silence.probe_in(after))
    }

    /// A thread went on outside control: the run is no longer one thread at a time, so
    /// every thread of the program may use every CPU from now on (see libpos's
    /// `affinity::free_all`: a thread granted while another spins must not share its core).
    /// Only a mask of one CPU, libpos's pin, is widened, to this process's mask.
    fn free_threads(&self) {
        if !self.cfg.pin {
            return;
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: plain masks on the stack, of the full size; each `ktid` is a thread of the
        // run.
        unsafe {
            let mut all: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size, &mut all) != 0 {
                return;
            }
            for task in self.tasks.iter().flatten().filter(|t| t.ktid != 0) {
                let ktid = task.ktid as libc::pid_t;
                let mut mask: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(ktid, size, &mut mask) == 0
                    && libc::CPU_COUNT(&mask) == 1
                {
                    libc::sched_setaffinity(ktid, size, &all);
                }
            }
        }
    }

    /// Set aside every running thread that the kernel shows blocked in a call libpos does
    /// not control ([`Silent::BlockedOutside`]), or running user code for
    /// [`silent::spin_after`] while
    /// another thread could use the turn: decisions go on without it until its next post.
    /// True if any was.
    fn set_aside(&mut self, coord: &mut Coordinator<'_>) -> bool {
        let spun = self
            .silence
            .start_probe(self.cfg.blocked_after, self.cfg.step_timeout);
        let running: Vec<Tid> = coord.state().running().collect();
        let mut any = false;
        for t in running {
            let Some(Some(task)) = self.tasks.get(t as usize).copied() else {
                continue;
            };
            if task.ktid == 0 {
                continue;
            }
            // A thread with asynchronous cancellation that computes silently is set aside
            // too, so that the others run and a `pthread_cancel` can reach it for real (see
            // `preload/src/cancel.rs`); so is a spin-wait (see [`silent::spin_after`]).
            let view = kernel_view(&task);
            // In this order: `computing` keeps CPU readings, taken only where they decide.
            let outside = view == Silent::BlockedOutside
                || (coord.state().async_cancellable(t) && self.computing(t, &task, coord))
                || set_aside(view, spun, coord.state().others_could_run(t));
            if !outside {
                continue;
            }
            // A post already written but not yet read by the I/O thread: it is not blocked.
            let conn = self.tid_conn.get(t as usize).copied().flatten();
            if conn
                .and_then(|c| self.conns[c].as_ref())
                .is_some_and(has_unread)
            {
                continue;
            }
            if coord.mark_outside(t).is_ok() {
                self.outside_episodes += 1;
                any = true;
                self.free_threads();
                let stat = format!("/proc/{}/task/{}/stat", task.pid, task.ktid);
                self.silence
                    .note_outside(t, stat, view == Silent::BlockedOutside);
            }
        }
        any
    }

    /// Whether silent thread `t` is computing in the program's code: it has used at least
    /// [`COMPUTING_TICKS`] of CPU since an earlier probe of this same silence (no step was
    /// granted meanwhile). A thread merely descheduled on a loaded machine, possibly still in
    /// libpos's code after its grant, uses none and is not set aside, because an
    /// asynchronous cancellation must not land in libpos.
    fn computing(&mut self, t: Tid, task: &Task, coord: &Coordinator<'_>) -> bool {
        let Some(ticks) = cpu_ticks(task) else {
            return false;
        };
        let step = coord.steps();
        let seen = self.cpu_seen.iter().find(|&&(x, _, _)| x == t).copied();
        match seen {
            Some((_, before, at)) if at == step && ticks >= before + COMPUTING_TICKS => {
                self.cpu_seen.retain(|&(x, _, _)| x != t);
                true
            }
            Some((_, _, at)) if at == step => false,
            _ => {
                self.cpu_seen.retain(|&(x, _, _)| x != t);
                self.cpu_seen.push((t, ticks, step));
                false
            }
        }
    }

    fn handle(&mut self, coord: &mut Coordinator<'_>, ev: Ev) -> Result<Option<Outcome>, String> {
        match ev {
            Ev::Conn(id, s) => {
                if self.conns.len() <= id {
                    self.conns.resize_with(id + 1, || None);
                    self.conn_tid.resize(id + 1, None);
                }
                if id == 0 && self.start_frame {
                    // A failed write means the program died: its exit tells.
                    let _ = (&s).write_all(&inproc::start_frame(None));
                }
                self.conns[id] = Some(s);
                self.open += 1;
            }
            Ev::Exited(e) => self.exit = Some(e),
            Ev::ServerLost => return Err("the fork server ended during the run".into()),
            Ev::Bad(id, e) => return Err(format!("connection {id}: {e}")),
            Ev::Eof(id) => {
                self.open = self.open.saturating_sub(1);
                if let Some(t) = self.conn_tid.get(id).copied().flatten() {
                    if coord.state().status(t) != Status::Finished && !self.exiting {
                        self.vanished.push((t, Instant::now()));
                    }
                }
            }
            Ev::Msg(id, msg) => return self.message(coord, id, msg),
            Ev::Pc(id, pc) => {
                if self.conn_pc.len() <= id {
                    self.conn_pc.resize(id + 1, 0);
                }
                self.conn_pc[id] = pc;
            }
        }
        Ok(None)
    }

    fn message(
        &mut self,
        coord: &mut Coordinator<'_>,
        id: usize,
        msg: Msg,
    ) -> Result<Option<Outcome>, String> {
        let tid = self.conn_tid.get(id).copied().flatten();
        match msg {
            Msg::Hello {
                tid: t,
                pid,
                ktid,
                fd,
            } => {
                if let Some(old) = tid {
                    return Err(format!("thread {old} said hello twice"));
                }
                if t as usize >= coord.state().num_threads() {
                    return Err(format!("hello from unknown thread id {t}"));
                }
                if self.tid_conn.len() <= t as usize {
                    self.tid_conn.resize(t as usize + 1, None);
                    self.granted_at.resize(t as usize + 1, None);
                }
                if self.tid_conn[t as usize].is_some() {
                    return Err(format!("two connections claim thread id {t}"));
                }
                self.tid_conn[t as usize] = Some(id);
                self.conn_tid[id] = Some(t);
                if self.tasks.len() <= t as usize {
                    self.tasks.resize(t as usize + 1, None);
                }
                self.tasks[t as usize] = Some(Task { pid, ktid, fd });
                if t == 0 && self.maps.is_empty() {
                    // Mappings for crash symbolisation (deterministic: ASLR is off).
                    // (Under `debug` the spawned process is gdb: the hello's pid is the
                    // program's.)
                    let p = if pid == self.pid || self.cfg.debug.is_some() {
                        pid
                    } else {
                        self.pid
                    };
                    self.maps = program_maps(self.cfg, p);
                }
            }
            Msg::Post(op) => {
                let Some(t) = tid else {
                    return Err(format!("post of {op} before hello"));
                };
                // Its signals were handled before this post.
                self.interrupted.retain(|&x| x != t);
                if let Some(at) = self.granted_at.get_mut(t as usize).and_then(Option::take) {
                    self.latencies.push(at.elapsed().as_nanos() as u64);
                }
                if self.cfg.record_trace || self.cfg.caller_pcs {
                    let pc = self.conn_pc.get_mut(id).map_or(0, std::mem::take);
                    if self.pending_pc.len() <= t as usize {
                        self.pending_pc.resize(t as usize + 1, 0);
                    }
                    self.pending_pc[t as usize] = pc;
                }
                if coord.state().left_with_its_process(t) {
                    return Ok(None);
                }
                // A forked child's objects live in its own address space.
                let op = op.in_process(coord.state().space_of(t));
                coord.post(t, op).map_err(|e| e.to_string())?;
                return Ok(self.decide(coord));
            }
            Msg::Observed {
                write,
                addr,
                size,
                pc,
            } => {
                // Only the thread that sent it runs until its next post: the access executed
                // here in the trace (after every event granted so far).
                if let (true, true, Some(t)) = (self.cfg.record_trace, self.cfg.observe, tid) {
                    // A repeated access adds nothing to the race detector (same thread, same
                    // happens-before): kept once between two grants, as libpos's log does.
                    if self.observed.insert((write, addr, size, pc)) {
                        let ev = pos_sched::protocol::inproc::observed_event(
                            coord.state(),
                            t,
                            write,
                            addr,
                            size,
                        );
                        self.trace.push((ev, pc));
                    }
                }
            }
            Msg::At { .. } => {} // the pump passes only the pc on
            Msg::Interrupted => {
                if let Some(t) = tid {
                    self.interrupted.push(t);
                    if self.grace_until.is_some() {
                        return Ok(self.decide(coord));
                    }
                }
            }
            // Only a run decided in the program sends these ([`inproc`]).
            Msg::End { .. } | Msg::Alive { .. } | Msg::Concluding { .. } => {}
            Msg::Leaving => {
                if let Some(t) = tid {
                    if coord.mark_outside(t).is_ok() {
                        self.outside_episodes += 1;
                        self.free_threads();
                        return Ok(self.decide(coord));
                    }
                }
            }
            Msg::KernelWait { ns } => {
                self.kernel_waits.announce(ns);
                if let Some(t) = tid {
                    coord.kernel_wait(t, ns);
                }
            }
            Msg::SemInit { .. }
            | Msg::BarrierInit { .. }
            | Msg::OnceInit { .. }
            | Msg::MutexInit { .. } => {
                let p = tid.map_or(0, |t| coord.state().space_of(t));
                if let Some(rec) = LogRec::of_init(&msg, p) {
                    rec.initialise(coord);
                }
            }
            Msg::Assert { text } => {
                self.assert = Some((text, tid));
                return Ok(self.child_failure(coord, tid));
            }
            Msg::Crash { signal, pc } => {
                self.crash = Some((signal, pc, tid));
                return Ok(self.child_failure(coord, tid));
            }
        }
        Ok(None)
    }

    /// A failed assertion or a crash in a forked child process is a bug of the run: it is
    /// the verdict at once (the main process's are classified from its exit status).
    fn child_failure(&self, coord: &Coordinator<'_>, tid: Option<Tid>) -> Option<Outcome> {
        let st = coord.state();
        let t = tid.filter(|&t| (t as usize) < st.num_threads() && st.process_of(t) != 0)?;
        let thread = st.name(t).to_string();
        if let Some((text, _)) = &self.assert {
            return Some(Outcome::Assert {
                text: text.clone(),
                thread,
            });
        }
        let (signal, pc, _) = self.crash?;
        Some(Outcome::Crash {
            signal,
            thread,
            pc: Some(pc),
            symbol: elf::symbolise(pc, &self.maps),
            exception: None,
        })
    }

    /// Every thread is blocked. A signal from outside the run may still end a wait, as it
    /// would natively (a child's `SIGCHLD` whose handler posts the semaphore the parent
    /// waits on): when a blocked thread reported one ([`Msg::Interrupted`]), its wait ends
    /// for the handler (true: decide again). Otherwise, when the program handles a signal
    /// (`SigCgt` in `/proc`), the deadlock waits until [`Loop::grace_until`]: up to
    /// `--blocked-after`, half the step timeout while a child process still runs.
    fn outside_grace(&mut self, coord: &mut Coordinator<'_>) -> bool {
        while let Some(t) = self.interrupted.pop() {
            if coord.state_mut().interrupt_from_outside(t) {
                self.grace_until = None;
                return true;
            }
        }
        // The program's main process (under `debug`, `pid` is gdb's).
        let pid = match self.tasks.first() {
            Some(Some(main)) => main.pid,
            _ => self.pid,
        };
        if self.grace_until.is_none() && self.task_gone(coord) {
            // A thread the model still counts is gone from the kernel (its process was
            // killed): its connection's end, on its way, tells the model, and the vanished
            // thread is finished after its own grace ([`VANISH_GRACE`]).
            self.grace_until = Some(Instant::now() + 2 * VANISH_GRACE);
        } else if self.grace_until.is_none() && handles_a_signal(pid) {
            let grace = silent::outside_signal_grace(
                self.cfg.blocked_after.unwrap_or(Duration::ZERO),
                self.cfg.step_timeout,
                children_running(pid),
            );
            if !grace.is_zero() {
                self.grace_until = Some(Instant::now() + grace);
            }
        } else if self.grace_until.is_some_and(|g| Instant::now() >= g) {
            self.grace_until = None;
        }
        false
    }

    /// Whether a thread the model has not seen finish is gone from the kernel, or a
    /// zombie's: a process of the run killed by a signal (probe 21: Python's
    /// `multiprocessing.Pool` terminating its workers was a false `deadlock`, the parent's
    /// `waitpid` against a worker counted as blocked in `sem_wait`).
    fn task_gone(&self, coord: &Coordinator<'_>) -> bool {
        let st = coord.state();
        self.tasks.iter().enumerate().any(|(t, task)| {
            let Some(task) = task.filter(|k| k.ktid != 0) else {
                return false;
            };
            (t as Tid) < st.num_threads() as Tid
                && st.status(t as Tid) != Status::Finished
                && std::fs::read_to_string(format!("/proc/{}/task/{}/stat", task.pid, task.ktid))
                    .map_or(true, |s| matches!(silent::state(&s), Some("Z" | "X")))
        })
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
                    now,
                } => {
                    // Only the main process's exit ends the run (a child's ends its process).
                    if matches!(op, Op::ProcessExit { .. }) && coord.state().process_of(tid) == 0 {
                        self.exiting = true;
                    }
                    self.last_granted = Some(tid);
                    self.just_granted = true;
                    self.grace_until = None;
                    self.observed.clear();
                    self.silence.heard();
                    if self.cfg.record_trace {
                        let pc = self.pending_pc.get(tid as usize).copied().unwrap_or(0);
                        self.trace.push((Event::new(tid, op), pc));
                    }
                    if self.cfg.caller_pcs {
                        let pc = self.pending_pc.get(tid as usize).copied().unwrap_or(0);
                        self.step_pcs.push(pc);
                    }
                    let reply = Reply::grant(result, child, now);
                    let conn = self.tid_conn.get(tid as usize).copied().flatten();
                    if let Some(s) = conn.and_then(|c| self.conns[c].as_ref()) {
                        if self.cfg.record_latency {
                            self.granted_at[tid as usize] = Some(Instant::now());
                        }
                        // A failed write means the thread died: its EOF or the exit tells.
                        let step = coord.steps() - 1;
                        let bytes = match &self.cfg.debug {
                            Some(d) if d.stop_step == step => reply.encode_stop(step),
                            _ => reply.encode(),
                        };
                        let _ = (&*s).write_all(&bytes);
                    }
                    if op == Op::Exit {
                        if let Some(Some(task)) = self.tasks.get(tid as usize) {
                            await_gone(task);
                        }
                    }
                }
                Decision::Wait | Decision::Over => return None,
                Decision::Deadlock(report) => {
                    if self.outside_grace(coord) {
                        continue;
                    }
                    if self.grace_until.is_some() {
                        return None;
                    }
                    return Some(Outcome::Deadlock { report });
                }
                Decision::StepLimit => {
                    let st = coord.state();
                    let live = (0..st.num_threads())
                        .filter(|&t| st.status(t as Tid) != pos_sched::state::Status::Finished)
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

    /// The `stat` paths of the threads a silence waits for: granted and not posted, or set
    /// aside outside control.
    fn silent_stats(&self, coord: &Coordinator<'_>) -> Vec<(Tid, String)> {
        let st = coord.state();
        st.running()
            .chain(st.outside())
            .filter_map(|t| match self.tasks.get(t as usize) {
                Some(Some(k)) if k.ktid != 0 => {
                    Some((t, format!("/proc/{}/task/{}/stat", k.pid, k.ktid)))
                }
                _ => None,
            })
            .collect()
    }

    /// The run is a hang: nothing came for the step timeout, or (`computing`: for so long)
    /// the silent threads kept computing for the compute timeout.
    fn hang(&self, coord: &Coordinator<'_>, computing: Option<Duration>) -> Outcome {
        let st = coord.state();
        // Spinning (or blocked before anyone looked), then blocked outside control.
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

    /// After the kill: take the messages still queued (the assertion text or crash pc sent
    /// just before the process died), until every connection has closed. When the verdict
    /// comes from the exit status (`classify`) and the process died by a signal, also wait
    /// up to [`REPORT_GRACE`] for the report of a connection not yet seen.
    fn drain(&mut self, rx: &Receiver<Ev>, classify: bool) {
        let start = Instant::now();
        let deadline = start + DRAIN_GRACE;
        let awaiting_report = |lp: &Self| {
            classify
                && matches!(lp.exit, Some(Exit::Signal(_)))
                && lp.crash.is_none()
                && lp.assert.is_none()
                && start.elapsed() < REPORT_GRACE
        };
        while self.open > 0 || self.exit.is_none() || awaiting_report(self) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return;
            };
            let left = if self.open == 0 && self.exit.is_some() {
                left.min(REPORT_GRACE.saturating_sub(start.elapsed()))
            } else {
                left
            };
            match rx.recv_timeout(left) {
                Ok(Ev::Conn(id, s)) => {
                    if self.conns.len() <= id {
                        self.conns.resize_with(id + 1, || None);
                        self.conn_tid.resize(id + 1, None);
                    }
                    self.conns[id] = Some(s);
                    self.open += 1;
                }
                Ok(Ev::Eof(_)) | Ok(Ev::Bad(..)) => self.open = self.open.saturating_sub(1),
                Ok(Ev::Exited(e)) => {
                    self.exit.get_or_insert(e);
                }
                Ok(Ev::Msg(id, Msg::Hello { tid, .. })) => {
                    if let Some(slot) = self.conn_tid.get_mut(id) {
                        slot.get_or_insert(tid);
                    }
                }
                Ok(Ev::Msg(id, Msg::Assert { text })) => {
                    let t = self.conn_tid.get(id).copied().flatten();
                    self.assert = Some((text, t));
                }
                Ok(Ev::Msg(id, Msg::Crash { signal, pc })) => {
                    let t = self.conn_tid.get(id).copied().flatten();
                    self.crash = Some((signal, pc, t));
                }
                Ok(Ev::Msg(..)) | Ok(Ev::Pc(..)) => {}
                Ok(Ev::ServerLost) | Err(_) => return,
            }
        }
    }

    /// The verdict when the process ended by itself.
    fn classify_exit(&self, coord: &Coordinator<'_>) -> Outcome {
        let st = coord.state();
        // A report without a known sender (its connection's hello was never seen) is blamed
        // on the thread that was running: the only one not waiting for a grant, if unique,
        // else the last granted.
        let suspect = {
            let mut running = st.running();
            match (running.next(), running.next()) {
                (Some(t), None) => Some(t),
                _ => self.last_granted,
            }
        };
        let name = |t: Option<Tid>| {
            t.or(suspect)
                .filter(|&t| (t as usize) < st.num_threads())
                .map_or_else(|| "?".to_string(), |t| st.name(t).to_string())
        };
        match self.exit {
            None => Outcome::Error {
                reason: "the program's end was not observed".into(),
            },
            Some(_) if self.assert.is_some() => {
                let (text, t) = self.assert.clone().unwrap_or_default();
                Outcome::Assert {
                    text,
                    thread: name(t),
                }
            }
            Some(Exit::Signal(sig)) => {
                let (pc, t) = match self.crash {
                    Some((_, pc, t)) => (Some(pc), t),
                    None => (None, None),
                };
                Outcome::Crash {
                    signal: sig,
                    thread: name(t),
                    pc,
                    symbol: pc.and_then(|pc| elf::symbolise(pc, &self.maps)),
                    exception: None,
                }
            }
            Some(Exit::Code(code)) if self.conns.is_empty() => Outcome::Error {
                reason: format!(
                    "the program exited (code {code}) without ever connecting to the \
                     coordinator: libpos.so was not loaded or did not start"
                ),
            },
            Some(Exit::Code(code)) => Outcome::from_exit(code, &self.cfg.ok_exit_codes),
        }
    }
}

/// Whether process `pid` catches a signal whose handler libpos runs (its `SigCgt` in
/// `/proc`: libpos's own handlers are for faults only).
fn handles_a_signal(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caught| caught & pos_sched::signals::handled_under_control_mask() != 0)
}

/// Whether process `pid` has a child that is still running (whose `SIGCHLD` may come).
fn children_running(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("children"))
            .is_ok_and(|c| c.split_whitespace().any(|child| !is_zombie(child)))
    })
}

/// Whether process `pid` (a decimal string) has exited and awaits its parent's wait.
fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|st| st == "Z"))
        })
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    //! The decision loop fed with synthetic events (no process): protocol errors, grants,
    //! hangs, vanished threads and exit classification.
    use super::*;
    use crossbeam_channel::Sender;
    use pos_sched::strategy::rw::RandomWalk;
    use std::io::Read;

    #[test]
    fn stale_run_dirs_of_dead_poschecks_are_swept_and_live_ones_kept() {
        let parent = tempfile::tempdir().unwrap();
        let mine = parent
            .path()
            .join(format!("poscheck-{}-live", std::process::id()));
        // Beyond any pid_max: no such process.
        let dead = parent.path().join("poscheck-999999999-dead");
        let other = parent.path().join("poscheck-probe-x");
        for d in [&mine, &dead, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("sock"), b"").unwrap();
        }
        sweep_stale_run_dirs(parent.path());
        assert!(mine.is_dir() && other.is_dir());
        assert!(!dead.exists());
    }

    fn cfg() -> RunConfig {
        let mut c = RunConfig::new(PathBuf::from("/bin/true"), Vec::new(), PathBuf::new());
        c.step_timeout = Duration::from_millis(50);
        c
    }

    /// A connection whose program end the test holds.
    fn conn(tx: &Sender<Ev>, id: usize) -> UnixStream {
        let (ours, theirs) = UnixStream::pair().unwrap();
        tx.send(Ev::Conn(id, ours)).unwrap();
        theirs
    }

    /// A connection (id) whose first message is the hello of thread `tid`.
    fn hello(tx: &Sender<Ev>, id: usize, tid: Tid) -> UnixStream {
        let s = conn(tx, id);
        let hello = Msg::Hello {
            tid,
            pid: 1,
            ktid: 0,
            fd: -1,
        };
        tx.send(Ev::Msg(id, hello)).unwrap();
        s
    }

    /// The config (50 ms step timeout), a random walk and a fresh event channel.
    fn setup() -> (RunConfig, RandomWalk, (Sender<Ev>, Receiver<Ev>)) {
        (cfg(), RandomWalk::new(), unbounded())
    }

    fn reply(s: &mut UnixStream) -> Reply {
        let mut b = [0u8; pos_sched::protocol::REPLY_LEN];
        s.read_exact(&mut b).unwrap();
        Reply::decode(&b)
    }

    #[test]
    fn only_a_sleep_in_a_call_off_the_thread_s_own_connection_is_outside_control() {
        use pos_sched::silent::in_foreign_call;
        // `/proc/PID/task/TID/syscall`: number, six arguments, stack pointer, pc.
        let read_pipe = "0 0x7 0x7ffd1230 0x1 0x0 0x0 0x0 0x7ffd1200 0x7f0012345678";
        assert!(in_foreign_call(read_pipe, 5), "read on a pipe (fd 7)");
        assert!(
            !in_foreign_call(read_pipe, 7),
            "read on its own connection: in libpos"
        );
        assert!(in_foreign_call(read_pipe, -1), "connection unknown");
        assert!(!in_foreign_call("running", 5));
        assert!(!in_foreign_call("-1 0x7ffd1200 0x7f0012345678", 5));
        assert!(!in_foreign_call("", 5));
        // poll(fds, 1, -1): its first argument is a pointer, never the connection.
        assert!(in_foreign_call(
            "7 0x7ffd1230 0x1 0xffffffff 0x0 0x0 0x0 0x1 0x2",
            3
        ));
    }

    #[test]
    fn a_post_before_hello_is_an_error() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let _p = conn(&tx, 0);
        tx.send(Ev::Msg(0, Msg::Post(Op::Yield))).unwrap();
        let mut lp = Loop::new(&c, 1);
        match lp.drive(&mut coord, &rx) {
            Some(Outcome::Error { reason }) => assert!(reason.contains("before hello")),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn a_computing_thread_uses_cpu_ticks_and_a_sleeping_one_does_not() {
        // SAFETY: no preconditions.
        let ktid = unsafe { libc::gettid() } as u32;
        let me = Task {
            pid: std::process::id(),
            ktid,
            fd: -1,
        };
        let before = cpu_ticks(&me).expect("own /proc stat");
        // Spin (at most 5 s of wall time, for a loaded machine) until the ticks move.
        let start = Instant::now();
        let mut x = 0u64;
        let mut spun = before;
        while spun < before + COMPUTING_TICKS && start.elapsed() < Duration::from_secs(5) {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            spun = cpu_ticks(&me).unwrap();
        }
        assert!(spun >= before + COMPUTING_TICKS, "{before} -> {spun}");
        std::thread::sleep(Duration::from_millis(40));
        assert!(cpu_ticks(&me).unwrap() < spun + COMPUTING_TICKS);
    }

    #[test]
    fn hello_from_an_unknown_thread_is_an_error() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let _p = hello(&tx, 0, 5);
        let mut lp = Loop::new(&c, 1);
        match lp.drive(&mut coord, &rx) {
            Some(Outcome::Error { reason }) => assert!(reason.contains("unknown thread")),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn grants_reach_the_poster_and_a_silent_thread_is_a_hang() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let mut p = hello(&tx, 0, 0);
        tx.send(Ev::Msg(0, Msg::Post(Op::Create))).unwrap();
        let mut lp = Loop::new(&c, 1);
        // Main is granted its create (child id 1), then nobody posts: the child never started.
        match lp.drive(&mut coord, &rx) {
            Some(Outcome::Hang { threads, .. }) => assert_eq!(threads, ["0", "0.1"]),
            o => panic!("{o:?}"),
        }
        assert_eq!(
            reply(&mut p),
            Reply {
                result: 0,
                value: 1
            }
        );
        assert_eq!(coord.steps(), 1);
    }

    #[test]
    fn a_forked_child_is_a_thread_with_its_own_objects_and_its_assert_is_the_verdict() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let mut main = hello(&tx, 0, 0);
        let send = |id, op| tx.send(Ev::Msg(id, Msg::Post(op))).unwrap();
        tx.send(Ev::Msg(0, Msg::SemInit { s: 0x10, value: 1 }))
            .unwrap();
        send(0, Op::Fork);
        let mut child = hello(&tx, 1, 1);
        send(1, Op::Start);
        send(0, Op::WaitProc { target: 1 });
        // The child's semaphore is its copy of the parent's (count 1), at its own address.
        send(1, Op::SemWait { s: 0x10 });
        let text = "c.c:9: main: Assertion `x' failed.".to_string();
        tx.send(Ev::Msg(1, Msg::Assert { text: text.clone() }))
            .unwrap();
        let mut lp = Loop::new(&c, 1);
        match lp.drive(&mut coord, &rx) {
            Some(Outcome::Assert { text: t, thread }) => {
                assert_eq!(t, text);
                assert_eq!(thread, "p1.t0");
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(
            reply(&mut main).value,
            1,
            "the fork's grant names the child"
        );
        assert_eq!(reply(&mut child).result, 0, "start");
        assert_eq!(
            reply(&mut child).result,
            0,
            "the copied semaphore had a unit"
        );
        let st = coord.state();
        assert_eq!(
            st.pending(0).map(|e| e.op),
            Some(Op::WaitProc { target: 1 })
        );
        assert!(!st.is_enabled(0), "the child has not exited");
        let steps: Vec<(String, String)> = coord
            .finish()
            .into_iter()
            .map(|s| (s.thread.to_string(), s.op))
            .collect();
        let want = [
            ("0", "fork"),
            ("p1.t0", "start"),
            ("p1.t0", "sem_wait(sem@p1:0x10)"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(t, o)| (t.to_string(), o.to_string()))
            .collect();
        assert_eq!(steps, want, "the child's objects are in its name space");
    }

    #[test]
    fn a_vanished_thread_is_finished_after_the_grace_and_the_run_goes_on() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let mut main = hello(&tx, 0, 0);
        tx.send(Ev::Msg(0, Msg::Post(Op::Create))).unwrap();
        let child = hello(&tx, 1, 1);
        tx.send(Ev::Msg(0, Msg::Post(Op::Join { target: 1 })))
            .unwrap();
        tx.send(Ev::Eof(1)).unwrap();
        let mut lp = Loop::new(&c, 1);
        // After the grace the child counts as finished, so main's join is granted; then main
        // stays silent: a hang of main alone.
        match lp.drive(&mut coord, &rx) {
            Some(Outcome::Hang { threads, .. }) => assert_eq!(threads, ["0"]),
            o => panic!("{o:?}"),
        }
        drop(child);
        assert_eq!(reply(&mut main).value, 1);
        assert_eq!(reply(&mut main).result, 0);
    }

    #[test]
    fn a_crash_report_arriving_after_the_exit_status_is_still_used() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let mut main = hello(&tx, 0, 0);
        tx.send(Ev::Msg(0, Msg::Post(Op::Create))).unwrap();
        tx.send(Ev::Exited(Exit::Signal(11))).unwrap();
        let mut lp = Loop::new(&c, 1);
        assert_eq!(lp.drive(&mut coord, &rx), None);
        assert_eq!(reply(&mut main).value, 1);
        // The child's connection, hello and report come late (slow reader threads).
        let late = tx.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let child = conn(&late, 1);
            let hello = Msg::Hello {
                tid: 1,
                pid: 1,
                ktid: 0,
                fd: -1,
            };
            late.send(Ev::Msg(1, hello)).unwrap();
            late.send(Ev::Msg(
                1,
                Msg::Crash {
                    signal: 11,
                    pc: 0x40,
                },
            ))
            .unwrap();
            late.send(Ev::Eof(1)).unwrap();
            late.send(Ev::Eof(0)).unwrap();
            child
        });
        lp.drain(&rx, true);
        drop(t.join().unwrap());
        match lp.classify_exit(&coord) {
            Outcome::Crash {
                signal: 11,
                thread,
                pc: Some(0x40),
                ..
            } => assert_eq!(thread, "0.1"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn libpos_fatal_exit_is_an_error_not_a_bug() {
        let e = harness_failure(
            Outcome::ExitCode { code: 70 },
            b"out\n    | poscheck: libpos: cannot open: too many open files (EMFILE)\n",
        );
        assert_eq!(e.kind(), "error", "{e}");
        assert!(e.to_string().contains("EMFILE"), "{e}");
        let plain = harness_failure(Outcome::ExitCode { code: 70 }, b"the program's own\n");
        assert_eq!(plain.kind(), "exit-code");
        let other = harness_failure(Outcome::ExitCode { code: 3 }, b"poscheck: libpos: x\n");
        assert_eq!(other.kind(), "exit-code");
    }

    #[test]
    fn an_assert_before_sigabrt_is_an_assert_and_exit_codes_follow_the_list() {
        let (c, mut rw, (tx, rx)) = setup();
        let mut coord = Coordinator::new(&mut rw, 1, 100);
        let _p = hello(&tx, 0, 0);
        let text = "a.c:3: main: Assertion `x' failed.".to_string();
        tx.send(Ev::Msg(0, Msg::Assert { text: text.clone() }))
            .unwrap();
        tx.send(Ev::Exited(Exit::Signal(6))).unwrap();
        let mut lp = Loop::new(&c, 1);
        assert_eq!(lp.drive(&mut coord, &rx), None);
        assert_eq!(
            lp.classify_exit(&coord),
            Outcome::Assert {
                text,
                thread: "0".into()
            }
        );
        lp.assert = None;
        lp.exit = Some(Exit::Code(6));
        assert_eq!(lp.classify_exit(&coord).kind(), "exit-code");
        let mut c2 = cfg();
        c2.ok_exit_codes = vec![0, 6];
        lp.cfg = &c2;
        assert_eq!(lp.classify_exit(&coord).kind(), "ok");
    }
}
