//! iolab's output next to fio's on the same jobs, where tools and people
//! read it: the "Laying out IO file" lines of the normal output (which
//! jobs, how many files, how many MiB, and in which formats and streams),
//! the disks fio lists, the options echoed in the JSON, and what tools
//! that drive fio see: standard error, `fio --version` and a `fio`
//! symlink.

mod common;
use common::*;
use iolab_testkit::{have, require, skip};

use std::path::Path;
use std::process::{Command as Proc, Output};

/// fio with `args` in `dir`.
fn fio(dir: &Path, args: &[&str]) -> Output {
    Proc::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("fio runs")
}

/// `iolab run --no-store ARGS` in `dir`.
fn iolab_run(dir: &Path, args: &[&str]) -> Output {
    iolab()
        .current_dir(dir)
        .args(["run", "--no-store"])
        .args(args)
        .output()
        .unwrap()
}

/// The "Laying out" lines of some output, in order.
fn layout_lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.contains("Laying out IO file"))
        .map(str::to_string)
        .collect()
}

/// Two directories, one for each tool, each with `job.fio` (DIR replaced
/// by the directory) and the files `pre` names already made with their
/// sizes.
fn twin_dirs(
    root: &Path,
    text: &str,
    pre: &[(&str, u64)],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let make = |name: &str| {
        let d = root.join(name);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(
            d.join("job.fio"),
            text.replace("DIR", &d.display().to_string()),
        )
        .unwrap();
        for (f, len) in pre {
            std::fs::File::create(d.join(f))
                .unwrap()
                .set_len(*len)
                .unwrap();
        }
        d
    };
    (make("fio"), make("iolab"))
}

const LAYOUT_JOB: &str = "[global]\ndirectory=DIR\nbs=64k\n\
    [w1]\nrw=write\nsize=8MB\n\
    [w2]\nrw=read\nsize=1536k\nnrfiles=3\nnumjobs=2\n\
    [w3]\nrw=randread\nsize=512k\n\
    [w4]\nrw=write\nsize=1m\ncreate_on_open=1\n\
    [n]\nioengine=null\nsize=1m\n";

#[test]
fn layout_lines_are_fios_in_normal_output_only() {
    require!(fio);
    let root = tempfile::tempdir().unwrap();
    // One of w2's files already has its size: neither tool counts it.
    let (fd, id) = twin_dirs(root.path(), LAYOUT_JOB, &[("w2.0.1", 512 << 10)]);
    let f = fio(&fd, &["job.fio"]);
    let i = iolab_run(&id, &["job.fio"]);
    assert!(f.status.success() && i.status.success(), "{i:?}");
    let want = layout_lines(&f.stdout);
    assert_eq!(
        want,
        [
            "w1: Laying out IO file (1 file / 8MiB)",
            "w2: Laying out IO files (2 files / total 1MiB)",
            "w2: Laying out IO files (3 files / total 1MiB)",
            "w3: Laying out IO file (1 file / 0MiB)",
        ],
        "fio 3.33's lines for this job"
    );
    assert_eq!(layout_lines(&i.stdout), want);
    assert!(layout_lines(&i.stderr).is_empty() && layout_lines(&f.stderr).is_empty());
    // They come after "Starting" and before the first report, as fio's do.
    let text = String::from_utf8_lossy(&i.stdout);
    let (start, first, report) = (
        text.find("Starting").unwrap(),
        text.find("Laying out").unwrap(),
        text.find("(groupid=").unwrap(),
    );
    assert!(start < first && first < report, "{text}");

    // The files are laid out now: a second run says nothing, in both.
    let f = fio(&fd, &["job.fio"]);
    let i = iolab_run(&id, &["job.fio"]);
    assert!(layout_lines(&f.stdout).is_empty());
    assert!(layout_lines(&i.stdout).is_empty());
}

#[test]
fn layout_lines_follow_the_normal_format_wherever_it_goes() {
    require!(fio);
    let job = "[w]\ndirectory=DIR\nrw=read\nsize=2m\nbs=64k\nnrfiles=2\n";
    for (args, in_file) in [
        (&["--output-format=json"][..], false),
        (&["--output-format=terse"][..], false),
        (&["--output-format=normal,json"][..], false),
        (&["--output=report.txt"][..], true),
        (&["--output=report.json", "--output-format=json"][..], true),
    ] {
        let root = tempfile::tempdir().unwrap();
        let (fd, id) = twin_dirs(root.path(), job, &[]);
        let mut fargs = vec!["job.fio"];
        fargs.extend_from_slice(args);
        let f = fio(&fd, &fargs);
        let i = iolab_run(&id, &fargs);
        assert!(f.status.success() && i.status.success(), "{args:?} {i:?}");
        let lines = |d: &Path, o: &Output| {
            let mut v = layout_lines(&o.stdout);
            v.extend(layout_lines(&o.stderr));
            if in_file {
                let name = args[0].trim_start_matches("--output=");
                v.extend(layout_lines(&std::fs::read(d.join(name)).unwrap()));
            }
            v
        };
        let want = lines(&fd, &f);
        assert_eq!(lines(&id, &i), want, "{args:?}");
        let normal = !args
            .iter()
            .any(|a| a.ends_with("=json") || a.ends_with("=terse"));
        assert_eq!(want.len(), usize::from(normal), "fio 3.33 with {args:?}");
    }
}

/// The names of the disks a JSON report lists, or None without the key.
fn disk_names(report: &serde_json::Value) -> Option<Vec<String>> {
    report.get("disk_util").map(|d| {
        d.as_array()
            .expect("disk_util is a list")
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_string())
            .collect()
    })
}

#[test]
fn jobs_that_touch_no_device_list_no_disk() {
    require!(fio);
    let root = tempfile::tempdir().unwrap();
    for (what, job, none) in [
        (
            "null engine",
            "[n]\nioengine=null\nsize=4m\nbs=4k\nrw=randread\n",
            true,
        ),
        (
            "filecreate engine",
            "[c]\ndirectory=DIR\nioengine=filecreate\nnrfiles=4\nfilesize=4k\n",
            true,
        ),
        // A real job beside a null one: its disk is listed, once.
        (
            "null and psync",
            "[n]\nioengine=null\nsize=4m\n[r]\ndirectory=DIR\nrw=read\nsize=1m\n",
            false,
        ),
    ] {
        let d = tempfile::tempdir_in(root.path()).unwrap();
        let (fd, id) = twin_dirs(d.path(), job, &[]);
        let f = fio(&fd, &["job.fio", "--output-format=json"]);
        let i = iolab_run(&id, &["job.fio", "--output-format=json"]);
        assert!(f.status.success() && i.status.success(), "{what}: {i:?}");
        let (fj, ij) = (json_of(&f.stdout), json_of(&i.stdout));
        assert_eq!(disk_names(&fj).is_none(), none, "fio 3.33, {what}");
        assert_eq!(disk_names(&ij), disk_names(&fj), "{what}");
        // Nor a "Disk stats" block in the normal output.
        let f = fio(&fd, &["job.fio"]);
        let i = iolab_run(&id, &["job.fio"]);
        let has = |o: &Output| String::from_utf8_lossy(&o.stdout).contains("Disk stats");
        assert_eq!(has(&f), !none, "fio 3.33, {what}");
        assert_eq!(has(&i), has(&f), "{what}");
    }
}

/// The "global options" and each job's "job options" of a JSON report as
/// written, one (name, value) pair per line of the object: the order and
/// any repeated name kept (a JSON parser keeps only a name's last value).
fn echoed(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest
        .find("\"global options\" : {")
        .into_iter()
        .chain(rest.find("\"job options\" : {"))
        .min()
    {
        let head = &rest[at..];
        let what = head[1..head[1..].find('"').unwrap() + 1].to_string();
        let body = &head[head.find('{').unwrap() + 1..head.find('}').unwrap()];
        let pairs = body
            .lines()
            .filter_map(|l| {
                let l = l.trim().trim_end_matches(',');
                let (k, v) = l.split_once(" : ")?;
                let v: String = serde_json::from_str(v).unwrap();
                Some((k.trim_matches('"').to_string(), v))
            })
            .collect();
        out.push((what, pairs));
        rest = &head[1..];
    }
    out
}

#[test]
fn json_echoes_the_options_as_fio_does() {
    require!(fio);
    // Values as written (8MB, 64K, 8388608, 2s), an alias under the
    // option's name (timeout is runtime), a value given twice, flags
    // without a value (no entry), `name` among the job's options, two
    // [global] sections, kb_base before and filename after the others, an
    // environment variable substituted, and command-line globals first.
    let job = "[global]\nioengine=null\nsize=8MB\ntime_based\ntimeout=2\nruntime=1\n\
        [w1]\nrw=write\nbs=64k\nthread\nfilename=DIR/f1\nname=foo\nkb_base=1000\n\
        [global]\niodepth=1\nbs=${COMPAT_BS}\n\
        [w2]\nrw=read\nbs=64K\nnorandommap\nsize=8388608\nramp_time=0s\nstonewall\n\
        group_reporting\ndescription=Some Words\n[w3]\nstonewall\n";
    let root = tempfile::tempdir().unwrap();
    let (fd, id) = twin_dirs(root.path(), job, &[]);
    let args = ["job.fio", "--output-format=json", "--numjobs=1"];
    let f = Proc::new("fio")
        .current_dir(&fd)
        .env("COMPAT_BS", "8k")
        .args(args)
        .output()
        .unwrap();
    let i = iolab()
        .current_dir(&id)
        .env("COMPAT_BS", "8k")
        .args(["run", "--no-store"])
        .args(args)
        .output()
        .unwrap();
    assert!(f.status.success() && i.status.success(), "{f:?} {i:?}");
    let want = echoed(&String::from_utf8_lossy(&f.stdout));
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.replace("DIR", &fd.display().to_string())))
            .collect()
    };
    assert_eq!(
        want,
        vec![
            (
                "global options".to_string(),
                pairs(&[
                    ("numjobs", "1"),
                    ("ioengine", "null"),
                    ("size", "8MB"),
                    ("runtime", "2"),
                    ("runtime", "1"),
                    ("iodepth", "1"),
                    ("bs", "8k"),
                ])
            ),
            (
                "job options".to_string(),
                pairs(&[
                    ("kb_base", "1000"),
                    ("rw", "write"),
                    ("bs", "64k"),
                    ("name", "foo"),
                    ("filename", "DIR/f1"),
                ])
            ),
            (
                "job options".to_string(),
                pairs(&[
                    ("rw", "read"),
                    ("bs", "64K"),
                    ("size", "8388608"),
                    ("ramp_time", "0s"),
                    ("description", "Some Words"),
                ])
            ),
            // Only a bare flag: an empty object.
            ("job options".to_string(), vec![]),
        ],
        "fio 3.33's echo of this job"
    );
    let got = echoed(&String::from_utf8_lossy(&i.stdout));
    let fio_dir = fd.display().to_string();
    let ours = id.display().to_string();
    let mapped: Vec<_> = want
        .iter()
        .map(|(w, p)| {
            let p = p
                .iter()
                .map(|(k, v)| (k.clone(), v.replace(&fio_dir, &ours)))
                .collect::<Vec<_>>();
            (w.clone(), p)
        })
        .collect();
    assert_eq!(got, mapped);
    // The job's name is the one `name=` gave, in both.
    assert_eq!(json_of(&i.stdout)["jobs"][0]["jobname"], "foo");
}

#[test]
fn command_line_jobs_echo_their_options_in_the_order_given() {
    require!(fio);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--output-format=json",
        "--bs=4K",
        "--ioengine=null",
        "--size=1M",
        "--name=a",
        "--rw=randread",
        "--time_based",
        "--runtime=1",
        "--name=b",
        "--ioengine=null",
        "--size=1m",
    ];
    let f = fio(dir.path(), &args);
    let i = iolab_run(dir.path(), &args);
    assert!(f.status.success() && i.status.success(), "{i:?}");
    let want = echoed(&String::from_utf8_lossy(&f.stdout));
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(want[1].1[0], ("name".to_string(), "a".to_string()));
    assert_eq!(echoed(&String::from_utf8_lossy(&i.stdout)), want);
}

/// A `fio` symlink to this build's iolab in `dir`.
fn fio_link(dir: &Path) -> std::path::PathBuf {
    let link = dir.join("fio");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("iolab"), &link).unwrap();
    link
}

/// The `fio` symlink with `args` in `dir`, results in the tests' database.
fn as_fio(link: &Path, dir: &Path, args: &[&str]) -> Output {
    Proc::new(link)
        .current_dir(dir)
        .env("IOLAB_DB", test_db())
        .args(args)
        .output()
        .unwrap()
}

const SYNC_DEPTH_JOB: &[&str] = &[
    "--name=w",
    "--size=1m",
    "--bs=64k",
    "--ioengine=psync",
    "--iodepth=4",
    "--rw=read",
];

/// The codes of the warnings a JSON report gives its first job.
fn warning_codes(report: &serde_json::Value) -> Vec<String> {
    report["jobs"][0]["iolab"]["warnings"]
        .as_array()
        .expect("the job's warnings")
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn plan_warnings_go_in_the_report_not_on_a_programs_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = SYNC_DEPTH_JOB.iter().map(|s| s.to_string()).collect();
        v.push(format!("--directory={}", d.display()));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        iolab_run(d, &a)
    };
    let warned = |o: &Output| String::from_utf8_lossy(&o.stderr).contains("iodepth=4 will not");

    // JSON on stdout, read by a program through a pipe: nothing on stderr,
    // the warning in the report.
    let o = run(&["--output-format=json"]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(warning_codes(&json_of(&o.stdout)).contains(&"queue-depth-not-reached".to_string()));

    // --output, in either format: nothing on stderr, the warning in the file.
    for fmt in ["normal", "json"] {
        let file = d.join(format!("report.{fmt}"));
        let o = run(&[
            &format!("--output={}", file.display()),
            &format!("--output-format={fmt}"),
        ]);
        assert!(o.status.success(), "{o:?}");
        assert!(
            o.stderr.is_empty(),
            "{fmt}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("iodepth=4 will not be reached"),
            "{fmt}: {text}"
        );
        std::fs::remove_file(&file).unwrap();
    }

    // Asked for: on stderr as well, and still in the report.
    let o = run(&["--output-format=json", "--warnings=stderr"]);
    assert!(warned(&o), "{o:?}");
    assert!(warning_codes(&json_of(&o.stdout)).contains(&"queue-depth-not-reached".to_string()));
    // Normal text on stdout: on stderr, as before.
    assert!(warned(&run(&[])));
    // report: never on stderr.
    let o = run(&["--warnings=report"]);
    assert!(o.status.success() && !warned(&o), "{o:?}");
    // A bad value is a bad command line.
    let o = run(&["--warnings=loud"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--warnings=loud"));

    // fio prints nothing on stderr for the same job either.
    if have!(fio) {
        let a = args(&["--output-format=json"]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let f = fio(d, &a);
        assert!(f.status.success() && f.stderr.is_empty(), "{f:?}");
    }
}

#[test]
fn started_as_fio_it_is_iolab_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let link = fio_link(d);

    // --version in fio's form, which tools match ("fio-3"), iolab after it.
    let v = as_fio(&link, d, &["--version"]);
    assert!(v.status.success() && v.stderr.is_empty(), "{v:?}");
    let line = String::from_utf8(v.stdout).unwrap();
    assert_eq!(
        line,
        format!("fio-3.33 (iolab {})\n", env!("CARGO_PKG_VERSION"))
    );
    if have!(fio) {
        let f = fio(d, &["--version"]);
        let theirs = String::from_utf8(f.stdout).unwrap();
        assert!(theirs.starts_with("fio-3"), "{theirs}");
        assert_eq!(line.split(' ').next(), theirs.split_whitespace().next());
    }
    // `iolab run --version` says the same; `iolab --version` stays iolab's.
    let r = iolab().args(["run", "--version"]).output().unwrap();
    assert_eq!(String::from_utf8(r.stdout).unwrap(), line);
    let r = iolab().arg("--version").output().unwrap();
    assert!(String::from_utf8(r.stdout).unwrap().starts_with("iolab "));

    // The same answers as `iolab run` with the same arguments: a job
    // printed, a bad option refused (exit 2, same message), help.
    let job = format!(
        "--name=j --directory={} --rw=randread --size=1m",
        d.display()
    );
    let job: Vec<&str> = job.split(' ').collect();
    for extra in [&["--parse-only"][..], &["--bogus=1"][..], &["--help"][..]] {
        let mut a = job.clone();
        a.extend_from_slice(extra);
        let f = as_fio(&link, d, &a);
        let i = iolab().current_dir(d).arg("run").args(&a).output().unwrap();
        assert_eq!(f.status.code(), i.status.code(), "{extra:?}");
        assert_eq!(f.stdout, i.stdout, "{extra:?}");
        assert_eq!(f.stderr, i.stderr, "{extra:?}");
    }
    // A run: fio's JSON, the I/O done, nothing on stderr.
    let mut a = job.clone();
    a.extend_from_slice(&["--output-format=json", "--no-store"]);
    let o = as_fio(&link, d, &a);
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
    let r = json_of(&o.stdout);
    assert_eq!(r["jobs"][0]["jobname"], "j");
    assert_eq!(r["jobs"][0]["read"]["io_bytes"], 1 << 20);
}

/// A program on PATH, if there is one.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

#[test]
fn bench_fio_drives_iolab_and_fio_plot_draws_its_results() {
    let (Some(bench), Some(plot)) = (on_path("bench-fio"), on_path("fio-plot")) else {
        skip!("bench-fio and fio-plot are not installed (pip install fio-plot)");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    fio_link(&bin);
    let (target, results, plots) = (d.join("target"), d.join("results"), d.join("plots"));
    for p in [&target, &results, &plots] {
        std::fs::create_dir(p).unwrap();
    }
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    // iodepth 2 with psync raises a plan warning: bench-fio takes any
    // stderr for a failure, so it runs only if the warning stays in the
    // report.
    let o = Proc::new(&bench)
        .env("PATH", &path)
        .env("IOLAB_DB", test_db())
        .args(["-d"])
        .arg(&target)
        .args(["-t", "directory", "-s", "4m", "-o"])
        .arg(&results)
        .args([
            "--iodepth",
            "1",
            "2",
            "--numjobs",
            "1",
            "2",
            "--runtime",
            "2",
        ])
        .args([
            "--time-based",
            "-m",
            "randread",
            "-e",
            "psync",
            "--direct",
            "0",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && !said.contains("error occurred"),
        "{said}"
    );
    let runs = results.join("target").join("4k");
    for (depth, jobs) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        let report = std::fs::read(runs.join(format!("randread-{depth}-{jobs}.json"))).unwrap();
        let r = json_of(&report);
        assert!(r["fio version"].as_str().unwrap().starts_with("fio-3"));
        assert_eq!(r["jobs"].as_array().unwrap().len(), jobs);
    }
    // 2D bars, 3D bars and a latency histogram, each a picture.
    for (title, args) in [
        (
            "two-d",
            &["-l", "-r", "randread", "-d", "1", "2", "-n", "1"][..],
        ),
        ("three-d", &["-L", "-t", "iops", "-r", "randread"][..]),
        (
            "histogram",
            &["-H", "-r", "randread", "-d", "2", "-n", "2"][..],
        ),
    ] {
        let o = Proc::new(&plot)
            .current_dir(&plots)
            .env("MPLBACKEND", "Agg")
            .arg("-i")
            .arg(&runs)
            .args(["-T", title])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{title}: {o:?}");
        let drawn = entries(&plots)
            .into_iter()
            .filter(|f| f.starts_with(title) && f.ends_with(".png"))
            .count();
        assert_eq!(drawn, 1, "{title}: {}", String::from_utf8_lossy(&o.stdout));
    }
}
