//! Warnings: when a number will not measure what it looks like. One enum,
//! each variant saying what was seen, why it matters and what to do. Some
//! are known from the plan (a queue depth the engine cannot reach); the
//! rest from what the run saw: the device's own counters against the
//! job's bytes (page cache, others on the device), the mount's options
//! against the data (compression), holes in what was read (sparse
//! reads), and the job's own samples and CPU time (short, unstable,
//! CPU-bound). Each lands in the job's result with a stable code, so the
//! normal output prints it after the job and the JSON carries it under
//! "iolab" -> "warnings".

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use iolab_stats::{Dir, JobResult, JobWarning, RunResult};

use crate::diskstats::disks_of;
use crate::plan::{Layout, Plan, PlanJob};
use crate::probe::{mount_of, parse_mountinfo, resolve_existing};

/// Something about a job that makes its numbers misleading.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// iodepth above 1 that the engine cannot reach.
    QueueDepthNotReached {
        job: String,
        engine: String,
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
    /// Buffered I/O with no device to watch (tmpfs, say) on a working set
    /// that fits in memory.
    InMemory {
        job: String,
        bytes: u64,
        memory: u64,
    },
    /// Compressible data written to a filesystem that compresses.
    Compression {
        job: String,
        fs: String,
        option: String,
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
    /// The device did much more I/O than the run asked of it.
    OthersOnDevice {
        job: String,
        device: String,
        device_mib: u64,
        job_mib: u64,
    },
    /// The job's thread was busy nearly all the time.
    CpuBound { job: String, cpu_pct: f64 },
}

impl Warning {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::QueueDepthNotReached { .. } => "queue-depth-not-reached",
            Warning::PageCache { .. } | Warning::InMemory { .. } => "page-cache",
            Warning::Compression { .. } => "compression",
            Warning::SparseReads { .. } => "sparse-reads",
            Warning::ShortRun { .. } => "short-run",
            Warning::Unstable { .. } => "unstable",
            Warning::OthersOnDevice { .. } => "others-on-device",
            Warning::CpuBound { .. } => "cpu-bound",
        }
    }

    /// The job the warning is about.
    pub fn job(&self) -> &str {
        match self {
            Warning::QueueDepthNotReached { job, .. }
            | Warning::PageCache { job, .. }
            | Warning::InMemory { job, .. }
            | Warning::Compression { job, .. }
            | Warning::SparseReads { job, .. }
            | Warning::ShortRun { job, .. }
            | Warning::Unstable { job, .. }
            | Warning::OthersOnDevice { job, .. }
            | Warning::CpuBound { job, .. } => job,
        }
    }

    /// As the result model keeps it.
    pub fn to_job_warning(&self) -> JobWarning {
        JobWarning {
            code: self.code().to_string(),
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
            Warning::InMemory { job, bytes, memory } => write!(
                f,
                "job `{job}`: buffered I/O on {} MiB, which fits in memory ({} MiB), with no device \
                 to check: the numbers are likely the page cache's; use direct=1 or a larger size",
                bytes >> 20,
                memory >> 20
            ),
            Warning::Compression { job, fs, option, data } => write!(
                f,
                "job `{job}`: {fs} is mounted with {option} and the job writes {data}: the filesystem \
                 stores less than it is given, so the bandwidth is inflated; leave the buffer options \
                 at their defaults (incompressible data) to measure the storage"
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
            Warning::OthersOnDevice { job, device, device_mib, job_mib } => write!(
                f,
                "job `{job}`: the device {device} moved {device_mib} MiB while the run moved {job_mib} \
                 MiB: something else used it at the same time, and shared the figures; run on an \
                 idle device"
            ),
            Warning::CpuBound { job, cpu_pct } => write!(
                f,
                "job `{job}`: its thread was busy {cpu_pct:.0}% of the run: the benchmark itself may \
                 be the bottleneck; use numjobs= for more threads, or a larger bs"
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
        let (why, fix) = match job.engine.as_str() {
            "libaio" if !job.direct => (
                "without direct=1 the kernel completes each I/O inside io_submit, one at a time",
                "use direct=1, or ioengine=io_uring for buffered I/O",
            ),
            "sync" | "psync" | "pvsync" | "pvsync2" | "vsync" | "null" | "mmap" => (
                "a synchronous engine has one I/O in flight at a time",
                "use ioengine=io_uring or libaio (with direct=1), or numjobs for parallel I/O",
            ),
            _ => continue,
        };
        out.push(Warning::QueueDepthNotReached {
            job: job.name.clone(),
            engine: job.engine.clone(),
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

/// The warnings of a finished run, from what it saw.
pub fn run_warnings(plan: &Plan, result: &RunResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let memory = iolab_engine::host::physical_memory();
    let mounts =
        parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());

    // What the run asked of each device, per direction, and the bytes
    // the layout wrote there before the jobs began.
    let mut asked: HashMap<String, [u64; 2]> = HashMap::new();
    let mut laid: HashMap<String, u64> = HashMap::new();
    for (pf, disk) in plan.files.iter().map(|f| (f, disk_of(&f.path))) {
        if let (Layout::Write, Some(d)) = (pf.layout, &disk) {
            *laid.entry(d.clone()).or_default() += pf.size.saturating_sub(pf.existing.unwrap_or(0));
        }
    }
    for job in &result.jobs {
        let Some(pj) = plan_job(plan, job) else {
            continue;
        };
        for d in job_disks(plan, pj) {
            let a = asked.entry(d).or_default();
            a[0] += job.dirs[Dir::Read as usize].io_bytes;
            a[1] += job.dirs[Dir::Write as usize].io_bytes;
        }
    }

    for job in &result.jobs {
        let Some(pj) = plan_job(plan, job) else {
            continue;
        };
        let name = &job.name;
        let disks = job_disks(plan, pj);

        // Page cache: buffered bytes the device did not see.
        if !pj.direct {
            let mut judged = false;
            for disk in result.disks.iter().filter(|d| disks.contains(&d.name)) {
                let a = asked.get(&disk.name).copied().unwrap_or_default();
                judged = true;
                let reads = job.dirs[Dir::Read as usize].io_bytes;
                if reads >= JUDGE_BYTES && (disk.read_bytes as f64) < 0.5 * a[0] as f64 {
                    out.push(Warning::PageCache {
                        job: name.clone(),
                        what: "reads",
                        device: disk.name.clone(),
                        seen_pct: 100.0 * disk.read_bytes as f64 / a[0].max(1) as f64,
                    });
                }
                let writes = job.dirs[Dir::Write as usize].io_bytes;
                let synced = pj.end_fsync || pj.fsync > 0 || pj.fdatasync > 0;
                let seen = disk
                    .write_bytes
                    .saturating_sub(laid.get(&disk.name).copied().unwrap_or(0));
                if writes >= JUDGE_BYTES && !synced && (seen as f64) < 0.5 * a[1] as f64 {
                    out.push(Warning::PageCache {
                        job: name.clone(),
                        what: "writes",
                        device: disk.name.clone(),
                        seen_pct: 100.0 * seen as f64 / a[1].max(1) as f64,
                    });
                }
            }
            let working_set: u64 = pj.files.iter().map(|f| f.len).sum();
            let moved: u64 = job.dirs.iter().map(|d| d.io_bytes).sum();
            if !judged && moved >= JUDGE_BYTES && working_set < memory / 2 {
                out.push(Warning::InMemory {
                    job: name.clone(),
                    bytes: working_set,
                    memory,
                });
            }
        }

        // Others on the device: far more than the run and its layout.
        for disk in result.disks.iter().filter(|d| disks.contains(&d.name)) {
            let a = asked.get(&disk.name).copied().unwrap_or_default();
            let expected = a[0] + a[1] + laid.get(&disk.name).copied().unwrap_or(0);
            let seen = disk.read_bytes + disk.write_bytes;
            if seen > 2 * expected + (64 << 20) {
                out.push(Warning::OthersOnDevice {
                    job: name.clone(),
                    device: disk.name.clone(),
                    device_mib: seen >> 20,
                    job_mib: expected >> 20,
                });
            }
        }

        // Compression: compressible data onto a compressing mount.
        if job.dirs[Dir::Write as usize].io_bytes > 0 {
            if let Some(data) = compressible(pj) {
                for jf in &pj.files {
                    let path = resolve_existing(&plan.files[jf.file].path);
                    if let Some(m) = mount_of(&mounts, &path) {
                        let opts = m.options();
                        if let Some(o) = opts.split(',').find(|o| {
                            o.starts_with("compress")
                                && !o.ends_with("=no")
                                && *o != "compress=none"
                        }) {
                            out.push(Warning::Compression {
                                job: name.clone(),
                                fs: m.fs_type.clone(),
                                option: o.to_string(),
                                data,
                            });
                            break;
                        }
                    }
                }
            }
        }

        // The job's own samples and CPU time. Samples taken per I/O (a
        // bandwidth log with log_avg_msec=0) say nothing of the run's
        // length or steadiness.
        let busiest = job
            .dirs
            .iter()
            .filter(|d| d.total_ios > 0 && !pj.stats.bw_per_io)
            .max_by_key(|d| d.bw_samples.count());
        if let Some(d) = busiest {
            let n = d.bw_samples.count();
            if n < 5 {
                out.push(Warning::ShortRun {
                    job: name.clone(),
                    samples: n,
                });
            } else if d.bw_samples.mean() > 0.0 {
                let cv = 100.0 * d.bw_samples.stdev() / d.bw_samples.mean();
                if cv > 25.0 {
                    out.push(Warning::Unstable {
                        job: name.clone(),
                        cv_pct: cv,
                    });
                }
            }
        }
        let busy = job.cpu.user_ns + job.cpu.system_ns;
        let clones = u64::from(job.clones.max(1));
        if job.runtime_ns >= 1_000_000_000 {
            let pct = 100.0 * busy as f64 / (job.runtime_ns * clones) as f64;
            if pct > 90.0 {
                out.push(Warning::CpuBound {
                    job: name.clone(),
                    cpu_pct: pct.min(100.0),
                });
            }
        }
    }
    out
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
        RunResult {
            jobs: vec![j],
            ..Default::default()
        }
    }

    fn codes(w: &[Warning]) -> Vec<&'static str> {
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
        let r = result(&p, 64 << 20, &[300, 100, 90, 110, 95, 105], 3);
        let w = run_warnings(&p, &r);
        assert_eq!(codes(&w), ["unstable"]);
        assert!(w[0].to_string().contains("ramp_time="), "{}", w[0]);
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

    #[test]
    fn a_device_busier_than_the_run_has_others_on_it() {
        // The job's file on a real disk: the current directory's.
        let dir = std::env::current_dir().unwrap();
        let Some(disk) = disk_of(&dir) else {
            return println!("skip: no block device under {}", dir.display());
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
