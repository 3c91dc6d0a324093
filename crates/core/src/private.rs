//! Files and directories iolab makes for its own use (state files, quick's
//! test directory, metadata trees, lab images and mount points), and the
//! checks that decide whether a file iolab finds later is one it made.
//!
//! iolab runs as root in directories other users can write, so nothing it
//! makes for itself may follow a name another user planted: files are
//! created with `O_CREAT|O_EXCL|O_NOFOLLOW` and mode 0600, directories with
//! `mkdir` (which never follows the last component) and mode 0700, and a
//! directory whose name iolab chooses gets a random suffix. A directory or
//! file found later is trusted only when, checked on its open descriptor
//! (not its name), it belongs to the running effective uid and neither its
//! group nor others may write it.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Mode of the files iolab makes for itself.
const FILE_MODE: u32 = 0o600;
/// Mode of the directories iolab makes for itself.
const DIR_MODE: u32 = 0o700;
/// Group- or other-writable bits.
const SHARED_WRITE: u32 = 0o022;

/// Creates `path` for writing; fails with `AlreadyExists` when anything
/// (a file, a symlink, a directory) is there already.
pub fn create_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Creates the directory `path` (its parent must exist) with mode 0700;
/// fails with `AlreadyExists` when anything is there.
pub fn create_dir(path: &Path) -> io::Result<()> {
    DirBuilder::new().mode(DIR_MODE).create(path)
}

/// Creates a new directory `PREFIX<random>` in `parent` with mode 0700
/// and returns its path. A name taken already (by anyone) is never used:
/// another random name is tried.
pub fn make_dir_in(parent: &Path, prefix: &str) -> io::Result<PathBuf> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..64 {
        let path = parent.join(format!("{prefix}{}", random_suffix()));
        match create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Twelve hex digits from the kernel's random source (else the clock).
fn random_suffix() -> String {
    let mut b = [0u8; 6];
    let got = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if got.is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let v = t.as_nanos() as u64 ^ (u64::from(std::process::id()) << 32);
        b.copy_from_slice(&v.to_le_bytes()[..6]);
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Why a directory or file found on disk is not taken as iolab's own.
#[derive(Debug, thiserror::Error)]
pub enum Distrust {
    #[error("it is a symbolic link")]
    Symlink,
    #[error("it is not a {0}")]
    WrongType(&'static str),
    #[error("it belongs to uid {owner}, not to this user (uid {me})")]
    Owner { owner: u32, me: u32 },
    #[error("its group or other users may write it (mode {0:04o})")]
    Writable(u32),
    #[error("it is larger than {0} bytes")]
    TooLarge(u64),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Opens the directory `path` without following a symlink and checks,
/// on the descriptor, that it is this user's and not writable by others.
pub fn open_trusted_dir(path: &Path) -> Result<File, Distrust> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Distrust::Symlink,
            // With O_DIRECTORY, a symlink is refused as "not a directory".
            Some(libc::ENOTDIR) if is_symlink(path) => Distrust::Symlink,
            Some(libc::ENOTDIR) => Distrust::WrongType("directory"),
            _ => Distrust::Io(e),
        })?;
    check_owned(&f, "directory")?;
    Ok(f)
}

/// Reads the file `name` of the trusted directory `dir` (opened by
/// [`open_trusted_dir`]), through that descriptor, without following a
/// symlink, after checking that the file is a regular file of this user's
/// that others cannot write, of at most `limit` bytes. `None` when there
/// is no such name.
pub fn read_trusted_file(dir: &File, name: &str, limit: u64) -> Result<Option<String>, Distrust> {
    // The name is resolved in the directory the descriptor holds, not in
    // whatever the directory's path names by now.
    let path = PathBuf::from(format!("/proc/self/fd/{}/{name}", dir.as_raw_fd()));
    let mut f = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(Distrust::Symlink),
        Err(e) => return Err(Distrust::Io(e)),
    };
    let m = check_owned(&f, "regular file")?;
    if m.len() > limit {
        return Err(Distrust::TooLarge(limit));
    }
    let mut text = String::new();
    (&mut f).take(limit).read_to_string(&mut text)?;
    Ok(Some(text))
}

/// Whether the directory entry `path` (not followed if a symlink) is a
/// real directory of this user's.
pub fn is_own_dir(path: &Path) -> Result<(), Distrust> {
    let m = std::fs::symlink_metadata(path)?;
    if m.file_type().is_symlink() {
        return Err(Distrust::Symlink);
    }
    if !m.is_dir() {
        return Err(Distrust::WrongType("directory"));
    }
    let me = iolab_engine::host::euid();
    if m.uid() != me {
        return Err(Distrust::Owner { owner: m.uid(), me });
    }
    Ok(())
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn check_owned(f: &File, kind: &'static str) -> Result<std::fs::Metadata, Distrust> {
    let m = f.metadata()?;
    let right_type = match kind {
        "directory" => m.is_dir(),
        _ => m.is_file(),
    };
    if !right_type {
        return Err(Distrust::WrongType(kind));
    }
    let me = iolab_engine::host::euid();
    if m.uid() != me {
        return Err(Distrust::Owner { owner: m.uid(), me });
    }
    if m.mode() & SHARED_WRITE != 0 {
        return Err(Distrust::Writable(m.mode() & 0o7777));
    }
    Ok(m)
}

/// The start time of a process (clock ticks after boot, field 22 of
/// /proc/PID/stat), to tell a process from a later one with its pid.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; it ends at the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether process `pid`, started at `start`, still runs.
pub fn process_alive(pid: u32, start: u64) -> bool {
    process_start(pid) == Some(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn create_file_refuses_a_planted_symlink() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = create_file(&link).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        // A dangling link is not followed either (O_CREAT alone would
        // create its target).
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("made"), &dangling).unwrap();
        assert!(create_file(&dangling).is_err());
        assert!(!d.path().join("made").exists());
        let f = d.path().join("new");
        create_file(&f).unwrap();
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !FILE_MODE, 0, "{mode:o}");
    }

    #[test]
    fn private_dirs_are_0700_and_new() {
        let d = tempfile::tempdir().unwrap();
        let a = make_dir_in(d.path(), "iolab-x-").unwrap();
        let b = make_dir_in(d.path(), "iolab-x-").unwrap();
        assert_ne!(a, b);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !DIR_MODE, 0, "{mode:o}");
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("iolab-x-"));
        assert_eq!(
            create_dir(&a).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        open_trusted_dir(&a).unwrap();
    }

    #[test]
    fn trust_is_checked_on_the_descriptor() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("w");
        create_dir(&dir).unwrap();
        std::fs::write(dir.join("state"), "x\n").unwrap();
        std::fs::set_permissions(dir.join("state"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let f = open_trusted_dir(&dir).unwrap();
        assert_eq!(
            read_trusted_file(&f, "state", 100).unwrap().as_deref(),
            Some("x\n")
        );
        assert!(read_trusted_file(&f, "none", 100).unwrap().is_none());
        assert!(matches!(
            read_trusted_file(&f, "state", 1),
            Err(Distrust::TooLarge(1))
        ));
        // Renamed away and replaced after the open: the descriptor still
        // reads the directory that was checked.
        std::fs::rename(&dir, d.path().join("moved")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        assert!(read_trusted_file(&f, "state", 100).unwrap().is_some());

        // World-writable: not trusted.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            open_trusted_dir(&dir),
            Err(Distrust::Writable(0o777))
        ));
        // A symlink to a trusted directory: not trusted.
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path().join("moved"), &link).unwrap();
        assert!(matches!(open_trusted_dir(&link), Err(Distrust::Symlink)));
        // A symlinked file inside a trusted directory: not read.
        let moved = open_trusted_dir(&d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("moved/ln")).unwrap();
        assert!(matches!(
            read_trusted_file(&moved, "ln", 100),
            Err(Distrust::Symlink)
        ));
        // A group-writable file: not read.
        std::fs::set_permissions(
            d.path().join("moved/state"),
            std::fs::Permissions::from_mode(0o620),
        )
        .unwrap();
        assert!(matches!(
            read_trusted_file(&moved, "state", 100),
            Err(Distrust::Writable(_))
        ));
    }

    #[test]
    fn processes_are_told_apart_by_start_time() {
        let me = std::process::id();
        let start = process_start(me).unwrap();
        assert!(process_alive(me, start));
        assert!(!process_alive(me, start + 1));
        assert!(!process_alive(u32::MAX - 1, 0));
    }
}
