//! The decision loop of one run, without any I/O: threads post events, the coordinator decides
//! who runs next. The runner (Unix sockets), libpos's standalone mode (a socketpair) and the
//! simulator (abstract programs) all drive this same type.

use crate::event::{Event, Obj, ObjKind, Op, Tid};
use crate::schedule::Step;
use crate::state::{Deadlock, State, StateError};
use crate::strategy::{Divergence, Strategy};

/// Default bound on scheduling steps; beyond it a run is reported as a livelock.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;

/// What the coordinator wants done next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Let `tid` perform its pending event; `result` (and `child` for a create) go back to it.
    Grant {
        tid: Tid,
        op: Op,
        result: i32,
        child: Option<Tid>,
        /// Virtual time after the step (ns since the run's start, see
        /// [`crate::state::clock`]), handed to the thread so that its clock reads agree.
        now: u64,
    },
    /// Some thread is still running uncontrolled code: wait for its next post. Also when
    /// nothing is enabled but a thread blocked outside control may still come back.
    Wait,
    /// The process exited or every thread finished.
    Over,
    Deadlock(Deadlock),
    /// More than the allowed number of steps: a livelock.
    StepLimit,
    Diverged(Divergence),
}

pub struct Coordinator<'s> {
    state: State,
    strategy: &'s mut dyn Strategy,
    steps: u64,
    max_steps: u64,
    trace: Vec<Event>,
    /// By step: whether it was a preemption (see [`Step::preempt`]).
    preempted: Vec<bool>,
    /// Rounds in a row in which only spins were enabled ([`Coordinator::let_time_pass`]).
    spin_rounds: u32,
    /// Ticks since the last grant ([`Coordinator::pass_outside_time`]).
    outside_ticks: u32,
    /// The clock when the threads outside control were first seen all asleep in the kernel
    /// since the last step: timed waits' deadlines are passed towards from there at the
    /// pace of real time ([`Self::pass_outside_time`]).
    asleep_base: Option<u64>,
    /// Threads that announced a kernel wait with a timeout ([`Coordinator::kernel_wait`]),
    /// with its deadline in virtual time; until their next post.
    kernel_waits: Vec<(Tid, u64)>,
}

/// Real time between two ticks of virtual time while the run waits for a thread blocked
/// outside control ([`Coordinator::waits_outside`]).
pub const OUTSIDE_TICK: std::time::Duration = std::time::Duration::from_millis(1);

/// The virtual time the first such tick lets pass (as much as the real time it stands for);
/// each further tick without a grant doubles it.
pub const OUTSIDE_QUANTUM_NS: u64 = 1_000_000;

/// The first quantum of virtual time a round of spinning threads lets pass (1 µs, about a
/// `sched_yield` natively); each further round in a row doubles it.
pub const SPIN_QUANTUM_NS: u64 = 1_000;

/// The quantum stops doubling at `SPIN_QUANTUM_NS << 40` (about 13 days).
const MAX_SPIN_DOUBLINGS: u32 = 40;

/// A step that makes no progress of its own: a yield, a real sleep, a spin's repeated read.
fn is_spin(trace: &[Event], e: &Event) -> bool {
    matches!(e.op, Op::Yield | Op::Sleep) || crate::spin::spinning(trace, e)
}

impl<'s> Coordinator<'s> {
    /// Start a run driven by `strategy`, seeded with `seed` (see [`crate::rng::try_seed`]).
    /// The strategy is lent for one run; it keeps what it learns (PCT's k) for the next.
    pub fn new(strategy: &'s mut dyn Strategy, seed: u64, max_steps: u64) -> Self {
        Self::with_state(strategy, seed, max_steps, State::new())
    }

    /// Like [`Coordinator::new`], starting from a prepared `state` (e.g.
    /// [`State::with_initial_threads`] for the simulator's paper mode).
    pub fn with_state(
        strategy: &'s mut dyn Strategy,
        seed: u64,
        max_steps: u64,
        state: State,
    ) -> Self {
        strategy.begin(seed);
        Coordinator {
            state,
            strategy,
            steps: 0,
            max_steps,
            trace: Vec::new(),
            preempted: Vec::new(),
            spin_rounds: 0,
            outside_ticks: 0,
            asleep_base: None,
            kernel_waits: Vec::new(),
        }
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// For non-scheduling notifications (semaphore and barrier initialisation).
    pub fn state_mut(&mut self) -> &mut State {
        &mut self.state
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The executed events so far, in order.
    pub fn trace(&self) -> &[Event] {
        &self.trace
    }

    /// Thread `tid` is about to perform `op` and waits for a grant.
    #[inline]
    pub fn post(&mut self, tid: Tid, op: Op) -> Result<(), StateError> {
        self.state.post(tid, op)?;
        if !self.kernel_waits.is_empty() {
            self.kernel_waits.retain(|&(t, _)| t != tid);
        }
        self.strategy.pending(&Event::new(tid, op));
        Ok(())
    }

    /// Running thread `tid` was seen blocked in the kernel in a call libpos does not
    /// control: decide without it until its next post ([`crate::state::Status::Outside`]).
    pub fn mark_outside(&mut self, tid: Tid) -> Result<(), StateError> {
        self.state.mark_outside(tid)
    }

    /// Decide the next step, if every live thread has posted.
    pub fn decide(&mut self) -> Decision {
        if self.state.is_over() {
            return Decision::Over;
        }
        if !self.state.all_posted() {
            return Decision::Wait;
        }
        if self.state.any_timed() {
            self.let_time_pass();
        }
        if self.state.any_outside() && self.state.enabled_events().is_empty() {
            return Decision::Wait; // only a thread blocked outside control can go on
        }
        let enabled = self.state.enabled_events();
        if enabled.is_empty() {
            return match self.state.deadlock() {
                Some(d) => Decision::Deadlock(d),
                None => Decision::Over,
            };
        }
        if self.steps >= self.max_steps {
            return Decision::StepLimit;
        }
        let (i, ev) = match self.strategy.choose(enabled) {
            Ok(i) if i < enabled.len() => (i, enabled[i]),
            Ok(i) => {
                return Decision::Diverged(Divergence {
                    step: self.steps,
                    reason: format!("strategy chose {i} of {} events", enabled.len()),
                })
            }
            Err(d) => return Decision::Diverged(d),
        };
        let preempt = is_preemption(self.trace.last(), ev.tid, enabled);
        if !is_spin(&self.trace, &ev) {
            self.spin_rounds = 0;
        }
        self.outside_ticks = 0;
        self.asleep_base = None;
        let done = self.state.execute_enabled(i);
        self.steps += 1;
        self.trace.push(ev);
        self.preempted.push(preempt);
        self.strategy.executed(&ev);
        if done.result == crate::state::code::ETIMEDOUT && ev.op.deadline().is_some() {
            self.strategy.timed_out(&ev);
        }
        Decision::Grant {
            tid: ev.tid,
            op: ev.op,
            result: done.result,
            child: done.child,
            now: self.state.now(),
        }
    }

    /// Virtual time passes when no thread can make progress otherwise: nothing is enabled, or
    /// only spins are (threads yielding with `sched_yield`, real sleeps, repeated reads; see
    /// [`crate::state::clock`] for why they count).
    /// - Nothing enabled: the clock jumps to the earliest pending deadline, unless a thread
    ///   is blocked outside control: then the driver lets it pass in ticks
    ///   ([`Self::pass_outside_time`]).
    /// - Only spins: it moves by a quantum, [`SPIN_QUANTUM_NS`] doubled at each such round
    ///   in a row, at most to that deadline, and a spinner runs before the next round. A
    ///   spinner that polls the clock so sees its own short deadline pass before a far one
    ///   (`while (!flag && now() < t + 1 ms) sched_yield();` against a 50 ms sleeper), and
    ///   one whose flag is already set sees it before any time passes (a thread that yields
    ///   once while another, holding a lock, starts a 20 ms sleep: with the jump its 2 ms
    ///   timed lock took the lock after the sleep instead of timing out). A spin for a far
    ///   deadline costs a round per doubling: about 20 for one second.
    fn let_time_pass(&mut self) {
        if self.state.enabled_events().is_empty() {
            if self.state.any_outside() {
                return; // in ticks of real time, see `pass_outside_time`
            }
            while self.state.enabled_events().is_empty() && self.state.advance_clock() {}
            return;
        }
        let trace = &self.trace;
        let idle = self
            .state
            .enabled_events()
            .iter()
            .all(|e| is_spin(trace, e));
        if idle {
            let quantum = SPIN_QUANTUM_NS << self.spin_rounds.min(MAX_SPIN_DOUBLINGS);
            self.spin_rounds += 1;
            self.state.advance_clock_within(quantum);
        }
    }

    /// Whether the run waits for a thread blocked outside control while a sleep could end:
    /// nothing is enabled, so the driver calls [`Self::pass_outside_time`] every
    /// [`OUTSIDE_TICK`] of real time until a post comes or a sleep ends.
    pub fn waits_outside(&self) -> bool {
        self.state.all_posted()
            && self.state.any_outside()
            && self.state.none_enabled()
            && self.state.any_timed()
    }

    /// A tick of real time passed while [`Self::waits_outside`]: the clock moves by
    /// [`OUTSIDE_QUANTUM_NS`], doubled at each tick without a grant, at most to the earliest
    /// sleep's deadline. Jumping straight to it (as when no thread is outside) let a 100 s
    /// sleep end before a thread that a pipe write had just woken from `read` came back.
    /// Waiting in real time gives that thread the time it needs; the doubling keeps a sleep
    /// next to a thread that never comes back cheap (about 17 ticks for 100 s). Returns
    /// whether the clock moved.
    ///
    /// Nor does the clock pass the deadline of a kernel wait that a thread still outside
    /// announced ([`Self::kernel_wait`]): that thread times out first, when it comes back in
    /// real time. Before, a receive with a 1 s timeout got data a sender wrote after a 2 s
    /// sleep (the ticks ended the sleep within milliseconds), a bug missed in every run.
    ///
    /// A timed wait's deadline is passed towards only while every thread outside is asleep
    /// in the kernel (`asleep`: for how long, in real time, as the driver sees it in
    /// `/proc`), and then at the pace of real time: such a thread waits for something from
    /// outside the run (a signal, a read of a pipe that only a timed-out thread will write),
    /// which takes the time it takes natively. Before 2026-11-28 no timed wait could time out
    /// then, and a program whose way forward was a timeout (pbzip2's 1 s poll of its writer,
    /// next to its signal thread in `sigwait`) was a false `hang` (probe 21).
    pub fn pass_outside_time(&mut self, asleep: Option<std::time::Duration>) -> bool {
        if !self.waits_outside() {
            return false;
        }
        let now = self.state.now();
        let cap = self
            .kernel_waits
            .iter()
            .filter(|&&(t, _)| self.state.status(t) == crate::state::Status::Outside)
            .map(|&(_, d)| d)
            .min();
        if cap.is_some_and(|d| d <= now) {
            return false;
        }
        let quantum = OUTSIDE_QUANTUM_NS << self.outside_ticks.min(MAX_SPIN_DOUBLINGS);
        let quantum = cap.map_or(quantum, |d| quantum.min(d - now));
        self.outside_ticks += 1;
        if self.state.advance_clock_within(quantum) {
            return true;
        }
        let (Some(real), Some(d)) = (asleep, self.state.next_timed_deadline()) else {
            self.asleep_base = None;
            return false;
        };
        let base = *self.asleep_base.get_or_insert(now);
        let target = d.min(base.saturating_add(real.as_nanos().min(u64::MAX as u128) as u64));
        self.state
            .advance_clock_to(cap.map_or(target, |c| target.min(c)))
    }

    /// Running thread `t` is about to wait in the kernel, outside control, for at most `ns`
    /// ([`crate::protocol::Msg::KernelWait`]): until its next post, virtual time does not
    /// pass `now + ns` while it is outside ([`Self::pass_outside_time`]).
    pub fn kernel_wait(&mut self, t: Tid, ns: u64) {
        let deadline = self.state.now().saturating_add(ns);
        self.kernel_waits.retain(|&(u, _)| u != t);
        self.kernel_waits.push((t, deadline));
    }

    /// `sem_init` with `value` (not a scheduling point): the state and the strategy learn it
    /// now, between the events executed so far and the next one.
    pub fn init_sem(&mut self, s: u64, value: u32) {
        self.state.init_sem(s, value);
        self.strategy.initialised(Obj::sync(ObjKind::Sem, s), value);
    }

    /// `pthread_barrier_init` with `count` (not a scheduling point), as [`Self::init_sem`].
    pub fn init_barrier(&mut self, b: u64, count: u32) {
        self.state.init_barrier(b, count);
        self.strategy
            .initialised(Obj::sync(ObjKind::Barrier, b), count);
    }

    /// `pthread_once` on control `o` that reads as never run, or as completed with `done`
    /// (not a scheduling point): see [`State::init_once`].
    pub fn init_once(&mut self, o: u64, done: bool) {
        self.state.init_once(o, done);
    }

    /// `pthread_mutex_init` of a robust mutex (not a scheduling point): see
    /// [`State::init_mutex`]. The strategy learns it as [`Self::init_sem`] (exploration
    /// replays its traces with it).
    pub fn init_mutex(&mut self, m: u64) {
        self.state.init_mutex(m);
        self.strategy.initialised(Obj::sync(ObjKind::Mutex, m), 0);
    }

    /// End the run: tells the strategy, returns the schedule.
    pub fn finish(self) -> Vec<Step> {
        self.strategy.end(self.steps);
        let mut steps = schedule_of(&self.state, &self.trace);
        for (s, &p) in steps.iter_mut().zip(&self.preempted) {
            s.preempt = p;
        }
        steps
    }

    /// By step so far: whether it was a preemption (see [`Step::preempt`]).
    pub fn preempted(&self) -> &[bool] {
        &self.preempted
    }
}

/// Whether granting `next` right after `prev` ran switches away from a thread that could have
/// continued: `prev`'s thread has an event among `enabled` and did not give up the processor
/// (a yield or sleep invites the switch). The definition of [`Step::preempt`], shared with
/// the minimiser.
pub fn is_preemption(prev: Option<&Event>, next: Tid, enabled: &[Event]) -> bool {
    prev.is_some_and(|p| {
        p.tid != next && !p.op.is_yield() && enabled.iter().any(|e| e.tid == p.tid)
    })
}

/// Turn a trace into stable, human-readable schedule steps.
pub fn schedule_of(state: &State, trace: &[Event]) -> Vec<Step> {
    trace
        .iter()
        .map(|e| Step::new(e.tid, state.name(e.tid).clone(), e.op.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::rw::RandomWalk;

    #[test]
    fn decisions_skip_a_thread_outside_control_and_wait_when_only_it_can_go_on() {
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 7, 100);
        co.post(0, Op::Create).unwrap();
        let Decision::Grant { child: Some(a), .. } = co.decide() else {
            panic!("create granted")
        };
        co.post(a, Op::Start).unwrap();
        assert_eq!(co.decide(), Decision::Wait, "main still runs");
        // Main blocks in the kernel (say `read` on a pipe a will write): a runs alone.
        co.mark_outside(0).unwrap();
        assert!(matches!(co.decide(), Decision::Grant { tid, .. } if tid == a));
        co.post(a, Op::Join { target: 0 }).unwrap();
        // Nothing enabled, main may come back: wait, no deadlock.
        assert_eq!(co.decide(), Decision::Wait);
        co.post(0, Op::Exit).unwrap();
        assert!(matches!(
            co.decide(),
            Decision::Grant {
                tid: 0,
                op: Op::Exit,
                ..
            }
        ));
        assert!(matches!(co.decide(), Decision::Grant { tid, .. } if tid == a));
        // A post from outside while another thread runs is accepted; decisions wait for both.
        co.post(a, Op::Yield).unwrap();
        assert!(matches!(co.decide(), Decision::Grant { tid, .. } if tid == a));
        co.mark_outside(a).unwrap();
        assert_eq!(co.decide(), Decision::Wait);
        co.post(a, Op::Exit).unwrap();
        assert!(matches!(co.decide(), Decision::Grant { op: Op::Exit, .. }));
        assert_eq!(co.decide(), Decision::Over);
    }

    #[test]
    fn a_thread_spinning_on_a_flag_lets_virtual_time_pass_for_a_sleeper() {
        let flag = Op::Read {
            addr: 0x40,
            size: 4,
        };
        // Main creates a, which sleeps until 10 µs (it will set the flag); main reads the
        // flag. `between`: what main does after that first read. Returns the time of each
        // of main's further reads until a is woken (at most 10).
        let spin = |between: Option<Op>| {
            let mut rw = RandomWalk::new();
            let mut co = Coordinator::new(&mut rw, 3, 1_000);
            co.post(0, Op::Create).unwrap();
            let Decision::Grant { child: Some(a), .. } = co.decide() else {
                panic!("create granted")
            };
            co.post(a, Op::SleepUntil { deadline: 10_000 }).unwrap();
            co.post(0, flag).unwrap();
            assert!(
                matches!(co.decide(), Decision::Grant { tid: 0, now: 0, .. }),
                "only main, and its first read is no spin"
            );
            if let Some(op) = between {
                co.post(0, op).unwrap();
                co.decide();
            }
            // The time of each decision until the sleeper is woken.
            let mut times = Vec::new();
            co.post(0, flag).unwrap();
            for _ in 0..10 {
                let Decision::Grant { tid, now, .. } = co.decide() else {
                    panic!("a grant")
                };
                times.push(now);
                if tid == a || co.state().is_enabled(a) {
                    break;
                }
                co.post(0, flag).unwrap();
            }
            times
        };
        // The same read again is a spin: time passes by a quantum that doubles each round,
        // up to the sleeper's deadline, and main reads the clock in between.
        assert_eq!(spin(None), [1_000, 3_000, 7_000, 10_000]);
        // A write in between ends the spin: a fresh read of a changed flag is work, and no
        // time passes for it.
        let write = Op::Write {
            addr: 0x40,
            size: 4,
        };
        assert_eq!(spin(Some(write))[0], 0, "no spin: main reads at time 0");
    }

    /// A thread that yields once while another starts a sleep holding a lock sees the lock
    /// held before any time passes: its short timed lock then times out during the sleep.
    /// With the clock jumping to the sleep's end at the first yield, the holder's unlock
    /// came first and the 2 ms timed lock succeeded (probe 17: a C11 `mtx_timedlock` false
    /// alarm in every run).
    #[test]
    fn a_yield_does_not_let_a_far_sleep_end_before_a_near_deadline() {
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 1, 1_000);
        co.post(0, Op::Create).unwrap();
        let Decision::Grant { child: Some(a), .. } = co.decide() else {
            panic!("create granted")
        };
        let m = Op::Lock {
            m: 8,
            kind: crate::event::MutexKind::Normal,
        };
        co.post(a, m).unwrap();
        co.post(0, Op::Yield).unwrap();
        // a takes the lock (the only choice besides the yield: force it by order).
        loop {
            match co.decide() {
                Decision::Grant { tid, .. } if tid == a => break,
                Decision::Grant { .. } => co.post(0, Op::Yield).unwrap(),
                d => panic!("{d:?}"),
            }
        }
        co.post(
            a,
            Op::SleepUntil {
                deadline: 20_000_000,
            },
        )
        .unwrap();
        // Main yields once more, sees the lock held and asks for it until 2 ms.
        let Decision::Grant { tid: 0, now, .. } = co.decide() else {
            panic!("main's yield runs before the sleep ends")
        };
        assert!(now < 2_000_000, "{now}");
        co.post(
            0,
            Op::TimedLock {
                m: 8,
                kind: crate::event::MutexKind::Normal,
                deadline: now + 2_000_000,
            },
        )
        .unwrap();
        let Decision::Grant { tid: 0, result, .. } = co.decide() else {
            panic!("main's timed lock ends first")
        };
        assert_eq!(result, crate::state::code::ETIMEDOUT);
    }

    #[test]
    fn ticks_stop_at_the_deadline_of_a_kernel_wait_still_outside() {
        // A reader waits in the kernel for at most 5 ms (it announced it), a sender sleeps
        // 20 ms: the ticks stop at 5 ms until the reader is back (its timeout comes first),
        // then go on to the sleep's end.
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 2, 1_000);
        co.post(0, Op::Create).unwrap();
        let Decision::Grant {
            child: Some(sender),
            ..
        } = co.decide()
        else {
            panic!("create granted")
        };
        co.kernel_wait(0, 5_000_000);
        co.mark_outside(0).unwrap();
        co.post(
            sender,
            Op::SleepUntil {
                deadline: 20_000_000,
            },
        )
        .unwrap();
        assert!(co.waits_outside());
        let mut times = Vec::new();
        for _ in 0..5 {
            co.pass_outside_time(None);
            times.push(co.state().now());
        }
        assert_eq!(
            times,
            [1_000_000, 3_000_000, 5_000_000, 5_000_000, 5_000_000]
        );
        // Back from the kernel (timed out): its post clears the cap.
        co.post(0, Op::Join { target: sender }).unwrap();
        assert!(!co.waits_outside());
        let Decision::Grant { tid, now, .. } = co.decide() else {
            panic!("the sleep ends")
        };
        assert_eq!((tid, now), (sender, 20_000_000));
    }

    /// Probe 17's `sleep_jump_setaside`: main wakes a reader blocked in `read` (set aside
    /// outside control) with a pipe write and joins it, while a third thread sleeps 100 s.
    /// Time must not jump to the sleep's end before the reader is back: it passes in ticks.
    #[test]
    fn while_a_thread_is_outside_control_time_passes_in_ticks() {
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 2, 1_000);
        let spawn = |co: &mut Coordinator<'_>| {
            co.post(0, Op::Create).unwrap();
            let Decision::Grant { child: Some(c), .. } = co.decide() else {
                panic!("create granted")
            };
            c
        };
        let reader = spawn(&mut co);
        co.mark_outside(reader).unwrap();
        let far = 100_000_000_000;
        let sleeper = spawn(&mut co);
        co.post(sleeper, Op::SleepUntil { deadline: far }).unwrap();
        co.post(0, Op::Join { target: reader }).unwrap();
        assert!(co.waits_outside());
        assert_eq!(co.decide(), Decision::Wait, "no jump to 100 s");
        assert_eq!(co.state().now(), 0);
        // Each tick doubles the quantum (1, 2, 4 ms...).
        let mut times = Vec::new();
        for _ in 0..3 {
            assert!(co.pass_outside_time(None));
            assert_eq!(co.decide(), Decision::Wait);
            times.push(co.state().now());
        }
        assert_eq!(times, [1_000_000, 3_000_000, 7_000_000]);
        // The reader comes back and exits: main's join and the reader's exit run, and the
        // quanta start again from 1 ms; no tick is due while a thread can run.
        co.post(reader, Op::Exit).unwrap();
        assert!(!co.waits_outside() && !co.pass_outside_time(None));
        let Decision::Grant { tid, .. } = co.decide() else {
            panic!("the reader's exit")
        };
        assert_eq!(tid, reader);
        let Decision::Grant { tid: 0, .. } = co.decide() else {
            panic!("main's join")
        };
        assert_eq!(co.state().now(), 7_000_000);
        // With nobody outside, the clock jumps to the sleep's end as before.
        co.post(0, Op::Join { target: sleeper }).unwrap();
        assert!(!co.waits_outside());
        let Decision::Grant { tid, now, .. } = co.decide() else {
            panic!("the sleep ends")
        };
        assert_eq!((tid, now), (sleeper, far));
        // A thread that never comes back costs about 17 ticks for a 100 s sleep.
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 2, 1_000);
        let away = spawn(&mut co);
        co.mark_outside(away).unwrap();
        let sleeper = spawn(&mut co);
        co.post(sleeper, Op::SleepUntil { deadline: far }).unwrap();
        co.post(0, Op::Join { target: sleeper }).unwrap();
        let mut ticks = 0;
        while co.decide() == Decision::Wait {
            assert!(co.pass_outside_time(None));
            ticks += 1;
        }
        assert_eq!(ticks, 17);
        assert_eq!(co.state().now(), far);
    }

    /// Probe 21's `semtimedwait_vs_read`: a reader blocked for good in `read` (outside
    /// control) while main's `sem_timedwait` can only end by its timeout. No timed wait
    /// times out while the driver has not seen every thread outside asleep in the kernel;
    /// once it has, the clock moves towards the deadline at the pace of real time.
    #[test]
    fn a_timed_wait_times_out_in_real_time_while_every_thread_outside_is_asleep() {
        let mut rw = RandomWalk::new();
        let mut co = Coordinator::new(&mut rw, 2, 1_000);
        co.post(0, Op::Create).unwrap();
        let Decision::Grant {
            child: Some(reader),
            ..
        } = co.decide()
        else {
            panic!("create granted")
        };
        co.mark_outside(reader).unwrap();
        co.init_sem(0x10, 0);
        let deadline = 1_000_000_000;
        co.post(0, Op::SemTimedWait { s: 0x10, deadline }).unwrap();
        assert_eq!(co.decide(), Decision::Wait);
        assert!(co.waits_outside(), "ticks are due: a timed wait is pending");
        assert!(
            !co.pass_outside_time(None),
            "not seen asleep: no time passes"
        );
        assert_eq!(co.state().now(), 0);
        let ms = std::time::Duration::from_millis;
        assert!(co.pass_outside_time(Some(ms(300))));
        assert_eq!(co.state().now(), 300_000_000);
        assert_eq!(co.decide(), Decision::Wait);
        // Real time past the deadline: the wait times out at its deadline, not later.
        assert!(co.pass_outside_time(Some(ms(1_500))));
        assert_eq!(co.state().now(), deadline);
        let Decision::Grant { tid: 0, .. } = co.decide() else {
            panic!("the timed wait ends")
        };
    }
}
