//! The contents of write buffers, as fio's buffer options ask: random data
//! generated once and varied per write (`scramble_buffers`, the default),
//! fresh data per write (`refill_buffers`, implied by
//! `buffer_compress_percentage`, `dedupe_percentage` and verify), zeros
//! (`zero_buffers`), a repeated pattern (`buffer_pattern`), data that
//! compresses by a given share (`buffer_compress_percentage` in chunks of
//! `buffer_compress_chunk`), and writes that repeat an earlier one
//! (`dedupe_percentage`): the last unique one (`dedupe_mode=repeat`, fio's
//! default), or one of a working set, the job's first unique buffers
//! (`dedupe_mode=working_set`, `dedupe_working_set_percentage` of the
//! job's size in blocks of its smallest write size, shared between the
//! jobs with `dedupe_global`). Every generated buffer is a function of a
//! 64-bit seed, so verify can regenerate what was written.

use crate::gen::Rng;

/// What the job's buffer options ask for, decided at plan time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferSpec {
    /// Generate new contents for every write (explicit or implied).
    pub refill: bool,
    /// Vary the reused buffer per write (when not refilling).
    pub scramble: bool,
    pub zero: bool,
    /// `buffer_pattern`, repeated over the buffer (and the fixed part of a
    /// compressible chunk).
    pub pattern: Option<Vec<u8>>,
    /// Percent of each chunk that is fixed (compressible) data.
    pub compress_percentage: Option<u32>,
    /// The chunk the random/fixed split repeats over; 0 is the whole
    /// buffer.
    pub compress_chunk: u64,
    /// Percent of writes that repeat an earlier unique buffer.
    pub dedupe_percentage: u32,
    /// Which earlier buffer a deduplicated write repeats.
    pub dedupe_mode: DedupeMode,
}

/// fio's `dedupe_mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DedupeMode {
    /// The last unique buffer (`repeat`).
    #[default]
    Repeat,
    /// One drawn uniformly from a working set: the first unique buffers
    /// (`working_set`).
    WorkingSet {
        /// `dedupe_working_set_percentage`: the set's size in percent of
        /// the job's size.
        percent: u32,
        /// `dedupe_global`: the set is drawn from the unique buffers of
        /// every job of the run with the option, a share of each in turn
        /// from the job's own, as fio rotates it.
        global: bool,
        /// The job clones of the run (fio's thread count), which the
        /// rotation goes over; set once the plan has them all.
        threads: u32,
    },
}

/// A clone's working set (`DedupeMode::WorkingSet`), decided when the
/// clone starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WorkingSet {
    /// Buffers in the set (at least 1).
    pages: u64,
    /// fio's thread number of this clone (from 1) and the number of
    /// clones in the run, for `dedupe_global`'s rotation.
    thread: u32,
    threads: u32,
}

impl Default for BufferSpec {
    fn default() -> Self {
        BufferSpec {
            refill: false,
            scramble: true,
            zero: false,
            pattern: None,
            compress_percentage: None,
            compress_chunk: 512,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
        }
    }
}

impl BufferSpec {
    /// fio's rule: compression, dedupe and verify regenerate each buffer,
    /// whatever `refill_buffers` says.
    pub fn with_implied_refill(mut self, verify: bool) -> BufferSpec {
        if self.compress_percentage.is_some_and(|p| p < 100) || self.dedupe_percentage > 0 || verify
        {
            self.refill = true;
        }
        self
    }
}

/// How a write buffer is prepared per I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PerWrite {
    /// Reused as filled at set-up (zeros, a pattern, scramble off).
    Reuse,
    /// Reused, with every 8 bytes XORed with a new random word per write
    /// (no two writes share a byte run a compressor or dedupe could find),
    /// then stamped with the offset and write sequence number at the start
    /// of every 4 KiB.
    Scramble,
    /// Generated anew from a seed per write.
    Refill,
}

/// The data generator of one job clone.
#[derive(Clone, Debug)]
pub struct DataGen {
    spec: BufferSpec,
    per_write: PerWrite,
    rng: Rng,
    /// The seed of the last unique buffer, which a dedupe write repeats.
    last_unique: Option<u64>,
    /// With a working set: its source, the key of the unique seeds and
    /// how many unique buffers this clone made.
    working_set: Option<WorkingSet>,
    unique_key: u64,
    uniques: u64,
}

/// The key of the unique buffers of the clones with `dedupe_global`: the
/// same in every clone, so that each can make the others' buffers.
const GLOBAL_DEDUPE_KEY: u64 = 0x5eed_dede_0000_0001;

/// splitmix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DataGen {
    pub fn new(spec: &BufferSpec, rng: Rng) -> DataGen {
        // buffer_compress_percentage=100 is all fixed data: zeros, or the
        // pattern; fio turns it into zero_buffers, which scramble leaves
        // alone.
        let fixed = spec.zero || spec.pattern.is_some() || spec.compress_percentage == Some(100);
        let per_write = if spec.refill {
            PerWrite::Refill
        } else if spec.scramble && !fixed {
            PerWrite::Scramble
        } else {
            PerWrite::Reuse
        };
        DataGen {
            spec: spec.clone(),
            per_write,
            rng,
            last_unique: None,
            working_set: None,
            unique_key: 0,
            uniques: 0,
        }
    }

    /// Turns on `dedupe_mode=working_set` (nothing without that mode) for
    /// the clone with fio's thread number `thread` (from 1), whose job
    /// writes `size` bytes in blocks of at least `min_bs`: fio's working
    /// set is `dedupe_working_set_percentage` of `size`, in `min_bs`
    /// blocks (at least one). The unique buffers are then numbered: the
    /// k-th unique buffer of clone t has a seed of (key, t, k), so the set,
    /// made of first unique buffers, needs no memory.
    pub fn with_working_set(mut self, thread: u32, size: u64, min_bs: u64) -> DataGen {
        if let DedupeMode::WorkingSet {
            percent,
            global,
            threads,
        } = self.spec.dedupe_mode
        {
            self.unique_key = if global {
                GLOBAL_DEDUPE_KEY
            } else {
                self.rng.next_u64()
            };
            let pages = (u128::from(size) * u128::from(percent) / 100) as u64 / min_bs.max(1);
            self.working_set = Some(WorkingSet {
                pages: pages.max(1),
                thread: thread.max(1),
                threads: threads.max(thread).max(1),
            });
        }
        self
    }

    /// The seed of the `k`-th unique buffer of the clone numbered `thread`.
    fn unique_seed(&self, thread: u32, k: u64) -> u64 {
        mix(mix(self.unique_key ^ u64::from(thread).wrapping_mul(0x9e37_79b9_7f4a_7c15)) ^ k)
    }

    /// The seed of buffer `i` of the working set: this clone's i-th unique
    /// buffer; with `dedupe_global`, fio's rotation: the set is cut into
    /// runs of pages / threads buffers (at least one), the first run from
    /// this clone's first unique buffers, each next one from the next
    /// clone's (wrapping).
    fn working_set_seed(&self, set: &WorkingSet, i: u64) -> u64 {
        let global = matches!(
            self.spec.dedupe_mode,
            DedupeMode::WorkingSet { global: true, .. }
        );
        if !global {
            return self.unique_seed(set.thread, i);
        }
        let run = (set.pages / u64::from(set.threads)).max(1);
        let from = (u64::from(set.thread - 1) + i / run) % u64::from(set.threads);
        self.unique_seed(from as u32 + 1, i % run)
    }

    /// Fills a buffer at set-up, before its first write.
    pub fn init(&mut self, buf: &mut [u8]) {
        let seed = self.rng.next_u64();
        self.fill(buf, seed);
    }

    /// Prepares the first `len` bytes of a write buffer for the write
    /// number `seq` at `offset`. Costs nothing when the buffer is reused as
    /// is, one XOR pass and a few stores when scrambled, and a generation
    /// when refilled.
    #[inline]
    pub fn prepare(&mut self, buf: &mut [u8], len: usize, offset: u64, seq: u64) {
        let len = len.min(buf.len());
        match self.per_write {
            PerWrite::Reuse => {}
            PerWrite::Scramble => {
                let key = self.rng.next_u64();
                xor_words(&mut buf[..len], key);
                stamp(&mut buf[..len], offset, seq);
            }
            PerWrite::Refill => {
                let seed = self.next_seed();
                self.fill(&mut buf[..len], seed);
            }
        }
    }

    /// The seed of the next write's contents: the previous unique one for
    /// a dedupe write, else a new one.
    pub fn next_seed(&mut self) -> u64 {
        let pct = self.spec.dedupe_percentage;
        if let Some(set) = self.working_set {
            // fio: with 100 every write repeats the first buffer.
            if pct >= 100 && self.uniques > 0 {
                return self.unique_seed(set.thread, 0);
            }
            if pct > 0 && pct < 100 && self.rng.percent(pct) {
                let i = self.rng.below(set.pages);
                return self.working_set_seed(&set, i);
            }
            let seed = self.unique_seed(set.thread, self.uniques);
            self.uniques += 1;
            return seed;
        }
        if pct > 0 {
            if let Some(last) = self.last_unique {
                if self.rng.percent(pct) {
                    return last;
                }
            }
        }
        let seed = self.rng.next_u64();
        self.last_unique = Some(seed);
        seed
    }

    /// Fills `buf` with the contents `seed` stands for; the same seed and
    /// length always give the same bytes.
    pub fn fill(&self, buf: &mut [u8], seed: u64) {
        let s = &self.spec;
        match s.compress_percentage {
            Some(pct) if pct > 0 => {
                let chunk = match s.compress_chunk as usize {
                    0 => buf.len().max(1),
                    c => c,
                };
                let mut rng = Rng::from_seed(seed);
                for c in buf.chunks_mut(chunk) {
                    let random = (chunk * (100 - pct.min(100) as usize)) / 100;
                    let random = random.min(c.len());
                    fill_random(&mut c[..random], &mut rng);
                    fill_fixed(&mut c[random..], s.pattern.as_deref(), random);
                }
            }
            _ if s.zero => buf.fill(0),
            _ if s.pattern.is_some() => fill_fixed(buf, s.pattern.as_deref(), 0),
            _ => fill_random(buf, &mut Rng::from_seed(seed)),
        }
    }
}

/// Fills `buf` with pseudo-random bytes.
pub fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    // Whole arrays, not copy_from_slice: the same code optimised, and
    // without a bounds and alignment check per word in a debug build
    // (the tests' build lays out every file with it).
    let (words, rest) = buf.as_chunks_mut::<8>();
    for w in words {
        *w = rng.next_u64().to_le_bytes();
    }
    if !rest.is_empty() {
        let last = rng.next_u64().to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&last[..n]);
    }
}

/// Repeats `pattern` over `buf`, as if it had started `phase` bytes
/// before; zeros without a pattern. One period is written byte by byte,
/// the rest by copies that double what is done (a one-byte pattern is a
/// plain fill).
pub fn fill_fixed(buf: &mut [u8], pattern: Option<&[u8]>, phase: usize) {
    match pattern {
        Some(&[b]) => buf.fill(b),
        Some(p) if !p.is_empty() => {
            let first = p.len().min(buf.len());
            for (i, b) in buf[..first].iter_mut().enumerate() {
                *b = p[(phase + i) % p.len()];
            }
            // `done` stays a whole number of periods, so each copy keeps
            // the phase.
            let mut done = first;
            while done < buf.len() {
                let take = done.min(buf.len() - done);
                buf.copy_within(..take, done);
                done += take;
            }
        }
        _ => buf.fill(0),
    }
}

/// Writes the offset and the write's sequence number (little-endian u64s)
/// at the start of every 4 KiB of `buf`, so each written 4 KiB block is
/// unique and says where and when it was written.
#[inline]
fn stamp(buf: &mut [u8], offset: u64, seq: u64) {
    let mut at = 0;
    while at + 16 <= buf.len() {
        let o = offset + at as u64;
        buf[at..at + 8].copy_from_slice(&o.to_le_bytes());
        buf[at + 8..at + 16].copy_from_slice(&seq.to_le_bytes());
        at += 4096;
    }
}

/// XORs every 8 bytes of `buf` with `key` (a tail shorter than 8 bytes
/// with its first bytes).
#[inline]
fn xor_words(buf: &mut [u8], key: u64) {
    let (words, rest) = buf.as_chunks_mut::<8>();
    for w in words {
        *w = (u64::from_ne_bytes(*w) ^ key).to_ne_bytes();
    }
    for (b, k) in rest.iter_mut().zip(key.to_ne_bytes()) {
        *b ^= k;
    }
}

#[cfg(test)]
mod tests;
