//! `FdTable`: the files an engine has open, indexed by `FileId`, opened with
//! the flags a `FileSpec` asks for. An open that fails becomes an
//! `EngineError` that says why in the user's terms.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::error::errno_text;
use crate::file::{fs_type, FsType};
use crate::{EngineError, FileId, FileSpec, SyncMode};

/// One open file.
#[derive(Debug)]
pub(crate) struct OpenFile {
    pub fd: OwnedFd,
    pub path: PathBuf,
    pub is_block: bool,
    /// The file position where it is known (the `sync` engine's lseek
    /// skipping); `Some(0)` after open.
    pub pos: Option<u64>,
}

impl OpenFile {
    #[inline]
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Open files by `FileId`; ids of closed files are reused.
#[derive(Debug, Default)]
pub(crate) struct FdTable {
    files: Vec<Option<OpenFile>>,
}

impl FdTable {
    pub fn open(&mut self, spec: &FileSpec) -> Result<FileId, EngineError> {
        let file = open_file(spec)?;
        let slot = match self.files.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.files.push(None);
                self.files.len() - 1
            }
        };
        let id = u32::try_from(slot)
            .map_err(|_| EngineError::Options("more than 2^32 open files".to_string()))?;
        self.files[slot] = Some(file);
        Ok(FileId(id))
    }

    pub fn close(&mut self, id: FileId) -> Result<(), EngineError> {
        let file = self
            .files
            .get_mut(id.0 as usize)
            .and_then(Option::take)
            .ok_or(EngineError::UnknownFile(id))?;
        let raw = std::os::fd::IntoRawFd::into_raw_fd(file.fd);
        // SAFETY: `raw` came from an OwnedFd we just consumed, so it is open
        // and closed exactly once, here.
        if unsafe { libc::close(raw) } != 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            // EINTR: Linux has closed the descriptor anyway.
            if errno != libc::EINTR {
                return Err(EngineError::Close {
                    path: file.path,
                    errno,
                });
            }
        }
        Ok(())
    }

    #[inline]
    pub fn get_mut(&mut self, id: FileId) -> Result<&mut OpenFile, EngineError> {
        self.files
            .get_mut(id.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(EngineError::UnknownFile(id))
    }
}

/// open(2) flags for a spec.
fn open_flags(spec: &FileSpec) -> libc::c_int {
    let mut flags = libc::O_CLOEXEC
        | match (spec.read, spec.write) {
            (true, true) => libc::O_RDWR,
            (false, true) => libc::O_WRONLY,
            _ => libc::O_RDONLY,
        };
    if spec.create {
        flags |= libc::O_CREAT;
    }
    if spec.direct {
        flags |= libc::O_DIRECT;
    }
    flags |= match spec.sync {
        SyncMode::None => 0,
        SyncMode::Sync => libc::O_SYNC,
        SyncMode::Dsync => libc::O_DSYNC,
    };
    flags
}

fn open_file(spec: &FileSpec) -> Result<OpenFile, EngineError> {
    let path = &spec.path;
    let cpath =
        std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| EngineError::Open {
            path: path.clone(),
            errno: libc::EINVAL,
            message: format!(
                "cannot open {}: the path contains a NUL byte",
                path.display()
            ),
        })?;
    let mode: libc::c_uint = 0o644;
    let file = if let Some(opener) = spec.opener {
        (opener.0)(path, open_flags(spec), mode).map_err(|e| match e.raw_os_error() {
            Some(errno) => open_error(spec, errno),
            // The opener's own refusal (a link it does not follow) says
            // why in its own words.
            None => EngineError::Open {
                path: path.clone(),
                errno: libc::EACCES,
                message: format!("cannot open {}: {e}", path.display()),
            },
        })?
    } else {
        // SAFETY: `cpath` is NUL-terminated and outlives the call; the mode
        // argument is passed as the variadic C int open(2) reads with O_CREAT.
        let raw = unsafe { libc::open(cpath.as_ptr(), open_flags(spec), mode) };
        if raw < 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            return Err(open_error(spec, errno));
        }
        // SAFETY: open returned a new descriptor that nothing else owns.
        File::from(unsafe { OwnedFd::from_raw_fd(raw) })
    };
    // Advice is a hint: a filesystem that ignores it changes nothing.
    let _ = crate::file::advise(&file, spec.access);
    let kind = file.metadata().map(|m| m.file_type()).ok();
    if kind.is_some_and(|k| !k.is_file()) {
        no_atime(&file);
    }
    let is_block = kind.is_some_and(|k| k.is_block_device());
    Ok(OpenFile {
        fd: OwnedFd::from(file),
        path: path.clone(),
        is_block,
        pos: Some(0),
    })
}

/// Asks that reading `file` not update its access time, as fio opens
/// every file that is not a regular one (a device, a pipe) with O_NOATIME:
/// the check of the time stamp on every read is then skipped. It is set
/// on the open file, whose type is known, rather than in open(2)'s flags.
/// Only the owner (or CAP_FOWNER) may set it; otherwise (EPERM) the file
/// stays as opened, as fio opens it again without the flag.
fn no_atime(file: &File) {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL take and return plain integers on a
    // descriptor `file` keeps open across the calls.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 && flags & libc::O_NOATIME == 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NOATIME);
        }
    }
}

/// The filesystem of `path`, or of the nearest existing ancestor.
fn fs_of(path: &Path) -> Option<FsType> {
    path.ancestors().find_map(|p| {
        fs_type(if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        })
        .ok()
    })
}

/// The error for a failed open, with the likely cause where one is known.
pub(crate) fn open_error(spec: &FileSpec, errno: i32) -> EngineError {
    let path = spec.path.display();
    let message = match fs_of(&spec.path) {
        Some(fs)
            if spec.direct && errno == libc::EINVAL && fs.supports_o_direct() != Some(true) =>
        {
            format!(
                "cannot open {path} with O_DIRECT: {}: the {fs} filesystem does not \
                 support O_DIRECT; use direct=0, or put the file on a filesystem that does",
                errno_text(errno)
            )
        }
        _ if spec.direct && errno == libc::EINVAL => {
            format!("cannot open {path} with O_DIRECT: {}", errno_text(errno))
        }
        _ => format!("cannot open {path}: {}", errno_text(errno)),
    };
    EngineError::Open {
        path: spec.path.clone(),
        errno,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_the_spec() {
        let mut spec = FileSpec {
            read: true,
            ..FileSpec::default()
        };
        assert_eq!(open_flags(&spec), libc::O_CLOEXEC | libc::O_RDONLY);
        spec.write = true;
        spec.create = true;
        spec.direct = true;
        spec.sync = SyncMode::Dsync;
        assert_eq!(
            open_flags(&spec),
            libc::O_CLOEXEC | libc::O_RDWR | libc::O_CREAT | libc::O_DIRECT | libc::O_DSYNC
        );
        spec.read = false;
        spec.sync = SyncMode::Sync;
        let f = open_flags(&spec);
        assert_eq!(f & libc::O_ACCMODE, libc::O_WRONLY);
        assert_eq!(f & libc::O_SYNC, libc::O_SYNC);
    }

    /// The open file's flags as F_GETFL gives them.
    fn status_flags(t: &mut FdTable, id: FileId) -> libc::c_int {
        // SAFETY: F_GETFL on a descriptor the table keeps open.
        let flags = unsafe { libc::fcntl(t.get_mut(id).unwrap().raw(), libc::F_GETFL) };
        assert!(flags >= 0, "{}", std::io::Error::last_os_error());
        flags
    }

    #[test]
    fn a_device_is_read_without_access_times_as_fio_opens_it() {
        let dir = tempfile::TempDir::new().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").unwrap();
        let mut t = FdTable::default();
        let spec = |path: &Path| FileSpec {
            path: path.to_path_buf(),
            read: true,
            ..FileSpec::default()
        };
        let file = t.open(&spec(&plain)).unwrap();
        assert_eq!(
            status_flags(&mut t, file) & libc::O_NOATIME,
            0,
            "a regular file is opened as fio opens it, with its access times"
        );
        // A character device: not a regular file. Its owner is root, so
        // another user's open keeps the access times (EPERM) and still
        // opens.
        let dev = t.open(&spec(Path::new("/dev/null"))).unwrap();
        let flags = status_flags(&mut t, dev);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(flags & libc::O_NOATIME, libc::O_NOATIME, "{flags:#o}");
        } else {
            assert_eq!(flags & libc::O_NOATIME, 0, "{flags:#o}");
        }
        assert_eq!(flags & libc::O_ACCMODE, libc::O_RDONLY);
    }

    #[test]
    fn ids_are_reused_and_unknown_ids_rejected() {
        let dir = tempfile::TempDir::new().unwrap();
        let spec = |name: &str| FileSpec {
            path: dir.path().join(name),
            write: true,
            create: true,
            ..FileSpec::default()
        };
        let mut t = FdTable::default();
        let a = t.open(&spec("a")).unwrap();
        let b = t.open(&spec("b")).unwrap();
        assert_eq!((a, b), (FileId(0), FileId(1)));
        t.close(a).unwrap();
        assert!(matches!(t.close(a), Err(EngineError::UnknownFile(_))));
        assert!(t.get_mut(a).is_err());
        assert_eq!(t.open(&spec("c")).unwrap(), FileId(0));
        assert!(t.get_mut(FileId(7)).is_err());
    }

    #[test]
    fn missing_file_error_names_path_and_errno() {
        let dir = tempfile::TempDir::new().unwrap();
        let spec = FileSpec {
            path: dir.path().join("nope"),
            read: true,
            ..FileSpec::default()
        };
        let err = FdTable::default().open(&spec).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("nope") && msg.contains("ENOENT"), "{msg}");
        assert!(matches!(
            err,
            EngineError::Open {
                errno: libc::ENOENT,
                ..
            }
        ));
    }

    #[test]
    fn created_files_have_mode_0644() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::TempDir::new().unwrap();
        let spec = FileSpec {
            path: dir.path().join("m"),
            write: true,
            create: true,
            ..FileSpec::default()
        };
        FdTable::default().open(&spec).unwrap();
        // 0644 less the umask: never more than 0644, owner always rw.
        let mode = std::fs::metadata(&spec.path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !0o644, 0, "{mode:o}");
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }

    /// Opens `dir/f` with O_DIRECT; `Some(message)` when refused.
    fn direct_open_error(dir: &Path) -> Option<String> {
        let spec = FileSpec {
            path: dir.join("direct"),
            read: true,
            write: true,
            create: true,
            direct: true,
            ..FileSpec::default()
        };
        let result = FdTable::default().open(&spec);
        let _ = std::fs::remove_file(&spec.path);
        match result {
            Ok(_) => None,
            Err(EngineError::Open { errno, message, .. }) => {
                assert_eq!(errno, libc::EINVAL, "{message}");
                Some(message)
            }
            Err(e) => panic!("{e}"),
        }
    }

    fn assert_names(message: &str, fs: &str) {
        println!("{message}");
        assert!(
            message.contains(&format!("the {fs} filesystem")),
            "{message}"
        );
        assert!(message.contains("direct=0"), "{message}");
        assert!(message.contains("EINVAL"), "{message}");
    }

    #[test]
    fn einval_on_tmpfs_names_tmpfs() {
        // The message alone, for kernels where tmpfs does take O_DIRECT.
        let shm = Path::new("/dev/shm");
        if fs_type(shm).ok() != Some(FsType::Tmpfs) {
            iolab_testkit::skip!("/dev/shm is not tmpfs");
        }
        let spec = FileSpec {
            path: shm.join("iolab-not-created"),
            direct: true,
            ..FileSpec::default()
        };
        assert_names(&open_error(&spec, libc::EINVAL).to_string(), "tmpfs");
        let spec = FileSpec {
            direct: false,
            ..spec
        };
        let msg = open_error(&spec, libc::EINVAL).to_string();
        assert!(!msg.contains("direct=0"), "{msg}");
    }

    #[test]
    fn o_direct_refusal_names_the_filesystem() {
        use crate::testutil::Mount;
        // tmpfs: /dev/shm, or one mounted for the test. Linux 6.6 and later
        // give tmpfs O_DIRECT; then ramfs, which never has it, stands in.
        let shm = Path::new("/dev/shm");
        if fs_type(shm).ok() == Some(FsType::Tmpfs) {
            let dir = tempfile::TempDir::new_in(shm).unwrap();
            match direct_open_error(dir.path()) {
                Some(message) => return assert_names(&message, "tmpfs"),
                None => println!("tmpfs takes O_DIRECT on this kernel; trying ramfs"),
            }
        }
        let dir = tempfile::TempDir::new().unwrap();
        for fstype in ["tmpfs", "ramfs"] {
            let mountpoint = dir.path().join(fstype);
            let mount = match Mount::new(fstype, &mountpoint) {
                Ok(m) => m,
                Err(why) => {
                    iolab_testkit::skip_case!("O_DIRECT refusal on {fstype}: {why}");
                    continue;
                }
            };
            if let Some(message) = direct_open_error(&mount.0) {
                return assert_names(&message, fstype);
            }
            println!("{fstype} takes O_DIRECT on this kernel");
        }
        iolab_testkit::skip!("no filesystem without O_DIRECT could be mounted");
    }
}
