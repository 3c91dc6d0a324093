//! What happens around one I/O's completion: latencies (slat from issue to
//! submission, clat from submission to completion, lat from issue to
//! completion), counts, errors and `continue_on_error`, fsync due after N
//! writes, bandwidth samples, minimum rates, think time and the deadline.
//! The general loop and the fast paths share it: `finish` accounts any
//! completion, `record_latencies` the latencies of one.

use iolab_engine::clock::Clock;
use iolab_engine::{errno_text, Completion, Op};
use iolab_stats::{Dir, JobResult};

use super::errors::{io_failure, strerror};
use super::logs::Logged;
use super::measure::Measure;
use super::setup::engine_error;
use super::{sync_unit, Worker, EIO};
use crate::plan::{PlanFile, PlanJob};
use crate::progress::{CloneProgress, RunState};

/// One I/O in flight: where it goes and when it was issued and submitted
/// (clock ticks).
#[derive(Clone, Copy, Debug)]
pub(super) struct Meta {
    /// The buffer slot it uses.
    pub slot: u32,
    pub dir: Dir,
    pub fi: usize,
    pub offset: u64,
    pub len: u32,
    pub t_issue: u64,
    pub t_commit: u64,
}

impl Meta {
    /// An I/O issued at `t` (clock ticks), its submission time until it
    /// is submitted.
    #[inline(always)]
    pub fn issued(slot: u32, dir: Dir, fi: usize, offset: u64, len: u32, t: u64) -> Meta {
        Meta {
            slot,
            dir,
            fi,
            offset,
            len,
            t_issue: t,
            t_commit: t,
        }
    }
}

impl Default for Meta {
    fn default() -> Self {
        Meta {
            slot: 0,
            dir: Dir::Read,
            fi: 0,
            offset: 0,
            len: 0,
            t_issue: 0,
            t_commit: 0,
        }
    }
}

/// Counters that outlive one I/O.
#[derive(Default)]
pub(super) struct Tally {
    pub writes_since_sync: u32,
    /// The file (by index) whose fsync is due before the next I/O.
    pub sync_due: Option<usize>,
}

/// Fixed facts of one run of the loop.
pub(super) struct Cx<'a> {
    pub job: &'a PlanJob,
    /// The clone's progress counters, and its state while it does I/O.
    pub progress: &'a CloneProgress,
    pub running: RunState,
    pub files: &'a [PlanFile],
    pub clock: &'a Clock,
    pub t_begin: u64,
    pub deadline: Option<u64>,
    pub deadline_ns: Option<u64>,
    /// Latencies are measured (not disable_lat and disable_clat both).
    pub timed: bool,
    /// A synchronous engine: lat equals clat and is copied at the end.
    pub lat_is_clat: bool,
    pub paced: bool,
    /// The engine queues I/O (submission is a step of its own, so slat is
    /// measured).
    pub queued: bool,
    /// slat and lat keep a histogram only when their percentiles are
    /// reported (slat_percentiles, lat_percentiles): otherwise nothing
    /// reads it, and its bins are cache lines touched on every I/O.
    pub slat_hist: bool,
    pub lat_hist: bool,
}

impl<'a> Cx<'a> {
    /// The facts of a run of `job` that begins now, through an engine
    /// that is synchronous (`sync`) or queues, paced or not.
    pub fn begin(
        job: &'a PlanJob,
        files: &'a [PlanFile],
        progress: &'a CloneProgress,
        sync: bool,
        paced: bool,
    ) -> Cx<'a> {
        let stats = &job.stats;
        let clock = Clock::get();
        let t_begin = clock.now();
        Cx {
            job,
            progress,
            running: RunState::running(job.rw.mode),
            files,
            clock,
            t_begin,
            deadline: job
                .runtime
                .map(|r| t_begin + clock.ticks(job.ramp_time + r)),
            deadline_ns: job.runtime.map(|r| (job.ramp_time + r).as_nanos() as u64),
            // Without latencies (disable_lat and disable_clat, gtod_reduce)
            // one clock read per I/O serves the samples and the deadline.
            timed: !stats.disable_clat || !stats.disable_lat,
            // A synchronous engine has no submission step: its total
            // latency is its completion latency, recorded once and copied
            // at the end.
            lat_is_clat: sync && !stats.disable_clat && !stats.disable_lat,
            paced,
            queued: !sync,
            slat_hist: stats.slat_percentiles,
            lat_hist: stats.lat_percentiles,
        }
    }
}

/// Records the latencies of one I/O that completed at `t_done`, past the
/// ramp: clat (with fio's buckets), lat and slat as the job keeps them.
/// Returns (slat, clat, lat) for the logs.
#[inline(always)]
pub(super) fn record_latencies(
    cx: &Cx,
    out: &mut JobResult,
    io: &Meta,
    t_done: u64,
) -> (Option<u64>, Option<u64>, Option<u64>) {
    let stats = &cx.job.stats;
    let (mut slat, mut clat, mut lat) = (None, None, None);
    if !cx.timed {
        return (slat, clat, lat);
    }
    let r = &mut out.dirs[io.dir as usize];
    let c = cx.clock.ns_between(io.t_commit, t_done);
    if !stats.disable_clat {
        r.clat.record(c);
        out.lat_buckets.record(c);
        clat = Some(c);
    }
    if !cx.lat_is_clat {
        if !stats.disable_lat {
            let l = cx.clock.ns_between(io.t_issue, t_done);
            if cx.lat_hist {
                r.lat.record(l);
            } else {
                r.lat.moments.record(l);
            }
            lat = Some(l);
        }
        if cx.queued && !stats.disable_slat {
            let s = cx.clock.ns_between(io.t_issue, io.t_commit);
            if cx.slat_hist {
                r.slat.record(s);
            } else {
                r.slat.moments.record(s);
            }
            slat = Some(s);
        }
    } else if !stats.disable_lat {
        lat = clat;
    }
    (slat, clat, lat)
}

impl Worker {
    /// fsync / fdatasync every N writes issued: due after the Nth, issued
    /// before the next I/O (as fio does, so the last writes of a job are
    /// not followed by one).
    #[inline]
    pub(super) fn count_write(job: &PlanJob, st: &mut Tally, dir: Dir, fi: usize) {
        let every = if job.fsync > 0 {
            job.fsync
        } else {
            job.fdatasync
        };
        if dir == Dir::Write && every > 0 {
            st.writes_since_sync += 1;
            if st.writes_since_sync >= every {
                st.writes_since_sync = 0;
                st.sync_due = Some(fi);
            }
        }
    }

    /// An fsync or fdatasync of file `fi`, timed into the sync statistics.
    /// False when it failed and the job stops.
    pub(super) fn sync_file(
        &mut self,
        job: &PlanJob,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        fi: usize,
        done: &mut Vec<Completion>,
    ) -> bool {
        let file = self.files.files[fi].id;
        cx.progress.set_state(RunState::Fsync);
        let s0 = cx.clock.now();
        let op = if job.fsync > 0 {
            Op::Fsync
        } else {
            Op::Fdatasync
        };
        let r = self.io(&sync_unit(file, op), done);
        cx.progress.set_state(if m.ramping {
            RunState::Ramp
        } else {
            cx.running
        });
        match r {
            Ok(Completion { result: Ok(_), .. }) => {
                if !m.ramping {
                    out.sync.record(cx.clock.ns_between(s0, cx.clock.now()));
                }
                true
            }
            Ok(Completion { result: Err(e), .. }) => {
                out.error = e;
                out.error_detail = format!("{} on fsync", errno_text(e));
                false
            }
            Err(msg) => {
                out.error = EIO;
                out.error_detail = msg;
                false
            }
        }
    }

    /// Accounts one completed I/O. False when the job must stop (an error
    /// that does not continue, a rate below rate_min, the deadline).
    #[inline(always)]
    pub(super) fn finish(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        io: Meta,
        result: Result<u32, i32>,
        t_done: u64,
    ) -> bool {
        // fio counts a failed I/O in total_ios too, with no bytes and no
        // latency. Counts are kept during ramp_time and forgotten when it
        // ends; latencies and samples start after it.
        out.dirs[io.dir as usize].total_ios += 1;
        let go_on = match result {
            Ok(n) => self.moved(cx, m, out, &io, n, t_done),
            // fill_device: the filesystem is full, which ends the job
            // without an error, as the I/O that found it counts in
            // total_ios.
            Err(errno) if cx.job.fill_device && crate::layout::full_errno(errno) => false,
            Err(errno) => self.failed(cx, out, &io, errno),
        };
        go_on && self.after_io(cx, m, out, &io, t_done)
    }

    /// An I/O that moved `n` bytes: its bytes, latencies, window counts
    /// and log lines, and a read's check (verify). False when the job
    /// must stop.
    #[inline(always)]
    fn moved(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        io: &Meta,
        n: u32,
        t_done: u64,
    ) -> bool {
        let d = io.dir as usize;
        let r = &mut out.dirs[d];
        r.io_bytes += n as u64;
        if n < io.len {
            r.short_ios += 1;
        }
        if !m.ramping {
            let lats = record_latencies(cx, out, io, t_done);
            m.count(d, n as u64);
            if !self.log(cx, m, out, io, n, t_done, lats) {
                return false;
            }
        }
        !(io.dir == Dir::Read
            && self.verify.is_some()
            && !self.check_completed(cx.files, out, io.slot, io.fi, io.offset, n))
    }

    /// The log entries of an I/O that moved `n` bytes, its latencies
    /// `lats` recorded. False when the logs could not be written (the job
    /// must stop).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn log(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        io: &Meta,
        n: u32,
        t_done: u64,
        (slat, clat, lat): (Option<u64>, Option<u64>, Option<u64>),
    ) -> bool {
        let Some(logs) = &mut self.logs else {
            return true;
        };
        let d = io.dir as usize;
        let logged = Logged {
            ms: m.ms_at(t_done, cx.clock),
            // Read only with a slat.
            slat_ms: match slat {
                Some(_) => cx.clock.ns_between(m.start, io.t_commit) / 1_000_000,
                None => 0,
            },
            dir: d,
            bytes: n,
            len: io.len,
            offset: io.offset,
            slat,
            clat,
            lat,
        };
        if logs.io(logged, &out.dirs[d]) {
            if let Err(e) = logs.write() {
                out.error = e.raw_os_error().unwrap_or(EIO);
                out.error_detail = e.to_string();
                return false;
            }
        }
        true
    }

    /// An I/O that failed with `errno`: counted as continue_on_error and
    /// ignore_error say, and the job's error unless it goes on. False
    /// when the job must stop.
    #[cold]
    fn failed(&mut self, cx: &Cx, out: &mut JobResult, io: &Meta, errno: i32) -> bool {
        let job = cx.job;
        if job.errors.counts(io.dir, errno) {
            out.total_err += 1;
            if out.first_error == 0 {
                out.first_error = errno;
                out.first_error_text = strerror(errno);
            }
        }
        if !job.errors.continues_after(io.dir, errno) {
            out.error = errno;
            let file = &cx.files[self.files.files[io.fi].path_index].path;
            let path = file.display();
            out.error_detail = match job.engine.file_op() {
                // The engine's operation on the file failed, not a read
                // or write of it (errno_text names the errno).
                Some((what, call)) => format!(
                    "{} on the {what} `{path}` ({}: {call})",
                    errno_text(errno),
                    job.engine
                ),
                None => io_failure(
                    job.engine,
                    io.dir,
                    u64::from(io.len),
                    io.offset,
                    file,
                    errno,
                ),
            };
            return false;
        }
        true
    }

    /// After each completed I/O of the general loop, whatever its result:
    /// the file choice's count, progress, the end of the ramp and the
    /// window samples, minimum rates and think time, the deadline. A check
    /// that runs after every completion goes here (the fast paths run
    /// only while `Control::idle`). False when the job must stop.
    #[inline(always)]
    fn after_io(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        io: &Meta,
        t_done: u64,
    ) -> bool {
        let d = io.dir as usize;
        if let Err(e) = self
            .files
            .account(io.fi, io.len as u64, self.engine.as_mut())
        {
            (out.error, out.error_detail) = engine_error(e);
            return false;
        }

        let (rb, ri) = m.ramped[d];
        cx.progress
            .publish(d, out.dirs[d].io_bytes + rb, out.dirs[d].total_ios + ri);

        if m.tick(t_done, cx.clock, out, &self.mix, self.logs.as_deref_mut()) {
            cx.progress.set_state(cx.running);
            if let Some(min) = &mut self.min_rate {
                min.restart(cx.clock.ns_between(cx.t_begin, m.ramp_end()));
            }
        }

        if self.ctl.latency.is_some() && !m.ramping && !self.latency_after_io(cx, out, io, t_done) {
            return false;
        }

        if cx.paced {
            let now_ns = cx.clock.ns_between(cx.t_begin, t_done);
            if let Some(min) = &mut self.min_rate {
                if let Err(msg) = min.check(now_ns, &out.dirs) {
                    out.error = EIO;
                    out.error_detail = msg;
                    return false;
                }
            }
            if let Some(think) = &mut self.think {
                think.after_io(now_ns, cx.deadline_ns);
            }
        }

        !matches!(cx.deadline, Some(dl) if t_done >= dl)
    }
}
