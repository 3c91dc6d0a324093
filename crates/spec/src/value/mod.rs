//! Typed option values and their text forms. Each submodule owns one family
//! of values: parsing fio's text into the type and printing the type back in
//! a form that parses to the same value.

pub mod expr;
pub mod lists;
pub mod size;
pub mod time;

pub use lists::{BlockRange, CpuList, Distribution, FileService, PerDir, SplitEntry, SteadyState};
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
/// gap added after each I/O, for random modes the number of I/Os issued
/// before a new random offset is drawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RwSpec {
    pub mode: RwMode,
    pub modifier: Option<u64>,
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
    Split(PerDir<Vec<SplitEntry>>),
    Rw(RwSpec),
    Distribution(Distribution),
    FileService(FileService),
    Floats(Vec<f64>),
    Cpus(CpuList),
    Files(Vec<String>),
    SteadyState(SteadyState),
    /// Raw bytes of a fill pattern (buffer_pattern, verify_pattern).
    Pattern(Vec<u8>),
}
