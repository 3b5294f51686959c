//! What a granted thread that stays silent (posts nothing) is doing, from the kernel's view
//! in `/proc/PID/task/TID/{stat,syscall}`. The runner and libpos's standalone mode both look
//! threads up there (each in its own process); what the texts mean is decided here once.

use std::time::{Duration, Instant};

/// What the kernel shows of a silent granted thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silent {
    /// Asleep (`S`, `D`) in a system call that is not on its own connection to the
    /// coordinator (there it is in libpos, posting or waiting for a grant): blocked in a call
    /// libpos does not control.
    BlockedOutside,
    /// Runnable (`R`) and not in a system call: computing, or spinning without a point.
    RunningUserCode,
    /// Anything else (in libpos, gone, unreadable).
    Other,
}

/// Classify a thread from its `stat` text; `syscall` reads its `/proc/.../syscall` text
/// (only when the state needs it); `fd` is its connection in the program (-1: unknown).
pub fn classify(stat: &str, syscall: impl FnOnce() -> Option<String>, fd: i32) -> Silent {
    match state(stat) {
        Some("S" | "D") => match syscall() {
            Some(call) if in_foreign_call(&call, fd) => Silent::BlockedOutside,
            _ => Silent::Other,
        },
        Some("R") => match syscall() {
            Some(call) if call.starts_with("running") => Silent::RunningUserCode,
            _ => Silent::Other,
        },
        _ => Silent::Other,
    }
}

/// The state letter of a `stat` text: "tid (comm) S ...", the state follows the last ')'
/// (comm may contain anything).
pub fn state(stat: &str) -> Option<&str> {
    stat.rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
}

/// Whether a `syscall` text shows a thread inside a system call (`nr arg0 ...`, not
/// `running` nor `-1 ...`) whose first argument is not the descriptor `fd`.
pub fn in_foreign_call(call: &str, fd: i32) -> bool {
    let mut words = call.split_whitespace();
    let Some(Ok(nr)) = words.next().map(str::parse::<i64>) else {
        return false; // "running", or unreadable
    };
    if nr < 0 {
        return false;
    }
    let arg0 = words
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    fd < 0 || arg0 != Some(fd as u64)
}

/// How long a granted thread may run user code without posting (a spin-wait on a flag
/// another thread sets, a long computation) before it is set aside like a blocked one, when
/// another thread could use the turn: a quarter of the step timeout, at least
/// `blocked_after`. Long enough that ordinary computation between two points stays under
/// control (and the run deterministic); short enough that a spin-wait is not a false `hang`.
pub fn spin_after(blocked_after: Duration, step_timeout: Duration) -> Duration {
    (step_timeout / 4).max(blocked_after)
}

/// How long virtual time holds still while a thread set aside blocked in the kernel is
/// runnable again (woken, on its way back to its next post; [`runnable`]): the ticks of
/// virtual time that pass while a thread is outside wait for it, for up to this long a
/// silence, after which a thread still running is taken to compute and time passes again
/// (as [`spin_after`]). Under load a woken thread may wait tens of milliseconds for a CPU:
/// before 2026-11-28 the ticks, doubling every millisecond, let a watchdog's 30 s sleep end
/// meanwhile, before the job it guarded (`vtime/ok_watchdog_pipe_worker.c`: an assert in 1
/// of 200 runs at load 6).
pub fn woken_hold(blocked_after: Duration, step_timeout: Duration) -> Duration {
    spin_after(blocked_after, step_timeout)
}

/// Whether a `stat` text shows a runnable thread (`R`).
pub fn runnable(stat: &str) -> bool {
    state(stat) == Some("R")
}

/// Virtual time while the run waits for threads outside control
/// ([`crate::Coordinator::pass_outside_time`]). It ticks, except while a thread set aside
/// blocked in the kernel ([`Silent::BlockedOutside`]) is runnable again (woken, on its way
/// back: [`woken_hold`]); once every thread outside was noted here (set aside blocked, or
/// running: a spin-wait, a computation) and is asleep in the kernel (`S`, `D`), none of them
/// is about to come back by itself, and timed waits may time out in real time: the ticks
/// carry the real time since they were all seen asleep. The runner's loops and libpos's
/// in-program judge both keep one.
#[derive(Debug, Default)]
pub struct OutsideClock {
    /// The threads set aside, each with the path of its `stat` text and whether it was
    /// blocked in the kernel then (only those hold time when runnable again).
    noted: Vec<(crate::event::Tid, String, bool)>,
    /// When every thread outside was first seen asleep in the current silence.
    asleep_since: Option<Instant>,
    /// When a tick last saw one of them running (`R`).
    ran_at: Option<Instant>,
}

impl OutsideClock {
    /// Whether a tick saw a thread set aside running (`R`) at or after `t`: one that
    /// computed through a silence and went to sleep just before a look at it is busy
    /// ([`Computing::judge`]).
    pub fn ran_since(&self, t: Instant) -> bool {
        self.ran_at.is_some_and(|r| r >= t)
    }

    /// Thread `t`, whose `stat` text is at `stat`, was set aside: `blocked` in the kernel,
    /// or running (a spin-wait, a computation). A thread set aside running may block later
    /// (a worker that computes, then reads a pipe): before 2026-11-28 only those set aside
    /// blocked were noted, so time never reached a timed wait's deadline beside such a
    /// worker, and the run was a false `hang` (`tests/corpus/outside/ok_timedwait_beside_busy_reader.c`).
    pub fn note(&mut self, t: crate::event::Tid, stat: String, blocked: bool) {
        self.noted.retain(|(u, _, _)| *u != t);
        self.noted.push((t, stat, blocked));
    }

    /// A tick is due at `now`, in a silence that began at `quiet`; `hold` is
    /// [`woken_hold`], `count` the threads outside control, `outside` whether one still is,
    /// `read` reads a `stat` text (once per noted thread). `None`: no time passes now (a
    /// noted thread is runnable again); `Some(asleep)`: the coordinator's
    /// `pass_outside_time(asleep)`. Those back in control are forgotten.
    pub fn tick(
        &mut self,
        now: Instant,
        quiet: Instant,
        hold: Duration,
        count: usize,
        outside: impl Fn(crate::event::Tid) -> bool,
        read: impl Fn(&str) -> Option<String>,
    ) -> Option<Option<Duration>> {
        self.noted.retain(|(t, _, _)| outside(*t));
        // Each noted thread's state letter, read once a tick.
        let states: Vec<(Option<char>, bool)> = self
            .noted
            .iter()
            .map(|(_, p, blocked)| {
                let letter = read(p).and_then(|s| state(&s).and_then(|x| x.chars().next()));
                (letter, *blocked)
            })
            .collect();
        if states.iter().any(|&(s, _)| s == Some('R')) {
            self.ran_at = Some(now);
        }
        let woken = states.iter().any(|&(s, blocked)| blocked && s == Some('R'));
        if now.saturating_duration_since(quiet) < hold && woken {
            return None;
        }
        let asleep = count > 0
            && states.len() == count
            && states.iter().all(|&(s, _)| matches!(s, Some('S' | 'D')));
        Some(asleep.then(|| {
            // Since when, in this silence (a later event starts it again).
            let since = self.asleep_since.filter(|&s| s >= quiet).unwrap_or(now);
            self.asleep_since = Some(since);
            now.saturating_duration_since(since)
        }))
    }
}

/// How long a program that handles a signal gets, once every thread is blocked, for a
/// signal from outside the run to end a wait before that is a deadlock: `blocked_after`, or
/// half the step timeout (at least `blocked_after`) while a child process still runs (its
/// `SIGCHLD` may yet come).
pub fn outside_signal_grace(
    blocked_after: Duration,
    step_timeout: Duration,
    children_running: bool,
) -> Duration {
    if children_running {
        (step_timeout / 2).max(blocked_after)
    } else {
        blocked_after
    }
}

/// The kernel waits with a timeout that threads announced before making them
/// ([`crate::protocol::Msg::KernelWait`]): such a thread comes back by itself, so a silence
/// is no hang until a step timeout after the latest announced wait's end (the runner's
/// socket loop and libpos's in-program judge both ask).
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelWaits {
    until: Option<Instant>,
}

impl KernelWaits {
    /// A thread is about to wait in the kernel for at most `ns`.
    pub fn announce(&mut self, ns: u64) {
        let until = Instant::now() + Duration::from_nanos(ns);
        self.until = Some(self.until.map_or(until, |u| u.max(until)));
    }

    /// Whether a silence now is excused (see the type's doc).
    pub fn excuse(&self, step_timeout: Duration) -> bool {
        self.until
            .is_some_and(|u| Instant::now() < u + step_timeout)
    }
}

/// The CPU time a `stat` text shows, user plus system, in clock ticks (its 14th and 15th
/// fields; the 3rd, the state, is the first after the last ')').
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    let i = stat.rfind(')')?;
    let mut f = stat[i + 1..].split_whitespace().skip(11);
    let user: u64 = f.next()?.parse().ok()?;
    let system: u64 = f.next()?.parse().ok()?;
    Some(user + system)
}

/// How long a silent thread may compute ([`Computing`]) before its run is a hang, unless
/// the user says otherwise (`--compute-timeout`, `POS_COMPUTE_TIMEOUT`).
pub const DEFAULT_COMPUTE_TIMEOUT: Duration = Duration::from_secs(30);

/// What a silence of the step timeout was, judged by [`Computing::judge`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// A silent thread runs on a CPU: excused, look again after another step timeout.
    Computing,
    /// They have computed without a point for the compute timeout: a hang (an endless loop,
    /// or a computation longer than the user allows), silent for this long.
    TooLong(Duration),
    /// None of them uses a CPU: a hang after the step timeout, as before.
    Idle,
}

/// Silent threads that compute. An endless spin and a long computation between two points
/// look alike from outside: both run on a CPU. A hang is a silence in which nothing runs;
/// a thread that stays silent past the step timeout while it runs (runnable, or its CPU time
/// grew since the last look in this silence) makes progress, and is excused for up to the
/// compute timeout. Before 2026-11-28 it was a `hang` after the step timeout: probe 21's
/// plzip, whose workers compress for about 2 s between two locks, in 13–30 of 30 runs on a
/// loaded machine.
#[derive(Debug, Default)]
pub struct Computing {
    /// The silence being excused: when it began, and the instant it was last excused at
    /// (the caller's mark of the last event is set to it then: a different mark is a new
    /// silence).
    silence: Option<(Instant, Instant)>,
    /// The CPU time of each thread looked at, at the last look in this silence.
    seen: Vec<(crate::event::Tid, u64)>,
}

impl Computing {
    /// Judge a silence of the step timeout at `now`: `quiet` is the caller's mark of the last
    /// event, `looks` the `stat` text of each silent thread (granted and not posted, or set
    /// aside outside control; `None`: unreadable), `ran` whether one of them was seen
    /// running in this silence by another look ([`OutsideClock::ran_since`]: a worker that
    /// computed all through it and blocked in `read` just before this look; before
    /// 2026-11-28 that was a false `hang` in 2-8 runs of 100 under load at a 0.4 s step
    /// timeout), `limit` the compute timeout. On [`Judged::Computing`] the caller sets its
    /// mark to `now`.
    pub fn judge(
        &mut self,
        quiet: Instant,
        now: Instant,
        looks: impl IntoIterator<Item = (crate::event::Tid, Option<String>)>,
        ran: bool,
        limit: Duration,
    ) -> Judged {
        let began = match self.silence {
            Some((began, mark)) if mark == quiet => began,
            _ => {
                self.seen.clear();
                quiet
            }
        };
        let mut busy = ran;
        let mut seen = Vec::new();
        for (t, stat) in looks {
            let Some(stat) = stat else { continue };
            let ticks = cpu_ticks(&stat);
            let before = self.seen.iter().find(|(u, _)| *u == t).map(|&(_, k)| k);
            busy |= runnable(&stat) || matches!((ticks, before), (Some(k), Some(b)) if k > b);
            seen.extend(ticks.map(|k| (t, k)));
        }
        self.seen = seen;
        let spent = now.saturating_duration_since(began);
        self.silence = None;
        if !busy {
            return Judged::Idle;
        }
        if spent >= limit {
            return Judged::TooLong(spent);
        }
        self.silence = Some((began, now));
        Judged::Computing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_thread_woken_while_outside_holds_time_until_it_is_back() {
        let ms = Duration::from_millis;
        let hold = ms(500);
        let t0 = Instant::now();
        let mut c = OutsideClock::default();
        c.note(1, "/proc/9/task/10/stat".into(), true);
        c.note(2, "/proc/9/task/11/stat".into(), true);
        let text = |state: &'static str| move |_: &str| Some(format!("10 (w (x)) {state} 1 2"));
        // Runnable (woken): time holds, within the hold; asleep in the kernel: it passes.
        assert_eq!(c.tick(t0 + ms(10), t0, hold, 3, |_| true, text("R")), None);
        assert_eq!(
            c.tick(t0 + ms(10), t0, hold, 3, |_| true, text("S")),
            Some(None)
        );
        // Past the hold a runnable thread computes: time passes.
        assert_eq!(
            c.tick(t0 + ms(600), t0, hold, 3, |_| true, text("R")),
            Some(None)
        );
        assert!(c.ran_since(t0 + ms(600)) && !c.ran_since(t0 + ms(601)));
        // Back in control (no longer outside): forgotten, whatever its state.
        assert_eq!(
            c.tick(t0 + ms(10), t0, hold, 1, |_| false, text("R")),
            Some(None)
        );
        assert_eq!(
            c.tick(t0 + ms(10), t0, hold, 1, |_| true, text("R")),
            Some(None)
        );
        // Unreadable (gone): no hold.
        c.note(3, "/proc/9/task/12/stat".into(), true);
        assert_eq!(
            c.tick(t0 + ms(10), t0, hold, 1, |_| true, |_| None),
            Some(None)
        );
        assert_eq!(
            woken_hold(Duration::from_millis(30), Duration::from_secs(2)),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn time_passes_in_real_time_once_every_thread_outside_is_asleep_in_the_kernel() {
        let ms = Duration::from_millis;
        let hold = ms(500);
        let t0 = Instant::now();
        let mut c = OutsideClock::default();
        c.note(1, "a".into(), true);
        c.note(2, "b".into(), false);
        let both = |a: &'static str, b: &'static str| {
            move |p: &str| Some(format!("1 (x) {} 1", if p == "a" { a } else { b }))
        };
        // Two outside, two noted, both asleep: real time since first seen so.
        assert_eq!(
            c.tick(t0 + ms(1), t0, hold, 2, |_| true, both("S", "D")),
            Some(Some(ms(0)))
        );
        assert_eq!(
            c.tick(t0 + ms(40), t0, hold, 2, |_| true, both("S", "S")),
            Some(Some(ms(39)))
        );
        // Thread 2 was set aside running: runnable, it holds no time (it may spin for good).
        assert_eq!(
            c.tick(t0 + ms(45), t0, hold, 2, |_| true, both("S", "R")),
            Some(None)
        );
        // A third thread outside (not noted: one that left by itself): ticks only.
        assert_eq!(
            c.tick(t0 + ms(50), t0, hold, 3, |_| true, both("S", "S")),
            Some(None)
        );
        // A new silence: the count starts again.
        let t1 = t0 + ms(100);
        assert_eq!(
            c.tick(t1 + ms(5), t1, hold, 2, |_| true, both("S", "S")),
            Some(Some(ms(0)))
        );
    }

    #[test]
    fn an_announced_kernel_wait_excuses_silence_until_a_step_timeout_after_it() {
        let mut w = KernelWaits::default();
        assert!(!w.excuse(Duration::from_secs(2)), "nothing announced");
        w.announce(0);
        assert!(w.excuse(Duration::from_secs(2)));
        assert!(!w.excuse(Duration::ZERO), "a wait of 0 ns ended already");
        w.announce(3_600_000_000_000);
        w.announce(0);
        assert!(w.excuse(Duration::ZERO), "the longest wait counts");
    }

    #[test]
    fn classify_reads_state_then_syscall() {
        let stat = |s: &str| format!("42 (a) b) {s} 1 2 3");
        let call = |c: &'static str| move || Some(c.to_string());
        assert_eq!(
            classify(&stat("S"), call("0 0x3 0x7ff 0x1"), 5),
            Silent::BlockedOutside
        );
        // In a call on its own connection (fd 5): in libpos, not outside.
        assert_eq!(
            classify(&stat("S"), call("0 0x5 0x7ff 0x1"), 5),
            Silent::Other
        );
        assert_eq!(
            classify(&stat("R"), call("running"), 5),
            Silent::RunningUserCode
        );
        assert_eq!(classify(&stat("R"), call("1 0x5 0 0"), 5), Silent::Other);
        assert_eq!(
            classify(&stat("Z"), || panic!("not read"), 5),
            Silent::Other
        );
        assert_eq!(classify(&stat("S"), || None, 5), Silent::Other);
        assert!(!in_foreign_call("-1 0x7ff 0x1", -1));
        assert!(in_foreign_call("7 0x9", -1));
    }

    #[test]
    fn spin_threshold_is_a_quarter_of_the_step_timeout_at_least_blocked_after() {
        let ms = Duration::from_millis;
        assert_eq!(spin_after(ms(30), ms(2000)), ms(500));
        assert_eq!(spin_after(ms(300), ms(400)), ms(300));
    }
    #[test]
    fn cpu_ticks_are_user_plus_system_after_the_name() {
        let stat = "42 (a) b 1) R 1 42 42 0 -1 4194304 10 0 0 0 250 17 0 0 20 0 3 0";
        assert_eq!(cpu_ticks(stat), Some(267));
        assert_eq!(cpu_ticks("42 (a) R 1 2"), None);
        assert_eq!(cpu_ticks("garbage"), None);
    }

    #[test]
    fn a_silent_thread_on_a_cpu_is_computing_until_the_compute_timeout() {
        let stat = |state: &str, ticks: u64| {
            Some(format!(
                "10 (w) {state} 1 10 10 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0"
            ))
        };
        let s = Duration::from_secs;
        let t0 = Instant::now();
        let mut c = Computing::default();
        // Runnable at the first look: computing.
        assert_eq!(
            c.judge(t0, t0 + s(2), [(1, stat("R", 100))], false, s(30)),
            Judged::Computing
        );
        // Asleep now, but its CPU time grew since the look before: it computed meanwhile.
        assert_eq!(
            c.judge(t0 + s(2), t0 + s(4), [(1, stat("S", 150))], false, s(30)),
            Judged::Computing
        );
        // Asleep and no CPU time since: idle, a hang as before.
        assert_eq!(
            c.judge(t0 + s(4), t0 + s(6), [(1, stat("S", 150))], false, s(30)),
            Judged::Idle
        );
        // A new silence (another mark): earlier looks do not count, and the time runs
        // from its start; at the compute timeout, still on a CPU: too long.
        let t1 = t0 + s(10);
        assert_eq!(
            c.judge(t1, t1 + s(2), [(1, stat("S", 900))], false, s(30)),
            Judged::Idle
        );
        let mut mark = t1 + s(20);
        let mut c = Computing::default();
        let mut now = mark + s(2);
        let mut ticks = 1000;
        let verdict = loop {
            ticks += 10;
            match c.judge(mark, now, [(2, None), (1, stat("R", ticks))], false, s(30)) {
                Judged::Computing => mark = now,
                other => break other,
            }
            now += s(2);
        };
        assert_eq!(verdict, Judged::TooLong(s(30)));
        // Asleep at the first look of a silence, but a tick saw it running in it (it
        // computed until just before): busy.
        let t2 = now + s(60);
        let mut c = Computing::default();
        assert_eq!(
            c.judge(t2, t2 + s(2), [(1, stat("S", 5000))], true, s(30)),
            Judged::Computing
        );
        // Nothing readable (every silent thread gone): idle.
        assert_eq!(
            c.judge(now, now + s(2), [(1, None)], false, s(30)),
            Judged::Idle
        );
    }
}
