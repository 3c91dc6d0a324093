//! Reading fio 3.33's reference outputs (`tests/fixtures`, see the README
//! there) and rebuilding from each the `RunResult` iolab would have had for
//! the same run: histograms from the json+ bins, moments from N, min, max,
//! mean and stddev, counts from the percentages fio printed (where the
//! percentages and their total pin them down), and the job facts fio prints
//! before the run from its header lines.

#![allow(dead_code)]

use std::path::PathBuf;

use iolab_report::{RenderOpts, UnitBase};
use iolab_stats::{
    CpuResult, DepthDist, DirResult, DiskResult, GroupResult, JobResult, JobSetup, LatBuckets,
    LatHist, LatStat, Moments, RunResult, DEFAULT_PERCENTILES,
};
use serde_json::Value;

/// One fio output file, split into what each format printed.
pub struct FioOutput {
    /// Lines fio prints before the run (normal format only).
    pub preamble: Vec<String>,
    /// Terse lines.
    pub terse: Vec<String>,
    /// The JSON document.
    pub json: Value,
    /// The normal report after the JSON: everything after the line "}".
    pub normal: String,
}

pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn load(name: &str) -> FioOutput {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let open = lines
        .iter()
        .position(|l| *l == "{\n")
        .unwrap_or_else(|| panic!("{name}: no JSON document"));
    let close = open
        + lines[open..]
            .iter()
            .position(|l| *l == "}\n")
            .unwrap_or_else(|| panic!("{name}: JSON document not closed"));
    let json_text: String = lines[open..=close].concat();
    let json = serde_json::from_str(&json_text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (terse, preamble): (Vec<&str>, Vec<&str>) =
        lines[..open].iter().partition(|l| l.starts_with("3;"));
    FioOutput {
        preamble: preamble
            .iter()
            .map(|l| l.trim_end_matches('\n').to_string())
            .collect(),
        terse: terse
            .iter()
            .map(|l| l.trim_end_matches('\n').to_string())
            .collect(),
        json,
        normal: lines[close + 1..].concat(),
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, got {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// fio's `%f` of a float.
pub fn f6(x: f64) -> String {
    format!("{x:.6}")
}

/// Moments from fio's printed N/min/max/mean/stddev.
fn moments(n: u64, min: u64, max: u64, mean: f64, dev: f64) -> Moments {
    let ss = if n > 1 {
        dev * dev * (n - 1) as f64
    } else {
        0.0
    };
    Moments::from_parts(n, min, max, mean, ss)
}

/// A latency object (`clat_ns` and friends): moments, and the histogram
/// from json+ bins when fio printed them.
fn lat_stat(o: &Value) -> LatStat {
    let mut hist = LatHist::new();
    if let Some(bins) = o.get("bins").and_then(Value::as_object) {
        for (k, n) in bins {
            hist.record_n(k.parse().expect("bin key"), u(n));
        }
    }
    LatStat {
        moments: moments(
            u(&o["N"]),
            u(&o["min"]),
            u(&o["max"]),
            f(&o["mean"]),
            f(&o["stddev"]),
        ),
        hist,
    }
}

/// A count that gives percentage `pct` of `total` as fio prints it. A
/// share printed as `floor` may have been raised to it from less: then
/// one is enough.
fn count_of(pct: f64, total: u64, floor: f64) -> u64 {
    if pct == 0.0 {
        return 0;
    }
    let c = ((pct * total as f64 / 100.0).round() as u64).max(1);
    if pct == floor && f6(pct_of(c, total, floor)) != f6(pct) {
        1
    } else {
        c
    }
}

/// fio's percentage of `count` in `total`, floored as fio does.
fn pct_of(count: u64, total: u64, floor: f64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let p = count as f64 / total as f64 * 100.0;
    if p < floor && count != 0 {
        floor
    } else {
        p
    }
}

/// Counts whose percentages of their own sum print as `pcts` do (fio's
/// submit and complete distributions, whose total it does not print):
/// the smallest total that reproduces every printed value.
fn batch_counts(pcts: &[f64; 7]) -> [u64; 7] {
    if pcts.iter().all(|&p| p == 0.0) {
        return [0; 7];
    }
    for total in 1..=10_000_000u64 {
        // Shares printed as exactly 0.1 may have been raised to it: they
        // take what the others leave.
        let mut c = [0u64; 7];
        let mut raised = Vec::new();
        for i in 0..7 {
            if pcts[i] == 0.1 {
                raised.push(i);
                c[i] = 1;
            } else {
                c[i] = count_of(pcts[i], total, 0.1);
            }
        }
        let sum: u64 = c.iter().sum();
        if sum < total && raised.len() == 1 {
            c[raised[0]] += total - sum;
        } else if sum != total {
            continue;
        }
        if (0..7).all(|i| f6(pct_of(c[i], total, 0.1)) == f6(pcts[i])) {
            return c;
        }
    }
    panic!("no counts reproduce {pcts:?}");
}

fn seven(o: &Value, keys: [&str; 7]) -> [f64; 7] {
    let mut out = [0.0; 7];
    for (i, k) in keys.iter().enumerate() {
        out[i] = f(&o[*k]);
    }
    out
}

const LEVELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
const BATCHES: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
const BOUNDS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// "4096B", "128KiB", "1024KiB", "4MiB", "8kB": fio's abbreviated sizes.
fn parse_size(s: &str) -> u64 {
    let s = s.trim_end_matches('B');
    let (num, mult) = [("Ki", 1u64 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30)]
        .iter()
        .chain([("k", 1000u64), ("M", 1_000_000), ("G", 1_000_000_000)].iter())
        .find_map(|&(p, m)| s.strip_suffix(p).map(|n| (n, m)))
        .unwrap_or((s, 1));
    num.parse::<u64>().expect("size") * mult
}

/// The job facts of a preamble header line:
/// `t: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) ..., ioengine=psync, iodepth=1`.
fn header_setup(line: &str) -> (String, u32, JobSetup) {
    let (name, rest) = line.split_once(": (g=").expect("header line");
    let (g, rest) = rest.split_once("): rw=").expect("group");
    let (rw, rest) = rest.split_once(", bs=(R) ").expect("rw");
    let (r, rest) = rest.split_once(", (W) ").expect("read bs");
    let (w, rest) = rest.split_once(", (T) ").expect("write bs");
    let (t, rest) = rest.split_once(", ioengine=").expect("trim bs");
    let (engine, depth) = rest.split_once(", iodepth=").expect("engine");
    let range = |s: &str| {
        let (a, b) = s.split_once('-').expect("bs range");
        (parse_size(a), parse_size(b))
    };
    let setup = JobSetup {
        rw: rw.to_string(),
        bs: [range(r), range(w), range(t)],
        ioengine: engine.to_string(),
        iodepth: depth.parse().expect("iodepth"),
        ..Default::default()
    };
    (name.to_string(), g.parse().expect("groupid"), setup)
}

/// pid and member count of the jobs' normal headers, in order:
/// `t: (groupid=0, jobs=1): err= 0: pid=10165: <date>`.
fn normal_headers(normal: &str) -> Vec<(u32, u32)> {
    normal
        .lines()
        .filter(|l| l.contains(": (groupid=") && l.contains("pid="))
        .map(|l| {
            let jobs = l
                .split_once("jobs=")
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(n, _)| n.parse().expect("jobs="))
                .expect("jobs=");
            let pid = l
                .split_once(" pid=")
                .and_then(|(_, r)| r.split_once(':'))
                .map(|(n, _)| n.parse().expect("pid="))
                .expect("pid=");
            (pid, jobs)
        })
        .collect()
}

fn options(o: Option<&Value>) -> Vec<(String, String)> {
    o.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().expect("option value").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The `RunResult` and render options of a fio run, rebuilt from its
/// outputs.
pub fn reconstruct(out: &FioOutput) -> (RunResult, RenderOpts) {
    let js = &out.json;
    let headers: Vec<(String, u32, JobSetup)> = out
        .preamble
        .iter()
        .filter(|l| l.contains(": (g="))
        .map(|l| header_setup(l))
        .collect();
    let normal = normal_headers(&out.normal);

    let mut jobs = Vec::new();
    for (idx, jj) in js["jobs"].as_array().expect("jobs").iter().enumerate() {
        let name = jj["jobname"].as_str().expect("jobname").to_string();
        let groupid = u(&jj["groupid"]) as u32;
        // Without a normal header (terse runs), the depth is the one the
        // JSON echoes.
        let mut setup = headers
            .iter()
            .find(|(n, g, _)| *n == name && *g == groupid)
            .map(|(_, _, s)| s.clone())
            .unwrap_or_else(|| JobSetup {
                iodepth: u(&jj["latency_depth"]) as u32,
                ..Default::default()
            });

        let mut dirs: [DirResult; 3] = Default::default();
        let mut list: Option<Vec<f64>> = None;
        let (mut clat_p, mut lat_p, mut slat_p) = (false, false, false);
        for (i, key) in ["read", "write", "trim"].iter().enumerate() {
            let d = &jj[*key];
            for (k, flag) in [
                ("slat_ns", &mut slat_p),
                ("clat_ns", &mut clat_p),
                ("lat_ns", &mut lat_p),
            ] {
                if let Some(p) = d[k].get("percentile").and_then(Value::as_object) {
                    *flag = true;
                    list.get_or_insert_with(|| p.keys().map(|k| k.parse().unwrap()).collect());
                }
            }
            dirs[i] = DirResult {
                io_bytes: u(&d["io_bytes"]),
                total_ios: u(&d["total_ios"]),
                short_ios: u(&d["short_ios"]),
                drop_ios: u(&d["drop_ios"]),
                runtime_ns: u(&d["runtime"]) * 1_000_000,
                slat: lat_stat(&d["slat_ns"]),
                clat: lat_stat(&d["clat_ns"]),
                lat: lat_stat(&d["lat_ns"]),
                bw_samples: moments(
                    u(&d["bw_samples"]),
                    u(&d["bw_min"]),
                    u(&d["bw_max"]),
                    f(&d["bw_mean"]),
                    f(&d["bw_dev"]),
                ),
                iops_samples: moments(
                    u(&d["iops_samples"]),
                    u(&d["iops_min"]),
                    u(&d["iops_max"]),
                    f(&d["iops_mean"]),
                    f(&d["iops_stddev"]),
                ),
                bw_series: Vec::new(),
            };
        }
        let any_clat = dirs.iter().any(|d| !d.clat.moments.is_empty());
        setup.clat_percentiles = clat_p || !any_clat;
        setup.lat_percentiles = lat_p;
        setup.slat_percentiles = slat_p;
        let list = list.unwrap_or_else(|| DEFAULT_PERCENTILES.to_vec());
        setup.percentile_precision = JobSetup::precision_of(&list);
        setup.percentile_list = list;
        setup.latency_target_ns = u(&jj["latency_target"]);
        setup.latency_window_us = u(&jj["latency_window"]);
        setup.latency_percentile = f(&jj["latency_percentile"]);
        // fio prints the error count only with continue_on_error.
        setup.continue_on_error = jj.get("total_err").is_some();
        let first_error = jj.get("first_error").map_or(0, |e| u(e) as i32);

        let issued = [dirs[0].total_ios, dirs[1].total_ios, dirs[2].total_ios];
        let total: u64 = issued.iter().sum();
        let job_ms = u(&jj["job_runtime"]);
        let cpu_ms = |pct: f64| (pct * job_ms as f64 / 100.0).round() as u64 * 1_000_000;
        let mut depth = DepthDist::default();
        for (i, p) in seven(&jj["iodepth_level"], LEVELS).iter().enumerate() {
            depth.level[i] = count_of(*p, total, 0.1);
        }
        depth.submit = batch_counts(&seven(&jj["iodepth_submit"], BATCHES));
        depth.complete = batch_counts(&seven(&jj["iodepth_complete"], BATCHES));
        let mut lat_buckets = LatBuckets::default();
        for (i, k) in BOUNDS.iter().enumerate() {
            if i < 10 {
                lat_buckets.ns[i] = count_of(f(&jj["latency_ns"][*k]), total, 0.01);
                lat_buckets.us[i] = count_of(f(&jj["latency_us"][*k]), total, 0.01);
            }
            lat_buckets.ms[i] = count_of(f(&jj["latency_ms"][*k]), total, 0.01);
        }

        let job_options = options(jj.get("job options"));
        let (pid, clones) = normal.get(idx).copied().unwrap_or((0, 1));
        jobs.push(JobResult {
            name,
            groupid,
            description: jj
                .get("desc")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            error: u(&jj["error"]) as i32,
            error_detail: String::new(),
            total_err: jj.get("total_err").map_or(0, u),
            first_error,
            first_error_text: if first_error == 0 {
                String::new()
            } else {
                let t = std::io::Error::from_raw_os_error(first_error).to_string();
                t.split(" (os error").next().unwrap_or("").to_string()
            },
            options: job_options,
            setup,
            pid,
            dirs,
            sync: lat_stat(&jj["sync"]["lat_ns"]),
            runtime_ns: job_ms * 1_000_000,
            elapsed_s: u(&jj["elapsed"]),
            cpu: CpuResult {
                user_ns: cpu_ms(f(&jj["usr_cpu"])),
                system_ns: cpu_ms(f(&jj["sys_cpu"])),
                run_delay_ns: 0,
                ctx: u(&jj["ctx"]),
                majflt: u(&jj["majf"]),
                minflt: u(&jj["minf"]),
            },
            depth,
            issued,
            lat_buckets,
            clones,
            warnings: Vec::new(),
            verify_failure: None,
            unflushed_bytes: None,
            caused_io: None,
            latency_depth: jj.get("latency_depth").map(|d| u(d) as u32),
            steadystate: None,
        });
    }

    let max_group = jobs.iter().map(|j| j.groupid).max().unwrap_or(0);
    let groups = (0..=max_group)
        .map(|g| GroupResult::from_jobs(g, jobs.iter().filter(move |j| j.groupid == g)))
        .collect();
    let disks = js
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|d| DiskResult {
                    name: d["name"].as_str().expect("disk name").to_string(),
                    read_ios: u(&d["read_ios"]),
                    write_ios: u(&d["write_ios"]),
                    read_merges: u(&d["read_merges"]),
                    write_merges: u(&d["write_merges"]),
                    read_ticks_ms: u(&d["read_ticks"]),
                    write_ticks_ms: u(&d["write_ticks"]),
                    in_queue_ms: u(&d["in_queue"]),
                    util: f(&d["util"]),
                    ..Default::default()
                })
                .collect()
        })
        .unwrap_or_default();

    let mut opts = RenderOpts {
        fio_version: js["fio version"].as_str().expect("fio version").to_string(),
        ..Default::default()
    };
    for (k, v) in jobs.first().map(|j| j.options.clone()).unwrap_or_default() {
        match k.as_str() {
            "kb_base" => opts.kb_base = v.parse().expect("kb_base"),
            "unit_base" if v == "1" => opts.unit_base = UnitBase::Bits,
            _ => {}
        }
    }
    let run = RunResult {
        timestamp: u(&js["timestamp"]),
        timestamp_ms: u(&js["timestamp_ms"]),
        jobs,
        groups,
        disks,
        interrupted: false,
        global_options: options(js.get("global options")),
        stats_off: Vec::new(),
        ranks: None,
    };
    (run, opts)
}
