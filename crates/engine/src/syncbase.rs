//! `SyncBase`: what the synchronous engines (`sync`, `psync`, `pvsync`,
//! `pvsync2`) share: the open files, the buffers, checking an `IoUnit`
//! against them, and the operations that move no data (trim, fsync,
//! fdatasync). Each engine does its own read and write system call.

use crate::fdtable::{FdTable, OpenFile};
use crate::file::BLKDISCARD;
use crate::{
    BufPool, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op,
    Queued,
};

pub(crate) struct SyncBase {
    pub files: FdTable,
    pub bufs: BufPool,
}

impl SyncBase {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        let slots = usize::try_from(opts.iodepth.max(1)).unwrap_or(1);
        Ok(Self {
            files: FdTable::default(),
            bufs: BufPool::new(slots, opts.buf_size, opts.align)?,
        })
    }

    pub fn open(&mut self, spec: &FileSpec) -> Result<FileId, EngineError> {
        self.files.open(spec)
    }

    pub fn close(&mut self, id: FileId) -> Result<(), EngineError> {
        self.files.close(id)
    }

    pub fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.bufs.slot(slot as usize)
    }

    /// The file and the first `len` bytes of the buffer of a read or write.
    #[inline]
    pub fn unit(&mut self, io: &IoUnit) -> Result<(&mut OpenFile, &mut [u8]), EngineError> {
        let (slots, size) = (self.bufs.slots(), self.bufs.size());
        let buf =
            self.bufs
                .get_mut(io.slot as usize, io.len as usize)
                .ok_or(EngineError::BadUnit {
                    slot: io.slot,
                    len: io.len,
                    slots,
                    size,
                })?;
        Ok((self.files.get_mut(io.file)?, buf))
    }

    /// Trim, fsync or fdatasync: one system call on the unit's file.
    #[inline]
    pub fn no_data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let file = self.files.get_mut(io.file)?;
        let fd = file.raw();
        let rc = match io.op {
            // SAFETY: fsync takes no pointers; a bad fd is an error return.
            Op::Fsync => unsafe { libc::fsync(fd) },
            // SAFETY: as fsync.
            Op::Fdatasync => unsafe { libc::fdatasync(fd) },
            Op::Trim if file.is_block => {
                let range: [u64; 2] = [io.offset, u64::from(io.len)];
                // SAFETY: BLKDISCARD reads two u64 (start, length) through
                // the pointer, which points at `range`, live across the call.
                let rc = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
                if rc == 0 {
                    return Ok(Ok(io.len));
                }
                rc
            }
            Op::Trim => return Ok(Err(libc::EOPNOTSUPP)),
            Op::Read | Op::Write => unreachable!("no_data called for {:?}", io.op),
        };
        Ok(if rc == 0 { Ok(0) } else { Err(last_errno()) })
    }
}

/// What sets one synchronous engine apart from the others: its name and how
/// it makes one read or write. The `Engine` implementation they share does
/// the rest (open files, buffers, trim and syncs, completion inside
/// `queue`).
pub(crate) trait SyncData: Send {
    const NAME: &'static str;
    /// Data moves through an iovec.
    const VECTORED: bool;
    fn base(&mut self) -> &mut SyncBase;
    /// One read or write: the bytes moved, or the errno.
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError>;
}

impl<T: SyncData> Engine for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: true,
            vectored: T::VECTORED,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        self.base().open(file)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.base().close(file)
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        Ok(Queued::Completed(Completion {
            slot: io.slot,
            result: self.complete_now(io)?,
        }))
    }

    #[inline]
    fn complete_now(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        match io.op {
            Op::Read | Op::Write => self.data(io),
            Op::Trim | Op::Fsync | Op::Fdatasync => self.base().no_data(io),
        }
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.base().buf(slot)
    }
}

/// errno of the last failed system call on this thread.
#[inline]
pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A read or write system call's return as a completion result.
#[inline]
pub(crate) fn transferred(ret: isize) -> Result<u32, i32> {
    if ret < 0 {
        Err(last_errno())
    } else {
        // At most `len`, which is a u32.
        Ok(u32::try_from(ret).unwrap_or(u32::MAX))
    }
}

/// An `IoUnit` offset as `off_t`, or EINVAL when it does not fit.
#[inline]
pub(crate) fn offset(io: &IoUnit) -> Result<libc::off_t, i32> {
    libc::off_t::try_from(io.offset).map_err(|_| libc::EINVAL)
}

#[cfg(test)]
mod tests {
    use crate::file::{block_device_size, file_size, is_block_device};
    use crate::testutil::{io, opts, run, spec, temp, LoopDev};
    use crate::{create_named, Op};

    #[test]
    fn trim_discards_on_a_block_device() {
        let dir = temp();
        let backing = dir.path().join("disk.img");
        std::fs::write(&backing, vec![0xabu8; 4 << 20]).unwrap();
        let dev = match LoopDev::new(&backing) {
            Ok(d) => d,
            Err(why) => iolab_testkit::skip!("{why}"),
        };
        assert!(is_block_device(&dev.0).unwrap());
        assert_eq!(file_size(&dev.0).unwrap(), 4 << 20);
        let f = std::fs::File::open(&dev.0).unwrap();
        assert_eq!(block_device_size(&f).unwrap(), 4 << 20);

        let mut e = create_named("psync", &opts(1, 65536)).unwrap();
        let d = e.open(&spec(&dev.0, true, true)).unwrap();
        match run(e.as_mut(), io(0, d, Op::Trim, 65536, 65536)).result {
            Ok(n) => assert_eq!(n, 65536),
            Err(errno) => {
                iolab_testkit::skip!("the loop device refuses discard, errno {errno}")
            }
        }
        assert_eq!(
            run(e.as_mut(), io(0, d, Op::Read, 65536, 65536)).result,
            Ok(65536)
        );
        assert!(
            e.buf(0).iter().all(|&b| b == 0),
            "discarded range reads zeros"
        );
        assert_eq!(
            run(e.as_mut(), io(0, d, Op::Read, 0, 65536)).result,
            Ok(65536)
        );
        assert!(e.buf(0).iter().all(|&b| b == 0xab), "the rest is kept");
        e.close(d).unwrap();
    }
}
