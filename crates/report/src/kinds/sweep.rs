//! A sweep as a document: one row per point (its axis values, MB/s with
//! a bar, IOPS, p99 latency; with repeats the geometric mean of the runs
//! and its spread), and MB/s, IOPS and p99 latency drawn against the
//! swept axis (block sizes on a log axis), one line per combination of
//! the other axes (rw, sync, ...).

use iolab_stats::sweep::{PointMetric, SweepAxis, SweepPoint, SweepResult};

use super::Marks;
use crate::doc::{
    num, Axis, Block, Cell, Column, Document, Figure, FigureKind, Note, Point, Scale, Series, Table,
};

/// A point's metric over its runs: geometric mean (the statistic diff
/// tests) and spread; the value itself for one run.
fn center(p: &SweepPoint, m: PointMetric) -> Option<(f64, Option<f64>, Vec<f64>)> {
    let v: Vec<f64> = p.runs.iter().filter_map(|r| m.of(r)).collect();
    match v.len() {
        0 => None,
        1 => Some((v[0], None, v)),
        _ => {
            let c = iolab_stats::geometric_mean(&v).unwrap_or_else(|| {
                let mut s = v.clone();
                s.sort_by(f64::total_cmp);
                iolab_stats::median(&s).unwrap_or(s[0])
            });
            Some((c, num::spread(&v), v))
        }
    }
}

/// A size as fio reads it in a job (`4k` is 4096), for placing a block
/// size on the axis; None for anything else.
pub fn size_value(s: &str) -> Option<f64> {
    let t = s.trim().to_ascii_lowercase();
    let digits: String = t
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let n: f64 = digits.parse().ok()?;
    let unit = t[digits.len()..]
        .trim_end_matches('b')
        .trim_end_matches('i');
    let mult = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n * mult)
}

/// The axis drawn along x: `bs` when swept, else the first axis whose
/// values are all numbers, else the first axis.
fn x_axis(r: &SweepResult) -> Option<usize> {
    if let Some(i) = r
        .axes
        .iter()
        .position(|a| a.name == "bs" && a.values.len() > 1)
    {
        return Some(i);
    }
    r.axes
        .iter()
        .position(|a| a.values.len() > 1 && a.values.iter().all(|v| size_value(v).is_some()))
        .or_else(|| r.axes.iter().position(|a| a.values.len() > 1))
}

fn point_name(r: &SweepResult, p: &SweepPoint) -> String {
    r.axes
        .iter()
        .zip(&p.values)
        .map(|(a, v)| format!("{}={v}", a.name))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Axes whose values change how the I/O is done rather than its shape:
/// with more than one combination of them, each combination is a group of
/// columns and the other axes make the rows, as in published block-size
/// studies.
const MODE_AXES: [&str; 3] = ["rw", "sync", "direct"];

/// One row per point: its axis values, MB/s with a bar, IOPS, p99
/// latency, with repeats each followed by its spread.
fn rows(r: &SweepResult, repeated: bool, point_marks: &[Vec<String>]) -> Table {
    let mut cols: Vec<Column> = r.axes.iter().map(|a| Column::text(&a.name)).collect();
    for (i, (_, name, unit)) in METRICS.iter().enumerate() {
        let c = Column::num(*name, *unit);
        cols.push(if i == 0 { c.with_bar() } else { c });
        if repeated {
            cols.push(Column::num(format!("{name} ±"), "%"));
        }
    }
    let mut t = Table::new("points", cols);
    for (p, m) in r.points.iter().zip(point_marks) {
        let mut row: Vec<Cell> = p.values.iter().map(Cell::text).collect();
        for (metric, _, _) in METRICS {
            let c = center(p, metric);
            row.push(Cell::num(c.as_ref().map(|c| c.0)).marked(if c.is_some() {
                m.clone()
            } else {
                Vec::new()
            }));
            if repeated {
                row.push(match c.and_then(|c| c.1) {
                    Some(s) => Cell::shown(s * 100.0, num::spread_text(s)),
                    None => Cell::text("-"),
                });
            }
        }
        t.rows.push(row);
    }
    t
}

/// Rows are the values of the axes not in `mode`; a group of columns
/// (MB/s, IOPS, p99 latency) per combination of the `mode` axes' values,
/// each cell the point's figure (with its spread over repeats).
fn pivot(r: &SweepResult, mode: &[usize], point_marks: &[Vec<String>]) -> Table {
    let shape: Vec<usize> = (0..r.axes.len()).filter(|i| !mode.contains(i)).collect();
    let key = |p: &SweepPoint, idx: &[usize]| -> Vec<String> {
        idx.iter().map(|&i| p.values[i].clone()).collect()
    };
    let mut columns: Vec<Vec<String>> = Vec::new();
    let mut row_keys: Vec<Vec<String>> = Vec::new();
    for p in &r.points {
        let c = key(p, mode);
        if !columns.contains(&c) {
            columns.push(c);
        }
        let k = key(p, &shape);
        if !row_keys.contains(&k) {
            row_keys.push(k);
        }
    }
    let mut cols: Vec<Column> = shape
        .iter()
        .map(|&i| Column::text(&r.axes[i].name))
        .collect();
    for c in &columns {
        let parts: Vec<String> = mode
            .iter()
            .zip(c)
            .map(|(&i, v)| {
                if r.axes[i].name == "rw" {
                    v.clone()
                } else {
                    format!("{}={v}", r.axes[i].name)
                }
            })
            .collect();
        for (_, name, unit) in METRICS {
            cols.push(Column::num(format!("{} {name}", parts.join(" ")), unit));
        }
    }
    let mut t = Table::new("points", cols);
    for k in &row_keys {
        let mut row: Vec<Cell> = k.iter().map(Cell::text).collect();
        for c in &columns {
            let found = r
                .points
                .iter()
                .zip(point_marks)
                .find(|(p, _)| &key(p, &shape) == k && &key(p, mode) == c);
            for (metric, _, _) in METRICS {
                let cell = found.and_then(|(p, m)| {
                    let (y, spread, _) = center(p, metric)?;
                    let mut text = num::fmt(y);
                    if let Some(s) = spread {
                        text.push(' ');
                        text.push_str(&num::spread_text(s));
                    }
                    Some(Cell::shown(y, text).marked(m.clone()))
                });
                row.push(cell.unwrap_or_else(|| Cell::text("-")));
            }
        }
        t.rows.push(row);
    }
    t
}

/// Every run of every point for a spreadsheet: the axis values, the run's
/// number, bytes, bandwidth in bytes/s, IOPS, latencies in nanoseconds,
/// runtime and the point's warning codes.
fn data_table(r: &SweepResult) -> Table {
    let mut cols: Vec<Column> = r.axes.iter().map(|a| Column::text(&a.name)).collect();
    for c in [
        "run",
        "read_bytes",
        "write_bytes",
        "read_bw_bytes",
        "write_bw_bytes",
        "iops",
        "clat_mean_ns",
        "clat_p99_ns",
        "runtime_ns",
    ] {
        cols.push(Column::num(c, ""));
    }
    cols.push(Column::text("warnings"));
    let mut t = Table::new("runs", cols);
    for p in &r.points {
        let warned: Vec<&str> = p.warnings.iter().map(|w| w.code.as_str()).collect();
        for (i, run) in p.runs.iter().enumerate() {
            let n = |v: f64| Cell::shown(v, "");
            let mut row: Vec<Cell> = p.values.iter().map(Cell::text).collect();
            row.extend([
                n((i + 1) as f64),
                n(run.read_bytes as f64),
                n(run.write_bytes as f64),
                n(run.read_bw),
                n(run.write_bw),
                n(run.iops),
                n(run.clat_mean_ns),
                run.clat_p99_ns
                    .map_or_else(|| Cell::text(""), |v| n(v as f64)),
                n(run.runtime_ns as f64),
                Cell::text(warned.join(";")),
            ]);
            t.rows.push(row);
        }
    }
    t.for_data()
}

const METRICS: [(PointMetric, &str, &str); 3] = [
    (PointMetric::Mbps, "MB/s", "MB/s"),
    (PointMetric::Iops, "IOPS", "IOPS"),
    (PointMetric::P99Us, "p99", "us"),
];

/// The document of a sweep.
pub fn document(r: &SweepResult) -> Document {
    let names: Vec<&str> = r.axes.iter().map(|a| a.name.as_str()).collect();
    let mut d = Document::new(format!("iolab sweep: {}", names.join(" × ")));
    let repeated = r.repeat > 1 || r.points.iter().any(|p| p.runs.len() > 1);
    let mut marks = Marks::default();
    let point_marks: Vec<Vec<String>> = r
        .points
        .iter()
        .map(|p| {
            marks.marks(
                p.warnings
                    .iter()
                    .map(|w| (w.code.as_str(), w.text.as_str())),
                &point_name(r, p),
            )
        })
        .collect();
    let mode: Vec<usize> = r
        .axes
        .iter()
        .enumerate()
        .filter(|(_, a)| MODE_AXES.contains(&a.name.as_str()))
        .map(|(i, _)| i)
        .collect();
    let combos: usize = mode.iter().map(|&i| r.axes[i].values.len()).product();
    let t = if combos > 1 {
        pivot(r, &mode, &point_marks)
    } else {
        rows(r, repeated, &point_marks)
    };
    d.push(Block::Table(t.for_reading()));
    d.push(Block::Table(data_table(r)));
    if let Some(xi) = x_axis(r) {
        for f in figures(r, xi) {
            d.push(Block::Figure(f));
        }
    }
    d.notes(notes(r, &marks, repeated));
    d
}

/// Where each value of an axis sits on the x axis: by bytes (log scale when
/// they span 8x or more) for sizes, else by position.
fn x_positions(axis: &SweepAxis) -> (Vec<f64>, Scale) {
    let sizes: Option<Vec<f64>> = axis.values.iter().map(|v| size_value(v)).collect();
    match sizes {
        Some(v) if v.iter().all(|x| *x > 0.0) => {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            let s = if hi / lo >= 8.0 {
                Scale::Log
            } else {
                Scale::Linear
            };
            (v, s)
        }
        _ => (
            (0..axis.values.len()).map(|i| i as f64).collect(),
            Scale::Linear,
        ),
    }
}

/// The points grouped into one series per combination of the other axes'
/// values (axis `xi` excluded), in order of first appearance.
fn series_by_rest(r: &SweepResult, xi: usize) -> Vec<(String, Vec<&SweepPoint>)> {
    let mut series: Vec<(String, Vec<&SweepPoint>)> = Vec::new();
    for p in &r.points {
        let key: Vec<String> = r
            .axes
            .iter()
            .zip(&p.values)
            .enumerate()
            .filter(|(i, _)| *i != xi)
            .map(|(_, (a, v))| format!("{}={v}", a.name))
            .collect();
        let key = if key.is_empty() {
            "all".to_string()
        } else {
            key.join(" ")
        };
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(p),
            None => series.push((key, vec![p])),
        }
    }
    series
}

/// One line figure per metric against axis `xi` (metrics without points left out).
fn figures(r: &SweepResult, xi: usize) -> Vec<Figure> {
    let axis = &r.axes[xi];
    let (xs, scale) = x_positions(axis);
    let ticks: Vec<(f64, String)> = xs
        .iter()
        .copied()
        .zip(axis.values.iter().cloned())
        .collect();
    let series = series_by_rest(r, xi);
    let mut out = Vec::new();
    for (metric, name, unit) in METRICS {
        let s: Vec<Series> = series
            .iter()
            .map(|(k, pts)| Series {
                name: k.clone(),
                points: pts
                    .iter()
                    .filter_map(|p| {
                        let x = xs[axis.values.iter().position(|v| *v == p.values[xi])?];
                        let (y, _, runs) = center(p, metric)?;
                        let mut pt = Point::at(x, y);
                        if let Some((lo, hi)) = num::interval(&runs) {
                            pt.lo = Some(lo);
                            pt.hi = Some(hi);
                        }
                        pt.label = format!("{} {unit}", num::fmt(y));
                        Some(pt)
                    })
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if s.is_empty() {
            continue;
        }
        let better = if metric == PointMetric::P99Us {
            "lower is better"
        } else {
            "higher is better"
        };
        out.push(Figure {
            title: format!("{name} against {} ({better})", axis.name),
            kind: FigureKind::Lines,
            x: Axis {
                label: axis.name.clone(),
                scale,
                ticks: ticks.clone(),
                categories: Vec::new(),
            },
            y: Axis {
                label: if name == unit {
                    unit.to_string()
                } else {
                    format!("{name} ({unit})")
                },
                scale: if metric == PointMetric::P99Us {
                    Scale::Log
                } else {
                    Scale::Linear
                },
                ..Axis::default()
            },
            series: s,
        });
    }
    out
}

/// The notes under the tables: warning marks, repeats, failure, interruption.
fn notes(r: &SweepResult, marks: &Marks, repeated: bool) -> Vec<Note> {
    let mut notes = marks.notes();
    if repeated {
        notes.push(Note::plain(
            "repeats: each figure is the geometric mean of the point's runs",
        ));
        notes.push(Note::plain(num::SPREAD_MEANING));
    }
    if let Some(o) = &r.repeat_outcome {
        notes.push(Note::plain(format!("repeats: {}", o.describe())));
    }
    if let Some(f) = &r.failure {
        notes.push(Note::plain(format!(
            "failed at point {}: {}; the sweep stopped there",
            f.point, f.message
        )));
    }
    if r.interrupted {
        notes.push(Note::plain(
            "interrupted: the points not listed did not run",
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_are_placed_by_bytes() {
        assert_eq!(size_value("4k"), Some(4096.0));
        assert_eq!(size_value("1M"), Some(1048576.0));
        assert_eq!(size_value("512"), Some(512.0));
        assert_eq!(size_value("64KiB"), Some(65536.0));
        assert_eq!(size_value("read"), None);
    }
}
