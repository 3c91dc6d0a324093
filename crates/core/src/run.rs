//! The run: a `Plan` executed phase by phase (a `stonewall` job waits for
//! every job before it; a `wait_for` job waits in its phase for the job it
//! names), one thread per job clone, files laid out before
//! the phase that first uses them, disk statistics around the whole run,
//! and the clones' results merged into fio's jobs and reporting groups.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_engine::{create, EngineKind, EngineOpts};
use iolab_stats::{GroupResult, JobResult, RunResult};

use crate::diskstats::{disks_of, DiskSnapshot};
use crate::gen::{Rng, Stream};
use crate::layout::prepare;
use crate::plan::{ExitWhat, Plan, PlanJob};
use crate::progress::Progress;
use crate::ranks::{Ranks, Ready, Solo};
use crate::steady::SteadyWatch;
use crate::worker::{not_run, run_clone, Shared};

/// No such file or directory.
const ENOENT: i32 = 2;
/// Resource temporarily unavailable (what a thread that cannot be
/// created gets).
const EAGAIN: i32 = 11;

/// Something the user should see while the run goes on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// fio's "NAME: Laying out IO file (1 file / 16MiB)": a job clone is
    /// about to create or extend `files` of its files, `bytes` their
    /// sizes added up (fio says it once per clone, for the files not laid
    /// out yet; a file used as it is, or made by the job's own open, is
    /// not counted).
    LayingOut {
        job: String,
        files: usize,
        bytes: u64,
    },
}

/// Why a run could not start (exit 2: nothing was created).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// What a run produced: the results gathered (partial when it failed or
/// was interrupted) and, when it failed, why.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    pub result: RunResult,
    /// The first error that stopped a job or the run (exit 1).
    pub failure: Option<String>,
}

/// Runs a plan. `stop` ends it early (Ctrl-C); `notice` hears layout
/// messages.
pub fn run(
    plan: &Plan,
    stop: &AtomicBool,
    notice: &mut dyn FnMut(Notice),
) -> Result<RunOutcome, StartError> {
    run_observed(plan, stop, notice, &Progress::new(plan))
}

/// `run`, publishing each clone's progress in `progress` (made by
/// `Progress::new` for this plan) for another thread to read.
pub fn run_observed(
    plan: &Plan,
    stop: &AtomicBool,
    notice: &mut dyn FnMut(Notice),
    progress: &Progress,
) -> Result<RunOutcome, StartError> {
    run_ranked(plan, stop, notice, progress, &mut Solo)
}

/// `run_observed` as one of the ranks of a run over many processes: each
/// phase starts when `ranks` says every rank is ready for it, and a rank
/// that cannot start one (a file it cannot make) ends the run for all.
pub fn run_ranked(
    plan: &Plan,
    stop: &AtomicBool,
    notice: &mut dyn FnMut(Notice),
    progress: &Progress,
    ranks: &mut dyn Ranks,
) -> Result<RunOutcome, StartError> {
    check_engines(plan)?;
    // Buffers of log records an earlier run of the process kept for the
    // next: a run without a line per I/O in its logs has no use for them.
    if !plan
        .jobs
        .iter()
        .any(|j| j.logs.as_ref().is_some_and(|l| l.per_io()))
    {
        crate::worker::release_log_buffers();
    }
    let mut run = Ledger::new(plan);
    let disks: Vec<DiskSnapshot> = disks_of(device_files(plan))
        .iter()
        .filter_map(|d| DiskSnapshot::read(d))
        .collect();
    let flags = Flags::new(plan, stop, progress);
    for (pi, phase) in plan.phases.iter().enumerate() {
        let ready = if run.abort || (run.failure.is_some() && ranks.stop_after_error()) {
            Ready::Failed
        } else {
            run.prepare_phase(plan, phase.clone(), &flags, notice)
        };
        let all = ranks.start_phase(pi, ready);
        if all != Ready::Go {
            // Another rank failed: the run ends here as if this one had.
            run.stopped_by_others = all == Ready::Failed && ready != Ready::Failed;
            break;
        }
        // Loop devices under the phase's files, with the files laid out
        // (their writes may have filled the host's cache).
        run.before.extend(crate::loopback::loop_warnings(
            plan,
            phase.clone().map(|ji| &plan.jobs[ji]),
        ));
        let (results, spawn_failed) = run_phase(plan, pi, phase.clone(), &flags, ranks);
        ranks.end_phase(pi);
        for (ji, r) in results {
            if r.error != 0 && run.failure.is_none() {
                run.failure = Some(format!("job `{}`: {}", r.name, r.error_detail));
            }
            run.clones[ji] = Some(r);
        }
        // Re-reads the host's cache of a loop device's image served.
        let refills = crate::loopback::loop_refills(plan, phase.clone(), &run.clones, &run.before);
        run.before.extend(refills);
        if let Some((ji, e)) = spawn_failed {
            run.spawn_failed(plan, phase.start, ji, &e);
        }
    }
    Ok(run.finish(plan, stop, &disks))
}

/// An engine that cannot be had fails the run before anything exists.
fn check_engines(plan: &Plan) -> Result<(), StartError> {
    let mut checked: Vec<EngineKind> = Vec::new();
    for job in &plan.jobs {
        // exec starts its program at the first I/O: nothing to try first.
        if !checked.contains(&job.engine) && job.exec.is_none() {
            create(job.engine, &EngineOpts::default())
                .map_err(|e| StartError(format!("job `{}`: {e}", job.name)))?;
            checked.push(job.engine);
        }
    }
    Ok(())
}

/// What the run's clones share with it and each other.
struct Flags<'a> {
    /// Ctrl-C.
    stop: &'a AtomicBool,
    progress: &'a Progress,
    /// Each clone's own stop flag, raised by another job's exitall.
    halts: Vec<AtomicBool>,
    /// Each clone's "has finished", which wait_for watches.
    finished: Vec<AtomicBool>,
    /// The flow groups of jobs with flow=, shared by their clones.
    flows: crate::flow::Flows,
}

impl<'a> Flags<'a> {
    fn new(plan: &Plan, stop: &'a AtomicBool, progress: &'a Progress) -> Flags<'a> {
        Flags {
            stop,
            progress,
            halts: plan.jobs.iter().map(|_| AtomicBool::new(false)).collect(),
            finished: plan.jobs.iter().map(|_| AtomicBool::new(false)).collect(),
            flows: crate::flow::Flows::of(plan),
        }
    }
}

/// What the run keeps from phase to phase: which files are laid out and
/// which it created, each clone's result, the first failure, and the
/// warnings found on the way.
struct Ledger {
    before: Vec<crate::warn::Warning>,
    prepared: Vec<bool>,
    created: Vec<Option<PathBuf>>,
    clones: Vec<Option<JobResult>>,
    failure: Option<String>,
    layout_rng: Rng,
    /// A failure that ends the run before its next phase.
    abort: bool,
    /// Another rank's failure ended it.
    stopped_by_others: bool,
}

impl Ledger {
    fn new(plan: &Plan) -> Ledger {
        Ledger {
            before: crate::warn::sparse_reads(plan),
            prepared: vec![false; plan.files.len()],
            created: vec![None; plan.files.len()],
            clones: vec![None; plan.jobs.len()],
            failure: None,
            layout_rng: Rng::for_job(0x1a7, 0, Stream::Data),
            abort: false,
            stopped_by_others: false,
        }
    }

    /// Whether this rank can start `phase`: files laid out as the phase
    /// first needs them, unless the run is interrupted.
    fn prepare_phase(
        &mut self,
        plan: &Plan,
        phase: Range<usize>,
        flags: &Flags,
        notice: &mut dyn FnMut(Notice),
    ) -> Ready {
        if flags.stop.load(Ordering::Relaxed)
            || phase
                .clone()
                .all(|ji| flags.halts[ji].load(Ordering::Relaxed))
        {
            // Interrupted, or every job of the phase stopped by an
            // exit_what=all before it began: nothing is laid out or run.
            return Ready::Stop;
        }
        for ji in phase {
            let job = &plan.jobs[ji];
            let (files, bytes) = to_lay_out(plan, job, &self.prepared);
            if files > 0 {
                notice(Notice::LayingOut {
                    job: job.name.clone(),
                    files,
                    bytes,
                });
            }
            if !self.lay_out(plan, ji) {
                self.abort = true;
                return Ready::Failed;
            }
        }
        Ready::Go
    }

    /// Lays out the files of clone `ji` that no clone before it did.
    /// False when one cannot be had (the clone's result says why).
    fn lay_out(&mut self, plan: &Plan, ji: usize) -> bool {
        let job = &plan.jobs[ji];
        for jf in &job.files {
            let pf = &plan.files[jf.file];
            // An engine without a device (null, filecreate, cpuio, ...)
            // lays nothing out, so there is nothing to forbid; fio
            // checks only the others.
            if !job.allow_file_create && !job.engine.diskless() && !pf.path.exists() {
                self.failure = Some(format!(
                    "job `{}`: `{}` does not exist and allow_file_create=0 forbids creating it",
                    job.name,
                    pf.path.display()
                ));
                self.clones[ji] = Some(failed_setup(
                    job,
                    ENOENT,
                    "open",
                    &pf.path,
                    &crate::worker::strerror(ENOENT),
                ));
                return false;
            }
            if self.prepared[jf.file] {
                continue;
            }
            match prepare(pf, job.fallocate, &mut self.layout_rng) {
                Ok(p) => self.created[jf.file] = p.made,
                Err(e) => {
                    // Recorded on the job as fio records it: its error
                    // field, and the call and file in the detail.
                    let r = failed_setup(
                        job,
                        e.errno(),
                        e.call,
                        &pf.path,
                        &crate::worker::strerror(e.errno()),
                    );
                    self.failure = Some(format!(
                        "job `{}`: err={}/{} (laying out the file)",
                        job.name, r.error, r.error_detail
                    ));
                    self.clones[ji] = Some(r);
                    // A file half made is iolab's to remove, whatever
                    // the job says; a name found taken (a link, another's
                    // file) is not.
                    if let Some(made) = &e.made {
                        let _ = std::fs::remove_file(made);
                    }
                    return false;
                }
            }
            self.prepared[jf.file] = true;
        }
        true
    }

    /// Clone `ji`, the first of its phase's clones from `phase_start` on
    /// that no thread could be made for, failed with `e`; the clones
    /// before it were stopped, and the run ends after this phase.
    fn spawn_failed(&mut self, plan: &Plan, phase_start: usize, ji: usize, e: &std::io::Error) {
        let job = &plan.jobs[ji];
        let errno = e.raw_os_error().unwrap_or(EAGAIN);
        let mut r = not_run(job);
        // The thread that tried to start the clone, as its pid.
        r.pid = iolab_engine::host::thread_id();
        r.error = errno;
        r.error_detail = format!(
            "func=pthread_create, error={}",
            crate::worker::strerror(errno)
        );
        let started = ji - phase_start;
        self.failure = Some(format!(
            "job `{}`: cannot create the thread of clone {} (err={errno}, {}): the limit on \
             the user's processes and threads (ulimit -u) or on memory maps was reached; \
             the {started} job clone{} already started {} stopped",
            job.name,
            job.clone,
            crate::worker::strerror(errno),
            if started == 1 { "" } else { "s" },
            if started == 1 { "was" } else { "were" },
        ));
        self.clones[ji] = Some(r);
        // The next phase does not start, here or on any rank.
        self.abort = true;
    }

    /// The run's result, once its last phase is over: the files to remove
    /// go, and the clones' results are merged as fio reports them, with
    /// the disks' statistics since `disks` and the run's warnings.
    fn finish(self, plan: &Plan, stop: &AtomicBool, disks: &[DiskSnapshot]) -> RunOutcome {
        let Ledger {
            mut before,
            created,
            clones,
            failure,
            stopped_by_others,
            ..
        } = self;
        // Jobs that never ran are reported with nothing done, as fio
        // lists them.
        let clones: Vec<JobResult> = clones
            .into_iter()
            .zip(&plan.jobs)
            .map(|(r, job)| r.unwrap_or_else(|| not_run(job)))
            .collect();

        // What the filesystem stored compressed, while the files are there.
        before.extend(crate::warn::compression_warnings(plan, &clones));
        remove_files(
            plan,
            &created,
            failure.is_some(),
            (failure.is_some() || stopped_by_others) && !clones.iter().any(JobResult::did_io),
        );

        let mut result = RunResult {
            global_options: plan.global_options.clone(),
            interrupted: stop.load(Ordering::Relaxed),
            ..Default::default()
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        result.timestamp = now.as_secs();
        result.timestamp_ms = now.as_millis() as u64;
        result.disks = disks
            .iter()
            .filter_map(|before| DiskSnapshot::read(&before.name).map(|after| before.delta(&after)))
            .collect();
        // Group totals come from the jobs as reported (merged clones count
        // as one job for the min and max bandwidth, as in fio), and every
        // group gets its heading, as fio prints one for each group id.
        // stats=0: the job is left out of the jobs and groups reported.
        // fio still gives each such clone without group_reporting an
        // empty entry in its JSON and terse output; the renderers make
        // those.
        let mut reported = Vec::with_capacity(clones.len());
        for (c, job) in clones.into_iter().zip(&plan.jobs) {
            if job.reported {
                reported.push((c, job.group_reporting));
            } else if !job.group_reporting {
                result.stats_off.push(c.elapsed_s);
            }
        }
        result.jobs = merge_reported(reported);
        for g in 0..plan.groups {
            let members = result.jobs.iter().filter(|c| c.groupid == g);
            result.groups.push(GroupResult::from_jobs(g, members));
        }
        crate::warn::attach_run_warnings(plan, before, &mut result);
        RunOutcome { result, failure }
    }
}

/// unlink=1 removes the job's files (their names, as fio unlinks them);
/// after a failure (`failed`), the files iolab created (`created`, where
/// it created them) for such jobs go instead, and so does every file
/// iolab created when the run failed before any job did I/O
/// (`none_did_io`: nothing was measured on them).
fn remove_files(plan: &Plan, created: &[Option<PathBuf>], failed: bool, none_did_io: bool) {
    for job in &plan.jobs {
        for jf in &job.files {
            let pf = &plan.files[jf.file];
            if pf.block_device || pf.char_device {
                continue;
            }
            if job.unlink && !failed {
                let _ = std::fs::remove_file(&pf.path);
            } else if job.unlink || none_did_io {
                if let Some(made) = &created[jf.file] {
                    let _ = std::fs::remove_file(made);
                }
            }
        }
    }
}

/// Runs the clones of phase `pi` (jobs `phase`), one thread each, until
/// they finish or the ranks end the phase. Returns their results, and
/// the clone whose thread could not be made, if one could not.
#[allow(clippy::type_complexity)]
fn run_phase(
    plan: &Plan,
    pi: usize,
    phase: Range<usize>,
    flags: &Flags,
    ranks: &mut dyn Ranks,
) -> (Vec<(usize, JobResult)>, Option<(usize, std::io::Error)>) {
    let halts = &flags.halts;
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(phase.len());
        let mut spawn_failed = None;
        // The clones of a flow that start with the phase join it before
        // any of them issues an I/O, as fio's start together; the others
        // join when they start.
        let mut joined: Vec<_> = phase
            .clone()
            .map(|ji| {
                let job = &plan.jobs[ji];
                let at_once = job.startdelay.is_zero() && job.wait_for.is_empty();
                job.flow
                    .filter(|_| at_once)
                    .and_then(|f| flags.flows.join(&f))
            })
            .collect();
        for ji in phase.clone() {
            let job = &plan.jobs[ji];
            let files = &plan.files;
            let shared = Shared {
                stop: flags.stop,
                halt: &halts[ji],
                finished: &flags.finished,
                progress: flags.progress,
                flows: &flags.flows,
                flow: std::cell::Cell::new(joined[ji - phase.start].take()),
            };
            let phase = phase.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{}.{}", job.name, job.clone))
                .spawn_scoped(s, move || {
                    // Raised however the clone ends, a panic included,
                    // so that no wait_for waits forever.
                    let _finished = Raise(&shared.finished[ji]);
                    let r = run_clone(job, ji as u32, files, &shared);
                    if job.exitall {
                        exit(plan, job, phase, halts);
                    }
                    r
                });
            match spawned {
                Ok(h) => handles.push((ji, h)),
                Err(e) => {
                    // No thread (the user's limit on processes, or no
                    // memory for a stack): the clones already started
                    // are stopped, and none after it starts.
                    for (started, _) in &handles {
                        halts[*started].store(true, Ordering::Relaxed);
                    }
                    spawn_failed = Some((ji, e));
                    break;
                }
            }
        }
        // Until this rank is done with the phase, or the ranks say
        // that it ends for all.
        let started: Vec<usize> = handles.iter().map(|(ji, _)| *ji).collect();
        let done = || {
            started
                .iter()
                .all(|&ji| flags.finished[ji].load(Ordering::Acquire))
        };
        let halt = || {
            for ji in phase.clone() {
                halts[ji].store(true, Ordering::Relaxed);
            }
        };
        // Steady-state detection samples the clones from here, also
        // while the ranks watch the phase (a rank that finished first
        // ends it for all with stonewalling across ranks), then until
        // this rank's clones are done.
        let mut steady = SteadyWatch::of_phase(plan, phase.clone());
        let mut tick = || {
            if let Some(w) = &mut steady {
                w.tick(flags.progress, halts);
            }
        };
        ranks.watch_phase(pi, &done, &halt, &mut tick);
        if let Some(w) = &mut steady {
            w.watch(flags.progress, halts, &done);
        }
        let mut results: Vec<(usize, JobResult)> = handles
            .into_iter()
            .map(|(ji, h)| (ji, h.join().unwrap_or_else(|_| not_run(&plan.jobs[ji]))))
            .collect();
        if let Some(w) = &steady {
            w.attach(&mut results);
        }
        (results, spawn_failed)
    })
}

/// The files some job does I/O on through a device: a file only the null
/// engine or the file and directory engines name puts no disk in the
/// report, as in fio.
fn device_files(plan: &Plan) -> impl Iterator<Item = &Path> {
    plan.files.iter().enumerate().filter_map(|(i, f)| {
        plan.jobs
            .iter()
            .any(|j| !j.engine.diskless() && j.files.iter().any(|jf| jf.file == i))
            .then_some(f.path.as_path())
    })
}

/// The files a job clone is about to create or extend, as fio counts them
/// for "Laying out IO file": how many, and their sizes added up. A file
/// already laid out for an earlier clone, used as it is, or made by the
/// job's own open is not counted.
fn to_lay_out(plan: &Plan, job: &PlanJob, prepared: &[bool]) -> (usize, u64) {
    let mut seen: Vec<usize> = Vec::new();
    for jf in &job.files {
        let pf = &plan.files[jf.file];
        let made = matches!(
            pf.layout,
            crate::plan::Layout::Write | crate::plan::Layout::Allocate
        );
        if made && !prepared[jf.file] && !seen.contains(&jf.file) {
            seen.push(jf.file);
        }
    }
    let bytes = seen.iter().map(|&i| plan.files[i].size).sum();
    (seen.len(), bytes)
}

/// The result of a clone whose file could not be made ready: fio's
/// `error` is the errno, and the detail names the file, the call and the
/// error, as fio's "err=28/file:..., func=write, error=..." does; its pid
/// is that of the thread that tried to make the file ready.
fn failed_setup(job: &PlanJob, errno: i32, call: &str, path: &Path, text: &str) -> JobResult {
    let mut r = not_run(job);
    // The run's own thread lays the files out: its id is the job's pid.
    r.pid = iolab_engine::host::thread_id();
    r.error = errno;
    r.error_detail = format!("file:{}, func={call}, error={text}", path.display());
    r
}

/// Raises a flag when dropped.
struct Raise<'a>(&'a AtomicBool);

impl Drop for Raise<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// A job with `exitall` has finished: stop the jobs its `exit_what`
/// names (the clone's group, its phase, or every job of the run).
fn exit(plan: &Plan, job: &PlanJob, phase: std::ops::Range<usize>, halts: &[AtomicBool]) {
    for (k, other) in plan.jobs.iter().enumerate() {
        let hit = match job.exit_what {
            ExitWhat::Group => other.groupid == job.groupid,
            ExitWhat::Stonewall => phase.contains(&k),
            ExitWhat::All => true,
        };
        if hit {
            halts[k].store(true, Ordering::Relaxed);
        }
    }
}

/// The jobs as fio reports them: each clone on its own, except that
/// clones and jobs of one group with `group_reporting` (the flag beside
/// each clone) are merged into the first.
fn merge_reported(clones: Vec<(JobResult, bool)>) -> Vec<JobResult> {
    let mut out: Vec<JobResult> = Vec::new();
    let mut merging_group: Option<u32> = None;
    for (c, grouped) in clones {
        match (grouped, merging_group, out.last_mut()) {
            (true, Some(g), Some(last)) if g == c.groupid => last.merge(&c),
            (true, _, _) => {
                merging_group = Some(c.groupid);
                out.push(c);
            }
            _ => {
                merging_group = None;
                out.push(c);
            }
        }
    }
    out
}
