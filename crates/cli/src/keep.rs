//! Keeping results: the `--db`, `--no-store` and `--tag` flags every
//! measuring subcommand takes, the provenance of a result (from the
//! environment probe), and the insert into the results database.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;
use iolab_core::probe::Environment;
use iolab_store::{Kind, Provenance, Record, Store};

/// Where a result goes.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Results database (default $IOLAB_DB, else
    /// $XDG_DATA_HOME/iolab/results.db, else ~/.local/share/iolab/results.db)
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Do not keep this result
    #[arg(long)]
    pub no_store: bool,
    /// Label the stored result (repeatable)
    #[arg(long = "tag", value_name = "TEXT")]
    pub tags: Vec<String>,
}

impl StoreArgs {
    /// The database path, unless storing is off.
    pub fn path(&self) -> Option<PathBuf> {
        if self.no_store {
            return None;
        }
        self.db.clone().or_else(iolab_store::default_path)
    }

    /// Opens the database now, so that a bad one is refused before the
    /// measurement rather than after it.
    pub fn open(&self) -> Result<Option<Store>> {
        match self.path() {
            None => Ok(None),
            Some(p) => Ok(Some(Store::open(&p).with_context(|| {
                format!(
                    "results database `{}` (use --db PATH or --no-store)",
                    p.display()
                )
            })?)),
        }
    }
}

/// The provenance of a result measured on `target`.
pub fn provenance(target: &Path) -> Provenance {
    let env = Environment::probe(target);
    Provenance {
        time: iolab_store::time::now_rfc3339(),
        host: env.host,
        kernel: env.kernel,
        cpu_model: env.cpu_model,
        cpu_count: env.cpu_count,
        memory_bytes: env.memory_bytes,
        iolab_version: env!("CARGO_PKG_VERSION").to_string(),
        target: env.target,
        fs_type: env.fs_type,
        mount_options: env.mount_options,
        mount_source: env.mount_source,
        block_device: env.block_device,
        device_model: env.device_model,
        rotational: env.rotational,
        scheduler: env.scheduler,
        device_size_bytes: env.device_size_bytes,
    }
}

/// A new record of `kind` measured on `target`, with its provenance, the
/// tags and the command line.
pub fn record(kind: Kind, target: &Path, args: &StoreArgs) -> Record {
    let provenance = provenance(target);
    Record {
        target: provenance.target.clone(),
        provenance,
        tags: args.tags.clone(),
        command_line: command_line(),
        ..Record::new(kind)
    }
}

/// The command line as typed, each argument quoted when it needs it.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$\\".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Inserts `record`; returns its id. A failure to store is reported but
/// does not fail the measurement, which has been printed already.
pub fn insert(store: Option<Store>, record: &Record) -> Option<i64> {
    let mut store = store?;
    match store.insert(record) {
        Ok(id) => Some(id),
        Err(e) => {
            eprintln!(
                "iolab: warning: the result was not stored in `{}`: {e}",
                store.path().display()
            );
            None
        }
    }
}
