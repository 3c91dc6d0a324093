//! Where every subcommand's report goes: standard output, or the file of
//! `--output FILE`. The file is checked before anything runs (a path that
//! cannot be written, or that is the results database or one of its
//! `-wal`/`-shm` files, is a bad command line: exit 2, nothing written) and
//! written once the report exists. A reader that closes standard output
//! early (`iolab show 3 | head`) ends the command quietly.

use std::ffi::CString;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use iolab_store::DbFiles;

/// Checks that `path` can be written, creating and changing nothing: it
/// is none of the files of the databases `db`, a symbolic link at the name
/// is one [`iolab_core::links`] follows (not another user's in a shared
/// sticky directory), an existing file must be writable, a new one needs
/// a directory the process may write in. The message names the path.
pub fn check(named: &Path, db: &DbFiles) -> Result<(), String> {
    let fail = |why: String| Err(format!("--output `{}`: {why}", named.display()));
    if named.as_os_str().is_empty() {
        return fail("an empty path".into());
    }
    crate::keep::check_not_db("--output", named, db)?;
    // The name the links lead to, if any: it is the file to be written.
    let path = &match iolab_core::links::resolve(named) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    let missing = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return fail("a directory".into()),
        Ok(m) if m.file_type().is_fifo() => {
            // Opening it here would wait for a reader: another user's in
            // a shared sticky directory is refused, one's own is written
            // when the report is (as a shell's redirection would).
            return iolab_core::links::judge_fifo(path).or_else(|e| fail(e.to_string()));
        }
        Ok(_) => {
            // Opening for appending changes nothing and tells whether the
            // file may be written.
            return match std::fs::OpenOptions::new().append(true).open(path) {
                Ok(_) => Ok(()),
                Err(e) => fail(e.to_string()),
            };
        }
        Err(e) => e,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(format!("the directory `{}` does not exist", dir.display()))
        }
        Err(e) => return fail(format!("`{}`: {e}", dir.display())),
        Ok(m) if !m.is_dir() => return fail(format!("`{}` is not a directory", dir.display())),
        Ok(_) => {}
    }
    let writable = CString::new(dir.as_os_str().as_bytes())
        .map(|c| iolab_engine::fsops::can_write_dir(&c))
        .unwrap_or(false);
    if !writable {
        return fail(format!("the directory `{}` is not writable", dir.display()));
    }
    if missing.kind() == std::io::ErrorKind::NotFound {
        Ok(())
    } else {
        fail(missing.to_string())
    }
}

/// [`check`] for an optional `--output`.
pub fn check_opt(path: Option<&Path>, db: &DbFiles) -> Result<(), String> {
    path.map_or(Ok(()), |p| check(p, db))
}

/// Writes `text` to `output`, or to standard output.
pub fn emit(output: Option<&Path>, text: &str) -> Result<()> {
    let mut out = Out::open(output)?;
    out.write(text)?;
    out.finish()
}

/// Whether `err` comes from writing to a pipe whose reader has gone.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A report being written: standard output or the `--output` file.
pub enum Out {
    Stdout(std::io::Stdout),
    File(std::fs::File, std::path::PathBuf),
}

impl Out {
    /// Standard output, or `path` created (truncated when it exists),
    /// following a symbolic link at its name only as
    /// [`iolab_core::links`] allows (a link planted after [`check`] is
    /// judged here, before anything is written).
    pub fn open(path: Option<&Path>) -> Result<Out> {
        let Some(p) = path else {
            return Ok(Out::Stdout(std::io::stdout()));
        };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        let file = iolab_core::links::open(p, flags, 0o644)
            .with_context(|| format!("cannot write --output file `{}`", p.display()))?;
        Ok(Out::File(file, p.to_path_buf()))
    }

    pub fn write(&mut self, text: &str) -> Result<()> {
        match self {
            Out::Stdout(s) => {
                let mut s = s.lock();
                s.write_all(text.as_bytes())?;
                s.flush()?;
            }
            Out::File(f, p) => f
                .write_all(text.as_bytes())
                .with_context(|| format!("cannot write --output file `{}`", p.display()))?,
        }
        Ok(())
    }

    pub fn finish(&mut self) -> Result<()> {
        match self {
            Out::Stdout(s) => s.flush()?,
            Out::File(f, p) => f
                .flush()
                .with_context(|| format!("cannot write --output file `{}`", p.display()))?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_cannot_be_written_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let none = DbFiles::default();
        let check = |p: &Path| super::check(p, &none);
        let e = check(Path::new("/nonexistent-iolab/o.txt")).unwrap_err();
        assert!(
            e.contains("/nonexistent-iolab/o.txt") && e.contains("does not exist"),
            "{e}"
        );
        assert!(check(tmp.path()).unwrap_err().contains("a directory"));
        let plain = tmp.path().join("plain");
        std::fs::write(&plain, b"keep").unwrap();
        let e = check(&plain.join("o.txt")).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        // Writable places pass and nothing is created or changed.
        check(&tmp.path().join("new.txt")).unwrap();
        check(&plain).unwrap();
        assert!(!tmp.path().join("new.txt").exists());
        assert_eq!(std::fs::read(&plain).unwrap(), b"keep");
    }

    #[test]
    fn the_database_and_its_wal_are_refused_unchanged() {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("results.db");
        std::fs::write(&db, b"history").unwrap();
        let files = DbFiles::of([&db]);
        for p in [db.clone(), tmp.path().join("results.db-wal")] {
            let e = check(&p, &files).unwrap_err();
            assert!(e.contains("is the results database file"), "{e}");
        }
        check(&tmp.path().join("report.txt"), &files).unwrap();
        assert_eq!(std::fs::read(&db).unwrap(), b"history");
        assert!(!tmp.path().join("results.db-wal").exists());
    }

    #[test]
    fn an_own_link_at_the_name_is_followed() {
        // A link of the running user's own, in a directory that is not
        // shared: the report goes where it points (another user's link
        // in a sticky directory is refused: tests/faults_hostile.rs).
        let tmp = tempfile::tempdir().unwrap();
        let kept = tmp.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        let link = tmp.path().join("report.txt");
        std::os::unix::fs::symlink("kept/report.txt", &link).unwrap();
        check(&link, &DbFiles::default()).unwrap();
        assert!(!kept.join("report.txt").exists());
        emit(Some(&link), "text\n").unwrap();
        assert_eq!(std::fs::read(kept.join("report.txt")).unwrap(), b"text\n");
        // A link to a directory that does not exist: the check says so.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("gone/report.txt", &link).unwrap();
        let e = check(&link, &DbFiles::default()).unwrap_err();
        assert!(e.contains("gone") && e.contains("does not exist"), "{e}");
    }

    #[test]
    fn broken_pipes_are_told_apart() {
        let pipe = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the report");
        assert!(is_broken_pipe(&pipe));
        let other = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert!(!is_broken_pipe(&other));
    }
}
