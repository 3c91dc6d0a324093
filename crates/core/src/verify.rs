//! Verified writes: the block header iolab writes at the start of every
//! verify chunk (magic, method, lengths, the chunk's offset, the data seed,
//! the write's sequence number, the time, a checksum of the data and a
//! CRC32C of the header itself), the data under it, and the check of a
//! chunk read back, which names the first byte that differs and the
//! checksums expected and found. The first differing byte of the data is
//! found by regenerating what was written from the header's seed, and is
//! named only when the regenerated data has the stored checksum: a job
//! whose buffer options differ from the writer's regenerates other bytes,
//! and then the byte cannot be located. `verify=pattern` writes no header:
//! the whole chunk is `verify_pattern`.
//!
//! Header layout (little-endian):
//! ```text
//!  0 u32 magic "iolV"      4 u8 method   5 u8 0   6 u16 header length
//!  8 u32 chunk length     12 u32 clone  16 u64 offset  24 u64 seed
//! 32 u64 sequence         40 u64 time (ns since the epoch)
//! 48 data checksum (0, 4, 16 or 32 bytes), zero padding to a multiple of 8,
//!    then u32 CRC32C of every header byte before it
//! ```

use md5::{Digest, Md5};
use sha2::Sha256;

use crate::data::{fill_fixed, DataGen};

const MAGIC: u32 = u32::from_le_bytes(*b"iolV");
const FIXED: usize = 48;

/// A verify method (`verify=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Crc32c,
    Md5,
    Sha256,
    /// fio's xxhash: XXH32 with seed 1.
    Xxhash,
    /// The header only, no data checksum.
    Meta,
    /// No header: every byte is `verify_pattern`.
    Pattern,
}

impl Method {
    pub fn from_fio(name: &str) -> Option<Method> {
        Some(match name {
            "crc32c" | "crc32c-intel" => Method::Crc32c,
            "md5" => Method::Md5,
            "sha256" => Method::Sha256,
            "xxhash" => Method::Xxhash,
            "meta" => Method::Meta,
            "pattern" => Method::Pattern,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Crc32c => "crc32c",
            Method::Md5 => "md5",
            Method::Sha256 => "sha256",
            Method::Xxhash => "xxhash",
            Method::Meta => "meta",
            Method::Pattern => "pattern",
        }
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn sum_len(self) -> usize {
        match self {
            Method::Crc32c | Method::Xxhash => 4,
            Method::Md5 => 16,
            Method::Sha256 => 32,
            Method::Meta | Method::Pattern => 0,
        }
    }

    /// Bytes of header at the start of each chunk.
    pub fn header_len(self) -> usize {
        match self {
            Method::Pattern => 0,
            m => (FIXED + m.sum_len()).next_multiple_of(8) + 8,
        }
    }

    /// The data checksum of `data` (empty for meta and pattern).
    fn sum(self, data: &[u8]) -> Vec<u8> {
        match self {
            Method::Crc32c => crc32c::crc32c(data).to_le_bytes().to_vec(),
            Method::Md5 => Md5::digest(data).to_vec(),
            Method::Sha256 => Sha256::digest(data).to_vec(),
            Method::Xxhash => xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes().to_vec(),
            Method::Meta | Method::Pattern => Vec::new(),
        }
    }
}

/// The verify options of a job, decided at plan time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifySpec {
    pub method: Method,
    /// Read back and check after the writes (`do_verify`).
    pub after_write: bool,
    /// Stop at the first failure (`verify_fatal`).
    pub fatal: bool,
    /// Check after every this many writes (`verify_backlog`); 0: after
    /// each loop's writes.
    pub backlog: u64,
    /// Bytes per header (`verify_interval`); 0: the I/O's length.
    pub interval: u32,
    /// `verify_pattern`: the data under the header, or every byte.
    pub pattern: Option<Vec<u8>>,
}

impl VerifySpec {
    /// The chunk length within an I/O of `len` bytes.
    #[inline]
    pub fn chunk(&self, len: usize) -> usize {
        match self.interval as usize {
            0 => len,
            n => n.min(len),
        }
    }
}

/// What is stamped into one write's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub offset: u64,
    pub seq: u64,
    pub clone: u32,
    pub time_ns: u64,
}

/// With `verify=pattern`, whether a write of `len` bytes holds the pattern
/// repeated from its first byte: its chunks are one (no
/// `verify_interval` below `len`) or each a whole number of pattern
/// periods. Then a buffer filled once by [`fill_pattern`] serves every such
/// write up to its length unchanged, since nothing in it depends on the
/// write.
pub fn pattern_is_one_run(spec: &VerifySpec, len: usize) -> bool {
    match (&spec.method, &spec.pattern) {
        (Method::Pattern, Some(p)) => {
            let chunk = spec.chunk(len).max(1);
            chunk >= len || p.is_empty() || chunk % p.len() == 0
        }
        _ => false,
    }
}

/// Fills all of `buf` with the pattern repeated from its first byte (see
/// [`pattern_is_one_run`]).
pub fn fill_pattern(spec: &VerifySpec, buf: &mut [u8]) {
    fill_fixed(buf, spec.pattern.as_deref(), 0);
}

/// Writes the chunks of one write into `buf[..len]`: each chunk's data
/// (from `data` with a seed of its own, or the pattern) under its header.
pub fn prepare_write(spec: &VerifySpec, data: &mut DataGen, buf: &mut [u8], st: Stamp) {
    let io_seed = data.next_seed();
    let chunk = spec.chunk(buf.len()).max(1);
    for (k, c) in buf.chunks_mut(chunk).enumerate() {
        let seed = chunk_seed(io_seed, k as u64);
        let offset = st.offset + (k * chunk) as u64;
        write_chunk(spec, data, c, Stamp { offset, ..st }, seed);
    }
}

fn chunk_seed(io_seed: u64, k: u64) -> u64 {
    // splitmix64 of the pair: chunks of one write differ.
    let mut z = io_seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn write_chunk(spec: &VerifySpec, data: &DataGen, c: &mut [u8], st: Stamp, seed: u64) {
    let m = spec.method;
    let h = m.header_len().min(c.len());
    expected_data(spec, data, &mut c[h..], h, seed);
    if m == Method::Pattern || h < m.header_len() {
        return;
    }
    let sum = m.sum(&c[h..]);
    let chunk_len = c_len(c.len());
    let hdr = &mut c[..h];
    hdr.fill(0);
    put32(hdr, 0, MAGIC);
    hdr[4] = m.code();
    hdr[6..8].copy_from_slice(&(h as u16).to_le_bytes());
    put32(hdr, 8, chunk_len);
    put32(hdr, 12, st.clone);
    put64(hdr, 16, st.offset);
    put64(hdr, 24, seed);
    put64(hdr, 32, st.seq);
    put64(hdr, 40, st.time_ns);
    hdr[FIXED..FIXED + sum.len()].copy_from_slice(&sum);
    let crc = crc32c::crc32c(&hdr[..h - 4]);
    put32(hdr, h - 4, crc);
}

fn c_len(n: usize) -> u32 {
    n.min(u32::MAX as usize) as u32
}

/// The data a chunk holds after a header of `h` bytes.
fn expected_data(spec: &VerifySpec, data: &DataGen, out: &mut [u8], h: usize, seed: u64) {
    match &spec.pattern {
        Some(p) => fill_fixed(out, Some(p), h),
        None => data.fill(out, seed),
    }
}

/// What a good chunk's header said, for the checks a caller adds (the
/// sequence number of the last write there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub seq: u64,
    pub seed: u64,
    pub time_ns: u64,
}

/// Where in the file the first differing byte of a failed chunk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadByte {
    /// Exactly there.
    At(u64),
    /// Somewhere in this range of header bytes (end excluded), which
    /// nothing else vouches for.
    Among(u64, u64),
    /// Not known: the data regenerated to compare with does not have the
    /// stored checksum either, so comparing with it would name a wrong
    /// byte.
    Unlocated,
}

/// Why a chunk failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The chunk's offset in the file.
    pub block: u64,
    pub len: usize,
    /// The offset in the file of the first byte that differs, as far as
    /// it can be told.
    pub first_bad: BadByte,
    pub what: String,
    /// Checksums (hex) expected and found, where one was compared.
    pub expected: String,
    pub found: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "verify failed in the block at offset {} ({} bytes): {}; ",
            self.block, self.len, self.what
        )?;
        match self.first_bad {
            BadByte::At(at) => write!(f, "first differing byte at offset {at}")?,
            BadByte::Among(a, b) => write!(f, "the differing byte is among offsets {a}..{b}")?,
            BadByte::Unlocated => write!(
                f,
                "the differing byte cannot be located: the data regenerated from the block's \
                 seed does not have the stored checksum either (was it written with other \
                 buffer options?)"
            )?,
        }
        if !self.expected.is_empty() || !self.found.is_empty() {
            write!(f, "; expected {}, found {}", self.expected, self.found)?;
        }
        Ok(())
    }
}

/// Checks the chunks of `buf`, read from file offset `offset`; calls
/// `bad` for each failing chunk and returns the headers of the good ones'
/// first chunk (None for verify=pattern or a failure there).
pub fn check_read(
    spec: &VerifySpec,
    data: &DataGen,
    buf: &[u8],
    offset: u64,
    scratch: &mut Vec<u8>,
    bad: &mut dyn FnMut(Mismatch),
) -> Option<Header> {
    let chunk = spec.chunk(buf.len()).max(1);
    let mut first = None;
    for (k, c) in buf.chunks(chunk).enumerate() {
        let at = offset + (k * chunk) as u64;
        match check_chunk(spec, data, c, at, scratch) {
            Ok(h) => {
                if k == 0 {
                    first = h;
                }
            }
            Err(m) => bad(*m),
        }
    }
    first
}

/// Checks one chunk read back from file offset `at`.
pub fn check_chunk(
    spec: &VerifySpec,
    data: &DataGen,
    c: &[u8],
    at: u64,
    scratch: &mut Vec<u8>,
) -> Result<Option<Header>, Box<Mismatch>> {
    let m = spec.method;
    let fail = |first_bad, what: String, expected: String, found: String| {
        Box::new(Mismatch {
            block: at,
            len: c.len(),
            first_bad,
            what,
            expected,
            found,
        })
    };
    if m == Method::Pattern {
        scratch.resize(c.len(), 0);
        expected_data(spec, data, scratch, 0, 0);
        return match first_diff(scratch, c) {
            None => Ok(None),
            Some(i) => Err(fail(
                BadByte::At(at + i as u64),
                "data differs from verify_pattern".into(),
                format!("byte {:#04x}", scratch[i]),
                format!("byte {:#04x}", c[i]),
            )),
        };
    }
    let h = m.header_len();
    if c.len() < h {
        return Ok(None);
    }
    // The fields whose value is known without trusting the header.
    let mut known = [0u8; 16];
    put32(&mut known, 0, MAGIC);
    known[4] = m.code();
    known[6..8].copy_from_slice(&(h as u16).to_le_bytes());
    put32(&mut known, 8, c_len(c.len()));
    let mut known_off = [0u8; 8];
    put64(&mut known_off, 0, at);
    let fields: [(&str, usize, &[u8]); 2] =
        [("header", 0, &known[..12]), ("offset", 16, &known_off)];
    for (name, pos, want) in fields {
        let got = &c[pos..pos + want.len()];
        if let Some(i) = first_diff(want, got) {
            let what = if pos == 0 && i < 4 {
                "bad magic: no iolab verify header here (never written with verify, or overwritten)"
                    .to_string()
            } else {
                format!("bad header {name} field")
            };
            return Err(fail(
                BadByte::At(at + (pos + i) as u64),
                what,
                hex(want),
                hex(got),
            ));
        }
    }
    let stored_crc = get32(c, h - 4);
    let crc = crc32c::crc32c(&c[..h - 4]);
    let stored_sum = &c[FIXED..FIXED + m.sum_len()];
    let sum = m.sum(&c[h..]);
    let seed = get64(c, 24);
    if crc != stored_crc {
        // The header is damaged past its known fields: the checksum field
        // is judged against the data.
        if let Some(i) = first_diff(&sum, stored_sum) {
            return Err(fail(
                BadByte::At(at + (FIXED + i) as u64),
                format!("bad header: the stored {} checksum is damaged", m.name()),
                hex(&sum),
                hex(stored_sum),
            ));
        }
        // The data is intact (it has the stored checksum), so a field
        // nothing else vouches for is damaged: clone, seed, sequence,
        // time, padding or the CRC itself. Data regenerated from the seed
        // could clear or blame the seed only if this job's buffer options
        // were the writer's, which nothing here can tell.
        return Err(fail(
            BadByte::Among(at + 12, at + h as u64),
            "bad header checksum".into(),
            format!("crc32c {stored_crc:08x}"),
            format!("crc32c {crc:08x}"),
        ));
    }
    if m != Method::Meta && sum != stored_sum {
        // The regenerated data locates the byte only when it is what was
        // written: when it has the checksum the header stored.
        scratch.resize(c.len() - h, 0);
        expected_data(spec, data, scratch, h, seed);
        let first_bad = if m.sum(scratch) != stored_sum {
            BadByte::Unlocated
        } else {
            match first_diff(scratch, &c[h..]) {
                Some(i) => BadByte::At(at + (h + i) as u64),
                None => BadByte::Among(at + h as u64, at + c.len() as u64),
            }
        };
        return Err(fail(
            first_bad,
            format!("bad {} checksum of the data", m.name()),
            hex(stored_sum),
            hex(&sum),
        ));
    }
    Ok(Some(Header {
        seq: get64(c, 32),
        seed,
        time_ns: get64(c, 40),
    }))
}

/// The first index where `a` and `b` differ (over the shorter length):
/// one comparison of the whole slices first, the search only when they
/// differ.
fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    if a[..n] == b[..n] {
        return None;
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn get64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests;
