//! The interleaving of a saved schedule as a thread-lane diagram: one horizontal lane per
//! thread, one box per scheduling step (operation, object, and the source location when
//! the step has one) in the lane of the thread that ran it, time flowing to the right.
//! Context switches are drawn between consecutive boxes; those that are preemptions are
//! marked; the failing step is highlighted.
//!
//! A schedule records what ran, not what could have run, so [`switches`] decides whether a
//! switch was a preemption (the previous thread could have continued) from what the steps
//! themselves say: the mutexes held and the threads exited so far. Where the next operation
//! of the previous thread could have blocked on something the steps do not track (a
//! condition wake, a semaphore, a barrier, a futex...), the switch is drawn as a plain
//! switch, never as a preemption.

use super::svg::{self, El, PathData};
use pos_sched::schedule::Step;
use std::collections::{BTreeMap, BTreeSet};

/// One step of the diagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneStep {
    /// The thread's dense id in the run (what `join(thread#N)` names).
    pub tid: u64,
    /// The thread's stable name (`0`, `0.1`, ...).
    pub thread: String,
    /// The operation's name (`lock`).
    pub op: String,
    /// What it operated on (`mutex@0x4040a0`), if anything.
    pub object: Option<String>,
    /// `file:line function` of the scheduling point, when the schedule records it.
    pub location: Option<String>,
}

impl LaneStep {
    /// The diagram step of a schedule step (`lock(mutex@0x40)` → `lock`, `mutex@0x40`).
    pub fn of(s: &Step) -> LaneStep {
        let (op, object) = match s.op.split_once('(') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').unwrap_or(rest).trim();
                (
                    name.to_string(),
                    (!inner.is_empty()).then(|| inner.to_string()),
                )
            }
            None => (s.op.clone(), None),
        };
        LaneStep {
            tid: u64::from(s.tid),
            thread: s.thread.to_string(),
            op,
            object,
            location: None,
        }
    }

    /// The operation as the schedule spells it.
    pub fn full(&self) -> String {
        match &self.object {
            Some(o) => format!("{}({o})", self.op),
            None => self.op.clone(),
        }
    }
}

/// What happened between a step and the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Same thread (or the first step).
    None,
    /// Another thread, and the previous one was blocked, done, had yielded, or might have
    /// been blocked (see the module doc).
    Plain,
    /// Another thread while the previous one could have continued.
    Preemption,
}

/// Operations that may wait for something the steps do not track.
const MAY_BLOCK: &[&str] = &[
    "cond_wake",
    "sem_wait",
    "sem_timedwait",
    "barrier_wait",
    "barrier_leave",
    "rdlock",
    "wrlock",
    "timedrdlock",
    "timedwrlock",
    "futex_wait",
    "futex_requeued",
    "waitproc",
    "timedjoin",
    "once_begin",
    "sleep_until",
];

/// For each step, the index of the next step of the same thread (linear: schedules run to a
/// million steps).
pub fn next_of_thread(steps: &[LaneStep]) -> Vec<Option<usize>> {
    let mut next = vec![None; steps.len()];
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate().rev() {
        next[i] = seen.insert(&s.thread, i);
    }
    next
}

/// The switch before each step of `steps`.
pub fn switches(steps: &[LaneStep]) -> Vec<Switch> {
    let next_of = next_of_thread(steps);
    // Mutex → holder (None: held by someone the steps cannot tell, e.g. after a trylock).
    let mut held: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let mut exited: BTreeSet<u64> = BTreeSet::new();
    let mut out = Vec::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        let sw = match i.checked_sub(1).map(|p| &steps[p]) {
            None => Switch::None,
            Some(prev) if prev.thread == s.thread => Switch::None,
            Some(prev) => {
                let next = next_of[i - 1].map(|n| &steps[n]);
                let voluntary = matches!(prev.op.as_str(), "yield" | "sleep" | "exit");
                let could_run = next.is_some_and(|n| enabled(n, &held, &exited));
                if could_run && !voluntary {
                    Switch::Preemption
                } else {
                    Switch::Plain
                }
            }
        };
        out.push(sw);
        let obj = s.object.as_deref().unwrap_or("");
        match s.op.as_str() {
            "lock" | "timedlock" => {
                held.insert(obj, Some(&s.thread));
            }
            "trylock" => {
                held.insert(obj, None);
            }
            "unlock" => {
                held.remove(obj);
            }
            "cond_wait" => {
                if let Some(m) = second_object(obj) {
                    held.remove(m);
                }
            }
            "cond_wake" => {
                if let Some(m) = second_object(obj) {
                    held.insert(m, Some(&s.thread));
                }
            }
            "exit" => {
                exited.insert(s.tid);
            }
            _ => {}
        }
    }
    out
}

/// `m` of a two-object operation `c, m`.
fn second_object(objects: &str) -> Option<&str> {
    objects.split_once(", ").map(|(_, m)| m.trim())
}

/// Whether step `n` could have run, by the state the steps before it built.
fn enabled(n: &LaneStep, held: &BTreeMap<&str, Option<&str>>, exited: &BTreeSet<u64>) -> bool {
    let obj = n.object.as_deref().unwrap_or("");
    match n.op.as_str() {
        "lock" | "timedlock" => !held.contains_key(obj),
        "join" => obj
            .strip_prefix("thread#")
            .and_then(|t| t.parse::<u64>().ok())
            .is_some_and(|t| exited.contains(&t)),
        op => !MAY_BLOCK.contains(&op),
    }
}

/// The thread an outcome's message names as failing (`... in thread 0.1: ...`).
pub fn failing_thread(detail: &str) -> Option<String> {
    let (_, rest) = detail.split_once(" in thread ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The step to highlight: the last step of the failing thread when the message names one,
/// else the last step.
pub fn failing_step(steps: &[LaneStep], detail: Option<&str>) -> Option<usize> {
    let named = detail.and_then(failing_thread);
    named
        .and_then(|t| steps.iter().rposition(|s| s.thread == t))
        .or_else(|| steps.len().checked_sub(1))
}

/// Steps drawn at most; a longer schedule shows its last ones (the failing step is last).
pub const MAX_DRAWN: usize = 400;

const LABEL_W: f64 = 64.0;
const BOX_W: f64 = 112.0;
const GAP: f64 = 14.0;
const LANE_H: f64 = 58.0;
const BOX_H: f64 = 42.0;
const TOP: f64 = 22.0;
/// Characters of an object or location that fit in a box.
const FIT: usize = 17;

/// `s` cut to `n` characters with an ellipsis in the middle.
fn fit(s: &str, n: usize) -> String {
    let cs: Vec<char> = s.chars().collect();
    if cs.len() <= n {
        return s.to_string();
    }
    let head = (n - 1) / 2;
    let tail = n - 1 - head;
    let mut out: String = cs[..head].iter().collect();
    out.push('…');
    out.extend(&cs[cs.len() - tail..]);
    out
}

/// The diagram of `steps` with step `failing` highlighted (at most [`MAX_DRAWN`] steps).
pub fn diagram(steps: &[LaneStep], failing: Option<usize>) -> El {
    let sw = switches(steps);
    let next_of = next_of_thread(steps);
    let first = steps.len().saturating_sub(MAX_DRAWN);
    let mut threads: Vec<&str> = Vec::new();
    for s in steps {
        if !threads.contains(&s.thread.as_str()) {
            threads.push(&s.thread);
        }
    }
    let shown = steps.len() - first;
    let w = LABEL_W + shown as f64 * (BOX_W + GAP) + GAP;
    let h = TOP + threads.len() as f64 * LANE_H + 8.0;
    let mut root = svg::svg(w, h)
        .class("lanes")
        .attr("data-steps", steps.len())
        .attr("data-threads", threads.len());
    let lane_y = |t: &str| -> f64 {
        let k = threads.iter().position(|x| *x == t).unwrap_or(0);
        TOP + k as f64 * LANE_H
    };
    for t in &threads {
        let y = lane_y(t);
        root.push(svg::rect(0.0, y, w, LANE_H).class("lane"));
        root.push(
            svg::text(6.0, y + LANE_H / 2.0 + 4.0, format!("thread {t}")).class("lane-label"),
        );
    }
    let x_of = |i: usize| LABEL_W + (i - first) as f64 * (BOX_W + GAP) + GAP;
    for i in first..steps.len() {
        let s = &steps[i];
        let x = x_of(i);
        let y = lane_y(&s.thread) + (LANE_H - BOX_H) / 2.0;
        root.push(
            svg::text(x + BOX_W / 2.0, TOP - 6.0, i.to_string())
                .class("step-no")
                .attr("text-anchor", "middle"),
        );
        if i > first && sw[i] != Switch::None {
            let prev = &steps[i - 1];
            let (y0, y1) = (
                lane_y(&prev.thread) + LANE_H / 2.0,
                lane_y(&s.thread) + LANE_H / 2.0,
            );
            let xm = x - GAP / 2.0;
            let d = PathData::new()
                .move_to(x_of(i - 1) + BOX_W, y0)
                .line_to(xm, y0)
                .line_to(xm, y1)
                .line_to(x, y1);
            let mut link = d.path().class(if sw[i] == Switch::Preemption {
                "switch preemption"
            } else {
                "switch"
            });
            if sw[i] == Switch::Preemption {
                link = link.tooltip(format!(
                    "preemption: thread {} could have continued (its next step: {})",
                    prev.thread,
                    next_of[i - 1].map_or(String::new(), |n| steps[n].full())
                ));
                root.push(link);
                root.push(
                    svg::text(xm, TOP + 2.0 + threads.len() as f64 * LANE_H, "P")
                        .class("preempt-mark")
                        .attr("text-anchor", "middle"),
                );
            } else {
                root.push(link);
            }
        }
        let failing_here = failing == Some(i);
        let mut tip = format!("step {i}: thread {}: {}", s.thread, s.full());
        if let Some(l) = &s.location {
            tip += &format!(" at {l}");
        }
        if failing_here {
            tip += " (failing step)";
        }
        let mut g = El::new("g")
            .class(if failing_here { "step failing" } else { "step" })
            .attr("data-step", i)
            .tooltip(tip)
            .child(svg::rect(x, y, BOX_W, BOX_H).attr("rx", 4));
        let lines: Vec<String> = [
            Some(s.op.clone()),
            s.object.as_deref().map(|o| fit(o, FIT)),
            s.location.as_deref().map(|l| fit(l, FIT)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let line_h = BOX_H / (lines.len() as f64 + 1.0);
        for (k, l) in lines.into_iter().enumerate() {
            g.push(
                svg::text(x + 5.0, y + line_h * (k as f64 + 1.0) + 3.0, l).class(if k == 0 {
                    "op"
                } else {
                    "obj"
                }),
            );
        }
        root.push(g);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps of threads `0`, `0.1`, `0.2` (tids 0, 1, 2).
    fn steps(spec: &[(&str, &str)]) -> Vec<LaneStep> {
        spec.iter()
            .map(|(t, op)| {
                LaneStep::of(&Step::new(
                    t.strip_prefix("0.").map_or(0, |n| n.parse().unwrap()),
                    serde_json::from_value(serde_json::json!(t)).unwrap(),
                    op.to_string(),
                ))
            })
            .collect()
    }

    #[test]
    fn ops_split_into_name_and_object() {
        let s = &steps(&[("0.1", "lock(mutex@0x40)"), ("0", "create")]);
        assert_eq!(s[0].op, "lock");
        assert_eq!(s[0].object.as_deref(), Some("mutex@0x40"));
        assert_eq!(s[0].thread, "0.1");
        assert_eq!(s[1].object, None);
        assert_eq!(s[0].full(), "lock(mutex@0x40)");
    }

    #[test]
    fn preemptions_only_where_the_previous_thread_could_continue() {
        use Switch::*;
        let s = steps(&[
            ("0", "create"),
            ("0.1", "start"), // 0's next step, create, could run
            ("0.1", "lock(mutex@0x1)"),
            ("0", "create"),  // 0.1's next step, unlock, could run
            ("0.2", "start"), // 0's next step joins 0.1, which has not exited
            ("0.2", "exit"),
            ("0.1", "unlock(mutex@0x1)"), // 0.2 is done
            ("0.1", "exit"),
            ("0", "join(thread#1)"), // after an exit
        ]);
        assert_eq!(
            switches(&s),
            vec![None, Preemption, None, Preemption, Plain, None, Plain, None, Plain]
        );
        // A thread whose next lock is held by another is blocked: a plain switch.
        let s = steps(&[
            ("0.1", "lock(mutex@0x1)"),
            ("0.2", "start"),
            ("0.2", "unlock(mutex@0x9)"),
            ("0.1", "unlock(mutex@0x1)"),
            ("0.2", "lock(mutex@0x1)"),
        ]);
        // 0.1 → 0.2: 0.1's next step (unlock) could run: preemption. 0.2 → 0.1: 0.2's next
        // step locks 0x1, held by 0.1: a switch. 0.1 → 0.2: 0.1 has no next step.
        assert_eq!(switches(&s), vec![None, Preemption, None, Plain, Plain]);
        // A join of an exited thread could run; one of a running thread could not.
        let s = steps(&[
            ("0", "start"),
            ("0.1", "start"),
            ("0.1", "exit"),
            ("0", "join(thread#1)"),
        ]);
        assert_eq!(switches(&s), vec![None, Plain, None, Plain]);
        let s = steps(&[
            ("0", "start"),
            ("0.1", "start"),
            ("0", "yield"),
            ("0.1", "exit"),
        ]);
        // 0 → 0.1 at step 1: 0's next step is a yield, which could run.
        assert_eq!(switches(&s), vec![None, Preemption, Preemption, Plain]);
    }

    #[test]
    fn long_schedules_are_linear_and_drawn_from_their_end() {
        // 200,000 steps of two threads: quadratic work would take minutes.
        let long: Vec<LaneStep> = (0..200_000)
            .map(|i| LaneStep {
                tid: i % 2,
                thread: if i % 2 == 0 { "0".into() } else { "0.1".into() },
                op: "write".into(),
                object: Some("mem[0x40+4]".into()),
                location: None,
            })
            .collect();
        let t = std::time::Instant::now();
        let sw = switches(&long);
        assert_eq!(
            sw.iter().filter(|s| **s == Switch::Preemption).count(),
            199_998
        );
        let text = diagram(&long, Some(199_999)).render();
        assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
        assert_eq!(text.matches("<g class=\"step").count(), MAX_DRAWN);
        assert!(text.contains("data-step=\"199999\""));
        assert!(!text.contains("data-step=\"199599\""));
        assert!(text.contains("data-step=\"199600\""));
    }

    #[test]
    fn the_failing_step_is_the_named_threads_last() {
        let s = steps(&[("0.1", "start"), ("0.2", "start"), ("0", "join(thread#1)")]);
        assert_eq!(
            failing_step(&s, Some("assertion failed in thread 0.1: x == 2")),
            Some(0)
        );
        assert_eq!(
            failing_step(&s, Some("deadlock: thread 0 at join")),
            Some(2)
        );
        assert_eq!(failing_step(&[], None), None);
    }

    #[test]
    fn the_diagram_has_a_lane_per_thread_and_a_box_per_step() {
        let s = steps(&[
            ("0", "create"),
            ("0.1", "lock(mutex@0x5555555580c0)"),
            ("0", "lock(mutex@0x5555555580c0)"),
        ]);
        let mut with_loc = s.clone();
        with_loc[1].location = Some("deadlock.c:12 worker".into());
        let text = diagram(&with_loc, Some(2)).render();
        assert_eq!(text.matches("class=\"lane\"").count(), 2);
        assert_eq!(text.matches("<g class=\"step").count(), 3);
        assert_eq!(text.matches("class=\"step failing\"").count(), 1);
        assert!(text.contains("deadlock.c:12 worker"), "{text}");
        assert!(text.contains("mutex@0x…555580c0"), "{text}");
        // 0 → 0.1: 0's next lock is free: a preemption; 0.1 → 0: 0.1 has no next step.
        assert_eq!(text.matches("switch preemption").count(), 1);
        assert_eq!(text.matches("class=\"switch\"").count(), 1);
    }
}
