//! iolab against fio 3.33 on what happens while a job runs: the page cache
//! dropped at each pass of a time_based buffered job (`invalidate`), the
//! read-back of a verify job as issued I/O, the queue drained between the
//! runs that io_size starts again, and the line counts of the
//! bandwidth, IOPS and latency logs. Each test runs the same job through
//! both tools and compares what its item is about.

mod common;
use common::*;
use iolab_testkit::{require, skip};

use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// Runs `cmd` (a shell command line) under `sh -c` and returns what its
/// report file `out` holds and the bytes the shell and everything it ran
/// had read from storage (/proc/PID/io counts the children it reaped).
fn run_counting_reads(dir: &Path, cmd: &str, out: &Path) -> (Value, u64) {
    let script = format!(
        "{cmd} >/dev/null 2>{dir}/stderr; grep read_bytes /proc/$$/io",
        dir = dir.display()
    );
    let o = Proc::new("sh")
        .arg("-c")
        .arg(&script)
        .env("IOLAB_DB", test_db())
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let read = text
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no read_bytes from `{script}`: {text}"));
    let report = std::fs::read(out).unwrap_or_default();
    assert!(
        !report.is_empty(),
        "`{cmd}` wrote no report: {}",
        std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
    );
    (json_of(&report), read)
}

fn iolab_bin() -> String {
    assert_cmd::cargo::cargo_bin("iolab").display().to_string()
}

/// A time_based buffered job over a file of 1 MiB for one second: io_bytes
/// and the bytes read from storage, by fio and by iolab, each in a
/// directory of its own.
fn time_based_reads(rw: &str, extra: &str) -> [(u64, u64); 2] {
    let mut got = [(0, 0); 2];
    for (i, tool) in ["fio", "iolab"].iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let job = d.join("job.fio");
        std::fs::write(
            &job,
            format!(
                "[tb]\nfilename={}/f\nsize=1m\nrw={rw}\nbs=4k\ntime_based\nruntime=1\n{extra}",
                d.display()
            ),
        )
        .unwrap();
        let out = d.join("out.json");
        let cmd = match *tool {
            "fio" => format!(
                "fio --output-format=json --output={} {}",
                out.display(),
                job.display()
            ),
            _ => format!(
                "{} run --no-store --output-format=json --output={} {}",
                iolab_bin(),
                out.display(),
                job.display()
            ),
        };
        let (report, read) = run_counting_reads(d, &cmd, &out);
        let io_bytes = report["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
        got[i] = (io_bytes, read);
    }
    got
}

#[test]
fn time_based_buffered_reads_drop_the_cache_at_each_pass_as_fio_does() {
    require!(fio);
    for rw in ["randread", "read"] {
        let [(fio_io, fio_read), (io, read)] = time_based_reads(rw, "");
        eprintln!("{rw}: fio {fio_io} bytes, {fio_read} from storage; iolab {io}, {read}");
        // Each tool made several passes over the file, so a cached file
        // would show as far fewer bytes read from storage than moved.
        assert!(fio_io >= 4 << 20 && io >= 4 << 20, "{rw}: too few passes");
        if fio_read < fio_io / 2 {
            skip!(
                "fio read {fio_read} of {fio_io} bytes from storage \
                 (the temporary directory's filesystem keeps its cache)"
            );
        }
        assert!(
            read >= io / 2,
            "{rw}: iolab read {read} of {io} bytes from storage; fio {fio_read} of {fio_io}"
        );
    }
}

#[test]
fn time_based_reads_with_invalidate_off_stay_in_the_cache_in_both() {
    require!(fio);
    let [(fio_io, fio_read), (io, read)] = time_based_reads("randread", "invalidate=0\n");
    eprintln!("fio {fio_io} bytes, {fio_read} from storage; iolab {io}, {read}");
    assert!(fio_io >= 4 << 20 && io >= 4 << 20, "too few passes");
    assert!(fio_read < fio_io / 2, "fio {fio_read} of {fio_io}");
    assert!(read < io / 2, "iolab {read} of {io}");
}

/// Runs `text` (a job file with DIR for a directory of its own) through
/// fio or iolab with the given output format; returns the report's text.
fn run_tool(tool: &str, text: &str, format: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, text.replace("DIR", &dir.path().display().to_string())).unwrap();
    let out = match tool {
        "fio" => Proc::new("fio")
            .arg(format!("--output-format={format}"))
            .arg(&job)
            .current_dir(dir.path())
            .output()
            .unwrap(),
        _ => Proc::new(iolab_bin())
            .args(["run", "--no-store", &format!("--output-format={format}")])
            .arg(&job)
            .env("IOLAB_DB", test_db())
            .current_dir(dir.path())
            .output()
            .unwrap(),
    };
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The `issued rwts: total=R,W,T,X` counts of a normal report.
fn issued(text: &str) -> Vec<u64> {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("issued rwts: total="))
        .unwrap_or_else(|| panic!("no issued line in:\n{text}"));
    line.split_whitespace()
        .next()
        .unwrap_or("")
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect()
}

#[test]
fn a_run_that_io_size_starts_again_begins_with_an_empty_queue_as_fios() {
    require!(fio);
    // io_size past the files: each of fio's runs ends where its files are
    // done (16 blocks of 64 KiB), and fio reaps the run's I/O before it
    // starts the next, so its queue depth falls to 0 sixteen times: a
    // sixteenth of the I/Os go out at depth 1 and an eighth at 2 or 3.
    for engine in ["libaio", "io_uring"] {
        for (what, opts) in [
            ("random", "rw=randread\n"),
            ("sequential", "rw=read\n"),
            ("two files", "rw=randread\nnrfiles=2\n"),
        ] {
            let text = format!(
                "[d]\ndirectory=DIR\nsize=64k\nio_size=1m\nbs=4k\n{opts}\
                 ioengine={engine}\niodepth=4\n"
            );
            let (_d, fio_json) = run_tool("fio", &text, "json");
            let (_d, ours_json) = run_tool("iolab", &text, "json");
            let (f, o) = (
                &json_of(fio_json.as_bytes())["jobs"][0],
                &json_of(ours_json.as_bytes())["jobs"][0],
            );
            let case = format!("{engine}, {what}");
            assert_eq!(f["read"]["total_ios"].as_u64(), Some(256), "fio {case}");
            assert_eq!(
                f["iodepth_level"]["1"].as_f64(),
                Some(6.25),
                "fio {case}: {}",
                f["iodepth_level"]
            );
            for key in ["total_ios", "io_bytes"] {
                assert_eq!(o["read"][key], f["read"][key], "{case} {key}");
            }
            for key in ["iodepth_level", "iodepth_submit", "iodepth_complete"] {
                assert_eq!(o[key], f[key], "{case} {key}");
            }
            assert_eq!(o["error"].as_u64(), Some(0), "{case}");
        }
    }
}

#[test]
fn verify_reads_are_issued_and_queued_as_fios() {
    require!(fio);
    for engine in ["libaio", "io_uring"] {
        let text = format!(
            "[v]\nfilename=DIR/v\nsize=8m\nbs=4k\nrw=write\nverify=crc32c\n\
             ioengine={engine}\niodepth=4\n"
        );
        // The read-back counts as issued reads, as in fio.
        let (_d, fio_text) = run_tool("fio", &text, "normal");
        let (_d, ours_text) = run_tool("iolab", &text, "normal");
        assert_eq!(issued(&fio_text), vec![2048, 2048, 0, 0], "fio {engine}");
        assert_eq!(issued(&ours_text), issued(&fio_text), "{engine}");
        // Each read has its submission latency through a queued engine,
        // and goes through the queue at the job's depth.
        let (_d, fio_json) = run_tool("fio", &text, "json");
        let (_d, ours_json) = run_tool("iolab", &text, "json");
        let (f, o) = (
            &json_of(fio_json.as_bytes())["jobs"][0],
            &json_of(ours_json.as_bytes())["jobs"][0],
        );
        for d in ["read", "write"] {
            for key in ["io_bytes", "total_ios"] {
                assert_eq!(o[d][key], f[d][key], "{engine} {d} {key}");
            }
            for lat in ["slat_ns", "clat_ns", "lat_ns"] {
                assert_eq!(o[d][lat]["N"], f[d][lat]["N"], "{engine} {d} {lat}");
            }
        }
        assert_eq!(o["read"]["slat_ns"]["N"].as_u64(), Some(2048), "{engine}");
        assert!(o["read"]["slat_ns"]["mean"].as_f64().unwrap() > 0.0);
        assert_eq!(o["iodepth_level"], f["iodepth_level"], "{engine}");
        assert_eq!(o["iodepth_submit"], f["iodepth_submit"], "{engine}");
        assert_eq!(o["iodepth_complete"], f["iodepth_complete"], "{engine}");
        assert_eq!(o["error"].as_u64(), Some(0));
    }
}

#[test]
fn verify_reads_through_a_synchronous_engine_are_issued_and_have_no_slat() {
    require!(fio);
    let text = "[v]\nfilename=DIR/v\nsize=2m\nbs=4k\nrw=randwrite\nverify=md5\n";
    let (_d, fio_text) = run_tool("fio", text, "normal");
    let (_d, ours_text) = run_tool("iolab", text, "normal");
    assert_eq!(issued(&fio_text), vec![512, 512, 0, 0]);
    assert_eq!(issued(&ours_text), issued(&fio_text));
    let (_d, ours_json) = run_tool("iolab", text, "json");
    let o = &json_of(ours_json.as_bytes())["jobs"][0];
    assert_eq!(o["read"]["slat_ns"]["N"].as_u64(), Some(0));
    assert_eq!(o["read"]["clat_ns"]["N"].as_u64(), Some(512));
}

/// The number of lines of each `.log` file in `dir`, by name.
fn log_lines(dir: &Path) -> std::collections::BTreeMap<String, usize> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            (p.file_name().unwrap().to_string_lossy().into_owned(), n)
        })
        .collect()
}

#[test]
fn averaged_and_slat_logs_have_fios_line_counts() {
    require!(fio);
    let logs = "write_bw_log=a\nwrite_iops_log=a\nwrite_lat_log=a\nlog_avg_msec=100\n";
    // 1 s in windows of 100 ms. How many windows close before the
    // deadline follows the machine's pace (fio itself writes 8, 9 or 10
    // bandwidth lines on a loaded machine), so the counts are checked by
    // fio's rules, with fio's own shown beside a failure: the window the
    // end cuts short writes no bandwidth or IOPS line (at most 9); the
    // latency logs get one more line, the window the I/O at the deadline
    // closes; through a queue, the I/Os in flight at the deadline
    // complete after the window their last completion closed (clat one
    // line more again), while their slat was logged when they were
    // submitted, in a window that ends with the job: one slat line less
    // than clat. A synchronous engine writes no slat.
    for (what, job, queued) in [
        (
            "psync",
            format!("[l]\nfilename=DIR/f\nsize=1m\nrw=randread\ntime_based\nruntime=1\n{logs}"),
            false,
        ),
        (
            "io_uring at iodepth 8",
            format!(
                "[l]\nfilename=DIR/f\nsize=1m\nrw=randread\nioengine=io_uring\niodepth=8\n\
                 time_based\nruntime=1\n{logs}"
            ),
            true,
        ),
    ] {
        let (fdir, _) = run_tool("fio", &job, "json");
        let (odir, _) = run_tool("iolab", &job, "json");
        let (f, o) = (log_lines(fdir.path()), log_lines(odir.path()));
        let shown = format!("{what}: iolab {o:?}, fio {f:?}");
        assert_eq!(
            o.keys().collect::<Vec<_>>(),
            f.keys().collect::<Vec<_>>(),
            "{shown}"
        );
        let n = |name: &str| o[name];
        assert!((5..=9).contains(&n("a_bw.1.log")), "{shown}");
        assert_eq!(n("a_iops.1.log"), n("a_bw.1.log"), "{shown}");
        assert_eq!(n("a_lat.1.log"), n("a_clat.1.log"), "{shown}");
        assert!(n("a_clat.1.log") > n("a_bw.1.log"), "{shown}");
        if queued {
            // One less, unless the last submission's own call straddled
            // the deadline, logging its slat after the last window closed
            // (seen in either tool on a loaded machine).
            let (slat, clat) = (n("a_slat.1.log"), n("a_clat.1.log"));
            assert!(slat + 1 == clat || slat == clat, "{shown}");
        } else {
            assert_eq!(n("a_slat.1.log"), 0, "{shown}");
        }
    }
    // A log per I/O: one slat line per I/O, as many as clat.
    let job = "[s]\nfilename=DIR/f\nsize=1m\nrw=randread\nioengine=libaio\niodepth=4\n\
               write_lat_log=s\n";
    let (fdir, _) = run_tool("fio", job, "json");
    let (odir, _) = run_tool("iolab", job, "json");
    let (f, o) = (log_lines(fdir.path()), log_lines(odir.path()));
    assert_eq!(o, f);
    assert_eq!(o.get("s_slat.1.log"), Some(&256));
    assert_eq!(o.get("s_clat.1.log"), Some(&256));
    // Its lines are in submission order, as fio's are.
    let times: Vec<u64> = std::fs::read_to_string(odir.path().join("s_slat.1.log"))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}
