//! `verify=pattern` as a user runs it: what the file holds after the
//! writes is the pattern, restarted at every `verify_interval` chunk,
//! whatever the engine, the queue depth and the block sizes (a buffer
//! filled once must not go stale when a larger write or the read-back
//! uses it); the job's own read-back passes; a byte changed afterwards is
//! found at its offset; and, as in fio, the read-back is timed apart from
//! the writes.

mod common;
use common::*;
use iolab_testkit::skip_case;

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

fn run(dir: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = iolab()
        .current_dir(dir)
        .args(["run", "--output-format=json", "--filename=data"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = if out.stdout.contains(&b'{') {
        json_of(&out.stdout)
    } else {
        serde_json::Value::Null
    };
    (out.status.code().unwrap_or(-1), json, stderr)
}

/// What a file written with `pattern` in chunks of `interval` bytes (0:
/// each write one chunk, the writes 4 KiB or the pattern one byte) holds
/// at byte `i`.
fn expected(pattern: &[u8], interval: usize, i: usize) -> u8 {
    let chunk = if interval == 0 { 4096 } else { interval };
    pattern[(i % chunk) % pattern.len()]
}

fn check_file(path: &Path, pattern: &[u8], interval: usize, what: &str) {
    let data = fs::read(path).unwrap();
    assert_eq!(data.len(), 1 << 20, "{what}");
    if let Some(i) = (0..data.len()).find(|&i| data[i] != expected(pattern, interval, i)) {
        panic!(
            "{what}: byte {i} is {:#04x}, the pattern says {:#04x}",
            data[i],
            expected(pattern, interval, i)
        );
    }
}

#[test]
fn the_file_holds_the_pattern_whatever_the_engine_and_sizes() {
    // A two-byte pattern over 1 KiB chunks: each write is the pattern from
    // its first byte. A three-byte one over 1 KiB chunks: each chunk
    // restarts it, so a write is not one run of it.
    let cases: &[(&str, &[u8], usize)] = &[
        ("0xff", &[0xff], 0),
        ("0x17a5", &[0x17, 0xa5], 1024),
        ("0x0102ab", &[0x01, 0x02, 0xab], 1024),
        ("0x0102ab", &[0x01, 0x02, 0xab], 0),
    ];
    let engines: &[(&str, &[&str])] = &[
        ("psync", &[]),
        ("libaio", &["--direct=1", "--iodepth=4"]),
        ("io_uring", &["--iodepth=4"]),
        ("mmap", &[]),
    ];
    for (engine, eopts) in engines {
        for (pat, bytes, interval) in cases {
            // Mixed block sizes where every write is one chunk would put
            // a chunk boundary at each write's start: only with fixed
            // blocks is the file one run of the pattern.
            let sizes: &[&str] = if *interval == 0 && bytes.len() > 1 {
                &["--bs=4k"]
            } else {
                &["--bsrange=4k-16k"]
            };
            let dir = tempfile::tempdir().unwrap();
            let vp = format!("--verify_pattern={pat}");
            let vi = format!("--verify_interval={interval}");
            let mut args = vec![
                "--name=w",
                // In order, so that every byte is written (random offsets
                // of mixed sizes leave holes), twice.
                "--rw=write",
                "--size=1m",
                "--loops=2",
                "--verify=pattern",
                vp.as_str(),
            ];
            let e = format!("--ioengine={engine}");
            args.push(&e);
            args.extend_from_slice(eopts);
            args.extend_from_slice(sizes);
            if *interval > 0 {
                args.push(&vi);
            }
            let (code, j, err) = run(dir.path(), &args);
            if code == 2 && err.contains(engine) {
                skip_case!("{engine}: {}", err.trim());
                continue;
            }
            let what = format!("{engine} {pat} interval {interval}");
            assert_eq!(code, 0, "{what}: {err}");
            let job = &j["jobs"][0];
            assert_eq!(job["error"], 0, "{what}");
            assert!(job["read"]["total_ios"].as_u64().unwrap() > 0, "{what}");
            check_file(&dir.path().join("data"), bytes, *interval, &what);
        }
    }
}

#[test]
fn a_changed_byte_is_found_after_the_writes_passed() {
    let dir = tempfile::tempdir().unwrap();
    let w = [
        "--name=w",
        "--rw=write",
        "--bs=4k",
        "--size=1m",
        "--verify=pattern",
        "--verify_pattern=0xff",
        "--ioengine=psync",
    ];
    let (code, j, err) = run(dir.path(), &w);
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["jobs"][0]["read"]["total_ios"], 256);
    let at = 300 * 1024 + 5;
    let f = fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("data"))
        .unwrap();
    f.write_all_at(&[0xfe], at).unwrap();
    drop(f);
    let mut r = w;
    r[1] = "--rw=read";
    let (code, j, err) = run(dir.path(), &r);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("first differing byte at offset {at}")),
        "{err}"
    );
    assert!(err.contains("data differs from verify_pattern"), "{err}");
    assert!(err.contains("expected byte 0xff, found byte 0xfe"), "{err}");
    assert_eq!(j["jobs"][0]["error"], 84);
}

#[test]
fn reads_of_a_mixed_job_do_not_spoil_the_pattern() {
    // randrw reads into the buffers the writes use: each write is filled
    // anew, and the read-back passes.
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data"), vec![0u8; 1 << 20]).unwrap();
    let (code, j, err) = run(
        dir.path(),
        &[
            "--name=m",
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            "--ioengine=libaio",
            "--iodepth=4",
            "--verify=pattern",
            "--verify_pattern=0x5a",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(j["jobs"][0]["error"], 0);
}

#[test]
fn the_read_back_is_timed_apart_from_the_writes() {
    // As fio: the writes' runtime ends where the read-back starts, which
    // has its own. Before, both directions were given the whole job's
    // time, twice what the job took. 64 MiB in memory or on disk takes
    // tens of milliseconds at least, so the millisecond rounding of the
    // report cannot hide that.
    let dir = tempfile::tempdir().unwrap();
    let (code, j, err) = run(
        dir.path(),
        &[
            "--name=w",
            "--rw=write",
            "--bs=64k",
            "--size=64m",
            "--verify=crc32c",
            "--ioengine=psync",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let job = &j["jobs"][0];
    let (w, r, all) = (
        job["write"]["runtime"].as_u64().unwrap(),
        job["read"]["runtime"].as_u64().unwrap(),
        job["job_runtime"].as_u64().unwrap(),
    );
    assert!(all >= 4, "{job}");
    assert!(w + r <= all + 2, "write {w} + read {r} ms, job {all} ms");
    assert!(w > 0 && r > 0, "write {w} read {r}");
}
