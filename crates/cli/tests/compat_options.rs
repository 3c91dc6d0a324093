//! Options and engines of fio 3.33 that iolab once refused, each run under
//! fio and under iolab on the same job in fresh directories: the jobs'
//! io_bytes and total_ios per direction, their errors, and the files left
//! behind (names and sizes) must agree, and each test checks what the
//! option changes besides.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// What a run did: per job its name, error, bytes and I/Os per direction
/// (read, write, trim), and the files in the directory with their sizes.
#[derive(Debug, PartialEq)]
struct Done {
    jobs: Vec<Job>,
    files: Vec<(String, u64)>,
}

#[derive(Debug, PartialEq)]
struct Job {
    name: String,
    error: i64,
    bytes: [u64; 3],
    ios: [u64; 3],
}

fn done(report: &Value, dir: &Path) -> Done {
    let jobs = report["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|j| {
            let per =
                |key: &str| ["read", "write", "trim"].map(|d| j[d][key].as_u64().unwrap_or(0));
            Job {
                name: j["jobname"].as_str().unwrap_or_default().to_string(),
                error: j["error"].as_i64().unwrap_or(0),
                bytes: per("io_bytes"),
                ios: per("total_ios"),
            }
        })
        .collect();
    Done {
        jobs,
        files: files_in(dir),
    }
}

/// The files of a directory but the job file, with their sizes.
fn files_in(dir: &Path) -> Vec<(String, u64)> {
    entries(dir)
        .into_iter()
        .filter(|n| n != "job.fio")
        .map(|n| {
            let len = std::fs::metadata(dir.join(&n)).unwrap().len();
            (n, len)
        })
        .collect()
}

/// A run of one tool: its report, and its directory (kept for the test).
struct Ran {
    report: Value,
    dir: tempfile::TempDir,
    stdout: String,
}

impl Ran {
    fn done(&self) -> Done {
        done(&self.report, self.dir.path())
    }
    #[allow(dead_code)]
    fn job(&self, i: usize) -> &Value {
        &self.report["jobs"][i]
    }
}

fn job_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, text.replace("DIR", &dir.path().to_string_lossy())).unwrap();
    (dir, job)
}

/// Runs the job text (DIR stands for the directory) under fio, in the
/// directory; its report.
fn fio(text: &str) -> Ran {
    let (dir, job) = job_file(text);
    let out = Proc::new("fio")
        .current_dir(dir.path())
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ran {
        report: json_of(&out.stdout),
        dir,
        stdout,
    }
}

/// The same under iolab.
fn iolab_run(text: &str) -> Ran {
    let (dir, job) = job_file(text);
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "--no-store", "--output-format=json"])
        .arg(&job)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ran {
        report: json_of(&out.stdout),
        dir,
        stdout,
    }
}

/// Both runs, which must have done the same.
fn same_as_fio(text: &str) -> (Ran, Ran) {
    let (f, i) = (fio(text), iolab_run(text));
    assert_eq!(i.done(), f.done(), "job:\n{text}\niolab: {}", i.stdout);
    (f, i)
}

/// Blocks allocated to a file, in bytes.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

// ---- engines: falloc, ftruncate ----

#[test]
fn falloc_allocates_punches_and_moves_no_data_as_fio() {
    require!(fio);
    // A write job allocates its file; a read job reads a laid-out file by
    // allocating (keeping its size); a trim job punches holes in a regular
    // file.
    let (f, i) = same_as_fio(
        "[w]\nioengine=falloc\nrw=write\nsize=4m\nbs=64k\nfilename=DIR/w\n\
         [r]\nstonewall\nioengine=falloc\nrw=read\nsize=2m\nbs=64k\nfilename=DIR/r\n\
         [t]\nstonewall\nioengine=falloc\nrw=trim\nsize=1m\nbs=64k\nfilename=DIR/t\n",
    );
    let d = i.done();
    assert_eq!(d.jobs[0].bytes, [0, 4 << 20, 0]);
    assert_eq!(d.jobs[0].ios, [0, 64, 0]);
    assert_eq!(d.jobs[1].bytes, [2 << 20, 0, 0]);
    assert_eq!(d.jobs[2].bytes, [0, 0, 1 << 20]);
    for ran in [&f, &i] {
        assert!(allocated(&ran.dir.path().join("w")) >= 4 << 20);
        // Every hole punched: nothing of the trimmed file stays allocated.
        assert_eq!(allocated(&ran.dir.path().join("t")), 0);
    }
}

#[test]
fn ftruncate_sets_the_size_at_each_write_and_refuses_reads_as_fio() {
    require!(fio);
    let (_, i) =
        same_as_fio("[t]\nioengine=ftruncate\nrw=write\nsize=1m\nbs=64k\nfilename=DIR/f\n");
    // The last write truncated the file at its offset.
    assert_eq!(i.done().files, [("f".to_string(), (1 << 20) - (64 << 10))]);
    assert_eq!(i.done().jobs[0].ios, [0, 16, 0]);
    // A read is EINVAL, the job's error in both.
    let (_, i) = same_as_fio("[t]\nioengine=ftruncate\nrw=read\nsize=1m\nbs=64k\nfilename=DIR/f\n");
    assert_eq!(i.done().jobs[0].error, 22);
}
