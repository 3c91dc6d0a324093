//! Statistics and the result model: latency histograms in fio's log-linear
//! layout, running moments, time series, repeat statistics, and `RunResult`,
//! which every renderer and the store read. No threads and no I/O here.
//!
//! The latency core is two types a worker owns per direction and latency
//! kind: [`LatHist`] (fio's 1856-bin histogram, for percentiles and json+
//! bins) and [`Moments`] (count, min, max, mean, stdev). Both record one
//! sample without allocating and merge across workers by value, and both
//! reproduce fio's arithmetic exactly so that the numbers iolab prints are
//! the numbers fio would print for the same samples.
#![forbid(unsafe_code)]

mod hist;
mod hist_serde;
mod moments;

pub use hist::{percentile_rank, LatHist, PLAT_BITS, PLAT_GROUP_NR, PLAT_NR, PLAT_VAL};
pub use moments::Moments;

mod comparison;
mod comparison_verdicts;
mod env;
mod lat;
mod result;
mod setup;
mod steady;
mod warning_code;

pub use comparison::{
    Better, Cell, Comparison, Metric, RunWarning, TargetColumn, TargetSetup, WorkloadRun,
    NOISY_RANGE,
};
pub use comparison_verdicts::{family, ComparisonVerdicts, PairVerdict, DEFAULT_METHOD};
pub use env::{Environment, Virt};
pub use lat::{LatBuckets, LatStat, LAT_BUCKET_BOUNDS};
pub use result::{
    CausedIo, CpuResult, DepthDist, Dir, DirResult, DiskResult, GroupDir, GroupResult, JobResult,
    JobWarning, RunResult, VerifyFailure,
};
pub use setup::{JobSetup, UnifiedRw, DEFAULT_PERCENTILES};
pub use steady::{SteadyResult, SteadyRule, SteadyWindow};
pub use warning_code::WarningCode;

mod compare;
pub mod dist;
pub mod meta;
pub mod quick;
pub mod ranks;
pub mod repeated;
mod repeats;
pub mod sweep;

pub use compare::{
    fmt_p, geometric_mean, mann_whitney, mann_whitney_floor, welch, welch_from_stats, Method,
    Statistic, TestOutcome, UnknownMethod, DEFAULT_ALPHA,
};
pub mod verdict;
#[cfg(test)]
mod verdict_sim;
pub use repeats::{median, median_index_by, median_interval, Interval, Summary, CONFIDENCE};
pub use verdict::{decide, holm, p_value, ratio_test, runs_needed, RatioTest, Verdict};
pub mod repeat_rule;
pub use repeat_rule::{RepeatOutcome, RepeatRule, StopReason};
