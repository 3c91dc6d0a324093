//! The headline metrics of a `run` record, from its `RunResult`: per job
//! and direction that did I/O, bandwidth and IOPS (each with the moments
//! of its per-window samples, so that two single runs can be tested
//! against each other) and the median and 99th percentile completion
//! latency.

use iolab_stats::{Dir, RunResult};

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
}
