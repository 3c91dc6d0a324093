//! Job text to jobs: inheritance, substitution, arithmetic, and the errors a
//! user sees for bad input, each with its file and line.

use std::fs;

use iolab_spec::value::{PerDir, SizeValue};
use iolab_spec::{cmdline, resolve, Context, Host, JobSet, Opt, SpecError, Value};

fn ctx() -> Context {
    let mut c = Context::fixed(Host {
        page_size: 4096,
        mb_memory: 24000,
        ncpus: 2,
    });
    c.vars.insert("BS".into(), "16k".into());
    c
}

fn parse(text: &str) -> Result<JobSet, SpecError> {
    resolve::parse_text("job.fio", text, &ctx())
}

fn err(text: &str) -> String {
    parse(text).expect_err("the job text is bad").to_string()
}

#[test]
fn several_globals_apply_to_the_jobs_after_them() {
    let set = parse("[global]\nbs=8k\nsize=1m\n[a]\n[global]\nbs=16k\n[b]\nsize=2m\n").unwrap();
    assert_eq!(set.jobs[0].per_dir(Opt::Bs), PerDir::all(8192));
    assert_eq!(set.jobs[1].per_dir(Opt::Bs), PerDir::all(16384));
    assert_eq!(set.jobs[0].size(Opt::Size), Some(SizeValue::Bytes(1 << 20)));
    assert_eq!(set.jobs[1].size(Opt::Size), Some(SizeValue::Bytes(2 << 20)));
}

#[test]
fn kb_base_applies_to_sizes_written_before_it() {
    let set = parse("[a]\nsize=100MB\nkb_base=1000\n[b]\nsize=100MB\n").unwrap();
    assert_eq!(
        set.jobs[0].size(Opt::Size),
        Some(SizeValue::Bytes(100_000_000))
    );
    assert_eq!(
        set.jobs[1].size(Opt::Size),
        Some(SizeValue::Bytes(104_857_600))
    );
}

#[test]
fn variables_keywords_and_arithmetic() {
    let set = parse(
        "[a]\nbs=${BS}\nsize=8*$mb_memory\niodepth=$ncpus\n[b]\nbs=(4*1024)\nsize=($pagesize*2)\n",
    )
    .unwrap();
    let a = &set.jobs[0];
    assert_eq!(a.per_dir(Opt::Bs), PerDir::all(16384));
    assert_eq!(a.size(Opt::Size), Some(SizeValue::Bytes(8 * 24000)));
    assert_eq!(a.int(Opt::Iodepth), Some(2));
    let b = &set.jobs[1];
    assert_eq!(b.per_dir(Opt::Bs), PerDir::all(4096));
    assert_eq!(b.size(Opt::Size), Some(SizeValue::Bytes(8192)));
}

#[test]
fn per_direction_values_and_modifiers() {
    let set = parse(
        "[a]\nbs=4k,64k\nrw=randread:8\n[b]\nbs=,8k\nbssplit=4k/10:64k/50:32k/40\nbsrange=1k-4k\n",
    )
    .unwrap();
    let a = &set.jobs[0];
    assert_eq!(
        a.per_dir(Opt::Bs),
        PerDir {
            read: Some(4096),
            write: Some(65536),
            trim: Some(65536)
        }
    );
    assert_eq!(a.rw().modifier, Some(8));
    let b = &set.jobs[1];
    // The read size was left empty: it keeps the default of 4k.
    assert_eq!(
        b.per_dir(Opt::Bs),
        PerDir {
            read: Some(4096),
            write: Some(8192),
            trim: Some(8192)
        }
    );
    assert!(matches!(b.get(Opt::Bssplit), Some(Value::Split(_))));
    assert!(matches!(b.get(Opt::Bsrange), Some(Value::Ranges(_))));
}

#[test]
fn buffered_and_rwmixwrite_are_stored_as_their_counterparts() {
    let set = parse("[a]\nbuffered=0\nrwmixwrite=30\n").unwrap();
    assert!(set.jobs[0].flag(Opt::Direct));
    assert_eq!(set.jobs[0].int(Opt::Rwmixread), Some(70));
}

#[test]
fn command_line_globals_are_the_base_of_job_file_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.fio");
    fs::write(&path, "[global]\nbs=8k\n[filejob]\nrw=write\n").unwrap();
    let args: Vec<String> = [
        "--size=1m",
        "--bs=2k",
        path.to_str().unwrap(),
        "--name=cmdjob",
        "--rw=randread",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cmd = cmdline::parse_args(&args).unwrap();
    let set = resolve::load(&cmd, &ctx()).unwrap();
    let names: Vec<&str> = set.jobs.iter().map(|j| j.name.as_str()).collect();
    // fio adds command-line jobs first, then the jobs of the files.
    assert_eq!(names, ["cmdjob", "filejob"]);
    assert_eq!(set.jobs[0].per_dir(Opt::Bs), PerDir::all(2048));
    assert_eq!(set.jobs[0].size(Opt::Size), Some(SizeValue::Bytes(1 << 20)));
    // The file's [global] overrides the command-line default; size is kept.
    assert_eq!(set.jobs[1].per_dir(Opt::Bs), PerDir::all(8192));
    assert_eq!(set.jobs[1].size(Opt::Size), Some(SizeValue::Bytes(1 << 20)));
}

#[test]
fn section_flag_selects_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.fio");
    fs::write(&path, "[a]\nrw=read\n[b]\nrw=write\n").unwrap();
    let args = vec![format!("--section=b"), path.display().to_string()];
    let set = resolve::load(&cmdline::parse_args(&args).unwrap(), &ctx()).unwrap();
    assert_eq!(set.jobs.len(), 1);
    assert_eq!(set.jobs[0].name, "b");
    let args = vec![format!("--section=zz"), path.display().to_string()];
    let e = resolve::load(&cmdline::parse_args(&args).unwrap(), &ctx()).unwrap_err();
    assert!(e.message.contains("`zz`"), "{e}");
}

#[test]
fn a_negative_flow_weight_is_accepted_as_fio_accepts_it() {
    // fio's butterfly example gives one job `flow=-2`.
    let set = parse("[a]\nflow=-2\n[b]\nflow=1\n").unwrap();
    assert_eq!(set.jobs[0].int(Opt::Flow), Some(-2));
    assert!(parse("[a]\nflow=5000000000\n").is_err());
}

#[test]
fn new_group_and_stonewall_number_the_groups() {
    let set =
        parse("[a]\nstonewall\n[b]\n[c]\nnew_group\n[d]\nwait_for_previous\nnumjobs=3\n[e]\n")
            .unwrap();
    assert_eq!(set.groups(), [0, 0, 1, 2, 2]);
    assert_eq!(set.clone_count(), 7);
}

#[test]
fn errors_name_the_file_line_and_problem() {
    let cases: &[(&str, &str)] = &[
        (
            "[a]\nbloksize=4k\n",
            "job.fio:2: unknown option `bloksize` (did you mean `blocksize`?)",
        ),
        ("[a]\nbs=4q\n", "job.fio:2: `bs=4q`:"),
        (
            "[a]\nrwmixread=150\n",
            "job.fio:2: `rwmixread=150`: 150 is out of range",
        ),
        ("[a]\nbs=\n", "job.fio:2: `bs=`: a value is needed"),
        ("[a]\n\nbs\n", "job.fio:3: `bs`: a value is needed"),
        (
            "[a]\nrw=randreed\n",
            "job.fio:2: `rw=randreed`: unknown mode `randreed` (did you mean `randread`?)",
        ),
        (
            "[a]\nioengine=nosuch\n",
            "job.fio:2: `ioengine=nosuch`: unknown value `nosuch`",
        ),
        (
            "[a]\nioengine=rdma\n",
            "job.fio:2: `ioengine=rdma`: `rdma` is valid in fio but iolab does not implement it",
        ),
        (
            "[a]\ncgroup=x\n",
            "job.fio:2: option `cgroup` is a fio option that iolab does not implement",
        ),
        ("[a]\n[b\n", "job.fio:2: unterminated section header"),
        ("[a]\nsize=(4*\n", "job.fio:2: `size=(4*`:"),
        (
            "size=1m\n[a]\n",
            "job.fio:1: option `size` is outside any section",
        ),
        ("[a]\ndirect=yes\n", "job.fio:2: `direct=yes`:"),
        (
            "[a]\nbs=${NOPE}\n",
            "job.fio:2: environment variable `NOPE` is not set",
        ),
        (
            "[global]\nnumjobs=0\n",
            "job.fio:2: `numjobs=0`: 0 is out of range",
        ),
        ("[global]\nbs=4k\n", "no jobs defined"),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(
            got.starts_with(want) || got.contains(want),
            "job text:\n{text}\nwant: {want}\ngot:  {got}"
        );
    }
}

#[test]
fn options_are_echoed_as_written_in_fios_order() {
    let set = parse(
        "[global]\nsize=8MB\ntime_based\ntimeout=60\n[a]\nrw=read\nfilename=f\nbs=${BS}\n\
         name=foo\nunit_base=8\nnorandommap\n[global]\nruntime=1m\n[b]\nsize=8m\n",
    )
    .unwrap();
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    // Both globals, the alias under its option's name, the bare flag with
    // no value, a value as written.
    assert_eq!(
        set.global_echo,
        pairs(&[
            ("size", "8MB"),
            ("time_based", ""),
            ("runtime", "60"),
            ("runtime", "1m")
        ])
    );
    // unit_base first, filename last, the variable substituted, name kept.
    assert_eq!(
        set.jobs[0].echo,
        pairs(&[
            ("unit_base", "8"),
            ("rw", "read"),
            ("bs", "16k"),
            ("name", "foo"),
            ("norandommap", ""),
            ("filename", "f")
        ])
    );
    assert_eq!(set.jobs[0].name, "foo");
    assert_eq!(set.jobs[1].echo, pairs(&[("size", "8m")]));
    // How the options were spelled does not make two job sets differ.
    let again = parse(&set.to_job_text()).unwrap();
    assert_eq!(again, set);
}

#[test]
fn a_global_name_names_no_job_and_a_job_name_keeps_the_section_for_files() {
    let set = parse("[global]\nname=gname\nsize=1m\n[job1]\n[job2]\nname=explicit\n").unwrap();
    assert_eq!(set.jobs[0].name, "job1");
    assert_eq!(set.jobs[0].section, "job1");
    assert_eq!(set.jobs[1].name, "explicit");
    assert_eq!(set.jobs[1].section, "job2");
    // The name is not one of the job's values, inherited or its own.
    assert_eq!(set.jobs[0].get(Opt::Name), None);
    assert_eq!(set.jobs[1].get(Opt::Name), None);
}

#[test]
fn a_renamed_job_prints_as_its_section_with_its_name_and_parses_back() {
    let set = parse("[global]\nname=gname\n[job2]\nname=explicit\nsize=1m\n").unwrap();
    let text = set.to_job_text();
    assert!(text.contains("[job2]\n"), "{text}");
    assert!(text.contains("name=explicit\n"), "{text}");
    assert_eq!(parse(&text).unwrap(), set);
}

#[test]
fn section_selects_by_the_section_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.fio");
    fs::write(&path, "[a]\nname=renamed\nsize=1m\n[b]\nsize=1m\n").unwrap();
    let cmd = cmdline::parse_args(&[
        "--section=a".to_string(),
        path.to_string_lossy().into_owned(),
    ])
    .unwrap();
    let set = resolve::load(&cmd, &ctx()).unwrap();
    assert_eq!(set.jobs.len(), 1);
    assert_eq!(set.jobs[0].name, "renamed");
}

#[test]
fn syntax_fio_accepts_parses_and_prints_back() {
    let set = parse(
        "[a]\nrw=read:-8k\nsize=1m\noffset=0%\nthreads=4\n\
         random_distribution=zoned:50/5:30/15:20/\n",
    )
    .unwrap();
    let a = &set.jobs[0];
    assert_eq!(a.rw().modifier, Some(-8192));
    assert_eq!(a.size(Opt::Offset), Some(SizeValue::Percent(0.0)));
    let text = set.to_job_text();
    assert!(text.contains("rw=read:-8k\n"), "{text}");
    assert!(text.contains("zoned:50/5:30/15:20/80"), "{text}");
    assert_eq!(parse(&text).unwrap(), set);
    // A random mode's modifier counts I/Os; it cannot be negative.
    assert!(err("[a]\nrw=randread:-8\n").contains("rw=randread:-8"));
}

#[test]
fn filesize_takes_a_range() {
    use iolab_spec::value::BlockRange;
    let set = parse("[a]\nfilesize=1m-4m\n[b]\nfilesize=2m\n[c]\nfilesize=2m-2m\n").unwrap();
    assert_eq!(
        set.jobs[0].get(Opt::Filesize),
        Some(&Value::SizeRange(BlockRange {
            min: 1 << 20,
            max: 4 << 20
        }))
    );
    // A range reads as its high end where one size is asked for.
    assert_eq!(
        set.jobs[0].size(Opt::Filesize),
        Some(SizeValue::Bytes(4 << 20))
    );
    assert_eq!(
        set.jobs[1].size(Opt::Filesize),
        Some(SizeValue::Bytes(2 << 20))
    );
    assert_eq!(
        set.jobs[2].size(Opt::Filesize),
        Some(SizeValue::Bytes(2 << 20))
    );
    let text = set.to_job_text();
    assert!(text.contains("filesize=1m-4m\n"), "{text}");
    assert_eq!(parse(&text).unwrap(), set);
    // High before low reads as the same range, as bsrange does.
    assert_eq!(parse("[a]\nfilesize=4m-1m\n").unwrap().jobs[0], set.jobs[0]);
    assert!(err("[a]\nfilesize=0-1m\n").contains("zero"));
    assert!(err("[a]\nfilesize=1x\n").contains("filesize=1x"));
}

#[test]
fn printed_clone_comments_stay_within_a_line() {
    let name = "n".repeat(5000);
    let set = parse(&format!("[{name}]\nnumjobs=2\nsize=1m\n")).unwrap();
    let text = set.to_job_text();
    assert!(text.lines().all(|l| l.len() <= 8190), "a line is too long");
    assert_eq!(parse(&text).unwrap(), set);
}
