//! The result model of the metadata benchmark (`iolab meta`): the setup it
//! ran with, and per phase (create, open, utime, stat, readdir, rename,
//! unlink, and mkdir/rmdir for trees) the operation count, the phase's wall
//! time and the per-operation latencies in fio's histogram. Plain data that
//! renderers, the store and comparison suites read; nothing here measures.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::LatStat;

/// One phase of the metadata benchmark: a single kind of operation applied
/// to every file (or directory) of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetaPhaseKind {
    /// `mkdirat` of every directory of a tree.
    Mkdir,
    /// `openat(O_CREAT|O_EXCL)`, the optional write and fsync, `close`.
    Create,
    /// `openat(O_RDONLY)` and `close`.
    Open,
    /// `utimensat` to the current time.
    Utime,
    /// `fstatat`.
    Stat,
    /// `getdents64` over every directory; one operation per entry read.
    Readdir,
    /// `renameat` to a new name in the same directory.
    Rename,
    /// `unlinkat`.
    Unlink,
    /// `unlinkat(AT_REMOVEDIR)` of every directory of a tree.
    Rmdir,
}

impl MetaPhaseKind {
    /// Every phase in the order a run performs them.
    pub const ALL: [MetaPhaseKind; 9] = [
        MetaPhaseKind::Mkdir,
        MetaPhaseKind::Create,
        MetaPhaseKind::Open,
        MetaPhaseKind::Utime,
        MetaPhaseKind::Stat,
        MetaPhaseKind::Readdir,
        MetaPhaseKind::Rename,
        MetaPhaseKind::Unlink,
        MetaPhaseKind::Rmdir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MetaPhaseKind::Mkdir => "mkdir",
            MetaPhaseKind::Create => "create",
            MetaPhaseKind::Open => "open",
            MetaPhaseKind::Utime => "utime",
            MetaPhaseKind::Stat => "stat",
            MetaPhaseKind::Readdir => "readdir",
            MetaPhaseKind::Rename => "rename",
            MetaPhaseKind::Unlink => "unlink",
            MetaPhaseKind::Rmdir => "rmdir",
        }
    }

    /// Whether the phase works on directories rather than files.
    pub fn on_dirs(self) -> bool {
        matches!(self, MetaPhaseKind::Mkdir | MetaPhaseKind::Rmdir)
    }
}

impl fmt::Display for MetaPhaseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A phase name that is not one of the nine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPhase(pub String);

impl fmt::Display for UnknownPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = MetaPhaseKind::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "unknown phase `{}` (expected one of {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownPhase {}

impl FromStr for MetaPhaseKind {
    type Err = UnknownPhase;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MetaPhaseKind::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPhase(s.to_string()))
    }
}

/// What a metadata run does: the options the command line, a quick test
/// or a comparison suite give it, and (as [`MetaSetup::options`]) what
/// its result records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaOptions {
    /// An existing, writable directory; the run works in a new
    /// subdirectory of it.
    #[serde(serialize_with = "lossy_path")]
    pub dir: PathBuf,
    /// Files created (and then opened, stat'ed, ... and unlinked).
    pub files: u64,
    /// Subdirectories per directory of the tree (0: every file in one
    /// directory).
    pub dirs: u64,
    /// Levels of the tree (0 counts as 1 when `dirs` > 0; a result
    /// records 1 then).
    pub depth: u32,
    /// Bytes written to each file at create.
    pub file_size: u64,
    /// Threads sharing each phase's operations.
    pub threads: u32,
    /// fsync each file after writing it at create.
    pub fsync: bool,
    /// Write back and drop the page, dentry and inode caches before each
    /// phase (needs root).
    pub cold: bool,
    /// The phases to time among the file phases; create and unlink
    /// always run (they make and remove the files), as do mkdir and rmdir
    /// for a tree. Empty: all of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<MetaPhaseKind>,
}

impl Default for MetaOptions {
    fn default() -> Self {
        MetaOptions {
            dir: PathBuf::from("."),
            files: 10_000,
            dirs: 0,
            depth: 0,
            file_size: 0,
            threads: 1,
            fsync: false,
            cold: false,
            phases: Vec::new(),
        }
    }
}

/// A path as text, whatever bytes it holds (the lossy form of what is not
/// UTF-8).
fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// What a metadata run was asked to do, and where it ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaSetup {
    /// The options it ran with: `dir` is the directory it worked in (its
    /// own fresh subdirectory of it).
    #[serde(flatten)]
    pub options: MetaOptions,
    /// The filesystem type of `dir`, as statfs names it ("tmpfs", "ext4").
    pub fs_type: String,
}

/// One phase's measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaPhase {
    pub phase: MetaPhaseKind,
    /// Operations done (the phase's files or directories, or the entries
    /// read for `readdir`).
    pub ops: u64,
    /// Wall time of the phase in nanoseconds, from the first operation's
    /// start to the last one's end over all threads.
    pub elapsed_ns: u64,
    /// Per-operation latency. For `readdir`, each getdents64 call's time
    /// is shared evenly by the entries it returned.
    pub lat: LatStat,
}

impl MetaPhase {
    /// Operations per second over the phase's wall time.
    pub fn ops_per_sec(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.ops as f64 * 1e9 / self.elapsed_ns as f64
    }

    /// Wall time per operation in nanoseconds (total time / operations):
    /// the "per op" column of published metadata tables. With several
    /// threads this is below the mean latency.
    pub fn per_op_ns(&self) -> f64 {
        if self.ops == 0 {
            return 0.0;
        }
        self.elapsed_ns as f64 / self.ops as f64
    }

    /// The latency at percentile `p` (0 < p <= 100) in nanoseconds, as fio
    /// computes it; None when nothing was recorded.
    pub fn percentile_ns(&self, p: f64) -> Option<u64> {
        self.lat.hist.percentiles(&[p]).first().map(|&(_, v)| v)
    }
}

/// The result of one metadata run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MetaResult {
    pub setup: MetaSetup,
    /// Directories of the tree (0 for one directory).
    pub directories: u64,
    /// Directories that hold files (1 for one directory).
    pub leaves: u64,
    /// The phases in the order they ran.
    pub phases: Vec<MetaPhase>,
    /// Why the run stopped before its last phase (an error, an
    /// interruption); `phases` then holds the phases that finished.
    pub failure: Option<String>,
    /// With `--repeat`: every run's phases, in run order (`phases` is then
    /// the median run's, see [`MetaResult::median_run`]); empty for one run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Vec<MetaPhase>>,
    /// With `--repeat`: how the runs ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<crate::RepeatOutcome>,
    /// Under MPI: the ranks merged into this result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<crate::ranks::MetaRanks>,
}

impl MetaResult {
    pub fn phase(&self, kind: MetaPhaseKind) -> Option<&MetaPhase> {
        self.phases.iter().find(|p| p.phase == kind)
    }

    /// Each phase's operations per second in every run (one value when
    /// the result is one run), phases in the order of `phases`.
    pub fn ops_per_sec_runs(&self) -> Vec<(MetaPhaseKind, Vec<f64>)> {
        self.phases
            .iter()
            .map(|p| {
                let values = if self.runs.is_empty() {
                    vec![p.ops_per_sec()]
                } else {
                    self.runs
                        .iter()
                        .filter_map(|r| r.iter().find(|q| q.phase == p.phase))
                        .map(MetaPhase::ops_per_sec)
                        .collect()
                };
                (p.phase, values)
            })
            .collect()
    }

    /// Each phase's 99th percentile latency in every run, microseconds
    /// (runs without one left out).
    pub fn p99_us_runs(&self, kind: MetaPhaseKind) -> Vec<f64> {
        let us = |p: &MetaPhase| p.percentile_ns(99.0).map(|ns| ns as f64 / 1e3);
        if self.runs.is_empty() {
            return self.phase(kind).and_then(us).into_iter().collect();
        }
        self.runs
            .iter()
            .filter_map(|r| r.iter().find(|q| q.phase == kind).and_then(us))
            .collect()
    }

    /// The run whose total phase time is the median of the runs' (the
    /// lower middle one for an even count): the run the table shows.
    pub fn median_run(runs: &[Vec<MetaPhase>]) -> usize {
        let total = |r: &Vec<MetaPhase>| r.iter().map(|p| p.elapsed_ns).sum::<u64>();
        crate::median_index_by(runs, |a, b| total(a).cmp(&total(b))).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(ops: u64, elapsed_ns: u64, lats: &[u64]) -> MetaPhase {
        let mut lat = LatStat::default();
        for &l in lats {
            lat.record(l);
        }
        MetaPhase {
            phase: MetaPhaseKind::Create,
            ops,
            elapsed_ns,
            lat,
        }
    }

    #[test]
    fn rates_and_percentiles() {
        let p = phase(4, 2_000_000, &[100, 100, 100, 1_000]);
        assert_eq!(p.ops_per_sec(), 2000.0);
        assert_eq!(p.per_op_ns(), 500_000.0);
        assert_eq!(p.percentile_ns(50.0), Some(100));
        // 1000 ns falls in the 8 ns wide bin [1000, 1008), reported by its
        // middle as fio does.
        assert_eq!(p.percentile_ns(100.0), Some(1004));
        let empty = phase(0, 0, &[]);
        assert_eq!(empty.ops_per_sec(), 0.0);
        assert_eq!(empty.per_op_ns(), 0.0);
        assert_eq!(empty.percentile_ns(99.0), None);
    }

    #[test]
    fn results_survive_json() {
        let r = MetaResult {
            setup: MetaSetup {
                options: MetaOptions {
                    dir: "/mnt".into(),
                    files: 4,
                    threads: 2,
                    ..MetaOptions::default()
                },
                fs_type: "xfs".into(),
            },
            directories: 0,
            leaves: 1,
            phases: vec![phase(4, 2_000_000, &[100, 100, 100, 1_000])],
            failure: Some("unlink of /mnt/f3: Input/output error".into()),
            ..MetaResult::default()
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"phase\":\"create\""), "{text}");
        // The options sit in "setup" beside the filesystem, as they did
        // before the options were one struct; phases only when chosen.
        assert!(
            text.contains("\"setup\":{\"dir\":\"/mnt\",\"files\":4,\"dirs\":0,\"depth\":0,")
                && text.contains("\"cold\":false,\"fs_type\":\"xfs\"}"),
            "{text}"
        );
        let back: MetaResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let chosen = MetaResult {
            setup: MetaSetup {
                options: MetaOptions {
                    phases: vec![MetaPhaseKind::Stat],
                    ..r.setup.options.clone()
                },
                ..r.setup.clone()
            },
            ..r
        };
        let text = serde_json::to_string(&chosen).unwrap();
        assert!(text.contains("\"phases\":[\"stat\"],\"fs_type\""), "{text}");
        assert_eq!(serde_json::from_str::<MetaResult>(&text).unwrap(), chosen);
    }

    #[test]
    fn phase_names_round_trip() {
        for p in MetaPhaseKind::ALL {
            assert_eq!(p.name().parse::<MetaPhaseKind>(), Ok(p));
        }
        let err = "chmod".parse::<MetaPhaseKind>().unwrap_err();
        assert!(err.to_string().contains("chmod") && err.to_string().contains("readdir"));
    }
}
