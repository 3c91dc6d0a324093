//! Running external programs (mkfs.*, mount, umount, losetup) with an
//! argument vector, never a shell: stdin closed, output captured, the
//! wall time of the run measured, and a failure turned into a `LabError`
//! that shows the command and its stderr.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::LabError;

/// What a finished program printed and how long it took.
#[derive(Clone, Debug)]
pub struct Ran {
    pub stdout: String,
    pub elapsed: Duration,
}

/// Runs `program args...` and waits; a non-zero exit is an error.
pub fn run<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Result<Ran, LabError> {
    let shown = shown(program, args);
    let start = Instant::now();
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .output()
        .map_err(|source| LabError::Spawn {
            program: program.to_string(),
            source,
        })?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        return Err(LabError::Command {
            command: shown,
            status: out.status.to_string(),
            stderr: brief(if stderr.is_empty() { &stdout } else { &stderr }),
        });
    }
    Ok(Ran {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        elapsed,
    })
}

/// What `program` says its version is: the first line of what it prints
/// for each of `flags` in turn (`-V`, `--version`) that holds a version
/// number, whether it exits 0 or not (busybox answers an unknown flag
/// with its usage, whose first line names its version). Empty when none
/// says, or it cannot be run. Given no device, no mkfs formats anything;
/// a program still running after a few seconds is killed.
pub fn version(program: &str, flags: &[&str]) -> String {
    flags
        .iter()
        .find_map(|flag| version_line(&printed(program, flag)?))
        .unwrap_or_default()
}

/// Everything `program flag` printed, stdout then stderr.
fn printed(program: &str, flag: &str) -> Option<String> {
    let mut child = Command::new(program)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("LC_ALL", "C")
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push('\n');
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(text)
}

/// The first line with a version number in it (digits, a dot, digits),
/// trimmed and cut to a sensible length.
pub fn version_line(text: &str) -> Option<String> {
    let has_version = |l: &str| {
        let b = l.as_bytes();
        (1..b.len().saturating_sub(1))
            .any(|i| b[i] == b'.' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
    };
    text.lines()
        .map(str::trim)
        .find(|l| has_version(l))
        .map(|l| l.chars().take(160).collect())
}

/// Most lines a failure message keeps of what a program printed.
const BRIEF_LINES: usize = 3;

/// The meaningful start of a failed program's message, on one line: the
/// lines before a usage text (which mkfs tools print after a bad option),
/// at most [`BRIEF_LINES`], joined with `; `, with a count of the rest.
pub fn brief(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let usage = lines
        .iter()
        .position(|l| l.to_ascii_lowercase().starts_with("usage:"))
        .unwrap_or(lines.len());
    // A program that printed nothing but its usage: keep that line.
    let keep = usage.clamp(1, BRIEF_LINES).min(lines.len());
    let mut s = lines[..keep].join("; ");
    if lines.len() > keep {
        s.push_str(&format!(" (and {} more lines)", lines.len() - keep));
    }
    s
}

/// The command as a user would type it, for messages.
fn shown<S: AsRef<OsStr>>(program: &str, args: &[S]) -> String {
    let mut s = program.to_string();
    for a in args {
        s.push(' ');
        s.push_str(&a.as_ref().to_string_lossy());
    }
    s
}

/// Finds `name` in the directories of `$PATH`, and in /usr/sbin and
/// /sbin, where mkfs tools live even when PATH leaves them out.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_with_argv_and_reports_failures() {
        let r = run("echo", &["a b", "$HOME"]).unwrap();
        // An argument vector: no word splitting, no expansion.
        assert_eq!(r.stdout, "a b $HOME\n");
        let e = run("ls", &["/nonexistent-iolab-path"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ls /nonexistent-iolab-path"), "{e}");
        assert!(e.contains("No such file"), "{e}");
        let e = run::<&str>("iolab-no-such-program", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot run `iolab-no-such-program`"), "{e}");
    }

    #[test]
    fn failures_keep_the_meaningful_lines() {
        let xfs = "unknown option -b ogus\nUsage: mkfs.xfs\n/* blocksize */\t\t[-b size=num]\n\t\tdevicename\n";
        assert_eq!(brief(xfs), "unknown option -b ogus (and 3 more lines)");
        let ext4 =
            "mkfs.ext4: invalid option -- 'Z'\nUsage: mkfs.ext4 [-c|-l filename]\n\t[-i bytes]\n";
        assert_eq!(
            brief(ext4),
            "mkfs.ext4: invalid option -- 'Z' (and 2 more lines)"
        );
        let btrfs = "mkfs.btrfs: unrecognized option '--bogus'\nusage: mkfs.btrfs [options] <dev>\n\n    Create a BTRFS\n";
        assert_eq!(
            brief(btrfs),
            "mkfs.btrfs: unrecognized option '--bogus' (and 2 more lines)"
        );
        assert_eq!(
            brief("mount: /x: wrong fs type.\n"),
            "mount: /x: wrong fs type."
        );
        assert_eq!(brief("a\nb\nc\nd\ne\n"), "a; b; c (and 2 more lines)");
        assert_eq!(
            brief("Usage: tool\n  -x\n"),
            "Usage: tool (and 1 more lines)"
        );
        assert_eq!(brief(""), "");
        // Through `run`: a failing program's usage text stays out.
        let e = run(
            "sh",
            &[
                "-c",
                "echo 'bad option -Q' >&2; echo 'Usage: x' >&2; echo '  -a' >&2; exit 1",
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(e.ends_with("): bad option -Q (and 2 more lines)"), "{e}");
    }

    #[test]
    fn version_lines() {
        let e2 = "mke2fs 1.47.0 (5-Feb-2023)\n\tUsing EXT2FS Library version 1.47.0\n";
        assert_eq!(
            version_line(e2).as_deref(),
            Some("mke2fs 1.47.0 (5-Feb-2023)")
        );
        let bb = "mount: invalid option -- 'V'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.\n";
        assert_eq!(
            version_line(bb).as_deref(),
            Some("BusyBox v1.35.0 (Debian 1:1.35.0-4+b3) multi-call binary.")
        );
        assert_eq!(version_line("usage: x [-V]\n"), None);
        // Through a program: what it prints on either stream, any status.
        assert_eq!(version("sh", &["-c"]), "");
        // A private directory: nothing planted at a guessable name is
        // written through.
        let tmp = tempfile::tempdir().unwrap();
        let sh = tmp.path().join("tool.sh");
        std::fs::write(
            &sh,
            "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\necho 'tool 2.5.1' >&2; exit 3\n",
        )
        .unwrap();
        std::fs::set_permissions(&sh, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let got = version(&sh.to_string_lossy(), &["-V", "--version"]);
        assert_eq!(got, "tool 2.5.1");
        assert_eq!(version("iolab-no-such-program", &["-V"]), "");
    }

    #[test]
    fn finds_programs() {
        assert!(find_program("sh").is_some());
        assert!(find_program("iolab-no-such-program").is_none());
    }
}
