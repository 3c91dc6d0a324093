//! `OffsetGen`: where each I/O of a job clone lands in one region of a file
//! (`offset`/`size` of the job, one file's share), with fio's semantics:
//!
//! - sequential (`rw=read`, `write`, `trim`, `rw`, `trimwrite`): each I/O
//!   starts where the last ended, plus the gap of `rw=write:4k`; when the
//!   next I/O no longer fits, a new pass starts at the beginning;
//!   `rw=read:-8k` goes backwards: each I/O starts 8k before the last one
//!   ended, from the region's end again when that is before its start;
//! - random (`randread`, ...): by default each block of the region is
//!   visited exactly once per pass, in a new order each pass (a keyed
//!   permutation in O(1) memory in place of fio's random map);
//!   `norandommap` draws plain uniform blocks; `random_distribution` draws
//!   skewed blocks (zipf, pareto, normal, zoned; see `dist`), repeats
//!   allowed, as fio turns its map off for them;
//! - `rw=randread:N`: a new random offset only every N I/Os, sequential in
//!   between (fio's default `rw_sequencer=sequential`);
//! - `percentage_random=P`: P% of the offsets are random, the others
//!   continue sequentially from the last I/O.
//!
//! Offsets are multiples of the block granularity (blockalign, or the
//! smallest block size) from the region's start, and the region is rounded
//! down to whole blocks, as fio does. The size of each I/O may differ
//! (`bsrange`, `bssplit`): `next(len)` always returns an offset with
//! `offset + len` inside the region. A random block too close to the end
//! for `len` is moved back to the last block where `len` fits.
//!
//! `fio` switches a random generator to fio 3.33's own offsets: a block
//! drawn uniformly from fio's offset stream (or the zone's blocks, or a
//! zipf, pareto or normal range), and with the random map on, when that
//! block is taken, the next free one after it, the I/O then cut to the
//! free blocks that follow; `draw` then takes each I/O's size after its
//! offset, as fio does, so that offsets and sizes are fio's for the same
//! seeds.
//!
//! With the random map on and I/Os that may span several blocks, the
//! generator keeps fio's map of the blocks a pass has touched (one bit per
//! block; set up with fio's streams, or by `cover_once` in the unit
//! tests): `next_fit` then starts each I/O at an untouched block and
//! shortens it to the untouched blocks that follow, so that a pass covers
//! each byte of the region exactly once, as fio's random map does.

use iolab_spec::value::{Distribution, RwSpec};

use super::bs::BsGen;
use super::dist::Skewed;
use super::fiodist::{zone_table, FioSkew, ZoneIndex};
use super::lfsr::Lfsr;
use super::perm::Permutation;
use super::rng::Rng;
use super::taus::Frand;
use super::GenError;

/// The bytes a generator works in: `[start, start + len)`, in blocks of
/// `block` bytes (the offset granularity: `blockalign` when given, else the
/// smallest block size of the direction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    pub block: u64,
}

/// How offsets follow each other.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Each I/O after the last, `gap` bytes apart (`rw=write:GAP`).
    Sequential { gap: u64 },
    /// Each I/O `step` bytes back from where the last one ended
    /// (`rw=read:-STEP`), from the region's end again when that would be
    /// before its start, as fio goes backwards.
    Backward { step: u64 },
    Random {
        /// `random_distribution`; anything but `Random` turns the
        /// permutation off (repeats allowed), as in fio.
        distribution: Distribution,
        /// Plain uniform blocks, repeats allowed. fio also turns its random
        /// map off when `blockalign` is given; the plan passes true then.
        norandommap: bool,
        /// I/Os per random offset (`rw=randread:N`), at least 1.
        run: u64,
        /// `percentage_random`, 0 to 100: 0 is sequential.
        percentage_random: u32,
    },
}

impl Pattern {
    /// fio's reading of `rw=MODE[:N]`: for a sequential mode N is a gap in
    /// bytes, for a random mode the number of I/Os per random offset. The
    /// other arguments matter for random modes only.
    pub fn from_rw(
        rw: RwSpec,
        distribution: Distribution,
        norandommap: bool,
        percentage_random: u32,
    ) -> Pattern {
        if rw.mode.is_random() {
            Pattern::Random {
                distribution,
                norandommap,
                run: rw.modifier.unwrap_or(1).max(1) as u64,
                percentage_random,
            }
        } else {
            match rw.modifier.unwrap_or(0) {
                n if n < 0 => Pattern::Backward {
                    step: n.unsigned_abs(),
                },
                n => Pattern::Sequential { gap: n as u64 },
            }
        }
    }
}

/// The offset generator of one job clone in one region.
#[derive(Clone, Debug)]
pub struct OffsetGen {
    start: u64,
    /// The region's length rounded down to whole blocks.
    len: u64,
    block: u64,
    blocks: u64,
    mode: Mode,
    /// Keys and draws of the random source.
    rng: Rng,
    /// The `percentage_random` coin, apart so that changing the percentage
    /// keeps the random offsets the same.
    coin: Rng,
    /// Where a sequential I/O would start next, relative to `start`.
    cursor: u64,
    /// I/Os left in the current random run.
    run_left: u64,
    passes: u64,
    /// I/Os in this pass, for the modes whose pass is a count of I/Os.
    ios: u64,
    /// The blocks this pass has touched, when `cover_once` asked for them.
    touched: Option<Touched>,
    /// fio's offsets, when `fio` turned them on.
    fio: Option<FioSource>,
    /// fio found no next offset at the last draw (`ended`).
    ended: bool,
    /// With `stop_on_full`: a random draw found the random map full,
    /// where fio's run of the job ends (`exhausted`).
    stop_on_full: bool,
    exhausted: bool,
    /// A sequential pass ended with the last I/O (fio's direction is at
    /// the region's end).
    at_end: bool,
    /// A sequential generator with a gap whose end of the region ends
    /// fio's run of the job, in every loop (`set_ends_runs`).
    ends_runs: bool,
    /// The file's size, where a sequential gap wraps (`set_file_size`);
    /// without it, the region's end, to the region's start.
    file_size: Option<u64>,
}

/// The random streams of a clone that fio's offsets draw from: its offset
/// stream (`random_state`), its 32-bit zone stream (`zone_state`) and its
/// `percentage_random` coins (`seq_rand_state`, one per direction, all
/// three from one seed as in fio), shared by the clone's files, and the
/// count of I/Os to the next random one of `rw=randread:N`
/// (`ddir_seq_nr`, one count for the clone).
#[derive(Clone, Debug)]
pub struct OffsetRand {
    pub offset: Frand,
    pub zone: Frand,
    pub coin: [Frand; 3],
    pub seq_left: u64,
}

impl OffsetRand {
    /// The streams from their generators; the first I/O is a random one.
    pub fn new(offset: Frand, zone: Frand, coin: Frand) -> OffsetRand {
        OffsetRand {
            offset,
            zone,
            coin: [coin.clone(), coin.clone(), coin],
            seq_left: 1,
        }
    }

    /// fio's choice between a random offset and the next sequential one
    /// for direction `dir`: with `rw=randread:N` (`run` = N) only every
    /// N-th I/O of the clone may be random, and then is with the odds of
    /// `percentage_random` (`pct`, 0 to 100), a coin drawn only below 100.
    fn next_is_random(&mut self, run: u64, pct: u32, dir: usize) -> bool {
        if run > 1 {
            self.seq_left = self.seq_left.saturating_sub(1);
            if self.seq_left != 0 {
                return false;
            }
            self.seq_left = run;
        }
        pct >= 100 || self.coin[dir].between(1, 100) <= u64::from(pct)
    }
}

/// The next I/O size of `bs` for `room` bytes left (its smallest when the
/// generator has none that fits).
#[inline(always)]
fn size_within(bs: &mut BsGen, bs_rng: &mut Frand, room: u64) -> u32 {
    match bs.next(bs_rng, room) {
        0 => bs.min(),
        n => n,
    }
}

/// fio's uniform block `lastb * fraction`, for `lastb` below 2^63: the
/// product is below it, where truncating through i64 gives what the u64
/// conversion gives in fewer instructions.
#[inline(always)]
fn scale_block(lastb: f64, fraction: f64) -> u64 {
    (lastb * fraction) as i64 as u64
}

/// What `OffsetGen::fio` needs to draw fio's offsets in one file.
#[derive(Clone, Debug)]
pub struct FioOffsets<'a> {
    pub distribution: &'a Distribution,
    pub norandommap: bool,
    /// fio's `min_bs` of the direction: with a larger size than the
    /// offset granularity, the last blocks cannot start an I/O.
    pub min_bs: u64,
    /// The unit of the zipf, pareto and normal ranges (the smaller of the
    /// read and write minimum block sizes).
    pub range_size: u64,
    /// The seed of this file's zipf, pareto or normal generator.
    pub skew_seed: u32,
    /// `percentage_random` of each direction (read, write, trim).
    pub percentage_random: [u32; 3],
    /// With `random_generator=lfsr`: the seed of fio's shift register
    /// (the clone's offset seed), which then gives the uniform blocks.
    pub lfsr_seed: Option<u64>,
    /// Per direction (read, write, trim): fio's `ba` (the direction's
    /// `blockalign`, its smallest block size unless given), the unit of
    /// its random blocks, and its `min_bs`, the unit in which its I/Os
    /// mark the random map. None when they are the generator's block for
    /// every direction the job uses.
    pub units: Option<[(u64, u64); 3]>,
}

#[derive(Clone, Debug)]
struct FioSource {
    kind: FioKind,
    /// fio's `last_block`: the blocks a uniform draw spans.
    lastb: u64,
    /// I/Os per random offset (`rw=randread:N`).
    run: u64,
    /// `lastb` as f64, where the draws are fio's plain uniform ones: no
    /// sequential I/Os between them (`run` 1, `percentage_random` 100),
    /// one unit for every direction, and `lastb` below 2^63.
    plain: Option<f64>,
    /// `percentage_random` of each direction, 0 to 100.
    pct: [u32; 3],
    /// fio's `last_pos`: where the last I/O of each direction ended,
    /// relative to the region, for the sequential I/Os between random
    /// ones.
    last: [u64; 3],
    /// Per direction, when the directions' units differ: fio's
    /// `last_block`, `ba` and `min_bs` of the direction.
    units: Option<[DirUnits; 3]>,
}

/// A direction's own units, when they differ from another's (`bs=4k,8k`):
/// fio draws its random block over `lastb` blocks of `ba` bytes, checks
/// the one random map at that block number, and marks the map in `min_bs`
/// units from the I/O's offset, so that one map serves both directions in
/// different units.
#[derive(Clone, Copy, Debug)]
struct DirUnits {
    lastb: u64,
    ba: u64,
    min_bs: u64,
}

#[derive(Clone, Debug)]
enum FioKind {
    Uniform,
    Zoned {
        table: Box<[ZoneIndex]>,
        absolute: bool,
    },
    Skew(FioSkew),
    /// `random_generator=lfsr` and the seed it restarts from.
    Lfsr {
        lfsr: Lfsr,
        seed: u64,
    },
}

/// One bit per block of the region: set once an I/O of this pass covered
/// the block.
#[derive(Clone, Debug)]
struct Touched {
    words: Vec<u64>,
    /// Blocks not yet touched in this pass.
    left: u64,
}

impl Touched {
    /// A map of `blocks` untouched blocks.
    fn new(blocks: u64) -> Result<Touched, GenError> {
        let too_large = || GenError::MapTooLarge {
            bytes: touched_map_bytes(blocks),
        };
        let n = usize::try_from(blocks.div_ceil(64)).map_err(|_| too_large())?;
        let mut words = Vec::new();
        words.try_reserve_exact(n).map_err(|_| too_large())?;
        words.resize(n, 0);
        let mut t = Touched { words, left: 0 };
        t.clear(blocks);
        Ok(t)
    }

    #[inline]
    fn get(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    #[inline]
    fn set(&mut self, b: u64) {
        self.words[(b / 64) as usize] |= 1 << (b % 64);
        self.left -= 1;
    }

    /// The first untouched block at or after `b`, else the first one from
    /// the region's start; None when every block is touched.
    #[inline(always)]
    fn next_free(&self, b: u64) -> Option<u64> {
        let from = (b / 64) as usize;
        let here = self.words[from] | ((1u64 << (b % 64)) - 1);
        if here != u64::MAX {
            return Some(from as u64 * 64 + u64::from(here.trailing_ones()));
        }
        self.next_free_word(from)
    }

    /// fio's block for block `b` drawn (below `blocks`): `b` when it is
    /// free, else the next free one after it, from the start past the
    /// last; None when every block is taken.
    #[inline(always)]
    fn free_from(&self, b: u64, blocks: u64) -> Option<u64> {
        if !self.get(b) {
            return Some(b);
        }
        self.next_free(if b + 1 >= blocks { 0 } else { b + 1 })
    }

    /// `next_free` past word `from`, which is full.
    #[inline(never)]
    fn next_free_word(&self, from: usize) -> Option<u64> {
        let after = self.words[from + 1..].iter().position(|w| *w != u64::MAX);
        let (i, w) = match after {
            Some(i) => (from + 1 + i, self.words[from + 1 + i]),
            None => {
                let i = self.words.iter().position(|w| *w != u64::MAX)?;
                (i, self.words[i])
            }
        };
        Some(i as u64 * 64 + u64::from(w.trailing_ones()))
    }

    /// Untouches every block; the bits past the last block stay set, so
    /// that no search finds them.
    fn clear(&mut self, blocks: u64) {
        self.words.iter_mut().for_each(|w| *w = 0);
        if let (Some(last), tail @ 1..) = (self.words.last_mut(), blocks % 64) {
            *last = !((1u64 << tail) - 1);
        }
        self.left = blocks;
    }
}

/// The bytes of the map `cover_once` keeps for a region of `blocks`
/// blocks: one bit per block.
pub fn touched_map_bytes(blocks: u64) -> u64 {
    blocks.div_ceil(64).saturating_mul(8)
}

#[derive(Clone, Debug)]
enum Mode {
    Sequential {
        gap: u64,
    },
    Backward {
        step: u64,
    },
    Random {
        source: Source,
        run: u64,
        percentage_random: u32,
    },
}

#[derive(Clone, Debug)]
enum Source {
    /// Each run start once per pass: a permutation of the region's runs
    /// (units of `run` blocks; single blocks when `run` is 1).
    Map(Permutation),
    /// Anything that may repeat: uniform or skewed blocks.
    Draw(Skewed),
}

impl OffsetGen {
    /// A generator for `region` following `pattern`, drawing from `rng`
    /// (normally `Rng::for_job(seed, clone, Stream::Offset)`).
    pub fn new(region: Region, pattern: &Pattern, rng: Rng) -> Result<OffsetGen, GenError> {
        let Region { start, len, block } = region;
        if block == 0 {
            return Err(GenError::ZeroBlock);
        }
        if start.checked_add(len).is_none() {
            return Err(GenError::RegionOverflow { start, len });
        }
        let blocks = len / block;
        if blocks == 0 {
            return Err(GenError::RegionTooSmall { len, block });
        }
        let coin = rng.substream(0);
        let mut source_rng = rng.substream(1);
        let mode = match pattern {
            Pattern::Sequential { gap } => Mode::Sequential { gap: *gap },
            Pattern::Backward { step } => Mode::Backward { step: *step },
            Pattern::Random {
                percentage_random: 0,
                ..
            } => Mode::Sequential { gap: 0 },
            Pattern::Random {
                distribution,
                norandommap,
                run,
                percentage_random,
            } => {
                let run = (*run).max(1);
                let source = match distribution {
                    Distribution::Random if !norandommap => {
                        Source::Map(Permutation::new(blocks.div_ceil(run), &mut source_rng))
                    }
                    d => Source::Draw(Skewed::new(d, blocks, block, &mut source_rng)),
                };
                Mode::Random {
                    source,
                    run,
                    percentage_random: (*percentage_random).min(100),
                }
            }
        };
        Ok(OffsetGen {
            start,
            len: blocks * block,
            block,
            blocks,
            mode,
            rng: source_rng,
            coin,
            cursor: 0,
            run_left: 0,
            passes: 0,
            ios: 0,
            touched: None,
            fio: None,
            ended: false,
            stop_on_full: false,
            exhausted: false,
            at_end: false,
            ends_runs: false,
            file_size: None,
        })
    }

    /// Draws this random generator's offsets as fio 3.33 does (see the
    /// module's text), with fio's random map of touched blocks unless
    /// `norandommap`, `random_generator=lfsr` or a distribution other than
    /// uniform turns it off; `rw=randread:N` and `percentage_random` then
    /// place their sequential I/Os as fio does. Nothing changes for
    /// sequential patterns. Fails, allocating nothing, when the map's
    /// memory cannot be had, or fio's shift register cannot start from
    /// the seed.
    pub fn fio(&mut self, o: &FioOffsets) -> Result<(), GenError> {
        let Mode::Random { run, .. } = self.mode else {
            return Ok(());
        };
        let lastb = (self.len - o.min_bs.saturating_sub(self.block).min(self.len)) / self.block;
        let (kind, mapped) = match zone_table(o.distribution) {
            // fio 3.33 keeps no random map for the zoned distributions:
            // their blocks may repeat.
            Some((table, absolute)) => (FioKind::Zoned { table, absolute }, false),
            None => {
                let range = o.range_size.max(1);
                let nranges = self.len.div_ceil(range);
                match (
                    FioSkew::new(o.distribution, nranges, o.skew_seed),
                    o.lfsr_seed,
                ) {
                    (Some(s), _) => (FioKind::Skew(s), false),
                    (None, Some(seed)) => {
                        let n = self.len / o.min_bs.max(1);
                        let lfsr = Lfsr::new(n, seed).ok_or(GenError::LfsrSeed { seed, n })?;
                        (FioKind::Lfsr { lfsr, seed }, false)
                    }
                    (None, None) => (FioKind::Uniform, true),
                }
            }
        };
        if mapped && !o.norandommap && self.touched.is_none() {
            self.touched = Some(Touched::new(self.blocks)?);
        } else if !mapped || o.norandommap {
            self.touched = None;
        }
        let len = self.len;
        let units = o.units.map(|u| {
            u.map(|(ba, min_bs)| {
                let ba = ba.max(1);
                DirUnits {
                    lastb: (len - min_bs.saturating_sub(ba).min(len)) / ba,
                    ba,
                    min_bs: min_bs.max(1),
                }
            })
        });
        let lastb = lastb.max(1);
        let pct = o.percentage_random.map(|p| p.min(100));
        let plain = (matches!(kind, FioKind::Uniform)
            && run <= 1
            && pct.iter().all(|p| *p >= 100)
            && units.is_none()
            && lastb <= i64::MAX as u64)
            .then_some(lastb as f64);
        self.fio = Some(FioSource {
            kind,
            lastb,
            run: run.max(1),
            plain,
            pct,
            last: [0; 3],
            units,
        });
        Ok(())
    }

    /// Whether fio would have found no next I/O at the last draw (with
    /// directions of different units: a block past the region, or an I/O
    /// past its end), which ends the job; the draw's I/O is not to be
    /// issued then.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Whether fio would find this file done at the end of a loop, so
    /// that its next loop starts afresh (the map cleared, the positions
    /// back at the start, the streams seeded again): a random map that
    /// is full, a sequential pass at the region's end, and any other
    /// generator iolab does not follow past a loop. A random job without
    /// a map (`norandommap`, a distribution) or whose map is not full
    /// (`percentage_random`), and a sequential one that stopped before
    /// the end (`io_size`), are not done: fio goes on with the same
    /// streams, map and positions, as one run of `size` times `loops`
    /// bytes.
    pub fn fio_done(&self) -> bool {
        match (&self.mode, &self.fio) {
            // A pass that ended starts the next at once: at the start.
            (Mode::Sequential { .. }, _) => self.at_end,
            (Mode::Random { .. }, Some(f)) => match (&f.kind, &self.touched) {
                (FioKind::Lfsr { .. }, _) => true,
                (_, Some(t)) => t.left == 0,
                (_, None) => false,
            },
            _ => true,
        }
    }

    /// Within a loop that went on from the last (see `fio_done`): a random
    /// draw that finds the map full, or a sequential one at the region's
    /// end, ends fio's run there, instead of clearing the map and drawing
    /// again or starting a new pass (`exhausted`).
    pub fn set_stop_on_full(&mut self, on: bool) {
        self.stop_on_full = on;
    }

    /// Whether a full map ends the run (`set_stop_on_full`).
    pub fn stops_on_full(&self) -> bool {
        self.stop_on_full
    }

    /// For a sequential pattern with a gap (`rw=read:8k`) in a job that is
    /// not time_based: the region's end is fio's file done in every loop,
    /// not only in one that went on from the last. fio's loop ends there
    /// (its file is done as soon as its position reaches the file's end,
    /// or the next I/O would not fit), short of `size` bytes, where a job
    /// without a gap has moved exactly `size`; the draw after it is
    /// `exhausted`.
    /// With `at_end` the region's end ends the run without a gap too
    /// (a direction of `rw=rw` over several files).
    pub fn set_ends_runs(&mut self, on: bool, at_end: bool) {
        self.ends_runs = on && matches!(self.mode, Mode::Sequential { gap } if gap > 0 || at_end);
    }

    /// The size of the region's file, at least the region's end: a
    /// sequential position a gap moves to at or past it wraps (as fio
    /// compares it), and one between the region's end and it is the end
    /// of the pass.
    pub fn set_file_size(&mut self, size: u64) {
        self.file_size = Some(size.max(self.start.saturating_add(self.len)));
    }

    /// Whether the region's end ends fio's run (see `set_ends_runs`).
    pub fn ends_runs(&self) -> bool {
        self.ends_runs
    }

    /// The last draw found the map full with `stop_on_full` on: its I/O is
    /// not to be issued; fio starts a new run of the job there.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// The offset and size of the next I/O, the size drawn by `bs` from
    /// `bs_rng` after the offset, to fit before the region's end at it, as
    /// fio draws them; with fio's offsets (`fio`), the offset comes from
    /// `rand` and the map of touched blocks cuts the I/O to the free
    /// blocks it starts.
    /// `dir` is the I/O's direction (0 read, 1 write, 2 trim).
    #[inline(always)]
    pub fn draw(
        &mut self,
        bs: &mut BsGen,
        bs_rng: &mut Frand,
        rand: &mut OffsetRand,
        dir: usize,
    ) -> (u64, u32) {
        if let Some(f) = &self.fio {
            if f.units.is_some() {
                return self.draw_fio_units(bs, bs_rng, rand, dir);
            }
            if let (Some(lastb), Some(len), Some(_)) = (f.plain, bs.one_size(), &self.touched) {
                if u64::from(len) <= self.block && !self.exhausted {
                    return self.draw_fio_block(rand, dir.min(2), lastb, len);
                }
            }
            return self.draw_fio(bs, bs_rng, rand, dir);
        }
        if (self.stop_on_full || self.ends_runs)
            && matches!(self.mode, Mode::Sequential { .. })
            && self.at_end
        {
            // A loop that went on from the last reached the region's end:
            // fio's file is done there, which starts its next run.
            self.exhausted = true;
            return (self.start, bs.min());
        }
        let room = match self.mode {
            Mode::Sequential { .. } if self.cursor + u64::from(bs.min()) <= self.len => {
                self.len - self.cursor
            }
            _ => self.len,
        };
        let len = size_within(bs, bs_rng, room);
        self.next_fit(len)
    }

    #[inline(always)]
    fn draw_fio(
        &mut self,
        bs: &mut BsGen,
        bs_rng: &mut Frand,
        rand: &mut OffsetRand,
        dir: usize,
    ) -> (u64, u32) {
        let dir = dir.min(2);
        // fio's choice between a random offset and the next sequential
        // one: every N-th I/O of the clone may be random (`randread:N`),
        // and then is with the odds of `percentage_random`; a sequential
        // one continues where the direction's last I/O ended, or is
        // random when that is the region's end. Sequential I/Os neither
        // consult nor mark the random map.
        let (run, pct, pos) = match &self.fio {
            Some(f) => (f.run, f.pct[dir], f.last[dir]),
            None => (1, 100, 0),
        };
        let random = rand.next_is_random(run, pct, dir);
        let last = self.blocks - 1;
        // A random I/O's block, kept so that marking the map need not
        // divide its offset by the block size again.
        let mut block = 0;
        let mut off = if !random && pos < self.len {
            pos
        } else {
            block = self.fio_block(rand).min(last);
            block * self.block
        };
        if self.exhausted {
            return (self.start, bs.min());
        }
        let room = self.len - off;
        let mut len = size_within(bs, bs_rng, room);
        if u64::from(len) > room {
            // A fixed size larger than the blocks left: moved back to fit.
            block = self.len.saturating_sub(u64::from(len)) / self.block;
            off = block * self.block;
        }
        if random && self.touched.is_some() {
            len = self.mark_fio_blocks(block, len, self.block);
        } else {
            self.ios += 1;
            if self.ios == self.blocks {
                self.ios = 0;
                self.passes += 1;
            }
        }
        self.fio_issued(dir, off, len)
    }

    /// `draw_fio` for the usual random job (`FioSource::plain`) with one
    /// fixed size of at most a block, in the fewest instructions: the
    /// block drawn, or when it is taken the next free one, is marked and
    /// taken at once; a full map goes the general way from there. The
    /// same offsets as `draw_fio` (a test draws both side by side).
    #[inline(always)]
    fn draw_fio_block(
        &mut self,
        rand: &mut OffsetRand,
        dir: usize,
        lastb: f64,
        len: u32,
    ) -> (u64, u32) {
        let b = scale_block(lastb, rand.offset.fraction());
        if let Some(t) = self.touched.as_mut() {
            if b < self.blocks {
                if let Some(block) = t.free_from(b, self.blocks) {
                    t.set(block);
                    if t.left == 0 {
                        self.passes += 1;
                    }
                    return self.fio_issued(dir, block * self.block, len);
                }
            }
        }
        self.draw_fio_block_full(rand, dir, b, len)
    }

    /// `draw_fio_block` when the map is full (or the block drawn past
    /// it): the rest of fio's draw from the block drawn.
    #[inline(never)]
    fn draw_fio_block_full(
        &mut self,
        rand: &mut OffsetRand,
        dir: usize,
        b: u64,
        len: u32,
    ) -> (u64, u32) {
        let lastb = self.fio.as_ref().map_or(1, |f| f.lastb);
        let block = self
            .fio_block_from(rand, b, lastb, self.block)
            .min(self.blocks - 1);
        if self.exhausted {
            return (self.start, len);
        }
        let len = self.mark_fio_blocks(block, len, self.block);
        self.fio_issued(dir, block * self.block, len)
    }

    /// `draw_fio` for a job whose directions have different units
    /// (`bs=4k,8k`), as fio 3.33 draws it: the random block over the
    /// direction's own `last_block`, checked in the one map at that
    /// number (the next free one after it when taken), the offset that
    /// block times the direction's `ba`; the I/O marks the map from its
    /// offset in `min_bs` units of its direction and is cut to the free
    /// ones. An offset at or past the region's end, or an I/O past it,
    /// is fio's failed offset: `ended`.
    fn draw_fio_units(
        &mut self,
        bs: &mut BsGen,
        bs_rng: &mut Frand,
        rand: &mut OffsetRand,
        dir: usize,
    ) -> (u64, u32) {
        let dir = dir.min(2);
        let Some(f) = &self.fio else {
            return (self.start, bs.min());
        };
        let (run, pct, pos) = (f.run, f.pct[dir], f.last[dir]);
        let Some(u) = f.units.map(|u| u[dir]) else {
            return (self.start, bs.min());
        };
        let random = rand.next_is_random(run, pct, dir);
        let off = if !random && pos < self.len {
            pos
        } else {
            self.fio_block_over(rand, u.lastb.max(1), u.ba)
                .saturating_mul(u.ba)
        };
        if self.exhausted {
            return (self.start, bs.min());
        }
        if off >= self.len {
            self.ended = true;
            return (self.start, bs.min());
        }
        let room = self.len - off;
        let mut len = size_within(bs, bs_rng, room);
        if u64::from(len) > room {
            self.ended = true;
            return (self.start, len);
        }
        if random {
            len = self.mark_fio_map(off, len, u.min_bs);
        }
        self.fio_issued(dir, off, len)
    }

    /// Marks a random I/O of `len` bytes at `off` in fio's random map, in
    /// `unit`s from the block under `off`, and cuts it to the free units
    /// that follow (fio's next-free rule); a map that fills ends a pass.
    /// The length is unchanged when no map is kept.
    #[inline(always)]
    fn mark_fio_map(&mut self, off: u64, len: u32, unit: u64) -> u32 {
        self.mark_fio_blocks(off / unit, len, unit)
    }

    /// `mark_fio_map` for an I/O whose offset is `first` units. An I/O of
    /// at most one unit (a fixed size of one block, the usual job) marks
    /// one without a division: the two divisions of the general rule took
    /// tens of cycles per I/O, in a loop whose every cycle counts.
    #[inline(always)]
    fn mark_fio_blocks(&mut self, first: u64, len: u32, unit: u64) -> u32 {
        let Some(t) = self.touched.as_mut() else {
            return len;
        };
        let want = if u64::from(len) <= unit {
            1
        } else {
            u64::from(len).div_ceil(unit)
        };
        let mut n = 0;
        while n < want && first + n < self.blocks && !t.get(first + n) {
            t.set(first + n);
            n += 1;
        }
        if t.left == 0 && n > 0 {
            self.passes += 1;
        }
        if n > 0 && n * unit < u64::from(len) {
            // n * unit < len <= u32::MAX.
            (n * unit) as u32
        } else {
            len
        }
    }

    /// The I/O fio's draw settled on: the direction's next sequential
    /// offset starts where it ends.
    #[inline(always)]
    fn fio_issued(&mut self, dir: usize, off: u64, len: u32) -> (u64, u32) {
        self.cursor = off + u64::from(len);
        if let Some(f) = &mut self.fio {
            f.last[dir] = self.cursor;
        }
        (self.start + off, len)
    }

    /// The draw fio spends when the last I/O of a loop has filled its
    /// random map: one offset, which finds no free block (nothing when
    /// the map is not full, or fio's offsets keep no map).
    pub fn spend_draw_on_full_map(&mut self, rand: &mut OffsetRand) {
        let (Some(fio), Some(t)) = (&self.fio, &self.touched) else {
            return;
        };
        if matches!(fio.kind, FioKind::Uniform) && t.left == 0 {
            rand.offset.next_u64();
        }
    }

    /// fio's block for the next random I/O, relative to the region.
    #[inline(always)]
    fn fio_block(&mut self, rand: &mut OffsetRand) -> u64 {
        let lastb = self.fio.as_ref().map_or(1, |f| f.lastb);
        let unit = self.block;
        self.fio_block_over(rand, lastb, unit)
    }

    /// `fio_block` with fio's `last_block` of the I/O's direction.
    /// `unit`: the direction's block size, in which `zoned_abs` zones
    /// are counted. A uniform block that is free (or with no map) is
    /// taken here, in the few instructions inlined into the loops that
    /// issue I/Os; the rest is `fio_block_search`.
    #[inline(always)]
    fn fio_block_over(&mut self, rand: &mut OffsetRand, lastb: u64, unit: u64) -> u64 {
        if let Some(FioSource {
            kind: FioKind::Uniform,
            ..
        }) = &self.fio
        {
            let b = (lastb as f64 * rand.offset.fraction()) as u64;
            return self.fio_block_from(rand, b, lastb, unit);
        }
        self.fio_block_search(rand, lastb, unit, None)
    }

    /// `fio_block_over` from the uniform block `b` drawn.
    #[inline(always)]
    fn fio_block_from(&mut self, rand: &mut OffsetRand, b: u64, lastb: u64, unit: u64) -> u64 {
        let Some(t) = &self.touched else {
            return b;
        };
        if b >= self.blocks {
            return b;
        }
        if let Some(free) = t.free_from(b, self.blocks) {
            return free;
        }
        // Every block taken.
        self.fio_block_search(rand, lastb, unit, Some(b))
    }

    /// `fio_block_over`'s draws, from the uniform block `drawn` already
    /// (taken in the map) if any.
    #[inline(never)]
    fn fio_block_search(
        &mut self,
        rand: &mut OffsetRand,
        lastb: u64,
        unit: u64,
        mut drawn: Option<u64>,
    ) -> u64 {
        let Some(fio) = &mut self.fio else {
            return 0;
        };
        let mut cleared = false;
        loop {
            let (b, base) = match &mut fio.kind {
                FioKind::Uniform if drawn.is_some() => (drawn.take().unwrap_or(0), 0),
                FioKind::Skew(s) => return s.sample(),
                FioKind::Lfsr { lfsr, seed } => {
                    // Each block given: fio starts the register over.
                    return match lfsr.next() {
                        Some(b) => b,
                        None => {
                            lfsr.reset(*seed);
                            lfsr.next().unwrap_or(0)
                        }
                    };
                }
                FioKind::Uniform => ((lastb as f64 * rand.offset.fraction()) as u64, 0),
                FioKind::Zoned { table, absolute } => {
                    let z = table[(rand.zone.between(1, 100) - 1) as usize];
                    let (base, span) = if *absolute {
                        let first = z.prev / unit;
                        let end = (z.end / unit).min(lastb);
                        (first, end.saturating_sub(first))
                    } else {
                        let base = z.prev * lastb / 100;
                        (base, lastb * z.end.saturating_sub(z.prev) / 100)
                    };
                    ((span as f64 * rand.offset.fraction()) as u64, base)
                }
            };
            // fio checks and searches its map at the block drawn, before
            // a zone's start is added.
            let Some(t) = &mut self.touched else {
                return b + base;
            };
            if b >= self.blocks {
                return b + base;
            }
            match t.free_from(b, self.blocks) {
                Some(free) => return free + base,
                None if self.stop_on_full => {
                    // fio's run ends: the file is done.
                    self.exhausted = true;
                    return b + base;
                }
                None if !cleared => {
                    // Every block taken: fio resets its map and draws
                    // again (the pass was counted as it ended).
                    t.clear(self.blocks);
                    cleared = true;
                }
                None => return b + base,
            }
        }
    }

    #[cfg(test)]
    /// Keeps fio's map of touched blocks for I/Os of up to `max_len`
    /// bytes, when they may span more than one block and the offsets come
    /// from the random map one block at a time (no `norandommap`,
    /// distribution, `randread:N` or `percentage_random`); otherwise
    /// nothing changes. Fails, allocating nothing, when the map's memory
    /// cannot be had.
    pub fn cover_once(&mut self, max_len: u64) -> Result<(), GenError> {
        let mapped = matches!(
            self.mode,
            Mode::Random {
                source: Source::Map(_),
                run: 1,
                percentage_random: 100,
            }
        );
        if !mapped || max_len <= self.block || self.touched.is_some() {
            return Ok(());
        }
        self.touched = Some(Touched::new(self.blocks)?);
        Ok(())
    }

    /// The offset and length of the next I/O of up to `len` bytes. With
    /// the map of `cover_once`, the I/O starts at a block this pass has
    /// not touched and is shortened to the untouched whole blocks that
    /// follow it (and to the region's end); a sequential I/O that would
    /// pass the region's end is shortened to the whole blocks left;
    /// otherwise it is `next(len)` with `len` unchanged.
    #[inline(always)]
    pub fn next_fit(&mut self, len: u32) -> (u64, u32) {
        if self.touched.is_some() {
            return self.next_mapped(len);
        }
        let mut len = len;
        if let Mode::Sequential { .. } = self.mode {
            // The last I/O of a sequential pass is cut to the whole blocks
            // left before the region's end, as fio picks a size that fits
            // there: a pass moves the region's bytes exactly.
            let room = self.len.saturating_sub(self.cursor);
            if u64::from(len) > room && room >= self.block {
                // room < len <= u32::MAX.
                len = (room / self.block * self.block) as u32;
            }
        }
        (self.next(u64::from(len)), len)
    }

    fn next_mapped(&mut self, len: u32) -> (u64, u32) {
        let (
            Some(t),
            Mode::Random {
                source: Source::Map(perm),
                ..
            },
        ) = (&mut self.touched, &mut self.mode)
        else {
            return (self.start, len);
        };
        // fio's choice: a uniform block, or when it is touched the next
        // untouched one after it (from the start when none is), so that
        // I/Os tend to begin where the untouched stretches begin.
        let drawn = self.rng.below(self.blocks);
        let Some(first) = t.next_free(drawn) else {
            // Not reached: a pass ends as its last block is touched.
            t.clear(self.blocks);
            perm.rekey(&mut self.rng);
            return (self.start, len);
        };
        let want = u64::from(len).div_ceil(self.block).max(1);
        let mut n = 0;
        while n < want && first + n < self.blocks && !t.get(first + n) {
            t.set(first + n);
            n += 1;
        }
        let len = if n < want {
            // n * block <= len, so it fits in u32.
            (n * self.block) as u32
        } else {
            len
        };
        let off = first * self.block;
        self.cursor = off + u64::from(len);
        if t.left == 0 {
            self.passes += 1;
            t.clear(self.blocks);
            perm.rekey(&mut self.rng);
        }
        (self.start + off, len)
    }

    /// The offset of the next I/O of `len` bytes: `offset >= start`,
    /// `offset + len <= start + blocks() * block`. An I/O larger than the
    /// whole region cannot fit; it gets the region's start (the plan
    /// refuses block sizes above the region, as fio does).
    #[inline(always)]
    pub fn next(&mut self, len: u64) -> u64 {
        if self.touched.is_some() {
            return self.next_mapped(len.min(u64::from(u32::MAX)) as u32).0;
        }
        // fio's default random pattern, one block at a time from the map:
        // what the general path below does for it, in fewer steps.
        if let Mode::Random {
            source: Source::Map(perm),
            run: 1,
            percentage_random: 100,
        } = &mut self.mode
        {
            if len <= self.block {
                let block = match perm.next() {
                    Some(b) => b,
                    None => {
                        perm.rekey(&mut self.rng);
                        perm.next().unwrap_or(0)
                    }
                };
                let off = block * self.block;
                self.cursor = off + len;
                if perm.exhausted() {
                    self.passes += 1;
                    perm.rekey(&mut self.rng);
                }
                return self.start + off;
            }
        }
        self.next_general(len)
    }

    fn next_general(&mut self, len: u64) -> u64 {
        if len > self.len {
            return self.start;
        }
        let off = match &mut self.mode {
            Mode::Backward { step } => {
                // The first I/O of a pass is at the start; each next one
                // `step` back from the last one's end, and from the end
                // (less `step`) when that is before the start, which
                // begins a new pass. An I/O that would pass the end starts
                // at the start.
                let step = *step;
                let mut off = match self.cursor {
                    0 => 0,
                    end => match end.checked_sub(step) {
                        Some(o) => o,
                        None => {
                            self.passes += 1;
                            self.len.saturating_sub(step)
                        }
                    },
                };
                if off.saturating_add(len) > self.len {
                    off = 0;
                }
                self.cursor = off + len;
                return self.start + off;
            }
            Mode::Sequential { gap } => {
                let gap = *gap;
                if self.cursor.saturating_add(len) > self.len {
                    self.cursor = 0;
                    self.passes += 1;
                }
                let off = self.cursor;
                let end = off.saturating_add(len);
                self.cursor = end.saturating_add(gap);
                let (wrap_at, wrap_to) = match self.file_size {
                    Some(size) => (size, self.start),
                    None => (self.len, 0),
                };
                if end < self.len && self.cursor >= wrap_at {
                    // fio: a gap that jumps past the file's end from an
                    // I/O that did not reach the region's wraps in the
                    // same pass of its file (the file is not done). fio
                    // compares the position in the region with the
                    // file's size, and wraps it to the region's offset
                    // counted from the region's start.
                    self.cursor = wrap_to;
                    self.passes += 1;
                    self.at_end = self.cursor.saturating_add(self.block) > self.len;
                    if self.at_end {
                        self.cursor = 0;
                    }
                    return self.start + off;
                }
                // A pass ends as soon as no block fits after this I/O.
                self.at_end = self.cursor.saturating_add(self.block) > self.len;
                if self.at_end {
                    self.cursor = 0;
                    self.passes += 1;
                }
                return self.start + off;
            }
            Mode::Random {
                source,
                run,
                percentage_random,
            } => {
                let in_run = self.run_left > 0 && self.cursor.saturating_add(len) <= self.len;
                let off = if in_run {
                    self.cursor
                } else if *percentage_random < 100 && !self.coin.percent(*percentage_random) {
                    // A sequential I/O from the last one, back at the start
                    // when it no longer fits.
                    self.run_left = 0;
                    if self.cursor.saturating_add(len) > self.len {
                        0
                    } else {
                        self.cursor
                    }
                } else {
                    let block = match source {
                        Source::Map(perm) => {
                            let unit = match perm.next() {
                                Some(u) => u,
                                None => {
                                    // The pass ended with a run cut short.
                                    if *percentage_random == 100 {
                                        self.passes += 1;
                                    }
                                    perm.rekey(&mut self.rng);
                                    perm.next().unwrap_or(0)
                                }
                            };
                            unit * *run
                        }
                        Source::Draw(d) => d.sample(&mut self.rng),
                    };
                    self.run_left = *run;
                    let mut off = block * self.block;
                    if len > self.len - off {
                        off = (self.len - len) / self.block * self.block;
                    }
                    off
                };
                self.run_left = self.run_left.saturating_sub(1);
                off
            }
        };
        self.cursor = off + len;
        self.count_pass();
        self.start + off
    }

    /// Pass accounting of the random modes, after an I/O.
    #[inline]
    fn count_pass(&mut self) {
        if let Mode::Random {
            source: Source::Map(perm),
            percentage_random: 100,
            ..
        } = &mut self.mode
        {
            // A pass is one walk through the permutation; it ends with the
            // last run (cut short when it reaches the end of the region).
            let run_over = self.run_left == 0 || self.cursor.saturating_add(self.block) > self.len;
            if run_over && perm.exhausted() {
                self.passes += 1;
                self.run_left = 0;
                perm.rekey(&mut self.rng);
            }
        } else {
            // Nothing marks the end of a walk: a pass is as many I/Os as
            // the region has blocks.
            self.ios += 1;
            if self.ios == self.blocks {
                self.ios = 0;
                self.passes += 1;
            }
        }
    }

    /// Starts over at the beginning of the region, as a new loop of the
    /// job does: sequential offsets from the region's start, random ones
    /// in a new pass.
    pub fn restart(&mut self) {
        self.ended = false;
        self.exhausted = false;
        self.stop_on_full = false;
        self.at_end = false;
        self.cursor = 0;
        self.run_left = 0;
        self.ios = 0;
        if let Some(f) = &mut self.fio {
            f.last = [0; 3];
            if let FioKind::Lfsr { lfsr, seed } = &mut f.kind {
                lfsr.reset(*seed);
            }
        }
        if let Some(t) = &mut self.touched {
            t.clear(self.blocks);
        }
        if let Mode::Random {
            source: Source::Map(perm),
            ..
        } = &mut self.mode
        {
            perm.rekey(&mut self.rng);
        }
    }

    /// How many passes over the region have finished. Sequential: wraps to
    /// the start. Random with the permutation (and `percentage_random`
    /// 100): walks through every block (every run start with
    /// `randread:N`). Otherwise (repeats allowed, or a mix of random and
    /// sequential): every `blocks()` I/Os.
    pub fn pass(&self) -> u64 {
        self.passes
    }

    #[cfg(test)]
    /// The number of whole blocks in the region.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    #[cfg(test)]
    /// The first byte of the region.
    pub fn start(&self) -> u64 {
        self.start
    }

    #[cfg(test)]
    /// The region's length, rounded down to whole blocks.
    pub fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::rng::{Rng, Stream};
    use iolab_spec::value::RwMode;
    use proptest::prelude::*;

    const K4: u64 = 4096;

    fn region(blocks: u64) -> Region {
        Region {
            start: 0,
            len: blocks * K4,
            block: K4,
        }
    }

    fn random(norandommap: bool, run: u64, pct: u32) -> Pattern {
        Pattern::Random {
            distribution: Distribution::Random,
            norandommap,
            run,
            percentage_random: pct,
        }
    }

    fn gen(r: Region, p: &Pattern, seed: u64, clone: u32) -> OffsetGen {
        OffsetGen::new(r, p, Rng::for_job(seed, clone, Stream::Offset)).unwrap()
    }

    fn take(g: &mut OffsetGen, n: u64, len: u64) -> Vec<u64> {
        (0..n).map(|_| g.next(len)).collect()
    }

    /// Checks that `offs` visit each of `n` blocks exactly once.
    fn assert_permutation(offs: &[u64], n: u64) {
        assert_eq!(offs.len() as u64, n);
        let mut seen = vec![0u64; n.div_ceil(64) as usize];
        for &o in offs {
            assert_eq!(o % K4, 0);
            let b = o / K4;
            assert!(b < n, "block {b} of {n}");
            let (w, bit) = ((b / 64) as usize, b % 64);
            assert_eq!(seen[w] & (1 << bit), 0, "block {b} twice");
            seen[w] |= 1 << bit;
        }
    }

    #[test]
    fn random_pass_visits_each_block_once() {
        for n in [1u64, 2, 3, 1000, 4097, 1 << 20] {
            let mut g = gen(region(n), &random(false, 1, 100), 1, 0);
            assert_eq!(g.blocks(), n);
            let first = take(&mut g, n - 1, K4);
            assert_eq!(g.pass(), 0, "n={n}");
            let mut all = first;
            all.push(g.next(K4));
            assert_eq!(g.pass(), 1, "n={n}");
            assert_permutation(&all, n);
            let second = take(&mut g, n, K4);
            assert_eq!(g.pass(), 2);
            assert_permutation(&second, n);
        }
    }

    #[test]
    fn passes_seeds_and_clones_change_the_order() {
        let r = region(1000);
        let p = random(false, 1, 100);
        let mut g = gen(r, &p, 1, 0);
        let first = take(&mut g, 1000, K4);
        let second = take(&mut g, 1000, K4);
        assert_ne!(first, second);
        assert_eq!(first, take(&mut gen(r, &p, 1, 0), 1000, K4));
        assert_ne!(first, take(&mut gen(r, &p, 2, 0), 1000, K4));
        assert_ne!(first, take(&mut gen(r, &p, 1, 1), 1000, K4));
        // Same for the modes that may repeat.
        let p = random(true, 1, 100);
        let a = take(&mut gen(r, &p, 1, 0), 100, K4);
        assert_eq!(a, take(&mut gen(r, &p, 1, 0), 100, K4));
        assert_ne!(a, take(&mut gen(r, &p, 2, 0), 100, K4));
        assert_ne!(a, take(&mut gen(r, &p, 1, 1), 100, K4));
    }

    #[test]
    fn region_start_and_rounding() {
        // 10 blocks and a half, from 1 MiB: offsets stay in the 10 whole
        // blocks, counted from the start.
        let r = Region {
            start: 1 << 20,
            len: 10 * K4 + 2048,
            block: K4,
        };
        let mut g = gen(r, &random(false, 1, 100), 1, 0);
        assert_eq!((g.blocks(), g.len(), g.start()), (10, 10 * K4, 1 << 20));
        let mut offs: Vec<u64> = take(&mut g, 10, K4);
        offs.sort_unstable();
        let want: Vec<u64> = (0..10).map(|i| (1 << 20) + i * K4).collect();
        assert_eq!(offs, want);
    }

    #[test]
    fn sequential_wraps_into_new_passes() {
        let mut g = gen(region(4), &Pattern::Sequential { gap: 0 }, 1, 0);
        assert_eq!(take(&mut g, 3, K4), vec![0, K4, 2 * K4]);
        assert_eq!(g.pass(), 0);
        assert_eq!(g.next(K4), 3 * K4);
        assert_eq!(g.pass(), 1);
        assert_eq!(take(&mut g, 4, K4), vec![0, K4, 2 * K4, 3 * K4]);
        assert_eq!(g.pass(), 2);
        // An I/O that no longer fits starts the next pass.
        let mut g = gen(region(4), &Pattern::Sequential { gap: 0 }, 1, 0);
        assert_eq!(g.next(3 * K4), 0);
        assert_eq!(g.next(2 * K4), 0);
        assert_eq!(g.pass(), 1);
    }

    #[test]
    fn a_gap_ends_the_pass_at_the_end_or_wraps_as_fio() {
        // 16 blocks, 4k I/Os 8k apart: the sixth I/O ends at the region's
        // end, which is fio's file done.
        let mut g = gen(region(16), &Pattern::Sequential { gap: 2 * K4 }, 1, 0);
        assert_eq!(
            take(&mut g, 5, K4),
            vec![0, 3 * K4, 6 * K4, 9 * K4, 12 * K4]
        );
        assert!(!g.fio_done());
        assert_eq!(g.next(K4), 15 * K4);
        assert!(g.fio_done());
        // 10k apart: from 60k the gap jumps past the end from an I/O that
        // did not reach it: the next pass starts at once, not done.
        let mut g = gen(region(16), &Pattern::Sequential { gap: 10 * 1024 }, 1, 0);
        let offs = take(&mut g, 5, K4);
        assert_eq!(offs[4], 56 * 1024);
        assert!(!g.fio_done());
        assert_eq!(g.pass(), 1);
        assert_eq!(g.next(K4), 0);
        // 5k apart: after the I/O at 54k the next would start at 63k and
        // not fit: done.
        let mut g = gen(region(16), &Pattern::Sequential { gap: 5 * 1024 }, 1, 0);
        let offs = take(&mut g, 7, K4);
        assert_eq!(offs[6], 54 * 1024);
        assert!(g.fio_done());
    }

    #[test]
    fn a_gap_in_a_region_inside_the_file_wraps_as_fio() {
        // Region 16k..144k of a 144k file, 4k I/Os 20k apart: after the
        // I/O at 120k (relative) the position 144k is the file's size,
        // which wraps to the region's offset counted from its start.
        let r = Region {
            start: 4 * K4,
            len: 32 * K4,
            block: K4,
        };
        let mut g = gen(r, &Pattern::Sequential { gap: 5 * K4 }, 1, 0);
        g.set_file_size(36 * K4);
        let offs = take(&mut g, 7, K4);
        assert_eq!(offs[5], (4 + 30) * K4);
        assert_eq!(offs[6], (4 + 4) * K4);
        // 6k apart: the position after 120k is 130k, past the region but
        // inside the file: done.
        let mut g = gen(r, &Pattern::Sequential { gap: 6 * 1024 }, 1, 0);
        g.set_file_size(36 * K4);
        let offs = take(&mut g, 13, K4);
        assert_eq!(offs[12], 4 * K4 + 120 * 1024);
        assert!(g.fio_done());
    }

    #[test]
    fn restart_begins_a_new_pass_at_the_start() {
        let mut g = gen(region(8), &Pattern::Sequential { gap: 0 }, 1, 0);
        take(&mut g, 3, K4);
        g.restart();
        assert_eq!(take(&mut g, 2, K4), vec![0, K4]);
        let mut g = gen(region(8), &random(false, 1, 100), 1, 0);
        take(&mut g, 5, K4);
        g.restart();
        assert_permutation(&take(&mut g, 8, K4), 8);
    }

    #[test]
    fn sequential_gap_skips_exactly_the_gap() {
        // rw=write:4k with bs=4k over 64 KiB: every other block.
        let mut g = gen(region(16), &Pattern::Sequential { gap: K4 }, 1, 0);
        let offs = take(&mut g, 8, K4);
        assert_eq!(offs, (0..8).map(|i| i * 2 * K4).collect::<Vec<_>>());
        for w in offs.windows(2) {
            assert_eq!(w[1] - (w[0] + K4), K4);
        }
        assert_eq!(g.pass(), 1);
        assert_eq!(g.next(K4), 0);
        // A gap that is not a multiple of the block.
        let mut g = gen(region(16), &Pattern::Sequential { gap: 1000 }, 1, 0);
        assert_eq!(take(&mut g, 3, K4), vec![0, K4 + 1000, 2 * K4 + 2000]);
    }

    #[test]
    fn from_rw_reads_the_modifier() {
        let rw = |mode, modifier| RwSpec { mode, modifier };
        let d = Distribution::Random;
        assert_eq!(
            Pattern::from_rw(rw(RwMode::Write, Some(4096)), d.clone(), false, 100),
            Pattern::Sequential { gap: 4096 }
        );
        assert_eq!(
            Pattern::from_rw(rw(RwMode::ReadWrite, None), d.clone(), false, 100),
            Pattern::Sequential { gap: 0 }
        );
        assert_eq!(
            Pattern::from_rw(rw(RwMode::RandRead, Some(8)), d.clone(), true, 50),
            random(true, 8, 50)
        );
        assert_eq!(
            Pattern::from_rw(rw(RwMode::RandTrimWrite, None), d, false, 100),
            random(false, 1, 100)
        );
    }

    #[test]
    fn randread_8_gives_runs_of_8() {
        let n = 1024;
        let mut g = gen(region(n), &random(false, 8, 100), 1, 0);
        let offs = take(&mut g, n, K4);
        assert_eq!(g.pass(), 1);
        assert_permutation(&offs, n);
        let mut jumps = 0;
        for (i, run) in offs.chunks(8).enumerate() {
            for w in run.windows(2) {
                assert_eq!(w[1], w[0] + K4, "run {i}: {run:?}");
            }
            if i > 0 && run[0] != offs[i * 8 - 1] + K4 {
                jumps += 1;
            }
        }
        assert!(jumps > 100, "{jumps} random starts of 127");
        // A region that is not a whole number of runs: the last run is cut
        // short and the pass still covers every block once.
        for n in [1001, 1007, 7] {
            for seed in 0..20 {
                let mut g = gen(region(n), &random(false, 8, 100), seed, 0);
                let offs = take(&mut g, n, K4);
                assert_permutation(&offs, n);
                assert_eq!(g.pass(), 1, "n={n} seed={seed}");
            }
        }
        // norandommap with runs: runs of 8 unless they hit the end.
        let n = 1000;
        let mut g = gen(region(n), &random(true, 8, 100), 1, 0);
        let offs = take(&mut g, 800, K4);
        let breaks = offs.windows(2).filter(|w| w[1] != w[0] + K4).count();
        assert!((95..=115).contains(&breaks), "{breaks}");
    }

    #[test]
    fn percentage_random_mixes_sequential_and_random() {
        let n = 1000;
        // 0: plain sequential.
        let mut g = gen(region(n), &random(false, 1, 0), 1, 0);
        let offs = take(&mut g, n, K4);
        assert_eq!(offs, (0..n).map(|i| i * K4).collect::<Vec<_>>());
        assert_eq!(g.pass(), 1);
        // 100: a permutation.
        let mut g = gen(region(n), &random(false, 1, 100), 1, 0);
        assert_permutation(&take(&mut g, n, K4), n);
        // 30: about 70% of the I/Os follow the last one.
        let mut g = gen(region(100_000), &random(false, 1, 30), 1, 0);
        let offs = take(&mut g, 100_000, K4);
        let follow = offs.windows(2).filter(|w| w[1] == w[0] + K4).count();
        let share = follow as f64 / 100_000.0;
        assert!((share - 0.7).abs() < 0.01, "{share}");
        // The random offsets do not depend on the percentage: the random
        // I/Os of P=30 are the start of the permutation of P=100.
        let mut full = gen(region(100_000), &random(false, 1, 100), 1, 0);
        let head: std::collections::HashSet<u64> = take(&mut full, 400, K4).into_iter().collect();
        let mut mixed = gen(region(100_000), &random(false, 1, 30), 1, 0);
        let offs = take(&mut mixed, 1000, K4);
        let jumps: Vec<u64> = offs
            .windows(2)
            .filter(|w| w[1] != w[0] + K4)
            .map(|w| w[1])
            .collect();
        assert!(jumps.len() > 250, "{}", jumps.len());
        assert!(jumps.iter().all(|o| head.contains(o)));
    }

    #[test]
    fn norandommap_repeats_as_the_birthday_bound_says() {
        let n = 1u64 << 16;
        let mut g = gen(region(n), &random(true, 1, 100), 1, 0);
        let mut seen = vec![false; n as usize];
        let mut distinct = 0u64;
        for _ in 0..n {
            let o = g.next(K4);
            assert!(o.is_multiple_of(K4) && o / K4 < n);
            let b = (o / K4) as usize;
            if !seen[b] {
                seen[b] = true;
                distinct += 1;
            }
        }
        assert_eq!(g.pass(), 1);
        // n draws from n blocks leave n(1 - 1/e) distinct: 63.2%.
        let share = distinct as f64 / n as f64;
        assert!((share - 0.632).abs() < 0.006, "{share}");
        // The first repeat comes after about √(πn/2) draws: 321 here.
        let mut total = 0u64;
        for seed in 0..200 {
            let mut g = gen(region(n), &random(true, 1, 100), seed, 0);
            let mut seen = std::collections::HashSet::new();
            let mut k = 0u64;
            while seen.insert(g.next(K4)) {
                k += 1;
            }
            total += k;
        }
        let mean = total as f64 / 200.0;
        assert!((mean - 321.0).abs() < 40.0, "{mean}");
    }

    fn skewed(distribution: Distribution) -> Pattern {
        Pattern::Random {
            distribution,
            norandommap: false,
            run: 1,
            percentage_random: 100,
        }
    }

    fn block_counts(p: &Pattern, n: u64, draws: u64) -> Vec<u32> {
        let mut g = gen(region(n), p, 1, 0);
        let mut c = vec![0u32; n as usize];
        for _ in 0..draws {
            c[(g.next(K4) / K4) as usize] += 1;
        }
        c
    }

    #[test]
    fn zipf_makes_a_small_set_of_blocks_hot() {
        let n = 100_000;
        let mut c = block_counts(
            &skewed(Distribution::Zipf {
                theta: 1.2,
                center: None,
            }),
            n,
            100_000,
        );
        c.sort_unstable_by(|a, b| b.cmp(a));
        let hot: u32 = c[..1000].iter().sum();
        assert!(hot > 50_000, "hottest 1% took {hot} of 100000");
    }

    #[test]
    fn normal_puts_most_accesses_near_the_center() {
        let n = 100_000;
        let c = block_counts(
            &skewed(Distribution::Normal {
                dev: 0.0,
                center: None,
            }),
            n,
            100_000,
        );
        let middle: u32 = c[25_000..75_000].iter().sum();
        assert!(middle > 99_000, "{middle}");
        let centre: u32 = c[45_000..55_000].iter().sum();
        assert!(centre > 40_000, "{centre}");
    }

    #[test]
    fn zoned_gives_each_zone_its_share() {
        let n = 100_000;
        let c = block_counts(
            &skewed(Distribution::Zoned(vec![
                (60.0, 10.0),
                (30.0, 20.0),
                (10.0, 70.0),
            ])),
            n,
            100_000,
        );
        let share = |lo: usize, hi: usize| f64::from(c[lo..hi].iter().sum::<u32>()) / 1e5;
        assert!((share(0, 10_000) - 0.6).abs() < 0.02);
        assert!((share(10_000, 30_000) - 0.3).abs() < 0.02);
        assert!((share(30_000, 100_000) - 0.1).abs() < 0.02);
    }

    #[test]
    fn bad_regions_are_refused() {
        let p = Pattern::Sequential { gap: 0 };
        let rng = || Rng::from_seed(1);
        let r = |start, len, block| Region { start, len, block };
        assert_eq!(
            OffsetGen::new(r(0, 4096, 0), &p, rng()).unwrap_err(),
            GenError::ZeroBlock
        );
        assert_eq!(
            OffsetGen::new(r(0, 4095, 4096), &p, rng()).unwrap_err(),
            GenError::RegionTooSmall {
                len: 4095,
                block: 4096
            }
        );
        assert!(matches!(
            OffsetGen::new(r(u64::MAX, 4096, 512), &p, rng()),
            Err(GenError::RegionOverflow { .. })
        ));
        // An I/O larger than the region gets the start.
        let mut g = OffsetGen::new(r(512, 4096, 512), &p, rng()).unwrap();
        assert_eq!(g.next(8192), 512);
    }

    #[test]
    fn huge_regions_do_not_overflow() {
        let r = Region {
            start: 0,
            len: u64::MAX,
            block: 512,
        };
        for p in [
            Pattern::Sequential { gap: u64::MAX / 2 },
            random(false, 4, 50),
            random(true, 1, 100),
        ] {
            let mut g = gen(r, &p, 1, 0);
            for len in [512, 1 << 30, u64::MAX / 2] {
                let len = len / 512 * 512;
                let off = g.next(len);
                assert!(off.checked_add(len).is_some_and(|end| end <= g.len()));
            }
        }
    }

    fn patterns() -> impl Strategy<Value = Pattern> {
        let dist = prop_oneof![
            Just(Distribution::Random),
            (0.1f64..3.0).prop_map(|theta| Distribution::Zipf {
                theta,
                center: None
            }),
            (0.05f64..0.95, prop::option::of(0.0f64..=1.0))
                .prop_map(|(h, center)| Distribution::Pareto { h, center }),
            (0.0f64..99.0, prop::option::of(0.0f64..=1.0))
                .prop_map(|(dev, center)| Distribution::Normal { dev, center }),
            Just(Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])),
            Just(Distribution::ZonedAbs(vec![(70.0, 8192), (30.0, 1 << 30)])),
        ];
        prop_oneof![
            (0u64..20_000).prop_map(|gap| Pattern::Sequential { gap }),
            (dist, any::<bool>(), 1u64..20, 0u32..=100).prop_map(
                |(distribution, norandommap, run, percentage_random)| Pattern::Random {
                    distribution,
                    norandommap,
                    run,
                    percentage_random,
                }
            ),
        ]
    }

    proptest! {
        /// Offsets plus sizes stay in the region whatever the sizes.
        #[test]
        fn offsets_stay_in_the_region(
            pattern in patterns(),
            start in 0u64..(1 << 40),
            block in prop_oneof![Just(512u64), Just(4096), 1u64..10_000],
            blocks in 1u64..5_000,
            extra in 0u64..4096,
            sizes in prop::collection::vec(1u64..64, 1..300),
            seed in any::<u64>(),
        ) {
            let r = Region { start, len: blocks * block + extra % block, block };
            let mut g = OffsetGen::new(r, &pattern, Rng::for_job(seed, 0, Stream::Offset)).unwrap();
            let end = start + blocks * block;
            for &m in &sizes {
                let len = (m * block).min(blocks * block);
                let off = g.next(len);
                prop_assert!(off >= start, "{} before {}", off, start);
                prop_assert!(off + len <= end, "{}+{} beyond {}", off, len, end);
                if !matches!(pattern, Pattern::Sequential { .. }) {
                    // Random offsets, and sequential ones after them, keep
                    // to the block grid when sizes are whole blocks.
                    prop_assert_eq!((off - start) % block, 0);
                }
            }
        }
    }

    /// Runs one pass of a mapped generator with I/O sizes drawn from
    /// `sizes`; the bytes each block was covered and the I/Os.
    fn mapped_pass(blocks: u64, sizes: &[u32], seed: u64) -> (Vec<u32>, u64, OffsetGen) {
        let mut g = gen(region(blocks), &random(false, 1, 100), seed, 0);
        g.cover_once(u64::from(*sizes.iter().max().unwrap()))
            .unwrap();
        let mut pick = Rng::for_job(seed, 0, Stream::RwMix);
        let mut cover = vec![0u32; blocks as usize];
        let (mut bytes, mut ios) = (0u64, 0u64);
        while bytes < blocks * K4 {
            let want = sizes[pick.below(sizes.len() as u64) as usize];
            let (off, len) = g.next_fit(want);
            assert!(len > 0 && len <= want, "len {len} of {want}");
            assert_eq!(off % K4, 0);
            assert!(
                off + u64::from(len) <= blocks * K4,
                "{off}+{len} past the region"
            );
            for b in off / K4..(off + u64::from(len)).div_ceil(K4) {
                cover[b as usize] += 1;
            }
            bytes += u64::from(len);
            ios += 1;
        }
        assert_eq!(bytes, blocks * K4);
        (cover, ios, g)
    }

    #[test]
    fn mapped_sizes_cover_each_block_once_per_pass() {
        // 4k and 64k I/Os over 1000 blocks (not a multiple of 64): every
        // block once, I/Os cut where touched blocks begin.
        let (cover, ios, g) = mapped_pass(1000, &[4096, 65536], 3);
        assert!(cover.iter().all(|c| *c == 1), "{cover:?}");
        assert_eq!(g.pass(), 1);
        // Without cutting, half 1-block and half 16-block I/Os would take
        // about 118; cut I/Os take more, and never more than one a block.
        assert!(ios > 118 && ios <= 1000, "{ios} I/Os");
    }

    #[test]
    fn mapped_passes_start_over_with_every_block_untouched() {
        let mut g = gen(region(100), &random(false, 1, 100), 9, 0);
        g.cover_once(8 * K4).unwrap();
        for pass in 1..=3 {
            let mut cover = vec![0u32; 100];
            let mut bytes = 0;
            while bytes < 100 * K4 {
                let (off, len) = g.next_fit(8 * 4096);
                for b in off / K4..(off + u64::from(len)) / K4 {
                    cover[b as usize] += 1;
                }
                bytes += u64::from(len);
            }
            assert!(cover.iter().all(|c| *c == 1), "pass {pass}: {cover:?}");
            assert_eq!(g.pass(), pass);
        }
        g.restart();
        let (off, len) = g.next_fit(4096);
        assert!(off < 100 * K4 && len == 4096);
    }

    #[test]
    fn cover_once_leaves_other_patterns_and_single_blocks_alone() {
        for p in [
            random(true, 1, 100),
            random(false, 4, 100),
            random(false, 1, 50),
        ] {
            let mut g = gen(region(64), &p, 1, 0);
            let mut plain = gen(region(64), &p, 1, 0);
            g.cover_once(64 * K4).unwrap();
            for _ in 0..200 {
                assert_eq!(g.next_fit(8192), (plain.next(8192), 8192));
            }
        }
        let mut g = gen(region(64), &random(false, 1, 100), 1, 0);
        let mut plain = gen(region(64), &random(false, 1, 100), 1, 0);
        g.cover_once(K4).unwrap();
        for _ in 0..200 {
            assert_eq!(g.next_fit(4096), (plain.next(4096), 4096));
        }
    }

    #[test]
    fn a_sequential_pass_ends_on_the_region_end_with_a_shorter_io() {
        let mut g = gen(region(10), &Pattern::Sequential { gap: 0 }, 1, 0);
        assert_eq!(g.next_fit(16384), (0, 16384));
        assert_eq!(g.next_fit(16384), (16384, 16384));
        // 8k left: the I/O is cut to it, and the next pass starts at 0.
        assert_eq!(g.next_fit(16384), (32768, 8192));
        assert_eq!(g.pass(), 1);
        assert_eq!(g.next_fit(16384), (0, 16384));
    }

    #[test]
    fn a_negative_gap_reads_backwards_as_fio_does() {
        // fio 3.33, rw=read:-8k bs=4k over 64k: 0, 56k, 52k, ..., 4k, 0, 56k.
        let rw = RwSpec {
            mode: RwMode::Read,
            modifier: Some(-8192),
        };
        let p = Pattern::from_rw(rw, Distribution::Random, false, 100);
        assert_eq!(p, Pattern::Backward { step: 8192 });
        let mut g = gen(region(16), &p, 1, 0);
        let offs: Vec<u64> = (0..17).map(|_| g.next_fit(4096).0 / K4).collect();
        assert_eq!(
            offs,
            [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 14]
        );
        assert_eq!(g.pass(), 2);
        g.restart();
        assert_eq!(g.next_fit(4096), (0, 4096));
        // A step shorter than the I/O moves forwards, overlapping, and
        // starts over at the start where an I/O would pass the end.
        let mut g = gen(region(4), &Pattern::Backward { step: 4096 }, 1, 0);
        let offs: Vec<u64> = (0..5).map(|_| g.next(8192) / K4).collect();
        assert_eq!(offs, [0, 1, 2, 0, 1]);
    }

    #[test]
    fn the_touched_map_is_counted_in_bits() {
        assert_eq!(touched_map_bytes(1), 8);
        assert_eq!(touched_map_bytes(64), 8);
        assert_eq!(touched_map_bytes(65), 16);
        assert_eq!(touched_map_bytes(1 << 30), 1 << 27);
    }

    proptest! {
        #[test]
        fn mapped_passes_cover_every_block_once(
            blocks in 1u64..300,
            seed in any::<u64>(),
            big in 1u32..40,
        ) {
            let (cover, _, _) = mapped_pass(blocks, &[4096, big * 4096, 12288], seed);
            prop_assert!(cover.iter().all(|c| *c == 1));
        }
    }

    fn fio_gen(blocks: u64, dist: &Distribution, norandommap: bool) -> OffsetGen {
        let mut g = gen(region(blocks), &random(norandommap, 1, 100), 1, 0);
        g.fio(&FioOffsets {
            distribution: dist,
            norandommap,
            min_bs: K4,
            range_size: K4,
            skew_seed: 7,
            percentage_random: [100; 3],
            lfsr_seed: None,
            units: None,
        })
        .unwrap();
        g
    }

    fn fio_rand() -> OffsetRand {
        let seeds = crate::gen::taus::FioSeeds::new(1, true, false, None, 0, false);
        OffsetRand::new(
            seeds.frand(crate::gen::taus::Purpose::Offset),
            seeds.frand32(crate::gen::taus::Purpose::Zone),
            seeds.frand32(crate::gen::taus::Purpose::SeqRandRead),
        )
    }

    #[test]
    fn the_usual_random_draw_is_the_general_one() {
        // A uniform job with the map and one fixed size takes
        // `draw_fio_block`; drawn through the general `draw_fio` the
        // offsets are the same, through passes whose last draws find
        // taken blocks and a full map, for 32- and 64-bit streams, sizes
        // of a block and less, and a map that wraps (1000 blocks, not a
        // multiple of 64).
        // Without the map (norandommap) the draw is the general one, which
        // counts the passes by I/Os.
        for (wide, size, norandommap) in [
            (false, K4, false),
            (true, K4, false),
            (false, 2048, false),
            (false, K4, true),
        ] {
            let seeds = crate::gen::taus::FioSeeds::new(1, true, false, None, 0, wide);
            let rand = || {
                OffsetRand::new(
                    seeds.frand(crate::gen::taus::Purpose::Offset),
                    seeds.frand32(crate::gen::taus::Purpose::Zone),
                    seeds.frand32(crate::gen::taus::Purpose::SeqRandRead),
                )
            };
            let mut usual = fio_gen(1000, &Distribution::Random, norandommap);
            let mut general = usual.clone();
            assert!(usual.fio.as_ref().is_some_and(|f| f.plain.is_some()));
            assert_eq!(usual.touched.is_none(), norandommap);
            let (mut ra, mut rb) = (rand(), rand());
            let mut bs = BsGen::fixed(size).expect("a fixed size");
            let (mut bs_a, mut bs_b) = (Frand::new(1, false), Frand::new(1, false));
            for i in 0..3500 {
                let a = usual.draw(&mut bs, &mut bs_a, &mut ra, 1);
                let b = general.draw_fio(&mut bs, &mut bs_b, &mut rb, 1);
                assert_eq!(a, b, "draw {i}, wide {wide}, size {size}");
                assert_eq!(usual.pass(), general.pass(), "draw {i}");
            }
            assert_eq!(usual.pass(), 3);
        }
    }

    #[test]
    fn fio_offsets_visit_each_block_once_per_pass_with_the_map() {
        let mut g = fio_gen(1000, &Distribution::Random, false);
        let mut bs = BsGen::fixed(K4).unwrap();
        let (mut bs_rng, mut rand) = (Frand::new(1, false), fio_rand());
        for pass in 1..=2 {
            let offs: Vec<u64> = (0..1000)
                .map(|_| g.draw(&mut bs, &mut bs_rng, &mut rand, 0).0)
                .collect();
            assert_permutation(&offs, 1000);
            assert_eq!(g.pass(), pass);
        }
    }

    #[test]
    fn fio_offsets_cut_split_sizes_to_the_free_blocks() {
        use iolab_spec::value::SplitEntry;
        let mut g = fio_gen(4096, &Distribution::Random, false);
        let e = |bs, pct| SplitEntry { bs, pct };
        let mut bs = BsGen::split(&[e(K4, 50), e(16 * K4, 50)]).unwrap();
        let (mut bs_rng, mut rand) = (Frand::new(3, false), fio_rand());
        let mut seen = vec![false; 4096];
        let mut bytes = 0;
        while g.pass() == 0 {
            let (off, len) = g.draw(&mut bs, &mut bs_rng, &mut rand, 0);
            for b in off / K4..(off + u64::from(len)) / K4 {
                assert!(!seen[b as usize], "block {b} twice");
                seen[b as usize] = true;
            }
            bytes += u64::from(len);
        }
        assert_eq!(bytes, 4096 * K4);
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn a_fixed_size_moved_back_to_fit_marks_the_map_where_it_landed() {
        // Two-block I/Os over 64 blocks whose random blocks may be any of
        // the 64: the last one leaves too little room, and the I/O moves
        // back a block to end at the region's end. The map is marked from
        // where the I/O landed, as fio marks it from the I/O's offset,
        // never from the block drawn.
        let mut g = fio_gen(64, &Distribution::Random, false);
        let mut bs = BsGen::fixed(2 * K4).expect("a fixed size of two blocks");
        let (mut bs_rng, mut rand) = (Frand::new(5, false), fio_rand());
        let mut at_end_and_marked = 0;
        for _ in 0..2000 {
            let before = g.touched.clone().expect("a random map");
            let (off, len) = g.draw(&mut bs, &mut bs_rng, &mut rand, 0);
            let t = g.touched.as_ref().expect("a random map");
            let (first, end) = (off / K4, (off + u64::from(len)) / K4);
            let mut marked = 0;
            for b in 0..64u64 {
                if t.get(b) && !before.get(b) {
                    assert!(
                        (first..end).contains(&b),
                        "block {b} marked by the I/O ({off}, {len})"
                    );
                    marked += 1;
                }
            }
            if first == 62 && marked > 0 {
                at_end_and_marked += 1;
            }
        }
        assert!(
            at_end_and_marked > 0,
            "no I/O at the region's end marked a block"
        );
    }

    #[test]
    fn fio_offsets_without_the_map_or_skewed_stay_in_the_region() {
        let dists = [
            Distribution::Random,
            Distribution::Zipf {
                theta: 1.2,
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
            Distribution::Zoned(vec![(50.0, 10.0), (50.0, 90.0)]),
        ];
        for d in &dists {
            let mut g = fio_gen(500, d, true);
            let mut bs = BsGen::fixed(K4).unwrap();
            let (mut bs_rng, mut rand) = (Frand::new(1, false), fio_rand());
            for _ in 0..5000 {
                let (off, len) = g.draw(&mut bs, &mut bs_rng, &mut rand, 0);
                assert!(off + u64::from(len) <= 500 * K4, "{d:?}");
                assert_eq!(off % K4, 0);
            }
        }
    }
}
