//! Whether this host can format and mount a filesystem: `mkfs.NAME` on
//! PATH, and NAME known to the kernel (listed in /proc/filesystems, or
//! present as a loadable module that `mount` would load). A filesystem
//! that fails either test is a skipped target with the reason.

use std::path::{Path, PathBuf};

use crate::exec::find_program;

/// The verdict for one filesystem name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// Ready: the mkfs tool to run.
    Ready { mkfs: PathBuf },
    /// Not possible here, and why (one sentence).
    Missing(String),
}

/// Checks `fs` against this host.
pub fn check(fs: &str) -> Support {
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let modules = Path::new("/lib/modules").join(release.trim());
    check_with(
        fs,
        find_program(&format!("mkfs.{fs}")),
        &filesystems,
        &modules,
    )
}

/// Checks a whole target: its filesystem, and the block layer stacked
/// under it (bcache) (a directory target is always ready: `None`).
pub fn check_target(t: &crate::target::TargetSpec) -> Option<Support> {
    let crate::target::TargetKind::Format { fs, stack, .. } = &t.kind else {
        return None;
    };
    match stack {
        Some(crate::target::Stack::Bcache(_)) => {
            if let Err(why) = crate::bcache::support() {
                return Some(Support::Missing(why));
            }
        }
        None => {}
    }
    Some(check(fs))
}

/// `check` with the host facts given, for tests.
pub fn check_with(fs: &str, mkfs: Option<PathBuf>, filesystems: &str, modules: &Path) -> Support {
    let in_kernel = kernel_knows(fs, filesystems) || module_exists(fs, modules);
    let kernel =
        format!("the kernel does not support {fs} (not in /proc/filesystems, no loadable module)");
    let tool = format!("mkfs.{fs} is not installed (not on PATH)");
    match (mkfs, in_kernel) {
        (Some(mkfs), true) => Support::Ready { mkfs },
        (Some(_), false) => Support::Missing(kernel),
        (None, true) => Support::Missing(tool),
        (None, false) if KNOWN.contains(&fs) => Support::Missing(format!("{kernel} and {tool}")),
        (None, false) => Support::Missing(format!(
            "unknown filesystem `{fs}`: neither the kernel nor a mkfs.{fs} on PATH knows it"
        )),
    }
}

/// Linux filesystems a mkfs tool makes: a name from this list that the
/// host lacks is a real filesystem this host cannot make, not a typo.
const KNOWN: &[&str] = &[
    "bcachefs", "btrfs", "exfat", "ext2", "ext3", "ext4", "f2fs", "fat", "hfsplus", "jfs", "minix",
    "msdos", "nilfs2", "ntfs", "ntfs3", "reiserfs", "udf", "vfat", "xfs",
];

/// NAME appears as a filesystem type in /proc/filesystems (the second
/// column; the first is `nodev` or empty).
fn kernel_knows(fs: &str, filesystems: &str) -> bool {
    filesystems
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .any(|name| name == fs)
}

/// modules.dep lists `.../fs/NAME/NAME.ko` (compressed or not).
fn module_exists(fs: &str, modules: &Path) -> bool {
    let Ok(dep) = std::fs::read_to_string(modules.join("modules.dep")) else {
        return false;
    };
    dep.lines()
        .filter_map(|l| l.split(':').next())
        .filter_map(|p| p.rsplit('/').next())
        .any(|file| file.split('.').next() == Some(fs) && file.contains(".ko"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROC: &str = "nodev\tsysfs\nnodev\ttmpfs\n\text4\n\txfs\n";

    #[test]
    fn verdicts_name_what_is_missing() {
        let none = Path::new("/nonexistent");
        let tool = Some(PathBuf::from("/usr/sbin/mkfs.x"));
        assert!(matches!(
            check_with("ext4", tool.clone(), PROC, none),
            Support::Ready { .. }
        ));
        let Support::Missing(r) = check_with("f2fs", tool, PROC, none) else {
            panic!()
        };
        assert_eq!(
            r,
            "the kernel does not support f2fs (not in /proc/filesystems, no loadable module)"
        );
        let Support::Missing(r) = check_with("f2fs", None, PROC, none) else {
            panic!()
        };
        assert_eq!(
            r,
            "the kernel does not support f2fs (not in /proc/filesystems, no loadable module) \
             and mkfs.f2fs is not installed (not on PATH)"
        );
        let Support::Missing(r) = check_with("xfs", None, PROC, none) else {
            panic!()
        };
        assert!(r.contains("mkfs.xfs is not installed"), "{r}");
        let Support::Missing(r) = check_with("nosuchfs", None, PROC, none) else {
            panic!()
        };
        assert_eq!(
            r,
            "unknown filesystem `nosuchfs`: neither the kernel nor a mkfs.nosuchfs on PATH knows it"
        );
        // `sysfs` is a type name, `nodev` is not.
        assert!(kernel_knows("tmpfs", PROC));
        assert!(!kernel_knows("nodev", PROC));
    }

    #[test]
    fn loadable_modules_count() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("modules.dep"),
            "kernel/fs/f2fs/f2fs.ko.zst: kernel/lib/crc.ko\nkernel/fs/ext4/ext4.ko:\n",
        )
        .unwrap();
        assert!(module_exists("f2fs", d.path()));
        assert!(module_exists("ext4", d.path()));
        assert!(!module_exists("nilfs2", d.path()));
    }

    #[test]
    fn this_host() {
        // Whatever the host has, an invented name is never supported.
        assert!(matches!(check("iolabfs"), Support::Missing(_)));
    }
}
