//! A `RunResult` with real content survives JSON and back unchanged, and
//! its histograms are stored sparsely.

use iolab_stats::{CpuResult, DiskResult, GroupResult, JobResult, JobSetup, RunResult};

/// A job that did `ios` I/Os of `bs` bytes in direction `d`, with latencies
/// spread over several histogram groups.
fn job(name: &str, groupid: u32, d: usize, ios: u64, bs: u64, seed: u64) -> JobResult {
    let mut j = JobResult {
        name: name.to_string(),
        groupid,
        description: format!("{name} job"),
        options: vec![
            ("rw".into(), "randrw".into()),
            ("bs".into(), bs.to_string()),
        ],
        setup: JobSetup {
            rw: "randrw".into(),
            bs: [(bs, bs), (bs, bs * 2), (4096, 4096)],
            ioengine: "libaio".into(),
            iodepth: 8,
            percentile_list: vec![50.0, 99.5, 99.999],
            percentile_precision: 3,
            lat_percentiles: true,
            ..JobSetup::default()
        },
        pid: 4242 + seed as u32,
        runtime_ns: 2_000_000_000 + seed,
        elapsed_s: 3,
        cpu: CpuResult {
            user_ns: 12_345,
            system_ns: 67_890,
            run_delay_ns: 4_321,
            ctx: 11,
            majflt: 1,
            minflt: 300,
        },
        issued: [ios, ios / 3, 0],
        clones: 1,
        ..JobResult::default()
    };
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    for _ in 0..ios {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let ns = 500 + (x >> 40) % 5_000_000;
        let dir = &mut j.dirs[d];
        dir.slat.record(ns / 10);
        dir.clat.record(ns);
        dir.lat.record(ns + ns / 10);
        j.lat_buckets.record(ns);
        j.depth.level[3] += 1;
    }
    let dir = &mut j.dirs[d];
    dir.io_bytes = ios * bs;
    dir.total_ios = ios;
    dir.short_ios = 2;
    dir.runtime_ns = 1_999_999_937;
    for kib in [1000, 1200, 1100, 1333] {
        dir.bw_samples.record(kib + seed);
        dir.bw_series.push(kib + seed);
        dir.iops_samples.record(kib / 4);
    }
    j.sync.record(77_777);
    j.depth.submit[1] = ios;
    j.depth.complete[2] = ios;
    j
}

fn sample_run() -> RunResult {
    let jobs = vec![
        job("seq-read", 0, 0, 500, 131072, 1),
        job("rand-write", 0, 1, 800, 4096, 2),
        {
            let mut j = job("failing", 1, 0, 50, 4096, 3);
            j.error = 5;
            j.error_detail = "file /mnt/x offset 8192".into();
            j.unflushed_bytes = Some(3 << 20);
            j.verify_failure = Some(iolab_stats::VerifyFailure {
                file: "/mnt/x".into(),
                block_offset: 8192,
                block_len: 4096,
                first_bad_byte: None,
                bad_byte_range: Some((8204, 8256)),
                what: "bad header checksum".into(),
                expected: "crc32c 01020304".into(),
                found: "crc32c 0a0b0c0d".into(),
                failed_blocks: 2,
                dumped: vec!["x.8192.hdr_fail".into()],
            });
            j.total_err = 1;
            j.first_error = 5;
            j.first_error_text = "Input/output error".into();
            j
        },
    ];
    let groups = vec![
        GroupResult::from_jobs(0, jobs[..2].iter()),
        GroupResult::from_jobs(1, jobs[2..].iter()),
    ];
    RunResult {
        timestamp: 1_763_800_000,
        timestamp_ms: 1_763_800_000_123,
        jobs,
        groups,
        disks: vec![DiskResult {
            name: "nvme0n1".into(),
            read_ios: 550,
            write_ios: 800,
            read_merges: 3,
            write_merges: 4,
            read_ticks_ms: 1234,
            write_ticks_ms: 5678,
            read_bytes: 550 * 4096,
            write_bytes: 800 * 4096,
            in_queue_ms: 6912,
            util: 87.654321,
        }],
        interrupted: true,
        global_options: vec![("direct".into(), "1".into())],
        stats_off: vec![2],
        ranks: Some(iolab_stats::ranks::RanksSummary {
            nranks: 2,
            stonewall: true,
            phases: vec![iolab_stats::ranks::RankedPhase {
                wall_ns: 1_000_000_007,
                start_skew_ns: 1234,
            }],
            hosts: vec![iolab_stats::ranks::HostFigures {
                host: "node1".into(),
                ranks: vec![0, 1],
                jobs: Vec::new(),
            }],
            ..Default::default()
        }),
    }
}

#[test]
fn run_result_round_trips_through_json() {
    let run = sample_run();
    assert!(run.jobs[1].dirs[1].clat.hist.nonzero_bins().count() > 50);
    let json = serde_json::to_string(&run).unwrap();
    let back: RunResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
    // And once more, so that what was read writes the same text.
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

#[test]
fn histograms_are_stored_sparsely() {
    let run = sample_run();
    let v: serde_json::Value = serde_json::to_value(&run).unwrap();
    let clat = &v["jobs"][1]["dirs"][1]["clat"]["hist"];
    let pairs = clat.as_array().expect("a list of pairs");
    let want = run.jobs[1].dirs[1].clat.hist.nonzero_bins().count();
    assert_eq!(pairs.len(), want);
    let total: u64 = pairs.iter().map(|p| p[1].as_u64().unwrap()).sum();
    assert_eq!(total, 800);
    // An empty direction's histogram is an empty list, not 1856 zeros.
    assert_eq!(
        v["jobs"][1]["dirs"][2]["clat"]["hist"],
        serde_json::json!([])
    );
}

#[test]
fn missing_fields_take_their_defaults() {
    // A result stored before a field existed still reads back.
    let back: RunResult =
        serde_json::from_str(r#"{"timestamp": 5, "jobs": [{"name": "old"}]}"#).unwrap();
    assert_eq!(back.timestamp, 5);
    assert_eq!(back.jobs[0].name, "old");
    assert_eq!(back.jobs[0].setup, JobSetup::default());
    assert!(back.jobs[0].dirs[0].clat.hist.is_empty());
}
