//! Keeping results: the `--db`, `--no-store` and `--tag` flags every
//! measuring subcommand takes, the provenance of a result (from the
//! environment probe), the insert into the results database, and what
//! happens when it fails: the result goes to a file beside the database,
//! for `iolab import`, and the command exits 1. Also the check that no
//! file a command writes (its `--output`, a job's data file) is the
//! database or one of its `-wal`/`-shm` files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use clap::Args;
use iolab_store::{DbFiles, Kind, Provenance, Record, Store};

use crate::exit::Status;

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
    /// The flags' names, as fio's command line (`iolab run`, `iolab
    /// sweep`) takes them.
    pub const FLAGS: [&'static str; 3] = ["db", "no-store", "tag"];

    /// The same flags on fio's command line (`iolab run`), which clap does
    /// not parse.
    pub fn from_cmdline(cmd: &iolab_spec::cmdline::CmdLine) -> StoreArgs {
        StoreArgs {
            db: cmd.flag("db").flatten().map(PathBuf::from),
            no_store: cmd.flag("no-store").is_some(),
            tags: cmd
                .flag_values("tag")
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }

    /// The database path, unless storing is off.
    pub fn path(&self) -> Option<PathBuf> {
        if self.no_store {
            return None;
        }
        self.db.clone().or_else(iolab_store::default_path)
    }

    /// The database files no output or job file may be: those of the
    /// database in use and of the default one (`--no-store` or not).
    pub fn db_files(&self) -> DbFiles {
        db_files(self.db.as_deref())
    }

    /// Opens the database now, so that a bad one (or one that cannot be
    /// written) is refused before the measurement rather than after it.
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

/// The provenance of a result measured on `target`: the environment
/// probe's facts, stamped with the time.
pub fn provenance(target: &Path) -> Provenance {
    Provenance {
        time: iolab_store::time::now_rfc3339(),
        ..iolab_core::probe::probe(target)
    }
}

/// The host's facts alone (no target, mount or device), stamped with the
/// time.
pub fn host_provenance() -> Provenance {
    Provenance {
        time: iolab_store::time::now_rfc3339(),
        ..iolab_core::probe::host()
    }
}

/// A new record of `kind` measured on `target`, with its provenance, the
/// tags and the command line.
pub fn record(kind: Kind, target: &Path, args: &StoreArgs) -> Record {
    record_with(kind, provenance(target), args)
}

/// A new record of `kind` with the provenance already taken (the one a
/// report printed), the tags and the command line.
pub fn record_with(kind: Kind, provenance: Provenance, args: &StoreArgs) -> Record {
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

/// The files of the database `explicit` (`--db`) and of the default
/// database.
pub fn db_files(explicit: Option<&Path>) -> DbFiles {
    let mut dbs: Vec<PathBuf> = explicit.map(Path::to_path_buf).into_iter().collect();
    dbs.extend(iolab_store::default_path());
    DbFiles::of(dbs)
}

/// Refuses a file a command would write that is a database file: `what`
/// names it in the message (`--output`, `job data file`).
pub fn check_not_db(what: &str, path: &Path, db: &DbFiles) -> Result<(), String> {
    match db.find(path) {
        None => Ok(()),
        Some(file) => Err(format!(
            "{what} `{}` is the results database file `{}`; writing it would destroy the \
             stored results: choose another file",
            path.display(),
            file.display()
        )),
    }
}

/// Refuses a run whose plan writes to a database file: a data file
/// (`filename=`, `directory=` leading to it) or a log file
/// (`write_bw_log=` and the others).
pub fn check_plan_files(plan: &iolab_core::plan::Plan, db: &DbFiles) -> Result<(), String> {
    for f in &plan.files {
        check_not_db("the job's data file", &f.path, db)?;
    }
    for logs in plan.jobs.iter().filter_map(|j| j.logs.as_ref()) {
        let kinds: [(&Option<String>, &[&str]); 4] = [
            (&logs.bw, &["bw"]),
            (&logs.iops, &["iops"]),
            (&logs.lat, &["slat", "clat", "lat"]),
            (&logs.hist, &["clat_hist"]),
        ];
        for (prefix, names) in kinds {
            let Some(prefix) = prefix else { continue };
            for kind in names {
                check_not_db("the job's log file", &logs.path(prefix, kind), db)?;
            }
        }
    }
    Ok(())
}

/// What became of a measured result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// In the database, under this id.
    Stored(i64),
    /// Not kept: `--no-store`.
    NotAsked,
    /// The database did not take it; it is in this file (or nowhere).
    Unstored(Option<PathBuf>),
}

impl Kept {
    /// The exit status of a command that measured successfully: 1 when
    /// the result could not be stored.
    pub fn status(&self) -> Status {
        match self {
            Kept::Unstored(_) => Status::Failed,
            _ => Status::Success,
        }
    }
}

/// Set when the program runs as `fio`: then, as fio, it says nothing on
/// stderr about where a result went (tools that drive fio may take any
/// stderr for a failure).
static SILENT: AtomicBool = AtomicBool::new(false);

/// Keeps the "stored as result" line off stderr (the program runs as fio).
pub fn silence() {
    SILENT.store(true, Ordering::Relaxed);
}

/// Says on stderr, once, that this machine emulates its CPU, so the
/// figures just printed are not a device's (quick and compare put the
/// same note among their table's notes). Nothing when running as fio.
pub fn note_emulation(command: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if SILENT.load(Ordering::Relaxed) || SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    if let Some(note) = iolab_core::virt::detect().and_then(|v| v.note()) {
        eprintln!("iolab {command}: note: {note}");
    }
}

/// Inserts `record` and says on stderr which result it became, whatever
/// the output format, so that a script can find it (`iolab show N`).
/// When the database does not take it (a lock held past the busy
/// timeout, a full disk), the record is written to a new file beside the
/// database (else in the current or temporary directory) and the message
/// says where and how to import it.
pub fn insert(store: Option<Store>, record: &Record) -> Kept {
    let Some(mut store) = store else {
        return Kept::NotAsked;
    };
    let err = match store.insert(record) {
        Ok(id) => {
            if !SILENT.load(Ordering::Relaxed) {
                eprintln!("iolab: stored as result {id} (iolab show {id})");
            }
            return Kept::Stored(id);
        }
        Err(e) => e,
    };
    let db = store.path().to_path_buf();
    drop(store);
    eprintln!(
        "iolab: the result could not be stored in `{}`: {err}",
        db.display()
    );
    match iolab_store::write_unstored(&db, &err.to_string(), record) {
        Ok(file) => {
            eprintln!(
                "iolab: the result was written to `{}`; store it later with \
                 `iolab import {}{}`",
                file.display(),
                shell_word(&file.display().to_string()),
                shell_db_flag(&db),
            );
            Kept::Unstored(Some(file))
        }
        Err(e) => {
            eprintln!("iolab: the result could not be written to a file either ({e}); it is lost");
            Kept::Unstored(None)
        }
    }
}

/// ` --db PATH` when `db` is not the default database.
fn shell_db_flag(db: &Path) -> String {
    if iolab_store::default_path().as_deref() == Some(db) {
        String::new()
    } else {
        format!(" --db {}", shell_word(&db.display().to_string()))
    }
}

/// `a` quoted for a shell when it needs it.
fn shell_word(a: &str) -> String {
    if a.is_empty()
        || a.contains(|c: char| c.is_whitespace() || "'\"$\\`;&|<>()*?![]{}#~".contains(c))
    {
        format!("'{}'", a.replace('\'', r"'\''"))
    } else {
        a.to_string()
    }
}
