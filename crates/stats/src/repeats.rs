//! `Summary`: what N repeats of one measurement say together: mean,
//! median, min, max, sample standard deviation, coefficient of variation
//! and a confidence interval of the median. The numbers come in as plain
//! f64 (MB/s, IOPS, microseconds), one per repeat.
//!
//! The interval is distribution-free, from order statistics: with the
//! values sorted, the k-th smallest and the k-th largest hold the true
//! median between them with probability 1 - 2 P(B <= k - 1), B binomial
//! (n, 1/2), whatever the distribution of the values. The largest k that
//! gives 95% is taken; below 6 repeats none does, and the interval is the
//! whole range with the confidence it has (75% for 3 runs, 94% for 5).
//! Its bounds are always values that were measured, so it cannot leave
//! the data's domain (no negative latencies), unlike a t interval of the
//! mean of a few skewed values.

use serde::{Deserialize, Serialize};

/// Summary statistics of repeated measurements of one quantity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Repeats summarized.
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1); 0 with one repeat.
    pub stdev: f64,
    /// stdev / mean; None when the mean is 0.
    pub cv: Option<f64>,
    /// The confidence interval of the median; None with fewer than two
    /// repeats.
    #[serde(default)]
    pub median_ci: Option<Interval>,
}

/// A confidence interval and the confidence it has.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// The probability that the interval holds the true value, 0 to 1.
    pub confidence: f64,
}

/// The confidence the order statistics aim for.
pub const CONFIDENCE: f64 = 0.95;

/// The median of `sorted` (ascending): the middle value, the mean of the
/// two middle ones for an even count; None when there is none. The one
/// median of iolab's figures.
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some(0.5 * (sorted[n / 2 - 1] + sorted[n / 2])),
    }
}

/// Which of `items` is the median by `cmp`: the middle one, the lower of
/// the two middle ones for an even count (a median that is one of the
/// items: the run a report shows, a measured time). None when empty.
pub fn median_index_by<T>(
    items: &[T],
    mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering,
) -> Option<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| cmp(&items[a], &items[b]));
    order.get(items.len().checked_sub(1)? / 2).copied()
}

/// The interval of the median of `sorted` (ascending) from its order
/// statistics: the narrowest pair (k-th smallest, k-th largest) that has
/// at least `CONFIDENCE`, or the whole range when none has. None for fewer
/// than two values.
pub fn median_interval(sorted: &[f64]) -> Option<Interval> {
    let n = sorted.len();
    if n < 2 {
        return None;
    }
    // P(B <= i) for B ~ binomial(n, 1/2), in logs so that no term
    // underflows for large n.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut below = 0.0f64; // P(B <= k - 1)
    let mut best = (1, 1.0 - 2.0 * (ln_half_n).exp());
    for k in 1..=n / 2 {
        // Add P(B = k - 1).
        below += (ln_choose + ln_half_n).exp();
        let coverage = 1.0 - 2.0 * below;
        if coverage < CONFIDENCE {
            break;
        }
        best = (k, coverage);
        ln_choose += ((n - (k - 1)) as f64).ln() - (k as f64).ln();
    }
    let (k, confidence) = best;
    Some(Interval {
        low: sorted[k - 1],
        high: sorted[n - k],
        confidence,
    })
}

impl Summary {
    /// The summary of `values`, or None when there are none or one is not
    /// finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = median(&sorted)?;
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n as f64 - 1.0)).sqrt()
        } else {
            0.0
        };
        let cv = (mean != 0.0).then(|| stdev / mean.abs());
        let median_ci = median_interval(&sorted);
        Some(Summary {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            stdev,
            cv,
            median_ci,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_even_and_no_values() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, 5.0, 9.0]), Some(5.0));
        assert_eq!(median(&[1.0, 5.0, 7.0, 9.0]), Some(6.0));
        let v = [9, 1, 5, 7];
        assert_eq!(median_index_by(&v, |a, b| a.cmp(b)), Some(2));
        assert_eq!(median_index_by(&[3], |a: &i32, b| a.cmp(b)), Some(0));
        assert_eq!(median_index_by(&[] as &[i32], |a, b| a.cmp(b)), None);
    }

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // Sum of squares 32 over 7.
        assert!((s.stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv.unwrap() - s.stdev / 5.0).abs() < 1e-12);
        // 8 values: (2nd, 7th) covers 1 - 2 * 9/256 = 0.9297 < 0.95, so
        // the whole range, 1 - 2/256.
        let ci = s.median_ci.unwrap();
        assert_eq!((ci.low, ci.high), (2.0, 9.0));
        assert!((ci.confidence - (1.0 - 2.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn the_median_interval_is_made_of_measured_values() {
        // Skewed latencies: a t interval of the mean goes below zero.
        let lat = [3.0, 4.0, 150.0];
        let s = Summary::of(&lat).unwrap();
        let ci = s.median_ci.unwrap();
        assert_eq!((ci.low, ci.high), (3.0, 150.0));
        assert!((ci.confidence - 0.75).abs() < 1e-12);
        // The coverage of the whole range: 1 - 2 / 2^n.
        for (n, want) in [(2, 0.5), (4, 0.875), (5, 0.9375), (6, 0.96875)] {
            let v: Vec<f64> = (0..n).map(f64::from).collect();
            let ci = median_interval(&v).unwrap();
            assert_eq!((ci.low, ci.high), (0.0, f64::from(n - 1)), "{n}");
            assert!((ci.confidence - want).abs() < 1e-12, "{n}");
        }
        // 20 values: the 6th and 15th, at 95.86% (tables of the sign
        // test's order statistics).
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let ci = median_interval(&v).unwrap();
        assert_eq!((ci.low, ci.high), (6.0, 15.0));
        assert!(
            (ci.confidence - 0.958_611).abs() < 1e-6,
            "{}",
            ci.confidence
        );
        // Many values: no underflow, a narrow interval round the median.
        let v: Vec<f64> = (0..2000).map(f64::from).collect();
        let ci = median_interval(&v).unwrap();
        assert!(ci.low > 950.0 && ci.high < 1050.0, "{ci:?}");
        assert!(ci.confidence >= CONFIDENCE);
    }

    #[test]
    fn odd_count_median_and_single_value() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.0);
        let one = Summary::of(&[7.5]).unwrap();
        assert_eq!((one.mean, one.median, one.stdev), (7.5, 7.5, 0.0));
        assert_eq!(one.median_ci, None);
        assert_eq!(Summary::of(&[0.0, 0.0]).unwrap().cv, None);
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[1.0, f64::NAN]), None);
    }
}
