//! CSV (the csv crate, RFC 4180 quoting): the document's tables, each a
//! header line and its rows, one after the other with an empty line
//! between. Numeric cells hold the number itself (every digit, no
//! separators: what a spreadsheet parses); a last `notes` column names
//! the markers of a row's cells (`MB/s: w1`) when any cell has one.
//! Tables only people read (a matrix of geometric means) are left out
//! when the document has their long form for spreadsheets
//! ([`Shown`](crate::doc::Shown)).

use super::Exporter;
use crate::doc::{Document, Table};

pub struct Csv;

/// A number as CSV writes it: the shortest text that parses back to it.
pub fn value_text(v: f64) -> String {
    format!("{v}")
}

fn table(t: &Table) -> String {
    let marks = t.rows.iter().flatten().any(|c| !c.marks.is_empty());
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut head: Vec<String> = t.columns.iter().map(|c| c.heading()).collect();
    if marks {
        head.push("notes".into());
    }
    let _ = w.write_record(&head);
    for r in &t.rows {
        let mut rec: Vec<String> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for (i, col) in t.columns.iter().enumerate() {
            let cell = r.get(i).cloned().unwrap_or_default();
            rec.push(match cell.value {
                Some(v) if col.numeric => value_text(v),
                None if col.numeric && cell.text == "-" => String::new(),
                _ => cell.text.clone(),
            });
            if !cell.marks.is_empty() {
                notes.push(format!("{}: {}", col.name, cell.marks.join(",")));
            }
        }
        if marks {
            rec.push(notes.join("; "));
        }
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

impl Exporter for Csv {
    fn export(&self, doc: &Document) -> String {
        doc.tables()
            .filter(|t| t.shown.data())
            .map(table)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
