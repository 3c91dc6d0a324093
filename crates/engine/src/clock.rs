//! The clock the workers time I/O with: the CPU's time stamp counter where
//! it is invariant (constant and non-stop, as on every x86-64 server CPU of
//! the last decade), calibrated once against CLOCK_MONOTONIC; otherwise
//! CLOCK_MONOTONIC itself. Reading the TSC costs about a third of a vDSO
//! clock_gettime on this kind of machine, and a synchronous engine reads
//! the clock twice per I/O. fio's default clock source on Linux x86 is the
//! same counter.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A calibrated clock: `now()` in ticks, differences turned into
/// nanoseconds by a fixed-point multiply.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    tsc: bool,
    /// Nanoseconds per tick, times 2^32.
    mult: u64,
    base: Instant,
}

impl Clock {
    /// The process's clock, calibrated on first use (20 ms of sleep).
    pub fn get() -> &'static Clock {
        static CLOCK: OnceLock<Clock> = OnceLock::new();
        CLOCK.get_or_init(Clock::calibrate)
    }

    fn calibrate() -> Clock {
        let base = Instant::now();
        if !invariant_tsc() {
            return Clock {
                tsc: false,
                mult: 1 << 32,
                base,
            };
        }
        // The counter runs at a constant rate whether the thread runs or
        // sleeps, so the 20 ms between the two readings are slept, not
        // spun: they cost no CPU time.
        let (t0, c0) = paired_reading();
        std::thread::sleep(Duration::from_millis(20));
        let (t1, c1) = paired_reading();
        let ns = t1.duration_since(t0).as_nanos() as u64;
        let ticks = c1.wrapping_sub(c0);
        if ticks == 0 || ns == 0 {
            return Clock {
                tsc: false,
                mult: 1 << 32,
                base,
            };
        }
        Clock {
            tsc: true,
            mult: (((ns as u128) << 32) / ticks as u128) as u64,
            base,
        }
    }

    /// Whether the time stamp counter is in use.
    pub fn is_tsc(&self) -> bool {
        self.tsc
    }

    /// The current time in ticks.
    #[inline]
    pub fn now(&self) -> u64 {
        if self.tsc {
            read_tsc()
        } else {
            self.base.elapsed().as_nanos() as u64
        }
    }

    /// Nanoseconds between two readings (0 if the second is earlier).
    #[inline]
    pub fn ns_between(&self, earlier: u64, later: u64) -> u64 {
        let ticks = later.saturating_sub(earlier);
        ((ticks as u128 * self.mult as u128) >> 32) as u64
    }

    /// The number of ticks in a duration.
    pub fn ticks(&self, d: Duration) -> u64 {
        let ns = d.as_nanos().min(u64::MAX as u128);
        ((ns << 32) / self.mult.max(1) as u128).min(u64::MAX as u128) as u64
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64; it only reads a
    // counter.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    0
}

/// A reading of CLOCK_MONOTONIC and of the TSC taken together: the TSC
/// between two monotonic readings, paired with their midpoint. Of a few
/// tries, the one whose two monotonic readings are closest (a thread
/// preempted between them gives a wide bracket).
fn paired_reading() -> (Instant, u64) {
    let mut best: Option<(Duration, Instant, u64)> = None;
    for _ in 0..5 {
        let i0 = Instant::now();
        let c = read_tsc();
        let i1 = Instant::now();
        let gap = i1.duration_since(i0);
        if best.is_none_or(|(g, _, _)| gap < g) {
            best = Some((gap, i0 + gap / 2, c));
        }
    }
    let (_, at, c) = best.unwrap_or((Duration::ZERO, Instant::now(), read_tsc()));
    (at, c)
}

/// Whether the CPU says its TSC runs at a constant rate through frequency
/// changes and sleep states.
fn invariant_tsc() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_monotonic_clock() {
        let c = Clock::get();
        let i0 = Instant::now();
        let t0 = c.now();
        std::thread::sleep(Duration::from_millis(100));
        let t1 = c.now();
        let real = i0.elapsed().as_nanos() as f64;
        let ours = c.ns_between(t0, t1) as f64;
        assert!(
            (ours / real - 1.0).abs() < 0.01,
            "clock says {ours} ns, CLOCK_MONOTONIC {real} ns"
        );
    }

    #[test]
    fn ticks_and_nanoseconds_invert() {
        let c = Clock::get();
        let t = c.ticks(Duration::from_millis(500));
        let back = c.ns_between(0, t);
        assert!((back as i64 - 500_000_000).abs() < 1_000, "{back}");
        assert_eq!(c.ns_between(10, 5), 0);
    }
}
