//! `poscheck env`: the environment that puts a program under libpos without the runner
//! (`env $(poscheck env) ./prog`), with libpos.so found as every subcommand finds it.

use anyhow::Result;

/// Print `LD_PRELOAD=<absolute path of libpos.so>`.
pub fn run() -> Result<i32> {
    let lib = crate::exec::libpos::find()?;
    sayln!("LD_PRELOAD={}", lib.display());
    Ok(0)
}
