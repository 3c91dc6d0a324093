//! I/O engines behind one trait, and the few host queries that need a raw
//! system call. This is the only crate that contains `unsafe`.
//!
//! The contract: a worker opens its files through its [`Engine`], fills or
//! checks the engine's buffers with [`Engine::buf`], and moves [`IoUnit`]s
//! through `queue` -> `commit` -> `reap`. A synchronous engine completes an
//! I/O inside `queue` and returns [`Queued::Completed`]; its `commit` and
//! `reap` do nothing. An error of one I/O is a [`Completion`] carrying the
//! errno; an [`EngineError`] is a setup failure (a file that cannot be
//! opened, an engine the kernel refuses, an unknown engine name) or a caller
//! bug (an I/O unit naming a slot or file that does not exist).

pub mod accounting;
pub mod buf;
pub mod clock;
pub mod file;
pub mod fsops;
pub mod host;
pub mod residency;

mod cpuio;
mod error;
pub mod exec;
mod falloc;
pub use falloc::mode_name as falloc_mode_name;
mod fdtable;
mod fileops;
mod ftruncate;
mod kind;
mod libaio;
mod mmap;
mod null;
mod psync;
mod pvsync;
mod pvsync2;
mod rawsys;
mod sync;
mod syncbase;
mod uring;

#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod testutil;

use std::path::{Path, PathBuf};

pub use buf::BufPool;
pub use error::{errno_name, errno_text, EngineError};
pub use exec::ExecSpec;
pub use kind::{EngineKind, IoThreads, KindCaps, FIO_ONLY_ENGINES};

/// How writes reach stable storage, fio's `sync=` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Plain buffered or direct writes.
    #[default]
    None,
    /// `O_SYNC`: data and metadata are durable when a write returns.
    Sync,
    /// `O_DSYNC`: data (and the metadata needed to read it) is durable.
    Dsync,
}

/// How the file will be read, told to the kernel at open (fio's
/// `fadvise_hint`): random access turns readahead off, so a random read of
/// one block does not bring its neighbours into the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    #[default]
    Normal,
    Sequential,
    Random,
}

/// A file to open: the path and the open(2) flags it needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSpec {
    pub path: PathBuf,
    pub read: bool,
    pub write: bool,
    /// `O_CREAT` with mode 0644.
    pub create: bool,
    /// `O_DIRECT`: bypass the page cache; offsets, lengths and buffers must
    /// be aligned to the device's logical block size.
    pub direct: bool,
    pub sync: SyncMode,
    pub access: Access,
    /// The end of the region the job uses (0: unknown). The mmap engine
    /// extends a file it writes to this size and maps that much.
    pub size: u64,
    /// What opens the name in place of open(2), given open(2)'s flags and
    /// mode: the job's files go through core's link rule (another user's
    /// link in a shared sticky directory is not followed, wherever in the
    /// name it is, however late it was planted). None: open(2).
    pub opener: Option<Opener>,
}

/// A function that opens a name as open(2) would with the flags and mode
/// given, or refuses to.
#[derive(Clone, Copy)]
pub struct Opener(pub fn(&Path, i32, u32) -> std::io::Result<std::fs::File>);

impl std::fmt::Debug for Opener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Opener")
    }
}

impl PartialEq for Opener {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

impl Eq for Opener {}

/// An engine's handle for an open file; small and dense, reused after close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// What an I/O unit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// Discard the range: `BLKDISCARD` on a block device. Regular files
    /// complete with `EOPNOTSUPP`.
    Trim,
    Fsync,
    Fdatasync,
}

/// One I/O. `slot` names the buffer it uses and is also its identity in the
/// completion; a slot is in flight at most once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoUnit {
    pub slot: u32,
    pub file: FileId,
    pub op: Op,
    pub offset: u64,
    /// Bytes to transfer, at most the engine's buffer size. Ignored by
    /// `Fsync` and `Fdatasync`.
    pub len: u32,
}

/// The outcome of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    /// Bytes transferred (fewer than asked is a short read or write, and
    /// the caller decides what it means; `Fsync` and `Fdatasync` complete
    /// with `Ok(0)`), or the errno.
    pub result: Result<u32, i32>,
}

/// What `queue` did with an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Done already (every synchronous engine).
    Completed(Completion),
    /// Accepted; it will come back from `reap` after `commit`.
    InFlight,
    /// The engine cannot take more now; reap some and queue it again.
    Busy,
}

/// `submit_one` failed: the job ends with `error`.
#[derive(Debug)]
pub struct SubmitError {
    pub error: EngineError,
    /// The I/O was queued before `commit` failed: `reap` hands it back.
    pub queued: bool,
}

/// What an engine can do, so the worker can adapt its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Every I/O completes inside `queue`.
    pub sync: bool,
    /// The engine reads or writes the buffers (`null` does not, so the
    /// worker may skip filling and verifying them).
    pub needs_buffers: bool,
    /// Data moves through an iovec (the `p*v*` system calls).
    pub vectored: bool,
}

/// Engine settings fixed for the life of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOpts {
    /// I/Os in flight at most; also the number of buffer slots.
    pub iodepth: u32,
    /// Bytes per buffer slot: the largest block size of the job.
    pub buf_size: usize,
    /// Buffer alignment; raised to the page size when smaller.
    pub align: usize,
    /// Poll for completions: `RWF_HIPRI` per I/O in `pvsync2`; a polled
    /// ring (`IORING_SETUP_IOPOLL`) in `io_uring`, which then opens only
    /// files with `direct` (O_DIRECT).
    pub hipri: bool,
    /// `io_uring`: register the buffers once and move data with
    /// `READ_FIXED`/`WRITE_FIXED` (fio's `fixedbufs`), so that direct I/O
    /// pins no pages per I/O. `Some(true)`: a refusal is an error; `None`:
    /// registered when the kernel allows; `Some(false)`: plain buffers.
    pub fixedbufs: Option<bool>,
    /// `io_uring`: register the open files and name them by index (fio's
    /// `registerfiles`). `Some(true)`: a refusal is an error; `None` (the
    /// job did not say): registered when the kernel allows, the leaner
    /// path; `Some(false)`: plain descriptors.
    pub registerfiles: Option<bool>,
    /// `io_uring`: a kernel thread polls the submission queue
    /// (`IORING_SETUP_SQPOLL`, fio's `sqthread_poll`).
    pub sqthread_poll: bool,
    /// `io_uring` with `sqthread_poll`: the CPU the polling thread is bound
    /// to (fio's `sqthread_poll_cpu`).
    pub sqthread_poll_cpu: Option<u32>,
    /// `io_uring`: move data with READV/WRITEV and a one-entry iovec
    /// rather than READ/WRITE (fio's `nonvectored=0`).
    pub vectored: bool,
    /// `io_uring`: every Nth SQE is marked `IOSQE_ASYNC`, handed to the
    /// ring's worker threads without a nonblocking try (fio's
    /// `force_async`); 0: only those of files that refuse nonblocking I/O.
    pub force_async: u32,
    /// `cpuio`: microseconds of CPU burnt per I/O (fio's `cpuchunks`).
    pub cpu_cycle_us: u32,
    /// `cpuio`: burn by sorting rather than spinning (`cpumode=qsort`).
    pub cpu_qsort: bool,
}

impl Default for EngineOpts {
    fn default() -> Self {
        Self {
            iodepth: 1,
            buf_size: 4096,
            align: 0,
            hipri: false,
            fixedbufs: Some(false),
            registerfiles: None,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            vectored: false,
            force_async: 0,
            cpu_cycle_us: 50_000,
            cpu_qsort: false,
        }
    }
}

/// An I/O engine: one per worker thread, owning its files and buffers.
pub trait Engine: Send {
    /// fio's name for the engine.
    fn name(&self) -> &'static str;
    fn caps(&self) -> Caps;
    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError>;
    /// Closes the file and reports an error close(2) returns (a deferred
    /// write-back error on NFS, say).
    fn close(&mut self, file: FileId) -> Result<(), EngineError>;
    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError>;
    /// `queue` for an engine whose I/O completes inside the call (`caps`
    /// says `sync`): the completion's result (the bytes moved, or the
    /// errno) without the queue's wrapping, for the synchronous fast
    /// path. An I/O the engine did not complete is an error.
    fn complete_now(&mut self, io: &IoUnit) -> Result<Result<u32, i32>, EngineError> {
        match self.queue(io)? {
            Queued::Completed(c) => Ok(c.result),
            Queued::InFlight | Queued::Busy => Err(EngineError::NotCompleted { name: self.name() }),
        }
    }
    /// Hands the queued I/Os to the kernel. A synchronous engine, whose
    /// I/Os complete inside `queue`, has nothing to do.
    fn commit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// `queue` and, when the I/O went in flight, `commit`, in one call: the
    /// queued fast path submits each I/O as it is queued (fio's default
    /// batching). An engine whose common case takes less than the two calls
    /// overrides it.
    fn submit_one(&mut self, io: &IoUnit) -> Result<Queued, SubmitError> {
        queue_and_commit(self, io)
    }
    /// Appends at least `min` and at most `max` completions to `out`
    /// (fewer only if fewer are in flight; a `max` below `min` counts as
    /// `min`). What is left stays for the next call. A synchronous engine
    /// has none in flight.
    fn reap(
        &mut self,
        _min: usize,
        _max: usize,
        _out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        Ok(())
    }
    /// One completion, as `reap(1, 1, ..)` gives it (waiting for it when
    /// none is ready), without the vector: the queued fast path reaps one
    /// at a time. None when nothing is in flight.
    fn reap_one(&mut self) -> Result<Option<Completion>, EngineError> {
        let mut out = Vec::with_capacity(1);
        self.reap(1, 1, &mut out)?;
        Ok(out.pop())
    }
    /// The whole buffer of a slot (`buf_size` bytes; an I/O uses the first
    /// `len`), to fill before a write or check after a read. Panics when
    /// `slot` is not below `iodepth`.
    fn buf(&mut self, slot: u32) -> &mut [u8];
}

/// `Engine::submit_one` as `queue` and then `commit`.
#[inline(always)]
pub(crate) fn queue_and_commit<E: Engine + ?Sized>(
    engine: &mut E,
    io: &IoUnit,
) -> Result<Queued, SubmitError> {
    let queued = engine.queue(io).map_err(|error| SubmitError {
        error,
        queued: false,
    })?;
    if queued == Queued::InFlight {
        engine.commit().map_err(|error| SubmitError {
            error,
            queued: true,
        })?;
    }
    Ok(queued)
}

/// The `exec` engine, running `spec`'s program.
pub fn create_exec(spec: ExecSpec, opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Ok(Box::new(exec::ExecEngine::new(spec, opts)?))
}

/// The engine of `kind`, with its buffers allocated (`exec`, which needs
/// its program, comes from `create_exec`).
pub fn create(kind: EngineKind, opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    use EngineKind as K;
    let engine: Box<dyn Engine> = match kind {
        K::Sync => Box::new(sync::SyncEngine::new(opts)?),
        K::Psync => Box::new(psync::PsyncEngine::new(opts)?),
        K::Pvsync => Box::new(pvsync::PvsyncEngine::new(opts)?),
        K::Pvsync2 => Box::new(pvsync2::Pvsync2Engine::new(opts)?),
        K::IoUring => Box::new(uring::UringEngine::new(opts)?),
        K::Libaio => Box::new(libaio::LibaioEngine::new(opts)?),
        K::Mmap => Box::new(mmap::MmapEngine::new(opts)?),
        K::Null => Box::new(null::NullEngine::new(opts)?),
        K::Falloc => Box::new(falloc::FallocEngine::new(opts)?),
        K::Ftruncate => Box::new(ftruncate::FtruncateEngine::new(opts)?),
        K::Cpuio => Box::new(cpuio::CpuioEngine::new(opts)?),
        K::Exec => {
            return Err(EngineError::Options(
                "ioengine=exec needs program= (the program to run)".to_string(),
            ))
        }
        K::FileCreate | K::FileStat | K::FileDelete | K::DirCreate | K::DirStat | K::DirDelete => {
            Box::new(fileops::FileOpEngine::new(kind.name(), opts)?)
        }
        K::Vsync | K::Posixaio => {
            return Err(EngineError::NotImplemented {
                name: kind.name().to_string(),
            })
        }
    };
    Ok(engine)
}

/// The engine fio calls `name` (see [`create`]); an unknown name is an
/// error that lists the engines iolab has.
pub fn create_named(name: &str, opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    create(name.parse()?, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_engine_lists_the_engines() {
        let err = create_named("nosuch", &EngineOpts::default())
            .err()
            .expect("nosuch is no engine");
        let msg = err.to_string();
        assert!(msg.contains("nosuch"), "{msg}");
        for kind in EngineKind::implemented() {
            assert!(msg.contains(kind.name()), "{msg} lacks {kind}");
        }
        assert!(!msg.contains("posixaio"), "{msg}");
    }

    #[test]
    fn later_engine_says_not_implemented() {
        let err = create(EngineKind::Posixaio, &EngineOpts::default())
            .err()
            .expect("posixaio is not built yet");
        let msg = err.to_string();
        assert!(msg.contains("posixaio") && msg.contains("psync"), "{msg}");
        assert!(matches!(err, EngineError::NotImplemented { .. }));
        assert!(
            err.to_string()
                .contains("use ioengine=io_uring or ioengine=libaio"),
            "{err}"
        );
    }

    #[test]
    fn every_engine_is_created_with_its_name() {
        let opts = EngineOpts {
            iodepth: 4,
            buf_size: 8192,
            ..EngineOpts::default()
        };
        for kind in EngineKind::implemented().filter(|k| *k != EngineKind::Exec) {
            let mut e = create(kind, &opts).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(e.name(), kind.name());
            assert_eq!(e.buf(3).len(), 8192);
            // What the engine says of itself is what its kind says.
            assert_eq!(e.caps().sync, kind.synchronous(), "{kind}");
            assert_eq!(e.caps().needs_buffers, kind.moves_file_data(), "{kind}");
        }
    }

    #[test]
    fn bad_options_are_errors() {
        let opts = EngineOpts {
            align: 3000,
            ..EngineOpts::default()
        };
        assert!(matches!(
            create(EngineKind::Psync, &opts),
            Err(EngineError::Options(_))
        ));
    }
}
