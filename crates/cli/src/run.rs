//! `iolab run`: fio's command line and job files, `--parse-only`,
//! `--cmdhelp`, and the run itself with fio's output formats.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use iolab_core::plan;
use iolab_core::progress::Progress;
use iolab_core::run::{run_observed, Notice, RunOutcome};
use iolab_report::repeats::{repeats_json, repeats_text};
use iolab_report::{laying_out, render, render_preamble, Format, RenderOpts, UnitBase};
use iolab_spec::error::{bound_message, clip};
use iolab_spec::{cmdline, help, resolve, Context, JobSet, Opt, SpecError};
use iolab_stats::repeated::repeat_figures;
use iolab_stats::JobResult;
use iolab_stats::RunResult;
use iolab_stats::{RepeatRule, StopReason};

use crate::exit::Status;
use crate::interrupt::{self, STOP};
use crate::keep::{self, StoreArgs};
use crate::output::{self, Out};
use crate::repeat::Step;
use crate::status::{draw_until, Shown, StatusOpts};
use iolab_report::export::{DocFormat, Style};
use iolab_store::{Kind, Record};

use crate::outargs::OutputFormat;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub const USAGE: &str = "\
usage: iolab run [JOBFILE...] [--option=value...] [--name=JOB --option=value...]

Runs fio job files and fio command-line jobs. Options before the first
--name apply to every job; each --name starts a job. `-option` and
`--option` both work.

Run flags:
  -h, --help            print this help (as `iolab help run` does)
  --output-format=FMT   normal, json, json+, terse (comma list prints each);
                        or table, markdown, csv, html (the page with charts)
  --output=FILE         write the report to FILE
  --parse-only          print the resolved jobs in job-file syntax and exit
  --cmdhelp[=OPTION]    list the job options, or describe one
  --section=NAME        run only this job section (repeatable)
  --minimal             same as --output-format=terse
  --repeat=N            run the whole job set N times (caches dropped between
                        runs as root) and report each figure's median,
                        range, 95% interval of the median and spread
  --repeat=auto         run until every job's bandwidth has a 95% interval
                        (of the runs' geometric mean) within --repeat-width,
                        or a budget is spent; says which stopped it
  --repeat-width=PCT    auto's width (default 5%)
  --repeat-max=N        auto's most runs (default 10)
  --repeat-time=TIME    auto starts no run that would end after TIME
  --db=PATH             keep the result in this database (default $IOLAB_DB,
                        else ~/.local/share/iolab/results.db)
  --no-store            do not keep the result
  --tag=TEXT            label the kept result (repeatable)
  --warnings=WHERE      plan warnings (e.g. an iodepth a synchronous engine
                        cannot reach) are always in the report; they are
                        also printed on stderr: auto (default: when the
                        report is normal text on stdout, or stderr is a
                        terminal; not with --output or a JSON format, so
                        that tools which treat any stderr as failure work),
                        stderr (always), report (never)
  --mpi-stonewall       under MPI: each phase ends for every rank when the
                        first rank finishes it (IOR's stonewalling; off by
                        default); see docs/mpi.md
  --version             print the version as fio does, iolab's after it:
                        `fio-3.33 (iolab X.Y.Z)`
  --eta=WHEN            status line on stderr: auto (a terminal, no JSON on
                        stdout), always, never
  --eta-interval=TIME   redraw it this often (default 1s; ms without unit)
  --eta-newline=TIME    start a new status line this often (s without unit)
";

pub fn run(args: &[String]) -> Result<Status> {
    // As fio, `--version` answers whatever else the line holds.
    if args
        .iter()
        .any(|a| matches!(a.as_str(), "--version" | "-version" | "-v"))
    {
        write_out(None, &format!("{}\n", version_line()))?;
        return Ok(Status::Success);
    }
    // `-h` is fio's short help flag, as `--help` and `-help` are.
    if args.iter().any(|a| a == "-h") {
        write_out(None, USAGE)?;
        return Ok(Status::Success);
    }
    #[cfg(feature = "mpi")]
    if crate::mpi::launched() {
        let world = crate::mpi::World::init()?;
        return crate::mpi::run::run(args, &world);
    }
    let cmd = match cmdline::parse_args(args) {
        Ok(c) => c,
        Err(e) => return Ok(bad_input(&e)),
    };
    if cmd.flag("mpi-stonewall").is_some() {
        eprintln!(
            "iolab: --mpi-stonewall: stonewalling across ranks needs a run under mpirun or srun \
             of an iolab built with MPI (cargo build --features mpi); see docs/mpi.md"
        );
        return Ok(Status::BadInput);
    }
    if cmd.flag("help").is_some() {
        write_out(None, USAGE)?;
        return Ok(Status::Success);
    }
    if let Some(which) = cmd.flag("cmdhelp") {
        return match help::cmdhelp(which) {
            Ok(text) => {
                write_out(None, &text)?;
                Ok(Status::Success)
            }
            Err(e) => Ok(bad_input(&e)),
        };
    }
    let (formats, doc) = match cmd.flag("output-format") {
        Some(Some(list)) => match output_formats(list) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("iolab: --output-format: {}", bound_message(&e));
                return Ok(Status::BadInput);
            }
        },
        _ if cmd.flag("minimal").is_some() => (vec![Format::Terse], None),
        _ => (vec![Format::Normal], None),
    };
    if let Some(Some(v)) = cmd.flag("terse-version") {
        if v != "3" {
            eprintln!(
                "iolab: --terse-version={}: iolab prints terse version 3 only",
                clip(v)
            );
            return Ok(Status::BadInput);
        }
    }

    let rule = match crate::repeat::parse_rule(
        cmd.flag("repeat").flatten(),
        cmd.flag("repeat-width").flatten(),
        cmd.flag("repeat-max").flatten(),
        cmd.flag("repeat-time").flatten(),
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("iolab: {}", bound_message(&e.to_string()));
            return Ok(Status::BadInput);
        }
    };
    let status = match StatusOpts::parse(
        cmd.flag("eta").flatten(),
        cmd.flag("eta-interval").flatten(),
        cmd.flag("eta-newline").flatten(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iolab: {}", bound_message(&e.to_string()));
            return Ok(Status::BadInput);
        }
    };

    let output = cmd.flag("output").flatten().map(str::to_string);
    let warnings = match cmd.flag("warnings").flatten() {
        None => WarningsTo::Auto,
        Some(w) => match WarningsTo::parse(w) {
            Some(w) => w,
            None => {
                eprintln!(
                    "iolab: --warnings={}: expected auto, stderr or report",
                    clip(w)
                );
                return Ok(Status::BadInput);
            }
        },
    };
    let to_stderr = warnings.on_stderr(
        output.is_some(),
        formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus)),
        std::io::stderr().is_terminal(),
    );
    let db_files = keep::db_files(cmd.flag("db").flatten().map(Path::new));
    if let Err(msg) = output::check_opt(output.as_deref().map(Path::new), &db_files) {
        eprintln!("iolab: {}", bound_message(&msg.to_string()));
        return Ok(Status::BadInput);
    }
    let ctx = Context::from_env(iolab_core::probe::keyword_host());
    let jobs = match resolve::load(&cmd, &ctx) {
        Ok(j) => j,
        Err(e) => return Ok(bad_input(&e)),
    };

    if cmd.flag("parse-only").is_some() {
        write_out(output.as_deref(), &jobs.to_job_text())?;
        return Ok(Status::Success);
    }

    let plan = match plan::build(&jobs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iolab: {}", bound_message(&e.to_string()));
            return Ok(Status::BadInput);
        }
    };
    if let Err(msg) = keep::check_plan_files(&plan, &db_files) {
        eprintln!("iolab: {msg}");
        return Ok(Status::BadInput);
    }
    let keep_args = StoreArgs {
        db: cmd.flag("db").flatten().map(PathBuf::from),
        no_store: cmd.flag("no-store").is_some(),
        tags: cmd
            .flag_values("tag")
            .into_iter()
            .map(String::from)
            .collect(),
    };
    // A results database that cannot be used is refused before the run.
    let store = match keep_args.open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iolab: {e:#}");
            return Ok(Status::BadInput);
        }
    };
    // They are in the report either way (each job's warnings).
    if to_stderr {
        for w in iolab_core::warn::plan_warnings(&plan) {
            eprintln!("iolab: warning: {w}");
        }
    }
    let mut opts = render_opts(&jobs);
    let normal = formats.contains(&Format::Normal);
    let style = match output {
        Some(_) => Style::default(),
        None => crate::outargs::terminal_style(),
    };
    let mut out = Out::open(output.as_deref().map(Path::new))?;
    if normal {
        let stubs: Vec<JobResult> = plan
            .jobs
            .iter()
            .map(|j| JobResult {
                name: j.name.clone(),
                groupid: j.groupid,
                setup: j.setup(),
                ..Default::default()
            })
            .collect();
        out.write(&render_preamble(&stubs, &opts))?;
    }

    interrupt::watch(None);
    let json_to_stdout = output.is_none()
        && formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus));
    let draw = status.enabled(json_to_stdout).then_some(status);
    if rule.repeats() {
        let shown = Formats {
            fio: &formats,
            doc,
            style,
        };
        return run_repeated(
            &plan, &jobs, &rule, draw, &shown, &opts, out, store, &keep_args,
        );
    }
    // The lines are kept for the record too, so that `show` prints them.
    let mut laid = String::new();
    let mut layout_lines = |n: Notice| {
        if normal {
            // fio says this as it starts laying out; a failed write of the
            // notice is not a reason to stop the run.
            let Notice::LayingOut { job, files, bytes } = n;
            let line = laying_out(&job, files, bytes);
            let _ = out.write(&line);
            laid.push_str(&line);
        }
    };
    let outcome = match run_once(&plan, draw, &mut layout_lines) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("iolab: {e}");
            return Ok(Status::BadInput);
        }
    };
    // Where and how it was measured: in the JSON, the page and the
    // stored record alike.
    let prov = keep::provenance(&plan_target(&plan));
    opts.provenance = serde_json::to_value(&prov).ok();
    let mut record = keep::record_with(Kind::Run, prov, &keep_args);
    record.result_json = crate::kinds::run_record_json(&outcome.result, &opts, &[], "", &laid)?;
    record.job_text = jobs.to_job_text();
    record.metrics = iolab_store::run_metrics(&outcome.result);
    record.warnings = iolab_store::run_flags(&outcome.result);
    for f in &formats {
        out.write(&render(&outcome.result, &opts, *f))?;
    }
    if let Some(d) = doc {
        out.write(&run_document(&outcome.result, d, style, &record))?;
    }
    out.finish()?;
    keep::note_emulation("run");
    let mut kept = Status::Success;
    // A run in which no job did I/O measured nothing: it is not kept.
    let measured = outcome.result.did_io();
    if !outcome.result.interrupted && measured {
        kept = stored(keep::insert(store, &record));
    }
    if outcome.result.interrupted {
        eprintln!("iolab: interrupted; the results above are partial");
        return Ok(Status::Failed);
    }
    if let Some(failure) = &outcome.failure {
        eprintln!("iolab: {failure}");
    }
    if !measured && !keep_args.no_store {
        eprintln!("iolab: no job did any I/O; the run is not stored");
    }
    if outcome.failure.is_some() {
        return Ok(Status::Failed);
    }
    Ok(kept)
}

/// Runs the plan once, with the status line when `draw` says how.
fn run_once(
    plan: &plan::Plan,
    draw: Option<StatusOpts>,
    notice: &mut dyn FnMut(Notice),
) -> Result<RunOutcome, iolab_core::run::StartError> {
    let progress = Progress::new(plan);
    let finished = AtomicBool::new(false);
    let shown = Shown {
        read: plan.jobs.iter().any(|j| j.rw.mode.reads()),
        write: plan.jobs.iter().any(|j| j.rw.mode.writes()),
        trim: plan.jobs.iter().any(|j| j.rw.mode.trims()),
    };
    std::thread::scope(|s| {
        if let Some(status) = draw {
            let (progress, finished) = (&progress, &finished);
            // The status line is not worth failing the run for: without a
            // thread for it, the run goes on without one.
            let drawn = std::thread::Builder::new()
                .name("status".into())
                .spawn_scoped(s, move || draw_until(progress, finished, status, shown));
            if let Err(e) = drawn {
                eprintln!("iolab: warning: no status line (cannot create its thread: {e})");
            }
        }
        let r = run_observed(plan, &STOP, notice, &progress);
        finished.store(true, Ordering::Relaxed);
        r
    })
}

/// `--repeat N|auto`: the job set as many times as the rule says, caches
/// dropped between runs (root) or the job files' caches invalidated; each
/// run's report, then the figures' medians, ranges, intervals and spreads
/// and what stopped the runs. JSON is one document: the median run's fio
/// JSON, with the summary and every run's fio JSON under its top-level
/// "iolab".
#[allow(clippy::too_many_arguments)]
fn run_repeated(
    plan: &plan::Plan,
    jobs: &JobSet,
    rule: &RepeatRule,
    draw: Option<StatusOpts>,
    shown: &Formats,
    opts: &RenderOpts,
    mut out: Out,
    store: Option<iolab_store::Store>,
    keep_args: &StoreArgs,
) -> Result<Status> {
    let formats = shown.fio;
    let mut caches = String::new();
    let mut failure = None;
    let mut start_error = None;
    let mut write_error = None;
    let mut quiet = |_: Notice| {};
    let once = |i: u32| {
        // Every run starts from the same state, the first one included.
        caches = forget_caches(plan);
        let outcome = match run_once(plan, draw, &mut quiet) {
            Ok(o) => o,
            Err(e) => {
                start_error = Some(e);
                return Step::Stop(StopReason::Failed);
            }
        };
        for f in formats {
            let text = match f {
                // One document for all the runs, after them.
                Format::Json | Format::JsonPlus => continue,
                Format::Normal => format!(
                    "\niolab: run {}{}\n{}",
                    i + 1,
                    match rule {
                        RepeatRule::Times { runs } => format!(" of {runs}"),
                        RepeatRule::Auto { .. } => String::new(),
                    },
                    render(&outcome.result, opts, *f)
                ),
                Format::Terse => render(&outcome.result, opts, *f),
            };
            if let Err(e) = out.write(&text) {
                write_error = Some(e);
                return Step::Last(outcome.result, StopReason::Failed);
            }
        }
        if outcome.result.interrupted {
            failure = Some("interrupted".to_string());
            Step::Last(outcome.result, StopReason::Interrupted)
        } else if let Some(f) = outcome.failure {
            failure = Some(f);
            Step::Last(outcome.result, StopReason::Failed)
        } else {
            Step::Done(outcome.result)
        }
    };
    let (results, outcome) = crate::repeat::repeat(rule, &STOP, once, bandwidth_figures);
    if let Some(e) = write_error {
        return Err(e);
    }
    if let Some(e) = start_error {
        eprintln!("iolab: {e}");
        return Ok(Status::BadInput);
    }
    let figs = repeat_figures(&results);
    let prov = keep::provenance(&plan_target(plan));
    let opts = &RenderOpts {
        provenance: serde_json::to_value(&prov).ok(),
        ..opts.clone()
    };
    let mut record = keep::record_with(Kind::Run, prov, keep_args);
    record.job_text = jobs.to_job_text();
    record.repeat = Some(outcome.clone());
    if formats.contains(&Format::Normal) {
        out.write(&repeats_text(&figs, results.len(), &caches))?;
        out.write(&format!("repeats: {}\n", outcome.describe()))?;
    }
    for f in formats {
        if matches!(f, Format::Json | Format::JsonPlus) {
            let plus = *f == Format::JsonPlus;
            out.write(&repeats_json(
                &figs,
                &caches,
                &results,
                opts,
                plus,
                Some(&outcome),
            ))?;
        }
    }
    if let (Some(d), Some(last)) = (shown.doc, results.last()) {
        out.write(&run_document(last, d, shown.style, &record))?;
    }
    out.finish()?;
    keep::note_emulation("run");
    if let Some(f) = failure {
        eprintln!("iolab: {f}; the results above are partial");
        return Ok(Status::Failed);
    }
    if let Some(last) = results.last().filter(|r| r.did_io()) {
        record.result_json = crate::kinds::run_record_json(last, opts, &results, &caches, "")?;
        record.metrics = iolab_store::repeated_run_metrics(&results);
        record.warnings = iolab_store::runs_flags(&results);
        return Ok(stored(keep::insert(store, &record)));
    }
    Ok(Status::Success)
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

/// Between repeats: drops every cache, or, when the kernel refuses (not
/// root, a read-only /proc/sys in a container), the job files' cached
/// pages after writing back what is dirty; says which, and why.
fn forget_caches(plan: &plan::Plan) -> String {
    let why = match iolab_engine::host::drop_caches() {
        Ok(()) => {
            return "caches dropped before each run (sync; echo 3 > /proc/sys/vm/drop_caches)"
                .to_string()
        }
        Err(_) if iolab_engine::host::euid() != 0 => "not root".to_string(),
        Err(e) => {
            let e = e.to_string();
            let reason = e.split(" (os error").next().unwrap_or(&e);
            format!("cannot write /proc/sys/vm/drop_caches ({reason})")
        }
    };
    for f in &plan.files {
        if let Ok(file) = std::fs::File::open(&f.path) {
            let _ = iolab_engine::file::drop_cache(&file, 0, 0);
        }
    }
    format!(
        "{why}: only the job files' cached pages were dropped before each run (the filesystem's \
         metadata caches stay warm)"
    )
}

/// The directory a run measured, for its provenance.
pub(crate) fn plan_target(plan: &plan::Plan) -> PathBuf {
    plan.files
        .first()
        .and_then(|f| f.path.parent().map(|p| p.to_path_buf()))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The exit status of a kept result (1 when it could not be stored).
fn stored(kept: keep::Kept) -> Status {
    kept.status()
}

/// The answer to `--version`: fio's version line, which tools that drive
/// fio check (`fio-3`), with iolab's after it.
pub fn version_line() -> String {
    format!(
        "{} (iolab {})",
        RenderOpts::default().fio_version,
        env!("CARGO_PKG_VERSION")
    )
}

/// `--warnings`: where the plan's warnings are printed besides the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarningsTo {
    Auto,
    Stderr,
    Report,
}

impl WarningsTo {
    fn parse(s: &str) -> Option<WarningsTo> {
        match s {
            "auto" => Some(WarningsTo::Auto),
            "stderr" => Some(WarningsTo::Stderr),
            "report" => Some(WarningsTo::Report),
            _ => None,
        }
    }

    /// Whether they go on stderr too. `auto`: a report written to a file
    /// or in JSON is read by a program, which may take any stderr for a
    /// failure (fio prints nothing there), so only a terminal sees them.
    fn on_stderr(self, to_file: bool, json: bool, terminal: bool) -> bool {
        match self {
            WarningsTo::Stderr => true,
            WarningsTo::Report => false,
            WarningsTo::Auto => terminal || !(to_file || json),
        }
    }
}

fn write_out(path: Option<&str>, text: &str) -> Result<()> {
    output::emit(path.map(Path::new), text)
}

/// What a run prints: fio's formats, in fio's order, or one of the
/// document's (a table, Markdown, CSV, the HTML page) in a style.
struct Formats<'a> {
    fio: &'a [Format],
    doc: Option<DocFormat>,
    style: Style,
}

/// `--output-format`: fio's comma list (normal, json, json+, terse), or
/// one of the formats every iolab command writes (table, markdown, csv,
/// html), which is printed alone.
fn output_formats(list: &str) -> Result<(Vec<Format>, Option<DocFormat>), String> {
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    let doc: Vec<DocFormat> = names
        .iter()
        .filter_map(|n| match crate::outargs::OutputFormat::parse(n).ok()? {
            OutputFormat::Table => Some(DocFormat::Text),
            OutputFormat::Markdown => Some(DocFormat::Markdown),
            OutputFormat::Csv => Some(DocFormat::Csv),
            OutputFormat::Html => Some(DocFormat::Html),
            _ => None,
        })
        .collect();
    match (doc.as_slice(), names.len()) {
        ([], _) => Format::parse_list(list)
            .map(|f| (f, None))
            .map_err(|e| format!("{e} (or table, markdown, csv, html)")),
        ([d], 1) => Ok((Vec::new(), Some(*d))),
        _ => Err(format!(
            "`{list}`: table, markdown, csv and html are printed alone, not in a list"
        )),
    }
}

/// A run's document in a format: the page with where and how it was
/// measured and its job text (as `iolab show` prints it again), or its
/// table.
fn run_document(r: &RunResult, format: DocFormat, style: Style, record: &Record) -> String {
    let d = iolab_report::kinds::run::document(r);
    match format {
        DocFormat::Html => crate::kinds::page(d, None, record),
        f => iolab_report::export::export(&d, f, style),
    }
}

pub(crate) fn render_opts(jobs: &JobSet) -> RenderOpts {
    let first = jobs.jobs.first();
    let kb_base = match first.map(|j| j.kb_base()) {
        Some(iolab_spec::value::KbBase::K1000) => 1000,
        _ => 1024,
    };
    let unit_base = match first.and_then(|j| j.choice(Opt::UnitBase)) {
        Some("1") => UnitBase::Bits,
        _ => UnitBase::Bytes,
    };
    RenderOpts {
        kb_base,
        unit_base,
        utc_offset_s: iolab_engine::host::utc_offset_s(),
        ..RenderOpts::default()
    }
}

fn bad_input(e: &SpecError) -> Status {
    eprintln!("iolab: {e}");
    Status::BadInput
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_leave_stderr_to_programs_reading_a_report() {
        use WarningsTo::*;
        // Normal text on stdout: stderr, terminal or not.
        assert!(Auto.on_stderr(false, false, false));
        // A file or JSON read by a program: not on a pipe, yes on a terminal.
        assert!(!Auto.on_stderr(true, false, false));
        assert!(!Auto.on_stderr(false, true, false));
        assert!(Auto.on_stderr(true, true, true));
        assert!(Stderr.on_stderr(true, true, false));
        assert!(!Report.on_stderr(false, false, true));
        assert_eq!(WarningsTo::parse("stderr"), Some(Stderr));
        assert_eq!(WarningsTo::parse("loud"), None);
    }

    #[test]
    fn version_is_fios_form_with_iolabs_after() {
        let v = version_line();
        assert!(v.starts_with("fio-3.33 (iolab "), "{v}");
        assert!(
            v.ends_with(&format!("{})", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
    }
}
