//! `iolab sweep`: a base job (job files and fio options, as `iolab run`
//! takes them) run over a grid of option values. Takes the grid flags out
//! of the arguments, hands the rest to fio's command-line parser, runs
//! [`run_sweep`] with a Ctrl-C handler, and prints the matrix (after a
//! failed run, the points that finished and the failing point).

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use iolab_core::sweep::{
    bs_axis, list_axis, run_sweep_until, sync_axis, vary_axis, GridAxis, SweepError,
};
use iolab_report::export::{DocFormat, Style};
use iolab_report::sweep::{render_sweep, render_sweep_styled};
use iolab_spec::resolve::Sources;
use iolab_spec::{jobfile, Context};

use crate::exit::Status;
use crate::interrupt;
use crate::keep::{self, StoreArgs};
use crate::kinds;
use crate::outargs::{terminal_style, OutputFormat};
use crate::output;
use crate::progress::{self, Display};
use crate::repeat::parse_rule;
use iolab_stats::sweep::{PointMetric, SweepResult};
use iolab_stats::RepeatRule;
use iolab_store::{Kind, Metric};

/// The help of `iolab sweep`, the store flags' lines at `@STORE_FLAGS@`.
const USAGE: &str = "\
usage: iolab sweep [JOBFILE...] [--fio-option=value...] GRID... [flags]

Runs a base job (job files and fio options, as `iolab run` takes them) at
every point of a grid. Each grid flag takes one value or a list; a single
value (`--rw=write`) just sets the option at every point, as a base option
would, and makes no axis of the table. An option may be given once in the
grid, under any of its names (`--bs` and `--vary blocksize` are one option).
The base job's size is kept at every point, so every block size moves the
same bytes (like dd bs=X count=N/X); as in fio, size is per job, so
--numjobs N moves N times the bytes.

Every value, every point and every place a file will be made are checked
before anything runs. A run that fails ends the sweep: the points before it
are reported, the failing point is named with its error, the files the
sweep created are removed, and the exit status is 1. After a sweep that
succeeds, the data files it created are removed too (files that existed
before are left as they are); --keep-files keeps them.

Grid:
  --bs LO..HI | LIST         block sizes: LO, 2*LO, 4*LO, ... up to HI (1k..1g)
  --iodepth LIST             e.g. 1,4,16,32
  --numjobs LIST             e.g. 1,2,4
  --direct LIST              0,1
  --rw LIST                  e.g. read,write
  --sync LIST                none, sync, dsync, fsync-at-end (end_fsync=1,
                             the fsync inside the measured time)
  --vary OPTION=V1,V2,...    any fio option (repeatable; values hold no comma)

When rw, sync or direct vary, each of their combinations is a group of
columns (MB/s, IOPS, p99 latency) and the other axes are the rows.

Flags:
  -h, --help                 print this help (as `iolab help sweep` does)
  --repeat N|auto            runs per point (interleaved); cells show the
                             geometric mean and its spread ±N% (half the
                             width of its 95% interval, relative). auto:
                             rounds of every point until each point's MB/s
                             has a 95% interval (of the geometric mean)
                             within --repeat-width, or a budget is spent
  --repeat-width PCT         auto's width (default 5%)
  --repeat-max N             auto's most rounds (default 10)
  --repeat-time TIME         auto starts no round that would end after TIME
  --output-format FMT        table (default), markdown, csv, json or html
  --output FILE              write the report to FILE
  --keep-files               keep the data files the sweep created
@STORE_FLAGS@

Example:
  iolab sweep --filename=/mnt/x/f --size=256m --rw read,write \\
      --sync none,dsync --bs 4k..1m --repeat 3
";

/// What the command line asks for besides the base job.
#[derive(Debug)]
struct SweepArgs {
    axes: Vec<GridAxis>,
    repeat: RepeatRule,
    format: DocFormat,
    output: Option<String>,
    rest: Vec<String>,
    help: bool,
    keep_files: bool,
}

const GRID_FLAGS: [&str; 13] = [
    "bs",
    "iodepth",
    "numjobs",
    "direct",
    "rw",
    "sync",
    "vary",
    "repeat",
    "repeat-width",
    "repeat-max",
    "repeat-time",
    "output-format",
    "output",
];

fn parse(args: &[String]) -> Result<SweepArgs, String> {
    let mut given: Vec<(&'static str, String)> = Vec::new();
    let mut rest = Vec::new();
    let mut help = false;
    let mut keep_files = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--help" || arg == "-h" {
            help = true;
            continue;
        }
        if arg == "--keep-files" {
            keep_files = true;
            continue;
        }
        let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'));
        let Some(body) = body else {
            rest.push(arg.clone());
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(flag) = GRID_FLAGS.iter().find(|f| **f == name) else {
            rest.push(arg.clone());
            continue;
        };
        let value = match inline {
            Some(v) => v,
            None => match args.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => return Err(format!("--{name} needs a value")),
            },
        };
        given.push((flag, value));
    }

    let mut out = SweepArgs {
        axes: Vec::new(),
        repeat: RepeatRule::default(),
        format: DocFormat::Text,
        output: None,
        rest,
        help,
        keep_files,
    };
    let err = |e: SweepError| e.to_string();
    // Axes in a fixed order: block size first (the rows of a dd study),
    // then depth and jobs, then the columns (direct, rw, sync).
    for flag in ["bs", "iodepth", "numjobs", "direct", "rw", "sync"] {
        let values: Vec<&String> = given.iter().filter(|g| g.0 == flag).map(|g| &g.1).collect();
        if values.len() > 1 {
            return Err(format!(
                "--{flag} given twice (`{}`, `{}`); give one list",
                values[0], values[1]
            ));
        }
        if let Some(v) = values.first() {
            out.axes.push(match flag {
                "bs" => bs_axis(v).map_err(err)?,
                "sync" => sync_axis(v).map_err(err)?,
                _ => list_axis(flag, v).map_err(err)?,
            });
        }
    }
    for (flag, v) in &given {
        match *flag {
            "vary" => out.axes.push(vary_axis(v).map_err(err)?),
            "output-format" => {
                out.format = OutputFormat::parse(v)
                    .and_then(OutputFormat::table)
                    .map_err(|e| format!("--output-format: {e}"))?
            }
            "output" => out.output = Some(v.clone()),
            _ => {}
        }
    }
    let last = |flag: &str| {
        given
            .iter()
            .rev()
            .find(|g| g.0 == flag)
            .map(|g| g.1.as_str())
    };
    out.repeat = parse_rule(
        last("repeat"),
        last("repeat-width"),
        last("repeat-max"),
        last("repeat-time"),
    )?;
    Ok(out)
}

fn bad(msg: impl std::fmt::Display) -> Status {
    eprintln!("iolab sweep: {msg}");
    Status::BadInput
}

/// The help of `iolab sweep` (`--help`, `iolab help sweep`, the man page).
pub fn usage() -> String {
    USAGE.replace("@STORE_FLAGS@\n", &keep::usage_lines(' ', 29))
}

pub fn run(args: &[String]) -> Result<Status> {
    let sweep = match parse(args) {
        Ok(s) => s,
        Err(e) => return Ok(bad(e)),
    };
    if sweep.help {
        output::emit(None, &usage())?;
        return Ok(Status::Success);
    }
    // The store flags are read as run reads them, with fio's command line.
    let cmd = match keep::fio_cmdline(&sweep.rest) {
        Ok(c) => c,
        Err(e) => return Ok(bad(e)),
    };
    let store_args = match StoreArgs::from_cmdline(&cmd) {
        Ok(a) => a,
        Err(e) => return Ok(bad(e)),
    };
    let not_ours = cmd.flags.iter().find(|f| !StoreArgs::is_flag(f.name));
    if let Some(f) = not_ours {
        return Ok(bad(format!("`--{}` is not a flag of iolab sweep", f.name)));
    }
    let db_files = store_args.db_files();
    if let Err(msg) = output::check_opt(sweep.output.as_deref().map(Path::new), &db_files) {
        return Ok(bad(msg));
    }
    if cmd.job_files.is_empty() && cmd.jobs.is_empty() && cmd.global.is_empty() {
        return Ok(bad(
            "no base job to sweep: give a job file (`iolab sweep job.fio --bs 4k..1m`) or the \
             job's fio options (`iolab sweep --filename=/mnt/x/f --size=256m --bs 4k..1m`); \
             `iolab sweep --help` says more",
        ));
    }
    let mut files = Vec::new();
    for path in &cmd.job_files {
        match jobfile::read_job_file(path) {
            Ok(s) => files.push((path.clone(), s)),
            Err(e) => return Ok(bad(e)),
        }
    }
    let base = Sources {
        global: cmd.global.clone(),
        cmd_jobs: cmd.jobs.clone(),
        files,
        only_sections: Vec::new(),
    };
    let ctx = Context::from_env(iolab_core::probe::keyword_host());
    // Every point, and every place a file will be made, is checked before
    // the results database, the output file or any job file is touched.
    let prepared = match iolab_core::sweep::prepare(&base, &sweep.axes, &ctx) {
        Ok(p) => p,
        Err(e) => return Ok(bad(e)),
    };
    for point in &prepared.points {
        if let Err(msg) = keep::check_plan_files(&point.plan, &db_files) {
            return Ok(bad(msg));
        }
    }
    let store = match store_args.open() {
        Ok(s) => s,
        Err(e) => return Ok(bad(crate::said_once(&e))),
    };
    interrupt::watch(None);
    // One step per run of a point; with --repeat auto, the most rounds.
    let rounds = u64::from(sweep.repeat.max_runs());
    let steps = prepared.points.len() as u64 * rounds;
    let display = Display::new("sweep", steps);
    let started = Instant::now();
    let mut step = 0u64;
    let mut on_run = |point: &str, rep: u32| {
        step += 1;
        let left = progress::pace_left(started.elapsed(), step - 1, steps)
            .map(|d| format!("{} left: ", progress::clock(d)))
            .unwrap_or_default();
        let point = if point.is_empty() {
            "the base job"
        } else {
            point
        };
        display.step(
            step,
            &format!("{left}{point}, round {} of {rounds}", rep + 1),
        );
    };
    let outcome = run_sweep_until(
        &base,
        &sweep.axes,
        &sweep.repeat,
        &ctx,
        &interrupt::STOP,
        &mut on_run,
    );
    display.clear();
    let result = match outcome {
        Ok(r) => r,
        Err(e) => return Ok(bad(e)),
    };
    // A sweep that did not finish removed what it made; one that did
    // removes it now, unless asked to keep it.
    if result.complete() && !sweep.keep_files {
        for f in &prepared.new_files {
            let _ = std::fs::remove_file(f);
        }
    }
    finish(&sweep, &result, &store_args, store)
}

/// The sweep's report in its format, then its record kept (a sweep that
/// failed or was interrupted is reported, not kept).
fn finish(
    sweep: &SweepArgs,
    result: &SweepResult,
    store_args: &StoreArgs,
    store: Option<iolab_store::Store>,
) -> Result<Status> {
    let target = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let mut record = keep::record(Kind::Sweep, &target, store_args);
    let output = sweep.output.as_deref().map(Path::new);
    let text = match sweep.format {
        DocFormat::Html => kinds::page(iolab_report::kinds::sweep::document(result), None, &record),
        DocFormat::Json => kinds::with_provenance(&render_sweep(result, DocFormat::Json), &record),
        f => {
            let style = match output {
                Some(_) => Style::default(),
                None => terminal_style(),
            };
            render_sweep_styled(result, f, style)
        }
    };
    output::emit(output, &text)?;
    keep::note_emulation("sweep");
    if let Some(f) = &result.failure {
        eprintln!(
            "iolab sweep: point {}: {}; the points reported finished, the files the sweep \
             created were removed, and the result was not stored",
            f.point, f.message
        );
        return Ok(Status::Failed);
    }
    if result.interrupted {
        eprintln!(
            "iolab sweep: interrupted; the points reported finished, the files the sweep \
             created were removed, and the result was not stored"
        );
        return Ok(Status::Failed);
    }
    record.result_json = serde_json::to_string(result)?;
    record.metrics = sweep_metrics(result);
    record.warnings = iolab_store::sweep_flags(result);
    record.repeat = result.repeat_outcome.clone();
    Ok(keep::insert(store, &record).status())
}

/// Each point's MB/s, IOPS and p99 (median over the repeats, the repeats
/// as samples), named by the point's values.
fn sweep_metrics(r: &SweepResult) -> Vec<Metric> {
    let mut out = Vec::new();
    for p in &r.points {
        let at: Vec<String> = r
            .axes
            .iter()
            .zip(&p.values)
            .map(|(a, v)| format!("{}={v}", a.name))
            .collect();
        for m in [PointMetric::Mbps, PointMetric::Iops, PointMetric::P99Us] {
            let runs: Vec<f64> = p.runs.iter().filter_map(|run| m.of(run)).collect();
            if let Some(s) = p.summary(m) {
                let name = if at.is_empty() {
                    m.name().to_string()
                } else {
                    format!("{} {}", at.join(" "), m.name())
                };
                out.push(Metric::new(name, s.median, m.unit()).with_samples(runs));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn grid_flags_are_taken_out() {
        let a = parse(&args(
            "job.fio --size=1m --bs 4k..16k --rw=read,write --vary rwmixread=10,90 --repeat 3 --name=x",
        ))
        .unwrap();
        let names: Vec<&str> = a.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["bs", "rw", "rwmixread"]);
        assert_eq!(a.axes[0].values.len(), 3);
        assert_eq!(a.repeat, RepeatRule::Times { runs: 3 });
        assert_eq!(a.rest, args("job.fio --size=1m --name=x"));
        assert!(parse(&args("--bs"))
            .unwrap_err()
            .contains("--bs needs a value"));
        assert!(parse(&args("--repeat 0"))
            .unwrap_err()
            .contains("--repeat `0`"));
        assert!(parse(&args("--output-format xml")).is_err());
    }

    #[test]
    fn store_flags_are_read_as_fio_s_command_line_reads_them() {
        let a = parse(&args(
            "job.fio --db /tmp/r.db --tag a --bs 4k,8k --tag=b --no-store",
        ))
        .unwrap();
        assert_eq!(
            a.rest,
            args("job.fio --db /tmp/r.db --tag a --tag=b --no-store")
        );
        let store = StoreArgs::from_cmdline(&keep::fio_cmdline(&a.rest).unwrap()).unwrap();
        assert_eq!(store.db, Some(std::path::PathBuf::from("/tmp/r.db")));
        assert_eq!(store.tags, ["a", "b"]);
        assert!(store.no_store);
    }

    #[test]
    fn stored_metrics_carry_their_unit_once() {
        let run = iolab_stats::sweep::PointRun {
            write_bytes: 1 << 20,
            write_bw: 2e6,
            iops: 500.0,
            clat_p99_ns: Some(20_860),
            ..Default::default()
        };
        let r = SweepResult {
            axes: vec![iolab_stats::sweep::SweepAxis {
                name: "bs".into(),
                values: vec!["4k".into()],
            }],
            points: vec![iolab_stats::sweep::SweepPoint {
                values: vec!["4k".into()],
                runs: vec![run],
                ..Default::default()
            }],
            repeat: 1,
            ..Default::default()
        };
        let m: Vec<(String, f64, String)> = sweep_metrics(&r)
            .into_iter()
            .map(|m| (m.name, m.value, m.unit))
            .collect();
        assert_eq!(
            m,
            [
                ("bs=4k MB/s".to_string(), 2.0, "MB/s".to_string()),
                ("bs=4k IOPS".to_string(), 500.0, "IOPS".to_string()),
                ("bs=4k p99".to_string(), 20.86, "us".to_string()),
            ]
        );
    }
}
