//! What a clone measures and from when: `ramp_time` (counts are kept
//! through it and forgotten when it ends, latencies and samples start
//! after it, as fio's do), and the bandwidth and IOPS samples of each
//! averaging window, taken when an I/O completes after the window's end
//! (the next window starts then, so a 1 s job has one 500 ms sample and a
//! 2 s job three, as fio 3.33 reports).
//! Per I/O this is a comparison with the clock reading the worker already
//! has.

use std::time::Duration;

use iolab_engine::clock::Clock;
use iolab_engine::host::{thread_cpu_usage, CpuUsage};
use iolab_stats::{DepthDist, Dir, JobResult};

use crate::gen::RwMix;

/// Counters of the current bandwidth window.
#[derive(Default, Clone, Copy)]
struct Window {
    bytes: [u64; 3],
    ios: [u64; 3],
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
    win: Window,
    win_start: u64,
    next_sample: u64,
    sample_every: u64,
    /// Bytes and I/Os per direction done in the ramp, which the job's
    /// counts forget and its progress does not.
    pub ramped: [(u64, u64); 3],
}

impl Measure {
    /// Measuring a clone that starts at `begin` (clock ticks).
    pub fn new(clock: &Clock, begin: u64, ramp: Duration, sample_every: Duration) -> Measure {
        let every = clock.ticks(sample_every);
        Measure {
            ramping: !ramp.is_zero(),
            ramp_end: begin + clock.ticks(ramp),
            start: begin,
            cpu0: thread_cpu_usage(),
            win: Window::default(),
            win_start: begin,
            next_sample: begin + every,
            sample_every: every,
            ramped: [(0, 0); 3],
        }
    }

    /// Counts a completed I/O in the current window.
    #[inline]
    pub fn count(&mut self, d: usize, bytes: u64) {
        self.win.bytes[d] += bytes;
        self.win.ios[d] += 1;
    }

    /// After an I/O that completed at `t1`: ends the ramp when it is over
    /// and returns true then; otherwise takes the samples of a window that
    /// is over.
    #[inline]
    pub fn tick(&mut self, t1: u64, clock: &Clock, out: &mut JobResult, mix: &RwMix) -> bool {
        if self.ramping {
            if t1 >= self.ramp_end {
                self.end_ramp(out);
                return true;
            }
        } else if t1 >= self.next_sample {
            self.sample(t1, clock, out, mix);
        }
        false
    }

    /// Statistics start at the end of the ramp; what it did is forgotten
    /// (the bytes it moved still count towards the job's size, as in fio).
    /// The I/O that crossed the end belongs to the ramp.
    #[cold]
    fn end_ramp(&mut self, out: &mut JobResult) {
        self.ramping = false;
        for (d, r) in out.dirs.iter().enumerate() {
            self.ramped[d] = (r.io_bytes, r.total_ios);
        }
        out.dirs = Default::default();
        out.sync = Default::default();
        out.lat_buckets = Default::default();
        out.depth = DepthDist::default();
        out.issued = [0; 3];
        self.start = self.ramp_end;
        self.cpu0 = thread_cpu_usage();
        self.win = Window::default();
        self.win_start = self.ramp_end;
        self.next_sample = self.ramp_end + self.sample_every;
    }

    /// When the ramp ended (or ends).
    pub fn ramp_end(&self) -> u64 {
        self.ramp_end
    }

    /// One bandwidth and IOPS sample per direction the job uses. fio 3.33
    /// reports them even with disable_bw_measurement (its helper thread
    /// takes them), and so does iolab.
    #[cold]
    fn sample(&mut self, t1: u64, clock: &Clock, out: &mut JobResult, mix: &RwMix) {
        let span = clock.ns_between(self.win_start, t1).max(1) as u128;
        for dir in Dir::ALL {
            if mix.uses(dir) {
                let i = dir as usize;
                let r = &mut out.dirs[i];
                let bw = (self.win.bytes[i] as u128 * 1_000_000_000 / span / 1024) as u64;
                r.bw_samples.record(bw);
                r.bw_series.push(bw);
                r.iops_samples
                    .record((self.win.ios[i] as u128 * 1_000_000_000 / span) as u64);
            }
        }
        self.win = Window::default();
        self.win_start = t1;
        self.next_sample = t1 + self.sample_every;
    }
}
