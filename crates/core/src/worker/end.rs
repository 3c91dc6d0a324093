//! The end of a clone's job, after its last I/O: end_fsync and the files'
//! close (both inside its runtime, as fio times them), lat copied from
//! clat for a synchronous engine, the runtime and each direction's share
//! of it, the logs' last lines, the thread's CPU use and the I/O it and
//! the threads working for it caused, and what its buffered writes left
//! in the page cache.

use iolab_engine::host::thread_cpu_usage;
use iolab_engine::IoThreads;
use iolab_stats::{CausedIo, CpuResult, Dir, JobResult};

use super::complete::Cx;
use super::measure::Measure;
use super::{Worker, EIO};
use crate::plan::{PlanFile, PlanJob};

/// Which threads do `job`'s I/O, whose counts of what they had the
/// storage read and write are the job's: its engine's, unless io_uring
/// submits from a polling thread of its own (`sqthread_poll`), whose
/// count and workers hold every job's that shares it.
pub(super) fn io_threads(job: &PlanJob) -> IoThreads {
    match job.engine.io_threads() {
        IoThreads::CallerAndUringWorkers if job.engine_opts.sqthread_poll => IoThreads::Unknown,
        t => t,
    }
}

impl Worker {
    /// Ends the job measured by `m`, whose loops spent `verify_ns`
    /// reading back their writes, and completes its result.
    pub(super) fn end_job(&mut self, cx: &Cx, m: &Measure, verify_ns: u64, out: &mut JobResult) {
        let (job, clock) = (cx.job, cx.clock);
        // The job's runtime includes end_fsync and the fsync of
        // fsync_on_close, as fio's does: a buffered write job "with fsync
        // at the end" is timed until the data is on the device.
        if job.end_fsync {
            self.files.fsync_open(self.engine.as_mut());
        }
        let _ = self.files.close_all(self.engine.as_mut());
        let end = clock.now();

        if cx.lat_is_clat {
            for r in out.dirs.iter_mut() {
                r.lat = r.clat.clone();
            }
        }
        let runtime = clock.ns_between(m.start, end);
        out.runtime_ns = runtime;
        if let Some(logs) = &mut self.logs {
            if let Err(e) = logs.finish(runtime / 1_000_000, &mut out.dirs) {
                if out.error == 0 {
                    (out.error, out.error_detail) =
                        (super::logs::errno_of(&e).unwrap_or(EIO), e.to_string());
                }
            }
        }
        self.direction_runtimes(runtime, verify_ns, out);
        let cpu = thread_cpu_usage().since(&m.cpu0);
        // The thread's count and, for io_uring, its workers': what they
        // do for it is counted as theirs, and so is their CPU time.
        out.caused_io = m.io0.as_ref().and_then(|io0| {
            io0.caused().map(|d| CausedIo {
                read_bytes: d.io.read_bytes,
                write_bytes: d.io.write_bytes,
                workers_busy_ns: d.workers_busy_ns,
            })
        });
        if !job.direct && out.dirs[Dir::Write as usize].io_bytes > 0 && job.engine.moves_file_data()
        {
            out.unflushed_bytes = self.unflushed(cx.files);
        }
        out.cpu = CpuResult {
            user_ns: cpu.user.as_nanos() as u64,
            system_ns: cpu.system.as_nanos() as u64,
            run_delay_ns: cpu.run_delay.as_nanos() as u64,
            ctx: cpu.voluntary_ctx + cpu.involuntary_ctx,
            majflt: cpu.majflt,
            minflt: cpu.minflt,
        };
    }

    /// Each direction's runtime, out of the job's `runtime` of which
    /// `verify_ns` went to reading back the loops' writes.
    fn direction_runtimes(&self, runtime: u64, verify_ns: u64, out: &mut JobResult) {
        for dir in Dir::ALL {
            // Verify's read-back makes a write job read too. As in fio,
            // the read-back after a loop's writes is timed apart: it is
            // the reads' time, not the writes' (a backlog's read-back,
            // amid the writes, is both's).
            // An engine that does no I/O has no time moving data (fio's
            // runtime of a direction counts only with bytes).
            let used = self.mix.uses(dir) && !self.noio;
            let main = if used {
                runtime - verify_ns.min(runtime)
            } else {
                0
            };
            let read_back = if dir == Dir::Read { verify_ns } else { 0 };
            if used || (out.dirs[dir as usize].total_ios > 0 && !self.noio) {
                out.dirs[dir as usize].runtime_ns = (main + read_back).min(runtime);
            }
        }
    }

    /// Bytes of this clone's files in the page cache and not yet on the
    /// device, after its last write (and end_fsync): what its buffered
    /// writes left in memory. None when the kernel cannot tell.
    fn unflushed(&self, files: &[PlanFile]) -> Option<u64> {
        if !crate::checks::on() {
            return None;
        }
        let mut total = 0;
        for f in &self.files.files {
            let file = std::fs::File::open(&files[f.path_index].path).ok()?;
            let st = iolab_engine::file::cache_stat(&file).ok()?;
            total += st.dirty + st.writeback;
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::{Context, Host};

    fn job(opts: &str) -> PlanJob {
        let ctx = Context::from_env(Host::EXAMPLE);
        let text = format!("[j]\nfilename=/nonexistent-dir/f\nsize=1m\n{opts}");
        let set = iolab_spec::parse_text("w.fio", &text, &ctx).unwrap();
        crate::plan::build(&set).unwrap().jobs.remove(0)
    }

    #[test]
    fn io_urings_workers_count_with_the_job_unless_a_polling_thread_submits() {
        assert_eq!(io_threads(&job("ioengine=psync\n")), IoThreads::Caller);
        assert_eq!(io_threads(&job("ioengine=libaio\n")), IoThreads::Caller);
        assert_eq!(
            io_threads(&job("ioengine=io_uring\n")),
            IoThreads::CallerAndUringWorkers
        );
        assert_eq!(
            io_threads(&job("ioengine=io_uring\nsqthread_poll=1\n")),
            IoThreads::Unknown
        );
    }
}
