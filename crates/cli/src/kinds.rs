//! Every kind of stored result behind one trait, [`ResultKind`]: its
//! document (what every table format and HTML render), the formats it
//! takes, its own renderings (fio's formats for a run, the result's data
//! as JSON), and the headline `history` prints. `show`, `diff`, `export`
//! and `report` dispatch through it: a new kind is one implementation
//! here and a line in [`load`].

use anyhow::{Context as _, Result};
use iolab_report::doc::{pairs_of, Block, Document};
use iolab_report::export::{export, DocFormat, Style};
use iolab_report::{kinds, render, Format, RenderOpts};
use iolab_store::{Kind, Metric, Record, Stored};

use crate::outargs::OutputFormat;

/// A stored result of one kind, read back.
pub trait ResultKind {
    fn kind(&self) -> Kind;
    /// The result as a document.
    fn document(&self) -> Document;
    /// The formats `show` takes for this kind, the default first.
    fn formats(&self) -> &'static [OutputFormat];
    /// A rendering of the kind's own (fio's formats, the data as JSON);
    /// None where the document's exporter serves.
    fn own(&self, format: OutputFormat) -> Option<String>;
}

const TABLE_FORMATS: &[OutputFormat] = &[
    OutputFormat::Table,
    OutputFormat::Markdown,
    OutputFormat::Csv,
    OutputFormat::Json,
    OutputFormat::Html,
    OutputFormat::Record,
];

const RUN_FORMATS: &[OutputFormat] = &[
    OutputFormat::Normal,
    OutputFormat::Json,
    OutputFormat::JsonPlus,
    OutputFormat::Terse,
    OutputFormat::Table,
    OutputFormat::Markdown,
    OutputFormat::Csv,
    OutputFormat::Html,
    OutputFormat::Record,
];

/// A run: fio's formats with the render options it was printed with;
/// a repeated run with every run, as `run --repeat` printed them.
pub struct RunKind {
    pub result: iolab_stats::RunResult,
    pub opts: RenderOpts,
    /// Every run of a repeat, in order (empty for one run).
    pub runs: Vec<iolab_stats::RunResult>,
    /// What was done between the runs (caches dropped, ...).
    pub caches: String,
    pub outcome: Option<iolab_stats::RepeatOutcome>,
    /// fio's "Laying out IO file" lines the run printed in normal output
    /// between the preamble and the results.
    pub layout: String,
}

impl RunKind {
    /// What `run --repeat` printed after its runs, in `f`.
    fn repeated(&self, f: Format) -> String {
        let runs = &self.runs;
        let figs = iolab_stats::repeated::repeat_figures(runs);
        let mut out = String::new();
        match f {
            Format::Normal => {
                for (i, r) in runs.iter().enumerate() {
                    out.push_str(&format!(
                        "\niolab: run {} of {}\n{}",
                        i + 1,
                        runs.len(),
                        render(r, &self.opts, f)
                    ));
                }
                out.push_str(&iolab_report::repeats::repeats_text(
                    &figs,
                    runs.len(),
                    &self.caches,
                ));
                if let Some(o) = &self.outcome {
                    out.push_str(&format!("repeats: {}\n", o.describe()));
                }
            }
            Format::Terse => {
                for r in runs {
                    out.push_str(&render(r, &self.opts, f));
                }
            }
            Format::Json | Format::JsonPlus => out.push_str(&iolab_report::repeats::repeats_json(
                &figs,
                &self.caches,
                runs,
                &self.opts,
                f == Format::JsonPlus,
                self.outcome.as_ref(),
            )),
        }
        out
    }
}

/// A run's result as stored: its fio result with, beside it, the render
/// options it was printed with (`iolab_render`) and, for a repeat, every
/// run and what was done between them (`iolab_runs`, `iolab_caches`), so
/// that `show` prints what the run printed.
pub fn run_record_json(
    result: &iolab_stats::RunResult,
    opts: &RenderOpts,
    runs: &[iolab_stats::RunResult],
    caches: &str,
    layout: &str,
) -> serde_json::Result<String> {
    let mut v = serde_json::to_value(result)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "iolab_render".into(),
            serde_json::json!({
                "version": opts.version,
                "kb_base": opts.kb_base,
                "unit_base": match opts.unit_base {
                    iolab_report::UnitBase::Bits => "bits",
                    iolab_report::UnitBase::Bytes => "bytes",
                },
                "sig_figs": opts.sig_figs,
                "utc_offset_s": opts.utc_offset_s,
            }),
        );
        if !layout.is_empty() {
            obj.insert("iolab_layout".into(), layout.into());
        }
        if runs.len() > 1 {
            obj.insert("iolab_runs".into(), serde_json::to_value(runs)?);
            obj.insert("iolab_caches".into(), caches.into());
        }
    }
    serde_json::to_string(&v)
}

impl ResultKind for RunKind {
    fn kind(&self) -> Kind {
        Kind::Run
    }
    fn document(&self) -> Document {
        kinds::run::document(&self.result)
    }
    fn formats(&self) -> &'static [OutputFormat] {
        RUN_FORMATS
    }
    fn own(&self, format: OutputFormat) -> Option<String> {
        let f = match format {
            OutputFormat::Normal => Format::Normal,
            OutputFormat::Json => Format::Json,
            OutputFormat::JsonPlus => Format::JsonPlus,
            OutputFormat::Terse => Format::Terse,
            _ => return None,
        };
        let body = if self.runs.len() > 1 {
            self.repeated(f)
        } else {
            render(&self.result, &self.opts, f)
        };
        // The lines fio's normal text prints before the jobs start (what
        // each job is, the version, the thread count), as the run did.
        if f == Format::Normal {
            let first = self.runs.first().unwrap_or(&self.result);
            return Some(
                iolab_report::render_preamble(&first.jobs, &self.opts) + &self.layout + &body,
            );
        }
        Some(body)
    }
}

macro_rules! table_kind {
    ($name:ident, $ty:ty, $kind:expr, $doc:path, $own:expr) => {
        pub struct $name(pub $ty);

        impl ResultKind for $name {
            fn kind(&self) -> Kind {
                $kind
            }
            fn document(&self) -> Document {
                $doc(&self.0)
            }
            fn formats(&self) -> &'static [OutputFormat] {
                TABLE_FORMATS
            }
            fn own(&self, format: OutputFormat) -> Option<String> {
                let own: fn(&$ty, OutputFormat) -> Option<String> = $own;
                own(&self.0, format)
            }
        }
    };
}

/// A table kind's own rendering: its data as JSON, what the measuring
/// command printed with `--output-format json`. Every other format is the
/// kind's document through the format's exporter, as the measuring
/// command printed it.
fn data_json(f: OutputFormat) -> Option<DocFormat> {
    (f == OutputFormat::Json).then_some(DocFormat::Json)
}

table_kind!(
    QuickKind,
    iolab_stats::quick::QuickResult,
    Kind::Quick,
    kinds::quick::document,
    |q, f| data_json(f).map(|f| iolab_report::quick::render_quick(q, f))
);
table_kind!(
    CompareKind,
    iolab_stats::Comparison,
    Kind::Compare,
    kinds::compare::document,
    |c, f| data_json(f).map(|f| iolab_report::compare::render_comparison(c, f))
);
table_kind!(
    MetaKind,
    iolab_stats::meta::MetaResult,
    Kind::Meta,
    kinds::meta::document,
    |m, f| data_json(f).map(|f| iolab_report::meta::render_meta(m, f))
);
table_kind!(
    SweepKind,
    iolab_stats::sweep::SweepResult,
    Kind::Sweep,
    kinds::sweep::document,
    |s, f| data_json(f).map(|f| iolab_report::sweep::render_sweep(s, f))
);

/// The render options a run was printed with, when the record kept
/// them; fio's defaults otherwise.
pub fn render_opts(s: &Stored) -> RenderOpts {
    let mut opts = RenderOpts {
        provenance: serde_json::to_value(&s.record.provenance).ok(),
        ..RenderOpts::default()
    };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&s.record.result_json) {
        if let Some(r) = v.get("iolab_render") {
            if let Some(k) = r.get("kb_base").and_then(|x| x.as_u64()) {
                opts.kb_base = k as u32;
            }
            if r.get("unit_base").and_then(|x| x.as_str()) == Some("bits") {
                opts.unit_base = iolab_report::UnitBase::Bits;
            }
            if let Some(k) = r.get("sig_figs").and_then(|x| x.as_u64()) {
                opts.sig_figs = k as u32;
            }
            if let Some(k) = r.get("utc_offset_s").and_then(|x| x.as_i64()) {
                opts.utc_offset_s = k as i32;
            }
            if let Some(k) = r.get("version").and_then(|x| x.as_str()) {
                opts.version = k.to_string();
            }
        }
    }
    opts
}

/// A stored record as its kind.
pub fn load(s: &Stored) -> Result<Box<dyn ResultKind>> {
    let r = &s.record;
    let what = || format!("stored result {} ({})", s.id, r.kind);
    let json = r.result_json.as_str();
    Ok(match r.kind {
        Kind::Run => {
            let v: serde_json::Value = serde_json::from_str(json).with_context(what)?;
            let runs = match v.get("iolab_runs") {
                Some(runs) => serde_json::from_value(runs.clone()).with_context(what)?,
                None => Vec::new(),
            };
            Box::new(RunKind {
                result: r.run_result().with_context(what)?,
                opts: render_opts(s),
                runs,
                caches: v
                    .get("iolab_caches")
                    .and_then(|c| c.as_str())
                    .unwrap_or_default()
                    .to_string(),
                outcome: r.repeat.clone(),
                layout: v
                    .get("iolab_layout")
                    .and_then(|c| c.as_str())
                    .unwrap_or_default()
                    .to_string(),
            })
        }
        Kind::Quick => Box::new(QuickKind(serde_json::from_str(json).with_context(what)?)),
        Kind::Compare => Box::new(CompareKind(serde_json::from_str(json).with_context(what)?)),
        Kind::Meta => Box::new(MetaKind(serde_json::from_str(json).with_context(what)?)),
        Kind::Sweep => Box::new(SweepKind(serde_json::from_str(json).with_context(what)?)),
    })
}

/// Where and how a record was measured, as the document's provenance:
/// every field of the record's provenance (whatever fields it has), then
/// the tags, command line and the job text.
pub fn provenance(s: &Stored) -> Vec<Block> {
    provenance_of(Some(s.id), &s.record)
}

/// [`provenance`] of a record, stored as result `id` or not yet stored.
pub fn provenance_of(id: Option<i64>, r: &Record) -> Vec<Block> {
    let mut pairs = Vec::new();
    if let Some(id) = id {
        pairs.push(("result".to_string(), format!("{id} ({})", r.kind)));
    }
    pairs.push(("time".to_string(), crate::readback::local_time(&r.time)));
    if !r.tags.is_empty() {
        pairs.push(("tags".into(), r.tags.join(", ")));
    }
    if !r.command_line.is_empty() {
        pairs.push(("command".into(), r.command_line.clone()));
    }
    if let Ok(v) = serde_json::to_value(&r.provenance) {
        let mut p = Vec::new();
        pairs_of("", &v, &mut p);
        pairs.extend(p.into_iter().filter(|(k, _)| k != "time"));
    }
    if let Some(o) = &r.repeat {
        pairs.push(("repeats".into(), o.describe()));
    }
    let mut out = vec![Block::Provenance { pairs }];
    if !r.job_text.is_empty() {
        out.push(Block::Preformatted {
            caption: "Job file".into(),
            text: r.job_text.clone(),
        });
    }
    out
}

/// The HTML page of a result as the command that measured it prints it
/// (`--output-format html`) and `show` prints it again: the kind's
/// document, then where and how it was measured and its job text.
pub fn page(mut d: Document, id: Option<i64>, r: &Record) -> String {
    d.blocks.extend(provenance_of(id, r));
    export(&d, DocFormat::Html, Style::default())
}

/// A result's JSON (an object) with where and how it was measured under
/// `"provenance"`, the record's provenance as the store keeps it: what
/// meta's and sweep's JSON carry, as quick's carries its own.
pub fn with_provenance(json: &str, r: &Record) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(json) else {
        return json.to_string();
    };
    if let (Some(obj), Ok(p)) = (v.as_object_mut(), serde_json::to_value(&r.provenance)) {
        obj.insert("provenance".into(), p);
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| json.to_string());
    s.push('\n');
    s
}

/// A record's document with its provenance, titled with its id.
pub fn record_document(s: &Stored) -> Result<Document> {
    let k = load(s)?;
    let mut d = k.document();
    d.title = format!("Result {}: {}", s.id, d.title);
    d.blocks.extend(provenance(s));
    Ok(d)
}

/// A record in one of the formats of its kind; None when the kind does
/// not take the format.
pub fn render_record(s: &Stored, format: OutputFormat, style: Style) -> Result<Option<String>> {
    let k = load(s)?;
    debug_assert_eq!(k.kind(), s.record.kind);
    if !k.formats().contains(&format) {
        return Ok(None);
    }
    if let Some(text) = k.own(format) {
        if format == OutputFormat::Json && matches!(k.kind(), Kind::Meta | Kind::Sweep) {
            return Ok(Some(with_provenance(&text, &s.record)));
        }
        return Ok(Some(text));
    }
    let Some(doc_format) = format.doc() else {
        return Ok(None);
    };
    let d = k.document();
    if doc_format == DocFormat::Html {
        return Ok(Some(page(d, Some(s.id), &s.record)));
    }
    Ok(Some(export(&d, doc_format, style)))
}

/// The names of the formats of a kind, for messages.
pub fn format_names(s: &Stored) -> String {
    let formats = match load(s) {
        Ok(k) => k.formats(),
        Err(_) => TABLE_FORMATS,
    };
    formats
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A metric for people: its name without a trailing unit, the number and
/// the unit once (`SEQ1M Q8T1 read 440.9 MB/s`).
pub fn metric_text(m: &Metric) -> String {
    let name = m
        .name
        .strip_suffix(&m.unit)
        .map(str::trim_end)
        .filter(|n| !n.is_empty())
        .unwrap_or(&m.name);
    format!("{name} {} {}", iolab_report::doc::num::fmt(m.value), m.unit)
}

/// The headline of a record for `history`: the few figures that say
/// what the result was, chosen per kind.
pub fn headline(kind: Kind, metrics: &[Metric]) -> String {
    let find = |name: &str| metrics.iter().find(|m| m.name == name);
    fn by_unit<'a>(metrics: &'a [Metric], unit: &'a str) -> impl Iterator<Item = &'a Metric> {
        metrics.iter().filter(move |m| m.unit == unit)
    }
    let picked: Vec<String> = match kind {
        Kind::Quick => {
            let want = [
                "SEQ1M Q8T1 read MB/s",
                "SEQ1M Q8T1 write MB/s",
                "RND4K Q1T1 read IOPS",
                "RND4K Q1T1 write IOPS",
            ];
            let got: Vec<String> = want
                .iter()
                .filter_map(|n| find(n))
                .map(metric_text)
                .collect();
            if got.is_empty() {
                by_unit(metrics, "MB/s").take(2).map(metric_text).collect()
            } else {
                got
            }
        }
        Kind::Compare => {
            // The first workload's throughput on each target.
            let mbs: Vec<&Metric> = by_unit(metrics, "MB/s")
                .filter(|m| !m.name.contains(" reads"))
                .collect();
            let what = mbs
                .first()
                .and_then(|m| m.name.split_once(' ').map(|x| x.1));
            match what {
                Some(w) => {
                    let cells: Vec<String> = mbs
                        .iter()
                        .filter_map(|m| {
                            let (t, rest) = m.name.split_once(' ')?;
                            (rest == w)
                                .then(|| format!("{t} {}", iolab_report::doc::num::fmt(m.value)))
                        })
                        .collect();
                    let w = w.strip_suffix("MB/s").map_or(w, str::trim_end);
                    vec![format!("{w}: {} MB/s", cells.join(", "))]
                }
                None => metrics.iter().take(2).map(metric_text).collect(),
            }
        }
        Kind::Meta => by_unit(metrics, "ops/s").take(3).map(metric_text).collect(),
        Kind::Sweep => {
            let best = by_unit(metrics, "MB/s").max_by(|a, b| a.value.total_cmp(&b.value));
            best.map(|m| {
                let at = m.name.strip_suffix("MB/s").map_or(&*m.name, str::trim_end);
                format!("best {} MB/s at {at}", iolab_report::doc::num::fmt(m.value))
            })
            .into_iter()
            .collect()
        }
        Kind::Run => {
            let mut out: Vec<String> = by_unit(metrics, "MB/s").take(2).map(metric_text).collect();
            if let Some(p) = metrics.iter().find(|m| m.name.ends_with("clat p99")) {
                out.push(metric_text(p));
            }
            out
        }
    };
    picked.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_name_their_unit_once() {
        let m = Metric::new("SEQ1M Q8T1 read MB/s", 440.94, "MB/s");
        assert_eq!(metric_text(&m), "SEQ1M Q8T1 read 440.9 MB/s");
        let m = Metric::new("j read clat p99", 12255.0, "us");
        assert_eq!(metric_text(&m), "j read clat p99 12,255 us");
    }

    #[test]
    fn headlines_fit_the_kind() {
        let c = vec![
            Metric::new("ext4 mkfs time", 0.1, "s"),
            Metric::new("ext4 cached reads", 3000.0, "MB/s"),
            Metric::new("ext4 seqwrite-1m write MB/s", 32.2, "MB/s"),
            Metric::new("xfs seqwrite-1m write MB/s", 37.0, "MB/s"),
        ];
        assert_eq!(
            headline(Kind::Compare, &c),
            "seqwrite-1m write: ext4 32.20, xfs 37 MB/s"
        );
        let s = vec![
            Metric::new("bs=4k rw=read MB/s", 362.7, "MB/s"),
            Metric::new("bs=32k rw=read MB/s", 1099.0, "MB/s"),
        ];
        assert_eq!(
            headline(Kind::Sweep, &s),
            "best 1,099 MB/s at bs=32k rw=read"
        );
    }
}
