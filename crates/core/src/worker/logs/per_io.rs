//! The logs with a line per I/O (`log_avg_msec=0`), written off the
//! worker's thread. Per I/O the worker appends one record to a buffer of
//! 1 MiB (a synchronous engine's, `SyncRec`, is 8 bytes for most I/Os:
//! 131,072 of them; a queued engine's, `Rec`, 64 bytes with its slat and
//! lat); a full buffer goes whole to a thread of the clone's own that
//! makes the lines of every per-I/O log from it and writes them, and
//! comes back empty to be filled again. At the job's
//! end the last buffer is written and the thread ends; what the files
//! hold is what writing every line on the worker's thread would have
//! made. Where no thread can be started the lines are written on the
//! worker's thread, a buffer at a time.
//!
//! The writer runs under SCHED_IDLE where the process may raise it again
//! (root, CAP_SYS_NICE): on a CPU nothing else wants, so that it never
//! takes CPU time from the workers or from the rest of the machine. While
//! it is behind, the worker takes new buffers: `OWN` of its own, then
//! from a pool that all clones share (an eighth of the memory available,
//! at most 1 GiB: 128 million I/Os of a synchronous engine, 16 million of
//! a queued one); with none left it
//! raises the writer to SCHED_OTHER and waits for a buffer, and the
//! writer goes back to SCHED_IDLE once it has caught up. So on a busy
//! machine the lines of a short job are written when it ends, as fio
//! writes its logs, and a long job's worker waits for its writer rather
//! than hold more memory.
//!
//! Buffers are faulted in before they are filled: a clone's first `OWN`
//! when its logs are made (before the measured part of the job), a pool
//! buffer in one call (`host::prefault`). A writer that is behind makes
//! its worker's next pool buffers (up to `AHEAD` empty ones), so that
//! the worker's thread does not spend its time on the memory's faults;
//! the worker makes one itself only when none is waiting. When a clone's logs
//! end, its buffers are kept for the next clone or run of the process
//! (a sweep, a lab campaign), up to the pool's size, rather than given
//! back to the allocator and faulted in again.
//!
//! The slat log's lines are timed at submission and put in time order
//! one buffer at a time, as fio's are (an I/O in flight while its
//! buffer is handed on is written with the next).

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use iolab_engine::host;

use iolab_stats::{DirResult, Moments};

use super::lines::{Format, Lines, LogOut};
use super::Logged;

/// One completed I/O as the per-I/O logs see it: the record of a queued
/// engine's I/O, and what the writer reads of any record.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rec {
    /// ms since the measured part began, at completion and submission.
    pub ms: u64,
    pub slat_ms: u64,
    pub offset: u64,
    /// Latencies in ns, where `has` says they were measured.
    pub slat: u64,
    pub clat: u64,
    pub lat: u64,
    /// Bytes moved and asked for.
    pub bytes: u32,
    pub len: u32,
    pub dir: u8,
    pub has: u8,
}

/// `Rec::has`: which latencies were measured.
pub(super) const SLAT: u8 = 1;
pub(super) const CLAT: u8 = 2;
pub(super) const LAT: u8 = 4;

impl Rec {
    /// fio's bandwidth of one I/O: bytes * 10^6 / its completion
    /// latency in ns (KiB/s to within fio's rounding), 0 without one.
    #[inline]
    pub fn rate(&self) -> u64 {
        if self.has & CLAT != 0 && self.clat > 0 {
            u64::from(self.bytes) * 1_000_000 / self.clat
        } else {
            0
        }
    }
}

/// A synchronous engine's records: it has no slat (no submission step),
/// and its lat is its clat (or it measured one of the two alone), so one
/// latency is kept. A buffer is a run of 8-byte cells, read from its
/// start. Two marks set what the records after them share: the ms since
/// the measured part began, and the size asked for (both 0 at a buffer's
/// start). Most I/Os take one cell (short): the direction, the latencies
/// measured, the latency (under 2^24 ns, 16.7 ms) and the offset (a
/// multiple of 512 below 2^44, 16 TiB; 0 where the lines have no offset
/// column, see `PerIoLogs`), at the marks' ms and size, with
/// all of it moved. Any other takes four (long): its head, the latency,
/// the offset, and the bytes moved and asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SyncRec(u64);

/// A `SyncRec` cell's bits 0-1: a short record's direction (0 to 2), or
/// `CTL` for a mark or a long record's head, whose kind is in bits 2-3.
const CTL: u64 = 3;
const KIND: u64 = 3 << 2;
/// The ms of the records after it, in bits 4-63.
const MS_MARK: u64 = 0;
/// The size of the short records after it, in bits 4-35.
const LEN_MARK: u64 = 1 << 2;
/// A long record's head: direction in bits 4-5, `has` in 6-8; its
/// latency, offset, and bytes moved (0-31) and asked for (32-63) in the
/// three cells after it.
const LONG: u64 = 2 << 2;
/// A short record: `has` in bits 2-4, the latency in 5-28, the offset
/// in 512-byte units in 29-63.
const VALUE_AT: u32 = 5;
const VALUE_BITS: u32 = 24;
const OFFSET_AT: u32 = VALUE_AT + VALUE_BITS;
/// Offsets a short record holds: multiples of 512 below 2^44.
const OFFSET_UNIT: u32 = 9;
const OFFSET_BITS: u32 = 64 - OFFSET_AT + OFFSET_UNIT;

/// What a buffer of `SyncRec` cells has set so far: its marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SyncAt {
    ms: u64,
    len: u32,
}

/// What each buffer of a kind of record holds, read back in order.
pub(super) trait Record: Copy + Default + Send + 'static {
    /// What a buffer has set so far that the records after it depend on
    /// (`Default` for an empty one).
    type At: Copy + Default + Send;
    /// Appends the record of `io` to `buf`, whose state is `at`.
    fn push(buf: &mut Vec<Self>, at: &mut Self::At, io: &Logged);
    /// The records of a buffer, as the writer reads them.
    fn records(buf: &[Self]) -> impl Iterator<Item = Rec> + '_;
    /// The buffers of this kind that no clone holds, faulted in.
    fn shelf() -> &'static Mutex<Vec<Vec<Self>>>;
    /// Cells per buffer.
    const CAP: usize = (BUFFER_BYTES as usize) / std::mem::size_of::<Self>();
    /// Cells one record may take.
    const MOST: usize;
    /// A synchronous engine's record (`SyncRec`), else a queued one's.
    const SYNC: bool;
}

/// `has`'s bit `b` when `v` was measured.
#[inline(always)]
fn bit(v: Option<u64>, b: u8) -> u8 {
    if v.is_some() {
        b
    } else {
        0
    }
}

impl Record for Rec {
    type At = ();
    const SYNC: bool = false;
    const MOST: usize = 1;

    #[inline(always)]
    fn push(buf: &mut Vec<Rec>, _: &mut (), io: &Logged) {
        buf.push(Rec {
            ms: io.ms,
            slat_ms: io.slat_ms,
            offset: io.offset,
            slat: io.slat.unwrap_or(0),
            clat: io.clat.unwrap_or(0),
            lat: io.lat.unwrap_or(0),
            bytes: io.bytes,
            len: io.len,
            dir: io.dir as u8,
            has: bit(io.slat, SLAT) | bit(io.clat, CLAT) | bit(io.lat, LAT),
        });
    }

    fn records(buf: &[Rec]) -> impl Iterator<Item = Rec> + '_ {
        buf.iter().copied()
    }

    fn shelf() -> &'static Mutex<Vec<Vec<Rec>>> {
        static SPARE: Mutex<Vec<Vec<Rec>>> = Mutex::new(Vec::new());
        &SPARE
    }
}

impl SyncRec {
    /// Appends the record of an I/O at `ms` in direction `dir` (0 to 2)
    /// whose latencies `has` says were measured, `value` ns (clat, lat or
    /// both), to `buf`, whose marks are `at`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        buf: &mut Vec<SyncRec>,
        at: &mut SyncAt,
        ms: u64,
        dir: usize,
        has: u8,
        value: u64,
        bytes: u32,
        len: u32,
        offset: u64,
    ) {
        debug_assert!(dir < 3 && ms < 1 << 60);
        let dir = dir as u64 & 3;
        if ms != at.ms {
            at.ms = ms;
            buf.push(SyncRec(CTL | MS_MARK | ms << 4));
        }
        let unit = (1 << OFFSET_UNIT) - 1;
        if bytes == len && (value >> VALUE_BITS | offset & unit | offset >> OFFSET_BITS) == 0 {
            if len != at.len {
                at.len = len;
                buf.push(SyncRec(CTL | LEN_MARK | u64::from(len) << 4));
            }
            buf.push(SyncRec(
                dir | u64::from(has) << 2 | value << VALUE_AT | offset >> OFFSET_UNIT << OFFSET_AT,
            ));
        } else {
            buf.push(SyncRec(CTL | LONG | dir << 4 | u64::from(has) << 6));
            buf.push(SyncRec(value));
            buf.push(SyncRec(offset));
            buf.push(SyncRec(u64::from(bytes) | u64::from(len) << 32));
        }
    }
}

/// The records of a buffer of `SyncRec` cells, from its start.
struct SyncRecs<'a> {
    cells: std::slice::Iter<'a, SyncRec>,
    at: SyncAt,
}

impl SyncRecs<'_> {
    /// The record of an I/O at the marks' ms.
    #[allow(clippy::too_many_arguments)]
    fn rec(&self, dir: u64, has: u64, value: u64, offset: u64, bytes: u32, len: u32) -> Rec {
        let has = (has & 7) as u8;
        let v = |b: u8| if has & b != 0 { value } else { 0 };
        Rec {
            ms: self.at.ms,
            slat_ms: self.at.ms,
            offset,
            slat: 0,
            clat: v(CLAT),
            lat: v(LAT),
            bytes,
            len,
            dir: (dir & 3) as u8,
            has,
        }
    }
}

impl Iterator for SyncRecs<'_> {
    type Item = Rec;

    #[inline]
    fn next(&mut self) -> Option<Rec> {
        loop {
            let c = self.cells.next()?.0;
            if c & CTL != CTL {
                let value = c >> VALUE_AT & ((1 << VALUE_BITS) - 1);
                let offset = c >> OFFSET_AT << OFFSET_UNIT;
                let len = self.at.len;
                return Some(self.rec(c, c >> 2, value, offset, len, len));
            }
            match c & KIND {
                MS_MARK => self.at.ms = c >> 4,
                LEN_MARK => self.at.len = (c >> 4) as u32,
                // A long record's three cells are pushed with its head.
                _ => {
                    let value = self.cells.next()?.0;
                    let offset = self.cells.next()?.0;
                    let sizes = self.cells.next()?.0;
                    let (bytes, len) = (sizes as u32, (sizes >> 32) as u32);
                    return Some(self.rec(c >> 4, c >> 6, value, offset, bytes, len));
                }
            }
        }
    }
}

impl Record for SyncRec {
    type At = SyncAt;
    const SYNC: bool = true;
    /// A mark of the ms, then a long record.
    const MOST: usize = 5;

    /// `io` is a synchronous engine's: no slat, and lat equal to clat
    /// where both were measured (see `Cx::lat_is_clat`).
    #[inline(always)]
    fn push(buf: &mut Vec<SyncRec>, at: &mut SyncAt, io: &Logged) {
        debug_assert!(io.slat.is_none(), "a synchronous I/O has no slat");
        debug_assert!(io.clat.is_none() || io.lat.is_none() || io.clat == io.lat);
        let has = bit(io.clat, CLAT) | bit(io.lat, LAT);
        let value = io.clat.or(io.lat).unwrap_or(0);
        SyncRec::put(
            buf, at, io.ms, io.dir, has, value, io.bytes, io.len, io.offset,
        );
    }

    fn records(buf: &[SyncRec]) -> impl Iterator<Item = Rec> + '_ {
        SyncRecs {
            cells: buf.iter(),
            at: SyncAt::default(),
        }
    }

    fn shelf() -> &'static Mutex<Vec<Vec<SyncRec>>> {
        static SPARE: Mutex<Vec<Vec<SyncRec>>> = Mutex::new(Vec::new());
        &SPARE
    }
}

/// An empty buffer: a spare one, or a new one faulted in.
fn fresh<R: Record>() -> Vec<R> {
    if let Some(b) = R::shelf().lock().ok().and_then(|mut s| s.pop()) {
        return b;
    }
    let mut b = Vec::with_capacity(R::CAP);
    if host::prefault(b.spare_capacity_mut()).is_err() {
        // An older kernel: a write to each page.
        b.resize(R::CAP, R::default());
        std::hint::black_box(&mut b);
        b.clear();
    }
    b
}

/// How many buffers of kind `R` are kept.
#[cfg(test)]
pub(super) fn kept<R: Record>() -> usize {
    R::shelf().lock().map_or(0, |s| s.len())
}

/// Keeps an emptied buffer for the next clone or run, while fewer than
/// the pool's buffers are kept, of both kinds together; frees it
/// otherwise.
fn keep<R: Record>(mut b: Vec<R>) {
    if b.capacity() != R::CAP {
        return;
    }
    b.clear();
    // The other kind's count is read first, without holding this one's.
    let others = if R::SYNC {
        shelved(Rec::shelf())
    } else {
        shelved(SyncRec::shelf())
    };
    if let Ok(mut s) = R::shelf().lock() {
        if s.len() + others < pool() {
            s.push(b);
        }
    }
}

fn shelved<T>(shelf: &Mutex<Vec<Vec<T>>>) -> usize {
    shelf.lock().map_or(0, |s| s.len())
}

/// Frees the buffers kept of kind `sync` (a synchronous engine's records,
/// else a queued one's).
fn release(sync: bool) {
    fn clear<T>(shelf: &Mutex<Vec<Vec<T>>>) {
        if let Ok(mut s) = shelf.lock() {
            *s = Vec::new();
        }
    }
    if sync {
        clear(SyncRec::shelf());
    } else {
        clear(Rec::shelf());
    }
}

/// Frees every buffer kept from earlier runs: for a run with no line per
/// I/O in its logs, which would not use them.
pub(crate) fn release_kept() {
    release(true);
    release(false);
}

/// Bytes of one buffer.
pub(super) const BUFFER_BYTES: u64 = 1 << 20;
/// Buffers a clone may have filled and not yet written, whatever the
/// others hold.
pub(super) const OWN: usize = 4;
/// Buffers beyond their own that the clones of a process may hold
/// together: an eighth of the memory available when first asked, at
/// most `POOL_MAX` and at least `OWN`.
pub(super) fn pool() -> usize {
    const POOL_MAX: usize = 1024;
    static POOL: OnceLock<usize> = OnceLock::new();
    *POOL.get_or_init(|| {
        let avail = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| crate::plan::limits::mem_available(&t))
            .unwrap_or(0);
        ((avail / 8 / BUFFER_BYTES) as usize).clamp(OWN, POOL_MAX)
    })
}
/// The pool's buffers taken.
static TAKEN: AtomicUsize = AtomicUsize::new(0);
/// Empty buffers a writer that is behind keeps made for its worker.
const AHEAD: usize = 4;
/// A writer raised to SCHED_OTHER goes back to SCHED_IDLE when no more
/// than this many buffers wait for it.
const CAUGHT_UP: usize = OWN / 2;

/// A buffer from the shared pool, if one is left.
fn take_spare() -> bool {
    TAKEN
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < pool()).then_some(n + 1)
        })
        .is_ok()
}

/// One per-I/O log file.
pub(super) struct PerIoLog {
    out: LogOut,
    fmt: Format,
}

impl PerIoLog {
    pub fn new(out: LogOut, fmt: Format) -> PerIoLog {
        PerIoLog { out, fmt }
    }

    /// The file open for a write, and its format.
    fn begin(&mut self) -> io::Result<(Lines<'_>, &mut Format)> {
        Ok((self.out.begin()?, &mut self.fmt))
    }
}

/// Per direction, the bandwidth and IOPS samples of the I/Os written:
/// with a line per I/O they are the report's samples, as in fio.
#[derive(Default)]
pub(super) struct Samples {
    pub bw: [Moments; 3],
    pub iops: [Moments; 3],
}

/// The per-I/O log files of a clone.
#[derive(Default)]
pub(super) struct PerIoFiles {
    pub bw: Option<PerIoLog>,
    /// The bandwidth log is made and left empty, and takes no samples
    /// (disable_bw_measurement).
    pub bw_off: bool,
    pub iops: Option<PerIoLog>,
    pub slat: Option<PerIoLog>,
    pub clat: Option<PerIoLog>,
    pub lat: Option<PerIoLog>,
    /// The slat entries of a buffer in submission order.
    pub by_submission: Vec<Rec>,
    pub samples: Samples,
    pub rates: Rates,
}

/// Bandwidths of recent I/Os by their completion latency and size: a
/// fast device's latencies are a few values over and over, and a known
/// one spares a division.
pub(super) struct Rates {
    /// (clat, bytes, bandwidth) by a hash of clat; clat 0 matches none.
    known: Box<[(u64, u32, u64); 256]>,
}

impl Default for Rates {
    fn default() -> Rates {
        Rates {
            known: Box::new([(0, 0, 0); 256]),
        }
    }
}

impl Rates {
    /// `r.rate()`.
    #[inline(always)]
    fn of(&mut self, r: &Rec) -> u64 {
        if r.has & CLAT == 0 || r.clat == 0 {
            return 0;
        }
        let k = &mut self.known[(r.clat.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize];
        if k.0 != r.clat || k.1 != r.bytes {
            *k = (r.clat, r.bytes, r.rate());
        }
        k.2
    }
}

impl PerIoFiles {
    /// Whether any per-I/O log is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some()
            || self.iops.is_some()
            || self.slat.is_some()
            || self.clat.is_some()
            || self.lat.is_some()
    }

    /// Writes the lines of `recs` to each log, in one pass over them; a
    /// lat line the same as the clat line before it is copied from it.
    fn write<R: Record>(&mut self, recs: &[R]) -> io::Result<()> {
        if let Some(log) = &mut self.slat {
            let sorted = &mut self.by_submission;
            sorted.clear();
            sorted.extend(
                R::records(recs)
                    .filter(|r| r.has & SLAT != 0)
                    .map(|r| Rec { ms: r.slat_ms, ..r }),
            );
            // Stable: entries of the same ms keep their order.
            sorted.sort_by_key(|r| r.ms);
            let (mut out, fmt) = log.begin()?;
            for r in sorted.iter() {
                fmt.line(&mut out, r.ms, r.slat, r.dir, r.len, r.offset)?;
            }
            out.end()?;
        }
        let bw = self.bw.as_mut().filter(|_| !self.bw_off);
        let mut bw = bw.map(PerIoLog::begin).transpose()?;
        let mut clat = self.clat.as_mut().map(PerIoLog::begin).transpose()?;
        let mut lat = self.lat.as_mut().map(PerIoLog::begin).transpose()?;
        let mut iops = self.iops.as_mut().map(PerIoLog::begin).transpose()?;
        let s = &mut self.samples;
        for r in R::records(recs) {
            let d = usize::from(r.dir);
            let mut clat_at = None;
            if let (Some((out, fmt)), true) = (&mut clat, r.has & CLAT != 0) {
                // The block written out first, if full: the line stays.
                out.line()?;
                clat_at = Some(out.pos());
                fmt.line(out, r.ms, r.clat, r.dir, r.len, r.offset)?;
            }
            if let (Some((out, fmt)), true) = (&mut lat, r.has & LAT != 0) {
                match (&clat, clat_at) {
                    (Some((from, _)), Some(at)) if r.lat == r.clat => {
                        out.line()?;
                        out.copy(from, at);
                        fmt.forget();
                    }
                    _ => fmt.line(out, r.ms, r.lat, r.dir, r.len, r.offset)?,
                }
            }
            if let Some((out, fmt)) = &mut bw {
                let rate = self.rates.of(&r);
                s.bw[d].record(rate);
                fmt.line(out, r.ms, rate, r.dir, r.len, r.offset)?;
            }
            if let Some((out, fmt)) = &mut iops {
                s.iops[d].record(1);
                fmt.line(out, r.ms, 1, r.dir, r.len, r.offset)?;
            }
        }
        for (out, _) in [bw, clat, lat, iops].into_iter().flatten() {
            out.end()?;
        }
        Ok(())
    }

    /// Makes the files no line was written to yet.
    fn finish(&mut self) -> io::Result<()> {
        for log in [
            &mut self.bw,
            &mut self.iops,
            &mut self.slat,
            &mut self.clat,
            &mut self.lat,
        ]
        .into_iter()
        .flatten()
        {
            log.begin()?.0.end()?;
        }
        Ok(())
    }
}

/// Where full buffers go.
enum Sink<R> {
    /// To the writer thread, and back on `back`; the worker made `made`
    /// buffers (the writer made `Sched::pooled` more), `ready` of them
    /// empty and never handed on.
    Thread {
        to: Option<Sender<Vec<R>>>,
        back: Receiver<Vec<R>>,
        made: usize,
        ready: Vec<Vec<R>>,
        writer: Option<JoinHandle<(PerIoFiles, io::Result<()>)>>,
        sched: Arc<Sched>,
    },
    /// Written here: no thread (none could be started, the job logs
    /// nothing, or the thread has ended).
    Here(Box<PerIoFiles>),
}

/// The writer thread's scheduling, which it and its worker change.
#[derive(Default)]
struct Sched {
    /// Buffers handed on and not yet written.
    queued: AtomicUsize,
    /// Empty buffers the worker may take without making one: those it
    /// holds ready and those given back and not yet taken.
    spare: AtomicUsize,
    /// Buffers of the pool the writer made for its worker.
    pooled: AtomicUsize,
    state: Mutex<SchedState>,
}

#[derive(Default)]
struct SchedState {
    /// The writer's thread id (0 until it runs).
    tid: u32,
    /// Under SCHED_IDLE now.
    idle: bool,
    /// The worker has ended: the writer stays under SCHED_OTHER.
    ended: bool,
}

impl Sched {
    /// While the writer is behind (buffers wait after the one it is to
    /// write) and its worker has fewer than `AHEAD` empty buffers, the
    /// writer makes them from the pool, faulted in, so that the worker
    /// does not fault in memory while it measures; none once the worker
    /// has ended.
    fn ahead<R: Record>(&self, give_back: &Sender<Vec<R>>) {
        if self.state.lock().map_or(true, |s| s.ended) {
            return;
        }
        while self.queued.load(Ordering::Relaxed) > 1
            && self.spare.load(Ordering::Relaxed) < AHEAD
            && take_spare()
        {
            self.pooled.fetch_add(1, Ordering::Relaxed);
            self.spare.fetch_add(1, Ordering::Relaxed);
            if give_back.send(fresh()).is_err() {
                return;
            }
        }
    }

    /// The writer (the calling thread) under SCHED_IDLE, if it may be
    /// raised again and has caught up.
    fn lower(&self, may: bool) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let caught_up = self.queued.load(Ordering::Relaxed) <= CAUGHT_UP;
        if may && caught_up && !s.idle && !s.ended && host::set_thread_idle(s.tid, true).is_ok() {
            s.idle = true;
        }
    }

    /// The writer back under SCHED_OTHER, as its worker waits for it (for
    /// good when the worker has `ended`).
    fn raise(&self, ended: bool) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.ended |= ended;
        if s.idle && host::set_thread_idle(s.tid, false).is_ok() {
            s.idle = false;
        }
    }
}

/// The per-I/O logs as the worker sees them, with records of kind `R`.
pub(super) struct PerIo<R: Record> {
    buf: Vec<R>,
    /// `buf`'s state (see `Record::push`).
    at: R::At,
    sink: Sink<R>,
}

impl<R: Record> PerIo<R> {
    /// The logs that `files` makes, written by a thread of their own
    /// when `threaded` and one can be started (named `name`). Its own
    /// buffers are faulted in now.
    pub fn new(files: impl Fn() -> PerIoFiles, threaded: bool, name: String) -> PerIo<R> {
        let sink = match threaded {
            true => spawn(files(), name).unwrap_or_else(|_| Sink::Here(Box::new(files()))),
            false => Sink::Here(Box::new(files())),
        };
        // The other kind's kept buffers would not be used: freed, so
        // that the clones hold no more than the pool the plan counted.
        release(!R::SYNC);
        let buf = match &sink {
            Sink::Thread { .. } => fresh(),
            Sink::Here(_) => Vec::with_capacity(R::CAP),
        };
        PerIo {
            buf,
            at: R::At::default(),
            sink,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, io: &Logged) {
        R::push(&mut self.buf, &mut self.at, io);
    }

    /// Whether the buffer is to be handed on now: another record might
    /// not fit.
    #[inline(always)]
    pub fn full(&self) -> bool {
        self.buf.len() + R::MOST > R::CAP
    }

    /// Hands the buffer on (or writes it where there is no thread) and
    /// takes an empty one. An error is the writer's: the job stops.
    pub fn hand_off(&mut self) -> io::Result<()> {
        self.hand_on(false)
    }

    /// `hand_off`, taking no buffer after the `last`.
    fn hand_on(&mut self, last: bool) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let (to, back, made, ready, sched) = match &mut self.sink {
            Sink::Thread {
                to,
                back,
                made,
                ready,
                sched,
                ..
            } => (to, back, made, ready, sched),
            Sink::Here(files) => {
                files.write(&self.buf)?;
                self.buf.clear();
                self.at = R::At::default();
                return Ok(());
            }
        };
        let next = if last {
            Vec::new()
        } else {
            let spare = || sched.spare.fetch_sub(1, Ordering::Relaxed);
            match back.try_recv() {
                Ok(b) => {
                    spare();
                    b
                }
                Err(_) if !ready.is_empty() => {
                    spare();
                    ready.pop().unwrap_or_default()
                }
                Err(_) if take_spare() => {
                    *made += 1;
                    fresh()
                }
                // The writer is behind and no buffer is left: it runs as any
                // thread does until it has caught up, and the worker waits
                // for a buffer (or its end, which the send below finds).
                Err(_) => {
                    sched.raise(false);
                    match back.recv() {
                        Ok(b) => {
                            spare();
                            b
                        }
                        Err(_) => Vec::with_capacity(R::CAP),
                    }
                }
            }
        };
        let full = std::mem::replace(&mut self.buf, next);
        self.at = R::At::default();
        sched.queued.fetch_add(1, Ordering::Relaxed);
        let sent = to.as_ref().is_some_and(|to| to.send(full).is_ok());
        if !sent {
            return self.join();
        }
        Ok(())
    }

    /// Waits for the writer thread to write what it was given and end;
    /// its error if it failed.
    fn join(&mut self) -> io::Result<()> {
        let Sink::Thread {
            to,
            back,
            writer,
            made,
            ready,
            sched,
        } = &mut self.sink
        else {
            return Ok(());
        };
        // What is left is written as any thread's work, now.
        sched.raise(true);
        drop(to.take());
        let (files, r) = match writer.take().map(JoinHandle::join) {
            Some(Ok(done)) => done,
            _ => (
                PerIoFiles::default(),
                Err(io::Error::other("the log writer thread ended early")),
            ),
        };
        // The buffers it gave back, and those never handed on, are kept
        // for the next; the worker keeps the one it fills.
        for b in back.try_iter().chain(ready.drain(..)) {
            keep(b);
        }
        let pooled = sched.pooled.swap(0, Ordering::Relaxed);
        TAKEN.fetch_sub(made.saturating_sub(OWN) + pooled, Ordering::Relaxed);
        *made = 0;
        self.sink = Sink::Here(Box::new(files));
        r
    }

    /// The job has ended: every line is written, every file made, and
    /// the samples of the I/Os logged are added to `dirs`.
    pub fn finish(&mut self, dirs: &mut [DirResult; 3]) -> io::Result<()> {
        self.hand_on(true)?;
        self.join()?;
        if let Sink::Here(files) = &mut self.sink {
            files.finish()?;
            let s = std::mem::take(&mut files.samples);
            for (r, (bw, iops)) in dirs.iter_mut().zip(s.bw.iter().zip(&s.iops)) {
                r.bw_samples.merge(bw);
                r.iops_samples.merge(iops);
            }
        }
        Ok(())
    }
}

impl PerIo<SyncRec> {
    /// Appends the record of an I/O whose lat is its clat, both
    /// measured.
    #[inline(always)]
    pub fn push_clat_lat(
        &mut self,
        ms: u64,
        dir: usize,
        clat: u64,
        bytes: u32,
        len: u32,
        offset: u64,
    ) {
        SyncRec::put(
            &mut self.buf,
            &mut self.at,
            ms,
            dir,
            CLAT | LAT,
            clat,
            bytes,
            len,
            offset,
        );
    }
}

impl<R: Record> Drop for PerIo<R> {
    /// A job that ends without `finish` (a panic) leaves no thread
    /// writing behind it. The buffer is kept for the next.
    fn drop(&mut self) {
        let _ = self.join();
        keep(std::mem::take(&mut self.buf));
    }
}

fn spawn<R: Record>(mut files: PerIoFiles, name: String) -> io::Result<Sink<R>> {
    let (to, from) = channel::<Vec<R>>();
    let (give_back, back) = channel::<Vec<R>>();
    let sched = Arc::new(Sched {
        spare: AtomicUsize::new(OWN - 1),
        ..Sched::default()
    });
    let its = Arc::clone(&sched);
    let writer = std::thread::Builder::new().name(name).spawn(move || {
        let may = host::may_leave_idle();
        if let Ok(mut s) = its.state.lock() {
            s.tid = host::thread_id();
        }
        its.lower(may);
        for mut recs in from {
            its.ahead(&give_back);
            if let Err(e) = files.write(&recs) {
                return (files, Err(e));
            }
            recs.clear();
            its.queued.fetch_sub(1, Ordering::Relaxed);
            its.lower(may);
            // The worker has finished when it no longer takes buffers.
            its.spare.fetch_add(1, Ordering::Relaxed);
            let _ = give_back.send(recs);
        }
        (files, Ok(()))
    })?;
    // The clone's own buffers but the one it fills first.
    let ready = (1..OWN).map(|_| fresh()).collect();
    Ok(Sink::Thread {
        to: Some(to),
        back,
        made: OWN,
        ready,
        writer: Some(writer),
        sched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An I/O as a synchronous engine logs it: ms, direction, which
    /// latencies were measured, the latency, bytes moved and asked for,
    /// offset.
    type Io = (u64, usize, u8, u64, u32, u32, u64);

    fn io() -> impl Strategy<Value = Io> {
        (
            // A step from the I/O before: mostly none or small, sometimes
            // large.
            prop_oneof![Just(0u64), 0u64..3, 0u64..1 << 40],
            0usize..3,
            prop_oneof![Just(CLAT | LAT), Just(CLAT), Just(LAT)],
            prop_oneof![
                0u64..100_000,
                (1u64 << 24) - 2..(1u64 << 24) + 2,
                any::<u64>()
            ],
            prop_oneof![Just(true), Just(false)],
            // Sizes: mostly the size before, sometimes another.
            prop_oneof![Just(4096u32), Just(512u32), 0u32..1 << 20, any::<u32>()],
            // Offsets: multiples of 512 within a short record's reach, at
            // its end, and any.
            prop_oneof![
                (0u64..1 << 35).prop_map(|u| u << 9),
                ((1u64 << 35) - 2..(1u64 << 35) + 2).prop_map(|u| u << 9),
                any::<u64>()
            ],
        )
            .prop_map(|(step, dir, has, value, whole, len, offset)| {
                let bytes = if whole { len } else { len / 3 };
                (step, dir, has, value, bytes, len, offset)
            })
    }

    #[test]
    fn a_writer_behind_makes_its_workers_next_buffers() {
        let _one = crate::worker::logs::tests::SYNC
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let sched = Sched {
            spare: AtomicUsize::new(1),
            ..Sched::default()
        };
        let (give_back, back) = channel::<Vec<SyncRec>>();
        // Caught up (the buffer it is to write is the only one): none.
        sched.queued.store(1, Ordering::Relaxed);
        sched.ahead(&give_back);
        assert_eq!(back.try_iter().count(), 0);
        // Behind: the worker's empty buffers made up to `AHEAD`, from the
        // pool.
        sched.queued.store(3, Ordering::Relaxed);
        sched.ahead(&give_back);
        let made: Vec<_> = back.try_iter().collect();
        assert_eq!(made.len(), AHEAD - 1);
        assert!(made
            .iter()
            .all(|b| b.is_empty() && b.capacity() == SyncRec::CAP));
        assert_eq!(sched.pooled.load(Ordering::Relaxed), AHEAD - 1);
        assert_eq!(sched.spare.load(Ordering::Relaxed), AHEAD);
        // The worker has them: none more.
        sched.ahead(&give_back);
        assert_eq!(back.try_iter().count(), 0);
        // Nor for a worker that has ended, which takes no more.
        sched.spare.store(0, Ordering::Relaxed);
        sched.raise(true);
        sched.ahead(&give_back);
        assert_eq!(back.try_iter().count(), 0);
        assert_eq!(sched.pooled.load(Ordering::Relaxed), AHEAD - 1);
        TAKEN.fetch_sub(AHEAD - 1, Ordering::Relaxed);
        for b in made {
            keep(b);
        }
    }

    #[test]
    fn the_buffers_a_writer_made_go_back_to_the_pool_when_its_job_ends() {
        let _one = crate::worker::logs::tests::SYNC
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let before = TAKEN.load(Ordering::Relaxed);
        let mut p = PerIo::<SyncRec>::new(PerIoFiles::default, true, "w".into());
        let Sink::Thread { sched, .. } = &p.sink else {
            panic!("no writer thread was started");
        };
        let sched = Arc::clone(sched);
        // As if many buffers waited: the writer is behind at each one it
        // takes, and makes the worker's next ones from the pool.
        sched.queued.fetch_add(1000, Ordering::Relaxed);
        let mut i = 0u64;
        for _ in 0..2 * OWN {
            while !p.full() {
                p.push_clat_lat(i / 100, 0, 1000, 4096, 4096, i << 12);
                i += 1;
            }
            p.hand_off().expect("a full buffer is handed to the writer");
        }
        // The writer has made some (it did at the first buffer it took).
        let t0 = std::time::Instant::now();
        while sched.pooled.load(Ordering::Relaxed) == 0 {
            assert!(t0.elapsed().as_secs() < 30, "the writer made no buffer");
            std::thread::yield_now();
        }
        assert!(TAKEN.load(Ordering::Relaxed) > before);
        p.finish(&mut Default::default())
            .expect("the writer writes what it was given and ends");
        assert_eq!(TAKEN.load(Ordering::Relaxed), before);
        assert_eq!(sched.pooled.load(Ordering::Relaxed), 0);
    }

    proptest! {
        /// Every record reads back as it was made, in order, whatever its
        /// fields; one that fits the short form takes one cell, and a mark
        /// is made only where the ms or the size of the short records
        /// changes.
        #[test]
        fn a_synchronous_engines_records_read_back_whole(ios in prop::collection::vec(io(), 0..300)) {
            let (mut buf, mut at, mut ms) = (Vec::new(), SyncAt::default(), 0u64);
            let mut want = Vec::new();
            // The cells the records should take, and the marks' state.
            let (mut cells, mut marked) = (0, (0u64, 0u32));
            for (step, dir, has, value, bytes, len, offset) in ios {
                ms = (ms + step) % (1 << 45);
                let fits = value < 1 << 24
                    && bytes == len
                    && offset % 512 == 0
                    && offset < 1 << 44;
                cells += usize::from(ms != marked.0);
                marked.0 = ms;
                if fits {
                    cells += 1 + usize::from(len != marked.1);
                    marked.1 = len;
                } else {
                    cells += 4;
                }
                SyncRec::put(&mut buf, &mut at, ms, dir, has, value, bytes, len, offset);
                want.push((ms, dir as u8, has, value, bytes, len, offset));
            }
            prop_assert_eq!(buf.len(), cells);
            let got: Vec<_> = SyncRec::records(&buf)
                .map(|r| {
                    // The latency is in the logs `has` names, 0 in the others.
                    let value = if r.has & CLAT != 0 { r.clat } else { r.lat };
                    let in_log = |bit: u8| if r.has & bit != 0 { value } else { 0 };
                    prop_assert_eq!((r.slat_ms, r.slat), (r.ms, 0));
                    prop_assert_eq!((r.clat, r.lat), (in_log(CLAT), in_log(LAT)));
                    Ok((r.ms, r.dir, r.has, value, r.bytes, r.len, r.offset))
                })
                .collect::<Result<_, _>>()?;
            prop_assert_eq!(got, want);
        }
    }
}
