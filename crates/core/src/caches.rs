//! Cold caches between repeated runs: every cache dropped where the
//! kernel lets us (root, a writable /proc/sys), else the job files'
//! cached pages after their dirty data is written back; and the words
//! that say which was done, and why.

use std::fmt;

use crate::plan::Plan;

/// What was done to the caches before a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheReset {
    /// sync, then 3 into /proc/sys/vm/drop_caches.
    Dropped,
    /// Only the job files' cached pages: the kernel refused the rest, for
    /// the reason given.
    FilesOnly { why: String },
}

/// Drops every cache, or, when the kernel refuses (not root, a read-only
/// /proc/sys in a container), the plan's files' cached pages after
/// writing back what is dirty.
pub fn reset_caches(plan: &Plan) -> CacheReset {
    let why = match iolab_engine::host::drop_caches() {
        Ok(()) => return CacheReset::Dropped,
        Err(_) if iolab_engine::host::euid() != 0 => "not root".to_string(),
        Err(e) => {
            let e = e.to_string();
            let reason = e.split(" (os error").next().unwrap_or(&e);
            format!("cannot write /proc/sys/vm/drop_caches ({reason})")
        }
    };
    for f in &plan.files {
        if let Ok(file) = std::fs::File::open(&f.path) {
            let _ = iolab_engine::file::drop_cache(&file, 0, 0);
        }
    }
    CacheReset::FilesOnly { why }
}

impl fmt::Display for CacheReset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheReset::Dropped => f.write_str(
                "caches dropped before each run (sync; echo 3 > /proc/sys/vm/drop_caches)",
            ),
            CacheReset::FilesOnly { why } => write!(
                f,
                "{why}: only the job files' cached pages were dropped before each run (the \
                 filesystem's metadata caches stay warm)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reset_says_what_was_dropped() {
        assert!(CacheReset::Dropped.to_string().contains("drop_caches"));
        let files = CacheReset::FilesOnly {
            why: "not root".into(),
        };
        assert_eq!(
            files.to_string(),
            "not root: only the job files' cached pages were dropped before each run (the \
             filesystem's metadata caches stay warm)"
        );
    }
}
