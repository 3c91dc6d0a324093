//! Exit codes: 0 success, 1 the run failed, 2 bad job or command line
//! (nothing was written).

use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success,
    /// The run failed: an I/O error, a target that vanished.
    Failed,
    /// The job text or command line is wrong; nothing was created.
    BadInput,
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        match s {
            Status::Success => ExitCode::SUCCESS,
            Status::Failed => ExitCode::from(1),
            Status::BadInput => ExitCode::from(2),
        }
    }
}
