//! The quick suite as a document: where and how it ran, one row per test
//! (MB/s with a bar, IOPS, the spread of repeats, p50 and p99 latency),
//! a CrystalDiskMark-style grid of MB/s per test with read and write side
//! by side, the p99 latency beside it, the metadata operations per second,
//! and the warnings and notes.

use iolab_stats::quick::{QuickResult, QuickTest};

use super::Marks;
use crate::doc::{
    num, Axis, Block, Cell, Column, Document, Figure, FigureKind, Note, Point, Series, Table,
};
use crate::quick::{how, place};

/// A bar of the grid: its value, interval and label.
type Bar = (f64, Option<(f64, f64)>, String);

fn is_io(t: &QuickTest) -> bool {
    !t.name.starts_with("META")
}

/// Every test's numbers for a spreadsheet: MB/s, IOPS, p50 and p99 in
/// nanoseconds, the error, the runs and the IOPS interval of a repeat,
/// the warning codes.
fn data_table(q: &QuickResult) -> Table {
    let cols = [
        "test",
        "op",
        "mb_per_s",
        "iops",
        "p50_ns",
        "p99_ns",
        "error",
        "runs",
        "iops_low",
        "iops_high",
        "warnings",
    ];
    let mut t = Table::new(
        "tests",
        cols.iter()
            .enumerate()
            .map(|(i, c)| match i {
                2..=5 | 7..=9 => Column::num(*c, ""),
                _ => Column::text(*c),
            })
            .collect(),
    );
    for (i, x) in q.tests.iter().enumerate() {
        let n = |v: f64| Cell::shown(v, "");
        let (lo, hi) = x.iops_interval.unzip();
        let opt = |v: Option<f64>| v.map_or_else(|| Cell::text(""), n);
        t.rows.push(vec![
            Cell::text(&x.name),
            Cell::text(&x.op),
            n(x.bw_bytes / 1e6),
            n(x.iops),
            n(x.p50_ns as f64),
            n(x.p99_ns as f64),
            Cell::text(x.error.as_deref().unwrap_or("")),
            n(q.runs_of(i, |u| u.iops).len() as f64),
            opt(lo),
            opt(hi),
            Cell::text(
                x.warnings
                    .iter()
                    .map(|w| w.code.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
            ),
        ]);
    }
    t.for_data()
}

/// The document of a quick result.
pub fn document(q: &QuickResult) -> Document {
    let mut d = Document::new(format!("iolab quick: {}", place(q)));
    d.paragraph(how(q));
    if !q.profile.is_empty() {
        d.paragraph(format!("profile {}", q.profile));
    }
    let mut marks = Marks::default();
    let (table, test_marks) = reading_table(q, &mut marks);
    d.push(Block::Table(table.for_reading()));
    d.push(Block::Table(data_table(q)));
    for f in io_figures(q, &test_marks) {
        d.push(Block::Figure(f));
    }
    if let Some(f) = meta_figure(q) {
        d.push(Block::Figure(f));
    }
    d.notes(notes(q, marks));
    d
}

/// The table a person reads: one row per test, with each test's warning marks
/// (returned too, one list per test, for the figures).
fn reading_table(q: &QuickResult, marks: &mut Marks) -> (Table, Vec<Vec<String>>) {
    let repeated = q.repeat.is_some();
    let mut cols = vec![
        Column::text("test"),
        Column::text("op"),
        Column::num("MB/s", "MB/s").with_bar(),
        Column::num("IOPS", "IOPS"),
    ];
    if repeated {
        cols.push(Column::num("±95%", "%"));
    }
    cols.push(Column::num("p50", "us"));
    cols.push(Column::num("p99", "us"));
    let mut table = Table::new("quick", cols);
    let mut test_marks: Vec<Vec<String>> = Vec::new();
    for t in &q.tests {
        let at = format!("{} {}", t.name, t.op);
        let m = marks.marks(
            t.warnings
                .iter()
                .map(|w| (w.code.as_str(), w.text.as_str())),
            &at,
        );
        test_marks.push(m.clone());
        table.rows.push(reading_row(t, repeated, m));
    }
    (table, test_marks)
}

/// One test's row of the reading table.
fn reading_row(t: &QuickTest, repeated: bool, m: Vec<String>) -> Vec<Cell> {
    let mut row = vec![Cell::text(&t.name), Cell::text(&t.op)];
    if t.failed() {
        row.push(Cell::text("failed"));
        row.push(Cell::text("-"));
    } else {
        row.push(Cell::num((t.bw_bytes > 0.0).then_some(t.bw_bytes / 1e6)).marked(m.clone()));
        row.push(Cell::num(Some(t.iops)).marked(m.clone()));
    }
    if repeated {
        row.push(match t.iops_interval {
            Some((_, hi)) if t.iops > 0.0 => {
                let s = hi / t.iops - 1.0;
                Cell::shown(s * 100.0, num::spread_text(s))
            }
            _ => Cell::text("-"),
        });
    }
    for ns in [t.p50_ns, t.p99_ns] {
        row.push(if ns == 0 {
            Cell::text("-")
        } else {
            Cell::num(Some(ns as f64 / 1e3)).marked(m.clone())
        });
    }
    row
}

/// The grid: MB/s and p99 of each I/O test, one bar per operation (none
/// without I/O tests).
fn io_figures(q: &QuickResult, test_marks: &[Vec<String>]) -> Vec<Figure> {
    let mut cats: Vec<String> = Vec::new();
    let mut ops: Vec<String> = Vec::new();
    for t in q.tests.iter().filter(|t| is_io(t)) {
        if !cats.contains(&t.name) {
            cats.push(t.name.clone());
        }
        if !ops.contains(&t.op) {
            ops.push(t.op.clone());
        }
    }
    if cats.is_empty() {
        return Vec::new();
    }
    let bars = |f: &dyn Fn(&QuickTest) -> Option<Bar>| {
        ops.iter()
            .map(|op| Series {
                name: op.clone(),
                points: q
                    .tests
                    .iter()
                    .zip(test_marks)
                    .filter(|(t, _)| is_io(t) && &t.op == op && !t.failed())
                    .filter_map(|(t, m)| {
                        let (y, iv, label) = f(t)?;
                        let x = cats.iter().position(|c| c == &t.name)? as f64;
                        let mut p = Point::at(x, y);
                        if let Some((lo, hi)) = iv {
                            p.lo = Some(lo);
                            p.hi = Some(hi);
                        }
                        p.label = label;
                        p.marks = m.clone();
                        Some(p)
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    vec![
        Figure {
            title: "Throughput per test (MB/s, higher is better)".into(),
            kind: FigureKind::Bars,
            x: Axis {
                label: "test".into(),
                categories: cats.clone(),
                ..Axis::default()
            },
            y: Axis {
                label: "MB/s".into(),
                ..Axis::default()
            },
            series: bars(&|t| {
                let mb = t.bw_bytes / 1e6;
                let iv = t
                    .iops_interval
                    .filter(|_| t.iops > 0.0)
                    .map(|(lo, hi)| (lo / t.iops * mb, hi / t.iops * mb));
                (mb > 0.0).then(|| (mb, iv, format!("{} MB/s", num::fmt(mb))))
            }),
        },
        Figure {
            title: "p99 completion latency per test (us, lower is better)".into(),
            kind: FigureKind::Bars,
            x: Axis {
                label: "test".into(),
                categories: cats.clone(),
                ..Axis::default()
            },
            y: Axis {
                label: "p99 latency (us)".into(),
                ..Axis::default()
            },
            series: bars(&|t| {
                let us = t.p99_ns as f64 / 1e3;
                (t.p99_ns > 0).then(|| (us, None, format!("{} us", num::fmt(us))))
            }),
        },
    ]
}

/// Operations per second of the metadata tests that ran, if any.
fn meta_figure(q: &QuickResult) -> Option<Figure> {
    let meta: Vec<&QuickTest> = q
        .tests
        .iter()
        .filter(|t| !is_io(t) && !t.failed())
        .collect();
    if meta.is_empty() {
        return None;
    }
    Some(Figure {
        title: "Metadata operations per second (higher is better)".into(),
        kind: FigureKind::Bars,
        x: Axis {
            label: "operation".into(),
            categories: meta.iter().map(|t| t.op.clone()).collect(),
            ..Axis::default()
        },
        y: Axis {
            label: "operations/s".into(),
            ..Axis::default()
        },
        series: vec![Series {
            name: meta[0].name.clone(),
            points: meta
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut p = Point::at(i as f64, t.iops);
                    p.label = format!("{} ops/s", num::fmt(t.iops));
                    p
                })
                .collect(),
        }],
    })
}

/// The notes under the tables: warning marks, repeats, errors.
fn notes(q: &QuickResult, marks: Marks) -> Vec<Note> {
    let mut notes = marks.notes();
    if let Some(r) = &q.repeat {
        notes.push(Note::plain(format!("repeats: {}", r.describe())));
        notes.push(Note::plain(
            "repeats: MB/s and IOPS are the geometric means of the runs (what diff's verdicts \
             test), latencies their medians; ±95% is the IOPS' spread",
        ));
        notes.push(Note::plain(num::SPREAD_MEANING));
    }
    notes.extend(q.notes.iter().map(Note::plain));
    if q.tests.iter().any(|t| t.op == "write+fsync") {
        notes.push(Note::plain(
            "write+fsync: buffered 4k writes, each followed by fsync; its latency is the fsync's",
        ));
    }
    for t in &q.tests {
        if let Some(e) = &t.error {
            notes.push(Note::plain(format!("{} {}: {e}", t.name, t.op)));
        }
    }
    if q.interrupted {
        notes.push(Note::plain("interrupted: the tests not listed did not run"));
    }
    notes
}
