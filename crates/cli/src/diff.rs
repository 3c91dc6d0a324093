//! `iolab diff A B`: two stored results side by side. Per headline metric
//! both values, the ratio B/A, and whether the difference is significant
//! or within noise: over the repeats when the results carry them, else
//! over each run's per-window samples (and the output says so).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iolab_stats::quick::QuickResult;
use iolab_stats::{Method, DEFAULT_ALPHA};
use iolab_store::{diff_metrics, run_metrics, Basis, DiffOpts, Kind, Metric, MetricDiff, Stored};
use serde_json::json;

use crate::exit::Status;
use crate::history::{bad, table_or_json};
use crate::output;
use crate::readback::{num, DbArg, Table, TableForm};

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first result's id (the baseline)
    pub a: i64,
    /// The second result's id
    pub b: i64,
    /// Test for repeats: welch or mann-whitney
    #[arg(long, default_value = "welch", value_name = "TEST")]
    pub method: String,
    /// Significance level
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_name = "P")]
    pub alpha: f64,
    #[command(flatten)]
    pub db: DbArg,
    /// table, markdown, csv or json
    #[arg(long, default_value = "table", value_name = "FORMAT")]
    pub output_format: String,
    /// Write to FILE instead of standard output
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &DiffArgs) -> Result<Status> {
    let method = match args.method.as_str() {
        "welch" | "t" => Method::Welch,
        "mann-whitney" | "mw" | "u" => Method::MannWhitney,
        other => {
            return bad(&format!(
                "unknown test '{other}' (expected welch or mann-whitney)"
            ))
        }
    };
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return bad(&format!("--alpha {} is not between 0 and 1", args.alpha));
    }
    let form = match table_or_json(&args.output_format) {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    if let Err(msg) = output::check_opt(args.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let path = args.db.path()?;
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let Some(store) = store else {
        eprintln!("iolab: no stored results in {}", path.display());
        return Ok(Status::Failed);
    };
    let mut pair = Vec::new();
    for id in [args.a, args.b] {
        match store.get(id)? {
            Some(s) => pair.push(s),
            None => {
                eprintln!("iolab: no result {id} in {}", path.display());
                return Ok(Status::Failed);
            }
        }
    }
    let (a, b) = (&pair[0], &pair[1]);
    let opts = DiffOpts {
        method,
        alpha: args.alpha,
    };
    let rows = diff_metrics(&metrics_of(a), &metrics_of(b), opts);
    let text = match form {
        None => {
            let v = json!({
                "a": summary(a),
                "b": summary(b),
                "alpha": args.alpha,
                "metrics": rows,
            });
            serde_json::to_string_pretty(&v)? + "\n"
        }
        // CSV is the table and nothing else: what the notes say is in the
        // VERDICT column.
        Some(TableForm::Csv) => table(&rows).render(TableForm::Csv),
        Some(form) => {
            let mut text = format!("A: {}\nB: {}\n\n", describe(a), describe(b));
            text.push_str(&table(&rows).render(form));
            if rows
                .iter()
                .any(|r| matches!(r.basis, Basis::Windows { .. }))
            {
                text.push_str(
                    "\nOne run each: differences are tested on the per-window samples within \
                     each run (bandwidth and IOPS every averaging window); repeat the runs for a \
                     test of run-to-run noise.\n",
                );
            }
            if rows.is_empty() {
                text.push_str("\nNeither result has headline metrics to compare.\n");
            }
            text
        }
    };
    output::emit(args.output.as_deref(), &text)?;
    Ok(Status::Success)
}

/// A record's metrics; for a run stored without any, those of its
/// result; for a quick suite, with the per-window samples its result
/// keeps where the metrics lack them.
fn metrics_of(s: &Stored) -> Vec<Metric> {
    if s.record.metrics.is_empty() && s.record.kind == Kind::Run {
        if let Ok(result) = s.record.run_result() {
            return run_metrics(&result);
        }
    }
    let mut metrics = s.record.metrics.clone();
    if s.record.kind == Kind::Quick {
        if let Ok(q) = serde_json::from_str::<QuickResult>(&s.record.result_json) {
            add_quick_windows(&mut metrics, &q);
        }
    }
    metrics
}

/// Gives a quick suite's "TEST OP IOPS" and "TEST OP MB/s" metrics the
/// moments of the test's IOPS windows (scaled to MB/s by the test's bytes
/// per I/O) when they have none.
fn add_quick_windows(metrics: &mut [Metric], q: &QuickResult) {
    for t in q.tests.iter().filter(|t| t.sample_count >= 2) {
        let base = format!("{} {}", t.name, t.op);
        let mb_per_io = if t.iops > 0.0 {
            t.bw_bytes / 1e6 / t.iops
        } else {
            0.0
        };
        for m in metrics.iter_mut().filter(|m| m.windows.is_none()) {
            let scale = if m.name == format!("{base} IOPS") {
                1.0
            } else if m.name == format!("{base} MB/s") && mb_per_io > 0.0 {
                mb_per_io
            } else {
                continue;
            };
            *m = m.clone().with_windows(
                t.sample_count,
                t.sample_mean * scale,
                t.sample_stdev * scale,
            );
        }
    }
}

fn table(rows: &[MetricDiff]) -> Table {
    let mut t = Table::new(&["METRIC", "UNIT", "A", "B", "B/A", "VERDICT"]);
    for r in rows {
        t.push(vec![
            r.name.clone(),
            r.unit.clone(),
            num(r.a),
            num(r.b),
            r.ratio.map_or("-".to_string(), |x| format!("{x:.3}x")),
            r.explain(),
        ]);
    }
    t
}

fn describe(s: &Stored) -> String {
    let r = &s.record;
    let mut d = format!("#{} {} at {} on {}", s.id, r.kind, r.time, r.target);
    if !r.provenance.fs_type.is_empty() {
        d.push_str(&format!(" ({})", r.provenance.fs_type));
    }
    if !r.tags.is_empty() {
        d.push_str(&format!(" [{}]", r.tags.join(", ")));
    }
    d
}

fn summary(s: &Stored) -> serde_json::Value {
    json!({
        "id": s.id,
        "kind": s.record.kind,
        "time": s.record.time,
        "target": s.record.target,
        "fs_type": s.record.provenance.fs_type,
        "tags": s.record.tags,
    })
}
