//! `iolab rerun ID [RUN FLAGS...]`: a stored result's job file run again,
//! as `iolab run` runs it. A `run` result keeps its resolved jobs and a
//! `quick` result a job file that replays its suite (stonewalled tests on
//! one file, removed at the end), so both can be run again; the new run is
//! an ordinary `run` result (stored in the same database unless
//! `--no-store`). The job text goes to a file in a new private directory
//! (0700, created exclusively) that is removed afterwards.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use iolab_store::Kind;

use crate::exit::Status;
use crate::readback::DbArg;

/// Runs a stored result's job file again.
#[derive(Args, Debug)]
#[command(after_help = "\
Flags after ID go to `iolab run` (--output-format, --output, --repeat,
--no-store, --tag, ...). The results of run and quick keep a job file that
replays them; a quick result's runs its tests one after the other on one
test file (its metadata pass is no fio job: the file's comment gives the
`iolab meta` line). The new run is stored as a run result.")]
pub struct RerunArgs {
    /// The result's id, as `iolab history` lists it
    pub id: i64,
    #[command(flatten)]
    pub db: DbArg,
    /// Flags for `iolab run`
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub run_args: Vec<String>,
}

pub fn run(args: &RerunArgs) -> Result<Status> {
    let path = args.db.path()?;
    let store = match args.db.open() {
        Ok(s) => s,
        Err(status) => return Ok(status),
    };
    let Some(stored) = store.map(|s| s.get(args.id)).transpose()?.flatten() else {
        eprintln!("iolab: no result {} in {}", args.id, path.display());
        return Ok(Status::BadInput);
    };
    let record = stored.record;
    if !matches!(record.kind, Kind::Run | Kind::Quick) || record.job_text.trim().is_empty() {
        eprintln!(
            "iolab: result {} is a {} result, which keeps no job file to run again; \
             rerun takes run and quick results",
            args.id, record.kind
        );
        return Ok(Status::BadInput);
    }
    let dir = private_dir()?;
    let file = dir.join(format!("result-{}.fio", args.id));
    let outcome = write_new(&file, &record.job_text).and_then(|()| {
        let mut run_args = vec![file.display().to_string()];
        if let Some(db) = &args.db.db {
            run_args.push(format!("--db={}", db.display()));
        }
        run_args.extend(args.run_args.iter().cloned());
        crate::run::run(&run_args)
    });
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir(&dir);
    outcome
}

/// A new directory only this user can enter, in the temporary directory.
fn private_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for n in 0..100u32 {
        let dir = base.join(format!(
            "iolab-rerun-{}-{:08x}",
            std::process::id(),
            stamp.wrapping_add(n)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot create a directory in {}: {e}",
                    base.display()
                ))
            }
        }
    }
    Err(anyhow::anyhow!(
        "cannot create a new directory in {}",
        base.display()
    ))
}

/// Writes `text` to a file that must not exist yet (no link followed).
fn write_new(path: &Path, text: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
