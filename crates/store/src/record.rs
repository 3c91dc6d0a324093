//! What the store files: a [`Record`] (one run, quick suite, comparison,
//! metadata pass or sweep) with its [`Provenance`], tags, the job text and
//! command line, the full result as JSON, and a few headline [`Metric`]s
//! that history and diff read without knowing each kind's result layout.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which command produced a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Run,
    Quick,
    Compare,
    Meta,
    Sweep,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Run,
        Kind::Quick,
        Kind::Compare,
        Kind::Meta,
        Kind::Sweep,
    ];

    /// The name stored and typed on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Quick => "quick",
            Kind::Compare => "compare",
            Kind::Meta => "meta",
            Kind::Sweep => "sweep",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind name that is not one of run, quick, compare, meta, sweep.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown result kind '{0}' (expected run, quick, compare, meta or sweep)")]
pub struct UnknownKind(pub String);

impl FromStr for Kind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// One headline number of a record: "read MB/s", "randwrite p99 latency".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Metric {
    pub name: String,
    /// NaN when there is none (JSON `null`).
    #[serde(deserialize_with = "nan_if_null")]
    pub value: f64,
    /// "MB/s", "IOPS", "us", "s", ...
    pub unit: String,
    /// The measurements behind `value` when there are several (repeats),
    /// for `diff`'s tests.
    pub samples: Option<Vec<f64>>,
    /// The per-window samples of a single run (bandwidth or IOPS every
    /// averaging window), kept as moments: what `diff` tests when there
    /// are no repeats.
    pub windows: Option<SampleMoments>,
}

/// A number, or NaN for JSON's `null` (what serde_json writes for NaN).
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Count, mean and sample standard deviation of a series, in any unit as
/// long as both sides of a diff use the same one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SampleMoments {
    pub count: u64,
    pub mean: f64,
    pub stdev: f64,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: impl Into<String>) -> Self {
        Metric {
            name: name.into(),
            value,
            unit: unit.into(),
            samples: None,
            windows: None,
        }
    }

    pub fn with_samples(mut self, samples: Vec<f64>) -> Self {
        self.samples = Some(samples);
        self
    }

    /// The metric with per-window sample moments; none are kept for fewer
    /// than two windows, which cannot be tested.
    pub fn with_windows(mut self, count: u64, mean: f64, stdev: f64) -> Self {
        self.windows = (count >= 2 && mean.is_finite() && stdev.is_finite())
            .then_some(SampleMoments { count, mean, stdev });
        self
    }
}

/// Where and how a result was measured: the environment probe's facts
/// (one type from probe to store), stamped with the time. Records stored
/// before a field existed load with it empty.
pub use iolab_stats::Environment as Provenance;

/// A result to store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub kind: Kind,
    /// When it was stored or measured, UTC, RFC 3339.
    pub time: String,
    pub tags: Vec<String>,
    pub provenance: Provenance,
    /// The job text (fio job file or generated suite), empty when none.
    pub job_text: String,
    /// The command line as typed.
    pub command_line: String,
    pub target: String,
    /// The full result as JSON text: for `run` the JSON of a `RunResult`,
    /// for the other kinds whatever their producer writes.
    pub result_json: String,
    pub metrics: Vec<Metric>,
    /// Every warning the result carried, where it was raised.
    #[serde(default)]
    pub warnings: Vec<Flag>,
    /// How a repeated result's runs ended (`--repeat`).
    #[serde(default)]
    pub repeat: Option<iolab_stats::RepeatOutcome>,
}

/// A warning a stored result carried: its code ("page-cache"), where it
/// was raised (a job, a quick test, a sweep point, a comparison's target
/// and workload) and its text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Flag {
    /// Typed until printed; stored as its text.
    pub code: iolab_stats::WarningCode,
    pub at: String,
    pub text: String,
}

impl Flag {
    pub fn new(
        code: impl Into<iolab_stats::WarningCode>,
        at: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Flag {
            code: code.into(),
            at: at.into(),
            text: text.into(),
        }
    }
}

/// The codes of `flags`, each once, in the order first raised.
pub fn flag_codes(flags: &[Flag]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in flags {
        if !out.iter().any(|c| f.code == *c) {
            out.push(f.code.to_string());
        }
    }
    out
}

impl Record {
    /// An empty record of `kind` stamped with the current time.
    pub fn new(kind: Kind) -> Self {
        Record {
            kind,
            time: crate::time::now_rfc3339(),
            tags: Vec::new(),
            provenance: Provenance::default(),
            job_text: String::new(),
            command_line: String::new(),
            target: String::new(),
            result_json: "null".to_string(),
            metrics: Vec::new(),
            warnings: Vec::new(),
            repeat: None,
        }
    }

    /// A `run` record whose result is the JSON of `result`.
    pub fn for_run(result: &iolab_stats::RunResult) -> Result<Self, serde_json::Error> {
        Ok(Record {
            result_json: serde_json::to_string(result)?,
            ..Record::new(Kind::Run)
        })
    }

    /// The stored `RunResult` of a `run` record.
    pub fn run_result(&self) -> Result<iolab_stats::RunResult, serde_json::Error> {
        serde_json::from_str(&self.result_json)
    }
}

/// A record as read back, with the id the store gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub id: i64,
    #[serde(flatten)]
    pub record: Record,
}

/// A record's headline as `history` lists it: everything but the job
/// text, provenance and result JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: i64,
    pub kind: Kind,
    pub time: String,
    pub tags: Vec<String>,
    pub target: String,
    pub fs_type: String,
    pub host: String,
    pub command_line: String,
    pub metrics: Vec<Metric>,
    /// The codes of the warnings the result carried, each once.
    #[serde(default)]
    pub flags: Vec<String>,
}

/// Which records `history` lists; every field that is set must match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    pub kind: Option<Kind>,
    /// A tag the record carries (exactly).
    pub tag: Option<String>,
    /// The filesystem type (exactly, as in provenance), or one of the
    /// comma-separated types of a comparison ("ext4,xfs").
    pub fs_type: Option<String>,
    /// A substring of the target path.
    pub target: Option<String>,
    /// Records at or after this time, seconds since the epoch.
    pub since: Option<i64>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        for k in Kind::ALL {
            assert_eq!(k.as_str().parse::<Kind>(), Ok(k));
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
        let err = "bench".parse::<Kind>().unwrap_err();
        assert!(err.to_string().contains("'bench'"));
    }
}
