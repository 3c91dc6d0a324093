//! The job-control options fio offers beside the I/O pattern, checked and
//! typed: strided zones (`zonemode=strided`, `zonesize`, `zonerange`,
//! `zoneskip`), flow control between jobs (`flow`, `flow_id`,
//! `flow_sleep`) and the search for a queue depth that meets a latency
//! target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), and steady-state detection (`steadystate`, `ss_dur`,
//! `ss_ramp`). The worker carries out the first three
//! (`worker::control`); the run watches for steady state (`steady`).

use std::time::Duration;

use iolab_spec::options::choices::ZoneMode;
use iolab_spec::value::size::parse_size;
use iolab_spec::value::SizeValue;
use iolab_spec::{JobSet, JobSpec, Opt, Value};
use iolab_stats::SteadyRule;

use super::build::Ctx;
use super::{PlanError, PlanJob};

/// `zonemode=strided`: the job does `size` bytes of I/O in a zone of
/// `range` bytes, then moves `range + skip` bytes on, and back to the
/// start of its region past the file's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    /// `zonesize`: bytes of I/O per zone.
    pub size: u64,
    /// `zonerange`: the zone's length (`zonesize` when not given).
    pub range: u64,
    /// `zoneskip`: bytes between the end of one zone and the next.
    pub skip: u64,
}

/// `flow`: the job's I/Os are held to `weight` parts of those of every job
/// with the same `flow_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u64,
    pub weight: u32,
    /// `flow_sleep`: how long a job that got ahead waits (after its I/Os
    /// in flight) before it tries again; zero retries at once.
    pub sleep: Duration,
}

/// `latency_target`: the job starts at queue depth 1 and doubles it (then
/// bisects) while a window's I/Os meet the target, up to `iodepth`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// Total latency (submission to completion) an I/O may take.
    pub target: Duration,
    /// How long each depth is tried before it is judged.
    pub window: Duration,
    /// Percent of a window's I/Os that must meet the target; at 100 the
    /// first I/O over it lowers the depth at once.
    pub percentile: f64,
    /// `latency_run`: go on adjusting the depth instead of stopping once
    /// the depth is found.
    pub run: bool,
}

/// `steadystate` with a window (`ss_dur`): the job ends once the rule
/// holds over the window's samples, taken once a second after `ramp`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadySpec {
    pub rule: SteadyRule,
    /// `ss_ramp`: samples start one second after this much of the job.
    pub ramp: Duration,
}

fn bytes(job: &JobSpec, opt: Opt) -> u64 {
    match job.size(opt) {
        Some(SizeValue::Bytes(n)) => n,
        _ => 0,
    }
}

/// The job's strided zones, if it asks for them; fio's checks: `zonesize`
/// is needed, and meaningless without a zone mode.
pub(super) fn strided_zones(cx: &Ctx) -> Result<Option<StridedZones>, PlanError> {
    let job = cx.job;
    let size = bytes(job, Opt::Zonesize);
    match job.chosen(Opt::Zonemode).unwrap_or_default() {
        ZoneMode::Strided => {
            if size == 0 {
                return Err(cx.err(
                    Some(Opt::Zonemode),
                    "zonemode=strided needs zonesize= (the bytes of I/O in each zone), as in fio",
                ));
            }
            let range = match bytes(job, Opt::Zonerange) {
                0 => size,
                n => n,
            };
            Ok(Some(StridedZones {
                size,
                range,
                skip: bytes(job, Opt::Zoneskip),
            }))
        }
        ZoneMode::Zbd => Ok(None),
        ZoneMode::None if size > 0 => Err(cx.err(
            Some(Opt::Zonesize),
            "zonesize= needs zonemode=strided (or zbd): with zonemode=none it means nothing, and fio refuses it too",
        )),
        ZoneMode::None => Ok(None),
    }
}

/// The job's share of its flow, if it has a weight.
pub(super) fn flow(cx: &Ctx) -> Option<FlowSpec> {
    let job = cx.job;
    // fio keeps the weight in an unsigned 32-bit field: a negative one
    // (fio's butterfly example has `flow=-2`) becomes 2^32 - 2, the weight
    // fio then gives it.
    let weight = job.int(Opt::Flow).unwrap_or(0) as u32;
    (weight > 0).then(|| FlowSpec {
        id: job.int(Opt::FlowId).unwrap_or(0).max(0) as u64,
        weight,
        sleep: Duration::from_micros(job.int(Opt::FlowSleep).unwrap_or(0).max(0) as u64),
    })
}

/// The job's latency target, if it sets one.
pub(super) fn latency_target(cx: &Ctx) -> Result<Option<LatencyTarget>, PlanError> {
    let job = cx.job;
    let target = job.time_us(Opt::LatencyTarget).unwrap_or(0);
    if target == 0 {
        return Ok(None);
    }
    let percentile = match job.value(Opt::LatencyPercentile) {
        Some(Value::Floats(f)) => f.first().copied().unwrap_or(100.0),
        _ => 100.0,
    };
    if !(0.0..=100.0).contains(&percentile) {
        return Err(cx.err(
            Some(Opt::LatencyPercentile),
            format!("latency_percentile={percentile} is not a percentage (0 to 100)"),
        ));
    }
    Ok(Some(LatencyTarget {
        target: Duration::from_micros(target),
        window: Duration::from_micros(job.time_us(Opt::LatencyWindow).unwrap_or(0)),
        percentile,
        run: job.flag(Opt::LatencyRun),
    }))
}

/// The job's steady-state detection, when `ss_dur` sets a window. The
/// rule is fio's: `iops`, `iops_slope`, `bw` or `bw_slope`, a colon and a
/// limit, in percent of the window's mean with `%`, else absolute (IOPS,
/// or bytes/s with fio's size suffixes for bandwidth).
pub(super) fn steadystate(cx: &Ctx) -> Result<Option<SteadySpec>, PlanError> {
    let job = cx.job;
    // fio keeps the window in whole seconds.
    let dur = job.time_us(Opt::SteadystateDuration).unwrap_or(0) / 1_000_000;
    let text = job.text(Opt::Steadystate);
    let text = text.as_deref().unwrap_or("iops_slope:0.01%");
    let bad = |m: String| cx.err(Some(Opt::Steadystate), m);
    let Some((what, limit)) = text.split_once(':') else {
        return Err(bad(format!(
            "steadystate={text}: a limit must follow the criterion (iops:10%, bw_slope:0.1%)"
        )));
    };
    let (iops, slope) = match what.trim().to_ascii_lowercase().as_str() {
        "iops" => (true, false),
        "iops_slope" => (true, true),
        "bw" => (false, false),
        "bw_slope" => (false, true),
        other => {
            return Err(bad(format!(
                "steadystate={text}: unknown criterion `{other}` (iops, iops_slope, bw, bw_slope)"
            )))
        }
    };
    let limit = limit.trim();
    let (pct, number) = match limit.strip_suffix('%') {
        Some(n) => (true, n.trim()),
        None => (false, limit),
    };
    let value = if pct || iops {
        number.parse::<f64>().ok().filter(|v| v.is_finite())
    } else {
        parse_size(number, job.kb_base()).ok().map(|b| b as f64)
    };
    let Some(limit) = value else {
        return Err(bad(format!(
            "steadystate={text}: `{limit}` is not a limit (a number, a percentage, or for bw a size)"
        )));
    };
    if dur == 0 {
        return Ok(None);
    }
    Ok(Some(SteadySpec {
        rule: SteadyRule {
            iops,
            slope,
            pct,
            limit,
            dur: dur.min(u64::from(u32::MAX)) as u32,
        },
        ramp: Duration::from_micros(job.time_us(Opt::SteadystateRampTime).unwrap_or(0)),
    }))
}

/// fio's rule for steady-state detection across jobs: every job clone of
/// a reporting group (the jobs between two `stonewall`/`new_group`s, with
/// or without `group_reporting`) has the same settings (`ss`, `ss_dur`,
/// `ss_ramp`; a job without `ss_dur` has none), else fio rejects the job
/// that differs from the ones before it. The error names both jobs.
pub(super) fn steadystate_consistent(set: &JobSet, jobs: &[PlanJob]) -> Result<(), PlanError> {
    for (i, pj) in jobs.iter().enumerate() {
        let Some(first) = jobs[..i].iter().find(|o| o.groupid == pj.groupid) else {
            continue;
        };
        if first.steady == pj.steady {
            continue;
        }
        let job = &set.jobs[pj.spec];
        let location = [
            Opt::Steadystate,
            Opt::SteadystateDuration,
            Opt::SteadystateRampTime,
        ]
        .into_iter()
        .find_map(|o| job.origin(o).cloned())
        .unwrap_or_else(|| job.location.clone());
        return Err(PlanError {
            location,
            job: pj.name.clone(),
            message: format!(
                "steadystate options must be consistent within a reporting group, and fio \
                 rejects this job: `{}` has {}, `{}` in the same group (g={}) has {}; give them \
                 the same ss, ss_dur and ss_ramp, or start a new group (stonewall or new_group)",
                pj.name,
                describe_steady(pj.steady.as_ref()),
                first.name,
                pj.groupid,
                describe_steady(first.steady.as_ref()),
            ),
        });
    }
    Ok(())
}

/// A job's steady-state settings as a job file would give them.
fn describe_steady(s: Option<&SteadySpec>) -> String {
    let Some(s) = s else {
        return "none (no ss_dur)".to_string();
    };
    let r = &s.rule;
    let what = match (r.iops, r.slope) {
        (true, false) => "iops",
        (true, true) => "iops_slope",
        (false, false) => "bw",
        (false, true) => "bw_slope",
    };
    let unit = if r.pct { "%" } else { "" };
    let mut text = format!("ss={what}:{}{unit} ss_dur={}s", r.limit, r.dur);
    if !s.ramp.is_zero() {
        text.push_str(&format!(" ss_ramp={}us", s.ramp.as_micros()));
    }
    text
}
