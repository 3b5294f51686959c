//! Short constructors of recorded events ([`TEv`]), for the tests of the run analyses here
//! and in the runner (`races --classify`): one mutex (9), 4-byte accesses.

use super::trace::TEv;
use crate::event::{Event, MutexKind, Op, Tid};

pub fn ev(tid: Tid, op: Op) -> TEv {
    TEv::new(Event::new(tid, op))
}

/// A create by `tid` of thread `child`.
pub fn create(tid: Tid, child: Tid) -> TEv {
    let mut e = ev(tid, Op::Create);
    e.child = Some(child);
    e
}

pub fn w(tid: Tid, addr: u64) -> TEv {
    ev(tid, Op::Write { addr, size: 4 })
}

pub fn r(tid: Tid, addr: u64) -> TEv {
    ev(tid, Op::Read { addr, size: 4 })
}

pub fn lock(tid: Tid) -> TEv {
    let m = 9;
    ev(
        tid,
        Op::Lock {
            m,
            kind: MutexKind::Normal,
        },
    )
}

pub fn unlock(tid: Tid) -> TEv {
    let m = 9;
    ev(
        tid,
        Op::Unlock {
            m,
            kind: MutexKind::Normal,
        },
    )
}
