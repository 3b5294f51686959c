//! The silence of a run, shared by the preload and the ptrace backends: how long no step has
//! been made, and when the running threads were last looked at in `/proc` to set aside those
//! blocked outside control or spinning ([`pos_sched::silent`]), and when virtual time last
//! ticked while the run waited for such a thread.

use pos_sched::coordinator::{Coordinator, OUTSIDE_TICK};
use pos_sched::event::Tid;
use pos_sched::silent::{self, Computing, Judged, OutsideClock, Silent};
use pos_sched::state::Status;
use std::time::{Duration, Instant};

/// Since when the run has been silent, and when it was last probed.
pub struct Silence {
    quiet_since: Instant,
    probed_at: Instant,
    ticked_at: Instant,
    /// Virtual time while threads are outside control, and the threads set aside (blocked in the
    /// kernel or running).
    outside: OutsideClock,
    computing: Computing,
}

impl Silence {
    pub fn new() -> Silence {
        let now = Instant::now();
        Silence {
            quiet_since: now,
            probed_at: now,
            ticked_at: now,
            outside: OutsideClock::default(),
            computing: Computing::default(),
        }
    }

    /// Something happened (a step, a message): the silence starts again.
    pub fn heard(&mut self) {
        self.quiet_since = Instant::now();
    }

    /// How long nothing has happened.
    pub fn quiet_for(&self) -> Duration {
        self.quiet_since.elapsed()
    }

    /// How long until the running threads are due for a look: `blocked_after` of silence
    /// since the last event or the last look.
    pub fn probe_in(&self, blocked_after: Duration) -> Duration {
        blocked_after.saturating_sub(self.quiet_since.max(self.probed_at).elapsed())
    }

    /// With `waits`, the coordinator's [`Coordinator::waits_outside`]: how long until virtual
    /// time is due its next tick ([`OUTSIDE_TICK`] of silence since the last event or tick);
    /// `None` when no tick is wanted.
    pub fn tick_in(&self, waits: bool) -> Option<Duration> {
        waits.then(|| OUTSIDE_TICK.saturating_sub(self.quiet_since.max(self.ticked_at).elapsed()))
    }

    /// Thread `t`, whose `stat` text is at `stat`, was set aside, `blocked` in the kernel or
    /// running ([`OutsideClock::note`]).
    pub fn note_outside(&mut self, t: Tid, stat: String, blocked: bool) {
        self.outside.note(t, stat, blocked);
    }

    /// Give `coord` the tick of virtual time that is due ([`Coordinator::pass_outside_time`]),
    /// unless a thread set aside blocked in the kernel, still outside, is runnable again and
    /// the silence is shorter than [`silent::woken_hold`]: that thread is on its way back,
    /// and no time passes before it is ([`OutsideClock::tick`]). Returns whether the clock
    /// moved (a decision may be due).
    pub fn tick(
        &mut self,
        coord: &mut Coordinator<'_>,
        blocked_after: Option<Duration>,
        step_timeout: Duration,
    ) -> bool {
        if self.tick_in(coord.waits_outside()) != Some(Duration::ZERO) {
            return false;
        }
        let now = Instant::now();
        self.ticked_at = now;
        let hold = silent::woken_hold(blocked_after.unwrap_or_default(), step_timeout);
        let st = coord.state();
        let passed = self.outside.tick(
            now,
            self.quiet_since,
            hold,
            st.outside().count(),
            |t| st.status(t) == Status::Outside,
            |p| std::fs::read_to_string(p).ok(),
        );
        passed.is_some_and(|asleep| coord.pass_outside_time(asleep))
    }

    /// At a step timeout of silence: whether the run is a hang. A silent thread, whose
    /// `stat` text is at one of `paths`, that is computing ([`Computing`]) excuses the
    /// silence for another step timeout, its count going on across excuses, until `limit`
    /// (at least `step_timeout`). `None`: excused; `Some(None)`: a hang, nothing runs;
    /// `Some(Some(spent))`: a hang, they kept computing for `spent`.
    pub fn hang(
        &mut self,
        paths: &[(Tid, String)],
        limit: Duration,
        step_timeout: Duration,
    ) -> Option<Option<Duration>> {
        let now = Instant::now();
        let looks = paths
            .iter()
            .map(|(t, p)| (*t, std::fs::read_to_string(p).ok()));
        let limit = limit.max(step_timeout);
        let ran = self.outside.ran_since(self.quiet_since);
        match self
            .computing
            .judge(self.quiet_since, now, looks, ran, limit)
        {
            Judged::Computing => {
                self.quiet_since = now;
                None
            }
            Judged::TooLong(spent) => Some(Some(spent)),
            Judged::Idle => Some(None),
        }
    }

    /// A look starts now. Returns whether the silence has lasted long enough that a thread
    /// running user code without a scheduling point is a spin-wait ([`silent::spin_after`]).
    pub fn start_probe(&mut self, blocked_after: Option<Duration>, step_timeout: Duration) -> bool {
        self.probed_at = Instant::now();
        blocked_after.is_some_and(|a| self.quiet_for() >= silent::spin_after(a, step_timeout))
    }
}

/// Whether a running thread the kernel shows as `view` is set aside: blocked in a call that
/// is no scheduling point, or spinning (`spun`, see [`Silence::start_probe`]) while another
/// thread could use the turn.
pub fn set_aside(view: Silent, spun: bool, others_could_run: bool) -> bool {
    view == Silent::BlockedOutside || (spun && view == Silent::RunningUserCode && others_could_run)
}
