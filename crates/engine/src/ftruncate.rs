//! fio's `ftruncate` engine: each write sets the file's size to the I/O's
//! offset with ftruncate(2) (the block size is not used), so a job times
//! truncations. A read or trim completes with EINVAL, as in fio; no buffer
//! is read or written.

use crate::syncbase::{last_errno, offset, SyncBase};
use crate::{
    Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op, Queued,
};

pub(crate) struct FtruncateEngine {
    base: SyncBase,
}

impl FtruncateEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
        })
    }
}

impl Engine for FtruncateEngine {
    fn name(&self) -> &'static str {
        "ftruncate"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        self.base.open(file)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.base.close(file)
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let result = match io.op {
            Op::Fsync | Op::Fdatasync => self.base.no_data(io)?,
            Op::Write => {
                let fd = self.base.files.get_mut(io.file)?.raw();
                offset(io).and_then(|off| {
                    // SAFETY: ftruncate takes no pointers; a bad descriptor
                    // or length is an error return.
                    if unsafe { libc::ftruncate(fd, off) } == 0 {
                        Ok(io.len)
                    } else {
                        Err(last_errno())
                    }
                })
            }
            Op::Read | Op::Trim => Err(libc::EINVAL),
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
    use crate::testutil::{io, opts, run, spec, temp};
    use crate::{create_named, Op};

    #[test]
    fn a_write_sets_the_size_to_its_offset_and_a_read_is_einval() {
        let dir = temp();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 8192]).unwrap();
        let mut e = create_named("ftruncate", &opts(1, 4096)).unwrap();
        let f = e.open(&spec(&path, true, true)).unwrap();
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 12288, 4096)).result,
            Ok(4096)
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 12288);
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 4096, 4096)).result,
            Ok(4096)
        );
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4096);
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
            Err(libc::EINVAL)
        );
        e.close(f).unwrap();
    }
}
