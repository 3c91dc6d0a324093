//! The rows of a comparison: the fixed ones about preparing a filesystem
//! (mkfs time, mount times, capacity, read speeds) and the ones read from
//! a workload's `RunResult` (per reported job and direction: MB/s or KB/s,
//! IOPS, completion latency p50 and p99), flagged with the job's warnings.
//! MB is 10^6 bytes, KB 10^3.

use iolab_stats::meta::MetaResult;
use iolab_stats::{Better, Comparison, Dir, Metric, RunResult, RunWarning, TargetColumn};

use crate::suite::Workload;

/// A fixed row: key, label, unit, direction.
pub struct Fixed(
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub Better,
);

pub const MKFS: Fixed = Fixed("mkfs_s", "mkfs time", "s", Better::Lower);
pub const MOUNT_FIRST: Fixed = Fixed("mount_first_ms", "first mount", "ms", Better::Lower);
pub const MOUNT_COLD: Fixed = Fixed("mount_cold_ms", "cold mount", "ms", Better::Lower);
pub const UMOUNT: Fixed = Fixed("umount_ms", "umount", "ms", Better::Lower);
pub const SIZE: Fixed = Fixed("size_mib", "size", "MiB", Better::Higher);
pub const AVAIL: Fixed = Fixed("avail_mib", "available", "MiB", Better::Higher);
pub const USED: Fixed = Fixed("used_mib", "used after mkfs", "MiB", Better::Lower);
pub const INODES: Fixed = Fixed("inodes", "inodes total", "count", Better::Neither);
pub const CACHED_READ: Fixed = Fixed("cached_read_mb_s", "cached reads", "MB/s", Better::Higher);
pub const DEVICE_READ: Fixed = Fixed(
    "device_read_mb_s",
    "device reads (O_DIRECT)",
    "MB/s",
    Better::Higher,
);

/// Every fixed row, in display order.
pub const FIXED: [&Fixed; 10] = [
    &MKFS,
    &MOUNT_FIRST,
    &MOUNT_COLD,
    &UMOUNT,
    &SIZE,
    &AVAIL,
    &USED,
    &INODES,
    &CACHED_READ,
    &DEVICE_READ,
];

impl Fixed {
    pub fn metric(&self) -> Metric {
        Metric {
            key: self.0.into(),
            label: self.1.into(),
            unit: self.2.into(),
            better: self.3,
        }
    }
}

/// Records one value of a fixed row.
pub fn record(c: &mut Comparison, col: &mut TargetColumn, f: &Fixed, v: f64) {
    c.add_metric(f.metric());
    col.push(f.0, v);
}

/// Records a metadata run: per phase, operations per second and the wall
/// time per operation in microseconds (the "per op" column people
/// publish).
pub fn record_meta(c: &mut Comparison, col: &mut TargetColumn, r: &MetaResult) {
    for p in &r.phases {
        let name = p.phase.name();
        for (suffix, what, unit, better, v) in [
            ("ops_s", "", "ops/s", Better::Higher, p.ops_per_sec()),
            (
                "per_op_us",
                " per op",
                "us",
                Better::Lower,
                p.per_op_ns() / 1e3,
            ),
        ] {
            let key = format!("meta.{name}.{suffix}");
            c.add_metric(Metric {
                key: key.clone(),
                label: format!("meta {name}{what}"),
                unit: unit.into(),
                better,
            });
            col.push(&key, v);
        }
    }
}

/// Records a workload run's numbers: for each reported job (named after
/// the workload when it is the only one) and each direction that moved
/// data, the bandwidth (MB/s, or KB/s for a workload that says so), IOPS
/// and clat p50/p99 in microseconds; each of those cells is flagged with
/// the codes of the job's warnings, which the comparison keeps with their
/// texts.
pub fn record_run(
    c: &mut Comparison,
    col: &mut TargetColumn,
    w: &Workload,
    run: u32,
    r: &RunResult,
) {
    let single = r.jobs.len() == 1;
    for job in &r.jobs {
        let who = if single {
            w.name.clone()
        } else {
            format!("{}/{}", w.name, job.name)
        };
        let mut keys = Vec::new();
        for d in [Dir::Read, Dir::Write] {
            let dr = job.dir(d);
            if dr.total_ios == 0 {
                continue;
            }
            let base = format!("{who}.{}", d.key());
            let label = format!("{who} {}", d.key());
            let mut row = |suffix: &str, what: &str, unit: &str, better: Better, v: f64| {
                let key = format!("{base}.{suffix}");
                c.add_metric(Metric {
                    key: key.clone(),
                    label: format!("{label}{what}"),
                    unit: unit.into(),
                    better,
                });
                col.push(&key, v);
                keys.push(key);
            };
            row(
                w.bw.key(),
                "",
                w.bw.unit(),
                Better::Higher,
                dr.bw_bytes() as f64 / w.bw.bytes(),
            );
            row("iops", "", "IOPS", Better::Higher, dr.iops());
            let p = dr.clat.hist.percentiles(&[50.0, 99.0]);
            if let [(_, p50), (_, p99)] = p[..] {
                row(
                    "clat_p50_us",
                    " clat p50",
                    "us",
                    Better::Lower,
                    p50 as f64 / 1e3,
                );
                row(
                    "clat_p99_us",
                    " clat p99",
                    "us",
                    Better::Lower,
                    p99 as f64 / 1e3,
                );
            }
        }
        for jw in &job.warnings {
            for key in &keys {
                col.flag(key, &jw.code);
            }
            c.warnings.push(RunWarning {
                target: col.label.clone(),
                rows: who.clone(),
                run,
                code: jw.code.clone(),
                text: jw.text.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::BwUnit;
    use iolab_stats::{JobResult, JobWarning};

    fn workload(name: &str) -> Workload {
        Workload {
            name: name.into(),
            ..Default::default()
        }
    }

    fn job(name: &str, write_bytes: u64, ios: u64, ms: u64) -> JobResult {
        let mut j = JobResult {
            name: name.into(),
            ..Default::default()
        };
        let w = &mut j.dirs[Dir::Write as usize];
        w.io_bytes = write_bytes;
        w.total_ios = ios;
        w.runtime_ns = ms * 1_000_000;
        for i in 0..ios {
            w.clat.record(1_000 + i);
        }
        j
    }

    #[test]
    fn one_job_rows_are_named_after_the_workload() {
        let mut c = Comparison::default();
        let mut col = TargetColumn::default();
        let r = RunResult {
            jobs: vec![job("seqwrite-1m", 100_000_000, 100, 1000)],
            ..Default::default()
        };
        record_run(&mut c, &mut col, &workload("seqwrite-1m"), 1, &r);
        let keys: Vec<&str> = c.metrics.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "seqwrite-1m.write.mb_s",
                "seqwrite-1m.write.iops",
                "seqwrite-1m.write.clat_p50_us",
                "seqwrite-1m.write.clat_p99_us"
            ]
        );
        assert_eq!(
            col.value("seqwrite-1m.write.mb_s").unwrap().median(),
            Some(100.0)
        );
        assert_eq!(
            col.value("seqwrite-1m.write.iops").unwrap().median(),
            Some(100.0)
        );
        let p50 = col
            .value("seqwrite-1m.write.clat_p50_us")
            .unwrap()
            .median()
            .unwrap();
        assert!((1.0..1.1).contains(&p50), "{p50}");
    }

    #[test]
    fn several_jobs_get_their_own_rows() {
        let mut c = Comparison::default();
        let mut col = TargetColumn::default();
        let r = RunResult {
            jobs: vec![job("sw", 1_000_000, 10, 100), job("rw", 0, 0, 100)],
            ..Default::default()
        };
        record_run(&mut c, &mut col, &workload("stonewall-4"), 1, &r);
        assert!(c.metric("stonewall-4/sw.write.mb_s").is_some());
        // A direction that moved nothing has no row.
        assert!(c
            .metrics
            .iter()
            .all(|m| !m.key.starts_with("stonewall-4/rw")));
    }

    #[test]
    fn a_workload_may_report_kb_per_second() {
        let mut c = Comparison::default();
        let mut col = TargetColumn::default();
        let r = RunResult {
            jobs: vec![job("seqwrite-fsync", 3_000_000, 732, 1000)],
            ..Default::default()
        };
        let w = Workload {
            bw: BwUnit::KBs,
            ..workload("seqwrite-fsync")
        };
        record_run(&mut c, &mut col, &w, 1, &r);
        let m = c.metric("seqwrite-fsync.write.kb_s").unwrap();
        assert_eq!(
            (m.unit.as_str(), m.label.as_str()),
            ("KB/s", "seqwrite-fsync write")
        );
        assert_eq!(
            col.value("seqwrite-fsync.write.kb_s").unwrap().median(),
            Some(3000.0)
        );
        assert!(c.metric("seqwrite-fsync.write.mb_s").is_none());
    }

    #[test]
    fn warnings_flag_the_cells_of_their_job() {
        let mut c = Comparison::default();
        let mut col = TargetColumn {
            label: "A".into(),
            ..Default::default()
        };
        let mut sw = job("sw", 1_000_000, 10, 100);
        sw.warnings.push(JobWarning {
            code: "page-cache".into(),
            text: "job `sw`: the device saw 1% of the writes".into(),
        });
        let r = RunResult {
            jobs: vec![sw, job("rw", 2_000_000, 20, 100)],
            ..Default::default()
        };
        record_run(&mut c, &mut col, &workload("four"), 2, &r);
        for k in ["mb_s", "iops", "clat_p50_us", "clat_p99_us"] {
            let sw = col.value(&format!("four/sw.write.{k}")).unwrap();
            assert_eq!(sw.warnings, ["page-cache"], "{k}");
            let rw = col.value(&format!("four/rw.write.{k}")).unwrap();
            assert!(rw.warnings.is_empty(), "{k}");
        }
        assert_eq!(
            c.warnings,
            [RunWarning {
                target: "A".into(),
                rows: "four/sw".into(),
                run: 2,
                code: "page-cache".into(),
                text: "job `sw`: the device saw 1% of the writes".into(),
            }]
        );
    }
}
