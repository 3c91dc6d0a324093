//! Faults and limits of `iolab run`: job sets past the run's limits
//! (jobs, files, memory) refused before anything is made; files that
//! cannot be made or laid out (a full, read-only or forbidden directory,
//! O_DIRECT where the filesystem has none) recorded on the job as fio
//! records them, with nothing stored and nothing left behind; and worker
//! threads that cannot be created stopping the run with an error.

mod common;

use iolab_testkit::{need, require, Missing};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Output};
use std::time::Duration;

use common::{entries, iolab, json_of, Mounted};
use serde_json::Value;

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
    require!(fio);
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

/// The results the database holds (`iolab history`), 0 when it has none
/// or does not exist.
fn stored(db: &Path) -> usize {
    if !db.exists() {
        return 0;
    }
    let o = iolab()
        .args(["history", "--output-format=json"])
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array().expect("a list of results").len()
}

/// What a run that failed before any I/O must show: exit 1, fio's error
/// field set to `errno` in JSON, the job's line with `err=N (...)` in the
/// normal output, `wants` on stderr in both, no result stored and
/// nothing left in `dir`. `run` runs iolab with the given output flag.
fn failed_before_io(
    p: &Place,
    dir: &Path,
    errno: i64,
    wants: &[&str],
    run: &dyn Fn(&str) -> Output,
) {
    let o = run("--output-format=json");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let json = json_of(&o.stdout);
    assert_eq!(json["jobs"][0]["error"], errno, "{err}");
    assert_eq!(json["jobs"][0]["read"]["io_bytes"], 0);
    assert_eq!(json["jobs"][0]["write"]["io_bytes"], 0);
    for w in wants {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
    assert!(
        err.contains("no job did any I/O; the run is not stored"),
        "{err}"
    );
    assert_eq!(entries(dir), Vec::<String>::new());

    let o = run("--output-format=normal");
    let err = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = format!("x: (groupid=0, jobs=1): err={errno:2} (");
    assert!(out.contains(&line), "`{line}` not in: {out}");
    for w in wants {
        assert!(err.contains(w), "`{w}` not in: {err}");
    }
    assert_eq!(entries(dir), Vec::<String>::new());
    assert_eq!(stored(&p.db), 0, "a run with no I/O was stored");
}

#[test]
fn a_full_filesystem_fails_the_layout_as_fio_records_it() {
    let p = place();
    let _fs = need!(Mounted::tmpfs(&p.work, "size=1m"));
    let run = |fmt: &str| run_in(&p, &p.work, &["--name=x", "--size=16m", "--rw=read", fmt]);
    failed_before_io(
        &p,
        &p.work,
        28,
        &[
            "job `x`: err=28/file:",
            "x.0.0, func=write, error=No space left on device",
        ],
        &run,
    );
    // The same database keeps a run that did I/O: the count above can
    // tell.
    let o = run_in(&p, &p.work, &["--name=x", "--size=256k", "--rw=read"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stored(&p.db), 1);
}

#[test]
fn a_read_only_filesystem_fails_the_layout_with_erofs() {
    let p = place();
    let _fs = need!(Mounted::tmpfs(&p.work, "ro,size=1m"));
    let run = |fmt: &str| run_in(&p, &p.work, &["--name=x", "--size=64k", "--rw=write", fmt]);
    failed_before_io(
        &p,
        &p.work,
        30,
        &[
            "job `x`: err=30/file:",
            "func=open, error=Read-only file system",
        ],
        &run,
    );
}

#[test]
fn o_direct_where_the_filesystem_has_none_fails_with_einval_and_leaves_nothing() {
    let p = place();
    let _fs = need!(Mounted::new("ramfs", "", &p.work));
    // The file is laid out, then the job's O_DIRECT open fails: the file
    // iolab made for a run that measured nothing is removed.
    let run = |fmt: &str| {
        run_in(
            &p,
            &p.work,
            &["--name=x", "--size=64k", "--rw=read", "--direct=1", fmt],
        )
    };
    failed_before_io(
        &p,
        &p.work,
        22,
        &["job `x`", "O_DIRECT", "Invalid argument", "ramfs"],
        &run,
    );
}

/// The unprivileged user the tests run iolab as.
const NOBODY: u32 = 65534;

/// A place for a run as an unprivileged user: the iolab binary linked (or
/// copied) where that user can run it, a home it owns for the database,
/// and a work directory it owns with mode `work_mode`; why not when users
/// cannot be switched (not root, no setpriv).
struct Unprivileged {
    /// One at a time: RLIMIT_NPROC counts every task of the user, so one
    /// test's threads would take room from another's.
    _serial: std::sync::MutexGuard<'static, ()>,
    _tmp: tempfile::TempDir,
    bin: PathBuf,
    home: PathBuf,
    work: PathBuf,
    db: PathBuf,
}

impl Unprivileged {
    fn new(work_mode: u32) -> Result<Unprivileged, Missing> {
        static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let switched = Proc::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
            .status()
            .is_ok_and(|s| s.success());
        if !switched {
            return Err(Missing::here(
                "cannot run as an unprivileged user (needs root and setpriv)",
            ));
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = tmp.path().join("iolab");
        let built = assert_cmd::cargo::cargo_bin("iolab");
        if std::fs::hard_link(&built, &bin).is_err() {
            std::fs::copy(&built, &bin).unwrap();
        }
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        for (d, mode) in [(&home, 0o700), (&work, work_mode)] {
            std::fs::create_dir(d).unwrap();
            std::os::unix::fs::chown(d, Some(NOBODY), Some(NOBODY)).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Ok(Unprivileged {
            _serial: serial,
            db: home.join("results.db"),
            bin,
            home,
            work,
            _tmp: tmp,
        })
    }

    /// `PRE... iolab run --directory=WORK --db=DB ARGS` as the user, where
    /// PRE is a wrapper such as prlimit and its options.
    fn run(&self, pre: &[&str], args: &[&str]) -> Output {
        let mut all = vec![
            "run".to_string(),
            format!("--directory={}", self.work.display()),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        self.iolab(pre, &all)
    }

    /// `PRE... iolab ARGS --db=DB` as the user.
    fn iolab(&self, pre: &[&str], args: &[String]) -> Output {
        Proc::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(pre)
            .arg(&self.bin)
            .args(args)
            .arg(format!("--db={}", self.db.display()))
            .current_dir(&self.home)
            .env("HOME", &self.home)
            .env("IOLAB_DB", &self.db)
            .output()
            .unwrap()
    }
}

#[test]
fn a_directory_the_user_cannot_write_fails_the_layout_with_eacces() {
    let u = need!(Unprivileged::new(0o500));
    let p = Place {
        _tmp: tempfile::tempdir().unwrap(),
        work: u.work.clone(),
        db: u.db.clone(),
    };
    let run = |fmt: &str| u.run(&[], &["--name=x", "--size=64k", "--rw=write", fmt]);
    failed_before_io(
        &p,
        &u.work,
        13,
        &[
            "job `x`: err=13/file:",
            "func=open, error=Permission denied",
        ],
        &run,
    );
}

/// A limit on the unprivileged user's processes and threads that leaves
/// room for a few of iolab's threads, and none for dozens. RLIMIT_NPROC
/// counts every task of the user, so other processes it runs leave fewer.
const NPROC: &str = "--nproc=16";

#[test]
fn a_worker_thread_that_cannot_be_created_stops_the_run_with_an_error() {
    let u = need!(Unprivileged::new(0o700));
    // Job a runs first and does its I/O; job b (after a stonewall) needs
    // 64 threads where the limit leaves about a dozen. b's clones run
    // until they are stopped, so that the ones started are all alive
    // when the limit is met: clones that each wrote their 64 KiB and
    // ended before the next were made would never reach it.
    let o = u.run(
        &["prlimit", NPROC],
        &[
            "--output-format=json",
            "--unlink=1",
            "--size=64k",
            "--rw=write",
            "--name=a",
            "--numjobs=2",
            "--name=b",
            "--stonewall",
            "--numjobs=64",
            "--time_based",
            "--runtime=60",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("job `b`: cannot create the thread of clone"),
        "{err}"
    );
    assert!(
        err.contains("err=11, Resource temporarily unavailable"),
        "{err}"
    );
    assert!(err.contains("ulimit -u"), "{err}");
    assert!(err.contains("already started were stopped"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let json = json_of(&o.stdout);
    let jobs = json["jobs"].as_array().unwrap();
    // Every clone is reported: a's with their I/O, b's failed clone with
    // fio's error field, the others with what they did before the stop.
    assert_eq!(jobs.len(), 66);
    for a in &jobs[..2] {
        assert_eq!(a["jobname"], "a");
        assert_eq!(a["write"]["io_bytes"], 65536);
        assert_eq!(a["error"], 0);
    }
    let failed: Vec<&Value> = jobs.iter().filter(|j| j["error"] != 0).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["jobname"], "b");
    assert_eq!(failed[0]["error"], 11);
    // unlink=1: every file the run made is gone.
    assert_eq!(entries(&u.work), Vec::<String>::new());
}

#[test]
fn metadata_threads_that_cannot_be_created_are_an_error() {
    let u = need!(Unprivileged::new(0o700));
    let o = u.iolab(
        &["prlimit", NPROC],
        &[
            "meta".to_string(),
            u.work.display().to_string(),
            "--threads=64".to_string(),
            "--files=1000".to_string(),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("create phase: cannot create its 64 worker threads"),
        "{err}"
    );
    assert!(err.contains("ulimit -u"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(entries(&u.work), Vec::<String>::new());
}
