//! Helpers the CLI test binaries share: the binary (run, or started in the
//! background), a directory listing, JSON from a report, whether fio is
//! installed, a tmpfs or a loop-mounted filesystem for one test, a
//! blkio cgroup that slows a device down while a run goes on, and bench/
//! with the C compiler for its programs. Each test
//! binary uses some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

use assert_cmd::Command;
// Not every test binary uses them.
#[allow(unused_imports)]
pub use iolab_testkit::mount::{unmount, Mounted};
use iolab_testkit::Missing;
use serde_json::Value;

/// The repository's bench/ directory (the C limit loops and plugins).
pub fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench")
}

/// Runs the C compiler with `args`; the test fails with its messages when
/// it does not succeed.
pub fn cc<S: AsRef<std::ffi::OsStr>>(args: &[S]) {
    let made = Proc::new("cc").args(args).output().expect("start cc");
    assert!(
        made.status.success(),
        "cc {:?}: {}",
        args.iter().map(AsRef::as_ref).collect::<Vec<_>>(),
        String::from_utf8_lossy(&made.stderr)
    );
}

/// The iolab binary of this build.
/// Results go to a database of the tests' own, never the user's.
pub fn iolab() -> Command {
    let mut c = Command::cargo_bin("iolab").expect("the iolab binary is built");
    c.env("IOLAB_DB", test_db());
    c
}

/// The lab's shortest comparison, to which a test adds its targets and
/// options: one run of each workload of the basic suite.
pub const BASIC_COMPARE: [&str; 5] = ["compare", "--suite", "basic", "--repeat", "1"];

/// `iolab compare --suite basic --repeat 1 ARGS`, with the test's database.
pub fn basic_compare(args: &[&str]) -> Command {
    let mut c = iolab();
    c.args(BASIC_COMPARE).args(args);
    c
}

/// The same comparison as a process to start in the background.
pub fn basic_compare_proc(args: &[&str]) -> Proc {
    let mut c = Proc::new(assert_cmd::cargo::cargo_bin("iolab"));
    c.env("IOLAB_DB", test_db()).args(BASIC_COMPARE).args(args);
    c
}

/// `iolab run --output-format=json ARGS` in `dir`, started in the
/// background with its output piped, for a test to act while it runs.
pub fn spawn_run_json(dir: &Path, args: &[&str]) -> std::process::Child {
    Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", test_db())
        .current_dir(dir)
        .args(["run", "--output-format=json"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start iolab")
}

/// The report of a run started by `spawn_run_json`, which must succeed.
pub fn wait_json(child: std::process::Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

/// The current test's own results database (crates/testkit), so that no
/// test sees another's runs and none touches the user's.
pub fn test_db() -> PathBuf {
    iolab_testkit::db()
}

/// The names in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The JSON document in a report (what comes before its first `{`, such
/// as fio's notices, is skipped).
pub fn json_of(out: &[u8]) -> Value {
    let start = out
        .iter()
        .position(|&b| b == b'{')
        .expect("JSON in the output");
    serde_json::from_slice(&out[start..]).expect("the report is JSON")
}

/// `iolab run --output-format=json ARGS` in `dir`, which must succeed;
/// the report.
pub fn run_json(dir: &Path, args: &[&str]) -> Value {
    let out = iolab()
        .current_dir(dir)
        .args(["run", "--output-format=json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

/// `iolab run --no-store --output-format=json ARGS` in `dir` under
/// `strace -f` with `strace_opts` (e.g. `-e trace=fsync`): its output and
/// the trace, one line per call, each starting with the thread id.
pub fn strace_iolab_run(
    dir: &Path,
    strace_opts: &[&str],
    args: &[&str],
) -> (std::process::Output, String) {
    let trace = dir.join("strace.out");
    let out = Proc::new("strace")
        .arg("-f")
        .args(strace_opts)
        .arg("-o")
        .arg(&trace)
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .current_dir(dir)
        .args(["run", "--no-store", "--output-format=json"])
        .args(args)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    (out, text)
}

/// A filesystem on a loop-mounted image for one test, unmounted (and its
/// loop device detached) when dropped.
pub struct LoopFs {
    pub mnt: PathBuf,
}

impl LoopFs {
    /// Makes a `size_mib` image of `fs` in `dir` and mounts it with `opts`
    /// (may be empty); why not when the machine does not allow it (not
    /// root, no mkfs tool, no loop devices, a kernel without `fs`).
    pub fn new(dir: &Path, fs: &str, size_mib: u64, opts: &str) -> Result<LoopFs, Missing> {
        iolab_testkit::req::mkfs(fs)?;
        iolab_testkit::req::loop_devices()?;
        let img = dir.join(format!("{fs}.img"));
        let mnt = dir.join(format!("{fs}-mnt"));
        std::fs::create_dir_all(&mnt).unwrap();
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(size_mib << 20).unwrap();
        let mkfs = Proc::new(format!("mkfs.{fs}"))
            .arg(if fs == "xfs" || fs == "btrfs" {
                "-f"
            } else {
                "-F"
            })
            .arg("-q")
            .arg(&img)
            .output();
        match mkfs {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                return Err(Missing::here(format!(
                    "mkfs.{fs} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )))
            }
            Err(e) => return Err(Missing::here(format!("mkfs.{fs}: {e}"))),
        }
        let mut o = String::from("loop");
        if !opts.is_empty() {
            o.push(',');
            o.push_str(opts);
        }
        let out = Proc::new("mount")
            .args(["-t", fs, "-o", &o])
            .arg(&img)
            .arg(&mnt)
            .output()
            .map_err(|e| Missing::here(format!("mount: {e}")))?;
        if !out.status.success() {
            return Err(Missing::here(format!(
                "cannot mount a loop {fs}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(LoopFs { mnt })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        unmount(&self.mnt);
    }
}

/// The block device (major:minor) a directory's filesystem is on.
pub fn dev_of(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).unwrap().dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major}:{minor}")
}

/// A blkio cgroup (v1) made for one test, removed when dropped.
pub struct Throttle(PathBuf);

impl Throttle {
    pub fn new() -> Result<Throttle, Missing> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.read_bps_device").exists() {
            return Err(Missing::here(
                "no cgroup v1 blkio controller to slow a device down with",
            ));
        }
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root.join(format!("iolab-test-{}-{n}", std::process::id()));
        if let Err(e) = std::fs::create_dir(&dir) {
            return Err(Missing::here(format!(
                "cannot make a blkio cgroup (root needed): {e}"
            )));
        }
        Ok(Throttle(dir))
    }

    /// Limits reads of device `dev` (major:minor) to `bps` for the
    /// process `pid`, from now on.
    pub fn limit_reads(&self, pid: u32, dev: &str, bps: u64) {
        std::fs::write(
            self.0.join("blkio.throttle.read_bps_device"),
            format!("{dev} {bps}"),
        )
        .unwrap();
        std::fs::write(self.0.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        // Empty once the process has exited.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Bytes the process has had read from storage (/proc/PID/io).
pub fn read_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Writes the file's dirty pages out (sync) and drops its pages from the
/// page cache (`dd iflag=nocache count=0`, POSIX_FADV_DONTNEED over the
/// whole file), as an image not read since boot would be.
pub fn drop_file_cache(path: &Path) {
    assert!(Proc::new("sync").status().unwrap().success());
    let ok = Proc::new("dd")
        .arg(format!("if={}", path.display()))
        .args(["iflag=nocache", "count=0", "status=none"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "dd iflag=nocache on {}", path.display());
}

/// A loop device over an image file for one test, detached when dropped.
pub struct LoopDev {
    pub dev: String,
}

impl LoopDev {
    /// Attaches `img`; why not when the machine does not allow it (not
    /// root, no loop devices).
    pub fn attach(img: &Path) -> Result<LoopDev, Missing> {
        iolab_testkit::req::loop_devices()?;
        let out = Proc::new("losetup")
            .args(["--find", "--show"])
            .arg(img)
            .output();
        match out {
            Ok(o) if o.status.success() => Ok(LoopDev {
                dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
            }),
            Ok(o) => Err(Missing::here(format!(
                "cannot attach a loop device: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ))),
            Err(e) => Err(Missing::here(format!("losetup: {e}"))),
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Proc::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Makes `path` an iolab results database of a few records, then
/// overwrites one of its pages: the header (and so the application id)
/// stays intact, the records' pages do not.
pub fn damaged_database(path: &Path) {
    {
        let mut store = iolab_store::Store::open(path).unwrap();
        for i in 0..20 {
            let mut r = iolab_store::Record::new(iolab_store::Kind::Meta);
            r.result_json = format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(3000));
            store.insert(&r).unwrap();
        }
    }
    let mut bytes = std::fs::read(path).unwrap();
    assert!(bytes.len() >= 4 * 4096, "{} bytes", bytes.len());
    for b in &mut bytes[2 * 4096..3 * 4096] {
        *b = 0xA5;
    }
    std::fs::write(path, &bytes).unwrap();
}
