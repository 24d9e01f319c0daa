//! The live progress line on stderr (only when stderr is a terminal), and the
//! summary of a finished query.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chnative::{Observer, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `1.23 million`: the server's readable quantity (units of 1000).
pub fn quantity(x: f64) -> String {
    scaled(x, &["", " thousand", " million", " billion", " trillion", " quadrillion", " quintillion"])
}

/// `98.40 MB`: a size with decimal units, as the server's progress shows it.
pub fn size(x: f64) -> String {
    scaled(x, &[" B", " KB", " MB", " GB", " TB", " PB", " EB"])
}

/// `x` in the largest of `units` (each 1000 times the one before) that keeps it
/// at or above 1, with two decimals.
fn scaled(mut x: f64, units: &[&str]) -> String {
    let mut i = 0;
    while i + 1 < units.len() && x.abs() >= 1000.0 {
        x /= 1000.0;
        i += 1;
    }
    format!("{x:.2}{}", units[i])
}

/// `Processed 1.23 million rows, 9.84 MB (12.30 million rows/s., 98.40 MB/s.)`
pub fn processed(p: &Progress, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    format!(
        "{} rows, {} ({} rows/s., {}/s.)",
        quantity(p.read_rows as f64),
        size(p.read_bytes as f64),
        quantity(p.read_rows as f64 / secs),
        size(p.read_bytes as f64 / secs)
    )
}

/// The text of the progress line.
pub fn line(p: &Progress, elapsed: Duration) -> String {
    let mut s = format!("Progress: {}", processed(p, elapsed));
    if p.total_rows_to_read > 0 {
        let pct = (p.read_rows as f64 * 100.0 / p.total_rows_to_read as f64).min(99.0);
        s.push_str(&format!(" {pct:.0}%"));
    }
    s.push_str(&format!(" {:.1} s", elapsed.as_secs_f64()));
    s
}

/// The progress of one query: a bar on stderr when it is a terminal, and the
/// totals for the summary either way.
#[derive(Clone)]
pub struct Tracker {
    bar: Option<ProgressBar>,
    start: Instant,
    total: Arc<Mutex<Progress>>,
}

impl Tracker {
    /// Starts tracking; `show`: draw the line (stderr is a terminal and it was not turned off).
    pub fn start(show: bool) -> Tracker {
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
                bar.set_style(style);
            }
            bar.set_message("Progress: waiting for the server");
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Tracker { bar, start: Instant::now(), total: Arc::default() }
    }

    /// The bar, to suspend it while the output is written to the same terminal.
    pub fn bar(&self) -> Option<&ProgressBar> {
        self.bar.as_ref()
    }

    /// Time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The totals so far.
    pub fn total(&self) -> Progress {
        self.total.lock().map(|p| *p).unwrap_or_default()
    }

    /// Shows a message instead of the numbers (e.g. "Cancelling the query…").
    pub fn note(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_string());
        }
    }

    /// Removes the line from the terminal.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Sets the totals (an INSERT counts its own rows).
    pub fn set(&self, p: &Progress) {
        if let Ok(mut t) = self.total.lock() {
            *t = *p;
        }
        if let Some(b) = &self.bar {
            b.set_message(line(p, self.start.elapsed()));
        }
    }
}

impl Observer for Tracker {
    fn progress(&self, _increment: &Progress, total: &Progress) {
        self.set(total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable() {
        assert_eq!(quantity(1_234_567.0), "1.23 million");
        assert_eq!(size(98_400_000.0), "98.40 MB");
        assert_eq!(size(512.0), "512.00 B");
    }
}
