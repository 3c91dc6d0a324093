//! `Comparison`: the result of a filesystem-lab campaign as plain data.
//! Rows are metrics (mkfs time, mount times, capacity, read speeds, and
//! each workload's MB/s, IOPS and latency percentiles), columns are
//! targets; each cell keeps the value of every repeated run, so the median
//! and the spread come from the same numbers. The lab fills it; the
//! table renderers and the store read it. The full result of every
//! workload run travels with it.

use serde::{Deserialize, Serialize};

use crate::RunResult;

/// A cell whose spread (max - min) exceeds this share of its median is
/// flagged as noisy.
pub const NOISY_SPREAD: f64 = 0.10;

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Better {
    Higher,
    Lower,
    /// A fact, not a score (inode count, say): no best is marked.
    Neither,
}

/// One row: what is measured and in what unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Stable identifier (`mkfs_s`, `seqwrite-1m.write.mb_s`).
    pub key: String,
    /// What the table shows (`mkfs time`, `seqwrite-1m write`).
    pub label: String,
    /// `s`, `ms`, `MB/s`, `IOPS`, `us`, `GiB`, `count`.
    pub unit: String,
    pub better: Better,
}

/// The values of one metric on one target, one per run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub runs: Vec<f64>,
}

impl Cell {
    pub fn one(v: f64) -> Self {
        Cell { runs: vec![v] }
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .runs
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The median of the runs (the mean of the two middle ones for an
    /// even count).
    pub fn median(&self) -> Option<f64> {
        let v = self.sorted();
        let n = v.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(v[n / 2]),
            _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        }
    }

    pub fn min(&self) -> Option<f64> {
        self.sorted().first().copied()
    }

    pub fn max(&self) -> Option<f64> {
        self.sorted().last().copied()
    }

    /// (max - min) / median; `None` with fewer than two runs.
    pub fn spread(&self) -> Option<f64> {
        if self.runs.len() < 2 {
            return None;
        }
        let (lo, hi, med) = (self.min()?, self.max()?, self.median()?);
        if med == 0.0 {
            return Some(if hi == lo { 0.0 } else { f64::INFINITY });
        }
        Some((hi - lo) / med.abs())
    }

    /// The spread exceeds [`NOISY_SPREAD`].
    pub fn noisy(&self) -> bool {
        self.spread().is_some_and(|s| s > NOISY_SPREAD)
    }
}

/// One column: a target and its numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetColumn {
    /// The column heading, unique in the comparison.
    pub label: String,
    /// What the target is (`btrfs -o compress=zstd on /dev/loop3`).
    pub description: String,
    /// Why the target was not measured at all.
    pub skipped: Option<String>,
    /// The error that stopped it partway; the values gathered stay.
    pub failed: Option<String>,
    /// Metric key and cell, in the order measured.
    pub values: Vec<(String, Cell)>,
}

impl TargetColumn {
    pub fn value(&self, key: &str) -> Option<&Cell> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, c)| c)
    }

    /// Adds one run's value of `key`.
    pub fn push(&mut self, key: &str, v: f64) {
        match self.values.iter_mut().find(|(k, _)| k == key) {
            Some((_, c)) => c.runs.push(v),
            None => self.values.push((key.to_string(), Cell::one(v))),
        }
    }
}

/// The full result of one workload run on one target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRun {
    pub target: String,
    pub workload: String,
    /// 1-based repeat number.
    pub run: u32,
    pub result: RunResult,
}

/// A whole campaign.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The rows, in display order.
    pub metrics: Vec<Metric>,
    pub targets: Vec<TargetColumn>,
    /// The target ratios are taken against.
    pub baseline: Option<String>,
    /// How many times each measurement was repeated.
    pub repeat: u32,
    /// Ctrl-C cut the campaign short.
    pub interrupted: bool,
    /// Caveats about what some numbers measure, one sentence each.
    #[serde(default)]
    pub notes: Vec<String>,
    pub runs: Vec<WorkloadRun>,
}

impl Comparison {
    /// Adds a caveat unless it is there already.
    pub fn note(&mut self, text: &str) {
        if !self.notes.iter().any(|n| n == text) {
            self.notes.push(text.to_string());
        }
    }

    /// Adds a row unless one with the key exists.
    pub fn add_metric(&mut self, m: Metric) {
        if !self.metrics.iter().any(|x| x.key == m.key) {
            self.metrics.push(m);
        }
    }

    pub fn metric(&self, key: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.key == key)
    }

    /// The column of the target with the best median for `key`, when at
    /// least two targets have a value and the metric has a direction.
    pub fn best(&self, key: &str) -> Option<usize> {
        let better = self.metric(key)?.better;
        let vals: Vec<(usize, f64)> = self
            .targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, t.value(key)?.median()?)))
            .collect();
        if vals.len() < 2 {
            return None;
        }
        let pick = |a: &(usize, f64), b: &(usize, f64)| a.1.total_cmp(&b.1);
        match better {
            Better::Higher => vals.iter().max_by(|a, b| pick(a, b)).map(|x| x.0),
            Better::Lower => vals.iter().min_by(|a, b| pick(a, b)).map(|x| x.0),
            Better::Neither => None,
        }
    }

    /// The baseline's column.
    pub fn baseline_index(&self) -> Option<usize> {
        let b = self.baseline.as_deref()?;
        self.targets.iter().position(|t| t.label == b)
    }

    /// Target `i`'s median of `key` divided by the baseline's.
    pub fn ratio(&self, key: &str, i: usize) -> Option<f64> {
        let b = self
            .targets
            .get(self.baseline_index()?)?
            .value(key)?
            .median()?;
        let v = self.targets.get(i)?.value(key)?.median()?;
        (b != 0.0).then(|| v / b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison() -> Comparison {
        let mut c = Comparison {
            baseline: Some("ext4".into()),
            ..Default::default()
        };
        c.add_metric(Metric {
            key: "mkfs_s".into(),
            label: "mkfs time".into(),
            unit: "s".into(),
            better: Better::Lower,
        });
        c.add_metric(Metric {
            key: "w".into(),
            label: "write".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
        });
        for (name, mkfs, w) in [
            ("ext4", 0.5, [100.0, 110.0, 90.0]),
            ("xfs", 0.2, [200.0, 201.0, 199.0]),
        ] {
            let mut t = TargetColumn {
                label: name.into(),
                ..Default::default()
            };
            t.push("mkfs_s", mkfs);
            for v in w {
                t.push("w", v);
            }
            c.targets.push(t);
        }
        c.targets.push(TargetColumn {
            label: "f2fs".into(),
            skipped: Some("the kernel lacks f2fs".into()),
            ..Default::default()
        });
        c
    }

    #[test]
    fn cells() {
        let c = Cell {
            runs: vec![3.0, 1.0, 2.0, 10.0],
        };
        assert_eq!(c.median(), Some(2.5));
        assert_eq!(c.min(), Some(1.0));
        assert_eq!(c.max(), Some(10.0));
        assert!(c.noisy());
        assert!(!Cell::one(5.0).noisy());
        assert_eq!(Cell::default().median(), None);
    }

    #[test]
    fn best_and_ratio() {
        let c = comparison();
        assert_eq!(c.best("mkfs_s"), Some(1));
        assert_eq!(c.best("w"), Some(1));
        assert_eq!(c.ratio("w", 1), Some(2.0));
        assert_eq!(c.ratio("w", 2), None);
        assert!(c.targets[0].value("w").unwrap().noisy());
        assert!(!c.targets[1].value("w").unwrap().noisy());
    }

    #[test]
    fn serde_round_trip() {
        let c = comparison();
        let text = serde_json::to_string(&c).unwrap();
        let back: Comparison = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
