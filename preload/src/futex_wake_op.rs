//! `FUTEX_WAKE_OP` for controlled threads: `oldval = *uaddr2; *uaddr2 = oldval OP oparg;`
//! wake up to `val` waiters of `uaddr`; if `oldval CMP cmparg`, wake up to `val2` waiters of
//! `uaddr2` (glibc < 2.25 signalled condvars this way). Passed to the kernel, it would wake
//! only kernel waiters, never the controlled threads the model holds in their waits — a
//! correct program would end in a false deadlock.
//!
//! Modelled as the atomic update (in the kernel it comes first; with memory points it is
//! one, an atomic read-modify-write of `uaddr2`, see [`crate::tsan::futex_word`]), then the
//! wake of `uaddr` (a scheduling point), then the wake of `uaddr2` if the comparison holds
//! (a second point). A thread that starts waiting between the update and a wake may be
//! woken by it where the kernel would not have woken it: a spurious wake-up, which futex
//! users must tolerate anyway; nothing the kernel could do is excluded.

use crate::conn::Me;
use crate::futex::{fail, wake, Args};
use libc::{c_int, c_long};
use std::sync::atomic::{AtomicU32, Ordering};

/// The update and comparison packed in `val3` (`FUTEX_OP(op, oparg, cmp, cmparg)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Encoded {
    op: u32,
    oparg: u32,
    cmp: u32,
    cmparg: i32,
}

/// `FUTEX_OP_OPARG_SHIFT`: `oparg` is a shift count (`1 << oparg`).
const OPARG_SHIFT: u32 = 8;

/// Sign-extend a 12-bit field.
fn sext12(x: u32) -> i32 {
    ((x << 20) as i32) >> 20
}

fn decode(val3: u32) -> Option<Encoded> {
    let mut op = (val3 >> 28) & 0xf;
    let mut oparg = sext12((val3 >> 12) & 0xfff) as u32;
    if op & OPARG_SHIFT != 0 {
        op &= !OPARG_SHIFT;
        if oparg > 31 {
            return None;
        }
        oparg = 1 << oparg;
    }
    let e = Encoded {
        op,
        oparg,
        cmp: (val3 >> 24) & 0xf,
        cmparg: sext12(val3 & 0xfff),
    };
    (e.op <= 4 && e.cmp <= 5).then_some(e)
}

/// The new word for `old` (SET, ADD, OR, ANDN, XOR).
fn update(e: Encoded, old: u32) -> u32 {
    match e.op {
        0 => e.oparg,
        1 => old.wrapping_add(e.oparg),
        2 => old | e.oparg,
        3 => old & !e.oparg,
        _ => old ^ e.oparg,
    }
}

/// Whether `old` compares to `cmparg` (EQ, NE, LT, LE, GT, GE, signed as in the kernel).
fn holds(e: Encoded, old: u32) -> bool {
    let old = old as i32;
    match e.cmp {
        0 => old == e.cmparg,
        1 => old != e.cmparg,
        2 => old < e.cmparg,
        3 => old <= e.cmparg,
        4 => old > e.cmparg,
        _ => old >= e.cmparg,
    }
}

/// `FUTEX_WAKE_OP` (see the module doc); returns what `syscall` returns.
///
/// # Safety
/// As `futex(2)`: `uaddr2` must point to a futex word.
pub(crate) unsafe fn wake_op(me: Me, a: Args) -> c_long {
    let Some(e) = decode(a.val3) else {
        return fail(libc::ENOSYS);
    };
    if a.uaddr % 4 != 0 || a.uaddr2 == 0 || a.uaddr2 % 4 != 0 {
        return fail(libc::EINVAL);
    }
    let n2 = a.timeout as c_int;
    crate::tsan::futex_word(a.uaddr2 as u64, true);
    // SAFETY: the caller passes a futex word (the kernel would fault otherwise).
    let word = &*(a.uaddr2 as *const AtomicU32);
    let old = word
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| Some(update(e, w)))
        .unwrap_or_else(|w| w);
    let mut total = wake(me, a.uaddr, a.op, a.val, u32::MAX);
    if holds(e, old) {
        total += wake(me, a.uaddr2, a.op, n2, u32::MAX);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FUTEX_OP(op, oparg, cmp, cmparg)` as `<linux/futex.h>` defines it.
    fn futex_op(op: u32, oparg: u32, cmp: u32, cmparg: u32) -> u32 {
        ((op & 0xf) << 28) | ((cmp & 0xf) << 24) | ((oparg & 0xfff) << 12) | (cmparg & 0xfff)
    }

    #[test]
    fn decodes_updates_and_compares_as_the_kernel() {
        // glibc's old condvar: FUTEX_OP(FUTEX_OP_CLEAR_WAKE_IF_GT_ONE) = SET 0, GT 1.
        let e = decode(futex_op(0, 0, 4, 1)).unwrap();
        assert_eq!(update(e, 2), 0);
        assert!(holds(e, 2) && !holds(e, 1));
        let add = decode(futex_op(1, 0xfff, 0, 0)).unwrap(); // ADD -1
        assert_eq!(update(add, 5), 4);
        let shift = decode(futex_op(OPARG_SHIFT | 2, 3, 1, 0)).unwrap(); // OR 1<<3, NE 0
        assert_eq!(update(shift, 1), 9);
        assert!(holds(shift, 1) && !holds(shift, 0));
        let lt = decode(futex_op(4, 1, 2, 0xfff)).unwrap(); // XOR 1, LT -1
        assert!(holds(lt, (-2i32) as u32) && !holds(lt, 0));
        assert_eq!(decode(futex_op(7, 0, 0, 0)), None);
        assert_eq!(decode(futex_op(0, 0, 9, 0)), None);
    }
}
