//! Faults and limits of `iolab run`: job sets past the run's limits
//! (jobs, files, memory) refused before anything is made; files that
//! cannot be made or laid out (a full, read-only or forbidden directory,
//! O_DIRECT where the filesystem has none) recorded on the job as fio
//! records them, with nothing stored and nothing left behind; and worker
//! threads that cannot be created stopping the run with an error.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{entries, iolab};

/// A bound that only catches a hang: the refusals take milliseconds.
const HANG: Duration = Duration::from_secs(20);

/// A work directory and a private results database beside it.
struct Place {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    db: PathBuf,
}

fn place() -> Place {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let db = tmp.path().join("results.db");
    Place {
        work,
        db,
        _tmp: tmp,
    }
}

fn run_in(p: &Place, dir: &Path, args: &[&str]) -> Output {
    iolab()
        .current_dir(&p.work)
        .arg("run")
        .arg(format!("--directory={}", dir.display()))
        .arg(format!("--db={}", p.db.display()))
        .args(args)
        .timeout(HANG)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Refused at plan time: exit 2, the message, nothing in the directory
/// and no database made.
fn refused(args: &[&str], wants: &[&str]) {
    let p = place();
    let o = run_in(&p, &p.work, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for w in wants {
        assert!(err.contains(w), "{args:?}: `{w}` not in: {err}");
    }
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(entries(&p.work), Vec::<String>::new());
    assert!(!p.db.exists(), "the database was made");
}

#[test]
fn numjobs_past_fios_limit_is_refused_before_anything_is_made() {
    refused(
        &["--name=x", "--size=1m", "--numjobs=100000"],
        &["job `x`", "numjobs=100000", "100000 jobs", "at most 4096"],
    );
    // Over the whole run, not per job.
    refused(
        &[
            "--name=a",
            "--size=1m",
            "--numjobs=4000",
            "--name=b",
            "--size=1m",
            "--numjobs=100",
        ],
        &["job `b`", "4100 jobs", "at most 4096"],
    );
}

#[test]
fn fio_refuses_the_same_numjobs() {
    if !common::fio_available() {
        return;
    }
    let o = std::process::Command::new("fio")
        .args([
            "--name=x",
            "--numjobs=5000",
            "--size=4k",
            "--ioengine=null",
            "--thread",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("maximum number of jobs reached"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn nrfiles_past_the_files_bound_is_refused_without_naming_them() {
    refused(
        &["--name=x", "--size=1g", "--nrfiles=100000000"],
        &["job `x`", "100000000 files", "at most 1048576", "nrfiles"],
    );
    refused(
        &["--name=x", "--size=1g", "--nrfiles=300000", "--numjobs=4"],
        &["1200000 files", "at most 1048576"],
    );
}

#[test]
fn a_plan_that_needs_more_memory_than_is_available_is_refused() {
    // 64 clones × 1024 buffers of 16 MiB: a terabyte, on any test host
    // more than MemAvailable.
    refused(
        &[
            "--name=x",
            "--size=1g",
            "--ioengine=libaio",
            "--numjobs=64",
            "--iodepth=1024",
            "--bs=16m",
        ],
        &[
            "job `x`",
            "would need about 1.0 TiB of memory",
            "available (MemAvailable)",
        ],
    );
}
