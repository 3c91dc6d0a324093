//! Comparison tables: a `Comparison` (rows are metrics, columns are
//! targets) rendered as an aligned text table, Markdown, CSV or JSON.
//!
//! Text and Markdown show each cell's geometric mean over its runs (the
//! statistic the verdicts test), `±N%` for the spread when runs were
//! repeated (with `!` when the spread exceeds 10% of the median), `*`
//! (bold in Markdown) on the best value of a row only when it is better
//! than every other target beyond the noise (skipped and failed targets do
//! not compete), with a baseline the ratio against it carrying its verdict
//! (`x1.25+` better, `x0.80-` worse, `x1.02≈` cannot be told apart,
//! `x0.50?` cannot tell: one run each; in a row without a better
//! direction, a fact such as a capacity, `x0.80≠` differs beyond the
//! noise and no value is marked best), and `wN` when a run raised warning
//! N about the number (page cache, compression, ...), named with its
//! targets and workloads in the legend. The verdicts are the stats
//! crate's (`Comparison::verdicts`); this module only words them. Skipped and failed targets appear as
//! columns with their reason in the notes under the table. CSV is long
//! form, one line per metric and target, for spreadsheets, with the
//! warning codes of each cell. JSON is the comparison itself plus every
//! workload run in fio's JSON and every warning's text.

use std::fmt::Write as _;
use std::str::FromStr;

use iolab_stats::{Better, Cell, Comparison, ComparisonVerdicts, Metric, TargetColumn, Verdict};

use crate::{render, Format, RenderOpts};

/// An output format of `iolab compare` (and quick, meta, sweep).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    Table,
    Markdown,
    Csv,
    Json,
    /// One self-contained page with charts (crate::export::Html).
    Html,
}

/// A comparison format name that is not one of the four.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown output format '{0}' (expected table, markdown, csv, json or html)")]
pub struct CompareFormatError(pub String);

impl FromStr for CompareFormat {
    type Err = CompareFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "table" | "normal" => Ok(CompareFormat::Table),
            "markdown" | "md" => Ok(CompareFormat::Markdown),
            "csv" => Ok(CompareFormat::Csv),
            "json" => Ok(CompareFormat::Json),
            "html" => Ok(CompareFormat::Html),
            other => Err(CompareFormatError(other.to_string())),
        }
    }
}

/// Renders a comparison in one format.
pub fn render_comparison(c: &Comparison, format: CompareFormat) -> String {
    match format {
        CompareFormat::Table => table(c, false),
        CompareFormat::Markdown => table(c, true),
        CompareFormat::Csv => csv(c),
        CompareFormat::Json => json(c),
        CompareFormat::Html => crate::export::html_of(&crate::kinds::compare::document(c)),
    }
}

/// A number with about three significant digits; counts as integers.
fn num(v: f64, unit: &str) -> String {
    let a = v.abs();
    if unit == "count" || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn status(t: &TargetColumn) -> &'static str {
    match (&t.skipped, &t.failed) {
        (Some(_), _) => "skipped",
        (None, Some(_)) => "failed",
        _ => "ok",
    }
}

/// The warning codes of a comparison, numbered from 1 in the order the
/// runs raised them: cells show `wN`.
fn warning_codes(c: &Comparison) -> Vec<&str> {
    let mut codes: Vec<&str> = Vec::new();
    let cells = c.targets.iter().flat_map(|t| &t.values);
    let raised = c.warnings.iter().map(|w| w.code.as_str());
    for code in raised.chain(cells.flat_map(|(_, cell)| cell.warnings.iter().map(|w| w.as_str()))) {
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    codes
}

/// The `wN` markers of a cell's warnings, comma-separated.
fn markers(codes: &[&str], cell: &Cell) -> String {
    cell.warnings
        .iter()
        .filter_map(|w| codes.iter().position(|c| c == w))
        .map(|n| format!("w{}", n + 1))
        .collect::<Vec<_>>()
        .join(",")
}

/// The ratio of column `i` to the baseline in row `m` with its verdict's
/// mark: `x1.25+`, `x0.80-`, `x1.02≈`, `x0.50?`.
fn ratio_text(c: &Comparison, v: &ComparisonVerdicts, m: &Metric, i: usize) -> Option<String> {
    let base = c.baseline_index().filter(|&b| b != i)?;
    let r = c.ratio(&m.key, i)?;
    let verdict = v
        .against(&m.key, base, i)
        .map_or(Verdict::NoTest, |p| p.verdict);
    Some(format!("x{r:.2}{}", verdict.mark(m.better)))
}

/// One cell's text.
fn cell_text(
    c: &Comparison,
    v: &ComparisonVerdicts,
    codes: &[&str],
    m: &Metric,
    i: usize,
    md: bool,
) -> String {
    let Some(cell) = c.targets[i].value(&m.key) else {
        return "-".into();
    };
    let Some(center) = c.center(&m.key, i) else {
        return "-".into();
    };
    let mut s = num(center, &m.unit);
    if let Some(sp) = cell.spread() {
        let _ = write!(s, " ±{:.0}%", sp * 50.0);
        if cell.noisy() {
            s.push('!');
        }
    }
    if let Some(r) = ratio_text(c, v, m, i) {
        s.push(' ');
        s.push_str(&r);
    }
    if v.is_best(&m.key, i) {
        s = if md {
            format!("**{s}**")
        } else {
            format!("*{s}")
        };
    }
    let w = markers(codes, cell);
    if !w.is_empty() {
        s.push(' ');
        s.push_str(&w);
    }
    s
}

fn rows(c: &Comparison, v: &ComparisonVerdicts, md: bool) -> Vec<Vec<String>> {
    let mut out = vec![];
    let mut head = vec!["metric".to_string(), "unit".to_string()];
    for t in &c.targets {
        let mut h = t.label.clone();
        if c.baseline.as_deref() == Some(t.label.as_str()) {
            h.push_str(" (baseline)");
        }
        head.push(h);
    }
    out.push(head);
    let mut st = vec!["status".to_string(), String::new()];
    st.extend(c.targets.iter().map(|t| status(t).to_string()));
    out.push(st);
    let codes = warning_codes(c);
    for m in &c.metrics {
        let mut r = vec![m.label.clone(), m.unit.clone()];
        for i in 0..c.targets.len() {
            r.push(cell_text(c, v, &codes, m, i, md));
        }
        out.push(r);
    }
    out
}

fn notes(c: &Comparison, v: &ComparisonVerdicts, md: bool) -> String {
    let bullet = if md { "- " } else { "  " };
    let mut s = String::new();
    let mut line = |text: String| {
        s.push_str(bullet);
        s.push_str(&text);
        s.push('\n');
    };
    for t in &c.targets {
        if let Some(r) = &t.skipped {
            line(format!("{}: skipped: {r}", t.label));
        } else if let Some(r) = &t.failed {
            line(format!("{}: failed: {r}", t.label));
        }
    }
    for t in &c.targets {
        if t.skipped.is_none() && !t.description.is_empty() {
            line(format!("{}: {}", t.label, t.description));
        }
    }
    let best = if md { "bold" } else { "*" };
    let mut legend = format!("geometric mean of {} run(s)", c.repeat.max(1));
    if c.repeat > 1 {
        legend.push_str(", ±half the min-max spread, ! when the spread exceeds 10% of the median");
    }
    let _ = write!(
        legend,
        "; {best} best of the row: better than every other target beyond the noise"
    );
    let facts: Vec<&str> = c
        .metrics
        .iter()
        .filter(|m| m.better == Better::Neither)
        .map(|m| m.label.as_str())
        .collect();
    if !facts.is_empty() {
        let _ = write!(
            legend,
            "; no best in rows that are facts, not scores ({})",
            facts.join(", ")
        );
    }
    if let Some(b) = &c.baseline {
        let base = c.baseline_index().map(|i| &c.targets[i]);
        match base {
            Some(t) if t.skipped.is_some() => {
                let _ = write!(legend, "; no ratios: the baseline {b} was skipped");
            }
            Some(t) if t.failed.is_some() && t.values.is_empty() => {
                let _ = write!(legend, "; no ratios: the baseline {b} failed");
            }
            Some(t) if t.failed.is_some() => {
                let _ = write!(
                    legend,
                    "; xN = ratio to {b}, which failed: only the rows it has"
                );
            }
            _ => {
                let _ = write!(
                    legend,
                    "; xN = ratio to {b}: + better, - worse beyond the noise, ≈ cannot be \
                     told apart, ? cannot tell"
                );
                if !facts.is_empty() {
                    legend.push_str(", ≠ differs beyond the noise (a fact's row)");
                }
            }
        }
    }
    line(legend);
    line(format!(
        "verdicts: {} on each cell's runs, {:.0}% level, Holm-corrected over the rows of \
         each workload{}",
        v.method,
        v.alpha * 100.0,
        if c.repeat <= 1 {
            "; one run each cannot tell a difference from noise: use --repeat 3 or more"
        } else {
            ""
        }
    ));
    let codes = warning_codes(c);
    for (n, code) in codes.iter().enumerate() {
        line(format!("w{} {code}: {}", n + 1, warned_where(c, code)));
    }
    if !codes.is_empty() {
        line("wN: iolab warns that the number may not measure what it seems to; the full texts are in --output-format json".into());
    }
    for n in &c.notes {
        line(format!("note: {n}"));
    }
    if c.interrupted {
        line("interrupted: the numbers are partial".into());
    }
    s
}

/// Where a warning code was raised: "ext4 seqread-1m, randread-4k; xfs
/// seqread-1m", targets in column order, workloads in the order raised.
fn warned_where(c: &Comparison, code: &str) -> String {
    let mut parts = Vec::new();
    for t in &c.targets {
        let mut rows: Vec<&str> = Vec::new();
        for w in c
            .warnings
            .iter()
            .filter(|w| w.code == code && w.target == t.label)
        {
            if !rows.contains(&w.rows.as_str()) {
                rows.push(&w.rows);
            }
        }
        if !rows.is_empty() {
            parts.push(format!("{} {}", t.label, rows.join(", ")));
        }
    }
    parts.join("; ")
}

fn table(c: &Comparison, md: bool) -> String {
    let v = c.verdicts();
    let rows = rows(c, &v, md);
    let ncol = rows[0].len();
    let width: Vec<usize> = (0..ncol)
        .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for (k, r) in rows.iter().enumerate() {
        if md {
            s.push('|');
        }
        for (j, v) in r.iter().enumerate() {
            let pad = width[j] - v.chars().count();
            if md {
                s.push(' ');
            } else if j > 0 {
                s.push_str("  ");
            }
            // Text left-aligned in the first two columns, numbers right.
            if j < 2 {
                s.push_str(v);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(v);
            }
            if md {
                s.push_str(" |");
            }
        }
        let trimmed = s.trim_end_matches(' ').len();
        s.truncate(trimmed);
        s.push('\n');
        if md && k == 0 {
            s.push('|');
            for (j, w) in width.iter().enumerate() {
                let dashes = "-".repeat((*w).max(3));
                if j < 2 {
                    let _ = write!(s, " {dashes} |");
                } else {
                    let _ = write!(s, " {}: |", &dashes[1..]);
                }
            }
            s.push('\n');
        }
    }
    s.push('\n');
    s.push_str(&notes(c, &v, md));
    s
}

/// Every run's value, one line per metric and target (`--show-runs`):
/// differences between run 1 and the later runs (a cache warming up) are
/// findings of their own.
pub fn render_runs(c: &Comparison) -> String {
    let n = c
        .targets
        .iter()
        .flat_map(|t| t.values.iter().map(|(_, cell)| cell.runs.len()))
        .max()
        .unwrap_or(0);
    let mut rows = vec![{
        let mut h = vec!["metric".to_string(), "unit".into(), "target".into()];
        h.extend((1..=n).map(|i| format!("run {i}")));
        h
    }];
    for m in &c.metrics {
        for t in &c.targets {
            let Some(cell) = t.value(&m.key) else {
                continue;
            };
            let mut r = vec![m.label.clone(), m.unit.clone(), t.label.clone()];
            r.extend(cell.runs.iter().map(|v| num(*v, &m.unit)));
            r.resize(n + 3, String::new());
            rows.push(r);
        }
    }
    let width: Vec<usize> = (0..n + 3)
        .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for r in &rows {
        let mut line = String::new();
        for (j, v) in r.iter().enumerate() {
            let pad = " ".repeat(width[j] - v.chars().count());
            if j > 0 {
                line.push_str("  ");
            }
            if j < 3 {
                line.push_str(v);
                line.push_str(&pad);
            } else {
                line.push_str(&pad);
                line.push_str(v);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(c: &Comparison) -> String {
    let mut s = String::from(
        "key,metric,unit,target,status,geomean,min,max,runs,best,ratio,ratio_low,ratio_high,\
         verdict,p,note,warnings\n",
    );
    let v = c.verdicts();
    let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    for t in c
        .targets
        .iter()
        .filter(|t| t.skipped.is_some() || t.failed.is_some())
    {
        let note = t.skipped.as_deref().or(t.failed.as_deref()).unwrap_or("");
        let _ = writeln!(
            s,
            "status,status,,{},{},,,,0,,,,,,,{},",
            csv_field(&t.label),
            status(t),
            csv_field(note)
        );
    }
    for m in &c.metrics {
        for (i, t) in c.targets.iter().enumerate() {
            let Some(cell) = t.value(&m.key) else {
                continue;
            };
            let pair = c
                .baseline_index()
                .filter(|&b| b != i)
                .and_then(|b| v.against(&m.key, b, i));
            let interval = pair.and_then(|p| p.test.as_ref()?.interval);
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},,{}",
                csv_field(&m.key),
                csv_field(&m.label),
                csv_field(&m.unit),
                csv_field(&t.label),
                status(t),
                opt(c.center(&m.key, i)),
                opt(cell.min()),
                opt(cell.max()),
                cell.runs.len(),
                u8::from(v.is_best(&m.key, i)),
                opt(c.ratio(&m.key, i)),
                opt(interval.map(|x| x.0)),
                opt(interval.map(|x| x.1)),
                pair.map_or(String::new(), |p| csv_field(&p.verdict.words(m.better))),
                opt(pair.and_then(|p| p.verdict.p())),
                csv_field(&cell.warnings.join(";")),
            );
        }
    }
    s
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
        let t = render_comparison(&sample(), CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("metric"), "{t}");
        assert!(
            lines[0].contains("ext4 (baseline)")
                && lines[0].contains("xfs")
                && lines[0].contains("f2fs")
        );
        assert!(
            lines[1].contains("ok") && lines[1].contains("skipped"),
            "{t}"
        );
        let mkfs = lines.iter().find(|l| l.starts_with("mkfs time")).unwrap();
        assert!(mkfs.contains("0.500 ±0%"), "{mkfs}");
        // Identical runs a side: the difference is exact, and mkfs time
        // down is better.
        assert!(mkfs.contains("*0.250 ±0% x0.50+"), "{mkfs}");
        assert!(mkfs.trim_end().ends_with('-'), "{mkfs}");
        let w = lines.iter().find(|l| l.starts_with("w write")).unwrap();
        // Geometric means of 100 150 100 and of twice that; spread 50/100:
        // flagged noisy.
        assert!(
            w.contains("114 ±25%!") && w.contains("*229 ±25%! x2.00+"),
            "{w}"
        );
        assert!(t.contains("geometric mean of 3 run(s)"), "{t}");
        assert!(
            t.contains("verdicts: Welch's t-test on log values on each cell's runs, 5% level"),
            "{t}"
        );
        assert!(t.contains("f2fs: skipped: the kernel lacks f2fs"), "{t}");
        assert!(t.contains("ext4: ext4 on /dev/loop1"), "{t}");
        assert!(t.contains("  note: reads of a sparse image\n"), "{t}");
    }

    #[test]
    fn markdown_table() {
        let t = render_comparison(&sample(), CompareFormat::Markdown);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("| metric"), "{t}");
        assert!(
            lines[1].starts_with("| ---") && lines[1].ends_with(": |"),
            "{t}"
        );
        assert!(t.contains("**0.250 ±0% x0.50+**"), "{t}");
        assert!(t.contains("- f2fs: skipped: the kernel lacks f2fs"), "{t}");
    }

    #[test]
    fn csv_long_form() {
        let t = render_comparison(&sample(), CompareFormat::Csv);
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
            serde_json::from_str(&render_comparison(&c, CompareFormat::Json)).unwrap();
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
        let t = render_comparison(&sample(), CompareFormat::Json);
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
        let t = render_runs(&sample());
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("metric") && lines[0].ends_with("run 1  run 2  run 3"),
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
        assert_eq!(
            "markdown".parse::<CompareFormat>(),
            Ok(CompareFormat::Markdown)
        );
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
        let t = render_comparison(&warned(), CompareFormat::Table);
        let w: Vec<&str> = t
            .lines()
            .find(|l| l.starts_with("w write  "))
            .unwrap()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(w[2], "100 w2", "{t}");
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
        assert!(p99.trim_end().ends_with(" 1.00"), "{p99}");
        let csv = render_comparison(&warned(), CompareFormat::Csv);
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
        let t = render_comparison(&warned(), CompareFormat::Table);
        assert!(t.contains("\n  w1 queue-depth-not-reached: B w\n"), "{t}");
        assert!(t.contains("\n  w2 page-cache: A w; B w\n"), "{t}");
        assert!(
            t.contains("the full texts are in --output-format json"),
            "{t}"
        );
        let md = render_comparison(&warned(), CompareFormat::Markdown);
        assert!(md.contains("| 100 w1,w2 |"), "{md}");
        assert!(md.contains("\n- w2 page-cache: A w; B w\n"), "{md}");
        let csv = render_comparison(&warned(), CompareFormat::Csv);
        assert!(
            csv.lines().any(|l| l.starts_with("w.write.mb_s,")
                && l.ends_with(",B,ok,100,100,100,1,0,,,,,,,queue-depth-not-reached;page-cache")),
            "{csv}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render_comparison(&warned(), CompareFormat::Json)).unwrap();
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
        let plain = render_comparison(&sample(), CompareFormat::Table);
        assert!(!plain.contains(" w1") && !plain.contains("wN"), "{plain}");
    }

    #[test]
    fn a_baseline_without_numbers_says_so() {
        let mut c = sample();
        c.baseline = Some("f2fs".into());
        let t = render_comparison(&c, CompareFormat::Table);
        assert!(
            t.contains("no ratios: the baseline f2fs was skipped"),
            "{t}"
        );
        assert!(
            !t.contains("xN = ratio") && !t.contains(" x0.") && !t.contains(" x1."),
            "{t}"
        );
        let mut c = warned();
        c.baseline = Some("C".into());
        let t = render_comparison(&c, CompareFormat::Table);
        assert!(
            t.contains("xN = ratio to C, which failed: only the rows it has"),
            "{t}"
        );
        c.targets[2].values.clear();
        let t = render_comparison(&c, CompareFormat::Table);
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
        let t = render_comparison(&c, CompareFormat::Table);
        let row = |start: &str| {
            t.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no `{start}` in\n{t}"))
                .to_string()
        };
        let used = row("used after mkfs");
        assert!(!used.contains('*'), "{used}");
        assert!(used.trim_end().ends_with("x0.25≠"), "{used}");
        // The score beside it is marked.
        assert!(row("available").contains("*1000"), "{t}");
        assert!(
            t.contains("no best in rows that are facts, not scores (used after mkfs)"),
            "{t}"
        );
        assert!(
            t.contains("≠ differs beyond the noise (a fact's row)"),
            "{t}"
        );
        assert!(
            t.contains("\n  note: used after mkfs: size minus the free blocks\n"),
            "{t}"
        );
        let md = render_comparison(&c, CompareFormat::Markdown);
        let used = md.lines().find(|l| l.contains("used after mkfs")).unwrap();
        assert!(!used.contains("**"), "{used}");
        let csv = render_comparison(&c, CompareFormat::Csv);
        assert!(
            csv.lines().any(|l| l.starts_with("used_mib,")
                && l.contains(",xfs,ok,")
                && l.contains(",3,0,")),
            "{csv}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render_comparison(&c, CompareFormat::Json)).unwrap();
        let m = &v["iolab compare"]["metrics"][0];
        assert_eq!(m["better"], "neither");
        assert_eq!(m["values"]["xfs"]["best"], false);
        assert_eq!(m["values"]["xfs"]["verdict_words"], "lower");
        // Without a fact's row, the legend does not speak of facts.
        let plain = render_comparison(&sample(), CompareFormat::Table);
        assert!(!plain.contains("facts") && !plain.contains('≠'), "{plain}");
    }

    #[test]
    fn fsync_latency_rows_show_in_one_unit() {
        let t = render_comparison(&facts_and_fsync(), CompareFormat::Table);
        for (start, base, other) in [
            ("sf write fsync p50", "2000", "*500 ±1% x0.25+"),
            ("sf write fsync p99", "9000", "*800 ±1% x0.09+"),
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
        let t = render_comparison(&c, CompareFormat::Table);
        for l in t.lines().filter(|l| l.starts_with("w.write")) {
            assert!(!l.contains('*'), "{l}");
            assert!(l.trim_end().ends_with('≈'), "{l}");
        }
        assert_eq!(
            t.matches('≈').count(),
            4 + 1,
            "four cells and the legend:\n{t}"
        );
    }
}
