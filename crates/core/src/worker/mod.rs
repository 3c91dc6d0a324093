//! One job clone on its own thread: opens its files through its engine,
//! draws each I/O from the generators, times it, and keeps fio's statistics
//! in state it owns alone. Per I/O it does at most two clock reads, the
//! engine call and arithmetic: no allocation, lock or other system call.
//! Options that are off cost a predictable branch each: pacing (`pace`)
//! and the choice among several files (`fileset`) live in their own
//! modules.

mod burst;
mod complete;
mod control;
mod errors;
mod fileset;
mod logs;
mod measure;
mod pace;
mod qburst;
mod rewind;
mod setup;
mod verify;

pub(crate) use errors::strerror;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::host::thread_cpu_usage;
use iolab_engine::{Completion, Engine, FileId, IoUnit, Op, Queued};
use iolab_spec::value::RwMode;
use iolab_stats::{CausedIo, CpuResult, DepthDist, Dir, JobResult};

use crate::gen::{BsGen, Frand, OffsetRand, RwMix};
use crate::plan::{PlanFile, PlanJob};
use crate::progress::{CloneProgress, Progress, RunState};

use burst::Budget;
use complete::{Cx, Meta, Tally};
use fileset::FileSet;
use measure::Measure;
use pace::{MinRate, RateLimit, Think};
use qburst::Queue;

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

    fn run(
        &mut self,
        job: &PlanJob,
        files: &[PlanFile],
        shared: &Shared,
        progress: &CloneProgress,
        out: &mut JobResult,
    ) {
        let stats = &job.stats;
        // Each loop moves io_size bytes (number_ios I/Os at most), as
        // fio's do; a time_based job goes on until its runtime is over.
        let (loops, limit_bytes) = if job.time_based {
            (1, u64::MAX)
        } else {
            (job.loops.max(1), self.io_size)
        };
        let limit_ios = job.number_ios.unwrap_or(u64::MAX);
        // fio counts reads and writes towards the size, and trims only in
        // a job that does nothing else: trimwrite trims `size` bytes and
        // writes `size` bytes.
        let trims_only = matches!(job.rw.mode, RwMode::Trim | RwMode::RandTrim);
        let counted = [!trims_only, !trims_only, trims_only];
        let mut done: Vec<Completion> = Vec::with_capacity(job.iodepth as usize);

        let clock = Clock::get();
        // A synchronous engine has no submission step: its total latency
        // is its completion latency, recorded once and copied at the end.
        let lat_is_clat = self.engine.caps().sync && !stats.disable_clat && !stats.disable_lat;
        // Without latencies (disable_lat and disable_clat, gtod_reduce)
        // one clock read per I/O serves the samples and the deadline.
        let timed = !stats.disable_clat || !stats.disable_lat;
        let paced = self.rate.is_some() || self.think.is_some() || self.min_rate.is_some();
        let t_begin = clock.now();
        // Samples per window, unless a log that records every I/O takes
        // them per I/O.
        let mut m = Measure::new(
            clock,
            t_begin,
            job.ramp_time,
            (!stats.bw_per_io).then_some(stats.bw_avg),
            (!stats.iops_per_io).then_some(stats.iops_avg),
        );
        let deadline = job
            .runtime
            .map(|r| t_begin + clock.ticks(job.ramp_time + r));
        let deadline_ns = job.runtime.map(|r| (job.ramp_time + r).as_nanos() as u64);
        m.cut_off_at(deadline);

        let mut last: Option<(usize, u64, u32)> = None;
        let mut st = Tally::default();
        let mut seq = 0u64;
        // Time spent reading back each loop's writes (verify).
        let mut verify_ns = 0u64;

        // The queue: one buffer slot per I/O in flight. A synchronous
        // engine completes each I/O inside `queue`, so its depth is 1.
        let depth = if self.engine.caps().sync {
            1
        } else {
            job.iodepth.max(1)
        };
        let batch = job.iodepth_batch.clamp(1, depth);
        let complete_min = job.iodepth_batch_complete_min.clamp(1, depth);
        let complete_max = job.iodepth_batch_complete_max.clamp(complete_min, depth);
        let low = job.iodepth_low.clamp(1, depth);
        let mut free: Vec<u32> = (0..depth).rev().collect();
        let mut meta: Vec<Meta> = vec![Meta::default(); depth as usize];
        let mut pending: Vec<u32> = Vec::with_capacity(depth as usize);
        let mut inflight = 0u32;
        let mut stop = false;
        let running = RunState::running(job.rw.mode);
        progress.set_state(if m.ramping { RunState::Ramp } else { running });
        progress.set_files_open(self.files.files.iter().filter(|f| f.open).count() as u32);
        let cx = Cx {
            job,
            progress,
            running,
            files,
            clock,
            t_begin,
            deadline,
            deadline_ns,
            timed,
            lat_is_clat,
            paced,
            queued: !self.engine.caps().sync,
            slat_hist: stats.slat_percentiles,
            lat_hist: stats.lat_percentiles,
        };

        // The depth buckets of an I/O that completes inside `queue`.
        let (level_1, batch_1) = (DepthDist::level_bucket(1), DepthDist::batch_bucket(1));
        let burst_fits = self.burst_fits(job, &cx);
        let qburst_fits =
            self.qburst_fits(job, &cx, depth, (batch, complete_min, complete_max, low));

        'job: for lp in 0..loops {
            if lp > 0 {
                self.streams_again();
                if let Err((errno, msg)) = self
                    .files
                    .new_loop(job.unlink_each_loop, self.engine.as_mut())
                {
                    (out.error, out.error_detail) = (errno, msg);
                    break;
                }
                last = None;
                st.sync_due = None;
            }
            let mut loop_bytes = 0u64;
            let mut loop_ios = 0u64;
            loop {
                // A verify backlog due drains the queue first.
                let backlog = self.verify.as_ref().is_some_and(|v| v.due());
                let more = !stop && !backlog && loop_bytes < limit_bytes && loop_ios < limit_ios;
                if more && (shared.stopped() || io_jobs_done(job, shared)) {
                    stop = true;
                    continue;
                }
                // An fsync waits for the I/O in flight, so that it covers
                // every write issued before it and completes alone.
                let draining = st.sync_due.is_some() && (inflight > 0 || !pending.is_empty());
                // Plain reads and writes of one file take a fast path while
                // the job is past its ramp: through a synchronous engine,
                // or a queued one with fio's default batching (which
                // leaves I/Os in flight for the loop below to reap).
                if more
                    && (burst_fits || (qburst_fits && pending.is_empty()))
                    && !m.ramping
                    && self.files.files[0].open
                {
                    let mut budget = Budget {
                        bytes: loop_bytes,
                        ios: loop_ios,
                        limit_bytes,
                        limit_ios,
                        counted,
                    };
                    stop = if burst_fits {
                        self.burst(&cx, shared, &mut m, out, &mut budget, &mut seq)
                    } else {
                        let q = Queue {
                            free: &mut free,
                            meta: &mut meta,
                            inflight: &mut inflight,
                            done: &mut done,
                        };
                        self.qburst(&cx, shared, &mut m, out, &mut budget, &mut seq, q)
                    };
                    (loop_bytes, loop_ios) = (budget.bytes, budget.ios);
                    if out.error != 0 && !stop {
                        stop = true;
                    }
                    continue;
                }
                // Flow control: a job ahead of its share issues nothing
                // until the others catch up; its I/O in flight is reaped
                // meanwhile.
                let held = more && !draining && !free.is_empty() && self.ctl.held();
                if held && inflight == 0 && pending.is_empty() {
                    stop = self.ctl.hold(clock, deadline);
                    continue;
                }
                // Issue while there is room in the queue.
                if more && !held && !draining && !free.is_empty() {
                    if let Some(sfi) = st.sync_due.take().filter(|&i| self.files.files[i].open) {
                        if !self.sync_file(job, &cx, &mut m, out, sfi, &mut done) {
                            stop = true;
                            continue;
                        }
                    }
                    let pick = self.mix.next(&mut self.mix_rng);
                    let mut dir = pick.dir;
                    if let Some(rate) = &self.rate {
                        match rate.admit(dir, clock.ns_between(t_begin, clock.now()), deadline_ns) {
                            Some(d) => dir = d,
                            None => {
                                stop = true;
                                continue;
                            }
                        }
                    }
                    let d = dir as usize;
                    let (fi, offset, len) = match (pick.reuse_last && dir == pick.dir, last) {
                        (true, Some(l)) if self.files.files[l.0].open => l,
                        _ => {
                            let fi = self.files.pick();
                            let file = &mut self.files.files[fi];
                            let Some(g) = file.gen_of[d] else {
                                stop = true;
                                continue;
                            };
                            if let Some(r) = self.rewind.as_deref_mut() {
                                r.before_draw(fi, g, file.gens[g].pass());
                            }
                            if let Some(z) = self.ctl.zones.as_deref_mut() {
                                z.before_draw(fi, &mut file.gens);
                            }
                            let (offset, len) = file.gens[g].draw(
                                &mut self.bs[d],
                                &mut self.bs_rng[d],
                                &mut self.off_rng,
                                d,
                            );
                            let offset = match self.ctl.zones.as_deref_mut() {
                                None => offset,
                                Some(z) => match z.place(fi, offset, len) {
                                    Some(at) => at,
                                    None => {
                                        stop = true;
                                        continue;
                                    }
                                },
                            };
                            (fi, offset, len)
                        }
                    };
                    last = Some((fi, offset, len));
                    let len = if self.noio { 0 } else { len };
                    let op = match dir {
                        Dir::Read => Op::Read,
                        Dir::Write => Op::Write,
                        Dir::Trim => Op::Trim,
                    };
                    let slot = free.pop().unwrap_or(0);
                    if self.needs_data && op == Op::Write {
                        seq += 1;
                        if self.verify.is_some() {
                            self.prepare_verified(slot, fi, offset, len, seq);
                        } else {
                            self.data
                                .prepare(self.engine.buf(slot), len as usize, offset, seq);
                        }
                    }
                    let unit = IoUnit {
                        slot,
                        file: self.files.files[fi].id,
                        op,
                        offset,
                        len,
                    };
                    if counted[d] {
                        loop_bytes += len as u64;
                    }
                    loop_ios += 1;
                    if let Some(rate) = &mut self.rate {
                        rate.issued(dir, len as u64);
                    }
                    out.issued[d] += 1;
                    let t0 = if timed { clock.now() } else { 0 };
                    meta[slot as usize] = Meta {
                        slot,
                        dir,
                        fi,
                        offset,
                        len,
                        t_issue: t0,
                        t_commit: t0,
                    };
                    match self.engine.queue(&unit) {
                        Ok(Queued::Completed(c)) => {
                            // The clock first: clat ends when the call returns.
                            let t1 = clock.now();
                            Self::count_write(job, &mut st, dir, fi);
                            let level = if cx.queued {
                                DepthDist::level_bucket(inflight + pending.len() as u32 + 1)
                            } else {
                                level_1
                            };
                            out.depth.level[level] += 1;
                            out.depth.submit[batch_1] += 1;
                            out.depth.complete[batch_1] += 1;
                            free.push(c.slot);
                            if !self.finish(&cx, &mut m, out, meta[c.slot as usize], c.result, t1) {
                                stop = true;
                            }
                            continue;
                        }
                        Ok(Queued::InFlight) => {
                            Self::count_write(job, &mut st, dir, fi);
                            pending.push(slot);
                        }
                        Ok(Queued::Busy) => {
                            free.push(slot);
                            if counted[d] {
                                loop_bytes -= len as u64;
                            }
                            loop_ios -= 1;
                            out.issued[d] -= 1;
                        }
                        Err(e) => {
                            (out.error, out.error_detail) = (EIO, e.to_string());
                            break 'job;
                        }
                    }
                    // Submit a batch when it is full or the queue is.
                    if pending.len() as u32 >= batch || free.is_empty() {
                        if let Err(e) =
                            self.submit(&cx, &mut pending, &mut meta, &mut inflight, out)
                        {
                            (out.error, out.error_detail) = (EIO, e);
                            break 'job;
                        }
                    }
                    if !free.is_empty() {
                        continue;
                    }
                }
                if !pending.is_empty() {
                    if let Err(e) = self.submit(&cx, &mut pending, &mut meta, &mut inflight, out) {
                        (out.error, out.error_detail) = (EIO, e);
                        break 'job;
                    }
                }
                if inflight == 0 {
                    if backlog && !stop {
                        stop = !self.verify_pass(&cx, out, &mut done, true);
                        continue;
                    }
                    if more && !free.is_empty() {
                        continue;
                    }
                    break;
                }
                // Reap as fio does: at least the batch minimum and at most
                // the batch maximum per call while more I/O is to come; a
                // full queue drains to iodepth_low before it is refilled.
                let full = free.is_empty();
                loop {
                    // At the end everything still in flight is reaped at
                    // once, as fio's final drain does.
                    let (want, most) = if more {
                        (complete_min.min(inflight), complete_max)
                    } else {
                        (inflight, inflight)
                    };
                    done.clear();
                    if let Err(e) = self.engine.reap(want as usize, most as usize, &mut done) {
                        (out.error, out.error_detail) = (EIO, e.to_string());
                        break 'job;
                    }
                    let t1 = clock.now();
                    out.depth.complete[DepthDist::batch_bucket(done.len() as u32)] += 1;
                    for &c in done.iter() {
                        inflight -= 1;
                        free.push(c.slot);
                        if !self.finish(&cx, &mut m, out, meta[c.slot as usize], c.result, t1) {
                            stop = true;
                        }
                    }
                    if !(more && full && inflight > low) || done.is_empty() {
                        break;
                    }
                }
            }
            if self.verify.is_some() {
                // fio reads back each loop's writes when they are done;
                // a job stopped by an error or Ctrl-C only settles.
                let read_back = out.error == 0 && !shared.stopped();
                let t = clock.now();
                let go_on = self.verify_pass(&cx, out, &mut done, read_back);
                verify_ns += clock.ns_between(t, clock.now());
                if !go_on {
                    break;
                }
            }
            if stop {
                break;
            }
        }
        // The job's runtime includes end_fsync and the fsync of
        // fsync_on_close, as fio's does: a buffered write job "with fsync
        // at the end" is timed until the data is on the device.
        if job.end_fsync {
            self.files.fsync_open(self.engine.as_mut());
        }
        let _ = self.files.close_all(self.engine.as_mut());
        let end = clock.now();

        if lat_is_clat {
            for r in out.dirs.iter_mut() {
                r.lat = r.clat.clone();
            }
        }
        let runtime = clock.ns_between(m.start, end);
        out.runtime_ns = runtime;
        if let Some(logs) = &mut self.logs {
            if let Err(e) = logs.finish(runtime / 1_000_000, &mut out.dirs) {
                if out.error == 0 {
                    (out.error, out.error_detail) =
                        (e.raw_os_error().unwrap_or(EIO), e.to_string());
                }
            }
        }
        for dir in Dir::ALL {
            // Verify's read-back makes a write job read too. As in fio,
            // the read-back after a loop's writes is timed apart: it is
            // the reads' time, not the writes' (a backlog's read-back,
            // amid the writes, is both's).
            // An engine that does no I/O has no time moving data (fio's
            // runtime of a direction counts only with bytes).
            let used = self.mix.uses(dir) && !self.noio;
            let main = if used {
                runtime - verify_ns.min(runtime)
            } else {
                0
            };
            let read_back = if dir == Dir::Read { verify_ns } else { 0 };
            if used || (out.dirs[dir as usize].total_ios > 0 && !self.noio) {
                out.dirs[dir as usize].runtime_ns = (main + read_back).min(runtime);
            }
        }
        let cpu = thread_cpu_usage().since(&m.cpu0);
        out.caused_io = m.io0.and_then(|io0| {
            iolab_engine::host::thread_io().map(|io| {
                let d = io.since(&io0);
                CausedIo {
                    read_bytes: d.read_bytes,
                    write_bytes: d.write_bytes,
                }
            })
        });
        if !job.direct && out.dirs[Dir::Write as usize].io_bytes > 0 && job.engine.moves_file_data()
        {
            out.unflushed_bytes = self.unflushed(files);
        }
        out.cpu = CpuResult {
            user_ns: cpu.user.as_nanos() as u64,
            system_ns: cpu.system.as_nanos() as u64,
            run_delay_ns: cpu.run_delay.as_nanos() as u64,
            ctx: cpu.voluntary_ctx + cpu.involuntary_ctx,
            majflt: cpu.majflt,
            minflt: cpu.minflt,
        };
    }
}

impl Worker {
    /// Bytes of this clone's files in the page cache and not yet on the
    /// device, after its last write (and end_fsync): what its buffered
    /// writes left in memory. None when the kernel cannot tell.
    fn unflushed(&self, files: &[PlanFile]) -> Option<u64> {
        if !crate::checks::on() {
            return None;
        }
        let mut total = 0;
        for f in &self.files.files {
            let file = std::fs::File::open(&files[f.path_index].path).ok()?;
            let st = iolab_engine::file::cache_stat(&file).ok()?;
            total += st.dirty + st.writeback;
        }
        Some(total)
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
