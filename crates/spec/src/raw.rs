//! Job text before it is typed: sections of `name[=value]` lines, each with
//! the place it was written. Job files and command lines both produce this
//! shape; `resolve` turns it into `JobSpec`s.

use crate::error::Location;

/// One option as written: `bs=4k`, or a bare `time_based`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    /// The name as written (case kept for messages).
    pub name: String,
    /// The value after `=`, trimmed; None for a bare option.
    pub value: Option<String>,
    pub location: Location,
}

/// A `[section]` of a job file, or a `--name` job of the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSection {
    pub name: String,
    pub location: Location,
    pub options: Vec<RawOption>,
}

impl RawSection {
    /// `[global]` holds defaults for the jobs after it.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}
