//! `BsGen`: the size of each I/O of one direction, with fio's semantics
//! (HOWTO, "Block size"):
//!
//! - `bs=N`: always N;
//! - `bsrange=MIN-MAX`: "the issued I/O unit will always be a multiple of
//!   the minimum size, unless `blocksize_unaligned` is set": each size is
//!   drawn uniformly among MIN, 2·MIN, ... up to the largest multiple of MIN
//!   at or below MAX; with `bs_unaligned`, uniformly among all byte counts
//!   from MIN to MAX;
//! - `bssplit=4k/10:64k/50:32k/40`: each entry is drawn with its share of
//!   the percentages (entries of 0% never).
//!
//! Sizes are `u32`, the most one I/O unit carries.

use iolab_spec::value::{BlockRange, SplitEntry};

use super::rng::Rng;
use super::GenError;

/// The block size generator of one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BsGen {
    kind: Kind,
    min: u32,
    max: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Fixed,
    /// `min * k` for k uniform in `[1, count]`.
    Multiples {
        count: u64,
    },
    /// Any byte count in `[min, max]`.
    Bytes,
    /// `(upto, bs)`: `bs` when a draw below `total` is below `upto` (and
    /// not below the previous entry's `upto`).
    Split {
        table: Box<[(u32, u32)]>,
        total: u32,
    },
}

fn size(bs: u64) -> Result<u32, GenError> {
    match bs {
        0 => Err(GenError::ZeroBlockSize),
        b => u32::try_from(b).map_err(|_| GenError::BlockSizeTooLarge(b)),
    }
}

impl BsGen {
    /// Always `bs` bytes.
    pub fn fixed(bs: u64) -> Result<BsGen, GenError> {
        let bs = size(bs)?;
        Ok(BsGen {
            kind: Kind::Fixed,
            min: bs,
            max: bs,
        })
    }

    /// `bsrange`: multiples of the minimum up to the maximum, or any size
    /// in the range with `unaligned` (`bs_unaligned`).
    pub fn range(range: BlockRange, unaligned: bool) -> Result<BsGen, GenError> {
        let BlockRange { min, max } = range;
        if min > max {
            return Err(GenError::ReversedRange { min, max });
        }
        let (lo, hi) = (size(min)?, size(max)?);
        if unaligned {
            return Ok(BsGen {
                kind: if lo == hi { Kind::Fixed } else { Kind::Bytes },
                min: lo,
                max: hi,
            });
        }
        let count = u64::from(hi / lo);
        Ok(BsGen {
            kind: if count == 1 {
                Kind::Fixed
            } else {
                Kind::Multiples { count }
            },
            min: lo,
            max: lo * count as u32,
        })
    }

    /// `bssplit`: each size with its share. Shares need not add up to 100;
    /// each entry gets its percentage of their sum (the spec's parser makes
    /// the sum 100, as fio does).
    pub fn split(entries: &[SplitEntry]) -> Result<BsGen, GenError> {
        let mut table = Vec::with_capacity(entries.len());
        let mut total = 0u32;
        for e in entries {
            let bs = size(e.bs)?;
            if e.pct > 0 {
                total = total.saturating_add(e.pct);
                table.push((total, bs));
            }
        }
        let min = table.iter().map(|&(_, bs)| bs).min();
        let max = table.iter().map(|&(_, bs)| bs).max();
        let (Some(min), Some(max)) = (min, max) else {
            return Err(GenError::EmptySplit);
        };
        let kind = if min == max {
            Kind::Fixed
        } else {
            Kind::Split {
                table: table.into_boxed_slice(),
                total,
            }
        };
        Ok(BsGen { kind, min, max })
    }

    /// The size of the next I/O.
    #[inline(always)]
    pub fn next(&mut self, rng: &mut Rng) -> u32 {
        match &self.kind {
            Kind::Fixed => self.min,
            Kind::Multiples { count } => self.min * (1 + rng.below(*count) as u32),
            Kind::Bytes => self.min + rng.below(u64::from(self.max - self.min) + 1) as u32,
            Kind::Split { table, total } => {
                let v = rng.below(u64::from(*total)) as u32;
                let i = table.partition_point(|&(upto, _)| upto <= v);
                table[i.min(table.len() - 1)].1
            }
        }
    }

    /// The smallest size `next` returns.
    pub fn min(&self) -> u32 {
        self.min
    }

    /// The largest size `next` returns (for bsrange, the largest multiple
    /// of the minimum within the range).
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Whether every I/O has the same size.
    pub fn is_fixed(&self) -> bool {
        matches!(self.kind, Kind::Fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::{Rng, Stream};
    use iolab_stats::Dir;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn rng() -> Rng {
        Rng::for_job(1, 0, Stream::BlockSize(Dir::Read))
    }

    fn histogram(g: &mut BsGen, draws: u32) -> BTreeMap<u32, u32> {
        let mut r = rng();
        let mut h = BTreeMap::new();
        for _ in 0..draws {
            *h.entry(g.next(&mut r)).or_insert(0) += 1;
        }
        h
    }

    #[test]
    fn fixed_size() {
        let mut g = BsGen::fixed(4096).unwrap();
        assert!(g.is_fixed());
        assert_eq!((g.min(), g.max()), (4096, 4096));
        assert_eq!(
            histogram(&mut g, 100).into_iter().collect::<Vec<_>>(),
            vec![(4096, 100)]
        );
        assert_eq!(BsGen::fixed(0), Err(GenError::ZeroBlockSize));
        assert_eq!(
            BsGen::fixed(1 << 32),
            Err(GenError::BlockSizeTooLarge(1 << 32))
        );
        assert!(BsGen::fixed(u64::from(u32::MAX)).is_ok());
    }

    #[test]
    fn range_gives_multiples_of_the_minimum() {
        let mut g = BsGen::range(
            BlockRange {
                min: 1024,
                max: 4096,
            },
            false,
        )
        .unwrap();
        assert_eq!((g.min(), g.max()), (1024, 4096));
        let h = histogram(&mut g, 100_000);
        assert_eq!(
            h.keys().copied().collect::<Vec<_>>(),
            vec![1024, 2048, 3072, 4096]
        );
        for &c in h.values() {
            assert!((c as i64 - 25_000).abs() < 800, "{h:?}");
        }
        // A maximum that is not a multiple: the largest multiple below it.
        let mut g = BsGen::range(
            BlockRange {
                min: 4096,
                max: 10_000,
            },
            false,
        )
        .unwrap();
        assert_eq!(g.max(), 8192);
        let h = histogram(&mut g, 1000);
        assert_eq!(h.keys().copied().collect::<Vec<_>>(), vec![4096, 8192]);
        // A range narrower than twice the minimum is one size.
        let g = BsGen::range(
            BlockRange {
                min: 4096,
                max: 8191,
            },
            false,
        )
        .unwrap();
        assert!(g.is_fixed());
        assert_eq!(
            BsGen::range(
                BlockRange {
                    min: 8192,
                    max: 4096
                },
                false
            ),
            Err(GenError::ReversedRange {
                min: 8192,
                max: 4096
            })
        );
    }

    #[test]
    fn unaligned_range_gives_any_size() {
        let mut g = BsGen::range(
            BlockRange {
                min: 1000,
                max: 1009,
            },
            true,
        )
        .unwrap();
        let h = histogram(&mut g, 100_000);
        assert_eq!(
            h.keys().copied().collect::<Vec<_>>(),
            (1000..=1009).collect::<Vec<_>>()
        );
        for &c in h.values() {
            assert!((c as i64 - 10_000).abs() < 500, "{h:?}");
        }
        assert!(BsGen::range(BlockRange { min: 512, max: 512 }, true)
            .unwrap()
            .is_fixed());
    }

    #[test]
    fn split_gives_each_size_its_share() {
        let e = |bs, pct| SplitEntry { bs, pct };
        let mut g = BsGen::split(&[e(4096, 10), e(65536, 50), e(32768, 40)]).unwrap();
        assert_eq!((g.min(), g.max()), (4096, 65536));
        let h = histogram(&mut g, 100_000);
        let share = |bs| f64::from(h[&bs]) / 100_000.0;
        assert!((share(4096) - 0.10).abs() < 0.02, "{h:?}");
        assert!((share(65536) - 0.50).abs() < 0.02, "{h:?}");
        assert!((share(32768) - 0.40).abs() < 0.02, "{h:?}");
        // Entries of 0% never come out; shares are relative to their sum.
        let mut g = BsGen::split(&[e(512, 0), e(4096, 1), e(8192, 3)]).unwrap();
        assert_eq!(g.min(), 4096);
        let h = histogram(&mut g, 40_000);
        assert!(!h.contains_key(&512));
        assert!((f64::from(h[&8192]) / 40_000.0 - 0.75).abs() < 0.02);
        assert!(BsGen::split(&[e(4096, 100), e(8192, 0)])
            .unwrap()
            .is_fixed());
        assert_eq!(BsGen::split(&[e(4096, 0)]), Err(GenError::EmptySplit));
        assert_eq!(BsGen::split(&[]), Err(GenError::EmptySplit));
        assert_eq!(BsGen::split(&[e(0, 100)]), Err(GenError::ZeroBlockSize));
    }

    proptest! {
        #[test]
        fn range_sizes_are_multiples_within_range(
            min in 1u64..100_000, extra in 0u64..1_000_000, seed in any::<u64>(),
        ) {
            let max = min + extra;
            let mut g = BsGen::range(BlockRange { min, max }, false).unwrap();
            let mut r = Rng::from_seed(seed);
            for _ in 0..200 {
                let bs = u64::from(g.next(&mut r));
                prop_assert!(bs >= min && bs <= max);
                prop_assert_eq!(bs % min, 0);
                prop_assert!(bs <= u64::from(g.max()));
            }
        }
    }
}
