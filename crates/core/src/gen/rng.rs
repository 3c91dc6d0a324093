//! The seeded pseudo-random generator behind every random choice of a job
//! clone: xoshiro256** (Blackman and Vigna), its state filled by splitmix64.
//! `Rng::for_job` gives each job clone and each `Stream` (offsets, block
//! sizes per direction, the read/write mix, buffer data, ...) its own
//! sequence, so that changing one option does not shift another's sequence
//! and two clones of a job never issue the same pattern. `Seeds` applies
//! fio's seed options (`randrepeat`, `allrandrepeat`, `randseed`).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::{SystemTime, UNIX_EPOCH};

use iolab_stats::Dir;

/// fio's default `randseed` (0x89): the seed of every repeatable run.
pub const DEFAULT_SEED: u64 = 0x89;

/// What a random sequence is used for. Each stream of a job clone is
/// independent of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Offsets: the permutation keys, random run starts, skewed draws and
    /// the `percentage_random` coin.
    Offset,
    /// Block sizes of one direction (`bsrange`, `bssplit`).
    BlockSize(Dir),
    /// The direction of each I/O of a mixed pattern (`rwmixread`).
    RwMix,
    /// Buffer contents.
    Data,
    /// Which file is served next (`file_service_type`).
    FileService,
    /// A stream for another consumer; each number is its own stream.
    Other(u32),
}

impl Stream {
    /// A fixed number per stream, mixed into the seed. These never change:
    /// changing one would change every sequence of that stream.
    fn id(self) -> u64 {
        match self {
            Stream::Offset => 1,
            Stream::BlockSize(d) => 2 + d as u64,
            Stream::RwMix => 5,
            Stream::Data => 6,
            Stream::FileService => 7,
            Stream::Other(n) => (1 << 32) | u64::from(n),
        }
    }

    /// Whether the stream shapes the I/O pattern (where, how big, which
    /// direction, which file), which `randrepeat` makes repeatable, rather
    /// than data, which only `allrandrepeat` does.
    pub fn is_pattern(self) -> bool {
        !matches!(self, Stream::Data | Stream::Other(_))
    }
}

/// The base seeds of a job, from fio's options:
///
/// - `randseed=N` given: every stream starts from N, whatever `randrepeat`
///   says (fio: "if not set, the random sequence depends on randrepeat").
/// - else the pattern streams (`Stream::is_pattern`) start from fio's
///   default seed when `randrepeat=1` (the default) or `allrandrepeat=1`,
///   and from fresh entropy otherwise;
/// - the other streams (data) start from the default seed only with
///   `allrandrepeat=1`, and from fresh entropy otherwise.
///
/// Resolve once per job and share the result between its clones, which
/// `Rng::for_job` then tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub pattern: u64,
    pub other: u64,
    /// The options as given, for fio's own per-purpose seeds (`fio`).
    repeat: bool,
    all_repeat: bool,
    randseed: Option<u64>,
}

impl Seeds {
    /// Whether the streams that shape the I/O start over at each loop of
    /// the job (`randrepeat`): fio seeds them again then.
    pub fn repeats(&self) -> bool {
        self.repeat
    }

    /// Whether the job gave `randseed`.
    pub fn randseed_given(&self) -> bool {
        self.randseed.is_some()
    }

    pub fn resolve(randrepeat: bool, allrandrepeat: bool, randseed: Option<u64>) -> Seeds {
        if let Some(seed) = randseed {
            return Seeds {
                pattern: seed,
                other: seed,
                repeat: randrepeat,
                all_repeat: allrandrepeat,
                randseed,
            };
        }
        Seeds {
            repeat: randrepeat,
            all_repeat: allrandrepeat,
            randseed,
            pattern: if randrepeat || allrandrepeat {
                DEFAULT_SEED
            } else {
                entropy_seed()
            },
            other: if allrandrepeat {
                DEFAULT_SEED
            } else {
                entropy_seed()
            },
        }
    }

    /// fio's per-purpose seeds of the job clone that fio numbers `thread`
    /// (1 for the run's first clone), for the 64-bit generator when
    /// `use64`. Without `randrepeat` and `randseed` they are fresh, from
    /// the pattern seed (itself fresh then).
    pub fn fio(&self, thread: u32, use64: bool) -> super::taus::FioSeeds {
        super::taus::FioSeeds::new(
            thread,
            self.repeat,
            self.all_repeat,
            self.randseed,
            self.pattern ^ u64::from(thread).wrapping_mul(GOLDEN),
            use64,
        )
    }

    /// The base seed of a stream.
    pub fn for_stream(&self, stream: Stream) -> u64 {
        if stream.is_pattern() {
            self.pattern
        } else {
            self.other
        }
    }

    /// The generator of one stream of one job clone.
    pub fn rng(&self, clone: u32, stream: Stream) -> Rng {
        Rng::for_job(self.for_stream(stream), clone, stream)
    }
}

/// A seed that differs from run to run: the clock hashed with the
/// standard library's randomly keyed hasher (keys from the OS).
pub fn entropy_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    RandomState::new().hash_one(nanos)
}

/// splitmix64's output function: a bijection of 64-bit values that mixes
/// every input bit into every output bit.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// xoshiro256**: 256 bits of state, period 2^256 - 1, fast and good enough
/// for any statistical use (not for cryptography).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose state is four splitmix64 outputs from `seed`, as
    /// the xoshiro authors recommend. Every seed is usable.
    pub fn from_seed(seed: u64) -> Rng {
        let mut x = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            x = x.wrapping_add(GOLDEN);
            *w = mix64(x);
        }
        if s == [0; 4] {
            // The one state xoshiro cannot leave; unreachable in practice.
            s[0] = GOLDEN;
        }
        Rng { s }
    }

    /// The generator of one stream of one job clone. `clone` should be
    /// unique across the run (fio mixes its global thread number into its
    /// seeds, so two jobs with the same options differ too).
    pub fn for_job(seed: u64, clone: u32, stream: Stream) -> Rng {
        let key = mix64(mix64(mix64(seed) ^ u64::from(clone)) ^ stream.id().wrapping_mul(GOLDEN));
        Rng::from_seed(key)
    }

    /// An independent generator numbered `index`, derived from this one's
    /// current state without advancing it (one per file, per direction, or
    /// per part of a generator).
    pub fn substream(&self, index: u64) -> Rng {
        let a = mix64(self.s[0] ^ mix64(index.wrapping_add(GOLDEN)));
        let b = mix64(self.s[1].rotate_left(17) ^ self.s[2] ^ a);
        Rng::from_seed(a ^ b.rotate_left(32) ^ self.s[3])
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `[0, n)`, without bias (Lemire's multiply and
    /// reject). `below(0)` is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // Reject the low products that would make some results more
            // likely: 2^64 mod n of them.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    /// A uniform float in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `pct`/100 (`pct` of 100 or more: always).
    #[inline]
    pub fn percent(&mut self, pct: u32) -> bool {
        self.below(100) < u64::from(pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(rng: &mut Rng, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.next_u64()).collect()
    }

    #[test]
    fn xoshiro_reference_outputs() {
        // The reference implementation with state {1, 2, 3, 4}.
        let mut r = Rng { s: [1, 2, 3, 4] };
        assert_eq!(take(&mut r, 3), vec![11520, 0, 1509978240]);
    }

    #[test]
    fn splitmix_seeding_matches_the_reference() {
        // splitmix64 from seed 0: first output 0xE220A8397B1DCDAF.
        let r = Rng::from_seed(0);
        assert_eq!(r.s[0], 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different() {
        let a = take(&mut Rng::for_job(1234, 0, Stream::Offset), 64);
        let b = take(&mut Rng::for_job(1234, 0, Stream::Offset), 64);
        let c = take(&mut Rng::for_job(1235, 0, Stream::Offset), 64);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn clones_and_streams_get_their_own_sequences() {
        let mut seen = std::collections::HashSet::new();
        let streams = [
            Stream::Offset,
            Stream::BlockSize(Dir::Read),
            Stream::BlockSize(Dir::Write),
            Stream::BlockSize(Dir::Trim),
            Stream::RwMix,
            Stream::Data,
            Stream::FileService,
            Stream::Other(0),
            Stream::Other(1),
        ];
        for clone in 0..8 {
            for s in streams {
                let first = take(&mut Rng::for_job(DEFAULT_SEED, clone, s), 4);
                assert!(seen.insert(first), "clone {clone} stream {s:?} repeats");
            }
        }
    }

    #[test]
    fn substreams_are_deterministic_and_distinct() {
        let base = Rng::for_job(7, 3, Stream::Offset);
        let a = take(&mut base.substream(0), 8);
        assert_eq!(a, take(&mut base.substream(0), 8));
        assert_ne!(a, take(&mut base.substream(1), 8));
        assert_ne!(a, take(&mut base.clone(), 8));
    }

    #[test]
    fn below_stays_in_range_and_is_even() {
        let mut r = Rng::from_seed(99);
        assert_eq!(r.below(0), 0);
        assert_eq!(r.below(1), 0);
        let mut counts = [0u32; 3];
        for _ in 0..300_000 {
            counts[r.below(3) as usize] += 1;
        }
        for c in counts {
            assert!((c as i64 - 100_000).abs() < 1_500, "{counts:?}");
        }
        // A bound just above 2^63 rejects almost half the raw draws; the
        // result must still be in range and hit both halves equally.
        let n = (1u64 << 63) + 12345;
        let mut low = 0;
        for _ in 0..20_000 {
            let v = r.below(n);
            assert!(v < n);
            if v < n / 2 {
                low += 1;
            }
        }
        assert!((low as i64 - 10_000).abs() < 500, "{low}");
        assert!(r.below(u64::MAX) < u64::MAX);
    }

    #[test]
    fn unit_is_in_the_unit_interval() {
        let mut r = Rng::from_seed(5);
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let u = r.unit_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        assert!((sum / 100_000.0 - 0.5).abs() < 0.01);
    }

    #[test]
    fn percent_edges() {
        let mut r = Rng::from_seed(5);
        assert!((0..1000).all(|_| !r.percent(0)));
        assert!((0..1000).all(|_| r.percent(100)));
        let hits = (0..100_000).filter(|_| r.percent(30)).count();
        assert!((hits as i64 - 30_000).abs() < 1_000, "{hits}");
    }

    #[test]
    fn seeds_follow_fios_options() {
        // randseed wins over everything.
        let s = Seeds::resolve(false, false, Some(42));
        assert_eq!((s.pattern, s.other), (42, 42));
        // Default: the pattern repeats, data does not.
        let s = Seeds::resolve(true, false, None);
        assert_eq!(s.for_stream(Stream::Offset), DEFAULT_SEED);
        assert_eq!(s.for_stream(Stream::RwMix), DEFAULT_SEED);
        assert_eq!(s.for_stream(Stream::BlockSize(Dir::Write)), DEFAULT_SEED);
        assert_ne!(s.for_stream(Stream::Data), DEFAULT_SEED);
        // allrandrepeat: everything repeats.
        let s = Seeds::resolve(false, true, None);
        assert_eq!((s.pattern, s.other), (DEFAULT_SEED, DEFAULT_SEED));
        // Neither: two resolutions differ.
        let a = Seeds::resolve(false, false, None);
        let b = Seeds::resolve(false, false, None);
        assert_ne!(a.pattern, b.pattern);
        assert_ne!(a.pattern, a.other);
        // Same seeds, same clone, same stream: same generator.
        let s = Seeds::resolve(true, false, None);
        assert_eq!(
            s.rng(2, Stream::Offset),
            Rng::for_job(DEFAULT_SEED, 2, Stream::Offset)
        );
    }
}
