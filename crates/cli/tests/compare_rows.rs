//! The rows of `iolab compare` that are not plain scores: the capacity
//! and read-speed rows of filesystems on loop images (facts, never marked
//! best, each explained in the notes) and the fsync latency rows of a
//! write+fsync job (in microseconds, beside the write's own latency).
//! Kept short: one or two runs, small jobs. The loop-image test needs
//! root, ext4 and xfs, and says so when it skips.

mod common;

use iolab_testkit::require;
use std::path::Path;
use std::time::Duration;

use common::iolab;
use serde_json::Value;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A write+fsync job (the SQLite pattern), small.
fn fsync_job(dir: &Path) -> std::path::PathBuf {
    let job = dir.join("sf.fio");
    std::fs::write(&job, "[sf]\nrw=write\nbs=4k\nsize=256k\nfsync=1\n").unwrap();
    job
}

/// The cells of the table row that starts with `label` and then two
/// spaces: label, unit, then one per target.
fn row<'a>(table: &'a str, label: &str) -> Vec<&'a str> {
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("{label}  ")))
        .unwrap_or_else(|| panic!("no row `{label}` in\n{table}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

fn metric<'a>(json: &'a Value, key: &str) -> &'a Value {
    json["iolab compare"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("no metric {key}"))
}

#[test]
fn a_write_fsync_job_shows_its_fsync_latency() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("A"), d.path().join("B"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let job = fsync_job(d.path());
    let run = |format: &str| {
        let out = iolab()
            .env("IOLAB_DB", d.path().join("results.db"))
            .args(["compare", "--repeat", "2", "--baseline", "A"])
            .args(["--output-format", format, "--job"])
            .arg(&job)
            .arg("--target")
            .arg(format!("A={}", a.display()))
            .arg("--target")
            .arg(format!("B={}", b.display()))
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let table = run("table");
    for label in ["sf write fsync p50", "sf write fsync p99"] {
        let cells = row(&table, label);
        assert_eq!(cells.len(), 4, "{cells:?}");
        assert_eq!(cells[1], "us", "{label}: {cells:?}");
        for c in &cells[2..] {
            let n: f64 = c
                .trim_start_matches('*')
                .split(' ')
                .next()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("`{c}` in {label}"));
            assert!(n > 0.0, "{label}: {c}");
        }
    }
    // The write call's own latency stays, in the same unit.
    assert_eq!(row(&table, "sf write clat p50")[1], "us");
    let v: Value = serde_json::from_str(&run("json")).unwrap();
    // The cells are fio's sync latency of each run: its percentiles, in
    // microseconds.
    let runs = v["iolab compare"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    let p50 = metric(&v, "sf.write.fsync_p50_us");
    assert_eq!(p50["unit"], "us");
    assert_eq!(p50["better"], "lower");
    for t in ["A", "B"] {
        let mine: Vec<f64> = runs
            .iter()
            .filter(|r| r["target"] == t)
            .map(|r| {
                let sync = &r["fio"]["jobs"][0]["sync"]["lat_ns"];
                // fio's count: a sync after every write but the last.
                assert_eq!(sync["N"], 63, "{sync}");
                sync["percentile"]["50.000000"].as_f64().unwrap() / 1e3
            })
            .collect();
        let cell = &p50["values"][t];
        let (lo, hi) = (cell["min"].as_f64().unwrap(), cell["max"].as_f64().unwrap());
        let (a, b) = (mine[0].min(mine[1]), mine[0].max(mine[1]));
        assert!(
            (lo - a).abs() < 1e-6 && (hi - b).abs() < 1e-6,
            "{t}: {cell} {mine:?}"
        );
    }
}

#[test]
fn capacity_and_read_speed_rows_are_facts_explained_in_the_notes() {
    require!(root, filesystems = &["ext4", "xfs"]);
    let d = tempfile::tempdir().unwrap();
    let job = fsync_job(d.path());
    let run = |format: &str| {
        let out = iolab()
            .env("IOLAB_DB", d.path().join("results.db"))
            .args(["compare", "--fs", "ext4,xfs", "--size", "1G"])
            .args(["--repeat", "2", "--runtime", "1", "--baseline", "ext4"])
            .args(["--output-format", format, "--job"])
            .arg(&job)
            .arg("--workdir")
            .arg(d.path().join(format!("work-{format}")))
            .timeout(Duration::from_secs(150))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let table = run("table");
    for label in [
        "size",
        "used after mkfs",
        "inodes total",
        "cached reads",
        "device reads (O_DIRECT)",
    ] {
        let cells = row(&table, label);
        assert_eq!(cells.len(), 4, "{label}: {cells:?}");
        assert!(!cells.iter().any(|c| c.contains('*')), "{label}: {cells:?}");
    }
    // ext4 counts its metadata out of its size, xfs counts more of it in:
    // the two used rows differ, and still neither is best.
    let used = row(&table, "used after mkfs");
    // A fact's ratio, in words when the runs tell it apart.
    assert!(
        used[3].contains(" x") && !used[3].contains("better") && !used[3].contains("worse"),
        "{used:?}"
    );
    for words in [
        "note: size: the blocks statvfs counts as the filesystem's (f_blocks)",
        "note: available: what a user other than root can still write (f_bavail)",
        "note: used after mkfs: size minus the free blocks (f_blocks - f_bfree)",
        "note: inodes total: the inodes statvfs reports (f_files)",
        "note: cached reads and device reads (as hdparm -Tt) read the block device under the \
         filesystem, not the filesystem",
        "note: device reads on loop images read a sparse image file",
        "no best in rows that are facts, not scores (size, used after mkfs, inodes total, \
         cached reads, device reads (O_DIRECT))",
    ] {
        assert!(table.contains(words), "`{words}` missing from\n{table}");
    }
    // fsync latency rows on real filesystems too.
    assert_eq!(row(&table, "sf write fsync p99")[1], "us");
    let v: Value = serde_json::from_str(&run("json")).unwrap();
    for key in [
        "size_mib",
        "used_mib",
        "inodes",
        "cached_read_mb_s",
        "device_read_mb_s",
    ] {
        let m = metric(&v, key);
        assert_eq!(m["better"], "neither", "{key}");
        for t in ["ext4", "xfs"] {
            assert_eq!(m["values"][t]["best"], false, "{key} {t}");
        }
    }
    assert_eq!(metric(&v, "avail_mib")["better"], "higher");
}
