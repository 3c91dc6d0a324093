//! The document model of every result kind, from fixed stored results
//! (tests/fixtures/stored, results of iolab quick, quick --repeat 2, meta,
//! sweep, run and compare as the store keeps them): snapshots of the
//! model and of the HTML page, CSV and JSON that parse back to the same
//! numbers, and charts with as many bars and points as the data has.

use iolab_report::doc::{Block, Document, FigureKind};
use iolab_report::export::{export, DocFormat, Style};
use iolab_report::kinds;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/stored/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every fixture as its document.
fn documents() -> Vec<(&'static str, Document)> {
    vec![
        (
            "quick",
            kinds::quick::document(&serde_json::from_str(&fixture("quick")).unwrap()),
        ),
        (
            "quick-repeat",
            kinds::quick::document(&serde_json::from_str(&fixture("quick-repeat")).unwrap()),
        ),
        (
            "meta",
            kinds::meta::document(&serde_json::from_str(&fixture("meta")).unwrap()),
        ),
        (
            "sweep",
            kinds::sweep::document(&serde_json::from_str(&fixture("sweep")).unwrap()),
        ),
        (
            "run",
            kinds::run::document(&serde_json::from_str(&fixture("run")).unwrap()),
        ),
        (
            "compare",
            kinds::compare::document(&serde_json::from_str(&fixture("compare")).unwrap()),
        ),
    ]
}

#[test]
fn document_models() {
    for (name, doc) in documents() {
        insta::assert_json_snapshot!(format!("model-{name}"), doc);
    }
}

#[test]
fn html_pages() {
    for (name, doc) in documents() {
        insta::assert_snapshot!(
            format!("html-{name}"),
            export(&doc, DocFormat::Html, Style::default())
        );
    }
}

#[test]
fn text_tables() {
    for (name, doc) in documents() {
        insta::assert_snapshot!(
            format!("text-{name}"),
            export(&doc, DocFormat::Text, Style::default())
        );
    }
}

#[test]
fn every_kind_has_a_table_and_a_figure() {
    for (name, doc) in documents() {
        assert!(doc.tables().count() >= 1, "{name}: no table");
        assert!(doc.figures().count() >= 1, "{name}: no figure");
    }
}

#[test]
fn json_parses_back_to_the_same_document() {
    for (name, doc) in documents() {
        let text = export(&doc, DocFormat::Json, Style::default());
        let back: Document = serde_json::from_str(&text).unwrap();
        assert_eq!(back, doc, "{name}");
    }
}

#[test]
fn csv_parses_back_to_the_same_numbers() {
    for (name, doc) in documents() {
        let text = export(&doc, DocFormat::Csv, Style::default());
        let blocks: Vec<&str> = text.split("\n\n").collect();
        let tables: Vec<_> = doc.tables().filter(|t| t.shown.data()).collect();
        assert_eq!(
            blocks.len(),
            tables.len(),
            "{name}: one CSV block per table"
        );
        for (block, table) in blocks.iter().zip(tables) {
            let mut r = csv::ReaderBuilder::new().from_reader(block.as_bytes());
            let head = r.headers().unwrap().clone();
            assert_eq!(
                head.get(0),
                Some(table.columns[0].heading().as_str()),
                "{name}"
            );
            let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
            assert_eq!(rows.len(), table.rows.len(), "{name} {}", table.name);
            for (rec, row) in rows.iter().zip(&table.rows) {
                for (i, (col, cell)) in table.columns.iter().zip(row).enumerate() {
                    let got = rec.get(i).unwrap();
                    match cell.value {
                        Some(v) if col.numeric => {
                            assert_eq!(got.parse::<f64>().unwrap(), v, "{name} {}", col.name)
                        }
                        _ if col.numeric && cell.text == "-" => assert_eq!(got, ""),
                        _ => assert_eq!(got, cell.text, "{name} {}", col.name),
                    }
                }
            }
        }
    }
}

/// The bars and points a page must draw: every finite point of its
/// figures.
pub fn expected_marks(doc: &Document) -> (usize, usize) {
    let (mut bars, mut points) = (0, 0);
    for b in &doc.blocks {
        if let Block::Figure(f) = b {
            let n = f
                .series
                .iter()
                .flat_map(|s| &s.points)
                .filter(|p| p.y.is_finite() && p.x.is_finite())
                .count();
            match f.kind {
                FigureKind::Bars => bars += n,
                FigureKind::Lines => points += n,
            }
        }
    }
    (bars, points)
}

#[test]
fn pages_draw_every_bar_and_point_and_name_no_address() {
    for (name, doc) in documents() {
        let html = export(&doc, DocFormat::Html, Style::default());
        let (bars, points) = expected_marks(&doc);
        assert_eq!(html.matches("<rect class=\"bar").count(), bars, "{name}");
        assert_eq!(html.matches("<circle class=\"pt").count(), points, "{name}");
        assert!(bars + points > 0, "{name}");
        for bad in ["http:", "https:", "src=", "<script", "@import", "url("] {
            assert!(!html.contains(bad), "{name}: the page holds {bad}");
        }
    }
}
