//! Options and engines of fio 3.33 that iolab once refused, each run under
//! fio and under iolab on the same job in fresh directories: the jobs'
//! io_bytes and total_ios per direction, their errors, and the files left
//! behind (names and sizes) must agree, and each test checks what the
//! option changes besides.

mod common;
use common::*;
use iolab_testkit::require;

use std::path::Path;
use std::process::Command as Proc;

use serde_json::Value;

/// What a run did: per job its name, error, bytes and I/Os per direction
/// (read, write, trim), and the files in the directory with their sizes.
#[derive(Debug, PartialEq)]
struct Done {
    jobs: Vec<Job>,
    files: Vec<(String, u64)>,
}

#[derive(Debug, PartialEq)]
struct Job {
    name: String,
    error: i64,
    bytes: [u64; 3],
    ios: [u64; 3],
}

fn done(report: &Value, dir: &Path) -> Done {
    let jobs = report["jobs"]
        .as_array()
        .expect("a jobs array")
        .iter()
        .map(|j| {
            let per =
                |key: &str| ["read", "write", "trim"].map(|d| j[d][key].as_u64().unwrap_or(0));
            Job {
                name: j["jobname"].as_str().unwrap_or_default().to_string(),
                error: j["error"].as_i64().unwrap_or(0),
                bytes: per("io_bytes"),
                ios: per("total_ios"),
            }
        })
        .collect();
    Done {
        jobs,
        files: files_in(dir),
    }
}

/// The files of a directory but the job file, with their sizes.
fn files_in(dir: &Path) -> Vec<(String, u64)> {
    entries(dir)
        .into_iter()
        .filter(|n| n != "job.fio")
        .map(|n| {
            let len = std::fs::metadata(dir.join(&n)).unwrap().len();
            (n, len)
        })
        .collect()
}

/// A run of one tool: its report, and its directory (kept for the test).
struct Ran {
    report: Value,
    dir: tempfile::TempDir,
    stdout: String,
}

impl Ran {
    fn done(&self) -> Done {
        done(&self.report, self.dir.path())
    }
    #[allow(dead_code)]
    fn job(&self, i: usize) -> &Value {
        &self.report["jobs"][i]
    }
}

fn job_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, text.replace("DIR", &dir.path().to_string_lossy())).unwrap();
    (dir, job)
}

/// Runs the job text (DIR stands for the directory) under fio, in the
/// directory; its report.
fn fio(text: &str) -> Ran {
    let (dir, job) = job_file(text);
    let out = Proc::new("fio")
        .current_dir(dir.path())
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ran {
        report: json_of(&out.stdout),
        dir,
        stdout,
    }
}

/// The same under iolab.
fn iolab_run(text: &str) -> Ran {
    let (dir, job) = job_file(text);
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "--no-store", "--output-format=json"])
        .arg(&job)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Ran {
        report: json_of(&out.stdout),
        dir,
        stdout,
    }
}

/// Both runs, which must have done the same.
fn same_as_fio(text: &str) -> (Ran, Ran) {
    let (f, i) = (fio(text), iolab_run(text));
    assert_eq!(i.done(), f.done(), "job:\n{text}\niolab: {}", i.stdout);
    (f, i)
}

/// Blocks allocated to a file, in bytes.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

// ---- engines: falloc, ftruncate ----

#[test]
fn falloc_allocates_punches_and_moves_no_data_as_fio() {
    require!(fio);
    // A write job allocates its file; a read job reads a laid-out file by
    // allocating (keeping its size); a trim job punches holes in a regular
    // file.
    let (f, i) = same_as_fio(
        "[w]\nioengine=falloc\nrw=write\nsize=4m\nbs=64k\nfilename=DIR/w\n\
         [r]\nstonewall\nioengine=falloc\nrw=read\nsize=2m\nbs=64k\nfilename=DIR/r\n\
         [t]\nstonewall\nioengine=falloc\nrw=trim\nsize=1m\nbs=64k\nfilename=DIR/t\n",
    );
    let d = i.done();
    assert_eq!(d.jobs[0].bytes, [0, 4 << 20, 0]);
    assert_eq!(d.jobs[0].ios, [0, 64, 0]);
    assert_eq!(d.jobs[1].bytes, [2 << 20, 0, 0]);
    assert_eq!(d.jobs[2].bytes, [0, 0, 1 << 20]);
    for ran in [&f, &i] {
        assert!(allocated(&ran.dir.path().join("w")) >= 4 << 20);
        // Every hole punched: nothing of the trimmed file stays allocated.
        assert_eq!(allocated(&ran.dir.path().join("t")), 0);
    }
}

#[test]
fn ftruncate_sets_the_size_at_each_write_and_refuses_reads_as_fio() {
    require!(fio);
    let (_, i) =
        same_as_fio("[t]\nioengine=ftruncate\nrw=write\nsize=1m\nbs=64k\nfilename=DIR/f\n");
    // The last write truncated the file at its offset.
    assert_eq!(i.done().files, [("f".to_string(), (1 << 20) - (64 << 10))]);
    assert_eq!(i.done().jobs[0].ios, [0, 16, 0]);
    // A read is EINVAL, the job's error in both.
    let (_, i) = same_as_fio("[t]\nioengine=ftruncate\nrw=read\nsize=1m\nbs=64k\nfilename=DIR/f\n");
    assert_eq!(i.done().jobs[0].error, 22);
}

// ---- engines that do no I/O: cpuio, exec ----

/// The parts of two runs of a job that does no I/O that must agree (the
/// count of its I/Os, one per cycle, depends on timing): no bytes in any
/// direction, some I/Os all counted as reads, the same files, no disk.
fn same_noio(f: &Ran, i: &Ran) {
    let (fd, id) = (f.done(), i.done());
    let names = |d: &Done| d.files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&id), names(&fd));
    for (a, b) in id.jobs.iter().zip(&fd.jobs) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.error, b.error);
        assert_eq!(a.bytes, [0, 0, 0]);
        assert_eq!(b.bytes, [0, 0, 0]);
        assert!(a.ios[0] > 0 && b.ios[0] > 0, "{a:?} {b:?}");
        assert_eq!((a.ios[1], a.ios[2]), (b.ios[1], b.ios[2]));
    }
    assert_eq!(i.report.get("disk_util"), f.report.get("disk_util"));
}

#[test]
fn cpuio_burns_cpu_in_cycles_and_moves_nothing_as_fio() {
    require!(fio);
    let text = "[burn]\nioengine=cpuio\ncpuload=50\ncpuchunks=20000\nruntime=1\n";
    let (f, i) = (fio(text), iolab_run(text));
    same_noio(&f, &i);
    // Busy half of each 40 ms cycle: about 25 I/Os of about 20 ms each,
    // and CPU time spent in user space.
    let j = i.job(0);
    assert!(j["usr_cpu"].as_f64().unwrap() > 0.0, "{j}");
    assert!(j["read"]["clat_ns"]["min"].as_u64().unwrap() >= 20_000_000);
    assert!(i.done().files.is_empty());

    // exit_on_io_done: the cpuio job stops when the job that does I/O has
    // finished, long before its runtime.
    let text = "[burn]\nioengine=cpuio\ncpuload=10\nruntime=30\nexit_on_io_done=1\n\
                [w]\nrw=write\nsize=1m\nfilename=DIR/w\n";
    let (f, i) = (fio(text), iolab_run(text));
    for r in [&f, &i] {
        assert!(r.job(0)["job_runtime"].as_u64().unwrap() < 30_000);
    }
    assert_eq!(i.done().jobs[1], f.done().jobs[1]);
    assert_eq!(i.done().files, f.done().files);
}

#[test]
fn cpuio_without_cpuload_or_an_end_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["--name=b", "--ioengine=cpuio", "--runtime=1"][..],
            "cpuload",
        ),
        (
            &["--name=b", "--ioengine=cpuio", "--cpuload=5"][..],
            "runtime=",
        ),
        (
            &["--name=b", "--ioengine=exec", "--runtime=1"][..],
            "program=",
        ),
    ] {
        let out = iolab()
            .current_dir(dir.path())
            .args(["run", "--no-store"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn exec_runs_the_program_beside_the_job_and_stops_it_as_fio() {
    require!(fio);
    // fio's arguments split on spaces (and `;` starts a comment), so the
    // program is a script: it says how it was started, then waits for the
    // SIGTERM that comes after the runtime.
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        script.path(),
        "echo args \"$@\"\necho oops >&2\ntrap 'echo term; exit 0' TERM\nwhile :; do sleep 0.05; done\n",
    )
    .unwrap();
    let text = format!(
        "[s]\nioengine=exec\nprogram=/bin/sh\narguments={} %n %r\nruntime=1\ngrace_time=1\n",
        script.path().display()
    );
    let (f, i) = (fio(&text), iolab_run(&text));
    same_noio(&f, &i);
    for r in [&f, &i] {
        let read = |n: &str| std::fs::read_to_string(r.dir.path().join(n)).unwrap();
        // Whether the SIGTERM comes before the job's end is a race in
        // both (fio sends it from an I/O that starts after the runtime).
        let out = read("s.stdout");
        assert!(out == "args s 1\n" || out == "args s 1\nterm\n", "{out}");
        assert_eq!(read("s.stderr"), "oops\n");
    }
    // std_redirect=0: the program's output is the run's own.
    let text = text + "std_redirect=0\n";
    let (f, i) = (fio(&text), iolab_run(&text));
    same_noio(&f, &i);
    assert!(i.done().files.is_empty());
}

// ---- ignore_error ----

/// The error counts a report shows (fio shows them with continue_on_error
/// or ignore_error only).
fn error_counts(r: &Ran) -> (Option<u64>, Option<u64>) {
    let j = r.job(0);
    (j["total_err"].as_u64(), j["first_error"].as_u64())
}

#[test]
fn ignore_error_lists_errors_per_kind_as_fio() {
    require!(fio);
    // Every read of the ftruncate engine fails with EINVAL (22), which is
    // not among the errors continue_on_error goes on after by default.
    let base = "[t]\nioengine=ftruncate\nrw=read\nsize=256k\nbs=64k\nfilename=DIR/f\n";
    for (extra, goes_on, counts) in [
        ("", false, (None, None)),
        ("ignore_error=EINVAL\n", true, (Some(4), Some(22))),
        ("ignore_error=22\n", true, (Some(4), Some(22))),
        ("ignore_error=EIO:-22\n", true, (Some(4), Some(22))),
        // A list for writes only: reads stop at the first error, which
        // is not counted (fio counts the errors of kinds it may go on
        // after).
        ("ignore_error=,EINVAL\n", false, (Some(0), Some(0))),
        ("continue_on_error=read\n", false, (Some(1), Some(22))),
        (
            "continue_on_error=read\nignore_error=EINVAL\n",
            true,
            (Some(4), Some(22)),
        ),
        // continue_on_error after ignore_error sets the kinds anew.
        (
            "ignore_error=EINVAL\ncontinue_on_error=none\n",
            false,
            (None, None),
        ),
    ] {
        let text = format!("{base}{extra}");
        let (f, i) = (fio(&text), iolab_run(&text));
        let (fd, id) = (f.done(), i.done());
        assert_eq!(id.files, fd.files, "{extra}");
        assert_eq!(id.jobs[0].ios, fd.jobs[0].ios, "{extra}");
        assert_eq!(id.jobs[0].ios[0], if goes_on { 4 } else { 1 }, "{extra}");
        assert_eq!(error_counts(&i), error_counts(&f), "{extra}");
        assert_eq!(error_counts(&i), counts, "{extra}");
        // A job that went on reports no error in iolab; fio keeps the
        // last one in its error field (and exits 0 all the same).
        assert_eq!(id.jobs[0].error, if goes_on { 0 } else { 22 }, "{extra}");
        assert_eq!(fd.jobs[0].error, 22, "{extra}");
    }
}

#[test]
fn ignore_error_with_a_name_fio_does_not_know_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab()
        .current_dir(dir.path())
        .args(["run", "--no-store", "--name=t", "--size=64k"])
        .arg("--ignore_error=EILSEQ")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ignore_error") && err.contains("EILSEQ"),
        "{err}"
    );
    assert!(entries(dir.path()).is_empty());
}

// ---- create_serialize ----

#[test]
fn create_serialize_lays_out_the_same_files_for_the_same_io_as_fio() {
    require!(fio);
    for v in [0, 1] {
        let (_, i) = same_as_fio(&format!(
            "[global]\ndirectory=DIR\nrw=read\nbs=64k\nsize=2m\nnrfiles=2\ncreate_serialize={v}\n\
             [a]\n[b]\n"
        ));
        let d = i.done();
        assert_eq!(d.files.len(), 4);
        assert!(d.files.iter().all(|f| f.1 == 1 << 20), "{:?}", d.files);
        assert_eq!(d.jobs[0].bytes, [2 << 20, 0, 0]);
    }
}

// ---- log_prio, io_submit_mode ----

#[test]
fn log_prio_writes_the_priority_column_as_fio() {
    require!(fio);
    let text = "[l]\nrw=read\nsize=64k\nbs=16k\nfilename=DIR/f\nwrite_lat_log=l\nlog_prio=1\n\
                log_offset=1\n";
    let (f, i) = (fio(text), iolab_run(text));
    // The logs' sizes differ with the latencies' digits.
    let names = |r: &Ran| r.done().files.into_iter().map(|f| f.0).collect::<Vec<_>>();
    assert_eq!(names(&i), names(&f));
    assert_eq!(i.done().jobs, f.done().jobs);
    let columns = |r: &Ran| -> Vec<Vec<String>> {
        std::fs::read_to_string(r.dir.path().join("l_clat.1.log"))
            .unwrap()
            .lines()
            .map(|l| {
                let c: Vec<String> = l.split(", ").map(str::to_string).collect();
                // Time and latency differ; direction, size, offset and
                // priority must not.
                c[2..].to_vec()
            })
            .collect()
    };
    assert_eq!(columns(&i), columns(&f));
    assert_eq!(columns(&i)[0], ["0", "16384", "0", "0x0000"]);
}

#[test]
fn io_submit_mode_offload_does_the_same_io_as_fio() {
    require!(fio);
    // Synchronous engines only: fio's own documentation warns that offload
    // is not reliable with asynchronous ones (fio 3.33 can hang with
    // libaio).
    for extra in ["", "ioengine=pvsync\n"] {
        same_as_fio(&format!(
            "[o]\nrw=randread\nsize=1m\nbs=4k\nfilename=DIR/f\nio_submit_mode=offload\n{extra}"
        ));
    }
}

// ---- zonemode ----

#[test]
fn zonemode_zbd_is_refused_where_nothing_is_zoned() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |filename: &str, want: &str| {
        let out = iolab()
            .current_dir(dir.path())
            .args([
                "run",
                "--no-store",
                "--name=z",
                "--size=1m",
                "--zonemode=zbd",
            ])
            .arg(format!("--filename={filename}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("zonemode=zbd") && err.contains(want), "{err}");
    };
    refused("f", "is not a block device");
    assert!(entries(dir.path()).is_empty());
    // zonemode=strided without zonesize, as fio: refused, naming it.
    let out = iolab()
        .current_dir(dir.path())
        .args([
            "run",
            "--no-store",
            "--name=z",
            "--size=1m",
            "--zonemode=strided",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("zonemode=strided needs zonesize"), "{err}");
    // A block device that is not zoned (a loop device).
    let img = dir.path().join("img");
    std::fs::write(&img, vec![0u8; 4 << 20]).unwrap();
    let dev = iolab_testkit::need!(LoopDev::attach(&img));
    refused(&dev.dev, "is not zoned");
}

/// Direction, size and offset of each I/O, from the job's completion
/// latency log (written with log_offset=1).
fn io_sequence(r: &Ran) -> Vec<Vec<String>> {
    std::fs::read_to_string(r.dir.path().join("l_clat.1.log"))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").skip(2).take(3).map(str::to_string).collect())
        .collect()
}

#[test]
fn zonemode_strided_touches_the_offsets_fio_touches() {
    require!(fio);
    for zones in [
        // Zones following each other, back to the start past the end.
        "rw=write\nsize=128k\nzonesize=16k\nzoneskip=16k\n",
        // A zone's bytes more than its range: over it again.
        "rw=read\nsize=256k\nzonesize=24k\nzonerange=16k\nzoneskip=16k\n",
        // From the job's offset, wrapping back to it.
        "rw=read\noffset=64k\nsize=256k\nzonesize=8k\nzonerange=16k\nzoneskip=16k\n",
        // The last zone past the file's end ends the job early.
        "rw=read\nsize=100k\nzonesize=16k\nzonerange=32k\nzoneskip=16k\n",
        // Random offsets in each zone, a fresh random map per range.
        "rw=randrw\nsize=256k\nzonesize=24k\nzonerange=16k\nzoneskip=16k\n",
        // Two files: the one whose next zone is past its end is done, the
        // other goes on.
        "rw=read\nnrfiles=2\nsize=200k\nzonesize=16k\nzonerange=32k\nzoneskip=16k\n",
        "rw=randread\nnrfiles=3\nsize=300k\nzonesize=16k\nzonerange=32k\nzoneskip=16k\n",
        // Loops: the zone and the position in it go on from the last
        // loop, which stopped inside a zone.
        "rw=read\nsize=128k\nio_size=40k\nzonesize=16k\nzoneskip=16k\nloops=2\n",
        "rw=randread\nsize=64k\nzonesize=8k\nzonerange=16k\nzoneskip=16k\nloops=2\n",
    ] {
        let text = format!(
            "[z]\ndirectory=DIR\nbs=4k\nzonemode=strided\n{zones}write_lat_log=l\nlog_offset=1\n"
        );
        let (f, i) = (fio(&text), iolab_run(&text));
        assert_eq!(i.done().jobs, f.done().jobs, "{text}");
        assert_eq!(io_sequence(&i), io_sequence(&f), "{text}");
        assert!(!io_sequence(&i).is_empty());
    }
}

// ---- flow ----

#[test]
fn flow_keeps_the_ios_of_two_jobs_in_the_ratio_of_their_weights_as_fio() {
    require!(fio);
    // Two equally fast jobs of one flow id, weighted 3 and 1: both tools
    // hold the lighter one back, 3 I/Os to 1. The think time paces both,
    // so that the one that ends last runs alone only for a few I/Os
    // (their clocks start apart), however busy the machine.
    let text = "[global]\nioengine=null\nsize=1g\nrw=randread\ntime_based\nruntime=500ms\n\
                thinktime=1ms\nflow_id=4\n[a]\nflow=3\n[b]\nflow=1\n";
    for r in [fio(text), iolab_run(text)] {
        let ios = |i: usize| r.job(i)["read"]["total_ios"].as_u64().unwrap_or(0);
        let (a, b) = (ios(0), ios(1));
        assert!(b >= 20, "{}", r.stdout);
        let ratio = a as f64 / b as f64;
        assert!((2.5..=3.5).contains(&ratio), "a={a} b={b}: {}", r.stdout);
    }
}

// ---- verify_dump ----

/// Runs the job text (DIR stands for `dir`) under fio or iolab in `dir`;
/// its report and standard error.
fn run_in(dir: &Path, with_fio: bool, text: &str) -> (Value, String) {
    run_in_with(dir, with_fio, text, &[])
}

/// `run_in` with program flags (`--aux-path=...`) before the job file.
fn run_in_with(dir: &Path, with_fio: bool, text: &str, flags: &[&str]) -> (Value, String) {
    let job = dir.join("job.fio");
    std::fs::write(&job, text.replace("DIR", &dir.to_string_lossy())).unwrap();
    let out = if with_fio {
        Proc::new("fio")
            .current_dir(dir)
            .arg("--output-format=json")
            .args(flags)
            .arg(&job)
            .output()
            .unwrap()
    } else {
        iolab()
            .current_dir(dir)
            .args(["run", "--no-store", "--output-format=json"])
            .args(flags)
            .arg(&job)
            .output()
            .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (json_of(&out.stdout), stderr)
}

/// Flips one bit of the byte at `at` of `path`.
fn flip_byte(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x20;
    f.write_all_at(&b, at).unwrap();
}

#[test]
fn verify_dump_writes_the_failed_block_as_read_and_as_expected_as_fio() {
    require!(fio);
    let write = "[w]\nfilename=DIR/data\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\ndo_verify=0\n";
    let check = "[v]\nfilename=DIR/data\nrw=read\nbs=4k\nsize=64k\nverify=crc32c\nverify_dump=1\n";
    // A byte of the data of block 5, and a byte of the magic of block 9's
    // header (no seed to regenerate from: the block as read only).
    for (at, block, kinds) in [
        (5 * 4096 + 1234, 5 * 4096, &["expected", "received"][..]),
        (9 * 4096 + 1, 9 * 4096, &["hdr_fail"][..]),
    ] {
        let mut names = Vec::new();
        for with_fio in [true, false] {
            let tool = if with_fio { "fio" } else { "iolab" };
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let (w, err) = run_in(d, with_fio, write);
            assert_eq!(w["jobs"][0]["error"], 0, "{tool}: {err}");
            flip_byte(&d.join("data"), at);
            let (v, err) = run_in(d, with_fio, check);
            assert_eq!(v["jobs"][0]["error"], 84, "{tool}: {err}");
            let dumps: Vec<String> = entries(d)
                .into_iter()
                .filter(|n| n.starts_with("data."))
                .collect();
            let want: Vec<String> = kinds.iter().map(|k| format!("data.{block}.{k}")).collect();
            assert_eq!(dumps, want, "{tool}: {err}");
            // The block as read is what the file holds there.
            let file = std::fs::read(d.join("data")).unwrap();
            let read_back = &file[block as usize..block as usize + 4096];
            let received = kinds.last().unwrap();
            let got = std::fs::read(d.join(format!("data.{block}.{received}"))).unwrap();
            assert_eq!(got, read_back, "{tool}");
            if kinds.len() == 2 {
                // What it should have held differs at the damaged byte.
                let exp = std::fs::read(d.join(format!("data.{block}.expected"))).unwrap();
                let i = (at - block) as usize;
                assert_eq!(exp.len(), 4096, "{tool}");
                assert_eq!(exp[i] ^ got[i], 0x20, "{tool}");
                if !with_fio {
                    // iolab's is the block as written: one byte differs.
                    let n = exp.iter().zip(&got).filter(|(a, b)| a != b).count();
                    assert_eq!(n, 1);
                    let f = &v["jobs"][0]["iolab"]["verify_failure"]["dumped"];
                    assert_eq!(f[0], format!("data.{block}.received"), "{v}");
                }
            }
            names.push(dumps);
        }
        assert_eq!(names[0], names[1]);
    }
    // A dump never replaces a file: a name taken is left alone.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_in(d, false, write);
    flip_byte(&d.join("data"), 5 * 4096 + 1234);
    std::fs::write(d.join("data.20480.received"), b"mine").unwrap();
    let (v, err) = run_in(d, false, check);
    assert_eq!(v["jobs"][0]["error"], 84, "{err}");
    assert_eq!(
        std::fs::read(d.join("data.20480.received")).unwrap(),
        b"mine"
    );
    assert!(d.join("data.20480.expected").exists());
    assert!(err.contains("never overwritten"), "{err}");
}

#[test]
fn verify_dump_goes_under_aux_path_as_fio() {
    require!(fio);
    let write = "[w]\nfilename=DIR/data\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\ndo_verify=0\n";
    let check = "[v]\nfilename=DIR/data\nrw=read\nbs=4k\nsize=64k\nverify=crc32c\nverify_dump=1\n";
    let mut seen = Vec::new();
    for with_fio in [true, false] {
        let tool = if with_fio { "fio" } else { "iolab" };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let aux = d.join("aux");
        std::fs::create_dir(&aux).unwrap();
        let flag = format!("--aux-path={}", aux.display());
        let (w, err) = run_in(d, with_fio, write);
        assert_eq!(w["jobs"][0]["error"], 0, "{tool}: {err}");
        flip_byte(&d.join("data"), 5 * 4096 + 1234);
        let (v, err) = run_in_with(d, with_fio, check, &[&flag]);
        assert_eq!(v["jobs"][0]["error"], 84, "{tool}: {err}");
        // Nothing in the current directory, both dumps under aux-path.
        let here: Vec<String> = entries(d)
            .into_iter()
            .filter(|n| n.starts_with("data."))
            .collect();
        assert!(here.is_empty(), "{tool}: {here:?}");
        let there = entries(&aux);
        assert_eq!(
            there,
            ["data.20480.expected", "data.20480.received"],
            "{tool}: {err}"
        );
        let file = std::fs::read(d.join("data")).unwrap();
        let got = std::fs::read(aux.join("data.20480.received")).unwrap();
        assert_eq!(got, &file[20480..20480 + 4096], "{tool}");
        if !with_fio {
            let f = &v["jobs"][0]["iolab"]["verify_failure"]["dumped"];
            assert_eq!(
                f[0],
                aux.join("data.20480.received").display().to_string(),
                "{v}"
            );
        }
        seen.push(there);
    }
    println!(
        "verify_dump with --aux-path: fio {:?}, iolab {:?}",
        seen[0], seen[1]
    );
}

// ---- dedupe_mode=working_set ----

/// Of a file's 4 KiB blocks: the share that repeat an earlier block, and
/// how many distinct blocks are repeated.
fn repeats(path: &Path) -> (f64, usize) {
    let data = std::fs::read(path).unwrap();
    let mut counts = std::collections::HashMap::new();
    for b in data.chunks(4096) {
        *counts.entry(b).or_insert(0u64) += 1;
    }
    let dups: u64 = counts.values().map(|n| n - 1).sum();
    let repeated = counts.values().filter(|n| **n > 1).count();
    (dups as f64 / (data.len() / 4096) as f64, repeated)
}

#[test]
fn dedupe_working_set_repeats_blocks_of_a_small_set_as_fio() {
    require!(fio);
    // 2,048 writes, half of them repeating one of the working set: 10% of
    // the job's size, 204 blocks. allrandrepeat=1 seeds the data streams
    // too, so each tool writes the same file every run: without it the
    // share repeated is a draw (iolab's spread 0.48 to 0.53 over a dozen
    // runs at 50%), which a window this narrow would fail now and then.
    for (pct, set, global) in [(50, 10, 0), (30, 5, 1)] {
        let text = format!(
            "[d]\nfilename=DIR/f\nrw=write\nbs=4k\nsize=8m\ndedupe_percentage={pct}\n\
             dedupe_mode=working_set\ndedupe_working_set_percentage={set}\ndedupe_global={global}\n\
             allrandrepeat=1\n"
        );
        let (f, i) = same_as_fio(&text);
        let pages = 2048 * set / 100;
        for (tool, r) in [("fio", &f), ("iolab", &i)] {
            let (share, repeated) = repeats(&r.dir.path().join("f"));
            let want = pct as f64 / 100.0;
            assert!(
                (want - 0.06..=want + 0.03).contains(&share),
                "{tool}: {share:.3} of the blocks repeat, dedupe_percentage={pct}"
            );
            // Only blocks of the set repeat, and most of the set does.
            assert!(
                repeated <= pages && repeated > pages / 2,
                "{tool}: {repeated} distinct blocks repeat, the set has {pages}"
            );
        }
    }
}

// ---- latency_target, steadystate ----

/// `fio(text)` and `iolab_run(text)` side by side (each takes a while).
fn both(text: &str) -> (Ran, Ran) {
    std::thread::scope(|s| {
        let f = s.spawn(|| fio(text));
        let i = iolab_run(text);
        (f.join().unwrap(), i)
    })
}

/// The keys of a JSON object, in order.
fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn latency_target_finds_a_depth_and_reports_it_as_fio() {
    require!(fio);
    // The null engine meets a 1 ms target at every depth (half its I/Os
    // need to, so a busy machine does not make it fail): both tools double
    // the depth up to iodepth, run one more window there and end the job
    // long before its runtime.
    let text = "[lt]\nioengine=null\nrw=randread\nsize=1g\nbs=4k\niodepth=16\n\
                latency_target=1ms\nlatency_window=50ms\nlatency_percentile=50\n\
                time_based\nruntime=20s\n";
    let (f, i) = both(text);
    let (fj, ij) = (f.job(0), i.job(0));
    for key in ["latency_target", "latency_window", "latency_percentile"] {
        assert_eq!(ij[key], fj[key], "{key}: {}", i.stdout);
    }
    for j in [fj, ij] {
        let depth = j["latency_depth"].as_u64().unwrap();
        assert!((1..=16).contains(&depth), "{j}");
        assert!(j["job_runtime"].as_u64().unwrap() < 10_000, "{j}");
        assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{j}");
    }
    // The normal output's line, as fio prints it (the depth aside).
    let normal = iolab()
        .args(["run", "--no-store", "--output-format=normal"])
        .arg(i.dir.path().join("job.fio"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&normal.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("     latency   : "))
        .unwrap_or_else(|| panic!("no latency line: {text}"));
    assert!(
        line.starts_with(
            "     latency   : target=1000000, window=50000, percentile=50.00%, depth="
        ),
        "{line}"
    );
}

#[test]
fn latency_target_missed_at_depth_1_fails_the_job_as_fio() {
    require!(fio);
    // No 4 MiB buffered write takes under 1 us: at 100% the first one
    // fails the search at depth 1 and the job, with ETIMEDOUT.
    let text = "[lt]\nioengine=psync\nrw=write\nsize=8m\nbs=4m\nfilename=DIR/f\n\
                latency_target=1\n";
    let (f, i) = both(text);
    assert_eq!(i.done().jobs[0].error, 110, "{}", i.stdout);
    assert_eq!(i.done().jobs[0].error, f.done().jobs[0].error);
}

#[test]
fn steadystate_ends_a_steady_job_early_as_fio() {
    require!(fio);
    // 2000 IOPS exactly (rate_iops), so every second's sample is within
    // 50% of the window's mean: steady after the 2 s window is full,
    // long before the 30 s runtime.
    let text = "[ss]\nioengine=null\nrw=read\nsize=1g\nbs=4k\nrate_iops=2000\n\
                time_based\nruntime=30s\nss=iops:50%\nss_dur=2\n";
    let (f, i) = both(text);
    let (fs, is) = (&f.job(0)["steadystate"], &i.job(0)["steadystate"]);
    assert_eq!(keys(is), keys(fs), "{}", i.stdout);
    assert_eq!(keys(&is["data"]), keys(&fs["data"]));
    for key in ["ss", "duration", "attained"] {
        assert_eq!(is[key], fs[key], "{key}: {}", i.stdout);
    }
    assert_eq!(is["attained"], 1);
    assert!(is["criterion"].as_str().unwrap().ends_with('%'));
    let iops = is["data"]["iops"].as_array().unwrap();
    assert_eq!(iops.len(), 2);
    for n in iops {
        assert!((1000..=3000).contains(&n.as_u64().unwrap()), "{is}");
    }
    assert!(i.job(0)["job_runtime"].as_u64().unwrap() < 10_000);
}

#[test]
fn steadystate_settings_that_differ_within_a_reporting_group_are_refused_as_fio() {
    require!(fio);
    let head = "[global]\nioengine=null\nrw=read\nsize=1g\ntime_based\nruntime=200ms\n";
    // Different rules under group_reporting; one job with a window beside
    // one without (fio compares the jobs of a reporting group, with or
    // without group_reporting); the same two in groups of their own.
    for (jobs, refused) in [
        (
            "group_reporting\n[a]\nss=iops:10%\nss_dur=2\n[b]\nss=bw:5%\nss_dur=2\n",
            true,
        ),
        ("[a]\nss=iops:10%\nss_dur=2\n[b]\n", true),
        ("[a]\nss=iops:10%\nss_dur=2\n[b]\nstonewall\n", false),
        ("[a]\nss=iops:10%\nss_dur=2\nnumjobs=2\n", false),
    ] {
        let text = format!("{head}{jobs}");
        let (dir, job) = job_file(&text);
        let f = Proc::new("fio")
            .current_dir(dir.path())
            .arg(&job)
            .output()
            .unwrap();
        let i = iolab()
            .current_dir(dir.path())
            .args(["run", "--no-store", "--output-format=json"])
            .arg(&job)
            .output()
            .unwrap();
        // fio says why on stdout or stderr, depending on its version.
        let fe = format!(
            "{}{}",
            String::from_utf8_lossy(&f.stdout),
            String::from_utf8_lossy(&f.stderr)
        );
        let ie = String::from_utf8_lossy(&i.stderr);
        assert_eq!(!f.status.success(), refused, "fio on {text}: {fe}");
        if refused {
            assert!(fe.contains("consistent within reporting groups"), "{fe}");
            // A bad job: exit 2, the file and line of job b, both jobs named.
            assert_eq!(i.status.code(), Some(2), "{text}: {ie}");
            assert!(
                ie.contains("job.fio:")
                    && ie.contains("consistent within a reporting group")
                    && ie.contains("`a`")
                    && ie.contains("`b`"),
                "{ie}"
            );
            assert!(i.stdout.is_empty());
            assert_eq!(entries(dir.path()), ["job.fio"]);
        } else {
            assert!(i.status.success(), "{text}: {ie}");
        }
        println!(
            "fio exit {:?}, iolab exit {:?}: {ie}",
            f.status.code(),
            i.status.code()
        );
    }
}

#[test]
fn steadystate_of_a_reporting_group_runs_as_in_fios_example() {
    require!(fio);
    // The layout of fio's examples/steadystate.fio (reporting groups of
    // four threads, writes to /dev/null then random reads of /dev/zero,
    // a deviation rule and a slope rule with ramps), cut to one second a
    // group: neither window fills, and both tools say so alike.
    let text = "[global]\nthreads=1\ngroup_reporting=1\ntime_based\nsize=128m\n\
                [ss-write]\nfilename=/dev/null\nrw=write\nbs=128k\nnumjobs=4\nruntime=1s\n\
                ss=iops:10%\nss_dur=30s\nss_ramp=10s\n\
                [ss-read]\nnew_group\nstonewall\nfilename=/dev/zero\nrw=randread\nbs=4k\n\
                numjobs=4\nruntime=1s\nss=bw_slope:1%\nss_dur=10s\nss_ramp=5s\n";
    let (f, i) = both(text);
    assert_eq!(
        i.report["jobs"].as_array().unwrap().len(),
        2,
        "{}",
        i.stdout
    );
    for j in 0..2 {
        let (fs, is) = (&f.job(j)["steadystate"], &i.job(j)["steadystate"]);
        assert_eq!(keys(is), keys(fs), "{}", i.stdout);
        for key in ["ss", "duration", "attained"] {
            assert_eq!(is[key], fs[key], "{key}: {}", i.stdout);
        }
        assert_eq!(
            is["data"]["bw"].as_array().map(Vec::len),
            fs["data"]["bw"].as_array().map(Vec::len)
        );
    }
}
