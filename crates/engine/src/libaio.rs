//! fio's `libaio` engine: Linux kernel AIO (io_setup, io_submit,
//! io_getevents, io_destroy) through hand-written bindings, without the
//! libaio C library.
//!
//! One `iocb` per buffer slot, allocated with the engine; `queue` fills the
//! slot's iocb and adds it to the pending array, `commit` hands all pending
//! iocbs to the kernel in one io_submit, `reap` collects their events.
//! `submit_one` (the queued fast path's call per I/O) gives a lone read or
//! write to io_submit at once, without the pending array, and leaves what
//! the kernel does not take to `commit`'s handling. No allocation and no
//! lock per I/O.
//!
//! Two kernel facts shape what this engine measures:
//! - Kernel AIO is only asynchronous for O_DIRECT. A buffered (direct=0)
//!   read or write on a regular file is done inside io_submit, so every
//!   I/O has completed by the time `commit` returns and the queue depth is
//!   never really reached (the test `buffered_completes_inside_io_submit`
//!   shows it). fio behaves the same.
//! - fio's libaio does fsync synchronously (busy while I/O is queued); this
//!   engine submits `IOCB_CMD_FSYNC`/`IOCB_CMD_FDSYNC` instead, and falls
//!   back to fsync(2)/fdatasync(2) for good once the kernel refuses them
//!   with EINVAL (older kernels, some filesystems).
//!
//! Completions are read straight from the ring the kernel maps at the
//! context's address (`struct aio_ring`), as fio does with
//! `userspace_reap`: an I/O that has completed costs no io_getevents, and
//! io_getevents is called only to wait. A ring that does not look as
//! expected (magic, header length, features) turns this off.
//!
//! A per-iocb refusal of io_submit (EBADF for a write on a read-only file,
//! EINVAL) becomes a completion carrying the errno, as an error of one I/O
//! is everywhere else. Trim completes inside `queue`, as in the sync
//! engines (BLKDISCARD on a block device, EOPNOTSUPP on a file).

use std::ops::ControlFlow;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::rawsys;
use crate::syncbase::{last_errno, SyncBase};
use crate::{
    queue_and_commit, Caps, Completion, Engine, EngineError, EngineOpts, FileId, FileSpec, IoUnit,
    Op, Queued, SubmitError,
};

/// `aio_context_t`.
type AioContext = libc::c_ulong;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;

/// `struct iocb` of linux/aio_abi.h.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    #[cfg(target_endian = "little")]
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` of linux/aio_abi.h.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The header of the completion ring the kernel maps at the context's
/// address (`struct aio_ring` of fs/aio.c); `nr` events follow it. The
/// kernel writes events at `tail` and then moves `tail`; the reader takes
/// them from `head` and moves `head`. Both stay below `nr`.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

/// `AIO_RING_MAGIC`.
const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

/// How long io_submit may refuse every submission (EAGAIN) while nothing is
/// in flight before the job fails (fio's libaio engine waits as long).
const STALL_LIMIT: Duration = Duration::from_secs(30);

const _: () = assert!(std::mem::size_of::<AioRing>() == 32);
const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_lio_opcode) == 16);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_fildes) == 20);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_buf) == 24);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_offset) == 40);
const _: () = assert!(std::mem::offset_of!(Iocb, aio_flags) == 56);

pub(crate) struct LibaioEngine {
    ctx: AioContext,
    /// The context's completion ring, read without a system call; None
    /// when it is not laid out as this engine expects.
    ring: Option<NonNull<AioRing>>,
    /// Open files and buffers, shared with the sync engines.
    base: SyncBase,
    /// The iocb of each slot. Never resized, so pointers into it stay valid.
    iocbs: Vec<Iocb>,
    /// Queued iocbs not yet submitted (capacity `depth`).
    pending: Vec<*mut Iocb>,
    /// Completions known before any event: iocbs io_submit refused, and
    /// syncs done synchronously after the kernel refused them (capacity
    /// `depth`).
    ready: Vec<Completion>,
    /// Event buffer for io_getevents (`depth` long).
    events: Vec<IoEvent>,
    /// Submitted and not yet reaped.
    in_flight: usize,
    depth: usize,
    /// The kernel refused an AIO fsync/fdatasync with EINVAL: do them with
    /// fsync(2)/fdatasync(2) inside `queue` from now on.
    sync_fallback: bool,
    /// How long `commit` and `submit_one` go on submitting while
    /// io_submit says EAGAIN and nothing is in flight (fio gives up after
    /// 30 s, as here).
    stall_limit: Duration,
    /// Tests: the next this many io_submit calls are taken as EAGAIN.
    #[cfg(test)]
    refuse_submits: u32,
}

// SAFETY: the raw pointers in `pending` point into `iocbs`, which the engine
// owns; nothing else holds them, so the engine may move to another thread.
// The AIO context is a plain number usable from any thread, and its ring is
// mapped into the process, read only by the thread that owns the engine.
unsafe impl Send for LibaioEngine {}

impl LibaioEngine {
    pub fn new(opts: &EngineOpts) -> Result<Self, EngineError> {
        let depth = usize::try_from(opts.iodepth.max(1)).unwrap_or(1);
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes one aio_context_t through the pointer,
        // which points at `ctx`, live across the call.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                libc::c_long::from(opts.iodepth.max(1)),
                &mut ctx as *mut AioContext,
            )
        };
        if rc != 0 {
            let errno = last_errno();
            return Err(EngineError::Refused {
                engine: "libaio",
                syscall: "io_setup",
                errno,
                hint: if errno == libc::EAGAIN {
                    "the system's AIO events (sysctl fs.aio-max-nr) are used up: \
                     raise fs.aio-max-nr, lower iodepth, or use ioengine=psync instead"
                } else {
                    "use ioengine=psync instead"
                },
            });
        }
        // From here on, Drop destroys the context whatever fails next.
        let mut engine = Self {
            ctx,
            ring: completion_ring(ctx),
            base: SyncBase::new(&EngineOpts {
                iodepth: opts.iodepth.max(1),
                ..*opts
            })?,
            iocbs: Vec::new(),
            pending: Vec::new(),
            ready: Vec::new(),
            events: Vec::new(),
            in_flight: 0,
            depth,
            sync_fallback: false,
            stall_limit: STALL_LIMIT,
            #[cfg(test)]
            refuse_submits: 0,
        };
        engine.iocbs = vec![Iocb::default(); depth];
        engine.pending = Vec::with_capacity(depth);
        engine.ready = Vec::with_capacity(depth);
        engine.events = vec![IoEvent::default(); depth];
        Ok(engine)
    }

    /// Tests: whether this io_submit is to be taken as EAGAIN.
    #[cfg(test)]
    fn refused_here(&mut self) -> bool {
        let refuse = self.refuse_submits > 0;
        self.refuse_submits = self.refuse_submits.saturating_sub(1);
        refuse
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn refused_here(&mut self) -> bool {
        false
    }

    /// io_submit said EAGAIN (the kernel is out of AIO resources for now).
    /// With I/Os in flight, their completions free what the next submission
    /// needs, so the rest stays pending until then: Break. With none, no
    /// completion would ever come and `reap` would find nothing to wait
    /// for: Continue after a short pause, as fio does, until the kernel
    /// takes them or `stall_limit` has passed since `since`, the first
    /// refusal (an error).
    #[cold]
    fn out_of_resources(
        &self,
        since: &mut Option<Instant>,
    ) -> Result<ControlFlow<()>, EngineError> {
        if self.in_flight > 0 {
            return Ok(ControlFlow::Break(()));
        }
        let first = *since.get_or_insert_with(Instant::now);
        if first.elapsed() >= self.stall_limit {
            return Err(EngineError::Refused {
                engine: "libaio",
                syscall: "io_submit",
                errno: libc::EAGAIN,
                hint: "with nothing in flight it refused every submission for 30 s: \
                       the system's AIO resources are used up (sysctl fs.aio-max-nr, \
                       other processes' AIO); lower iodepth or numjobs, or use \
                       ioengine=psync instead",
            });
        }
        std::thread::sleep(Duration::from_micros(1));
        Ok(ControlFlow::Continue(()))
    }

    /// `queue` for a trim, an fsync or an fdatasync.
    #[cold]
    #[inline(never)]
    fn queue_aside(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        if io.op != Op::Trim && io.slot as usize >= self.depth {
            return Err(EngineError::BadUnit {
                slot: io.slot,
                len: io.len,
                slots: self.base.bufs.slots(),
                size: self.base.bufs.size(),
            });
        }
        if io.op == Op::Trim || self.sync_fallback {
            return Ok(Queued::Completed(Completion {
                slot: io.slot,
                result: self.base.no_data(io)?,
            }));
        }
        let fd = self.base.files.get_mut(io.file)?.raw();
        let opcode = if io.op == Op::Fsync {
            IOCB_CMD_FSYNC
        } else {
            IOCB_CMD_FDSYNC
        };
        let iocb = self.place_iocb(io, opcode, fd, 0, 0);
        Ok(self.pend(io, iocb))
    }

    /// The iocb of a read or write, placed (see `place_iocb`).
    #[inline(always)]
    fn data_iocb(&mut self, io: &IoUnit) -> Result<Option<*mut Iocb>, EngineError> {
        let (file, buf) = self.base.unit(io)?;
        let opcode = if io.op == Op::Read {
            IOCB_CMD_PREAD
        } else {
            IOCB_CMD_PWRITE
        };
        let (fd, buf, nbytes) = (file.raw(), buf.as_mut_ptr() as u64, buf.len() as u64);
        Ok(self.place_iocb(io, opcode, fd, buf, nbytes))
    }

    /// Writes the iocb of `io` into its slot's place and points at it;
    /// None when it is not to go in flight (`not_placed` says what it is).
    /// The slot is below `depth`.
    #[inline(always)]
    fn place_iocb(
        &mut self,
        io: &IoUnit,
        opcode: u16,
        fd: libc::c_int,
        buf: u64,
        nbytes: u64,
    ) -> Option<*mut Iocb> {
        let offset = i64::try_from(io.offset).ok()?;
        if self.outstanding() >= self.depth {
            return None;
        }
        let slot = io.slot as usize;
        self.iocbs[slot] = Iocb {
            aio_data: u64::from(io.slot),
            aio_lio_opcode: opcode,
            aio_fildes: fd as u32,
            aio_buf: buf,
            aio_nbytes: nbytes,
            aio_offset: offset,
            ..Iocb::default()
        };
        Some(&mut self.iocbs[slot] as *mut Iocb)
    }

    /// A placed iocb added to those `commit` submits.
    #[inline(always)]
    fn pend(&mut self, io: &IoUnit, iocb: Option<*mut Iocb>) -> Queued {
        let Some(iocb) = iocb else {
            return not_placed(io);
        };
        debug_assert!(
            !self.pending.contains(&iocb),
            "slot {} queued twice before commit",
            io.slot
        );
        // Within capacity: outstanding() < depth (place_iocb).
        self.pending.push(iocb);
        Queued::InFlight
    }

    /// Submits the pending iocbs, as many calls as the kernel takes them
    /// in; `first` is the result of an io_submit of all of them that
    /// `submit_one` made already.
    #[inline(never)]
    fn submit_pending(&mut self, mut first: Option<Result<usize, i32>>) -> Result<(), EngineError> {
        let mut done = 0;
        let mut refused_since = None;
        while done < self.pending.len() {
            let n = self.pending.len() - done;
            let rc = if let Some(rc) = first.take() {
                rc
            } else if self.refused_here() {
                Err(libc::EAGAIN)
            } else {
                // The call is the `syscall` instruction itself (rawsys).
                // SAFETY: the array holds `n` valid pointers to initialized
                // iocbs in `self.iocbs` (live as long as the engine); the
                // buffers they name are slots of `self.base.bufs`, which
                // outlive the I/O because Drop destroys the context (waiting
                // for it) before the fields are dropped.
                unsafe { rawsys::io_submit(self.ctx, n, self.pending.as_mut_ptr().add(done)) }
            };
            let errno = match rc {
                Ok(0) => libc::EAGAIN,
                Ok(rc) => {
                    done += rc;
                    self.in_flight += rc;
                    continue;
                }
                Err(errno) => errno,
            };
            match errno {
                libc::EAGAIN => match self.out_of_resources(&mut refused_since) {
                    Ok(ControlFlow::Break(())) => break,
                    Ok(ControlFlow::Continue(())) => continue,
                    Err(e) => {
                        // Nothing is in flight: the refused I/Os complete
                        // with EAGAIN, so that `reap` still hands back
                        // every I/O queued, and the error ends the job.
                        for &iocb in &self.pending[done..] {
                            // SAFETY: the pointer points into `self.iocbs`.
                            let slot = unsafe { (*iocb).aio_data } as u32;
                            // Within capacity, as above.
                            self.ready.push(Completion {
                                slot,
                                result: Err(libc::EAGAIN),
                            });
                        }
                        self.pending.clear();
                        return Err(e);
                    }
                },
                libc::EINTR => continue,
                _ => {
                    // The kernel refused the first iocb left: it becomes a
                    // completion with the errno.
                    // SAFETY: the pointer points into `self.iocbs` (above).
                    let iocb = unsafe { *self.pending[done] };
                    let is_sync = matches!(iocb.aio_lio_opcode, IOCB_CMD_FSYNC | IOCB_CMD_FDSYNC);
                    let result = if is_sync && errno == libc::EINVAL {
                        self.sync_fallback = true;
                        sync_now(
                            iocb.aio_fildes as libc::c_int,
                            iocb.aio_lio_opcode == IOCB_CMD_FDSYNC,
                        )
                    } else {
                        Err(errno)
                    };
                    // Within capacity: every queued I/O counts in
                    // outstanding(), which stays at most `depth`.
                    self.ready.push(Completion {
                        slot: iocb.aio_data as u32,
                        result,
                    });
                    done += 1;
                }
            }
        }
        // Shifts the rest (if any) down in place; no allocation.
        self.pending.drain(..done);
        Ok(())
    }

    /// `submit_one` for an I/O that goes the general way: a sync, a trim,
    /// or one queued behind others not yet submitted.
    #[cold]
    #[inline(never)]
    fn submit_one_aside(&mut self, io: &IoUnit) -> Result<Queued, SubmitError> {
        queue_and_commit(self, io)
    }

    /// Submits the I/Os an earlier `commit` or `submit_one` left pending (io_submit said
    /// EAGAIN while others were in flight) once none is: no completion is
    /// left to wait for, so `reap` would otherwise give nothing for ever.
    #[cold]
    #[inline(never)]
    fn commit_left(&mut self) -> Result<(), EngineError> {
        self.commit()
    }

    /// I/Os queued and not yet handed back by `reap`.
    #[inline]
    fn outstanding(&self) -> usize {
        self.in_flight + self.pending.len() + self.ready.len()
    }

    /// Moves the first `n` events of the event buffer to `out`.
    #[inline]
    fn take_events(&mut self, n: usize, out: &mut Vec<Completion>) {
        out.extend(self.events[..n].iter().map(completion));
        self.in_flight -= n;
    }

    /// Moves up to `room` events from the completion ring to `out`, with
    /// no system call; returns how many.
    #[inline]
    fn take_ring(&mut self, room: usize, out: &mut Vec<Completion>) -> usize {
        let mut n = 0;
        while n < room {
            let Some(c) = self.ring_next() else { break };
            out.push(c);
            n += 1;
        }
        n
    }

    /// The next event of the completion ring, with no system call; None
    /// when the ring is empty or not readable (then `ring` is None for
    /// good).
    #[inline]
    fn ring_next(&mut self) -> Option<Completion> {
        let ring = self.ring?;
        // SAFETY: `ring` points at the header of the context's ring, mapped
        // until io_destroy in Drop; `completion_ring` checked its layout.
        let hdr = unsafe { ring.as_ref() };
        // Acquire: the kernel writes an event before it moves `tail`.
        let tail = hdr.tail.load(Ordering::Acquire);
        let head = hdr.head.load(Ordering::Relaxed);
        if head >= hdr.nr || tail >= hdr.nr {
            self.ring = None;
            return None;
        }
        if head == tail {
            return None;
        }
        // SAFETY: the `nr` events follow the 32-byte header in the mapping;
        // `head` < `nr`, and the event at `head` was completely written
        // before `tail` moved past it (the Acquire above).
        let ev = unsafe {
            ring.as_ptr()
                .add(1)
                .cast::<IoEvent>()
                .add(head as usize)
                .read()
        };
        let next = if head + 1 == hdr.nr { 0 } else { head + 1 };
        // Release: the event is read before the kernel may reuse its entry.
        hdr.head.store(next, Ordering::Release);
        self.in_flight -= 1;
        Some(completion(&ev))
    }

    /// io_getevents for at least `want` and at most `room` events into the
    /// event buffer (`want` 0: what there is, without waiting); how many
    /// came. `room` is at most `in_flight`.
    fn get_events(&mut self, want: usize, room: usize) -> Result<usize, EngineError> {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let timeout: *const libc::timespec = if want == 0 { &zero } else { std::ptr::null() };
        // SAFETY: `events` holds `depth` >= in_flight >= room writable
        // events; `timeout` is null or points at `zero`, live across the
        // call.
        let rc = unsafe {
            rawsys::io_getevents(self.ctx, want, room, self.events.as_mut_ptr(), timeout)
        };
        match rc {
            Ok(n) => Ok(n),
            Err(libc::EINTR) => Ok(0),
            Err(errno) => Err(EngineError::Refused {
                engine: "libaio",
                syscall: "io_getevents",
                errno,
                hint: "use ioengine=psync instead",
            }),
        }
    }
}

/// What `queue` says of an I/O whose iocb was not placed: an offset
/// past i64 (which the kernel would take for "at the file position")
/// fails with EINVAL; else the queue is full.
#[cold]
fn not_placed(io: &IoUnit) -> Queued {
    if i64::try_from(io.offset).is_err() {
        Queued::Completed(Completion {
            slot: io.slot,
            result: Err(libc::EINVAL),
        })
    } else {
        Queued::Busy
    }
}

/// An event as a completion: the slot and the byte count or errno.
#[inline]
fn completion(ev: &IoEvent) -> Completion {
    let result = if ev.res >= 0 {
        Ok(u32::try_from(ev.res).unwrap_or(u32::MAX))
    } else {
        Err(i32::try_from(-ev.res).unwrap_or(libc::EIO))
    };
    Completion {
        slot: ev.data as u32,
        result,
    }
}

/// The completion ring of `ctx`: the kernel maps it at the address the
/// context's number is. None unless its header is what this engine reads
/// (the magic, a 32-byte header, no incompatible features).
fn completion_ring(ctx: AioContext) -> Option<NonNull<AioRing>> {
    let ring = NonNull::new(ctx as *mut AioRing)?;
    // SAFETY: io_setup returned `ctx`, the address of the ring's mapping,
    // which is at least a page long and lives until io_destroy.
    let hdr = unsafe { ring.as_ref() };
    let ok = hdr.magic == AIO_RING_MAGIC
        && hdr.header_length as usize == std::mem::size_of::<AioRing>()
        && hdr.incompat_features == 0
        && hdr.nr > 0;
    ok.then_some(ring)
}

/// fsync(2) or fdatasync(2) of `fd` as a completion result.
fn sync_now(fd: libc::c_int, data_only: bool) -> Result<u32, i32> {
    let rc = if data_only {
        // SAFETY: fdatasync takes no pointers; a bad fd is an error return.
        unsafe { libc::fdatasync(fd) }
    } else {
        // SAFETY: as fdatasync.
        unsafe { libc::fsync(fd) }
    };
    if rc == 0 {
        Ok(0)
    } else {
        Err(last_errno())
    }
}

impl Engine for LibaioEngine {
    fn name(&self) -> &'static str {
        "libaio"
    }

    fn caps(&self) -> Caps {
        Caps {
            sync: false,
            needs_buffers: true,
            vectored: false,
        }
    }

    fn open(&mut self, file: &FileSpec) -> Result<FileId, EngineError> {
        self.base.open(file)
    }

    fn close(&mut self, file: FileId) -> Result<(), EngineError> {
        self.base.close(file)
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> Result<Queued, EngineError> {
        let iocb = match io.op {
            Op::Read | Op::Write => self.data_iocb(io)?,
            Op::Trim | Op::Fsync | Op::Fdatasync => return self.queue_aside(io),
        };
        Ok(self.pend(io, iocb))
    }

    fn commit(&mut self) -> Result<(), EngineError> {
        self.submit_pending(None)
    }

    /// A read or write submitted on its own when nothing else is pending
    /// (the queued fast path's every I/O): the iocb goes to io_submit
    /// without the pending list; what the kernel does not take at once
    /// goes the way of `commit`.
    #[inline]
    fn submit_one(&mut self, io: &IoUnit) -> Result<Queued, SubmitError> {
        if !self.pending.is_empty() || !matches!(io.op, Op::Read | Op::Write) {
            return self.submit_one_aside(io);
        }
        let placed = self.data_iocb(io).map_err(|error| SubmitError {
            error,
            queued: false,
        })?;
        let Some(mut iocb) = placed else {
            return Ok(not_placed(io));
        };
        let rc = if self.refused_here() {
            Err(libc::EAGAIN)
        } else {
            // SAFETY: `&mut iocb` is an array of one pointer, live across
            // the call, to an initialized iocb in `self.iocbs` naming a
            // slot of `self.base.bufs`; the rest as in `submit_pending`
            // (the buffer outlives the I/O).
            unsafe { rawsys::io_submit(self.ctx, 1, &mut iocb) }
        };
        if rc == Ok(1) {
            self.in_flight += 1;
            return Ok(Queued::InFlight);
        }
        // Within capacity: outstanding() < depth (place_iocb).
        self.pending.push(iocb);
        self.submit_pending(Some(rc))
            .map(|()| Queued::InFlight)
            .map_err(|error| SubmitError {
                error,
                queued: true,
            })
    }

    fn reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let max = max.max(min).max(1);
        if self.in_flight == 0 && !self.pending.is_empty() {
            self.commit_left()?;
        }
        // Completions that finished inside `queue`, `commit` or
        // `submit_one` go first.
        let from_ready = self.ready.len().min(max);
        out.extend(self.ready.drain(..from_ready));
        let mut got = from_ready;
        loop {
            if self.in_flight == 0 || got >= max {
                return Ok(());
            }
            got += self.take_ring((max - got).min(self.in_flight), out);
            if got >= min && (got >= max || self.ring.is_some()) {
                // The ring holds every completion there is: nothing more
                // to collect without waiting.
                return Ok(());
            }
            if self.in_flight == 0 {
                return Ok(());
            }
            let want = min.saturating_sub(got).min(self.in_flight);
            let room = (max - got).min(self.in_flight);
            // Nothing more is required (want 0): collect what is there,
            // without waiting. A signal that interrupts the wait gives 0:
            // the loop looks at the ring again and waits again.
            let n = self.get_events(want, room)?;
            self.take_events(n, out);
            got += n;
            if got >= min || want == 0 {
                return Ok(());
            }
        }
    }

    fn reap_one(&mut self) -> Result<Option<Completion>, EngineError> {
        if self.in_flight == 0 && !self.pending.is_empty() {
            self.commit_left()?;
        }
        // Completions that finished inside `queue`, `commit` or
        // `submit_one` go first.
        if !self.ready.is_empty() {
            return Ok(Some(self.ready.remove(0)));
        }
        loop {
            if self.in_flight == 0 {
                return Ok(None);
            }
            if let Some(c) = self.ring_next() {
                return Ok(Some(c));
            }
            if self.get_events(1, 1)? == 1 {
                self.in_flight -= 1;
                return Ok(Some(completion(&self.events[0])));
            }
        }
    }

    fn buf(&mut self, slot: u32) -> &mut [u8] {
        self.base.buf(slot)
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // SAFETY: `ctx` came from io_setup and is destroyed once, here.
        // io_destroy waits for the I/O in flight, so the buffers and iocbs
        // (dropped after this) are no longer used by the kernel.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{fs_type, probe_o_direct, FsType};
    use crate::testutil::{check, fill, io, opts, pattern_byte, spec, temp};
    use crate::{create_named, testutil};
    use std::path::Path;

    #[test]
    fn engine_contract() {
        testutil::engine_contract("libaio");
    }

    #[test]
    fn caps_say_asynchronous() {
        let e = create_named("libaio", &opts(4, 4096)).unwrap();
        assert_eq!(e.name(), "libaio");
        let caps = e.caps();
        assert!(!caps.sync && caps.needs_buffers && !caps.vectored);
    }

    #[test]
    fn io_setup_refusal_is_refused_error() {
        // More events than any kernel takes (EINVAL or EAGAIN); zero-byte
        // buffers, so nothing big is allocated.
        let err = create_named("libaio", &opts(u32::MAX / 2, 0))
            .err()
            .expect("io_setup of 2^31 events");
        let msg = err.to_string();
        assert!(msg.contains("libaio") && msg.contains("io_setup"), "{msg}");
        match err {
            EngineError::Refused {
                engine: "libaio",
                syscall: "io_setup",
                errno,
                ..
            } => assert!(errno == libc::EINVAL || errno == libc::EAGAIN, "{errno}"),
            other => panic!("{other}"),
        }
    }

    /// A libaio engine of depth 2 reading `path`, whose first 8 KiB hold
    /// the pattern of seed 0x5a.
    fn refusing_engine(path: &Path) -> (LibaioEngine, FileId) {
        let data: Vec<u8> = (0..2 * u64::from(BS))
            .map(|at| pattern_byte(0x5a, at))
            .collect();
        std::fs::write(path, data).expect("write the file");
        let mut e = LibaioEngine::new(&opts(2, BS as usize)).expect("libaio engine");
        let f = e.open(&spec(path, true, false)).expect("open");
        (e, f)
    }

    #[test]
    fn a_submission_refused_with_nothing_in_flight_is_made_again() {
        // io_submit's EAGAIN (the kernel out of AIO resources) with no I/O
        // in flight: no completion will come to make room, so commit goes
        // on submitting (fio waits likewise) and the read completes.
        let dir = temp();
        let (mut e, f) = refusing_engine(&dir.path().join("again"));
        e.refuse_submits = 3;
        assert_eq!(
            e.queue(&io(0, f, Op::Read, 0, BS)).expect("queue"),
            Queued::InFlight
        );
        e.commit().expect("commit after three refusals");
        assert_eq!(e.refuse_submits, 0, "all three refusals were seen");
        let c = e.reap_one().expect("reap").expect("the read in flight");
        assert_eq!((c.slot, c.result), (0, Ok(BS)));
        check(&mut e, 0, 0, BS as usize, 0x5a);
        assert_eq!(e.reap_one().expect("reap"), None);
    }

    #[test]
    fn a_submission_left_pending_goes_when_nothing_else_is_in_flight() {
        // Refused while another read is in flight, the second read stays
        // pending (the first one's completion frees room). Once that is
        // reaped, reap_one and reap submit it rather than find nothing
        // in flight and give nothing for ever.
        let dir = temp();
        let (mut e, f) = refusing_engine(&dir.path().join("left"));
        for reap_with_vector in [false, true] {
            assert_eq!(
                e.queue(&io(0, f, Op::Read, 0, BS)).expect("queue"),
                Queued::InFlight
            );
            e.commit().expect("first commit");
            e.refuse_submits = 1;
            assert_eq!(
                e.queue(&io(1, f, Op::Read, u64::from(BS), BS))
                    .expect("queue"),
                Queued::InFlight
            );
            e.commit().expect("refused commit");
            assert_eq!(e.refuse_submits, 0);
            assert_eq!(
                (e.in_flight, e.pending.len()),
                (1, 1),
                "one in flight, one pending"
            );
            let mut got = Vec::new();
            for _ in 0..2 {
                let c = if reap_with_vector {
                    let mut out = Vec::new();
                    e.reap(1, 1, &mut out).expect("reap");
                    assert_eq!(out.len(), 1, "reap(1, 1) gives one");
                    out[0]
                } else {
                    e.reap_one().expect("reap_one").expect("a completion")
                };
                got.push((c.slot, c.result));
            }
            got.sort_unstable();
            assert_eq!(got, [(0, Ok(BS)), (1, Ok(BS))]);
            check(&mut e, 1, u64::from(BS), BS as usize, 0x5a);
            assert_eq!(e.outstanding(), 0);
        }
    }

    #[test]
    fn submissions_refused_for_the_stall_limit_fail_the_commit() {
        let dir = temp();
        let (mut e, f) = refusing_engine(&dir.path().join("stall"));
        e.stall_limit = Duration::from_millis(20);
        e.refuse_submits = u32::MAX;
        assert_eq!(
            e.queue(&io(0, f, Op::Read, 0, BS)).expect("queue"),
            Queued::InFlight
        );
        let err = e.commit().expect_err("refused for longer than the limit");
        assert!(
            matches!(
                err,
                EngineError::Refused {
                    engine: "libaio",
                    syscall: "io_submit",
                    errno: libc::EAGAIN,
                    ..
                }
            ),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("EAGAIN") && msg.contains("nothing in flight"),
            "{msg}"
        );
        // The read is still handed back, failed with EAGAIN.
        assert_eq!(e.outstanding(), 1);
        let c = e.reap_one().expect("reap").expect("the refused read");
        assert_eq!((c.slot, c.result), (0, Err(libc::EAGAIN)));
        assert_eq!(e.reap_one().expect("reap"), None);
    }

    #[test]
    fn submit_one_submits_a_read_or_write_alone_and_says_what_it_did() {
        let dir = temp();
        let (mut e, f) = refusing_engine(&dir.path().join("one"));
        // A read goes in flight by one io_submit of its own.
        assert_eq!(
            e.submit_one(&io(0, f, Op::Read, u64::from(BS), BS))
                .expect("submit"),
            Queued::InFlight
        );
        assert_eq!((e.in_flight, e.pending.len()), (1, 0));
        // Refused three times with the other read in flight: it stays
        // pending, and goes when reap finds nothing else in flight.
        e.refuse_submits = 3;
        assert_eq!(
            e.submit_one(&io(1, f, Op::Read, 0, BS)).expect("submit"),
            Queued::InFlight
        );
        assert_eq!((e.in_flight, e.pending.len(), e.refuse_submits), (1, 1, 2));
        // With one pending, the next goes the way of queue and commit:
        // the queue is full.
        assert_eq!(
            e.submit_one(&io(1, f, Op::Read, 0, BS)).expect("submit"),
            Queued::Busy
        );
        let mut got = Vec::new();
        while let Some(c) = e.reap_one().expect("reap") {
            got.push((c.slot, c.result));
        }
        got.sort_unstable();
        assert_eq!(got, [(0, Ok(BS)), (1, Ok(BS))]);
        assert_eq!(e.refuse_submits, 0, "the pending read was submitted again");
        check(&mut e, 0, u64::from(BS), BS as usize, 0x5a);
        check(&mut e, 1, 0, BS as usize, 0x5a);
        // Refused with nothing in flight, the read is submitted again at
        // once, as commit does.
        e.refuse_submits = 2;
        assert_eq!(
            e.submit_one(&io(0, f, Op::Read, 0, BS)).expect("submit"),
            Queued::InFlight
        );
        assert_eq!((e.in_flight, e.pending.len(), e.refuse_submits), (1, 0, 0));
        // Full: two in flight.
        assert_eq!(
            e.submit_one(&io(1, f, Op::Read, 0, BS)).expect("submit"),
            Queued::InFlight
        );
        assert_eq!(
            e.submit_one(&io(1, f, Op::Read, 0, BS)).expect("submit"),
            Queued::Busy
        );
        while e.reap_one().expect("reap").is_some() {}
        // An offset the kernel would take for "at the file position".
        assert_eq!(
            e.submit_one(&io(0, f, Op::Read, 1 << 63, BS))
                .expect("submit"),
            Queued::Completed(Completion {
                slot: 0,
                result: Err(libc::EINVAL)
            })
        );
        // A slot beyond the buffers is refused before it is queued.
        let err = e
            .submit_one(&io(2, f, Op::Read, 0, BS))
            .expect_err("no slot 2");
        assert!(!err.queued, "{err:?}");
        assert!(
            matches!(err.error, EngineError::BadUnit { slot: 2, .. }),
            "{err:?}"
        );
        // A sync goes through queue and commit.
        assert_eq!(
            e.submit_one(&io(1, f, Op::Fsync, 0, 0)).expect("submit"),
            Queued::InFlight
        );
        let c = e.reap_one().expect("reap").expect("the fsync");
        assert_eq!((c.slot, c.result), (1, Ok(0)));
        assert_eq!(e.outstanding(), 0);
    }

    #[test]
    fn submit_one_behind_a_pending_read_submits_both() {
        // Depth 3: a read in flight, one refused while it is (pending);
        // a third read by submit_one is queued behind the pending one,
        // and one commit gives both to the kernel.
        let dir = temp();
        let path = dir.path().join("behind");
        let data: Vec<u8> = (0..3 * u64::from(BS))
            .map(|at| pattern_byte(0x3c, at))
            .collect();
        std::fs::write(&path, data).expect("write the file");
        let mut e = LibaioEngine::new(&opts(3, BS as usize)).expect("libaio engine");
        let f = e.open(&spec(&path, true, false)).expect("open");
        assert_eq!(
            e.submit_one(&io(0, f, Op::Read, 0, BS)).expect("submit"),
            Queued::InFlight
        );
        e.refuse_submits = 1;
        assert_eq!(
            e.submit_one(&io(1, f, Op::Read, u64::from(BS), BS))
                .expect("submit"),
            Queued::InFlight
        );
        assert_eq!((e.in_flight, e.pending.len()), (1, 1));
        assert_eq!(
            e.submit_one(&io(2, f, Op::Read, 2 * u64::from(BS), BS))
                .expect("submit"),
            Queued::InFlight
        );
        assert_eq!((e.in_flight, e.pending.len()), (3, 0), "both submitted");
        let mut got = Vec::new();
        while let Some(c) = e.reap_one().expect("reap") {
            got.push((c.slot, c.result));
        }
        got.sort_unstable();
        assert_eq!(got, [(0, Ok(BS)), (1, Ok(BS)), (2, Ok(BS))]);
        for slot in 0..3 {
            check(&mut e, slot, u64::from(slot * BS), BS as usize, 0x3c);
        }
    }

    #[test]
    fn submit_one_hands_back_what_the_kernel_refused() {
        let dir = temp();
        let path = dir.path().join("ro");
        std::fs::write(&path, vec![1u8; 8192]).expect("write the file");
        let mut e = LibaioEngine::new(&opts(2, BS as usize)).expect("libaio engine");
        let f = e.open(&spec(&path, true, false)).expect("open");
        // io_submit refuses a write to a file open for reading: the write
        // completes with the errno.
        assert_eq!(
            e.submit_one(&io(0, f, Op::Write, 0, BS)).expect("submit"),
            Queued::InFlight
        );
        let c = e.reap_one().expect("reap").expect("the write");
        assert_eq!((c.slot, c.result), (0, Err(libc::EBADF)));
        // Refused for longer than the stall limit with nothing in flight:
        // an error that says the read was queued, and reap hands it back.
        e.stall_limit = Duration::from_millis(20);
        e.refuse_submits = u32::MAX;
        let err = e
            .submit_one(&io(1, f, Op::Read, 0, BS))
            .expect_err("refused for longer than the limit");
        assert!(err.queued, "{err:?}");
        assert!(
            matches!(
                err.error,
                EngineError::Refused {
                    syscall: "io_submit",
                    errno: libc::EAGAIN,
                    ..
                }
            ),
            "{err:?}"
        );
        let c = e.reap_one().expect("reap").expect("the refused read");
        assert_eq!((c.slot, c.result), (1, Err(libc::EAGAIN)));
        assert_eq!(e.reap_one().expect("reap"), None);
    }

    const BS: u32 = 4096;

    /// Offsets of the 8 I/Os: out of order, with gaps.
    const OFFSETS: [u64; 8] = [0, 65536, 8192, 4096, 1 << 20, 12288, 32768, 200704];

    /// Opens `path` on a fresh engine of depth 8.
    fn engine(path: &Path, write: bool, direct: bool) -> (Box<dyn Engine>, FileId) {
        let mut e = create_named("libaio", &opts(8, BS as usize)).unwrap();
        let mut s = spec(path, true, write);
        s.direct = direct;
        let f = e.open(&s).unwrap();
        (e, f)
    }

    /// Queues one I/O per slot, commits once, and returns what is ready
    /// at once without waiting.
    fn submit_all(e: &mut dyn Engine, f: FileId, op: Op) -> Vec<Completion> {
        for (slot, &off) in OFFSETS.iter().enumerate() {
            let q = e.queue(&io(slot as u32, f, op, off, BS)).unwrap();
            assert_eq!(q, Queued::InFlight, "slot {slot}");
        }
        e.commit().unwrap();
        let mut out = Vec::with_capacity(8);
        e.reap(0, usize::MAX, &mut out).unwrap();
        out
    }

    /// Reaps the rest of 8 and checks every slot completed in full.
    fn finish(e: &mut dyn Engine, mut out: Vec<Completion>) {
        let n = out.len();
        e.reap(8 - n, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..8).collect::<Vec<_>>());
        for c in &out {
            assert_eq!(c.result, Ok(BS), "slot {}", c.slot);
        }
    }

    fn pattern_8_in_flight(dir: &Path, direct: bool) {
        let path = dir.join(format!("eight.{direct}"));
        let (mut e, f) = engine(&path, true, direct);
        for (slot, &off) in OFFSETS.iter().enumerate() {
            fill(e.as_mut(), slot as u32, off, BS as usize, 0x33);
        }
        let early = submit_all(e.as_mut(), f, Op::Write);
        finish(e.as_mut(), early);
        e.close(f).unwrap();

        let (mut e, f) = engine(&path, false, direct);
        for slot in 0..8 {
            e.buf(slot).fill(0);
        }
        let early = submit_all(e.as_mut(), f, Op::Read);
        finish(e.as_mut(), early);
        for (slot, &off) in OFFSETS.iter().enumerate() {
            check(e.as_mut(), slot as u32, off, BS as usize, 0x33);
        }
        // And psync reads what libaio wrote.
        let mut p = create_named("psync", &opts(1, BS as usize)).unwrap();
        let pf = p.open(&spec(&path, true, false)).unwrap();
        for &off in &OFFSETS {
            assert_eq!(
                testutil::run(p.as_mut(), io(0, pf, Op::Read, off, BS)).result,
                Ok(BS)
            );
            check(p.as_mut(), 0, off, BS as usize, 0x33);
        }
    }

    #[test]
    fn eight_in_flight_buffered() {
        pattern_8_in_flight(temp().path(), false);
    }

    #[test]
    fn eight_in_flight_direct() {
        let dir = temp();
        if !probe_o_direct(dir.path()).unwrap_or(false) {
            iolab_testkit::skip!("{} does not take O_DIRECT", dir.path().display());
        }
        pattern_8_in_flight(dir.path(), true);
    }

    #[test]
    fn busy_beyond_iodepth_and_reap_min() {
        let dir = temp();
        let path = dir.path().join("busy");
        std::fs::write(&path, vec![5u8; 64 << 10]).unwrap();
        let mut e = create_named("libaio", &opts(4, 4096)).unwrap();
        let f = e.open(&spec(&path, true, false)).unwrap();
        for slot in 0..4 {
            assert_eq!(
                e.queue(&io(slot, f, Op::Read, u64::from(slot) * 4096, 4096))
                    .unwrap(),
                Queued::InFlight
            );
        }
        // Pending (not yet submitted) I/Os count.
        assert_eq!(e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap(), Queued::Busy);
        e.commit().unwrap();
        // And submitted ones, until reaped.
        assert_eq!(e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap(), Queued::Busy);
        let mut out = Vec::new();
        e.reap(3, usize::MAX, &mut out).unwrap();
        assert!(out.len() >= 3, "{out:?}");
        let n = out.len();
        e.reap(4 - n, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|c| c.result == Ok(4096)));
        // All reaped: room again, and reap with nothing in flight returns.
        e.reap(1, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        assert_eq!(
            e.queue(&io(0, f, Op::Read, 0, 4096)).unwrap(),
            Queued::InFlight
        );
        e.commit().unwrap();
        out.clear();
        e.reap(1, usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert!(e.buf(0).iter().all(|&b| b == 5));
    }

    #[test]
    fn syncs_go_through_aio() {
        let dir = temp();
        let path = dir.path().join("sync");
        let mut e = create_named("libaio", &opts(3, 4096)).unwrap();
        let f = e.open(&spec(&path, true, true)).unwrap();
        fill(e.as_mut(), 0, 0, 4096, 9);
        assert_eq!(
            e.queue(&io(0, f, Op::Write, 0, 4096)).unwrap(),
            Queued::InFlight
        );
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(1, usize::MAX, &mut out).unwrap();
        for (slot, op) in [(1, Op::Fsync), (2, Op::Fdatasync)] {
            // InFlight through the kernel, or Completed by the fallback.
            match e.queue(&io(slot, f, op, 0, 0)).unwrap() {
                Queued::InFlight => {}
                Queued::Completed(c) => out.push(c),
                Queued::Busy => panic!("busy"),
            }
        }
        e.commit().unwrap();
        e.reap(3 - out.len(), usize::MAX, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        for c in &out {
            assert_eq!(c.result, Ok(if c.slot == 0 { 4096 } else { 0 }), "{c:?}");
        }
    }

    #[test]
    fn submit_errors_are_completions() {
        let dir = temp();
        let path = dir.path().join("ro");
        std::fs::write(&path, vec![1u8; 8192]).unwrap();
        let mut e = create_named("libaio", &opts(4, 4096)).unwrap();
        let f = e.open(&spec(&path, true, false)).unwrap();
        // A good read on either side of the bad write: all three complete.
        for (slot, op) in [(0, Op::Read), (1, Op::Write), (2, Op::Read)] {
            assert_eq!(
                e.queue(&io(slot, f, op, 0, 4096)).unwrap(),
                Queued::InFlight
            );
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(3, usize::MAX, &mut out).unwrap();
        out.sort_by_key(|c| c.slot);
        assert_eq!(
            out,
            [
                Completion {
                    slot: 0,
                    result: Ok(4096)
                },
                Completion {
                    slot: 1,
                    result: Err(libc::EBADF)
                },
                Completion {
                    slot: 2,
                    result: Ok(4096)
                },
            ]
        );
    }

    /// Completions come from the mapped ring with no io_getevents: a
    /// buffered read completes inside io_submit, so a reap that may not
    /// wait finds it in the ring. The reads go round the ring (127 events
    /// for depth 4 with 4 KiB pages) four times, and each comes back once.
    #[test]
    fn completions_are_read_from_the_mapped_ring() {
        let dir = temp();
        let path = dir.path().join("ring");
        std::fs::write(&path, vec![7u8; 4 * 4096]).unwrap();
        let mut e = LibaioEngine::new(&opts(4, 4096)).unwrap();
        let ring = e.ring.expect("the kernel's ring has the expected layout");
        // SAFETY: the header of the live context's ring.
        let nr = unsafe { ring.as_ref() }.nr as usize;
        let f = e.open(&spec(&path, false, false)).unwrap();
        let mut out = Vec::new();
        let rounds = nr as u64 + 1;
        for round in 0..rounds {
            for slot in 0..4 {
                let off = (round + slot) % 4 * 4096;
                assert_eq!(
                    e.queue(&io(slot as u32, f, Op::Read, off, 4096)).unwrap(),
                    Queued::InFlight
                );
            }
            e.commit().unwrap();
            out.clear();
            assert_eq!(e.take_ring(usize::MAX, &mut out), 4, "round {round}");
            let mut slots: Vec<u32> = out.iter().map(|c| c.slot).collect();
            slots.sort_unstable();
            assert_eq!(slots, [0, 1, 2, 3], "round {round}");
            assert!(out.iter().all(|c| c.result == Ok(4096)), "{out:?}");
            assert_eq!(e.outstanding(), 0);
        }
        // SAFETY: as above.
        let hdr = unsafe { ring.as_ref() };
        assert_eq!(
            hdr.head.load(Ordering::Acquire),
            hdr.tail.load(Ordering::Acquire)
        );
        assert_eq!(hdr.head.load(Ordering::Acquire) as usize, 4 * (nr + 1) % nr);
        for slot in 0..4 {
            assert!(e.buf(slot)[..4096].iter().all(|&x| x == 7), "slot {slot}");
        }
    }

    /// Drops the page cache of a file so reads must go to the device.
    fn drop_cache(path: &Path) {
        let file = std::fs::File::open(path).unwrap();
        file.sync_all().unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: posix_fadvise takes no pointers.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(rc, 0);
    }

    /// fio fact: kernel AIO on a regular file without O_DIRECT does the
    /// I/O inside io_submit. Right after one io_submit of 8 reads of
    /// uncached data, io_getevents with a zero timeout (reap(0)) finds all
    /// 8 done: the queue depth is never really reached.
    #[test]
    fn buffered_completes_inside_io_submit() {
        let dir = temp();
        let path = dir.path().join("buffered");
        std::fs::write(&path, vec![7u8; 2 << 20]).unwrap();
        for round in 0..5 {
            drop_cache(&path);
            let (mut e, f) = engine(&path, false, false);
            let early = submit_all(e.as_mut(), f, Op::Read);
            assert_eq!(early.len(), 8, "round {round}: {early:?}");
            finish(e.as_mut(), early);
        }
    }

    /// With O_DIRECT on a block-device filesystem the reads are really
    /// asynchronous: io_submit returns before the device completes them.
    /// How many are done at once depends on the device, so this asserts
    /// only that over 20 rounds at least one found fewer than 8 ready (and
    /// that all 8 then complete with the data).
    #[test]
    fn direct_is_asynchronous() {
        let dir = temp();
        let fs = fs_type(dir.path()).ok();
        if !matches!(fs, Some(FsType::Ext | FsType::Xfs | FsType::Btrfs))
            || !probe_o_direct(dir.path()).unwrap_or(false)
        {
            iolab_testkit::skip!("{fs:?} is not a block filesystem with O_DIRECT");
        }
        let path = dir.path().join("direct");
        std::fs::write(&path, vec![7u8; 2 << 20]).unwrap();
        drop_cache(&path);
        let (mut e, f) = engine(&path, false, true);
        let mut ready = Vec::new();
        for _ in 0..20 {
            let early = submit_all(e.as_mut(), f, Op::Read);
            ready.push(early.len());
            finish(e.as_mut(), early);
            assert!(e.buf(3).iter().all(|&b| b == 7));
        }
        println!("O_DIRECT: completions ready right after io_submit: {ready:?}");
        if ready.iter().all(|&n| n == 8) {
            // A device (or a host cache under a virtual disk) that
            // completes every read within io_submit shows no asynchrony.
            iolab_testkit::skip!(
                "the device completed all 8 reads within io_submit in each of 20 rounds"
            );
        }
    }
}
