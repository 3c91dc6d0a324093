//! The plan: a `JobSet` checked across options and turned into what will
//! run, one `PlanJob` per job clone with its files, regions, block sizes and
//! limits decided, and the files the run will create or lay out. A plan is
//! immutable; building one touches nothing on disk beyond `stat`.

mod buffers;
mod build;
mod control;
mod errors;
mod files;
pub mod limits;

pub use build::build;
pub use control::{FlowSpec, LatencyTarget, SteadySpec, StridedZones};
pub use errors::ErrorPolicy;

use std::path::PathBuf;
use std::time::Duration;

use iolab_engine::file::FallocMode;
use iolab_engine::{EngineKind, EngineOpts, SyncMode};

use iolab_stats::{JobSetup, UnifiedRw};

use crate::gen::Seeds;
use iolab_spec::value::{BlockRange, Distribution, RwSpec, SplitEntry};
use iolab_spec::{Location, Opt};

/// Why a job set cannot run; reported as `LOCATION: job NAME: message` and
/// exit status 2, before anything is created.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: job `{job}`: {message}")]
pub struct PlanError {
    pub location: Location,
    pub job: String,
    pub message: String,
}

/// How the block size of each I/O is chosen in one direction.
#[derive(Clone, Debug, PartialEq)]
pub enum BsSpec {
    Fixed(u64),
    Range(BlockRange),
    Split(Vec<SplitEntry>),
}

impl BsSpec {
    pub fn min(&self) -> u64 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range(r) => r.min,
            BsSpec::Split(s) => s.iter().map(|e| e.bs).min().unwrap_or(0),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range(r) => r.max,
            BsSpec::Split(s) => s.iter().map(|e| e.bs).max().unwrap_or(0),
        }
    }
}

/// What the run must do to a file before the jobs start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Use the file as it is (a block device, or a file long enough).
    AsIs,
    /// Create or extend it to the size by writing incompressible data, so
    /// that reads touch real blocks ("Laying out IO file").
    Write,
    /// Create or extend it with the job's fallocate mode, without writing.
    Allocate,
    /// Nothing before the job: the job creates it when it opens it
    /// (`create_on_open=1` on a file that is only written).
    OnOpen,
}

/// A file the plan uses, shared by every job clone that names it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanFile {
    pub path: PathBuf,
    /// The size the jobs need: the end of the furthest region.
    pub size: u64,
    /// The size it has now, if it exists.
    pub existing: Option<u64>,
    pub block_device: bool,
    /// A character device (`/dev/null`, `/dev/zero`, as in fio's
    /// steadystate example): used as it is, never laid out, its cache
    /// never dropped, never removed.
    pub char_device: bool,
    pub layout: Layout,
    /// A `fill_device` job uses it: laying it out stops, without an error,
    /// when the filesystem is full.
    pub fill: bool,
}

/// One file of a job clone and the region of it the clone works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobFile {
    /// Index into `Plan::files`.
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// Random offset settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomSpec {
    /// Plain uniform offsets (also when `blockalign` is given, as in fio).
    pub norandommap: bool,
    /// The job's base seeds, shared by its clones.
    pub seeds: Seeds,
    pub distribution: Distribution,
    /// Percent of I/Os at random offsets in a random mode, per direction
    /// (read, write, trim; 100 by default).
    pub percentage_random: [u32; 3],
    /// `random_generator`.
    pub generator: crate::gen::taus::Generator,
}

/// Statistics switches.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsSpec {
    pub percentiles: Vec<f64>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    /// Bandwidth and IOPS sample windows.
    pub bw_avg: Duration,
    pub iops_avg: Duration,
    /// Bandwidth and IOPS samples are taken per I/O instead of per window,
    /// as fio takes them when its bandwidth or IOPS log records every I/O
    /// (`log_avg_msec=0`): bytes over the I/O's completion latency, and 1.
    pub bw_per_io: bool,
    pub iops_per_io: bool,
    /// `unified_rw_reporting`.
    pub unified_rw: UnifiedRw,
}

/// The log files a job clone writes (`write_bw_log`, `write_iops_log`,
/// `write_lat_log`, `write_hist_log`), in fio's names and formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSpec {
    /// File name prefixes of the logs asked for (the job's name when the
    /// option is given bare).
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    pub hist: Option<String>,
    /// `log_avg_msec`: 0 logs every I/O; N logs a mean per N ms (latency
    /// logs) or one entry per sample window (bandwidth and IOPS logs).
    pub avg_msec: u64,
    /// `log_hist_msec`: a histogram entry per direction this often (0:
    /// none, the file is left empty, as fio leaves it).
    pub hist_msec: u64,
    /// `log_offset`: entries carry the I/O's offset.
    pub offset: bool,
    /// `log_prio`: the priority column is the I/O priority value, in
    /// hexadecimal (otherwise 1 for the real-time class, else 0).
    pub prio: bool,
    /// `per_job_logs`: each clone writes files of its own, named with its
    /// thread number; otherwise the clones of a job append to one file.
    pub per_job: bool,
    /// fio's thread number of the clone: its place in the run, from 1.
    pub thread: u32,
}

impl LogSpec {
    /// Whether the clone's logs have a line per I/O, which a thread of
    /// their own writes (`log_avg_msec=0` and a bandwidth, IOPS or
    /// latency log).
    pub fn per_io(&self) -> bool {
        self.avg_msec == 0 && (self.bw.is_some() || self.iops.is_some() || self.lat.is_some())
    }

    /// The file of one log: `PREFIX_KIND.N.log`, or `PREFIX_KIND.log`
    /// without per_job_logs (KIND is bw, iops, slat, clat, lat or
    /// clat_hist).
    pub fn path(&self, prefix: &str, kind: &str) -> PathBuf {
        if self.per_job {
            PathBuf::from(format!("{prefix}_{kind}.{}.log", self.thread))
        } else {
            PathBuf::from(format!("{prefix}_{kind}.log"))
        }
    }

    /// Every file the clone's logs write, each with the option that asks
    /// for it.
    pub fn files(&self) -> Vec<(Opt, PathBuf)> {
        let logs: [(Opt, &Option<String>, &[&str]); 4] = [
            (Opt::WriteBwLog, &self.bw, &["bw"]),
            (Opt::WriteIopsLog, &self.iops, &["iops"]),
            (Opt::WriteLatLog, &self.lat, &["slat", "clat", "lat"]),
            (Opt::WriteHistLog, &self.hist, &["clat_hist"]),
        ];
        let mut out = Vec::new();
        for (opt, prefix, kinds) in logs {
            if let Some(p) = prefix {
                out.extend(kinds.iter().map(|k| (opt, self.path(p, k))));
            }
        }
        out
    }
}

/// Rate limits, minimum rates and think time.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PaceSpec {
    /// Bytes per second per direction (0: none). `rate_iops` is turned
    /// into bytes at the direction's smallest block size, as fio does.
    pub rate: [u64; 3],
    /// The job fails when a direction's bandwidth (bytes/s) or IOPS over
    /// a `rate_cycle` falls below these (0: no minimum).
    pub rate_min: [u64; 3],
    pub rate_iops_min: [u64; 3],
    /// The window the minimum rates are averaged over.
    pub rate_cycle: Duration,
    /// Exponential gaps (a Poisson process) instead of even ones.
    pub poisson: bool,
    pub thinktime: Duration,
    pub thinktime_spin: Duration,
    pub thinktime_blocks: u32,
}

impl PaceSpec {
    /// Whether any direction is rate limited.
    pub fn limits(&self) -> bool {
        self.rate.iter().any(|r| *r > 0)
    }

    /// Whether any direction has a minimum rate.
    pub fn has_minimum(&self) -> bool {
        self.rate_min
            .iter()
            .chain(&self.rate_iops_min)
            .any(|r| *r > 0)
    }
}

/// How the next file is chosen among a job clone's files
/// (`file_service_type`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileService {
    /// Switch to the next open file after this many I/Os.
    RoundRobin(u32),
    /// Finish a file before moving on to the next.
    Sequential,
    /// A file at random for every I/O.
    Random,
    /// A file drawn from fio's zipf generator with this theta (and
    /// center, when given), over `nrfiles << 10` ranges without hashing;
    /// a file is never done (fio resets it), so only the job's bytes end
    /// it.
    Zipf(f64, Option<f64>),
    /// As `Zipf`, from fio's pareto generator with this h.
    Pareto(f64, Option<f64>),
    /// As `Zipf`, from fio's normal generator with this deviation (percent).
    Normal(f64, Option<f64>),
}

impl FileService {
    /// fio's non-uniform file choices (`__FIO_FSERVICE_NONUNIFORM`).
    pub fn skewed(&self) -> bool {
        matches!(
            self,
            FileService::Zipf(..) | FileService::Pareto(..) | FileService::Normal(..)
        )
    }
}

pub use iolab_spec::options::choices::{ExitWhat, Fadvise};

/// One job clone, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanJob {
    pub name: String,
    /// Clone number (fio's $jobnum).
    pub clone: u32,
    /// Index of the job in the JobSet.
    pub spec: usize,
    pub groupid: u32,
    pub engine: EngineKind,
    /// Engine settings fio keeps with the engine's own options (hipri,
    /// fixedbufs, registerfiles, sqthread_poll, sqthread_poll_cpu, cpuio's
    /// cycle and mode). The worker fills in the queue depth, buffer size
    /// and alignment, and `fixedbufs` when the job left it unset.
    pub engine_opts: EngineOpts,
    pub iodepth: u32,
    pub iodepth_batch: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub files: Vec<JobFile>,
    pub rw: RwSpec,
    pub rwmixread: u32,
    pub bs: [BsSpec; 3],
    /// Offset granularity per direction.
    pub blockalign: [u64; 3],
    /// Bytes of I/O to do per loop (fio's io_size).
    pub io_size: u64,
    /// `io_size` was given: fio starts runs of the job past its `loops`
    /// while its bytes are short of it (a run that ends at its files' end
    /// short of `size`).
    pub io_size_given: bool,
    pub number_ios: Option<u64>,
    pub loops: u32,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub startdelay: Duration,
    /// Clones (indexes into `Plan::jobs`) that must have finished before
    /// this one starts (`wait_for`: every clone of the named earlier job).
    pub wait_for: Vec<usize>,
    /// Files are created by the job's open, not before it.
    pub create_on_open: bool,
    /// A missing file may be created (`allow_file_create`).
    pub allow_file_create: bool,
    /// The files are removed and made afresh before every loop but the
    /// first.
    pub unlink_each_loop: bool,
    pub file_service: FileService,
    /// Most files open at once (at least 1, at most the clone's files).
    pub openfiles: u32,
    pub direct: bool,
    pub sync: SyncMode,
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub fsync_on_close: bool,
    pub invalidate: bool,
    /// Read each file's region into the page cache before the job starts
    /// (turns `invalidate` off).
    pub pre_read: bool,
    /// Write-only jobs lay their files out with data first.
    pub overwrite: bool,
    /// The I/O region starts at the file's end as it was when planned.
    pub file_append: bool,
    /// Write until the filesystem is full: ENOSPC or EDQUOT on a write
    /// ends the job without an error (`fill_device`).
    pub fill_device: bool,
    pub unlink: bool,
    pub fadvise: Fadvise,
    pub fallocate: FallocMode,
    pub random: RandomSpec,
    pub pace: PaceSpec,
    pub stats: StatsSpec,
    /// The log files it writes, if any.
    pub logs: Option<LogSpec>,
    /// The job's results are reported (fio's `stats`; with `stats=0` the
    /// job runs but is left out of the jobs and groups reported).
    pub reported: bool,
    pub group_reporting: bool,
    /// The CPUs the clone's thread is pinned to (`cpus_allowed`, one of
    /// them with `cpus_allowed_policy=split`); None leaves it free.
    pub cpus: Option<Vec<u32>>,
    /// Added to the clone thread's nice value when it starts (`nice`).
    pub nice: i32,
    pub exitall: bool,
    pub exit_what: ExitWhat,
    /// Which I/O errors the job goes on after (`continue_on_error`,
    /// `ignore_error`).
    pub errors: ErrorPolicy,
    /// `exec`: the program the engine runs.
    pub exec: Option<iolab_engine::ExecSpec>,
    /// `cpuio` with `exit_on_io_done`: the clones (indexes into
    /// `Plan::jobs`) that do I/O; the job stops when all have finished.
    pub stop_after: Vec<usize>,
    /// `zonemode=strided`: where the job's I/O goes zone by zone.
    pub zones: Option<StridedZones>,
    /// `flow`: the job's share of the I/Os of its flow group.
    pub flow: Option<FlowSpec>,
    /// `latency_target`: the queue depth is searched for, up to iodepth.
    pub latency: Option<LatencyTarget>,
    /// `steadystate` with `ss_dur`: the job ends once steady.
    pub steady: Option<SteadySpec>,
    /// What write buffers hold (the data buffer options).
    pub buffers: crate::data::BufferSpec,
    /// Verified writes and reads, when `verify` is set.
    pub verify: Option<crate::verify::VerifySpec>,
    pub description: String,
    /// The options of the job's own section, for fio's "job options".
    pub options: Vec<(String, String)>,
}

/// The job's engine. The option table's choices are the engine kinds, so
/// every word the parser accepts names one; psync is fio's default.
pub(crate) fn engine_of(job: &iolab_spec::JobSpec) -> EngineKind {
    job.choice(iolab_spec::Opt::Ioengine)
        .and_then(EngineKind::from_name)
        .unwrap_or(EngineKind::Psync)
}

impl PlanJob {
    /// The most runs of the job fio makes: `loops`; one for a time_based
    /// job, which its runtime ends, unless `number_ios` ends each run
    /// first: fio then starts run after run until the runtime is over.
    pub fn runs(&self) -> u32 {
        match (self.time_based, self.number_ios) {
            (true, None) => 1,
            (true, Some(_)) => u32::MAX,
            (false, _) => self.loops.max(1),
        }
    }

    /// What the reports echo of the job's set-up (fio's job header line).
    pub fn setup(&self) -> JobSetup {
        let bs = |b: &BsSpec| (b.min(), b.max());
        JobSetup {
            rw: self.rw.mode.name().to_string(),
            bs: [bs(&self.bs[0]), bs(&self.bs[1]), bs(&self.bs[2])],
            ioengine: self.engine.name().to_string(),
            iodepth: self.iodepth,
            percentile_precision: JobSetup::precision_of(&self.stats.percentiles),
            percentile_list: self.stats.percentiles.clone(),
            clat_percentiles: self.stats.clat_percentiles,
            lat_percentiles: self.stats.lat_percentiles,
            slat_percentiles: self.stats.slat_percentiles,
            continue_on_error: self.errors.any(),
            unified_rw: self.stats.unified_rw,
            latency_target_ns: self.latency.map_or(0, |l| l.target.as_nanos() as u64),
            latency_window_us: self.latency.map_or(0, |l| l.window.as_micros() as u64),
            latency_percentile: self.latency.map_or(100.0, |l| l.percentile),
        }
    }

    /// The largest block size in any direction (buffer size).
    pub fn max_bs(&self) -> u64 {
        self.bs.iter().map(BsSpec::max).max().unwrap_or(0)
    }
}

/// Everything a run needs, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub jobs: Vec<PlanJob>,
    pub files: Vec<PlanFile>,
    /// Jobs that start together: a job with `stonewall` waits for every job
    /// before it, so it starts a new phase.
    pub phases: Vec<std::ops::Range<usize>>,
    pub groups: u32,
    /// The options the first job took from `[global]`, for fio's "global
    /// options".
    pub global_options: Vec<(String, String)>,
}
