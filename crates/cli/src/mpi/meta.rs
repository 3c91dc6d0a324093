//! `iolab meta` under MPI, as mdtest runs: every rank works in a
//! directory of its own (`$rank` in DIR names a rank's directory), each
//! phase starts on all ranks after a barrier, and rank 0 merges the
//! phases: operations added up, wall time from the earliest start to the
//! latest end across ranks (a phase's rate is all operations over it),
//! latency histograms added bin by bin.
//!
//! The barriers carry each rank's state: a rank that stops (it failed, or
//! finished) keeps answering them until every rank has stopped, and a
//! rank told that another failed stops its current phase at once, so that
//! every rank takes part in the same number of barriers.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use iolab_core::meta::{run_meta_observed, MetaOptions};
use iolab_report::compare::CompareFormat;
use iolab_report::meta::render_meta;
use iolab_stats::ranks::{merge_meta_ranks, RankMeta};
use iolab_store::Kind;

use super::phases::now_ns;
use super::{agree_to_start, digest, World};
use crate::exit::Status;
use crate::keep::{self, StoreArgs};
use crate::output;

/// A rank's state at a barrier.
const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const FAILED: u8 = 2;

/// How the command line asked for the run.
pub struct MetaRun<'a> {
    pub opts: MetaOptions,
    pub format: CompareFormat,
    pub repeats: bool,
    pub output: Option<&'a Path>,
    pub store: &'a StoreArgs,
}

pub fn run(mut m: MetaRun, world: &World) -> Result<Status> {
    // `$rank` and `$nranks` in DIR: a directory per rank.
    let dir = m
        .opts
        .dir
        .to_string_lossy()
        .replace("$nranks", &world.size.to_string())
        .replace("$rank", &world.rank.to_string());
    m.opts.dir = PathBuf::from(dir);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let prepared = prepare(&m, world);
    let error = prepared.as_ref().err().cloned();
    if let Some(status) = agree_to_start(world, &digest(&refs), error) {
        return Ok(status);
    }
    let Ok(store) = prepared else {
        return Ok(Status::Failed);
    };

    let halt = AtomicBool::new(false);
    let mut starts = Vec::new();
    let mut halted = false;
    let mut on_phase = |_: usize, _: usize, _| {
        let (worst, _) = world.max_min_u8(RUNNING);
        if worst == FAILED {
            // Another rank failed: this phase stops at its first step.
            halt.store(true, Ordering::Relaxed);
            halted = true;
        }
        starts.push(now_ns());
    };
    let outcome = run_meta_observed(&m.opts, &halt, &mut on_phase);
    let (result, state) = match outcome {
        Ok(r) => (r, FINISHED),
        Err(f) => (*f.partial, FAILED),
    };
    // Answer the others' barriers until every rank has stopped.
    while world.max_min_u8(state).1 == RUNNING {}
    let mine = RankMeta {
        rank: world.rank,
        host: world.host.clone(),
        result,
        starts_ns: starts,
        halted,
    };
    let status = match world.gather_text(&serde_json::to_string(&mine)?) {
        Some(texts) => report(&m, store, &texts),
        None => Ok(Status::Success),
    };
    let agreed = world.agree_status(*status.as_ref().unwrap_or(&Status::Failed));
    status.map(|_| agreed)
}

/// What is checked before anything is made: an error is the status to
/// end with and what to say.
fn prepare(m: &MetaRun, world: &World) -> Result<Option<iolab_store::Store>, (Status, String)> {
    if m.repeats {
        return Err((
            Status::BadInput,
            "--repeat is not available under MPI: run mpirun once per repeat".to_string(),
        ));
    }
    output::check_opt(m.output, &m.store.db_files()).map_err(|e| (Status::BadInput, e))?;
    if world.is_root() {
        m.store
            .open()
            .map_err(|e| (Status::BadInput, format!("{e:#}")))
    } else {
        Ok(None)
    }
}

/// Rank 0: the ranks merged, printed and kept.
fn report(m: &MetaRun, store: Option<iolab_store::Store>, texts: &[String]) -> Result<Status> {
    let mut runs = Vec::with_capacity(texts.len());
    for (rank, t) in texts.iter().enumerate() {
        let run: RankMeta = serde_json::from_str(t)
            .map_err(|e| anyhow::anyhow!("the result of rank {rank} cannot be read: {e}"))?;
        runs.push(run);
    }
    let merged = merge_meta_ranks(&runs);
    let failed: Vec<&RankMeta> = runs
        .iter()
        .filter(|r| !r.halted && r.result.failure.is_some())
        .collect();
    if !merged.phases.is_empty() {
        output::emit(m.output, &render_meta(&merged, m.format))?;
    }
    for r in &failed {
        eprintln!(
            "iolab meta: {}: {}",
            World::who(u64::from(r.rank), &r.host),
            r.result.failure.as_deref().unwrap_or("")
        );
    }
    if !failed.is_empty() || merged.failure.is_some() {
        return Ok(Status::Failed);
    }
    let mut record = keep::record(Kind::Meta, &m.opts.dir, m.store);
    record.result_json = serde_json::to_string(&merged)?;
    record.metrics = crate::meta::metrics(&merged);
    Ok(keep::insert(store, &record).status())
}
