//! The atomics corpus (`tests/corpus/atomics/`): C11 `<stdatomic.h>` (gcc and clang-14) and
//! C++ `std::atomic` (g++ and clang++-14) programs built with `poscheck cc` / `poscheck c++`,
//! using relaxed, acquire, release, acq_rel and seq_cst operations, exchanges, fetch-ops and
//! compare-exchanges with distinct success and failure orders, and legacy `__sync_*`
//! builtins (gcc and clang-14).
//!
//! Correct programs are never flagged in 100 tries of rw, pct3, pos and auto (no run takes the
//! step limit). Buggy ones are found; their saved schedules record the memory order of every
//! atomic step (`atomic_load(acquire, mem[...])`, `atomic_rmw(acq_rel/relaxed, ...)` for a
//! compare-exchange) — exactly the orders the source asks for — and replay 20 of 20 times.
//! Replay reads the orders back: a schedule whose recorded order differs from the program's
//! diverges at that step, and one saved without orders (older files) still replays.

use crate::common;

use common::TRIES;

use common::{outcome_count, poscheck, require_libpos, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/atomics")
}

/// Build `file` with `poscheck cc` (C) or `poscheck c++` (C++) over `compiler`.
fn build(dir: &Path, compiler: &str, file: &str) -> PathBuf {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}_{}", compiler.replace('+', "x")));
    common::compile_instrumented(compiler, "-std=c++17", &out, &corpus().join(file));
    out
}

fn compilers(file: &str) -> [&'static str; 2] {
    if file.ends_with(".cpp") {
        ["g++", "clang++-14"]
    } else {
        ["gcc", "clang-14"]
    }
}

const ORDERS: &[&str] = &[
    "relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst",
];

/// The `name(orders` head of an atomic step's operation (`atomic_rmw(acq_rel/relaxed`), after
/// checking the step is well formed: `name(orders, mem[...])` with known orders.
fn atomic_head(op: &str) -> Option<String> {
    if !op.starts_with("atomic_") {
        return None;
    }
    let (head, obj) = op
        .split_once(", ")
        .unwrap_or_else(|| panic!("no order in {op}"));
    assert!(obj.starts_with("mem[") && obj.ends_with("])"), "{op}");
    let (_, orders) = head.split_once('(').unwrap();
    for o in orders.split('/') {
        assert!(ORDERS.contains(&o), "bad order {o:?} in {op}");
    }
    Some(head.to_string())
}

#[test]
fn correct_programs_with_ordered_atomics_are_never_flagged() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for file in ["ok_c11_stats.c", "ok_cxx_init_once.cpp"] {
        for cc in compilers(file) {
            let prog = build(dir.path(), cc, file);
            for algo in common::ALGOS {
                let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
                let what = format!("{cc} {file} under {algo}: {p}\n{}", text(&o));
                assert_eq!(p["points"], "auto", "{what}");
                assert_eq!(outcome_count(&p, "ok"), u64::from(TRIES), "{what}");
                assert_eq!(p["step_limits"].as_u64().unwrap_or(0), 0, "{what}");
                // The atomics are points: more steps than the thread starts and exits.
                assert!(p["mean_steps"].as_f64().unwrap() > 20.0, "{what}");
            }
        }
    }
}

/// The `name(orders` heads of `bug_c11_stats.c`'s atomics.
const C11_STATS: &[&str] = &[
    "atomic_load(acquire",
    "atomic_store(release",
    "atomic_rmw(relaxed",
    "atomic_rmw(acq_rel/acquire",
    "atomic_load(seq_cst",
];

/// The same for `bug_cxx_init_once.cpp`.
const CXX_INIT_ONCE: &[&str] = &[
    "atomic_load(acquire",
    "atomic_rmw(relaxed",
    "atomic_store(release",
    "atomic_rmw(acq_rel/relaxed",
    "atomic_rmw(seq_cst",
    "atomic_load(seq_cst",
];

/// Buggy programs: compiler, file, and the `name(orders` heads its saved schedules show
/// (all of them, and no other). `__sync_lock_test_and_set` is an acquire barrier in gcc
/// (which flags it as a `__sync` order, a bit libpos drops) and seq_cst in clang-14.
const BUGGY: &[(&str, &str, &[&str])] = &[
    ("gcc", "bug_c11_stats.c", C11_STATS),
    ("clang-14", "bug_c11_stats.c", C11_STATS),
    ("g++", "bug_cxx_init_once.cpp", CXX_INIT_ONCE),
    ("clang++-14", "bug_cxx_init_once.cpp", CXX_INIT_ONCE),
    (
        "gcc",
        "bug_sync_trylock.c",
        &[
            "atomic_rmw(seq_cst",
            "atomic_rmw(acquire",
            "atomic_load(relaxed",
            "atomic_store(relaxed",
            "atomic_store(release",
            "atomic_load(seq_cst",
        ],
    ),
    (
        "clang-14",
        "bug_sync_trylock.c",
        &[
            "atomic_rmw(seq_cst",
            "atomic_load(relaxed",
            "atomic_store(relaxed",
            "atomic_store(release",
            "atomic_load(seq_cst",
        ],
    ),
];

#[test]
fn buggy_programs_are_found_and_their_schedules_record_the_orders() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for (cc, file, heads) in BUGGY {
        let prog = build(dir.path(), cc, file);
        for algo in common::ALGOS {
            let (p, o) = common::run_default(dir.path(), &prog, algo, &[], |_| {});
            let what = format!("{cc} {file} under {algo}: {p}\n{}", text(&o));
            assert!(outcome_count(&p, "assert") > 0, "{what}");
            assert_eq!(
                outcome_count(&p, "assert") + outcome_count(&p, "ok"),
                u64::from(TRIES),
                "{what}"
            );
            let schedule = p["schedule"].as_str().expect("a saved schedule");
            let saved: Value =
                serde_json::from_str(&std::fs::read_to_string(schedule).unwrap()).unwrap();
            let seen: Vec<String> = saved["steps"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|s| atomic_head(s["op"].as_str().unwrap()))
                .collect();
            for h in *heads {
                assert!(seen.iter().any(|s| s == h), "{h} not in {seen:?}: {what}");
            }
            // Nothing but what the source asks for (consume is never used).
            for s in &seen {
                assert!(heads.contains(&s.as_str()), "unexpected {s}: {what}");
            }
            let r = poscheck(&["replay", "--times", "20", schedule]);
            assert!(
                String::from_utf8_lossy(&r.stdout)
                    .contains("recorded outcome assert: reproduced 20 of 20 times"),
                "{what}\n{}",
                text(&r)
            );
        }
    }
}

#[test]
fn replay_checks_recorded_orders_and_accepts_schedules_without_them() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let prog = build(dir.path(), "gcc", "bug_c11_stats.c");
    let (p, o) = common::run_default(dir.path(), &prog, "pos", &[], |_| {});
    let schedule = p["schedule"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", text(&o)));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(schedule).unwrap()).unwrap();
    let rewrite = |f: &dyn Fn(&str) -> String, name: &str| {
        let mut v = saved.clone();
        for s in v["steps"].as_array_mut().unwrap() {
            let op = f(s["op"].as_str().unwrap());
            s["op"] = Value::String(op);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
        path
    };
    // As saved before orders were recorded: `atomic_load(mem[...])`.
    let old = rewrite(
        &|op| match (atomic_head(op), op.split_once(", ")) {
            (Some(_), Some((head, obj))) => {
                format!("{}({obj}", head.split('(').next().unwrap())
            }
            _ => op.to_string(),
        },
        "old.json",
    );
    assert!(std::fs::read_to_string(&old)
        .unwrap()
        .contains("\"atomic_store(mem["));
    let r = poscheck(&["replay", "--times", "20", old.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&r.stdout)
            .contains("recorded outcome assert: reproduced 20 of 20 times"),
        "{}",
        text(&r)
    );
    // The release store recorded as relaxed: the program no longer matches at that step.
    let wrong = rewrite(
        &|op| op.replace("atomic_store(release", "atomic_store(relaxed"),
        "wrong.json",
    );
    let r = poscheck(&["replay", wrong.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(err.contains("diverged from the schedule"), "{}", text(&r));
    assert!(
        err.contains("to run atomic_store(relaxed, mem["),
        "{}",
        text(&r)
    );
    assert!(err.contains("atomic_store(release, mem["), "{}", text(&r));
}

/// A reference count on a heap object, decremented then read again: both threads may free
/// it. ODPOR over memory points finds the double free (it explored 1 execution and called
/// the search complete while every run of the exploration put the object elsewhere), and
/// every execution of the exploration sees the object at one address.
#[test]
fn odpor_finds_the_double_free_of_a_heap_object() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    for cc in compilers("x.c") {
        let prog = build(dir.path(), cc, "bug_heap_refcount.c");
        let json = dir.path().join(format!("odpor_{cc}.json"));
        let o = poscheck(&[
            "explore",
            "--algo",
            "odpor",
            "--points",
            "mem",
            "--json",
            json.to_str().unwrap(),
            "--out-dir",
            dir.path().to_str().unwrap(),
            prog.to_str().unwrap(),
        ]);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(o.status.code(), Some(1), "{cc}: {}", text(&o));
        assert!(v["buggy"].as_u64().unwrap_or(0) >= 1, "{cc}: {v}");
        assert_eq!(v["blocked"].as_u64(), Some(0), "{cc}: {v}");
    }
}

/// A plain build (gcc, g++: no `poscheck cc`) of an atomics bug has no scheduling point
/// between its atomics, so no try can find it: `run` and `compare` then say that atomics and
/// shared variables were not reordered and name the programs (probe 18: five such bugs were
/// ok 50/50 in their plain builds with nothing said). The `poscheck cc` build finds the bug
/// and is not named; a program with a hit is not named either.
#[test]
fn a_plain_build_without_a_bug_says_its_atomics_were_not_reordered() {
    require_libpos();
    let dir = tempfile::tempdir().unwrap();
    let plain_c = dir.path().join("plain_stats");
    common::compile(
        "gcc",
        &["-O1", "-pthread"],
        &plain_c,
        &corpus().join("bug_c11_stats.c"),
    );
    let plain_cxx = dir.path().join("plain_once");
    common::compile(
        "g++",
        &["-std=c++17", "-O1", "-pthread"],
        &plain_cxx,
        &corpus().join("bug_cxx_init_once.cpp"),
    );
    let inst = build(dir.path(), "gcc", "bug_c11_stats.c");
    let note = "plain build(s) (plain_stats, plain_once): only synchronisation calls were \
                scheduling points, so atomics and shared variables accessed between them \
                were not reordered";
    let (p, _, o) =
        common::run_report(&plain_c, &["--algo", "pos", "--tries", "20", "--seed", "1"]);
    assert_eq!(p["hits"], 0, "{}", text(&o));
    assert!(
        text(&o).contains("note: no bug found in 1 plain build(s) (plain_stats)"),
        "{}",
        text(&o)
    );
    let out = dir.path().join("out");
    let mut all: Vec<&str> = vec![
        "compare",
        "--algos",
        "pos,rw",
        "--tries",
        "20",
        "--seed",
        "1",
        "--out-dir",
        out.to_str().unwrap(),
    ];
    let paths = [&plain_c, &plain_cxx, &inst];
    all.extend(paths.iter().map(|p| p.to_str().unwrap()));
    let o = poscheck(&all);
    let t = text(&o);
    assert!(
        t.contains(&format!("note: no bug found in 2 {note}")),
        "{t}"
    );
    assert!(!t.contains("bug_c11_stats_gcc)"), "{t}");
    // The instrumented build finds the bug in these tries; the note is only for plain ones.
    let (p, _, o) = common::run_report(&inst, &["--algo", "pos", "--tries", "20", "--seed", "1"]);
    assert!(p["hits"].as_u64().unwrap() > 0, "{}", text(&o));
    assert!(!text(&o).contains("plain build(s)"), "{}", text(&o));
}
