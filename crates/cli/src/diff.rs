//! `iolab diff A B`: two stored results side by side. Per headline metric
//! the statistic each verdict compares (the geometric mean of a side's
//! runs, or the median for the rank test), the ratio B/A with its
//! interval, and the verdict in words (faster, slower, ≈, or why it cannot
//! tell: one run a side never decides), Holm-corrected over the metrics
//! tested together; and what differs between the two records besides the
//! numbers (job, iolab version, kernel, filesystem, mount options, device,
//! engine). Results with no metric in common are refused; results of
//! different jobs are flagged. The warnings each side carried are named
//! with their side, beside the metrics they concern and under the table,
//! so that a large ratio whose one side measured the page cache says so.

use anyhow::Result;
use clap::Args;
use iolab_stats::{Method, DEFAULT_ALPHA};
use iolab_store::{
    diff_metrics, run_metrics, Basis, DiffOpts, Flag, Kind, Metric, MetricDiff, Stored,
};
use serde_json::json;

use crate::exit::Status;
use crate::outargs::{OutputArgs, OutputFormat};
use crate::output;
use crate::readback::{bad, num, DbArg, Table, TableForm};
use iolab_report::doc::{self, Block, Cell, Column, Document, Note, Tone};

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first result's id (the baseline)
    pub a: i64,
    /// The second result's id
    pub b: i64,
    /// Test of the runs: welch (Welch's t-test on log values, comparing
    /// geometric means) or mann-whitney (exact rank test, comparing
    /// medians; needs 4 runs a side or more)
    #[arg(long, default_value = "welch", value_name = "TEST")]
    pub method: String,
    /// Significance level
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_name = "P")]
    pub alpha: f64,
    #[command(flatten)]
    pub db: DbArg,
    /// table (default), markdown, csv, json or html (the two results side
    /// by side with charts and each one's provenance)
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(args: &DiffArgs) -> Result<Status> {
    let method: Method = match args.method.parse() {
        Ok(m) => m,
        Err(e) => return bad(&format!("--method: {e}")),
    };
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return bad(&format!("--alpha {} is not between 0 and 1", args.alpha));
    }
    let form = match TableForm::of(args.out.format_or(OutputFormat::Table)) {
        Ok(f) => f,
        Err(msg) => return bad(&msg),
    };
    if let Err(msg) = output::check_opt(args.out.output.as_deref(), &args.db.db_files()) {
        return bad(&msg);
    }
    let pair = match load_pair(args)? {
        Ok(p) => p,
        Err(status) => return Ok(status),
    };
    let (a, b) = (&pair[0], &pair[1]);
    let opts = DiffOpts {
        method,
        alpha: args.alpha,
    };
    let rows = diff_metrics(&metrics_of(a), &metrics_of(b), opts);
    let common = rows
        .iter()
        .filter(|r| matches!(r.basis, Basis::Runs { .. }))
        .count();
    if common == 0 {
        return bad(&format!(
            "results {} ({}) and {} ({}) have no metric in common: nothing to compare",
            args.a, a.record.kind, args.b, b.record.kind
        ));
    }
    let (flags_a, flags_b) = (flags_of(a), flags_of(b));
    let warned: Vec<String> = rows
        .iter()
        .map(|r| side_codes(&r.name, &flags_a, &flags_b))
        .collect();
    let diffs = differences(a, b);
    let different_jobs = diffs.iter().any(|d| d.what == "job" || d.what == "kind");
    let pd = PairDiff {
        opts,
        rows,
        common,
        warned,
        flags_a,
        flags_b,
        diffs,
        different_jobs,
    };
    let text = match form {
        None => json_text(&pd, a, b)?,
        // CSV is the table and nothing else: what the notes say is in the
        // VERDICT column.
        Some(TableForm::Csv) => table(&pd.rows, &pd.warned).render(TableForm::Csv),
        Some(TableForm::Html) => html_text(args, &pair, &pd)?,
        Some(form) => plain_text(&pd, a, b, form),
    };
    output::emit(args.out.output.as_deref(), &text)?;
    Ok(Status::Success)
}

/// The two stored results of the command line, or the status to end with
/// when the database or one of them is missing.
fn load_pair(args: &DiffArgs) -> Result<Result<Vec<Stored>, Status>> {
    let path = args.db.path()?;
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(Err(status)),
    };
    let Some(store) = store else {
        eprintln!("iolab: no stored results in {}", path.display());
        return Ok(Err(Status::Failed));
    };
    let mut pair = Vec::new();
    for id in [args.a, args.b] {
        match store.get(id)? {
            Some(s) => pair.push(s),
            None => {
                eprintln!("iolab: no result {id} in {}", path.display());
                return Ok(Err(Status::Failed));
            }
        }
    }
    Ok(Ok(pair))
}

/// What diff found between two results, for every output form.
struct PairDiff {
    opts: DiffOpts,
    rows: Vec<MetricDiff>,
    /// Metrics both results have (tested together).
    common: usize,
    /// Per row, the warnings of each side that concern it.
    warned: Vec<String>,
    flags_a: Vec<Flag>,
    flags_b: Vec<Flag>,
    diffs: Vec<Difference>,
    different_jobs: bool,
}

fn json_text(pd: &PairDiff, a: &Stored, b: &Stored) -> Result<String> {
    let (rows, flags_a, flags_b) = (&pd.rows, &pd.flags_a, &pd.flags_b);
    let v = json!({
        "a": summary(a),
        "b": summary(b),
        "alpha": pd.opts.alpha,
        "method": pd.opts.method.to_string(),
        "statistic": pd.opts.method.statistic().to_string(),
        "tested_together": pd.common,
        "different_jobs": pd.different_jobs,
        "differences": pd.diffs.iter().map(|d| json!({
            "what": d.what, "a": d.a, "b": d.b,
        })).collect::<Vec<_>>(),
        "metrics": rows,
        "warnings": { "a": flags_a, "b": flags_b },
        "metric_warnings": rows.iter().zip(&pd.warned).map(|(r, w)| json!({
            "metric": r.name, "a": codes_at(&r.name, flags_a),
            "b": codes_at(&r.name, flags_b), "text": w,
        })).collect::<Vec<_>>(),
    });
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}

/// The page: the two results side by side, what differs besides the
/// numbers, each side's warnings and provenance.
fn html_text(args: &DiffArgs, pair: &[Stored], pd: &PairDiff) -> Result<String> {
    let mut d = side_by_side(pair, pd.opts)?;
    d.title = format!("iolab diff {} {}", args.a, args.b);
    if pd.different_jobs {
        d.blocks.insert(
            0,
            Block::Notes {
                notes: vec![Note::warning(
                    "!",
                    "A and B ran different jobs: their numbers may measure different \
                     things",
                )],
            },
        );
    }
    let mut t = Table::new(&["DIFFERS", "A", "B"]);
    for df in &pd.diffs {
        t.push(vec![df.what.to_string(), df.a.clone(), df.b.clone()]);
    }
    if !pd.diffs.is_empty() {
        d.heading(2, "Besides the numbers");
        d.push(Block::Table(t.doc("differences")));
    }
    let mut notes = Vec::new();
    for (side, flags) in [("A", &pd.flags_a), ("B", &pd.flags_b)] {
        for f in flags.iter() {
            let at = if f.at.is_empty() {
                String::new()
            } else {
                format!(" at {}", f.at)
            };
            notes.push(Note::warning(side, format!("{}{at}: {}", f.code, f.text)));
        }
    }
    d.notes(notes);
    for s in pair {
        d.heading(1, format!("Result {}: where and how", s.id));
        d.blocks.extend(crate::kinds::provenance(s));
    }
    Ok(iolab_report::export::export(
        &d,
        iolab_report::export::DocFormat::Html,
        Default::default(),
    ))
}

/// The text forms: the two results, what differs, the table and what its
/// verdicts mean.
fn plain_text(pd: &PairDiff, a: &Stored, b: &Stored, form: TableForm) -> String {
    let (method, alpha, common) = (pd.opts.method, pd.opts.alpha, pd.common);
    let statistic = method.statistic();
    let mut text = format!("A: {}\nB: {}\n", describe(a), describe(b));
    if pd.different_jobs {
        text.push_str(
            "\nWARNING: A and B ran different jobs: their numbers may measure different \
             things.\n",
        );
    }
    text.push('\n');
    text.push_str(&differences_text(&pd.diffs, form));
    text.push('\n');
    text.push_str(&table(&pd.rows, &pd.warned).render(form));
    let interval = match method {
        Method::Welch => {
            format!("; B/A with its {:.0}% interval", (1.0 - alpha) * 100.0)
        }
        Method::MannWhitney => String::new(),
    };
    text.push_str(&format!(
        "\nA, B: the {statistic} of each side's runs, the statistic tested. Verdicts: \
         {method} at the {} level, Holm-corrected over the {common} metric(s) both \
         results have{interval}. Faster/slower: rates up are faster, times and \
         latencies up are slower.\n",
        alpha,
    ));
    let one_run = |r: &MetricDiff| match r.basis {
        Basis::Runs { a, b } => a < 2 || b < 2,
        Basis::Missing => false,
    };
    if pd.rows.iter().any(one_run) {
        text.push_str(
            "One run a side cannot tell a difference from run-to-run noise (the samples \
             within a run are not independent); store results of --repeat N runs to \
             test them.\n",
        );
    }
    text.push_str(&warnings_text(&pd.flags_a, &pd.flags_b));
    text
}

/// One thing, besides the numbers, that differs between the records.
struct Difference {
    what: &'static str,
    a: String,
    b: String,
}

/// What the records hold about how each result was measured, where the
/// two differ: kind, job text, engines, iolab version, kernel, host, CPU,
/// memory, target, filesystem, mount options and source, device, model,
/// scheduler, size.
fn differences(a: &Stored, b: &Stored) -> Vec<Difference> {
    let (ra, rb) = (&a.record, &b.record);
    let (pa, pb) = (&ra.provenance, &rb.provenance);
    let opt = |v: Option<String>| v.unwrap_or_default();
    let mut fields: Vec<(&'static str, String, String)> = vec![
        ("kind", ra.kind.to_string(), rb.kind.to_string()),
        ("job", ra.job_text.clone(), rb.job_text.clone()),
        ("engine", engines(a), engines(b)),
        (
            "iolab version",
            pa.iolab_version.clone(),
            pb.iolab_version.clone(),
        ),
        ("kernel", pa.kernel.clone(), pb.kernel.clone()),
        ("host", pa.host.clone(), pb.host.clone()),
        ("cpu", pa.cpu_model.clone(), pb.cpu_model.clone()),
        ("cpus", pa.cpu_count.to_string(), pb.cpu_count.to_string()),
        (
            "memory",
            pa.memory_bytes.to_string(),
            pb.memory_bytes.to_string(),
        ),
        ("target", pa.target.clone(), pb.target.clone()),
        ("filesystem", pa.fs_type.clone(), pb.fs_type.clone()),
        (
            "mount options",
            pa.mount_options.clone(),
            pb.mount_options.clone(),
        ),
        (
            "mount source",
            pa.mount_source.clone(),
            pb.mount_source.clone(),
        ),
        ("device", pa.block_device.clone(), pb.block_device.clone()),
        (
            "device model",
            pa.device_model.clone(),
            pb.device_model.clone(),
        ),
        (
            "rotational",
            opt(pa.rotational.map(|r| r.to_string())),
            opt(pb.rotational.map(|r| r.to_string())),
        ),
        ("scheduler", pa.scheduler.clone(), pb.scheduler.clone()),
        (
            "device size",
            opt(pa.device_size_bytes.map(|s| s.to_string())),
            opt(pb.device_size_bytes.map(|s| s.to_string())),
        ),
    ];
    fields.retain(|(_, x, y)| x != y);
    fields
        .into_iter()
        .map(|(what, a, b)| {
            if what == "job" {
                let (la, lb) = first_difference(&a, &b);
                Difference { what, a: la, b: lb }
            } else {
                Difference { what, a, b }
            }
        })
        .collect()
}

/// The first line where two job texts differ, as "line N: TEXT" for each
/// side ("(none)" past the end of one).
fn first_difference(a: &str, b: &str) -> (String, String) {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let n = la.len().max(lb.len());
    for i in 0..n {
        let (x, y) = (la.get(i), lb.get(i));
        if x != y {
            let show = |v: Option<&&str>| format!("line {}: {}", i + 1, v.map_or("(none)", |v| v));
            return (show(x), show(y));
        }
    }
    (a.to_string(), b.to_string())
}

/// The engines of a run record's jobs, in order, each once.
fn engines(s: &Stored) -> String {
    if s.record.kind != Kind::Run {
        return String::new();
    }
    let Ok(result) = s.record.run_result() else {
        return String::new();
    };
    let mut out: Vec<String> = Vec::new();
    for j in &result.jobs {
        if !j.setup.ioengine.is_empty() && !out.contains(&j.setup.ioengine) {
            out.push(j.setup.ioengine.clone());
        }
    }
    out.join(",")
}

fn differences_text(diffs: &[Difference], form: TableForm) -> String {
    if diffs.is_empty() {
        return "Besides the numbers: nothing differs in what the records hold (job, engine, \
                iolab version, kernel, host, filesystem, mount options, device).\n"
            .to_string();
    }
    let mut t = Table::new(&["DIFFERS", "A", "B"]);
    let shown = |v: &str| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.to_string()
        }
    };
    for d in diffs {
        t.push(vec![d.what.to_string(), shown(&d.a), shown(&d.b)]);
    }
    format!("Besides the numbers:\n{}", t.render(form))
}

/// A record's metrics; for a run stored without any, those of its
/// result.
fn metrics_of(s: &Stored) -> Vec<Metric> {
    if s.record.metrics.is_empty() && s.record.kind == Kind::Run {
        if let Ok(result) = s.record.run_result() {
            return run_metrics(&result);
        }
    }
    s.record.metrics.clone()
}

/// The table of metrics; a WARNINGS column names the side whose run
/// carried a warning about a metric, when either did.
fn table(rows: &[MetricDiff], warned: &[String]) -> Table {
    let any = warned.iter().any(|w| !w.is_empty());
    let mut head = vec!["METRIC", "UNIT", "A", "B", "B/A", "VERDICT"];
    if any {
        head.push("WARNINGS");
    }
    let mut t = Table::new(&head);
    for (r, w) in rows.iter().zip(warned) {
        let mut row = vec![
            r.name.clone(),
            r.unit.clone(),
            num(r.a),
            num(r.b),
            r.ratio_text(),
            r.explain(),
        ];
        if any {
            row.push(if w.is_empty() { "-".into() } else { w.clone() });
        }
        t.push(row);
    }
    t
}

/// The warnings a record carried: those stored with it, or, for a run or
/// quick result stored before warnings were kept, those in its result.
fn flags_of(s: &Stored) -> Vec<Flag> {
    let r = &s.record;
    if !r.warnings.is_empty() {
        return r.warnings.clone();
    }
    match r.kind {
        Kind::Run => r
            .run_result()
            .map(|x| iolab_store::run_flags(&x))
            .unwrap_or_default(),
        Kind::Quick => serde_json::from_str(&r.result_json)
            .map(|q| iolab_store::quick_flags(&q))
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Whether a flag raised at `at` concerns the metric `name` ("seq read
/// MB/s" concerns job `seq`, "SEQ1M Q8T1 read IOPS" the quick test
/// "SEQ1M Q8T1 read"); a flag raised nowhere in particular concerns all.
fn concerns(at: &str, name: &str) -> bool {
    at.is_empty()
        || name
            .strip_prefix(at)
            .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with('['))
}

/// The codes of `flags` that concern the metric `name`, each once.
fn codes_at(name: &str, flags: &[Flag]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in flags.iter().filter(|f| concerns(&f.at, name)) {
        if !out.iter().any(|c| f.code == *c) {
            out.push(f.code.to_string());
        }
    }
    out
}

/// Which side carried which warning about the metric `name`: "A:
/// page-cache", "A, B: short-run", "A: page-cache; B: short-run"; empty
/// when neither did.
fn side_codes(name: &str, a: &[Flag], b: &[Flag]) -> String {
    let (ca, cb) = (codes_at(name, a), codes_at(name, b));
    let mut parts = Vec::new();
    let both: Vec<&String> = ca.iter().filter(|c| cb.contains(c)).collect();
    let only_a: Vec<&String> = ca.iter().filter(|c| !cb.contains(c)).collect();
    let only_b: Vec<&String> = cb.iter().filter(|c| !ca.contains(c)).collect();
    let join = |v: &[&String]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",");
    if !only_a.is_empty() {
        parts.push(format!("A: {}", join(&only_a)));
    }
    if !only_b.is_empty() {
        parts.push(format!("B: {}", join(&only_b)));
    }
    if !both.is_empty() {
        parts.push(format!("A, B: {}", join(&both)));
    }
    parts.join("; ")
}

/// Under the table: every warning, with the side that carried it, where,
/// and its text; a warning on one side only is said to make the ratio
/// suspect.
fn warnings_text(a: &[Flag], b: &[Flag]) -> String {
    if a.is_empty() && b.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nWarnings the results carried:\n");
    for (side, mine, other) in [("A", a, b), ("B", b, a)] {
        for f in mine {
            let alone = !other.iter().any(|g| g.code == f.code);
            let at = if f.at.is_empty() {
                String::new()
            } else {
                format!(" at {}", f.at)
            };
            out.push_str(&format!("  {side}: {}{at}: {}\n", f.code, f.text));
            if alone {
                let other_side = if side == "A" { "B" } else { "A" };
                out.push_str(&format!(
                    "     only {side} carried {}: a difference from {other_side} there may come \
                     from it, not from the storage\n",
                    f.code
                ));
            }
        }
    }
    out
}

fn describe(s: &Stored) -> String {
    let r = &s.record;
    let mut d = format!("#{} {} at {} on {}", s.id, r.kind, r.time, r.target);
    if !r.provenance.fs_type.is_empty() {
        d.push_str(&format!(" ({})", r.provenance.fs_type));
    }
    if !r.tags.is_empty() {
        d.push_str(&format!(" [{}]", r.tags.join(", ")));
    }
    d
}

fn summary(s: &Stored) -> serde_json::Value {
    json!({
        "id": s.id,
        "kind": s.record.kind,
        "time": s.record.time,
        "target": s.record.target,
        "fs_type": s.record.provenance.fs_type,
        "tags": s.record.tags,
    })
}

/// Several results side by side, aligned by metric: a table with each
/// result's value of every metric the first one has (then those only
/// others have), each later result's ratio to the first with the verdict
/// of diff's test, and a bar chart per unit with one colour per result.
pub fn side_by_side(records: &[Stored], opts: DiffOpts) -> Result<Document> {
    let Some(first) = records.first() else {
        return Ok(Document::new("nothing to compare"));
    };
    let base = metrics_of(first);
    let diffs: Vec<Vec<MetricDiff>> = records[1..]
        .iter()
        .map(|s| diff_metrics(&base, &metrics_of(s), opts))
        .collect();
    let al = Aligned {
        records,
        base,
        diffs,
    };
    let mut names = al.names();
    let mut d = Document::new("iolab: results side by side");
    for s in records {
        d.paragraph(format!("{}: {}", record_label(s), describe(s)));
    }
    // Only what at least two results have: the rows they can be compared
    // by.
    let shared = |name: &str| {
        (0..records.len())
            .filter(|&i| al.value(i, name).is_some())
            .count()
            >= 2
    };
    let left_out = names.iter().filter(|(n, _)| !shared(n)).count();
    names.retain(|(n, _)| shared(n));
    d.push(Block::Table(al.table(&names)));
    // One chart per unit, at most a dozen metrics each.
    let mut units: Vec<&str> = Vec::new();
    for (_, u) in &names {
        if !units.contains(&u.as_str()) {
            units.push(u);
        }
    }
    for u in units {
        if let Some(f) = al.unit_figure(&names, u) {
            d.push(Block::Figure(f));
        }
    }
    let mut notes = vec![Note::plain(format!(
        "verdicts: {} at the {} level, Holm-corrected over the metrics each pair has in common; \
         one run a side cannot tell (iolab diff A B gives each test's p-value and interval)",
        opts.method, opts.alpha
    ))];
    if left_out > 0 {
        notes.push(Note::plain(format!(
            "{left_out} metric(s) only one result has are left out here; each result's own \
             section below has them"
        )));
    }
    d.notes(notes);
    Ok(d)
}

/// A result's label in the side-by-side table and charts: id, kind,
/// filesystem, tags.
fn record_label(s: &Stored) -> String {
    let mut l = format!("#{} {}", s.id, s.record.kind);
    if !s.record.provenance.fs_type.is_empty() {
        l.push_str(&format!(" {}", s.record.provenance.fs_type));
    }
    if !s.record.tags.is_empty() {
        l.push_str(&format!(" [{}]", s.record.tags.join(",")));
    }
    l
}

/// A verdict in at most a few words ("cannot tell" for the long ones).
fn short_words(r: &MetricDiff) -> String {
    let w = r.verdict.words(r.better);
    if w.len() > 14 {
        "cannot tell".to_string()
    } else {
        w
    }
}

/// Several results aligned on the first one's metrics: each later result's
/// diff against the first.
struct Aligned<'a> {
    records: &'a [Stored],
    base: Vec<Metric>,
    diffs: Vec<Vec<MetricDiff>>,
}

impl Aligned<'_> {
    /// Metric names and units in order: the first result's, then the others'.
    fn names(&self) -> Vec<(String, String)> {
        let mut names: Vec<(String, String)> = self
            .base
            .iter()
            .map(|m| (m.name.clone(), m.unit.clone()))
            .collect();
        for d in &self.diffs {
            for r in d {
                if !names.iter().any(|(n, _)| *n == r.name) {
                    names.push((r.name.clone(), r.unit.clone()));
                }
            }
        }
        names
    }

    /// Result `i`'s value of a metric.
    fn value(&self, i: usize, name: &str) -> Option<f64> {
        if i == 0 {
            self.base.iter().find(|m| m.name == name).map(|m| m.value)
        } else {
            self.diffs[i - 1]
                .iter()
                .find(|r| r.name == name)
                .and_then(|r| r.b)
        }
    }

    /// The table: each result's value of every metric, each later result's
    /// ratio to the first with its verdict.
    fn table(&self, names: &[(String, String)]) -> doc::Table {
        let records = self.records;
        let first = &records[0];
        let mut cols = vec![Column::text("metric"), Column::text("unit")];
        for (i, s) in records.iter().enumerate() {
            cols.push(Column::num(record_label(s), ""));
            if i > 0 {
                cols.push(Column::text(format!("#{} vs #{}", s.id, first.id)));
            }
        }
        let mut t = doc::Table::new("side_by_side", cols);
        for (name, unit) in names {
            let mut row = vec![Cell::text(name), Cell::text(unit)];
            for i in 0..records.len() {
                row.push(Cell::num(self.value(i, name).filter(|v| v.is_finite())));
                if i > 0 {
                    row.push(match self.diffs[i - 1].iter().find(|r| r.name == *name) {
                        Some(r) => {
                            let tone = match r.verdict.b_is_better(r.better) {
                                Some(true) => Tone::Good,
                                Some(false) => Tone::Bad,
                                None if r.verdict.is_significant() => Tone::Plain,
                                None => Tone::Warn,
                            };
                            let short = short_words(r);
                            match r.ratio {
                                Some(x) => Cell::text(format!("x{x:.2} {short}")).tone(tone),
                                None => Cell::text("-"),
                            }
                        }
                        None => Cell::text("-"),
                    });
                }
            }
            t.rows.push(row);
        }
        t
    }

    /// The bar chart of the (first dozen) metrics in unit `u`, one colour
    /// per result; none when no result has a value there.
    fn unit_figure(&self, names: &[(String, String)], u: &str) -> Option<doc::Figure> {
        let records = self.records;
        let ms: Vec<&String> = names
            .iter()
            .filter(|(_, x)| x == u)
            .map(|(n, _)| n)
            .take(12)
            .collect();
        let series: Vec<doc::Series> = (0..records.len())
            .map(|i| doc::Series {
                name: record_label(&records[i]),
                points: ms
                    .iter()
                    .enumerate()
                    .filter_map(|(x, name)| {
                        let y = self.value(i, name).filter(|v| v.is_finite())?;
                        let mut p = doc::Point::at(x as f64, y);
                        p.label = format!("{} {u}", doc::num::fmt(y));
                        if i > 0 {
                            if let Some(r) = self.diffs[i - 1].iter().find(|r| r.name == **name) {
                                let short = short_words(r);
                                if let Some(ratio) = r.ratio {
                                    p.label.push_str(&format!(" x{ratio:.2} {short}"));
                                }
                                p.tone = match r.verdict.b_is_better(r.better) {
                                    Some(true) => Tone::Good,
                                    Some(false) => Tone::Bad,
                                    _ => Tone::Plain,
                                };
                            }
                        }
                        Some(p)
                    })
                    .collect(),
            })
            .collect();
        if series.iter().all(|s| s.points.is_empty()) {
            return None;
        }
        Some(doc::Figure {
            title: format!("{u} side by side"),
            kind: doc::FigureKind::Bars,
            x: doc::Axis {
                label: "metric".into(),
                categories: ms.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            y: doc::Axis {
                label: u.to_string(),
                ..Default::default()
            },
            series,
        })
    }
}
