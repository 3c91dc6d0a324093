//! fio's file-operation engines: `filecreate`, `filestat`, `filedelete`,
//! `dircreate`, `dirstat` and `dirdelete`. Each turns a job's files into
//! metadata operations: the first I/O after a file is opened performs the
//! engine's operation on its path (create the file, stat it, unlink it,
//! mkdir, stat or rmdir the directory), so the worker times that operation
//! as the I/O's completion latency; the file's further I/Os complete at
//! once without a system call. With `filesize` equal to `bs`, as fio's
//! examples set it, every file gives exactly one timed operation, as in
//! fio, where the operation happens when the file is opened.
//!
//! `filecreate` keeps the created file open until the job closes it, as
//! fio does; the others hold nothing open.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::{
    BufPool, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op,
    Queued,
};

/// The operation an engine performs per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileOp {
    FileCreate,
    FileStat,
    FileDelete,
    DirCreate,
    DirStat,
    DirDelete,
}

impl FileOp {
    fn from_name(name: &str) -> Option<FileOp> {
        Some(match name {
            "filecreate" => FileOp::FileCreate,
            "filestat" => FileOp::FileStat,
            "filedelete" => FileOp::FileDelete,
            "dircreate" => FileOp::DirCreate,
            "dirstat" => FileOp::DirStat,
            "dirdelete" => FileOp::DirDelete,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            FileOp::FileCreate => "filecreate",
            FileOp::FileStat => "filestat",
            FileOp::FileDelete => "filedelete",
            FileOp::DirCreate => "dircreate",
            FileOp::DirStat => "dirstat",
            FileOp::DirDelete => "dirdelete",
        }
    }
}

/// One open file of the engine.
struct Slot {
    path: PathBuf,
    direct: bool,
    /// The operation has not been performed since the open.
    pending: bool,
    /// What `filecreate` made, closed with the file.
    created: Option<File>,
}

pub(crate) struct FileOpEngine {
    op: FileOp,
    bufs: BufPool,
    files: Vec<Option<Slot>>,
}

impl FileOpEngine {
    /// The engine fio calls `name`.
    pub(crate) fn new(name: &str, opts: &EngineOpts) -> Result<Self, EngineError> {
        let op = FileOp::from_name(name).ok_or_else(|| EngineError::UnknownEngine {
            name: name.to_string(),
        })?;
        let slots = usize::try_from(opts.iodepth.max(1)).unwrap_or(1);
        Ok(Self {
            op,
            bufs: BufPool::new(slots, opts.buf_size, opts.align)?,
            files: Vec::new(),
        })
    }

    /// Performs the operation on `slot`'s path.
    fn perform(op: FileOp, slot: &mut Slot) -> io::Result<()> {
        let path = &slot.path;
        match op {
            FileOp::FileCreate => {
                // Never through a symbolic link at the name: one planted
                // in a shared directory would have root create the file
                // it names (an empty /etc/nologin locks users out).
                let mut o = OpenOptions::new();
                o.write(true).create(true);
                let direct = if slot.direct { libc::O_DIRECT } else { 0 };
                o.custom_flags(libc::O_NOFOLLOW | direct);
                slot.created = Some(o.open(path)?);
            }
            FileOp::FileStat | FileOp::DirStat => {
                std::fs::metadata(path)?;
            }
            FileOp::FileDelete => std::fs::remove_file(path)?,
            FileOp::DirCreate => std::fs::create_dir(path)?,
            FileOp::DirDelete => std::fs::remove_dir(path)?,
        }
        Ok(())
    }
}

impl Engine for FileOpEngine {
    fn name(&self) -> &'static str {
        self.op.name()
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        let slot = Slot {
            path: file.path.clone(),
            direct: file.direct,
            pending: true,
            created: None,
        };
        let idx = match self.files.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.files.push(None);
                self.files.len() - 1
            }
        };
        self.files[idx] = Some(slot);
        let id = u32::try_from(idx)
            .map_err(|_| EngineError::Options("more than 2^32 open files".to_string()))?;
        Ok(FileId(id))
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        match self.files.get_mut(file.0 as usize).and_then(Option::take) {
            // Dropping the created file closes it; fio ignores close errors
            // of these engines as well.
            Some(_) => Ok(()),
            None => Err(EngineError::UnknownFile(file)),
        }
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let op = self.op;
        let Some(slot) = self
            .files
            .get_mut(io.file.0 as usize)
            .and_then(Option::as_mut)
        else {
            return Err(EngineError::UnknownFile(io.file));
        };
        let bytes = match io.op {
            Op::Read | Op::Write | Op::Trim => io.len,
            Op::Fsync | Op::Fdatasync => 0,
        };
        let mut result = Ok(bytes);
        if slot.pending && !matches!(io.op, Op::Fsync | Op::Fdatasync) {
            slot.pending = false;
            if let Err(e) = Self::perform(op, slot) {
                result = Err(e.raw_os_error().unwrap_or(libc::EIO));
            }
        }
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result,
        }))
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot as usize)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{io, opts, run, spec, temp};
    use crate::{create_named, Op};

    #[test]
    fn files_are_created_stated_and_deleted_once_per_open() {
        let dir = temp();
        let path = dir.path().join("f");
        let mut c = create_named("filecreate", &opts(1, 4096)).unwrap();
        assert_eq!(c.name(), "filecreate");
        assert!(!c.caps().needs_buffers);
        let f = c.open(&spec(&path, false, true)).unwrap();
        assert!(!path.exists(), "open only names the file");
        assert_eq!(
            run(c.as_mut(), io(0, f, Op::Write, 0, 4096)).result,
            Ok(4096)
        );
        assert!(path.exists());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        c.close(f).unwrap();

        let mut s = create_named("filestat", &opts(1, 4096)).unwrap();
        let f = s.open(&spec(&path, true, false)).unwrap();
        assert_eq!(
            run(s.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
            Ok(4096)
        );
        s.close(f).unwrap();

        let mut d = create_named("filedelete", &opts(1, 4096)).unwrap();
        let f = d.open(&spec(&path, true, false)).unwrap();
        assert_eq!(
            run(d.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
            Ok(4096)
        );
        assert!(!path.exists());
        // Later I/Os of the same open do nothing.
        assert_eq!(
            run(d.as_mut(), io(0, f, Op::Read, 4096, 4096)).result,
            Ok(4096)
        );
        d.close(f).unwrap();
        // A new open deletes again, and the file is gone.
        let f = d.open(&spec(&path, true, false)).unwrap();
        assert_eq!(
            run(d.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
            Err(libc::ENOENT)
        );
        let f2 = s.open(&spec(&path, true, false)).unwrap();
        assert_eq!(
            run(s.as_mut(), io(0, f2, Op::Read, 0, 4096)).result,
            Err(libc::ENOENT)
        );
    }

    #[test]
    fn filecreate_does_not_create_through_a_link() {
        let dir = temp();
        let target = dir.path().join("nologin");
        let path = dir.path().join("f");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let mut c = create_named("filecreate", &opts(1, 4096)).unwrap();
        let f = c.open(&spec(&path, false, true)).unwrap();
        assert_eq!(
            run(c.as_mut(), io(0, f, Op::Write, 0, 4096)).result,
            Err(libc::ELOOP)
        );
        assert!(!target.exists());
    }

    #[test]
    fn directories_are_made_stated_and_removed() {
        let dir = temp();
        let path = dir.path().join("d");
        for (name, want) in [
            ("dircreate", Ok(512)),
            ("dirstat", Ok(512)),
            ("dirdelete", Ok(512)),
            ("dirstat", Err(libc::ENOENT)),
        ] {
            let mut e = create_named(name, &opts(1, 4096)).unwrap();
            let f = e.open(&spec(&path, true, false)).unwrap();
            assert_eq!(
                run(e.as_mut(), io(0, f, Op::Read, 0, 512)).result,
                want,
                "{name}"
            );
            e.close(f).unwrap();
            if name == "dircreate" {
                assert!(path.is_dir());
            }
        }
        assert!(!path.exists());
    }
}
