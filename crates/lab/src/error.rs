//! `LabError`: everything that can go wrong while the lab prepares,
//! measures or removes a filesystem target, each variant naming the thing
//! (device, path, program) it is about.

use std::path::PathBuf;

/// An error of the filesystem lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A target description that does not parse.
    #[error("target `{spec}`: {reason}")]
    BadTarget { spec: String, reason: String },
    /// An external program could not be started.
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// An external program ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        command: String,
        status: String,
        stderr: String,
    },
    /// A file-system operation on a path failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A path the lab was about to create exists already: it is not the
    /// lab's, so the lab neither uses nor (later) removes it.
    #[error("`{}` exists already and iolab did not create it: not using it as {what} (iolab removes only what it made; give another --workdir or remove it)", path.display())]
    Exists { what: &'static str, path: PathBuf },
    /// A block device the lab refuses to touch, and why.
    #[error("refusing to use {device}: {reason}")]
    Refused { device: String, reason: String },
    /// The operation needs root.
    #[error("{what} needs root (iolab runs as uid {uid}); to compare directories that are already mounted, use --target NAME=DIR")]
    NotRoot { what: String, uid: u32 },
    /// The state file of a workdir cannot be read or written.
    #[error("state file `{}`: {reason}", path.display())]
    State { path: PathBuf, reason: String },
    /// A workdir or state file that another user could have written: the
    /// lab neither believes nor acts on it.
    #[error("left alone `{}`: {reason}; iolab acts only on state files of this user's that no one else can write", path.display())]
    Untrusted { path: PathBuf, reason: String },
    /// A `--workdir` that others could write into.
    #[error("--workdir `{}`: {reason}; give a directory of this user's that no one else can write (or none, for a private one in the temporary directory)", path.display())]
    BadWorkdir { path: PathBuf, reason: String },
    /// A workload's job text or plan is wrong.
    #[error("workload `{name}`: {reason}")]
    Workload { name: String, reason: String },
    /// Ctrl-C arrived.
    #[error("interrupted")]
    Interrupted,
}

impl LabError {
    /// An I/O error on `path` while doing `action` ("cannot create", ...).
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LabError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
