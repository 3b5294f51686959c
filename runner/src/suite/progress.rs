//! Progress of a program's tries while they run: on a terminal, one live line per worker
//! (`indicatif`): algorithm, program, tries done/total, hits, tries/s, ETA and the try the
//! worker is running; off a terminal (a CI log, a file), one plain line to stderr every
//! [`PLAIN_EVERY`] (or `$POSCHECK_PROGRESS_SECS` seconds). Progress only reads the counts: it
//! changes no result and no seed.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a plain progress line is printed off a terminal, unless
/// `$POSCHECK_PROGRESS_SECS` (a positive number of seconds) says otherwise.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The interval of plain progress lines (see [`PLAIN_EVERY`]).
fn plain_every() -> Duration {
    std::env::var("POSCHECK_PROGRESS_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e6)
        .map_or(PLAIN_EVERY, Duration::from_secs_f64)
}

/// The counts of one program's tries so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub done: u64,
    pub total: u64,
    pub hits: u64,
}

/// One line of progress: `ALGO PROGRAM: DONE/TOTAL tries, HITS hits, R tries/s, ETA T`.
pub fn line(algo: &str, program: &str, c: Counts, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        c.done as f64 / secs
    } else {
        0.0
    };
    let eta = if rate > 0.0 && c.done < c.total {
        duration_text((c.total - c.done) as f64 / rate)
    } else if c.done >= c.total {
        "0s".into()
    } else {
        "?".into()
    };
    format!(
        "{algo} {program}: {}/{} tries, {} hits, {rate:.1} tries/s, ETA {eta}",
        c.done, c.total, c.hits
    )
}

/// Seconds as `42s`, `3m05s` or `1h02m`.
pub fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    }
}

/// Whether a plain line is due at `now` after one at `last` (or none yet, since `start`),
/// every `every`.
pub fn plain_due(last: Option<Instant>, start: Instant, now: Instant, every: Duration) -> bool {
    now.duration_since(last.unwrap_or(start)) >= every
}

enum Display {
    Live {
        _multi: MultiProgress,
        bars: Vec<ProgressBar>,
    },
    Plain {
        last: Mutex<Option<Instant>>,
        every: Duration,
    },
}

/// The progress of one program's tries under one algorithm.
pub struct Progress {
    algo: String,
    program: String,
    start: Instant,
    counts: Mutex<Counts>,
    display: Display,
}

impl Progress {
    /// Progress for `jobs` workers on `total` tries; live bars when stderr is a terminal.
    pub fn new(algo: &str, program: &str, total: u64, jobs: usize) -> Progress {
        let display = if std::io::stderr().is_terminal() {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let style = ProgressStyle::with_template("{prefix} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let bars = (0..jobs.max(1))
                .map(|w| {
                    let b = multi.add(ProgressBar::new(total));
                    b.set_style(style.clone());
                    b.set_prefix(format!("[{}]", w + 1));
                    b
                })
                .collect();
            Display::Live {
                _multi: multi,
                bars,
            }
        } else {
            Display::Plain {
                last: Mutex::new(None),
                every: plain_every(),
            }
        };
        Progress {
            algo: algo.to_string(),
            program: program.to_string(),
            start: Instant::now(),
            counts: Mutex::new(Counts {
                done: 0,
                total,
                hits: 0,
            }),
            display,
        }
    }

    fn counts(&self) -> Counts {
        self.counts.lock().map_or_else(|e| *e.into_inner(), |c| *c)
    }

    /// Worker `w` (0-based) starts try `i`.
    pub fn started(&self, w: usize, i: u64) {
        if let Display::Live { bars, .. } = &self.display {
            if let Some(b) = bars.get(w) {
                let l = line(
                    &self.algo,
                    &self.program,
                    self.counts(),
                    self.start.elapsed(),
                );
                b.set_message(format!("{l} | try {i}"));
            }
        }
    }

    /// The tries done and hits so far (from the thread that tallies).
    pub fn update(&self, done: u64, hits: u64) {
        if let Ok(mut c) = self.counts.lock() {
            c.done = done;
            c.hits = hits;
        }
        self.tick();
    }

    /// Redraw (live) or print a plain line when one is due.
    pub fn tick(&self) {
        let l = line(
            &self.algo,
            &self.program,
            self.counts(),
            self.start.elapsed(),
        );
        match &self.display {
            Display::Live { bars, .. } => {
                for b in bars {
                    let msg = b.message();
                    let running = msg.rsplit_once(" | ").map_or("", |(_, r)| r);
                    b.set_message(if running.is_empty() {
                        l.clone()
                    } else {
                        format!("{l} | {running}")
                    });
                }
            }
            Display::Plain { last, every } => {
                let now = Instant::now();
                if let Ok(mut last) = last.lock() {
                    if plain_due(*last, self.start, now, *every) {
                        *last = Some(now);
                        eprintln!("poscheck: {l}");
                    }
                }
            }
        }
    }

    /// Remove the live lines (the results are printed after).
    pub fn finish(&self) {
        if let Display::Live { bars, .. } = &self.display {
            for b in bars {
                b.finish_and_clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_counts_rate_and_eta() {
        let c = Counts {
            done: 250,
            total: 1000,
            hits: 12,
        };
        assert_eq!(
            line("pos", "account", c, Duration::from_secs(5)),
            "pos account: 250/1000 tries, 12 hits, 50.0 tries/s, ETA 15s"
        );
        let none = Counts { done: 0, ..c };
        assert!(line("pos", "a", none, Duration::ZERO).ends_with("ETA ?"));
        assert_eq!(duration_text(185.0), "3m05s");
        assert_eq!(duration_text(3720.0), "1h02m");
    }

    #[test]
    fn plain_lines_come_every_ten_seconds() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        assert!(!plain_due(None, t0, t0 + s(9), PLAIN_EVERY));
        assert!(plain_due(None, t0, t0 + s(10), PLAIN_EVERY));
        let last = Some(t0 + s(10));
        assert!(!plain_due(last, t0, t0 + s(19), PLAIN_EVERY));
        assert!(plain_due(last, t0, t0 + s(20), PLAIN_EVERY));
    }
}
