//! `iolab run` as a user runs it: exact counts in the JSON report, the
//! --output file, and run-time and plan errors with their exit codes and
//! nothing left behind.

mod common;
use common::*;
use iolab_testkit::need;

use std::fs;

use predicates::prelude::*;
use serde_json::Value;

#[test]
fn a_size_bounded_job_reports_exact_bytes_and_ios() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--output-format=json",
            "--name=w",
            "--rw=randwrite",
            "--bs=4k",
            "--size=2m",
            "--filename=data",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "w");
    assert_eq!(job["write"]["io_bytes"], 2 << 20);
    assert_eq!(job["write"]["total_ios"], 512);
    assert_eq!(job["read"]["total_ios"], 0);
    assert_eq!(job["job options"]["rw"], "randwrite");
    assert_eq!(
        fs::metadata(dir.path().join("data")).unwrap().len(),
        2 << 20
    );
}

#[test]
fn unlink_removes_the_files_and_output_goes_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--output-format=json,normal",
            "--output=report.txt",
            "--name=r",
            "--rw=read",
            "--size=1m",
            "--unlink=1",
        ])
        .assert()
        .success()
        .stdout("");
    assert_eq!(entries(dir.path()), ["report.txt"]);
    let text = fs::read_to_string(dir.path().join("report.txt")).unwrap();
    let brace = text.find('{').expect("JSON in the report");
    let end = text.rfind("\n}\n").expect("end of the JSON") + 3;
    let v: Value = serde_json::from_str(&text[brace..end]).unwrap();
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    assert!(
        text[end..].contains("Run status group 0 (all jobs):"),
        "{text}"
    );
}

#[test]
fn a_missing_directory_exits_1_with_the_path_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--output-format=json",
            "--name=r",
            "--directory=nope",
            "--rw=read",
            "--size=1m",
            "--unlink=1",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("nope/r.0.0"))
        .stderr(predicate::str::contains("No such file or directory"));
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_plan_error_exits_2_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    iolab()
        .current_dir(dir.path())
        .args(["run", "--name=r", "--rw=read", "--size=4k", "--bs=64k"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "block size 65536 is larger than the 4096 bytes",
        ));
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_read_only_target_exits_1_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("ro");
    fs::create_dir(&mnt).unwrap();
    let _m = need!(Mounted::tmpfs(&mnt, "ro,size=1m"));
    iolab()
        .args(["run", "--name=w", "--rw=write", "--size=64k"])
        .arg(format!("--directory={}", mnt.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Read-only file system"));
}

#[test]
fn enospc_on_a_small_tmpfs_exits_1_with_partial_results_and_no_file_left() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    fs::create_dir(&mnt).unwrap();
    let _m = need!(Mounted::tmpfs(&mnt, "size=1m"));
    let out = iolab()
        .args([
            "run",
            "--output-format=json",
            "--name=w",
            "--rw=write",
            "--size=4m",
            "--fallocate=none",
            "--unlink=1",
        ])
        .arg(format!("--directory={}", mnt.display()))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No space left on device"))
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    let job = &v["jobs"][0];
    assert_eq!(job["error"], 28, "ENOSPC");
    let written = job["write"]["io_bytes"].as_u64().unwrap();
    assert!(
        written > 0 && written <= 1 << 20,
        "partial results: {written} bytes"
    );
    assert!(entries(&mnt).is_empty(), "{:?}", entries(&mnt));
}

#[test]
fn ctrl_c_stops_the_workers_and_prints_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let child = std::process::Command::new(bin)
        .env("IOLAB_DB", common::test_db())
        .current_dir(dir.path())
        .args([
            "run",
            "--output-format=json",
            "--name=long",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=60",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    let started = std::time::Instant::now();
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "stopped before its runtime"
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    let v = json_of(&out.stdout);
    assert_eq!(v["iolab"]["interrupted"], true);
    let runtime = v["jobs"][0]["job_runtime"].as_u64().unwrap();
    assert!(
        runtime > 0 && runtime < 10_000,
        "partial run of {runtime} ms"
    );
    assert!(v["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 0);
}

#[test]
fn minimal_prints_terse_and_other_terse_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--minimal",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let line = String::from_utf8(out).unwrap();
    let fields: Vec<&str> = line.trim_end().split(';').collect();
    assert_eq!(&fields[..3], ["3", "fio-3.33", "t"], "{line}");
    // Read KiB is field 6 of terse version 3.
    assert_eq!(fields[5], "1024");
    iolab()
        .args([
            "run",
            "--terse-version=4",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("terse version 3 only"));
    iolab()
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("usage: iolab run"));
}

#[test]
fn the_synchronous_fast_path_writes_what_the_general_loop_writes() {
    // A plain psync job takes the fast path; the same job with a rate
    // (far above what it reaches) goes through the general loop. Same
    // seed, same offsets, same data, same counts.
    let dir = tempfile::tempdir().unwrap();
    let job = |file: &str, extra: &[&str]| {
        let mut args = vec![
            "--name=w",
            "--ioengine=psync",
            "--rw=randrw",
            "--rwmixread=30",
            "--bs=4k",
            "--size=2m",
            "--randseed=7",
        ];
        let f = format!("--filename={file}");
        args.push(&f);
        args.extend_from_slice(extra);
        let v = run_json(dir.path(), &args);
        let j = &v["jobs"][0];
        let counts: Vec<u64> = ["read", "write"]
            .iter()
            .flat_map(|d| {
                ["io_bytes", "total_ios"]
                    .iter()
                    .map(move |k| j[d][k].as_u64().unwrap())
            })
            .collect();
        let depths = j["iodepth_level"]["1"].as_f64().unwrap();
        (
            counts,
            depths,
            std::fs::read(dir.path().join(file)).unwrap(),
        )
    };
    let fast = job("fast", &[]);
    let general = job("general", &["--rate_iops=100m"]);
    assert_eq!(fast.0, general.0, "counts");
    assert_eq!((fast.1, general.1), (100.0, 100.0), "every I/O at depth 1");
    assert!(fast.2 == general.2, "the two files differ");
}

#[test]
fn the_queued_fast_path_writes_what_the_general_loop_writes() {
    // io_uring and libaio with fio's default batching take the queued fast
    // path; with a rate far above what they reach they go through the
    // general loop. Same seed, same offsets, same data, same counts, and
    // every I/O has its slat, clat and lat.
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio"] {
        let job = |file: &str, extra: &[&str]| {
            let e = format!("--ioengine={engine}");
            let f = format!("--filename={file}");
            let mut args = vec![
                "--name=w",
                e.as_str(),
                "--iodepth=8",
                "--rw=randrw",
                "--rwmixread=30",
                "--bs=4k",
                "--size=2m",
                "--randseed=7",
                // Each write's data from its own sequence number: reads
                // into the same slots do not leak into later writes.
                "--refill_buffers=1",
                f.as_str(),
            ];
            args.extend_from_slice(extra);
            let v = run_json(dir.path(), &args);
            let j = v["jobs"][0].clone();
            let mut counts = Vec::new();
            for d in ["read", "write"] {
                let ios = j[d]["total_ios"].as_u64().unwrap();
                counts.push(j[d]["io_bytes"].as_u64().unwrap());
                counts.push(ios);
                for lat in ["slat_ns", "clat_ns", "lat_ns"] {
                    assert_eq!(j[d][lat]["N"], ios, "{engine} {file} {d} {lat}");
                }
            }
            let submit = &j["iodepth_submit"];
            assert_eq!(
                submit["4"], 100.0,
                "{engine} {file}: one per call: {submit}"
            );
            (
                counts,
                std::fs::read(dir.path().join(file)).unwrap(),
                j["iodepth_complete"].clone(),
            )
        };
        let fast = job(&format!("fast-{engine}"), &[]);
        let general = job(&format!("general-{engine}"), &["--rate_iops=100m"]);
        assert_eq!(fast.0, general.0, "{engine}: counts");
        assert!(fast.1 == general.1, "{engine}: the two files differ");
        // One completion per reap, then the final drain takes the rest.
        assert_eq!(fast.2, general.2, "{engine}: completions per reap");
    }
}
