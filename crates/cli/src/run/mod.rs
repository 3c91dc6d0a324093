//! `iolab run`: fio's command line and job files, `--parse-only`,
//! `--cmdhelp`, and the run itself with fio's output formats; `repeated`
//! runs it again and again under `--repeat`.

mod repeated;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use iolab_core::plan;
use iolab_core::progress::Progress;
use iolab_core::run::{run_observed, Notice, RunOutcome};
use iolab_report::export::{DocFormat, Style};
use iolab_report::{laying_out, render, render_preamble, Format, RenderOpts, UnitBase};
use iolab_spec::cmdline::CmdLine;
use iolab_spec::error::{bound_message, clip};
use iolab_spec::options::choices::UnitBase as UnitBaseChoice;
use iolab_spec::{help, resolve, Context, JobSet, Opt, SpecError};
use iolab_stats::{JobResult, RepeatRule, RunResult};
use iolab_store::{Kind, Record};

use crate::exit::Status;
use crate::interrupt::{self, STOP};
use crate::keep::{self, StoreArgs};
use crate::outargs::OutputFormat;
use crate::output::{self, Out};
use crate::status::{draw_until, Shown, StatusOpts};

/// The help of `iolab run`, the store flags' lines at `@STORE_FLAGS@`.
const USAGE: &str = "\
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
@STORE_FLAGS@
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

/// The help of `iolab run` (`--help`, `iolab help run`, the man page).
pub fn usage() -> String {
    USAGE.replace("@STORE_FLAGS@\n", &keep::usage_lines('=', 24))
}

/// `iolab run ARGS`: the exit status (2 for a bad job or command line,
/// with nothing written).
pub fn run(args: &[String]) -> Result<Status> {
    let cmd = match command_line(args)? {
        Ok(cmd) => cmd,
        Err(status) => return Ok(status),
    };
    let req = match Request::of(&cmd) {
        Ok(r) => r,
        Err(status) => return Ok(status),
    };
    let ctx = Context::from_env(iolab_core::probe::keyword_host());
    let jobs = match resolve::load(&cmd, &ctx) {
        Ok(j) => j,
        Err(e) => return Ok(bad_input(&e)),
    };
    if cmd.flag("parse-only").is_some() {
        write_out(req.output.as_deref(), &jobs.to_job_text())?;
        return Ok(Status::Success);
    }
    let session = match Session::start(req, jobs)? {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    if session.rule.repeats() {
        repeated::run(session)
    } else {
        run_single(session)
    }
}

/// The command line parsed, or the status of a command that is done
/// already (`--version`, help, `--cmdhelp`, an MPI run) or refused.
fn command_line(args: &[String]) -> Result<Result<CmdLine, Status>> {
    // As fio, `--version` answers whatever else the line holds.
    if args
        .iter()
        .any(|a| matches!(a.as_str(), "--version" | "-version" | "-v"))
    {
        write_out(None, &format!("{}\n", version_line()))?;
        return Ok(Err(Status::Success));
    }
    // `-h` is fio's short help flag, as `--help` and `-help` are.
    if args.iter().any(|a| a == "-h") {
        write_out(None, &usage())?;
        return Ok(Err(Status::Success));
    }
    #[cfg(feature = "mpi")]
    if crate::mpi::launched() {
        let world = crate::mpi::World::init()?;
        return crate::mpi::run::run(args, &world).map(Err);
    }
    let cmd = match keep::fio_cmdline(args) {
        Ok(c) => c,
        Err(e) => return Ok(Err(bad_input(&e))),
    };
    if cmd.flag("mpi-stonewall").is_some() {
        eprintln!(
            "iolab: --mpi-stonewall: stonewalling across ranks needs a run under mpirun or srun \
             of an iolab built with MPI (cargo build --features mpi); see docs/mpi.md"
        );
        return Ok(Err(Status::BadInput));
    }
    if cmd.flag("help").is_some() {
        write_out(None, &usage())?;
        return Ok(Err(Status::Success));
    }
    if let Some(which) = cmd.flag("cmdhelp") {
        return match help::cmdhelp(which) {
            Ok(text) => {
                write_out(None, &text)?;
                Ok(Err(Status::Success))
            }
            Err(e) => Ok(Err(bad_input(&e))),
        };
    }
    Ok(Ok(cmd))
}

/// What the run flags ask for, checked before the job files are read.
struct Request {
    formats: Vec<Format>,
    doc: Option<DocFormat>,
    rule: RepeatRule,
    status: StatusOpts,
    output: Option<String>,
    /// The plan's warnings go on stderr too.
    to_stderr: bool,
    keep: StoreArgs,
}

impl Request {
    /// The flags of `cmd`; a bad one is said, and the status is BadInput.
    fn of(cmd: &CmdLine) -> Result<Request, Status> {
        let (formats, doc) = report_formats(cmd)?;
        let rule = crate::repeat::parse_rule(
            cmd.flag("repeat").flatten(),
            cmd.flag("repeat-width").flatten(),
            cmd.flag("repeat-max").flatten(),
            cmd.flag("repeat-time").flatten(),
        )
        .map_err(|e| refuse(bound_message(&e.to_string())))?;
        let status = StatusOpts::parse(
            cmd.flag("eta").flatten(),
            cmd.flag("eta-interval").flatten(),
            cmd.flag("eta-newline").flatten(),
        )
        .map_err(|e| refuse(bound_message(&e.to_string())))?;
        let output = cmd.flag("output").flatten().map(str::to_string);
        let warnings = match cmd.flag("warnings").flatten() {
            None => WarningsTo::Auto,
            Some(w) => WarningsTo::parse(w).ok_or_else(|| {
                refuse(format!(
                    "--warnings={}: expected auto, stderr or report",
                    clip(w)
                ))
            })?,
        };
        let to_stderr = warnings.on_stderr(
            output.is_some(),
            formats
                .iter()
                .any(|f| matches!(f, Format::Json | Format::JsonPlus)),
            std::io::stderr().is_terminal(),
        );
        let keep = StoreArgs::from_cmdline(cmd).map_err(refuse)?;
        if let Err(msg) = output::check_opt(output.as_deref().map(Path::new), &keep.db_files()) {
            return Err(refuse(bound_message(&msg.to_string())));
        }
        Ok(Request {
            formats,
            doc,
            rule,
            status,
            output,
            to_stderr,
            keep,
        })
    }
}

/// `--output-format` (or `--minimal`), and fio's `--terse-version`.
fn report_formats(cmd: &CmdLine) -> Result<(Vec<Format>, Option<DocFormat>), Status> {
    let formats = match cmd.flag("output-format") {
        Some(Some(list)) => output_formats(list)
            .map_err(|e| refuse(format!("--output-format: {}", bound_message(&e))))?,
        _ if cmd.flag("minimal").is_some() => (vec![Format::Terse], None),
        _ => (vec![Format::Normal], None),
    };
    if let Some(Some(v)) = cmd.flag("terse-version") {
        if v != "3" {
            return Err(refuse(format!(
                "--terse-version={}: iolab prints terse version 3 only",
                clip(v)
            )));
        }
    }
    Ok(formats)
}

/// A run ready to start: its plan, how it is shown and where it is kept.
struct Session {
    plan: plan::Plan,
    jobs: JobSet,
    rule: RepeatRule,
    /// The status line, when one is drawn.
    draw: Option<StatusOpts>,
    shown: Formats,
    opts: RenderOpts,
    keep: StoreArgs,
    store: Option<iolab_store::Store>,
    out: Out,
}

impl Session {
    /// Plans `jobs`, opens the database and the report, says the plan's
    /// warnings and prints fio's preamble; a plan or a database refused is
    /// said, and the status is BadInput.
    fn start(req: Request, jobs: JobSet) -> Result<Result<Session, Status>> {
        let plan = match plan::build(&jobs) {
            Ok(p) => p,
            Err(e) => return Ok(Err(refuse(bound_message(&e.to_string())))),
        };
        if let Err(msg) = keep::check_plan_files(&plan, &req.keep.db_files()) {
            return Ok(Err(refuse(msg)));
        }
        // A results database that cannot be used is refused before the run.
        let store = match req.keep.open() {
            Ok(s) => s,
            Err(e) => return Ok(Err(refuse(crate::said_once(&e)))),
        };
        // They are in the report either way (each job's warnings).
        if req.to_stderr {
            for w in iolab_core::warn::plan_warnings(&plan) {
                eprintln!("iolab: warning: {w}");
            }
        }
        let opts = render_opts(&jobs);
        let style = match req.output {
            Some(_) => Style::default(),
            None => crate::outargs::terminal_style(),
        };
        let mut out = Out::open(req.output.as_deref().map(Path::new))?;
        if req.formats.contains(&Format::Normal) {
            out.write(&render_preamble(&plan_stubs(&plan), &opts))?;
        }
        interrupt::watch(None);
        let json_to_stdout = req.output.is_none()
            && req
                .formats
                .iter()
                .any(|f| matches!(f, Format::Json | Format::JsonPlus));
        Ok(Ok(Session {
            draw: req.status.enabled(json_to_stdout).then_some(req.status),
            shown: Formats {
                fio: req.formats,
                doc: req.doc,
                style,
            },
            rule: req.rule,
            keep: req.keep,
            plan,
            jobs,
            opts,
            store,
            out,
        }))
    }
}

/// The plan's jobs as results not yet run, for fio's preamble.
fn plan_stubs(plan: &plan::Plan) -> Vec<JobResult> {
    plan.jobs
        .iter()
        .map(|j| JobResult {
            name: j.name.clone(),
            groupid: j.groupid,
            setup: j.setup(),
            ..Default::default()
        })
        .collect()
}

/// One run: its report in every format asked, and its record kept.
fn run_single(s: Session) -> Result<Status> {
    let Session {
        plan,
        jobs,
        draw,
        shown,
        mut opts,
        keep: keep_args,
        store,
        mut out,
        ..
    } = s;
    let normal = shown.fio.contains(&Format::Normal);
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
        Err(e) => return Ok(refuse(e)),
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
    for f in &shown.fio {
        out.write(&render(&outcome.result, &opts, *f))?;
    }
    if let Some(d) = shown.doc {
        out.write(&run_document(&outcome.result, d, shown.style, &record))?;
    }
    out.finish()?;
    keep::note_emulation("run");
    Ok(single_status(&outcome, store, &record, &keep_args))
}

/// A single run's exit status, once its record is kept (when it
/// measured something and was not interrupted).
fn single_status(
    outcome: &RunOutcome,
    store: Option<iolab_store::Store>,
    record: &Record,
    keep_args: &StoreArgs,
) -> Status {
    let mut kept = Status::Success;
    // A run in which no job did I/O measured nothing: it is not kept.
    let measured = outcome.result.did_io();
    if !outcome.result.interrupted && measured {
        kept = keep::insert(store, record).status();
    }
    if outcome.result.interrupted {
        eprintln!("iolab: interrupted; the results above are partial");
        return Status::Failed;
    }
    if let Some(failure) = &outcome.failure {
        eprintln!("iolab: {failure}");
    }
    if !measured && !keep_args.no_store {
        eprintln!("iolab: no job did any I/O; the run is not stored");
    }
    if outcome.failure.is_some() {
        return Status::Failed;
    }
    kept
}

/// Says `msg` as iolab's refusal of the command line; BadInput.
fn refuse(msg: impl std::fmt::Display) -> Status {
    eprintln!("iolab: {msg}");
    Status::BadInput
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

/// The directory a run measured, for its provenance.
pub(crate) fn plan_target(plan: &plan::Plan) -> PathBuf {
    plan.files
        .first()
        .and_then(|f| f.path.parent().map(|p| p.to_path_buf()))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."))
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
struct Formats {
    fio: Vec<Format>,
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
    let unit_base = match first.and_then(|j| j.chosen(Opt::UnitBase)) {
        Some(UnitBaseChoice::Bits) => UnitBase::Bits,
        Some(UnitBaseChoice::Bytes | UnitBaseChoice::Auto) | None => UnitBase::Bytes,
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
