//! `JobSet` -> `Plan`: clones expanded, files named and sized, regions
//! placed, and the checks across options that fio makes before it starts
//! (a block size larger than the region, an offset beyond the end of a file,
//! a size that is missing, direct I/O with a block size no device takes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use iolab_spec::value::{Distribution, FileService as FileServiceValue, PerDir, SizeValue};
use iolab_spec::{JobSet, JobSpec, Opt, Value};

use super::buffers::{buffer_spec, verify_only_mode, verify_spec};
use super::files::{file_paths, on_disk, resolve_size, OnDisk};
use iolab_engine::file::FallocMode;
use iolab_engine::{EngineKind, EngineOpts, SyncMode};
use iolab_spec::options::choices::{
    ContinueOnError, CpuMode, CpusAllowedPolicy, Fallocate, RateProcess, SyncWrites,
    UnifiedRwReporting, ZoneMode,
};

use crate::gen::{Rng, Seeds, Stream};
use iolab_stats::UnifiedRw;

use super::{
    BsSpec, ErrorPolicy, Fadvise, FileService, JobFile, Layout, LogSpec, PaceSpec, Plan, PlanError,
    PlanFile, PlanJob, RandomSpec, StatsSpec,
};

/// The logical block size every device takes; direct I/O needs multiples.
const SECTOR: u64 = 512;

pub(super) struct Ctx<'a> {
    pub(super) job: &'a JobSpec,
}

impl Ctx<'_> {
    pub(super) fn err(&self, opt: Option<Opt>, message: impl Into<String>) -> PlanError {
        let location = opt
            .and_then(|o| self.job.origin(o).cloned())
            .unwrap_or_else(|| self.job.location.clone());
        PlanError {
            location,
            job: self.job.name.clone(),
            message: message.into(),
        }
    }
}

/// Builds the plan of a job set, reading only file metadata.
pub fn build(set: &JobSet) -> Result<Plan, PlanError> {
    // What the set would take is checked before any of it is made.
    super::limits::check(set, &super::limits::Limits::of_host())?;
    let groups = set.groups();
    let mut jobs = Vec::new();
    let mut files: Vec<PlanFile> = Vec::new();
    let mut by_path: HashMap<PathBuf, usize> = HashMap::new();
    let mut phases = Vec::new();
    let mut phase_start = 0;

    for (spec_index, job) in set.jobs.iter().enumerate() {
        let cx = Ctx { job };
        if job.flag(Opt::Stonewall) && !jobs.is_empty() {
            phases.push(phase_start..jobs.len());
            phase_start = jobs.len();
        }
        for clone in 0..job.numjobs() {
            let mut pj = job_settings(&cx, spec_index, clone, groups[spec_index])?;
            pj.cpus = cpus_allowed(&cx, jobs.len())?;
            if let Some(logs) = &mut pj.logs {
                logs.thread = jobs.len() as u32 + 1;
                no_linked_logs(&cx, logs)?;
            }
            pj.wait_for = waitees(&cx, set, spec_index, &jobs)?;
            let (io_total, regions) = place_files(&cx, clone, &pj, &mut files, &mut by_path)?;
            pj.openfiles = match pj.openfiles {
                0 => regions.len() as u32,
                n => n.min(regions.len() as u32),
            };
            pj.files = regions;
            pj.io_size = io_total;
            // fio writes its verify dumps under `--aux-path` when given.
            if let (Some(aux), Some(Some(dir))) =
                (&set.aux_path, pj.verify.as_mut().map(|v| v.dump.as_mut()))
            {
                dir.clone_from(aux);
            }
            jobs.push(pj);
        }
    }
    phases.push(phase_start..jobs.len());
    stop_cpuio_after_io(set, &mut jobs)?;
    super::control::steadystate_consistent(set, &jobs)?;
    super::buffers::count_dedupe_threads(&mut jobs);
    let global_options = set.global_echo.clone();
    Ok(Plan {
        jobs,
        files,
        phases,
        groups: set.group_count() as u32,
        global_options,
    })
}

pub(super) fn per_dir_bs(cx: &Ctx) -> Result<[BsSpec; 3], PlanError> {
    let fixed = cx.job.per_dir(Opt::Bs);
    let ranges = match cx.job.get(Opt::Bsrange) {
        Some(Value::Ranges(r)) => r.clone(),
        _ => PerDir::default(),
    };
    let splits = match cx.job.get(Opt::Bssplit) {
        Some(Value::Split(s)) => s.clone(),
        _ => PerDir::default(),
    };
    let pick = |f: Option<u64>, r: Option<iolab_spec::value::BlockRange>, s: Option<Vec<_>>| {
        if let Some(s) = s {
            BsSpec::Split(s)
        } else if let Some(r) = r {
            BsSpec::Range(r)
        } else {
            BsSpec::Fixed(f.unwrap_or(4096))
        }
    };
    let out = [
        pick(fixed.read, ranges.read, splits.read),
        pick(fixed.write, ranges.write, splits.write),
        pick(fixed.trim, ranges.trim, splits.trim),
    ];
    for b in &out {
        if b.min() == 0 {
            return Err(cx.err(Some(Opt::Bs), "block size 0"));
        }
        if b.max() > u32::MAX as u64 {
            return Err(cx.err(
                Some(Opt::Bs),
                format!("block size {} is above the 4 GiB an I/O can carry", b.max()),
            ));
        }
    }
    Ok(out)
}

fn duration(job: &JobSpec, opt: Opt) -> Duration {
    Duration::from_micros(job.time_us(opt).unwrap_or(0))
}

/// `n`, or `depth` when `n` is 0 or above it.
fn or_depth(n: u32, depth: u32) -> u32 {
    if n == 0 || n > depth {
        depth
    } else {
        n
    }
}

pub(super) fn count(job: &JobSpec, opt: Opt) -> u32 {
    job.int(opt).unwrap_or(0).clamp(0, u32::MAX as i64) as u32
}

fn job_settings(cx: &Ctx, spec: usize, clone: u32, groupid: u32) -> Result<PlanJob, PlanError> {
    let job = cx.job;
    let bs = per_dir_bs(cx)?;
    let blockalign = blockalign(job, &bs);
    let direct = job.flag(Opt::Direct);
    let iodepth = count(job, Opt::Iodepth).max(1);
    let runtime = duration(job, Opt::Runtime);
    let engine = super::engine_of(job);
    // An engine that does no I/O runs until its runtime is over.
    let time_based = job.flag(Opt::TimeBased) || engine.no_io();
    let (noio_pace, exec) = cross_checks(cx, &bs, engine, runtime)?;
    let sync = sync_mode(job);
    let fadvise: Fadvise = job.chosen(Opt::FadviseHint).unwrap_or_default();
    let fallocate = fallocate_mode(job);
    let pace = pace_spec(cx, &bs, noio_pace)?;
    let logs = log_spec(job);

    let zones = super::control::strided_zones(cx)?;
    let flow = super::control::flow(cx);
    let latency = super::control::latency_target(cx)?;
    let steady = super::control::steadystate(cx)?;
    let verify = verify_spec(cx, &bs)?;
    let buffers = buffer_spec(cx, verify.is_some());
    let mut rw = job.rw();
    if job.flag(Opt::VerifyOnly) {
        rw.mode = verify_only_mode(cx, rw.mode, verify.is_some(), time_based)?;
    }

    Ok(PlanJob {
        name: job.name.clone(),
        clone,
        spec,
        groupid,
        engine,
        engine_opts: engine_opts(job),
        iodepth,
        // fio's rules: a batch of 0 is the whole queue; the most to reap
        // defaults to the fewest; a low-water mark of 0 is the full queue.
        iodepth_batch: or_depth(count(job, Opt::IodepthBatch), iodepth),
        iodepth_batch_complete_min: count(job, Opt::IodepthBatchCompleteMin).clamp(1, iodepth),
        iodepth_batch_complete_max: count(job, Opt::IodepthBatchCompleteMax)
            .max(count(job, Opt::IodepthBatchCompleteMin))
            .clamp(1, iodepth),
        iodepth_low: or_depth(count(job, Opt::IodepthLow), iodepth),
        files: Vec::new(),
        rw,
        rwmixread: count(job, Opt::Rwmixread).min(100),
        bs,
        blockalign,
        io_size: 0,
        io_size_given: io_size_of(job).is_some(),
        number_ios: job.int(Opt::NumberIos).filter(|n| *n > 0).map(|n| n as u64),
        loops: count(job, Opt::Loops).max(1),
        runtime: (!runtime.is_zero()).then_some(runtime),
        time_based,
        ramp_time: duration(job, Opt::RampTime),
        startdelay: duration(job, Opt::Startdelay),
        wait_for: Vec::new(),
        create_on_open: job.flag(Opt::CreateOnOpen),
        allow_file_create: job.flag(Opt::AllowFileCreate),
        unlink_each_loop: job.flag(Opt::UnlinkEachLoop),
        file_service: file_service(cx)?,
        openfiles: count(job, Opt::Openfiles),
        direct,
        sync,
        fsync: count(job, Opt::Fsync),
        fdatasync: count(job, Opt::Fdatasync),
        end_fsync: job.flag(Opt::EndFsync),
        fsync_on_close: job.flag(Opt::FsyncOnClose),
        invalidate: job.flag(Opt::Invalidate),
        pre_read: job.flag(Opt::PreRead),
        overwrite: job.flag(Opt::Overwrite),
        file_append: job.flag(Opt::FileAppend),
        fill_device: job.flag(Opt::FillDevice),
        unlink: job.flag(Opt::Unlink),
        fadvise,
        fallocate,
        random: random_spec(job),
        pace,
        stats: stats_spec(job, logs.as_ref()),
        logs,
        reported: job.flag(Opt::Stats),
        group_reporting: job.flag(Opt::GroupReporting),
        cpus: None,
        nice: job.int(Opt::Nice).unwrap_or(0).clamp(-20, 19) as i32,
        exitall: job.flag(Opt::Exitall),
        exit_what: job.chosen(Opt::ExitWhat).unwrap_or_default(),
        errors: error_policy(cx)?,
        exec,
        stop_after: Vec::new(),
        zones,
        flow,
        latency,
        steady,
        buffers,
        verify,
        description: job.text(Opt::Description).unwrap_or_default(),
        options: job.echo.clone(),
    })
}

/// Where each direction's offsets align: `ba`, else the smallest block size.
fn blockalign(job: &JobSpec, bs: &[BsSpec; 3]) -> [u64; 3] {
    let ba = job.per_dir(Opt::Ba);
    [
        ba.read.unwrap_or(bs[0].min()),
        ba.write.unwrap_or(bs[1].min()),
        ba.trim.unwrap_or(bs[2].min()),
    ]
}

fn sync_mode(job: &JobSpec) -> SyncMode {
    match job.chosen(Opt::Sync) {
        Some(SyncWrites::Sync) => SyncMode::Sync,
        Some(SyncWrites::Dsync) => SyncMode::Dsync,
        Some(SyncWrites::None) | None => SyncMode::None,
    }
}

fn fallocate_mode(job: &JobSpec) -> FallocMode {
    match job.chosen(Opt::Fallocate) {
        Some(Fallocate::None) => FallocMode::None,
        Some(Fallocate::Native) => FallocMode::Native,
        Some(Fallocate::Posix) => FallocMode::Posix,
        Some(Fallocate::Keep) => FallocMode::Keep,
        Some(Fallocate::Truncate) => FallocMode::Truncate,
        None => FallocMode::default(),
    }
}

/// continue_on_error and ignore_error, as the worker applies them.
fn error_policy(cx: &Ctx) -> Result<ErrorPolicy, PlanError> {
    let job = cx.job;
    ErrorPolicy::new(
        job.chosen(Opt::ContinueOnError)
            .unwrap_or(ContinueOnError::None),
        job.text(Opt::IgnoreError).as_deref(),
        given_after(job, Opt::ContinueOnError, Opt::IgnoreError),
    )
    .map_err(|e| cx.err(Some(Opt::IgnoreError), e))
}

/// The checks of block sizes, engine and runtime against each other:
/// direct=1 with block sizes no device takes, an engine that does no I/O
/// or a time_based job without a runtime to end it, mmap with direct=1.
/// Returns what an engine that does no I/O takes from the job (see
/// `noio_settings`).
fn cross_checks(
    cx: &Ctx,
    bs: &[BsSpec; 3],
    engine: EngineKind,
    runtime: Duration,
) -> Result<(Option<Duration>, Option<iolab_engine::ExecSpec>), PlanError> {
    let job = cx.job;
    if job.flag(Opt::Direct) {
        for (b, name) in bs.iter().zip(["read", "write", "trim"]) {
            if b.min() % SECTOR != 0 || b.max() % SECTOR != 0 {
                return Err(cx.err(
                    Some(Opt::Bs),
                    format!(
                        "direct=1 needs block sizes that are multiples of {SECTOR} bytes (the smallest logical block a device takes); the {name} block size is {}",
                        b.min()
                    ),
                ));
            }
        }
    }
    let noio = engine.no_io();
    let time_based = job.flag(Opt::TimeBased) || noio;
    if noio && runtime.is_zero() && !(engine == EngineKind::Cpuio && job.flag(Opt::ExitOnIoDone)) {
        return Err(cx.err(
            Some(Opt::Ioengine),
            format!(
                "ioengine={engine} does no I/O, so only its runtime ends it (fio runs such a job until it is killed): give runtime={}",
                if engine == EngineKind::Cpuio {
                    ", or exit_on_io_done=1 beside a job that does I/O"
                } else {
                    ""
                }
            ),
        ));
    }
    let noio_settings = noio_settings(cx, engine, runtime)?;
    if time_based && runtime.is_zero() && !noio {
        return Err(cx.err(
            Some(Opt::TimeBased),
            "time_based needs runtime= (otherwise the job would never end)",
        ));
    }
    if engine == EngineKind::Mmap && job.flag(Opt::Direct) {
        return Err(cx.err(
            Some(Opt::Direct),
            "ioengine=mmap moves data through the page cache and cannot use direct=1; \
             use direct=0, or ioengine=psync with direct=1",
        ));
    }
    Ok(noio_settings)
}

/// The engine's own options (io_uring's, cpuio's, the vectored calls).
fn engine_opts(job: &JobSpec) -> EngineOpts {
    EngineOpts {
        hipri: job.flag(Opt::Hipri),
        fixedbufs: job.get(Opt::Fixedbufs).map(|_| job.flag(Opt::Fixedbufs)),
        registerfiles: job
            .get(Opt::Registerfiles)
            .map(|_| job.flag(Opt::Registerfiles)),
        sqthread_poll: job.flag(Opt::SqthreadPoll),
        sqthread_poll_cpu: job
            .get(Opt::SqthreadPollCpu)
            .and_then(|_| job.int(Opt::SqthreadPollCpu))
            .map(|n| n.clamp(0, u32::MAX as i64) as u32),
        vectored: job.int(Opt::Nonvectored) == Some(0),
        force_async: job
            .int(Opt::ForceAsync)
            .unwrap_or(0)
            .clamp(0, u32::MAX as i64) as u32,
        cpu_cycle_us: job
            .int(Opt::Cpuchunks)
            .unwrap_or(50_000)
            .clamp(1, u32::MAX as i64) as u32,
        cpu_qsort: job.chosen(Opt::Cpumode) == Some(CpuMode::Qsort),
        ..EngineOpts::default()
    }
}

/// The job's seeds and how its random offsets are drawn.
fn random_spec(job: &JobSpec) -> RandomSpec {
    // Only a randseed the job gives counts: the table's default (fio's
    // 0x89) is what the repeatable seeds already start from, and taking
    // it as given would make randrepeat=0 repeat too.
    let randseed = match job.get(Opt::Randseed) {
        Some(Value::Int(n)) => Some(*n as u64),
        _ => None,
    };
    RandomSpec {
        norandommap: job.flag(Opt::Norandommap) || job.get(Opt::Ba).is_some(),
        seeds: Seeds::resolve(
            job.flag(Opt::Randrepeat),
            job.flag(Opt::Allrandrepeat),
            randseed,
        ),
        distribution: match job.value(Opt::RandomDistribution) {
            Some(Value::Distribution(d)) => d,
            _ => Distribution::Random,
        },
        percentage_random: {
            let p = job.per_dir(Opt::PercentageRandom);
            [p.read, p.write, p.trim].map(|v| v.unwrap_or(100).min(100) as u32)
        },
        generator: crate::gen::taus::Generator::of(
            job.chosen(Opt::RandomGenerator).unwrap_or_default(),
        ),
    }
}

/// The job's rates, minimum rates and think time; `noio_pace` is the
/// pause after each I/O of an engine that does no I/O, which stands for
/// the think time.
fn pace_spec(
    cx: &Ctx,
    bs: &[BsSpec; 3],
    noio_pace: Option<Duration>,
) -> Result<PaceSpec, PlanError> {
    let job = cx.job;
    let per3 = |opt: Opt| {
        let p = job.per_dir(opt);
        [
            p.read.unwrap_or(0),
            p.write.unwrap_or(0),
            p.trim.unwrap_or(0),
        ]
    };
    Ok(PaceSpec {
        rate: rates(cx, bs)?,
        rate_min: per3(Opt::RateMin),
        rate_iops_min: per3(Opt::RateIopsMin),
        rate_cycle: ms_or(job, Opt::RateCycle, 1000),
        poisson: job.chosen(Opt::RateProcess) == Some(RateProcess::Poisson),
        thinktime: noio_pace.unwrap_or_else(|| duration(job, Opt::Thinktime)),
        thinktime_spin: if noio_pace.is_some() {
            Duration::ZERO
        } else {
            duration(job, Opt::ThinktimeSpin)
        },
        thinktime_blocks: if noio_pace.is_some() {
            1
        } else {
            count(job, Opt::ThinktimeBlocks).max(1)
        },
    })
}

/// Milliseconds option `opt`, `dflt` when not given, at least 1.
fn ms_or(job: &JobSpec, opt: Opt, dflt: i64) -> Duration {
    Duration::from_millis(job.int(opt).unwrap_or(dflt).max(1) as u64)
}

/// What the job measures and reports: percentiles, the latencies it
/// keeps, the sample windows (which the logs in `logs` may set).
fn stats_spec(job: &JobSpec, logs: Option<&LogSpec>) -> StatsSpec {
    let gtod_reduce = job.flag(Opt::GtodReduce);
    let percentiles = match job.value(Opt::PercentileList) {
        Some(Value::Floats(f)) => f,
        _ => Vec::new(),
    };
    // fio's log_avg_msec: a bandwidth (IOPS) log that averages sets the
    // sample window, unless bwavgtime (iopsavgtime) is given; one that
    // records every I/O makes the samples per I/O too.
    let avg_msec = logs.map_or(0, |l| l.avg_msec);
    let window = |log: bool, opt: Opt| match (log, avg_msec) {
        (true, n) if n > 0 && job.get(opt).is_none() => Duration::from_millis(n),
        _ => ms_or(job, opt, 500),
    };
    let per_io = |log: bool| log && avg_msec == 0;
    let (bw_log, iops_log) = logs.map_or((false, false), |l| (l.bw.is_some(), l.iops.is_some()));
    StatsSpec {
        percentiles,
        clat_percentiles: job.flag(Opt::ClatPercentiles) && !gtod_reduce,
        lat_percentiles: job.flag(Opt::LatPercentiles) && !gtod_reduce,
        slat_percentiles: job.flag(Opt::SlatPercentiles) && !gtod_reduce,
        disable_lat: job.flag(Opt::DisableLat) || gtod_reduce,
        disable_clat: job.flag(Opt::DisableClat) || gtod_reduce,
        disable_slat: job.flag(Opt::DisableSlat) || gtod_reduce,
        disable_bw: job.flag(Opt::DisableBwMeasurement) || gtod_reduce,
        bw_avg: window(bw_log, Opt::Bwavgtime),
        iops_avg: window(iops_log, Opt::Iopsavgtime),
        bw_per_io: per_io(bw_log),
        iops_per_io: per_io(iops_log),
        unified_rw: match job.chosen(Opt::UnifiedRwReporting) {
            Some(UnifiedRwReporting::Mixed) => UnifiedRw::Mixed,
            Some(UnifiedRwReporting::Both) => UnifiedRw::Both,
            Some(UnifiedRwReporting::None) | None => UnifiedRw::None,
        },
    }
}

/// Why `zonemode=zbd` cannot run on `path`: it needs a zoned block
/// device, and iolab does not drive one yet.
fn zbd_refusal(path: &Path, block_device: bool) -> String {
    let shown = path.display();
    match crate::devuse::zoned_model(path) {
        _ if !block_device => format!(
            "zonemode=zbd needs a zoned block device, and `{shown}` is not a block device"
        ),
        Some(m) if m == "none" => format!(
            "zonemode=zbd needs a zoned block device, and `{shown}` is not zoned (its queue/zoned is `none`)"
        ),
        Some(m) => format!(
            "zonemode=zbd: `{shown}` is zoned ({m}), but iolab does not implement zoned I/O yet"
        ),
        None => format!(
            "zonemode=zbd needs a zoned block device, and the kernel says no zoned model for `{shown}`"
        ),
    }
}

/// Whether the job text gives `a` after `b` (both given, on lines of one
/// file or in arguments of the command line).
fn given_after(job: &JobSpec, a: Opt, b: Opt) -> bool {
    use iolab_spec::Location::{Arg, File};
    match (job.origin(a), job.origin(b)) {
        (Some(File { path: p, line: x }), Some(File { path: q, line: y })) => p == q && x > y,
        (Some(Arg { index: x, .. }), Some(Arg { index: y, .. })) => x > y,
        _ => false,
    }
}

/// What the engines that do no I/O take from the job, as fio's set it up:
/// the pause after each I/O (cpuio: what makes the burst `cpuload`
/// percent of the time; exec: 50 ms), and exec's program.
fn noio_settings(
    cx: &Ctx,
    engine: EngineKind,
    runtime: Duration,
) -> Result<(Option<Duration>, Option<iolab_engine::ExecSpec>), PlanError> {
    let job = cx.job;
    match engine {
        EngineKind::Cpuio => {
            let load = job.int(Opt::Cpuload).unwrap_or(0).clamp(0, 100) as u64;
            if load == 0 {
                return Err(cx.err(
                    Some(Opt::Cpuload),
                    "ioengine=cpuio needs cpuload= (the percent of a CPU to keep busy, 1 to 100)",
                ));
            }
            let cycle = job.int(Opt::Cpuchunks).unwrap_or(50_000).max(1) as u64;
            Ok((
                Some(Duration::from_micros(cycle * (100 - load) / load)),
                None,
            ))
        }
        EngineKind::Exec => {
            let program = job.text(Opt::Program).unwrap_or_default();
            if program.is_empty() {
                return Err(cx.err(
                    Some(Opt::Ioengine),
                    "ioengine=exec needs program= (the program to run beside the job)",
                ));
            }
            let args = iolab_engine::ExecSpec::split_arguments(
                &job.text(Opt::Arguments).unwrap_or_default(),
                runtime,
                &job.name,
            );
            let redirect = job.flag(Opt::StdRedirect).then(|| {
                (
                    PathBuf::from(format!("{}.stdout", job.name)),
                    PathBuf::from(format!("{}.stderr", job.name)),
                )
            });
            let spec = iolab_engine::ExecSpec {
                program,
                args,
                redirect,
                runtime,
                grace: Duration::from_secs(job.int(Opt::GraceTime).unwrap_or(1).max(0) as u64),
            };
            Ok((Some(Duration::from_millis(50)), Some(spec)))
        }
        _ => Ok((None, None)),
    }
}

/// `exit_on_io_done`: a cpuio clone stops once every clone that does I/O
/// has finished. One without a runtime needs such a clone, or it would
/// never end.
fn stop_cpuio_after_io(set: &JobSet, jobs: &mut [PlanJob]) -> Result<(), PlanError> {
    let io: Vec<usize> = (0..jobs.len())
        .filter(|&i| !jobs[i].engine.no_io())
        .collect();
    for pj in jobs.iter_mut() {
        let job = &set.jobs[pj.spec];
        if pj.engine != EngineKind::Cpuio || !job.flag(Opt::ExitOnIoDone) {
            continue;
        }
        if io.is_empty() && pj.runtime.is_none() {
            return Err(Ctx { job }.err(
                Some(Opt::ExitOnIoDone),
                "exit_on_io_done=1 waits for the jobs that do I/O, and there are none: give runtime=",
            ));
        }
        pj.stop_after = io.clone();
    }
    Ok(())
}

/// The logs the job writes: None when it asks for none. A bare
/// `write_*_log` takes the job's name as the prefix, as fio does.
pub(super) fn log_spec(job: &JobSpec) -> Option<LogSpec> {
    let prefix = |opt: Opt| {
        job.text(opt)
            .map(|p| if p.is_empty() { job.name.clone() } else { p })
    };
    let msec = |opt: Opt| job.int(opt).unwrap_or(0).max(0) as u64;
    let spec = LogSpec {
        bw: prefix(Opt::WriteBwLog),
        iops: prefix(Opt::WriteIopsLog),
        lat: prefix(Opt::WriteLatLog),
        hist: prefix(Opt::WriteHistLog),
        avg_msec: msec(Opt::LogAvgMsec),
        hist_msec: msec(Opt::LogHistMsec),
        offset: job.flag(Opt::LogOffset),
        prio: job.flag(Opt::LogPrio),
        per_job: job.flag(Opt::PerJobLogs),
        thread: 0,
    };
    (spec.bw.is_some() || spec.iops.is_some() || spec.lat.is_some() || spec.hist.is_some())
        .then_some(spec)
}

/// Refuses a log file whose name is a symbolic link the rule of
/// [`crate::links`] does not follow: another user's link in a sticky,
/// world-writable directory, where iolab (often root) would truncate the
/// file it points to. The worker opens the logs by the same rule (a link
/// planted after this check is judged there).
fn no_linked_logs(cx: &Ctx, logs: &LogSpec) -> Result<(), PlanError> {
    for (opt, path) in logs.files() {
        if let Err(e) = crate::links::resolve(&path) {
            return Err(cx.err(Some(opt), format!("log file `{}`: {e}", path.display())));
        }
    }
    Ok(())
}

/// The rate limit of each direction in bytes per second: `rate`, or
/// `rate_iops` at the direction's smallest block size (fio's conversion).
/// fio refuses a direction with both a byte and an IOPS setting, and a
/// minimum above the limit.
fn rates(cx: &Ctx, bs: &[BsSpec; 3]) -> Result<[u64; 3], PlanError> {
    let job = cx.job;
    let rate = job.per_dir(Opt::Rate);
    let rate_min = job.per_dir(Opt::RateMin);
    let iops = job.per_dir(Opt::RateIops);
    let iops_min = job.per_dir(Opt::RateIopsMin);
    let mut out = [0u64; 3];
    for (d, name) in ["reads", "writes", "trims"].iter().enumerate() {
        let get = |p: &PerDir<u64>| match d {
            0 => p.read.unwrap_or(0),
            1 => p.write.unwrap_or(0),
            _ => p.trim.unwrap_or(0),
        };
        let (r, rmin, i, imin) = (get(&rate), get(&rate_min), get(&iops), get(&iops_min));
        if (r > 0 || rmin > 0) && (i > 0 || imin > 0) {
            return Err(cx.err(
                Some(Opt::RateIops),
                format!("rate and rate_iops are mutually exclusive (both given for {name})"),
            ));
        }
        if (r > 0 && rmin > r) || (i > 0 && imin > i) {
            let opt = if rmin > 0 {
                Opt::RateMin
            } else {
                Opt::RateIopsMin
            };
            return Err(cx.err(
                Some(opt),
                format!("the minimum rate for {name} is above its rate limit"),
            ));
        }
        out[d] = if r > 0 {
            r
        } else {
            i.saturating_mul(bs[d].min())
        };
    }
    Ok(out)
}

/// The clones planned so far that `wait_for` names: every clone of the
/// jobs before this one with that name. fio refuses a name that no earlier
/// job has (a later job's included) and the job's own name.
fn waitees(
    cx: &Ctx,
    set: &JobSet,
    spec: usize,
    planned: &[PlanJob],
) -> Result<Vec<usize>, PlanError> {
    let Some(name) = cx.job.text(Opt::WaitFor).filter(|n| !n.is_empty()) else {
        return Ok(Vec::new());
    };
    if name == cx.job.name {
        return Err(cx.err(
            Some(Opt::WaitFor),
            format!("wait_for={name}: a job cannot wait for itself"),
        ));
    }
    if !set.jobs[..spec].iter().any(|j| j.name == name) {
        return Err(cx.err(
            Some(Opt::WaitFor),
            format!(
                "wait_for={name}: no job before this one is named `{name}` (the job waited for must come first)"
            ),
        ));
    }
    Ok(planned
        .iter()
        .enumerate()
        .filter(|(_, j)| j.name == name)
        .map(|(i, _)| i)
        .collect())
}

/// The CPUs of the clone that is thread `thread` of the run (0-based, in
/// start order): the whole `cpus_allowed` set, or with
/// `cpus_allowed_policy=split` its CPU number `thread` modulo the set's
/// size, as fio numbers its threads across jobs. A CPU the machine does
/// not have is refused, as fio refuses it when it reads the option.
fn cpus_allowed(cx: &Ctx, thread: usize) -> Result<Option<Vec<u32>>, PlanError> {
    let Some(Value::Cpus(list)) = cx.job.get(Opt::CpusAllowed) else {
        return Ok(None);
    };
    let have = iolab_engine::host::configured_cpus();
    if let Some(&cpu) = list.0.iter().find(|&&c| u64::from(c) >= have) {
        return Err(cx.err(
            Some(Opt::CpusAllowed),
            format!(
                "cpus_allowed: CPU {cpu} is beyond this machine's CPUs (0-{})",
                have.saturating_sub(1)
            ),
        ));
    }
    let cpus = &list.0;
    if cpus.is_empty() {
        return Ok(None);
    }
    Ok(Some(match cx.job.chosen(Opt::CpusAllowedPolicy) {
        Some(CpusAllowedPolicy::Split) => vec![cpus[thread % cpus.len()]],
        Some(CpusAllowedPolicy::Shared) | None => cpus.clone(),
    }))
}

/// Bytes still free on the filesystem that holds (or will hold) `path`.
fn free_space(cx: &Ctx, path: &Path) -> Result<u64, PlanError> {
    let at = if path.exists() {
        path
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    iolab_engine::file::available_space(at).map_err(|e| {
        cx.err(
            Some(Opt::FillDevice),
            format!(
                "fill_device: cannot tell the free space of `{}`: {e}",
                at.display()
            ),
        )
    })
}

/// `file_service_type`.
fn file_service(cx: &Ctx) -> Result<FileService, PlanError> {
    Ok(match cx.job.value(Opt::FileServiceType) {
        Some(Value::FileService(f)) => match f {
            FileServiceValue::RoundRobin(n) => FileService::RoundRobin(n.unwrap_or(1).max(1)),
            FileServiceValue::Sequential => FileService::Sequential,
            FileServiceValue::Random => FileService::Random,
            FileServiceValue::Zipf(t, c) => FileService::Zipf(t, c),
            FileServiceValue::Pareto(h, c) => FileService::Pareto(h, c),
            FileServiceValue::Normal(d, c) => FileService::Normal(d, c),
        },
        _ => FileService::RoundRobin(1),
    })
}

/// The size of one file of `filesize=LOW-HIGH`: drawn from the job's
/// seeds for the clone and the file, and rounded down to whole blocks of
/// `min_bs` as fio rounds it (never below LOW's whole blocks, nor 0).
fn random_filesize(pj: &PlanJob, clone: u32, file: u64, low: u64, high: u64, min_bs: u64) -> u64 {
    // The sizes shape the job's I/O, so they repeat as its offsets do
    // (`randrepeat`): drawn from the pattern seed.
    let mut rng = Rng::for_job(
        pj.random.seeds.pattern,
        clone,
        Stream::Other(FILESIZE_STREAM),
    )
    .substream(file);
    let size = low + rng.below(high - low + 1);
    let min_bs = min_bs.max(1);
    let whole = size - size % min_bs;
    whole.max(low - low % min_bs).max(min_bs.min(high))
}

/// The random stream of `filesize=LOW-HIGH`'s sizes.
const FILESIZE_STREAM: u32 = 1;

/// Names, sizes and places the clone's files; returns the bytes of I/O per
/// loop and the regions.
fn place_files(
    cx: &Ctx,
    clone: u32,
    pj: &PlanJob,
    files: &mut Vec<PlanFile>,
    by_path: &mut HashMap<PathBuf, usize>,
) -> Result<(u64, Vec<JobFile>), PlanError> {
    let job = cx.job;
    let paths = file_paths(job, clone);
    let p = Placing {
        cx,
        pj,
        clone,
        nfiles: paths.len() as u64,
        min_bs: pj.bs.iter().map(BsSpec::min).min().unwrap_or(4096),
        max_bs: pj.max_bs(),
    };
    let mut regions = Vec::new();
    let mut total = 0u64;
    for (file_index, path) in paths.into_iter().enumerate() {
        let disk: OnDisk = on_disk(&path);
        p.check_target(&path, &disk)?;
        let (offset, len) = p.region(file_index, &path, &disk)?;
        let idx = p.add_file(files, by_path, path, &disk, offset + len);
        total += len;
        regions.push(JobFile {
            file: idx,
            offset,
            len,
        });
    }

    // io_size: the bytes to move per loop, by default the regions' total,
    // or size when filesize makes the regions larger than it.
    // fio's skewed file choice (zipf, pareto, normal) never finds a file
    // done, so `size` ends its job even where the files' regions add up
    // to less (`size=256k` over five files of 48 KiB regions).
    let skewed = pj.file_service.skewed() && regions.len() > 1;
    let given = io_size_of(job);
    let io = match (given, job.size(Opt::Filesize), job.size(Opt::Size)) {
        (Some(v), _, _) => resolve_size(v, total),
        (None, Some(_), Some(SizeValue::Bytes(b))) => b.min(total),
        (None, None, Some(SizeValue::Bytes(b))) if skewed => b.max(total),
        _ => total,
    };
    // A given io_size is fio's limit as it is: I/Os are issued while
    // fewer bytes than it have been, so the last may pass it (io_size=150k
    // in 4k reads is 38 of them, 152k; io_size=2k is one). The regions'
    // total and size are whole blocks.
    let io = if given.is_some() {
        io
    } else {
        io - io % p.min_bs
    };
    // A percentage that leaves less than a block is refused, as fio
    // refuses it (where a byte count below a block is one I/O).
    if io == 0 || (io < p.min_bs && matches!(given, Some(SizeValue::Percent(_)))) {
        let what = match given {
            Some(SizeValue::Percent(pct)) => format!("io_size={pct}% of {total} bytes is {io}"),
            _ => format!("io_size is {io}"),
        };
        return Err(cx.err(
            Some(Opt::IoSize),
            format!("{what} bytes, less than one block of {} bytes", p.min_bs),
        ));
    }
    Ok((io, regions))
}

/// The job's io_size as given; 0 (or 0%) is fio's "not set" (the
/// regions' bytes, or size, as without it).
fn io_size_of(job: &JobSpec) -> Option<SizeValue> {
    job.size(Opt::IoSize).filter(|v| match v {
        SizeValue::Bytes(b) => *b != 0,
        SizeValue::Percent(pct) => *pct != 0.0,
    })
}

/// What `place_files` knows of the clone while it places each file.
struct Placing<'a> {
    cx: &'a Ctx<'a>,
    pj: &'a PlanJob,
    clone: u32,
    /// The clone's files, which share `size`.
    nfiles: u64,
    /// The smallest and largest block sizes of the job.
    min_bs: u64,
    max_bs: u64,
}

impl Placing<'_> {
    /// Refuses a file the job cannot do its I/O on: one reached through a
    /// link the rule of [`crate::links`] refuses, trims of what is not a
    /// block device, writes to a device in use, zoned I/O.
    fn check_target(&self, path: &Path, disk: &OnDisk) -> Result<(), PlanError> {
        let (cx, pj) = (self.cx, self.pj);
        // The null engine does no I/O: its files are never made or read.
        // The engines that create files or create, stat or remove
        // directories work on paths that must not be laid out first.
        let diskless = pj.engine.diskless();
        // Another user's link in a shared sticky directory, anywhere in
        // the name, is not followed (the rule of `crate::links`).
        if !diskless {
            if let Err(e) = crate::links::resolve(path) {
                if crate::links::is_foreign(&e) {
                    return Err(cx.err(
                        Some(Opt::Filename),
                        format!("data file `{}`: {e}", path.display()),
                    ));
                }
            }
        }
        // The falloc engine trims a regular file by punching holes in it.
        if pj.rw.mode.trims() && !diskless && !disk.block_device && pj.engine != EngineKind::Falloc
        {
            return Err(cx.err(
                Some(Opt::Rw),
                format!(
                    "rw={} discards blocks (BLKDISCARD), which only a block device takes; `{}` is not one",
                    pj.rw.mode.name(),
                    path.display()
                ),
            ));
        }
        // fio's allow_mounted_write: writing under a mounted filesystem
        // corrupts it, so a device in use is refused before anything runs.
        if disk.block_device
            && (pj.rw.mode.writes() || pj.rw.mode.trims())
            && !diskless
            && !cx.job.flag(Opt::AllowMountedWrite)
        {
            let users = crate::devuse::users(path);
            if !users.is_empty() {
                return Err(cx.err(
                    Some(Opt::Rw),
                    format!(
                        "refusing to write to `{}`: {}; writing under a filesystem or another user corrupts it (allow_mounted_write=1 writes anyway)",
                        path.display(),
                        users.join("; ")
                    ),
                ));
            }
        }
        if cx.job.chosen(Opt::Zonemode) == Some(ZoneMode::Zbd) {
            return Err(cx.err(Some(Opt::Zonemode), zbd_refusal(path, disk.block_device)));
        }
        Ok(())
    }

    /// Whether the job sizes its files (size or filesize given).
    fn sized(&self) -> bool {
        let job = self.cx.job;
        job.size(Opt::Size).is_some() || job.size(Opt::Filesize).is_some()
    }

    /// The clone's region of file `file_index` at `path`: its offset and
    /// length, in whole blocks of the smallest block size.
    fn region(
        &self,
        file_index: usize,
        path: &Path,
        disk: &OnDisk,
    ) -> Result<(u64, u64), PlanError> {
        let (cx, pj, job) = (self.cx, self.pj, self.cx.job);
        let existing = disk.size.filter(|s| *s > 0 || disk.block_device);
        // fill_device without a size: a regular file may grow by all the
        // space left on its filesystem and one block more, so that the job
        // always ends on the full filesystem's ENOSPC (fio "sets size to
        // something really large" and stops there).
        let fill = pj.fill_device && !self.sized() && !disk.block_device;
        let per_file = self.extent(file_index, path, existing, fill)?;
        // fio takes a percentage offset of the file as it is before the
        // job: of its size when it exists, of nothing (so 0) when the job
        // will create it.
        let whole = existing.unwrap_or(0);
        let base = job
            .size(Opt::Offset)
            .map(|o| resolve_size(o, whole))
            .unwrap_or(0);
        let step = job
            .size(Opt::OffsetIncrement)
            .map(|o| resolve_size(o, whole))
            .unwrap_or(0);
        // file_append: the I/O goes past the file's current end, whatever
        // offset says (fio's file_append on a regular file).
        let offset = match existing {
            Some(e) if pj.file_append && !disk.block_device => e,
            None if pj.file_append => 0,
            _ => base.saturating_add(step.saturating_mul(self.clone as u64)),
        };
        // With filesize, the file is filesize bytes and the region is the
        // part of it from the offset on (size then bounds only the bytes of
        // I/O, below); without it, the region is the file's share of size
        // from the offset on.
        let mut len = match job.size(Opt::Filesize) {
            Some(_) if !fill => {
                if offset >= per_file {
                    return Err(cx.err(
                        Some(Opt::Offset),
                        format!(
                            "offset {offset} is not below filesize ({per_file} bytes) of `{}`",
                            path.display()
                        ),
                    ));
                }
                let room = per_file - offset;
                match job.size(Opt::Size) {
                    // size=N% takes that part of each file's region.
                    Some(SizeValue::Percent(p)) => resolve_size(SizeValue::Percent(p), room),
                    _ => room,
                }
            }
            _ => per_file,
        };
        // An existing device or file bounds the region; a file iolab makes
        // is made large enough.
        let fixed_end = if disk.block_device || !(self.sized() || fill) {
            existing
        } else {
            None
        };
        if let Some(end) = fixed_end {
            if offset >= end {
                return Err(cx.err(
                    Some(Opt::Offset),
                    format!(
                        "offset {offset} is beyond the end of `{}` ({end} bytes)",
                        path.display()
                    ),
                ));
            }
            len = len.min(end - offset);
        }
        // fio works in whole blocks of the smallest block size.
        let room = len;
        len -= len % self.min_bs;
        if len < self.max_bs {
            return Err(cx.err(
                Some(Opt::Bs),
                format!(
                    "block size {} is larger than the {room} bytes the job has in `{}`",
                    self.max_bs,
                    path.display()
                ),
            ));
        }
        Ok((offset, len))
    }

    /// The file's own extent: filesize, else its share of size, else what
    /// is on disk (`existing`); with `fill`, what its filesystem can take.
    fn extent(
        &self,
        file_index: usize,
        path: &Path,
        existing: Option<u64>,
        fill: bool,
    ) -> Result<u64, PlanError> {
        let (cx, pj, job) = (self.cx, self.pj, self.cx.job);
        Ok(match (job.size(Opt::Filesize), job.size(Opt::Size)) {
            // No file at all: one block stands for it.
            _ if pj.engine.no_io() => self.max_bs,
            _ if fill => existing.unwrap_or(0) + free_space(cx, path)? + self.max_bs,
            (Some(SizeValue::Bytes(b)), _) => match job.get(Opt::Filesize) {
                Some(Value::SizeRange(r)) => random_filesize(
                    pj,
                    self.clone,
                    file_index as u64,
                    r.min,
                    r.max,
                    self.min_bs,
                ),
                _ => b,
            },
            (Some(SizeValue::Percent(p)), _) | (None, Some(SizeValue::Percent(p))) => {
                match existing {
                    Some(e) => {
                        let share = if job.get(Opt::Filesize).is_some() {
                            1
                        } else {
                            self.nfiles
                        };
                        resolve_size(SizeValue::Percent(p), e) / share
                    }
                    None => {
                        return Err(cx.err(
                            Some(Opt::Size),
                            format!(
                                "a size in percent needs an existing file or device, and `{}` does not exist",
                                path.display()
                            ),
                        ))
                    }
                }
            }
            (None, Some(SizeValue::Bytes(b))) => b / self.nfiles,
            (None, None) => match existing {
                Some(e) => e,
                None => {
                    return Err(cx.err(
                        None,
                        format!(
                            "the job needs size= or filesize=: `{}` does not exist to take its size from",
                            path.display()
                        ),
                    ))
                }
            },
        })
    }

    /// The plan's file at `path` (added when no clone named it before),
    /// at least `end` bytes long, and how the run lays it out; returns
    /// its index.
    fn add_file(
        &self,
        files: &mut Vec<PlanFile>,
        by_path: &mut HashMap<PathBuf, usize>,
        path: PathBuf,
        disk: &OnDisk,
        end: u64,
    ) -> usize {
        let pj = self.pj;
        let idx = *by_path.entry(path.clone()).or_insert_with(|| {
            files.push(PlanFile {
                path,
                size: 0,
                existing: disk.size,
                block_device: disk.block_device,
                char_device: disk.char_device,
                layout: Layout::AsIs,
                fill: false,
            });
            files.len() - 1
        });
        let f = &mut files[idx];
        f.size = f.size.max(end);
        f.fill |= pj.fill_device;
        if !pj.engine.diskless()
            && !f.block_device
            && !f.char_device
            && f.existing.unwrap_or(0) < f.size
        {
            // Data is written first when the file will be read, or when
            // overwrite=1 asks for writes over existing blocks; otherwise
            // the space is only allocated, or (create_on_open=1) the job's
            // open creates the file.
            // A file that fill_device writes is not preallocated: the job
            // itself finds where the space ends.
            let reads = pj.rw.mode.reads() || pj.pre_read;
            f.layout = if reads || pj.overwrite || f.layout == Layout::Write {
                Layout::Write
            } else if f.layout == Layout::Allocate || !(pj.create_on_open || f.fill) {
                Layout::Allocate
            } else {
                Layout::OnOpen
            };
        }
        idx
    }
}
