//! Test support for the strategy tests: tiny scripted programs driven through the real
//! [`Coordinator`] and [`State`], the way the runner drives a real binary.
//!
//! Every thread of a [`Prog`] exists from step 0 ([`State::with_initial_threads`]), so the
//! first decision is already between the scripted threads (as in the POS paper's examples,
//! Yuan et al. CAV'18 §2). A thread posts its next instruction as soon as its previous one is
//! granted and posts [`Op::Exit`] after its last one.

use crate::coordinator::{Coordinator, Decision};
use crate::event::{Event, Op, Tid};
use crate::schedule::Step;
use crate::state::State;
use crate::strategy::Strategy;

/// One instruction of a scripted thread.
#[derive(Clone, Copy, Debug)]
pub enum Instr {
    /// Perform this operation.
    Do(Op),
    /// `while (!flag) sched_yield();`: post `Read flag` then `Yield`, again and again, until
    /// some thread's `Write` to `flag` has executed (checked before each read).
    SpinOn(u64),
}

/// A program: one script per thread, thread 0 first.
#[derive(Clone, Debug)]
pub struct Prog(pub Vec<Vec<Instr>>);

/// What one run did.
#[derive(Clone, Debug)]
pub struct Run {
    pub trace: Vec<Event>,
    pub steps: Vec<Step>,
    /// The last decision (`Over`, or why the run stopped early).
    pub end: Decision,
}

pub fn read(addr: u64) -> Op {
    Op::Read { addr, size: 4 }
}

pub fn write(addr: u64) -> Op {
    Op::Write { addr, size: 4 }
}

/// Where a thread is in its script.
#[derive(Clone, Copy, Debug, Default)]
struct Pc {
    index: usize,
    /// Inside a [`Instr::SpinOn`]: the read was granted, the yield is next.
    spin_yield: bool,
}

/// Thread `t`'s next operation, or `None` when its script is done (it then posts `Exit`).
fn next_op(prog: &Prog, t: Tid, pc: &mut Pc, trace: &[Event]) -> Option<Op> {
    let script = &prog.0[t as usize];
    loop {
        match script.get(pc.index)? {
            Instr::Do(op) => return Some(*op),
            Instr::SpinOn(flag) => {
                if pc.spin_yield {
                    return Some(Op::Yield);
                }
                let set = trace
                    .iter()
                    .any(|e| matches!(e.op, Op::Write { addr, .. } if addr == *flag));
                if !set {
                    return Some(read(*flag));
                }
                pc.index += 1;
            }
        }
    }
}

/// Thread `t`'s granted `op` is done: move past it.
fn advance(prog: &Prog, t: Tid, pc: &mut Pc) {
    match prog.0[t as usize].get(pc.index) {
        Some(Instr::SpinOn(_)) => pc.spin_yield = !pc.spin_yield,
        _ => pc.index += 1,
    }
}

/// Run `prog` once under `strategy` with `seed`, at most `max_steps` steps.
pub fn run(strategy: &mut dyn Strategy, prog: &Prog, seed: u64, max_steps: u64) -> Run {
    let n = prog.0.len();
    let state = State::with_initial_threads(n);
    let mut co = Coordinator::with_state(strategy, seed, max_steps, state);
    let mut pcs = vec![Pc::default(); n];
    for t in 0..n as Tid {
        let op = next_op(prog, t, &mut pcs[t as usize], &[]).unwrap_or(Op::Exit);
        co.post(t, op).expect("post of a running thread");
    }
    let end = loop {
        match co.decide() {
            Decision::Grant { tid, op, .. } => {
                if op == Op::Exit {
                    continue;
                }
                let pc = &mut pcs[tid as usize];
                advance(prog, tid, pc);
                let next = next_op(prog, tid, pc, co.trace()).unwrap_or(Op::Exit);
                co.post(tid, next).expect("post of a granted thread");
            }
            d => break d,
        }
    };
    let trace = co.trace().to_vec();
    let steps = co.finish();
    Run { trace, steps, end }
}

/// Position in `trace` of the first event of thread `t` with operation `op`.
pub fn position(trace: &[Event], t: Tid, op: Op) -> Option<usize> {
    trace.iter().position(|e| e.tid == t && e.op == op)
}

/// All positions in `trace` of events of thread `t` with operation `op`.
pub fn positions(trace: &[Event], t: Tid, op: Op) -> Vec<usize> {
    trace
        .iter()
        .enumerate()
        .filter(|(_, e)| e.tid == t && e.op == op)
        .map(|(i, _)| i)
        .collect()
}

/// The shared variable of the paper examples.
pub const X: u64 = 0x100;

/// The POS paper's delay-m example (§2, m = 7): the bug needs B's 7th event before A's.
pub fn delay7() -> Prog {
    let mut b: Vec<_> = (1..=6).map(|i| Instr::Do(write(0x1000 + 8 * i))).collect();
    b.push(Instr::Do(write(X)));
    Prog(vec![vec![Instr::Do(read(X))], b])
}

pub fn delay7_bug(trace: &[Event]) -> bool {
    position(trace, 1, write(X)) < position(trace, 0, read(X))
}

/// A writes x once, B twice: the bug is A's write between B's two.
pub fn race_twice() -> Prog {
    Prog(vec![
        vec![Instr::Do(write(X))],
        vec![Instr::Do(write(X)), Instr::Do(write(X))],
    ])
}

pub fn race_twice_bug(trace: &[Event]) -> bool {
    let a = position(trace, 0, write(X));
    let b = positions(trace, 1, write(X));
    matches!(a, Some(a) if b.len() == 2 && b[0] < a && a < b[1])
}

/// Runs `prog` `runs` times with seeds `try_seed(base, i)` and counts the runs where `bug`
/// holds of the trace. Every run must finish normally.
pub fn count(
    strategy: &mut dyn Strategy,
    prog: &Prog,
    base: u64,
    runs: u64,
    bug: impl Fn(&[Event]) -> bool,
) -> u64 {
    let mut hits = 0;
    for i in 0..runs {
        let r = run(strategy, prog, crate::rng::try_seed(base, i), 10_000);
        assert_eq!(r.end, Decision::Over, "run {i} of {}", strategy.name());
        if bug(&r.trace) {
            hits += 1;
        }
    }
    hits
}

/// Asserts that `hits` of `runs` is within 5 standard errors of probability `p`.
pub fn assert_ratio(name: &str, hits: u64, runs: u64, p: f64) {
    let got = hits as f64 / runs as f64;
    let se = (p * (1.0 - p) / runs as f64).sqrt();
    assert!(
        (got - p).abs() <= 5.0 * se,
        "{name}: hit ratio {got:.5} ({hits}/{runs}), expected {p:.5} ± {:.5}",
        5.0 * se
    );
}
