//! fio's `pvsync2` engine: preadv2(2) and pwritev2(2) with one iovec and
//! per-I/O flags (`RWF_HIPRI` when `hipri` is set: the kernel polls for the
//! completion on devices with poll queues), each completing inside `queue`.
//! The engine checks at creation that the kernel has the system calls.

use crate::syncbase::{last_errno, offset, transferred, SyncBase, SyncData};
use crate::{EngineError, EngineOpts, IoUnit, Op};

pub(crate) struct Pvsync2Engine {
    base: SyncBase,
    /// `RWF_*` flags of every read and write.
    flags: libc::c_int,
}

impl Pvsync2Engine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        kernel_has_preadv2()?;
        Ok(Self {
            base: SyncBase::new(opts)?,
            flags: if opts.hipri { libc::RWF_HIPRI } else { 0 },
        })
    }
}

/// preadv2 on an invalid descriptor: EBADF when the kernel has the call,
/// ENOSYS (or EPERM under a seccomp filter) when it does not. The raw system
/// call, because the C library hides ENOSYS behind a preadv fallback.
fn kernel_has_preadv2() -> Result<(), EngineError> {
    let no_iov: *const libc::iovec = std::ptr::null();
    // SAFETY: zero iovecs are passed, so the null pointer is never read; fd
    // -1 is rejected before anything else happens. Arguments: fd, iov,
    // iovcnt, pos_l, pos_h, flags.
    let rc = unsafe { libc::syscall(libc::SYS_preadv2, -1, no_iov, 0, 0, 0, 0) };
    match (rc, last_errno()) {
        (0.., _) | (_, libc::EBADF) => Ok(()),
        (_, errno) => Err(EngineError::Refused {
            engine: "pvsync2",
            syscall: "preadv2",
            errno,
            hint: "use ioengine=psync instead",
        }),
    }
}

impl SyncData for Pvsync2Engine {
    const NAME: &'static str = "pvsync2";
    const VECTORED: bool = true;

    fn base(&mut self) -> &mut SyncBase {
        &mut self.base
    }

    #[inline]
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let flags = self.flags;
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
                Op::Read => unsafe { libc::preadv2(file.raw(), &iov, 1, off, flags) },
                // SAFETY: as above; pwritev2 only reads the buffer.
                _ => unsafe { libc::pwritev2(file.raw(), &iov, 1, off, flags) },
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{self, check, fill, io, opts, run, spec, temp};
    use crate::{create_named, EngineOpts, Op};

    #[test]
    fn engine_contract() {
        testutil::engine_contract("pvsync2");
    }

    #[test]
    fn hipri_reads_and_writes() {
        let dir = temp();
        let path = dir.path().join("hipri");
        let o = EngineOpts {
            hipri: true,
            ..opts(1, 4096)
        };
        let mut e = create_named("pvsync2", &o).unwrap();
        let f = e.open(&spec(&path, true, true)).unwrap();
        fill(e.as_mut(), 0, 0, 4096, 11);
        // Buffered I/O ignores the polling hint; a kernel may refuse it
        // with EOPNOTSUPP, which must then come back as a completion.
        match run(e.as_mut(), io(0, f, Op::Write, 0, 4096)).result {
            Ok(n) => {
                assert_eq!(n, 4096);
                e.buf(0).fill(0);
                assert_eq!(
                    run(e.as_mut(), io(0, f, Op::Read, 0, 4096)).result,
                    Ok(4096)
                );
                check(e.as_mut(), 0, 0, 4096, 11);
            }
            Err(errno) => assert_eq!(errno, libc::EOPNOTSUPP),
        }
    }
}
