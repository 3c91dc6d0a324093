//! `iolab compare` end to end: ext4, xfs and btrfs on small loop images
//! with skipped targets beside them; refusals of `--device` without
//! `--destroy-data` and of a mounted device; `kill -9` mid-workload then
//! `--cleanup`; directory targets without root. Tests that need root or a
//! mkfs tool print one line saying why they skip.

mod common;

use iolab_testkit::{require, skip};
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use common::{basic_compare, basic_compare_proc, iolab, BASIC_COMPARE};

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
    require!(root, filesystems = &["ext4", "xfs", "btrfs"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let db = dir.path().join("results.db");
    let out = basic_compare(&["--fs", "ext4,xfs,btrfs,nosuchfs,f2fs", "--size", "1G"])
        .env("IOLAB_DB", &db)
        .args(["--runtime", "1", "--baseline", "ext4", "--workdir"])
        .arg(&work)
        .timeout(Duration::from_secs(150))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0], "iolab compare: ext4 vs xfs vs btrfs vs nosuchfs vs f2fs",
        "{stdout}"
    );
    let head = lines.iter().find(|l| l.starts_with("metric")).unwrap();
    for t in ["ext4 (baseline)", "xfs", "btrfs", "nosuchfs", "f2fs"] {
        assert!(head.contains(t), "{t} missing from {head}");
    }
    // Under the title, each target: how it was made, or why it was
    // skipped.
    for (i, t) in ["ext4 (baseline): ", "xfs: ", "btrfs: "].iter().enumerate() {
        assert!(
            lines[1 + i].starts_with(t) && !lines[1 + i].contains("skipped"),
            "{stdout}"
        );
    }
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
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("`{v}` in {line}"));
            assert!(n >= 0.0);
        }
        assert_eq!(values[3].trim(), "-", "{line}");
        assert_eq!(values[4].trim(), "-", "{line}");
    }
    assert!(
        stdout.contains("\nnosuchfs: skipped: unknown filesystem `nosuchfs`: neither the kernel nor a mkfs.nosuchfs on PATH knows it\n"),
        "{stdout}"
    );
    let f2fs = f2fs_reason();
    assert!(
        stdout.contains(&format!("\nf2fs: skipped: {f2fs}\n")),
        "expected `{f2fs}` in\n{stdout}"
    );
    assert!(stdout.contains("xN: the ratio to ext4"), "{stdout}");
    // Everything the lab made is gone, the workdir it created included.
    assert!(!work.exists());
    assert!(!mounts_mention(dir.path()) && !loops_mention(dir.path()));
    // The stored comparison is found by each filesystem it measured, not
    // by the one it skipped.
    for (fs, found) in [("xfs", true), ("btrfs", true), ("f2fs", false)] {
        let h = iolab()
            .env("IOLAB_DB", &db)
            .args(["history", "--kind", "compare", "--fs", fs])
            .output()
            .unwrap();
        let h = text(&h.stdout);
        let line = h.lines().find(|l| l.contains(" compare "));
        assert_eq!(line.is_some(), found, "{fs}:\n{h}");
        if let Some(l) = line {
            assert!(
                l.contains("ext4,xfs,btrfs") && l.contains("ext4=loop image"),
                "{l}"
            );
        }
    }
}

/// A formatted target records which mkfs made it (its path, version and
/// options), which mount program and kernel mounted it, the options asked
/// for and those in effect as /proc/self/mountinfo lists them; the host
/// section names the virtual machine, if any. In the JSON and in the
/// stored result alike.
#[test]
fn a_formatted_target_records_its_mkfs_and_mount() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let db = dir.path().join("results.db");
    let json = dir.path().join("cmp.json");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["compare", "--fs", "ext4:-b 4096@noatime", "--size", "64M"])
        .args(["--suite", "basic", "--repeat", "1", "--runtime", "1"])
        .args(["--output-format", "json", "--output"])
        .arg(&json)
        .arg("--workdir")
        .arg(&work)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &v["iolab compare"];
    let s = &c["targets"][0]["setup"];
    assert_eq!(s["fs_type"], "ext4", "{s}");
    assert!(
        s["mkfs_tool"].as_str().unwrap().ends_with("/mkfs.ext4"),
        "{s}"
    );
    let mke2fs = Proc::new(s["mkfs_tool"].as_str().unwrap())
        .arg("-V")
        .output()
        .unwrap();
    let said = format!("{}{}", text(&mke2fs.stdout), text(&mke2fs.stderr));
    assert_eq!(
        s["mkfs_version"],
        said.lines().next().unwrap().trim(),
        "{s}"
    );
    assert_eq!(
        s["mkfs_options"],
        serde_json::json!(["-F", "-q", "-b", "4096"]),
        "{s}"
    );
    assert!(s["mount_version"].as_str().unwrap().contains('.'), "{s}");
    let uname = Proc::new("uname").arg("-r").output().unwrap();
    assert_eq!(s["kernel"], text(&uname.stdout).trim(), "{s}");
    assert_eq!(s["mount_options_asked"], "noatime", "{s}");
    // In effect: what was asked and what the kernel added (rw at least).
    let effective: Vec<&str> = s["mount_options"].as_str().unwrap().split(',').collect();
    assert!(
        effective.contains(&"noatime") && effective.contains(&"rw"),
        "{s}"
    );
    assert!(
        s["mount_source"].as_str().unwrap().starts_with("/dev/loop"),
        "{s}"
    );
    match iolab_core::virt::detect() {
        Some(vm) => assert_eq!(c["host"]["hypervisor"]["name"], vm.name.as_str()),
        None => assert!(c["host"]["hypervisor"].is_null(), "{}", c["host"]),
    }
    // The stored comparison keeps the same facts.
    let rec = iolab_store::Store::open(&db)
        .unwrap()
        .get(1)
        .unwrap()
        .unwrap()
        .record;
    let stored: iolab_stats::Comparison = serde_json::from_str(&rec.result_json).unwrap();
    let setup = stored.targets[0].setup.as_ref().unwrap();
    assert_eq!(serde_json::to_value(setup).unwrap(), *s);
    assert_eq!(stored.host.as_ref().unwrap().kernel, setup.kernel);
    assert!(!work.exists());
}

/// Why f2fs is skipped on this host, as the lab words it: the kernel
/// lacks it, and mkfs.f2fs may be missing as well.
fn f2fs_reason() -> String {
    let kernel = "the kernel does not support f2fs (not in /proc/filesystems, no loadable module)";
    if iolab_lab::exec::find_program("mkfs.f2fs").is_some() {
        kernel.to_string()
    } else {
        format!("{kernel} and mkfs.f2fs is not installed (not on PATH)")
    }
}

#[test]
fn device_without_destroy_data_is_refused() {
    let out = iolab()
        .args(["compare", "--fs", "ext4", "--device", "/dev/loop0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    if iolab_testkit::req::is_root() {
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
        std::fs::write(m.mnt.join("mine"), b"still here").unwrap();
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
    require!(root, filesystems = &["ext4"]);
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
    // Nothing was formatted or unmounted: the filesystem is still mounted
    // there, with the file written on it before.
    assert!(mount_point_of(&m.dev).as_deref() == Some(m.mnt.as_path()));
    assert_eq!(std::fs::read(m.mnt.join("mine")).unwrap(), b"still here");
}

/// Where `dev` is mounted, from /proc/mounts (octal escapes decoded).
fn mount_point_of(dev: &Path) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    mounts.lines().find_map(|l| {
        let mut f = l.split(' ');
        (f.next()? == dev.to_str()?).then(|| PathBuf::from(f.next().unwrap().replace("\\040", " ")))
    })
}

#[test]
fn kill_9_mid_workload_then_cleanup_leaves_nothing() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("killed");
    let mut child = basic_compare_proc(&["--fs", "ext4", "--size", "320M", "--runtime", "30"])
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
    // While the workload runs, the loop device reads its image with
    // direct I/O (the image is not cached a second time).
    let img = work.join("1-ext4.img");
    let devs = iolab_lab::loopdev::devices_backed_by(&img);
    let dio: Vec<Option<bool>> = devs
        .iter()
        .map(|d| iolab_lab::loopdev::direct_io(d))
        .collect();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(devs.len(), 1, "{devs:?}");
    assert_eq!(dio, [Some(true)], "{} loop/dio", devs[0].display());
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
    // A second cleanup finds nothing, and says so.
    let again = iolab()
        .args(["compare", "--cleanup", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        text(&again.stdout),
        format!("nothing to clean in {} (no state file)\n", work.display())
    );
    assert_eq!(text(&again.stderr), "");
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
    if iolab_testkit::req::is_root() {
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
        &BASIC_COMPARE[..],
        &[
            "--target",
            &ta,
            "--target",
            &tb,
            "--size",
            "64M",
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
        ],
    ]
    .concat();
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
    // A directory target says what holds it; the lab made nothing there.
    let setup = &c["targets"][0]["setup"];
    let held = iolab_core::probe::probe(a.path());
    assert_eq!(setup["fs_type"], held.fs_type.as_str(), "{setup}");
    assert_eq!(
        setup["mount_options"],
        held.mount_options.as_str(),
        "{setup}"
    );
    assert_eq!(setup["mkfs_tool"], "", "{setup}");
    assert!(c["host"]["kernel"].as_str().is_some_and(|k| !k.is_empty()));
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
    if !iolab_testkit::req::is_root() {
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
        vec!["compare", "--target", "a=/tmp", "--repeat", "0"],
        vec!["compare", "--target", "a=/tmp", "--target", "a=/"],
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
        // A value the flag's parser refuses is clap's error, naming the flag.
        let err = text(&out.stderr);
        assert!(
            err.starts_with("iolab: ")
                || err.starts_with("error: invalid value 'huge' for '--size")
                || err.starts_with("error: invalid value 'xml' for '--output-format"),
            "{args:?}: {err}"
        );
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
fn bcache_input_is_checked_before_anything_runs() {
    for (args, says) in [
        (
            vec!["compare", "--fs", "ext4", "--bcache", "fast"],
            "`fast` is not a bcache mode (writethrough, writeback, writearound or off)",
        ),
        (
            vec!["compare", "--target", "a=/tmp", "--bcache", "off"],
            "--bcache stacks the filesystems the lab formats",
        ),
        (
            vec!["compare", "--fs", "ext4", "--cache-size", "1g"],
            "--cache-size and --cache-device are for bcache targets: give --bcache MODES too",
        ),
        (
            vec![
                "compare",
                "--fs",
                "ext4",
                "--bcache",
                "off",
                "--cache-size",
                "lots",
            ],
            "invalid value 'lots' for '--cache-size <SIZE>': `lots` is not a size",
        ),
    ] {
        let out = iolab().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    require!(root);
    let out = iolab()
        .args([
            "compare",
            "--fs",
            "ext4",
            "--bcache",
            "off",
            "--cache-device",
            "/dev/null",
        ])
        .args(["--destroy-data", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("refusing to use /dev/null: it is not a block device"),
        "{}",
        text(&out.stderr)
    );
}

/// Where the kernel has no bcache (this test's usual host), a bcache
/// target is skipped with the reason, and a comparison of nothing else
/// stops before it starts.
#[test]
fn bcache_targets_say_why_they_cannot_run_here() {
    if Path::new("/sys/fs/bcache/register").exists() {
        skip!("this kernel has bcache (the virtual-machine test measures it)");
    }
    let out = iolab()
        .args([
            "compare",
            "--fs",
            "ext4",
            "--bcache",
            "writeback,off",
            "--no-store",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let e = text(&out.stderr);
    assert!(
        e.contains("target `bcache-writeback`: the kernel has no bcache")
            && e.contains("target `bcache-off`: the kernel has no bcache")
            && !e.contains("did you mean"),
        "{e}"
    );
}

#[test]
fn bad_input_names_the_problem() {
    let out = iolab()
        .args(["compare", "--target", "a=/tmp", "--repeat", "0"])
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stderr),
        "iolab: --repeat `0`: expected a number of runs, 1 or more, or `auto`\n"
    );
    let out = iolab()
        .args(["compare", "--target", "a=/tmp", "--target", "a=/"])
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stderr),
        "iolab: target `a=/`: the label `a` is given twice (also to `a=/tmp`); give each target its own\n"
    );
}

#[test]
fn list_suites_shows_the_jobs() {
    let out = iolab().args(["compare", "--list-suites"]).output().unwrap();
    assert!(out.status.success());
    let s = text(&out.stdout);
    // The studies come first, as the default; the basic suite (once
    // called quick) stays.
    assert!(
        s.starts_with("studies: the default: the published comparisons"),
        "{s}"
    );
    assert!(s.contains("\nbasic: "), "{s}");
    // The stonewalled item runs the jobs in job text (a)'s order.
    let order: Vec<usize> = [
        "[Read-Seq]",
        "[Read-Random]",
        "[Write-Seq]",
        "[Write-Random]",
    ]
    .iter()
    .map(|j| s.find(j).unwrap_or_else(|| panic!("{j} in\n{s}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(
        s.contains("[randrw-20-80]") && s.contains("rwmixread=20"),
        "{s}"
    );
}

#[test]
fn ctrl_c_mid_workload_cleans_up() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("interrupted");
    let child = basic_compare_proc(&["--fs", "ext4", "--size", "320M", "--runtime", "30"])
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
    require!(root, filesystems = &["ext4", "xfs"]);
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("disk.img");
    iolab_lab::image::create_sparse(&img, 320 << 20).unwrap();
    let dev = iolab_lab::loopdev::attach(&img).unwrap();
    let out = basic_compare(&["--fs", "ext4,xfs", "--destroy-data", "--runtime", "1"])
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
                stdout
                    .lines()
                    .any(|l| l.starts_with(&format!("{row},")) && l.contains(&format!(",{t},ok,"))),
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
    // The message names the real target and where its files go, not a
    // placeholder.
    let inside = a.path().join("iolab-compare-");
    assert!(
        err.contains(&format!(
            "filename `/etc/hostname` is outside target `A` (its files go in {}",
            inside.display()
        )),
        "{err}"
    );
    assert!(!err.contains("/iolab-target"), "{err}");
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
        .split_once("\nEvery run\n\n")
        .expect("the runs follow the table");
    assert!(table.contains("geometric mean of 2 run(s)"), "{table}");
    let head = runs.lines().next().unwrap();
    assert!(
        head.split_whitespace()
            .rev()
            .take(4)
            .eq(["2", "run", "1", "run"]),
        "{head}"
    );
    let row: Vec<&str> = runs
        .lines()
        .find(|l| l.starts_with("small write") && l.contains("MB/s"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(row.len(), 6, "{row:?}");
    let n = |c: &str| c.replace(',', "").parse::<f64>().unwrap();
    assert!(n(row[4]) > 0.0 && n(row[5]) > 0.0, "{row:?}");
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
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("twice");
    let mut child = basic_compare_proc(&["--fs", "ext4", "--size", "320M", "--runtime", "30"])
        .arg("--workdir")
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
    require!(root, filesystems = &["ext4"]);
    // A private temp dir: the default workdirs go there, and only there
    // does the next run look for leftovers.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = basic_compare_proc(&["--fs", "ext4", "--size", "320M", "--runtime", "30"])
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

/// A loop device the test attached itself, detached when dropped.
struct UserLoop(PathBuf);

impl Drop for UserLoop {
    fn drop(&mut self) {
        let _ = iolab_lab::loopdev::detach(&self.0);
    }
}

#[test]
fn what_iolab_did_not_create_is_never_removed() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    // The user's image, attached to the user's loop device, where the
    // lab would put its own.
    let work = dir.path().join("wu2");
    std::fs::create_dir(&work).unwrap();
    let img = work.join("1-ext4.img");
    iolab_lab::image::create_sparse(&img, 64 << 20).unwrap();
    let user = UserLoop(iolab_lab::loopdev::attach(&img).unwrap());
    let run = |work: &Path| {
        basic_compare(&[
            "--fs",
            "ext4",
            "--size",
            "256M",
            "--runtime",
            "1",
            "--workdir",
        ])
        .arg(work)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
    };
    let out = run(&work);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(
            "ext4: failed: `{}` exists already and iolab did not create it: not using it as an image file",
            img.display()
        )),
        "{stdout}"
    );
    assert_eq!(
        iolab_lab::loopdev::backing_file(&user.0).as_deref(),
        Some(img.as_path()),
        "the user's loop device was detached"
    );
    assert_eq!(std::fs::metadata(&img).unwrap().len(), 64 << 20);
    assert_eq!(common::entries(&work), ["1-ext4.img"]);

    // An empty directory where the lab would mount: the lab's own image
    // and loop device go, the directory stays.
    let work = dir.path().join("wu3");
    let mnt = work.join("mnt-1-ext4");
    std::fs::create_dir_all(&mnt).unwrap();
    let out = run(&work);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(
            "ext4: failed: `{}` exists already and iolab did not create it: not using it as a mount point",
            mnt.display()
        )),
        "{stdout}"
    );
    assert!(mnt.is_dir(), "the user's directory was removed");
    assert_eq!(common::entries(&work), ["mnt-1-ext4"]);
    assert!(!loops_mention(&work) && !mounts_mention(&work));
}

#[test]
fn job_files_cannot_put_files_outside_the_target() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("A");
    std::fs::create_dir(&a).unwrap();
    let job = d.path().join("esc.fio");
    let format = format!("{}/x/ESCAPED.$jobnum", d.path().display());
    for (option, named) in [
        ("directory=../escaped", "directory `../escaped`"),
        ("filename=../escaped-file", "filename `../escaped-file`"),
        (
            &*format!("filename_format={format}"),
            &*format!("filename_format `{format}`"),
        ),
    ] {
        std::fs::write(&job, format!("[w]\nrw=write\nbs=4k\nsize=64k\n{option}\n")).unwrap();
        let out = iolab()
            .args(["compare", "--repeat", "1", "--job"])
            .arg(&job)
            .arg("--target")
            .arg(format!("A={}", a.display()))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{option}: {err}");
        assert!(
            err.contains(&format!(
                "job file `{}`, job `w`: {named} is outside target `A`",
                job.display()
            )),
            "{option}: {err}"
        );
        // Nothing was created, in the target or beside it.
        assert!(common::entries(&a).is_empty(), "{option}");
        assert_eq!(common::entries(d.path()), ["A", "esc.fio"], "{option}");
    }
    require!(root, filesystems = &["ext4"]);
    std::fs::write(
        &job,
        "[w]\nrw=write\nbs=4k\nsize=64k\nfilename=../escaped-file\n",
    )
    .unwrap();
    let work = d.path().join("work");
    let out = iolab()
        .args(["compare", "--fs", "ext4", "--job"])
        .arg(&job)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "filename `../escaped-file` is outside the filesystem of target `ext4` (it lands at "
        ),
        "{err}"
    );
    assert!(!work.exists() && !loops_mention(d.path()));
}

/// A temporary directory with target directories `A` and `B` in it.
fn two_dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("A"), d.path().join("B"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    (d, a, b)
}

/// `iolab compare --repeat 1 --output-format FORMAT` of job files on
/// directory targets (NAME, DIR), which must succeed; its output.
fn compare_jobs(db: &Path, format: &str, jobs: &[&Path], targets: &[(&str, &Path)]) -> String {
    let mut cmd = iolab();
    cmd.env("IOLAB_DB", db)
        .args(["compare", "--repeat", "1", "--output-format", format]);
    for j in jobs {
        cmd.arg("--job").arg(j);
    }
    for (name, dir) in targets {
        cmd.arg("--target").arg(format!("{name}={}", dir.display()));
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn job_files_with_one_name_get_rows_of_their_own() {
    let (d, a, _) = two_dirs();
    let db = d.path().join("results.db");
    let mut jobs = Vec::new();
    for (sub, bs) in [("j1", "64k"), ("j2", "4k")] {
        std::fs::create_dir(d.path().join(sub)).unwrap();
        let job = d.path().join(sub).join("x.fio");
        std::fs::write(&job, format!("[x]\nrw=write\nbs={bs}\nsize=256k\n")).unwrap();
        jobs.push(job);
    }
    let jobs: Vec<&Path> = jobs.iter().map(PathBuf::as_path).collect();
    let run = |format: &str| compare_jobs(&db, format, &jobs, &[("A", &a)]);
    let csv = run("csv");
    // One run each, not two runs mixed in one row.
    for key in ["x.write.iops", "x#2.write.iops"] {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{key},")))
            .unwrap_or_else(|| panic!("no {key} in\n{csv}"));
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[8], "1", "{line}");
    }
    let v: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    // 64 KiB blocks for x, 4 KiB for x#2: 4 and 64 I/Os of 256 KiB.
    let runs: Vec<(String, u64)> = v["iolab compare"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["workload"].as_str().unwrap().to_string(),
                r["fio"]["jobs"][0]["write"]["total_ios"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs, [("x".to_string(), 4), ("x#2".to_string(), 64)]);
    let table = run("table");
    assert!(
        table.contains(&format!(
            "note: workload `x#2` is the job file {} (another workload has its name)",
            jobs[1].display()
        )),
        "{table}"
    );
}

#[test]
fn warnings_are_flagged_in_the_comparison() {
    let (d, a, b) = two_dirs();
    let db = d.path().join("results.db");
    let job = d.path().join("qd.fio");
    std::fs::write(
        &job,
        "[qd]\nrw=randwrite\nbs=4k\nsize=1m\nioengine=psync\niodepth=8\n",
    )
    .unwrap();
    let compare = |format: &str| compare_jobs(&db, format, &[&job], &[("A", &a), ("B", &b)]);
    let table = compare("table");
    let legend = table
        .lines()
        .find(|l| l.contains(" queue-depth-not-reached: "))
        .unwrap_or_else(|| panic!("no legend line in\n{table}"));
    let (marker, rest) = legend.trim().split_once(' ').unwrap();
    assert!(marker.starts_with('w'), "{legend}");
    // The warning's text once, and where it was raised.
    assert!(
        rest.starts_with("queue-depth-not-reached: job `qd`: iodepth=8 will not be reached")
            && rest.ends_with(" (at A qd, B qd)"),
        "{legend}"
    );
    // Every qd cell of both targets carries the marker.
    for row in ["qd write  ", "qd write clat p99"] {
        for l in table.lines().filter(|l| l.starts_with(row)) {
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            for cell in &cells[cells.len() - 2..] {
                assert!(
                    cell.rsplit(' ')
                        .next()
                        .unwrap()
                        .split(',')
                        .any(|m| m == marker),
                    "{marker} missing in `{cell}` of\n{l}"
                );
            }
        }
    }
    let csv = compare("csv");
    for t in ["A", "B"] {
        assert!(
            csv.lines().any(|l| l.starts_with("qd.write.iops,")
                && l.contains(&format!(",{t},ok,"))
                && l.rsplit(',')
                    .next()
                    .unwrap()
                    .split(';')
                    .any(|c| c == "queue-depth-not-reached")),
            "{t}:\n{csv}"
        );
    }
    let v: serde_json::Value = serde_json::from_str(&compare("json")).unwrap();
    let c = &v["iolab compare"];
    let iops = c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == "qd.write.iops")
        .unwrap();
    for t in ["A", "B"] {
        let codes = iops["values"][t]["warnings"].as_array().unwrap();
        assert!(
            codes.iter().any(|c| c == "queue-depth-not-reached"),
            "{t}: {codes:?}"
        );
    }
    let texts: Vec<&str> = c["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "queue-depth-not-reached")
        .map(|w| w["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].contains("iodepth=8 will not be reached with ioengine=psync"),
        "{texts:?}"
    );
}

#[test]
fn comparisons_are_found_by_their_targets() {
    let (d, a, b) = two_dirs();
    let db = d.path().join("results.db");
    let job = d.path().join("tiny.fio");
    std::fs::write(&job, "[t]\nrw=write\nbs=64k\nsize=256k\n").unwrap();
    compare_jobs(&db, "table", &[&job], &[("A", &a), ("B", &b)]);
    let fs = iolab_core::probe::probe(&a).fs_type;
    assert!(!fs.is_empty());
    let history = |args: &[&str]| {
        let out = iolab()
            .env("IOLAB_DB", &db)
            .args(["history", "--output-format", "json"])
            .args(args)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array().unwrap().clone()
    };
    let b_dir = b.display().to_string();
    for args in [
        vec!["--target", b_dir.as_str()],
        vec!["--fs", fs.as_str(), "--kind", "compare"],
    ] {
        let found = history(&args);
        assert_eq!(found.len(), 1, "{args:?}: {found:?}");
        assert_eq!(
            found[0]["target"],
            format!("A={}, B={}", a.display(), b.display()),
            "{args:?}"
        );
        assert_eq!(found[0]["fs_type"], fs.as_str());
    }
    assert!(history(&["--target", "/nonexistent-iolab"]).is_empty());
}

#[test]
fn a_failed_mkfs_keeps_its_message_short() {
    require!(root, filesystems = &["xfs"]);
    let dir = tempfile::tempdir().unwrap();
    let out = basic_compare(&["--fs", "xfs:-bogus", "--size", "320M", "--workdir"])
        .arg(dir.path().join("w"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with("xfs: failed: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains(" -f -q -bogus /dev/loop"), "{line}");
    assert!(
        line.contains("failed (exit status: 1): unknown option -b ogus (and "),
        "{line}"
    );
    // The usage text that follows is left out of the table.
    assert!(
        !stdout.contains("Usage") && !stdout.contains("blocksize"),
        "{stdout}"
    );
    assert!(!loops_mention(dir.path()) && !mounts_mention(dir.path()));
}

/// An image the suite does not fit in is refused before anything is
/// made, with the suite's minimum; so is one a mkfs would refuse.
#[test]
fn a_suite_that_does_not_fit_the_image_is_refused_at_once() {
    require!(root, filesystems = &["ext4"]);
    let work = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--size", "64m"], "workload `stonewall-4` needs 64 MiB"),
        (&["--size", "10m"], "give --size 72m or more"),
        (
            &["--size", "20m", "--suite", "meta"],
            "give --size 48m or more",
        ),
        (
            &["--fs", "xfs", "--size", "256m"],
            "mkfs.xfs makes no filesystem",
        ),
        // NILFS2 reclaims nothing during a comparison: every file the
        // suite lays out must fit. Refused before mkfs, so a kernel
        // without nilfs2 says the same.
        (
            &["--fs", "ext4,nilfs2", "--size", "160m"],
            "suite `studies` does not fit NILFS2: its workloads lay out 100 MiB of files in \
             all (`stonewall-4` the most), and NILFS2 reclaims no removed file's space during \
             a comparison (its cleaner starts only when under 10% of the segments are clean, \
             and keeps what the last hour wrote), while an image of 160 MiB leaves it 72 MiB; \
             give --size 240m or more",
        ),
    ];
    for (extra, says) in cases {
        let out = iolab()
            .args(["compare", "--fs", "ext4", "--no-store", "--workdir"])
            .arg(work.path())
            .args(*extra)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(common::entries(work.path()).is_empty(), "{extra:?}");
    }
    // --list-suites names each suite's smallest image.
    let out = iolab().args(["compare", "--list-suites"]).output().unwrap();
    let list = text(&out.stdout);
    assert!(
        list.contains("(images of at least 72 MiB; nilfs2: 240 MiB)"),
        "{list}"
    );
}
