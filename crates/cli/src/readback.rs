//! What the commands that read the results database back (`history`,
//! `show`, `export`, `diff`) share: the `--db` flag and opening the
//! database without creating one, the history filters, a plain table in
//! the text, Markdown and CSV forms, and number formatting.

use std::path::PathBuf;

use anyhow::{anyhow, Context as _, Result};
use clap::Args;
use iolab_store::{Filter, Kind, Store};

use crate::exit::Status;

/// Which database to read.
#[derive(Args, Debug, Clone, Default)]
pub struct DbArg {
    /// Results database (default $IOLAB_DB, else
    /// $XDG_DATA_HOME/iolab/results.db, else ~/.local/share/iolab/results.db)
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
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
        Store::open_for_reading(&path)
            .with_context(|| format!("results database `{}`", path.display()))
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
        detail: format!("{err:#}"),
    })
}

/// Says why the results database cannot be used; exit 2, as for every
/// command: nothing was measured or written.
pub fn refused(err: &anyhow::Error) -> Status {
    eprintln!("iolab: {err:#}");
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

/// The forms of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableForm {
    Text,
    Markdown,
    Csv,
}

/// Rows of text under headers.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
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

    pub fn render(&self, form: TableForm) -> String {
        match form {
            TableForm::Text => self.text(),
            TableForm::Markdown => self.markdown(),
            TableForm::Csv => self.csv(),
        }
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(cell.chars().count());
                }
            }
        }
        w
    }

    fn text(&self) -> String {
        let w = self.widths();
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w.get(i).copied().unwrap_or(0);
                if i + 1 == cells.len() {
                    s.push_str(c);
                } else {
                    s.push_str(&format!("{c:<pad$}"));
                }
            }
            s.push('\n');
            s
        };
        let mut out = line(&self.headers);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }

    fn markdown(&self) -> String {
        let cell = |c: &String| c.replace('|', "\\|").replace('\n', " ");
        let mut out = format!(
            "| {} |\n|{}|\n",
            self.headers
                .iter()
                .map(cell)
                .collect::<Vec<_>>()
                .join(" | "),
            self.headers
                .iter()
                .map(|_| "---")
                .collect::<Vec<_>>()
                .join("|")
        );
        for row in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                row.iter().map(cell).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }

    fn csv(&self) -> String {
        let mut out = csv_line(&self.headers);
        for row in &self.rows {
            out.push_str(&csv_line(row));
        }
        out
    }
}

/// One CSV line, fields quoted when they hold a comma, quote or line
/// break (RFC 4180).
fn csv_line(cells: &[String]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect();
    format!("{}\n", quoted.join(","))
}

/// A value with about four significant digits, without exponent for the
/// ranges storage numbers live in; "-" for a missing one.
pub fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".to_string();
    };
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= 1000.0 || a == 0.0 || v.fract() == 0.0 && a < 1e15 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    }
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
        assert_eq!(num(Some(1234.567)), "1235");
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
