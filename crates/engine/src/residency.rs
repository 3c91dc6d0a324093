//! Where a file's data is, as the warnings need to know it: how much of a
//! byte range sits in the page cache (cachestat(2) on Linux 6.5 and
//! later, else mincore(2) over a read-only mapping, sampled on large
//! ranges), and how much of a file the filesystem stored compressed
//! (FIEMAP's `FIEMAP_EXTENT_ENCODED` flag, which btrfs sets on its
//! compressed extents). Nothing here is on a run's hot path.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::host;

/// cachestat(2)'s system call number, the same in the unified table of
/// every architecture Rust targets.
const SYS_CACHESTAT: libc::c_long = 451;

/// Bytes of `[offset, offset + len)` of `file` in the page cache (`len`
/// 0: to the end of the file). cachestat(2) where the kernel has it; else
/// mincore(2) over a mapping of the range (sampled beyond
/// `MINCORE_WINDOWS` windows, and scaled to the range).
pub fn cached_bytes(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    match cachestat_range(file, offset, len) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => mincore_bytes(file, offset, len),
        r => r,
    }
}

/// cachestat(2) over one range: its cached pages, in bytes.
pub fn cachestat_range(fd: impl AsFd, offset: u64, len: u64) -> io::Result<u64> {
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    let range = Range { off: offset, len };
    let mut st = Stat::default();
    // SAFETY: both pointers are to live structs laid out as the kernel's
    // `cachestat_range` and `cachestat`, which it only reads and writes
    // within their size; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            fd.as_fd().as_raw_fd(),
            &range as *const Range,
            &mut st as *mut Stat,
            0u32,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.nr_cache * host::page_size())
}

/// Windows mincore looks at, at most, over a range.
const MINCORE_WINDOWS: u64 = 64;
/// Bytes per window.
const MINCORE_WINDOW: u64 = 1 << 20;

/// mincore(2) over a shared read-only mapping of `[offset, offset+len)`:
/// every page of a range up to 64 MiB, else 64 windows of 1 MiB spread
/// evenly, the count scaled to the whole range. Mapping a file reads
/// nothing from it; mincore only looks at the page cache.
pub fn mincore_bytes(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    let size = file.metadata()?.len();
    let end = if len == 0 {
        size
    } else {
        offset.saturating_add(len).min(size)
    };
    if end <= offset {
        return Ok(0);
    }
    let page = host::page_size();
    let start = offset / page * page;
    let span = end - start;
    let windows = span.div_ceil(MINCORE_WINDOW);
    let (step, count) = if windows <= MINCORE_WINDOWS {
        (MINCORE_WINDOW, windows)
    } else {
        (span / MINCORE_WINDOWS / page * page, MINCORE_WINDOWS)
    };
    let mut looked = 0u64;
    let mut resident = 0u64;
    for i in 0..count {
        let at = start + i * step;
        let n = MINCORE_WINDOW.min(end - at);
        resident += mincore_window(file, at, n)?;
        looked += n;
    }
    // Sampled: the share seen, over the whole range.
    Ok(((resident as u128 * span as u128) / looked.max(1) as u128) as u64)
}

/// Resident bytes of one page-aligned window, through a mapping of it.
fn mincore_window(file: &File, at: u64, len: u64) -> io::Result<u64> {
    let page = host::page_size();
    let pages = len.div_ceil(page) as usize;
    let Ok(off) = libc::off_t::try_from(at) else {
        return Err(io::Error::from_raw_os_error(libc::EOVERFLOW));
    };
    // SAFETY: a fresh shared read-only mapping of a valid descriptor at a
    // page-aligned offset; no existing memory is touched. Failure is
    // MAP_FAILED, checked below.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            off,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut vec = vec![0u8; pages];
    // SAFETY: `map` is the mapping of `len` bytes made above and `vec`
    // holds one byte per page of it, as mincore writes.
    let rc = unsafe { libc::mincore(map, len as usize, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmaps exactly the mapping made above, not used after.
    unsafe { libc::munmap(map, len as usize) };
    if rc != 0 {
        return Err(err);
    }
    let in_core = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok((in_core * page).min(len))
}

/// What FIEMAP says of a file's stored data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stored {
    /// Bytes of the file mapped to extents (its data, holes excluded).
    pub mapped: u64,
    /// Of those, bytes in extents stored encoded (compressed).
    pub encoded: u64,
}

/// `_IOWR('f', 11, struct fiemap)`: the kernel's FS_IOC_FIEMAP (the same
/// number in the alternative ioctl layout, whose read|write is 6 << 29).
const FS_IOC_FIEMAP: libc::Ioctl = 0xC020_660B_u32 as libc::Ioctl;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_ENCODED: u32 = 0x8;
/// Extents asked for per call.
const EXTENTS_PER_CALL: usize = 256;
/// Calls at most, against a file that keeps changing.
const MAX_CALLS: usize = 4096;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [FiemapExtent; EXTENTS_PER_CALL],
}

/// One extent of a file, as FIEMAP reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Where it is in the file.
    pub logical: u64,
    /// Where it is on the device (for most filesystems the byte offset on
    /// their block device; btrfs gives its own logical address).
    pub physical: u64,
    pub length: u64,
    /// Stored encoded (compressed).
    pub encoded: bool,
}

/// The file's extents, their data first written out (FIEMAP_FLAG_SYNC:
/// data still in memory has no place on the device yet, and btrfs
/// compresses it on its way out). EOPNOTSUPP where the filesystem has no
/// FIEMAP (tmpfs).
pub fn extents(file: &File) -> io::Result<Vec<Extent>> {
    let mut out = Vec::new();
    let mut start = 0u64;
    for _ in 0..MAX_CALLS {
        let mut map = Box::new(Fiemap {
            start,
            length: u64::MAX - start,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: EXTENTS_PER_CALL as u32,
            reserved: 0,
            extents: [FiemapExtent::default(); EXTENTS_PER_CALL],
        });
        // SAFETY: `map` is a live, writable struct fiemap followed by room
        // for `extent_count` extents, as the ioctl reads and fills.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP, &mut *map as *mut Fiemap) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (map.mapped_extents as usize).min(EXTENTS_PER_CALL);
        if n == 0 {
            return Ok(out);
        }
        out.extend(map.extents[..n].iter().map(|e| Extent {
            logical: e.logical,
            physical: e.physical,
            length: e.length,
            encoded: e.flags & FIEMAP_EXTENT_ENCODED != 0,
        }));
        let last = map.extents[n - 1];
        if last.flags & FIEMAP_EXTENT_LAST != 0 {
            return Ok(out);
        }
        start = last.logical + last.length;
    }
    Ok(out)
}

/// How much of the file is mapped to extents and how much of that is
/// stored encoded (see `extents`).
pub fn stored(file: &File) -> io::Result<Stored> {
    let mut out = Stored::default();
    for e in extents(file)? {
        out.mapped += e.length;
        if e.encoded {
            out.encoded += e.length;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn fiemap_struct_has_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<FiemapExtent>(), 56);
        assert_eq!(std::mem::offset_of!(Fiemap, extents), 32);
    }

    #[test]
    fn cachestat_and_mincore_agree_on_a_file_just_written() {
        let dir = crate::testutil::temp();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 4 << 20]).unwrap();
        f.sync_all().unwrap();
        let f = File::open(&path).unwrap();
        // All of it cached after the write; none after dropping it.
        let by_mincore = mincore_bytes(&f, 0, 0).unwrap();
        assert_eq!(by_mincore, 4 << 20);
        crate::file::drop_cache(&f, 0, 0).unwrap();
        assert_eq!(mincore_bytes(&f, 0, 0).unwrap(), 0);
        match cachestat_range(&f, 0, 0) {
            Ok(n) => assert_eq!(n, 0),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                iolab_testkit::skip!("no cachestat(2) before Linux 6.5")
            }
            Err(e) => panic!("cachestat: {e}"),
        }
        // Read back the second MiB: that much is cached, in either count.
        let mut buf = vec![0u8; 1 << 20];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, 1 << 20).unwrap();
        let c = cachestat_range(&f, 1 << 20, 1 << 20).unwrap();
        assert_eq!(c, 1 << 20);
        assert_eq!(mincore_bytes(&f, 1 << 20, 1 << 20).unwrap(), 1 << 20);
        assert_eq!(cached_bytes(&f, 3 << 20, 1 << 20).unwrap(), 0);
    }

    #[test]
    fn mincore_samples_a_large_range_and_scales_the_count() {
        let dir = crate::testutil::temp();
        let path = dir.path().join("big");
        let mut f = File::create(&path).unwrap();
        // 80 MiB, more than mincore looks at page by page: the first half
        // written (cached), the rest a hole (never cached until read).
        f.write_all(&vec![3u8; 40 << 20]).unwrap();
        f.set_len(80 << 20).unwrap();
        let f = File::open(&path).unwrap();
        assert_eq!(mincore_bytes(&f, 0, 0).unwrap(), 40 << 20);
        assert_eq!(mincore_bytes(&f, 40 << 20, 0).unwrap(), 0);
    }

    #[test]
    fn data_on_a_filesystem_that_does_not_compress_is_stored_as_is() {
        let dir = crate::testutil::temp();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![0u8; 1 << 20]).unwrap();
        let f = File::open(&path).unwrap();
        match stored(&f) {
            Ok(s) => assert_eq!(
                s,
                Stored {
                    mapped: 1 << 20,
                    encoded: 0
                }
            ),
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                iolab_testkit::skip!("no FIEMAP on the test directory's filesystem")
            }
            Err(e) => panic!("fiemap: {e}"),
        }
    }
}
