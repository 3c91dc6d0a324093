//! What `iolab diff A B` computes: the headline metrics of two records
//! matched by name, each with both values, the ratio, and whether the
//! difference is larger than the noise. Repeats (a metric's `samples`)
//! are tested with the chosen test; without repeats, a single run's
//! per-window samples (`windows`, kept as moments) are tested with
//! Welch's t-test, and the row says which it used.

use iolab_stats::{
    compare, fmt_p, welch_from_stats, Method, Significance, TestOutcome, DEFAULT_ALPHA,
};
use serde::{Deserialize, Serialize};

use crate::Metric;

/// What a row's verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The repeats of each side (`samples`), counts given.
    Repeats { a: usize, b: usize },
    /// The per-window samples of a single run each, counts given.
    Windows { a: u64, b: u64 },
    /// A single value each: nothing to test.
    SingleValues,
}

/// One metric of both records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricDiff {
    pub name: String,
    pub unit: String,
    /// The value in A and in B; None when that record lacks the metric.
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// b / a, when both are there and a is not 0.
    pub ratio: Option<f64>,
    pub basis: Basis,
    pub test: Option<TestOutcome>,
    pub verdict: Significance,
}

impl MetricDiff {
    /// The verdict and its basis in words: "significant (p=0.0012, Welch's
    /// t-test over 8 vs 8 repeats)", "within noise (p=0.41, Welch's t-test
    /// over bandwidth samples: 20 vs 19 windows)", "single values: no
    /// test".
    pub fn explain(&self) -> String {
        let how = match (self.basis, self.test) {
            (Basis::Repeats { a, b }, Some(t)) => {
                format!("{} over {a} vs {b} repeats", t.method)
            }
            (Basis::Windows { a, b }, Some(t)) => {
                format!(
                    "{} over per-window samples of one run each: {a} vs {b}",
                    t.method
                )
            }
            _ => return "single values: no test".to_string(),
        };
        match self.verdict {
            Significance::Significant { p } => format!("significant ({}, {how})", fmt_p(p)),
            Significance::WithinNoise { p } => format!("within noise ({}, {how})", fmt_p(p)),
            Significance::TooFewSamples => format!("too few samples ({how})"),
        }
    }
}

/// Options of a diff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffOpts {
    /// The test for repeats; windows always use Welch's t-test.
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

/// The metrics of `a` in their order, then those only `b` has, matched by
/// name.
pub fn diff_metrics(a: &[Metric], b: &[Metric], opts: DiffOpts) -> Vec<MetricDiff> {
    let mut out = Vec::new();
    for ma in a {
        let mb = b.iter().find(|m| m.name == ma.name);
        out.push(diff_one(Some(ma), mb, opts));
    }
    for mb in b {
        if !a.iter().any(|m| m.name == mb.name) {
            out.push(diff_one(None, Some(mb), opts));
        }
    }
    out
}

fn diff_one(a: Option<&Metric>, b: Option<&Metric>, opts: DiffOpts) -> MetricDiff {
    let any = a
        .or(b)
        .map_or_else(|| Metric::new("", f64::NAN, ""), Clone::clone);
    let va = a.map(|m| m.value).filter(|v| !v.is_nan());
    let vb = b.map(|m| m.value).filter(|v| !v.is_nan());
    let ratio = match (va, vb) {
        (Some(x), Some(y)) if x != 0.0 => Some(y / x),
        _ => None,
    };
    let mut row = MetricDiff {
        name: any.name,
        unit: any.unit,
        a: va,
        b: vb,
        ratio,
        basis: Basis::SingleValues,
        test: None,
        verdict: Significance::TooFewSamples,
    };
    let (Some(a), Some(b)) = (a, b) else {
        return row;
    };
    let repeats = |m: &Metric| m.samples.clone().filter(|s| s.len() >= 2);
    if let (Some(sa), Some(sb)) = (repeats(a), repeats(b)) {
        if let Some(d) = compare(&sa, &sb, opts.method, opts.alpha) {
            row.basis = Basis::Repeats {
                a: sa.len(),
                b: sb.len(),
            };
            row.test = d.test;
            row.verdict = d.verdict;
            return row;
        }
    }
    if let (Some(wa), Some(wb)) = (a.windows, b.windows) {
        let t = welch_from_stats(
            wa.count as f64,
            wa.mean,
            wa.stdev * wa.stdev,
            wb.count as f64,
            wb.mean,
            wb.stdev * wb.stdev,
        );
        if let Some(t) = t {
            row.basis = Basis::Windows {
                a: wa.count,
                b: wb.count,
            };
            row.test = Some(t);
            row.verdict = Significance::from_p(t.p, opts.alpha);
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_windows_and_single_values() {
        let a = vec![
            Metric::new("bw", 100.0, "MB/s").with_samples(vec![99.0, 100.0, 101.0, 100.0]),
            Metric::new("iops", 1000.0, "IOPS").with_windows(20, 1000.0, 30.0),
            Metric::new("p99", 80.0, "us"),
            Metric::new("only a", 1.0, "s"),
        ];
        let b = vec![
            Metric::new("only b", 2.0, "s"),
            Metric::new("p99", 88.0, "us"),
            Metric::new("iops", 1010.0, "IOPS").with_windows(20, 1010.0, 30.0),
            Metric::new("bw", 120.0, "MB/s").with_samples(vec![119.0, 120.0, 121.0, 120.0]),
        ];
        let d = diff_metrics(&a, &b, DiffOpts::default());
        let names: Vec<&str> = d.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bw", "iops", "p99", "only a", "only b"]);
        assert_eq!(d[0].ratio, Some(1.2));
        assert_eq!(d[0].basis, Basis::Repeats { a: 4, b: 4 });
        assert!(d[0].verdict.is_significant(), "{d:?}");
        assert!(
            d[0].explain().contains("over 4 vs 4 repeats"),
            "{}",
            d[0].explain()
        );
        assert_eq!(d[1].basis, Basis::Windows { a: 20, b: 20 });
        assert!(matches!(d[1].verdict, Significance::WithinNoise { .. }));
        assert!(d[1].explain().starts_with("within noise"));
        assert!(d[1].explain().contains("per-window samples"));
        assert_eq!(d[2].basis, Basis::SingleValues);
        assert_eq!(d[2].verdict, Significance::TooFewSamples);
        assert_eq!(d[2].explain(), "single values: no test");
        assert_eq!((d[3].a, d[3].b, d[3].ratio), (Some(1.0), None, None));
        assert_eq!((d[4].a, d[4].b), (None, Some(2.0)));
    }

    #[test]
    fn a_clear_window_difference_is_significant() {
        let a = [Metric::new("bw", 500.0, "MB/s").with_windows(30, 500.0, 10.0)];
        let b = [Metric::new("bw", 600.0, "MB/s").with_windows(30, 600.0, 12.0)];
        let d = diff_metrics(&a, &b, DiffOpts::default());
        assert!(d[0].verdict.is_significant(), "{d:?}");
        assert_eq!(d[0].test.unwrap().method, Method::Welch);
    }

    #[test]
    fn mann_whitney_on_request() {
        let a = [Metric::new("x", 1.0, "").with_samples((1..=8).map(f64::from).collect())];
        let b = [Metric::new("x", 2.0, "").with_samples((11..=18).map(f64::from).collect())];
        let opts = DiffOpts {
            method: Method::MannWhitney,
            ..DiffOpts::default()
        };
        let d = diff_metrics(&a, &b, opts);
        assert_eq!(d[0].test.unwrap().method, Method::MannWhitney);
        assert!(d[0].verdict.is_significant());
    }
}
