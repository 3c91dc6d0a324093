//! fio's live status line on stderr:
//! `Jobs: 1 (f=1): [r(1)][40.0%][r=118MiB/s][r=30.2k IOPS][eta 00m:03s]`,
//! redrawn by a thread of its own that only reads the workers' progress
//! counters, so the I/O path does not know it exists. `--eta`,
//! `--eta-newline` and `--eta-interval` choose when and how it is drawn.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use iolab_core::progress::{Progress, Snapshot};
use iolab_report::{num2str, Unit};
use iolab_spec::value::time::{parse_time, TimeUnit};

/// When the status line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtaMode {
    /// When stderr is a terminal and stdout does not carry JSON.
    Auto,
    Always,
    Never,
}

/// How the status line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusOpts {
    pub mode: EtaMode,
    /// Redraw period.
    pub interval: Duration,
    /// Start a new line (rather than redraw in place) this often.
    pub newline: Option<Duration>,
}

impl StatusOpts {
    /// From the `--eta`, `--eta-interval` and `--eta-newline` values.
    pub fn parse(
        eta: Option<&str>,
        interval: Option<&str>,
        newline: Option<&str>,
    ) -> Result<StatusOpts> {
        let mode = match eta.unwrap_or("auto") {
            "auto" => EtaMode::Auto,
            "always" => EtaMode::Always,
            "never" => EtaMode::Never,
            other => bail!("--eta={other}: expected always, never or auto"),
        };
        let time = |flag: &str, v: &str, unit: TimeUnit| -> Result<Duration> {
            match parse_time(v, unit) {
                Ok(us) if us > 0 => Ok(Duration::from_micros(us)),
                Ok(_) => bail!("--{flag}={v}: must be above zero"),
                Err(e) => bail!("--{flag}={v}: {e}"),
            }
        };
        // fio reads --eta-interval in milliseconds and --eta-newline in
        // seconds when no unit is given; a status line faster than 4 Hz
        // only flickers.
        let interval = match interval {
            Some(v) => time("eta-interval", v, TimeUnit::Msec)?.max(Duration::from_millis(250)),
            None => Duration::from_secs(1),
        };
        let newline = newline
            .map(|v| time("eta-newline", v, TimeUnit::Sec))
            .transpose()?;
        Ok(StatusOpts {
            mode,
            interval,
            newline,
        })
    }

    /// Whether to draw it, given where the report goes.
    pub fn enabled(&self, json_to_stdout: bool) -> bool {
        match self.mode {
            EtaMode::Always => true,
            EtaMode::Never => false,
            EtaMode::Auto => std::io::stderr().is_terminal() && !json_to_stdout,
        }
    }
}

/// The directions a run's jobs use, as the status line shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Shown {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
}

/// Draws the status line every `opts.interval` until `done` is set, then
/// once more (at 100% unless the run was cut short) and a newline.
pub fn draw_until(progress: &Progress, done: &AtomicBool, opts: StatusOpts, shown: Shown) {
    let mut err = std::io::stderr();
    let mut prev = progress.snapshot();
    let mut prev_at = Instant::now();
    let mut last_newline = Instant::now();
    let mut width = 0usize;
    let mut finished = false;
    while !finished {
        let next = prev_at + opts.interval;
        while !done.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(25).min(opts.interval));
        }
        finished = done.load(Ordering::Relaxed);
        let now = progress.snapshot();
        let dt = Instant::now().duration_since(prev_at);
        let line = status_line(&now, &prev, dt, shown);
        let newline = finished
            || opts
                .newline
                .is_some_and(|every| last_newline.elapsed() >= every);
        if newline {
            last_newline = Instant::now();
        }
        // Pad over what the previous, longer line left on the terminal.
        let pad = width.saturating_sub(line.len());
        let end = if newline { "\n" } else { "\r" };
        let _ = write!(err, "{line}{:pad$}{end}", "");
        let _ = err.flush();
        width = if newline { 0 } else { line.len() };
        prev = now;
        prev_at = Instant::now();
    }
}

/// One status line from two snapshots `dt` apart.
pub fn status_line(now: &Snapshot, prev: &Snapshot, dt: Duration, shown: Shown) -> String {
    let secs = dt.as_secs_f64().max(1e-3);
    let rate = |d: usize, v: fn(&Snapshot) -> [u64; 3]| {
        (v(now)[d].saturating_sub(v(prev)[d]) as f64 / secs).round() as u64
    };
    let dirs: Vec<(char, usize)> = [('r', shown.read), ('w', shown.write), ('t', shown.trim)]
        .into_iter()
        .enumerate()
        .filter(|(_, (_, on))| *on)
        .map(|(d, (c, _))| (c, d))
        .collect();
    let bw: Vec<String> = dirs
        .iter()
        .map(|&(c, d)| {
            let b = rate(d, |s| s.bytes);
            format!("{c}={}", num2str(b, 4, true, Unit::BytePerSec))
        })
        .collect();
    let iops: Vec<String> = dirs
        .iter()
        .map(|&(c, d)| format!("{c}={}", num2str(rate(d, |s| s.ios), 4, false, Unit::None)))
        .collect();
    format!(
        "Jobs: {} (f={}): [{}][{:.1}%][{}][{} IOPS][eta {}]",
        now.running,
        now.files_open,
        now.states_text(),
        now.percent(),
        bw.join(","),
        iops.join(","),
        eta_text(now.eta())
    )
}

/// fio's ETA: `00m:03s`, with hours (`01h:02m:03s`) and days (`2d:...`)
/// when it is that long.
pub fn eta_text(eta: Duration) -> String {
    let s = eta.as_secs_f64().ceil() as u64;
    let (d, h, m, s) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    let mut out = String::new();
    if d > 0 {
        out.push_str(&format!("{d}d:"));
    }
    if d > 0 || h > 0 {
        out.push_str(&format!("{h:02}h:"));
    }
    out.push_str(&format!("{m:02}m:{s:02}s"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_printed_as_fio_prints_it() {
        assert_eq!(eta_text(Duration::from_secs(3)), "00m:03s");
        assert_eq!(eta_text(Duration::from_millis(2100)), "00m:03s");
        assert_eq!(eta_text(Duration::from_secs(3723)), "01h:02m:03s");
        assert_eq!(
            eta_text(Duration::from_secs(2 * 86400 + 5)),
            "2d:00h:00m:05s"
        );
    }

    #[test]
    fn flags_parse_with_fio_units_and_bad_values_are_named() {
        let o = StatusOpts::parse(Some("always"), Some("500"), Some("2")).unwrap();
        assert_eq!(o.mode, EtaMode::Always);
        assert_eq!(o.interval, Duration::from_millis(500));
        assert_eq!(o.newline, Some(Duration::from_secs(2)));
        let o = StatusOpts::parse(None, Some("10ms"), None).unwrap();
        assert_eq!(
            (o.mode, o.interval),
            (EtaMode::Auto, Duration::from_millis(250))
        );
        let e = StatusOpts::parse(Some("sometimes"), None, None).unwrap_err();
        assert!(e.to_string().contains("--eta=sometimes"), "{e}");
        let e = StatusOpts::parse(None, Some("soon"), None).unwrap_err();
        assert!(e.to_string().contains("--eta-interval=soon"), "{e}");
        assert!(!StatusOpts::parse(Some("never"), None, None)
            .unwrap()
            .enabled(false));
        assert!(StatusOpts::parse(Some("always"), None, None)
            .unwrap()
            .enabled(true));
    }
}
