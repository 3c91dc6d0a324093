//! iolab against the real fio on jobs whose I/O once differed: each job runs
//! in a fresh directory under both tools, and the jobs' names, io_bytes,
//! total_ios and the files left behind (names and sizes) must be the same.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// What a run did: per job its name, bytes and I/Os (reads and writes
/// together), and the files in the directory with their sizes.
#[derive(Debug, PartialEq)]
struct Done {
    jobs: Vec<(String, u64, u64)>,
    files: Vec<(String, u64)>,
}

fn done(report: &Value, dir: &Path) -> Done {
    let jobs = report["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|j| {
            let sum = |key: &str| {
                ["read", "write", "trim"]
                    .iter()
                    .map(|d| j[d][key].as_u64().unwrap_or(0))
                    .sum::<u64>()
            };
            (
                j["jobname"].as_str().unwrap_or_default().to_string(),
                sum("io_bytes"),
                sum("total_ios"),
            )
        })
        .collect();
    let files = entries(dir)
        .into_iter()
        .filter(|n| n != "job.fio")
        .map(|n| {
            let len = std::fs::metadata(dir.join(&n)).unwrap().len();
            (n, len)
        })
        .collect();
    Done { jobs, files }
}

/// Runs the job text (DIR stands for the directory) under fio and under
/// iolab, each in a fresh directory; what each did.
fn both(text: &str) -> (Done, Done) {
    let fio_dir = tempfile::tempdir().unwrap();
    let job = fio_dir.path().join("job.fio");
    std::fs::write(&job, text.replace("DIR", &fio_dir.path().to_string_lossy())).unwrap();
    let out = Proc::new("fio")
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fio = done(&json_of(&out.stdout), fio_dir.path());

    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, text.replace("DIR", &dir.path().to_string_lossy())).unwrap();
    let report = run_json(dir.path(), &["--no-store", job.to_str().unwrap()]);
    (fio, done(&report, dir.path()))
}

fn same_as_fio(text: &str) -> Done {
    let (fio, iolab) = both(text);
    assert_eq!(iolab, fio, "job:\n{text}");
    iolab
}

#[test]
fn filesize_larger_than_size_does_size_bytes_in_a_file_of_filesize() {
    require!(fio);
    let d = same_as_fio("[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=4m\n");
    assert_eq!(d.jobs[0].1, 4 << 20);
    assert_eq!(d.files, [("t.0.0".to_string(), 8 << 20)]);

    let d = same_as_fio("[t]\ndirectory=DIR\nrw=write\nnrfiles=4\nfilesize=1m\nsize=2m\n");
    assert_eq!(d.jobs[0].1, 2 << 20);
    assert_eq!(d.files.len(), 4);

    // A percentage offset of a file the job creates is 0, as in fio; the
    // file stays filesize bytes.
    let d = same_as_fio("[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=4m\noffset=50%\n");
    assert_eq!(d.files, [("t.0.0".to_string(), 8 << 20)]);

    for text in [
        "[t]\ndirectory=DIR\nrw=randwrite\nfilesize=8m\nsize=4m\n",
        "[t]\ndirectory=DIR\nrw=randread\nfilesize=8m\nsize=4m\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=8m\noffset=1m\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=6m\noffset=50%\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=2m\nsize=8m\n",
        "[t]\ndirectory=DIR\nrw=write\nnrfiles=2\nfilesize=4m\nsize=6m\noffset=1m\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=4m\nio_size=6m\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=50%\n",
        "[t]\ndirectory=DIR\nrw=write\nsize=8m\noffset=1m\n",
        "[t]\ndirectory=DIR\nrw=write\nfilesize=8m\nsize=4m\nnumjobs=2\noffset_increment=2m\n",
    ] {
        same_as_fio(text);
    }
}

#[test]
fn a_global_name_keeps_each_section_name_for_the_job_and_its_files() {
    require!(fio);
    let d = same_as_fio(
        "[global]\nname=gname\ndirectory=DIR\nsize=256k\nrw=write\n[job1]\n[job2]\nname=explicit\n",
    );
    let names: Vec<&str> = d.jobs.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(names, ["job1", "explicit"]);
    let files: Vec<&str> = d.files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(files, ["job1.0.0", "job2.0.0"]);
}

#[test]
fn random_sizes_with_the_random_map_cover_each_byte_once_and_stop_at_size() {
    require!(fio);
    for text in [
        "[t]\ndirectory=DIR\nrw=randwrite\nbssplit=4k/50:64k/50\nsize=16m\n",
        "[t]\ndirectory=DIR\nrw=randread\nbsrange=4k-64k\nsize=8m\n",
        "[t]\ndirectory=DIR\nrw=randrw\nbssplit=4k/50:64k/50\nsize=8m\n",
        "[t]\ndirectory=DIR\nrw=randwrite\nbssplit=4k/50:64k/50\nsize=4m\nloops=2\n",
        // A sequential pass ends on the region's end with a shorter I/O.
        "[t]\ndirectory=DIR\nrw=write\nbssplit=4k/50:64k/50\nsize=8m\n",
    ] {
        let (fio, iolab) = both(text);
        assert_eq!(iolab.files, fio.files, "{text}");
        assert_eq!(iolab.jobs.len(), 1);
        // The bytes are exactly fio's: each pass covers the file once.
        assert_eq!(iolab.jobs[0].1, fio.jobs[0].1, "{text}");
        // The I/Os are cut where touched blocks begin, so there are about
        // as many as fio's (the random streams differ, so not the same
        // count): without cutting there would be half as many.
        let (ours, theirs) = (iolab.jobs[0].2 as f64, fio.jobs[0].2 as f64);
        assert!(
            ours > theirs * 0.75 && ours < theirs * 1.33,
            "{text}: {ours} I/Os, fio {theirs}"
        );
    }
}

#[test]
fn syntax_fio_accepts_runs_the_same_io() {
    require!(fio);
    for text in [
        // A negative gap reads backwards.
        "[t]\ndirectory=DIR\nrw=read:-8k\nbs=4k\nsize=1m\n",
        "[t]\ndirectory=DIR\nrw=write:-16k\nbs=4k\nsize=1m\n",
        // An empty last zone takes the rest of the region.
        "[t]\ndirectory=DIR\nrw=randread\nsize=4m\nrandom_distribution=zoned:50/5:30/15:20/\n",
        "[t]\ndirectory=DIR\nrw=read\nsize=1m\noffset=0%\n",
        // fio's tiobench profile option, ignored in a job.
        "[t]\ndirectory=DIR\nrw=read\nsize=1m\nthreads=4\n",
    ] {
        same_as_fio(text);
    }
}

/// The offsets of the preads of a trace, in order.
fn pread_offsets(trace: &str) -> Vec<u64> {
    trace
        .lines()
        .filter(|l| l.contains("pread64(") && l.ends_with("= 4096"))
        .filter_map(|l| {
            let args = l.split(") =").next()?;
            args.rsplit(", ").next()?.trim().parse().ok()
        })
        .collect()
}

#[test]
fn a_negative_gap_reads_the_same_offsets_as_fio() {
    require!(fio, strace);
    let job = ["--name=t", "--rw=read:-8k", "--bs=4k", "--size=64k"];
    let fio_dir = tempfile::tempdir().unwrap();
    let trace = fio_dir.path().join("fio.trace");
    let out = Proc::new("strace")
        .args(["-f", "-e", "trace=pread64", "-o"])
        .arg(&trace)
        .args(["fio", "--ioengine=psync", "--output-format=json"])
        .arg(format!("--directory={}", fio_dir.path().display()))
        .args(job)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fio = pread_offsets(&std::fs::read_to_string(&trace).unwrap());

    let dir = tempfile::tempdir().unwrap();
    let dir_arg = format!("--directory={}", dir.path().display());
    let mut args = vec![dir_arg.as_str()];
    args.extend(job);
    let (out, text) = strace_iolab_run(dir.path(), &["-e", "trace=pread64"], &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = pread_offsets(&text);

    let k = |v: &[u64]| v.iter().map(|o| o / 4096).collect::<Vec<_>>();
    assert_eq!(
        k(&fio),
        [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
        "fio's offsets, in 4k blocks"
    );
    assert_eq!(k(&ours), k(&fio));
}

#[test]
fn a_filesize_range_gives_each_file_a_size_in_it() {
    require!(fio);
    for (text, bs) in [
        (
            "[t]\ndirectory=DIR\nrw=write\nnrfiles=4\nfilesize=1m-4m\n",
            4096,
        ),
        (
            "[t]\ndirectory=DIR\nrw=write\nfilesize=1m-4m\nbs=64k\n",
            65536,
        ),
        (
            "[t]\ndirectory=DIR\nrw=randread\nnrfiles=3\nfilesize=64k-1m\n",
            4096,
        ),
    ] {
        let (fio, iolab) = both(text);
        for d in [&fio, &iolab] {
            let names: Vec<&str> = d.files.iter().map(|f| f.0.as_str()).collect();
            let fio_names: Vec<&str> = fio.files.iter().map(|f| f.0.as_str()).collect();
            assert_eq!(names, fio_names, "{text}");
            let (low, high) = if text.contains("64k-1m") {
                (64 << 10, 1 << 20)
            } else {
                (1 << 20, 4 << 20)
            };
            for (name, len) in &d.files {
                assert!(
                    (low..=high).contains(len) && len % bs == 0,
                    "{text}: {name} is {len} bytes"
                );
            }
            // Without size, the job moves its files' bytes.
            let total: u64 = d.files.iter().map(|f| f.1).sum();
            assert_eq!(d.jobs[0].1, total, "{text}: {d:?}");
        }
    }
    // With size, the bytes are size, over files of random sizes.
    let (fio, iolab) = both("[t]\ndirectory=DIR\nrw=write\nnrfiles=4\nfilesize=1m-4m\nsize=6m\n");
    assert_eq!(
        (iolab.jobs[0].1, iolab.jobs[0].2),
        (fio.jobs[0].1, fio.jobs[0].2)
    );
}
