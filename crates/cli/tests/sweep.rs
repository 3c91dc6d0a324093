//! `iolab sweep`: one row per block size with the same bytes moved at
//! every point, the rw/sync matrix with MB/s, IOPS and p99 per column group,
//! CSV that parses, job files as the base, bad grid values and places
//! refused with exit 2 before anything is created, a run that fails
//! mid-sweep reported with the points before it and its files removed, and
//! the end fsync inside the measured time.

mod common;

use iolab_testkit::{need, require};
use std::path::Path;
use std::process::Command as Proc;

use common::{entries, iolab, json_of, Mounted};

#[test]
fn a_bs_range_moves_the_same_bytes_at_every_point() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("f");
    let out = iolab()
        .args(["sweep", "--rw=write", "--size=2m", "--ioengine=psync"])
        .arg(format!("--filename={}", f.display()))
        .args(["--bs", "4k..64k", "--output-format", "json", "--keep-files"])
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
    // `--rw=write` sets the option at every point: no axis of its own.
    assert_eq!(v["axes"].as_array().unwrap().len(), 1, "{v}");
    for p in points {
        let run = &p["runs"][0];
        assert_eq!(run["write_bytes"], 2 << 20, "{p}");
        assert_eq!(run["read_bytes"], 0, "{p}");
        let iops = run["iops"].as_f64().unwrap();
        assert!(iops > 0.0, "{p}");
    }
    // Kept (--keep-files): the file the sweep made has the base job's size.
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
    // The title, the matrix, then (after a blank line) the legend of any
    // warnings.
    assert!(
        text.starts_with("iolab sweep: bs × rw × sync\n\n"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().skip(2).take_while(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for group in [
        "write sync=none",
        "write sync=dsync",
        "read sync=none",
        "read sync=dsync",
    ] {
        for metric in ["MB/s", "IOPS", "p99 (us)"] {
            let col = format!("{group} {metric}");
            assert!(lines[0].contains(&col), "{col} missing: {text}");
        }
    }
    assert!(
        lines[1].starts_with("4k") && lines[2].starts_with("64k"),
        "{text}"
    );
    // Every cell holds a number: MB/s, IOPS and p99 of four groups (with
    // the `wN` markers of any warnings after it).
    for l in &lines[1..] {
        let cells: Vec<&str> = l
            .split_whitespace()
            .filter(|c| {
                !(c.starts_with('w') && c[1..].split(",w").all(|n| n.parse::<u32>().is_ok()))
            })
            .collect();
        assert_eq!(cells.len(), 1 + 4 * 3, "{l}");
        for c in &cells[1..] {
            assert!(c.replace(',', "").parse::<f64>().unwrap() > 0.0, "{l}");
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
    refused(
        &["--iodepth", "1,zero"],
        "--iodepth value `zero`: `iodepth=zero`",
    );
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
    refused(
        &["--bs", "4k", "--vary", "blocksize=8k"],
        "sets the option `bs` twice (as `bs` and as `blocksize`)",
    );
    refused(
        &["--sync", "none,fsync-at-end", "--vary", "end_fsync=0,1"],
        "sets the option `end_fsync` twice",
    );
    refused(
        &["--vary", "iodepth=1,2", "--vary", "iodepth=4"],
        "`iodepth` twice",
    );
    let out = iolab()
        .args(["sweep", "--size=1m", "--bs", "4k,8k", "--iodepth", "1,zero"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("built-in"), "{err}");
}

/// `iolab sweep ARGS` in `dir` writing `--output o.txt`, with a database
/// in `dir`; the output.
fn sweep_in(dir: &Path, args: &[&str]) -> std::process::Output {
    iolab()
        .current_dir(dir)
        .args(["sweep", "--output", "o.txt", "--db", "x.db"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_place_where_no_file_can_be_made_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = sweep_in(
        tmp.path(),
        &[
            "--filename=/nonexistent-iolab/x",
            "--size=1m",
            "--rw",
            "write",
            "--bs",
            "4k,8k",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`/nonexistent-iolab/x`: the directory `/nonexistent-iolab` does not exist"),
        "{err}"
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));

    // A directory the user may not write in.
    let ro = tmp.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let _m = match Mounted::tmpfs(&ro, "ro,size=1m") {
        Ok(m) => m,
        Err(missing) => return iolab_testkit::skipped_case(missing),
    };
    let out = sweep_in(
        tmp.path(),
        &[
            "--directory=ro",
            "--size=1m",
            "--rw",
            "write",
            "--bs",
            "4k,8k",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the directory `ro` is not writable"), "{err}");
    assert_eq!(entries(tmp.path()), ["ro"]);
}

#[test]
fn a_failed_point_reports_the_points_before_it_and_removes_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("T");
    std::fs::create_dir(&t).unwrap();
    let _fs = need!(Mounted::tmpfs(&t, "size=1m"));
    // 700 KiB fit once in 1 MiB; with two jobs the second file does not.
    let out = sweep_in(
        tmp.path(),
        &[
            "--directory=T",
            "--size=700k",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--numjobs",
            "1,2",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("point numjobs=2: ") && err.contains("No space left on device"),
        "{err}"
    );
    assert!(entries(&t).is_empty(), "{:?}", entries(&t));
    let report = std::fs::read_to_string(tmp.path().join("o.txt")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[2].starts_with("numjobs"), "{report}");
    let point: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(point[0], "1", "{report}");
    assert!(
        point[1].replace(',', "").parse::<f64>().unwrap() > 0.0,
        "the MB/s of point 1: {report}"
    );
    assert!(
        report.contains("\nnote: failed at point numjobs=2: ") && report.contains("No space left"),
        "{report}"
    );
    // A failed sweep is not kept.
    let db = tmp.path().join("x.db");
    let kept = iolab_store::Store::open(&db).unwrap().len().unwrap();
    assert_eq!(kept, 0);
}

#[test]
fn the_end_fsync_is_inside_the_measured_time() {
    // strace delays every fsync by a second on its way out: a point with
    // fsync-at-end whose runtime holds its fsync takes at least that long,
    // one without the fsync inside would take as long as its writes.
    require!(strace);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let trace = dir.path().join("trace");
    let out = Proc::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&trace)
        .args(["-e", "inject=fsync,fdatasync:delay_exit=1000000"])
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .current_dir(dir.path())
        .args([
            "sweep",
            "--no-store",
            "--ioengine=psync",
            "--filename=f",
            "--size=1m",
            "--bs",
            "64k",
            "--rw",
            "write",
            "--sync",
            "none,fsync-at-end",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let trace = std::fs::read_to_string(&trace).unwrap();
    let syncs = trace.lines().filter(|l| l.contains("fsync(")).count();
    assert_eq!(
        syncs, 1,
        "one fsync, at the end of the synced point: {trace}"
    );
    let v = json_of(&out.stdout);
    let run = |sync: &str| {
        v["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["values"]["sync"] == sync)
            .map(|p| p["runs"][0].clone())
            .unwrap()
    };
    let (buffered, synced) = (run("none"), run("fsync-at-end"));
    assert_eq!(synced["write_bytes"], buffered["write_bytes"]);
    let runtime_ns = synced["runtime_ns"].as_u64().unwrap();
    assert!(runtime_ns >= 1_000_000_000, "{synced}");
    // The same bytes over at least the fsync's second: at most 1 MiB/s.
    assert!(
        synced["write_bw"].as_f64().unwrap() <= 1048576.0,
        "{synced}"
    );
}

/// A sweep that succeeds removes the data file it created; one that was
/// there before stays, and --keep-files keeps what the sweep made.
#[test]
fn a_successful_sweep_removes_the_files_it_created_unless_asked_to_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let sweep = |extra: &[&str]| {
        let out = common::iolab()
            .args([
                "sweep",
                "--no-store",
                "--name=j",
                "--rw=write",
                "--size=64k",
            ])
            .arg(format!("--directory={d}"))
            .args(["--bs", "4k,8k"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sweep(&[]);
    assert!(common::entries(dir.path()).is_empty());
    sweep(&["--keep-files"]);
    assert_eq!(common::entries(dir.path()), ["j.0.0"]);
    // Now the file was there before the sweep: it is left alone.
    sweep(&[]);
    assert_eq!(common::entries(dir.path()), ["j.0.0"]);
}
