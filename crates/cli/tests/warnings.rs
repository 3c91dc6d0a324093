//! Warnings about numbers that do not measure the storage: each raised by
//! a job crafted to deserve it, with its code in the JSON and its line in
//! the normal output, and none on a clean direct random read.

mod common;

use serde_json::Value;

fn codes(v: &Value) -> Vec<String> {
    v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn buffered_writes_the_device_did_not_see_measure_memory() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = common::LoopFs::new(dir.path(), "ext4", 256, "") else {
        return;
    };
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=f",
            "--rw=write",
            "--bs=1m",
            "--size=64m",
        ],
    );
    let c = codes(&v);
    assert!(c.contains(&"page-cache".to_string()), "{c:?}");
    let text = v["jobs"][0]["iolab"]["warnings"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("of the writes") && text.contains("direct=1"),
        "{text}"
    );
    // With end_fsync the writes reach the device before the job ends.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=w",
            "--filename=g",
            "--rw=write",
            "--bs=1m",
            "--size=64m",
            "--end_fsync=1",
        ],
    );
    assert!(
        !codes(&v).contains(&"page-cache".to_string()),
        "{:?}",
        codes(&v)
    );
}

#[test]
fn compressible_data_on_a_compressing_filesystem_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = common::LoopFs::new(dir.path(), "btrfs", 512, "compress=zstd") else {
        return;
    };
    let job = [
        "--name=z",
        "--filename=f",
        "--rw=write",
        "--bs=64k",
        "--size=16m",
    ];
    let mut zeros = job.to_vec();
    zeros.push("--zero_buffers");
    let c = codes(&common::run_json(&fs.mnt, &zeros));
    assert!(c.contains(&"compression".to_string()), "{c:?}");
    // The default data does not compress: no warning.
    let c = codes(&common::run_json(&fs.mnt, &job));
    assert!(!c.contains(&"compression".to_string()), "{c:?}");
}

#[test]
fn reads_of_a_never_written_file_are_sparse() {
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("hole")).unwrap();
    f.set_len(8 << 20).unwrap();
    drop(f);
    let out = common::iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--name=r",
            "--filename=hole",
            "--rw=read",
            "--bs=1m",
            "--size=8m",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(iolab_report::WARNING_PREFIX) && l.ends_with("(sparse-reads)"))
        .unwrap_or_else(|| panic!("no sparse-reads line:\n{text}"));
    assert!(line.contains("100% of the range read in `hole`"), "{line}");
}

#[test]
fn a_queue_depth_a_sync_engine_cannot_reach_is_in_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let v = common::run_json(
        dir.path(),
        &[
            "--name=q",
            "--ioengine=psync",
            "--iodepth=16",
            "--size=1m",
            "--filename=f",
        ],
    );
    assert!(codes(&v).contains(&"queue-depth-not-reached".to_string()));
}

#[test]
fn a_clean_direct_random_read_raises_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = common::LoopFs::new(dir.path(), "ext4", 256, "") else {
        return;
    };
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=c",
            "--filename=f",
            "--size=64m",
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--runtime=3",
            "--time_based",
            "--rate_iops=2000",
        ],
    );
    assert_eq!(codes(&v), Vec::<String>::new());
    // A one-second job is too short for its samples to mean much.
    let v = common::run_json(
        &fs.mnt,
        &[
            "--name=s",
            "--filename=f",
            "--size=64m",
            "--rw=randread",
            "--direct=1",
            "--runtime=1",
            "--time_based",
        ],
    );
    assert!(
        codes(&v).contains(&"short-run".to_string()),
        "{:?}",
        codes(&v)
    );
}
