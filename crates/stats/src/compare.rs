//! The two-sample tests a verdict rests on, both two-sided: Welch's
//! t-test (unequal variances; iolab applies it to the logarithms of the
//! per-run values, see [`crate::verdict`]) and the Mann-Whitney U test,
//! exact for small samples (the distribution of the rank sum counted over
//! every way of splitting the pooled runs, ties included) and by the normal
//! approximation past that. [`Method`] names them and the statistic each
//! one compares.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::dist::{normal_cdf, student_t_two_sided_p};
use crate::repeats::Summary;

/// The significance level iolab uses unless told otherwise.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Which test decides, and so which statistic of each side's runs is
/// compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    /// Welch's t-test on the logarithms of the runs' values: compares
    /// geometric means, and their ratio has a confidence interval.
    #[default]
    Welch,
    /// The Mann-Whitney U test on the runs' values: compares medians
    /// (strictly, whether one side tends to be larger); no interval.
    MannWhitney,
}

impl Method {
    /// The statistic of each side that the method compares, and that a
    /// table of its verdicts shows.
    pub fn statistic(self) -> Statistic {
        match self {
            Method::Welch => Statistic::GeometricMean,
            Method::MannWhitney => Statistic::Median,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Welch => "Welch's t-test on log values",
            Method::MannWhitney => "Mann-Whitney U test",
        })
    }
}

/// A test name that is not one of the methods.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown test '{0}' (expected welch or mann-whitney)")]
pub struct UnknownMethod(pub String);

impl FromStr for Method {
    type Err = UnknownMethod;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "welch" | "t" => Ok(Method::Welch),
            "mann-whitney" | "mw" | "u" => Ok(Method::MannWhitney),
            other => Err(UnknownMethod(other.to_string())),
        }
    }
}

/// The statistic of a side's runs that a verdict compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    GeometricMean,
    Median,
}

impl Statistic {
    /// The statistic of `values`; None when there are none, one is not
    /// finite, or (geometric mean) one is negative. A geometric mean with
    /// a zero among the values is 0.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        match self {
            Statistic::Median => Summary::of(values).map(|s| s.median),
            Statistic::GeometricMean => geometric_mean(values),
        }
    }
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Statistic::GeometricMean => "geometric mean",
            Statistic::Median => "median",
        })
    }
}

/// exp(mean(ln v)) (the value itself when all are equal); 0 when a value is 0; None when there are none or one
/// is negative or not finite.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return None;
    }
    if values.contains(&0.0) {
        return Some(0.0);
    }
    if values.iter().all(|v| *v == values[0]) {
        return Some(values[0]); // exactly, with no rounding through ln
    }
    let mean = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
    Some(mean.exp())
}

/// The outcome of one two-sided test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub method: Method,
    /// t for Welch, z (or the standardized rank sum) for Mann-Whitney.
    pub statistic: f64,
    /// Welch-Satterthwaite degrees of freedom (Welch only).
    pub df: Option<f64>,
    /// Two-sided p-value.
    pub p: f64,
}

/// "p=" and a p-value with three significant digits, "p<0.0001" below
/// that.
pub fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        return "p<0.0001".to_string();
    }
    let decimals = (2.0 - p.log10().floor()).max(0.0) as usize;
    format!("p={p:.decimals$}")
}

/// Welch's t-test on two samples; None with fewer than two values on a
/// side or a value that is not finite.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TestOutcome> {
    let sa = Summary::of(a)?;
    let sb = Summary::of(b)?;
    welch_from_stats(
        sa.n as f64,
        sa.mean,
        sa.stdev * sa.stdev,
        sb.n as f64,
        sb.mean,
        sb.stdev * sb.stdev,
    )
}

/// Welch's t-test from counts, means and sample variances (n - 1): for
/// series kept only as moments, such as a run's bandwidth samples. None
/// when a count is below two or a number is not finite.
pub fn welch_from_stats(
    n_a: f64,
    mean_a: f64,
    var_a: f64,
    n_b: f64,
    mean_b: f64,
    var_b: f64,
) -> Option<TestOutcome> {
    let all = [n_a, mean_a, var_a, n_b, mean_b, var_b];
    if n_a < 2.0 || n_b < 2.0 || all.iter().any(|v| !v.is_finite()) || var_a < 0.0 || var_b < 0.0 {
        return None;
    }
    let (qa, qb) = (var_a / n_a, var_b / n_b);
    let se2 = qa + qb;
    let diff = mean_b - mean_a;
    if se2 == 0.0 {
        // No spread at all: any difference is exact, none is none.
        let (statistic, p) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, 0.0)
        };
        return Some(TestOutcome {
            method: Method::Welch,
            statistic,
            df: None,
            p,
        });
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (qa * qa / (n_a - 1.0) + qb * qb / (n_b - 1.0));
    Some(TestOutcome {
        method: Method::Welch,
        statistic: t,
        df: Some(df),
        p: student_t_two_sided_p(t, df),
    })
}

/// Pooled samples with at most this many values are tested exactly.
const EXACT_MAX: usize = 60;

/// The Mann-Whitney U test. The statistic is the standardized rank sum of
/// `b` (positive when `b` tends to be larger). Up to [`EXACT_MAX`] pooled
/// values the p-value is exact: the share of the C(n, n_a) ways of
/// splitting the pooled values (tied ones taking the mean of their ranks)
/// whose rank sum lies at least as far from its mean as the one observed.
/// Past that, the normal approximation with the tie correction of the
/// variance and a continuity correction. None with an empty side or a
/// value that is not finite.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<TestOutcome> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let n = n1 + n2;
    // Rank the pooled values, ties taking the mean of their ranks; ranks
    // are kept doubled so that they stay whole numbers.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, false))
        .chain(b.iter().map(|&v| (v, true)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank2 = vec![0usize; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j, whose mean doubled is i + 1 + j.
        for r in &mut rank2[i..j] {
            *r = i + 1 + j;
        }
        let ties = (j - i) as f64;
        tie_term += ties * ties * ties - ties;
        i = j;
    }
    let w2: usize = (0..n).filter(|&k| pooled[k].1).map(|k| rank2[k]).sum();
    // E[W] doubled: n2 (n + 1).
    let mean2 = (n2 * (n + 1)) as f64;
    let (nf1, nf2, nf) = (n1 as f64, n2 as f64, n as f64);
    let var = nf1 * nf2 / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)).max(1.0));
    let dev = (w2 as f64 - mean2) / 2.0;
    let statistic = if var > 0.0 { dev / var.sqrt() } else { 0.0 };
    let p = if var <= 0.0 || !var.is_finite() {
        // Every value tied: no evidence of a difference.
        1.0
    } else if n <= EXACT_MAX {
        exact_rank_sum_p(&rank2, n2, w2, mean2)
    } else {
        let corrected = (dev.abs() - 0.5).max(0.0);
        (2.0 * (1.0 - normal_cdf(corrected / var.sqrt()))).clamp(0.0, 1.0)
    };
    Some(TestOutcome {
        method: Method::MannWhitney,
        statistic,
        df: None,
        p,
    })
}

/// P(|W - E| >= |w - E|) over every choice of `k` of the (doubled) ranks:
/// the subsets are counted by their size and rank sum, one rank at a
/// time.
fn exact_rank_sum_p(rank2: &[usize], k: usize, w2: usize, mean2: f64) -> f64 {
    let total: usize = rank2.iter().sum();
    // counts[j][s]: subsets of the ranks seen so far with j members and
    // doubled rank sum s.
    let mut counts = vec![vec![0.0f64; total + 1]; k + 1];
    counts[0][0] = 1.0;
    for &r in rank2 {
        for j in (1..=k).rev() {
            let (lower, upper) = counts.split_at_mut(j);
            let (from, to) = (&lower[j - 1], &mut upper[0]);
            for s in (r..=total).rev() {
                to[s] += from[s - r];
            }
        }
    }
    let observed = (w2 as f64 - mean2).abs();
    let (mut extreme, mut all) = (0.0, 0.0);
    for (s, c) in counts[k].iter().enumerate() {
        all += c;
        // Doubled sums are whole numbers: a small tolerance is exact.
        if (s as f64 - mean2).abs() >= observed - 1e-9 {
            extreme += c;
        }
    }
    (extreme / all).clamp(0.0, 1.0)
}

/// The smallest two-sided p-value the exact Mann-Whitney test can give
/// with `n_a` and `n_b` runs: 2 / C(n_a + n_b, n_a) (the two most extreme
/// splits), 1 at most.
pub fn mann_whitney_floor(n_a: usize, n_b: usize) -> f64 {
    let (k, n) = (n_a.min(n_b), n_a + n_b);
    // ln C(n, k), term by term.
    let ln_c: f64 = (0..k).map(|i| ((n - i) as f64 / (k - i) as f64).ln()).sum();
    (2.0 * (-ln_c).exp()).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_worked_example() {
        // Two samples whose t, df and p were computed by hand from the
        // formulas: means 20.0 and 22.0, variances 2.5 and 10.0, n 5 each:
        // se^2 = 0.5 + 2 = 2.5, t = 2 / 1.5811 = 1.2649,
        // df = 6.25 / (0.25/4 + 4/4) = 5.8824.
        let a = [18.0, 19.0, 20.0, 21.0, 22.0];
        let b = [18.0, 20.0, 22.0, 24.0, 26.0];
        let t = welch(&a, &b).unwrap();
        assert!((t.statistic - 1.264_911).abs() < 1e-6, "{t:?}");
        assert!((t.df.unwrap() - 5.882_353).abs() < 1e-6, "{t:?}");
        // Two-sided p for t = 1.2649 with 5.88 df lies between the table's
        // 0.20 (t = 1.440 at 6 df) and 0.30 (t = 1.134).
        assert!(t.p > 0.2 && t.p < 0.3, "{t:?}");
        assert!(welch(&a, &[1.0]).is_none());
    }

    #[test]
    fn welch_without_spread() {
        let same = welch(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(same.p, 1.0);
        let apart = welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert_eq!(apart.p, 0.0);
        assert!(apart.statistic > 0.0);
        assert!(welch_from_stats(1.0, 500.0, 0.0, 5.0, 1.0, 1.0).is_none());
    }

    #[test]
    fn mann_whitney_is_exact_for_small_samples() {
        // 3 against 3, completely separated: 2 of the C(6, 3) = 20 splits
        // are as extreme, p = 0.1; the test cannot go lower.
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((t.p - 0.1).abs() < 1e-12, "{t:?}");
        assert!(t.statistic > 0.0);
        assert!((mann_whitney_floor(3, 3) - 0.1).abs() < 1e-12);
        // 4 against 4: 2 / 70.
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!((t.p - 2.0 / 70.0).abs() < 1e-12, "{t:?}");
        assert!((mann_whitney_floor(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert!((mann_whitney_floor(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        // a = [1, 2, 3], b = [1.5, 4, 5]: rank sum of b is 2 + 5 + 6 = 13,
        // mean 10.5; splits of 1..6 into 3 with a sum at least 2.5 from
        // 10.5 (<= 8 or >= 13): sums 6, 7, 8 (1, 1, 2 ways) and 13, 14, 15
        // (2, 1, 1 ways): 8 of 20.
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[1.5, 4.0, 5.0]).unwrap();
        assert!((t.p - 0.4).abs() < 1e-12, "{t:?}");
        // Ties: a = [1, 2, 2], b = [2, 3]: doubled ranks 2, 6, 6, 6, 10.
        // Rank sums of b over the 10 splits: 3+5 = 8 (3 ways), 3+3 = 6 (3
        // ways), 1+3 = 4 (3 ways), 1+5 = 6 (1 way); mean 6. Observed 8:
        // |8 - 6| >= 2 for the 3 + 3 splits at 8 and 4: p = 0.6.
        let t = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0]).unwrap();
        assert!((t.p - 0.6).abs() < 1e-12, "{t:?}");
        // All tied: no difference.
        assert_eq!(mann_whitney(&[4.0, 4.0], &[4.0]).unwrap().p, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn mann_whitney_large_samples_use_the_normal_approximation() {
        // 40 against 40, separated: far below any level.
        let a: Vec<f64> = (1..=40).map(f64::from).collect();
        let b: Vec<f64> = (41..=80).map(f64::from).collect();
        let t = mann_whitney(&a, &b).unwrap();
        assert!(t.p < 1e-10, "{t:?}");
        // Interleaved: no difference.
        let a: Vec<f64> = (0..40).map(|i| f64::from(2 * i)).collect();
        let b: Vec<f64> = (0..40).map(|i| f64::from(2 * i + 1)).collect();
        assert!(mann_whitney(&a, &b).unwrap().p > 0.5);
    }

    #[test]
    fn statistics_of_runs() {
        let g = geometric_mean(&[1.0, 4.0, 16.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
        assert_eq!(geometric_mean(&[3.0, 0.0]), Some(0.0));
        assert_eq!(geometric_mean(&[-1.0, 2.0]), None);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(Statistic::Median.of(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(Method::Welch.statistic(), Statistic::GeometricMean);
        assert_eq!(Method::MannWhitney.statistic(), Statistic::Median);
        assert_eq!("mw".parse::<Method>(), Ok(Method::MannWhitney));
        assert!("ks"
            .parse::<Method>()
            .unwrap_err()
            .to_string()
            .contains("welch or mann-whitney"));
        assert_eq!(fmt_p(0.0123), "p=0.0123");
        assert_eq!(fmt_p(0.5), "p=0.500");
        assert_eq!(fmt_p(0.00001), "p<0.0001");
    }
}
