//! Paths the lab makes new: sparse image files to attach to loop devices,
//! and directories (mount points, work directories). Each is created
//! exclusively (`O_EXCL`, `mkdir` that fails on an existing path), so that
//! what the state file records afterwards, and cleanup later removes, is
//! only ever something the lab made itself: the file with O_NOFOLLOW and
//! mode 0600, the directory with mode 0700.

use std::io::ErrorKind;
use std::path::Path;

use crate::error::LabError;

/// Creates `path` as a sparse file of `bytes`; fails if it exists.
pub fn create_sparse(path: &Path, bytes: u64) -> Result<(), LabError> {
    let f = iolab_core::private::create_file(path)
        .map_err(|e| exists_or("an image file", "cannot create image", path, e))?;
    if let Err(e) = f.set_len(bytes) {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(LabError::io("cannot size image", path, e));
    }
    Ok(())
}

/// Creates the directory `path` (its parent must exist); fails if
/// anything is there already. `what` says what it is for, for the message.
pub fn create_dir_new(path: &Path, what: &'static str) -> Result<(), LabError> {
    iolab_core::private::create_dir(path).map_err(|e| exists_or(what, "cannot create", path, e))
}

fn exists_or(what: &'static str, action: &'static str, path: &Path, e: std::io::Error) -> LabError {
    if e.kind() == ErrorKind::AlreadyExists {
        LabError::Exists {
            what,
            path: path.to_path_buf(),
        }
    } else {
        LabError::io(action, path, e)
    }
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
            e.contains("a.img` exists already and iolab did not create it")
                && e.contains("as an image file"),
            "{e}"
        );
        // The file that was there is untouched.
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 30);
    }

    #[test]
    fn directories_are_made_new() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("mnt");
        create_dir_new(&p, "a mount point").unwrap();
        assert!(p.is_dir());
        let e = create_dir_new(&p, "a mount point").unwrap_err().to_string();
        assert!(
            e.contains("mnt` exists already") && e.contains("as a mount point"),
            "{e}"
        );
        let e = create_dir_new(&d.path().join("no/such"), "a mount point")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot create"), "{e}");
    }
}
