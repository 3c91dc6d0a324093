//! Running plans end to end on temporary files: exact byte and I/O counts,
//! each block written exactly once by a random pass, group merging, samples
//! of time-based jobs, and run-time errors that leave nothing behind.

mod common;
use common::*;

use iolab_stats::Dir;

#[test]
fn null_engine_counts_are_exact_and_no_file_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let (out, notices) = run_text(&format!(
        "[n]\nioengine=null\nfilename={}/never\nsize=64m\nbs=4k\nrw=randread\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    let j = &out.result.jobs[0];
    assert_eq!(j.dir(Dir::Read).io_bytes, 64 << 20);
    assert_eq!(j.dir(Dir::Read).total_ios, 16384);
    assert_eq!(j.dir(Dir::Read).clat.count(), 16384);
    assert_eq!(j.dir(Dir::Write).total_ios, 0);
    assert!(notices.is_empty());
    assert!(!dir.path().join("never").exists());
    // No device is touched, so none is listed (fio lists none either).
    assert!(out.result.disks.is_empty(), "{:?}", out.result.disks);
}

#[test]
fn a_random_write_pass_writes_every_block_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let (out, _) = run_text(&format!(
        "[w]\nfilename={}\nsize=4m\nbs=4k\nrw=randwrite\nfallocate=truncate\n",
        f.display()
    ));
    assert_eq!(out.failure, None);
    let w = out.result.jobs[0].dir(Dir::Write).clone();
    assert_eq!((w.io_bytes, w.total_ios), (4 << 20, 1024));
    // Every block starts with its own offset and a write sequence number;
    // 1024 blocks carrying 1024 distinct numbers 1..=1024 means each block
    // was written once and no write was lost.
    iolab_testkit::stamps::assert_each_block_written_once(&f, 4096, 1024);
}

#[test]
fn reads_lay_out_the_file_first_and_count_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (out, notices) = run_text(&format!(
        "[r]\ndirectory={}\nsize=2m\nbs=8k\nrw=read\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    assert_eq!(notices.len(), 1, "{notices:?}");
    let r = out.result.jobs[0].dir(Dir::Read);
    assert_eq!((r.io_bytes, r.total_ios), (2 << 20, 256));
    assert_eq!(
        std::fs::metadata(dir.path().join("r.0.0")).unwrap().len(),
        2 << 20
    );
}

#[test]
fn group_reporting_merges_clones_and_groups_are_numbered() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[global]\ndirectory={}\nsize=1m\nbs=4k\n[a]\nrw=randrw\nnumjobs=4\ngroup_reporting\n[b]\nrw=write\nstonewall\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    let jobs = &out.result.jobs;
    assert_eq!(jobs.len(), 2, "four clones of a merged, then b");
    assert_eq!(jobs[0].clones, 4);
    let a = &jobs[0];
    assert_eq!(
        a.dir(Dir::Read).total_ios + a.dir(Dir::Write).total_ios,
        4 * 256
    );
    assert_eq!((jobs[0].groupid, jobs[1].groupid), (0, 1));
    assert_eq!(out.result.groups.len(), 2);
    let g0 = &out.result.groups[0];
    assert_eq!(
        g0.dirs[0].io_bytes + g0.dirs[1].io_bytes,
        4 << 20,
        "the group moved four clones' megabyte each"
    );
}

#[test]
fn time_based_jobs_take_bandwidth_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[t]\nfilename={}/f\nsize=1m\nbs=4k\nrw=randread\ntime_based\nruntime=1200ms\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    let r = out.result.jobs[0].dir(Dir::Read);
    assert_eq!(r.bw_samples.count(), 2, "two 500 ms windows in 1.2 s");
    assert!(r.runtime_ns >= 1_200_000_000 && r.runtime_ns < 2_000_000_000);
    assert!(r.io_bytes > 1 << 20, "time_based goes past the file's size");
}

#[test]
fn fsync_every_n_writes_is_timed_as_sync() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[s]\nfilename={}/f\nsize=256k\nbs=4k\nrw=write\nfsync=4\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    // 64 writes, a sync before the next write after every fourth: the last
    // four writes are not followed by one, as in fio.
    assert_eq!(out.result.jobs[0].sync.count(), 15);
}

#[test]
fn a_missing_directory_fails_with_its_name_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = run_text(&format!(
        "[r]\ndirectory={}/nope\nsize=1m\nrw=read\nunlink=1\n",
        dir.path().display()
    ));
    let failure = out.failure.expect("the run fails");
    assert!(failure.contains("/nope/r.0.0"), "{failure}");
    assert!(failure.contains("No such file or directory"), "{failure}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn each_clone_says_once_how_many_files_it_lays_out() {
    let dir = tempfile::tempdir().unwrap();
    // One of the first clone's files already has its size: it is not
    // counted, as fio does not count it.
    std::fs::write(dir.path().join("r.0.1"), vec![0u8; 512 << 10]).unwrap();
    let (out, notices) = run_text(&format!(
        "[r]\ndirectory={}\nsize=1536k\nnrfiles=3\nnumjobs=2\nbs=64k\nrw=read\n\
         [c]\ndirectory={0}\nsize=1m\nrw=write\ncreate_on_open=1\n",
        dir.path().display()
    ));
    assert_eq!(out.failure, None);
    use iolab_core::run::Notice::LayingOut;
    let said: Vec<(String, usize, u64)> = notices
        .into_iter()
        .map(|LayingOut { job, files, bytes }| (job, files, bytes))
        .collect();
    assert_eq!(
        said,
        vec![
            ("r".to_string(), 2, 1 << 20),
            ("r".to_string(), 3, 1536 << 10)
        ]
    );
}
