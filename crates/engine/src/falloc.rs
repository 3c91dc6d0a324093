//! fio's `falloc` engine: each I/O is an fallocate(2) of its range instead
//! of a transfer. A write allocates and extends the file (mode 0), a read
//! allocates without changing the size (`FALLOC_FL_KEEP_SIZE`), a trim
//! punches a hole (`FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`), so it
//! works on regular files. Every file is opened read-write and created if
//! missing, as fio opens it; no buffer is read or written.

use crate::syncbase::{last_errno, offset, SyncBase};
use crate::{
    Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op, Queued,
};

pub(crate) struct FallocEngine {
    base: SyncBase,
}

impl FallocEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
        })
    }
}

/// The fallocate(2) mode fio uses for each direction.
fn mode(op: Op) -> libc::c_int {
    match op {
        Op::Read => libc::FALLOC_FL_KEEP_SIZE,
        Op::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
        _ => 0,
    }
}

/// The names of `mode(op)`'s flags, for messages ("mode 0" for none).
pub fn mode_name(op: Op) -> &'static str {
    match op {
        Op::Read => "FALLOC_FL_KEEP_SIZE",
        Op::Trim => "FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE",
        _ => "mode 0",
    }
}

impl Engine for FallocEngine {
    fn name(&self) -> &'static str {
        "falloc"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        let spec = FileSpec {
            read: true,
            write: true,
            create: true,
            ..file.clone()
        };
        self.base.open(&spec)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.base.close(file)
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let result = match io.op {
            Op::Fsync | Op::Fdatasync => self.base.no_data(io)?,
            op => {
                let fd = self.base.files.get_mut(io.file)?.raw();
                offset(io).and_then(|off| {
                    // SAFETY: fallocate takes no pointers; a bad descriptor
                    // or range is an error return.
                    let rc =
                        unsafe { libc::fallocate(fd, mode(op), off, libc::off_t::from(io.len)) };
                    if rc == 0 {
                        Ok(io.len)
                    } else {
                        Err(last_errno())
                    }
                })
            }
        };
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result,
        }))
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.base.buf(slot)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{io, opts, run, temp};
    use crate::{create_named, FileSpec, Op};

    #[test]
    fn mode_names_say_the_modes_flags() {
        for op in [Op::Read, Op::Write, Op::Trim] {
            let named = super::mode_name(op)
                .split('|')
                .map(|n| match n {
                    "FALLOC_FL_KEEP_SIZE" => libc::FALLOC_FL_KEEP_SIZE,
                    "FALLOC_FL_PUNCH_HOLE" => libc::FALLOC_FL_PUNCH_HOLE,
                    "mode 0" => 0,
                    other => panic!("{other}"),
                })
                .fold(0, |a, b| a | b);
            assert_eq!(named, super::mode(op), "{op:?}");
        }
    }
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn writes_allocate_reads_keep_the_size_trims_punch_holes() {
        let dir = temp();
        let path = dir.path().join("f");
        let mut e = create_named("falloc", &opts(1, 65536)).unwrap();
        // Opened read-only by the job, created and writable all the same.
        let spec = FileSpec {
            path: path.clone(),
            read: true,
            ..FileSpec::default()
        };
        let f = e.open(&spec).unwrap();
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 0, 65536)).result,
            Ok(65536)
        );
        let md = std::fs::metadata(&path).unwrap();
        assert_eq!(md.len(), 65536);
        assert!(md.blocks() * 512 >= 65536, "allocated: {}", md.blocks());
        // A read past the end allocates and keeps the size.
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Read, 65536, 65536)).result,
            Ok(65536)
        );
        let md = std::fs::metadata(&path).unwrap();
        assert_eq!(md.len(), 65536);
        assert!(md.blocks() * 512 >= 131072, "allocated: {}", md.blocks());
        // A trim frees what it covers; the size stays.
        match run(e.as_mut(), io(0, f, Op::Trim, 0, 65536)).result {
            Ok(n) => {
                assert_eq!(n, 65536);
                let md = std::fs::metadata(&path).unwrap();
                assert_eq!(md.len(), 65536);
                assert!(md.blocks() * 512 <= 65536, "freed: {}", md.blocks());
            }
            Err(errno) => {
                iolab_testkit::skip_case!(
                    "the trim: this filesystem punches no holes (errno {errno})"
                )
            }
        }
        assert!(e.caps().sync && !e.caps().needs_buffers);
        e.close(f).unwrap();
    }
}
