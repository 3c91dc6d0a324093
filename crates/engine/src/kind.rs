//! `EngineKind`: every I/O engine iolab knows by fio's name, with what it
//! can do as data. The job option table's choices, the `--cmdhelp` text,
//! [`create`](crate::create)'s match and every check of what an engine does
//! (moves file data, needs a disk, completes inside `queue`) read this one
//! table; adding an engine is a row here and an arm in `create`.

/// What an engine is, fixed by its kind (fio's engine flags: `FIO_SYNCIO`,
/// `FIO_DISKLESSIO`, `FIO_NOIO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindCaps {
    /// iolab has it (`vsync` and `posixaio` are known by name only).
    pub implemented: bool,
    /// Every I/O completes inside `queue`: one in flight at a time, so an
    /// iodepth above 1 is never reached.
    pub synchronous: bool,
    /// The job's bytes go to and from its files, so the devices under them
    /// see that I/O (not `null`, the file-operation engines, `falloc`,
    /// `ftruncate`, `cpuio` or `exec`).
    pub moves_file_data: bool,
    /// No device is read or written and the job's files must not be laid
    /// out first (fio lists no disk for these).
    pub diskless: bool,
    /// No I/O at all and no file (fio's `FIO_NOIO`): the job runs until its
    /// runtime is over.
    pub no_io: bool,
    /// fio 3.33 lacks it (fio added it in 3.34).
    pub newer_than_fio_3_33: bool,
    /// Which threads do the job's I/O, as the kernel's per-thread I/O
    /// accounting sees it.
    pub io_threads: IoThreads,
}

/// Which threads do an engine's I/O: whose /proc/.../io counts tell what
/// a job caused the storage to read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoThreads {
    /// The thread that calls the engine: the synchronous engines, mmap's
    /// page faults, libaio (whose io_submit does buffered I/O before it
    /// returns).
    Caller,
    /// The caller and its io_uring workers (`iou-wrk-<tid>`), to which
    /// the kernel hands what it cannot do without blocking: buffered
    /// writes on ext4, fsync, some reads.
    CallerAndUringWorkers,
    /// Threads the job's count cannot be found in (posixaio's C library
    /// threads, io_uring's submission-polling thread).
    Unknown,
}

const fn caps(synchronous: bool, moves_file_data: bool, diskless: bool, no_io: bool) -> KindCaps {
    KindCaps {
        implemented: true,
        synchronous,
        moves_file_data,
        diskless,
        no_io,
        newer_than_fio_3_33: false,
        io_threads: IoThreads::Caller,
    }
}

/// A synchronous engine that reads and writes its files.
const DATA_SYNC: KindCaps = caps(true, true, false, false);
/// A queued engine that reads and writes its files.
const DATA_QUEUED: KindCaps = caps(false, true, false, false);
/// Known to fio, not built in iolab yet.
const LATER: KindCaps = KindCaps {
    implemented: false,
    ..DATA_SYNC
};
/// A file or directory operation per I/O on paths that need not exist.
const FILE_OP_DISKLESS: KindCaps = caps(true, false, true, false);
/// A file operation per I/O on files laid out first.
const FILE_OP: KindCaps = caps(true, false, false, false);
/// A directory operation added by fio 3.34.
const DIR_OP: KindCaps = KindCaps {
    newer_than_fio_3_33: true,
    ..FILE_OP_DISKLESS
};
/// No I/O at all.
const NO_IO: KindCaps = caps(true, false, true, true);

macro_rules! engine_kinds {
    ($($id:ident = $name:literal, $caps:expr, $help:literal;)*) => {
        /// An I/O engine, by fio's name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EngineKind { $($id),* }

        impl EngineKind {
            /// Every engine iolab knows, in the order the docs list them.
            pub const ALL: &'static [EngineKind] = &[$(EngineKind::$id),*];

            /// fio's name (`ioengine=NAME`).
            pub const fn name(self) -> &'static str {
                match self { $(EngineKind::$id => $name),* }
            }

            /// What the engine is.
            pub const fn caps(self) -> KindCaps {
                match self { $(EngineKind::$id => $caps),* }
            }

            /// One line for `--cmdhelp` and the option reference.
            pub const fn help(self) -> &'static str {
                match self { $(EngineKind::$id => $help),* }
            }
        }
    };
}

engine_kinds! {
    Sync = "sync", DATA_SYNC, "read(2) and write(2) after lseek(2), one I/O at a time";
    Psync = "psync", DATA_SYNC, "pread(2) and pwrite(2), one I/O at a time";
    Vsync = "vsync", LATER, "readv(2) and writev(2); adjacent queued I/Os are merged";
    Pvsync = "pvsync", DATA_SYNC, "preadv(2) and pwritev(2)";
    Pvsync2 = "pvsync2", DATA_SYNC,
        "preadv2(2) and pwritev2(2), with per-I/O flags such as RWF_HIPRI";
    IoUring = "io_uring", KindCaps { io_threads: IoThreads::CallerAndUringWorkers, ..DATA_QUEUED },
        "Linux io_uring: asynchronous submission and completion rings";
    Libaio = "libaio", DATA_QUEUED,
        "Linux native AIO (io_submit); asynchronous only with direct=1";
    Posixaio = "posixaio",
        KindCaps { synchronous: false, io_threads: IoThreads::Unknown, ..LATER },
        "POSIX aio_read(3) and aio_write(3)";
    Mmap = "mmap", DATA_SYNC, "copy to and from a shared memory mapping of the file";
    Null = "null", caps(true, false, true, false),
        "complete every I/O at once without touching storage";
    FileCreate = "filecreate", FILE_OP_DISKLESS,
        "create each file (open with O_CREAT) and time it";
    FileStat = "filestat", FILE_OP, "stat(2) each file and time it";
    FileDelete = "filedelete", FILE_OP, "unlink(2) each file and time it";
    DirCreate = "dircreate", DIR_OP, "mkdir(2) each directory and time it";
    DirStat = "dirstat", DIR_OP, "stat(2) each directory and time it";
    DirDelete = "dirdelete", DIR_OP, "rmdir(2) each directory and time it";
    Falloc = "falloc", FILE_OP,
        "fallocate(2) per I/O: writes allocate, reads keep the size, trims punch holes";
    Ftruncate = "ftruncate", FILE_OP,
        "ftruncate(2) the file to each write's offset (reads fail with EINVAL)";
    Cpuio = "cpuio", NO_IO, "no I/O: burn cpuload percent of a CPU in cycles of cpuchunks";
    Exec = "exec", NO_IO,
        "no I/O: run program= beside the job, stopped when its runtime is over";
}

/// fio's other engines: accepted by fio, named as such in iolab's errors.
pub const FIO_ONLY_ENGINES: &[&str] = &[
    "binject",
    "dev-dax",
    "dfs",
    "e4defrag",
    "external",
    "gfapi",
    "gfapi_async",
    "guasi",
    "http",
    "io_uring_cmd",
    "libcufile",
    "libhdfs",
    "libiscsi",
    "libpmem",
    "libzbc",
    "mtd",
    "nbd",
    "net",
    "netsplice",
    "nfs",
    "pmemblk",
    "rados",
    "rbd",
    "rdma",
    "sg",
    "solarisaio",
    "spdk",
    "splice",
    "windowsaio",
    "xnvme",
];

impl EngineKind {
    /// The engine fio calls `name`.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The engines iolab implements, in table order.
    pub fn implemented() -> impl Iterator<Item = EngineKind> {
        Self::ALL.iter().copied().filter(|k| k.caps().implemented)
    }

    /// The names of the engines iolab implements, comma-separated, for
    /// messages.
    pub fn implemented_names() -> String {
        Self::implemented()
            .map(EngineKind::name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every I/O completes inside `queue`.
    pub const fn synchronous(self) -> bool {
        self.caps().synchronous
    }

    /// The job's bytes go to and from its files.
    pub const fn moves_file_data(self) -> bool {
        self.caps().moves_file_data
    }

    /// No device is read or written; the job's files are not laid out.
    pub const fn diskless(self) -> bool {
        self.caps().diskless
    }

    /// No I/O and no file at all.
    pub const fn no_io(self) -> bool {
        self.caps().no_io
    }

    /// Which threads do the job's I/O.
    pub const fn io_threads(self) -> IoThreads {
        self.caps().io_threads
    }

    /// For an engine that performs one operation on each file (its first
    /// I/O after the open; the others do nothing), what that operation
    /// is, for messages: the operation on what, and the system call.
    pub const fn file_op(self) -> Option<(&'static str, &'static str)> {
        Some(match self {
            Self::FileCreate => ("create of the file", "open(2) with O_CREAT"),
            Self::FileStat => ("stat of the file", "stat(2)"),
            Self::FileDelete => ("unlink of the file", "unlink(2)"),
            Self::DirCreate => ("mkdir of the directory", "mkdir(2)"),
            Self::DirStat => ("stat of the directory", "stat(2)"),
            Self::DirDelete => ("rmdir of the directory", "rmdir(2)"),
            _ => return None,
        })
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for EngineKind {
    type Err = crate::EngineError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::from_name(name).ok_or_else(|| crate::EngineError::UnknownEngine {
            name: name.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_its_name() {
        for &k in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(k.name()), Some(k));
            assert_eq!(k.name().parse::<EngineKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
            assert!(!k.help().is_empty(), "{k}");
            assert!(!FIO_ONLY_ENGINES.contains(&k.name()), "{k}");
        }
        assert!(EngineKind::from_name("nosuch").is_none());
        assert!("rbd".parse::<EngineKind>().is_err());
    }

    #[test]
    fn capabilities_are_consistent() {
        for &k in EngineKind::ALL {
            let c = k.caps();
            if c.no_io {
                assert!(c.diskless && !c.moves_file_data, "{k}");
            }
            if c.moves_file_data {
                assert!(!c.diskless, "{k}");
            }
        }
        assert!(!EngineKind::IoUring.synchronous() && !EngineKind::Libaio.synchronous());
        assert!(EngineKind::Psync.moves_file_data() && !EngineKind::Null.moves_file_data());
        assert!(EngineKind::Null.diskless() && !EngineKind::FileStat.diskless());
        assert!(EngineKind::Cpuio.no_io() && EngineKind::Exec.no_io());
        assert_eq!(
            EngineKind::IoUring.io_threads(),
            IoThreads::CallerAndUringWorkers
        );
        assert_eq!(EngineKind::Libaio.io_threads(), IoThreads::Caller);
        assert_eq!(EngineKind::Posixaio.io_threads(), IoThreads::Unknown);
        // The file-operation engines say what they do; the others move
        // data at offsets.
        use EngineKind as K;
        let per_file = [
            K::FileCreate,
            K::FileStat,
            K::FileDelete,
            K::DirCreate,
            K::DirStat,
            K::DirDelete,
        ];
        for &k in EngineKind::ALL {
            assert_eq!(k.file_op().is_some(), per_file.contains(&k), "{k}");
        }
        assert_eq!(
            EngineKind::FileCreate.file_op(),
            Some(("create of the file", "open(2) with O_CREAT"))
        );
    }
}
