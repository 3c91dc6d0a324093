//! Warnings known before the run: from the plan alone (a queue depth the
//! engine cannot reach) and from the files it will read (holes).

use iolab_engine::EngineKind;

use super::Warning;
use crate::plan::{Layout, Plan};

/// The warnings a plan raises before it runs, one per job (not per clone).
pub fn plan_warnings(plan: &Plan) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for job in plan.jobs.iter().filter(|j| j.clone == 0) {
        if job.iodepth <= 1 {
            continue;
        }
        let (why, fix) = match job.engine {
            EngineKind::Libaio if !job.direct => (
                "without direct=1 the kernel completes each I/O inside io_submit, one at a time",
                "use direct=1, or ioengine=io_uring for buffered I/O",
            ),
            e if e.synchronous() => (
                "a synchronous engine has one I/O in flight at a time",
                "use ioengine=io_uring or libaio (with direct=1), or numjobs for parallel I/O",
            ),
            _ => continue,
        };
        out.push(Warning::QueueDepthNotReached {
            job: job.name.clone(),
            engine: job.engine,
            iodepth: job.iodepth,
            why,
            fix,
        });
    }
    out
}

/// Reads the run will make of ranges never written: holes and unwritten
/// extents in files that exist before the run and that no job of the plan
/// writes. Checked before the run: reading an unwritten extent through the
/// page cache makes it look like data afterwards.
pub fn sparse_reads(plan: &Plan) -> Vec<Warning> {
    if !crate::checks::on() {
        return Vec::new();
    }
    let written: Vec<usize> = plan
        .jobs
        .iter()
        .filter(|j| j.rw.mode.writes())
        .flat_map(|j| j.files.iter().map(|f| f.file))
        .collect();
    let mut out = Vec::new();
    for job in plan
        .jobs
        .iter()
        .filter(|j| j.clone == 0 && j.rw.mode.reads())
    {
        for jf in &job.files {
            let pf = &plan.files[jf.file];
            if pf.block_device
                || pf.char_device
                || pf.layout != Layout::AsIs
                || written.contains(&jf.file)
            {
                continue;
            }
            if let Ok(h) = iolab_engine::file::hole_bytes(&pf.path, jf.offset, jf.len) {
                if jf.len > 0 && h > 0 {
                    out.push(Warning::SparseReads {
                        job: job.name.clone(),
                        file: pf.path.display().to_string(),
                        hole_pct: 100.0 * h as f64 / jf.len as f64,
                    });
                    break;
                }
            }
        }
    }
    out
}
