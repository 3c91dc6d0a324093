//! Page cache: a buffered job whose bytes the device did not see, whose
//! writes were still in memory when it ended, or that had no device to
//! check and a working set that fits in memory.

use iolab_engine::SyncMode;
use iolab_stats::{CausedIo, Dir, DiskResult, JobResult};

use super::devices::{is_memory_fs, nearest_existing, Devices};
use super::samples::{io_busy_pct, BUSY_PCT};
use super::Warning;
use crate::plan::{Plan, PlanJob};
use crate::probe::resolve_existing;

/// Below this many bytes a job's share of a device is too small to judge.
const JUDGE_BYTES: u64 = 8 << 20;

/// A buffered write job that ends with at least this share of its writes
/// still in memory measured memory: with a quarter of the data not on the
/// device, the bandwidth is a third above what the device did, or more.
const UNFLUSHED_SHARE: f64 = 0.25;

/// Page cache: a buffered job whose bytes the device did not see, or that
/// ended with its writes still in memory, or with no device to check and
/// a working set that fits in memory.
pub(super) fn page_cache(
    plan: &Plan,
    job: &JobResult,
    pj: &PlanJob,
    disks: &[&DiskResult],
    devices: &Devices,
    out: &mut Vec<Warning>,
) {
    // A character device (/dev/null, /dev/zero) has no page cache.
    let devices_only =
        !pj.files.is_empty() && pj.files.iter().all(|f| plan.files[f.file].char_device);
    if pj.direct || devices_only {
        return;
    }
    let b = Buffered::of(plan, job, pj);
    let mut judged = b.left_in_memory(out);
    // The job's own accounting, where the kernel keeps it and the files
    // are on block devices (whose reads it counts).
    let caused = job
        .caused_io
        .filter(|_| !disks.is_empty() && !b.in_memory_fs);
    if let Some(c) = caused {
        b.own_io(c, &mut judged, out);
    }
    b.device_counts(disks, devices, caused.is_some(), &judged, out);
    if disks.is_empty() {
        b.no_device(&judged, out);
    }
}

/// A buffered job's figures, as the page-cache checks read them.
struct Buffered<'a> {
    job: &'a JobResult,
    reads: u64,
    writes: u64,
    /// What the job works on: its files' ranges.
    working_set: u64,
    /// Any sync: fsync=N, fdatasync=N, O_SYNC or end_fsync.
    synced: bool,
    /// Synced at the end only: syncs now and then (fsync=N, O_SYNC) keep
    /// the rewrites honest; one at the end does not.
    synced_once: bool,
    /// The filesystem of its first file ("" when unknown).
    fs: String,
    in_memory_fs: bool,
}

/// What the checks so far decided, which the later ones defer to.
#[derive(Default)]
struct Judged {
    /// The writes still dirty at the job's end are known.
    unflushed_known: bool,
    /// A warning already says the writes measured memory.
    warned: bool,
}

impl<'a> Buffered<'a> {
    fn of(plan: &Plan, job: &'a JobResult, pj: &PlanJob) -> Self {
        // A sync flushes what is dirty, but a job that wrote its blocks
        // over and over (time_based on a small file) rewrote them in
        // memory: the device saw each block once, whatever the job
        // reports.
        let synced = pj.end_fsync || pj.fsync > 0 || pj.fdatasync > 0 || pj.sync != SyncMode::None;
        let synced_once = synced && pj.fsync == 0 && pj.fdatasync == 0 && pj.sync == SyncMode::None;
        let fs = pj
            .files
            .first()
            .and_then(|f| {
                let path = resolve_existing(&plan.files[f.file].path);
                iolab_engine::file::fs_type(&nearest_existing(&path)).ok()
            })
            .map(|t| t.name().to_string())
            .unwrap_or_default();
        Buffered {
            job,
            reads: job.dirs[Dir::Read as usize].io_bytes,
            writes: job.dirs[Dir::Write as usize].io_bytes,
            working_set: pj.files.iter().map(|f| f.len).sum(),
            synced,
            synced_once,
            in_memory_fs: is_memory_fs(&fs),
            fs,
        }
    }

    fn name(&self) -> String {
        self.job.name.clone()
    }

    /// What the writes left in memory when the job ended, and whether the
    /// threads doing its writes ever waited for the device: not what the device counted over
    /// the run, which background writeback of earlier runs inflates and a
    /// sync by someone else deflates.
    fn left_in_memory(&self, out: &mut Vec<Warning>) -> Judged {
        let (writes, working_set) = (self.writes, self.working_set);
        let mut judged = Judged::default();
        if self.synced_once
            && writes >= JUDGE_BYTES
            && working_set > 0
            && writes > working_set + working_set / 8
        {
            out.push(Warning::RewrittenInMemory {
                job: self.name(),
                times: writes as f64 / working_set as f64,
                working_set_mib: working_set >> 20,
            });
            judged.warned = true;
        }
        if writes < JUDGE_BYTES || self.in_memory_fs || judged.warned {
            return judged;
        }
        if let Some(u) = self.job.unflushed_bytes {
            judged.unflushed_known = true;
            let u = u.min(writes);
            if u as f64 >= UNFLUSHED_SHARE * writes as f64 {
                out.push(Warning::UnflushedWrites {
                    job: self.name(),
                    pct: 100.0 * u as f64 / writes as f64,
                    mib: u >> 20,
                });
                judged.warned = true;
            }
        }
        // Its own thread's time and that of the io_uring workers doing
        // its writes: the job's thread alone sleeps while they work.
        let busy = io_busy_pct(self.job);
        if !judged.warned && !self.synced && busy.is_some_and(|b| b >= BUSY_PCT) {
            out.push(Warning::UnwaitedWrites {
                job: self.name(),
                busy_pct: busy.unwrap_or(0.0).min(100.0),
            });
            judged.warned = true;
        }
        judged
    }

    /// What the job's threads had the storage read and write, which no
    /// neighbour on the same device adds to. Reads it did not cause came
    /// from memory; bytes written that it did not hand on rewrote blocks
    /// still dirty in memory.
    fn own_io(&self, c: CausedIo, judged: &mut Judged, out: &mut Vec<Warning>) {
        let (reads, writes) = (self.reads, self.writes);
        if reads >= JUDGE_BYTES && (c.read_bytes as f64) < 0.5 * reads as f64 {
            out.push(Warning::FromMemory {
                job: self.name(),
                what: "reads",
                caused_pct: 100.0 * c.read_bytes as f64 / reads as f64,
            });
        }
        if writes >= JUDGE_BYTES && !judged.warned && (c.write_bytes as f64) < 0.5 * writes as f64 {
            out.push(Warning::FromMemory {
                job: self.name(),
                what: "writes",
                caused_pct: 100.0 * c.write_bytes as f64 / writes as f64,
            });
            judged.warned = true;
        }
    }

    /// The devices' own counters against what the run asked of them,
    /// where the job's own count does not tell (`caused`: it does).
    fn device_counts(
        &self,
        disks: &[&DiskResult],
        devices: &Devices,
        caused: bool,
        judged: &Judged,
        out: &mut Vec<Warning>,
    ) {
        let (reads, writes) = (self.reads, self.writes);
        for disk in disks {
            let a = devices.asked(&disk.name);
            if !caused && reads >= JUDGE_BYTES && (disk.read_bytes as f64) < 0.5 * a[0] as f64 {
                out.push(Warning::PageCache {
                    job: self.name(),
                    what: "reads",
                    device: disk.name.clone(),
                    seen_pct: 100.0 * disk.read_bytes as f64 / a[0].max(1) as f64,
                });
            }
            let seen = disk.write_bytes.saturating_sub(devices.laid(&disk.name));
            // Buffered writes: what the device wrote over the run, where
            // neither the job's dirty pages at its end nor its own count
            // tells.
            let told = judged.unflushed_known && caused;
            if writes >= JUDGE_BYTES
                && !self.synced
                && !judged.warned
                && !told
                && (seen as f64) < 0.5 * a[1] as f64
            {
                out.push(Warning::PageCache {
                    job: self.name(),
                    what: "writes",
                    device: disk.name.clone(),
                    seen_pct: 100.0 * seen as f64 / a[1].max(1) as f64,
                });
            }
        }
    }

    /// No device to check: a working set that fits in memory was likely
    /// served by it, unless the job only wrote and its writes are known to
    /// have left memory (synced, or found flushed).
    fn no_device(&self, judged: &Judged, out: &mut Vec<Warning>) {
        let moved = self.reads + self.writes;
        let memory = iolab_engine::host::physical_memory();
        let writes_left = self.reads == 0 && (self.synced || judged.unflushed_known);
        let fits = self.working_set < memory / 2 && !writes_left;
        if !judged.warned && moved >= JUDGE_BYTES && (self.in_memory_fs || fits) {
            out.push(Warning::InMemory {
                job: self.name(),
                fs: self.fs.clone(),
                bytes: self.working_set,
                memory,
            });
        }
    }
}
