//! Tests of the metadata benchmark on real directories.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::*;

fn opts(dir: &Path, files: u64) -> MetaOptions {
    MetaOptions {
        dir: dir.to_path_buf(),
        files,
        ..MetaOptions::default()
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

static GO: AtomicBool = AtomicBool::new(false);

/// The phases over `tree` in `dir` (open as `work`), never stopped.
fn phase_ctx<'a>(
    work: std::os::fd::BorrowedFd<'a>,
    dir: &'a Path,
    tree: &'a Tree,
    files: u64,
    threads: u32,
) -> PhaseCtx<'a> {
    PhaseCtx {
        work,
        work_path: dir,
        tree,
        files,
        threads,
        file_size: 0,
        fsync: false,
        stop: &GO,
        rank: None,
        makes_tree: true,
    }
}

#[test]
fn every_phase_counts_every_file_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run_meta(&opts(tmp.path(), 250), &GO).unwrap();
    let kinds: Vec<MetaPhaseKind> = r.phases.iter().map(|p| p.phase).collect();
    assert_eq!(kinds, FILE_PHASES);
    for p in &r.phases {
        assert_eq!(p.ops, 250, "{}", p.phase);
        assert_eq!(p.lat.count(), 250, "{}", p.phase);
        assert_eq!(p.lat.hist.total(), 250, "{}", p.phase);
        assert!(p.elapsed_ns > 0, "{}", p.phase);
    }
    assert_eq!((r.directories, r.leaves), (0, 1));
    assert_eq!(r.setup.options.files, 250);
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn threads_share_the_files_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let o = MetaOptions {
        threads: 3,
        dirs: 2,
        depth: 2,
        ..opts(tmp.path(), 101)
    };
    let r = run_meta(&o, &GO).unwrap();
    for p in &r.phases {
        let want = if p.phase.on_dirs() { 6 } else { 101 };
        assert_eq!(p.ops, want, "{}", p.phase);
        assert_eq!(p.lat.count(), want, "{}", p.phase);
    }
    assert_eq!(r.phases.first().unwrap().phase, MetaPhaseKind::Mkdir);
    assert_eq!(r.phases.last().unwrap().phase, MetaPhaseKind::Rmdir);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn the_tree_has_the_requested_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = Tree::new(90, 3, 2).unwrap();
    let work = fsops::open_dir(&c_path(tmp.path()).unwrap()).unwrap();
    let ctx = phase_ctx(work.as_fd(), tmp.path(), &tree, 90, 2);
    assert_eq!(ctx.dirs(MetaPhaseKind::Mkdir).unwrap().ops, 12);
    assert_eq!(ctx.create().unwrap().ops, 90);

    assert_eq!(entries(tmp.path()), ["d0", "d1", "d2"]);
    let mut files = 0;
    for top in ["d0", "d1", "d2"] {
        let top = tmp.path().join(top);
        assert_eq!(entries(&top), ["d0", "d1", "d2"]);
        for leaf in ["d0", "d1", "d2"] {
            let names = entries(&top.join(leaf));
            // Nine leaves of ten files each, named f<i>.
            assert_eq!(names.len(), 10, "{names:?}");
            assert!(names.iter().all(|n| n.starts_with('f')));
            files += names.len();
        }
    }
    assert_eq!(files, 90);
    // The first leaf holds the first ten files.
    assert!(tmp.path().join("d0/d0/f0").exists() && tmp.path().join("d0/d0/f9").exists());
    assert!(tmp.path().join("d2/d2/f89").exists());

    assert_eq!(ctx.readdir().unwrap().ops, 90);
    assert_eq!(ctx.unlink(b'f').unwrap().ops, 90);
    assert_eq!(ctx.dirs(MetaPhaseKind::Rmdir).unwrap().ops, 12);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn written_files_have_their_size() {
    let tmp = tempfile::tempdir().unwrap();
    let o = MetaOptions {
        file_size: 5000,
        fsync: true,
        phases: vec![MetaPhaseKind::Stat],
        ..opts(tmp.path(), 20)
    };
    let r = run_meta(&o, &GO).unwrap();
    let kinds: Vec<MetaPhaseKind> = r.phases.iter().map(|p| p.phase).collect();
    assert_eq!(
        kinds,
        [
            MetaPhaseKind::Create,
            MetaPhaseKind::Stat,
            MetaPhaseKind::Unlink
        ]
    );
    assert_eq!(r.phase(MetaPhaseKind::Stat).unwrap().ops, 20);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn bad_options_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (opts(tmp.path(), 0), "--files 0"),
        (opts(&tmp.path().join("nope"), 10), "does not exist"),
        (
            MetaOptions {
                threads: 0,
                ..opts(tmp.path(), 10)
            },
            "--threads 0",
        ),
        (
            MetaOptions {
                depth: 3,
                ..opts(tmp.path(), 10)
            },
            "--depth 3",
        ),
        (
            MetaOptions {
                dirs: 1000,
                depth: 3,
                ..opts(tmp.path(), 10)
            },
            "--dirs 1000 --depth 3",
        ),
    ];
    for (o, want) in cases {
        let err = run_meta(&o, &GO).unwrap_err();
        assert!(err.is_invalid(), "{err}");
        assert!(err.to_string().contains(want), "{err} lacks {want}");
    }
    std::fs::write(tmp.path().join("plain"), b"").unwrap();
    let err = run_meta(&opts(&tmp.path().join("plain"), 10), &GO).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
    assert_eq!(entries(tmp.path()), ["plain"]);
}

#[test]
fn a_stopped_run_removes_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(true);
    let err = run_meta(&opts(tmp.path(), 50), &stop).unwrap_err();
    assert!(
        matches!(
            err,
            MetaError::Interrupted {
                phase: MetaPhaseKind::Create
            }
        ),
        "{err}"
    );
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn a_failed_operation_names_the_phase_and_file_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = Tree::new(10, 0, 0).unwrap();
    let work = fsops::open_dir(&c_path(tmp.path()).unwrap()).unwrap();
    let ctx = phase_ctx(work.as_fd(), tmp.path(), &tree, 10, 1);
    ctx.create().unwrap();
    std::fs::remove_file(tmp.path().join("f7")).unwrap();
    let err = ctx.stat(b'f').unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("stat of "), "{msg}");
    assert!(
        msg.contains(&tmp.path().join("f7").display().to_string()),
        "{msg}"
    );
    assert!(msg.contains("No such file"), "{msg}");
}

#[test]
fn a_directory_that_cannot_be_opened_is_named_not_a_file_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = Tree::new(8, 2, 2).unwrap();
    let work = fsops::open_dir(&c_path(tmp.path()).unwrap()).unwrap();
    let ctx = phase_ctx(work.as_fd(), tmp.path(), &tree, 8, 1);
    ctx.dirs(MetaPhaseKind::Mkdir).unwrap();
    // The first leaf is gone: its open fails before any file in it is made.
    std::fs::remove_dir(tmp.path().join("d0/d0")).unwrap();
    let err = ctx.create().unwrap_err();
    assert!(matches!(err, MetaError::OpenDir { .. }), "{err:?}");
    let msg = err.to_string();
    let leaf = tmp.path().join("d0/d0").display().to_string();
    assert!(
        msg.starts_with("create phase: cannot open the directory ") && msg.contains(&leaf),
        "{msg}"
    );
    assert!(!msg.contains("f0"), "{msg}");
}

#[test]
fn directory_phases_need_a_tree() {
    let tmp = tempfile::tempdir().unwrap();
    for p in [MetaPhaseKind::Mkdir, MetaPhaseKind::Rmdir] {
        let o = MetaOptions {
            phases: vec![p],
            ..opts(tmp.path(), 10)
        };
        let err = run_meta(&o, &GO).unwrap_err();
        assert!(err.is_invalid(), "{err}");
        assert!(
            err.to_string().contains(&format!("`{p}`")) && err.to_string().contains("--dirs"),
            "{err}"
        );
        // With a tree they are accepted (they run anyway).
        let o = MetaOptions { dirs: 2, ..o };
        assert!(validate(&o).is_ok());
    }
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn a_run_that_did_not_finish_says_why_with_what_it_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let o = MetaOptions {
        phases: vec![MetaPhaseKind::Stat],
        ..opts(tmp.path(), 30)
    };
    let r = run_meta_partial(&o, &GO).unwrap();
    assert!(r.failure.is_none());
    assert_eq!(r.phases.len(), 3);
    // Stopped before its first phase: no phase finished, and it says why.
    let stop = AtomicBool::new(true);
    let f = run_meta_partial(&o, &stop).unwrap_err();
    assert!(
        matches!(f.error, MetaError::Interrupted { .. }),
        "{}",
        f.error
    );
    assert!(f.partial.phases.is_empty());
    assert_eq!(
        f.partial.failure.as_deref(),
        Some("interrupted during the create phase")
    );
    assert_eq!(f.partial.setup.options.files, 30);
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn processes_sharing_one_directory_name_their_files_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let o = opts(tmp.path(), 40);
    let dir = make_shared_dir(&o).unwrap();
    // Two ranks at once in one directory, without a tree (no phase needs
    // another's to have ended): each creates, renames and removes its own
    // 40 files, and neither meets the other's names.
    let results: Vec<MetaResult> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2u32)
            .map(|rank| {
                let (o, dir) = (&o, &dir);
                s.spawn(move || {
                    let shared = SharedDir {
                        path: dir.clone(),
                        rank,
                        makes_tree: rank == 0,
                    };
                    run_meta_shared(o, &shared, &GO, &mut |_, _, _| {}).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &results {
        for kind in [MetaPhaseKind::Create, MetaPhaseKind::Rename] {
            assert_eq!(r.phase(kind).unwrap().ops, 40);
        }
    }
    // The directory is left for the one that made it to remove.
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    remove_shared_dir(&dir).unwrap();
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn a_shared_directory_holding_what_a_failed_rank_left_is_removed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = make_shared_dir(&opts(tmp.path(), 1)).unwrap();
    std::fs::create_dir(dir.join("d0")).unwrap();
    std::fs::write(dir.join("d0").join("f3.1"), b"x").unwrap();
    remove_shared_dir(&dir).unwrap();
    assert!(entries(tmp.path()).is_empty());
    // Options that do not hold make nothing.
    assert!(make_shared_dir(&opts(&tmp.path().join("missing"), 1)).is_err());
    assert!(entries(tmp.path()).is_empty());
}
