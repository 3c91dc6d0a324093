//! Verdicts a user can trust: compare's best marks and ratios carry the
//! verdict of the statistics (no winner out of noise, nothing decided from
//! one run a side), and diff words its verdicts as faster or slower, says
//! which statistic it tested, corrects for the metrics tested together,
//! says what differs between the results besides the numbers, and refuses
//! results with nothing in common. Stored results are planted through the
//! store's API in a temporary database; the compare runs measure
//! temporary directories.

mod common;

use std::path::{Path, PathBuf};

use common::iolab;
use iolab_stats::{Better, Comparison, JobResult, Metric as Row, RunResult, TargetColumn};
use iolab_store::{Kind, Metric, Provenance, Record, Store};
use predicates::prelude::*;

struct Db {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Db {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        Db { dir, path }
    }

    fn insert(&self, r: &Record) -> i64 {
        Store::open(&self.path).unwrap().insert(r).unwrap()
    }

    fn arg(&self) -> String {
        format!("--db={}", self.path.display())
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn stdout(args: &[&str]) -> String {
    let out = iolab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn provenance(kernel: &str, fs: &str, options: &str) -> Provenance {
    Provenance {
        host: "bench1".into(),
        kernel: kernel.into(),
        iolab_version: "0.1.0".into(),
        target: "/mnt/t".into(),
        fs_type: fs.into(),
        mount_options: options.into(),
        block_device: "sdb".into(),
        ..Provenance::default()
    }
}

fn record(kind: Kind, job: &str, prov: Provenance, metrics: Vec<Metric>) -> Record {
    Record {
        job_text: job.into(),
        provenance: prov,
        metrics,
        target: "/mnt/t".into(),
        ..Record::new(kind)
    }
}

/// The four metrics of a job `w` over repeated runs: MB/s and IOPS
/// scaled by `speed`, latencies by `lat`, each run a little apart.
fn repeated(speed: f64, lat: f64) -> Vec<Metric> {
    let runs = |v: f64| vec![v * 0.98, v, v * 1.02];
    let m = |name: &str, v: f64, unit: &str| Metric::new(name, v, unit).with_samples(runs(v));
    vec![
        m("w write MB/s", 500.0 * speed, "MB/s"),
        m("w write IOPS", 4000.0 * speed, "IOPS"),
        m("w write clat p50", 90.0 * lat, "us"),
        m("w write clat p99", 400.0 * lat, "us"),
    ]
}

const JOB: &str = "[w]\nrw=write\nbs=128k\nsize=1g\n";

#[test]
fn diff_words_verdicts_by_direction_and_names_the_statistic() {
    let db = Db::new();
    let prov = || provenance("6.1.0", "ext4", "rw,relatime");
    let a = db.insert(&record(Kind::Run, JOB, prov(), repeated(1.0, 1.0)));
    // Faster writes, slower tail latency, the same median latency.
    let mut b_metrics = repeated(1.5, 1.0);
    b_metrics[3] =
        Metric::new("w write clat p99", 800.0, "us").with_samples(vec![784.0, 800.0, 816.0]);
    let b = db.insert(&record(Kind::Run, JOB, prov(), b_metrics));
    let out = stdout(&["diff", &a.to_string(), &b.to_string(), &db.arg()]);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in\n{out}"))
            .to_string()
    };
    assert!(row("w write MB/s ").contains("faster (p"), "{out}");
    assert!(row("w write IOPS ").contains("faster (p"), "{out}");
    assert!(row("w write clat p99 ").contains("slower (p"), "{out}");
    assert!(
        row("w write clat p50 ").contains("≈ cannot be told apart"),
        "{out}"
    );
    assert!(row("w write MB/s ").contains("x1.500 ["), "{out}");
    assert!(
        out.contains("A, B: the geometric mean of each side's runs, the statistic tested"),
        "{out}"
    );
    assert!(out.contains("Holm-corrected over the 4 metric(s)"), "{out}");
    assert!(
        out.contains("Besides the numbers: nothing differs"),
        "{out}"
    );
    assert!(!out.contains("different jobs"), "{out}");
}

#[test]
fn diff_says_what_differs_besides_the_numbers_and_flags_other_jobs() {
    let db = Db::new();
    let a = db.insert(&record(
        Kind::Run,
        JOB,
        provenance("6.1.0", "ext4", "rw,relatime"),
        repeated(1.0, 1.0),
    ));
    let b = db.insert(&record(
        Kind::Run,
        "[w]\nrw=write\nbs=4k\nsize=1g\n",
        provenance("6.5.2", "xfs", "rw,noatime"),
        repeated(1.0, 1.0),
    ));
    let out = stdout(&["diff", &a.to_string(), &b.to_string(), &db.arg()]);
    assert!(out.contains("WARNING: A and B ran different jobs"), "{out}");
    let row = |what: &str| {
        out.lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no {what} in\n{out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("job "), "job line 3: bs=128k line 3: bs=4k", "{out}");
    assert_eq!(row("kernel "), "kernel 6.1.0 6.5.2", "{out}");
    assert_eq!(row("filesystem "), "filesystem ext4 xfs", "{out}");
    assert_eq!(
        row("mount options "),
        "mount options rw,relatime rw,noatime",
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with("host ")), "{out}");
    let json = stdout(&[
        "diff",
        &a.to_string(),
        &b.to_string(),
        &db.arg(),
        "--output-format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["different_jobs"], true);
    assert_eq!(v["statistic"], "geometric mean");
    let whats: Vec<&str> = v["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, ["job", "kernel", "filesystem", "mount options"]);
}

#[test]
fn diff_names_the_engines_of_two_runs() {
    let db = Db::new();
    let put = |engine: &str| {
        let mut j = JobResult {
            name: "w".into(),
            ..JobResult::default()
        };
        j.setup.ioengine = engine.into();
        let d = &mut j.dirs[1];
        d.io_bytes = 1 << 30;
        d.total_ios = 1 << 18;
        d.runtime_ns = 1_000_000_000;
        d.clat.record(20_000);
        let r = RunResult {
            jobs: vec![j],
            ..RunResult::default()
        };
        let mut rec = Record::for_run(&r).unwrap();
        rec.job_text = format!("[w]\nioengine={engine}\n");
        db.insert(&rec)
    };
    let (a, b) = (put("psync"), put("io_uring"));
    let out = stdout(&["diff", &a.to_string(), &b.to_string(), &db.arg()]);
    let engine = out
        .lines()
        .find(|l| l.starts_with("engine "))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        engine.split_whitespace().collect::<Vec<_>>(),
        ["engine", "psync", "io_uring"]
    );
    // Single runs: the ratio, and no verdict.
    let bw = out.lines().find(|l| l.starts_with("w write MB/s")).unwrap();
    assert!(bw.contains("x1.000"), "{out}");
    assert!(
        bw.ends_with("one run per side: cannot tell; use --repeat"),
        "{out}"
    );
    assert!(
        !out.contains("faster (") && !out.contains("slower ("),
        "{out}"
    );
}

#[test]
fn diff_refuses_results_with_no_metric_in_common() {
    let db = Db::new();
    let prov = || provenance("6.1.0", "ext4", "rw");
    let a = db.insert(&record(Kind::Run, JOB, prov(), repeated(1.0, 1.0)));
    let q = db.insert(&record(
        Kind::Quick,
        "",
        prov(),
        vec![Metric::new("SEQ1M Q8T1 read MB/s", 180.0, "MB/s")],
    ));
    let out_file = db.dir.path().join("diff.txt");
    iolab()
        .args([
            "diff",
            &a.to_string(),
            &q.to_string(),
            &db.arg(),
            "--output",
        ])
        .arg(&out_file)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "results {a} (run) and {q} (quick) have no metric in common: nothing to compare"
        )));
    assert!(!out_file.exists());
}

#[test]
fn diff_of_quick_suites_never_decides_from_one_run() {
    let db = Db::new();
    let prov = || provenance("6.1.0", "ext4", "rw");
    let put = |iops: f64| {
        db.insert(&record(
            Kind::Quick,
            "",
            prov(),
            vec![
                Metric::new("RND4K Q1T1 read IOPS", iops, "IOPS").with_windows(
                    30,
                    iops,
                    iops * 0.01,
                ),
            ],
        ))
    };
    let (a, b) = (put(10_000.0), put(12_000.0));
    let out = stdout(&["diff", &a.to_string(), &b.to_string(), &db.arg()]);
    let row = out.lines().find(|l| l.starts_with("RND4K")).unwrap();
    assert!(row.contains("x1.200"), "{out}");
    assert!(
        row.ends_with("one run per side: cannot tell; use --repeat"),
        "{out}"
    );
    assert!(out.contains("store results of --repeat N runs"), "{out}");
}

#[test]
fn diff_with_a_rank_test_says_how_many_runs_it_needs() {
    let db = Db::new();
    let prov = || provenance("6.1.0", "ext4", "rw");
    let a = db.insert(&record(Kind::Run, JOB, prov(), repeated(1.0, 1.0)));
    let b = db.insert(&record(Kind::Run, JOB, prov(), repeated(3.0, 0.3)));
    let out = stdout(&[
        "diff",
        &a.to_string(),
        &b.to_string(),
        &db.arg(),
        "--method",
        "mann-whitney",
    ]);
    // 3 runs against 3 can never give p < 0.05 / 4: the four rows say so.
    assert_eq!(
        out.matches("too few runs to tell (3 vs 3 runs; needs 5 a side)")
            .count(),
        4,
        "{out}"
    );
    assert!(
        out.contains("A, B: the median of each side's runs"),
        "{out}"
    );
    assert!(!out.contains("within noise"), "{out}");
    iolab()
        .args(["diff", &a.to_string(), &b.to_string(), &db.arg()])
        .args(["--method", "kolmogorov"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--method: unknown test 'kolmogorov' (expected welch or mann-whitney)",
        ));
}

/// A stored A/A comparison: two directories of one filesystem, two runs
/// each, as noisy as the case that once crowned `a` with b at x0.50.
fn aa_comparison() -> Comparison {
    let mut c = Comparison {
        baseline: Some("a".into()),
        repeat: 2,
        ..Default::default()
    };
    let rows = [
        (
            "seqwrite-1m.write.mb_s",
            "seqwrite-1m write",
            "MB/s",
            Better::Higher,
        ),
        (
            "seqwrite-1m.write.iops",
            "seqwrite-1m write",
            "IOPS",
            Better::Higher,
        ),
        (
            "seqwrite-1m.write.clat_p50_us",
            "seqwrite-1m write clat p50",
            "us",
            Better::Lower,
        ),
        (
            "seqwrite-1m.write.clat_p99_us",
            "seqwrite-1m write clat p99",
            "us",
            Better::Lower,
        ),
    ];
    let values = [
        (
            "a",
            [
                [400.0, 380.0],
                [400.0, 380.0],
                [900.0, 1000.0],
                [5000.0, 2600.0],
            ],
        ),
        (
            "b",
            [
                [150.0, 250.0],
                [150.0, 250.0],
                [1900.0, 1100.0],
                [6000.0, 9000.0],
            ],
        ),
    ];
    for (key, label, unit, better) in rows {
        c.add_metric(Row {
            key: key.into(),
            label: label.into(),
            unit: unit.into(),
            better,
        });
    }
    for (label, cells) in values {
        let mut t = TargetColumn {
            label: label.into(),
            ..Default::default()
        };
        for ((key, ..), runs) in rows.iter().zip(cells) {
            for v in runs {
                t.push(key, v);
            }
        }
        c.targets.push(t);
    }
    c
}

#[test]
fn an_aa_comparison_shows_no_best_and_approx_in_every_cell() {
    let db = Db::new();
    let c = aa_comparison();
    let mut rec = record(Kind::Compare, "", Provenance::default(), Vec::new());
    rec.result_json = serde_json::to_string(&c).unwrap();
    let id = db.insert(&rec);
    let out = stdout(&["show", &id.to_string(), &db.arg()]);
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("seqwrite-1m"))
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for l in &rows {
        assert!(!l.contains('*'), "a best mark out of noise: {l}");
        let last = l.split("  ").last().unwrap().trim();
        assert!(last.ends_with("≈ same"), "{l}");
    }
    // b's write speed is about half of a's, and still noise at 2 runs.
    assert!(rows[0].contains(" x0.50 ≈ same"), "{out}");
    assert!(out.contains("≈ same: cannot be told apart"), "{out}");
    assert!(out.contains("geometric mean of 2 run(s)"), "{out}");
    let csv = stdout(&["show", &id.to_string(), &db.arg(), "--output-format", "csv"]);
    assert!(
        csv.lines()
            .filter(|l| l.contains(",b,ok,"))
            .all(|l| l.contains(",≈ cannot be told apart,")),
        "{csv}"
    );
    assert!(
        !csv.lines()
            .any(|l| l.contains(",b,ok,") && l.contains(",1,")),
        "{csv}"
    );
}

fn job_file(dir: &Path) -> PathBuf {
    let job = dir.join("small.fio");
    std::fs::write(&job, "[small]\nrw=write\nbs=64k\nsize=512k\n").unwrap();
    job
}

#[test]
fn compare_of_single_runs_marks_no_best_and_cannot_tell() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let job = job_file(d.path());
    let out = iolab()
        .env("IOLAB_DB", d.path().join("results.db"))
        .args(["compare", "--repeat", "1", "--baseline", "a", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("a={}", a.display()))
        .arg("--target")
        .arg(format!("b={}", b.display()))
        .output()
        .unwrap();
    let table = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", text(&out.stderr));
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("small")).collect();
    assert!(rows.len() >= 2, "{table}");
    for l in &rows {
        assert!(!l.contains('*'), "{l}");
        let last = l.split("  ").last().unwrap().trim();
        assert!(
            last.split(' ').any(|w| w.starts_with('x')),
            "no ratio in {l}"
        );
        assert!(
            last.contains("cannot tell"),
            "one run each cannot tell: {l}"
        );
    }
    assert!(
        table.contains("one run each cannot tell a difference from noise: use --repeat"),
        "{table}"
    );
}

#[test]
fn compare_of_repeated_runs_gives_every_ratio_a_verdict() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let job = job_file(d.path());
    let out = iolab()
        .env("IOLAB_DB", d.path().join("results.db"))
        .args(["compare", "--repeat", "2", "--baseline", "a", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("a={}", a.display()))
        .arg("--target")
        .arg(format!("b={}", b.display()))
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["iolab compare"];
    assert_eq!(c["statistic"], "geometric mean");
    assert_eq!(c["method"], "Welch's t-test on log values");
    let metrics = c["metrics"].as_array().unwrap();
    assert!(!metrics.is_empty());
    for m in metrics {
        let b = &m["values"]["b"];
        // Two runs a side: a test, whatever it finds.
        let verdict = b["verdict"]["verdict"].as_str().unwrap();
        assert!(
            ["larger", "smaller", "same", "no-test"].contains(&verdict),
            "{m}"
        );
        if verdict != "no-test" {
            assert!(b["verdict"]["p"].as_f64().is_some(), "{m}");
            let (lo, hi) = (
                b["ratio_interval"][0].as_f64().unwrap(),
                b["ratio_interval"][1].as_f64().unwrap(),
            );
            let r = b["ratio"].as_f64().unwrap();
            assert!(lo <= r * (1.0 + 1e-9) && r <= hi * (1.0 + 1e-9), "{m}");
        }
        // A best mark only with a decided verdict.
        for t in ["a", "b"] {
            if m["values"][t]["best"] == true {
                assert!(["larger", "smaller"].contains(&verdict), "{m}");
            }
        }
    }
}
