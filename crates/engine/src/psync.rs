//! fio's `psync` engine: pread(2) and pwrite(2), one I/O at a time, each
//! completing inside `queue`.

use crate::syncbase::{offset, transferred, SyncBase, SyncData};
use crate::{EngineError, EngineOpts, IoUnit, Op};

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

impl SyncData for PsyncEngine {
    const NAME: &'static str = "psync";
    const VECTORED: bool = false;

    fn base(&mut self) -> &mut SyncBase {
        &mut self.base
    }

    #[inline]
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let (file, buf) = self.base.unit(io)?;
        Ok(offset(io).and_then(|off| {
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
                    libc::syscall(libc::SYS_pwrite64, file.raw(), buf.as_ptr(), buf.len(), off)
                        as isize
                },
            })
        }))
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
