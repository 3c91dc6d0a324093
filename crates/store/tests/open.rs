//! Opening: new paths and empty files get the schema; files that are not
//! iolab databases, or come from a newer iolab, are refused and left as
//! they were.

mod common;

use std::path::Path;

use iolab_store::{schema::MIGRATIONS, Kind, Store, StoreError, APPLICATION_ID, SCHEMA_VERSION};
use rusqlite::Connection;

fn pragma_i64(path: &Path, name: &str) -> i64 {
    let c = Connection::open(path).unwrap();
    c.pragma_query_value(None, name, |r| r.get(0)).unwrap()
}

#[test]
fn a_fresh_path_gets_the_schema_and_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/results.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert!(store.is_empty().unwrap());
    drop(store);
    assert_eq!(
        pragma_i64(&path, "application_id"),
        i64::from(APPLICATION_ID)
    );
    assert_eq!(pragma_i64(&path, "user_version"), SCHEMA_VERSION);
    let c = Connection::open(&path).unwrap();
    let mode: String = c
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_empty_file_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    store.insert(&common::record(Kind::Sweep, 1)).unwrap();
    drop(store);
    assert_eq!(pragma_i64(&path, "user_version"), SCHEMA_VERSION);
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
}

/// Asserts that opening `path` is refused naming it, and that the file's
/// bytes did not change.
fn assert_refused_untouched(path: &Path, why: &str) {
    let before = std::fs::read(path).unwrap();
    let err = Store::open(path).unwrap_err();
    assert!(matches!(err, StoreError::NotIolab { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains(why), "{msg}");
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "{} changed",
        path.display()
    );
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let siblings: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&name) && n != &name)
        .collect();
    assert!(siblings.is_empty(), "journal files appeared: {siblings:?}");
}

#[test]
fn random_bytes_are_refused_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.db");
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let bytes: Vec<u8> = (0..10_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    assert_refused_untouched(&path, "not an SQLite database");
    // A short text file too.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"my notes\n").unwrap();
    assert_refused_untouched(&notes, "not an SQLite database");
}

#[test]
fn another_applications_sqlite_database_is_refused_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("other.db");
    {
        let c = Connection::open(&plain).unwrap();
        c.execute_batch(
            "CREATE TABLE contacts (name TEXT, phone TEXT);
             INSERT INTO contacts VALUES ('Ada', '555-0100');",
        )
        .unwrap();
    }
    assert_refused_untouched(&plain, "without iolab's application id");
    let tagged = dir.path().join("tagged.db");
    {
        let c = Connection::open(&tagged).unwrap();
        c.execute_batch("PRAGMA application_id = 1234; CREATE TABLE t (x);")
            .unwrap();
    }
    assert_refused_untouched(&tagged, "another application");
    // Still readable by its owner.
    let c = Connection::open(&plain).unwrap();
    let phone: String = c
        .query_row("SELECT phone FROM contacts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(phone, "555-0100");
}

#[test]
fn a_newer_schema_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    Store::open(&path)
        .unwrap()
        .insert(&common::record(Kind::Run, 1))
        .unwrap();
    let future = SCHEMA_VERSION + 41;
    {
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", future).unwrap();
    }
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::Newer {
            found, supported, ..
        } => assert_eq!((*found, *supported), (future, SCHEMA_VERSION)),
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains(&format!("version {future}")), "{msg}");
    assert!(msg.contains(&format!("version {SCHEMA_VERSION}")), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    // Nothing was migrated down or dropped.
    assert_eq!(pragma_i64(&path, "user_version"), future);
    let c = Connection::open(&path).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn a_version_1_database_is_migrated_keeping_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        // The database as the first schema left it, with one record.
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute_batch(
            "INSERT INTO records (kind, time, time_unix, target, fs_type, host, job_text,
                                  command_line, provenance, result)
             VALUES ('meta', '2026-01-02T03:04:05Z', 1767323045, '/t', 'xfs', 'h', '',
                     'iolab meta /t', '{\"fs_type\":\"xfs\"}', '{}');
             INSERT INTO metrics (record_id, seq, name, value, unit, samples)
             VALUES (1, 0, 'create/s', 5000.0, 'ops/s', '[4900.0,5100.0]');",
        )
        .unwrap();
    }
    const { assert!(SCHEMA_VERSION >= 2) };
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store.get(1).unwrap().unwrap();
    assert_eq!(old.record.kind, Kind::Meta);
    assert_eq!(old.record.provenance.fs_type, "xfs");
    assert_eq!(old.record.metrics[0].samples, Some(vec![4900.0, 5100.0]));
    assert_eq!(old.record.metrics[0].windows, None);
    let rec = common::record(Kind::Run, 2);
    let id = store.insert(&rec).unwrap();
    assert!(common::same(&store.get(id).unwrap().unwrap().record, &rec));
}

/// A database of a few records with one of its pages overwritten, the
/// header (and so the application id) intact.
fn damaged_database(path: &Path) {
    {
        let mut store = Store::open(path).unwrap();
        for seed in 0..20 {
            store.insert(&common::record(Kind::Run, seed)).unwrap();
        }
    }
    let mut bytes = std::fs::read(path).unwrap();
    let page = 4096;
    assert!(bytes.len() >= 4 * page, "{} bytes", bytes.len());
    for b in &mut bytes[2 * page..3 * page] {
        *b = 0xA5;
    }
    std::fs::write(path, &bytes).unwrap();
}

#[test]
fn a_damaged_database_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.db");
    damaged_database(&path);
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(
        msg.contains("damaged") && msg.contains("left untouched"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    let others: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n != "damaged.db")
        .collect();
    assert!(others.is_empty(), "{others:?}");
    // A sound database passes the check.
    let sound = dir.path().join("sound.db");
    Store::open(&sound)
        .unwrap()
        .insert(&common::record(Kind::Meta, 1))
        .unwrap();
    assert_eq!(Store::open(&sound).unwrap().len().unwrap(), 1);
}

#[test]
fn provenance_stored_before_the_hypervisor_was_kept_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    {
        // A record as the schema-3 iolab wrote it: its provenance without
        // the virtual machine and the mount point.
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        for m in &MIGRATIONS[..3] {
            c.execute_batch(m).unwrap();
        }
        c.pragma_update(None, "user_version", 3).unwrap();
        c.execute_batch(
            "INSERT INTO records (kind, time, time_unix, target, fs_type, host, job_text,
                                  command_line, provenance, result, warnings, repeat)
             VALUES ('quick', '2026-01-02T03:04:05Z', 1767323045, '/t', 'ext4', 'h', '',
                     'iolab quick /t',
                     '{\"time\":\"2026-01-02T03:04:05Z\",\"host\":\"h\",\"kernel\":\"6.1\",
                       \"cpu_model\":\"c\",\"cpu_count\":2,\"memory_bytes\":1024,
                       \"iolab_version\":\"0.1.0\",\"target\":\"/t\",\"fs_type\":\"ext4\",
                       \"mount_options\":\"rw\",\"mount_source\":\"/dev/vda\",
                       \"block_device\":\"vda\",\"device_model\":\"\",\"rotational\":false,
                       \"scheduler\":\"none\",\"device_size_bytes\":4096}',
                     '{\"dir\":\"/t\",\"tests\":[]}', NULL, NULL);",
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let old = store.get(1).unwrap().unwrap().record;
    assert_eq!(old.provenance.kernel, "6.1");
    assert_eq!(old.provenance.hypervisor, None);
    assert_eq!(old.provenance.mount_point, "");
    // A new one keeps the virtual machine it was measured in.
    let mut rec = common::record(Kind::Quick, 2);
    rec.provenance.hypervisor = Some(iolab_stats::Virt {
        name: "QEMU".into(),
        emulated: true,
    });
    rec.provenance.mount_point = "/mnt".into();
    let id = store.insert(&rec).unwrap();
    let back = store.get(id).unwrap().unwrap().record;
    assert_eq!(back.provenance, rec.provenance);
}

/// Makes a FIFO (named pipe) at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
}

/// `f` on a thread, its result within 20 s: a regression that blocks
/// fails the test instead of hanging it.
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("blocked: the open waited on a FIFO")
}

#[test]
fn a_fifo_at_the_database_or_beside_it_is_refused_without_blocking() {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let fifo = dir.path().join(format!("r.db{suffix}"));
        mkfifo(&fifo);
        for reading in [false, true] {
            let p = db.clone();
            let err = within(move || {
                if reading {
                    Store::open_for_reading(&p).map(|_| ())
                } else {
                    Store::open(&p).map(|_| ())
                }
            })
            .unwrap_err();
            assert!(matches!(err, StoreError::NotRegular { .. }), "{err:?}");
            let msg = err.to_string();
            assert!(
                msg.contains(&format!(
                    "{}: a FIFO (named pipe), not a regular file",
                    fifo.display()
                )),
                "{msg}"
            );
            // Nothing was made beside it, and the FIFO is still there.
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, [fifo.file_name().unwrap()], "{suffix}");
        }
    }
}
