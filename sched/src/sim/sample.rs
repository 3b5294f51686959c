//! Probabilities of partial orders under a strategy, exact (random walk, from the
//! enumeration) or estimated by sampling seeded runs, and the POS paper's coverage metric.

use super::exec::{run_once, SimError};
use super::orders::Orders;
use super::program::Program;
use crate::rng::try_seed;
use crate::strategy::surw::{build_profile, needs_profile};
use crate::strategy::{by_name, Options};

/// The probability of every partial order under one strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub algo: String,
    /// Computed exactly rather than sampled.
    pub exact: bool,
    /// Per order (indices of [`Orders::orders`]).
    pub probs: Vec<f64>,
    /// Per order, runs that hit it (sampled estimates only).
    pub hits: Vec<u64>,
    pub samples: u64,
}

impl Estimate {
    /// Random walk's exact probabilities, from the enumeration.
    pub fn exact_rw(orders: &Orders) -> Estimate {
        Estimate {
            algo: "rw".into(),
            exact: true,
            probs: orders.orders.iter().map(|o| o.rw).collect(),
            hits: Vec::new(),
            samples: 0,
        }
    }

    /// The POS paper's coverage (§6): the minimum over all partial orders of the
    /// probability of hitting it. 0 when a sampled order was never hit.
    pub fn coverage(&self) -> f64 {
        self.probs.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The order with the smallest probability (the first of equals), the one that sets
    /// [`Estimate::coverage`].
    pub fn rarest_order(&self) -> Option<usize> {
        (0..self.probs.len()).min_by(|&a, &b| self.probs[a].total_cmp(&self.probs[b]))
    }

    /// Standard error of the coverage as an estimate of the rarest order's probability (0 for
    /// exact values). The minimum over many sampled orders is also biased low, by up to a few
    /// of these when several orders are about as rare: compare strategies order by order
    /// (`poscheck model --json`) before trusting a difference of that size.
    pub fn coverage_std_error(&self) -> f64 {
        self.rarest_order().map_or(0.0, |o| self.std_error(o))
    }

    /// Orders hit at least once (all of them for an exact computation with no zero).
    pub fn orders_hit(&self) -> usize {
        self.probs.iter().filter(|&&p| p > 0.0).count()
    }

    /// Coverage as the paper prints it: `0(x)` when only `x` orders were hit.
    pub fn coverage_text(&self) -> String {
        let c = self.coverage();
        if c > 0.0 || self.probs.is_empty() {
            fmt_prob(c)
        } else {
            format!("0({})", self.orders_hit())
        }
    }

    /// Standard error of a sampled probability (0 for exact values).
    pub fn std_error(&self, order: usize) -> f64 {
        if self.exact || self.samples == 0 {
            return 0.0;
        }
        let p = self.probs[order];
        (p * (1.0 - p) / self.samples as f64).sqrt()
    }
}

/// A probability in a compact, readable form.
pub fn fmt_prob(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.3e}")
    }
}

/// The strategy options the simulator passes: PCT's `k` is known exactly, the number of
/// events of the program (its scheduling steps when no deadlock cuts a run short).
pub fn options_for(orders: &Orders) -> Options {
    Options {
        pct_k: Some(orders.events.list.len() as u64),
        ..Default::default()
    }
}

/// Below this many runs sampling stays on the calling thread.
const PARALLEL_MIN_SAMPLES: u64 = 20_000;

/// Estimate the probability of every order of `p` under `algo` from `samples` runs; run `i`
/// is seeded with [`try_seed`]`(seed, i)`, as try `i` of a real session would be.
///
/// Large budgets are split into contiguous index ranges over the available cores, each with
/// its own strategy instance. The counts do not depend on the split: every run starts from
/// `begin(seed_i)`, and the only state strategies carry between runs (PCT's `k`) is fixed
/// by [`options_for`].
pub fn sample(
    p: &Program,
    orders: &Orders,
    algo: &str,
    opts: &Options,
    samples: u64,
    seed: u64,
) -> Result<Estimate, SimError> {
    // Fail early (and once) on an unknown name.
    by_name(algo, opts).map_err(SimError)?;
    // urw/surw/tapct: one profile for every sampled run, from runs seeded by `seed` only.
    let with_profile;
    let opts = if needs_profile(algo) && opts.profile.is_none() {
        let prof = build_profile(seed, |s, sd| run_once(p, &orders.events, s, sd).map(|_| ()))?;
        with_profile = Options {
            profile: Some(std::sync::Arc::new(prof)),
            ..opts.clone()
        };
        &with_profile
    } else {
        opts
    };
    let workers = if samples >= PARALLEL_MIN_SAMPLES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) as u64
    } else {
        1
    };
    let chunk = samples.div_ceil(workers.max(1));
    let ranges: Vec<(u64, u64)> = (0..workers)
        .map(|w| (w * chunk, ((w + 1) * chunk).min(samples)))
        .filter(|(a, b)| a < b)
        .collect();
    let parts: Vec<Result<Vec<u64>, SimError>> = if ranges.len() <= 1 {
        vec![sample_range(p, orders, algo, opts, 0, samples, seed)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = ranges
                .iter()
                .map(|&(a, b)| s.spawn(move || sample_range(p, orders, algo, opts, a, b, seed)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(SimError("a sampling thread panicked".into())))
                })
                .collect()
        })
    };
    let mut hits = vec![0u64; orders.len()];
    for part in parts {
        for (h, x) in hits.iter_mut().zip(part?) {
            *h += x;
        }
    }
    let probs = hits
        .iter()
        .map(|&h| h as f64 / samples.max(1) as f64)
        .collect();
    Ok(Estimate {
        algo: algo.to_string(),
        exact: false,
        probs,
        hits,
        samples,
    })
}

/// Hit counts of runs `from..to`.
fn sample_range(
    p: &Program,
    orders: &Orders,
    algo: &str,
    opts: &Options,
    from: u64,
    to: u64,
    seed: u64,
) -> Result<Vec<u64>, SimError> {
    let mut strategy = by_name(algo, opts).map_err(SimError)?;
    let mut hits = vec![0u64; orders.len()];
    for i in from..to {
        let run = run_once(p, &orders.events, strategy.as_mut(), try_seed(seed, i))?;
        let o = orders.classify(&run.executed).ok_or_else(|| {
            SimError(format!(
                "{algo} run {i} produced a partial order the enumeration did not find"
            ))
        })?;
        hits[o] += 1;
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(text: &str) -> (Program, Orders) {
        let p = Program::parse(text).unwrap();
        let o = Orders::enumerate(&p, 1_000_000).unwrap();
        (p, o)
    }

    /// Every sampled probability lies within 4.5 standard errors of the exact one
    /// (a correct sampler fails this with probability < 7e-6 per order).
    fn assert_close(exact: &[f64], est: &Estimate) {
        let n = est.samples as f64;
        for (i, (&q, &p)) in exact.iter().zip(&est.probs).enumerate() {
            let se = (q * (1.0 - q) / n).sqrt();
            assert!(
                (p - q).abs() <= 4.5 * se + 1e-12,
                "{}: order {i}: sampled {p}, exact {q}, se {se}",
                est.algo
            );
        }
    }

    #[test]
    fn sampled_random_walk_matches_exact() {
        for text in [
            "thread A: read x\nthread B: write y1; write y2; write y3; write x",
            "thread A: write x\nthread B: write x; write x",
            "thread A: write x; read y\nthread B: write y; read x; lock m; unlock m\nthread C: lock m; write x; unlock m",
            "thread main: create A; create B; join A; join B\nthread A: write x; signal w\nthread B: wait w; read x; write x",
        ] {
            let (p, o) = setup(text);
            let est = sample(&p, &o, "rw", &options_for(&o), 20_000, 7).unwrap();
            assert_close(&Estimate::exact_rw(&o).probs, &est);
        }
    }

    #[test]
    fn parallel_sampling_equals_sequential() {
        let (p, o) =
            setup("thread A: write x; write y\nthread B: write y; write x\nthread C: write x");
        let opts = options_for(&o);
        for algo in ["pos", "pct2"] {
            let par = sample(&p, &o, algo, &opts, PARALLEL_MIN_SAMPLES, 3).unwrap();
            let seq = sample_range(&p, &o, algo, &opts, 0, PARALLEL_MIN_SAMPLES, 3).unwrap();
            assert_eq!(par.hits, seq, "{algo}");
        }
    }

    #[test]
    fn coverage_notation() {
        let e = Estimate {
            algo: "x".into(),
            exact: false,
            probs: vec![0.5, 0.0, 0.5],
            hits: vec![5, 0, 5],
            samples: 10,
        };
        assert_eq!(e.coverage(), 0.0);
        assert_eq!(e.coverage_text(), "0(2)");
        assert_eq!(e.rarest_order(), Some(1));
        assert_eq!(e.coverage_std_error(), 0.0);
        let e = Estimate {
            probs: vec![0.5, 0.1, 0.4],
            hits: vec![50, 10, 40],
            samples: 100,
            ..e
        };
        assert_eq!(e.rarest_order(), Some(1));
        assert!((e.coverage_std_error() - 0.03).abs() < 1e-12);
        let (_, o) = setup("thread A: write x\nthread B: write x; write x");
        let rw = Estimate::exact_rw(&o);
        assert_eq!(rw.coverage(), 0.25);
        assert_eq!(rw.coverage_text(), "0.2500");
    }
}
