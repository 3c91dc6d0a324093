//! `iolab run --repeat N|auto`: the job set as many times as the rule
//! says, caches dropped between runs (root) or the job files' caches
//! invalidated; each run's report, then the figures' medians, ranges,
//! intervals and spreads and what stopped the runs. JSON is one document:
//! the median run's fio JSON, with the summary and every run's fio JSON
//! under its top-level "iolab".

use anyhow::Result;
use iolab_core::caches::reset_caches;
use iolab_core::run::{Notice, RunOutcome};
use iolab_report::repeats::{repeats_json, repeats_text};
use iolab_report::{render, Format, RenderOpts};
use iolab_stats::repeated::repeat_figures;
use iolab_stats::{RepeatOutcome, RepeatRule, RunResult, StopReason};
use iolab_store::{Kind, Record};

use super::{plan_target, refuse, run_document, run_once, Formats, Session};
use crate::exit::Status;
use crate::interrupt::STOP;
use crate::keep;
use crate::output::Out;
use crate::repeat::Step;

/// The runs a `--repeat` made, and what was done to the caches before
/// each.
struct Runs {
    results: Vec<RunResult>,
    outcome: RepeatOutcome,
    caches: String,
}

/// Runs the session's plan as its rule says; the report and the record.
pub(super) fn run(s: Session) -> Result<Status> {
    let Session {
        plan,
        jobs,
        rule,
        draw,
        shown,
        opts,
        keep: keep_args,
        store,
        mut out,
    } = s;
    let mut caches = String::new();
    let mut failure = None;
    let mut start_error = None;
    let mut write_error = None;
    let mut quiet = |_: Notice| {};
    let once = |i: u32| {
        // Every run starts from the same state, the first one included.
        caches = reset_caches(&plan).to_string();
        let outcome = match run_once(&plan, draw, &mut quiet) {
            Ok(o) => o,
            Err(e) => {
                start_error = Some(e);
                return Step::Stop(StopReason::Failed);
            }
        };
        if let Err(e) = print_run(&mut out, &shown.fio, &rule, i, &outcome.result, &opts) {
            write_error = Some(e);
            return Step::Last(outcome.result, StopReason::Failed);
        }
        step_of(outcome, &mut failure)
    };
    let (results, outcome) = crate::repeat::repeat(&rule, &STOP, once, bandwidth_figures);
    if let Some(e) = write_error {
        return Err(e);
    }
    if let Some(e) = start_error {
        return Ok(refuse(e));
    }
    let runs = Runs {
        results,
        outcome,
        caches,
    };
    let prov = keep::provenance(&plan_target(&plan));
    let opts = &RenderOpts {
        provenance: serde_json::to_value(&prov).ok(),
        ..opts
    };
    let mut record = keep::record_with(Kind::Run, prov, &keep_args);
    record.job_text = jobs.to_job_text();
    record.repeat = Some(runs.outcome.clone());
    print_summary(&mut out, &shown, &runs, opts, &record)?;
    out.finish()?;
    keep::note_emulation("run");
    if let Some(f) = failure {
        eprintln!("iolab: {f}; the results above are partial");
        return Ok(Status::Failed);
    }
    if let Some(last) = runs.results.last().filter(|r| r.did_io()) {
        let (results, caches) = (&runs.results, &runs.caches);
        record.result_json = crate::kinds::run_record_json(last, opts, results, caches, "")?;
        record.metrics = iolab_store::repeated_run_metrics(results);
        record.warnings = iolab_store::runs_flags(results);
        return Ok(keep::insert(store, &record).status());
    }
    Ok(Status::Success)
}

/// Run `i`'s report in fio's normal and terse formats (JSON is one
/// document for all the runs, after them).
fn print_run(
    out: &mut Out,
    formats: &[Format],
    rule: &RepeatRule,
    i: u32,
    result: &RunResult,
    opts: &RenderOpts,
) -> Result<()> {
    for f in formats {
        let text = match f {
            Format::Json | Format::JsonPlus => continue,
            Format::Normal => format!(
                "\niolab: run {}{}\n{}",
                i + 1,
                match rule {
                    RepeatRule::Times { runs } => format!(" of {runs}"),
                    RepeatRule::Auto { .. } => String::new(),
                },
                render(result, opts, *f)
            ),
            Format::Terse => render(result, opts, *f),
        };
        out.write(&text)?;
    }
    Ok(())
}

/// What a finished run means for the repeats: the next one, or the last
/// (interrupted, or failed: `failure` says why).
fn step_of(outcome: RunOutcome, failure: &mut Option<String>) -> Step<RunResult> {
    if outcome.result.interrupted {
        *failure = Some("interrupted".to_string());
        Step::Last(outcome.result, StopReason::Interrupted)
    } else if let Some(f) = outcome.failure {
        *failure = Some(f);
        Step::Last(outcome.result, StopReason::Failed)
    } else {
        Step::Done(outcome.result)
    }
}

/// The summary after the runs: the figures as text, with what stopped
/// the runs; the one JSON document; the last run's table or page.
fn print_summary(
    out: &mut Out,
    shown: &Formats,
    runs: &Runs,
    opts: &RenderOpts,
    record: &Record,
) -> Result<()> {
    let figs = repeat_figures(&runs.results);
    if shown.fio.contains(&Format::Normal) {
        out.write(&repeats_text(&figs, runs.results.len(), &runs.caches))?;
        out.write(&format!("repeats: {}\n", runs.outcome.describe()))?;
    }
    for f in &shown.fio {
        if matches!(f, Format::Json | Format::JsonPlus) {
            let plus = *f == Format::JsonPlus;
            out.write(&repeats_json(
                &figs,
                &runs.caches,
                &runs.results,
                opts,
                plus,
                Some(&runs.outcome),
            ))?;
        }
    }
    if let (Some(d), Some(last)) = (shown.doc, runs.results.last()) {
        out.write(&run_document(last, d, shown.style, record))?;
    }
    Ok(())
}

/// Every job's bandwidth in each direction that did I/O, in each run so
/// far: what `--repeat auto` judges.
fn bandwidth_figures(runs: &[RunResult]) -> Vec<(String, Vec<f64>)> {
    repeat_figures(runs)
        .into_iter()
        .filter(|f| f.metric == "bw")
        .map(|f| (format!("{} {} MB/s", f.job, f.dir), f.values))
        .collect()
}
