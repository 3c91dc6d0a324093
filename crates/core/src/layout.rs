//! Preparing files before the jobs of a phase start, as fio does: a file
//! that will be read and is missing or short is written to its size with
//! incompressible data (never left sparse, so reads touch real blocks:
//! "Laying out IO file"), and so is one that `overwrite=1` will only
//! write; a file that will only be written is created and given its size
//! with the job's `fallocate` mode, unless `create_on_open=1` leaves it to
//! the job's open. Layout time is not part of any measurement.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use iolab_engine::file::{fallocate, ftruncate, lock_exclusive, FallocMode};

use crate::gen::Rng;
use crate::plan::{Layout, PlanFile};

/// Bytes written per call while laying out.
const CHUNK: usize = 1 << 20;

/// Why a file could not be made ready: the call that failed (fio's
/// `func=`), its error, and whether this layout had created the file
/// (then what it left half made is iolab's to remove; a name it found
/// taken, a link or another's file, is not).
#[derive(Debug, thiserror::Error)]
#[error("{call}: {source}")]
pub struct LayoutError {
    pub call: &'static str,
    #[source]
    pub source: io::Error,
    /// The name this layout created, when it created the file.
    pub made: Option<PathBuf>,
}

impl LayoutError {
    /// The errno for fio's `error` field (EIO when the error has none).
    pub fn errno(&self) -> i32 {
        const EIO: i32 = 5;
        self.source.raw_os_error().unwrap_or(EIO)
    }
}

/// The error of a failed `call`, before the file was created.
fn at(call: &'static str) -> impl FnOnce(io::Error) -> LayoutError {
    move |source| LayoutError {
        call,
        source,
        made: None,
    }
}

/// The file as opened for layout, and the name it was created at when
/// this open created it.
struct Opened {
    file: File,
    made: Option<PathBuf>,
}

impl Opened {
    /// The error of a failed `call` on the opened file.
    fn at(&self, call: &'static str) -> impl FnOnce(io::Error) -> LayoutError {
        let made = self.made.clone();
        move |source| LayoutError { call, source, made }
    }
}

/// What preparing a file did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepared {
    /// The name the file was created at, when it did not exist before:
    /// the job's name, or where the job's own links lead.
    pub made: Option<PathBuf>,
    /// Bytes written to lay it out.
    pub written: u64,
}

/// Fills `buf` with pseudo-random bytes: data that neither compresses nor
/// deduplicates.
pub fn fill_random(buf: &mut [u8], rng: &mut Rng) {
    // As data::fill_random, then one more draw whatever the tail.
    let (words, rest) = buf.as_chunks_mut::<8>();
    for w in words {
        *w = rng.next_u64().to_le_bytes();
    }
    let last = rng.next_u64().to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

/// Makes `file` ready for its jobs.
pub fn prepare(file: &PlanFile, mode: FallocMode, rng: &mut Rng) -> Result<Prepared, LayoutError> {
    match file.layout {
        Layout::AsIs => Ok(Prepared {
            made: None,
            written: 0,
        }),
        // The job's open will make it.
        Layout::OnOpen => Ok(Prepared {
            made: file.existing.is_none().then(|| file.path.clone()),
            written: 0,
        }),
        Layout::Allocate => {
            let o = open_for_layout(file).map_err(at("open"))?;
            let f = &o.file;
            lock(f);
            let have = file.existing.unwrap_or(0);
            // truncate is the extension below, which never shrinks.
            if mode != FallocMode::Truncate {
                fallocate(f, mode, have, file.size - have).map_err(o.at("fallocate"))?;
            }
            extend(f, file.size).map_err(|e| LayoutError {
                made: o.made.clone(),
                ..e
            })?;
            Ok(Prepared {
                made: o.made,
                written: 0,
            })
        }
        Layout::Write => {
            let o = open_for_layout(file).map_err(at("open"))?;
            let mut f = &o.file;
            lock(f);
            // From the file's length now, not when the plan was made:
            // another process laying out the same file (a rank of an MPI
            // run, with its own region of it) may have written it since.
            let have = f.metadata().map_err(o.at("fstat"))?.len().min(file.size);
            // Reserve the space first where the filesystem can, so the
            // file is laid out in as few extents as possible.
            let _ = fallocate(f, FallocMode::Keep, have, file.size - have);
            f.seek(SeekFrom::Start(have)).map_err(o.at("lseek"))?;
            let mut buf = vec![0u8; CHUNK];
            let mut pos = have;
            while pos < file.size {
                let n = CHUNK.min((file.size - pos) as usize);
                fill_random(&mut buf[..n], rng);
                match f.write_all(&buf[..n]) {
                    Ok(()) => pos += n as u64,
                    // fill_device: the filesystem is full, and the file
                    // holds what fitted.
                    Err(e) if file.fill && is_full(&e) => {
                        pos = f.metadata().map_err(o.at("fstat"))?.len();
                        break;
                    }
                    Err(e) => return Err(o.at("write")(e)),
                }
            }
            f.sync_all().map_err(o.at("fsync"))?;
            Ok(Prepared {
                made: o.made,
                written: pos - have,
            })
        }
    }
}

/// Holds the file's lock until it is closed, so that processes laying out
/// one file do it one after the other: each sees the length the others
/// left. A filesystem without locks (ENOLCK, EOPNOTSUPP) is laid out
/// without; the extension below still never shrinks a file whose length
/// it saw.
fn lock(f: &File) {
    let _ = lock_exclusive(f);
}

/// Makes the file at least `size` bytes long; never shorter: a file that
/// is longer (another rank extended it for its own region) stays so.
fn extend(f: &File, size: u64) -> Result<(), LayoutError> {
    if f.metadata().map_err(at("fstat"))?.len() < size {
        ftruncate(f, size).map_err(at("ftruncate"))?;
    }
    Ok(())
}

/// Linux's ENOSPC (no space left on device) and EDQUOT (disk quota
/// exceeded): what ends a `fill_device` job.
pub(crate) fn full_errno(errno: i32) -> bool {
    const ENOSPC: i32 = 28;
    const EDQUOT: i32 = 122;
    errno == ENOSPC || errno == EDQUOT
}

fn is_full(e: &io::Error) -> bool {
    e.raw_os_error().is_some_and(full_errno)
}

/// Opens `file` to lay it out. A file that existed when the plan was made
/// is opened as fio opens it. One that did not is created where the
/// job's name leads (its links followed as [`crate::links`] allows, so a
/// link of the user's own to a file not made yet makes that file, as
/// fio's open does), exclusively and without following a symlink there,
/// so that a name planted between the plan and the layout is never
/// written through. Should a regular file have appeared at the job's
/// name meanwhile (an earlier phase of the same run made it), it is
/// opened, without following a symlink, and is not iolab's to remove.
fn open_for_layout(file: &PlanFile) -> io::Result<Opened> {
    let mut o = OpenOptions::new();
    o.read(true).write(true);
    if file.existing.is_some() {
        let file = o.create(true).truncate(false).open(&file.path)?;
        return Ok(Opened { file, made: None });
    }
    let at = crate::links::resolve(&file.path)?;
    o.custom_flags(libc::O_NOFOLLOW);
    match o.clone().create_new(true).open(&at) {
        Ok(file) => Ok(Opened {
            file,
            made: Some(at),
        }),
        // Only a regular file at the job's name itself is taken: a link
        // there (ELOOP, fio's `error=` says so) is not written through,
        // whoever's it is and wherever it leads.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let file = o.open(&file.path)?;
            Ok(Opened { file, made: None })
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    #[test]
    fn a_link_planted_after_the_plan_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        // Planned as a new file...
        let planned = plan_file(&p, 1 << 20, Layout::Write);
        assert!(planned.existing.is_none());
        // ...and a link to another file put in its place before layout.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let e = prepare(&planned, FallocMode::Native, &mut Rng::from_seed(1)).unwrap_err();
        assert_eq!(e.call, "open");
        assert_eq!(e.errno(), libc::ELOOP, "{e}");
        assert_eq!(e.made, None);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // A regular file made meanwhile (by an earlier phase) is used.
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"").unwrap();
        let r = prepare(&planned, FallocMode::Native, &mut Rng::from_seed(1)).unwrap();
        assert_eq!(r.written, 1 << 20);
        assert_eq!(r.made, None, "a file found there is not iolab's");
    }

    #[test]
    fn a_link_of_ones_own_to_a_file_not_made_yet_makes_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let (link, target) = (dir.path().join("l"), dir.path().join("t"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let planned = plan_file(&link, 8192, Layout::Write);
        let r = prepare(&planned, FallocMode::Native, &mut Rng::from_seed(1)).unwrap();
        // The file is made where the link leads, as fio's open makes it,
        // and the link stays a link.
        assert_eq!(r.made, Some(target.clone()));
        assert_eq!(std::fs::metadata(&target).unwrap().len(), 8192);
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    fn plan_file(path: &Path, size: u64, layout: Layout) -> PlanFile {
        PlanFile {
            path: path.to_path_buf(),
            size,
            existing: std::fs::metadata(path).ok().map(|m| m.len()),
            block_device: false,
            char_device: false,
            layout,
            fill: false,
        }
    }

    #[test]
    fn written_layout_is_real_incompressible_data() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut rng = Rng::from_seed(7);
        let r = prepare(
            &plan_file(&p, 3 << 20 | 100, Layout::Write),
            FallocMode::Native,
            &mut rng,
        )
        .unwrap();
        assert_eq!(
            r,
            Prepared {
                made: Some(p.clone()),
                written: 3 << 20 | 100
            }
        );
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.len(), 3 << 20 | 100);
        // Not sparse: every block is allocated.
        assert!(
            meta.blocks() * 512 >= meta.len(),
            "{} blocks",
            meta.blocks()
        );
        let data = std::fs::read(&p).unwrap();
        // No 4 KiB block repeats and the bytes are spread evenly.
        let mut blocks: Vec<&[u8]> = data.chunks(4096).collect();
        blocks.sort();
        blocks.dedup();
        assert_eq!(blocks.len(), data.len().div_ceil(4096));
        let zeros = data.iter().filter(|&&b| b == 0).count();
        assert!(zeros < data.len() / 128, "{zeros} zero bytes");
    }

    #[test]
    fn a_short_file_is_extended_and_its_data_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"keep me").unwrap();
        let mut rng = Rng::from_seed(1);
        let r = prepare(
            &plan_file(&p, 8192, Layout::Write),
            FallocMode::Native,
            &mut rng,
        )
        .unwrap();
        assert_eq!(
            r,
            Prepared {
                made: None,
                written: 8192 - 7
            }
        );
        let data = std::fs::read(&p).unwrap();
        assert_eq!(&data[..7], b"keep me");
        assert_eq!(data.len(), 8192);
    }

    #[test]
    fn a_failure_names_the_call_and_its_errno() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing").join("f");
        let mut rng = Rng::from_seed(1);
        for layout in [Layout::Write, Layout::Allocate] {
            let e =
                prepare(&plan_file(&p, 8192, layout), FallocMode::Native, &mut rng).unwrap_err();
            assert_eq!(e.call, "open");
            assert_eq!(e.errno(), 2);
            assert_eq!(
                e.to_string(),
                "open: No such file or directory (os error 2)"
            );
        }
        // An error without an errno counts as EIO.
        let e = LayoutError {
            call: "write",
            source: io::Error::other("short"),
            made: None,
        };
        assert_eq!(e.errno(), 5);
    }

    #[test]
    fn allocate_gives_the_size_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut rng = Rng::from_seed(1);
        let r = prepare(
            &plan_file(&p, 1 << 20, Layout::Allocate),
            FallocMode::Truncate,
            &mut rng,
        )
        .unwrap();
        assert_eq!(
            r,
            Prepared {
                made: Some(p.clone()),
                written: 0
            }
        );
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.len(), 1 << 20);
        assert_eq!(meta.blocks(), 0, "truncate leaves the file sparse");
    }
}
