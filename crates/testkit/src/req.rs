//! What a test can require of the machine, one function each, for
//! `require!`: each says why it is missing and whether scripts/setup.sh
//! would have installed it.

use std::path::Path;

/// Why a test cannot run here.
#[derive(Debug, Clone)]
pub struct Missing {
    pub reason: String,
    /// scripts/setup.sh installs what is missing, so CI must have it.
    pub installed_by_setup: bool,
}

impl Missing {
    /// Something about this machine that no package provides (root, a
    /// kernel feature, a property of the filesystem).
    pub fn here(reason: impl Into<String>) -> Missing {
        Missing {
            reason: reason.into(),
            installed_by_setup: false,
        }
    }
}

/// The commands scripts/setup.sh installs when they are missing: each
/// `command -v NAME` on a line that adds to its `need` list.
pub fn setup_commands() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/setup.sh");
    let text = std::fs::read_to_string(script).unwrap_or_default();
    text.lines()
        .filter(|l| l.contains("need+=("))
        .filter_map(|l| l.split("command -v ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Whether `cmd` is an executable on PATH (or a path to one).
pub fn on_path(cmd: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let exec = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if cmd.contains('/') {
        return exec(Path::new(cmd));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(Into::into))
        .any(|d| exec(&d.join(cmd)))
}

/// The effective uid of this process (the owner of /proc/self).
pub fn euid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    euid() == Some(0)
}

/// The process runs as root (mount, loop devices, mkfs, another user).
pub fn root() -> Result<(), Missing> {
    if is_root() {
        Ok(())
    } else {
        Err(Missing::here("needs root"))
    }
}

/// The command `cmd` is installed (`tool = "script"`).
pub fn tool(cmd: &str) -> Result<(), Missing> {
    if on_path(cmd) {
        return Ok(());
    }
    let installed_by_setup = setup_commands().iter().any(|c| c == cmd);
    let how = if installed_by_setup {
        " (scripts/setup.sh installs it as root)"
    } else {
        ""
    };
    Err(Missing {
        reason: format!("{cmd} is not installed{how}"),
        installed_by_setup,
    })
}

/// fio, to compare with.
pub fn fio() -> Result<(), Missing> {
    tool("fio")
}

/// strace, to watch system calls from outside.
pub fn strace() -> Result<(), Missing> {
    tool("strace")
}

/// QEMU, for the virtual machine tests.
pub fn qemu() -> Result<(), Missing> {
    tool("qemu-system-x86_64")
}

/// mpirun, to start several ranks.
pub fn mpirun() -> Result<(), Missing> {
    tool("mpirun")
}

/// A Chromium to render HTML reports with (any of its usual names).
pub fn chromium() -> Result<(), Missing> {
    const NAMES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];
    if NAMES.iter().any(|n| on_path(n)) {
        return Ok(());
    }
    tool(NAMES[0])
}

/// The mkfs tool of filesystem `fs` (`mkfs = "xfs"`).
pub fn mkfs(fs: &str) -> Result<(), Missing> {
    tool(&format!("mkfs.{fs}"))
}

/// The kernel knows filesystem `fs`: in /proc/filesystems, or a module
/// of that name that can be loaded (`fs_kernel = "f2fs"`).
pub fn fs_kernel(fs: &str) -> Result<(), Missing> {
    let listed = std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|t| t.lines().any(|l| l.split_whitespace().last() == Some(fs)));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let module = Path::new("/lib/modules")
        .join(release.trim())
        .join("kernel/fs")
        .join(fs);
    if listed || module.is_dir() {
        Ok(())
    } else {
        Err(Missing::here(format!("this kernel has no {fs}")))
    }
}

/// Each of `fs` can be made and mounted here: its mkfs tool and a kernel
/// that knows it (`filesystems = &["ext4", "xfs"]`; formatting also needs
/// root, which `require!` names apart).
pub fn filesystems(fs: &[&str]) -> Result<(), Missing> {
    for f in fs {
        mkfs(f)?;
        fs_kernel(f)?;
    }
    Ok(())
}

/// io_uring is allowed (not disabled by the kernel.io_uring_disabled
/// sysctl). A seccomp filter that refuses it shows only when a test tries,
/// and such a test says so with `skip!`.
pub fn io_uring() -> Result<(), Missing> {
    match std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        Ok(v) if v.trim() != "0" => Err(Missing::here(format!(
            "io_uring is disabled here (kernel.io_uring_disabled = {})",
            v.trim()
        ))),
        _ => Ok(()),
    }
}

/// A loop device can be attached (root, and /dev/loop-control).
pub fn loop_devices() -> Result<(), Missing> {
    root()?;
    if Path::new("/dev/loop-control").exists() {
        Ok(())
    } else {
        Err(Missing::here("no loop devices (/dev/loop-control)"))
    }
}
