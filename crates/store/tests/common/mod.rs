//! Records for the store's tests.

#![allow(dead_code)]

use iolab_stats::{JobResult, RunResult};
use iolab_store::{Kind, Metric, Provenance, Record};

pub fn provenance(fs: &str, target: &str) -> Provenance {
    Provenance {
        time: "2026-11-22T06:00:00Z".into(),
        host: "bench1".into(),
        kernel: "6.1.0-test".into(),
        cpu_model: "Test CPU @ 3.0GHz".into(),
        cpu_count: 8,
        memory_bytes: 16 << 30,
        iolab_version: "0.1.0".into(),
        target: target.into(),
        fs_type: fs.into(),
        mount_options: "rw,relatime".into(),
        mount_source: "/dev/nvme0n1p2".into(),
        block_device: "nvme0n1".into(),
        device_model: "Fast SSD 1TB".into(),
        rotational: Some(false),
        scheduler: "none".into(),
        device_size_bytes: Some(1_000_204_886_016),
        ..Provenance::default()
    }
}

/// A run result with two jobs that did some I/O.
pub fn run_result(seed: u64) -> RunResult {
    let mut jobs = Vec::new();
    for (i, name) in ["seqread", "randwrite"].iter().enumerate() {
        let mut j = JobResult {
            name: name.to_string(),
            clones: 1,
            runtime_ns: 1_000_000_000 + seed,
            ..JobResult::default()
        };
        let d = &mut j.dirs[i];
        d.io_bytes = 4096 * (100 + seed);
        d.total_ios = 100 + seed;
        d.runtime_ns = 1_000_000_000;
        for k in 0..(100 + seed) {
            d.clat.record(1000 + k * 37);
        }
        d.bw_samples.record(400 + seed);
        d.bw_samples.record(420);
        jobs.push(j);
    }
    RunResult {
        timestamp: 1_763_800_000 + seed,
        timestamp_ms: (1_763_800_000 + seed) * 1000,
        jobs,
        ..RunResult::default()
    }
}

/// A record of `kind` with content in every field.
pub fn record(kind: Kind, seed: u64) -> Record {
    let result_json = match kind {
        Kind::Run => serde_json::to_string(&run_result(seed)).unwrap(),
        other => format!(r#"{{"kind":"{other}","rows":[1,2,{seed}],"note":"é ✓"}}"#),
    };
    Record {
        kind,
        time: iolab_store::time::format_rfc3339(1_763_800_000 + seed as i64 * 60),
        tags: vec!["nightly".into(), format!("seed-{seed}"), "nightly".into()],
        provenance: provenance("ext4", "/mnt/data/bench"),
        job_text: "[global]\nbs=4k\n[job1]\nrw=randread\n".into(),
        command_line: format!("iolab {kind} --tag nightly /mnt/data/bench"),
        target: "/mnt/data/bench".into(),
        result_json,
        metrics: vec![
            Metric::new("read MB/s", 512.25 + seed as f64, "MB/s")
                .with_samples(vec![510.0, 514.5, 512.25]),
            Metric::new("p99 latency", 87.5, "us"),
            Metric::new("write IOPS", 1234.5, "IOPS").with_windows(40, 1230.25, 17.5),
            Metric::new("not measured", f64::NAN, "IOPS"),
        ],
        warnings: vec![iolab_store::Flag::new(
            "page-cache",
            "job1",
            "job `job1`: read from the page cache",
        )],
        repeat: (seed % 2 == 1).then(|| iolab_stats::RepeatOutcome {
            rule: iolab_stats::RepeatRule::auto(),
            runs: 4,
            stopped: iolab_stats::StopReason::Width,
            widest: Some(0.031),
            widest_figure: "job1 read MB/s".into(),
            elapsed_s: 12.5,
        }),
    }
}

/// Compares records whose metric values may be NaN.
pub fn same(a: &Record, b: &Record) -> bool {
    let metrics_equal = a.metrics.len() == b.metrics.len()
        && a.metrics.iter().zip(&b.metrics).all(|(x, y)| {
            x.name == y.name
                && x.unit == y.unit
                && x.samples == y.samples
                && x.windows == y.windows
                && (x.value == y.value || (x.value.is_nan() && y.value.is_nan()))
        });
    let strip = |r: &Record| Record {
        metrics: Vec::new(),
        ..r.clone()
    };
    metrics_equal && strip(a) == strip(b)
}
