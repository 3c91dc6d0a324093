//! The document model every format but fio's own is rendered from: a
//! [`Document`] is a title and a list of [`Block`]s (headings, tables with
//! units and per-cell notes, figures with series and intervals, notes,
//! provenance and preformatted text). The result kinds build documents
//! (`crate::kinds`); the exporters (`crate::export`) turn one into text,
//! Markdown, CSV, JSON or HTML. A document holds numbers as numbers (with
//! the text people read beside them), so that CSV and JSON carry the
//! values and the picture formats can scale bars by them.

pub mod num;

use serde::{Deserialize, Serialize};

/// A rendered result: what every exporter reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// One part of a document, in reading order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Block {
    /// A section heading; level 1 is a result's own title, 2 its parts.
    Heading {
        level: u8,
        text: String,
    },
    /// A line of prose (where and how a result was measured, say).
    Paragraph {
        text: String,
    },
    Table(Table),
    Figure(Figure),
    Notes {
        notes: Vec<Note>,
    },
    /// Where and how a result was measured, as key/value pairs.
    Provenance {
        pairs: Vec<(String, String)>,
    },
    /// Text shown as it is (a job file).
    Preformatted {
        caption: String,
        text: String,
    },
}

/// Rows of cells under columns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// A short name (`quick`, `phases`), the CSV block's and the HTML
    /// table's identifier.
    pub name: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// Which formats show the table.
    #[serde(default, skip_serializing_if = "Shown::is_all")]
    pub shown: Shown,
    /// A terminal shows a bar beside every number of a row, scaled to the
    /// row's largest (a row per metric, a column per target: the picture
    /// of a comparison). Only on a terminal: a file or a pipe keeps the
    /// table as narrow as its numbers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub row_bars: bool,
}

/// Which exporters show a table. A result may say the same numbers twice:
/// once as people read them (a matrix, geometric means with their spread,
/// short units) and once as a spreadsheet wants them (long form, one line
/// per run, nanoseconds, every digit). Text, Markdown and HTML show the
/// first, CSV the second; JSON (the model) holds both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shown {
    /// Every format.
    #[default]
    All,
    /// Text, Markdown and HTML only.
    Read,
    /// CSV only: the long form of numbers a `Read` table shows.
    Data,
}

impl Shown {
    fn is_all(&self) -> bool {
        *self == Shown::All
    }

    /// Whether people's formats (text, Markdown, HTML) show the table.
    pub fn read(self) -> bool {
        self != Shown::Data
    }

    /// Whether CSV writes the table.
    pub fn data(self) -> bool {
        self != Shown::Read
    }
}

/// A column: its name and the unit of its numbers (none for text).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    /// Numbers align right, text left.
    #[serde(default)]
    pub numeric: bool,
    /// The terminal shows a bar beside the numbers of this column, scaled
    /// to the column's largest value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bar: bool,
}

/// What a cell says about its value, for colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    #[default]
    Plain,
    /// Better than the baseline, or best of the row.
    Good,
    /// Worse than the baseline.
    Bad,
    /// Carries a warning, or cannot tell.
    Warn,
}

/// One cell: the text people read, the number behind it (when it is
/// one), and markers of the notes that concern it (`w1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<String>,
    #[serde(default, skip_serializing_if = "is_plain")]
    pub tone: Tone,
}

fn is_plain(t: &Tone) -> bool {
    *t == Tone::Plain
}

impl Cell {
    /// A text cell.
    pub fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            ..Cell::default()
        }
    }

    /// A number, formatted by the one number formatter; "-" for none.
    pub fn num(v: Option<f64>) -> Cell {
        match v.filter(|x| x.is_finite()) {
            Some(x) => Cell {
                text: num::fmt(x),
                value: Some(x),
                ..Cell::default()
            },
            None => Cell::text("-"),
        }
    }

    /// A number shown as `text`.
    pub fn shown(v: f64, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: v.is_finite().then_some(v),
            ..Cell::default()
        }
    }

    pub fn marked(mut self, marks: Vec<String>) -> Cell {
        self.marks = marks;
        self
    }

    pub fn tone(mut self, tone: Tone) -> Cell {
        self.tone = tone;
        self
    }

    /// The text with its markers: `440.9 w1,w2`.
    pub fn display(&self) -> String {
        if self.marks.is_empty() {
            self.text.clone()
        } else {
            format!("{} {}", self.text, self.marks.join(","))
        }
    }
}

/// How a figure draws its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// Horizontal grouped bars: one group per category, one bar per
    /// series, whiskers for intervals.
    Bars,
    /// Lines through points against a numeric x axis.
    Lines,
}

/// An axis' scale.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    #[default]
    Linear,
    Log,
}

/// An axis: its label (with unit), scale, and, where the numbers need
/// names, the ticks to print (`(x, "64k")`); bars' categories.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub label: String,
    #[serde(default)]
    pub scale: Scale,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<(f64, String)>,
    /// Bars: the name of each group, in order (a point's `x` is its
    /// index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// A picture of numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub title: String,
    pub kind: FigureKind,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

/// One named set of points (a target, a direction, a job).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// A value at x, with its interval and what to print beside it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// Printed beside a bar: its value and verdict (`x1.25 faster`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<String>,
    #[serde(default, skip_serializing_if = "is_plain")]
    pub tone: Tone,
}

impl Point {
    pub fn at(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            ..Point::default()
        }
    }
}

/// A note under a table or figure; `mark` is the marker cells carry
/// (`w1`), empty for a plain note.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Note {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mark: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
}

impl Note {
    pub fn plain(text: impl Into<String>) -> Note {
        Note {
            mark: String::new(),
            text: text.into(),
            warning: false,
        }
    }

    pub fn warning(mark: impl Into<String>, text: impl Into<String>) -> Note {
        Note {
            mark: mark.into(),
            text: text.into(),
            warning: true,
        }
    }
}

impl Document {
    pub fn new(title: impl Into<String>) -> Document {
        Document {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    pub fn push(&mut self, b: Block) -> &mut Self {
        self.blocks.push(b);
        self
    }

    pub fn heading(&mut self, level: u8, text: impl Into<String>) -> &mut Self {
        self.push(Block::Heading {
            level,
            text: text.into(),
        })
    }

    pub fn paragraph(&mut self, text: impl Into<String>) -> &mut Self {
        self.push(Block::Paragraph { text: text.into() })
    }

    pub fn notes(&mut self, notes: Vec<Note>) -> &mut Self {
        if !notes.is_empty() {
            self.push(Block::Notes { notes });
        }
        self
    }

    /// The tables, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }

    /// The figures, in order.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Figure(f) => Some(f),
            _ => None,
        })
    }

    /// Several documents as one, each under its title as a heading.
    pub fn concat(title: impl Into<String>, docs: Vec<Document>) -> Document {
        let mut out = Document::new(title);
        for d in docs {
            out.heading(1, d.title);
            out.blocks.extend(d.blocks);
        }
        out
    }
}

impl Table {
    pub fn new(name: impl Into<String>, columns: Vec<Column>) -> Table {
        Table {
            name: name.into(),
            columns,
            rows: Vec::new(),
            shown: Shown::All,
            row_bars: false,
        }
    }

    /// With a bar per number on a terminal, scaled by row.
    pub fn with_row_bars(mut self) -> Table {
        self.row_bars = true;
        self
    }

    /// The table in people's formats only.
    pub fn for_reading(mut self) -> Table {
        self.shown = Shown::Read;
        self
    }

    /// The table in CSV only: columns named as a spreadsheet wants them
    /// (`mb_per_s`, `p99_ns`), cells holding their values.
    pub fn for_data(mut self) -> Table {
        self.shown = Shown::Data;
        self
    }
}

impl Column {
    pub fn text(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            ..Column::default()
        }
    }

    pub fn num(name: impl Into<String>, unit: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            unit: unit.into(),
            numeric: true,
            bar: false,
        }
    }

    pub fn with_bar(mut self) -> Column {
        self.bar = true;
        self
    }

    /// The heading people read: `MB/s`, `p99 (us)`; the name alone when
    /// it is the unit or there is none.
    pub fn heading(&self) -> String {
        if self.unit.is_empty() || self.name == self.unit || self.name.ends_with(&self.unit) {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// The provenance of a serde value as key/value pairs: nested objects
/// flattened with dotted keys, empty strings and nulls left out, so that
/// a field added to a record shows up without code here.
pub fn pairs_of(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                pairs_of(&key(k), v, out);
            }
        }
        Value::Null => {}
        Value::String(s) if s.is_empty() => {}
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Array(a) if a.is_empty() => {}
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => out.push((
            prefix.to_string(),
            a.iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        )),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pairs_of(&key(&i.to_string()), x, out);
            }
        }
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_pairs_are_flattened() {
        let v = serde_json::json!({"host": "h", "empty": "", "n": 3, "sub": {"a": true, "b": null},
            "list": ["x", "y"], "rows": [{"k": 1}]});
        let mut out = Vec::new();
        pairs_of("", &v, &mut out);
        let want: Vec<(String, String)> = [
            ("host", "h"),
            ("n", "3"),
            ("sub.a", "true"),
            ("list", "x, y"),
            ("rows.0.k", "1"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let mut got = out.clone();
        got.sort();
        let mut want = want;
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn column_headings_name_units_once() {
        assert_eq!(Column::num("MB/s", "MB/s").heading(), "MB/s");
        assert_eq!(Column::num("p99", "us").heading(), "p99 (us)");
        assert_eq!(Column::text("test").heading(), "test");
    }
}
