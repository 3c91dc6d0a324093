//! The run: `JobSpec` -> `Plan` -> worker threads -> `RunResult`. Offset and
//! size generators, rate limiting, data buffers, verify, metadata workloads,
//! sweeps, the environment probe and the checks that raise warnings.
#![forbid(unsafe_code)]
pub(crate) mod data;

pub mod caches;
pub mod checks;
pub(crate) mod compressing;
pub mod devuse;
pub(crate) mod diskstats;
pub(crate) mod flow;
pub(crate) mod gen;
pub(crate) mod layout;
pub mod links;
pub(crate) mod loopback;
pub mod meta;
pub mod plan;
pub mod private;
pub mod probe;
pub mod progress;
pub mod quick;
pub mod quickdir;
pub mod ranks;
pub mod run;
pub(crate) mod steady;
pub mod sweep;
pub(crate) mod verify;
pub mod virt;
pub mod warn;
pub(crate) mod worker;
