//! Mounting and unmounting with timing, `sync`, and dropping the page,
//! dentry and inode caches (/proc/sys/vm/drop_caches) for cold mounts and
//! cold runs. `mount` and `umount` are the system programs, run with an
//! argument vector; the times include starting them (about a millisecond).

use std::path::Path;
use std::time::Duration;

use crate::error::LabError;
use crate::exec;

/// Mounts `device` (of type `fs`) at `dir`, with `-o options` when given;
/// returns how long `mount` took.
pub fn mount(
    fs: &str,
    device: &Path,
    dir: &Path,
    options: Option<&str>,
) -> Result<Duration, LabError> {
    let mut args: Vec<&std::ffi::OsStr> = vec!["-t".as_ref(), fs.as_ref()];
    if let Some(o) = options {
        args.push("-o".as_ref());
        args.push(o.as_ref());
    }
    args.push(device.as_os_str());
    args.push(dir.as_os_str());
    Ok(exec::run("mount", &args)?.elapsed)
}

/// What the `mount` program says its version is ("mount from util-linux
/// 2.38.1 ..."); empty when it does not say.
pub fn version() -> String {
    exec::version("mount", &["-V", "--version"])
}

/// Unmounts `dir`; returns how long the `umount` that succeeded took.
/// A mount that is busy for a moment (another process passing through
/// the directory) is tried again, up to about two seconds.
pub fn umount(dir: &Path) -> Result<Duration, LabError> {
    let mut tries = 0;
    loop {
        match exec::run("umount", &[dir.as_os_str()]) {
            Ok(r) => return Ok(r.elapsed),
            Err(LabError::Command { ref stderr, .. }) if stderr.contains("busy") && tries < 40 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Flushes dirty data of every filesystem.
pub fn sync() {
    iolab_engine::host::sync();
}

/// Writes back dirty data and drops clean caches (needs root).
pub fn drop_caches() -> Result<(), LabError> {
    iolab_engine::host::drop_caches()
        .map_err(|e| LabError::io("cannot write", "/proc/sys/vm/drop_caches", e))
}

/// Unmounts, drops caches and mounts again; returns the mount's time.
pub fn cold_mount(
    fs: &str,
    device: &Path,
    dir: &Path,
    options: Option<&str>,
) -> Result<Duration, LabError> {
    umount(dir)?;
    drop_caches()?;
    mount(fs, device, dir, options)
}

/// The median of some durations (the lower middle for an even count).
pub fn median(times: &[Duration]) -> Option<Duration> {
    iolab_stats::median_index_by(times, Duration::cmp).map(|i| times[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[ms(5)]), Some(ms(5)));
        assert_eq!(median(&[ms(9), ms(1), ms(5)]), Some(ms(5)));
        assert_eq!(median(&[ms(9), ms(1), ms(5), ms(7)]), Some(ms(5)));
    }
}
