//! Job options end to end, each checked by what it does to a run on
//! temporary files: counts that must be exact (loops, number_ios, io_size),
//! rates and think time bounded over about a second, what happens to files
//! (create_on_open, allow_file_create, overwrite, pre_read,
//! unlink_each_loop, file_append, file_service_type), jobs stopping jobs
//! (exitall), errors (continue_on_error, rate_min) and which statistics are
//! kept. The behaviours are fio 3.33's, as checked against it; where iolab
//! differs the test says so.

mod common;
use common::*;
use iolab_testkit::{mount::Mounted, need, skip_case};

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use iolab_core::plan;
use iolab_spec::resolve;
use iolab_stats::{Dir, JobResult};

/// Runs a job that must succeed and returns its one reported job.
fn run_ok(text: &str) -> JobResult {
    let (out, _) = run_text(text);
    assert_eq!(out.failure, None, "{text}");
    out.result.jobs[0].clone()
}

fn plan_error(text: &str) -> String {
    let set = resolve::parse_text("job.fio", text, &ctx()).expect("job parses");
    plan::build(&set).expect_err("plan refuses").to_string()
}

/// The (offset, write sequence number) the worker stamped at the start of
/// each 4 KiB block of a file.
fn stamps(path: &Path) -> Vec<(u64, u64)> {
    iolab_testkit::stamps::block_stamps(path, 4096)
}

fn seqs(path: &Path) -> Vec<u64> {
    stamps(path).into_iter().map(|(_, s)| s).collect()
}

/// A rate a limiter held: at most `pct` percent over `want` (it never lets
/// more through), and at least half of it (a loaded machine does fewer
/// I/Os, never more; the schedule itself is checked exactly by pace.rs's
/// unit tests).
fn limited(value: f64, want: f64, pct: f64) -> bool {
    value <= want * (1.0 + pct / 100.0) && value >= want / 2.0
}

// ---- ramp_time, startdelay, loops, number_ios, io_size ----

#[test]
fn ramp_time_is_not_measured_and_runtime_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let j = run_ok(&format!(
        "[r]\nfilename={}/f\nsize=1m\nrw=randread\ntime_based\nruntime=1200ms\nramp_time=500ms\n",
        dir.path().display()
    ));
    let r = j.dir(Dir::Read);
    // The runtime is the one asked for, and leaves the ramp out.
    assert!(r.runtime_ns >= 1_200_000_000, "runtime {} ns", r.runtime_ns);
    assert!(
        Duration::from_nanos(r.runtime_ns) + Duration::from_millis(500) <= start.elapsed(),
        "runtime {} ns",
        r.runtime_ns
    );
    // At most two 500 ms windows after the ramp (three had they started
    // with it; one when a loaded machine let no I/O end between the
    // second window's end and the deadline).
    assert!(
        (1..=2).contains(&r.bw_samples.count()),
        "{:?}",
        r.bw_samples
    );
    assert_eq!(r.clat.count(), r.total_ios);
    assert_eq!(j.issued[0], r.total_ios);
    // fio: elapsed counts the ramp (1.7 s, rounded up).
    assert!(j.elapsed_s >= 2, "{} s", j.elapsed_s);
}

#[test]
fn ramp_time_counts_towards_the_size_of_a_size_bounded_job() {
    // fio 3.33: size=4m, rate_iops=2000, ramp_time=500ms reports 23 of the
    // 1024 I/Os: the ramp's I/Os are part of the job's size, not added to
    // it. Here 1024 I/Os at 2000/s take 512 ms and the ramp 250 ms of it.
    let start = Instant::now();
    let j = run_ok(
        "[r]\nioengine=null\nfilename=/nonexistent/n\nsize=4m\nrw=read\nrate_iops=2000\nramp_time=250ms\n",
    );
    let r = j.dir(Dir::Read);
    // The ramp's I/Os are part of the size: fewer than 1024 after it, and
    // at most about 500 in its 250 ms.
    assert!(
        (400..1024).contains(&r.total_ios),
        "{} I/Os after the ramp",
        r.total_ios
    );
    assert_eq!(r.io_bytes, r.total_ios * 4096);
    assert_eq!(r.clat.count(), r.total_ios);
    // The runtime leaves the ramp out.
    assert!(
        Duration::from_nanos(r.runtime_ns) + Duration::from_millis(250) <= start.elapsed(),
        "{} ns",
        r.runtime_ns
    );
}

#[test]
fn a_job_that_ends_within_its_ramp_reports_counts_without_latencies() {
    // fio 3.33 (size=4m, ramp_time=500ms, done in 3 ms): io_bytes 4 MiB,
    // total_ios 1024, clat N 0, no bandwidth samples.
    let j = run_ok("[r]\nioengine=null\nfilename=/nonexistent/n\nsize=1m\nrw=read\nramp_time=60\n");
    // The job ends with its size, before its ramp would (elapsed counts
    // the ramp).
    assert!(j.elapsed_s < 60, "the ramp does not stretch the job");
    let r = j.dir(Dir::Read);
    assert_eq!((r.io_bytes, r.total_ios), (1 << 20, 256));
    assert_eq!(r.clat.count(), 0);
    assert_eq!(r.bw_samples.count(), 0);
}

#[test]
fn startdelay_delays_the_job_and_counts_in_elapsed() {
    let start = Instant::now();
    let j = run_ok(
        "[s]\nioengine=null\nfilename=/nonexistent/n\nsize=64k\nrw=read\nstartdelay=1500ms\n",
    );
    assert!(
        Duration::from_nanos(j.runtime_ns) + Duration::from_millis(1500) <= start.elapsed(),
        "the delay is not runtime"
    );
    // Seconds rounded up, as fio's elapsed (which with startdelay=1 says
    // 2 for a job of a few milliseconds).
    assert_eq!(j.elapsed_s, 2);
    assert_eq!(j.dir(Dir::Read).io_bytes, 64 << 10);
}

#[test]
fn loops_repeat_the_job_from_the_start_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let j = run_ok(&format!(
        "[l]\nfilename={}/f\nsize=1m\nrw=randread\nloops=3\n",
        dir.path().display()
    ));
    assert_eq!(
        (j.dir(Dir::Read).io_bytes, j.dir(Dir::Read).total_ios),
        (3 << 20, 768)
    );
    // A sequential writer starts each loop at the file's start: every
    // block holds the write of the last loop (sequence 513..=768).
    let f = dir.path().join("w");
    let j = run_ok(&format!(
        "[l]\nfilename={}\nsize=1m\nrw=write\nloops=3\nfallocate=truncate\n",
        f.display()
    ));
    assert_eq!(j.dir(Dir::Write).io_bytes, 3 << 20);
    let want: Vec<u64> = (513..=768).collect();
    assert_eq!(seqs(&f), want);
}

#[test]
fn number_ios_is_an_exact_count_per_loop() {
    let dir = tempfile::tempdir().unwrap();
    let job = |extra: &str| {
        run_ok(&format!(
            "[n]\nfilename={}/f\nsize=1m\nrw=randread\n{extra}\n",
            dir.path().display()
        ))
        .dir(Dir::Read)
        .total_ios
    };
    assert_eq!(job("number_ios=77"), 77);
    // fio 3.33: 154 with loops=2 (per loop), 256 when above the size.
    assert_eq!(job("number_ios=77\nloops=2"), 154);
    assert_eq!(job("number_ios=300"), 256);
}

#[test]
fn io_size_is_exact_and_wraps_around_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let read = |rw: &str, io: &str| {
        let j = run_ok(&format!(
            "[i]\nfilename={}/f\nsize=1m\nrw={rw}\nio_size={io}\n",
            dir.path().display()
        ));
        let r = j.dir(Dir::Read);
        (r.io_bytes, r.total_ios)
    };
    // fio 3.33 gives the same counts.
    assert_eq!(read("randread", "2500k"), (2_560_000, 625));
    assert_eq!(read("read", "3m"), (3 << 20, 768));
    assert_eq!(read("randread", "512k"), (512 << 10, 128));
    // Twice the file's size in random writes: two full passes, so every
    // block was last written in the second (sequence 257..=512, once each).
    let f = dir.path().join("w");
    run_ok(&format!(
        "[w]\nfilename={}\nsize=1m\nio_size=2m\nrw=randwrite\nfallocate=truncate\n",
        f.display()
    ));
    let mut s = seqs(&f);
    s.sort_unstable();
    assert_eq!(s, (257..=512).collect::<Vec<u64>>());
}

// ---- rate, rate_iops, rate_process, rate_min, thinktime ----

#[test]
fn rate_limits_each_direction_within_a_few_percent() {
    // fio 3.33, randrw rate=1m,256k for 1 s: read 1 MiB, write 256 KiB.
    let j = run_ok(
        "[r]\nioengine=null\nfilename=/nonexistent/n\nsize=1g\nrw=randrw\nrate=1m,256k\ntime_based\nruntime=1\n",
    );
    let (r, w) = (j.dir(Dir::Read), j.dir(Dir::Write));
    assert!(
        limited(r.bw_bytes() as f64, 1048576.0, 5.0),
        "read {} B/s",
        r.bw_bytes()
    );
    assert!(
        limited(w.bw_bytes() as f64, 262144.0, 5.0),
        "write {} B/s",
        w.bw_bytes()
    );
}

#[test]
fn rate_iops_limits_each_direction_within_a_few_percent() {
    // fio 3.33, randrw rate_iops=500,100 for 1 s: 500 reads, 101 writes.
    let dir = tempfile::tempdir().unwrap();
    let j = run_ok(&format!(
        "[r]\nfilename={}/f\nsize=1m\nrw=randrw\nrate_iops=500,100\ntime_based\nruntime=1\n",
        dir.path().display()
    ));
    let (r, w) = (j.dir(Dir::Read), j.dir(Dir::Write));
    assert!(limited(r.iops(), 500.0, 5.0), "{} read IOPS", r.iops());
    assert!(limited(w.iops(), 100.0, 5.0), "{} write IOPS", w.iops());
}

#[test]
fn poisson_rate_keeps_the_mean() {
    // Exponential gaps: the mean rate holds (within the noise of about
    // 1000 arrivals) and the gaps vary.
    let j = run_ok(
        "[p]\nioengine=null\nfilename=/nonexistent/n\nsize=1g\nrw=randread\nrate_iops=1000\nrate_process=poisson\ntime_based\nruntime=1\n",
    );
    let r = j.dir(Dir::Read);
    assert!(limited(r.iops(), 1000.0, 12.0), "{} IOPS", r.iops());
    assert_eq!(r.clat.count(), r.total_ios);
}

#[test]
fn rate_min_fails_the_job_after_the_settle_period_and_one_cycle() {
    // fio 3.33 with thinktime=10ms, rate_min=1m: "rate_min=1048576B/s not
    // met, got 398222B/s", err=5 (EIO), exit 1, after 2 s of settling and
    // one rate_cycle.
    let start = Instant::now();
    let (out, _) = run_text(
        "[m]\nioengine=null\nfilename=/nonexistent/n\nsize=1g\nrw=read\nthinktime=10ms\nrate_min=1m\nrate_cycle=500\ntime_based\nruntime=20\n",
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "stopped before its runtime"
    );
    let failure = out.failure.expect("the job fails");
    assert!(
        failure.contains("rate_min=1048576B/s not met for reads, got "),
        "{failure}"
    );
    let j = &out.result.jobs[0];
    assert_eq!(j.error, 5);
    assert!(j.dir(Dir::Read).total_ios > 100, "it ran until the check");
}

#[test]
fn rate_iops_min_fails_the_job_below_the_minimum() {
    let (out, _) = run_text(
        "[m]\nioengine=null\nfilename=/nonexistent/n\nsize=1g\nrw=randwrite\nthinktime=10ms\nrate_iops_min=500\nrate_cycle=500\ntime_based\nruntime=20\n",
    );
    let failure = out.failure.expect("the job fails");
    assert!(
        failure.contains("rate_iops_min=500 not met for writes, got "),
        "{failure}"
    );
}

#[test]
fn rates_that_contradict_each_other_are_plan_errors() {
    // fio 3.33 refuses both ("rate and rate_iops are mutually exclusive",
    // "minimum rate exceeds rate").
    let e = plan_error("[r]\nsize=1m\nrate=1m\nrate_iops=100\n");
    assert!(
        e.contains("rate and rate_iops are mutually exclusive"),
        "{e}"
    );
    let e = plan_error("[r]\nsize=1m\nrate=512k\nrate_min=1m\n");
    assert!(
        e.contains("minimum rate for reads is above its rate limit"),
        "{e}"
    );
}

#[test]
fn thinktime_bounds_the_io_count() {
    // fio 3.33 over 1 s: 10 I/Os with thinktime=100ms, 40 with
    // thinktime_blocks=4 (spinning or not). A loaded machine sleeps longer
    // and does fewer, never more: the bounds are upper ones, and a pause
    // every fourth I/O lets more through than one after each. (How long
    // each pause is, pace.rs's unit tests check.)
    let job = |extra: &str| {
        run_ok(&format!(
            "[t]\nioengine=null\nfilename=/nonexistent/n\nsize=1m\nrw=randread\ntime_based\nruntime=1\nthinktime=100ms\n{extra}\n"
        ))
    };
    let each = job("").dir(Dir::Read).total_ios;
    assert!((1..=11).contains(&each), "{each} I/Os");
    let sleeping = job("thinktime_blocks=4");
    let fourth = sleeping.dir(Dir::Read).total_ios;
    assert!((1..=44).contains(&fourth), "{fourth} I/Os");
    assert!(
        fourth > each,
        "{fourth} I/Os, {each} with a pause after each"
    );
    let spinning = job("thinktime_blocks=4\nthinktime_spin=50ms");
    let n = spinning.dir(Dir::Read).total_ios;
    assert!((1..=44).contains(&n), "{n} I/Os");
    // Ten pauses spin 50 ms each: CPU time where a sleeping pause uses
    // next to none (how much depends on what else the machine runs).
    let cpu = |j: &JobResult| j.cpu.user_ns + j.cpu.system_ns;
    assert!(
        cpu(&spinning) > cpu(&sleeping),
        "{} ns of CPU spinning, {} sleeping",
        cpu(&spinning),
        cpu(&sleeping)
    );
}

// ---- files ----

#[test]
fn create_on_open_makes_the_file_when_the_job_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    for (on_open, exists_before) in [(1, false), (0, true)] {
        let f = dir.path().join(format!("c{on_open}"));
        let text = format!(
            "[c]\nfilename={}\nsize=1m\nrw=write\nstartdelay=1\ncreate_on_open={on_open}\n",
            f.display()
        );
        let runner = std::thread::spawn(move || run_text(&text));
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(f.exists(), exists_before, "create_on_open={on_open}");
        let (out, notices) = runner.join().unwrap();
        assert_eq!(out.failure, None);
        // fio says it lays the file out unless the job's open makes it.
        assert_eq!(notices.len(), usize::from(on_open == 0), "{notices:?}");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    }
}

#[test]
fn allow_file_create_0_refuses_a_missing_file_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("missing");
    let (out, _) = run_text(&format!(
        "[a]\nfilename={}\nsize=64k\nrw=write\nallow_file_create=0\n",
        f.display()
    ));
    let failure = out.failure.expect("the run fails");
    assert!(failure.contains(&f.display().to_string()), "{failure}");
    assert!(failure.contains("allow_file_create=0"), "{failure}");
    assert!(!f.exists());
    // An existing file is used.
    std::fs::write(&f, vec![0u8; 64 << 10]).unwrap();
    let j = run_ok(&format!(
        "[a]\nfilename={}\nsize=64k\nrw=read\nallow_file_create=0\n",
        f.display()
    ));
    assert_eq!(j.dir(Dir::Read).io_bytes, 64 << 10);
}

#[test]
fn overwrite_lays_out_write_only_files_with_data_first() {
    let dir = tempfile::tempdir().unwrap();
    for overwrite in [0, 1] {
        let f = dir.path().join(format!("o{overwrite}"));
        let (out, notices) = run_text(&format!(
            "[o]\nfilename={}\nsize=1m\nrw=randwrite\nnumber_ios=1\nfallocate=truncate\noverwrite={overwrite}\n",
            f.display()
        ));
        assert_eq!(out.failure, None);
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!(m.len(), 1 << 20);
        // Laid out either way, as fio says: with data, or only allocated.
        assert_eq!(notices.len(), 1, "{notices:?}");
        if overwrite == 1 {
            assert!(m.blocks() * 512 >= 1 << 20, "every block is real");
            let data = std::fs::read(&f).unwrap();
            assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 64);
        } else {
            assert!(m.blocks() * 512 <= 64 << 10, "sparse but for one write");
        }
    }
}

/// Bytes of `path` in the page cache, by util-linux's fincore.
fn resident(path: &Path) -> Option<u64> {
    let out = std::process::Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(path)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

#[test]
fn pre_read_puts_the_region_in_the_page_cache_unmeasured() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p");
    let job = |pre: u32| {
        run_ok(&format!(
            "[p]\nfilename={}\nsize=4m\nrw=randread\nnumber_ios=1\npre_read={pre}\n",
            f.display()
        ))
    };
    let j = job(1);
    assert_eq!(
        j.dir(Dir::Read).io_bytes,
        4096,
        "the pre-read is not counted"
    );
    let Some(res) = resident(&f) else {
        skip_case!("the page cache check: fincore is not available");
        return;
    };
    assert!(res >= 4 << 20, "{res} bytes resident after pre_read");
    // Without it, invalidate=1 drops the cache and one random read (no
    // readahead) brings back little (tmpfs cannot drop its pages).
    job(0);
    let tmpfs = iolab_engine::file::fs_type(dir.path())
        .is_ok_and(|t| t == iolab_engine::file::FsType::Tmpfs);
    if !tmpfs {
        let res = resident(&f).unwrap();
        assert!(res < 1 << 20, "{res} bytes resident without pre_read");
    }
}

#[test]
fn unlink_each_loop_starts_every_loop_on_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("u");
    let old = dir.path().join("first-loop");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    // A second name keeps the first loop's file alive to look at.
    std::fs::hard_link(&f, &old).unwrap();
    let j = run_ok(&format!(
        "[u]\nfilename={}\nsize=1m\nrw=write\nloops=2\nunlink_each_loop=1\n",
        f.display()
    ));
    assert_eq!(j.dir(Dir::Write).io_bytes, 2 << 20);
    assert_ne!(
        std::fs::metadata(&f).unwrap().ino(),
        std::fs::metadata(&old).unwrap().ino()
    );
    assert_eq!(seqs(&old), (1..=256).collect::<Vec<u64>>());
    assert_eq!(seqs(&f), (257..=512).collect::<Vec<u64>>());
    // A reader finds no file in its second loop: fio 3.33 fails with
    // ENOENT naming the file, and so does iolab.
    let (out, _) = run_text(&format!(
        "[r]\nfilename={}/r\nsize=64k\nrw=read\nloops=2\nunlink_each_loop=1\n",
        dir.path().display()
    ));
    let failure = out.failure.expect("the reader fails");
    assert!(failure.contains("/r"), "{failure}");
    assert_eq!(out.result.jobs[0].error, 2);
}

#[test]
fn unlink_each_loop_starts_every_run_that_io_size_adds_on_a_new_file() {
    // io_size past the file: fio's run ends where the file is done and
    // the next starts, after unlink_each_loop removed the file, as after
    // a loop: three runs of 16 writes, each on a file of its own; through
    // psync's fast path and libaio's queued one (which ends the run in
    // the general loop after reaping its writes).
    for engine in ["psync", "libaio\niodepth=4"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let f = dir.path().join("u");
        let first = dir.path().join("first-run");
        std::fs::write(&f, vec![0u8; 64 << 10]).expect("the file");
        std::fs::hard_link(&f, &first).expect("a second name for the file");
        let j = run_ok(&format!(
            "[u]\nfilename={}\nsize=64k\nio_size=192k\nrw=write\nunlink_each_loop=1\n\
             ioengine={engine}\n",
            f.display()
        ));
        assert_eq!(j.dir(Dir::Write).io_bytes, 192 << 10, "{engine}");
        assert_eq!(j.error, 0, "{engine}");
        assert_ne!(
            std::fs::metadata(&f).expect("the last run's file").ino(),
            std::fs::metadata(&first)
                .expect("the first run's file")
                .ino(),
            "{engine}: the last run wrote the first run's file"
        );
        assert_eq!(seqs(&first), (1..=16).collect::<Vec<u64>>(), "{engine}");
        assert_eq!(seqs(&f), (33..=48).collect::<Vec<u64>>(), "{engine}");
    }
    // A reader finds no file in its second run, as in its second loop.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (out, _) = run_text(&format!(
        "[r]\nfilename={}/r\nsize=64k\nio_size=128k\nrw=read\nunlink_each_loop=1\n",
        dir.path().display()
    ));
    let failure = out.failure.expect("the reader fails");
    assert!(failure.contains("/r"), "{failure}");
    assert_eq!(out.result.jobs[0].error, 2);
    assert_eq!(out.result.jobs[0].dir(Dir::Read).io_bytes, 64 << 10);
}

#[test]
fn file_append_writes_past_the_end_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a");
    let head: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &head).unwrap();
    let j = run_ok(&format!(
        "[a]\nfilename={}\nsize=512k\nrw=write\nfile_append=1\noffset=4k\n",
        f.display()
    ));
    assert_eq!(j.dir(Dir::Write).io_bytes, 512 << 10);
    let data = std::fs::read(&f).unwrap();
    assert_eq!(
        data.len(),
        (1 << 20) + (512 << 10),
        "fio ignores offset here"
    );
    assert_eq!(&data[..1 << 20], &head[..]);
    let s = stamps(&f);
    assert_eq!(s[256], ((1 << 20) as u64, 1));
}

/// Sequence numbers of each file's blocks, for a job over three files of
/// four blocks each.
fn served(service: &str) -> Vec<Vec<u64>> {
    let dir = tempfile::tempdir().unwrap();
    run_ok(&format!(
        "[s]\ndirectory={}\nnrfiles=3\nsize=48k\nrw=write\nfallocate=truncate\nfile_service_type={service}\n",
        dir.path().display()
    ));
    (0..3)
        .map(|i| seqs(&dir.path().join(format!("s.0.{i}"))))
        .collect()
}

#[test]
fn file_service_types_order_the_files_as_fio_does() {
    // The orders fio 3.33 shows with --debug=io for these jobs.
    assert_eq!(
        served("roundrobin"),
        [[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9, 12]]
    );
    assert_eq!(
        served("roundrobin:3"),
        [[1, 2, 3, 10], [4, 5, 6, 11], [7, 8, 9, 12]]
    );
    assert_eq!(
        served("sequential"),
        [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    );
    // Random: every block once, each file in order, the files mixed.
    let r = served("random");
    let mut all: Vec<u64> = r.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (1..=12).collect::<Vec<u64>>());
    for f in &r {
        assert!(f.windows(2).all(|w| w[0] < w[1]), "{r:?}");
    }
    assert_ne!(r, served("sequential"));
}

#[test]
fn skewed_file_service_types_are_planned_with_their_value() {
    use plan::FileService as F;
    for (text, want) in [
        ("zipf:1.2", F::Zipf(1.2, None)),
        ("zipf", F::Zipf(1.1, None)),
        ("zipf:1.2:0.3", F::Zipf(1.2, Some(0.3))),
        ("pareto", F::Pareto(0.2, None)),
        ("normal:20", F::Normal(20.0, None)),
        ("gauss", F::Normal(0.0, None)),
    ] {
        let job = format!("[z]\nsize=1m\nnrfiles=2\nfile_service_type={text}\n");
        let set = resolve::parse_text("job.fio", &job, &ctx()).expect("job parses");
        let p = plan::build(&set).expect("planned");
        assert_eq!(p.jobs[0].file_service, want, "{text}");
        assert!(want.skewed());
    }
}

#[test]
fn openfiles_keeps_the_counts_exact() {
    let dir = tempfile::tempdir().unwrap();
    let j = run_ok(&format!(
        "[o]\ndirectory={}\nnrfiles=8\nopenfiles=2\nsize=256k\nrw=randwrite\nfallocate=truncate\n",
        dir.path().display()
    ));
    assert_eq!(j.dir(Dir::Write).total_ios, 64);
    for i in 0..8 {
        let mut s = seqs(&dir.path().join(format!("o.0.{i}")));
        assert!(s.iter().all(|&x| x > 0), "file {i}: every block written");
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 8, "file {i}: each block once");
    }
}

// ---- exitall, continue_on_error ----

#[test]
fn exitall_stops_the_other_jobs_of_its_group() {
    // fio 3.33: the time_based job stops when the short one ends.
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[global]\ndirectory={}\nsize=1m\n[short]\nrw=read\nexitall\n[long]\nrw=randread\ntime_based\nruntime=20\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    assert!(!out.result.interrupted);
    let jobs = &out.result.jobs;
    assert_eq!(jobs[0].dir(Dir::Read).io_bytes, 1 << 20);
    assert!(
        jobs[1].runtime_ns < 20_000_000_000,
        "stopped before its runtime"
    );
}

#[test]
fn exit_what_group_spares_other_groups_and_all_stops_everything() {
    // fio 3.33: with the default exit_what=group, a job of another group
    // runs its full runtime and a later stonewalled job runs; with
    // exit_what=all both stop, and the later job never starts (it is
    // reported with nothing done).
    let dir = tempfile::tempdir().unwrap();
    // The other job's runtime in seconds: long where it is to be stopped,
    // so that stopping it is told apart from its end however slow the
    // machine.
    let text = |what: &str, runtime: u32| {
        format!(
            "[global]\ndirectory={}\nsize=1m\n[short]\nrw=read\nexitall\nexit_what={what}\n[other]\nnew_group\nrw=randread\ntime_based\nruntime={runtime}\n[after]\nstonewall\nrw=read\n",
            dir.path().display()
        )
    };
    let (out, _) = run_text(&text("group", 1));
    assert_eq!(out.failure, None);
    let jobs = &out.result.jobs;
    assert!(jobs[1].runtime_ns >= 1_000_000_000, "other group ran on");
    assert_eq!(jobs[2].dir(Dir::Read).io_bytes, 1 << 20);

    let (out, _) = run_text(&text("all", 60));
    assert_eq!(out.failure, None);
    let jobs = &out.result.jobs;
    assert_eq!(jobs.len(), 3);
    assert!(jobs[1].runtime_ns < 60_000_000_000, "other group stopped");
    assert_eq!(jobs[2].name, "after");
    assert_eq!(jobs[2].dir(Dir::Read).io_bytes, 0);

    // exit_what=stonewall: the jobs running now stop, the next phase runs.
    let (out, _) = run_text(&text("stonewall", 60));
    let jobs = &out.result.jobs;
    assert!(jobs[1].runtime_ns < 60_000_000_000, "running jobs stopped");
    assert_eq!(jobs[2].dir(Dir::Read).io_bytes, 1 << 20, "next phase ran");
}

#[test]
fn continue_on_error_counts_errors_and_a_fatal_one_still_stops() {
    // A full filesystem (ENOSPC) stops the job even with
    // continue_on_error=all: like fio, iolab goes on only after EIO and
    // EILSEQ, and counts the error that stopped it.
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let small = need!(Mounted::tmpfs(&mnt, "size=1m"));
    let (out, _) = run_text(&format!(
        "[e]\nfilename={}/f\nsize=4m\nrw=write\nfallocate=none\ncontinue_on_error=all\n",
        mnt.display()
    ));
    drop(small);
    assert!(out.failure.is_some());
    let j = &out.result.jobs[0];
    assert!(j.setup.continue_on_error);
    assert_eq!((j.total_err, j.first_error), (1, 28));
    assert_eq!(j.first_error_text, "No space left on device");
    assert_eq!(j.error, 28);
    assert!(j.issued[1] > 0, "writes were issued before the disk filled");
    let clean = run_ok(&format!(
        "[c]\nfilename={}/f\nsize=64k\nrw=read\ncontinue_on_error=all\n",
        dir.path().display()
    ));
    assert_eq!((clean.total_err, clean.first_error), (0, 0));
    assert!(clean.setup.continue_on_error);
}

// ---- statistics switches ----

fn stats_job(extra: &str) -> JobResult {
    run_ok(&format!(
        "[s]\nioengine=null\nfilename=/nonexistent/n\nsize=1g\nrw=randread\ntime_based\nruntime=600ms\n{extra}\n"
    ))
}

#[test]
fn disabled_latencies_are_not_collected() {
    let j = stats_job("disable_lat=1");
    let r = j.dir(Dir::Read);
    assert_eq!(r.lat.count(), 0);
    assert_eq!(r.clat.count(), r.total_ios);
    assert_eq!(j.lat_buckets.total(), r.total_ios);

    // fio keeps the latency buckets with clat: without clat, neither.
    let j = stats_job("disable_clat=1");
    let r = j.dir(Dir::Read);
    assert_eq!(r.clat.count(), 0);
    assert_eq!(r.lat.count(), r.total_ios);
    assert_eq!(j.lat_buckets.total(), 0);

    let j = stats_job("disable_slat=1");
    assert_eq!(j.dir(Dir::Read).slat.count(), 0);
    assert_eq!(j.dir(Dir::Read).clat.count(), j.dir(Dir::Read).total_ios);
}

#[test]
fn gtod_reduce_drops_latencies_but_fio_keeps_the_samples() {
    for opt in ["gtod_reduce=1", "disable_bw_measurement=1"] {
        let j = stats_job(opt);
        let r = j.dir(Dir::Read);
        assert!(r.total_ios > 0);
        assert_eq!(r.bw_samples.count(), 1, "{opt}: fio 3.33 still samples");
        assert_eq!(r.iops_samples.count(), 1, "{opt}");
        if opt == "gtod_reduce=1" {
            assert_eq!((r.clat.count(), r.lat.count()), (0, 0));
            assert_eq!(j.lat_buckets.total(), 0);
            assert!(!j.setup.clat_percentiles && !j.setup.lat_percentiles);
        } else {
            assert_eq!(r.clat.count(), r.total_ios);
        }
    }
}

#[test]
fn wait_for_starts_a_job_when_the_named_one_has_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[global]\ndirectory={}\nsize=256k\nrw=read\n\
         [a]\ntime_based\nruntime=1200ms\nnumjobs=2\n[b]\nwait_for=a\n[c]\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    let jobs = &out.result.jobs;
    let elapsed = |name: &str| {
        jobs.iter()
            .filter(|j| j.name == name)
            .map(|j| j.elapsed_s)
            .max()
            .unwrap()
    };
    // b waited the 1.2 s of both clones of a, c did not wait; elapsed is
    // in whole seconds, rounded up.
    assert!(elapsed("a") >= 2 && elapsed("b") >= 2, "{jobs:?}");
    assert!(elapsed("c") <= 1, "{jobs:?}");
    // Unlike stonewall, wait_for starts no new group.
    assert!(jobs.iter().all(|j| j.groupid == 0));
    assert_eq!(jobs[2].dir(Dir::Read).io_bytes, 256 << 10);
}

#[test]
fn wait_for_names_an_earlier_job() {
    let head = "[global]\nsize=64k\nfilename=/nonexistent/f\n";
    for (jobs, want) in [
        (
            "[a]\nwait_for=zz\n",
            "job `a`: wait_for=zz: no job before this one is named `zz`",
        ),
        (
            "[a]\nwait_for=b\n[b]\n",
            "job `a`: wait_for=b: no job before this one is named `b`",
        ),
        (
            "[a]\nwait_for=a\n",
            "job `a`: wait_for=a: a job cannot wait for itself",
        ),
    ] {
        let e = plan_error(&format!("{head}{jobs}"));
        assert!(e.contains(want), "{e}");
        assert!(e.starts_with("job.fio:5:"), "{e}");
    }
}

#[test]
fn bandwidth_and_iops_samples_have_their_own_windows() {
    // fio 3.33 on this job: bw_samples 1, iops_samples 7 (250 ms windows
    // ending at 250 .. 1750 ms; the window of 1000 ms ends once).
    let dir = tempfile::tempdir().unwrap();
    let j = run_ok(&format!(
        "[w]\nfilename={}/f\nsize=1m\nrw=randread\ntime_based\nruntime=1900ms\n\
         bwavgtime=1000\niopsavgtime=250\n",
        dir.path().display()
    ));
    let r = j.dir(Dir::Read);
    assert_eq!(r.bw_samples.count(), 1);
    assert_eq!(r.iops_samples.count(), 7);
}

#[test]
fn percentile_switches_reach_the_setup() {
    let j = stats_job("clat_percentiles=0\nlat_percentiles=1\npercentile_list=50:99.5");
    let s = &j.setup;
    assert!(!s.clat_percentiles && s.lat_percentiles && !s.slat_percentiles);
    assert_eq!(s.percentile_list, [50.0, 99.5]);
    assert_eq!(s.percentile_precision, 1);
    let r = j.dir(Dir::Read);
    assert_eq!(
        r.lat.count(),
        r.total_ios,
        "lat is what its percentiles need"
    );
}
