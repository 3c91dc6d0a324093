//! fio's `mmap` engine: each file mapped shared into memory once, reads and
//! writes as copies between the map and the slot's buffer (the page faults
//! do the I/O), fsync as msync(MS_SYNC) of the map, and sync=sync|dsync as
//! an msync of each written range. A file that will be written is first
//! extended to the size the job uses, as fio does, so no access falls past
//! its end. O_DIRECT has no meaning for memory and is refused at open.

use std::ptr::NonNull;

use crate::file::ftruncate;
use crate::syncbase::{last_errno, SyncBase};
use crate::{
    Access, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op,
    Queued, SyncMode,
};

/// One file's mapping.
struct Map {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
    sync_writes: bool,
}

// SAFETY: the mapping is owned by one engine, which one thread uses at a
// time; the pointer is not shared.
unsafe impl Send for Map {}

pub(crate) struct MmapEngine {
    base: SyncBase,
    /// Mappings by `FileId`.
    maps: Vec<Option<Map>>,
}

impl MmapEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        Ok(Self {
            base: SyncBase::new(opts)?,
            maps: Vec::new(),
        })
    }

    fn unmap(&mut self, id: FileId) {
        if let Some(m) = self.maps.get_mut(id.0 as usize).and_then(Option::take) {
            // SAFETY: `ptr` and `len` are exactly what mmap returned, and no
            // slice into the map outlives a call of this engine.
            unsafe { libc::munmap(m.ptr.as_ptr().cast(), m.len) };
        }
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for i in 0..self.maps.len() {
            self.unmap(FileId(i as u32));
        }
    }
}

/// `msync(MS_SYNC)` of `[offset, offset + len)` of a map, widened to whole
/// pages.
fn msync(m: &Map, offset: usize, len: usize) -> Result<u32, i32> {
    let page = (crate::host::page_size() as usize).max(1);
    let start = offset / page * page;
    let end = (offset + len).min(m.len);
    // SAFETY: `[start, end)` lies inside the live mapping and starts on a
    // page boundary, as msync requires.
    let rc = unsafe {
        libc::msync(
            m.ptr.as_ptr().add(start).cast(),
            end.saturating_sub(start),
            libc::MS_SYNC,
        )
    };
    if rc == 0 {
        Ok(0)
    } else {
        Err(last_errno())
    }
}

impl MmapEngine {
    /// One read or write: a copy between the map and the slot's buffer.
    #[inline]
    fn data(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        let map = self
            .maps
            .get(io.file.0 as usize)
            .and_then(Option::as_ref)
            .ok_or(EngineError::UnknownFile(io.file))?;
        let (ptr, map_len, writable, sync_writes) =
            (map.ptr, map.len, map.writable, map.sync_writes);
        let buf = self.base.unit(io)?.1;
        let Ok(offset) = usize::try_from(io.offset) else {
            return Ok(Err(libc::EINVAL));
        };
        // Past the end of the map: a read is short (nothing past the end
        // of the file), a write is refused rather than faulting.
        let n = map_len.saturating_sub(offset).min(buf.len());
        match io.op {
            Op::Read => {
                // SAFETY: `[offset, offset + n)` lies inside the live map
                // (n is 0 when offset is past its end); `buf` is an
                // exclusive borrow of at least n bytes that does not
                // overlap the map.
                unsafe {
                    std::ptr::copy_nonoverlapping(ptr.as_ptr().add(offset), buf.as_mut_ptr(), n)
                };
                Ok(Ok(n as u32))
            }
            Op::Write => {
                if !writable {
                    return Ok(Err(libc::EBADF));
                }
                if n < buf.len() {
                    return Ok(Err(libc::EFBIG));
                }
                // SAFETY: as for the read, in the other direction; the map
                // is writable (PROT_WRITE, MAP_SHARED).
                unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), ptr.as_ptr().add(offset), n) };
                if sync_writes {
                    let m = self.maps[io.file.0 as usize]
                        .as_ref()
                        .expect("mapped above");
                    if let Err(e) = msync(m, offset, n) {
                        return Ok(Err(e));
                    }
                }
                Ok(Ok(n as u32))
            }
            Op::Trim | Op::Fsync | Op::Fdatasync => unreachable!("data() with {:?}", io.op),
        }
    }
}

impl Engine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            needs_buffers: true,
            vectored: false,
        }
    }

    fn open(&mut self, spec: &FileSpec) -> Result<FileId, EngineError> {
        if spec.direct {
            return Err(EngineError::Options(
                "ioengine=mmap moves data through the page cache and cannot use direct=1; \
                 use direct=0, or ioengine=psync with direct=1"
                    .to_string(),
            ));
        }
        let e = self;
        // A shared writable map needs the file open for reading too.
        let id = e.base.open(&FileSpec {
            read: true,
            ..spec.clone()
        })?;
        let fail = |e: &mut MmapEngine, errno: i32, what: &str| {
            let _ = e.base.close(id);
            EngineError::Open {
                path: spec.path.clone(),
                errno,
                message: format!(
                    "ioengine=mmap: cannot {what} `{}`: {}",
                    spec.path.display(),
                    crate::errno_text(errno)
                ),
            }
        };
        let file = e.base.files.get_mut(id)?;
        let fd = file.raw();
        let current = match crate::file::file_size(&file.path) {
            Ok(n) => n,
            Err(err) => return Err(fail(e, err.raw_os_error().unwrap_or(libc::EIO), "size")),
        };
        // A file to write is extended to the region the job uses, so every
        // access lands inside the file.
        let mut len = current;
        if spec.write && spec.size > current && !file.is_block {
            let borrowed = file.fd.try_clone();
            let r = borrowed.and_then(|fd| ftruncate(&fd, spec.size));
            if let Err(err) = r {
                return Err(fail(e, err.raw_os_error().unwrap_or(libc::EIO), "extend"));
            }
            len = spec.size;
        }
        let Ok(len) = usize::try_from(len) else {
            return Err(fail(e, libc::EFBIG, "map"));
        };
        if len == 0 {
            // Nothing to map: every read is empty, every write refused.
            grow(&mut e.maps, id);
            e.maps[id.0 as usize] = None;
            return Ok(id);
        }
        let prot = libc::PROT_READ | if spec.write { libc::PROT_WRITE } else { 0 };
        // SAFETY: a fresh shared mapping of `len` bytes of an open file;
        // the kernel picks the address. It stays valid until munmap.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if ptr == libc::MAP_FAILED {
            let errno = last_errno();
            return Err(fail(e, errno, "map"));
        }
        let advice = match spec.access {
            Access::Normal => libc::MADV_NORMAL,
            Access::Sequential => libc::MADV_SEQUENTIAL,
            Access::Random => libc::MADV_RANDOM,
        };
        // SAFETY: the whole live mapping; madvise only hints.
        unsafe { libc::madvise(ptr, len, advice) };
        grow(&mut e.maps, id);
        e.maps[id.0 as usize] = Some(Map {
            ptr: NonNull::new(ptr.cast()).expect("mmap does not return null on success"),
            len,
            writable: spec.write,
            sync_writes: spec.write && spec.sync != SyncMode::None,
        });
        Ok(id)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.unmap(file);
        self.base.close(file)
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let result = match io.op {
            Op::Read | Op::Write => self.data(io)?,
            Op::Fsync | Op::Fdatasync => match self.maps.get(io.file.0 as usize) {
                Some(Some(m)) => msync(m, 0, m.len),
                _ => self.base.no_data(io)?,
            },
            Op::Trim => self.base.no_data(io)?,
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

fn grow(maps: &mut Vec<Option<Map>>, id: FileId) {
    let i = id.0 as usize;
    if maps.len() <= i {
        maps.resize_with(i + 1, || None);
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{io, opts, run, spec, temp};
    use crate::{create_named, Op, SyncMode};

    #[test]
    fn writes_land_in_the_file_and_read_back() {
        let dir = temp();
        let path = dir.path().join("m");
        let mut e = create_named("mmap", &opts(1, 8192)).unwrap();
        let mut s = spec(&path, true, true);
        s.size = 64 << 10;
        let f = e.open(&s).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            64 << 10,
            "extended"
        );
        e.buf(0).fill(0x5a);
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 8192, 8192)).result,
            Ok(8192)
        );
        assert_eq!(run(e.as_mut(), io(0, f, Op::Fsync, 0, 0)).result, Ok(0));
        e.buf(0).fill(0);
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Read, 8192, 8192)).result,
            Ok(8192)
        );
        assert!(e.buf(0).iter().all(|&b| b == 0x5a));
        e.close(f).unwrap();
        // Through the filesystem, not just the map.
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes[8192..16384].iter().all(|&b| b == 0x5a));
        assert!(bytes[..8192].iter().all(|&b| b == 0));
    }

    #[test]
    fn reads_past_the_end_are_short_and_writes_there_refused() {
        let dir = temp();
        let path = dir.path().join("short");
        std::fs::write(&path, vec![7u8; 6000]).unwrap();
        let mut e = create_named("mmap", &opts(1, 4096)).unwrap();
        let f = e.open(&spec(&path, true, false)).unwrap();
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Read, 4096, 4096)).result,
            Ok(1904)
        );
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Read, 8192, 4096)).result,
            Ok(0)
        );
        e.close(f).unwrap();
        let mut s = spec(&path, true, true);
        s.sync = SyncMode::Sync;
        let f = e.open(&s).unwrap();
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 4096, 4096)).result,
            Err(libc::EFBIG)
        );
        assert_eq!(
            run(e.as_mut(), io(0, f, Op::Write, 0, 4096)).result,
            Ok(4096)
        );
    }

    #[test]
    fn direct_is_refused_with_the_engine_to_use() {
        let dir = temp();
        let mut e = create_named("mmap", &opts(1, 4096)).unwrap();
        let mut s = spec(&dir.path().join("d"), true, true);
        s.direct = true;
        let err = e.open(&s).unwrap_err().to_string();
        assert!(err.contains("direct=0") && err.contains("psync"), "{err}");
    }
}
