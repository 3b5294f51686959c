//! `poscheck bench`: the two performance ratios the README records.
//!
//! 1. Hand-over latency: with runs decided in the program (the default baton transport,
//!    issue 15), the median time from a thread handing the turn to another thread to that
//!    thread's next request, for two threads that only call `sched_yield`; against the same
//!    exchange (32-byte request, 16-byte reply) between two processes over a raw Unix socket
//!    pair. Target ≤ 0.5×. The grant latency of `--transport socket` (from the coordinator
//!    sending a grant to the same thread's next request, one thread calling `sched_yield`)
//!    follows.
//! 2. Throughput: controlled runs per second of a two-thread program (one job, runs forked
//!    from a fork server as `run` does by default) against plain fork+exec of the same
//!    binary. Target ≥ 1.5× (issue 15). The ratios with `--transport socket` and with one
//!    spawn per run (`--no-fork-server`) and without the pin to one CPU (`--no-pin`)
//!    follow, and the floor of any fork per run: the same
//!    program run in forked children of one process without exec or poscheck
//!    ([`FORK_FLOOR`]). The controlled rates, the plain one and the floor are measured in
//!    alternating blocks, so that a change of the machine's load weighs on all of them
//!    alike.

use crate::cli::BenchArgs;
use crate::exec::libpos;
use crate::exec::session::{self, RunConfig, Transport};
use anyhow::{bail, Context, Result};
use nix::unistd::{fork, ForkResult};
use pos_sched::protocol::{MSG_LEN, REPLY_LEN};
use pos_sched::Strategy;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const YIELD_LOOP: &str = r#"
#include <sched.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 0; i < n; i++) sched_yield();
    return 0;
}
"#;

const PING_PONG: &str = r#"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
static long n;
static void *yields(void *a) {
    for (long i = 0; i < n; i++) sched_yield();
    return a;
}
int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) / 2 : 500;
    pthread_t t;
    pthread_create(&t, 0, yields, 0);
    yields(0);
    pthread_join(t, 0);
    return 0;
}
"#;

const TWO_THREADS: &str = r#"
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void *work(void *a) {
    for (int i = 0; i < 2; i++) { pthread_mutex_lock(&m); counter++; pthread_mutex_unlock(&m); }
    return a;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    work(0);
    pthread_join(t, 0);
    return counter == 4 ? 0 : 1;
}
"#;

/// The two-thread program (`two_threads.c`, beside it) run `argv[1]` times, each in a forked
/// child of this one process, without exec: the least a fork per run costs (a fork server's
/// runs cannot be cheaper than this, whatever poscheck does around them).
const FORK_FLOOR: &str = r#"
#define main program_main
#include "two_threads.c"
#undef main
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1;
    for (long i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) _exit(program_main());
        int st;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    }
    return 0;
}
"#;

/// Build `src` as `dir/name` (statically linked with `static_link`).
fn compile(dir: &Path, name: &str, src: &str, static_link: bool) -> Result<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    let out = dir.join(name);
    std::fs::write(&c, src).context("cannot write benchmark source")?;
    let st = Command::new("cc")
        .args(static_link.then_some("-static"))
        .args(["-O2", "-pthread", "-o"])
        .arg(&out)
        .arg(&c)
        .status()
        .context("cannot run cc (a C compiler is needed for the benchmark)")?;
    if !st.success() {
        bail!("cc failed on the benchmark program {name}");
    }
    Ok(out)
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Median round trip, measured like the coordinator measures a grant: from the reply's
/// write to the next request's arrival.
fn raw_ping_pong(n: u64) -> Result<u64> {
    let (mut a, mut b) = UnixStream::pair().context("socketpair")?;
    // SAFETY: the child only does read/write on its socket and _exit.
    match unsafe { fork() }.context("fork")? {
        ForkResult::Child => {
            drop(a);
            let mut req = [7u8; MSG_LEN];
            let mut rep = [0u8; REPLY_LEN];
            for _ in 0..=n {
                if b.write_all(&req).is_err() || b.read_exact(&mut rep).is_err() {
                    break;
                }
                req[0] = rep[0];
            }
            // SAFETY: leave without running the parent's atexit handlers.
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => {
            drop(b);
            let mut req = [0u8; MSG_LEN];
            let rep = [1u8; REPLY_LEN];
            let mut lat = Vec::with_capacity(n as usize);
            a.read_exact(&mut req)?;
            for _ in 0..n {
                let t = Instant::now();
                a.write_all(&rep)?;
                a.read_exact(&mut req)?;
                lat.push(t.elapsed().as_nanos() as u64);
            }
            a.write_all(&rep)?;
            drop(a);
            let _ = nix::sys::wait::waitpid(child, None);
            Ok(median(&mut lat))
        }
    }
}

pub fn run(a: &BenchArgs) -> Result<i32> {
    if a.steps == 0 || a.runs == 0 {
        anyhow::bail!("--steps and --runs must be at least 1");
    }
    let backend = match session::Backend::parse(&a.backend)? {
        Some(b) => b,
        None => bail!("--backend: bench measures preload or ptrace, not auto"),
    };
    let raw = raw_ping_pong(a.steps)?;
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let ptrace = backend == session::Backend::Ptrace;
    let yl = compile(dir.path(), "yield_loop", YIELD_LOOP, ptrace)?;
    let two = compile(dir.path(), "two_threads", TWO_THREADS, ptrace)?;
    let lib = libpos::find()?;
    if ptrace {
        return run_ptrace(a, raw, &yl, &two, &lib);
    }

    let pp = compile(dir.path(), "ping_pong", PING_PONG, false)?;
    let floor_bin = compile(dir.path(), "fork_floor", FORK_FLOOR, false)?;
    let mut rw =
        pos_sched::strategy::by_name("rw", &Default::default()).map_err(anyhow::Error::msg)?;
    let latency = |prog: &Path, transport: Transport, rw: &mut dyn Strategy| -> Result<u64> {
        let mut cfg = RunConfig::new(prog.to_path_buf(), vec![a.steps.to_string()], lib.clone());
        cfg.record_latency = true;
        cfg.transport = transport;
        let r = session::run_once(&cfg, rw, 1)?;
        if r.outcome.is_bug() || r.outcome.kind() == "error" {
            bail!("benchmark program failed: {}", r.outcome);
        }
        let mut lat = r.latencies_ns;
        if lat.is_empty() {
            bail!("the benchmark run measured no latency");
        }
        Ok(median(&mut lat))
    };
    let handover = latency(&pp, Transport::Baton, rw.as_mut())?;
    let grant = latency(&yl, Transport::Socket, rw.as_mut())?;

    // The default (baton, runs forked from a fork server, each on one CPU), the socket
    // transport, one spawn per run, runs free to move between CPUs, and plain fork+exec, in
    // alternating blocks.
    let configs = [
        (Transport::Baton, true, true),
        (Transport::Socket, true, true),
        (Transport::Baton, false, true),
        (Transport::Baton, true, false),
    ];
    let mut times = [0.0f64; 4];
    let mut native = 0.0f64;
    let mut floor = 0.0f64;
    for b in 0..BLOCKS {
        let (from, to) = (a.runs * b / BLOCKS, a.runs * (b + 1) / BLOCKS);
        for (&(transport, fork_server, pin), time) in configs.iter().zip(&mut times) {
            let mut cfg = RunConfig::new(two.clone(), Vec::new(), lib.clone());
            cfg.fork_server = fork_server;
            cfg.pin = pin;
            cfg.transport = transport;
            let t = Instant::now();
            for i in from..to {
                let r = session::run_once(&cfg, rw.as_mut(), i)?;
                if r.outcome.is_bug() || r.outcome.kind() == "error" {
                    bail!("benchmark program failed: {}", r.outcome);
                }
            }
            *time += t.elapsed().as_secs_f64();
            crate::exec::forkserver::shut_down();
        }
        native += native_time(&two, to - from)?.as_secs_f64();
        floor += floor_time(&floor_bin, to - from)?.as_secs_f64();
    }
    let rate = |t: f64| a.runs as f64 / t;
    let native = rate(native);
    let floor = rate(floor);
    let [baton, socket, spawned, free] = times.map(rate);
    let raw_ratio = |ns: u64| ns as f64 / raw.max(1) as f64;
    sayln!("hand-over latency (median, two threads, baton): {handover} ns; raw Unix-socket ping-pong: {raw} ns; ratio {:.2}x (target <= 0.5x)", raw_ratio(handover));
    sayln!(
        "  (grant latency with --transport socket: {grant} ns, ratio {:.2}x)",
        raw_ratio(grant)
    );
    sayln!("throughput: {baton:.0} controlled runs/s; {native:.0} plain fork+exec runs/s; ratio {:.2}x (target >= 1.5x)", baton / native);
    sayln!(
        "  (with --transport socket: {socket:.0} runs/s, ratio {:.2}x; with --no-fork-server, one spawn per run: {spawned:.0} runs/s, ratio {:.2}x)",
        socket / native,
        spawned / native
    );
    sayln!(
        "  (with --no-pin, threads free to move between CPUs: {free:.0} runs/s, ratio {:.2}x)",
        free / native
    );
    sayln!(
        "  (floor: fork + run + exit of the same program in forked children of one process, no exec: {floor:.0} runs/s, ratio {:.2}x; no fork per run is faster)",
        floor / native
    );
    Ok(0)
}

/// Run `cmd` with its input and output discarded; an error unless it succeeds (`what` names
/// it).
fn run_quiet(cmd: &mut Command, what: &str) -> Result<()> {
    let st = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("cannot run {what}"))?;
    if !st.success() {
        bail!("{what} failed: {st}");
    }
    Ok(())
}

/// How long `runs` runs of the two-thread program in forked children of `floor` take (see
/// [`FORK_FLOOR`]; the one spawn of `floor` itself is included, a fraction of one run each).
fn floor_time(floor: &Path, runs: u64) -> Result<std::time::Duration> {
    let t = Instant::now();
    run_quiet(
        Command::new(floor).arg(runs.to_string()),
        "the fork-floor program",
    )?;
    Ok(t.elapsed())
}

/// How long `runs` plain fork+exec runs of `two` take.
fn native_time(two: &Path, runs: u64) -> Result<std::time::Duration> {
    let t = Instant::now();
    for _ in 0..runs {
        run_quiet(&mut Command::new(two), "the benchmark program, natively")?;
    }
    Ok(t.elapsed())
}

/// Blocks the traced and the plain runs of `bench --backend ptrace` alternate in, so that a
/// change of the machine's load during the measurement weighs on both rates alike.
const BLOCKS: u64 = 10;

/// `bench --backend ptrace`: the same two ratios for the statically linked programs under
/// the ptrace backend (grant: from resuming a thread at its stop to its next stop; runs:
/// one traced spawn each), against the same raw baselines (issue 13's targets: latency
/// <= 3x, throughput >= 0.3x). The traced and the plain runs alternate in [`BLOCKS`] blocks.
fn run_ptrace(a: &BenchArgs, raw: u64, yl: &Path, two: &Path, lib: &Path) -> Result<i32> {
    let mut cfg = RunConfig::new(yl.to_path_buf(), vec![a.steps.to_string()], lib.into());
    cfg.backend = session::Backend::Ptrace;
    cfg.record_latency = true;
    let mut rw =
        pos_sched::strategy::by_name("rw", &Default::default()).map_err(anyhow::Error::msg)?;
    let r = session::run_once(&cfg, rw.as_mut(), 1)?;
    if r.outcome.is_bug() || r.outcome.kind() == "error" {
        bail!("benchmark program failed: {}", r.outcome);
    }
    let mut lat = r.latencies_ns;
    let grant = median(&mut lat);
    let mut cfg = RunConfig::new(two.to_path_buf(), Vec::new(), lib.into());
    cfg.backend = session::Backend::Ptrace;
    let (mut traced_time, mut native_time_sum) = (0.0, 0.0);
    for b in 0..BLOCKS {
        let (from, to) = (a.runs * b / BLOCKS, a.runs * (b + 1) / BLOCKS);
        let t = Instant::now();
        for i in from..to {
            let r = session::run_once(&cfg, rw.as_mut(), i)?;
            if r.outcome.is_bug() || r.outcome.kind() == "error" {
                bail!("benchmark program failed: {}", r.outcome);
            }
        }
        traced_time += t.elapsed().as_secs_f64();
        native_time_sum += native_time(two, to - from)?.as_secs_f64();
    }
    let traced = a.runs as f64 / traced_time;
    let native = a.runs as f64 / native_time_sum;
    sayln!("backend ptrace (statically linked programs)");
    sayln!("grant latency (median): {grant} ns; raw Unix-socket ping-pong: {raw} ns; ratio {:.2}x (target <= 3x)", grant as f64 / raw.max(1) as f64);
    sayln!("throughput: {traced:.0} traced runs/s; {native:.0} plain fork+exec runs/s; ratio {:.2}x (target >= 0.3x)", traced / native);
    Ok(0)
}
