//! Parameter sweeps (`iolab sweep`): a base job run at every point of a
//! grid of option values. This module owns the grid (axes parsed from
//! `--bs 1k..1g`, value lists, `--sync none,dsync,fsync-at-end` and
//! `--vary OPTION=V1,V2`), the check of every value, every point and every
//! place a file will be made before anything runs (an option the grid
//! gives twice, under any of its names, is refused), the runs themselves
//! (repeats interleaved so that a drift of the machine touches every point
//! alike), the reduction of each run's `RunResult` to a [`PointRun`], and
//! the cleanup after a run fails: the points that ran are kept, the files
//! the sweep made are removed. A grid flag given a single value sets its
//! option at every point and makes no axis.
//!
//! The base job's `size` stays as given at every point, so each point
//! moves the same bytes whatever its block size (as `dd bs=X count=N/X`
//! does). [`run_sweep`] is the whole study: base and axes in,
//! [`SweepResult`] out.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use iolab_engine::fsops;
use iolab_spec::error::Location;
use iolab_spec::raw::{RawOption, RawSection};
use iolab_spec::resolve::{find_option, resolve, Sources};
use iolab_spec::value::size::parse_size;
use iolab_spec::value::KbBase;
use iolab_spec::{Context, Opt, SpecError};
use iolab_stats::repeat_rule::{outcome, should_stop};
use iolab_stats::sweep::{PointMetric, PointRun, SweepAxis, SweepFailure, SweepPoint, SweepResult};
use iolab_stats::{Dir, LatHist, Moments, RepeatRule, RunResult, StopReason};

use crate::plan::{build, Plan};
use crate::run::run;

/// Points a sweep may have at most.
pub const MAX_POINTS: usize = 10_000;

/// Why a sweep cannot run: a grid value, the base job or a place for its
/// files is wrong. Nothing ran and nothing was created. (A run that fails
/// mid-sweep is part of the [`SweepResult`], with the points before it.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Invalid(String),
}

/// One axis of the grid: its name, its values as written, and the job
/// options each value sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridAxis {
    /// The flag that made it (`bs`, `sync`, or the `--vary` option).
    pub name: String,
    pub values: Vec<String>,
    /// Per value, the options it sets (name, value).
    pub sets: Vec<Vec<(String, String)>>,
}

fn invalid(msg: impl Into<String>) -> SweepError {
    SweepError::Invalid(msg.into())
}

/// A size as fio's suffixes would write it: 4096 -> "4k", 1 << 30 -> "1g".
pub fn size_label(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// `--bs`: a range `LO..HI` of powers of two times `LO` (`1k..1g`), or a
/// comma list of sizes.
pub fn bs_axis(spec: &str) -> Result<GridAxis, SweepError> {
    let size = |t: &str| {
        parse_size(t, KbBase::K1024)
            .map_err(|e| invalid(format!("--bs `{spec}`: `{t}`: {e}")))
            .and_then(|v| {
                if v == 0 {
                    Err(invalid(format!("--bs `{spec}`: a block size of 0")))
                } else {
                    Ok(v)
                }
            })
    };
    let values: Vec<u64> = if let Some((lo, hi)) = spec.split_once("..") {
        let (lo, hi) = (size(lo.trim())?, size(hi.trim())?);
        if lo > hi {
            return Err(invalid(format!(
                "--bs `{spec}`: the range runs down ({} is above {}); write it low..high",
                size_label(lo),
                size_label(hi)
            )));
        }
        let mut v = Vec::new();
        let mut b = lo;
        while b <= hi {
            v.push(b);
            match b.checked_mul(2) {
                Some(n) => b = n,
                None => break,
            }
        }
        v
    } else {
        split_list("--bs", spec)?
            .iter()
            .map(|t| size(t))
            .collect::<Result<_, _>>()?
    };
    // The job gets the byte count, which means the same whatever the base
    // job's kb_base; the label is for people.
    Ok(GridAxis {
        name: "bs".into(),
        sets: values
            .iter()
            .map(|b| vec![("bs".into(), b.to_string())])
            .collect(),
        values: values.iter().map(|&b| size_label(b)).collect(),
    })
}

fn split_list(flag: &str, spec: &str) -> Result<Vec<String>, SweepError> {
    let values: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(invalid(format!(
            "{flag} `{spec}`: an empty value in the list"
        )));
    }
    Ok(values)
}

/// A comma list of values of one fio option (`--iodepth 1,4,16`).
pub fn list_axis(option: &str, spec: &str) -> Result<GridAxis, SweepError> {
    let raw = RawOption {
        name: option.to_string(),
        value: None,
        location: Location::Builtin,
    };
    find_option(&raw).map_err(|e| invalid(format!("--vary {option}: {}", e.message)))?;
    let values = split_list(&format!("--{option}"), spec)?;
    Ok(GridAxis {
        name: option.to_string(),
        sets: values
            .iter()
            .map(|v| vec![(option.to_string(), v.clone())])
            .collect(),
        values,
    })
}

/// `--vary OPTION=V1,V2,...`.
pub fn vary_axis(spec: &str) -> Result<GridAxis, SweepError> {
    let Some((opt, values)) = spec.split_once('=') else {
        return Err(invalid(format!(
            "--vary `{spec}`: expected OPTION=V1,V2,..."
        )));
    };
    list_axis(opt.trim(), values)
}

/// `--sync`: how writes are made durable. `none` (buffered), `sync`
/// (O_SYNC), `dsync` (O_DSYNC), `fsync-at-end` (one fsync when the job
/// has written everything, fio's `end_fsync`).
pub fn sync_axis(spec: &str) -> Result<GridAxis, SweepError> {
    let values = split_list("--sync", spec)?;
    let mut sets = Vec::new();
    for v in &values {
        let set: Vec<(String, String)> = match v.as_str() {
            "none" => vec![
                ("sync".into(), "none".into()),
                ("end_fsync".into(), "0".into()),
            ],
            "sync" | "dsync" => vec![("sync".into(), v.clone()), ("end_fsync".into(), "0".into())],
            "fsync-at-end" => vec![
                ("sync".into(), "none".into()),
                ("end_fsync".into(), "1".into()),
            ],
            other => {
                return Err(invalid(format!(
                    "--sync `{other}`: expected none, sync, dsync or fsync-at-end"
                )))
            }
        };
        sets.push(set);
    }
    Ok(GridAxis {
        name: "sync".into(),
        values,
        sets,
    })
}

/// The base job with options appended to every job section, where they
/// override what the base says. Options given before any `--name` with no
/// job at all make one job named `sweep`.
pub fn with_options(base: &Sources, options: &[(String, String)]) -> Sources {
    let mut src = base.clone();
    if src.cmd_jobs.iter().all(RawSection::is_global) && src.files.is_empty() {
        src.cmd_jobs.push(RawSection {
            name: "sweep".into(),
            location: Location::Builtin,
            options: vec![raw("name", "sweep")],
        });
    }
    let extra: Vec<RawOption> = options.iter().map(|(n, v)| raw(n, v)).collect();
    for job in src.cmd_jobs.iter_mut().filter(|j| !j.is_global()) {
        job.options.extend(extra.iter().cloned());
    }
    for (_, sections) in &mut src.files {
        for s in sections.iter_mut().filter(|s| !s.is_global()) {
            s.options.extend(extra.iter().cloned());
        }
    }
    src
}

fn raw(name: &str, value: &str) -> RawOption {
    RawOption {
        name: name.to_string(),
        value: Some(value.to_string()),
        location: Location::Builtin,
    }
}

/// One point of the grid, checked and planned.
pub struct PreparedPoint {
    pub values: Vec<String>,
    pub plan: Plan,
}

/// A grid checked and planned: the axes that vary (a grid flag given one
/// value sets its option at every point and is no axis), every point, and
/// the files the points will create.
pub struct Prepared {
    pub axes: Vec<GridAxis>,
    pub points: Vec<PreparedPoint>,
    /// Files that do not exist yet: what the sweep creates, removed again
    /// when it fails or is interrupted.
    pub new_files: Vec<PathBuf>,
}

/// A point's name for messages: `bs=4k iodepth=16`.
fn point_label(axes: &[GridAxis], values: &[String]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={v}", a.name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A job-text error's message; the `built-in` location of the options the
/// grid adds says nothing to the user.
fn spec_message(e: SpecError) -> String {
    match e.location {
        Location::Builtin => e.message,
        _ => e.to_string(),
    }
}

fn plan_of(base: &Sources, options: &[(String, String)], ctx: &Context) -> Result<Plan, String> {
    let jobs = resolve(&with_options(base, options), ctx).map_err(spec_message)?;
    build(&jobs).map_err(|e| e.to_string())
}

/// Refuses two axes that set one option, under any of its names
/// (`--bs` and `--vary blocksize`, `--sync` and `--vary end_fsync`).
fn check_distinct(axes: &[GridAxis]) -> Result<(), SweepError> {
    let mut seen: Vec<(Opt, &str)> = Vec::new();
    for axis in axes {
        let mut own: Vec<Opt> = Vec::new();
        for (name, _) in axis.sets.iter().flatten() {
            let raw = RawOption {
                name: name.clone(),
                value: None,
                location: Location::Builtin,
            };
            let opt = find_option(&raw).map_err(|e| invalid(spec_message(e)))?;
            if own.contains(&opt) {
                continue;
            }
            if let Some((_, other)) = seen.iter().find(|(o, _)| *o == opt) {
                let how = if *other == axis.name {
                    format!("`{other}` twice")
                } else {
                    format!("as `{other}` and as `{}`", axis.name)
                };
                return Err(invalid(format!(
                    "the grid sets the option `{}` twice ({how}); give it once",
                    opt.name()
                )));
            }
            own.push(opt);
        }
        seen.extend(own.into_iter().map(|o| (o, axis.name.as_str())));
    }
    Ok(())
}

/// Checks that a file the sweep would create can be made: its directory
/// exists and the process may write in it.
fn check_place(path: &Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "`{}`: the directory `{}` does not exist",
            path.display(),
            dir.display()
        )),
        Err(e) => Err(format!("`{}`: {e}", dir.display())),
        Ok(m) if !m.is_dir() => Err(format!(
            "`{}`: `{}` is not a directory",
            path.display(),
            dir.display()
        )),
        Ok(_) => {
            let c = CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| format!("`{}`: the path holds a NUL byte", dir.display()))?;
            if fsops::can_write_dir(&c) {
                Ok(())
            } else {
                Err(format!(
                    "`{}`: the directory `{}` is not writable",
                    path.display(),
                    dir.display()
                ))
            }
        }
    }
}

/// Checks each value of each axis on its own, that no option is given
/// twice, and that every file the points would create can be made; then
/// plans every point. A bad value is named before anything runs.
pub fn prepare(base: &Sources, axes: &[GridAxis], ctx: &Context) -> Result<Prepared, SweepError> {
    plan_of(base, &[], ctx).map_err(|e| invalid(format!("the base job: {e}")))?;
    check_distinct(axes)?;
    for axis in axes {
        if axis.values.is_empty() {
            return Err(invalid(format!("--{}: no values", axis.name)));
        }
        for (v, set) in axis.values.iter().zip(&axis.sets) {
            plan_of(base, set, ctx)
                .map_err(|e| invalid(format!("--{} value `{v}`: {e}", axis.name)))?;
        }
    }
    let (fixed, axes): (Vec<&GridAxis>, Vec<&GridAxis>) =
        axes.iter().partition(|a| a.values.len() == 1);
    let fixed: Vec<(String, String)> = fixed.iter().flat_map(|a| a.sets[0].clone()).collect();
    let axes: Vec<GridAxis> = axes.into_iter().cloned().collect();
    let count = axes
        .iter()
        .fold(1usize, |n, a| n.saturating_mul(a.values.len()));
    if count > MAX_POINTS {
        return Err(invalid(format!(
            "the grid has {count} points, more than {MAX_POINTS}"
        )));
    }
    let mut points = Vec::with_capacity(count);
    let mut new_files: Vec<PathBuf> = Vec::new();
    for k in 0..count {
        // Mixed radix, the first axis varying slowest.
        let mut idx = vec![0; axes.len()];
        let mut rest = k;
        for (i, axis) in axes.iter().enumerate().rev() {
            idx[i] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        let values: Vec<String> = axes
            .iter()
            .zip(&idx)
            .map(|(a, &i)| a.values[i].clone())
            .collect();
        let mut options = fixed.clone();
        options.extend(
            axes.iter()
                .zip(&idx)
                .flat_map(|(a, &i)| a.sets[i].iter().cloned()),
        );
        let plan = plan_of(base, &options, ctx)
            .map_err(|e| invalid(format!("{}: {e}", point_label(&axes, &values))))?;
        for f in plan.files.iter().filter(|f| !f.block_device) {
            if f.existing.is_none() && !new_files.contains(&f.path) {
                check_place(&f.path).map_err(invalid)?;
                new_files.push(f.path.clone());
            }
        }
        points.push(PreparedPoint { values, plan });
    }
    Ok(Prepared {
        axes,
        points,
        new_files,
    })
}

/// The headline numbers of one run.
pub fn point_run(r: &RunResult) -> PointRun {
    let mut out = PointRun::default();
    let mut hist = LatHist::new();
    let mut clat = Moments::new();
    for j in &r.jobs {
        out.read_bytes += j.dir(Dir::Read).io_bytes;
        out.write_bytes += j.dir(Dir::Write).io_bytes;
        out.runtime_ns = out.runtime_ns.max(j.runtime_ns);
        for d in Dir::ALL {
            let dr = j.dir(d);
            if dr.runtime_ns > 0 {
                out.iops += dr.total_ios as f64 * 1e9 / dr.runtime_ns as f64;
            }
            hist.merge(&dr.clat.hist);
            clat.merge(&dr.clat.moments);
        }
    }
    for g in &r.groups {
        out.read_bw += g.dirs[Dir::Read as usize].agg_bw_bytes as f64;
        out.write_bw += g.dirs[Dir::Write as usize].agg_bw_bytes as f64;
    }
    out.clat_mean_ns = clat.mean();
    out.clat_p99_ns = hist.percentiles(&[99.0]).first().map(|&(_, v)| v);
    out
}

/// [`run_sweep_until`] with exactly `repeat` runs per point.
pub fn run_sweep(
    base: &Sources,
    axes: &[GridAxis],
    repeat: u32,
    ctx: &Context,
    stop: &AtomicBool,
    on_run: &mut dyn FnMut(&str, u32),
) -> Result<SweepResult, SweepError> {
    let rule = RepeatRule::Times { runs: repeat };
    run_sweep_until(base, axes, &rule, ctx, stop, on_run)
}

/// Each point's MB/s in the rounds so far: what `--repeat auto` judges.
fn round_figures(r: &SweepResult) -> Vec<(String, Vec<f64>)> {
    r.points
        .iter()
        .map(|p| {
            let values = p
                .runs
                .iter()
                .filter_map(|x| PointMetric::Mbps.of(x))
                .collect();
            let label: Vec<String> = r
                .axes
                .iter()
                .zip(&p.values)
                .map(|(a, v)| format!("{}={v}", a.name))
                .collect();
            (format!("{} MB/s", label.join(" ")), values)
        })
        .collect()
}

/// Runs every point of the grid in rounds (one run of each point per
/// round, interleaved so that drift spreads over all points) until `rule`
/// says stop: after `N` rounds, or (auto) once every point's MB/s is
/// known within the width or a budget is spent. Stops at the first
/// failed run or at Ctrl-C; the files the sweep created are removed after
/// a failure. A sweep that can repeat records what stopped it.
pub fn run_sweep_until(
    base: &Sources,
    axes: &[GridAxis],
    rule: &RepeatRule,
    ctx: &Context,
    stop: &AtomicBool,
    on_run: &mut dyn FnMut(&str, u32),
) -> Result<SweepResult, SweepError> {
    if rule.max_runs() == 0 {
        return Err(invalid("--repeat 0: each point needs at least one run"));
    }
    let prepared = prepare(base, axes, ctx)?;
    let axes = &prepared.axes;
    let mut result = SweepResult {
        axes: axes
            .iter()
            .map(|a| SweepAxis {
                name: a.name.clone(),
                values: a.values.clone(),
            })
            .collect(),
        points: prepared
            .points
            .iter()
            .map(|p| SweepPoint {
                values: p.values.clone(),
                ..SweepPoint::default()
            })
            .collect(),
        ..SweepResult::default()
    };
    let started = std::time::Instant::now();
    let mut rounds = 0u32;
    let stopped = 'runs: loop {
        if let Some(why) = should_stop(rule, rounds, started.elapsed(), &round_figures(&result)) {
            break why;
        }
        for (p, out) in prepared.points.iter().zip(result.points.iter_mut()) {
            let label = point_label(axes, &p.values);
            if stop.load(Ordering::Relaxed) {
                result.interrupted = true;
                break 'runs StopReason::Interrupted;
            }
            on_run(&label, rounds);
            let outcome = match run(&p.plan, stop, &mut |_| {}) {
                Ok(o) => o,
                Err(e) => {
                    result.failure = Some(SweepFailure {
                        point: label,
                        message: e.to_string(),
                    });
                    break 'runs StopReason::Failed;
                }
            };
            if outcome.result.interrupted {
                result.interrupted = true;
                break 'runs StopReason::Interrupted;
            }
            if let Some(message) = outcome.failure {
                result.failure = Some(SweepFailure {
                    point: label,
                    message,
                });
                break 'runs StopReason::Failed;
            }
            for w in outcome.result.jobs.iter().flat_map(|j| &j.warnings) {
                if !out.warnings.iter().any(|x| x.code == w.code) {
                    out.warnings.push(w.clone());
                }
            }
            out.runs.push(point_run(&outcome.result));
        }
        rounds += 1;
    };
    result.repeat = result
        .points
        .iter()
        .map(|p| p.runs.len() as u32)
        .max()
        .unwrap_or(0);
    if rule.repeats() {
        let figures = round_figures(&result);
        result.repeat_outcome = Some(outcome(rule, rounds, stopped, started.elapsed(), &figures));
    }
    if !result.complete() {
        result.points.retain(|p| !p.runs.is_empty());
        for f in &prepared.new_files {
            let _ = std::fs::remove_file(f);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_spec::Host;

    fn ctx() -> Context {
        Context::fixed(Host::EXAMPLE)
    }

    #[test]
    fn bs_ranges_double() {
        let a = bs_axis("4k..64k").unwrap();
        assert_eq!(a.values, ["4k", "8k", "16k", "32k", "64k"]);
        assert_eq!(a.sets[0], [("bs".to_string(), "4096".to_string())]);
        assert_eq!(bs_axis("1k..1g").unwrap().values.len(), 21);
        assert_eq!(bs_axis("512,4k").unwrap().values, ["512", "4k"]);
        assert_eq!(bs_axis("3k..12k").unwrap().values, ["3k", "6k", "12k"]);
        let e = bs_axis("1g..1k").unwrap_err().to_string();
        assert!(e.contains("1g..1k") && e.contains("runs down"), "{e}");
        assert!(bs_axis("4q..8k").unwrap_err().to_string().contains("4q"));
        assert!(bs_axis("0..8k").is_err());
        assert!(bs_axis("4k,,8k").is_err());
    }

    #[test]
    fn sync_and_vary_axes() {
        let s = sync_axis("none,dsync,fsync-at-end").unwrap();
        assert_eq!(s.sets[1][0], ("sync".to_string(), "dsync".to_string()));
        assert_eq!(s.sets[2][1], ("end_fsync".to_string(), "1".to_string()));
        assert!(sync_axis("always")
            .unwrap_err()
            .to_string()
            .contains("always"));
        let v = vary_axis("rwmixread=10,50").unwrap();
        assert_eq!((v.name.as_str(), v.values.len()), ("rwmixread", 2));
        let e = vary_axis("blocksizee=4k").unwrap_err().to_string();
        assert!(e.contains("blocksizee"), "{e}");
        assert!(vary_axis("bs").is_err());
    }

    #[test]
    fn options_override_the_base() {
        let src = Sources {
            global: vec![raw("bs", "4k"), raw("size", "1m"), raw("rw", "write")],
            ..Sources::default()
        };
        let jobs = resolve(&with_options(&src, &[("bs".into(), "64k".into())]), &ctx()).unwrap();
        assert_eq!(jobs.jobs.len(), 1);
        assert_eq!(jobs.jobs[0].name, "sweep");
        let text = jobs.to_job_text();
        assert!(text.contains("bs=64k") && !text.contains("bs=4k"), "{text}");
    }

    #[test]
    fn a_swept_block_size_is_the_same_bytes_whatever_the_base_jobs_kb_base() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f").display().to_string();
        let src = Sources {
            global: vec![
                raw("kb_base", "1000"),
                raw("size", "1m"),
                raw("rw", "read"),
                raw("direct", "1"),
                raw("filename", &f),
            ],
            ..Sources::default()
        };
        let p = prepare(&src, &[bs_axis("4k,16k").unwrap()], &ctx()).unwrap();
        let bs: Vec<u64> = p
            .points
            .iter()
            .map(|pt| pt.plan.jobs[0].bs[0].min())
            .collect();
        assert_eq!(bs, [4096, 16384]);
        assert_eq!(p.points[0].values, ["4k"]);
    }

    #[test]
    fn bad_values_are_named_before_anything_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f").display().to_string();
        let src = Sources {
            global: vec![raw("size", "1m"), raw("rw", "write"), raw("filename", &f)],
            ..Sources::default()
        };
        let axes = [list_axis("iodepth", "1,zero").unwrap()];
        let err = match prepare(&src, &axes, &ctx()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("iodepth=zero was accepted"),
        };
        assert!(err.contains("--iodepth value `zero`"), "{err}");
        assert!(!err.contains("built-in"), "{err}");
        let axes = [list_axis("rw", "read,sideways").unwrap()];
        assert!(prepare(&src, &axes, &ctx()).is_err());
        assert!(!tmp.path().join("f").exists());
    }

    fn err_of(src: &Sources, axes: &[GridAxis]) -> String {
        match prepare(src, axes, &ctx()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{axes:?} was accepted"),
        }
    }

    #[test]
    fn an_option_set_twice_under_any_name_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f").display().to_string();
        let src = Sources {
            global: vec![raw("size", "1m"), raw("rw", "write"), raw("filename", &f)],
            ..Sources::default()
        };
        let e = err_of(
            &src,
            &[bs_axis("4k").unwrap(), vary_axis("blocksize=8k").unwrap()],
        );
        assert!(e.contains("`bs` twice") && e.contains("`blocksize`"), "{e}");
        let e = err_of(
            &src,
            &[
                sync_axis("none,fsync-at-end").unwrap(),
                vary_axis("end_fsync=0,1").unwrap(),
            ],
        );
        assert!(e.contains("`end_fsync` twice"), "{e}");
        let e = err_of(
            &src,
            &[
                vary_axis("iodepth=1,2").unwrap(),
                vary_axis("iodepth=4").unwrap(),
            ],
        );
        assert!(e.contains("(`iodepth` twice)"), "{e}");
        // Different options are fine.
        assert!(prepare(
            &src,
            &[bs_axis("4k,8k").unwrap(), vary_axis("iodepth=1,2").unwrap()],
            &ctx()
        )
        .is_ok());
    }

    #[test]
    fn a_single_value_sets_its_option_without_an_axis() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f").display().to_string();
        let src = Sources {
            global: vec![raw("size", "1m"), raw("filename", &f)],
            ..Sources::default()
        };
        let p = match prepare(
            &src,
            &[
                bs_axis("4k,8k").unwrap(),
                list_axis("rw", "randwrite").unwrap(),
            ],
            &ctx(),
        ) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let names: Vec<&str> = p.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["bs"]);
        assert_eq!(p.points.len(), 2);
        for point in &p.points {
            assert!(point.plan.jobs[0].rw.mode.writes());
            assert!(
                point.plan.jobs[0].rw.mode.is_random(),
                "rw=randwrite is set"
            );
        }
        assert_eq!(p.new_files, [tmp.path().join("f")]);
    }

    #[test]
    fn a_place_where_no_file_can_be_made_is_refused() {
        let src = |filename: &str| Sources {
            global: vec![
                raw("size", "1m"),
                raw("rw", "write"),
                raw("filename", filename),
            ],
            ..Sources::default()
        };
        let axes = [bs_axis("4k,8k").unwrap()];
        let e = err_of(&src("/nonexistent-iolab/x"), &axes);
        assert!(e.contains("`/nonexistent-iolab` does not exist"), "{e}");
        let tmp = tempfile::tempdir().unwrap();
        let plain = tmp.path().join("plain");
        std::fs::write(&plain, b"").unwrap();
        let e = err_of(&src(&format!("{}/x", plain.display())), &axes);
        assert!(e.contains("is not a directory"), "{e}");
        // An existing file is used where it is.
        assert!(prepare(&src(&plain.display().to_string()), &axes, &ctx()).is_ok());
    }

    #[test]
    fn a_failed_point_keeps_the_points_before_it_and_removes_the_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().display().to_string();
        // Points 1 and 2 write the file with verify headers of their kind;
        // point 3 reads it expecting crc32c headers and finds md5 ones.
        let src = Sources {
            global: vec![
                raw("size", "64k"),
                raw("bs", "4k"),
                raw("directory", &dir),
                raw("ioengine", "psync"),
            ],
            ..Sources::default()
        };
        let axes = [
            list_axis("rw", "write,read").unwrap(),
            vary_axis("verify=crc32c,md5").unwrap(),
        ];
        let stop = AtomicBool::new(false);
        let r = run_sweep(&src, &axes, 1, &ctx(), &stop, &mut |_, _| {}).unwrap();
        let f = r.failure.as_ref().expect("the third point fails");
        assert_eq!(f.point, "rw=read verify=crc32c");
        assert!(!r.interrupted);
        let ran: Vec<&[String]> = r.points.iter().map(|p| &p.values[..]).collect();
        assert_eq!(ran, [["write", "crc32c"], ["write", "md5"]]);
        assert_eq!(r.points[0].runs[0].write_bytes, 64 << 10);
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(1 << 30), "1g");
        assert_eq!(size_label(1536), "1536");
        assert_eq!(size_label(3 << 10), "3k");
    }
}
