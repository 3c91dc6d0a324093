//! iolab's renderers against fio 3.33 on the same numbers. Each fixture is
//! one fio run printed as normal text and json+ (or terse and json+); the
//! `RunResult` rebuilt from its json+ (see `common`) is rendered by iolab
//! in every format and compared with what fio printed:
//!
//! - json+: the same key paths in the same order, and the same values
//!   (floats as fio's `%f` text), apart from iolab's additions;
//! - json: the same without any `bins`;
//! - normal: the same lines, apart from the exceptions listed in
//!   `normalize`;
//! - terse: the same fields.

mod common;

use common::{f6, load, reconstruct};
use iolab_report::{render, render_preamble, Format, RenderOpts};
use serde_json::Value;

/// Runs printed as `normal,json+`.
const NORMAL_RUNS: &[&str] = &[
    "psync-randrw.txt",
    "group-reporting.txt",
    "two-groups.txt",
    "fsync.txt",
    "time-based.txt",
    "plist.txt",
    "libaio.txt",
    "libaio-all-percentiles.txt",
    "null-fast.txt",
    "null-kb1000-bits.txt",
    "continue-on-error.txt",
    "disable-clat.txt",
    "gtod-reduce.txt",
    "lat-percentiles.txt",
];

/// Runs printed as `terse,json+`.
const TERSE_RUNS: &[&str] = &["terse-psync.txt", "terse-libaio.txt", "terse-continue.txt"];

fn all_runs() -> impl Iterator<Item = &'static str> {
    NORMAL_RUNS.iter().chain(TERSE_RUNS).copied()
}

/// Every node of a JSON tree as (path, value) in document order; objects
/// and arrays appear too, so empty ones count.
fn flatten(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            out.push((path.to_string(), Value::Null));
            for (k, c) in m {
                flatten(c, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            out.push((path.to_string(), Value::Null));
            for (i, c) in a.iter().enumerate() {
                flatten(c, &format!("{path}[{i}]"), out);
            }
        }
        leaf => out.push((path.to_string(), leaf.clone())),
    }
}

/// iolab's own keys: `"iolab version"` and the `"iolab"` objects of the
/// document and of each job.
fn is_iolab_addition(path: &str) -> bool {
    path == ".iolab version"
        || path.starts_with(".iolab")
        || (path.starts_with(".jobs[") && path.contains("].iolab"))
}

fn render_json(name: &str, format: Format) -> (Value, Vec<(String, Value)>) {
    let fio = load(name);
    let (run, opts) = reconstruct(&fio);
    let text = render(&run, &opts, format);
    let ours: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: iolab's JSON: {e}"));
    let mut paths = Vec::new();
    flatten(&ours, "", &mut paths);
    (fio.json, paths)
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                x.is_f64() && y.is_f64() && f6(x.as_f64().unwrap()) == f6(y.as_f64().unwrap())
            } else {
                x == y
            }
        }
        _ => a == b,
    }
}

#[test]
fn json_plus_has_fios_keys_in_fios_order_and_its_values() {
    for name in all_runs() {
        let (fio, ours) = render_json(name, Format::JsonPlus);
        let mut theirs = Vec::new();
        flatten(&fio, "", &mut theirs);
        let ours: Vec<_> = ours
            .into_iter()
            .filter(|(p, _)| !is_iolab_addition(p))
            .collect();
        for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
            assert_eq!(t.0, o.0, "{name}: key #{i} differs");
            // fio's "eta" is its estimator's guess at print time (0 or
            // INT_MAX); iolab prints 0: nothing is left to run.
            if t.0.ends_with("].eta") {
                assert_eq!(o.1, 0, "{name}: {}", o.0);
                continue;
            }
            assert!(
                same_value(&t.1, &o.1),
                "{name}: {}: fio {} iolab {}",
                t.0,
                t.1,
                o.1
            );
        }
        assert_eq!(
            theirs.len(),
            ours.len(),
            "{name}: key count (first extra: fio {:?} iolab {:?})",
            theirs.get(ours.len()).map(|p| &p.0),
            ours.get(theirs.len()).map(|p| &p.0)
        );
    }
}

/// iolab's JSON text with its additions cut out: the `"iolab version"`
/// line and each `"iolab"` object (and the comma before it).
fn without_iolab_additions(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut skip_until: Option<String> = None;
    for line in text.lines() {
        if let Some(end) = &skip_until {
            if line == end || line == format!("{end},") {
                skip_until = None;
            }
            continue;
        }
        if line.trim_start().starts_with("\"iolab version\" : ") {
            continue;
        }
        if line.trim_start() == "\"iolab\" : {" {
            let indent = &line[..line.len() - line.trim_start().len()];
            skip_until = Some(format!("{indent}}}"));
            if let Some(prev) = out.last_mut() {
                if let Some(p) = prev.strip_suffix(',') {
                    *prev = p.to_string();
                }
            }
            continue;
        }
        out.push(line.to_string());
    }
    out.join("\n") + "\n"
}

/// fio's "eta" lines, which iolab does not reproduce (see above).
fn mask_eta(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("\"eta\" : ") {
                "<eta>".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn json_plus_text_is_fios_byte_for_byte() {
    // The layout too: indentation, `"key" : value`, `%f` floats, integer
    // keys and values, the final newline.
    for name in all_runs() {
        let path = common::fixture_path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find("\n{\n").map(|i| i + 1).unwrap_or(0);
        let end = start + text[start..].find("\n}\n").unwrap() + 3;
        let theirs = &text[start..end];
        let fio = load(name);
        let (run, opts) = reconstruct(&fio);
        let ours = without_iolab_additions(&render(&run, &opts, Format::JsonPlus));
        let (theirs, ours) = (mask_eta(theirs), mask_eta(&ours));
        if theirs != ours {
            let at = theirs
                .lines()
                .zip(ours.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{name}: JSON text differs at line {}: fio {:?} iolab {:?}",
                at + 1,
                theirs.lines().nth(at),
                ours.lines().nth(at)
            );
        }
    }
}

#[test]
fn json_is_json_plus_without_bins() {
    for name in all_runs() {
        let (fio, plus) = render_json(name, Format::JsonPlus);
        let (_, json) = render_json(name, Format::Json);
        // A run without latencies (gtod_reduce) has no bins to leave out.
        let fio_has_bins = fio.to_string().contains("\"bins\"");
        assert_eq!(
            plus.iter().any(|(p, _)| p.contains(".bins")),
            fio_has_bins,
            "{name}: json+ has bins where fio's has"
        );
        assert!(
            json.iter().all(|(p, _)| !p.contains(".bins")),
            "{name}: json has no bins"
        );
        let no_bins: Vec<_> = plus
            .into_iter()
            .filter(|(p, _)| !p.contains(".bins"))
            .collect();
        assert_eq!(json, no_bins, "{name}");
    }
}

#[test]
fn iolab_additions_are_where_they_belong() {
    let (_, paths) = render_json("group-reporting.txt", Format::Json);
    let keys: Vec<&str> = paths.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(keys[1], ".fio version");
    assert_eq!(keys[2], ".iolab version");
    assert_eq!(*keys.last().unwrap(), ".iolab.interrupted");
    let clones = paths
        .iter()
        .find(|(p, _)| p == ".jobs[0].iolab.clones")
        .expect("per-job iolab object");
    assert_eq!(clones.1, 2);
}

/// Lines iolab does not print as fio does, each with its reason; applied
/// to both sides before comparing.
fn normalize(line: &str, opts: &RenderOpts) -> Option<String> {
    // fio reports laying out files while the run starts; iolab's preamble
    // is rendered from the job list and has no such events.
    if line.contains(": Laying out IO file") {
        return None;
    }
    // The version line names the program that ran.
    if line == opts.fio_version {
        return Some(opts.version.clone());
    }
    // iolab runs jobs as threads, as fio does with `thread`.
    if let Some(n) = line.strip_prefix("Starting ") {
        let count = n.split(' ').next().unwrap_or("");
        let plural = if count == "1" { "" } else { "s" };
        return Some(format!("Starting {count} thread{plural}"));
    }
    // A job header ends with the time it was printed; iolab prints the
    // run's end time (RunResult::timestamp), which can be a second off.
    if line.contains(": (groupid=") && line.contains(" pid=") {
        if let Some((head, _)) = line.rsplit_once(": ") {
            return Some(format!("{head}: <date>"));
        }
    }
    Some(line.to_string())
}

#[test]
fn normal_text_matches_fio_line_by_line() {
    for name in NORMAL_RUNS {
        let fio = load(name);
        let (run, opts) = reconstruct(&fio);
        let theirs_text = format!("{}\n{}", fio.preamble.join("\n"), fio.normal);
        let ours_text = format!(
            "{}{}",
            render_preamble(&run.jobs, &opts),
            render(&run, &opts, Format::Normal)
        );
        let theirs: Vec<String> = theirs_text
            .lines()
            .filter_map(|l| normalize(l, &opts))
            .collect();
        let ours: Vec<String> = ours_text
            .lines()
            .filter_map(|l| normalize(l, &opts))
            .collect();
        for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
            assert_eq!(
                t,
                o,
                "{name}: line {} differs\n--- fio ---\n{theirs_text}\n--- iolab ---\n{ours_text}",
                i + 1
            );
        }
        assert_eq!(
            theirs.len(),
            ours.len(),
            "{name}: line count\n--- fio ---\n{theirs_text}\n--- iolab ---\n{ours_text}"
        );
        assert!(ours_text.ends_with('\n'));
    }
}

#[test]
fn terse_matches_fio_field_by_field() {
    for name in TERSE_RUNS {
        let fio = load(name);
        let (run, opts) = reconstruct(&fio);
        let ours = render(&run, &opts, Format::Terse);
        let ours: Vec<&str> = ours.lines().collect();
        assert_eq!(ours.len(), fio.terse.len(), "{name}: one line per job");
        for (t, o) in fio.terse.iter().zip(&ours) {
            let tf: Vec<&str> = t.split(';').collect();
            let of: Vec<&str> = o.split(';').collect();
            // Version 3: 121 job fields, 9 per disk, 2 with
            // continue_on_error, and the description.
            let j = &run.jobs[0];
            let expect = 121
                + 9 * run.disks.len()
                + 2 * usize::from(j.setup.continue_on_error)
                + usize::from(!j.description.is_empty());
            assert_eq!(tf.len(), expect, "{name}: fio's field count");
            assert_eq!(of.len(), tf.len(), "{name}: field count");
            for (i, (a, b)) in tf.iter().zip(&of).enumerate() {
                assert_eq!(a, b, "{name}: terse field {} differs", i + 1);
            }
        }
    }
}

#[test]
fn reconstruction_reproduces_fio_counts() {
    // The rebuilt results carry fio's counts exactly: a check of the
    // helper itself, so a renderer bug cannot hide behind it.
    let fio = load("psync-randrw.txt");
    let (run, _) = reconstruct(&fio);
    let j = &run.jobs[0];
    let jj = &fio.json["jobs"][0];
    assert_eq!(j.dirs[0].io_bytes, jj["read"]["io_bytes"].as_u64().unwrap());
    assert_eq!(
        j.dirs[1].total_ios,
        jj["write"]["total_ios"].as_u64().unwrap()
    );
    assert_eq!(
        j.dirs[0].clat.hist.total(),
        jj["read"]["clat_ns"]["N"].as_u64().unwrap()
    );
    assert_eq!(j.setup.rw, "randrw");
    assert_eq!(j.setup.bs, [(4096, 4096); 3]);
    assert_eq!(j.setup.ioengine, "psync");
    assert_eq!(j.lat_buckets.total(), j.issued.iter().sum::<u64>());
}
