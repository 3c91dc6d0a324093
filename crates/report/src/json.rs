//! fio's JSON and json+ output: one document with the run's time, the
//! global options, one object per reported job and the disks' statistics,
//! keys in fio's order and with fio's units (ns latencies, KiB/s `bw`, ms
//! runtimes). json+ adds each latency histogram's non-empty bins next to
//! its percentiles. After the jobs, fio's empty entry for each clone that
//! ran with `stats=0`. iolab's additions: `"iolab version"` after
//! `"fio version"`, and an `"iolab"` object last in each job and in the
//! document.

use iolab_stats::{
    Dir, DirResult, JobResult, LatStat, Moments, RunResult, SteadyResult, UnifiedRw, VerifyFailure,
};

use crate::calc::{self, Shown};
use crate::jsonw::{Json, Obj};
use crate::units::ctime;
use crate::RenderOpts;

/// The "eta" of a finished run. fio prints what its estimator says at
/// that moment (0 after time_based runs, INT_MAX after most others); when
/// the report is printed nothing is left to run.
const ETA_DONE: u64 = 0;

pub fn render(run: &RunResult, opts: &RenderOpts, plus: bool) -> String {
    document(run, opts, plus).to_document()
}

/// The document of one run, for a caller to add to (its `"iolab"` object
/// is last).
pub(crate) fn document(run: &RunResult, opts: &RenderOpts, plus: bool) -> Obj {
    let mut root = Obj::new();
    root.str("fio version", &opts.fio_version)
        .str("iolab version", &opts.version)
        .uint("timestamp", run.timestamp)
        .uint("timestamp_ms", run.timestamp_ms)
        .str("time", &ctime(run.timestamp, opts.utc_offset_s));
    if !run.global_options.is_empty() {
        root.obj("global options", options(&run.global_options));
    }
    let jobs = run
        .jobs
        .iter()
        .map(|j| Json::Obj(job(run, j, plus)))
        .chain(run.stats_off.iter().map(|&e| Json::Obj(stats_off(run, e))))
        .collect();
    root.add("jobs", Json::Arr(jobs));
    if !run.disks.is_empty() {
        let disks = run
            .disks
            .iter()
            .map(|d| {
                let mut o = Obj::new();
                o.str("name", &d.name)
                    .uint("read_ios", d.read_ios)
                    .uint("write_ios", d.write_ios)
                    .uint("read_merges", d.read_merges)
                    .uint("write_merges", d.write_merges)
                    .uint("read_ticks", d.read_ticks_ms)
                    .uint("write_ticks", d.write_ticks_ms)
                    .uint("in_queue", d.in_queue_ms)
                    .float("util", d.util);
                Json::Obj(o)
            })
            .collect();
        root.add("disk_util", Json::Arr(disks));
    }
    let mut iolab = Obj::new();
    iolab.add("interrupted", Json::Bool(run.interrupted));
    if let Some(ranks) = &run.ranks {
        iolab.obj("mpi", crate::ranks::json(ranks));
    }
    if let Some(p) = &opts.provenance {
        iolab.add("provenance", value(p));
    }
    root.obj("iolab", iolab);
    root
}

/// A serde value in fio's layout.
fn value(v: &serde_json::Value) -> Json {
    use serde_json::Value;
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Json::UInt(u),
            (None, Some(i)) => Json::Int(i),
            _ => Json::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Json::Str(s.clone()),
        Value::Array(a) => Json::Arr(a.iter().map(value).collect()),
        Value::Object(m) => {
            let mut o = Obj::new();
            for (k, x) in m {
                o.add(k.as_str(), value(x));
            }
            Json::Obj(o)
        }
    }
}

/// fio's "steadystate" object: the rule, the window's length in seconds,
/// whether it was attained, the last criterion (as text, with `%` for a
/// percentage), and the window's samples with their means.
fn steadystate(ss: &SteadyResult) -> Obj {
    let pct = if ss.rule.pct { "%" } else { "" };
    let ints = |v: &[u64]| Json::Arr(v.iter().map(|&x| Json::UInt(x)).collect());
    let mut data = Obj::new();
    data.uint("bw_mean", ss.bw_mean())
        .uint("iops_mean", ss.iops_mean())
        .add("iops", ints(&ss.iops))
        .add("bw", ints(&ss.bw));
    let mut o = Obj::new();
    o.str("ss", &ss.rule.text())
        .uint("duration", u64::from(ss.rule.dur))
        .uint("attained", u64::from(ss.attained))
        .str("criterion", &format!("{:.6}{pct}", ss.criterion as f32))
        .float("max_deviation", ss.deviation)
        .float("slope", ss.slope)
        .obj("data", data);
    o
}

fn options(opts: &[(String, String)]) -> Obj {
    let mut o = Obj::new();
    for (k, v) in opts {
        o.str(k.as_str(), v);
    }
    o
}

fn job(run: &RunResult, j: &JobResult, plus: bool) -> Obj {
    let s = &j.setup;
    let mut o = Obj::new();
    o.str("jobname", &j.name)
        .int("groupid", i64::from(j.groupid))
        .int("error", i64::from(j.error))
        .uint("eta", ETA_DONE)
        .uint("elapsed", j.elapsed_s);
    if !j.options.is_empty() {
        o.obj("job options", options(&j.options));
    }
    // unified_rw_reporting: with `mixed`, fio 3.33 prints the one "mixed"
    // direction and no sync object; with `both`, "mixed" after sync.
    let unified = s.unified_rw;
    if unified != UnifiedRw::Mixed {
        for d in Dir::ALL {
            o.obj(d.key(), direction(run, j, Shown::Dir(d), plus));
        }
        let mut sync = Obj::new();
        sync.uint("total_ios", j.sync.count()).obj(
            "lat_ns",
            lat(j, &j.sync, s.clat_percentiles || s.lat_percentiles, plus),
        );
        o.obj("sync", sync);
    }
    if unified.mixed() {
        o.obj("mixed", direction(run, j, Shown::Mixed, plus));
    }

    let (usr, sys) = calc::cpu(j);
    o.uint("job_runtime", calc::ms(j.runtime_ns))
        .float("usr_cpu", usr)
        .float("sys_cpu", sys)
        .uint("ctx", j.cpu.ctx)
        .uint("majf", j.cpu.majflt)
        .uint("minf", j.cpu.minflt);

    const LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const BATCHES: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    o.obj("iodepth_level", keyed(&LEVELS, &calc::depth_level(j)))
        .obj(
            "iodepth_submit",
            keyed(&BATCHES, &calc::depth_batches(&j.depth.submit)),
        )
        .obj(
            "iodepth_complete",
            keyed(&BATCHES, &calc::depth_batches(&j.depth.complete)),
        );

    const BOUNDS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    let (ns, us, ms) = calc::lat_buckets(j);
    o.obj("latency_ns", keyed(&BOUNDS[..10], &ns))
        .obj("latency_us", keyed(&BOUNDS[..10], &us))
        .obj("latency_ms", keyed(&BOUNDS, &ms));
    if s.continue_on_error {
        o.uint("total_err", j.total_err)
            .int("first_error", i64::from(j.first_error));
    }

    o.uint(
        "latency_depth",
        u64::from(j.latency_depth.unwrap_or(s.iodepth)),
    )
    .uint("latency_target", s.latency_target_ns)
    .float("latency_percentile", s.latency_percentile)
    .uint("latency_window", s.latency_window_us)
    .str("desc", &j.description);
    if let Some(ss) = &j.steadystate {
        o.obj("steadystate", steadystate(ss));
    }

    let mut iolab = Obj::new();
    let mut runtimes = Obj::new();
    for d in Dir::ALL {
        runtimes.uint(d.key(), j.dir(d).runtime_ns);
    }
    iolab
        .uint("clones", u64::from(calc::members(j)))
        .uint("job_runtime_ns", j.runtime_ns)
        .obj("runtime_ns", runtimes);
    let warnings = j
        .warnings
        .iter()
        .map(|w| {
            let mut o = Obj::new();
            o.str("code", &w.code).str("text", &w.text);
            Json::Obj(o)
        })
        .collect();
    iolab.add("warnings", Json::Arr(warnings));
    if let Some(f) = &j.verify_failure {
        iolab.obj("verify_failure", verify_failure(f));
    }
    o.obj("iolab", iolab);
    o
}

/// The first block verify rejected: where, what, and the checksums.
fn verify_failure(f: &VerifyFailure) -> Obj {
    let mut o = Obj::new();
    o.str("file", &f.file)
        .uint("block_offset", f.block_offset)
        .uint("block_length", f.block_len);
    match f.first_bad_byte {
        Some(at) => o.uint("first_bad_byte", at),
        None => o.add("first_bad_byte", Json::Null),
    };
    if let Some((a, b)) = f.bad_byte_range {
        o.add(
            "bad_byte_range",
            Json::Arr(vec![Json::UInt(a), Json::UInt(b)]),
        );
    }
    o.str("what", &f.what)
        .str("expected", &f.expected)
        .str("found", &f.found)
        .uint("failed_blocks", f.failed_blocks);
    if !f.dumped.is_empty() {
        let names = f.dumped.iter().map(|d| Json::Str(d.clone())).collect();
        o.add("dumped", Json::Arr(names));
    }
    o
}

/// fio's entry for a clone with `stats=0`: an empty job without a name,
/// in group 4294967295 (-1 as fio's unsigned group id), whose pairs stop
/// after `latency_ms`; iolab says what it is under `"iolab"`.
fn stats_off(run: &RunResult, elapsed_s: u64) -> Obj {
    let mut o = job(run, &calc::stats_off_entry(elapsed_s), false);
    if let Some(end) = o.0.iter().position(|(k, _)| k == "latency_ms") {
        o.0.truncate(end + 1);
    }
    let mut iolab = Obj::new();
    iolab.str("left_out", "stats=0");
    o.obj("iolab", iolab);
    o
}

fn keyed(keys: &[&str], values: &[f64]) -> Obj {
    let mut o = Obj::new();
    for (k, &v) in keys.iter().zip(values) {
        o.float(*k, v);
    }
    o
}

fn direction(run: &RunResult, j: &JobResult, d: Shown, plus: bool) -> Obj {
    let r: &DirResult = &calc::shown_result(j, d);
    let s = &j.setup;
    let bw_bytes = r.bw_bytes();
    let mut o = Obj::new();
    o.uint("io_bytes", r.io_bytes)
        .uint("io_kbytes", r.io_bytes >> 10)
        .uint("bw_bytes", bw_bytes)
        .uint("bw", bw_bytes / 1024)
        .float("iops", r.iops())
        .uint("runtime", calc::ms(r.runtime_ns))
        .uint("total_ios", r.total_ios)
        .uint("short_ios", r.short_ios)
        .uint("drop_ios", r.drop_ios)
        .obj("slat_ns", lat(j, &r.slat, s.slat_percentiles, plus))
        .obj("clat_ns", lat(j, &r.clat, s.clat_percentiles, plus))
        .obj("lat_ns", lat(j, &r.lat, s.lat_percentiles, plus));

    let bw = &r.bw_samples;
    let share = if bw.is_empty() {
        0.0
    } else {
        calc::agg_share(bw.mean(), calc::group_agg(run, j, d))
    };
    o.uint("bw_min", bw.min().unwrap_or(0))
        .uint("bw_max", bw.max().unwrap_or(0))
        .float("bw_agg", share)
        .float("bw_mean", bw.mean())
        .float("bw_dev", bw.stdev())
        .uint("bw_samples", bw.count());
    let io = &r.iops_samples;
    o.uint("iops_min", io.min().unwrap_or(0))
        .uint("iops_max", io.max().unwrap_or(0))
        .float("iops_mean", io.mean())
        .float("iops_stddev", io.stdev())
        .uint("iops_samples", io.count());
    o
}

/// A latency object: min, max, mean, stddev, N, and when the series has
/// samples and its percentiles are on, the percentiles (and for json+ the
/// bins).
fn lat(j: &JobResult, l: &LatStat, percentiles: bool, plus: bool) -> Obj {
    let m: &Moments = &l.moments;
    let mut o = Obj::new();
    o.uint("min", m.min().unwrap_or(0))
        .uint("max", m.max().unwrap_or(0))
        .float("mean", m.mean())
        .float("stddev", m.stdev())
        .uint("N", m.count());
    if percentiles && m.count() > 0 {
        let mut p = Obj::new();
        for (pct, v) in calc::percentiles(j, &l.hist) {
            p.uint(crate::units::f6(pct), v);
        }
        o.obj("percentile", p);
        if plus {
            let mut b = Obj::new();
            for (v, n) in l.hist.nonzero_bins() {
                b.uint(v.to_string(), n);
            }
            o.obj("bins", b);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stats_off_clone_gets_fios_empty_entry() {
        // fio 3.33's entry for a job with stats=0: these keys, in this
        // order, and nothing measured.
        let fio_keys = [
            "groupid",
            "error",
            "eta",
            "elapsed",
            "read",
            "write",
            "trim",
            "sync",
            "job_runtime",
            "usr_cpu",
            "sys_cpu",
            "ctx",
            "majf",
            "minf",
            "iodepth_level",
            "iodepth_submit",
            "iodepth_complete",
            "latency_ns",
            "latency_us",
            "latency_ms",
        ];
        let run = RunResult {
            stats_off: vec![3],
            ..Default::default()
        };
        let o = stats_off(&run, 3);
        let keys: Vec<&str> = o.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys[..keys.len() - 1], fio_keys);
        assert_eq!(keys.last(), Some(&"iolab"));
        assert_eq!(o.0[0].1, Json::Int(4294967295));
        assert_eq!(o.0[3].1, Json::UInt(3));
        let doc = render(&run, &RenderOpts::default(), false);
        assert!(doc.contains("\"groupid\" : 4294967295"), "{doc}");
        assert!(!doc.contains("jobname"));
        assert!(!doc.contains("percentile"));
    }
}
