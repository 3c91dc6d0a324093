//! Mounts a test makes for itself (a small tmpfs to fill, a ramfs without
//! O_DIRECT, a read-only bind mount), undone when dropped however the test
//! ends: lazily when a failed test's process still holds a file, so that
//! no mount outlives the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::req::{self, Missing};

/// Unmounts `dir`; when it is busy, detaches it lazily.
pub fn unmount(dir: &Path) {
    let done = Command::new("umount")
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !done {
        let _ = Command::new("umount").arg("--lazy").arg(dir).status();
    }
}

/// Whatever is mounted on a directory for one test, unmounted when
/// dropped.
pub struct Mounted(pub PathBuf);

impl Mounted {
    /// Mounts a `fstype` (tmpfs, ramfs ...) with `opts` (may be empty) on
    /// `dir`; why not when that is not allowed (not root).
    pub fn new(fstype: &str, opts: &str, dir: &Path) -> Result<Mounted, Missing> {
        let what = if opts.is_empty() {
            fstype.to_string()
        } else {
            format!("{fstype} ({opts})")
        };
        req::root().map_err(|_| Missing::here(format!("mounting a {what} needs root")))?;
        let mut cmd = Command::new("mount");
        cmd.args(["-t", fstype]);
        if !opts.is_empty() {
            cmd.args(["-o", opts]);
        }
        run(cmd.arg(fstype).arg(dir), &format!("cannot mount a {what}"))?;
        Ok(Mounted(dir.to_path_buf()))
    }

    /// A tmpfs with `opts` (`size=1m`, `ro` ...) on `dir`.
    pub fn tmpfs(dir: &Path, opts: &str) -> Result<Mounted, Missing> {
        Mounted::new("tmpfs", opts, dir)
    }

    /// A read-only bind mount of `src` on `dst`.
    pub fn ro_bind(src: &Path, dst: &Path) -> Result<Mounted, Missing> {
        req::root().map_err(|_| Missing::here("bind-mounting a directory needs root"))?;
        run(
            Command::new("mount").arg("--bind").arg(src).arg(dst),
            "cannot bind-mount a directory",
        )?;
        let bind = Mounted(dst.to_path_buf());
        run(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(dst),
            "cannot remount a bind mount read-only",
        )?;
        Ok(bind)
    }
}

/// Runs a mount command; why it failed, after `what`.
fn run(cmd: &mut Command, what: &str) -> Result<(), Missing> {
    let out = cmd
        .output()
        .map_err(|e| Missing::here(format!("{what}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Missing::here(format!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        unmount(&self.0);
    }
}
