//! The classification rule of `poscheck races --classify`, apart from any run: given what the
//! original run and the run with one race reversed ended with, and whether the reversal was
//! realised, which class the race is in (R4's report phase: Jensen, Møller, Raychev,
//! Dimitrov, Vechev, OOPSLA'15, §5: a reordering is harmful when it changes what the program
//! does).
//!
//! - **not reversible**: the reversed run did not run the second event before the first (or
//!   ran other instructions in their place), or the harness failed: nothing is known about
//!   the race;
//! - **harmful**: the reversal was realised and the outcome (the verdict: exit code,
//!   assertion, crash, deadlock, ...) or the standard output differs;
//! - **harmless**: realised, same outcome, same output.

use crate::suite::outcome::Outcome;
use serde::Serialize;

/// What one run ended with, as far as the rule compares runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// [`outcome_key`] of the outcome.
    pub outcome: String,
    /// The harness failed (setup, protocol): no verdict about the program.
    pub error: bool,
    /// The program's standard output (its captured tail).
    pub stdout: Vec<u8>,
}

impl Ending {
    pub fn of(outcome: &Outcome, stdout: &[u8]) -> Self {
        Ending {
            outcome: outcome_key(outcome),
            error: matches!(outcome, Outcome::Error { .. } | Outcome::Diverged { .. }),
            stdout: stdout.to_vec(),
        }
    }
}

/// Whether the reversed run put the race's second event before its first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Realised {
    /// The second event ran before the first (or the first never ran), both where the
    /// original run had them (same thread, same index in the thread, same operation, object
    /// and instruction).
    Yes,
    /// Why not, in words.
    No(String),
}

/// The class of one reversed race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "class", content = "detail", rename_all = "kebab-case")]
pub enum Class {
    Harmless,
    /// What differs, in words.
    Harmful(String),
    /// Why the reversal tells nothing.
    NotReversible(String),
}

impl Class {
    pub fn name(&self) -> &'static str {
        match self {
            Class::Harmless => "harmless",
            Class::Harmful(_) => "harmful",
            Class::NotReversible(_) => "not reversible",
        }
    }
}

/// The verdict part of an outcome that two runs must share to count as "same outcome":
/// the kind plus what identifies it (exit code, assertion text, signal, panic site), but not
/// what varies with the schedule alone (thread names, step counts, wait times, addresses).
pub fn outcome_key(o: &Outcome) -> String {
    match o {
        Outcome::Ok { code } => format!("ok (exit code {code})"),
        Outcome::ExitCode { code } => format!("exit code {code}"),
        Outcome::Assert { text, .. } => format!("assertion failed: {text}"),
        Outcome::Crash {
            signal, exception, ..
        } => match exception {
            Some(e) => format!("abort: uncaught C++ exception {e}"),
            None => format!("crash: signal {signal}"),
        },
        Outcome::Panic {
            location, message, ..
        } => format!("panic at {location}: {message}"),
        other => other.kind().to_string(),
    }
}

/// The first line where two outputs differ: `line N: "a" vs "b"` (a missing line is
/// `(end)`); `None` when they are equal.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<String> {
    if a == b {
        return None;
    }
    let la: Vec<&[u8]> = a.split(|&c| c == b'\n').collect();
    let lb: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
    let show = |l: Option<&&[u8]>| {
        l.map_or("(end)".to_string(), |l| {
            let s = String::from_utf8_lossy(l);
            let cut: String = s.chars().take(80).collect();
            format!("{cut:?}")
        })
    };
    let n = (0..la.len().max(lb.len()))
        .find(|&i| la.get(i) != lb.get(i))
        .unwrap_or(0);
    Some(format!(
        "line {}: {} vs {}",
        n + 1,
        show(la.get(n)),
        show(lb.get(n))
    ))
}

/// The rule (see the module doc).
pub fn classify(original: &Ending, reversed: &Ending, realised: &Realised) -> Class {
    if reversed.error {
        return Class::NotReversible(format!("the reversed run failed: {}", reversed.outcome));
    }
    if let Realised::No(why) = realised {
        return Class::NotReversible(why.clone());
    }
    if original.outcome != reversed.outcome {
        return Class::Harmful(format!(
            "outcome {} -> {}",
            original.outcome, reversed.outcome
        ));
    }
    match first_difference(&original.stdout, &reversed.stdout) {
        Some(d) => Class::Harmful(format!("output differs at {d}")),
        None => Class::Harmless,
    }
}

/// The class of a race reversed in several runs (continuations): harmful when a run that
/// realised the reversal differs (the first such, by its index), else harmless when one
/// realised it, else not reversible (the first run's reason).
pub fn combine(classes: &[Class]) -> Option<(usize, Class)> {
    let pick = |name: &str| {
        classes
            .iter()
            .position(|c| c.name() == name)
            .map(|i| (i, classes[i].clone()))
    };
    pick("harmful")
        .or_else(|| pick("harmless"))
        .or_else(|| pick("not reversible"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(out: &str) -> Ending {
        Ending::of(&Outcome::Ok { code: 0 }, out.as_bytes())
    }

    #[test]
    fn same_outcome_and_output_is_harmless() {
        assert_eq!(
            classify(&ok("a\n"), &ok("a\n"), &Realised::Yes),
            Class::Harmless
        );
    }

    #[test]
    fn a_different_outcome_is_harmful_and_says_which() {
        let a = Outcome::Assert {
            text: "t.c:9: main: Assertion `x == 2' failed.".into(),
            thread: "main".into(),
        };
        let c = classify(&ok(""), &Ending::of(&a, b""), &Realised::Yes);
        assert_eq!(
            c,
            Class::Harmful(
                "outcome ok (exit code 0) -> assertion failed: t.c:9: main: Assertion `x == 2' \
                 failed."
                    .into()
            )
        );
        let exit3 = Ending::of(&Outcome::ExitCode { code: 3 }, b"");
        assert_eq!(classify(&ok(""), &exit3, &Realised::Yes).name(), "harmful");
    }

    #[test]
    fn a_different_output_is_harmful_with_its_first_differing_line() {
        let c = classify(&ok("n=1\nsum=4\n"), &ok("n=1\nsum=3\n"), &Realised::Yes);
        assert_eq!(
            c,
            Class::Harmful("output differs at line 2: \"sum=4\" vs \"sum=3\"".into())
        );
        let shorter = first_difference(b"a\nb\n", b"a\n").unwrap();
        assert_eq!(shorter, "line 2: \"b\" vs \"\"");
        assert_eq!(
            first_difference(b"a", b"a\nb").unwrap(),
            "line 2: (end) vs \"b\""
        );
    }

    #[test]
    fn an_unrealised_reversal_is_not_reversible_whatever_the_outcome() {
        let crash = Ending::of(
            &Outcome::Crash {
                signal: 11,
                thread: "t1".into(),
                pc: None,
                symbol: None,
                exception: None,
            },
            b"",
        );
        let no = Realised::No("the second event did not run".into());
        assert_eq!(
            classify(&ok(""), &crash, &no),
            Class::NotReversible("the second event did not run".into())
        );
        let err = Ending::of(
            &Outcome::Error {
                reason: "socket".into(),
            },
            b"",
        );
        assert_eq!(
            classify(&ok(""), &err, &Realised::Yes).name(),
            "not reversible"
        );
    }

    #[test]
    fn a_race_is_harmful_if_any_continuation_realising_it_differs() {
        let nr = Class::NotReversible("x".into());
        let bad = Class::Harmful("y".into());
        assert_eq!(
            combine(&[Class::Harmless, bad.clone()]),
            Some((1, bad.clone()))
        );
        assert_eq!(
            combine(&[nr.clone(), Class::Harmless]),
            Some((1, Class::Harmless))
        );
        assert_eq!(combine(&[nr.clone(), nr.clone()]), Some((0, nr)));
        assert_eq!(combine(&[]), None);
    }

    #[test]
    fn outcomes_compare_by_verdict_not_by_schedule_details() {
        let d1 = Outcome::Hang {
            threads: vec!["t1".into()],
            waited_ms: 2000,
            computing: false,
        };
        let d2 = Outcome::Hang {
            threads: vec!["t2".into()],
            waited_ms: 2001,
            computing: true,
        };
        assert_eq!(outcome_key(&d1), outcome_key(&d2));
        let a = |thread: &str| Outcome::Assert {
            text: "x".into(),
            thread: thread.into(),
        };
        assert_eq!(outcome_key(&a("t1")), outcome_key(&a("t2")));
        assert_ne!(
            outcome_key(&Outcome::Ok { code: 0 }),
            outcome_key(&Outcome::ExitCode { code: 1 })
        );
    }
}
