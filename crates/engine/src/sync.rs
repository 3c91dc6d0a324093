//! fio's `sync` engine: read(2) and write(2) at the file position, after an
//! lseek(2) that is skipped when the position is already the I/O's offset
//! (where the previous I/O on the file ended), as fio does. Sequential I/O
//! costs one system call, random I/O two.

use crate::syncbase::{last_errno, offset, transferred, SyncBase, SyncData};
use crate::{EngineError, EngineOpts, IoUnit, Op};

pub(crate) struct SyncEngine {
    base: SyncBase,
    /// lseek(2) calls made, for the tests of the skipping.
    #[cfg(test)]
    seeks: u64,
}

impl SyncEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
            #[cfg(test)]
            seeks: 0,
        })
    }

    /// A read or write at the file position, moved to the offset first.
    #[inline]
    fn read_or_write(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let (file, buf) = self.base.unit(io)?;
        let off = match offset(io) {
            Ok(off) => off,
            Err(errno) => return Ok(Err(errno)),
        };
        let fd = file.raw();
        if file.pos != Some(io.offset) {
            #[cfg(test)]
            {
                self.seeks += 1;
            }
            // SAFETY: lseek takes no pointers; a bad fd is an error return.
            if unsafe { libc::lseek(fd, off, libc::SEEK_SET) } < 0 {
                file.pos = None;
                return Ok(Err(last_errno()));
            }
        }
        let result = transferred(match io.op {
            // SAFETY: `buf` is a live, exclusively borrowed slice of exactly
            // `buf.len()` bytes for the call.
            Op::Read => unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) },
            // SAFETY: as above; write only reads it.
            _ => unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) },
        });
        // After an error the position is unknown: seek next time.
        file.pos = result.ok().map(|n| io.offset + u64::from(n));
        Ok(result)
    }
}

impl SyncData for SyncEngine {
    const NAME: &'static str = "sync";
    const VECTORED: bool = false;

    fn base(&mut self) -> &mut SyncBase {
        &mut self.base
    }

    #[inline]
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        self.read_or_write(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, check, fill, io, opts, spec, temp};
    use crate::{Engine, Queued};

    #[test]
    fn engine_contract() {
        testutil::engine_contract("sync");
    }

    fn run(e: &mut SyncEngine, unit: IoUnit) -> Result<u32, i32> {
        match e.queue(&unit).unwrap() {
            Queued::Completed(c) => c.result,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lseek_only_when_the_position_is_elsewhere() {
        let dir = temp();
        let path = dir.path().join("seq");
        let mut e = SyncEngine::new(&opts(1, 4096)).unwrap();
        let f = e.open(&spec(&path, true, true)).unwrap();
        // Sequential from 0: the position after open is 0, no seek at all.
        for off in (0..8).map(|i| i * 4096) {
            fill(&mut e, 0, off, 4096, 3);
            assert_eq!(run(&mut e, io(0, f, Op::Write, off, 4096)), Ok(4096));
        }
        assert_eq!(e.seeks, 0);
        // A jump seeks once, then sequential again does not.
        assert_eq!(run(&mut e, io(0, f, Op::Read, 8192, 4096)), Ok(4096));
        check(&mut e, 0, 8192, 4096, 3);
        assert_eq!(run(&mut e, io(0, f, Op::Read, 12288, 4096)), Ok(4096));
        check(&mut e, 0, 12288, 4096, 3);
        assert_eq!(e.seeks, 1);
        // fsync does not move the position.
        assert_eq!(run(&mut e, io(0, f, Op::Fsync, 0, 0)), Ok(0));
        assert_eq!(run(&mut e, io(0, f, Op::Read, 16384, 4096)), Ok(4096));
        assert_eq!(e.seeks, 1);
        // A short read leaves the position at EOF.
        assert_eq!(
            run(&mut e, io(0, f, Op::Read, 30000, 4096)),
            Ok(32768 - 30000)
        );
        assert_eq!(e.seeks, 2);
        assert_eq!(run(&mut e, io(0, f, Op::Read, 32768, 4096)), Ok(0));
        assert_eq!(e.seeks, 2);
        // Positions are per file.
        let g = e.open(&spec(&path, true, false)).unwrap();
        assert_eq!(run(&mut e, io(0, g, Op::Read, 0, 4096)), Ok(4096));
        assert_eq!(run(&mut e, io(0, f, Op::Read, 32768, 4096)), Ok(0));
        assert_eq!(e.seeks, 2);
    }

    #[test]
    fn an_error_forgets_the_position() {
        let dir = temp();
        let path = dir.path().join("ro");
        std::fs::write(&path, [0u8; 8192]).unwrap();
        let mut e = SyncEngine::new(&opts(1, 4096)).unwrap();
        let f = e.open(&spec(&path, true, false)).unwrap();
        assert_eq!(run(&mut e, io(0, f, Op::Write, 0, 4096)), Err(libc::EBADF));
        assert_eq!(e.seeks, 0);
        assert_eq!(run(&mut e, io(0, f, Op::Read, 0, 4096)), Ok(4096));
        assert_eq!(e.seeks, 1);
    }
}
