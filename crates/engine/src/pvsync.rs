//! fio's `pvsync` engine: preadv(2) and pwritev(2) with one iovec, one I/O
//! at a time, each completing inside `queue`.

use crate::syncbase::{offset, transferred, SyncBase};
use crate::{
    Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op, Queued,
};

pub(crate) struct PvsyncEngine {
    base: SyncBase,
}

impl PvsyncEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
        })
    }
}

impl Engine for PvsyncEngine {
    fn name(&self) -> &'static str {
        "pvsync"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: true,
            vectored: true,
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
            Op::Read | Op::Write => {
                let (file, buf) = self.base.unit(io)?;
                let iov = libc::iovec {
                    iov_base: buf.as_mut_ptr().cast(),
                    iov_len: buf.len(),
                };
                offset(io).and_then(|off| {
                    transferred(match io.op {
                        // SAFETY: `iov` describes `buf`, a live, exclusively
                        // borrowed slice; one iovec is passed and lives on the
                        // stack across the call.
                        Op::Read => unsafe { libc::preadv(file.raw(), &iov, 1, off) },
                        // SAFETY: as above; pwritev only reads the buffer.
                        _ => unsafe { libc::pwritev(file.raw(), &iov, 1, off) },
                    })
                })
            }
            Op::Trim | Op::Fsync | Op::Fdatasync => self.base.no_data(io)?,
        };
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result,
        }))
    }

    fn commit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn reap(&mut self, _min: usize, _out: &mut Vec<Completion>) -> Result<(), EngineError> {
        Ok(())
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.base.buf(slot)
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil;

    #[test]
    fn engine_contract() {
        testutil::engine_contract("pvsync");
    }
}
