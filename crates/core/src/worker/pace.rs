//! Pacing of one job clone: rate limits (`rate`, `rate_iops`, with even or
//! Poisson gaps), think time after batches of I/Os (`thinktime`,
//! `thinktime_spin`, `thinktime_blocks`), and the minimum rates
//! (`rate_min`, `rate_iops_min`) checked once per `rate_cycle`. Each part
//! exists only when its options are on, so a job without them pays one
//! predictable branch per part and I/O. Times are nanoseconds since the
//! clone began; nothing here allocates, and the only system calls are the
//! sleeps the options ask for.

use std::time::{Duration, Instant};

use iolab_stats::{Dir, DirResult};

use crate::gen::Rng;
use crate::plan::PaceSpec;

/// fio lets a job settle this long before it checks minimum rates.
const MIN_RATE_SETTLE_NS: u64 = 2_000_000_000;

/// The rate limits of a clone. Like fio, the schedule of a direction is
/// absolute (its bytes so far over its rate), so a sleep that overshoots
/// is made up by the next I/Os going at once.
pub(crate) struct RateLimit {
    /// Bytes per second per direction; 0 is no limit.
    bps: [u64; 3],
    /// When each direction may issue next.
    next_ns: [u64; 3],
    /// Bytes issued per direction (the even schedule).
    bytes: [u64; 3],
    poisson: bool,
    rng: Rng,
    /// Reads and writes stand in for each other when one is ahead of its
    /// rate and the other is not (fio's rate_ddir), so each direction of a
    /// mixed job reaches its own rate.
    swap: bool,
}

impl RateLimit {
    /// The limits of `spec`, or None when no direction has one. `swap` is
    /// true when the job both reads and writes.
    pub fn new(spec: &PaceSpec, rng: Rng, swap: bool) -> Option<RateLimit> {
        if spec.limits() {
            granularity();
        }
        spec.limits().then_some(RateLimit {
            bps: spec.rate,
            next_ns: [0; 3],
            bytes: [0; 3],
            poisson: spec.poisson,
            rng,
            swap,
        })
    }

    /// The direction of the next I/O, given the mix's pick, once it may go:
    /// the pick if it is due; else the other of read and write if that one
    /// is due; else whichever is due first, after sleeping until then.
    /// None when the deadline comes before either is due.
    pub fn admit(&self, dir: Dir, now_ns: u64, deadline_ns: Option<u64>) -> Option<Dir> {
        let due = self.next_ns[dir as usize];
        if due <= now_ns {
            return Some(dir);
        }
        let (due, dir) = match self.other(dir) {
            Some(o) if self.next_ns[o as usize] <= now_ns => return Some(o),
            Some(o) if self.next_ns[o as usize] < due => (self.next_ns[o as usize], o),
            _ => (due, dir),
        };
        if let Some(end) = deadline_ns {
            if due >= end {
                sleep_ns(end.saturating_sub(now_ns));
                return None;
            }
        }
        sleep_ns(due - now_ns);
        Some(dir)
    }

    fn other(&self, dir: Dir) -> Option<Dir> {
        match (self.swap, dir) {
            (true, Dir::Read) => Some(Dir::Write),
            (true, Dir::Write) => Some(Dir::Read),
            _ => None,
        }
    }

    /// Books an I/O of `len` bytes issued in `dir`.
    #[inline]
    pub fn issued(&mut self, dir: Dir, len: u64) {
        let d = dir as usize;
        let bps = self.bps[d];
        if bps == 0 {
            return;
        }
        if self.poisson {
            // Exponential gaps with the even gap as their mean: arrivals of
            // a Poisson process at the same rate.
            let mean = len as f64 * 1e9 / bps as f64;
            let u = self.rng.unit_f64().max(f64::MIN_POSITIVE);
            self.next_ns[d] += (-u.ln() * mean) as u64;
        } else {
            self.bytes[d] += len;
            self.next_ns[d] = (self.bytes[d] as u128 * 1_000_000_000 / bps as u128) as u64;
        }
    }
}

/// Think time: a pause after every `thinktime_blocks` I/Os, spinning for
/// `thinktime_spin` of it and sleeping the rest, never past the deadline.
pub(crate) struct Think {
    total_ns: u64,
    spin_ns: u64,
    blocks: u32,
    since: u32,
}

impl Think {
    pub fn new(spec: &PaceSpec) -> Option<Think> {
        (!spec.thinktime.is_zero()).then(|| {
            // Measured before the job's first I/O, not amid it.
            granularity();
            Think {
                total_ns: spec.thinktime.as_nanos() as u64,
                spin_ns: spec.thinktime_spin.min(spec.thinktime).as_nanos() as u64,
                blocks: spec.thinktime_blocks.max(1),
                since: 0,
            }
        })
    }

    /// Counts an I/O and thinks when a batch is complete.
    #[inline]
    pub fn after_io(&mut self, now_ns: u64, deadline_ns: Option<u64>) {
        if let Some((spin, total)) = self.pause(now_ns, deadline_ns) {
            think(spin, total);
        }
    }

    /// Counts an I/O; when it completes a batch, how long to think (ns):
    /// spinning first, then in all, capped by the time left before the
    /// deadline.
    #[inline]
    fn pause(&mut self, now_ns: u64, deadline_ns: Option<u64>) -> Option<(u64, u64)> {
        self.since += 1;
        if self.since < self.blocks {
            return None;
        }
        self.since = 0;
        let left = deadline_ns.map_or(u64::MAX, |d| d.saturating_sub(now_ns));
        let total = self.total_ns.min(left);
        Some((self.spin_ns.min(total), total))
    }
}

/// Thinks for `total` ns, spinning the first `spin` of them.
fn think(spin: u64, total: u64) {
    let t = Instant::now();
    let spin_for = Duration::from_nanos(spin);
    while t.elapsed() < spin_for {
        std::hint::spin_loop();
    }
    sleep_ns(total - spin);
}

/// The minimum rates: after a settle period of 2 s (fio's), each direction
/// that has moved data is measured over windows of `rate_cycle`; a window
/// below the minimum fails the job, as fio's check_min_rate does.
pub(crate) struct MinRate {
    bytes_min: [u64; 3],
    iops_min: [u64; 3],
    cycle_ns: u64,
    /// When the settle period ends.
    settled_ns: u64,
    /// No direction can be due before this.
    next_ns: u64,
    /// Per direction, the start of the current window: time, bytes, I/Os.
    base: [Option<(u64, u64, u64)>; 3],
}

impl MinRate {
    pub fn new(spec: &PaceSpec) -> Option<MinRate> {
        spec.has_minimum().then(|| MinRate {
            bytes_min: spec.rate_min,
            iops_min: spec.rate_iops_min,
            cycle_ns: (spec.rate_cycle.as_nanos() as u64).max(1),
            settled_ns: MIN_RATE_SETTLE_NS,
            next_ns: MIN_RATE_SETTLE_NS,
            base: [None; 3],
        })
    }

    /// Starts over from `now_ns` (the statistics started afresh after
    /// ramp_time).
    pub fn restart(&mut self, now_ns: u64) {
        self.settled_ns = now_ns + MIN_RATE_SETTLE_NS;
        self.next_ns = self.settled_ns;
        self.base = [None; 3];
    }

    /// Checks the rates of the directions so far; the message says which
    /// fell short.
    #[inline]
    pub fn check(&mut self, now_ns: u64, dirs: &[DirResult; 3]) -> Result<(), String> {
        if now_ns < self.next_ns {
            return Ok(());
        }
        self.check_windows(now_ns, dirs)
    }

    #[cold]
    fn check_windows(&mut self, now_ns: u64, dirs: &[DirResult; 3]) -> Result<(), String> {
        let mut next = u64::MAX;
        for dir in Dir::ALL {
            let d = dir as usize;
            let (bytes, ios) = (dirs[d].io_bytes, dirs[d].total_ios);
            if (self.bytes_min[d] == 0 && self.iops_min[d] == 0) || bytes == 0 {
                continue;
            }
            if let Some((t, b, n)) = self.base[d] {
                let spent_ms = (now_ns - t) / 1_000_000;
                if now_ns - t < self.cycle_ns || spent_ms == 0 {
                    next = next.min(t + self.cycle_ns);
                    continue;
                }
                if self.bytes_min[d] > 0 {
                    let got = (bytes - b) * 1000 / spent_ms;
                    if got < self.bytes_min[d] {
                        return Err(format!(
                            "rate_min={}B/s not met for {}s, got {got}B/s",
                            self.bytes_min[d],
                            dir.key()
                        ));
                    }
                } else {
                    let got = (ios - n) * 1000 / spent_ms;
                    if got < self.iops_min[d] {
                        return Err(format!(
                            "rate_iops_min={} not met for {}s, got {got} IOPS",
                            self.iops_min[d],
                            dir.key()
                        ));
                    }
                }
            }
            self.base[d] = Some((now_ns, bytes, ios));
            next = next.min(now_ns + self.cycle_ns);
        }
        // Directions that have not moved data yet are looked at again soon.
        self.next_ns = next.min(now_ns + self.cycle_ns / 8);
        Ok(())
    }
}

/// Sleeps `ns` as fio's usec_sleep does: asks the kernel for the time
/// less what a sleep overshoots on this machine (`granularity`), sleeps
/// again for what is left if it woke early, and spins through what is
/// shorter than the overshoot. A plain sleep of 1 ms on a busy machine
/// lasts several: fio's think time and rate gaps do not.
fn sleep_ns(ns: u64) {
    if ns == 0 {
        return;
    }
    let gran = granularity();
    let start = Instant::now();
    let want = Duration::from_nanos(ns);
    loop {
        let left = want.saturating_sub(start.elapsed());
        if left.is_zero() {
            return;
        }
        if left < gran {
            while start.elapsed() < want {
                std::hint::spin_loop();
            }
            return;
        }
        std::thread::sleep(left - gran);
    }
}

/// How long the shortest sleep lasts here (fio's ns_granularity), measured
/// once per process: the shortest of ten sleeps of 1 us. fio takes the
/// longest, which on a busy machine is a wait for a CPU of some
/// milliseconds rather than the timer's overshoot, and turns every short
/// think time into a spin that the scheduler then punishes.
fn granularity() -> Duration {
    static GRANULARITY: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *GRANULARITY.get_or_init(|| {
        (0..10)
            .map(|_| {
                let t = Instant::now();
                std::thread::sleep(Duration::from_micros(1));
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> PaceSpec {
        PaceSpec {
            rate_cycle: Duration::from_millis(1000),
            thinktime_blocks: 1,
            ..Default::default()
        }
    }

    #[test]
    fn nothing_is_built_for_options_that_are_off() {
        let s = spec();
        assert!(RateLimit::new(&s, Rng::from_seed(1), false).is_none());
        assert!(Think::new(&s).is_none());
        assert!(MinRate::new(&s).is_none());
    }

    #[test]
    fn the_even_schedule_is_bytes_over_rate() {
        let mut s = spec();
        s.rate = [1 << 20, 0, 0];
        let mut r = RateLimit::new(&s, Rng::from_seed(1), true).unwrap();
        for _ in 0..256 {
            r.issued(Dir::Read, 4096);
        }
        assert_eq!(r.next_ns[0], 1_000_000_000, "1 MiB at 1 MiB/s");
        // Reads are ahead; writes have no limit, so they go instead.
        assert_eq!(r.admit(Dir::Read, 10, None), Some(Dir::Write));
        assert_eq!(r.admit(Dir::Read, 1_000_000_000, None), Some(Dir::Read));
        // A deadline before the next read ends the job.
        let alone = RateLimit { swap: false, ..r };
        assert_eq!(alone.admit(Dir::Read, 999_999_000, Some(999_999_500)), None);
    }

    #[test]
    fn poisson_gaps_keep_the_mean_rate() {
        let mut s = spec();
        s.rate = [4096 * 1000, 0, 0];
        s.poisson = true;
        let mut r = RateLimit::new(&s, Rng::from_seed(7), false).unwrap();
        for _ in 0..100_000 {
            r.issued(Dir::Read, 4096);
        }
        let secs = r.next_ns[0] as f64 / 1e9;
        assert!(
            (secs - 100.0).abs() < 2.0,
            "{secs} s for 100k I/Os at 1000/s"
        );
    }

    #[test]
    fn a_window_below_the_minimum_fails_after_the_settle_period() {
        let mut s = spec();
        s.rate_min = [1 << 20, 0, 0];
        let mut m = MinRate::new(&s).unwrap();
        let mut dirs: [DirResult; 3] = Default::default();
        dirs[0].io_bytes = 4096;
        dirs[0].total_ios = 1;
        assert_eq!(m.check(1_000_000_000, &dirs), Ok(()), "settling");
        dirs[0].io_bytes = 3 << 20;
        assert_eq!(m.check(2_000_000_000, &dirs), Ok(()), "window starts");
        dirs[0].io_bytes += 2 << 20;
        assert_eq!(m.check(2_500_000_000, &dirs), Ok(()), "window not over");
        assert_eq!(m.check(3_000_000_000, &dirs), Ok(()), "2 MiB/s is enough");
        dirs[0].io_bytes += 512 << 10;
        let e = m.check(4_000_000_000, &dirs).unwrap_err();
        assert_eq!(e, "rate_min=1048576B/s not met for reads, got 524288B/s");
    }

    #[test]
    fn think_time_spins_first_then_sleeps() {
        let mut s = spec();
        s.thinktime = Duration::from_millis(100);
        s.thinktime_spin = Duration::from_millis(50);
        let mut t = Think::new(&s).unwrap();
        assert_eq!(t.pause(0, None), Some((50_000_000, 100_000_000)));
        // The deadline cuts the spin too.
        assert_eq!(t.pause(0, Some(30_000_000)), Some((30_000_000, 30_000_000)));
    }

    #[test]
    fn think_time_is_capped_by_the_deadline() {
        let mut s = spec();
        s.thinktime = Duration::from_secs(10);
        s.thinktime_blocks = 2;
        let mut t = Think::new(&s).unwrap();
        assert_eq!(t.pause(0, Some(1_000_000_000)), None, "first of two");
        assert_eq!(
            t.pause(999_000_000, Some(1_000_000_000)),
            Some((0, 1_000_000)),
            "1 ms left"
        );
        assert_eq!(t.pause(999_500_000, None), None, "first of the next two");
        assert_eq!(
            t.pause(999_600_000, None),
            Some((0, 10_000_000_000)),
            "no deadline"
        );
    }
}
