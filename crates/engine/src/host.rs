//! Facts about the host that only a system call can tell: the page size,
//! the amount of physical memory (the job language's `$pagesize` and
//! `$mb_memory` keywords read them), the CPU usage of the calling thread
//! (fio's per-job usr/sys/ctx/majf/minf), and the Ctrl-C counter. And the
//! calling thread's CPU affinity and niceness (fio's `cpus_allowed` and
//! `nice`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;
use std::time::Duration;

/// The size of a memory page in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// Physical memory in bytes.
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    if pages > 0 {
        pages as u64 * page_size()
    } else {
        0
    }
}

/// Number of online CPUs.
pub fn online_cpus() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as u64
    } else {
        1
    }
}

/// Number of CPUs the system has configured, online or not: CPU numbers
/// run from 0 to this minus one.
pub fn configured_cpus() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 {
        n as u64
    } else {
        online_cpus()
    }
}

/// Restricts the calling thread to the given CPUs (sched_setaffinity(2) on
/// the thread alone). EINVAL when none of them is usable (offline, or
/// outside the process's cpuset).
pub fn pin_thread(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is a plain bit mask; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu as usize >= capacity {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below the set's capacity, checked above.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed, alive for the
    // call; pid 0 names the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the calling thread may run on (sched_getaffinity(2)).
pub fn thread_cpus() -> std::io::Result<Vec<u32>> {
    // SAFETY: cpu_set_t is a plain bit mask; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid
    // 0 names the calling thread.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
    Ok((0..capacity)
        // SAFETY: `c` is below the set's capacity.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect())
}

/// The calling thread's nice value.
pub fn thread_nice() -> std::io::Result<i32> {
    let tid = thread_id() as libc::id_t;
    // getpriority may return -1 as a value: errno tells it from an error.
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: getpriority takes no pointers; PRIO_PROCESS with a thread id
    // names that thread on Linux.
    let n = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
    // SAFETY: as above.
    if n == -1 && unsafe { *libc::__errno_location() } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n)
}

/// Adds `increment` to the calling thread's nice value, within -20..=19,
/// as nice(3) does for a process (fio's `nice` option calls nice(3) in
/// each job). Lowering it needs CAP_SYS_NICE (EACCES or EPERM otherwise).
/// Returns the new value.
pub fn renice_thread(increment: i32) -> std::io::Result<i32> {
    let value = (thread_nice()? + increment).clamp(-20, 19);
    let tid = thread_id() as libc::id_t;
    // SAFETY: setpriority takes no pointers; PRIO_PROCESS with a thread id
    // changes only that thread on Linux.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, value) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(value)
}

/// Puts thread `tid` under SCHED_IDLE (`idle`), where it runs only on a
/// CPU that nothing else wants, or back under SCHED_OTHER at its nice
/// value. Leaving SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that
/// allows nice 0 (EPERM otherwise; see `may_leave_idle`).
pub fn set_thread_idle(tid: u32, idle: bool) -> std::io::Result<()> {
    let policy = if idle {
        libc::SCHED_IDLE
    } else {
        libc::SCHED_OTHER
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is valid for the call, which only reads it; a thread
    // id names that thread alone on Linux.
    if unsafe { libc::sched_setscheduler(tid as libc::pid_t, policy, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this process may take a thread out of SCHED_IDLE again:
/// CAP_SYS_NICE in its effective set, or an RLIMIT_NICE of 20 or more.
pub fn may_leave_idle() -> bool {
    const CAP_SYS_NICE: u32 = 23;
    let cap = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            let hex = t.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|eff| eff >> CAP_SYS_NICE & 1 == 1);
    // SAFETY: rlimit is plain old data; all-zero is a valid value.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `lim` is valid for the call, which writes it.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NICE, &mut lim) } == 0;
    cap || (ok && lim.rlim_cur >= 20)
}

/// Local time's offset from UTC in seconds now (fio prints local times).
pub fn utc_offset_s() -> i32 {
    // SAFETY: time with a null pointer only returns the time.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: tm is plain old data; all-zero is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is the
    // thread-safe variant.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return 0;
    }
    tm.tm_gmtoff as i32
}

/// Maps the whole pages inside `buf` writable now, in one call
/// (MADV_POPULATE_WRITE, Linux 5.14), as a write to each would, so that
/// filling the buffer later takes no page fault. What `buf` holds is left
/// as it is (pages not mapped yet read as zeros either way).
pub fn prefault<T>(buf: &mut [std::mem::MaybeUninit<T>]) -> std::io::Result<()> {
    const MADV_POPULATE_WRITE: libc::c_int = 23;
    let page = page_size() as usize;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let (from, to) = (start.next_multiple_of(page), end / page * page);
    if to <= from {
        return Ok(());
    }
    // SAFETY: [from, to) lies inside `buf`, which the caller holds
    // mutably; the call only maps its pages, and changes no byte a read
    // of the buffer could see.
    if unsafe { libc::madvise(from as *mut libc::c_void, to - from, MADV_POPULATE_WRITE) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The kernel's id of the calling thread (fio prints it as the job's pid).
pub fn thread_id() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::gettid() };
    tid.max(0) as u32
}

/// Gives the calling thread a file descriptor table of its own (a copy of
/// the process's), as a worker does before it opens its files. The kernel
/// looks a descriptor up without taking a reference on the file only when
/// the table is not shared: in a process of several threads, every read
/// and write otherwise pays an atomic increment and decrement of the
/// file's count (fdget/fdput), which a process per job (fio's default)
/// does not. Descriptors the thread opens afterwards are its own; they
/// are closed when it closes them or exits.
pub fn private_fd_table() -> std::io::Result<()> {
    // SAFETY: unshare takes a flag word and no pointers; CLONE_FILES only
    // copies this thread's descriptor table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Resource usage of one thread, from getrusage(RUSAGE_THREAD), and the
/// time it spent runnable but waiting for a CPU (/proc/thread-self/schedstat).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuUsage {
    pub user: Duration,
    pub system: Duration,
    /// Ready to run, waiting on a run queue (zero when the kernel does not
    /// say).
    pub run_delay: Duration,
    pub voluntary_ctx: u64,
    pub involuntary_ctx: u64,
    pub majflt: u64,
    pub minflt: u64,
}

impl CpuUsage {
    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuUsage) -> CpuUsage {
        CpuUsage {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            run_delay: self.run_delay.saturating_sub(earlier.run_delay),
            voluntary_ctx: self.voluntary_ctx.saturating_sub(earlier.voluntary_ctx),
            involuntary_ctx: self.involuntary_ctx.saturating_sub(earlier.involuntary_ctx),
            majflt: self.majflt.saturating_sub(earlier.majflt),
            minflt: self.minflt.saturating_sub(earlier.minflt),
        }
    }
}

/// CPU time, context switches and page faults of the calling thread so far.
/// All zero in the (never seen) case that getrusage fails.
pub fn thread_cpu_usage() -> CpuUsage {
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the call's duration.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return CpuUsage::default();
    }
    let dur = |tv: libc::timeval| {
        Duration::from_secs(u64::try_from(tv.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(tv.tv_usec).unwrap_or(0))
    };
    let count = |n: libc::c_long| u64::try_from(n).unwrap_or(0);
    CpuUsage {
        user: dur(ru.ru_utime),
        system: dur(ru.ru_stime),
        run_delay: run_delay().unwrap_or_default(),
        voluntary_ctx: count(ru.ru_nvcsw),
        involuntary_ctx: count(ru.ru_nivcsw),
        majflt: count(ru.ru_majflt),
        minflt: count(ru.ru_minflt),
    }
}

/// How long the calling thread has waited on a run queue: the second
/// field of /proc/thread-self/schedstat, in nanoseconds.
fn run_delay() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// What the calling thread has caused the storage layer to read and
/// write so far (/proc/thread-self/io's `read_bytes` and `write_bytes`):
/// reads the page cache served are not in it. None when the kernel keeps
/// no such accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl ThreadIo {
    /// What was caused between `earlier` and `self`.
    pub fn since(&self, earlier: &ThreadIo) -> ThreadIo {
        ThreadIo {
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }

    /// The counters of a /proc/.../io text.
    pub fn parse(text: &str) -> Option<ThreadIo> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
        };
        Some(ThreadIo {
            read_bytes: field("read_bytes")?,
            write_bytes: field("write_bytes")?,
        })
    }
}

/// The calling thread's storage I/O so far (one read of a small proc
/// file: for a worker's start and end, never per I/O).
pub fn thread_io() -> Option<ThreadIo> {
    ThreadIo::parse(&std::fs::read_to_string("/proc/thread-self/io").ok()?)
}

/// SIGINT, SIGTERM and SIGHUP received since `install_interrupt_handler`.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
static INSTALL: Once = Once::new();

extern "C" fn count_interrupt(_signal: libc::c_int) {
    // A lock-free atomic add is async-signal-safe; nothing else happens here.
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
}

/// The terminal went away (a closed window, a dropped ssh session): the
/// run stops and cleans up as on Ctrl-C, and what it would have written
/// to the terminal goes to /dev/null, since a write to a hung-up terminal
/// fails (EIO) and would cut the cleanup short. Output redirected to files
/// or pipes is left as it is.
extern "C" fn hang_up(_signal: libc::c_int) {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: open, isatty, dup2 and close are async-signal-safe and take
    // a valid NUL-terminated path and descriptor numbers; failures leave
    // the descriptors as they were.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return;
        }
        for fd in 0..3 {
            if libc::isatty(fd) == 1 {
                libc::dup2(null, fd);
            }
        }
        libc::close(null);
    }
}

/// Installs (once per process) a handler for SIGINT, SIGTERM and SIGHUP
/// that counts them (SIGHUP also detaches the dead terminal, see
/// `hang_up`), and returns the counter. The run polls it: 1 means stop the
/// workers and report what was gathered, 2 or more means exit at once.
/// The handler uses SA_RESTART, so an I/O in progress is not cut short by
/// EINTR.
pub fn install_interrupt_handler() -> &'static AtomicU32 {
    INSTALL.call_once(|| {
        let count = count_interrupt as extern "C" fn(libc::c_int);
        let hup = hang_up as extern "C" fn(libc::c_int);
        for (signal, handler) in [
            (libc::SIGINT, count),
            (libc::SIGTERM, count),
            (libc::SIGHUP, hup),
        ] {
            // SAFETY: sigaction is plain old data; all-zero is a valid value
            // (empty mask, no flags) that the fields below complete.
            let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
            act.sa_sigaction = handler as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            // SAFETY: `act` is a valid sigaction whose handler is an
            // async-signal-safe extern "C" fn living for the whole program;
            // a null old-action pointer is allowed.
            let rc = unsafe { libc::sigaction(signal, &act, std::ptr::null_mut()) };
            // Fails only for an invalid signal number, which these are not.
            debug_assert_eq!(rc, 0);
        }
    });
    &INTERRUPTS
}

/// How many SIGINT/SIGTERM/SIGHUP arrived since the handler was installed.
pub fn interrupt_count() -> u32 {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// This process's effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// Writes every filesystem's dirty data back (sync(2)).
pub fn sync() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Writes dirty data back and drops the page cache, dentries and inodes
/// (sync, then `3` into /proc/sys/vm/drop_caches), so the next read comes
/// from the device. Needs root; the error says why otherwise.
pub fn drop_caches() -> std::io::Result<()> {
    sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_storage_reads_are_counted_and_cached_ones_are_not() {
        let text = "rchar: 10\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: 8192\n\
                    write_bytes: 4096\ncancelled_write_bytes: 0\n";
        let io = ThreadIo::parse(text).unwrap();
        assert_eq!((io.read_bytes, io.write_bytes), (8192, 4096));
        assert_eq!(ThreadIo::parse("rchar: 1\n"), None);
        let Some(before) = thread_io() else {
            iolab_testkit::skip!("no per-thread I/O accounting in this kernel");
        };
        // A file written and still cached: reading it back reads nothing
        // from storage.
        let dir = crate::testutil::temp();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 1 << 20]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), 1 << 20);
        let io = thread_io().unwrap().since(&before);
        assert!(io.read_bytes < 1 << 20, "{io:?}");
        assert!(io.write_bytes >= 1 << 20, "dirtied pages count: {io:?}");
    }

    #[test]
    fn host_facts_are_plausible() {
        let ps = page_size();
        assert!(ps >= 4096 && ps.is_power_of_two(), "page size {ps}");
        assert!(physical_memory() >= 64 << 20);
        assert!(online_cpus() >= 1);
    }

    #[test]
    fn pinning_and_renicing_change_only_the_calling_thread() {
        let main_cpus = thread_cpus().unwrap();
        let main_nice = thread_nice().unwrap();
        let first = main_cpus[0];
        let (cpus, nice) = std::thread::spawn(move || {
            pin_thread(&[first]).unwrap();
            let nice = renice_thread(3).unwrap();
            (thread_cpus().unwrap(), (nice, thread_nice().unwrap()))
        })
        .join()
        .unwrap();
        assert_eq!(cpus, [first]);
        let want = (main_nice + 3).min(19);
        assert_eq!(nice, (want, want));
        assert_eq!(thread_cpus().unwrap(), main_cpus, "the caller is untouched");
        assert_eq!(thread_nice().unwrap(), main_nice);
        assert!(configured_cpus() >= main_cpus.len() as u64);
    }

    #[test]
    fn pinning_to_a_cpu_the_machine_lacks_fails() {
        let beyond = configured_cpus() as u32;
        let e = std::thread::spawn(move || pin_thread(&[beyond]))
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        let e = pin_thread(&[1 << 20]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn thread_cpu_usage_grows_with_work() {
        let before = thread_cpu_usage();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        let used = thread_cpu_usage().since(&before);
        assert!(
            used.user + used.system >= Duration::from_millis(10),
            "{used:?} after a 50 ms busy loop"
        );
    }

    #[test]
    fn sigint_is_counted() {
        let counter = install_interrupt_handler();
        let before = counter.load(Ordering::Relaxed);
        // SAFETY: raise has no memory preconditions; the handler is installed.
        assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
        assert!(counter.load(Ordering::Relaxed) > before);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
        assert!(interrupt_count() >= before + 2);
        // SAFETY: as above. The test's descriptors are pipes or files, not
        // a terminal, so they stay as they are.
        assert_eq!(unsafe { libc::raise(libc::SIGHUP) }, 0);
        assert!(interrupt_count() >= before + 3);
        // A second install keeps the same counter.
        assert!(std::ptr::eq(counter, install_interrupt_handler()));
    }
}
