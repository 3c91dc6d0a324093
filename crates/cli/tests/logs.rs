//! The log files (write_bw_log, write_iops_log, write_lat_log,
//! write_hist_log) against fio 3.33 on the same jobs: the same file names,
//! the same number of lines where the job fixes it, fio's columns, and
//! values that agree with the job's own report.

mod common;
use common::*;
use iolab_testkit::require;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// The `.log` files in `dir` and their lines, each split at ", ".
fn logs(dir: &Path) -> BTreeMap<String, Vec<Vec<u64>>> {
    entries(dir)
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap();
            let lines = text
                .lines()
                .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
                .collect();
            (n, lines)
        })
        .collect()
}

/// Runs a job file (its text with DIR for the directory) with fio and
/// with iolab, each in a directory of its own; both reports.
fn run_both(text: &str) -> ((tempfile::TempDir, Value), (tempfile::TempDir, Value)) {
    let run = |prog: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job.fio");
        std::fs::write(&job, text.replace("DIR", &dir.path().display().to_string())).unwrap();
        let out = match prog {
            Some(fio) => Proc::new(fio)
                .current_dir(dir.path())
                .arg("--output-format=json")
                .arg(&job)
                .output()
                .unwrap(),
            None => iolab()
                .current_dir(dir.path())
                .args(["run", "--no-store", "--output-format=json"])
                .arg(&job)
                .output()
                .unwrap(),
        };
        assert!(
            out.status.success(),
            "{prog:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report = json_of(&out.stdout);
        (dir, report)
    };
    (run(Some("fio")), run(None))
}

#[test]
fn log_files_are_named_as_fios() {
    require!(fio);
    // Per-clone files numbered by thread across jobs, a bare option naming
    // the files after the job, shared files without per_job_logs, the
    // three latency logs, an empty histogram log without log_hist_msec.
    let text = "[global]\ndirectory=DIR\nsize=64k\nrw=randrw\n\
                [a]\nwrite_lat_log=p\nwrite_bw_log=p\nwrite_iops_log=p\n\
                [b]\nwrite_iops_log=q\nnumjobs=2\n\
                [c]\nwrite_bw_log=r\nper_job_logs=0\nnumjobs=2\n\
                [d]\nwrite_hist_log=h\n\
                [e]\nwrite_bw_log\nlog_offset=1\n\
                [f]\nwrite_lat_log=l\nioengine=libaio\ndirect=1\niodepth=4\n";
    let ((fdir, _), (odir, _)) = run_both(text);
    let (f, o) = (logs(fdir.path()), logs(odir.path()));
    let names = |m: &BTreeMap<String, Vec<Vec<u64>>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&o), names(&f));
    for (name, lines) in &f {
        // Every I/O of these jobs is logged (16 per clone), as fio does;
        // the same columns (offset with log_offset).
        assert_eq!(o[name].len(), lines.len(), "{name}: lines");
        let cols = |l: &Vec<Vec<u64>>| l.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(cols(&o[name]), cols(lines), "{name}: columns");
    }
    assert_eq!(o["r_bw.log"].len(), 32, "both clones of c in one file");
    assert_eq!(
        o["p_slat.1.log"].len(),
        0,
        "psync has no submission latency"
    );
    assert_eq!(o["l_slat.8.log"].len(), 16, "libaio has");
}

#[test]
fn every_io_is_a_line_of_the_latency_logs_within_the_reported_range() {
    require!(fio);
    let text = "[l]\ndirectory=DIR\nsize=256k\nrw=randrw\nbs=4k\n\
                write_lat_log=l\nwrite_bw_log=l\nwrite_iops_log=l\nlog_offset=1\n";
    let ((fdir, fio), (odir, ours)) = run_both(text);
    for (dir, report) in [(fdir.path(), &fio), (odir.path(), &ours)] {
        let logs = logs(dir);
        let job = &report["jobs"][0];
        for (d, key) in ["read", "write"].iter().enumerate() {
            let r = &job[key];
            let ios = r["total_ios"].as_u64().unwrap();
            let of_dir = |name: &str| -> Vec<Vec<u64>> {
                logs[name]
                    .iter()
                    .filter(|l| l[2] == d as u64)
                    .cloned()
                    .collect()
            };
            for (log, stat) in [("l_clat.1.log", "clat_ns"), ("l_lat.1.log", "lat_ns")] {
                let lines = of_dir(log);
                assert_eq!(lines.len() as u64, ios, "{dir:?} {log} {key}");
                let min = lines.iter().map(|l| l[1]).min().unwrap();
                let max = lines.iter().map(|l| l[1]).max().unwrap();
                assert_eq!(
                    min,
                    r[stat]["min"].as_u64().unwrap(),
                    "{dir:?} {log} {key} min"
                );
                assert_eq!(
                    max,
                    r[stat]["max"].as_u64().unwrap(),
                    "{dir:?} {log} {key} max"
                );
                // time, latency, direction, block size, offset, priority.
                for l in &lines {
                    assert_eq!(l.len(), 6);
                    assert_eq!((l[3], l[4] % 4096, l[5]), (4096, 0, 0));
                    assert!(l[4] < 256 << 10);
                }
            }
            // One bandwidth and one IOPS line per I/O, and the report's
            // samples are those values (fio 3.33 takes them per I/O then).
            let bw = of_dir("l_bw.1.log");
            assert_eq!(bw.len() as u64, ios);
            assert_eq!(r["bw_samples"].as_u64().unwrap(), ios, "{dir:?} {key}");
            assert_eq!(r["bw_max"].as_u64(), bw.iter().map(|l| l[1]).max());
            let iops = of_dir("l_iops.1.log");
            assert!(iops.iter().all(|l| l[1] == 1));
            assert_eq!(r["iops_samples"].as_u64().unwrap(), ios);
        }
    }
}

#[test]
fn averaged_logs_have_a_line_per_window() {
    require!(fio);
    // 2 s at a steady rate: three 500 ms bandwidth and IOPS windows per
    // direction, and four latency windows (the last written at the end);
    // histogram entries every 500 ms from the first I/O after 0 ms.
    let text = "[a]\ndirectory=DIR\nsize=1m\nrw=randrw\nrate_iops=100,50\ntime_based\nruntime=2\n\
                write_bw_log=a\nwrite_iops_log=a\nwrite_lat_log=a\nlog_avg_msec=500\n\
                write_hist_log=a\nlog_hist_msec=500\n";
    let ((fdir, fio), (odir, ours)) = run_both(text);
    let (f, o) = (logs(fdir.path()), logs(odir.path()));
    let per_dir = |m: &BTreeMap<String, Vec<Vec<u64>>>, name: &str, col: usize| {
        let mut n = [0u32; 2];
        for l in &m[name] {
            n[l[col] as usize] += 1;
        }
        n
    };
    for (name, want) in [
        ("a_bw.1.log", [3, 3]),
        ("a_iops.1.log", [3, 3]),
        ("a_clat.1.log", [4, 4]),
        ("a_lat.1.log", [4, 4]),
    ] {
        // Each tool's count is the rule's, or one more where a loaded
        // machine delays the job's end past one more window's close.
        for (tool, m) in [("fio", &f), ("iolab", &o)] {
            let n = per_dir(m, name, 2);
            assert!(
                (0..2).all(|d| n[d] == want[d] || n[d] == want[d] + 1),
                "{tool} {name}: {n:?}, want {want:?}"
            );
        }
        // Averaged lines have block size and offset 0.
        assert!(o[name]
            .iter()
            .all(|l| l.len() == 5 && l[3] == 0 && l[4] == 0));
    }
    // One histogram line per 500 ms from the first I/O: the same count as
    // fio's, or one apart where one of the two ended a little late.
    let (oh, fh) = (
        per_dir(&o, "a_clat_hist.1.log", 1),
        per_dir(&f, "a_clat_hist.1.log", 1),
    );
    assert!(
        (0..2).all(|d| oh[d] >= 3 && oh[d].abs_diff(fh[d]) <= 1),
        "histogram lines: iolab {oh:?}, fio {fh:?}"
    );
    // The bandwidth log's lines are the report's samples.
    for (m, report) in [(&f, &fio), (&o, &ours)] {
        let r = &report["jobs"][0]["read"];
        let reads: Vec<u64> = m["a_bw.1.log"]
            .iter()
            .filter(|l| l[2] == 0)
            .map(|l| l[1])
            .collect();
        assert_eq!(r["bw_samples"].as_u64(), Some(reads.len() as u64));
        assert_eq!(r["bw_min"].as_u64(), reads.iter().min().copied());
        assert_eq!(r["bw_max"].as_u64(), reads.iter().max().copied());
    }
    // A histogram line: time, direction, block size and fio's 1856 bins,
    // counting what completed since the direction's previous line.
    let hist = &o["a_clat_hist.1.log"];
    assert!(hist.iter().all(|l| l.len() == 3 + 1856 && l[2] == 4096));
    let reads: u64 = hist
        .iter()
        .filter(|l| l[1] == 0)
        .map(|l| l[3..].iter().sum::<u64>())
        .sum();
    let total = ours["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert!(reads > total / 2 && reads <= total, "{reads} of {total}");
}

#[test]
fn queued_ios_have_a_line_each_in_every_latency_log() {
    // libaio and io_uring at depth 4, the queued engines' own loop: each
    // of the 64 I/Os is a line of the slat, clat and lat logs, at its own
    // offset, with the report's minimum and maximum.
    for engine in ["libaio", "io_uring"] {
        if engine == "io_uring" && !iolab_testkit::have!(io_uring) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let report = run_json(
            dir.path(),
            &[
                "--no-store",
                "--name=q",
                &format!("--ioengine={engine}"),
                "--iodepth=4",
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--write_lat_log=q",
                "--log_offset=1",
            ],
        );
        let r = &report["jobs"][0]["read"];
        assert_eq!(r["total_ios"], 64, "{engine}");
        let logs = logs(dir.path());
        for (log, stat) in [("slat", "slat_ns"), ("clat", "clat_ns"), ("lat", "lat_ns")] {
            let lines = &logs[&format!("q_{log}.1.log")];
            assert_eq!(lines.len(), 64, "{engine} {log}");
            let values = || lines.iter().map(|l| l[1]);
            assert_eq!(values().min(), r[stat]["min"].as_u64(), "{engine} {log}");
            assert_eq!(values().max(), r[stat]["max"].as_u64(), "{engine} {log}");
            let mut offsets: Vec<u64> = lines.iter().map(|l| l[4]).collect();
            offsets.sort_unstable();
            offsets.dedup();
            assert_eq!(offsets.len(), 64, "{engine} {log}: each block once");
            assert!(lines.iter().all(|l| l[2..4] == [0, 4096] && l[5] == 0));
        }
    }
}
