//! The system calls made once per I/O (pread64, pwrite64), issued with the
//! `syscall` instruction itself on x86_64: no call into glibc's variadic
//! `syscall()` wrapper, no errno written through thread-local storage. The
//! kernel's answer comes back as it is, a count or a negated errno. Other
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

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn syscall4(nr: i64, a: usize, b: usize, c: usize, d: usize) -> SysResult {
    // SAFETY: the caller vouches for the arguments.
    let ret = unsafe { libc::syscall(nr as libc::c_long, a, b, c, d) };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(ret as usize)
    }
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
}
