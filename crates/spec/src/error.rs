//! Errors of the job language. Every error carries the place it came from: a
//! file and line for job files, the argument position for command lines, so
//! that the message reads `FILE:LINE: message` as compilers print it.

use std::fmt;
use std::path::PathBuf;

/// Where a piece of job text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A line of a job file (1-based; 0 for the file as a whole).
    File { path: PathBuf, line: usize },
    /// An argument of the command line (1-based position after `run`).
    Arg { index: usize, text: String },
    /// A value that did not come from the user (a table default, a test).
    Builtin,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File { path, line: 0 } => write!(f, "{}", path.display()),
            Location::File { path, line } => write!(f, "{}:{}", path.display(), line),
            Location::Arg { index, text } => write!(f, "command line argument {index} `{text}`"),
            Location::Builtin => write!(f, "built-in"),
        }
    }
}

/// A problem with a single value, before it is placed in a file or line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl ValueError {
    pub fn new(msg: impl Into<String>) -> Self {
        ValueError(msg.into())
    }
}

/// An error in job text, with its location.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct SpecError {
    pub location: Location,
    pub message: String,
}

impl SpecError {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        SpecError {
            location,
            message: message.into(),
        }
    }
}
