//! `iolab export`: the stored results, filtered as in `history`, oldest
//! first, for other tools. JSON (the default: export is for programs)
//! gives every record whole (provenance, tags, metrics and the full
//! result); CSV, Markdown, the table and HTML give one line per headline
//! metric with the record's provenance beside it, the warnings the result
//! carried (`code (where)`, `;`-separated) and how its repeats ended. The
//! tables go through the same exporters as every other command's.

use anyhow::Result;
use clap::Args;
use iolab_store::Stored;

use crate::exit::Status;
use crate::outargs::{OutputArgs, OutputFormat};
use crate::output;
use crate::readback::{bad, damaged_record, record_value, DbArg, FilterArgs, Table, TableForm};

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArg,
    /// json (the default: every record whole), csv, markdown, table or
    /// html (one line per headline metric)
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: &ExportArgs) -> Result<Status> {
    let filter = match args.filter.filter() {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    let form = match TableForm::of(args.out.format_or(OutputFormat::Json)) {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    if let Err(msg) = output::check_opt(args.out.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let records: Vec<Stored> = match store {
        None => Vec::new(),
        Some(store) => {
            let mut ids: Vec<i64> = store.history(&filter)?.iter().map(|e| e.id).collect();
            ids.reverse();
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(s) = store.get(id)? {
                    out.push(s);
                }
            }
            out
        }
    };
    let text = match form {
        None => {
            let values = records
                .iter()
                .map(record_value)
                .collect::<Result<Vec<_>>>()
                .map_err(|e| damaged_record(&args.db.path().unwrap_or_default(), &e))?;
            serde_json::to_string_pretty(&values)? + "\n"
        }
        Some(form) => table(&records).render_styled(form, args.out.style()),
    };
    output::emit(args.out.output.as_deref(), &text)?;
    Ok(Status::Success)
}

fn table(records: &[Stored]) -> Table {
    let mut t = Table::new(&[
        "id",
        "time",
        "kind",
        "tags",
        "host",
        "kernel",
        "fs_type",
        "mount_options",
        "block_device",
        "device_model",
        "target",
        "command_line",
        "warnings",
        "repeat",
        "metric",
        "value",
        "unit",
    ]);
    for s in records {
        let r = &s.record;
        let p = &r.provenance;
        let head = vec![
            s.id.to_string(),
            r.time.clone(),
            r.kind.to_string(),
            r.tags.join(" "),
            p.host.clone(),
            p.kernel.clone(),
            p.fs_type.clone(),
            p.mount_options.clone(),
            p.block_device.clone(),
            p.device_model.clone(),
            r.target.clone(),
            r.command_line.clone(),
            r.warnings
                .iter()
                .map(|w| format!("{} ({})", w.code, w.at))
                .collect::<Vec<_>>()
                .join("; "),
            r.repeat
                .as_ref()
                .map(|o| format!("{} runs: {}", o.runs, o.stopped.words()))
                .unwrap_or_default(),
        ];
        if r.metrics.is_empty() {
            let mut row = head.clone();
            row.extend([String::new(), String::new(), String::new()]);
            t.push(row);
        }
        for m in &r.metrics {
            let mut row = head.clone();
            let value = if m.value.is_nan() {
                String::new()
            } else {
                format!("{}", m.value)
            };
            row.extend([m.name.clone(), value, m.unit.clone()]);
            t.push(row);
        }
    }
    t
}
