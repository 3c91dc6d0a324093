//! The run: `JobSpec` -> `Plan` -> worker threads -> `RunResult`. Offset and
//! size generators, rate limiting, data buffers, verify, metadata workloads,
//! sweeps, the environment probe and the checks that raise warnings.
pub mod diskstats;
pub mod gen;
pub mod layout;
pub mod plan;
pub mod progress;
pub mod run;
pub mod warn;
pub mod worker;
