//! The fault matrix's hostile and signal cases: files another local user
//! plants where root's iolab works (state files of the lab, symlinks
//! where quick makes its test file, shared work directories), and
//! SIGINT, SIGTERM, SIGHUP and SIGKILL in the middle of every measuring
//! command. Each case asserts the exit code, the message, and that
//! nothing is left behind: no files, work directories or mounts.
//!
//! The hostile steps run as `nobody` (uid 65534) through setpriv, so
//! they need root; without it they say so and return.

mod common;

use iolab_testkit::require;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Proc, Stdio};
use std::time::{Duration, Instant};

use common::{entries, iolab, test_db};

const NOBODY: u32 = 65534;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A directory anyone may write, sticky like /tmp.
fn shared_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Runs `sh -c script` as nobody; it must succeed.
fn as_nobody(script: &str) {
    let out = Proc::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["sh", "-c", script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "as nobody: {script}: {}",
        text(&out.stderr)
    );
}

/// A file of root's that a planted record or link points at.
fn victim(dir: &Path) -> PathBuf {
    let v = dir.join("precious");
    std::fs::write(&v, b"root's data").unwrap();
    v
}

fn assert_untouched(v: &Path) {
    assert_eq!(
        std::fs::read(v).unwrap(),
        b"root's data",
        "{} was changed",
        v.display()
    );
}

/// A job of `ms` milliseconds for `compare --job`.
fn job_file(dir: &Path, ms: u32) -> PathBuf {
    let job = dir.join("w.fio");
    std::fs::write(
        &job,
        format!("[w]\nrw=write\nbs=64k\nsize=4m\ntime_based=1\nruntime={ms}ms\n"),
    )
    .unwrap();
    job
}

/// `iolab compare --repeat 1 --no-store --job JOB --target t=TARGET`
/// with TMPDIR set to `tmp`.
fn compare_in(tmp: &Path, job: &Path, target: &Path) -> Proc {
    let mut c = Proc::new(assert_cmd::cargo::cargo_bin("iolab"));
    c.env("IOLAB_DB", test_db())
        .env("TMPDIR", tmp)
        .args(["compare", "--repeat", "1", "--no-store", "--job"])
        .arg(job)
        .arg("--target")
        .arg(format!("t={}", target.display()));
    c
}

#[test]
fn a_state_file_planted_by_another_user_is_left_alone() {
    require!(root);
    let tmp = shared_dir();
    let keep = tempfile::tempdir().unwrap();
    let precious = victim(keep.path());
    let victim_dir = keep.path().join("dir");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("a"), b"a").unwrap();
    // Another user's "lab workdir": a state file of a dead run naming
    // root's files, as private to that user as the lab's own would be.
    let planted = tmp.path().join("iolab-lab-666-abc");
    as_nobody(&format!(
        "mkdir -m 700 {w} && printf 'iolab-lab-state 1\\npid\\t4294967294\\t0\\nimage\\t{v}\\nworkfiles\\t{d}\\nworkdir\\t{w}\\n' > {w}/iolab-lab.state && chmod 600 {w}/iolab-lab.state",
        w = planted.display(),
        v = precious.display(),
        d = victim_dir.display(),
    ));

    // `--cleanup` finds it, says it leaves it alone, and exits 0.
    let out = iolab()
        .args(["compare", "--cleanup"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(text(&out.stdout).contains("nothing left to clean"));
    assert!(
        err.contains(&format!("left alone `{}", planted.display()))
            && err.contains("belongs to uid 65534, not to this user (uid 0)"),
        "{err}"
    );
    assert_untouched(&precious);
    assert_eq!(entries(&victim_dir), ["a"]);

    // A compare cleans stale workdirs by itself: the same.
    let target = tempfile::tempdir().unwrap();
    let job = job_file(keep.path(), 100);
    let out = compare_in(tmp.path(), &job, target.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("left alone"), "{err}");
    assert_untouched(&precious);
    assert_eq!(entries(&victim_dir), ["a"]);
    assert!(planted.join("iolab-lab.state").exists());
    assert!(entries(target.path()).is_empty());
}

#[test]
fn a_state_file_of_roots_that_names_paths_outside_is_not_acted_on() {
    require!(root);
    let keep = tempfile::tempdir().unwrap();
    let precious = victim(keep.path());
    // Root's own private workdir, but the records point elsewhere.
    let work = keep.path().join("w");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(
        work.join("iolab-lab.state"),
        format!(
            "iolab-lab-state 1\npid\t4294967294\t0\nimage\t{v}\nimage\t{w}/../precious\nmountdir\t{k}\nloop\t/dev/loop0\t{v}\n",
            v = precious.display(),
            w = work.display(),
            k = keep.path().display()
        ),
    )
    .unwrap();
    let out = iolab()
        .args(["compare", "--cleanup", "--workdir"])
        .arg(&work)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("left alone").count(), 4, "{err}");
    assert!(err.contains("is not inside the workdir"), "{err}");
    assert_untouched(&precious);
    assert!(keep.path().is_dir());
}

#[test]
fn a_workdir_others_can_write_is_refused() {
    let keep = tempfile::tempdir().unwrap();
    let open = keep.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = tempfile::tempdir().unwrap();
    let job = job_file(keep.path(), 100);
    let out = iolab()
        .args(["compare", "--repeat", "1", "--no-store", "--job"])
        .arg(&job)
        .arg("--target")
        .arg(format!("t={}", target.path().display()))
        .arg("--workdir")
        .arg(&open)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("--workdir `{}`", open.display()))
            && err.contains("its group or other users may write it"),
        "{err}"
    );
    assert!(entries(&open).is_empty());
    assert!(entries(target.path()).is_empty());

    if iolab_testkit::req::is_root() {
        // Another user's directory, however private, is refused too.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&open, Some(NOBODY), Some(NOBODY)).unwrap();
        let out = iolab()
            .args(["compare", "--cleanup", "--workdir"])
            .arg(&open)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("belongs to uid 65534"), "{err}");
    }
}

#[test]
fn quick_does_not_write_through_planted_names() {
    require!(root);
    let dir = shared_dir();
    let keep = tempfile::tempdir().unwrap();
    let precious = victim(keep.path());
    std::fs::set_permissions(keep.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // nobody plants links under every name quick has used for its test
    // file and probe, for the pid quick will have (the shell's, kept by
    // exec), then root's quick runs in that directory.
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let script = format!(
        "p=$$; setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
         \"ln -s {v} {d}/.iolab-quick-$p.tmp && ln -s {v} {d}/.iolab-odirect-probe-$p-0\" \
         && exec {bin} quick {d} --time 1s --size 64m --meta-files 100 --db {db}",
        v = precious.display(),
        d = dir.path().display(),
        bin = bin.display(),
        db = keep.path().join("r.db").display(),
    );
    let out = Proc::new("sh").args(["-c", &script]).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}{}", text(&out.stdout));
    assert_untouched(&precious);
    // The planted links are nobody's: left as they were. Quick's own
    // directory is gone.
    let left = entries(dir.path());
    assert_eq!(left.len(), 2, "{left:?}");
    for n in &left {
        let m = std::fs::symlink_metadata(dir.path().join(n)).unwrap();
        assert!(m.file_type().is_symlink() && m.uid() == NOBODY, "{n}");
    }
}

/// The job of the link cases: a bandwidth and a latency log beside it.
const LOGGED: &str =
    "[j]\nfilename=data\nrw=write\nbs=4k\nsize=64k\nwrite_bw_log=p\nwrite_lat_log=p\n";

#[test]
fn another_users_link_in_a_shared_dir_is_refused_at_data_log_report_and_db_names() {
    require!(root);
    // A fresh sticky, world-writable directory of root's (like /tmp): a
    // link nobody planted there at a name root will write is refused;
    // the same link of root's own is followed.
    let dir = shared_dir();
    let d = dir.path();
    let precious = victim(d);
    std::fs::write(d.join("j.fio"), LOGGED).unwrap();
    let cases: [(&str, &[&str]); 5] = [
        ("data", &["--no-store"]),
        ("p_bw.1.log", &["--no-store"]),
        ("p_clat.1.log", &["--no-store"]),
        ("report.txt", &["--no-store", "--output=report.txt"]),
        ("planted.db", &["--db=planted.db"]),
    ];
    let run = |extra: &[&str]| {
        iolab()
            .current_dir(d)
            .args(["run", "j.fio"])
            .args(extra)
            .output()
            .unwrap()
    };
    for (name, extra) in cases {
        let link = d.join(name);
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
        let out = run(extra);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}`"))
                && err.contains("symbolic link of uid 65534")
                && err.contains("shared directory"),
            "{name}: {err}"
        );
        assert_untouched(&precious);
        // Nothing was laid out, logged or stored.
        let mut left = vec!["j.fio", name, "precious"];
        left.sort();
        assert_eq!(entries(d), left, "{name}");
        // root's own link at the name: followed, to a file of its own
        // (one that exists: a data file is laid out only where none is).
        std::fs::remove_file(&link).unwrap();
        std::fs::write(d.join("mine"), b"").unwrap();
        std::os::unix::fs::symlink("mine", &link).unwrap();
        let out = run(extra);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let m = std::fs::metadata(d.join("mine")).unwrap();
        assert!(m.is_file() && m.len() > 0, "{name}: nothing went through");
        assert_untouched(&precious);
        for e in entries(d) {
            if !matches!(e.as_str(), "j.fio" | "precious") {
                std::fs::remove_file(d.join(e)).unwrap();
            }
        }
    }
}

/// The job of the cases without logs.
const PLAIN: &str = "[j]\nfilename=data\nrw=write\nbs=4k\nsize=64k\n";

/// A link at `link` to `to`, belonging to `uid`.
fn link_of(uid: u32, to: &Path, link: &Path) {
    std::os::unix::fs::symlink(to, link).unwrap();
    std::os::unix::fs::lchown(link, Some(uid), Some(uid)).unwrap();
}

#[test]
fn another_users_link_in_the_middle_of_a_name_is_refused() {
    require!(root);
    // /tmp/evil/NAME, where /tmp/evil is nobody's link, in a sticky shared
    // directory, to a directory of root's: refused at the data file, log,
    // report and database names and as quick's and meta's directory, naming the link, its owner and the directory;
    // nothing is laid out, logged, stored, or made in root's directory.
    let dir = shared_dir();
    let d = &std::fs::canonicalize(dir.path()).unwrap();
    let roots = tempfile::tempdir().unwrap();
    let r = &std::fs::canonicalize(roots.path()).unwrap();
    let precious = victim(r);
    let evil = d.join("evil");
    link_of(NOBODY, r, &evil);
    std::fs::write(d.join("j.fio"), PLAIN).unwrap();
    std::fs::write(d.join("l.fio"), LOGGED.replace("_log=p", "_log=evil/p")).unwrap();
    std::fs::write(d.join("f.fio"), PLAIN.replace("=data", "=evil/data")).unwrap();
    let cases: [&[&str]; 5] = [
        &["f.fio", "--no-store"],
        &["l.fio", "--no-store"],
        &["j.fio", "--no-store", "--output=evil/report.txt"],
        &["j.fio", "--db=evil/r.db"],
        &["j.fio", "--db=evil/sub/r.db"],
    ];
    let quick_meta: [&[&str]; 2] = [
        &["quick", "--no-store", "evil"],
        &["meta", "--no-store", "--files", "10", "evil"],
    ];
    let runs = cases.iter().map(|args| [&["run"][..], args].concat());
    for args in runs.chain(quick_meta.iter().map(|a| a.to_vec())) {
        let out = iolab().current_dir(d).args(&args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "`{}` is a symbolic link of uid 65534",
                evil.display()
            )) && err.contains(&format!("shared directory `{}`", d.display())),
            "{args:?}: {err}"
        );
        assert_untouched(&precious);
        assert_eq!(entries(r), ["precious"], "{args:?}");
        assert_eq!(entries(d), ["evil", "f.fio", "j.fio", "l.fio"], "{args:?}");
    }
    // The same link, root's own: followed, the database made beyond it.
    std::os::unix::fs::lchown(&evil, Some(0), Some(0)).unwrap();
    let out = iolab()
        .current_dir(d)
        .args(["run", "j.fio", "--db=evil/sub/r.db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(r.join("sub/r.db").is_file());
    assert_untouched(&precious);
}

#[test]
fn another_users_link_beside_the_database_is_refused() {
    require!(root);
    // nobody plants a link at the -wal, -shm or -journal name of a
    // database root is to create in a shared directory: refused before
    // the database is made (SQLite would not follow it either; see
    // iolab-store's tests).
    let dir = shared_dir();
    let d = dir.path();
    let precious = victim(d);
    std::fs::write(d.join("j.fio"), PLAIN).unwrap();
    for side in ["-wal", "-shm", "-journal"] {
        let name = format!("r.db{side}");
        let link = d.join(&name);
        link_of(NOBODY, &precious, &link);
        let out = iolab()
            .current_dir(d)
            .args(["run", "j.fio", "--db=r.db"])
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{side}: {err}");
        assert!(
            err.contains(&format!("{name}` is a symbolic link of uid 65534")),
            "{side}: {err}"
        );
        assert_untouched(&precious);
        assert_eq!(entries(d), ["j.fio", "precious", name.as_str()], "{side}");
        std::fs::remove_file(&link).unwrap();
    }
}

#[test]
fn compare_refuses_another_users_link_at_targets_workdir_device_and_tmpdir() {
    require!(root);
    // nobody's link /SHARED/evil, in a fresh sticky shared directory, to a
    // directory of root's: as a directory target, inside one, as the
    // --workdir, the --device and TMPDIR, refused before anything is made,
    // naming the link; root's directory is untouched.
    let dir = shared_dir();
    let d = &std::fs::canonicalize(dir.path()).unwrap();
    let roots = tempfile::tempdir().unwrap();
    let r = &std::fs::canonicalize(roots.path()).unwrap();
    let precious = victim(r);
    let evil = d.join("evil");
    link_of(NOBODY, r, &evil);
    let keep = tempfile::tempdir().unwrap();
    let job = job_file(keep.path(), 100);
    let target = tempfile::tempdir().unwrap();
    let t = target.path().to_path_buf();
    let e = evil.display();
    let cases: [(Vec<String>, Option<&Path>); 4] = [
        (vec![format!("t={e}")], None),
        (
            vec![
                format!("t={}", t.display()),
                "--workdir".into(),
                format!("{e}/w"),
            ],
            None,
        ),
        (vec![format!("t={}", t.display())], Some(&evil)),
        (
            vec!["ext4".into(), "--device".into(), format!("{e}/dev")],
            None,
        ),
    ];
    for (args, tmpdir) in cases {
        let mut c = iolab();
        c.args(["compare", "--repeat", "1", "--no-store", "--job"])
            .arg(&job);
        if args[0] == "ext4" {
            c.args(["--fs", "ext4", "--destroy-data"]).args(&args[1..]);
        } else {
            c.arg("--target").args(&args);
        }
        if let Some(tmp) = tmpdir {
            c.env("TMPDIR", tmp);
        }
        let out = c.output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("`{e}` is a symbolic link of uid 65534"))
                && err.contains(&format!("shared directory `{}`", d.display())),
            "{args:?}: {err}"
        );
        assert_untouched(&precious);
        assert_eq!(entries(r), ["precious"], "{args:?}");
        assert_eq!(entries(d), ["evil"], "{args:?}");
        assert!(entries(&t).is_empty(), "{args:?}");
    }
}

/// Makes a FIFO (named pipe) at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
}

#[test]
fn a_fifo_at_the_database_name_or_beside_it_is_refused_without_blocking() {
    // A FIFO planted at the --db name (or its -wal, -shm, -journal) in a
    // shared directory: an open for writing would wait for a reader
    // forever. Refused at once, naming the file and what it is; nothing
    // laid out or stored. The harness kills a run that blocks.
    let dir = shared_dir();
    let d = dir.path();
    std::fs::write(d.join("j.fio"), PLAIN).unwrap();
    for side in ["", "-wal", "-shm", "-journal"] {
        let name = format!("r.db{side}");
        mkfifo(&d.join(&name));
        for args in [
            &["run", "j.fio", "--db=r.db"][..],
            &["history", "--db=r.db"],
        ] {
            let out = iolab()
                .current_dir(d)
                .args(args)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {err}");
            assert!(
                err.contains(&format!("{name}: a FIFO (named pipe), not a regular file")),
                "{name} {args:?}: {err}"
            );
            assert_eq!(entries(d), ["j.fio", name.as_str()], "{name} {args:?}");
        }
        std::fs::remove_file(d.join(&name)).unwrap();
    }
}

#[test]
fn own_links_and_dev_stdout_are_followed_at_log_and_report_names() {
    // No other user and no shared directory: links are followed, as fio
    // follows them (`--output=/dev/stdout` is a common idiom).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("j.fio"), LOGGED).unwrap();
    std::os::unix::fs::symlink("bw.log", d.join("p_bw.1.log")).unwrap();
    let out = iolab()
        .current_dir(d)
        .args(["run", "--no-store", "j.fio", "--output-format=json"])
        .arg("--output=/dev/stdout")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["jobs"][0]["jobname"], "j");
    let bw = std::fs::read_to_string(d.join("bw.log")).unwrap();
    assert!(bw.lines().count() > 0, "the link's target holds the log");
    assert!(d.join("p_bw.1.log").is_symlink());
}

#[test]
fn a_data_file_through_ones_own_link_is_made_where_it_leads_and_the_link_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |name: &str| {
        iolab()
            .current_dir(d)
            .args(["run", "--no-store", "--name=x", "--rw=write", "--bs=4k"])
            .args(["--size=64k", "--unlink=0", &format!("--filename={name}")])
            .output()
            .unwrap()
    };
    // A link of one's own to a file not made yet: the file is made where
    // it leads, as fio's open makes it.
    std::os::unix::fs::symlink("data", d.join("l")).unwrap();
    let out = run("l");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(d.join("data")).unwrap().len(), 64 << 10);
    assert!(d.join("l").is_symlink());
    // A link whose file cannot be made: the layout fails, naming the
    // errno, and the link, which is not iolab's, stays.
    std::os::unix::fs::symlink("absent/data", d.join("m")).unwrap();
    let out = run("m");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("No such file or directory"), "{err}");
    assert!(d.join("m").is_symlink(), "the link was removed");
}

/// Waits until `ready` holds, while `child` runs.
fn wait_until(child: &mut Child, what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} never began");
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("ended before {what} began ({s}): {err}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `signal` to `child` and waits (at most a minute) for it to end;
/// its exit code and stderr.
fn signal_and_wait(child: Child, signal: &str) -> (Option<i32>, String) {
    let ok = Proc::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !waiter.is_finished() {
        if Instant::now() > deadline {
            let _ = Proc::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("still running a minute after SIG{signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = waiter.join().unwrap();
    (out.status.code(), text(&out.stderr))
}

fn spawn(cmd: &mut Proc) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const SIGNALS: [&str; 3] = ["INT", "TERM", "HUP"];

/// For each of SIGINT, SIGTERM and SIGHUP: starts `cmd(dir, tmp)` (two
/// fresh directories; TMPDIR is `tmp`), sends the signal once
/// `ready(dir)` holds, and checks that the command ends with exit 1,
/// saying `says` on stderr, and leaves both directories empty.
fn each_signal(
    what: &str,
    says: &str,
    cmd: impl Fn(&Path, &Path) -> Proc,
    ready: impl Fn(&Path) -> bool,
) {
    for sig in SIGNALS {
        let dir = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut c = cmd(dir.path(), tmp.path());
        c.env("IOLAB_DB", test_db()).env("TMPDIR", tmp.path());
        let mut child = spawn(&mut c);
        wait_until(&mut child, what, || ready(dir.path()));
        std::thread::sleep(Duration::from_millis(300));
        let (code, err) = signal_and_wait(child, sig);
        assert_eq!(code, Some(1), "{what}, SIG{sig}: {err}");
        assert!(err.contains(says), "{what}, SIG{sig}: {err}");
        for d in [dir.path(), tmp.path()] {
            assert!(
                entries(d).is_empty(),
                "{what}, SIG{sig}: left {:?}",
                entries(d)
            );
        }
    }
}

fn iolab_in(dir: &Path) -> Proc {
    let mut c = Proc::new(assert_cmd::cargo::cargo_bin("iolab"));
    c.current_dir(dir);
    c
}

fn has_entry(dir: &Path, prefix: &str) -> bool {
    entries(dir).iter().any(|e| e.starts_with(prefix))
}

/// Whether quick's private directory in `dir` holds its test file.
fn quick_began(dir: &Path) -> bool {
    entries(dir)
        .iter()
        .any(|q| q.starts_with(".iolab-quick-") && dir.join(q).join("data").exists())
}

#[test]
fn a_signal_mid_run_removes_its_files() {
    let job = [
        "run",
        "--no-store",
        "--name=s",
        "--filename=f",
        "--size=16m",
        "--rw=write",
        "--bs=64k",
        "--time_based",
        "--runtime=60",
        "--unlink=1",
    ];
    each_signal(
        "the run",
        "interrupted",
        |dir, _| {
            let mut c = iolab_in(dir);
            c.args(job);
            c
        },
        |dir| dir.join("f").exists(),
    );
}

#[test]
fn a_signal_mid_quick_removes_its_test_file() {
    each_signal(
        "the quick suite",
        "interrupted",
        |dir, _| {
            let mut c = iolab_in(dir);
            c.arg("quick")
                .arg(dir)
                .args(["--time", "60s", "--size", "64m", "--meta-files", "100"])
                .arg("--no-store");
            c
        },
        quick_began,
    );
}

#[test]
fn a_signal_mid_meta_removes_its_tree() {
    each_signal(
        "the metadata pass",
        "interrupted",
        |dir, _| {
            let mut c = iolab_in(dir);
            c.args(["meta", "--no-store", "--files", "5000000"])
                .arg(dir);
            c
        },
        |dir| has_entry(dir, "iolab-meta."),
    );
}

#[test]
fn a_signal_mid_sweep_removes_its_files() {
    let sweep = [
        "sweep",
        "--no-store",
        "--name=s",
        "--filename=f",
        "--size=16m",
        "--time_based",
        "--runtime=60",
        "--bs",
        "4k,64k",
        "--rw=write",
    ];
    each_signal(
        "the sweep",
        "interrupted",
        |dir, _| {
            let mut c = iolab_in(dir);
            c.args(sweep);
            c
        },
        |dir| dir.join("f").exists(),
    );
}

#[test]
fn a_signal_mid_compare_removes_its_work() {
    let keep = tempfile::tempdir().unwrap();
    let job = job_file(keep.path(), 60_000);
    each_signal(
        "the comparison",
        "interrupted",
        |dir, tmp| compare_in(tmp, &job, dir),
        |dir| has_entry(dir, "iolab-compare-"),
    );
}

#[test]
fn after_a_kill_the_next_compare_removes_what_was_left_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let job = job_file(keep.path(), 60_000);
    let mut child = spawn(&mut compare_in(tmp.path(), &job, target.path()));
    // The work directory is made, then recorded: wait for the record.
    let t = tmp.path().to_path_buf();
    wait_until(&mut child, "the workload", || {
        entries(&t).iter().any(|w| {
            std::fs::read_to_string(t.join(w).join("iolab-lab.state"))
                .is_ok_and(|s| s.contains("workfiles"))
        })
    });
    child.kill().unwrap(); // SIGKILL: no cleanup at all
    child.wait().unwrap();
    assert!(has_entry(target.path(), "iolab-compare-"));
    assert!(has_entry(tmp.path(), "iolab-lab-"));

    let short = job_file(keep.path(), 100);
    let other = tempfile::tempdir().unwrap();
    let out = compare_in(tmp.path(), &short, other.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("a killed run's leftovers: removed") && err.contains("iolab-compare-"),
        "{err}"
    );
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn after_a_kill_the_next_quick_removes_its_test_file_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let db = keep.path().join("r.db");
    let mut child = spawn(
        iolab_in(dir.path())
            .arg("quick")
            .arg(dir.path())
            .args(["--time", "60s", "--size", "64m", "--db"])
            .arg(&db),
    );
    wait_until(&mut child, "the suite", || quick_began(dir.path()));
    let pid = child.id();
    child.kill().unwrap();
    child.wait().unwrap();
    let left = entries(dir.path());
    assert_eq!(left.len(), 1, "{left:?}");

    let out = iolab()
        .arg("quick")
        .arg(dir.path())
        .args([
            "--time",
            "1s",
            "--size",
            "64m",
            "--meta-files",
            "100",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "removed {}, left by a quick run that was killed (pid {pid})",
            dir.path().canonicalize().unwrap().join(&left[0]).display()
        )),
        "{err}"
    );
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}
