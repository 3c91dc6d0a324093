//! Warnings: when a number will not measure what it looks like. One enum,
//! each variant saying what was seen, why it matters and what to do. Some
//! are known from the plan (a queue depth the engine cannot reach); the
//! rest from what the run saw: what a buffered write job left dirty in
//! the page cache when it ended, what its own threads had the storage
//! read and write (/proc/thread-self/io, which a neighbour on the same
//! device does not touch) against its bytes (page cache), the device's
//! counters against the job's bytes (others on the device, and page cache
//! where the kernel keeps no per-thread count), loop devices whose backing
//! file is in memory or cached by the host (`loopback`, judged before the
//! jobs start), what the filesystem stored compressed (btrfs extents,
//! judged before the files are removed) or else the mount's options and
//! the devices under it against the data (compression), holes in what
//! was read (sparse reads), and the job's own samples and CPU time (short,
//! unstable or faster at first, CPU-bound). Jobs whose engine moves no
//! data to their files (null, the file-operation engines) get none of the
//! device-based ones. Each lands in the job's result with a stable code,
//! so the normal output prints it after the job and the JSON carries it
//! under "iolab" -> "warnings".

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use iolab_engine::{EngineKind, SyncMode};
use iolab_stats::{Dir, JobResult, JobWarning, RunResult, WarningCode};

use crate::compressing::compressing_under;
use crate::diskstats::disks_of;
use crate::plan::{Layout, Plan, PlanJob};
use crate::probe::{mount_of, parse_mountinfo, resolve_existing};

/// Something about a job that makes its numbers misleading.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// iodepth above 1 that the engine cannot reach.
    QueueDepthNotReached {
        job: String,
        engine: EngineKind,
        iodepth: u32,
        why: &'static str,
        fix: &'static str,
    },
    /// Buffered I/O the device hardly saw: it was served by memory.
    PageCache {
        job: String,
        /// "writes" or "reads".
        what: &'static str,
        device: String,
        /// Share of the job's bytes the device moved, percent.
        seen_pct: f64,
    },
    /// I/O the job's own threads did not cause the storage to do (their
    /// /proc/thread-self/io): reads served by the page cache, or writes
    /// that rewrote blocks still in memory.
    FromMemory {
        job: String,
        /// "reads" or "writes".
        what: &'static str,
        /// Share of the job's bytes its threads had the storage move,
        /// percent.
        caused_pct: f64,
    },
    /// A loop device under the job's files whose backing file lives in
    /// memory (tmpfs, ramfs).
    LoopInMemory {
        job: String,
        device: String,
        backing: String,
        fs: String,
    },
    /// A loop device under a reading job's files that reads its backing
    /// file through the host's page cache (no direct I/O), with much of
    /// that file already there.
    LoopCached {
        job: String,
        device: String,
        backing: String,
        cached_mib: u64,
        /// Of what the job works on (or of the backing file, if smaller),
        /// percent.
        pct: f64,
        /// None: cached as the job started. Some(times): found cached at
        /// its end, the job having read its range this many times over.
        reread: Option<f64>,
    },
    /// Buffered writes still in memory, not on the device, when the job
    /// ended.
    UnflushedWrites {
        job: String,
        /// Of the job's writes, percent.
        pct: f64,
        mib: u64,
    },
    /// Buffered writes during which the job's thread never waited for the
    /// device: memory took them, whatever wrote them back meanwhile.
    UnwaitedWrites {
        job: String,
        /// On a CPU or ready for one, percent of the run.
        busy_pct: f64,
    },
    /// A synced buffered write job that wrote its blocks several times
    /// over (time_based on a file smaller than what it moved): rewrites
    /// of a dirty block stay in memory, and the sync wrote each block
    /// once.
    RewrittenInMemory {
        job: String,
        /// How many times over the job wrote its files.
        times: f64,
        working_set_mib: u64,
    },
    /// Buffered I/O with no device to watch on a working set that fits in
    /// memory, or on a filesystem that lives in memory (tmpfs).
    InMemory {
        job: String,
        /// The filesystem ("overlayfs", "tmpfs").
        fs: String,
        bytes: u64,
        memory: u64,
    },
    /// Data a compressing filesystem stored compressed: measured from the
    /// file's extents where the filesystem says (btrfs), else expected
    /// from compressible data written to it.
    Compression {
        job: String,
        fs: String,
        option: String,
        /// What the job wrote that compresses, if that is known.
        data: Option<&'static str>,
        /// Of the data in the job's files, percent stored compressed;
        /// None where the filesystem does not say.
        stored_pct: Option<f64>,
    },
    /// Compressible data written to a device that compresses.
    CompressingDevice {
        job: String,
        device: String,
        what: String,
        data: &'static str,
    },
    /// Reads of ranges never written: holes return zeros without I/O.
    SparseReads {
        job: String,
        file: String,
        hole_pct: f64,
    },
    /// Too few bandwidth samples for their min, max and stdev to mean much.
    ShortRun { job: String, samples: u64 },
    /// Bandwidth samples that vary a lot within the run.
    Unstable { job: String, cv_pct: f64 },
    /// The first part of the run much faster than the rest: a cache
    /// filling (or emptying) before the storage's own speed shows.
    FastStart {
        job: String,
        /// The first samples' mean over the rest's median.
        ratio: f64,
        /// How long the fast part lasted, and so the ramp_time to skip it.
        secs: f64,
    },
    /// The device did much more I/O than the run asked of it.
    OthersOnDevice {
        job: String,
        device: String,
        device_mib: u64,
        job_mib: u64,
    },
    /// The job's thread was on a CPU, or ready and waiting for one, nearly
    /// all the time: it never waited for the storage.
    CpuBound {
        job: String,
        /// On a CPU or waiting for one, percent of the run.
        busy_pct: f64,
        /// On a CPU, percent of the run.
        cpu_pct: f64,
    },
}

impl Warning {
    /// A stable code for machines.
    pub fn code(&self) -> WarningCode {
        match self {
            Warning::QueueDepthNotReached { .. } => WarningCode::QueueDepthNotReached,
            Warning::PageCache { .. }
            | Warning::FromMemory { .. }
            | Warning::LoopInMemory { .. }
            | Warning::LoopCached { .. }
            | Warning::UnflushedWrites { .. }
            | Warning::UnwaitedWrites { .. }
            | Warning::RewrittenInMemory { .. }
            | Warning::InMemory { .. } => WarningCode::PageCache,
            Warning::Compression { .. } | Warning::CompressingDevice { .. } => {
                WarningCode::Compression
            }
            Warning::SparseReads { .. } => WarningCode::SparseReads,
            Warning::ShortRun { .. } => WarningCode::ShortRun,
            Warning::Unstable { .. } | Warning::FastStart { .. } => WarningCode::Unstable,
            Warning::OthersOnDevice { .. } => WarningCode::OthersOnDevice,
            Warning::CpuBound { .. } => WarningCode::CpuBound,
        }
    }

    /// The job the warning is about.
    pub fn job(&self) -> &str {
        match self {
            Warning::QueueDepthNotReached { job, .. }
            | Warning::PageCache { job, .. }
            | Warning::FromMemory { job, .. }
            | Warning::LoopInMemory { job, .. }
            | Warning::LoopCached { job, .. }
            | Warning::UnflushedWrites { job, .. }
            | Warning::UnwaitedWrites { job, .. }
            | Warning::RewrittenInMemory { job, .. }
            | Warning::InMemory { job, .. }
            | Warning::Compression { job, .. }
            | Warning::CompressingDevice { job, .. }
            | Warning::SparseReads { job, .. }
            | Warning::ShortRun { job, .. }
            | Warning::Unstable { job, .. }
            | Warning::FastStart { job, .. }
            | Warning::OthersOnDevice { job, .. }
            | Warning::CpuBound { job, .. } => job,
        }
    }

    /// As the result model keeps it.
    pub fn to_job_warning(&self) -> JobWarning {
        JobWarning {
            code: self.code(),
            text: self.to_string(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::QueueDepthNotReached {
                job,
                engine,
                iodepth,
                why,
                fix,
            } => write!(
                f,
                "job `{job}`: iodepth={iodepth} will not be reached with ioengine={engine}: {why}; {fix}"
            ),
            Warning::PageCache { job, what, device, seen_pct } => write!(
                f,
                "job `{job}`: the device {device} saw {seen_pct:.0}% of the {what}; this measured \
                 memory (the page cache), not the device: use direct=1{}, or a size above twice the memory",
                if *what == "writes" { ", end_fsync=1" } else { "" }
            ),
            Warning::FromMemory { job, what: "reads", caused_pct } => write!(
                f,
                "job `{job}`: its threads had the storage read {caused_pct:.0}% of the bytes they \
                 read (the kernel's count of the job's own I/O); the rest came from memory (the \
                 page cache), so this measured memory, not the device: use direct=1, or a size \
                 above twice the memory"
            ),
            Warning::FromMemory { job, caused_pct, .. } => write!(
                f,
                "job `{job}`: its threads had the storage write {caused_pct:.0}% of the bytes they \
                 wrote (the kernel's count of the job's own I/O); the rest rewrote blocks still in \
                 memory (the page cache), so this measured memory, not the device: use direct=1, \
                 or a size above twice the memory"
            ),
            Warning::LoopInMemory { job, device, backing, fs } => write!(
                f,
                "job `{job}`: its files are on the loop device {device}, whose backing file \
                 `{backing}` is on {fs}, which keeps it in memory: the numbers are memory's, not a \
                 storage device's; put the image on the disk you mean to measure"
            ),
            Warning::LoopCached {
                job,
                device,
                backing,
                cached_mib,
                pct,
                reread: Some(times),
            } => write!(
                f,
                "job `{job}`: its files are on the loop device {device}, which reads its backing \
                 file `{backing}` through the host's page cache (no direct I/O); the job read \
                 what it works on {times:.1} times over, and by its end {cached_mib} MiB of it \
                 ({pct:.0}%) was in that cache: the reads after the first pass came from memory, \
                 direct=1 notwithstanding, not from the disk under the file; attach the image \
                 with `losetup --direct-io=on`, or read each block once (no time_based, or a \
                 larger size)"
            ),
            Warning::LoopCached {
                job,
                device,
                backing,
                cached_mib,
                pct,
                reread: None,
            } => write!(
                f,
                "job `{job}`: its files are on the loop device {device}, which reads its backing \
                 file `{backing}` through the host's page cache (no direct I/O), and {cached_mib} \
                 MiB of that file ({pct:.0}% of what the job reads) is in memory: those reads \
                 come from memory, direct=1 notwithstanding, not from the disk under the file; \
                 attach the image with `losetup --direct-io=on`, or drop its cache first \
                 (`dd if={backing} iflag=nocache count=0`)"
            ),
            Warning::UnflushedWrites { job, pct, mib } => write!(
                f,
                "job `{job}`: {pct:.0}% of its writes ({mib} MiB) were still in the page cache, \
                 not on the device, when it ended; this measured memory, not the device: use \
                 direct=1, end_fsync=1, or a size above twice the memory"
            ),
            Warning::UnwaitedWrites { job, busy_pct } => write!(
                f,
                "job `{job}`: its thread hardly ever waited for the device (on a CPU or ready for \
                 one {busy_pct:.0}% of the run): its buffered writes went to memory, the page \
                 cache, and reached the device later or alongside; this measured memory, not the \
                 device: use direct=1, end_fsync=1, or a size above twice the memory"
            ),
            Warning::RewrittenInMemory {
                job,
                times,
                working_set_mib,
            } => write!(
                f,
                "job `{job}`: it wrote its {working_set_mib} MiB {times:.1} times over; rewrites of \
                 a block not yet on the device stay in memory, and the sync wrote each block once: \
                 this measured memory, not the device: drop time_based so the job writes its \
                 files once, or use direct=1"
            ),
            Warning::InMemory { job, fs, .. } if is_memory_fs(fs) => write!(
                f,
                "job `{job}`: its files are on {fs}, which keeps them in memory: the numbers are \
                 memory's, not a storage device's; run it on the filesystem you mean to measure"
            ),
            Warning::InMemory { job, fs, bytes, memory } => write!(
                f,
                "job `{job}`: buffered I/O on {} MiB, which fits in memory ({} MiB), on {fs} with \
                 no device to check: the numbers are likely the page cache's; use direct=1 or a \
                 size above twice the memory",
                bytes >> 20,
                memory >> 20
            ),
            Warning::Compression {
                job,
                fs,
                option,
                data,
                stored_pct: Some(pct),
            } => write!(
                f,
                "job `{job}`: {pct:.0}% of the data in its files is stored compressed ({fs} \
                 mounted with {option}{}): the filesystem moved less than the job did, so the \
                 bandwidth is inflated; leave the buffer options at their defaults \
                 (incompressible data) to measure the storage",
                data.map(|d| format!("; the job writes {d}")).unwrap_or_default()
            ),
            Warning::Compression {
                job,
                fs,
                option,
                data,
                stored_pct: None,
            } => write!(
                f,
                "job `{job}`: {fs} is mounted with {option} and the job writes {}: the \
                 filesystem likely stores less than it is given, so the bandwidth is inflated; \
                 leave the buffer options at their defaults (incompressible data) to measure the \
                 storage",
                data.unwrap_or("compressible data")
            ),
            Warning::CompressingDevice { job, device, what, data } => write!(
                f,
                "job `{job}`: the device {device} is {what}, which compresses, and the job writes \
                 {data}: it stores less than it is given, so the bandwidth is inflated; leave the \
                 buffer options at their defaults (incompressible data) to measure the storage"
            ),
            Warning::SparseReads { job, file, hole_pct } => write!(
                f,
                "job `{job}`: {hole_pct:.0}% of the range read in `{file}` was never written (holes or \
                 unwritten extents): those reads return zeros without touching the device; write the \
                 file first (a write job, or delete it and let iolab lay it out)"
            ),
            Warning::ShortRun { job, samples } => write!(
                f,
                "job `{job}`: only {samples} bandwidth sample(s) (one per 500 ms): their min, max and \
                 stdev mean little; run for 3 s or more (runtime=, time_based=1)"
            ),
            Warning::Unstable { job, cv_pct } => write!(
                f,
                "job `{job}`: the bandwidth varied by {cv_pct:.0}% (coefficient of variation of its \
                 samples) during the run: a cache filling, background work or throttling; use \
                 ramp_time=, a longer run, and --repeat to see the spread"
            ),
            Warning::FastStart { job, ratio, secs } => write!(
                f,
                "job `{job}`: the first {secs:.1} s of the run were {ratio:.1}x faster than the \
                 rest: a cache filling (the page cache, the device's write cache) before the \
                 storage's own speed showed, and the average mixes both; use ramp_time={} to \
                 measure after it, and a run long enough for the rest to dominate",
                ramp_suggestion(*secs)
            ),
            Warning::OthersOnDevice { job, device, device_mib, job_mib } => write!(
                f,
                "job `{job}`: the device {device} moved {device_mib} MiB while the run moved {job_mib} \
                 MiB: something else used it at the same time, and shared the figures; run on an \
                 idle device"
            ),
            Warning::CpuBound { job, busy_pct, cpu_pct } => write!(
                f,
                "job `{job}`: its thread was on a CPU or waiting for one {busy_pct:.0}% of the run \
                 ({cpu_pct:.0}% on a CPU), hardly ever waiting for the storage: the benchmark \
                 itself, or the CPUs it shares, may be the bottleneck; use numjobs= for more \
                 threads, or a larger bs"
            ),
        }
    }
}

/// The warnings a plan raises before it runs, one per job (not per clone).
pub fn plan_warnings(plan: &Plan) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for job in plan.jobs.iter().filter(|j| j.clone == 0) {
        if job.iodepth <= 1 {
            continue;
        }
        let (why, fix) = match job.engine {
            EngineKind::Libaio if !job.direct => (
                "without direct=1 the kernel completes each I/O inside io_submit, one at a time",
                "use direct=1, or ioengine=io_uring for buffered I/O",
            ),
            e if e.synchronous() => (
                "a synchronous engine has one I/O in flight at a time",
                "use ioengine=io_uring or libaio (with direct=1), or numjobs for parallel I/O",
            ),
            _ => continue,
        };
        out.push(Warning::QueueDepthNotReached {
            job: job.name.clone(),
            engine: job.engine,
            iodepth: job.iodepth,
            why,
            fix,
        });
    }
    out
}

/// Below this many bytes a job's share of a device is too small to judge.
const JUDGE_BYTES: u64 = 8 << 20;

/// Reads the run will make of ranges never written: holes and unwritten
/// extents in files that exist before the run and that no job of the plan
/// writes. Checked before the run: reading an unwritten extent through the
/// page cache makes it look like data afterwards.
pub fn sparse_reads(plan: &Plan) -> Vec<Warning> {
    if !crate::checks::on() {
        return Vec::new();
    }
    let written: Vec<usize> = plan
        .jobs
        .iter()
        .filter(|j| j.rw.mode.writes())
        .flat_map(|j| j.files.iter().map(|f| f.file))
        .collect();
    let mut out = Vec::new();
    for job in plan
        .jobs
        .iter()
        .filter(|j| j.clone == 0 && j.rw.mode.reads())
    {
        for jf in &job.files {
            let pf = &plan.files[jf.file];
            if pf.block_device || pf.layout != Layout::AsIs || written.contains(&jf.file) {
                continue;
            }
            if let Ok(h) = iolab_engine::file::hole_bytes(&pf.path, jf.offset, jf.len) {
                if jf.len > 0 && h > 0 {
                    out.push(Warning::SparseReads {
                        job: job.name.clone(),
                        file: pf.path.display().to_string(),
                        hole_pct: 100.0 * h as f64 / jf.len as f64,
                    });
                    break;
                }
            }
        }
    }
    out
}

/// The warnings a finished run raises, attached to its jobs' results: the
/// plan's own (queue depth), those found before the run (`before`, sparse
/// reads) and those from what the run saw.
pub fn attach_run_warnings(plan: &Plan, before: Vec<Warning>, result: &mut RunResult) {
    let found = run_warnings(plan, result);
    for w in plan_warnings(plan).into_iter().chain(before).chain(found) {
        if let Some(job) = result.jobs.iter_mut().find(|j| j.name == w.job()) {
            let jw = w.to_job_warning();
            if !job.warnings.contains(&jw) {
                job.warnings.push(jw);
            }
        }
    }
}

/// A buffered write job that ends with at least this share of its writes
/// still in memory measured memory: with a quarter of the data not on the
/// device, the bandwidth is a third above what the device did, or more.
const UNFLUSHED_SHARE: f64 = 0.25;

/// The first samples' mean over the rest's median above which the start
/// of a run counts as much faster than the rest.
const FAST_START_RATIO: f64 = 2.0;

/// What the run asked of each device, which every job's checks share.
struct Devices {
    /// Bytes read and written by the jobs whose files are on the device.
    asked: HashMap<String, [u64; 2]>,
    /// Bytes the layout wrote there before the jobs began.
    laid: HashMap<String, u64>,
}

impl Devices {
    fn of(plan: &Plan, result: &RunResult) -> Devices {
        let mut asked: HashMap<String, [u64; 2]> = HashMap::new();
        let mut laid: HashMap<String, u64> = HashMap::new();
        for (pf, disk) in plan.files.iter().map(|f| (f, disk_of(&f.path))) {
            if let (Layout::Write, Some(d)) = (pf.layout, &disk) {
                *laid.entry(d.clone()).or_default() +=
                    pf.size.saturating_sub(pf.existing.unwrap_or(0));
            }
        }
        for job in &result.jobs {
            let Some(pj) = plan_job(plan, job) else {
                continue;
            };
            if !pj.engine.moves_file_data() {
                continue;
            }
            for d in job_disks(plan, pj) {
                let a = asked.entry(d).or_default();
                a[0] += job.dirs[Dir::Read as usize].io_bytes;
                a[1] += job.dirs[Dir::Write as usize].io_bytes;
            }
        }
        Devices { asked, laid }
    }

    fn asked(&self, disk: &str) -> [u64; 2] {
        self.asked.get(disk).copied().unwrap_or_default()
    }

    fn laid(&self, disk: &str) -> u64 {
        self.laid.get(disk).copied().unwrap_or(0)
    }
}

/// The warnings of a finished run, from what it saw.
pub fn run_warnings(plan: &Plan, result: &RunResult) -> Vec<Warning> {
    let mut out = Vec::new();
    if !crate::checks::on() {
        return out;
    }
    let devices = Devices::of(plan, result);
    for job in &result.jobs {
        let Some(pj) = plan_job(plan, job) else {
            continue;
        };
        // The device-based checks mean nothing for engines that move no
        // data to the files (null, the file-operation engines).
        if pj.engine.moves_file_data() {
            let disks: Vec<&iolab_stats::DiskResult> = {
                let names = job_disks(plan, pj);
                result
                    .disks
                    .iter()
                    .filter(|d| names.contains(&d.name))
                    .collect()
            };
            page_cache(plan, job, pj, &disks, &devices, &mut out);
            others_on_device(job, &disks, &devices, &mut out);
        }
        samples(job, pj, &mut out);
        cpu_bound(job, &mut out);
    }
    out
}

/// Page cache: a buffered job whose bytes the device did not see, or that
/// ended with its writes still in memory, or with no device to check and
/// a working set that fits in memory.
fn page_cache(
    plan: &Plan,
    job: &JobResult,
    pj: &PlanJob,
    disks: &[&iolab_stats::DiskResult],
    devices: &Devices,
    out: &mut Vec<Warning>,
) {
    if pj.direct {
        return;
    }
    let name = &job.name;
    let reads = job.dirs[Dir::Read as usize].io_bytes;
    let writes = job.dirs[Dir::Write as usize].io_bytes;
    // A sync flushes what is dirty, but a job that wrote its blocks over
    // and over (time_based on a small file) rewrote them in memory: the
    // device saw each block once, whatever the job reports.
    let working_set: u64 = pj.files.iter().map(|f| f.len).sum();
    let synced = pj.end_fsync || pj.fsync > 0 || pj.fdatasync > 0 || pj.sync != SyncMode::None;
    // Syncs now and then (fsync=N, O_SYNC) keep the rewrites honest; one
    // at the end does not.
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
    let in_memory_fs = is_memory_fs(&fs);

    // What the writes left in memory when the job ended, and whether the
    // job ever waited for the device: not what the device counted over
    // the run, which background writeback of earlier runs inflates and a
    // sync by someone else deflates.
    let mut unflushed_known = false;
    let mut warned = false;
    if synced_once
        && writes >= JUDGE_BYTES
        && working_set > 0
        && writes > working_set + working_set / 8
    {
        out.push(Warning::RewrittenInMemory {
            job: name.clone(),
            times: writes as f64 / working_set as f64,
            working_set_mib: working_set >> 20,
        });
        warned = true;
    }
    if writes >= JUDGE_BYTES && !in_memory_fs && !warned {
        if let Some(u) = job.unflushed_bytes {
            unflushed_known = true;
            let u = u.min(writes);
            if u as f64 >= UNFLUSHED_SHARE * writes as f64 {
                out.push(Warning::UnflushedWrites {
                    job: name.clone(),
                    pct: 100.0 * u as f64 / writes as f64,
                    mib: u >> 20,
                });
                warned = true;
            }
        }
        let busy = busy_pct(job);
        if !warned && !synced && busy.is_some_and(|b| b >= BUSY_PCT) {
            out.push(Warning::UnwaitedWrites {
                job: name.clone(),
                busy_pct: busy.unwrap_or(0.0).min(100.0),
            });
            warned = true;
        }
    }

    // The job's own accounting, where the kernel keeps it and the files
    // are on block devices (whose reads it counts): what its threads had
    // the storage read and write, which no neighbour on the same device
    // adds to. Reads it did not cause came from memory; bytes written
    // that it did not hand on rewrote blocks still dirty in memory.
    let caused = job.caused_io.filter(|_| !disks.is_empty() && !in_memory_fs);
    if let Some(c) = caused {
        if reads >= JUDGE_BYTES && (c.read_bytes as f64) < 0.5 * reads as f64 {
            out.push(Warning::FromMemory {
                job: name.clone(),
                what: "reads",
                caused_pct: 100.0 * c.read_bytes as f64 / reads as f64,
            });
        }
        if writes >= JUDGE_BYTES && !warned && (c.write_bytes as f64) < 0.5 * writes as f64 {
            out.push(Warning::FromMemory {
                job: name.clone(),
                what: "writes",
                caused_pct: 100.0 * c.write_bytes as f64 / writes as f64,
            });
            warned = true;
        }
    }
    for disk in disks {
        let a = devices.asked(&disk.name);
        if caused.is_none() && reads >= JUDGE_BYTES && (disk.read_bytes as f64) < 0.5 * a[0] as f64
        {
            out.push(Warning::PageCache {
                job: name.clone(),
                what: "reads",
                device: disk.name.clone(),
                seen_pct: 100.0 * disk.read_bytes as f64 / a[0].max(1) as f64,
            });
        }
        let seen = disk.write_bytes.saturating_sub(devices.laid(&disk.name));
        // Buffered writes: what the device wrote over the run, where
        // neither the job's dirty pages at its end nor its own count
        // tells.
        let judged = unflushed_known && caused.is_some();
        if writes >= JUDGE_BYTES
            && !synced
            && !warned
            && !judged
            && (seen as f64) < 0.5 * a[1] as f64
        {
            out.push(Warning::PageCache {
                job: name.clone(),
                what: "writes",
                device: disk.name.clone(),
                seen_pct: 100.0 * seen as f64 / a[1].max(1) as f64,
            });
        }
    }

    // No device to check: a working set that fits in memory was likely
    // served by it, unless the job only wrote and its writes are known to
    // have left memory (synced, or found flushed).
    let moved = reads + writes;
    let memory = iolab_engine::host::physical_memory();
    let writes_left = reads == 0 && (synced || unflushed_known);
    let fits = working_set < memory / 2 && !writes_left;
    if disks.is_empty() && !warned && moved >= JUDGE_BYTES && (in_memory_fs || fits) {
        out.push(Warning::InMemory {
            job: name.clone(),
            fs,
            bytes: working_set,
            memory,
        });
    }
}

/// Others on the device: far more I/O than the run and its layout asked.
fn others_on_device(
    job: &JobResult,
    disks: &[&iolab_stats::DiskResult],
    devices: &Devices,
    out: &mut Vec<Warning>,
) {
    for disk in disks {
        let a = devices.asked(&disk.name);
        let expected = a[0] + a[1] + devices.laid(&disk.name);
        let seen = disk.read_bytes + disk.write_bytes;
        if seen > 2 * expected + (64 << 20) {
            out.push(Warning::OthersOnDevice {
                job: job.name.clone(),
                device: disk.name.clone(),
                device_mib: seen >> 20,
                job_mib: expected >> 20,
            });
        }
    }
}

/// Below this share of a file's data stored compressed (percent), the
/// filesystem's compression changes little.
const STORED_PCT: f64 = 10.0;

/// Compression, judged once the jobs are done and before their files are
/// removed (`clones`: the results of the plan's job clones, in order).
/// Where the filesystem tells which extents it stored compressed (btrfs,
/// through FIEMAP), that decides, whatever the data looked like: zeros
/// written into preallocated extents are stored as they are, and a
/// pattern compresses. Elsewhere a compressing mount option or device
/// and compressible data (zeros, a buffer or verify pattern, a
/// compression percentage) say it.
pub fn compression_warnings(plan: &Plan, clones: &[JobResult]) -> Vec<Warning> {
    if !crate::checks::on() {
        return Vec::new();
    }
    let mounts =
        parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let mut out: Vec<Warning> = Vec::new();
    for (pj, job) in plan.jobs.iter().zip(clones) {
        if pj.clone != 0 || !pj.engine.moves_file_data() {
            continue;
        }
        // The job's name, as the result reports it (a merged group's
        // first job).
        let moved = |d: Dir| {
            clones
                .iter()
                .zip(&plan.jobs)
                .filter(|(_, j)| j.name == pj.name)
                .map(|(c, _)| c.dirs[d as usize].io_bytes)
                .sum::<u64>()
        };
        let (read, written) = (moved(Dir::Read), moved(Dir::Write));
        if read + written == 0 || out.iter().any(|w| w.job() == job.name) {
            continue;
        }
        if let Some(w) = compression(plan, pj, &job.name, written > 0, &mounts) {
            out.push(w);
        }
    }
    out
}

/// One job's compression warning, if any.
fn compression(
    plan: &Plan,
    pj: &PlanJob,
    name: &str,
    wrote: bool,
    mounts: &[crate::probe::MountEntry],
) -> Option<Warning> {
    let data = compressible(pj).filter(|_| wrote);
    for jf in &pj.files {
        let pf = &plan.files[jf.file];
        if pf.block_device {
            continue;
        }
        let path = resolve_existing(&pf.path);
        let Some(m) = mount_of(mounts, &path) else {
            continue;
        };
        let opts = m.options();
        let Some(option) = opts
            .split(',')
            .find(|o| o.starts_with("compress") && !o.ends_with("=no") && *o != "compress=none")
        else {
            continue;
        };
        let warning = |stored_pct| Warning::Compression {
            job: name.to_string(),
            fs: m.fs_type.clone(),
            option: option.to_string(),
            data,
            stored_pct,
        };
        if m.fs_type == "btrfs" {
            if let Some(pct) = stored_compressed_pct(pj, plan) {
                return (pct >= STORED_PCT).then(|| warning(Some(pct)));
            }
        }
        if data.is_some() {
            return Some(warning(None));
        }
    }
    let data = data?;
    for disk in job_disks(plan, pj) {
        if let Some(c) = compressing_under(Path::new("/sys"), &disk) {
            return Some(Warning::CompressingDevice {
                job: name.to_string(),
                device: c.device,
                what: c.what,
                data,
            });
        }
    }
    None
}

/// Of the data in a job's files, the share stored compressed (percent),
/// from their extents; None when no file tells (gone, or no FIEMAP).
fn stored_compressed_pct(pj: &PlanJob, plan: &Plan) -> Option<f64> {
    let mut total = iolab_engine::residency::Stored::default();
    let mut told = false;
    for jf in &pj.files {
        let Ok(f) = std::fs::File::open(&plan.files[jf.file].path) else {
            continue;
        };
        if let Ok(s) = iolab_engine::residency::stored(&f) {
            told = true;
            total.mapped += s.mapped;
            total.encoded += s.encoded;
        }
    }
    (told && total.mapped > 0).then(|| 100.0 * total.encoded as f64 / total.mapped as f64)
}

/// The job's own bandwidth samples: too few, too scattered, or a start
/// much faster than the rest. Samples taken per I/O (a bandwidth log with
/// log_avg_msec=0) say nothing of the run's length or steadiness.
fn samples(job: &JobResult, pj: &PlanJob, out: &mut Vec<Warning>) {
    let busiest = job
        .dirs
        .iter()
        .filter(|d| d.total_ios > 0 && !pj.stats.bw_per_io)
        .max_by_key(|d| d.bw_samples.count());
    let Some(d) = busiest else {
        return;
    };
    let n = d.bw_samples.count();
    if n < 5 {
        out.push(Warning::ShortRun {
            job: job.name.clone(),
            samples: n,
        });
        return;
    }
    if let Some((ratio, windows)) = fast_start(&d.bw_series) {
        out.push(Warning::FastStart {
            job: job.name.clone(),
            ratio,
            secs: windows as f64 * pj.stats.bw_avg.as_secs_f64(),
        });
    } else if d.bw_samples.mean() > 0.0 {
        let cv = 100.0 * d.bw_samples.stdev() / d.bw_samples.mean();
        if cv > 25.0 {
            out.push(Warning::Unstable {
                job: job.name.clone(),
                cv_pct: cv,
            });
        }
    }
}

/// Whether a run's bandwidth samples start much faster than they go on:
/// the mean of the first fifth of the samples (one at least) against the
/// median of the rest. Some((ratio, windows)) when it is above
/// `FAST_START_RATIO`, with the number of leading windows still well above
/// the rest (1.5 times its median), which a ramp_time should cover.
pub fn fast_start(series: &[u64]) -> Option<(f64, usize)> {
    let n = series.len();
    if n < 5 {
        return None;
    }
    let head = (n / 5).max(1);
    let head_mean = series[..head].iter().sum::<u64>() as f64 / head as f64;
    let mut rest: Vec<u64> = series[head..].to_vec();
    rest.sort_unstable();
    let m = rest.len();
    let median = if m % 2 == 1 {
        rest[m / 2] as f64
    } else {
        (rest[m / 2 - 1] + rest[m / 2]) as f64 / 2.0
    };
    let ratio = head_mean / median.max(1.0);
    if ratio < FAST_START_RATIO {
        return None;
    }
    let windows = series
        .iter()
        .take_while(|&&v| v as f64 > 1.5 * median)
        .count()
        .max(head);
    Some((ratio, windows))
}

/// The ramp_time to suggest for a fast part `secs` long: whole seconds,
/// rounded up.
fn ramp_suggestion(secs: f64) -> String {
    format!("{}s", secs.ceil().max(1.0) as u64)
}

/// A thread on a CPU or ready for one this share of the run (percent)
/// hardly ever waited for anything else.
const BUSY_PCT: f64 = 90.0;

/// Percent of the job's runtime its threads were on a CPU or ready to
/// run and waiting for one (a thread that waits for a CPU on a busy
/// machine is as much held back by the CPU as one that runs); None for a
/// job that did not run.
fn busy_pct(job: &JobResult) -> Option<f64> {
    // job_runtime of merged clones is already the sum of theirs.
    let runtime = job.runtime_ns as f64;
    let busy = (job.cpu.user_ns + job.cpu.system_ns + job.cpu.run_delay_ns) as f64;
    (job.runtime_ns > 0).then(|| 100.0 * busy / runtime)
}

/// CPU-bound: the job's threads busy nearly all of a run of a second or
/// more, unless that is already explained as writes to the page cache.
fn cpu_bound(job: &JobResult, out: &mut Vec<Warning>) {
    if job.runtime_ns < 1_000_000_000
        || out.iter().any(|w| {
            w.job() == job.name
                && matches!(
                    w,
                    Warning::UnwaitedWrites { .. } | Warning::RewrittenInMemory { .. }
                )
        })
    {
        return;
    }
    let Some(pct) = busy_pct(job).filter(|p| *p > BUSY_PCT) else {
        return;
    };
    let on_cpu = (job.cpu.user_ns + job.cpu.system_ns) as f64;
    out.push(Warning::CpuBound {
        job: job.name.clone(),
        busy_pct: pct.min(100.0),
        cpu_pct: (100.0 * on_cpu / job.runtime_ns as f64).min(100.0),
    });
}

/// Filesystems whose files live in memory.
fn is_memory_fs(fs: &str) -> bool {
    matches!(fs, "tmpfs" | "ramfs")
}

/// The nearest part of `path` that exists.
fn nearest_existing(path: &Path) -> std::path::PathBuf {
    let mut p = path.to_path_buf();
    while !p.exists() {
        if !p.pop() {
            break;
        }
    }
    p
}

/// The first clone of the plan job a reported job stands for.
fn plan_job<'a>(plan: &'a Plan, job: &JobResult) -> Option<&'a PlanJob> {
    plan.jobs
        .iter()
        .find(|j| j.name == job.name && j.groupid == job.groupid)
}

/// The devices under a job's files.
fn job_disks(plan: &Plan, job: &PlanJob) -> Vec<String> {
    disks_of(job.files.iter().map(|f| plan.files[f.file].path.as_path()))
}

fn disk_of(path: &Path) -> Option<String> {
    disks_of(std::iter::once(path)).into_iter().next()
}

/// What makes a job's write data compressible, if anything does.
fn compressible(job: &PlanJob) -> Option<&'static str> {
    let b = &job.buffers;
    if b.zero {
        Some("zeros (zero_buffers)")
    } else if b.pattern.is_some() {
        Some("a repeated pattern (buffer_pattern)")
    } else if b.compress_percentage.is_some_and(|p| p > 0) {
        Some("compressible data (buffer_compress_percentage)")
    } else if job.verify.as_ref().is_some_and(|v| v.pattern.is_some()) {
        Some("a repeated pattern (verify_pattern)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::{Context, Host};
    use iolab_stats::{DiskResult, Moments};

    fn plan(text: &str) -> Plan {
        let ctx = Context::from_env(Host {
            page_size: 4096,
            mb_memory: 1024,
            ncpus: 2,
        });
        let set = iolab_spec::parse_text("w.fio", text, &ctx).unwrap();
        crate::plan::build(&set).unwrap()
    }

    /// A result of one job that read `bytes` with bandwidth samples of
    /// the given values, for `secs` seconds.
    fn result(plan: &Plan, bytes: u64, samples: &[u64], secs: u64) -> RunResult {
        let job = &plan.jobs[0];
        let mut j = JobResult {
            name: job.name.clone(),
            groupid: job.groupid,
            runtime_ns: secs * 1_000_000_000,
            clones: 1,
            ..Default::default()
        };
        let d = &mut j.dirs[Dir::Read as usize];
        d.io_bytes = bytes;
        d.total_ios = bytes / 4096;
        d.runtime_ns = j.runtime_ns;
        let mut m = Moments::default();
        for &s in samples {
            m.record(s);
        }
        j.dirs[Dir::Read as usize].bw_samples = m;
        j.dirs[Dir::Read as usize].bw_series = samples.to_vec();
        RunResult {
            jobs: vec![j],
            ..Default::default()
        }
    }

    fn codes(w: &[Warning]) -> Vec<WarningCode> {
        w.iter().map(Warning::code).collect()
    }

    const JOB: &str = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=randread\ndirect=1\n";

    #[test]
    fn steady_samples_over_three_seconds_raise_nothing() {
        let p = plan(JOB);
        let r = result(&p, 64 << 20, &[100, 102, 98, 101, 99, 100], 3);
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    }

    #[test]
    fn few_or_scattered_samples_are_flagged() {
        let p = plan(JOB);
        let r = result(&p, 64 << 20, &[100, 100], 1);
        assert_eq!(codes(&run_warnings(&p, &r)), ["short-run"]);
        let r = result(&p, 64 << 20, &[100, 300, 90, 110, 40, 105], 3);
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["unstable"]);
        assert!(
            w[0].to_string().contains("coefficient of variation"),
            "{}",
            w[0]
        );
        assert!(w[0].to_string().contains("ramp_time="), "{}", w[0]);
    }

    #[test]
    fn a_start_much_faster_than_the_rest_is_a_cache_filling() {
        let p = plan(JOB);
        // Two fast windows of ten, then the device's own speed.
        let series = [900, 700, 100, 110, 90, 100, 105, 95, 100, 98];
        let r = result(&p, 64 << 20, &series, 5);
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["unstable"]);
        let text = w[0].to_string();
        assert!(text.contains("first 1.0 s"), "{text}");
        assert!(text.contains("8.0x faster"), "{text}");
        assert!(text.contains("ramp_time=1s"), "{text}");
        assert_eq!(fast_start(&series), Some((8.0, 2)));
        // Steady, slow at first, or one fast window of many: not a cache.
        assert_eq!(fast_start(&[100, 102, 98, 101, 99, 100]), None);
        assert_eq!(fast_start(&[20, 40, 100, 100, 100, 100]), None);
        assert_eq!(fast_start(&[150, 100, 100, 100, 100, 100]), None);
        assert_eq!(fast_start(&[900, 100, 100, 100]), None, "too few");
    }

    #[test]
    fn samples_per_io_say_nothing_of_length_or_steadiness() {
        // A bandwidth log with log_avg_msec=0: the samples are per I/O.
        let p = plan(&format!("{JOB}write_bw_log=/nonexistent-dir/p\n"));
        assert!(p.jobs[0].stats.bw_per_io);
        let r = result(&p, 64 << 20, &[100, 100], 1);
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
        let r = result(&p, 64 << 20, &[300, 100, 90, 110, 95, 105], 3);
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    }

    #[test]
    fn a_busy_thread_is_cpu_bound() {
        let p = plan(JOB);
        let mut r = result(&p, 64 << 20, &[100; 6], 3);
        r.jobs[0].cpu.user_ns = 1_000_000_000;
        r.jobs[0].cpu.system_ns = 1_900_000_000;
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["cpu-bound"]);
        assert!(w[0].to_string().contains("97%"), "{}", w[0]);
    }

    /// `result` for a job that wrote instead of read.
    fn written(plan: &Plan, bytes: u64, secs: u64) -> RunResult {
        let mut r = result(plan, bytes, &[100; 6], secs);
        r.jobs[0].dirs.swap(Dir::Read as usize, Dir::Write as usize);
        r
    }

    const WRITE: &str = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=write\n";

    #[test]
    fn buffered_writes_left_in_memory_or_never_waited_for_are_the_page_cache() {
        let p = plan(WRITE);
        // Half the writes still dirty at the end.
        let mut r = written(&p, 64 << 20, 3);
        r.jobs[0].unflushed_bytes = Some(32 << 20);
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["page-cache"]);
        assert!(
            w[0].to_string().contains("50% of its writes (32 MiB)"),
            "{}",
            w[0]
        );
        // All flushed (someone synced), but the thread never waited: the
        // writes went to memory all the same; no cpu-bound besides.
        r.jobs[0].unflushed_bytes = Some(0);
        r.jobs[0].cpu.user_ns = 2_000_000_000;
        r.jobs[0].cpu.run_delay_ns = 900_000_000;
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["page-cache"]);
        assert!(w[0].to_string().contains("hardly ever waited"), "{}", w[0]);
        // A thread that waited for the device, with the data flushed.
        r.jobs[0].cpu.run_delay_ns = 0;
        r.jobs[0].cpu.user_ns = 300_000_000;
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
        // end_fsync: timed until the data was on the device.
        let p = plan(&format!("{WRITE}end_fsync=1\n"));
        let mut r = written(&p, 64 << 20, 3);
        r.jobs[0].unflushed_bytes = Some(0);
        r.jobs[0].cpu.user_ns = 2_900_000_000;
        assert_eq!(codes(&run_warnings(&p, &r)), ["cpu-bound"]);
        // Unless it wrote its 64 MiB four times over (time_based): the
        // rewrites stayed in memory, and that explains the busy thread.
        let mut r = written(&p, 256 << 20, 3);
        r.jobs[0].unflushed_bytes = Some(0);
        r.jobs[0].cpu.user_ns = 2_900_000_000;
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["page-cache"]);
        assert!(
            w[0].to_string().contains("64 MiB 4.0 times over"),
            "{}",
            w[0]
        );
        // fsync after every write keeps the rewrites on the device.
        let p = plan(&format!("{WRITE}fsync=1\n"));
        let mut r = written(&p, 256 << 20, 3);
        r.jobs[0].unflushed_bytes = Some(0);
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    }

    #[test]
    fn engines_that_move_no_data_get_no_device_warnings() {
        // Buffered reads with no device to check would be the page cache,
        // but the null engine reads nothing.
        let text = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=read\n";
        let p = plan(text);
        let r = result(&p, 64 << 20, &[100; 6], 3);
        assert_eq!(codes(&run_warnings(&p, &r)), ["page-cache"]);
        let p = plan(&format!("{text}ioengine=null\n"));
        let r = result(&p, 64 << 20, &[100; 6], 3);
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    }

    #[test]
    fn the_jobs_own_reads_decide_whatever_a_neighbour_did_on_the_device() {
        let dir = std::env::current_dir().unwrap();
        let Some(disk) = disk_of(&dir) else {
            iolab_testkit::skip!("no block device under {}", dir.display());
        };
        let p = plan(&format!(
            "[j]\nfilename={}/f\nsize=64m\nrw=read\n",
            dir.display()
        ));
        let mut r = result(&p, 64 << 20, &[100; 6], 3);
        // The device read as much as the job did: someone else's reads.
        r.disks = vec![DiskResult {
            name: disk,
            read_bytes: 64 << 20,
            ..Default::default()
        }];
        r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
            read_bytes: 0,
            write_bytes: 0,
        });
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["page-cache"], "{w:?}");
        assert!(
            w[0].to_string().contains("read 0% of the bytes"),
            "{}",
            w[0]
        );
        // The job's threads had it all read: the device being idle
        // otherwise does not matter.
        r.disks[0].read_bytes = 0;
        r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
            read_bytes: 64 << 20,
            write_bytes: 0,
        });
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
        // Unknown (an old kernel): the device's counters decide.
        r.jobs[0].caused_io = None;
        assert_eq!(codes(&run_warnings(&p, &r)), ["page-cache"]);
    }

    #[test]
    fn pattern_data_is_compressible() {
        let p = plan("[j]\nfilename=/nonexistent-dir/f\nsize=1m\nrw=write\nverify=pattern\nverify_pattern=0xff\n");
        assert_eq!(
            compressible(&p.jobs[0]),
            Some("a repeated pattern (verify_pattern)")
        );
        let p = plan("[j]\nfilename=/nonexistent-dir/f\nsize=1m\nrw=write\nverify=crc32c\n");
        assert_eq!(compressible(&p.jobs[0]), None);
    }

    #[test]
    fn a_device_busier_than_the_run_has_others_on_it() {
        // The job's file on a real disk: the current directory's.
        let dir = std::env::current_dir().unwrap();
        let Some(disk) = disk_of(&dir) else {
            iolab_testkit::skip!("no block device under {}", dir.display());
        };
        let p = plan(&format!(
            "[j]\nfilename={}/f\nsize=64m\nrw=randread\ndirect=1\n",
            dir.display()
        ));
        let mut r = result(&p, 16 << 20, &[100; 6], 3);
        r.disks = vec![DiskResult {
            name: disk.clone(),
            read_bytes: 16 << 20,
            write_bytes: 512 << 20,
            ..Default::default()
        }];
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["others-on-device"], "{w:?}");
        assert!(w[0].to_string().contains(&format!("{disk} moved 528 MiB")));
        // What the job asked for, give or take: nothing to say.
        r.disks[0].write_bytes = 1 << 20;
        assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    }
}
