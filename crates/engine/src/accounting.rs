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
//!
//! The same threads' time on a CPU or waiting for one (their schedstat)
//! tells whether the job ever waited for the storage: an io_uring job
//! whose workers do its buffered writes sleeps while they work, so its
//! own thread's time alone says it waited when nothing did.

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
    /// the job thread's workers, its count and its busy time.
    tasks: HashMap<u32, (bool, ThreadIo, u64)>,
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
                .map(|t| (t.tid, (t.comm == name, t.io, t.busy_ns)))
                .collect(),
            exited: exited(total, tasks),
        }
    }

    /// What the job caused since the mark was taken, on the thread that
    /// took it; None when it cannot be told.
    pub fn caused(&self) -> Option<Caused> {
        let own = thread_io()?;
        if self.threads == IoThreads::Caller {
            return Some(Caused {
                io: own.since(&self.own),
                workers_busy_ns: 0,
            });
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
    fn since(&self, own: ThreadIo, now: &[Task], total: ThreadIo, tid: u32) -> Option<Caused> {
        let name = uring_worker_name(tid);
        // The threads gone since the start took their counts then to the
        // exited ones; what they or threads born since did afterwards
        // may have been the job's (a worker idle for 5 s exits) or not
        // (another job's thread ending): unknown either way.
        let mut gone = ThreadIo::default();
        for (t, &(worker, io, _)) in &self.tasks {
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
        let mut busy = 0u64;
        for t in now.iter().filter(|t| t.comm == name) {
            let (before, busy0) = match self.tasks.get(&t.tid) {
                Some(&(true, io, b)) => (io, b),
                _ => (ThreadIo::default(), 0),
            };
            sum = add(sum, t.io.since(&before));
            busy = busy.saturating_add(t.busy_ns.saturating_sub(busy0));
        }
        Some(Caused {
            io: sum,
            workers_busy_ns: busy,
        })
    }
}

/// What a job's threads caused: the storage I/O of the thread that ran it
/// and of the threads working for it, and how long those others were on
/// a CPU or ready for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caused {
    pub io: ThreadIo,
    /// Nanoseconds the job's io_uring workers ran or waited for a CPU
    /// (0 for an engine whose I/O the job's own thread does).
    pub workers_busy_ns: u64,
}

fn add(a: ThreadIo, b: ThreadIo) -> ThreadIo {
    ThreadIo {
        read_bytes: a.read_bytes.saturating_add(b.read_bytes),
        write_bytes: a.write_bytes.saturating_add(b.write_bytes),
    }
}

/// One thread of the process: its id, name, counts, and nanoseconds it
/// was on a CPU or ready for one.
#[derive(Debug, Clone)]
struct Task {
    tid: u32,
    comm: String,
    io: ThreadIo,
    busy_ns: u64,
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
        // Without schedstat, no worker counts as busy: the judgement
        // then rests on the job's thread, as it did before.
        busy_ns: std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|t| busy_ns(&t))
            .unwrap_or(0),
    })
}

/// Time on a CPU plus time waiting for one, in nanoseconds, from a
/// schedstat text ("on-cpu run-delay timeslices").
fn busy_ns(schedstat: &str) -> Option<u64> {
    let mut f = schedstat.split_whitespace();
    let on_cpu: u64 = f.next()?.parse().ok()?;
    let delay: u64 = f.next()?.parse().ok()?;
    Some(on_cpu.saturating_add(delay))
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
            busy_ns: 0,
        }
    }

    fn busy(mut t: Task, ns: u64) -> Task {
        t.busy_ns = ns;
        t
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
            busy(task(101, "iou-wrk-100", 10, 20), 100),
            busy(task(102, "iou-wrk-1000", 30, 40), 1000),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let mark = IoMark::of(io(1, 2), &start, io(98, 70), 100);
        assert_eq!(mark.exited, io(50, 0));
        let end = [
            task(100, "iolab", 3, 4),
            busy(task(101, "iou-wrk-100", 10, 1020), 600),
            busy(task(102, "iou-wrk-1000", 500, 600), 9000),
            busy(task(103, "iou-wrk-100", 5, 6), 50),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let total = io(50 + 3 + 10 + 500 + 5 + 7, 4 + 1020 + 600 + 6 + 8);
        // Its own 2 and 2, worker 101's 0 and 1000, the new worker 103's
        // 5 and 6; the workers busy 500 and 50 ns, the other thread's
        // worker not counted.
        let c = mark.since(io(3, 4), &end, total, 100).unwrap();
        assert_eq!(c.io, io(7, 1008));
        assert_eq!(c.workers_busy_ns, 550);
        // A thread of another job that exited with I/O since: it may have
        // been one of the job's workers, so the count is unknown.
        let ended = [&end[..2], &end[3..]].concat();
        let t = total;
        assert!(mark.since(io(3, 4), &ended, t, 100).is_none());
        // One that exited having done nothing since the start (the end of
        // an earlier job's thread) changes nothing.
        let quiet = [
            task(100, "iolab", 3, 4),
            task(101, "iou-wrk-100", 10, 1020),
            task(103, "iou-wrk-100", 5, 6),
            task(104, "iou-sqp-100", 7, 8),
        ];
        let t = io(50 + 30 + 3 + 10 + 5 + 7, 40 + 4 + 1020 + 6 + 8);
        let c = mark.since(io(3, 4), &quiet, t, 100).map(|c| c.io);
        assert_eq!(c, Some(io(7, 1008)));
        // A worker of the job that exited: its count since is lost.
        let lost = [task(100, "iolab", 3, 4), task(104, "iou-sqp-100", 7, 8)];
        let t = io(50 + 10 + 30 + 3 + 7, 1020 + 40 + 4 + 8);
        assert!(mark.since(io(3, 4), &lost, t, 100).is_none());
    }

    #[test]
    fn busy_time_is_on_cpu_plus_run_delay() {
        assert_eq!(busy_ns("1322039 2492576 91\n"), Some(3814615));
        assert_eq!(busy_ns("garbage"), None);
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
            assert!(c.io.write_bytes >= 1 << 20, "{c:?}");
        }
        let mark = IoMark::now(IoThreads::Caller).unwrap();
        std::fs::write(dir.path().join("g"), vec![1u8; 1 << 20]).unwrap();
        assert!(mark.caused().unwrap().io.write_bytes >= 1 << 20);
    }
}
