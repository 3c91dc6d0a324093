//! `iolab quick`: the suite on a temporary directory with a short --time
//! finishes, prints the table with every test, stores one result per run
//! with its provenance, and leaves nothing behind; bad input (a size the
//! free space cannot hold, an engine that moves no data, a damaged
//! database) is refused before anything runs; Ctrl-C in the metadata pass
//! stores nothing.

mod common;

use iolab_testkit::need;
use std::path::Path;
use std::time::{Duration, Instant};

use iolab_store::{Kind, Store};
use serde_json::Value;

/// `iolab quick DIR --db DB EXTRA` with a short suite: the defaults below
/// for the flags EXTRA does not give.
fn quick_cmd(dir: &Path, db: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut c = common::iolab();
    c.arg("quick").arg(dir).arg("--db").arg(db);
    for (flag, value) in [
        ("--time", "2s"),
        ("--size", "64m"),
        ("--meta-files", "1000"),
    ] {
        if !extra.contains(&flag) {
            c.args([flag, value]);
        }
    }
    c.args(extra);
    c
}

fn quick(dir: &Path, db: &Path, extra: &[&str]) -> std::process::Output {
    quick_cmd(dir, db, extra).output().unwrap()
}

#[test]
fn the_suite_prints_every_test_stores_the_result_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    // The directory as typed is relative; the result names it absolute.
    let parent = dir.path().parent().unwrap();
    let name = Path::new(dir.path().file_name().unwrap());
    let out = quick_cmd(name, &db, &["--tag", "first"])
        .current_dir(parent)
        .output()
        .unwrap();
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
        .skip_while(|l| !l.starts_with("test "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            // Warning markers (`w1`, `w1,w2`) follow the figures they flag.
            let w: Vec<&str> = l
                .split_whitespace()
                // The bar beside MB/s.
                .filter(|t| !t.starts_with(['█', '▏', '▎', '▍', '▌', '▋', '▊', '▉']))
                .filter(|t| {
                    !t.split(',').all(|m| {
                        m.len() > 1
                            && m.starts_with('w')
                            && m[1..].bytes().all(|b| b.is_ascii_digit())
                    })
                })
                .collect();
            // MB/s, IOPS, p50 and p99 (us) follow the name.
            w[..w.len() - 4].join(" ")
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
    // Where the result went is said on stderr, not in the table.
    assert!(!text.contains("stored as result"), "{text}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("iolab: stored as result 1 (iolab show 1)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The stored row: what, where and how it was measured.
    let absolute = dir.path().canonicalize().unwrap().display().to_string();
    let rec = Store::open(&db).unwrap().get(1).unwrap().unwrap().record;
    assert_eq!(rec.kind, Kind::Quick);
    assert_eq!(rec.target, absolute);
    assert_eq!(rec.tags, ["first"]);
    let p = &rec.provenance;
    assert_eq!(p.target, absolute);
    for (field, value) in [
        ("fs_type", &p.fs_type),
        ("host", &p.host),
        ("kernel", &p.kernel),
        ("cpu_model", &p.cpu_model),
        ("iolab_version", &p.iolab_version),
        ("mount_options", &p.mount_options),
        ("time", &p.time),
    ] {
        assert!(!value.is_empty(), "provenance {field} is empty: {p:?}");
    }
    assert!(p.cpu_count > 0 && p.memory_bytes > 0, "{p:?}");
    assert!(
        rec.job_text.contains("[SEQ1M-Q8T1-read]\nrw=read\n"),
        "{}",
        rec.job_text
    );
    assert!(
        rec.command_line.contains("--tag first"),
        "{}",
        rec.command_line
    );
    let stored: iolab_stats::quick::QuickResult = serde_json::from_str(&rec.result_json).unwrap();
    assert_eq!(stored.dir, absolute);
    assert_eq!(stored.fs_type, p.fs_type);
    assert_eq!(stored.tests.len(), 12);
    let names: Vec<&str> = rec.metrics.iter().map(|m| m.name.as_str()).collect();
    assert!(
        names.contains(&"SEQ1M Q8T1 read MB/s") && names.contains(&"META 1k files unlink IOPS"),
        "{names:?}"
    );
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
    // quick's own JSON says where and on what it ran, as the store keeps it.
    let prov = &v["provenance"];
    for field in [
        "host",
        "kernel",
        "cpu_model",
        "fs_type",
        "mount_options",
        "iolab_version",
        "time",
    ] {
        assert!(
            prov[field].as_str().is_some_and(|s| !s.is_empty()),
            "provenance {field}: {prov}"
        );
    }
    assert!(prov["cpu_count"].as_u64().unwrap() > 0, "{prov}");
    assert!(prov["memory_bytes"].as_u64().unwrap() > 0, "{prov}");
    assert_eq!(prov["target"], absolute.as_str());
    for field in ["block_device", "device_model", "mount_source", "hypervisor"] {
        assert!(prov.get(field).is_some(), "no {field} in {prov}");
    }
    match iolab_core::virt::detect() {
        Some(vm) => assert_eq!(prov["hypervisor"]["name"], vm.name.as_str(), "{prov}"),
        None => assert!(prov["hypervisor"].is_null(), "{prov}"),
    }
    let rec2 = Store::open(&db).unwrap().get(2).unwrap().unwrap().record;
    assert_eq!(
        serde_json::to_value(&rec2.provenance).unwrap(),
        *prov,
        "the stored provenance is the JSON's"
    );
    // p50 is kept beside p99, and show, export and diff read it.
    let stored2: iolab_stats::quick::QuickResult = serde_json::from_str(&rec2.result_json).unwrap();
    let p50 = rec2
        .metrics
        .iter()
        .find(|m| m.name == "SEQ1M Q8T1 read p50")
        .unwrap_or_else(|| panic!("no p50 metric: {:?}", rec2.metrics));
    assert_eq!(p50.unit, "us");
    assert_eq!(p50.value, stored2.tests[0].p50_ns as f64 / 1e3);
    let show = common::iolab()
        .args(["show", "2", "--output-format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(shown["provenance"], *prov);
    let export = common::iolab()
        .args(["export", "--format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let export = String::from_utf8_lossy(&export.stdout);
    assert!(export.contains("SEQ1M Q8T1 read p50"), "{export}");
    let diff = common::iolab()
        .args(["diff", "1", "2", "--output-format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let diff = String::from_utf8_lossy(&diff.stdout);
    assert!(diff.contains("RND4K Q1T1 write p50"), "{diff}");
    let out = quick(dir.path(), &db, &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("stored as result 3"));
}

#[test]
fn no_store_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let out = quick(
        dir.path(),
        &db,
        &[
            "--no-store",
            "--output-format",
            "csv",
            "--meta-files",
            "100",
        ],
    );
    assert!(out.status.success());
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(csv.lines().count(), 13, "{csv}");
    assert!(csv.starts_with(
        "test,op,mb_per_s,iops,p50_ns,p99_ns,error,runs,iops_low,iops_high,warnings\n"
    ));
    // The metadata pass is named by its real count.
    assert!(csv.contains("\nMETA 100 files,stat,"), "{csv}");
    assert!(!db.exists());
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let cases: &[(&[&str], &str)] = &[
        (&["--time", "soon"], "'soon' for '--time <TIME>'"),
        (&["--time", "500ms"], "per test"),
        (&["--engine", "nosuch"], "nosuch"),
        (&["--output-format", "xml"], "xml"),
        (
            &["--size", "1m"],
            "--size 1 MiB: the test file must be at least 64 MiB",
        ),
        (&["--engine", "null"], "ioengine null moves no data"),
        (
            &["--engine", "filecreate"],
            "ioengine filecreate moves no data",
        ),
        (
            &["--output", "/nonexistent-iolab/t.txt"],
            "--output `/nonexistent-iolab/t.txt`",
        ),
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
        if args[0] == "--engine" && args[1] != "nosuch" {
            // The message names the engines the suite takes.
            assert!(err.contains("psync"), "{err}");
        }
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

#[test]
fn a_damaged_database_is_refused_before_anything_runs_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    common::damaged_database(&db);
    let before = std::fs::read(&db).unwrap();
    let out = quick(dir.path(), &db, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&db.display().to_string()) && err.contains("damaged"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database changed");
    assert_eq!(common::entries(keep.path()), ["results.db"]);
    assert!(common::entries(dir.path()).is_empty(), "nothing ran");
}

#[test]
fn the_free_space_is_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let _fs = need!(common::Mounted::tmpfs(tmp.path(), "size=100m"));
    let out = quick(tmp.path(), &db, &["--size", "200m"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--size 200 MiB: ") && err.contains("has 100 MiB free"),
        "{err}"
    );
    // Without --size the file is a quarter of the free space, and 25 MiB
    // is below the 64 the suite needs: the message says so.
    let out = common::iolab()
        .arg("quick")
        .arg(tmp.path())
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("has 100 MiB free") && err.contains("the suite needs 256 MiB free"),
        "{err}"
    );
    assert!(common::entries(tmp.path()).is_empty());
    assert!(!db.exists());
}

#[test]
fn ctrl_c_in_the_metadata_pass_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .arg("quick")
        .arg(dir.path())
        .args(["--time", "1s", "--size", "64m", "--meta-files", "2000000"])
        .arg("--db")
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The metadata pass works in a directory of its own, inside the
    // suite's private one: wait for it.
    let deadline = Instant::now() + Duration::from_secs(120);
    let meta_began = || {
        common::entries(dir.path())
            .iter()
            .filter(|e| e.starts_with(".iolab-quick-"))
            .any(|q| {
                std::fs::read_dir(dir.path().join(q)).is_ok_and(|mut d| {
                    d.any(|e| {
                        e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("iolab-meta."))
                    })
                })
            })
    };
    while !meta_began() {
        assert!(Instant::now() < deadline, "the metadata pass never began");
        assert!(child.try_wait().unwrap().is_none(), "quick ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("not stored"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("note: interrupted"), "{text}");
    assert!(!err.contains("stored as result"), "{err}");
    let kept = Store::open(&db).unwrap().len().unwrap();
    assert_eq!(kept, 0, "an interrupted suite was stored");
    assert!(
        common::entries(dir.path()).is_empty(),
        "{:?}",
        common::entries(dir.path())
    );
}

/// `--profile cdm-nvme` runs CrystalDiskMark's NVMe tests (shortened
/// here), says so in the table, and its stored job file replays it with
/// `iolab rerun`: every run stonewalled, the test file removed at the end.
#[test]
fn a_cdm_profile_runs_its_tests_and_rerun_replays_the_stored_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let short = [
        "--profile",
        "cdm-nvme",
        "--time",
        "150ms",
        "--passes",
        "2",
        "--interval",
        "100ms",
    ];
    let out = quick_cmd(dir.path(), &db, &short).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("note: profile cdm-nvme: CrystalDiskMark 8's NVMe SSD profile; each test a 150 ms preparation run, then the best of 2 passes of 150 ms, 100 ms between tests"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("SEQ") || l.starts_with("RND") || l.starts_with("META"))
        .collect();
    assert_eq!(rows.len(), 8, "no metadata pass in a cdm profile: {text}");
    assert!(rows[2].starts_with("RND4K Q32T16  read"), "{text}");
    let rec = Store::open(&db).unwrap().get(1).unwrap().unwrap().record;
    let stored: iolab_stats::quick::QuickResult = serde_json::from_str(&rec.result_json).unwrap();
    assert_eq!(stored.profile, "cdm-nvme");
    assert!(rec.job_text.contains("[global]\n"), "{}", rec.job_text);

    // The replay: 8 tests × (preparation + 2 passes), one group each.
    let out = common::iolab()
        .env("IOLAB_DB", &db)
        .args(["rerun", "1", "--output-format=json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("stored as result 2"), "{err}");
    let v = common::json_of(&out.stdout);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 24);
    let groups: Vec<u64> = jobs
        .iter()
        .map(|j| j["groupid"].as_u64().unwrap())
        .collect();
    assert_eq!(groups, (0..24).collect::<Vec<u64>>());
    assert_eq!(jobs[8]["jobname"], "RND4K-Q32T16-read-pass2");
    assert!(jobs[8]["read"]["io_bytes"].as_u64().unwrap() > 0);
    assert!(
        common::entries(dir.path()).is_empty(),
        "the test file is removed"
    );
    let again = Store::open(&db).unwrap().get(2).unwrap().unwrap().record;
    assert_eq!(again.kind, Kind::Run);

    // An unknown profile, a result that keeps no job file.
    let out = quick_cmd(dir.path(), &db, &["--profile", "cdm9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("iolab, cdm, cdm-nvme"));
    let out = common::iolab()
        .env("IOLAB_DB", &db)
        .args(["rerun", "7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no result 7"));
}

/// iolab's own profile replays too: its nine tests one after the other.
#[test]
fn the_iolab_profiles_job_file_replays_its_nine_tests() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let out = quick(dir.path(), &db, &["--time", "1s", "--meta-files", "0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("note: profile iolab: "));
    let out = common::iolab()
        .env("IOLAB_DB", &db)
        .args(["rerun", "1", "--output-format=json", "--no-store"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::json_of(&out.stdout);
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 9);
    assert_eq!(names[0], "SEQ1M-Q8T1-read");
    assert_eq!(names[8], "RND4K-Q1T1-write-fsync");
    assert!(common::entries(dir.path()).is_empty());
}
