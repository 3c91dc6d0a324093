//! `iolab run` keeps each result with its provenance: the full result,
//! the job text, the command line, the tags and the headline metrics; a
//! database that cannot be used is refused before the run and left as it
//! was; --no-store keeps nothing.

mod common;

use iolab_store::{Kind, Store};

const JOB: &[&str] = &[
    "--name=s",
    "--filename=data",
    "--size=1m",
    "--rw=randwrite",
    "--bs=4k",
];

#[test]
fn a_run_is_kept_with_its_provenance_and_result() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").join("results.db");
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .arg(format!("--db={}", db.display()))
        .args(["--tag=ssd", "--tag=baseline", "--output-format=json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = common::json_of(&out.stdout);

    let store = Store::open(&db).unwrap();
    let all = store.all().unwrap();
    assert_eq!(all.len(), 1);
    let rec = &all[0].record;
    assert_eq!(rec.kind, Kind::Run);
    assert_eq!(rec.tags, ["ssd", "baseline"]);
    assert!(rec.job_text.contains("[s]") && rec.job_text.contains("rw=randwrite"));
    assert!(
        rec.command_line.contains("--tag=ssd"),
        "{}",
        rec.command_line
    );
    let p = &rec.provenance;
    assert!(!p.host.is_empty() && !p.kernel.is_empty() && p.cpu_count > 0);
    assert!(p.memory_bytes > 0 && !p.fs_type.is_empty());
    assert_eq!(
        p.target,
        dir.path().canonicalize().unwrap().display().to_string()
    );
    // The stored result is the run's: the same bytes and I/Os as printed.
    let result = rec.run_result().unwrap();
    assert_eq!(result.jobs.len(), 1);
    let w = &result.jobs[0].dirs[1];
    assert_eq!(w.io_bytes, 1 << 20);
    assert_eq!(report["jobs"][0]["write"]["total_ios"], w.total_ios);
    let names: Vec<&str> = rec.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "s write MB/s",
            "s write IOPS",
            "s write clat p50",
            "s write clat p99"
        ]
    );
}

#[test]
fn a_bad_database_is_refused_before_the_run_and_no_store_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    std::fs::write(&db, b"not sqlite at all").unwrap();
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("notes.db"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), b"not sqlite at all");
    assert!(!dir.path().join("data").exists(), "nothing ran");

    let fresh = dir.path().join("fresh.db");
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .arg(format!("--db={}", fresh.display()))
        .arg("--no-store")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!fresh.exists());
}

#[test]
fn repeats_report_every_run_and_the_spread_and_keep_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .arg(format!("--db={}", db.display()))
        .args(["--repeat=3", "--output-format=json,normal"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for i in 1..=3 {
        assert!(text.contains(&format!("iolab: run {i} of 3")), "{text}");
    }
    assert!(text.contains("Repeats: 3 runs; "), "{text}");
    let summary = text
        .lines()
        .find(|l| l.contains("write  iops IOPS"))
        .unwrap();
    assert!(summary.contains('%'), "{summary}");
    // The JSON document: the summary and each run's fio JSON.
    let v = common::json_of(text[text.find("{\n  \"iolab\"").unwrap()..].as_bytes());
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    for r in v["runs"].as_array().unwrap() {
        assert_eq!(r["jobs"][0]["write"]["io_bytes"], 1 << 20);
    }
    let iops = v["iolab"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["values"].as_array().unwrap().len(), 3);
    // One stored record, its metrics carrying the three values.
    let all = Store::open(&db).unwrap().all().unwrap();
    assert_eq!(all.len(), 1);
    let m = all[0]
        .record
        .metrics
        .iter()
        .find(|m| m.name == "s write iops IOPS")
        .unwrap();
    assert_eq!(m.samples.as_ref().unwrap().len(), 3);

    let out = common::iolab()
        .current_dir(dir.path())
        .args(["run", "--repeat=0"])
        .args(JOB)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat=0"));
}

#[test]
fn meta_and_sweep_results_are_kept_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = common::iolab()
        .args(["meta"])
        .arg(&work)
        .args(["--files", "200", "--tag", "m"])
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::iolab()
        .current_dir(&work)
        .args([
            "sweep",
            "--name=s",
            "--filename=f",
            "--size=256k",
            "--rw=write",
        ])
        .args(["--bs", "4k..8k"])
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = Store::open(&db).unwrap().all().unwrap();
    let kinds: Vec<Kind> = all.iter().map(|s| s.record.kind).collect();
    assert_eq!(kinds, [Kind::Meta, Kind::Sweep]);
    assert_eq!(all[0].record.tags, ["m"]);
    let names: Vec<&str> = all[0]
        .record
        .metrics
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        names.contains(&"create ops/s") && names.contains(&"unlink p99"),
        "{names:?}"
    );
    let names: Vec<&str> = all[1]
        .record
        .metrics
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        names.contains(&"bs=4k rw=write MB/s") && names.contains(&"bs=8k rw=write IOPS"),
        "{names:?}"
    );
}
