//! The program's own `fork`, `wait*` and the exec of a forked child (not the fork server's
//! pre-forking, [`crate::forkserver`], which forks before control starts).
//!
//! Under the runner, a `fork` by a controlled thread is a scheduling point ([`Op::Fork`],
//! posted by libpos's `pthread_atfork` prepare handler, after the program's own): its grant
//! carries the id of the child's initial thread, a new thread of the same run in
//! a new process (`p1.t0`). The child (in libpos's `pthread_atfork` child handler, before
//! the program's) drops the parent's connections, opens its own, says hello as that thread
//! and posts `Start`; from then on its threads are controlled like any other. A `waitpid`/`wait` for such a child waits in the schedule ([`Op::WaitProc`])
//! until the child left control, then makes the real call (which returns as soon as the
//! kernel has the child's status). An `exec` in such a child ends its control
//! ([`Op::Exec`]): the new image runs uncontrolled (said once per program).
//!
//! Standalone (no runner) a forked child still runs uncontrolled, as before.

use crate::conn::{self, ACTIVE};
use crate::{fds, real};
use libc::{c_int, pid_t};
use pos_sched::event::ANY_PROCESS;
use pos_sched::{Op, Tid};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

/// Forks of controlled threads are controlled (runner mode; set by the constructor).
pub static CONTROLLED: AtomicBool = AtomicBool::new(false);

/// This process is a controlled forked child (not the run's main process).
pub static IN_CHILD: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread called `fork` under control: libpos's prepare handler posts the fork.
    static WANT: Cell<bool> = const { Cell::new(false) };
    /// This thread is inside a controlled `fork` whose child will be this thread id: the
    /// child handler of `pthread_atfork` connects the child as it ([`in_child_handler`]).
    static FORKING: Cell<Option<Tid>> = const { Cell::new(None) };
}

/// libpos's `pthread_atfork` prepare handler, registered before any of the program's, so it
/// runs last, right before the process is copied: the fork's scheduling point. Posting it
/// any earlier would leave the new child thread waiting to connect while the program's own
/// prepare handlers (which commonly lock mutexes) wait for grants: a hang.
pub extern "C" fn prepare_handler() {
    if !WANT.with(|w| w.replace(false)) {
        return;
    }
    if let Some(me) = conn::me() {
        let child = me.post(Op::Fork).value as Tid;
        FORKING.with(|f| f.set(Some(child)));
    }
}

/// libpos's `pthread_atfork` child handler, registered before any of the program's, so it
/// runs first: in the child of a controlled fork, switch to the child's own connection
/// before the program's child handlers run (they may unlock mutexes their prepare handlers
/// locked: those operations must go to the child's thread, not on the parent's
/// connection). True if this was such a child.
pub fn in_child_handler() -> bool {
    match FORKING.with(|f| f.take()) {
        Some(child) => {
            become_child(child);
            true
        }
        None => false,
    }
}

/// Controlled children of this process: kernel pid and initial thread id. A child beyond
/// the table's size is waited for outside the schedule (as an uncontrolled one).
const SLOTS: usize = 256;
static PIDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static TIDS: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];

fn remember(pid: pid_t, tid: Tid) {
    for (p, t) in PIDS.iter().zip(&TIDS) {
        // Claim a free slot (-1 while its thread id is written), then publish the pid.
        if p.compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            t.store(tid, Ordering::SeqCst);
            p.store(pid, Ordering::SeqCst);
            return;
        }
    }
}

fn lookup(pid: pid_t) -> Option<usize> {
    (pid > 0)
        .then(|| PIDS.iter().position(|p| p.load(Ordering::SeqCst) == pid))
        .flatten()
}

fn forget(pid: pid_t) {
    if let Some(i) = lookup(pid) {
        PIDS[i].store(0, Ordering::SeqCst);
    }
}

/// `fork`: see the module documentation.
///
/// # Safety
/// As `fork(2)`.
#[no_mangle]
pub unsafe extern "C" fn fork() -> pid_t {
    let me = match conn::me() {
        Some(me) if CONTROLLED.load(Ordering::Relaxed) => me,
        _ => return real::fork(),
    };
    WANT.with(|w| w.set(true));
    let pid = real::fork();
    WANT.with(|w| w.set(false));
    let Some(child) = FORKING.with(|f| f.take()) else {
        return pid; // in the child (already connected), or the prepare handler did not run
    };
    if pid < 0 {
        let e = conn::errno();
        me.post(Op::ForkFailed { target: child });
        conn::set_errno(e);
    } else if pid > 0 {
        remember(pid, child);
    }
    pid
}

/// In the new child (from [`in_child_handler`]): leave the parent's connections, connect as
/// `child` and wait for the grant of its `Start`.
fn become_child(child: Tid) {
    let _b = conn::Busy::enter();
    conn::PID.store(std::process::id(), Ordering::Relaxed);
    IN_CHILD.store(true, Ordering::SeqCst);
    // The parent's run is not in this address space: this process's threads connect.
    conn::LOCAL.store(false, Ordering::SeqCst);
    for p in &PIDS {
        p.store(0, Ordering::SeqCst);
    }
    conn::release();
    fds::close_all_ours();
    drop(_b);
    conn::adopt(child);
    crate::signal::remember_self(child);
    if let Some(me) = conn::me() {
        me.post(Op::Start);
    }
}

/// `exec*` in a controlled child: the process leaves control before the image is replaced.
pub fn leave_for_exec() {
    // A `vfork` child shares our memory and thread-locals: its exec is not this process's.
    if !IN_CHILD.load(Ordering::Relaxed) || std::process::id() != conn::PID.load(Ordering::Relaxed)
    {
        return;
    }
    if let Some(me) = conn::me() {
        me.post(Op::Exec);
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The thread a wait for `pid` waits for in the schedule, if it is a scheduling point:
/// a controlled child, or any child for `pid <= 0`.
fn wait_point(pid: pid_t, options: c_int) -> Option<(conn::Me, Tid)> {
    if options & (libc::WNOHANG | libc::WNOWAIT) != 0 {
        return None;
    }
    let me = conn::me()?;
    let target = if pid <= 0 {
        ANY_PROCESS
    } else {
        TIDS[lookup(pid)?].load(Ordering::SeqCst)
    };
    Some((me, target))
}

/// Wait in the schedule (see [`wait_point`]) before the real wait.
fn before_wait(pid: pid_t, options: c_int) {
    if let Some((me, target)) = wait_point(pid, options) {
        me.post(Op::WaitProc { target });
    }
}

/// After a real wait that returned `got`: a reaped child's pid may be reused.
fn after_wait(got: pid_t, status: c_int, has_status: bool) {
    if got > 0 && (!has_status || libc::WIFEXITED(status) || libc::WIFSIGNALED(status)) {
        forget(got);
    }
}

/// `waitpid`: see the module documentation.
///
/// # Safety
/// As `waitpid(2)`.
#[no_mangle]
pub unsafe extern "C" fn waitpid(pid: pid_t, status: *mut c_int, options: c_int) -> pid_t {
    before_wait(pid, options);
    let mut st = 0;
    let got = real::waitpid(pid, &mut st, options);
    after_wait(got, st, true);
    if !status.is_null() && got > 0 {
        *status = st;
    }
    got
}

/// `wait`: `waitpid(-1, status, 0)`.
///
/// # Safety
/// As `wait(2)`.
#[no_mangle]
pub unsafe extern "C" fn wait(status: *mut c_int) -> pid_t {
    before_wait(-1, 0);
    let mut st = 0;
    let got = real::wait(&mut st);
    after_wait(got, st, true);
    if !status.is_null() && got > 0 {
        *status = st;
    }
    got
}

/// `wait4`: as `waitpid`, with resource usage.
///
/// # Safety
/// As `wait4(2)`.
#[no_mangle]
pub unsafe extern "C" fn wait4(
    pid: pid_t,
    status: *mut c_int,
    options: c_int,
    usage: *mut libc::rusage,
) -> pid_t {
    before_wait(pid, options);
    let mut st = 0;
    let got = real::wait4(pid, &mut st, options, usage);
    after_wait(got, st, true);
    if !status.is_null() && got > 0 {
        *status = st;
    }
    got
}

/// `waitid`: a wait for exits (`WEXITED`, without `WNOHANG`/`WNOWAIT`) of a controlled
/// child (`P_PID`) or of any child (`P_ALL`, `P_PGID`) is a scheduling point.
///
/// # Safety
/// As `waitid(2)`.
#[no_mangle]
pub unsafe extern "C" fn waitid(
    idtype: libc::idtype_t,
    id: libc::id_t,
    info: *mut libc::siginfo_t,
    options: c_int,
) -> c_int {
    if options & libc::WEXITED != 0 {
        let pid = if idtype == libc::P_PID {
            id as pid_t
        } else {
            -1
        };
        before_wait(pid, options);
    }
    let r = real::waitid(idtype, id, info, options);
    if r == 0 && !info.is_null() && options & libc::WNOWAIT == 0 {
        after_wait((*info).si_pid(), 0, false);
    }
    r
}
