//! Helpers the CLI test binaries share: the binary, a directory listing,
//! JSON from a report, whether fio is installed, and a tmpfs mounted for
//! one test. Each test binary uses some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

use assert_cmd::Command;
use serde_json::Value;

/// The iolab binary of this build.
pub fn iolab() -> Command {
    Command::cargo_bin("iolab").expect("the iolab binary is built")
}

/// The names in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The JSON document in a report (what comes before its first `{`, such
/// as fio's notices, is skipped).
pub fn json_of(out: &[u8]) -> Value {
    let start = out
        .iter()
        .position(|&b| b == b'{')
        .expect("JSON in the output");
    serde_json::from_slice(&out[start..]).expect("the report is JSON")
}

/// Whether fio is installed; says why a test skips when it is not.
pub fn fio_available() -> bool {
    let ok = Proc::new("fio")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipped: fio is not installed (scripts/setup.sh installs it as root)");
    }
    ok
}

/// A tmpfs mounted on a directory for one test, unmounted when dropped.
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts with `opts` (e.g. `size=1m`, `ro`); None when that is not
    /// allowed (not root).
    pub fn mount(dir: &Path, opts: &str) -> Option<Tmpfs> {
        let ok = Proc::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Proc::new("umount").arg(&self.0).status();
    }
}
