//! The switch of the honest-numbers checks: the reads around a run that
//! tell whether its figures measured the storage (the device counters of
//! the disks under its files, sparse and compressed files, loop devices
//! and their backing files' page cache, the page cache a buffered write
//! left dirty, each thread's I/O as the kernel accounted it) and the
//! warnings drawn from them. None of them runs per I/O; they are on
//! unless the environment has `IOLAB_CHECKS=off`, which bench/compare.py
//! sets to measure a run without them (docs/performance.md). With the
//! checks off the report has no disk statistics and no warning from
//! what the run saw.

use std::sync::OnceLock;

/// Whether the checks run (read once per process).
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("IOLAB_CHECKS").is_none_or(|v| v != "off"))
}
