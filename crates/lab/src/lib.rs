//! The filesystem lab: image files, loop devices, mkfs, mount, cache drops,
//! cleanup, and comparison campaigns across targets.
//!
//! The primitives each live in one module (`target`, `support`, `exec`,
//! `image`, `loopdev`, `mkfs`, `mount`, `mountinfo`, `capacity`,
//! `readspeed`, `device`, `bcache`, `state`, `cleanup`); `campaign` strings them
//! together: for each target it prepares a filesystem, runs the workloads
//! of a `suite` through iolab-core (`workload`), and gathers the numbers
//! (`metrics`) into an `iolab_stats::Comparison`.
#![forbid(unsafe_code)]

pub mod bcache;
pub mod campaign;
pub mod capacity;
pub mod cleaner;
pub mod cleanup;
pub mod device;
pub mod error;
pub mod exec;
pub mod fit;
pub mod image;
pub mod loopdev;
pub mod metrics;
pub mod mkfs;
pub mod mount;
pub mod mountinfo;
pub mod readspeed;
pub mod state;
pub mod suite;
pub mod support;
pub mod target;
pub mod workload;

pub use error::LabError;

/// Whether this process runs as root (formatting, mounting, loop devices
/// and dropping caches need it).
pub fn is_root() -> bool {
    uid() == 0
}

/// This process's effective uid, for messages.
pub fn uid() -> u32 {
    iolab_engine::host::euid()
}
