//! Renderers of the metadata benchmark's [`MetaResult`]: the table people
//! publish (rows are phases; operations, total ms, ms per operation,
//! operations per second, p50 and p99 latency), the same as Markdown, CSV
//! with one line per phase in nanoseconds, and JSON with the setup and each
//! phase's latency moments and percentiles (fio's `"%f"` keys). A run that
//! stopped early shows the phases that finished and says why. A repeated
//! run's table is its median run (by total time); under it, each phase's
//! operations per second over the runs: their geometric mean (what diff's
//! verdicts test), its 95% interval, and how the runs ended.

use std::fmt::Write as _;

use iolab_stats::meta::{MetaPhase, MetaResult};
use iolab_stats::DEFAULT_PERCENTILES;
use serde_json::{json, Map, Value};

use crate::compare::CompareFormat;

/// Renders a metadata result in one of the table formats.
pub fn render_meta(r: &MetaResult, format: CompareFormat) -> String {
    match format {
        CompareFormat::Table => table(r, false),
        CompareFormat::Markdown => table(r, true),
        CompareFormat::Csv => csv(r),
        CompareFormat::Json => json_text(r),
    }
}

/// An integer with thousands separators: 10000 -> "10,000".
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Four significant digits (all of the integer part above 1000), without
/// exponent: 1234.6 -> "1235", 0.00042478 -> "0.0004248".
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 || !a.is_finite() {
        return format!("{v:.0}");
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

fn us(ns: Option<u64>) -> String {
    ns.map(|v| num(v as f64 / 1000.0))
        .unwrap_or_else(|| "-".into())
}

/// The line above the table: what ran where.
pub fn describe(r: &MetaResult) -> String {
    let s = &r.setup;
    let layout = if s.dirs == 0 {
        "in one directory".to_string()
    } else {
        format!(
            "in a tree of {} directories ({} per level, depth {}, {} leaves)",
            grouped(r.directories),
            s.dirs,
            s.depth,
            grouped(r.leaves)
        )
    };
    let fs = if s.fs_type.is_empty() {
        String::new()
    } else {
        format!(" on {}", s.fs_type)
    };
    format!(
        "iolab meta: {} files {layout}{fs} ({}), file size {} B, {} thread{}{}, {}",
        grouped(s.files),
        s.dir,
        s.file_size,
        s.threads,
        if s.threads == 1 { "" } else { "s" },
        if s.fsync { ", fsync after create" } else { "" },
        if s.cold {
            "cold (caches dropped before each phase)"
        } else {
            "warm"
        }
    )
}

/// The heading of the total time: "10,000 ops total ms" as published when
/// every phase did the same number of operations, else "total ms" (the
/// ops column gives each phase's count).
fn total_heading(r: &MetaResult) -> String {
    match r.phases.first() {
        Some(first) if r.phases.iter().all(|p| p.ops == first.ops) => {
            format!("{} ops total ms", grouped(first.ops))
        }
        _ => "total ms".to_string(),
    }
}

fn table(r: &MetaResult, md: bool) -> String {
    let header = [
        "phase".to_string(),
        "ops".to_string(),
        total_heading(r),
        "per op ms".to_string(),
        "ops/s".to_string(),
        "mean us".to_string(),
        "p50 us".to_string(),
        "p99 us".to_string(),
    ];
    let rows: Vec<[String; 8]> = r.phases.iter().map(row).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    if md {
        let _ = writeln!(out, "{}\n", describe(r));
    } else {
        let _ = writeln!(out, "{}", describe(r));
    }
    let line = |out: &mut String, cells: &[String]| {
        let mut parts = Vec::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            parts.push(if i == 0 {
                format!("{c:<w$}")
            } else {
                format!("{c:>w$}")
            });
        }
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
                if i == 0 {
                    "-".repeat(w)
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
    if let Some(o) = &r.repeat {
        let bullet = if md { "- " } else { "" };
        let _ = writeln!(
            out,
            "\n{bullet}repeats: {}; the table shows the median run (by total time)",
            o.describe()
        );
        for (kind, values) in r.ops_per_sec_runs() {
            let gm = iolab_stats::geometric_mean(&values).unwrap_or(0.0);
            let interval = match iolab_stats::repeat_rule::gm_interval(&values) {
                Some((_, lo, hi)) => format!(
                    "95% interval {}..{} (±{})",
                    grouped(lo.round() as u64),
                    grouped(hi.round() as u64),
                    iolab_stats::repeat_rule::percent(if gm > 0.0 { hi / gm - 1.0 } else { 0.0 })
                ),
                None => "no interval".to_string(),
            };
            let _ = writeln!(
                out,
                "{bullet}{kind} ops/s over {} runs: geometric mean {}, {interval}",
                values.len(),
                grouped(gm.round() as u64)
            );
        }
    }
    if let Some(why) = &r.failure {
        let _ = write!(
            out,
            "\n{}stopped: {why}; {}\n",
            if md { "- " } else { "" },
            if r.phases.is_empty() {
                "no phase finished"
            } else {
                "the phases above finished"
            }
        );
    }
    out
}

fn row(p: &MetaPhase) -> [String; 8] {
    [
        p.phase.to_string(),
        grouped(p.ops),
        num(p.elapsed_ns as f64 / 1e6),
        num(p.per_op_ns() / 1e6),
        grouped(p.ops_per_sec().round() as u64),
        if p.lat.count() == 0 {
            "-".into()
        } else {
            num(p.lat.moments.mean() / 1000.0)
        },
        us(p.percentile_ns(50.0)),
        us(p.percentile_ns(99.0)),
    ]
}

/// The CSV header; one line per phase follows, times in nanoseconds.
pub const CSV_HEADER: &str = "phase,ops,elapsed_ns,per_op_ns,ops_per_sec,lat_mean_ns,\
lat_min_ns,lat_max_ns,lat_p50_ns,lat_p99_ns,files,dirs,depth,file_size,threads,fsync,cold,fs_type";

fn csv(r: &MetaResult) -> String {
    let s = &r.setup;
    let mut out = format!("{CSV_HEADER}\n");
    let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    for p in &r.phases {
        let _ = writeln!(
            out,
            "{},{},{},{:.1},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.phase,
            p.ops,
            p.elapsed_ns,
            p.per_op_ns(),
            p.ops_per_sec(),
            p.lat.moments.mean(),
            opt(p.lat.moments.min()),
            opt(p.lat.moments.max()),
            opt(p.percentile_ns(50.0)),
            opt(p.percentile_ns(99.0)),
            s.files,
            s.dirs,
            s.depth,
            s.file_size,
            s.threads,
            u8::from(s.fsync),
            u8::from(s.cold),
            s.fs_type.replace([',', '"', '\n'], "_"),
        );
    }
    out
}

/// The JSON document as a value, for embedding in larger documents.
pub fn meta_json(r: &MetaResult) -> Value {
    let phases: Vec<Value> = r.phases.iter().map(phase_json).collect();
    let mut v = json!({
        "iolab version": concat!("iolab-", env!("CARGO_PKG_VERSION")),
        "setup": serde_json::to_value(&r.setup).unwrap_or(Value::Null),
        "directories": r.directories,
        "leaves": r.leaves,
        "phases": phases,
        "failure": r.failure,
    });
    if let (Some(o), Some(obj)) = (&r.repeat, v.as_object_mut()) {
        obj.insert(
            "repeat".into(),
            serde_json::to_value(o).unwrap_or(Value::Null),
        );
        let runs: Vec<Value> = r
            .runs
            .iter()
            .map(|run| Value::Array(run.iter().map(phase_json).collect()))
            .collect();
        obj.insert("runs".into(), Value::Array(runs));
    }
    v
}

/// One phase: counts, times and latency percentiles.
fn phase_json(p: &MetaPhase) -> Value {
    let mut pct = Map::new();
    for (q, v) in p.lat.hist.percentiles(&DEFAULT_PERCENTILES) {
        pct.insert(format!("{q:.6}"), json!(v));
    }
    json!({
        "phase": p.phase.name(),
        "ops": p.ops,
        "elapsed_ns": p.elapsed_ns,
        "total_ms": p.elapsed_ns as f64 / 1e6,
        "per_op_ms": p.per_op_ns() / 1e6,
        "ops_per_sec": p.ops_per_sec(),
        "lat_ns": {
            "min": p.lat.moments.min().unwrap_or(0),
            "max": p.lat.moments.max().unwrap_or(0),
            "mean": p.lat.moments.mean(),
            "stddev": p.lat.moments.stdev(),
            "N": p.lat.count(),
            "percentile": Value::Object(pct),
        },
    })
}

fn json_text(r: &MetaResult) -> String {
    let mut s = serde_json::to_string_pretty(&meta_json(r)).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_stats::meta::{MetaPhaseKind, MetaSetup};
    use iolab_stats::LatStat;

    fn sample() -> MetaResult {
        let phase = |phase, ops: u64, elapsed_ns, lat_ns: u64| {
            let mut lat = LatStat::default();
            for _ in 0..ops {
                lat.record(lat_ns);
            }
            MetaPhase {
                phase,
                ops,
                elapsed_ns,
                lat,
            }
        };
        MetaResult {
            setup: MetaSetup {
                dir: "/mnt/x".into(),
                files: 10_000,
                dirs: 0,
                depth: 0,
                file_size: 0,
                threads: 1,
                fsync: false,
                cold: false,
                fs_type: "ext4".into(),
            },
            directories: 0,
            leaves: 1,
            phases: vec![
                phase(MetaPhaseKind::Create, 10_000, 250_000_000, 25_000),
                phase(MetaPhaseKind::Stat, 10_000, 20_000_000, 100),
            ],
            failure: None,
            ..MetaResult::default()
        }
    }

    #[test]
    fn the_total_heading_counts_operations_only_when_every_phase_did_as_many() {
        let mut r = sample();
        r.phases.insert(
            0,
            MetaPhase {
                phase: MetaPhaseKind::Mkdir,
                ops: 14,
                elapsed_ns: 1_000_000,
                lat: LatStat::default(),
            },
        );
        let t = render_meta(&r, CompareFormat::Table);
        let head = t.lines().nth(1).unwrap();
        assert!(
            head.contains(" total ms") && !head.contains("ops total ms"),
            "{t}"
        );
        let mkdir: Vec<&str> = t.lines().nth(2).unwrap().split_whitespace().collect();
        assert_eq!(mkdir[..3], ["mkdir", "14", "1.000"], "{t}");
    }

    #[test]
    fn a_run_that_stopped_says_why_under_the_phases_that_finished() {
        let mut r = sample();
        r.failure = Some("unlink of /x/f3: Input/output error".into());
        let t = render_meta(&r, CompareFormat::Table);
        assert!(
            t.ends_with(
                "\nstopped: unlink of /x/f3: Input/output error; the phases above finished\n"
            ),
            "{t}"
        );
        let v: Value = serde_json::from_str(&render_meta(&r, CompareFormat::Json)).unwrap();
        assert_eq!(v["failure"], "unlink of /x/f3: Input/output error");
        let csv = render_meta(&r, CompareFormat::Csv);
        assert_eq!(csv.lines().count(), 3, "{csv}");
    }

    #[test]
    fn table_rows_are_phases() {
        let t = render_meta(&sample(), CompareFormat::Table);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].contains("10,000 files in one directory on ext4"),
            "{t}"
        );
        assert!(lines[1].contains("10,000 ops total ms") && lines[1].contains("per op ms"));
        let create: Vec<&str> = lines[2].split_whitespace().collect();
        // 250 ms for 10,000 creates: 0.025 ms each, 40,000 per second;
        // every latency is 25 us, which falls in the 256 ns wide bin
        // [24.832, 25.088) us, reported by its middle.
        assert_eq!(
            create,
            ["create", "10,000", "250.0", "0.02500", "40,000", "25.00", "24.96", "24.96"]
        );
        assert!(lines[3].starts_with("stat"));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn markdown_has_a_separator() {
        let t = render_meta(&sample(), CompareFormat::Markdown);
        assert!(t.lines().any(|l| l.starts_with("| -----")), "{t}");
        assert!(t.lines().any(|l| l.starts_with("| create")), "{t}");
    }

    #[test]
    fn csv_has_one_line_per_phase() {
        let t = render_meta(&sample(), CompareFormat::Csv);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        let n = CSV_HEADER.split(',').count();
        assert!(lines[1..].iter().all(|l| l.split(',').count() == n));
        assert!(lines[1].starts_with("create,10000,250000000,25000.0,40000.0,25000.0,"));
    }

    #[test]
    fn json_has_the_phases_and_percentiles() {
        let v: Value = serde_json::from_str(&render_meta(&sample(), CompareFormat::Json)).unwrap();
        assert_eq!(v["setup"]["files"], 10_000);
        assert_eq!(v["phases"][0]["phase"], "create");
        assert_eq!(v["phases"][0]["ops"], 10_000);
        assert_eq!(v["phases"][1]["lat_ns"]["percentile"]["99.000000"], 100);
        assert_eq!(v["phases"][0]["ops_per_sec"], 40_000.0);
    }

    #[test]
    fn numbers_keep_four_digits() {
        assert_eq!(num(1234.6), "1235");
        assert_eq!(num(250.0), "250.0");
        assert_eq!(num(25.0), "25.00");
        assert_eq!(num(1.5), "1.500");
        assert_eq!(num(0.025), "0.02500");
        assert_eq!(num(0.00042478), "0.0004248");
        assert_eq!(num(0.0), "0");
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
