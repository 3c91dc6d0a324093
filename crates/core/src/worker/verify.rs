//! Verify in the worker: headers stamped into each write, the log of what
//! was written, the read-back phase after a loop's writes (or after every
//! `verify_backlog` writes) and the check of each read of a read-only
//! verify job. Failures go to the job's result (`total_err`,
//! `first_error` EILSEQ, `error` with the first failure's file, block,
//! byte and checksums, and the same facts in `verify_failure`);
//! `verify_fatal` stops the job at the first. With `verify=pattern` a
//! write-only job's buffers are filled with the pattern once, not per
//! write: nothing in them depends on the write. None of this runs when
//! verify is off: the worker holds no `Verifier` then.

use std::time::{SystemTime, UNIX_EPOCH};

use iolab_engine::{Completion, IoUnit, Op, Queued};
use iolab_stats::{DepthDist, Dir, JobResult, VerifyFailure};

use crate::plan::{PlanFile, PlanJob};

use super::complete::{record_latencies, Cx, Meta};
use crate::verify::{
    check_read, fill_pattern, pattern_is_one_run, prepare_write, BadByte, Method, Mismatch, Stamp,
    VerifySpec,
};

use super::errors::strerror;
use super::{Worker, EILSEQ, EIO};

/// One write to check later.
#[derive(Clone, Copy, Debug)]
struct Written {
    fi: u32,
    len: u32,
    offset: u64,
    seq: u64,
}

/// The verify state of one job clone.
pub(super) struct Verifier {
    spec: VerifySpec,
    clone: u32,
    /// Writes since the last read-back.
    log: Vec<Written>,
    /// The job only reads: each read is checked as it completes.
    pub check_reads: bool,
    /// Failures are counted but do not fail the job (continue_on_error
    /// with verify or all).
    tolerated: bool,
    failures: u64,
    first: Option<String>,
    fatal_hit: bool,
    scratch: Vec<u8>,
    /// verify=pattern in a job that reads nothing but its own read-back:
    /// per buffer slot, how many leading bytes hold the pattern from its
    /// first byte (0: unknown). A write that fits is sent as the slot
    /// holds it; the read-back, which reads into the slots, clears them.
    /// Empty when the pattern is written anew per write.
    pattern_held: Vec<usize>,
}

impl Verifier {
    pub fn new(job: &PlanJob, spec: &VerifySpec, clone: u32) -> Verifier {
        Verifier {
            spec: spec.clone(),
            clone,
            log: Vec::new(),
            check_reads: !job.rw.mode.writes(),
            tolerated: job.errors.tolerates_verify_failures(),
            failures: 0,
            first: None,
            fatal_hit: false,
            scratch: Vec::new(),
            pattern_held: if spec.method == Method::Pattern && !job.rw.mode.reads() {
                vec![0; job.iodepth as usize]
            } else {
                Vec::new()
            },
        }
    }

    /// Logs a write for the read-back, when there is one.
    fn logged(&mut self, fi: usize, offset: u64, len: u32, seq: u64) {
        if self.spec.after_write {
            self.log.push(Written {
                fi: fi as u32,
                len,
                offset,
                seq,
            });
        }
    }

    /// Whether `verify_backlog` writes are waiting to be read back.
    #[inline]
    pub fn due(&self) -> bool {
        self.spec.backlog > 0 && self.log.len() as u64 >= self.spec.backlog
    }

    /// With `verify_dump`, writes the failed chunk `m` of `buf` (read from
    /// `offset`) to files; what became of them.
    fn dump(
        &self,
        data: &crate::data::DataGen,
        path: &std::path::Path,
        buf: &[u8],
        offset: u64,
        m: &Mismatch,
    ) -> Vec<String> {
        let Some(dir) = &self.spec.dump else {
            return Vec::new();
        };
        let from = (m.block.saturating_sub(offset) as usize).min(buf.len());
        let to = (from + m.len).min(buf.len());
        crate::verify::dump::dump_chunk(&self.spec, data, dir, path, &buf[from..to], m.block)
    }

    fn record(
        &mut self,
        path: &std::path::Path,
        m: Mismatch,
        dumped: Vec<String>,
        out: &mut JobResult,
    ) {
        self.failures += 1;
        out.total_err += 1;
        if out.first_error == 0 {
            out.first_error = EILSEQ;
            out.first_error_text = strerror(EILSEQ);
        }
        if self.first.is_none() {
            let mut text = format!("`{}`: {m}", path.display());
            if !dumped.is_empty() {
                text.push_str(&format!("; dumped: {}", dumped.join(", ")));
            }
            self.first = Some(text);
            out.verify_failure = Some(VerifyFailure {
                dumped,
                ..failure_of(path, &m)
            });
        }
        if let Some(f) = out.verify_failure.as_mut() {
            f.failed_blocks = self.failures;
        }
        if self.spec.fatal {
            self.fatal_hit = true;
        }
    }

    /// The job's error when failures were found and not tolerated; false
    /// when the job must stop.
    fn settle(&mut self, out: &mut JobResult) -> bool {
        if let Some(first) = &self.first {
            if !self.tolerated && out.error == 0 {
                out.error = EILSEQ;
                out.error_detail = match self.failures {
                    1 => first.clone(),
                    n => format!("{first} (and {} more blocks failed)", n - 1),
                };
            }
        }
        !self.fatal_hit && (self.tolerated || self.first.is_none())
    }
}

impl Worker {
    /// Fills the write in slot `slot` with verify chunks and logs it.
    pub(super) fn prepare_verified(
        &mut self,
        slot: u32,
        fi: usize,
        offset: u64,
        len: u32,
        seq: u64,
    ) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let buf = self.engine.buf(slot);
        let n = (len as usize).min(buf.len());
        let held = v.pattern_held.get_mut(slot as usize);
        if let Some(held) = held.filter(|_| pattern_is_one_run(&v.spec, n)) {
            // The pattern is the same for every write: filled once per
            // slot, not per write.
            if *held < n {
                fill_pattern(&v.spec, buf);
                *held = buf.len();
            }
            v.logged(fi, offset, len, seq);
            return;
        }
        if let Some(held) = v.pattern_held.get_mut(slot as usize) {
            *held = 0;
        }
        let time_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let st = Stamp {
            offset,
            seq,
            clone: v.clone,
            time_ns,
        };
        let buf = self.engine.buf(slot);
        prepare_write(&v.spec, &mut self.data, &mut buf[..n], st);
        v.logged(fi, offset, len, seq);
    }

    /// Checks a read of a read-only verify job that completed in `slot`
    /// with `n` bytes. False when the job must stop (verify_fatal).
    pub(super) fn check_completed(
        &mut self,
        files: &[PlanFile],
        out: &mut JobResult,
        slot: u32,
        fi: usize,
        offset: u64,
        n: u32,
    ) -> bool {
        let Some(v) = self.verify.as_mut() else {
            return true;
        };
        if !v.check_reads {
            return true;
        }
        let path = &files[self.files.files[fi].path_index].path;
        let buf = &self.engine.buf(slot)[..(n as usize)];
        let mut bad = Vec::new();
        check_read(&v.spec, &self.data, buf, offset, &mut v.scratch, &mut |m| {
            bad.push(m)
        });
        for m in bad {
            let dumped = v.dump(&self.data, path, buf, offset, &m);
            v.record(path, m, dumped, out);
            if v.fatal_hit {
                v.settle(out);
                return false;
            }
        }
        true
    }

    /// The read-back phase: reads every logged write (the last write to
    /// each offset) and checks it, then settles the job's error. Nothing
    /// may be in flight. False when the job must stop.
    pub(super) fn verify_pass(
        &mut self,
        cx: &Cx,
        out: &mut JobResult,
        done: &mut Vec<Completion>,
        read_back: bool,
    ) -> bool {
        let Some(mut v) = self.verify.take() else {
            return true;
        };
        let mut log = std::mem::take(&mut v.log);
        let mut ok = true;
        if read_back && !log.is_empty() {
            ok = self.read_back(cx, out, done, &mut v, &mut log);
            // The reads went into the buffers of the queue.
            v.pattern_held.fill(0);
        }
        log.clear();
        v.log = log;
        let go_on = v.settle(out) && ok;
        self.verify = Some(v);
        go_on
    }

    fn read_back(
        &mut self,
        cx: &Cx,
        out: &mut JobResult,
        done: &mut Vec<Completion>,
        v: &mut Verifier,
        log: &mut [Written],
    ) -> bool {
        // What the file holds is the last write to each place: a write
        // that a later one overlaps is not checked (as fio drops it).
        let keep = latest_writes(log);
        let all_open = keep.iter().all(|w| self.files.files[w.fi as usize].open);
        if cx.queued && all_open {
            return self.read_back_queued(cx, out, done, v, &keep);
        }
        let clock = cx.clock;
        for w in keep {
            let fi = w.fi as usize;
            let (id, opened) = if self.files.files[fi].open {
                (self.files.files[fi].id, false)
            } else {
                match self.engine.open(&self.files.files[fi].spec) {
                    Ok(id) => (id, true),
                    Err(e) => {
                        (out.error, out.error_detail) = (e.errno(), e.to_string());
                        return false;
                    }
                }
            };
            let unit = IoUnit {
                slot: 0,
                file: id,
                op: Op::Read,
                offset: w.offset,
                len: w.len,
            };
            // fio issues the read-back as reads: each counts as issued and
            // has its slat (through a queued engine), clat and lat.
            out.issued[Dir::Read as usize] += 1;
            let t0 = clock.now();
            let mut t_commit = t0;
            let got = self.io_committed(&unit, done, &mut t_commit);
            let t1 = clock.now();
            if opened {
                let _ = self.engine.close(id);
            }
            let result = match got {
                Ok(c) => c.result,
                Err(msg) => {
                    (out.error, out.error_detail) = (EIO, msg);
                    return false;
                }
            };
            let (one_level, one_batch) = (DepthDist::level_bucket(1), DepthDist::batch_bucket(1));
            out.depth.level[one_level] += 1;
            out.depth.submit[one_batch] += 1;
            out.depth.complete[one_batch] += 1;
            let io = Meta {
                slot: 0,
                dir: Dir::Read,
                fi,
                offset: w.offset,
                len: w.len,
                t_issue: t0,
                t_commit,
            };
            if !self.read_back_done(cx, out, v, w, io, result, t1) {
                return false;
            }
        }
        true
    }

    /// The read-back through a queued engine, as fio issues it: up to
    /// iodepth reads in flight, each submitted as it is queued and reaped
    /// as the job's batch settings say, each read into a buffer slot of
    /// its own.
    fn read_back_queued(
        &mut self,
        cx: &Cx,
        out: &mut JobResult,
        done: &mut Vec<Completion>,
        v: &mut Verifier,
        keep: &[Written],
    ) -> bool {
        let clock = cx.clock;
        let depth = cx.job.iodepth.max(1);
        // Reaped as the job's own I/O is: at least the batch minimum and
        // at most the batch maximum per call (fio's default: one), and
        // everything at once when nothing is left to issue.
        let complete_min = cx.job.iodepth_batch_complete_min.clamp(1, depth);
        let complete_max = cx.job.iodepth_batch_complete_max.clamp(complete_min, depth);
        let mut free: Vec<u32> = (0..depth).rev().collect();
        let mut slots: Vec<Option<(Written, Meta)>> = vec![None; depth as usize];
        let mut inflight = 0u32;
        let mut next = 0usize;
        let batch_1 = DepthDist::batch_bucket(1);
        while next < keep.len() || inflight > 0 {
            while next < keep.len() && !free.is_empty() {
                let slot = free.pop().unwrap_or(0);
                let w = keep[next];
                let fi = w.fi as usize;
                let unit = IoUnit {
                    slot,
                    file: self.files.files[fi].id,
                    op: Op::Read,
                    offset: w.offset,
                    len: w.len,
                };
                out.issued[Dir::Read as usize] += 1;
                let t0 = clock.now();
                let mut io = Meta {
                    slot,
                    dir: Dir::Read,
                    fi,
                    offset: w.offset,
                    len: w.len,
                    t_issue: t0,
                    t_commit: t0,
                };
                let queued = self.engine.queue(&unit);
                match queued {
                    Ok(Queued::Completed(c)) => {
                        let t1 = clock.now();
                        next += 1;
                        free.push(slot);
                        out.depth.level[DepthDist::level_bucket(inflight + 1)] += 1;
                        out.depth.submit[batch_1] += 1;
                        out.depth.complete[batch_1] += 1;
                        if !self.read_back_done(cx, out, v, w, io, c.result, t1) {
                            return self.settle_queue(out, done, inflight);
                        }
                    }
                    Ok(Queued::InFlight) => {
                        next += 1;
                        if let Err(e) = self.engine.commit() {
                            (out.error, out.error_detail) = (EIO, e.to_string());
                            return self.settle_queue(out, done, inflight + 1);
                        }
                        io.t_commit = clock.now();
                        inflight += 1;
                        slots[slot as usize] = Some((w, io));
                        out.depth.level[DepthDist::level_bucket(inflight)] += 1;
                        out.depth.submit[batch_1] += 1;
                    }
                    Ok(Queued::Busy) => {
                        out.issued[Dir::Read as usize] -= 1;
                        free.push(slot);
                        break;
                    }
                    Err(e) => {
                        (out.error, out.error_detail) = (EIO, e.to_string());
                        return self.settle_queue(out, done, inflight);
                    }
                }
            }
            if inflight == 0 {
                continue;
            }
            let (want, most) = if next < keep.len() {
                (complete_min.min(inflight), complete_max)
            } else {
                (inflight, inflight)
            };
            done.clear();
            if let Err(e) = self.engine.reap(want as usize, most as usize, done) {
                (out.error, out.error_detail) = (EIO, e.to_string());
                return false;
            }
            let t1 = clock.now();
            out.depth.complete[DepthDist::batch_bucket(done.len() as u32)] += 1;
            let mut go_on = true;
            for &c in done.iter() {
                inflight -= 1;
                free.push(c.slot);
                let Some((w, io)) = slots[c.slot as usize].take() else {
                    continue;
                };
                if go_on && !self.read_back_done(cx, out, v, w, io, c.result, t1) {
                    go_on = false;
                }
            }
            if !go_on {
                return self.settle_queue(out, done, inflight);
            }
        }
        true
    }

    /// Reaps what is still in flight after the read-back failed, so that
    /// nothing is left in the engine; always false (the job stops).
    fn settle_queue(&mut self, out: &mut JobResult, done: &mut Vec<Completion>, n: u32) -> bool {
        if n > 0 {
            done.clear();
            if let Err(e) = self.engine.reap(n as usize, n as usize, done) {
                if out.error == 0 {
                    (out.error, out.error_detail) = (EIO, e.to_string());
                }
            }
        }
        false
    }

    /// One read of the read-back completed at `t1` with `result`: counted
    /// as a read with its latencies, and its data checked against what
    /// `w` wrote. False when the job must stop.
    #[allow(clippy::too_many_arguments)]
    fn read_back_done(
        &mut self,
        cx: &Cx,
        out: &mut JobResult,
        v: &mut Verifier,
        w: Written,
        io: Meta,
        result: Result<u32, i32>,
        t1: u64,
    ) -> bool {
        let fi = w.fi as usize;
        let path = &cx.files[self.files.files[fi].path_index].path;
        let n = match result {
            Ok(n) => n,
            Err(e) => {
                out.total_err += 1;
                (out.error, out.error_detail) = (
                    e,
                    format!(
                        "{} on the verify read of {} bytes at offset {} in `{}`",
                        iolab_engine::errno_text(e),
                        w.len,
                        w.offset,
                        path.display()
                    ),
                );
                return false;
            }
        };
        let r = &mut out.dirs[Dir::Read as usize];
        r.total_ios += 1;
        r.io_bytes += n as u64;
        record_latencies(cx, out, &io, t1);
        let buf = &self.engine.buf(io.slot)[..(n as usize).min(w.len as usize)];
        let mut bad = Vec::new();
        let first = check_read(
            &v.spec,
            &self.data,
            buf,
            w.offset,
            &mut v.scratch,
            &mut |m| bad.push(m),
        );
        if n < w.len {
            bad.push(Mismatch {
                block: w.offset,
                len: w.len as usize,
                first_bad: BadByte::At(w.offset + n as u64),
                what: format!("short read: {n} of {} bytes", w.len),
                expected: String::new(),
                found: String::new(),
            });
        }
        if let Some(h) = first {
            if !crate::verify::written_by(&h, w.seq) {
                bad.push(Mismatch {
                    block: w.offset,
                    len: w.len as usize,
                    first_bad: BadByte::Among(w.offset + 34, w.offset + 36),
                    what: format!(
                        "stale data: the block holds write #{} but write #{} went there last",
                        h.seq, w.seq
                    ),
                    expected: format!("sequence {}", w.seq),
                    found: format!("sequence {}", h.seq),
                });
            }
        }
        for m in bad {
            let dumped = v.dump(&self.data, path, buf, w.offset, &m);
            v.record(path, m, dumped, out);
            if v.fatal_hit {
                return false;
            }
        }
        true
    }
}

/// A failed chunk as the result model keeps it.
fn failure_of(path: &std::path::Path, m: &Mismatch) -> VerifyFailure {
    let (first_bad_byte, bad_byte_range) = match m.first_bad {
        BadByte::At(at) => (Some(at), None),
        BadByte::Among(a, b) => (None, Some((a, b))),
        BadByte::Unlocated => (None, None),
    };
    VerifyFailure {
        file: path.display().to_string(),
        block_offset: m.block,
        block_len: m.len as u64,
        first_bad_byte,
        bad_byte_range,
        what: m.what.clone(),
        expected: m.expected.clone(),
        found: m.found.clone(),
        failed_blocks: 1,
        dumped: Vec::new(),
    }
}

/// The writes of `log` that no later write overlaps, by file and offset.
fn latest_writes(log: &mut [Written]) -> Vec<Written> {
    use std::collections::BTreeMap;
    log.sort_by_key(|w| std::cmp::Reverse(w.seq));
    // The union of the ranges written later, per file: start -> end,
    // disjoint.
    let mut later: BTreeMap<(u32, u64), u64> = BTreeMap::new();
    let mut out = Vec::with_capacity(log.len());
    for w in log.iter() {
        let (mut start, mut end) = (w.offset, w.offset + w.len as u64);
        let hit = later
            .range((w.fi, 0)..(w.fi, end))
            .next_back()
            .is_some_and(|(_, e)| *e > start);
        if !hit {
            out.push(*w);
        }
        // Merge the range into the union.
        let touching: Vec<(u64, u64)> = later
            .range((w.fi, 0)..=(w.fi, end))
            .rev()
            .take_while(|(_, e)| **e >= start)
            .map(|((_, s), e)| (*s, *e))
            .collect();
        for (s, e) in touching {
            later.remove(&(w.fi, s));
            start = start.min(s);
            end = end.max(e);
        }
        later.insert((w.fi, start), end);
    }
    out.sort_by_key(|w| (w.fi, w.offset));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(fi: u32, offset: u64, len: u32, seq: u64) -> Written {
        Written {
            fi,
            len,
            offset,
            seq,
        }
    }

    #[test]
    fn later_writes_hide_the_earlier_ones_they_overlap() {
        let mut log = vec![
            w(0, 0, 12288, 1),
            w(0, 4096, 4096, 2),
            w(0, 16384, 4096, 3),
            w(0, 16384, 4096, 4),
            w(1, 0, 8192, 5),
            w(0, 20480, 8192, 6),
            w(0, 24576, 4096, 7),
            // Hidden in part by a write that is itself hidden.
            w(0, 40960, 8192, 8),
            w(0, 45056, 8192, 9),
            w(0, 49152, 4096, 10),
        ];
        let kept: Vec<(u32, u64, u64)> = latest_writes(&mut log)
            .iter()
            .map(|w| (w.fi, w.offset, w.seq))
            .collect();
        assert_eq!(
            kept,
            vec![
                (0, 4096, 2),
                (0, 16384, 4),
                (0, 24576, 7),
                (0, 49152, 10),
                (1, 0, 5)
            ]
        );
    }
}
