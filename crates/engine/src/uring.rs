//! fio's `io_uring` engine: one ring per worker with `iodepth` entries.
//! `queue` pushes one SQE (`READ`/`WRITE`, `READ_FIXED`/`WRITE_FIXED` with
//! `fixedbufs`, `FSYNC` with or without `DATASYNC`) whose `user_data` is the
//! slot; `commit` submits the batch with one io_uring_enter; `reap` waits
//! for `min` completions and drains every CQE there is. Trim is done inside
//! `queue`, as fio's engine does (BLKDISCARD on a block device, EOPNOTSUPP
//! on a file).
//!
//! Options: `hipri` makes a polled ring (`IORING_SETUP_IOPOLL`, O_DIRECT
//! files only), `fixedbufs` registers the buffer pool (also when the job
//! does not set it and its I/O is direct, unless it says `fixedbufs=0`),
//! `registerfiles` registers the open files and names them by index (also
//! when the job does not set it, unless it says `registerfiles=0`),
//! `sqthread_poll` (with
//! `sqthread_poll_cpu`) lets a kernel thread take the submissions.
//!
//! Every io_uring_enter is the `syscall` instruction itself (rawsys), the
//! ring named by its registered index where the kernel has them (5.18) and
//! by its descriptor otherwise; the io-uring crate sets the ring up and
//! lays out the SQEs, and is not on the path of a submission.
//!
//! A ring the kernel refuses (ENOSYS, EPERM from seccomp or
//! `kernel.io_uring_disabled`) is `EngineError::Refused` at creation.

use std::io;
use std::os::fd::AsRawFd;

use io_uring::{opcode, squeue, types, IoUring};

use crate::rawsys;
use crate::syncbase::SyncBase;
use crate::{
    Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit, Op, Queued,
};

const NAME: &str = "io_uring";

/// What to do when the kernel refuses a ring.
const SETUP_HINT: &str = "io_uring may be disabled (seccomp, sysctl kernel.io_uring_disabled); \
                          use ioengine=psync or ioengine=libaio instead";

/// Registered-file table size at first; doubled when a `FileId` outgrows it.
const FIRST_FILE_TABLE: usize = 16;

pub(crate) struct UringEngine {
    ring: IoUring,
    /// Open files and buffers; the ring is drained (see `Drop`) before the
    /// buffers are freed.
    base: SyncBase,
    fixedbufs: bool,
    /// The open files are in the ring's file table and SQEs name them by
    /// index: no lookup and no reference count of the file per I/O.
    registerfiles: bool,
    /// The job asked for `registerfiles=1`: a refusal is an error rather
    /// than a return to plain descriptors.
    files_required: bool,
    hipri: bool,
    /// One iovec per slot for READV/WRITEV (`vectored`), else empty. Never
    /// resized, so an SQE may point at an entry until it completes.
    iovecs: Iovecs,
    /// Entries of the registered-file table (`registerfiles`).
    file_table: usize,
    /// I/Os pushed and not yet reaped.
    in_flight: usize,
    /// Most I/Os in flight: the completion queue's size, so it never
    /// overflows.
    max_in_flight: usize,
    /// The ring's index among the thread's registered rings (Linux 5.18):
    /// io_uring_enter then names the ring by it, and the kernel skips the
    /// lookup and the reference count of the ring's file on every call.
    /// `None` when the kernel refuses, and with a polling SQ thread.
    ring_index: Option<u32>,
    /// A kernel thread polls the submission queue (`sqthread_poll`).
    sqpoll: bool,
    /// By `FileId`: the file takes no nonblocking I/O (see `takes_nowait`),
    /// so its SQEs go straight to io_uring's workers (`IOSQE_ASYNC`).
    punted: Vec<bool>,
    /// `force_async`: every this many SQEs one is marked `IOSQE_ASYNC`
    /// (0: none), as fio counts its prepared SQEs.
    force_async: u32,
    /// SQEs queued since the last one `force_async` marked.
    prepped: u32,
}

/// The slots' iovecs, pointing into the engine's own buffer pool.
struct Iovecs(Box<[libc::iovec]>);

// SAFETY: the iovecs point into the engine's buffer pool, which moves with
// the engine to whichever thread owns it; nothing else holds them.
unsafe impl Send for Iovecs {}

impl UringEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        let base = SyncBase::new(opts)?;
        let base_slots = base.bufs.slots();
        let entries = opts.iodepth.max(1);
        let ring = setup(entries, opts).map_err(|e| EngineError::Refused {
            engine: NAME,
            syscall: "io_uring_setup",
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            hint: SETUP_HINT,
        })?;
        let max_in_flight = ring.params().cq_entries() as usize;
        let sqpoll = ring.params().is_setup_sqpoll();
        let mut engine = Self {
            ring,
            base,
            fixedbufs: false,
            registerfiles: false,
            files_required: opts.registerfiles == Some(true),
            hipri: opts.hipri,
            iovecs: Iovecs(Box::default()),
            file_table: 0,
            in_flight: 0,
            max_in_flight,
            ring_index: None,
            sqpoll,
            punted: Vec::new(),
            force_async: opts.force_async,
            prepped: 0,
        };
        if !opts.sqthread_poll {
            engine.ring_index = register_ring_fd(engine.ring.as_raw_fd());
        }
        // Buffers are registered when the job asks, and unasked when its
        // I/O is direct (core passes None then): the kernel then pins no
        // pages per I/O. Unasked, a refusal (the locked-memory limit, say)
        // leaves plain buffers.
        engine.fixedbufs = match opts.fixedbufs {
            Some(true) => {
                engine.register_buffers()?;
                true
            }
            Some(false) => false,
            None => engine.register_buffers().is_ok(),
        };
        if opts.vectored && !engine.fixedbufs {
            engine.iovecs = Iovecs(
                (0..base_slots)
                    .map(|_| libc::iovec {
                        iov_base: std::ptr::null_mut(),
                        iov_len: 0,
                    })
                    .collect(),
            );
        }
        // Files are registered unless the job says registerfiles=0, as
        // the leaner path (fio registers them only with registerfiles=1);
        // unasked, a kernel that refuses gets plain descriptors.
        match opts.registerfiles {
            Some(true) => engine.register_files(FIRST_FILE_TABLE)?,
            Some(false) => {}
            None => {
                let _ = engine.register_files(FIRST_FILE_TABLE);
            }
        }
        engine.registerfiles = engine.file_table > 0;
        Ok(engine)
    }

    /// Registers every buffer slot, so that slot `i` is fixed buffer `i`.
    fn register_buffers(&mut self) -> Result<(), EngineError> {
        let bufs = &self.base.bufs;
        if bufs.slots() > usize::from(u16::MAX) || bufs.size() == 0 {
            return Err(EngineError::Options(format!(
                "fixedbufs: {} buffers of {} bytes cannot be registered (at most {} non-empty)",
                bufs.slots(),
                bufs.size(),
                u16::MAX
            )));
        }
        let iovecs: Vec<libc::iovec> = (0..bufs.slots())
            .map(|i| libc::iovec {
                iov_base: bufs.slot_ptr(i).cast(),
                iov_len: bufs.size(),
            })
            .collect();
        // SAFETY: every iovec describes one slot of `self.base.bufs`, which
        // lives as long as the ring: the ring is drained in `Drop` before the
        // pool is freed, and the registration ends when the ring is closed.
        unsafe { self.ring.submitter().register_buffers(&iovecs) }.map_err(|e| {
            EngineError::Refused {
                engine: NAME,
                syscall: "io_uring_register(IORING_REGISTER_BUFFERS)",
                errno: e.raw_os_error().unwrap_or(libc::EIO),
                hint: "set fixedbufs=0, or raise the locked-memory limit (ulimit -l)",
            }
        })
    }

    /// (Re)registers a file table of `size` entries holding the open files
    /// at their `FileId` index.
    fn register_files(&mut self, size: usize) -> Result<(), EngineError> {
        let refused = |e: io::Error| EngineError::Refused {
            engine: NAME,
            syscall: "io_uring_register(IORING_REGISTER_FILES)",
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            hint: "set registerfiles=0",
        };
        let mut fds = vec![-1; size];
        for (i, fd) in fds.iter_mut().enumerate().take(self.file_table) {
            let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
            if let Ok(file) = self.base.files.get_mut(id) {
                *fd = file.raw();
            }
        }
        let submitter = self.ring.submitter();
        if self.file_table > 0 {
            submitter.unregister_files().map_err(refused)?;
            self.file_table = 0;
        }
        submitter.register_files(&fds).map_err(refused)?;
        self.file_table = size;
        Ok(())
    }

    /// Back to plain descriptors, when the kernel refused a registration
    /// the job did not ask for. I/Os in flight keep their own reference
    /// to their file.
    fn stop_registering(&mut self) {
        if self.file_table > 0 {
            let _ = self.ring.submitter().unregister_files();
        }
        self.file_table = 0;
        self.registerfiles = false;
    }

    /// Puts `fd` (or -1 to empty it) at index `id` of the file table.
    fn update_file(&mut self, id: FileId, fd: libc::c_int) -> Result<(), EngineError> {
        let index = id.0 as usize;
        if index >= self.file_table {
            let size = (index + 1).next_power_of_two().max(self.file_table * 2);
            self.register_files(size)?;
        }
        self.ring
            .submitter()
            .register_files_update(id.0, &[fd])
            .map(|_| ())
            .map_err(|e| EngineError::Refused {
                engine: NAME,
                syscall: "io_uring_register(IORING_REGISTER_FILES_UPDATE)",
                errno: e.raw_os_error().unwrap_or(libc::EIO),
                hint: "set registerfiles=0",
            })
    }

    /// Submits the queued SQEs and waits for `want` completions with one
    /// io_uring_enter, the `syscall` instruction itself (rawsys), as
    /// `Submitter::submit_and_wait` decides: the ring is named by its
    /// registered index when it has one (Linux 5.18), by its descriptor
    /// otherwise. With a polling SQ thread that is awake, nothing needs
    /// the call unless completions are wanted or the kernel holds work
    /// for this thread.
    #[inline]
    fn submit_and_wait(&mut self, want: usize) -> io::Result<usize> {
        loop {
            let sqpoll = self.sqpoll;
            let (len, flags) = {
                let sq = self.ring.submission();
                // Deferred task work, an overflowed completion queue and a
                // polled ring all need GETEVENTS to make progress.
                let work = sq.cq_overflow() || sq.taskrun();
                let mut flags = if want > 0 || self.hipri || work {
                    IORING_ENTER_GETEVENTS
                } else {
                    0
                };
                // need_wakeup orders the tail written above before the flag
                // it reads (a SeqCst fence), as the kernel's sleep requires.
                if sqpoll {
                    if sq.need_wakeup() {
                        flags |= IORING_ENTER_SQ_WAKEUP;
                    } else if flags == 0 {
                        // The SQ thread takes the entries by itself.
                        return Ok(sq.len());
                    }
                }
                (sq.len(), flags)
            };
            let (target, flags) = match self.ring_index {
                Some(index) => (index, flags | IORING_ENTER_REGISTERED_RING),
                None => (self.ring.as_raw_fd() as u32, flags),
            };
            // SAFETY: io_uring_enter with no argument block; the SQEs it
            // submits were checked when they were queued.
            let r = unsafe {
                rawsys::io_uring_enter(target, len as u32, want as u32, flags, std::ptr::null(), 0)
            };
            match r {
                Ok(n) => return Ok(n),
                // The index is not this thread's (the engine moved to
                // another thread): nothing was submitted; go on by
                // descriptor.
                Err(libc::EBADF | libc::EINVAL) if self.ring_index.is_some() => {
                    self.ring_index = None;
                }
                Err(errno) => return Err(io::Error::from_raw_os_error(errno)),
            }
        }
    }

    /// Moves every completion there is to `out`; returns how many.
    #[inline]
    fn drain(&mut self, limit: usize, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        // Completions past `limit` stay in the ring for the next reap.
        for cqe in self.ring.completion().take(limit) {
            out.push(completion(&cqe));
            n += 1;
        }
        self.in_flight -= n;
        n
    }
}

impl UringEngine {
    /// READV/WRITEV of the slot's buffer through its iovec (`vectored`).
    #[inline(never)]
    fn vectored_entry(
        &mut self,
        io: &IoUnit,
        fd: libc::c_int,
        buf: *mut u8,
        write: bool,
    ) -> squeue::Entry {
        let v = &mut self.iovecs.0[io.slot as usize];
        v.iov_base = buf.cast();
        v.iov_len = io.len as usize;
        let iov: *const libc::iovec = v;
        macro_rules! entry {
            ($fd:expr) => {
                if write {
                    opcode::Writev::new($fd, iov, 1).offset(io.offset).build()
                } else {
                    opcode::Readv::new($fd, iov, 1).offset(io.offset).build()
                }
            };
        }
        if self.registerfiles {
            entry!(types::Fixed(io.file.0))
        } else {
            entry!(types::Fd(fd))
        }
    }

    /// `queue` for what moves no data: a trim, done here (as fio's engine
    /// does), or an fsync or fdatasync SQE.
    #[cold]
    #[inline(never)]
    fn queue_no_data(&mut self, io: &IoUnit, fd: libc::c_int) -> Result<Queued, EngineError> {
        if io.op == Op::Trim {
            let result = self.base.no_data(io)?;
            return Ok(Queued::Completed(Completion {
                slot: io.slot,
                result,
            }));
        }
        if self.in_flight >= self.max_in_flight {
            return Ok(Queued::Busy);
        }
        let flags = if io.op == Op::Fdatasync {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        let sqe = if self.registerfiles {
            opcode::Fsync::new(types::Fixed(io.file.0))
                .flags(flags)
                .build()
        } else {
            opcode::Fsync::new(types::Fd(fd)).flags(flags).build()
        };
        // SAFETY: an fsync SQE points at no memory.
        Ok(unsafe { self.push(sqe, io) })
    }

    /// Pushes `sqe` for `io` (its user_data the slot), marked
    /// `IOSQE_ASYNC` when `force_async` picks it or its file takes no
    /// nonblocking I/O. Busy when the submission queue is full; the counts
    /// move only once the SQE is in the queue, so that a refused push
    /// comes back with the same I/O.
    ///
    /// # Safety
    /// Whatever memory `sqe` points at stays valid until its completion is
    /// reaped.
    #[inline]
    unsafe fn push(&mut self, sqe: squeue::Entry, io: &IoUnit) -> Queued {
        let sqe = sqe.user_data(u64::from(io.slot));
        let prepped = if self.force_async == 0 {
            0
        } else {
            (self.prepped + 1) % self.force_async
        };
        let forced = self.force_async != 0 && prepped == 0;
        let sqe = if forced || self.punted.get(io.file.0 as usize) == Some(&true) {
            sqe.flags(squeue::Flags::ASYNC)
        } else {
            sqe
        };
        // SAFETY: as the caller promises; a full queue refuses the push.
        if unsafe { self.ring.submission().push(&sqe) }.is_err() {
            return Queued::Busy;
        }
        self.prepped = prepped;
        self.in_flight += 1;
        Queued::InFlight
    }
}

impl UringEngine {
    /// Whether open file `id` takes nonblocking I/O (`FMODE_NOWAIT`): a
    /// read with `RWF_NOWAIT` is refused with EOPNOTSUPP before anything
    /// else when it does not. io_uring tries each SQE without blocking
    /// first and hands an SQE such a file refuses to its worker threads;
    /// handed over that way, work goes to one worker at a time while that
    /// worker runs (a zram device's reads never sleep, so one worker does
    /// them all, woken for each). Marked `IOSQE_ASYNC` from the start, the
    /// SQEs skip the try and may run on several workers at once, as fio's
    /// `force_async=1` makes them. The probe reads past the end of the
    /// file (a block device or a regular file returns 0 there without
    /// I/O); true unless the answer is EOPNOTSUPP.
    fn takes_nowait(&mut self, id: FileId) -> bool {
        let Ok(file) = self.base.files.get_mut(id) else {
            return true;
        };
        let fd = file.raw();
        // Nothing is read into it (past the end), but the kernel checks
        // that the memory is the process's.
        let mut buf = [0u8; 512];
        let iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // Far past any end, and far from overflowing with the length.
        let past_end: libc::off_t = 1 << 60;
        // SAFETY: the iovec names `buf`, live and exclusively borrowed
        // across the call; the kernel writes at most its length there.
        let rc = unsafe { libc::preadv2(fd, &iov, 1, past_end, libc::RWF_NOWAIT) };
        !(rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP))
    }

    /// Ends the registration of the ring's descriptor with this thread,
    /// if any: it holds the ring open, which would otherwise live as long
    /// as the thread. io_uring_enter names the ring by descriptor after.
    fn unregister_ring(&mut self) {
        let Some(index) = self.ring_index.take() else {
            return;
        };
        let up = RsrcUpdate {
            offset: index,
            resv: 0,
            data: 0,
        };
        // SAFETY: `up` is one valid io_uring_rsrc_update, read by the
        // kernel during the call.
        unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring.as_raw_fd(),
                IORING_UNREGISTER_RING_FDS,
                &up as *const RsrcUpdate,
                1,
            );
        }
    }
}

/// The ring: `entries` SQEs, polled or with a polling thread as asked.
/// `IORING_SETUP_SUBMIT_ALL` (Linux 5.18) keeps a batch going past an SQE
/// that fails at submission; older kernels get the ring without it.
fn setup(entries: u32, opts: &EngineOpts) -> io::Result<IoUring> {
    // The most the kernel takes first, then less on EINVAL (an older
    // kernel): completions run as task work only when the worker asks for
    // them, with no interrupt of the worker (COOP_TASKRUN, DEFER_TASKRUN,
    // which needs SINGLE_ISSUER: the worker thread that made the ring is
    // the only one to submit), as fio 3.33 sets up its rings; then
    // SUBMIT_ALL; then neither. A polling SQ thread takes submissions
    // itself, so it gets no deferred task work.
    let build = |level: u8| {
        let mut b = IoUring::builder();
        b.setup_clamp();
        if level >= 1 {
            b.setup_submit_all();
        }
        if level >= 2 {
            b.setup_coop_taskrun()
                .setup_single_issuer()
                .setup_defer_taskrun();
        }
        if opts.hipri {
            b.setup_iopoll();
        }
        if opts.sqthread_poll {
            // 0: the kernel's default idle time (1 s), as fio leaves it.
            b.setup_sqpoll(0);
            if let Some(cpu) = opts.sqthread_poll_cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        b.build(entries)
    };
    let first = if opts.sqthread_poll { 1 } else { 2 };
    let mut level = first;
    loop {
        match build(level) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && level > 0 => level -= 1,
            other => return other,
        }
    }
}

/// Runs an io_uring_enter again when a signal interrupted it.
#[inline]
fn retry_eintr(mut f: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// `struct io_uring_rsrc_update` of the ring-descriptor registration.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;
const IORING_ENTER_GETEVENTS: libc::c_uint = 1;
const IORING_ENTER_SQ_WAKEUP: libc::c_uint = 2;
const IORING_ENTER_REGISTERED_RING: libc::c_uint = 16;

/// Registers the ring's descriptor with the calling thread; its index, or
/// `None` when the kernel cannot (before 5.18, or no free entry).
fn register_ring_fd(fd: libc::c_int) -> Option<u32> {
    let mut up = RsrcUpdate {
        // Any free index.
        offset: u32::MAX,
        resv: 0,
        data: fd as u64,
    };
    // SAFETY: `up` is one valid io_uring_rsrc_update, which the kernel
    // reads and fills in (its `offset`) during the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            IORING_REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1,
        )
    };
    (r == 1).then_some(up.offset)
}

/// An io_uring_enter failure as an `EngineError`.
fn enter_error(e: io::Error) -> EngineError {
    EngineError::Refused {
        engine: NAME,
        syscall: "io_uring_enter",
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        hint: "use ioengine=psync instead",
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: false,
            needs_buffers: true,
            vectored: false,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        if self.hipri && !file.direct {
            return Err(EngineError::Options(format!(
                "{}: hipri polls for completions, which only O_DIRECT I/O has; \
                 set direct=1, or hipri=0",
                file.path.display()
            )));
        }
        let id = self.base.open(file)?;
        let index = id.0 as usize;
        if self.punted.len() <= index {
            self.punted.resize(index + 1, false);
        }
        self.punted[index] = file.read && !self.takes_nowait(id);
        if self.registerfiles {
            let fd = self.base.files.get_mut(id)?.raw();
            if let Err(e) = self.update_file(id, fd) {
                if self.files_required {
                    let _ = self.base.close(id);
                    return Err(e);
                }
                self.stop_registering();
            }
        }
        Ok(id)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        if self.registerfiles && self.base.files.get_mut(file).is_ok() {
            // I/Os in flight keep their own reference to the file.
            if let Err(e) = self.update_file(file, -1) {
                if self.files_required {
                    return Err(e);
                }
                self.stop_registering();
            }
        }
        self.base.close(file)
    }

    // Inlined into `submit_one` (the trait's), the queued fast path's
    // one call per I/O.
    #[inline(always)]
    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let (slots, size) = (self.base.bufs.slots(), self.base.bufs.size());
        if io.slot as usize >= slots || io.len as usize > size {
            return Err(EngineError::BadUnit {
                slot: io.slot,
                len: io.len,
                slots,
                size,
            });
        }
        let fd = self.base.files.get_mut(io.file)?.raw();
        let write = match io.op {
            Op::Read => false,
            Op::Write => true,
            _ => return self.queue_no_data(io, fd),
        };
        if io.offset > i64::MAX as u64 {
            // The kernel would take it for -1: "at the file position".
            return Ok(Queued::Completed(Completion {
                slot: io.slot,
                result: Err(libc::EINVAL),
            }));
        }
        if self.in_flight >= self.max_in_flight {
            return Ok(Queued::Busy);
        }
        let buf = self.base.bufs.slot_ptr(io.slot as usize);
        // The slot is below `slots`, which register_buffers kept within u16.
        let index = io.slot as u16;
        let (off, len) = (io.offset, io.len);
        macro_rules! entry {
            ($fd:expr) => {
                match (write, self.fixedbufs) {
                    (false, false) => opcode::Read::new($fd, buf, len).offset(off).build(),
                    (false, true) => opcode::ReadFixed::new($fd, buf, len, index)
                        .offset(off)
                        .build(),
                    (true, false) => opcode::Write::new($fd, buf, len).offset(off).build(),
                    (true, true) => opcode::WriteFixed::new($fd, buf, len, index)
                        .offset(off)
                        .build(),
                }
            };
        }
        let sqe = if !self.iovecs.0.is_empty() {
            self.vectored_entry(io, fd, buf, write)
        } else if self.registerfiles {
            entry!(types::Fixed(io.file.0))
        } else {
            entry!(types::Fd(fd))
        };
        // SAFETY: the SQE points at `len` bytes of the slot's buffer
        // (checked against the pool's size above), directly or through the
        // slot's iovec in `iovecs` (never resized), which stays allocated
        // until the I/O is reaped: the pool lives as long as the engine, and
        // `Drop` waits for every I/O in flight before freeing it. The caller
        // keeps a slot in flight at most once and does not touch its buffer
        // until the completion comes back.
        Ok(unsafe { self.push(sqe, io) })
    }

    #[inline(always)]
    fn commit(&mut self) -> Result<(), EngineError> {
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        match retry_eintr(|| self.submit_and_wait(0)) {
            Ok(_) => Ok(()),
            // No room for completions or kernel resources just now: the SQEs
            // stay queued and go with the io_uring_enter of the next reap.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => Ok(()),
            Err(e) => Err(enter_error(e)),
        }
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let mut want = min.min(self.in_flight);
        let mut room = max.max(min).max(1);
        loop {
            let ready = self.ring.completion().len();
            if ready < want || !self.ring.submission().is_empty() {
                let wait = want.saturating_sub(ready);
                match retry_eintr(|| self.submit_and_wait(wait)) {
                    Ok(_) => {}
                    // The completion queue is full: draining makes room.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {}
                    Err(e) => return Err(enter_error(e)),
                }
            }
            let got = self.drain(room, out);
            want = want.saturating_sub(got);
            room -= got;
            if want == 0 || room == 0 {
                return Ok(());
            }
        }
    }

    fn reap_one(&mut self) -> Result<Option<Completion>, EngineError> {
        if self.in_flight == 0 {
            return Ok(None);
        }
        loop {
            // As `reap`: SQEs not yet submitted go with the call, which
            // waits when no completion is ready.
            let ready = !self.ring.completion().is_empty();
            if !ready || !self.ring.submission().is_empty() {
                match retry_eintr(|| self.submit_and_wait(usize::from(!ready))) {
                    Ok(_) => {}
                    // The completion queue is full: taking one makes room.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {}
                    Err(e) => return Err(enter_error(e)),
                }
            }
            if let Some(cqe) = self.ring.completion().next() {
                self.in_flight -= 1;
                return Ok(Some(completion(&cqe)));
            }
        }
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.base.buf(slot)
    }
}

/// A CQE as a completion: user_data is the slot, a u32.
#[inline]
fn completion(cqe: &io_uring::cqueue::Entry) -> Completion {
    let res = cqe.result();
    Completion {
        slot: cqe.user_data() as u32,
        result: if res >= 0 { Ok(res as u32) } else { Err(-res) },
    }
}

impl Drop for UringEngine {
    /// Waits for the I/Os still in flight: the kernel may write into their
    /// buffers until they complete, so the pool must outlive them.
    fn drop(&mut self) {
        let mut sink = Vec::new();
        while self.in_flight > 0 {
            let want = self.in_flight;
            if retry_eintr(|| self.submit_and_wait(want)).is_err() && {
                let got = self.drain(usize::MAX, &mut sink);
                sink.clear();
                got == 0
            } {
                // Cannot wait: leak the buffers rather than free them under
                // the kernel's feet.
                if let Ok(empty) = crate::BufPool::new(0, 0, 0) {
                    std::mem::forget(std::mem::replace(&mut self.base.bufs, empty));
                }
                self.unregister_ring();
                return;
            }
            self.drain(usize::MAX, &mut sink);
            sink.clear();
        }
        self.unregister_ring();
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::file::probe_o_direct;
    use crate::testutil::{self, check, fill, io, opts, pattern_byte, spec, temp};
    use crate::{create_named, Completion, Engine, EngineError, EngineOpts, FileId, Op, Queued};

    /// The engine, or why not when this kernel refuses io_uring.
    fn uring(o: &EngineOpts) -> Result<Box<dyn Engine>, iolab_testkit::Missing> {
        match create_named("io_uring", o) {
            Ok(e) => Ok(e),
            Err(EngineError::Refused {
                syscall: "io_uring_setup",
                errno,
                ..
            }) => Err(iolab_testkit::Missing::here(format!(
                "io_uring_setup refused, errno {errno}"
            ))),
            Err(e) => panic!("{e}"),
        }
    }

    fn reap_all(e: &mut dyn Engine, n: usize) -> Vec<Completion> {
        let mut out = Vec::with_capacity(n);
        e.reap(n, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), n);
        out.sort_by_key(|c| c.slot);
        out
    }

    /// Writes 8 extents at once, then reads them back at once, and checks.
    fn eight_in_flight(o: &EngineOpts, path: &Path, direct: bool) {
        eight_in_flight_on(iolab_testkit::need!(uring(o)), path, direct);
    }

    /// `eight_in_flight` through engine `e`.
    fn eight_in_flight_on(mut e: Box<dyn Engine>, path: &Path, direct: bool) {
        let mut s = spec(path, true, true);
        s.direct = direct;
        let f = e.open(&s).unwrap();
        let off = |slot: u32| u64::from(7 - slot) * 12288 + if direct { 0 } else { 100 };
        for slot in 0..8 {
            fill(e.as_mut(), slot, off(slot), 8192, 0x33);
            let q = e.queue(&io(slot, f, Op::Write, off(slot), 8192)).unwrap();
            assert_eq!(q, Queued::InFlight);
        }
        e.commit().unwrap();
        for (slot, c) in reap_all(e.as_mut(), 8).iter().enumerate() {
            assert_eq!(
                *c,
                Completion {
                    slot: slot as u32,
                    result: Ok(8192)
                }
            );
        }
        for slot in 0..8 {
            e.buf(slot).fill(0);
            // Each slot reads another slot's extent.
            let q = e.queue(&io(slot, f, Op::Read, off(7 - slot), 8192));
            assert_eq!(q.unwrap(), Queued::InFlight);
        }
        e.commit().unwrap();
        for c in reap_all(e.as_mut(), 8) {
            assert_eq!(c.result, Ok(8192));
            check(e.as_mut(), c.slot, off(7 - c.slot), 8192, 0x33);
        }
        e.close(f).unwrap();
        // And the file holds it, read with psync.
        let mut p = create_named("psync", &opts(1, 8192)).unwrap();
        let pf = p.open(&spec(path, true, false)).unwrap();
        for slot in 0..8 {
            let c = testutil::run(p.as_mut(), io(0, pf, Op::Read, off(slot), 8192));
            assert_eq!(c.result, Ok(8192));
            check(p.as_mut(), 0, off(slot), 8192, 0x33);
        }
    }

    #[test]
    fn engine_contract() {
        iolab_testkit::need!(uring(&opts(1, 4096)));
        testutil::engine_contract("io_uring");
    }

    #[test]
    fn eight_in_flight_round_trip() {
        let dir = temp();
        eight_in_flight(&opts(8, 8192), &dir.path().join("eight"), false);
    }

    #[test]
    fn eight_in_flight_o_direct() {
        let dir = temp();
        if !probe_o_direct(dir.path()).unwrap_or(false) {
            iolab_testkit::skip!("no O_DIRECT here");
        }
        eight_in_flight(&opts(8, 8192), &dir.path().join("direct"), true);
    }

    #[test]
    fn vectored_reads_and_writes() {
        let dir = temp();
        for registerfiles in [false, true] {
            let o = EngineOpts {
                vectored: true,
                registerfiles: Some(registerfiles),
                ..opts(8, 8192)
            };
            let path = dir.path().join(format!("vectored-{registerfiles}"));
            eight_in_flight(&o, &path, false);
        }
    }

    /// Buffers the job did not ask to register stay plain when they cannot
    /// be (more than 65,535 slots), and the engine still moves data; asked
    /// for, the same refusal is an error naming fixedbufs.
    #[test]
    fn unasked_fixed_buffers_fall_back_to_plain_ones() {
        let dir = temp();
        let many = |fixedbufs| EngineOpts {
            fixedbufs,
            ..opts(65_536, 512)
        };
        let mut e = iolab_testkit::need!(uring(&many(None)));
        let path = dir.path().join("plain");
        let f = e.open(&spec(&path, true, true)).unwrap();
        e.buf(9).fill(0x5a);
        assert_eq!(
            testutil::run(e.as_mut(), io(9, f, Op::Write, 0, 512)).result,
            Ok(512)
        );
        assert_eq!(std::fs::read(&path).unwrap(), vec![0x5a; 512]);
        match create_named("io_uring", &many(Some(true))) {
            Err(EngineError::Options(msg)) => assert!(msg.contains("fixedbufs"), "{msg}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("65,536 fixed buffers were registered"),
        }
    }

    #[test]
    fn fixed_buffers_and_files() {
        let dir = temp();
        for (fixedbufs, registerfiles) in [(true, false), (false, true), (true, true)] {
            let o = EngineOpts {
                fixedbufs: Some(fixedbufs),
                registerfiles: Some(registerfiles),
                ..opts(8, 8192)
            };
            let path = dir
                .path()
                .join(format!("fixed-{fixedbufs}-{registerfiles}"));
            eight_in_flight(&o, &path, false);
        }
    }

    #[test]
    fn registered_file_table_grows_and_reuses_ids() {
        let dir = temp();
        let o = EngineOpts {
            registerfiles: Some(true),
            ..opts(2, 4096)
        };
        let mut e = iolab_testkit::need!(uring(&o));
        let files: Vec<FileId> = (0..40)
            .map(|i| {
                e.open(&spec(&dir.path().join(format!("f{i}")), true, true))
                    .unwrap()
            })
            .collect();
        for (i, &f) in files.iter().enumerate() {
            e.buf(0).fill(i as u8);
            assert_eq!(
                testutil::run(e.as_mut(), io(0, f, Op::Write, 0, 4096)).result,
                Ok(4096)
            );
        }
        e.close(files[3]).unwrap();
        let again = e.open(&spec(&dir.path().join("f7"), true, false)).unwrap();
        assert_eq!(again, files[3]);
        e.buf(1).fill(0);
        assert_eq!(
            testutil::run(e.as_mut(), io(1, again, Op::Read, 0, 4096)).result,
            Ok(4096)
        );
        assert!(e.buf(1).iter().all(|&b| b == 7));
    }

    #[test]
    fn busy_when_the_ring_is_full() {
        let dir = temp();
        let mut e = iolab_testkit::need!(uring(&opts(4, 4096)));
        let f = e.open(&spec(&dir.path().join("busy"), true, true)).unwrap();
        for slot in 0..4 {
            fill(e.as_mut(), slot, u64::from(slot) * 4096, 4096, 5);
            let q = e.queue(&io(slot, f, Op::Write, u64::from(slot) * 4096, 4096));
            assert_eq!(q.unwrap(), Queued::InFlight);
        }
        assert_eq!(e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap(), Queued::Busy);
        e.commit().unwrap();
        let done = reap_all(e.as_mut(), 4);
        assert!(done.iter().all(|c| c.result == Ok(4096)), "{done:?}");
        // Room again once reaped.
        assert_eq!(
            e.queue(&io(0, f, Op::Read, 4096, 4096)).unwrap(),
            Queued::InFlight
        );
        e.commit().unwrap();
        assert_eq!(reap_all(e.as_mut(), 1)[0].result, Ok(4096));
        check(e.as_mut(), 0, 4096, 4096, 5);
    }

    #[test]
    fn reap_returns_at_least_min() {
        let dir = temp();
        let mut e = iolab_testkit::need!(uring(&opts(8, 4096)));
        let f = e.open(&spec(&dir.path().join("min"), true, true)).unwrap();
        for slot in 0..8 {
            e.queue(&io(slot, f, Op::Write, u64::from(slot) * 4096, 4096))
                .unwrap();
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(3, usize::MAX, &mut out).unwrap();
        assert!(out.len() >= 3, "{out:?}");
        let rest = 8 - out.len();
        e.reap(rest, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        // Nothing in flight: min is capped, reap returns at once.
        e.reap(5, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn reap_submits_what_commit_did_not() {
        let dir = temp();
        let mut e = iolab_testkit::need!(uring(&opts(2, 4096)));
        let f = e
            .open(&spec(&dir.path().join("nocommit"), true, true))
            .unwrap();
        fill(e.as_mut(), 0, 0, 4096, 9);
        e.queue(&io(0, f, Op::Write, 0, 4096)).unwrap();
        e.queue(&io(1, f, Op::Fdatasync, 0, 0)).unwrap();
        let done = reap_all(e.as_mut(), 2);
        assert_eq!(done[0].result, Ok(4096));
        assert_eq!(done[1].result, Ok(0));
    }

    #[test]
    fn fsync_and_fdatasync_complete() {
        let dir = temp();
        let mut e = iolab_testkit::need!(uring(&opts(4, 4096)));
        let f = e
            .open(&spec(&dir.path().join("fsync"), true, true))
            .unwrap();
        fill(e.as_mut(), 0, 0, 4096, 1);
        e.queue(&io(0, f, Op::Write, 0, 4096)).unwrap();
        e.commit().unwrap();
        assert_eq!(reap_all(e.as_mut(), 1)[0].result, Ok(4096));
        e.queue(&io(1, f, Op::Fsync, 0, 0)).unwrap();
        e.queue(&io(2, f, Op::Fdatasync, 0, 0)).unwrap();
        e.commit().unwrap();
        for c in reap_all(e.as_mut(), 2) {
            assert_eq!(c.result, Ok(0), "{c:?}");
        }
    }

    #[test]
    fn errors_come_back_as_completions() {
        let dir = temp();
        let path = dir.path().join("wronly");
        let mut e = iolab_testkit::need!(uring(&opts(2, 4096)));
        let f = e.open(&spec(&path, false, true)).unwrap();
        e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap();
        // The batch goes on past the failing SQE.
        fill(e.as_mut(), 1, 0, 4096, 2);
        e.queue(&io(1, f, Op::Write, 0, 4096)).unwrap();
        e.commit().unwrap();
        let done = reap_all(e.as_mut(), 2);
        assert_eq!(done[0].result, Err(libc::EBADF), "read on a write-only fd");
        assert_eq!(done[1].result, Ok(4096));
        assert_eq!(std::fs::read(&path).unwrap()[4095], pattern_byte(2, 4095));
    }

    #[test]
    fn hipri_polls_o_direct_io() {
        let dir = temp();
        let o = EngineOpts {
            hipri: true,
            ..opts(2, 4096)
        };
        let mut e = iolab_testkit::need!(uring(&o));
        let path = dir.path().join("hipri");
        let err = e.open(&spec(&path, true, true)).unwrap_err();
        assert!(err.to_string().contains("direct=1"), "{err}");
        if !probe_o_direct(dir.path()).unwrap_or(false) {
            iolab_testkit::skip!("no O_DIRECT here");
        }
        let mut s = spec(&path, true, true);
        s.direct = true;
        let f = e.open(&s).unwrap();
        fill(e.as_mut(), 0, 0, 4096, 4);
        // A device without poll queues refuses polled I/O with EOPNOTSUPP
        // (ext4 may still complete an allocating write without polling).
        for (slot, op) in [(0, Op::Write), (1, Op::Read)] {
            e.buf(1).fill(0);
            e.queue(&io(slot, f, op, 0, 4096)).unwrap();
            e.commit().unwrap();
            match reap_all(e.as_mut(), 1)[0].result {
                Ok(n) => assert_eq!(n, 4096),
                Err(libc::EOPNOTSUPP) => {
                    iolab_testkit::skip!("the device does not poll");
                }
                Err(errno) => panic!("polled {op:?}: errno {errno}"),
            }
        }
        check(e.as_mut(), 1, 0, 4096, 4);
    }

    /// Without a registered ring descriptor (kernels before 5.18), each
    /// io_uring_enter names the ring by its descriptor, and the same I/O
    /// goes through.
    #[test]
    fn ring_named_by_descriptor_round_trip() {
        let mut e = match super::UringEngine::new(&opts(8, 8192)) {
            Ok(e) => e,
            Err(EngineError::Refused { errno, .. }) => {
                iolab_testkit::skip!("io_uring_setup refused, errno {errno}")
            }
            Err(e) => panic!("{e}"),
        };
        e.unregister_ring();
        assert_eq!(e.ring_index, None);
        let dir = temp();
        eight_in_flight_on(Box::new(e), &dir.path().join("by-fd"), false);
    }

    /// A file that takes no nonblocking I/O (a /proc file here, as a zram
    /// device or a tmpfs file) gets its SQEs marked IOSQE_ASYNC, and they
    /// complete as any other.
    #[test]
    fn files_without_nowait_go_to_the_workers_at_once() {
        let mut e = match super::UringEngine::new(&opts(2, 4096)) {
            Ok(e) => e,
            Err(EngineError::Refused { errno, .. }) => {
                iolab_testkit::skip!("io_uring_setup refused, errno {errno}")
            }
            Err(e) => panic!("{e}"),
        };
        let proc_version = Path::new("/proc/version");
        let want = std::fs::read(proc_version).unwrap();
        let f = e.open(&spec(proc_version, true, false)).unwrap();
        assert!(e.punted[f.0 as usize], "/proc/version takes RWF_NOWAIT?");
        // Written only: no probe, nothing marked.
        let dir = temp();
        let w = e.open(&spec(&dir.path().join("w"), false, true)).unwrap();
        assert!(!e.punted[w.0 as usize]);
        for slot in 0..2 {
            let q = e.queue(&io(slot, f, Op::Read, 0, 64)).unwrap();
            assert_eq!(q, Queued::InFlight);
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(2, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        for c in out {
            let n = c.result.unwrap() as usize;
            assert_eq!(n, want.len().min(64), "slot {}", c.slot);
            assert_eq!(&e.buf(c.slot)[..n], &want[..n]);
        }
    }

    /// io_uring's worker threads that serve the calling thread's ring
    /// (`iou-wrk-<tid>`).
    fn own_workers() -> usize {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let name = format!("iou-wrk-{tid}");
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|c| c.trim() == name)
            .count()
    }

    /// `force_async=3` marks every third SQE IOSQE_ASYNC, as fio counts
    /// them: buffered reads of a file in the page cache complete inline
    /// until the third, which a worker thread serves.
    #[test]
    fn force_async_hands_every_nth_io_to_the_workers() {
        let dir = temp();
        let path = dir.path().join("cached");
        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        // A thread of its own, so that no other ring's workers count.
        std::thread::spawn(move || {
            let o = EngineOpts {
                force_async: 3,
                ..opts(1, 4096)
            };
            let mut e = match super::UringEngine::new(&o) {
                Ok(e) => e,
                Err(EngineError::Refused { errno, .. }) => {
                    iolab_testkit::skip!("io_uring_setup refused, errno {errno}")
                }
                Err(e) => panic!("{e}"),
            };
            let f = e.open(&spec(&path, true, false)).unwrap();
            if e.punted[f.0 as usize] {
                iolab_testkit::skip!(
                    "{} takes no nonblocking reads: every SQE is marked",
                    dir.path().display()
                );
            }
            let mut workers = Vec::new();
            for _ in 0..3 {
                assert_eq!(
                    e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap(),
                    Queued::InFlight
                );
                e.commit().unwrap();
                let mut out = Vec::new();
                e.reap(1, usize::MAX, &mut out).unwrap();
                assert_eq!(out[0].result, Ok(4096));
                assert_eq!(e.buf(0)[..4096], [7u8; 4096]);
                workers.push(own_workers() > 0);
            }
            assert_eq!(workers, [false, false, true]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn sqpoll_round_trip() {
        let dir = temp();
        let o = EngineOpts {
            sqthread_poll: true,
            ..opts(8, 8192)
        };
        eight_in_flight(&o, &dir.path().join("sqpoll"), false);
    }

    #[test]
    fn dropping_with_io_in_flight_waits() {
        let dir = temp();
        let mut e = iolab_testkit::need!(uring(&opts(8, 65536)));
        let f = e.open(&spec(&dir.path().join("drop"), true, true)).unwrap();
        for slot in 0..8 {
            e.queue(&io(slot, f, Op::Write, u64::from(slot) << 16, 65536))
                .unwrap();
        }
        e.commit().unwrap();
        drop(e);
        assert_eq!(
            std::fs::metadata(dir.path().join("drop")).unwrap().len(),
            8 << 16
        );
    }

    #[test]
    fn refusal_names_engine_syscall_and_alternative() {
        let err = EngineError::Refused {
            engine: "io_uring",
            syscall: "io_uring_setup",
            errno: libc::EPERM,
            hint: super::SETUP_HINT,
        };
        let msg = err.to_string();
        for part in ["io_uring", "io_uring_setup", "EPERM", "ioengine=psync"] {
            assert!(msg.contains(part), "{msg}");
        }
    }
}
