//! Verify through `iolab run`, as a user runs it: a write job with verify
//! reads its data back clean; one byte flipped through the filesystem is
//! found by a read-only verify job at its exact offset, through every
//! engine, with the file, the block, the checksums, `error` and
//! `total_err` in the report (and the same facts under "iolab" in the
//! JSON) and exit status 1; a verify job whose buffer options differ from
//! the writer's names no byte it cannot locate.

mod common;
use common::*;
use iolab_testkit::{require, skip_case};

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde_json::Value;

const SIZE: &str = "256k";

/// The engines and the options that let each queue I/O.
const ENGINES: &[(&str, &[&str])] = &[
    ("psync", &[]),
    ("sync", &[]),
    ("pvsync", &[]),
    ("pvsync2", &[]),
    ("libaio", &["--direct=1", "--iodepth=4"]),
    ("io_uring", &["--iodepth=4"]),
    ("mmap", &[]),
];

struct Run {
    code: i32,
    json: Option<Value>,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let out = iolab()
        .current_dir(dir)
        .args(["run", "--output-format=json"])
        .args(args)
        .output()
        .unwrap();
    let json = out.stdout.contains(&b'{').then(|| json_of(&out.stdout));
    Run {
        code: out.status.code().unwrap_or(-1),
        json,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn job(dir: &Path, name: &str, rw: &str, engine: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        format!("--name={name}"),
        format!("--rw={rw}"),
        "--bs=4k".into(),
        format!("--size={SIZE}"),
        "--filename=data".into(),
        format!("--ioengine={engine}"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(dir, &a)
}

/// Whether this machine runs `engine`; records the case's skip when not.
fn engine_runs(engine: &str, r: &Run) -> bool {
    if r.code == 2 && r.stderr.contains(engine) {
        skip_case!(
            "{engine}: the engine is not available here: {}",
            r.stderr.trim()
        );
        return false;
    }
    true
}

fn flip(path: &Path, at: u64) {
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x20;
    f.write_all_at(&b, at).unwrap();
    f.sync_all().unwrap();
}

#[test]
fn a_flipped_byte_is_found_at_its_offset_through_every_engine() {
    for (engine, opts) in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let mut w: Vec<&str> = vec!["--verify=crc32c"];
        w.extend_from_slice(opts);
        let wr = job(dir.path(), "w", "write", engine, &w);
        if !engine_runs(engine, &wr) {
            continue;
        }
        assert_eq!(wr.code, 0, "{engine} write: {}", wr.stderr);
        let wj = &wr.json.unwrap()["jobs"][0];
        assert_eq!(wj["error"], 0, "{engine}");
        assert_eq!(wj["write"]["total_ios"], 64, "{engine}");

        // The intact file verifies clean.
        let clean = job(dir.path(), "v", "read", engine, &w);
        assert_eq!(clean.code, 0, "{engine} clean verify: {}", clean.stderr);
        assert_eq!(clean.json.unwrap()["jobs"][0]["error"], 0);

        let at = 5 * 4096 + 1234;
        flip(&dir.path().join("data"), at);
        let bad = job(dir.path(), "v", "randread", engine, &w);
        assert_eq!(bad.code, 1, "{engine}: {}", bad.stderr);
        let msg = &bad.stderr;
        assert!(
            msg.contains(&format!("first differing byte at offset {at}")),
            "{engine}: {msg}"
        );
        // The file, then the block.
        assert!(
            msg.contains("`data`: verify failed in the block at offset 20480"),
            "{engine}: {msg}"
        );
        assert!(msg.contains("bad crc32c checksum"), "{engine}: {msg}");
        assert!(msg.contains("expected "), "{engine}: {msg}");
        assert!(!msg.contains("more blocks failed"), "{engine}: {msg}");
        let j = &bad.json.unwrap()["jobs"][0];
        assert_eq!(j["error"], 84, "{engine}");
        // The same facts for machines, under "iolab".
        let f = &j["iolab"]["verify_failure"];
        assert_eq!(f["file"], "data", "{engine}: {f}");
        assert_eq!(f["block_offset"], 20480, "{engine}: {f}");
        assert_eq!(f["block_length"], 4096, "{engine}: {f}");
        assert_eq!(f["first_bad_byte"], at, "{engine}: {f}");
        assert_eq!(f["failed_blocks"], 1, "{engine}: {f}");
        let (e, g) = (
            f["expected"].as_str().unwrap(),
            f["found"].as_str().unwrap(),
        );
        assert!(e.len() == 8 && g.len() == 8 && e != g, "{engine}: {f}");
        assert!(
            msg.contains(&format!("expected {e}, found {g}")),
            "{engine}: {msg}"
        );
    }
}

#[test]
fn a_verify_job_with_other_buffer_options_does_not_guess_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let writer = ["--verify=crc32c", "--buffer_compress_percentage=50"];
    assert_eq!(job(dir.path(), "w", "write", "psync", &writer).code, 0);
    let at = 2 * 4096 + 2999;
    flip(&dir.path().join("data"), at);

    // Without the writer's compress option the data regenerated from the
    // seed is other data: no byte is named, the checksums are.
    let bad = job(dir.path(), "v", "read", "psync", &["--verify=crc32c"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    let msg = &bad.stderr;
    assert!(!msg.contains("first differing byte"), "{msg}");
    assert!(msg.contains("cannot be located"), "{msg}");
    assert!(msg.contains("block at offset 8192"), "{msg}");
    let f = &bad.json.unwrap()["jobs"][0]["iolab"]["verify_failure"];
    assert!(f["first_bad_byte"].is_null(), "{f}");
    assert_eq!(f["block_offset"], 8192, "{f}");
    assert_ne!(f["expected"], f["found"], "{f}");

    // With them, the byte is found.
    let same = job(dir.path(), "v", "read", "psync", &writer);
    assert_eq!(same.code, 1);
    assert!(
        same.stderr
            .contains(&format!("first differing byte at offset {at}")),
        "{}",
        same.stderr
    );
    let f = &same.json.unwrap()["jobs"][0]["iolab"]["verify_failure"];
    assert_eq!(f["first_bad_byte"], at, "{f}");
}

#[test]
fn every_method_writes_and_detects() {
    for method in ["md5", "sha256", "xxhash", "meta", "pattern"] {
        let dir = tempfile::tempdir().unwrap();
        let verify = format!("--verify={method}");
        let mut opts = vec![verify.as_str(), "--verify_interval=1k"];
        if method == "pattern" {
            opts.push("--verify_pattern=0x17a5");
        }
        let wr = job(dir.path(), "w", "randwrite", "psync", &opts);
        assert_eq!(wr.code, 0, "{method}: {}", wr.stderr);
        let clean = job(dir.path(), "v", "read", "psync", &opts);
        assert_eq!(clean.code, 0, "{method}: {}", clean.stderr);
        // A byte of the offset field of the header at 7 KiB; the pattern
        // has no header, so that byte is data.
        let at = 7 * 1024 + 17;
        flip(&dir.path().join("data"), at);
        let bad = job(dir.path(), "v", "read", "psync", &opts);
        assert_eq!(bad.code, 1, "{method}: {}", bad.stderr);
        assert!(
            bad.stderr
                .contains(&format!("first differing byte at offset {at}")),
            "{method}: {}",
            bad.stderr
        );
        assert!(
            bad.stderr.contains("block at offset 7168"),
            "{}",
            bad.stderr
        );
    }
}

#[test]
fn verify_fatal_stops_at_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        job(dir.path(), "w", "write", "psync", &["--verify=md5"]).code,
        0
    );
    flip(&dir.path().join("data"), 4096 + 100);
    flip(&dir.path().join("data"), 9 * 4096 + 100);
    // continue_on_error=read (which does not cover verify failures) makes
    // the report carry total_err and first_error, as fio's does.
    let coe = "--continue_on_error=read";
    let all = job(dir.path(), "v", "read", "psync", &["--verify=md5", coe]);
    assert_eq!(all.code, 1);
    let j = &all.json.unwrap()["jobs"][0];
    assert_eq!(j["error"], 84);
    assert_eq!(j["first_error"], 84);
    assert_eq!(j["total_err"], 2);
    assert!(
        all.stderr.contains("1 more blocks failed"),
        "{}",
        all.stderr
    );
    // Reads go on to the end without verify_fatal.
    assert_eq!(j["read"]["total_ios"], 64);

    let fatal = job(
        dir.path(),
        "v",
        "read",
        "psync",
        &["--verify=md5", "--verify_fatal=1", coe],
    );
    assert_eq!(fatal.code, 1);
    let j = &fatal.json.unwrap()["jobs"][0];
    assert_eq!(j["total_err"], 1);
    assert_eq!(j["read"]["total_ios"], 2);
}

#[test]
fn verify_only_checks_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = ["--verify=sha256"];
    assert_eq!(job(dir.path(), "w", "randwrite", "psync", &opts).code, 0);
    let path = dir.path().join("data");
    let before = fs::read(&path).unwrap();
    let only = job(
        dir.path(),
        "w",
        "randwrite",
        "psync",
        &["--verify=sha256", "--verify_only"],
    );
    assert_eq!(only.code, 0, "{}", only.stderr);
    assert_eq!(fs::read(&path).unwrap(), before, "verify_only wrote");
    let j = &only.json.unwrap()["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 0);
    assert_eq!(j["read"]["total_ios"], 64);

    flip(&path, 63 * 4096 + 4000);
    let bad = job(
        dir.path(),
        "w",
        "randwrite",
        "psync",
        &["--verify=sha256", "--verify_only"],
    );
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains(&format!(
        "first differing byte at offset {}",
        63 * 4096 + 4000
    )));
}

#[test]
fn data_never_written_with_verify_fails_on_its_magic() {
    let dir = tempfile::tempdir().unwrap();
    // Laid out with plain data, then verified.
    let r = job(dir.path(), "v", "read", "psync", &["--verify=crc32c"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("bad magic"), "{}", r.stderr);
    assert!(
        r.stderr.contains("and 63 more blocks failed"),
        "{}",
        r.stderr
    );
}

#[test]
fn backlog_and_loops_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let r = job(
        dir.path(),
        "w",
        "randwrite",
        "libaio",
        &[
            "--verify=xxhash",
            "--verify_backlog=7",
            "--loops=2",
            "--iodepth=8",
            "--direct=1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = &r.json.unwrap()["jobs"][0];
    assert_eq!(j["write"]["total_ios"], 128);
    assert_eq!(j["error"], 0);
}

#[test]
fn bad_verify_settings_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for (opts, words) in [
        (&["--verify=pattern"][..], "verify_pattern"),
        (&["--verify=crc32c", "--verify_interval=3k"][..], "divide"),
        (&["--verify=sha256", "--bs=64"][..], "header"),
        (&["--verify_only"][..], "needs verify"),
        (
            &["--verify=md5", "--verify_only", "--rw=randrw"][..],
            "verify_only",
        ),
    ] {
        let r = job(dir.path(), "w", "write", "psync", opts);
        assert_eq!(r.code, 2, "{opts:?}: {}", r.stderr);
        assert!(r.stderr.contains(words), "{opts:?}: {}", r.stderr);
        assert!(entries(dir.path()).is_empty(), "{opts:?}");
    }
}

#[test]
fn the_read_back_is_counted_as_reads_as_fio_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = job(dir.path(), "w", "write", "psync", &["--verify=crc32c"]);
    let j = &r.json.unwrap()["jobs"][0];
    assert_eq!(j["read"]["total_ios"], 64);
    assert_eq!(j["read"]["io_bytes"], 256 << 10);
    assert_eq!(j["write"]["total_ios"], 64);

    let off = job(
        dir.path(),
        "w",
        "write",
        "psync",
        &["--verify=crc32c", "--do_verify=0"],
    );
    assert_eq!(off.json.unwrap()["jobs"][0]["read"]["total_ios"], 0);

    let backlog = job(
        dir.path(),
        "w",
        "randwrite",
        "psync",
        &["--verify=crc32c", "--verify_backlog=10"],
    );
    assert_eq!(backlog.json.unwrap()["jobs"][0]["read"]["total_ios"], 64);

    require!(fio);
    let fio = std::process::Command::new("fio")
        .current_dir(dir.path())
        .args([
            "--name=w",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--filename=fio-data",
            "--verify=crc32c",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    let f = &json_of(&fio.stdout)["jobs"][0];
    assert_eq!(f["read"]["total_ios"], j["read"]["total_ios"]);
    assert_eq!(f["read"]["io_bytes"], j["read"]["io_bytes"]);
}

#[test]
fn overlapping_writes_of_mixed_sizes_verify_clean() {
    // Writes of 4-16 KiB land across each other; only what the file
    // holds last is checked.
    for extra in [
        &["--bsrange=4k-16k"][..],
        &["--bsrange=4k-64k", "--norandommap", "--loops=2"][..],
        &["--bssplit=4k/50:16k/50", "--verify_interval=4k"][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = vec!["--verify=crc32c"];
        opts.extend_from_slice(extra);
        let r = job(dir.path(), "w", "randwrite", "psync", &opts);
        assert_eq!(r.code, 0, "{extra:?}: {}", r.stderr);
        let j = &r.json.unwrap()["jobs"][0];
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{extra:?}");
    }
}
