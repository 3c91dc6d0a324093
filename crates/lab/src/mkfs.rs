//! Formatting: `mkfs.NAME` with the flag that lets it overwrite an old
//! signature without asking (the lab only formats images it created or a
//! device named with --destroy-data), the user's mkfs options, and the
//! device; the time it took is the mkfs time of the comparison.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use crate::error::LabError;
use crate::exec;

/// The flags that make `mkfs.NAME` proceed without a question.
pub fn force_flags(fs: &str) -> &'static [&'static str] {
    match fs {
        "ext2" | "ext3" | "ext4" => &["-F", "-q"],
        "xfs" => &["-f", "-q"],
        "btrfs" => &["-f", "-q"],
        "f2fs" | "nilfs2" => &["-f", "-q"],
        // mkfs.jfs asks "Continue? (Y/N)" unless -q.
        "jfs" => &["-q"],
        // mkfs.reiserfs: -f twice goes on without asking, -q is quiet.
        "reiserfs" => &["-f", "-f", "-q"],
        _ => &[],
    }
}

/// The argument vector of `mkfs.NAME` for a device.
pub fn args(fs: &str, options: &[String], device: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = force_flags(fs).iter().map(OsString::from).collect();
    v.extend(options.iter().map(OsString::from));
    v.push(device.as_os_str().to_owned());
    v
}

/// What `program` (a `mkfs.NAME`) says its version is; empty when it
/// does not say.
pub fn version(program: &Path) -> String {
    exec::version(&program.to_string_lossy(), &["-V", "--version"])
}

/// Formats `device` with `program` (a `mkfs.NAME`); returns its time.
pub fn format(
    program: &Path,
    fs: &str,
    options: &[String],
    device: &Path,
) -> Result<Duration, LabError> {
    let program = program.to_string_lossy();
    Ok(exec::run(&program, &args(fs, options, device))?.elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_order() {
        let a = args(
            "btrfs",
            &["-m".into(), "single".into()],
            Path::new("/dev/loop7"),
        );
        assert_eq!(a, ["-f", "-q", "-m", "single", "/dev/loop7"]);
        let a = args("vfat", &[], Path::new("/dev/loop7"));
        assert_eq!(a, ["/dev/loop7"]);
        // The tools that ask for confirmation on a terminal get the flags
        // that make them go on without one.
        assert_eq!(args("jfs", &[], Path::new("/dev/vdb")), ["-q", "/dev/vdb"]);
        assert_eq!(
            args("reiserfs", &[], Path::new("/dev/vdb")),
            ["-f", "-f", "-q", "/dev/vdb"]
        );
    }
}
