//! `iolab history`: the stored results, newest first, filtered by kind,
//! tag, filesystem, target and time, as a table (text, Markdown, CSV,
//! HTML) or JSON, each with its id for `iolab show` and `iolab diff`. The
//! table gives each result's local time with its offset and a headline
//! chosen for its kind, and fits the terminal's width.

use anyhow::Result;
use clap::Args;
use iolab_store::Entry;

use crate::exit::Status;
use crate::outargs::{OutputArgs, OutputFormat};
use crate::output;
use crate::readback::{bad, DbArg, FilterArgs, Table, TableForm};

/// `iolab history [FILTERS] [--output-format table|markdown|csv|json|html]`
#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArg,
    /// table (default), markdown, csv, json or html
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: &HistoryArgs) -> Result<Status> {
    let filter = match args.filter.filter() {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    let form = match TableForm::of(args.out.format_or(OutputFormat::Table)) {
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
        Some(form) => table(&entries).render_styled(form, args.out.style()),
    };
    output::emit(args.out.output.as_deref(), &text)?;
    Ok(Status::Success)
}

fn table(entries: &[Entry]) -> Table {
    let mut t = Table::new(&[
        "ID", "TIME", "KIND", "FS", "TARGET", "TAGS", "FLAGS", "HEADLINE",
    ]);
    for e in entries {
        t.push(vec![
            e.id.to_string(),
            crate::readback::local_time(&e.time),
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
            crate::kinds::headline(e.kind, &e.metrics),
        ]);
    }
    t
}
