//! NILFS2's cleaner: a log-structured filesystem reclaims old segments
//! only through a user-space daemon, nilfs_cleanerd, which mount.nilfs2
//! (nilfs-tools) starts at mount and umount.nilfs2 stops. Without it a
//! NILFS2 filesystem never frees space, and its figures are those of a
//! filesystem that has not yet had to. The lab does not start one of its
//! own: it says, for each NILFS2 target, whether the cleaner ran while it
//! was measured.

use std::path::Path;

/// The pids of the nilfs_cleanerd processes running for `device` or
/// `mount_point` (named among their arguments), from /proc.
pub fn pids(device: &Path, mount_point: &Path) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let want = [
        device.as_os_str().as_encoded_bytes(),
        mount_point.as_os_str().as_encoded_bytes(),
    ];
    let mut out: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                return false;
            };
            let mut args = cmdline.split(|&b| b == 0);
            let is_cleaner = args
                .next()
                .is_some_and(|a0| a0.rsplit(|&b| b == b'/').next() == Some(b"nilfs_cleanerd"));
            is_cleaner && args.any(|a| want.contains(&a))
        })
        .collect();
    out.sort_unstable();
    out
}

/// The note on a NILFS2 target: whether its cleaner runs now (just after
/// the mount the workloads use).
pub fn note(label: &str, device: &Path, mount_point: &Path) -> String {
    match pids(device, mount_point).as_slice() {
        [] => format!(
            "{label}: no NILFS2 cleaner ran (nilfs_cleanerd, started by mount.nilfs2 from nilfs-tools): \
             without it NILFS2 never reclaims old segments, so these are the figures of a \
             filesystem that has not had to yet"
        ),
        p => format!(
            "{label}: NILFS2's cleaner ran during the workloads (nilfs_cleanerd, pid {}, started by \
             mount.nilfs2 and stopped by umount.nilfs2)",
            p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_cleaner_for_a_device_nothing_cleans() {
        let none = pids(Path::new("/dev/iolab-none"), Path::new("/iolab-none"));
        assert!(none.is_empty());
        let n = note(
            "nilfs2",
            Path::new("/dev/iolab-none"),
            Path::new("/iolab-none"),
        );
        assert!(n.starts_with("nilfs2: no NILFS2 cleaner ran"), "{n}");
    }

    #[test]
    fn a_process_named_nilfs_cleanerd_with_the_device_is_found() {
        // `tail -f` named nilfs_cleanerd (argv[0]), given the device as an
        // argument, as mount.nilfs2 starts the real one; it keeps
        // following /dev/null after failing to open the device.
        use std::os::unix::process::CommandExt;
        let Some(tail) = crate::exec::find_program("tail") else {
            iolab_testkit::skip!("no tail program on PATH");
        };
        let mut child = std::process::Command::new(tail)
            .arg0("/sbin/nilfs_cleanerd")
            .args(["-f", "/dev/null", "/dev/iolab-test-dev"])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let dev = Path::new("/dev/iolab-test-dev");
        // Until the child has exec'd, its cmdline is this test's.
        let mut found = Vec::new();
        for _ in 0..500 {
            found = pids(dev, Path::new("/iolab-none"));
            if !found.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found, [child.id()]);
        assert!(pids(Path::new("/dev/other"), Path::new("/other")).is_empty());
    }
}
