//! The database's identity and layout: iolab's `application_id`, the
//! check that a file on disk is an iolab database before anything opens it
//! for writing, and the schema migrations, numbered by `PRAGMA
//! user_version` (migration i takes the schema from version i to i + 1).

use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::StoreError;

/// `PRAGMA application_id` of an iolab results database: "IOLB".
pub const APPLICATION_ID: i32 = 0x494F_4C42;

/// The migrations, oldest first. Never edit one that has shipped: add
/// another.
pub const MIGRATIONS: &[&str] = &[
    // 1: records, their tags and their headline metrics.
    "CREATE TABLE records (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        kind         TEXT NOT NULL,
        time         TEXT NOT NULL,
        time_unix    INTEGER NOT NULL,
        target       TEXT NOT NULL,
        fs_type      TEXT NOT NULL,
        host         TEXT NOT NULL,
        job_text     TEXT NOT NULL,
        command_line TEXT NOT NULL,
        provenance   TEXT NOT NULL,
        result       TEXT NOT NULL
    );
    CREATE INDEX records_time ON records (time_unix);
    CREATE INDEX records_kind ON records (kind);
    CREATE TABLE tags (
        record_id INTEGER NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        tag       TEXT NOT NULL,
        PRIMARY KEY (record_id, seq)
    );
    CREATE INDEX tags_tag ON tags (tag);
    CREATE TABLE metrics (
        record_id INTEGER NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        name      TEXT NOT NULL,
        value     REAL,
        unit      TEXT NOT NULL,
        samples   TEXT,
        PRIMARY KEY (record_id, seq)
    );",
    // 2: per-window sample moments of a metric, as JSON.
    "ALTER TABLE metrics ADD COLUMN windows TEXT;",
    // 3: the warnings a result carried and how its repeats ended, as JSON.
    "ALTER TABLE records ADD COLUMN warnings TEXT;
     ALTER TABLE records ADD COLUMN repeat TEXT;",
];

/// The schema version this iolab writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// What is at the database path before it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDisk {
    /// No file: it will be created.
    Missing,
    /// A file of zero bytes: it gets the schema.
    Empty,
    /// An SQLite database carrying iolab's application id.
    Iolab,
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Reads the first 100 bytes of `path` (the SQLite header) and says
/// whether it may be opened: refuses anything that is not empty and not an
/// SQLite database with iolab's application id. Reads only.
pub fn inspect(path: &Path) -> Result<OnDisk, StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Opened without blocking (a FIFO would wait for a writer forever)
    // and without following a link: only a regular file is read.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(OnDisk::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(StoreError::Linked {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(StoreError::NotRegular {
            path: path.to_path_buf(),
            what: crate::db::file_kind(&meta).into(),
        });
    }
    if meta.len() == 0 {
        return Ok(OnDisk::Empty);
    }
    let mut header = Vec::with_capacity(100);
    file.by_ref()
        .take(100)
        .read_to_end(&mut header)
        .map_err(io)?;
    if header.len() < 100 || &header[..16] != SQLITE_MAGIC {
        return Err(StoreError::NotIolab {
            path: path.to_path_buf(),
            why: "not an SQLite database".into(),
        });
    }
    let app_id = i32::from_be_bytes([header[68], header[69], header[70], header[71]]);
    if app_id != APPLICATION_ID {
        let why = if app_id == 0 {
            "an SQLite database without iolab's application id".to_string()
        } else {
            format!("an SQLite database of another application (application_id {app_id:#x})")
        };
        return Err(StoreError::NotIolab {
            path: path.to_path_buf(),
            why,
        });
    }
    Ok(OnDisk::Iolab)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.db");
        assert_eq!(inspect(&p).unwrap(), OnDisk::Missing);
        std::fs::write(&p, b"").unwrap();
        assert_eq!(inspect(&p).unwrap(), OnDisk::Empty);
        std::fs::write(&p, b"SQLite format 3\0short").unwrap();
        assert!(matches!(inspect(&p), Err(StoreError::NotIolab { .. })));
        let mut h = vec![0u8; 4096];
        h[..16].copy_from_slice(SQLITE_MAGIC);
        std::fs::write(&p, &h).unwrap();
        let err = inspect(&p).unwrap_err().to_string();
        assert!(err.contains("without iolab's application id"), "{err}");
        h[68..72].copy_from_slice(&APPLICATION_ID.to_be_bytes());
        std::fs::write(&p, &h).unwrap();
        assert_eq!(inspect(&p).unwrap(), OnDisk::Iolab);
        let err = inspect(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
