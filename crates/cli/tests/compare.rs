//! `iolab compare` end to end: ext4, xfs and btrfs on small loop images
//! with skipped targets beside them; refusals of `--device` without
//! `--destroy-data` and of a mounted device; `kill -9` mid-workload then
//! `--cleanup`; directory targets without root. Tests that need root or a
//! mkfs tool print one line saying why they skip.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use common::iolab;

fn is_root() -> bool {
    iolab_lab::is_root()
}

fn need_root(fs: &[&str]) -> bool {
    if !is_root() {
        eprintln!("skipped: needs root (loop devices, mkfs, mount)");
        return false;
    }
    for f in fs {
        if let iolab_lab::support::Support::Missing(why) = iolab_lab::support::check(f) {
            eprintln!("skipped: {why}");
            return false;
        }
    }
    true
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mounts_mention(p: &Path) -> bool {
    std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .contains(&p.display().to_string())
}

fn loops_mention(p: &Path) -> bool {
    let out = Proc::new("losetup").arg("-a").output().unwrap();
    text(&out.stdout).contains(&p.display().to_string())
}

#[test]
fn three_filesystems_side_by_side_with_skipped_targets() {
    if !need_root(&["ext4", "xfs", "btrfs"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let out = iolab()
        .args([
            "compare",
            "--fs",
            "ext4,xfs,btrfs,nosuchfs,f2fs",
            "--size",
            "320M",
        ])
        .args([
            "--repeat",
            "1",
            "--runtime",
            "1",
            "--baseline",
            "ext4",
            "--workdir",
        ])
        .arg(&work)
        .timeout(Duration::from_secs(100))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    for t in ["ext4 (baseline)", "xfs", "btrfs", "nosuchfs", "f2fs"] {
        assert!(lines[0].contains(t), "{t} missing from {}", lines[0]);
    }
    let status: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(status, ["status", "ok", "ok", "ok", "skipped", "skipped"]);
    // Every metric row has a number for each measured filesystem and `-`
    // for the skipped ones.
    for row in [
        "mkfs time",
        "first mount",
        "cold mount",
        "size",
        "available",
        "inodes total",
        "cached reads",
        "device reads",
        "seqwrite-1m write  ",
        "seqread-1m read  ",
        "randread-4k read  ",
        "randwrite-4k write  ",
        "randwrite-4k write clat p99",
    ] {
        let line = lines
            .iter()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row `{row}` in\n{stdout}"));
        let cells: Vec<&str> = line.split("  ").filter(|c| !c.trim().is_empty()).collect();
        let values = &cells[cells.len() - 5..];
        for v in &values[..3] {
            let n: f64 = v
                .trim()
                .trim_start_matches('*')
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap_or_else(|_| panic!("`{v}` in {line}"));
            assert!(n >= 0.0);
        }
        assert_eq!(values[3].trim(), "-", "{line}");
        assert_eq!(values[4].trim(), "-", "{line}");
    }
    assert!(
        stdout.contains("nosuchfs: skipped: unknown filesystem `nosuchfs`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("f2fs: skipped:") && stdout.contains("f2fs"),
        "{stdout}"
    );
    assert!(stdout.contains("xN = ratio to ext4"));
    // Everything the lab made is gone, the workdir it created included.
    assert!(!work.exists());
    assert!(!mounts_mention(dir.path()) && !loops_mention(dir.path()));
}

#[test]
fn device_without_destroy_data_is_refused() {
    let out = iolab()
        .args(["compare", "--fs", "ext4", "--device", "/dev/loop0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    if is_root() {
        assert!(
            err.contains("/dev/loop0") && err.contains("--destroy-data"),
            "{err}"
        );
    } else {
        assert!(
            err.contains("needs root") && err.contains("--target"),
            "{err}"
        );
    }
}

/// A loop device with a mounted ext4, taken down on drop.
struct Mounted {
    dev: PathBuf,
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mounted {
    fn new() -> Mounted {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("held.img");
        iolab_lab::image::create_sparse(&img, 64 << 20).unwrap();
        let dev = iolab_lab::loopdev::attach(&img).unwrap();
        let mnt = dir.path().join("held mnt");
        std::fs::create_dir(&mnt).unwrap();
        let m = Mounted {
            dev,
            mnt,
            _dir: dir,
        };
        let ok = Proc::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&m.dev)
            .status()
            .unwrap();
        assert!(ok.success());
        iolab_lab::mount::mount("ext4", &m.dev, &m.mnt, None).unwrap();
        m
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = iolab_lab::mount::umount(&self.mnt);
        let _ = iolab_lab::loopdev::detach(&self.dev);
    }
}

#[test]
fn mounted_device_is_refused_with_its_mount_point() {
    if !need_root(&["ext4"]) {
        return;
    }
    let m = Mounted::new();
    let out = iolab()
        .args(["compare", "--fs", "ext4", "--destroy-data", "--device"])
        .arg(&m.dev)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("refusing to use {}", m.dev.display())),
        "{err}"
    );
    assert!(
        err.contains(&format!("mounted at {}", m.mnt.display())),
        "{err}"
    );
    // Nothing was formatted: the filesystem is still mounted and readable.
    assert!(mounts_mention(&m.mnt) || std::fs::read_dir(&m.mnt).is_ok());
    assert!(m.mnt.join("lost+found").is_dir());
}

#[test]
fn kill_9_mid_workload_then_cleanup_leaves_nothing() {
    if !need_root(&["ext4"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("killed");
    let mut child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", common::test_db())
        .args([
            "compare",
            "--fs",
            "ext4",
            "--size",
            "320M",
            "--repeat",
            "1",
            "--runtime",
            "30",
        ])
        .arg("--workdir")
        .arg(&work)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a workload's file exists on the mounted filesystem.
    let mnt = work.join("mnt-1-ext4");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let busy = mounts_mention(&mnt)
            && std::fs::read_dir(&mnt)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .any(|e| e.file_name().to_string_lossy().starts_with("seq"))
                })
                .unwrap_or(false);
        if busy {
            break;
        }
        assert!(Instant::now() < deadline, "the workload never started");
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!("iolab ended early: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        mounts_mention(&work) && loops_mention(&work),
        "the kill left the state to clean"
    );

    let out = iolab()
        .args(["compare", "--cleanup", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("unmounted {}", mnt.display())),
        "{stdout}"
    );
    assert!(stdout.contains("detached /dev/loop"), "{stdout}");
    assert!(!mounts_mention(&work), "still mounted");
    assert!(!loops_mention(&work), "loop device still attached");
    assert!(
        !work.exists(),
        "workdir left: {:?}",
        std::fs::read_dir(&work).map(|d| d.count())
    );
    // A second cleanup finds nothing.
    let again = iolab()
        .args(["compare", "--cleanup", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0));
}

/// Runs iolab as `nobody` when this test runs as root, so that the
/// directory targets are shown to work without root (with no results
/// database: nobody has no home to keep one in).
fn as_unprivileged(args: &[&str]) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let mut args = args.to_vec();
    if args.first() == Some(&"compare") {
        args.push("--no-store");
    }
    if is_root() {
        Proc::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin)
            .args(args)
            .output()
            .unwrap()
    } else {
        Proc::new(bin).args(args).output().unwrap()
    }
}

fn open_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

#[test]
fn directory_targets_without_root() {
    let (a, b, w) = (open_dir(), open_dir(), open_dir());
    let out_file = w.path().join("cmp.json");
    let ta = format!("A={}", a.path().display());
    let tb = format!("B={}", b.path().display());
    let work = w.path().join("work");
    let args = [
        "compare",
        "--target",
        &ta,
        "--target",
        &tb,
        "--size",
        "64M",
        "--repeat",
        "1",
        "--runtime",
        "1",
        "--baseline",
        "A",
        "--output-format",
        "json",
        "--output",
        out_file.to_str().unwrap(),
        "--workdir",
        work.to_str().unwrap(),
    ];
    let out = as_unprivileged(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let c = &v["iolab compare"];
    let labels: Vec<&str> = c["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["A", "B"]);
    let mbs = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "seqwrite-1m.write.mb_s")
        .unwrap();
    assert!(mbs["values"]["A"]["median"].as_f64().unwrap() > 0.0);
    assert_eq!(mbs["values"]["A"]["ratio"], 1.0);
    // Each workload run's fio JSON travels with the comparison.
    let runs = c["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 4);
    assert!(
        runs[0]["fio"]["jobs"][0]["write"]["io_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Nothing left in the target directories.
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(b.path()).unwrap().count(), 0);
    assert!(!work.exists());
}

#[test]
fn formatting_without_root_says_so() {
    if !is_root() {
        let out = iolab().args(["compare", "--fs", "ext4"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains("needs root") && err.contains("--target"),
            "{err}"
        );
        return;
    }
    let out = as_unprivileged(&["compare", "--fs", "ext4"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("needs root") && err.contains("--target NAME=DIR"),
        "{err}"
    );
}

#[test]
fn bad_input_exits_2() {
    for args in [
        vec!["compare"],
        vec!["compare", "--fs", "../x"],
        vec!["compare", "--fs", "ext4", "--size", "huge"],
        vec!["compare", "--fs", "ext4", "--suite", "nope"],
        vec!["compare", "--fs", "ext4", "--output-format", "xml"],
        vec!["compare", "--target", "a=/nonexistent-iolab-dir"],
        vec![
            "compare",
            "--target",
            "a=/tmp",
            "--output",
            "/nonexistent-iolab-dir/cmp.txt",
        ],
    ] {
        let out = iolab().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).starts_with("iolab: "), "{args:?}");
        if args.contains(&"--output") {
            assert!(
                text(&out.stderr).contains("--output `/nonexistent-iolab-dir/cmp.txt`"),
                "{}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn list_suites_shows_the_jobs() {
    let out = iolab().args(["compare", "--list-suites"]).output().unwrap();
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("quick:") && s.contains("studies:"), "{s}");
    assert!(
        s.contains("[randrw-20-80]") && s.contains("rwmixread=20"),
        "{s}"
    );
}

#[test]
fn ctrl_c_mid_workload_cleans_up() {
    if !need_root(&["ext4"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("interrupted");
    let child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", common::test_db())
        .args([
            "compare",
            "--fs",
            "ext4",
            "--size",
            "320M",
            "--repeat",
            "1",
            "--runtime",
            "30",
        ])
        .arg("--workdir")
        .arg(&work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mnt = work.join("mnt-1-ext4");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(mounts_mention(&mnt)
        && std::fs::read_dir(&mnt)
            .map(|d| d.count() > 1)
            .unwrap_or(false))
    {
        assert!(Instant::now() < deadline, "the workload never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    assert!(Proc::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stdout.contains("interrupted: the numbers are partial"),
        "{stdout}"
    );
    assert!(!mounts_mention(&work) && !loops_mention(&work));
    assert!(!work.exists());
}

#[test]
fn a_named_device_is_formatted_for_each_filesystem_and_left_attached() {
    if !need_root(&["ext4", "xfs"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    iolab_lab::image::create_sparse(&img, 320 << 20).unwrap();
    let dev = iolab_lab::loopdev::attach(&img).unwrap();
    let out = iolab()
        .args([
            "compare",
            "--fs",
            "ext4,xfs",
            "--destroy-data",
            "--repeat",
            "1",
            "--runtime",
            "1",
        ])
        .args(["--output-format", "csv", "--device"])
        .arg(&dev)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let attached = iolab_lab::loopdev::backing_file(&dev);
    let _ = iolab_lab::loopdev::detach(&dev);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    for t in ["ext4", "xfs"] {
        assert!(
            stdout.contains(&format!("mkfs_s,mkfs time,s,{t},ok,")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("mount_cold_ms,cold mount,ms,{t},ok,")),
            "{stdout}"
        );
    }
    // The user's device is neither detached nor left mounted.
    assert_eq!(attached.as_deref(), Some(img.as_path()));
    assert!(!std::fs::read_to_string("/proc/mounts")
        .unwrap()
        .contains(&format!("{} ", dev.display())));
}

#[test]
fn user_job_files_run_in_each_target() {
    let (a, b, w) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let job = w.path().join("mixed.fio");
    std::fs::write(
        &job,
        "[global]\nsize=1m\nbs=64k\n[fill]\nrw=write\nfilename=data\nstonewall\n[check]\nrw=read\nfilename=data\nstonewall\n",
    )
    .unwrap();
    let out = iolab()
        .args([
            "compare",
            "--repeat",
            "1",
            "--output-format",
            "csv",
            "--job",
        ])
        .arg(&job)
        .arg("--target")
        .arg(format!("A={}", a.path().display()))
        .arg("--target")
        .arg(format!("B={}", b.path().display()))
        .arg("--workdir")
        .arg(w.path().join("work"))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    for t in ["A", "B"] {
        for row in ["mixed/fill.write.mb_s", "mixed/check.read.iops"] {
            assert!(
                stdout.contains(&format!("{row},")) && stdout.contains(&format!(",{t},ok,")),
                "{row} {t}\n{stdout}"
            );
        }
    }
    // The files were made inside the targets (and removed with the lab's
    // work directory), never beside the job file.
    assert!(!w.path().join("data").exists());
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);

    std::fs::write(&job, "[x]\nrw=read\nsize=4k\nfilename=/etc/hostname\n").unwrap();
    let out = iolab()
        .args(["compare", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("A={}", a.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("filename `/etc/hostname` is outside the target"),
        "{err}"
    );
}

#[test]
fn show_runs_prints_every_repeat() {
    let (a, w) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = w.path().join("small.fio");
    std::fs::write(&job, "[wr]\nrw=write\nbs=64k\nsize=1m\n").unwrap();
    let out = iolab()
        .args(["compare", "--repeat", "2", "--show-runs", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("A={}", a.path().display()))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let (table, runs) = stdout
        .split_once("Every run:\n")
        .expect("the runs follow the table");
    assert!(table.contains("median of 2 run(s)"), "{table}");
    let head = runs.lines().next().unwrap();
    assert!(head.ends_with("run 1  run 2"), "{head}");
    let row: Vec<&str> = runs
        .lines()
        .find(|l| l.starts_with("small write") && l.contains("MB/s"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row.len(), 6, "{row:?}");
    assert!(row[4].parse::<f64>().unwrap() > 0.0 && row[5].parse::<f64>().unwrap() > 0.0);
}

/// Waits until a mount under `under` has a workload file in it.
fn wait_for_workload(under: &Path, child: &mut std::process::Child) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
        let mnt = mounts
            .lines()
            .filter_map(|l| l.split(' ').nth(1))
            .map(PathBuf::from)
            .find(|m| m.starts_with(under));
        if let Some(m) = mnt {
            let busy = std::fs::read_dir(&m)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .any(|e| e.file_name().to_string_lossy().starts_with("seq"))
                })
                .unwrap_or(false);
            if busy {
                return m;
            }
        }
        assert!(Instant::now() < deadline, "the workload never started");
        assert!(child.try_wait().unwrap().is_none(), "iolab ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn second_ctrl_c_removes_everything_and_exits() {
    if !need_root(&["ext4"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("twice");
    let mut child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", common::test_db())
        .args(["compare", "--fs", "ext4", "--size", "320M", "--repeat", "1"])
        .args(["--runtime", "30", "--workdir"])
        .arg(&work)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_workload(&work, &mut child);
    let pid = child.id().to_string();
    for _ in 0..2 {
        assert!(Proc::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
    }
    let out = child.wait_with_output().unwrap();
    let code = out.status.code();
    assert!(
        code == Some(130) || code == Some(1),
        "{code:?}: {}",
        text(&out.stderr)
    );
    // A loop device detached while its filesystem was still busy goes
    // away when the kernel lets go of it, a moment after the exit.
    let deadline = Instant::now() + Duration::from_secs(3);
    while (mounts_mention(&work) || loops_mention(&work)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !mounts_mention(&work) && !loops_mention(&work),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !work.exists(),
        "left: {:?} {:?}",
        std::fs::read_dir(&work).map(|d| d
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect::<Vec<_>>()),
        std::fs::read_to_string(work.join("iolab-lab.state"))
    );
}

#[test]
fn the_next_compare_cleans_what_a_killed_run_left() {
    if !need_root(&["ext4"]) {
        return;
    }
    // A private temp dir: the default workdirs go there, and only there
    // does the next run look for leftovers.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", common::test_db())
        .args(["compare", "--fs", "ext4", "--size", "320M", "--repeat", "1"])
        .args(["--runtime", "30"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mnt = wait_for_workload(tmp.path(), &mut child);
    let workdir = mnt.parent().unwrap().to_path_buf();
    assert!(workdir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with(&format!("iolab-lab-{}-", child.id())));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(mounts_mention(&workdir) && loops_mention(&workdir));

    let target = tempfile::tempdir().unwrap();
    let job = tmp.path().join("tiny.fio");
    std::fs::write(&job, "[t]\nrw=write\nbs=64k\nsize=256k\n").unwrap();
    let out = iolab()
        .args(["compare", "--repeat", "1", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("T={}", target.path().display()))
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!mounts_mention(&workdir) && !loops_mention(&workdir));
    assert!(!workdir.exists());
}

#[test]
fn the_meta_suite_puts_metadata_rows_side_by_side() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = common::iolab()
        .args([
            "compare",
            "--suite",
            "meta",
            "--repeat",
            "1",
            "--output-format",
            "csv",
        ])
        .arg("--target")
        .arg(format!("a={}", a.display()))
        .arg("--target")
        .arg(format!("b={}", b.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for phase in [
        "create", "open", "utime", "stat", "readdir", "rename", "unlink",
    ] {
        for t in ["a", "b"] {
            assert!(
                text.lines()
                    .any(|l| l.contains(&format!("meta.{phase}.ops_s"))
                        && l.contains(&format!(",{t},"))),
                "no {phase} row for {t}:\n{text}"
            );
        }
    }
    // The files are gone from both targets.
    assert!(common::entries(&a).is_empty() && common::entries(&b).is_empty());
}
