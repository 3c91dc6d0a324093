//! fio's `psync` engine: pread(2) and pwrite(2), one I/O at a time, each
//! completing inside `queue`.

use crate::syncbase::{offset, transferred, SyncBase};
use crate::{
    Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op, Queued,
};

pub(crate) struct PsyncEngine {
    base: SyncBase,
}

impl PsyncEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
        })
    }
}

impl Engine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: true,
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
            Op::Read | Op::Write => {
                let (file, buf) = self.base.unit(io)?;
                offset(io).and_then(|off| {
                    transferred(match io.op {
                        // The system calls are made directly: glibc's
                        // wrappers add two pthread cancellation-point calls
                        // around each, which a worker thread never needs.
                        // SAFETY: `buf` is a live, exclusively borrowed slice
                        // of exactly `buf.len()` bytes for the call.
                        Op::Read => unsafe {
                            libc::syscall(
                                libc::SYS_pread64,
                                file.raw(),
                                buf.as_mut_ptr(),
                                buf.len(),
                                off,
                            ) as isize
                        },
                        // SAFETY: as above; pwrite only reads it.
                        _ => unsafe {
                            libc::syscall(
                                libc::SYS_pwrite64,
                                file.raw(),
                                buf.as_ptr(),
                                buf.len(),
                                off,
                            ) as isize
                        },
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
        testutil::engine_contract("psync");
    }
}
