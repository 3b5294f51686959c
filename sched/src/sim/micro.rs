//! The POS paper's micro benchmarks (Yuan et al. CAV'18, §6): random programs of `t`
//! threads with `m` events each over `o` shared variables, and the coverage of each
//! strategy on them.
//!
//! What is generated, exactly (paper mode, so only the listed events are scheduling points):
//! 1. The *layout* fixes how many of the `t*m` events access each variable. `uniform`
//!    splits them evenly (`{4,4,4,4}` for t = m = o = 4; a remainder goes to the first
//!    variables); `skewed` gives the first `floor(o/2)` variables weight 1 and the others
//!    weight 3 (`{2,2,6,6}` for t = m = o = 4), rounding by largest remainder.
//! 2. The resulting multiset of variable names is shuffled uniformly (Fisher–Yates with
//!    [`Rng`] seeded by `try_seed(seed, program index)`) and dealt in order: thread `i` gets
//!    slots `i*m .. (i+1)*m`.
//! 3. Each event is a read with probability `reads` (default 0: all writes), else a write.
//!
//! Strategies are given by name; PCT runs at a fixed depth given in its name (`pct3` by
//! default in `poscheck micro`), with `k` = the number of events (see
//! [`super::sample::options_for`]).
//!
//! Geometric means: a coverage that sampling measured as 0 (some order never hit in `N`
//! runs) enters the geometric mean as `1/(N+1)`, the smallest probability `N` runs can
//! suggest, so that one unhit order does not zero a strategy's whole mean; the floor is
//! printed with the table.

use super::exec::SimError;
use super::program::Program;
use super::{analyze, Estimate};
use crate::rng::{try_seed, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Uniform,
    Skewed,
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(Layout::Uniform),
            "skewed" => Ok(Layout::Skewed),
            _ => Err(format!("unknown layout {s:?} (uniform, skewed)")),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroConfig {
    pub threads: usize,
    pub events: usize,
    pub objects: usize,
    pub layout: Layout,
    /// Probability that an event is a read.
    pub reads: f64,
}

/// How many events access each variable (see the module documentation).
pub fn access_counts(cfg: &MicroConfig) -> Vec<usize> {
    let total = cfg.threads * cfg.events;
    let o = cfg.objects.max(1);
    let weights: Vec<usize> = (0..o)
        .map(|i| match cfg.layout {
            Layout::Uniform => 1,
            Layout::Skewed if i < o / 2 => 1,
            Layout::Skewed => 3,
        })
        .collect();
    let wsum: usize = weights.iter().sum();
    let mut counts: Vec<usize> = weights.iter().map(|w| total * w / wsum).collect();
    let mut rem: Vec<(usize, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, w)| (total * w % wsum, i))
        .collect();
    // Largest remainder first, earlier variables first among equals.
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = total - counts.iter().sum::<usize>();
    for &(_, i) in rem.iter().take(missing) {
        counts[i] += 1;
    }
    counts
}

/// Generate one random program (see the module documentation).
pub fn generate(cfg: &MicroConfig, rng: &mut Rng) -> Program {
    let counts = access_counts(cfg);
    let mut slots: Vec<usize> = counts
        .iter()
        .enumerate()
        .flat_map(|(v, &c)| std::iter::repeat_n(v, c))
        .collect();
    for i in (1..slots.len()).rev() {
        let j = rng.index(i + 1);
        slots.swap(i, j);
    }
    let mut text = String::new();
    for t in 0..cfg.threads {
        let body: Vec<String> = slots[t * cfg.events..(t + 1) * cfg.events]
            .iter()
            .map(|v| {
                let verb = if rng.chance(cfg.reads) {
                    "read"
                } else {
                    "write"
                };
                format!("{verb} x{}", v + 1)
            })
            .collect();
        text.push_str(&format!("thread T{}: {}\n", t + 1, body.join("; ")));
    }
    Program::parse(&text).expect("generated programs are well formed")
}

/// The results on one random program.
#[derive(Clone, Debug)]
pub struct ProgramResult {
    pub program: Program,
    pub orders: usize,
    /// Exact minimum probability under random walk.
    pub rw_exact: f64,
    /// Sampled, one per strategy in the requested order.
    pub estimates: Vec<Estimate>,
}

/// The value a coverage enters the geometric mean with (see the module documentation).
pub fn floor_value(samples: u64) -> f64 {
    1.0 / (samples as f64 + 1.0)
}

/// Geometric mean, each value raised to at least `floor`.
pub fn geomean(values: &[f64], floor: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let s: f64 = values.iter().map(|v| v.max(floor).ln()).sum();
    (s / values.len() as f64).exp()
}

/// Generate `programs` programs from `seed` and measure every strategy on each, all by
/// sampling (`samples` runs each) so that they are compared on the same budget; random
/// walk's exact coverage is reported alongside.
pub fn run(
    cfg: &MicroConfig,
    algos: &[String],
    programs: usize,
    samples: u64,
    seed: u64,
) -> Result<Vec<ProgramResult>, SimError> {
    let mut out = Vec::new();
    for i in 0..programs {
        let s = try_seed(seed, i as u64);
        let program = generate(cfg, &mut Rng::new(s));
        let a = analyze(&program, algos, samples, s, false)?;
        let rw_exact = Estimate::exact_rw(&a.orders).coverage();
        out.push(ProgramResult {
            orders: a.orders.len(),
            program,
            rw_exact,
            estimates: a.estimates,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(layout: Layout) -> MicroConfig {
        MicroConfig {
            threads: 4,
            events: 4,
            objects: 4,
            layout,
            reads: 0.0,
        }
    }

    #[test]
    fn layouts_are_the_papers() {
        assert_eq!(access_counts(&cfg(Layout::Uniform)), vec![4, 4, 4, 4]);
        assert_eq!(access_counts(&cfg(Layout::Skewed)), vec![2, 2, 6, 6]);
        let odd = MicroConfig {
            threads: 3,
            events: 3,
            objects: 2,
            ..cfg(Layout::Uniform)
        };
        assert_eq!(access_counts(&odd), vec![5, 4]);
    }

    #[test]
    fn generated_programs_follow_the_layout_and_the_seed() {
        let c = cfg(Layout::Skewed);
        let p = generate(&c, &mut Rng::new(5));
        assert_eq!(p, generate(&c, &mut Rng::new(5)));
        assert_eq!(p.threads.len(), 4);
        let mut per_var = std::collections::HashMap::new();
        for t in &p.threads {
            assert_eq!(t.body.len(), 4);
            for s in &t.body {
                let super::super::program::Stmt::Write(v) = s else {
                    panic!("all writes without --reads");
                };
                *per_var.entry(p.objects[*v].name.clone()).or_insert(0) += 1;
            }
        }
        let mut counts: Vec<i32> = per_var.values().copied().collect();
        counts.sort();
        assert_eq!(counts, vec![2, 2, 6, 6]);
    }

    fn geomeans(cfg: &MicroConfig, algos: &[&str], samples: u64) -> Vec<f64> {
        let algos: Vec<String> = algos.iter().map(|a| a.to_string()).collect();
        let res = run(cfg, &algos, 4, samples, 1).unwrap();
        (0..algos.len())
            .map(|k| {
                let v: Vec<f64> = res.iter().map(|r| r.estimates[k].coverage()).collect();
                geomean(&v, floor_value(samples))
            })
            .collect()
    }

    /// The POS paper's micro-benchmark claims (§6), at 3 threads × 3 events × 3 variables,
    /// the largest size whose coverage 20,000 runs per strategy resolve (at 4×4×4 programs
    /// have thousands of partial orders and every strategy reads 0(x) at that budget).
    #[test]
    fn pos_has_the_best_geometric_mean_coverage() {
        let cfg = MicroConfig {
            threads: 3,
            events: 3,
            objects: 3,
            layout: Layout::Uniform,
            reads: 0.0,
        };
        let g = geomeans(&cfg, &["rw", "pct3", "rapos", "basicpos", "pos"], 20_000);
        for (i, other) in ["rw", "pct3", "rapos", "basicpos"].iter().enumerate() {
            assert!(g[4] > 2.0 * g[i], "pos {} vs {other} {}", g[4], g[i]);
        }
        // With reads, POS* (reads do not race) covers at least as evenly as POS.
        let reads = MicroConfig {
            objects: 2,
            reads: 0.5,
            ..cfg
        };
        let g = geomeans(&reads, &["pos", "pos*"], 20_000);
        assert!(g[1] >= g[0], "pos* {} vs pos {}", g[1], g[0]);
    }

    #[test]
    fn geomean_floors_zeros() {
        assert!((geomean(&[0.25, 1.0], 0.0) - 0.5).abs() < 1e-12);
        assert!((geomean(&[0.0, 0.01], 0.01) - 0.01).abs() < 1e-12);
        assert_eq!(floor_value(9), 0.1);
    }
}
