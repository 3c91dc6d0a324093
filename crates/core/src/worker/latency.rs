//! `latency_target`: fio's search for the highest queue depth whose I/Os
//! meet a latency target. The clone starts at depth 1; each window
//! (`latency_window`, at least one completion) in which the share of I/Os
//! at or under the target reaches `latency_percentile` doubles the depth,
//! until a window fails; from then on the depth is bisected between the
//! highest depth that met the target and the lowest that did not. When a
//! success leaves the depth where it was, the depth is found: the queue
//! drains, then the statistics start afresh for one more window, after
//! which the job ends (`latency_run=1` instead keeps adjusting for the
//! whole run). At 100% a
//! single I/O over the target fails its window at once, and one at depth 1
//! ends the job with ETIMEDOUT, as in fio.
//!
//! As in fio, a window counts the I/Os that complete in it. When the depth
//! is lowered (and before the final window), nothing more is issued until
//! the I/Os in flight have completed (fio's quiesce): they count in no
//! window, but at 100% each of them over the target lowers the depth
//! again, and one at depth 1 ends the job with ETIMEDOUT, as fio's
//! completions during its quiesce do. As fio resets its statistics after
//! that drain, the I/Os in flight when the depth is found are in none of
//! the final figures. The worker asks `admit` before issuing (and then
//! `begin_final`) and reports each completion; nothing here exists unless
//! the job sets a target.

use iolab_stats::JobResult;

use super::complete::{Cx, Meta};
use super::Worker;
use crate::plan::LatencyTarget;

/// fio's error when a latency target cannot be met at depth 1.
const ETIMEDOUT: i32 = 110;

impl Worker {
    /// After an I/O completed past the ramp: judges it for the search and
    /// carries out what the search says. False when the job must stop.
    /// Out of line: jobs without a target never call it.
    #[inline(never)]
    pub(super) fn latency_after_io(
        &mut self,
        cx: &Cx,
        out: &mut JobResult,
        io: &Meta,
        t_done: u64,
    ) -> bool {
        let Some(search) = self.ctl.latency.as_deref_mut() else {
            return true;
        };
        let lat = (cx.timed && !cx.job.stats.disable_lat)
            .then(|| cx.clock.ns_between(io.t_issue, t_done));
        match search.completed(lat, t_done) {
            Step::Go => true,
            Step::Done => false,
            Step::Fatal => {
                out.error = ETIMEDOUT;
                out.error_detail = format!(
                    "func=max latency exceeded, error={}: latency of {} nsec exceeds \
                     latency_target ({} nsec) at queue depth 1",
                    super::strerror(ETIMEDOUT),
                    lat.unwrap_or(0),
                    search.target_ns
                );
                false
            }
        }
    }
}

/// What a completion or the end of a window asks of the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on.
    Go,
    /// The final window is over: the job ends.
    Done,
    /// An I/O at depth 1 took longer than the target (at 100%): the job
    /// fails with ETIMEDOUT.
    Fatal,
}

/// The search's state.
#[derive(Debug)]
pub(super) struct LatSearch {
    target_ns: u64,
    /// The window's length, in the clock's ticks.
    window: u64,
    percentile: f64,
    run: bool,
    /// The job's iodepth: the depth never goes higher.
    max: u32,
    /// The depth now (fio's latency_qd).
    depth: u32,
    /// The highest depth that met the target, and the lowest that did not
    /// (`max` until one fails).
    low: u32,
    high: u32,
    /// Successes in a row one below `high`.
    stable: u32,
    /// The final window is running (or waits for the queue to drain).
    end_run: bool,
    /// The depth is found and the queue drains: the final window, and the
    /// statistics, start once it is empty (`begin_final`).
    final_due: bool,
    /// When the window began (ticks).
    start: u64,
    /// I/Os of the window, and those over the target.
    ios: u64,
    failed: u64,
    /// After the depth was lowered (or before the final window), nothing
    /// is issued until the queue is empty; the I/Os completing meanwhile
    /// are the ones that were in flight then.
    quiesce: bool,
}

impl LatSearch {
    /// The search of a clone that starts at `now` (ticks), with windows of
    /// `window_ticks`.
    pub fn new(spec: &LatencyTarget, iodepth: u32, now: u64, window_ticks: u64) -> LatSearch {
        LatSearch {
            target_ns: spec.target.as_nanos() as u64,
            window: window_ticks,
            percentile: spec.percentile,
            run: spec.run,
            max: iodepth.max(1),
            depth: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            end_run: false,
            final_due: false,
            start: now,
            ios: 0,
            failed: 0,
            quiesce: false,
        }
    }

    /// The depth the search is at (what fio reports as latency_depth).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether one more I/O may be issued with `queued` in the queue.
    #[inline]
    pub fn admit(&mut self, queued: u32) -> bool {
        if self.quiesce {
            if queued > 0 {
                return false;
            }
            self.quiesce = false;
        }
        queued < self.depth
    }

    /// Whether the final window waits to begin (see `begin_final`).
    #[inline]
    pub fn awaits_final(&self) -> bool {
        self.final_due
    }

    /// After `admit` let an I/O in: whether the queue has drained since the
    /// depth was found, so that the final window starts now (at `now`,
    /// ticks) and the worker starts its statistics afresh, as fio does
    /// after its quiesce (`reset_all_stats`). True once.
    #[inline]
    pub fn begin_final(&mut self, now: u64) -> bool {
        if !self.final_due || self.quiesce {
            return false;
        }
        self.final_due = false;
        self.new_window(now);
        true
    }

    /// Whether the queue is full at the current depth with `queued` in it.
    #[inline]
    pub fn full(&self, queued: u32) -> bool {
        queued >= self.depth || self.quiesce
    }

    /// An I/O completed at `now` (ticks) after `lat_ns` (None: latencies
    /// are not measured); then the window is judged if it is over.
    pub fn completed(&mut self, lat_ns: Option<u64>, now: u64) -> Step {
        let over = lat_ns.is_some_and(|l| l > self.target_ns);
        if self.quiesce {
            // An I/O in flight when the depth changed, completing while the
            // queue drains: in no window; at 100% one over the target
            // lowers the depth again (fio's completions in its quiesce).
            if over && self.percentile >= 100.0 {
                if self.depth == 1 {
                    return Step::Fatal;
                }
                self.lower(now);
            }
            return Step::Go;
        }
        self.ios += 1;
        if over {
            if self.percentile >= 100.0 {
                if self.depth == 1 {
                    return Step::Fatal;
                }
                self.lower(now);
                return Step::Go;
            }
            self.failed += 1;
        }
        if now.saturating_sub(self.start) < self.window {
            return Step::Go;
        }
        let met = (self.ios - self.failed) as f64 * 100.0 / self.ios as f64;
        if met >= self.percentile {
            self.raise(now)
        } else {
            if self.depth > 1 {
                self.lower(now);
            }
            Step::Go
        }
    }

    /// A window that missed the target: the depth goes halfway down to the
    /// highest that met it.
    fn lower(&mut self, now: u64) {
        self.high = self.depth;
        if self.depth == self.low {
            self.low -= 1;
        }
        self.depth = ((self.depth + self.low) / 2).max(1);
        self.stable = 0;
        self.quiesce = true;
        self.new_window(now);
    }

    /// A window that met the target: the depth doubles until one fails,
    /// then goes halfway up to the lowest that failed. One below a depth
    /// that failed, three successes in a row try that one again, as fio
    /// does.
    fn raise(&mut self, now: u64) -> Step {
        let was = self.depth;
        self.low = self.depth;
        if self.depth + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.depth = if self.high != self.max {
            (self.depth + self.high) / 2
        } else {
            self.depth.saturating_mul(2)
        }
        .min(self.max);
        let mut step = Step::Go;
        if !self.run && self.depth == was {
            if self.end_run {
                step = Step::Done;
            } else {
                // fio drains the queue before its final window, which
                // starts with its statistics afresh (`begin_final`).
                self.end_run = true;
                self.final_due = true;
                self.quiesce = true;
            }
        }
        self.new_window(now);
        step
    }

    fn new_window(&mut self, now: u64) {
        self.start = now;
        self.ios = 0;
        self.failed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(target_us: u64, percentile: f64, run: bool) -> LatencyTarget {
        LatencyTarget {
            target: Duration::from_micros(target_us),
            window: Duration::from_millis(10),
            percentile,
            run,
        }
    }

    /// How a drive ended: still going, the final window begun (the
    /// statistics start afresh), or a `Step` that ends the job.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum End {
        Go,
        Final,
        Done,
        Fatal,
    }

    fn end_of(step: Step) -> End {
        match step {
            Step::Go => End::Go,
            Step::Done => End::Done,
            Step::Fatal => End::Fatal,
        }
    }

    /// Drives a search with a synthetic device whose latency at depth `d`
    /// is `lat(d)` ns, in ticks of 1 ns with windows of `WINDOW` ticks
    /// and one I/O completing every tick per I/O in flight; returns the
    /// depths it visited and how it ended.
    fn drive(s: &mut LatSearch, mut lat: impl FnMut(u32) -> u64, ticks: u64) -> (Vec<u32>, End) {
        let mut seen = vec![s.depth()];
        let mut now = 0u64;
        while now < ticks {
            now += 1;
            // The queue is kept as full as the search admits.
            let mut queued = 0;
            while s.admit(queued) {
                if queued == 0 && s.begin_final(now) {
                    return (seen, End::Final);
                }
                queued += 1;
            }
            let d = queued.max(1);
            let step = s.completed(Some(lat(d)), now);
            if *seen.last().unwrap() != s.depth() {
                seen.push(s.depth());
            }
            if step != Step::Go {
                return (seen, end_of(step));
            }
        }
        (seen, End::Go)
    }

    const WINDOW: u64 = 100;

    fn search(spec: &LatencyTarget, iodepth: u32) -> LatSearch {
        LatSearch::new(spec, iodepth, 0, WINDOW)
    }

    #[test]
    fn it_finds_the_depth_where_latency_crosses_the_target() {
        // 10 us per I/O in the queue: depth d takes 10*d us. A 55 us
        // target is met up to depth 5: doubling to 8 fails, bisection
        // settles on 5, which then runs a final window and ends the job.
        let lat = |d: u32| u64::from(d) * 10_000;
        let mut s = search(&spec(55, 100.0, false), 64);
        let (seen, end) = drive(&mut s, lat, 1_000_000);
        assert_eq!(end, End::Final, "{seen:?}");
        assert_eq!(s.depth(), 5, "{seen:?}");
        assert_eq!(&seen[..5], &[1, 2, 4, 8, 6], "{seen:?}");
        let (_, end) = drive(&mut s, lat, 1_000_000);
        assert_eq!(end, End::Done);
        assert_eq!(s.depth(), 5);
        // Everywhere in 1..=64 the search lands on the last depth under
        // the target.
        for want in 1..=40u32 {
            let target_us = u64::from(want) * 10 + 5;
            let mut s = search(&spec(target_us, 100.0, false), 64);
            let (seen, end) = drive(&mut s, lat, 10_000_000);
            assert_eq!((end, s.depth()), (End::Final, want), "{seen:?}");
        }
    }

    #[test]
    fn the_depth_stops_at_iodepth() {
        let mut s = search(&spec(1_000, 100.0, false), 16);
        let (seen, end) = drive(&mut s, |_| 1_000, 1_000_000);
        assert_eq!(seen, [1, 2, 4, 8, 16]);
        assert_eq!((end, s.depth()), (End::Final, 16));
    }

    #[test]
    fn a_percentile_lets_a_share_of_ios_miss() {
        // Every tenth I/O is slow whatever the depth: at 90% that still
        // meets the target; at 99% no depth does, and the search stays at
        // 1 (which fio never gives up at below 100%).
        let mut n = 0u64;
        let mut spiky = |_: u32| {
            n += 1;
            if n.is_multiple_of(10) {
                1_000_000
            } else {
                1_000
            }
        };
        let mut s = search(&spec(10, 90.0, false), 8);
        let mut now = 0;
        let mut end = End::Go;
        while end == End::Go && now < 100_000 {
            now += 1;
            if s.admit(0) && s.begin_final(now) {
                end = End::Final;
                break;
            }
            end = end_of(s.completed(Some(spiky(0)), now));
        }
        assert_eq!((end, s.depth()), (End::Final, 8));
        let mut s = search(&spec(10, 99.0, false), 8);
        let (_, end) = drive(&mut s, spiky, 100_000);
        assert_eq!((end, s.depth()), (End::Go, 1));
    }

    #[test]
    fn at_100_percent_one_slow_io_at_depth_1_is_fatal() {
        let mut s = search(&spec(10, 100.0, false), 8);
        assert_eq!(s.completed(Some(20_000), 1), Step::Fatal);
        // Without latencies nothing fails.
        let mut s = search(&spec(10, 100.0, false), 8);
        assert_eq!(s.completed(None, 1), Step::Go);
    }

    #[test]
    fn latency_run_keeps_adjusting() {
        // The device gets slower after a while: the search follows it down
        // instead of ending.
        let mut s = search(&spec(55, 100.0, true), 64);
        let (_, end) = drive(&mut s, |d| u64::from(d) * 10_000, 200_000);
        assert_eq!(end, End::Go);
        assert!((5..=6).contains(&s.depth()), "{}", s.depth());
        let (_, end) = drive(&mut s, |d| u64::from(d) * 25_000, 200_000);
        assert_eq!(end, End::Go);
        assert!((1..=3).contains(&s.depth()), "{}", s.depth());
    }

    #[test]
    fn a_lowered_depth_drains_and_judges_the_ios_in_flight_as_fio() {
        let mut s = search(&spec(10, 100.0, false), 16);
        s.depth = 8;
        s.low = 4;
        s.high = 16;
        // A slow I/O: the depth goes to 6, and nothing is issued until the
        // queue is empty.
        assert_eq!(s.completed(Some(50_000), 10), Step::Go);
        assert_eq!(s.depth(), 6);
        assert!(!s.admit(3));
        assert!(s.full(3));
        // Of the I/Os in flight then, a fast one counts in no window; a
        // slow one steps down again (to 5), as fio's completions during its
        // quiesce do.
        assert_eq!(s.completed(Some(1_000), 11), Step::Go);
        assert_eq!((s.depth(), s.ios), (6, 0));
        assert_eq!(s.completed(Some(50_000), 12), Step::Go);
        assert_eq!(s.depth(), 5);
        assert_eq!(s.completed(Some(50_000), 13), Step::Go);
        assert_eq!(s.depth(), 4);
        // Drained: the new window counts what completes from now on.
        assert!(s.admit(0));
        assert!(s.admit(3));
        assert!(!s.admit(4));
        assert_eq!(s.completed(Some(1_000), 15), Step::Go);
        assert_eq!(s.ios, 1);
        // At depth 1 a slow I/O still in flight fails the job.
        let mut s = search(&spec(10, 100.0, false), 4);
        s.depth = 2;
        s.low = 1;
        s.high = 4;
        assert_eq!(s.completed(Some(50_000), 2), Step::Go);
        assert_eq!(s.depth(), 1);
        assert_eq!(s.completed(Some(50_000), 3), Step::Fatal);
        // Below 100% the I/Os drained count nowhere and lower nothing.
        let mut s = search(&spec(10, 90.0, false), 8);
        s.depth = 4;
        s.quiesce = true;
        assert_eq!(s.completed(Some(50_000), 1), Step::Go);
        assert_eq!((s.depth(), s.ios, s.failed), (4, 0, 0));
    }

    #[test]
    fn the_final_window_and_its_statistics_start_after_the_drain_as_fio() {
        // The synthetic device: 10 us per I/O in the queue, a 45 us target,
        // so depth 4 is found. At the success that finds it, 3 I/Os are
        // still in flight: fio drains them (io_u_quiesce), then resets its
        // statistics and starts the final window; they are in neither.
        let mut s = search(&spec(45, 100.0, false), 4);
        s.depth = 4;
        s.low = 2;
        s.high = 4;
        s.start = 0;
        // The window's last completion: a success that leaves depth 4.
        assert_eq!(s.completed(Some(40_000), WINDOW), Step::Go);
        assert_eq!(s.depth(), 4);
        assert!(s.end_run);
        // Nothing is issued, and the final window has not begun, while
        // the three in flight drain; they count in no window.
        for (left, t) in [(3, 101), (2, 102), (1, 103)] {
            assert!(!s.admit(left));
            assert!(!s.begin_final(t));
            assert_eq!(s.completed(Some(40_000), t), Step::Go);
            assert_eq!(s.ios, 0);
        }
        // Drained: the final window (and the statistics) start now, once.
        assert!(s.admit(0));
        assert!(s.begin_final(104));
        assert!(!s.begin_final(105));
        assert_eq!(s.start, 104);
        // It counts what completes from then on, and its end ends the job.
        assert_eq!(s.completed(Some(40_000), 150), Step::Go);
        assert_eq!(s.ios, 1);
        assert_eq!(s.completed(Some(40_000), 104 + WINDOW), Step::Done);
    }

    #[test]
    fn after_a_success_the_ios_in_flight_count_in_the_next_window_as_fio() {
        // fio starts a new window at a success without draining: an I/O
        // issued before it and completing after counts in the new one.
        let mut s = search(&spec(10, 90.0, false), 8);
        s.depth = 2;
        s.low = 1;
        s.high = 8;
        s.start = 0;
        assert_eq!(s.completed(Some(1_000), WINDOW), Step::Go);
        assert_eq!(s.depth(), 4);
        assert_eq!(s.completed(Some(1_000), WINDOW + 1), Step::Go);
        assert_eq!(s.ios, 1);
    }
}
