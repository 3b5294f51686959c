//! The abstract-program simulator: small programs in a text format, executed by the same
//! coordinator state machine ([`crate::state`], [`crate::coordinator`]) and the same
//! strategies as real binaries. It enumerates a program's partial orders (Mazurkiewicz
//! traces), computes their exact probabilities under random walk, estimates them under any
//! other strategy by sampling, and reports the POS paper's coverage metric (Yuan et al.,
//! "Partial Order Aware Concurrency Sampling", CAV'18, §6): the minimum, over all partial
//! orders, of the probability of hitting it.
//!
//! # The `.model` format
//!
//! ```text
//! # comment
//! sem w = 1                        # initial value of a wait/signal counter (default 0)
//! barrier b = 2                    # a barrier and its count (required for each barrier)
//! thread A: read x; write y        # one thread, statements separated by `;`
//! thread B:                        # or a block: indented lines continue the thread
//!   lock m; write x; unlock m
//!   wait w; signal w
//! bug: B.3 < A.1                   # optional: event 3 of B happens before event 1 of A
//! ```
//!
//! Statements: `read X`, `write X` (4-byte memory accesses, [`crate::Op::Read`]/`Write`),
//! `lock M`, `unlock M` (a normal mutex), `wait W`, `signal W` (the paper's counter,
//! modelled as a semaphore: `SemWait`/`SemPost`), `create T`, `join T`, and
//! `barrier_wait B; barrier_leave B` (always as that pair: `pthread_barrier_wait` as libpos
//! posts it, an arrival then a leave that blocks until the count arrived). Each object name is
//! one object (distinct names never alias) and has one kind, fixed by the statements using
//! it. Events are numbered from 1 within their thread (a created thread's start is its
//! event 0); `bug:` takes a comma-separated conjunction of `T.i < U.j` (happens-before in
//! the partial order).
//!
//! Two modes:
//! - **paper mode** (no thread called `main`): every thread exists at step 0 (tids in
//!   declaration order, named `0`, `0.1`, `0.2`, ...) and only the listed events are
//!   scheduling points; a thread ends silently after its last event. This is the model of
//!   the POS paper, and gives its numbers (delay-7 under random walk: 1/128).
//!   `create`/`join` are not allowed.
//! - **real-program mode** (a `main` thread): exactly what libpos reports for a real binary.
//!   Only main exists at first; `create T` is [`crate::Op::Create`] and `T` gets the next
//!   tid; `T`'s first post is its start ([`crate::Op::Start`], event `T.0`: libpos keeps a
//!   created thread stopped at its entry until that is granted); every created thread
//!   ends with [`crate::Op::Exit`] and main with `ProcessExit{code: 0}`, both scheduling
//!   points; `join T` waits for `T`'s exit and must follow `create T` in the same thread.
//!   After a create is granted, the parent's next event is posted before the child's first.
//!
//! Modules: [`program`] (parsing), [`exec`] (running a program on the state machine),
//! [`orders`] (partial orders, enumeration, exact random walk), [`sample`] (estimates and
//! coverage), [`micro`] (the paper's random micro benchmarks).

pub mod exec;
pub mod micro;
pub mod orders;
pub mod program;
pub mod sample;

pub use exec::SimError;
pub use orders::{Order, Orders};
pub use program::Program;
pub use sample::Estimate;

/// Everything `poscheck model` reports about one program.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub orders: Orders,
    /// One per requested strategy, in the requested order.
    pub estimates: Vec<Estimate>,
}

/// Enumerate the orders of `p`, then get each algorithm's probabilities: `rw` exactly when
/// `exact_rw` (otherwise sampled like the rest), the others from `samples` seeded runs.
pub fn analyze(
    p: &Program,
    algos: &[String],
    samples: u64,
    seed: u64,
    exact_rw: bool,
) -> Result<Analysis, SimError> {
    let orders = Orders::enumerate(p, orders::DEFAULT_MAX_PREFIXES)?;
    let opts = sample::options_for(&orders);
    let mut estimates = Vec::new();
    for a in algos {
        let e = if exact_rw && (a == "rw" || a == "random") {
            Estimate::exact_rw(&orders)
        } else {
            sample::sample(p, &orders, a, &opts, samples, seed)?
        };
        estimates.push(e);
    }
    Ok(Analysis { orders, estimates })
}

#[cfg(test)]
mod tests;
