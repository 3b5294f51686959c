//! Abstract programs: the parsed form of the `.model` text format (documented in
//! [`crate::sim`]) and its validation.

use crate::event::ObjKind;
use std::collections::HashMap;
use std::fmt;

/// One listed statement of a thread. Objects and threads are indices into
/// [`Program::objects`] / [`Program::threads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stmt {
    Read(usize),
    Write(usize),
    Lock(usize),
    Unlock(usize),
    /// The POS paper's `wait(w)`: blocks until the counter is positive, then decrements it.
    Wait(usize),
    /// The POS paper's `signal(w)`: increments the counter.
    Signal(usize),
    Create(usize),
    Join(usize),
    /// Arrival at a barrier ([`crate::Op::BarrierWait`]); must be followed at once by
    /// [`Stmt::BarrierLeave`] of the same barrier, as libpos posts `pthread_barrier_wait`.
    BarrierWait(usize),
    /// Leaving a barrier: blocks until the barrier's count of threads arrived.
    BarrierLeave(usize),
    /// Not written in models: in real-program mode, the first event of every created
    /// thread ([`crate::Op::Start`]), which libpos posts before the thread's routine runs;
    /// numbered 0 (listed events are numbered from 1).
    Start,
}

/// A named object; its kind is fixed by the statements that use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub kind: ObjKind,
    /// Distinct per object, so that distinct names never alias.
    pub addr: u64,
    /// Initial value of a `wait`/`signal` counter (0 unless a `sem` line sets it), or the
    /// count of a barrier (its `barrier` line).
    pub init: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    pub name: String,
    pub body: Vec<Stmt>,
}

/// How threads come to exist and end (see the module documentation of [`crate::sim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No `main`: every thread exists at step 0, only listed events are scheduling points.
    Paper,
    /// A `main` thread: exactly the events libpos reports for a real binary.
    Real,
}

/// A listed event: thread index and 0-based position in its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventRef {
    pub thread: usize,
    pub index: usize,
}

/// A parsed, validated program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// In real-program mode `main` is thread 0.
    pub threads: Vec<Thread>,
    pub objects: Vec<Object>,
    pub mode: Mode,
    /// The bug: a conjunction of "`before` happens before `after`" in the partial order.
    pub bug: Vec<(EventRef, EventRef)>,
}

/// A syntax or consistency error, with its 1-based line (0 when not tied to a line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.msg)
        } else {
            write!(f, "{}", self.msg)
        }
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        msg: msg.into(),
    })
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Base address of object `i`: distinct, 64-byte spaced (memory objects are 4 bytes wide).
fn object_addr(i: usize) -> u64 {
    0x1000 + 0x40 * i as u64
}

/// Statements as written, before thread names are resolved.
struct RawThread {
    name: String,
    line: usize,
    stmts: Vec<(usize, String, String)>,
}

impl Program {
    /// Parse and validate a program in the `.model` format.
    pub fn parse(text: &str) -> Result<Program, ParseError> {
        let mut raw: Vec<RawThread> = Vec::new();
        let mut bug_lines: Vec<(usize, String)> = Vec::new();
        let mut sem_lines: Vec<(usize, String, u32, ObjKind)> = Vec::new();
        let mut in_thread = false;
        for (i, full) in text.lines().enumerate() {
            let ln = i + 1;
            let line = full.split('#').next().unwrap_or("");
            if line.trim().is_empty() {
                continue;
            }
            let indented = line.starts_with(' ') || line.starts_with('\t');
            let line = line.trim();
            if indented {
                if !in_thread {
                    return err(ln, "indented line outside a thread block");
                }
                let t = raw.last_mut().expect("in_thread implies a thread");
                push_stmts(t, ln, line)?;
                continue;
            }
            in_thread = false;
            if let Some(rest) = line.strip_prefix("thread ") {
                let (name, body) = match rest.split_once(':') {
                    Some((n, b)) => (n.trim(), b),
                    None => return err(ln, "expected `thread NAME: statements`"),
                };
                if !is_ident(name) {
                    return err(ln, format!("bad thread name {name:?}"));
                }
                if raw.iter().any(|t| t.name == name) {
                    return err(ln, format!("thread {name} declared twice"));
                }
                raw.push(RawThread {
                    name: name.to_string(),
                    line: ln,
                    stmts: Vec::new(),
                });
                let t = raw.last_mut().expect("just pushed");
                push_stmts(t, ln, body)?;
                in_thread = true;
            } else if let Some(rest) = line.strip_prefix("bug:") {
                bug_lines.push((ln, rest.trim().to_string()));
            } else if let Some((word, kind, rest)) = line
                .strip_prefix("sem ")
                .map(|r| ("sem", ObjKind::Sem, r))
                .or_else(|| {
                    line.strip_prefix("barrier ")
                        .map(|r| ("barrier", ObjKind::Barrier, r))
                })
            {
                let (name, value) = match rest.split_once('=') {
                    Some((n, v)) => (n.trim(), v.trim()),
                    None => return err(ln, format!("expected `{word} NAME = VALUE`")),
                };
                let value: u32 = match value.parse() {
                    Ok(v) if v > 0 || kind == ObjKind::Sem => v,
                    _ => return err(ln, format!("bad {word} value {value:?}")),
                };
                sem_lines.push((ln, name.to_string(), value, kind));
            } else {
                return err(
                    ln,
                    format!("expected `thread`, `bug:`, `sem` or `barrier`, got {line:?}"),
                );
            }
        }
        build(raw, bug_lines, sem_lines)
    }

    /// Whether real-program mode applies (a `main` thread is declared).
    pub fn is_real(&self) -> bool {
        self.mode == Mode::Real
    }

    pub fn thread_index(&self, name: &str) -> Option<usize> {
        self.threads.iter().position(|t| t.name == name)
    }

    /// `A.3` style label of an event (`A.0`: a created thread's start).
    pub fn label(&self, e: EventRef) -> String {
        let n = e.index + 1 - self.first_listed(e.thread);
        format!("{}.{n}", self.threads[e.thread].name)
    }

    /// Position of `thread`'s first listed statement in its body: 1 after the synthesized
    /// [`Stmt::Start`] of a created thread in real-program mode, else 0.
    pub fn first_listed(&self, thread: usize) -> usize {
        usize::from(matches!(
            self.threads[thread].body.first(),
            Some(Stmt::Start)
        ))
    }

    /// Source text of one statement.
    pub fn stmt_text(&self, s: &Stmt) -> String {
        let o = |i: usize| self.objects[i].name.as_str();
        let t = |i: usize| self.threads[i].name.as_str();
        match *s {
            Stmt::Read(x) => format!("read {}", o(x)),
            Stmt::Write(x) => format!("write {}", o(x)),
            Stmt::Lock(x) => format!("lock {}", o(x)),
            Stmt::Unlock(x) => format!("unlock {}", o(x)),
            Stmt::Wait(x) => format!("wait {}", o(x)),
            Stmt::Signal(x) => format!("signal {}", o(x)),
            Stmt::Create(x) => format!("create {}", t(x)),
            Stmt::Join(x) => format!("join {}", t(x)),
            Stmt::BarrierWait(x) => format!("barrier_wait {}", o(x)),
            Stmt::BarrierLeave(x) => format!("barrier_leave {}", o(x)),
            Stmt::Start => "start".to_string(),
        }
    }

    /// The program in the `.model` format (parses back to an equal program).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for o in &self.objects {
            if o.init != 0 {
                let word = if o.kind == ObjKind::Barrier {
                    "barrier"
                } else {
                    "sem"
                };
                out.push_str(&format!("{word} {} = {}\n", o.name, o.init));
            }
        }
        for t in &self.threads {
            let body: Vec<String> = t
                .body
                .iter()
                .filter(|s| **s != Stmt::Start)
                .map(|s| self.stmt_text(s))
                .collect();
            out.push_str(&format!("thread {}: {}\n", t.name, body.join("; ")));
        }
        if !self.bug.is_empty() {
            let parts: Vec<String> = self
                .bug
                .iter()
                .map(|&(a, b)| format!("{} < {}", self.label(a), self.label(b)))
                .collect();
            out.push_str(&format!("bug: {}\n", parts.join(", ")));
        }
        out
    }
}

fn push_stmts(t: &mut RawThread, ln: usize, body: &str) -> Result<(), ParseError> {
    for part in body.split(';') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let mut words = part.split_whitespace();
        let (Some(verb), Some(arg), None) = (words.next(), words.next(), words.next()) else {
            return err(ln, format!("expected `VERB NAME`, got {part:?}"));
        };
        if !is_ident(arg) {
            return err(ln, format!("bad name {arg:?}"));
        }
        t.stmts.push((ln, verb.to_string(), arg.to_string()));
    }
    Ok(())
}

fn build(
    raw: Vec<RawThread>,
    bug_lines: Vec<(usize, String)>,
    sem_lines: Vec<(usize, String, u32, ObjKind)>,
) -> Result<Program, ParseError> {
    if raw.is_empty() {
        return err(0, "no thread declared");
    }
    let mode = if raw.iter().any(|t| t.name == "main") {
        Mode::Real
    } else {
        Mode::Paper
    };
    // main first, the others in declaration order.
    let mut order: Vec<&RawThread> = raw.iter().filter(|t| t.name == "main").collect();
    order.extend(raw.iter().filter(|t| t.name != "main"));
    let names: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();

    let mut objects: Vec<Object> = Vec::new();
    let mut object_of = |name: &str, kind: ObjKind, ln: usize| -> Result<usize, ParseError> {
        if let Some(i) = objects.iter().position(|o| o.name == name) {
            if objects[i].kind != kind {
                return err(
                    ln,
                    format!(
                        "object {name} used as {} and as {}",
                        kind_word(objects[i].kind),
                        kind_word(kind)
                    ),
                );
            }
            return Ok(i);
        }
        objects.push(Object {
            name: name.to_string(),
            kind,
            addr: object_addr(objects.len()),
            init: 0,
        });
        Ok(objects.len() - 1)
    };

    let mut threads = Vec::new();
    let mut created_by: Vec<Option<usize>> = vec![None; order.len()];
    for (ti, rt) in order.iter().enumerate() {
        let mut body = Vec::new();
        if mode == Mode::Real && ti != 0 {
            body.push(Stmt::Start);
        }
        let mut created_here: Vec<usize> = Vec::new();
        for (ln, verb, arg) in &rt.stmts {
            let ln = *ln;
            let thread_arg = || -> Result<usize, ParseError> {
                match names.get(arg.as_str()) {
                    Some(&i) => Ok(i),
                    None => err(ln, format!("unknown thread {arg}")),
                }
            };
            let s = match verb.as_str() {
                "read" => Stmt::Read(object_of(arg, ObjKind::Mem, ln)?),
                "write" => Stmt::Write(object_of(arg, ObjKind::Mem, ln)?),
                "lock" => Stmt::Lock(object_of(arg, ObjKind::Mutex, ln)?),
                "unlock" => Stmt::Unlock(object_of(arg, ObjKind::Mutex, ln)?),
                "wait" => Stmt::Wait(object_of(arg, ObjKind::Sem, ln)?),
                "signal" => Stmt::Signal(object_of(arg, ObjKind::Sem, ln)?),
                "barrier_wait" => Stmt::BarrierWait(object_of(arg, ObjKind::Barrier, ln)?),
                "barrier_leave" => {
                    let b = object_of(arg, ObjKind::Barrier, ln)?;
                    if body.last() != Some(&Stmt::BarrierWait(b)) {
                        return err(
                            ln,
                            format!("`barrier_leave {arg}` must follow `barrier_wait {arg}`"),
                        );
                    }
                    Stmt::BarrierLeave(b)
                }
                "create" | "join" if mode == Mode::Paper => {
                    return err(
                        ln,
                        format!("`{verb}` needs a `main` thread (real-program mode)"),
                    )
                }
                "create" => {
                    let c = thread_arg()?;
                    if c == 0 {
                        return err(ln, "main cannot be created");
                    }
                    if created_by[c].is_some() {
                        return err(ln, format!("thread {arg} created twice"));
                    }
                    created_by[c] = Some(ti);
                    created_here.push(c);
                    Stmt::Create(c)
                }
                "join" => {
                    let c = thread_arg()?;
                    if !created_here.contains(&c) {
                        return err(
                            ln,
                            format!("`join {arg}` must follow `create {arg}` in the same thread"),
                        );
                    }
                    Stmt::Join(c)
                }
                v => return err(ln, format!("unknown statement {v:?}")),
            };
            if let Some(Stmt::BarrierWait(b)) = body.last() {
                if s != Stmt::BarrierLeave(*b) {
                    return err(ln, "`barrier_wait` must be followed by its `barrier_leave`");
                }
            }
            body.push(s);
        }
        if let Some(Stmt::BarrierWait(_)) = body.last() {
            return err(
                rt.line,
                "`barrier_wait` must be followed by its `barrier_leave`",
            );
        }
        threads.push(Thread {
            name: rt.name.clone(),
            body,
        });
    }
    if mode == Mode::Real {
        // Every thread must be reachable from main through creates.
        for (i, rt) in order.iter().enumerate().skip(1) {
            let mut cur = i;
            let mut hops = 0;
            loop {
                match created_by[cur] {
                    Some(0) => break,
                    Some(p) if hops < order.len() => {
                        cur = p;
                        hops += 1;
                    }
                    _ => {
                        return err(
                            rt.line,
                            format!("thread {} is never created (from main)", rt.name),
                        )
                    }
                }
            }
        }
    }

    for (ln, name, value, kind) in sem_lines {
        match objects.iter_mut().find(|o| o.name == name) {
            Some(o) if o.kind == kind => o.init = value,
            Some(_) => return err(ln, format!("{name} is not {}", kind_word(kind))),
            None => return err(ln, format!("{name} is never used")),
        }
    }
    if let Some(o) = objects
        .iter()
        .find(|o| o.kind == ObjKind::Barrier && o.init == 0)
    {
        return err(
            0,
            format!(
                "barrier {} needs a `barrier {} = COUNT` line",
                o.name, o.name
            ),
        );
    }

    let mut program = Program {
        threads,
        objects,
        mode,
        bug: Vec::new(),
    };
    for (ln, spec) in bug_lines {
        for clause in spec.split(',') {
            let Some((a, b)) = clause.split_once('<') else {
                return err(ln, format!("expected `T.i < U.j`, got {:?}", clause.trim()));
            };
            let a = event_ref(&program, a.trim(), ln)?;
            let b = event_ref(&program, b.trim(), ln)?;
            program.bug.push((a, b));
        }
    }
    Ok(program)
}

fn event_ref(p: &Program, s: &str, ln: usize) -> Result<EventRef, ParseError> {
    let Some((t, i)) = s.rsplit_once('.') else {
        return err(ln, format!("expected THREAD.INDEX, got {s:?}"));
    };
    let Some(thread) = p.thread_index(t) else {
        return err(ln, format!("unknown thread {t:?}"));
    };
    let skip = p.first_listed(thread);
    let len = p.threads[thread].body.len() - skip;
    match i.parse::<usize>() {
        Ok(k) if (1 - skip..=len).contains(&k) => Ok(EventRef {
            thread,
            index: k + skip - 1,
        }),
        _ if skip == 1 => err(
            ln,
            format!("{s:?}: thread {t} has events 0 (its start) and 1..={len}"),
        ),
        _ => err(
            ln,
            format!("{s:?}: thread {t} has events 1..={len} (1-based)"),
        ),
    }
}

fn kind_word(k: ObjKind) -> &'static str {
    match k {
        ObjKind::Mem => "a variable (read/write)",
        ObjKind::Mutex => "a mutex (lock/unlock)",
        ObjKind::Sem => "a counter (wait/signal)",
        ObjKind::Barrier => "a barrier (barrier_wait/barrier_leave)",
        _ => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paper_mode_with_bug_and_round_trips() {
        let p = Program::parse(
            "# delay\nthread A: read x\nthread B: write y; write x\nbug: B.2 < A.1\n",
        )
        .unwrap();
        assert_eq!(p.mode, Mode::Paper);
        assert_eq!(p.threads.len(), 2);
        assert_eq!(p.threads[1].body, vec![Stmt::Write(1), Stmt::Write(0)]);
        assert_eq!(
            p.bug,
            vec![(
                EventRef {
                    thread: 1,
                    index: 1
                },
                EventRef {
                    thread: 0,
                    index: 0
                }
            )]
        );
        assert_eq!(Program::parse(&p.to_text()).unwrap(), p);
        assert_ne!(p.objects[0].addr, p.objects[1].addr);
    }

    #[test]
    fn real_mode_puts_main_first_and_accepts_blocks() {
        let p = Program::parse(
            "sem w = 1\nthread A: wait w; lock m; unlock m\nthread main:\n  create A\n  join A\n",
        )
        .unwrap();
        assert_eq!(p.mode, Mode::Real);
        assert_eq!(p.threads[0].name, "main");
        assert_eq!(p.threads[0].body, vec![Stmt::Create(1), Stmt::Join(1)]);
        assert_eq!(p.objects[0].init, 1);
        // A created thread begins with its start (event 0), as libpos posts it.
        assert_eq!(
            p.threads[1].body,
            vec![Stmt::Start, Stmt::Wait(0), Stmt::Lock(1), Stmt::Unlock(1)]
        );
        let bug = "thread main: create A\nthread A: read x; write x\nbug: A.2 < A.0\n";
        let q = Program::parse(bug).unwrap();
        assert_eq!(
            q.bug,
            vec![(
                EventRef {
                    thread: 1,
                    index: 2
                },
                EventRef {
                    thread: 1,
                    index: 0
                }
            )]
        );
        assert_eq!(q.label(q.bug[0].0), "A.2");
        assert_eq!(q.to_text(), bug, "the start is not written back");
        assert!(Program::parse("thread main: create A\nthread A: read x\nbug: A.2 < A.1").is_err());
        assert!(Program::parse("thread A: read x\nbug: A.0 < A.1").is_err());
    }

    #[test]
    fn barriers_parse_and_round_trip() {
        let text = "barrier b = 2\nthread A: barrier_wait b; barrier_leave b; read x\n\
                    thread B: barrier_wait b; barrier_leave b; write x\n";
        let p = Program::parse(text).unwrap();
        assert_eq!(p.objects[0].kind, ObjKind::Barrier);
        assert_eq!(p.objects[0].init, 2);
        assert_eq!(
            p.threads[0].body,
            vec![Stmt::BarrierWait(0), Stmt::BarrierLeave(0), Stmt::Read(1)]
        );
        assert_eq!(p.to_text(), text);
    }

    #[test]
    fn rejects_inconsistent_programs() {
        let bad = [
            ("thread A: read x; lock x", 1),
            ("thread A: create B\nthread B: read x", 1),
            ("thread main: join A\nthread A: read x", 1),
            ("thread main: read x\nthread A: read x", 2),
            ("thread A: read x\nbug: A.2 < A.1", 2),
            ("thread A: frob x", 1),
            ("thread A: read x\nthread A: read y", 2),
            ("  read x", 1),
            ("thread A: read x\nsem x = 1", 2),
            // Barriers: a count line, and each wait followed at once by its leave.
            ("thread A: barrier_wait b; barrier_leave b", 0),
            (
                "barrier b = 0\nthread A: barrier_wait b; barrier_leave b",
                1,
            ),
            ("barrier b = 2\nthread A: barrier_wait b; read x", 2),
            ("barrier b = 2\nthread A: barrier_leave b", 2),
            ("barrier b = 2\nthread A: barrier_wait b", 2),
            ("sem b = 2\nthread A: barrier_wait b; barrier_leave b", 1),
        ];
        for (text, line) in bad {
            let e = Program::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }
}
