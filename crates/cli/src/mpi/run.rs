//! `iolab run` under MPI: every rank parses the same job (with `$rank` and
//! `$nranks` its own), the ranks agree to start, run the plan phase by
//! phase in step, and send their results to rank 0, which merges them
//! exactly, prints one report in fio's formats, keeps one result and
//! decides the exit status for all.

use std::cell::RefCell;
use std::path::Path;

use anyhow::Result;
use iolab_core::plan::{self, Plan};
use iolab_core::progress::Progress;
use iolab_core::ranks::reported_phases;
use iolab_core::run::{run_ranked, Notice};
use iolab_report::{laying_out as laying_out_line, render, render_preamble, Format, RenderOpts};
use iolab_spec::error::{bound_message, clip};
use iolab_spec::{resolve, Context, JobSet};
use iolab_stats::ranks::{merge_ranks, RankRun};
use iolab_stats::JobResult;
use iolab_store::Kind;

use super::phases::MpiRanks;
use super::{agree_to_start, digest, World};
use crate::exit::Status;
use crate::interrupt::{self, STOP};
use crate::keep::{self, StoreArgs};
use crate::output::{self, Out};

/// What a rank prepared before the run.
struct Prepared {
    plan: Plan,
    jobs: JobSet,
    formats: Vec<Format>,
    output: Option<String>,
    keep_args: StoreArgs,
    /// Rank 0's results database.
    store: Option<iolab_store::Store>,
    opts: RenderOpts,
    stonewall: bool,
}

/// Flags that print something and run nothing: rank 0 answers them.
fn answers_only(args: &[String]) -> bool {
    args.iter().any(|a| {
        let flag = a.trim_start_matches('-');
        a.starts_with('-')
            && ["version", "v", "h", "help", "cmdhelp", "parse-only"]
                .iter()
                .any(|f| flag == *f || flag.starts_with(&format!("{f}=")))
    })
}

pub fn run(args: &[String], world: &World) -> Result<Status> {
    if answers_only(args) {
        return if world.is_root() {
            crate::run::run(args)
        } else {
            Ok(Status::Success)
        };
    }
    let prepared = prepare(args, world);
    let job_digest = job_digest(args);
    let error = prepared.as_ref().err().cloned();
    if let Some(status) = agree_to_start(world, &job_digest, error) {
        return Ok(status);
    }
    let Ok(p) = prepared else {
        // Every rank was ready, or the verdict stopped them all.
        return Ok(Status::Failed);
    };
    measure(p, world)
}

/// The digest that every rank must share: iolab's command line and the
/// text of each job file it names.
fn job_digest(args: &[String]) -> String {
    let mut parts: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    if let Ok(cmd) = keep::fio_cmdline(args) {
        for f in &cmd.job_files {
            parts.push(std::fs::read(f).unwrap_or_else(|e| e.to_string().into_bytes()));
        }
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    digest(&refs)
}

/// Everything up to the run, as each rank sees it: an error is the
/// status to end with and what to say.
fn prepare(args: &[String], world: &World) -> Result<Prepared, (Status, String)> {
    let bad = |m: String| (Status::BadInput, bound_message(&m));
    let cmd = keep::fio_cmdline(args).map_err(|e| bad(e.to_string()))?;
    let formats = match cmd.flag("output-format") {
        Some(Some(list)) => {
            Format::parse_list(list).map_err(|e| bad(format!("--output-format: {e}")))?
        }
        _ if cmd.flag("minimal").is_some() => vec![Format::Terse],
        _ => vec![Format::Normal],
    };
    if let Some(Some(v)) = cmd.flag("terse-version") {
        if v != "3" {
            return Err(bad(format!(
                "--terse-version={}: iolab prints terse version 3 only",
                clip(v)
            )));
        }
    }
    if cmd.flag("repeat").is_some() {
        return Err(bad(
            "--repeat is not available under MPI: run mpirun once per repeat".to_string(),
        ));
    }
    let output = cmd.flag("output").flatten().map(str::to_string);
    let keep_args = StoreArgs::from_cmdline(&cmd).map_err(bad)?;
    let db_files = keep_args.db_files();
    output::check_opt(output.as_deref().map(Path::new), &db_files)
        .map_err(|m| bad(m.to_string()))?;
    let mut ctx = Context::from_env(iolab_core::probe::keyword_host());
    ctx.rank = world.rank;
    ctx.nranks = world.size;
    let jobs = resolve::load(&cmd, &ctx).map_err(|e| bad(e.to_string()))?;
    let plan = plan::build(&jobs).map_err(|e| bad(e.to_string()))?;
    keep::check_plan_files(&plan, &db_files).map_err(bad)?;
    // Rank 0 alone keeps the result.
    let store = if world.is_root() {
        keep_args.open().map_err(|e| bad(crate::said_once(&e)))?
    } else {
        None
    };
    let opts = crate::run::render_opts(&jobs);
    Ok(Prepared {
        stonewall: cmd.flag("mpi-stonewall").is_some(),
        plan,
        jobs,
        formats,
        output,
        keep_args,
        store,
        opts,
    })
}

/// The preamble printed once for all ranks: its "Starting N threads" line
/// counts every rank's threads and says over how many ranks (fio's client
/// mode prints one such line per server instead, prefixed by its name).
fn on_ranks(preamble: &str, ranks: u32) -> String {
    preamble
        .lines()
        .map(|l| {
            if l.starts_with("Starting ") {
                format!(
                    "{l} ({ranks} MPI rank{})\n",
                    if ranks == 1 { "" } else { "s" }
                )
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// The run on every rank, the merge and report on rank 0.
fn measure(mut p: Prepared, world: &World) -> Result<Status> {
    let root = world.is_root();
    let mut out = if root {
        let mut out = Out::open(p.output.as_deref().map(Path::new))?;
        if p.formats.contains(&Format::Normal) {
            let stubs: Vec<JobResult> = p
                .plan
                .jobs
                .iter()
                .map(|j| JobResult {
                    name: j.name.clone(),
                    groupid: j.groupid,
                    setup: j.setup(),
                    // Each job runs on every rank, as numjobs clones do.
                    clones: world.size,
                    ..Default::default()
                })
                .collect();
            out.write(&on_ranks(&render_preamble(&stubs, &p.opts), world.size))?;
        }
        Some(out)
    } else {
        None
    };
    interrupt::watch(None);
    // Every rank says what it lays out; rank 0 prints it all at the
    // phase's barrier, where the normal format is asked for.
    let normal = p.formats.contains(&Format::Normal);
    let laying_out = RefCell::new(String::new());
    let mut notice = |n: Notice| {
        if normal {
            let Notice::LayingOut { job, files, bytes } = n;
            laying_out
                .borrow_mut()
                .push_str(&laying_out_line(&job, files, bytes));
        }
    };
    let mut ranks = MpiRanks::new(world, p.stonewall, &laying_out, out.as_mut());
    let progress = Progress::new(&p.plan);
    let outcome = run_ranked(&p.plan, &STOP, &mut notice, &progress, &mut ranks);
    let (result, failure) = match outcome {
        Ok(o) => (o.result, o.failure),
        Err(e) => (Default::default(), Some(e.to_string())),
    };
    let laid = std::mem::take(&mut ranks.laid);
    let mine = RankRun {
        rank: world.rank,
        host: world.host.clone(),
        result,
        failure,
        phases: ranks.spans,
    };
    let text = serde_json::to_string(&mine)?;
    let store = p.store.take();
    let status = match (world.gather_text(&text), out.as_mut()) {
        (Some(texts), Some(out)) => report(&p, store, &texts, &laid, out),
        _ => Ok(Status::Success),
    };
    // Every rank ends with rank 0's status (mpirun's is the worst).
    let agreed = world.agree_status(*status.as_ref().unwrap_or(&Status::Failed));
    status.map(|_| agreed)
}

/// Rank 0: the ranks' results merged, reported and kept.
fn report(
    p: &Prepared,
    store: Option<iolab_store::Store>,
    texts: &[String],
    laid: &str,
    out: &mut Out,
) -> Result<Status> {
    let mut runs = Vec::with_capacity(texts.len());
    for (rank, t) in texts.iter().enumerate() {
        let run: RankRun = serde_json::from_str(t)
            .map_err(|e| anyhow::anyhow!("the result of rank {rank} cannot be read: {e}"))?;
        runs.push(run);
    }
    let merged = merge_ranks(&runs, &reported_phases(&p.plan), p.stonewall);
    for f in &p.formats {
        out.write(&render(&merged, &p.opts, *f))?;
    }
    out.finish()?;
    let mut status = Status::Success;
    let measured = merged.did_io();
    if !merged.interrupted && measured {
        let mut record = keep::record(Kind::Run, &crate::run::plan_target(&p.plan), &p.keep_args);
        // With the layout lines, so that `show` prints them as the run
        // did.
        record.result_json = crate::kinds::run_record_json(&merged, &p.opts, &[], "", laid)?;
        record.job_text = p.jobs.to_job_text();
        record.metrics = iolab_store::run_metrics(&merged);
        record.warnings = iolab_store::run_flags(&merged);
        status = keep::insert(store, &record).status();
    }
    if merged.interrupted {
        eprintln!("iolab: interrupted; the results above are partial");
        return Ok(Status::Failed);
    }
    let mut failed = false;
    for r in &runs {
        if let Some(f) = &r.failure {
            eprintln!("iolab: {}: {f}", World::who(u64::from(r.rank), &r.host));
            failed = true;
        }
    }
    if !measured && !p.keep_args.no_store && !failed {
        eprintln!("iolab: no job did any I/O; the run is not stored");
    }
    if failed {
        return Ok(Status::Failed);
    }
    Ok(status)
}
