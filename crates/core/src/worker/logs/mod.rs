//! The log files of a job clone, in fio 3.33's names and line formats, so
//! that tools that read fio's logs (fio_generate_plots, fio-plot,
//! fiologparser) read iolab's:
//!
//! - `PREFIX_bw.N.log`, `PREFIX_iops.N.log`, `PREFIX_slat.N.log`,
//!   `PREFIX_clat.N.log`, `PREFIX_lat.N.log`: one line per entry,
//!   `time, value, direction, block size, priority` with `log_offset=1`
//!   adding the offset before the priority. Time is in ms since the
//!   measured part of the job began (after ramp_time), latencies in ns,
//!   bandwidth in KiB/s, the direction 0 (read), 1 (write) or 2 (trim);
//!   the priority is always 0 (iolab sets none), written `0x0000` (the
//!   I/O priority value) with `log_prio=1`, as fio writes it.
//! - `PREFIX_clat_hist.N.log`: `time, direction, block size` and the
//!   1856 bins of fio's completion latency histogram, counting the I/Os
//!   completed since the direction's previous entry.
//!
//! With `log_avg_msec=0` the latency, bandwidth and IOPS logs have a line
//! per I/O (bandwidth: bytes over the I/O's completion latency; IOPS: 1),
//! with the I/O's block size and offset. A slat entry has the time the
//! I/O was submitted, the others the time it completed, as in fio. Those
//! lines are made and written off the worker's thread (see `per_io`).
//! With `log_avg_msec=N` a latency
//! log has, per direction, the rounded mean of the I/Os of each window of
//! at least N ms, written when the I/O that ends the window completes and
//! for the last window when the job ends; the bandwidth and IOPS logs have
//! one line per sample window (the samples the report averages). Those
//! lines have block size and offset 0.
//!
//! Averaged and histogram entries are kept in memory while the job runs
//! and written when it ends, as fio does; logs that reach `FLUSH_AT`
//! entries are written out then, between two I/Os, so memory stays
//! bounded on long runs. A clone's own files (`per_job_logs=1`) are
//! rewritten by each run; with `per_job_logs=0` a job's clones append
//! whole lines to one file, which, as in fio, is not emptied first. A log
//! whose job does nothing still exists, empty. With `stats=0` the files
//! are made and nothing is logged, as in fio.

mod lines;

pub(crate) use lines::errno_of;
mod per_io;

use std::io;

use iolab_stats::{DirResult, Moments, PLAT_NR};

use crate::plan::LogSpec;

use lines::{Format, LogOut};
use per_io::{PerIo, PerIoFiles, PerIoLog, Rec, SyncRec};

/// Averaged and histogram entries kept in memory before they are written
/// out mid-run.
const FLUSH_AT: usize = 1 << 20;

/// The memory a clone's logs hold while it runs, about: a block per file,
/// and with a line per I/O the buffers of records it may fill ahead of
/// its writer.
pub(crate) fn clone_bytes(spec: &LogSpec) -> u64 {
    let own = if spec.per_io() {
        per_io::OWN as u64 * per_io::BUFFER_BYTES
    } else {
        0
    };
    own + spec.files().len() as u64 * lines::BLOCK_BYTES
}

/// The buffers of records that the clones of a run with a line per I/O
/// in their logs may hold beyond their own, all together.
pub(crate) fn pool_bytes() -> u64 {
    per_io::pool() as u64 * per_io::BUFFER_BYTES
}

/// Frees the buffers of records kept from earlier runs of the process
/// (see `per_io`): a run without a line per I/O in its logs uses none.
pub(crate) fn release_kept() {
    per_io::release_kept();
}

/// One averaged line of a latency, bandwidth or IOPS log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    ms: u64,
    value: u64,
    dir: u8,
}

/// A mean over a window of `log_avg_msec`, per direction.
#[derive(Clone, Copy, Default)]
struct Avg {
    values: Moments,
    /// Where the current window began, ms.
    since: u64,
}

/// An averaged log (`log_avg_msec=N`) and the lines not written to it yet.
struct LogFile {
    out: LogOut,
    fmt: Format,
    entries: Vec<Entry>,
    /// The open window of each direction.
    avg: [Avg; 3],
    /// Entries are timed at submission and pushed at completion: put in
    /// time order before they are written, as fio's are.
    by_submission: bool,
}

impl LogFile {
    fn new(spec: &LogSpec, prefix: &str, kind: &str) -> LogFile {
        LogFile {
            out: log_out(spec, prefix, kind),
            fmt: Format::new(spec.offset, spec.prio),
            entries: Vec::new(),
            avg: Default::default(),
            by_submission: kind == "slat",
        }
    }

    /// One I/O's value into the direction's mean, which becomes a line
    /// once its window of `every` ms is over. True when it did.
    #[inline]
    fn value(&mut self, ms: u64, value: u64, dir: usize, every: u64) -> bool {
        let w = &mut self.avg[dir];
        w.values.record(value);
        if ms.saturating_sub(w.since) < every {
            return false;
        }
        let mean = rounded_mean(&w.values);
        w.values = Moments::new();
        w.since = ms - ms % every;
        self.entries.push(Entry {
            ms,
            value: mean,
            dir: dir as u8,
        });
        true
    }

    /// The windows still open, as lines at `ms` (the job's end).
    fn close_windows(&mut self, ms: u64) {
        for (dir, w) in self.avg.iter_mut().enumerate() {
            if !w.values.is_empty() {
                self.entries.push(Entry {
                    ms,
                    value: rounded_mean(&w.values),
                    dir: dir as u8,
                });
                w.values = Moments::new();
            }
        }
    }

    /// Writes the pending lines (creating the file if need be).
    fn write(&mut self) -> io::Result<()> {
        if self.by_submission {
            // Stable: entries of the same ms keep their order.
            self.entries.sort_by_key(|e| e.ms);
        }
        let (entries, fmt) = (&self.entries, &mut self.fmt);
        self.out.write(|out| {
            for e in entries {
                fmt.line(out, e.ms, e.value, e.dir, 0, 0)?;
            }
            Ok(())
        })?;
        self.entries.clear();
        Ok(())
    }
}

/// fio's mean of a window: rounded half up.
fn rounded_mean(m: &Moments) -> u64 {
    (m.mean() + 0.5) as u64
}

/// The file of a log, replaced at its first write unless the job's clones
/// share it.
fn log_out(spec: &LogSpec, prefix: &str, kind: &str) -> LogOut {
    LogOut::new(spec.path(prefix, kind), !spec.per_job)
}

/// The completion latency histogram log: per direction, the bins counted
/// since its previous entry.
struct HistLog {
    out: LogOut,
    /// 0: no entries.
    every: u64,
    /// When each direction's current period began, ms (0: not yet).
    since: [u64; 3],
    /// Each direction's histogram at its previous entry.
    before: [Vec<u64>; 3],
    entries: Vec<HistEntry>,
}

/// One line of the histogram log.
struct HistEntry {
    ms: u64,
    dir: u8,
    bs: u32,
    /// The non-zero bins as (bin, count).
    bins: Vec<(u16, u64)>,
}

impl HistLog {
    fn write(&mut self) -> io::Result<()> {
        let entries = &self.entries;
        self.out.write(|out| {
            let mut row = vec![0u64; PLAT_NR];
            for e in entries {
                row.fill(0);
                for &(i, n) in &e.bins {
                    row[i as usize] = n;
                }
                out.line()?;
                out.num(e.ms);
                out.field(e.dir.into());
                out.field(e.bs.into());
                for &n in &row {
                    out.field(n);
                }
                out.byte(b'\n');
            }
            Ok(())
        })?;
        self.entries.clear();
        Ok(())
    }
}

/// What one completed I/O gives the logs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Logged {
    /// ms since the measured part began, at its completion.
    pub ms: u64,
    /// ms since the measured part began, at its submission: the time of
    /// its slat entry, as fio logs slat when the I/O is submitted.
    pub slat_ms: u64,
    pub dir: usize,
    /// Bytes moved and asked for.
    pub bytes: u32,
    pub len: u32,
    pub offset: u64,
    /// Latencies in ns, None where not measured.
    pub slat: Option<u64>,
    pub clat: Option<u64>,
    pub lat: Option<u64>,
}

/// The per-I/O logs of a clone, with a synchronous engine's compact
/// records or a queued engine's. A synchronous engine's records hold
/// the offsets only where the lines have an offset column
/// (`log_offset=1`, `Sync`); without one (`SyncNoOffset`) they are made
/// with offset 0, which the worker's code for them knows: fewer steps
/// per I/O, and a short record whatever the offset.
enum PerIoLogs {
    Sync(PerIo<SyncRec>),
    SyncNoOffset(PerIo<SyncRec>),
    Queued(PerIo<Rec>),
}

impl PerIoLogs {
    fn hand_off(&mut self) -> io::Result<()> {
        match self {
            PerIoLogs::Sync(p) | PerIoLogs::SyncNoOffset(p) => p.hand_off(),
            PerIoLogs::Queued(p) => p.hand_off(),
        }
    }

    fn finish(&mut self, dirs: &mut [DirResult; 3]) -> io::Result<()> {
        match self {
            PerIoLogs::Sync(p) | PerIoLogs::SyncNoOffset(p) => p.finish(dirs),
            PerIoLogs::Queued(p) => p.finish(dirs),
        }
    }
}

/// `Logs::io` of a synchronous engine's I/O whose offset the lines do not
/// show, out of line: the fast path (`clat_io`) makes most of them, and
/// the code that inlines `io` (a queued engine's completions) stays as
/// small as it was.
#[inline(never)]
fn push_no_offset(p: &mut PerIo<SyncRec>, io: Logged) -> bool {
    p.push(&Logged { offset: 0, ..io });
    p.full()
}

/// A clone's logs.
pub(super) struct Logs {
    /// False with stats=0: the files are made, nothing is logged.
    record: bool,
    avg_msec: u64,
    /// log_avg_msec=0: the latency, bandwidth and IOPS logs, which also
    /// make the report's per-I/O bandwidth and IOPS samples.
    per_io: Option<PerIoLogs>,
    /// log_avg_msec=N: the averaged logs.
    bw: Option<LogFile>,
    iops: Option<LogFile>,
    slat: Option<LogFile>,
    clat: Option<LogFile>,
    lat: Option<LogFile>,
    hist: Option<HistLog>,
    /// Averaged and histogram entries not written yet.
    pending: usize,
}

impl Logs {
    /// The logs of `spec`; `sync` when the engine is synchronous (no
    /// slat, lat is clat: its records are the compact ones).
    pub fn new(spec: &LogSpec, record: bool, disable_bw: bool, sync: bool) -> Logs {
        let per_io = spec.avg_msec == 0;
        let averaged = |prefix: &Option<String>, kind: &str| {
            prefix
                .as_deref()
                .filter(|_| !per_io)
                .map(|p| LogFile::new(spec, p, kind))
        };
        let files = || {
            let log = |prefix: &Option<String>, kind: &str| {
                prefix.as_deref().map(|p| {
                    PerIoLog::new(log_out(spec, p, kind), Format::new(spec.offset, spec.prio))
                })
            };
            PerIoFiles {
                bw: log(&spec.bw, "bw"),
                bw_off: disable_bw,
                iops: log(&spec.iops, "iops"),
                slat: log(&spec.lat, "slat"),
                clat: log(&spec.lat, "clat"),
                lat: log(&spec.lat, "lat"),
                ..Default::default()
            }
        };
        let wanted = per_io && files().any();
        Logs {
            record,
            avg_msec: spec.avg_msec,
            per_io: wanted.then(|| {
                let name = format!("iolab-log-{}", spec.thread);
                match (sync, spec.offset) {
                    (true, true) => PerIoLogs::Sync(PerIo::new(files, record, name)),
                    (true, false) => PerIoLogs::SyncNoOffset(PerIo::new(files, record, name)),
                    (false, _) => PerIoLogs::Queued(PerIo::new(files, record, name)),
                }
            }),
            bw: averaged(&spec.bw, "bw"),
            iops: averaged(&spec.iops, "iops"),
            slat: averaged(&spec.lat, "slat"),
            clat: averaged(&spec.lat, "clat"),
            lat: averaged(&spec.lat, "lat"),
            hist: spec.hist.as_deref().map(|p| HistLog {
                out: log_out(spec, p, "clat_hist"),
                every: spec.hist_msec,
                since: [0; 3],
                before: [vec![0; PLAT_NR], vec![0; PLAT_NR], vec![0; PLAT_NR]],
                entries: Vec::new(),
            }),
            pending: 0,
        }
    }

    /// One completed (and measured) I/O. `r` is its direction's results,
    /// whose completion latencies the histogram log reads. With a line
    /// per I/O this is a record appended to a buffer (see `per_io`).
    /// True when lines are to be written out (or handed on) now
    /// (`write`).
    #[inline(always)]
    pub fn io(&mut self, io: Logged, r: &DirResult) -> bool {
        if !self.record {
            return self.pending >= FLUSH_AT;
        }
        let full = match &mut self.per_io {
            Some(PerIoLogs::Sync(p)) => {
                p.push(&io);
                p.full()
            }
            Some(PerIoLogs::SyncNoOffset(p)) => push_no_offset(p, io),
            Some(PerIoLogs::Queued(p)) => {
                p.push(&io);
                p.full()
            }
            None if self.avg_msec > 0 => {
                self.averaged(io);
                false
            }
            None => false,
        };
        if self.hist.is_some() {
            self.histogram(io, r);
        }
        full || self.pending >= FLUSH_AT
    }

    /// `io` of a synchronous engine's I/O whose lat is its clat (no
    /// slat): with a line per I/O and no histogram log, its record goes
    /// straight to the buffer, without a `Logged` made first.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn clat_io(
        &mut self,
        ms: u64,
        dir: usize,
        bytes: u32,
        len: u32,
        offset: u64,
        clat: u64,
        r: &DirResult,
    ) -> bool {
        if let (true, None, Some(logs)) = (self.record, &self.hist, &mut self.per_io) {
            // Each kind's record made with what it knows of the offset.
            let p = match logs {
                PerIoLogs::SyncNoOffset(p) => {
                    p.push_clat_lat(ms, dir, clat, bytes, len, 0);
                    Some(p)
                }
                PerIoLogs::Sync(p) => {
                    p.push_clat_lat(ms, dir, clat, bytes, len, offset);
                    Some(p)
                }
                PerIoLogs::Queued(_) => None,
            };
            if let Some(p) = p {
                return p.full() || self.pending >= FLUSH_AT;
            }
        }
        let io = Logged {
            ms,
            slat_ms: 0,
            dir,
            bytes,
            len,
            offset,
            slat: None,
            clat: Some(clat),
            lat: Some(clat),
        };
        self.io_cold(io, r)
    }

    #[inline(never)]
    fn io_cold(&mut self, io: Logged, r: &DirResult) -> bool {
        self.io(io, r)
    }

    /// The latencies of an I/O into the averaged logs' windows.
    #[inline(never)]
    fn averaged(&mut self, io: Logged) {
        let every = self.avg_msec;
        if let (Some(log), Some(v)) = (&mut self.slat, io.slat) {
            self.pending += usize::from(log.value(io.slat_ms, v, io.dir, every));
        }
        for (log, v) in [(&mut self.clat, io.clat), (&mut self.lat, io.lat)] {
            if let (Some(log), Some(v)) = (log, v) {
                self.pending += usize::from(log.value(io.ms, v, io.dir, every));
            }
        }
    }

    #[inline(never)]
    fn histogram(&mut self, io: Logged, r: &DirResult) {
        let Some(h) = &mut self.hist else {
            return;
        };
        // fio starts a direction's first period at its first I/O that
        // completes 1 ms or more into the job.
        if h.since[io.dir] == 0 {
            h.since[io.dir] = io.ms;
        }
        if h.every > 0 && io.ms - h.since[io.dir] >= h.every {
            let now = r.clat.hist.bins();
            let before = &mut h.before[io.dir];
            let bins: Vec<(u16, u64)> = now
                .iter()
                .zip(before.iter())
                .enumerate()
                .filter(|(_, (n, b))| n != b)
                .map(|(i, (n, b))| (i as u16, n - b))
                .collect();
            before.copy_from_slice(now);
            h.entries.push(HistEntry {
                ms: io.ms,
                dir: io.dir as u8,
                bs: io.len,
                bins,
            });
            self.pending += 1;
            // The next period starts where this one should have
            // ended, so periods do not drift (fio's rule).
            h.since[io.dir] += h.every;
        }
    }

    /// A bandwidth (KiB/s) or IOPS sample of a window ending at `ms`:
    /// a line of the averaged bandwidth or IOPS log.
    #[cold]
    pub fn sample(&mut self, iops: bool, ms: u64, dir: usize, value: u64) {
        let log = if iops { &mut self.iops } else { &mut self.bw };
        if let (Some(log), true) = (log, self.record) {
            log.entries.push(Entry {
                ms,
                value,
                dir: dir as u8,
            });
            self.pending += 1;
        }
    }

    fn averaged_mut(&mut self) -> impl Iterator<Item = &mut LogFile> {
        [
            &mut self.bw,
            &mut self.iops,
            &mut self.slat,
            &mut self.clat,
            &mut self.lat,
        ]
        .into_iter()
        .flatten()
    }

    /// Writes what is pending to the files; the per-I/O lines go to
    /// their writer. An error is the first write's that failed.
    pub fn write(&mut self) -> io::Result<()> {
        if let Some(p) = &mut self.per_io {
            p.hand_off()?;
        }
        if self.pending > 0 {
            self.write_averaged()?;
        }
        Ok(())
    }

    fn write_averaged(&mut self) -> io::Result<()> {
        for f in self.averaged_mut() {
            f.write()?;
        }
        if let Some(h) = &mut self.hist {
            h.write()?;
        }
        self.pending = 0;
        Ok(())
    }

    /// The job has ended at `ms`: the open latency windows become lines,
    /// everything is written and every file exists. With a line per I/O
    /// the bandwidth and IOPS samples of the I/Os go into `dirs`.
    pub fn finish(&mut self, ms: u64, dirs: &mut [DirResult; 3]) -> io::Result<()> {
        for f in self.averaged_mut() {
            f.close_windows(ms);
        }
        let per_io = self.per_io.as_mut().map_or(Ok(()), |p| p.finish(dirs));
        self.write_averaged()?;
        per_io
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &std::path::Path, avg_msec: u64) -> LogSpec {
        let p = dir.join("p").display().to_string();
        LogSpec {
            bw: Some(p.clone()),
            iops: Some(p.clone()),
            lat: Some(p.clone()),
            hist: Some(p),
            avg_msec,
            hist_msec: 100,
            offset: false,
            prio: false,
            per_job: true,
            thread: 3,
        }
    }

    #[test]
    fn log_prio_writes_the_priority_value_in_hexadecimal() {
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            prio: true,
            ..spec(d.path(), 0)
        };
        let mut logs = Logs::new(&s, true, false, false);
        logs.io(io(5, 1, 155_902), &DirResult::default());
        logs.finish(6, &mut Default::default()).unwrap();
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "5, 155902, 1, 4096, 0x0000\n"
        );
    }

    fn io(ms: u64, dir: usize, clat: u64) -> Logged {
        Logged {
            ms,
            slat_ms: ms,
            dir,
            bytes: 4096,
            len: 4096,
            offset: 8192,
            slat: None,
            clat: Some(clat),
            lat: Some(clat + 10),
        }
    }

    fn read(dir: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    #[test]
    fn every_io_is_a_line_in_fios_format() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, false, false);
        let mut dirs = <[DirResult; 3]>::default();
        logs.io(io(0, 0, 924_163), &dirs[0]);
        logs.io(io(1, 1, 6_240), &dirs[1]);
        logs.finish(2, &mut dirs).unwrap();
        // Values from fio 3.33's logs of the same latencies.
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "0, 924163, 0, 4096, 0\n1, 6240, 1, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "p_lat.3.log"),
            "0, 924173, 0, 4096, 0\n1, 6250, 1, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "p_bw.3.log"),
            "0, 4432, 0, 4096, 0\n1, 656410, 1, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "p_iops.3.log"),
            "0, 1, 0, 4096, 0\n1, 1, 1, 4096, 0\n"
        );
        assert_eq!(read(d.path(), "p_slat.3.log"), "", "made, and empty");
        // The report's samples: one per I/O, each its line's value.
        for (r, bw) in dirs.iter().zip([4432, 656_410]) {
            assert_eq!((r.bw_samples.count(), r.iops_samples.count()), (1, 1));
            assert_eq!(r.bw_samples.max(), Some(bw));
        }
    }

    #[test]
    fn lines_handed_to_the_writer_buffer_after_buffer_are_all_in_order() {
        // Several buffers' worth of I/Os, handed on as the worker hands
        // them (when full), in both directions. A queued engine's lat is
        // the same as clat for most (its line is copied) and not for
        // some; a synchronous engine's (compact records) always.
        // Latencies of a few values (lines repeat whole without the
        // offset column) and of many. A synchronous engine's fast path
        // (`clat_io`, no histogram log) writes the same lines.
        for (sync, offset, few, fast) in [
            (false, true, false, false),
            (false, false, true, false),
            (true, false, true, false),
            (true, true, false, false),
            (true, false, true, true),
            (true, true, false, true),
        ] {
            several_buffers(sync, offset, few, fast);
        }
    }

    /// Held by the tests that make records, whose kept buffers (shared by
    /// the process) some of them count.
    pub(super) static SYNC: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn several_buffers(sync: bool, offset: bool, few: bool, fast: bool) {
        let _one = SYNC.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            offset,
            hist: spec(d.path(), 0).hist.filter(|_| !fast),
            ..spec(d.path(), 0)
        };
        let mut logs = Logs::new(&s, true, false, sync);
        let mut dirs = <[DirResult; 3]>::default();
        let (mut clat, mut lat, mut bw) = (String::new(), String::new(), String::new());
        // Three buffers of a synchronous engine's records at least.
        const N: u64 = 300_000;
        for i in 0..N {
            // Now and then a step of a second in time, a latency of
            // seconds or an I/O cut short (a synchronous engine's long
            // records).
            let (ms, dir) = (i / 9 + i / 20_000 * 1000, (i % 7 == 0) as usize);
            let ns = match few {
                true => 1000 + i * 13 % 3 * 10,
                false => 1000 + i * 13 % 90_000,
            } + if i % 997 == 0 { 5_000_000_000 } else { 0 };
            let bytes = if i % 1009 == 0 { 2048 } else { 4096 };
            let extra = if i % 5 == 0 && !sync { 10 } else { 0 };
            let off = (i * 7919 % 1000) << 12;
            let o = if offset {
                format!("{off}, ")
            } else {
                String::new()
            };
            clat += &format!("{ms}, {ns}, {dir}, 4096, {o}0\n");
            lat += &format!("{ms}, {}, {dir}, 4096, {o}0\n", ns + extra);
            bw += &format!("{ms}, {}, {dir}, 4096, {o}0\n", bytes * 1_000_000 / ns);
            let logged = Logged {
                offset: off,
                bytes: bytes as u32,
                lat: Some(ns + extra),
                ..io(ms, dir, ns)
            };
            let full = match fast {
                true => logs.clat_io(ms, dir, bytes as u32, 4096, off, ns, &dirs[dir]),
                false => logs.io(logged, &dirs[dir]),
            };
            if full {
                logs.write().unwrap();
            }
        }
        logs.finish(8889, &mut dirs).unwrap();
        assert_eq!(read(d.path(), "p_clat.3.log"), clat);
        assert_eq!(read(d.path(), "p_lat.3.log"), lat);
        assert_eq!(read(d.path(), "p_bw.3.log"), bw);
        assert_eq!(read(d.path(), "p_iops.3.log").lines().count() as u64, N);
        assert_eq!(read(d.path(), "p_slat.3.log"), "");
        let n = |d: usize| dirs[d].iops_samples.count();
        assert_eq!((n(0) + n(1), n(1)), (N, N / 7 + 1));
    }

    #[test]
    fn a_synchronous_engines_records_hold_offsets_only_for_an_offset_column() {
        // Offsets that are not multiples of 512 do not fit a short
        // record: with log_offset=1 each such I/O takes a long one (a
        // buffer holds a quarter as many I/Os); without, its offset is
        // not kept and every I/O takes one cell, through either path.
        let _one = SYNC.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().expect("a temporary directory for the logs");
        let cells = per_io::BUFFER_BYTES / 8;
        for (offset, fast) in [(false, false), (false, true), (true, false), (true, true)] {
            let s = LogSpec {
                offset,
                hist: None,
                ..spec(d.path(), 0)
            };
            let mut logs = Logs::new(&s, true, false, true);
            let dirs = <[DirResult; 3]>::default();
            // The I/O after which the buffer is handed on (another
            // record, of 5 cells at most, might not fit).
            let fit = (1..cells).find(|&i| {
                let off = i * 4096 + 1;
                match fast {
                    true => logs.clat_io(7, 0, 4096, 4096, off, 1000, &dirs[0]),
                    false => logs.io(
                        Logged {
                            offset: off,
                            lat: Some(1000),
                            ..io(7, 0, 1000)
                        },
                        &dirs[0],
                    ),
                }
            });
            let want = match offset {
                // A mark of the ms, then 4 cells per I/O.
                true => (cells - 1 - 5) / 4 + 1,
                // Marks of the ms and of the size, then 1 cell per I/O.
                false => cells - 2 - 5 + 1,
            };
            assert_eq!(fit, Some(want), "log_offset={offset}, fast path {fast}");
        }
    }

    #[test]
    fn a_synchronous_engines_lone_clat_or_lat_goes_to_its_own_log() {
        // disable_lat: clat alone; disable_clat: lat alone (no bandwidth).
        let _one = SYNC.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, false, true);
        let mut dirs = <[DirResult; 3]>::default();
        let only = |clat, lat| Logged {
            clat,
            lat,
            ..io(5, 1, 0)
        };
        logs.io(only(Some(2000), None), &dirs[1]);
        logs.io(only(None, Some(3000)), &dirs[1]);
        logs.finish(6, &mut dirs).unwrap();
        assert_eq!(read(d.path(), "p_clat.3.log"), "5, 2000, 1, 4096, 0\n");
        assert_eq!(read(d.path(), "p_lat.3.log"), "5, 3000, 1, 4096, 0\n");
        assert_eq!(
            read(d.path(), "p_bw.3.log"),
            "5, 2048000, 1, 4096, 0\n5, 0, 1, 4096, 0\n"
        );
    }

    #[test]
    fn buffers_of_a_clone_that_ended_serve_the_next() {
        // A clone's buffers are kept when its logs end, and the next
        // clone's logs take them rather than new ones.
        let _one = SYNC.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 0);
        let kept = || per_io::kept::<SyncRec>();
        let mut logs = Logs::new(&s, true, false, true);
        let same = Logged {
            lat: Some(1000),
            ..io(0, 0, 1000)
        };
        logs.io(same, &DirResult::default());
        logs.finish(1, &mut Default::default()).unwrap();
        drop(logs);
        assert!(kept() >= per_io::OWN, "{} kept", kept());
        let before = kept();
        let next = Logs::new(&s, true, false, true);
        assert!(kept() < before, "the next clone took kept buffers");
        drop(next);
    }

    #[test]
    fn kept_buffers_of_a_kind_not_used_are_freed() {
        // A queued engine's logs free the synchronous records' kept
        // buffers, and a run without a line per I/O frees all.
        let _one = SYNC.lock().unwrap_or_else(|e| e.into_inner());
        let d = tempfile::tempdir().unwrap();
        let s = spec(d.path(), 0);
        let one_clone = |sync: bool| {
            let mut logs = Logs::new(&s, true, false, sync);
            let same = Logged {
                lat: Some(1000),
                ..io(0, 0, 1000)
            };
            logs.io(same, &DirResult::default());
            logs.finish(1, &mut Default::default()).unwrap();
        };
        one_clone(true);
        assert!(per_io::kept::<SyncRec>() >= per_io::OWN);
        one_clone(false);
        assert_eq!(per_io::kept::<SyncRec>(), 0);
        assert!(per_io::kept::<per_io::Rec>() >= per_io::OWN);
        release_kept();
        assert_eq!(per_io::kept::<SyncRec>() + per_io::kept::<per_io::Rec>(), 0);
    }

    #[test]
    fn log_offset_adds_the_offset_before_the_priority() {
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            offset: true,
            ..spec(d.path(), 0)
        };
        let mut logs = Logs::new(&s, true, false, false);
        logs.io(io(5, 1, 155_902), &DirResult::default());
        logs.finish(6, &mut Default::default()).unwrap();
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "5, 155902, 1, 4096, 8192, 0\n"
        );
        assert_eq!(read(d.path(), "p_bw.3.log"), "5, 26272, 1, 4096, 8192, 0\n");
    }

    #[test]
    fn averaged_latencies_are_a_rounded_mean_per_window_and_direction() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 300), true, false, false);
        let r = DirResult::default();
        // Reads at 0, 143, 286 and 429 ms: the window ends with the I/O at
        // 429 and the next one begins at 300.
        for (ms, v) in [(0, 100), (143, 201), (286, 300), (429, 400)] {
            logs.io(io(ms, 0, v), &r);
        }
        // A direction's first window begins at 0 too.
        logs.io(io(500, 1, 7), &r);
        logs.io(io(571, 0, 1000), &r);
        logs.io(io(714, 0, 2001), &r);
        // The last window, open when the job ends, is written then.
        logs.io(io(750, 0, 50), &r);
        let mut dirs = <[DirResult; 3]>::default();
        logs.finish(800, &mut dirs).unwrap();
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "429, 250, 0, 0, 0\n500, 7, 1, 0, 0\n714, 1501, 0, 0, 0\n800, 50, 0, 0, 0\n"
        );
        // No per-I/O bandwidth or IOPS samples when averaging.
        assert!(dirs.iter().all(|r| r.bw_samples.count() == 0));
        assert_eq!(read(d.path(), "p_bw.3.log"), "");
    }

    #[test]
    fn slat_is_logged_at_submission_so_the_last_ios_in_flight_close_no_window() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 100), true, false, false);
        let r = DirResult::default();
        // Four I/Os in flight: each completes 5 ms after its submission.
        // The last window (from 100 ms) is not closed by the I/Os that
        // were submitted in it and completed after its end: it is written
        // once, when the job ends, as fio writes it.
        for sub in [0, 40, 80, 98, 99] {
            let io = Logged {
                slat_ms: sub,
                slat: Some(1000 + sub),
                ..io(sub + 5, 0, 2000)
            };
            logs.io(io, &r);
        }
        logs.finish(104, &mut Default::default()).unwrap();
        assert_eq!(
            read(d.path(), "p_slat.3.log"),
            "104, 1063, 0, 0, 0\n",
            "one window, written at the end"
        );
        // The clat log closes its first window at the completion at 103 ms
        // and writes what completed after it at the end.
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "103, 2000, 0, 0, 0\n104, 2000, 0, 0, 0\n"
        );
    }

    #[test]
    fn per_io_slat_lines_are_in_submission_order() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, false, false);
        let r = DirResult::default();
        // Submitted at 1, 2 and 3 ms; the second completes last.
        for (sub, done) in [(1, 4), (3, 5), (2, 6)] {
            let io = Logged {
                slat_ms: sub,
                slat: Some(100 * sub),
                ..io(done, 0, 2000)
            };
            logs.io(io, &r);
        }
        logs.finish(7, &mut Default::default()).unwrap();
        assert_eq!(
            read(d.path(), "p_slat.3.log"),
            "1, 100, 0, 4096, 0\n2, 200, 0, 4096, 0\n3, 300, 0, 4096, 0\n"
        );
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "4, 2000, 0, 4096, 0\n5, 2000, 0, 4096, 0\n6, 2000, 0, 4096, 0\n"
        );
    }

    #[test]
    fn histogram_entries_count_the_ios_since_the_last_one() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, false, false);
        let mut r = DirResult::default();
        // Periods of 100 ms from the first I/O after 0 ms (at 10 ms), as
        // fio 3.33 counts them.
        let ios = [
            (0, 1000),
            (10, 1000),
            (60, 1000),
            (120, 5000),
            (150, 5000),
            (230, 1000),
        ];
        for (ms, ns) in ios {
            r.clat.record(ns);
            logs.io(io(ms, 0, ns), &r);
        }
        logs.finish(240, &mut Default::default()).unwrap();
        let text = read(d.path(), "p_clat_hist.3.log");
        let lines: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(lines.len(), 2, "at 120 and 230 ms");
        for l in &lines {
            assert_eq!(l.len(), 3 + PLAT_NR);
        }
        assert_eq!(lines[0][..3], [120, 0, 4096]);
        assert_eq!(lines[1][..3], [230, 0, 4096]);
        let count = |l: &Vec<u64>, ns: u64| l[3 + iolab_stats::LatHist::value_to_index(ns)];
        assert_eq!((count(&lines[0], 1000), count(&lines[0], 5000)), (3, 1));
        assert_eq!((count(&lines[1], 1000), count(&lines[1], 5000)), (1, 1));
        assert_eq!(lines[1][3..].iter().sum::<u64>(), 2);
    }

    #[test]
    fn shared_logs_append_and_stats_off_logs_stay_empty() {
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            per_job: false,
            ..spec(d.path(), 0)
        };
        for clone in 0..2 {
            let mut logs = Logs::new(&s, true, false, false);
            logs.io(io(clone, 0, 1000), &DirResult::default());
            logs.finish(3, &mut Default::default()).unwrap();
        }
        assert_eq!(
            read(d.path(), "p_clat.log"),
            "0, 1000, 0, 4096, 0\n1, 1000, 0, 4096, 0\n"
        );
        let mut off = Logs::new(&spec(d.path(), 0), false, false, false);
        off.io(io(0, 0, 1000), &DirResult::default());
        off.finish(1, &mut Default::default()).unwrap();
        assert_eq!(read(d.path(), "p_clat.3.log"), "");
        assert_eq!(read(d.path(), "p_clat_hist.3.log"), "");
    }

    #[test]
    fn disable_bw_measurement_leaves_the_per_io_bandwidth_log_empty() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, true, false);
        let mut dirs = <[DirResult; 3]>::default();
        logs.io(io(0, 0, 1000), &dirs[0]);
        logs.finish(1, &mut dirs).unwrap();
        assert_eq!(read(d.path(), "p_bw.3.log"), "");
        assert_eq!(dirs[0].bw_samples.count(), 0);
        assert_eq!(dirs[0].iops_samples.count(), 1);
    }
}
