//! Faults around the results database: an `--output` or job data file
//! that is the database (or its -wal/-shm) is refused before anything
//! runs; a database that cannot be written is refused before measuring;
//! a result the database would not take at the end (a lock held by
//! another process) is written beside it and `iolab import` brings it
//! back; a damaged database read back gives exit 2 and the store's
//! message; a database on read-only media is read; a comparison whose
//! every target is skipped exits 2 and stores nothing. Every case checks
//! the database's rows and bytes and the directory's files afterwards.

mod common;

use iolab_testkit::{mount::Mounted, need, require, skip_case};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Output};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use iolab_store::{Kind, Metric, Record, Store};

/// The iolab binary with `IOLAB_DB` set to `db`.
fn iolab(db: &Path) -> Command {
    let mut c = Command::cargo_bin("iolab").unwrap();
    c.env("IOLAB_DB", db);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A database in `dir` holding one run result.
fn db_with_one(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    let mut store = Store::open(&db).unwrap();
    let record = Record {
        result_json: "{\"jobs\":[]}".into(),
        metrics: vec![Metric::new("a write MB/s", 100.0, "MB/s")],
        ..Record::new(Kind::Run)
    };
    store.insert(&record).unwrap();
    db
}

/// The number of results in `db` (0 when there is no database).
fn rows(db: &Path) -> u64 {
    Store::open_for_reading(db)
        .unwrap()
        .map_or(0, |s| s.len().unwrap())
}

/// What a test compares before and after: the names in the directory and
/// the database's bytes.
fn snapshot(dir: &Path, db: &Path) -> (Vec<String>, Vec<u8>) {
    (common::entries(dir), std::fs::read(db).unwrap())
}

fn assert_refused(out: &Output, what: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains("is the results database file"),
        "{what}: {err}"
    );
}

const JOB: [&str; 3] = ["--name=a", "--rw=write", "--size=64k"];

#[test]
fn an_output_file_that_is_the_database_is_refused_by_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(&db, d.join("link.txt")).unwrap();
    std::fs::hard_link(&db, d.join("hard.txt")).unwrap();
    let before = snapshot(d, &db);
    let data = d.join("data").display().to_string();
    let db_s = db.display().to_string();
    let names = [
        db_s.clone(),
        d.join("sub/../results.db").display().to_string(),
        d.join("link.txt").display().to_string(),
        d.join("hard.txt").display().to_string(),
        format!("{db_s}-wal"),
        format!("{db_s}-shm"),
    ];
    let target = format!("a={}", d.join("sub").display());
    for out_file in &names {
        let output = format!("--output={out_file}");
        let commands: Vec<Vec<&str>> = vec![
            [&["run", "--filename", &data][..], &JOB[..], &[&output]].concat(),
            [&["run", "--parse-only"][..], &JOB[..], &[&output]].concat(),
            [
                &["sweep", "--filename", &data, "--bs", "4k,8k"][..],
                &JOB[..],
                &[&output],
            ]
            .concat(),
            vec!["quick", d.to_str().unwrap(), &output],
            vec!["meta", d.to_str().unwrap(), "--files", "10", &output],
            vec!["compare", "--target", &target, "--suite", "basic", &output],
            vec!["history", &output],
            vec!["show", "1", &output],
            vec!["export", &output],
            vec!["diff", "1", "1", &output],
        ];
        for args in commands {
            // The database named by IOLAB_DB and by --db.
            for db_flag in [None, Some(format!("--db={db_s}"))] {
                let mut c = iolab(&db);
                c.args(&args).args(db_flag.iter());
                if db_flag.is_some() {
                    // Another default, so that only --db names it.
                    c.env("IOLAB_DB", d.join("sub/other.db"));
                }
                let out = c.current_dir(d).output().unwrap();
                assert_refused(&out, &format!("{args:?} {db_flag:?}"));
                assert_eq!(snapshot(d, &db), before, "{args:?}");
            }
        }
    }
    assert_eq!(rows(&db), 1);
    // The check does not refuse the files beside it.
    let out = iolab(&db)
        .current_dir(d)
        .args(["history", "--output", "results.db.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::remove_file(d.join("results.db.txt")).unwrap();
}

#[test]
fn a_job_data_file_that_is_the_database_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    std::os::unix::fs::symlink(&db, d.join("link")).unwrap();
    std::fs::hard_link(&db, d.join("hard")).unwrap();
    let before = snapshot(d, &db);
    let dir = format!("--directory={}", d.display());
    let cases: Vec<Vec<String>> = vec![
        vec![format!("--filename={}", db.display())],
        vec!["--filename=link".into()],
        vec!["--filename=hard".into()],
        vec![dir.clone(), "--filename=results.db-wal".into()],
        vec![dir.clone(), "--filename=results.db-shm".into()],
        vec![dir, "--filename=ok:results.db".into()],
    ];
    for case in &cases {
        for cmd in [&["run"][..], &["sweep", "--bs", "4k,8k"][..]] {
            let out = iolab(&db)
                .current_dir(d)
                .args(cmd)
                .args(JOB)
                .args(case)
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {case:?}: {err}");
            assert!(
                err.contains("the job's data file") && err.contains("is the results database"),
                "{err}"
            );
            assert_eq!(snapshot(d, &db), before, "{cmd:?} {case:?}");
        }
    }
    // Nor a log file, whose name fio makes from the prefix.
    let log_db = d.join("x_bw.1.log");
    std::fs::copy(&db, &log_db).unwrap();
    let before_log = snapshot(d, &log_db);
    let out = iolab(&log_db)
        .current_dir(d)
        .args(["run", "--filename=data", "--write_bw_log=x"])
        .args(JOB)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the job's log file `x_bw.1.log`"), "{err}");
    assert_eq!(snapshot(d, &log_db), before_log);
    std::fs::remove_file(&log_db).unwrap();
    // --no-store does not make the database a data file either.
    let out = iolab(&db)
        .current_dir(d)
        .args(["run", "--no-store", "--filename=link"])
        .args(JOB)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(snapshot(d, &db), before);
    assert_eq!(rows(&db), 1);
}

/// `iolab ARGS` as the unprivileged user 65534 with `IOLAB_DB` = `db`.
fn as_nobody(db: &Path, dir: &Path, args: &[&str]) -> Output {
    Proc::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg("env")
        .arg(format!("IOLAB_DB={}", db.display()))
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn a_read_only_database_file_is_refused_before_the_run_and_still_read() {
    require!(root);
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    for p in [d, db.as_path()] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(d, &db);
    let data = d.join("data").display().to_string();
    let run = [&["run", "--filename", &data][..], &JOB[..]].concat();
    let out = as_nobody(&db, d, &run);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the results database cannot be written") && err.contains("--no-store"),
        "{err}"
    );
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert_eq!(snapshot(d, &db), before, "nothing ran, no -wal or -shm");
    // Reading it writes nothing either.
    let out = as_nobody(&db, d, &["history", "--output-format=json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(snapshot(d, &db), before);
    // --no-store runs.
    let out = as_nobody(&db, d, &[&run[..], &["--no-store"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rows(&db), 1);
}

#[test]
fn a_database_on_read_only_media_is_read_by_every_reader_and_refused_for_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, ro, work) = (
        tmp.path().join("src"),
        tmp.path().join("ro"),
        tmp.path().join("work"),
    );
    for p in [&src, &ro, &work] {
        std::fs::create_dir(p).unwrap();
    }
    db_with_one(&src);
    let _bind = need!(Mounted::ro_bind(&src, &ro));
    let db = ro.join("results.db");
    let before = snapshot(&ro, &db);
    for args in [
        &["history"][..],
        &["show", "1", "--output-format=record"],
        &["export", "--format=json"],
        &["diff", "1", "1"],
    ] {
        let out = iolab(&db).args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    let data = work.join("data").display().to_string();
    let out = iolab(&db)
        .args(["run", "--filename", &data])
        .args(JOB)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(common::entries(&work).is_empty(), "nothing ran");
    assert_eq!(snapshot(&ro, &db), before);
    assert_eq!(rows(&db), 1);
}

/// `NAME.unstored-*.json` files in `dir`.
fn unstored_files(dir: &Path) -> Vec<PathBuf> {
    common::entries(dir)
        .into_iter()
        .filter(|n| n.starts_with("results.db.unstored-") && n.ends_with(".json"))
        .map(|n| dir.join(n))
        .collect()
}

#[test]
fn a_result_the_locked_database_does_not_take_is_kept_beside_it_and_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    let data = d.join("data");
    // A run of a few seconds, so that the lock is taken while it measures,
    // after its check of the database.
    let child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", &db)
        .current_dir(d)
        .args(["run", "--output-format=json", "--time_based", "--runtime=3"])
        .arg(format!("--filename={}", data.display()))
        .args(JOB)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let begin = Instant::now();
    while !data.exists() {
        assert!(
            begin.elapsed() < Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = child.wait_with_output().unwrap();
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The report was printed, the result is in a file beside the database.
    assert!(common::json_of(&out.stdout)["jobs"][0]["write"]["io_bytes"].as_u64() > Some(0));
    assert!(err.contains("could not be stored"), "{err}");
    assert!(err.contains("holds its lock"), "{err}");
    let files = unstored_files(d);
    assert_eq!(files.len(), 1, "{:?}", common::entries(d));
    let file = &files[0];
    assert!(
        err.contains(&format!("iolab import {}", file.display())),
        "{err}"
    );
    let mode = std::fs::metadata(file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(doc["iolab"], "unstored result");
    assert_eq!(doc["record"]["kind"], "run");
    assert_eq!(rows(&db), 1);

    // Imported as the message says, it is the second result; the file
    // stays. Importing it again adds nothing.
    let out = iolab(&db).args(["import"]).arg(file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("stored as result 2"));
    assert_eq!(rows(&db), 2);
    assert!(file.exists());
    let out = iolab(&db).args(["import"]).arg(file).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already stored as result 2"));
    assert_eq!(rows(&db), 2);
    let out = iolab(&db)
        .args(["show", "2", "--output-format=json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(common::json_of(&out.stdout)["jobs"][0]["write"]["io_bytes"].as_u64() > Some(0));
}

#[test]
fn a_lock_held_before_the_run_refuses_it_before_anything_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    let lock = rusqlite::Connection::open(&db).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let before = common::entries(d);
    let out = iolab(&db)
        .current_dir(d)
        .args(["run", "--filename=data"])
        .args(JOB)
        .output()
        .unwrap();
    let after = common::entries(d);
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot be written") && err.contains("holds its lock"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(after, before, "no data file, no unstored file");
    assert_eq!(rows(&db), 1);
}

#[test]
fn import_refuses_files_that_are_not_unstored_results_and_removes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    std::fs::write(d.join("notes.json"), b"{\"a\": 1}").unwrap();
    std::fs::write(d.join("garbage"), b"\x00\xffnot json").unwrap();
    let before = snapshot(d, &db);
    for (file, why) in [
        ("notes.json", "not an unstored iolab result"),
        ("garbage", "not"),
        ("results.db", "not an unstored iolab result"),
        ("missing.json", "No such file"),
        (".", "not a regular file"),
    ] {
        let out = iolab(&db)
            .current_dir(d)
            .args(["import", file])
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(why), "{file}: {err}");
        assert_eq!(snapshot(d, &db), before, "{file}");
    }
    assert_eq!(rows(&db), 1);
}

#[test]
fn a_damaged_database_read_back_exits_2_with_the_stores_message() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (update, commands) in [
        (
            "UPDATE metrics SET value = 'fast'",
            &[
                &["history"][..],
                &["show", "1"],
                &["export"],
                &["diff", "1", "1"],
            ][..],
        ),
        (
            "UPDATE records SET time = x'00ff'",
            &[
                &["history"][..],
                &["show", "1"],
                &["export"],
                &["diff", "1", "1"],
            ],
        ),
        (
            "UPDATE records SET target = CAST(x'ff' AS TEXT)",
            &[
                &["history"][..],
                &["show", "1"],
                &["export"],
                &["diff", "1", "1"],
            ],
        ),
        (
            "UPDATE records SET result = '{not json'",
            &[
                &["show", "1"][..],
                &["show", "1", "--output-format=record"],
                &["export"],
            ],
        ),
    ] {
        let db = db_with_one(d);
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(update)
            .unwrap();
        let before = snapshot(d, &db);
        for args in commands {
            let out = iolab(&db).args(*args).output().unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{update}: {args:?}: {err}");
            assert!(
                err.contains("the results database is damaged")
                    && err.contains(&format!("sqlite3 {} .recover", db.display())),
                "{update}: {args:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "{args:?}");
            assert_eq!(snapshot(d, &db), before, "{args:?}");
        }
        std::fs::remove_file(&db).unwrap();
    }
}

/// Whether the kernel lists `fs` in /proc/filesystems.
fn kernel_has(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs))
}

#[test]
fn a_comparison_whose_every_target_is_skipped_exits_2_and_stores_nothing() {
    require!(root);
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    let tmpdir = d.join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let before = snapshot(d, &db);
    let mut cases = vec![(vec!["--fs", "EXT4"], "did you mean `ext4`?")];
    if kernel_has("f2fs") {
        skip_case!("the f2fs case: this kernel has f2fs");
    } else {
        cases.push((vec!["--fs", "f2fs"], "the kernel does not support f2fs"));
        cases.push((vec!["--fs", "f2fs,EXT4"], "did you mean `ext4`?"));
    }
    for (args, says) in cases {
        let out = iolab(&db)
            .env("TMPDIR", &tmpdir)
            .arg("compare")
            .args(&args)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("every target would be skipped"), "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(snapshot(d, &db), before, "{args:?}");
        assert!(common::entries(&tmpdir).is_empty(), "{args:?}");
    }
    assert_eq!(rows(&db), 1);
}

#[test]
fn a_comparison_with_a_skipped_and_a_measured_target_keeps_both_columns() {
    require!(root);
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let db = db_with_one(d);
    let target = d.join("t");
    std::fs::create_dir(&target).unwrap();
    let out = iolab(&db)
        .args(["compare", "--fs", "EXT4", "--target"])
        .arg(format!("dir={}", target.display()))
        .args([
            "--size",
            "64M",
            "--suite",
            "basic",
            "--repeat",
            "1",
            "--runtime",
            "1",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("EXT4: skipped: unknown filesystem `EXT4`"),
        "{err}"
    );
    let v = common::json_of(&out.stdout);
    let targets = v["iolab compare"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    assert!(targets[0]["skipped"].is_string());
    assert!(targets[1]["skipped"].is_null());
    assert_eq!(rows(&db), 2);
    assert!(common::entries(&target).is_empty());
}
