//! Loop devices: attaching an image with `losetup --find --show
//! --direct-io=on` (so the backing file is not cached a second time),
//! detaching, and finding which loop devices an image backs by reading
//! /sys/block/loop*/loop/backing_file, so that cleanup detaches only
//! iolab's own devices.

use std::path::{Path, PathBuf};

use crate::error::LabError;
use crate::exec;

/// Attaches `image` to a free loop device and returns the device path.
pub fn attach(image: &Path) -> Result<PathBuf, LabError> {
    let ran = exec::run(
        "losetup",
        &[
            "--find".as_ref(),
            "--show".as_ref(),
            "--direct-io=on".as_ref(),
            image.as_os_str(),
        ],
    )?;
    let dev = ran.stdout.trim();
    if !dev.starts_with("/dev/") {
        return Err(LabError::Command {
            command: format!("losetup --find --show --direct-io=on {}", image.display()),
            status: "exit 0".into(),
            stderr: format!("unexpected output `{dev}`"),
        });
    }
    Ok(PathBuf::from(dev))
}

/// How long [`detach`] waits for the kernel to let go of the image.
const DETACH_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Detaches a loop device, and waits until it is detached: while
/// another process still holds the device open (udev probing it after a
/// mkfs, for one), the kernel only marks it to be cleared at its last
/// close, and `losetup --detach` returns before that.
pub fn detach(device: &Path) -> Result<(), LabError> {
    let image = backing_file(device);
    exec::run("losetup", &["--detach".as_ref(), device.as_os_str()])?;
    let Some(image) = image else { return Ok(()) };
    let start = std::time::Instant::now();
    while backing_file(device).as_deref() == Some(image.as_path()) {
        if start.elapsed() > DETACH_WAIT {
            return Err(LabError::Command {
                command: format!("losetup --detach {}", device.display()),
                status: "exit 0".into(),
                stderr: format!(
                    "still attached to `{}` after {} s: another process holds it open; \
                     the kernel detaches it at the last close",
                    image.display(),
                    DETACH_WAIT.as_secs()
                ),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(())
}

/// The file behind a loop device, if it is attached.
pub fn backing_file(device: &Path) -> Option<PathBuf> {
    let name = device.file_name()?.to_str()?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    let text = text.trim_end_matches('\n');
    Some(PathBuf::from(
        text.strip_suffix(" (deleted)").unwrap_or(text),
    ))
}

/// Every loop device whose backing file is `image`.
pub fn devices_backed_by(image: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("loop"))
        .map(|n| PathBuf::from(format!("/dev/{n}")))
        .filter(|d| backing_file(d).as_deref() == Some(image))
        .collect();
    out.sort();
    out
}

/// Whether direct I/O is on for a loop device (/sys/block/loopN/loop/dio).
pub fn direct_io(device: &Path) -> Option<bool> {
    let name = device.file_name()?.to_str()?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).ok()?;
    Some(text.trim() == "1")
}
