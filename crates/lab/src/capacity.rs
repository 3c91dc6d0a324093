//! Capacity of a mounted filesystem from statvfs: size, available, used
//! and inode counts, as people tabulate them after formatting the same
//! partition with each filesystem.

use std::path::Path;

use crate::error::LabError;

/// What statvfs says about a mounted filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Total data blocks times fragment size.
    pub size_bytes: u64,
    /// Available to an unprivileged user.
    pub avail_bytes: u64,
    /// Size minus free blocks.
    pub used_bytes: u64,
    pub inodes_total: u64,
    pub inodes_free: u64,
}

/// statvfs of the filesystem holding `path`.
pub fn of(path: &Path) -> Result<Capacity, LabError> {
    let s = iolab_engine::file::space(path).map_err(|e| LabError::io("cannot statvfs", path, e))?;
    Ok(Capacity {
        size_bytes: s.size_bytes,
        avail_bytes: s.avail_bytes,
        used_bytes: s.used_bytes,
        inodes_total: s.inodes_total,
        inodes_free: s.inodes_free,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_filesystem() {
        let c = of(Path::new("/")).unwrap();
        assert!(c.size_bytes > 0);
        assert!(c.avail_bytes <= c.size_bytes);
        assert!(c.used_bytes <= c.size_bytes);
        assert!(of(Path::new("/nonexistent-iolab")).is_err());
    }
}
