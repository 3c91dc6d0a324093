//! The run: `JobSpec` -> `Plan` -> worker threads -> `RunResult`. Offset and
//! size generators, rate limiting, data buffers, verify, metadata workloads,
//! sweeps, the environment probe and the checks that raise warnings.
#![forbid(unsafe_code)]
pub mod data;

pub mod compressing;
pub mod devuse;
pub mod diskstats;
pub mod gen;
pub mod layout;
pub mod loopback;
pub mod meta;
pub mod plan;
pub mod private;
pub mod probe;
pub mod progress;
pub mod quick;
pub mod quickdir;
pub mod ranks;
pub mod run;
pub mod sweep;
pub mod verify;
pub mod virt;
pub mod warn;
pub mod worker;
