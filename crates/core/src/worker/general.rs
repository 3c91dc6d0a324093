//! The general loop: the job's loops one after the other, and in each the
//! I/O of one loop (io_size bytes, or until the deadline) through the
//! queue, whatever the job asks: several files, fsync every N writes,
//! pacing, flow, strided zones, verify (a backlog read back amid the
//! writes, and each loop's writes read back at its end), batches and
//! iodepth_low. Plain reads and writes of one file hand over to a fast
//! path (`burst`, `qburst`); every completion is accounted by
//! `complete::finish`.
//!
//! In `io_loop`, each turn decides in order: stop (Ctrl-C, exitall,
//! exit_on_io_done), a fast path, a hold (flow), issue one I/O (`issue`:
//! the fsync due, then `draw` and `queue`), submit, and reap (`reap_some`).
//! A check before each I/O belongs beside the hold; one after each
//! completion in `complete::after_io`.

use iolab_engine::{IoUnit, Op, Queued};
use iolab_stats::{Dir, JobResult};

use super::complete::{Cx, Meta, Tally};
use super::measure::Measure;
use super::queue::{count_alone, Budget, Failed, Queue};
use super::{io_jobs_done, Shared, Worker, EIO};
use crate::plan::PlanJob;

/// What the job's loops carry from one I/O to the next.
pub(super) struct Loops {
    pub q: Queue,
    /// What the current loop may still issue.
    pub budget: Budget,
    /// fsync every N writes.
    pub tally: Tally,
    /// The last I/O's file, offset and length (the write of a trimwrite
    /// pair goes where its trim went).
    pub last: Option<(usize, u64, u32)>,
    /// The sequence number of the last write's data.
    pub seq: u64,
    /// The job stops once what is in flight is reaped.
    pub stop: bool,
    /// fio's runs of the job started so far: a loop that goes on from
    /// the last (its files not done) is not a new run, and a random map
    /// found full inside a loop starts one; there are at most `loops`.
    pub runs: u32,
    /// This loop goes on from the last (see `goes_on`).
    pub going_on: bool,
    /// fio's run ended: nothing is issued until its I/O is reaped, then
    /// the next run starts (see `Issued::Drain`).
    pub drain: bool,
    /// The fast paths the job's I/O may take (see `burst`, `qburst`).
    burst_fits: bool,
    qburst_fits: bool,
}

/// What became of an I/O the loop tried to issue.
enum Issued {
    /// Queued, or refused for now (the engine's queue is full).
    Queued,
    /// Completed inside `queue`, and accounted.
    Completed,
    /// The job stops once what is in flight is reaped: its rate, offsets
    /// or zones are spent, a completion or an fsync said so.
    Stop,
    /// Nothing issued: fio's file choice drew a file it has no room to
    /// open while I/Os are in flight; reap, then draw again.
    Busy,
    /// Nothing issued: the draw ended fio's run (its files are done).
    /// fio reaps the run's I/O before it decides on the next (its depth
    /// falls to 0 there, and they count as done), so the loop drains the
    /// queue, then starts the next run (`next_run`). The fast paths end a
    /// run the same way (`run_over`).
    Drain,
}

impl Worker {
    /// The state of the job's loops, each with `io_size` bytes to move.
    pub(super) fn loops_of(&self, job: &PlanJob, cx: &Cx) -> Loops {
        let q = Queue::new(job, !cx.queued);
        Loops {
            burst_fits: self.burst_fits(job, cx),
            qburst_fits: self.qburst_fits(job, cx, &q),
            q,
            budget: Budget::of_job(job, self.io_size),
            tally: Tally::default(),
            last: None,
            seq: 0,
            stop: false,
            runs: 1,
            going_on: false,
            drain: false,
        }
    }

    /// Runs the job's loops (one for a time_based job) until the last is
    /// done or the job stops. Returns the time spent reading back each
    /// loop's writes (verify), in ns.
    pub(super) fn loops(
        &mut self,
        cx: &Cx,
        shared: &Shared,
        m: &mut Measure,
        s: &mut Loops,
        out: &mut JobResult,
    ) -> u64 {
        let (job, clock) = (cx.job, cx.clock);
        let loops = job.runs();
        let mut verify_ns = 0u64;
        for lp in 0..loops {
            s.going_on = lp > 0 && self.goes_on(job);
            if s.going_on {
                // fio's loop goes on where the last stopped (see
                // `files_done`), through the general path, which starts
                // fio's next run where a draw finds the map full.
                self.go_on(job);
                s.burst_fits = false;
                s.qburst_fits = false;
                // One run for fio: what the last loop moved past its
                // bytes counts towards this one's.
                let over = s.budget.bytes.saturating_sub(s.budget.limit_bytes);
                s.budget.restart();
                s.budget.bytes = over;
            } else if lp > 0 {
                if s.runs >= loops {
                    break;
                }
                s.runs += 1;
                self.streams_again();
                if let Err((errno, msg)) = self
                    .files
                    .new_loop(job.unlink_each_loop, self.engine.as_mut())
                {
                    (out.error, out.error_detail) = (errno, msg);
                    break;
                }
                s.last = None;
                s.tally.sync_due = None;
            }
            if lp == 0 || !s.going_on {
                s.budget.restart();
                if self.loop_past_files(job) {
                    // A full map ends fio's run within the loop, too.
                    self.go_on(job);
                }
            }
            if self.io_loop(cx, shared, m, s, out).is_err() {
                break;
            }
            if self.verify.is_some() {
                // fio reads back each loop's writes when they are done;
                // a job stopped by an error or Ctrl-C only settles.
                let read_back = out.error == 0 && !shared.stopped();
                let t = clock.now();
                let go_on = self.verify_pass(cx, out, &mut s.q.done, read_back);
                verify_ns += clock.ns_between(t, clock.now());
                if !go_on {
                    break;
                }
            }
            if s.stop {
                break;
            }
        }
        verify_ns
    }

    /// Whether the next loop goes on from this one, as fio's does when
    /// the files are not done; only for jobs whose loops do nothing else
    /// between them (no unlink, no verify read-back).
    fn goes_on(&self, job: &PlanJob) -> bool {
        !job.unlink_each_loop && self.verify.is_none() && !self.files_done()
    }

    /// One loop's I/O: issues until the loop's budget is spent or the
    /// job stops, and reaps all of it. Err when the engine failed: the
    /// job ends at once.
    fn io_loop(
        &mut self,
        cx: &Cx,
        shared: &Shared,
        m: &mut Measure,
        s: &mut Loops,
        out: &mut JobResult,
    ) -> Result<(), Failed> {
        loop {
            if s.drain && s.q.idle() {
                // The ended run's I/O is reaped: the next starts, if the
                // job has one.
                s.drain = false;
                s.last = None;
                if shared.stopped() || io_jobs_done(cx.job, shared) {
                    // Ctrl-C, exitall or exit_on_io_done came during the
                    // drain: no new run (no unlink, no reopen).
                    s.stop = true;
                }
                if !s.stop {
                    match self.next_run(cx.job, &mut s.runs, out) {
                        Ok(true) => {}
                        Ok(false) => s.stop = true,
                        Err((errno, msg)) => {
                            (out.error, out.error_detail) = (errno, msg);
                            s.stop = true;
                        }
                    }
                }
            }
            // A verify backlog due drains the queue first.
            let backlog = self.verify.as_ref().is_some_and(|v| v.due());
            let more = !s.stop && !backlog && !s.drain && !s.budget.spent();
            if more && (shared.stopped() || io_jobs_done(cx.job, shared)) {
                s.stop = true;
                continue;
            }
            // An fsync waits for the I/O in flight, so that it covers
            // every write issued before it and completes alone.
            let draining = s.tally.sync_due.is_some() && !s.q.idle();
            // Plain reads and writes of one file take a fast path while
            // the job is past its ramp: through a synchronous engine, or
            // a queued one with fio's default batching (which leaves I/Os
            // in flight for this loop to reap).
            if more
                && (s.burst_fits || (s.qburst_fits && s.q.pending.is_empty()))
                && !m.ramping
                && self.files.files[0].open
            {
                s.stop = if s.burst_fits {
                    self.burst(cx, shared, m, out, s)
                } else {
                    self.qburst(cx, shared, m, out, s)
                };
                if std::mem::take(&mut self.run_over) {
                    // Not the job's end: its run's (see `Issued::Drain`).
                    (s.stop, s.drain) = (false, true);
                }
                if out.error != 0 {
                    s.stop = true;
                }
                continue;
            }
            // Flow control: a job ahead of its share issues nothing until
            // the others catch up; its I/O in flight is reaped meanwhile.
            let held = more && !draining && s.q.room() && self.ctl.held();
            if held && s.q.idle() {
                s.stop = self.ctl.hold(cx.clock, cx.deadline);
                continue;
            }
            // Issue while there is room in the queue (and the latency
            // target's search lets the queue grow).
            if more && !held && !draining && s.q.room() && self.ctl.admit(s.q.queued()) {
                // latency_target found its depth and the queue has drained:
                // the final window's statistics start now, as fio's.
                if let Some(l) = self.ctl.latency.as_deref_mut() {
                    if l.awaits_final() {
                        let now = cx.clock.now();
                        if l.begin_final(now) {
                            m.restart_at(now, out);
                        }
                    }
                }
                // As fio, whose loop checks the runtime before each I/O:
                // none is issued past the deadline (a reap can free
                // several slots just before it).
                if cx.deadline.is_some_and(|dl| cx.clock.now() >= dl) {
                    s.stop = true;
                    continue;
                }
                match self.issue(cx, m, s, out)? {
                    Issued::Queued => {}
                    Issued::Completed => continue,
                    Issued::Stop => {
                        s.stop = true;
                        continue;
                    }
                    Issued::Drain => {
                        s.drain = true;
                        continue;
                    }
                    Issued::Busy => {
                        // fio reaps what it can (at least one) and draws
                        // again.
                        if !s.q.pending.is_empty() {
                            self.submit(cx, &mut s.q, out)?;
                        }
                        if s.q.inflight > 0 {
                            self.reap_some(cx, m, s, out, true)?;
                        }
                        continue;
                    }
                }
                // Submit a batch when it is full or the queue is.
                if s.q.pending.len() as u32 >= s.q.batch
                    || !s.q.room()
                    || self.ctl.full(s.q.queued())
                {
                    self.submit(cx, &mut s.q, out)?;
                }
                if s.q.room() {
                    continue;
                }
            }
            if !s.q.pending.is_empty() {
                self.submit(cx, &mut s.q, out)?;
            }
            if s.q.inflight == 0 {
                if backlog && !s.stop {
                    s.stop = !self.verify_pass(cx, out, &mut s.q.done, true);
                    continue;
                }
                if (more && s.q.room()) || s.drain {
                    continue;
                }
                return Ok(());
            }
            self.reap_some(cx, m, s, out, more)?;
        }
    }

    /// Issues the next I/O, after the fsync due before it: draws it,
    /// prepares a write's data, and queues it.
    fn issue(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        s: &mut Loops,
        out: &mut JobResult,
    ) -> Result<Issued, Failed> {
        let job = cx.job;
        if let Some(sfi) = s
            .tally
            .sync_due
            .take()
            .filter(|&i| self.files.files[i].open)
        {
            if !self.sync_file(job, cx, m, out, sfi, &mut s.q.done) {
                return Ok(Issued::Stop);
            }
        }
        let Some((dir, fi, offset, len)) = self.draw(cx, s.last) else {
            if std::mem::take(&mut self.busy) {
                return Ok(Issued::Busy);
            }
            if std::mem::take(&mut self.run_over) {
                return Ok(Issued::Drain);
            }
            return Ok(Issued::Stop);
        };
        self.files.issued(fi);
        s.last = Some((fi, offset, len));
        let len = if self.noio { 0 } else { len };
        let op = match dir {
            Dir::Read => Op::Read,
            Dir::Write => Op::Write,
            Dir::Trim => Op::Trim,
        };
        let slot = s.q.free.pop().unwrap_or(0);
        if self.needs_data && op == Op::Write {
            s.seq += 1;
            if self.verify.is_some() {
                self.prepare_verified(slot, fi, offset, len, s.seq);
            } else {
                self.data
                    .prepare(self.engine.buf(slot), len as usize, offset, s.seq);
            }
        }
        let unit = IoUnit {
            slot,
            file: self.files.files[fi].id,
            op,
            offset,
            len,
        };
        let d = dir as usize;
        s.budget.count(out, d, len);
        if let Some(rate) = &mut self.rate {
            rate.issued(dir, len as u64);
        }
        let t0 = if cx.timed { cx.clock.now() } else { 0 };
        s.q.meta[slot as usize] = Meta::issued(slot, dir, fi, offset, len, t0);
        match self.engine.queue(&unit) {
            Ok(Queued::Completed(c)) => {
                // The clock first: clat ends when the call returns.
                let t1 = cx.clock.now();
                Self::count_write(job, &mut s.tally, dir, fi);
                let level = if cx.queued {
                    s.q.inflight + s.q.pending.len() as u32 + 1
                } else {
                    1
                };
                count_alone(out, level, 1);
                s.q.free.push(c.slot);
                let io = s.q.meta[c.slot as usize];
                Ok(if self.finish(cx, m, out, io, c.result, t1) {
                    Issued::Completed
                } else {
                    Issued::Stop
                })
            }
            Ok(Queued::InFlight) => {
                Self::count_write(job, &mut s.tally, dir, fi);
                s.q.pending.push(slot);
                Ok(Issued::Queued)
            }
            Ok(Queued::Busy) => {
                self.files.unissued(fi);
                s.q.free.push(slot);
                s.budget.uncount(out, d, len);
                Ok(Issued::Queued)
            }
            Err(e) => {
                (out.error, out.error_detail) = (EIO, e.to_string());
                Err(Failed)
            }
        }
    }

    /// The direction, file, offset and length of the next I/O, drawn
    /// from the job's mix, rate, file choice, generators and zones (or
    /// the last I/O's, for the write of a trimwrite pair). None when the
    /// job stops: its rate ends it, a direction has no offsets (or fio
    /// would find none), a zone lies past the file's end; or when it
    /// ended fio's run (`run_over`, see `Issued::Drain`).
    #[inline]
    fn draw(&mut self, cx: &Cx, last: Option<(usize, u64, u32)>) -> Option<(Dir, usize, u64, u32)> {
        // fio chooses the file before the direction: a busy file (see
        // `Issued::Busy`) leaves the direction of its I/O undrawn, so the
        // mix is kept as it was before that draw.
        let lazy = self.files.is_lazy();
        let mut undrawn = lazy.then(|| (self.mix.clone(), self.mix_rng.clone()));
        let pick = self.mix.next(&mut self.mix_rng);
        let mut dir = pick.dir;
        if let Some(rate) = &self.rate {
            let now_ns = cx.clock.ns_between(cx.t_begin, cx.clock.now());
            dir = rate.admit(dir, now_ns, cx.deadline_ns)?;
        }
        if let (true, Some((fi, offset, len))) = (pick.reuse_last && dir == pick.dir, last) {
            if self.files.files[fi].open {
                return Some((dir, fi, offset, len));
            }
        }
        let mut d = dir as usize;
        let picked = self.files.pick_with(self.engine.as_mut());
        while let Some(done) = self.files.found_done() {
            // fio tried the file: a direction drawn, an offset draw that
            // found the map full; then a direction again for the next.
            let f = &mut self.files.files[done];
            if let Some(g) = f.gen_of[d] {
                f.gens[g].spend_draw_on_full_map(&mut self.off_rng);
            }
            if lazy {
                undrawn = Some((self.mix.clone(), self.mix_rng.clone()));
            }
            let again = self.mix.next(&mut self.mix_rng).dir;
            if self.rate.is_none() {
                dir = again;
                d = dir as usize;
            }
        }
        let fi = match picked {
            Ok(Some(fi)) => fi,
            Ok(None) => {
                if let Some((mix, rng)) = undrawn {
                    (self.mix, self.mix_rng) = (mix, rng);
                }
                self.busy = true;
                return None;
            }
            Err(_) => return None,
        };
        let skewed = self.files.is_skewed();
        let file = &mut self.files.files[fi];
        let g = file.gen_of[d]?;
        if let Some(r) = self.rewind.as_deref_mut() {
            r.before_draw(fi, g, file.gens[g].pass());
        }
        if let Some(z) = self.ctl.zones.as_deref_mut() {
            z.before_draw(fi, &mut file.gens);
        }
        let (offset, len) =
            file.gens[g].draw(&mut self.bs[d], &mut self.bs_rng[d], &mut self.off_rng, d);
        if file.gens[g].ended() {
            // fio found no next offset: the job ends.
            return None;
        }
        if skewed && file.gens[g].exhausted() {
            // fio's skewed file choice keeps a file whose offsets ran out
            // in service: reset, and the choice made again (the direction
            // drawn for it is spent).
            if self.files.reset_file(fi, self.engine.as_mut()).is_err() {
                return None;
            }
            return self.draw(cx, None);
        }
        if file.gens[g].exhausted() {
            // The map is full inside a loop that went on from the last, or
            // a sequential pass with a gap reached the end: fio's file is
            // done, and its other files go on. With none left, fio's run
            // ends and, while it may have more, the next starts.
            match self.files.retire(fi, self.engine.as_mut()) {
                Ok(true) => return self.draw(cx, None),
                Ok(false) => {}
                Err(_) => return None,
            }
            // fio drains the run's I/O, then starts the next run.
            self.run_over = true;
            return None;
        }
        let offset = match self.ctl.zones.as_deref_mut() {
            None => offset,
            Some(z) => match z.place(fi, offset, len) {
                Some(at) => at,
                None => {
                    // No next offset in this file's zone: fio's file is
                    // done and its other files go on; with none left the
                    // job ends.
                    let left = self.files.retire(fi, self.engine.as_mut());
                    return match left {
                        Ok(true) => self.draw(cx, None),
                        _ => None,
                    };
                }
            },
        };
        Some((dir, fi, offset, len))
    }

    /// Reaps as fio does: at least the batch minimum and at most the
    /// batch maximum per call while more I/O is to come; a full queue
    /// drains to iodepth_low before it is refilled. At the end (`more`
    /// false) everything still in flight is reaped at once, as fio's
    /// final drain does.
    fn reap_some(
        &mut self,
        cx: &Cx,
        m: &mut Measure,
        s: &mut Loops,
        out: &mut JobResult,
        more: bool,
    ) -> Result<(), Failed> {
        let full = !s.q.room() || self.ctl.full(s.q.queued());
        loop {
            let q = &mut s.q;
            let (want, most) = if more {
                (q.complete_min.min(q.inflight), q.complete_max)
            } else {
                (q.inflight, q.inflight)
            };
            let t1 = self.reap(cx, q, out, want, most)?;
            for &c in q.done.iter() {
                q.inflight -= 1;
                q.free.push(c.slot);
                if !self.finish(cx, m, out, q.meta[c.slot as usize], c.result, t1) {
                    s.stop = true;
                }
            }
            if !(more && full && q.inflight > q.low) || q.done.is_empty() {
                return Ok(());
            }
        }
    }
}
