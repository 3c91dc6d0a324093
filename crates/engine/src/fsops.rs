//! Thin, safe wrappers over the file-system calls that metadata workloads
//! time: `openat`, `close`, `write`, `fsync`, `utimensat`, `fstatat`,
//! `renameat`, `unlinkat`, `mkdirat` and `getdents64`, all relative to a
//! directory file descriptor. Each call is one system call and nothing else
//! (no allocation, no path building), so a benchmark loop measures the
//! kernel and not the wrapper. Names are `&CStr` the caller formats once per
//! operation into its own buffer; errors are `io::Error` carrying the errno.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// The result of a call that returns -1 and sets errno on failure.
#[inline]
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Opens a directory (`O_RDONLY | O_DIRECTORY`) to name files relative to.
pub fn open_dir(path: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `path` is a valid NUL-terminated string for the duration of
    // the call; openat does not keep the pointer.
    let fd = check(unsafe {
        libc::openat(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: openat succeeded, so `fd` is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens the directory `name` inside `dir`.
pub fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    open_at(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    )
}

/// Creates `name` in `dir` for writing, failing if it exists
/// (`O_CREAT | O_EXCL | O_WRONLY`, mode 0644).
#[inline]
pub fn create_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    open_at(
        dir,
        name,
        libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
    )
}

/// Opens the existing `name` in `dir` read-only.
#[inline]
pub fn open_read_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    open_at(dir, name, libc::O_RDONLY | libc::O_CLOEXEC)
}

#[inline]
fn open_at(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let mode: libc::c_uint = 0o644;
    // SAFETY: `dir` is an open descriptor for the call's duration (borrowed)
    // and `name` a valid NUL-terminated string; the kernel copies it.
    let fd = check(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) })?;
    // SAFETY: openat succeeded, so `fd` is a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Closes `fd` and reports what close(2) says (dropping an `OwnedFd`
/// ignores it).
#[inline]
pub fn close(fd: OwnedFd) -> io::Result<()> {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came out of an OwnedFd, so this call owns it and closes
    // it exactly once.
    check(unsafe { libc::close(raw) }).map(|_| ())
}

/// Writes all of `buf` to `fd` at its current position.
pub fn write_all(fd: BorrowedFd<'_>, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of `buf.len()` bytes during the
        // call and `fd` is an open descriptor.
        let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            return Err(io::Error::from(io::ErrorKind::WriteZero));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// fsync(2): the file's data and metadata reach stable storage.
#[inline]
pub fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fsync takes an open descriptor and no pointers.
    check(unsafe { libc::fsync(fd.as_raw_fd()) }).map(|_| ())
}

/// Sets the access and modification times of `name` in `dir` to now
/// (`utimensat` with a null time list, as `touch` does).
#[inline]
pub fn touch_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string; a null `times`
    // pointer means "now" for both times.
    check(unsafe { libc::utimensat(dir.as_raw_fd(), name.as_ptr(), std::ptr::null(), 0) })
        .map(|_| ())
}

/// What `stat_at` reports: enough to check a file without copying the whole
/// `struct stat` around.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatInfo {
    pub size: u64,
    pub mode: u32,
    pub nlink: u64,
}

/// fstatat(2) of `name` in `dir`, not following a final symbolic link.
#[inline]
pub fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<StatInfo> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is NUL-terminated and `st` points to writable memory
    // of the size of `struct stat`, which the kernel fills on success.
    check(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    // SAFETY: fstatat returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    // The field types differ between architectures.
    #[allow(clippy::unnecessary_cast)]
    Ok(StatInfo {
        size: st.st_size as u64,
        mode: st.st_mode,
        nlink: st.st_nlink as u64,
    })
}

/// renameat(2): `old` in `old_dir` becomes `new` in `new_dir`.
#[inline]
pub fn rename_at(
    old_dir: BorrowedFd<'_>,
    old: &CStr,
    new_dir: BorrowedFd<'_>,
    new: &CStr,
) -> io::Result<()> {
    // SAFETY: both names are valid NUL-terminated strings and both
    // descriptors are open for the call's duration.
    check(unsafe {
        libc::renameat(
            old_dir.as_raw_fd(),
            old.as_ptr(),
            new_dir.as_raw_fd(),
            new.as_ptr(),
        )
    })
    .map(|_| ())
}

/// unlinkat(2) of the file `name` in `dir`.
#[inline]
pub fn unlink_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) }).map(|_| ())
}

/// Removes the empty directory `name` in `dir` (`unlinkat` with
/// `AT_REMOVEDIR`).
#[inline]
pub fn rmdir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) }).map(|_| ())
}

/// mkdirat(2): creates the directory `name` in `dir`, mode 0755.
#[inline]
pub fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid NUL-terminated string.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) }).map(|_| ())
}

/// Rewinds the directory `dir` to its first entry.
pub fn rewind_dir(dir: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: lseek takes an open descriptor and no pointers.
    let r = unsafe { libc::lseek(dir.as_raw_fd(), 0, libc::SEEK_SET) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads the next batch of entries of the directory `dir` into `buf` with
/// getdents64(2) and returns how many entries it holds, not counting `.`
/// and `..`; `None` at the end of the directory.
pub fn read_dir_batch(dir: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<u64>> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes during the
    // call; the kernel writes at most that many.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getdents64,
            dir.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(count_dirents(&buf[..n])))
}

/// The entries other than `.` and `..` in a getdents64 buffer.
///
/// A `linux_dirent64` is `d_ino` (8 bytes), `d_off` (8), `d_reclen` (2),
/// `d_type` (1), then the NUL-terminated name; `d_reclen` is the record's
/// whole length.
fn count_dirents(buf: &[u8]) -> u64 {
    const NAME: usize = 19;
    let mut pos = 0;
    let mut count = 0;
    while pos + NAME <= buf.len() {
        let reclen = u16::from_ne_bytes([buf[pos + 16], buf[pos + 17]]) as usize;
        if reclen == 0 {
            break;
        }
        let name = &buf[pos + NAME..(pos + reclen).min(buf.len())];
        let dot = name.starts_with(b".\0") || name.starts_with(b"..\0");
        if !dot {
            count += 1;
        }
        pos += reclen;
    }
    count
}

/// sync(2): writes back every filesystem's dirty data.
pub fn sync_all() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Whether the process runs with effective user id 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Whether the calling process may create entries in the directory `path`
/// (`faccessat` with `W_OK | X_OK` and the effective ids).
pub fn can_write_dir(path: &CStr) -> bool {
    // SAFETY: `path` is a valid NUL-terminated string.
    unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        ) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::AsFd;

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    #[test]
    fn a_file_goes_through_every_call() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(&c(tmp.path().to_str().unwrap())).unwrap();
        let d = dir.as_fd();
        let f = create_at(d, c"a").unwrap();
        write_all(f.as_fd(), b"hello").unwrap();
        fsync(f.as_fd()).unwrap();
        close(f).unwrap();
        assert_eq!(
            create_at(d, c"a").unwrap_err().raw_os_error(),
            Some(libc::EEXIST)
        );
        close(open_read_at(d, c"a").unwrap()).unwrap();
        touch_at(d, c"a").unwrap();
        let st = stat_at(d, c"a").unwrap();
        assert_eq!(st.size, 5);
        assert_eq!(st.mode & libc::S_IFMT, libc::S_IFREG);
        mkdir_at(d, c"sub").unwrap();
        let sub = open_dir_at(d, c"sub").unwrap();
        rename_at(d, c"a", sub.as_fd(), c"b").unwrap();
        assert!(tmp.path().join("sub/b").exists());
        assert!(!tmp.path().join("a").exists());

        let mut buf = vec![0u8; 4096];
        rewind_dir(d).unwrap();
        assert_eq!(read_dir_batch(d, &mut buf).unwrap(), Some(1));
        assert_eq!(read_dir_batch(d, &mut buf).unwrap(), None);

        unlink_at(sub.as_fd(), c"b").unwrap();
        assert_eq!(
            unlink_at(sub.as_fd(), c"b").unwrap_err().raw_os_error(),
            Some(libc::ENOENT)
        );
        rmdir_at(d, c"sub").unwrap();
        assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none());
    }

    #[test]
    fn read_dir_counts_many_entries() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..1000 {
            std::fs::write(tmp.path().join(format!("file-with-a-long-name-{i}")), b"").unwrap();
        }
        let dir = open_dir(&c(tmp.path().to_str().unwrap())).unwrap();
        let mut buf = vec![0u8; 4096];
        let mut total = 0;
        let mut batches = 0;
        while let Some(n) = read_dir_batch(dir.as_fd(), &mut buf).unwrap() {
            total += n;
            batches += 1;
        }
        assert_eq!(total, 1000);
        assert!(batches > 1, "a 4 KiB buffer holds fewer than 1000 entries");
    }

    #[test]
    fn writable_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(can_write_dir(&c(tmp.path().to_str().unwrap())));
        assert!(!can_write_dir(c"/nonexistent/iolab"));
    }
}
