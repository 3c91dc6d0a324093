//! `iolab report ID... [-o FILE]`: stored results as one self-contained
//! HTML page (or any other document format): each result's tables and
//! charts with its provenance in a collapsible section, and, for several
//! results, first all of them side by side, aligned by metric, with the
//! verdict of each against the first.

use anyhow::Result;
use clap::Args;
use iolab_report::doc::Document;
use iolab_report::export::export;
use iolab_stats::{Method, DEFAULT_ALPHA};
use iolab_store::DiffOpts;

use crate::exit::Status;
use crate::outargs::{OutputArgs, OutputFormat};
use crate::output;
use crate::readback::{bad, damaged_record, DbArg};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The results' ids, as `iolab history` lists them (the first is the
    /// baseline of the side-by-side verdicts)
    #[arg(required = true, num_args = 1.., value_name = "ID")]
    pub ids: Vec<i64>,
    #[command(flatten)]
    pub db: DbArg,
    /// html (default), table, markdown, csv or json (the document model)
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: &ReportArgs) -> Result<Status> {
    let format = args.out.format_or(OutputFormat::Html);
    let Some(doc_format) = format.doc().filter(|_| format != OutputFormat::Normal) else {
        return bad(&format!(
            "output format '{}' does not apply to a report (expected html, table, markdown, csv \
             or json)",
            format.name()
        ));
    };
    if let Err(msg) = output::check_opt(args.out.output.as_deref(), &args.db.db_files()) {
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
    let mut records = Vec::new();
    for &id in &args.ids {
        match store.get(id)? {
            Some(s) => records.push(s),
            None => {
                eprintln!("iolab: no result {id} in {}", path.display());
                return Ok(Status::Failed);
            }
        }
    }
    let mut docs = Vec::new();
    for s in &records {
        docs.push(crate::kinds::record_document(s).map_err(|e| damaged_record(&path, &e))?);
    }
    let ids: Vec<String> = args.ids.iter().map(|i| i.to_string()).collect();
    let doc = if docs.len() == 1 {
        docs.remove(0)
    } else {
        let opts = DiffOpts {
            method: Method::Welch,
            alpha: DEFAULT_ALPHA,
        };
        let mut all = vec![crate::diff::side_by_side(&records, opts)?];
        all.extend(docs);
        Document::concat(format!("iolab report: results {}", ids.join(", ")), all)
    };
    let text = export(&doc, doc_format, args.out.style());
    output::emit(args.out.output.as_deref(), &text)?;
    if let Some(p) = &args.out.output {
        eprintln!(
            "iolab: report of result(s) {} written to {}",
            ids.join(", "),
            p.display()
        );
    }
    Ok(Status::Success)
}
