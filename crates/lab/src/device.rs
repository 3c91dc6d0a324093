//! The checks before the lab formats a block device the user named with
//! `--device`: the user said `--destroy-data`; the path is a block device;
//! neither it nor any of its partitions is mounted (/proc/self/mountinfo),
//! used as swap (/proc/swaps) or held by another device
//! (/sys/class/block/*/holders, e.g. device-mapper or md); and the kernel
//! grants an exclusive open. A refusal names the device and what holds it.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::LabError;

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
    let mut reasons = iolab_core::devuse::users(device);
    if reasons.is_empty() {
        // users() names a busy device; one that cannot be opened at all
        // is refused too.
        if let Err(e) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(device)
        {
            reasons.push(format!("cannot open it: {e}"));
        }
    }
    if reasons.is_empty() {
        Ok(canonical)
    } else {
        Err(refused(device, reasons.join("; ")))
    }
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
}
