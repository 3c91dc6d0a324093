//! fio's job language: job files and command lines parsed into typed
//! `JobSpec`s. This crate reads job and include files and nothing else.

pub mod error;
pub mod options;
pub mod value;

pub use error::{Location, SpecError, ValueError};
pub use options::{Opt, OptDef, OPTIONS};
pub use value::Value;
