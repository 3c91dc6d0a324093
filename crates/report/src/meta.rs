//! Renderers of the metadata benchmark's [`MetaResult`]: the table people
//! publish (rows are phases; operations, total ms, ms per operation,
//! operations per second, p50 and p99 latency), the same as Markdown, CSV
//! with one line per phase in nanoseconds, and JSON with the setup and each
//! phase's latency moments and percentiles (fio's `"%f"` keys). A run that
//! stopped early shows the phases that finished and says why. A repeated
//! run's table is its median run (by total time); under it, each phase's
//! operations per second over the runs: their geometric mean (what diff's
//! verdicts test), its 95% interval, and how the runs ended.

use iolab_stats::meta::{MetaPhase, MetaResult};
use iolab_stats::DEFAULT_PERCENTILES;
use serde_json::{json, Map, Value};

use crate::doc::num::count as grouped;
use crate::export::{export, DocFormat, Style};

/// Renders a metadata result in one format, text as for a file or a pipe.
pub fn render_meta(r: &MetaResult, format: DocFormat) -> String {
    render_meta_styled(r, format, Style::default())
}

/// Renders a metadata result in one format, text in `style`.
pub fn render_meta_styled(r: &MetaResult, format: DocFormat, style: Style) -> String {
    match format {
        DocFormat::Json => json_text(r),
        f => export(&crate::kinds::meta::document(r), f, style),
    }
}

/// The line above the table: what ran where.
pub fn describe(r: &MetaResult) -> String {
    let s = &r.setup.options;
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
    let fs_type = &r.setup.fs_type;
    let fs = if fs_type.is_empty() {
        String::new()
    } else {
        format!(" on {fs_type}")
    };
    format!(
        "{} files {layout}{fs} ({}), file size {} B, {} thread{}{}, {}",
        grouped(s.files),
        s.dir.display(),
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

/// The CSV header; one line per phase follows, times in nanoseconds.
pub const CSV_HEADER: &str = "phase,ops,elapsed_ns,per_op_ns,ops_per_sec,lat_mean_ns,\
lat_min_ns,lat_max_ns,lat_p50_ns,lat_p99_ns,files,dirs,depth,file_size,threads,fsync,cold,fs_type";

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
    if let (Some(ranks), Some(obj)) = (&r.ranks, v.as_object_mut()) {
        obj.insert(
            "mpi".into(),
            serde_json::to_value(ranks).unwrap_or(Value::Null),
        );
    }
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
    use iolab_stats::meta::{MetaOptions, MetaPhaseKind, MetaSetup};
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
                options: MetaOptions {
                    dir: "/mnt/x".into(),
                    ..MetaOptions::default()
                },
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
    fn the_table_names_each_unit_once_and_no_duplicate_column() {
        let t = render_meta(&sample(), DocFormat::Text);
        let head = t.lines().nth(3).unwrap();
        let cols: Vec<&str> = head
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cols,
            [
                "phase",
                "ops",
                "total (ms)",
                "ops/s",
                "mean (us)",
                "p50 (us)",
                "p99 (us)"
            ],
            "{t}"
        );
    }

    #[test]
    fn a_run_that_stopped_says_why_under_the_phases_that_finished() {
        let mut r = sample();
        r.failure = Some("unlink of /x/f3: Input/output error".into());
        let t = render_meta(&r, DocFormat::Text);
        assert!(
            t.ends_with(
                "\nnote: stopped: unlink of /x/f3: Input/output error; the phases above finished\n"
            ),
            "{t}"
        );
        let v: Value = serde_json::from_str(&render_meta(&r, DocFormat::Json)).unwrap();
        assert_eq!(v["failure"], "unlink of /x/f3: Input/output error");
        let csv = render_meta(&r, DocFormat::Csv);
        assert_eq!(csv.lines().count(), 3, "{csv}");
    }

    #[test]
    fn table_rows_are_phases() {
        let t = render_meta(&sample(), DocFormat::Text);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "iolab meta: /mnt/x", "{t}");
        assert!(
            lines[1].starts_with("10,000 files in one directory on ext4"),
            "{t}"
        );
        assert!(lines[3].contains("total (ms)") && !lines[3].contains("per op"));
        let create: Vec<&str> = lines[4]
            .split_whitespace()
            .filter(|c| !c.starts_with('█') && !c.starts_with('▏'))
            .collect();
        // 250 ms for 10,000 creates: 40,000 per second; every latency is
        // 25 us, which falls in the 256 ns wide bin [24.832, 25.088) us,
        // reported by its middle.
        assert_eq!(
            create,
            ["create", "10,000", "250", "40,000", "25", "24.96", "24.96"],
            "{t}"
        );
        assert!(lines[5].starts_with("stat"));
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn markdown_has_a_separator() {
        let t = render_meta(&sample(), DocFormat::Markdown);
        assert!(t.lines().any(|l| l.starts_with("|---|---:")), "{t}");
        assert!(t.lines().any(|l| l.starts_with("| create")), "{t}");
    }

    #[test]
    fn csv_has_one_line_per_phase() {
        let t = render_meta(&sample(), DocFormat::Csv);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        let n = CSV_HEADER.split(',').count();
        assert!(lines[1..].iter().all(|l| l.split(',').count() == n));
        assert!(
            lines[1].starts_with("create,10000,250000000,25000,40000,25000,"),
            "{t}"
        );
    }

    #[test]
    fn json_has_the_phases_and_percentiles() {
        let v: Value = serde_json::from_str(&render_meta(&sample(), DocFormat::Json)).unwrap();
        assert_eq!(v["setup"]["files"], 10_000);
        assert_eq!(v["phases"][0]["phase"], "create");
        assert_eq!(v["phases"][0]["ops"], 10_000);
        assert_eq!(v["phases"][1]["lat_ns"]["percentile"]["99.000000"], 100);
        assert_eq!(v["phases"][0]["ops_per_sec"], 40_000.0);
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
