//! `poscheck report FILE.json... -o report.html`: the HTML report (`report::html`) of the JSON
//! written by `run`, `compare`, `merge` or `explore`, one file or several (e.g. one `run` per
//! algorithm, or a comparison next to explorations).

use crate::report::html;
use anyhow::Result;

pub fn run(a: &crate::cli::ReportArgs) -> Result<i32> {
    let mut inputs = Vec::with_capacity(a.files.len());
    for f in &a.files {
        inputs.push(html::Input::read(f)?);
    }
    html::write(inputs, &a.output)?;
    sayln!("poscheck: report written to {}", a.output.display());
    Ok(0)
}
