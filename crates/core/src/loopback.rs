//! Loop devices under a job's files and what they stand on: the backing
//! file, the filesystem it lives on, whether the loop device reads it
//! with direct I/O (`loop/dio`), and how much of it the host has in its
//! page cache. A loop device without direct I/O reads its backing file
//! through that cache, so a job's "device" reads may be memory's; one
//! whose backing file is on tmpfs or ramfs is memory. The walk goes from
//! a disk down through device-mapper and md members (`slaves`) to every
//! loop device under it. Facts are read from sysfs and the file itself.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::plan::{Plan, PlanJob};
use crate::warn::Warning;

/// A loop device found under a disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopBacking {
    /// The kernel's name of the loop device ("loop3").
    pub device: String,
    /// Its backing file, as the kernel names it.
    pub backing: PathBuf,
    /// Where the device starts in the backing file (`loop/offset`).
    pub offset: u64,
    /// Whether the loop device reads and writes its file with direct I/O.
    pub dio: bool,
}

/// Layers walked at most, against loops in a broken tree.
const MAX_LAYERS: usize = 32;

/// The loop devices in the stack under the block device `disk`, with
/// sysfs at `sys`.
pub fn loops_under(sys: &Path, disk: &str) -> Vec<LoopBacking> {
    let mut todo = vec![disk.to_string()];
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    while let Some(name) = todo.pop() {
        if seen.contains(&name) || seen.len() >= MAX_LAYERS {
            continue;
        }
        seen.push(name.clone());
        let Ok(dir) = fs::canonicalize(sys.join("class/block").join(&name)) else {
            continue;
        };
        if let Some(backing) = read(&dir.join("loop/backing_file")) {
            // A file removed while attached is named "... (deleted)".
            let backing = backing.strip_suffix(" (deleted)").unwrap_or(&backing);
            out.push(LoopBacking {
                device: name.clone(),
                backing: PathBuf::from(backing),
                offset: read(&dir.join("loop/offset"))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0),
                dio: read(&dir.join("loop/dio")).as_deref() == Some("1"),
            });
        }
        if let Ok(slaves) = fs::read_dir(dir.join("slaves")) {
            for s in slaves.flatten() {
                todo.push(s.file_name().to_string_lossy().into_owned());
            }
        }
    }
    out
}

impl LoopBacking {
    /// The filesystem the backing file lives on ("tmpfs", "ext4"...).
    pub fn fs(&self) -> Option<String> {
        let dir = self.backing.parent().unwrap_or(&self.backing);
        iolab_engine::file::fs_type(dir)
            .ok()
            .map(|t| t.name().to_string())
    }

    /// Bytes of the backing file's `[offset, offset + len)` (relative to
    /// the device; `len` 0: to the end) in the host's page cache.
    pub fn cached(&self, offset: u64, len: u64) -> Option<u64> {
        let f = open_backing(&self.backing)?;
        iolab_engine::residency::cached_bytes(&f, self.offset.saturating_add(offset), len).ok()
    }

    /// The backing file's size past the device's start.
    pub fn size(&self) -> Option<u64> {
        let f = open_backing(&self.backing)?;
        Some(f.metadata().ok()?.len().saturating_sub(self.offset))
    }
}

/// Bytes below which a job's reads are too few to judge.
const JUDGE_BYTES: u64 = 8 << 20;

/// The warnings of loop devices under the jobs `jobs` of `plan` (one
/// phase), judged after their files are laid out and before they run:
/// a backing file in memory (tmpfs, ramfs) for any job that moves data,
/// and, for jobs that read, a loop device without direct I/O whose
/// backing file the host holds half or more of what the job will read.
pub fn loop_warnings<'a>(plan: &Plan, jobs: impl Iterator<Item = &'a PlanJob>) -> Vec<Warning> {
    let sys = Path::new("/sys");
    let mut out = Vec::new();
    if !crate::checks::on() {
        return out;
    }
    for job in jobs.filter(|j| j.clone == 0 && j.engine.moves_file_data()) {
        for jf in &job.files {
            let pf = &plan.files[jf.file];
            let Some(disk) = crate::diskstats::disk_of(&pf.path) else {
                continue;
            };
            for lb in loops_under(sys, &disk) {
                if let Some(w) = judge(job, pf, jf, &lb) {
                    if !out.contains(&w) {
                        out.push(w);
                    }
                }
            }
        }
    }
    out
}

/// One loop device under one file of a job.
fn judge(
    job: &PlanJob,
    pf: &crate::plan::PlanFile,
    jf: &crate::plan::JobFile,
    lb: &LoopBacking,
) -> Option<Warning> {
    let fs = lb.fs().unwrap_or_default();
    if matches!(fs.as_str(), "tmpfs" | "ramfs") {
        return Some(Warning::LoopInMemory {
            job: job.name.clone(),
            device: lb.device.clone(),
            backing: lb.backing.display().to_string(),
            fs,
        });
    }
    if lb.dio || !job.rw.mode.reads() || jf.len < JUDGE_BYTES {
        return None;
    }
    let (cached, of) = cached_share(pf, jf, lb)?;
    (of > 0 && cached >= JUDGE_BYTES && cached as f64 >= 0.5 * of as f64).then(|| {
        Warning::LoopCached {
            job: job.name.clone(),
            device: lb.device.clone(),
            backing: lb.backing.display().to_string(),
            cached_mib: cached >> 20,
            pct: (100.0 * cached as f64 / of as f64).min(100.0),
            reread: None,
        }
    })
}

/// Of the job's range of one file, the bytes the host has cached in the
/// loop device's backing file, and the bytes that range takes there: the
/// job's range of the device where the job is the device itself; the
/// places of the job's range of its file where the filesystem says (its
/// extents); else the whole backing file, which holds the job's file
/// somewhere.
fn cached_share(
    pf: &crate::plan::PlanFile,
    jf: &crate::plan::JobFile,
    lb: &LoopBacking,
) -> Option<(u64, u64)> {
    if pf.block_device {
        Some((lb.cached(jf.offset, jf.len)?, jf.len))
    } else if let Some(placed) = file_cached(&pf.path, jf, lb) {
        Some(placed)
    } else {
        Some((lb.cached(0, 0)?, jf.len.min(lb.size()?)))
    }
}

/// After a phase: reading jobs on a loop device without direct I/O that
/// read their range more than once and whose range the host had cached
/// by their end: the first pass filled the host's cache, and the reads
/// after it came from memory. `clones` holds the results of the plan's
/// job clones so far; jobs already warned of their loop device in
/// `known` are left out.
pub fn loop_refills(
    plan: &Plan,
    phase: std::ops::Range<usize>,
    clones: &[Option<iolab_stats::JobResult>],
    known: &[Warning],
) -> Vec<Warning> {
    let sys = Path::new("/sys");
    let mut out = Vec::new();
    if !crate::checks::on() {
        return out;
    }
    for job in plan.jobs[phase.clone()]
        .iter()
        .filter(|j| j.clone == 0 && j.rw.mode.reads() && j.engine.moves_file_data())
    {
        if known.iter().any(|w| {
            w.job() == job.name
                && matches!(w, Warning::LoopCached { .. } | Warning::LoopInMemory { .. })
        }) {
            continue;
        }
        let read: u64 = phase
            .clone()
            .filter(|&ji| plan.jobs[ji].name == job.name)
            .filter_map(|ji| clones.get(ji)?.as_ref())
            .map(|c| c.dirs[iolab_stats::Dir::Read as usize].io_bytes)
            .sum();
        let range: u64 = job.files.iter().map(|f| f.len).sum();
        if range < JUDGE_BYTES || read < range + range / 2 {
            continue;
        }
        'files: for jf in &job.files {
            let pf = &plan.files[jf.file];
            let Some(disk) = crate::diskstats::disk_of(&pf.path) else {
                continue;
            };
            for lb in loops_under(sys, &disk).into_iter().filter(|l| !l.dio) {
                let Some((cached, of)) = cached_share(pf, jf, &lb) else {
                    continue;
                };
                if of > 0 && cached >= JUDGE_BYTES && cached as f64 >= 0.5 * of as f64 {
                    out.push(Warning::LoopCached {
                        job: job.name.clone(),
                        device: lb.device.clone(),
                        backing: lb.backing.display().to_string(),
                        cached_mib: cached >> 20,
                        pct: (100.0 * cached as f64 / of as f64).min(100.0),
                        reread: Some(read as f64 / range as f64),
                    });
                    break 'files;
                }
            }
        }
    }
    out
}

/// Of the job's range of a file on a filesystem whose extents give
/// offsets on its device (ext2/3/4, xfs), the bytes in the host's cache
/// of the loop device's backing file, and the bytes placed on the device
/// (holes have no place). None where the filesystem does not say.
fn file_cached(path: &Path, jf: &crate::plan::JobFile, lb: &LoopBacking) -> Option<(u64, u64)> {
    use iolab_engine::file::FsType;
    if !matches!(
        iolab_engine::file::fs_type(path).ok()?,
        FsType::Ext | FsType::Xfs
    ) {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let extents = iolab_engine::residency::extents(&file).ok()?;
    let backing = open_backing(&lb.backing)?;
    let (start, end) = (jf.offset, jf.offset.saturating_add(jf.len));
    let (mut cached, mut placed) = (0u64, 0u64);
    for e in extents {
        let lo = e.logical.max(start);
        let hi = e.logical.saturating_add(e.length).min(end);
        if lo >= hi {
            continue;
        }
        let at = lb.offset + e.physical + (lo - e.logical);
        cached += iolab_engine::residency::cached_bytes(&backing, at, hi - lo).ok()?;
        placed += hi - lo;
    }
    (placed > 0).then_some((cached.min(placed), placed))
}

/// Why a directory on a loop device may measure memory, for a suite's
/// notes (quick): its backing file in memory, or read and written
/// through the host's page cache.
pub fn loop_note(dir: &Path) -> Option<String> {
    let disk = crate::diskstats::disk_of(dir)?;
    let lb = loops_under(Path::new("/sys"), &disk).into_iter().next()?;
    let fs = lb.fs().unwrap_or_default();
    if matches!(fs.as_str(), "tmpfs" | "ramfs") {
        return Some(format!(
            "{} is on the loop device {}, whose backing file `{}` is on {fs}, in memory: every \
             figure is memory's, not a storage device's",
            dir.display(),
            lb.device,
            lb.backing.display()
        ));
    }
    (!lb.dio).then(|| {
        format!(
            "{} is on the loop device {}, which reads and writes its backing file `{}` through \
             the host's page cache (no direct I/O on the loop device): the tests' direct I/O \
             stops there, so reads of what is cached and writes not yet flushed are memory's; \
             attach the image with `losetup --direct-io=on` to measure the disk under it",
            dir.display(),
            lb.device,
            lb.backing.display()
        )
    })
}

/// The backing file, opened to look at only: read-only, not through a
/// link, not blocking, and only if it is a regular file.
fn open_backing(path: &Path) -> Option<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    f.metadata().ok()?.is_file().then_some(f)
}

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn device(root: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = root.join("devices/virtual/block").join(name);
        fs::create_dir_all(&dir).unwrap();
        for (f, text) in files {
            let p = dir.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        fs::create_dir_all(root.join("class/block")).unwrap();
        symlink(&dir, root.join("class/block").join(name)).unwrap();
        dir
    }

    #[test]
    fn loop_devices_are_found_under_device_mapper_layers() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let lo = device(
            r,
            "loop4",
            &[
                ("loop/backing_file", "/var/img/a.img (deleted)\n"),
                ("loop/offset", "1048576\n"),
                ("loop/dio", "0\n"),
            ],
        );
        let dm = device(r, "dm-0", &[("dm/name", "crypt\n")]);
        fs::create_dir_all(dm.join("slaves")).unwrap();
        symlink(&lo, dm.join("slaves/loop4")).unwrap();
        device(
            r,
            "loop5",
            &[("loop/backing_file", "/b.img\n"), ("loop/dio", "1\n")],
        );
        let want = LoopBacking {
            device: "loop4".into(),
            backing: PathBuf::from("/var/img/a.img"),
            offset: 1 << 20,
            dio: false,
        };
        assert_eq!(loops_under(r, "dm-0"), std::slice::from_ref(&want));
        assert_eq!(loops_under(r, "loop4"), [want]);
        let l5 = loops_under(r, "loop5");
        assert_eq!((l5[0].dio, l5[0].offset), (true, 0));
        // A plain disk, and one sysfs does not know.
        device(r, "sda", &[]);
        assert!(loops_under(r, "sda").is_empty());
        assert!(loops_under(r, "nvme9n1").is_empty());
    }

    #[test]
    fn a_backing_file_reports_its_cached_bytes_and_links_are_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let img = t.path().join("img");
        fs::write(&img, vec![5u8; 2 << 20]).unwrap();
        let lb = LoopBacking {
            device: "loop9".into(),
            backing: img.clone(),
            offset: 1 << 20,
            dio: false,
        };
        assert_eq!(lb.size(), Some(1 << 20));
        // Just written: cached, past the offset.
        assert_eq!(lb.cached(0, 0), Some(1 << 20));
        let link = t.path().join("link");
        symlink(&img, &link).unwrap();
        let linked = LoopBacking {
            backing: link,
            ..lb.clone()
        };
        assert_eq!(linked.cached(0, 0), None);
    }
}
