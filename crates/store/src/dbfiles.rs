//! `DbFiles`: the files a results database consists of (the database and
//! its `-wal`, `-shm` and `-journal` files), to tell whether another path
//! names one of them: an `--output` file or a job's data file that would
//! overwrite the history. Two paths are the same file when they resolve to
//! the same place (symbolic links and `..` followed, relative paths taken
//! from the current directory) or, for files that exist, when they are the
//! same device and inode (hard links, bind mounts).

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The files SQLite keeps beside a database.
const SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The files of one or more results databases.
#[derive(Clone, Debug, Default)]
pub struct DbFiles {
    files: Vec<DbFile>,
}

#[derive(Clone, Debug)]
struct DbFile {
    /// The name to report: the database path as given, with its suffix.
    shown: PathBuf,
    /// Where it resolves to.
    resolved: Vec<PathBuf>,
    /// Device and inode, when it exists.
    id: Option<(u64, u64)>,
}

impl DbFiles {
    /// The files of the databases at `dbs`.
    pub fn of<P: AsRef<Path>>(dbs: impl IntoIterator<Item = P>) -> DbFiles {
        let mut files = Vec::new();
        for db in dbs {
            let db = db.as_ref();
            if db.as_os_str().is_empty() {
                continue;
            }
            let real = resolve(db);
            files.push(DbFile {
                shown: db.to_path_buf(),
                resolved: vec![real.clone()],
                id: file_id(db),
            });
            for suffix in SUFFIXES {
                let given = with_suffix(db, suffix);
                // SQLite keeps these beside the database as named, and
                // beside the file a symbolic link to it leads to.
                let beside_real = with_suffix(&real, suffix);
                let id = file_id(&given).or_else(|| file_id(&beside_real));
                files.push(DbFile {
                    resolved: vec![resolve(&given), resolve(&beside_real)],
                    shown: given,
                    id,
                });
            }
        }
        DbFiles { files }
    }

    /// The database file `path` is (the name it was given as), if it is
    /// one.
    pub fn find(&self, path: &Path) -> Option<&Path> {
        if path.as_os_str().is_empty() {
            return None;
        }
        let id = file_id(path);
        let real = resolve(path);
        self.files
            .iter()
            .find(|f| (id.is_some() && f.id == id) || f.resolved.contains(&real))
            .map(|f| f.shown.as_path())
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Device and inode of the file `path` leads to.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `path` made absolute with every symbolic link followed, as far as the
/// path exists; the rest (names still to be created) appended as written,
/// `.` and `..` applied.
fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    resolve_abs(&abs, 0)
}

fn resolve_abs(abs: &Path, depth: u32) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(abs) {
        return real;
    }
    if depth > 40 {
        return lexical(abs);
    }
    // A link whose target does not exist yet: writing to it creates the
    // target.
    if let Ok(target) = std::fs::read_link(abs) {
        let parent = abs.parent().unwrap_or(Path::new("/"));
        return resolve_abs(&parent.join(target), depth + 1);
    }
    match (abs.parent(), abs.components().next_back()) {
        (Some(parent), Some(Component::Normal(name))) => resolve_abs(parent, depth + 1).join(name),
        (Some(parent), Some(Component::ParentDir)) => {
            let up = resolve_abs(parent, depth + 1);
            up.parent().map(Path::to_path_buf).unwrap_or(up)
        }
        (Some(parent), Some(Component::CurDir)) => resolve_abs(parent, depth + 1),
        _ => lexical(abs),
    }
}

/// `.` and `..` applied without looking at the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn the_database_is_found_under_every_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let db = d.join("results.db");
        std::fs::write(&db, b"x").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let files = DbFiles::of([&db]);
        assert_eq!(files.find(&db), Some(db.as_path()));
        // Another spelling, a link, a hard link.
        assert!(files.find(&d.join("sub/../results.db")).is_some());
        symlink(&db, d.join("link")).unwrap();
        assert!(files.find(&d.join("link")).is_some());
        std::fs::hard_link(&db, d.join("hard")).unwrap();
        assert!(files.find(&d.join("hard")).is_some());
        // -wal and -shm, whether they exist or not, also through a link to
        // the database's directory and a dangling link.
        let wal = d.join("results.db-wal");
        assert_eq!(files.find(&wal), Some(d.join("results.db-wal").as_path()));
        symlink(d, d.join("sub/up")).unwrap();
        assert!(files.find(&d.join("sub/up/results.db-shm")).is_some());
        symlink(d.join("results.db-shm"), d.join("dangling")).unwrap();
        assert!(files.find(&d.join("dangling")).is_some());
        // Other files are not.
        assert_eq!(files.find(&d.join("results.db.txt")), None);
        assert_eq!(files.find(&d.join("sub/results.db")), None);
        assert_eq!(files.find(Path::new("")), None);
    }

    #[test]
    fn a_database_reached_through_a_link_guards_the_real_wal() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("real")).unwrap();
        std::fs::write(d.join("real/r.db"), b"x").unwrap();
        symlink(d.join("real/r.db"), d.join("r.db")).unwrap();
        let files = DbFiles::of([d.join("r.db")]);
        assert!(files.find(&d.join("real/r.db-wal")).is_some());
        assert!(files.find(&d.join("r.db-wal")).is_some());
        // A wal that exists is also known by its inode.
        std::fs::write(d.join("real/r.db-wal"), b"w").unwrap();
        let files = DbFiles::of([d.join("r.db")]);
        std::fs::hard_link(d.join("real/r.db-wal"), d.join("w2")).unwrap();
        assert!(files.find(&d.join("w2")).is_some());
    }

    #[test]
    fn a_database_that_does_not_exist_yet_is_found_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let files = DbFiles::of([d.join("new/r.db")]);
        assert!(files.find(&d.join("new/./r.db")).is_some());
        assert!(files.find(&d.join("new/x/../r.db-wal")).is_some());
        assert_eq!(files.find(&d.join("new/r.db2")), None);
    }
}
