//! A run as a document (fio's own formats stay in `normal`, `json` and
//! `terse`): one row per job and direction (MB/s with a bar, IOPS, mean,
//! p50, p99 and p99.9 completion latency), the completion latency
//! percentile curves of every job and direction from the stored
//! histograms (log latency against "nines": 50, 90, 99, 99.9, 99.99), and
//! the bandwidth of each averaging window over the run where samples were
//! kept.

use iolab_stats::{Dir, DirResult, RunResult};

use super::Marks;
use crate::doc::{
    num, Axis, Block, Cell, Column, Document, Figure, FigureKind, Note, Point, Scale, Series, Table,
};

/// The percentiles the curves are drawn through.
const CURVE: [f64; 21] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 97.0, 99.0, 99.5, 99.7,
    99.9, 99.95, 99.97, 99.99, 99.999,
];

/// A percentile on the "nines" axis: 90 -> 1, 99 -> 2, 99.9 -> 3.
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

fn job_name(r: &RunResult, i: usize) -> String {
    let j = &r.jobs[i];
    let same = r.jobs.iter().filter(|k| k.name == j.name).count();
    if same > 1 {
        let k = r.jobs[..i].iter().filter(|k| k.name == j.name).count();
        format!("{}[{k}]", j.name)
    } else {
        j.name.clone()
    }
}

/// The document of a run.
pub fn document(r: &RunResult) -> Document {
    let mut d = Document::new("iolab run");
    if r.interrupted {
        d.paragraph("interrupted: the numbers are partial");
    }
    let mut t = Table::new(
        "jobs",
        vec![
            Column::text("job"),
            Column::text("dir"),
            Column::num("MB/s", "MB/s").with_bar(),
            Column::num("IOPS", "IOPS"),
            Column::num("clat mean", "us"),
            Column::num("p50", "us"),
            Column::num("p99", "us"),
            Column::num("p99.9", "us"),
        ],
    );
    let mut marks = Marks::default();
    let mut curves: Vec<Series> = Vec::new();
    let mut windows: Vec<Series> = Vec::new();
    for (i, j) in r.jobs.iter().enumerate() {
        let name = job_name(r, i);
        let m = marks.marks(
            j.warnings
                .iter()
                .map(|w| (w.code.as_str(), w.text.as_str())),
            &name,
        );
        for dir in Dir::ALL {
            let dr = &j.dirs[dir as usize];
            if dr.total_ios == 0 {
                continue;
            }
            t.rows.push(row(&name, dir, dr, &m));
            let series = format!("{name} {}", dir.key());
            curves.extend(curve(&series, dr));
            windows.extend(window_series(series, dr));
        }
    }
    d.push(Block::Table(t));
    if !curves.is_empty() {
        d.push(Block::Figure(latency_figure(curves)));
    }
    if !windows.is_empty() {
        d.push(Block::Figure(window_figure(windows)));
    }
    let mut notes = marks.notes();
    notes.push(Note::plain(
        "MB/s and IOPS are total I/O over each direction's runtime (fio's headline figures); \
         latencies are completion latencies (clat)",
    ));
    d.notes(notes);
    d
}

/// One job and direction's row of the table.
fn row(name: &str, dir: Dir, dr: &DirResult, m: &[String]) -> Vec<Cell> {
    let pct = dr.clat.hist.percentiles(&[50.0, 99.0, 99.9]);
    let us = |k: usize| pct.get(k).map(|&(_, v)| v as f64 / 1e3);
    vec![
        Cell::text(name),
        Cell::text(dir.key()),
        Cell::num(Some(dr.bw_bytes() as f64 / 1e6)).marked(m.to_vec()),
        Cell::num(Some(dr.iops())).marked(m.to_vec()),
        Cell::num(Some(dr.clat.moments.mean() / 1e3)),
        Cell::num(us(0)),
        Cell::num(us(1)),
        Cell::num(us(2)),
    ]
}

/// The completion latency percentile curve of a direction (none without a histogram).
fn curve(name: &str, dr: &DirResult) -> Option<Series> {
    if dr.clat.hist.is_empty() {
        return None;
    }
    Some(Series {
        name: name.to_string(),
        points: dr
            .clat
            .hist
            .percentiles(&CURVE)
            .into_iter()
            .filter(|&(_, v)| v > 0)
            .map(|(p, v)| {
                let mut pt = Point::at(nines(p), v as f64 / 1e3);
                pt.label = format!("p{p}: {} us", num::fmt(v as f64 / 1e3));
                pt
            })
            .collect(),
    })
}

/// The bandwidth of each averaging window of a direction (none under two samples).
fn window_series(name: String, dr: &DirResult) -> Option<Series> {
    if dr.bw_series.len() < 2 {
        return None;
    }
    Some(Series {
        name,
        points: dr
            .bw_series
            .iter()
            .enumerate()
            .map(|(k, kib)| {
                let mb = *kib as f64 * 1024.0 / 1e6;
                let mut pt = Point::at((k + 1) as f64, mb);
                pt.label = format!("{} MB/s", num::fmt(mb));
                pt
            })
            .collect(),
    })
}

fn latency_figure(curves: Vec<Series>) -> Figure {
    let ticks: Vec<(f64, String)> = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999]
        .iter()
        .map(|&p| (nines(p), format!("{p}")))
        .collect();
    Figure {
        title: "Completion latency percentiles (lower is better)".into(),
        kind: FigureKind::Lines,
        x: Axis {
            label: "percentile".into(),
            scale: Scale::Linear,
            ticks,
            categories: Vec::new(),
        },
        y: Axis {
            label: "clat (us)".into(),
            scale: Scale::Log,
            ..Axis::default()
        },
        series: curves,
    }
}

fn window_figure(windows: Vec<Series>) -> Figure {
    Figure {
        title: "Bandwidth of each averaging window over the run".into(),
        kind: FigureKind::Lines,
        x: Axis {
            label: "sample (one per averaging window, 500 ms by default)".into(),
            ..Axis::default()
        },
        y: Axis {
            label: "MB/s".into(),
            ..Axis::default()
        },
        series: windows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_place_percentiles() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(0.0), 0.0);
    }
}
