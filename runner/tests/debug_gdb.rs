//! `poscheck debug` drives gdb in batch mode on atomicity_violation's first bug: the program
//! stops at the schedule's last step (the writer's re-read of `g_log`, granted, in
//! `pos_debug_stop`) with the other threads waiting in libpos, and `continue` runs into the
//! SIGSEGV at the source line of the NULL dereference; `--step N` stops earlier. Skipped,
//! with a message, where gdb is absent.

use crate::common;

use common::{poscheck, text, POSCHECK};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn have_gdb() -> bool {
    Command::new("gdb")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The first bug of suite program `name` under pos (seed 1, 1000 tries, `points` as in the
/// manifest), which must end with `outcome`: its saved schedule.
fn first_bug(name: &str, points: &str, outcome: &str) -> PathBuf {
    let bin = common::suite_program("debug_gdb", name);
    let (p, saved, o) = common::run_report(
        &bin,
        &[
            "--algo",
            "pos",
            "--tries",
            "1000",
            "--seed",
            "1",
            "--points",
            points,
            "--stop-on-first",
            "--no-minimize",
        ],
    );
    assert!(
        p["outcomes"][outcome].as_u64().unwrap_or(0) >= 1,
        "{}",
        text(&o)
    );
    saved.unwrap_or_else(|| panic!("no schedule saved: {}", text(&o)))
}

/// atomicity_violation's first bug under pos (races points as in the manifest).
fn crash_schedule() -> PathBuf {
    first_bug("atomicity_violation", "races", "crash")
}

/// `poscheck debug --batch ARGS SCHEDULE` with no terminal, at most two minutes.
fn debug(schedule: &PathBuf, args: &[&str]) -> (String, Option<i32>) {
    let o = Command::new("timeout")
        .arg("120")
        .arg(POSCHECK)
        .arg("debug")
        .arg("--batch")
        .args(args)
        .arg(schedule)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (text(&o), o.status.code())
}

#[test]
fn debug_stops_at_the_crashing_step_in_gdb() {
    if !have_gdb() {
        eprintln!("skipped: gdb is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let saved = crash_schedule();
    let steps =
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&saved).unwrap())
            .unwrap()["steps"]
            .as_array()
            .unwrap()
            .len();
    let (out, code) = debug(
        &saved,
        &["--ex", "info threads", "--ex", "continue", "--ex", "bt"],
    );
    assert_eq!(code, Some(0), "{out}");
    let last = steps - 1;
    assert!(
        out.contains(&format!(
            "poscheck debug: stopping at step {last}: thread 0.1 read(g_log)"
        )),
        "{out}"
    );
    // gdb stopped in pos_debug_stop, in the writer's re-read (line 38), before the crash.
    let hit = out
        .find("hit Breakpoint 1, pos::conn::pos_debug_stop")
        .unwrap_or_else(|| panic!("{out}"));
    let segv = out
        .find("received signal SIGSEGV")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(hit < segv, "{out}");
    assert!(out[hit..segv].contains("in writer"), "{out}");
    assert!(out[hit..segv].contains("atomicity_violation.c:38"), "{out}");
    // The other controlled threads wait in libpos (a read of their connection).
    assert!(out[hit..segv].contains("libc_read"), "{out}");
    // `continue`: the granted re-read returns NULL and the writer dereferences it.
    assert!(out[segv..].contains("atomicity_violation.c:39"), "{out}");
    assert!(out.contains("poscheck debug: gdb ended"), "{out}");
}

#[test]
fn debug_stops_at_a_chosen_step_and_refuses_bad_ones() {
    if !have_gdb() {
        eprintln!("skipped: gdb is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let saved = crash_schedule();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let steps = v["steps"].as_array().unwrap();
    // The first step of thread 0.1 after its start (its first read of g_log).
    let n = steps
        .iter()
        .position(|s| s["thread"] == "0.1" && s["op"].as_str().unwrap().starts_with("read"))
        .unwrap();
    let (out, code) = debug(&saved, &["--step", &n.to_string()]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!("stopping at step {n}: thread 0.1 read(g_log)")),
        "{out}"
    );
    let hit = out
        .find("hit Breakpoint 1")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(out[hit..].contains("atomicity_violation.c:36"), "{out}");
    // Batch mode ends gdb after the commands: no crash was run into.
    assert!(!out.contains("SIGSEGV"), "{out}");
    // A step past the end: one line, non-zero, no gdb.
    let o = poscheck(&[
        "debug",
        "--batch",
        "--step",
        "100000",
        saved.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--step 100000"), "{err}");
}

#[test]
fn after_a_deadlock_gdb_gets_the_program_back() {
    if !have_gdb() {
        eprintln!("skipped: gdb is not installed (scripts/install-deps.sh installs it)");
        return;
    }
    let saved = first_bug("lost_wakeup", "sync", "deadlock");
    // `continue` past the last step: the coordinator sees the deadlock, interrupts the
    // program, and gdb (in batch mode) shows the threads, each waiting in libpos, and ends.
    let (out, code) = debug(&saved, &["--ex", "continue", "--ex", "info threads"]);
    assert_eq!(code, Some(0), "{out}");
    // (The verdict is poscheck's, on stderr; gdb's report of the interrupt is on stdout.)
    assert!(
        out.contains("poscheck debug: the run ends here: deadlock"),
        "{out}"
    );
    let sigint = out
        .find("received signal SIGINT")
        .unwrap_or_else(|| panic!("{out}"));
    // Each waits for its grant in libpos: in the reply's read, or still in the short
    // yielding spin before it (when the interrupt comes right after its post, under load).
    let waiting = out[sigint..].matches("libc_read").count()
        + out[sigint..].matches("sched_yield ()").count();
    assert!(waiting >= 2, "{out}");
    assert!(out.contains("poscheck debug: gdb ended"), "{out}");
}
