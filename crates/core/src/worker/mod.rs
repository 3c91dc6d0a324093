//! One job clone on its own thread: opens its files through its engine,
//! draws each I/O from the generators, times it, and keeps fio's statistics
//! in state it owns alone. Per I/O it does at most two clock reads, the
//! engine call and arithmetic: no allocation, lock or other system call.
//! Options that are off cost a predictable branch each: pacing (`pace`)
//! and the choice among several files (`fileset`) live in their own
//! modules.

mod errors;
mod fileset;
mod measure;
mod pace;
mod setup;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::host::thread_cpu_usage;
use iolab_engine::{errno_text, Completion, Engine, FileId, IoUnit, Op, Queued};
use iolab_stats::{CpuResult, Dir, JobResult};

use crate::gen::{BsGen, Rng, RwMix};
use crate::plan::{PlanFile, PlanJob};

use errors::{continues_after, strerror};
use fileset::FileSet;
use measure::Measure;
use pace::{MinRate, RateLimit, Think};
use setup::engine_error;

const EINVAL: i32 = 22;
const EIO: i32 = 5;
const EILSEQ: i32 = 84;

/// What a worker shares with the run: the run's stop flag (Ctrl-C) and
/// the clone's own (another job's exitall).
pub struct Shared<'a> {
    pub stop: &'a AtomicBool,
    pub halt: &'a AtomicBool,
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
    if !job.startdelay.is_zero() {
        sleep_unless_stopped(job.startdelay, shared);
    }
    if !shared.stopped() {
        match Worker::new(job, index, files) {
            Ok(mut w) => w.run(job, files, shared, &mut result),
            Err((errno, msg)) => {
                result.error = errno;
                result.error_detail = msg;
            }
        }
    }
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
    mix_rng: Rng,
    bs_rng: [Rng; 3],
    needs_data: bool,
    rate: Option<RateLimit>,
    think: Option<Think>,
    min_rate: Option<MinRate>,
}

impl Worker {
    /// Issues one I/O and waits for it; returns the completion.
    fn io(&mut self, unit: &IoUnit, done: &mut Vec<Completion>) -> Result<Completion, String> {
        loop {
            match self.engine.queue(unit).map_err(|e| e.to_string())? {
                Queued::Completed(c) => return Ok(c),
                Queued::InFlight => {
                    self.engine.commit().map_err(|e| e.to_string())?;
                    done.clear();
                    self.engine.reap(1, done).map_err(|e| e.to_string())?;
                    if let Some(c) = done.first() {
                        return Ok(*c);
                    }
                }
                Queued::Busy => {
                    done.clear();
                    self.engine.reap(1, done).map_err(|e| e.to_string())?;
                }
            }
        }
    }

    fn run(&mut self, job: &PlanJob, files: &[PlanFile], shared: &Shared, out: &mut JobResult) {
        let stats = &job.stats;
        // Each loop moves io_size bytes (number_ios I/Os at most), as
        // fio's do; a time_based job goes on until its runtime is over.
        let (loops, limit_bytes) = if job.time_based {
            (1, u64::MAX)
        } else {
            (job.loops.max(1), job.io_size)
        };
        let limit_ios = job.number_ios.unwrap_or(u64::MAX);
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
        let mut m = Measure::new(clock, t_begin, job.ramp_time, stats.bw_avg);
        let deadline = job
            .runtime
            .map(|r| t_begin + clock.ticks(job.ramp_time + r));
        let deadline_ns = job.runtime.map(|r| (job.ramp_time + r).as_nanos() as u64);

        let mut last: Option<(usize, u64, u32)> = None;
        let mut writes_since_sync = 0u32;
        // The file (by index) whose fsync is due before the next I/O.
        let mut sync_due: Option<usize> = None;
        let mut seq = 0u64;

        'job: for lp in 0..loops {
            if lp > 0 {
                if let Err((errno, msg)) = self
                    .files
                    .new_loop(job.unlink_each_loop, self.engine.as_mut())
                {
                    (out.error, out.error_detail) = (errno, msg);
                    break;
                }
                last = None;
                sync_due = None;
            }
            let mut loop_bytes = 0u64;
            let mut loop_ios = 0u64;
            while loop_bytes < limit_bytes && loop_ios < limit_ios {
                if shared.stopped() {
                    break 'job;
                }
                if let Some(sfi) = sync_due.take().filter(|&i| self.files.files[i].open) {
                    let file = self.files.files[sfi].id;
                    let s0 = clock.now();
                    let op = if job.fsync > 0 {
                        Op::Fsync
                    } else {
                        Op::Fdatasync
                    };
                    match self.io(&sync_unit(file, op), &mut done) {
                        Ok(Completion { result: Ok(_), .. }) => {
                            if !m.ramping {
                                out.sync.record(clock.ns_between(s0, clock.now()));
                            }
                        }
                        Ok(Completion { result: Err(e), .. }) => {
                            out.error = e;
                            out.error_detail = format!("{} on fsync", errno_text(e));
                            break 'job;
                        }
                        Err(msg) => {
                            out.error = EIO;
                            out.error_detail = msg;
                            break 'job;
                        }
                    }
                }
                let pick = self.mix.next(&mut self.mix_rng);
                let mut dir = pick.dir;
                if let Some(rate) = &self.rate {
                    match rate.admit(dir, clock.ns_between(t_begin, clock.now()), deadline_ns) {
                        Some(d) => dir = d,
                        None => break 'job,
                    }
                }
                let d = dir as usize;
                let (fi, offset, len) = match (pick.reuse_last && dir == pick.dir, last) {
                    (true, Some(l)) if self.files.files[l.0].open => l,
                    _ => {
                        let fi = self.files.pick();
                        let len = self.bs[d].next(&mut self.bs_rng[d]);
                        let file = &mut self.files.files[fi];
                        let Some(g) = file.gen_of[d] else {
                            break 'job;
                        };
                        (fi, file.gens[g].next(len as u64), len)
                    }
                };
                last = Some((fi, offset, len));
                let op = match dir {
                    Dir::Read => Op::Read,
                    Dir::Write => Op::Write,
                    Dir::Trim => Op::Trim,
                };
                if self.needs_data && op == Op::Write {
                    seq += 1;
                    stamp(self.engine.buf(0), len as usize, offset, seq);
                }
                let file = self.files.files[fi].id;
                let unit = IoUnit {
                    slot: 0,
                    file,
                    op,
                    offset,
                    len,
                };
                let t0 = if timed { clock.now() } else { 0 };
                let c = match self.io(&unit, &mut done) {
                    Ok(c) => c,
                    Err(msg) => {
                        out.error = EIO;
                        out.error_detail = msg;
                        break 'job;
                    }
                };
                let t1 = clock.now();
                loop_bytes += len as u64;
                loop_ios += 1;
                if let Some(rate) = &mut self.rate {
                    rate.issued(dir, len as u64);
                }

                // Counts are kept during ramp_time too and forgotten when
                // it ends, as fio's are (a job that ends within its ramp
                // reports them); latencies and samples start after it.
                out.issued[d] += 1;
                out.depth.level[0] += 1;
                out.depth.submit[1] += 1;
                out.depth.complete[1] += 1;
                // fio counts a failed I/O in total_ios too, with no bytes
                // and no latency.
                out.dirs[d].total_ios += 1;
                match c.result {
                    Ok(n) => {
                        let r = &mut out.dirs[d];
                        r.io_bytes += n as u64;
                        if n < len {
                            r.short_ios += 1;
                        }
                        if !m.ramping {
                            if timed {
                                let ns = clock.ns_between(t0, t1);
                                if !stats.disable_clat {
                                    r.clat.record(ns);
                                    out.lat_buckets.record(ns);
                                }
                                if !stats.disable_lat && !lat_is_clat {
                                    r.lat.record(ns);
                                }
                            }
                            m.count(d, n as u64);
                        }
                    }
                    Err(errno) => {
                        out.total_err += 1;
                        if out.first_error == 0 {
                            out.first_error = errno;
                            out.first_error_text = strerror(errno);
                        }
                        if !continues_after(job.continue_on_error, dir, errno) {
                            out.error = errno;
                            out.error_detail = format!(
                                "{} (errno {errno}) on {} of {len} bytes at offset {offset} in `{}`",
                                errno_text(errno),
                                dir.key(),
                                files[self.files.files[fi].path_index].path.display()
                            );
                            break 'job;
                        }
                    }
                }
                if let Err(e) = self.files.account(fi, len as u64, self.engine.as_mut()) {
                    (out.error, out.error_detail) = engine_error(e);
                    break 'job;
                }

                // fsync / fdatasync every N writes: due now, issued before
                // the next I/O (as fio does, so the last writes of a job
                // are not followed by one).
                if op == Op::Write && (job.fsync > 0 || job.fdatasync > 0) {
                    writes_since_sync += 1;
                    let every = if job.fsync > 0 {
                        job.fsync
                    } else {
                        job.fdatasync
                    };
                    if writes_since_sync >= every {
                        writes_since_sync = 0;
                        sync_due = Some(fi);
                    }
                }

                if m.tick(t1, clock, out, &self.mix) {
                    if let Some(min) = &mut self.min_rate {
                        min.restart(clock.ns_between(t_begin, m.ramp_end()));
                    }
                }

                if paced {
                    let now_ns = clock.ns_between(t_begin, t1);
                    if let Some(min) = &mut self.min_rate {
                        if let Err(msg) = min.check(now_ns, &out.dirs) {
                            out.error = EIO;
                            out.error_detail = msg;
                            break 'job;
                        }
                    }
                    if let Some(think) = &mut self.think {
                        think.after_io(now_ns, deadline_ns);
                    }
                }

                if let Some(dl) = deadline {
                    if t1 >= dl {
                        break 'job;
                    }
                }
            }
        }
        let end = clock.now();

        if job.end_fsync {
            self.files.fsync_open(self.engine.as_mut());
        }
        let _ = self.files.close_all(self.engine.as_mut());

        if lat_is_clat {
            for r in out.dirs.iter_mut() {
                r.lat = r.clat.clone();
            }
        }
        let runtime = clock.ns_between(m.start, end);
        out.runtime_ns = runtime;
        for dir in Dir::ALL {
            if self.mix.uses(dir) {
                out.dirs[dir as usize].runtime_ns = runtime;
            }
        }
        let cpu = thread_cpu_usage().since(&m.cpu0);
        out.cpu = CpuResult {
            user_ns: cpu.user.as_nanos() as u64,
            system_ns: cpu.system.as_nanos() as u64,
            ctx: cpu.voluntary_ctx + cpu.involuntary_ctx,
            majflt: cpu.majflt,
            minflt: cpu.minflt,
        };
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

/// Makes each written block unique: the offset and a sequence number at the
/// start of every 4 KiB of the buffer, so no two written blocks are equal
/// (a deduplicating device sees real work) at a cost of a few stores.
#[inline]
fn stamp(buf: &mut [u8], len: usize, offset: u64, seq: u64) {
    let len = len.min(buf.len());
    let mut at = 0;
    while at + 16 <= len {
        let o = offset + at as u64;
        buf[at..at + 8].copy_from_slice(&o.to_le_bytes());
        buf[at + 8..at + 16].copy_from_slice(&seq.to_le_bytes());
        at += 4096;
    }
}
