//! Job options as a user sees them through `iolab run`: the exit code and
//! message of allow_file_create=0 and rate_min, the error count
//! continue_on_error prints (and, where the machine can make a device that
//! fails reads, the counts against the real fio's), and the files open at
//! once with openfiles, watched from outside the process; and the seeds
//! randrepeat and randseed give, read from the files two runs write.

mod common;
use common::*;
use iolab_testkit::{need, require, skip, skip_case};

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;

#[test]
fn allow_file_create_0_exits_1_naming_the_missing_file() {
    // fio 3.33 exits 1 with "file creation disallowed by
    // allow_file_create=0" (without the name).
    let dir = tempfile::tempdir().unwrap();
    iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--name=a",
            "--rw=write",
            "--size=64k",
            "--filename=absent",
            "--allow_file_create=0",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`absent` does not exist"))
        .stderr(predicate::str::contains("allow_file_create=0"));
    assert!(!dir.path().join("absent").exists());
}

#[test]
fn allow_file_create_0_does_not_stop_engines_without_a_device() {
    // fio 3.33 checks allow_file_create only for engines that lay files
    // out: filecreate creates its files itself, and null touches none.
    let dir = tempfile::tempdir().unwrap();
    for (engine, made) in [("filecreate", true), ("null", false)] {
        let name = format!("made_by_{engine}");
        iolab()
            .current_dir(dir.path())
            .args([
                "run",
                "--no-store",
                "--name=a",
                "--size=8k",
                "--allow_file_create=0",
            ])
            .arg(format!("--ioengine={engine}"))
            .arg(format!("--filename={name}"))
            .assert()
            .code(0);
        assert_eq!(dir.path().join(&name).exists(), made, "{engine}");
    }
}

#[test]
fn rate_min_exits_1_with_fios_message() {
    // fio 3.33: "r: rate_min=1048576B/s not met, got 398222B/s", the job's
    // error 5 (EIO) and exit status 1.
    let out = iolab()
        .args([
            "run",
            "--output-format=json",
            "--name=r",
            "--ioengine=null",
            "--filename=/nonexistent/n",
            "--size=1g",
            "--rw=read",
            "--thinktime=10ms",
            "--rate_min=1m",
            "--rate_cycle=500",
            "--time_based",
            "--runtime=20",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "rate_min=1048576B/s not met for reads, got ",
        ))
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_of(&out)["jobs"][0]["error"], 5);
}

#[test]
fn continue_on_error_prints_the_error_count_where_fio_does() {
    // A full filesystem (ENOSPC) stops the job even with
    // continue_on_error (fio goes on only after EIO and EILSEQ); the count
    // and the first error are printed as fio prints them.
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let _mounted = need!(Mounted::tmpfs(&mnt, "size=1m"));
    let args = |fmt: &str| {
        vec![
            "run".to_string(),
            format!("--output-format={fmt}"),
            "--name=e".into(),
            format!("--filename={}/f", mnt.display()),
            "--size=4m".into(),
            "--rw=write".into(),
            "--fallocate=none".into(),
            "--unlink=1".into(),
            "--continue_on_error=all".into(),
        ]
    };
    let out = iolab()
        .current_dir(dir.path())
        .args(args("json"))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let job = &json_of(&out)["jobs"][0];
    assert_eq!(job["total_err"], 1);
    assert_eq!(job["first_error"], 28);
    // fio's place: after the latency buckets, before latency_depth.
    let text = String::from_utf8_lossy(&out);
    let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
    assert!(at("latency_ms") < at("total_err"));
    assert!(at("total_err") < at("first_error"));
    assert!(at("first_error") < at("latency_depth"));

    let out = iolab()
        .current_dir(dir.path())
        .args(args("normal"))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let issued = lines
        .iter()
        .position(|l| l.starts_with("     issued rwts:"))
        .expect("issued line");
    assert_eq!(
        lines[issued + 1],
        "     errors    : total=1, first_error=28/<No space left on device>"
    );
    assert!(lines[issued + 2].starts_with("     latency   : target="));

    // Without continue_on_error fio prints neither.
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "--output-format=json", "--name=e", "--filename=f"])
        .args(["--size=64k", "--rw=read"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let job = &json_of(&out)["jobs"][0];
    assert!(job.get("total_err").is_none() && job.get("first_error").is_none());
}

/// An 8 MiB file on an ext4 filesystem on a loop device whose backing file
/// was cut short under it: reads of the blocks past the cut fail with EIO.
/// Unmounted and detached when dropped.
struct FailingFile {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
    loopdev: String,
    file: PathBuf,
}

impl FailingFile {
    fn make() -> Result<FailingFile, String> {
        let root = Proc::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        if !root {
            return Err("needs root for a loop device and a mount".into());
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        let mnt = dir.path().join("mnt");
        fs::create_dir(&mnt).unwrap();
        fs::File::create(&img)
            .and_then(|f| f.set_len(32 << 20))
            .map_err(|e| e.to_string())?;
        run("mkfs.ext4", &["-q", "-F", &img.display().to_string()])?;
        let loopdev = run("losetup", &["-f", "--show", &img.display().to_string()])?;
        let mut made = FailingFile {
            _dir: dir,
            file: mnt.join("data"),
            mnt,
            loopdev,
        };
        run("mount", &[&made.loopdev, &made.mnt.display().to_string()])
            .inspect_err(|_| made.mnt = PathBuf::new())?;
        let data: Vec<u8> = (0..8u32 << 20)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        fs::write(&made.file, data).map_err(|e| e.to_string())?;
        fs::File::open(&made.file)
            .and_then(|f| f.sync_all())
            .map_err(|e| e.to_string())?;
        // ext4 puts this file's data from about 10 MiB on: cut at 16.
        fs::OpenOptions::new()
            .write(true)
            .open(&img)
            .and_then(|f| f.set_len(16 << 20))
            .map_err(|e| e.to_string())?;
        run("losetup", &["-c", &made.loopdev])?;
        Ok(made)
    }
}

impl Drop for FailingFile {
    fn drop(&mut self) {
        if !self.mnt.as_os_str().is_empty() {
            let _ = Proc::new("umount").arg(&self.mnt).status();
        }
        let _ = Proc::new("losetup").args(["-d", &self.loopdev]).status();
    }
}

/// Runs a program; its trimmed stdout, or why it failed.
fn run(prog: &str, args: &[&str]) -> Result<String, String> {
    let out = Proc::new(prog)
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{prog}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{prog}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn error_counts(report: &[u8]) -> (u64, u64, u64, u64, i64) {
    let job = &json_of(report)["jobs"][0];
    let n = |v: &Value| v.as_u64().unwrap();
    (
        n(&job["total_err"]),
        job["first_error"].as_u64().unwrap(),
        n(&job["read"]["io_bytes"]),
        n(&job["read"]["total_ios"]),
        job["read"]["clat_ns"]["N"].as_i64().unwrap(),
    )
}

#[test]
fn continue_on_error_goes_on_after_eio_and_counts_as_fio() {
    let failing = match FailingFile::make() {
        Ok(f) => f,
        Err(why) => {
            skip!("cannot make a file that fails reads: {why}");
        }
    };
    let args = [
        "--output-format=json".to_string(),
        "--name=e".into(),
        format!("--filename={}", failing.file.display()),
        "--rw=read".into(),
        "--bs=4k".into(),
        "--direct=1".into(),
        "--continue_on_error=all".into(),
    ];
    // fio 3.33 on such a file: exit 0, total_err=513, first_error=5, the
    // failed reads counted in total_ios (2048) but not in io_bytes or clat.
    let out = iolab()
        .arg("run")
        .args(&args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let (errs, first, bytes, ios, clat_n) = error_counts(&out);
    if errs == 0 {
        skip!("the filesystem placed the file below the cut");
    }
    assert_eq!(first, 5, "EIO");
    assert_eq!(ios, 2048, "every read is counted");
    assert_eq!(bytes + errs * 4096, 8 << 20);
    assert_eq!(clat_n as u64, ios - errs);
    let fio = Proc::new("fio").args(&args).output();
    match fio {
        Ok(o) if o.status.success() => {
            assert_eq!(error_counts(&o.stdout), (errs, first, bytes, ios, clat_n));
        }
        Ok(o) => skip_case!(
            "the comparison with fio: fio failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => skip_case!("the comparison with fio: {e}"),
    }
    // Without continue_on_error the first failed read stops the job.
    iolab()
        .arg("run")
        .args(&args[..6])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("EIO"));
}

/// The files under `dir` that process `pid` has open now, in any of its
/// threads (a worker has a descriptor table of its own).
fn open_files(pid: u32, dir: &Path) -> BTreeSet<PathBuf> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return BTreeSet::new();
    };
    tasks
        .filter_map(|t| fs::read_dir(t.ok()?.path().join("fd")).ok())
        .flatten()
        .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .filter(|p| p.starts_with(dir))
        .collect()
}

#[test]
fn openfiles_keeps_at_most_n_files_open_and_moves_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut child = Proc::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--output-format=json",
            "--name=o",
            "--nrfiles=8",
            "--openfiles=2",
            "--filesize=64k",
            "--rw=randread",
            "--time_based",
            "--runtime=1500ms",
        ])
        .arg(format!("--directory={}", root.display()))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (mut most, mut seen) = (0, BTreeSet::new());
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let open = open_files(child.id(), &root);
        most = most.max(open.len());
        seen.extend(open);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(child.wait().unwrap().success());
    assert!(most >= 1, "saw the job's files open");
    assert!(most <= 2, "{most} files open at once");
    assert!(seen.len() > 2, "the job moved on: {seen:?}");
}

/// From a `strace -f -ttt -T` trace: when the first pwrite64 began and
/// when the last fsync returned (seconds), and how many fsyncs there were.
fn traced_span(trace: &str) -> (f64, f64, usize) {
    let (mut first_write, mut last_sync_end, mut syncs) = (f64::MAX, 0f64, 0);
    for l in trace.lines() {
        let mut f = l.split_whitespace();
        let (Some(_pid), Some(t), Some(call)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (Ok(t), Some(dur)) = (t.parse::<f64>(), l.rsplit_once('<')) else {
            continue;
        };
        let Ok(dur) = dur.1.trim_end_matches('>').parse::<f64>() else {
            continue;
        };
        if call.starts_with("pwrite64(") {
            first_write = first_write.min(t);
        } else if call.starts_with("fsync(") {
            syncs += 1;
            last_sync_end = last_sync_end.max(t + dur);
        }
    }
    (first_write, last_sync_end, syncs)
}

#[test]
fn end_fsync_and_fsync_on_close_are_inside_the_runtime() {
    // fio times a job until its end_fsync (and the fsync of
    // fsync_on_close) returns: a "buffered write with fsync at the end"
    // measures the device, not the page cache.
    require!(strace);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for opt in ["--end_fsync=1", "--fsync_on_close=1"] {
        let (out, trace) = common::strace_iolab_run(
            dir.path(),
            &["-ttt", "-T", "-e", "trace=pwrite64,fsync"],
            &[
                "--name=w",
                "--ioengine=psync",
                "--filename=f",
                "--rw=write",
                "--bs=1m",
                "--size=64m",
                opt,
            ],
        );
        assert!(out.status.success(), "{opt}: {out:?}");
        let v = json_of(&out.stdout);
        let (first_write, sync_end, syncs) = traced_span(&trace);
        assert_eq!(syncs, 1, "{opt}: one fsync at the end");
        // The JSON runtime is in whole milliseconds, rounded down; the job
        // began before its first write and ended after its fsync.
        let runtime_ms = v["jobs"][0]["write"]["runtime"].as_u64().unwrap() + 1;
        let span_ms = (sync_end - first_write) * 1e3;
        assert!(
            runtime_ms as f64 >= span_ms,
            "{opt}: the job's runtime ({runtime_ms} ms) is shorter than its writes and fsync ({span_ms:.1} ms)"
        );
        fs::remove_file(dir.path().join("f")).unwrap();
    }
}

#[test]
fn a_mounted_block_device_is_not_written_to() {
    // fio's allow_mounted_write=0: writing under a mounted filesystem
    // corrupts it, so iolab refuses before anything runs; reading is fine.
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(LoopFs::new(dir.path(), "ext4", 64, ""));
    fs::write(fs.mnt.join("keep"), b"data that must survive").unwrap();
    let src = Proc::new("findmnt")
        .args(["-n", "-o", "SOURCE"])
        .arg(&fs.mnt)
        .output()
        .unwrap();
    let dev = String::from_utf8_lossy(&src.stdout).trim().to_string();
    assert!(dev.starts_with("/dev/loop"), "{dev}");
    for rw in ["write", "randwrite", "trim", "rw"] {
        iolab()
            .args(["run", "--name=w", "--bs=1m", "--size=4m"])
            .arg(format!("--filename={dev}"))
            .arg(format!("--rw={rw}"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "{dev} is mounted at {}",
                fs.mnt.display()
            )))
            .stderr(predicate::str::contains("allow_mounted_write=1"));
    }
    iolab()
        .args(["run", "--name=r", "--rw=read", "--bs=1m", "--size=4m"])
        .arg(format!("--filename={dev}"))
        .assert()
        .success();
    assert_eq!(
        fs::read(fs.mnt.join("keep")).unwrap(),
        b"data that must survive"
    );
}

#[test]
fn fadvise_hint_chooses_the_advice_given_at_open() {
    require!(strace);
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let advice = |rw: &str, hint: Option<&str>| -> Vec<String> {
        let trace = dir.path().join("trace");
        let mut cmd = Proc::new("strace");
        cmd.args(["-f", "-e", "trace=fadvise64", "-o"])
            .arg(&trace)
            .arg(assert_cmd::cargo::cargo_bin("iolab"))
            .current_dir(dir.path())
            .args(["run", "--no-store", "--name=a", "--filename=f", "--bs=4k"])
            .args(["--size=1m", "--invalidate=0", &format!("--rw={rw}")]);
        if let Some(h) = hint {
            cmd.arg(format!("--fadvise_hint={h}"));
        }
        assert!(cmd.output().unwrap().status.success());
        fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .filter(|l| l.contains("fadvise64("))
            .filter_map(|l| {
                let a = l.split(", ").nth(3)?;
                Some(a.split(')').next()?.to_string())
            })
            .collect()
    };
    // fio's default: the job's pattern.
    assert_eq!(advice("randread", None), ["POSIX_FADV_RANDOM"]);
    assert_eq!(advice("read", None), ["POSIX_FADV_SEQUENTIAL"]);
    assert_eq!(advice("randread", Some("0")), Vec::<String>::new());
    assert_eq!(
        advice("randread", Some("sequential")),
        ["POSIX_FADV_SEQUENTIAL"]
    );
    assert_eq!(advice("read", Some("random")), ["POSIX_FADV_RANDOM"]);
}

/// The write order of a file written with the default (scrambled) data,
/// in 4 KiB blocks.
fn write_order(path: &Path) -> Vec<u64> {
    iolab_testkit::stamps::write_order(path, 4096)
}

/// Two random-write runs with `opts`, to files `a` and `b`; their bytes.
fn two_runs(dir: &Path, opts: &[&str]) -> [Vec<u8>; 2] {
    ["a", "b"].map(|f| {
        let name = format!("--filename={f}");
        let mut args = vec!["--name=x", "--rw=randwrite", "--bs=4k", "--size=1m", &name];
        args.extend_from_slice(opts);
        run_json(dir, &args);
        fs::read(dir.join(f)).unwrap()
    })
}

#[test]
fn randrepeat_0_draws_new_offsets_each_run_and_randseed_repeats_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The default (randrepeat=1): the same offsets in the same order;
    // the data differs, as fio's does.
    let [a, b] = two_runs(d, &[]);
    assert_eq!(write_order(&d.join("a")), write_order(&d.join("b")));
    assert_ne!(a, b, "the data of two runs should differ");

    // randrepeat=0: another order each run, other data.
    let [a, b] = two_runs(d, &["--randrepeat=0"]);
    let (oa, ob) = (write_order(&d.join("a")), write_order(&d.join("b")));
    assert_ne!(
        oa, ob,
        "randrepeat=0 wrote the blocks in the same order twice"
    );
    assert_ne!(a, b);
    // Each still writes every block once.
    let mut sorted = oa.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=256).collect::<Vec<u64>>());

    // A randseed the job gives wins over randrepeat=0: identical files.
    let [a, b] = two_runs(d, &["--randrepeat=0", "--randseed=5"]);
    assert!(a == b, "randseed=5 should repeat offsets and data");
}

#[test]
fn each_worker_opens_its_files_in_a_descriptor_table_of_its_own() {
    // A table the thread does not share lets the kernel skip reference
    // counting of the file on every read and write: the worker's files show
    // under its own task, not in the process's (main thread's) table.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::write(root.join("f"), vec![1u8; 1 << 20]).unwrap();
    let mut child = Proc::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--no-store", "--name=p", "--rw=randread", "--bs=4k"])
        .args(["--filename=f", "--size=1m", "--time_based", "--runtime=2"])
        .current_dir(&root)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut seen_in_task = false;
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end && child.try_wait().unwrap().is_none() {
        if !open_files(pid, &root).is_empty() {
            seen_in_task = true;
            let main: BTreeSet<PathBuf> = fs::read_dir(format!("/proc/{pid}/fd"))
                .map(|d| {
                    d.filter_map(|e| fs::read_link(e.ok()?.path()).ok())
                        .filter(|p| p.starts_with(&root))
                        .collect()
                })
                .unwrap_or_default();
            assert!(main.is_empty(), "the main thread's table holds {main:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    assert!(seen_in_task, "the worker's file was seen open");
}

#[test]
fn a_device_held_by_another_opener_is_written_only_with_allow_mounted_write() {
    // No mount, no holder in sysfs: only the kernel's refusal of an
    // exclusive open says the device is claimed.
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("img");
    fs::File::create(&img).unwrap().set_len(16 << 20).unwrap();
    let lo = need!(LoopDev::attach(&img));
    use std::os::unix::fs::OpenOptionsExt;
    let held = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .unwrap();
    let job = ["run", "--name=w", "--rw=write", "--bs=1m", "--size=4m"];
    iolab()
        .args(job)
        .arg(format!("--filename={}", lo.dev))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("{} is busy", lo.dev)));
    iolab()
        .args(job)
        .args(["--no-store", "--allow_mounted_write=1"])
        .arg(format!("--filename={}", lo.dev))
        .assert()
        .success();
    drop(held);
    // Once nobody holds it, the device takes writes without the option.
    // (A probe of the device after the writes above, such as udev's, may
    // hold it for a moment: wait until an exclusive open succeeds.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&lo.dev)
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{} stays held",
            lo.dev
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    iolab()
        .args(job)
        .arg("--no-store")
        .arg(format!("--filename={}", lo.dev))
        .assert()
        .success();
}
