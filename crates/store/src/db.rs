//! `Store`: the open results database. Opening checks the file before
//! anything writes to it (an iolab database, of a schema this iolab knows,
//! whose pages pass SQLite's quick check), brings the schema up to date,
//! and sets WAL mode and a busy timeout so that several iolab processes can
//! add results at once. Then records go in (one transaction each) and
//! come back by id, by history filter, or all at once for export.
//!
//! SQLite is told to follow no symbolic link in the name
//! (`SQLITE_OPEN_NOFOLLOW`), and opens the `-journal`, `-wal` and `-shm`
//! files beside it `O_NOFOLLOW` (its `unixOpen`): the caller follows the
//! links it allows first and passes the name they lead to.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{
    params, params_from_iter, Connection, OpenFlags, OptionalExtension as _, TransactionBehavior,
};

use crate::record::{Entry, Filter, Kind, Metric, Record, Stored};
use crate::schema::{self, OnDisk, APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION};
use crate::{time, StoreError};

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open iolab results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens the database at `path` to add results, creating it (and its
    /// parent directories) when missing or empty. A file that is not an
    /// iolab database is refused and left untouched; so is a damaged one
    /// (`PRAGMA quick_check`), before anything is written; one written by a
    /// newer iolab is refused naming both schema versions. Last, a write
    /// transaction is begun and rolled back: a database that cannot be
    /// written (a read-only file or filesystem, a lock held past
    /// [`BUSY_TIMEOUT`]) is refused now, before anything is measured. A
    /// symbolic link anywhere in `path` is refused ([`StoreError::Linked`]),
    /// and no directory is made through one.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let store = Store::open_with(path.as_ref(), true)?;
        store.check_writable()?;
        Ok(store)
    }

    /// Opens the database at `path` to read results back, read-only, or
    /// None when there is no database there (no file, or an empty one).
    /// Nothing is created or written, unless the database has an older
    /// schema, which is brought up to date first. On a read-only
    /// filesystem a database in WAL mode whose `-shm` file cannot be made
    /// is read as immutable (valid when no `-wal` file holds changes, which
    /// SQLite folds back into the database when the last writer closes).
    pub fn open_for_reading(path: impl AsRef<Path>) -> Result<Option<Store>, StoreError> {
        let path = path.as_ref().to_path_buf();
        no_link_at(&path)?;
        regular_files_at(&path)?;
        match schema::inspect(&path)? {
            OnDisk::Missing | OnDisk::Empty => return Ok(None),
            OnDisk::Iolab => {}
        }
        let conn = open_read_only(&path)?;
        let e = |err| read_err(&path, err);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(e)?;
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(e)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path,
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version < SCHEMA_VERSION {
            drop(conn);
            return Store::open_with(&path, false).map(Some);
        }
        Ok(Some(Store { conn, path }))
    }

    fn open_with(path: &Path, check: bool) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            make_dirs(parent).map_err(|source| match source.raw_os_error() {
                Some(libc::ELOOP) => linked(&path),
                _ => StoreError::Io {
                    path: parent.to_path_buf(),
                    source,
                },
            })?;
        }
        no_link_at(&path)?;
        regular_files_at(&path)?;
        let on_disk = schema::inspect(&path)?;
        if on_disk != OnDisk::Missing {
            writable_file(&path)?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| write_err(&path, e))?;
        let mut store = Store { conn, path };
        store.prepare(on_disk, check && on_disk == OnDisk::Iolab)?;
        Ok(store)
    }

    /// Refuses a database this process cannot write: SQLite opened it
    /// read-only (a read-only file, directory or filesystem), or a write
    /// transaction cannot begin within the busy timeout.
    pub fn check_writable(&self) -> Result<(), StoreError> {
        let ro = self
            .conn
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(|e| sql(&self.path, e))?;
        if ro {
            return Err(StoreError::NotWritable {
                path: self.path.clone(),
                why: "SQLite opened it read-only: the file, its directory or its \
                      filesystem is read-only for this user"
                    .into(),
            });
        }
        self.conn
            .execute_batch("BEGIN IMMEDIATE; ROLLBACK;")
            .map_err(|e| write_err(&self.path, e))
    }

    /// How long a write waits for another process's lock (default
    /// [`BUSY_TIMEOUT`]).
    pub fn set_busy_timeout(&self, wait: Duration) -> Result<(), StoreError> {
        self.conn.busy_timeout(wait).map_err(|e| sql(&self.path, e))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets the connection up, checks the pages (with `check`) and brings
    /// the schema to [`SCHEMA_VERSION`].
    fn prepare(&mut self, on_disk: OnDisk, check: bool) -> Result<(), StoreError> {
        let path = self.path.clone();
        let e = |err| write_err(&path, err);
        self.conn.busy_timeout(BUSY_TIMEOUT).map_err(e)?;
        self.conn
            .pragma_update(None, "foreign_keys", true)
            .map_err(e)?;
        // Under a write lock, so that two processes creating one database
        // at once take turns: the second finds the first's schema. The
        // check reads under it too: a reader's shared lock alone would make
        // a writer's switch to WAL mode fail at once instead of waiting.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        if check {
            check_pages(&tx, &path)?;
        }
        let app_id: i32 = tx
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(e)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(e)?;
        if app_id != APPLICATION_ID {
            let tables: i64 = tx
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(e)?;
            // Only a database this process just created (the file was
            // missing or empty) and nobody has filled may be claimed.
            if on_disk == OnDisk::Iolab || tables != 0 || version != 0 || app_id != 0 {
                return Err(StoreError::NotIolab {
                    path: path.clone(),
                    why: "an SQLite database of another application".into(),
                });
            }
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(e)?;
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.clone(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        for (i, sql_text) in MIGRATIONS.iter().enumerate().skip(version.max(0) as usize) {
            tx.execute_batch(sql_text).map_err(e)?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        // The switch to WAL needs the database to itself, and SQLite does
        // not wait for that (another process's read of a database both just
        // created would deadlock): it is retried until the busy timeout.
        let deadline = Instant::now() + BUSY_TIMEOUT;
        let mode: String = loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => break other.map_err(e)?,
            }
        };
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Invalid {
                path: path.clone(),
                msg: format!("the database stays in journal mode {mode}, not WAL"),
            });
        }
        Ok(())
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| sql(&self.path, e))
    }

    /// Files a record; returns its id.
    pub fn insert(&mut self, record: &Record) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let e = |err| write_err(&path, err);
        let time_unix = time::parse_rfc3339(&record.time).ok_or_else(|| StoreError::Invalid {
            path: path.clone(),
            msg: format!("record time '{}' is not RFC 3339", record.time),
        })?;
        let provenance =
            serde_json::to_string(&record.provenance).map_err(|source| StoreError::Json {
                path: path.clone(),
                what: "provenance".into(),
                source,
            })?;
        let json = |what: &str, v: Result<String, serde_json::Error>| {
            v.map_err(|source| StoreError::Json {
                path: path.clone(),
                what: what.into(),
                source,
            })
        };
        let warnings = json("warnings", serde_json::to_string(&record.warnings))?;
        let repeat = match &record.repeat {
            Some(r) => Some(json("repeat", serde_json::to_string(r))?),
            None => None,
        };
        let mut samples = Vec::with_capacity(record.metrics.len());
        for m in &record.metrics {
            samples.push((encode_samples(&path, m)?, encode_windows(&path, m)?));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        tx.execute(
            "INSERT INTO records (kind, time, time_unix, target, fs_type, host, job_text,
                                  command_line, provenance, result, warnings, repeat)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                record.kind.as_str(),
                record.time,
                time_unix,
                record.target,
                record.provenance.fs_type,
                record.provenance.host,
                record.job_text,
                record.command_line,
                provenance,
                record.result_json,
                warnings,
                repeat,
            ],
        )
        .map_err(e)?;
        let id = tx.last_insert_rowid();
        for (seq, tag) in record.tags.iter().enumerate() {
            tx.execute(
                "INSERT INTO tags (record_id, seq, tag) VALUES (?1, ?2, ?3)",
                params![id, seq as i64, tag],
            )
            .map_err(e)?;
        }
        for (seq, (m, (s, w))) in record.metrics.iter().zip(&samples).enumerate() {
            let value = (!m.value.is_nan()).then_some(m.value);
            tx.execute(
                "INSERT INTO metrics (record_id, seq, name, value, unit, samples, windows)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![id, seq as i64, m.name, value, m.unit, s, w],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(id)
    }

    /// The id of a stored record with the kind, time, command line and
    /// result of `record`, if there is one (the same result imported
    /// twice).
    pub fn find_same(&self, record: &Record) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_row(
                "SELECT id FROM records WHERE kind = ?1 AND time = ?2 AND command_line = ?3
                 AND result = ?4 ORDER BY id LIMIT 1",
                params![
                    record.kind.as_str(),
                    record.time,
                    record.command_line,
                    record.result_json
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| read_err(&self.path, e))
    }

    /// The record with id `id`, if there is one.
    pub fn get(&self, id: i64) -> Result<Option<Stored>, StoreError> {
        let mut found = self.full_records("WHERE id = ?1", &[&id])?;
        Ok(found.pop())
    }

    /// Every record, oldest first, for export.
    pub fn all(&self) -> Result<Vec<Stored>, StoreError> {
        self.full_records("ORDER BY id", &[])
    }

    /// The number of records.
    pub fn len(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM records", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| read_err(&self.path, e))
    }

    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// The records that match `filter`, newest first, without their
    /// result JSON and job text (history lists many; `get` reads one in
    /// full).
    pub fn history(&self, filter: &Filter) -> Result<Vec<Entry>, StoreError> {
        let mut clauses: Vec<&str> = Vec::new();
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        if let Some(kind) = filter.kind {
            clauses.push("kind = ?");
            args.push(kind.as_str().to_string().into());
        }
        if let Some(tag) = &filter.tag {
            clauses
                .push("EXISTS (SELECT 1 FROM tags t WHERE t.record_id = records.id AND t.tag = ?)");
            args.push(tag.clone().into());
        }
        if let Some(fs) = &filter.fs_type {
            // One of a comparison's comma-separated filesystems, or the
            // whole value.
            clauses.push("instr(',' || fs_type || ',', ',' || ? || ',') > 0");
            args.push(fs.clone().into());
        }
        if let Some(target) = &filter.target {
            clauses.push("instr(target, ?) > 0");
            args.push(target.clone().into());
        }
        if let Some(since) = filter.since {
            clauses.push("time_unix >= ?");
            args.push(since.into());
        }
        let mut sql_text = String::from(
            "SELECT id, kind, time, target, fs_type, host, command_line, warnings FROM records",
        );
        if !clauses.is_empty() {
            sql_text.push_str(" WHERE ");
            sql_text.push_str(&clauses.join(" AND "));
        }
        sql_text.push_str(" ORDER BY time_unix DESC, id DESC");
        if let Some(limit) = filter.limit {
            sql_text.push_str(&format!(" LIMIT {limit}"));
        }
        let e = |err| read_err(&self.path, err);
        let mut stmt = self.conn.prepare(&sql_text).map_err(e)?;
        let rows = stmt
            .query_map(params_from_iter(args), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, Option<String>>(7)?,
                ))
            })
            .map_err(e)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, kind, time, target, fs_type, host, command_line, warnings) = row.map_err(e)?;
            let flags = crate::flag_codes(&self.flags(id, warnings.as_deref())?);
            out.push(Entry {
                id,
                kind: self.kind(&kind)?,
                time,
                tags: self.tags(id)?,
                target,
                fs_type,
                host,
                command_line,
                metrics: self.metrics(id)?,
                flags,
            });
        }
        Ok(out)
    }

    /// Full records selected by a `WHERE`/`ORDER BY` tail.
    fn full_records(
        &self,
        tail: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Stored>, StoreError> {
        let e = |err| read_err(&self.path, err);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT id, kind, time, target, job_text, command_line, provenance, result,
                        warnings, repeat
                 FROM records {tail}"
            ))
            .map_err(e)?;
        let rows = stmt
            .query_map(args, |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, Option<String>>(8)?,
                    r.get::<_, Option<String>>(9)?,
                ))
            })
            .map_err(e)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, kind, time, target, job_text, command_line, prov, result, warnings, repeat) =
                row.map_err(e)?;
            let repeat = match repeat {
                None => None,
                Some(text) => Some(serde_json::from_str(&text).map_err(|source| {
                    damaged(
                        &self.path,
                        format!("the repeat record of record {id} is not valid: {source}"),
                    )
                })?),
            };
            let provenance = serde_json::from_str(&prov).map_err(|source| {
                damaged(
                    &self.path,
                    format!("the provenance of record {id} is not valid: {source}"),
                )
            })?;
            out.push(Stored {
                id,
                record: Record {
                    kind: self.kind(&kind)?,
                    time,
                    tags: self.tags(id)?,
                    provenance,
                    job_text,
                    command_line,
                    target,
                    result_json: result,
                    metrics: self.metrics(id)?,
                    warnings: self.flags(id, warnings.as_deref())?,
                    repeat,
                },
            });
        }
        Ok(out)
    }

    /// The warnings stored with record `id` (none for records stored
    /// before warnings were kept).
    fn flags(&self, id: i64, text: Option<&str>) -> Result<Vec<crate::Flag>, StoreError> {
        match text {
            None => Ok(Vec::new()),
            Some(t) => serde_json::from_str(t).map_err(|source| {
                damaged(
                    &self.path,
                    format!("the warnings of record {id} are not valid: {source}"),
                )
            }),
        }
    }

    fn kind(&self, text: &str) -> Result<Kind, StoreError> {
        text.parse()
            .map_err(|err: crate::UnknownKind| damaged(&self.path, format!("a record of {err}")))
    }

    fn tags(&self, id: i64) -> Result<Vec<String>, StoreError> {
        let e = |err| read_err(&self.path, err);
        let mut stmt = self
            .conn
            .prepare_cached("SELECT tag FROM tags WHERE record_id = ?1 ORDER BY seq")
            .map_err(e)?;
        let rows = stmt.query_map([id], |r| r.get(0)).map_err(e)?;
        rows.collect::<Result<_, _>>().map_err(e)
    }

    fn metrics(&self, id: i64) -> Result<Vec<Metric>, StoreError> {
        let e = |err| read_err(&self.path, err);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, value, unit, samples, windows FROM metrics
                 WHERE record_id = ?1 ORDER BY seq",
            )
            .map_err(e)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<f64>>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(e)?;
        let mut out = Vec::new();
        for row in rows {
            let (name, value, unit, samples, windows) = row.map_err(e)?;
            let samples = match samples {
                None => None,
                Some(text) => Some(serde_json::from_str(&text).map_err(|source| {
                    damaged(
                        &self.path,
                        format!(
                            "the samples of metric '{name}' of record {id} are not valid: {source}"
                        ),
                    )
                })?),
            };
            let windows = match windows {
                None => None,
                Some(text) => {
                    Some(
                        serde_json::from_str(&text).map_err(|source| damaged(
                            &self.path,
                            format!(
                                "the sample moments of metric '{name}' of record {id} are not valid: {source}"
                            ),
                        ))?,
                    )
                }
            };
            out.push(Metric {
                name,
                value: value.unwrap_or(f64::NAN),
                unit,
                samples,
                windows,
            });
        }
        Ok(out)
    }
}

/// A metric's samples as JSON text; refuses values JSON cannot hold.
fn encode_samples(path: &Path, m: &Metric) -> Result<Option<String>, StoreError> {
    let Some(samples) = &m.samples else {
        return Ok(None);
    };
    if samples.iter().any(|v| !v.is_finite()) {
        return Err(StoreError::Invalid {
            path: path.to_path_buf(),
            msg: format!(
                "metric '{}' has a sample that is not a finite number",
                m.name
            ),
        });
    }
    serde_json::to_string(samples)
        .map(Some)
        .map_err(|source| StoreError::Json {
            path: path.to_path_buf(),
            what: format!("samples of metric '{}'", m.name),
            source,
        })
}

/// A metric's sample moments as JSON text; refuses values JSON cannot
/// hold.
fn encode_windows(path: &Path, m: &Metric) -> Result<Option<String>, StoreError> {
    let Some(w) = &m.windows else {
        return Ok(None);
    };
    if !(w.mean.is_finite() && w.stdev.is_finite()) {
        return Err(StoreError::Invalid {
            path: path.to_path_buf(),
            msg: format!("metric '{}' has sample moments that are not finite", m.name),
        });
    }
    serde_json::to_string(w)
        .map(Some)
        .map_err(|source| StoreError::Json {
            path: path.to_path_buf(),
            what: format!("sample moments of metric '{}'", m.name),
            source,
        })
}

/// `PRAGMA quick_check` of every page; reads only. A database whose pages
/// are damaged is refused, naming the first problems SQLite found.
fn check_pages(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let damaged = |detail: String| StoreError::Damaged {
        path: path.to_path_buf(),
        detail,
    };
    let checked: Result<Vec<String>, rusqlite::Error> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
    match checked {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Ok(()),
        Ok(rows) => Err(damaged(rows.join("; "))),
        Err(rusqlite::Error::SqliteFailure(f, msg))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) =>
        {
            Err(damaged(msg.unwrap_or_else(|| f.to_string())))
        }
        Err(e) => Err(sql(path, e)),
    }
}

fn sql(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// The connection of [`Store::open_for_reading`], which writes nothing:
/// - a database file this process may write is opened as usual with
///   `PRAGMA query_only`, so that SQLite, as the last connection to close,
///   removes the `-wal` and `-shm` files it made (a read-only connection
///   would leave them behind);
/// - one it may not write (a read-only file or filesystem) is opened
///   read-only (`SQLITE_OPEN_READONLY`) when a `-wal` file exists, which
///   may hold changes, and as immutable otherwise, which reads the
///   database file as it is without making a `-wal` or `-shm` file (a WAL
///   database on read-only media has no other way to be read).
fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let probe = |conn: Connection| {
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|_| conn)
    };
    let no_mutex = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    if writable_file(path).is_ok() {
        let rw = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | no_mutex)
            .and_then(|c| c.pragma_update(None, "query_only", true).map(|()| c))
            .and_then(probe);
        match rw {
            Ok(conn) => return Ok(conn),
            // The directory does not take a -wal file: read it read-only.
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.extended_code != rusqlite::ffi::SQLITE_CANTOPEN_SYMLINK
                    && matches!(
                        f.code,
                        rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
                    ) => {}
            Err(e) => return Err(read_err(path, e)),
        }
    }
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | no_mutex;
    if std::path::Path::new(&wal).exists() {
        return Connection::open_with_flags(path, read_only)
            .and_then(probe)
            .map_err(|e| read_err(path, e));
    }
    let uri = file_uri(path) + "?immutable=1";
    Connection::open_with_flags(&uri, read_only | OpenFlags::SQLITE_OPEN_URI)
        .and_then(probe)
        .map_err(|e| read_err(path, e))
}

/// `path` as an SQLite `file:` URI, absolute, every byte but unreserved
/// ones percent-encoded.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Refuses a database file this process may not write, before SQLite
/// opens it: SQLite would fall back to reading only, and leave `-wal` and
/// `-shm` files behind that it cannot clean up. Opening for writing
/// without truncating changes nothing.
fn writable_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    match opened {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(linked(path)),
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS)
            ) =>
        {
            Err(StoreError::NotWritable {
                path: path.to_path_buf(),
                why: e.to_string(),
            })
        }
        Err(source) => Err(StoreError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// An error reading the database back. The file passed the header check
/// (an iolab database), so values of the wrong type, missing tables or
/// columns and corrupt pages are damage.
fn read_err(path: &Path, err: rusqlite::Error) -> StoreError {
    use rusqlite::Error as E;
    if matches!(&err, E::SqliteFailure(f, _)
        if f.extended_code == rusqlite::ffi::SQLITE_CANTOPEN_SYMLINK)
    {
        return linked(path);
    }
    let is_damage = match &err {
        E::InvalidColumnType(..)
        | E::FromSqlConversionFailure(..)
        | E::IntegralValueOutOfRange(..)
        | E::Utf8Error(..)
        | E::InvalidColumnName(..)
        | E::InvalidColumnIndex(..) => true,
        E::SqliteFailure(f, msg) => {
            matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) || msg
                .as_deref()
                .is_some_and(|m| m.starts_with("no such table") || m.starts_with("no such column"))
        }
        _ => false,
    };
    if is_damage {
        damaged(path, err.to_string())
    } else {
        sql(path, err)
    }
}

/// An error writing: a read-only database or a lock held past the busy
/// timeout is [`StoreError::NotWritable`], naming which.
fn write_err(path: &Path, err: rusqlite::Error) -> StoreError {
    let why = match &err {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => Some(
                "another process holds its lock and did not let go within the busy timeout"
                    .to_string(),
            ),
            rusqlite::ErrorCode::ReadOnly => Some(format!("it is read-only: {err}")),
            _ => None,
        },
        _ => None,
    };
    match why {
        Some(why) => StoreError::NotWritable {
            path: path.to_path_buf(),
            why,
        },
        None => read_err(path, err),
    }
}

fn damaged(path: &Path, detail: String) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        detail,
    }
}

/// Refuses a symbolic link at the name `path` (SQLite would refuse it
/// too, as it is told to follow none, after reading the file it leads to).
fn no_link_at(path: &Path) -> Result<(), StoreError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(linked(path)),
        _ => Ok(()),
    }
}

/// Refuses a database whose file or `-wal`, `-shm`, `-journal` file
/// exists and is neither a regular file nor a symbolic link (links are
/// [`no_link_at`]'s and SQLite's `O_NOFOLLOW`'s): a FIFO there would
/// make an open block forever, a device would take the writes. Looked at
/// with lstat, which opens nothing; [`schema::inspect`] opens the
/// database itself without blocking and checks again.
fn regular_files_at(path: &Path) -> Result<(), StoreError> {
    let names = ["", "-wal", "-shm", "-journal"].map(|suffix| {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    });
    for name in names {
        match std::fs::symlink_metadata(&name) {
            Ok(m) if !m.is_file() && !m.file_type().is_symlink() => {
                return Err(StoreError::NotRegular {
                    what: file_kind(&m).into(),
                    path: name,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// What kind of file `meta` describes, for a message.
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        "regular file"
    }
}

/// The refusal of a name with a symbolic link in it.
fn linked(path: &Path) -> StoreError {
    StoreError::Linked {
        path: path.to_path_buf(),
    }
}

/// Creates the directory `dir` and its missing parents, as
/// `create_dir_all` does, but through no symbolic link at a name it meets
/// missing or makes: the database's name has no link in it (its opener
/// followed them, as far as its rules allow, beforehand), so a link there
/// was planted since, and nothing is made through it.
fn make_dirs(dir: &Path) -> std::io::Result<()> {
    use std::io::ErrorKind;
    let is_dir = |d: &Path| {
        std::fs::symlink_metadata(d).map(|m| {
            if m.file_type().is_symlink() {
                Err(std::io::Error::from_raw_os_error(libc::ELOOP))
            } else if m.is_dir() {
                Ok(())
            } else {
                Err(std::io::Error::from_raw_os_error(libc::ENOTDIR))
            }
        })
    };
    match is_dir(dir) {
        Ok(done) => return done,
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        make_dirs(parent)?;
    }
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => is_dir(dir)?,
        r => r,
    }
}
