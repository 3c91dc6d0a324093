//! The synchronous fast path: a run of I/Os through a synchronous engine
//! (sync, psync, pvsync, pvsync2, mmap, null) while nothing but reading
//! and writing one file is due. Per I/O it draws the direction, size and
//! offset, reads the clock, makes the call, reads the clock again and
//! keeps fio's statistics (counts, clat with its histogram and buckets,
//! the window samples, progress, the logs' entries): the same numbers as
//! the general loop, without its queue (slots, batches, depths in
//! flight), pacing, fsync every N or verify, which a job that uses any of
//! them runs through instead. An I/O that does not complete in full (an error, a
//! short transfer) is handed to the general completion path.

use iolab_engine::{IoUnit, Op};
use iolab_stats::{Dir, JobResult};

use super::complete::{Cx, Meta};
use super::general::Loops;
use super::measure::Measure;
use super::queue::count_alone;
use super::{Shared, Worker, EIO};
use crate::plan::PlanJob;

impl Worker {
    /// The next plain read or write of the job's one file, into buffer
    /// `slot`, with a write's data prepared. None when the job has no
    /// more to give (it stops), or when the draw ended fio's run (a full
    /// map under `stop_on_full`, a pass at its end): then `run_over`,
    /// and the general loop drains the queue and starts the next run
    /// (see `general::Issued::Drain`).
    #[inline(always)]
    pub(super) fn next_single(&mut self, slot: u32, seq: &mut u64) -> Option<(Dir, IoUnit)> {
        let dir = self.mix.next(&mut self.mix_rng).dir;
        let d = dir as usize;
        let file = &mut self.files.files[0];
        let g = file.gen_of[d]?;
        if let Some(r) = self.rewind.as_deref_mut() {
            r.before_draw(0, g, file.gens[g].pass());
        }
        let (offset, len) =
            file.gens[g].draw(&mut self.bs[d], &mut self.bs_rng[d], &mut self.off_rng, d);
        let gen = &file.gens[g];
        if gen.ended() || gen.exhausted() {
            self.run_over = !gen.ended();
            return None;
        }
        let unit = IoUnit {
            slot,
            file: file.id,
            op: if dir == Dir::Read {
                Op::Read
            } else {
                Op::Write
            },
            offset,
            len,
        };
        if self.needs_data && dir == Dir::Write {
            *seq += 1;
            self.data
                .prepare(self.engine.buf(slot), len as usize, offset, *seq);
        }
        Some((dir, unit))
    }

    /// Accounts a read or write past the ramp that moved all its `n`
    /// bytes at `t`, its latencies recorded: counts, window samples,
    /// progress. True when the job's deadline has come.
    #[inline(always)]
    pub(super) fn account_full(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        out: &mut JobResult,
        d: usize,
        n: u32,
        t: u64,
    ) -> bool {
        let r = &mut out.dirs[d];
        r.total_ios += 1;
        r.io_bytes += u64::from(n);
        m.count(d, u64::from(n));
        let (rb, ri) = m.ramped[d];
        cx.progress
            .publish(d, out.dirs[d].io_bytes + rb, out.dirs[d].total_ios + ri);
        m.tick(t, cx.clock, out, &self.mix, self.logs.as_deref_mut());
        matches!(cx.deadline, Some(dl) if t >= dl)
    }

    /// Whether the job does nothing but read and write one file: no
    /// pacing, verify, fsync every N or trims, which the fast paths leave
    /// to the general loop.
    pub(super) fn plain_single(&self, job: &PlanJob, cx: &Cx) -> bool {
        !cx.paced
            && self.verify.is_none()
            && self.files.is_single()
            && job.fsync == 0
            && job.fdatasync == 0
            && !job.rw.mode.trims()
            && self.ctl.idle()
            && !self.files.files[0]
                .gens
                .iter()
                .any(crate::gen::OffsetGen::ends_runs)
    }

    /// Whether the job's I/O can take the fast path (see the module).
    pub(super) fn burst_fits(&self, job: &PlanJob, cx: &Cx) -> bool {
        self.engine.caps().sync && cx.lat_is_clat && self.plain_single(job, cx)
    }

    /// Issues I/Os one after the other until the loop's budget is spent
    /// (false), or the job must stop: Ctrl-C or exitall, its deadline, an
    /// error that ends it (true).
    #[inline(never)]
    pub(super) fn burst(
        &mut self,
        cx: &Cx,
        shared: &Shared,
        m: &mut Measure,
        out: &mut JobResult,
        s: &mut Loops,
    ) -> bool {
        let clock = cx.clock;
        let mut done = 0u64;
        let stop = loop {
            if s.budget.spent() {
                break false;
            }
            if shared.stopped() {
                break true;
            }
            let Some((dir, unit)) = self.next_single(0, &mut s.seq) else {
                break true;
            };
            let (d, len, offset) = (dir as usize, unit.len, unit.offset);
            s.budget.count(out, d, len);
            let t0 = clock.now();
            let result = self.engine.complete_now(&unit);
            let t1 = clock.now();
            done += 1;
            match result {
                Ok(Ok(n)) if n == len => {
                    let clat = clock.ns_between(t0, t1);
                    out.dirs[d].clat.record(clat);
                    out.lat_buckets.record(clat);
                    if let Some(logs) = self.logs.as_deref_mut() {
                        // As `finish` logs it: lat is clat, no slat.
                        let ms = m.ms_at(t1, clock);
                        if logs.clat_io(ms, d, n, len, offset, clat, &out.dirs[d]) {
                            if let Err(e) = logs.write() {
                                out.error = e.raw_os_error().unwrap_or(EIO);
                                out.error_detail = e.to_string();
                                break true;
                            }
                        }
                    }
                    if self.account_full(cx, m, out, d, n, t1) {
                        break true;
                    }
                }
                Ok(result) => {
                    let io = Meta::issued(0, dir, 0, offset, len, t0);
                    if !self.finish(cx, m, out, io, result, t1) {
                        break true;
                    }
                }
                Err(e) => {
                    (out.error, out.error_detail) = (EIO, e.to_string());
                    break true;
                }
            }
        };
        // Every I/O was alone in the queue, submitted and completed by one
        // call.
        count_alone(out, 1, done);
        stop
    }
}
