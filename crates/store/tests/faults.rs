//! Faults of the database: values of the wrong type read back as damage,
//! a lock another process holds refuses writes after the busy timeout, a
//! read-only database is read without writing anything and refused for
//! adding results.

mod common;

use iolab_testkit::{mount::Mounted, need};
use std::path::Path;
use std::time::Duration;

use iolab_store::{Filter, Kind, Store, StoreError};
use rusqlite::Connection;

fn filled(path: &Path) -> i64 {
    let mut store = Store::open(path).unwrap();
    store.insert(&common::record(Kind::Run, 1)).unwrap()
}

fn assert_damaged<T: std::fmt::Debug>(r: Result<T, StoreError>, path: &Path) {
    let err = r.unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("the results database is damaged"), "{msg}");
}

#[test]
fn values_of_the_wrong_type_read_back_as_damage() {
    let dir = tempfile::tempdir().unwrap();
    for (i, update) in [
        "UPDATE records SET time = x'00ff'",
        "UPDATE records SET target = CAST(x'ff' AS TEXT)",
        "UPDATE metrics SET value = 'fast'",
        "UPDATE records SET kind = 'bench'",
        "UPDATE records SET provenance = 'not json'",
        "UPDATE metrics SET samples = '[1,'",
        "DROP TABLE tags",
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("d{i}.db"));
        let id = filled(&path);
        Connection::open(&path)
            .unwrap()
            .execute_batch(update)
            .unwrap();
        let store = Store::open_for_reading(&path).unwrap().unwrap();
        assert_damaged(store.get(id), &path);
        assert_damaged(store.all(), &path);
        if !update.contains("provenance") {
            assert_damaged(store.history(&Filter::default()), &path);
        }
    }
}

#[test]
fn a_lock_held_by_another_connection_refuses_writes_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    filled(&path);
    let mut store = Store::open(&path).unwrap();
    store.set_busy_timeout(Duration::from_millis(200)).unwrap();
    let other = Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = store.check_writable().unwrap_err();
    assert!(matches!(err, StoreError::NotWritable { .. }), "{err:?}");
    assert!(err.to_string().contains("holds its lock"), "{err}");
    let err = store
        .insert(&common::record(Kind::Run, 2))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be written"), "{err}");
    other.execute_batch("ROLLBACK").unwrap();
    // Once it lets go, the same store writes.
    store.insert(&common::record(Kind::Run, 2)).unwrap();
    assert_eq!(store.len().unwrap(), 2);
}

#[test]
fn missing_and_empty_files_read_as_no_database_and_stay_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    assert!(Store::open_for_reading(&missing).unwrap().is_none());
    assert!(!missing.exists());
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert!(Store::open_for_reading(&empty).unwrap().is_none());
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

#[test]
fn a_database_on_read_only_media_is_read_and_refused_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let (src, ro) = (dir.path().join("src"), dir.path().join("ro"));
    std::fs::create_dir(&src).unwrap();
    std::fs::create_dir(&ro).unwrap();
    let id = filled(&src.join("r.db"));
    // Closed cleanly: no -wal or -shm file is left.
    assert_eq!(
        std::fs::read_dir(&src).unwrap().count(),
        1,
        "only the database"
    );
    let _bind = need!(Mounted::ro_bind(&src, &ro));
    let db = ro.join("r.db");
    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert_eq!(store.len().unwrap(), 1);
    assert_eq!(store.get(id).unwrap().unwrap().id, id);
    drop(store);
    let err = Store::open(&db).unwrap_err().to_string();
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert_eq!(std::fs::read_dir(&src).unwrap().count(), 1, "nothing made");

    // A writer elsewhere keeps the database open, with a result in its
    // -wal file: the read-only reader sees it too.
    let mut writer = Store::open(src.join("r.db")).unwrap();
    writer.insert(&common::record(Kind::Run, 2)).unwrap();
    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert_eq!(store.len().unwrap(), 2);
}

#[test]
fn sqlite_follows_no_link_in_the_name_nor_at_the_journal_wal_and_shm_names() {
    // The name: SQLite is opened with SQLITE_OPEN_NOFOLLOW (iolab follows
    // the links its rule allows before and passes a name without any).
    let dir = tempfile::tempdir().unwrap();
    let d = &std::fs::canonicalize(dir.path()).unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    std::fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink("real", d.join("via")).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("at.db")).unwrap();
    std::os::unix::fs::symlink(d.join("new.db"), d.join("dangling.db")).unwrap();
    filled(&d.join("real/kept.db"));
    for name in [
        "at.db",
        "dangling.db",
        "via/r.db",
        "via/sub/r.db",
        "via/kept.db",
    ] {
        let err = Store::open(d.join(name)).unwrap_err();
        assert!(matches!(err, StoreError::Linked { .. }), "{name}: {err:?}");
        // Reading: a database there is refused; none there is none.
        match Store::open_for_reading(d.join(name)) {
            Err(StoreError::Linked { .. }) => {}
            Ok(None) if name.ends_with("/r.db") => {}
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert!(!d.join("new.db").exists() && !d.join("real/sub").exists());
    let mut left: Vec<_> = std::fs::read_dir(d.join("real"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["kept.db"]);
    // The files beside it: SQLite's unixOpen opens the -journal and -wal
    // files O_NOFOLLOW, and the -shm file too. A link planted at -shm
    // makes the open fail; one at -journal or -wal beside a new (empty)
    // database is removed by SQLite as a leftover, and its own file made
    // in its place. None is followed.
    for side in ["-wal", "-shm", "-journal"] {
        let sub = d.join(format!("s{side}"));
        std::fs::create_dir(&sub).unwrap();
        let link = sub.join(format!("r.db{side}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let kept =
            Store::open(sub.join("r.db")).and_then(|mut s| s.insert(&common::record(Kind::Run, 1)));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep", "{side}");
        if side == "-shm" {
            assert!(kept.is_err(), "{side}: {kept:?}");
            assert!(link.is_symlink(), "{side}");
        } else {
            assert!(kept.is_ok(), "{side}: {kept:?}");
            assert!(!link.is_symlink(), "{side}");
        }
    }
}
