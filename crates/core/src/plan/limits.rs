//! What a job set will cost before its plan is built: the job clones
//! (one thread each, and a second one, the log writer, for a clone with a
//! line per I/O in its logs), the files they name, and the memory the run
//! holds for them (each clone's I/O buffers, `iodepth` of the largest
//! block size; its latency histograms and state; each file's name, place
//! and offset generator; its logs' blocks and buffers of records),
//! checked against the limits of a run: fio's maximum number of jobs, the
//! threads the host lets the process have, a bound on files, and the
//! memory the host has available. A job set past any of them is refused
//! with what it would take and what the limit is, before anything is
//! named, opened or allocated.

use iolab_spec::options::choices::RandomGenerator;
use iolab_spec::value::SizeValue;
use iolab_spec::{JobSet, Opt, Value};
use iolab_stats::PLAT_NR;

use super::build::{count, log_spec, per_dir_bs, Ctx};
use super::PlanError;

/// The most job clones one run may have: fio's `REAL_MAX_JOBS` (fio 3.33
/// itself stops a few short of it, with "maximum number of jobs reached").
pub const MAX_JOBS: u64 = 4096;

/// The most files one run may name, counted per clone (a file that every
/// clone of a job names counts once for each clone, as each opens it).
pub const MAX_FILES: u64 = 1 << 20;

/// Bytes of one latency histogram (fio's 1856 bins of 64 bits).
const HIST_BYTES: u64 = PLAT_NR as u64 * 8;

/// Histograms a clone holds: completion, submission and total latency in
/// three directions and its sync latency (ten in its result), with room
/// for the copy made when its result is merged.
const HISTS_PER_CLONE: u64 = 12;

/// A clone's memory besides its histograms and buffers: its settings, the
/// touched part of its thread's stack, its engine and counters.
const CLONE_STATE: u64 = 64 << 10;

/// A file's memory per clone that names it: its path, its place in the
/// plan, its open state and offset generator. A random job with fio's
/// random map keeps a bit per block of the blocks it touched (`map_bytes`).
const FILE_STATE: u64 = 2 << 10;

/// What a job set would take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Job clones, one thread each.
    pub jobs: u64,
    /// Threads: the clones' and their log writers'.
    pub threads: u64,
    /// Files, counted once for each clone that names them.
    pub files: u64,
    /// Bytes of memory the run would hold at once, about.
    pub bytes: u64,
}

impl Cost {
    fn add(self, o: Cost) -> Cost {
        Cost {
            jobs: self.jobs.saturating_add(o.jobs),
            threads: self.threads.saturating_add(o.threads),
            files: self.files.saturating_add(o.files),
            bytes: self.bytes.saturating_add(o.bytes),
        }
    }
}

/// The limits a job set is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub jobs: u64,
    /// Threads the run may start: the host's `threads-max` less the tasks
    /// that exist.
    pub threads: u64,
    pub files: u64,
    /// Memory available for the run (`MemAvailable` in /proc/meminfo);
    /// None when it cannot be read, and memory is then not checked.
    pub memory: Option<u64>,
}

impl Limits {
    /// fio's job limit, the files bound and this host's threads and
    /// available memory.
    pub fn of_host() -> Limits {
        Limits {
            jobs: MAX_JOBS,
            threads: host_threads(),
            files: MAX_FILES,
            memory: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|t| mem_available(&t)),
        }
    }
}

/// The threads this process may start, about: the host's threads-max
/// less the tasks that exist (the fourth field of /proc/loadavg).
/// Unbounded when it cannot be read. RLIMIT_NPROC, which counts every
/// task of the user, is left to the run: a thread it refuses stops the
/// run with an error that names the limit.
fn host_threads() -> u64 {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let max = read("/proc/sys/kernel/threads-max").and_then(|t| t.trim().parse::<u64>().ok());
    let tasks = read("/proc/loadavg")
        .and_then(|t| t.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok())
        .unwrap_or(0);
    max.unwrap_or(u64::MAX).saturating_sub(tasks)
}

/// `MemAvailable` from the text of /proc/meminfo, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let rest = l.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// The memory of one clone: `iodepth` buffers of `max_bs` bytes (each
/// rounded up to a page), its histograms and state, and `files` files.
pub fn clone_bytes(iodepth: u64, max_bs: u64, files: u64, page: u64) -> u64 {
    let page = page.max(1);
    let buf = max_bs.div_ceil(page).saturating_mul(page);
    iodepth
        .max(1)
        .saturating_mul(buf)
        .saturating_add(HISTS_PER_CLONE * HIST_BYTES + CLONE_STATE)
        .saturating_add(files.saturating_mul(FILE_STATE))
}

/// What each job of the set would take, all its clones together, read
/// from its options alone.
pub fn estimate(set: &JobSet) -> Result<Vec<Cost>, PlanError> {
    let page = iolab_engine::host::page_size();
    set.jobs
        .iter()
        .map(|job| {
            let cx = Ctx { job };
            let clones = u64::from(job.numjobs());
            let files = match job.get(Opt::Filename) {
                Some(Value::Files(names)) => names.len() as u64,
                _ => job.int(Opt::Nrfiles).unwrap_or(1).max(1) as u64,
            };
            let bs = per_dir_bs(&cx)?;
            let max_bs = bs.iter().map(|b| b.max()).max().unwrap_or(0);
            let min_bs = bs.iter().map(|b| b.min()).min().unwrap_or(0);
            let iodepth = u64::from(count(job, Opt::Iodepth).max(1));
            let logs = log_spec(job);
            let logs = logs.as_ref();
            let clone = clone_bytes(iodepth, max_bs, files, page)
                .saturating_add(map_bytes(job, files, min_bs, max_bs))
                .saturating_add(logs.map_or(0, crate::worker::log_bytes));
            // With stats=0 nothing is logged, and no writer is started.
            let writer = logs.is_some_and(|l| l.per_io() && job.flag(Opt::Stats));
            Ok(Cost {
                jobs: clones,
                threads: clones.saturating_mul(1 + u64::from(writer)),
                files: clones.saturating_mul(files),
                bytes: clones.saturating_mul(clone),
            })
        })
        .collect()
}

/// fio's random map of touched blocks that a random job clone keeps (one
/// bit per smallest block), for the sizes the job text gives in bytes; 0
/// when it keeps none.
fn map_bytes(job: &iolab_spec::JobSpec, files: u64, min_bs: u64, max_bs: u64) -> u64 {
    let mapped = job.rw().mode.is_random()
        && !job.flag(Opt::Norandommap)
        && job.get(Opt::Ba).is_none()
        && !matches!(
            job.get(Opt::RandomDistribution),
            Some(Value::Distribution(d)) if *d != iolab_spec::value::Distribution::Random
        );
    let lfsr = job.chosen(Opt::RandomGenerator) == Some(RandomGenerator::Lfsr);
    if !mapped || (lfsr && max_bs <= min_bs) || min_bs == 0 {
        return 0;
    }
    let bytes = match (job.size(Opt::Filesize), job.size(Opt::Size)) {
        (Some(SizeValue::Bytes(f)), _) => f.saturating_mul(files),
        (None, Some(SizeValue::Bytes(s))) => s,
        _ => 0,
    };
    crate::gen::offset::touched_map_bytes(bytes / min_bs)
}

/// Refuses a job set past `limits`, naming the job that goes past and
/// what it would take; returns the whole set's cost otherwise.
pub fn check(set: &JobSet, limits: &Limits) -> Result<Cost, PlanError> {
    let costs = estimate(set)?;
    let mut total = Cost::default();
    for (job, cost) in set.jobs.iter().zip(&costs) {
        let cx = Ctx { job };
        total = total.add(*cost);
        if total.jobs > limits.jobs {
            return Err(cx.err(
                Some(Opt::Numjobs),
                format!(
                    "numjobs={} brings the run to {} jobs, and a run has at most {} (fio's limit); \
                     lower numjobs",
                    job.numjobs(),
                    total.jobs,
                    limits.jobs
                ),
            ));
        }
        if total.threads > limits.threads {
            let writers = cost.threads - cost.jobs;
            let why = if writers > 0 {
                format!(
                    " ({} clones and their {writers} log writers: a line per I/O in the logs, \
                     log_avg_msec=0, takes a thread of its own per clone)",
                    cost.jobs
                )
            } else {
                String::new()
            };
            return Err(cx.err(
                Some(Opt::Numjobs),
                format!(
                    "numjobs={} brings the run to {} threads{why}, and this host lets it start \
                     {} (threads-max, less the tasks running); lower numjobs{}",
                    job.numjobs(),
                    total.threads,
                    limits.threads,
                    if writers > 0 {
                        ", or set log_avg_msec"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if total.files > limits.files {
            let opt = match job.get(Opt::Filename) {
                Some(Value::Files(_)) => Opt::Filename,
                _ => Opt::Nrfiles,
            };
            return Err(cx.err(
                Some(opt),
                format!(
                    "{} files for each of {} job clones bring the run to {} files, and a run has \
                     at most {}; lower nrfiles or numjobs",
                    cost.files / cost.jobs.max(1),
                    cost.jobs,
                    total.files,
                    limits.files
                ),
            ));
        }
    }
    // The buffers of records the clones with a line per I/O share.
    let writers = costs.iter().any(|c| c.threads > c.jobs);
    if writers {
        total.bytes = total.bytes.saturating_add(crate::worker::log_pool_bytes());
    }
    // The job that takes the most is the one to name.
    let largest = set.jobs.iter().zip(&costs).max_by_key(|(_, c)| c.bytes);
    if let (Some(avail), Some((job, cost))) = (limits.memory, largest) {
        if total.bytes > avail {
            let cx = Ctx { job };
            return Err(cx.err(
                None,
                format!(
                    "the run would need about {} of memory ({} of it for this job's {} clones: \
                     iodepth × block size of buffers each, latency histograms, logs and {} \
                     files), \
                     and {} is available (MemAvailable); lower numjobs, iodepth, bs or nrfiles",
                    bytes(total.bytes),
                    bytes(cost.bytes),
                    cost.jobs,
                    cost.files,
                    bytes(avail)
                ),
            ));
        }
    }
    Ok(total)
}

/// A byte count in binary units with one decimal ("2.4 GiB").
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::{Context, Host};

    fn set(text: &str) -> JobSet {
        let ctx = Context::from_env(Host::EXAMPLE);
        iolab_spec::parse_text("t.fio", text, &ctx).unwrap()
    }

    fn roomy() -> Limits {
        Limits {
            jobs: MAX_JOBS,
            threads: u64::MAX,
            files: MAX_FILES,
            memory: Some(u64::MAX),
        }
    }

    #[test]
    fn a_random_job_with_the_random_map_pays_for_it() {
        let bytes = |text: &str| estimate(&set(text)).unwrap()[0].bytes;
        let unmapped = bytes("[r]\nrw=randwrite\nsize=1t\nbs=4k\nnorandommap\n");
        // One bit per 4 KiB block of 1 TiB is 32 MiB, as fio's map.
        assert_eq!(
            bytes("[r]\nrw=randwrite\nsize=1t\nbs=4k\n") - unmapped,
            32 << 20
        );
        let buf = 65536 - 4096;
        assert_eq!(
            bytes("[r]\nrw=randwrite\nsize=1t\nbssplit=4k/50:64k/50\n") - unmapped - buf,
            32 << 20
        );
        for text in [
            "[r]\nrw=write\nsize=1t\nbssplit=4k/50:64k/50\n",
            "[r]\nrw=randwrite\nsize=1t\nbssplit=4k/50:64k/50\nnorandommap\n",
            "[r]\nrw=randwrite\nsize=1t\nbssplit=4k/50:64k/50\nrandom_distribution=zipf:1.2\n",
        ] {
            assert_eq!(bytes(text) - unmapped, buf, "{text}");
        }
    }

    #[test]
    fn a_clone_costs_its_buffers_histograms_state_and_files() {
        let one = clone_bytes(1, 4096, 1, 4096);
        assert_eq!(one, 4096 + 12 * 1856 * 8 + (64 << 10) + (2 << 10));
        // iodepth buffers of the block size, each rounded up to a page.
        assert_eq!(
            clone_bytes(32, 1 << 20, 1, 4096) - one,
            32 * (1 << 20) - 4096
        );
        assert_eq!(clone_bytes(2, 100, 1, 4096), one + 4096);
        // Each file adds its state.
        assert_eq!(clone_bytes(1, 4096, 11, 4096) - one, 10 * (2 << 10));
        // No overflow on absurd values.
        assert_eq!(
            clone_bytes(u64::MAX, u64::MAX / 2, u64::MAX, 4096),
            u64::MAX
        );
    }

    #[test]
    fn estimate_counts_clones_files_and_memory_per_job() {
        let s = set("[a]\nnumjobs=3\nnrfiles=4\nsize=1m\nbs=64k\niodepth=8\n\
             [b]\nfilename=x:y\nsize=1m\nbsrange=4k-128k\n");
        let c = estimate(&s).unwrap();
        let page = iolab_engine::host::page_size();
        assert_eq!(c[0].jobs, 3);
        assert_eq!(c[0].files, 12);
        assert_eq!(c[0].bytes, 3 * clone_bytes(8, 64 << 10, 4, page));
        assert_eq!(c[1].jobs, 1);
        assert_eq!(c[1].files, 2);
        assert_eq!(c[1].bytes, clone_bytes(1, 128 << 10, 2, page));
    }

    #[test]
    fn the_estimate_is_made_without_naming_the_files() {
        // A hundred million files are counted, not listed.
        let s = set("[a]\nnrfiles=100000000\nnumjobs=64\nsize=1g\n");
        let c = estimate(&s).unwrap();
        assert_eq!(c[0].files, 6_400_000_000);
        assert!(c[0].bytes > 6_400_000_000 * 2048);
    }

    #[test]
    fn jobs_past_fios_limit_are_refused_naming_it() {
        assert!(check(&set("[a]\nnumjobs=4096\nsize=1m\n"), &roomy()).is_ok());
        let e = check(&set("[a]\nnumjobs=100000\nsize=1m\n"), &roomy()).unwrap_err();
        assert_eq!(e.job, "a");
        assert!(e.message.contains("100000 jobs"), "{e}");
        assert!(e.message.contains("at most 4096"), "{e}");
        // Counted over the whole run.
        let e = check(
            &set("[a]\nnumjobs=4000\nsize=1m\n[b]\nnumjobs=97\nsize=1m\n"),
            &roomy(),
        )
        .unwrap_err();
        assert_eq!(e.job, "b");
        assert!(e.message.contains("4097 jobs"), "{e}");
        assert!(e.to_string().starts_with("t.fio:5: job `b`"), "{e}");
    }

    #[test]
    fn files_past_the_bound_are_refused_naming_it() {
        let e = check(&set("[a]\nnrfiles=100000000\nsize=1g\n"), &roomy()).unwrap_err();
        assert!(e.message.contains("100000000 files"), "{e}");
        assert!(e.message.contains(&format!("at most {MAX_FILES}")), "{e}");
        assert!(e.to_string().contains("t.fio:2"), "{e}");
        let e = check(&set("[a]\nnrfiles=300000\nnumjobs=4\nsize=1g\n"), &roomy()).unwrap_err();
        assert!(e.message.contains("1200000 files"), "{e}");
    }

    #[test]
    fn memory_past_what_is_available_is_refused_saying_how_much() {
        let text = "[a]\nnumjobs=64\niodepth=1024\nbs=16m\nsize=1g\n";
        let need = 64 * clone_bytes(1024, 16 << 20, 1, iolab_engine::host::page_size());
        let tight = Limits {
            memory: Some(8 << 30),
            ..roomy()
        };
        let e = check(&set(text), &tight).unwrap_err();
        assert!(e.message.contains(&bytes(need)), "{e}");
        assert!(e.message.contains("8.0 GiB is available"), "{e}");
        assert_eq!(check(&set(text), &roomy()).unwrap().bytes, need);
        // Unknown memory is not checked.
        let unknown = Limits {
            memory: None,
            ..roomy()
        };
        assert!(check(&set(text), &unknown).is_ok());
    }

    #[test]
    fn a_line_per_io_in_the_logs_counts_a_writer_thread_and_its_memory() {
        let plain = "[a]\nnumjobs=3\nsize=1m\n";
        let c = estimate(&set(plain)).unwrap()[0];
        assert_eq!((c.jobs, c.threads), (3, 3));
        let logged =
            estimate(&set(&format!("{plain}write_lat_log=x\nwrite_iops_log=x\n"))).unwrap()[0];
        assert_eq!((logged.jobs, logged.threads), (3, 6));
        // Per clone: its buffers of records and a block per file (iops,
        // slat, clat and lat).
        let per_clone = crate::worker::log_bytes(
            &log_spec(&set("[a]\nwrite_lat_log=x\nwrite_iops_log=x\n").jobs[0]).unwrap(),
        );
        assert!(per_clone >= 4 << 20, "{per_clone}");
        assert_eq!(logged.bytes - c.bytes, 3 * per_clone);
        // Averaged logs, stats=0 and a histogram log alone take no writer.
        for text in [
            "write_lat_log=x\nlog_avg_msec=500\n",
            "write_lat_log=x\nstats=0\n",
            "write_hist_log=x\n",
        ] {
            let set = set(&format!("{plain}{text}"));
            assert_eq!(estimate(&set).unwrap()[0].threads, 3, "{text}");
        }
        // The pool of records the writers share counts once in the run.
        let two = set(&format!(
            "{plain}write_bw_log=x\n[b]\nsize=1m\nwrite_bw_log=y\n"
        ));
        let costs = estimate(&two).unwrap();
        let sum: u64 = costs.iter().map(|c| c.bytes).sum();
        assert_eq!(
            check(&two, &roomy()).unwrap().bytes,
            sum + crate::worker::log_pool_bytes()
        );
    }

    #[test]
    fn threads_past_the_hosts_limit_are_refused_naming_the_log_writers() {
        let few = Limits {
            threads: 100,
            ..roomy()
        };
        let plain = "[a]\nnumjobs=60\nsize=1m\n";
        assert_eq!(check(&set(plain), &few).unwrap().threads, 60);
        let e = check(&set(&format!("{plain}write_bw_log=x\n")), &few).unwrap_err();
        assert!(e.message.contains("120 threads"), "{e}");
        assert!(e.message.contains("60 log writers"), "{e}");
        assert!(e.message.contains("lets it start 100"), "{e}");
        assert!(e.message.contains("log_avg_msec"), "{e}");
        let e = check(&set("[a]\nnumjobs=101\nsize=1m\n"), &few).unwrap_err();
        assert!(e.message.contains("101 threads"), "{e}");
        assert!(!e.message.contains("writer"), "{e}");
        assert!(Limits::of_host().threads > 0);
    }

    #[test]
    fn meminfo_gives_memavailable_in_bytes() {
        let t = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(mem_available(t), Some(20_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn byte_counts_read_in_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(bytes(64 << 40), "64.0 TiB");
    }
}
