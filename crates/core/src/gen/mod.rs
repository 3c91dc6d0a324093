//! Workload generators: for each I/O of a job clone, which direction it goes
//! (`mix`), how big it is (`bs`) and where it lands (`offset`), all driven by
//! seeded pseudo-random streams (`rng`). The plan builds them once from plain
//! parameters (numbers and `iolab-spec` value types, never a `JobSpec`);
//! after that, every `next` is pure arithmetic on state the generator already
//! owns: no allocation, lock or system call per I/O.
//!
//! The streams that shape the I/O (directions, sizes, offsets) are fio's
//! own (`taus`: its Tausworthe generators and per-purpose seeds), so that a
//! job issues the same I/O as under fio 3.33 for the same seeds; `fiodist`
//! holds fio's zipf, pareto and normal generators and its zone table.
//! `perm` (a full-period permutation, for `random_generator=lfsr`) and
//! `dist` (iolab's own skewed samplers, for random runs and mixes of
//! random and sequential offsets) are the other building blocks of
//! `offset`.

pub mod bs;
pub mod dist;
pub mod fiodist;
pub mod lfsr;
pub mod mix;
pub mod offset;
pub mod perm;
pub mod rng;
pub mod taus;

pub use bs::BsGen;
pub use mix::RwMix;
pub use offset::{FioOffsets, OffsetGen, OffsetRand, Pattern, Region};
pub use rng::{Rng, Seeds, Stream};
pub use taus::{FioSeeds, Frand, Purpose};

use std::fmt;

/// Parameters a generator cannot work with. The plan turns these into a
/// job error that names the options involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    /// An offset granularity (block size or blockalign) of zero.
    ZeroBlock,
    /// The region holds no whole block.
    RegionTooSmall { len: u64, block: u64 },
    /// `start + len` does not fit in 64 bits.
    RegionOverflow { start: u64, len: u64 },
    /// A block size of zero.
    ZeroBlockSize,
    /// A block size above 4 GiB - 1, the most one I/O can transfer.
    BlockSizeTooLarge(u64),
    /// A `bsrange` whose minimum is above its maximum.
    ReversedRange { min: u64, max: u64 },
    /// A `bssplit` with no entry of a non-zero share.
    EmptySplit,
    /// The map of touched blocks (`OffsetGen::cover_once`) could not be
    /// allocated.
    MapTooLarge { bytes: u64 },
    /// fio's shift register (`random_generator=lfsr`) over `n` blocks
    /// cannot start from `seed` (its all-ones state).
    LfsrSeed { seed: u64, n: u64 },
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::ZeroBlock => write!(f, "the offset granularity (block size) is zero"),
            GenError::RegionTooSmall { len, block } => write!(
                f,
                "the I/O region of {len} bytes is smaller than one block of {block} bytes"
            ),
            GenError::RegionOverflow { start, len } => write!(
                f,
                "the I/O region at offset {start} with {len} bytes ends beyond 2^64 bytes"
            ),
            GenError::ZeroBlockSize => write!(f, "a block size of zero"),
            GenError::BlockSizeTooLarge(bs) => write!(
                f,
                "a block size of {bs} bytes is above the largest single I/O ({} bytes)",
                u32::MAX
            ),
            GenError::ReversedRange { min, max } => write!(
                f,
                "the block size range {min}-{max} has its minimum above its maximum"
            ),
            GenError::EmptySplit => write!(f, "the block size split has no entry with a share"),
            GenError::LfsrSeed { seed, n } => write!(
                f,
                "random_generator=lfsr: the shift register over {n} blocks cannot start from seed {seed:#x} (as in fio, which fails such a job); another randseed avoids it"
            ),
            GenError::MapTooLarge { bytes } => write!(
                f,
                "the random map of the region ({bytes} bytes, one bit per block) could not be allocated; norandommap=1 needs none"
            ),
        }
    }
}

impl std::error::Error for GenError {}
