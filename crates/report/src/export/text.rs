//! The terminal form: headings, aligned tables (numbers right, text left,
//! a bar beside the columns that ask for one), notes and provenance.
//! With a width the tables wrap their text cells to fit it; with colour
//! the verdicts and warnings are coloured (anstyle), otherwise the output
//! is plain text. Figures are for the picture formats and are left out.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style as Ansi};
use comfy_table::{presets, CellAlignment, ContentArrangement};

use super::Exporter;
use crate::doc::{Block, Document, Table, Tone};

/// How the terminal is: its width (None: not a terminal, no wrapping)
/// and whether colour is wanted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub width: Option<u16>,
    pub color: bool,
}

/// The text exporter.
pub struct Text {
    pub style: Style,
}

/// Cells of a bar: eight steps per character.
const BAR_CHARS: usize = 12;

/// A bar of `fraction` (0..=1) of [`BAR_CHARS`] characters.
pub fn bar(fraction: f64) -> String {
    let eighths = (fraction.clamp(0.0, 1.0) * (BAR_CHARS * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    s.push_str(PARTS[eighths % 8]);
    s
}

fn paint(text: &str, tone: Tone, color: bool) -> String {
    let style = match tone {
        _ if !color => return text.to_string(),
        Tone::Plain => return text.to_string(),
        Tone::Good => Ansi::new().fg_color(Some(AnsiColor::Green.into())),
        Tone::Bad => Ansi::new().fg_color(Some(AnsiColor::Red.into())),
        Tone::Warn => Ansi::new().fg_color(Some(AnsiColor::Yellow.into())),
    };
    format!("{style}{text}{style:#}")
}

fn table_text(t: &Table, style: Style) -> String {
    let mut tt = comfy_table::Table::new();
    tt.load_preset(presets::NOTHING);
    match style.width {
        Some(w) => {
            tt.set_content_arrangement(ContentArrangement::Dynamic);
            tt.set_width(w);
        }
        None => {
            tt.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    // Row bars on a terminal only.
    let row_bars = t.row_bars && style.width.is_some();
    // The largest value of each bar column.
    let max: Vec<f64> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, _)| {
            t.rows
                .iter()
                .filter_map(|r| r.get(i).and_then(|c| c.value))
                .fold(0.0, f64::max)
        })
        .collect();
    let mut header = Vec::new();
    let mut align = Vec::new();
    for c in &t.columns {
        header.push(c.heading());
        align.push(if c.numeric {
            CellAlignment::Right
        } else {
            CellAlignment::Left
        });
        if c.bar || (row_bars && c.numeric) {
            header.push(String::new());
            align.push(CellAlignment::Left);
        }
    }
    tt.set_header(header);
    for row in &t.rows {
        let row_max = row
            .iter()
            .zip(&t.columns)
            .filter(|(_, c)| c.numeric)
            .filter_map(|(x, _)| x.value)
            .fold(0.0, f64::max);
        let mut cells = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            let cell = row.get(i).cloned().unwrap_or_default();
            let tone = if cell.tone == Tone::Plain && !cell.marks.is_empty() {
                Tone::Warn
            } else {
                cell.tone
            };
            cells.push(paint(&cell.display(), tone, style.color));
            if c.bar || (row_bars && c.numeric) {
                let top = if row_bars { row_max } else { max[i] };
                let b = match cell.value {
                    Some(v) if top > 0.0 && v > 0.0 => bar(v / top),
                    _ => String::new(),
                };
                cells.push(b);
            }
        }
        tt.add_row(cells);
    }
    // Fitting a width, short columns (ids, times, numbers) keep their
    // width and the long text columns (a headline, a path) wrap.
    let widths: Vec<usize> = tt
        .column_max_content_widths()
        .iter()
        .map(|w| *w as usize)
        .collect();
    for (i, a) in align.iter().enumerate() {
        if let Some(col) = tt.column_mut(i) {
            col.set_cell_alignment(*a);
            if style.width.is_some() && widths.get(i).is_some_and(|w| *w <= 28) {
                col.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
            }
        }
    }
    let mut out = String::new();
    for line in tt.lines() {
        // comfy-table pads the first and last columns by one space.
        let l = line.strip_prefix(' ').unwrap_or(&line).trim_end();
        out.push_str(l);
        out.push('\n');
    }
    out
}

impl Exporter for Text {
    fn export(&self, doc: &Document) -> String {
        let mut out = String::new();
        let mut first = doc.title.is_empty();
        if !first {
            let _ = writeln!(out, "{}", doc.title);
        }
        for b in &doc.blocks {
            let gap = if first { "" } else { "\n" };
            match b {
                Block::Table(t) if !t.shown.read() => continue,
                Block::Heading { text, .. } => {
                    let _ = writeln!(out, "{gap}{text}");
                }
                Block::Paragraph { text } => {
                    // Paragraphs follow one another without a gap.
                    let _ = writeln!(out, "{text}");
                }
                Block::Table(t) => {
                    let _ = write!(out, "{gap}{}", table_text(t, self.style));
                }
                Block::Figure(_) => continue,
                Block::Notes { notes } => {
                    out.push_str(gap);
                    for n in notes {
                        let line = if n.mark.is_empty() {
                            format!("note: {}", n.text)
                        } else {
                            format!("{} {}", n.mark, n.text)
                        };
                        let tone = if n.warning { Tone::Warn } else { Tone::Plain };
                        let _ = writeln!(out, "{}", paint(&line, tone, self.style.color));
                    }
                }
                Block::Provenance { pairs } => {
                    out.push_str(gap);
                    let w = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
                    for (k, v) in pairs {
                        let _ = writeln!(out, "  {k:<w$}  {v}");
                    }
                }
                Block::Preformatted { caption, text } => {
                    let _ = writeln!(out, "{gap}{caption}:");
                    for l in text.lines() {
                        let _ = writeln!(out, "  {l}");
                    }
                }
            }
            first = false;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{Cell, Column};

    fn sample() -> Table {
        let mut t = Table::new(
            "t",
            vec![Column::text("test"), Column::num("MB/s", "MB/s").with_bar()],
        );
        t.rows.push(vec![Cell::text("seq"), Cell::num(Some(400.0))]);
        t.rows.push(vec![
            Cell::text("rand"),
            Cell::num(Some(100.0)).marked(vec!["w1".into()]),
        ]);
        t
    }

    #[test]
    fn bars_scale_to_the_column() {
        assert_eq!(bar(1.0), "█".repeat(12));
        assert_eq!(bar(0.0), "");
        assert_eq!(bar(0.5), "██████");
        let text = table_text(&sample(), Style::default());
        assert_eq!(
            text, "test    MB/s\nseq      400  ████████████\nrand  100 w1  ███\n",
            "{text}"
        );
    }

    #[test]
    fn a_width_is_kept_by_wrapping_the_long_text_columns() {
        let mut t = Table::new(
            "h",
            vec![
                Column::text("ID"),
                Column::text("TIME"),
                Column::text("HEADLINE"),
            ],
        );
        for i in 0..3 {
            t.rows.push(vec![
                Cell::text(i.to_string()),
                Cell::text("2026-11-27 10:39:57 +01:00"),
                Cell::text(
                    "SEQ1M Q8T1 read 440.9 MB/s; SEQ1M Q8T1 write 30.66 MB/s; RND4K Q1T1 read \
                     5,530 IOPS; RND4K Q1T1 write 2,021 IOPS",
                ),
            ]);
        }
        let wide = table_text(&t, Style::default());
        assert!(wide.lines().any(|l| l.chars().count() > 100), "{wide}");
        let fit = table_text(
            &t,
            Style {
                width: Some(80),
                color: false,
            },
        );
        for l in fit.lines() {
            assert!(l.chars().count() <= 80, "{l:?}\n{fit}");
        }
        // The time keeps its width: one line each.
        assert_eq!(fit.matches("+01:00").count(), 3, "{fit}");
        assert!(fit.contains("2,021 IOPS"), "{fit}");
    }

    #[test]
    fn row_bars_only_on_a_terminal() {
        let mut t = Table::new(
            "c",
            vec![
                Column::text("metric"),
                Column::num("a", ""),
                Column::num("b", ""),
            ],
        )
        .with_row_bars();
        t.rows.push(vec![
            Cell::text("w"),
            Cell::num(Some(50.0)),
            Cell::num(Some(100.0)),
        ]);
        t.rows.push(vec![
            Cell::text("r"),
            Cell::num(Some(8.0)),
            Cell::num(Some(2.0)),
        ]);
        let plain = table_text(&t, Style::default());
        assert!(!plain.contains('█'), "{plain}");
        let term = table_text(
            &t,
            Style {
                width: Some(100),
                color: false,
            },
        );
        let lines: Vec<&str> = term.lines().collect();
        // Each row scaled to its own largest value.
        assert!(
            lines[1].contains(&format!("50  {}", bar(0.5)))
                && lines[1].ends_with(&format!("100  {}", bar(1.0))),
            "{term}"
        );
        assert!(
            lines[2].contains(&format!("8  {}", bar(1.0)))
                && lines[2].ends_with(&format!("2  {}", bar(0.25))),
            "{term}"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let plain = table_text(&sample(), Style::default());
        assert!(!plain.contains('\x1b'));
        let coloured = table_text(
            &sample(),
            Style {
                width: None,
                color: true,
            },
        );
        assert!(coloured.contains("\x1b[33m100 w1"), "{coloured}");
    }
}
