//! `iolab quick`: the suite on a temporary directory with a short --time
//! finishes, prints the table with every test, stores one result per run,
//! and leaves nothing behind; bad input is refused before anything runs.

mod common;

use std::path::Path;

use serde_json::Value;

fn quick(dir: &Path, db: &Path, extra: &[&str]) -> std::process::Output {
    common::iolab()
        .arg("quick")
        .arg(dir)
        .args([
            "--time",
            "2s",
            "--size",
            "64m",
            "--meta-files",
            "1000",
            "--db",
        ])
        .arg(db)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_suite_prints_every_test_stores_the_result_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let out = quick(dir.path(), &db, &["--tag", "first"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("iolab quick: "), "{text}");
    assert!(text.contains("64 MiB test file"), "{text}");
    // Each test's name and operation, in the suite's order.
    let rows: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Test "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w[..w.len() - 6].join(" ")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "SEQ1M Q8T1 read",
            "SEQ1M Q1T1 read",
            "RND4K Q32T1 read",
            "RND4K Q1T1 read",
            "SEQ1M Q8T1 write",
            "SEQ1M Q1T1 write",
            "RND4K Q32T1 write",
            "RND4K Q1T1 write",
            "RND4K Q1T1 write+fsync",
            "META 1k files create",
            "META 1k files stat",
            "META 1k files unlink",
        ],
        "{text}"
    );
    assert!(!text.contains("failed"), "{text}");
    assert!(text.contains("stored as result 1 (iolab show 1)"), "{text}");
    assert!(db.exists());
    assert!(
        common::entries(dir.path()).is_empty(),
        "the test file is removed"
    );

    // A second run is a second result.
    let out = quick(dir.path(), &db, &["--output-format", "json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 12);
    for t in tests {
        assert!(t["iops"].as_f64().unwrap() > 0.0, "{t}");
        assert!(
            t["p99_ns"].as_u64().unwrap() >= t["p50_ns"].as_u64().unwrap(),
            "{t}"
        );
    }
    assert_eq!(v["file_bytes"], 64 << 20);
    let out = quick(dir.path(), &db, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("stored as result 3"));
}

#[test]
fn no_store_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let out = quick(dir.path(), &db, &["--no-store", "--output-format", "csv"]);
    assert!(out.status.success());
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(csv.lines().count(), 13, "{csv}");
    assert!(csv.starts_with("test,op,mb_per_s,iops,p50_ns,p99_ns,error\n"));
    assert!(!db.exists());
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let cases: &[(&[&str], &str)] = &[
        (&["--time", "soon"], "--time=soon"),
        (&["--time", "500ms"], "per test"),
        (&["--engine", "nosuch"], "nosuch"),
        (&["--output-format", "xml"], "xml"),
        (&["--size", "1m"], "needs at least 64 MiB"),
    ];
    for (args, says) in cases {
        let out = common::iolab()
            .arg("quick")
            .arg(dir.path())
            .arg("--db")
            .arg(&db)
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = quick(&dir.path().join("missing"), &db, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    assert!(common::entries(dir.path()).is_empty());
    assert!(!db.exists());
}

#[test]
fn a_file_that_is_not_a_results_database_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("notes.txt");
    std::fs::write(&db, "my notes, not a database\n").unwrap();
    let out = quick(dir.path(), &db, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("notes.txt"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&db).unwrap(),
        "my notes, not a database\n"
    );
    assert!(common::entries(dir.path()).is_empty(), "nothing ran");
}
