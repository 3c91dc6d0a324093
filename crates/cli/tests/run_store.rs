//! `iolab run` keeps each result with its provenance: the full result,
//! the job text, the command line, the tags and the headline metrics; a
//! database that cannot be used is refused before the run and left as it
//! was; --no-store keeps nothing; a single run and a repeated one share
//! their metric names. `--repeat` reports every run, the medians with
//! their intervals and spreads, says what it did to the caches, and prints
//! one JSON document in fio's layout. Every kind of result, measured for
//! real, goes into the store and comes back equal, and a stored comparison
//! is shown again as its table.

mod common;

use iolab_testkit::{need, skip};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command as Proc, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iolab_store::{Kind, Record, Store};

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

/// The JSON document after the normal output of a repeated run.
fn repeat_json(text: &str) -> serde_json::Value {
    let at = text.find("{\n  \"fio version\"").expect("a JSON document");
    common::json_of(&text.as_bytes()[at..])
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
    // What was done to the caches, as it happened.
    let root = iolab_engine::host::euid() == 0;
    let caches = if root {
        "Repeats: 3 runs; caches dropped before each run (sync; echo 3 > /proc/sys/vm/drop_caches)"
    } else {
        "Repeats: 3 runs; not root: only the job files' cached pages were dropped"
    };
    assert!(text.contains(caches), "{text}");
    let summary = text
        .lines()
        .find(|l| l.contains("write  iops IOPS"))
        .unwrap();
    assert!(summary.contains('%'), "{summary}");
    // Three runs: the interval of the median is min - max, at 75%.
    assert!(summary.contains("(75%)"), "{summary}");
    // The JSON document: fio's layout at the top level (the median run),
    // the summary and each run's fio JSON under "iolab".
    let v = repeat_json(&text);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20);
    let runs = v["iolab"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        assert_eq!(r["jobs"][0]["write"]["io_bytes"], 1 << 20);
    }
    let top = v["iolab"]["repeat"]["top_level_run"].as_u64().unwrap() as usize;
    assert_eq!(
        v["jobs"],
        runs[top - 1]["jobs"],
        "the top level is that run"
    );
    let iops = v["iolab"]["repeat"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == "iops")
        .unwrap();
    assert_eq!(iops["values"].as_array().unwrap().len(), 3);
    let (lo, hi) = (&iops["median_ci"]["low"], &iops["median_ci"]["high"]);
    assert_eq!((lo, hi), (&iops["min"], &iops["max"]));
    // One stored record, its metrics carrying the three values.
    let all = Store::open(&db).unwrap().all().unwrap();
    assert_eq!(all.len(), 1);
    let m = all[0]
        .record
        .metrics
        .iter()
        .find(|m| m.name == "s write IOPS")
        .unwrap();
    assert_eq!(m.samples.as_ref().unwrap().len(), 3);

    let out = common::iolab()
        .current_dir(dir.path())
        .args(["run", "--repeat=0"])
        .args(JOB)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat `0`"));
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
    // `--rw=write` set the option at every point: the points are named by
    // their block size, and each metric carries its unit once.
    assert!(
        names.contains(&"bs=4k MB/s") && names.contains(&"bs=8k IOPS"),
        "{names:?}"
    );
    let p99 = all[1]
        .record
        .metrics
        .iter()
        .find(|m| m.name == "bs=4k p99")
        .unwrap();
    assert_eq!(p99.unit, "us");
}

#[test]
fn a_single_run_and_a_repeated_one_can_be_diffed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    for repeat in ["--repeat=1", "--repeat=2"] {
        let out = common::iolab()
            .current_dir(dir.path())
            .arg("run")
            .args(JOB)
            .arg(repeat)
            .arg(format!("--db={}", db.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let all = Store::open(&db).unwrap().all().unwrap();
    let names = |i: usize| -> Vec<String> {
        all[i]
            .record
            .metrics
            .iter()
            .map(|m| m.name.clone())
            .collect()
    };
    assert_eq!(names(0), names(1));
    let m = &all[1].record.metrics[0];
    assert_eq!(m.name, "s write MB/s");
    assert_eq!(m.samples.as_ref().map(Vec::len), Some(2));
    let out = common::iolab()
        .args(["diff", "1", "2", "--output-format", "json"])
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["metrics"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{v}");
    for r in rows {
        assert!(r["a"].is_number() && r["b"].is_number(), "unmatched: {r}");
    }
}

#[test]
fn an_output_file_that_cannot_be_written_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::iolab()
        .current_dir(dir.path())
        .arg("run")
        .args(JOB)
        .arg("--db=r.db")
        .arg("--output=/nonexistent-iolab/report.txt")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--output `/nonexistent-iolab/report.txt`: the directory"),
        "{err}"
    );
    assert!(
        common::entries(dir.path()).is_empty(),
        "{:?}",
        common::entries(dir.path())
    );
}

/// Files a result (as JSON) in a record of `kind` and reads it back.
fn stored_again(store: &mut Store, kind: Kind, json: String) -> String {
    let mut rec = Record::new(kind);
    rec.result_json = json;
    let id = store.insert(&rec).unwrap();
    let back = store.get(id).unwrap().unwrap();
    assert_eq!(back.record.kind, kind);
    back.record.result_json
}

/// A result of `kind` after a trip through the store.
macro_rules! round_trip {
    ($store:expr, $kind:expr, $result:expr) => {
        serde_json::from_str(&stored_again(
            $store,
            $kind,
            serde_json::to_string(&$result).unwrap(),
        ))
        .unwrap()
    };
}

#[test]
fn every_kind_of_real_result_round_trips_through_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path().join("kinds.db")).unwrap();
    let go = AtomicBool::new(false);
    let work = |name: &str| {
        let d = tmp.path().join(name);
        std::fs::create_dir(&d).unwrap();
        d
    };

    // A run.
    let run_dir = work("run");
    let run_db = tmp.path().join("run.db");
    let out = common::iolab()
        .current_dir(&run_dir)
        .arg("run")
        .args(JOB)
        .arg(format!("--db={}", run_db.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stored = Store::open(&run_db).unwrap().all().unwrap();
    let run = stored[0].record.run_result().unwrap();
    let back: iolab_stats::RunResult = round_trip!(&mut store, Kind::Run, run);
    assert_eq!(back, run);

    // A metadata run.
    let meta_opts = iolab_core::meta::MetaOptions {
        dir: work("meta"),
        files: 100,
        dirs: 2,
        ..Default::default()
    };
    let meta = iolab_core::meta::run_meta(&meta_opts, &go).unwrap();
    assert_eq!(meta.phases.len(), 9);
    let back: iolab_stats::meta::MetaResult = round_trip!(&mut store, Kind::Meta, meta);
    assert_eq!(back, meta);

    // A sweep.
    let sweep_dir = work("sweep");
    let base_args: Vec<String> = [
        "--size=256k".to_string(),
        "--ioengine=psync".to_string(),
        format!("--filename={}", sweep_dir.join("f").display()),
    ]
    .to_vec();
    let cmd = iolab_spec::cmdline::parse_args(&base_args).unwrap();
    let base = iolab_spec::resolve::Sources {
        global: cmd.global,
        cmd_jobs: cmd.jobs,
        ..Default::default()
    };
    let axes = [
        iolab_core::sweep::bs_axis("4k..8k").unwrap(),
        iolab_core::sweep::list_axis("rw", "write,read").unwrap(),
    ];
    let ctx = iolab_spec::Context::from_env(iolab_spec::Host::EXAMPLE);
    let sweep = iolab_core::sweep::run_sweep(&base, &axes, 2, &ctx, &go, &mut |_, _| {}).unwrap();
    assert!(sweep.complete() && sweep.points.len() == 4);
    let back: iolab_stats::sweep::SweepResult = round_trip!(&mut store, Kind::Sweep, sweep);
    assert_eq!(back, sweep);

    // A quick suite.
    let setup = iolab_core::quick::prepare(&iolab_core::quick::QuickOpts {
        dir: work("quick"),
        profile: iolab_core::quick::Profile::Iolab,
        time: Duration::from_millis(900),
        passes: 1,
        interval: Duration::ZERO,
        size: Some(64 << 20),
        engine: Some("psync".into()),
        buffered: false,
        meta_files: 100,
    })
    .unwrap();
    let quick = iolab_core::quick::run(&setup, &go, &|_, _, _, _| {}).unwrap();
    assert_eq!(quick.tests.len(), 12);
    assert!(!quick.nothing_measured());
    let back: iolab_stats::quick::QuickResult = round_trip!(&mut store, Kind::Quick, quick);
    assert_eq!(back, quick);

    // A comparison of two directories: a fio job and the metadata pass.
    let (a, b) = (work("a"), work("b"));
    let mut targets = vec![
        iolab_lab::target::parse_dir_target(&format!("a={}", a.display())).unwrap(),
        iolab_lab::target::parse_dir_target(&format!("b={}", b.display())).unwrap(),
    ];
    iolab_lab::target::assign_labels(&mut targets).unwrap();
    let workload = |name: &str, job: &str, meta_files| iolab_lab::suite::Workload {
        name: name.into(),
        about: name.into(),
        job: job.into(),
        source: None,
        meta_files,
        bw: Default::default(),
    };
    let opts = iolab_lab::campaign::Options {
        workdir: Some(tmp.path().join("lab")),
        size: 64 << 20,
        repeat: 1,
        auto: None,
        runtime_s: 1,
        suite: iolab_lab::suite::Suite {
            name: "small".into(),
            about: "a write and a metadata pass".into(),
            workloads: vec![
                workload(
                    "w",
                    "[w]\ndirectory=${IOLAB_DIR}\nrw=write\nbs=64k\nsize=1m\nunlink=1\n",
                    None,
                ),
                workload("meta", "", Some(200)),
            ],
        },
        device: None,
        cache_device: None,
        cache_size: 64 << 20,
        destroy_data: false,
        baseline: Some("a".into()),
        host: iolab_spec::Host::EXAMPLE,
    };
    let outcome = iolab_lab::campaign::run(&targets, &opts, &go, &mut |_| {}).unwrap();
    let cmp = outcome.comparison;
    assert_eq!(cmp.targets.len(), 2);
    assert!(cmp.targets.iter().all(|t| t.failed.is_none()), "{cmp:?}");
    assert!(!cmp.metrics.is_empty());
    let back: iolab_stats::Comparison = round_trip!(&mut store, Kind::Compare, cmp);
    assert_eq!(back, cmp);
}

#[test]
fn a_stored_comparison_is_shown_again_as_its_table() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let db = tmp.path().join("c.db");
    let out = common::iolab()
        .args([
            "compare", "--suite", "meta", "--repeat", "1", "--tag", "dirs",
        ])
        .arg("--target")
        .arg(format!("a={}", a.display()))
        .arg("--target")
        .arg(format!("b={}", b.display()))
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("meta"), "{table}");
    let all = Store::open(&db).unwrap().all().unwrap();
    assert_eq!(all.len(), 1);
    let rec = &all[0].record;
    assert_eq!(rec.kind, Kind::Compare);
    assert_eq!(rec.tags, ["dirs"]);
    assert!(
        rec.metrics.iter().any(|m| m.name.starts_with("b ")),
        "{:?}",
        rec.metrics
    );
    let id = all[0].id.to_string();
    let shown = common::iolab()
        .args(["show", &id])
        .arg(format!("--db={}", db.display()))
        .output()
        .unwrap();
    assert!(shown.status.success(), "{shown:?}");
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(
        shown.starts_with(&format!("Result {id}: compare at ")),
        "{shown}"
    );
    assert!(
        shown.ends_with(&table),
        "show does not re-print the table:\n{shown}\n---\n{table}"
    );
    assert!(Path::new(&a).read_dir().unwrap().next().is_none());
}

#[test]
fn repeats_say_why_the_caches_could_not_be_dropped() {
    // As root, in a mount namespace of its own where /proc/sys is
    // read-only, as in a container.
    if iolab_engine::host::euid() != 0 {
        skip!("needs root to make /proc/sys read-only in a namespace");
    }
    let dir = tempfile::tempdir().unwrap();
    let script = "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys \
                  && exec \"$0\" \"$@\"";
    let out = Proc::new("unshare")
        .args(["--mount", "sh", "-c", script])
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["run", "--repeat=2", "--no-store"])
        .args(JOB)
        .current_dir(dir.path())
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stdout).is_empty() {
        skip!(
            "cannot make /proc/sys read-only in a mount namespace: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("Repeats: 2 runs; "))
        .unwrap();
    assert!(
        line.contains("cannot write /proc/sys/vm/drop_caches (Read-only file system"),
        "{line}"
    );
    assert!(line.contains("only the job files' cached pages"), "{line}");
    assert!(!line.contains("not root"), "{line}");
}

#[test]
fn runs_that_differ_are_flagged_and_their_interval_is_their_range() {
    let dir = tempfile::tempdir().unwrap();
    let fs = need!(common::LoopFs::new(dir.path(), "ext4", 64, ""));
    let throttle = need!(common::Throttle::new());
    // Direct reads for a second, three times; the device slowed down to
    // 1 MB/s once the first run has been reported.
    let mut child = Proc::new(assert_cmd::cargo::cargo_bin("iolab"))
        .current_dir(&fs.mnt)
        .args([
            "run",
            "--repeat=3",
            "--no-store",
            "--output-format=normal,json",
            "--name=r",
            "--filename=f",
            "--size=16m",
            "--rw=read",
            "--bs=64k",
            "--direct=1",
            "--time_based",
            "--runtime=1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            panic!("no first run:\n{text}");
        }
        text.push_str(&line);
        if line.starts_with("iolab: run 1 of 3") {
            break;
        }
    }
    throttle.limit_reads(child.id(), &common::dev_of(&fs.mnt), 1 << 20);
    stdout.read_to_string(&mut text).unwrap();
    assert!(child.wait().unwrap().success(), "{text}");
    let bw = text
        .lines()
        .find(|l| l.starts_with("  r    read  bw MB/s"))
        .unwrap_or_else(|| panic!("{text}"));
    let v = repeat_json(&text);
    let fig = &v["iolab"]["repeat"]["figures"][0];
    assert_eq!(fig["metric"], "bw");
    assert_eq!(fig["noisy"], true, "{fig}");
    // The interval of the median of three runs: from the slowest to the
    // fastest, at 75%; and the spread flagged.
    let range = |k: &str| fig[k].as_f64().unwrap();
    assert_eq!(range("min"), fig["median_ci"]["low"].as_f64().unwrap());
    assert_eq!(range("max"), fig["median_ci"]["high"].as_f64().unwrap());
    assert!(range("max") > 3.0 * range("min"), "{fig}");
    assert!(bw.contains("(75%)"), "{bw}");
    assert!(bw.contains(" !"), "{bw}");
    assert!(
        text.contains("! max - min exceeds 10% of the median"),
        "{text}"
    );
    // The one spread beside the geometric mean, and in the JSON with the
    // range that the flag reads.
    assert!(fig["spread"].as_f64().is_some_and(|s| s > 0.0), "{fig}");
    let ratio = (range("max") - range("min")) / fig["median"].as_f64().unwrap();
    assert!(
        // The JSON keeps six decimals.
        (fig["range_ratio"].as_f64().unwrap() / ratio - 1.0).abs() < 1e-6,
        "{fig}"
    );
    // fio's layout at the top: the median run is a slowed one.
    let top = v["iolab"]["repeat"]["top_level_run"].as_u64().unwrap();
    assert!(top >= 2, "{top}");
}

/// `show` of a repeated run prints what `run --repeat` printed: every
/// run's report, the repeats' summary, with the run's own render options
/// (kb_base=1000 here), in normal, JSON and terse.
#[test]
fn show_prints_what_a_repeated_run_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let dir = format!("--directory={}", tmp.path().display());
    let run = [
        "run",
        "--name=j",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1m",
        "--repeat=2",
        "--kb_base=1000",
        &dir,
    ];
    for (id, fmt) in ["normal", "json", "terse"].iter().enumerate() {
        let out = common::iolab()
            .env("IOLAB_DB", &db)
            .args(run)
            .arg(format!("--output-format={fmt}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let printed = String::from_utf8(out.stdout).unwrap();
        let shown = common::iolab()
            .env("IOLAB_DB", &db)
            .args(["show", &(id + 1).to_string(), "--output-format", fmt])
            .output()
            .unwrap();
        assert!(shown.status.success(), "{shown:?}");
        let shown = String::from_utf8(shown.stdout).unwrap();
        if *fmt == "normal" {
            // The lines before the jobs start are the run's, not the
            // result's: show opens with the record's header instead.
            let body = &printed[printed.find("\niolab: run 1 of 2\n").unwrap()..];
            assert!(shown.ends_with(body), "{shown}\n---\n{printed}");
            assert!(body.contains("\nRepeats: 2 runs;"), "{body}");
            assert!(body.contains("\niolab: run 2 of 2\n"), "{body}");
        } else {
            assert_eq!(shown, printed, "{fmt}");
        }
    }
}

/// `show` of a single run prints what the run printed, after the record's
/// header: the preamble, fio's "Laying out IO file" line and the results.
#[test]
fn show_prints_what_a_run_printed_with_its_layout_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let out = common::iolab()
        .env("IOLAB_DB", &db)
        .args(["run", "--name=j", "--rw=read", "--bs=4k", "--size=1m"])
        .arg(format!("--directory={}", tmp.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(
        printed.contains("\nj: Laying out IO file (1 file / 1MiB)\n"),
        "{printed}"
    );
    let shown = common::iolab()
        .env("IOLAB_DB", &db)
        .args(["show", "1"])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{shown:?}");
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.ends_with(&printed), "{shown}\n---\n{printed}");
}
