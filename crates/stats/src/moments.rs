//! `Moments`: running count, min, max, mean and variance of integer samples
//! (latencies in nanoseconds), updated per sample on the hot path and merged
//! across workers at the end. The arithmetic follows fio's `io_stat`
//! exactly, so iolab's min/max/mean/stddev equal fio's for the same samples:
//! Welford's update as in fio's `add_stat_sample`, Chan's pairwise merge as
//! in fio's `__sum_stat`, and the sample standard deviation (n - 1) of fio's
//! `calc_lat`.

use serde::{Deserialize, Serialize};

/// `v as f64` for `v` below 2^63 (every latency in nanoseconds and every
/// count), through the signed conversion: one instruction, where the
/// unsigned one takes six and two constants from memory. Larger values
/// count as 2^63 - 1.
#[inline(always)]
fn to_f64(v: u64) -> f64 {
    v.min(i64::MAX as u64) as i64 as f64
}

/// Running statistics of a stream of integer samples.
///
/// `Copy` and 40 bytes: a worker keeps one per latency kind and direction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Moments {
    count: u64,
    min: u64,
    max: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (fio's `S`).
    m2: f64,
}

impl Moments {
    /// No samples yet.
    pub const fn new() -> Self {
        Self {
            count: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// Moments with the given parts, as another program reported them (fio
    /// prints count, min, max, mean and stddev: `sum_sq_dev` is then
    /// `stddev^2 * (count - 1)`). With `count == 0` this is `new()` whatever
    /// the other parts say.
    pub fn from_parts(count: u64, min: u64, max: u64, mean: f64, sum_sq_dev: f64) -> Self {
        if count == 0 {
            return Self::new();
        }
        Self {
            count,
            min,
            max,
            mean,
            m2: sum_sq_dev,
        }
    }

    /// Add one sample (fio's `add_stat_sample`).
    #[inline(always)]
    pub fn record(&mut self, value: u64) {
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        let val = to_f64(value);
        let delta = val - self.mean;
        // fio skips the update when delta is zero; the result is the same
        // number either way, and skipping keeps the operations identical.
        if delta != 0.0 {
            self.mean += delta / (to_f64(self.count) + 1.0);
            self.m2 += delta * (val - self.mean);
        }
        self.count += 1;
    }

    /// Fold `other` into `self` (fio's `sum_stat` for latencies, which
    /// `group_reporting` applies thread by thread with `self` as the running
    /// group total). Chan et al.'s parallel formula:
    /// `mean = (mean_a * n_a + mean_b * n_b) / (n_a + n_b)` and
    /// `S = S_a + S_b + delta^2 * n_a * n_b / (n_a + n_b)`, with the
    /// operations in fio's order so the results match it bit for bit (the
    /// order checked in the fio 3.33 binary). fio multiplies `n_a * n_b` in
    /// u64, which would wrap past 2^64; here the product cannot wrap.
    pub fn merge(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (na, nb) = (self.count, other.count);
        let n = (na + nb) as f64;
        let delta = other.mean - self.mean;
        let mean = (other.mean * nb as f64 + self.mean * na as f64) / n;
        let cross = (u128::from(na) * u128::from(nb)) as f64;
        let m2 = other.m2 + self.m2 + delta * delta * cross / n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count = na + nb;
        self.mean = mean;
        self.m2 = m2;
    }

    /// Adds another series field by field (min to min, max to max, mean to
    /// mean, counts and squared deviations added), as fio sums bandwidth
    /// and IOPS samples under group_reporting: the group's figures are the
    /// totals of its jobs, not one population.
    pub fn add_totals(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        self.min += other.min;
        self.max += other.max;
        self.count += other.count;
        self.mean += other.mean;
        self.m2 += other.m2;
    }

    /// The number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether no sample has been recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The smallest sample, if any. fio prints 0 when there is none.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest sample, if any. fio prints 0 when there is none.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The mean; 0.0 with no samples, as fio prints it.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The sum of squared deviations from the mean (fio's `S`).
    pub fn sum_sq_dev(&self) -> f64 {
        self.m2
    }

    /// The sample variance `S / (n - 1)`; 0.0 with fewer than two samples.
    pub fn variance(&self) -> f64 {
        if self.count > 1 {
            self.m2 / (self.count as f64 - 1.0)
        } else {
            0.0
        }
    }

    /// The sample standard deviation as fio's `calc_lat` computes it:
    /// `sqrt(S / (n - 1))`, and 0.0 when n is 0 or 1.
    pub fn stdev(&self) -> f64 {
        if self.count > 1 {
            (self.m2 / (self.count as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }
}

impl Default for Moments {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversion_is_the_unsigned_one_below_2_63() {
        let near = |p: u32| [(1u64 << p) - 1, 1 << p, (1 << p) + 1];
        for v in [0, 1, 999, u64::from(u32::MAX)]
            .into_iter()
            .chain(near(53))
            .chain(near(62))
            .chain([i64::MAX as u64])
        {
            assert_eq!(to_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
        }
        assert_eq!(to_f64(u64::MAX), i64::MAX as f64);
    }

    #[test]
    fn totals_add_field_by_field() {
        let mut a = Moments::new();
        for v in [10, 20, 30] {
            a.record(v);
        }
        let mut b = Moments::new();
        for v in [100, 300] {
            b.record(v);
        }
        let mut t = Moments::new();
        t.add_totals(&a);
        t.add_totals(&b);
        assert_eq!((t.min(), t.max(), t.count()), (Some(110), Some(330), 5));
        assert!((t.mean() - 220.0).abs() < 1e-9);
    }
    use proptest::prelude::*;

    fn of(xs: &[u64]) -> Moments {
        let mut m = Moments::new();
        for &x in xs {
            m.record(x);
        }
        m
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn empty_and_single() {
        let m = Moments::new();
        assert_eq!(m.count(), 0);
        assert_eq!(m.min(), None);
        assert_eq!(m.max(), None);
        assert_eq!(m.mean(), 0.0);
        assert_eq!(m.stdev(), 0.0);

        let m = of(&[1234]);
        assert_eq!(m.count(), 1);
        assert_eq!(m.min(), Some(1234));
        assert_eq!(m.max(), Some(1234));
        assert_eq!(m.mean(), 1234.0);
        assert_eq!(m.variance(), 0.0);
        assert_eq!(m.stdev(), 0.0);
    }

    #[test]
    fn known_set() {
        // Population stdev 2; sample variance 32 / 7.
        let m = of(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!(m.count(), 8);
        assert_eq!(m.min(), Some(2));
        assert_eq!(m.max(), Some(9));
        assert_eq!(m.mean(), 5.0);
        assert_eq!(m.sum_sq_dev(), 32.0);
        assert_eq!(m.variance(), 32.0 / 7.0);
        assert_eq!(m.stdev(), (32.0f64 / 7.0).sqrt());
        assert_eq!(m.stdev(), 2.138089935299395);
    }

    #[test]
    fn stable_with_a_large_offset() {
        // A naive sum of squares loses these entirely in f64.
        let base = 1u64 << 40;
        let m = of(&[base + 4, base + 7, base + 13, base + 16]);
        assert_eq!(m.mean(), (base + 10) as f64);
        assert_eq!(m.variance(), 30.0);
    }

    #[test]
    fn from_parts_round_trips() {
        let m = of(&[2, 4, 4, 4, 5, 5, 7, 9]);
        let p = Moments::from_parts(8, 2, 9, 5.0, 32.0);
        assert_eq!(p, m);
        assert_eq!(Moments::from_parts(0, 3, 4, 1.0, 2.0), Moments::new());
        // fio's printed stddev back to the sum of squares.
        let sd = 2.138089935299395f64;
        let q = Moments::from_parts(8, 2, 9, 5.0, sd * sd * 7.0);
        assert!(close(q.stdev(), sd));
    }

    #[test]
    fn merge_with_empty() {
        let a = of(&[3, 5, 8]);
        let mut b = Moments::new();
        b.merge(&a);
        assert_eq!(b, a);
        let mut c = a;
        c.merge(&Moments::new());
        assert_eq!(c, a);
    }

    #[test]
    fn merge_known_halves() {
        let mut a = of(&[2, 4, 4, 4]);
        a.merge(&of(&[5, 5, 7, 9]));
        assert_eq!(a.count(), 8);
        assert_eq!(a.min(), Some(2));
        assert_eq!(a.max(), Some(9));
        assert_eq!(a.mean(), 5.0);
        assert_eq!(a.sum_sq_dev(), 32.0);
    }

    proptest! {
        #[test]
        fn merge_equals_sequential(
            xs in proptest::collection::vec(0u64..10_000_000_000, 0..300),
            ys in proptest::collection::vec(0u64..10_000_000_000, 0..300),
        ) {
            let mut merged = of(&xs);
            merged.merge(&of(&ys));
            let all: Vec<u64> = xs.iter().chain(&ys).copied().collect();
            let seq = of(&all);
            prop_assert_eq!(merged.count(), seq.count());
            prop_assert_eq!(merged.min(), seq.min());
            prop_assert_eq!(merged.max(), seq.max());
            prop_assert!(close(merged.mean(), seq.mean()), "{} vs {}", merged.mean(), seq.mean());
            prop_assert!(close(merged.stdev(), seq.stdev()), "{} vs {}", merged.stdev(), seq.stdev());
        }

        #[test]
        fn matches_two_pass(xs in proptest::collection::vec(0u64..1_000_000_000, 2..300)) {
            let m = of(&xs);
            let n = xs.len() as f64;
            let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
            let ss: f64 = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum();
            prop_assert!(close(m.mean(), mean));
            prop_assert!(close(m.stdev(), (ss / (n - 1.0)).sqrt()));
        }
    }
}
