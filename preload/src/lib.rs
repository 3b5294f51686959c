//! `libpos.so`: puts a native pthread program's scheduling under the coordinator's control.
//!
//! Loaded with `LD_PRELOAD`, it interposes the pthread synchronisation functions, thread
//! creation and exit, sleeps and yields, `exit`, `__assert_fail` and fatal signals. Before
//! each such operation the calling thread sends a request on its own connection and blocks
//! until the coordinator grants it ([`conn`]); only the coordinator decides, libpos keeps no
//! scheduling logic. Blocking is modelled by the coordinator, so a granted operation never
//! blocks in the kernel and locks, condvars, semaphores and barriers are emulated
//! ([`sync`]). Real functions are reached with `dlsym(RTLD_NEXT)` ([`real`]).
//!
//! Pass-through: calls made before the constructor ran, by threads libpos did not create,
//! by libpos's own hidden thread, after `exit` was granted, or in a forked child go straight
//! to the real functions.
//!
//! # Environment
//! - `POSCHECK_SOCKET`: path of the runner's Unix socket ([`pos_sched::protocol::ENV_SOCKET`]).
//!   Read and removed from the environment by the constructor (libpos also removes itself
//!   from `LD_PRELOAD`), so programs the target `exec`s are not controlled; once the
//!   seccomp filter is installed ([`trap`]) libpos stays in `LD_PRELOAD` with
//!   `POSCHECK_TRAP_INHERITED=1`, and in exec'd images only re-issues trapped futex calls.
//!   When unset, libpos runs in standalone mode ([`standalone`]).
//! - `POSCHECK_SERVER`: path of the runner's control socket: the constructor becomes a
//!   fork server and every forked child continues as one run ([`forkserver`]).
//! - `POSCHECK_POINTS`: `sync` (default), `mem` or `races`: which accesses of programs
//!   compiled with `-fsanitize=thread` are scheduling points.
//! - `POSCHECK_RACES_FILE`: the instrumented pcs that are points in `races` mode, one hex
//!   pc per line: absolute addresses (the runner disables ASLR), or `+OFF` for an offset
//!   from the executable's load base (see [`tsan::parse_races`]).
//! - `POSCHECK_SPIN_US`: how long a thread polls for its grant before blocking (default 0;
//!   the runner sets it when a core is free for the polling).
//! - `POSCHECK_CALLER_PCS=1`: send the caller's pc with every post ([`conn::CALLER_PCS`]).
//! - `POS_REAL_SLEEP=1`: sleeps are yield points that then really sleep, clock reads are
//!   real and a timed wait times out at once when its object is unavailable (runner's
//!   `--real-sleep`, the old model); by default all of these run in virtual time ([`clock`]).
//! - Standalone mode only: `POS_ALGO`, `POS_SEED`, `POS_DEPTH`, `POS_SCHEDULE`,
//!   `POS_SCHEDULE_OUT`, `POS_STEP_TIMEOUT`, `POS_BLOCKED_AFTER` (see [`standalone`]).

pub mod affinity;
pub mod alloc;
pub mod baton;
pub mod c11;
pub mod cancel;
pub mod clock;
pub mod conn;
pub mod fds;
pub mod fork;
pub mod forkserver;
pub mod futex;
mod futex_wake_op;
pub mod glib;
pub mod ipc;
pub mod journal;
pub mod omp;
pub mod poll;
pub mod process;
pub mod procfs;
pub mod rawclone;
pub mod real;
pub mod rlimit;
pub mod signal;
pub mod sockopt;
pub mod standalone;
pub mod sync;
pub mod thread;
pub mod timer;
pub mod timerfd;
#[cfg(target_arch = "x86_64")]
pub mod trap;
#[cfg(target_arch = "x86_64")]
pub mod tsan;

use conn::{Busy, ACTIVE};
use std::ffi::CStr;
use std::sync::atomic::Ordering;

/// Remove libpos from `LD_PRELOAD` (entries are separated by `:` or spaces): children the
/// program `exec`s run uncontrolled.
#[cfg_attr(test, allow(dead_code))]
pub(crate) fn strip_preload() {
    let Some(list) = std::env::var_os("LD_PRELOAD") else {
        return;
    };
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr on one of our own functions; info is a valid out-pointer.
    if unsafe { libc::dladdr(strip_preload as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return;
    }
    // SAFETY: dladdr returned a NUL-terminated file name.
    let me = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let my_base = base(&me);
    let list = list.to_string_lossy().into_owned();
    let kept: Vec<&str> = list
        .split([':', ' '])
        .filter(|e| !e.is_empty() && *e != me && base(e) != my_base)
        .collect();
    if kept.is_empty() {
        std::env::remove_var("LD_PRELOAD");
    } else {
        std::env::set_var("LD_PRELOAD", kept.join(":"));
    }
}

/// Rename the first environment entry `from=...` to `to=...` in place (`to` as long as
/// `from`): no allocation and no entry moved, so the program's memory is laid out as if
/// nothing happened (see [`pos_sched::protocol::ENV_RUN_MARK`]).
fn rename_in_environment(from: &str, to: &str) {
    extern "C" {
        static mut environ: *mut *mut libc::c_char;
    }
    if from.len() != to.len() {
        return;
    }
    // SAFETY: walking the NUL-terminated array of NUL-terminated strings of the process's
    // environment before the program runs; a matching entry's first `from.len()` bytes are
    // overwritten with as many.
    unsafe {
        let mut p = environ;
        if p.is_null() {
            return;
        }
        while !(*p).is_null() {
            let e = (*p).cast::<u8>();
            // The byte after a matching name is within the string (at worst its NUL).
            if libc::strncmp(*p, from.as_ptr().cast(), from.len()) == 0
                && *e.add(from.len()) == b'='
            {
                std::ptr::copy_nonoverlapping(to.as_ptr(), e, to.len());
                return;
            }
            p = p.add(1);
        }
    }
}

/// The protocol revision this libpos speaks ([`pos_sched::protocol::LIBPOS_MARKER`]); the
/// runner looks for this symbol before it uses the library.
#[no_mangle]
pub extern "C" fn pos_protocol_futex_cancel_vtime_fork_observe_morder_at_inproc_journal_once_robust_oncedone_mutexinit_kwait_leave_14(
) {
}

/// A symbol that only libpos defines: the first loaded copy owns it (see [`is_duplicate`]).
#[no_mangle]
pub extern "C" fn pos_libpos_marker() {}

/// Whether another copy of libpos (another file) was loaded first: its symbols win every
/// lookup, so this copy must stay inert (no second coordinator, no second thread 0).
#[cfg_attr(test, allow(dead_code))]
fn is_duplicate() -> bool {
    // SAFETY: dlsym/dladdr with valid NUL-terminated names and out-pointers.
    unsafe {
        let first = libc::dlsym(libc::RTLD_DEFAULT, c"pos_libpos_marker".as_ptr());
        if first.is_null() {
            return false;
        }
        let mut a: libc::Dl_info = std::mem::zeroed();
        let mut b: libc::Dl_info = std::mem::zeroed();
        libc::dladdr(first, &mut a) != 0
            // A private function: its address is this copy's (an exported one would be
            // resolved through the GOT to the first copy's).
            && libc::dladdr(is_duplicate as *const libc::c_void, &mut b) != 0
            && a.dli_fbase != b.dli_fbase
    }
}

/// Under the runner, the program starts with the signal mask poscheck was started with
/// (`POSCHECK_SIGMASK`, hexadecimal, bit `n - 1` for signal `n`), not with poscheck's own,
/// which blocks SIGHUP, SIGINT and SIGTERM for its signal thread and which a spawned
/// process inherits: a correct program's handlers for them never ran.
fn start_mask() {
    const VAR: &str = "POSCHECK_SIGMASK";
    let Some(bits) = std::env::var(VAR)
        .ok()
        .and_then(|v| u64::from_str_radix(&v, 16).ok())
    else {
        return;
    };
    std::env::remove_var(VAR);
    // SAFETY: building a set on the stack and setting this (the only) thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in 1..=64 {
            if bits & (1u64 << (sig - 1)) != 0 && sig != libc::SIGSYS {
                libc::sigaddset(&mut set, sig);
            }
        }
        real::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// The constructor: find or start the coordinator, install the hooks, connect the main
/// thread as thread 0.
#[cfg_attr(test, allow(dead_code))]
extern "C" fn init() {
    if is_duplicate() {
        return;
    }
    let runner_mode = std::env::var_os(pos_sched::protocol::ENV_SOCKET).is_some()
        || std::env::var_os(pos_sched::protocol::fork::ENV_FORK_SERVER).is_some();
    #[cfg(target_arch = "x86_64")]
    if !runner_mode && std::env::var_os(trap::ENV_INERT).is_some() {
        // An image exec'd by a controlled process: uncontrolled, but the inherited seccomp
        // filter may trap its futex calls; they are re-issued.
        let _b = Busy::enter();
        trap::install_inherited();
        return;
    }
    let busy = Busy::enter();
    alloc::find_lsan();
    if runner_mode {
        start_mask();
    } else {
        passive_openmp_hint();
    }
    conn::PID.store(std::process::id(), Ordering::Relaxed);
    let flag = |n: &str| std::env::var(n).is_ok_and(|v| v == "1");
    process::REAL_SLEEP.store(flag("POS_REAL_SLEEP"), Ordering::Relaxed);
    if let Some(us) = std::env::var("POSCHECK_SPIN_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        conn::SPIN_NS.store(us.min(10_000) * 1000, Ordering::Relaxed);
    }
    if flag(pos_sched::protocol::ENV_CALLER_PCS) {
        conn::locate_self();
        conn::CALLER_PCS.store(true, Ordering::Relaxed);
    }
    #[cfg(target_arch = "x86_64")]
    if let Err(e) = tsan::configure() {
        standalone::config_error(&e);
    }
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    // The filter first, before anything that differs between a spawned run and a fork
    // server (whose forked runs inherit the filter, its handler and this heap): heap
    // addresses appear in schedules, so both must allocate alike up to the fork.
    process::warm_up_unwinder();
    let kept_preload = trap_raw_futexes(runner_mode, std::env::var_os("LD_PRELOAD"));
    let mut socket = std::env::var_os(pos_sched::protocol::ENV_SOCKET);
    if runner_mode {
        // Under the runner only this process is controlled. Standalone, control passes
        // through exec: an exec'd image (the program behind a wrapper such as `timeout`
        // or `env`) loads libpos again and controls itself (see `standalone`). With the
        // filter installed libpos stays in `LD_PRELOAD`, inert (see `trap_raw_futexes`).
        if !kept_preload {
            strip_preload();
        }
        fork::CONTROLLED.store(true, Ordering::Relaxed);
    } else {
        process::EXEC_CONTROLLED.store(true, Ordering::Relaxed);
    }
    rename_in_environment(
        pos_sched::protocol::ENV_SOCKET,
        pos_sched::protocol::ENV_RUN_MARK,
    );
    std::env::remove_var(pos_sched::protocol::ENV_SOCKET);
    // A runner that decides runs in the program (issue 15) sends a start message first.
    let inproc = runner_mode
        && std::env::var_os(pos_sched::protocol::inproc::ENV_INPROC).is_some_and(|v| v == "1");
    std::env::remove_var(pos_sched::protocol::inproc::ENV_INPROC);
    if runner_mode {
        // Work every run would repeat, done once here where a fork server's runs inherit it
        // and a spawned run does it at the same point, so both heaps stay alike: with memory
        // points the main thread's stack bounds (`pthread_getattr_np` reads
        // `/proc/self/maps`), and the real functions every run calls (see `real`).
        #[cfg(target_arch = "x86_64")]
        tsan::prime_stack();
        real::resolve_for_every_run();
    }
    let server = std::env::var_os(pos_sched::protocol::fork::ENV_FORK_SERVER);
    std::env::remove_var(pos_sched::protocol::fork::ENV_FORK_SERVER);
    // In fork-server mode, the run's main-thread connection (already open).
    let mut main_conn = None;
    if let Some(ctl) = server {
        // Returns in each forked child, with its run's socket in place of the control one.
        let mut path = ctl.into_vec();
        match forkserver::serve(&mut path) {
            Ok(fd) => main_conn = Some(fd),
            Err(e) => conn::die(&e),
        }
        socket = Some(std::ffi::OsString::from_vec(path));
        conn::PID.store(std::process::id(), Ordering::Relaxed);
    }
    if runner_mode {
        // The run's process, still with one thread (a fork server's child, or a spawned run).
        affinity::pin_here();
    }
    let ready = match socket {
        Some(path) => fds::unix_addr(path.as_bytes()).map(fds::set_addr),
        None => standalone::start(),
    };
    if let Err(e) = ready {
        conn::die(&e);
    }
    process::install_crash_handlers();
    process::install_fork_handler();
    thread::hook_process_exit();
    drop(busy);
    process::not_single_threaded();
    ACTIVE.store(true, Ordering::SeqCst);
    match main_conn {
        Some(fd) => conn::adopt_on(0, fds::adopt_fd(fd)),
        None => conn::adopt(0),
    }
    signal::remember_self(0);
    if inproc {
        standalone::runner_start();
    }
}

/// libgomp spins before it sleeps in a futex; under control a spin is no scheduling point
/// and only burns the granted thread's time (forever with `OMP_WAIT_POLICY=active` when
/// there are no more threads than cores). The runner sets `OMP_WAIT_POLICY=passive` and
/// `GOMP_SPINCOUNT=0` unless the user did; libpos cannot (libgomp, a dependency of the
/// program, reads its environment before libpos's constructor runs), so in standalone
/// mode it says so once when an OpenMP program left both unset.
#[cfg_attr(test, allow(dead_code))]
fn passive_openmp_hint() {
    // SAFETY: dlsym with a NUL-terminated name.
    let gomp =
        !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_get_num_threads".as_ptr()) }.is_null();
    if gomp
        && std::env::var_os("OMP_WAIT_POLICY").is_none()
        && std::env::var_os("GOMP_SPINCOUNT").is_none()
    {
        eprintln!(
            "poscheck: libpos: OpenMP threads spin before they wait; set OMP_WAIT_POLICY=passive \
             GOMP_SPINCOUNT=0 for fast controlled runs"
        );
    }
}

/// Trap raw futex system calls ([`trap`]). Under the runner, exec'd images then keep libpos
/// in `LD_PRELOAD` (left as it is), inert, for its pass-through SIGSYS handler (the filter
/// is inherited): returns whether libpos is to stay there.
#[cfg_attr(test, allow(dead_code))]
fn trap_raw_futexes(runner_mode: bool, preload: Option<std::ffi::OsString>) -> bool {
    #[cfg(target_arch = "x86_64")]
    match trap::install() {
        Ok(()) => {
            if runner_mode && preload.is_some() {
                std::env::set_var(trap::ENV_INERT, "1");
                return true;
            }
        }
        Err(e) => eprintln!("poscheck: libpos: raw futex system calls are not trapped ({e})"),
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (runner_mode, preload);
        eprintln!("poscheck: libpos: raw futex system calls are trapped on x86-64 only; here they run uncontrolled");
    }
    false
}

/// Run [`init`] when the library is loaded (before the program's own constructors).
#[cfg(not(test))]
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

/// libpos's allocations: glibc's, or a private region under the baton transport.
#[cfg(not(test))]
#[global_allocator]
static ALLOC: alloc::Alloc = alloc::Alloc;

#[cfg(test)]
mod tests {
    #[test]
    fn the_exported_protocol_marker_is_the_one_the_runner_looks_for() {
        let name = stringify!(
            pos_protocol_futex_cancel_vtime_fork_observe_morder_at_inproc_journal_once_robust_oncedone_mutexinit_kwait_leave_14
        );
        assert_eq!(name, pos_sched::protocol::LIBPOS_MARKER);
        // The function of that name exists (this refers to it).
        let _: extern "C" fn() =
            super::pos_protocol_futex_cancel_vtime_fork_observe_morder_at_inproc_journal_once_robust_oncedone_mutexinit_kwait_leave_14;
    }
}
