//! The result of `iolab quick`: one row per test of the short suite (the
//! sequential and random reads and writes people know from preset disk
//! suites, 4k write+fsync, and a metadata pass), and where and how it ran.
//! A repeated suite keeps every run's rows; its summary rows hold the
//! geometric mean of the runs' MB/s and IOPS (the statistic the verdicts
//! test) with the 95% interval of the IOPS' geometric mean, and the median
//! of their latencies.

use serde::{Deserialize, Serialize};

use crate::repeat_rule::gm_interval;
use crate::{geometric_mean, JobWarning, RepeatOutcome};

/// One test of the suite.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuickTest {
    /// As the table shows it: `SEQ1M Q8T1`, `RND4K Q32T1`, `META create`.
    pub name: String,
    /// `read`, `write`, `write+fsync`, or the metadata operation.
    pub op: String,
    /// Bytes per second (0 for metadata operations).
    pub bw_bytes: f64,
    /// I/Os (or operations) per second.
    pub iops: f64,
    /// Completion latency percentiles, nanoseconds.
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// The IOPS (or operations per second) samples of the run, one per
    /// averaging window: their count, mean and standard deviation, so that
    /// two results can be compared for significance.
    #[serde(default)]
    pub sample_count: u64,
    #[serde(default)]
    pub sample_mean: f64,
    #[serde(default)]
    pub sample_stdev: f64,
    /// Why the test produced no figure, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What makes the test's figures misleading (page cache, short run,
    /// ...), each code once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<JobWarning>,
    /// A repeated suite's summary row: the 95% interval of the geometric
    /// mean of the runs' IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_interval: Option<(f64, f64)>,
}

impl QuickTest {
    /// Whether the test failed before producing any figure.
    pub fn failed(&self) -> bool {
        self.error.is_some() && self.iops == 0.0
    }
}

/// Where the suite ran and what it chose.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QuickResult {
    /// The directory tested.
    pub dir: String,
    /// Its filesystem type and block device (empty when unknown).
    pub fs_type: String,
    pub device: String,
    pub engine: String,
    /// O_DIRECT used (false: buffered, because the filesystem refuses it
    /// or the user asked).
    pub direct: bool,
    /// Size of the test file.
    pub file_bytes: u64,
    /// Run time of each I/O test, milliseconds.
    pub test_ms: u64,
    /// Things the reader must know to read the table right.
    pub notes: Vec<String>,
    /// The profile that ran: `iolab`, `cdm` or `cdm-nvme` (empty in
    /// results stored before profiles existed: iolab's).
    #[serde(default)]
    pub profile: String,
    /// Where and on what the suite ran: host, kernel, CPU, memory, the
    /// virtual machine if any, the filesystem with its mount options and
    /// the device (absent in results stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::Environment>,
    pub tests: Vec<QuickTest>,
    /// Cut short by Ctrl-C.
    pub interrupted: bool,
    /// With `--repeat`: every run's rows, in run order (`tests` are then
    /// their summary); empty for one run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Vec<QuickTest>>,
    /// With `--repeat`: how the runs ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatOutcome>,
}

impl QuickResult {
    /// Whether no test produced a figure (every one failed, or none ran).
    pub fn nothing_measured(&self) -> bool {
        self.tests.iter().all(QuickTest::failed)
    }

    /// A figure of test `i` in every run that has the test and a figure
    /// for it (the one row's when the suite ran once).
    pub fn runs_of(&self, i: usize, f: impl Fn(&QuickTest) -> f64) -> Vec<f64> {
        let Some(t) = self.tests.get(i) else {
            return Vec::new();
        };
        if self.runs.is_empty() {
            return if t.failed() { Vec::new() } else { vec![f(t)] };
        }
        self.runs
            .iter()
            .filter_map(|r| r.iter().find(|u| u.name == t.name && u.op == t.op))
            .filter(|u| !u.failed())
            .map(f)
            .collect()
    }

    /// Every test's throughput in every run ("SEQ1M Q8T1 read IOPS"), the
    /// figures `--repeat auto` judges.
    pub fn figures(&self) -> Vec<(String, Vec<f64>)> {
        (0..self.tests.len())
            .map(|i| {
                let t = &self.tests[i];
                (
                    format!("{} {} IOPS", t.name, t.op),
                    self.runs_of(i, |u| u.iops),
                )
            })
            .collect()
    }
}

/// The runs of a repeated suite as one result: the setup of the first,
/// every run's rows kept, and one summary row per test of the first run
/// (geometric means of MB/s and IOPS, the IOPS' 95% interval, median
/// latencies, the first error, every warning).
pub fn combine(runs: Vec<QuickResult>, outcome: RepeatOutcome) -> QuickResult {
    let Some(first) = runs.first() else {
        return QuickResult {
            repeat: Some(outcome),
            ..QuickResult::default()
        };
    };
    let mut out = QuickResult {
        tests: Vec::new(),
        runs: Vec::new(),
        ..first.clone()
    };
    for r in &runs[1..] {
        for n in &r.notes {
            if !out.notes.contains(n) {
                out.notes.push(n.clone());
            }
        }
        out.interrupted |= r.interrupted;
    }
    for t0 in &first.tests {
        let same: Vec<&QuickTest> = runs
            .iter()
            .filter_map(|r| r.tests.iter().find(|u| u.name == t0.name && u.op == t0.op))
            .collect();
        let ok: Vec<&QuickTest> = same.iter().copied().filter(|u| !u.failed()).collect();
        let gm = |f: fn(&QuickTest) -> f64| {
            geometric_mean(&ok.iter().map(|u| f(u)).collect::<Vec<_>>()).unwrap_or(0.0)
        };
        let median = |f: fn(&QuickTest) -> u64| {
            let mut v: Vec<u64> = ok.iter().map(|u| f(u)).collect();
            v.sort_unstable();
            v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
        };
        let iops: Vec<f64> = ok.iter().map(|u| u.iops).collect();
        let mut row = QuickTest {
            name: t0.name.clone(),
            op: t0.op.clone(),
            bw_bytes: gm(|u| u.bw_bytes),
            iops: gm(|u| u.iops),
            p50_ns: median(|u| u.p50_ns),
            p99_ns: median(|u| u.p99_ns),
            error: same.iter().find_map(|u| u.error.clone()),
            iops_interval: gm_interval(&iops).map(|(_, lo, hi)| (lo, hi)),
            ..QuickTest::default()
        };
        for w in same.iter().flat_map(|u| &u.warnings) {
            if !row.warnings.iter().any(|x| x.code == w.code) {
                row.warnings.push(w.clone());
            }
        }
        out.tests.push(row);
    }
    out.runs = runs.into_iter().map(|r| r.tests).collect();
    out.repeat = Some(outcome);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_tests_and_results_without_figures() {
        let ok = QuickTest {
            iops: 10.0,
            ..QuickTest::default()
        };
        let failed = QuickTest {
            error: Some("No space left on device".into()),
            ..QuickTest::default()
        };
        let cut = QuickTest {
            iops: 3.0,
            error: Some("verify".into()),
            ..QuickTest::default()
        };
        assert!(failed.failed() && !ok.failed() && !cut.failed());
        let mut r = QuickResult {
            tests: vec![failed.clone(), failed.clone()],
            ..QuickResult::default()
        };
        assert!(r.nothing_measured());
        r.tests.push(cut);
        assert!(!r.nothing_measured());
        assert!(QuickResult::default().nothing_measured());
    }

    fn row(op: &str, iops: f64, warn: Option<&str>) -> QuickTest {
        QuickTest {
            name: "RND4K Q32T1".into(),
            op: op.into(),
            bw_bytes: iops * 4096.0,
            iops,
            p50_ns: iops as u64,
            p99_ns: 2 * iops as u64,
            warnings: warn
                .map(|c| JobWarning {
                    code: c.into(),
                    text: format!("{c} text"),
                })
                .into_iter()
                .collect(),
            ..QuickTest::default()
        }
    }

    #[test]
    fn repeated_runs_are_kept_and_summarized_by_their_geometric_mean() {
        let run = |a: f64, b: f64, w: Option<&str>| QuickResult {
            dir: "/d".into(),
            tests: vec![row("read", a, None), row("write", b, w)],
            ..QuickResult::default()
        };
        let outcome = crate::repeat_rule::outcome(
            &crate::RepeatRule::Times { runs: 3 },
            3,
            crate::StopReason::Count,
            std::time::Duration::from_secs(3),
            &[],
        );
        let q = combine(
            vec![
                run(100.0, 10.0, None),
                run(400.0, 10.0, Some("page-cache")),
                run(200.0, 10.0, Some("page-cache")),
            ],
            outcome,
        );
        assert_eq!(q.runs.len(), 3);
        assert_eq!(q.dir, "/d");
        let r = &q.tests[0];
        assert!((r.iops - 200.0).abs() < 1e-9, "gm of 100, 400, 200");
        assert_eq!(r.p50_ns, 200, "median latency");
        let (lo, hi) = r.iops_interval.unwrap();
        assert!(lo < 200.0 && hi > 200.0);
        assert!(r.warnings.is_empty());
        let w = &q.tests[1];
        assert_eq!(w.iops, 10.0);
        assert_eq!(w.iops_interval, Some((10.0, 10.0)));
        assert_eq!(w.warnings.len(), 1, "one warning per code");
        assert_eq!(q.runs_of(0, |t| t.iops), [100.0, 400.0, 200.0]);
        assert_eq!(q.figures()[1].0, "RND4K Q32T1 write IOPS");
        assert_eq!(q.repeat.as_ref().unwrap().runs, 3);
        let back: QuickResult = serde_json::from_str(&serde_json::to_string(&q).unwrap()).unwrap();
        assert_eq!(back, q);
    }
}
