//! `iolab compare`'s output: every format but JSON is its document
//! ([`crate::kinds::compare`]) through the one exporter of that format.
//! Text, Markdown and HTML show each cell's geometric mean over its runs
//! (the statistic the verdicts test) with its spread (the one definition,
//! [`crate::doc::num::spread`]), `*` on the best value of a row only when
//! it is better than every other target beyond the noise, with a baseline
//! the ratio against it and its verdict in words, and `wN` when a run
//! raised warning N about the number. The verdicts are the stats crate's
//! (`Comparison::verdicts`); the documents only word them. CSV is long
//! form, one line per metric and target, for spreadsheets, with the
//! warning codes of each cell. JSON is the comparison itself plus every
//! workload run in fio's JSON and every warning's text.

use iolab_stats::{Comparison, TargetColumn};

use crate::export::{export, DocFormat, Style};
use crate::{render, Format, RenderOpts};

/// The formats of the table commands (compare, quick, meta, sweep, and
/// show of their results).
pub type CompareFormat = DocFormat;

/// Renders a comparison in one format, text as for a file or a pipe.
pub fn render_comparison(c: &Comparison, format: DocFormat) -> String {
    render_comparison_styled(c, format, Style::default())
}

/// Renders a comparison in one format, text in `style`.
pub fn render_comparison_styled(c: &Comparison, format: DocFormat, style: Style) -> String {
    match format {
        DocFormat::Json => json(c),
        f => export(&crate::kinds::compare::document(c), f, style),
    }
}

/// Every run's value, one line per metric and target (`--show-runs`).
pub fn render_runs(c: &Comparison, format: DocFormat, style: Style) -> String {
    export(&crate::kinds::compare::runs_document(c), format, style)
}

fn status(t: &TargetColumn) -> &'static str {
    match (&t.skipped, &t.failed) {
        (Some(_), _) => "skipped",
        (None, Some(_)) => "failed",
        _ => "ok",
    }
}

fn json(c: &Comparison) -> String {
    use serde_json::{json, Value};
    let v = c.verdicts();
    let metrics: Vec<Value> = c
        .metrics
        .iter()
        .map(|m| {
            let cells: serde_json::Map<String, Value> = c
                .targets
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let cell = t.value(&m.key)?;
                    let pair = c
                        .baseline_index()
                        .filter(|&b| b != i)
                        .and_then(|b| v.against(&m.key, b, i));
                    Some((
                        t.label.clone(),
                        json!({
                            "geomean": c.center(&m.key, i),
                            "median": cell.median(),
                            "min": cell.min(),
                            "max": cell.max(),
                            "runs": cell.runs,
                            "noisy": cell.noisy(),
                            "best": v.is_best(&m.key, i),
                            "ratio": c.ratio(&m.key, i),
                            "ratio_interval": pair.and_then(|p| p.test.as_ref()?.interval),
                            "verdict": pair.map(|p| p.verdict),
                            "verdict_words": pair.map(|p| p.verdict.words(m.better)),
                            "warnings": cell.warnings,
                        }),
                    ))
                })
                .collect();
            json!({
                "key": m.key,
                "label": m.label,
                "unit": m.unit,
                "better": format!("{:?}", m.better).to_lowercase(),
                "values": cells,
            })
        })
        .collect();
    let targets: Vec<Value> = c
        .targets
        .iter()
        .map(|t| {
            json!({
                "label": t.label,
                "description": t.description,
                "status": status(t),
                "skipped": t.skipped,
                "failed": t.failed,
                "setup": t.setup,
            })
        })
        .collect();
    let opts = RenderOpts::default();
    let runs: Vec<Value> = c
        .runs
        .iter()
        .map(|r| {
            let fio: Value = serde_json::from_str(&render(&r.result, &opts, Format::Json))
                .unwrap_or(Value::Null);
            json!({
                "target": r.target,
                "workload": r.workload,
                "run": r.run,
                "fio": fio,
            })
        })
        .collect();
    let doc = json!({
        "iolab compare": {
            "version": opts.version,
            "repeat": c.repeat,
            "statistic": v.method.statistic().to_string(),
            "method": v.method.to_string(),
            "alpha": v.alpha,
            "baseline": c.baseline,
            "interrupted": c.interrupted,
            "host": c.host,
            "notes": c.notes,
            "targets": targets,
            "metrics": metrics,
            "warnings": c.warnings,
            "runs": runs,
        }
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::{Better, Metric};

    fn sample() -> Comparison {
        let mut c = Comparison {
            baseline: Some("ext4".into()),
            repeat: 3,
            ..Default::default()
        };
        for (k, l, u, b) in [
            ("mkfs_s", "mkfs time", "s", Better::Lower),
            ("w.write.mb_s", "w write", "MB/s", Better::Higher),
        ] {
            c.add_metric(Metric {
                key: k.into(),
                label: l.into(),
                unit: u.into(),
                better: b,
            });
        }
        let mut a = TargetColumn {
            label: "ext4".into(),
            description: "ext4 on /dev/loop1".into(),
            ..Default::default()
        };
        let mut b = TargetColumn {
            label: "xfs".into(),
            ..Default::default()
        };
        for v in [0.5, 0.5, 0.5] {
            a.push("mkfs_s", v);
            b.push("mkfs_s", v / 2.0);
        }
        for v in [100.0, 150.0, 100.0] {
            a.push("w.write.mb_s", v);
            b.push("w.write.mb_s", v * 2.0);
        }
        let f = TargetColumn {
            label: "f2fs".into(),
            skipped: Some("the kernel lacks f2fs".into()),
            ..Default::default()
        };
        c.targets = vec![a, b, f];
        c.note("reads of a sparse image");
        c
    }

    #[test]
    fn text_table() {
        let t = render_comparison(&sample(), DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "iolab compare: ext4 vs xfs vs f2fs", "{t}");
        assert_eq!(lines[1], "ext4 (baseline): ext4 on /dev/loop1", "{t}");
        assert_eq!(lines[3], "f2fs: skipped: the kernel lacks f2fs", "{t}");
        let head = lines.iter().find(|l| l.starts_with("metric")).unwrap();
        assert!(
            head.contains("ext4 (baseline)") && head.contains("xfs") && head.contains("f2fs"),
            "{t}"
        );
        let mkfs = lines.iter().find(|l| l.starts_with("mkfs time")).unwrap();
        assert!(mkfs.contains("0.5000 ±0%"), "{mkfs}");
        // Identical runs a side: the difference is exact, and mkfs time
        // down is faster.
        assert!(mkfs.contains("*0.2500 ±0% x0.50 faster"), "{mkfs}");
        assert!(mkfs.trim_end().ends_with('-'), "{mkfs}");
        let w = lines.iter().find(|l| l.starts_with("w write")).unwrap();
        // Geometric means of 100 150 100 and of twice that, with the one
        // spread: the 95% interval of the geometric mean.
        assert!(
            w.contains("114.5 ±78.9%") && w.contains("*228.9 ±78.9% x2.00 better"),
            "{w}"
        );
        assert!(t.contains("the geometric mean of 3 run(s)"), "{t}");
        assert!(t.contains(crate::doc::num::SPREAD_MEANING), "{t}");
        assert!(
            t.contains("verdicts: Welch's t-test on log values on each cell's runs, 5% level"),
            "{t}"
        );
        assert!(t.contains("\nnote: reads of a sparse image\n"), "{t}");
    }

    #[test]
    fn markdown_table() {
        let t = render_comparison(&sample(), DocFormat::Markdown);
        assert!(
            t.starts_with("# iolab compare: ext4 vs xfs vs f2fs\n"),
            "{t}"
        );
        assert!(t.contains("\n|---|---|---:|---:|---:|\n"), "{t}");
        assert!(
            t.contains("| mkfs time | s | 0.5000 ±0% | *0.2500 ±0% x0.50 faster | - |"),
            "{t}"
        );
        assert!(t.contains("f2fs: skipped: the kernel lacks f2fs"), "{t}");
    }

    #[test]
    fn csv_long_form() {
        let t = render_comparison(&sample(), DocFormat::Csv);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "key,metric,unit,target,status,geomean,min,max,runs,best,ratio,ratio_low,\
             ratio_high,verdict,p,note,warnings"
        );
        assert!(
            lines.contains(&"status,status,,f2fs,skipped,,,,0,,,,,,,the kernel lacks f2fs,"),
            "{t}"
        );
        assert!(
            lines.contains(&"mkfs_s,mkfs time,s,xfs,ok,0.25,0.25,0.25,3,1,0.5,0.5,0.5,faster,0,,"),
            "{t}"
        );
        assert_eq!(lines.len(), 1 + 1 + 4);
    }

    #[test]
    fn json_carries_the_host_and_how_each_target_was_made() {
        let mut c = sample();
        c.host = Some(iolab_stats::Environment {
            host: "bench1".into(),
            hypervisor: Some(iolab_stats::Virt {
                name: "QEMU".into(),
                emulated: true,
            }),
            ..Default::default()
        });
        c.targets[0].setup = Some(iolab_stats::TargetSetup {
            fs_type: "ext4".into(),
            mkfs_version: "mke2fs 1.47.0 (5-Feb-2023)".into(),
            mkfs_options: vec!["-F".into(), "-q".into()],
            mount_options: "rw,relatime".into(),
            ..Default::default()
        });
        let v: serde_json::Value =
            serde_json::from_str(&render_comparison(&c, DocFormat::Json)).unwrap();
        let c = &v["iolab compare"];
        assert_eq!(c["host"]["host"], "bench1");
        assert_eq!(c["host"]["hypervisor"]["name"], "QEMU");
        let t = &c["targets"][0]["setup"];
        assert_eq!(t["mkfs_version"], "mke2fs 1.47.0 (5-Feb-2023)");
        assert_eq!(t["mkfs_options"], serde_json::json!(["-F", "-q"]));
        assert_eq!(t["mount_options"], "rw,relatime");
        assert!(c["targets"][1]["setup"].is_null());
    }

    #[test]
    fn json_document() {
        let t = render_comparison(&sample(), DocFormat::Json);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        let c = &v["iolab compare"];
        assert_eq!(c["targets"][2]["status"], "skipped");
        assert_eq!(c["notes"][0], "reads of a sparse image");
        assert_eq!(c["metrics"][0]["values"]["xfs"]["best"], true);
        assert_eq!(c["metrics"][1]["values"]["ext4"]["median"], 100.0);
        let ratio = c["metrics"][1]["values"]["xfs"]["ratio"].as_f64().unwrap();
        assert!((ratio - 2.0).abs() < 1e-9, "{ratio}");
        assert_eq!(
            c["metrics"][1]["values"]["xfs"]["verdict"]["verdict"],
            "larger"
        );
        assert_eq!(c["metrics"][1]["values"]["xfs"]["verdict_words"], "faster");
        assert_eq!(c["statistic"], "geometric mean");
    }

    #[test]
    fn every_run() {
        let t = render_runs(&sample(), DocFormat::Text, Style::default());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "Every run", "{t}");
        assert!(
            lines[2].starts_with("metric") && lines[2].ends_with("run 2   run 3"),
            "{t}"
        );
        let w: Vec<&str> = lines
            .iter()
            .find(|l| l.starts_with("w write") && l.contains("xfs"))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(w, ["w", "write", "MB/s", "xfs", "200", "300", "200"]);
        // The skipped target has no lines.
        assert!(!t.contains("f2fs"));
    }

    #[test]
    fn format_names() {
        assert_eq!("markdown".parse::<CompareFormat>(), Ok(DocFormat::Markdown));
        assert!("xml"
            .parse::<CompareFormat>()
            .unwrap_err()
            .to_string()
            .contains("table, markdown, csv, json or html"));
    }

    /// Two targets with the same write speed, a third that failed with a
    /// faster one, and warnings on some cells.
    fn warned() -> Comparison {
        use iolab_stats::RunWarning;
        let mut c = Comparison {
            repeat: 1,
            ..Default::default()
        };
        c.add_metric(Metric {
            key: "w.write.mb_s".into(),
            label: "w write".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
        });
        c.add_metric(Metric {
            key: "w.write.clat_p99_us".into(),
            label: "w write clat p99".into(),
            unit: "us".into(),
            better: Better::Lower,
        });
        for (label, mbs, p99, failed) in [
            ("A", 100.0, 80.0, false),
            ("B", 100.0, 80.0, false),
            ("C", 900.0, 1.0, true),
        ] {
            let mut t = TargetColumn {
                label: label.into(),
                failed: failed.then(|| "I/O error".to_string()),
                ..Default::default()
            };
            t.push("w.write.mb_s", mbs);
            t.push("w.write.clat_p99_us", p99);
            c.targets.push(t);
        }
        for (target, code) in [
            ("B", "queue-depth-not-reached"),
            ("B", "page-cache"),
            ("A", "page-cache"),
        ] {
            c.targets
                .iter_mut()
                .find(|t| t.label == target)
                .unwrap()
                .flag("w.write.mb_s", code);
            c.warnings.push(RunWarning {
                target: target.into(),
                rows: "w".into(),
                run: 1,
                code: code.into(),
                text: format!("job `w`: {code} text"),
            });
        }
        c
    }

    #[test]
    fn single_runs_and_ties_get_no_best_mark() {
        let t = render_comparison(&warned(), DocFormat::Text);
        let w: Vec<&str> = t
            .lines()
            .find(|l| l.starts_with("w write  "))
            .unwrap()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(w[2], "100 w1", "{t}");
        assert_eq!(w[3], "100 w1,w2", "{t}");
        assert_eq!(w[4], "900", "{t}");
        let p99 = t
            .lines()
            .find(|l| l.starts_with("w write clat p99"))
            .unwrap();
        assert_eq!(p99.matches('*').count(), 0, "{p99}");
        assert!(
            t.contains("one run each cannot tell a difference from noise"),
            "{t}"
        );
        assert!(p99.trim_end().ends_with(" 1"), "{p99}");
        let csv = render_comparison(&warned(), DocFormat::Csv);
        assert!(
            csv.lines().any(|l| l.starts_with("w.write.mb_s,")
                && l.contains(",A,ok,100,100,100,1,0,,,,,,,page-cache")),
            "{csv}"
        );
        assert!(
            csv.lines().any(|l| l.starts_with("w.write.mb_s,")
                && l.contains(",C,failed,900,900,900,1,0,,,,,,,")),
            "{csv}"
        );
    }

    #[test]
    fn warnings_are_flagged_with_a_legend() {
        let t = render_comparison(&warned(), DocFormat::Text);
        // Each warning once, with its text and where it was raised.
        assert!(
            t.contains("\nw1 page-cache: job `w`: page-cache text (at A w, B w)\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "\nw2 queue-depth-not-reached: job `w`: queue-depth-not-reached text (at B w)\n"
            ),
            "{t}"
        );
        let md = render_comparison(&warned(), DocFormat::Markdown);
        assert!(md.contains("| 100 w1,w2 |"), "{md}");
        assert!(md.contains("\n- **w1** page-cache: job `w`"), "{md}");
        let csv = render_comparison(&warned(), DocFormat::Csv);
        assert!(
            csv.lines().any(|l| l.starts_with("w.write.mb_s,")
                && l.ends_with(",B,ok,100,100,100,1,0,,,,,,,queue-depth-not-reached;page-cache")),
            "{csv}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render_comparison(&warned(), DocFormat::Json)).unwrap();
        let c = &v["iolab compare"];
        assert_eq!(
            c["metrics"][0]["values"]["B"]["warnings"],
            serde_json::json!(["queue-depth-not-reached", "page-cache"])
        );
        assert_eq!(
            c["metrics"][1]["values"]["B"]["warnings"],
            serde_json::json!([])
        );
        assert_eq!(c["warnings"][1]["text"], "job `w`: page-cache text");
        assert_eq!(c["warnings"][2]["target"], "A");
        // Without warnings, no markers and no legend for them.
        let plain = render_comparison(&sample(), DocFormat::Text);
        assert!(!plain.contains(" w1") && !plain.contains("wN"), "{plain}");
    }

    #[test]
    fn a_baseline_without_numbers_says_so() {
        let mut c = sample();
        c.baseline = Some("f2fs".into());
        let t = render_comparison(&c, DocFormat::Text);
        assert!(
            t.contains("no ratios: the baseline f2fs was skipped"),
            "{t}"
        );
        assert!(
            !t.contains("xN: the ratio") && !t.contains(" x0.") && !t.contains(" x1."),
            "{t}"
        );
        let mut c = warned();
        c.baseline = Some("C".into());
        let t = render_comparison(&c, DocFormat::Text);
        assert!(
            t.contains("xN: the ratio to C, which failed: only the rows it has"),
            "{t}"
        );
        c.targets[2].values.clear();
        let t = render_comparison(&c, DocFormat::Text);
        assert!(t.contains("no ratios: the baseline C failed"), "{t}");
    }

    /// A capacity row, a fact whose values differ far beyond the noise,
    /// beside a score row and a write+fsync workload's fsync latency rows.
    fn facts_and_fsync() -> Comparison {
        let mut c = Comparison {
            baseline: Some("ext4".into()),
            repeat: 3,
            ..Default::default()
        };
        for (k, l, u, b) in [
            ("used_mib", "used after mkfs", "MiB", Better::Neither),
            ("avail_mib", "available", "MiB", Better::Higher),
            (
                "sf.write.fsync_p50_us",
                "sf write fsync p50",
                "us",
                Better::Lower,
            ),
            (
                "sf.write.fsync_p99_us",
                "sf write fsync p99",
                "us",
                Better::Lower,
            ),
        ] {
            c.add_metric(Metric {
                key: k.into(),
                label: l.into(),
                unit: u.into(),
                better: b,
            });
        }
        for (label, used, avail, p50, p99) in [
            ("ext4", 40.0, 900.0, 2000.0, 9000.0),
            ("xfs", 10.0, 1000.0, 500.0, 800.0),
        ] {
            let mut t = TargetColumn {
                label: label.into(),
                ..Default::default()
            };
            for f in [1.0, 1.01, 0.99] {
                t.push("used_mib", used * f);
                t.push("avail_mib", avail * f);
                t.push("sf.write.fsync_p50_us", p50 * f);
                t.push("sf.write.fsync_p99_us", p99 * f);
            }
            c.targets.push(t);
        }
        c.note("used after mkfs: size minus the free blocks");
        c
    }

    #[test]
    fn facts_get_no_best_mark_and_the_legend_says_why() {
        let c = facts_and_fsync();
        let t = render_comparison(&c, DocFormat::Text);
        let row = |start: &str| {
            t.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no `{start}` in\n{t}"))
                .to_string()
        };
        let used = row("used after mkfs");
        assert!(!used.contains('*'), "{used}");
        assert!(used.trim_end().ends_with("x0.25 lower"), "{used}");
        // The score beside it is marked.
        assert!(row("available").contains("*1,000"), "{t}");
        assert!(
            t.contains("no best in rows that are facts, not scores (used after mkfs)"),
            "{t}"
        );
        assert!(
            t.contains("higher or lower: a fact's row differs beyond the noise"),
            "{t}"
        );
        assert!(
            t.contains("\nnote: used after mkfs: size minus the free blocks\n"),
            "{t}"
        );
        let md = render_comparison(&c, DocFormat::Markdown);
        let used = md.lines().find(|l| l.contains("used after mkfs")).unwrap();
        assert!(!used.contains("**"), "{used}");
        let csv = render_comparison(&c, DocFormat::Csv);
        assert!(
            csv.lines().any(|l| l.starts_with("used_mib,")
                && l.contains(",xfs,ok,")
                && l.contains(",3,0,")),
            "{csv}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render_comparison(&c, DocFormat::Json)).unwrap();
        let m = &v["iolab compare"]["metrics"][0];
        assert_eq!(m["better"], "neither");
        assert_eq!(m["values"]["xfs"]["best"], false);
        assert_eq!(m["values"]["xfs"]["verdict_words"], "lower");
        // Without a fact's row, the legend does not speak of facts.
        let plain = render_comparison(&sample(), DocFormat::Text);
        assert!(!plain.contains("facts"), "{plain}");
    }

    #[test]
    fn fsync_latency_rows_show_in_one_unit() {
        let t = render_comparison(&facts_and_fsync(), DocFormat::Text);
        for (start, base, other) in [
            ("sf write fsync p50", "2,000", "*500.0 ±2.5% x0.25 faster"),
            ("sf write fsync p99", "9,000", "*800.0 ±2.5% x0.09 faster"),
        ] {
            let l = t.lines().find(|l| l.starts_with(start)).unwrap();
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            assert_eq!(cells[1], "us", "{l}");
            assert!(cells[2].starts_with(base), "{l}");
            assert_eq!(cells[3], other, "{l}");
        }
    }

    #[test]
    fn two_targets_alike_show_no_best_and_approx_everywhere() {
        // Two directories of one filesystem, twice each: runs that differ
        // by as much as 2x from noise.
        let mut c = Comparison {
            baseline: Some("a".into()),
            repeat: 2,
            ..Default::default()
        };
        for (k, better) in [
            ("w.write.mb_s", Better::Higher),
            ("w.write.iops", Better::Higher),
            ("w.write.clat_p50_us", Better::Lower),
            ("w.write.clat_p99_us", Better::Lower),
        ] {
            c.add_metric(Metric {
                key: k.into(),
                label: k.into(),
                unit: "x".into(),
                better,
            });
        }
        let runs = [("a", [100.0, 52.0]), ("b", [48.0, 61.0])];
        for (label, v) in runs {
            let mut t = TargetColumn {
                label: label.into(),
                ..Default::default()
            };
            for m in &c.metrics {
                for x in v {
                    t.push(&m.key, x);
                }
            }
            c.targets.push(t);
        }
        let t = render_comparison(&c, DocFormat::Text);
        for l in t.lines().filter(|l| l.starts_with("w.write")) {
            assert!(!l.contains('*'), "{l}");
            assert!(l.trim_end().ends_with("≈ same"), "{l}");
        }
        assert_eq!(
            t.matches("≈ same").count(),
            4 + 1,
            "four cells and the legend:\n{t}"
        );
    }
}
