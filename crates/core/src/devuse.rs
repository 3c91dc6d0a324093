//! Who else uses a block device: a mount of it or of one of its
//! partitions (/proc/self/mountinfo), swap (/proc/swaps), a holder such as
//! device-mapper or md (/sys/class/block/*/holders), and, when none of
//! those shows, the kernel's own word (an exclusive open fails with EBUSY
//! while anything claims the device). A run refuses to write to such a
//! device, and the lab refuses to format it; each reason names the device
//! node and what holds it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::diskstats::split_dev;
use crate::probe::{parse_mountinfo, MountEntry};

/// A block device node and the kernel's name for it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// `sda`, `sda1`, `loop3`.
    name: String,
    dev: (u32, u32),
}

/// What holds the block device at `device` or any of its partitions, one
/// sentence each ("/dev/loop0 is mounted at /mnt"); empty when nothing
/// does. `device` must be a block device.
pub fn users(device: &Path) -> Vec<String> {
    let Ok(meta) = std::fs::metadata(device) else {
        return Vec::new();
    };
    let rdev = meta.rdev();
    let (major, minor) = split_dev(rdev);
    let me = Node {
        name: sys_name(rdev).unwrap_or_else(|| {
            device
                .canonicalize()
                .unwrap_or_else(|_| device.to_path_buf())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        dev: (major as u32, minor as u32),
    };
    let mut nodes = vec![me.clone()];
    nodes.extend(partitions(&me.name));

    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let mut reasons = Vec::new();
    for n in &nodes {
        reasons.extend(holds(n, &mounts, &swaps));
    }
    if reasons.is_empty() && iolab_engine::file::block_device_busy(device) {
        reasons.push(format!(
            "/dev/{} is busy (an exclusive open fails with EBUSY)",
            me.name
        ));
    }
    reasons
}

/// What keeps one device node busy: mounts, swap, holders.
fn holds(n: &Node, mounts: &[MountEntry], swaps: &str) -> Vec<String> {
    let node = PathBuf::from(format!("/dev/{}", n.name));
    let mut out = Vec::new();
    for m in mounts {
        let by_source = Path::new(&m.source).canonicalize().ok().as_deref() == Some(node.as_path());
        if (m.major, m.minor) == n.dev || by_source {
            out.push(format!(
                "{} is mounted at {}",
                node.display(),
                m.mount_point.display()
            ));
        }
    }
    for line in swaps.lines().skip(1) {
        if let Some(p) = line.split_whitespace().next() {
            if Path::new(p).canonicalize().ok().as_deref() == Some(node.as_path()) {
                out.push(format!("{} is used as swap", node.display()));
            }
        }
    }
    let holders = Path::new("/sys/class/block").join(&n.name).join("holders");
    if let Ok(dir) = std::fs::read_dir(holders) {
        for h in dir.filter_map(|e| e.ok()) {
            out.push(format!(
                "{} is held by {}",
                node.display(),
                h.file_name().to_string_lossy()
            ));
        }
    }
    out
}

/// The zoned model of the block device at `path` as the kernel gives it
/// (`none`, `host-aware`, `host-managed`); None when it is no block
/// device or the kernel does not say. A partition answers for its disk.
pub fn zoned_model(path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let (major, minor) = split_dev(meta.rdev());
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    [dir.join("queue/zoned"), dir.join("../queue/zoned")]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| t.trim().to_string())
}

/// The kernel's name of a block device number (/sys/dev/block/MAJ:MIN).
fn sys_name(rdev: u64) -> Option<String> {
    let (major, minor) = split_dev(rdev);
    let link = format!("/sys/dev/block/{major}:{minor}");
    let target = std::fs::canonicalize(link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// The partitions of a whole disk (sub-directories with a `partition`
/// file in /sys/class/block/NAME).
fn partitions(name: &str) -> Vec<Node> {
    let base = Path::new("/sys/class/block").join(name);
    let Ok(dir) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| {
            let dev = std::fs::read_to_string(e.path().join("dev")).ok()?;
            let (maj, min) = dev.trim().split_once(':')?;
            Some(Node {
                name: e.file_name().to_string_lossy().into_owned(),
                dev: (maj.parse().ok()?, min.parse().ok()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_swap_and_holders_are_named() {
        let n = Node {
            name: "loop9".into(),
            dev: (7, 9),
        };
        let mounts = parse_mountinfo("40 22 7:9 / /mnt/data rw - ext4 /dev/loop9 rw\n");
        let r = holds(&n, &mounts, "Filename Type Size Used Priority\n");
        assert_eq!(r, ["/dev/loop9 is mounted at /mnt/data"]);
        let other = parse_mountinfo("40 22 7:8 / /mnt/other rw - ext4 /dev/loop8 rw\n");
        assert!(holds(&n, &other, "").is_empty());
    }
}
