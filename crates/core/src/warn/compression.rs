//! Compression: data the filesystem or the device stored in fewer bytes
//! than the job wrote, judged once the jobs are done and before their
//! files are removed.

use std::path::Path;

use iolab_stats::{Dir, JobResult};

use super::devices::job_disks;
use super::Warning;
use crate::compressing::compressing_under;
use crate::plan::{Plan, PlanJob};
use crate::probe::{mount_of, parse_mountinfo, resolve_existing};

/// Below this share of a file's data stored compressed (percent), the
/// filesystem's compression changes little.
const STORED_PCT: f64 = 10.0;

/// Compression, judged once the jobs are done and before their files are
/// removed (`clones`: the results of the plan's job clones, in order).
/// Where the filesystem tells which extents it stored compressed (btrfs,
/// through FIEMAP), that decides, whatever the data looked like: zeros
/// written into preallocated extents are stored as they are, and a
/// pattern compresses. Elsewhere a compressing mount option or device
/// and compressible data (zeros, a buffer or verify pattern, a
/// compression percentage) say it.
pub fn compression_warnings(plan: &Plan, clones: &[JobResult]) -> Vec<Warning> {
    if !crate::checks::on() {
        return Vec::new();
    }
    let mounts =
        parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let mut out: Vec<Warning> = Vec::new();
    for (pj, job) in plan.jobs.iter().zip(clones) {
        if pj.clone != 0 || !pj.engine.moves_file_data() {
            continue;
        }
        // The job's name, as the result reports it (a merged group's
        // first job).
        let moved = |d: Dir| {
            clones
                .iter()
                .zip(&plan.jobs)
                .filter(|(_, j)| j.name == pj.name)
                .map(|(c, _)| c.dirs[d as usize].io_bytes)
                .sum::<u64>()
        };
        let (read, written) = (moved(Dir::Read), moved(Dir::Write));
        if read + written == 0 || out.iter().any(|w| w.job() == job.name) {
            continue;
        }
        if let Some(w) = compression(plan, pj, &job.name, written > 0, &mounts) {
            out.push(w);
        }
    }
    out
}

/// One job's compression warning, if any.
fn compression(
    plan: &Plan,
    pj: &PlanJob,
    name: &str,
    wrote: bool,
    mounts: &[crate::probe::MountEntry],
) -> Option<Warning> {
    let data = compressible(pj).filter(|_| wrote);
    for jf in &pj.files {
        let pf = &plan.files[jf.file];
        if pf.block_device || pf.char_device {
            continue;
        }
        let path = resolve_existing(&pf.path);
        let Some(m) = mount_of(mounts, &path) else {
            continue;
        };
        let opts = m.options();
        let Some(option) = opts
            .split(',')
            .find(|o| o.starts_with("compress") && !o.ends_with("=no") && *o != "compress=none")
        else {
            continue;
        };
        let warning = |stored_pct| Warning::Compression {
            job: name.to_string(),
            fs: m.fs_type.clone(),
            option: option.to_string(),
            data,
            stored_pct,
        };
        if m.fs_type == "btrfs" {
            if let Some(pct) = stored_compressed_pct(pj, plan) {
                return (pct >= STORED_PCT).then(|| warning(Some(pct)));
            }
        }
        if data.is_some() {
            return Some(warning(None));
        }
    }
    let data = data?;
    for disk in job_disks(plan, pj) {
        if let Some(c) = compressing_under(Path::new("/sys"), &disk) {
            return Some(Warning::CompressingDevice {
                job: name.to_string(),
                device: c.device,
                what: c.what,
                data,
            });
        }
    }
    None
}

/// Of the data in a job's files, the share stored compressed (percent),
/// from their extents; None when no file tells (gone, or no FIEMAP).
fn stored_compressed_pct(pj: &PlanJob, plan: &Plan) -> Option<f64> {
    let mut total = iolab_engine::residency::Stored::default();
    let mut told = false;
    for jf in &pj.files {
        let Ok(f) = std::fs::File::open(&plan.files[jf.file].path) else {
            continue;
        };
        if let Ok(s) = iolab_engine::residency::stored(&f) {
            told = true;
            total.mapped += s.mapped;
            total.encoded += s.encoded;
        }
    }
    (told && total.mapped > 0).then(|| 100.0 * total.encoded as f64 / total.mapped as f64)
}

/// What makes a job's write data compressible, if anything does.
pub(super) fn compressible(job: &PlanJob) -> Option<&'static str> {
    let b = &job.buffers;
    if b.zero {
        Some("zeros (zero_buffers)")
    } else if b.pattern.is_some() {
        Some("a repeated pattern (buffer_pattern)")
    } else if b.compress_percentage.is_some_and(|p| p > 0) {
        Some("compressible data (buffer_compress_percentage)")
    } else if job.verify.as_ref().is_some_and(|v| v.pattern.is_some()) {
        Some("a repeated pattern (verify_pattern)")
    } else {
        None
    }
}
