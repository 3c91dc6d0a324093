//! Steady-state detection as fio 3.33 defines it (`steadystate`, `ss_dur`):
//! a rolling window of one sample per second of a job's (or a reporting
//! group's) IOPS and bandwidth, and the criterion that decides it is
//! steady: every sample within a limit of the window's mean (`iops`,
//! `bw`), or the least-squares slope of the window below a limit
//! (`iops_slope`, `bw_slope`); each limit absolute or a percentage of the
//! mean. [`SteadyWindow`] does the arithmetic, with fio's integer steps;
//! [`SteadyResult`] is what the reports print. Who takes the samples and
//! stops the job lives in core.

use serde::{Deserialize, Serialize};

/// What is measured and how it is judged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyRule {
    /// IOPS (true) or bandwidth in bytes/s (false).
    pub iops: bool,
    /// The least-squares slope (true) or the largest deviation from the
    /// mean (false).
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
    /// The limit the criterion must fall below.
    pub limit: f64,
    /// Samples in the window (`ss_dur` in seconds, one sample a second).
    pub dur: u32,
}

impl Default for SteadyRule {
    /// fio's default: `iops_slope:0.01%` (off until `ss_dur` is set).
    fn default() -> Self {
        SteadyRule {
            iops: true,
            slope: true,
            pct: true,
            limit: 0.01,
            dur: 0,
        }
    }
}

impl SteadyRule {
    /// The rule as fio's JSON names it: `iops:50.000000%`,
    /// `bw_slope:1048576.000000`.
    pub fn text(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            if self.iops { "iops" } else { "bw" },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}

/// The samples of the window so far and the last judgement.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyWindow {
    rule: SteadyRule,
    /// (IOPS, bytes/s) per second, oldest first, at most `rule.dur`.
    samples: Vec<(u64, u64)>,
    criterion: f64,
    slope: f64,
    deviation: f64,
    attained: bool,
}

impl SteadyWindow {
    pub fn new(rule: SteadyRule) -> SteadyWindow {
        SteadyWindow {
            rule,
            samples: Vec::with_capacity(rule.dur as usize),
            criterion: 0.0,
            slope: 0.0,
            deviation: 0.0,
            attained: false,
        }
    }

    /// Adds one second's IOPS and bandwidth (bytes/s); once the window is
    /// full, judges it: true when the criterion is below the limit (the
    /// state is then attained and stays so).
    pub fn push(&mut self, iops: u64, bw: u64) -> bool {
        let n = self.rule.dur as usize;
        if n == 0 || self.attained {
            return self.attained;
        }
        if self.samples.len() == n {
            self.samples.remove(0);
        }
        self.samples.push((iops, bw));
        if self.samples.len() < n {
            return false;
        }
        let ys: Vec<u64> = self
            .samples
            .iter()
            .map(|&(i, b)| if self.rule.iops { i } else { b })
            .collect();
        self.attained = if self.rule.slope {
            self.judge_slope(&ys)
        } else {
            self.judge_deviation(&ys)
        };
        self.attained
    }

    /// fio's steadystate_slope: x is the sample's place in the window
    /// (0..n), the slope (sum_xy - sum_x*sum_y/n) / (sum_x2 - sum_x^2/n);
    /// as a percentage, of the mean in whole units (fio divides integers
    /// there).
    fn judge_slope(&mut self, ys: &[u64]) -> bool {
        let n = ys.len() as u64;
        let sum_x = n * (n - 1) / 2;
        let sum_x_sq = (n - 1) * n * (2 * n - 1) / 6;
        let sum_y: u64 = ys.iter().sum();
        let sum_xy: u64 = ys.iter().enumerate().map(|(i, &y)| i as u64 * y).sum();
        let den = sum_x_sq as f64 - sum_x as f64 * sum_x as f64 / n as f64;
        self.slope = (sum_xy as f64 - sum_x as f64 * sum_y as f64 / n as f64) / den;
        self.criterion = if self.rule.pct {
            100.0 * self.slope / (sum_y / n) as f64
        } else {
            self.slope
        };
        self.criterion.abs() < self.rule.limit
    }

    /// fio's steadystate_deviation: the largest distance of a sample from
    /// the window's mean, or that as a percentage of the mean.
    fn judge_deviation(&mut self, ys: &[u64]) -> bool {
        let n = ys.len() as f64;
        let mean = ys.iter().sum::<u64>() as f64 / n;
        self.deviation = ys
            .iter()
            .map(|&y| (y as f64 - mean).abs())
            .fold(0.0, f64::max);
        self.criterion = if self.rule.pct {
            100.0 * self.deviation / mean
        } else {
            self.deviation
        };
        self.criterion < self.rule.limit
    }

    pub fn attained(&self) -> bool {
        self.attained
    }

    /// What the reports print.
    pub fn result(&self) -> SteadyResult {
        let n = self.rule.dur as usize;
        let mut iops: Vec<u64> = self.samples.iter().map(|s| s.0).collect();
        let mut bw: Vec<u64> = self.samples.iter().map(|s| s.1).collect();
        iops.resize(n, 0);
        bw.resize(n, 0);
        SteadyResult {
            rule: self.rule,
            attained: self.attained,
            criterion: self.criterion,
            slope: self.slope,
            deviation: self.deviation,
            iops,
            bw,
        }
    }
}

/// A job's steady-state detection as reported (fio's "steadystate" object
/// and "steadystate" line).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SteadyResult {
    pub rule: SteadyRule,
    pub attained: bool,
    /// The last criterion computed (percent when the limit is one).
    pub criterion: f64,
    pub slope: f64,
    /// The largest deviation from the mean (deviation rules).
    pub deviation: f64,
    /// The window's samples, oldest first, zeros where the window was
    /// never filled: IOPS and bytes/s.
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

impl SteadyResult {
    /// The window's mean bandwidth (bytes/s), in fio's integer division.
    pub fn bw_mean(&self) -> u64 {
        mean(&self.bw)
    }

    pub fn iops_mean(&self) -> u64 {
        mean(&self.iops)
    }
}

fn mean(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v.iter().sum::<u64>() / v.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(iops: bool, slope: bool, pct: bool, limit: f64, dur: u32) -> SteadyRule {
        SteadyRule {
            iops,
            slope,
            pct,
            limit,
            dur,
        }
    }

    #[test]
    fn the_deviation_is_the_largest_distance_from_the_mean() {
        // 90, 100, 110: mean 100, largest distance 10 = 10% of the mean.
        let mut w = SteadyWindow::new(rule(true, false, true, 10.5, 3));
        assert!(!w.push(90, 0));
        assert!(!w.push(100, 0));
        assert!(w.push(110, 0));
        let r = w.result();
        assert_eq!(r.deviation, 10.0);
        assert_eq!(r.criterion, 10.0);
        assert_eq!(r.iops, [90, 100, 110]);
        assert_eq!(r.iops_mean(), 100);
        // At a limit of exactly 10% it is not below: not attained.
        let mut w = SteadyWindow::new(rule(true, false, true, 10.0, 3));
        for y in [90, 100, 110] {
            assert!(!w.push(y, 0));
        }
        // An absolute limit on bandwidth: 1000, 1300 -> mean 1150, 150 off.
        let mut w = SteadyWindow::new(rule(false, false, false, 151.0, 2));
        w.push(0, 1000);
        assert!(w.push(0, 1300));
        assert_eq!(w.result().criterion, 150.0);
    }

    #[test]
    fn the_slope_is_the_least_squares_slope_of_the_window() {
        // y = 10, 20, 30, 40: slope 10 exactly; mean 25, so 40% of it.
        let mut w = SteadyWindow::new(rule(false, true, false, 10.5, 4));
        for b in [10, 20, 30] {
            assert!(!w.push(0, b));
        }
        assert!(w.push(0, 40));
        assert_eq!(w.result().slope, 10.0);
        let mut w = SteadyWindow::new(rule(false, true, true, 40.0, 4));
        for b in [10, 20, 30, 40] {
            assert!(!w.push(0, b));
        }
        assert_eq!(w.result().criterion, 40.0);
        // A falling window counts by its magnitude: 40, 30, 20, 10 is a
        // slope of -10, -40% of the mean, under a limit of 41%.
        let mut w = SteadyWindow::new(rule(false, true, true, 41.0, 4));
        for b in [40, 30, 20] {
            w.push(0, b);
        }
        assert!(w.push(0, 10));
        assert_eq!(w.result().slope, -10.0);
        // 3, 4, 4: slope 0.5; the mean is 11/3, taken as 3 in whole units
        // as fio does, so the percentage is 100 * 0.5 / 3.
        let mut w = SteadyWindow::new(rule(true, true, true, 100.0, 3));
        for i in [3, 4, 4] {
            w.push(i, 0);
        }
        assert_eq!(w.result().slope, 0.5);
        assert_eq!(w.result().criterion, 100.0 * 0.5 / 3.0);
    }

    #[test]
    fn the_window_rolls_and_reports_its_samples_oldest_first() {
        let mut w = SteadyWindow::new(rule(true, false, true, 1.0, 3));
        for i in [50, 100, 100] {
            assert!(!w.push(i, i * 4096));
        }
        // 100, 100, 100 once the 50 has left the window: no deviation.
        assert!(w.push(100, 409_600));
        let r = w.result();
        assert_eq!(r.iops, [100, 100, 100]);
        assert_eq!(r.bw_mean(), 409_600);
        assert!(r.attained);
        // Attained stays attained, and the window no longer moves.
        assert!(w.push(1, 1));
        assert_eq!(w.result().iops, [100, 100, 100]);
        // A window never filled is padded with zeros, as fio prints it.
        let mut w = SteadyWindow::new(rule(true, true, true, 1.0, 4));
        w.push(7, 8);
        assert_eq!(w.result().iops, [7, 0, 0, 0]);
        assert!(!w.result().attained);
    }

    #[test]
    fn the_rule_is_named_as_fio_names_it() {
        assert_eq!(rule(true, false, true, 50.0, 2).text(), "iops:50.000000%");
        assert_eq!(
            rule(false, true, false, 1048576.0, 2).text(),
            "bw_slope:1048576.000000"
        );
        assert_eq!(SteadyRule::default().text(), "iops_slope:0.010000%");
    }
}
