//! The HTML report: one self-contained page (inline CSS and SVG, a few lines of script that
//! sort the tables; nothing loaded from anywhere) made from the JSON that `run`, `compare`,
//! `merge` and `explore` write, and the schedule files those JSON documents name.
//!
//! Sections: the comparison table (sortable) with the bugs hit and geometric means per
//! algorithm; per program, the hit ratio of each algorithm as bars on a log scale with 95 %
//! Wilson intervals; bugs found against tries (and against seconds) per algorithm as step
//! curves over the whole suite; every program × algorithm in one sortable table (time to
//! first bug included); `explore` sessions; and every bug: its outcome and message, the
//! interleaving as a thread-lane diagram ([`super::lanes`]) and the command that replays it.

use super::charts::{self, Bar, Curve};
use super::lanes::{self, LaneStep, Switch};
use super::svg::El;
use super::SavedSchedule;
use crate::cmd::compare::{AlgoRun, CompareDoc, Table};
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One JSON document and where it came from (schedule paths in it are tried as they are,
/// then relative to `dir`).
pub struct Input {
    pub label: String,
    pub dir: PathBuf,
    pub value: serde_json::Value,
}

impl Input {
    /// Read a JSON file.
    pub fn read(path: &Path) -> Result<Input> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
        Ok(Input {
            label: path.display().to_string(),
            dir: path
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            value,
        })
    }

    /// A document the running command made (`--html`): paths relative to the working
    /// directory.
    pub fn of(label: &str, doc: &impl serde::Serialize) -> Result<Input> {
        Ok(Input {
            label: label.to_string(),
            dir: PathBuf::from("."),
            value: serde_json::to_value(doc).context("cannot encode the report")?,
        })
    }
}

/// The fields of a program line (`run`'s JSON, one per program) the page uses; every field
/// beyond the table's has a default, so files written before it existed still load.
#[derive(Clone, Debug, Deserialize)]
struct ProgLine {
    name: String,
    tries: u64,
    hits: u64,
    #[serde(default)]
    expect: Option<String>,
    #[serde(default)]
    first_hit: Option<u64>,
    #[serde(default)]
    first_hit_s: Option<f64>,
    #[serde(default)]
    wall_s: f64,
    #[serde(default)]
    outcomes: BTreeMap<String, u64>,
    #[serde(default)]
    schedule: Option<String>,
    #[serde(default)]
    first_outcome: Option<serde_json::Value>,
    #[serde(default)]
    flag: Option<String>,
}

/// The fields of an `explore` document the page uses.
#[derive(Clone, Debug, Deserialize)]
struct ExploreDoc {
    program: String,
    algo: String,
    #[serde(default)]
    bound: Option<u32>,
    executions: u64,
    #[serde(default)]
    buggy: u64,
    #[serde(default)]
    first_bug_execution: Option<u64>,
    #[serde(default)]
    first_bug_s: Option<f64>,
    #[serde(default)]
    complete: bool,
    #[serde(default)]
    stopped: Option<String>,
    #[serde(default)]
    elapsed_s: f64,
    #[serde(default)]
    bugs: Vec<ExploreBug>,
}

#[derive(Clone, Debug, Deserialize)]
struct ExploreBug {
    kind: String,
    description: String,
    #[serde(default)]
    schedule: Option<String>,
}

/// One bug shown with its interleaving.
struct Bug {
    program: String,
    algo: String,
    kind: String,
    message: String,
    /// The schedule file where it was found, else as the JSON names it (the replay command
    /// uses it).
    schedule: String,
    /// The steps, or why there are none.
    steps: std::result::Result<(u64, Vec<LaneStep>), String>,
}

/// Everything the page shows.
pub struct Doc {
    sources: Vec<String>,
    /// Sampling sessions, one per algorithm (several inputs' programs merged).
    runs: Vec<AlgoRun>,
    /// Per run, its program lines with the directory of the file each came from.
    lines: Vec<Vec<(ProgLine, PathBuf)>>,
    table: Option<Table>,
    explores: Vec<(ExploreDoc, PathBuf)>,
    /// Inputs whose session was interrupted (SIGINT): finished tries only.
    interrupted: Vec<String>,
}

impl Doc {
    /// Gather the inputs: `compare`/`merge` documents, `run` reports and `explore` reports,
    /// in any mix. Programs of the same algorithm from several files are put together (as
    /// `merge` does); one program twice under one algorithm is an error.
    pub fn from_inputs(inputs: Vec<Input>) -> Result<Doc> {
        let mut runs: Vec<AlgoRun> = Vec::new();
        let mut lines: Vec<Vec<(ProgLine, PathBuf)>> = Vec::new();
        let mut explores = Vec::new();
        let mut sources = Vec::new();
        let mut interrupted = Vec::new();
        for input in inputs {
            let v = &input.value;
            if v.get("interrupted").and_then(|i| i.as_bool()) == Some(true) {
                interrupted.push(input.label.clone());
            }
            let file_runs: Vec<AlgoRun> = if v.get("runs").is_some() {
                let d: CompareDoc = serde_json::from_value(v.clone())
                    .with_context(|| format!("{}: not a poscheck compare document", input.label))?;
                d.runs
            } else if v.get("executions").is_some() {
                let d: ExploreDoc = serde_json::from_value(v.clone())
                    .with_context(|| format!("{}: not a poscheck explore report", input.label))?;
                explores.push((d, input.dir.clone()));
                Vec::new()
            } else if v.get("programs").is_some() {
                vec![serde_json::from_value(v.clone())
                    .with_context(|| format!("{}: not a poscheck run report", input.label))?]
            } else {
                bail!(
                    "{}: not a poscheck run, compare, merge or explore report (no `programs`, \
                     `runs` or `executions`)",
                    input.label
                );
            };
            for r in file_runs {
                let mut parsed = Vec::with_capacity(r.programs.len());
                for p in &r.programs {
                    let l: ProgLine = serde_json::from_value(p.clone()).with_context(|| {
                        format!(
                            "{}: a program line of {} is not readable",
                            input.label, r.algo
                        )
                    })?;
                    parsed.push((l, input.dir.clone()));
                }
                match runs.iter().position(|m| m.algo == r.algo) {
                    Some(k) => {
                        for (l, _) in &parsed {
                            if lines[k].iter().any(|(o, _)| o.name == l.name) {
                                bail!(
                                    "{}: program {} appears twice under {} (the same session \
                                     given twice?)",
                                    input.label,
                                    l.name,
                                    r.algo
                                );
                            }
                        }
                        runs[k].programs.extend(r.programs);
                        lines[k].extend(parsed);
                    }
                    None => {
                        runs.push(r);
                        lines.push(parsed);
                    }
                }
            }
            sources.push(input.label);
        }
        if runs.is_empty() && explores.is_empty() {
            bail!("nothing to report: the inputs hold no run");
        }
        let table = if runs.is_empty() {
            None
        } else {
            Some(Table::build(&runs)?)
        };
        Ok(Doc {
            sources,
            runs,
            lines,
            table,
            explores,
            interrupted,
        })
    }

    /// The line of `program` under run `k`.
    fn line(&self, k: usize, program: &str) -> Option<&(ProgLine, PathBuf)> {
        self.lines[k].iter().find(|(l, _)| l.name == program)
    }

    /// The bugs to draw: every program × algorithm with a saved schedule, in table order,
    /// then the explorations' distinct bugs.
    fn bugs(&self) -> Vec<Bug> {
        let mut out = Vec::new();
        if let Some(t) = &self.table {
            for row in &t.rows {
                for (k, run) in self.runs.iter().enumerate() {
                    let Some((l, dir)) = self.line(k, &row.name) else {
                        continue;
                    };
                    let (Some(s), true) = (&l.schedule, l.hits > 0) else {
                        continue;
                    };
                    let fallback = l.first_outcome.as_ref().map(outcome_words);
                    out.push(bug(&l.name, &run.algo, s, dir, fallback));
                }
            }
        }
        for (e, dir) in &self.explores {
            for b in &e.bugs {
                if let Some(s) = &b.schedule {
                    let mut one = bug(
                        &program_name(&e.program),
                        &format!("explore {}", e.algo),
                        s,
                        dir,
                        Some((b.kind.clone(), b.description.clone())),
                    );
                    one.kind.clone_from(&b.kind);
                    out.push(one);
                }
            }
        }
        out
    }
}

/// A program path's file name.
fn program_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map_or_else(|| p.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Kind and words of an outcome as the JSON holds it (`{"kind": "assert", ...}`).
fn outcome_words(v: &serde_json::Value) -> (String, String) {
    let kind = v
        .get("kind")
        .and_then(|k| k.as_str())
        .unwrap_or("bug")
        .to_string();
    (kind, v.to_string())
}

/// A schedule path as written, else relative to the JSON file's directory.
fn resolve(schedule: &str, dir: &Path) -> Option<PathBuf> {
    let p = PathBuf::from(schedule);
    if p.is_file() {
        return Some(p);
    }
    let rel = dir.join(&p);
    if rel.is_file() {
        return Some(rel);
    }
    let by_name = dir.join(p.file_name()?);
    by_name.is_file().then_some(by_name)
}

fn bug(
    program: &str,
    algo: &str,
    schedule: &str,
    dir: &Path,
    fallback: Option<(String, String)>,
) -> Bug {
    let (mut kind, mut message) = fallback.unwrap_or_else(|| ("bug".into(), String::new()));
    let found = resolve(schedule, dir);
    // The replay command names the file where it was found (the JSON's path may be relative
    // to another directory).
    let shown = found
        .as_ref()
        .map_or_else(|| schedule.to_string(), |p| p.display().to_string());
    let steps = match found {
        None => Err(format!(
            "the schedule file {schedule} was not found (next to the JSON file either): no \
             interleaving to show"
        )),
        Some(p) => match SavedSchedule::load(&p) {
            Err(e) => Err(format!("{e:#}")),
            Ok(s) => {
                if !s.schedule.outcome.is_empty() {
                    kind.clone_from(&s.schedule.outcome);
                }
                if let Some(d) = &s.detail {
                    message.clone_from(d);
                }
                // Steps that carry the caller's pc (schedules saved since `replay --trace`
                // exists) show their `file:line in function`.
                let mut sym = super::source::Symbols::new();
                Ok((
                    s.schedule.try_index,
                    s.schedule
                        .steps
                        .iter()
                        .map(|st| {
                            let mut l = LaneStep::of(st);
                            l.location = st.pc.as_ref().and_then(|pc| sym.location(pc));
                            l
                        })
                        .collect(),
                ))
            }
        },
    };
    Bug {
        program: program.to_string(),
        algo: algo.to_string(),
        kind,
        message,
        schedule: shown,
        steps,
    }
}

/// A word safe to paste into a shell (quoted when it needs to be).
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Four significant digits, or `-`.
fn ratio_text(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(x) => format!("{x:.4}"),
    }
}

fn secs_text(x: Option<f64>) -> String {
    x.map_or("-".into(), |s| format!("{s:.2}"))
}

/// A table cell with a sort key (`data-v`).
fn td(text: impl Into<String>, sort: impl std::fmt::Display) -> El {
    El::new("td").attr("data-v", sort).text(text)
}

/// A header row of sortable columns.
fn head(cols: &[&str]) -> El {
    El::new("thead").child(
        El::new("tr").children(
            cols.iter()
                .map(|c| El::new("th").attr("title", "click to sort").text(*c)),
        ),
    )
}

const CSS: &str = "
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:0 0 4px}
table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0;cursor:pointer;user-select:none}
td:first-child,th:first-child{text-align:left}
td.best{font-weight:bold;background:#e6f4e6}
tfoot td{background:#fafafa;font-weight:600}
.meta,.note{color:#555}.flag{color:#b00}
.charts{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #ddd;padding:6px}
figcaption{font-weight:600;margin-bottom:2px}
svg text{font:11px system-ui,sans-serif;fill:#222}
svg .grid{stroke:#ddd;stroke-width:1}
svg .tick,svg .caption{fill:#666}
svg .ci{stroke:#000;stroke-width:1.2;fill:none}
svg .curve{fill:none;stroke-width:2}svg .legend-line{stroke-width:3}
.bug{border:1px solid #ddd;border-left:4px solid #c33;padding:8px;margin:12px 0}
.msg{font-family:monospace;white-space:pre-wrap}
.lanes-wrap{overflow-x:auto;border:1px solid #eee}
svg.lanes .lane{fill:#fafafa;stroke:#e4e4e4}
svg.lanes .lane-label{font-weight:600}
svg.lanes .step rect{fill:#eaf1fb;stroke:#6b8fc7}
svg.lanes .step.failing rect{fill:#fde2e2;stroke:#c00;stroke-width:2.5}
svg.lanes text.op{font:600 11px monospace}svg.lanes text.obj{font:10px monospace;fill:#444}
svg.lanes .step-no{fill:#999;font-size:9px}
svg.lanes .switch{fill:none;stroke:#999;stroke-width:1.2}
svg.lanes .switch.preemption{stroke:#d62728;stroke-width:2;stroke-dasharray:4 2}
svg.lanes .preempt-mark{fill:#d62728;font-weight:700}
pre.cmd{background:#f6f6f6;padding:4px 8px;margin:4px 0}
";

/// Sorts a table by the clicked column (numbers by `data-v`, else text); a second click
/// reverses. The summary rows sit in `tfoot` and stay put.
const SCRIPT: &str = "
document.querySelectorAll('table.sortable th').forEach(function(th){
  th.addEventListener('click',function(){
    var body=th.closest('table').tBodies[0],i=th.cellIndex,up=th.dataset.dir!=='up';
    th.dataset.dir=up?'up':'down';
    var key=function(r){var c=r.cells[i];var v=c.dataset.v;var n=parseFloat(v);
      return isNaN(n)?(v===undefined?c.textContent:v):n;};
    Array.from(body.rows).sort(function(a,b){var x=key(a),y=key(b);
      var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
      return up?c:-c;}).forEach(function(r){body.appendChild(r);});
  });
});
";

/// The page.
pub fn render(doc: &Doc) -> String {
    let mut body = El::new("body").child(El::new("h1").text("poscheck report"));
    body.push(
        El::new("p")
            .class("meta")
            .text(format!("From {}.", doc.sources.join(", "))),
    );
    if !doc.interrupted.is_empty() {
        body.push(El::new("p").class("flag").text(format!(
            "Interrupted (SIGINT): {} hold(s) the finished tries only.",
            doc.interrupted.join(", ")
        )));
    }
    if let Some(t) = &doc.table {
        let seeds: Vec<String> = doc
            .runs
            .iter()
            .map(|r| format!("{} seed {}, {} tries", r.algo, r.seed, r.tries))
            .collect();
        body.push(El::new("p").class("meta").text(seeds.join("; ")));
        body.push(comparison(doc, t));
        body.push(ratio_section(doc, t));
        body.push(curve_section(doc, t));
        body.push(detail_section(doc, t));
    }
    if !doc.explores.is_empty() {
        body.push(explore_section(doc));
    }
    body.push(bug_section(&doc.bugs()));
    body.push(El::new("script").raw(SCRIPT));
    let html = El::new("html")
        .attr("lang", "en")
        .child(
            El::new("head")
                .child(El::new("meta").attr("charset", "utf-8"))
                .child(El::new("title").text("poscheck report"))
                .child(El::new("style").raw(CSS)),
        )
        .child(body);
    format!("<!DOCTYPE html>\n{}\n", html.render())
}

/// Write the page of `inputs` to `path`.
pub fn write(inputs: Vec<Input>, path: &Path) -> Result<()> {
    let doc = Doc::from_inputs(inputs)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, render(&doc)).with_context(|| format!("cannot write {}", path.display()))
}

/// The comparison table: a row per program, a column per algorithm, the summary in `tfoot`.
fn comparison(doc: &Doc, t: &Table) -> El {
    let mut cols = vec!["program", "expect"];
    cols.extend(t.algos.iter().map(String::as_str));
    let mut tbody = El::new("tbody");
    for r in &t.rows {
        let mut tr = El::new("tr")
            .attr("data-program", &r.name)
            .child(td(&r.name, &r.name))
            .child(td(
                r.expect.as_deref().unwrap_or("?"),
                r.expect.as_deref().unwrap_or("?"),
            ));
        for (c, x) in r.ratios.iter().enumerate() {
            let mut cell = td(ratio_text(*x), x.unwrap_or(-1.0));
            if r.best[c] {
                cell = cell.class("best");
            }
            if let (Some(h), Some(n)) = (r.hits[c], r.tries[c]) {
                cell = cell.attr("title", format!("{h} of {n} tries"));
            }
            tr.push(cell);
        }
        tbody.push(tr);
    }
    let mut foot = El::new("tfoot");
    let mut bugs = El::new("tr")
        .child(El::new("td").text("bugs hit"))
        .child(El::new("td"));
    for n in &t.bugs_hit {
        bugs.push(El::new("td").text(format!("{n}/{}", t.buggy_programs)));
    }
    foot.push(bugs);
    for (label, xs) in [
        ("geomean", &t.geomean),
        ("geomean (all hit)", &t.geomean_all_hit),
    ] {
        let best = xs.iter().flatten().copied().fold(0.0, f64::max);
        let mut tr = El::new("tr")
            .child(El::new("td").text(label))
            .child(El::new("td"));
        for x in xs {
            let mut cell = El::new("td").text(ratio_text(*x));
            if x.is_some_and(|x| x > 0.0 && x == best) {
                cell = cell.class("best");
            }
            tr.push(cell);
        }
        foot.push(tr);
    }
    let tries = doc.runs.iter().map(|r| r.tries).max().unwrap_or(1).max(1);
    let mut sec = El::new("section")
        .attr("id", "comparison")
        .child(El::new("h2").text("Comparison"))
        .child(
            El::new("table")
                .class("sortable")
                .attr("id", "comparison-table")
                .child(head(&cols))
                .child(tbody)
                .child(foot),
        )
        .child(El::new("p").class("note").text(format!(
            "Hit ratio = buggy tries / tries; bold: best of the row. geomean: over the {} \
             buggy programs, a ratio of 0 counted as 1/(2·tries) = {:.2e}; geomean (all hit): \
             over the {} programs every algorithm hit. Click a column to sort.",
            t.buggy_programs,
            crate::cmd::compare::zero_substitute(tries),
            t.all_hit_programs
        )));
    let missed = t.missed();
    if !missed.is_empty() {
        sec.push(
            El::new("p")
                .class("flag")
                .text(format!("Hit by no algorithm: {}.", missed.join(", "))),
        );
    }
    for f in &t.flags {
        sec.push(El::new("p").class("flag").text(format!("FLAG {f}")));
    }
    sec
}

/// Per program, the bars of every algorithm on one shared log axis.
fn ratio_section(doc: &Doc, t: &Table) -> El {
    let bars_of = |name: &str| -> Vec<Bar> {
        doc.runs
            .iter()
            .enumerate()
            .filter_map(|(k, run)| {
                doc.line(k, name).map(|(l, _)| Bar {
                    algo: run.algo.clone(),
                    colour: charts::colour(k),
                    hits: l.hits,
                    tries: l.tries,
                })
            })
            .collect()
    };
    let all: Vec<Bar> = t.rows.iter().flat_map(|r| bars_of(&r.name)).collect();
    let floor = charts::ratio_floor(&all);
    let mut charts_div = El::new("div").class("charts");
    for r in &t.rows {
        charts_div.push(
            El::new("figure")
                .class("ratio")
                .attr("data-program", &r.name)
                .child(El::new("figcaption").text(format!(
                    "{} (expect {})",
                    r.name,
                    r.expect.as_deref().unwrap_or("?")
                )))
                .child(charts::ratio_bars(&bars_of(&r.name), floor)),
        );
    }
    El::new("section")
        .attr("id", "ratios")
        .child(El::new("h2").text("Hit ratio per program"))
        .child(El::new("p").class("note").text(
            "Bars: hit ratio on a log scale (no bar: no hit); whiskers: the 95% Wilson score \
             interval of the ratio. All charts share one axis.",
        ))
        .child(charts_div)
}

/// Bugs found against tries (and seconds) per algorithm, over the buggy programs.
fn curve_section(doc: &Doc, t: &Table) -> El {
    let buggy: Vec<&str> = t
        .rows
        .iter()
        .filter(|r| r.expect.as_deref() != Some("none"))
        .map(|r| r.name.as_str())
        .collect();
    let firsts = |k: usize, f: &dyn Fn(&ProgLine) -> Option<f64>| -> Vec<f64> {
        buggy
            .iter()
            .filter_map(|n| doc.line(k, n))
            .filter(|(l, _)| l.hits > 0)
            .filter_map(|(l, _)| f(l))
            .collect()
    };
    let curves = |f: &dyn Fn(&ProgLine) -> Option<f64>| -> Vec<Curve> {
        doc.runs
            .iter()
            .enumerate()
            .map(|(k, r)| Curve {
                algo: r.algo.clone(),
                colour: charts::colour(k),
                firsts: firsts(k, f),
            })
            .collect()
    };
    let by_try = curves(&|l| l.first_hit.map(|i| (i + 1) as f64));
    let max_tries = doc.runs.iter().map(|r| r.tries).max().unwrap_or(1) as f64;
    let mut sec = El::new("section")
        .attr("id", "curves")
        .child(El::new("h2").text("Bugs found"))
        .child(El::new("p").class("note").text(format!(
            "Step curves over the {} buggy programs: a program counts as found at the try \
             (1-based) of its first bug under that algorithm, every program's tries \
             numbered from 1.",
            buggy.len()
        )))
        .child(
            El::new("figure")
                .class("curve-tries")
                .child(charts::step_curves(
                    &by_try,
                    max_tries,
                    buggy.len(),
                    "tries per program (log scale)",
                )),
        );
    let by_time = curves(&|l| l.first_hit_s.filter(|s| *s > 0.0));
    let timed = doc
        .lines
        .iter()
        .flatten()
        .any(|(l, _)| l.first_hit_s.is_some());
    if timed {
        let max_s = doc
            .lines
            .iter()
            .flatten()
            .map(|(l, _)| l.wall_s)
            .fold(1.0, f64::max);
        sec.push(El::new("p").class("note").text(
            "Time to first bug: seconds from the start of a program's tries (calibration and \
             profiling runs included) until its first buggy try finished.",
        ));
        sec.push(
            El::new("figure")
                .class("curve-time")
                .child(charts::step_curves(
                    &by_time,
                    max_s,
                    buggy.len(),
                    "seconds per program (log scale)",
                )),
        );
    } else {
        sec.push(El::new("p").class("note").text(
            "Time to first bug: not in these JSON files (written before poscheck recorded it).",
        ));
    }
    sec
}

/// Every program × algorithm in one sortable table.
fn detail_section(doc: &Doc, t: &Table) -> El {
    let mut tbody = El::new("tbody");
    for r in &t.rows {
        for (k, run) in doc.runs.iter().enumerate() {
            let Some((l, _)) = doc.line(k, &r.name) else {
                continue;
            };
            let ratio = if l.tries > 0 {
                l.hits as f64 / l.tries as f64
            } else {
                0.0
            };
            let (lo, hi) = charts::wilson(l.hits, l.tries);
            let outcomes: Vec<String> =
                l.outcomes.iter().map(|(k, n)| format!("{k}={n}")).collect();
            let mut tr = El::new("tr")
                .attr("data-program", &l.name)
                .attr("data-algo", &run.algo)
                .child(td(&l.name, &l.name))
                .child(td(&run.algo, &run.algo))
                .child(td(
                    l.expect.as_deref().unwrap_or("?"),
                    l.expect.as_deref().unwrap_or("?"),
                ))
                .child(td(l.hits.to_string(), l.hits))
                .child(td(l.tries.to_string(), l.tries))
                .child(td(ratio_text(Some(ratio)), ratio))
                .child(td(format!("{lo:.4} – {hi:.4}"), lo))
                .child(td(
                    l.first_hit.map_or("-".into(), |i| i.to_string()),
                    l.first_hit.map_or(-1.0, |i| i as f64),
                ))
                .child(td(secs_text(l.first_hit_s), l.first_hit_s.unwrap_or(-1.0)))
                .child(td(format!("{:.2}", l.wall_s), l.wall_s))
                .child(td(outcomes.join(" "), outcomes.join(" ")));
            if l.flag.is_some() {
                tr = tr.class("flag");
            }
            tbody.push(tr);
        }
    }
    El::new("section")
        .attr("id", "details")
        .child(El::new("h2").text("Every program under every algorithm"))
        .child(
            El::new("table")
                .class("sortable")
                .attr("id", "detail-table")
                .child(head(&[
                    "program",
                    "algo",
                    "expect",
                    "hits",
                    "tries",
                    "ratio",
                    "95% CI",
                    "first hit (try)",
                    "first bug (s)",
                    "wall (s)",
                    "outcomes",
                ]))
                .child(tbody),
        )
}

fn explore_section(doc: &Doc) -> El {
    let mut tbody = El::new("tbody");
    for (e, _) in &doc.explores {
        let name = program_name(&e.program);
        tbody.push(
            El::new("tr")
                .attr("data-program", &name)
                .attr("data-algo", &e.algo)
                .child(td(&name, &name))
                .child(td(
                    match e.bound {
                        Some(b) => format!("{} (bound {b})", e.algo),
                        None => e.algo.clone(),
                    },
                    &e.algo,
                ))
                .child(td(e.executions.to_string(), e.executions))
                .child(td(e.buggy.to_string(), e.buggy))
                .child(td(
                    e.first_bug_execution.map_or("-".into(), |i| i.to_string()),
                    e.first_bug_execution.map_or(-1.0, |i| i as f64),
                ))
                .child(td(secs_text(e.first_bug_s), e.first_bug_s.unwrap_or(-1.0)))
                .child(td(format!("{:.2}", e.elapsed_s), e.elapsed_s))
                .child(td(
                    if e.complete {
                        "complete".to_string()
                    } else {
                        e.stopped.clone().unwrap_or_else(|| "stopped".into())
                    },
                    u8::from(e.complete),
                )),
        );
    }
    El::new("section")
        .attr("id", "explore")
        .child(El::new("h2").text("Systematic exploration"))
        .child(
            El::new("table")
                .class("sortable")
                .child(head(&[
                    "program",
                    "algo",
                    "executions",
                    "buggy",
                    "first bug (execution)",
                    "first bug (s)",
                    "elapsed (s)",
                    "complete",
                ]))
                .child(tbody),
        )
}

fn bug_section(bugs: &[Bug]) -> El {
    let mut sec = El::new("section")
        .attr("id", "bugs")
        .child(El::new("h2").text(format!("Bugs ({})", bugs.len())));
    if bugs.is_empty() {
        sec.push(El::new("p").class("note").text("No bug was found."));
        return sec;
    }
    sec.push(El::new("p").class("note").text(
        "Each bug's interleaving: one lane per thread, one box per scheduling step (operation \
         and object; hover for the whole step), time to the right. Grey links: context \
         switches; red dashed links marked P: preemptions (the previous thread could have \
         continued, by the locks held and threads exited so far). Red box: the failing step.",
    ));
    for (n, b) in bugs.iter().enumerate() {
        let mut art = El::new("article")
            .class("bug")
            .attr("id", format!("bug-{n}"))
            .attr("data-program", &b.program)
            .attr("data-algo", &b.algo)
            .attr("data-outcome", &b.kind)
            .child(El::new("h3").text(format!("{} · {} · {}", b.program, b.algo, b.kind)));
        if !b.message.is_empty() {
            art.push(El::new("p").class("msg").text(&b.message));
        }
        match &b.steps {
            Ok((try_index, steps)) => {
                let sw = lanes::switches(steps);
                let count = |k: Switch| sw.iter().filter(|s| **s == k).count();
                let failing = lanes::failing_step(steps, Some(&b.message));
                art.push(El::new("p").class("note").text(format!(
                    "try {try_index}: {} steps, {} context switches, {} of them preemptions{}",
                    steps.len(),
                    count(Switch::Plain) + count(Switch::Preemption),
                    count(Switch::Preemption),
                    if steps.len() > lanes::MAX_DRAWN {
                        format!(
                            "; the last {} steps are drawn (the failing step is among them)",
                            lanes::MAX_DRAWN
                        )
                    } else {
                        String::new()
                    }
                )));
                art.push(
                    El::new("div")
                        .class("lanes-wrap")
                        .child(lanes::diagram(steps, failing)),
                );
            }
            Err(why) => art.push(El::new("p").class("note").text(why)),
        }
        // Reproduce it, read it step by step with source lines, shrink it to the fewest
        // preemptions, stop at its failing step under gdb.
        let file = shell_word(&b.schedule);
        for verb in ["replay", "replay --trace", "minimize", "debug"] {
            art.push(
                El::new("pre")
                    .class("cmd")
                    .text(format!("poscheck {verb} {file}")),
            );
        }
        sec.push(art);
    }
    sec
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_doc(algo: &str, progs: &[(&str, u64, Option<&str>)]) -> Input {
        Input {
            label: format!("{algo}.json"),
            dir: PathBuf::from("/nonexistent"),
            value: json!({
                "algo": algo, "seed": 1, "tries": 10,
                "programs": progs.iter().enumerate().map(|(k, (name, hits, sched))| json!({
                    "name": name, "index": k, "expect": "assert", "tries": 10, "hits": hits,
                    "hit_ratio": *hits as f64 / 10.0,
                    "first_hit": (*hits > 0).then_some(3),
                    "schedule": sched,
                    "first_outcome": {"kind": "assert", "text": "x", "thread": "0.1"},
                })).collect::<Vec<_>>(),
            }),
        }
    }

    #[test]
    fn names_from_the_json_are_escaped_everywhere() {
        let evil = "a<script>alert(1)</script>\"&'";
        let doc =
            Doc::from_inputs(vec![run_doc("rw", &[(evil, 2, Some("/no/such.json"))])]).unwrap();
        let page = render(&doc);
        assert!(!page.contains("<script>alert"), "unescaped name");
        assert!(page.contains("a&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;"));
        // One script element: the report's own.
        assert_eq!(page.matches("<script>").count(), 1);
        // The missing schedule file is said, with the outcome from the JSON line.
        assert!(page.contains("/no/such.json was not found"), "{page}");
        assert!(page.contains("data-outcome=\"assert\""));
        assert!(page.contains("poscheck replay /no/such.json</pre>"));
        for verb in ["replay --trace", "minimize", "debug"] {
            assert!(
                page.contains(&format!("poscheck {verb} /no/such.json</pre>")),
                "{verb}"
            );
        }
    }

    #[test]
    fn runs_of_one_algorithm_from_several_files_are_put_together_once() {
        let doc = Doc::from_inputs(vec![
            run_doc("rw", &[("p", 1, None)]),
            run_doc("rw", &[("q", 0, None)]),
            run_doc("pos", &[("p", 0, None), ("q", 4, None)]),
        ])
        .unwrap();
        let t = doc.table.as_ref().unwrap();
        assert_eq!(t.algos, ["rw", "pos"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.bugs_hit, [1, 1]);
        let page = render(&doc);
        assert_eq!(page.matches("<tr data-program=").count(), 2 + 4);
        assert!(!page.contains("Interrupted"));
        let mut cut = run_doc("rw", &[("p", 1, None)]);
        cut.value["interrupted"] = json!(true);
        let page = render(&Doc::from_inputs(vec![cut]).unwrap());
        assert!(page.contains("Interrupted (SIGINT): rw.json hold(s) the finished tries only."));
        let twice = Doc::from_inputs(vec![
            run_doc("rw", &[("p", 1, None)]),
            run_doc("rw", &[("p", 1, None)]),
        ]);
        let e = format!("{:#}", twice.err().unwrap());
        assert!(e.contains("program p appears twice under rw"), "{e}");
        let none = Doc::from_inputs(vec![Input {
            label: "x.json".into(),
            dir: PathBuf::from("."),
            value: json!({"a": 1}),
        }]);
        assert!(format!("{:#}", none.err().unwrap()).starts_with("x.json: not a poscheck"));
        assert!(Doc::from_inputs(Vec::new()).is_err());
    }

    #[test]
    fn shell_words_are_quoted_when_they_need_it() {
        assert_eq!(shell_word("out/a.rw.seed1.json"), "out/a.rw.seed1.json");
        assert_eq!(shell_word("out/a b.json"), "'out/a b.json'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
