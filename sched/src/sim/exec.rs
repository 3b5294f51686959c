//! Executing an abstract program on the coordinator state machine: which operation each
//! thread posts, and in which order, exactly as libpos would report them for a real binary
//! (real-program mode) or as the POS paper's model has them (paper mode).

use super::program::{Mode, Program, Stmt};
use crate::coordinator::{Coordinator, Decision};
use crate::event::{MutexKind, Op, Tid};
use crate::state::{State, StateError};
use crate::strategy::Strategy;
use std::fmt;

/// Bytes of a memory access (`read x` / `write x` are 4-byte accesses).
pub const ACCESS_SIZE: u32 = 4;

/// The fixed event table of a program. Straight-line threads always perform the same
/// sequence of events, so an event is identified by a stable global index whatever the
/// schedule: thread `t`'s event `k` is `first[t] + k`.
#[derive(Clone, Debug)]
pub struct Events {
    /// Per event: owning thread, position in it, and the operation with *program thread
    /// indices* standing in for run tids (for dependency computations).
    pub list: Vec<StaticEvent>,
    /// Global index of each thread's first event.
    pub first: Vec<usize>,
    /// Number of events of each thread (listed ones plus the synthesized exit).
    pub len: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticEvent {
    pub thread: usize,
    pub index: usize,
    pub op: Op,
    /// For a `create`: the created thread.
    pub creates: Option<usize>,
}

/// Operation of a statement, given how thread indices map to run tids.
fn op_of(p: &Program, s: &Stmt, tid_of: impl Fn(usize) -> Tid) -> Op {
    let addr = |o: usize| p.objects[o].addr;
    // `lock m` is a default (normal) mutex, as `PTHREAD_MUTEX_INITIALIZER` gives.
    let kind = MutexKind::Normal;
    match *s {
        Stmt::Read(o) => Op::Read {
            addr: addr(o),
            size: ACCESS_SIZE,
        },
        Stmt::Write(o) => Op::Write {
            addr: addr(o),
            size: ACCESS_SIZE,
        },
        Stmt::Lock(o) => Op::Lock { m: addr(o), kind },
        Stmt::Unlock(o) => Op::Unlock { m: addr(o), kind },
        Stmt::Wait(o) => Op::SemWait { s: addr(o) },
        Stmt::Signal(o) => Op::SemPost { s: addr(o) },
        Stmt::Create(_) => Op::Create,
        Stmt::Join(t) => Op::Join { target: tid_of(t) },
        Stmt::BarrierWait(o) => Op::BarrierWait { b: addr(o) },
        Stmt::BarrierLeave(o) => Op::BarrierLeave { b: addr(o) },
        Stmt::Start => Op::Start,
    }
}

/// The `k`-th event of `thread`, including the synthesized end of real-program mode:
/// `Exit` for a created thread, `ProcessExit{0}` for main (return from `main`).
fn nth_op(p: &Program, thread: usize, k: usize, tid_of: impl Fn(usize) -> Tid) -> Option<Op> {
    let body = &p.threads[thread].body;
    if let Some(s) = body.get(k) {
        return Some(op_of(p, s, tid_of));
    }
    match (p.mode, k == body.len(), thread) {
        (Mode::Real, true, 0) => Some(Op::ProcessExit { code: 0 }),
        (Mode::Real, true, _) => Some(Op::Exit),
        _ => None,
    }
}

impl Events {
    pub fn new(p: &Program) -> Events {
        let mut list = Vec::new();
        let mut first = Vec::new();
        let mut len = Vec::new();
        for t in 0..p.threads.len() {
            first.push(list.len());
            let mut k = 0;
            while let Some(op) = nth_op(p, t, k, |i| i as Tid) {
                let creates = match p.threads[t].body.get(k) {
                    Some(Stmt::Create(c)) => Some(*c),
                    _ => None,
                };
                list.push(StaticEvent {
                    thread: t,
                    index: k,
                    op,
                    creates,
                });
                k += 1;
            }
            len.push(k);
        }
        Events { list, first, len }
    }

    pub fn id(&self, thread: usize, index: usize) -> usize {
        self.first[thread] + index
    }
}

/// Where each thread of one run is: program counters and the tid ↔ thread mapping.
#[derive(Clone, Debug)]
pub struct Cursor {
    /// Events executed so far per program thread.
    pub pc: Vec<usize>,
    /// Program thread of each run tid.
    pub thread_of: Vec<usize>,
    /// Run tid of each program thread, once it exists.
    pub tid_of: Vec<Option<Tid>>,
}

/// Something that accepts posts: the bare [`State`] (exact enumeration) or a
/// [`Coordinator`] (sampling with a strategy).
pub trait Sink {
    fn post(&mut self, tid: Tid, op: Op) -> Result<(), StateError>;
    /// A paper-mode thread ran out of events: it ends without a scheduling point.
    fn finished(&mut self, tid: Tid);
}

impl Sink for State {
    fn post(&mut self, tid: Tid, op: Op) -> Result<(), StateError> {
        State::post(self, tid, op)
    }
    fn finished(&mut self, tid: Tid) {
        self.mark_finished(tid)
    }
}

impl Sink for Coordinator<'_> {
    fn post(&mut self, tid: Tid, op: Op) -> Result<(), StateError> {
        Coordinator::post(self, tid, op)
    }
    fn finished(&mut self, tid: Tid) {
        self.state_mut().mark_finished(tid)
    }
}

impl Cursor {
    /// The initial state of a run: paper mode starts every thread (tid = thread index),
    /// real mode only main. Counters get their initial values and barriers their counts
    /// (`sem_init` and `pthread_barrier_init` are no scheduling points).
    pub fn initial_state(p: &Program) -> State {
        let mut s = match p.mode {
            Mode::Paper => State::with_initial_threads(p.threads.len()),
            Mode::Real => State::new(),
        };
        for o in &p.objects {
            match o.kind {
                crate::event::ObjKind::Sem => s.init_sem(o.addr, o.init),
                crate::event::ObjKind::Barrier => s.init_barrier(o.addr, o.init),
                _ => {}
            }
        }
        s
    }

    /// Post the first event of every initially running thread.
    pub fn start(p: &Program, sink: &mut dyn Sink) -> Result<Cursor, StateError> {
        let n = match p.mode {
            Mode::Paper => p.threads.len(),
            Mode::Real => 1,
        };
        let c = Cursor {
            pc: vec![0; p.threads.len()],
            thread_of: (0..n).collect(),
            tid_of: (0..p.threads.len())
                .map(|i| (i < n).then_some(i as Tid))
                .collect(),
        };
        for t in 0..n {
            c.post_next(p, t, sink)?;
        }
        Ok(c)
    }

    fn post_next(&self, p: &Program, thread: usize, sink: &mut dyn Sink) -> Result<(), StateError> {
        let tid = self.tid_of[thread].expect("posting thread exists");
        let tid_of = |i: usize| self.tid_of[i].unwrap_or(Tid::MAX);
        match nth_op(p, thread, self.pc[thread], tid_of) {
            Some(op) => sink.post(tid, op),
            None => {
                sink.finished(tid);
                Ok(())
            }
        }
    }

    /// `tid`'s pending event was granted (`child` for a create): advance its program counter
    /// and post what follows, the parent's next event first, then the child's first.
    /// Returns the program thread and index of the executed event.
    pub fn granted(
        &mut self,
        p: &Program,
        tid: Tid,
        op: Op,
        child: Option<Tid>,
        sink: &mut dyn Sink,
    ) -> Result<(usize, usize), StateError> {
        let thread = self.thread_of[tid as usize];
        let index = self.pc[thread];
        self.pc[thread] += 1;
        let created = match (p.threads[thread].body.get(index), child) {
            (Some(Stmt::Create(c)), Some(ctid)) => {
                debug_assert_eq!(ctid as usize, self.thread_of.len());
                self.thread_of.push(*c);
                self.tid_of[*c] = Some(ctid);
                Some(*c)
            }
            _ => None,
        };
        if !matches!(op, Op::Exit | Op::ProcessExit { .. }) {
            self.post_next(p, thread, sink)?;
        }
        if let Some(c) = created {
            self.post_next(p, c, sink)?;
        }
        Ok((thread, index))
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Finished,
    Deadlock,
}

/// One complete run: the executed events as (thread, index), and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub executed: Vec<(usize, usize)>,
    pub end: End,
}

/// A simulation failure: a protocol misuse (a simulator bug) or a strategy that diverged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for SimError {}

impl From<StateError> for SimError {
    fn from(e: StateError) -> Self {
        SimError(format!("simulator: {e}"))
    }
}

/// Run `p` once under `strategy` seeded with `seed`, through the same [`Coordinator`] the
/// runner drives for real programs.
pub fn run_once(
    p: &Program,
    events: &Events,
    strategy: &mut dyn Strategy,
    seed: u64,
) -> Result<Run, SimError> {
    let state = Cursor::initial_state(p);
    let mut co = Coordinator::with_state(strategy, seed, events.list.len() as u64 + 1, state);
    let mut cur = Cursor::start(p, &mut co)?;
    let mut executed = Vec::with_capacity(events.list.len());
    let end = loop {
        match co.decide() {
            Decision::Grant { tid, op, child, .. } => {
                executed.push(cur.granted(p, tid, op, child, &mut co)?);
            }
            Decision::Over => break End::Finished,
            Decision::Deadlock(_) => break End::Deadlock,
            Decision::Wait => return Err(SimError("simulator: a thread did not post".into())),
            Decision::StepLimit => {
                return Err(SimError("simulator: more steps than events".into()))
            }
            Decision::Diverged(d) => return Err(SimError(format!("strategy {d}"))),
        }
    };
    // End the run without `Coordinator::finish`, whose schedule text the simulator never
    // reads (formatting it dominated the cost of a simulated run).
    let steps = co.steps();
    drop(co);
    strategy.end(steps);
    Ok(Run { executed, end })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::rw::RandomWalk;

    #[test]
    fn real_mode_mirrors_libpos_events() {
        let p = Program::parse(
            "thread main: create A; create B; join A; join B\nthread A: write x\nthread B: read x",
        )
        .unwrap();
        let ev = Events::new(&p);
        let ops: Vec<String> = ev.list.iter().map(|e| e.op.name().to_string()).collect();
        assert_eq!(
            ops,
            [
                "create",
                "create",
                "join",
                "join",
                "process_exit",
                "start",
                "write",
                "exit",
                "start",
                "read",
                "exit"
            ]
        );
        let mut rw = RandomWalk::new();
        for seed in 0..50 {
            let r = run_once(&p, &ev, &mut rw, seed).unwrap();
            assert_eq!(r.end, End::Finished);
            assert_eq!(r.executed.len(), ev.list.len());
            assert_eq!(r.executed[0], (0, 0), "only main runs at first");
            assert_eq!(*r.executed.last().unwrap(), (0, 4), "process exit last");
        }
    }

    #[test]
    fn paper_mode_has_only_listed_events_and_detects_deadlock() {
        let p = Program::parse("thread A: lock m; lock n; unlock n; unlock m\nthread B: lock n; lock m; unlock m; unlock n",).unwrap();
        let ev = Events::new(&p);
        assert_eq!(ev.list.len(), 8);
        let mut rw = RandomWalk::new();
        let mut deadlocks = 0;
        for seed in 0..200 {
            let r = run_once(&p, &ev, &mut rw, seed).unwrap();
            if r.end == End::Deadlock {
                deadlocks += 1;
                assert_eq!(r.executed.len(), 2);
            } else {
                assert_eq!(r.executed.len(), 8);
            }
        }
        // P(deadlock) = 1/2 under rw (the second step decides): 200 runs, sd ~ 7.
        assert!((60..140).contains(&deadlocks), "{deadlocks}");
    }
}
