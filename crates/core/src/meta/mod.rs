//! The metadata benchmark (`iolab meta`): create, open, utime, stat,
//! readdir, rename and unlink `files` files (and mkdir/rmdir a tree of
//! directories around them) in a fresh directory of its own, timing each
//! operation into fio's latency histogram. This module owns the options,
//! their validation (before anything is created), the order of the phases,
//! cold caches between phases, and the cleanup: whatever the outcome, the
//! run's directory is gone when [`run_meta`] returns.
//!
//! [`run_meta`] is the whole study: options in, [`MetaResult`] out, so a
//! comparison suite can call it per target.

mod phase;
pub mod tree;

use std::ffi::CString;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use iolab_engine::fsops;
use iolab_stats::meta::{MetaPhase, MetaPhaseKind, MetaResult, MetaSetup};

pub use iolab_stats::meta::MetaOptions;

use phase::PhaseCtx;
use tree::Tree;

pub use tree::MAX_DIRECTORIES;

/// Threads a run may use at most.
pub const MAX_THREADS: u32 = 1024;

/// The file phases `run_meta` performs when not told otherwise, in order.
pub const FILE_PHASES: [MetaPhaseKind; 7] = [
    MetaPhaseKind::Create,
    MetaPhaseKind::Open,
    MetaPhaseKind::Utime,
    MetaPhaseKind::Stat,
    MetaPhaseKind::Readdir,
    MetaPhaseKind::Rename,
    MetaPhaseKind::Unlink,
];

/// Why a metadata run did not complete.
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// The options are wrong; nothing was created.
    #[error("{0}")]
    Invalid(String),
    /// An operation failed on `path`; what the run created has been
    /// removed.
    #[error("{phase} of {}: {source}", path.display())]
    Op {
        phase: MetaPhaseKind,
        path: PathBuf,
        source: io::Error,
    },
    /// A directory of the tree that a phase works in could not be opened.
    #[error("{phase} phase: cannot open the directory {}: {source}", path.display())]
    OpenDir {
        phase: MetaPhaseKind,
        path: PathBuf,
        source: io::Error,
    },
    /// The run's directory could not be made or opened.
    #[error("cannot {what} {}: {source}", path.display())]
    Setup {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("cannot drop caches before the {phase} phase (/proc/sys/vm/drop_caches): {source}")]
    DropCaches {
        phase: MetaPhaseKind,
        source: io::Error,
    },
    /// A worker thread could not be created (the user's limit on
    /// processes and threads, or on memory maps); the workers already
    /// made did nothing.
    #[error(
        "{phase} phase: cannot create its {threads} worker threads: {source} (the limit on the \
         user's processes and threads, ulimit -u, or on memory maps was reached; lower --threads)"
    )]
    Spawn {
        phase: MetaPhaseKind,
        threads: u64,
        source: io::Error,
    },
    /// Stopped from outside (Ctrl-C) during a phase.
    #[error("interrupted during the {phase} phase")]
    Interrupted { phase: MetaPhaseKind },
}

impl MetaError {
    /// Whether the error is in the options (nothing was created).
    pub fn is_invalid(&self) -> bool {
        matches!(self, MetaError::Invalid(_))
    }
}

/// A run that did not finish: why, and what it measured before: the
/// phases that finished, with [`MetaResult::failure`] saying why the rest
/// did not run. What the run created has been removed.
#[derive(Debug)]
pub struct MetaFailure {
    pub error: MetaError,
    pub partial: Box<MetaResult>,
}

impl MetaFailure {
    /// `error`, with what the run measured before it (`partial`), which
    /// records why it stopped.
    fn new(error: MetaError, mut partial: MetaResult) -> MetaFailure {
        partial.failure = Some(error.to_string());
        MetaFailure {
            error,
            partial: Box::new(partial),
        }
    }
}

fn invalid(msg: impl Into<String>) -> MetaError {
    MetaError::Invalid(msg.into())
}

fn c_path(path: &Path) -> Result<CString, MetaError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| invalid(format!("{}: the path holds a NUL byte", path.display())))
}

/// Checks the options and works out the tree, creating nothing.
pub fn validate(opts: &MetaOptions) -> Result<Tree, MetaError> {
    if opts.files == 0 {
        return Err(invalid("--files 0: the run needs at least one file"));
    }
    if opts.threads == 0 || opts.threads > MAX_THREADS {
        return Err(invalid(format!(
            "--threads {}: expected 1 to {MAX_THREADS}",
            opts.threads
        )));
    }
    let tree = Tree::new(opts.files, opts.dirs, opts.depth).map_err(|e| invalid(e.to_string()))?;
    for p in &opts.phases {
        if p.on_dirs() {
            if tree.dirs().is_empty() {
                return Err(invalid(format!(
                    "--phases: `{p}` times the directories of a tree, and this run has one \
                     directory (give --dirs N to make a tree)"
                )));
            }
            continue;
        }
        if !FILE_PHASES.contains(p) {
            return Err(invalid(format!("--phases: `{p}` is not a phase")));
        }
    }
    let dir = &opts.dir;
    // Another user's link in a shared sticky directory, anywhere in the
    // name, is not followed (the rule of `crate::links`).
    if let Err(e) = crate::links::resolve(dir) {
        if crate::links::is_foreign(&e) {
            return Err(invalid(format!("directory {}: {e}", dir.display())));
        }
    }
    match std::fs::metadata(dir) {
        Err(e) => {
            return Err(invalid(format!(
                "directory {}: {}",
                dir.display(),
                if e.kind() == io::ErrorKind::NotFound {
                    "does not exist".to_string()
                } else {
                    e.to_string()
                }
            )))
        }
        Ok(m) if !m.is_dir() => {
            return Err(invalid(format!("{} is not a directory", dir.display())))
        }
        Ok(_) => {}
    }
    if !fsops::can_write_dir(&c_path(dir)?) {
        return Err(invalid(format!(
            "directory {} is not writable",
            dir.display()
        )));
    }
    if opts.cold && !fsops::is_root() {
        return Err(invalid(
            "--cold drops the caches through /proc/sys/vm/drop_caches, which needs root; \
             run as root or without --cold",
        ));
    }
    Ok(tree)
}

/// The phases a run performs, in order.
pub fn phase_order(opts: &MetaOptions, tree: &Tree) -> Vec<MetaPhaseKind> {
    let has_tree = !tree.dirs().is_empty();
    let mut out = Vec::new();
    if has_tree {
        out.push(MetaPhaseKind::Mkdir);
    }
    for p in FILE_PHASES {
        let always = matches!(p, MetaPhaseKind::Create | MetaPhaseKind::Unlink);
        if always || opts.phases.is_empty() || opts.phases.contains(&p) {
            out.push(p);
        }
    }
    if has_tree {
        out.push(MetaPhaseKind::Rmdir);
    }
    out
}

/// Runs the metadata benchmark: validates, makes a fresh directory in
/// `opts.dir`, runs the phases and removes everything it made, also when
/// a phase fails or `stop` is set.
pub fn run_meta(opts: &MetaOptions, stop: &AtomicBool) -> Result<MetaResult, MetaError> {
    run_meta_partial(opts, stop).map_err(|f| f.error)
}

/// [`run_meta`], keeping what a run that fails or is stopped measured
/// before: the phases that finished.
pub fn run_meta_partial(opts: &MetaOptions, stop: &AtomicBool) -> Result<MetaResult, MetaFailure> {
    run_meta_observed(opts, stop, &mut |_, _, _| {})
}

/// [`run_meta_partial`], telling `on_phase` as each phase begins: its
/// 1-based number, the number of phases, and the phase (for a progress
/// display).
pub fn run_meta_observed(
    opts: &MetaOptions,
    stop: &AtomicBool,
    on_phase: &mut dyn FnMut(usize, usize, MetaPhaseKind),
) -> Result<MetaResult, MetaFailure> {
    let (tree, mut result) = prepare(opts)?;
    let work_path = match make_work_dir(&opts.dir) {
        Ok(p) => p,
        Err(e) => return Err(MetaFailure::new(e, result)),
    };
    let outcome = run_in(
        opts,
        &tree,
        &work_path,
        None,
        stop,
        on_phase,
        &mut result.phases,
    );
    // Every file and directory is gone after a run that finished; an
    // error removing the (empty) run directory is a failed run. After a
    // failure, what the run made goes (best effort) and the error stays
    // the one that stopped it.
    let outcome = match outcome {
        Ok(()) => std::fs::remove_dir(&work_path).map_err(|source| MetaError::Setup {
            what: "remove",
            path: work_path.clone(),
            source,
        }),
        Err(e) => {
            let _ = remove_tree(&work_path);
            Err(e)
        }
    };
    match outcome {
        Ok(()) => Ok(result),
        Err(e) => Err(MetaFailure::new(e, result)),
    }
}

/// One directory that several processes (the ranks of an MPI run) work
/// in together, as mdtest's ranks do without `-u`: made by one of them
/// with [`make_shared_dir`] before the run, removed by it with
/// [`remove_shared_dir`] when every process is done.
#[derive(Debug, Clone)]
pub struct SharedDir {
    /// The run's directory, made by [`make_shared_dir`].
    pub path: PathBuf,
    /// This process's rank: in every file's name (`f3.17`), so that no
    /// two ranks name the same file.
    pub rank: u32,
    /// Whether this process makes and removes the tree's directories (one
    /// process does; the others' mkdir and rmdir phases count nothing and
    /// their files go in the tree it made).
    pub makes_tree: bool,
}

/// Makes a fresh `iolab-meta.*` directory in `opts.dir` for a run that
/// several processes share, after checking the options.
pub fn make_shared_dir(opts: &MetaOptions) -> Result<PathBuf, MetaError> {
    validate(opts)?;
    make_work_dir(&opts.dir)
}

/// Removes a shared run's directory when every process is done with it:
/// it is empty after runs that all finished, and holds what runs that
/// failed or were stopped left, which goes with it.
pub fn remove_shared_dir(path: &Path) -> Result<(), MetaError> {
    std::fs::remove_dir(path)
        .or_else(|_| remove_tree(path))
        .map_err(|source| MetaError::Setup {
            what: "remove",
            path: path.to_path_buf(),
            source,
        })
}

/// [`run_meta_observed`] by one of the processes that share `shared`:
/// the directory is neither made nor removed here, and after a failure
/// this process's files are left for [`remove_shared_dir`] (the other
/// processes may still work in the directory).
pub fn run_meta_shared(
    opts: &MetaOptions,
    shared: &SharedDir,
    stop: &AtomicBool,
    on_phase: &mut dyn FnMut(usize, usize, MetaPhaseKind),
) -> Result<MetaResult, MetaFailure> {
    let (tree, mut result) = prepare(opts)?;
    match run_in(
        opts,
        &tree,
        &shared.path,
        Some(shared),
        stop,
        on_phase,
        &mut result.phases,
    ) {
        Ok(()) => Ok(result),
        Err(e) => Err(MetaFailure::new(e, result)),
    }
}

/// Checks the options and works out the tree; the result the phases go
/// into, with the run's setup and its tree's size. A failure carries
/// that result, with nothing measured.
fn prepare(opts: &MetaOptions) -> Result<(Tree, MetaResult), MetaFailure> {
    let mut result = MetaResult {
        setup: setup_of(opts),
        ..MetaResult::default()
    };
    let tree = match validate(opts) {
        Ok(t) => t,
        Err(e) => return Err(MetaFailure::new(e, result)),
    };
    result.directories = tree.dirs().len() as u64;
    result.leaves = tree.leaves().len() as u64;
    Ok((tree, result))
}

fn run_in(
    opts: &MetaOptions,
    tree: &Tree,
    work_path: &Path,
    shared: Option<&SharedDir>,
    stop: &AtomicBool,
    on_phase: &mut dyn FnMut(usize, usize, MetaPhaseKind),
    phases: &mut Vec<MetaPhase>,
) -> Result<(), MetaError> {
    let work = fsops::open_dir(&c_path(work_path)?).map_err(|source| MetaError::Setup {
        what: "open",
        path: work_path.to_path_buf(),
        source,
    })?;
    let ctx = PhaseCtx {
        work: work.as_fd(),
        work_path,
        tree,
        files: opts.files,
        threads: opts.threads,
        file_size: opts.file_size,
        fsync: opts.fsync,
        stop,
        rank: shared.map(|s| s.rank),
        makes_tree: shared.is_none_or(|s| s.makes_tree),
    };
    let mut prefix = b'f';
    let order = phase_order(opts, tree);
    for (i, kind) in order.iter().copied().enumerate() {
        on_phase(i + 1, order.len(), kind);
        if opts.cold {
            iolab_engine::host::drop_caches().map_err(|source| MetaError::DropCaches {
                phase: kind,
                source,
            })?;
        }
        let result = match kind {
            MetaPhaseKind::Mkdir | MetaPhaseKind::Rmdir => ctx.dirs(kind),
            MetaPhaseKind::Create => ctx.create(),
            MetaPhaseKind::Open => ctx.open(prefix),
            MetaPhaseKind::Utime => ctx.utime(prefix),
            MetaPhaseKind::Stat => ctx.stat(prefix),
            MetaPhaseKind::Readdir => ctx.readdir(),
            MetaPhaseKind::Rename => {
                let r = ctx.rename();
                prefix = b'r';
                r
            }
            MetaPhaseKind::Unlink => ctx.unlink(prefix),
        }?;
        phases.push(result);
    }
    Ok(())
}

/// Removes the run's directory and everything in it. The failure being
/// cleaned up after may be EMFILE: when `remove_dir_all` (a descriptor per
/// level of the tree) fails, each directory is read whole and closed
/// before its entries go, so that one free descriptor is enough.
fn remove_tree(path: &Path) -> io::Result<()> {
    if std::fs::remove_dir_all(path).is_ok() {
        return Ok(());
    }
    let entries = std::fs::read_dir(path)?
        .map(|e| {
            let e = e?;
            Ok((e.path(), e.file_type()?.is_dir()))
        })
        .collect::<io::Result<Vec<(PathBuf, bool)>>>()?;
    for (p, is_dir) in entries {
        if is_dir {
            remove_tree(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    std::fs::remove_dir(path)
}

/// Makes `iolab-meta.<pid>.<n>` in `dir`, the first `n` free.
fn make_work_dir(dir: &Path) -> Result<PathBuf, MetaError> {
    let pid = std::process::id();
    for n in 0..1000 {
        let path = dir.join(format!("iolab-meta.{pid}.{n}"));
        // Mode 0700, and never an existing name: no one else can plant a
        // name in the tree the pass creates and removes.
        match crate::private::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(MetaError::Setup {
                    what: "create",
                    path,
                    source,
                })
            }
        }
    }
    Err(MetaError::Setup {
        what: "create",
        path: dir.join(format!("iolab-meta.{pid}.*")),
        source: io::Error::from(io::ErrorKind::AlreadyExists),
    })
}

fn setup_of(opts: &MetaOptions) -> MetaSetup {
    MetaSetup {
        options: MetaOptions {
            depth: if opts.dirs > 0 { opts.depth.max(1) } else { 0 },
            ..opts.clone()
        },
        fs_type: iolab_engine::file::fs_type(&opts.dir)
            .map(|t| t.name().to_string())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests;
