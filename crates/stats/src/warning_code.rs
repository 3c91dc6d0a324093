//! `WarningCode`: the stable code of a warning about a result's numbers
//! ("page-cache", "short-run", ...), typed from where a warning is raised
//! to where it is printed. It travels as its text in JSON and the store,
//! so results written before a code existed, or by a newer iolab, load:
//! a code this build does not know is kept as it reads.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

/// What kind of trouble a warning reports.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum WarningCode {
    /// An iodepth the engine cannot reach.
    QueueDepthNotReached,
    /// Figures that measure memory (the page cache, a loop image held in
    /// memory) rather than the storage.
    PageCache,
    /// Data a filesystem or device stored compressed.
    Compression,
    /// Reads of holes, answered with zeros and no I/O.
    SparseReads,
    /// Too few samples for their spread to mean much.
    ShortRun,
    /// Samples that vary a lot, or a fast start.
    Unstable,
    /// Others used the device during the run.
    OthersOnDevice,
    /// The job never waited for the storage.
    CpuBound,
    /// Figures bcache's cache device answered rather than its disk.
    BcacheCache,
    /// A code this build does not know, as it was stored.
    Other(String),
}

impl WarningCode {
    /// Every code this build raises, in the order of the list above.
    pub const KNOWN: [WarningCode; 9] = [
        WarningCode::QueueDepthNotReached,
        WarningCode::PageCache,
        WarningCode::Compression,
        WarningCode::SparseReads,
        WarningCode::ShortRun,
        WarningCode::Unstable,
        WarningCode::OthersOnDevice,
        WarningCode::CpuBound,
        WarningCode::BcacheCache,
    ];

    /// The code as printed and stored ("page-cache").
    pub fn as_str(&self) -> &str {
        match self {
            WarningCode::QueueDepthNotReached => "queue-depth-not-reached",
            WarningCode::PageCache => "page-cache",
            WarningCode::Compression => "compression",
            WarningCode::SparseReads => "sparse-reads",
            WarningCode::ShortRun => "short-run",
            WarningCode::Unstable => "unstable",
            WarningCode::OthersOnDevice => "others-on-device",
            WarningCode::CpuBound => "cpu-bound",
            WarningCode::BcacheCache => "bcache-cache",
            WarningCode::Other(s) => s,
        }
    }

    /// Whether the figures it flags measure memory or compression rather
    /// than the storage's own speed.
    pub fn not_the_storage(&self) -> bool {
        matches!(self, WarningCode::PageCache | WarningCode::Compression)
    }
}

impl Default for WarningCode {
    fn default() -> Self {
        WarningCode::Other(String::new())
    }
}

impl From<&str> for WarningCode {
    fn from(s: &str) -> Self {
        WarningCode::KNOWN
            .into_iter()
            .find(|c| c.as_str() == s)
            .unwrap_or_else(|| WarningCode::Other(s.to_string()))
    }
}

impl From<String> for WarningCode {
    fn from(s: String) -> Self {
        WarningCode::from(s.as_str())
    }
}

impl From<WarningCode> for String {
    fn from(c: WarningCode) -> Self {
        c.as_str().to_string()
    }
}

impl From<&WarningCode> for String {
    fn from(c: &WarningCode) -> Self {
        c.as_str().to_string()
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code reads as its text wherever text is wanted (table markers,
/// legends, the store's flags).
impl Deref for WarningCode {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for WarningCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for WarningCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for WarningCode {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<WarningCode> for String {
    fn eq(&self, other: &WarningCode) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<WarningCode> for &str {
    fn eq(&self, other: &WarningCode) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<WarningCode> for str {
    fn eq(&self, other: &WarningCode) -> bool {
        self == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_as_their_text() {
        for c in WarningCode::KNOWN {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<WarningCode>(&json).unwrap(), c);
            assert_eq!(WarningCode::from(c.as_str()), c);
        }
        let odd: WarningCode = serde_json::from_str("\"from-the-future\"").unwrap();
        assert_eq!(odd, WarningCode::Other("from-the-future".into()));
        assert_eq!(serde_json::to_string(&odd).unwrap(), "\"from-the-future\"");
        assert!(WarningCode::PageCache == "page-cache");
        assert!("short-run" == WarningCode::ShortRun);
        assert!(WarningCode::Compression.not_the_storage());
        assert!(!WarningCode::ShortRun.not_the_storage());
    }
}
