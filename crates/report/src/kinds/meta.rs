//! The metadata pass as a document: what ran where, one row per phase
//! (operations, total ms, operations per second with a bar, mean, p50 and
//! p99 latency in microseconds), a bar chart of operations per second, and
//! for a repeated pass each phase's geometric mean over the runs with its
//! spread; under MPI, the ranks: each rank's operations per second per
//! phase above the merged line. readdir's latency is one getdents64
//! call's time shared among the entries it returned: its row gives the
//! mean per entry and no percentiles, and says so.

use iolab_stats::meta::{MetaPhase, MetaPhaseKind, MetaResult};
use iolab_stats::ranks::MetaRanks;

use crate::doc::{
    num, Axis, Block, Cell, Column, Document, Figure, FigureKind, Note, Point, Series, Table,
};
use crate::meta::describe;

const READDIR_MARK: &str = "r";

fn row(p: &MetaPhase) -> Vec<Cell> {
    let us = |v: Option<u64>| Cell::num(v.map(|ns| ns as f64 / 1e3));
    let mean = (p.lat.count() > 0).then(|| p.lat.moments.mean() / 1e3);
    let mut cells = vec![
        Cell::text(p.phase.name()),
        Cell::shown(p.ops as f64, num::count(p.ops)),
        Cell::num(Some(p.elapsed_ns as f64 / 1e6)),
        Cell::num(Some(p.ops_per_sec())),
        Cell::num(mean),
    ];
    if p.phase == MetaPhaseKind::Readdir {
        cells[4] = cells[4].clone().marked(vec![READDIR_MARK.into()]);
        cells.push(Cell::text("-"));
        cells.push(Cell::text("-"));
    } else {
        cells.push(us(p.percentile_ns(50.0)));
        cells.push(us(p.percentile_ns(99.0)));
    }
    cells
}

/// Every phase for a spreadsheet, times in nanoseconds, with the setup
/// on each line (columns of `crate::meta::CSV_HEADER`).
fn data_table(r: &MetaResult) -> Table {
    let s = &r.setup.options;
    let text = [0, 17];
    let cols = crate::meta::CSV_HEADER
        .split(',')
        .enumerate()
        .map(|(i, c)| {
            if text.contains(&i) {
                Column::text(c)
            } else {
                Column::num(c, "")
            }
        })
        .collect();
    let mut t = Table::new("phases_data", cols);
    let n = |v: f64| Cell::shown(v, "");
    let opt = |v: Option<u64>| v.map_or_else(|| Cell::text(""), |x| n(x as f64));
    for p in &r.phases {
        t.rows.push(vec![
            Cell::text(p.phase.name()),
            n(p.ops as f64),
            n(p.elapsed_ns as f64),
            n(p.per_op_ns()),
            n(p.ops_per_sec()),
            n(p.lat.moments.mean()),
            opt(p.lat.moments.min()),
            opt(p.lat.moments.max()),
            opt(p.percentile_ns(50.0)),
            opt(p.percentile_ns(99.0)),
            n(s.files as f64),
            n(s.dirs as f64),
            n(s.depth as f64),
            n(s.file_size as f64),
            n(s.threads as f64),
            n(f64::from(u8::from(s.fsync))),
            n(f64::from(u8::from(s.cold))),
            Cell::text(&r.setup.fs_type),
        ]);
    }
    t.for_data()
}

/// Under MPI: the ranks and hosts, and a table of each rank's operations
/// per second in each phase (its operations over its own time) above the
/// merged line (every rank's operations over the phase's wall time across
/// ranks, mdtest's rate).
fn ranks_table(d: &mut Document, r: &MetaResult, ranks: &MetaRanks) {
    let mut hosts: Vec<&str> = Vec::new();
    for h in &ranks.hosts {
        if !hosts.contains(&h.as_str()) {
            hosts.push(h);
        }
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let n = ranks.nranks as usize;
    d.paragraph(format!(
        "MPI: {n} rank{} on {} host{} ({}), {}; each phase started on every rank after a \
         barrier (start skew: {})",
        plural(n),
        hosts.len(),
        plural(hosts.len()),
        hosts.join(", "),
        if ranks.shared_dir {
            "all in one shared directory"
        } else {
            "each in a directory of its own"
        },
        ranks
            .start_skew_ns
            .iter()
            .zip(&r.phases)
            .map(|(ns, p)| format!("{} {}", p.phase.name(), num::fmt(*ns as f64 / 1e3)))
            .collect::<Vec<_>>()
            .join(", ")
            + " us"
    ));
    let mut columns = vec![Column::text("rank"), Column::text("host")];
    columns.extend(
        r.phases
            .iter()
            .map(|p| Column::num(format!("{} ops/s", p.phase.name()), "ops/s")),
    );
    let mut t = Table::new("ranks", columns);
    for (rank, host) in ranks.hosts.iter().enumerate() {
        let mut cells = vec![Cell::text(rank.to_string()), Cell::text(host.clone())];
        for p in 0..r.phases.len() {
            let ops = ranks.ops.get(rank).and_then(|o| o.get(p)).copied();
            let ns = ranks.elapsed_ns.get(rank).and_then(|e| e.get(p)).copied();
            cells.push(match (ops, ns) {
                (Some(0), _) => Cell::text("-"),
                (Some(o), Some(ns)) if ns > 0 => Cell::num(Some(o as f64 * 1e9 / ns as f64)),
                _ => Cell::num(None),
            });
        }
        t.rows.push(cells);
    }
    let mut all = vec![Cell::text("all"), Cell::text("")];
    all.extend(r.phases.iter().map(|p| Cell::num(Some(p.ops_per_sec()))));
    t.rows.push(all);
    d.push(Block::Table(t));
}

/// The document of a metadata result.
pub fn document(r: &MetaResult) -> Document {
    let mut d = Document::new(format!("iolab meta: {}", r.setup.options.dir.display()));
    d.paragraph(describe(r));
    let mut t = Table::new(
        "phases",
        vec![
            Column::text("phase"),
            Column::num("ops", ""),
            Column::num("total", "ms"),
            Column::num("ops/s", "ops/s").with_bar(),
            Column::num("mean", "us"),
            Column::num("p50", "us"),
            Column::num("p99", "us"),
        ],
    );
    t.rows = r.phases.iter().map(row).collect();
    d.push(Block::Table(t.for_reading()));
    d.push(Block::Table(data_table(r)));
    if let Some(ranks) = &r.ranks {
        ranks_table(&mut d, r, ranks);
    }
    if !r.phases.is_empty() {
        let runs = r.ops_per_sec_runs();
        d.push(Block::Figure(Figure {
            title: "Operations per second by phase (higher is better)".into(),
            kind: FigureKind::Bars,
            x: Axis {
                label: "phase".into(),
                categories: r
                    .phases
                    .iter()
                    .map(|p| p.phase.name().to_string())
                    .collect(),
                ..Axis::default()
            },
            y: Axis {
                label: "operations/s".into(),
                ..Axis::default()
            },
            series: vec![Series {
                name: "ops/s".into(),
                points: r
                    .phases
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let mut pt = Point::at(i as f64, p.ops_per_sec());
                        if let Some((lo, hi)) = runs
                            .iter()
                            .find(|(k, _)| *k == p.phase)
                            .and_then(|(_, v)| num::interval(v))
                        {
                            pt.lo = Some(lo);
                            pt.hi = Some(hi);
                        }
                        pt.label = format!("{} ops/s", num::fmt(p.ops_per_sec()));
                        pt
                    })
                    .collect(),
            }],
        }));
    }
    let mut notes = Vec::new();
    if r.phases.iter().any(|p| p.phase == MetaPhaseKind::Readdir) {
        notes.push(Note {
            mark: READDIR_MARK.into(),
            text: "readdir: each getdents64 call's time divided evenly among the entries it \
                   returned: a mean per entry, not a distribution, so no percentiles"
                .into(),
            warning: false,
        });
    }
    if let Some(o) = &r.repeat {
        notes.push(Note::plain(format!(
            "repeats: {}; the table shows the median run (by total time)",
            o.describe()
        )));
        for (kind, values) in r.ops_per_sec_runs() {
            let gm = iolab_stats::geometric_mean(&values).unwrap_or(0.0);
            let spread = num::spread(&values)
                .map(|s| format!(" {}", num::spread_text(s)))
                .unwrap_or_default();
            notes.push(Note::plain(format!(
                "{kind} ops/s over {} runs: geometric mean {}{spread}",
                values.len(),
                num::fmt(gm)
            )));
        }
        notes.push(Note::plain(num::SPREAD_MEANING));
    }
    if let Some(why) = &r.failure {
        notes.push(Note::plain(format!(
            "stopped: {why}; {}",
            if r.phases.is_empty() {
                "no phase finished"
            } else {
                "the phases above finished"
            }
        )));
    }
    d.notes(notes);
    d
}
