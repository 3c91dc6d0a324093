//! One job clone on its own thread: opens its files through its engine,
//! draws each I/O from the generators, times it, and keeps fio's statistics
//! in state it owns alone. Per I/O it does two clock reads, the engine call
//! and arithmetic: no allocation, lock or other system call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::clock::Clock;
use iolab_engine::host::thread_cpu_usage;
use iolab_engine::{
    create, errno_text, Access, Completion, Engine, EngineOpts, FileId, FileSpec, IoUnit, Op,
    Queued,
};
use iolab_stats::{CpuResult, DepthDist, Dir, JobResult};

use crate::gen::{BsGen, OffsetGen, Pattern, Region, Rng, RwMix, Stream};
use crate::layout::fill_random;
use crate::plan::{BsSpec, PlanFile, PlanJob};

const EINVAL: i32 = 22;
const EIO: i32 = 5;

/// What a worker shares with the run: the stop flag (Ctrl-C, exitall).
pub struct Shared<'a> {
    pub stop: &'a AtomicBool,
}

/// One open file of the clone with its offset generators. Random
/// directions share one generator, as fio's random map is per file: a
/// randrw pass reads or writes each block once, never both. Sequential
/// directions each keep their own position, as fio's do.
struct WFile {
    id: FileId,
    path_index: usize,
    gens: Vec<OffsetGen>,
    /// Which of `gens` each direction uses.
    gen_of: [Option<usize>; 3],
}

/// Counters of the current bandwidth window.
#[derive(Default, Clone, Copy)]
struct Window {
    bytes: [u64; 3],
    ios: [u64; 3],
}

/// Runs one job clone to the end and returns what it measured. `index` is
/// the clone's position in the plan, unique in the run.
pub fn run_clone(job: &PlanJob, index: u32, files: &[PlanFile], shared: &Shared) -> JobResult {
    let mut result = JobResult {
        name: job.name.clone(),
        groupid: job.groupid,
        description: job.description.clone(),
        options: job.options.clone(),
        setup: job.setup(),
        pid: iolab_engine::host::thread_id(),
        clones: 1,
        ..Default::default()
    };
    if !job.startdelay.is_zero() {
        sleep_unless_stopped(job.startdelay, shared.stop);
    }
    match Worker::new(job, index, files) {
        Ok(mut w) => w.run(job, files, shared, &mut result),
        Err((errno, msg)) => {
            result.error = errno;
            result.error_detail = msg;
        }
    }
    result
}

/// A setup failure: the errno for fio's `error` field and the message.
type SetupError = (i32, String);

fn setup(e: iolab_engine::EngineError) -> SetupError {
    (e.errno(), e.to_string())
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

struct Worker {
    engine: Box<dyn Engine>,
    files: Vec<WFile>,
    bs: [BsGen; 3],
    mix: RwMix,
    mix_rng: Rng,
    bs_rng: [Rng; 3],
    data_rng: Rng,
    needs_data: bool,
}

fn bs_gen(spec: &BsSpec) -> Result<BsGen, SetupError> {
    let g = match spec {
        BsSpec::Fixed(b) => BsGen::fixed(*b),
        BsSpec::Range(r) => BsGen::range(*r, false),
        BsSpec::Split(s) => BsGen::split(s),
    };
    g.map_err(|e| (EINVAL, format!("block size: {e}")))
}

impl Worker {
    fn new(job: &PlanJob, index: u32, files: &[PlanFile]) -> Result<Worker, SetupError> {
        let opts = EngineOpts {
            iodepth: job.iodepth,
            buf_size: job.max_bs() as usize,
            align: iolab_engine::host::page_size() as usize,
            hipri: false,
        };
        let mut engine = create(&job.engine, &opts).map_err(setup)?;
        let mode = job.rw.mode;
        let mix = RwMix::new(mode, job.rwmixread);
        let seeds = &job.random.seeds;
        let pattern = Pattern::from_rw(
            job.rw,
            job.random.distribution.clone(),
            job.random.norandommap,
            job.random.percentage_random,
        );
        let offset_rng = seeds.rng(index, Stream::Offset);
        let mut wfiles = Vec::with_capacity(job.files.len());
        for (fi, jf) in job.files.iter().enumerate() {
            let pf = &files[jf.file];
            let spec = FileSpec {
                path: pf.path.clone(),
                read: mode.reads() || job.pre_read,
                write: mode.writes() || mode.trims(),
                create: false,
                direct: job.direct,
                sync: job.sync,
                access: if mode.is_random() {
                    Access::Random
                } else {
                    Access::Sequential
                },
            };
            let id = engine.open(&spec).map_err(setup)?;
            if job.invalidate && !pf.block_device {
                if let Ok(f) = std::fs::File::open(&pf.path) {
                    let _ = iolab_engine::file::drop_cache(&f, jf.offset, jf.len);
                }
            }
            let mut gens: Vec<OffsetGen> = Vec::new();
            let mut gen_of: [Option<usize>; 3] = [None; 3];
            let shared_map = mode.is_random();
            for d in Dir::ALL {
                if !mix.uses(d) {
                    continue;
                }
                if shared_map {
                    if let Some(g) = gen_of.iter().flatten().next() {
                        gen_of[d as usize] = Some(*g);
                        continue;
                    }
                }
                let block = if shared_map {
                    Dir::ALL
                        .iter()
                        .filter(|x| mix.uses(**x))
                        .map(|x| job.blockalign[*x as usize])
                        .min()
                        .unwrap_or(job.blockalign[d as usize])
                } else {
                    job.blockalign[d as usize]
                };
                let region = Region {
                    start: jf.offset,
                    len: jf.len,
                    block,
                };
                let rng = offset_rng.substream(fi as u64 * 3 + d as u64);
                gens.push(
                    OffsetGen::new(region, &pattern, rng)
                        .map_err(|e| (EINVAL, format!("{}: {e}", pf.path.display())))?,
                );
                gen_of[d as usize] = Some(gens.len() - 1);
            }
            wfiles.push(WFile {
                id,
                path_index: jf.file,
                gens,
                gen_of,
            });
        }
        let needs_data = engine.caps().needs_buffers && (mode.writes());
        let mut data_rng = seeds.rng(index, Stream::Data);
        if needs_data {
            for slot in 0..job.iodepth {
                fill_random(engine.buf(slot), &mut data_rng);
            }
        }
        Ok(Worker {
            engine,
            files: wfiles,
            bs: [
                bs_gen(&job.bs[0])?,
                bs_gen(&job.bs[1])?,
                bs_gen(&job.bs[2])?,
            ],
            mix,
            mix_rng: seeds.rng(index, Stream::RwMix),
            bs_rng: [
                seeds.rng(index, Stream::BlockSize(Dir::Read)),
                seeds.rng(index, Stream::BlockSize(Dir::Write)),
                seeds.rng(index, Stream::BlockSize(Dir::Trim)),
            ],
            data_rng,
            needs_data,
        })
    }

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
        let limit_bytes = if job.time_based {
            u64::MAX
        } else {
            job.io_size.saturating_mul(job.loops as u64)
        };
        let limit_ios = job.number_ios.unwrap_or(u64::MAX);
        let mut done: Vec<Completion> = Vec::with_capacity(job.iodepth as usize);

        let clock = Clock::get();
        // A synchronous engine has no submission step: its total latency
        // is its completion latency, recorded once and copied at the end.
        let lat_is_clat = self.engine.caps().sync && !stats.disable_clat && !stats.disable_lat;
        let t_begin = clock.now();
        let wall_begin = Instant::now();
        let ramp_end = t_begin + clock.ticks(job.ramp_time);
        let mut ramping = !job.ramp_time.is_zero();
        let mut start = t_begin;
        let deadline = job
            .runtime
            .map(|r| t_begin + clock.ticks(job.ramp_time + r));
        let mut cpu0 = thread_cpu_usage();

        let mut issued_bytes = 0u64;
        let mut issued_ios = 0u64;
        let mut file_rr = 0usize;
        let mut last: Option<(usize, u64, u32)> = None;
        let mut writes_since_sync = 0u32;
        let mut sync_due: Option<FileId> = None;
        let mut win = Window::default();
        let mut win_start = start;
        let sample_every = clock.ticks(stats.bw_avg);
        let mut next_sample = start + sample_every;
        let mut seq = 0u64;
        let mut since_think = 0u32;
        let mut pace_next = [wall_begin; 3];

        while issued_bytes < limit_bytes && issued_ios < limit_ios {
            if shared.stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(file) = sync_due.take() {
                let sop = if job.fsync > 0 {
                    Op::Fsync
                } else {
                    Op::Fdatasync
                };
                let s0 = clock.now();
                let unit = IoUnit {
                    slot: 0,
                    file,
                    op: sop,
                    offset: 0,
                    len: 0,
                };
                match self.io(&unit, &mut done) {
                    Ok(Completion { result: Ok(_), .. }) => {
                        if !ramping {
                            out.sync.record(clock.ns_between(s0, clock.now()));
                        }
                    }
                    Ok(Completion { result: Err(e), .. }) => {
                        out.error = e;
                        out.error_detail = format!("{} on fsync", errno_text(e));
                        break;
                    }
                    Err(msg) => {
                        out.error = EIO;
                        out.error_detail = msg;
                        break;
                    }
                }
            }
            let pick = self.mix.next(&mut self.mix_rng);
            let d = pick.dir as usize;
            let (fi, offset, len) = match (pick.reuse_last, last) {
                (true, Some(l)) => l,
                _ => {
                    let fi = file_rr % self.files.len();
                    file_rr = file_rr.wrapping_add(1);
                    let len = self.bs[d].next(&mut self.bs_rng[d]);
                    let file = &mut self.files[fi];
                    let Some(g) = file.gen_of[d] else {
                        break;
                    };
                    (fi, file.gens[g].next(len as u64), len)
                }
            };
            last = Some((fi, offset, len));
            let op = match pick.dir {
                Dir::Read => Op::Read,
                Dir::Write => Op::Write,
                Dir::Trim => Op::Trim,
            };
            if self.needs_data && op == Op::Write {
                seq += 1;
                stamp(self.engine.buf(0), len as usize, offset, seq);
            }
            // Rate limits: wait until this direction may go again.
            if job.pace.rate[d] > 0 || job.pace.rate_iops[d] > 0 {
                let now = Instant::now();
                if pace_next[d] > now {
                    std::thread::sleep(pace_next[d] - now);
                }
                let gap_ns = pace_gap(job, d, len as u64, &mut self.data_rng);
                pace_next[d] = pace_next[d].max(now) + Duration::from_nanos(gap_ns);
            }
            let unit = IoUnit {
                slot: 0,
                file: self.files[fi].id,
                op,
                offset,
                len,
            };
            let t0 = clock.now();
            let c = match self.io(&unit, &mut done) {
                Ok(c) => c,
                Err(msg) => {
                    out.error = EIO;
                    out.error_detail = msg;
                    break;
                }
            };
            let t1 = clock.now();
            issued_bytes += len as u64;
            issued_ios += 1;

            if ramping && t1 >= ramp_end {
                // Statistics start now; what the ramp did is forgotten.
                ramping = false;
                let keep = (out.error, out.error_detail.clone());
                reset_stats(out);
                (out.error, out.error_detail) = keep;
                issued_bytes = 0;
                issued_ios = 0;
                start = t1;
                cpu0 = thread_cpu_usage();
                win = Window::default();
                win_start = t1;
                next_sample = t1 + sample_every;
                continue;
            }

            let ns = clock.ns_between(t0, t1);
            match c.result {
                Ok(n) => {
                    if !ramping {
                        let r = &mut out.dirs[d];
                        r.io_bytes += n as u64;
                        r.total_ios += 1;
                        if n < len {
                            r.short_ios += 1;
                        }
                        if !stats.disable_clat {
                            r.clat.record(ns);
                            out.lat_buckets.record(ns);
                        }
                        if !stats.disable_lat && !lat_is_clat {
                            r.lat.record(ns);
                        }
                        out.issued[d] += 1;
                        out.depth.level[0] += 1;
                        out.depth.submit[1] += 1;
                        out.depth.complete[1] += 1;
                        win.bytes[d] += n as u64;
                        win.ios[d] += 1;
                    }
                }
                Err(errno) => {
                    if !continues_after(job.continue_on_error, pick.dir) {
                        out.error = errno;
                        out.error_detail = format!(
                            "{} (errno {errno}) on {} of {len} bytes at offset {offset} in `{}`",
                            errno_text(errno),
                            pick.dir.key(),
                            files[self.files[fi].path_index].path.display()
                        );
                        break;
                    }
                }
            }

            // fsync / fdatasync every N writes: due now, issued before the
            // next I/O (as fio does, so the last writes of a job are not
            // followed by one).
            if op == Op::Write && (job.fsync > 0 || job.fdatasync > 0) {
                writes_since_sync += 1;
                let every = if job.fsync > 0 {
                    job.fsync
                } else {
                    job.fdatasync
                };
                if writes_since_sync >= every {
                    writes_since_sync = 0;
                    sync_due = Some(self.files[fi].id);
                }
            }

            // Bandwidth and IOPS samples, once per window.
            if !stats.disable_bw && !ramping && t1 >= next_sample {
                let span = clock.ns_between(win_start, t1).max(1);
                for dir in Dir::ALL {
                    if self.mix.uses(dir) {
                        let i = dir as usize;
                        let r = &mut out.dirs[i];
                        r.bw_samples.record(
                            (win.bytes[i] as u128 * 1_000_000_000 / span as u128 / 1024) as u64,
                        );
                        r.iops_samples
                            .record((win.ios[i] as u128 * 1_000_000_000 / span as u128) as u64);
                    }
                }
                win = Window::default();
                win_start = t1;
                next_sample = t1 + sample_every;
            }

            // Think time after every thinktime_blocks I/Os.
            if !job.pace.thinktime.is_zero() {
                since_think += 1;
                if since_think >= job.pace.thinktime_blocks {
                    since_think = 0;
                    think(job.pace.thinktime, job.pace.thinktime_spin);
                }
            }

            if let Some(dl) = deadline {
                if t1 >= dl {
                    break;
                }
            }
        }
        let end = clock.now();

        let ids: Vec<FileId> = self.files.iter().map(|f| f.id).collect();
        if job.end_fsync || job.fsync_on_close {
            for &id in &ids {
                let unit = IoUnit {
                    slot: 0,
                    file: id,
                    op: Op::Fsync,
                    offset: 0,
                    len: 0,
                };
                let _ = self.io(&unit, &mut done);
            }
        }
        for id in ids {
            let _ = self.engine.close(id);
        }

        if lat_is_clat {
            for r in out.dirs.iter_mut() {
                r.lat = r.clat.clone();
            }
        }
        let runtime = clock.ns_between(start, end);
        out.runtime_ns = runtime;
        out.elapsed_s = wall_begin.elapsed().as_secs();
        for dir in Dir::ALL {
            if self.mix.uses(dir) {
                out.dirs[dir as usize].runtime_ns = runtime;
            }
        }
        let cpu = thread_cpu_usage().since(&cpu0);
        out.cpu = CpuResult {
            user_ns: cpu.user.as_nanos() as u64,
            system_ns: cpu.system.as_nanos() as u64,
            ctx: cpu.voluntary_ctx + cpu.involuntary_ctx,
            majflt: cpu.majflt,
            minflt: cpu.minflt,
        };
    }
}

/// Nanoseconds until the next I/O of a rate-limited direction may start.
fn pace_gap(job: &PlanJob, d: usize, len: u64, rng: &mut Rng) -> u64 {
    let by_bytes = match job.pace.rate[d] {
        0 => 0,
        r => len.saturating_mul(1_000_000_000) / r,
    };
    let by_ios = match job.pace.rate_iops[d] {
        0 => 0,
        r => 1_000_000_000 / r,
    };
    let mean = by_bytes.max(by_ios);
    if job.pace.poisson {
        // Exponential gaps with the same mean: a Poisson arrival process.
        let u = rng.unit_f64().max(f64::MIN_POSITIVE);
        (-(u.ln()) * mean as f64) as u64
    } else {
        mean
    }
}

fn think(total: Duration, spin: Duration) {
    let spin = spin.min(total);
    let t = Instant::now();
    while t.elapsed() < spin {
        std::hint::spin_loop();
    }
    let rest = total - spin;
    if !rest.is_zero() {
        std::thread::sleep(rest);
    }
}

/// fio's continue_on_error: whether an error in this direction is counted
/// and the job goes on.
fn continues_after(policy: &str, dir: Dir) -> bool {
    match policy {
        "all" | "io" => true,
        "read" => dir == Dir::Read,
        "write" => dir == Dir::Write,
        _ => false,
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

fn reset_stats(out: &mut JobResult) {
    out.dirs = Default::default();
    out.sync = Default::default();
    out.lat_buckets = Default::default();
    out.depth = DepthDist::default();
    out.issued = [0; 3];
}
