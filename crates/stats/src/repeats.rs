//! `Summary`: what N repeats of one measurement say together: mean,
//! median, min, max, sample standard deviation, coefficient of variation
//! and a 95% confidence interval of the mean from Student's t. The numbers
//! come in as plain f64 (MB/s, IOPS, seconds), one per repeat.

use serde::{Deserialize, Serialize};

use crate::dist::student_t_quantile;

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
    /// The 95% confidence interval of the mean, (low, high); None with
    /// fewer than two repeats.
    pub ci95: Option<(f64, f64)>,
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
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
        };
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n as f64 - 1.0)).sqrt()
        } else {
            0.0
        };
        let cv = (mean != 0.0).then(|| stdev / mean.abs());
        let ci95 = (n > 1).then(|| {
            let half = student_t_quantile(0.975, n as f64 - 1.0) * stdev / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Summary {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            stdev,
            cv,
            ci95,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // t(0.975, 7) = 2.3646: half width 2.3646 * 2.138 / sqrt(8).
        let (lo, hi) = s.ci95.unwrap();
        let half = 2.364_624 * s.stdev / 8f64.sqrt();
        assert!((hi - 5.0 - half).abs() < 1e-5, "{hi}");
        assert!((5.0 - lo - half).abs() < 1e-5, "{lo}");
    }

    #[test]
    fn odd_count_median_and_single_value() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.0);
        let one = Summary::of(&[7.5]).unwrap();
        assert_eq!((one.mean, one.median, one.stdev), (7.5, 7.5, 0.0));
        assert_eq!(one.ci95, None);
        assert_eq!(Summary::of(&[0.0, 0.0]).unwrap().cv, None);
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[1.0, f64::NAN]), None);
    }
}
