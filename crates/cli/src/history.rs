//! `iolab history`: the stored results, newest first, filtered by kind,
//! tag, filesystem, target and time, as a table (text, Markdown, CSV) or
//! JSON, each with its id for `iolab show` and `iolab diff`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iolab_store::Entry;

use crate::exit::Status;
use crate::output;
use crate::readback::{num, DbArg, FilterArgs, Table, TableForm};

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
    let form = match table_or_json(&args.output_format) {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    if let Err(msg) = output::check_opt(args.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let (entries, stored) = match &store {
        Some(store) => (store.history(&filter)?, store.len()?),
        None => (Vec::new(), 0),
    };
    let text = match form {
        None => serde_json::to_string_pretty(&entries)? + "\n",
        Some(TableForm::Text) if entries.is_empty() => {
            let path = args.db.path()?;
            if stored == 0 {
                format!("no stored results in {}\n", path.display())
            } else {
                format!(
                    "no stored result matches the filters ({stored} result{} in {})\n",
                    if stored == 1 { "" } else { "s" },
                    path.display()
                )
            }
        }
        Some(form) => table(&entries).render(form),
    };
    output::emit(args.output.as_deref(), &text)?;
    Ok(Status::Success)
}

/// `--output-format` of a command that prints a table or JSON: the table
/// form, None for JSON, or the message for a name it does not know.
pub fn table_or_json(name: &str) -> Result<Option<TableForm>, String> {
    match name {
        "json" => Ok(None),
        "table" | "normal" => Ok(Some(TableForm::Text)),
        "markdown" | "md" => Ok(Some(TableForm::Markdown)),
        "csv" => Ok(Some(TableForm::Csv)),
        other => Err(format!(
            "unknown output format '{other}' (expected table, markdown, csv or json)"
        )),
    }
}

fn table(entries: &[Entry]) -> Table {
    let mut t = Table::new(&[
        "ID", "TIME", "KIND", "FS", "TARGET", "TAGS", "FLAGS", "HEADLINE",
    ]);
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
            if e.flags.is_empty() {
                "-".into()
            } else {
                e.flags.join(",")
            },
            headline,
        ]);
    }
    t
}

pub fn bad(msg: &str) -> Result<Status> {
    eprintln!("iolab: {msg}");
    Ok(Status::BadInput)
}
