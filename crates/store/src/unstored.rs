//! A measured result the database would not take (locked, read-only,
//! full): written to a file of its own beside the database, so that it is
//! not lost, and read back by `iolab import`. The file is JSON: a marker,
//! the database it was meant for, why it was not stored, and the record.
//! It is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600) under
//! a name no other process picks (time and process id).

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{time, Record, StoreError};

/// The value of the file's `iolab` key.
const MARKER: &str = "unstored result";
/// The layout of the file.
const VERSION: u32 = 1;
/// The largest file `read` accepts.
const MAX_BYTES: u64 = 256 << 20;

#[derive(Serialize, Deserialize)]
struct UnstoredFile {
    iolab: String,
    version: u32,
    /// The database the result was meant for.
    database: PathBuf,
    /// Why it was not stored.
    why: String,
    record: Record,
}

/// Writes `record`, which could not be stored in the database `db`
/// because of `why`, to a new file beside the database; if that directory
/// does not take it, in the current directory, then in the temporary
/// directory. Returns the file's path.
pub fn write_unstored(db: &Path, why: &str, record: &Record) -> Result<PathBuf, StoreError> {
    let doc = UnstoredFile {
        iolab: MARKER.into(),
        version: VERSION,
        database: db.to_path_buf(),
        why: why.into(),
        record: record.clone(),
    };
    let text = serde_json::to_string_pretty(&doc).map_err(|source| StoreError::Json {
        path: db.to_path_buf(),
        what: "the unstored result".into(),
        source,
    })? + "\n";
    let base = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results.db".into());
    let stamp: String = time::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let name = format!("{base}.unstored-{stamp}-{}", std::process::id());
    let beside = match db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    write_first(
        &[beside, PathBuf::from("."), std::env::temp_dir()],
        &name,
        text.as_bytes(),
    )
}

/// [`write_new`] in the first of `dirs` that takes the file.
fn write_first(dirs: &[PathBuf], name: &str, bytes: &[u8]) -> Result<PathBuf, StoreError> {
    let mut last = None;
    for dir in dirs {
        match write_new(dir, name, bytes) {
            Ok(path) => return Ok(path),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| StoreError::Io {
        path: PathBuf::from(name),
        source: std::io::Error::from(ErrorKind::NotFound),
    }))
}

/// Creates `dir/name.json` (or `name-N.json` when taken) exclusively and
/// writes `bytes`; a file that could not be written whole is removed.
fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, StoreError> {
    let mut n = 1;
    loop {
        let path = match n {
            1 => dir.join(format!("{name}.json")),
            _ => dir.join(format!("{name}-{n}.json")),
        };
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 100 => {
                n += 1;
                continue;
            }
            Err(e) => return Err(io(e)),
        };
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        return match written {
            Ok(()) => Ok(path),
            Err(e) => {
                drop(file);
                let _ = std::fs::remove_file(&path);
                Err(io(e))
            }
        };
    }
}

/// Reads a file written by [`write_unstored`]: the record it holds. A file
/// that is not one, or whose record the store could not file, is refused
/// naming the problem.
pub fn read_unstored(path: &Path) -> Result<Record, StoreError> {
    let invalid = |msg: String| StoreError::Invalid {
        path: path.to_path_buf(),
        msg,
    };
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(invalid("not a regular file".into()));
    }
    if meta.len() > MAX_BYTES {
        return Err(invalid(format!(
            "{} bytes, more than an unstored result holds ({MAX_BYTES})",
            meta.len()
        )));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::BufReader::new(file), &mut text).map_err(|e| {
        match e.kind() {
            ErrorKind::InvalidData => {
                invalid("not an unstored iolab result (not a text file)".into())
            }
            _ => io(e),
        }
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| invalid(format!("not an unstored iolab result (not JSON: {e})")))?;
    if value.get("iolab").and_then(|v| v.as_str()) != Some(MARKER) {
        return Err(invalid(
            "not an unstored iolab result (no \"iolab\": \"unstored result\")".into(),
        ));
    }
    let doc: UnstoredFile = serde_json::from_value(value)
        .map_err(|e| invalid(format!("an unstored iolab result that is incomplete: {e}")))?;
    if doc.version != VERSION {
        return Err(invalid(format!(
            "an unstored result of layout version {}, this iolab reads version {VERSION}",
            doc.version
        )));
    }
    if time::parse_rfc3339(&doc.record.time).is_none() {
        return Err(invalid(format!(
            "the record's time '{}' is not RFC 3339",
            doc.record.time
        )));
    }
    serde_json::from_str::<serde_json::Value>(&doc.record.result_json)
        .map_err(|e| invalid(format!("the record's result is not JSON: {e}")))?;
    Ok(doc.record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, Metric};

    fn record() -> Record {
        Record {
            result_json: "{\"jobs\":[]}".into(),
            metrics: vec![
                Metric::new("read MB/s", 12.5, "MB/s").with_samples(vec![12.0, 13.0]),
                Metric::new("p99", f64::NAN, "us"),
            ],
            tags: vec!["t".into()],
            ..Record::new(Kind::Run)
        }
    }

    #[test]
    fn a_result_goes_beside_the_database_and_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        let r = record();
        let path = write_unstored(&db, "database is locked", &r).unwrap();
        assert_eq!(path.parent(), Some(dir.path()));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("results.db.unstored-") && name.ends_with(".json"),
            "{name}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        let back = read_unstored(&path).unwrap();
        assert_eq!(back.result_json, r.result_json);
        assert_eq!(back.metrics[0], r.metrics[0]);
        assert!(back.metrics[1].value.is_nan());
        // A second one in the same second gets a name of its own.
        let again = write_unstored(&db, "locked", &r).unwrap();
        assert_ne!(again, path);
    }

    #[test]
    fn a_planted_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("x.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_new(dir.path(), "x", b"data");
        // The taken name is skipped, never written through.
        assert_eq!(e.unwrap(), dir.path().join("x-2.json"));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn a_directory_that_does_not_take_the_file_passes_it_on() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let next = dir.path().join("next");
        std::fs::create_dir(&next).unwrap();
        let path = write_first(&[gone.clone(), next.clone()], "r", b"{}").unwrap();
        assert_eq!(path, next.join("r.json"));
        assert!(!gone.exists());
        let e = write_first(std::slice::from_ref(&gone), "r", b"{}").unwrap_err();
        assert!(e.to_string().contains("gone"), "{e}");
    }

    #[test]
    fn files_that_are_not_unstored_results_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        for (text, why) in [
            ("not json", "not JSON"),
            ("{\"a\": 1}", "no \"iolab\""),
            ("{\"iolab\": \"unstored result\"}", "incomplete"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = read_unstored(&p).unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
        std::fs::write(&p, b"\xff\xfe").unwrap();
        assert!(read_unstored(&p).is_err());
        assert!(read_unstored(dir.path()).is_err());
        let mut doc = serde_json::to_value(UnstoredFile {
            iolab: MARKER.into(),
            version: VERSION,
            database: "r.db".into(),
            why: String::new(),
            record: record(),
        })
        .unwrap();
        doc["record"]["time"] = "yesterday".into();
        std::fs::write(&p, doc.to_string()).unwrap();
        let e = read_unstored(&p).unwrap_err().to_string();
        assert!(e.contains("not RFC 3339"), "{e}");
    }
}
