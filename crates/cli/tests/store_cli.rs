//! The commands that read the results database back: history, show,
//! export and diff, on databases the tests fill through the store's API,
//! each in a temporary directory given with `--db`.

use std::path::PathBuf;

use assert_cmd::Command;
use iolab_report::{render, Format, RenderOpts};
use iolab_stats::{JobResult, RunResult};
use iolab_store::{Kind, Metric, Provenance, Record, Store};
use predicates::prelude::*;
use serde_json::Value;

fn iolab() -> Command {
    let mut c = Command::cargo_bin("iolab").expect("the iolab binary is built");
    // Never the user's database, even when a test forgets --db.
    c.env("IOLAB_DB", "/nonexistent/iolab-store-cli-tests.db");
    c
}

/// A run result: one job writing, with latencies and bandwidth windows
/// around `mbps` MB/s.
fn run_result(name: &str, mbps: u64, seed: u64) -> RunResult {
    let mut j = JobResult {
        name: name.into(),
        clones: 1,
        runtime_ns: 10_000_000_000,
        ..JobResult::default()
    };
    let d = &mut j.dirs[1];
    d.io_bytes = mbps * 10_000_000;
    d.total_ios = d.io_bytes / 4096;
    d.runtime_ns = 10_000_000_000;
    let mut x = seed;
    for _ in 0..20 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let jitter = (x >> 33) % 21; // 0..=20, +-1% of 1000 KiB/s units
        let kib = mbps * 1_000_000 / 1024;
        d.bw_samples.record(kib * (990 + jitter) / 1000);
        d.iops_samples.record(kib / 4 * (990 + jitter) / 1000);
    }
    for k in 0..1000u64 {
        d.clat.record(20_000 + (k * 7919 + seed) % 5000);
    }
    RunResult {
        timestamp: 1_763_800_000,
        timestamp_ms: 1_763_800_000_000,
        jobs: vec![j],
        ..RunResult::default()
    }
}

fn provenance(fs: &str, target: &str) -> Provenance {
    Provenance {
        time: "2026-11-20T10:00:00Z".into(),
        host: "bench1".into(),
        kernel: "6.1.0".into(),
        cpu_model: "Test CPU".into(),
        cpu_count: 4,
        memory_bytes: 8 << 30,
        iolab_version: "0.1.0".into(),
        target: target.into(),
        fs_type: fs.into(),
        mount_options: "rw,relatime".into(),
        mount_source: "/dev/sdb1".into(),
        block_device: "sdb".into(),
        device_model: "Disk, Model \"X\"".into(),
        rotational: Some(false),
        scheduler: "none".into(),
        device_size_bytes: Some(500_000_000_000),
        ..Provenance::default()
    }
}

fn record(kind: Kind, minute: i64, fs: &str, target: &str, tags: &[&str]) -> Record {
    Record {
        kind,
        time: iolab_store::time::format_rfc3339(1_763_800_000 + minute * 60),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        provenance: provenance(fs, target),
        job_text: String::new(),
        command_line: format!("iolab {kind} {target}"),
        target: target.into(),
        result_json: r#"{"opaque": [1, 2, 3]}"#.into(),
        metrics: Vec::new(),
        warnings: Vec::new(),
        repeat: None,
    }
}

struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Db {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        Db { _dir: dir, path }
    }

    fn insert(&self, r: &Record) -> i64 {
        Store::open(&self.path).unwrap().insert(r).unwrap()
    }

    fn arg(&self) -> String {
        format!("--db={}", self.path.display())
    }
}

fn stdout(c: &mut Command) -> String {
    let out = c.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

/// The ids in the first column of a text table (after its header).
fn ids(table: &str) -> Vec<i64> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Three results: a run on ext4, a quick suite on xfs, a meta pass.
fn three(db: &Db) -> [i64; 3] {
    let mut run = record(Kind::Run, 0, "ext4", "/mnt/ssd/a", &["baseline"]);
    run.result_json = serde_json::to_string(&run_result("w", 500, 1)).unwrap();
    run.metrics = vec![Metric::new("w write MB/s", 500.0, "MB/s")];
    let mut quick = record(Kind::Quick, 60, "xfs", "/mnt/hdd/b", &["nightly", "x,y"]);
    quick.metrics = vec![
        Metric::new("SEQ1M Q8T1 read MB/s", 180.5, "MB/s"),
        Metric::new("RND4K Q1T1 read IOPS", 95.0, "IOPS"),
    ];
    quick.result_json = "{}".into();
    let meta = record(Kind::Meta, 120, "ext4", "/mnt/hdd/c", &["nightly"]);
    [db.insert(&run), db.insert(&quick), db.insert(&meta)]
}

#[test]
fn history_lists_newest_first_and_filters() {
    let db = Db::new();
    let [run, quick, meta] = three(&db);
    let all = stdout(iolab().args(["history", &db.arg()]));
    assert_eq!(ids(&all), [meta, quick, run], "{all}");
    assert!(all.lines().next().unwrap().starts_with("ID"), "{all}");
    // The quick headline, each figure with its unit once.
    assert!(all.contains("SEQ1M Q8T1 read 180.5 MB/s"), "{all}");
    assert!(!all.contains("MB/s 180.5"), "{all}");
    let kind = stdout(iolab().args(["history", &db.arg(), "--kind", "quick"]));
    assert_eq!(ids(&kind), [quick]);
    let fs = stdout(iolab().args(["history", &db.arg(), "--fs", "ext4"]));
    assert_eq!(ids(&fs), [meta, run]);
    let tag = stdout(iolab().args(["history", &db.arg(), "--tag", "nightly"]));
    assert_eq!(ids(&tag), [meta, quick]);
    let target = stdout(iolab().args(["history", &db.arg(), "--target", "hdd/c"]));
    assert_eq!(ids(&target), [meta]);
    let since = stdout(iolab().args(["history", &db.arg(), "--since", "2025-11-22T08:27:30Z"]));
    // Records are at 08:26:40, 08:27:40 and 08:28:40 UTC.
    assert_eq!(ids(&since), [meta, quick], "{since}");
    let json: Value = serde_json::from_str(&stdout(iolab().args([
        "history",
        &db.arg(),
        "--output-format",
        "json",
    ])))
    .unwrap();
    let json_ids: Vec<i64> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert_eq!(json_ids, [meta, quick, run]);
    assert_eq!(json[1]["tags"][1], "x,y");
    let csv = stdout(iolab().args(["history", &db.arg(), "--output-format", "csv"]));
    assert!(csv.contains(",\"nightly,x,y\","), "{csv}");
}

#[test]
fn history_refuses_bad_filters_and_reads_nothing_that_is_missing() {
    let db = Db::new();
    iolab()
        .args(["history", &db.arg(), "--kind", "bench"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("'bench'"));
    iolab()
        .args(["history", &db.arg(), "--since", "someday"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--since"));
    let out = stdout(iolab().args(["history", &db.arg()]));
    assert!(out.starts_with("no stored results"), "{out}");
    assert!(!db.path.exists(), "reading created the database");
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let bytes = b"these are my notes, not a database\n".repeat(20);
    std::fs::write(&path, &bytes).unwrap();
    // Exit 2 as for every command: it cannot run as given, and nothing
    // was written.
    for cmd in [
        vec!["history"],
        vec!["show", "1"],
        vec!["export"],
        vec!["diff", "1", "2"],
    ] {
        iolab()
            .args(&cmd)
            .arg(format!("--db={}", path.display()))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(path.display().to_string()))
            .stderr(predicate::str::contains("not an iolab results database"));
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn history_says_when_no_result_matches_the_filters() {
    let db = Db::new();
    three(&db);
    let out = stdout(iolab().args(["history", &db.arg(), "--fs", "btrfs"]));
    assert_eq!(
        out,
        format!(
            "no stored result matches the filters (3 results in {})\n",
            db.path.display()
        )
    );
}

#[test]
fn an_output_file_that_cannot_be_written_is_refused_before_reading() {
    let db = Db::new();
    let [run, quick, _] = three(&db);
    let (a, b) = (run.to_string(), quick.to_string());
    for cmd in [
        vec!["history"],
        vec!["show", a.as_str()],
        vec!["export"],
        vec!["diff", a.as_str(), b.as_str()],
    ] {
        iolab()
            .args(&cmd)
            .arg(db.arg())
            .args(["--output", "/nonexistent-iolab/out.txt"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "--output `/nonexistent-iolab/out.txt`: the directory `/nonexistent-iolab` does not exist",
            ));
    }
}

/// Runs `args` with standard output (and, with `both`, standard error)
/// going into a pipe whose reader is gone before iolab has started.
fn into_closed_pipe(args: &[&str], both: bool) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let mut c = std::process::Command::new("sh");
    c.arg("-c")
        .arg(if both {
            "exec \"$0\" \"$@\" 2>&1"
        } else {
            "exec \"$0\" \"$@\""
        })
        .arg(bin)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    let db = Db::new();
    let [run, _, _] = three(&db);
    let a = run.to_string();
    let arg = db.arg();
    for cmd in [
        vec!["show", a.as_str(), arg.as_str()],
        vec!["history", arg.as_str()],
        vec!["export", arg.as_str()],
        vec!["diff", a.as_str(), a.as_str(), arg.as_str()],
        vec!["run", "--cmdhelp"],
        vec!["sweep", "--help"],
        vec!["compare", "--list-suites"],
    ] {
        for both in [false, true] {
            let out = into_closed_pipe(&cmd, both);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{cmd:?} (stderr too: {both}): {out:?}"
            );
            assert!(out.stderr.is_empty(), "{cmd:?}: {out:?}");
        }
    }
}

#[test]
fn diff_as_csv_is_only_csv() {
    let db = Db::new();
    let put = |mbps, seed, minute| {
        let mut r = record(Kind::Run, minute, "ext4", "/mnt/ssd", &[]);
        r.result_json = serde_json::to_string(&run_result("w", mbps, seed)).unwrap();
        db.insert(&r)
    };
    let (a, b) = (put(500, 1, 0), put(600, 2, 1));
    let csv = stdout(iolab().args([
        "diff",
        &a.to_string(),
        &b.to_string(),
        &db.arg(),
        "--output-format",
        "csv",
    ]));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "METRIC,UNIT,A,B,B/A,VERDICT", "{csv}");
    assert_eq!(
        lines.len(),
        1 + 4,
        "a header and one line per metric: {csv}"
    );
    // Every line has the header's fields (the verdicts hold commas, so
    // they are quoted).
    let fields = |l: &str| {
        let mut n = 1;
        let mut quoted = false;
        for c in l.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => n += 1,
                _ => {}
            }
        }
        n
    };
    for l in &lines {
        assert_eq!(fields(l), 6, "{l}");
    }
    assert!(
        lines[1].starts_with("w write MB/s,MB/s,500,600,x1.200,"),
        "{csv}"
    );
}

#[test]
fn show_rerenders_a_run_in_fio_formats() {
    let db = Db::new();
    let result = run_result("seqwrite", 300, 7);
    let mut rec = record(Kind::Run, 0, "ext4", "/mnt/ssd/a", &["t1"]);
    rec.result_json = serde_json::to_string(&result).unwrap();
    let id = db.insert(&rec);
    // The JSON says where it was measured, as the run printed it.
    let opts = RenderOpts {
        provenance: serde_json::to_value(&rec.provenance).ok(),
        ..RenderOpts::default()
    };
    for (name, format) in [
        ("json", Format::Json),
        ("json+", Format::JsonPlus),
        ("terse", Format::Terse),
    ] {
        let out =
            stdout(iolab().args(["show", &id.to_string(), &db.arg(), "--output-format", name]));
        assert_eq!(out, render(&result, &opts, format), "{name}");
    }
    let normal = stdout(iolab().args(["show", &id.to_string(), &db.arg()]));
    assert!(
        normal.starts_with(&format!("Result {id}: run at ")),
        "{normal}"
    );
    assert!(normal.contains("ext4 on /dev/sdb1"), "{normal}");
    // What the run printed: the lines before the jobs started, then the
    // report.
    assert!(
        normal.ends_with(
            &(iolab_report::render_preamble(&result.jobs, &opts)
                + &render(&result, &opts, Format::Normal))
        ),
        "{normal}"
    );
    let record: Value = serde_json::from_str(&stdout(iolab().args([
        "show",
        &id.to_string(),
        &db.arg(),
        "--output-format",
        "record",
    ])))
    .unwrap();
    assert_eq!(record["provenance"]["block_device"], "sdb");
    assert_eq!(record["result"]["jobs"][0]["name"], "seqwrite");
    // A run's table (one row per job and direction) in CSV.
    let csv = stdout(iolab().args(["show", &id.to_string(), &db.arg(), "--output-format", "csv"]));
    assert!(csv.starts_with("job,dir,MB/s,IOPS,"), "{csv}");
    assert!(csv.contains("\nseqwrite,write,"), "{csv}");
    iolab()
        .args(["show", "999", &db.arg()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no result 999"));
}

#[test]
fn show_names_the_virtual_machine_a_result_was_measured_in() {
    let db = Db::new();
    let mut rec = record(Kind::Run, 0, "ext4", "/mnt/ssd/a", &[]);
    rec.result_json = serde_json::to_string(&run_result("seqwrite", 300, 7)).unwrap();
    rec.provenance.hypervisor = Some(iolab_stats::Virt {
        name: "QEMU".into(),
        emulated: true,
    });
    let vm = db.insert(&rec);
    rec.provenance.hypervisor = None;
    let bare = db.insert(&rec);
    let normal = stdout(iolab().args(["show", &vm.to_string(), &db.arg()]));
    assert!(
        normal.contains("\n  virtual machine QEMU, emulated\n"),
        "{normal}"
    );
    let record: Value = serde_json::from_str(&stdout(iolab().args([
        "show",
        &vm.to_string(),
        &db.arg(),
        "--output-format",
        "record",
    ])))
    .unwrap();
    assert_eq!(record["provenance"]["hypervisor"]["name"], "QEMU");
    assert_eq!(record["provenance"]["hypervisor"]["emulated"], true);
    let normal = stdout(iolab().args(["show", &bare.to_string(), &db.arg()]));
    assert!(!normal.contains("virtual machine"), "{normal}");
}

#[test]
fn show_prints_quick_compare_and_sweep_results_as_their_tables() {
    let db = Db::new();
    let q = iolab_stats::quick::QuickResult {
        dir: "/mnt/ssd".into(),
        fs_type: "ext4".into(),
        device: "sdb".into(),
        engine: "io_uring".into(),
        direct: true,
        file_bytes: 1 << 30,
        test_ms: 5000,
        tests: vec![iolab_stats::quick::QuickTest {
            name: "SEQ1M Q8T1".into(),
            op: "read".into(),
            bw_bytes: 512e6,
            iops: 488.3,
            p50_ns: 15_000_000,
            p99_ns: 30_000_000,
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut rec = record(Kind::Quick, 0, "ext4", "/mnt/ssd", &[]);
    rec.result_json = serde_json::to_string(&q).unwrap();
    let id = db.insert(&rec);
    let out = stdout(iolab().args(["show", &id.to_string(), &db.arg()]));
    let table = iolab_report::quick::render_quick(&q, iolab_report::export::DocFormat::Text);
    assert!(out.ends_with(&table), "{out}");
    let md = stdout(iolab().args([
        "show",
        &id.to_string(),
        &db.arg(),
        "--output-format",
        "markdown",
    ]));
    assert_eq!(
        md,
        iolab_report::quick::render_quick(&q, iolab_report::export::DocFormat::Markdown)
    );

    let c = iolab_stats::Comparison::default();
    let mut rec = record(Kind::Compare, 1, "", "", &[]);
    rec.result_json = serde_json::to_string(&c).unwrap();
    let id = db.insert(&rec);
    let out = stdout(iolab().args(["show", &id.to_string(), &db.arg(), "--output-format", "csv"]));
    assert_eq!(
        out,
        iolab_report::compare::render_comparison(&c, iolab_report::export::DocFormat::Csv)
    );
    let w = iolab_stats::sweep::SweepResult {
        repeat: 3,
        ..Default::default()
    };
    let mut rec = record(Kind::Sweep, 2, "ext4", "/mnt/ssd", &[]);
    rec.result_json = serde_json::to_string(&w).unwrap();
    let id = db.insert(&rec);
    let out = stdout(iolab().args([
        "show",
        &id.to_string(),
        &db.arg(),
        "--output-format",
        "json",
    ]));
    // The sweep's JSON as the command printed it: its data and where it
    // was measured.
    let mut got: Value = serde_json::from_str(&out).unwrap();
    let prov = got.as_object_mut().unwrap().remove("provenance").unwrap();
    assert_eq!(prov["target"], "/mnt/ssd", "{out}");
    let want: Value = serde_json::from_str(&iolab_report::sweep::render_sweep(
        &w,
        iolab_report::export::DocFormat::Json,
    ))
    .unwrap();
    assert_eq!(got, want);
}

#[test]
fn export_in_three_formats() {
    let db = Db::new();
    let [run, quick, meta] = three(&db);
    let json: Value = serde_json::from_str(&stdout(iolab().args([
        "export",
        &db.arg(),
        "--format",
        "json",
    ])))
    .unwrap();
    let arr = json.as_array().unwrap();
    let got: Vec<i64> = arr.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(got, [run, quick, meta], "oldest first");
    assert_eq!(
        arr[0]["result"]["jobs"][0]["name"], "w",
        "the result is JSON, not a string"
    );
    assert_eq!(arr[1]["provenance"]["fs_type"], "xfs");
    assert_eq!(arr[1]["metrics"][1]["name"], "RND4K Q1T1 read IOPS");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.csv");
    iolab()
        .args([
            "export",
            &db.arg(),
            "--format",
            "csv",
            "--kind",
            "quick",
            "--output",
        ])
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    let csv = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("id,time,kind,tags,host"), "{csv}");
    assert_eq!(lines.len(), 3, "one line per metric: {csv}");
    assert!(
        lines[1].contains(",SEQ1M Q8T1 read MB/s,180.5,MB/s"),
        "{csv}"
    );
    assert!(
        lines[1].contains("\"Disk, Model \"\"X\"\"\""),
        "quoted: {csv}"
    );

    let md = stdout(iolab().args([
        "export",
        &db.arg(),
        "--output-format",
        "markdown",
        "--fs",
        "ext4",
    ]));
    assert!(md.starts_with("| id | time | kind |"), "{md}");
    assert_eq!(
        md.lines().count(),
        2 + 2,
        "header, rule, run metric, meta row: {md}"
    );
    iolab()
        .args(["export", &db.arg(), "--format", "xml"])
        .assert()
        .code(2);
}

/// `n` repeats around `mean` with 3% noise, seeded (SplitMix64 draws,
/// twelve uniforms summed for a near-normal).
fn repeats(n: usize, mean: f64, seed: u64) -> Vec<f64> {
    let mut state = seed;
    let mut uniform = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let normal: f64 = (0..12).map(|_| uniform()).sum::<f64>() - 6.0;
            mean * (1.0 + 0.03 * normal)
        })
        .collect()
}

fn repeated(db: &Db, minute: i64, mean: f64, seed: u64) -> i64 {
    let mut r = record(Kind::Quick, minute, "ext4", "/mnt/ssd", &[]);
    let s = repeats(8, mean, seed);
    let median = iolab_stats::Summary::of(&s).unwrap().median;
    r.metrics = vec![Metric::new("SEQ1M Q8T1 read MB/s", median, "MB/s").with_samples(s)];
    db.insert(&r)
}

#[test]
fn diff_of_repeats_tells_a_real_difference_from_noise() {
    let db = Db::new();
    let a = repeated(&db, 0, 500.0, 5);
    let b = repeated(&db, 1, 600.0, 22);
    let c = repeated(&db, 2, 500.0, 33);
    let real = stdout(iolab().args(["diff", &a.to_string(), &b.to_string(), &db.arg()]));
    let row = real.lines().find(|l| l.starts_with("SEQ1M")).unwrap();
    assert!(row.contains("faster (p"), "{real}");
    assert!(!row.contains('≈'), "{real}");
    assert!(row.contains("8 vs 8 runs"), "{real}");
    let ratio: f64 = row
        .split_whitespace()
        .find_map(|w| w.strip_prefix('x')?.parse().ok())
        .unwrap();
    assert!((ratio - 1.2).abs() < 0.05, "ratio about 1.2: {row}");
    assert!(
        real.contains("A, B: the geometric mean of each side's runs"),
        "{real}"
    );
    let noise = stdout(iolab().args(["diff", &a.to_string(), &c.to_string(), &db.arg()]));
    let row = noise.lines().find(|l| l.starts_with("SEQ1M")).unwrap();
    assert!(row.contains("≈ cannot be told apart"), "{noise}");
    let mw = stdout(iolab().args([
        "diff",
        &a.to_string(),
        &b.to_string(),
        &db.arg(),
        "--method",
        "mann-whitney",
        "--output-format",
        "json",
    ]));
    let v: Value = serde_json::from_str(&mw).unwrap();
    let m = &v["metrics"][0];
    assert_eq!(v["statistic"], "median");
    assert_eq!(m["verdict"]["verdict"], "larger", "{mw}");
    assert!(m["verdict"]["p"].as_f64().unwrap() < 0.05, "{mw}");
    assert_eq!(v["a"]["id"], a);
}

#[test]
fn diff_of_single_runs_cannot_tell() {
    let db = Db::new();
    let put = |mbps, seed, minute| {
        let mut r = record(Kind::Run, minute, "ext4", "/mnt/ssd", &[]);
        r.result_json = serde_json::to_string(&run_result("w", mbps, seed)).unwrap();
        db.insert(&r)
    };
    let a = put(500, 1, 0);
    let b = put(600, 2, 1);
    // Twenty tight bandwidth windows a side: still one run each.
    let out = stdout(iolab().args(["diff", &a.to_string(), &b.to_string(), &db.arg()]));
    let bw = out.lines().find(|l| l.starts_with("w write MB/s")).unwrap();
    assert!(
        bw.contains("one run per side: cannot tell; use --repeat"),
        "{out}"
    );
    assert!(
        !out.contains("faster") || out.contains("Faster/slower"),
        "{out}"
    );
    assert!(bw.contains("x1.200"), "{out}");
    iolab()
        .args(["diff", &a.to_string(), "4242", &db.arg()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no result 4242"));
}
