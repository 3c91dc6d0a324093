//! Image files: a sparse file of the asked size, created new (never
//! overwriting a file that exists) to be attached to a loop device.

use std::fs::OpenOptions;
use std::path::Path;

use crate::error::LabError;

/// Creates `path` as a sparse file of `bytes`; fails if it exists.
pub fn create_sparse(path: &Path, bytes: u64) -> Result<(), LabError> {
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| LabError::io("cannot create image", path, e))?;
    f.set_len(bytes)
        .map_err(|e| LabError::io("cannot size image", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn sparse_and_new() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.img");
        create_sparse(&p, 1 << 30).unwrap();
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.len(), 1 << 30);
        // Sparse: (almost) no blocks allocated.
        assert!(m.blocks() * 512 < 1 << 20, "{} blocks", m.blocks());
        let e = create_sparse(&p, 1 << 20).unwrap_err().to_string();
        assert!(
            e.contains("cannot create image") && e.contains("a.img"),
            "{e}"
        );
    }
}
