//! Warnings about numbers that do not measure the storage: each raised by
//! a job crafted to deserve it, with its code in the JSON and its line in
//! the normal output, and none on a clean direct random read. The crafted
//! jobs need root for loop devices, mounts, zram and a blkio cgroup; each
//! test says in one line why it skips where the machine does not allow it.

mod common;

use iolab_testkit::{need, skip, skip_case, Missing};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn codes(v: &Value) -> Vec<String> {
    v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// The text of the job's first warning with this code.
fn text<'a>(v: &'a Value, code: &str) -> &'a str {
    v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == code)
        .and_then(|w| w["text"].as_str())
        .unwrap_or_else(|| panic!("no {code} warning: {:?}", codes(v)))
}

fn has(v: &Value, code: &str) -> bool {
    codes(v).iter().any(|c| c == code)
}

#[test]
fn buffered_writes_the_device_did_not_see_measure_memory() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 256, ""));
    let job = [
        "--name=w",
        "--filename=f",
        "--rw=write",
        "--bs=1m",
        "--size=64m",
    ];
    // Back to back: the device's write counter during the second and
    // third runs holds the previous run's writeback, which is not theirs.
    Proc::new("sync").status().unwrap();
    for run in 1..=3 {
        let v = common::run_json(&fs.mnt, &job);
        assert!(
            has(&v, "page-cache"),
            "run {run}: {:?}, {} KiB/s, {}",
            codes(&v),
            v["jobs"][0]["write"]["bw"],
            v["disk_util"]
        );
        let t = text(&v, "page-cache");
        assert!(
            t.contains("measured memory") && t.contains("direct=1"),
            "run {run}: {t}"
        );
    }
    // With end_fsync the writes reach the device before the job ends.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=g",
            "--rw=write",
            "--bs=1m",
            "--size=64m",
            "--end_fsync=1",
        ],
    );
    assert!(!has(&v, "page-cache"), "{:?}", codes(&v));
    // Unless the job wrote its file over and over for its runtime: the
    // rewrites stayed in memory and the fsync wrote each block once.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=h",
            "--rw=write",
            "--bs=1m",
            "--size=16m",
            "--end_fsync=1",
            "--time_based",
            "--runtime=2",
        ],
    );
    assert!(
        text(&v, "page-cache").contains("times over"),
        "{:?}",
        codes(&v)
    );
}

/// io_uring hands ext4's buffered writes and every fsync to worker
/// threads of its own (`iou-wrk-<tid>`), which the kernel counts apart
/// from the job's thread: their I/O is the job's.
#[test]
fn io_uring_buffered_writes_are_the_jobs_own_io() {
    iolab_testkit::require!(io_uring);
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 128, ""));
    // The quick suite's write+fsync test, with larger blocks to stay
    // short: every write reaches the device before the next.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=f",
            "--ioengine=io_uring",
            "--rw=randwrite",
            "--bs=64k",
            "--size=16m",
            "--fsync=1",
        ],
    );
    assert!(!has(&v, "page-cache"), "{:?}", codes(&v));
    // Buffered io_uring jobs that measured memory are still flagged: a
    // write that ends with its data in memory, and reads of it served
    // by the page cache (the workers read nothing either).
    let write = [
        "--name=w",
        "--filename=g",
        "--ioengine=io_uring",
        "--bs=64k",
    ];
    let v = common::run_json(
        &fs.mnt,
        &[&write[..], &["--rw=write", "--size=16m"]].concat(),
    );
    assert!(has(&v, "page-cache"), "{:?}", codes(&v));
    // Small blocks rewritten in memory over and over: the workers write
    // the pages while the job's thread sleeps waiting for them, so their
    // CPU time tells that the writes never waited for the device.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=h",
            "--ioengine=io_uring",
            "--rw=randwrite",
            "--bs=4k",
            "--size=16m",
            "--runtime=2",
            "--time_based",
        ],
    );
    assert!(
        text(&v, "page-cache").contains("hardly ever waited"),
        "{:?}",
        codes(&v)
    );
    let v = common::run_json(
        &fs.mnt,
        &[&write[..], &["--rw=read", "--size=16m", "--invalidate=0"]].concat(),
    );
    let texts: Vec<&str> = v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["text"].as_str())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("the rest came from memory")),
        "{texts:?}"
    );
}

#[test]
fn compressible_data_on_a_compressing_filesystem_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(
        dir.path(),
        "btrfs",
        512,
        "compress=zstd"
    ));
    // Not preallocated: btrfs writes into preallocated extents as they
    // are, uncompressed (warnings_planted.rs has that case).
    let (zeros, default) = zeros_and_default_data(&fs.mnt, &["--fallocate=none"]);
    assert!(has(&zeros, "compression"), "{:?}", codes(&zeros));
    // The default data does not compress: no warning.
    assert!(!has(&default, "compression"), "{:?}", codes(&default));
}

/// The reports of a 16 MiB write of zeros and of one of the default
/// (incompressible) data, to file `f` in `dir`.
fn zeros_and_default_data(dir: &Path, extra: &[&str]) -> (Value, Value) {
    let mut job = vec![
        "--name=z",
        "--filename=f",
        "--rw=write",
        "--bs=64k",
        "--size=16m",
    ];
    job.extend_from_slice(extra);
    let default = common::run_json(dir, &job);
    job.push("--zero_buffers");
    (common::run_json(dir, &job), default)
}

/// A zram device made for one test, mounted as ext4; removed when dropped.
struct Zram {
    id: String,
    mnt: PathBuf,
    mounted: bool,
}

impl Zram {
    fn new(dir: &Path) -> Result<Zram, Missing> {
        let control = Path::new("/sys/class/zram-control/hot_add");
        if !control.exists() {
            return Err(Missing::here(
                "no zram in this kernel (modprobe zram, as root)",
            ));
        }
        let Ok(id) = fs::read_to_string(control) else {
            return Err(Missing::here("cannot add a zram device (root needed)"));
        };
        let mut z = Zram {
            id: id.trim().to_string(),
            mnt: dir.join("zram-mnt"),
            mounted: false,
        };
        let sys = PathBuf::from(format!("/sys/block/zram{}", z.id));
        fs::write(sys.join("disksize"), "128M")
            .map_err(|e| Missing::here(format!("cannot size {}: {e}", sys.display())))?;
        let dev = format!("/dev/zram{}", z.id);
        let ok = Proc::new("mkfs.ext4")
            .args(["-q", "-F", &dev])
            .status()
            .is_ok_and(|s| s.success());
        fs::create_dir_all(&z.mnt).unwrap();
        z.mounted = ok
            && Proc::new("mount")
                .arg(&dev)
                .arg(&z.mnt)
                .status()
                .is_ok_and(|s| s.success());
        if !z.mounted {
            return Err(Missing::here(format!(
                "cannot make and mount ext4 on {dev}"
            )));
        }
        Ok(z)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        if self.mounted {
            common::unmount(&self.mnt);
        }
        let _ = fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let _ = fs::write("/sys/class/zram-control/hot_remove", &self.id);
    }
}

#[test]
fn compressible_data_on_a_compressing_device_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let z = need!(Zram::new(dir.path()));
    let (zeros, default) = zeros_and_default_data(&z.mnt, &["--direct=1"]);
    let t = text(&zeros, "compression");
    assert!(
        t.contains(&format!("zram{} is zram (", z.id)),
        "the device is named: {t}"
    );
    // Incompressible data (the default): nothing to say.
    assert!(!has(&default, "compression"), "{:?}", codes(&default));
}

#[test]
fn btrfs_files_are_watched_on_the_device_under_the_filesystem() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "btrfs", 512, ""));
    // btrfs gives its files an anonymous device number; the loop device
    // comes from the mount.
    let source = fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.contains(&format!(" {} ", fs.mnt.display())))
        .and_then(|l| l.split(" - ").nth(1))
        .and_then(|r| r.split(' ').nth(1))
        .unwrap()
        .to_string();
    let loop_name = source.trim_start_matches("/dev/").to_string();

    // A synced buffered write: the device saw it, no page-cache warning,
    // and fio's disk_util names the loop device.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=f",
            "--rw=write",
            "--bs=1m",
            "--size=32m",
            "--end_fsync=1",
        ],
    );
    assert!(!has(&v, "page-cache"), "{:?}", codes(&v));
    let disks = v["disk_util"].as_array().expect("disk_util on btrfs");
    assert_eq!(disks[0]["name"], loop_name.as_str(), "{disks:?}");
    assert!(disks[0]["write_ios"].as_u64().unwrap() > 0, "{disks:?}");

    // Others on the device: a direct writer beside a small direct read.
    let child = common::spawn_run_json(
        &fs.mnt,
        &[
            "--name=r",
            "--filename=f",
            "--rw=randread",
            "--bs=4k",
            "--size=32m",
            "--direct=1",
            "--rate_iops=500",
            "--time_based",
            "--runtime=3",
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    let dd = Proc::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=200", "oflag=direct"])
        .arg(format!("of={}", fs.mnt.join("other").display()))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(dd.success());
    let v = common::wait_json(child);
    let t = text(&v, "others-on-device");
    assert!(t.contains(&format!("the device {loop_name} moved")), "{t}");
}

/// Whether the filesystem at `dir` reports holes (SEEK_HOLE): a file of
/// nothing but a hole shows one.
fn reports_holes(dir: &Path) -> bool {
    let p = dir.join("probe-hole");
    let f = fs::File::create(&p).unwrap();
    f.set_len(1 << 20).unwrap();
    drop(f);
    let holes = iolab_engine::file::hole_bytes(&p, 0, 1 << 20).unwrap_or(0) > 0;
    fs::remove_file(&p).unwrap();
    holes
}

#[test]
fn reads_of_a_never_written_file_are_sparse() {
    let dir = tempfile::tempdir().unwrap();
    if !reports_holes(dir.path()) {
        skip!("the test directory's filesystem reports no holes (SEEK_HOLE)");
    }
    // A hole (ftruncate) and unwritten extents (fallocate): neither was
    // ever written.
    let hole = fs::File::create(dir.path().join("hole")).unwrap();
    hole.set_len(8 << 20).unwrap();
    let alloc = fs::File::create(dir.path().join("alloc")).unwrap();
    let native = iolab_engine::file::FallocMode::Native;
    let unwritten = iolab_engine::file::fallocate(&alloc, native, 0, 8 << 20).unwrap_or(false)
        && iolab_engine::file::hole_bytes(&dir.path().join("alloc"), 0, 8 << 20).unwrap_or(0) > 0;
    drop((hole, alloc));
    let mut files = vec!["hole"];
    if unwritten {
        files.push("alloc");
    } else {
        skip_case!("the fallocated file: no unwritten extents reported as holes here");
    }
    for file in files {
        let out = common::iolab()
            .current_dir(dir.path())
            .args(["run", "--name=r", "--rw=read", "--bs=1m", "--size=8m"])
            .arg(format!("--filename={file}"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with(iolab_report::WARNING_PREFIX) && l.ends_with("(sparse-reads)"))
            .unwrap_or_else(|| panic!("{file}: no sparse-reads line:\n{text}"));
        assert!(
            line.contains(&format!("100% of the range read in `{file}`")),
            "{line}"
        );
    }
}

#[test]
fn a_queue_depth_a_sync_engine_cannot_reach_is_in_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let v = common::run_json(
        dir.path(),
        &[
            "--name=q",
            "--ioengine=psync",
            "--iodepth=16",
            "--size=1m",
            "--filename=f",
        ],
    );
    assert!(has(&v, "queue-depth-not-reached"));
}

#[test]
fn a_clean_direct_random_read_raises_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 256, ""));
    // The file laid out by a run before, and the image's pages dropped
    // from the host's cache: the loop device reads its image through
    // that cache, which the layout's writes filled.
    common::run_json(
        &fs.mnt,
        &[
            "--name=l",
            "--filename=f",
            "--size=64m",
            "--rw=write",
            "--bs=1m",
            "--direct=1",
        ],
    );
    common::drop_file_cache(&dir.path().join("ext4.img"));
    // Clean means: direct I/O (nothing for the page cache to serve), a
    // file laid out before the job (nothing sparse), and 3 s of samples
    // (not a short run). rate_iops keeps the samples steady whatever else
    // the machine does, so the bandwidth does not vary by chance (not
    // unstable), and leaves the thread waiting most of the time (not
    // CPU-bound).
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=c",
            "--filename=f",
            "--size=64m",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--runtime=3",
            "--time_based",
            "--rate_iops=2000",
        ],
    );
    let mut raised = codes(&v);
    if raised == ["unstable"] {
        // Right, where other programs load the machine: then the
        // samples do vary. Said, not hidden.
        skip_case!("the unstable check: the machine's load varied the samples");
        raised.clear();
    }
    assert_eq!(raised, Vec::<String>::new());
    // A one-second job is too short for its samples to mean much.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=s",
            "--filename=f",
            "--size=64m",
            "--rw=randread",
            "--direct=1",
            "--runtime=1",
            "--time_based",
        ],
    );
    assert!(has(&v, "short-run"), "{:?}", codes(&v));
}

#[test]
fn the_null_engine_is_cpu_bound_and_has_no_device_warnings() {
    let dir = tempfile::tempdir().unwrap();
    // A directory on a loop device, whose counters the null engine never
    // moves: no device-based warning may come of that.
    let fs = common::LoopFs::new(dir.path(), "ext4", 64, "").ok();
    let at = fs.as_ref().map_or(dir.path(), |f| f.mnt.as_path());
    let v = common::run_json(
        at,
        &[
            "--name=c",
            "--ioengine=null",
            "--rw=randread",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=2",
        ],
    );
    let t = text(&v, "cpu-bound");
    assert!(t.contains("on a CPU or waiting for one"), "{t}");
    for code in [
        "page-cache",
        "others-on-device",
        "compression",
        "sparse-reads",
    ] {
        assert!(!has(&v, code), "{code}: {:?}", codes(&v));
    }
}

#[test]
fn a_start_much_faster_than_the_rest_is_flagged_with_a_ramp_time() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 128, ""));
    let throttle = need!(common::Throttle::new());
    // Lay the file out first, so the job starts reading at once.
    let job = [
        "--name=r",
        "--filename=f",
        "--rw=read",
        "--bs=64k",
        "--size=32m",
        "--direct=1",
    ];
    common::run_json(&fs.mnt, &job);
    // The device at full speed for a second, then slowed to 2 MB/s for
    // the rest of the run: as a cache that fills and then lets the
    // storage's own speed show.
    let mut args = job.to_vec();
    args.extend(["--time_based", "--runtime=5"]);
    let child = common::spawn_run_json(&fs.mnt, &args);
    let pid = child.id();
    let start = Instant::now();
    while common::read_bytes(pid) == 0 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(1200));
    throttle.limit_reads(pid, &common::dev_of(&fs.mnt), 2 << 20);
    let v = common::wait_json(child);
    let t = text(&v, "unstable");
    assert!(t.contains("faster than the rest"), "{t}");
    assert!(t.contains("ramp_time="), "{t}");
}

#[test]
fn a_working_set_that_fits_in_memory_with_no_device_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    // overlayfs has no device of its own to watch.
    let d = dir.path();
    for sub in ["l", "u", "w", "m"] {
        fs::create_dir(d.join(sub)).unwrap();
    }
    let opts = format!(
        "lowerdir={},upperdir={},workdir={}",
        d.join("l").display(),
        d.join("u").display(),
        d.join("w").display()
    );
    let mounted = Proc::new("mount")
        .args(["-t", "overlay", "overlay", "-o", &opts])
        .arg(d.join("m"))
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        skip!("cannot mount overlayfs (root needed)");
    }
    let overlay = common::Mounted(d.join("m"));
    let v = common::iolab()
        .current_dir(d.join("m"))
        .args([
            "run",
            "--output-format=json",
            "--name=r",
            "--filename=f",
            "--rw=read",
            "--bs=1m",
            "--size=32m",
        ])
        .output();
    drop(overlay);
    let v = common::json_of(&v.unwrap().stdout);
    let t = text(&v, "page-cache");
    assert!(t.contains("which fits in memory"), "{t}");
    assert!(t.contains("on overlayfs with no device to check"), "{t}");
}

#[test]
fn iolab_checks_off_drops_the_checks_and_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let job = [
        "--name=r",
        "--filename=f",
        "--rw=read",
        "--bs=64k",
        "--size=4m",
        "--ioengine=psync",
        "--iodepth=4",
    ];
    let run = |checks_off: bool| {
        let mut cmd = common::iolab();
        if checks_off {
            cmd.env("IOLAB_CHECKS", "off");
        }
        let out = cmd
            .current_dir(dir.path())
            .args(["run", "--no-store", "--output-format=json"])
            .args(job)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::json_of(&out.stdout)
    };
    let on = run(false);
    let off = run(true);
    // A plan warning is the job's own, not a check's: there either way.
    assert!(has(&on, "queue-depth-not-reached"), "{:?}", codes(&on));
    assert!(has(&off, "queue-depth-not-reached"), "{:?}", codes(&off));
    // What the run saw: a run this short has no bandwidth sample, which
    // the run's checks say; off, nothing is said of it.
    assert!(has(&on, "short-run"), "{:?}", codes(&on));
    assert_eq!(codes(&off), ["queue-depth-not-reached"]);
    // The device counters under the file: fio's disk_util with the
    // checks, no such key without.
    assert!(off.get("disk_util").is_none(), "{}", off["disk_util"]);
    let dev = common::dev_of(dir.path());
    if Path::new("/sys/dev/block").join(&dev).exists() {
        let disks = on["disk_util"]
            .as_array()
            .expect("disk_util with the checks");
        assert!(!disks.is_empty());
    } else {
        skip_case!(
            "the temporary directory is on no block device ({dev}): no disk_util to compare"
        );
    }
}
