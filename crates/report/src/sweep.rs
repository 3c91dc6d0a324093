//! `iolab sweep`'s output: every format but JSON is its document
//! ([`crate::kinds::sweep`]) through the one exporter of that format.
//! The table is a matrix when the grid varies how the I/O is done (`rw`,
//! `sync`, `direct`): each such combination is a group of columns, MB/s,
//! IOPS and p99 latency, and the other axes make the rows, as in
//! published block-size studies; otherwise each point is a row. Repeated
//! runs show the geometric mean and its spread (the one definition,
//! [`crate::doc::num::spread`]). CSV is long form, one line per run, with
//! the point's warning codes; JSON holds the runs and each point's
//! summaries, with the provenance the command adds.

use iolab_stats::sweep::{PointMetric, SweepResult};
use serde_json::{json, Map, Value};

use crate::export::{export, DocFormat, Style};

/// Renders a sweep in one format, text as for a file or a pipe.
pub fn render_sweep(r: &SweepResult, format: DocFormat) -> String {
    render_sweep_styled(r, format, Style::default())
}

/// Renders a sweep in one format, text in `style`.
pub fn render_sweep_styled(r: &SweepResult, format: DocFormat, style: Style) -> String {
    match format {
        DocFormat::Json => {
            let mut s = serde_json::to_string_pretty(&sweep_json(r)).unwrap_or_default();
            s.push('\n');
            s
        }
        f => export(&crate::kinds::sweep::document(r), f, style),
    }
}

/// The CSV columns after the axes' names.
pub const CSV_METRICS: &str = "run,read_bytes,write_bytes,read_bw_bytes,write_bw_bytes,iops,\
clat_mean_ns,clat_p99_ns,runtime_ns,warnings";

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
    use iolab_stats::sweep::{PointRun, SweepAxis, SweepPoint};

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
        let t = render_sweep(&r, DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 6, "{t}");
        assert_eq!(lines[0], "iolab sweep: bs");
        let head: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(head, ["bs", "MB/s", "IOPS", "p99", "(us)"]);
        // 2 MB/s of 3 at most: a bar of two thirds.
        let row: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(
            row,
            ["8k", "2", &crate::export::bar(2.0 / 3.0), "100", "12"]
        );
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
        let t = render_sweep(&r, DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 8, "{t}");
        for col in [
            "read sync=none MB/s",
            "read sync=none IOPS",
            "read sync=none p99 (us)",
            "write sync=dsync MB/s",
            "write sync=dsync IOPS",
            "write sync=dsync p99 (us)",
        ] {
            assert!(lines[2].contains(col), "{col}: {t}");
        }
        assert!(lines[3].starts_with("4k"));
        // Point 1 (4k read none): runs of 1.0, 1.1, 1.2 MB/s, 100 IOPS and
        // a p99 of 12 us each; then point 2 (4k read dsync): 2.0 to 2.4.
        // Each cell the geometric mean with the one spread.
        let cells: Vec<&str> = lines[3].split("  ").filter(|c| !c.is_empty()).collect();
        let cells: Vec<&str> = cells.iter().map(|c| c.trim()).collect();
        assert_eq!(cells.len(), 1 + 4 * 3, "{t}");
        let gm = iolab_stats::geometric_mean(&[1.0, 1.1, 1.2]).unwrap();
        let sp = crate::doc::num::spread(&[1.0, 1.1, 1.2]).unwrap();
        assert_eq!(
            cells[1],
            format!(
                "{} {}",
                crate::doc::num::fmt(gm),
                crate::doc::num::spread_text(sp)
            ),
            "{t}"
        );
        assert_eq!(cells[2..4], ["100 ±0%", "12 ±0%"], "{t}");
        let md = render_sweep(&r, DocFormat::Markdown);
        assert!(md.lines().any(|l| l.starts_with("|---|---:")), "{md}");
        // CSV: one line per run, whatever the table's layout.
        assert_eq!(render_sweep(&r, DocFormat::Csv).lines().count(), 1 + 8 * 3);
    }

    #[test]
    fn a_sweep_that_stopped_says_where() {
        let mut r = result(&[("bs", &["4k", "8k"]), ("numjobs", &["1", "2"])], 1);
        r.points.truncate(1);
        r.failure = Some(iolab_stats::sweep::SweepFailure {
            point: "bs=4k numjobs=2".into(),
            message: "No space left on device".into(),
        });
        let t = render_sweep(&r, DocFormat::Text);
        assert_eq!(t.lines().count(), 6, "{t}");
        assert!(t.ends_with(
            "\nnote: failed at point bs=4k numjobs=2: No space left on device; the sweep stopped \
             there\n"
        ), "{t}");
        let v: Value = serde_json::from_str(&render_sweep(&r, DocFormat::Json)).unwrap();
        assert_eq!(v["failure"]["point"], "bs=4k numjobs=2");
        assert_eq!(v["interrupted"], false);
        // CSV stays CSV.
        let csv = render_sweep(&r, DocFormat::Csv);
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
        let t = render_sweep(&r, DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        // bs=4k rw=read is the first point: the read cells of row 4k.
        assert!(
            lines[3].starts_with("4k") && lines[3].contains("% w1"),
            "{t}"
        );
        assert_eq!(lines[3].matches("w1").count(), 3, "MB/s, IOPS, p99: {t}");
        assert!(!lines[4].contains("w1"), "{t}");
        assert!(
            t.contains("\nw1 page-cache: served from memory (at bs=4k rw=read)\n"),
            "{t}"
        );
        assert!(t.contains("stopped: time budget spent"), "{t}");
        let csv = render_sweep(&r, DocFormat::Csv);
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",page-cache"),
            "{csv}"
        );
        assert!(csv.lines().nth(3).unwrap().ends_with(','), "{csv}");
    }

    #[test]
    fn csv_is_one_line_per_run() {
        let r = result(&[("bs", &["4k", "8k"]), ("iodepth", &["1", "4"])], 2);
        let t = render_sweep(&r, DocFormat::Csv);
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
        let v: Value = serde_json::from_str(&render_sweep(&r, DocFormat::Json)).unwrap();
        assert_eq!(v["points"][1]["values"]["bs"], "8k");
        assert_eq!(v["points"][1]["runs"].as_array().unwrap().len(), 2);
        assert_eq!(v["points"][0]["summary"]["mbps"]["n"], 2);
        assert_eq!(v["repeat"], 2);
    }
}
