//! Readable traces: a schedule as the steps a person follows (thread, operation, object by its
//! symbol, `file:line in function`), with the context switches marked, for `replay --trace`,
//! `minimize` and the reports.

use super::source::Symbols;
use pos_sched::schedule::Step;
use std::fmt::Write as _;

/// One scheduling step, ready to show.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TraceStep {
    /// Position in the schedule (0-based).
    pub index: usize,
    /// The thread's stable name (`0`, `0.1`).
    pub thread: String,
    /// The operation with its first object named by its symbol when it is a global
    /// (`lock(mutex m)`), else as recorded (`lock(mutex@0x7ffe...)`).
    pub op: String,
    /// The first object in words (`mutex m`, `g_log`), when it has a symbol.
    pub object: Option<String>,
    /// `file:line in function` of the call that reached the scheduling point.
    pub location: Option<String>,
    /// The step switched away from a thread that could have continued.
    pub preempted: bool,
    /// The step's thread is not the previous step's (a context switch, preemptive or not).
    pub switched: bool,
}

/// The readable steps of `steps` (with the pcs and object symbols the schedule carries).
pub fn readable(steps: &[Step], sym: &mut Symbols) -> Vec<TraceStep> {
    let mut prev = None;
    steps
        .iter()
        .enumerate()
        .map(|(index, s)| {
            let (op, object) = describe_op(&s.op, [s.obj.as_deref(), s.obj2.as_deref()]);
            let switched = prev.is_some_and(|p| p != s.tid);
            prev = Some(s.tid);
            TraceStep {
                index,
                thread: s.thread.to_string(),
                op,
                object,
                location: s.pc.as_ref().and_then(|pc| sym.location(pc)),
                preempted: s.preempt,
                switched,
            }
        })
        .collect()
}

/// `op` with each object (`kind@0xADDR` or `mem[0xADDR+N]`, in order) that has a symbol in
/// `symbols` replaced by it, and the first object in words when it has one.
pub fn describe_op(op: &str, symbols: [Option<&str>; 2]) -> (String, Option<String>) {
    let mut out = String::new();
    let mut rest = op;
    let mut first = None;
    for (k, sym) in symbols.iter().enumerate() {
        let Some(at) = rest.find("0x") else {
            break;
        };
        let hex_end = at
            + 2
            + rest[at + 2..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .count();
        // The object's text: from after `(` or ` ` before the address to its end.
        let start = rest[..at].rfind(['(', ' ']).map_or(0, |i| i + 1);
        let named = sym.and_then(|sym| {
            if rest[start..at].ends_with("mem[") {
                let close = rest[hex_end..]
                    .find(']')
                    .map_or(hex_end, |i| hex_end + i + 1);
                Some((sym.to_string(), close))
            } else {
                let kind = rest[start..at].strip_suffix('@')?;
                Some((format!("{kind} {sym}"), hex_end))
            }
        });
        match named {
            Some((object, end)) => {
                out.push_str(&rest[..start]);
                out.push_str(&object);
                if k == 0 {
                    first = Some(object);
                }
                rest = &rest[end..];
            }
            None => {
                out.push_str(&rest[..hex_end]);
                rest = &rest[hex_end..];
            }
        }
    }
    out.push_str(rest);
    (out, first)
}

/// The trace as text: one line per step, a marker line before each context switch, and the
/// outcome at the end.
pub fn render(steps: &[TraceStep], outcome: Option<&str>) -> String {
    let mut out = String::new();
    let width = steps.iter().map(|s| s.op.len()).max().unwrap_or(0).min(48);
    let tw = steps.iter().map(|s| s.thread.len()).max().unwrap_or(1);
    let mut prev: Option<&TraceStep> = None;
    for s in steps {
        if s.switched {
            let from = prev.map_or("?", |p| p.thread.as_str());
            if s.preempted {
                let _ = writeln!(
                    out,
                    "      >>> preemption: {from} -> {} ({from} could have continued)",
                    s.thread
                );
            } else {
                let _ = writeln!(out, "      --- switch: {from} -> {}", s.thread);
            }
        }
        let _ = writeln!(
            out,
            "{:>5}  [{:<tw$}]  {:<width$}  {}",
            s.index,
            s.thread,
            s.op,
            s.location.as_deref().unwrap_or("?"),
        );
        prev = Some(s);
    }
    let pre = steps.iter().filter(|s| s.preempted).count();
    let sw = steps.iter().filter(|s| s.switched).count();
    let _ = writeln!(
        out,
        "{} steps, {sw} context switches, {pre} preemptions",
        steps.len()
    );
    if let Some(o) = outcome {
        let _ = writeln!(out, "outcome: {o}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pos_sched::ThreadName;

    #[test]
    fn objects_are_named_by_their_symbol() {
        assert_eq!(
            describe_op("lock(mutex@0x555555558100)", [Some("m"), None]),
            ("lock(mutex m)".into(), Some("mutex m".into()))
        );
        let wait = "cond_wait(cond@0x5555555580c0, mutex@0x555555558100)";
        assert_eq!(
            describe_op(wait, [Some("cv"), None]),
            (
                "cond_wait(cond cv, mutex@0x555555558100)".into(),
                Some("cond cv".into())
            )
        );
        assert_eq!(
            describe_op(wait, [Some("cv"), Some("m")]),
            ("cond_wait(cond cv, mutex m)".into(), Some("cond cv".into()))
        );
        assert_eq!(
            describe_op(wait, [None, Some("m")]),
            ("cond_wait(cond@0x5555555580c0, mutex m)".into(), None)
        );
        assert_eq!(
            describe_op("atomic_load(acquire, mem[0x4040+4])", [Some("flag"), None]),
            ("atomic_load(acquire, flag)".into(), Some("flag".into()))
        );
        assert_eq!(
            describe_op("read(mem[0x4040+8])", [Some("g_log"), None]),
            ("read(g_log)".into(), Some("g_log".into()))
        );
        assert_eq!(
            describe_op("lock(mutex@0x7ffe0010)", [None, None]),
            ("lock(mutex@0x7ffe0010)".into(), None)
        );
        assert_eq!(
            describe_op("create", [Some("x"), None]),
            ("create".into(), None)
        );
    }

    #[test]
    fn switches_and_preemptions_are_marked() {
        let main = ThreadName::main();
        let mut steps = vec![
            Step::new(0, main.clone(), "create".into()),
            Step::new(1, main.child(1), "start".into()),
            Step::new(1, main.child(1), "lock(mutex@0x10)".into()),
            Step::new(0, main.clone(), "join(thread#1)".into()),
        ];
        steps[1].preempt = true;
        let t = readable(&steps, &mut Symbols::new());
        assert_eq!(
            t.iter()
                .map(|s| (s.switched, s.preempted))
                .collect::<Vec<_>>(),
            vec![(false, false), (true, true), (false, false), (true, false)]
        );
        let text = render(&t, Some("deadlock: ..."));
        assert!(
            text.contains(">>> preemption: 0 -> 0.1 (0 could have continued)"),
            "{text}"
        );
        assert!(text.contains("--- switch: 0.1 -> 0"), "{text}");
        assert!(
            text.contains("4 steps, 2 context switches, 1 preemptions"),
            "{text}"
        );
        assert!(text.ends_with("outcome: deadlock: ...\n"), "{text}");
    }
}
