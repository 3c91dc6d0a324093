//! The queued engines end to end: exact counts for size-bounded jobs,
//! direct and buffered, slat reported, the queue really filled, and data
//! written through each engine read back identical through psync.

mod common;

use iolab_testkit::{have, need, require};

#[test]
fn queued_engines_count_exactly_and_fill_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio"] {
        for direct in ["0", "1"] {
            let v = common::run_json(
                dir.path(),
                &[
                    "--name=q",
                    &format!("--ioengine={engine}"),
                    &format!("--direct={direct}"),
                    "--iodepth=16",
                    "--rw=randread",
                    "--bs=4k",
                    "--size=8m",
                    "--filename=data",
                ],
            );
            let r = &v["jobs"][0]["read"];
            assert_eq!(r["io_bytes"], 8 << 20, "{engine} direct={direct}");
            assert_eq!(r["total_ios"], 2048, "{engine} direct={direct}");
            assert_eq!(r["slat_ns"]["N"], 2048, "{engine}: slat is measured");
            if direct == "1" {
                // With O_DIRECT the kernel really queues. As in fio, an
                // I/O counts at the depth it was committed at, and by
                // default one completion is reaped at a time, so all but
                // the first few I/Os go out with the queue full.
                let levels = &v["jobs"][0]["iodepth_level"];
                let full = levels["16"].as_f64().unwrap();
                assert!(full > 98.0, "{engine}: depth levels {levels}");
                let complete = &v["jobs"][0]["iodepth_complete"];
                let ones = complete["4"].as_f64().unwrap();
                assert!(ones > 99.0, "{engine}: completions per reap {complete}");
            }
        }
    }
}

/// iodepth_batch, iodepth_batch_complete_min/max and iodepth_low shape the
/// queue as fio's do: submits in fours, reaps of two to eight, and a full
/// queue drained to eight before it is refilled.
#[test]
fn batch_options_shape_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio"] {
        let v = common::run_json(
            dir.path(),
            &[
                "--name=b",
                &format!("--ioengine={engine}"),
                "--direct=1",
                "--iodepth=16",
                "--iodepth_batch=4",
                "--iodepth_batch_complete_min=2",
                "--iodepth_batch_complete_max=8",
                "--iodepth_low=8",
                "--rw=randread",
                "--bs=4k",
                "--size=16m",
                "--filename=data",
            ],
        );
        let job = &v["jobs"][0];
        assert_eq!(job["read"]["total_ios"], 4096, "{engine}");
        let pct = |map: &str, key: &str| job[map][key].as_f64().unwrap();
        assert_eq!(pct("iodepth_submit", "4"), 100.0, "{engine}: {job}");
        let small = pct("iodepth_complete", "4") + pct("iodepth_complete", "8");
        assert!(small > 99.0, "{engine}: {}", job["iodepth_complete"]);
        for key in ["32", "64", ">=64"] {
            assert_eq!(pct("iodepth_complete", key), 0.0, "{engine}");
        }
        // Refills start from eight or fewer in flight (a reap of up to
        // eight may overshoot the mark), so a good share of I/Os go out
        // at depths below 16, and none above it. How often a refill gets
        // back to 16 before the next reap, and how far below the mark a
        // reap takes the queue, depend on the device's pace (a loaded
        // machine's reaps find more done: 17% of the I/Os went out at 4
        // to 7 in flight once in CI); the first fill always reaches 16,
        // and every submission carries four, so none goes out below 4.
        let (mid, full) = (pct("iodepth_level", "8"), pct("iodepth_level", "16"));
        assert!(
            mid > 20.0 && full > 0.0,
            "{engine}: {}",
            job["iodepth_level"]
        );
        for key in ["1", "2", "32", ">=64"] {
            assert_eq!(pct("iodepth_level", key), 0.0, "{engine}: {key}");
        }
    }
}

#[test]
fn data_written_through_queued_engines_reads_back_through_psync() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio"] {
        let file = format!("{engine}.dat");
        common::run_json(
            dir.path(),
            &[
                "--name=w",
                &format!("--ioengine={engine}"),
                "--direct=1",
                "--iodepth=8",
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                &format!("--filename={file}"),
            ],
        );
        // Every block carries its own offset and a distinct write number.
        iolab_testkit::stamps::assert_each_block_written_once(&dir.path().join(&file), 4096, 256);
        // And psync reads it all back.
        let v = common::run_json(
            dir.path(),
            &[
                "--name=r",
                "--ioengine=psync",
                "--rw=read",
                "--bs=64k",
                &format!("--filename={file}"),
            ],
        );
        assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20);
    }
}

#[test]
fn a_depth_the_engine_cannot_reach_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let warned = |args: &[&str]| -> String {
        let out = common::iolab()
            .current_dir(dir.path())
            .args([
                "run",
                "--output-format=json",
                // JSON through a pipe keeps warnings off stderr unless asked.
                "--warnings=stderr",
                // Not stored: stderr has the warnings alone.
                "--no-store",
                "--name=w",
                "--size=1m",
                "--filename=f",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = warned(&["--ioengine=libaio", "--iodepth=16", "--direct=0"]);
    assert!(
        e.contains("iodepth=16 will not be reached with ioengine=libaio"),
        "{e}"
    );
    assert!(e.contains("use direct=1"), "{e}");
    let e = warned(&["--ioengine=psync", "--iodepth=8"]);
    assert!(
        e.contains("a synchronous engine has one I/O in flight"),
        "{e}"
    );
    assert_eq!(
        warned(&["--ioengine=libaio", "--iodepth=16", "--direct=1"]),
        ""
    );
    assert_eq!(warned(&["--ioengine=psync"]), "");
}

#[test]
fn trim_on_a_regular_file_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    common::iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--name=t",
            "--rw=randtrim",
            "--size=1m",
            "--filename=f",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("only a block device takes"));
    assert!(!dir.path().join("f").exists());
}

/// fsync=N through a queued engine: one sync after every N writes issued,
/// issued before the next write (63 for 256 writes with fsync=4, as fio
/// counts), each after the writes in flight have completed.
#[test]
fn fsync_every_n_writes_through_queued_engines() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio"] {
        let v = common::run_json(
            dir.path(),
            &[
                "--name=s",
                &format!("--ioengine={engine}"),
                "--iodepth=8",
                "--fsync=4",
                "--rw=randwrite",
                "--bs=4k",
                "--size=1m",
                "--filename=data",
            ],
        );
        let job = &v["jobs"][0];
        assert_eq!(job["write"]["total_ios"], 256, "{engine}");
        assert_eq!(job["sync"]["lat_ns"]["N"], 63, "{engine}: {}", job["sync"]);
    }
}

/// Bytes of `path` that hold data on disk (st_blocks), in 512-byte units.
fn allocated(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks()
}

#[test]
fn trim_modes_discard_a_block_device_and_count_as_fio_counts() {
    // A loop device passes BLKDISCARD to its image as hole punching, so
    // what a trim did shows in the image's allocated blocks.
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("trim.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let lo = need!(common::LoopDev::attach(&img));
    let fill = || {
        common::run_json(
            dir.path(),
            &[
                "--name=fill",
                "--ioengine=psync",
                &format!("--filename={}", lo.dev),
                "--rw=write",
                "--bs=1m",
                "--size=32m",
                "--direct=1",
            ],
        );
        assert!(allocated(&img) >= 32 << 11, "the image is written");
    };
    fill();
    let v = common::run_json(
        dir.path(),
        &[
            "--name=t",
            &format!("--filename={}", lo.dev),
            "--rw=trim",
            "--bs=1m",
            "--size=32m",
        ],
    );
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0);
    assert_eq!(j["trim"]["io_bytes"], 32u64 << 20);
    assert_eq!(j["trim"]["total_ios"], 32);
    assert!(
        allocated(&img) < 1 << 11,
        "a trim of the whole device leaves the image empty ({} blocks)",
        allocated(&img)
    );
    // trimwrite trims size bytes and writes size bytes; fio's counts.
    let fio = have!(fio);
    for mode in ["trimwrite", "randtrimwrite", "randtrim"] {
        fill();
        let args = [
            "--name=t".to_string(),
            format!("--filename={}", lo.dev),
            format!("--rw={mode}"),
            "--bs=64k".into(),
            "--size=16m".into(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let j = common::run_json(dir.path(), &args)["jobs"][0].clone();
        let want_write = if mode == "randtrim" { 0 } else { 16u64 << 20 };
        assert_eq!(j["trim"]["io_bytes"], 16u64 << 20, "{mode}");
        assert_eq!(j["write"]["io_bytes"], want_write, "{mode}");
        if fio {
            let out = std::process::Command::new("fio")
                .arg("--output-format=json")
                .args(&args)
                .output()
                .unwrap();
            let f = &common::json_of(&out.stdout)["jobs"][0];
            for d in ["trim", "write"] {
                for k in ["io_bytes", "total_ios"] {
                    assert_eq!(j[d][k], f[d][k], "{mode} {d} {k}: iolab vs fio");
                }
            }
        }
    }
}

/// io_uring names its ring (every io_uring_enter of the worker) and, unless
/// the job says registerfiles=0, its files by registered index: the kernel
/// then skips a descriptor lookup and two reference counts per I/O. A
/// direct job's buffers are registered too unless it says fixedbufs=0, so
/// that no page is pinned per I/O. The counts stay exact either way.
#[test]
fn io_uring_registers_ring_files_and_direct_buffers_unless_told_not_to() {
    require!(strace);
    let dir = tempfile::tempdir().unwrap();
    // (option, files registered, buffers registered): the buffers of a
    // direct job are registered unless it says fixedbufs=0; a buffered
    // job's only when it says fixedbufs=1.
    for (opt, files_registered, bufs_registered) in [
        ("--registerfiles=1", true, false),
        ("--iodepth=4", true, false),
        ("--registerfiles=0", false, false),
        ("--direct=1", true, true),
        ("--direct=1 --fixedbufs=0", true, false),
        ("--fixedbufs=1", true, true),
    ] {
        let mut args = vec![
            "--name=u",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--filename=f",
        ];
        args.extend(opt.split(' '));
        let (out, all) = common::strace_iolab_run(
            dir.path(),
            &["-e", "trace=io_uring_register,io_uring_enter"],
            &args,
        );
        assert!(out.status.success(), "{opt}: {out:?}");
        let v = common::json_of(&out.stdout);
        assert_eq!(v["jobs"][0]["write"]["io_bytes"], 256 << 10, "{opt}");
        assert_eq!(v["jobs"][0]["write"]["total_ios"], 64, "{opt}");
        // The worker's thread: the one that submits (the main thread only
        // checks that the kernel gives a ring).
        let worker = all
            .lines()
            .find(|l| l.contains("io_uring_enter("))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("{opt}: no io_uring_enter: {all}"));
        let t: String = all
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(worker))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            t.contains("IORING_REGISTER_FILES"),
            files_registered,
            "{opt}: {t}"
        );
        assert_eq!(
            t.contains("IORING_REGISTER_BUFFERS"),
            bufs_registered,
            "{opt}: {t}"
        );
        let enters: Vec<&str> = t
            .lines()
            .filter(|l| l.contains("io_uring_enter("))
            .collect();
        assert!(enters.len() >= 16, "{opt}: {t}");
        assert!(
            enters
                .iter()
                .all(|l| l.contains("IORING_ENTER_REGISTERED_RING")),
            "{opt}: an enter by descriptor: {t}"
        );
    }
}

/// libaio takes completions from the ring the kernel maps, with no
/// io_getevents when they are already there: buffered reads complete
/// inside io_submit, so the worker makes one io_submit per I/O and not one
/// io_getevents. fio's userspace_reap=1 is accepted and changes nothing.
/// The counts stay exact.
#[test]
fn libaio_reads_completions_from_the_ring_without_a_system_call() {
    require!(strace);
    let dir = tempfile::tempdir().unwrap();
    for extra in [None, Some("--userspace_reap=1")] {
        let mut args = vec![
            "--name=a",
            "--ioengine=libaio",
            "--iodepth=8",
            "--rw=randread",
            "--bs=4k",
            "--size=256k",
            "--filename=f",
        ];
        args.extend(extra);
        let (out, all) =
            common::strace_iolab_run(dir.path(), &["-e", "trace=io_submit,io_getevents"], &args);
        assert!(out.status.success(), "{extra:?}: {out:?}");
        let v = common::json_of(&out.stdout);
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 64, "{extra:?}");
        let count = |call: &str| all.lines().filter(|l| l.contains(call)).count();
        assert_eq!(count("io_submit("), 64, "{extra:?}: {all}");
        assert_eq!(count("io_getevents("), 0, "{extra:?}: {all}");
    }
}
