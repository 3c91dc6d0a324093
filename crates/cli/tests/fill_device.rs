//! fill_device on a small tmpfs (needs root to mount it): the job writes
//! until the filesystem is full and ends there without an error, moving
//! the bytes and I/Os fio 3.33 moves on the same filesystem (the write
//! that meets ENOSPC counts in total_ios, as in fio); a read job reads
//! what filling the filesystem left.

mod common;
use common::*;
use iolab_testkit::{need, require, Missing};

use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

const FS_SIZE: u64 = 8 << 20;

/// Per job: (error, bytes, I/Os), read and write together.
fn moved(report: &Value) -> Vec<(i64, u64, u64)> {
    report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let both = |k: &str| j["read"][k].as_u64().unwrap() + j["write"][k].as_u64().unwrap();
            (
                j["error"].as_i64().unwrap(),
                both("io_bytes"),
                both("total_ios"),
            )
        })
        .collect()
}

fn empty(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
}

fn free(dir: &Path) -> u64 {
    iolab_engine::file::available_space(dir).unwrap()
}

fn small_tmpfs(dir: &Path) -> Result<Mounted, Missing> {
    Mounted::tmpfs(dir, &format!("size={FS_SIZE}"))
}

#[test]
fn fill_device_fills_the_filesystem_as_fio_does() {
    require!(fio);
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("fs");
    std::fs::create_dir(&mnt).unwrap();
    let _fs = need!(small_tmpfs(&mnt));
    for rw in ["write", "read"] {
        let args = [
            "--name=f".to_string(),
            format!("--directory={}", mnt.display()),
            format!("--rw={rw}"),
            "--bs=64k".to_string(),
            "--fill_device=1".to_string(),
        ];
        let fio = Proc::new("fio")
            .args(&args)
            .arg("--output-format=json")
            .output()
            .unwrap();
        assert!(fio.status.success(), "fio {rw}");
        let fio_free = free(&mnt);
        empty(&mnt);

        let ours = iolab()
            .args(["run", "--no-store", "--output-format=json"])
            .args(&args)
            .output()
            .unwrap();
        assert!(
            ours.status.success(),
            "{rw}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert_eq!(free(&mnt), 0, "{rw}: the filesystem is full");
        assert_eq!(fio_free, 0, "{rw}: fio filled it too");
        let (f, o) = (moved(&json_of(&fio.stdout)), moved(&json_of(&ours.stdout)));
        assert_eq!(o, f, "{rw}: (error, bytes, I/Os) of iolab and fio");
        assert_eq!(o[0].1, FS_SIZE, "{rw}");
        empty(&mnt);
    }
}

#[test]
fn fill_device_clones_share_the_space_and_end_without_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("fs");
    std::fs::create_dir(&mnt).unwrap();
    let _fs = need!(small_tmpfs(&mnt));
    let report = run_json(
        &mnt,
        &[
            "--no-store",
            "--name=f",
            "--directory=.",
            "--rw=randwrite",
            "--bs=16k",
            "--numjobs=2",
            "--fill_fs=1",
        ],
    );
    let jobs = moved(&report);
    assert_eq!(jobs.len(), 2);
    assert!(jobs.iter().all(|j| j.0 == 0), "{jobs:?}");
    assert_eq!(jobs.iter().map(|j| j.1).sum::<u64>(), FS_SIZE);
    assert_eq!(free(&mnt), 0);
}
