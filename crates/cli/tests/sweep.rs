//! `iolab sweep`: one row per block size with the same bytes moved at
//! every point, the rw/sync matrix, CSV that parses, job files as the base,
//! and bad grid values refused with exit 2 before anything is created.

mod common;

use common::{entries, iolab, json_of};

#[test]
fn a_bs_range_moves_the_same_bytes_at_every_point() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    let out = iolab()
        .args(["sweep", "--rw=write", "--size=2m", "--ioengine=psync"])
        .arg(format!("--filename={}", f.display()))
        .args(["--bs", "4k..64k", "--output-format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let points = v["points"].as_array().unwrap();
    let bs: Vec<&str> = points
        .iter()
        .map(|p| p["values"]["bs"].as_str().unwrap())
        .collect();
    assert_eq!(bs, ["4k", "8k", "16k", "32k", "64k"]);
    for p in points {
        let run = &p["runs"][0];
        assert_eq!(run["write_bytes"], 2 << 20, "{p}");
        assert_eq!(run["read_bytes"], 0, "{p}");
        let iops = run["iops"].as_f64().unwrap();
        assert!(iops > 0.0, "{p}");
    }
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 20);
}

#[test]
fn rw_and_sync_make_the_columns_of_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    let out = iolab()
        .args(["sweep", "--size=1m"])
        .arg(format!("--filename={}", f.display()))
        .args([
            "--bs",
            "4k,64k",
            "--rw",
            "write,read",
            "--sync",
            "none,dsync",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for col in [
        "write sync=none MB/s",
        "write sync=dsync MB/s",
        "read sync=none MB/s",
        "read sync=dsync MB/s",
    ] {
        assert!(lines[0].contains(col), "{col} missing: {text}");
    }
    assert!(
        lines[1].starts_with("4k") && lines[2].starts_with("64k"),
        "{text}"
    );
    // Every cell holds a number.
    for l in &lines[1..] {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cells.len(), 5, "{l}");
        for c in &cells[1..] {
            assert!(c.parse::<f64>().unwrap() > 0.0, "{l}");
        }
    }
}

#[test]
fn csv_parses_with_one_line_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("base.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nsize=1m\nioengine=psync\n\n[w]\nrw=write\nfilename={}\n",
            tmp.path().join("data").display()
        ),
    )
    .unwrap();
    let out = iolab()
        .arg("sweep")
        .arg(&job)
        .args([
            "--bs",
            "4k,16k",
            "--sync",
            "none,fsync-at-end",
            "--repeat",
            "2",
        ])
        .args(["--output-format", "csv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    assert_eq!(header[..4], ["bs", "sync", "run", "read_bytes"]);
    assert_eq!(rows.len(), 1 + 4 * 2, "{text}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for r in &rows[1..] {
        assert_eq!(r.len(), header.len(), "{r:?}");
        assert_eq!(r[col("write_bytes")].parse::<u64>().unwrap(), 1 << 20);
        assert!(r[col("write_bw_bytes")].parse::<f64>().unwrap() > 0.0);
        assert!(r[col("iops")].parse::<f64>().unwrap() > 0.0);
        assert!(r[col("runtime_ns")].parse::<u64>().unwrap() > 0);
        assert!(["1", "2"].contains(&r[col("run")]));
    }
}

fn refused(grid: &[&str], want: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = iolab()
        .args(["sweep", "--size=1m"])
        .arg(format!("--filename={}", tmp.path().join("f").display()))
        .args(grid)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{grid:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(want), "{grid:?}: `{err}` lacks `{want}`");
    assert!(entries(tmp.path()).is_empty(), "{grid:?} created files");
}

#[test]
fn bad_grid_values_exit_2_and_create_nothing() {
    refused(&["--bs", "1g..1k"], "--bs `1g..1k`");
    refused(&["--bs", "4x..8k"], "4x");
    refused(&["--iodepth", "1,zero"], "--iodepth value `zero`");
    refused(&["--numjobs", "1,-2"], "--numjobs value `-2`");
    refused(&["--direct", "0,2"], "--direct value `2`");
    refused(&["--rw", "read,sideways"], "--rw value `sideways`");
    refused(&["--sync", "none,always"], "--sync `always`");
    refused(&["--vary", "blocksizee=4k,8k"], "blocksizee");
    refused(&["--vary", "rwmixread"], "--vary `rwmixread`");
    refused(&["--repeat", "0"], "--repeat `0`");
    refused(&["--output-format", "xml"], "xml");
    refused(&["--bs", "4k", "--parse-only"], "--parse-only");
    refused(&["--rw", "read", "--rw=write"], "--rw given twice");
}
