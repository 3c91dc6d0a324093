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
//! I/O was submitted, the others the time it completed, as in fio. With `log_avg_msec=N` a latency
//! log has, per direction, the rounded mean of the I/Os of each window of
//! at least N ms, written when the I/O that ends the window completes and
//! for the last window when the job ends; the bandwidth and IOPS logs have
//! one line per sample window (the samples the report averages). Those
//! lines have block size and offset 0.
//!
//! Entries are kept in memory while the job runs and written when it ends,
//! as fio does; a log that reaches `FLUSH_AT` entries is written out then,
//! between two I/Os, so memory stays bounded on long runs. A clone's own
//! files (`per_job_logs=1`) are rewritten by each run; with
//! `per_job_logs=0` a job's clones append to one file, which, as in fio,
//! is not emptied first. A log whose job does nothing still exists, empty.
//! With `stats=0` the files are made and nothing is logged, as in fio.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::PathBuf;

use iolab_stats::{DirResult, Moments, PLAT_NR};

use crate::plan::LogSpec;

/// Entries kept in memory before a log is written out mid-run.
const FLUSH_AT: usize = 1 << 20;

/// One line of a latency, bandwidth or IOPS log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    ms: u64,
    value: u64,
    dir: u8,
    bs: u32,
    offset: u64,
}

/// A mean over a window of `log_avg_msec`, per direction.
#[derive(Clone, Copy, Default)]
struct Avg {
    values: Moments,
    /// Where the current window began, ms.
    since: u64,
}

/// One log file and the lines not written to it yet.
struct LogFile {
    path: PathBuf,
    /// Append to the file instead of replacing it (a file the job's clones
    /// share, or one this clone has already begun).
    append: bool,
    offset: bool,
    /// The priority column as `log_prio=1` writes it.
    prio: &'static str,
    entries: Vec<Entry>,
    /// With log_avg_msec, the open window of each direction.
    avg: Option<[Avg; 3]>,
    /// Entries are timed at submission and pushed at completion: put in
    /// time order before they are written, as fio's are.
    by_submission: bool,
}

impl LogFile {
    fn new(spec: &LogSpec, prefix: &str, kind: &str, averaged: bool) -> LogFile {
        LogFile {
            path: spec.path(prefix, kind),
            append: !spec.per_job,
            offset: spec.offset,
            prio: if spec.prio { "0x0000" } else { "0" },
            entries: Vec::new(),
            avg: averaged.then(<[Avg; 3]>::default),
            by_submission: kind == "slat",
        }
    }

    #[inline]
    fn push(&mut self, e: Entry) {
        self.entries.push(e);
    }

    /// One I/O's value: a line of its own, or into the direction's mean,
    /// which becomes a line once its window of `every` ms is over.
    #[inline]
    fn value(&mut self, e: Entry, every: u64) {
        let Some(avg) = &mut self.avg else {
            return self.push(e);
        };
        let w = &mut avg[e.dir as usize];
        w.values.record(e.value);
        if e.ms.saturating_sub(w.since) >= every {
            let mean = rounded_mean(&w.values);
            w.values = Moments::new();
            w.since = e.ms - e.ms % every;
            self.push(Entry {
                value: mean,
                bs: 0,
                offset: 0,
                ..e
            });
        }
    }

    /// The windows still open, as lines at `ms` (the job's end).
    fn close_windows(&mut self, ms: u64) {
        let Some(avg) = &mut self.avg else {
            return;
        };
        let mut last = Vec::new();
        for (dir, w) in avg.iter_mut().enumerate() {
            if !w.values.is_empty() {
                last.push(Entry {
                    ms,
                    value: rounded_mean(&w.values),
                    dir: dir as u8,
                    bs: 0,
                    offset: 0,
                });
                w.values = Moments::new();
            }
        }
        self.entries.extend(last);
    }

    /// Writes the pending lines (creating the file if need be).
    fn write(&mut self) -> io::Result<()> {
        if self.by_submission {
            // Stable: entries of the same ms keep their order.
            self.entries.sort_by_key(|e| e.ms);
        }
        let mut out = Lines::new(open(&self.path, self.append)?);
        // The priority column, 0 or 0x0000.
        let prio = self.prio.as_bytes();
        for e in &self.entries {
            out.num(e.ms)?;
            out.field(e.value)?;
            out.field(e.dir.into())?;
            out.field(e.bs.into())?;
            if self.offset {
                out.field(e.offset)?;
            }
            out.byte(b',')?;
            out.byte(b' ')?;
            for &b in prio {
                out.byte(b)?;
            }
            out.byte(b'\n')?;
        }
        out.finish()?;
        self.entries.clear();
        self.append = true;
        Ok(())
    }
}

/// Lines of a log gathered in a buffer and written to its file a large
/// block at a time: a log with a line per I/O has millions of lines, which
/// `write!` would format through `std::fmt` one argument at a time. Bytes
/// are stored by index into a buffer of fixed size, with room for the
/// longest number past the block, so that no small copy calls `memcpy`.
struct Lines {
    file: std::fs::File,
    buf: Vec<u8>,
    pos: usize,
}

impl Lines {
    const BLOCK: usize = 1 << 16;

    fn new(file: std::fs::File) -> Lines {
        Lines {
            file,
            buf: vec![0; Lines::BLOCK + 64],
            pos: 0,
        }
    }

    /// Writes out the block once it is full.
    #[inline]
    fn room(&mut self) -> io::Result<()> {
        if self.pos >= Lines::BLOCK {
            self.file.write_all(&self.buf[..self.pos])?;
            self.pos = 0;
        }
        Ok(())
    }

    /// Appends `v` in decimal, as `{}` prints it.
    #[inline]
    fn num(&mut self, mut v: u64) -> io::Result<()> {
        self.room()?;
        let end = self.pos + v.checked_ilog10().unwrap_or(0) as usize + 1;
        let mut i = end;
        while v >= 100 {
            let r = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            self.buf[i] = DIGITS[r];
            self.buf[i + 1] = DIGITS[r + 1];
        }
        if v >= 10 {
            let r = v as usize * 2;
            self.buf[i - 2] = DIGITS[r];
            self.buf[i - 1] = DIGITS[r + 1];
        } else {
            self.buf[i - 1] = b'0' + v as u8;
        }
        self.pos = end;
        Ok(())
    }

    /// `v` after the separator `, `.
    #[inline]
    fn field(&mut self, v: u64) -> io::Result<()> {
        self.byte(b',')?;
        self.byte(b' ')?;
        self.num(v)
    }

    #[inline]
    fn byte(&mut self, b: u8) -> io::Result<()> {
        self.room()?;
        self.buf[self.pos] = b;
        self.pos += 1;
        Ok(())
    }

    fn finish(mut self) -> io::Result<()> {
        self.file.write_all(&self.buf[..self.pos])
    }
}

/// The decimal digits of 0..100, two by two.
const DIGITS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// fio's mean of a window: rounded half up.
fn rounded_mean(m: &Moments) -> u64 {
    (m.mean() + 0.5) as u64
}

fn open(path: &PathBuf, append: bool) -> io::Result<std::fs::File> {
    let mut o = OpenOptions::new();
    o.create(true);
    if append {
        o.append(true);
    } else {
        o.write(true).truncate(true);
    }
    o.open(path)
        .map_err(|e| io::Error::new(e.kind(), with_path(path, &e)))
}

fn with_path(path: &std::path::Path, e: &io::Error) -> String {
    format!("log file `{}`: {e}", path.display())
}

/// The completion latency histogram log: per direction, the bins counted
/// since its previous entry.
struct HistLog {
    path: PathBuf,
    append: bool,
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
        let mut out = Lines::new(open(&self.path, self.append)?);
        let mut row = vec![0u64; PLAT_NR];
        for e in &self.entries {
            row.fill(0);
            for &(i, n) in &e.bins {
                row[i as usize] = n;
            }
            out.num(e.ms)?;
            out.field(e.dir.into())?;
            out.field(e.bs.into())?;
            for &n in &row {
                out.field(n)?;
            }
            out.byte(b'\n')?;
        }
        out.finish()?;
        self.entries.clear();
        self.append = true;
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

/// A clone's logs.
pub(super) struct Logs {
    /// False with stats=0: the files are made, nothing is logged.
    record: bool,
    avg_msec: u64,
    bw: Option<LogFile>,
    iops: Option<LogFile>,
    slat: Option<LogFile>,
    clat: Option<LogFile>,
    lat: Option<LogFile>,
    hist: Option<HistLog>,
    /// Bandwidth entries per I/O are off (disable_bw_measurement).
    bw_off: bool,
}

impl Logs {
    pub fn new(spec: &LogSpec, record: bool, disable_bw: bool) -> Logs {
        let avg = spec.avg_msec > 0;
        let file = |prefix: &Option<String>, kind: &str, averaged: bool| {
            prefix
                .as_deref()
                .map(|p| LogFile::new(spec, p, kind, averaged))
        };
        Logs {
            record,
            avg_msec: spec.avg_msec,
            bw: file(&spec.bw, "bw", false),
            iops: file(&spec.iops, "iops", false),
            slat: file(&spec.lat, "slat", avg),
            clat: file(&spec.lat, "clat", avg),
            lat: file(&spec.lat, "lat", avg),
            hist: spec.hist.as_deref().map(|p| HistLog {
                path: spec.path(p, "clat_hist"),
                append: !spec.per_job,
                every: spec.hist_msec,
                since: [0; 3],
                before: [vec![0; PLAT_NR], vec![0; PLAT_NR], vec![0; PLAT_NR]],
                entries: Vec::new(),
            }),
            bw_off: disable_bw,
        }
    }

    /// One completed (and measured) I/O. `r` is its direction's results:
    /// the per-I/O samples go there, and the histogram log reads its
    /// completion latencies.
    #[inline]
    pub fn io(&mut self, io: Logged, r: &mut DirResult) {
        if !self.record {
            return;
        }
        let avg = self.avg_msec;
        let per_io = avg == 0;
        let entry = |value: u64| Entry {
            ms: io.ms,
            value,
            dir: io.dir as u8,
            bs: io.len,
            offset: io.offset,
        };
        if let (Some(log), Some(v)) = (&mut self.slat, io.slat) {
            log.value(
                Entry {
                    ms: io.slat_ms,
                    ..entry(v)
                },
                avg,
            );
        }
        for (log, v) in [(&mut self.clat, io.clat), (&mut self.lat, io.lat)] {
            if let (Some(log), Some(v)) = (log, v) {
                log.value(entry(v), avg);
            }
        }
        if per_io {
            if let Some(log) = &mut self.bw {
                if !self.bw_off {
                    // fio: bytes * 10^6 / the completion latency in ns.
                    let rate = match io.clat {
                        Some(ns) if ns > 0 => u64::from(io.bytes) * 1_000_000 / ns,
                        _ => 0,
                    };
                    r.bw_samples.record(rate);
                    log.push(entry(rate));
                }
            }
            if let Some(log) = &mut self.iops {
                r.iops_samples.record(1);
                log.push(entry(1));
            }
        }
        if let Some(h) = &mut self.hist {
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
                // The next period starts where this one should have
                // ended, so periods do not drift (fio's rule).
                h.since[io.dir] += h.every;
            }
        }
    }

    /// A bandwidth (KiB/s) or IOPS sample of a window ending at `ms`:
    /// a line of the averaged bandwidth or IOPS log.
    #[cold]
    pub fn sample(&mut self, iops: bool, ms: u64, dir: usize, value: u64) {
        let log = if iops { &mut self.iops } else { &mut self.bw };
        if let (Some(log), true, true) = (log, self.record, self.avg_msec > 0) {
            log.push(Entry {
                ms,
                value,
                dir: dir as u8,
                bs: 0,
                offset: 0,
            });
        }
    }

    /// Whether a log holds enough lines to be written out now.
    #[inline]
    pub fn full(&self) -> bool {
        self.files().any(|f| f.entries.len() >= FLUSH_AT)
            || self
                .hist
                .as_ref()
                .is_some_and(|h| h.entries.len() >= FLUSH_AT)
    }

    fn files(&self) -> impl Iterator<Item = &LogFile> {
        [&self.bw, &self.iops, &self.slat, &self.clat, &self.lat]
            .into_iter()
            .flatten()
    }

    fn files_mut(&mut self) -> impl Iterator<Item = &mut LogFile> {
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

    /// Writes what is pending to the files.
    pub fn write(&mut self) -> io::Result<()> {
        for f in self.files_mut() {
            f.write()?;
        }
        if let Some(h) = &mut self.hist {
            h.write()?;
        }
        Ok(())
    }

    /// The job has ended at `ms`: the open latency windows become lines
    /// and everything is written.
    pub fn finish(&mut self, ms: u64) -> io::Result<()> {
        for f in self.files_mut() {
            f.close_windows(ms);
        }
        self.write()
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
    fn numbers_are_written_as_display_writes_them() {
        for v in [0, 7, 10, 99, 100, 101, 4096, 155_902, 1 << 40, u64::MAX] {
            let d = tempfile::tempdir().unwrap();
            let path = d.path().join("n");
            let mut out = Lines::new(std::fs::File::create(&path).unwrap());
            out.num(v).unwrap();
            out.field(v).unwrap();
            out.finish().unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{v}, {v}"));
        }
    }

    #[test]
    fn log_prio_writes_the_priority_value_in_hexadecimal() {
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            prio: true,
            ..spec(d.path(), 0)
        };
        let mut logs = Logs::new(&s, true, false);
        logs.io(io(5, 1, 155_902), &mut DirResult::default());
        logs.finish(6).unwrap();
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
        let mut logs = Logs::new(&spec(d.path(), 0), true, false);
        let mut r = DirResult::default();
        logs.io(io(0, 0, 924_163), &mut r);
        logs.io(io(1, 1, 6_240), &mut r);
        logs.finish(2).unwrap();
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
        assert_eq!((r.bw_samples.count(), r.iops_samples.count()), (2, 2));
        assert_eq!(r.bw_samples.max(), Some(656_410));
    }

    #[test]
    fn log_offset_adds_the_offset_before_the_priority() {
        let d = tempfile::tempdir().unwrap();
        let s = LogSpec {
            offset: true,
            ..spec(d.path(), 0)
        };
        let mut logs = Logs::new(&s, true, false);
        logs.io(io(5, 1, 155_902), &mut DirResult::default());
        logs.finish(6).unwrap();
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "5, 155902, 1, 4096, 8192, 0\n"
        );
        assert_eq!(read(d.path(), "p_bw.3.log"), "5, 26272, 1, 4096, 8192, 0\n");
    }

    #[test]
    fn averaged_latencies_are_a_rounded_mean_per_window_and_direction() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 300), true, false);
        let mut r = DirResult::default();
        // Reads at 0, 143, 286 and 429 ms: the window ends with the I/O at
        // 429 and the next one begins at 300.
        for (ms, v) in [(0, 100), (143, 201), (286, 300), (429, 400)] {
            logs.io(io(ms, 0, v), &mut r);
        }
        // A direction's first window begins at 0 too.
        logs.io(io(500, 1, 7), &mut r);
        logs.io(io(571, 0, 1000), &mut r);
        logs.io(io(714, 0, 2001), &mut r);
        // The last window, open when the job ends, is written then.
        logs.io(io(750, 0, 50), &mut r);
        logs.finish(800).unwrap();
        assert_eq!(
            read(d.path(), "p_clat.3.log"),
            "429, 250, 0, 0, 0\n500, 7, 1, 0, 0\n714, 1501, 0, 0, 0\n800, 50, 0, 0, 0\n"
        );
        // No per-I/O bandwidth or IOPS samples when averaging.
        assert_eq!(r.bw_samples.count(), 0);
        assert_eq!(read(d.path(), "p_bw.3.log"), "");
    }

    #[test]
    fn slat_is_logged_at_submission_so_the_last_ios_in_flight_close_no_window() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 100), true, false);
        let mut r = DirResult::default();
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
            logs.io(io, &mut r);
        }
        logs.finish(104).unwrap();
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
        let mut logs = Logs::new(&spec(d.path(), 0), true, false);
        let mut r = DirResult::default();
        // Submitted at 1, 2 and 3 ms; the second completes last.
        for (sub, done) in [(1, 4), (3, 5), (2, 6)] {
            let io = Logged {
                slat_ms: sub,
                slat: Some(100 * sub),
                ..io(done, 0, 2000)
            };
            logs.io(io, &mut r);
        }
        logs.finish(7).unwrap();
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
        let mut logs = Logs::new(&spec(d.path(), 0), true, false);
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
            logs.io(io(ms, 0, ns), &mut r);
        }
        logs.finish(240).unwrap();
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
            let mut logs = Logs::new(&s, true, false);
            logs.io(io(clone, 0, 1000), &mut DirResult::default());
            logs.finish(3).unwrap();
        }
        assert_eq!(
            read(d.path(), "p_clat.log"),
            "0, 1000, 0, 4096, 0\n1, 1000, 0, 4096, 0\n"
        );
        let mut off = Logs::new(&spec(d.path(), 0), false, false);
        off.io(io(0, 0, 1000), &mut DirResult::default());
        off.finish(1).unwrap();
        assert_eq!(read(d.path(), "p_clat.3.log"), "");
        assert_eq!(read(d.path(), "p_clat_hist.3.log"), "");
    }

    #[test]
    fn disable_bw_measurement_leaves_the_per_io_bandwidth_log_empty() {
        let d = tempfile::tempdir().unwrap();
        let mut logs = Logs::new(&spec(d.path(), 0), true, true);
        let mut r = DirResult::default();
        logs.io(io(0, 0, 1000), &mut r);
        logs.finish(1).unwrap();
        assert_eq!(read(d.path(), "p_bw.3.log"), "");
        assert_eq!(r.bw_samples.count(), 0);
        assert_eq!(r.iops_samples.count(), 1);
    }
}
