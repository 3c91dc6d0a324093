//! The mount table as the kernel shows it in /proc/self/mountinfo, read
//! with the environment probe's parser (octal escapes of mount points such
//! as `\040` for a space undone), and the questions the lab asks of it.

use std::path::Path;

pub use iolab_core::probe::{parse_mountinfo as parse, MountEntry};

/// The current mount table; empty when it cannot be read.
pub fn read() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// What is mounted at `path` (the last entry, when one is mounted over
/// another): its filesystem type, options in effect and source.
pub fn at<'a>(entries: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    entries.iter().rev().find(|e| e.mount_point == real)
}

/// Whether something is mounted exactly at `path`.
pub fn is_mount_point(entries: &[MountEntry], path: &Path) -> bool {
    entries.iter().any(|e| e.mount_point == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 0:45 / /tmp/iolab\\040lab/mnt rw,relatime shared:20 - btrfs /dev/loop3 rw,space_cache=v2
41 22 7:4 / /mnt/x rw - xfs /dev/loop4 rw
garbage line
";

    #[test]
    fn parses_entries_and_escapes() {
        let e = parse(TEXT);
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].major, e[0].minor), (253, 0));
        assert_eq!(e[1].mount_point, Path::new("/tmp/iolab lab/mnt"));
        assert_eq!(e[1].fs_type, "btrfs");
        assert_eq!(e[1].source, "/dev/loop3");
        assert!(is_mount_point(&e, Path::new("/mnt/x")));
        assert!(!is_mount_point(&e, Path::new("/mnt")));
        let x = at(&e, Path::new("/tmp/iolab lab/mnt")).unwrap();
        assert_eq!(x.options(), "rw,relatime,space_cache=v2");
        assert_eq!(x.source, "/dev/loop3");
        assert!(at(&e, Path::new("/mnt")).is_none());
    }

    #[test]
    fn reads_this_host() {
        assert!(read().iter().any(|e| e.mount_point == Path::new("/")));
    }
}
