//! `Comparison`: the result of a filesystem-lab campaign as plain data.
//! Rows are metrics (mkfs time, mount times, capacity, read speeds, and
//! each workload's MB/s, IOPS and latency percentiles), columns are
//! targets; each cell keeps the value of every repeated run, so the
//! statistic shown, the noisy flag and the verdicts (see
//! `comparison_verdicts`) come from the same numbers. The lab fills it; the
//! table renderers and the store read it. The full result of every
//! workload run travels with it.

use serde::{Deserialize, Serialize};

use crate::RunResult;

/// A cell whose range (max - min) exceeds this share of its median is
/// flagged as noisy. (The spread shown beside figures is another
/// statistic: the half-width of the 95% interval of the runs' geometric
/// mean, see iolab-report's `doc::num::spread`.)
pub const NOISY_RANGE: f64 = 0.10;

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

/// The values of one metric on one target, one per run, and the codes
/// of the warnings the runs raised about them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub runs: Vec<f64>,
    /// Warning codes ("page-cache", "short-run", ...), each once, in the
    /// order first raised; the texts are in [`Comparison::warnings`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Cell {
    pub fn one(v: f64) -> Self {
        Cell {
            runs: vec![v],
            warnings: Vec::new(),
        }
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
        crate::median(&self.sorted())
    }

    pub fn min(&self) -> Option<f64> {
        self.sorted().first().copied()
    }

    pub fn max(&self) -> Option<f64> {
        self.sorted().last().copied()
    }

    /// (max - min) / median; `None` with fewer than two runs.
    pub fn range_ratio(&self) -> Option<f64> {
        if self.runs.len() < 2 {
            return None;
        }
        let (lo, hi, med) = (self.min()?, self.max()?, self.median()?);
        if med == 0.0 {
            return Some(if hi == lo { 0.0 } else { f64::INFINITY });
        }
        Some((hi - lo) / med.abs())
    }

    /// The range exceeds [`NOISY_RANGE`] of the median.
    pub fn noisy(&self) -> bool {
        self.range_ratio().is_some_and(|s| s > NOISY_RANGE)
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
    /// How its filesystem was made and mounted (absent for a target
    /// that was skipped, and in results stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<TargetSetup>,
}

/// How the lab made and mounted a target's filesystem, as the tools and
/// the kernel report it: which mkfs (and its version) with which options,
/// which mount program and kernel, and the mount options in effect. A
/// directory target has only the mount facts (the lab made nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetSetup {
    /// The filesystem type as mounted ("ext4").
    pub fs_type: String,
    /// The mkfs program run ("/usr/sbin/mkfs.ext4"); empty when the lab
    /// formatted nothing.
    pub mkfs_tool: String,
    /// What it says its version is ("mke2fs 1.47.0 (5-Feb-2023)").
    pub mkfs_version: String,
    /// The options mkfs was given, the lab's own (`-F -q`) first, the
    /// device left out.
    pub mkfs_options: Vec<String>,
    /// What the mount program says its version is ("mount from
    /// util-linux 2.38.1 ...").
    pub mount_version: String,
    /// The release of the kernel that mounted it.
    pub kernel: String,
    /// The options asked for (`--mount-opts`), empty when none.
    pub mount_options_asked: String,
    /// The options in effect, read back from /proc/self/mountinfo after
    /// mounting: the mount's own and the filesystem's, as `findmnt`
    /// lists them.
    pub mount_options: String,
    /// The mounted device ("/dev/loop3", "/dev/bcache0").
    pub mount_source: String,
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

    /// Flags the cell of `key` (once it has a value) with a warning code.
    pub fn flag(&mut self, key: &str, code: &str) {
        if let Some((_, c)) = self.values.iter_mut().find(|(k, _)| k == key) {
            if !c.warnings.iter().any(|w| w == code) {
                c.warnings.push(code.to_string());
            }
        }
    }

    /// Whether the target has numbers that may compete: not skipped, not
    /// failed.
    pub fn measured(&self) -> bool {
        self.skipped.is_none() && self.failed.is_none()
    }
}

/// A warning one workload run raised about its numbers: the target, the
/// rows it concerns (a workload, or `workload/job` when a workload reports
/// several jobs), the run, and the warning's code and text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunWarning {
    pub target: String,
    pub rows: String,
    /// 1-based repeat number.
    pub run: u32,
    pub code: crate::WarningCode,
    pub text: String,
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
    /// Every warning the workload runs raised, in the order raised; the
    /// cells they concern carry their codes.
    #[serde(default)]
    pub warnings: Vec<RunWarning>,
    /// The host it ran on: name, kernel, CPU, memory, iolab's version and
    /// the virtual machine if any (absent in results stored before it
    /// was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::Environment>,
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

    /// The column marked best for `key`: the row's leader, when it is
    /// better than every other measured target beyond the noise (see
    /// [`Comparison::verdicts`]); none otherwise.
    pub fn best(&self, key: &str) -> Vec<usize> {
        self.verdicts().best(key).to_vec()
    }

    /// Whether column `i` holds a best value of `key`.
    pub fn is_best(&self, key: &str, i: usize) -> bool {
        self.best(key).contains(&i)
    }

    /// The baseline's column.
    pub fn baseline_index(&self) -> Option<usize> {
        let b = self.baseline.as_deref()?;
        self.targets.iter().position(|t| t.label == b)
    }

    /// Target `i`'s geometric mean of `key` divided by the baseline's
    /// (the ratio the verdicts test).
    pub fn ratio(&self, key: &str, i: usize) -> Option<f64> {
        let b = self.center(key, self.baseline_index()?)?;
        let v = self.center(key, i)?;
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
            ..Default::default()
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
        // One mkfs each: no verdict, no best.
        assert!(c.best("mkfs_s").is_empty());
        assert_eq!(c.best("w"), [1]);
        assert!(c.is_best("w", 1) && !c.is_best("w", 0));
        // Geometric means: about 200 / (100 * 110 * 90)^(1/3).
        let r = c.ratio("w", 1).unwrap();
        assert!((r - 200.0 / 990_000f64.cbrt()).abs() < 1e-3, "{r}");
        assert_eq!(c.ratio("w", 2), None);
        assert!(c.targets[0].value("w").unwrap().noisy());
        assert!(!c.targets[1].value("w").unwrap().noisy());
    }

    #[test]
    fn ties_have_no_best() {
        for better in [Better::Higher, Better::Lower] {
            let mut c = Comparison::default();
            c.add_metric(Metric {
                key: "k".into(),
                label: "k".into(),
                unit: "s".into(),
                better,
            });
            for (i, v) in [5.0, 1.0, 5.0, 1.0].into_iter().enumerate() {
                let mut t = TargetColumn {
                    label: format!("t{i}"),
                    ..Default::default()
                };
                t.push("k", v);
                t.push("k", v);
                c.targets.push(t);
            }
            assert!(c.best("k").is_empty(), "{better:?}");
        }
    }

    #[test]
    fn failed_targets_do_not_compete() {
        let mut c = comparison();
        // xfs is best until it fails; its values stay but do not compete,
        // and ext4 is left alone with a value: no best.
        c.targets[1].failed = Some("mount: wrong fs type".into());
        assert!(c.best("w").is_empty());
        assert!(c.best("mkfs_s").is_empty());
        c.targets[1].failed = None;
        c.targets[0].failed = Some("I/O error".into());
        assert!(c.best("w").is_empty());
        let mut third = TargetColumn {
            label: "btrfs".into(),
            ..Default::default()
        };
        for v in [150.0, 151.0, 149.0] {
            third.push("w", v);
        }
        c.targets.push(third);
        c.targets[0].failed = None;
        c.targets[1].failed = Some("I/O error".into());
        // ext4 (about 100) against btrfs (150): btrfs, not the failed xfs.
        assert_eq!(c.best("w"), [3]);
    }

    #[test]
    fn flags_stay_with_their_cells() {
        let mut t = TargetColumn::default();
        t.flag("k", "page-cache");
        assert!(t.value("k").is_none(), "no cell, no flag");
        t.push("k", 1.0);
        t.flag("k", "page-cache");
        t.flag("k", "short-run");
        t.flag("k", "page-cache");
        t.push("k", 2.0);
        assert_eq!(t.value("k").unwrap().warnings, ["page-cache", "short-run"]);
        // Old stored comparisons without warnings still read.
        let old: Cell = serde_json::from_str(r#"{"runs":[1.0]}"#).unwrap();
        assert!(old.warnings.is_empty());
    }

    #[test]
    fn serde_round_trip() {
        let c = comparison();
        let text = serde_json::to_string(&c).unwrap();
        let back: Comparison = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
