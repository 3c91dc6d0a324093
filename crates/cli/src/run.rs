//! `iolab run`: fio's command line and job files, `--parse-only`,
//! `--cmdhelp`, and the run itself with fio's output formats.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use iolab_core::plan;
use iolab_core::progress::Progress;
use iolab_core::run::{run_observed, Notice};
use iolab_report::{render, render_preamble, Format, RenderOpts, UnitBase};
use iolab_spec::{cmdline, help, resolve, Context, Host, JobSet, Opt, SpecError};
use iolab_stats::JobResult;

use crate::exit::Status;
use crate::status::{draw_until, Shown, StatusOpts};

const USAGE: &str = "\
usage: iolab run [JOBFILE...] [--option=value...] [--name=JOB --option=value...]

Runs fio job files and fio command-line jobs. Options before the first
--name apply to every job; each --name starts a job. `-option` and
`--option` both work.

Run flags:
  --output-format=FMT   normal, json, json+, terse (comma list prints each)
  --output=FILE         write the report to FILE
  --parse-only          print the resolved jobs in job-file syntax and exit
  --cmdhelp[=OPTION]    list the job options, or describe one
  --section=NAME        run only this job section (repeatable)
  --minimal             same as --output-format=terse
  --eta=WHEN            status line on stderr: auto (a terminal, no JSON on
                        stdout), always, never
  --eta-interval=TIME   redraw it this often (default 1s; ms without unit)
  --eta-newline=TIME    start a new status line this often (s without unit)
";

/// Set by Ctrl-C; the workers stop at their next I/O.
static STOP: AtomicBool = AtomicBool::new(false);

pub fn run(args: &[String]) -> Result<Status> {
    let cmd = match cmdline::parse_args(args) {
        Ok(c) => c,
        Err(e) => return Ok(bad_input(&e)),
    };
    if cmd.flag("help").is_some() {
        print!("{USAGE}");
        return Ok(Status::Success);
    }
    if let Some(which) = cmd.flag("cmdhelp") {
        return match help::cmdhelp(which) {
            Ok(text) => {
                print!("{text}");
                Ok(Status::Success)
            }
            Err(e) => Ok(bad_input(&e)),
        };
    }
    let formats = match cmd.flag("output-format") {
        Some(Some(list)) => match Format::parse_list(list) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("iolab: --output-format: {e}");
                return Ok(Status::BadInput);
            }
        },
        _ if cmd.flag("minimal").is_some() => vec![Format::Terse],
        _ => vec![Format::Normal],
    };
    if let Some(Some(v)) = cmd.flag("terse-version") {
        if v != "3" {
            eprintln!("iolab: --terse-version={v}: iolab prints terse version 3 only");
            return Ok(Status::BadInput);
        }
    }

    let status = match StatusOpts::parse(
        cmd.flag("eta").flatten(),
        cmd.flag("eta-interval").flatten(),
        cmd.flag("eta-newline").flatten(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iolab: {e}");
            return Ok(Status::BadInput);
        }
    };

    let ctx = Context::from_env(host());
    let jobs = match resolve::load(&cmd, &ctx) {
        Ok(j) => j,
        Err(e) => return Ok(bad_input(&e)),
    };
    let output = cmd.flag("output").flatten().map(str::to_string);

    if cmd.flag("parse-only").is_some() {
        write_out(output.as_deref(), &jobs.to_job_text())?;
        return Ok(Status::Success);
    }

    let plan = match plan::build(&jobs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iolab: {e}");
            return Ok(Status::BadInput);
        }
    };
    for w in iolab_core::warn::plan_warnings(&plan) {
        eprintln!("iolab: warning: {w}");
    }
    let opts = render_opts(&jobs);
    let normal = formats.contains(&Format::Normal);
    let mut out = Out::open(output.as_deref())?;
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

    watch_interrupts();
    let mut layout_lines = |n: Notice| {
        let Notice::LayingOut { job, bytes, .. } = n;
        if normal {
            // fio says this as it starts laying out; a failed write of the
            // notice is not a reason to stop the run.
            let _ = out.write(&format!(
                "{job}: Laying out IO file (1 file / {}MiB)\n",
                bytes >> 20
            ));
        }
    };
    let json_to_stdout = output.is_none()
        && formats
            .iter()
            .any(|f| matches!(f, Format::Json | Format::JsonPlus));
    let progress = Progress::new(&plan);
    let finished = AtomicBool::new(false);
    let shown = Shown {
        read: plan.jobs.iter().any(|j| j.rw.mode.reads()),
        write: plan.jobs.iter().any(|j| j.rw.mode.writes()),
        trim: plan.jobs.iter().any(|j| j.rw.mode.trims()),
    };
    let outcome = std::thread::scope(|s| {
        if status.enabled(json_to_stdout) {
            s.spawn(|| draw_until(&progress, &finished, status, shown));
        }
        let r = run_observed(&plan, &STOP, &mut layout_lines, &progress);
        finished.store(true, Ordering::Relaxed);
        r
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("iolab: {e}");
            return Ok(Status::BadInput);
        }
    };
    for f in &formats {
        out.write(&render(&outcome.result, &opts, *f))?;
    }
    out.finish()?;
    if outcome.result.interrupted {
        eprintln!("iolab: interrupted; the results above are partial");
        return Ok(Status::Failed);
    }
    if let Some(failure) = outcome.failure {
        eprintln!("iolab: {failure}");
        return Ok(Status::Failed);
    }
    Ok(Status::Success)
}

/// Where the report goes: stdout or the --output file.
enum Out {
    Stdout(std::io::Stdout),
    File(std::fs::File, String),
}

impl Out {
    fn open(path: Option<&str>) -> Result<Out> {
        Ok(match path {
            Some(p) => Out::File(
                std::fs::File::create(p)
                    .with_context(|| format!("cannot write --output file `{p}`"))?,
                p.to_string(),
            ),
            None => Out::Stdout(std::io::stdout()),
        })
    }
    fn write(&mut self, text: &str) -> Result<()> {
        match self {
            Out::Stdout(s) => s.write_all(text.as_bytes())?,
            Out::File(f, p) => f
                .write_all(text.as_bytes())
                .with_context(|| format!("cannot write --output file `{p}`"))?,
        }
        Ok(())
    }
    fn finish(&mut self) -> Result<()> {
        match self {
            Out::Stdout(s) => s.flush()?,
            Out::File(f, _) => f.flush()?,
        }
        Ok(())
    }
}

fn write_out(path: Option<&str>, text: &str) -> Result<()> {
    let mut out = Out::open(path)?;
    out.write(text)?;
    out.finish()
}

/// The first Ctrl-C stops the workers (partial results are printed); a
/// second one exits at once.
fn watch_interrupts() {
    let count = iolab_engine::host::install_interrupt_handler();
    std::thread::Builder::new()
        .name("interrupts".into())
        .spawn(move || loop {
            let n = count.load(Ordering::Relaxed);
            if n >= 1 {
                STOP.store(true, Ordering::Relaxed);
            }
            if n >= 2 {
                eprintln!("iolab: interrupted twice; exiting now");
                std::process::exit(130);
            }
            std::thread::sleep(Duration::from_millis(20));
        })
        .ok();
}

fn render_opts(jobs: &JobSet) -> RenderOpts {
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

fn host() -> Host {
    Host {
        page_size: iolab_engine::host::page_size(),
        mb_memory: iolab_engine::host::physical_memory() >> 20,
        ncpus: iolab_engine::host::online_cpus(),
    }
}
