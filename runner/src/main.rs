//! `poscheck`: runs native pthread programs under controlled scheduling.
//!
//! Exit codes: 0 = no bug found, 1 = bug found, 2 = usage or setup error.

mod cli;
mod elf;
mod libpos;
mod outcome;
mod process;
mod session;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let r = match &cli.command {
        cli::Command::Run(a) => run_cmd(a),
        _ => Ok(0),
    };
    match r {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("poscheck: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_cmd(a: &cli::RunArgs) -> anyhow::Result<i32> {
    let libpos = libpos::find()?;
    let mut strat =
        pos_sched::strategy::by_name(&a.algo, &Default::default()).map_err(anyhow::Error::msg)?;
    let mut hits = 0;
    for p in &a.paths {
        elf::check(p)?;
        let cfg = session::RunConfig::new(p.clone(), a.args.clone(), libpos.clone());
        for i in 0..a.tries {
            let r = session::run_once(
                &cfg,
                strat.as_mut(),
                pos_sched::rng::try_seed(a.seed.unwrap_or(0), i),
            )?;
            println!("{i}: {} steps={}", r.outcome, r.steps);
            if r.outcome.is_bug() {
                hits += 1;
            }
        }
    }
    Ok(if hits > 0 { 1 } else { 0 })
}
