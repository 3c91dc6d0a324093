//! The clone's queue and the budget of a loop, which the general loop and
//! both fast paths share: free buffer slots, what each slot in flight
//! carries, the I/Os queued but not yet submitted, the batch settings as
//! fio clamps them; what a loop may still issue; and the depth buckets of
//! an I/O that a single call submitted and completed.

use iolab_engine::Completion;
use iolab_spec::value::RwMode;
use iolab_stats::{DepthDist, JobResult};

use super::complete::{Cx, Meta};
use super::{Worker, EIO};
use crate::plan::PlanJob;

/// The engine failed: the job ends at once (the error is in its result).
#[derive(Debug)]
pub(super) struct Failed;

/// One buffer slot per I/O in flight, and fio's batching of them.
pub(super) struct Queue {
    /// The buffer slots no I/O uses.
    pub free: Vec<u32>,
    /// What the I/O in each slot carries.
    pub meta: Vec<Meta>,
    /// Slots queued and not yet submitted.
    pub pending: Vec<u32>,
    /// I/Os submitted and not yet reaped.
    pub inflight: u32,
    /// The completions of the last reap.
    pub done: Vec<Completion>,
    /// Slots: iodepth, or 1 for a synchronous engine, which completes
    /// each I/O inside `queue`.
    pub depth: u32,
    /// iodepth_batch: queued I/Os submitted at once.
    pub batch: u32,
    /// iodepth_batch_complete_min and _max: completions per reap.
    pub complete_min: u32,
    pub complete_max: u32,
    /// iodepth_low: a full queue drains to it before it is refilled.
    pub low: u32,
}

impl Queue {
    /// The queue of `job` through an engine that is synchronous or not.
    pub fn new(job: &PlanJob, sync: bool) -> Queue {
        let depth = if sync { 1 } else { job.iodepth.max(1) };
        let complete_min = job.iodepth_batch_complete_min.clamp(1, depth);
        Queue {
            free: (0..depth).rev().collect(),
            meta: vec![Meta::default(); depth as usize],
            pending: Vec::with_capacity(depth as usize),
            inflight: 0,
            done: Vec::with_capacity(job.iodepth as usize),
            depth,
            batch: job.iodepth_batch.clamp(1, depth),
            complete_min,
            complete_max: job.iodepth_batch_complete_max.clamp(complete_min, depth),
            low: job.iodepth_low.clamp(1, depth),
        }
    }

    /// Whether another I/O may be queued now.
    #[inline(always)]
    pub fn room(&self) -> bool {
        !self.free.is_empty()
    }

    /// I/Os queued or in flight.
    #[inline(always)]
    pub fn queued(&self) -> u32 {
        self.inflight + self.pending.len() as u32
    }

    /// Nothing queued or in flight.
    #[inline(always)]
    pub fn idle(&self) -> bool {
        self.inflight == 0 && self.pending.is_empty()
    }

    /// fio's default batching: each I/O submitted as it is queued, one
    /// completion reaped at a time, a slot refilled as soon as it is free.
    pub fn one_by_one(&self) -> bool {
        self.batch == 1
            && self.complete_min == 1
            && self.complete_max == 1
            && self.low == self.depth
    }
}

/// Counts in `out` `n` I/Os that one call each submitted and completed,
/// at queue depth `level` (all in flight, each included).
#[inline(always)]
pub(super) fn count_alone(out: &mut JobResult, level: u32, n: u64) {
    out.depth.level[DepthDist::level_bucket(level)] += n;
    out.depth.submit[DepthDist::batch_bucket(1)] += n;
    out.depth.complete[DepthDist::batch_bucket(1)] += n;
}

/// What a loop of the job may still issue.
pub(super) struct Budget {
    pub bytes: u64,
    pub ios: u64,
    /// io_size (u64::MAX for a time_based job, which its runtime ends).
    pub limit_bytes: u64,
    /// number_ios.
    pub limit_ios: u64,
    /// The directions whose bytes count towards `limit_bytes`.
    pub counted: [bool; 3],
}

impl Budget {
    /// Each loop moves `io_size` bytes (number_ios I/Os at most), as fio's
    /// do; a time_based job goes on until its runtime is over.
    pub fn of_job(job: &PlanJob, io_size: u64) -> Budget {
        // fio counts reads and writes towards the size, and trims only in
        // a job that does nothing else: trimwrite trims `size` bytes and
        // writes `size` bytes.
        let trims_only = matches!(job.rw.mode, RwMode::Trim | RwMode::RandTrim);
        Budget {
            bytes: 0,
            ios: 0,
            limit_bytes: if job.time_based { u64::MAX } else { io_size },
            limit_ios: job.number_ios.unwrap_or(u64::MAX),
            counted: [!trims_only, !trims_only, trims_only],
        }
    }

    /// A new loop.
    pub fn restart(&mut self) {
        (self.bytes, self.ios) = (0, 0);
    }

    /// The loop has issued all it may.
    #[inline(always)]
    pub fn spent(&self) -> bool {
        self.bytes >= self.limit_bytes || self.ios >= self.limit_ios
    }

    /// Counts one I/O issued in direction `d`.
    #[inline(always)]
    pub fn count(&mut self, out: &mut JobResult, d: usize, len: u32) {
        if self.counted[d] {
            self.bytes += u64::from(len);
        }
        self.ios += 1;
        out.issued[d] += 1;
    }

    /// Forgets an I/O counted and then not taken (the engine was busy).
    #[inline]
    pub fn uncount(&mut self, out: &mut JobResult, d: usize, len: u32) {
        if self.counted[d] {
            self.bytes -= u64::from(len);
        }
        self.ios -= 1;
        out.issued[d] -= 1;
    }
}

impl Worker {
    /// Submits the queued I/Os as one batch and stamps their submission
    /// time.
    pub(super) fn submit(
        &mut self,
        cx: &Cx,
        q: &mut Queue,
        out: &mut JobResult,
    ) -> Result<(), Failed> {
        if let Err(e) = self.engine.commit() {
            (out.error, out.error_detail) = (EIO, e.to_string());
            return Err(Failed);
        }
        let t = if cx.timed { cx.clock.now() } else { 0 };
        for &slot in q.pending.iter() {
            q.meta[slot as usize].t_commit = t;
        }
        // fio counts each I/O at the queue depth it was committed at: all
        // in flight, this batch included.
        let n = q.pending.len() as u32;
        out.depth.level[DepthDist::level_bucket(q.inflight + n)] += u64::from(n);
        out.depth.submit[DepthDist::batch_bucket(n)] += 1;
        q.inflight += n;
        q.pending.clear();
        Ok(())
    }

    /// Reaps at least `want` and at most `most` completions into
    /// `q.done`, counts the batch, and returns the clock after it: when
    /// they completed. The caller accounts each and frees its slot.
    #[inline(always)]
    pub(super) fn reap(
        &mut self,
        cx: &Cx,
        q: &mut Queue,
        out: &mut JobResult,
        want: u32,
        most: u32,
    ) -> Result<u64, Failed> {
        q.done.clear();
        if let Err(e) = self.engine.reap(want as usize, most as usize, &mut q.done) {
            (out.error, out.error_detail) = (EIO, e.to_string());
            return Err(Failed);
        }
        let t1 = cx.clock.now();
        out.depth.complete[DepthDist::batch_bucket(q.done.len() as u32)] += 1;
        Ok(t1)
    }
}
