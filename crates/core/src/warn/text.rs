//! What each warning says: what was seen, why it matters and what to do.

use std::fmt;

use iolab_stats::WarningCode;

use super::devices::is_memory_fs;
use super::Warning;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code() {
            WarningCode::PageCache => memory_text(self, f),
            _ => other_text(self, f),
        }
    }
}

/// The page-cache family: numbers that measured memory.
fn memory_text(w: &Warning, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match w {
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
                reread,
            } => {
                write!(
                    f,
                    "job `{job}`: its files are on the loop device {device}, which reads its \
                     backing file `{backing}` through the host's page cache (no direct I/O)"
                )?;
                match reread {
                    Some(times) => write!(
                        f,
                        "; the job read what it works on {times:.1} times over, and by its end \
                         {cached_mib} MiB of it ({pct:.0}%) was in that cache: the reads after \
                         the first pass came from memory, direct=1 notwithstanding, not from the \
                         disk under the file; attach the image with `losetup --direct-io=on`, or \
                         read each block once (no time_based, or a larger size)"
                    ),
                    None => write!(
                        f,
                        ", and {cached_mib} MiB of that file ({pct:.0}% of what the job reads) is \
                         in memory: those reads come from memory, direct=1 notwithstanding, not \
                         from the disk under the file; attach the image with `losetup \
                         --direct-io=on`, or drop its cache first (`dd if={backing} iflag=nocache \
                         count=0`)"
                    ),
                }
            }
            Warning::UnflushedWrites { job, pct, mib } => write!(
                f,
                "job `{job}`: {pct:.0}% of its writes ({mib} MiB) were still in the page cache, \
                 not on the device, when it ended; this measured memory, not the device: use \
                 direct=1, end_fsync=1, or a size above twice the memory"
            ),
            Warning::UnwaitedWrites { job, busy_pct } => write!(
                f,
                "job `{job}`: the threads doing its writes hardly ever waited for the device (on a \
                 CPU or ready for one {busy_pct:.0}% of the run): its buffered writes went to memory, the page \
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
        _ => unreachable!("not a page-cache warning: {:?}", w.code()),
    }
}

/// Every other warning: queue depth, compression, holes, the samples,
/// the device's neighbours and the CPU.
fn other_text(w: &Warning, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match w {
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
        _ => unreachable!("a page-cache warning: {:?}", w.code()),
    }
}

/// The ramp_time to suggest for a fast part `secs` long: whole seconds,
/// rounded up.
fn ramp_suggestion(secs: f64) -> String {
    format!("{}s", secs.ceil().max(1.0) as u64)
}
