//! The one progress display of `quick`, `compare`, `sweep` and `meta`: a
//! single line on stderr, redrawn in place, that says which step of how
//! many is running, the phase it is in (laying out the test file, the
//! metadata pass, mkfs, mounting), what it measures now, and the time the
//! whole suite has left. It is drawn only when stderr is a terminal;
//! anywhere else (a pipe, a file, a CI log) nothing at all is written.
//! The line is cleared when the command ends, so the report starts on a
//! clean line. `iolab run` keeps fio's own status line (see `status`).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The line of one command's progress.
pub struct Display {
    bar: Option<ProgressBar>,
}

impl Display {
    /// A display of `steps` steps, labelled `name` (`quick`, `compare`),
    /// drawn on stderr if stderr is a terminal.
    pub fn new(name: &str, steps: u64) -> Display {
        Display::to(name, steps, std::io::stderr().is_terminal())
    }

    fn to(name: &str, steps: u64, draw: bool) -> Display {
        if !draw {
            return Display { bar: None };
        }
        // Hidden until the first step, so that no empty line is drawn.
        let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(
            "{spinner} iolab {prefix}: step {pos} of {len}, {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(name.to_string());
        Display { bar: Some(bar) }
    }

    /// Step `k` (1-based) begins: `what` names it.
    pub fn step(&self, k: u64, what: &str) {
        if let Some(b) = &self.bar {
            // The step first, then the drawing: the ticker must not draw
            // the line before it says which step runs ("step 0 of 10").
            b.set_position(k);
            b.set_message(what.to_string());
            if b.is_hidden() {
                b.set_draw_target(ProgressDrawTarget::stderr());
                b.enable_steady_tick(Duration::from_millis(250));
            }
        }
    }

    /// The total number of steps changed (a repeat rule that stopped
    /// early, a target that was skipped).
    pub fn set_steps(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_length(n);
        }
    }

    /// What the current step does now, without moving to the next.
    pub fn say(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// A line that stays above the display (a skipped target, a note).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) if !b.is_hidden() => b.println(line),
            _ => eprintln!("{line}"),
        }
    }

    /// Whether anything is drawn.
    pub fn drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// Clears the line: the report follows on a clean screen.
    pub fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The time left of `total` steps of which `done` took `spent`, at the
/// same pace; None before the first step is done.
pub fn pace_left(spent: Duration, done: u64, total: u64) -> Option<Duration> {
    if done == 0 {
        return None;
    }
    Some(spent.mul_f64(total.saturating_sub(done) as f64 / done as f64))
}

/// `1:05:03`, `4:07`: a time left, as the display shows it.
/// A part of a second counts as a whole one, so the last seconds do not
/// read `0:00`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_drawn_off_a_terminal() {
        let d = Display::to("quick", 9, false);
        assert!(!d.drawn());
        d.step(1, "SEQ1M Q8T1 read");
        d.clear();
    }

    #[test]
    fn the_pace_of_the_steps_done_gives_the_time_left() {
        let s = Duration::from_secs;
        assert_eq!(pace_left(s(10), 0, 4), None);
        assert_eq!(pace_left(s(10), 1, 4), Some(s(30)));
        assert_eq!(pace_left(s(10), 4, 4), Some(s(0)));
    }

    #[test]
    fn times_left() {
        assert_eq!(clock(Duration::from_secs(5)), "0:05");
        assert_eq!(clock(Duration::from_secs(247)), "4:07");
        assert_eq!(clock(Duration::from_secs(3903)), "1:05:03");
    }
}
