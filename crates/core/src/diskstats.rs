//! Block-device statistics for fio's "Disk stats" and "disk_util": which
//! disk holds a job's file (a partition resolves to its disk, a file on a
//! loop mount to the loop device), and the change in `/sys/block/DEV/stat`
//! over the run, with util and in_queue as fio computes them.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use iolab_stats::DiskResult;

/// The kernel's name of the whole disk behind a path ("vda", "loop3"), if
/// it is on a block device.
pub fn disk_of(path: &Path) -> Option<String> {
    // A file that does not exist yet will live in its directory.
    let mut probe = path.to_path_buf();
    let meta = loop {
        match std::fs::metadata(&probe) {
            Ok(m) => break m,
            Err(_) => {
                let parent = probe.parent()?.to_path_buf();
                probe = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent
                };
            }
        }
    };
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = split_dev(dev);
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).ok()?;
    let disk = if sys.join("partition").exists() {
        real.parent()?.file_name()?
    } else {
        real.file_name()?
    };
    Some(disk.to_string_lossy().into_owned())
}

/// glibc's major()/minor() of a dev_t.
fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// The counters of `/sys/block/DEV/stat` at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskSnapshot {
    pub name: String,
    pub fields: [u64; 11],
    pub at: Instant,
}

impl DiskSnapshot {
    pub fn read(name: &str) -> Option<DiskSnapshot> {
        let text = std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?;
        Self::parse(name, &text)
    }

    pub fn parse(name: &str, text: &str) -> Option<DiskSnapshot> {
        let mut fields = [0u64; 11];
        let mut it = text.split_whitespace();
        for f in fields.iter_mut() {
            *f = it.next()?.parse().ok()?;
        }
        Some(DiskSnapshot {
            name: name.to_string(),
            fields,
            at: Instant::now(),
        })
    }

    /// What happened between `self` and a later snapshot.
    pub fn delta(&self, later: &DiskSnapshot) -> DiskResult {
        let d = |i: usize| later.fields[i].saturating_sub(self.fields[i]);
        let elapsed_ms = later.at.duration_since(self.at).as_millis().max(1) as f64;
        let io_ticks = d(9) as f64;
        DiskResult {
            name: self.name.clone(),
            read_ios: d(0),
            read_merges: d(1),
            read_bytes: d(2) * 512,
            write_bytes: d(6) * 512,
            read_ticks_ms: d(3),
            write_ios: d(4),
            write_merges: d(5),
            write_ticks_ms: d(7),
            in_queue_ms: d(10),
            util: (io_ticks * 100.0 / elapsed_ms).min(100.0),
        }
    }
}

/// The distinct disks behind a set of paths, in first-seen order.
pub fn disks_of<'a>(paths: impl Iterator<Item = &'a Path>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        if let Some(d) = disk_of(p) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dev_numbers_split_as_glibc_does() {
        assert_eq!(split_dev(65024), (254, 0));
        assert_eq!(split_dev((7 << 8) | 3), (7, 3));
        // A large minor spills into the high bits.
        assert_eq!(
            split_dev((259 << 8) | (0x12345 & 0xff) | ((0x12345 & !0xff) << 12)),
            (259, 0x12345)
        );
    }

    #[test]
    fn delta_and_util() {
        let a =
            DiskSnapshot::parse("vda", "100 10 800 50 200 20 1600 70 0 1000 3000 0 0 0 0").unwrap();
        let mut b =
            DiskSnapshot::parse("vda", "150 12 1200 80 260 25 2100 95 1 1500 3600").unwrap();
        b.at = a.at + Duration::from_millis(1000);
        let r = a.delta(&b);
        assert_eq!((r.read_ios, r.read_merges, r.read_ticks_ms), (50, 2, 30));
        assert_eq!((r.write_ios, r.write_merges, r.write_ticks_ms), (60, 5, 25));
        assert_eq!(r.in_queue_ms, 600);
        assert!(
            (r.util - 50.0).abs() < 1e-9,
            "500 ms busy of 1000: {}",
            r.util
        );
        assert!(DiskSnapshot::parse("x", "1 2 3").is_none());
    }

    #[test]
    fn the_test_directory_has_a_disk_or_none() {
        // On a block-device filesystem the name is a /sys/block entry; on
        // tmpfs or overlay there is none. Either way no panic and no error.
        let dir = std::env::temp_dir();
        if let Some(d) = disk_of(&dir.join("not-created-yet")) {
            assert!(Path::new("/sys/block").join(&d).exists(), "{d}");
        }
    }
}
