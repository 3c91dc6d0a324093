//! Block-device statistics for fio's "Disk stats" and "disk_util": which
//! disks hold a job's file (a partition resolves to its disk, a file on a
//! loop mount to the loop device, a filesystem whose files carry an
//! anonymous device number, as btrfs's do, to the devices its mount names:
//! the mount's source, or every device of a multi-device btrfs), and the
//! change in `/sys/block/DEV/stat` over the run, with util and in_queue as
//! fio computes them.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use iolab_stats::DiskResult;

use crate::probe::{mount_of, parse_mountinfo, resolve_existing, MountEntry};

/// The kernel's name of the (first) whole disk behind a path ("vda",
/// "loop3"), if it is on a block device.
pub fn disk_of(path: &Path) -> Option<String> {
    disks_under(path).into_iter().next()
}

/// The kernel's names of the whole disks behind a path: one, or each
/// device of a filesystem that spans several; none off block devices.
pub fn disks_under(path: &Path) -> Vec<String> {
    // A file that does not exist yet will live in its directory.
    let mut probe = path.to_path_buf();
    let meta = loop {
        match fs::metadata(&probe) {
            Ok(m) => break m,
            Err(_) => {
                let Some(parent) = probe.parent() else {
                    return Vec::new();
                };
                probe = if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_path_buf()
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
    let sys = Path::new("/sys");
    if let Some(d) = whole_disk(&sys.join(format!("dev/block/{major}:{minor}"))) {
        return vec![d];
    }
    let mounts = parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    disks_of_anonymous(sys, major, minor, &mounts, &resolve_existing(&probe))
}

/// The disks under a filesystem whose device number `major:minor` is not
/// a block device (btrfs, and any filesystem the kernel gives an
/// anonymous number): from the mount with that number (else the mount
/// holding `path`), its `/dev/...` source, and for btrfs every device
/// listed under `/sys/fs/btrfs/UUID/devices`.
fn disks_of_anonymous(
    sys: &Path,
    major: u64,
    minor: u64,
    mounts: &[MountEntry],
    path: &Path,
) -> Vec<String> {
    let mount = mounts
        .iter()
        .rev()
        .find(|m| u64::from(m.major) == major && u64::from(m.minor) == minor)
        .or_else(|| mount_of(mounts, path));
    let Some(m) = mount.filter(|m| m.source.starts_with("/dev/")) else {
        return Vec::new();
    };
    let source = fs::canonicalize(&m.source).unwrap_or_else(|_| PathBuf::from(&m.source));
    let Some(name) = source.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let members = if m.fs_type == "btrfs" {
        btrfs_devices(sys, &name).unwrap_or_else(|| vec![name])
    } else {
        vec![name]
    };
    let mut out: Vec<String> = Vec::new();
    for d in members
        .iter()
        .filter_map(|n| whole_disk(&sys.join("class/block").join(n)))
    {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The devices of the btrfs filesystem that has `member` among its
/// devices, sorted.
fn btrfs_devices(sys: &Path, member: &str) -> Option<Vec<String>> {
    for fsdir in fs::read_dir(sys.join("fs/btrfs")).ok()?.flatten() {
        let devices = fsdir.path().join("devices");
        if devices.join(member).exists() {
            let mut names: Vec<String> = fs::read_dir(&devices)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            return Some(names);
        }
    }
    None
}

/// The whole disk of the block device at a sysfs link (`dev/block/M:N`,
/// `class/block/NAME`): its parent when it is a partition.
fn whole_disk(link: &Path) -> Option<String> {
    let real = fs::canonicalize(link).ok()?;
    let disk = if real.join("partition").exists() {
        real.parent()?.file_name()?
    } else {
        real.file_name()?
    };
    Some(disk.to_string_lossy().into_owned())
}

/// glibc's major()/minor() of a dev_t.
pub(crate) fn split_dev(dev: u64) -> (u64, u64) {
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
    /// The counters of disk `name` now (None with the checks off).
    pub fn read(name: &str) -> Option<DiskSnapshot> {
        if !crate::checks::on() {
            return None;
        }
        let text = fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?;
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
    for d in paths.flat_map(disks_under) {
        if !out.contains(&d) {
            out.push(d);
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

    /// A sysfs tree with sda (partition sda2), loop1 and loop2, and a
    /// btrfs filesystem on loop1 and loop2.
    fn fake_sysfs() -> tempfile::TempDir {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let sda = r.join("devices/pci0/block/sda");
        fs::create_dir_all(sda.join("sda2")).unwrap();
        fs::write(sda.join("sda2/partition"), "2\n").unwrap();
        fs::create_dir_all(r.join("class/block")).unwrap();
        symlink(sda.join("sda2"), r.join("class/block/sda2")).unwrap();
        let fsdir = r.join("fs/btrfs/d7f4c35e/devices");
        fs::create_dir_all(&fsdir).unwrap();
        for n in ["loop1", "loop2"] {
            let dev = r.join("devices/virtual/block").join(n);
            fs::create_dir_all(&dev).unwrap();
            symlink(&dev, r.join("class/block").join(n)).unwrap();
            symlink(&dev, fsdir.join(n)).unwrap();
        }
        t
    }

    const MOUNTS: &str = "\
27 1 254:0 / / rw - ext4 /dev/vda rw
44 27 0:40 / /mnt/b rw - btrfs /dev/loop1 rw,space_cache=v2
45 27 0:41 / /mnt/x rw - xfs /dev/sda2 rw
46 27 0:42 / /mnt/t rw - tmpfs tmpfs rw
";

    #[test]
    fn anonymous_device_numbers_resolve_through_the_mount() {
        let t = fake_sysfs();
        let mounts = parse_mountinfo(MOUNTS);
        let at = |major, minor, path: &str| {
            disks_of_anonymous(t.path(), major, minor, &mounts, Path::new(path))
        };
        // btrfs: every device of the filesystem, from its device number.
        assert_eq!(at(0, 40, "/mnt/b/f"), ["loop1", "loop2"]);
        // A subvolume's own number is in no mount: the path finds it.
        assert_eq!(at(0, 77, "/mnt/b/subvol/f"), ["loop1", "loop2"]);
        // Another filesystem: its source, a partition, gives the disk.
        assert_eq!(at(0, 41, "/mnt/x/f"), ["sda"]);
        // No block device under tmpfs.
        assert!(at(0, 42, "/mnt/t/f").is_empty());
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
