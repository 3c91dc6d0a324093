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
use iolab_spec::cmdline::{self, Arity, CmdLine, ProgramFlag};
use iolab_spec::SpecError;
use iolab_store::{DbFiles, Kind, Provenance, Record, Store};

use crate::exit::Status;

/// Where a result goes: the values of the store flags.
#[derive(Debug, Clone, Default)]
pub struct StoreArgs {
    pub db: Option<PathBuf>,
    pub no_store: bool,
    pub tags: Vec<String>,
}

/// One store flag: its name, its value's name (none for a bare flag),
/// whether it repeats, its help, and what a value does to [`StoreArgs`]
/// (the check of a bad value with it). Both command-line parsers are built
/// from [`STORE_FLAGS`]: clap's (`impl clap::Args for StoreArgs`) for the
/// subcommands it parses, fio's (`fio_cmdline`) for `iolab run` and
/// `iolab sweep`, so their help and their behaviour are the same.
pub struct StoreFlag {
    pub name: &'static str,
    pub value_name: Option<&'static str>,
    pub repeats: bool,
    pub help: &'static str,
    /// Takes the flag's value (None for a bare flag) into the arguments,
    /// or says what is wrong with it.
    set: fn(&mut StoreArgs, Option<&str>) -> Result<(), String>,
}

/// `--db`, which the commands that read the database back take too
/// (`readback::DbArg`).
pub const DB_FLAG: StoreFlag = StoreFlag {
    name: "db",
    value_name: Some("PATH"),
    repeats: false,
    help: "Results database (default $IOLAB_DB, else $XDG_DATA_HOME/iolab/results.db, \
           else ~/.local/share/iolab/results.db)",
    set: |a, v| {
        let v = v.unwrap_or_default();
        if v.is_empty() {
            return Err("an empty path".into());
        }
        a.db = Some(PathBuf::from(v));
        Ok(())
    },
};

/// The flags every measuring subcommand takes.
pub const STORE_FLAGS: [StoreFlag; 3] = [
    DB_FLAG,
    StoreFlag {
        name: "no-store",
        value_name: None,
        repeats: false,
        help: "Do not keep the result",
        set: |a, _| {
            a.no_store = true;
            Ok(())
        },
    },
    StoreFlag {
        name: "tag",
        value_name: Some("TEXT"),
        repeats: true,
        help: "Label the kept result (repeatable)",
        set: |a, v| {
            let v = v.unwrap_or_default();
            if v.trim().is_empty() {
                return Err("an empty tag".into());
            }
            if v.chars().any(char::is_control) {
                return Err("a tag with a control character (a line break, a tab...)".into());
            }
            a.tags.push(v.to_string());
            Ok(())
        },
    },
];

impl StoreFlag {
    /// The flag as fio's command line parser takes it.
    const fn program_flag(&self) -> ProgramFlag {
        ProgramFlag {
            name: self.name,
            arity: match self.value_name {
                Some(_) => Arity::Required,
                None => Arity::None,
            },
            help: self.help,
            fio_only: false,
        }
    }

    /// The flag as clap takes it: a value of the same name and check, the
    /// last one winning unless it repeats.
    pub fn clap_arg(&self) -> clap::Arg {
        let arg = clap::Arg::new(self.name).long(self.name).help(self.help);
        let Some(value_name) = self.value_name else {
            return arg.action(clap::ArgAction::SetTrue);
        };
        let set = self.set;
        let arg = arg.value_name(value_name).value_parser(move |v: &str| {
            set(&mut StoreArgs::default(), Some(v)).map(|()| v.to_string())
        });
        if self.repeats {
            arg.action(clap::ArgAction::Append)
        } else {
            arg.action(clap::ArgAction::Set).overrides_with(self.name)
        }
    }

    /// Takes the flag's values as clap parsed them into `args`.
    pub fn take(&self, args: &mut StoreArgs, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        let invalid = |e: String| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e);
        if self.value_name.is_none() {
            if m.get_flag(self.name) {
                (self.set)(args, None).map_err(invalid)?;
            }
            return Ok(());
        }
        for v in m.get_many::<String>(self.name).into_iter().flatten() {
            (self.set)(args, Some(v)).map_err(invalid)?;
        }
        Ok(())
    }

    /// The flag's lines in a hand-written usage text: `  --NAME=VALUE`
    /// (`sep` between name and value), the help from column `col`,
    /// lowercase as such texts are, wrapped before column 79.
    fn usage_lines(&self, sep: char, col: usize) -> String {
        let mut head = format!("  --{}", self.name);
        if let Some(v) = self.value_name {
            head.push(sep);
            head.push_str(v);
        }
        let mut help = self.help.to_string();
        if let Some(first) = help.get(..1) {
            help.replace_range(..1, &first.to_lowercase());
        }
        let mut out = String::new();
        let mut line = if head.len() + 1 < col {
            format!("{head:col$}")
        } else {
            out.push_str(&head);
            out.push('\n');
            " ".repeat(col)
        };
        for word in help.split_whitespace() {
            if line.len() > col && line.len() + 1 + word.len() > 78 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(col);
            }
            if line.len() > col {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
        out
    }
}

/// The store flags as fio's command line parser takes them.
const PROGRAM_FLAGS: [ProgramFlag; 3] = [
    STORE_FLAGS[0].program_flag(),
    STORE_FLAGS[1].program_flag(),
    STORE_FLAGS[2].program_flag(),
];

/// fio's command line (`iolab run`, `iolab sweep`) with the store flags
/// besides fio's own.
pub fn fio_cmdline(args: &[String]) -> Result<CmdLine, SpecError> {
    cmdline::parse_args_with(args, &PROGRAM_FLAGS)
}

/// The store flags' lines for a hand-written usage text (see
/// [`StoreFlag::usage_lines`]).
pub fn usage_lines(sep: char, col: usize) -> String {
    STORE_FLAGS
        .iter()
        .map(|f| f.usage_lines(sep, col))
        .collect()
}

impl clap::Args for StoreArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        STORE_FLAGS.iter().fold(cmd, |c, f| c.arg(f.clap_arg()))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for StoreArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut args = StoreArgs::default();
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        STORE_FLAGS.iter().try_for_each(|f| f.take(self, m))
    }
}

impl StoreArgs {
    /// The store flags given on fio's command line (`iolab run`, `iolab
    /// sweep`); a bad value is said as `--NAME: why`.
    pub fn from_cmdline(cmd: &CmdLine) -> Result<StoreArgs, String> {
        let mut args = StoreArgs::default();
        for used in &cmd.flags {
            if let Some(f) = STORE_FLAGS.iter().find(|f| f.name == used.name) {
                (f.set)(&mut args, used.value.as_deref())
                    .map_err(|why| format!("--{}: {why}", f.name))?;
            }
        }
        Ok(args)
    }

    /// Whether `name` is a store flag.
    pub fn is_flag(name: &str) -> bool {
        STORE_FLAGS.iter().any(|f| f.name == name)
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
        let Some(p) = self.path() else {
            return Ok(None);
        };
        let context = || {
            format!(
                "results database `{}` (use --db PATH or --no-store)",
                p.display()
            )
        };
        let real = db_name(&p)
            .map_err(anyhow::Error::msg)
            .with_context(context)?;
        Ok(Some(Store::open(&real).with_context(context)?))
    }
}

/// The name SQLite opens the database `path` by: its symbolic links, in
/// every component, followed as the rule of [`iolab_core::links`] allows,
/// absolute, none left in it. SQLite is then told to follow no link
/// (`SQLITE_OPEN_NOFOLLOW`), so one planted since this check is refused
/// rather than followed. Refused here, with a message naming the link:
/// another user's link in a shared sticky directory anywhere in the name
/// (`--db /tmp/r.db` or `--db /tmp/evil/r.db` planted by someone else),
/// which would make iolab create or write the file it leads to; and a
/// link at the `-wal`, `-shm` or `-journal` name beside the database,
/// which SQLite never follows (it opens them `O_NOFOLLOW`). Links of one's
/// own (a database kept elsewhere) are followed.
pub fn db_name(path: &Path) -> Result<PathBuf, String> {
    let real = iolab_core::links::resolve(path).map_err(|e| e.to_string())?;
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut side = real.clone().into_os_string();
        side.push(suffix);
        let side = PathBuf::from(side);
        if !std::fs::symlink_metadata(&side).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        return Err(match iolab_core::links::resolve(&side) {
            Err(e) if iolab_core::links::is_foreign(&e) => e.to_string(),
            _ => format!(
                "`{}` is a symbolic link: SQLite opens no -wal, -shm or -journal file \
                 through one (remove it)",
                side.display()
            ),
        });
    }
    Ok(real)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_where_its_own_links_lead_and_no_link_beside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = &std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(d.join("real")).unwrap();
        std::os::unix::fs::symlink("real", d.join("via")).unwrap();
        // The links of one's own, in the middle and at the name, are
        // followed: SQLite gets a name without links.
        std::os::unix::fs::symlink("kept.db", d.join("real/r.db")).unwrap();
        assert_eq!(
            db_name(&d.join("via/r.db")).unwrap(),
            d.join("real/kept.db")
        );
        // A link at the -wal name beside the file: refused, named.
        std::os::unix::fs::symlink("elsewhere", d.join("real/kept.db-wal")).unwrap();
        let e = db_name(&d.join("via/r.db")).unwrap_err();
        assert!(
            e.contains("real/kept.db-wal` is a symbolic link") && e.contains("SQLite opens no"),
            "{e}"
        );
    }
}
