//! Warnings: when a number will not measure what it looks like. One enum,
//! each variant saying what was seen, why it matters and what to do. Some
//! are known from the plan (a queue depth the engine cannot reach); the
//! rest from what the run saw: what a buffered write job left dirty in
//! the page cache when it ended, what its own threads had the storage
//! read and write (/proc/thread-self/io, which a neighbour on the same
//! device does not touch) against its bytes (page cache), the device's
//! counters against the job's bytes (others on the device, and page cache
//! where the kernel keeps no per-thread count), loop devices whose backing
//! file is in memory or cached by the host (`loopback`, judged before the
//! jobs start), what the filesystem stored compressed (btrfs extents,
//! judged before the files are removed) or else the mount's options and
//! the devices under it against the data (compression), holes in what
//! was read (sparse reads), and the job's own samples and CPU time (short,
//! unstable or faster at first, CPU-bound). Jobs whose engine moves no
//! data to their files (null, the file-operation engines) get none of the
//! device-based ones. Each lands in the job's result with a stable code,
//! so the normal output prints it after the job and the JSON carries it
//! under "iolab" -> "warnings".
//!
//! The enum and its words are in `warning` and `text`; the checks before
//! the run in `plan`; the devices and filesystems under a job's files in
//! `devices`; the checks after it in `run` (in order), `page_cache`,
//! `compression` and `samples`.

mod compression;
mod devices;
mod page_cache;
mod plan;
mod run;
mod samples;
mod text;
mod warning;

pub use compression::compression_warnings;
pub use plan::{plan_warnings, sparse_reads};
pub use run::{attach_run_warnings, run_warnings};
pub use samples::fast_start;
pub use warning::Warning;

#[cfg(test)]
mod tests;
