//! fio's `pvsync` engine: preadv(2) and pwritev(2) with one iovec, one I/O
//! at a time, each completing inside `queue`.

use crate::syncbase::{offset, transferred, SyncBase, SyncData};
use crate::{EngineError, EngineOpts, IoUnit, Op};

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

impl SyncData for PvsyncEngine {
    const NAME: &'static str = "pvsync";
    const VECTORED: bool = true;

    fn base(&mut self) -> &mut SyncBase {
        &mut self.base
    }

    #[inline]
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let (file, buf) = self.base.unit(io)?;
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        Ok(offset(io).and_then(|off| {
            transferred(match io.op {
                // SAFETY: `iov` describes `buf`, a live, exclusively
                // borrowed slice; one iovec is passed and lives on the
                // stack across the call.
                Op::Read => unsafe { libc::preadv(file.raw(), &iov, 1, off) },
                // SAFETY: as above; pwritev only reads the buffer.
                _ => unsafe { libc::pwritev(file.raw(), &iov, 1, off) },
            })
        }))
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
