//! What `iolab diff A B` computes: the headline metrics of two records
//! matched by name, each with the statistic its verdict compares, the
//! ratio B/A with its interval, and the verdict in words (faster, slower,
//! ≈, or why it cannot tell). The verdicts are those of
//! [`iolab_stats::verdict`]: the runs of each side (a metric's `samples`)
//! compared by the chosen method, Holm-corrected over every metric tested
//! together. One run a side is never a verdict: the windows within a run
//! are not independent samples of run-to-run noise.

use iolab_stats::verdict::{decide, ratio_test, RatioTest, Verdict};
use iolab_stats::{fmt_p, Better, Method, Statistic, DEFAULT_ALPHA};
use serde::{Deserialize, Serialize};

use crate::Metric;

/// What a row's verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The runs of each side (`samples`, or the one value), counts given.
    Runs { a: usize, b: usize },
    /// A side lacks the metric.
    Missing,
}

/// Which way a metric is better, from its unit: rates up are faster,
/// times and latencies up are slower; other units (sizes, counts) have no
/// direction.
pub fn better_of(unit: &str) -> Better {
    match unit {
        "MB/s" | "KB/s" | "GB/s" | "MiB/s" | "KiB/s" | "GiB/s" | "IOPS" | "ops/s" => Better::Higher,
        "ns" | "us" | "ms" | "s" => Better::Lower,
        _ => Better::Neither,
    }
}

/// One metric of both records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricDiff {
    pub name: String,
    pub unit: String,
    pub better: Better,
    /// The statistic of A's and B's runs that the verdict compares (their
    /// geometric mean, or median for the rank test; the value itself for
    /// one run); None when that record lacks the metric.
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// b / a, when both are there and a is not 0.
    pub ratio: Option<f64>,
    /// The confidence interval of the ratio at 1 - alpha, when the
    /// method gives one.
    pub interval: Option<(f64, f64)>,
    pub basis: Basis,
    /// The raw p-value, before the correction for several metrics.
    pub p_raw: Option<f64>,
    pub verdict: Verdict,
}

impl MetricDiff {
    /// The verdict and its basis in words: "faster (p=0.0012, 3 vs 3
    /// runs)", "≈ cannot be told apart (p=0.41, 3 vs 3 runs)", "one run
    /// per side: cannot tell; use --repeat".
    pub fn explain(&self) -> String {
        let words = self.verdict.words(self.better);
        match (self.basis, self.verdict) {
            (Basis::Missing, _) => "only in one result".to_string(),
            (Basis::Runs { a, b }, Verdict::TooFewRuns { needs }) => {
                format!("too few runs to tell ({a} vs {b} runs; needs {needs} a side)")
            }
            (Basis::Runs { a, b }, v) => match v.p() {
                Some(p) => format!("{words} ({}, {a} vs {b} runs)", fmt_p(p)),
                None => words,
            },
        }
    }

    /// "x1.234", with the interval when there is one: "x1.234 [1.10, 1.38]".
    pub fn ratio_text(&self) -> String {
        let Some(r) = self.ratio else {
            return "-".to_string();
        };
        match self.interval {
            Some((lo, hi)) => format!("x{r:.3} [{lo:.2}, {hi:.2}]"),
            None => format!("x{r:.3}"),
        }
    }
}

/// Options of a diff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffOpts {
    pub method: Method,
    pub alpha: f64,
}

impl Default for DiffOpts {
    fn default() -> Self {
        DiffOpts {
            method: Method::Welch,
            alpha: DEFAULT_ALPHA,
        }
    }
}

/// The statistic the verdicts of `opts` compare.
pub fn tested_statistic(opts: DiffOpts) -> Statistic {
    opts.method.statistic()
}

/// A metric's runs: its samples, or its one value.
fn runs(m: &Metric) -> Vec<f64> {
    match &m.samples {
        Some(s) if !s.is_empty() => s.clone(),
        _ => vec![m.value],
    }
}

/// The metrics of `a` in their order, then those only `b` has, matched by
/// name; the metrics both have are tested together (Holm).
pub fn diff_metrics(a: &[Metric], b: &[Metric], opts: DiffOpts) -> Vec<MetricDiff> {
    let mut pairs: Vec<(Option<&Metric>, Option<&Metric>)> = Vec::new();
    for ma in a {
        pairs.push((Some(ma), b.iter().find(|m| m.name == ma.name)));
    }
    for mb in b {
        if !a.iter().any(|m| m.name == mb.name) {
            pairs.push((None, Some(mb)));
        }
    }
    let tests: Vec<Option<RatioTest>> = pairs
        .iter()
        .map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => ratio_test(&runs(x), &runs(y), opts.method, opts.alpha),
            _ => None,
        })
        .collect();
    let refs: Vec<Option<&RatioTest>> = tests.iter().map(Option::as_ref).collect();
    let verdicts = decide(&refs, opts.alpha);
    let statistic = opts.method.statistic();
    pairs
        .iter()
        .zip(tests.iter().zip(verdicts))
        .map(|((x, y), (t, verdict))| {
            let any = x.or(*y).cloned().unwrap_or_default();
            let side = |m: &Option<&Metric>| {
                m.and_then(|m| statistic.of(&runs(m)))
                    .or_else(|| m.map(|m| m.value))
                    .filter(|v| !v.is_nan())
            };
            let (va, vb) = (side(x), side(y));
            let ratio = match (va, vb) {
                (Some(p), Some(q)) if p != 0.0 => Some(q / p),
                _ => None,
            };
            let basis = match (x, y) {
                (Some(x), Some(y)) => Basis::Runs {
                    a: runs(x).len(),
                    b: runs(y).len(),
                },
                _ => Basis::Missing,
            };
            MetricDiff {
                better: better_of(&any.unit),
                name: any.name,
                unit: any.unit,
                a: va,
                b: vb,
                ratio,
                interval: t.as_ref().and_then(|t| t.interval),
                basis,
                p_raw: t.as_ref().and_then(|t| t.p),
                verdict,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three(v: f64) -> Vec<f64> {
        vec![v * 0.99, v, v * 1.01]
    }

    #[test]
    fn repeats_single_values_and_missing_metrics() {
        let a = vec![
            Metric::new("bw", 100.0, "MB/s").with_samples(three(100.0)),
            Metric::new("iops", 1000.0, "IOPS").with_windows(20, 1000.0, 30.0),
            Metric::new("p99", 80.0, "us").with_samples(three(80.0)),
            Metric::new("only a", 1.0, "s"),
        ];
        let b = vec![
            Metric::new("only b", 2.0, "s"),
            Metric::new("p99", 120.0, "us").with_samples(three(120.0)),
            Metric::new("iops", 2000.0, "IOPS").with_windows(20, 2000.0, 30.0),
            Metric::new("bw", 120.0, "MB/s").with_samples(three(120.0)),
        ];
        let d = diff_metrics(&a, &b, DiffOpts::default());
        let names: Vec<&str> = d.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bw", "iops", "p99", "only a", "only b"]);
        assert!((d[0].ratio.unwrap() - 1.2).abs() < 1e-9, "{d:?}");
        assert_eq!(d[0].basis, Basis::Runs { a: 3, b: 3 });
        assert!(
            d[0].explain().starts_with("faster (p"),
            "{}",
            d[0].explain()
        );
        assert!(
            d[0].explain().ends_with(", 3 vs 3 runs)"),
            "{}",
            d[0].explain()
        );
        let (lo, hi) = d[0].interval.unwrap();
        assert!(lo > 1.1 && hi < 1.3, "{d:?}");
        assert!(
            d[0].ratio_text().starts_with("x1.200 ["),
            "{}",
            d[0].ratio_text()
        );
        // One run a side, however many windows: no verdict.
        assert_eq!(d[1].verdict, Verdict::OneRun);
        assert_eq!(
            d[1].explain(),
            "one run per side: cannot tell; use --repeat"
        );
        // Latency up is slower.
        assert!(d[2].explain().starts_with("slower"), "{}", d[2].explain());
        assert_eq!((d[3].a, d[3].b, d[3].ratio), (Some(1.0), None, None));
        assert_eq!(d[3].explain(), "only in one result");
        assert_eq!((d[4].a, d[4].b), (None, Some(2.0)));
    }

    #[test]
    fn the_metrics_of_a_diff_are_corrected_together() {
        // A p just under 0.05 alone; with three other metrics, not.
        let weak_a = Metric::new("x", 100.0, "MB/s").with_samples(vec![100.0, 104.0, 96.0]);
        let weak_b = Metric::new("x", 112.0, "MB/s").with_samples(vec![112.0, 113.0, 111.0]);
        let alone = diff_metrics(
            std::slice::from_ref(&weak_a),
            std::slice::from_ref(&weak_b),
            DiffOpts::default(),
        );
        assert!(alone[0].verdict.is_significant(), "{alone:?}");
        let same = |n: &str| Metric::new(n, 1.0, "us").with_samples(vec![1.0, 1.1, 0.9]);
        let a = [weak_a, same("p"), same("q"), same("r")];
        let b = [weak_b, same("p"), same("q"), same("r")];
        let d = diff_metrics(&a, &b, DiffOpts::default());
        assert!(!d[0].verdict.is_significant(), "{d:?}");
        assert!(
            d[0].explain().starts_with("≈ cannot be told apart"),
            "{}",
            d[0].explain()
        );
        assert!(d[0].p_raw.unwrap() < 0.05);
    }

    #[test]
    fn mann_whitney_on_request_says_when_it_cannot_decide() {
        let a = [Metric::new("x", 2.0, "MB/s").with_samples(vec![1.0, 2.0, 3.0])];
        let b = [Metric::new("x", 20.0, "MB/s").with_samples(vec![10.0, 20.0, 30.0])];
        let opts = DiffOpts {
            method: Method::MannWhitney,
            ..DiffOpts::default()
        };
        let d = diff_metrics(&a, &b, opts);
        assert_eq!(d[0].verdict, Verdict::TooFewRuns { needs: 4 });
        assert_eq!(
            d[0].explain(),
            "too few runs to tell (3 vs 3 runs; needs 4 a side)"
        );
        // The statistic shown is the one tested: medians.
        assert_eq!((d[0].a, d[0].b), (Some(2.0), Some(20.0)));
        assert_eq!(tested_statistic(opts), Statistic::Median);
        let a = [Metric::new("x", 1.0, "").with_samples((1..=8).map(f64::from).collect())];
        let b = [Metric::new("x", 2.0, "").with_samples((11..=18).map(f64::from).collect())];
        let d = diff_metrics(&a, &b, opts);
        assert!(matches!(d[0].verdict, Verdict::Larger { .. }));
        assert_eq!(d[0].explain().split(' ').next(), Some("higher"));
    }

    #[test]
    fn directions_from_units() {
        assert_eq!(better_of("IOPS"), Better::Higher);
        assert_eq!(better_of("KB/s"), Better::Higher);
        assert_eq!(better_of("us"), Better::Lower);
        assert_eq!(better_of("MiB"), Better::Neither);
    }
}
