//! What a job's I/O caused the storage to read and write, by the kernel's
//! per-thread accounting (/proc/.../io `read_bytes` and `write_bytes`):
//! the count of the thread that runs the job, plus, for io_uring, the
//! count of the kernel workers that do the I/O it hands on.
//!
//! io_uring does what it cannot do without blocking (buffered writes on
//! filesystems without non-blocking buffered writes, such as ext4; every
//! fsync; reads that miss the page cache at times) in io-wq worker
//! threads of the process, named `iou-wrk-<tid>` after the thread that
//! submitted. The kernel counts their I/O as theirs, not the submitter's,
//! and adds a worker's count to the process's total when it exits (an
//! idle worker exits after about 5 s, unless it is the last of its kind).
//! So a job's count is its thread's and its workers', read as the job
//! starts and as it ends; when a worker of the job's exited in between,
//! or any thread of the process that did I/O after the start (its count
//! then only in the process's total, so perhaps a worker of the job's
//! that came and went), the count is unknown rather than short.

use std::collections::HashMap;
use std::path::Path;

use crate::host::{thread_id, thread_io, ThreadIo};
use crate::IoThreads;

/// Above this many threads in the process, reading each one's count at
/// the start and end of every job clone costs more than the check is
/// worth: the job's count is then unknown.
const MAX_TASKS: usize = 512;

/// The counts at a job's start, from which [`IoMark::caused`] tells what
/// the job caused.
#[derive(Debug, Clone)]
pub struct IoMark {
    threads: IoThreads,
    own: ThreadIo,
    /// Every thread of the process (for io_uring): whether it is one of
    /// the job thread's workers, and its count.
    tasks: HashMap<u32, (bool, ThreadIo)>,
    /// What threads of the process that exited had caused.
    exited: ThreadIo,
}

impl IoMark {
    /// The calling thread's counts now, and those of the threads that do
    /// its I/O as `threads` says; None when the kernel keeps no such
    /// count or the job's I/O cannot be attributed to it.
    pub fn now(threads: IoThreads) -> Option<IoMark> {
        let own = thread_io()?;
        match threads {
            IoThreads::Caller => Some(IoMark {
                threads,
                own,
                tasks: HashMap::new(),
                exited: ThreadIo::default(),
            }),
            // The process's total before the threads: a thread that
            // exits in between is with the exited ones at both ends.
            IoThreads::CallerAndUringWorkers => {
                let total = process_io()?;
                Some(IoMark::of(own, &tasks()?, total, thread_id()))
            }
            IoThreads::Unknown => None,
        }
    }

    /// The mark of thread `tid`, whose count is `own`, among the
    /// process's `tasks`, whose total is `total`.
    fn of(own: ThreadIo, tasks: &[Task], total: ThreadIo, tid: u32) -> IoMark {
        let name = uring_worker_name(tid);
        IoMark {
            threads: IoThreads::CallerAndUringWorkers,
            own,
            tasks: tasks
                .iter()
                .map(|t| (t.tid, (t.comm == name, t.io)))
                .collect(),
            exited: exited(total, tasks),
        }
    }

    /// What the job caused since the mark was taken, on the thread that
    /// took it; None when it cannot be told.
    pub fn caused(&self) -> Option<ThreadIo> {
        let own = thread_io()?;
        if self.threads == IoThreads::Caller {
            return Some(own.since(&self.own));
        }
        // The threads before the total: a thread that exits in between is
        // counted twice, and looks like an exit with I/O of its own.
        let now = tasks()?;
        let total = process_io()?;
        self.since(own, &now, total, thread_id())
    }

    /// What thread `tid` and its workers caused since the mark, with the
    /// thread's count now `own`, the process's threads now `now` and its
    /// total `total`.
    fn since(&self, own: ThreadIo, now: &[Task], total: ThreadIo, tid: u32) -> Option<ThreadIo> {
        let name = uring_worker_name(tid);
        // The threads gone since the start took their counts then to the
        // exited ones; what they or threads born since did afterwards
        // may have been the job's (a worker idle for 5 s exits) or not
        // (another job's thread ending): unknown either way.
        let mut gone = ThreadIo::default();
        for (t, &(worker, io)) in &self.tasks {
            if !now.iter().any(|n| n.tid == *t) {
                if worker {
                    return None;
                }
                gone = add(gone, io);
            }
        }
        let after = exited(total, now).since(&add(self.exited, gone));
        if after.read_bytes > 0 || after.write_bytes > 0 {
            return None;
        }
        let mut sum = own.since(&self.own);
        for t in now.iter().filter(|t| t.comm == name) {
            let before = match self.tasks.get(&t.tid) {
                Some(&(true, io)) => io,
                _ => ThreadIo::default(),
            };
            sum = add(sum, t.io.since(&before));
        }
        Some(sum)
    }
}

fn add(a: ThreadIo, b: ThreadIo) -> ThreadIo {
    ThreadIo {
        read_bytes: a.read_bytes.saturating_add(b.read_bytes),
        write_bytes: a.write_bytes.saturating_add(b.write_bytes),
    }
}

/// One thread of the process: its id, name and counts.
#[derive(Debug, Clone)]
struct Task {
    tid: u32,
    comm: String,
    io: ThreadIo,
}

/// The process's total, which holds the counts of its exited threads.
fn process_io() -> Option<ThreadIo> {
    ThreadIo::parse(&std::fs::read_to_string("/proc/self/io").ok()?)
}

/// Every thread of the process with its counts; None above
/// [`MAX_TASKS`] or when one cannot be read but still exists.
fn tasks() -> Option<Vec<Task>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let entry = entry.ok()?;
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if out.len() == MAX_TASKS {
            return None;
        }
        match task(&entry.path(), tid) {
            Some(t) => out.push(t),
            // Gone since the listing: its count is with the exited ones.
            None if !entry.path().exists() => {}
            None => return None,
        }
    }
    Some(out)
}

fn task(dir: &Path, tid: u32) -> Option<Task> {
    let comm = std::fs::read_to_string(dir.join("comm")).ok()?;
    let io = ThreadIo::parse(&std::fs::read_to_string(dir.join("io")).ok()?)?;
    Some(Task {
        tid,
        comm: comm.trim_end_matches('\n').to_string(),
        io,
    })
}

/// The name the kernel gives the io_uring workers of thread `tid`.
fn uring_worker_name(tid: u32) -> String {
    format!("iou-wrk-{tid}")
}

/// The exited threads' share of the process's `total`.
fn exited(total: ThreadIo, tasks: &[Task]) -> ThreadIo {
    total.since(
        &tasks
            .iter()
            .fold(ThreadIo::default(), |sum, t| add(sum, t.io)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tid: u32, comm: &str, r: u64, w: u64) -> Task {
        Task {
            tid,
            comm: comm.to_string(),
            io: ThreadIo {
                read_bytes: r,
                write_bytes: w,
            },
        }
    }

    fn io(r: u64, w: u64) -> ThreadIo {
        ThreadIo {
            read_bytes: r,
            write_bytes: w,
        }
    }

    #[test]
    fn a_threads_uring_workers_count_with_it_and_no_other_threads() {
        // Thread 100 runs the job; 101 and 103 are its workers, 102 another
        // thread's, 104 a polling thread; 50 bytes read by exited threads.
        let start = [
            task(100, "iolab", 1, 2),
            task(101, "iou-wrk-100", 10, 20),
            task(102, "iou-wrk-1000", 30, 40),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let mark = IoMark::of(io(1, 2), &start, io(98, 70), 100);
        assert_eq!(mark.exited, io(50, 0));
        let end = [
            task(100, "iolab", 3, 4),
            task(101, "iou-wrk-100", 10, 1020),
            task(102, "iou-wrk-1000", 500, 600),
            task(103, "iou-wrk-100", 5, 6),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let total = io(50 + 3 + 10 + 500 + 5 + 7, 4 + 1020 + 600 + 6 + 8);
        // Its own 2 and 2, worker 101's 0 and 1000, the new worker 103's
        // 5 and 6.
        assert_eq!(mark.since(io(3, 4), &end, total, 100), Some(io(7, 1008)));
        // A thread of another job that exited with I/O since: it may have
        // been one of the job's workers, so the count is unknown.
        let ended = [&end[..2], &end[3..]].concat();
        let t = total;
        assert_eq!(mark.since(io(3, 4), &ended, t, 100), None);
        // One that exited having done nothing since the start (the end of
        // an earlier job's thread) changes nothing.
        let quiet = [
            task(100, "iolab", 3, 4),
            task(101, "iou-wrk-100", 10, 1020),
            task(103, "iou-wrk-100", 5, 6),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let t = io(50 + 30 + 3 + 10 + 5 + 7, 40 + 4 + 1020 + 6 + 8);
        assert_eq!(mark.since(io(3, 4), &quiet, t, 100), Some(io(7, 1008)));
        // A worker of the job that exited: its count since is lost.
        let lost = [task(100, "iolab", 3, 4), task(104, "iou-sqp-100", 7, 8)];
        let t = io(50 + 10 + 30 + 3 + 7, 1020 + 40 + 4 + 8);
        assert_eq!(mark.since(io(3, 4), &lost, t, 100), None);
    }

    #[test]
    fn the_calling_threads_count_is_its_own() {
        let Some(mark) = IoMark::now(IoThreads::CallerAndUringWorkers) else {
            iolab_testkit::skip!("no per-thread I/O accounting in this kernel");
        };
        assert!(IoMark::now(IoThreads::Unknown).is_none());
        let dir = crate::testutil::temp();
        std::fs::write(dir.path().join("f"), vec![1u8; 1 << 20]).unwrap();
        // No io_uring here: the thread's own count, which holds the
        // pages it dirtied. A thread of this test binary that exited
        // meanwhile makes it unknown, which is the other correct answer.
        if let Some(c) = mark.caused() {
            assert!(c.write_bytes >= 1 << 20, "{c:?}");
        }
        let mark = IoMark::now(IoThreads::Caller).unwrap();
        std::fs::write(dir.path().join("g"), vec![1u8; 1 << 20]).unwrap();
        assert!(mark.caused().unwrap().write_bytes >= 1 << 20);
    }
}
