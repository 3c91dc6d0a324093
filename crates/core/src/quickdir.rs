//! The directory `iolab quick` works in, and what killed runs left.
//!
//! quick tests the filesystem of a directory the user names, often one
//! that others can write. It makes a private directory there (mode 0700,
//! a name no one can have planted: `.iolab-quick-PID-START-RANDOM`, with
//! its process id and start time) and keeps its test file and metadata
//! tree inside. A run killed before it could clean up leaves that
//! directory (up to 1 GiB); the next quick in the same place removes it
//! when its process is gone and the directory is still a real directory
//! of this user's. Test files of older versions (`.iolab-quick-PID.tmp`)
//! are recognized the same way.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::private;

const PREFIX: &str = ".iolab-quick-";

/// Makes the private work directory of this process's quick in `dir`.
pub fn create(dir: &Path) -> io::Result<PathBuf> {
    let pid = std::process::id();
    let start = private::process_start(pid).unwrap_or(0);
    private::make_dir_in(dir, &format!("{PREFIX}{pid}-{start}-"))
}

/// Removes the work directory `work` and everything in it (not following
/// symlinks in it).
pub fn remove(work: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(work) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

/// The owner of a work directory or test file, read from its name.
#[derive(Debug, PartialEq, Eq)]
enum Owner {
    /// Process id and start time.
    Run { pid: u32, start: u64 },
    /// An older test file's process id (no start time).
    Pid(u32),
}

fn owner_of(name: &str) -> Option<Owner> {
    let rest = name.strip_prefix(PREFIX)?;
    if let Some(pid) = rest.strip_suffix(".tmp") {
        return pid.parse().ok().map(Owner::Pid);
    }
    let mut f = rest.splitn(3, '-');
    let pid = f.next()?.parse().ok()?;
    let start = f.next()?.parse().ok()?;
    f.next()?;
    Some(Owner::Run { pid, start })
}

impl Owner {
    fn alive(&self) -> bool {
        match *self {
            Owner::Run { pid, start } => private::process_alive(pid, start),
            Owner::Pid(pid) => Path::new(&format!("/proc/{pid}")).exists(),
        }
    }

    fn pid(&self) -> u32 {
        match *self {
            Owner::Run { pid, .. } | Owner::Pid(pid) => pid,
        }
    }
}

/// Removes what killed quick runs of this user's left in `dir`: work
/// directories and test files whose process is gone. Says, for each,
/// what was removed or why it could not be.
pub fn remove_stale(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = iolab_engine::host::euid();
    let mut said = Vec::new();
    let mut found: Vec<(PathBuf, Owner)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let owner = owner_of(e.file_name().to_str()?)?;
            Some((e.path(), owner))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, owner) in found {
        if owner.alive() {
            continue;
        }
        // Looked at without following a symlink: only a real directory
        // (or, of old, a regular file) of this user's is removed.
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let ours = m.uid() == me
            && match owner {
                Owner::Run { .. } => m.is_dir(),
                Owner::Pid(_) => m.is_file(),
            };
        if !ours {
            continue;
        }
        let removed = if m.is_dir() {
            remove(&path)
        } else {
            std::fs::remove_file(&path)
        };
        said.push(match removed {
            Ok(()) => format!(
                "removed {}, left by a quick run that was killed (pid {})",
                path.display(),
                owner.pid()
            ),
            Err(e) => format!(
                "cannot remove {}, left by a killed quick run: {e}",
                path.display()
            ),
        });
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tell_the_owner() {
        assert_eq!(
            owner_of(".iolab-quick-12-345-abcdef"),
            Some(Owner::Run {
                pid: 12,
                start: 345
            })
        );
        assert_eq!(owner_of(".iolab-quick-12.tmp"), Some(Owner::Pid(12)));
        assert_eq!(owner_of(".iolab-quick-x.tmp"), None);
        assert_eq!(owner_of(".iolab-quick-12-345"), None);
        assert_eq!(owner_of("iolab-quick-12-345-ab"), None);
    }

    #[test]
    fn only_dead_runs_own_files_go() {
        let d = tempfile::tempdir().unwrap();
        let mine = create(d.path()).unwrap();
        std::fs::write(mine.join("data"), b"x").unwrap();
        // A dead run's directory and an old-style test file.
        let dead = d.path().join(format!("{PREFIX}{}-7-abc", u32::MAX - 1));
        private::create_dir(&dead).unwrap();
        std::fs::write(dead.join("data"), vec![0u8; 1 << 20]).unwrap();
        let old = d.path().join(format!("{PREFIX}{}.tmp", u32::MAX - 2));
        std::fs::write(&old, b"x").unwrap();
        // A symlink with a dead run's name: the link is not followed and
        // its target stays.
        let target = d.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"k").unwrap();
        std::os::unix::fs::symlink(
            &target,
            d.path().join(format!("{PREFIX}{}-7-x", u32::MAX - 3)),
        )
        .unwrap();
        // A live run (this one, with its start time).
        let said = remove_stale(d.path());
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("killed (pid"), "{said:?}");
        assert!(!dead.exists() && !old.exists());
        assert!(mine.join("data").exists());
        assert!(target.join("keep").exists());
        remove(&mine).unwrap();
        assert!(!mine.exists());
    }
}
