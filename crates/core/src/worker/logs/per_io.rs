//! The logs with a line per I/O (`log_avg_msec=0`), written off the
//! worker's thread. Per I/O the worker appends one record to a buffer of
//! 1 MiB (a synchronous engine's, `SyncRec`, is 16 bytes for most I/Os:
//! 65,536 of them; a queued engine's, `Rec`, 64 bytes with its slat and
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
//! at most 1 GiB: 64 million I/Os of a synchronous engine, 16 million of
//! a queued one); with none left it
//! raises the writer to SCHED_OTHER and waits for a buffer, and the
//! writer goes back to SCHED_IDLE once it has caught up. So on a busy
//! machine the lines of a short job are written when it ends, as fio
//! writes its logs, and a long job's worker waits for its writer rather
//! than hold more memory.
//!
//! Buffers are faulted in before they are filled: a clone's first `OWN`
//! when its logs are made (before the measured part of the job), a pool
//! buffer in one call (`host::prefault`) when taken. When a clone's logs
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
/// latency is kept. Most I/Os take one 16-byte cell (short); one whose
/// latency is 2^32 ns or more, that moved fewer bytes than it asked for,
/// of 256 KiB or more, or that completed 256 ms or more after the record
/// before it in its buffer, takes two (long). A buffer is read from its
/// start: a short record's time is a step from the record before (from 0
/// for the first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SyncRec {
    /// The offset (the first cell), or a long record's latency in ns
    /// (its second).
    a: u64,
    /// First cell: direction (bits 0-1), `has` (2-4), `LONG` (5); short,
    /// the ms since the record before (6-13), the latency in ns (14-45),
    /// the bytes asked for and moved (46-63); long, ms since the measured
    /// part began (6-63, below 2^45: a u64 of ns over 10^6). A long
    /// record's second cell: bytes moved (0-31) and asked for (32-63).
    b: u64,
}

/// `SyncRec::b`: the record takes two cells.
const LONG: u64 = 1 << 5;
/// A short record's fields: widths in bits.
const STEP_BITS: u32 = 8;
const VALUE_BITS: u32 = 32;
const LEN_BITS: u32 = 18;

/// What each buffer of a kind of record holds, read back in order.
pub(super) trait Record: Copy + Default + Send + 'static {
    /// Appends the record of `io` to `buf`. `last`: the buffer's state,
    /// 0 for an empty one (`SyncRec`: the ms of its last record).
    fn push(buf: &mut Vec<Self>, last: &mut u64, io: &Logged);
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
    const SYNC: bool = false;
    const MOST: usize = 1;

    #[inline(always)]
    fn push(buf: &mut Vec<Rec>, _: &mut u64, io: &Logged) {
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
    /// Appends the record of an I/O at `ms` in direction `dir` whose
    /// latencies `has` says were measured, `value` ns (clat, lat or both).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        buf: &mut Vec<SyncRec>,
        last: &mut u64,
        ms: u64,
        dir: usize,
        has: u8,
        value: u64,
        bytes: u32,
        len: u32,
        offset: u64,
    ) {
        let head = dir as u64 & 3 | u64::from(has) << 2;
        let step = ms.wrapping_sub(*last);
        *last = ms;
        if step < 1 << STEP_BITS && value < 1 << VALUE_BITS && bytes == len && len < 1 << LEN_BITS {
            buf.push(SyncRec {
                a: offset,
                b: head | step << 6 | value << (6 + STEP_BITS) | u64::from(len) << (64 - LEN_BITS),
            });
        } else {
            buf.push(SyncRec {
                a: offset,
                b: head | LONG | ms << 6,
            });
            buf.push(SyncRec {
                a: value,
                b: u64::from(bytes) | u64::from(len) << 32,
            });
        }
    }
}

/// The records of a buffer of `SyncRec` cells, from its start.
struct SyncRecs<'a> {
    cells: std::slice::Iter<'a, SyncRec>,
    last: u64,
}

impl Iterator for SyncRecs<'_> {
    type Item = Rec;

    #[inline]
    fn next(&mut self) -> Option<Rec> {
        let c = self.cells.next()?;
        let has = (c.b >> 2 & 7) as u8;
        let (ms, value, bytes, len) = if c.b & LONG == 0 {
            let len = (c.b >> (64 - LEN_BITS)) as u32;
            let value = c.b >> (6 + STEP_BITS) & ((1 << VALUE_BITS) - 1);
            (
                self.last + (c.b >> 6 & ((1 << STEP_BITS) - 1)),
                value,
                len,
                len,
            )
        } else {
            // A long record's second cell is pushed with its first.
            let v = self.cells.next()?;
            (c.b >> 6, v.a, v.b as u32, (v.b >> 32) as u32)
        };
        self.last = ms;
        let v = |b: u8| if has & b != 0 { value } else { 0 };
        Some(Rec {
            ms,
            slat_ms: ms,
            offset: c.a,
            slat: 0,
            clat: v(CLAT),
            lat: v(LAT),
            bytes,
            len,
            dir: (c.b & 3) as u8,
            has,
        })
    }
}

impl Record for SyncRec {
    const SYNC: bool = true;
    const MOST: usize = 2;

    /// `io` is a synchronous engine's: no slat, and lat equal to clat
    /// where both were measured (see `Cx::lat_is_clat`).
    #[inline(always)]
    fn push(buf: &mut Vec<SyncRec>, last: &mut u64, io: &Logged) {
        debug_assert!(io.slat.is_none(), "a synchronous I/O has no slat");
        debug_assert!(io.clat.is_none() || io.lat.is_none() || io.clat == io.lat);
        let has = bit(io.clat, CLAT) | bit(io.lat, LAT);
        let value = io.clat.or(io.lat).unwrap_or(0);
        SyncRec::put(
            buf, last, io.ms, io.dir, has, value, io.bytes, io.len, io.offset,
        );
    }

    fn records(buf: &[SyncRec]) -> impl Iterator<Item = Rec> + '_ {
        SyncRecs {
            cells: buf.iter(),
            last: 0,
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
    /// To the writer thread, and back on `back`; `made` buffers exist,
    /// `ready` of them empty and never handed on.
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
    last: u64,
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
        PerIo { buf, last: 0, sink }
    }

    #[inline(always)]
    pub fn push(&mut self, io: &Logged) {
        R::push(&mut self.buf, &mut self.last, io);
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
                self.last = 0;
                return Ok(());
            }
        };
        let next = if last {
            Vec::new()
        } else {
            match back.try_recv() {
                Ok(b) => b,
                Err(_) if !ready.is_empty() => ready.pop().unwrap_or_default(),
                Err(_) if take_spare() => {
                    *made += 1;
                    fresh()
                }
                // The writer is behind and no buffer is left: it runs as any
                // thread does until it has caught up, and the worker waits
                // for a buffer (or its end, which the send below finds).
                Err(_) => {
                    sched.raise(false);
                    back.recv().unwrap_or_else(|_| Vec::with_capacity(R::CAP))
                }
            }
        };
        let full = std::mem::replace(&mut self.buf, next);
        self.last = 0;
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
        TAKEN.fetch_sub(made.saturating_sub(OWN), Ordering::Relaxed);
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
            &mut self.last,
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
    let sched = Arc::new(Sched::default());
    let its = Arc::clone(&sched);
    let writer = std::thread::Builder::new().name(name).spawn(move || {
        let may = host::may_leave_idle();
        if let Ok(mut s) = its.state.lock() {
            s.tid = host::thread_id();
        }
        its.lower(may);
        for mut recs in from {
            if let Err(e) = files.write(&recs) {
                return (files, Err(e));
            }
            recs.clear();
            its.queued.fetch_sub(1, Ordering::Relaxed);
            its.lower(may);
            // The worker has finished when it no longer takes buffers.
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
            // A step from the I/O before: mostly small, sometimes at or
            // past the short record's reach.
            prop_oneof![0u64..3, 250u64..260, 0u64..1 << 40],
            0usize..3,
            prop_oneof![Just(CLAT | LAT), Just(CLAT), Just(LAT)],
            prop_oneof![
                0u64..100_000,
                (1u64 << 32) - 2..(1u64 << 32) + 2,
                any::<u64>()
            ],
            prop_oneof![Just(true), Just(false)],
            prop_oneof![
                1u32..1 << 18,
                (1u32 << 18) - 2..(1u32 << 18) + 2,
                any::<u32>()
            ],
            any::<u64>(),
        )
            .prop_map(|(step, dir, has, value, whole, len, offset)| {
                let bytes = if whole { len } else { len / 3 };
                (step, dir, has, value, bytes, len, offset)
            })
    }

    proptest! {
        /// Every record reads back as it was made, in order, whatever its
        /// fields; one that fits the short form takes one cell.
        #[test]
        fn a_synchronous_engines_records_read_back_whole(ios in prop::collection::vec(io(), 0..300)) {
            let (mut buf, mut last, mut ms) = (Vec::new(), 0, 0u64);
            let mut want = Vec::new();
            let mut short = 0;
            for (step, dir, has, value, bytes, len, offset) in ios {
                let before = ms;
                ms = (ms + step) % (1 << 45);
                let fits = ms >= before
                    && ms - before < 256
                    && value < 1 << 32
                    && bytes == len
                    && len < 1 << 18;
                short += usize::from(fits);
                SyncRec::put(&mut buf, &mut last, ms, dir, has, value, bytes, len, offset);
                want.push((ms, dir as u8, has, value, bytes, len, offset));
            }
            prop_assert_eq!(buf.len(), short + 2 * (want.len() - short));
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
