//! The environment probe on this machine's real mounts: the facts it
//! reports agree with `uname`, `findmnt` and /sys.

use iolab_testkit::{skip, skip_case};
use std::path::Path;
use std::process::Command;

use iolab_core::probe::{self, Environment};

/// `findmnt -n -o COLUMN -T path`, or None when findmnt is missing.
fn findmnt(column: &str, path: &Path) -> Option<String> {
    let out = Command::new("findmnt")
        .args(["-n", "-o", column, "-T"])
        .arg(path)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn check(path: &Path) -> Environment {
    let env = probe::probe(path);
    let uname = Command::new("uname").arg("-r").output().unwrap();
    assert_eq!(env.kernel, String::from_utf8_lossy(&uname.stdout).trim());
    assert!(!env.host.is_empty());
    assert!(env.cpu_count >= 1);
    assert!(env.memory_bytes > 1 << 20);
    assert!(Path::new(&env.target).is_absolute(), "{}", env.target);
    assert_eq!(env.iolab_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(env.hypervisor, iolab_core::virt::detect());
    assert!(env.target.starts_with(&env.mount_point), "{env:?}");
    let Some(fs_type) = findmnt("FSTYPE", path) else {
        skip_case!("comparing with findmnt: findmnt is not installed");
        return env;
    };
    assert_eq!(env.fs_type, fs_type, "{env:#?}");
    assert_eq!(
        env.mount_point,
        findmnt("TARGET", path).unwrap(),
        "{env:#?}"
    );
    assert_eq!(
        env.mount_source,
        findmnt("SOURCE", path).unwrap(),
        "{env:#?}"
    );
    let options = findmnt("OPTIONS", path).unwrap();
    for opt in env.mount_options.split(',') {
        assert!(
            options.split(',').any(|o| o == opt),
            "{opt} not in {options}"
        );
    }
    if env.mount_source.starts_with("/dev/") {
        let sys = Path::new("/sys/block").join(&env.block_device);
        assert!(
            !env.block_device.is_empty() && sys.exists(),
            "{} is not a whole disk: {env:#?}",
            env.block_device
        );
        assert!(env.device_size_bytes.unwrap_or(0) > 0, "{env:#?}");
        assert!(env.rotational.is_some(), "{env:#?}");
        assert!(!env.scheduler.is_empty(), "{env:#?}");
    }
    env
}

#[test]
fn probe_of_the_current_directory() {
    check(Path::new("."));
}

#[test]
fn probe_of_tmp_and_a_path_not_yet_there() {
    let env = check(Path::new("/tmp"));
    let later = probe::probe(Path::new("/tmp/iolab-probe-not-created/x"));
    assert_eq!(later.fs_type, env.fs_type);
    assert!(later.target.ends_with("/iolab-probe-not-created/x"));
}

#[test]
fn probe_of_a_tmpfs_has_no_block_device() {
    let shm = Path::new("/dev/shm");
    if findmnt("FSTYPE", shm).as_deref() != Some("tmpfs") {
        skip!("/dev/shm is not a tmpfs mount here");
    }
    let env = check(shm);
    assert_eq!(env.fs_type, "tmpfs");
    assert_eq!(env.block_device, "");
    assert_eq!(env.device_size_bytes, None);
}

/// Undoes a loop mount when the test ends, however it ends.
struct LoopMount {
    dev: String,
    mnt: std::path::PathBuf,
    mounted: bool,
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn probe_of_a_loop_mount_finds_the_disk_under_its_image() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => {
            skip!("cannot attach a loop device (needs root and losetup)");
        }
    };
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mut guard = LoopMount {
        dev: dev.clone(),
        mnt: mnt.clone(),
        mounted: false,
    };
    let mkfs = Command::new("mkfs.ext4").args(["-q", &dev]).status();
    if !mkfs.is_ok_and(|s| s.success()) {
        skip!("mkfs.ext4 is not available");
    }
    let mounted = Command::new("mount").arg(&dev).arg(&mnt).status();
    assert!(mounted.is_ok_and(|s| s.success()), "mount {dev}");
    guard.mounted = true;
    let env = check(&mnt);
    assert_eq!(env.fs_type, "ext4");
    assert_eq!(env.mount_source, dev);
    let host = probe::probe(dir.path());
    assert_eq!(
        env.block_device, host.block_device,
        "the loop device resolves to the disk holding its image"
    );
    drop(guard);
}
