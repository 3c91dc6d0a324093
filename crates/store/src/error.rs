//! `StoreError`: everything that can go wrong opening, writing or reading
//! the results database, each naming the database file.

use std::path::PathBuf;

/// An error of the results store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists and is not an iolab results database; it was left
    /// as it was.
    #[error("{path}: not an iolab results database ({why}); it was left untouched")]
    NotIolab { path: PathBuf, why: String },
    /// The database was written by a newer iolab.
    #[error(
        "{path}: results database schema version {found} is newer than this iolab supports \
         (version {supported}); use a newer iolab or another --db"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// The file is an iolab database whose pages are damaged (`PRAGMA
    /// quick_check` failed); it was left as it was.
    #[error(
        "{path}: the results database is damaged ({detail}); it was left untouched: \
         recover what it holds with `sqlite3 {path} .recover`, or use another --db"
    )]
    Damaged { path: PathBuf, detail: String },
    /// The database cannot be written now: read-only, or locked by
    /// another process past the busy timeout.
    #[error("{path}: the results database cannot be written ({why})")]
    NotWritable { path: PathBuf, why: String },
    /// The name has a symbolic link in it (one planted after iolab
    /// followed the links the name had): SQLite is told to follow none.
    #[error(
        "{path}: a symbolic link in the name, where iolab had followed the links it \
         had (one planted since?); the results database is opened through no link"
    )]
    Linked { path: PathBuf },
    /// The database or one of its `-wal`, `-shm`, `-journal` files is
    /// not a regular file (a FIFO, socket or device another user may have
    /// planted): opening it could block forever or write elsewhere.
    #[error(
        "{path}: a {what}, not a regular file: the results database and its -wal, -shm \
         and -journal files must be regular files; it was left untouched (remove it or use \
         another --db)"
    )]
    NotRegular { path: PathBuf, what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A stored or supplied value could not be encoded or decoded.
    #[error("{path}: {what}: {source}")]
    Json {
        path: PathBuf,
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// A record field holds a value the store cannot file (a time that is
    /// not RFC 3339, a kind it does not know).
    #[error("{path}: {msg}")]
    Invalid { path: PathBuf, msg: String },
}
