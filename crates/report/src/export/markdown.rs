//! Markdown (GitHub's tables): headings, tables with numbers aligned
//! right, notes as a list, provenance as a two-column table, job text
//! fenced. Figures are left out.

use std::fmt::Write as _;

use super::Exporter;
use crate::doc::{Block, Document, Table};

pub struct Markdown;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn table(t: &Table) -> String {
    let mut out = String::new();
    let head: Vec<String> = t.columns.iter().map(|c| esc(&c.heading())).collect();
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let align: Vec<&str> = t
        .columns
        .iter()
        .map(|c| if c.numeric { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for r in &t.rows {
        let cells: Vec<String> = (0..t.columns.len())
            .map(|i| r.get(i).map(|c| esc(&c.display())).unwrap_or_default())
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

impl Exporter for Markdown {
    fn export(&self, doc: &Document) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !doc.title.is_empty() {
            parts.push(format!("# {}\n", doc.title));
        }
        for b in &doc.blocks {
            parts.push(match b {
                Block::Table(t) if !t.shown.read() => continue,
                Block::Heading { level, text } => {
                    format!("{} {}\n", "#".repeat((*level as usize + 1).min(6)), text)
                }
                Block::Paragraph { text } => format!("{text}\n"),
                Block::Table(t) => table(t),
                Block::Figure(_) => continue,
                Block::Notes { notes } => notes
                    .iter()
                    .map(|n| {
                        if n.mark.is_empty() {
                            format!("- note: {}\n", n.text)
                        } else {
                            format!("- **{}** {}\n", n.mark, n.text)
                        }
                    })
                    .collect(),
                Block::Provenance { pairs } => {
                    let mut s = String::from("| measured | |\n|---|---|\n");
                    for (k, v) in pairs {
                        let _ = writeln!(s, "| {} | {} |", esc(k), esc(v));
                    }
                    s
                }
                Block::Preformatted { caption, text } => {
                    format!("{caption}:\n\n```ini\n{}\n```\n", text.trim_end())
                }
            });
        }
        parts.join("\n")
    }
}
