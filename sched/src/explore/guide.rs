//! The strategy every exploration algorithm runs the program with: follow a forced prefix of
//! choices, then continue by a fixed deterministic rule, maintaining the sleep set and
//! recording, for every step, the enabled events and the sleep set of the state, plus the
//! semaphore and barrier initialisations of the run.
//!
//! The rules are made fair for spin loops: a thread that yields (`sched_yield`, a sleep) is
//! not chosen again while a thread that was enabled at its yield can run and has not run
//! since — the fairness condition of CHESS (Musuvathi & Qadeer, "Fair stateless model
//! checking", PLDI'08, §3: a yielding thread gets lower priority than the threads enabled at
//! its yield until they are scheduled). Without it, the lowest-thread-first rule runs a
//! thread that waits by yielding forever (the thread it waits for never runs), and every
//! exploration of such a program is one step-limited livelock. A spin-wait without a yield
//! (a loop polling a trylock, or a lock with only reads inside, or a flag read at memory
//! points: [`crate::spin::SpinWatch`]) defers its thread as a yield does once detected (it
//! does not wake sleeping events, see `wake_for_fairness`). Programs without yields or
//! spins are scheduled exactly as before.
//!
//! With [`Guide::approximate`] the prefix is a *target* rather than a command: approximate
//! replay (Jensen, Møller, Raychev, Dimitrov, Vechev, "Stateless Model Checking of
//! Event-Driven Applications", OOPSLA'15, §2.3 and §4.2). Each target event is identified by
//! its thread, its index among that thread's events and its operation name (not its object:
//! heap addresses change with the allocation order of a different schedule); it runs when its
//! thread is there and it is enabled, and is skipped otherwise (counted in
//! [`Guide::skipped`]); once the target is used up the rule takes over.

use super::trace::{
    barrier_open, dependent_anywhere, exits_after_robust_lock, exits_in_once, nested_in_owner,
    rw_unlock_reads, thread_indices, Init, TEv,
};
use crate::event::{Event, Obj, ObjKind, Op, Tid};
use crate::spin::SpinWatch;
use crate::strategy::{Divergence, Strategy};

/// Lock-unlock pairs in a row (only reads inside, no other thread's step) after which the
/// fairness rule treats a thread as polling, as after a yield. Far below PCT's
/// [`SpinWatch::POLLS`]: here it only changes which thread the free continuation runs, never
/// which traces are explored, and every poll before the switch is a race the exploration
/// reverses (at a thousand, `lock; e = q == 0; unlock` polls made each execution thousands
/// of steps long: 8 executions per second).
const LOCK_POLLS: u32 = 8;

/// Thread `t` waits behind the other threads of `enabled` until they have run (the fairness
/// rule, see the module doc).
fn put_behind(behind: &mut Vec<Vec<Tid>>, t: Tid, enabled: &[Event]) {
    if behind.len() <= t as usize {
        behind.resize(t as usize + 1, Vec::new());
    }
    behind[t as usize] = enabled.iter().map(|e| e.tid).filter(|&u| u != t).collect();
}

/// How to choose once the forced prefix is used up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rule {
    /// The lowest enabled thread not in the sleep set (DFS, DPOR).
    Lowest,
    /// Keep running the last thread while it is enabled, else the lowest enabled thread: the
    /// zero-preemption schedule of preemption bounding (Musuvathi & Qadeer, PLDI'07).
    NonPreemptive,
    /// Keep running the last thread while it is enabled, else the next enabled thread in
    /// round-robin order: the deterministic scheduler of delay bounding (Emmi, Qadeer &
    /// Rakamarić, POPL'11).
    RoundRobin,
}

/// One step of a recorded run.
#[derive(Clone, Debug)]
pub struct Rec {
    pub ev: TEv,
    /// Enabled events of the state before the step, in thread order.
    pub enabled: Vec<Event>,
    /// Sleep set of the state before the step.
    pub sleep: Vec<TEv>,
    /// Enabled threads the fairness rule holds back in that state: each yielded to a thread
    /// that is enabled there and has not run since (see the module doc). The bounded
    /// searches and DFS do not branch to them.
    pub deferred: Vec<Tid>,
}

/// A constraint on free choices: whether `ev` may run after the recorded steps.
pub type Allow = Box<dyn Fn(&[Rec], &Event) -> bool + Send>;

/// What a [`Guide`] is made of before its run (without a path constraint): enough to build
/// the same guide in the program for a run decided there ([`crate::protocol::inproc`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GuideSpec {
    pub rule: Rule,
    pub use_sleep: bool,
    pub initial_threads: Tid,
    pub prefix: Vec<Event>,
    pub sleep_at: usize,
    pub sleep_init: Vec<TEv>,
    pub approximate: bool,
    #[serde(default)]
    pub futex_arrivals: bool,
}

impl GuideSpec {
    /// A guide planned as described.
    pub fn build(&self) -> Guide {
        let mut g = Guide::new(self.rule, self.use_sleep, self.initial_threads);
        g.plan(self.prefix.clone(), self.sleep_at, self.sleep_init.clone());
        g.approximate = self.approximate;
        g.futex_arrivals = self.futex_arrivals;
        g
    }
}

/// Follows `prefix`, then `rule`. The sleep set starts as `sleep_init` at state `sleep_at`
/// (the state where the run branches off the previous one) and is empty before.
pub struct Guide {
    /// Path constraint on the choices after the prefix (reachability testing).
    pub allow: Option<Allow>,
    prefix: Vec<Event>,
    sleep_at: usize,
    sleep_init: Vec<TEv>,
    use_sleep: bool,
    rule: Rule,
    initial_threads: Tid,
    /// What happened in the last run.
    pub steps: Vec<Rec>,
    /// Semaphore and barrier initialisations of the last run, with their place.
    pub inits: Vec<Init>,
    sleep: Vec<TEv>,
    /// Per thread: the threads it yielded to, not yet run since (fairness, see the module
    /// doc). Empty for a thread that did not yield.
    behind: Vec<Vec<Tid>>,
    /// Per thread: yields in a row (a spin loop at synchronisation points is a run of yields).
    spins: Vec<u32>,
    /// Spin-waits without a yield (a polled trylock or lock, a flag read at memory points),
    /// which the fairness rule treats as yields ([`crate::spin`]).
    watch: SpinWatch,
    /// A thread whose last step continued a spin-wait other than a yield: it goes behind the
    /// threads enabled at the next choice (after a lock poll's unlock, the threads waiting
    /// for the lock are enabled only then).
    spun: Option<Tid>,
    next_tid: Tid,
    /// The run stopped because every enabled event was in the sleep set.
    pub blocked: bool,
    /// When [`Self::blocked`]: the threads whose events were enabled there (all asleep).
    asleep_at_block: Vec<Tid>,
    /// Events posted and not executed, by thread (at the end: the blocked threads).
    pub waiting: Vec<Option<Event>>,
    /// The run could not follow the prefix.
    pub diverged: Option<Divergence>,
    /// Follow the prefix approximately (see the module doc) instead of diverging.
    pub approximate: bool,
    /// Mark the event before a posted futex wait ([`TEv::futex_arrival`], see
    /// [`super::Options::futex_arrivals`]).
    pub futex_arrivals: bool,
    /// Approximate mode: target events skipped in the last run.
    pub skipped: u64,
    /// Approximate mode: the step at which the last run first skipped a target event (the
    /// steps before it followed the target exactly).
    pub first_skip: Option<usize>,
    /// Approximate mode: the next target event.
    cursor: usize,
    /// Per prefix event: its index among its thread's events in the prefix.
    target_index: Vec<u32>,
    /// Per thread: events executed in this run.
    ran: Vec<u32>,
}

impl Guide {
    pub fn new(rule: Rule, use_sleep: bool, initial_threads: Tid) -> Self {
        Guide {
            allow: None,
            prefix: Vec::new(),
            sleep_at: 0,
            sleep_init: Vec::new(),
            use_sleep,
            rule,
            initial_threads,
            steps: Vec::new(),
            inits: Vec::new(),
            sleep: Vec::new(),
            behind: Vec::new(),
            spins: Vec::new(),
            watch: SpinWatch::with_polls(LOCK_POLLS),
            spun: None,
            next_tid: initial_threads,
            blocked: false,
            asleep_at_block: Vec::new(),
            waiting: Vec::new(),
            diverged: None,
            approximate: false,
            futex_arrivals: false,
            skipped: 0,
            first_skip: None,
            cursor: 0,
            target_index: Vec::new(),
            ran: Vec::new(),
        }
    }

    /// Plan the next run: forced `prefix`, sleep set `sleep` at state `sleep_at`.
    pub fn plan(&mut self, prefix: Vec<Event>, sleep_at: usize, sleep: Vec<TEv>) {
        self.target_index = thread_indices(&prefix);
        self.prefix = prefix;
        self.sleep_at = sleep_at;
        self.sleep_init = sleep;
    }

    fn sleeping(&self, e: &Event) -> bool {
        self.use_sleep && self.sleep.iter().any(|s| s.tid() == e.tid)
    }

    /// The events posted and never run at the end of the last run ([`Self::waiting`]),
    /// without those asleep where a sleep-set-blocked run stopped: those were explored from
    /// an earlier state already (their races only repeat traces: 648 Source-DPOR runs for
    /// barrier_ok's 81 traces), while the disabled ones may have been disabled by what ran
    /// (a semaphore's last unit taken: the traces where they take it instead).
    pub fn left_waiting(&self) -> impl Iterator<Item = Event> + '_ {
        self.waiting
            .iter()
            .flatten()
            .filter(|e| !self.asleep_at_block.contains(&e.tid))
            .copied()
    }

    /// Whether thread `t` yielded to a thread that is still among `free` (runnable now).
    fn yielded_to_runnable(&self, t: Tid, enabled: &[Event], free: &[usize]) -> bool {
        self.behind
            .get(t as usize)
            .is_some_and(|b| b.iter().any(|u| free.iter().any(|&i| enabled[i].tid == *u)))
    }

    /// Approximate mode: the enabled event that realises the next target event, skipping the
    /// target events that cannot run now. A thread behind its target event (an earlier one of
    /// its events was skipped because it was not enabled then) catches up first when it can,
    /// so that one event that could not run where the target put it does not cost the rest of
    /// its thread. `None` once the target is used up.
    fn next_target(&mut self, enabled: &[Event]) -> Option<usize> {
        while let Some(want) = self.prefix.get(self.cursor) {
            let index = self.target_index[self.cursor];
            let done = self.ran.get(want.tid as usize).copied().unwrap_or(0);
            let at = enabled.iter().position(|e| e.tid == want.tid);
            match at {
                Some(i) if done == index && enabled[i].op.name() == want.op.name() => {
                    self.cursor += 1;
                    return Some(i);
                }
                Some(i) if done < index => return Some(i),
                _ => {
                    self.skipped += 1;
                    self.first_skip.get_or_insert(self.steps.len());
                    self.cursor += 1;
                }
            }
        }
        None
    }

    /// Fairness beats the sleep set: when every enabled thread outside the sleep set yielded
    /// to an enabled thread that has not run since, and one of them is spinning (yielded
    /// twice in a row), the sleeping ones among those are woken (taken out of the sleep set).
    /// Otherwise a spin loop (`while (!ready) sched_yield();`) whose awaited thread sleeps
    /// spins to the step limit: its yields are independent of the sleeping event, so nothing
    /// would wake it. Removing an event from a sleep set only costs exploration, never a
    /// trace — which is why a single yield (one inside a critical section) does not do it:
    /// waking there multiplied dpor's runs of a correct two-thread program by more than 19.
    fn wake_for_fairness(&mut self, enabled: &[Event]) {
        if !self.use_sleep || self.sleep.is_empty() {
            return;
        }
        let spinning = |t: Tid| self.spins.get(t as usize).is_some_and(|&n| n >= 2);
        if !enabled.iter().any(|e| !self.sleeping(e) && spinning(e.tid)) {
            return;
        }
        let all: Vec<usize> = (0..enabled.len()).collect();
        let awake: Vec<Tid> = enabled
            .iter()
            .filter(|e| !self.sleeping(e))
            .map(|e| e.tid)
            .collect();
        if awake
            .iter()
            .any(|&t| !self.yielded_to_runnable(t, enabled, &all))
        {
            return;
        }
        let wanted: Vec<Tid> = awake
            .iter()
            .filter_map(|&t| self.behind.get(t as usize))
            .flatten()
            .copied()
            .filter(|u| !awake.contains(u) && enabled.iter().any(|e| e.tid == *u))
            .collect();
        self.sleep.retain(|q| !wanted.contains(&q.tid()));
    }

    /// Thread `t` posted a futex wait on `addr`: the wait registered its waiter now, right
    /// after the thread's last step (or the create of the thread), which so joins the futex
    /// (see [`TEv::futex_arrival`]). A sleeping event that this makes dependent is woken, as
    /// it would have been at that step.
    fn futex_arrival(&mut self, t: Tid, addr: u64) {
        let Some(rec) = self
            .steps
            .iter_mut()
            .rev()
            .find(|r| r.ev.tid() == t || r.ev.child == Some(t))
        else {
            return;
        };
        if rec.ev.futex_arrival.is_some() {
            return;
        }
        rec.ev.futex_arrival = Some(addr);
        let done = rec.ev;
        self.sleep
            .retain(|s| s.tid() == done.tid() || !dependent_anywhere(s, &done));
    }

    fn by_rule(&self, enabled: &[Event]) -> Option<usize> {
        let allowed = |e: &Event| self.allow.as_ref().is_none_or(|a| a(&self.steps, e));
        let free: Vec<usize> = (0..enabled.len())
            .filter(|&i| !self.sleeping(&enabled[i]) && allowed(&enabled[i]))
            .collect();
        // Fairness: a thread waits behind the runnable threads it yielded to. There is always
        // a thread that yielded to no runnable one (the relation is acyclic: a thread leaves
        // every `behind` list when it runs), the fallback only guards that invariant.
        let fair: Vec<usize> = free
            .iter()
            .copied()
            .filter(|&i| !self.yielded_to_runnable(enabled[i].tid, enabled, &free))
            .collect();
        let cand = if fair.is_empty() { free } else { fair };
        let awake = |i: &usize| cand.contains(i);
        let last = self.steps.last().map(|r| r.ev.tid());
        let keep = last.and_then(|t| {
            (0..enabled.len())
                .filter(awake)
                .find(|&i| enabled[i].tid == t)
        });
        match self.rule {
            Rule::Lowest => (0..enabled.len()).find(awake),
            Rule::NonPreemptive => keep.or_else(|| (0..enabled.len()).find(awake)),
            Rule::RoundRobin => keep.or_else(|| {
                last.and_then(|after| {
                    (0..enabled.len())
                        .filter(awake)
                        .find(|&i| enabled[i].tid > after)
                })
                .or_else(|| (0..enabled.len()).find(awake))
            }),
        }
    }
}

impl Strategy for Guide {
    fn name(&self) -> String {
        "explore".into()
    }

    /// A guide without a path constraint can be built in the program (the constraint of
    /// reachability testing is a closure of the runner's).
    fn spec(&self, _seed: u64) -> Option<crate::protocol::inproc::StrategySpec> {
        if self.allow.is_some() {
            return None;
        }
        Some(crate::protocol::inproc::StrategySpec::Guide(GuideSpec {
            rule: self.rule,
            use_sleep: self.use_sleep,
            initial_threads: self.initial_threads,
            prefix: self.prefix.clone(),
            sleep_at: self.sleep_at,
            sleep_init: self.sleep_init.clone(),
            approximate: self.approximate,
            futex_arrivals: self.futex_arrivals,
        }))
    }

    fn begin(&mut self, _seed: u64) {
        self.steps.clear();
        self.inits.clear();
        self.sleep.clear();
        self.behind.clear();
        self.spins.clear();
        self.watch.clear();
        self.spun = None;
        self.next_tid = self.initial_threads;
        self.blocked = false;
        self.asleep_at_block.clear();
        self.waiting.clear();
        self.diverged = None;
        self.skipped = 0;
        self.first_skip = None;
        self.cursor = 0;
        self.ran.clear();
    }

    fn pending(&mut self, ev: &Event) {
        let t = ev.tid as usize;
        if self.waiting.len() <= t {
            self.waiting.resize(t + 1, None);
        }
        self.waiting[t] = Some(*ev);
        if let Op::FutexWait { addr, .. } = ev.op {
            if self.futex_arrivals {
                self.futex_arrival(ev.tid, addr);
            }
        }
    }

    fn choose(&mut self, enabled: &[Event]) -> Result<usize, Divergence> {
        let step = self.steps.len();
        if let Some(t) = self.spun.take() {
            put_behind(&mut self.behind, t, enabled);
        }
        if step == self.sleep_at && self.use_sleep {
            self.sleep = self.sleep_init.clone();
        }
        let target = if self.approximate {
            self.next_target(enabled)
        } else {
            None
        };
        let pick = if let Some(i) = target {
            i
        } else if let Some(want) = self.prefix.get(step).filter(|_| !self.approximate) {
            match enabled.iter().position(|e| e.tid == want.tid) {
                Some(i) if enabled[i].op.name() == want.op.name() => i,
                found => {
                    let reason = match found {
                        Some(i) => format!(
                            "forced event {want} but thread {} is at {}",
                            want.tid, enabled[i]
                        ),
                        None => format!("forced event {want} is not enabled"),
                    };
                    let d = Divergence {
                        step: step as u64,
                        reason,
                    };
                    self.diverged = Some(d.clone());
                    return Err(d);
                }
            }
        } else {
            self.wake_for_fairness(enabled);
            match self.by_rule(enabled) {
                Some(i) => i,
                None => {
                    self.blocked = true;
                    self.asleep_at_block = enabled.iter().map(|e| e.tid).collect();
                    return Err(Divergence {
                        step: step as u64,
                        reason: "every enabled event is in the sleep set or forbidden".into(),
                    });
                }
            }
        };
        let all: Vec<usize> = (0..enabled.len()).collect();
        let deferred = enabled
            .iter()
            .filter(|e| self.yielded_to_runnable(e.tid, enabled, &all))
            .map(|e| e.tid)
            .collect();
        self.steps.push(Rec {
            ev: TEv::new(enabled[pick]),
            enabled: enabled.to_vec(),
            sleep: self.sleep.clone(),
            deferred,
        });
        Ok(pick)
    }

    fn executed(&mut self, ev: &Event) {
        if let Some(w) = self.waiting.get_mut(ev.tid as usize) {
            *w = None;
        }
        let t = ev.tid as usize;
        if self.ran.len() <= t {
            self.ran.resize(t + 1, 0);
            self.spins.resize(t + 1, 0);
        }
        self.ran[t] += 1;
        // A spin-wait without a yield waits as a yield does: a loop polling a lock or a
        // flag otherwise kept the turn to the step limit while the thread it waited for
        // never ran, and the exploration ended after that one cut execution (probe 16).
        let yielded = self.watch.executed(ev) || ev.op.is_yield();
        // Only real yields wake sleeping events for fairness (`wake_for_fairness`): a spin
        // on memory is already a race the exploration reverses, and waking for it made
        // Source-DPOR run 100 executions for odpor's 56 traces of a libstdc++ atomic wait.
        self.spins[t] = if ev.op.is_yield() {
            self.spins[t] + 1
        } else {
            0
        };
        let child = if matches!(ev.op, Op::Create) {
            let c = self.next_tid;
            self.next_tid += 1;
            Some(c)
        } else {
            None
        };
        let Some((rec, before)) = self.steps.split_last_mut() else {
            return;
        };
        let mut done = TEv::new(*ev);
        done.child = child;
        if let Op::RwUnlock { l } = ev.op {
            done.reader = rw_unlock_reads(before.iter().rev().map(|r| &r.ev), ev.tid, l);
        }
        done.nested = nested_in_owner(before.iter().rev().map(|r| &r.ev), ev);
        done.robust_exit = exits_after_robust_lock(before.iter().rev().map(|r| &r.ev), ev);
        done.once_exit = exits_in_once(before.iter().rev().map(|r| &r.ev), ev);
        let count = |b: u64| {
            self.inits
                .iter()
                .rev()
                .find(|i| i.obj.kind == ObjKind::Barrier && i.obj.addr == b)
                .map(|i| i.value)
        };
        if let Op::BarrierWait { b } = ev.op {
            done.barrier_open = barrier_open(before.iter().rev().map(|r| &r.ev), b, count(b));
        }
        rec.ev = done;
        // Fairness bookkeeping: the thread ran; if it yielded, it now waits behind the
        // others enabled at this step.
        for b in &mut self.behind {
            b.retain(|&u| u != ev.tid);
        }
        if yielded && !ev.op.is_yield() {
            self.spun = Some(ev.tid);
        } else if yielded {
            put_behind(&mut self.behind, ev.tid, &rec.enabled);
        }
        // A sleeping arrival stays asleep after an open arrival or a leave at the same
        // barrier when it would still leave the barrier open after it: in this state the two
        // commute (an open arrival only counts, a leave changes no count of the generation
        // being filled), though out of context arrivals are dependent (`dependent_anywhere`).
        // Without the leave case, multi-phase barriers ran every trace several times: a
        // sleeping next-phase arrival woke at another thread's leave of the phase before.
        let steps = &self.steps;
        let still_open = |s: &TEv| match s.ev.op {
            Op::BarrierWait { b }
                if (done.barrier_open && done.ev.op == s.ev.op)
                    || matches!(done.ev.op, Op::BarrierLeave { b: x } if x == b) =>
            {
                barrier_open(steps.iter().rev().map(|r| &r.ev), b, count(b))
            }
            _ => false,
        };
        self.sleep
            .retain(|s| s.tid() != done.tid() && (!dependent_anywhere(s, &done) || still_open(s)));
    }

    fn initialised(&mut self, obj: Obj, value: u32) {
        self.inits.push(Init {
            at: self.steps.len(),
            obj,
            value,
        });
    }
}
