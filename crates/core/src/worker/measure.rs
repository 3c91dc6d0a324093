//! What a clone measures and from when: `ramp_time` (counts are kept
//! through it and forgotten when it ends, latencies and samples start
//! after it, as fio's do), and the bandwidth and IOPS samples, each over
//! its own averaging window (`bwavgtime`, `iopsavgtime`). A sample is taken
//! when an I/O completes after its window's end (the next window starts
//! then, so with 500 ms windows a 1 s job has one sample and a 2 s job
//! three, as fio 3.33 reports). A window that the job's deadline cuts
//! short is no sample: fio's are taken on a timer while the job runs.
//! Per I/O this is a comparison with the clock reading the worker already
//! has.

use std::time::Duration;

use iolab_engine::accounting::IoMark;
use iolab_engine::clock::Clock;
use iolab_engine::host::{thread_cpu_usage, CpuUsage};
use iolab_engine::IoThreads;
use iolab_stats::{DepthDist, Dir, JobResult};

use crate::gen::RwMix;

use super::logs::Logs;

/// One averaging window: what completed in it per direction (bytes for
/// bandwidth, I/Os for IOPS), when it began and when it ends.
#[derive(Clone, Copy)]
struct Window {
    acc: [u64; 3],
    start: u64,
    end: u64,
    every: u64,
}

impl Window {
    fn new(start: u64, every: u64) -> Window {
        Window {
            acc: [0; 3],
            start,
            end: start.saturating_add(every),
            every,
        }
    }

    /// The window's rate per direction (per second, in `unit`s of what it
    /// counts) up to `t1`, and a new window from `t1`.
    fn close(&mut self, t1: u64, clock: &Clock, unit: u128) -> [u64; 3] {
        let span = clock.ns_between(self.start, t1).max(1) as u128;
        let rates = self
            .acc
            .map(|n| (n as u128 * 1_000_000_000 / span / unit) as u64);
        *self = Window::new(t1, self.every);
        rates
    }
}

/// The job's I/O as the kernel accounts it, done by `threads`, unless
/// the checks are off.
fn checked_io_mark(threads: IoThreads) -> Option<IoMark> {
    crate::checks::on().then(|| IoMark::now(threads)).flatten()
}

pub(super) struct Measure {
    /// Still in ramp_time: latencies and samples are not taken.
    pub ramping: bool,
    ramp_end: u64,
    /// When the measured part began: the job's start, or the end of the
    /// ramp.
    pub start: u64,
    /// The thread's CPU use at `start`.
    pub cpu0: CpuUsage,
    /// What the job's threads had caused the storage to read and write
    /// at `start` (None: the kernel does not say).
    pub io0: Option<IoMark>,
    /// Which threads do the job's I/O.
    io_threads: IoThreads,
    /// Bytes per direction of the current bandwidth window.
    bw: Window,
    /// I/Os per direction of the current IOPS window.
    iops: Window,
    /// Bytes and I/Os per direction done in the ramp, which the job's
    /// counts forget and its progress does not.
    pub ramped: [(u64, u64); 3],
    /// The job's deadline (ticks; u64::MAX without a runtime): a window
    /// that would end there or later is not sampled.
    cutoff: u64,
    /// The millisecond of the measured part that the ticks in
    /// `ms_ticks` (from, to) are in (see `ms_at`).
    ms: u64,
    ms_ticks: (u64, u64),
    /// The first tick at which `tick` has something to do: the ramp's
    /// end while ramping, else the end of the first window that is a
    /// sample (u64::MAX when none is): one comparison per I/O.
    due: u64,
}

impl Measure {
    /// Measuring a clone that starts at `begin` (clock ticks), with
    /// bandwidth samples every `bw_every` and IOPS samples every
    /// `iops_every` (None: no windows, the logs take samples per I/O),
    /// whose I/O `io_threads` do.
    pub fn new(
        clock: &Clock,
        begin: u64,
        ramp: Duration,
        bw_every: Option<Duration>,
        iops_every: Option<Duration>,
        io_threads: IoThreads,
    ) -> Measure {
        let every = |d: Option<Duration>| d.map_or(u64::MAX, |d| clock.ticks(d));
        Measure {
            ramping: !ramp.is_zero(),
            ramp_end: begin + clock.ticks(ramp),
            start: begin,
            cpu0: thread_cpu_usage(),
            io0: checked_io_mark(io_threads),
            io_threads,
            bw: Window::new(begin, every(bw_every)),
            iops: Window::new(begin, every(iops_every)),
            ramped: [(0, 0); 3],
            cutoff: u64::MAX,
            ms: 0,
            ms_ticks: (0, 0),
            due: 0,
        }
        .with_due()
    }

    /// `self` with `due` worked out again.
    fn with_due(mut self) -> Measure {
        self.set_due();
        self
    }

    /// Works out `due` after the ramp, the windows or the cutoff changed.
    fn set_due(&mut self) {
        let sampled = |end: u64| if end < self.cutoff { end } else { u64::MAX };
        self.due = if self.ramping {
            self.ramp_end
        } else {
            sampled(self.bw.end).min(sampled(self.iops.end))
        };
    }

    /// Milliseconds since the measured part began at `t` (ticks), as
    /// `clock.ns_between(start, t) / 10^6`: worked out when `t` leaves
    /// the ticks known to be in the last millisecond worked out, so that
    /// I/Os completing thousands to a millisecond (a log line each) cost
    /// a comparison, not a multiplication and a division each.
    #[inline(always)]
    pub fn ms_at(&mut self, t: u64, clock: &Clock) -> u64 {
        let (from, to) = self.ms_ticks;
        if t >= from && t < to {
            return self.ms;
        }
        self.ms_new(t, clock)
    }

    #[inline(never)]
    fn ms_new(&mut self, t: u64, clock: &Clock) -> u64 {
        let ms = clock.ns_between(self.start, t) / 1_000_000;
        // `ticks` rounds down, so no tick before the end of the range is
        // past the next millisecond's start: every tick in it is in `ms`.
        let next = Duration::from_millis(ms.saturating_add(1));
        self.ms = ms;
        self.ms_ticks = (t, self.start.saturating_add(clock.ticks(next)));
        ms
    }

    /// The job ends at `deadline` (ticks): as in fio, whose samples are
    /// taken on a timer while the job runs, the window the deadline cuts
    /// short is no sample (a 1 s job with 100 ms windows has 9, not 10).
    pub fn cut_off_at(&mut self, deadline: Option<u64>) {
        self.cutoff = deadline.unwrap_or(u64::MAX);
        self.set_due();
    }

    /// Counts a completed I/O in the current window.
    #[inline]
    pub fn count(&mut self, d: usize, bytes: u64) {
        self.bw.acc[d] += bytes;
        self.iops.acc[d] += 1;
    }

    /// After an I/O that completed at `t1`: ends the ramp when it is over
    /// and returns true then; otherwise takes the samples of a window that
    /// is over.
    #[inline]
    pub fn tick(
        &mut self,
        t1: u64,
        clock: &Clock,
        out: &mut JobResult,
        mix: &RwMix,
        logs: Option<&mut Logs>,
    ) -> bool {
        if t1 < self.due {
            return false;
        }
        if self.ramping {
            self.end_ramp(out);
            return true;
        }
        self.sample(t1, clock, out, mix, logs);
        false
    }

    /// Statistics start at the end of the ramp; what it did is forgotten
    /// (the bytes it moved still count towards the job's size, as in fio).
    /// The I/O that crossed the end belongs to the ramp.
    #[cold]
    fn end_ramp(&mut self, out: &mut JobResult) {
        self.ramping = false;
        for (d, r) in out.dirs.iter().enumerate() {
            self.ramped[d].0 += r.io_bytes;
            self.ramped[d].1 += r.total_ios;
        }
        out.dirs = Default::default();
        out.sync = Default::default();
        out.lat_buckets = Default::default();
        out.depth = DepthDist::default();
        out.issued = [0; 3];
        self.start = self.ramp_end;
        self.ms_ticks = (0, 0);
        self.cpu0 = thread_cpu_usage();
        self.io0 = checked_io_mark(self.io_threads);
        self.bw = Window::new(self.ramp_end, self.bw.every);
        self.iops = Window::new(self.ramp_end, self.iops.every);
        self.set_due();
    }

    /// Statistics start afresh at `t` (ticks), as at the end of the ramp:
    /// `latency_target`'s final window at the depth it found.
    #[cold]
    pub fn restart_at(&mut self, t: u64, out: &mut JobResult) {
        self.ramp_end = t;
        self.end_ramp(out);
    }

    /// When the ramp ended (or ends).
    pub fn ramp_end(&self) -> u64 {
        self.ramp_end
    }

    /// The samples of the windows that are over, one per direction the
    /// job uses. fio 3.33 reports them even with disable_bw_measurement
    /// (its helper thread takes them), and so does iolab.
    #[cold]
    fn sample(
        &mut self,
        t1: u64,
        clock: &Clock,
        out: &mut JobResult,
        mix: &RwMix,
        mut logs: Option<&mut Logs>,
    ) {
        let ms = clock.ns_between(self.start, t1) / 1_000_000;
        if t1 >= self.bw.end && self.bw.end < self.cutoff {
            let kib = self.bw.close(t1, clock, 1024);
            for d in Dir::ALL.into_iter().filter(|d| mix.uses(*d)) {
                let d = d as usize;
                out.dirs[d].bw_samples.record(kib[d]);
                // In order, for the warning about a fast start.
                out.dirs[d].bw_series.push(kib[d]);
                if let Some(l) = logs.as_deref_mut() {
                    l.sample(false, ms, d, kib[d]);
                }
            }
        }
        if t1 >= self.iops.end && self.iops.end < self.cutoff {
            let ios = self.iops.close(t1, clock, 1);
            for d in Dir::ALL.into_iter().filter(|d| mix.uses(*d)) {
                let d = d as usize;
                out.dirs[d].iops_samples.record(ios[d]);
                if let Some(l) = logs.as_deref_mut() {
                    l.sample(true, ms, d, ios[d]);
                }
            }
        }
        self.set_due();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::value::RwMode;

    /// Samples taken by I/Os completing every 10 ms up to `end_ms`, with
    /// 100 ms windows and the deadline at `deadline_ms`. Times are tenths
    /// of the window in ticks, so that a window's end, its tenth I/O and
    /// the deadline are the same tick whatever the clock's calibration
    /// (ticks(1000 ms) may be a tick more than ten ticks(100 ms)).
    fn samples(end_ms: u64, deadline_ms: Option<u64>) -> (u64, u64) {
        let clock = Clock::get();
        let window = Duration::from_millis(100);
        let every = clock.ticks(window);
        let ms = |n: u64| n / 10 * every / 10;
        let mut m = Measure::new(
            clock,
            0,
            Duration::ZERO,
            Some(window),
            Some(window),
            IoThreads::Caller,
        );
        m.cut_off_at(deadline_ms.map(ms));
        let mix = RwMix::new(RwMode::Read, 100);
        let mut out = JobResult::default();
        for t in (10..=end_ms).step_by(10) {
            m.count(0, 4096);
            m.tick(ms(t), clock, &mut out, &mix, None);
        }
        let r = &out.dirs[0];
        (r.bw_samples.count(), r.iops_samples.count())
    }

    #[test]
    fn the_window_the_deadline_cuts_short_is_no_sample() {
        // I/Os up to the deadline at 1000 ms: the windows ending at 100
        // .. 900 ms are samples; the one ending at 1000 ms is not.
        assert_eq!(samples(1000, Some(1000)), (9, 9));
        // Without a deadline (a job bounded by size) every window that an
        // I/O completes after is a sample.
        assert_eq!(samples(1000, None), (10, 10));
    }

    /// `ms_at` gives `ns_between(start, t) / 10^6` for every tick, in
    /// order and out of it, around each millisecond's first tick, and
    /// again from the new start once a ramp has ended.
    #[test]
    fn ms_at_is_the_division_it_spares() {
        let clock = Clock::get();
        let begin = 1_000_000;
        let ramp = Duration::from_millis(3);
        let mut m = Measure::new(clock, begin, ramp, None, None, IoThreads::Caller);
        let exact = |m: &Measure, t: u64| clock.ns_between(m.start, t) / 1_000_000;
        let mut ticks: Vec<u64> = Vec::new();
        for ms in 0..40 {
            let edge = begin + clock.ticks(Duration::from_millis(ms));
            ticks.extend(edge.saturating_sub(3)..edge + 3);
            ticks.push(edge + clock.ticks(Duration::from_micros(500)));
        }
        for &t in &ticks {
            assert_eq!(m.ms_at(t, clock), exact(&m, t), "tick {t}");
        }
        // Backwards and jumping about: each is worked out again.
        for &t in ticks.iter().rev().step_by(7) {
            assert_eq!(m.ms_at(t, clock), exact(&m, t), "tick {t}");
        }
        assert_eq!(m.ms_at(begin - 5, clock), 0);
        // The ramp ends at the first I/O past it: times count from there.
        let mix = RwMix::new(RwMode::Read, 100);
        let end = begin + clock.ticks(ramp);
        assert!(m.ms_at(end + 5, clock) >= 3);
        assert!(m.tick(end + 5, clock, &mut JobResult::default(), &mix, None));
        assert_eq!(m.start, end);
        for &t in &ticks {
            let t = t + (end - begin);
            assert_eq!(m.ms_at(t, clock), exact(&m, t), "tick {t} after the ramp");
        }
    }
}
