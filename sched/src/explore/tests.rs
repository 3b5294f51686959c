//! Exploration counts on the classic benchmarks of the DPOR literature (Flanagan & Godefroid
//! POPL'05; Abdulla et al. POPL'14), run through the scripted-thread interpreter.

use super::testprog::{self, Interp, Prog};
use super::{explore, Algo, Limits, Report};

fn run(algo: Algo, prog: Prog) -> Report {
    let mut exec = Interp::new(prog);
    explore(algo, &mut exec, Limits::default())
}

fn counts(algo: Algo, prog: Prog) -> (u64, u64) {
    let r = run(algo, prog);
    assert!(r.complete, "{r:?}");
    assert!(r.diverged.is_none(), "{r:?}");
    assert_eq!(r.buggy, 0, "{:?}", r.bugs.first());
    (r.executions, r.blocked)
}

fn binom(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn dfs_explores_every_interleaving_of_two_independent_threads() {
    for n in 1..=5 {
        let (ex, blocked) = counts(Algo::Dfs, testprog::independent_pair(n));
        assert_eq!((ex, blocked), (binom(2 * n as u64, n as u64), 0), "n = {n}");
    }
}

#[test]
fn dpor_reduces_two_independent_threads_to_one_run() {
    for algo in [Algo::Dpor, Algo::Odpor] {
        assert_eq!(counts(algo, testprog::independent_pair(4)), (1, 0));
    }
}

#[test]
fn readers_explore_two_to_the_n() {
    for n in [3usize, 5, 8] {
        assert_eq!(
            counts(Algo::Odpor, testprog::readers(n)),
            (1 << n, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::readers(n)).0,
            1 << n,
            "dpor n={n}"
        );
    }
}

#[test]
fn lastzero() {
    for (n, want) in [(5usize, 64u64), (8, 704)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::lastzero(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::lastzero(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
fn indexer() {
    for (n, want) in [(11usize, 1u64), (12, 8), (13, 64)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::indexer(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::indexer(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
fn filesystem() {
    for (n, want) in [(13usize, 1u64), (14, 2), (16, 8)] {
        assert_eq!(
            counts(Algo::Odpor, testprog::filesystem(n)),
            (want, 0),
            "odpor n={n}"
        );
        assert_eq!(
            counts(Algo::Dpor, testprog::filesystem(n)).0,
            want,
            "dpor n={n}"
        );
    }
}

#[test]
#[ignore = "large sizes: run with --release -- --ignored"]
fn large_sizes() {
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::lastzero(10)), (3328, 0));
    eprintln!("lastzero(10) odpor {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let (ex, bl) = counts(Algo::Dpor, testprog::lastzero(10));
    eprintln!("lastzero(10) dpor {ex} + {bl} blocked {:?}", t.elapsed());
    assert_eq!(ex, 3328);
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::indexer(14)), (512, 0));
    eprintln!("indexer(14) odpor {:?}", t.elapsed());
    let t = std::time::Instant::now();
    assert_eq!(counts(Algo::Odpor, testprog::filesystem(18)), (32, 0));
    eprintln!("filesystem(18) odpor {:?}", t.elapsed());
}
