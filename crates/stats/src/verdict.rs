//! The verdict on two sets of runs, the one way iolab decides whether a
//! difference is real (compare's table, diff): each side's runs are
//! summarized by their geometric mean, and Welch's t-test on the runs'
//! logarithms says whether the ratio of the two differs from 1, with the
//! ratio's confidence interval. Storage timings are positive and their
//! noise is multiplicative (a run 10% slower, not 10 MB/s slower), which
//! the logarithm makes additive and near normal; Welch's test on the logs
//! then reaches significance from 2 runs a side and holds its false-alarm
//! rate at 3 (the simulations in `verdict_sim` measure both, and
//! docs/compare.md shows them). A rank test cannot: 3 runs against 3 give
//! no p-value below 0.1.
//!
//! Verdicts tested together (the metrics of one job, the rows of one
//! workload) are corrected for their number by Holm's step-down method,
//! so the chance that any of them is a false alarm stays at the level.
//! Where the method cannot decide (one run a side, or a rank test with too
//! few runs to ever reach the level), the verdict says so and how many
//! runs it needs, instead of "within noise".

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::compare::{mann_whitney, mann_whitney_floor, welch, Method, Statistic};
use crate::dist::student_t_quantile;
use crate::Better;

/// One side's runs against the other's: their statistics, the ratio b/a,
/// its interval, and the test's raw p-value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioTest {
    pub method: Method,
    pub statistic: Statistic,
    pub n_a: usize,
    pub n_b: usize,
    /// The statistic of each side's runs.
    pub a: f64,
    pub b: f64,
    /// b / a; None when a is 0.
    pub ratio: Option<f64>,
    /// The confidence interval of the ratio at 1 - alpha (Welch only,
    /// with two runs or more a side).
    pub interval: Option<(f64, f64)>,
    /// The two-sided p-value before any correction; None when the method
    /// cannot test these runs (fewer than two a side, a value of 0).
    pub p: Option<f64>,
    /// The smallest p-value the method can give with these counts.
    pub p_floor: f64,
}

/// The runs a test cannot take: a side without runs, or a value that is
/// not finite or (for ratios) negative.
fn usable(v: &[f64]) -> bool {
    !v.is_empty() && v.iter().all(|x| x.is_finite() && *x >= 0.0)
}

/// Tests `b` against `a` with `method`; the interval is at 1 - `alpha`.
/// None when a side has no runs or a value that is negative or not
/// finite.
pub fn ratio_test(a: &[f64], b: &[f64], method: Method, alpha: f64) -> Option<RatioTest> {
    if !usable(a) || !usable(b) {
        return None;
    }
    let statistic = method.statistic();
    let (ca, cb) = (statistic.of(a)?, statistic.of(b)?);
    let mut t = RatioTest {
        method,
        statistic,
        n_a: a.len(),
        n_b: b.len(),
        a: ca,
        b: cb,
        ratio: (ca != 0.0).then(|| cb / ca),
        interval: None,
        p: None,
        p_floor: 1.0,
    };
    if a.len() < 2 || b.len() < 2 {
        return Some(t);
    }
    match method {
        Method::Welch => {
            if a.contains(&0.0) || b.contains(&0.0) {
                return Some(t); // no logarithm of 0
            }
            let (la, lb) = (logs(a), logs(b));
            let w = welch(&la, &lb)?;
            t.p = Some(w.p);
            t.p_floor = 0.0;
            let log_ratio = (cb / ca).ln();
            t.interval = Some(match w.df {
                Some(df) if w.statistic != 0.0 && w.statistic.is_finite() => {
                    let se = log_ratio / w.statistic;
                    let q = student_t_quantile(1.0 - alpha / 2.0, df);
                    ((log_ratio - q * se).exp(), (log_ratio + q * se).exp())
                }
                Some(df) => {
                    // t = 0: the same geometric means; the half-width from
                    // the spread of the logs.
                    let se =
                        (variance(&la) / la.len() as f64 + variance(&lb) / lb.len() as f64).sqrt();
                    let q = student_t_quantile(1.0 - alpha / 2.0, df);
                    ((-q * se).exp(), (q * se).exp())
                }
                // No spread at all: the ratio is exact.
                None => (cb / ca, cb / ca),
            });
        }
        Method::MannWhitney => {
            t.p = Some(mann_whitney(a, b)?.p);
            t.p_floor = mann_whitney_floor(a.len(), b.len());
        }
    }
    Some(t)
}

/// Only the raw p-value of [`ratio_test`] (no interval): what the
/// simulations need, fast.
pub fn p_value(a: &[f64], b: &[f64], method: Method) -> Option<f64> {
    if !usable(a) || !usable(b) || a.len() < 2 || b.len() < 2 {
        return None;
    }
    match method {
        Method::Welch if a.contains(&0.0) || b.contains(&0.0) => None,
        Method::Welch => welch(&logs(a), &logs(b)).map(|t| t.p),
        Method::MannWhitney => mann_whitney(a, b).map(|t| t.p),
    }
}

fn logs(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.ln()).collect()
}

fn variance(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
}

/// Holm's step-down adjustment: the p-values, each raised so that
/// rejecting those below the level keeps the chance of any false alarm
/// among them at the level, whatever their dependence.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| p[x].total_cmp(&p[y]));
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// What the runs say about b against a.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// b is larger than a beyond the noise; `p` is the corrected p-value.
    Larger { p: f64 },
    /// b is smaller than a beyond the noise.
    Smaller { p: f64 },
    /// The two cannot be told apart ("≈").
    Same { p: f64 },
    /// The method cannot reach the level with so few runs, whatever they
    /// hold: it needs `needs` runs a side.
    TooFewRuns { needs: usize },
    /// One run a side: nothing to judge the noise by.
    OneRun,
    /// No test: a side is missing, or a value the ratio cannot take (0).
    NoTest,
}

impl Verdict {
    /// Whether the runs decide a difference.
    pub fn is_significant(&self) -> bool {
        matches!(self, Verdict::Larger { .. } | Verdict::Smaller { .. })
    }

    /// The corrected p-value, when there was a test.
    pub fn p(&self) -> Option<f64> {
        match *self {
            Verdict::Larger { p } | Verdict::Smaller { p } | Verdict::Same { p } => Some(p),
            _ => None,
        }
    }

    /// Whether b is better than a beyond the noise, for a metric that is
    /// better `better`; None when it is not decided or has no direction.
    pub fn b_is_better(&self, better: Better) -> Option<bool> {
        match (self, better) {
            (_, Better::Neither) => None,
            (Verdict::Larger { .. }, b) => Some(b == Better::Higher),
            (Verdict::Smaller { .. }, b) => Some(b == Better::Lower),
            _ => None,
        }
    }

    /// The verdict's mark in a table cell: `+` significantly better, `-`
    /// significantly worse, `≠` different (a metric without a direction),
    /// `≈` cannot be told apart, `?` cannot tell.
    pub fn mark(&self, better: Better) -> &'static str {
        match (self, self.b_is_better(better)) {
            (_, Some(true)) => "+",
            (_, Some(false)) => "-",
            (Verdict::Larger { .. } | Verdict::Smaller { .. }, None) => "≠",
            (Verdict::Same { .. }, _) => "≈",
            _ => "?",
        }
    }

    /// The verdict in words for b against a metric that is better
    /// `better`: "faster", "slower", "higher", "lower", "≈ cannot be told
    /// apart", "too few runs to tell (needs 5 a side)", "one run per side:
    /// cannot tell; use --repeat", "no test".
    pub fn words(&self, better: Better) -> String {
        match (self, self.b_is_better(better)) {
            (_, Some(true)) => "faster".into(),
            (_, Some(false)) => "slower".into(),
            (Verdict::Larger { .. }, None) => "higher".into(),
            (Verdict::Smaller { .. }, None) => "lower".into(),
            (Verdict::Same { .. }, _) => "≈ cannot be told apart".into(),
            (Verdict::TooFewRuns { needs }, _) => {
                format!("too few runs to tell (needs {needs} a side)")
            }
            (Verdict::OneRun, _) => "one run per side: cannot tell; use --repeat".into(),
            (Verdict::NoTest, _) => "no test".into(),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words(Better::Neither))
    }
}

/// The runs a side needs for `method` to be able to reach `alpha` in a
/// family of `m` tests (the strictest Holm step, alpha / m).
pub fn runs_needed(method: Method, m: usize, alpha: f64) -> usize {
    match method {
        Method::Welch => 2,
        Method::MannWhitney => (2..1000)
            .find(|&n| mann_whitney_floor(n, n) * (m.max(1) as f64) < alpha)
            .unwrap_or(1000),
    }
}

/// The verdicts of tests made together, at level `alpha` with Holm's
/// correction over those that could be tested. `None` stands for a pair
/// with no test at all (a side missing).
pub fn decide(tests: &[Option<&RatioTest>], alpha: f64) -> Vec<Verdict> {
    let tested: Vec<(usize, f64)> = tests
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((i, (*t)?.p?)))
        .collect();
    let m = tested.len();
    // The family a test with too few runs would join once it had them.
    let family = tests.iter().filter(|t| t.is_some()).count();
    let adjusted = holm(&tested.iter().map(|t| t.1).collect::<Vec<_>>());
    tests
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let Some(t) = t else {
                return Verdict::NoTest;
            };
            if t.n_a == 1 && t.n_b == 1 {
                return Verdict::OneRun;
            }
            if t.n_a < 2 || t.n_b < 2 {
                return Verdict::TooFewRuns {
                    needs: runs_needed(t.method, family, alpha),
                };
            }
            let Some(k) = tested.iter().position(|x| x.0 == i) else {
                return Verdict::NoTest; // a value of 0
            };
            if t.p_floor * m as f64 >= alpha {
                return Verdict::TooFewRuns {
                    needs: runs_needed(t.method, m, alpha),
                };
            }
            let p = adjusted[k];
            if p >= alpha {
                Verdict::Same { p }
            } else if t.b > t.a {
                Verdict::Larger { p }
            } else {
                Verdict::Smaller { p }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DEFAULT_ALPHA;

    #[test]
    fn holm_steps_down() {
        // Sorted 0.01, 0.02, 0.04 of 3: 0.03, 0.04, 0.04.
        let adj = holm(&[0.04, 0.01, 0.02]);
        let want = [0.04, 0.03, 0.04];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), [1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn a_clear_ratio_with_its_interval() {
        let a = [100.0, 102.0, 98.0];
        let b = [150.0, 153.0, 147.0];
        let t = ratio_test(&a, &b, Method::Welch, DEFAULT_ALPHA).unwrap();
        let r = t.ratio.unwrap();
        assert!((r - 1.5).abs() < 1e-3, "{t:?}");
        let (lo, hi) = t.interval.unwrap();
        assert!(lo < r && r < hi && lo > 1.4 && hi < 1.6, "{t:?}");
        assert_eq!(t.statistic, Statistic::GeometricMean);
        let v = decide(&[Some(&t)], DEFAULT_ALPHA);
        assert!(matches!(v[0], Verdict::Larger { .. }), "{v:?}");
        assert_eq!(v[0].words(Better::Higher), "faster");
        assert_eq!(v[0].words(Better::Lower), "slower");
        assert_eq!(v[0].mark(Better::Higher), "+");
        assert_eq!(v[0].mark(Better::Lower), "-");
        assert_eq!(v[0].mark(Better::Neither), "≠");
    }

    #[test]
    fn the_interval_of_equal_means_is_around_one() {
        let t = ratio_test(&[90.0, 110.0], &[110.0, 90.0], Method::Welch, 0.05).unwrap();
        let (lo, hi) = t.interval.unwrap();
        assert!(
            lo < 1.0 && hi > 1.0 && (lo * hi - 1.0).abs() < 1e-9,
            "{t:?}"
        );
        let v = decide(&[Some(&t)], 0.05);
        assert!(matches!(v[0], Verdict::Same { .. }), "{v:?}");
        assert_eq!(v[0].mark(Better::Higher), "≈");
        assert_eq!(v[0].words(Better::Higher), "≈ cannot be told apart");
    }

    #[test]
    fn one_run_a_side_never_decides() {
        let t = ratio_test(&[100.0], &[300.0], Method::Welch, 0.05).unwrap();
        assert_eq!(t.ratio, Some(3.0));
        assert_eq!((t.p, t.interval), (None, None));
        let v = decide(&[Some(&t)], 0.05);
        assert_eq!(v[0], Verdict::OneRun);
        assert_eq!(
            v[0].words(Better::Higher),
            "one run per side: cannot tell; use --repeat"
        );
        assert_eq!(v[0].mark(Better::Higher), "?");
        let t = ratio_test(&[100.0], &[300.0, 310.0], Method::Welch, 0.05).unwrap();
        let v = decide(&[Some(&t)], 0.05);
        assert_eq!(v[0], Verdict::TooFewRuns { needs: 2 });
        assert_eq!(
            v[0].words(Better::Lower),
            "too few runs to tell (needs 2 a side)"
        );
    }

    #[test]
    fn a_rank_test_says_when_it_cannot_decide() {
        let a = [1.0, 2.0, 3.0];
        let b = [10.0, 20.0, 30.0];
        let t = ratio_test(&a, &b, Method::MannWhitney, 0.05).unwrap();
        assert_eq!(t.statistic, Statistic::Median);
        assert_eq!(t.ratio, Some(10.0));
        let v = decide(&[Some(&t)], 0.05);
        assert_eq!(v[0], Verdict::TooFewRuns { needs: 4 }, "{t:?}");
        // Four tested together: 4 a side give 4 * 2/70 > 0.05; 5 do.
        let four = [Some(&t), Some(&t), Some(&t), Some(&t)];
        assert_eq!(decide(&four, 0.05)[0], Verdict::TooFewRuns { needs: 5 });
        let a: Vec<f64> = (1..=5).map(f64::from).collect();
        let b: Vec<f64> = (11..=15).map(f64::from).collect();
        let t = ratio_test(&a, &b, Method::MannWhitney, 0.05).unwrap();
        let v = decide(&[Some(&t)], 0.05);
        assert!(matches!(v[0], Verdict::Larger { .. }), "{v:?}");
    }

    #[test]
    fn several_metrics_are_corrected_together() {
        // Each p alone is below 0.05; three together under Holm are not
        // all: the smallest is tested at 0.05 / 3.
        let mk = |b: [f64; 3]| ratio_test(&[100.0, 104.0, 96.0], &b, Method::Welch, 0.05).unwrap();
        let strong = mk([200.0, 204.0, 196.0]);
        let weak = mk([112.0, 113.0, 111.0]);
        let p_weak = weak.p.unwrap();
        assert!(p_weak < 0.05 && p_weak * 3.0 > 0.05, "{weak:?}");
        let alone = decide(&[Some(&weak)], 0.05);
        assert!(alone[0].is_significant());
        let together = decide(&[Some(&strong), Some(&weak), Some(&weak)], 0.05);
        assert!(together[0].is_significant(), "{together:?}");
        assert!(!together[1].is_significant(), "{together:?}");
        assert!(together[1].p().unwrap() >= p_weak * 2.0 - 1e-12);
    }

    #[test]
    fn values_a_ratio_cannot_take() {
        assert!(ratio_test(&[], &[1.0], Method::Welch, 0.05).is_none());
        assert!(ratio_test(&[-1.0, 2.0], &[1.0, 2.0], Method::Welch, 0.05).is_none());
        let t = ratio_test(&[0.0, 1.0], &[1.0, 2.0], Method::Welch, 0.05).unwrap();
        assert_eq!(t.p, None);
        assert_eq!(decide(&[Some(&t), None], 0.05), [Verdict::NoTest; 2]);
        // No spread: an exact difference, and an exact sameness.
        let t = ratio_test(&[5.0, 5.0], &[6.0, 6.0], Method::Welch, 0.05).unwrap();
        let (lo, hi) = t.interval.unwrap();
        assert!(
            (lo - 1.2).abs() < 1e-12 && (hi - 1.2).abs() < 1e-12,
            "{t:?}"
        );
        assert!(decide(&[Some(&t)], 0.05)[0].is_significant());
        let t = ratio_test(&[5.0, 5.0], &[5.0, 5.0], Method::Welch, 0.05).unwrap();
        assert!(matches!(decide(&[Some(&t)], 0.05)[0], Verdict::Same { .. }));
        assert_eq!(p_value(&[5.0, 5.0], &[5.0], Method::Welch), None);
    }

    #[test]
    fn verdicts_read_back_from_json() {
        let v = Verdict::TooFewRuns { needs: 4 };
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(text, r#"{"verdict":"too-few-runs","needs":4}"#);
        assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), v);
    }
}
