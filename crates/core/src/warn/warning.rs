//! The warning enum: one variant per thing seen, with the job it is
//! about and its stable code ([`WarningCode`]) as the result model keeps
//! it. The words are in `text.rs`.

use iolab_engine::EngineKind;
use iolab_stats::{JobWarning, WarningCode};

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
