//! `iolab import FILE`: stores a result that a measuring command could not
//! store (the file it wrote beside the database, `*.unstored-*.json`). The
//! file is read and checked before the database is opened: one that is not
//! an unstored iolab result is refused with exit 2. Nothing is removed,
//! the file included; the same result is not stored twice.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use iolab_store::{read_unstored, Store};

use crate::exit::Status;
use crate::output;
use crate::readback::DbArg;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The file a command wrote when the database did not take its result
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub db: DbArg,
}

pub fn run(args: &ImportArgs) -> Result<Status> {
    let record = match read_unstored(&args.file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("iolab: {e}");
            return Ok(Status::BadInput);
        }
    };
    let path = args.db.path()?;
    let refused = |e: &dyn std::fmt::Display| {
        eprintln!(
            "iolab: results database `{}` (use --db PATH): {e}",
            path.display()
        );
        Status::BadInput
    };
    let real = match crate::keep::db_name(&path) {
        Ok(real) => real,
        Err(e) => return Ok(refused(&e)),
    };
    let mut store = match Store::open(&real) {
        Ok(s) => s,
        Err(e) => return Ok(refused(&e)),
    };
    match store.find_same(&record) {
        Ok(Some(id)) => {
            eprintln!(
                "iolab: {}: already stored as result {id} (iolab show {id}); nothing was added",
                args.file.display()
            );
            return Ok(Status::BadInput);
        }
        Ok(None) => {}
        Err(e) => return Ok(refused(&e)),
    }
    match store.insert(&record) {
        Ok(id) => {
            output::emit(
                None,
                &format!(
                    "stored as result {id} (iolab show {id}); {} may be removed\n",
                    args.file.display()
                ),
            )?;
            Ok(Status::Success)
        }
        Err(e) => {
            eprintln!(
                "iolab: {}: not stored: {e}; the file was left as it was",
                args.file.display()
            );
            Ok(Status::Failed)
        }
    }
}
