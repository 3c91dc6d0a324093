use super::compression::compressible;
use super::devices::disk_of;
use super::*;
use iolab_spec::{Context, Host};
use iolab_stats::{Dir, DiskResult, JobResult, Moments, RunResult, WarningCode};

use crate::plan::Plan;

fn plan(text: &str) -> Plan {
    let ctx = Context::from_env(Host::EXAMPLE);
    let set = iolab_spec::parse_text("w.fio", text, &ctx).unwrap();
    crate::plan::build(&set).unwrap()
}

/// A result of one job that read `bytes` with bandwidth samples of
/// the given values, for `secs` seconds.
fn result(plan: &Plan, bytes: u64, samples: &[u64], secs: u64) -> RunResult {
    let job = &plan.jobs[0];
    let mut j = JobResult {
        name: job.name.clone(),
        groupid: job.groupid,
        runtime_ns: secs * 1_000_000_000,
        clones: 1,
        ..Default::default()
    };
    let d = &mut j.dirs[Dir::Read as usize];
    d.io_bytes = bytes;
    d.total_ios = bytes / 4096;
    d.runtime_ns = j.runtime_ns;
    let mut m = Moments::default();
    for &s in samples {
        m.record(s);
    }
    j.dirs[Dir::Read as usize].bw_samples = m;
    j.dirs[Dir::Read as usize].bw_series = samples.to_vec();
    RunResult {
        jobs: vec![j],
        ..Default::default()
    }
}

fn codes(w: &[Warning]) -> Vec<WarningCode> {
    w.iter().map(Warning::code).collect()
}

const JOB: &str = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=randread\ndirect=1\n";

#[test]
fn steady_samples_over_three_seconds_raise_nothing() {
    let p = plan(JOB);
    let r = result(&p, 64 << 20, &[100, 102, 98, 101, 99, 100], 3);
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
}

#[test]
fn few_or_scattered_samples_are_flagged() {
    let p = plan(JOB);
    let r = result(&p, 64 << 20, &[100, 100], 1);
    assert_eq!(codes(&run_warnings(&p, &r)), ["short-run"]);
    let r = result(&p, 64 << 20, &[100, 300, 90, 110, 40, 105], 3);
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["unstable"]);
    assert!(
        w[0].to_string().contains("coefficient of variation"),
        "{}",
        w[0]
    );
    assert!(w[0].to_string().contains("ramp_time="), "{}", w[0]);
}

#[test]
fn a_start_much_faster_than_the_rest_is_a_cache_filling() {
    let p = plan(JOB);
    // Two fast windows of ten, then the device's own speed.
    let series = [900, 700, 100, 110, 90, 100, 105, 95, 100, 98];
    let r = result(&p, 64 << 20, &series, 5);
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["unstable"]);
    let text = w[0].to_string();
    assert!(text.contains("first 1.0 s"), "{text}");
    assert!(text.contains("8.0x faster"), "{text}");
    assert!(text.contains("ramp_time=1s"), "{text}");
    assert_eq!(fast_start(&series), Some((8.0, 2)));
    // Steady, slow at first, or one fast window of many: not a cache.
    assert_eq!(fast_start(&[100, 102, 98, 101, 99, 100]), None);
    assert_eq!(fast_start(&[20, 40, 100, 100, 100, 100]), None);
    assert_eq!(fast_start(&[150, 100, 100, 100, 100, 100]), None);
    assert_eq!(fast_start(&[900, 100, 100, 100]), None, "too few");
}

#[test]
fn samples_per_io_say_nothing_of_length_or_steadiness() {
    // A bandwidth log with log_avg_msec=0: the samples are per I/O.
    let p = plan(&format!("{JOB}write_bw_log=/nonexistent-dir/p\n"));
    assert!(p.jobs[0].stats.bw_per_io);
    let r = result(&p, 64 << 20, &[100, 100], 1);
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    let r = result(&p, 64 << 20, &[300, 100, 90, 110, 95, 105], 3);
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
}

#[test]
fn a_busy_thread_is_cpu_bound() {
    let p = plan(JOB);
    let mut r = result(&p, 64 << 20, &[100; 6], 3);
    r.jobs[0].cpu.user_ns = 1_000_000_000;
    r.jobs[0].cpu.system_ns = 1_900_000_000;
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["cpu-bound"]);
    assert!(w[0].to_string().contains("97%"), "{}", w[0]);
}

/// `result` for a job that wrote instead of read.
fn written(plan: &Plan, bytes: u64, secs: u64) -> RunResult {
    let mut r = result(plan, bytes, &[100; 6], secs);
    r.jobs[0].dirs.swap(Dir::Read as usize, Dir::Write as usize);
    r
}

const WRITE: &str = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=write\n";

#[test]
fn buffered_writes_left_in_memory_or_never_waited_for_are_the_page_cache() {
    let p = plan(WRITE);
    // Half the writes still dirty at the end.
    let mut r = written(&p, 64 << 20, 3);
    r.jobs[0].unflushed_bytes = Some(32 << 20);
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["page-cache"]);
    assert!(
        w[0].to_string().contains("50% of its writes (32 MiB)"),
        "{}",
        w[0]
    );
    // All flushed (someone synced), but the thread never waited: the
    // writes went to memory all the same; no cpu-bound besides.
    r.jobs[0].unflushed_bytes = Some(0);
    r.jobs[0].cpu.user_ns = 2_000_000_000;
    r.jobs[0].cpu.run_delay_ns = 900_000_000;
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["page-cache"]);
    assert!(w[0].to_string().contains("hardly ever waited"), "{}", w[0]);
    // A thread that waited for the device, with the data flushed.
    r.jobs[0].cpu.run_delay_ns = 0;
    r.jobs[0].cpu.user_ns = 300_000_000;
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    // An io_uring job whose thread slept while its workers wrote to
    // memory all the run: the workers' time counts as the job's.
    r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
        read_bytes: 0,
        write_bytes: 64 << 20,
        workers_busy_ns: 2_500_000_000,
    });
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["page-cache"]);
    assert!(w[0].to_string().contains("hardly ever waited"), "{}", w[0]);
    // Workers that slept too (waiting for the device) do not.
    r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
        read_bytes: 0,
        write_bytes: 64 << 20,
        workers_busy_ns: 900_000_000,
    });
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    // end_fsync: timed until the data was on the device.
    let p = plan(&format!("{WRITE}end_fsync=1\n"));
    let mut r = written(&p, 64 << 20, 3);
    r.jobs[0].unflushed_bytes = Some(0);
    r.jobs[0].cpu.user_ns = 2_900_000_000;
    assert_eq!(codes(&run_warnings(&p, &r)), ["cpu-bound"]);
    // Unless it wrote its 64 MiB four times over (time_based): the
    // rewrites stayed in memory, and that explains the busy thread.
    let mut r = written(&p, 256 << 20, 3);
    r.jobs[0].unflushed_bytes = Some(0);
    r.jobs[0].cpu.user_ns = 2_900_000_000;
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["page-cache"]);
    assert!(
        w[0].to_string().contains("64 MiB 4.0 times over"),
        "{}",
        w[0]
    );
    // fsync after every write keeps the rewrites on the device.
    let p = plan(&format!("{WRITE}fsync=1\n"));
    let mut r = written(&p, 256 << 20, 3);
    r.jobs[0].unflushed_bytes = Some(0);
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
}

#[test]
fn engines_that_move_no_data_get_no_device_warnings() {
    // Buffered reads with no device to check would be the page cache,
    // but the null engine reads nothing.
    let text = "[j]\nfilename=/nonexistent-dir/f\nsize=64m\nrw=read\n";
    let p = plan(text);
    let r = result(&p, 64 << 20, &[100; 6], 3);
    assert_eq!(codes(&run_warnings(&p, &r)), ["page-cache"]);
    let p = plan(&format!("{text}ioengine=null\n"));
    let r = result(&p, 64 << 20, &[100; 6], 3);
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
}

#[test]
fn the_jobs_own_reads_decide_whatever_a_neighbour_did_on_the_device() {
    let dir = std::env::current_dir().unwrap();
    let Some(disk) = disk_of(&dir) else {
        iolab_testkit::skip!("no block device under {}", dir.display());
    };
    let p = plan(&format!(
        "[j]\nfilename={}/f\nsize=64m\nrw=read\n",
        dir.display()
    ));
    let mut r = result(&p, 64 << 20, &[100; 6], 3);
    // The device read as much as the job did: someone else's reads.
    r.disks = vec![DiskResult {
        name: disk,
        read_bytes: 64 << 20,
        ..Default::default()
    }];
    r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
        read_bytes: 0,
        write_bytes: 0,
        workers_busy_ns: 0,
    });
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["page-cache"], "{w:?}");
    assert!(
        w[0].to_string().contains("read 0% of the bytes"),
        "{}",
        w[0]
    );
    // The job's threads had it all read: the device being idle
    // otherwise does not matter.
    r.disks[0].read_bytes = 0;
    r.jobs[0].caused_io = Some(iolab_stats::CausedIo {
        read_bytes: 64 << 20,
        write_bytes: 0,
        workers_busy_ns: 0,
    });
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
    // Unknown (an old kernel): the device's counters decide.
    r.jobs[0].caused_io = None;
    assert_eq!(codes(&run_warnings(&p, &r)), ["page-cache"]);
}

#[test]
fn pattern_data_is_compressible() {
    let p = plan("[j]\nfilename=/nonexistent-dir/f\nsize=1m\nrw=write\nverify=pattern\nverify_pattern=0xff\n");
    assert_eq!(
        compressible(&p.jobs[0]),
        Some("a repeated pattern (verify_pattern)")
    );
    let p = plan("[j]\nfilename=/nonexistent-dir/f\nsize=1m\nrw=write\nverify=crc32c\n");
    assert_eq!(compressible(&p.jobs[0]), None);
}

#[test]
fn a_device_busier_than_the_run_has_others_on_it() {
    // The job's file on a real disk: the current directory's.
    let dir = std::env::current_dir().unwrap();
    let Some(disk) = disk_of(&dir) else {
        iolab_testkit::skip!("no block device under {}", dir.display());
    };
    let p = plan(&format!(
        "[j]\nfilename={}/f\nsize=64m\nrw=randread\ndirect=1\n",
        dir.display()
    ));
    let mut r = result(&p, 16 << 20, &[100; 6], 3);
    r.disks = vec![DiskResult {
        name: disk.clone(),
        read_bytes: 16 << 20,
        write_bytes: 512 << 20,
        ..Default::default()
    }];
    let w = run_warnings(&p, &r);
    assert_eq!(codes(&w), ["others-on-device"], "{w:?}");
    assert!(w[0].to_string().contains(&format!("{disk} moved 528 MiB")));
    // What the job asked for, give or take: nothing to say.
    r.disks[0].write_bytes = 1 << 20;
    assert_eq!(codes(&run_warnings(&p, &r)), Vec::<&str>::new());
}

#[test]
fn a_cached_loop_device_says_whether_the_job_reread_its_range() {
    let w = |reread| Warning::LoopCached {
        job: "j".into(),
        device: "loop3".into(),
        backing: "/img".into(),
        cached_mib: 48,
        pct: 75.0,
        reread,
    };
    let head = "job `j`: its files are on the loop device loop3, which reads its backing file \
                `/img` through the host's page cache (no direct I/O)";
    assert_eq!(
        w(Some(2.5)).to_string(),
        format!(
            "{head}; the job read what it works on 2.5 times over, and by its end 48 MiB of it \
             (75%) was in that cache: the reads after the first pass came from memory, direct=1 \
             notwithstanding, not from the disk under the file; attach the image with `losetup \
             --direct-io=on`, or read each block once (no time_based, or a larger size)"
        )
    );
    assert_eq!(
        w(None).to_string(),
        format!(
            "{head}, and 48 MiB of that file (75% of what the job reads) is in memory: those \
             reads come from memory, direct=1 notwithstanding, not from the disk under the file; \
             attach the image with `losetup --direct-io=on`, or drop its cache first (`dd \
             if=/img iflag=nocache count=0`)"
        )
    );
    assert_eq!(w(None).code(), WarningCode::PageCache);
}
