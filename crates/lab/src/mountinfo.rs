//! The mount table as the kernel shows it in /proc/self/mountinfo: which
//! device (major:minor and source) is mounted where, with the octal
//! escapes of mount points (`\040` for a space) undone.

use std::path::{Path, PathBuf};

/// One line of mountinfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    /// The st_dev of the mounted filesystem (btrfs shows an anonymous one).
    pub dev: (u32, u32),
    pub mount_point: PathBuf,
    pub fstype: String,
    /// The mount source: a device path for block filesystems.
    pub source: String,
}

/// The current mount table; empty when it cannot be read.
pub fn read() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// Parses mountinfo text; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let f: Vec<&str> = left.split(' ').collect();
    let (maj, min) = f.get(2)?.split_once(':')?;
    let mut r = right.split(' ');
    let fstype = r.next()?.to_string();
    let source = unescape(r.next()?);
    Some(MountEntry {
        dev: (maj.parse().ok()?, min.parse().ok()?),
        mount_point: PathBuf::from(unescape(f.get(4)?)),
        fstype,
        source,
    })
}

/// Undoes the kernel's `\ooo` escapes (space, tab, newline, backslash).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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
        assert_eq!(e[0].dev, (253, 0));
        assert_eq!(e[1].mount_point, Path::new("/tmp/iolab lab/mnt"));
        assert_eq!(e[1].fstype, "btrfs");
        assert_eq!(e[1].source, "/dev/loop3");
        assert!(is_mount_point(&e, Path::new("/mnt/x")));
        assert!(!is_mount_point(&e, Path::new("/mnt")));
    }

    #[test]
    fn reads_this_host() {
        assert!(read().iter().any(|e| e.mount_point == Path::new("/")));
    }
}
