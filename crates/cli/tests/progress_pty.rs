//! The progress display on a terminal: quick and compare run under
//! `script` (a pseudo-terminal), and what they drew is read back: the
//! step counts advance to the last step, quick names the layout of its
//! test file, compare names mkfs and the mounts (or, without root, runs
//! its directory target), and the line is cleared before the report. Off
//! a terminal nothing of it is written.

mod common;

use iolab_testkit::require;
use std::path::Path;
use std::process::Command as Proc;

/// Whether `script` (util-linux) is there to give a command a terminal.
/// `iolab ARGS` on a pseudo-terminal; everything it drew there, as bytes.
fn on_a_terminal(db: &Path, args: &[String]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("typescript");
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let mut line = bin.display().to_string();
    for a in args {
        assert!(!a.contains('\''), "{a}");
        line.push_str(&format!(" '{a}'"));
    }
    let out = Proc::new("script")
        .args(["-qfec", &line])
        .arg(&log)
        .env("IOLAB_DB", db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}: {out:?}");
    std::fs::read(&log).unwrap()
}

/// The display's states, in order: each text between redraws that names
/// a step of `name`.
fn drawn(raw: &[u8], name: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(raw).replace("\x1b[2K", "\r");
    let mark = format!("iolab {name}: step ");
    text.split(['\r', '\n'])
        .filter_map(|l| l.find(&mark).map(|at| l[at..].trim_end().to_string()))
        .collect()
}

/// The step numbers and the total of each drawn state.
fn steps(states: &[String], name: &str) -> Vec<(u64, u64)> {
    let mark = format!("iolab {name}: step ");
    states
        .iter()
        .map(|s| {
            let rest = &s[mark.len()..];
            let (k, rest) = rest.split_once(" of ").unwrap();
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (k.parse().unwrap(), n.parse().unwrap())
        })
        .collect()
}

/// The report's first line comes right after the display's last line was
/// cleared (`\r` and erase-line), and no step is drawn after it.
fn cleared_before(raw: &[u8], report_start: &str) {
    let text = String::from_utf8_lossy(raw);
    let at = text
        .find(report_start)
        .unwrap_or_else(|| panic!("no `{report_start}` in {text}"));
    assert!(
        text[..at].ends_with("\r\x1b[2K"),
        "the display was not cleared before the report: {:?}",
        &text[at.saturating_sub(200)..at]
    );
    assert!(!text[at..].contains(": step "), "{}", &text[at..]);
}

#[test]
fn quick_counts_its_steps_names_the_layout_and_clears_the_line() {
    require!(tool = "script");
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let args: Vec<String> = [
        "quick",
        &dir.path().display().to_string(),
        "--time",
        "3s",
        "--size",
        "64m",
        "--meta-files",
        "2000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let raw = on_a_terminal(&db, &args);
    let states = drawn(&raw, "quick");
    let counts = steps(&states, "quick");
    assert!(!counts.is_empty(), "{}", String::from_utf8_lossy(&raw));
    // Nine tests and the metadata pass; the count only goes up, to 10.
    assert!(counts.iter().all(|&(_, n)| n == 10), "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0].0 <= w[1].0), "{counts:?}");
    assert_eq!(counts.first().unwrap().0, 1, "{states:?}");
    assert_eq!(counts.last().unwrap().0, 10, "{states:?}");
    let distinct: std::collections::BTreeSet<u64> = counts.iter().map(|c| c.0).collect();
    assert!(distinct.len() >= 5, "{distinct:?}");
    assert!(
        states
            .iter()
            .any(|s| s.contains("step 1 of 10, SEQ1M Q8T1 read: laying out the 64 MiB test file")),
        "{states:?}"
    );
    assert!(
        states.iter().any(|s| s.contains("metadata pass")),
        "{states:?}"
    );
    cleared_before(&raw, "iolab quick: /");
    assert!(String::from_utf8_lossy(&raw).contains("stored as result 1"));
}

#[test]
fn compare_counts_its_steps_names_its_phases_and_clears_the_line() {
    require!(tool = "script");
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("results.db");
    let work = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let formats = iolab_lab::is_root()
        && matches!(
            iolab_lab::support::check("ext4"),
            iolab_lab::support::Support::Ready { .. }
        );
    let mut args: Vec<String> = common::BASIC_COMPARE
        .iter()
        .chain(&["--runtime", "1s", "--size", "64m", "--workdir"])
        .map(|s| s.to_string())
        .collect();
    args.push(work.path().display().to_string());
    if formats {
        args.extend(["--fs".to_string(), "ext4".to_string()]);
    } else {
        eprintln!("(no root or no ext4: a directory target, without mkfs and mounts)");
        args.extend([
            "--target".to_string(),
            format!("dir={}", target.path().display()),
        ]);
    }
    let raw = on_a_terminal(&db, &args);
    let states = drawn(&raw, "compare");
    let counts = steps(&states, "compare");
    // Four workloads, one run each; a formatted target first makes its
    // filesystem, mounts it cold and reads the device.
    let total = if formats { 7 } else { 4 };
    assert!(!counts.is_empty(), "{}", String::from_utf8_lossy(&raw));
    assert!(counts.iter().all(|&(_, n)| n == total), "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0].0 <= w[1].0), "{counts:?}");
    assert_eq!(counts.last().unwrap().0, total, "{states:?}");
    if formats {
        for phase in ["mkfs and first mount", "cold mounts"] {
            assert!(
                states.iter().any(|s| s.contains(phase)),
                "{phase}: {states:?}"
            );
        }
    }
    assert!(
        states
            .iter()
            .any(|s| s.contains("left: ") && s.contains("seqread-1m run 1/1")),
        "{states:?}"
    );
    cleared_before(&raw, "iolab compare: ext4");
}

#[test]
fn nothing_is_drawn_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::iolab()
        .args(["quick", "--no-store", "--time", "1s", "--size", "64m"])
        .args(["--meta-files", "10"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("step ") && !err.contains('\r'), "{err}");
    assert!(!err.contains('\x1b'), "{err}");
}
