//! The system calls made once per I/O or per batch (pread64, pwrite64,
//! io_submit, io_getevents, io_uring_enter), issued with the `syscall`
//! instruction itself on x86_64: no call into glibc's variadic `syscall()`
//! wrapper, no errno written through thread-local storage. The kernel's
//! answer comes back as it is, a count or a negated errno. Other
//! architectures go through `libc::syscall`, with the same result.

/// The kernel's return of a system call: a count, or `Err(errno)`.
pub(crate) type SysResult = Result<usize, i32>;

/// The kernel's raw return value (a count, or -errno) as a `SysResult`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn from_raw(ret: isize) -> SysResult {
    // The kernel returns -4095..=-1 for an error and nothing else negative.
    if ret < 0 {
        Err(-ret as i32)
    } else {
        Ok(ret as usize)
    }
}

/// A system call of four arguments.
///
/// # Safety
/// The arguments must be what system call `nr` expects: a pointer among
/// them must be valid for what the call does with it, for the whole call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn syscall4(nr: i64, a: usize, b: usize, c: usize, d: usize) -> SysResult {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments. The kernel's x86_64
    // convention: number and return in rax, arguments in rdi, rsi, rdx,
    // r10; rcx and r11 are clobbered; no stack is touched.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    from_raw(ret)
}

/// A system call of six arguments (fewer: the kernel ignores the rest).
///
/// # Safety
/// As for `syscall4`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn syscall6(
    nr: i64,
    a: usize,
    b: usize,
    c: usize,
    d: usize,
    e: usize,
    f: usize,
) -> SysResult {
    let ret: isize;
    // SAFETY: the caller vouches for the arguments. The kernel's x86_64
    // convention: number and return in rax, arguments in rdi, rsi, rdx,
    // r10, r8, r9; rcx and r11 are clobbered; no stack is touched.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            in("r8") e,
            in("r9") f,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    from_raw(ret)
}

/// glibc's answer (-1 and errno, or the count) as a `SysResult`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn from_libc(ret: libc::c_long) -> SysResult {
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(ret as usize)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn syscall4(nr: i64, a: usize, b: usize, c: usize, d: usize) -> SysResult {
    // SAFETY: the caller vouches for the arguments.
    from_libc(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d) })
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn syscall6(
    nr: i64,
    a: usize,
    b: usize,
    c: usize,
    d: usize,
    e: usize,
    f: usize,
) -> SysResult {
    // SAFETY: the caller vouches for the arguments.
    from_libc(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d, e, f) })
}

/// pread64(2) of `buf.len()` bytes at `off` of `fd`.
#[inline(always)]
pub(crate) fn pread(fd: libc::c_int, buf: &mut [u8], off: libc::off_t) -> SysResult {
    // SAFETY: `buf` is a live, exclusively borrowed slice of exactly
    // `buf.len()` bytes for the call; a bad descriptor or offset is an
    // error return.
    unsafe {
        syscall4(
            libc::SYS_pread64,
            fd as usize,
            buf.as_mut_ptr() as usize,
            buf.len(),
            off as usize,
        )
    }
}

/// pwrite64(2) of `buf` at `off` of `fd`.
#[inline(always)]
pub(crate) fn pwrite(fd: libc::c_int, buf: &[u8], off: libc::off_t) -> SysResult {
    // SAFETY: `buf` is a live slice of exactly `buf.len()` bytes, which
    // the kernel only reads.
    unsafe {
        syscall4(
            libc::SYS_pwrite64,
            fd as usize,
            buf.as_ptr() as usize,
            buf.len(),
            off as usize,
        )
    }
}

/// io_submit(2): hands `nr` iocbs to AIO context `ctx`; the count taken.
///
/// # Safety
/// `iocbs` must point at `nr` pointers to valid `struct iocb`s, whose
/// buffers stay valid (and unused by anyone else) until their events are
/// reaped or the context is destroyed.
#[inline(always)]
pub(crate) unsafe fn io_submit<T>(ctx: libc::c_ulong, nr: usize, iocbs: *mut *mut T) -> SysResult {
    // SAFETY: the caller vouches for the iocbs; a bad context is an error
    // return.
    unsafe {
        syscall6(
            libc::SYS_io_submit,
            ctx as usize,
            nr,
            iocbs as usize,
            0,
            0,
            0,
        )
    }
}

/// io_getevents(2): between `min` and `nr` events of context `ctx` into
/// `events`, waiting at most `timeout` (null: as long as it takes).
///
/// # Safety
/// `events` must be valid for writing `nr` `struct io_event`s, and
/// `timeout` null or pointing at a valid timespec, for the whole call.
#[inline(always)]
pub(crate) unsafe fn io_getevents<T>(
    ctx: libc::c_ulong,
    min: usize,
    nr: usize,
    events: *mut T,
    timeout: *const libc::timespec,
) -> SysResult {
    // SAFETY: the caller vouches for the pointers.
    unsafe {
        syscall6(
            libc::SYS_io_getevents,
            ctx as usize,
            min,
            nr,
            events as usize,
            timeout as usize,
            0,
        )
    }
}

/// io_uring_enter(2) of ring `fd` (its registered index with
/// IORING_ENTER_REGISTERED_RING in `flags`): submits `to_submit` SQEs and
/// waits for `min_complete` completions; the count of SQEs consumed.
///
/// # Safety
/// The SQEs submitted must name buffers valid until their completions are
/// reaped; `arg` must be null or what `flags` says it is, `argsz` bytes.
#[inline(always)]
pub(crate) unsafe fn io_uring_enter(
    fd: u32,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: *const libc::c_void,
    argsz: usize,
) -> SysResult {
    // SAFETY: the caller vouches for the SQEs and the argument block.
    unsafe {
        syscall6(
            libc::SYS_io_uring_enter,
            fd as usize,
            to_submit as usize,
            min_complete as usize,
            flags as usize,
            arg as usize,
            argsz,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn reads_writes_and_reports_errno() {
        let dir = crate::testutil::temp();
        let path = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        f.write_all(b"0123456789").unwrap();
        let fd = f.as_raw_fd();
        let mut buf = [0u8; 4];
        assert_eq!(pread(fd, &mut buf, 3), Ok(4));
        assert_eq!(&buf, b"3456");
        // Past the end: nothing.
        assert_eq!(pread(fd, &mut buf, 100), Ok(0));
        assert_eq!(pwrite(fd, b"ab", 8), Ok(2));
        assert_eq!(std::fs::read(&path).unwrap(), b"01234567ab");
        assert_eq!(pread(fd, &mut buf, -1), Err(libc::EINVAL));
        assert_eq!(pread(-1, &mut buf, 0), Err(libc::EBADF));
    }

    #[test]
    fn aio_calls_return_counts_and_errno() {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes one aio_context_t at the pointer.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, 4 as libc::c_long, &mut ctx) };
        if rc != 0 {
            iolab_testkit::skip!("io_setup refused: {}", std::io::Error::last_os_error());
        }
        let mut none: [*mut u64; 1] = [std::ptr::null_mut()];
        let mut events = [[0u64; 4]; 4];
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: nothing is submitted; the event array holds 4 events of
        // 32 bytes; the timeout is live across the call.
        unsafe {
            assert_eq!(io_submit(ctx, 0, none.as_mut_ptr()), Ok(0));
            assert_eq!(io_getevents(ctx, 0, 4, events.as_mut_ptr(), &zero), Ok(0));
            // More required than room for: the kernel says EINVAL.
            assert_eq!(
                io_getevents(ctx, 2, 1, events.as_mut_ptr(), &zero),
                Err(libc::EINVAL)
            );
            // No such context.
            assert_eq!(io_submit(0, 0, none.as_mut_ptr()), Err(libc::EINVAL));
            assert_eq!(
                io_getevents(0, 0, 4, events.as_mut_ptr(), &zero),
                Err(libc::EINVAL)
            );
            libc::syscall(libc::SYS_io_destroy, ctx);
        }
    }

    #[test]
    fn io_uring_enter_submits_and_reports_errno() {
        let mut ring = match io_uring::IoUring::new(4) {
            Ok(r) => r,
            Err(e) => iolab_testkit::skip!("io_uring_setup refused: {e}"),
        };
        let nop = io_uring::opcode::Nop::new().build().user_data(7);
        // SAFETY: a NOP names no buffer.
        unsafe { ring.submission().push(&nop).unwrap() };
        let fd = ring.as_raw_fd() as u32;
        // IORING_ENTER_GETEVENTS.
        let getevents = 1;
        // SAFETY: one NOP is queued; no argument block.
        let r = unsafe { io_uring_enter(fd, 1, 1, getevents, std::ptr::null(), 0) };
        assert_eq!(r, Ok(1));
        let done: Vec<_> = ring.completion().map(|c| c.user_data()).collect();
        assert_eq!(done, [7]);
        // SAFETY: nothing to submit or wait for.
        unsafe {
            assert_eq!(
                io_uring_enter(u32::MAX, 0, 0, 0, std::ptr::null(), 0),
                Err(libc::EBADF)
            );
            // A descriptor that is not a ring.
            let dir = crate::testutil::temp();
            let f = std::fs::File::create(dir.path().join("f")).unwrap();
            assert_eq!(
                io_uring_enter(f.as_raw_fd() as u32, 0, 0, 0, std::ptr::null(), 0),
                Err(libc::EOPNOTSUPP)
            );
        }
    }
}
