//! The state file of a workdir (`iolab-lab.state`): what this run created
//! (images, loop devices, mount points, mounts, work directories on
//! directory targets), each written right after the lab created it (a
//! mount just before `mount` runs, on a mount point the lab made) and
//! replaced atomically, so that a later `iolab compare --cleanup` can
//! remove exactly what a killed run left behind.
//!
//! The format is text, one record per line, `KIND<TAB>VALUE[<TAB>VALUE]`,
//! after a header line and the owner's pid.
//!
//! A state file tells root what to unmount and delete, so one is believed
//! only when it cannot have come from someone else: it and its workdir
//! belong to this user and no one else may write them (checked on the open
//! descriptors), and each record names something inside that workdir
//! (work directories in `--target` directories carry the lab's name). A
//! record that fails this is kept apart, reported, and never acted on. The
//! file is written through a temporary file created exclusively, never
//! through a name another user could have planted.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use iolab_core::private;
use std::sync::{Mutex, MutexGuard};

use crate::error::LabError;

/// Serializes writes of state files within the process (see [`freeze`]).
static SAVE_LOCK: Mutex<()> = Mutex::new(());

/// Stops every further state-file write of this process, for as long as
/// the guard lives: the last-moment cleanup of a second Ctrl-C holds it
/// while it removes what the file lists and exits, so the campaign's
/// thread cannot write the file back behind it.
pub fn freeze() -> MutexGuard<'static, ()> {
    SAVE_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The state file's name inside a workdir.
pub const FILE_NAME: &str = "iolab-lab.state";
const HEADER: &str = "iolab-lab-state 1";

/// One thing the lab created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A sparse image file.
    Image(PathBuf),
    /// A loop device attached to an image.
    Loop { device: PathBuf, image: PathBuf },
    /// A directory made to mount on.
    MountDir(PathBuf),
    /// A filesystem mounted on a mount point the lab made (recorded
    /// before `mount` runs).
    Mount(PathBuf),
    /// A directory of job files inside a `--target` directory.
    WorkFiles(PathBuf),
    /// The workdir itself, when the lab made it.
    Workdir(PathBuf),
    /// A loop device (over one of the lab's images) that is a member of a
    /// bcache stack, as its cache or its backing device (recorded before
    /// make-bcache runs): cleanup stops the bcache device on it or
    /// unregisters its cache set before the loop device is detached.
    Bcache { device: PathBuf, image: PathBuf },
    /// A named device (`--device`, `--cache-device`) that is a member of
    /// a bcache stack: released by the run that made the stack; a state
    /// file's record of it is reported and never acted on, since nothing
    /// ties a named device to the lab's workdir.
    BcacheNamed(PathBuf),
}

impl Entry {
    fn encode(&self) -> String {
        let p = |p: &PathBuf| p.to_string_lossy().into_owned();
        match self {
            Entry::Image(x) => format!("image\t{}", p(x)),
            Entry::Loop { device, image } => format!("loop\t{}\t{}", p(device), p(image)),
            Entry::MountDir(x) => format!("mountdir\t{}", p(x)),
            Entry::Mount(x) => format!("mount\t{}", p(x)),
            Entry::WorkFiles(x) => format!("workfiles\t{}", p(x)),
            Entry::Workdir(x) => format!("workdir\t{}", p(x)),
            Entry::Bcache { device, image } => format!("bcache\t{}\t{}", p(device), p(image)),
            Entry::BcacheNamed(x) => format!("bcachenamed\t{}", p(x)),
        }
    }

    fn decode(line: &str) -> Option<Entry> {
        let mut f = line.split('\t');
        let kind = f.next()?;
        let a = PathBuf::from(f.next()?);
        Some(match kind {
            "image" => Entry::Image(a),
            "loop" => Entry::Loop {
                device: a,
                image: PathBuf::from(f.next()?),
            },
            "mountdir" => Entry::MountDir(a),
            "mount" => Entry::Mount(a),
            "workfiles" => Entry::WorkFiles(a),
            "workdir" => Entry::Workdir(a),
            "bcache" => Entry::Bcache {
                device: a,
                image: PathBuf::from(f.next()?),
            },
            "bcachenamed" => Entry::BcacheNamed(a),
            _ => return None,
        })
    }

    /// Why this record cannot be one the lab made in `workdir`, if so.
    fn outside(&self, workdir: &Path) -> Option<String> {
        let child = |p: &Path| plain(p) && p.parent() == Some(workdir) && p.file_name().is_some();
        let ok = match self {
            Entry::Image(p) | Entry::MountDir(p) | Entry::Mount(p) => child(p),
            Entry::Loop { device, image } | Entry::Bcache { device, image } => {
                child(image) && is_loop_device(device)
            }
            Entry::BcacheNamed(_) => false,
            Entry::Workdir(p) => p == workdir,
            Entry::WorkFiles(p) => {
                plain(p)
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(WORK_FILES_PREFIX))
            }
        };
        (!ok).then(|| match self {
            Entry::BcacheNamed(p) => format!(
                "bcache member {} is a named device: only the run that stacked it releases it",
                p.display()
            ),
            Entry::Loop { .. } | Entry::Bcache { .. } => format!(
                "`{}` is not a loop device backed by an image in {}",
                self.encode().replace('\t', " "),
                workdir.display()
            ),
            Entry::WorkFiles(p) => format!(
                "`{}` is not a work directory the lab names `{WORK_FILES_PREFIX}*`",
                p.display()
            ),
            _ => format!(
                "`{}` is not inside the workdir {}",
                self.paths()[0].display(),
                workdir.display()
            ),
        })
    }

    fn paths(&self) -> Vec<&Path> {
        match self {
            Entry::Loop { device, image } | Entry::Bcache { device, image } => vec![device, image],
            Entry::Image(p)
            | Entry::MountDir(p)
            | Entry::Mount(p)
            | Entry::WorkFiles(p)
            | Entry::Workdir(p)
            | Entry::BcacheNamed(p) => vec![p],
        }
    }
}

/// The name every work directory the lab makes in a `--target` directory
/// starts with.
pub const WORK_FILES_PREFIX: &str = "iolab-compare-";

/// Whether `p` is absolute and has no `.` or `..` in it.
fn plain(p: &Path) -> bool {
    p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// Whether `p` names a loop device: `/dev/loopN`.
fn is_loop_device(p: &Path) -> bool {
    p.to_str()
        .and_then(|s| s.strip_prefix("/dev/loop"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The largest state file read (a campaign records a few lines per
/// target).
const MAX_STATE_BYTES: u64 = 1 << 20;

/// The records of one workdir, mirrored to its state file.
#[derive(Debug)]
pub struct State {
    path: PathBuf,
    /// The process that owns the records.
    pub pid: u32,
    /// Its start time (clock ticks after boot, /proc/PID/stat), so that a
    /// reused pid is not taken for the owner.
    pub start: u64,
    pub entries: Vec<Entry>,
    /// Records of the file that name something the lab cannot have made
    /// there, with the reason: reported, never acted on.
    pub refused: Vec<String>,
    /// Changes stay in memory (the file is frozen by another holder).
    in_memory: bool,
}

/// The start time of a process, from /proc/PID/stat (field 22).
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    private::process_start(pid)
}

impl State {
    /// A new state for this process in `workdir` (written at once).
    pub fn create(workdir: &Path) -> Result<State, LabError> {
        let pid = std::process::id();
        let s = State {
            path: workdir.join(FILE_NAME),
            pid,
            start: start_time(pid).unwrap_or(0),
            entries: Vec::new(),
            refused: Vec::new(),
            in_memory: false,
        };
        s.save()?;
        Ok(s)
    }

    /// Reads the state file of `workdir`, if there is one. A workdir or
    /// state file that is not this user's alone is
    /// [`LabError::Untrusted`]; records that name something outside the
    /// workdir go to `refused`.
    pub fn load(workdir: &Path) -> Result<Option<State>, LabError> {
        let path = workdir.join(FILE_NAME);
        let untrusted = |path: &Path, reason: private::Distrust| LabError::Untrusted {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        let dir = match private::open_trusted_dir(workdir) {
            Ok(d) => d,
            Err(private::Distrust::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(untrusted(workdir, e)),
        };
        let text = match private::read_trusted_file(&dir, FILE_NAME, MAX_STATE_BYTES) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(e) => return Err(untrusted(&path, e)),
        };
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(LabError::State {
                path,
                reason: "not an iolab state file".into(),
            });
        }
        let (pid, start) = lines
            .next()
            .and_then(|l| l.strip_prefix("pid\t"))
            .and_then(|p| {
                let (pid, start) = p.split_once('\t').unwrap_or((p, "0"));
                Some((pid.parse().ok()?, start.parse().ok()?))
            })
            .ok_or_else(|| LabError::State {
                path: path.clone(),
                reason: "no pid line".into(),
            })?;
        let mut entries = Vec::new();
        let mut refused = Vec::new();
        for e in lines.filter_map(Entry::decode) {
            match e.outside(workdir) {
                None => entries.push(e),
                Some(why) => {
                    refused.push(format!("left alone: {why} (listed in {})", path.display()))
                }
            }
        }
        // A loop device is detached only when its image is listed too.
        let images: Vec<PathBuf> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Image(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        entries.retain(|e| match e {
            Entry::Loop { device, image } | Entry::Bcache { device, image }
                if !images.contains(image) =>
            {
                refused.push(format!(
                    "left alone: loop device {} (its image {} is not listed in {})",
                    device.display(),
                    image.display(),
                    path.display()
                ));
                false
            }
            _ => true,
        });
        Ok(Some(State {
            path,
            pid,
            start,
            entries,
            refused,
            in_memory: false,
        }))
    }

    /// Where the state file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `e` and writes the file.
    pub fn add(&mut self, e: Entry) -> Result<(), LabError> {
        for p in e.paths() {
            if p.to_string_lossy().contains(['\n', '\t']) {
                return Err(LabError::State {
                    path: self.path.clone(),
                    reason: format!("path `{}` holds a tab or newline", p.display()),
                });
            }
        }
        if !self.entries.contains(&e) {
            self.entries.push(e);
        }
        self.save()
    }

    /// Forgets `e` (it was removed) and writes the file.
    pub fn remove(&mut self, e: &Entry) -> Result<(), LabError> {
        self.entries.retain(|x| x != e);
        self.save()
    }

    /// Writes the records to a temporary file and renames it over the
    /// state file, so a kill never leaves half a file.
    pub fn save(&self) -> Result<(), LabError> {
        if self.in_memory {
            return Ok(());
        }
        let _guard = freeze();
        let mut text = format!("{HEADER}\npid\t{}\t{}\n", self.pid, self.start);
        for e in &self.entries {
            text.push_str(&e.encode());
            text.push('\n');
        }
        let tmp = self.path.with_extension("state.tmp");
        let write = || -> std::io::Result<()> {
            // A temporary file left by a killed run of this workdir goes
            // first; whatever is there is never written through.
            match std::fs::remove_file(&tmp) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let mut f = private::create_file(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| LabError::io("cannot write state file", &self.path, e))
    }

    /// Removes the state file (everything it listed is gone).
    pub fn delete(&self) -> Result<(), LabError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LabError::io("cannot remove", &self.path, e)),
        }
    }

    /// Whether the owning process still runs (and is not this one).
    pub fn owner_alive(&self) -> bool {
        self.pid != std::process::id() && start_time(self.pid) == Some(self.start)
    }

    /// Keeps further changes in memory: for a cleanup that runs while
    /// holding [`freeze`].
    pub fn keep_in_memory(&mut self) {
        self.in_memory = true;
    }

    /// Makes this process the owner (cleanup adopts a dead run's state).
    pub fn adopt(&mut self) {
        self.pid = std::process::id();
        self.start = start_time(self.pid).unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let d = tempfile::tempdir().unwrap();
        let mut s = State::create(d.path()).unwrap();
        s.add(Entry::Image(d.path().join("a b.img"))).unwrap();
        s.add(Entry::Loop {
            device: "/dev/loop4".into(),
            image: d.path().join("a b.img"),
        })
        .unwrap();
        s.add(Entry::Mount(d.path().join("mnt"))).unwrap();
        s.remove(&Entry::Mount(d.path().join("mnt"))).unwrap();
        let back = State::load(d.path()).unwrap().unwrap();
        assert_eq!(back.pid, std::process::id());
        assert_eq!(back.entries, s.entries);
        assert_eq!(back.entries.len(), 2);
        assert_eq!(back.start, start_time(std::process::id()).unwrap());
        assert!(!back.owner_alive(), "this process is not another owner");
        s.delete().unwrap();
        assert!(State::load(d.path()).unwrap().is_none());
    }

    #[test]
    fn owners_are_told_apart_by_start_time() {
        let d = tempfile::tempdir().unwrap();
        let mut s = State::create(d.path()).unwrap();
        // pid 1 runs, but not since this start time: a reused pid.
        s.pid = 1;
        s.start = u64::MAX;
        assert!(!s.owner_alive());
        s.start = start_time(1).unwrap();
        assert!(s.owner_alive());
    }

    #[test]
    fn refuses_other_files_and_odd_paths() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE_NAME), "hello\n").unwrap();
        let e = State::load(d.path()).unwrap_err().to_string();
        assert!(e.contains("not an iolab state file"), "{e}");
        let mut s = State::create(d.path()).unwrap();
        assert!(s.add(Entry::Image("/tmp/a\nb".into())).is_err());
    }

    #[test]
    fn bcache_members_are_believed_only_on_the_labs_own_images() {
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("1-bcache-cache.img");
        let mut s = State::create(d.path()).unwrap();
        s.add(Entry::Image(img.clone())).unwrap();
        let ours = Entry::Bcache {
            device: "/dev/loop3".into(),
            image: img,
        };
        s.add(ours.clone()).unwrap();
        // An image the file does not list, and a named device.
        s.add(Entry::Bcache {
            device: "/dev/loop4".into(),
            image: d.path().join("unlisted.img"),
        })
        .unwrap();
        s.add(Entry::BcacheNamed("/dev/sdb".into())).unwrap();
        let back = State::load(d.path()).unwrap().unwrap();
        assert!(back.entries.contains(&ours), "{:?}", back.entries);
        assert_eq!(back.entries.len(), 2, "{:?}", back.entries);
        let refused = back.refused.join("\n");
        assert!(
            refused.contains("/dev/loop4") && refused.contains("unlisted.img"),
            "{refused}"
        );
        assert!(
            refused.contains("/dev/sdb is a named device: only the run that stacked it"),
            "{refused}"
        );
    }
}
