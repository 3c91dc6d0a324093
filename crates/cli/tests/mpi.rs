//! iolab under MPI, on one host: `mpirun --allow-run-as-root
//! --oversubscribe -np 4 iolab ...`. The merged report against the ranks'
//! own figures and their raw latencies (each rank's per-I/O latency log),
//! the start skew after the barrier, a shared file in rank segments,
//! stonewalling across ranks, and a rank that fails. These need iolab
//! built with `--features mpi` (scripts/test.sh runs them so) and mpirun
//! (OpenMPI, which scripts/setup.sh installs; without it each records its
//! skip through the test harness). The default build's own test is last.

mod common;
use common::*;
#[cfg(feature = "mpi")]
use iolab_testkit::require;

#[cfg(feature = "mpi")]
use std::path::Path;
use std::process::Command as Proc;
#[cfg(feature = "mpi")]
use std::process::Output;

#[cfg(feature = "mpi")]
use serde_json::Value;

/// Ranks of every test.
#[cfg(feature = "mpi")]
const RANKS: usize = 4;

/// `mpirun --allow-run-as-root --oversubscribe` in `dir`, with the test
/// database and its session directory under `session`: OpenMPI makes its
/// default one (/tmp/ompi.HOST.UID) in a way that fails ("File exists")
/// when another mpirun makes it at the same moment, and these tests run
/// side by side.
#[cfg(feature = "mpi")]
fn mpirun_in(dir: &Path, session: &Path) -> Proc {
    let mut cmd = Proc::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe"])
        .env("OMPI_MCA_orte_tmpdir_base", session)
        .env("IOLAB_DB", test_db())
        .current_dir(dir);
    cmd
}

/// `mpirun -np 4 iolab ARGS` in `dir`.
#[cfg(feature = "mpi")]
fn mpirun(dir: &Path, args: &[&str]) -> Output {
    let session = tempfile::tempdir().unwrap();
    mpirun_in(dir, session.path())
        .arg("-np")
        .arg(RANKS.to_string())
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(args)
        .output()
        .expect("start mpirun")
}

/// `iolab run --output-format=json+` of `job` (DIR replaced by `dir`)
/// under mpirun, which must succeed; the report.
#[cfg(feature = "mpi")]
fn run_ranks(dir: &Path, job: &str, flags: &[&str]) -> Value {
    let path = dir.join("job.fio");
    std::fs::write(&path, job.replace("DIR", &dir.display().to_string())).unwrap();
    let mut args = vec!["run", "--output-format=json+", "job.fio"];
    args.extend(flags);
    let out = mpirun(dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

/// Every value of a per-I/O log (its second column) in `dir` whose name
/// ends with `suffix`, and how many files held them.
#[cfg(feature = "mpi")]
fn logged(dir: &Path, suffix: &str) -> (Vec<u64>, usize) {
    let mut values = Vec::new();
    let mut files = 0;
    for name in entries(dir) {
        if !name.ends_with(suffix) {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        for line in text.lines() {
            let cols: Vec<&str> = line.split(", ").collect();
            values.push(cols[1].parse().unwrap());
        }
    }
    (values, files)
}

#[cfg(feature = "mpi")]
fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[cfg(feature = "mpi")]
#[test]
fn merged_figures_are_the_ranks_summed_and_percentiles_those_of_every_io() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = "[w]\ndirectory=DIR\nfilename=data.$rank\nrw=randwrite\nbs=4k\nsize=512k\n\
               write_lat_log=DIR/lat.$rank\n";
    let report = run_ranks(d, job, &[]);
    // Each rank wrote its own file, named by its rank.
    for r in 0..RANKS {
        assert!(d.join(format!("data.{r}")).exists(), "{:?}", entries(d));
    }
    let job = &report["jobs"][0];
    let w = &job["write"];
    let mpi = &report["iolab"]["mpi"];
    assert_eq!(u(&mpi["nranks"]), RANKS as u64);
    let ranks = mpi["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), RANKS);
    let sum = |key: &str| -> u64 { ranks.iter().map(|r| u(&r["jobs"][0]["write"][key])).sum() };
    assert_eq!(u(&w["io_bytes"]), sum("io_bytes"));
    assert_eq!(u(&w["io_bytes"]), RANKS as u64 * 512 * 1024);
    assert_eq!(u(&w["total_ios"]), sum("total_ios"));
    assert_eq!(u(&mpi["jobs"][0]["write"]["io_bytes"]), sum("io_bytes"));
    assert_eq!(
        u(&mpi["jobs"][0]["write"]["sum_rank_bw_bytes"]),
        sum("bw_bytes")
    );
    // IOR's aggregate: all bytes over the latest end minus the earliest
    // start, from the ranks' own spans.
    let starts: Vec<u64> = ranks
        .iter()
        .map(|r| u(&r["phases"][0]["start_ns"]))
        .collect();
    let ends: Vec<u64> = ranks.iter().map(|r| u(&r["phases"][0]["end_ns"])).collect();
    let wall = ends.iter().max().unwrap() - starts.iter().min().unwrap();
    assert_eq!(u(&mpi["phases"][0]["wall_ns"]), wall);
    assert_eq!(
        u(&mpi["jobs"][0]["write"]["aggregate_bw_bytes"]),
        (sum("io_bytes") as u128 * 1_000_000_000 / wall as u128) as u64
    );
    // The merged latencies are those of every I/O of every rank: the
    // ranks' per-I/O logs, read back, give the same count, extremes,
    // mean, deviation, histogram and percentiles.
    let (lats, files) = logged(d, "_clat.1.log");
    assert_eq!(files, RANKS, "{:?}", entries(d));
    let clat = &w["clat_ns"];
    assert_eq!(lats.len() as u64, u(&clat["N"]));
    assert_eq!(*lats.iter().min().unwrap(), u(&clat["min"]));
    assert_eq!(*lats.iter().max().unwrap(), u(&clat["max"]));
    let n = lats.len() as f64;
    let mean = lats.iter().sum::<u64>() as f64 / n;
    let var = lats.iter().map(|&l| (l as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(close(clat["mean"].as_f64().unwrap(), mean), "{clat} {mean}");
    assert!(
        close(clat["stddev"].as_f64().unwrap(), var.sqrt()),
        "{clat}"
    );
    let mut hist = iolab_stats::LatHist::new();
    for &l in &lats {
        hist.record(l);
    }
    let bins: Vec<(u64, u64)> = clat["bins"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), u(v)))
        .collect();
    let mut want: Vec<(u64, u64)> = hist.nonzero_bins().collect();
    let mut got = bins;
    want.sort();
    got.sort();
    assert_eq!(got, want);
    let pcts = clat["percentile"].as_object().unwrap();
    let expected = hist.percentiles(&iolab_stats::DEFAULT_PERCENTILES);
    assert_eq!(pcts.len(), expected.len());
    for (p, v) in expected {
        let key = format!("{p:.6}");
        assert_eq!(u(&pcts[&key]), v, "percentile {key}");
    }
    // One host, every rank on it.
    let hosts = mpi["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0]["ranks"].as_array().unwrap().len(), RANKS);
    // The stored result names the hosts and ranks.
    let shown = iolab()
        .args(["show", "1", "--output-format=json"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let stored = json_of(&shown.stdout);
    assert_eq!(stored["iolab"]["mpi"]["hosts"], mpi["hosts"]);
    assert_eq!(
        stored["iolab"]["mpi"]["ranks"].as_array().unwrap().len(),
        RANKS
    );
}

#[cfg(feature = "mpi")]
#[test]
fn each_phase_starts_after_a_barrier_and_the_start_skew_is_reported() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let job = "[global]\ndirectory=DIR\nfilename=data.$rank\nbs=4k\nsize=256k\n\
               [w]\nrw=write\n[r]\nstonewall\nrw=read\n";
    let report = run_ranks(dir.path(), job, &["--no-store"]);
    let mpi = &report["iolab"]["mpi"];
    let phases = mpi["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    let ranks = mpi["ranks"].as_array().unwrap();
    for (p, phase) in phases.iter().enumerate() {
        let starts: Vec<u64> = ranks
            .iter()
            .map(|r| u(&r["phases"][p]["start_ns"]))
            .collect();
        let skew = starts.iter().max().unwrap() - starts.iter().min().unwrap();
        assert_eq!(u(&phase["start_skew_ns"]), skew);
        eprintln!(
            "phase {}: start skew after the barrier {} us, wall {} us",
            p + 1,
            skew / 1000,
            u(&phase["wall_ns"]) / 1000
        );
        // No rank starts the second phase before every rank ended the
        // first: the barrier is between them.
        if p == 1 {
            let first_end = ranks
                .iter()
                .map(|r| u(&r["phases"][0]["end_ns"]))
                .max()
                .unwrap();
            assert!(starts.iter().all(|&s| s >= first_end), "{mpi}");
        }
    }
    // Both jobs, merged over the ranks.
    assert_eq!(u(&report["jobs"][1]["read"]["io_bytes"]), 4 * 256 * 1024);
}

#[cfg(feature = "mpi")]
#[test]
fn rank_0_prints_every_ranks_layout_lines_once_per_phase() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("job.fio"),
        format!(
            "[global]\ndirectory={}\nbs=64k\nsize=1m\n[w]\nfilename=w.$rank\nrw=write\n\
             [r]\nstonewall\nfilename=r.$rank\nrw=read\n",
            d.display()
        ),
    )
    .unwrap();
    let out = mpirun(d, &["run", "job.fio", "--no-store"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One line per rank for each job, as fio prints one per clone, between
    // the preamble and the first job's results; the first phase's before
    // the second's.
    let lines: Vec<&str> = text.lines().collect();
    let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
    let laid: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(": Laying out IO file"))
        .collect();
    let mut want = vec!["w: Laying out IO file (1 file / 1MiB)"; RANKS];
    want.extend(vec!["r: Laying out IO file (1 file / 1MiB)"; RANKS]);
    assert_eq!(laid, want, "{text}");
    assert!(at("Starting ") < at("w: Laying out"), "{text}");
    assert!(at("r: Laying out") < at("w: (groupid=0"), "{text}");
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_share_one_file_in_segments() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // IOR's segmented layout: rank r writes bytes [r MiB, r+1 MiB).
    let job = "[w]\nfilename=DIR/shared\nrw=write\nbs=64k\nsize=1m\noffset=$rank*1m\n";
    let report = run_ranks(d, job, &["--no-store"]);
    assert_eq!(
        u(&report["jobs"][0]["write"]["io_bytes"]),
        RANKS as u64 * 1024 * 1024
    );
    let len = std::fs::metadata(d.join("shared")).unwrap().len();
    assert_eq!(len, RANKS as u64 * 1024 * 1024);
    for r in report["iolab"]["mpi"]["ranks"].as_array().unwrap() {
        assert_eq!(u(&r["jobs"][0]["write"]["io_bytes"]), 1024 * 1024, "{r}");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_laying_out_one_shared_file_never_shrink_it() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Rank 0 has the last segment (the largest size to lay out), rank 3
    // the first; each writes one block of it. fallocate=truncate and none
    // give the size with ftruncate, which must never undo a larger size
    // another rank gave; then the file ends where rank 0's segment does,
    // not at its one block. Six files over two phases: six chances each
    // for a rank to shrink a file another extended.
    let mut job = String::from(
        "[global]\ndirectory=DIR\nrw=write\nbs=4k\nsize=1m\n\
         offset=($nranks-1-$rank)*1m\nio_size=4k\n",
    );
    for (i, name) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        let mode = if i % 2 == 0 { "truncate" } else { "none" };
        let wall = if i == 3 { "stonewall\n" } else { "" };
        job += &format!("[{name}]\n{wall}filename={name}\nfallocate={mode}\n");
    }
    let report = run_ranks(d, &job, &["--no-store"]);
    let jobs = report["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 6);
    for (j, name) in jobs.iter().zip(["a", "b", "c", "d", "e", "f"]) {
        assert_eq!(u(&j["error"]), 0, "{j}");
        assert_eq!(u(&j["write"]["io_bytes"]), RANKS as u64 * 4096, "{name}");
        let len = std::fs::metadata(d.join(name)).unwrap().len();
        assert_eq!(len, RANKS as u64 * 1024 * 1024, "file {name} is short");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn stonewalling_across_ranks_ends_the_phase_when_the_first_rank_finishes() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    // Rank 0 has 64 KiB to write at 1 MiB/s, rank 3 has 3 MiB.
    let job = "[w]\ndirectory=DIR\nfilename=data.$rank\nrw=write\nbs=4k\n\
               size=64k+$rank*1m\nrate=1m\n";
    let report = run_ranks(dir.path(), job, &["--mpi-stonewall", "--no-store"]);
    let mpi = &report["iolab"]["mpi"];
    assert_eq!(mpi["stonewall"], Value::Bool(true));
    let ranks = mpi["ranks"].as_array().unwrap();
    assert_eq!(u(&ranks[0]["jobs"][0]["write"]["io_bytes"]), 64 * 1024);
    let last = u(&ranks[3]["jobs"][0]["write"]["io_bytes"]);
    assert!(last < 3 * 1024 * 1024 + 64 * 1024, "rank 3 wrote {last}");
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_that_cannot_start_stops_every_rank_and_is_named() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Every rank's directory but rank 2's.
    for r in [0, 1, 3] {
        std::fs::create_dir(d.join(format!("d{r}"))).unwrap();
    }
    std::fs::write(
        d.join("job.fio"),
        format!(
            "[w]\ndirectory={}/d$rank\nfilename=data\nrw=write\nbs=4k\nsize=256k\n",
            d.display()
        ),
    )
    .unwrap();
    let out = mpirun(d, &["run", "job.fio"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 2 ("), "{err}");
    assert!(!err.contains("rank 1 ("), "{err}");
    // The failed job's header names rank 2's error and a real pid (that
    // of the process which tried to lay the file out), as a run on one
    // machine does.
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text
        .lines()
        .find(|l| l.starts_with("w: (groupid=0, jobs=4): err= 2 ("))
        .unwrap_or_else(|| panic!("no failed header: {text}"));
    assert!(header.contains("/d2/data"), "{header}");
    let pid: u32 = header
        .split_once(" pid=")
        .and_then(|(_, p)| p.split(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid: {header}"));
    assert_ne!(pid, 0, "{header}");
    // No rank did I/O: the files the others laid out are gone.
    for r in [0, 1, 3] {
        assert!(entries(&d.join(format!("d{r}"))).is_empty(), "rank {r}");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn meta_phases_total_the_ranks_each_in_its_own_directory() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for r in 0..RANKS {
        std::fs::create_dir(d.join(format!("d{r}"))).unwrap();
    }
    let rank_dir = format!("{}/d$rank", d.display());
    let out = mpirun(
        d,
        &[
            "meta",
            &rank_dir,
            "--files=50",
            "--output-format=json",
            "--no-store",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = json_of(&out.stdout);
    // One rank's run alone, for what each rank does.
    let one = iolab()
        .args(["meta", &format!("{}/d0", d.display()), "--files=50"])
        .args(["--output-format=json", "--no-store"])
        .output()
        .unwrap();
    assert!(one.status.success());
    let one = json_of(&one.stdout);
    let phases = merged["phases"].as_array().unwrap();
    assert_eq!(phases.len(), one["phases"].as_array().unwrap().len());
    let mpi = &merged["mpi"];
    for (p, (m, o)) in phases
        .iter()
        .zip(one["phases"].as_array().unwrap())
        .enumerate()
    {
        assert_eq!(m["phase"], o["phase"]);
        assert_eq!(u(&m["ops"]), RANKS as u64 * u(&o["ops"]), "{}", m["phase"]);
        // Every operation of every rank is in the merged latencies.
        assert_eq!(u(&m["lat_ns"]["N"]), u(&m["ops"]));
        let per_rank: u64 = mpi["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| u(&r[p]))
            .sum();
        assert_eq!(per_rank, u(&m["ops"]));
        // mdtest's rate: all operations over the phase's wall time.
        let rate = u(&m["ops"]) as f64 * 1e9 / u(&m["elapsed_ns"]) as f64;
        assert!((m["ops_per_sec"].as_f64().unwrap() - rate).abs() <= 1e-6 * rate);
    }
    assert_eq!(mpi["start_skew_ns"].as_array().unwrap().len(), phases.len());
    // Every rank's directory is left empty.
    for r in 0..RANKS {
        assert!(entries(&d.join(format!("d{r}"))).is_empty());
    }
}

#[cfg(feature = "mpi")]
#[test]
fn meta_stops_every_rank_when_one_fails_and_names_it() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for r in [0, 1, 3] {
        std::fs::create_dir(d.join(format!("d{r}"))).unwrap();
    }
    let rank_dir = format!("{}/d$rank", d.display());
    let out = mpirun(d, &["meta", &rank_dir, "--files=50", "--no-store"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 2 (") && err.contains("d2"), "{err}");
    assert!(!err.contains("rank 1 ("), "{err}");
    for r in [0, 1, 3] {
        assert!(entries(&d.join(format!("d{r}"))).is_empty(), "rank {r}");
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_that_read_different_job_text_are_refused_before_any_io() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, size) in [("a.fio", "64k"), ("b.fio", "128k")] {
        std::fs::write(
            d.join(name),
            format!(
                "[w]\nfilename={}/data.$rank\nrw=write\nsize={size}\n",
                d.display()
            ),
        )
        .unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    // Ranks 0 and 1 read a.fio, ranks 2 and 3 b.fio (MPMD).
    let session = tempfile::tempdir().unwrap();
    let out = mpirun_in(d, session.path())
        .args(["-np", "2"])
        .arg(&bin)
        .args(["run", "a.fio", ":", "-np", "2"])
        .arg(&bin)
        .args(["run", "b.fio"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("job text differs across ranks"), "{err}");
    assert!(
        err.contains("rank 2 (") && err.contains("rank 3 ("),
        "{err}"
    );
    // Nothing was laid out.
    assert_eq!(entries(d), vec!["a.fio", "b.fio"]);
}

#[cfg(feature = "mpi")]
#[test]
fn meta_ranks_share_one_directory_as_mdtest_does_by_default() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ds = d.display().to_string();
    // A directory that is not there: rank 0, which makes the shared one,
    // says so for all; nothing runs.
    let missing = d.join("missing").display().to_string();
    let out = mpirun(d, &["meta", &missing, "--mpi-shared-dir", "--no-store"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("rank 0 (") && err.contains("does not exist"),
        "{err}"
    );
    let flags = ["--files=50", "--dirs=2", "--output-format=json"];
    let mut args = vec!["meta", ds.as_str(), "--mpi-shared-dir"];
    args.extend(flags);
    let out = mpirun(d, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = json_of(&out.stdout);
    let one = iolab()
        .args(["meta", &ds, "--no-store"])
        .args(flags)
        .output()
        .unwrap();
    assert!(one.status.success());
    let one = json_of(&one.stdout);
    let mpi = &merged["mpi"];
    assert_eq!(mpi["shared_dir"], Value::Bool(true));
    let phases = merged["phases"].as_array().unwrap();
    let ones = one["phases"].as_array().unwrap();
    assert_eq!(phases.len(), ones.len());
    let per_rank = mpi["ops"].as_array().unwrap();
    for (p, (m, o)) in phases.iter().zip(ones).enumerate() {
        let name = m["phase"].as_str().unwrap();
        assert_eq!(m["phase"], o["phase"]);
        let ops = u(&m["ops"]);
        match name {
            // Rank 0 alone makes and removes the shared tree.
            "mkdir" | "rmdir" => {
                assert_eq!(ops, u(&o["ops"]), "{name}");
                assert_eq!(u(&per_rank[1][p]), 0, "{name}");
            }
            // Each rank lists the shared leaves: every rank's files.
            "readdir" => {
                for r in per_rank {
                    assert!(u(&r[p]) >= RANKS as u64 * 50, "{name}: {r}");
                }
            }
            // No two ranks named the same file (create is exclusive), and
            // the totals are N times one rank's.
            _ => assert_eq!(ops, RANKS as u64 * u(&o["ops"]), "{name}"),
        }
        let rate = ops as f64 * 1e9 / u(&m["elapsed_ns"]) as f64;
        assert!((m["ops_per_sec"].as_f64().unwrap() - rate).abs() <= 1e-6 * rate);
    }
    // One directory for all, removed: nothing is left.
    assert!(entries(d).is_empty(), "{:?}", entries(d));
    // The stored result's table: the ranks, each rank's rate per phase
    // (its mkdir a dash: rank 0 made the tree) and the merged line.
    let shown = iolab().args(["show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}");
    assert!(
        text.contains("MPI: 4 ranks on 1 host") && text.contains("all in one shared directory"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("rank "))
        .skip(1)
        .take(RANKS + 1)
        .collect();
    assert_eq!(rows.len(), RANKS + 1, "{text}");
    for (r, row) in rows.iter().take(RANKS).enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], r.to_string(), "{text}");
        assert_eq!(cells[2] == "-", r > 0, "mkdir of rank {r}: {text}");
    }
    assert!(rows[RANKS].starts_with("all "), "{text}");
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_failing_mid_phase_ends_the_run_for_all_and_is_named() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each rank writes 1 MiB in each of two phases; rank 2 may not write
    // files over 128 KiB (dash's `ulimit -f` counts 512-byte blocks), so
    // its writes fail with EFBIG part way through the first phase (the
    // file is made by the job's open, not laid out beforehand).
    std::fs::write(
        d.join("job.fio"),
        format!(
            "[global]\nfilename={}/data.$rank\nrw=write\nbs=64k\nsize=1m\ncreate_on_open=1\n\
             unlink=1\n[w]\n[w2]\nstonewall\n",
            d.display()
        ),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let limited = "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"";
    let args = [
        "run",
        "job.fio",
        "--output-format=json,normal",
        "--no-store",
    ];
    let session = tempfile::tempdir().unwrap();
    let out = mpirun_in(d, session.path())
        .args(["-np", "2"])
        .arg(&bin)
        .args(args)
        .args([":", "-np", "1", "sh", "-c", limited])
        .arg(&bin)
        .args(args)
        .args([":", "-np", "1"])
        .arg(&bin)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 2 (") && err.contains("data.2"), "{err}");
    assert!(
        !err.contains("rank 1 (") && !err.contains("rank 3 ("),
        "{err}"
    );
    // The preamble once, for every rank's threads; then the JSON report,
    // then the normal one.
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("Starting ").count(), 1, "{text}");
    assert!(text.contains("Starting 8 threads (4 MPI ranks)"), "{text}");
    let start = text.find('{').unwrap();
    let report: Value = serde_json::Deserializer::from_str(&text[start..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    assert!(text.contains("MPI: 4 ranks on 1 host"), "{text}");
    let ranks = report["iolab"]["mpi"]["ranks"].as_array().unwrap();
    for (r, rank) in ranks.iter().enumerate() {
        let wrote = u(&rank["jobs"][0]["write"]["io_bytes"]);
        if r == 2 {
            // Part way: after some writes, before the end.
            assert!(wrote > 0 && wrote < 1 << 20, "rank 2 wrote {wrote}");
            assert!(rank["failure"].as_str().unwrap().contains("EFBIG"));
        } else {
            assert_eq!(wrote, 1 << 20, "rank {r}");
        }
        // The second phase started on no rank.
        assert_eq!(u(&rank["jobs"][1]["write"]["io_bytes"]), 0, "rank {r}");
    }
    assert_eq!(u(&report["jobs"][0]["error"]), 27);
    // unlink=1: every rank's file is gone, the failed one's too.
    assert_eq!(entries(d), vec!["job.fio"]);
}

#[cfg(feature = "mpi")]
#[test]
fn a_failing_rank_ends_a_stonewalled_steadystate_phase_for_every_rank() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A 20-second job at 1 MiB/s whose steady-state detection cannot be
    // satisfied in that time (a 60-second window); rank 2 may not write
    // past 128 KiB, so it fails at once and, with --mpi-stonewall, ends
    // the phase for every rank while their steady-state watch samples.
    std::fs::write(
        d.join("job.fio"),
        format!(
            "[w]\nfilename={}/data.$rank\nrw=write\nbs=64k\nsize=32m\nrate=1m\n\
             time_based\nruntime=20s\ncreate_on_open=1\nunlink=1\nss=iops:0.1%\nss_dur=60\n",
            d.display()
        ),
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let limited = "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"";
    let args = [
        "run",
        "job.fio",
        "--output-format=json",
        "--no-store",
        "--mpi-stonewall",
    ];
    let session = tempfile::tempdir().unwrap();
    let out = mpirun_in(d, session.path())
        .args(["-np", "2"])
        .arg(&bin)
        .args(args)
        .args([":", "-np", "1", "sh", "-c", limited])
        .arg(&bin)
        .args(args)
        .args([":", "-np", "1"])
        .arg(&bin)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 2 (") && err.contains("EFBIG"), "{err}");
    let report = json_of(&out.stdout);
    let ranks = report["iolab"]["mpi"]["ranks"].as_array().unwrap();
    for (r, rank) in ranks.iter().enumerate() {
        // Stopped within a few seconds of rank 2's failure, far from the
        // 20 MiB the runtime allows.
        let wrote = u(&rank["jobs"][0]["write"]["io_bytes"]);
        assert!(wrote > 0 && wrote < 8 << 20, "rank {r} wrote {wrote}");
    }
    // Each rank's detection ran and did not see a steady job.
    let ss = &report["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], Value::from(0), "{ss}");
    assert_eq!(entries(d), vec!["job.fio"]);
}

#[cfg(feature = "mpi")]
#[test]
fn ctrl_c_under_mpirun_stops_every_meta_rank_and_removes_its_files() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for r in 0..RANKS {
        std::fs::create_dir(d.join(format!("d{r}"))).unwrap();
    }
    let rank_dir = format!("{}/d$rank", d.display());
    let session = tempfile::tempdir().unwrap();
    let mut child = mpirun_in(d, session.path())
        .arg("-np")
        .arg(RANKS.to_string())
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["meta", &rank_dir, "--files=2000000", "--no-store"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Every rank is creating files: its 100th exists.
    let creating = |r: usize| {
        entries(&d.join(format!("d{r}")))
            .iter()
            .any(|w| d.join(format!("d{r}")).join(w).join("f100").exists())
    };
    let mut polls = 0u64;
    while !(0..RANKS).all(creating) {
        polls += 1;
        if let Some(s) = child.try_wait().unwrap() {
            panic!("mpirun ended before the ranks were creating files: {s}");
        }
        std::thread::yield_now();
        assert!(polls < 50_000_000, "the ranks never started creating");
    }
    let sent = Proc::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    for r in 0..RANKS {
        assert!(
            entries(&d.join(format!("d{r}"))).is_empty(),
            "rank {r}: {err}"
        );
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_that_run_different_iolab_builds_are_refused_before_any_io() {
    require!(mpirun);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("job.fio"),
        format!(
            "[w]\nfilename={}/data.$rank\nrw=write\nsize=64k\n",
            d.display()
        ),
    )
    .unwrap();
    // Another build of the same version: the same executable one byte
    // longer (the loader ignores what follows the ELF image).
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let other = d.join("iolab-other");
    std::fs::copy(&bin, &other).unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&other)
            .unwrap();
        f.write_all(b"\n").unwrap();
    }
    let session = tempfile::tempdir().unwrap();
    let out = mpirun_in(d, session.path())
        .args(["-np", "2"])
        .arg(&bin)
        .args(["run", "job.fio", ":", "-np", "2"])
        .arg(&other)
        .args(["run", "job.fio"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("different iolab builds"), "{err}");
    assert!(
        err.contains("rank 2 (") && err.contains("rank 3 (") && !err.contains("rank 1 ("),
        "{err}"
    );
    // Nothing was laid out.
    assert_eq!(entries(d), vec!["iolab-other", "job.fio"]);
}

#[test]
fn the_default_build_runs_without_mpi() {
    // Outside mpirun, a job with $rank runs as rank 0 of 1.
    let dir = tempfile::tempdir().unwrap();
    let report = run_json(
        dir.path(),
        &[
            "--name=w",
            "--filename=data.$rank.of.$nranks",
            "--rw=write",
            "--size=64k",
            "--no-store",
        ],
    );
    assert_eq!(report["jobs"][0]["write"]["io_bytes"], 64 * 1024);
    assert!(dir.path().join("data.0.of.1").exists());
    assert!(report["iolab"].get("mpi").is_none());
    if cfg!(feature = "mpi") {
        return;
    }
    // Stonewalling across ranks is refused where there are no ranks.
    let out = iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--name=w",
            "--filename=f",
            "--size=64k",
            "--mpi-stonewall",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mpi-stonewall"));
    // And the binary does not link MPI.
    if let Ok(o) = Proc::new("ldd")
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .output()
    {
        assert!(!String::from_utf8_lossy(&o.stdout).contains("libmpi"));
    }
}
