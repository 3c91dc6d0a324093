//! Warnings that used to miss or misfire, each planted: a loop image the
//! host has cached or keeps on tmpfs (run, compare, quick), a run served
//! by the page cache while a neighbour reads the same device, and btrfs
//! compression judged by what was stored. Beside each, the case where the
//! warning must stay silent: an uncached image on the disk, a loop device
//! with direct I/O, a btrfs without compression. They need root for loop
//! devices, tmpfs and mounts; each says in one line why it skips where
//! the machine does not allow it.

mod common;

use iolab_testkit::need;
use iolab_testkit::{skip, Missing};
use std::path::{Path, PathBuf};
use std::process::{Command as Proc, Stdio};

use serde_json::Value;

fn warnings(v: &Value) -> Vec<(String, String)> {
    v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["code"].as_str().unwrap().to_string(),
                w["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The text of the job's warning with this code whose text has `part`.
fn find(v: &Value, code: &str, part: &str) -> Option<String> {
    warnings(v)
        .into_iter()
        .find(|(c, t)| c == code && t.contains(part))
        .map(|(_, t)| t)
}

/// Held by the tests that need the host's page cache to stay as they
/// left it, and by those that drop it whole (compare's cold mounts), so
/// that the second do not run during the first.
static PAGE_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn page_cache_lock() -> std::sync::MutexGuard<'static, ()> {
    PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

fn codes(v: &Value) -> Vec<String> {
    warnings(v).into_iter().map(|(c, _)| c).collect()
}

/// A 4k direct random read at queue depth 16 of the 32 MiB file `f`, 1 s.
const DIRECT_RANDREAD: [&str; 10] = [
    "--name=r",
    "--filename=f",
    "--size=32m",
    "--rw=randread",
    "--bs=4k",
    "--direct=1",
    "--ioengine=libaio",
    "--iodepth=16",
    "--runtime=1",
    "--time_based",
];

/// Lays out the 32 MiB file `f` in `dir` with a run of its own: its
/// report.
fn lay_out(dir: &Path) -> Value {
    common::run_json(
        dir,
        &[
            "--name=l",
            "--filename=f",
            "--size=32m",
            "--rw=write",
            "--bs=1m",
            "--direct=1",
        ],
    )
}

#[test]
fn direct_reads_of_a_loop_image_the_host_has_cached_come_from_memory() {
    let _cache = page_cache_lock();
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 128, ""));
    let img = dir.path().join("ext4.img");
    let _ = lay_out(&fs.mnt);
    // Not cached: the loop device reads the disk under the image, each
    // block once (a quarter of the file, no time_based).
    common::drop_file_cache(&img);
    let once = &[&DIRECT_RANDREAD[..8], &["--io_size=8m"]].concat();
    let v = common::run_json(&fs.mnt, once);
    assert!(!codes(&v).contains(&"page-cache".into()), "{v:#}");
    // Read through, as `cat img >/dev/null` does: the same reads now come
    // from the host's memory.
    std::io::copy(
        &mut std::fs::File::open(&img).unwrap(),
        &mut std::io::sink(),
    )
    .unwrap();
    let v = common::run_json(&fs.mnt, &DIRECT_RANDREAD);
    let t = find(&v, "page-cache", "loop device").unwrap_or_else(|| panic!("{:?}", warnings(&v)));
    assert!(
        t.contains(&format!("backing file `{}`", img.display()))
            && t.contains("through the host's page cache")
            && t.contains("--direct-io=on"),
        "{t}"
    );
}

#[test]
fn re_reads_the_hosts_cache_of_a_loop_image_served_are_memorys() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 128, ""));
    let _ = lay_out(&fs.mnt);
    let _cache = page_cache_lock();
    common::drop_file_cache(&dir.path().join("ext4.img"));
    // Not cached as it starts; 2 s of 64k reads go over the 16 MiB many
    // times, and the first pass fills the host's cache of the image.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=t",
            "--filename=f",
            "--size=16m",
            "--rw=randread",
            "--bs=64k",
            "--direct=1",
            "--ioengine=libaio",
            "--iodepth=4",
            "--runtime=2",
            "--time_based",
        ],
    );
    let t = find(&v, "page-cache", "times over").unwrap_or_else(|| panic!("{:?}", warnings(&v)));
    assert!(
        t.contains("loop device") && t.contains("the reads after the first pass came from memory"),
        "{t}"
    );
}

#[test]
fn a_loop_image_on_tmpfs_is_memory() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let _tmpfs = need!(common::Mounted::tmpfs(&t, "size=160m"));
    let fs = need!(common::LoopFs::new(&t, "ext4", 96, ""));
    let _ = lay_out(&fs.mnt);
    let v = common::run_json(&fs.mnt, &DIRECT_RANDREAD);
    let text = find(&v, "page-cache", "is on tmpfs").unwrap_or_else(|| panic!("{v:#}"));
    assert!(text.contains("loop device"), "{text}");
}

#[test]
fn compare_with_its_workdir_on_tmpfs_says_the_images_are_in_memory() {
    let _cache = page_cache_lock();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let _tmpfs = need!(common::Mounted::tmpfs(&work, "size=200m,mode=0700"));
    let job = dir.path().join("r.fio");
    std::fs::write(&job, "[r]\nrw=read\nbs=64k\nsize=1m\n").unwrap();
    let out = common::iolab()
        .args(["compare", "--fs", "ext4", "--size", "64M", "--repeat", "1"])
        .args(["--output-format", "json", "--no-store", "--job"])
        .arg(&job)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("root") && !out.status.success() {
        skip!("{stderr}");
    }
    assert!(out.status.success(), "{stderr}");
    let v = common::json_of(&out.stdout);
    let notes = v["iolab compare"]["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "the workdir {} is on tmpfs, in memory",
            work.display()
        )),
        "{notes}"
    );
}

#[test]
fn compare_with_its_workdir_on_a_disk_has_no_memory_note() {
    let _cache = page_cache_lock();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let job = dir.path().join("r.fio");
    std::fs::write(&job, "[r]\nrw=read\nbs=64k\nsize=1m\n").unwrap();
    let out = common::iolab()
        .args(["compare", "--fs", "ext4", "--size", "64M", "--repeat", "1"])
        .args(["--output-format", "json", "--no-store", "--job"])
        .arg(&job)
        .arg("--workdir")
        .arg(&work)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("root") && !out.status.success() {
        skip!("{stderr}");
    }
    assert!(out.status.success(), "{stderr}");
    let v = common::json_of(&out.stdout);
    let notes = &v["iolab compare"]["notes"];
    assert!(notes.is_array(), "{v:#}");
    assert!(!notes.to_string().contains("in memory"), "{notes}");
}

/// Reads the block device `dev` with O_DIRECT over and over until killed:
/// another program's I/O on the same device.
fn neighbour(dev: &str) -> std::process::Child {
    Proc::new("sh")
        .arg("-c")
        .arg(format!(
            "while :; do dd if={dev} of=/dev/null bs=1M iflag=direct status=none; done"
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The device reads of the run's only disk.
fn device_reads(v: &Value) -> u64 {
    v["disk_util"][0]["read_ios"].as_u64().unwrap_or(0)
}

#[test]
fn reads_from_the_page_cache_are_flagged_while_a_neighbour_reads_the_device() {
    let _cache = page_cache_lock();
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 128, ""));
    let laid = lay_out(&fs.mnt);
    let dev = format!("/dev/{}", laid["disk_util"][0]["name"].as_str().unwrap());
    let _n = Killed(neighbour(&dev));
    // The file in the page cache (invalidate=0 keeps it there): the job
    // reads memory while the device is busy with the neighbour's reads,
    // which the device's counters would have taken for the job's.
    let f = fs.mnt.join("f");
    assert_eq!(std::fs::read(&f).unwrap().len(), 32 << 20);
    let cached = [
        "--name=c",
        "--filename=f",
        "--size=32m",
        "--rw=read",
        "--bs=1m",
        "--invalidate=0",
        "--runtime=1",
        "--time_based",
    ];
    let v = common::run_json(&fs.mnt, &cached);
    assert!(device_reads(&v) > 0, "no neighbour: {}", v["disk_util"]);
    let t = find(&v, "page-cache", "its threads had the storage read")
        .unwrap_or_else(|| panic!("{:?}", warnings(&v)));
    assert!(t.contains("read 0% of the bytes"), "{t}");
    // One pass over the file with its cache dropped first (invalidate=1,
    // the default): the job's own reads reached the device.
    let uncached = [
        "--name=u",
        "--filename=f",
        "--size=32m",
        "--rw=read",
        "--bs=1m",
    ];
    let v = common::run_json(&fs.mnt, &uncached);
    assert_eq!(
        find(&v, "page-cache", "its threads had the storage read"),
        None,
        "{:?}",
        warnings(&v)
    );
}

/// A 16 MiB write to file `f` in `dir` with `extra` options.
fn write_16m(dir: &Path, extra: &[&str]) -> Value {
    let _ = std::fs::remove_file(dir.join("f"));
    let mut job = vec![
        "--name=z",
        "--filename=f",
        "--rw=write",
        "--bs=64k",
        "--size=16m",
    ];
    job.extend_from_slice(extra);
    common::run_json(dir, &job)
}

#[test]
fn btrfs_compression_is_judged_by_what_was_stored() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(
        dir.path(),
        "btrfs",
        256,
        "compress-force=zstd"
    ));
    // Zeros into the extents the default fallocate made: btrfs writes
    // preallocated extents in place, uncompressed.
    let v = write_16m(&fs.mnt, &["--zero_buffers"]);
    assert!(!codes(&v).contains(&"compression".into()), "{v:#}");
    // A verify pattern compresses, as zeros do where nothing was
    // preallocated.
    for extra in [
        &[
            "--verify=pattern",
            "--verify_pattern=0xff",
            "--fallocate=none",
        ][..],
        &["--zero_buffers", "--fallocate=none"],
    ] {
        let v = write_16m(&fs.mnt, extra);
        let t = find(&v, "compression", "stored compressed")
            .unwrap_or_else(|| panic!("{extra:?}: {:?}", warnings(&v)));
        assert!(
            t.contains("100% of the data in its files is stored compressed")
                && t.contains("compress-force=zstd"),
            "{t}"
        );
    }
    // Incompressible data (the default) is stored as it is.
    let v = write_16m(&fs.mnt, &["--fallocate=none"]);
    assert!(!codes(&v).contains(&"compression".into()), "{v:#}");
}

#[test]
fn btrfs_without_compression_never_warns_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "btrfs", 256, ""));
    for extra in [
        &["--zero_buffers", "--fallocate=none"][..],
        &[
            "--verify=pattern",
            "--verify_pattern=0xff",
            "--fallocate=none",
        ],
    ] {
        let v = write_16m(&fs.mnt, extra);
        assert!(!codes(&v).contains(&"compression".into()), "{v:#}");
    }
}

/// An ext4 on a loop device attached with direct I/O, for one test:
/// unmounted and detached when dropped.
struct DirectLoopFs {
    mnt: PathBuf,
    dev: String,
}

impl DirectLoopFs {
    fn new(dir: &Path, size_mib: u64) -> Result<DirectLoopFs, Missing> {
        iolab_testkit::req::loop_devices()?;
        let img = dir.join("direct.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(size_mib << 20)
            .unwrap();
        let out = Proc::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(&img)
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(Missing::here(format!(
                "cannot attach a loop device with direct I/O: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mnt = dir.join("direct-mnt");
        let made = DirectLoopFs { mnt, dev };
        let dio = std::fs::read_to_string(format!(
            "/sys/block/{}/loop/dio",
            made.dev.trim_start_matches("/dev/")
        ))
        .unwrap_or_default();
        if dio.trim() != "1" {
            return Err(Missing::here(format!("direct I/O refused on {}", made.dev)));
        }
        std::fs::create_dir(&made.mnt).unwrap();
        let ok = Proc::new("mkfs.ext4")
            .args(["-q", "-F", &made.dev])
            .status()
            .is_ok_and(|s| s.success())
            && Proc::new("mount")
                .arg(&made.dev)
                .arg(&made.mnt)
                .status()
                .is_ok_and(|s| s.success());
        assert!(ok, "mkfs.ext4 and mount of {}", made.dev);
        Ok(made)
    }
}

impl Drop for DirectLoopFs {
    fn drop(&mut self) {
        common::unmount(&self.mnt);
        let _ = Proc::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// `iolab quick` on `dir`, 2 s of I/O, a 64 MiB file, no metadata pass:
/// its JSON notes.
fn quick_notes(dir: &Path) -> Vec<String> {
    let out = common::iolab()
        .args([
            "quick",
            "--time",
            "2s",
            "--size",
            "64m",
            "--meta-files",
            "0",
        ])
        .args(["--no-store", "--output-format", "json"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = common::json_of(&out.stdout);
    v["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no notes: {v:#}"))
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn quick_on_a_loop_image_without_direct_io_says_why_its_figures_are_memorys() {
    let _cache = page_cache_lock();
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 160, ""));
    let notes = quick_notes(&fs.mnt);
    let all = notes.join("\n");
    assert!(
        notes.iter().any(|n| n.contains("is on the loop device")
            && n.contains("through the host's page cache")
            && n.contains("--direct-io=on")),
        "{all}"
    );
    // The read tests, named, found their data in the host's memory.
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("SEQ1M Q8T1 read") && n.contains("is in memory")),
        "{all}"
    );
}

#[test]
fn quick_on_a_loop_device_with_direct_io_has_no_memory_notes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(DirectLoopFs::new(dir.path(), 160));
    let notes = quick_notes(&fs.mnt).join("\n");
    assert!(!notes.contains("loop device"), "{notes}");
    assert!(!notes.contains("page cache"), "{notes}");
}
