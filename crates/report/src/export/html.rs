//! One self-contained HTML page: the style inline, every chart inline
//! SVG, no script and no address outside the page, so that it opens from
//! a USB stick, reads on a phone (tables scroll sideways, charts scale to
//! the width) and prints. Written through maud's templates, which escape
//! every text.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::svg;
use super::Exporter;
use crate::doc::{Block, Cell, Document, Table, Tone};

pub struct Html;

const STYLE: &str = r#"
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--good:#1a7f37;--bad:#cf222e;--warn:#9a6700;--bg:#fff}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:980px;padding:12px}
h1{font-size:1.45em;margin:.6em 0 .2em}h2{font-size:1.2em;margin:1.4em 0 .3em;border-bottom:1px solid var(--line)}h3{font-size:1.05em;margin:1em 0 .3em}
p.meta{color:var(--muted);margin:.2em 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;margin:.4em 0;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);white-space:nowrap}
th{text-align:left;font-weight:600;background:#f6f8fa}
td.num,th.num{text-align:right}
.tone-good{color:var(--good)}.tone-bad{color:var(--bad)}.tone-warn{color:var(--warn)}
sup.mark{color:var(--warn);font-weight:600;margin-left:2px}
figure{margin:.8em 0}figcaption{font-weight:600;margin-bottom:.2em}
svg.chart{width:100%;height:auto;max-width:720px;display:block;font-size:11px}
svg .grid{stroke:#e6e8eb;stroke-width:1}svg .tick{fill:var(--muted)}svg .axis{fill:var(--fg);font-weight:600}
svg .cat{fill:var(--fg)}svg .value{fill:var(--fg)}svg .value.tone-good{fill:var(--good)}svg .value.tone-bad{fill:var(--bad)}svg .value.tone-warn{fill:var(--warn)}
svg .whisker{stroke:#24292f;stroke-width:1.2}
ul.legend{list-style:none;padding:0;margin:.2em 0;display:flex;flex-wrap:wrap;gap:4px 14px}
ul.legend li::before{content:"";display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;background:var(--c)}
ul.notes{padding-left:1.2em;margin:.4em 0}ul.notes li.warning{color:var(--warn)}
details{margin:.6em 0;border:1px solid var(--line);border-radius:6px;padding:4px 10px}summary{cursor:pointer;font-weight:600}
details table td:first-child{color:var(--muted)}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:13px}
@media print{body{max-width:none}details{border:none}details>*{display:block}.scroll{overflow:visible}}
"#;

fn tone(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => "tone-good",
        Tone::Bad => "tone-bad",
        Tone::Warn => "tone-warn",
    }
}

fn cell(c: &Cell, numeric: bool) -> Markup {
    let class = format!("{} {}", if numeric { "num" } else { "" }, tone(c.tone));
    html! {
        td class=(class.trim()) {
            (c.text)
            @for m in &c.marks { sup class="mark" { (m) } }
        }
    }
}

fn table(t: &Table) -> Markup {
    html! {
        div class="scroll" {
            table data-name=(t.name) {
                thead { tr { @for c in &t.columns { th class=[c.numeric.then_some("num")] { (c.heading()) } } } }
                tbody {
                    @for r in &t.rows {
                        tr { @for (i, c) in t.columns.iter().enumerate() {
                            @let empty = Cell::default();
                            (cell(r.get(i).unwrap_or(&empty), c.numeric))
                        } }
                    }
                }
            }
        }
    }
}

fn block(b: &Block) -> Markup {
    match b {
        Block::Heading { level, text } => match level {
            0 | 1 => html! { h2 { (text) } },
            _ => html! { h3 { (text) } },
        },
        Block::Paragraph { text } => html! { p class="meta" { (text) } },
        Block::Table(t) if !t.shown.read() => html! {},
        Block::Table(t) => table(t),
        Block::Figure(f) => html! {
            figure data-kind=(match f.kind { crate::doc::FigureKind::Bars => "bars", crate::doc::FigureKind::Lines => "lines" }) {
                figcaption { (f.title) }
                @if f.series.len() > 1 || f.kind == crate::doc::FigureKind::Lines {
                    ul class="legend" {
                        @for (i, s) in f.series.iter().enumerate() {
                            li style={"--c:" (svg::colour(i))} { (s.name) }
                        }
                    }
                }
                (svg::figure(f))
            }
        },
        Block::Notes { notes } => html! {
            ul class="notes" {
                @for n in notes {
                    li class=[n.warning.then_some("warning")] {
                        @if !n.mark.is_empty() { strong { (n.mark) } " " }
                        (n.text)
                    }
                }
            }
        },
        Block::Provenance { pairs } => html! {
            details class="provenance" {
                summary { "Where and how it was measured" }
                div class="scroll" { table { tbody {
                    @for (k, v) in pairs { tr { td { (k) } td { (v) } } }
                } } }
            }
        },
        Block::Preformatted { caption, text } => html! {
            details class="job" {
                summary { (caption) }
                pre { (text) }
            }
        },
    }
}

impl Exporter for Html {
    fn export(&self, doc: &Document) -> String {
        let page = html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width, initial-scale=1";
                    title { (doc.title) }
                    style { (PreEscaped(STYLE)) }
                }
                body {
                    h1 { (doc.title) }
                    @for b in &doc.blocks { (block(b)) }
                    p class="meta" { "Made by " (concat!("iolab ", env!("CARGO_PKG_VERSION"))) "." }
                }
            }
        };
        let mut s = page.into_string();
        s.push('\n');
        s
    }
}
