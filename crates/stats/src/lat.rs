//! `LatStat`: one latency series (slat, clat, lat or sync) as fio reports
//! it: count, min, max, mean and stdev from [`Moments`], percentiles and
//! json+ bins from [`LatHist`]. And `LatBuckets`, fio's coarse latency
//! distribution (`latency_ns`, `latency_us`, `latency_ms`).

use serde::{Deserialize, Serialize};

use crate::{LatHist, Moments};

/// One latency series in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatStat {
    pub moments: Moments,
    pub hist: LatHist,
}

impl LatStat {
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.moments.record(ns);
        self.hist.record(ns);
    }

    /// Adds another series (group reporting): moments merged, histograms
    /// added.
    pub fn merge(&mut self, other: &LatStat) {
        self.moments.merge(&other.moments);
        self.hist.merge(&other.hist);
    }

    pub fn count(&self) -> u64 {
        self.moments.count()
    }
}

/// The bucket bounds of fio's latency distribution, each in its own unit:
/// `latency_ns` and `latency_us` use the first ten, `latency_ms` all twelve
/// (the last being ">=2000").
pub const LAT_BUCKET_BOUNDS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// Counts of I/Os by completion latency, in fio's buckets: a bucket counts
/// the I/Os below its bound and at or above the previous one (fio: "500=64%
/// means 64% of the I/Os took 250 to 499 us"). Latencies under 1 us go to
/// `ns`, under 1 ms to `us`, the rest to `ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatBuckets {
    /// Below 2, 4, ... 1000 nanoseconds.
    pub ns: [u64; 10],
    /// Below 2, 4, ... 1000 microseconds.
    pub us: [u64; 10],
    /// Below 2, 4, ... 2000 milliseconds, then 2000 and above.
    pub ms: [u64; 12],
}

impl LatBuckets {
    /// Counts one I/O of `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if ns < 1_000 {
            self.ns[BUCKET_OF[ns as usize] as usize] += 1;
        } else if ns < 1_000_000 {
            self.us[BUCKET_OF[(ns / 1_000) as usize] as usize] += 1;
        } else {
            let ms = ns / 1_000_000;
            let i = if ms < 2_000 {
                BUCKET_OF[ms as usize] as usize
            } else {
                11
            };
            self.ms[i] += 1;
        }
    }

    pub fn merge(&mut self, other: &LatBuckets) {
        for (a, b) in self.ns.iter_mut().zip(other.ns) {
            *a += b;
        }
        for (a, b) in self.us.iter_mut().zip(other.us) {
            *a += b;
        }
        for (a, b) in self.ms.iter_mut().zip(other.ms) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.ns.iter().chain(&self.us).chain(&self.ms).sum()
    }
}

/// For each v below 2000, the index of the first bound above v: one load
/// per I/O instead of a search of the bounds.
static BUCKET_OF: [u8; 2_000] = bucket_table();

const fn bucket_table() -> [u8; 2_000] {
    let mut t = [0u8; 2_000];
    let mut v = 0;
    while v < 2_000 {
        let mut i = 0;
        while v as u64 >= LAT_BUCKET_BOUNDS[i] {
            i += 1;
        }
        t[v] = i as u8;
        v += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_fio_bounds() {
        let mut b = LatBuckets::default();
        for ns in [
            1,
            2,
            3,
            999,
            1_000,
            1_999,
            2_000,
            999_999,
            1_000_000,
            1_999_999,
            2_000_000_000,
            2_500_000_000,
        ] {
            b.record(ns);
        }
        assert_eq!(b.ns[0], 1, "1 ns is below 2");
        assert_eq!(b.ns[1], 2, "2 and 3 ns are in [2, 4)");
        assert_eq!(b.ns[9], 1, "999 ns is in [750, 1000)");
        assert_eq!(b.us[0], 2, "1000 and 1999 ns are below 2 us");
        assert_eq!(b.us[1], 1, "2000 ns is in [2, 4) us");
        assert_eq!(b.us[9], 1, "999999 ns");
        assert_eq!(b.ms[0], 2, "1 ms and 1.999999 ms are below 2 ms");
        assert_eq!(b.ms[11], 2, "2 s and 2.5 s are >=2000 ms");
        assert_eq!(b.total(), 12);
        let mut c = b;
        c.merge(&b);
        assert_eq!(c.total(), 24);
    }

    #[test]
    fn lat_stat_merges_both_parts() {
        let mut a = LatStat::default();
        let mut b = LatStat::default();
        for v in [100, 200, 300] {
            a.record(v);
        }
        b.record(1000);
        a.merge(&b);
        assert_eq!(a.count(), 4);
        assert_eq!(a.hist.total(), 4);
        assert_eq!(a.moments.max(), Some(1000));
    }
}
