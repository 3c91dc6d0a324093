//! The numbers fio derives from a job's results before printing them, one
//! definition for every format: percent distributions of I/O depths and
//! latency buckets (with fio's floors for tiny non-zero shares), CPU use,
//! a job's share of its group's bandwidth, and the percentiles a job asked
//! for.

use std::borrow::Cow;

use iolab_stats::{
    Dir, DirResult, GroupResult, JobResult, JobSetup, LatHist, RunResult, UnifiedRw,
};

/// The entry fio 3.33 lists in its JSON and terse output for a job clone
/// that ran with `stats=0`: no name, group -1, nothing measured, no
/// percentile list; `elapsed` as for any job.
pub fn stats_off_entry(elapsed_s: u64) -> JobResult {
    JobResult {
        groupid: u32::MAX,
        elapsed_s,
        setup: JobSetup {
            clat_percentiles: false,
            lat_percentiles: false,
            ..JobSetup::default()
        },
        clones: 1,
        ..JobResult::default()
    }
}

/// Nanoseconds to whole milliseconds, as fio's runtimes are.
pub fn ms(ns: u64) -> u64 {
    ns / 1_000_000
}

/// How many clones a reported job stands for (at least one).
pub fn members(job: &JobResult) -> u32 {
    job.clones.max(1)
}

/// I/Os issued in the three data directions: the base of fio's depth and
/// latency-bucket percentages (syncs are not counted, so a job with fsync
/// can show more than 100% at depth 1, as fio does).
pub fn issued_rw(job: &JobResult) -> u64 {
    job.issued.iter().sum()
}

/// Counts as percentages of `total`, where a non-zero count that would
/// show below `floor` shows as `floor` (fio: 0.1 for depths, 0.01 for
/// latency buckets); all zeros when `total` is 0.
pub fn percents(counts: &[u64], total: u64, floor: f64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 {
                return 0.0;
            }
            let p = c as f64 / total as f64 * 100.0;
            if p < floor && c != 0 {
                floor
            } else {
                p
            }
        })
        .collect()
}

/// The I/O depth distribution: I/Os by the depth they were issued at, over
/// the I/Os issued.
pub fn depth_level(job: &JobResult) -> Vec<f64> {
    percents(&job.depth.level, issued_rw(job), 0.1)
}

/// Submission (or completion) calls by batch size, over all such calls.
pub fn depth_batches(counts: &[u64; 7]) -> Vec<f64> {
    percents(counts, counts.iter().sum(), 0.1)
}

/// fio's latency buckets as percentages: (ns, us, ms).
pub fn lat_buckets(job: &JobResult) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let total = issued_rw(job);
    let b = &job.lat_buckets;
    (
        percents(&b.ns, total, 0.01),
        percents(&b.us, total, 0.01),
        percents(&b.ms, total, 0.01),
    )
}

/// User and system CPU as percent of the job's runtime.
pub fn cpu(job: &JobResult) -> (f64, f64) {
    if job.runtime_ns == 0 {
        return (0.0, 0.0);
    }
    let rt = job.runtime_ns as f64;
    (
        job.cpu.user_ns as f64 * 100.0 / rt,
        job.cpu.system_ns as f64 * 100.0 / rt,
    )
}

/// The reporting group a job belongs to.
pub fn group<'a>(run: &'a RunResult, job: &JobResult) -> Option<&'a GroupResult> {
    run.groups.iter().find(|g| g.groupid == job.groupid)
}

/// One direction of a job's report: fio's read, write or trim, or the
/// three summed as "mixed" (`unified_rw_reporting`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Dir(Dir),
    Mixed,
}

impl Shown {
    /// fio's name of it in JSON and the job's lines.
    pub fn key(self) -> &'static str {
        match self {
            Shown::Dir(d) => d.key(),
            Shown::Mixed => "mixed",
        }
    }
}

/// What a report shows of `dirs` for a job: the directions themselves,
/// with `unified_rw_reporting=mixed` their sum instead, with `both` the
/// directions and then their sum.
pub fn shown(unified: UnifiedRw, dirs: &[Dir]) -> Vec<Shown> {
    let mut out: Vec<Shown> = if unified == UnifiedRw::Mixed {
        Vec::new()
    } else {
        dirs.iter().map(|&d| Shown::Dir(d)).collect()
    };
    if unified.mixed() {
        out.push(Shown::Mixed);
    }
    out
}

/// A job's results in a shown direction.
pub fn shown_result(job: &JobResult, s: Shown) -> Cow<'_, DirResult> {
    match s {
        Shown::Dir(d) => Cow::Borrowed(job.dir(d)),
        Shown::Mixed => Cow::Owned(job.mixed()),
    }
}

/// The group's aggregate bandwidth in a shown direction, bytes/s (0
/// without a group).
pub fn group_agg(run: &RunResult, job: &JobResult, s: Shown) -> u64 {
    group(run, job).map_or(0, |g| match s {
        Shown::Dir(d) => g.dirs[d as usize].agg_bw_bytes,
        Shown::Mixed => g.mixed.agg_bw_bytes,
    })
}

/// fio's "issued rwts" counts (issued, short, dropped per direction): with
/// `unified_rw_reporting=mixed` all of them in the first place.
pub fn issued_rwts(job: &JobResult) -> [[u64; 3]; 3] {
    let d = &job.dirs;
    let mut rows = [
        job.issued,
        [d[0].short_ios, d[1].short_ios, d[2].short_ios],
        [d[0].drop_ios, d[1].drop_ios, d[2].drop_ios],
    ];
    if job.setup.unified_rw == UnifiedRw::Mixed {
        for row in rows.iter_mut() {
            *row = [row.iter().sum(), 0, 0];
        }
    }
    rows
}

/// A job's mean sampled bandwidth (KiB/s) as percent of its group's
/// aggregate, as JSON and the normal text show it: the mean is cut to an
/// integer first, and with an aggregate of 1 KiB/s or less the share is
/// 100%. Never above 100.
pub fn agg_share(mean_kib: f64, agg_bytes: u64) -> f64 {
    if agg_bytes <= 1024 {
        return 100.0;
    }
    let p = (mean_kib as i32) as f64 * 100.0 / (agg_bytes as f64 / 1024.0);
    p.min(100.0)
}

/// The same share as terse prints it: the mean is not cut, the aggregate
/// is in whole KiB/s.
pub fn agg_share_terse(mean_kib: f64, agg_bytes: u64) -> f64 {
    if agg_bytes == 0 {
        return 100.0;
    }
    let p = mean_kib * 100.0 / (agg_bytes / 1024) as f64;
    p.min(100.0)
}

/// The job's percentiles of `hist`, ascending; empty when the histogram
/// is.
pub fn percentiles(job: &JobResult, hist: &LatHist) -> Vec<(f64, u64)> {
    hist.percentiles(&job.setup.percentile_list)
}

/// The job's percentile list, ascending.
pub fn sorted_list(job: &JobResult) -> Vec<f64> {
    let mut l = job.setup.percentile_list.clone();
    l.sort_by(|a, b| a.total_cmp(b));
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_apply_to_tiny_non_zero_shares() {
        assert_eq!(
            percents(&[1, 0, 2047], 2048, 0.1),
            vec![0.1, 0.0, 99.951171875]
        );
        assert!((percents(&[1, 4095], 4096, 0.01)[0] - 0.0244140625).abs() < 1e-15);
        assert_eq!(percents(&[1, 99_999], 100_000, 0.01)[0], 0.01);
        assert_eq!(percents(&[3, 4], 0, 0.1), vec![0.0, 0.0]);
    }

    #[test]
    fn shares_of_the_group() {
        // fio 3.33, null engine: mean 142178645.333333 KiB/s, agg
        // 146621816131 B/s -> 99.296910%.
        let p = agg_share(142178645.333333, 146621816131);
        assert_eq!(crate::units::f6(p), "99.296910");
        assert_eq!(agg_share(146283.0, 148_000_000), 100.0);
        assert_eq!(agg_share(5.0, 1000), 100.0);
    }
}
