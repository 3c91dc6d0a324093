//! fio's job language: job files and command lines parsed into typed
//! `JobSpec`s. This crate reads job and include files and nothing else.
//!
//! The flow: text -> `RawSection`s (`jobfile`, `cmdline`) -> `JobSet` of
//! `JobSpec`s (`resolve`, typed by the option table in `options` with the
//! value parsers of `value`). `JobSet::to_job_text` prints jobs back in
//! job-file syntax for `--parse-only`; `help` renders `--cmdhelp` and the
//! option reference.
#![forbid(unsafe_code)]

pub mod cmdline;
pub mod context;
pub mod error;
pub mod filename;
pub mod help;
pub mod jobfile;
pub mod jobspec;
pub mod kinds;
pub mod options;
pub mod raw;
pub mod resolve;
pub mod value;

pub use cmdline::{parse_args, CmdLine};
pub use context::{Context, Host};
pub use error::{Location, SpecError, ValueError};
pub use jobspec::{JobSet, JobSpec};
pub use options::{Opt, OptDef, OPTIONS};
pub use resolve::{load, parse_text, resolve_sections};
pub use value::Value;
