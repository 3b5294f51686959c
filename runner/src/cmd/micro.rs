//! `poscheck micro`: the POS paper's micro benchmarks (Yuan et al. CAV'18, §6) — random
//! programs of t threads × m events over o variables, the coverage of each strategy on each,
//! and the geometric mean per strategy. What is generated, and how a zero coverage enters
//! the geometric mean, is documented in [`pos_sched::sim::micro`].

use anyhow::{bail, Context, Result};
use pos_sched::sim::micro::{self, floor_value, geomean, Layout, MicroConfig, ProgramResult};
use pos_sched::sim::sample::fmt_prob;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct MicroArgs {
    /// Threads per program.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Events per thread.
    #[arg(long, default_value_t = 4)]
    pub events: usize,
    /// Shared variables.
    #[arg(long, default_value_t = 4)]
    pub objects: usize,
    /// How the events are spread over the variables: uniform ({4,4,4,4} for 4×4 events over
    /// 4 variables) or skewed ({2,2,6,6}).
    #[arg(long, default_value = "uniform")]
    pub layout: Layout,
    /// Probability that an event is a read (0: all writes). POS* only differs from POS when
    /// there are reads.
    #[arg(long, default_value_t = 0.0)]
    pub reads: f64,
    /// Number of random programs.
    #[arg(long, default_value_t = 10)]
    pub programs: usize,
    /// Runs per strategy per program.
    #[arg(long, default_value_t = 100_000)]
    pub samples: u64,
    /// Base seed: program i is generated from try_seed(seed, i), and sampled from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Strategies, comma-separated. PCT's depth is part of its name. The default pct3 (two
    /// change points) is a fixed choice, not computed per program: covering every partial
    /// order would need the depth of the hardest one, which grows with the program; pct1..pct5
    /// can be compared by listing them. urw, surw and tapct<d> get their profile (per-thread
    /// event counts, racing objects) from profiling runs of each program, seeded by the
    /// program's seed, as `poscheck model` does. Every variable of a generated program is
    /// usually written by several threads, so every event is interesting: surw then makes
    /// the same choices as urw and tapct<d> as pct<d> (identical columns); they differ on
    /// programs with private accesses (benchmarks/models/surw-private.model).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "rw,pct3,rapos,basicpos,pos,pos*,urw,surw,tapct3"
    )]
    pub algos: Vec<String>,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(a: &MicroArgs) -> Result<i32> {
    if a.threads == 0 || a.events == 0 || a.objects == 0 {
        bail!("--threads, --events and --objects must be positive");
    }
    if a.threads * a.events > 64 {
        bail!("at most 64 events per program (exhaustive enumeration)");
    }
    if !(0.0..=1.0).contains(&a.reads) {
        bail!("--reads must be a probability in [0, 1]");
    }
    if a.samples == 0 || a.programs == 0 {
        bail!("--samples and --programs must be positive");
    }
    let cfg = MicroConfig {
        threads: a.threads,
        events: a.events,
        objects: a.objects,
        layout: a.layout,
        reads: a.reads,
    };
    let results = micro::run(&cfg, &a.algos, a.programs, a.samples, a.seed)
        .context("running the micro benchmarks")?;
    let summary = Summary::new(&results, &a.algos, a.samples);
    print!("{}", render(&cfg, a, &results, &summary));
    if let Some(path) = &a.json {
        let v = to_json(&cfg, a, &results, &summary);
        let s = serde_json::to_string_pretty(&v).context("encoding JSON")?;
        std::fs::write(path, s + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(0)
}

/// Geometric means over the programs.
struct Summary {
    floor: f64,
    /// Per strategy, in the requested order.
    geomean: Vec<f64>,
    rw_exact: f64,
    /// Per strategy: mean fraction of the partial orders hit at least once.
    hit_fraction: Vec<f64>,
}

impl Summary {
    fn new(results: &[ProgramResult], algos: &[String], samples: u64) -> Summary {
        let floor = floor_value(samples);
        let means = (0..algos.len())
            .map(|k| {
                let v: Vec<f64> = results.iter().map(|r| r.estimates[k].coverage()).collect();
                geomean(&v, floor)
            })
            .collect();
        let exact: Vec<f64> = results.iter().map(|r| r.rw_exact).collect();
        let hit_fraction = (0..algos.len())
            .map(|k| {
                let s: f64 = results
                    .iter()
                    .map(|r| r.estimates[k].orders_hit() as f64 / r.orders.max(1) as f64)
                    .sum();
                s / results.len().max(1) as f64
            })
            .collect();
        Summary {
            floor,
            geomean: means,
            rw_exact: geomean(&exact, 0.0),
            hit_fraction,
        }
    }

    fn of(&self, algos: &[String], name: &str) -> Option<f64> {
        algos
            .iter()
            .position(|a| a == name)
            .map(|i| self.geomean[i])
    }
}

fn render(cfg: &MicroConfig, a: &MicroArgs, results: &[ProgramResult], s: &Summary) -> String {
    let counts = micro::access_counts(cfg);
    let counts: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
    let mut out = format!(
        "micro: {} programs, {} threads x {} events over {} variables, layout {:?} {{{}}}, \
         reads {}, {} runs per strategy, seed {}\n",
        a.programs,
        cfg.threads,
        cfg.events,
        cfg.objects,
        cfg.layout,
        counts.join(","),
        cfg.reads,
        a.samples,
        a.seed
    );
    out.push_str(&format!(
        "coverage = min over partial orders of the hit probability; 0(x): only x orders hit; \
         a 0 enters the geometric mean as 1/(samples+1) = {}\n\
         ± s.e.: one standard error of the rarest order's estimate (a minimum over many \
         sampled orders is also biased low)\n\n",
        fmt_prob(s.floor)
    ));
    let w = 11;
    out.push_str(&format!("{:>4} {:>8} {:>w$}", "#", "orders", "rw(exact)"));
    for algo in &a.algos {
        out.push_str(&format!(" {algo:>w$}"));
    }
    out.push('\n');
    for (i, r) in results.iter().enumerate() {
        out.push_str(&format!(
            "{:>4} {:>8} {:>w$}",
            i + 1,
            r.orders,
            fmt_prob(r.rw_exact)
        ));
        for e in &r.estimates {
            out.push_str(&format!(" {:>w$}", e.coverage_text()));
        }
        out.push('\n');
        // One standard error of each sampled coverage, on its own line under the program.
        out.push_str(&format!("{:>13} {:>w$}", "", "± s.e."));
        for e in &r.estimates {
            out.push_str(&format!(" {:>w$}", fmt_prob(e.coverage_std_error())));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:>13} {:>w$}", "geomean", fmt_prob(s.rw_exact)));
    for g in &s.geomean {
        out.push_str(&format!(" {:>w$}", fmt_prob(*g)));
    }
    out.push('\n');
    out.push_str(&format!("{:>13} {:>w$}", "orders hit", ""));
    for h in &s.hit_fraction {
        out.push_str(&format!(" {:>w$}", format!("{:.2}%", 100.0 * h)));
    }
    out.push('\n');
    if s.geomean.iter().all(|&g| g <= s.floor * (1.0 + 1e-9)) {
        out.push_str(
            "note: no strategy hit every partial order of any program: all coverages are below \
             what this many runs resolve; compare the orders-hit row, or raise --samples\n",
        );
    }
    if let Some(pos) = s.of(&a.algos, "pos") {
        out.push('\n');
        for other in &a.algos {
            if other == "pos" {
                continue;
            }
            if let Some(g) = s.of(&a.algos, other) {
                out.push_str(&format!("pos / {other}: {:.2}x\n", pos / g));
            }
        }
        let best_other = a
            .algos
            .iter()
            .filter(|x| *x != "pos" && *x != "pos*")
            .filter_map(|x| s.of(&a.algos, x))
            .fold(0.0, f64::max);
        if best_other > 0.0 {
            out.push_str(&format!(
                "pos / best of the others (pos* excluded): {:.2}x\n",
                pos / best_other
            ));
        }
    }
    out
}

fn to_json(cfg: &MicroConfig, a: &MicroArgs, results: &[ProgramResult], s: &Summary) -> Value {
    let programs: Vec<Value> = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cov = Map::new();
            let mut text = Map::new();
            let mut hit = Map::new();
            let mut se = Map::new();
            let mut rarest = Map::new();
            for e in &r.estimates {
                se.insert(e.algo.clone(), json!(e.coverage_std_error()));
                rarest.insert(e.algo.clone(), json!(e.rarest_order()));
                cov.insert(e.algo.clone(), json!(e.coverage()));
                text.insert(e.algo.clone(), json!(e.coverage_text()));
                hit.insert(e.algo.clone(), json!(e.orders_hit()));
            }
            json!({
                "index": i,
                "program": r.program.to_text(),
                "partial_orders": r.orders,
                "rw_exact_coverage": r.rw_exact,
                "coverage": cov,
                "coverage_std_error": se,
                "rarest_order": rarest,
                "coverage_text": text,
                "orders_hit": hit,
            })
        })
        .collect();
    let mut geo = Map::new();
    for (algo, g) in a.algos.iter().zip(&s.geomean) {
        geo.insert(algo.clone(), json!(g));
    }
    json!({
        "config": {
            "threads": cfg.threads,
            "events": cfg.events,
            "objects": cfg.objects,
            "layout": format!("{:?}", cfg.layout).to_lowercase(),
            "access_counts": micro::access_counts(cfg),
            "reads": cfg.reads,
            "programs": a.programs,
            "samples": a.samples,
            "seed": a.seed,
        },
        "programs": programs,
        "geomean": geo,
        "geomean_rw_exact": s.rw_exact,
        "zero_coverage_enters_as": s.floor,
    })
}
