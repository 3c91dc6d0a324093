//! fio's `psync` engine: pread(2) and pwrite(2), one I/O at a time, each
//! completing inside `queue`.

use crate::rawsys;
use crate::syncbase::{offset, SyncBase, SyncData};
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
            // The system calls are made directly (see rawsys): glibc's
            // wrappers add two pthread cancellation-point calls around
            // each, which a worker thread never needs.
            let moved = match io.op {
                Op::Read => rawsys::pread(file.raw(), buf, off),
                _ => rawsys::pwrite(file.raw(), buf, off),
            }?;
            // At most `len`, which is a u32.
            Ok(u32::try_from(moved).unwrap_or(u32::MAX))
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
