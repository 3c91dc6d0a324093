//! When to stop repeating a measurement: `--repeat N` (exactly N runs) or
//! `--repeat auto` (runs until every headline figure is known well enough,
//! or a budget of runs or time is spent, as the Phoronix Test Suite
//! repeats until its deviation is small), and the record of which of them
//! stopped it, stored with the result.
//!
//! "Known well enough" is the interval iolab's verdicts and tables use: a
//! figure's runs are summarized by their geometric mean, and its 95%
//! interval is Student's t interval of the mean of the runs' logarithms,
//! taken back by `exp` (the interval of the geometric mean; the same
//! method as [`crate::verdict`]). `auto` stops once, for every figure,
//! both ends of that interval lie within the stated relative width of the
//! geometric mean (`exp(t * se) - 1 <= width`), after at least
//! [`MIN_RUNS`] runs. Budgets are caps: a run that would end past the time
//! budget (judged by the mean run time so far) is not started.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::dist::student_t_quantile;

/// The relative half-width `auto` aims for unless told: 5%.
pub const DEFAULT_WIDTH: f64 = 0.05;
/// The most runs `auto` makes unless told.
pub const DEFAULT_MAX_RUNS: u32 = 10;
/// The fewest runs `auto` stops on for its width: two runs give an
/// interval, but one resting on one degree of freedom.
pub const MIN_RUNS: u32 = 3;
/// The confidence of the interval `auto` judges.
pub const LEVEL: f64 = 0.95;

/// How many times to run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum RepeatRule {
    /// Exactly this many runs (`--repeat N`).
    Times { runs: u32 },
    /// Until every figure's interval is within `width` of its geometric
    /// mean, at most `max_runs` runs and (when set) `max_time_s` seconds.
    Auto {
        width: f64,
        max_runs: u32,
        max_time_s: Option<f64>,
    },
}

impl Default for RepeatRule {
    fn default() -> Self {
        RepeatRule::Times { runs: 1 }
    }
}

impl RepeatRule {
    /// `auto` with the default width and run budget.
    pub fn auto() -> Self {
        RepeatRule::Auto {
            width: DEFAULT_WIDTH,
            max_runs: DEFAULT_MAX_RUNS,
            max_time_s: None,
        }
    }

    /// Whether the rule can make more than one run.
    pub fn repeats(&self) -> bool {
        !matches!(self, RepeatRule::Times { runs: 0 | 1 })
    }

    /// The most runs the rule allows.
    pub fn max_runs(&self) -> u32 {
        match *self {
            RepeatRule::Times { runs } => runs,
            RepeatRule::Auto { max_runs, .. } => max_runs,
        }
    }
}

impl fmt::Display for RepeatRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RepeatRule::Times { runs } => write!(f, "{runs} runs"),
            RepeatRule::Auto {
                width,
                max_runs,
                max_time_s,
            } => {
                write!(
                    f,
                    "auto: until each 95% interval is within ±{}, at most {max_runs} runs",
                    percent(width)
                )?;
                if let Some(t) = max_time_s {
                    write!(f, " or {}", seconds(t))?;
                }
                Ok(())
            }
        }
    }
}

/// What ended the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// `--repeat N`: the N runs were made.
    Count,
    /// Every figure's interval came within the width.
    Width,
    /// The run budget was spent first.
    MaxRuns,
    /// The time budget was spent first.
    Time,
    /// Ctrl-C.
    Interrupted,
    /// A run failed.
    Failed,
}

impl StopReason {
    /// The words the output and the store use.
    pub fn words(self) -> &'static str {
        match self {
            StopReason::Count => "the runs asked for were made",
            StopReason::Width => "every interval within the width",
            StopReason::MaxRuns => "run budget spent before the width was reached",
            StopReason::Time => "time budget spent before the width was reached",
            StopReason::Interrupted => "interrupted",
            StopReason::Failed => "a run failed",
        }
    }
}

/// How a repeated measurement ended: the rule, the runs made, what
/// stopped them, and the widest figure's interval then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatOutcome {
    pub rule: RepeatRule,
    pub runs: u32,
    pub stopped: StopReason,
    /// The widest relative half-width of the figures' 95% intervals
    /// (None with fewer than two runs, or no figure).
    pub widest: Option<f64>,
    /// The figure that had it.
    #[serde(default)]
    pub widest_figure: String,
    /// Wall time of all the runs, seconds.
    #[serde(default)]
    pub elapsed_s: f64,
}

impl RepeatOutcome {
    /// One line for the output: "5 runs, stopped: every interval within
    /// the width (widest ±2.1%, read MB/s; auto: ...)".
    pub fn describe(&self) -> String {
        let widest = match self.widest {
            Some(w) => format!(
                "; widest 95% interval of a geometric mean ±{} ({})",
                percent(w),
                self.widest_figure
            ),
            None => String::new(),
        };
        let rule = match self.rule {
            RepeatRule::Times { .. } => String::new(),
            auto => format!(" [{auto}]"),
        };
        format!(
            "{} run{}, stopped: {}{widest}{rule}",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.stopped.words(),
        )
    }
}

/// The 95% interval of the geometric mean of positive `values`: the
/// geometric mean and the interval's ends. None with fewer than two
/// values or a value that is not positive and finite.
pub fn gm_interval(values: &[f64]) -> Option<(f64, f64, f64)> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return None;
    }
    if values.iter().all(|v| *v == values[0]) {
        return Some((values[0], values[0], values[0])); // exactly, no rounding through ln
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mean = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    let q = student_t_quantile(1.0 - (1.0 - LEVEL) / 2.0, (n - 1) as f64);
    Some((mean.exp(), (mean - q * se).exp(), (mean + q * se).exp()))
}

/// The relative half-width of [`gm_interval`]: how far above the
/// geometric mean its upper end lies (the lower end lies less far below).
pub fn half_width(values: &[f64]) -> Option<f64> {
    gm_interval(values).map(|(gm, _, high)| high / gm - 1.0)
}

/// The widest half-width among `figures` (name, one value per run) and
/// its figure's name. Figures that are 0 in every run (a direction that
/// did no I/O) are left out; a figure that cannot have an interval (a 0
/// among its values, fewer than two runs) counts as infinitely wide.
pub fn widest(figures: &[(String, Vec<f64>)]) -> Option<(f64, String)> {
    let mut out: Option<(f64, String)> = None;
    for (name, values) in figures {
        if values.iter().all(|v| *v == 0.0) {
            continue;
        }
        let w = half_width(values).unwrap_or(f64::INFINITY);
        if !out.as_ref().is_some_and(|(best, _)| w <= *best) {
            out = Some((w, name.clone()));
        }
    }
    out
}

/// After `runs` runs that took `elapsed` in all, with `figures` so far:
/// the reason to stop, or None to run again.
pub fn should_stop(
    rule: &RepeatRule,
    runs: u32,
    elapsed: Duration,
    figures: &[(String, Vec<f64>)],
) -> Option<StopReason> {
    match *rule {
        RepeatRule::Times { runs: want } => (runs >= want).then_some(StopReason::Count),
        RepeatRule::Auto {
            width,
            max_runs,
            max_time_s,
        } => {
            if runs >= MIN_RUNS.min(max_runs) && runs >= 2 {
                if let Some((w, _)) = widest(figures) {
                    if w <= width {
                        return Some(StopReason::Width);
                    }
                }
            }
            if runs >= max_runs {
                return Some(StopReason::MaxRuns);
            }
            if let Some(budget) = max_time_s {
                let spent = elapsed.as_secs_f64();
                let per_run = if runs == 0 {
                    0.0
                } else {
                    spent / f64::from(runs)
                };
                if runs > 0 && spent + per_run > budget {
                    return Some(StopReason::Time);
                }
            }
            None
        }
    }
}

/// The outcome to store, once `stopped` ended `runs` runs.
pub fn outcome(
    rule: &RepeatRule,
    runs: u32,
    stopped: StopReason,
    elapsed: Duration,
    figures: &[(String, Vec<f64>)],
) -> RepeatOutcome {
    let w = if runs >= 2 { widest(figures) } else { None };
    RepeatOutcome {
        rule: *rule,
        runs,
        stopped,
        widest: w.as_ref().map(|(w, _)| *w).filter(|w| w.is_finite()),
        widest_figure: w.map(|(_, n)| n).unwrap_or_default(),
        elapsed_s: elapsed.as_secs_f64(),
    }
}

/// "5%", "2.1%", "0.25%"; "1000%+" beyond that (an interval from two
/// runs can be that wide).
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p > 1000.0 {
        "1000%+".to_string()
    } else if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else if p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

fn seconds(s: f64) -> String {
    if s >= 60.0 && (s % 60.0).abs() < 1e-9 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(v: &[&[f64]]) -> Vec<(String, Vec<f64>)> {
        v.iter()
            .enumerate()
            .map(|(i, v)| (format!("f{i}"), v.to_vec()))
            .collect()
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_interval_of_the_geometric_mean() {
        // logs 0 and ln 4: mean ln 2, sd ln4/sqrt2, se ln4/2 = ln 2;
        // t(0.975, 1) = 12.706.
        let (gm, lo, hi) = gm_interval(&[1.0, 4.0]).unwrap();
        assert!((gm - 2.0).abs() < 1e-12);
        let q = 12.706_204_736;
        assert!((hi - 2.0 * (q * 2f64.ln()).exp()).abs() / hi < 1e-6, "{hi}");
        assert!((lo * hi - 4.0).abs() < 1e-6, "symmetric in logs");
        assert_eq!(gm_interval(&[5.0, 5.0, 5.0]), Some((5.0, 5.0, 5.0)));
        assert_eq!(half_width(&[5.0, 5.0]), Some(0.0));
        assert_eq!(gm_interval(&[1.0]), None);
        assert_eq!(gm_interval(&[1.0, 0.0]), None);
        assert_eq!(gm_interval(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn times_stops_on_the_count() {
        let r = RepeatRule::Times { runs: 3 };
        assert_eq!(should_stop(&r, 2, S, &[]), None);
        assert_eq!(should_stop(&r, 3, S, &[]), Some(StopReason::Count));
        assert!(r.repeats() && !RepeatRule::default().repeats());
    }

    #[test]
    fn auto_stops_on_width_only_after_the_minimum_runs() {
        let r = RepeatRule::auto();
        let steady = figs(&[&[100.0, 100.5], &[50.0, 50.0]]);
        assert_eq!(should_stop(&r, 2, S, &steady), None, "2 runs < MIN_RUNS");
        let steady = figs(&[&[100.0, 100.5, 99.8], &[50.0, 50.1, 50.0]]);
        assert_eq!(should_stop(&r, 3, S, &steady), Some(StopReason::Width));
        let o = outcome(&r, 3, StopReason::Width, S, &steady);
        assert!(o.widest.unwrap() < 0.05 && o.widest_figure == "f0", "{o:?}");
        assert!(
            o.describe().contains("within the width"),
            "{}",
            o.describe()
        );
    }

    #[test]
    fn auto_goes_on_while_any_figure_is_wide_and_stops_at_the_run_budget() {
        let r = RepeatRule::Auto {
            width: 0.05,
            max_runs: 5,
            max_time_s: None,
        };
        // One steady figure, one that swings 2x.
        let noisy = figs(&[&[100.0, 100.0, 100.0], &[10.0, 20.0, 10.0]]);
        assert_eq!(should_stop(&r, 3, S, &noisy), None);
        let (w, name) = widest(&noisy).unwrap();
        assert!(w > 0.5 && name == "f1");
        let noisy = figs(&[&[10.0, 20.0, 10.0, 20.0, 10.0]]);
        assert_eq!(should_stop(&r, 5, S, &noisy), Some(StopReason::MaxRuns));
        // The width is judged before the budget: both met says width.
        let steady = figs(&[&[7.0; 5]]);
        assert_eq!(should_stop(&r, 5, S, &steady), Some(StopReason::Width));
        // A wider width accepts the noisy figure.
        let loose = RepeatRule::Auto {
            width: 10.0,
            max_runs: 5,
            max_time_s: None,
        };
        let noisy = figs(&[&[10.0, 20.0, 10.0]]);
        assert_eq!(should_stop(&loose, 3, S, &noisy), Some(StopReason::Width));
    }

    #[test]
    fn auto_stops_before_a_run_that_would_overrun_the_time_budget() {
        let r = RepeatRule::Auto {
            width: 0.05,
            max_runs: 100,
            max_time_s: Some(10.0),
        };
        let noisy = figs(&[&[10.0, 20.0, 10.0, 20.0]]);
        // 4 runs in 6 s: the next ends near 7.5 s, within 10 s.
        assert_eq!(should_stop(&r, 4, Duration::from_secs(6), &noisy), None);
        // 4 runs in 8 s: the next would end at 10 s + : stop.
        assert_eq!(
            should_stop(&r, 4, Duration::from_millis(8100), &noisy),
            Some(StopReason::Time)
        );
        // A budget shorter than one run stops after the first.
        let tiny = RepeatRule::Auto {
            width: 0.05,
            max_runs: 100,
            max_time_s: Some(0.001),
        };
        assert_eq!(
            should_stop(&tiny, 1, Duration::from_millis(5), &figs(&[&[1.0]])),
            Some(StopReason::Time)
        );
        assert_eq!(should_stop(&tiny, 0, Duration::ZERO, &[]), None);
    }

    #[test]
    fn figures_that_are_always_zero_are_left_out_and_zeros_count_as_wide() {
        let r = RepeatRule::auto();
        let f = figs(&[&[0.0, 0.0, 0.0], &[3.0, 3.0, 3.0]]);
        assert_eq!(should_stop(&r, 3, S, &f), Some(StopReason::Width));
        let f = figs(&[&[0.0, 1.0, 1.0]]);
        assert_eq!(widest(&f).unwrap().0, f64::INFINITY);
        assert_eq!(should_stop(&r, 3, S, &f), None);
        assert_eq!(outcome(&r, 3, StopReason::Failed, S, &f).widest, None);
        // No figure at all: only a budget stops it.
        assert_eq!(should_stop(&r, 3, S, &[]), None);
        assert_eq!(should_stop(&r, 10, S, &[]), Some(StopReason::MaxRuns));
    }

    #[test]
    fn rules_and_outcomes_read_back() {
        let r = RepeatRule::Auto {
            width: 0.02,
            max_runs: 8,
            max_time_s: Some(120.0),
        };
        assert_eq!(
            r.to_string(),
            "auto: until each 95% interval is within ±2%, at most 8 runs or 2 min"
        );
        let o = outcome(
            &RepeatRule::Times { runs: 2 },
            2,
            StopReason::Count,
            S,
            &figs(&[&[1.0, 2.0]]),
        );
        let back: RepeatOutcome =
            serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(back, o);
        assert_eq!(percent(0.021), "2.1%");
        assert_eq!(percent(0.0025), "0.25%");
        assert_eq!(percent(29.0), "1000%+");
        assert!(
            !o.describe().contains('['),
            "a count needs no rule: {}",
            o.describe()
        );
        let auto = outcome(&r, 8, StopReason::MaxRuns, S, &figs(&[&[1.0, 2.0]]));
        assert!(
            auto.describe().contains("[auto: until"),
            "{}",
            auto.describe()
        );
    }
}
