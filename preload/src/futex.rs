//! `syscall(SYS_futex, ...)` as a scheduling point: Rust's std (`Mutex`, `Condvar`,
//! `RwLock`, `Once`, `park`, channels), libstdc++'s atomic waits (`std::atomic::wait`,
//! `counting_semaphore`, `latch`, `barrier`) and hand-written futex locks block in futex
//! system calls made through libc's `syscall`. Without this, a granted thread would block
//! in the kernel where the coordinator cannot see it.
//!
//! Modelled for controlled threads (see `Op::FutexWait` / `Op::FutexWake`):
//! - `FUTEX_WAIT`, `FUTEX_WAIT_BITSET`: the word is compared with the expected value now,
//!   while this thread is the only controlled one running (EAGAIN if it differs, no
//!   scheduling point); otherwise the wait is posted and registers the waiter at once, so
//!   no wake is lost between the check and the wait. Timeouts are virtual deadlines
//!   (relative on `CLOCK_MONOTONIC` for `FUTEX_WAIT`, absolute for `FUTEX_WAIT_BITSET`, on
//!   `CLOCK_REALTIME` with `FUTEX_CLOCK_REALTIME`).
//! - `FUTEX_WAKE`, `FUTEX_WAKE_BITSET`: which waiters wake is the strategy's choice; the
//!   kernel is woken too for whatever is left of `n`, so that a thread waiting outside
//!   control (uncontrolled, or blocked before libpos was ready) is not stranded.
//!
//! Not modelled, passed to the kernel and said once per process on stderr: requeue,
//! `FUTEX_WAKE_OP`, the priority-inheritance operations and anything newer. None of
//! glibc ≥ 2.25, Rust's std or libstdc++ use them through `syscall`. Raw `syscall`
//! instructions that bypass libc (libgomp's futexes) are not seen here; on x86-64 they are
//! trapped by a seccomp filter and modelled by this same code (see [`crate::trap`]).

use crate::clock;
use crate::conn::{self, Me};
use crate::real;
use libc::{c_int, c_long};
use pos_sched::{Op, NO_DEADLINE};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const FUTEX_WAIT: c_int = 0;
const FUTEX_WAKE: c_int = 1;
const FUTEX_WAIT_BITSET: c_int = 9;
const FUTEX_WAKE_BITSET: c_int = 10;
const FUTEX_PRIVATE_FLAG: c_int = 128;
const FUTEX_CLOCK_REALTIME: c_int = 256;
const FUTEX_BITSET_MATCH_ANY: u32 = u32::MAX;

/// `syscall`: futex operations of controlled threads are scheduling points; every other
/// call (and every call of an uncontrolled or busy thread) goes to the real `syscall`.
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
            if let Some(r) = futex(me, a1, a2 as c_int, a3 as c_int, a4, a6 as u32) {
                return r;
            }
        }
    }
    real::syscall(nr, a1, a2, a3, a4, a5, a6)
}

/// The `-1`/errno convention of `syscall`.
fn fail(e: c_int) -> c_long {
    conn::set_errno(e);
    -1
}

/// A modelled futex operation: `Some(return value)`, or `None` to pass it to the kernel.
/// Shared with the SIGSYS handler of trapped raw futex calls ([`crate::trap`]).
pub(crate) unsafe fn futex(
    me: Me,
    uaddr: c_long,
    op: c_int,
    val: c_int,
    timeout: c_long,
    val3: u32,
) -> Option<c_long> {
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
            // SAFETY: the caller passes a futex word (the kernel would fault otherwise).
            let word = &*(uaddr as *const AtomicU32);
            if word.load(Ordering::SeqCst) != val as u32 {
                return Some(fail(libc::EAGAIN));
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
            let n = val.max(0);
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
                let more = real::syscall(
                    libc::SYS_futex,
                    uaddr,
                    op as c_long,
                    (n - woken) as c_long,
                    0,
                    0,
                    val3 as c_long,
                );
                total += more.max(0);
            }
            Some(total)
        }
        _ => {
            unmodelled(cmd);
            None
        }
    }
}

/// Say once per process and operation that a futex operation runs uncontrolled.
fn unmodelled(cmd: c_int) {
    static SAID: AtomicU64 = AtomicU64::new(0);
    let bit = 1u64 << (cmd.clamp(0, 63));
    if SAID.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        let _b = conn::Busy::enter();
        eprintln!("poscheck: libpos: futex operation {cmd} is not modelled; it runs uncontrolled");
    }
}
