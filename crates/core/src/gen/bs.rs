//! `BsGen`: the size of each I/O of one direction, drawn as fio 3.33 draws
//! it (`get_next_buflen`), from fio's block-size stream of that direction,
//! so that a job's sizes are fio's for the same seeds:
//!
//! - `bs=N`: always N, no draw;
//! - `bsrange=MIN-MAX`: MIN + MAX·u for a draw u in [0, 1), rounded down to
//!   a multiple of MIN (unless `bs_unaligned`) and capped at MAX, drawn
//!   again while it does not fit before the region's end;
//! - `bssplit=4k/10:64k/50:32k/40`: the entries in ascending order of their
//!   shares; a draw r takes the first entry whose running share p has
//!   r / p <= MAX / 100 and that fits before the region's end (the last one
//!   otherwise, drawn again if it does not fit).
//!
//! Sizes are `u32`, the most one I/O unit carries.

use iolab_spec::value::{BlockRange, SplitEntry};

use super::taus::Frand;
use super::GenError;

/// The block size generator of one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BsGen {
    kind: Kind,
    min: u32,
    max: u32,
    /// `bs_unaligned`: sizes are not rounded down to multiples of `min`.
    unaligned: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Fixed,
    /// `min + max * u`, rounded down to a multiple of `min` and capped at
    /// `max` (fio's formula, which favours `max`).
    Range,
    /// `(pct, bs)` in fio's order (ascending share, ties as written).
    Split(Box<[(u32, u32)]>),
}

fn size(bs: u64) -> Result<u32, GenError> {
    match bs {
        0 => Err(GenError::ZeroBlockSize),
        b => u32::try_from(b).map_err(|_| GenError::BlockSizeTooLarge(b)),
    }
}

/// Redraws of one size before the generator settles for its minimum (fio
/// redraws without end; a draw that fits comes long before this).
const MAX_REDRAWS: u32 = 1 << 20;

impl BsGen {
    /// Always `bs` bytes.
    pub fn fixed(bs: u64) -> Result<BsGen, GenError> {
        let bs = size(bs)?;
        Ok(BsGen {
            kind: Kind::Fixed,
            min: bs,
            max: bs,
            unaligned: false,
        })
    }

    /// `bsrange`: sizes from the minimum to the maximum, multiples of the
    /// minimum unless `unaligned` (`bs_unaligned`).
    pub fn range(range: BlockRange, unaligned: bool) -> Result<BsGen, GenError> {
        let BlockRange { min, max } = range;
        if min > max {
            return Err(GenError::ReversedRange { min, max });
        }
        let (lo, hi) = (size(min)?, size(max)?);
        Ok(BsGen {
            kind: if lo == hi { Kind::Fixed } else { Kind::Range },
            min: lo,
            max: hi,
            unaligned,
        })
    }

    /// `bssplit`: each size with its share (the spec's parser makes the
    /// shares fio's: missing ones share what is left of 100).
    pub fn split(entries: &[SplitEntry]) -> Result<BsGen, GenError> {
        let mut table = Vec::with_capacity(entries.len());
        for e in entries {
            table.push((e.pct, size(e.bs)?));
        }
        let min = table.iter().map(|&(_, bs)| bs).min();
        let max = table.iter().map(|&(_, bs)| bs).max();
        let (Some(min), Some(max)) = (min, max) else {
            return Err(GenError::EmptySplit);
        };
        if table.iter().all(|&(pct, _)| pct == 0) {
            return Err(GenError::EmptySplit);
        }
        // fio sorts the entries by share before drawing (a stable sort).
        table.sort_by_key(|&(pct, _)| pct);
        let kind = if min == max {
            Kind::Fixed
        } else {
            Kind::Split(table.into_boxed_slice())
        };
        Ok(BsGen {
            kind,
            min,
            max,
            unaligned: false,
        })
    }

    /// The size of the next I/O when `room` bytes are left before the end
    /// of the region at its offset, drawn as fio's `get_next_buflen` draws
    /// it: one draw, and again while the size does not fit. A fixed size
    /// is returned whatever the room; 0 when not even the smallest size
    /// fits.
    #[inline(always)]
    pub fn next(&mut self, rng: &mut Frand, room: u64) -> u32 {
        if self.min == self.max {
            return self.min;
        }
        self.drawn(rng, room)
    }

    /// `next` for a size that is not fixed.
    #[inline(never)]
    fn drawn(&mut self, rng: &mut Frand, room: u64) -> u32 {
        let (min, max) = (u64::from(self.min), u64::from(self.max));
        if room < min {
            return 0;
        }
        let rmax = rng.max();
        for _ in 0..MAX_REDRAWS {
            let r = rng.next_u64();
            let mut len = match &self.kind {
                Kind::Fixed => min,
                Kind::Range => min + (max as f64 * (r as f64 / (rmax as f64 + 1.0))) as u64,
                Kind::Split(table) => {
                    let mut len = 0;
                    let mut perc = 0u64;
                    for &(pct, bs) in table.iter() {
                        if pct == 0 {
                            continue;
                        }
                        len = u64::from(bs);
                        perc += u64::from(pct);
                        if r / perc <= rmax / 100 && len <= room {
                            break;
                        }
                    }
                    len
                }
            };
            if !self.unaligned {
                if min.is_power_of_two() {
                    len &= !(min - 1);
                } else {
                    len -= len % min;
                }
            }
            len = len.min(max);
            if len <= room {
                return len as u32;
            }
        }
        self.min
    }

    /// The one size of a fixed generator.
    #[inline(always)]
    pub fn one_size(&self) -> Option<u32> {
        (self.min == self.max).then_some(self.min)
    }

    /// The smallest size `next` returns.
    pub fn min(&self) -> u32 {
        self.min
    }

    #[cfg(test)]
    /// The largest size `next` returns.
    pub fn max(&self) -> u32 {
        self.max
    }

    #[cfg(test)]
    /// Whether every I/O has the same size.
    pub fn is_fixed(&self) -> bool {
        matches!(self.kind, Kind::Fixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn rng() -> Frand {
        Frand::new(1, false)
    }

    fn histogram(g: &mut BsGen, draws: u32, room: u64) -> BTreeMap<u32, u32> {
        let mut r = rng();
        let mut h = BTreeMap::new();
        for _ in 0..draws {
            *h.entry(g.next(&mut r, room)).or_insert(0) += 1;
        }
        h
    }

    #[test]
    fn fixed_size_draws_nothing() {
        let mut g = BsGen::fixed(4096).unwrap();
        assert!(g.is_fixed());
        let mut r = rng();
        let before = r.clone();
        assert_eq!(g.next(&mut r, 0), 4096);
        assert_eq!(r, before);
        assert_eq!(BsGen::fixed(0), Err(GenError::ZeroBlockSize));
        assert_eq!(
            BsGen::fixed(1 << 32),
            Err(GenError::BlockSizeTooLarge(1 << 32))
        );
    }

    #[test]
    fn range_gives_multiples_of_the_minimum_that_fit() {
        let mut g = BsGen::range(
            BlockRange {
                min: 1024,
                max: 4096,
            },
            false,
        )
        .unwrap();
        assert_eq!((g.min(), g.max()), (1024, 4096));
        let h = histogram(&mut g, 100_000, u64::MAX);
        assert_eq!(
            h.keys().copied().collect::<Vec<_>>(),
            vec![1024, 2048, 3072, 4096]
        );
        // fio's formula: min + max·u capped at max gives max most often.
        assert!(h[&4096] > h[&1024], "{h:?}");
        // Only sizes that fit the room.
        let h = histogram(&mut g, 10_000, 2048);
        assert_eq!(h.keys().copied().collect::<Vec<_>>(), vec![1024, 2048]);
        assert_eq!(g.next(&mut rng(), 1000), 0);
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
    fn split_gives_each_size_its_share_and_fits() {
        let e = |bs, pct| SplitEntry { bs, pct };
        let mut g = BsGen::split(&[e(4096, 10), e(65536, 50), e(32768, 40)]).unwrap();
        assert_eq!((g.min(), g.max()), (4096, 65536));
        let h = histogram(&mut g, 100_000, u64::MAX);
        let share = |bs| f64::from(h[&bs]) / 100_000.0;
        assert!((share(4096) - 0.10).abs() < 0.02, "{h:?}");
        assert!((share(65536) - 0.50).abs() < 0.02, "{h:?}");
        assert!((share(32768) - 0.40).abs() < 0.02, "{h:?}");
        let h = histogram(&mut g, 1000, 40_000);
        assert!(h.keys().all(|&bs| bs <= 32768), "{h:?}");
        assert!(BsGen::split(&[e(4096, 100), e(4096, 0)])
            .unwrap()
            .is_fixed());
        assert_eq!(BsGen::split(&[e(4096, 0)]), Err(GenError::EmptySplit));
        assert_eq!(BsGen::split(&[]), Err(GenError::EmptySplit));
        assert_eq!(BsGen::split(&[e(0, 100)]), Err(GenError::ZeroBlockSize));
    }
}
