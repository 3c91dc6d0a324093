//! Data buffer options through `iolab run`: a job writes a file, and a
//! real compressor (zstd) and a count of repeated 4 KiB blocks judge what
//! reached it.

mod common;
use common::*;

use std::collections::HashSet;
use std::path::Path;

const SIZE: usize = 8 << 20;

/// Writes `data` with the given options and returns the file's bytes.
fn written(dir: &Path, opts: &[&str]) -> Vec<u8> {
    iolab()
        .current_dir(dir)
        .args([
            "run",
            "--output-format=json",
            "--name=w",
            "--rw=write",
            "--bs=4k",
            "--size=8m",
            "--filename=data",
        ])
        .args(opts)
        .assert()
        .success();
    let data = std::fs::read(dir.join("data")).unwrap();
    assert_eq!(data.len(), SIZE);
    data
}

fn ratio(data: &[u8]) -> f64 {
    zstd::bulk::compress(data, 3).unwrap().len() as f64 / data.len() as f64
}

fn duplicate_share(data: &[u8]) -> f64 {
    let mut seen = HashSet::new();
    let dups = data.chunks(4096).filter(|b| !seen.insert(*b)).count();
    dups as f64 / (data.len() / 4096) as f64
}

#[test]
fn default_data_does_not_compress_or_dedupe() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(dir.path(), &[]);
    assert!(ratio(&data) > 0.99, "{}", ratio(&data));
    assert_eq!(duplicate_share(&data), 0.0);
}

#[test]
fn scramble_off_reuses_one_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(dir.path(), &["--scramble_buffers=0"]);
    assert!(duplicate_share(&data) > 0.99);
}

#[test]
fn compress_percentage_gives_that_compressed_size() {
    for pct in [0u32, 25, 50, 75, 90, 100] {
        let dir = tempfile::tempdir().unwrap();
        let opt = format!("--buffer_compress_percentage={pct}");
        let data = written(dir.path(), &[&opt]);
        let r = ratio(&data);
        let expected = (100 - pct) as f64 / 100.0;
        assert!(
            (r - expected).abs() < 0.03,
            "buffer_compress_percentage={pct}: compressed to {r:.3}"
        );
        if pct == 100 {
            // fio writes zeros: nothing is left to vary.
            assert!(data.iter().all(|b| *b == 0), "100%: not all zeros");
        }
    }
}

#[test]
fn compress_percentage_100_repeats_the_pattern_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(
        dir.path(),
        &["--buffer_compress_percentage=100", "--buffer_pattern=0xab"],
    );
    assert!(data.iter().all(|b| *b == 0xab));
}

#[test]
fn compress_chunk_of_the_block_keeps_the_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(
        dir.path(),
        &[
            "--buffer_compress_percentage=40",
            "--buffer_compress_chunk=0",
        ],
    );
    // One random part then one zero part per 4 KiB block.
    assert!(data[4096 - 1600..4096].iter().all(|b| *b == 0));
    assert!((ratio(&data) - 0.6).abs() < 0.03);
}

#[test]
fn zero_buffers_compress_to_almost_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(dir.path(), &["--zero_buffers"]);
    assert!(data.iter().all(|b| *b == 0));
    assert!(ratio(&data) < 0.001);
}

#[test]
fn buffer_pattern_fills_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = written(dir.path(), &["--buffer_pattern=\"ab\"0x01"]);
    for (i, b) in data.iter().enumerate().step_by(997) {
        assert_eq!(*b, [b'a', b'b', 1][i % 4096 % 3], "byte {i}");
    }
}

#[test]
fn dedupe_percentage_repeats_that_share_of_blocks() {
    for pct in [20u32, 50] {
        let dir = tempfile::tempdir().unwrap();
        let opt = format!("--dedupe_percentage={pct}");
        let share = duplicate_share(&written(dir.path(), &[&opt]));
        assert!(
            (share - pct as f64 / 100.0).abs() < 0.03,
            "dedupe_percentage={pct}: {share:.3}"
        );
    }
}
