//! The virtual clock of a run: when timed waits time out and sleeps end.
//!
//! Time is virtual nanoseconds since the start of the run (libpos adds the real clock's value
//! at the start, rounded down to a whole second, so that programs see plausible dates). Every
//! timed operation carries its deadline on this clock ([`crate::event::Op::deadline`]).
//!
//! The rules (what makes "a 5 s timed lock behind a short critical section" never time out,
//! and still lets a deadlock broken by timeouts resolve by timing out):
//! * A timed wait is enabled when its normal condition holds (the mutex is free, the
//!   semaphore positive, the condvar signalled, the thread finished), or once the clock has
//!   reached its deadline: then executing it times out (ETIMEDOUT) if the condition still
//!   does not hold. A sleep ([`crate::event::Op::SleepUntil`]) is a timed wait whose
//!   condition never holds: it ends exactly at its deadline.
//! * The clock never moves while some thread can make progress: it *jumps* to the earliest
//!   pending deadline (earliest deadline first) only when nothing is enabled; when only
//!   spins (`sched_yield`, a real sleep, a repeated read) are enabled it moves towards that
//!   deadline by a quantum that doubles at each such round (`Coordinator::let_time_pass`).
//!   The second case is what a thread that spins on `sched_yield` for a flag set after
//!   another thread's sleep or timeout needs: without it the spinner would be enabled
//!   forever and time would never pass (a livelock that the real world does not have). A
//!   yield makes no progress of its own, so letting time pass then is what a real machine
//!   does too; by quanta, so that a spinner sees a flag already set, or its own near
//!   deadline, before a far deadline comes.
//! * While a thread is blocked outside control (set aside in `read`, say) and nothing is
//!   enabled, only sleeps may end, and the clock moves in ticks of real time instead of
//!   jumping (`Coordinator::pass_outside_time`): that thread may be back in microseconds,
//!   and a far sleep must not end first. Such runs are `partial` and may not replay exactly.
//! * So a sleep lets every other thread run until it blocks or yields: sleep-ordered
//!   handoffs (`sleep(1)` "so that the other thread is ready") behave as on a real machine
//!   where the other side is faster than the sleep, and `while (!flag) usleep(1000);` waits
//!   for the flag without false bugs. A program that orders threads only by sleeps is not
//!   explored for the orders the sleeps exclude; that is the price of no false alarms.
//! * With [`TimeoutPolicy::Any`] (`--timeouts any`) a timed wait (not a sleep) is also
//!   enabled before its deadline, as "time out now": the timeout becomes a scheduling choice
//!   wherever it could fire. Executing a timeout moves the clock to the deadline (never
//!   back), so the program's view of time stays consistent with the timeout it saw.
//! * A deadlock with no deadline pending is still a deadlock.
//!
//! Everything here is a function of the schedule, so runs replay exactly.
//!
//! Systematic exploration: under [`TimeoutPolicy::Any`] a timeout is an ordinary event, whose
//! result (taken or timed out) depends only on its own object, so the usual dependency
//! relation covers it. Under the default policy a timed event's enabledness is monotone
//! (once its deadline is reached it stays enabled) and the clock moves only when no other
//! thread can progress; a sleep touches no object and races with no event, but a sleep that
//! had to wait for time to pass happens after every event executed before the clock moved
//! (`explore::trace::clock_cuts`): a reversal never puts it before them. Exploration never
//! reports a run the rules exclude, and it does not enumerate the orders the clock rule
//! excludes (that a sleeper wakes before the others block).
//!
//! Adding a timed operation (e.g. a futex wait with a timeout): give the [`crate::event::Op`]
//! a `deadline` field, return it from [`crate::event::Op::deadline`], list it in the state
//! machine's `may_block`, and in `why_blocked` block it as its untimed form does unless
//! [`Clock::may_time_out`]; when it executes without its condition, return
//! `State::time_out(deadline)` (ETIMEDOUT, clock moved to the deadline).

/// When a timed wait may time out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeoutPolicy {
    /// Only once the virtual clock reaches its deadline (the default).
    #[default]
    Deadline,
    /// Whenever its condition does not hold (`--timeouts any`): timeouts are explored.
    Any,
}

/// The clock: the current virtual time and the policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    now: u64,
    policy: TimeoutPolicy,
}

impl Clock {
    /// The current virtual time, in nanoseconds since the start of the run.
    #[inline]
    pub fn now(&self) -> u64 {
        self.now
    }

    pub fn policy(&self) -> TimeoutPolicy {
        self.policy
    }

    pub fn set_policy(&mut self, policy: TimeoutPolicy) {
        self.policy = policy;
    }

    /// Whether a timed wait with `deadline`, whose condition does not hold, may time out now.
    #[inline]
    pub fn may_time_out(&self, deadline: u64) -> bool {
        deadline <= self.now || self.policy == TimeoutPolicy::Any
    }

    /// Whether `deadline` has been reached.
    #[inline]
    pub fn reached(&self, deadline: u64) -> bool {
        deadline <= self.now
    }

    /// Move the clock forward to `t` (never back); returns whether it moved.
    #[inline]
    pub fn advance_to(&mut self, t: u64) -> bool {
        if t > self.now {
            self.now = t;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_only_moves_forward_and_any_lets_timeouts_fire_early() {
        let mut c = Clock::default();
        assert!(!c.may_time_out(5));
        assert!(c.advance_to(5));
        assert!(!c.advance_to(3));
        assert_eq!(c.now(), 5);
        assert!(c.may_time_out(5) && c.reached(5) && !c.reached(6));
        c.set_policy(TimeoutPolicy::Any);
        assert!(c.may_time_out(1_000_000));
    }
}
