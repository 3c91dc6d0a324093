//! `iolab show ID`: one stored result re-rendered. A run in any of fio's
//! formats (normal, json, json+, terse); a quick suite, comparison,
//! metadata pass or sweep as its table (table, markdown, csv, json);
//! `record` gives the whole stored record with its provenance as JSON.
//! The normal form opens with where and how the result was measured.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;
use iolab_report::compare::CompareFormat;
use iolab_report::{render, Format, RenderOpts};
use iolab_store::{Kind, Provenance, Stored};

use crate::exit::Status;
use crate::history::bad;
use crate::output;
use crate::readback::{damaged_record, num, DbArg, Table, TableForm};

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The result's id, as `iolab history` lists it
    pub id: i64,
    #[command(flatten)]
    pub db: DbArg,
    /// normal, json, json+ or terse for runs; table, markdown, csv or json
    /// for the other kinds; record for the stored record as JSON
    #[arg(long, default_value = "normal", value_name = "FORMAT")]
    pub output_format: String,
    /// Write to FILE instead of standard output
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &ShowArgs) -> Result<Status> {
    if let Err(msg) = output::check_opt(args.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let path = args.db.path()?;
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let Some(stored) = store.map(|s| s.get(args.id)).transpose()?.flatten() else {
        eprintln!("iolab: no result {} in {}", args.id, path.display());
        return Ok(Status::Failed);
    };
    let format = args.output_format.as_str();
    let text = match format {
        "record" => record_json(&stored).map_err(|e| damaged_record(&path, &e))? + "\n",
        _ => match render_stored(&stored, format).map_err(|e| damaged_record(&path, &e))? {
            Some(body) if format == "normal" || format == "table" => {
                format!("{}\n{body}", header(&stored))
            }
            Some(body) => body,
            None => {
                return bad(&format!(
                    "output format '{format}' does not apply to a {} result (try {})",
                    stored.record.kind,
                    formats_of(stored.record.kind)
                ))
            }
        },
    };
    output::emit(args.output.as_deref(), &text)?;
    Ok(Status::Success)
}

fn formats_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Run => "normal, json, json+, terse or record",
        _ => "table, markdown, csv, json or record",
    }
}

/// The result's body in `format`; None when the format does not fit the
/// kind.
fn render_stored(s: &Stored, format: &str) -> Result<Option<String>> {
    let r = &s.record;
    let what = || format!("stored result {} ({})", s.id, r.kind);
    if r.kind == Kind::Run {
        let Ok(f) = format.parse::<Format>() else {
            return Ok(None);
        };
        let result = r.run_result().with_context(what)?;
        return Ok(Some(render(&result, &RenderOpts::default(), f)));
    }
    let table_format = match format {
        "normal" => "table",
        other => other,
    };
    let Ok(f) = table_format.parse::<CompareFormat>() else {
        return Ok(None);
    };
    let body = match r.kind {
        Kind::Quick => {
            let q: iolab_stats::quick::QuickResult =
                serde_json::from_str(&r.result_json).with_context(what)?;
            iolab_report::quick::render_quick(&q, f)
        }
        Kind::Compare => {
            let c: iolab_stats::Comparison =
                serde_json::from_str(&r.result_json).with_context(what)?;
            iolab_report::compare::render_comparison(&c, f)
        }
        Kind::Meta => match serde_json::from_str::<iolab_stats::meta::MetaResult>(&r.result_json) {
            Ok(m) => iolab_report::meta::render_meta(&m, f),
            Err(_) => generic(s, f)?,
        },
        Kind::Sweep => {
            match serde_json::from_str::<iolab_stats::sweep::SweepResult>(&r.result_json) {
                Ok(w) => iolab_report::sweep::render_sweep(&w, f),
                Err(_) => generic(s, f)?,
            }
        }
        Kind::Run => generic(s, f)?,
    };
    Ok(Some(body))
}

/// A kind without a renderer of its own: its headline metrics as a
/// table, or its stored JSON.
fn generic(s: &Stored, f: CompareFormat) -> Result<String> {
    let form = match f {
        CompareFormat::Json => {
            let v: serde_json::Value = serde_json::from_str(&s.record.result_json)?;
            return Ok(serde_json::to_string_pretty(&v)? + "\n");
        }
        CompareFormat::Table => TableForm::Text,
        CompareFormat::Markdown => TableForm::Markdown,
        CompareFormat::Csv => TableForm::Csv,
    };
    let mut t = Table::new(&["METRIC", "VALUE", "UNIT"]);
    for m in &s.record.metrics {
        t.push(vec![m.name.clone(), num(Some(m.value)), m.unit.clone()]);
    }
    Ok(t.render(form))
}

/// The whole record as JSON, its result embedded as JSON rather than as
/// a string.
pub fn record_json(s: &Stored) -> Result<String> {
    Ok(serde_json::to_string_pretty(&record_value(s)?)?)
}

/// The record as a JSON value with the result parsed.
pub fn record_value(s: &Stored) -> Result<serde_json::Value> {
    let mut v = serde_json::to_value(s)?;
    let result: serde_json::Value = serde_json::from_str(&s.record.result_json)
        .with_context(|| format!("stored result {} holds invalid JSON", s.id))?;
    if let Some(obj) = v.as_object_mut() {
        obj.remove("result_json");
        obj.insert("result".into(), result);
    }
    Ok(v)
}

/// Where and how the result was measured, for people.
fn header(s: &Stored) -> String {
    let r = &s.record;
    let p: &Provenance = &r.provenance;
    let mut out = format!("Result {}: {} at {}", s.id, r.kind, r.time);
    if !r.tags.is_empty() {
        out.push_str(&format!(", tags: {}", r.tags.join(", ")));
    }
    out.push('\n');
    let gib = p.memory_bytes as f64 / (1u64 << 30) as f64;
    out.push_str(&format!(
        "  host {}, kernel {}, {} x{}, {:.1} GiB, iolab {}\n",
        dash(&p.host),
        dash(&p.kernel),
        dash(&p.cpu_model),
        p.cpu_count,
        gib,
        dash(&p.iolab_version)
    ));
    if let Some(vm) = &p.hypervisor {
        out.push_str(&format!("  virtual machine {}\n", vm.describe()));
    }
    let mut dev = dash(&p.block_device).to_string();
    if !p.device_model.is_empty() {
        dev.push_str(&format!(" ({})", p.device_model));
    }
    if let Some(rot) = p.rotational {
        dev.push_str(if rot {
            ", rotational"
        } else {
            ", non-rotational"
        });
    }
    if !p.scheduler.is_empty() {
        dev.push_str(&format!(", scheduler {}", p.scheduler));
    }
    if let Some(size) = p.device_size_bytes {
        dev.push_str(&format!(", {:.1} GB", size as f64 / 1e9));
    }
    out.push_str(&format!(
        "  target {} ({} on {}; {})\n  device {dev}\n",
        dash(&r.target),
        dash(&p.fs_type),
        dash(&p.mount_source),
        dash(&p.mount_options)
    ));
    if !r.command_line.is_empty() {
        out.push_str(&format!("  command {}\n", r.command_line));
    }
    out
}

fn dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}
