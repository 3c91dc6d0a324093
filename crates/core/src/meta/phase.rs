//! The phases of the metadata benchmark: the per-operation loops (one
//! system call, or two for open + close, between two clock reads, the end
//! of one operation being the start of the next), the split of a phase's
//! files over threads, and the merge of their latencies and wall times into
//! a [`MetaPhase`]. The first failing operation stops every thread of the
//! phase and is reported with what it was made on: the file, or the
//! directory of the tree that could not be opened.

use std::ffi::CStr;
use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use iolab_engine::fsops;
use iolab_stats::meta::{MetaPhase, MetaPhaseKind};
use iolab_stats::LatStat;

use super::tree::{NameBuf, Tree};
use super::MetaError;

/// What every phase of one run shares.
pub(crate) struct PhaseCtx<'a> {
    /// The run's own directory, and its path for error messages.
    pub work: BorrowedFd<'a>,
    pub work_path: &'a std::path::Path,
    pub tree: &'a Tree,
    pub files: u64,
    pub threads: u32,
    pub file_size: u64,
    pub fsync: bool,
    /// Set by the caller (Ctrl-C): the phase stops at its next operation.
    pub stop: &'a AtomicBool,
    /// The rank whose files these are, when ranks share the directory:
    /// it is in every file's name.
    pub rank: Option<u32>,
    /// Whether this process makes and removes the tree's directories
    /// (with a shared directory, rank 0 alone does).
    pub makes_tree: bool,
}

/// How a worker's share of a phase ended.
enum Stopped {
    /// An operation failed on item `index`.
    Failed { index: u64, err: io::Error },
    /// The directory `path` (holding the next items) could not be opened.
    OpenDir { path: PathBuf, err: io::Error },
    /// Another worker failed or the run was stopped.
    Aborted,
}

/// One worker's share of a phase.
struct Share {
    lat: LatStat,
    ops: u64,
    start: Instant,
    end: Instant,
}

#[inline]
fn ns(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Holds a phase's workers until every one of them exists, then lets them
/// all start together, or sends them home when one could not be created.
struct Gate {
    open: Mutex<Option<bool>>,
    cv: Condvar,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            open: Mutex::new(None),
            cv: Condvar::new(),
        }
    }

    fn set(&self, go: bool) {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.cv.notify_all();
    }

    /// Waits for `set`; whether to go.
    fn wait(&self) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(go) = *open {
                return go;
            }
            open = self.cv.wait(open).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Runs `work` over `0..n` split in `threads` contiguous ranges, each on its
/// own thread (inline for one thread), starting together. A thread that
/// cannot be created (the user's limit on processes and threads) is an
/// error: the workers already made return without working.
fn parallel<T: Send>(
    kind: MetaPhaseKind,
    threads: u32,
    n: u64,
    work: &(dyn Fn(Range<u64>) -> T + Sync),
) -> Result<Vec<T>, MetaError> {
    let t = u64::from(threads.max(1)).min(n.max(1));
    if t == 1 {
        return Ok(vec![work(0..n)]);
    }
    let gate = Gate::new();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(t as usize);
        for k in 0..t {
            let range = k * n / t..(k + 1) * n / t;
            let gate = &gate;
            let spawned = std::thread::Builder::new()
                .name(format!("meta.{k}"))
                .spawn_scoped(s, move || gate.wait().then(|| work(range)));
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => {
                    gate.set(false);
                    return Err(MetaError::Spawn {
                        phase: kind,
                        threads: t,
                        source,
                    });
                }
            }
        }
        gate.set(true);
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(Some(r)) => Ok(r),
                Ok(None) => Err(MetaError::Interrupted { phase: kind }),
                // A worker's panic is the program's bug: passed on as is.
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    })
}

/// Folds the workers' shares into the phase's result, or the first failure
/// into an error naming the item (by `describe`).
fn merge(
    kind: MetaPhaseKind,
    results: Vec<Result<Share, Stopped>>,
    stop: &AtomicBool,
    describe: impl Fn(u64) -> PathBuf,
) -> Result<MetaPhase, MetaError> {
    let mut lat = LatStat::default();
    let mut ops = 0;
    let mut start: Option<Instant> = None;
    let mut end: Option<Instant> = None;
    let mut aborted = false;
    for r in results {
        match r {
            Ok(s) => {
                lat.merge(&s.lat);
                ops += s.ops;
                start = Some(start.map_or(s.start, |t| t.min(s.start)));
                end = Some(end.map_or(s.end, |t| t.max(s.end)));
            }
            Err(Stopped::Failed { index, err }) => {
                return Err(MetaError::Op {
                    phase: kind,
                    path: describe(index),
                    source: err,
                })
            }
            Err(Stopped::OpenDir { path, err }) => {
                return Err(MetaError::OpenDir {
                    phase: kind,
                    path,
                    source: err,
                })
            }
            Err(Stopped::Aborted) => aborted = true,
        }
    }
    if aborted || stop.load(Ordering::Relaxed) {
        return Err(MetaError::Interrupted { phase: kind });
    }
    let elapsed_ns = match (start, end) {
        (Some(s), Some(e)) => ns(e.duration_since(s)),
        _ => 0,
    };
    Ok(MetaPhase {
        phase: kind,
        ops,
        elapsed_ns,
        lat,
    })
}

impl PhaseCtx<'_> {
    /// A file phase: `op(names, leaf directory, i)` for every file `i`.
    /// `prefix` is the letter of the files' current names, for errors.
    fn files_phase<F>(&self, kind: MetaPhaseKind, prefix: u8, op: F) -> Result<MetaPhase, MetaError>
    where
        F: Fn(&mut Scratch, BorrowedFd<'_>, u64) -> io::Result<()> + Sync,
    {
        let failed = AtomicBool::new(false);
        let work = |range: Range<u64>| -> Result<Share, Stopped> {
            let r = self.file_share(range, &op, &failed);
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            r
        };
        let results = parallel(kind, self.threads, self.files, &work)?;
        merge(kind, results, self.stop, |i| self.file_path(prefix, i))
    }

    fn file_share<F>(
        &self,
        range: Range<u64>,
        op: &F,
        failed: &AtomicBool,
    ) -> Result<Share, Stopped>
    where
        F: Fn(&mut Scratch, BorrowedFd<'_>, u64) -> io::Result<()>,
    {
        let mut scratch = Scratch::new(self.file_size, self.rank);
        let mut lat = LatStat::default();
        let mut leaf_fd: Option<OwnedFd> = None;
        let mut next_leaf_at = range.start;
        let start = Instant::now();
        let mut t0 = start;
        for i in range.clone() {
            if i >= next_leaf_at {
                let leaf = self.tree.leaf_of(i);
                next_leaf_at = self.tree.first_file_of(leaf + 1);
                let fd =
                    fsops::open_dir_at(self.work, &self.tree.leaves()[leaf]).map_err(|err| {
                        Stopped::OpenDir {
                            path: self.leaf_path(leaf),
                            err,
                        }
                    })?;
                leaf_fd = Some(fd);
                t0 = Instant::now();
            }
            if failed.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed) {
                return Err(Stopped::Aborted);
            }
            let dir = leaf_fd.as_ref().expect("a leaf is open").as_fd();
            if let Err(err) = op(&mut scratch, dir, i) {
                return Err(Stopped::Failed { index: i, err });
            }
            let t1 = Instant::now();
            lat.record(ns(t1.duration_since(t0)));
            t0 = t1;
        }
        Ok(Share {
            lat,
            ops: range.end - range.start,
            start,
            end: t0,
        })
    }

    /// The path of leaf directory `leaf`, for messages.
    fn leaf_path(&self, leaf: usize) -> PathBuf {
        let leaf = self.tree.leaves()[leaf].to_string_lossy();
        if leaf == "." {
            self.work_path.to_path_buf()
        } else {
            self.work_path.join(&*leaf)
        }
    }

    /// The path of file `i` named with `prefix`, for messages.
    fn file_path(&self, prefix: u8, i: u64) -> PathBuf {
        let mut names = NameBuf::tagged(self.rank);
        let name = names.name(prefix, i).to_string_lossy().into_owned();
        self.leaf_path(self.tree.leaf_of(i)).join(name)
    }

    pub fn create(&self) -> Result<MetaPhase, MetaError> {
        let (size, sync) = (self.file_size, self.fsync);
        self.files_phase(MetaPhaseKind::Create, b'f', move |s, dir, i| {
            let fd = fsops::create_at(dir, s.names.name(b'f', i))?;
            let mut left = size;
            while left > 0 {
                let n = left.min(s.data.len() as u64) as usize;
                fsops::write_all(fd.as_fd(), &s.data[..n])?;
                left -= n as u64;
            }
            if sync {
                fsops::fsync(fd.as_fd())?;
            }
            fsops::close(fd)
        })
    }

    pub fn open(&self, prefix: u8) -> Result<MetaPhase, MetaError> {
        self.files_phase(MetaPhaseKind::Open, prefix, move |s, dir, i| {
            fsops::close(fsops::open_read_at(dir, s.names.name(prefix, i))?)
        })
    }

    pub fn utime(&self, prefix: u8) -> Result<MetaPhase, MetaError> {
        self.files_phase(MetaPhaseKind::Utime, prefix, move |s, dir, i| {
            fsops::touch_at(dir, s.names.name(prefix, i))
        })
    }

    pub fn stat(&self, prefix: u8) -> Result<MetaPhase, MetaError> {
        let size = self.file_size;
        self.files_phase(MetaPhaseKind::Stat, prefix, move |s, dir, i| {
            let st = fsops::stat_at(dir, s.names.name(prefix, i))?;
            if st.size != size {
                return Err(io::Error::other(format!(
                    "size {} where {} bytes were written",
                    st.size, size
                )));
            }
            Ok(())
        })
    }

    /// Renames every `f<i>` to `r<i>` in its directory.
    pub fn rename(&self) -> Result<MetaPhase, MetaError> {
        self.files_phase(MetaPhaseKind::Rename, b'f', |s, dir, i| {
            let (old, new) = s.two_names(b'f', b'r', i);
            fsops::rename_at(dir, old, dir, new)
        })
    }

    pub fn unlink(&self, prefix: u8) -> Result<MetaPhase, MetaError> {
        self.files_phase(MetaPhaseKind::Unlink, prefix, move |s, dir, i| {
            fsops::unlink_at(dir, s.names.name(prefix, i))
        })
    }

    /// Lists every leaf directory; one operation per entry read, each
    /// getdents64 call's time shared by the entries it returned.
    pub fn readdir(&self) -> Result<MetaPhase, MetaError> {
        let leaves = self.tree.leaves();
        let failed = AtomicBool::new(false);
        let work = |range: Range<u64>| -> Result<Share, Stopped> {
            let mut buf = vec![0u8; 64 << 10];
            let mut lat = LatStat::default();
            let mut ops = 0;
            let start = Instant::now();
            let mut t0 = start;
            for leaf in range {
                if failed.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed) {
                    return Err(Stopped::Aborted);
                }
                let fail = |err| {
                    failed.store(true, Ordering::Relaxed);
                    Stopped::Failed { index: leaf, err }
                };
                let dir = fsops::open_dir_at(self.work, &leaves[leaf as usize]).map_err(fail)?;
                while let Some(n) = fsops::read_dir_batch(dir.as_fd(), &mut buf).map_err(fail)? {
                    let t1 = Instant::now();
                    if let Some(each) = ns(t1.duration_since(t0)).checked_div(n) {
                        lat.hist.record_n(each, n);
                        for _ in 0..n {
                            lat.moments.record(each);
                        }
                        ops += n;
                    }
                    t0 = t1;
                }
                fsops::close(dir).map_err(fail)?;
                t0 = Instant::now();
            }
            Ok(Share {
                lat,
                ops,
                start,
                end: t0,
            })
        };
        let results = parallel(
            MetaPhaseKind::Readdir,
            self.threads,
            leaves.len() as u64,
            &work,
        )?;
        merge(MetaPhaseKind::Readdir, results, self.stop, |leaf| {
            self.work_path
                .join(leaves[leaf as usize].to_string_lossy().as_ref())
        })
    }

    /// Creates the tree's directories level by level (the threads share
    /// each level), or removes them deepest level first.
    pub fn dirs(&self, kind: MetaPhaseKind) -> Result<MetaPhase, MetaError> {
        let dirs = self.tree.dirs();
        let remove = kind == MetaPhaseKind::Rmdir;
        let levels: Vec<Range<usize>> = if remove {
            self.tree.levels().rev().collect()
        } else {
            self.tree.levels().collect()
        };
        let mut total = MetaPhase {
            phase: kind,
            ops: 0,
            elapsed_ns: 0,
            lat: LatStat::default(),
        };
        if !self.makes_tree {
            return Ok(total);
        }
        for level in levels {
            let base = level.start as u64;
            let failed = AtomicBool::new(false);
            let work = |range: Range<u64>| -> Result<Share, Stopped> {
                let mut lat = LatStat::default();
                let start = Instant::now();
                let mut t0 = start;
                for k in range.clone() {
                    if failed.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed) {
                        return Err(Stopped::Aborted);
                    }
                    let name: &CStr = &dirs[(base + k) as usize];
                    let r = if remove {
                        fsops::rmdir_at(self.work, name)
                    } else {
                        fsops::mkdir_at(self.work, name)
                    };
                    if let Err(err) = r {
                        failed.store(true, Ordering::Relaxed);
                        return Err(Stopped::Failed {
                            index: base + k,
                            err,
                        });
                    }
                    let t1 = Instant::now();
                    lat.record(ns(t1.duration_since(t0)));
                    t0 = t1;
                }
                Ok(Share {
                    lat,
                    ops: range.end - range.start,
                    start,
                    end: t0,
                })
            };
            let results = parallel(kind, self.threads, level.len() as u64, &work)?;
            let part = merge(kind, results, self.stop, |k| {
                self.work_path
                    .join(dirs[k as usize].to_string_lossy().as_ref())
            })?;
            total.ops += part.ops;
            total.elapsed_ns += part.elapsed_ns;
            total.lat.merge(&part.lat);
        }
        Ok(total)
    }
}

/// The most a create writes per write(2) call; larger files take several.
const DATA_CHUNK: u64 = 1 << 20;

/// A worker's buffers: names formatted per operation and the data a create
/// writes.
pub(crate) struct Scratch {
    names: NameBuf,
    other: NameBuf,
    data: Vec<u8>,
}

impl Scratch {
    fn new(file_size: u64, rank: Option<u32>) -> Scratch {
        Scratch {
            names: NameBuf::tagged(rank),
            other: NameBuf::tagged(rank),
            data: (0..file_size.min(DATA_CHUNK))
                .map(|i| (i % 251) as u8 + 1)
                .collect(),
        }
    }

    fn two_names(&mut self, a: u8, b: u8, i: u64) -> (&CStr, &CStr) {
        (self.names.name(a, i), self.other.name(b, i))
    }
}
