//! `poscheck model FILE`: run the abstract-program simulator ([`pos_sched::sim`]) on one
//! `.model` file and print every partial order with its probability under each strategy,
//! and each strategy's coverage (the POS paper's metric, Yuan et al. CAV'18, §6).

use anyhow::{Context, Result};
use pos_sched::sim::{self, sample::fmt_prob, Analysis, Estimate, Program};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// The program, in the `.model` format (see benchmarks/models/README.md).
    pub file: PathBuf,
    /// Strategies to evaluate, comma-separated. `rw` is computed exactly.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "rw,pct1,pct2,rapos,basicpos,pos,pos*"
    )]
    pub algos: Vec<String>,
    /// Runs per sampled strategy.
    #[arg(long, default_value_t = 100_000)]
    pub samples: u64,
    /// Base seed: run i of a strategy uses try_seed(seed, i).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Sample `rw` like the others instead of computing it exactly.
    #[arg(long)]
    pub sample_rw: bool,
    /// Name the bug by its order number (as printed) instead of, or besides, a `bug:` line.
    #[arg(long)]
    pub bug_order: Option<usize>,
    /// Print at most this many partial orders (all are in the JSON).
    #[arg(long, default_value_t = 64)]
    pub max_orders: usize,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(a: &ModelArgs) -> Result<i32> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("reading {}", a.file.display()))?;
    let program = Program::parse(&text).with_context(|| format!("parsing {}", a.file.display()))?;
    if a.samples == 0 && (a.sample_rw || a.algos.iter().any(|x| x != "rw")) {
        anyhow::bail!("--samples must be at least 1");
    }
    let mut analysis = sim::analyze(&program, &a.algos, a.samples, a.seed, !a.sample_rw)
        .with_context(|| format!("simulating {}", a.file.display()))?;
    if let Some(n) = a.bug_order {
        let count = analysis.orders.len();
        let Some(order) = n
            .checked_sub(1)
            .and_then(|i| analysis.orders.orders.get_mut(i))
        else {
            anyhow::bail!("--bug-order {n}: the program has orders 1..={count}");
        };
        order.bug = true;
    }
    print!(
        "{}",
        render(&a.file.display().to_string(), &program, &analysis, a)
    );
    if let Some(path) = &a.json {
        let v = to_json(&program, &analysis);
        let s = serde_json::to_string_pretty(&v).context("encoding JSON")?;
        std::fs::write(path, s + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(0)
}

fn column_name(e: &Estimate) -> String {
    if e.exact {
        format!("{}(exact)", e.algo)
    } else {
        e.algo.clone()
    }
}

/// The text report: a header, one row per partial order, the coverage row.
fn render(name: &str, p: &Program, an: &Analysis, a: &ModelArgs) -> String {
    let o = &an.orders;
    let mode = if p.is_real() { "real-program" } else { "paper" };
    let mut out = format!(
        "{name}: {mode} mode, {} threads, {} events, {} partial orders\n",
        p.threads.len(),
        o.events.list.len(),
        o.len()
    );
    if an.estimates.iter().any(|e| !e.exact) {
        out.push_str(&format!(
            "sampled strategies: {} runs each, seed {}\n",
            a.samples, a.seed
        ));
    }
    let has_bug = o.orders.iter().any(|x| x.bug);
    if has_bug {
        out.push_str("orders marked * are the bug\n");
    }
    let descs: Vec<String> = (0..o.len()).map(|i| o.describe(p, i)).collect();
    let width = descs
        .iter()
        .take(a.max_orders)
        .map(|d| d.len())
        .max()
        .unwrap_or(0)
        .max(21);
    let cols: Vec<String> = an.estimates.iter().map(column_name).collect();
    let cw: Vec<usize> = cols.iter().map(|c| c.len().max(10)).collect();
    out.push_str(&format!("\n {:>4}  {:<width$}", "#", "order"));
    for (c, w) in cols.iter().zip(&cw) {
        out.push_str(&format!("  {c:>w$}"));
    }
    out.push('\n');
    for (i, d) in descs.iter().enumerate().take(a.max_orders) {
        let ord = &o.orders[i];
        let mark = if ord.bug { "*" } else { " " };
        let d = if ord.deadlock {
            format!("{d} (deadlock)")
        } else {
            d.clone()
        };
        out.push_str(&format!("{mark}{:>4}  {d:<width$}", i + 1));
        for (e, w) in an.estimates.iter().zip(&cw) {
            out.push_str(&format!("  {:>w$}", fmt_prob(e.probs[i])));
        }
        out.push('\n');
    }
    if o.len() > a.max_orders {
        out.push_str(&format!(
            "  ... {} more orders (--max-orders, or --json)\n",
            o.len() - a.max_orders
        ));
    }
    if has_bug {
        out.push_str(&format!(" {:>4}  {:<width$}", "", "bug (orders marked *)"));
        for (e, w) in an.estimates.iter().zip(&cw) {
            out.push_str(&format!("  {:>w$}", fmt_prob(bug_probability(an, e))));
        }
        out.push('\n');
    }
    out.push_str(&format!(" {:>4}  {:<width$}", "", "coverage"));
    for (e, w) in an.estimates.iter().zip(&cw) {
        out.push_str(&format!("  {:>w$}", e.coverage_text()));
    }
    out.push('\n');
    out
}

/// Probability of the bug: the total over the orders that satisfy the `bug:` line.
fn bug_probability(an: &Analysis, e: &Estimate) -> f64 {
    an.orders
        .orders
        .iter()
        .zip(&e.probs)
        .filter(|(o, _)| o.bug)
        .map(|(_, p)| p)
        .sum()
}

/// `{"partial_orders": n, "strategies": {"rw": {"coverage": p, "exact": true, "orders":
/// [p, ...]}, ...}}`, plus the order descriptions and bug marks.
fn to_json(p: &Program, an: &Analysis) -> Value {
    let o = &an.orders;
    let mut strategies = Map::new();
    for e in &an.estimates {
        let mut s = json!({
            "coverage": e.coverage(),
            "coverage_text": e.coverage_text(),
            "exact": e.exact,
            "orders": e.probs,
            "orders_hit": e.orders_hit(),
        });
        if o.orders.iter().any(|x| x.bug) {
            s["bug_probability"] = json!(bug_probability(an, e));
        }
        if !e.exact {
            s["samples"] = json!(e.samples);
            s["hits"] = json!(e.hits);
        }
        strategies.insert(e.algo.clone(), s);
    }
    let orders: Vec<Value> = (0..o.len())
        .map(|i| {
            json!({
                "order": o.describe(p, i),
                "bug": o.orders[i].bug,
                "deadlock": o.orders[i].deadlock,
            })
        })
        .collect();
    json!({
        "partial_orders": o.len(),
        "mode": if p.is_real() { "real" } else { "paper" },
        "orders": orders,
        "strategies": strategies,
    })
}
