//! The logs with a line per I/O (`log_avg_msec=0`), written off the
//! worker's thread. Per I/O the worker appends one fixed-size record to
//! a buffer; a full buffer (16,384 I/Os) goes whole to a thread of the
//! clone's own that makes the lines of every per-I/O log from it and
//! writes them, and comes back empty to be filled again. At the job's
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
//! at most 1 GiB: 16 million I/Os); with none left it
//! raises the writer to SCHED_OTHER and waits for a buffer, and the
//! writer goes back to SCHED_IDLE once it has caught up. So on a busy
//! machine the lines of a short job are written when it ends, as fio
//! writes its logs, and a long job's worker waits for its writer rather
//! than hold more memory.
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

/// One completed I/O as the per-I/O logs see it.
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

/// I/Os per buffer (64 bytes each: 1 MiB).
const RECS: usize = 1 << 14;
/// Bytes of one buffer.
pub(super) const BUFFER_BYTES: u64 = (RECS * std::mem::size_of::<Rec>()) as u64;
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
    fn write(&mut self, recs: &[Rec]) -> io::Result<()> {
        if let Some(log) = &mut self.slat {
            let sorted = &mut self.by_submission;
            sorted.clear();
            sorted.extend(recs.iter().filter(|r| r.has & SLAT != 0).map(|r| Rec {
                ms: r.slat_ms,
                ..*r
            }));
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
        for r in recs {
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
                    }
                    _ => fmt.line(out, r.ms, r.lat, r.dir, r.len, r.offset)?,
                }
            }
            if let Some((out, fmt)) = &mut bw {
                let rate = r.rate();
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
enum Sink {
    /// To the writer thread, and back on `back`; `made` buffers exist.
    Thread {
        to: Option<Sender<Vec<Rec>>>,
        back: Receiver<Vec<Rec>>,
        made: usize,
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

/// The per-I/O logs as the worker sees them.
pub(super) struct PerIo {
    buf: Vec<Rec>,
    sink: Sink,
}

impl PerIo {
    /// The logs that `files` makes, written by a thread of their own
    /// when `threaded` and one can be started (named `name`).
    pub fn new(files: impl Fn() -> PerIoFiles, threaded: bool, name: String) -> PerIo {
        let sink = match threaded {
            true => spawn(files(), name).unwrap_or_else(|_| Sink::Here(Box::new(files()))),
            false => Sink::Here(Box::new(files())),
        };
        PerIo {
            buf: Vec::with_capacity(RECS),
            sink,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, r: Rec) {
        self.buf.push(r);
    }

    /// Whether the buffer is to be handed on now.
    #[inline(always)]
    pub fn full(&self) -> bool {
        self.buf.len() >= RECS
    }

    /// Hands the buffer on (or writes it where there is no thread) and
    /// takes an empty one. An error is the writer's: the job stops.
    pub fn hand_off(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let (to, back, made, sched) = match &mut self.sink {
            Sink::Thread {
                to,
                back,
                made,
                sched,
                ..
            } => (to, back, made, sched),
            Sink::Here(files) => {
                files.write(&self.buf)?;
                self.buf.clear();
                return Ok(());
            }
        };
        let next = match back.try_recv() {
            Ok(b) => b,
            Err(_) if *made < OWN || take_spare() => {
                *made += 1;
                Vec::with_capacity(RECS)
            }
            // The writer is behind and no buffer is left: it runs as any
            // thread does until it has caught up, and the worker waits
            // for a buffer (or its end, which the send below finds).
            Err(_) => {
                sched.raise(false);
                back.recv().unwrap_or_else(|_| Vec::with_capacity(RECS))
            }
        };
        let full = std::mem::replace(&mut self.buf, next);
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
            writer,
            made,
            sched,
            ..
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
        // The buffers it had are freed; those left to the worker go with it.
        TAKEN.fetch_sub(made.saturating_sub(OWN), Ordering::Relaxed);
        *made = 0;
        self.sink = Sink::Here(Box::new(files));
        r
    }

    /// The job has ended: every line is written, every file made, and
    /// the samples of the I/Os logged are added to `dirs`.
    pub fn finish(&mut self, dirs: &mut [DirResult; 3]) -> io::Result<()> {
        self.hand_off()?;
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

impl Drop for PerIo {
    /// A job that ends without `finish` (a panic) leaves no thread
    /// writing behind it.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

fn spawn(mut files: PerIoFiles, name: String) -> io::Result<Sink> {
    let (to, from) = channel::<Vec<Rec>>();
    let (give_back, back) = channel::<Vec<Rec>>();
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
    Ok(Sink::Thread {
        to: Some(to),
        back,
        made: 1,
        writer: Some(writer),
        sched,
    })
}
