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
//! The header is fio's (`struct verify_header` of fio 3.33), byte for
//! byte, so that data written by fio verifies with iolab and the reverse
//! (little-endian):
//! ```text
//!  0 u16 magic 0xacca   2 u16 verify type (fio's numbers)   4 u32 chunk length
//!  8 u64 data seed     16 u64 offset   24 u32 time (s)   28 u32 time (us)
//! 32 u16 thread        34 u16 write number   36 u32 CRC32C of bytes 0..36
//! 40 data checksum: crc32c and xxhash 4 bytes, md5 16, sha256 64 (fio's
//!    own: the low byte of each state word, then the last 56 bytes of its
//!    final block), meta none
//! ```
//! As in fio, a reader checks the magic, the length, the offset, the
//! header's CRC32C and the data's checksum; the seed is not checked (fio
//! checks it only against its own writes), and the write number is checked
//! by the writing job itself (iolab: against its own record of the last
//! write there). fio writes the time only with `verify=meta`, iolab too.

use md5::{Digest, Md5};

use crate::data::{fill_fixed, DataGen};

/// fio's verify header magic.
const MAGIC: u16 = 0xacca;
/// fio's `struct verify_header`: 40 bytes before the data checksum.
const FIXED: usize = 40;
/// Where the header's own CRC32C is, and so the bytes it covers.
const CRC_AT: usize = 36;

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
    /// The method `verify=` names; None for `verify=0`.
    pub fn of(choice: iolab_spec::options::choices::Verify) -> Option<Method> {
        use iolab_spec::options::choices::Verify as V;
        Some(match choice {
            V::Off => return None,
            V::Crc32c => Method::Crc32c,
            V::Md5 => Method::Md5,
            V::Sha256 => Method::Sha256,
            V::Xxhash => Method::Xxhash,
            V::Meta => Method::Meta,
            V::Pattern => Method::Pattern,
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

    /// fio's `verify_type` number of the method.
    fn code(self) -> u16 {
        match self {
            Method::Meta => 1,
            Method::Md5 => 2,
            Method::Crc32c => 5,
            Method::Sha256 => 9,
            Method::Xxhash => 15,
            Method::Pattern => 18,
        }
    }

    /// The bytes of the data checksum in the header (fio's `vhdr_*`).
    fn sum_len(self) -> usize {
        match self {
            Method::Crc32c | Method::Xxhash => 4,
            Method::Md5 => 16,
            Method::Sha256 => 64,
            Method::Meta | Method::Pattern => 0,
        }
    }

    /// Bytes of header at the start of each chunk.
    pub fn header_len(self) -> usize {
        match self {
            Method::Pattern => 0,
            m => FIXED + m.sum_len(),
        }
    }

    /// The data checksum of `data` as fio stores it (empty for meta and
    /// pattern), on the stack: nothing is allocated per I/O.
    fn sum(self, data: &[u8]) -> Sum {
        match self {
            Method::Crc32c => Sum::of(&fio_crc32c(data).to_le_bytes()),
            Method::Md5 => Sum::of(&Md5::digest(data)),
            Method::Sha256 => Sum::of(&fio_sha256(data)),
            Method::Xxhash => Sum::of(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes()),
            Method::Meta | Method::Pattern => Sum::of(&[]),
        }
    }
}

/// A data checksum as the header stores it: up to 64 bytes (sha256's
/// field), used as a byte slice.
#[derive(Clone, Copy)]
struct Sum {
    b: [u8; 64],
    n: usize,
}

impl Sum {
    fn of(bytes: &[u8]) -> Sum {
        let mut b = [0u8; 64];
        b[..bytes.len()].copy_from_slice(bytes);
        Sum { b, n: bytes.len() }
    }
}

impl std::ops::Deref for Sum {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.b[..self.n]
    }
}

/// fio's CRC32C: the Castagnoli CRC without the final inversion (fio
/// starts from all ones and returns the register as it is).
fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// What fio 3.33 stores for `verify=sha256`: its SHA-256 buffer after the
/// last block, which is not the digest. fio pads the data with 0x80, zeros
/// and the bit count in little-endian order (so its hash is not the
/// standard one), keeps the final 64-byte block in the buffer, and then
/// writes the low byte of each of the eight state words over its first
/// eight bytes.
fn fio_sha256(data: &[u8]) -> [u8; 64] {
    use sha2::digest::generic_array::GenericArray;
    let mut state: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let full = data.len() / 64 * 64;
    let blocks: Vec<_> = data[..full]
        .chunks(64)
        .map(GenericArray::clone_from_slice)
        .collect();
    sha2::compress256(&mut state, &blocks);
    let tail = &data[full..];
    let bits = (data.len() as u32 as u64).wrapping_mul(8);
    let mut block = [0u8; 64];
    block[..tail.len()].copy_from_slice(tail);
    block[tail.len()] = 0x80;
    if tail.len() >= 56 {
        sha2::compress256(&mut state, &[GenericArray::clone_from_slice(&block)]);
        block = [0u8; 64];
    }
    block[56..].copy_from_slice(&bits.to_le_bytes());
    sha2::compress256(&mut state, &[GenericArray::clone_from_slice(&block)]);
    for (b, w) in block.iter_mut().zip(state) {
        *b = w as u8;
    }
    block
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
    /// Write each failed chunk to files in this directory, as read and as
    /// expected (`verify_dump`; see `dump`): fio's `--aux-path`, or the
    /// current directory (an empty path).
    pub dump: Option<std::path::PathBuf>,
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
            chunk >= len || p.is_empty() || chunk.is_multiple_of(p.len())
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
    hdr[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    hdr[2..4].copy_from_slice(&m.code().to_le_bytes());
    put32(hdr, 4, chunk_len);
    put64(hdr, 8, seed);
    put64(hdr, 16, st.offset);
    if m == Method::Meta {
        put32(hdr, 24, (st.time_ns / 1_000_000_000) as u32);
        put32(hdr, 28, (st.time_ns / 1000 % 1_000_000) as u32);
    }
    hdr[32..34].copy_from_slice(&(st.clone.wrapping_add(1) as u16).to_le_bytes());
    hdr[34..36].copy_from_slice(&number_io(st.seq).to_le_bytes());
    let crc = fio_crc32c(&hdr[..CRC_AT]);
    put32(hdr, CRC_AT, crc);
    hdr[FIXED..FIXED + sum.len()].copy_from_slice(&sum);
}

/// fio's 16-bit write number of iolab's write `seq` (counted from 1; fio
/// counts its writes from 0).
fn number_io(seq: u64) -> u16 {
    seq.wrapping_sub(1) as u16
}

/// Whether a good chunk's header was written by iolab's write `seq` (as
/// far as fio's 16-bit write number tells).
pub fn written_by(h: &Header, seq: u64) -> bool {
    h.seq == u64::from(number_io(seq)) + 1
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
/// first chunk (None for verify=pattern or a failure there). `scratch`
/// serves one spec: with verify=pattern it keeps the pattern between calls.
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

/// A chunk's mismatch report.
fn mismatch(
    at: u64,
    len: usize,
    first_bad: BadByte,
    what: String,
    expected: String,
    found: String,
) -> Box<Mismatch> {
    Box::new(Mismatch {
        block: at,
        len,
        first_bad,
        what,
        expected,
        found,
    })
}

/// Checks a `verify=pattern` chunk against the pattern from its first
/// byte, generated once and kept: with verify=pattern the scratch holds
/// nothing else.
fn check_pattern(
    spec: &VerifySpec,
    data: &DataGen,
    c: &[u8],
    at: u64,
    scratch: &mut Vec<u8>,
) -> Result<(), Box<Mismatch>> {
    if scratch.len() < c.len() {
        scratch.resize(c.len(), 0);
        expected_data(spec, data, scratch, 0, 0);
    }
    let scratch = &scratch[..c.len()];
    match first_diff(scratch, c) {
        None => Ok(()),
        Some(i) => Err(mismatch(
            at,
            c.len(),
            BadByte::At(at + i as u64),
            "data differs from verify_pattern".into(),
            format!("byte {:#04x}", scratch[i]),
            format!("byte {:#04x}", c[i]),
        )),
    }
}

/// Checks the header fields whose value is known without trusting the
/// header: magic, verify type, length and offset.
fn check_known_fields(m: Method, c: &[u8], at: u64) -> Result<(), Box<Mismatch>> {
    let mut known = [0u8; 8];
    known[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    known[2..4].copy_from_slice(&m.code().to_le_bytes());
    put32(&mut known, 4, c_len(c.len()));
    let mut known_off = [0u8; 8];
    put64(&mut known_off, 0, at);
    let fields: [(&str, usize, &[u8]); 2] = [("header", 0, &known), ("offset", 16, &known_off)];
    for (name, pos, want) in fields {
        let got = &c[pos..pos + want.len()];
        if let Some(i) = first_diff(want, got) {
            let what = if pos == 0 && i < 2 {
                "bad magic: no fio verify header here (never written with verify, or overwritten)"
                    .to_string()
            } else if pos == 0 && i < 4 {
                "bad header verify type: written with another verify method".to_string()
            } else {
                format!("bad header {name} field")
            };
            return Err(mismatch(
                at,
                c.len(),
                BadByte::At(at + (pos + i) as u64),
                what,
                hex(want),
                hex(got),
            ));
        }
    }
    Ok(())
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
        mismatch(at, c.len(), first_bad, what, expected, found)
    };
    if m == Method::Pattern {
        return check_pattern(spec, data, c, at, scratch).map(|()| None);
    }
    let h = m.header_len();
    if c.len() < h {
        return Ok(None);
    }
    check_known_fields(m, c, at)?;
    let stored_crc = get32(c, CRC_AT);
    let crc = fio_crc32c(&c[..CRC_AT]);
    let stored_sum = &c[FIXED..FIXED + m.sum_len()];
    let sum = m.sum(&c[h..]);
    let seed = get64(c, 8);
    if crc != stored_crc {
        // The data is judged by its own checksum first: when it holds,
        // a field nothing else vouches for is damaged (seed, time,
        // thread, write number or the CRC itself).
        if m != Method::Meta && *sum != *stored_sum {
            let i = first_diff(&sum, stored_sum).unwrap_or(0);
            return Err(fail(
                BadByte::At(at + (FIXED + i) as u64),
                format!("bad header: the stored {} checksum is damaged", m.name()),
                hex(&sum),
                hex(stored_sum),
            ));
        }
        return Err(fail(
            BadByte::Among(at + 8, at + FIXED as u64),
            "bad header checksum".into(),
            format!("crc32c {stored_crc:08x}"),
            format!("crc32c {crc:08x}"),
        ));
    }
    if m != Method::Meta && *sum != *stored_sum {
        // The regenerated data locates the byte only when it is what was
        // written: when it has the checksum the header stored.
        scratch.resize(c.len() - h, 0);
        expected_data(spec, data, scratch, h, seed);
        let regenerated = m.sum(scratch);
        let first_bad = if *regenerated == *stored_sum {
            match first_diff(scratch, &c[h..]) {
                Some(i) => BadByte::At(at + (h + i) as u64),
                None => BadByte::Among(at + h as u64, at + c.len() as u64),
            }
        } else if *regenerated == *sum && first_diff(scratch, &c[h..]).is_none() {
            // The data is what was written: the stored checksum (which
            // the header's CRC does not cover, as in fio) is damaged.
            let i = first_diff(&sum, stored_sum).unwrap_or(0);
            BadByte::At(at + (FIXED + i) as u64)
        } else {
            BadByte::Unlocated
        };
        return Err(fail(
            first_bad,
            format!("bad {} checksum of the data", m.name()),
            hex(stored_sum),
            hex(&sum),
        ));
    }
    let time_ns = u64::from(get32(c, 24)) * 1_000_000_000 + u64::from(get32(c, 28)) * 1000;
    Ok(Some(Header {
        seq: u64::from(u16::from_le_bytes([c[34], c[35]])) + 1,
        seed,
        time_ns,
    }))
}

/// What a failed chunk `c`, read from file offset `at`, should have held,
/// as fio's `verify_dump` regenerates it: the data from the seed in the
/// chunk's header under that header (its data checksum recomputed), or the
/// pattern. None when the header itself fails its checks (magic, method,
/// length, offset, CRC32C): then there is no seed to trust, and fio
/// dumps the chunk as read only.
pub fn expected_chunk(spec: &VerifySpec, data: &DataGen, c: &[u8], at: u64) -> Option<Vec<u8>> {
    let m = spec.method;
    let mut out = vec![0u8; c.len()];
    if m == Method::Pattern {
        expected_data(spec, data, &mut out, 0, 0);
        return Some(out);
    }
    let h = m.header_len();
    if c.len() < h
        || c[0..2] != MAGIC.to_le_bytes()
        || c[2..4] != m.code().to_le_bytes()
        || get32(c, 4) != c_len(c.len())
        || get64(c, 16) != at
        || get32(c, CRC_AT) != fio_crc32c(&c[..CRC_AT])
    {
        return None;
    }
    out.copy_from_slice(c);
    expected_data(spec, data, &mut out[h..], h, get64(c, 8));
    let sum = m.sum(&out[h..]);
    out[FIXED..FIXED + sum.len()].copy_from_slice(&sum);
    Some(out)
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

pub mod dump;

#[cfg(test)]
mod tests;
