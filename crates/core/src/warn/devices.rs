//! Where a job's bytes went: the devices under its files, what the run
//! asked of each (which every job's checks share), and the filesystem a
//! file lives on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use iolab_stats::{Dir, JobResult, RunResult};

use crate::diskstats::disks_of;
use crate::plan::{Layout, Plan, PlanJob};

/// What the run asked of each device, which every job's checks share.
pub(super) struct Devices {
    /// Bytes read and written by the jobs whose files are on the device.
    asked: HashMap<String, [u64; 2]>,
    /// Bytes the layout wrote there before the jobs began.
    laid: HashMap<String, u64>,
}

impl Devices {
    pub(super) fn of(plan: &Plan, result: &RunResult) -> Devices {
        let mut asked: HashMap<String, [u64; 2]> = HashMap::new();
        let mut laid: HashMap<String, u64> = HashMap::new();
        for (pf, disk) in plan.files.iter().map(|f| (f, disk_of(&f.path))) {
            if let (Layout::Write, Some(d)) = (pf.layout, &disk) {
                *laid.entry(d.clone()).or_default() +=
                    pf.size.saturating_sub(pf.existing.unwrap_or(0));
            }
        }
        for job in &result.jobs {
            let Some(pj) = plan_job(plan, job) else {
                continue;
            };
            if !pj.engine.moves_file_data() {
                continue;
            }
            for d in job_disks(plan, pj) {
                let a = asked.entry(d).or_default();
                a[0] += job.dirs[Dir::Read as usize].io_bytes;
                a[1] += job.dirs[Dir::Write as usize].io_bytes;
            }
        }
        Devices { asked, laid }
    }

    pub(super) fn asked(&self, disk: &str) -> [u64; 2] {
        self.asked.get(disk).copied().unwrap_or_default()
    }

    pub(super) fn laid(&self, disk: &str) -> u64 {
        self.laid.get(disk).copied().unwrap_or(0)
    }
}

/// Filesystems whose files live in memory.
pub(super) fn is_memory_fs(fs: &str) -> bool {
    matches!(fs, "tmpfs" | "ramfs")
}

/// The nearest part of `path` that exists.
pub(super) fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    while !p.exists() {
        if !p.pop() {
            break;
        }
    }
    p
}

/// The first clone of the plan job a reported job stands for.
pub(super) fn plan_job<'a>(plan: &'a Plan, job: &JobResult) -> Option<&'a PlanJob> {
    plan.jobs
        .iter()
        .find(|j| j.name == job.name && j.groupid == job.groupid)
}

/// The devices under a job's files.
pub(super) fn job_disks(plan: &Plan, job: &PlanJob) -> Vec<String> {
    disks_of(job.files.iter().map(|f| plan.files[f.file].path.as_path()))
}

pub(super) fn disk_of(path: &Path) -> Option<String> {
    disks_of(std::iter::once(path)).into_iter().next()
}
