//! The rows of a comparison: the fixed ones about preparing a filesystem
//! (mkfs time, mount times, capacity, read speeds) and the ones read from
//! a workload's `RunResult` (per reported job and direction: MB/s or KB/s,
//! IOPS, completion latency p50 and p99, and for a job that syncs its
//! writes the fsync latency p50 and p99), flagged with the job's warnings.
//! MB is 10^6 bytes, KB 10^3.
//!
//! A fixed row that is not like for like across filesystems is a fact,
//! not a score ([`Better::Neither`]: no best mark): statvfs's size and
//! used blocks (each filesystem decides what it leaves out of its size),
//! the inode count, and the read speeds of the device under every target.
//! Each capacity and read-speed row says in the comparison's notes what
//! it means.

use iolab_stats::meta::MetaResult;
use iolab_stats::{
    Better, Comparison, Dir, Metric, RunResult, RunWarning, TargetColumn, WarningCode,
};

use crate::bcache::{CacheMode, Counters};
use crate::suite::Workload;

/// A fixed row: key, label, unit, direction, and what the row means when
/// the label alone does not say (a note of the comparison).
pub struct Fixed(
    pub &'static str,
    pub &'static str,
    pub &'static str,
    pub Better,
    pub Option<&'static str>,
);

pub const MKFS: Fixed = Fixed("mkfs_s", "mkfs time", "s", Better::Lower, None);
pub const MOUNT_FIRST: Fixed = Fixed("mount_first_ms", "first mount", "ms", Better::Lower, None);
pub const MOUNT_COLD: Fixed = Fixed("mount_cold_ms", "cold mount", "ms", Better::Lower, None);
pub const UMOUNT: Fixed = Fixed("umount_ms", "umount", "ms", Better::Lower, None);
pub const SIZE: Fixed = Fixed("size_mib", "size", "MiB", Better::Neither, Some(SIZE_NOTE));
pub const AVAIL: Fixed = Fixed(
    "avail_mib",
    "available",
    "MiB",
    Better::Higher,
    Some(AVAIL_NOTE),
);
pub const USED: Fixed = Fixed(
    "used_mib",
    "used after mkfs",
    "MiB",
    Better::Neither,
    Some(USED_NOTE),
);
pub const INODES: Fixed = Fixed(
    "inodes",
    "inodes total",
    "count",
    Better::Neither,
    Some(INODES_NOTE),
);
pub const CACHED_READ: Fixed = Fixed(
    "cached_read_mb_s",
    "cached reads",
    "MB/s",
    Better::Neither,
    Some(READS_NOTE),
);
pub const DEVICE_READ: Fixed = Fixed(
    "device_read_mb_s",
    "device reads (O_DIRECT)",
    "MB/s",
    Better::Neither,
    Some(READS_NOTE),
);

/// What the size row means.
pub const SIZE_NOTE: &str = "size: the blocks statvfs counts as the filesystem's (f_blocks), right after mkfs; each filesystem leaves out of it what it counts as its own (ext4 its metadata and journal, xfs its log), so size is a fact, not a score: no best mark";
/// What the available row means.
pub const AVAIL_NOTE: &str = "available: what a user other than root can still write (f_bavail), after the filesystem's own metadata and the blocks kept for root (ext4 keeps 5% by default): the capacity row that compares like for like";
/// What the used row means.
pub const USED_NOTE: &str = "used after mkfs: size minus the free blocks (f_blocks - f_bfree), the metadata the filesystem counts inside its size; a filesystem that leaves its metadata out of the size (ext4) shows little used, so it is not like for like: no best mark";
/// What the inodes row means.
pub const INODES_NOTE: &str = "inodes total: the inodes statvfs reports (f_files); a filesystem that allocates inodes as it goes (btrfs) reports 0";
/// What the read-speed rows mean.
pub const READS_NOTE: &str = "cached reads and device reads (as hdparm -Tt) read the block device under the filesystem, not the filesystem: the same --device, or a fresh loop image in the same directory, for every target; facts about it and about memory, not scores: no best mark";

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

/// Records one value of a fixed row, with the note on what it means.
pub fn record(c: &mut Comparison, col: &mut TargetColumn, f: &Fixed, v: f64) {
    c.add_metric(f.metric());
    if let Some(n) = f.4 {
        c.note(n);
    }
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
/// and clat p50/p99 in microseconds, and for a job that synced its writes
/// (`fsync`, `fdatasync`) the sync latency p50/p99 in microseconds (fio's
/// "sync" latency: for a write+fsync pattern the figure that counts, the
/// write before it only reaching the page cache); each of those cells is
/// flagged with the codes of the job's warnings, which the comparison
/// keeps with their texts.
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
            if d == Dir::Write && job.sync.count() > 0 {
                let p = job.sync.hist.percentiles(&[50.0, 99.0]);
                if let [(_, p50), (_, p99)] = p[..] {
                    row(
                        "fsync_p50_us",
                        " fsync p50",
                        "us",
                        Better::Lower,
                        p50 as f64 / 1e3,
                    );
                    row(
                        "fsync_p99_us",
                        " fsync p99",
                        "us",
                        Better::Lower,
                        p99 as f64 / 1e3,
                    );
                }
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

/// Records what bcache did during a workload run on a bcache target: the
/// share of its cache lookups that hit, the bytes it sent past the cache
/// (sequential I/O beyond its cutoff, by default), and the dirty data
/// left in the cache after the run (writeback). Facts, not scores. When
/// the cache answered most reads, or writes are still only in the cache,
/// the workload's rows are flagged `bcache-cache`: those figures are the
/// cache device's, not the disk's.
pub fn record_bcache(
    c: &mut Comparison,
    col: &mut TargetColumn,
    w: &Workload,
    run: u32,
    mode: Option<CacheMode>,
    n: &Counters,
) {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let mut rows = vec![
        ("bypassed_mib", "bypassed", "MiB", mib(n.bypassed_bytes)),
        ("dirty_mib", "dirty after", "MiB", mib(n.dirty_bytes)),
    ];
    if let Some(p) = n.hit_pct() {
        rows.insert(0, ("hit_pct", "hits", "%", p));
    }
    for (suffix, what, unit, v) in rows {
        let key = format!("{}.bcache.{suffix}", w.name);
        c.add_metric(Metric {
            key: key.clone(),
            label: format!("{} bcache {what}", w.name),
            unit: unit.into(),
            better: Better::Neither,
        });
        col.push(&key, v);
    }
    c.note(BCACHE_NOTE);
    let attached = !matches!(mode, Some(CacheMode::Off) | None);
    let mut why = Vec::new();
    if attached && n.hit_pct().is_some_and(|p| p >= 50.0) {
        why.push(format!(
            "{:.0}% of bcache's lookups hit the cache",
            n.hit_pct().unwrap_or(0.0)
        ));
    }
    if attached && n.dirty_bytes > 0 {
        why.push(format!(
            "{:.1} MiB written are still only in the cache (dirty)",
            mib(n.dirty_bytes)
        ));
    }
    if why.is_empty() {
        return;
    }
    let prefix = (format!("{}.", w.name), format!("{}/", w.name));
    let keys: Vec<String> = c
        .metrics
        .iter()
        .map(|m| m.key.clone())
        .filter(|k| {
            (k.starts_with(&prefix.0) || k.starts_with(&prefix.1)) && !k.contains(".bcache.")
        })
        .filter(|k| col.value(k).is_some())
        .collect();
    for k in &keys {
        col.flag(k, &BCACHE_CODE);
    }
    c.warnings.push(RunWarning {
        target: col.label.clone(),
        rows: w.name.clone(),
        run,
        code: WarningCode::BcacheCache,
        text: format!(
            "workload `{}`: {}: its figures are the cache device's as much as the disk's; \
             compare with the cache detached (--bcache off) for the disk's",
            w.name,
            why.join(", and ")
        ),
    });
}

/// The warning code of figures bcache's cache answered.
pub const BCACHE_CODE: WarningCode = WarningCode::BcacheCache;

/// What the bcache rows mean.
pub const BCACHE_NOTE: &str = "bcache hits, bypassed and dirty after: bcache's own counters for each workload run (/sys/block/bcacheN/bcache/stats_total, dirty_data): the share of the lookups through the cache that hit it, the bytes sent straight to the backing device (sequential I/O past bcache's cutoff), and the written data still only in the cache when the run ended; facts, not scores";

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
    fn a_job_that_syncs_gets_fsync_latency_rows() {
        let mut c = Comparison::default();
        let mut col = TargetColumn::default();
        let mut j = job("seqwrite-fsync", 4096 * 100, 100, 1000);
        // The writes reach the page cache in about 1 us; each fsync takes
        // 2 ms, one in a hundred 9 ms.
        for i in 0..100u64 {
            j.sync
                .record(if i == 0 { 9_000_000 } else { 2_000_000 + i });
        }
        let r = RunResult {
            jobs: vec![j],
            ..Default::default()
        };
        let w = Workload {
            bw: BwUnit::KBs,
            ..workload("seqwrite-fsync")
        };
        record_run(&mut c, &mut col, &w, 1, &r);
        let keys: Vec<&str> = c.metrics.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "seqwrite-fsync.write.kb_s",
                "seqwrite-fsync.write.iops",
                "seqwrite-fsync.write.clat_p50_us",
                "seqwrite-fsync.write.clat_p99_us",
                "seqwrite-fsync.write.fsync_p50_us",
                "seqwrite-fsync.write.fsync_p99_us",
            ]
        );
        let m = c.metric("seqwrite-fsync.write.fsync_p50_us").unwrap();
        assert_eq!(
            (m.label.as_str(), m.unit.as_str(), m.better),
            ("seqwrite-fsync write fsync p50", "us", Better::Lower)
        );
        assert_eq!(
            c.metric("seqwrite-fsync.write.fsync_p99_us").unwrap().unit,
            "us"
        );
        let at = |k: &str| col.value(k).unwrap().median().unwrap();
        let p50 = at("seqwrite-fsync.write.fsync_p50_us");
        assert!((1990.0..2100.0).contains(&p50), "{p50}");
        let p99 = at("seqwrite-fsync.write.fsync_p99_us");
        assert!((1990.0..2100.0).contains(&p99), "{p99}");
        assert!(at("seqwrite-fsync.write.clat_p50_us") < 2.0);
        // A job without fsync has no such rows.
        let mut c = Comparison::default();
        let r = RunResult {
            jobs: vec![job("sw", 1_000_000, 10, 100)],
            ..Default::default()
        };
        record_run(&mut c, &mut col, &workload("sw"), 1, &r);
        assert!(c.metrics.iter().all(|m| !m.key.contains("fsync")));
    }

    #[test]
    fn rows_that_are_not_like_for_like_are_facts_with_a_meaning() {
        for f in [&SIZE, &USED, &INODES, &CACHED_READ, &DEVICE_READ] {
            assert_eq!(f.3, Better::Neither, "{}", f.0);
        }
        assert_eq!(AVAIL.3, Better::Higher);
        let mut c = Comparison::default();
        for (label, used) in [("ext4", 10.0), ("xfs", 40.0)] {
            let mut col = TargetColumn {
                label: label.into(),
                ..Default::default()
            };
            for f in FIXED {
                // Two runs each, far apart: a score would get a best mark.
                record(&mut c, &mut col, f, used);
                record(&mut c, &mut col, f, used * 1.01);
            }
            c.targets.push(col);
        }
        for f in [&SIZE, &USED, &INODES, &CACHED_READ, &DEVICE_READ] {
            assert!(c.best(f.0).is_empty(), "{}", f.0);
        }
        assert_eq!(c.best(MKFS.0), [0]);
        assert_eq!(c.best(AVAIL.0), [1]);
        // Each capacity and read-speed row's meaning once in the notes.
        assert_eq!(
            c.notes,
            [SIZE_NOTE, AVAIL_NOTE, USED_NOTE, INODES_NOTE, READS_NOTE]
        );
        assert!(SIZE_NOTE.contains("f_blocks") && USED_NOTE.contains("f_bfree"));
        assert!(AVAIL_NOTE.contains("f_bavail"));
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
