//! `poscheck explore` on real binaries: the execution counts of the DPOR literature's
//! benchmarks (Flanagan & Godefroid POPL'05; Abdulla et al. POPL'14) on the C programs of
//! `tests/c/explore/`, built with `poscheck cc` and explored with `--points mem` (sync-only
//! programs with `--points sync`); bugs saved as schedules that `poscheck replay` reproduces;
//! divergence reported for a program that does not follow a forced prefix.
//!
//! The expected counts are those of the scripted-thread interpreter of `pos_sched::explore`
//! (`testprog.rs`), which models the same event structure: main's create and join events,
//! each thread's exit, main's process exit.
//!
//! libpos.so must sit next to the `poscheck` binary (`cargo build -p pos-preload`, same
//! profile). Run in release: `cargo test --release -p poscheck --test end_to_end --
//! explore::`; the large sizes are `#[ignore]`d (`-- --ignored`).

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use crate::common;

use common::{text, POSCHECK};

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/c/explore")
}

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("explore")
}

/// `tests/c/explore/NAME.c` built with `poscheck cc -O1`, once per test binary.
fn program(name: &str) -> PathBuf {
    build(&sources(), name)
}

/// `benchmarks/src/NAME.c` (the suite) built with `poscheck cc -O1`.
fn suite_program(name: &str) -> PathBuf {
    build(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks/src"),
        name,
    )
}

/// `DIR/NAME.c` built with `poscheck cc -O1`, once per test binary.
fn build(src_dir: &Path, name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(HashMap::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    assert!(lib.is_file(), "{} is missing", lib.display());
    let dir = scratch().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(name);
    let src = src_dir.join(format!("{name}.c"));
    let o = Command::new(POSCHECK)
        .args(["cc", "-O1", "-pthread", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .expect("cannot run poscheck cc");
    assert!(o.status.success(), "poscheck cc {name}: {}", text(&o));
    built.insert(name.to_string(), out.clone());
    out
}

/// The result of one `poscheck explore` (its JSON report and output).
struct Explored {
    json: Value,
    out: Output,
}

impl Explored {
    fn count(&self, key: &str) -> u64 {
        self.json[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} missing: {}", self.json))
    }
    fn executions(&self) -> u64 {
        self.count("executions")
    }
    fn blocked(&self) -> u64 {
        self.count("blocked")
    }
    fn code(&self) -> Option<i32> {
        self.out.status.code()
    }
}

/// `poscheck explore --algo ALGO --points POINTS [extra] PROG -- ARGS` with a JSON report.
fn explore(name: &str, args: &[&str], algo: &str, points: &str, extra: &[&str]) -> Explored {
    explore_prog(&program(name), name, args, algo, points, extra)
}

fn explore_prog(
    prog: &Path,
    name: &str,
    args: &[&str],
    algo: &str,
    points: &str,
    extra: &[&str],
) -> Explored {
    let dir = scratch().join("runs");
    std::fs::create_dir_all(&dir).unwrap();
    let tag = format!("{name}-{}-{algo}-{points}", args.join("_"));
    let json = dir.join(format!("{tag}.json"));
    let out = Command::new(POSCHECK)
        .args(["explore", "--algo", algo, "--points", points, "--json"])
        .arg(&json)
        .arg("--out-dir")
        .arg(dir.join(format!("{tag}-out")))
        .args(extra)
        .arg(prog)
        .arg("--")
        .args(args)
        .output()
        .expect("cannot run poscheck explore");
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "explore {tag}: exit {code:?}\n{}",
        text(&out)
    );
    let doc = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{tag}: no JSON report ({e})\n{}", text(&out)));
    let json: Value = serde_json::from_str(&doc).unwrap();
    eprintln!(
        "{tag}: {} executions, {} blocked, {} buggy, {:.1} executions/s",
        json["executions"], json["blocked"], json["buggy"], json["executions_per_s"]
    );
    Explored { json, out }
}

/// A complete, bug-free exploration: (executions, blocked).
fn clean(name: &str, n: usize, algo: &str) -> (u64, u64) {
    let n = n.to_string();
    let e = explore(name, &[n.as_str()], algo, "mem", &[]);
    assert_eq!(e.code(), Some(0), "{name}({n}) {algo}: {}", text(&e.out));
    assert_eq!(e.json["complete"], true, "{name}({n}) {algo}");
    assert_eq!(e.count("buggy"), 0, "{name}({n}) {algo}");
    (e.executions(), e.blocked())
}

/// ODPOR explores exactly `want` executions with no blocked one; Source-DPOR the same
/// number of complete executions (plus sleep-set-blocked ones, which it reports).
fn check_dpor_counts(name: &str, sizes: &[(usize, u64)]) {
    for &(n, want) in sizes {
        assert_eq!(clean(name, n, "odpor"), (want, 0), "odpor {name}({n})");
        let (ex, blocked) = clean(name, n, "dpor");
        assert_eq!(ex, want, "dpor {name}({n}) ({blocked} blocked)");
    }
}

#[test]
fn readers_explore_two_to_the_n() {
    check_dpor_counts("readers", &[(3, 8), (5, 32), (8, 256)]);
}

#[test]
fn lastzero_matches_the_literature() {
    check_dpor_counts("lastzero", &[(5, 64), (8, 704)]);
}

#[test]
fn indexer_matches_the_literature() {
    check_dpor_counts("indexer", &[(11, 1), (12, 8), (13, 64)]);
}

#[test]
fn filesystem_matches_the_literature() {
    check_dpor_counts("filesystem", &[(13, 1), (14, 2), (16, 8)]);
}

#[test]
#[ignore = "large sizes: cargo test --release -p poscheck --test end_to_end -- --ignored explore::"]
fn large_sizes() {
    assert_eq!(clean("lastzero", 10, "odpor"), (3328, 0));
    assert_eq!(clean("indexer", 14, "odpor"), (512, 0));
    assert_eq!(clean("filesystem", 18, "odpor"), (32, 0));
}

/// Number of schedules of two_independent(n) as a real program: main creates t1 and t2, joins
/// t1 then t2 and exits; each thread does its start (it stays stopped at its entry until
/// that is granted), n writes and its exit. Counted over the states (main's next event, t1's
/// events done, t2's events done). With the two threads alone (the paper's setting) this is
/// C(2n, n); main's events and the starts are scheduling points too, so more.
fn schedules_of_two_independent(n: usize) -> u64 {
    fn go(
        m: usize,
        a: usize,
        b: usize,
        n: usize,
        memo: &mut HashMap<(usize, usize, usize), u64>,
    ) -> u64 {
        // main: 0 create t1, 1 create t2, 2 join t1, 3 join t2, 4 process exit, 5 done.
        if m == 5 {
            return 1;
        }
        if let Some(&c) = memo.get(&(m, a, b)) {
            return c;
        }
        let main_enabled = match m {
            2 => a == n + 2,
            3 => b == n + 2,
            _ => true,
        };
        let mut c = 0;
        if main_enabled {
            c += go(m + 1, a, b, n, memo);
        }
        if m >= 1 && a <= n + 1 {
            c += go(m, a + 1, b, n, memo);
        }
        if m >= 2 && b <= n + 1 {
            c += go(m, a, b + 1, n, memo);
        }
        memo.insert((m, a, b), c);
        c
    }
    go(0, 0, 0, n, &mut HashMap::new())
}

fn binom(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn the_schedule_count_of_two_independent_threads_extends_the_binomial() {
    // Sanity of the counting itself: with main's events fixed at the ends (creates first,
    // joins and exit last) the threads' 2 starts, 2n writes and 2 exits interleave in
    // C(2n+4, n+2) ways, a lower bound of the real count.
    for n in 1..=5 {
        let c = schedules_of_two_independent(n);
        assert!(c > binom(2 * n as u64 + 4, n as u64 + 2), "n = {n}: {c}");
    }
    // (19, 69, 251, 923, 3431 before the starts were scheduling points: a start adds one
    // event to each thread, as one more write would.)
    assert_eq!(
        (1..=5)
            .map(schedules_of_two_independent)
            .collect::<Vec<_>>(),
        [69, 251, 923, 3431, 12869]
    );
}

#[test]
fn dfs_explores_every_schedule_of_two_independent_threads() {
    for n in 1..=3 {
        assert_eq!(
            clean("two_independent", n, "dfs"),
            (schedules_of_two_independent(n), 0),
            "n = {n}"
        );
    }
    // Partial-order reduction: the writes commute, one execution is enough.
    for algo in ["dpor", "odpor"] {
        assert_eq!(clean("two_independent", 3, algo), (1, 0), "{algo}");
    }
}

#[test]
#[ignore = "large sizes: cargo test --release -p poscheck --test end_to_end -- --ignored explore::"]
fn dfs_two_independent_large() {
    for n in 4..=5 {
        assert_eq!(
            clean("two_independent", n, "dfs").0,
            schedules_of_two_independent(n)
        );
    }
}

/// rt and odpor with `--points sync`: (odpor executions, rt executions, rt peak pending).
fn rt_and_odpor(name: &str, args: &[&str]) -> (u64, u64, u64) {
    let od = explore(name, args, "odpor", "sync", &[]);
    let rt = explore(name, args, "rt", "sync", &[]);
    for e in [&od, &rt] {
        assert_eq!(e.json["complete"], true, "{name}: {}", text(&e.out));
        assert_eq!(e.blocked(), 0, "{name}");
        // Complete over synchronisation only: said so.
        assert!(
            text(&e.out).contains("points sync: the exploration covers"),
            "{name}"
        );
    }
    (
        od.executions(),
        rt.executions(),
        rt.count("rt_peak_pending"),
    )
}

#[test]
fn rt_matches_odpor_on_dining_philosophers() {
    for (n, want) in [(3usize, 7u64), (4, 15), (5, 31)] {
        let arg = n.to_string();
        let (od, rt, peak) = rt_and_odpor("philosophers", &[arg.as_str()]);
        assert_eq!((od, rt), (want, want), "philosophers({n})");
        // No history: what rt keeps is the pending race variants, far fewer than the runs.
        assert!(peak < want, "philosophers({n}): peak pending {peak}");
    }
}

#[test]
fn rt_matches_odpor_on_readers_writers_with_condvars() {
    let (od, rt, _) = rt_and_odpor("rw_condvar", &[]);
    assert_eq!((od, rt), (62, 62));
}

/// Semaphores are objects whose operations are totally ordered in rt (each receives the
/// previous one), so rt explores the same 148 executions as odpor (the interpreter's figure
/// for the same structure, sched/src/explore/tests.rs).
#[test]
fn rt_matches_odpor_on_a_semaphore_bounded_buffer() {
    let (od, rt, _) = rt_and_odpor("bounded_buffer_sem", &[]);
    assert_eq!((od, rt), (148, 148));
}

#[test]
fn a_deadlock_found_by_odpor_replays() {
    let e = explore("philosophers", &["3"], "odpor", "sync", &[]);
    assert_eq!(e.code(), Some(1), "{}", text(&e.out));
    assert_eq!(e.count("buggy"), 1);
    let bug = &e.json["bugs"][0];
    assert_eq!(bug["kind"], "deadlock", "{bug}");
    let file = bug["schedule"].as_str().unwrap();
    let o = Command::new(POSCHECK)
        .args(["replay", "--times", "3", file])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("reproduced 3 of 3"), "{t}");
    assert!(
        text(&e.out).contains("executions explored: 7"),
        "{}",
        text(&e.out)
    );
}

#[test]
fn limits_cut_the_exploration_and_say_so() {
    let e = explore(
        "lastzero",
        &["5"],
        "odpor",
        "mem",
        &["--max-executions", "10"],
    );
    assert_eq!(e.code(), Some(0));
    assert_eq!(e.json["complete"], false);
    assert_eq!(e.executions() + e.blocked(), 10);
    assert!(
        text(&e.out).contains("exploration: incomplete"),
        "{}",
        text(&e.out)
    );
}

/// Explore's step limit is 10,000 unless `--max-steps` is given, whatever its value: an
/// explicit `--max-steps 1000000` (the other commands' default) was taken for "not given"
/// and cut a 12,000-step run too (probe 18).
#[test]
fn an_explicit_max_steps_is_honoured_even_at_the_run_default() {
    let cut = |extra: &[&str]| {
        let mut args = vec!["--max-executions", "1"];
        args.extend_from_slice(extra);
        let e = explore("long_run", &[], "odpor", "sync", &args);
        e.count("step_limits")
    };
    assert_eq!(cut(&[]), 1, "10,000 steps by default");
    assert_eq!(cut(&["--max-steps", "1000000"]), 0);
}

#[test]
fn a_program_that_leaves_the_forced_prefix_is_reported_as_diverged() {
    let prog = program("nondeterministic");
    let dir = scratch().join("nondet");
    std::fs::create_dir_all(&dir).unwrap();
    let flip = dir.join("counter");
    let _ = std::fs::remove_file(&flip);
    let o = Command::new(POSCHECK)
        .args(["explore", "--algo", "odpor", "--points", "mem", "--out-dir"])
        .arg(dir.join("out"))
        .arg(&prog)
        .env("EXPLORE_FLIP", &flip)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("did not follow a forced schedule prefix"), "{t}");
    assert!(t.contains("exploration: incomplete (divergence"), "{t}");
}

/// `poscheck replay --times 2 FILE` reproduces the recorded outcome `kind`.
fn assert_replays(file: &str, kind: &str) {
    let o = Command::new(POSCHECK)
        .args(["replay", "--times", "2", file])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("recorded outcome {kind}: reproduced 2 of 2")),
        "{t}"
    );
}

/// Small buggy programs of the benchmark suite (benchmarks/manifest.toml, with their
/// manifest's points mode): odpor finds each bug, of the manifest's kind, and the saved
/// schedule replays it. order_violation's bug is a data race on the published pointer:
/// with sync points the worker's start is independent of everything main does, so odpor
/// rightly explores one execution (the random strategies still order the start before the
/// publication, hence the manifest's `sync`), and it is explored at its racing accesses.
#[test]
fn odpor_finds_the_bugs_of_small_suite_programs_with_replayable_schedules() {
    let progs = [
        ("order_violation", "races", "crash"),
        ("account", "sync", "assert"),
        ("twostage", "sync", "assert"),
        ("deadlock_2", "sync", "deadlock"),
        ("stack_bad", "sync", "assert"),
        ("atomicity_violation", "races", "crash"),
        ("account_rmw", "races", "assert"),
    ];
    for (name, points, kind) in progs {
        let e = explore_prog(&suite_program(name), name, &[], "odpor", points, &[]);
        assert_eq!(e.code(), Some(1), "{name}: {}", text(&e.out));
        assert_eq!(e.json["complete"], true, "{name}");
        assert_eq!(
            text(&e.out).contains("points sync: the exploration covers"),
            points == "sync",
            "{name}"
        );
        let bug = e.json["bugs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["kind"] == kind)
            .unwrap_or_else(|| panic!("{name}: no {kind} among {}", e.json["bugs"]));
        assert_replays(bug["schedule"].as_str().unwrap(), kind);
    }
}

/// ipb and idb report the bound at which a suite bug first appears, and the bug's schedule
/// (explored at that bound) replays.
#[test]
fn bounded_search_reports_the_first_bug_bound_of_suite_programs() {
    for (name, points) in [("account_rmw", "races"), ("deadlock_2", "sync")] {
        for algo in ["ipb", "idb"] {
            let e = explore_prog(
                &suite_program(name),
                name,
                &[],
                algo,
                points,
                &["--bound", "2"],
            );
            assert_eq!(e.code(), Some(1), "{name} {algo}: {}", text(&e.out));
            let first = e.json["first_bug_bound"]
                .as_u64()
                .unwrap_or_else(|| panic!("{name} {algo}: {}", e.json));
            assert!(first <= 2, "{name} {algo}: {first}");
            let bug = &e.json["bugs"][0];
            assert_eq!(bug["bound"].as_u64(), Some(first), "{name} {algo}: {bug}");
            assert!(
                text(&e.out).contains(&format!("first bug at bound {first}")),
                "{}",
                text(&e.out)
            );
            let kind = bug["kind"].as_str().unwrap().to_string();
            assert_replays(bug["schedule"].as_str().unwrap(), &kind);
        }
    }
}

/// The suite bugs odpor used to miss: a semaphore used as a mutex but initialised to 2 (the
/// feasibility replays need the real `sem_init` value, not one inferred from a run), a
/// read-then-write rwlock "upgrade" (read sections commute; a blocked rwlock acquisition
/// races with the holder's acquisition), and two spin loops on `sched_yield` (the default
/// continuation must be fair, or the first run is a step-limited livelock). Each is found,
/// with no divergence, and its schedule replays; the spin-loop programs have unboundedly
/// many traces (one per number of spins), so they run under a small --max-executions.
#[test]
fn odpor_finds_the_semaphore_rwlock_and_spin_loop_bugs_of_the_suite() {
    let progs: [(&str, &str, &[&str], bool); 4] = [
        ("sem_wrong_init", "sync", &[], true),
        ("rwlock_upgrade", "sync", &[], true),
        ("queue_bad", "mem", &["--max-executions", "20"], false),
        ("token_ring", "races", &["--max-executions", "5"], false),
    ];
    for (name, points, extra, complete) in progs {
        let algos: &[&str] = if complete {
            &["odpor", "dpor"]
        } else {
            &["odpor"]
        };
        for &algo in algos {
            let e = explore_prog(&suite_program(name), name, &[], algo, points, extra);
            let out = text(&e.out);
            assert_eq!(e.code(), Some(1), "{name} {algo}: {out}");
            assert_eq!(e.json["diverged"], Value::Null, "{name} {algo}: {out}");
            assert_eq!(e.json["complete"], complete, "{name} {algo}: {out}");
            let bug = &e.json["bugs"][0];
            assert_eq!(bug["kind"], "assert", "{name} {algo}: {bug}");
            assert!(
                !bug["description"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("step limit"),
                "{name} {algo}: {bug}"
            );
            assert_replays(bug["schedule"].as_str().unwrap(), "assert");
        }
    }
}

/// `--algo r4 --bound k` (conflict-reversal bounding over executed traces): the lost update
/// of account_rmw is one reversal of the first run away, found at bound 1 with its depth in
/// the report, and the saved schedule replays 100 times of 100; a bug-free program gives no
/// bug at bound 2, and the JSON has the executions per depth.
#[test]
fn r4_finds_a_one_reversal_bug_and_nothing_in_a_correct_program() {
    let name = "account_rmw";
    let e = explore_prog(
        &suite_program(name),
        name,
        &[],
        "r4",
        "races",
        &["--bound", "1"],
    );
    let out = text(&e.out);
    assert_eq!(e.code(), Some(1), "{out}");
    assert_eq!(e.json["bound"].as_u64(), Some(1), "{}", e.json);
    assert_eq!(e.json["first_bug_bound"].as_u64(), Some(1), "{}", e.json);
    let per = e.json["executions_per_bound"].as_array().unwrap();
    assert_eq!(per.len(), 2, "{}", e.json);
    assert_eq!(per[0].as_u64(), Some(1), "one run at depth 0: {}", e.json);
    assert!(
        out.contains("r4: ") && out.contains("first bug at bound 1"),
        "{out}"
    );
    let bug = &e.json["bugs"][0];
    assert_eq!(
        (bug["kind"].as_str(), bug["bound"].as_u64()),
        (Some("assert"), Some(1))
    );
    let o = Command::new(POSCHECK)
        .args(["replay", "--times", "20"])
        .arg(bug["schedule"].as_str().unwrap())
        .output()
        .unwrap();
    assert!(
        text(&o).contains("recorded outcome assert: reproduced 20 of 20"),
        "{}",
        text(&o)
    );

    let name = "mutex_counter_ok";
    let e = explore_prog(
        &suite_program(name),
        name,
        &[],
        "r4",
        "sync",
        &["--bound", "2", "--max-executions", "500"],
    );
    assert_eq!(e.code(), Some(0), "{}", text(&e.out));
    assert_eq!(e.json["buggy"].as_u64(), Some(0));
    assert!(e.executions() > 1, "{}", e.json);
    assert!(e.json["r4"]["divergent"].is_u64(), "{}", e.json);
}

/// `poscheck replay --times N FILE` reproduces the recorded outcome `kind` N times of N.
fn assert_replays_n(file: &str, kind: &str, n: u32) {
    let o = Command::new(POSCHECK)
        .args(["replay", "--times", &n.to_string(), file])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("recorded outcome {kind}: reproduced {n} of {n}")),
        "{t}"
    );
}

/// `--algo hitting --depth 3 --prune races` on two suite programs, one explored at its
/// racing accesses (reorder_3: the checker must run between one setter's writes) and one at
/// synchronisation points (twostage: the order of critical sections): the family, its
/// executions (at most 2r + 2, r the racing events), the bug, and its saved schedule
/// replaying 100 times of 100. `--from` that schedule starts the family from the buggy run.
#[test]
fn hitting_finds_suite_bugs_with_replayable_schedules() {
    for (name, points) in [("reorder_3", "races"), ("twostage", "sync")] {
        let e = explore_prog(
            &suite_program(name),
            name,
            &[],
            "hitting",
            points,
            &["--depth", "3", "--prune", "races", "--verify"],
        );
        let out = text(&e.out);
        assert_eq!(e.code(), Some(1), "{name}: {out}");
        assert_eq!(e.json["complete"], true, "{name}: {out}");
        let f = &e.json["family"];
        let r = f["ordered"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {f}"));
        assert!(r >= 3, "{name}: {f}");
        assert_eq!(f["verified"], true, "{name}: {f}");
        assert_eq!(f["depth"], 3);
        assert_eq!(f["prune"], "races");
        assert_eq!(
            e.executions(),
            f["size"].as_u64().unwrap() + 1,
            "{name}: {out}"
        );
        assert!(e.executions() <= 2 * r + 2, "{name}: {out}");
        assert!(e.json["divergent"].is_u64() && e.json["skipped_events"].is_u64());
        assert!(out.contains("family: "), "{out}");
        assert!(out.contains("divergent executions"), "{out}");
        let bug = &e.json["bugs"][0];
        assert_eq!(bug["kind"], "assert", "{name}: {bug}");
        let file = bug["schedule"].as_str().unwrap().to_string();
        assert_replays_n(&file, "assert", 100);

        let again = explore_prog(
            &suite_program(name),
            &format!("{name}-from"),
            &[],
            "hitting",
            points,
            &["--from", &file],
        );
        assert_eq!(again.code(), Some(1), "{}", text(&again.out));
        assert_eq!(again.json["family"]["from"].as_str(), Some(file.as_str()));
        assert_eq!(
            again.json["first_bug_execution"],
            1,
            "the recorded run is the buggy one: {}",
            text(&again.out)
        );
    }
}

/// queue_bad's consumers read `count` without the lock, which is no scheduling point under
/// `--points sync`: reordering a consumer's `sched_yield` changes what it does next. With
/// `--strict` odpor stops at that divergence; by default with sync points (as with
/// `--approximate`) the exploration goes on, ends by itself (or at its budget) and reports
/// the divergent executions.
#[test]
fn approximate_odpor_goes_on_past_queue_bads_divergence() {
    let prog = suite_program("queue_bad");
    let e = explore_prog(
        &prog,
        "queue_bad-approx",
        &[],
        "odpor",
        "sync",
        &["--max-executions", "500"],
    );
    let out = text(&e.out);
    assert_eq!(e.code(), Some(1), "{out}");
    assert_eq!(e.json["diverged"], Value::Null, "{out}");
    assert!(e.count("divergent") >= 1, "{out}");
    assert!(e.count("skipped_events") >= e.count("divergent"), "{out}");
    assert!(e.executions() > 2, "{out}");
    let stopped = e.json["stopped"].as_str().unwrap_or("");
    assert!(
        e.json["complete"] == true || stopped.starts_with("limit"),
        "{out}"
    );
    assert!(out.contains("divergent executions"), "{out}");
    assert!(out.contains("did not follow their forced prefix"), "{out}");
    assert_eq!(e.json["approximate"], true, "{out}");
    // No run is cut by the step limit (a spinning consumer whose producer sleeps).
    for b in e.json["bugs"].as_array().unwrap() {
        assert_eq!(b["kind"], "assert", "{b}");
    }
    assert_replays(e.json["bugs"][0]["schedule"].as_str().unwrap(), "assert");
    // With --strict: the divergence ends it, an error.
    let o = Command::new(POSCHECK)
        .args([
            "explore",
            "--algo",
            "odpor",
            "--strict",
            "--points",
            "sync",
            "--out-dir",
        ])
        .arg(scratch().join("runs").join("queue_bad-exact-out"))
        .arg(&prog)
        .output()
        .unwrap();
    assert!(
        text(&o).contains("exploration: incomplete (divergence"),
        "{}",
        text(&o)
    );
}

/// Flags of another algorithm, or out of range, are one-line errors; so is rt with memory
/// points (the default of an instrumented program), which it does not reorder: it ran once
/// and said complete.
#[test]
fn hitting_and_approximate_flags_are_checked() {
    let prog = suite_program("reorder_3");
    let cases: [(&[&str], &str); 10] = [
        (
            &["--algo", "rt"],
            "--algo rt explores synchronisation only (memory accesses are not reordered): use \
             --points sync, or odpor or dpor for races points",
        ),
        (
            &["--algo", "rt", "--points", "mem"],
            "or odpor or dpor for mem points",
        ),
        (
            &["--algo", "odpor", "--depth", "3"],
            "--depth applies to --algo hitting only",
        ),
        (
            &["--algo", "rt", "--prune", "none"],
            "--prune applies to --algo hitting only",
        ),
        (
            &["--algo", "dpor", "--verify"],
            "--verify applies to --algo hitting only",
        ),
        (
            &["--algo", "hitting", "--depth", "0"],
            "--depth must be at least 1",
        ),
        (
            &["--algo", "dfs", "--approximate"],
            "--approximate applies to --algo odpor",
        ),
        (
            &["--algo", "ipb", "--strict"],
            "--strict applies to --algo odpor",
        ),
        (
            &["--algo", "odpor", "--strict", "--approximate"],
            "cannot be used with",
        ),
        (&["--algo", "hitting", "--prune", "some"], "unknown --prune"),
    ];
    for (args, want) in cases {
        let o = Command::new(POSCHECK)
            .arg("explore")
            .args(args)
            .arg(&prog)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// Reachability testing pairs a `pthread_mutex_trylock` with the release it follows, like a
/// lock: whether it gets the mutex depends on that order. Before, rt ran trylock_bad once
/// and missed its deadlock (odpor: 4 executions, 1 deadlocked); now rt = odpor on it and on
/// the correct trylock_ok.
#[test]
fn rt_reorders_trylocks_like_locks() {
    for (name, buggy) in [("trylock_bad", 1), ("trylock_ok", 0)] {
        let odpor = explore_suite(name, "odpor");
        let rt = explore_suite(name, "rt");
        assert_eq!(rt.executions(), odpor.executions(), "{name}: {}", rt.json);
        assert_eq!(rt.count("buggy"), buggy, "{name}: {}", rt.json);
        assert_eq!(odpor.count("buggy"), buggy, "{name}: {}", odpor.json);
        assert_eq!(rt.json["complete"], true, "{name}");
    }
}

fn explore_suite(name: &str, algo: &str) -> Explored {
    explore_prog(&suite_program(name), name, &[], algo, "sync", &[])
}

/// Sleeps in the workers: a sleep that waited for time to pass comes after everything that
/// ran before the clock moved. odpor, dpor and rt each explored 1 execution of both programs
/// and missed the bug; the late sleeper has 1 trace and no bug. R4 found the bugs, but its
/// runs skipped 10 events of their targets: the realised order left every sleep last.
#[test]
fn races_after_sleeps_are_explored_by_every_explorer() {
    for name in ["sleepers", "sleep_then_post"] {
        let e = explore(name, &[], "r4", "sync", &["--bound", "1"]);
        assert_eq!(e.count("buggy"), 1, "{name} r4: {}", text(&e.out));
        assert_eq!(
            e.json["r4"]["skipped_events"], 0,
            "{name} r4: {}",
            e.json["r4"]
        );
    }
    for algo in ["odpor", "dpor", "rt"] {
        for (name, args) in [("sleepers", &[][..]), ("sleep_then_post", &[][..])] {
            let e = explore(name, args, algo, "sync", &[]);
            assert_eq!(e.json["complete"], true, "{name} {algo}: {}", text(&e.out));
            assert_eq!(
                (e.executions(), e.count("buggy")),
                (2, 1),
                "{name} {algo}: {}",
                text(&e.out)
            );
        }
        let e = explore("sleepers", &["late"], algo, "sync", &[]);
        assert_eq!(e.code(), Some(0), "sleepers late {algo}: {}", text(&e.out));
        assert_eq!(
            (e.executions(), e.count("buggy")),
            (1, 0),
            "sleepers late {algo}"
        );
    }
}

/// Timed waits: the consumer's timeout and the producer's wake-up fall at the same virtual
/// time, so either takes the mutex first (`timed_poll`). odpor, dpor and rt explored 1 of the
/// 2 traces and missed the strict variant's bug. A program whose timed waits never time out
/// is explored as its untimed twin: rt explored 1 execution of `ok_timed_objects`' 768.
#[test]
fn timeouts_that_tie_with_a_wake_up_are_explored_both_ways() {
    for algo in ["odpor", "dpor", "rt"] {
        let e = explore("timed_poll", &["strict"], algo, "sync", &[]);
        assert_eq!(e.json["complete"], true, "{algo}: {}", text(&e.out));
        assert_eq!(
            (e.executions(), e.count("buggy")),
            (2, 1),
            "timed_poll strict {algo}: {}",
            text(&e.out)
        );
        let e = explore("timed_poll", &[], algo, "sync", &[]);
        assert_eq!(e.code(), Some(0), "timed_poll {algo}: {}", text(&e.out));
        assert_eq!(
            (e.executions(), e.count("buggy")),
            (2, 0),
            "timed_poll {algo}"
        );
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/vtime");
    let prog = build(&corpus, "ok_timed_objects");
    for algo in ["odpor", "rt"] {
        let e = explore_prog(&prog, "ok_timed_objects", &[], algo, "sync", &[]);
        assert_eq!(
            e.code(),
            Some(0),
            "ok_timed_objects {algo}: {}",
            text(&e.out)
        );
        assert_eq!(e.executions(), 768, "ok_timed_objects {algo}");
    }
}

/// A trylock, or a timed lock whose deadline is past, fails inside either of another thread's
/// two critical sections and gets the mutex before, between or after them: 5 traces, 2
/// failures (`trylock_sections`). rt explored 3 and neither failure: it took a failed
/// attempt for an acquisition, and had no variant in which one that got the mutex fails.
#[test]
fn a_failed_trylock_or_timed_lock_is_explored_in_every_holding() {
    for mode in ["try", "timed"] {
        for algo in ["odpor", "dpor", "rt"] {
            let e = explore("trylock_sections", &[mode, "strict"], algo, "sync", &[]);
            assert_eq!(e.json["complete"], true, "{mode} {algo}: {}", text(&e.out));
            assert_eq!(
                (e.executions(), e.count("buggy")),
                (5, 2),
                "trylock_sections {mode} strict {algo}: {}",
                text(&e.out)
            );
            let e = explore("trylock_sections", &[mode], algo, "sync", &[]);
            assert_eq!(e.code(), Some(0), "{mode} {algo}: {}", text(&e.out));
            assert_eq!(e.executions(), 5, "trylock_sections {mode} {algo}");
        }
    }
}

/// A trylock nested in a lock of a recursive mutex cannot fail and changes no ownership:
/// the second worker's lock races with the first worker's outer lock (`recursive_trylock`:
/// 2 traces, 1 buggy with `strict`). odpor and dpor explored 1 and missed the bug.
#[test]
fn a_nested_trylock_of_a_recursive_mutex_hides_no_race() {
    for algo in ["odpor", "dpor", "rt"] {
        let e = explore("recursive_trylock", &["strict"], algo, "sync", &[]);
        assert_eq!(e.json["complete"], true, "{algo}: {}", text(&e.out));
        assert_eq!(
            (e.executions(), e.count("buggy")),
            (2, 1),
            "recursive_trylock strict {algo}: {}",
            text(&e.out)
        );
    }
}

/// A correct program longer than the step limit: its executions are cut there, counted apart
/// and the exploration is not complete, but nothing is a bug (it was: `bug: step limit`, exit
/// 1, on every execution), unless `--step-limit-is-bug` says so.
#[test]
fn a_run_longer_than_the_step_limit_is_no_bug() {
    let limit = ["--max-steps", "400", "--max-executions", "3"];
    let e = explore("long_loop", &["200"], "odpor", "sync", &limit);
    let out = text(&e.out);
    assert_eq!(e.code(), Some(0), "{out}");
    assert_eq!(e.count("buggy"), 0, "{out}");
    assert!(e.count("step_limits") >= 1, "{out}");
    assert_eq!(e.json["complete"], false, "{out}");
    assert!(out.contains("executions cut by the step limit"), "{out}");
    let mut strict = limit.to_vec();
    strict.push("--step-limit-is-bug");
    let e = explore("long_loop", &["200"], "odpor", "sync", &strict);
    assert_eq!(e.code(), Some(1), "{}", text(&e.out));
    assert!(e.count("buggy") >= 1, "{}", text(&e.out));
    let e = explore(
        "long_loop",
        &["1"],
        "odpor",
        "sync",
        &["--max-steps", "400"],
    );
    assert_eq!(e.code(), Some(0), "{}", text(&e.out));
    assert_eq!(
        (e.count("step_limits"), e.json["complete"].clone()),
        (0, Value::Bool(true))
    );
}
