//! The report's charts: hit ratios as bars on a logarithmic axis with 95 % Wilson score
//! intervals, and step curves of bugs found against tries (or seconds) per algorithm.

use super::svg::{self, num, El, PathData};

/// z of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson score interval of `hits` successes in `n` trials (Wilson 1927): unlike
/// the normal approximation it stays inside [0, 1] and is not empty at 0 or n hits.
pub fn wilson(hits: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (hits.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    let lo = if hits == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if k >= n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

/// The colour of the `k`-th algorithm (cycling through ten).
pub fn colour(k: usize) -> &'static str {
    const C: [&str; 10] = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    C[k % C.len()]
}

/// A logarithmic axis over [10^lo, 10^hi] mapped onto [x0, x1].
#[derive(Clone, Copy, Debug)]
pub struct LogAxis {
    pub lo: i32,
    pub hi: i32,
    pub x0: f64,
    pub x1: f64,
}

impl LogAxis {
    /// An axis of whole decades covering [min, max] (both > 0).
    pub fn covering(min: f64, max: f64, x0: f64, x1: f64) -> LogAxis {
        let lo = min.max(1e-12).log10().floor() as i32;
        let hi = (max.max(min).max(1e-12).log10().ceil() as i32).max(lo + 1);
        LogAxis { lo, hi, x0, x1 }
    }

    /// Screen position of `v` (values outside the axis are clamped to its ends).
    pub fn pos(&self, v: f64) -> f64 {
        let t = if v > 0.0 {
            (v.log10() - f64::from(self.lo)) / f64::from(self.hi - self.lo)
        } else {
            0.0
        };
        self.x0 + t.clamp(0.0, 1.0) * (self.x1 - self.x0)
    }

    /// Tick marks and labels at each decade, drawn from y0 (top) to y1 (bottom), labels
    /// under y1.
    fn ticks(&self, y0: f64, y1: f64, label: impl Fn(i32) -> String) -> El {
        let mut g = El::new("g").class("axis");
        for d in self.lo..=self.hi {
            let x = self.pos(10f64.powi(d));
            g.push(svg::line(x, y0, x, y1).class("grid"));
            g.push(
                svg::text(x, y1 + 12.0, label(d))
                    .attr("text-anchor", "middle")
                    .class("tick"),
            );
        }
        g
    }
}

/// A decade as a ratio label: `1`, `0.1`, `0.01`, `1e-4`.
fn ratio_label(d: i32) -> String {
    match d {
        0 => "1".into(),
        -3..=-1 => format!("{}", 10f64.powi(d)),
        _ => format!("1e{d}"),
    }
}

/// One bar of a program's chart.
#[derive(Clone, Debug)]
pub struct Bar {
    pub algo: String,
    pub colour: &'static str,
    pub hits: u64,
    pub tries: u64,
}

/// The smallest value the ratio axis must show for `bars`: the lowest non-zero ratio or
/// interval end, and half the smallest measurable ratio.
pub fn ratio_floor<'a>(bars: impl IntoIterator<Item = &'a Bar>) -> f64 {
    let mut m: f64 = 1.0;
    for b in bars {
        if b.tries == 0 {
            continue;
        }
        let (lo, hi) = wilson(b.hits, b.tries);
        m = m.min(0.5 / b.tries as f64).min(hi);
        if lo > 0.0 {
            m = m.min(lo);
        }
    }
    m
}

const BAR_H: f64 = 16.0;
const BAR_GAP: f64 = 6.0;
const BAR_LABEL_W: f64 = 70.0;
const BAR_PLOT_W: f64 = 360.0;
const BAR_VALUE_W: f64 = 150.0;

/// Hit ratio per algorithm as horizontal bars on the log axis from `floor` to 1, each with
/// its 95 % Wilson interval as a whisker. A ratio of 0 has no bar: "0" and the interval.
pub fn ratio_bars(bars: &[Bar], floor: f64) -> El {
    let axis = LogAxis::covering(floor, 1.0, BAR_LABEL_W, BAR_LABEL_W + BAR_PLOT_W);
    let plot_h = bars.len() as f64 * (BAR_H + BAR_GAP) + BAR_GAP;
    let (w, h) = (BAR_LABEL_W + BAR_PLOT_W + BAR_VALUE_W, plot_h + 20.0);
    let mut root = svg::svg(w, h)
        .class("bars")
        .child(axis.ticks(0.0, plot_h, ratio_label));
    for (k, b) in bars.iter().enumerate() {
        let y = BAR_GAP + k as f64 * (BAR_H + BAR_GAP);
        let mid = y + BAR_H / 2.0;
        root.push(
            svg::text(BAR_LABEL_W - 6.0, mid + 4.0, b.algo.clone())
                .attr("text-anchor", "end")
                .class("algo"),
        );
        let ratio = if b.tries > 0 {
            b.hits as f64 / b.tries as f64
        } else {
            0.0
        };
        let (lo, hi) = wilson(b.hits, b.tries);
        let tip = format!(
            "{}: {} of {} tries = {:.4} (95% Wilson interval {:.4} to {:.4})",
            b.algo, b.hits, b.tries, ratio, lo, hi
        );
        let mut g = El::new("g")
            .class("bar")
            .attr("data-algo", &b.algo)
            .tooltip(tip);
        if ratio > 0.0 {
            let x1 = axis.pos(ratio);
            g.push(
                PathData::new()
                    .move_to(axis.x0, y)
                    .line_to(x1, y)
                    .line_to(x1, y + BAR_H)
                    .line_to(axis.x0, y + BAR_H)
                    .close()
                    .path()
                    .attr("fill", b.colour),
            );
        }
        let (xl, xh) = (axis.pos(lo), axis.pos(hi));
        g.push(
            PathData::new()
                .move_to(xl, mid)
                .line_to(xh, mid)
                .move_to(xl, mid - 4.0)
                .line_to(xl, mid + 4.0)
                .move_to(xh, mid - 4.0)
                .line_to(xh, mid + 4.0)
                .path()
                .class("ci"),
        );
        let value = if b.hits == 0 {
            format!("0 (0/{})", b.tries)
        } else {
            format!("{ratio:.4} ({}/{})", b.hits, b.tries)
        };
        g.push(svg::text(axis.x1 + 8.0, mid + 4.0, value).class("value"));
        root.push(g);
    }
    root.push(
        svg::text(
            axis.x0 + BAR_PLOT_W / 2.0,
            h - 1.0,
            "hit ratio (log scale), whiskers: 95% Wilson interval",
        )
        .attr("text-anchor", "middle")
        .class("caption"),
    );
    root
}

/// One algorithm's curve: when (in tries, or seconds) each program's first bug came.
#[derive(Clone, Debug)]
pub struct Curve {
    pub algo: String,
    pub colour: &'static str,
    /// Per program with a bug, the x of its first bug (> 0).
    pub firsts: Vec<f64>,
}

const CURVE_W: f64 = 560.0;
const CURVE_H: f64 = 260.0;
const CURVE_L: f64 = 48.0;
const CURVE_B: f64 = 36.0;
const CURVE_T: f64 = 10.0;
const CURVE_LEGEND_W: f64 = 120.0;

/// Bugs found (programs whose first bug came at or before x) against x on a log axis from 1
/// (or the smallest x) to `x_max`, one step curve per algorithm, out of `total` programs.
pub fn step_curves(curves: &[Curve], x_max: f64, total: usize, x_label: &str) -> El {
    let x_min = curves
        .iter()
        .flat_map(|c| c.firsts.iter().copied())
        .fold(1.0f64, f64::min)
        .max(1e-6);
    let axis = LogAxis::covering(x_min, x_max.max(x_min), CURVE_L, CURVE_W - 10.0);
    let x_end = 10f64.powi(axis.hi);
    let plot_b = CURVE_H - CURVE_B;
    let total = total.max(1);
    let y_of = |n: usize| plot_b - (plot_b - CURVE_T) * n as f64 / total as f64;
    let mut root = svg::svg(CURVE_W + CURVE_LEGEND_W, CURVE_H)
        .class("curves")
        .child(axis.ticks(CURVE_T, plot_b, |d| {
            if (-2..=5).contains(&d) {
                num(10f64.powi(d))
            } else {
                format!("1e{d}")
            }
        }));
    let mut yaxis = El::new("g").class("axis");
    let step = total.div_ceil(8).max(1);
    // Multiples of the step, then the total, unless the last multiple is too close to it.
    let ticks = (0..total)
        .step_by(step)
        .filter(|n| *n == 0 || total - n >= step.div_ceil(2))
        .chain([total]);
    for n in ticks {
        let y = y_of(n);
        yaxis.push(svg::line(CURVE_L, y, CURVE_W - 10.0, y).class("grid"));
        yaxis.push(
            svg::text(CURVE_L - 6.0, y + 4.0, n.to_string())
                .attr("text-anchor", "end")
                .class("tick"),
        );
    }
    root.push(yaxis);
    for (k, c) in curves.iter().enumerate() {
        let mut xs = c.firsts.clone();
        xs.sort_by(f64::total_cmp);
        let mut d = PathData::new().move_to(axis.pos(10f64.powi(axis.lo)), y_of(0));
        for (n, x) in xs.iter().enumerate() {
            let px = axis.pos(*x);
            d = d.line_to(px, y_of(n)).line_to(px, y_of(n + 1));
        }
        d = d.line_to(axis.pos(x_end), y_of(xs.len()));
        root.push(
            d.path()
                .class("curve")
                .attr("data-algo", &c.algo)
                .attr("stroke", c.colour)
                .tooltip(format!("{}: {} of {total} bugs found", c.algo, xs.len())),
        );
        let ly = CURVE_T + 8.0 + k as f64 * 18.0;
        let lx = CURVE_W + 4.0;
        root.push(
            PathData::new()
                .move_to(lx, ly)
                .line_to(lx + 18.0, ly)
                .path()
                .class("legend-line")
                .attr("stroke", c.colour),
        );
        root.push(
            svg::text(lx + 24.0, ly + 4.0, format!("{} ({})", c.algo, xs.len())).class("algo"),
        );
    }
    root.push(
        svg::text((CURVE_L + CURVE_W) / 2.0, CURVE_H - 4.0, x_label)
            .attr("text-anchor", "middle")
            .class("caption"),
    );
    root.push(
        svg::text(12.0, (CURVE_T + plot_b) / 2.0, "bugs found")
            .attr("text-anchor", "middle")
            .attr(
                "transform",
                format!("rotate(-90 12 {})", num((CURVE_T + plot_b) / 2.0)),
            )
            .class("caption"),
    );
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_known_values() {
        // 0 of 10: upper bound z²/(n+z²) = 0.2775.
        let (lo, hi) = wilson(0, 10);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.2775).abs() < 1e-3, "{hi}");
        // 5 of 10: 0.2366 to 0.7634.
        let (lo, hi) = wilson(5, 10);
        assert!((lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3);
        // 10 of 10 mirrors 0 of 10.
        let (lo, hi) = wilson(10, 10);
        assert!((lo - 0.7225).abs() < 1e-3 && hi == 1.0, "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn log_axis_maps_decades_evenly() {
        let a = LogAxis::covering(0.004, 1.0, 0.0, 300.0);
        assert_eq!((a.lo, a.hi), (-3, 0));
        assert!((a.pos(0.01) - 100.0).abs() < 1e-9);
        assert!((a.pos(1.0) - 300.0).abs() < 1e-9);
        assert_eq!(a.pos(0.0), 0.0);
        assert_eq!(a.pos(1e-9), 0.0);
    }

    #[test]
    fn bars_have_a_bar_only_where_the_ratio_is_not_zero() {
        let bars = vec![
            Bar {
                algo: "rw".into(),
                colour: colour(0),
                hits: 9,
                tries: 50,
            },
            Bar {
                algo: "pos".into(),
                colour: colour(1),
                hits: 0,
                tries: 50,
            },
        ];
        let text = ratio_bars(&bars, ratio_floor(&bars)).render();
        assert_eq!(text.matches("class=\"bar\"").count(), 2);
        assert_eq!(text.matches("fill=\"#1f77b4\"").count(), 1);
        assert_eq!(text.matches("class=\"ci\"").count(), 2);
        assert!(
            text.contains("0.1800 (9/50)") && text.contains("0 (0/50)"),
            "{text}"
        );
    }

    #[test]
    fn curves_step_up_once_per_bug() {
        let c = Curve {
            algo: "rw".into(),
            colour: colour(0),
            firsts: vec![3.0, 1.0],
        };
        let text = step_curves(&[c], 100.0, 4, "tries").render();
        let d = text
            .split("class=\"curve\"")
            .next()
            .and_then(|s| s.rsplit("d=\"").next())
            .unwrap();
        // Start, two steps (two points each), the end.
        assert_eq!(d.matches('L').count(), 5, "{d}");
        assert!(text.contains("rw (2)"), "{text}");
        // The y ticks: 0 to 4 by 1; for 36 bugs by 5, and 36 without 35 next to it.
        let ticks = |t: &str| -> Vec<String> {
            t.split("text-anchor=\"end\" class=\"tick\">")
                .skip(1)
                .map(|s| s.split('<').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(ticks(&text), ["0", "1", "2", "3", "4"]);
        let many = step_curves(&[], 100.0, 36, "tries").render();
        assert_eq!(ticks(&many), ["0", "5", "10", "15", "20", "25", "30", "36"]);
    }
}
