//! fio's own random streams, so that a job draws the same offsets, block
//! sizes and directions as fio 3.33 for the same seeds:
//!
//! - `Frand`: fio's combined Tausworthe generators, the 32-bit one
//!   (L'Ecuyer's taus88, `random_generator=tausworthe`, the default) and the
//!   64-bit one (taus258, `tausworthe64`), seeded as fio seeds them (three or
//!   five words from a linear congruential step on the seed, each kept above
//!   its generator's minimum, then six draws discarded);
//! - `FioSeeds`: the per-purpose seeds fio derives for each job thread
//!   (`rand_seeds[]`): from `randseed` (0x89 unless given), multiplied
//!   through 0x9e370001 and by the thread's number, one seed per purpose
//!   (block sizes per direction, read/write mix, offsets, ...). With
//!   `randrepeat=1` the offset seed is fio's fixed 0xb1899bed times the
//!   thread number, and with `allrandrepeat=1` every seed is that plus its
//!   purpose's index;
//! - `jhash` and `hash_u64`: the hashes fio's zipf, pareto and normal
//!   generators use to seed per file (fio 3.33's jhash, whose initial
//!   value is its 32-bit golden ratio) and to scatter ranks.
//!
//! The thread number is fio's: 1 for the first job clone of the run, then
//! one more per clone in job order (a job's `numjobs` clones follow it).

/// fio's `random_generator`: the generator of the offsets (and, for
/// `tausworthe64`, of the block sizes and files too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Generator {
    /// 32-bit Tausworthe, fio's default.
    #[default]
    Tausworthe,
    /// 64-bit Tausworthe.
    Tausworthe64,
    /// fio's linear feedback shift register, which visits each block once
    /// without a map, in fio's order (`lfsr`).
    Lfsr,
}

impl Generator {
    /// The generator `random_generator=` names.
    pub fn of(choice: iolab_spec::options::choices::RandomGenerator) -> Generator {
        use iolab_spec::options::choices::RandomGenerator as R;
        match choice {
            R::Tausworthe => Generator::Tausworthe,
            R::Tausworthe64 => Generator::Tausworthe64,
            R::Lfsr => Generator::Lfsr,
        }
    }
}

/// fio's fixed seed of the repeatable offset stream (`FIO_RANDSEED`).
pub const FIO_RANDSEED: u64 = 0xb189_9bed;

/// fio's default `randseed`.
pub const FIO_DEFAULT_SEED: u64 = 0x89;

/// The purposes fio seeds apart, as indices of its `rand_seeds[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Block sizes of reads (`bsrange`, `bssplit`); writes and trims follow.
    BlockSizeRead = 0,
    BlockSizeWrite = 1,
    BlockSizeTrim = 2,
    Verify = 3,
    RwMix = 4,
    FileService = 5,
    Offset = 6,
    FileSize = 7,
    TrimBacklog = 8,
    Buffer = 9,
    SeqRandRead = 10,
    SeqRandWrite = 11,
    SeqRandTrim = 12,
    StartDelay = 13,
    Dedupe = 14,
    Poisson = 15,
    Zone = 16,
}

/// How many seeds fio derives per thread.
pub const SEED_COUNT: usize = 21;

/// One generator state: 32 bits (three words) or 64 bits (five words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frand {
    T32([u32; 3]),
    T64([u64; 5]),
}

#[inline]
fn at_least(x: u64, m: u64) -> u64 {
    if x < m {
        x + m
    } else {
        x
    }
}

/// The LCG start value fio writes `(2^31) + (2^17) + (2^7)`, which C reads
/// with `^` as exclusive or: 29 + 19 + 5.
const LCG_START: u64 = 53;

impl Frand {
    /// A generator seeded as fio's `init_rand_seed(state, seed, use64)`:
    /// the 32-bit generator takes the seed's low 32 bits.
    pub fn new(seed: u64, use64: bool) -> Frand {
        if use64 {
            let lcg = |x: u64| x.wrapping_mul(6_906_969_069) ^ seed;
            let s1 = at_least(lcg(LCG_START), 1);
            let s2 = at_least(lcg(s1), 7);
            let s3 = at_least(lcg(s2), 15);
            let s4 = at_least(lcg(s3), 33);
            let s5 = at_least(lcg(s4), 49);
            let mut f = Frand::T64([s1, s2, s3, s4, s5]);
            for _ in 0..6 {
                f.next_u64();
            }
            f
        } else {
            let seed = seed as u32;
            let lcg = |x: u32| x.wrapping_mul(69_069) ^ seed;
            let s1 = at_least(u64::from(lcg(LCG_START as u32)), 1) as u32;
            let s2 = at_least(u64::from(lcg(s1)), 7) as u32;
            let s3 = at_least(u64::from(lcg(s2)), 15) as u32;
            let mut f = Frand::T32([s1, s2, s3]);
            for _ in 0..6 {
                f.next_u64();
            }
            f
        }
    }

    /// Whether this is the 64-bit generator.
    pub fn is_64(&self) -> bool {
        matches!(self, Frand::T64(_))
    }

    /// The next raw value: 32 random bits, or 64.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        match self {
            Frand::T32(s) => {
                s[0] = ((s[0] & 0xffff_fffe) << 12) ^ (((s[0] << 13) ^ s[0]) >> 19);
                s[1] = ((s[1] & 0xffff_fff8) << 4) ^ (((s[1] << 2) ^ s[1]) >> 25);
                s[2] = ((s[2] & 0xffff_fff0) << 17) ^ (((s[2] << 3) ^ s[2]) >> 11);
                u64::from(s[0] ^ s[1] ^ s[2])
            }
            Frand::T64(s) => {
                let x = ((s[0] << 1) ^ s[0]) >> 53;
                s[0] = ((s[0] & 0xffff_ffff_ffff_fffe) << 10) ^ x;
                let x = ((s[1] << 24) ^ s[1]) >> 50;
                s[1] = ((s[1] & 0xffff_ffff_ffff_fe00) << 5) ^ x;
                let x = ((s[2] << 3) ^ s[2]) >> 23;
                s[2] = ((s[2] & 0xffff_ffff_ffff_f000) << 29) ^ x;
                let x = ((s[3] << 5) ^ s[3]) >> 24;
                s[3] = ((s[3] & 0xffff_ffff_fffe_0000) << 23) ^ x;
                let x = ((s[4] << 3) ^ s[4]) >> 33;
                s[4] = ((s[4] & 0xffff_ffff_ff80_0000) << 8) ^ x;
                s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
            }
        }
    }

    /// The largest raw value (`rand_max`).
    #[inline]
    pub fn max(&self) -> u64 {
        match self {
            Frand::T32(_) => u64::from(u32::MAX),
            Frand::T64(_) => u64::MAX,
        }
    }

    /// `r / (max + 1.0)` for the next raw value r: in `[0, 1)`, as fio
    /// scales a draw onto a range.
    #[inline]
    pub fn fraction(&mut self) -> f64 {
        // max + 1.0 is 2^32 or 2^64 (u64::MAX rounds up to it): a power
        // of two, by whose exact reciprocal a multiplication gives the
        // quotient bit for bit, for a fraction of the division's time.
        // A 32-bit draw converts to f64 in one instruction (the unsigned
        // 64-bit conversion takes several, and constants from memory).
        match self {
            Frand::T32(_) => {
                let r = self.next_u64() as u32;
                f64::from(r) * (1.0 / 4_294_967_296.0)
            }
            Frand::T64(_) => self.next_u64() as f64 * (1.0 / 18_446_744_073_709_551_616.0),
        }
    }

    /// fio's `rand_between(start, end)`: a value from `start` to `end`,
    /// both included, by scaling one draw.
    #[inline]
    pub fn between(&mut self, start: u64, end: u64) -> u64 {
        let span = end.wrapping_sub(start).wrapping_add(1);
        match self {
            Frand::T32(_) => {
                let r = self.next_u64() as f64;
                let v = (span as u32 as f64 * (r / 4_294_967_296.0)) as i32;
                start.wrapping_add(v as u32 as u64)
            }
            Frand::T64(_) => {
                let r = self.next_u64() as f64;
                let v = (span as f64 * (r / 18_446_744_073_709_551_616.0)) as u64;
                start.wrapping_add(v)
            }
        }
    }
}

/// The seeds of one fio job thread, one per `Purpose`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioSeeds {
    seeds: [u64; SEED_COUNT],
    /// The random generator's word size (`tausworthe64`).
    pub use64: bool,
}

impl FioSeeds {
    /// fio's `setup_random_seeds` and `td_fill_rand_seeds` for the thread
    /// numbered `thread` (1 for the run's first clone). `randseed` is the
    /// option when given; without it and without `randrepeat`, the seeds
    /// come from `entropy`.
    pub fn new(
        thread: u32,
        randrepeat: bool,
        allrandrepeat: bool,
        randseed: Option<u64>,
        entropy: u64,
        use64: bool,
    ) -> FioSeeds {
        let thread = u64::from(thread);
        let mut seeds = [0u64; SEED_COUNT];
        if !randrepeat && randseed.is_none() {
            let mut x = entropy;
            for s in &mut seeds {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                *s = z ^ (z >> 31);
            }
        } else {
            let mut seed = randseed.unwrap_or(FIO_DEFAULT_SEED);
            for _ in 0..4 {
                seed = seed.wrapping_mul(0x9e37_0001);
            }
            for (i, s) in seeds.iter_mut().enumerate() {
                *s = seed.wrapping_mul(thread).wrapping_add(i as u64);
                seed = seed.wrapping_mul(0x9e37_0001);
            }
        }
        if allrandrepeat {
            for (i, s) in seeds.iter_mut().enumerate() {
                *s = FIO_RANDSEED.wrapping_mul(thread).wrapping_add(i as u64);
            }
        }
        if randrepeat {
            seeds[Purpose::Offset as usize] = FIO_RANDSEED.wrapping_mul(thread);
        }
        FioSeeds { seeds, use64 }
    }

    /// The seed of one purpose.
    pub fn seed(&self, p: Purpose) -> u64 {
        self.seeds[p as usize]
    }

    /// The generator of one purpose, of the job's word size.
    pub fn frand(&self, p: Purpose) -> Frand {
        Frand::new(self.seed(p), self.use64)
    }

    /// The generator of one purpose that fio keeps at 32 bits whatever
    /// `random_generator` says (the read/write mix, zones).
    pub fn frand32(&self, p: Purpose) -> Frand {
        Frand::new(self.seed(p), false)
    }
}

/// fio's `__hash_u64`: multiplication by the 64-bit golden ratio.
#[inline]
pub fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(0x61C8_8646_80B5_83EB)
}

/// fio 3.33's `JHASH_INITVAL`: the 32-bit golden ratio of its hash.h
/// (`GOLDEN_RATIO_32`), not lookup3's 0xdeadbeef.
const JHASH_INITVAL: u32 = 0x61c8_8647;

/// Bob Jenkins' lookup3 hash of `key` as fio's `jhash` computes it (fio
/// seeds a file's zipf, pareto or normal generator with it, from the file's
/// name): fio's initial value, and its quirk of adding one byte per word.
pub fn jhash(key: &[u8], initval: u32) -> u32 {
    let mut a: u32 = JHASH_INITVAL
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let mut b = a;
    let mut c = a;
    let mut k = key;
    let word = |k: &[u8], i: usize| u32::from(k[i]);
    while k.len() > 12 {
        // fio adds the first byte of each word, not the word (its own
        // quirk, kept so the seeds are fio's).
        a = a.wrapping_add(word(k, 0));
        b = b.wrapping_add(word(k, 4));
        c = c.wrapping_add(word(k, 8));
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let n = k.len();
    let byte = |i: usize, shift: u32| if i < n { u32::from(k[i]) << shift } else { 0 };
    c = c
        .wrapping_add(byte(11, 24))
        .wrapping_add(byte(10, 16))
        .wrapping_add(byte(9, 8))
        .wrapping_add(byte(8, 0));
    b = b
        .wrapping_add(byte(7, 24))
        .wrapping_add(byte(6, 16))
        .wrapping_add(byte(5, 8))
        .wrapping_add(byte(4, 0));
    a = a
        .wrapping_add(byte(3, 24))
        .wrapping_add(byte(2, 16))
        .wrapping_add(byte(1, 8))
        .wrapping_add(byte(0, 0));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(24));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    // The expected values are fio 3.33's own, printed by
    // `fio --debug=random` ("off rand N") for a randread job.

    #[test]
    fn repeatable_offsets_start_as_fios() {
        // randrepeat=1 (the default), first job: FIO_RANDSEED * 1.
        let s = FioSeeds::new(1, true, false, None, 0, false);
        assert_eq!(s.seed(Purpose::Offset), FIO_RANDSEED);
        let mut f = s.frand(Purpose::Offset);
        assert_eq!(f.next_u64(), 259_043_585);
        assert_eq!(f.next_u64(), 3_179_521_932);
        assert_eq!(f.next_u64(), 3_621_444_214);
    }

    #[test]
    fn an_explicit_seed_without_randrepeat_seeds_the_offsets() {
        // randrepeat=0 randseed=1234.
        let s = FioSeeds::new(1, false, false, Some(1234), 0, false);
        let mut f = s.frand(Purpose::Offset);
        assert_eq!(f.next_u64(), 320_323_601);
        assert_eq!(f.next_u64(), 1_854_933_243);
    }

    #[test]
    fn fraction_is_the_draw_over_max_plus_one_bit_for_bit() {
        for wide in [false, true] {
            let (mut a, mut b) = (Frand::new(11, wide), Frand::new(11, wide));
            let max = a.max() as f64;
            for _ in 0..10_000 {
                let want = b.next_u64() as f64 / (max + 1.0);
                assert_eq!(a.fraction().to_bits(), want.to_bits());
            }
        }
    }

    #[test]
    fn between_covers_both_ends_and_stays_inside() {
        let mut f = Frand::new(7, false);
        let mut seen = [false; 100];
        for _ in 0..100_000 {
            let v = f.between(1, 100);
            assert!((1..=100).contains(&v));
            seen[v as usize - 1] = true;
        }
        assert!(seen.iter().all(|s| *s));
        let mut f = Frand::new(7, true);
        for _ in 0..10_000 {
            assert!((5..=9).contains(&f.between(5, 9)));
        }
    }

    #[test]
    fn the_64_bit_generator_keeps_its_words_valid() {
        let mut f = Frand::new(0, true);
        let first = f.next_u64();
        assert_ne!(first, f.next_u64());
        assert!(f.is_64());
        assert_eq!(f.max(), u64::MAX);
        assert!((0.0..1.0).contains(&f.fraction()));
    }

    #[test]
    fn jhash_is_deterministic_and_spreads() {
        assert_eq!(jhash(b"", 0), 0x61c8_8647);
        // fio 3.33's seeds of a zipf job's files (thread 1), as measured.
        assert_eq!(jhash(b"/dev/shm/ce/f", 0), 0x383b_ca57);
        assert_eq!(jhash(b"/dev/shm/ce/g", 0), 0x4404_b4af);
        let a = jhash(b"/tmp/file.0.0", 0);
        assert_eq!(a, jhash(b"/tmp/file.0.0", 0));
        assert_ne!(a, jhash(b"/tmp/file.0.1", 0));
        assert_ne!(jhash(b"abcdefghijklmnop", 0), jhash(b"abcdefghijklmnoq", 0));
    }
}
