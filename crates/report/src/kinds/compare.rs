//! A comparison as a document: the workloads' table (rows are metrics,
//! columns targets: the geometric mean of each cell's runs, its spread,
//! the ratio to the baseline with its verdict, the best of a row marked),
//! the same for mkfs and mount times, capacity and the device, and bar
//! charts of each measure with one colour per target, the runs' interval
//! as whiskers and the verdict against the baseline beside each bar. The
//! statistics are the stats crate's (`Comparison::verdicts`); this only
//! words them.

use iolab_stats::{Better, Comparison, ComparisonVerdicts, Metric, TargetColumn, Verdict};

use super::Marks;
use crate::doc::{
    num, Axis, Block, Cell, Column, Document, Figure, FigureKind, Note, Point, Series, Table, Tone,
};

/// The verdict of column `i` against the baseline in row `m`, when there
/// is a baseline other than `i`.
fn verdict(c: &Comparison, v: &ComparisonVerdicts, m: &Metric, i: usize) -> Option<Verdict> {
    let base = c.baseline_index().filter(|&b| b != i)?;
    c.ratio(&m.key, i)?;
    Some(
        v.against(&m.key, base, i)
            .map_or(Verdict::NoTest, |p| p.verdict),
    )
}

/// A verdict in a word or two, and its tone.
fn short(verdict: &Verdict, better: Better) -> (&'static str, Tone) {
    match (verdict.b_is_better(better), verdict) {
        (Some(true), _) => (
            if better == Better::Lower {
                "faster"
            } else {
                "better"
            },
            Tone::Good,
        ),
        (Some(false), _) => (
            if better == Better::Lower {
                "slower"
            } else {
                "worse"
            },
            Tone::Bad,
        ),
        (None, Verdict::Larger { .. }) => ("higher", Tone::Plain),
        (None, Verdict::Smaller { .. }) => ("lower", Tone::Plain),
        (None, Verdict::Same { .. }) => ("≈ same", Tone::Plain),
        // A fact (a capacity) measured once: the ratio says it all.
        _ if better == Better::Neither => ("", Tone::Plain),
        _ => ("cannot tell", Tone::Warn),
    }
}

/// Which table a row belongs to.
fn group(m: &Metric) -> &'static str {
    if m.key.contains('.') {
        return "Workloads";
    }
    match m.unit.as_str() {
        "s" | "ms" => "mkfs and mount",
        "MiB" | "count" | "GiB" | "bytes" => "Capacity after mkfs",
        _ => "Device and other facts",
    }
}

const GROUPS: [&str; 4] = [
    "mkfs and mount",
    "Capacity after mkfs",
    "Device and other facts",
    "Workloads",
];

/// A workload row's name: `seqwrite-1m write clat p99` from its label.
fn row_name(m: &Metric) -> String {
    m.label.clone()
}

fn cell(c: &Comparison, v: &ComparisonVerdicts, marks: &mut Marks, m: &Metric, i: usize) -> Cell {
    let t = &c.targets[i];
    let (Some(cell), Some(center)) = (t.value(&m.key), c.center(&m.key, i)) else {
        return Cell::text("-");
    };
    let mut text = num::fmt(center);
    if let Some(s) = num::spread(&cell.runs) {
        text.push(' ');
        text.push_str(&num::spread_text(s));
    }
    // Runs that spread over more than 10% of their median: worth a look
    // whatever the verdict.
    let mut tone = if cell.noisy() {
        Tone::Warn
    } else {
        Tone::Plain
    };
    if let (Some(r), Some(vd)) = (c.ratio(&m.key, i), verdict(c, v, m, i)) {
        let (word, t) = short(&vd, m.better);
        text.push_str(format!(" x{r:.2} {word}").trim_end());
        tone = t;
    }
    if v.is_best(&m.key, i) {
        text = format!("*{text}");
        if tone == Tone::Plain {
            tone = Tone::Good;
        }
    }
    let at = format!("{} {}", t.label, comparison_family(&m.key));
    let texts: Vec<(String, String)> = cell
        .warnings
        .iter()
        .map(|code| {
            let text = c
                .warnings
                .iter()
                .find(|w| &w.code == code)
                .map(|w| w.text.clone())
                .unwrap_or_default();
            (code.clone(), text)
        })
        .collect();
    let mk = marks.marks(texts.iter().map(|(a, b)| (a.as_str(), b.as_str())), &at);
    Cell::shown(center, text).marked(mk).tone(tone)
}

fn comparison_family(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

/// The document of a comparison.
pub fn document(c: &Comparison) -> Document {
    let labels: Vec<&str> = c.targets.iter().map(|t| t.label.as_str()).collect();
    let mut d = Document::new(format!("iolab compare: {}", labels.join(" vs ")));
    // Each target: how it was made (or why it was skipped), and why it
    // failed.
    for t in &c.targets {
        let base = if c.baseline.as_deref() == Some(t.label.as_str()) {
            " (baseline)"
        } else {
            ""
        };
        match &t.skipped {
            Some(r) => d.paragraph(format!("{}{base}: skipped: {r}", t.label)),
            None if !t.description.is_empty() => {
                d.paragraph(format!("{}{base}: {}", t.label, t.description))
            }
            None => d.paragraph(format!("{}{base}", t.label)),
        };
        if let (None, Some(r)) = (&t.skipped, &t.failed) {
            d.paragraph(format!("{}: failed: {r}", t.label));
        }
    }
    let v = c.verdicts();
    let mut marks = Marks::default();
    for g in GROUPS {
        let rows: Vec<&Metric> = c.metrics.iter().filter(|m| group(m) == g).collect();
        if rows.is_empty() {
            continue;
        }
        d.heading(2, g);
        let mut cols = vec![Column::text("metric"), Column::text("unit")];
        for t in &c.targets {
            let mut col = Column::num(&t.label, "");
            if c.baseline.as_deref() == Some(t.label.as_str()) {
                col.name.push_str(" (baseline)");
            }
            cols.push(col);
        }
        let mut table = Table::new(g.to_lowercase().replace(' ', "_"), cols);
        for m in &rows {
            let mut row = vec![Cell::text(row_name(m)), Cell::text(&m.unit)];
            for i in 0..c.targets.len() {
                row.push(cell(c, &v, &mut marks, m, i));
            }
            table.rows.push(row);
        }
        d.push(Block::Table(table.for_reading().with_row_bars()));
        for f in figures(c, &v, &mut marks, &rows) {
            d.push(Block::Figure(f));
        }
    }
    d.push(Block::Table(data_table(c, &v)));
    let mut notes = marks.notes();
    let mut legend = format!(
        "each cell: the geometric mean of {} run(s)",
        c.repeat.max(1)
    );
    if c.repeat > 1 {
        legend.push_str(&format!(" with its spread ({})", num::SPREAD_MEANING));
    }
    legend.push_str("; * best of the row: better than every other target beyond the noise");
    let facts: Vec<&str> = c
        .metrics
        .iter()
        .filter(|m| m.better == Better::Neither)
        .map(|m| m.label.as_str())
        .collect();
    if !facts.is_empty() {
        legend.push_str(&format!(
            "; no best in rows that are facts, not scores ({})",
            facts.join(", ")
        ));
    }
    if let Some(b) = &c.baseline {
        match c.baseline_index().map(|i| &c.targets[i]) {
            Some(t) if t.skipped.is_some() => {
                legend.push_str(&format!("; no ratios: the baseline {b} was skipped"));
            }
            Some(t) if t.failed.is_some() && t.values.is_empty() => {
                legend.push_str(&format!("; no ratios: the baseline {b} failed"));
            }
            base => {
                let failed = if base.is_some_and(|t| t.failed.is_some()) {
                    ", which failed: only the rows it has"
                } else {
                    ""
                };
                legend.push_str(&format!(
                    "; xN: the ratio to {b}{failed}, with the verdict (faster or better, slower \
                     or worse, ≈ same: cannot be told apart, cannot tell: too few runs"
                ));
                if !facts.is_empty() {
                    legend.push_str("; higher or lower: a fact's row differs beyond the noise");
                }
                legend.push(')');
            }
        }
    }
    notes.push(Note::plain(legend));
    notes.push(Note::plain(format!(
        "verdicts: {} on each cell's runs, {:.0}% level, Holm-corrected over the rows of each \
         workload{}",
        v.method,
        v.alpha * 100.0,
        if c.repeat <= 1 {
            "; one run each cannot tell a difference from noise: use --repeat 3 or more"
        } else {
            ""
        }
    )));
    notes.extend(c.notes.iter().map(Note::plain));
    if c.interrupted {
        notes.push(Note::plain("interrupted: the numbers are partial"));
    }
    d.notes(notes);
    d
}

fn status(t: &TargetColumn) -> &'static str {
    match (&t.skipped, &t.failed) {
        (Some(_), _) => "skipped",
        (None, Some(_)) => "failed",
        _ => "ok",
    }
}

/// The CSV columns of the long form.
pub const CSV_COLUMNS: [&str; 17] = [
    "key",
    "metric",
    "unit",
    "target",
    "status",
    "geomean",
    "min",
    "max",
    "runs",
    "best",
    "ratio",
    "ratio_low",
    "ratio_high",
    "verdict",
    "p",
    "note",
    "warnings",
];

/// The comparison in long form for a spreadsheet: a line per target
/// that was skipped or failed, then one per metric and target with the
/// geometric mean, min, max and number of runs, whether it is the best of
/// its row, the ratio to the baseline with its interval, the verdict and
/// its p-value, and the cell's warning codes.
fn data_table(c: &Comparison, v: &ComparisonVerdicts) -> Table {
    let cols = CSV_COLUMNS
        .iter()
        .enumerate()
        .map(|(i, name)| match i {
            5..=12 | 14 => Column::num(*name, ""),
            _ => Column::text(*name),
        })
        .collect();
    let mut t = Table::new("cells", cols);
    let n = |x: f64| Cell::shown(x, "");
    let opt = |x: Option<f64>| x.map_or_else(|| Cell::text(""), n);
    let none = || Cell::text("");
    for tc in c
        .targets
        .iter()
        .filter(|t| t.skipped.is_some() || t.failed.is_some())
    {
        let note = tc.skipped.as_deref().or(tc.failed.as_deref()).unwrap_or("");
        let mut row = vec![
            Cell::text("status"),
            Cell::text("status"),
            none(),
            Cell::text(&tc.label),
            Cell::text(status(tc)),
            none(),
            none(),
            none(),
            n(0.0),
        ];
        row.extend((0..6).map(|_| none()));
        row.push(Cell::text(note));
        row.push(none());
        t.rows.push(row);
    }
    for m in &c.metrics {
        for (i, tc) in c.targets.iter().enumerate() {
            let Some(cell) = tc.value(&m.key) else {
                continue;
            };
            let pair = c
                .baseline_index()
                .filter(|&b| b != i)
                .and_then(|b| v.against(&m.key, b, i));
            let interval = pair.and_then(|p| p.test.as_ref()?.interval);
            t.rows.push(vec![
                Cell::text(&m.key),
                Cell::text(&m.label),
                Cell::text(&m.unit),
                Cell::text(&tc.label),
                Cell::text(status(tc)),
                opt(c.center(&m.key, i)),
                opt(cell.min()),
                opt(cell.max()),
                n(cell.runs.len() as f64),
                n(f64::from(u8::from(v.is_best(&m.key, i)))),
                opt(c.ratio(&m.key, i)),
                opt(interval.map(|x| x.0)),
                opt(interval.map(|x| x.1)),
                Cell::text(pair.map_or(String::new(), |p| p.verdict.words(m.better))),
                opt(pair.and_then(|p| p.verdict.p())),
                none(),
                Cell::text(cell.warnings.join(";")),
            ]);
        }
    }
    t.for_data()
}

/// Every run's value, one row per metric and target (`compare
/// --show-runs`): a difference between run 1 and the later runs (a cache
/// warming up) is a finding of its own.
pub fn runs_document(c: &Comparison) -> Document {
    let n = c
        .targets
        .iter()
        .flat_map(|t| t.values.iter().map(|(_, cell)| cell.runs.len()))
        .max()
        .unwrap_or(0);
    let mut cols = vec![
        Column::text("metric"),
        Column::text("unit"),
        Column::text("target"),
    ];
    cols.extend((1..=n).map(|i| Column::num(format!("run {i}"), "")));
    let mut t = Table::new("runs", cols);
    for m in &c.metrics {
        for tc in &c.targets {
            let Some(cell) = tc.value(&m.key) else {
                continue;
            };
            let mut row = vec![
                Cell::text(&m.label),
                Cell::text(&m.unit),
                Cell::text(&tc.label),
            ];
            row.extend(cell.runs.iter().map(|x| Cell::num(Some(*x))));
            row.resize(n + 3, Cell::text(""));
            t.rows.push(row);
        }
    }
    let mut d = Document::new("");
    d.heading(2, "Every run");
    d.push(Block::Table(t.for_reading()));
    d
}

/// The bar charts of some rows: one per unit and kind of measure (the
/// MB/s of every workload together, their p99 latencies together, ...),
/// one bar per target.
fn figures(
    c: &Comparison,
    v: &ComparisonVerdicts,
    marks: &mut Marks,
    rows: &[&Metric],
) -> Vec<Figure> {
    let mut out = Vec::new();
    for (_, ms) in drawn_together(rows) {
        let measured: Vec<usize> = (0..c.targets.len())
            .filter(|&i| c.targets[i].skipped.is_none())
            .collect();
        let mut series: Vec<Series> = Vec::new();
        for &i in &measured {
            series.push(target_series(c, v, marks, &ms, i));
        }
        if series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        out.push(Figure {
            title: figure_title(&ms),
            kind: FigureKind::Bars,
            x: Axis {
                label: "workload".into(),
                categories: ms
                    .iter()
                    .map(|m| {
                        if m.key.contains('.') {
                            let mut parts = m.key.split('.');
                            format!(
                                "{} {}",
                                parts.next().unwrap_or(""),
                                parts.next().unwrap_or("")
                            )
                        } else {
                            m.label.clone()
                        }
                    })
                    .collect(),
                ..Axis::default()
            },
            y: Axis {
                label: ms[0].unit.clone(),
                ..Axis::default()
            },
            series,
        });
    }
    out
}

/// Rows drawn together: same unit and same last key part, in order of first
/// appearance.
fn drawn_together<'a>(rows: &[&'a Metric]) -> Vec<(String, Vec<&'a Metric>)> {
    let mut sets: Vec<(String, Vec<&Metric>)> = Vec::new();
    for m in rows {
        let what = m.key.rsplit('.').next().unwrap_or(&m.key);
        let key = if m.key.contains('.') {
            format!("{}|{what}", m.unit)
        } else {
            m.unit.clone()
        };
        match sets.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(m),
            None => sets.push((key, vec![m])),
        }
    }
    sets
}

/// The bars of target `i` over a set of rows, labelled with the value, the
/// ratio to the baseline and its verdict, and marked with its warnings.
fn target_series(
    c: &Comparison,
    v: &ComparisonVerdicts,
    marks: &mut Marks,
    ms: &[&Metric],
    i: usize,
) -> Series {
    let t = &c.targets[i];
    Series {
        name: t.label.clone(),
        points: ms
            .iter()
            .enumerate()
            .filter_map(|(x, m)| {
                let center = c.center(&m.key, i)?;
                let cell = t.value(&m.key)?;
                let mut p = Point::at(x as f64, center);
                if let Some((lo, hi)) = num::interval(&cell.runs) {
                    p.lo = Some(lo);
                    p.hi = Some(hi);
                }
                p.label = if m.unit == "count" {
                    num::fmt(center)
                } else {
                    format!("{} {}", num::fmt(center), m.unit)
                };
                if let (Some(r), Some(vd)) = (c.ratio(&m.key, i), verdict(c, v, m, i)) {
                    let (word, tone) = short(&vd, m.better);
                    p.label.push_str(format!(" x{r:.2} {word}").trim_end());
                    p.tone = tone;
                }
                p.marks = cell
                    .warnings
                    .iter()
                    .map(|code| marks.mark(code, "", ""))
                    .collect();
                Some(p)
            })
            .collect(),
    }
}

/// The title of a set's figure: the row itself, or what the rows measure.
fn figure_title(ms: &[&Metric]) -> String {
    let better = match ms[0].better {
        Better::Higher => " (higher is better)",
        Better::Lower => " (lower is better)",
        Better::Neither => "",
    };
    if ms.len() == 1 {
        return format!("{} ({}){better}", ms[0].label, ms[0].unit);
    }
    let what = ms[0].key.rsplit('.').next().unwrap_or("");
    let what = match what {
        "mb_s" => "throughput".to_string(),
        "iops" => "I/O operations per second".to_string(),
        w if w.starts_with("clat_") => {
            format!(
                "{} completion latency",
                w.trim_start_matches("clat_").trim_end_matches("_us")
            )
        }
        _ if !ms[0].key.contains('.') => ms
            .iter()
            .map(|m| m.label.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        w => w.to_string(),
    };
    format!("{what} ({}){better}", ms[0].unit)
}
