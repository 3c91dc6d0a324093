//! What happens around one I/O's completion: latencies (slat from issue to
//! submission, clat from submission to completion, lat from issue to
//! completion), counts, errors and `continue_on_error`, fsync due after N
//! writes, bandwidth samples, minimum rates, think time and the deadline;
//! and the submission of a batch of queued I/Os. The synchronous and the
//! queued paths of the worker share it.

use iolab_engine::clock::Clock;
use iolab_engine::{errno_text, Completion, Op};
use iolab_stats::{DepthDist, Dir, JobResult};

use super::errors::strerror;
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
    /// Submits the queued I/Os as one batch and stamps their submission
    /// time.
    pub(super) fn submit(
        &mut self,
        cx: &Cx,
        pending: &mut Vec<u32>,
        meta: &mut [Meta],
        inflight: &mut u32,
        out: &mut JobResult,
    ) -> Result<(), String> {
        self.engine.commit().map_err(|e| e.to_string())?;
        let t = if cx.timed { cx.clock.now() } else { 0 };
        for &slot in pending.iter() {
            meta[slot as usize].t_commit = t;
        }
        // fio counts each I/O at the queue depth it was committed at: all
        // in flight, this batch included.
        let n = pending.len() as u32;
        out.depth.level[DepthDist::level_bucket(*inflight + n)] += u64::from(n);
        out.depth.submit[DepthDist::batch_bucket(n)] += 1;
        *inflight += n;
        pending.clear();
        Ok(())
    }

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
    #[allow(clippy::too_many_arguments)]
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
        let (job, files) = (cx.job, cx.files);
        let d = io.dir as usize;
        // fio counts a failed I/O in total_ios too, with no bytes and no
        // latency. Counts are kept during ramp_time and forgotten when it
        // ends; latencies and samples start after it.
        out.dirs[d].total_ios += 1;
        match result {
            Ok(n) => {
                let r = &mut out.dirs[d];
                r.io_bytes += n as u64;
                if n < io.len {
                    r.short_ios += 1;
                }
                if !m.ramping {
                    let (slat, clat, lat) = record_latencies(cx, out, &io, t_done);
                    let r = &mut out.dirs[d];
                    m.count(d, n as u64);
                    if let Some(logs) = &mut self.logs {
                        let logged = Logged {
                            ms: cx.clock.ns_between(m.start, t_done) / 1_000_000,
                            slat_ms: cx.clock.ns_between(m.start, io.t_commit) / 1_000_000,
                            dir: d,
                            bytes: n,
                            len: io.len,
                            offset: io.offset,
                            slat,
                            clat,
                            lat,
                        };
                        logs.io(logged, r);
                        if logs.full() {
                            if let Err(e) = logs.write() {
                                out.error = e.raw_os_error().unwrap_or(EIO);
                                out.error_detail = e.to_string();
                                return false;
                            }
                        }
                    }
                }
                if io.dir == Dir::Read
                    && self.verify.is_some()
                    && !self.check_completed(files, out, io.slot, io.fi, io.offset, n)
                {
                    return false;
                }
            }
            // fill_device: the filesystem is full, which ends the job
            // without an error, as the I/O that found it counts in
            // total_ios.
            Err(errno) if job.fill_device && crate::layout::full_errno(errno) => {
                return false;
            }
            Err(errno) => {
                if job.errors.counts(io.dir, errno) {
                    out.total_err += 1;
                    if out.first_error == 0 {
                        out.first_error = errno;
                        out.first_error_text = strerror(errno);
                    }
                }
                if !job.errors.continues_after(io.dir, errno) {
                    out.error = errno;
                    out.error_detail = format!(
                        "{} (errno {errno}) on {} of {} bytes at offset {} in `{}`",
                        errno_text(errno),
                        io.dir.key(),
                        io.len,
                        io.offset,
                        files[self.files.files[io.fi].path_index].path.display()
                    );
                    return false;
                }
            }
        }
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
