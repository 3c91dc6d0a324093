//! Block devices known to compress what they store, found through sysfs:
//! zram (a `comp_algorithm` and a size set), and VDO volumes (the dm-vdo
//! target, which compresses and deduplicates: an old kvdo volume has a
//! directory under /sys/kvdo; the `vdo` manager's devices have a `VDO-`
//! device-mapper uuid and LVM's VDO pools a `-vpool` one). The walk goes
//! from a disk down the layers under it: device-mapper and md members
//! (`slaves`) and the device holding a loop device's backing file. Every
//! fact is read from files; nothing is run.

use std::fs;
use std::path::Path;

use crate::diskstats::disks_under;
use crate::probe::active_choice;

/// A device under a job's files that stores less than it is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressing {
    /// The kernel's name of that device ("zram1", "dm-3").
    pub device: String,
    /// What it is ("zram (lzo-rle)", "a VDO volume").
    pub what: String,
}

/// Layers walked at most, against loops in a broken tree.
const MAX_LAYERS: usize = 32;

/// The first device known to compress in the stack under the block device
/// `disk`, with sysfs at `sys`.
pub fn compressing_under(sys: &Path, disk: &str) -> Option<Compressing> {
    let mut todo = vec![disk.to_string()];
    let mut seen: Vec<String> = Vec::new();
    while let Some(name) = todo.pop() {
        if seen.contains(&name) || seen.len() >= MAX_LAYERS {
            continue;
        }
        seen.push(name.clone());
        let Ok(dir) = fs::canonicalize(sys.join("class/block").join(&name)) else {
            continue;
        };
        if let Some(what) = compresses(sys, &dir) {
            return Some(Compressing { device: name, what });
        }
        if let Ok(slaves) = fs::read_dir(dir.join("slaves")) {
            for s in slaves.flatten() {
                todo.push(s.file_name().to_string_lossy().into_owned());
            }
        }
        if let Some(backing) = read(&dir.join("loop/backing_file")) {
            todo.extend(disks_under(Path::new(&backing)));
        }
    }
    None
}

/// What makes the device at sysfs directory `dir` compress, if anything.
fn compresses(sys: &Path, dir: &Path) -> Option<String> {
    if let Some(algos) = read(&dir.join("comp_algorithm")) {
        // An unset zram device (disksize 0) stores nothing.
        let size: u64 = read(&dir.join("disksize"))?.parse().ok()?;
        return (size > 0).then(|| format!("zram ({})", active_choice(&algos)));
    }
    let dm_name = read(&dir.join("dm/name"))?;
    let uuid = read(&dir.join("dm/uuid")).unwrap_or_default();
    let vdo = sys.join("kvdo").join(&dm_name).is_dir()
        || uuid.starts_with("VDO-")
        || uuid.ends_with("-vpool");
    vdo.then(|| format!("a VDO volume ({dm_name})"))
}

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A device directory under `devices/virtual/block`, linked from
    /// `class/block`.
    fn device(root: &Path, name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir = root.join("devices/virtual/block").join(name);
        fs::create_dir_all(&dir).unwrap();
        for (f, text) in files {
            let p = dir.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        fs::create_dir_all(root.join("class/block")).unwrap();
        symlink(&dir, root.join("class/block").join(name)).unwrap();
        dir
    }

    fn slave(upper: &Path, lower: &Path) {
        fs::create_dir_all(upper.join("slaves")).unwrap();
        symlink(lower, upper.join("slaves").join(lower.file_name().unwrap())).unwrap();
    }

    #[test]
    fn zram_compresses_once_it_has_a_size() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let algos = ("comp_algorithm", "lzo lzo-rle [zstd] lz4\n");
        device(r, "zram0", &[algos, ("disksize", "0\n")]);
        device(r, "zram1", &[algos, ("disksize", "268435456\n")]);
        assert_eq!(compressing_under(r, "zram0"), None);
        let c = compressing_under(r, "zram1").unwrap();
        assert_eq!(
            (c.device.as_str(), c.what.as_str()),
            ("zram1", "zram (zstd)")
        );
    }

    #[test]
    fn vdo_is_found_under_device_mapper_layers() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let disk = device(r, "sdb", &[]);
        let pool = device(
            r,
            "dm-1",
            &[
                ("dm/name", "vg-vpool0-vpool\n"),
                ("dm/uuid", "LVM-abc-vpool\n"),
            ],
        );
        slave(&pool, &disk);
        let lv = device(
            r,
            "dm-2",
            &[("dm/name", "vg-lv\n"), ("dm/uuid", "LVM-abcdef\n")],
        );
        slave(&lv, &pool);
        let c = compressing_under(r, "dm-2").unwrap();
        assert_eq!(c.device, "dm-1");
        assert!(c.what.contains("VDO"), "{}", c.what);
        // The vdo manager's uuid, and an old kvdo volume's directory.
        device(
            r,
            "dm-3",
            &[("dm/name", "vdo1\n"), ("dm/uuid", "VDO-1234\n")],
        );
        assert!(compressing_under(r, "dm-3").is_some());
        device(r, "dm-4", &[("dm/name", "old\n")]);
        assert!(compressing_under(r, "dm-4").is_none());
        fs::create_dir_all(r.join("kvdo/old")).unwrap();
        assert!(compressing_under(r, "dm-4").is_some());
        // Plain disks and linear volumes do not compress.
        assert_eq!(compressing_under(r, "sdb"), None);
        let plain = device(r, "dm-5", &[("dm/name", "vg-home\n")]);
        slave(&plain, &disk);
        assert_eq!(compressing_under(r, "dm-5"), None);
    }
}
