//! Campaigns end to end through the library: ext4, xfs and btrfs on small
//! loop images with a tiny suite (root), skipped targets with reasons,
//! directory targets (no root), and nothing left behind.

use iolab_testkit::{mount::Mounted, require};
use std::path::Path;
use std::sync::atomic::AtomicBool;

use iolab_lab::campaign::{self, Options, Progress};
use iolab_lab::metrics;
use iolab_lab::suite::{Suite, Workload};
use iolab_lab::target::{assign_labels, parse_dir_target, parse_fs_list};
use iolab_spec::Host;

fn tiny_suite() -> Suite {
    let job = |name: &str, rw: &str, bs: &str| {
        Workload {
        name: name.into(),
        about: String::new(),
        job: format!(
            "[global]\ndirectory=${{IOLAB_DIR}}\nsize=8m\nruntime=${{IOLAB_RUNTIME}}\nunlink=1\n[{name}]\nrw={rw}\nbs={bs}\n"
        ),
        ..Default::default()
    }
    };
    Suite {
        name: "tiny".into(),
        about: String::new(),
        workloads: vec![job("sw", "write", "1M"), job("rr", "randread", "4k")],
    }
}

fn options(workdir: Option<&Path>) -> Options {
    Options {
        workdir: workdir.map(Path::to_path_buf),
        size: 1 << 30,
        repeat: 1,
        auto: None,
        runtime_s: 1,
        suite: tiny_suite(),
        device: None,
        cache_device: None,
        cache_size: 64 << 20,
        destroy_data: false,
        baseline: None,
        host: Host::EXAMPLE,
    }
}

#[test]
fn three_filesystems_and_two_skipped() {
    require!(root, filesystems = &["ext4", "xfs", "btrfs"]);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    let mut targets = parse_fs_list("ext4,xfs,btrfs,nosuchfs,f2fs").unwrap();
    assign_labels(&mut targets).unwrap();
    let mut opts = options(Some(&work));
    opts.baseline = Some("ext4".into());
    opts.repeat = 2;
    let stop = AtomicBool::new(false);
    let mut steps = Vec::new();
    let out = campaign::run(&targets, &opts, &stop, &mut |p| {
        if let Progress::Step { label, what } = p {
            steps.push(format!("{label}:{what}"));
        }
    })
    .unwrap();
    let c = &out.comparison;
    assert!(out.cleanup.problems.is_empty(), "{:?}", out.cleanup);
    let labels: Vec<&str> = c.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["ext4", "xfs", "btrfs", "nosuchfs", "f2fs"]);
    for t in &c.targets[..3] {
        assert_eq!(t.failed, None, "{}", t.label);
        assert_eq!(t.skipped, None);
        for key in [
            "mkfs_s",
            "mount_first_ms",
            "mount_cold_ms",
            "umount_ms",
            "size_mib",
            "avail_mib",
            "used_mib",
            "cached_read_mb_s",
            "device_read_mb_s",
            "sw.write.mb_s",
            "sw.write.iops",
            "sw.write.clat_p99_us",
            "rr.read.iops",
        ] {
            let v = t.value(key).and_then(|c| c.median());
            assert!(v.is_some_and(|v| v > 0.0), "{} {key}: {v:?}", t.label);
        }
        // btrfs allocates inodes as it goes and reports none in statvfs.
        let inodes = t.value("inodes").and_then(|c| c.median()).unwrap();
        assert_eq!(
            inodes == 0.0,
            t.label == "btrfs",
            "{} inodes {inodes}",
            t.label
        );
        let size = t.value("size_mib").unwrap().median().unwrap();
        assert!(size > 900.0 && size <= 1024.0, "{} size {size}", t.label);
    }
    assert!(c.targets[3]
        .skipped
        .as_deref()
        .unwrap()
        .contains("unknown filesystem `nosuchfs`"));
    // The column says why, in the words of the support check (whose
    // wording tests/primitives.rs checks).
    let iolab_lab::support::Support::Missing(why) = iolab_lab::support::check("f2fs") else {
        panic!("f2fs is supported here")
    };
    assert!(why.starts_with("the kernel does not support f2fs"), "{why}");
    assert_eq!(c.targets[4].skipped.as_deref(), Some(why.as_str()));
    // The fixed rows come first, in order.
    assert_eq!(c.metrics[0].key, "mkfs_s");
    assert_eq!(c.ratio("mkfs_s", 0), Some(1.0));
    assert_eq!(c.runs.len(), 3 * 2 * 2);
    // Every measurement was repeated: mkfs and first mount too.
    for key in [
        "mkfs_s",
        "mount_first_ms",
        "mount_cold_ms",
        "umount_ms",
        "sw.write.mb_s",
    ] {
        assert_eq!(c.targets[1].value(key).unwrap().runs.len(), 2, "{key}");
    }
    assert_eq!(c.targets[1].value("size_mib").unwrap().runs.len(), 1);
    // What each capacity and read-speed row means, then the images' caveat.
    assert_eq!(
        c.notes,
        [
            metrics::SIZE_NOTE,
            metrics::AVAIL_NOTE,
            metrics::USED_NOTE,
            metrics::INODES_NOTE,
            metrics::READS_NOTE,
            campaign::SPARSE_NOTE
        ]
    );
    for key in ["size_mib", "used_mib", "inodes", "device_read_mb_s"] {
        assert!(c.best(key).is_empty(), "{key}");
    }
    assert!(steps.contains(&"btrfs:mkfs and first mount".to_string()));
    // Nothing of the lab's is left: the workdir it made is gone.
    assert!(!work.exists());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(&dir.path().display().to_string()));
}

#[test]
fn directory_targets_without_root() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let targets = vec![
        parse_dir_target(&format!("A={}", a.path().display())).unwrap(),
        parse_dir_target(&format!("B={}", b.path().display())).unwrap(),
    ];
    let mut opts = options(Some(work.path()));
    opts.baseline = Some("B".into());
    let stop = AtomicBool::new(false);
    let out = campaign::run(&targets, &opts, &stop, &mut |_| {}).unwrap();
    let c = &out.comparison;
    assert_eq!(c.targets.len(), 2);
    for t in &c.targets {
        assert_eq!(t.failed, None);
        assert!(t.value("sw.write.mb_s").unwrap().median().unwrap() > 0.0);
        assert!(t.value("mkfs_s").is_none());
    }
    assert!(c.notes.is_empty());
    assert!(c.ratio("sw.write.mb_s", 0).is_some());
    // The work directories inside the targets are gone; the given workdir
    // stays, without a state file.
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(b.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
}

#[test]
fn interrupted_before_start_creates_nothing() {
    let a = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let targets = vec![parse_dir_target(&format!("A={}", a.path().display())).unwrap()];
    let stop = AtomicBool::new(true);
    let out = campaign::run(&targets, &options(Some(work.path())), &stop, &mut |_| {}).unwrap();
    assert!(out.comparison.interrupted);
    assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
}

#[test]
fn bad_baseline_is_refused_before_anything() {
    let a = tempfile::tempdir().unwrap();
    let targets = vec![parse_dir_target(&format!("A={}", a.path().display())).unwrap()];
    let mut opts = options(None);
    opts.baseline = Some("zzz".into());
    let stop = AtomicBool::new(false);
    let e = campaign::run(&targets, &opts, &stop, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--baseline names no target") && e.contains("A"),
        "{e}"
    );
}

#[test]
fn an_image_larger_than_the_free_space_is_noted() {
    require!(root, filesystems = &["ext4"]);
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Mounted::tmpfs(&small, "size=64m").expect("a tmpfs");
    let mut opts = options(Some(&small.join("w")));
    opts.size = 320 << 20;
    opts.suite.workloads.clear();
    let targets = parse_fs_list("ext4").unwrap();
    let out = campaign::run(&targets, &opts, &AtomicBool::new(false), &mut |_| {});
    let left = std::fs::read_dir(&small).unwrap().count();
    drop(mounted);
    let c = out.unwrap().comparison;
    assert_eq!(c.targets[0].failed, None);
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("320 MiB images are larger than the") && n.contains("MiB free in")),
        "{:?}",
        c.notes
    );
    assert_eq!(left, 0);
}

#[test]
fn a_workdir_in_use_is_refused() {
    let a = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // A state file owned by a live process (pid 1 since it started).
    let mut s = iolab_lab::state::State::create(work.path()).unwrap();
    s.pid = 1;
    s.start = std::fs::read_to_string("/proc/1/stat")
        .unwrap()
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    s.save().unwrap();
    let targets = vec![parse_dir_target(&format!("A={}", a.path().display())).unwrap()];
    let e = campaign::run(
        &targets,
        &options(Some(work.path())),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("in use by a running iolab (pid 1)"), "{e}");
    // Its state file is untouched.
    let back = iolab_lab::state::State::load(work.path()).unwrap().unwrap();
    assert_eq!(back.pid, 1);
}

#[test]
fn a_work_directory_that_exists_in_a_target_is_left_alone() {
    let a = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Where the lab would make its work directory (this process is the
    // lab here), a directory of the user's with a file in it.
    let theirs = a
        .path()
        .join(format!("iolab-compare-{}-1", std::process::id()));
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("keep"), b"mine").unwrap();
    let targets = vec![parse_dir_target(&format!("A={}", a.path().display())).unwrap()];
    let out = campaign::run(
        &targets,
        &options(Some(work.path())),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let failed = out.comparison.targets[0].failed.as_deref().unwrap();
    assert!(
        failed.contains(
            "exists already and iolab did not create it: not using it as a work directory"
        ),
        "{failed}"
    );
    assert!(out.cleanup.problems.is_empty(), "{:?}", out.cleanup);
    assert_eq!(std::fs::read(theirs.join("keep")).unwrap(), b"mine");
}

#[test]
fn a_baseline_that_would_be_skipped_is_refused() {
    let mut targets = parse_fs_list("ext4,nosuchfs").unwrap();
    assign_labels(&mut targets).unwrap();
    let mut opts = options(None);
    opts.baseline = Some("nosuchfs".into());
    let e = campaign::preflight(&targets, &opts)
        .unwrap_err()
        .to_string();
    if !iolab_testkit::req::is_root() {
        assert!(e.contains("needs root"), "{e}");
        return;
    }
    assert_eq!(
        e,
        "target `nosuchfs`: --baseline names a target that cannot run here (unknown filesystem `nosuchfs`: neither the kernel nor a mkfs.nosuchfs on PATH knows it); choose another"
    );
}
