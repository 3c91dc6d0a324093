//! `iolab history`: the stored results, newest first, filtered by kind,
//! tag, filesystem, target and time, as a table (text, Markdown, CSV) or
//! JSON, each with its id for `iolab show` and `iolab diff`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iolab_store::Entry;

use crate::exit::Status;
use crate::readback::{emit, num, DbArg, FilterArgs, Table, TableForm};

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArg,
    /// table, markdown, csv or json
    #[arg(long, default_value = "table", value_name = "FORMAT")]
    pub output_format: String,
    /// Write to FILE instead of standard output
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// How many headline metrics the table shows per result.
const HEADLINE: usize = 3;

pub fn run(args: &HistoryArgs) -> Result<Status> {
    let filter = match args.filter.filter() {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    let form = match args.output_format.as_str() {
        "json" => None,
        other => match table_form(other) {
            Some(f) => Some(f),
            None => {
                return bad(&format!(
                    "unknown output format '{other}' (expected table, markdown, csv or json)"
                ))
            }
        },
    };
    let entries = match args.db.open()? {
        Some(store) => store.history(&filter)?,
        None => Vec::new(),
    };
    let text = match form {
        None => serde_json::to_string_pretty(&entries)? + "\n",
        Some(TableForm::Text) if entries.is_empty() => {
            format!("no stored results in {}\n", args.db.path()?.display())
        }
        Some(form) => table(&entries).render(form),
    };
    emit(args.output.as_deref(), &text)?;
    Ok(Status::Success)
}

/// The table forms by name.
pub fn table_form(name: &str) -> Option<TableForm> {
    match name {
        "table" | "normal" => Some(TableForm::Text),
        "markdown" | "md" => Some(TableForm::Markdown),
        "csv" => Some(TableForm::Csv),
        _ => None,
    }
}

fn table(entries: &[Entry]) -> Table {
    let mut t = Table::new(&["ID", "TIME", "KIND", "FS", "TARGET", "TAGS", "HEADLINE"]);
    for e in entries {
        let headline: Vec<String> = e
            .metrics
            .iter()
            .take(HEADLINE)
            .map(|m| format!("{} {} {}", m.name, num(Some(m.value)), m.unit))
            .collect();
        let mut headline = headline.join("; ");
        if e.metrics.len() > HEADLINE {
            headline.push_str("; ...");
        }
        t.push(vec![
            e.id.to_string(),
            e.time.clone(),
            e.kind.to_string(),
            if e.fs_type.is_empty() {
                "-".into()
            } else {
                e.fs_type.clone()
            },
            e.target.clone(),
            e.tags.join(","),
            headline,
        ]);
    }
    t
}

pub fn bad(msg: &str) -> Result<Status> {
    eprintln!("iolab: {msg}");
    Ok(Status::BadInput)
}
