//! The one rule for following a symbolic link at a name the user gave:
//! `--output`, the `write_*_log` files and `--db`. It is the kernel's
//! `fs.protected_symlinks` rule, applied here whatever that sysctl says:
//! a link may be followed unless it sits in a sticky, world-writable
//! directory (`/tmp`) and belongs neither to the follower (the effective
//! uid) nor to the directory's owner. That is exactly the hazard of a root
//! process writing in a shared directory: another user plants a link at a
//! predictable name and root truncates the file it points to. Links of
//! one's own, links in directories only their owner may write, and
//! root's links in `/dev` (`--output=/dev/stdout`) are followed.
//!
//! Every component of a name is judged, not only the last: in
//! `/tmp/evil/report` a link `/tmp/evil` of another user's is refused as
//! the kernel refuses it. [`resolve`] walks the name component by
//! component (at most 40 links, the kernel's limit), judging each link
//! it meets and going on to its target, and returns the name without
//! links it leads to. [`open`] opens that name following no link at all
//! (openat2's `RESOLVE_NO_SYMLINKS`): a link planted anywhere in it since
//! the walk is met there, and the walk is done again, judging it. The
//! links of `/proc` (`/proc/self/fd/1`) name open files, not paths: once
//! allowed, the kernel follows them.

use std::ffi::OsString;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// How many links one name may go through (the kernel's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;
/// The sticky bit and the others-may-write bit.
const STICKY_SHARED: u32 = 0o1002;

/// A link the rule refuses to follow.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{}` is a symbolic link of {owner} in the shared directory `{}` (sticky, \
     anyone may write in it), neither this user's nor the directory owner's: iolab \
     follows no such link (name the file itself)",
    link.display(),
    dir.display()
)]
pub struct ForeignLink {
    pub link: PathBuf,
    /// `uid N (name)`.
    pub owner: String,
    pub dir: PathBuf,
}

/// A FIFO the rule refuses to open: the kernel's `fs.protected_fifos`.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{}` is a FIFO (named pipe) of {owner} in the shared directory `{}` (sticky, \
     anyone may write in it), neither this user's nor the directory owner's: iolab \
     writes to no such FIFO (an open of it could wait for a reader forever)",
    fifo.display(),
    dir.display()
)]
pub struct ForeignFifo {
    pub fifo: PathBuf,
    /// `uid N (name)`.
    pub owner: String,
    pub dir: PathBuf,
}

/// Refuses the FIFO at `path` (a name without links) when it belongs to
/// another user in a sticky shared directory whose owner it is not
/// either: the kernel's `fs.protected_fifos` rule for opens that may
/// create, applied whatever the sysctl says. One's own FIFO, or one in a
/// directory only its owner may write, is opened (and the open waits for
/// a reader, as a shell's redirection does).
pub fn judge_fifo(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !m.file_type().is_fifo() {
        return Ok(());
    }
    let dir = parent(path);
    let d = std::fs::metadata(&dir)?;
    if may_follow(iolab_engine::host::euid(), m.uid(), d.mode(), d.uid()) {
        return Ok(());
    }
    let refused = ForeignFifo {
        fifo: path.to_path_buf(),
        owner: user(m.uid()),
        dir: std::fs::canonicalize(&dir).unwrap_or(dir),
    };
    Err(io::Error::new(io::ErrorKind::PermissionDenied, refused))
}

/// Whether a process of effective uid `follower` may follow a link owned
/// by `link_uid` in a directory of mode `dir_mode` owned by `dir_uid`
/// (the kernel's `may_follow_link`).
pub fn may_follow(follower: u32, link_uid: u32, dir_mode: u32, dir_uid: u32) -> bool {
    link_uid == follower || dir_mode & STICKY_SHARED != STICKY_SHARED || dir_uid == link_uid
}

/// The directory holding the name `path`.
fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Judges the link `link` (whose own metadata is `meta`) by the rule.
fn judge(link: &Path, meta: &Metadata) -> io::Result<()> {
    let dir = parent(link);
    let d = std::fs::metadata(&dir)?;
    if may_follow(iolab_engine::host::euid(), meta.uid(), d.mode(), d.uid()) {
        return Ok(());
    }
    let refused = ForeignLink {
        link: link.to_path_buf(),
        owner: user(meta.uid()),
        // `.` says little in a message: the directory's full name.
        dir: std::fs::canonicalize(&dir).unwrap_or(dir),
    };
    Err(io::Error::new(io::ErrorKind::PermissionDenied, refused))
}

/// Whether the link `link` lies in procfs, whose links name open files.
fn in_procfs(link: &Path) -> bool {
    matches!(
        iolab_engine::file::fs_type(&parent(link)),
        Ok(iolab_engine::file::FsType::Proc)
    )
}

fn too_many(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "`{}`: more than {MAX_LINKS} symbolic links in a row",
            path.display()
        ),
    )
}

/// The names of `path`'s components, in order: `..` kept, `/` and `.`
/// left out.
fn names(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Where a walk of a name ended.
struct Walked {
    /// The absolute name the links lead to.
    path: PathBuf,
    /// Whether it goes through a link of `/proc`, left to the kernel.
    proc_link: bool,
}

/// Walks `path` component by component from the root (or the current
/// directory), judging each link met and going on to its target. The
/// name walked so far has no link in it, so `..` is its parent. A
/// component that cannot be looked at (one that does not exist yet) ends
/// the walk: the rest is appended as written, for the open to create or
/// report.
fn walk(path: &Path) -> io::Result<Walked> {
    let mut done = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir()?
    };
    // The components still to walk, the next one last.
    let mut rest: Vec<OsString> = names(path).into_iter().rev().collect();
    let mut links = 0;
    let finish = |mut done: PathBuf, rest: Vec<OsString>, proc_link| -> io::Result<Walked> {
        done.extend(rest.iter().rev());
        Ok(Walked {
            path: done,
            proc_link,
        })
    };
    while let Some(name) = rest.pop() {
        if name == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&name);
        let m = match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => m,
            Ok(_) => {
                done = next;
                continue;
            }
            Err(_) => return finish(next, rest, false),
        };
        judge(&next, &m)?;
        if in_procfs(&next) {
            return finish(next, rest, true);
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(too_many(path));
        }
        let to = std::fs::read_link(&next)?;
        if to.is_absolute() {
            done = PathBuf::from("/");
        }
        rest.extend(names(&to).into_iter().rev());
    }
    finish(done, rest, false)
}

/// Follows the links of the name `path`, in every component, as far as
/// the rule allows, and returns the absolute name they lead to: one with
/// no link in it (its last components may not exist yet), or one through
/// a link of `/proc` (the kernel follows it). A refused link is an error
/// of kind `PermissionDenied` carrying a [`ForeignLink`]. Other failures
/// to look a name up stop there: the open that follows reports them.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    walk(path).map(|w| w.path)
}

/// Opens `path` with the open(2) `flags` and `mode`, following its links
/// only as the rule allows: [`resolve`]d, then opened following no link
/// at all, so that a link planted anywhere in the name since is not
/// followed but met, judged by a new walk, and the open tried again.
pub fn open(path: &Path, flags: i32, mode: u32) -> io::Result<File> {
    for _ in 0..=MAX_LINKS {
        let w = walk(path)?;
        if w.proc_link {
            let acc = flags & libc::O_ACCMODE;
            return OpenOptions::new()
                .read(acc != libc::O_WRONLY)
                .write(acc != libc::O_RDONLY)
                .mode(mode)
                .custom_flags(flags)
                .open(&w.path);
        }
        judge_fifo(&w.path)?;
        match iolab_engine::file::open_no_links(&w.path, flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {}
            r => return r,
        }
    }
    Err(too_many(path))
}

/// Whether `e` is the refusal of a link (or a FIFO) by the rule.
pub fn is_foreign(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<ForeignLink>() || inner.is::<ForeignFifo>())
}

/// `uid N (name)`, the name from /etc/passwd when it has one.
fn user(uid: u32) -> String {
    let name = std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut f = line.split(':');
                let name = f.next()?;
                (f.nth(1)?.parse::<u32>().ok()? == uid).then(|| name.to_string())
            })
        });
    match name {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_is_the_kernels() {
        let (root, alice, bob) = (0, 1000, 1001);
        // A shared sticky directory: only one's own links and the
        // directory owner's are followed.
        assert!(may_follow(root, root, 0o41777, root));
        assert!(!may_follow(root, alice, 0o41777, root));
        assert!(may_follow(alice, alice, 0o41777, root));
        assert!(may_follow(root, bob, 0o41777, bob));
        // Not sticky, or not world-writable: any link is followed.
        assert!(may_follow(root, alice, 0o40777, root));
        assert!(may_follow(root, alice, 0o41775, root));
        assert!(may_follow(root, alice, 0o40755, root));
    }

    /// The flags of a report or log opened for writing.
    const WRITE: i32 = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;

    #[test]
    fn own_links_are_followed_to_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let d = &std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", d.join("a")).unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("b")).unwrap();
        assert_eq!(resolve(&d.join("b")).unwrap(), d.join("file"));
        // A link to nothing yet leads to the name it would create.
        std::os::unix::fs::symlink("new", d.join("c")).unwrap();
        assert_eq!(resolve(&d.join("c")).unwrap(), d.join("new"));
        open(&d.join("c"), WRITE, 0o644).unwrap();
        assert!(d.join("new").is_file());
        // A loop ends in an error, not a hang.
        std::os::unix::fs::symlink("loop2", d.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", d.join("loop2")).unwrap();
        assert!(resolve(&d.join("loop1")).is_err());
        assert!(open(&d.join("loop1"), WRITE, 0o644).is_err());
    }

    #[test]
    fn links_in_the_middle_of_a_name_are_followed_and_dot_dot_is_the_targets_parent() {
        let dir = tempfile::tempdir().unwrap();
        let d = &std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(d.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real/sub", d.join("via")).unwrap();
        // via/../x is real/x, as the kernel reads it, not d/x.
        assert_eq!(resolve(&d.join("via/../x")).unwrap(), d.join("real/x"));
        assert_eq!(
            resolve(&d.join("via/new/deeper")).unwrap(),
            d.join("real/sub/new/deeper")
        );
        open(&d.join("via/log"), WRITE, 0o644).unwrap();
        assert!(d.join("real/sub/log").is_file());
        // A relative name is walked from the current directory.
        let here = std::env::current_dir().unwrap();
        assert_eq!(resolve(Path::new("x")).unwrap(), here.join("x"));
    }

    /// A fresh sticky directory anyone may write, like /tmp, with a file
    /// of root's and a link to it at `name` that belongs to uid 65534.
    fn shared_with_planted(name: &str, to: &Path) -> (tempfile::TempDir, PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let link = d.join(name);
        std::os::unix::fs::symlink(to, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        (dir, link)
    }

    /// A file of root's holding "keep", in a directory of its own (kept
    /// as long as the first value).
    fn victim() -> (tempfile::TempDir, PathBuf) {
        let keep = tempfile::tempdir().unwrap();
        let victim = std::fs::canonicalize(keep.path()).unwrap().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        (keep, victim)
    }

    #[test]
    fn another_users_link_in_a_sticky_shared_dir_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        iolab_testkit::require!(root);
        let (_keep, victim) = victim();
        let (dir, link) = shared_with_planted("out", &victim);
        let d = dir.path();
        let e = resolve(&link).unwrap_err();
        assert!(is_foreign(&e), "{e}");
        assert!(e.to_string().contains("uid 65534"), "{e}");
        assert!(is_foreign(&open(&link, WRITE, 0o644).unwrap_err()));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // The same link behind one of root's own: still judged.
        std::os::unix::fs::symlink(&link, d.join("mine")).unwrap();
        assert!(is_foreign(
            &open(&d.join("mine"), WRITE, 0o644).unwrap_err()
        ));
        // Not sticky: followed.
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(resolve(&link).unwrap(), victim);
    }

    /// The engines open a job's data file by the rule too: a link planted
    /// after the plan and the layout is met at the open, not followed.
    #[test]
    fn an_engine_opens_a_data_file_by_the_rule() {
        use iolab_engine::{EngineKind, EngineOpts, FileSpec, Opener};
        iolab_testkit::require!(root);
        let (_keep, victim) = victim();
        let (dir, link) = shared_with_planted("data", &victim);
        let spec = |path: &Path| FileSpec {
            path: path.to_path_buf(),
            write: true,
            create: true,
            opener: Some(Opener(open)),
            ..Default::default()
        };
        for kind in [EngineKind::Psync, EngineKind::Libaio, EngineKind::IoUring] {
            let mut e = match iolab_engine::create(kind, &EngineOpts::default()) {
                Ok(e) => e,
                // A kernel without io_uring or libaio: psync still shows it.
                Err(_) if kind != EngineKind::Psync => continue,
                Err(e) => panic!("{e}"),
            };
            let err = e.open(&spec(&link)).unwrap_err().to_string();
            assert!(err.contains("uid 65534"), "{kind:?}: {err}");
            assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
            // A name of one's own in the same directory opens as before.
            let own = dir.path().join(format!("own-{kind:?}"));
            e.open(&spec(&own)).unwrap();
            assert!(own.is_file());
        }
    }

    #[test]
    fn another_users_link_in_the_middle_of_a_name_is_refused() {
        iolab_testkit::require!(root);
        // /tmp/evil/report where /tmp/evil is nobody's link to a
        // directory of root's: refused at the walk and at the open,
        // naming the link, its owner and the directory; nothing is made.
        let keep = tempfile::tempdir().unwrap();
        let roots = std::fs::canonicalize(keep.path()).unwrap();
        std::fs::write(roots.join("report"), b"keep").unwrap();
        let (dir, link) = shared_with_planted("evil", &roots);
        let d = std::fs::canonicalize(dir.path()).unwrap();
        for name in [
            "evil/report",
            "evil/new",
            "evil/sub/new",
            "evil/../x/../evil/new",
        ] {
            let e = resolve(&d.join(name)).unwrap_err();
            assert!(is_foreign(&e), "{name}: {e}");
            let said = e.to_string();
            assert!(
                said.contains(&format!("`{}`", link.display()))
                    && said.contains("uid 65534")
                    && said.contains(&format!("`{}`", d.display())),
                "{name}: {said}"
            );
            let e = open(&d.join(name), WRITE, 0o644).unwrap_err();
            assert!(is_foreign(&e), "{name}: {e}");
        }
        assert_eq!(std::fs::read(roots.join("report")).unwrap(), b"keep");
        let mut left: Vec<_> = std::fs::read_dir(&roots)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["report"]);
    }

    #[test]
    fn another_users_fifo_in_a_sticky_shared_dir_is_refused_without_blocking() {
        use std::os::unix::fs::PermissionsExt;
        iolab_testkit::require!(root);
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let fifo = d.join("report.txt");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        std::os::unix::fs::lchown(&fifo, Some(65534), Some(65534)).unwrap();
        // Refused before the open, which would wait for a reader.
        let e = open(&fifo, WRITE, 0o644).unwrap_err();
        assert!(is_foreign(&e), "{e}");
        let said = e.to_string();
        assert!(
            said.contains("is a FIFO (named pipe) of uid 65534") && said.contains("shared"),
            "{said}"
        );
        // One's own FIFO is opened: without a reader, a non-blocking open
        // says so (ENXIO) instead of being refused by the rule.
        std::os::unix::fs::lchown(&fifo, Some(0), Some(0)).unwrap();
        let e = open(&fifo, libc::O_WRONLY | libc::O_NONBLOCK, 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENXIO), "{e}");
    }

    #[test]
    fn proc_links_are_left_to_the_kernel() {
        let p = resolve(Path::new("/dev/stdout")).unwrap();
        assert!(p.starts_with("/proc"), "{}", p.display());
        open(Path::new("/dev/null"), libc::O_WRONLY, 0).unwrap();
        open(Path::new("/proc/self/fd/2"), libc::O_WRONLY, 0).unwrap();
        open(Path::new("/dev/stderr"), libc::O_WRONLY | libc::O_APPEND, 0).unwrap();
    }
}
