//! The three job texts of the seed studies parse to the jobs they describe.

use iolab_spec::value::{PerDir, RwMode, SizeValue};
use iolab_spec::{cmdline, resolve, Context, Host, JobSet, Opt, Value};

fn ctx() -> Context {
    Context::fixed(Host {
        page_size: 4096,
        mb_memory: 24000,
        ncpus: 2,
    })
}

fn from_args(line: &str) -> JobSet {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    let cmd = cmdline::parse_args(&args).expect("command line parses");
    resolve::load(&cmd, &ctx()).expect("jobs resolve")
}

const JOB_A: &str = "[global]
directory=/home/user/Downloads/
size=100MB
[Read-Seq]
rw=read
stonewall
[Read-Random]
rw=randread
stonewall
[Write-Seq]
rw=write
stonewall
[Write-Random]
rw=randwrite
stonewall
";

#[test]
fn job_file_a_is_four_jobs_in_four_groups_of_100_mib() {
    let set = resolve::parse_text("a.fio", JOB_A, &ctx()).unwrap();
    let names: Vec<&str> = set.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        ["Read-Seq", "Read-Random", "Write-Seq", "Write-Random"]
    );
    assert_eq!(set.groups(), [0, 1, 2, 3]);
    assert_eq!(set.clone_count(), 4);
    let modes: Vec<RwMode> = set.jobs.iter().map(|j| j.rw().mode).collect();
    assert_eq!(
        modes,
        [
            RwMode::Read,
            RwMode::RandRead,
            RwMode::Write,
            RwMode::RandWrite
        ]
    );
    for job in &set.jobs {
        // fio's default kb_base=1024 reads the SI-looking "MB" as 1024*1024:
        // 100MB is 104,857,600 bytes (fio 3.33 with ioengine=null and
        // size=100MB reports io_bytes 104857600).
        assert_eq!(job.size(Opt::Size), Some(SizeValue::Bytes(104_857_600)));
        assert_eq!(
            job.text(Opt::Directory).as_deref(),
            Some("/home/user/Downloads/")
        );
        assert!(job.flag(Opt::Stonewall));
    }
}

#[test]
fn command_line_b_is_sixteen_clones_in_one_group() {
    let set = from_args(
        "-filename=./testtmp -direct=1 -rw=randwrite -bs=4k -size=1000M -numjobs=16 -runtime=20 -group_reporting -name=file1",
    );
    assert_eq!(set.jobs.len(), 1);
    let job = &set.jobs[0];
    assert_eq!(job.name, "file1");
    assert_eq!(job.numjobs(), 16);
    assert_eq!(set.clone_count(), 16);
    assert_eq!(set.groups(), [0]);
    assert!(job.flag(Opt::GroupReporting));
    assert!(job.flag(Opt::Direct));
    assert_eq!(job.rw().mode, RwMode::RandWrite);
    assert_eq!(job.per_dir(Opt::Bs), PerDir::all(4096));
    assert_eq!(
        job.size(Opt::Size),
        Some(SizeValue::Bytes(1000 * 1024 * 1024))
    );
    assert_eq!(job.time_us(Opt::Runtime), Some(20_000_000));
    assert_eq!(
        job.get(Opt::Filename),
        Some(&Value::Files(vec!["./testtmp".into()]))
    );
}

#[test]
fn command_line_c_is_one_time_based_libaio_randrw_job() {
    let set = from_args(
        "-filename=/var/data/fio -direct=0 -rw=randrw -rwmixread=20 -bs=4k -filesize=5M -numjobs=1 -runtime=300 -group_reporting -name=test --ioengine=libaio -time_based",
    );
    assert_eq!(set.jobs.len(), 1);
    let job = &set.jobs[0];
    assert_eq!(job.name, "test");
    assert_eq!(job.numjobs(), 1);
    assert!(!job.flag(Opt::Direct));
    assert_eq!(job.rw().mode, RwMode::RandRw);
    assert_eq!(job.int(Opt::Rwmixread), Some(20));
    assert_eq!(
        job.size(Opt::Filesize),
        Some(SizeValue::Bytes(5 * 1024 * 1024))
    );
    assert_eq!(job.time_us(Opt::Runtime), Some(300_000_000));
    assert!(job.flag(Opt::TimeBased));
    assert!(job.flag(Opt::GroupReporting));
    assert_eq!(job.choice(Opt::Ioengine), Some("libaio"));
    assert_eq!(
        job.get(Opt::Filename),
        Some(&Value::Files(vec!["/var/data/fio".into()]))
    );
}

#[test]
fn printed_jobs_parse_back_to_the_same_jobs() {
    for set in [
        resolve::parse_text("a.fio", JOB_A, &ctx()).unwrap(),
        from_args("-filename=./testtmp -direct=1 -rw=randwrite -bs=4k -size=1000M -numjobs=16 -runtime=20 -group_reporting -name=file1"),
    ] {
        let text = set.to_job_text();
        let again = resolve::parse_text("printed.fio", &text, &ctx()).unwrap();
        assert_eq!(set, again, "printed:\n{text}");
        assert_eq!(set.groups(), again.groups());
    }
}
