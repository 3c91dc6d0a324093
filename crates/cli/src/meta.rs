//! `iolab meta`: the metadata benchmark's command. Parses the flags into
//! [`MetaOptions`], runs [`run_meta_partial`] with a Ctrl-C handler (the
//! run stops at its next operation and removes its files), and prints the
//! phases as a table, Markdown, CSV or JSON; after a failure, the phases
//! that finished. With `--repeat`, the whole pass runs again (each in a
//! fresh directory) as the rule says; the result keeps every run and its
//! metrics carry the runs as samples, for `diff`'s verdicts.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use iolab_core::meta::{run_meta_observed, MetaOptions};
use iolab_report::export::DocFormat;
use iolab_report::meta::{render_meta, render_meta_styled};
use iolab_stats::meta::{MetaPhaseKind, MetaResult, UnknownPhase};

use crate::exit::Status;
use crate::interrupt;
use crate::keep::{self, StoreArgs};
use crate::kinds;
use crate::outargs::OutputArgs;
use crate::output;
use crate::progress::{self, Display};
use crate::repeat::{self, RepeatArgs, Step};
use crate::units;
use iolab_stats::StopReason;
use iolab_store::{Kind, Metric, Record};

/// Times file creation, open, utime, stat, readdir, rename and unlink.
#[derive(Args, Debug)]
#[command(after_help = "\
The run works in a new iolab-meta.* directory inside DIR and removes it
when done, also after an error or Ctrl-C. Phases, in order: mkdir (trees),
create, open, utime, stat, readdir, rename, unlink, rmdir (trees).
--cold drops the page, dentry and inode caches before each phase and
needs root.")]
pub struct MetaArgs {
    /// Directory to work in (default: the current directory).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Files to create.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    files: u64,
    /// Subdirectories per directory of a tree (0: one directory).
    #[arg(long, default_value_t = 0, value_name = "N")]
    dirs: u64,
    /// Levels of the tree (with --dirs; 0 counts as 1).
    #[arg(long, default_value_t = 0, value_name = "N")]
    depth: u32,
    /// Bytes written to each file at create (4k, 1m; k, m, g are powers
    /// of 1024, kib, mib, gib powers of 1000, as in fio's job files).
    #[arg(long, default_value = "0", value_name = "SIZE", value_parser = units::size)]
    file_size: u64,
    /// Threads sharing each phase.
    #[arg(long, default_value_t = 1, value_name = "N")]
    threads: u32,
    /// fsync each file after creating it.
    #[arg(long)]
    fsync: bool,
    /// Drop caches before each phase (root only).
    #[arg(long)]
    cold: bool,
    /// Phases to time besides create and unlink (comma list; default all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = phase)]
    phases: Vec<MetaPhaseKind>,
    /// Under MPI (mpirun, srun): every rank works in one directory that
    /// rank 0 makes in DIR, each rank's number in its files' names
    /// (mdtest's default, without -u); without it each rank makes a
    /// directory of its own.
    #[arg(long)]
    mpi_shared_dir: bool,
    /// table (default), markdown, csv, json or html
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
    #[command(flatten)]
    store: StoreArgs,
}

/// One name of `--phases`.
fn phase(name: &str) -> Result<MetaPhaseKind, UnknownPhase> {
    name.trim().parse()
}

/// The run the flags ask for. The one place that lists the options'
/// fields: MetaOptions lives in stats, which knows nothing of clap, so the
/// flags are copied once here, at the command line's edge (a field added
/// to MetaOptions fails to compile until it is given here).
impl From<&MetaArgs> for MetaOptions {
    fn from(args: &MetaArgs) -> MetaOptions {
        MetaOptions {
            // The directory as its absolute path, so that the report
            // names it ("." says nothing once printed).
            dir: std::path::absolute(&args.dir).unwrap_or_else(|_| args.dir.clone()),
            files: args.files,
            dirs: args.dirs,
            depth: args.depth,
            file_size: args.file_size,
            threads: args.threads,
            fsync: args.fsync,
            cold: args.cold,
            phases: args.phases.clone(),
        }
    }
}

fn bad(msg: String) -> Status {
    eprintln!("iolab meta: {msg}");
    Status::BadInput
}

pub fn run(args: &MetaArgs) -> Result<Status> {
    let format = match args.out.table_format() {
        Ok(f) => f,
        Err(e) => return Ok(bad(e)),
    };
    let opts = MetaOptions::from(args);
    #[cfg(feature = "mpi")]
    if crate::mpi::launched() {
        let world = crate::mpi::World::init()?;
        let run = crate::mpi::meta::MetaRun {
            opts,
            format,
            repeats: args.repeat.rule().map(|r| r.repeats()).unwrap_or(true),
            output: args.out.output.as_deref(),
            store: &args.store,
            shared_dir: args.mpi_shared_dir,
        };
        return crate::mpi::meta::run(run, &world);
    }
    if args.mpi_shared_dir {
        return Ok(bad(
            "--mpi-shared-dir: one directory shared by the ranks needs a run under mpirun or \
             srun (and iolab built with the mpi feature)"
                .to_string(),
        ));
    }
    if let Err(e) = iolab_core::meta::validate(&opts) {
        return Ok(bad(e.to_string()));
    }
    let rule = match args.repeat.rule() {
        Ok(r) => r,
        Err(e) => return Ok(bad(e)),
    };
    if let Err(msg) = output::check_opt(args.out.output.as_deref(), &args.store.db_files()) {
        return Ok(bad(msg));
    }
    let store = match args.store.open() {
        Ok(s) => s,
        Err(e) => return Ok(bad(crate::said_once(&e))),
    };
    interrupt::watch(None);
    let display = Display::new("meta", 0);
    if rule.repeats() {
        return run_repeated(args, &opts, &rule, format, store, &display);
    }
    let outcome = observed(&opts, &display, 0, 1);
    display.clear();
    match outcome {
        Ok(result) => {
            let mut record = keep::record(Kind::Meta, &args.dir, &args.store);
            emit(args, &result, format, &record)?;
            keep::note_emulation("meta");
            record.result_json = serde_json::to_string(&result)?;
            record.metrics = metrics(&result);
            Ok(keep::insert(store, &record).status())
        }
        Err(f) if f.error.is_invalid() => Ok(bad(f.error.to_string())),
        Err(f) => report_failure(args, &f, format),
    }
}

/// Prints a result in `format`: its JSON with where and how it was
/// measured, its page with the same, its table as the terminal takes it.
fn emit(args: &MetaArgs, r: &MetaResult, format: DocFormat, record: &Record) -> Result<()> {
    let text = match format {
        DocFormat::Html => kinds::page(iolab_report::kinds::meta::document(r), None, record),
        DocFormat::Json => kinds::with_provenance(&render_meta(r, format), record),
        f => render_meta_styled(r, f, args.out.style()),
    };
    output::emit(args.out.output.as_deref(), &text)
}

/// What a failed run measured before the failure is reported (not kept);
/// a run that finished no phase has nothing to report.
fn report_failure(
    args: &MetaArgs,
    f: &iolab_core::meta::MetaFailure,
    format: DocFormat,
) -> Result<Status> {
    if !f.partial.phases.is_empty() {
        let record = keep::record(Kind::Meta, &args.dir, &args.store);
        emit(args, &f.partial, format, &record)?;
    }
    eprintln!(
        "iolab meta: {}; the files the run created were removed{}",
        f.error,
        if f.partial.phases.is_empty() {
            ""
        } else {
            "; the phases reported finished"
        }
    );
    Ok(Status::Failed)
}

/// `--repeat`: the pass as many times as the rule says; the result is the
/// median run's phases with every run kept.
fn run_repeated(
    args: &MetaArgs,
    opts: &MetaOptions,
    rule: &iolab_stats::RepeatRule,
    format: DocFormat,
    store: Option<iolab_store::Store>,
    display: &Display,
) -> Result<Status> {
    let mut failure = None;
    let runs = rule.max_runs();
    let once = |i: u32| match observed(opts, display, i, runs) {
        Ok(r) => Step::Done(r),
        Err(f) => {
            let why = if interrupt::STOP.load(std::sync::atomic::Ordering::Relaxed) {
                StopReason::Interrupted
            } else {
                StopReason::Failed
            };
            failure = Some(f);
            Step::Stop(why)
        }
    };
    let figures = |runs: &[MetaResult]| -> Vec<(String, Vec<f64>)> {
        let Some(first) = runs.first() else {
            return Vec::new();
        };
        first
            .phases
            .iter()
            .map(|p| {
                let values = runs
                    .iter()
                    .filter_map(|r| r.phase(p.phase))
                    .map(|q| q.ops_per_sec())
                    .collect();
                (format!("{} ops/s", p.phase), values)
            })
            .collect()
    };
    let (runs, outcome) = repeat::repeat(rule, &interrupt::STOP, once, figures);
    display.clear();
    if let Some(f) = failure {
        if f.error.is_invalid() {
            return Ok(bad(f.error.to_string()));
        }
        if !runs.is_empty() {
            eprintln!(
                "iolab meta: run {} of the repeats failed; nothing was stored",
                runs.len() + 1
            );
        }
        return report_failure(args, &f, format);
    }
    let phases: Vec<Vec<iolab_stats::meta::MetaPhase>> =
        runs.iter().map(|r| r.phases.clone()).collect();
    let Some(median) = runs.get(MetaResult::median_run(&phases)) else {
        eprintln!("iolab meta: interrupted before the first run ended; nothing was stored");
        return Ok(Status::Failed);
    };
    let result = MetaResult {
        runs: phases,
        repeat: Some(outcome),
        ..median.clone()
    };
    let mut record = keep::record(Kind::Meta, &args.dir, &args.store);
    emit(args, &result, format, &record)?;
    keep::note_emulation("meta");
    if result.repeat.as_ref().map(|o| o.stopped) == Some(StopReason::Interrupted) {
        eprintln!("iolab meta: interrupted; the runs above were not stored");
        return Ok(Status::Failed);
    }
    record.result_json = serde_json::to_string(&result)?;
    record.metrics = metrics(&result);
    record.repeat = result.repeat.clone();
    Ok(keep::insert(store, &record).status())
}

/// Run `run` (0-based) of `runs`, each phase a step on the display.
fn observed(
    opts: &MetaOptions,
    display: &Display,
    run: u32,
    runs: u32,
) -> Result<MetaResult, iolab_core::meta::MetaFailure> {
    let started = Instant::now();
    let mut on_phase = |i: usize, n: usize, kind: MetaPhaseKind| {
        let (i, n, run, runs) = (i as u64, n as u64, u64::from(run), u64::from(runs));
        let total = n * runs;
        let done = run * n + i - 1;
        display.set_steps(total);
        let left = progress::pace_left(started.elapsed(), i - 1, n)
            .map(|d| d + started.elapsed().mul_f64((runs - run - 1) as f64))
            .map(|d| format!("{} left: ", progress::clock(d)))
            .unwrap_or_default();
        let of_run = if runs > 1 {
            format!(" (run {} of {runs})", run + 1)
        } else {
            String::new()
        };
        display.step(
            done + 1,
            &format!("{left}{kind} phase, {} files{of_run}", opts.files),
        );
    };
    run_meta_observed(opts, &interrupt::STOP, &mut on_phase)
}

/// Each phase's operations per second and 99th percentile latency; a
/// repeated run's carry every run's value as samples (the ops/s value is
/// then their geometric mean, the statistic the verdicts test).
pub(crate) fn metrics(result: &MetaResult) -> Vec<Metric> {
    let repeated = !result.runs.is_empty();
    let runs = result.ops_per_sec_runs();
    result
        .phases
        .iter()
        .zip(runs)
        .flat_map(|(p, (_, ops))| {
            let name = p.phase.name();
            let mut m = if repeated {
                let gm = iolab_stats::geometric_mean(&ops).unwrap_or(f64::NAN);
                vec![Metric::new(format!("{name} ops/s"), gm, "ops/s").with_samples(ops)]
            } else {
                vec![Metric::new(
                    format!("{name} ops/s"),
                    p.ops_per_sec(),
                    "ops/s",
                )]
            };
            if let Some(ns) = p.percentile_ns(99.0) {
                let p99 = Metric::new(format!("{name} p99"), ns as f64 / 1e3, "us");
                m.push(if repeated {
                    p99.with_samples(result.p99_us_runs(p.phase))
                } else {
                    p99
                });
            }
            m
        })
        .collect()
}
