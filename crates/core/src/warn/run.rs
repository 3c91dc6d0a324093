//! The warnings of a finished run: each job's checks in order, and their
//! place in the jobs' results beside those found before the run.

use iolab_stats::{JobResult, RunResult};

use super::devices::{job_disks, plan_job, Devices};
use super::page_cache::page_cache;
use super::plan::plan_warnings;
use super::samples::{cpu_bound, samples};
use super::Warning;
use crate::plan::Plan;

/// The warnings a finished run raises, attached to its jobs' results: the
/// plan's own (queue depth), those found before the run (`before`, sparse
/// reads) and those from what the run saw.
pub fn attach_run_warnings(plan: &Plan, before: Vec<Warning>, result: &mut RunResult) {
    let found = run_warnings(plan, result);
    for w in plan_warnings(plan).into_iter().chain(before).chain(found) {
        if let Some(job) = result.jobs.iter_mut().find(|j| j.name == w.job()) {
            let jw = w.to_job_warning();
            if !job.warnings.contains(&jw) {
                job.warnings.push(jw);
            }
        }
    }
}

/// The warnings of a finished run, from what it saw.
pub fn run_warnings(plan: &Plan, result: &RunResult) -> Vec<Warning> {
    if !crate::checks::on() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let devices = Devices::of(plan, result);
    for job in &result.jobs {
        let Some(pj) = plan_job(plan, job) else {
            continue;
        };
        // The device-based checks mean nothing for engines that move no
        // data to the files (null, the file-operation engines).
        if pj.engine.moves_file_data() {
            let disks: Vec<&iolab_stats::DiskResult> = {
                let names = job_disks(plan, pj);
                result
                    .disks
                    .iter()
                    .filter(|d| names.contains(&d.name))
                    .collect()
            };
            page_cache(plan, job, pj, &disks, &devices, &mut out);
            others_on_device(job, &disks, &devices, &mut out);
        }
        samples(job, pj, &mut out);
        cpu_bound(job, &mut out);
    }
    out
}

/// Others on the device: far more I/O than the run and its layout asked.
fn others_on_device(
    job: &JobResult,
    disks: &[&iolab_stats::DiskResult],
    devices: &Devices,
    out: &mut Vec<Warning>,
) {
    for disk in disks {
        let a = devices.asked(&disk.name);
        let expected = a[0] + a[1] + devices.laid(&disk.name);
        let seen = disk.read_bytes + disk.write_bytes;
        if seen > 2 * expected + (64 << 20) {
            out.push(Warning::OthersOnDevice {
                job: job.name.clone(),
                device: disk.name.clone(),
                device_mib: seen >> 20,
                job_mib: expected >> 20,
            });
        }
    }
}
