//! Repeats and the warnings that travel with stored results: `--repeat N`
//! on quick and meta keeps every run (so diff reaches a verdict),
//! `--repeat auto` stops on the width for a steady job and on a budget
//! otherwise and says which, bad repeat flags are refused, and a run that
//! measured the page cache carries its warning into history, export,
//! diff and quick's table.

mod common;

use iolab_testkit::need;
use std::path::Path;

use predicates::prelude::*;
use serde_json::Value;

/// `iolab ARGS` with the results in `db`; it must succeed. Its stdout.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = common::iolab()
        .arg(args[0])
        .arg(format!("--db={}", db.display()))
        .args(&args[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A JSON document (object or array), after any notices before it.
fn json(text: &str) -> Value {
    let start = text.find(['{', '[']).expect("JSON in the output");
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The quick suite, kept short: 64 MiB, one second shared by its tests,
/// a metadata pass of 50 files.
fn quick(db: &Path, dir: &Path, extra: &[&str]) -> Value {
    let d = dir.display().to_string();
    let mut args = vec![
        "quick",
        "--time=1s",
        "--size=64m",
        "--meta-files=50",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    args.push(&d);
    json(&ok(db, &args))
}

#[test]
fn quick_repeat_2_keeps_both_runs_and_diff_gives_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let work = tmp.path().join("w");
    std::fs::create_dir(&work).unwrap();
    for _ in 0..2 {
        let q = quick(&db, &work, &["--repeat=2"]);
        let runs = q["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{q}");
        assert_eq!(runs[0].as_array().unwrap().len(), 12, "9 tests + 3 meta");
        assert_eq!(q["repeat"]["runs"], 2);
        assert_eq!(q["repeat"]["stopped"], "count");
        // A summary row per test: the geometric mean of both runs' IOPS,
        // with its interval around it.
        let t = &q["tests"][0];
        let (a, b) = (
            runs[0][0]["iops"].as_f64().unwrap(),
            runs[1][0]["iops"].as_f64().unwrap(),
        );
        let gm = t["iops"].as_f64().unwrap();
        assert!((gm - (a * b).sqrt()).abs() <= 1e-6 * gm, "{gm} {a} {b}");
        let iv = t["iops_interval"].as_array().unwrap();
        assert!(iv[0].as_f64().unwrap() <= gm && gm <= iv[1].as_f64().unwrap());
    }
    // The stored metrics carry both runs: diff tests 2 runs against 2.
    let d = json(&ok(&db, &["diff", "1", "2", "--output-format=json"]));
    let iops = d["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "RND4K Q32T1 read IOPS")
        .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(iops["basis"]["runs"]["a"], 2, "{iops}");
    assert_eq!(iops["basis"]["runs"]["b"], 2, "{iops}");
    assert!(iops["p_raw"].as_f64().is_some(), "a tested verdict: {iops}");
    let text = ok(&db, &["diff", "1", "2"]);
    assert!(!text.contains("one run per side"), "{text}");
    assert!(text.contains("2 vs 2 runs"), "{text}");
    // The same suite on the same directory is the same job, whatever
    // private directory each run worked in.
    assert!(!text.contains("ran different jobs"), "{text}");
    // The table of a repeated suite says how the runs ended.
    let table = ok(
        &db,
        &[
            "quick",
            "--time=1s",
            "--size=64m",
            "--meta-files=0",
            "--repeat=2",
            "--no-store",
            work.to_str().unwrap(),
        ],
    );
    assert!(table.contains("±95%"), "{table}");
    assert!(
        table.contains("note: repeats: 2 runs, stopped: the runs asked for were made"),
        "{table}"
    );
}

#[test]
fn quick_repeat_auto_says_the_time_budget_stopped_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let q = quick(&db, tmp.path(), &["--repeat=auto", "--repeat-time=1ms"]);
    assert_eq!(q["runs"].as_array().unwrap().len(), 1, "{q}");
    assert_eq!(q["repeat"]["stopped"], "time", "{q}");
    assert_eq!(q["repeat"]["rule"]["mode"], "auto");
    // Stored with the result.
    let e = json(&ok(&db, &["export", "--format=json"]));
    assert_eq!(e[0]["repeat"]["stopped"], "time", "{e}");
    let csv = ok(&db, &["export", "--format=csv"]);
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .contains("1 runs: time budget spent"),
        "{csv}"
    );
}

#[test]
fn meta_repeat_keeps_every_run_and_diff_gives_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let dir = tmp.path().display().to_string();
    for _ in 0..2 {
        let m = json(&ok(
            &db,
            &[
                "meta",
                "--files=50",
                "--phases=stat",
                "--repeat=3",
                "--output-format=json",
                &dir,
            ],
        ));
        let runs = m["runs"].as_array().unwrap_or_else(|| panic!("{m}"));
        assert_eq!(runs.len(), 3, "{m}");
        assert!(runs.iter().all(|r| r.as_array().unwrap().len() == 3));
        assert_eq!(m["repeat"]["runs"], 3);
        assert_eq!(m["repeat"]["stopped"], "count");
    }
    let d = json(&ok(&db, &["diff", "1", "2", "--output-format=json"]));
    let stat = d["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "stat ops/s")
        .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(stat["basis"]["runs"]["a"], 3, "{stat}");
    assert!(stat["p_raw"].as_f64().is_some(), "{stat}");
    let table = ok(
        &db,
        &["meta", "--files=50", "--repeat=2", "--no-store", &dir],
    );
    assert!(
        table.contains("repeats: 2 runs, stopped: the runs asked for were made"),
        "{table}"
    );
    assert!(
        table.contains("create ops/s over 2 runs: geometric mean"),
        "{table}"
    );
    // Nothing of the runs is left behind.
    let left: Vec<String> = common::entries(tmp.path())
        .into_iter()
        .filter(|e| !e.starts_with("r.db"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A null-engine read held to 20 MB/s by the rate limiter: every run
/// moves the same bytes in the same time.
const STEADY: [&str; 8] = [
    "--name=steady",
    "--ioengine=null",
    "--rw=read",
    "--bs=4k",
    "--size=64m",
    "--rate=20m",
    "--time_based",
    "--runtime=300ms",
];

fn run_repeat(db: &Path, job: &[&str], repeat: &[&str]) -> Value {
    let mut args = vec!["run", "--output-format=json"];
    args.extend_from_slice(job);
    args.extend_from_slice(repeat);
    json(&ok(db, &args))
}

#[test]
fn run_repeat_auto_stops_on_the_width_for_a_steady_job() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let v = run_repeat(&db, &STEADY, &["--repeat=auto"]);
    let r = &v["iolab"]["repeat"];
    assert_eq!(r["stopped"], "width", "{r}");
    let n = r["runs"].as_u64().unwrap();
    assert!((3..=10).contains(&n), "{r}");
    assert!(r["widest_gm_half_width"].as_f64().unwrap() <= 0.05, "{r}");
    assert_eq!(v["iolab"]["runs"].as_array().unwrap().len() as u64, n);
    // The normal output says it, and the store keeps it.
    let mut args = vec!["run"];
    args.extend_from_slice(&STEADY);
    args.extend_from_slice(&["--repeat=auto", "--repeat-width=5%"]);
    let text = ok(&db, &args);
    assert!(
        text.contains("stopped: every interval within the width"),
        "{text}"
    );
    let e = json(&ok(&db, &["export", "--format=json"]));
    assert_eq!(e[1]["repeat"]["stopped"], "width", "{e}");
    let samples = e[1]["metrics"][0]["samples"].as_array().unwrap();
    assert_eq!(
        samples.len() as u64,
        e[1]["repeat"]["runs"].as_u64().unwrap()
    );
}

#[test]
fn run_repeat_auto_stops_on_its_budgets_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    // No two unthrottled runs take the same nanoseconds: a width of
    // 0.001% is never reached, so the run budget ends it.
    let free = &STEADY[..5];
    let v = run_repeat(
        &db,
        free,
        &["--repeat=auto", "--repeat-width=0.001%", "--repeat-max=3"],
    );
    assert_eq!(
        v["iolab"]["repeat"]["stopped"], "max-runs",
        "{}",
        v["iolab"]["repeat"]
    );
    assert_eq!(v["iolab"]["repeat"]["runs"], 3);
    // A time budget shorter than one run: one run, stopped by the time.
    let v = run_repeat(&db, &STEADY, &["--repeat=auto", "--repeat-time=1ms"]);
    assert_eq!(v["iolab"]["repeat"]["stopped"], "time");
    assert_eq!(v["iolab"]["repeat"]["runs"], 1);
    let mut args = vec!["run"];
    args.extend_from_slice(free);
    args.extend_from_slice(&["--repeat=auto", "--repeat-width=0.001%", "--repeat-max=2"]);
    let text = ok(&db, &args);
    assert!(
        text.contains("2 runs, stopped: run budget spent before the width was reached"),
        "{text}"
    );
}

#[test]
fn sweep_repeat_auto_runs_rounds_until_its_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let v = json(&ok(
        &db,
        &[
            "sweep",
            "--output-format=json",
            "--name=s",
            "--ioengine=null",
            "--rw=read",
            "--size=16m",
            "--bs",
            "4k,8k",
            "--repeat",
            "auto",
            "--repeat-width=0.001%",
            "--repeat-max=2",
        ],
    ));
    assert_eq!(v["repeat_outcome"]["stopped"], "max-runs", "{v}");
    for p in v["points"].as_array().unwrap() {
        assert_eq!(p["runs"].as_array().unwrap().len(), 2, "{p}");
    }
    let e = json(&ok(&db, &["export", "--format=json"]));
    assert_eq!(e[0]["repeat"]["runs"], 2, "{e}");
}

#[test]
fn bad_repeat_flags_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let d = tmp.path().display().to_string();
    let target = format!("a={d}");
    let cases: [(&[&str], &str); 7] = [
        (
            &["compare", "--target", &target, "--repeat-max", "3"],
            "--repeat-max goes with --repeat auto",
        ),
        (
            &["quick", "--repeat-width=5%", &d],
            "--repeat-width goes with --repeat auto",
        ),
        (&["quick", "--repeat=0", &d], "--repeat `0`"),
        (&["meta", "--repeat=often", &d], "or `auto`"),
        (
            &["meta", "--repeat=auto", "--repeat-width=0%", &d],
            "--repeat-width `0%`",
        ),
        (
            &[
                "run",
                "--name=x",
                "--ioengine=null",
                "--size=1m",
                "--repeat=auto",
                "--repeat-max=0",
            ],
            "--repeat-max `0`",
        ),
        (
            &[
                "sweep",
                "--name=x",
                "--ioengine=null",
                "--size=1m",
                "--bs",
                "4k",
                "--repeat-time=1s",
            ],
            "--repeat-time goes with --repeat auto",
        ),
    ];
    for (args, says) in cases {
        common::iolab()
            .arg(args[0])
            .arg(format!("--db={}", db.display()))
            .args(&args[1..])
            .current_dir(tmp.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    assert!(!db.exists(), "nothing stored");
    assert!(
        common::entries(tmp.path()).is_empty(),
        "nothing left behind"
    );
}

/// `iolab compare --repeat auto EXTRA` of one directory target running
/// `job`, as JSON; the comparison.
fn compare_auto(db: &Path, dir: &Path, job: &str, extra: &[&str]) -> Value {
    let job_file = dir.join("w.fio");
    std::fs::write(&job_file, job).unwrap();
    let target = dir.join("t");
    std::fs::create_dir_all(&target).unwrap();
    let mut args = vec![
        "compare".to_string(),
        "--output-format=json".into(),
        "--repeat=auto".into(),
        format!("--job={}", job_file.display()),
        format!("--target=a={}", target.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    json(&ok(db, &args))["iolab compare"].clone()
}

#[test]
fn compare_repeat_auto_stops_each_workload_by_its_rule_and_says_which() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    // A steady job (a rate the null engine always keeps): the width stops
    // it at the fewest runs auto makes.
    let steady =
        "[w]\nrw=write\nbs=64k\nsize=4m\nioengine=null\nrate=20m\ntime_based=1\nruntime=300ms\n";
    let c = compare_auto(&db, tmp.path(), steady, &[]);
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("a, w: 3 runs, stopped: every interval within the width")),
        "{notes:?}"
    );
    let runs = c["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{c}");
    assert_eq!(c["repeat"], 3);
    // A time budget shorter than one run: one run, and it says so.
    let c = compare_auto(&db, tmp.path(), steady, &["--repeat-time=100ms"]);
    assert!(
        c["notes"]
            .to_string()
            .contains("a, w: 1 run, stopped: time budget spent"),
        "{c}"
    );
    // An unsteady job and a run budget of 4: the budget stops it.
    let unsteady = "[w]\nrw=write\nbs=4k\nsize=1m\nioengine=null\n";
    let c = compare_auto(
        &db,
        tmp.path(),
        unsteady,
        &["--repeat-max=4", "--repeat-width=0.001%"],
    );
    assert!(
        c["notes"]
            .to_string()
            .contains("a, w: 4 runs, stopped: run budget spent"),
        "{c}"
    );
    assert_eq!(c["runs"].as_array().unwrap().len(), 4);
    // Nothing is left in the target.
    assert!(common::entries(&tmp.path().join("t")).is_empty());
}

/// A buffered read of a 16 MiB file over and over for a second: served
/// from the page cache after the first pass. On a loop device of its own
/// where the machine allows one, so that no neighbour's I/O on a shared
/// disk blurs the device's counters.
fn cached_read(db: &Path, dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "run",
        "--output-format=json",
        "--name=r",
        "--filename=f",
        "--rw=read",
        "--bs=1m",
        "--size=16m",
        "--time_based",
        "--runtime=1",
    ];
    args.extend_from_slice(extra);
    let out = common::iolab()
        .arg(args[0])
        .arg(format!("--db={}", db.display()))
        .args(&args[1..])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    common::json_of(&out.stdout)
}

fn codes(v: &Value) -> Vec<String> {
    v["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_page_cache_warning_travels_into_history_export_and_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let fs = common::LoopFs::new(tmp.path(), "ext4", 64, "").ok();
    if fs.is_none() {
        eprintln!("note: no loop device; the cached read runs on the temp directory's disk");
    }
    let at = fs.as_ref().map_or(tmp.path(), |f| f.mnt.as_path());
    // A: from memory. B: the same job with O_DIRECT, from the device.
    let a = cached_read(&db, at, &[]);
    assert!(
        codes(&a).contains(&"page-cache".to_string()),
        "{:?}",
        codes(&a)
    );
    // B reads the file once with O_DIRECT. On a loop image, the host must
    // not hold the image in its cache either (iolab would rightly say the
    // reads came from memory), and a second pass would put it there.
    if fs.is_some() {
        common::drop_file_cache(&tmp.path().join("ext4.img"));
    }
    let b = {
        let out = common::iolab()
            .args(["run", "--output-format=json", "--name=r", "--filename=f"])
            .args(["--rw=read", "--bs=1m", "--size=16m", "--direct=1"])
            .arg(format!("--db={}", db.display()))
            .current_dir(at)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        common::json_of(&out.stdout)
    };
    assert!(
        !codes(&b).contains(&"page-cache".to_string()),
        "{:?}",
        codes(&b)
    );

    // history: a FLAGS column, page-cache on A only.
    let h = ok(&db, &["history"]);
    let lines: Vec<&str> = h.lines().collect();
    assert!(lines[0].contains("FLAGS"), "{h}");
    let row = |id: &str| *lines.iter().find(|l| l.starts_with(id)).unwrap();
    assert!(row("1 ").contains("page-cache"), "{h}");
    assert!(!row("2 ").contains("page-cache"), "{h}");
    let hj = json(&ok(&db, &["history", "--output-format=json"]));
    assert!(hj[1]["flags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "page-cache"));

    // export: a warnings column with the code and where it was raised.
    let csv = ok(&db, &["export", "--format=csv"]);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = head
        .iter()
        .position(|h| *h == "warnings")
        .expect("a warnings column");
    let first = csv.lines().nth(1).unwrap();
    assert!(first.contains("page-cache (r)"), "{csv}");
    assert!(first.starts_with("1,"), "{csv}");
    let e = json(&ok(&db, &["export", "--format=json"]));
    assert_eq!(
        e[0]["warnings"][0]["code"], "page-cache",
        "{}",
        e[0]["warnings"]
    );
    assert_eq!(e[0]["warnings"][0]["at"], "r");
    assert!(col > 0);

    // diff: the side that carried it, beside the metrics and under them.
    let d = ok(&db, &["diff", "1", "2"]);
    assert!(d.contains("WARNINGS"), "{d}");
    let read_bw = d.lines().find(|l| l.starts_with("r read MB/s")).unwrap();
    assert!(read_bw.contains("A: page-cache"), "{d}");
    assert!(d.contains("  A: page-cache at r: "), "{d}");
    assert!(
        d.contains("only A carried page-cache: a difference from B there may come from it"),
        "{d}"
    );
    let dj = json(&ok(&db, &["diff", "1", "2", "--output-format=json"]));
    assert_eq!(dj["warnings"]["a"][0]["code"], "page-cache");
    assert!(!dj["warnings"]["b"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "page-cache"));
}

#[test]
fn quick_marks_the_cells_of_tests_that_measured_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("r.db");
    let mnt = tmp.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    let _tmpfs = need!(common::Mounted::tmpfs(&mnt, "size=200m"));
    let m = mnt.display().to_string();
    let out = ok(
        &db,
        &[
            "quick",
            "--time=1s",
            "--size=64m",
            "--meta-files=0",
            "--buffered",
            &m,
        ],
    );
    // Buffered reads of a file in memory: the read rows are marked with
    // the page-cache warning's number, and the legend names them.
    let legend = out
        .lines()
        .find(|l| l.starts_with('w') && l.contains(" page-cache: "))
        .unwrap_or_else(|| panic!("{out}"));
    let n = legend.split(' ').next().unwrap();
    assert!(legend.contains("SEQ1M Q8T1 read"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("SEQ1M Q8T1") && l.contains(" read "))
        .unwrap();
    assert!(row.contains(n), "{n} in {row}");
    // And it is stored with the result.
    let h = ok(&db, &["history"]);
    assert!(h.lines().nth(1).unwrap().contains("page-cache"), "{h}");
}
