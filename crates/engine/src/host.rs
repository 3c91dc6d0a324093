//! Facts about the host that only a system call can tell: the page size and
//! the amount of physical memory. The job language's `$pagesize` and
//! `$mb_memory` keywords read them.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_facts_are_plausible() {
        let ps = page_size();
        assert!(ps >= 4096 && ps.is_power_of_two(), "page size {ps}");
        assert!(physical_memory() >= 64 << 20);
        assert!(online_cpus() >= 1);
    }
}
