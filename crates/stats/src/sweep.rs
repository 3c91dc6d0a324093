//! The result model of a parameter sweep (`iolab sweep`): the axes of the
//! grid (an option and its values), and per point of the grid the headline
//! numbers of each repeated run (bytes moved, read and write bandwidth,
//! IOPS, mean and 99th percentile completion latency), with their summary
//! over the repeats. Plain data for renderers, the store and comparison
//! suites; nothing here runs anything.

use serde::{Deserialize, Serialize};

use crate::Summary;

/// One axis of the grid: the option it varies and the values it takes, as
/// the user wrote them ("bs": "4k", "8k", ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepAxis {
    pub name: String,
    pub values: Vec<String>,
}

/// The headline numbers of one run of one point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PointRun {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Aggregate bandwidth of the reporting groups, bytes/s.
    pub read_bw: f64,
    pub write_bw: f64,
    /// I/Os per second over all jobs and directions.
    pub iops: f64,
    /// Completion latency over all jobs and directions, ns.
    pub clat_mean_ns: f64,
    pub clat_p99_ns: Option<u64>,
    /// The longest job's runtime, ns.
    pub runtime_ns: u64,
}

impl PointRun {
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    /// Read plus write bandwidth, bytes/s.
    pub fn bw(&self) -> f64 {
        self.read_bw + self.write_bw
    }
}

/// A metric of [`PointRun`] that sweep tables show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointMetric {
    /// Read + write bandwidth in MB/s (10^6 bytes).
    Mbps,
    Iops,
    /// 99th percentile completion latency in microseconds.
    P99Us,
    /// Bytes moved.
    Bytes,
}

impl PointMetric {
    pub const ALL: [PointMetric; 4] = [
        PointMetric::Mbps,
        PointMetric::Iops,
        PointMetric::P99Us,
        PointMetric::Bytes,
    ];

    /// The column heading: the metric and its unit.
    pub fn label(self) -> &'static str {
        match self {
            PointMetric::Mbps => "MB/s",
            PointMetric::Iops => "IOPS",
            PointMetric::P99Us => "p99 us",
            PointMetric::Bytes => "bytes",
        }
    }

    /// The metric's name without its unit (`p99`), for stored metrics.
    pub fn name(self) -> &'static str {
        match self {
            PointMetric::P99Us => "p99",
            other => other.label(),
        }
    }

    /// The unit of the metric's values.
    pub fn unit(self) -> &'static str {
        match self {
            PointMetric::P99Us => "us",
            other => other.label(),
        }
    }

    /// The metric's value in one run (None when the run has none).
    pub fn of(self, r: &PointRun) -> Option<f64> {
        match self {
            PointMetric::Mbps => Some(r.bw() / 1e6),
            PointMetric::Iops => Some(r.iops),
            PointMetric::P99Us => r.clat_p99_ns.map(|v| v as f64 / 1e3),
            PointMetric::Bytes => Some(r.bytes() as f64),
        }
    }
}

/// One point of the grid: a value per axis and its runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepPoint {
    /// One value per axis, in the order of [`SweepResult::axes`].
    pub values: Vec<String>,
    pub runs: Vec<PointRun>,
    /// The warnings the point's runs raised, each code once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::JobWarning>,
}

impl SweepPoint {
    /// The metric over the runs (median, spread), None without values.
    pub fn summary(&self, m: PointMetric) -> Option<Summary> {
        let v: Vec<f64> = self.runs.iter().filter_map(|r| m.of(r)).collect();
        Summary::of(&v)
    }
}

/// The run that stopped a sweep: its point (`bs=4k numjobs=2`) and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepFailure {
    pub point: String,
    pub message: String,
}

/// A whole sweep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepResult {
    pub axes: Vec<SweepAxis>,
    /// Every point of the grid, the first axis varying slowest; after a
    /// failure or an interruption, only the points that ran.
    pub points: Vec<SweepPoint>,
    /// Runs per point.
    pub repeat: u32,
    /// With `--repeat`: how the runs ended (`auto` decides after each
    /// round of every point).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_outcome: Option<crate::RepeatOutcome>,
    /// The run that failed, when one did; the sweep stopped there.
    pub failure: Option<SweepFailure>,
    /// Stopped from outside (Ctrl-C) before every run was done.
    pub interrupted: bool,
}

impl SweepResult {
    /// Whether every point ran every time.
    pub fn complete(&self) -> bool {
        self.failure.is_none() && !self.interrupted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_and_summaries() {
        let run = |bw: f64| PointRun {
            read_bytes: 1 << 20,
            read_bw: bw,
            iops: bw / 4096.0,
            clat_p99_ns: Some(2500),
            ..PointRun::default()
        };
        let p = SweepPoint {
            values: vec!["4k".into()],
            runs: vec![run(100e6), run(300e6), run(200e6)],
            ..SweepPoint::default()
        };
        let s = p.summary(PointMetric::Mbps).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (200.0, 100.0, 300.0, 3));
        assert_eq!(p.summary(PointMetric::P99Us).unwrap().median, 2.5);
        assert_eq!(p.summary(PointMetric::Bytes).unwrap().median, 1048576.0);
        let none = SweepPoint {
            runs: vec![PointRun::default()],
            ..SweepPoint::default()
        };
        assert!(none.summary(PointMetric::P99Us).is_none());
        assert_eq!(
            (PointMetric::P99Us.name(), PointMetric::P99Us.unit()),
            ("p99", "us")
        );
        assert_eq!(PointMetric::Mbps.unit(), "MB/s");

        let r = SweepResult {
            axes: vec![SweepAxis {
                name: "bs".into(),
                values: vec!["4k".into()],
            }],
            points: vec![p],
            repeat: 3,
            failure: Some(SweepFailure {
                point: "bs=8k".into(),
                message: "No space left on device".into(),
            }),
            interrupted: false,
            ..SweepResult::default()
        };
        assert!(!r.complete());
        let back: SweepResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
