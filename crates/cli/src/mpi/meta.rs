//! `iolab meta` under MPI, as mdtest runs: every rank works in a
//! directory of its own (`$rank` in DIR names a rank's directory; mdtest
//! `-u`), or with `--mpi-shared-dir` all ranks in one directory that rank
//! 0 makes (mdtest's default; each rank's number is in its files' names);
//! each phase starts on all ranks after a barrier, and rank 0 merges the
//! phases: operations added up, wall time from the earliest start to the
//! latest end across ranks (a phase's rate is all operations over it),
//! latency histograms added bin by bin. Ctrl-C (SIGINT or SIGTERM, which
//! mpirun passes on) stops every rank at its next operation; the
//! directories are removed.
//!
//! The barriers carry each rank's state: a rank that stops (it failed, or
//! finished) keeps answering them until every rank has stopped, and a
//! rank told that another failed stops its current phase at once, so that
//! every rank takes part in the same number of barriers.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::Result;
use iolab_core::meta::{
    make_shared_dir, remove_shared_dir, run_meta_observed, run_meta_shared, MetaOptions, SharedDir,
};
use iolab_report::compare::CompareFormat;
use iolab_report::meta::render_meta;
use iolab_stats::ranks::{merge_meta_ranks, RankMeta};
use iolab_store::Kind;

use super::phases::now_ns;
use super::{agree_to_start, digest, World};
use crate::exit::Status;
use crate::interrupt::{self, STOP};
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
    /// Every rank in one directory (mdtest without `-u`).
    pub shared_dir: bool,
}

pub fn run(mut m: MetaRun, world: &World) -> Result<Status> {
    let per_rank = m.opts.dir.to_string_lossy().contains("$rank");
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
    let prepared = if m.shared_dir && per_rank {
        Err((
            Status::BadInput,
            "--mpi-shared-dir puts every rank in one directory, and DIR names one per rank \
             ($rank): drop one or the other"
                .to_string(),
        ))
    } else {
        prepare(&m, world)
    };
    let error = prepared.as_ref().err().cloned();
    if let Some(status) = agree_to_start(world, &digest(&refs), error) {
        return Ok(status);
    }
    let Ok(store) = prepared else {
        return Ok(Status::Failed);
    };

    interrupt::watch(None);
    let shared = match share_dir(&m, world) {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let mut starts = Vec::new();
    let mut halted = false;
    let mut on_phase = |_: usize, _: usize, _| {
        let (worst, _) = world.max_min_u8(RUNNING);
        if worst == FAILED {
            // Another rank failed: this phase stops at its first step.
            STOP.store(true, Ordering::Relaxed);
            halted = true;
        }
        starts.push(now_ns());
    };
    let outcome = match &shared {
        Some(s) => run_meta_shared(&m.opts, s, &STOP, &mut on_phase),
        None => run_meta_observed(&m.opts, &STOP, &mut on_phase),
    };
    let (mut result, state) = match outcome {
        Ok(r) => (r, FINISHED),
        Err(f) => (*f.partial, FAILED),
    };
    // Answer the others' barriers until every rank has stopped.
    while world.max_min_u8(state).1 == RUNNING {}
    // Every rank is done with the shared directory: rank 0 removes it,
    // with whatever runs that failed or were stopped left in it.
    if let Some(s) = shared.as_ref().filter(|s| s.makes_tree) {
        if let Err(e) = remove_shared_dir(&s.path) {
            result.failure.get_or_insert_with(|| e.to_string());
        }
    }
    let interrupted = iolab_engine::host::interrupt_count() > 0;
    let mine = RankMeta {
        rank: world.rank,
        host: world.host.clone(),
        result,
        starts_ns: starts,
        // Stopped by another rank's failure, not by its own.
        halted: halted && !interrupted,
    };
    let status = match world.gather_text(&serde_json::to_string(&mine)?) {
        Some(texts) => report(&m, store, &texts),
        None => Ok(Status::Success),
    };
    let agreed = world.agree_status(*status.as_ref().unwrap_or(&Status::Failed));
    status.map(|_| agreed)
}

/// With `--mpi-shared-dir`: rank 0 makes the run's directory and every
/// rank learns its name; or the status every rank ends with when it
/// could not be made (rank 0 says why).
fn share_dir(m: &MetaRun, world: &World) -> Result<Option<SharedDir>, Status> {
    if !m.shared_dir {
        return Ok(None);
    }
    let (made, status) = if world.is_root() {
        match make_shared_dir(&m.opts) {
            Ok(p) => (p.to_string_lossy().into_owned(), Status::Success),
            Err(e) => {
                eprintln!(
                    "iolab meta: {}: {e}",
                    World::who(u64::from(world.rank), &world.host)
                );
                let bad = if e.is_invalid() {
                    Status::BadInput
                } else {
                    Status::Failed
                };
                (String::new(), bad)
            }
        }
    } else {
        (String::new(), Status::Failed)
    };
    let path = world.broadcast_text(&made);
    if path.is_empty() {
        return Err(world.agree_status(status));
    }
    Ok(Some(SharedDir {
        path: PathBuf::from(path),
        rank: world.rank,
        makes_tree: world.is_root(),
    }))
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
            .map_err(|e| (Status::BadInput, crate::said_once(&e)))
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
    let mut merged = merge_meta_ranks(&runs);
    if let Some(r) = merged.ranks.as_mut() {
        r.shared_dir = m.shared_dir;
    }
    let failed: Vec<&RankMeta> = runs
        .iter()
        .filter(|r| !r.halted && r.result.failure.is_some())
        .collect();
    if !merged.phases.is_empty() {
        output::emit(m.output, &render_meta(&merged, m.format))?;
    }
    // One line per cause, naming the ranks it stopped (a Ctrl-C stops
    // them all at once).
    let mut said: Vec<(&str, Vec<String>)> = Vec::new();
    for r in &failed {
        let why = r.result.failure.as_deref().unwrap_or("");
        let who = World::who(u64::from(r.rank), &r.host);
        match said.iter_mut().find(|(w, _)| *w == why) {
            Some((_, whos)) => whos.push(who),
            None => said.push((why, vec![who])),
        }
    }
    for (why, whos) in &said {
        eprintln!("iolab meta: {}: {why}", whos.join(", "));
    }
    if !failed.is_empty() {
        eprintln!("iolab meta: the files the ranks created were removed");
    }
    if !failed.is_empty() || merged.failure.is_some() {
        return Ok(Status::Failed);
    }
    let mut record = keep::record(Kind::Meta, &m.opts.dir, m.store);
    record.result_json = serde_json::to_string(&merged)?;
    record.metrics = crate::meta::metrics(&merged);
    Ok(keep::insert(store, &record).status())
}
