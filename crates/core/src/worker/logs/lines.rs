//! Log lines as text: numbers in decimal, and the parts of a line that
//! repeat from one line to the next kept as text and copied whole. Lines
//! are gathered in a block that is written to the log's file a large
//! block at a time, and cut only between lines, so that clones that
//! append to one file (`per_job_logs=0`) never mix parts of two lines.
//! A log with a line per I/O has millions of lines, which `write!` would
//! format through `std::fmt` one argument at a time.
//!
//! A log that grows past two windows (`WINDOW`) is written back and
//! dropped from the page cache behind its end: each whole window's
//! writeback is started once it is written, and the window before it is
//! waited for and dropped (sync_file_range, POSIX_FADV_DONTNEED). A log
//! of gigabytes then holds a few windows of memory, not as much of the
//! page cache as the kernel lets dirty data take, so it neither pushes
//! out what the job measures (a warm file) nor makes the kernel reclaim
//! and throttle while the job runs; and the memory it writes into is
//! memory just freed, not memory the machine must first find (on a
//! virtual machine, first touched: pages the host has taken back).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use iolab_engine::file;

/// Bytes gathered before they are written.
const BLOCK: usize = 1 << 18;
/// Room past the block for the longest line: a histogram entry, 1859
/// numbers of at most 20 digits and their separators.
const SLACK: usize = 1 << 16;
/// The memory of one log file's block.
pub(super) const BLOCK_BYTES: u64 = (BLOCK + SLACK) as u64;
/// Bytes of a log file written back and dropped at a time.
const WINDOW: u64 = 8 << 20;

/// One log file: where it is, and whether the next write appends to it.
pub(super) struct LogOut {
    path: PathBuf,
    /// Append instead of replacing the file: a file the job's clones
    /// share, or one this clone has already begun.
    append: bool,
    /// The block, kept from one write to the next (empty before the
    /// first).
    buf: Vec<u8>,
    /// How far the file has been written back and dropped.
    behind: Behind,
}

impl LogOut {
    pub fn new(path: PathBuf, append: bool) -> LogOut {
        LogOut {
            path,
            append,
            buf: Vec::new(),
            behind: Behind::default(),
        }
    }

    /// Writes the lines that `each` makes to the file (see `begin`).
    pub fn write(&mut self, each: impl FnOnce(&mut Lines) -> io::Result<()>) -> io::Result<()> {
        let mut lines = self.begin()?;
        let made = each(&mut lines);
        made.map_err(|e| lines.named(e))?;
        lines.end()
    }

    /// Opens the file for a write of lines, until `Lines::end` (created if
    /// need be; replaced at the first write unless shared). A write of no
    /// line makes the file.
    pub fn begin(&mut self) -> io::Result<Lines<'_>> {
        let file = open(&self.path, self.append)?;
        self.append = true;
        if self.buf.is_empty() {
            self.buf = vec![0; BLOCK + SLACK];
        }
        Ok(Lines {
            file,
            path: &self.path,
            buf: &mut self.buf,
            behind: &mut self.behind,
            pos: 0,
        })
    }
}

/// The lines of one write to a log file.
pub(super) struct Lines<'a> {
    file: File,
    path: &'a Path,
    buf: &'a mut [u8],
    behind: &'a mut Behind,
    pos: usize,
}

/// A log file's windows written back and dropped (see the module).
#[derive(Debug, Default)]
struct Behind {
    /// Writeback has been started below this offset.
    started: u64,
    /// Dropped from the page cache below this offset.
    dropped: u64,
    /// The file is not one to do it to (a pipe, a character device, a
    /// filesystem that refuses it).
    off: bool,
}

impl Behind {
    /// After a write that left `file`'s offset at its end: starts the
    /// writeback of each whole window, and waits for and drops each
    /// window whose writeback began a window ago. Only a failed writeback
    /// (EIO, ENOSPC, EDQUOT: the lines did not reach the storage) is an
    /// error; a file this cannot be done to is written as it is.
    fn wrote(&mut self, file: &File) -> io::Result<()> {
        use std::io::Seek;
        if self.off {
            return Ok(());
        }
        let Ok(end) = (&*file).stream_position() else {
            self.off = true;
            return Ok(());
        };
        while !self.off && self.started + WINDOW <= end {
            let r = file::write_back(file, self.started, WINDOW, false);
            self.check(r)?;
            self.started += WINDOW;
        }
        while !self.off && self.dropped + 2 * WINDOW <= self.started {
            let r = file::write_back(file, self.dropped, WINDOW, true);
            self.check(r)?;
            if !self.off {
                self.off = file::drop_cache(file, self.dropped, WINDOW).is_err();
            }
            self.dropped += WINDOW;
        }
        Ok(())
    }

    /// A writeback's result: an error where the lines did not reach the
    /// storage; otherwise, where it failed, the file is left alone from
    /// now on.
    fn check(&mut self, r: io::Result<()>) -> io::Result<()> {
        match r {
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EIO | libc::ENOSPC | libc::EDQUOT)
                ) =>
            {
                Err(e)
            }
            Err(_) => {
                self.off = true;
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }
}

impl Lines<'_> {
    /// Writes what is left; the file is closed.
    pub fn end(mut self) -> io::Result<()> {
        self.flush().map_err(|e| self.named(e))
    }

    /// An error with the file's name.
    fn named(&self, e: io::Error) -> io::Error {
        named(self.path, &e)
    }

    /// Where the next byte goes.
    #[inline(always)]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Appends the bytes that `from` gathered from `start` on (a line,
    /// which `from` has not written out since).
    #[inline(always)]
    pub fn copy(&mut self, from: &Lines, start: usize) {
        let len = from.pos - start;
        if len <= 64 {
            // A fixed-size copy is a few moves, not a call.
            self.buf[self.pos..self.pos + 64].copy_from_slice(&from.buf[start..start + 64]);
        } else {
            self.buf[self.pos..self.pos + len].copy_from_slice(&from.buf[start..from.pos]);
        }
        self.pos += len;
    }

    /// Appends the `len` bytes before the end again (the line before).
    #[inline(always)]
    fn repeat(&mut self, len: usize) {
        let from = self.pos - len;
        if len <= 64 {
            // A fixed-size move is a few loads and stores, not a call;
            // what it copies past the line is overwritten after.
            self.buf.copy_within(from..from + 64, self.pos);
        } else {
            self.buf.copy_within(from..self.pos, self.pos);
        }
        self.pos += len;
    }

    /// The text appended from `start` on, as a piece (at most 32 bytes).
    #[inline(always)]
    fn piece_since(&self, start: usize) -> Piece {
        let mut text = [0; Piece::MAX];
        text.copy_from_slice(&self.buf[start..start + Piece::MAX]);
        Piece {
            text,
            len: (self.pos - start).min(Piece::MAX),
        }
    }

    /// A line begins: the block is written out once it is full. Between
    /// two calls no more than `SLACK` bytes may be added.
    #[inline(always)]
    pub fn line(&mut self) -> io::Result<()> {
        if self.pos >= BLOCK {
            self.flush().map_err(|e| self.named(e))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.write_all(&self.buf[..self.pos])?;
        self.pos = 0;
        self.behind.wrote(&self.file)
    }

    /// Appends `v` in decimal, as `{}` prints it.
    #[inline(always)]
    pub fn num(&mut self, mut v: u64) {
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
    }

    /// `v` after the separator `, `.
    #[inline]
    pub fn field(&mut self, v: u64) {
        self.byte(b',');
        self.byte(b' ');
        self.num(v);
    }

    #[inline]
    pub fn byte(&mut self, b: u8) {
        self.buf[self.pos] = b;
        self.pos += 1;
    }

    /// Appends a piece of text: all of its array is copied (one move of
    /// 32 bytes, no call), and the position advances by its length.
    #[inline]
    pub fn piece(&mut self, p: &Piece) {
        self.buf[self.pos..self.pos + Piece::MAX].copy_from_slice(&p.text);
        self.pos += p.len;
    }
}

/// Text of at most 32 bytes that lines repeat.
#[derive(Clone, Copy)]
pub(super) struct Piece {
    text: [u8; Piece::MAX],
    len: usize,
}

impl Piece {
    const MAX: usize = 32;

    /// The text `s` (cut at 32 bytes, which no piece of a log line reaches).
    pub fn new(s: &str) -> Piece {
        let mut text = [0; Piece::MAX];
        let len = s.len().min(Piece::MAX);
        text[..len].copy_from_slice(&s.as_bytes()[..len]);
        Piece { text, len }
    }
}

/// How a latency, bandwidth or IOPS log's lines are written:
/// `time, value, direction, block size, [offset, ]priority`, with the
/// text that repeats from line to line (the time, most often the same
/// for thousands of lines; direction, block size and priority) kept from
/// the line before. Without the offset column a line the same as the one
/// before (an IOPS log's, mostly) is copied whole, and the text of
/// recent values is kept by value (a fast device's latencies are a few
/// values over and over).
pub(super) struct Format {
    /// `log_offset=1`: the offset before the priority.
    offset: bool,
    /// `, PRIO` and the newline.
    prio: Piece,
    /// The time of the line before and its text with the separator after.
    ms: (u64, Piece),
    /// Direction and block size of the line before (as one key), and
    /// their text, with the priority when there is no offset.
    tail: (u64, Piece),
    /// The line before this format wrote to its file (time, value, key),
    /// and its length (0: none to copy).
    last: (u64, u64, u64, usize),
    /// Value texts, by a hash of the value.
    values: Box<[(u64, Piece); VALUES]>,
}

/// Value texts a format keeps.
const VALUES: usize = 256;

/// The slot of `v` among `VALUES`.
#[inline(always)]
fn slot(v: u64) -> usize {
    (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

impl Format {
    /// With the offset column or not; the priority `0`, or the I/O
    /// priority value in hexadecimal (`log_prio=1`), as fio writes them.
    pub fn new(offset: bool, prio: bool) -> Format {
        Format {
            offset,
            prio: Piece::new(if prio { ", 0x0000\n" } else { ", 0\n" }),
            ms: (u64::MAX, Piece::new("")),
            tail: (u64::MAX, Piece::new("")),
            last: (0, 0, 0, 0),
            // Every slot holds a true value's text from the start.
            values: Box::new([(u64::MAX, Piece::new(&u64::MAX.to_string())); VALUES]),
        }
    }

    /// The line before in the file is not this format's (it was copied
    /// from another log's): the next line is made in full.
    #[inline(always)]
    pub fn forget(&mut self) {
        self.last.3 = 0;
    }

    /// One line.
    #[inline(always)]
    pub fn line(
        &mut self,
        out: &mut Lines,
        ms: u64,
        value: u64,
        dir: u8,
        bs: u32,
        offset: u64,
    ) -> io::Result<()> {
        out.line()?;
        let key = u64::from(dir) << 32 | u64::from(bs);
        let (l_ms, l_value, l_key, len) = self.last;
        // The line before is still in the block (written since the last
        // write to the file, which leaves `pos` at 0).
        if l_ms == ms && l_value == value && l_key == key && len > 0 && out.pos() >= len {
            out.repeat(len);
            return Ok(());
        }
        let start = out.pos();
        if ms != self.ms.0 {
            self.ms = (ms, Piece::new(&format!("{ms}, ")));
        }
        out.piece(&self.ms.1);
        let known = &mut self.values[slot(value)];
        if known.0 == value {
            out.piece(&known.1);
        } else {
            let at = out.pos();
            out.num(value);
            *known = (value, out.piece_since(at));
        }
        if key != self.tail.0 {
            let prio = std::str::from_utf8(&self.prio.text[..self.prio.len]).unwrap_or("\n");
            let text = if self.offset {
                format!(", {dir}, {bs}")
            } else {
                format!(", {dir}, {bs}{prio}")
            };
            self.tail = (key, Piece::new(&text));
        }
        out.piece(&self.tail.1);
        if self.offset {
            out.field(offset);
            out.piece(&self.prio);
        } else {
            self.last = (ms, value, key, out.pos() - start);
        }
        Ok(())
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

/// Opens a log file, created with mode 0644 if need be, following a
/// symbolic link at its name only as [`crate::links`] allows (the plan
/// checked the name; this judges a link planted since).
fn open(path: &Path, append: bool) -> io::Result<File> {
    let how = if append {
        libc::O_APPEND
    } else {
        libc::O_TRUNC
    };
    crate::links::open(path, libc::O_WRONLY | libc::O_CREAT | how, 0o644)
        .map_err(|e| named(path, &e))
}

/// A log file's error, with its name and the errno of the call that
/// failed, which the job reports as its error (fio's `err=`).
#[derive(Debug)]
struct LogError {
    errno: Option<i32>,
    text: String,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for LogError {}

/// `e` with the log file's name, keeping its errno.
fn named(path: &Path, e: &io::Error) -> io::Error {
    let err = LogError {
        errno: errno_of(e),
        text: with_path(path, e),
    };
    io::Error::new(e.kind(), err)
}

/// The errno of a failed call on a log file, named or not.
pub(crate) fn errno_of(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<LogError>())
            .and_then(|l| l.errno)
    })
}

fn with_path(path: &Path, e: &io::Error) -> String {
    let text = e.to_string();
    if text.starts_with("log file `") {
        return text;
    }
    format!("log file `{}`: {text}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(each: impl FnOnce(&mut Lines) -> io::Result<()>) -> String {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("n");
        LogOut::new(path.clone(), false).write(each).unwrap();
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn numbers_are_written_as_display_writes_them() {
        for v in [0, 7, 10, 99, 100, 101, 4096, 155_902, 1 << 40, u64::MAX] {
            let text = written(|out| {
                out.num(v);
                out.field(v);
                Ok(())
            });
            assert_eq!(text, format!("{v}, {v}"));
        }
    }

    #[test]
    fn lines_are_whole_in_every_block_and_repeat_no_stale_text() {
        // Enough lines for several blocks, with times, directions, sizes
        // and offsets that change at different paces.
        let mut want = String::new();
        let text = written(|out| {
            let mut f = Format::new(true, true);
            for i in 0..20_000u64 {
                let (ms, dir, bs) = (i / 7, (i / 3 % 3) as u8, 512 << (i / 1000 % 4));
                want += &format!("{ms}, {}, {dir}, {bs}, {}, 0x0000\n", i * 37, i << 12);
                f.line(out, ms, i * 37, dir, bs, i << 12)?;
            }
            Ok(())
        });
        assert_eq!(text, want);
        let plain = written(|out| {
            let mut f = Format::new(false, false);
            f.line(out, 5, 155_902, 1, 4096, 8192)?;
            f.line(out, 5, 7, 1, 4096, 0)?;
            f.line(out, 12, 7, 0, 4096, 0)
        });
        assert_eq!(
            plain,
            "5, 155902, 1, 4096, 0\n5, 7, 1, 4096, 0\n12, 7, 0, 4096, 0\n"
        );
    }

    #[test]
    fn repeated_lines_and_values_are_written_as_they_are_across_blocks() {
        // Few values and times, so that most lines are the line before
        // again, over several blocks (a block's first line is made in
        // full); values that share a slot of the value texts.
        let mut want = String::new();
        let text = written(|out| {
            let mut f = Format::new(false, false);
            for i in 0..100_000u64 {
                let (ms, dir) = (i / 1000, (i / 5 % 2) as u8);
                let v = [1, 1, 7, 1 << 40, u64::MAX - 3, 7][(i % 6) as usize] + i / 30_000;
                want += &format!("{ms}, {v}, {dir}, 4096, 0\n");
                want += &format!("{ms}, {v}, {dir}, 4096, 0\n");
                f.line(out, ms, v, dir, 4096, 0)?;
                f.line(out, ms, v, dir, 4096, 0)?;
            }
            Ok(())
        });
        assert_eq!(text, want);
    }

    /// A log file's error keeps the errno of the call that failed under
    /// the name it adds, once or twice named: the job's err= is that
    /// errno (EROFS on a read-only filesystem), not EIO.
    #[test]
    fn a_named_error_keeps_its_errno() {
        let p = Path::new("/ro/x_lat.1.log");
        let e = named(p, &io::Error::from_raw_os_error(libc::EROFS));
        assert_eq!(errno_of(&e), Some(libc::EROFS));
        let text = e.to_string();
        assert!(text.starts_with("log file `/ro/x_lat.1.log`: "), "{text}");
        let again = named(p, &e);
        assert_eq!(errno_of(&again), Some(libc::EROFS));
        assert_eq!(again.to_string(), text);
        let missing = open(Path::new("/nonexistent-dir/x.log"), false).unwrap_err();
        assert_eq!(errno_of(&missing), Some(libc::ENOENT), "{missing}");
    }

    /// A log past two windows keeps no more than its last windows in the
    /// page cache, whatever the number of writes it is made by, and its
    /// text is all there.
    #[test]
    fn a_long_log_is_dropped_from_the_page_cache_behind_its_end() {
        use iolab_engine::file::{fs_type, FsType};
        let d = tempfile::tempdir().unwrap();
        if let Ok(t @ (FsType::Tmpfs | FsType::Ramfs)) = fs_type(d.path()) {
            iolab_testkit::skip!("{}: {t:?} keeps its files in memory", d.path().display());
        }
        let path = d.path().join("n_lat.1.log");
        let mut log = LogOut::new(path.clone(), false);
        let (mut want, mut n) = (0u64, 0u64);
        // Lines (`tail` after the number of each) in writes of about
        // 1 MiB, up to `until` bytes.
        let mut more = |log: &mut LogOut, until: u64, tail: &str| {
            while want < until {
                log.write(|out| {
                    for _ in 0..40_000 {
                        out.line()?;
                        let at = out.pos();
                        out.num(n);
                        out.piece(&Piece::new(tail));
                        want += (out.pos() - at) as u64;
                        n += 1;
                    }
                    Ok(())
                })
                .unwrap();
            }
            (want, n)
        };
        let (written, lines) = more(&mut log, 5 * WINDOW + 12_345, ", 0, 4096, 0\n");
        let text = std::fs::read(&path).unwrap();
        assert_eq!(text.len() as u64, written);
        let last = format!("{}, 0, 4096, 0\n", lines - 1);
        assert!(text.ends_with(last.as_bytes()));
        drop(text);
        // Reading the file back brought it all in: drop it, then write on
        // to see what the writes alone leave.
        let f = File::open(&path).unwrap();
        let cached = |from: u64, len: u64| iolab_engine::residency::cached_bytes(&f, from, len);
        match cached(0, 0) {
            Ok(_) => {}
            Err(e) => iolab_testkit::skip!("the page cache cannot be read here: {e}"),
        }
        file::fsync(&f).unwrap();
        file::drop_cache(&f, 0, 0).unwrap();
        let (want, _) = more(&mut log, written + 4 * WINDOW, ", 1\n");
        let behind = log.behind.dropped;
        assert!(behind >= written + WINDOW, "dropped to {behind} of {want}");
        assert_eq!(cached(0, behind).unwrap(), 0, "cached below {behind}");
        // What was written since the last window dropped is still there.
        assert!(cached(behind, 0).unwrap() > 0);
        assert!(want - behind <= 3 * WINDOW, "{} left", want - behind);
    }

    /// Only a writeback that failed to reach the storage is an error; a
    /// file that takes no writeback or advice is written as it is.
    #[test]
    fn only_a_failed_writeback_is_an_error() {
        for errno in [libc::EIO, libc::ENOSPC, libc::EDQUOT] {
            let mut b = Behind::default();
            let e = b
                .check(Err(io::Error::from_raw_os_error(errno)))
                .unwrap_err();
            assert_eq!(e.raw_os_error(), Some(errno));
            assert!(!b.off);
        }
        for errno in [libc::ESPIPE, libc::EINVAL, libc::ENOSYS, libc::EOPNOTSUPP] {
            let mut b = Behind::default();
            assert!(b.check(Err(io::Error::from_raw_os_error(errno))).is_ok());
            assert!(b.off, "errno {errno}");
        }
        let mut b = Behind::default();
        assert!(b.check(Ok(())).is_ok());
        assert!(!b.off);
    }
}
