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
//! A name is followed link by link (at most 40, the kernel's limit), each
//! link checked: the opens try `O_NOFOLLOW` first and, on `ELOOP`, judge
//! the link and go on to its target. In a sticky directory another user
//! cannot replace a link they do not own, so a link found allowed stays
//! allowed until it is opened. The links of `/proc` (`/proc/self/fd/1`)
//! name open files, not paths: once allowed, the kernel follows them.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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

/// The name the allowed link `link` leads to.
fn target(link: &Path) -> io::Result<PathBuf> {
    let to = std::fs::read_link(link)?;
    Ok(if to.is_absolute() {
        to
    } else {
        parent(link).join(to)
    })
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

/// Follows the links at the name `path` as far as the rule allows, and
/// returns the name they lead to: one that is not a link, does not exist
/// yet, or is a link of `/proc` (the kernel follows it). A refused link
/// is an error of kind `PermissionDenied` carrying a [`ForeignLink`].
/// Other failures to look a name up stop there: the open that follows
/// reports them.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let m = match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => m,
            _ => return Ok(p),
        };
        judge(&p, &m)?;
        if in_procfs(&p) {
            return Ok(p);
        }
        p = target(&p)?;
    }
    Err(too_many(path))
}

/// Opens `path` with the options `opts` (their custom flags replaced by
/// `O_NOFOLLOW`), following the links at the name only as the rule
/// allows: each is judged when the open meets it, so one planted since a
/// [`resolve`] is judged too.
pub fn open(path: &Path, opts: &OpenOptions) -> io::Result<File> {
    let mut nofollow = opts.clone();
    nofollow.custom_flags(libc::O_NOFOLLOW);
    let mut p = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match nofollow.open(&p) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                let m = std::fs::symlink_metadata(&p)?;
                if !m.file_type().is_symlink() {
                    return Err(e);
                }
                judge(&p, &m)?;
                if in_procfs(&p) {
                    let mut follow = opts.clone();
                    follow.custom_flags(0);
                    return follow.open(&p);
                }
                p = target(&p)?;
            }
            r => return r,
        }
    }
    Err(too_many(path))
}

/// Whether `e` is the refusal of a link by the rule.
pub fn is_foreign(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<ForeignLink>())
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

    #[test]
    fn own_links_are_followed_to_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", d.join("a")).unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("b")).unwrap();
        assert_eq!(resolve(&d.join("b")).unwrap(), d.join("file"));
        // A link to nothing yet leads to the name it would create.
        std::os::unix::fs::symlink("new", d.join("c")).unwrap();
        assert_eq!(resolve(&d.join("c")).unwrap(), d.join("new"));
        let mut o = OpenOptions::new();
        o.write(true).create(true).truncate(true);
        open(&d.join("c"), &o).unwrap();
        assert!(d.join("new").is_file());
        // A loop ends in an error, not a hang.
        std::os::unix::fs::symlink("loop2", d.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", d.join("loop2")).unwrap();
        assert!(resolve(&d.join("loop1")).is_err());
        assert!(open(&d.join("loop1"), &o).is_err());
    }

    #[test]
    fn another_users_link_in_a_sticky_shared_dir_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        iolab_testkit::require!(root);
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.join("out");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        let e = resolve(&link).unwrap_err();
        assert!(is_foreign(&e), "{e}");
        assert!(e.to_string().contains("uid 65534"), "{e}");
        let mut o = OpenOptions::new();
        o.write(true).truncate(true);
        assert!(is_foreign(&open(&link, &o).unwrap_err()));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // The same link behind one of root's own: still judged.
        std::os::unix::fs::symlink(&link, d.join("mine")).unwrap();
        assert!(is_foreign(&open(&d.join("mine"), &o).unwrap_err()));
        // Not sticky: followed.
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(resolve(&link).unwrap(), victim);
    }

    #[test]
    fn proc_links_are_left_to_the_kernel() {
        let p = resolve(Path::new("/dev/stdout")).unwrap();
        assert!(p.starts_with("/proc"), "{}", p.display());
        let mut o = OpenOptions::new();
        o.write(true);
        open(Path::new("/dev/null"), &o).unwrap();
        open(Path::new("/proc/self/fd/2"), &o).unwrap();
    }
}
