//! Whether two sets of measurements differ by more than their noise:
//! Welch's t-test (unequal variances, from the samples or from summary
//! numbers such as a run's bandwidth-sample moments) and the Mann-Whitney U
//! test (normal approximation with tie and continuity correction), both
//! two-sided, and the [`Significance`] verdict a comparison prints.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dist::{normal_cdf, student_t_two_sided_p};
use crate::repeats::Summary;

/// The significance level iolab uses unless told otherwise.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Which test produced a p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    Welch,
    MannWhitney,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Welch => "Welch's t-test",
            Method::MannWhitney => "Mann-Whitney U",
        })
    }
}

/// The outcome of one two-sided test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub method: Method,
    /// t for Welch, z for Mann-Whitney.
    pub statistic: f64,
    /// Welch-Satterthwaite degrees of freedom (Welch only).
    pub df: Option<f64>,
    /// Two-sided p-value.
    pub p: f64,
}

/// The verdict on a difference.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Significance {
    /// The difference is larger than the noise: p below the level.
    Significant { p: f64 },
    /// The difference could be noise: p at or above the level.
    WithinNoise { p: f64 },
    /// Too few measurements to test (fewer than two on a side).
    TooFewSamples,
}

impl Significance {
    /// The verdict for a p-value at significance level `alpha`.
    pub fn from_p(p: f64, alpha: f64) -> Self {
        if p < alpha {
            Significance::Significant { p }
        } else {
            Significance::WithinNoise { p }
        }
    }

    pub fn is_significant(&self) -> bool {
        matches!(self, Significance::Significant { .. })
    }

    pub fn p(&self) -> Option<f64> {
        match *self {
            Significance::Significant { p } | Significance::WithinNoise { p } => Some(p),
            Significance::TooFewSamples => None,
        }
    }
}

impl fmt::Display for Significance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Significance::Significant { p } => write!(f, "significant ({})", fmt_p(p)),
            Significance::WithinNoise { p } => write!(f, "within noise ({})", fmt_p(p)),
            Significance::TooFewSamples => f.write_str("too few samples"),
        }
    }
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

/// The Mann-Whitney U test, normal approximation with the tie correction
/// of the variance and a continuity correction of 1/2; the statistic is z
/// (positive when `b` tends to be larger). None with an empty side or a
/// value that is not finite.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<TestOutcome> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let n = n1 + n2;
    // Rank the pooled values, ties taking the mean of their ranks.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i + 1;
        while j < pooled.len() && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let ties = (j - i) as f64;
        // Ranks i+1 ..= j, whose mean is (i + 1 + j) / 2.
        let rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_a += rank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        tie_term += ties * ties * ties - ties;
        i = j;
    }
    let u_a = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    // U of b: how often a value of b beats one of a.
    let u_b = n1 * n2 - u_a;
    let mean = n1 * n2 / 2.0;
    let var = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 || !var.is_finite() {
        // Every value tied: no evidence of a difference.
        return Some(TestOutcome {
            method: Method::MannWhitney,
            statistic: 0.0,
            df: None,
            p: 1.0,
        });
    }
    let dev = u_b - mean;
    let corrected = (dev.abs() - 0.5).max(0.0) * dev.signum();
    let z = corrected / var.sqrt();
    let p = (2.0 * (1.0 - normal_cdf(z.abs()))).clamp(0.0, 1.0);
    Some(TestOutcome {
        method: Method::MannWhitney,
        statistic: z,
        df: None,
        p,
    })
}

/// Two sets of measurements side by side: their summaries, the ratio of
/// means (b over a), the test and the verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub a: Summary,
    pub b: Summary,
    /// mean(b) / mean(a); None when mean(a) is 0.
    pub ratio: Option<f64>,
    pub test: Option<TestOutcome>,
    pub verdict: Significance,
}

/// Compares measurements `a` and `b` with `method` at level `alpha`. None
/// when a side is empty or holds a value that is not finite; with fewer
/// than two on a side the verdict is [`Significance::TooFewSamples`].
pub fn compare(a: &[f64], b: &[f64], method: Method, alpha: f64) -> Option<Difference> {
    let sa = Summary::of(a)?;
    let sb = Summary::of(b)?;
    let test = if sa.n < 2 || sb.n < 2 {
        None
    } else {
        match method {
            Method::Welch => welch(a, b),
            Method::MannWhitney => mann_whitney(a, b),
        }
    };
    let verdict = test.map_or(Significance::TooFewSamples, |t| {
        Significance::from_p(t.p, alpha)
    });
    let ratio = (sa.mean != 0.0).then(|| sb.mean / sa.mean);
    Some(Difference {
        a: sa,
        b: sb,
        ratio,
        test,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small seeded generator (SplitMix64) with normal draws by
    /// Box-Muller, so the tests' data are fixed and reproducible.
    struct Rng(u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn uniform(&mut self) -> f64 {
            ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u1, u2) = (self.uniform(), self.uniform());
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
        /// `n` draws around `mean` with a relative noise of `rel` (stdev).
        fn draws(&mut self, n: usize, mean: f64, rel: f64) -> Vec<f64> {
            (0..n).map(|_| mean * (1.0 + rel * self.normal())).collect()
        }
    }

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
    }

    #[test]
    fn mann_whitney_counts_ranks_and_ties() {
        // Completely separated samples of 8: U = 0, z = -(32 - 0.5) / 9.52.
        let a: Vec<f64> = (1..=8).map(f64::from).collect();
        let b: Vec<f64> = (11..=18).map(f64::from).collect();
        let t = mann_whitney(&a, &b).unwrap();
        let sd = (64.0f64 * 17.0 / 12.0).sqrt();
        assert!((t.statistic - 31.5 / sd).abs() < 1e-12, "{t:?}");
        assert!(t.p < 0.001, "{t:?}");
        // Ties: a = [1, 2, 2], b = [2, 3]: pooled ranks 1, 3, 3, 3, 5.
        // R_a = 7, U_a = 1, U_b = 5, mean 3, tie term 24:
        // var = 6/12 * (6 - 24/20) = 2.4, z = (2 - 0.5) / sqrt(2.4).
        let t = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0]).unwrap();
        assert!((t.statistic - 1.5 / 2.4f64.sqrt()).abs() < 1e-12, "{t:?}");
        // All tied: no difference.
        assert_eq!(mann_whitney(&[4.0, 4.0], &[4.0]).unwrap().p, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn a_twenty_percent_difference_is_significant() {
        let mut rng = Rng(20);
        let a = rng.draws(8, 500.0, 0.03);
        let b = rng.draws(8, 600.0, 0.03);
        for method in [Method::Welch, Method::MannWhitney] {
            let d = compare(&a, &b, method, DEFAULT_ALPHA).unwrap();
            assert!(d.verdict.is_significant(), "{method}: {d:?}");
            let ratio = d.ratio.unwrap();
            assert!((ratio - 1.2).abs() < 0.05, "{ratio}");
        }
        // And over many seeds, not just this one: Welch finds it every time.
        for seed in 0..200 {
            let mut rng = Rng(1000 + seed);
            let a = rng.draws(8, 500.0, 0.03);
            let b = rng.draws(8, 600.0, 0.03);
            let d = compare(&a, &b, Method::Welch, DEFAULT_ALPHA).unwrap();
            assert!(d.verdict.is_significant(), "seed {seed}: {d:?}");
        }
    }

    #[test]
    fn two_draws_from_one_distribution_are_within_noise() {
        let mut rng = Rng(7);
        let a = rng.draws(8, 500.0, 0.03);
        let b = rng.draws(8, 500.0, 0.03);
        for method in [Method::Welch, Method::MannWhitney] {
            let d = compare(&a, &b, method, DEFAULT_ALPHA).unwrap();
            assert!(
                matches!(d.verdict, Significance::WithinNoise { .. }),
                "{method}: {d:?}"
            );
            assert!(d.verdict.to_string().starts_with("within noise"));
        }
        // Over many seeds the false alarms stay near the 5% level.
        for method in [Method::Welch, Method::MannWhitney] {
            let alarms = (0..1000)
                .filter(|seed| {
                    let mut rng = Rng(50_000 + seed);
                    let a = rng.draws(8, 500.0, 0.03);
                    let b = rng.draws(8, 500.0, 0.03);
                    compare(&a, &b, method, DEFAULT_ALPHA)
                        .unwrap()
                        .verdict
                        .is_significant()
                })
                .count();
            assert!((25..=80).contains(&alarms), "{method}: {alarms} of 1000");
        }
    }

    #[test]
    fn moments_of_bandwidth_samples_can_be_compared() {
        // Two runs with 120 bandwidth samples each, kept as moments.
        let t = welch_from_stats(120.0, 500.0, 400.0, 120.0, 510.0, 400.0).unwrap();
        assert!(t.p < 0.001, "{t:?}");
        let t = welch_from_stats(120.0, 500.0, 400.0, 120.0, 501.0, 400.0).unwrap();
        assert!(t.p > 0.5, "{t:?}");
        assert!(welch_from_stats(1.0, 500.0, 0.0, 5.0, 1.0, 1.0).is_none());
    }

    #[test]
    fn single_measurements_cannot_be_tested() {
        let d = compare(&[100.0], &[120.0], Method::Welch, DEFAULT_ALPHA).unwrap();
        assert_eq!(d.verdict, Significance::TooFewSamples);
        assert_eq!(d.ratio, Some(1.2));
        assert_eq!(d.verdict.p(), None);
        assert_eq!(d.verdict.to_string(), "too few samples");
        assert_eq!(
            Significance::from_p(0.0123, 0.05).to_string(),
            "significant (p=0.0123)"
        );
        assert_eq!(
            Significance::from_p(0.5, 0.05).to_string(),
            "within noise (p=0.500)"
        );
        assert_eq!(
            Significance::from_p(0.00001, 0.05).to_string(),
            "significant (p<0.0001)"
        );
    }
}
