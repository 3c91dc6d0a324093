//! The queued fast path: I/O through a queued engine (io_uring, libaio)
//! with fio's default batching (submit each I/O as it is queued, reap one
//! completion at a time, refill as soon as a slot is free) while nothing
//! but reading and writing one file is due. It keeps the queue full and
//! the same statistics as the general loop (counts, slat, clat, lat, depth
//! levels, submit and complete batches, window samples, progress) without
//! the general loop's bookkeeping for what the job does not use: batches
//! of several, fsync every N, pacing, verify, several files. Its log
//! entries are the general loop's. An I/O
//! that does not complete in full goes through the general completion
//! path; when the loop's budget is spent or the job must stop, the general
//! loop drains what is still in flight.

use iolab_engine::Queued;
use iolab_stats::{DepthDist, JobResult};

use super::complete::{record_latencies, Cx, Meta};
use super::general::Loops;
use super::measure::Measure;
use super::queue::{count_alone, Queue};
use super::{Shared, Worker, EIO};
use crate::plan::PlanJob;

impl Worker {
    /// Whether the job's I/O can take the queued fast path (see the
    /// module) through queue `q`.
    pub(super) fn qburst_fits(&self, job: &PlanJob, cx: &Cx, q: &Queue) -> bool {
        cx.queued && self.plain_single(job, cx) && q.one_by_one()
    }

    /// Keeps the queue full until the loop's budget is spent (false) or
    /// the job must stop: Ctrl-C or exitall, its deadline, an error that
    /// ends it (true). Either way I/Os may still be in flight.
    #[inline(never)]
    pub(super) fn qburst(
        &mut self,
        cx: &Cx,
        shared: &Shared,
        m: &mut Measure,
        out: &mut JobResult,
        s: &mut Loops,
    ) -> bool {
        let clock = cx.clock;
        let batch_1 = DepthDist::batch_bucket(1);
        let (q, budget) = (&mut s.q, &mut s.budget);
        loop {
            if budget.spent() {
                return false;
            }
            if shared.stopped() {
                return true;
            }
            if let Some(slot) = q.free.pop() {
                let Some((dir, unit)) = self.next_single(slot, &mut s.seq) else {
                    q.free.push(slot);
                    return true;
                };
                let (d, len, offset) = (dir as usize, unit.len, unit.offset);
                let t0 = if cx.timed { clock.now() } else { 0 };
                let mut io = Meta::issued(slot, dir, 0, offset, len, t0);
                match self.engine.submit_one(&unit) {
                    Ok(Queued::InFlight) => {
                        if cx.timed {
                            io.t_commit = clock.now();
                        }
                        q.meta[slot as usize] = io;
                        q.inflight += 1;
                        out.depth.level[DepthDist::level_bucket(q.inflight)] += 1;
                        out.depth.submit[batch_1] += 1;
                    }
                    Ok(Queued::Completed(c)) => {
                        let t1 = clock.now();
                        count_alone(out, q.inflight + 1, 1);
                        q.free.push(c.slot);
                        budget.count(out, d, len);
                        if !self.finish_aside(cx, m, out, io, c.result, t1) {
                            return true;
                        }
                        continue;
                    }
                    Ok(Queued::Busy) => {
                        // No room in the engine: reap first.
                        q.free.push(slot);
                        if q.inflight == 0 {
                            (out.error, out.error_detail) =
                                (EIO, format!("ioengine {} took no I/O", self.engine.name()));
                            return true;
                        }
                        if !self.reap_one(cx, m, out, q) {
                            return true;
                        }
                        continue;
                    }
                    Err(e) => {
                        if e.queued {
                            // Queued, then its submission failed: the
                            // general loop reaps it.
                            q.meta[slot as usize] = io;
                            q.inflight += 1;
                        } else {
                            q.free.push(slot);
                        }
                        failed(out, &e.error);
                        return true;
                    }
                }
                budget.count(out, d, len);
                if !q.free.is_empty() {
                    continue;
                }
            }
            if !self.reap_one(cx, m, out, q) {
                return true;
            }
        }
    }

    /// `finish` for what the loop rarely sees (an I/O that completed
    /// inside `queue`, moved less than it asked for, failed, or came during
    /// the ramp), out of the loop's own code so that its common path stays
    /// in few lines of code.
    #[cold]
    #[inline(never)]
    fn finish_aside(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        io: Meta,
        result: Result<u32, i32>,
        t1: u64,
    ) -> bool {
        self.finish(cx, m, out, io, result, t1)
    }

    /// Reaps one completion, as fio does with iodepth_batch_complete_max=1,
    /// and accounts it. False when the job must stop.
    #[inline(always)]
    fn reap_one(&mut self, cx: &Cx, m: &mut Measure, out: &mut JobResult, q: &mut Queue) -> bool {
        let reaped = self.engine.reap_one();
        let t1 = cx.clock.now();
        let c = match reaped {
            Ok(Some(c)) => c,
            Ok(None) => {
                // Nothing was in flight: a call that brought none.
                out.depth.complete[DepthDist::batch_bucket(0)] += 1;
                return true;
            }
            Err(e) => {
                failed(out, &e);
                return false;
            }
        };
        out.depth.complete[DepthDist::batch_bucket(1)] += 1;
        q.inflight -= 1;
        q.free.push(c.slot);
        let io = q.meta[c.slot as usize];
        match c.result {
            Ok(n) if n == io.len && !m.ramping => {
                let lats = record_latencies(cx, out, &io, t1);
                let logged = self.log(cx, m, out, &io, n, t1, lats);
                let end = self.account_full(cx, m, out, io.dir as usize, n, t1);
                logged && !end
            }
            result => self.finish_aside(cx, m, out, io, result, t1),
        }
    }
}

/// The engine refused: the job ends with its error.
#[cold]
#[inline(never)]
fn failed(out: &mut JobResult, e: &iolab_engine::EngineError) {
    (out.error, out.error_detail) = (EIO, e.to_string());
}
