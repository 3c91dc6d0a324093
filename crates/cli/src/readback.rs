//! What the commands that read the results database back (`history`,
//! `show`, `export`, `diff`) share: the `--db` flag and opening the
//! database without creating one, the history filters, a plain table in
//! the text, Markdown and CSV forms, number formatting, local time, a
//! stored record as JSON and the bad-input exit.

use std::path::PathBuf;

use anyhow::{anyhow, Context as _, Result};
use clap::Args;
use iolab_store::{Filter, Kind, Store, Stored};

use crate::exit::Status;
use crate::outargs::OutputFormat;
use iolab_report::doc;
use iolab_report::export::{export, DocFormat, Style};

/// Which database to read: `--db` as the measuring commands declare it
/// (`keep::DB_FLAG`).
#[derive(Debug, Clone, Default)]
pub struct DbArg {
    pub db: Option<PathBuf>,
}

impl clap::Args for DbArg {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(crate::keep::DB_FLAG.clap_arg())
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for DbArg {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut arg = DbArg::default();
        arg.update_from_arg_matches(m)?;
        Ok(arg)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        let mut given = crate::keep::StoreArgs::default();
        crate::keep::DB_FLAG.take(&mut given, m)?;
        if given.db.is_some() {
            self.db = given.db;
        }
        Ok(())
    }
}

impl DbArg {
    pub fn path(&self) -> Result<PathBuf> {
        self.db
            .clone()
            .or_else(iolab_store::default_path)
            .ok_or_else(|| anyhow!("no results database: set --db PATH, IOLAB_DB or HOME"))
    }

    /// Opens the database; None when its file does not exist (reading
    /// creates nothing). A database that cannot be used is refused: the
    /// message, and exit 2 as the `Err` (the command cannot run as given).
    pub fn open(&self) -> Result<Option<Store>, Status> {
        let path = self.path().map_err(|e| refused(&e))?;
        let context = || format!("results database `{}`", path.display());
        let real = crate::keep::db_name(&path)
            .map_err(anyhow::Error::msg)
            .with_context(context)
            .map_err(|e| refused(&e))?;
        Store::open_for_reading(&real)
            .with_context(context)
            .map_err(|e| refused(&e))
    }

    /// The database files no `--output` may be.
    pub fn db_files(&self) -> iolab_store::DbFiles {
        crate::keep::db_files(self.db.as_deref())
    }
}

/// A stored record whose result cannot be read back: damage, reported as
/// the store reports damaged pages (exit 2).
pub fn damaged_record(path: &std::path::Path, err: &anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(iolab_store::StoreError::Damaged {
        path: path.to_path_buf(),
        detail: crate::said_once(err),
    })
}

/// Says why the results database cannot be used; exit 2, as for every
/// command: nothing was measured or written.
pub fn refused(err: &anyhow::Error) -> Status {
    eprintln!("iolab: {}", crate::said_once(err));
    Status::BadInput
}

/// The filters of `history` and `export`.
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only results of this kind: run, quick, compare, meta or sweep
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// Only results carrying this tag
    #[arg(long, value_name = "TEXT")]
    pub tag: Option<String>,
    /// Only results measured on this filesystem type (ext4, xfs, ...);
    /// a comparison matches each filesystem it compared
    #[arg(long = "fs", value_name = "TYPE")]
    pub fs: Option<String>,
    /// Only results whose target path contains this text (a
    /// comparison's target lists every target it compared)
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only results since a date or time (2026-11-01, 2026-11-01T12:00:00Z)
    /// or within an age (30m, 12h, 7d, 2w)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most this many, newest first
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

impl FilterArgs {
    /// The store filter; an error message for a kind or time it cannot
    /// read.
    pub fn filter(&self) -> Result<Filter, String> {
        let kind = match &self.kind {
            None => None,
            Some(k) => Some(k.parse::<Kind>().map_err(|e| e.to_string())?),
        };
        let since = match &self.since {
            None => None,
            Some(s) => Some(
                iolab_store::time::parse_since(s, iolab_store::time::now_unix()).ok_or_else(
                    || {
                        format!(
                            "--since '{s}': expected a date, an RFC 3339 time or an age like 7d"
                        )
                    },
                )?,
            ),
        };
        Ok(Filter {
            kind,
            tag: self.tag.clone(),
            fs_type: self.fs.clone(),
            target: self.target.clone(),
            since,
            limit: self.limit,
        })
    }
}

/// The forms of a table: each the document exporter of that format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableForm {
    Text,
    Markdown,
    Csv,
    Html,
}

impl TableForm {
    fn doc(self) -> DocFormat {
        match self {
            TableForm::Text => DocFormat::Text,
            TableForm::Markdown => DocFormat::Markdown,
            TableForm::Csv => DocFormat::Csv,
            TableForm::Html => DocFormat::Html,
        }
    }

    /// The table form of a format; None for JSON, Err for a format that
    /// is not a table's.
    pub fn of(f: OutputFormat) -> Result<Option<TableForm>, String> {
        match f {
            OutputFormat::Json => Ok(None),
            OutputFormat::Table | OutputFormat::Normal => Ok(Some(TableForm::Text)),
            OutputFormat::Markdown => Ok(Some(TableForm::Markdown)),
            OutputFormat::Csv => Ok(Some(TableForm::Csv)),
            OutputFormat::Html => Ok(Some(TableForm::Html)),
            other => Err(format!(
                "output format '{}' does not apply here (expected table, markdown, csv, json or html)",
                other.name()
            )),
        }
    }
}

/// Rows of text under headers, exported through the document model.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Whether a cell reads as a number (`1,234.5`, `-3`, `x1.20`-free).
fn numeric(cell: &str) -> bool {
    let c = cell.replace(',', "");
    !c.is_empty() && c.parse::<f64>().is_ok()
}

impl Table {
    pub fn new(headers: &[&str]) -> Self {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table in the document model: text cells, left-aligned (ids
    /// and names lead the rows people scan); numbers marked as numbers
    /// for the formats that care (Markdown, HTML) when every cell of a
    /// column but the first (an id) is one, each with its value, which
    /// CSV writes without the thousands separators people read.
    pub fn doc(&self, name: &str) -> doc::Table {
        let columns = self
            .headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let cells = || self.rows.iter().filter_map(|r| r.get(i));
                let is_num = i > 0
                    && cells().any(|c| numeric(c))
                    && cells().all(|c| numeric(c) || c == "-" || c.is_empty());
                doc::Column {
                    name: h.clone(),
                    numeric: is_num,
                    ..doc::Column::default()
                }
            })
            .collect::<Vec<doc::Column>>();
        doc::Table {
            name: name.to_string(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .map(|(i, c)| match c.replace(',', "").parse::<f64>() {
                            Ok(v) if columns[i].numeric && v.is_finite() => doc::Cell::shown(v, c),
                            _ => doc::Cell::text(c),
                        })
                        .collect()
                })
                .collect(),
            columns,
            shown: doc::Shown::All,
            row_bars: false,
        }
    }

    pub fn render(&self, form: TableForm) -> String {
        self.render_styled(form, Style::default())
    }

    pub fn render_styled(&self, form: TableForm, style: Style) -> String {
        // A page needs a title; a table on a terminal or in a file does
        // not.
        let title = if form.doc() == DocFormat::Html {
            "iolab"
        } else {
            ""
        };
        let mut d = doc::Document::new(title);
        d.push(doc::Block::Table(self.doc("table")));
        export(&d, form.doc(), style)
    }
}

/// A value by the one number formatter of every table
/// (`iolab_report::doc::num`); "-" for a missing one.
pub fn num(v: Option<f64>) -> String {
    iolab_report::doc::num::opt(v)
}

/// Says what is wrong with the input and exits with the bad-input status.
pub fn bad(msg: &str) -> Result<Status> {
    eprintln!("iolab: {msg}");
    Ok(Status::BadInput)
}

/// An RFC 3339 UTC time as local time with its offset from UTC (the
/// offset in force now): `2026-11-27 10:39:10 +01:00`; the text as it is
/// when it does not parse.
pub fn local_time(utc: &str) -> String {
    let Some(secs) = iolab_store::time::parse_rfc3339(utc) else {
        return utc.to_string();
    };
    let off = iolab_engine::host::utc_offset_s();
    let local = iolab_store::time::format_rfc3339(secs + off as i64);
    let stamp = local.trim_end_matches('Z').replace('T', " ");
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.unsigned_abs();
    format!("{stamp} {sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_in_three_forms() {
        let mut t = Table::new(&["A", "LONG NAME"]);
        t.push(vec!["x,y".into(), "1".into()]);
        t.push(vec!["wide cell".into(), "say \"hi\"".into()]);
        assert_eq!(
            t.render(TableForm::Text),
            "A          LONG NAME\nx,y        1\nwide cell  say \"hi\"\n"
        );
        assert_eq!(
            t.render(TableForm::Csv),
            "A,LONG NAME\n\"x,y\",1\nwide cell,\"say \"\"hi\"\"\"\n"
        );
        assert_eq!(
            t.render(TableForm::Markdown),
            "| A | LONG NAME |\n|---|---|\n| x,y | 1 |\n| wide cell | say \"hi\" |\n"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(num(Some(1234.567)), "1,235");
        assert_eq!(num(Some(512.25)), "512.2");
        assert_eq!(num(Some(12.345)), "12.35");
        assert_eq!(num(Some(1.5)), "1.500");
        assert_eq!(num(Some(3.0)), "3");
        assert_eq!(num(Some(0.0)), "0");
        assert_eq!(num(None), "-");
    }

    #[test]
    fn filters_are_checked() {
        let f = FilterArgs {
            kind: Some("quick".into()),
            since: Some("2026-01-01".into()),
            ..FilterArgs::default()
        };
        let got = f.filter().unwrap();
        assert_eq!(got.kind, Some(Kind::Quick));
        assert_eq!(got.since, Some(1_767_225_600));
        let bad = FilterArgs {
            kind: Some("bench".into()),
            ..FilterArgs::default()
        };
        assert!(bad.filter().unwrap_err().contains("'bench'"));
        let bad = FilterArgs {
            since: Some("last tuesday".into()),
            ..FilterArgs::default()
        };
        assert!(bad.filter().unwrap_err().contains("--since"));
    }
}
