//! Typed option values and their text forms. Each public submodule owns one
//! family of values: parsing fio's text into the type and printing the type
//! back in a form that parses to the same value. The value types are
//! re-exported here; the parsers and printers stay under their module
//! (`value::perdir::parse_per_dir`, `value::blocks::parse_range`, ...).

pub mod blocks;
pub mod cpus;
pub mod distribution;
pub mod expr;
pub mod files;
pub mod pattern;
mod percent;
pub mod percentiles;
pub mod perdir;
pub mod size;
#[cfg(test)]
mod test_util;
pub mod time;

pub use blocks::{BlockRange, SplitEntry};
pub use cpus::CpuList;
pub use distribution::{Distribution, FileService};
pub use perdir::PerDir;
pub use size::{KbBase, SizeValue};
pub use time::TimeUnit;

/// The I/O pattern of `rw=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RwMode {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    pub const ALL: [(RwMode, &'static str); 10] = [
        (RwMode::Read, "read"),
        (RwMode::Write, "write"),
        (RwMode::Trim, "trim"),
        (RwMode::RandRead, "randread"),
        (RwMode::RandWrite, "randwrite"),
        (RwMode::RandTrim, "randtrim"),
        (RwMode::ReadWrite, "rw"),
        (RwMode::RandRw, "randrw"),
        (RwMode::TrimWrite, "trimwrite"),
        (RwMode::RandTrimWrite, "randtrimwrite"),
    ];

    pub fn name(self) -> &'static str {
        RwMode::ALL
            .iter()
            .find(|(m, _)| *m == self)
            .map(|(_, n)| *n)
            .unwrap_or("read")
    }

    /// Parses a mode word; `readwrite` is fio's alias of `rw`.
    pub fn from_word(word: &str) -> Option<RwMode> {
        if word == "readwrite" {
            return Some(RwMode::ReadWrite);
        }
        RwMode::ALL
            .iter()
            .find(|(_, n)| *n == word)
            .map(|(m, _)| *m)
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandTrim
                | RwMode::RandRw
                | RwMode::RandTrimWrite
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwMode::Read | RwMode::RandRead | RwMode::ReadWrite | RwMode::RandRw
        )
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwMode::Write
                | RwMode::RandWrite
                | RwMode::ReadWrite
                | RwMode::RandRw
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite
        )
    }
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite
        )
    }
}

/// `rw=MODE[:N]`: the mode and the optional modifier (for sequential modes a
/// gap added after each I/O, negative to go backwards; for random modes the
/// number of I/Os issued before a new random offset is drawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RwSpec {
    pub mode: RwMode,
    pub modifier: Option<i64>,
}

/// A parsed option value. The option table says which variant each option
/// holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Size(SizeValue),
    /// Microseconds.
    Time(u64),
    Str(String),
    /// A canonical word from the option's fixed list.
    Choice(&'static str),
    /// Sizes or counts per direction (read, write, trim).
    PerDir(PerDir<u64>),
    Ranges(PerDir<BlockRange>),
    /// A range of byte counts, low below high (`filesize=1m-4m`).
    SizeRange(BlockRange),
    Split(PerDir<Vec<SplitEntry>>),
    Rw(RwSpec),
    Distribution(Distribution),
    FileService(FileService),
    Floats(Vec<f64>),
    Cpus(CpuList),
    Files(Vec<String>),
    /// Raw bytes of a fill pattern (buffer_pattern, verify_pattern).
    Pattern(Vec<u8>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: KbBase = KbBase::K1024;
    const D: KbBase = KbBase::K1000;

    proptest! {
        /// No value parser panics, whatever the text.
        #[test]
        fn parsers_never_panic(s in "[-+0-9a-zA-Z.:/,%()*^\\\\'\" ]{0,24}") {
            let _ = perdir::parse_per_dir(&s, &|t| size::parse_size(t, K));
            let _ = blocks::parse_range(&s, K);
            let _ = blocks::parse_split(&s, D);
            let _ = cpus::parse_cpus(&s);
            let _ = files::parse_files(&s);
            let _ = distribution::parse_distribution(&s);
            let _ = distribution::parse_file_service(&s);
            let _ = percentiles::parse_percentiles(&s);
            let _ = pattern::parse_pattern(&s);
            let _ = size::parse_size(&s, K);
            let _ = size::parse_size_or_percent(&s, K);
            let _ = size::parse_int(&s, D);
            let _ = time::parse_time(&s, time::TimeUnit::Sec);
        }
    }
}
