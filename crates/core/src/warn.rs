//! Warnings: when a number will not measure what it looks like. One enum,
//! each variant saying what was seen, why it matters and what to do; the
//! CLI prints them and the JSON will carry them with their codes.

use std::fmt;

use crate::plan::Plan;

/// Something about a job that makes its numbers misleading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// iodepth above 1 that the engine cannot reach.
    QueueDepthNotReached {
        job: String,
        engine: String,
        iodepth: u32,
        why: &'static str,
        fix: &'static str,
    },
}

impl Warning {
    /// A stable code for machines.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::QueueDepthNotReached { .. } => "queue-depth-not-reached",
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::QueueDepthNotReached {
                job,
                engine,
                iodepth,
                why,
                fix,
            } => write!(
                f,
                "job `{job}`: iodepth={iodepth} will not be reached with ioengine={engine}: {why}; {fix}"
            ),
        }
    }
}

/// The warnings a plan raises before it runs, one per job (not per clone).
pub fn plan_warnings(plan: &Plan) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for job in plan.jobs.iter().filter(|j| j.clone == 0) {
        if job.iodepth <= 1 {
            continue;
        }
        let (why, fix) = match job.engine.as_str() {
            "libaio" if !job.direct => (
                "without direct=1 the kernel completes each I/O inside io_submit, one at a time",
                "use direct=1, or ioengine=io_uring for buffered I/O",
            ),
            "sync" | "psync" | "pvsync" | "pvsync2" | "vsync" | "null" | "mmap" => (
                "a synchronous engine has one I/O in flight at a time",
                "use ioengine=io_uring or libaio (with direct=1), or numjobs for parallel I/O",
            ),
            _ => continue,
        };
        out.push(Warning::QueueDepthNotReached {
            job: job.name.clone(),
            engine: job.engine.clone(),
            iodepth: job.iodepth,
            why,
            fix,
        });
    }
    out
}
