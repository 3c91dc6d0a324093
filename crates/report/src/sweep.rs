//! Renderers of a parameter sweep's [`SweepResult`]. The table is a matrix:
//! when the grid varies how the I/O is done (`rw`, `sync`, `direct`), each
//! such combination becomes a group of columns, MB/s, IOPS and p99 latency
//! ("read MB/s", "write sync=dsync IOPS", "write sync=dsync p99 us"), and
//! the other axes make the rows, as in published block-size studies;
//! otherwise each point is a row with MB/s, IOPS, p99 latency and the bytes
//! moved. Repeated runs show the median and `±N%`, the spread (max - min)
//! relative to the median. A point whose runs raised warnings has its
//! cells marked `wN`, as compare's table does, with the legend under the
//! table; a repeated sweep says how its runs ended. A sweep that stopped
//! early says at which point and why under the table. CSV is long form,
//! one line per run, with the point's warning codes; JSON holds the runs
//! and each point's summaries.

use std::fmt::Write as _;

use iolab_stats::sweep::{PointMetric, SweepPoint, SweepResult};
use iolab_stats::Summary;
use serde_json::{json, Map, Value};

use crate::compare::CompareFormat;

/// Axes whose values change how the I/O is done rather than its shape.
const MODE_AXES: [&str; 3] = ["rw", "sync", "direct"];

/// Renders a sweep in one of the table formats.
pub fn render_sweep(r: &SweepResult, format: CompareFormat) -> String {
    match format {
        CompareFormat::Table => table(r, false),
        CompareFormat::Markdown => table(r, true),
        CompareFormat::Csv => csv(r),
        CompareFormat::Json => {
            let mut s = serde_json::to_string_pretty(&sweep_json(r)).unwrap_or_default();
            s.push('\n');
            s
        }
        CompareFormat::Html => crate::export::html_of(&crate::kinds::sweep::document(r)),
    }
}

/// Three significant digits or the integer part.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 || !a.is_finite() {
        return format!("{v:.0}");
    }
    let decimals = (2 - a.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{v:.decimals$}")
}

/// A cell: the median, and the spread when there were several runs.
fn cell(s: Option<Summary>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.n < 2 => num(s.median),
        Some(s) => {
            let spread = if s.median != 0.0 {
                (s.max - s.min) / s.median.abs() * 100.0
            } else {
                0.0
            };
            format!("{} ±{:.0}%", num(s.median), spread)
        }
    }
}

/// The warning codes of the sweep, numbered from 1 in the order the
/// points raised them: cells show `wN`.
fn warning_codes(r: &SweepResult) -> Vec<&str> {
    let mut codes: Vec<&str> = Vec::new();
    for w in r.points.iter().flat_map(|p| &p.warnings) {
        if !codes.contains(&w.code.as_str()) {
            codes.push(&w.code);
        }
    }
    codes
}

/// A cell with the `wN` markers of its point's warnings.
fn marked(text: String, codes: &[&str], p: Option<&SweepPoint>) -> String {
    let Some(p) = p.filter(|p| !p.warnings.is_empty() && text != "-") else {
        return text;
    };
    let mut numbers: Vec<usize> = p
        .warnings
        .iter()
        .filter_map(|w| codes.iter().position(|c| *c == w.code))
        .collect();
    numbers.sort_unstable();
    let marks: Vec<String> = numbers.iter().map(|n| format!("w{}", n + 1)).collect();
    format!("{text} {}", marks.join(","))
}

fn point_name(r: &SweepResult, p: &SweepPoint) -> String {
    r.axes
        .iter()
        .zip(&p.values)
        .map(|(a, v)| format!("{}={v}", a.name))
        .collect::<Vec<_>>()
        .join(" ")
}

fn table(r: &SweepResult, md: bool) -> String {
    let mode: Vec<usize> = r
        .axes
        .iter()
        .enumerate()
        .filter(|(_, a)| MODE_AXES.contains(&a.name.as_str()))
        .map(|(i, _)| i)
        .collect();
    let combos: usize = mode.iter().map(|&i| r.axes[i].values.len()).product();
    let (header, rows) = if combos > 1 { pivot(r, &mode) } else { long(r) };
    let mut widths: Vec<usize> = header.iter().map(String::len).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let naxes = if combos > 1 {
        r.axes.len() - mode.len()
    } else {
        r.axes.len()
    };
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                let pad = w.saturating_sub(c.chars().count());
                if i < naxes {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        if md {
            let _ = writeln!(out, "| {} |", parts.join(" | "));
        } else {
            let _ = writeln!(out, "{}", parts.join("  ").trim_end());
        }
    };
    line(&mut out, &header);
    if md {
        let seps: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                if i < naxes {
                    "-".repeat(w.max(1))
                } else {
                    format!("{}:", "-".repeat(w.saturating_sub(1)))
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", seps.join(" | "));
    }
    for row in &rows {
        line(&mut out, row);
    }
    let bullet = if md { "- " } else { "" };
    let codes = warning_codes(r);
    let mut notes: Vec<String> = Vec::new();
    for (n, code) in codes.iter().enumerate() {
        let at: Vec<String> = r
            .points
            .iter()
            .filter(|p| p.warnings.iter().any(|w| w.code == *code))
            .map(|p| point_name(r, p))
            .collect();
        notes.push(format!("w{} {code}: {}", n + 1, at.join(", ")));
    }
    if !codes.is_empty() {
        notes.push(
            "wN: iolab warns that the number may not measure what it seems to; the full texts \
             are in --output-format json"
                .to_string(),
        );
    }
    if let Some(o) = &r.repeat_outcome {
        notes.push(format!("note: repeats: {}", o.describe()));
    }
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            let _ = writeln!(out, "{bullet}{n}");
        }
    }
    if let Some(f) = &r.failure {
        let _ = write!(
            out,
            "\n{}failed at point {}: {}; the sweep stopped there\n",
            if md { "- " } else { "" },
            f.point,
            f.message
        );
    }
    if r.interrupted {
        let _ = write!(
            out,
            "\n{}interrupted: the points not listed did not run\n",
            if md { "- " } else { "" }
        );
    }
    out
}

/// One row per point: its values, then MB/s, IOPS, p99 and bytes.
fn long(r: &SweepResult) -> (Vec<String>, Vec<Vec<String>>) {
    let codes = warning_codes(r);
    let mut header: Vec<String> = r.axes.iter().map(|a| a.name.clone()).collect();
    header.extend(PointMetric::ALL.iter().map(|m| m.label().to_string()));
    let rows = r
        .points
        .iter()
        .map(|p| {
            let mut row = p.values.clone();
            row.extend(PointMetric::ALL.iter().map(|&m| {
                match m {
                    PointMetric::Bytes => p
                        .summary(m)
                        .map(|s| format!("{}", s.median as u64))
                        .unwrap_or_else(|| "-".into()),
                    _ => marked(cell(p.summary(m)), &codes, Some(p)),
                }
            }));
            row
        })
        .collect();
    (header, rows)
}

/// The metrics of each column group of the matrix.
const PIVOT_METRICS: [PointMetric; 3] = [PointMetric::Mbps, PointMetric::Iops, PointMetric::P99Us];

/// Rows are the values of the axes not in `mode`; a group of columns (MB/s,
/// IOPS, p99 latency) per combination of the `mode` axes' values.
fn pivot(r: &SweepResult, mode: &[usize]) -> (Vec<String>, Vec<Vec<String>>) {
    let codes = warning_codes(r);
    let shape: Vec<usize> = (0..r.axes.len()).filter(|i| !mode.contains(i)).collect();
    let key = |p: &SweepPoint, idx: &[usize]| -> Vec<String> {
        idx.iter().map(|&i| p.values[i].clone()).collect()
    };
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut row_keys: Vec<Vec<String>> = Vec::new();
    for p in &r.points {
        let c = key(p, mode);
        if !columns.contains(&c) {
            columns.push(c);
        }
        let k = key(p, &shape);
        if !row_keys.contains(&k) {
            row_keys.push(k);
        }
    }
    let mut header: Vec<String> = shape.iter().map(|&i| r.axes[i].name.clone()).collect();
    for c in &columns {
        let parts: Vec<String> = mode
            .iter()
            .zip(c)
            .map(|(&i, v)| {
                if r.axes[i].name == "rw" {
                    v.clone()
                } else {
                    format!("{}={v}", r.axes[i].name)
                }
            })
            .collect();
        for m in PIVOT_METRICS {
            header.push(format!("{} {}", parts.join(" "), m.label()));
        }
    }
    let rows = row_keys
        .iter()
        .map(|k| {
            let mut row = k.clone();
            for c in &columns {
                let p = r
                    .points
                    .iter()
                    .find(|p| &key(p, &shape) == k && &key(p, mode) == c);
                for m in PIVOT_METRICS {
                    row.push(marked(cell(p.and_then(|p| p.summary(m))), &codes, p));
                }
            }
            row
        })
        .collect();
    (header, rows)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV columns after the axes' names.
pub const CSV_METRICS: &str = "run,read_bytes,write_bytes,read_bw_bytes,write_bw_bytes,iops,\
clat_mean_ns,clat_p99_ns,runtime_ns,warnings";

fn csv(r: &SweepResult) -> String {
    let mut out = String::new();
    let names: Vec<String> = r.axes.iter().map(|a| csv_field(&a.name)).collect();
    let _ = writeln!(
        out,
        "{}",
        [names.join(","), CSV_METRICS.into()]
            .join(",")
            .trim_start_matches(',')
    );
    for p in &r.points {
        let values: Vec<String> = p.values.iter().map(|v| csv_field(v)).collect();
        let warned: Vec<&str> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        for (i, run) in p.runs.iter().enumerate() {
            let metrics = format!(
                "{},{},{},{:.0},{:.0},{:.1},{:.1},{},{},{}",
                i + 1,
                run.read_bytes,
                run.write_bytes,
                run.read_bw,
                run.write_bw,
                run.iops,
                run.clat_mean_ns,
                run.clat_p99_ns.map(|v| v.to_string()).unwrap_or_default(),
                run.runtime_ns,
                csv_field(&warned.join(";"))
            );
            let line = if values.is_empty() {
                metrics
            } else {
                format!("{},{metrics}", values.join(","))
            };
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// The JSON document as a value: axes, and per point its values by axis
/// name, its runs, and the summary of each metric over the runs.
pub fn sweep_json(r: &SweepResult) -> Value {
    let points: Vec<Value> = r
        .points
        .iter()
        .map(|p| {
            let mut values = Map::new();
            for (a, v) in r.axes.iter().zip(&p.values) {
                values.insert(a.name.clone(), json!(v));
            }
            let mut summary = Map::new();
            for m in PointMetric::ALL {
                if let Some(s) = p.summary(m) {
                    summary.insert(
                        serde_json::to_value(m)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                        serde_json::to_value(s).unwrap_or(Value::Null),
                    );
                }
            }
            json!({
                "values": Value::Object(values),
                "runs": serde_json::to_value(&p.runs).unwrap_or(Value::Null),
                "summary": Value::Object(summary),
                "warnings": serde_json::to_value(&p.warnings).unwrap_or(Value::Null),
            })
        })
        .collect();
    json!({
        "iolab version": concat!("iolab-", env!("CARGO_PKG_VERSION")),
        "axes": serde_json::to_value(&r.axes).unwrap_or(Value::Null),
        "repeat": r.repeat,
        "repeat_outcome": serde_json::to_value(&r.repeat_outcome).unwrap_or(Value::Null),
        "points": points,
        "failure": serde_json::to_value(&r.failure).unwrap_or(Value::Null),
        "interrupted": r.interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::sweep::{PointRun, SweepAxis};

    fn run(bw: f64) -> PointRun {
        PointRun {
            write_bytes: 1 << 20,
            write_bw: bw,
            iops: 100.0,
            clat_p99_ns: Some(12_000),
            ..PointRun::default()
        }
    }

    fn result(axes: &[(&str, &[&str])], repeat: usize) -> SweepResult {
        let axes: Vec<SweepAxis> = axes
            .iter()
            .map(|(n, v)| SweepAxis {
                name: n.to_string(),
                values: v.iter().map(|s| s.to_string()).collect(),
            })
            .collect();
        let mut points = vec![SweepPoint::default()];
        for a in &axes {
            points = points
                .into_iter()
                .flat_map(|p| {
                    a.values.iter().map(move |v| {
                        let mut q = p.clone();
                        q.values.push(v.clone());
                        q
                    })
                })
                .collect();
        }
        for (i, p) in points.iter_mut().enumerate() {
            p.runs = (0..repeat)
                .map(|k| run((i as f64 + 1.0) * 1e6 * (1.0 + k as f64 / 10.0)))
                .collect();
        }
        SweepResult {
            axes,
            points,
            repeat: repeat as u32,
            ..SweepResult::default()
        }
    }

    #[test]
    fn rows_per_point_without_mode_axes() {
        let r = result(&[("bs", &["4k", "8k", "16k"])], 1);
        let t = render_sweep(&r, CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        let head: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(head, ["bs", "MB/s", "IOPS", "p99", "us", "bytes"]);
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(row, ["8k", "2.00", "100", "12.0", "1048576"]);
    }

    #[test]
    fn mode_axes_become_columns() {
        let r = result(
            &[
                ("bs", &["4k", "1m"]),
                ("rw", &["read", "write"]),
                ("sync", &["none", "dsync"]),
            ],
            3,
        );
        let t = render_sweep(&r, CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        for col in [
            "read sync=none MB/s",
            "read sync=none IOPS",
            "read sync=none p99 us",
            "write sync=dsync MB/s",
            "write sync=dsync IOPS",
            "write sync=dsync p99 us",
        ] {
            assert!(lines[0].contains(col), "{col}: {t}");
        }
        assert!(lines[1].starts_with("4k"));
        // Point 1 (4k read none): runs of 1.0, 1.1, 1.2 MB/s, 100 IOPS and
        // a p99 of 12 us each; then point 2 (4k read dsync): 2.0 to 2.4.
        let cells: Vec<&str> = lines[1].split("  ").filter(|c| !c.is_empty()).collect();
        let cells: Vec<&str> = cells.iter().map(|c| c.trim()).collect();
        assert_eq!(cells.len(), 1 + 4 * 3, "{t}");
        assert_eq!(
            cells[1..7],
            [
                "1.10 ±18%",
                "100 ±0%",
                "12.0 ±0%",
                "2.20 ±18%",
                "100 ±0%",
                "12.0 ±0%"
            ],
            "{t}"
        );
        let md = render_sweep(&r, CompareFormat::Markdown);
        assert!(md.lines().nth(1).unwrap().starts_with("| --"), "{md}");
    }

    #[test]
    fn a_sweep_that_stopped_says_where() {
        let mut r = result(&[("bs", &["4k", "8k"]), ("numjobs", &["1", "2"])], 1);
        r.points.truncate(1);
        r.failure = Some(iolab_stats::sweep::SweepFailure {
            point: "bs=4k numjobs=2".into(),
            message: "No space left on device".into(),
        });
        let t = render_sweep(&r, CompareFormat::Table);
        assert_eq!(t.lines().count(), 2 + 2, "{t}");
        assert!(t.ends_with(
            "\nfailed at point bs=4k numjobs=2: No space left on device; the sweep stopped there\n"
        ), "{t}");
        let v: Value = serde_json::from_str(&render_sweep(&r, CompareFormat::Json)).unwrap();
        assert_eq!(v["failure"]["point"], "bs=4k numjobs=2");
        assert_eq!(v["interrupted"], false);
        // CSV stays CSV.
        let csv = render_sweep(&r, CompareFormat::Csv);
        assert_eq!(csv.lines().count(), 2, "{csv}");
        assert!(!csv.contains("failed"), "{csv}");
    }

    #[test]
    fn warned_points_are_marked_with_a_legend() {
        let mut r = result(&[("bs", &["4k", "8k"]), ("rw", &["read", "write"])], 2);
        r.points[0].warnings.push(iolab_stats::JobWarning {
            code: "page-cache".into(),
            text: "served from memory".into(),
        });
        r.repeat_outcome = Some(iolab_stats::repeat_rule::outcome(
            &iolab_stats::RepeatRule::auto(),
            2,
            iolab_stats::StopReason::Time,
            std::time::Duration::from_secs(2),
            &[],
        ));
        let t = render_sweep(&r, CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        // bs=4k rw=read is the first point: the read cells of row 4k.
        assert!(
            lines[1].starts_with("4k") && lines[1].contains("±10% w1"),
            "{t}"
        );
        assert_eq!(lines[1].matches("w1").count(), 3, "MB/s, IOPS, p99: {t}");
        assert!(!lines[2].contains("w1"), "{t}");
        assert!(t.contains("\nw1 page-cache: bs=4k rw=read\n"), "{t}");
        assert!(t.contains("stopped: time budget spent"), "{t}");
        let csv = render_sweep(&r, CompareFormat::Csv);
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",page-cache"),
            "{csv}"
        );
        assert!(csv.lines().nth(3).unwrap().ends_with(','), "{csv}");
    }

    #[test]
    fn csv_is_one_line_per_run() {
        let r = result(&[("bs", &["4k", "8k"]), ("iodepth", &["1", "4"])], 2);
        let t = render_sweep(&r, CompareFormat::Csv);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], format!("bs,iodepth,{CSV_METRICS}"));
        assert_eq!(lines.len(), 1 + 4 * 2);
        let n = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == n));
        assert!(lines[1].starts_with("4k,1,1,0,1048576,"), "{}", lines[1]);
    }

    #[test]
    fn json_has_points_runs_and_summaries() {
        let r = result(&[("bs", &["4k", "8k"])], 2);
        let v: Value = serde_json::from_str(&render_sweep(&r, CompareFormat::Json)).unwrap();
        assert_eq!(v["points"][1]["values"]["bs"], "8k");
        assert_eq!(v["points"][1]["runs"].as_array().unwrap().len(), 2);
        assert_eq!(v["points"][0]["summary"]["mbps"]["n"], 2);
        assert_eq!(v["repeat"], 2);
    }
}
