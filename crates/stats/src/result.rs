//! The result model: what a run measured, per job clone and per reporting
//! group, in fio's terms. Workers fill `JobResult`s; the run merges them
//! into groups; renderers (fio text, JSON, terse, tables) and the store only
//! read it.

use serde::{Deserialize, Serialize};

use crate::{JobSetup, LatBuckets, LatStat, Moments, UnifiedRw};

/// A data direction, in fio's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    /// fio's JSON key and lower-case name.
    pub fn key(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// What one job clone did in one direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DirResult {
    /// Bytes transferred (after ramp_time).
    pub io_bytes: u64,
    /// I/Os completed.
    pub total_ios: u64,
    /// I/Os that transferred fewer bytes than asked.
    pub short_ios: u64,
    /// I/Os dropped (not issued) by the rate limiter.
    pub drop_ios: u64,
    /// Time this direction was active, in nanoseconds (fio's per-direction
    /// "runtime", reported in ms).
    pub runtime_ns: u64,
    /// Submission latency (asynchronous engines only).
    pub slat: LatStat,
    /// Completion latency.
    pub clat: LatStat,
    /// Total latency, slat + clat.
    pub lat: LatStat,
    /// Bandwidth samples in KiB/s, one per averaging window.
    pub bw_samples: Moments,
    /// The same samples in the order they were taken (for how the
    /// bandwidth changed over the run).
    pub bw_series: Vec<u64>,
    /// IOPS samples, one per averaging window.
    pub iops_samples: Moments,
}

impl DirResult {
    /// Bytes per second over the direction's runtime (fio's headline BW).
    pub fn bw_bytes(&self) -> u64 {
        if self.runtime_ns == 0 {
            0
        } else {
            (self.io_bytes as u128 * 1_000_000_000 / self.runtime_ns as u128) as u64
        }
    }

    /// I/Os per second over the direction's runtime (fio's headline IOPS).
    pub fn iops(&self) -> f64 {
        if self.runtime_ns == 0 {
            0.0
        } else {
            self.total_ios as f64 * 1e9 / self.runtime_ns as f64
        }
    }

    /// Adds another clone's numbers (group reporting): counts and
    /// histograms add, runtimes take the longer, bandwidth and IOPS samples
    /// add up field by field as fio's do.
    pub fn merge(&mut self, o: &DirResult) {
        self.io_bytes += o.io_bytes;
        self.total_ios += o.total_ios;
        self.short_ios += o.short_ios;
        self.drop_ios += o.drop_ios;
        self.runtime_ns = self.runtime_ns.max(o.runtime_ns);
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        self.bw_samples.add_totals(&o.bw_samples);
        self.iops_samples.add_totals(&o.iops_samples);
        // The clones' windows run side by side: the group's bandwidth in
        // a window is their sum, over the windows every clone had.
        if self.bw_series.is_empty() {
            self.bw_series = o.bw_series.clone();
        } else if !o.bw_series.is_empty() {
            self.bw_series.truncate(o.bw_series.len());
            for (a, b) in self.bw_series.iter_mut().zip(&o.bw_series) {
                *a += b;
            }
        }
    }
}

/// CPU use of a job clone's thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuResult {
    pub user_ns: u64,
    pub system_ns: u64,
    /// Time the thread was ready to run but waited for a CPU.
    pub run_delay_ns: u64,
    /// Context switches, voluntary and not.
    pub ctx: u64,
    pub majflt: u64,
    pub minflt: u64,
}

/// fio's I/O depth distributions. `level` counts I/Os by the queue depth
/// they were issued at (buckets 1, 2, 4, 8, 16, 32, >=64); `submit` and
/// `complete` count calls by how many I/Os they carried (0, 4, 8, 16, 32,
/// 64, >=64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DepthDist {
    pub level: [u64; 7],
    pub submit: [u64; 7],
    pub complete: [u64; 7],
}

impl DepthDist {
    /// The `level` bucket of a queue depth: below 2 in the first, then one
    /// per power of two, 64 and above in the last. Computed from the
    /// highest bit set (no chain of comparisons: this runs per I/O).
    #[inline]
    pub fn level_bucket(depth: u32) -> usize {
        ((31 - (depth | 1).leading_zeros()) as usize).min(6)
    }

    /// The `submit`/`complete` bucket of a batch size: 0 alone, 1 to 4,
    /// then one per power of two up to 64, above it the last. From the
    /// bit length of `n - 1` (the power of two at or above `n`).
    #[inline]
    pub fn batch_bucket(n: u32) -> usize {
        if n == 0 {
            return 0;
        }
        let above = 32 - (n - 1).leading_zeros();
        (above.saturating_sub(1) as usize).clamp(1, 6)
    }

    pub fn merge(&mut self, o: &DepthDist) {
        for i in 0..7 {
            self.level[i] += o.level[i];
            self.submit[i] += o.submit[i];
            self.complete[i] += o.complete[i];
        }
    }
}

/// A warning about a job's numbers: a stable code for machines and a text
/// that says what was seen, why it matters and what to do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobWarning {
    pub code: crate::WarningCode,
    pub text: String,
}

/// The first block a verify check rejected, for machines: the same facts
/// as the error text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyFailure {
    pub file: String,
    /// The block's offset in the file and its length.
    pub block_offset: u64,
    pub block_len: u64,
    /// The file offset of the first byte that differs, when it is known.
    pub first_bad_byte: Option<u64>,
    /// The range of header bytes (end excluded) the differing byte is in,
    /// when only that is known.
    pub bad_byte_range: Option<(u64, u64)>,
    /// What was wrong ("bad crc32c checksum of the data").
    pub what: String,
    /// The checksums (or fields) expected and found, hex; empty when none
    /// was compared.
    pub expected: String,
    pub found: String,
    /// Blocks that failed in all.
    pub failed_blocks: u64,
    /// With `verify_dump`: the files the block was written to (as read,
    /// as expected), or why one was not written.
    pub dumped: Vec<String>,
}

/// One job clone's results (or, with group_reporting, a group's merged
/// jobs under the first job's name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobResult {
    pub name: String,
    pub groupid: u32,
    /// The job's description= text.
    pub description: String,
    /// 0, or the errno that stopped the job.
    pub error: i32,
    /// Where the error happened, for the message (file and offset).
    pub error_detail: String,
    /// I/O errors met, those the job went on after (`continue_on_error`)
    /// and the one that stopped it (fio's `total_err`).
    pub total_err: u64,
    /// The errno of the first of them, 0 if none (fio's `first_error`).
    pub first_error: i32,
    /// What the first error means, as strerror(3) says it ("No space
    /// left on device"); empty when there was none.
    pub first_error_text: String,
    /// The options the job text gave, as fio prints them in "job options".
    pub options: Vec<(String, String)>,
    /// How the job was set up, as far as reports echo it.
    pub setup: JobSetup,
    /// The id of the OS thread that ran the job (of the first clone that
    /// started when merged): fio prints its process or thread id as "pid".
    pub pid: u32,
    pub dirs: [DirResult; 3],
    /// fsync/fdatasync latencies (fio's "sync" object).
    pub sync: LatStat,
    /// Wall time the job ran, nanoseconds (fio's job_runtime, in ms). For
    /// merged clones, the sum of theirs, as fio's job_runtime is: CPU use
    /// is reported as CPU time over this.
    pub runtime_ns: u64,
    /// Wall time since the job started, seconds (fio's "elapsed").
    pub elapsed_s: u64,
    pub cpu: CpuResult,
    pub depth: DepthDist,
    /// I/Os issued per direction (fio's "issued rwts").
    pub issued: [u64; 3],
    pub lat_buckets: LatBuckets,
    /// What makes this job's numbers misleading, found after the run.
    pub warnings: Vec<JobWarning>,
    /// The first block verify rejected, if any.
    pub verify_failure: Option<VerifyFailure>,
    /// Bytes of the job's files still in the page cache and not on the
    /// device (dirty or under writeback) when a buffered write job ended;
    /// None when not known (not asked, or no cachestat(2)).
    pub unflushed_bytes: Option<u64>,
    /// What the job's threads caused the storage layer to read and write
    /// while measured (their /proc/thread-self/io): reads the page cache
    /// served are not in it, whatever else used the same device. None
    /// when not known (for merged clones: unless known for every one).
    pub caused_io: Option<CausedIo>,
    /// How many clones this result merges (1 unless group_reporting).
    pub clones: u32,
    /// The queue depth `latency_target` settled on (None without one:
    /// reports then print the job's iodepth, as fio does).
    pub latency_depth: Option<u32>,
    /// Steady-state detection (`steadystate`, `ss_dur`), when the job
    /// asked for it.
    pub steadystate: Option<crate::SteadyResult>,
}

/// Bytes a job's threads had read from and written to storage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CausedIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Nanoseconds the threads doing the job's I/O for it (io_uring's
    /// workers) were on a CPU or ready for one; 0 when the job's own
    /// thread does its I/O.
    pub workers_busy_ns: u64,
}

impl JobResult {
    pub fn dir(&self, d: Dir) -> &DirResult {
        &self.dirs[d as usize]
    }

    /// Whether the job did any I/O: moved a byte or completed an I/O in
    /// some direction.
    pub fn did_io(&self) -> bool {
        self.dirs.iter().any(|d| d.io_bytes > 0 || d.total_ios > 0)
    }

    /// Reads, writes and trims as one direction (fio's "mixed" of
    /// `unified_rw_reporting`): counts and bytes added, latencies merged
    /// as one population, bandwidth and IOPS samples added up field by
    /// field, the longest runtime.
    pub fn mixed(&self) -> DirResult {
        let mut m = self.dirs[0].clone();
        m.merge(&self.dirs[1]);
        m.merge(&self.dirs[2]);
        m
    }

    /// Adds another clone into this one (group_reporting). Job runtimes
    /// add up (fio sums `total_run_time`), direction runtimes take the
    /// longer.
    pub fn merge(&mut self, o: &JobResult) {
        for d in Dir::ALL {
            self.dirs[d as usize].merge(&o.dirs[d as usize]);
        }
        self.sync.merge(&o.sync);
        self.runtime_ns += o.runtime_ns;
        self.elapsed_s = self.elapsed_s.max(o.elapsed_s);
        self.cpu.user_ns += o.cpu.user_ns;
        self.cpu.system_ns += o.cpu.system_ns;
        self.cpu.run_delay_ns += o.cpu.run_delay_ns;
        self.cpu.ctx += o.cpu.ctx;
        self.cpu.majflt += o.cpu.majflt;
        self.cpu.minflt += o.cpu.minflt;
        self.depth.merge(&o.depth);
        for i in 0..3 {
            self.issued[i] += o.issued[i];
        }
        self.lat_buckets.merge(&o.lat_buckets);
        self.clones += o.clones;
        // A clone that never started has no pid: the first one that did
        // names the merged job (under MPI, the rank that failed to lay
        // out its file when no other rank started the job).
        if self.pid == 0 {
            self.pid = o.pid;
        }
        self.total_err += o.total_err;
        if self.first_error == 0 {
            self.first_error = o.first_error;
            self.first_error_text = o.first_error_text.clone();
        }
        if self.error == 0 {
            self.error = o.error;
            self.error_detail = o.error_detail.clone();
        }
        self.caused_io = match (self.caused_io, o.caused_io) {
            (Some(a), Some(b)) => Some(CausedIo {
                read_bytes: a.read_bytes + b.read_bytes,
                write_bytes: a.write_bytes + b.write_bytes,
                workers_busy_ns: a.workers_busy_ns + b.workers_busy_ns,
            }),
            _ => None,
        };
        if let Some(theirs) = o.unflushed_bytes {
            *self.unflushed_bytes.get_or_insert(0) += theirs;
        }
        // fio reports the last clone's depth and its group's detection.
        if o.latency_depth.is_some() {
            self.latency_depth = o.latency_depth;
        }
        if o.steadystate.is_some() {
            self.steadystate = o.steadystate.clone();
        }
        match (&mut self.verify_failure, &o.verify_failure) {
            (Some(mine), Some(theirs)) => mine.failed_blocks += theirs.failed_blocks,
            (None, Some(theirs)) => self.verify_failure = Some(theirs.clone()),
            _ => {}
        }
    }
}

/// A reporting group's totals in one direction ("Run status group N").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate bandwidth: the group's bytes over its longest runtime.
    pub agg_bw_bytes: u64,
    /// Slowest and fastest job's bandwidth, bytes/s.
    pub min_bw_bytes: u64,
    pub max_bw_bytes: u64,
    /// Shortest and longest job runtime in this direction, ns.
    pub min_runtime_ns: u64,
    pub max_runtime_ns: u64,
}

impl GroupDir {
    /// The totals of one direction over the group's jobs: bytes added, the
    /// slowest and fastest job, the shortest and longest runtime, and the
    /// bytes over the longest runtime. Jobs that did nothing there count
    /// for nothing.
    fn over<'a>(dirs: impl Iterator<Item = &'a DirResult>) -> GroupDir {
        Self::combine(
            dirs.filter(|r| r.runtime_ns > 0 || r.io_bytes > 0)
                .map(|r| {
                    let bw = r.bw_bytes();
                    GroupDir {
                        io_bytes: r.io_bytes,
                        agg_bw_bytes: 0,
                        min_bw_bytes: bw,
                        max_bw_bytes: bw,
                        min_runtime_ns: r.runtime_ns,
                        max_runtime_ns: r.runtime_ns,
                    }
                }),
        )
    }

    /// Group lines as one: bytes added, the least of the minimums, the
    /// most of the maximums, and the bytes over the longest runtime.
    fn combine(parts: impl Iterator<Item = GroupDir>) -> GroupDir {
        let mut g: Option<GroupDir> = None;
        for p in parts {
            g = Some(match g {
                None => p,
                Some(g) => GroupDir {
                    io_bytes: g.io_bytes + p.io_bytes,
                    agg_bw_bytes: 0,
                    min_bw_bytes: g.min_bw_bytes.min(p.min_bw_bytes),
                    max_bw_bytes: g.max_bw_bytes.max(p.max_bw_bytes),
                    min_runtime_ns: g.min_runtime_ns.min(p.min_runtime_ns),
                    max_runtime_ns: g.max_runtime_ns.max(p.max_runtime_ns),
                },
            });
        }
        let mut g = g.unwrap_or_default();
        if g.max_runtime_ns > 0 {
            g.agg_bw_bytes = (g.io_bytes as u128 * 1_000_000_000 / g.max_runtime_ns as u128) as u64;
        }
        g
    }
}

/// A reporting group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupResult {
    pub groupid: u32,
    pub dirs: [GroupDir; 3],
    /// The first job's `unified_rw_reporting`, which decides the lines
    /// reported.
    pub unified_rw: UnifiedRw,
    /// The "MIXED" line of `unified_rw_reporting`: with `mixed`, over each
    /// job's directions summed; with `both`, the three lines above as one
    /// (fio 3.33 computes them so). Empty without unified reporting.
    pub mixed: GroupDir,
}

impl GroupResult {
    /// The group totals of jobs (each one clone, not yet merged). The
    /// first job's `unified_rw_reporting` decides the mixed line.
    pub fn from_jobs<'a>(groupid: u32, jobs: impl Iterator<Item = &'a JobResult> + Clone) -> Self {
        let dirs = Dir::ALL.map(|d| GroupDir::over(jobs.clone().map(|j| j.dir(d))));
        let unified_rw = jobs
            .clone()
            .next()
            .map(|j| j.setup.unified_rw)
            .unwrap_or_default();
        let mixed = match unified_rw {
            UnifiedRw::None => GroupDir::default(),
            UnifiedRw::Mixed => {
                let mixed: Vec<DirResult> = jobs.map(JobResult::mixed).collect();
                GroupDir::over(mixed.iter())
            }
            UnifiedRw::Both => GroupDir::combine(
                dirs.iter()
                    .copied()
                    .filter(|g| g.max_runtime_ns > 0 || g.io_bytes > 0),
            ),
        };
        GroupResult {
            groupid,
            dirs,
            unified_rw,
            mixed,
        }
    }
}

/// Block-device statistics over the run ("Disk stats" / "disk_util").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskResult {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    /// Bytes the device read and wrote (sectors of 512 bytes).
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    pub in_queue_ms: u64,
    /// Percent of the run the device was busy.
    pub util: f64,
}

/// Everything one run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunResult {
    /// Seconds since the epoch when the run ended.
    pub timestamp: u64,
    pub timestamp_ms: u64,
    /// The jobs as reported: one per clone, or one per group with
    /// group_reporting.
    pub jobs: Vec<JobResult>,
    pub groups: Vec<GroupResult>,
    pub disks: Vec<DiskResult>,
    /// The run was stopped by Ctrl-C; the numbers are partial.
    pub interrupted: bool,
    /// Options common to all jobs, as fio prints "global options".
    pub global_options: Vec<(String, String)>,
    /// Job clones that ran with `stats=0` and without group_reporting:
    /// left out of `jobs` and `groups`, but fio lists an empty entry for
    /// each in its JSON and terse output. The elapsed seconds of each.
    pub stats_off: Vec<u64>,
    /// A run over many processes (MPI ranks) merged into one: its ranks,
    /// hosts and aggregate figures. None for a run of one process.
    pub ranks: Option<crate::ranks::RanksSummary>,
}

impl RunResult {
    /// Whether any job reported did I/O; a run in which none did measured
    /// nothing (its files could not be made or opened, say).
    pub fn did_io(&self) -> bool {
        self.jobs.iter().any(JobResult::did_io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_did_io_when_any_job_moved_data_or_completed_an_io() {
        let mut run = RunResult {
            jobs: vec![JobResult::default(), JobResult::default()],
            ..Default::default()
        };
        assert!(!run.did_io());
        run.jobs[1].dirs[Dir::Write as usize].total_ios = 1;
        assert!(run.jobs[1].did_io() && !run.jobs[0].did_io());
        assert!(run.did_io());
        run.jobs[1].dirs[Dir::Write as usize].total_ios = 0;
        run.jobs[0].dirs[Dir::Trim as usize].io_bytes = 4096;
        assert!(run.did_io());
        assert!(!RunResult::default().did_io());
    }

    fn dir(bytes: u64, ios: u64, ms: u64) -> DirResult {
        DirResult {
            io_bytes: bytes,
            total_ios: ios,
            runtime_ns: ms * 1_000_000,
            ..Default::default()
        }
    }

    #[test]
    fn headline_bw_and_iops_are_totals_over_runtime() {
        let d = dir(1 << 20, 256, 500);
        assert_eq!(d.bw_bytes(), 2 << 20);
        assert!((d.iops() - 512.0).abs() < 1e-9);
        assert_eq!(dir(5, 1, 0).bw_bytes(), 0);
    }

    #[test]
    fn group_totals_over_jobs() {
        let mut a = JobResult::default();
        a.dirs[0] = dir(100 << 20, 100, 1000);
        let mut b = JobResult::default();
        b.dirs[0] = dir(300 << 20, 300, 2000);
        let g = GroupResult::from_jobs(0, [&a, &b].into_iter());
        let r = g.dirs[0];
        assert_eq!(r.io_bytes, 400 << 20);
        assert_eq!(r.agg_bw_bytes, 200 << 20, "400 MiB over the longest 2 s");
        assert_eq!(r.min_bw_bytes, 100 << 20);
        assert_eq!(r.max_bw_bytes, 150 << 20);
        assert_eq!(
            (r.min_runtime_ns, r.max_runtime_ns),
            (1_000_000_000, 2_000_000_000)
        );
        assert_eq!(g.dirs[1], GroupDir::default(), "no writes");
    }

    #[test]
    fn merging_clones_adds_counts_and_keeps_the_longest_runtime() {
        let mut a = JobResult {
            clones: 1,
            runtime_ns: 30_000_000,
            ..Default::default()
        };
        a.dirs[1] = dir(4096, 1, 10);
        a.dirs[1].clat.record(1000);
        let mut b = a.clone();
        b.dirs[1].runtime_ns = 20_000_000;
        b.runtime_ns = 29_000_000;
        b.error = 5;
        b.total_err = 3;
        b.first_error = 5;
        b.first_error_text = "Input/output error".into();
        a.merge(&b);
        assert_eq!((a.total_err, a.first_error), (3, 5));
        assert_eq!(a.clones, 2);
        assert_eq!(a.dirs[1].total_ios, 2);
        assert_eq!(a.dirs[1].clat.count(), 2);
        assert_eq!(a.dirs[1].runtime_ns, 20_000_000);
        assert_eq!(a.runtime_ns, 59_000_000, "job runtimes add up, as fio's");
        assert_eq!(a.error, 5);
    }

    #[test]
    fn merged_clones_add_their_caused_io_only_when_every_one_is_known() {
        let io = |r, w| {
            Some(CausedIo {
                read_bytes: r,
                write_bytes: w,
                workers_busy_ns: r + w,
            })
        };
        let mut a = JobResult {
            caused_io: io(1, 2),
            ..Default::default()
        };
        let b = JobResult {
            caused_io: io(10, 20),
            ..Default::default()
        };
        a.merge(&b);
        assert_eq!(a.caused_io, io(11, 22));
        a.merge(&JobResult::default());
        assert_eq!(a.caused_io, None);
    }

    #[test]
    fn merged_clones_add_their_sample_windows_and_unflushed_bytes() {
        let mut a = JobResult::default();
        a.dirs[1].bw_series = vec![100, 200, 300];
        a.unflushed_bytes = Some(4096);
        let mut b = JobResult::default();
        b.dirs[1].bw_series = vec![10, 20];
        b.unflushed_bytes = Some(1);
        a.merge(&b);
        // Only the windows both clones had.
        assert_eq!(a.dirs[1].bw_series, [110, 220]);
        assert_eq!(a.unflushed_bytes, Some(4097));
        a.merge(&JobResult::default());
        assert_eq!(
            a.dirs[1].bw_series,
            [110, 220],
            "a direction it did not use"
        );
        assert_eq!(a.unflushed_bytes, Some(4097));
    }

    #[test]
    fn mixed_sums_the_directions() {
        let mut j = JobResult::default();
        j.dirs[0] = dir(400 << 10, 100, 2000);
        j.dirs[1] = dir(200 << 10, 50, 1990);
        for v in [100, 300] {
            j.dirs[0].clat.record(v);
        }
        j.dirs[1].clat.record(1100);
        for (r, w) in [(400, 200), (408, 199), (399, 208)] {
            j.dirs[0].bw_samples.record(r);
            j.dirs[1].bw_samples.record(w);
        }
        let m = j.mixed();
        assert_eq!((m.io_bytes, m.total_ios), (600 << 10, 150));
        assert_eq!(m.runtime_ns, 2_000_000_000, "the longest");
        // Latencies: one population of the three samples.
        assert_eq!(m.clat.count(), 3);
        assert_eq!(m.clat.moments.mean(), 500.0);
        assert_eq!(m.clat.moments.max(), Some(1100));
        // Samples: added up field by field, as fio 3.33 shows them
        // (mixed bw_min = read's min + write's min, six samples).
        let b = &m.bw_samples;
        assert_eq!((b.min(), b.max(), b.count()), (Some(598), Some(616), 6));
        assert!((b.mean() - 604.666_666).abs() < 1e-5);
    }

    #[test]
    fn the_mixed_group_line_of_each_mode() {
        // fio 3.33, two randrw jobs at 400/200 and 160/80 KiB/s for 2 s:
        // "mixed" gives MIXED 242-600 KiB/s (each job's sum), "both"
        // gives 80-400 KiB/s (the READ and WRITE lines as one).
        let job = |r: u64, w: u64, unified| {
            let mut j = JobResult::default();
            j.dirs[0] = dir(r << 11, r / 2, 2000);
            j.dirs[1] = dir(w << 11, w / 2, 2000);
            j.setup.unified_rw = unified;
            j
        };
        for (mode, lo, hi) in [(UnifiedRw::Mixed, 240, 600), (UnifiedRw::Both, 80, 400)] {
            let jobs = [job(400, 200, mode), job(160, 80, mode)];
            let g = GroupResult::from_jobs(0, jobs.iter());
            let m = g.mixed;
            assert_eq!(
                (m.min_bw_bytes >> 10, m.max_bw_bytes >> 10),
                (lo, hi),
                "{mode:?}"
            );
            assert_eq!(m.io_bytes, 840 << 11);
            assert_eq!(m.agg_bw_bytes >> 10, 840);
            assert_eq!(
                (m.min_runtime_ns, m.max_runtime_ns),
                (2_000_000_000, 2_000_000_000)
            );
            assert_eq!(
                g.dirs[0].io_bytes,
                560 << 11,
                "the per-direction lines stay"
            );
        }
        let jobs = [job(400, 200, UnifiedRw::None)];
        let g = GroupResult::from_jobs(0, jobs.iter());
        assert_eq!(
            (g.unified_rw, g.mixed),
            (UnifiedRw::None, GroupDir::default())
        );
    }

    #[test]
    fn depth_buckets() {
        let levels: Vec<usize> = [1, 2, 3, 4, 8, 16, 31, 32, 64, 128]
            .iter()
            .map(|&d| DepthDist::level_bucket(d))
            .collect();
        assert_eq!(levels, [0, 1, 1, 2, 3, 4, 4, 5, 6, 6]);
        let batches: Vec<usize> = [0, 1, 4, 5, 8, 9, 32, 33, 64, 65]
            .iter()
            .map(|&n| DepthDist::batch_bucket(n))
            .collect();
        assert_eq!(batches, [0, 1, 1, 2, 2, 3, 4, 5, 5, 6]);
    }

    /// The buckets as fio's ranges say them, for every depth and batch up
    /// to past the last bucket, and the largest.
    #[test]
    fn depth_buckets_are_the_ranges() {
        let level = |d: u32| match d {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        let batch = |n: u32| match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        for n in (0..=300).chain([u32::MAX / 2, u32::MAX - 1, u32::MAX]) {
            assert_eq!(DepthDist::level_bucket(n), level(n), "depth {n}");
            assert_eq!(DepthDist::batch_bucket(n), batch(n), "batch {n}");
        }
    }
}
