//! fio's non-uniform offset generators, draw for draw: zipf, pareto and
//! normal (fio's `lib/zipf.c` and `lib/gauss.c` semantics) over `nranges`
//! ranges of a file, each with its own 32-bit generator seeded from the
//! file's name, and the zone table of `zoned` / `zoned_abs`.
//!
//! fio scatters the ranks of zipf, pareto and normal draws over the file by
//! multiplying them with the 64-bit golden ratio and adding a random
//! rotation, modulo the number of ranges; two ranks may land on one range.
//! iolab does the same, so that the offsets are fio's. For the choice of a
//! file (`file_service_type=zipf`, `pareto`, `normal`) fio turns that
//! hashing off: the ranks keep their order, only rotated
//! (`FioSkew::unhashed`).

use iolab_spec::value::Distribution;

use super::taus::{hash_u64, Frand};

/// zipf sums at most this many terms of its zeta series, as fio does.
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's `FRAND32_MAX` as a float.
const FRAND32_MAX: f64 = 4_294_967_295.0;

/// A per-file skewed generator of range numbers in `[0, nranges)`.
#[derive(Clone, Debug)]
pub struct FioSkew {
    rand: Frand,
    nranges: u64,
    rand_off: u64,
    kind: SkewKind,
    /// Ranks scattered by `hash_u64` (fio's default), or kept in order.
    hash: bool,
}

#[derive(Clone, Debug)]
enum SkewKind {
    Zipf { theta: f64, zeta2: f64, zetan: f64 },
    Pareto { pow: f64 },
    Gauss { stddev: u32 },
}

impl FioSkew {
    /// The generator of `dist` (zipf, pareto or normal; None for the
    /// others) over `nranges` ranges, seeded with `seed` (fio: the hash of
    /// the file's name times the thread number).
    pub fn new(dist: &Distribution, nranges: u64, seed: u32) -> Option<FioSkew> {
        let nranges = nranges.max(1);
        let mut rand = Frand::new(u64::from(seed), false);
        let (kind, center) = match dist {
            Distribution::Zipf { theta, center } => {
                let theta = *theta;
                let zeta2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
                let mut zetan = 0.0f64;
                for i in 0..nranges.min(ZIPF_MAX_GEN) {
                    zetan += (1.0 / (i + 1) as f64).powf(theta);
                }
                (
                    SkewKind::Zipf {
                        theta,
                        zeta2,
                        zetan,
                    },
                    *center,
                )
            }
            Distribution::Pareto { h, center } => (
                SkewKind::Pareto {
                    pow: h.ln() / (1.0 - h).ln(),
                },
                *center,
            ),
            Distribution::Normal { dev, center } => {
                let mut stddev = 0u32;
                if *dev != 0.0 {
                    stddev = ((nranges as f64 * dev) / 100.0).ceil() as u32;
                    if u64::from(stddev) > nranges / 2 {
                        stddev = (nranges / 2) as u32;
                    }
                }
                // fio's normal generator takes no rotation from its stream.
                // Its rotation is an `unsigned int`: a center below 0.5
                // wraps through 32 bits (x86-64 converts the negative
                // double through a 64-bit integer and keeps the low half),
                // which over ranges that are not a power of two is not the
                // 64-bit wrap.
                let rand_off = match center {
                    Some(c) => u64::from((nranges as f64 * (c - 0.5)) as i64 as u32),
                    None => 0,
                };
                return Some(FioSkew {
                    rand,
                    nranges,
                    rand_off,
                    kind: SkewKind::Gauss { stddev },
                    hash: true,
                });
            }
            _ => return None,
        };
        let mut rand_off = rand.next_u64();
        if let Some(c) = center {
            rand_off = (nranges as f64 * c) as u64;
        }
        Some(FioSkew {
            rand,
            nranges,
            rand_off,
            kind,
            hash: true,
        })
    }

    /// `new` with the hashing of ranks off, as fio's file choice makes
    /// its generator (`zipf_disable_hash`, `gauss_disable_hash`): rank r
    /// is range `(r + rotation) % nranges`.
    pub fn unhashed(dist: &Distribution, nranges: u64, seed: u32) -> Option<FioSkew> {
        let mut s = FioSkew::new(dist, nranges, seed)?;
        s.hash = false;
        Some(s)
    }

    /// The next range number.
    pub fn sample(&mut self) -> u64 {
        let n = self.nranges;
        let v = match self.kind {
            SkewKind::Zipf {
                theta,
                zeta2,
                zetan,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let rand_uni = self.rand.next_u64() as f64 / FRAND32_MAX;
                let rand_z = rand_uni * zetan;
                let val = if rand_z < 1.0 {
                    1
                } else if rand_z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * rand_uni - eta + 1.0).powf(alpha)) as u64
                };
                val.wrapping_sub(1)
            }
            SkewKind::Pareto { pow } => {
                let rand = self.rand.next_u64() as f64 / FRAND32_MAX;
                ((n - 1) as f64 * rand.powf(pow)) as u64
            }
            SkewKind::Gauss { stddev } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum = sum.wrapping_add(self.rand.next_u64() % (n + 1));
                }
                sum = sum.div_ceil(12);
                if stddev != 0 {
                    let r = self.rand.next_u64() as f64;
                    let vr = (f64::from(stddev) * (r / (FRAND32_MAX + 1.0))) as i32;
                    let mut dev = vr.wrapping_sub((stddev / 2) as i32);
                    while (dev as i64 as u64).wrapping_add(sum) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as i64 as u64);
                }
                sum
            }
        };
        let v = if self.hash { hash_u64(v) } else { v };
        v.wrapping_add(self.rand_off) % n
    }
}

/// One of the 100 entries of fio's zone table: a draw v from 1 to 100
/// uses entry v - 1, whose zone runs from `prev` to `end` (percent of the
/// region for `zoned`, bytes for `zoned_abs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneIndex {
    pub prev: u64,
    pub end: u64,
}

/// fio's zone table for `zoned` (percentages) or `zoned_abs` (bytes);
/// None for the other distributions. Entries past the access shares'
/// sum (below 100) stay empty, as in fio.
pub fn zone_table(dist: &Distribution) -> Option<(Box<[ZoneIndex]>, bool)> {
    let (zones, absolute): (Vec<(u64, u64)>, bool) = match dist {
        Distribution::Zoned(z) => (
            z.iter().map(|&(a, s)| (a as u64, s as u64)).collect(),
            false,
        ),
        Distribution::ZonedAbs(z) => (z.iter().map(|&(a, s)| (a as u64, s)).collect(), true),
        _ => return None,
    };
    let mut table = vec![ZoneIndex { prev: 0, end: 0 }; 100];
    let (mut aprev, mut sprev) = (0u64, 0u64);
    for (access, size) in zones {
        for j in aprev..(aprev + access).min(100) {
            table[j as usize] = ZoneIndex {
                prev: sprev,
                end: sprev + size,
            };
        }
        aprev += access;
        sprev += size;
    }
    Some((table.into_boxed_slice(), absolute))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skewed_draws_stay_in_range_and_repeat_with_the_seed() {
        for dist in [
            Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
            Distribution::Pareto {
                h: 0.2,
                center: None,
            },
            Distribution::Normal {
                dev: 10.0,
                center: None,
            },
            Distribution::Normal {
                dev: 0.0,
                center: None,
            },
        ] {
            let mut a = FioSkew::new(&dist, 1000, 42).unwrap();
            let mut b = FioSkew::new(&dist, 1000, 42).unwrap();
            for _ in 0..10_000 {
                let x = a.sample();
                assert!(x < 1000);
                assert_eq!(x, b.sample());
            }
        }
        assert!(FioSkew::new(&Distribution::Random, 10, 1).is_none());
    }

    #[test]
    fn unhashed_draws_are_the_hashed_ones_ranks_before_the_hash() {
        for dist in [
            Distribution::Zipf {
                theta: 1.1,
                center: None,
            },
            Distribution::Pareto {
                h: 0.2,
                center: None,
            },
            Distribution::Normal {
                dev: 5.0,
                center: None,
            },
        ] {
            // fio's file choice: nrfiles << 10 ranges.
            let n = 5 << 10;
            let mut hashed = FioSkew::new(&dist, n, 0x1234_5678).unwrap();
            let mut plain = FioSkew::unhashed(&dist, n, 0x1234_5678).unwrap();
            assert_eq!(hashed.rand_off, plain.rand_off);
            for _ in 0..500 {
                let u = plain.sample();
                assert!(u < n);
                // rank + rotation, reduced as fio reduces it (in 64 bits).
                let rank = (0..n)
                    .find(|r| r.wrapping_add(plain.rand_off) % n == u)
                    .unwrap();
                assert_eq!(
                    hashed.sample(),
                    hash_u64(rank).wrapping_add(hashed.rand_off) % n,
                    "{dist:?}"
                );
            }
        }
        // Unhashed zipf keeps rank 0 the most drawn, at the rotation.
        let dist = Distribution::Zipf {
            theta: 1.2,
            center: Some(0.0),
        };
        let mut z = FioSkew::unhashed(&dist, 4 << 10, 9).unwrap();
        let mut counts = vec![0u32; 4];
        for _ in 0..10_000 {
            counts[(z.sample() >> 10) as usize] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[3], "{counts:?}");
    }

    #[test]
    fn zipf_favours_few_ranges() {
        let dist = Distribution::Zipf {
            theta: 1.2,
            center: None,
        };
        let mut z = FioSkew::new(&dist, 1000, 7).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.sample() as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = counts[..10].iter().sum();
        assert!(top > 40_000, "{top}");
    }

    #[test]
    fn zone_table_maps_access_shares_to_ranges() {
        let (t, abs) = zone_table(&Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])).unwrap();
        assert!(!abs);
        assert_eq!(t[0], ZoneIndex { prev: 0, end: 10 });
        assert_eq!(t[59], ZoneIndex { prev: 0, end: 10 });
        assert_eq!(t[60], ZoneIndex { prev: 10, end: 100 });
        assert_eq!(t[99], ZoneIndex { prev: 10, end: 100 });
    }
}
