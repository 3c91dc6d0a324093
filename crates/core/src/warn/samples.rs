//! What the job's own figures say of the run: too few bandwidth samples,
//! too scattered, a start much faster than the rest, and a thread that
//! was busy on the CPU nearly all the time.

use iolab_stats::JobResult;

use super::Warning;
use crate::plan::PlanJob;

/// The first samples' mean over the rest's median above which the start
/// of a run counts as much faster than the rest.
const FAST_START_RATIO: f64 = 2.0;

/// The job's own bandwidth samples: too few, too scattered, or a start
/// much faster than the rest. Samples taken per I/O (a bandwidth log with
/// log_avg_msec=0) say nothing of the run's length or steadiness.
pub(super) fn samples(job: &JobResult, pj: &PlanJob, out: &mut Vec<Warning>) {
    let busiest = job
        .dirs
        .iter()
        .filter(|d| d.total_ios > 0 && !pj.stats.bw_per_io)
        .max_by_key(|d| d.bw_samples.count());
    let Some(d) = busiest else {
        return;
    };
    let n = d.bw_samples.count();
    if n < 5 {
        out.push(Warning::ShortRun {
            job: job.name.clone(),
            samples: n,
        });
        return;
    }
    if let Some((ratio, windows)) = fast_start(&d.bw_series) {
        out.push(Warning::FastStart {
            job: job.name.clone(),
            ratio,
            secs: windows as f64 * pj.stats.bw_avg.as_secs_f64(),
        });
    } else if d.bw_samples.mean() > 0.0 {
        let cv = 100.0 * d.bw_samples.stdev() / d.bw_samples.mean();
        if cv > 25.0 {
            out.push(Warning::Unstable {
                job: job.name.clone(),
                cv_pct: cv,
            });
        }
    }
}

/// Whether a run's bandwidth samples start much faster than they go on:
/// the mean of the first fifth of the samples (one at least) against the
/// median of the rest. Some((ratio, windows)) when it is above
/// `FAST_START_RATIO`, with the number of leading windows still well above
/// the rest (1.5 times its median), which a ramp_time should cover.
pub fn fast_start(series: &[u64]) -> Option<(f64, usize)> {
    let n = series.len();
    if n < 5 {
        return None;
    }
    let head = (n / 5).max(1);
    let head_mean = series[..head].iter().sum::<u64>() as f64 / head as f64;
    let mut rest: Vec<u64> = series[head..].to_vec();
    rest.sort_unstable();
    let m = rest.len();
    let median = if m % 2 == 1 {
        rest[m / 2] as f64
    } else {
        (rest[m / 2 - 1] + rest[m / 2]) as f64 / 2.0
    };
    let ratio = head_mean / median.max(1.0);
    if ratio < FAST_START_RATIO {
        return None;
    }
    let windows = series
        .iter()
        .take_while(|&&v| v as f64 > 1.5 * median)
        .count()
        .max(head);
    Some((ratio, windows))
}

/// A thread on a CPU or ready for one this share of the run (percent)
/// hardly ever waited for anything else.
pub(super) const BUSY_PCT: f64 = 90.0;

/// Percent of the job's runtime its threads were on a CPU or ready to
/// run and waiting for one (a thread that waits for a CPU on a busy
/// machine is as much held back by the CPU as one that runs); None for a
/// job that did not run.
pub(super) fn busy_pct(job: &JobResult) -> Option<f64> {
    // job_runtime of merged clones is already the sum of theirs.
    let runtime = job.runtime_ns as f64;
    let busy = (job.cpu.user_ns + job.cpu.system_ns + job.cpu.run_delay_ns) as f64;
    (job.runtime_ns > 0).then(|| 100.0 * busy / runtime)
}

/// Percent of the job's runtime the threads doing its I/O were on a CPU
/// or ready for one: its own thread and, for io_uring, the kernel workers
/// that do the I/O it hands on (a buffered write on ext4, say) while it
/// sleeps waiting for them. Their sum counts twice what overlaps, which
/// a job that waits for the storage hardly has: its writer sleeps, and
/// the job thread waits for the writer.
pub(super) fn io_busy_pct(job: &JobResult) -> Option<f64> {
    let workers = job.caused_io.map_or(0, |c| c.workers_busy_ns) as f64;
    busy_pct(job).map(|p| p + 100.0 * workers / job.runtime_ns as f64)
}

/// CPU-bound: the job's threads busy nearly all of a run of a second or
/// more, unless that is already explained as writes to the page cache.
pub(super) fn cpu_bound(job: &JobResult, out: &mut Vec<Warning>) {
    if job.runtime_ns < 1_000_000_000
        || out.iter().any(|w| {
            w.job() == job.name
                && matches!(
                    w,
                    Warning::UnwaitedWrites { .. } | Warning::RewrittenInMemory { .. }
                )
        })
    {
        return;
    }
    let Some(pct) = busy_pct(job).filter(|p| *p > BUSY_PCT) else {
        return;
    };
    let on_cpu = (job.cpu.user_ns + job.cpu.system_ns) as f64;
    out.push(Warning::CpuBound {
        job: job.name.clone(),
        busy_pct: pct.min(100.0),
        cpu_pct: (100.0 * on_cpu / job.runtime_ns as f64).min(100.0),
    });
}
