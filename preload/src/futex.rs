//! `syscall(SYS_futex, ...)` as a scheduling point: Rust's std (`Mutex`, `Condvar`,
//! `RwLock`, `Once`, `park`, channels), libstdc++'s atomic waits (`std::atomic::wait`,
//! `counting_semaphore`, `latch`, `barrier`) and hand-written futex locks block in futex
//! system calls made through libc's `syscall`. Without this, a granted thread would block
//! in the kernel where the coordinator cannot see it.
//!
//! Which futex operations are modelled (for controlled threads; the `FUTEX_PRIVATE_FLAG`
//! and `FUTEX_CLOCK_REALTIME` variants alike):
//!
//! | operation                         | under poscheck                                      |
//! |-----------------------------------|-----------------------------------------------------|
//! | `FUTEX_WAIT`, `FUTEX_WAIT_BITSET` | modelled ([`Op::FutexWait`]), timeouts in virtual time |
//! | `FUTEX_WAKE`, `FUTEX_WAKE_BITSET` | modelled ([`Op::FutexWake`]), the woken are a scheduling choice |
//! | `FUTEX_REQUEUE`, `FUTEX_CMP_REQUEUE` | modelled ([`Op::FutexRequeue`] then [`Op::FutexRequeued`]) |
//! | `FUTEX_WAKE_OP` | modelled as two wakes around the atomic update (see `futex_wake_op.rs`) |
//! | `FUTEX_LOCK_PI`, `FUTEX_LOCK_PI2`, `FUTEX_UNLOCK_PI`, `FUTEX_TRYLOCK_PI`, `FUTEX_WAIT_REQUEUE_PI`, `FUTEX_CMP_REQUEUE_PI`, `FUTEX_FD`, others | not modelled: passed to the kernel, said once per process and operation on stderr |
//!
//! - Waits: the word is compared with the expected value now, while this thread is the
//!   only controlled one running (EAGAIN if it differs, no further point; with memory
//!   points the comparison is itself one, an atomic load of the word, see
//!   [`crate::tsan::futex_word`]); otherwise the wait is posted and registers the waiter at
//!   once, so no wake is lost between the check and the wait. Timeouts are virtual deadlines (relative on `CLOCK_MONOTONIC` for
//!   `FUTEX_WAIT`, absolute for `FUTEX_WAIT_BITSET`, on `CLOCK_REALTIME` with
//!   `FUTEX_CLOCK_REALTIME`).
//! - Wakes: which waiters wake is the strategy's choice; the kernel is woken too for
//!   whatever is left of `n`, so that a thread waiting outside control (uncontrolled, or
//!   blocked before libpos was ready) is not stranded.
//! - Requeues: a scheduling point first; once granted, `FUTEX_CMP_REQUEUE` compares the
//!   word with `val3` (EAGAIN if it differs), then the requeue is posted and applied at
//!   once (wake up to `val`, move up to `val2` of the others to `uaddr2`; returns woken +
//!   moved). What is left of the two counts goes to the kernel, as for wakes.
//! - The rest run uncontrolled in the kernel. A thread they block there is set aside by the
//!   runner as *blocked outside control* (the run is marked `partial`) and rejoins with its
//!   next post; it is not reported as a hang. None of glibc ≥ 2.25, Rust's std or
//!   libstdc++ use them through `syscall` (glibc's PI mutexes use inline system calls).
//!
//! Raw `syscall` instructions that bypass libc (libgomp's futexes) are not seen here; on
//! x86-64 they are trapped by a seccomp filter and modelled by this same code (see
//! [`crate::trap`]).

use crate::clock;
use crate::conn::{self, Me};
use crate::real;
use libc::{c_int, c_long};
use pos_sched::{Op, NO_DEADLINE};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const FUTEX_WAIT: c_int = 0;
const FUTEX_WAKE: c_int = 1;
const FUTEX_REQUEUE: c_int = 3;
const FUTEX_CMP_REQUEUE: c_int = 4;
const FUTEX_WAKE_OP: c_int = 5;
const FUTEX_WAIT_BITSET: c_int = 9;
const FUTEX_WAKE_BITSET: c_int = 10;
pub(crate) const FUTEX_PRIVATE_FLAG: c_int = 128;
const FUTEX_CLOCK_REALTIME: c_int = 256;
const FUTEX_BITSET_MATCH_ANY: u32 = u32::MAX;

/// `syscall`: futex operations of controlled threads are scheduling points and a clock read
/// is virtual as `clock_gettime` is; every other call (and every call of an uncontrolled or
/// busy thread) goes to the real `syscall`.
/// Declared with the six argument registers a variadic x86-64 call passes; unused ones
/// carry whatever the caller left there, as they would to the real function.
///
/// # Safety
/// As `syscall(2)`.
#[no_mangle]
pub unsafe extern "C" fn syscall(
    nr: c_long,
    a1: c_long,
    a2: c_long,
    a3: c_long,
    a4: c_long,
    a5: c_long,
    a6: c_long,
) -> c_long {
    if nr == libc::SYS_futex {
        if let Some(me) = conn::me() {
            let args = Args {
                uaddr: a1,
                op: a2 as c_int,
                val: a3 as c_int,
                timeout: a4,
                uaddr2: a5,
                val3: a6 as u32,
            };
            if let Some(r) = futex(me, args) {
                return r;
            }
        }
    }
    // Descriptor calls made through `syscall` spare libpos's descriptors as the functions
    // do: a daemon-style `syscall(SYS_close_range, 3, ~0U, 0)` closed the run's connection
    // and ended every run in an error.
    match nr {
        libc::SYS_close => return c_long::from(crate::fds::close(a1 as c_int)),
        libc::SYS_close_range => {
            return c_long::from(crate::fds::close_range(
                a1 as libc::c_uint,
                a2 as libc::c_uint,
                a3 as c_int,
            ))
        }
        libc::SYS_dup2 => return c_long::from(crate::fds::dup2(a1 as c_int, a2 as c_int)),
        libc::SYS_dup3 => {
            return c_long::from(crate::fds::dup3(a1 as c_int, a2 as c_int, a3 as c_int))
        }
        _ => {}
    }
    if nr == libc::SYS_clock_gettime {
        // The clock read as `clock_gettime` would (virtual for a controlled thread): a raw
        // `syscall(SYS_clock_gettime, ...)` read real time, seconds from the virtual clock.
        return c_long::from(crate::clock::clock_gettime(
            a1 as libc::clockid_t,
            a2 as *mut libc::timespec,
        ));
    }
    real::syscall(nr, a1, a2, a3, a4, a5, a6)
}

/// The `-1`/errno convention of `syscall`.
pub(crate) fn fail(e: c_int) -> c_long {
    conn::set_errno(e);
    -1
}

/// The arguments of `futex(2)` (`timeout` doubles as `val2`, the requeue count).
#[derive(Clone, Copy)]
pub(crate) struct Args {
    pub(crate) uaddr: c_long,
    pub(crate) op: c_int,
    pub(crate) val: c_int,
    pub(crate) timeout: c_long,
    pub(crate) uaddr2: c_long,
    pub(crate) val3: u32,
}

/// A modelled futex operation: `Some(return value)`, or `None` to pass it to the kernel.
/// Shared with the SIGSYS handler of trapped raw futex calls ([`crate::trap`]).
pub(crate) unsafe fn futex(me: Me, args: Args) -> Option<c_long> {
    let Args {
        uaddr,
        op,
        val,
        timeout,
        val3,
        ..
    } = args;
    let cmd = op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    match cmd {
        FUTEX_WAIT | FUTEX_WAIT_BITSET => {
            let bitset = if cmd == FUTEX_WAIT {
                FUTEX_BITSET_MATCH_ANY
            } else {
                val3
            };
            if bitset == 0 || uaddr == 0 || uaddr % 4 != 0 {
                return Some(fail(libc::EINVAL));
            }
            crate::tsan::futex_word(uaddr as u64, false);
            // SAFETY: the caller passes a futex word (the kernel would fault otherwise).
            let word = &*(uaddr as *const AtomicU32);
            if word.load(Ordering::SeqCst) != val as u32 {
                return Some(fail(libc::EAGAIN));
            }
            if crate::rawclone::cleared_by_kernel(uaddr as usize) {
                // Only the kernel wakes it, at a cloned task's exit: wait there.
                return None;
            }
            let ts = timeout as *const libc::timespec;
            let deadline = if ts.is_null() {
                Ok(NO_DEADLINE)
            } else if cmd == FUTEX_WAIT {
                clock::deadline_after(ts)
            } else if op & FUTEX_CLOCK_REALTIME != 0 {
                clock::deadline(libc::CLOCK_REALTIME, ts)
            } else {
                clock::deadline(libc::CLOCK_MONOTONIC, ts)
            };
            let deadline = match deadline {
                Ok(d) => d,
                Err(e) => return Some(fail(e)),
            };
            if me.fd == conn::LOCAL_FD {
                crate::standalone::expect_futex_word(me.tid, val as u32);
            }
            let r = me
                .post(Op::FutexWait {
                    addr: uaddr as u64,
                    bitset,
                    deadline,
                })
                .result;
            Some(if r == 0 { 0 } else { fail(r) })
        }
        FUTEX_WAKE | FUTEX_WAKE_BITSET => {
            let bitset = if cmd == FUTEX_WAKE {
                FUTEX_BITSET_MATCH_ANY
            } else {
                val3
            };
            if bitset == 0 {
                return Some(fail(libc::EINVAL));
            }
            Some(wake(me, uaddr, op, val, bitset))
        }
        FUTEX_WAKE_OP => Some(crate::futex_wake_op::wake_op(me, args)),
        FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => Some(requeue(me, args, cmd == FUTEX_CMP_REQUEUE)),
        _ => {
            unmodelled(cmd);
            None
        }
    }
}

/// Wake up to `n` waiters of `uaddr` whose bitset meets `bitset`: the model's, then, for
/// what is left of `n`, the kernel's (waiters the model does not know of). `op` carries the
/// caller's flags for the kernel call. Returns the number woken.
pub(crate) unsafe fn wake(me: Me, uaddr: c_long, op: c_int, n: c_int, bitset: u32) -> c_long {
    let n = n.max(0);
    let woken = me
        .post(Op::FutexWake {
            addr: uaddr as u64,
            n: n as u32,
            bitset,
        })
        .result
        .max(0);
    let mut total = woken as c_long;
    if woken < n {
        // Waiters the model does not know of sleep in the kernel.
        let flags = op & FUTEX_PRIVATE_FLAG;
        let more = real::syscall(
            libc::SYS_futex,
            uaddr,
            (FUTEX_WAKE_BITSET | flags) as c_long,
            (n - woken) as c_long,
            0,
            0,
            bitset as c_long,
        );
        total += more.max(0);
    }
    total
}

/// `FUTEX_REQUEUE` / `FUTEX_CMP_REQUEUE` (see the module doc).
unsafe fn requeue(me: Me, a: Args, compare: bool) -> c_long {
    if a.uaddr == 0 || a.uaddr % 4 != 0 || a.uaddr2 == 0 || a.uaddr2 % 4 != 0 {
        return fail(libc::EINVAL);
    }
    if a.val < 0 || (a.timeout as c_int) < 0 {
        return fail(libc::EINVAL);
    }
    let (n1, n2) = (a.val as u32, a.timeout as c_int as u32);
    let (addr, addr2) = (a.uaddr as u64, a.uaddr2 as u64);
    me.post(Op::FutexRequeue {
        addr,
        addr2,
        n1,
        n2,
    });
    if compare {
        // SAFETY: the caller passes a futex word (the kernel would fault otherwise).
        let word = &*(a.uaddr as *const AtomicU32);
        if word.load(Ordering::SeqCst) != a.val3 {
            return fail(libc::EAGAIN);
        }
    }
    let done = me
        .post(Op::FutexRequeued {
            addr,
            addr2,
            n1,
            n2,
        })
        .result
        .max(0) as u32;
    let woken = done.min(n1);
    let moved = done - woken;
    let mut total = done as c_long;
    if woken < n1 || moved < n2 {
        // Waiters the model does not know of sleep in the kernel: theirs is what is left.
        let more = real::syscall(
            libc::SYS_futex,
            a.uaddr,
            (a.op & !FUTEX_CLOCK_REALTIME) as c_long,
            (n1 - woken) as c_long,
            (n2 - moved) as c_long,
            a.uaddr2,
            a.val3 as c_long,
        );
        total += more.max(0);
    }
    total
}

/// Say once per process and operation that a futex operation runs uncontrolled.
fn unmodelled(cmd: c_int) {
    static SAID: AtomicU64 = AtomicU64::new(0);
    let bit = 1u64 << (cmd.clamp(0, 63));
    if SAID.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        let _b = conn::Busy::enter();
        eprintln!(
            "poscheck: libpos: futex operation {} is not modelled: it goes to the kernel \
             uncontrolled (a thread it blocks is set aside as blocked outside control and the \
             run is marked partial)",
            futex_name(cmd)
        );
    }
}

/// The name of a futex command, for messages.
fn futex_name(cmd: c_int) -> String {
    let name = match cmd {
        2 => "FUTEX_FD",
        5 => "FUTEX_WAKE_OP",
        6 => "FUTEX_LOCK_PI",
        7 => "FUTEX_UNLOCK_PI",
        8 => "FUTEX_TRYLOCK_PI",
        11 => "FUTEX_WAIT_REQUEUE_PI",
        12 => "FUTEX_CMP_REQUEUE_PI",
        13 => "FUTEX_LOCK_PI2",
        _ => return format!("{cmd}"),
    };
    name.to_string()
}
