//! The SQLite history of runs and comparisons, with their provenance:
//! where the database lives, what a record holds, the schema and its
//! migrations, and the queries history, show, export and diff read.
#![forbid(unsafe_code)]

mod db;
mod dbfiles;
mod diff;
mod error;
mod flags;
mod path;
mod record;
mod runmetrics;
pub mod schema;
pub mod time;
mod unstored;

pub use db::{Store, BUSY_TIMEOUT};
pub use dbfiles::DbFiles;
pub use diff::{better_of, diff_metrics, tested_statistic, Basis, DiffOpts, MetricDiff};
pub use error::StoreError;
pub use flags::{comparison_flags, quick_flags, run_flags, runs_flags, sweep_flags};
pub use path::{default_path, default_path_from};
pub use record::{
    flag_codes, Entry, Filter, Flag, Kind, Metric, Provenance, Record, SampleMoments, Stored,
    UnknownKind,
};
pub use runmetrics::{repeated_run_metrics, run_metrics};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use unstored::{read_unstored, write_unstored};
