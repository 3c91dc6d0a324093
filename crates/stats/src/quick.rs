//! The result of `iolab quick`: one row per test of the short suite (the
//! sequential and random reads and writes people know from preset disk
//! suites, 4k write+fsync, and a metadata pass), and where and how it ran.

use serde::{Deserialize, Serialize};

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
    pub tests: Vec<QuickTest>,
    /// Cut short by Ctrl-C.
    pub interrupted: bool,
}

impl QuickResult {
    /// Whether no test produced a figure (every one failed, or none ran).
    pub fn nothing_measured(&self) -> bool {
        self.tests.iter().all(QuickTest::failed)
    }
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
}
