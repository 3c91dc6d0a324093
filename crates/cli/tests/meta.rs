//! `iolab meta`: exact phase counts, a tree of the requested shape, no
//! files left behind, the CSV and JSON reports, bad input refused with
//! exit 2 before anything is created, and a run that fills a tmpfs
//! failing with exit 1 after removing its files.

mod common;

use common::{entries, iolab, json_of, Mounted};
use iolab_testkit::{have, need};
use serde_json::Value;

fn phases(v: &Value) -> Vec<(String, u64)> {
    v["phases"]
        .as_array()
        .expect("a phases list")
        .iter()
        .map(|p| {
            (
                p["phase"].as_str().unwrap().to_string(),
                p["ops"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn one_directory_counts_every_operation_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["meta", "--files", "300", "--output-format", "json"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let got = phases(&v);
    let want: Vec<(String, u64)> = [
        "create", "open", "utime", "stat", "readdir", "rename", "unlink",
    ]
    .iter()
    .map(|p| (p.to_string(), 300))
    .collect();
    assert_eq!(got, want);
    for p in v["phases"].as_array().unwrap() {
        assert_eq!(p["lat_ns"]["N"], 300, "{p}");
        assert!(p["lat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    }
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn a_tree_has_its_directories_and_threads_share_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["meta", "--files", "100", "--dirs", "2", "--depth", "3"])
        .args(["--threads", "3", "--file-size", "1k", "--fsync"])
        .args(["--output-format", "json"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    // 2 + 4 + 8 directories, the 8 deepest holding the files.
    assert_eq!(v["directories"], 14);
    assert_eq!(v["leaves"], 8);
    assert_eq!(v["setup"]["file_size"], 1024);
    let got = phases(&v);
    assert_eq!(got.first().unwrap(), &("mkdir".to_string(), 14));
    assert_eq!(got.last().unwrap(), &("rmdir".to_string(), 14));
    assert_eq!(got.len(), 9);
    for (name, ops) in &got[1..8] {
        assert_eq!(*ops, 100, "{name}");
    }
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn csv_parses_and_table_has_the_published_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iolab()
        .args([
            "meta",
            "--files",
            "50",
            "--phases",
            "stat",
            "--output-format",
            "csv",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][..3], ["phase", "ops", "elapsed_ns"]);
    assert_eq!(rows.len(), 4, "{text}");
    let names: Vec<&str> = rows[1..].iter().map(|r| r[0]).collect();
    assert_eq!(names, ["create", "stat", "unlink"]);
    for r in &rows[1..] {
        assert_eq!(r.len(), rows[0].len());
        assert_eq!(r[1], "50");
        let elapsed: u64 = r[2].parse().unwrap();
        let per_op: f64 = r[3].parse().unwrap();
        let ops_s: f64 = r[4].parse().unwrap();
        assert!(elapsed > 0);
        assert!((per_op * 50.0 - elapsed as f64).abs() < 50.0);
        assert!((ops_s * elapsed as f64 / 1e9 - 50.0).abs() < 0.01);
    }

    let report = tmp.path().join("report.txt");
    iolab()
        .args(["meta", "--files", "20", "--output"])
        .arg(&report)
        .arg(tmp.path())
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&report).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("iolab meta: ") && lines[1].starts_with("20 files in one directory"),
        "{text}"
    );
    for col in [
        "ops",
        "total (ms)",
        "ops/s",
        "mean (us)",
        "p50 (us)",
        "p99 (us)",
    ] {
        assert!(lines[3].contains(col), "{col} missing: {text}");
    }
    // One unit per column: the mean is the time per operation, said once.
    assert!(!lines[3].contains("per op"), "{text}");
    assert!(
        lines[1].contains(&format!("({})", tmp.path().display())),
        "the directory by its path: {text}"
    );
    // The title, the description, the header, seven phases; under them,
    // what readdir's latency is.
    assert_eq!(lines.len(), 13, "{text}");
    assert!(
        lines[12].starts_with("r readdir: each getdents64 call's time divided"),
        "{text}"
    );
    assert_eq!(entries(tmp.path()), ["report.txt"]);
}

fn refused(args: &[&str], dir: &std::path::Path, want: &str) {
    let out = iolab().arg("meta").args(args).arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(want), "{args:?}: `{err}` lacks `{want}`");
}

#[test]
fn bad_input_exits_2_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    refused(&["--files", "0"], dir, "--files 0");
    refused(&["--threads", "0"], dir, "--threads 0");
    refused(&["--depth", "2"], dir, "--depth 2");
    refused(
        &["--dirs", "100", "--depth", "5"],
        dir,
        "--dirs 100 --depth 5",
    );
    refused(&["--file-size", "4q"], dir, "'4q' for '--file-size <SIZE>'");
    refused(&["--phases", "stat,chmod"], dir, "chmod");
    refused(&["--output-format", "xml"], dir, "xml");
    refused(&["--files", "many"], dir, "many");
    refused(
        &["--phases", "mkdir"],
        dir,
        "`mkdir` times the directories of a tree",
    );
    refused(
        &["--output", "/nonexistent-iolab/o.txt"],
        dir,
        "--output `/nonexistent-iolab/o.txt`: the directory `/nonexistent-iolab` does not exist",
    );
    refused(&[], &dir.join("missing"), "does not exist");
    std::fs::write(dir.join("plain"), b"").unwrap();
    refused(&[], &dir.join("plain"), "not a directory");
    assert_eq!(entries(dir), ["plain"]);

    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    match Mounted::tmpfs(&ro, "ro,size=1m") {
        Ok(_m) => refused(&[], &ro, "not writable"),
        Err(missing) => iolab_testkit::skipped_case(missing),
    }
}

#[test]
fn a_full_filesystem_fails_the_phase_and_removes_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    // 64 inodes: the run's directory and some files fit, 500 files do not.
    let _fs = need!(Mounted::tmpfs(tmp.path(), "size=1m,nr_inodes=64"));
    let out = iolab()
        .args(["meta", "--files", "500"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("create of "), "{err}");
    assert!(err.contains("iolab-meta."), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("removed"), "{err}");
    assert!(out.stdout.is_empty());
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));

    // Data that does not fit: ENOSPC from write(2) during create. No
    // phase finished, so there is no report and no --output file.
    let report = std::env::temp_dir().join(format!("iolab-meta-report-{}", std::process::id()));
    let out = iolab()
        .args(["meta", "--files", "10", "--file-size", "256k", "--output"])
        .arg(&report)
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!report.exists(), "an empty report was left");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("create of ") && err.contains("No space"),
        "{err}"
    );
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn a_failure_after_finished_phases_reports_them_in_the_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = tmp.path().join("fs");
    std::fs::create_dir(&fs).unwrap();
    // 64 inodes: the run's directory and its six tree directories fit,
    // 500 files do not; mkdir finishes, create fails.
    let _fs = need!(Mounted::tmpfs(&fs, "size=1m,nr_inodes=64"));
    let report = tmp.path().join("o2.txt");
    let out = iolab()
        .args(["meta", "--files", "500", "--dirs", "2", "--depth", "2"])
        .arg("--output")
        .arg(&report)
        .arg(&fs)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("create of ") && err.contains("No space left"),
        "{err}"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("iolab meta: ") && lines[1].starts_with("500 files in a tree"),
        "{text}"
    );
    let mkdir: Vec<&str> = lines[4].split_whitespace().collect();
    assert_eq!(mkdir[..2], ["mkdir", "6"], "{text}");
    assert!(
        lines
            .last()
            .unwrap()
            .starts_with("note: stopped: create of "),
        "{text}"
    );
    assert!(text.ends_with("; the phases above finished\n"), "{text}");
    assert!(entries(&fs).is_empty(), "{:?}", entries(&fs));
}

#[test]
fn too_many_open_files_names_the_directory_that_did_not_open() {
    let tmp = tempfile::tempdir().unwrap();
    // Four descriptors: standard input, output and error, and the run's
    // directory; the first leaf of the tree cannot be opened.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 4 && exec \"$0\" \"$@\"")
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args([
            "meta",
            "--no-store",
            "--files",
            "20",
            "--dirs",
            "2",
            "--depth",
            "2",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("create phase: cannot open the directory ")
            && err.contains("/d0/d0: Too many open files"),
        "{err}"
    );
    assert!(!err.contains("/f0"), "{err}");
    // The cleanup gets by with the one descriptor it has.
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn cold_phases_drop_caches_as_root_and_are_refused_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["meta", "--files", "20", "--cold", "--output-format", "json"])
        .arg(tmp.path())
        .output()
        .unwrap();
    if iolab_testkit::req::is_root() {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json_of(&out.stdout);
        assert_eq!(v["setup"]["cold"], true);
        assert_eq!(phases(&v).len(), 7);
    } else {
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--cold") && err.contains("root"), "{err}");
    }
    assert!(entries(tmp.path()).is_empty());
}

/// Jobs of fio's file-operation engines, one after the other: create,
/// stat and delete 50 files, and with `dirs` make, stat and remove 50
/// directories (engines fio 3.33 does not have yet).
fn file_engine_jobs(dir: &std::path::Path, dirs: bool) -> String {
    let mut text = format!(
        "[global]\nfilesize=4k\nbs=4k\ndirectory={}\nnrfiles=50\nopenfiles=1\n\
         filename_format=f.$jobnum.$filenum\n\n",
        dir.display()
    );
    for (name, engine, rw) in [
        ("fcreate", "filecreate", "write"),
        ("fstat", "filestat", "read"),
        ("fdelete", "filedelete", "read"),
    ] {
        text += &format!("[{name}]\nstonewall\nioengine={engine}\nrw={rw}\n\n");
    }
    if dirs {
        for (name, engine) in [
            ("dcreate", "dircreate"),
            ("dstat", "dirstat"),
            ("ddelete", "dirdelete"),
        ] {
            text +=
                &format!("[{name}]\nstonewall\nioengine={engine}\nfilename_format=d.$filenum\n\n");
        }
    }
    text
}

/// (job name, total I/Os, completion latency samples) of every job.
fn op_counts(v: &Value) -> Vec<(String, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let d = if j["write"]["total_ios"].as_u64().unwrap() > 0 {
                &j["write"]
            } else {
                &j["read"]
            };
            (
                j["jobname"].as_str().unwrap().to_string(),
                d["total_ios"].as_u64().unwrap(),
                d["clat_ns"]["N"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn run_jobs(tool: &str, job: &std::path::Path) -> Vec<(String, u64, u64)> {
    let out = if tool == "fio" {
        std::process::Command::new("fio")
            .arg(job)
            .arg("--output-format=json")
            .output()
            .unwrap()
    } else {
        iolab()
            .arg("run")
            .arg(job)
            .arg("--output-format=json")
            .output()
            .unwrap()
    };
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    op_counts(&json_of(&out.stdout))
}

#[test]
fn fio_file_engines_do_one_operation_per_file() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let job = tmp.path().join("ops.fio");
    std::fs::write(&job, file_engine_jobs(&work, true)).unwrap();
    let ours = run_jobs("iolab", &job);
    let names: Vec<&str> = ours.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        ["fcreate", "fstat", "fdelete", "dcreate", "dstat", "ddelete"]
    );
    for (name, ios, clat) in &ours {
        assert_eq!((*ios, *clat), (50, 50), "{name}");
    }
    // filedelete removed every file and dirdelete every directory.
    assert!(entries(&work).is_empty(), "{:?}", entries(&work));

    if have!(fio) {
        std::fs::write(&job, file_engine_jobs(&work, false)).unwrap();
        assert_eq!(run_jobs("fio", &job), ours[..3]);
        assert!(entries(&work).is_empty());
    }
}
