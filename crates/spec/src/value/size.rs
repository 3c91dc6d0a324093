//! Sizes in bytes with fio's suffix rules, and plain integers.
//!
//! With `kb_base=1024` (fio's default) the SI-looking suffixes k, m, g, t, p
//! (also kb, mb, ...) mean powers of 1024 and the IEC suffixes kib, mib, ...
//! mean powers of 1000: fio inverts them for compatibility with old job
//! files. With `kb_base=1000` both mean what the standards say. Suffixes are
//! case-insensitive. A value may be an arithmetic expression in parentheses.

use crate::error::ValueError;

/// fio's `kb_base`: how unit prefixes in sizes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KbBase {
    #[default]
    K1024,
    K1000,
}

/// A size that may also be given as a percentage (of the file or device).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeValue {
    Bytes(u64),
    Percent(f64),
}

/// Parses a byte count: `4096`, `4k`, `100MB`, `1MiB`, `0x1000`, `(4*1024)`.
pub fn parse_size(text: &str, kb: KbBase) -> Result<u64, ValueError> {
    let _ = (text, kb);
    Err(ValueError::new("size parsing is not written yet"))
}

/// Parses a byte count or a percentage (`50%`), for options that take both.
pub fn parse_size_or_percent(text: &str, kb: KbBase) -> Result<SizeValue, ValueError> {
    let _ = (text, kb);
    Err(ValueError::new("size parsing is not written yet"))
}

/// Prints a byte count as the shortest exact text that `parse_size` reads
/// back to the same number under the same `kb`.
pub fn format_size(bytes: u64, kb: KbBase) -> String {
    let _ = kb;
    bytes.to_string()
}

/// Prints a `SizeValue` so that `parse_size_or_percent` reads it back.
pub fn format_size_value(v: SizeValue, kb: KbBase) -> String {
    match v {
        SizeValue::Bytes(b) => format_size(b, kb),
        SizeValue::Percent(p) => format!("{p}%"),
    }
}

/// Parses a plain integer (decimal, `0x` hex, negative, an expression in
/// parentheses). fio reads integers with the size suffixes too.
pub fn parse_int(text: &str, kb: KbBase) -> Result<i64, ValueError> {
    let _ = (text, kb);
    Err(ValueError::new("integer parsing is not written yet"))
}
