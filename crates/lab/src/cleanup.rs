//! Removing what the lab created, and nothing else, from the records of a
//! state file: unmount its mounts, delete its work files on directory
//! targets, stop the bcache stacks on its loop devices, detach the loop
//! devices whose backing file is one of its images, delete its images and
//! mount directories, then the state file and the workdir it made. Runs after every campaign (success, error,
//! Ctrl-C) and from `iolab compare --cleanup` after a kill.
//!
//! What a state file lists is acted on only when [`State::load`] trusts
//! the file and the record (see `state`); everything else is reported as
//! left alone. A work directory in a `--target` directory is removed only
//! when it is still a real directory of this user's.

use std::path::{Path, PathBuf};

use crate::error::LabError;
use crate::state::{Entry, State, FILE_NAME};
use crate::{loopdev, mount, mountinfo};

/// What a cleanup did and what it could not do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanupReport {
    pub removed: Vec<String>,
    pub problems: Vec<String>,
    /// What was found but not taken as the lab's (another user's state
    /// file, a record naming a path outside its workdir), with the reason.
    pub left_alone: Vec<String>,
}

impl CleanupReport {
    pub fn merge(&mut self, o: CleanupReport) {
        self.removed.extend(o.removed);
        self.problems.extend(o.problems);
        self.left_alone.extend(o.left_alone);
    }
}

/// Removes everything `state` lists, then the state file and the workdir
/// the lab made when nothing else is left.
pub fn clean(state: &mut State) -> CleanupReport {
    let mut r = release(state);
    finish(state, &mut r);
    r
}

/// Removes what `state` lists, in an order that works (mounts before
/// loop devices before images), forgetting each thing once it is gone;
/// the state file and the workdir stay.
pub fn release(state: &mut State) -> CleanupReport {
    let mut r = CleanupReport {
        left_alone: std::mem::take(&mut state.refused),
        ..Default::default()
    };
    let entries = state.entries.clone();
    unmount(state, &entries, &mut r);
    remove_work_files(state, &entries, &mut r);
    release_bcache(state, &entries, &mut r);
    detach_loops(state, &entries, &mut r);
    remove_files(state, &entries, &mut r);
    r
}

/// Forgets an entry that is gone, saying `what` was done when it says
/// something.
fn gone(state: &mut State, e: &Entry, what: String, r: &mut CleanupReport) {
    if let Err(err) = state.remove(e) {
        r.problems.push(err.to_string());
    }
    if !what.is_empty() {
        r.removed.push(what);
    }
}

/// Unmounts the mounts listed.
fn unmount(state: &mut State, entries: &[Entry], r: &mut CleanupReport) {
    for e in entries {
        if let Entry::Mount(dir) = e {
            match unmount_all(dir) {
                Ok(true) => gone(state, e, format!("unmounted {}", dir.display()), r),
                Ok(false) => gone(state, e, String::new(), r),
                Err(err) => r.problems.push(err.to_string()),
            }
        }
    }
}

/// Removes the work file directories listed, when they are still the
/// lab's own.
fn remove_work_files(state: &mut State, entries: &[Entry], r: &mut CleanupReport) {
    for e in entries {
        if let Entry::WorkFiles(dir) = e {
            match iolab_core::private::is_own_dir(dir) {
                Err(iolab_core::private::Distrust::Io(err))
                    if err.kind() == std::io::ErrorKind::NotFound =>
                {
                    gone(state, e, String::new(), r);
                    continue;
                }
                Err(why) => {
                    r.left_alone
                        .push(format!("left alone `{}`: {why}", dir.display()));
                    gone(state, e, String::new(), r);
                    continue;
                }
                Ok(()) => {}
            }
            // Removes the entries of the directory without following
            // symlinks in it.
            match std::fs::remove_dir_all(dir) {
                Ok(()) => gone(state, e, format!("removed {}", dir.display()), r),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    gone(state, e, String::new(), r)
                }
                Err(err) => r
                    .problems
                    .push(format!("cannot remove `{}`: {err}", dir.display())),
            }
        }
    }
}

/// Releases the bcache stacks listed.
fn release_bcache(state: &mut State, entries: &[Entry], r: &mut CleanupReport) {
    // bcache stacks before the loop devices under them: the bcache
    // device stopped, its cache set unregistered, each waited for.
    for e in entries {
        let (device, ours) = match e {
            Entry::Bcache { device, image } => (
                device,
                loopdev::backing_file(device).as_deref() == Some(image.as_path()),
            ),
            Entry::BcacheNamed(device) => (device, true),
            _ => continue,
        };
        if !ours {
            // Detached already, or now someone else's: not ours.
            gone(state, e, String::new(), r);
            continue;
        }
        match crate::bcache::release_member(device) {
            Ok(done) => {
                r.removed.extend(done);
                gone(state, e, String::new(), r);
            }
            Err(err) => r.problems.push(err.to_string()),
        }
    }
}

/// Detaches the loop devices listed (and those attached to a listed image
/// but not recorded), when still backed by the lab's image.
fn detach_loops(state: &mut State, entries: &[Entry], r: &mut CleanupReport) {
    for e in entries {
        match e {
            Entry::Loop { device, image } => {
                if loopdev::backing_file(device).as_deref() == Some(image.as_path()) {
                    match loopdev::detach(device) {
                        Ok(()) => gone(state, e, format!("detached {}", device.display()), r),
                        // Detached meanwhile by another thread of this run.
                        Err(_)
                            if loopdev::backing_file(device).as_deref()
                                != Some(image.as_path()) =>
                        {
                            gone(state, e, String::new(), r)
                        }
                        Err(err) => r.problems.push(err.to_string()),
                    }
                } else {
                    // Detached already, or now someone else's: not ours.
                    gone(state, e, String::new(), r);
                }
            }
            Entry::Image(image) => {
                // A loop device attached but not yet recorded (killed
                // between losetup and the state write).
                for device in loopdev::devices_backed_by(image) {
                    match loopdev::detach(&device) {
                        Ok(()) => r.removed.push(format!("detached {}", device.display())),
                        Err(err) => r.problems.push(err.to_string()),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Removes the images and mount points listed.
fn remove_files(state: &mut State, entries: &[Entry], r: &mut CleanupReport) {
    for e in entries {
        match e {
            Entry::Image(p) => match std::fs::remove_file(p) {
                Ok(()) => gone(state, e, format!("removed {}", p.display()), r),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    gone(state, e, String::new(), r)
                }
                Err(err) => r
                    .problems
                    .push(format!("cannot remove `{}`: {err}", p.display())),
            },
            Entry::MountDir(p) => match std::fs::remove_dir(p) {
                Ok(()) => gone(state, e, String::new(), r),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    gone(state, e, String::new(), r)
                }
                Err(err) => r
                    .problems
                    .push(format!("cannot remove `{}`: {err}", p.display())),
            },
            _ => {}
        }
    }
}

/// Deletes the state file and the workdir the lab made, once only the
/// workdir is listed.
fn finish(state: &mut State, r: &mut CleanupReport) {
    let workdir = state.entries.iter().find_map(|e| match e {
        Entry::Workdir(p) => Some(p.clone()),
        _ => None,
    });
    let only_workdir_left = state.entries.iter().all(|e| matches!(e, Entry::Workdir(_)));
    if only_workdir_left {
        if let Err(err) = state.delete() {
            r.problems.push(err.to_string());
        }
        if let Some(w) = workdir {
            match std::fs::remove_dir(&w) {
                Ok(()) => r.removed.push(format!("removed {}", w.display())),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                // Files the lab did not make are there: the workdir stays.
                Err(err) if err.raw_os_error() == Some(libc::ENOTEMPTY) => {}
                Err(err) => r
                    .problems
                    .push(format!("cannot remove `{}`: {err}", w.display())),
            }
        }
    }
}

/// Unmounts whatever is mounted at `dir` (stacked mounts too); says
/// whether anything was.
fn unmount_all(dir: &Path) -> Result<bool, LabError> {
    let mut any = false;
    for _ in 0..8 {
        if !mountinfo::is_mount_point(&mountinfo::read(), dir) {
            return Ok(any);
        }
        if let Err(e) = mount::umount(dir) {
            if !mountinfo::is_mount_point(&mountinfo::read(), dir) {
                // Unmounted meanwhile by another thread of this run.
                return Ok(any);
            }
            // Busy: detach it from the tree now; the kernel finishes the
            // unmount when the last user lets go.
            if crate::exec::run("umount", &["--lazy".as_ref(), dir.as_os_str()]).is_err() {
                return Err(e);
            }
        }
        any = true;
    }
    Ok(any)
}

/// Cleans the workdir a killed run left; `None` when it holds no state
/// file. A state owned by a process that still runs is left alone.
pub fn clean_workdir(workdir: &Path) -> Result<Option<CleanupReport>, LabError> {
    let workdir = &crate::campaign::absolute(workdir);
    let Some(mut state) = State::load(workdir)? else {
        return Ok(None);
    };
    if state.owner_alive() {
        return Err(LabError::State {
            path: state.path().to_path_buf(),
            reason: format!("a running iolab (pid {}) owns it; not cleaning", state.pid),
        });
    }
    // Adopt the records so that what is removed is forgotten.
    state.adopt();
    Ok(Some(clean(&mut state)))
}

/// Workdirs under `temp` that the lab made (`iolab-lab-*` with a state
/// file).
pub fn lab_workdirs(temp: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(temp) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("iolab-lab-"))
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p.join(FILE_NAME)).is_ok())
        .collect();
    v.sort();
    v
}

/// Cleans every workdir a dead run left under `temp` and in `extra`;
/// workdirs of running campaigns (other processes', or this one's under
/// `temp`) are skipped silently.
pub fn clean_stale(temp: &Path, extra: Option<&Path>) -> CleanupReport {
    let mut all = CleanupReport::default();
    let mut dirs = lab_workdirs(temp);
    if let Some(e) = extra {
        if !dirs.iter().any(|d| d == e) {
            dirs.push(e.to_path_buf());
        }
    }
    for d in dirs {
        let mine = extra == Some(d.as_path());
        match State::load(&d) {
            Ok(Some(s)) if s.owner_alive() => continue,
            // Another campaign of this very process (a library user
            // running several at once) is not stale either.
            Ok(Some(s)) if !mine && s.pid == std::process::id() => continue,
            Ok(_) => {}
            Err(e @ LabError::Untrusted { .. }) => {
                all.left_alone.push(e.to_string());
                continue;
            }
            Err(e) => {
                all.problems.push(e.to_string());
                continue;
            }
        }
        match clean_workdir(&d) {
            Ok(Some(r)) => all.merge(r),
            Ok(None) => {}
            Err(e @ LabError::Untrusted { .. }) => all.left_alone.push(e.to_string()),
            Err(e) => all.problems.push(e.to_string()),
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_files_and_dirs_it_recorded_only() {
        let d = tempfile::tempdir().unwrap();
        let work = d.path().join("iolab-lab-x");
        std::fs::create_dir(&work).unwrap();
        let img = work.join("a.img");
        let mnt = work.join("mnt-a");
        let other = work.join("user-file");
        std::fs::write(&img, b"x").unwrap();
        std::fs::write(&other, b"keep").unwrap();
        std::fs::create_dir(&mnt).unwrap();
        let mut s = State::create(&work).unwrap();
        s.add(Entry::Workdir(work.clone())).unwrap();
        s.add(Entry::Image(img.clone())).unwrap();
        s.add(Entry::MountDir(mnt.clone())).unwrap();
        // A recorded mount that is not mounted is simply forgotten.
        s.add(Entry::Mount(mnt.clone())).unwrap();
        assert_eq!(lab_workdirs(d.path()), vec![work.clone()]);
        let r = clean(&mut s);
        assert!(r.problems.is_empty(), "{r:?}");
        assert!(!img.exists() && !mnt.exists());
        // The user's file stays, and so the workdir does too.
        assert!(other.exists());
        assert!(r.problems.is_empty());
        assert!(!work.join(FILE_NAME).exists());
        assert!(lab_workdirs(d.path()).is_empty());
    }

    #[test]
    fn workdir_goes_when_empty() {
        let d = tempfile::tempdir().unwrap();
        let work = d.path().join("iolab-lab-y");
        std::fs::create_dir(&work).unwrap();
        let mut s = State::create(&work).unwrap();
        s.add(Entry::Workdir(work.clone())).unwrap();
        s.add(Entry::Image(work.join("b.img"))).unwrap();
        // Saved with a dead owner: a stale state found by clean_stale.
        s.pid = u32::MAX - 1;
        s.save().unwrap();
        let r = clean_stale(d.path(), None);
        assert!(r.problems.is_empty(), "{r:?}");
        assert!(!work.exists());
    }

    #[test]
    fn live_campaigns_are_not_stale() {
        let d = tempfile::tempdir().unwrap();
        let work = d.path().join("iolab-lab-z");
        std::fs::create_dir(&work).unwrap();
        let img = work.join("c.img");
        std::fs::write(&img, b"x").unwrap();
        // Owned by this process: another campaign of it, still running.
        let mut s = State::create(&work).unwrap();
        s.add(Entry::Image(img.clone())).unwrap();
        let r = clean_stale(d.path(), None);
        assert_eq!(r, CleanupReport::default());
        assert!(img.exists());
        // Owned by pid 1 since it started: alive, left alone as well.
        s.pid = 1;
        s.start = crate::state::start_time(1).unwrap();
        s.save().unwrap();
        let e = clean_workdir(&work).unwrap_err().to_string();
        assert!(e.contains("a running iolab (pid 1) owns it"), "{e}");
        assert!(img.exists());
    }

    /// A state file of this user's in a private workdir, saved with a dead
    /// owner, listing `lines` as they are.
    fn planted(work: &Path, lines: &[String]) {
        let mut text = format!("iolab-lab-state 1\npid\t{}\t0\n", u32::MAX - 1);
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(work.join(FILE_NAME), text).unwrap();
    }

    #[test]
    fn records_outside_the_workdir_are_left_alone() {
        use iolab_core::private;
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("precious"), b"keep").unwrap();
        let work = private::make_dir_in(d.path(), "iolab-lab-").unwrap();
        let mine = work.join("1-a.img");
        std::fs::write(&mine, b"x").unwrap();
        planted(
            &work,
            &[
                format!("workdir\t{}", work.display()),
                format!("image\t{}", mine.display()),
                format!("image\t{}", victim.join("precious").display()),
                format!("image\t{}/../victim/precious", work.display()),
                format!("mountdir\t{}", victim.display()),
                format!("workfiles\t{}", victim.display()),
                format!("workdir\t{}", victim.display()),
                format!("loop\t/dev/loop0\t{}", victim.join("precious").display()),
                // Its image is inside, but not listed as an image.
                format!("loop\t/dev/loop0\t{}", work.join("2-b.img").display()),
                format!("loop\t/etc/passwd\t{}", mine.display()),
            ],
        );
        let r = clean_stale(d.path(), None);
        assert!(r.problems.is_empty(), "{r:?}");
        assert_eq!(r.left_alone.len(), 8, "{r:#?}");
        assert!(r.left_alone.iter().all(|l| l.starts_with("left alone")));
        assert_eq!(std::fs::read(victim.join("precious")).unwrap(), b"keep");
        assert!(victim.is_dir());
        // What was the lab's went.
        assert!(!mine.exists());
        assert_eq!(
            r.removed,
            [
                format!("removed {}", mine.display()),
                format!("removed {}", work.display())
            ]
        );
    }

    #[test]
    fn state_files_others_could_write_are_not_believed() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        // A workdir anyone may write (as another user would plant it).
        let work = d.path().join("iolab-lab-planted");
        std::fs::create_dir(&work).unwrap();
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
        let victim = work.join("1-a.img");
        std::fs::write(&victim, b"keep").unwrap();
        planted(
            &work,
            &[
                format!("workdir\t{}", work.display()),
                format!("image\t{}", victim.display()),
            ],
        );
        let r = clean_stale(d.path(), None);
        assert!(r.removed.is_empty() && r.problems.is_empty(), "{r:?}");
        assert_eq!(r.left_alone.len(), 1, "{r:?}");
        assert!(
            r.left_alone[0].contains("its group or other users may write it"),
            "{r:?}"
        );
        assert!(victim.exists());
        let e = clean_workdir(&work).unwrap_err().to_string();
        assert!(e.contains("left alone"), "{e}");

        // A private workdir with a group-writable state file: the same.
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(work.join(FILE_NAME), std::fs::Permissions::from_mode(0o664))
            .unwrap();
        let r = clean_stale(d.path(), None);
        assert_eq!(r.left_alone.len(), 1, "{r:?}");
        assert!(victim.exists());

        // A workdir that is a symlink to a private one: the same.
        std::fs::set_permissions(work.join(FILE_NAME), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let real = d.path().join("real");
        std::fs::rename(&work, &real).unwrap();
        std::os::unix::fs::symlink(&real, &work).unwrap();
        let r = clean_stale(d.path(), None);
        assert_eq!(r.left_alone.len(), 1, "{r:?}");
        assert!(r.left_alone[0].contains("symbolic link"), "{r:?}");
        assert!(real.join("1-a.img").exists());
    }

    #[test]
    fn a_planted_temporary_file_is_not_written_through() {
        let d = tempfile::tempdir().unwrap();
        let work = iolab_core::private::make_dir_in(d.path(), "iolab-lab-").unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, work.join("iolab-lab.state.tmp")).unwrap();
        let mut s = State::create(&work).unwrap();
        s.add(Entry::Image(work.join("a.img"))).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(work.join(FILE_NAME))
            .unwrap()
            .is_file());
        assert_eq!(State::load(&work).unwrap().unwrap().entries.len(), 1);
    }
}
