//! The HTML report of a real comparison: `compare --html` and `report FILE.json -o` over a
//! small suite cut from `benchmarks/` (two buggy programs, one bug-free; two algorithms, 40
//! tries, seed 7) give one self-contained page with a table row per program × algorithm, a
//! bar chart per program, a curve per algorithm, a lane diagram per bug matching its
//! schedule file, non-empty SVG paths and no external URL. Then headless Chromium (skipped,
//! with a message, where it is not installed) renders the page: a screenshot that is not
//! blank and shows the charts' colours, no console message, and the table sorting works.
//!
//! libpos.so must sit next to the `poscheck` binary (`cargo build -p pos-preload`, same
//! profile), as for the other end-to-end tests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::common;

use common::{text, POSCHECK};

const PROGRAMS: &[&str] = &["deadlock_2", "lost_wakeup", "mutex_counter_ok"];
const ALGOS: &[&str] = &["rw", "pos"];

fn benchmarks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks")
}

fn poscheck(dir: &Path, args: &[&str]) -> Output {
    Command::new(POSCHECK)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cannot run poscheck")
}

/// The suite with [`PROGRAMS`] (their manifest entries as they are), built, compared under
/// [`ALGOS`] with `--json` and `--html`: the directory, the JSON and the page.
fn session() -> &'static (PathBuf, Value, String) {
    static S: OnceLock<(PathBuf, Value, String)> = OnceLock::new();
    S.get_or_init(|| {
        common::require_libpos();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
        let _ = std::fs::remove_dir_all(&dir);
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        for e in std::fs::read_dir(benchmarks().join("src")).unwrap() {
            let p = e.unwrap().path();
            let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
            if p.extension().is_some_and(|x| x == "h") || PROGRAMS.contains(&stem.as_str()) {
                std::fs::copy(&p, src.join(p.file_name().unwrap())).unwrap();
            }
        }
        let text_m = std::fs::read_to_string(benchmarks().join("manifest.toml")).unwrap();
        let all: toml::Table = toml::from_str(&text_m).unwrap();
        let progs: Vec<toml::Value> = all["program"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| PROGRAMS.contains(&p["name"].as_str().unwrap()))
            .cloned()
            .collect();
        assert_eq!(progs.len(), PROGRAMS.len());
        let mut m = toml::Table::new();
        m.insert("program".into(), toml::Value::Array(progs));
        std::fs::write(dir.join("manifest.toml"), toml::to_string(&m).unwrap()).unwrap();
        let out = poscheck(&dir, &["build", dir.to_str().unwrap()]);
        assert!(out.status.success(), "build failed: {}", text(&out));
        let out = poscheck(
            &dir,
            &[
                "compare",
                "--algos",
                &ALGOS.join(","),
                "--tries",
                "40",
                "--seed",
                "7",
                "--jobs",
                "2",
                "--json",
                "compare.json",
                "--html",
                "report.html",
                "--out-dir",
                "out",
                ".",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "bugs are found: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("report written to report.html"),
            "{}",
            text(&out)
        );
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap())
                .unwrap();
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        (dir, json, html)
    })
}

/// The program lines of `algo` in the comparison JSON.
fn lines<'a>(json: &'a Value, algo: &str) -> &'a Vec<Value> {
    json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["algo"] == algo)
        .unwrap()["programs"]
        .as_array()
        .unwrap()
}

/// The text of the element that starts at `open` (the first match) up to its `close` tag.
fn element<'a>(html: &'a str, open: &str, close: &str) -> &'a str {
    let start = html
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in the page"));
    let end = html[start..].find(close).unwrap() + start + close.len();
    &html[start..end]
}

/// Every `d="..."` attribute of the markup.
fn path_data(html: &str) -> Vec<&str> {
    html.match_indices(" d=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn the_page_has_every_part_for_every_program_algorithm_and_bug() {
    let (dir, json, html) = session();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    // One detail row per program × algorithm, and the comparison table's row per program.
    for p in PROGRAMS {
        for a in ALGOS {
            let row = format!("<tr data-program=\"{p}\" data-algo=\"{a}\"");
            assert_eq!(html.matches(&row).count(), 1, "{row}");
        }
        let cmp = element(html, "id=\"comparison-table\"", "</table>");
        assert_eq!(
            cmp.matches(&format!("<tr data-program=\"{p}\">")).count(),
            1
        );
        // A bar chart per program, a bar per algorithm in it.
        let fig = element(
            html,
            &format!("<figure class=\"ratio\" data-program=\"{p}\""),
            "</figure>",
        );
        assert_eq!(fig.matches("<svg").count(), 1, "{fig}");
        assert_eq!(
            fig.matches("<g class=\"bar\"").count(),
            ALGOS.len(),
            "{fig}"
        );
    }
    assert_eq!(
        html.matches("<figure class=\"ratio\"").count(),
        PROGRAMS.len()
    );
    // The summary: bugs hit per algorithm, in the table's footer.
    let foot = element(html, "<tfoot>", "</tfoot>");
    assert!(
        foot.contains("bugs hit") && foot.contains("geomean"),
        "{foot}"
    );
    // A step curve per algorithm, over tries and over seconds, each with a path that steps
    // once per bug the JSON says the algorithm found.
    for fig in ["curve-tries", "curve-time"] {
        let f = element(html, &format!("<figure class=\"{fig}\""), "</figure>");
        for a in ALGOS {
            let curve = element(f, &format!("class=\"curve\" data-algo=\"{a}\""), "</path>");
            let found = lines(json, a)
                .iter()
                .filter(|l| l["expect"] != "none" && l["hits"].as_u64().unwrap() > 0)
                .count();
            assert!(found > 0, "{a} found no bug");
            assert!(
                curve.contains(&format!("{a}: {found} of 2 bugs found")),
                "{curve}"
            );
        }
        assert_eq!(f.matches("class=\"curve\"").count(), ALGOS.len(), "{f}");
    }
    // The time to first bug is in the JSON (new field) and the table.
    let d2 = &lines(json, "rw")[0];
    assert_eq!(d2["name"], "deadlock_2");
    assert!(d2["first_hit_s"].as_f64().unwrap() > 0.0, "{d2}");
    // A lane diagram per bug: every program × algorithm with a hit (never the bug-free one),
    // its boxes those of its schedule file, one failing step, its replay command.
    let mut bugs = 0;
    for a in ALGOS {
        for l in lines(json, a) {
            let name = l["name"].as_str().unwrap();
            let open = format!("data-program=\"{name}\" data-algo=\"{a}\" data-outcome=");
            if l["hits"].as_u64().unwrap() == 0 {
                assert!(!html.contains(&open), "{name} {a}: no bug, no diagram");
                continue;
            }
            assert_ne!(name, "mutex_counter_ok");
            bugs += 1;
            let art = element(html, &open, "</article>");
            let sched_path = l["schedule"].as_str().unwrap();
            let sched: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(sched_path)).unwrap())
                    .unwrap();
            let steps = sched["steps"].as_array().unwrap();
            assert!(!steps.is_empty());
            assert_eq!(art.matches("<svg").count(), 1, "{art}");
            assert!(
                art.contains(&format!("data-steps=\"{}\"", steps.len())),
                "{art}"
            );
            assert_eq!(
                art.matches("<g class=\"step").count(),
                steps.len().min(400),
                "{name} {a}"
            );
            assert_eq!(art.matches("class=\"step failing\"").count(), 1, "{art}");
            let threads: std::collections::BTreeSet<&str> = steps
                .iter()
                .map(|s| s["thread"].as_str().unwrap())
                .collect();
            assert_eq!(art.matches("class=\"lane\"").count(), threads.len());
            assert!(
                art.contains(&format!("poscheck replay {sched_path}</pre>")),
                "{art}"
            );
            // The outcome message of the schedule file.
            let detail = sched["detail"].as_str().unwrap();
            assert!(detail.starts_with("deadlock"), "{detail}");
        }
    }
    assert!(bugs >= 4, "{bugs} bugs");
    assert_eq!(html.matches("<article class=\"bug\"").count(), bugs);
    assert!(html.contains(&format!("Bugs ({bugs})")));
    // Every SVG path draws something.
    let ds = path_data(html);
    assert!(ds.len() > 10, "{} paths", ds.len());
    for d in ds {
        assert!(d.starts_with('M') && d.contains('L'), "path {d:?}");
    }
    // Self-contained: nothing to fetch, and no URL but the SVG namespace.
    for bad in [
        "src=", "href=", "url(", "@import", "<link", "<img", "<iframe",
    ] {
        assert!(!html.contains(bad), "the page has {bad}");
    }
    let urls = html.matches("http").count();
    let ns = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(urls, ns, "a URL other than the SVG namespace");
    assert!(ns >= PROGRAMS.len() + 2 + bugs);
}

#[test]
fn report_reads_the_json_from_elsewhere_and_older_files() {
    let (dir, json, html) = session();
    // From another directory: the schedule paths are found next to the JSON file.
    let other = tempfile::tempdir().unwrap();
    let page = other.path().join("r.html");
    let out = poscheck(
        other.path(),
        &[
            "report",
            dir.join("compare.json").to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let again = std::fs::read_to_string(&page).unwrap();
    let bugs = html.matches("<article class=\"bug\"").count();
    assert_eq!(again.matches(" class=\"lanes\"").count(), bugs);
    assert!(!again.contains("was not found"));
    // Its replay commands name the files where they were found.
    let first = lines(json, "rw")[0]["schedule"].as_str().unwrap();
    assert!(
        again.contains(&format!(
            "poscheck replay {}</pre>",
            dir.join(first).display()
        )),
        "{again}"
    );
    // A file written before the time to first bug was recorded still loads; the page says
    // the time is missing instead of drawing its curve.
    let mut old = json.clone();
    for r in old["runs"].as_array_mut().unwrap() {
        for p in r["programs"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("first_hit_s");
        }
    }
    let old_json = other.path().join("old.json");
    std::fs::write(&old_json, old.to_string()).unwrap();
    let out = poscheck(
        dir,
        &[
            "report",
            old_json.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let page_old = std::fs::read_to_string(&page).unwrap();
    assert!(page_old.contains("not in these JSON files"));
    assert!(!page_old.contains("curve-time"));
    assert_eq!(page_old.matches("class=\"curve\"").count(), ALGOS.len());
    // A run's JSON and a second copy of the same session: the program appears twice.
    let out = poscheck(
        dir,
        &[
            "report",
            "compare.json",
            "compare.json",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("appears twice"), "{}", text(&out));
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let (dir, _, _) = session();
    let other = tempfile::tempdir().unwrap();
    let not_report = other.path().join("x.json");
    std::fs::write(&not_report, "{\"a\": 1}").unwrap();
    let not_json = other.path().join("y.json");
    std::fs::write(&not_json, "{").unwrap();
    let page = other.path().join("p.html");
    for (file, says) in [
        ("/nonexistent/z.json", "cannot read /nonexistent/z.json"),
        (not_report.to_str().unwrap(), "not a poscheck run, compare"),
        (not_json.to_str().unwrap(), "not JSON"),
    ] {
        let out = poscheck(dir, &["report", file, "-o", page.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("poscheck: error: ") && err.contains(says),
            "{err}"
        );
    }
    assert!(!page.exists());
    let out = poscheck(dir, &["report", "compare.json"]);
    assert_eq!(out.status.code(), Some(2), "-o is required: {}", text(&out));
}

/// `chromium` on PATH, or `None` with the reason printed.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("chromium"))
            .find(|c| c.is_file())
    });
    if found.is_none() {
        println!(
            "SKIPPED: chromium is not installed (scripts/install-deps.sh installs it): the \
             page is not rendered"
        );
    }
    found
}

/// Headless Chromium on `page` with `mode` (`--screenshot=...` or `--dump-dom`): stdout,
/// and the console messages from its log.
fn render(chrome: &Path, page: &Path, mode: &[&str]) -> (String, Vec<String>) {
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,2400",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(mode)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("cannot run chromium");
    assert!(out.status.success(), "{}", text(&out));
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

#[test]
fn headless_chromium_renders_the_charts_without_console_errors() {
    let Some(chrome) = chromium() else {
        return;
    };
    let (dir, _, html) = session();
    // The console check itself: a page whose script fails is caught.
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><script>undefinedFn();</script>",
    )
    .unwrap();
    let (_, console) = render(&chrome, &bad, &["--dump-dom"]);
    assert!(
        console.iter().any(|l| l.contains("undefinedFn")),
        "{console:?}"
    );
    // The report: a screenshot, no console message.
    let shot = dir.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let (_, console) = render(
        &chrome,
        &dir.join("report.html"),
        &[&format!("--screenshot={}", shot.display())],
    );
    assert!(console.is_empty(), "console: {console:?}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    assert!(px >= 3, "{:?}", info.color_type);
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let inked = pixels.iter().filter(|p| p[..3] != [255, 255, 255]).count();
    let share = inked as f64 / pixels.len() as f64;
    assert!(
        share > 0.05,
        "the screenshot is nearly blank ({share:.3} inked)"
    );
    // The charts' colours are on screen: the first algorithm's (#1f77b4, the bars and
    // curve of rw) and the second's (#d62728, pos).
    for (r, g, b) in [(0x1f, 0x77, 0xb4), (0xd6, 0x27, 0x28)] {
        let n = pixels
            .iter()
            .filter(|p| p[0].abs_diff(r) < 8 && p[1].abs_diff(g) < 8 && p[2].abs_diff(b) < 8)
            .count();
        assert!(n > 500, "colour #{r:02x}{g:02x}{b:02x}: {n} pixels");
    }
    // Sorting: the page with a script that clicks the detail table's ratio header twice
    // and logs the order; ascending, then descending.
    let probe = html.replace(
        "</body>",
        "<script>var t=document.getElementById('detail-table');\
         var col=function(){return Array.from(t.tBodies[0].rows).map(function(r){\
         return r.cells[5].dataset.v;}).join(' ');};\
         t.tHead.rows[0].cells[5].click();console.log('up '+col());\
         t.tHead.rows[0].cells[5].click();console.log('down '+col());</script></body>",
    );
    let probe_page = dir.join("probe.html");
    std::fs::write(&probe_page, probe).unwrap();
    let (dom, console) = render(&chrome, &probe_page, &["--dump-dom"]);
    assert!(dom.contains("<svg"), "{dom}");
    let order = |dir: &str| -> Vec<f64> {
        let line = console
            .iter()
            .find(|l| l.contains(&format!("\"{dir} ")))
            .unwrap_or_else(|| panic!("no {dir} line: {console:?}"));
        let inner = line.split('"').nth(1).unwrap();
        inner
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let (up, down) = (order("up"), order("down"));
    assert_eq!(up.len(), PROGRAMS.len() * ALGOS.len());
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "{up:?}");
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "{down:?}");
    assert!(up.first() < up.last(), "{up:?}");
    assert_eq!(console.len(), 2, "{console:?}");
}

#[test]
fn run_and_explore_write_the_page_too() {
    let (dir, _, _) = session();
    let bin = dir.join("bin/deadlock_2");
    let out = poscheck(
        dir,
        &[
            "run",
            "--algo",
            "pos",
            "--tries",
            "20",
            "--seed",
            "3",
            "--jobs",
            "2",
            "--json",
            "run.json",
            "--html",
            "run.html",
            "--out-dir",
            "out-run",
        ]
        .into_iter()
        .chain([bin.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let hits = run["programs"][0]["hits"].as_u64().unwrap();
    assert!(hits > 0, "{run}");
    let page = std::fs::read_to_string(dir.join("run.html")).unwrap();
    assert_eq!(
        page.matches("<tr data-program=\"deadlock_2\" data-algo=\"pos\"")
            .count(),
        1
    );
    assert_eq!(page.matches("<figure class=\"ratio\"").count(), 1);
    assert_eq!(page.matches("<article class=\"bug\"").count(), 1);
    assert!(page.contains(&format!("{hits}/20")), "the bar's label");
    // explore: its summary row and its bug's interleaving.
    let out = poscheck(
        dir,
        &[
            "explore",
            "--algo",
            "odpor",
            "--max-executions",
            "50",
            "--json",
            "explore.json",
            "--html",
            "explore.html",
            "--out-dir",
            "out-explore",
            bin.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("explore.json")).unwrap()).unwrap();
    assert!(doc["first_bug_s"].as_f64().unwrap() > 0.0, "{doc}");
    let page = std::fs::read_to_string(dir.join("explore.html")).unwrap();
    assert!(page.contains("<section id=\"explore\">"));
    assert_eq!(
        page.matches("<tr data-program=\"deadlock_2\" data-algo=\"odpor\"")
            .count(),
        1
    );
    let art = element(
        &page,
        "data-program=\"deadlock_2\" data-algo=\"explore odpor\" data-outcome=\"deadlock\"",
        "</article>",
    );
    assert_eq!(art.matches("class=\"step failing\"").count(), 1);
    assert!(art.contains("poscheck replay out-explore/deadlock_2.explore-odpor.bug0.json"));
    // No sampling runs: no comparison table or charts.
    assert!(!page.contains("comparison-table") && !page.contains("<figure"));
    // The two together in one page (`report` takes several files of either kind).
    let out = poscheck(
        dir,
        &["report", "run.json", "explore.json", "-o", "both.html"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let both = std::fs::read_to_string(dir.join("both.html")).unwrap();
    assert_eq!(both.matches("<article class=\"bug\"").count(), 2);
}

#[test]
fn merge_writes_the_page_of_the_merged_runs() {
    let (dir, _, html) = session();
    let out = poscheck(dir, &["merge", "compare.json", "--html", "merged.html"]);
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(dir.join("merged.html")).unwrap();
    for p in PROGRAMS {
        for a in ALGOS {
            let row = format!("<tr data-program=\"{p}\" data-algo=\"{a}\"");
            assert_eq!(page.matches(&row).count(), 1, "{row}");
        }
    }
    assert_eq!(
        page.matches("<article class=\"bug\"").count(),
        html.matches("<article class=\"bug\"").count()
    );
}
