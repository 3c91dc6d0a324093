//! A job set run N times (`iolab run --repeat N`): every headline figure
//! of every job and direction across the runs (bandwidth, IOPS, p50 and
//! p99 completion latency), each with its median, min-max and the
//! confidence interval of its median (see [`crate::repeats`]), flagged
//! when its range exceeds [`NOISY_RANGE`] of its median; and the run that stands for
//! them all where one run's report must (the median run).

use serde::{Deserialize, Serialize};

use crate::{Dir, RunResult, Summary, NOISY_RANGE};

/// One figure over the runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepeatFigure {
    pub job: String,
    /// "read", "write" or "trim".
    pub dir: String,
    /// "bw", "iops", "clat_p50", "clat_p99".
    pub metric: String,
    /// "MB/s", "IOPS" or "us".
    pub unit: String,
    /// One value per run, in run order.
    pub values: Vec<f64>,
    pub summary: Summary,
    /// (max - min) / median exceeds [`NOISY_RANGE`].
    pub noisy: bool,
}

impl RepeatFigure {
    /// (max - min) / median, or None when the median is 0.
    pub fn range_ratio(&self) -> Option<f64> {
        let s = &self.summary;
        (s.median != 0.0).then(|| (s.max - s.min) / s.median.abs())
    }
}

/// The figures of the runs, job by job (matched by position and name) and
/// direction by direction, for every direction that did I/O in any run.
pub fn repeat_figures(runs: &[RunResult]) -> Vec<RepeatFigure> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (ji, job) in first.jobs.iter().enumerate() {
        for dir in Dir::ALL {
            let same = |r: &RunResult| r.jobs.get(ji).filter(|j| j.name == job.name).cloned();
            let jobs: Vec<_> = runs.iter().filter_map(same).collect();
            if jobs.len() != runs.len() || jobs.iter().all(|j| j.dir(dir).total_ios == 0) {
                continue;
            }
            let pct = |j: &crate::JobResult, p: f64| {
                j.dir(dir)
                    .clat
                    .hist
                    .percentiles(&[p])
                    .first()
                    .map_or(0.0, |&(_, ns)| ns as f64 / 1e3)
            };
            let figures: [(&str, &str, Vec<f64>); 4] = [
                (
                    "bw",
                    "MB/s",
                    jobs.iter()
                        .map(|j| j.dir(dir).bw_bytes() as f64 / 1e6)
                        .collect(),
                ),
                (
                    "iops",
                    "IOPS",
                    jobs.iter().map(|j| j.dir(dir).iops()).collect(),
                ),
                (
                    "clat_p50",
                    "us",
                    jobs.iter().map(|j| pct(j, 50.0)).collect(),
                ),
                (
                    "clat_p99",
                    "us",
                    jobs.iter().map(|j| pct(j, 99.0)).collect(),
                ),
            ];
            for (metric, unit, values) in figures {
                if metric.starts_with("clat") && values.iter().all(|v| *v == 0.0) {
                    continue; // no latencies kept (disable_clat, gtod_reduce)
                }
                let Some(summary) = Summary::of(&values) else {
                    continue;
                };
                let mut f = RepeatFigure {
                    job: job.name.clone(),
                    dir: dir.key().to_string(),
                    metric: metric.to_string(),
                    unit: unit.to_string(),
                    values,
                    summary,
                    noisy: false,
                };
                f.noisy = f.range_ratio().is_some_and(|s| s > NOISY_RANGE);
                out.push(f);
            }
        }
    }
    out
}

/// The run whose first figure (the first job's bandwidth in its first
/// direction) is the median of the runs', the lower of the two middle ones
/// for an even count: the run a report of one run shows. The last run
/// when there is no figure.
pub fn median_run(figs: &[RepeatFigure], runs: usize) -> usize {
    let Some(f) = figs.first().filter(|f| f.values.len() == runs) else {
        return runs.saturating_sub(1);
    };
    crate::median_index_by(&f.values, |a, b| a.total_cmp(b)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::JobResult;

    fn run(iops: u64) -> RunResult {
        let mut j = JobResult {
            name: "j".into(),
            ..Default::default()
        };
        let d = &mut j.dirs[Dir::Read as usize];
        d.total_ios = iops;
        d.io_bytes = iops * 4096;
        d.runtime_ns = 1_000_000_000;
        for _ in 0..iops.min(1000) {
            d.clat.record(100_000);
        }
        RunResult {
            jobs: vec![j],
            ..Default::default()
        }
    }

    #[test]
    fn each_figure_has_every_run_and_its_spread() {
        let figs = repeat_figures(&[run(1000), run(1040), run(980)]);
        let names: Vec<&str> = figs.iter().map(|f| f.metric.as_str()).collect();
        assert_eq!(names, ["bw", "iops", "clat_p50", "clat_p99"]);
        let iops = &figs[1];
        assert_eq!(iops.values, [1000.0, 1040.0, 980.0]);
        assert_eq!(iops.summary.median, 1000.0);
        assert!((iops.range_ratio().unwrap() - 0.06).abs() < 1e-9);
        assert!(!iops.noisy);
        let ci = iops.summary.median_ci.unwrap();
        assert_eq!((ci.low, ci.high), (980.0, 1040.0));
        assert_eq!(median_run(&figs, 3), 0, "1000 IOPS: the median run");
        assert_eq!(figs[0].unit, "MB/s");
        assert!((figs[0].values[0] - 4.096).abs() < 1e-9);
    }

    #[test]
    fn a_spread_over_ten_percent_is_noisy() {
        let figs = repeat_figures(&[run(1000), run(1200)]);
        assert!(figs[1].noisy, "{:?}", figs[1]);
        assert!(repeat_figures(&[]).is_empty());
    }

    #[test]
    fn the_median_run_is_chosen_by_the_first_figure() {
        let runs = [run(900), run(1300), run(1000), run(1100)];
        let figs = repeat_figures(&runs);
        // 900 1000 1100 1300: the lower middle is 1000, run 2.
        assert_eq!(median_run(&figs, 4), 2);
        assert_eq!(median_run(&[], 4), 3, "no figure: the last run");
    }
}
