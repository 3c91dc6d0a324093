//! fio's `null` engine: every I/O completes at once with its full length.
//! No file is opened and no buffer is read or written; the buffers exist
//! only so that `buf` has something to hand out.

use crate::{
    BufPool, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op,
    Queued,
};

/// The FileIds of an engine that opens no file (null, cpuio, exec): each
/// open takes the lowest free slot, as descriptors are numbered.
#[derive(Default)]
pub(crate) struct FileSlots(Vec<bool>);

impl FileSlots {
    pub(crate) fn open(&mut self) -> Result<FileId, EngineError> {
        let slot = match self.0.iter().position(|o| !o) {
            Some(i) => i,
            None => {
                self.0.push(false);
                self.0.len() - 1
            }
        };
        self.0[slot] = true;
        let id = u32::try_from(slot)
            .map_err(|_| EngineError::Options("more than 2^32 open files".to_string()))?;
        Ok(FileId(id))
    }

    pub(crate) fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        match self.0.get_mut(file.0 as usize) {
            Some(o @ true) => {
                *o = false;
                Ok(())
            }
            _ => Err(EngineError::UnknownFile(file)),
        }
    }

    pub(crate) fn is_open(&self, file: FileId) -> bool {
        self.0.get(file.0 as usize).copied().unwrap_or(false)
    }
}

pub(crate) struct NullEngine {
    bufs: BufPool,
    open: FileSlots,
}

impl NullEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        let slots = usize::try_from(opts.iodepth.max(1)).unwrap_or(1);
        Ok(Self {
            bufs: BufPool::new(slots, opts.buf_size, opts.align)?,
            open: FileSlots::default(),
        })
    }
}

impl Engine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: false,
            vectored: false,
        }
    }

    fn open(&mut self, _file: &FileSpec) -> Result<FileId, EngineError> {
        self.open.open()
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.open.close(file)
    }

    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        if !self.open.is_open(io.file) {
            return Err(EngineError::UnknownFile(io.file));
        }
        let bytes = match io.op {
            Op::Read | Op::Write | Op::Trim => io.len,
            Op::Fsync | Op::Fdatasync => 0,
        };
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result: Ok(bytes),
        }))
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot as usize)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{io, opts, run, spec, temp};
    use crate::{create_named, EngineError, FileId, Op};

    #[test]
    fn completes_everything_and_touches_nothing() {
        let dir = temp();
        let path = dir.path().join("never-created");
        let mut e = create_named("null", &opts(2, 4096)).unwrap();
        assert!(!e.caps().needs_buffers);
        let f = e.open(&spec(&path, true, true)).unwrap();
        e.buf(1).fill(0xee);
        for (op, want) in [
            (Op::Write, 4096),
            (Op::Read, 4096),
            (Op::Trim, 4096),
            (Op::Fsync, 0),
            (Op::Fdatasync, 0),
        ] {
            assert_eq!(
                run(e.as_mut(), io(1, f, op, 1 << 40, 4096)).result,
                Ok(want)
            );
        }
        assert!(
            e.buf(1).iter().all(|&b| b == 0xee),
            "null read changed the buffer"
        );
        assert!(!path.exists());
        e.commit().unwrap();
        e.close(f).unwrap();
        assert!(matches!(e.close(f), Err(EngineError::UnknownFile(_))));
        assert!(matches!(
            e.queue(&io(0, FileId(0), Op::Read, 0, 1)),
            Err(EngineError::UnknownFile(_))
        ));
        assert_eq!(e.open(&spec(&path, true, false)).unwrap(), FileId(0));
    }
}
