//! The live status line: drawn in a pseudo-terminal (util-linux `script`
//! provides one), with progress that increases and ends at 100%; absent
//! when stderr is not a terminal or with --eta=never; forced with
//! --eta=always; new lines with --eta-newline.

mod common;

use iolab_testkit::require;
use std::path::Path;
use std::process::Command as Proc;

/// Runs iolab with `args` under a pseudo-terminal; returns what the
/// terminal showed (the test requires `script`).
fn in_pty(dir: &Path, args: &[&str]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let mut cmd = format!("cd '{}' && '{}' run", dir.display(), bin.display());
    for a in args {
        cmd.push_str(&format!(" '{a}'"));
    }
    let out = Proc::new("script")
        .env("IOLAB_DB", common::test_db())
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The status lines in terminal output, split at carriage returns and
/// newlines.
fn status_lines(text: &str) -> Vec<String> {
    text.split(['\r', '\n'])
        .map(str::trim)
        .filter(|l| l.starts_with("Jobs: "))
        .map(str::to_string)
        .collect()
}

/// The percentage in a status line: `[40.0%]`.
fn percent(line: &str) -> f64 {
    let end = line.find("%]").expect("a percentage");
    let start = line[..end].rfind('[').unwrap() + 1;
    line[start..end].parse().unwrap()
}

const JOB: &[&str] = &[
    "--name=s",
    "--filename=data",
    "--size=4m",
    "--rw=randread",
    "--ioengine=psync",
    "--runtime=2",
    "--time_based",
    "--eta-interval=250",
    "--output=/dev/null",
];

#[test]
fn the_status_line_shows_increasing_progress_and_ends_at_100() {
    let dir = tempfile::tempdir().unwrap();
    require!(tool = "script");
    let text = in_pty(dir.path(), JOB);
    let lines = status_lines(&text);
    assert!(lines.len() >= 4, "a line every 250 ms over 2 s: {text:?}");
    let pcts: Vec<f64> = lines.iter().map(|l| percent(l)).collect();
    assert!(
        pcts.windows(2).all(|w| w[0] <= w[1]),
        "progress never goes back: {pcts:?}"
    );
    assert!(
        pcts[0] < 60.0,
        "the first line is early in the run: {pcts:?}"
    );
    assert_eq!(*pcts.last().unwrap(), 100.0, "{lines:?}");
    // While running: one job, its file, fio's state for random reads, a
    // read rate and an ETA; at the end the job is done. Lines drawn while
    // the file is still being laid out show fio's setup state (P); under
    // load that can take more than one interval.
    let running = lines
        .iter()
        .find(|l| !l.contains("[P(1)]"))
        .expect("a line after setup");
    assert!(running.starts_with("Jobs: 1 (f=1): [r(1)]["), "{running}");
    assert!(
        running.contains("][r=") && running.contains(" IOPS][eta 00m:0"),
        "{running}"
    );
    assert!(lines.last().unwrap().contains("[_(1)]"), "{lines:?}");
    // Redrawn in place: carriage returns, and one newline at the end.
    assert!(text.contains('\r'));
}

#[test]
fn never_means_never_and_newline_starts_new_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = JOB.to_vec();
    args.push("--eta=never");
    require!(tool = "script");
    let text = in_pty(dir.path(), &args);
    assert!(status_lines(&text).is_empty(), "{text:?}");

    let mut args = JOB.to_vec();
    args.push("--eta-newline=500ms");
    let text = in_pty(dir.path(), &args);
    let on_own_lines = text
        .split('\n')
        .filter(|l| l.trim_start_matches('\r').trim().starts_with("Jobs: "))
        .count();
    assert!(on_own_lines >= 3, "a new line every 500 ms: {text:?}");
}

#[test]
fn off_when_stderr_is_not_a_terminal_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .args(["--runtime=1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(status_lines(&String::from_utf8_lossy(&out.stderr)).is_empty());

    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .args(["--runtime=1", "--eta=always"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines = status_lines(&String::from_utf8_lossy(&out.stderr));
    assert!(lines.len() >= 2, "{lines:?}");
    assert_eq!(percent(lines.last().unwrap()), 100.0);
}

#[test]
fn a_bad_eta_flag_is_named() {
    let out = common::iolab()
        .args([
            "run",
            "--eta=sometimes",
            "--name=x",
            "--ioengine=null",
            "--size=1m",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--eta=sometimes"));
}
