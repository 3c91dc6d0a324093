//! The headline metrics of a `run` record, from its `RunResult`: per job
//! and direction that did I/O, bandwidth and IOPS (each with the moments
//! of its per-window samples, so that two single runs can be tested
//! against each other) and the median and 99th percentile completion
//! latency. A `run --repeat` record has the same metrics, each the median
//! of the runs with the runs' values as its samples, so that any two runs
//! can be diffed metric by metric.

use iolab_stats::{Dir, RunResult, Summary};

use crate::Metric;

/// Bytes in the KiB that fio's bandwidth samples count in.
const KIB: f64 = 1024.0;

/// The metrics of a run, in job order, then read, write, trim.
pub fn run_metrics(result: &RunResult) -> Vec<Metric> {
    let mut out = Vec::new();
    for (i, job) in result.jobs.iter().enumerate() {
        let repeated = result.jobs.iter().filter(|j| j.name == job.name).count() > 1;
        let name = if repeated {
            format!("{}[{i}]", job.name)
        } else {
            job.name.clone()
        };
        for d in Dir::ALL {
            let r = job.dir(d);
            if r.total_ios == 0 {
                continue;
            }
            let label = format!("{name} {}", d.key());
            let bw = &r.bw_samples;
            out.push(
                Metric::new(format!("{label} MB/s"), r.bw_bytes() as f64 / 1e6, "MB/s")
                    .with_windows(bw.count(), bw.mean() * KIB / 1e6, bw.stdev() * KIB / 1e6),
            );
            let io = &r.iops_samples;
            out.push(
                Metric::new(format!("{label} IOPS"), r.iops(), "IOPS").with_windows(
                    io.count(),
                    io.mean(),
                    io.stdev(),
                ),
            );
            let pct = r.clat.hist.percentiles(&[50.0, 99.0]);
            for (p, ns) in pct {
                out.push(Metric::new(
                    format!("{label} clat p{p}"),
                    ns as f64 / 1e3,
                    "us",
                ));
            }
        }
    }
    out
}

/// The metrics of repeated runs of one job set: those of [`run_metrics`],
/// named alike, each the median over the runs that have it, with their
/// values as samples.
pub fn repeated_run_metrics(runs: &[RunResult]) -> Vec<Metric> {
    let each: Vec<Vec<Metric>> = runs.iter().map(run_metrics).collect();
    let Some(first) = each.first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter_map(|m| {
            let values: Vec<f64> = each
                .iter()
                .filter_map(|ms| ms.iter().find(|x| x.name == m.name))
                .map(|x| x.value)
                .collect();
            let median = Summary::of(&values)?.median;
            Some(Metric::new(m.name.clone(), median, m.unit.clone()).with_samples(values))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::JobResult;

    #[test]
    fn metrics_of_the_directions_that_did_io() {
        let mut job = JobResult {
            name: "w".into(),
            ..JobResult::default()
        };
        let d = &mut job.dirs[1];
        d.io_bytes = 2_000_000;
        d.total_ios = 500;
        d.runtime_ns = 1_000_000_000;
        for v in [1000, 2000, 3000] {
            d.bw_samples.record(v);
        }
        d.iops_samples.record(400);
        for ns in 1..=100u64 {
            d.clat.record(ns * 1000);
        }
        let run = RunResult {
            jobs: vec![job.clone(), job],
            ..RunResult::default()
        };
        let m = run_metrics(&run);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "w[0] write MB/s",
                "w[0] write IOPS",
                "w[0] write clat p50",
                "w[0] write clat p99",
                "w[1] write MB/s",
                "w[1] write IOPS",
                "w[1] write clat p50",
                "w[1] write clat p99",
            ]
        );
        assert_eq!(m[0].value, 2.0);
        let w = m[0].windows.unwrap();
        assert_eq!(w.count, 3);
        assert!((w.mean - 2000.0 * 1024.0 / 1e6).abs() < 1e-12);
        assert!((w.stdev - 1000.0 * 1024.0 / 1e6).abs() < 1e-12);
        assert_eq!(m[1].value, 500.0);
        assert_eq!(m[1].windows, None, "one IOPS window cannot be tested");
        // The 50th of 100 latencies of 1..100 us is 50 us (bin value 50.0..).
        assert!((m[2].value - 50.0).abs() < 1.0, "{}", m[2].value);
        assert_eq!(m[2].unit, "us");
    }

    #[test]
    fn repeats_have_the_names_of_a_single_run() {
        let run = |bytes: u64| {
            let mut job = JobResult {
                name: "s".into(),
                ..JobResult::default()
            };
            let d = &mut job.dirs[1];
            d.io_bytes = bytes;
            d.total_ios = bytes / 4096;
            d.runtime_ns = 1_000_000_000;
            d.clat.record(20_000);
            RunResult {
                jobs: vec![job],
                ..RunResult::default()
            }
        };
        let runs = [run(1_000_000), run(3_000_000), run(2_000_000)];
        let single: Vec<String> = run_metrics(&runs[0]).into_iter().map(|m| m.name).collect();
        let repeated = repeated_run_metrics(&runs);
        let names: Vec<&str> = repeated.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, single);
        assert_eq!(repeated[0].name, "s write MB/s");
        assert_eq!(repeated[0].value, 2.0);
        assert_eq!(repeated[0].samples, Some(vec![1.0, 3.0, 2.0]));
        assert!(repeated_run_metrics(&[]).is_empty());
    }
}
