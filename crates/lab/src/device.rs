//! The checks before the lab formats a block device the user named with
//! `--device`: the user said `--destroy-data`; the path is a block device;
//! neither it nor any of its partitions is mounted (/proc/self/mountinfo),
//! used as swap (/proc/swaps) or held by another device
//! (/sys/class/block/*/holders, e.g. device-mapper or md); and the kernel
//! grants an exclusive open. A refusal names the device and what holds it.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::LabError;
use crate::mountinfo::{self, MountEntry};

/// A block device and the kernel's name for it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// `sda`, `sda1`, `loop3`.
    name: String,
    dev: (u32, u32),
}

fn refused(device: &Path, reason: impl Into<String>) -> LabError {
    LabError::Refused {
        device: device.display().to_string(),
        reason: reason.into(),
    }
}

/// Checks that `device` may be formatted; returns its canonical path.
pub fn check(device: &Path, destroy_data: bool) -> Result<PathBuf, LabError> {
    if !destroy_data {
        return Err(refused(
            device,
            "--device formats it and destroys the data on it; add --destroy-data to confirm",
        ));
    }
    let meta =
        std::fs::metadata(device).map_err(|e| refused(device, format!("cannot stat it: {e}")))?;
    if !meta.file_type().is_block_device() {
        return Err(refused(device, "it is not a block device"));
    }
    let canonical = device
        .canonicalize()
        .unwrap_or_else(|_| device.to_path_buf());
    let rdev = meta.rdev();
    let me = Node {
        name: sys_name(rdev).unwrap_or_else(|| {
            canonical
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        dev: (libc::major(rdev), libc::minor(rdev)),
    };
    let mut nodes = vec![me.clone()];
    nodes.extend(partitions(&me.name));

    let mounts = mountinfo::read();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let mut reasons = Vec::new();
    for n in &nodes {
        reasons.extend(holds(n, &mounts, &swaps));
    }
    if reasons.is_empty() {
        // The kernel's own word: an exclusive open of a block device fails
        // with EBUSY while anything (a mount, a holder) claims it.
        if let Err(e) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(device)
        {
            if e.raw_os_error() == Some(libc::EBUSY) {
                reasons.push(format!(
                    "/dev/{} is busy (an exclusive open fails with EBUSY)",
                    me.name
                ));
            } else {
                reasons.push(format!("cannot open it: {e}"));
            }
        }
    }
    if reasons.is_empty() {
        Ok(canonical)
    } else {
        Err(refused(device, reasons.join("; ")))
    }
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

/// The kernel's name of a block device number (/sys/dev/block/MAJ:MIN).
fn sys_name(rdev: u64) -> Option<String> {
    let link = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
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
    fn needs_the_flag_first() {
        let e = check(Path::new("/dev/null"), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/null") && e.contains("--destroy-data"),
            "{e}"
        );
    }

    #[test]
    fn only_block_devices() {
        let e = check(Path::new("/dev/null"), true).unwrap_err().to_string();
        assert!(e.contains("not a block device"), "{e}");
        let e = check(Path::new("/nonexistent-iolab"), true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent-iolab") && e.contains("cannot stat"),
            "{e}"
        );
    }

    #[test]
    fn holders_are_named() {
        let n = Node {
            name: "loop9".into(),
            dev: (7, 9),
        };
        let mounts = mountinfo::parse("40 22 7:9 / /mnt/data rw - ext4 /dev/loop9 rw\n");
        let r = holds(&n, &mounts, "Filename Type Size Used Priority\n");
        assert_eq!(r, ["/dev/loop9 is mounted at /mnt/data"]);
    }
}
