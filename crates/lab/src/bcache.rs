//! bcache, a stacked target: a cache device in front of a backing device,
//! seen as one block device (/dev/bcacheN) that the lab formats and
//! measures like any other. It is made with `make-bcache -C CACHE -B
//! BACKING` (which ties the backing device to the new cache set), both
//! halves registered through /sys/fs/bcache/register (udev does it on most
//! systems; a second registration is harmless), and put in the cache mode
//! of the target: writethrough, writeback or writearound with the cache
//! attached, or `off`: the backing device through bcache with the cache
//! detached, the same layers without the cache.
//!
//! Teardown stops the bcache device, unregisters the cache set and waits
//! until the kernel has let go of both devices, so that the loop devices
//! under them can be detached. Every step is a write to sysfs; a step the
//! kernel does not finish in [`SETTLE`] is an error naming it.
//!
//! The counters of bcache itself (hits, misses, bypassed bytes, dirty
//! data; /sys/block/bcacheN/bcache/stats_total and dirty_data) are read
//! around each workload run, to say how much of a figure came from the
//! cache.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::LabError;
use crate::exec;

/// How long the kernel may take to show or remove a device after a sysfs
/// write.
pub const SETTLE: Duration = Duration::from_secs(20);

/// Where bcache's registration files are when the module is loaded.
pub const SYSFS: &str = "/sys/fs/bcache";

/// How a bcache target uses its cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Writes go to both devices before they complete; reads are cached.
    Writethrough,
    /// Writes complete in the cache and reach the backing device later.
    Writeback,
    /// Writes go to the backing device only; reads are cached.
    Writearound,
    /// The cache detached: the backing device through bcache alone.
    Off,
}

impl CacheMode {
    /// Every mode, in the order the lab measures them by default.
    pub const ALL: [CacheMode; 4] = [
        CacheMode::Writethrough,
        CacheMode::Writeback,
        CacheMode::Writearound,
        CacheMode::Off,
    ];

    /// The name bcache's cache_mode file uses (and `off`).
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Writethrough => "writethrough",
            CacheMode::Writeback => "writeback",
            CacheMode::Writearound => "writearound",
            CacheMode::Off => "off",
        }
    }

    /// Parses a mode name.
    pub fn parse(s: &str) -> Option<CacheMode> {
        CacheMode::ALL.into_iter().find(|m| m.name() == s.trim())
    }

    /// Parses a comma list of modes (`writethrough,writeback,off`).
    pub fn parse_list(s: &str) -> Result<Vec<CacheMode>, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            let Some(m) = CacheMode::parse(part) else {
                return Err(format!(
                    "`{}` is not a bcache mode (writethrough, writeback, writearound or off)",
                    part.trim()
                ));
            };
            if out.contains(&m) {
                return Err(format!("bcache mode `{}` is given twice", m.name()));
            }
            out.push(m);
        }
        Ok(out)
    }
}

/// Whether this host can build a bcache stack, or why not.
pub fn support() -> Result<PathBuf, String> {
    let tool = exec::find_program("make-bcache").ok_or_else(|| {
        "make-bcache is not installed (not on PATH; Debian package bcache-tools)".to_string()
    })?;
    if !Path::new(SYSFS).join("register").exists() {
        return Err(format!(
            "the kernel has no bcache ({SYSFS}/register is missing; modprobe bcache)"
        ));
    }
    Ok(tool)
}

/// A bcache device made of a cache and a backing device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bcache {
    /// `/dev/bcacheN`.
    pub device: PathBuf,
    /// `bcacheN`.
    pub name: String,
    pub cache: PathBuf,
    pub backing: PathBuf,
    /// The cache set's UUID (its directory in /sys/fs/bcache).
    pub set: String,
}

/// The sysfs directory of a block device (`/sys/class/block/NAME`).
fn class_dir(dev: &Path) -> Result<PathBuf, LabError> {
    let canonical = dev.canonicalize().unwrap_or_else(|_| dev.to_path_buf());
    let name = canonical
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| LabError::Refused {
            device: dev.display().to_string(),
            reason: "not a device path".into(),
        })?;
    Ok(Path::new("/sys/class/block").join(name))
}

/// Writes `value` to a sysfs file.
fn write(path: &Path, value: &str) -> Result<(), LabError> {
    std::fs::write(path, value).map_err(|e| LabError::io("cannot write", path, e))
}

/// Waits until `ready()` holds, for up to [`SETTLE`]; `what` names the
/// wait in the error.
fn settle<T>(what: &str, mut ready: impl FnMut() -> Option<T>) -> Result<T, LabError> {
    let start = Instant::now();
    loop {
        if let Some(v) = ready() {
            return Ok(v);
        }
        if start.elapsed() > SETTLE {
            return Err(LabError::Command {
                command: format!("waiting for {what}"),
                status: format!("not done after {} s", SETTLE.as_secs()),
                stderr: "the kernel did not finish the bcache step".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last component of a symlink's target.
fn link_name(p: &Path) -> Option<String> {
    Some(
        std::fs::read_link(p)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

/// The size of a block device in bytes (/sys/class/block/NAME/size).
fn device_bytes(dev: &Path) -> Result<u64, LabError> {
    let path = class_dir(dev)?.join("size");
    let text = std::fs::read_to_string(&path).map_err(|e| LabError::io("cannot read", &path, e))?;
    text.trim()
        .parse::<u64>()
        .map(|sectors| sectors * 512)
        .map_err(|_| {
            LabError::io(
                "cannot parse",
                &path,
                std::io::ErrorKind::InvalidData.into(),
            )
        })
}

/// The bucket size for a cache of `bytes`: bcache's default (512 KiB)
/// where the cache holds 2,048 buckets of it, smaller (a power of two, at
/// least 8 KiB) on a small cache, which bcache refuses with fewer than
/// about a thousand buckets ("cache device is too small").
pub fn bucket_bytes(bytes: u64) -> u64 {
    let mut b = 512u64 << 10;
    while b > 8 << 10 && bytes / b < 2048 {
        b /= 2;
    }
    b
}

/// Formats `cache` and `backing` as one bcache device in `mode`; returns
/// it once /dev/bcacheN is there and the mode is set.
pub fn make(
    tool: &Path,
    cache: &Path,
    backing: &Path,
    mode: CacheMode,
) -> Result<Bcache, LabError> {
    let bucket = format!("{}k", bucket_bytes(device_bytes(cache)?) >> 10);
    let args = [
        "--wipe-bcache".as_ref(),
        "--bucket".as_ref(),
        bucket.as_ref(),
        "-C".as_ref(),
        cache.as_os_str(),
        "-B".as_ref(),
        backing.as_os_str(),
    ];
    exec::run(&tool.to_string_lossy(), &args)?;
    for dev in [cache, backing] {
        // udev may have registered it already: a second registration
        // fails harmlessly, and the wait below is what counts.
        let _ = std::fs::write(
            Path::new(SYSFS).join("register"),
            dev.as_os_str().as_encoded_bytes(),
        );
    }
    let backing_sys = class_dir(backing)?;
    let cache_sys = class_dir(cache)?;
    let name = settle(
        &format!("the bcache device on {}", backing.display()),
        || link_name(&backing_sys.join("bcache/dev")),
    )?;
    let set = settle(&format!("the cache set of {}", cache.display()), || {
        link_name(&cache_sys.join("bcache/set"))
    })?;
    let device = PathBuf::from(format!("/dev/{name}"));
    settle(&format!("{}", device.display()), || {
        device.exists().then_some(())
    })?;
    let b = Bcache {
        device,
        name,
        cache: cache.to_path_buf(),
        backing: backing.to_path_buf(),
        set,
    };
    b.set_mode(mode)?;
    Ok(b)
}

impl Bcache {
    /// `/sys/block/bcacheN/bcache/FILE`.
    fn sys(&self, file: &str) -> PathBuf {
        Path::new("/sys/block")
            .join(&self.name)
            .join("bcache")
            .join(file)
    }

    /// Whether the cache is attached.
    pub fn attached(&self) -> bool {
        self.sys("cache").exists()
    }

    /// Puts the device in `mode`: attaches the cache set if it is not,
    /// writes cache_mode, or detaches the cache for `off`.
    pub fn set_mode(&self, mode: CacheMode) -> Result<(), LabError> {
        if mode == CacheMode::Off {
            if self.attached() {
                write(&self.sys("detach"), "1")?;
            }
            return settle(&format!("{} to detach its cache", self.name), || {
                (!self.attached()).then_some(())
            });
        }
        if !self.attached() {
            write(&self.sys("attach"), &self.set)?;
            settle(&format!("{} to attach its cache", self.name), || {
                self.attached().then_some(())
            })?;
        }
        write(&self.sys("cache_mode"), mode.name())
    }

    /// The mode in force: the bracketed word of cache_mode, or `off`.
    pub fn mode(&self) -> Option<CacheMode> {
        if !self.attached() {
            return Some(CacheMode::Off);
        }
        let text = std::fs::read_to_string(self.sys("cache_mode")).ok()?;
        let word = text.split('[').nth(1)?.split(']').next()?;
        CacheMode::parse(word)
    }

    /// bcache's own counters now.
    pub fn counters(&self) -> Counters {
        let stat = |f: &str| {
            std::fs::read_to_string(self.sys(&format!("stats_total/{f}"))).unwrap_or_default()
        };
        let count = |f: &str| stat(f).trim().parse::<u64>().unwrap_or(0);
        Counters {
            hits: count("cache_hits"),
            misses: count("cache_misses"),
            bypass_hits: count("cache_bypass_hits"),
            bypass_misses: count("cache_bypass_misses"),
            bypassed_bytes: parse_size(&stat("bypassed")).unwrap_or(0),
            dirty_bytes: std::fs::read_to_string(self.sys("dirty_data"))
                .ok()
                .and_then(|t| parse_size(&t))
                .unwrap_or(0),
        }
    }

    /// Stops the device and unregisters the cache set, and waits until
    /// both are gone.
    pub fn stop(&self) -> Result<(), LabError> {
        stop_device(&self.name)?;
        unregister_set(&self.set)
    }
}

/// Stops `/sys/block/NAME` (a bcache device) and waits until it is gone.
pub fn stop_device(name: &str) -> Result<(), LabError> {
    let dir = Path::new("/sys/block").join(name);
    if dir.exists() {
        write(&dir.join("bcache/stop"), "1")?;
    }
    settle(&format!("{name} to stop"), || (!dir.exists()).then_some(()))
}

/// Unregisters the cache set `uuid` and waits until it is gone.
pub fn unregister_set(uuid: &str) -> Result<(), LabError> {
    let dir = Path::new(SYSFS).join(uuid);
    if dir.exists() {
        write(&dir.join("unregister"), "1")?;
    }
    settle(&format!("cache set {uuid} to unregister"), || {
        (!dir.exists()).then_some(())
    })
}

/// Undoes whatever bcache holds `dev` as a member: the bcache device on
/// it (a backing device) or its cache set (a cache device). Returns what
/// was released, for the cleanup report.
pub fn release_member(dev: &Path) -> Result<Vec<String>, LabError> {
    let sys = class_dir(dev)?.join("bcache");
    let mut done = Vec::new();
    if let Some(name) = link_name(&sys.join("dev")) {
        stop_device(&name)?;
        done.push(format!("stopped /dev/{name}"));
    }
    if let Some(set) = link_name(&sys.join("set")) {
        unregister_set(&set)?;
        done.push(format!("unregistered bcache cache set {set}"));
    }
    Ok(done)
}

/// bcache's counters of a device (stats_total, dirty_data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub hits: u64,
    pub misses: u64,
    pub bypass_hits: u64,
    pub bypass_misses: u64,
    pub bypassed_bytes: u64,
    pub dirty_bytes: u64,
}

impl Counters {
    /// What happened between `before` and `self` (dirty data is a level,
    /// not a count: its value now).
    pub fn since(&self, before: &Counters) -> Counters {
        Counters {
            hits: self.hits.saturating_sub(before.hits),
            misses: self.misses.saturating_sub(before.misses),
            bypass_hits: self.bypass_hits.saturating_sub(before.bypass_hits),
            bypass_misses: self.bypass_misses.saturating_sub(before.bypass_misses),
            bypassed_bytes: self.bypassed_bytes.saturating_sub(before.bypassed_bytes),
            dirty_bytes: self.dirty_bytes,
        }
    }

    /// Hits as a share of the lookups that went through the cache, in
    /// percent; None with no lookups.
    pub fn hit_pct(&self) -> Option<f64> {
        let all = self.hits + self.misses;
        (all > 0).then(|| 100.0 * self.hits as f64 / all as f64)
    }
}

/// A size as bcache prints it: a number with an optional one-letter
/// binary suffix (`0`, `512`, `1.5k`, `12.3M`, `2.0G`).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 1u64 << 10),
        'M' => (&t[..t.len() - 1], 1 << 20),
        'G' => (&t[..t.len() - 1], 1 << 30),
        'T' => (&t[..t.len() - 1], 1 << 40),
        'P' => (&t[..t.len() - 1], 1 << 50),
        _ => (t, 1),
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * mult as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_name_each_other() {
        for m in CacheMode::ALL {
            assert_eq!(CacheMode::parse(m.name()), Some(m));
        }
        assert_eq!(
            CacheMode::parse_list("writeback, off").unwrap(),
            [CacheMode::Writeback, CacheMode::Off]
        );
        let e = CacheMode::parse_list("writeback,fast").unwrap_err();
        assert!(e.contains("`fast` is not a bcache mode"), "{e}");
        let e = CacheMode::parse_list("off,off").unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn buckets_fit_small_caches() {
        assert_eq!(bucket_bytes(64 << 30), 512 << 10);
        assert_eq!(bucket_bytes(1 << 30), 512 << 10);
        assert_eq!(bucket_bytes(256 << 20), 128 << 10);
        assert_eq!(bucket_bytes(64 << 20), 32 << 10);
        assert_eq!(bucket_bytes(1 << 20), 8 << 10);
    }

    #[test]
    fn sizes_as_bcache_prints_them() {
        assert_eq!(parse_size("0\n"), Some(0));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("12.0M"), Some(12 << 20));
        assert_eq!(parse_size("2.0G"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("-1k"), None);
    }

    #[test]
    fn counters_subtract_counts_and_keep_the_dirty_level() {
        let a = Counters {
            hits: 10,
            misses: 5,
            bypassed_bytes: 100,
            dirty_bytes: 7,
            ..Default::default()
        };
        let b = Counters {
            hits: 40,
            misses: 15,
            bypassed_bytes: 300,
            dirty_bytes: 3,
            ..Default::default()
        };
        let d = b.since(&a);
        assert_eq!(
            (d.hits, d.misses, d.bypassed_bytes, d.dirty_bytes),
            (30, 10, 200, 3)
        );
        assert_eq!(d.hit_pct(), Some(75.0));
        assert_eq!(Counters::default().hit_pct(), None);
    }
}
