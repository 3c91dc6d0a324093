//! Two processes inserting at once both land: the test re-runs its own
//! binary twice as writer processes (selected by an environment variable)
//! and counts the rows afterwards.

mod common;

use std::process::Command;

use iolab_store::{Kind, Store};

const CHILD_DB: &str = "IOLAB_STORE_TEST_WRITER_DB";
const PER_PROCESS: usize = 100;

#[test]
fn two_processes_inserting_100_each_give_200_rows() {
    if let Some(db) = std::env::var_os(CHILD_DB) {
        // Writer mode: open (possibly creating) and insert one by one.
        let mut store = Store::open(&db).unwrap();
        for i in 0..PER_PROCESS {
            store
                .insert(&common::record(Kind::Run, i as u64 % 3))
                .unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared/results.db");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "two_processes_inserting_100_each_give_200_rows",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(CHILD_DB, &db)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "writer failed: {status}");
    }
    let store = Store::open(&db).unwrap();
    assert_eq!(store.len().unwrap(), 2 * PER_PROCESS as u64);
    let ids: std::collections::BTreeSet<i64> = store.all().unwrap().iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), 2 * PER_PROCESS);
}
