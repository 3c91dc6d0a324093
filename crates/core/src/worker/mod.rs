//! One job clone on its own thread: opens its files through its engine,
//! draws each I/O from the generators, times it, and keeps fio's statistics
//! in state it owns alone. Per I/O it does at most two clock reads, the
//! engine call and arithmetic: no allocation, lock or other system call.
//! Options that are off cost a predictable branch each: pacing (`pace`)
//! and the choice among several files (`fileset`) live in their own
//! modules.
//!
//! The job runs in `general` (its loops, and the general I/O loop that
//! hands plain I/O to the fast paths `burst` and `qburst`), each
//! completion is accounted in `complete`, and the job ends in `end`;
//! `setup` makes the worker, `queue` holds the queue and a loop's budget.

mod burst;
mod complete;
mod control;
mod end;
mod errors;
mod fileset;
mod general;
mod latency;
mod logs;
mod measure;
mod pace;
mod qburst;
mod queue;
mod rewind;
mod setup;
mod verify;

pub(crate) use errors::strerror;
pub(crate) use logs::{
    clone_bytes as log_bytes, pool_bytes as log_pool_bytes, release_kept as release_log_buffers,
};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::{Completion, Engine, FileId, IoUnit, Op, Queued};
use iolab_stats::JobResult;

use crate::gen::{BsGen, Frand, OffsetRand, RwMix};
use crate::plan::{PlanFile, PlanJob};
use crate::progress::{CloneProgress, Progress, RunState};

use complete::Cx;
use fileset::FileSet;
use measure::Measure;
use pace::{MinRate, RateLimit, Think};

const EINVAL: i32 = 22;
const ENOSPC: i32 = 28;
const EIO: i32 = 5;
const EILSEQ: i32 = 84;

/// What a worker shares with the run: the run's stop flag (Ctrl-C), the
/// clone's own (another job's exitall), and which clones have finished
/// (for `wait_for`).
pub struct Shared<'a> {
    pub stop: &'a AtomicBool,
    pub halt: &'a AtomicBool,
    /// One flag per clone of the plan, raised when it has finished.
    pub finished: &'a [AtomicBool],
    /// The run's progress counters, for a status line.
    pub progress: &'a Progress,
    /// The flow groups of the run's jobs with `flow`.
    pub flows: &'a crate::flow::Flows,
    /// The clone's place in its flow when it joined before starting.
    pub flow: std::cell::Cell<Option<crate::flow::FlowShare>>,
}

impl Shared<'_> {
    #[inline]
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.halt.load(Ordering::Relaxed)
    }
}

/// Runs one job clone to the end and returns what it measured. `index` is
/// the clone's position in the plan, unique in the run.
pub fn run_clone(job: &PlanJob, index: u32, files: &[PlanFile], shared: &Shared) -> JobResult {
    let wall_begin = Instant::now();
    let mut result = not_run(job);
    result.pid = iolab_engine::host::thread_id();
    let slot = shared.progress.clone_slot(index as usize);
    // A descriptor table of its own makes each read and write cheaper
    // (no reference counting of the file per system call); without it
    // the job runs all the same.
    let _ = iolab_engine::host::private_fd_table();
    if !job.startdelay.is_zero() {
        sleep_unless_stopped(job.startdelay, shared);
    }
    // wait_for: the job starts once the named job has finished (and its
    // startdelay, counted from the run's start, is over, as in fio).
    while !shared.stopped()
        && !job
            .wait_for
            .iter()
            .all(|&i| shared.finished[i].load(Ordering::Acquire))
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    if !shared.stopped() {
        slot.set_state(RunState::Initializing);
        if let Err((errno, msg)) = setup::place_thread(job) {
            result.error = errno;
            result.error_detail = msg;
        } else {
            match Worker::new(job, index, files) {
                Ok(mut w) => {
                    w.ctl.flow = shared
                        .flow
                        .take()
                        .or_else(|| job.flow.and_then(|f| shared.flows.join(&f)));
                    shared.progress.mark_started(index as usize);
                    w.run(job, files, shared, slot, &mut result);
                    result.latency_depth = w.ctl.latency_depth();
                }
                Err((errno, msg)) => {
                    result.error = errno;
                    result.error_detail = msg;
                }
            }
        }
    }
    slot.set_state(if result.error != 0 {
        RunState::Failed
    } else if shared.stop.load(Ordering::Relaxed) {
        RunState::Killed
    } else {
        RunState::Done
    });
    // fio's "elapsed": whole seconds since the job was started, startdelay
    // and ramp_time included, rounded up.
    result.elapsed_s = (wall_begin.elapsed().as_millis() as u64).div_ceil(1000);
    result
}

/// The result of a clone that did nothing (stopped before it began).
pub fn not_run(job: &PlanJob) -> JobResult {
    JobResult {
        name: job.name.clone(),
        groupid: job.groupid,
        description: job.description.clone(),
        options: job.options.clone(),
        setup: job.setup(),
        clones: 1,
        ..Default::default()
    }
}

/// `exit_on_io_done`: the clones that do I/O, which the job waits for,
/// have all finished.
#[inline]
fn io_jobs_done(job: &PlanJob, shared: &Shared) -> bool {
    !job.stop_after.is_empty()
        && job
            .stop_after
            .iter()
            .all(|&i| shared.finished[i].load(Ordering::Acquire))
}

fn sleep_unless_stopped(d: Duration, shared: &Shared) {
    let end = Instant::now() + d;
    while !shared.stopped() {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

struct Worker {
    engine: Box<dyn Engine>,
    files: FileSet,
    bs: [BsGen; 3],
    mix: RwMix,
    mix_rng: Frand,
    bs_rng: [Frand; 3],
    off_rng: OffsetRand,
    needs_data: bool,
    /// The engine does no I/O (cpuio, exec): each I/O moves 0 bytes.
    noio: bool,
    /// What write buffers hold (`data`), and verify when it is on.
    data: crate::data::DataGen,
    verify: Option<verify::Verifier>,
    /// Bytes of I/O per loop: the job's io_size, or less when fill_device
    /// found less room than planned.
    io_size: u64,
    /// The log files, when the job writes any.
    logs: Option<Box<logs::Logs>>,
    /// The page cache dropped at each new pass (time_based, invalidate).
    rewind: Option<Box<rewind::Rewind>>,
    rate: Option<RateLimit>,
    think: Option<Think>,
    min_rate: Option<MinRate>,
    /// With `randrepeat`, the streams of directions, sizes and offsets as
    /// the clone started them: fio seeds them again at each loop.
    first_streams: Option<Box<(Frand, [Frand; 3], OffsetRand)>>,
    /// Strided zones, flow and latency target, when the job asks.
    ctl: control::Control,
    /// The last draw found fio's busy file (see `general::Issued::Busy`).
    busy: bool,
    /// The last draw ended fio's run, whose I/O fio drains before the
    /// next run (see `general::Issued::Drain`).
    run_over: bool,
}

impl Worker {
    /// Issues one I/O and waits for it; returns the completion.
    fn io(&mut self, unit: &IoUnit, done: &mut Vec<Completion>) -> Result<Completion, String> {
        self.io_committed(unit, done, &mut 0)
    }

    /// `io`, with the clock read into `t_commit` when a queued engine's
    /// submission returns (left as it was when the I/O completes in
    /// `queue`): the end of its slat and the start of its clat.
    fn io_committed(
        &mut self,
        unit: &IoUnit,
        done: &mut Vec<Completion>,
        t_commit: &mut u64,
    ) -> Result<Completion, String> {
        loop {
            match self.engine.queue(unit).map_err(|e| e.to_string())? {
                Queued::Completed(c) => return Ok(c),
                Queued::InFlight => {
                    self.engine.commit().map_err(|e| e.to_string())?;
                    *t_commit = Clock::get().now();
                    done.clear();
                    self.engine.reap(1, 1, done).map_err(|e| e.to_string())?;
                    if let Some(c) = done.first() {
                        return Ok(*c);
                    }
                }
                Queued::Busy => {
                    done.clear();
                    self.engine.reap(1, 1, done).map_err(|e| e.to_string())?;
                }
            }
        }
    }

    /// Runs the job: its loops, then its end (see `general` and `end`).
    fn run(
        &mut self,
        job: &PlanJob,
        files: &[PlanFile],
        shared: &Shared,
        progress: &CloneProgress,
        out: &mut JobResult,
    ) {
        let stats = &job.stats;
        let paced = self.rate.is_some() || self.think.is_some() || self.min_rate.is_some();
        let cx = Cx::begin(job, files, progress, self.engine.caps().sync, paced);
        // Samples per window, unless a log that records every I/O takes
        // them per I/O.
        let mut m = Measure::new(
            cx.clock,
            cx.t_begin,
            job.ramp_time,
            (!stats.bw_per_io).then_some(stats.bw_avg),
            (!stats.iops_per_io).then_some(stats.iops_avg),
            end::io_threads(job),
        );
        m.cut_off_at(cx.deadline);
        let mut s = self.loops_of(job, &cx);
        progress.set_state(if m.ramping {
            RunState::Ramp
        } else {
            cx.running
        });
        progress.set_files_open(self.files.files.iter().filter(|f| f.open).count() as u32);
        let verify_ns = self.loops(&cx, shared, &mut m, &mut s, out);
        self.end_job(&cx, &m, verify_ns, out);
    }
}

fn sync_unit(file: FileId, op: Op) -> IoUnit {
    IoUnit {
        slot: 0,
        file,
        op,
        offset: 0,
        len: 0,
    }
}
