//! Plans built from job text: clones, files, regions, phases and the
//! cross-option errors, checked without touching the disk.

mod common;
use common::*;

use std::fs;

use iolab_core::plan::{self, BsSpec, Layout, PlanError};
use iolab_spec::resolve;

fn plan_of(text: &str) -> Result<plan::Plan, PlanError> {
    let set = resolve::parse_text("job.fio", text, &ctx()).expect("job text parses");
    plan::build(&set)
}

#[test]
fn four_stonewalled_jobs_are_four_phases_with_their_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[global]\ndirectory={}\nsize=100MB\n[Read-Seq]\nrw=read\nstonewall\n[Read-Random]\nrw=randread\nstonewall\n[Write-Seq]\nrw=write\nstonewall\n[Write-Random]\nrw=randwrite\nstonewall\n",
        dir.path().display()
    );
    let p = plan_of(&text).unwrap();
    assert_eq!(p.jobs.len(), 4);
    assert_eq!(p.phases, [0..1, 1..2, 2..3, 3..4]);
    assert_eq!(p.groups, 4);
    let names: Vec<String> = p
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "Read-Seq.0.0",
            "Read-Random.0.0",
            "Write-Seq.0.0",
            "Write-Random.0.0"
        ]
    );
    for f in &p.files {
        assert_eq!(f.size, 104_857_600);
    }
    // Files that will be read are written first; files only written are
    // allocated.
    let layouts: Vec<Layout> = p.files.iter().map(|f| f.layout).collect();
    assert_eq!(
        layouts,
        [
            Layout::Write,
            Layout::Write,
            Layout::Allocate,
            Layout::Allocate
        ]
    );
    for j in &p.jobs {
        assert_eq!(j.io_size, 104_857_600);
        assert_eq!(j.files.len(), 1);
        assert_eq!(j.files[0].offset, 0);
    }
}

#[test]
fn sixteen_clones_share_one_named_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[file1]\nfilename={}/testtmp\ndirect=1\nrw=randwrite\nbs=4k\nsize=1000M\nnumjobs=16\nruntime=20\ngroup_reporting\n",
        dir.path().display()
    );
    let p = plan_of(&text).unwrap();
    assert_eq!(p.jobs.len(), 16);
    assert_eq!(p.files.len(), 1);
    assert_eq!(p.phases, vec![std::ops::Range { start: 0, end: 16 }]);
    let clones: Vec<u32> = p.jobs.iter().map(|j| j.clone).collect();
    assert_eq!(clones, (0..16).collect::<Vec<_>>());
    assert!(p
        .jobs
        .iter()
        .all(|j| j.files[0].file == 0 && j.direct && j.group_reporting));
    assert_eq!(p.files[0].size, 1000 << 20);
    assert_eq!(p.jobs[0].bs[1], BsSpec::Fixed(4096));
}

#[test]
fn offset_increment_places_each_clone() {
    let text = "[w]\nfilename=/tmp/iolab-plan-test-never-created\nsize=1m\noffset=4k\noffset_increment=1m\nnumjobs=3\nrw=write\n";
    let p = plan_of(text).unwrap();
    let offsets: Vec<u64> = p.jobs.iter().map(|j| j.files[0].offset).collect();
    assert_eq!(offsets, [4096, 4096 + (1 << 20), 4096 + (2 << 20)]);
    assert_eq!(p.files[0].size, 4096 + (3 << 20));
}

#[test]
fn io_size_is_whole_blocks_as_fio_rounds_it() {
    // fio 3.33 moves 99,999,744 bytes for size=100MiB bs=512 (100,000,000
    // rounded down to whole blocks).
    let p = plan_of("[r]\nfilename=/tmp/iolab-never\nsize=100MiB\nbs=512\nrw=write\n").unwrap();
    assert_eq!(p.jobs[0].io_size, 99_999_744);
}

#[test]
fn sizes_in_percent_and_from_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let p = plan_of(&format!("[r]\nfilename={}\nrw=read\n", f.display())).unwrap();
    assert_eq!(p.jobs[0].io_size, 1 << 20);
    assert_eq!(p.files[0].layout, Layout::AsIs);
    let p = plan_of(&format!(
        "[r]\nfilename={}\nrw=read\nsize=25%\n",
        f.display()
    ))
    .unwrap();
    assert_eq!(p.jobs[0].io_size, 256 << 10);
    let p = plan_of(&format!(
        "[r]\nfilename={}\nrw=read\noffset=50%\n",
        f.display()
    ))
    .unwrap();
    assert_eq!(
        (p.jobs[0].files[0].offset, p.jobs[0].files[0].len),
        (512 << 10, 512 << 10)
    );
}

#[test]
fn cross_option_errors_name_the_job_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("small");
    fs::write(&f, vec![0u8; 8192]).unwrap();
    let cases = [
        (
            "[j]\nfilename=/tmp/iolab-never\nsize=4k\nbs=64k\nrw=read\n".to_string(),
            "job.fio:4: job `j`: block size 65536 is larger than the 4096 bytes",
        ),
        (
            "[j]\nfilename=/tmp/iolab-never\nrw=read\n".to_string(),
            "job.fio:1: job `j`: the job needs size= or filesize=",
        ),
        (
            format!("[j]\nfilename={}\nrw=read\noffset=16k\n", f.display()),
            "job.fio:4: job `j`: offset 16384 is beyond the end of",
        ),
        (
            "[j]\nfilename=/tmp/iolab-never\nsize=1m\nbs=1000\ndirect=1\n".to_string(),
            "job.fio:4: job `j`: direct=1 needs block sizes that are multiples of 512",
        ),
        (
            "[j]\nfilename=/tmp/iolab-never\nsize=1m\ntime_based\n".to_string(),
            "job.fio:4: job `j`: time_based needs runtime=",
        ),
        (
            "[j]\nfilename=/tmp/iolab-never\nsize=50%\n".to_string(),
            "job.fio:3: job `j`: a size in percent needs an existing file",
        ),
    ];
    for (text, want) in cases {
        let e = plan_of(&text).expect_err(&text).to_string();
        assert!(e.starts_with(want), "job:\n{text}\nwant: {want}\ngot:  {e}");
    }
}

#[test]
fn file_options_choose_the_layout() {
    let layout = |extra: &str| {
        plan_of(&format!(
            "[j]\nfilename=/tmp/iolab-never\nsize=1m\n{extra}\n"
        ))
        .unwrap()
        .files[0]
            .layout
    };
    assert_eq!(layout("rw=write"), Layout::Allocate);
    assert_eq!(layout("rw=write\ncreate_on_open=1"), Layout::OnOpen);
    // Reads need data; create_on_open does not leave the file empty.
    assert_eq!(layout("rw=randrw\ncreate_on_open=1"), Layout::Write);
    assert_eq!(layout("rw=randwrite\noverwrite=1"), Layout::Write);
    assert_eq!(layout("rw=write\npre_read=1"), Layout::Write);
}

#[test]
fn file_append_starts_at_the_end_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    fs::write(&f, vec![0u8; 12288]).unwrap();
    let p = plan_of(&format!(
        "[j]\nfilename={}\nsize=8k\nrw=write\nfile_append=1\noffset=4k\n",
        f.display()
    ))
    .unwrap();
    assert_eq!(
        (p.jobs[0].files[0].offset, p.jobs[0].files[0].len),
        (12288, 8192)
    );
    assert_eq!(p.files[0].size, 20480);
}

#[test]
fn rates_openfiles_and_exit_what_are_settled() {
    let p = plan_of(
        "[j]\nfilename=/tmp/iolab-never\nsize=1m\nrw=randrw\nbs=8k,4k\nrate_iops=100,50\nrate_iops_min=10\n",
    )
    .unwrap();
    let pace = &p.jobs[0].pace;
    // fio turns IOPS into bytes at the smallest block size.
    assert_eq!(pace.rate, [819_200, 204_800, 204_800]);
    assert_eq!(pace.rate_iops_min, [10, 10, 10]);
    assert_eq!(pace.rate_cycle, std::time::Duration::from_secs(1));

    let job = |extra: &str| {
        plan_of(&format!(
            "[j]\ndirectory=/tmp\nsize=3m\nnrfiles=3\n{extra}\n"
        ))
        .unwrap()
        .jobs[0]
            .clone()
    };
    assert_eq!(job("").openfiles, 3);
    assert_eq!(job("openfiles=2").openfiles, 2);
    assert_eq!(job("openfiles=10").openfiles, 3);
    assert_eq!(job("").file_service, plan::FileService::RoundRobin(1));
    assert_eq!(
        job("file_service_type=roundrobin:4").file_service,
        plan::FileService::RoundRobin(4)
    );
    assert_eq!(job("exitall").exit_what, plan::ExitWhat::Group);
    assert_eq!(
        job("exitall\nexit_what=stonewall").exit_what,
        plan::ExitWhat::Stonewall
    );
}

#[test]
fn filesize_sizes_the_file_and_size_bounds_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let p = plan_of(&format!(
        "[t]\ndirectory={d}\nrw=write\nfilesize=8m\nsize=4m\n"
    ))
    .unwrap();
    assert_eq!(p.files[0].size, 8 << 20);
    assert_eq!(
        (p.jobs[0].files[0].offset, p.jobs[0].files[0].len),
        (0, 8 << 20)
    );
    assert_eq!(p.jobs[0].io_size, 4 << 20);

    // The region is the file from the offset on; size larger than it
    // moves only the region's bytes.
    let p = plan_of(&format!(
        "[t]\ndirectory={d}\nrw=write\nfilesize=8m\nsize=16m\noffset=1m\n"
    ))
    .unwrap();
    assert_eq!(p.files[0].size, 8 << 20);
    assert_eq!(
        (p.jobs[0].files[0].offset, p.jobs[0].files[0].len),
        (1 << 20, 7 << 20)
    );
    assert_eq!(p.jobs[0].io_size, 7 << 20);

    // A percentage offset of a file the job creates is 0, as in fio.
    let p = plan_of(&format!(
        "[t]\ndirectory={d}\nrw=write\nfilesize=8m\nsize=4m\noffset=50%\n"
    ))
    .unwrap();
    assert_eq!(p.files[0].size, 8 << 20);
    assert_eq!(p.jobs[0].files[0].offset, 0);

    let e = plan_of(&format!(
        "[t]\ndirectory={d}\nrw=write\nfilesize=1m\noffset=2m\n"
    ))
    .unwrap_err();
    assert!(e.to_string().contains("is not below filesize"), "{e}");
}

#[test]
fn a_filesize_range_gives_each_file_a_repeatable_size_in_whole_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[t]\ndirectory={}\nrw=write\nnrfiles=8\nfilesize=1m-4m\nbs=64k\n",
        dir.path().display()
    );
    let p = plan_of(&text).unwrap();
    let sizes: Vec<u64> = p.files.iter().map(|f| f.size).collect();
    assert_eq!(sizes.len(), 8);
    for s in &sizes {
        assert!(
            (1 << 20..=4 << 20).contains(s) && s % 65536 == 0,
            "{sizes:?}"
        );
    }
    // Not all alike, and the same again for the same job.
    assert!(sizes.iter().any(|s| *s != sizes[0]), "{sizes:?}");
    let again: Vec<u64> = plan_of(&text)
        .unwrap()
        .files
        .iter()
        .map(|f| f.size)
        .collect();
    assert_eq!(again, sizes);
    // The job moves its files' bytes, or size when that is less.
    assert_eq!(p.jobs[0].io_size, sizes.iter().sum::<u64>());
    let p = plan_of(&format!("{text}size=2m\n")).unwrap();
    assert_eq!(p.jobs[0].io_size, 2 << 20);
}

/// `force_async` reaches the engine's options, and `number_ios` lets a
/// time_based job make run after run (fio's), where `loops` counts
/// otherwise.
#[test]
fn force_async_and_the_runs_of_a_job_are_planned_as_fios() {
    let dir = tempfile::tempdir().unwrap();
    let job = |extra: &str| {
        let text = format!(
            "[x]\ndirectory={}\nsize=1m\nioengine=io_uring\n{extra}",
            dir.path().display()
        );
        plan_of(&text).unwrap().jobs.remove(0)
    };
    assert_eq!(job("").engine_opts.force_async, 0);
    assert_eq!(job("force_async=3\n").engine_opts.force_async, 3);
    assert_eq!(job("loops=4\n").runs(), 4);
    assert_eq!(job("time_based\nruntime=1\nloops=4\n").runs(), 1);
    assert_eq!(
        job("time_based\nruntime=1\nnumber_ios=10\n").runs(),
        u32::MAX
    );
}
