//! File operations a run needs outside the hot path: sizes of files and
//! block devices, preallocation as fio's `fallocate=` does it, truncation,
//! dropping cached pages (`invalidate=1`), fsync, and which filesystem a
//! path is on and whether it takes O_DIRECT.

use std::ffi::CString;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::{host, BufPool};

/// ioctl request numbers, as the kernel's `_IO`/`_IOR` macros build them.
mod ioc {
    /// The architectures whose ioctl numbers use the alternative layout
    /// (3 direction bits, "none" = 1).
    const ALT: bool = cfg!(any(
        target_arch = "powerpc",
        target_arch = "powerpc64",
        target_arch = "mips",
        target_arch = "mips32r6",
        target_arch = "mips64",
        target_arch = "mips64r6",
        target_arch = "sparc",
        target_arch = "sparc64"
    ));
    mod dir {
        pub const NONE: u64 = if super::ALT { 1 } else { 0 };
        pub const READ: u64 = 2;
        pub const SHIFT: u32 = if super::ALT { 29 } else { 30 };
    }

    const fn ioc(dir: u64, ty: u64, nr: u64, size: usize) -> libc::Ioctl {
        ((dir << dir::SHIFT) | ((size as u64) << 16) | (ty << 8) | nr) as libc::Ioctl
    }

    /// `_IOR(0x12, 114, size_t)`: a block device's size in bytes.
    pub const BLKGETSIZE64: libc::Ioctl = ioc(dir::READ, 0x12, 114, size_of::<usize>());
    /// `_IO(0x12, 119)`: discard the byte range `[u64; 2]` = (start, len).
    pub const BLKDISCARD: libc::Ioctl = ioc(dir::NONE, 0x12, 119, 0);
}
pub(crate) use ioc::BLKDISCARD;

/// A filesystem, from statfs(2)'s `f_type` magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FsType {
    /// ext2, ext3 and ext4 share one magic number.
    Ext,
    Xfs,
    Btrfs,
    F2fs,
    Bcachefs,
    Nilfs2,
    Jfs,
    Reiserfs,
    Zfs,
    Vfat,
    Exfat,
    Ntfs,
    Ntfs3,
    Udf,
    Tmpfs,
    Ramfs,
    Hugetlbfs,
    Overlayfs,
    Nfs,
    Cifs,
    Smb2,
    Ceph,
    Fuse,
    NineP,
    Squashfs,
    Erofs,
    Iso9660,
    Proc,
    Sysfs,
    /// A magic number not in the table.
    Other(u64),
}

/// (magic, type, name, takes O_DIRECT: `None` when it depends on the
/// kernel version, the mount options or the server).
const FS_TABLE: &[(u64, FsType, &str, Option<bool>)] = &[
    (0xEF53, FsType::Ext, "ext4", Some(true)),
    (0x5846_5342, FsType::Xfs, "xfs", Some(true)),
    (0x9123_683E, FsType::Btrfs, "btrfs", Some(true)),
    (0xF2F5_2010, FsType::F2fs, "f2fs", Some(true)),
    (0xCA45_1A4E, FsType::Bcachefs, "bcachefs", Some(true)),
    (0x3434, FsType::Nilfs2, "nilfs2", Some(true)),
    (0x3153_464A, FsType::Jfs, "jfs", Some(true)),
    (0x5265_4973, FsType::Reiserfs, "reiserfs", Some(true)),
    // OpenZFS before 2.3 accepts O_DIRECT and ignores it.
    (0x2FC1_2FC1, FsType::Zfs, "zfs", None),
    (0x4D44, FsType::Vfat, "vfat", Some(true)),
    (0x2011_BAB0, FsType::Exfat, "exfat", Some(true)),
    (0x5346_544E, FsType::Ntfs, "ntfs", None),
    (0x7366_746E, FsType::Ntfs3, "ntfs3", Some(true)),
    (0x1501_3346, FsType::Udf, "udf", None),
    // tmpfs takes O_DIRECT since Linux 6.6.
    (0x0102_1994, FsType::Tmpfs, "tmpfs", None),
    (0x8584_58F6, FsType::Ramfs, "ramfs", Some(false)),
    (0x9584_58F6, FsType::Hugetlbfs, "hugetlbfs", Some(false)),
    (0x794C_7630, FsType::Overlayfs, "overlayfs", None),
    (0x6969, FsType::Nfs, "nfs", Some(true)),
    (0xFF53_4D42, FsType::Cifs, "cifs", None),
    (0xFE53_4D42, FsType::Smb2, "smb2", None),
    (0x00C3_6400, FsType::Ceph, "ceph", Some(true)),
    (0x6573_5546, FsType::Fuse, "fuse", None),
    (0x0102_1997, FsType::NineP, "9p", None),
    (0x7371_7368, FsType::Squashfs, "squashfs", None),
    (0xE0F5_E1E2, FsType::Erofs, "erofs", None),
    (0x9660, FsType::Iso9660, "iso9660", None),
    (0x9FA0, FsType::Proc, "proc", Some(false)),
    (0x6265_6572, FsType::Sysfs, "sysfs", Some(false)),
];

impl FsType {
    /// The filesystem with this statfs magic number.
    pub fn from_magic(magic: u64) -> FsType {
        FS_TABLE
            .iter()
            .find(|row| row.0 == magic)
            .map_or(FsType::Other(magic), |row| row.1)
    }

    fn row(&self) -> Option<&'static (u64, FsType, &'static str, Option<bool>)> {
        FS_TABLE.iter().find(|row| row.1 == *self)
    }

    /// statfs's `f_type`.
    pub fn magic(&self) -> u64 {
        match self {
            FsType::Other(m) => *m,
            _ => self.row().map_or(0, |row| row.0),
        }
    }

    /// The name `mount` and `/proc/mounts` use (`ext4` for the ext family),
    /// or `unknown` for a magic number not in the table.
    pub fn name(&self) -> &'static str {
        self.row().map_or("unknown", |row| row.2)
    }

    /// Whether files here can be opened with O_DIRECT: `None` when that
    /// depends on the kernel, the mount or the server; `probe_o_direct`
    /// answers it for a directory.
    pub fn supports_o_direct(&self) -> Option<bool> {
        self.row().and_then(|row| row.3)
    }
}

impl fmt::Display for FsType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsType::Other(m) => write!(f, "unknown (magic {m:#x})"),
            _ => f.write_str(self.name()),
        }
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// The filesystem `path` is on.
pub fn fs_type(path: &Path) -> io::Result<FsType> {
    let cpath = c_path(path)?;
    // SAFETY: statfs is plain old data; all-zero is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `cpath` is NUL-terminated and `st` writable, both live across
    // the call.
    if unsafe { libc::statfs(cpath.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type is a signed word of varying width; the magic numbers are 32-bit.
    #[allow(clippy::unnecessary_cast)]
    let magic = (st.f_type as u64) & 0xFFFF_FFFF;
    Ok(FsType::from_magic(magic))
}

/// Bytes of `[offset, offset + len)` of the file at `path` that are holes
/// or unwritten extents (SEEK_DATA/SEEK_HOLE): reads there return zeros
/// without touching the device. A filesystem without SEEK_HOLE reports no
/// holes.
pub fn hole_bytes(path: &Path, offset: u64, len: u64) -> io::Result<u64> {
    let f = File::open(path)?;
    let fd = f.as_raw_fd();
    let end = offset.saturating_add(len).min(f.metadata()?.len());
    let mut at = offset;
    let mut holes = 0u64;
    while at < end {
        // SAFETY: lseek takes no pointers; a bad fd or offset is an error
        // return.
        let data = unsafe { libc::lseek(fd, off(at)?, libc::SEEK_DATA) };
        if data < 0 {
            match io::Error::last_os_error().raw_os_error() {
                // No data at or after `at`: the rest is a hole.
                Some(libc::ENXIO) => return Ok(holes + (end - at)),
                Some(libc::EINVAL) => return Ok(holes),
                _ => return Err(io::Error::last_os_error()),
            }
        }
        let data = (data as u64).min(end);
        holes += data - at;
        if data >= end {
            break;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, off(data)?, libc::SEEK_HOLE) };
        if hole < 0 {
            return Err(io::Error::last_os_error());
        }
        at = (hole as u64).max(data + 1);
    }
    Ok(holes)
}

/// What statvfs says about the filesystem holding a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    /// Total data blocks times fragment size.
    pub size_bytes: u64,
    /// Available to an unprivileged user.
    pub avail_bytes: u64,
    /// Size minus free blocks.
    pub used_bytes: u64,
    pub inodes_total: u64,
    pub inodes_free: u64,
}

/// statvfs of the filesystem holding `path`.
pub fn space(path: &Path) -> io::Result<Space> {
    let cpath = c_path(path)?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `cpath` is NUL-terminated and `st` writable, both live across
    // the call.
    if unsafe { libc::statvfs(cpath.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)]
    let (frag, blocks) = (st.f_frsize as u64, st.f_blocks as u64);
    #[allow(clippy::unnecessary_cast)]
    Ok(Space {
        size_bytes: blocks.saturating_mul(frag),
        avail_bytes: (st.f_bavail as u64).saturating_mul(frag),
        used_bytes: blocks
            .saturating_sub(st.f_bfree as u64)
            .saturating_mul(frag),
        inodes_total: st.f_files as u64,
        inodes_free: st.f_ffree as u64,
    })
}

/// Bytes an unprivileged user may still write on the filesystem of `path`.
pub fn available_space(path: &Path) -> io::Result<u64> {
    Ok(space(path)?.avail_bytes)
}

/// Whether a file in `dir` can be opened and written with O_DIRECT: creates
/// a temporary file there, writes one aligned page through O_DIRECT, and
/// removes it. `Ok(false)` when the open or the write fails with EINVAL.
pub fn probe_o_direct(dir: &Path) -> io::Result<bool> {
    static PROBES: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        ".iolab-odirect-probe-{}-{}",
        std::process::id(),
        PROBES.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_DIRECT | libc::O_NOFOLLOW)
        .open(&path);
    // Only a file this probe made is removed afterwards: not a name that
    // was there already (a planted file or symlink).
    let made = !matches!(&opened, Err(e) if e.kind() == io::ErrorKind::AlreadyExists);
    let result = match opened {
        Ok(file) => {
            let page = usize::try_from(host::page_size()).unwrap_or(4096);
            let pool = BufPool::new(1, page, page).map_err(io::Error::other)?;
            match file.write_at(pool.slot_ref(0), 0) {
                Ok(_) => Ok(true),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
        Err(e) => Err(e),
    };
    // Some kernels create the file before refusing O_DIRECT.
    if made {
        let _ = std::fs::remove_file(&path);
    }
    result
}

/// Whether `path` is a block device.
pub fn is_block_device(path: &Path) -> io::Result<bool> {
    Ok(std::fs::metadata(path)?.file_type().is_block_device())
}

/// Whether something claims the block device at `path`: an exclusive
/// open (O_EXCL) fails with EBUSY while a mount, a holder or another
/// exclusive opener has it.
pub fn block_device_busy(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    matches!(
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(path),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY)
    )
}

/// The size of a block device in bytes (BLKGETSIZE64).
pub fn block_device_size(fd: impl AsFd) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points
    // at `size`, live and writable across the call.
    let rc = unsafe {
        libc::ioctl(
            fd.as_fd().as_raw_fd(),
            ioc::BLKGETSIZE64,
            &mut size as *mut u64,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// The size of a file, or of a block device.
pub fn file_size(path: &Path) -> io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    if meta.file_type().is_block_device() {
        let dev = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)?;
        return block_device_size(&dev);
    }
    Ok(meta.len())
}

/// fio's `fallocate=` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FallocMode {
    /// Allocate nothing.
    None,
    /// fallocate(2) with mode 0; nothing where the filesystem lacks it.
    #[default]
    Native,
    /// posix_fallocate(3), which writes zeros where fallocate is missing.
    Posix,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE: blocks reserved, size kept.
    Keep,
    /// ftruncate(2) to `offset + len`: the size, and no blocks.
    Truncate,
}

fn off(value: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(value)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset beyond off_t"))
}

/// Preallocates `[offset, offset + len)` as fio's `fallocate=` mode says.
/// Returns whether blocks were reserved (`false` for none, truncate, an
/// empty range, and native on a filesystem without fallocate).
pub fn fallocate(fd: impl AsFd, mode: FallocMode, offset: u64, len: u64) -> io::Result<bool> {
    let raw = fd.as_fd().as_raw_fd();
    let end = offset
        .checked_add(len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "range overflows"))?;
    let (o, l) = (off(offset)?, off(len)?);
    off(end)?;
    match mode {
        FallocMode::None => Ok(false),
        FallocMode::Truncate => ftruncate(fd, end).map(|()| false),
        _ if len == 0 => Ok(false),
        FallocMode::Native | FallocMode::Keep => {
            let flags = if mode == FallocMode::Keep {
                libc::FALLOC_FL_KEEP_SIZE
            } else {
                0
            };
            // SAFETY: fallocate takes no pointers; a bad fd is an error return.
            if unsafe { libc::fallocate(raw, flags, o, l) } == 0 {
                return Ok(true);
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EOPNOTSUPP | libc::ENOSYS) if mode == FallocMode::Native => Ok(false),
                _ => Err(err),
            }
        }
        FallocMode::Posix => {
            // SAFETY: posix_fallocate takes no pointers; it returns the errno.
            match unsafe { libc::posix_fallocate(raw, o, l) } {
                0 => Ok(true),
                errno => Err(io::Error::from_raw_os_error(errno)),
            }
        }
    }
}

/// Sets the file's size.
pub fn ftruncate(fd: impl AsFd, len: u64) -> io::Result<()> {
    let len = off(len)?;
    // SAFETY: ftruncate takes no pointers; a bad fd is an error return.
    if unsafe { libc::ftruncate(fd.as_fd().as_raw_fd(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Takes an exclusive lock on the whole file (flock, LOCK_EX), waiting
/// for it; the lock is released when the descriptor is closed. Processes
/// that lay out one shared file (the ranks of an MPI run) take it so that
/// the check of the file's size and its extension are one step for each.
/// Linux's NFS client takes it as a lock on the whole file on the server.
pub fn lock_exclusive(fd: impl AsFd) -> io::Result<()> {
    loop {
        // SAFETY: flock takes no pointers; a bad fd is an error return.
        if unsafe { libc::flock(fd.as_fd().as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Drops the file's cached pages in `[offset, offset + len)` (`len` 0: to
/// the end), POSIX_FADV_DONTNEED, for fio's `invalidate=1`. Dirty pages are
/// not dropped; fsync first to drop everything.
pub fn drop_cache(fd: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    let (o, l) = (off(offset)?, off(len)?);
    // SAFETY: posix_fadvise takes no pointers; it returns the errno.
    match unsafe { libc::posix_fadvise(fd.as_fd().as_raw_fd(), o, l, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Writes the file's dirty pages in `[offset, offset + len)` back
/// (sync_file_range): starts their writeback, and with `wait` also waits
/// for writeback already under way there before, and for all of it
/// after, so that the range is clean when it returns.
pub fn write_back(fd: impl AsFd, offset: u64, len: u64, wait: bool) -> io::Result<()> {
    let (o, l) = (off(offset)?, off(len)?);
    let flags = if wait {
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER
    } else {
        libc::SYNC_FILE_RANGE_WRITE
    };
    // SAFETY: sync_file_range takes no pointers; a bad fd is an error.
    match unsafe { libc::sync_file_range(fd.as_fd().as_raw_fd(), o, l, flags) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Tells the kernel how the file will be read (posix_fadvise over the
/// whole file).
pub fn advise(fd: impl AsFd, access: crate::Access) -> io::Result<()> {
    let advice = match access {
        crate::Access::Normal => return Ok(()),
        crate::Access::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        crate::Access::Random => libc::POSIX_FADV_RANDOM,
    };
    // SAFETY: posix_fadvise takes no pointers; it returns the errno.
    match unsafe { libc::posix_fadvise(fd.as_fd().as_raw_fd(), 0, 0, advice) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Flushes the file's data and metadata to stable storage.
pub fn fsync(fd: impl AsFd) -> io::Result<()> {
    // SAFETY: fsync takes no pointers; a bad fd is an error return.
    if unsafe { libc::fsync(fd.as_fd().as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What the page cache holds of a file, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStat {
    /// Cached, clean or not.
    pub cached: u64,
    /// Written to memory and not yet to the device.
    pub dirty: u64,
    /// On their way to the device.
    pub writeback: u64,
}

/// cachestat(2)'s system call number, the same in the unified table of
/// every architecture Rust targets.
const SYS_CACHESTAT: libc::c_long = 451;

/// The page cache's share of the whole file open as `fd` (cachestat(2),
/// Linux 6.5 and later; ENOSYS before).
pub fn cache_stat(fd: impl AsFd) -> io::Result<CacheStat> {
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
    // len 0: from `off` to the end of the file.
    let range = Range { off: 0, len: 0 };
    let mut st = Stat::default();
    // SAFETY: both pointers are to live, properly laid out structs of the
    // kernel's `cachestat_range` and `cachestat`, which the kernel only
    // reads and writes within their size; flags must be 0.
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
    let page = host::page_size();
    Ok(CacheStat {
        cached: st.nr_cache * page,
        dirty: st.nr_dirty * page,
        writeback: st.nr_writeback * page,
    })
}

/// openat2's `struct open_how` (linux/openat2.h).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Opens `path` as open(2) would with `flags` (`O_CLOEXEC` added) and
/// `mode`, following no symbolic link anywhere in it: a link at any
/// component, the last one included, fails with `ELOOP`. That is
/// openat2's `RESOLVE_NO_SYMLINKS` (Linux 5.6); a kernel without openat2
/// (`ENOSYS`), or a seccomp filter that refuses it (`ENOSYS` or `EPERM`;
/// a true `EPERM` comes back from open(2) as well), gets open(2) with
/// `O_NOFOLLOW`, which refuses a link at the last component only.
pub fn open_no_links(path: &Path, flags: i32, mode: u32) -> io::Result<File> {
    use std::os::fd::FromRawFd;
    let cpath = c_path(path)?;
    let flags = flags | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let how = OpenHow {
        flags: u64::from(flags.unsigned_abs()),
        // openat2 refuses a mode without a file to create.
        mode: if creates { u64::from(mode) } else { 0 },
        resolve: libc::RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: `cpath` is NUL-terminated and `how` is an open_how of the
    // size passed; both live across the call, which writes to neither.
    let mut fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            cpath.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    let refused = io::Error::last_os_error().raw_os_error();
    if fd < 0 && matches!(refused, Some(libc::ENOSYS) | Some(libc::EPERM)) {
        // SAFETY: `cpath` is NUL-terminated and lives across the call.
        fd = libc::c_long::from(unsafe { libc::open(cpath.as_ptr(), flags, mode) });
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the call returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_no_links_refuses_a_link_at_any_component() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink("real", d.join("via")).unwrap();
        std::os::unix::fs::symlink("a", d.join("real/b")).unwrap();
        let create = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        open_no_links(&d.join("real/a"), create, 0o600).unwrap();
        assert!(d.join("real/a").is_file());
        open_no_links(&d.join("real/a"), libc::O_RDONLY, 0).unwrap();
        // A link at the last component, and one in the middle (openat2,
        // Linux 5.6 and later): ELOOP, nothing created.
        for name in ["real/b", "via/c"] {
            let e = open_no_links(&d.join(name), create, 0o600).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{name}: {e}");
        }
        assert!(!d.join("real/c").exists());
    }

    #[test]
    fn a_block_device_held_open_exclusively_is_busy() {
        let dir = crate::testutil::temp();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(4 << 20)
            .unwrap();
        // A regular file cannot be claimed; nothing holds a fresh loop
        // device; another exclusive opener makes it busy.
        assert!(!block_device_busy(&img));
        let lo = match crate::testutil::LoopDev::new(&img) {
            Ok(lo) => lo,
            Err(why) => iolab_testkit::skip!("{why}"),
        };
        assert!(!block_device_busy(&lo.0));
        use std::os::unix::fs::OpenOptionsExt;
        let _held = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(&lo.0)
            .unwrap();
        assert!(block_device_busy(&lo.0));
    }
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_cache_holds_what_was_written_until_fsync() {
        let dir = temp();
        let path = dir.path().join("f");
        let f = rw_file(&path);
        f.write_all_at(&vec![7u8; 1 << 20], 0).unwrap();
        let st = match cache_stat(&f) {
            Ok(st) => st,
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                iolab_testkit::skip!("no cachestat(2) before Linux 6.5");
            }
            Err(e) => panic!("cachestat: {e}"),
        };
        assert_eq!(st.cached, 1 << 20);
        assert!(st.dirty + st.writeback > 0, "{st:?}");
        f.sync_all().unwrap();
        let st = cache_stat(&f).unwrap();
        assert_eq!((st.dirty, st.writeback), (0, 0), "{st:?}");
    }

    fn temp() -> tempfile::TempDir {
        tempfile::TempDir::new().unwrap()
    }

    fn rw_file(path: &Path) -> std::fs::File {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap()
    }

    #[test]
    fn holes_are_found_and_written_data_is_not() {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("sparse");
        let f = File::create(&path).unwrap();
        f.set_len(4 << 20).unwrap();
        use std::os::unix::fs::FileExt;
        f.write_all_at(&vec![1u8; 1 << 20], 1 << 20).unwrap();
        f.sync_all().unwrap();
        let holes = hole_bytes(&path, 0, 4 << 20).unwrap();
        if holes == 0 {
            iolab_testkit::skip!("this filesystem reports no holes (no SEEK_HOLE)");
        }
        assert_eq!(holes, 3 << 20);
        assert_eq!(hole_bytes(&path, 1 << 20, 1 << 20).unwrap(), 0);
        assert_eq!(hole_bytes(&path, 0, 1 << 20).unwrap(), 1 << 20);
        // Past the end counts as nothing.
        assert_eq!(hole_bytes(&path, 3 << 20, 8 << 20).unwrap(), 1 << 20);
    }

    #[test]
    fn available_space_is_what_df_reports() {
        let dir = tempfile::TempDir::new().unwrap();
        let ours = available_space(dir.path()).unwrap();
        let out = std::process::Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let df: u64 = text.lines().nth(1).unwrap().trim().parse().unwrap();
        // Others write to the same filesystem meanwhile: within 64 MiB.
        assert!(ours.abs_diff(df) < 64 << 20, "statvfs {ours}, df {df}");
    }

    #[test]
    fn fs_table_round_trips() {
        for row in FS_TABLE {
            assert_eq!(FsType::from_magic(row.0), row.1);
            assert_eq!(row.1.magic(), row.0);
            assert_eq!(row.1.name(), row.2);
        }
        assert_eq!(FsType::from_magic(0x1234), FsType::Other(0x1234));
        assert_eq!(FsType::Other(0x1234).to_string(), "unknown (magic 0x1234)");
        assert_eq!(FsType::Tmpfs.to_string(), "tmpfs");
        assert_eq!(FsType::Ramfs.supports_o_direct(), Some(false));
    }

    #[test]
    fn fs_type_of_proc_and_tempdir() {
        assert_eq!(fs_type(Path::new("/proc")).unwrap(), FsType::Proc);
        let dir = temp();
        let t = fs_type(dir.path()).unwrap();
        println!("tempdir is on {t}");
        assert!(fs_type(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn probe_agrees_with_the_table_and_cleans_up() {
        let dir = temp();
        let fs = fs_type(dir.path()).unwrap();
        let probed = probe_o_direct(dir.path()).unwrap();
        if let Some(known) = fs.supports_o_direct() {
            assert_eq!(probed, known, "{fs}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn fallocate_modes() {
        let dir = temp();
        let len = 1 << 20;

        let f = rw_file(&dir.path().join("none"));
        assert!(!fallocate(&f, FallocMode::None, 0, len).unwrap());
        assert_eq!(f.metadata().unwrap().len(), 0);

        let f = rw_file(&dir.path().join("truncate"));
        assert!(!fallocate(&f, FallocMode::Truncate, 0, len).unwrap());
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), len);
        let sparse = m.blocks() * 512 < len;

        let f = rw_file(&dir.path().join("posix"));
        assert!(fallocate(&f, FallocMode::Posix, 0, len).unwrap());
        let m = f.metadata().unwrap();
        assert_eq!(m.len(), len);
        assert!(m.blocks() * 512 >= len, "posix: {} blocks", m.blocks());

        let f = rw_file(&dir.path().join("native"));
        let allocated = fallocate(&f, FallocMode::Native, 0, len).unwrap();
        let m = f.metadata().unwrap();
        if allocated {
            assert_eq!(m.len(), len);
            assert!(m.blocks() * 512 >= len, "native: {} blocks", m.blocks());
        } else {
            iolab_testkit::skip_case!("the native check: the filesystem has no fallocate");
        }

        let f = rw_file(&dir.path().join("keep"));
        match fallocate(&f, FallocMode::Keep, 0, len) {
            Ok(reserved) => {
                assert!(reserved);
                let m = f.metadata().unwrap();
                assert_eq!(m.len(), 0, "keep must not grow the file");
                if sparse {
                    assert!(m.blocks() * 512 >= len, "keep: {} blocks", m.blocks());
                }
            }
            Err(e) => iolab_testkit::skip_case!("the keep check: {e}"),
        }

        let f = rw_file(&dir.path().join("empty"));
        assert!(!fallocate(&f, FallocMode::Posix, 0, 0).unwrap());
        assert!(fallocate(&f, FallocMode::Posix, u64::MAX, 1).is_err());
    }

    #[test]
    fn sizes_truncate_fsync_drop_cache() {
        let dir = temp();
        let path = dir.path().join("f");
        let f = rw_file(&path);
        f.write_at(&[7u8; 10_000], 0).unwrap();
        fsync(&f).unwrap();
        drop_cache(&f, 0, 0).unwrap();
        drop_cache(&f, 4096, 4096).unwrap();
        assert_eq!(file_size(&path).unwrap(), 10_000);
        ftruncate(&f, 3).unwrap();
        assert_eq!(file_size(&path).unwrap(), 3);
        assert!(!is_block_device(&path).unwrap());
        assert!(file_size(&dir.path().join("missing")).is_err());
        // Not a block device: the ioctl fails cleanly.
        assert!(block_device_size(&f).is_err());
    }
}
