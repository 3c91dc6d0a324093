//! Sizes in bytes with fio's suffix rules, and plain integers.
//!
//! With `kb_base=1024` (fio's default) the SI-looking suffixes k, m, g, t, p
//! (also kb, mb, ...) mean powers of 1024 and the IEC suffixes kib, mib, ...
//! mean powers of 1000: fio inverts them for compatibility with old job
//! files. With `kb_base=1000` both mean what the standards say. Suffixes are
//! case-insensitive. A value may be an arithmetic expression in parentheses.
//!
//! Where fio silently reads garbage (`4q` as 4, `1.5k` as 1, `0x1k` as 1,
//! `-4k` as 4096), these parsers refuse the text with a message instead.
//! Inside an expression a number may have a fraction: `(1.5*1k)` is 1536.

use super::expr;
use crate::error::ValueError;

/// fio's `kb_base`: how unit prefixes in sizes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KbBase {
    #[default]
    K1024,
    K1000,
}

impl KbBase {
    /// The value of the unit `k`, `kb` (and of `m` = unit², ...) under this
    /// base.
    pub fn unit(self) -> u64 {
        match self {
            KbBase::K1024 => 1024,
            KbBase::K1000 => 1000,
        }
    }
}

/// A size that may also be given as a percentage (of the file or device).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeValue {
    Bytes(u64),
    Percent(f64),
}

const SUFFIX_HELP: &str = "use b, k, m, g, t, p, kB, MB, KiB, MiB, ...";

/// Parses a byte count: `4096`, `4k`, `100MB`, `1MiB`, `0x1000`, `(4*1024)`.
pub fn parse_size(text: &str, kb: KbBase) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a size (expected a number of bytes such as 4096, 4k or 1MiB)",
        ));
    }
    if expr::is_expression(t) {
        let v = expr::eval(t, &|atom| size_atom(atom, kb))?;
        if v < 0.0 {
            return Err(ValueError::new(format!(
                "`{t}` is not a size: it evaluates to {v}, and sizes cannot be negative"
            )));
        }
        // `as` saturates at u64::MAX; anything at or beyond 2^64 is refused.
        if v >= u64::MAX as f64 {
            return Err(ValueError::new(format!(
                "`{t}` is not a size: it evaluates to {v}, more than 2^64 bytes"
            )));
        }
        return Ok(v.trunc() as u64);
    }
    plain_unsigned(t, kb, "a size")
}

/// Parses a byte count or a percentage (`50%`), for options that take both.
/// A percentage is from 0 to 100 (`offset=0%` is the start, as in fio); it
/// may have a fraction.
pub fn parse_size_or_percent(text: &str, kb: KbBase) -> Result<SizeValue, ValueError> {
    let t = text.trim();
    if let Some(num) = t.strip_suffix('%') {
        let p: f64 = num.trim().parse().map_err(|_| {
            ValueError::new(format!(
                "`{t}` is not a percentage: expected a number before `%`, such as 50%"
            ))
        })?;
        if !(0.0..=100.0).contains(&p) {
            return Err(ValueError::new(format!(
                "`{t}` is not a valid percentage: it must be from 0% to 100%"
            )));
        }
        return Ok(SizeValue::Percent(p));
    }
    parse_size(t, kb).map(SizeValue::Bytes)
}

/// Prints a byte count as the shortest exact text that `parse_size` reads
/// back to the same number under the same `kb`: the largest of the units
/// k, m, g, t, p (powers of 1024 or of 1000, as `kb` says) that divides the
/// count, or the plain number.
pub fn format_size(bytes: u64, kb: KbBase) -> String {
    if bytes == 0 {
        return "0".to_string();
    }
    let unit = kb.unit();
    for (power, letter) in [(5u32, 'p'), (4, 't'), (3, 'g'), (2, 'm'), (1, 'k')] {
        let mult = unit.pow(power);
        if bytes.is_multiple_of(mult) {
            return format!("{}{letter}", bytes / mult);
        }
    }
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
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not an integer (expected a number such as 10, -3, 0x10 or 4k)",
        ));
    }
    if expr::is_expression(t) {
        let v = expr::eval(t, &|atom| size_atom(atom, kb))?;
        // i64::MIN is exactly -2^63; i64::MAX rounds up to 2^63 as f64.
        if v < i64::MIN as f64 || v >= i64::MAX as f64 {
            return Err(ValueError::new(format!(
                "`{t}` is not an integer: it evaluates to {v}, outside the 64-bit range"
            )));
        }
        return Ok(v.trunc() as i64);
    }
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let magnitude = plain_unsigned_named(body, t, kb, "an integer")?;
    let out_of_range = || {
        ValueError::new(format!(
            "`{t}` is not an integer: it is outside the 64-bit range"
        ))
    };
    if negative {
        if magnitude > i64::MIN.unsigned_abs() {
            return Err(out_of_range());
        }
        Ok(0i64.wrapping_sub_unsigned(magnitude))
    } else {
        i64::try_from(magnitude).map_err(|_| out_of_range())
    }
}

/// The multiplier of a size suffix (case-insensitive) under `kb`, or None
/// if the suffix is unknown. The empty suffix and `b` are bytes.
pub fn size_suffix_multiplier(suffix: &str, kb: KbBase) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let mut chars = s.chars();
    let power = match chars.next()? {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return None,
    };
    // "k", "kb" follow kb_base; "ki", "kib" are the other base.
    let iec = match chars.as_str() {
        "" | "b" => false,
        "i" | "ib" => true,
        _ => return None,
    };
    let base = match (kb, iec) {
        (KbBase::K1024, false) | (KbBase::K1000, true) => 1024u64,
        (KbBase::K1024, true) | (KbBase::K1000, false) => 1000u64,
    };
    Some(base.pow(power))
}

/// Reads a non-negative number without sign: decimal with an optional unit
/// suffix, or `0x` hex without suffix. `what` names the kind of value for
/// messages ("a size", "an integer").
pub(crate) fn plain_unsigned(t: &str, kb: KbBase, what: &str) -> Result<u64, ValueError> {
    if t.starts_with('-') {
        return Err(ValueError::new(format!(
            "`{t}` is not {what}: it cannot be negative"
        )));
    }
    plain_unsigned_named(t, t, kb, what)
}

fn plain_unsigned_named(body: &str, t: &str, kb: KbBase, what: &str) -> Result<u64, ValueError> {
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(ValueError::new(format!(
                "`{t}` is not {what}: `0x` must be followed by hex digits only (no unit suffix)"
            )));
        }
        return u64::from_str_radix(hex, 16).map_err(|_| {
            ValueError::new(format!("`{t}` is not {what}: it does not fit in 64 bits"))
        });
    }
    let digits_end = body
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(digits_end);
    if digits.is_empty() {
        return Err(ValueError::new(format!(
            "`{t}` is not {what}: expected a number such as 4096, 4k or 1MiB"
        )));
    }
    if suffix.starts_with('.') {
        return Err(ValueError::new(format!(
            "`{t}` is not {what}: fractions are not allowed (fio would silently drop the \
             fraction); write a whole number or an expression such as `({body})`"
        )));
    }
    let mult = size_suffix_multiplier(suffix, kb).ok_or_else(|| {
        ValueError::new(format!(
            "`{t}` is not {what}: unknown suffix `{suffix}` ({SUFFIX_HELP})"
        ))
    })?;
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| ValueError::new(format!("`{t}` is not {what}: it does not fit in 64 bits")))
}

/// Reads one number token of an expression as a size: digits with an
/// optional fraction and unit suffix, or `0x` hex.
pub(crate) fn size_atom(tok: &str, kb: KbBase) -> Result<f64, ValueError> {
    if tok.starts_with("0x") || tok.starts_with("0X") {
        return plain_unsigned(tok, kb, "a number").map(|v| v as f64);
    }
    let (num, suffix) = split_number(tok);
    let n = parse_decimal(num, tok)?;
    let mult = size_suffix_multiplier(suffix, kb).ok_or_else(|| {
        ValueError::new(format!(
            "`{tok}` is not a size: unknown suffix `{suffix}` ({SUFFIX_HELP})"
        ))
    })?;
    Ok(n * mult as f64)
}

/// Splits a token into its leading number (digits and dots) and suffix.
pub(crate) fn split_number(tok: &str) -> (&str, &str) {
    let end = tok
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(tok.len());
    tok.split_at(end)
}

/// Parses digits with an optional single fraction part (`12`, `1.5`, `.5`).
pub(crate) fn parse_decimal(num: &str, tok: &str) -> Result<f64, ValueError> {
    let valid = !num.is_empty()
        && num != "."
        && num.matches('.').count() <= 1
        && num.chars().all(|c| c.is_ascii_digit() || c == '.');
    if !valid {
        return Err(ValueError::new(format!(
            "`{tok}` is not a number: expected digits with an optional fraction, such as 4 or 1.5"
        )));
    }
    num.parse::<f64>()
        .map_err(|_| ValueError::new(format!("`{tok}` is not a number")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: KbBase = KbBase::K1024;
    const D: KbBase = KbBase::K1000;

    fn size_err(text: &str, kb: KbBase) -> String {
        match parse_size(text, kb) {
            Ok(v) => panic!("`{text}` parsed as {v}, expected an error"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn fio_facts_default_base() {
        // Verified with fio 3.33: --size=X --ioengine=null, io_bytes.
        assert_eq!(parse_size("100MB", K).unwrap(), 104_857_600);
        assert_eq!(parse_size("100MiB", K).unwrap(), 100_000_000);
        assert_eq!(parse_size("4kB", K).unwrap(), 4096);
        assert_eq!(parse_size("4kib", K).unwrap(), 4000);
        assert_eq!(parse_size("4KiB", K).unwrap(), 4000);
        assert_eq!(parse_size("4kIb", K).unwrap(), 4000);
        assert_eq!(parse_size("1m", K).unwrap(), 1_048_576);
        assert_eq!(parse_size("1mib", K).unwrap(), 1_000_000);
        assert_eq!(parse_size("1Mb", K).unwrap(), 1_048_576);
        assert_eq!(parse_size("1024k", K).unwrap(), 1_048_576);
        assert_eq!(parse_size("4096b", K).unwrap(), 4096);
        assert_eq!(parse_size("4096B", K).unwrap(), 4096);
        assert_eq!(parse_size("0x1000", K).unwrap(), 4096);
        assert_eq!(parse_size("0X1000", K).unwrap(), 4096);
        assert_eq!(parse_size("0xA00", K).unwrap(), 2560);
        assert_eq!(parse_size("010k", K).unwrap(), 10240);
        assert_eq!(parse_size("4096", K).unwrap(), 4096);
        assert_eq!(parse_size("0", K).unwrap(), 0);
        assert_eq!(parse_size("1g", K).unwrap(), 1 << 30);
        assert_eq!(parse_size("1t", K).unwrap(), 1 << 40);
        assert_eq!(parse_size("2p", K).unwrap(), 2 << 50);
        assert_eq!(parse_size("1TiB", K).unwrap(), 1_000_000_000_000);
        assert_eq!(parse_size("1pib", K).unwrap(), 1_000_000_000_000_000);
        assert_eq!(parse_size("4ki", K).unwrap(), 4000);
        assert_eq!(parse_size("  4k\t", K).unwrap(), 4096);
    }

    #[test]
    fn fio_facts_base_1000() {
        // Verified with fio 3.33: --kb_base=1000 --size=X.
        assert_eq!(parse_size("100MB", D).unwrap(), 100_000_000);
        assert_eq!(parse_size("100MiB", D).unwrap(), 104_857_600);
        assert_eq!(parse_size("4k", D).unwrap(), 4000);
        assert_eq!(parse_size("4kb", D).unwrap(), 4000);
        assert_eq!(parse_size("4kib", D).unwrap(), 4096);
        assert_eq!(parse_size("4KiB", D).unwrap(), 4096);
        assert_eq!(parse_size("1m", D).unwrap(), 1_000_000);
        assert_eq!(parse_size("1mib", D).unwrap(), 1_048_576);
        assert_eq!(parse_size("1ti", D).unwrap(), 1_099_511_627_776);
        assert_eq!(parse_size("4096b", D).unwrap(), 4096);
    }

    #[test]
    fn expressions() {
        assert_eq!(parse_size("(4*1024)", K).unwrap(), 4096);
        assert_eq!(parse_size("(1k*4)", K).unwrap(), 4096);
        assert_eq!(parse_size("(10*4k)", K).unwrap(), 40960);
        assert_eq!(parse_size("(1.5*1k)", K).unwrap(), 1536);
        assert_eq!(parse_size("(1.5k)", K).unwrap(), 1536);
        assert_eq!(parse_size("(7/2)", K).unwrap(), 3);
        assert_eq!(parse_size("(1k*4)", D).unwrap(), 4000);
        assert_eq!(parse_size("(1MiB)", K).unwrap(), 1_000_000);
        assert_eq!(parse_size("(0x10*2)", K).unwrap(), 32);
        assert_eq!(parse_size(" (2^10) ", K).unwrap(), 1024);
        let e = size_err("(1-2)", K);
        assert!(e.contains("`(1-2)`") && e.contains("negative"), "{e}");
        let e = size_err("(2^70)", K);
        assert!(e.contains("`(2^70)`") && e.contains("2^64"), "{e}");
        let e = size_err("(4q*2)", K);
        assert!(
            e.contains("`4q`") && e.contains("unknown suffix `q`"),
            "{e}"
        );
        let e = size_err("(1.2.3k)", K);
        assert!(e.contains("`1.2.3k`"), "{e}");
        let e = size_err("(0x1k)", K);
        assert!(e.contains("`0x1k`"), "{e}");
    }

    #[test]
    fn errors_name_the_text() {
        let e = size_err("4q", K);
        assert!(
            e.contains("`4q`") && e.contains("unknown suffix `q`"),
            "{e}"
        );
        assert!(e.contains("KiB"), "{e}");
        let e = size_err("", K);
        assert!(e.contains("empty"), "{e}");
        let e = size_err("   ", K);
        assert!(e.contains("empty"), "{e}");
        let e = size_err("-4k", K);
        assert!(e.contains("`-4k`") && e.contains("negative"), "{e}");
        let e = size_err("1.5g", K);
        assert!(e.contains("`1.5g`") && e.contains("fractions"), "{e}");
        let e = size_err("99999999999999999999", K);
        assert!(
            e.contains("`99999999999999999999`") && e.contains("64 bits"),
            "{e}"
        );
        let e = size_err("16384p", K);
        assert!(e.contains("`16384p`") && e.contains("64 bits"), "{e}");
        let e = size_err("0x1k", K);
        assert!(e.contains("`0x1k`") && e.contains("hex digits only"), "{e}");
        let e = size_err("0x", K);
        assert!(e.contains("`0x`"), "{e}");
        let e = size_err("0x10000000000000000", K);
        assert!(e.contains("64 bits"), "{e}");
        let e = size_err("k", K);
        assert!(e.contains("`k`") && e.contains("expected a number"), "{e}");
        let e = size_err("4 k", K);
        assert!(e.contains("unknown suffix ` k`"), "{e}");
        let e = size_err("4kk", K);
        assert!(e.contains("unknown suffix `kk`"), "{e}");
        let e = size_err("4kbb", K);
        assert!(e.contains("unknown suffix `kbb`"), "{e}");
        let e = size_err("1e3", K);
        assert!(e.contains("unknown suffix `e3`"), "{e}");
        let e = size_err("50%", K);
        assert!(e.contains("unknown suffix `%`"), "{e}");
    }

    #[test]
    fn size_or_percent() {
        assert_eq!(
            parse_size_or_percent("50%", K).unwrap(),
            SizeValue::Percent(50.0)
        );
        assert_eq!(
            parse_size_or_percent(" 12.5% ", K).unwrap(),
            SizeValue::Percent(12.5)
        );
        assert_eq!(
            parse_size_or_percent("100%", K).unwrap(),
            SizeValue::Percent(100.0)
        );
        assert_eq!(
            parse_size_or_percent("4k", K).unwrap(),
            SizeValue::Bytes(4096)
        );
        assert_eq!(
            parse_size_or_percent("4k", D).unwrap(),
            SizeValue::Bytes(4000)
        );
        assert_eq!(
            parse_size_or_percent("0%", K).unwrap(),
            SizeValue::Percent(0.0)
        );
        for bad in ["100.5%", "-5%", "abc%", "%", "nan%", "inf%"] {
            let e = parse_size_or_percent(bad, K).unwrap_err().0;
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        assert_eq!(format_size_value(SizeValue::Percent(12.5), K), "12.5%");
        assert_eq!(format_size_value(SizeValue::Bytes(8192), K), "8k");
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("10", K).unwrap(), 10);
        assert_eq!(parse_int("-3", K).unwrap(), -3);
        assert_eq!(parse_int("0x10", K).unwrap(), 16);
        assert_eq!(parse_int("-0x10", K).unwrap(), -16);
        assert_eq!(parse_int("4k", K).unwrap(), 4096);
        assert_eq!(parse_int("-4k", K).unwrap(), -4096);
        assert_eq!(parse_int("4k", D).unwrap(), 4000);
        assert_eq!(parse_int("(1-3)", K).unwrap(), -2);
        assert_eq!(parse_int("(-7/2)", K).unwrap(), -3);
        assert_eq!(parse_int("9223372036854775807", K).unwrap(), i64::MAX);
        assert_eq!(parse_int("-9223372036854775808", K).unwrap(), i64::MIN);
        for bad in ["9223372036854775808", "-9223372036854775809", "8192p"] {
            let e = parse_int(bad, K).unwrap_err().0;
            assert!(
                e.contains(&format!("`{bad}`")) && e.contains("64"),
                "{bad}: {e}"
            );
        }
        let e = parse_int("", K).unwrap_err().0;
        assert!(e.contains("empty"), "{e}");
        let e = parse_int("12x", K).unwrap_err().0;
        assert!(e.contains("`12x`") && e.contains("integer"), "{e}");
        let e = parse_int("1.5", K).unwrap_err().0;
        assert!(e.contains("`1.5`") && e.contains("fractions"), "{e}");
        let e = parse_int("(2^63)", K).unwrap_err().0;
        assert!(e.contains("`(2^63)`"), "{e}");
        let e = parse_int("--1", K).unwrap_err().0;
        assert!(e.contains("`--1`"), "{e}");
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(0, K), "0");
        assert_eq!(format_size(1, K), "1");
        assert_eq!(format_size(4096, K), "4k");
        assert_eq!(format_size(4000, K), "4000");
        assert_eq!(format_size(4000, D), "4k");
        assert_eq!(format_size(4096, D), "4096");
        assert_eq!(format_size(1536, K), "1536");
        assert_eq!(format_size(1 << 20, K), "1m");
        assert_eq!(format_size(3 << 30, K), "3g");
        assert_eq!(format_size(1 << 40, K), "1t");
        assert_eq!(format_size(1 << 50, K), "1p");
        assert_eq!(format_size(1 << 60, K), "1024p");
        assert_eq!(format_size(104_857_600, K), "100m");
        assert_eq!(format_size(100_000_000, D), "100m");
        assert_eq!(format_size(u64::MAX, K), u64::MAX.to_string());
    }

    #[test]
    fn suffix_table() {
        assert_eq!(size_suffix_multiplier("", K), Some(1));
        assert_eq!(size_suffix_multiplier("B", D), Some(1));
        assert_eq!(size_suffix_multiplier("GB", K), Some(1 << 30));
        assert_eq!(size_suffix_multiplier("gib", K), Some(1_000_000_000));
        assert_eq!(size_suffix_multiplier("GiB", D), Some(1 << 30));
        assert_eq!(size_suffix_multiplier("q", K), None);
        assert_eq!(size_suffix_multiplier("kx", K), None);
    }

    fn unit_multiple(kb: KbBase) -> impl Strategy<Value = u64> {
        (1u32..=5, 1u64..5000).prop_map(move |(p, n)| n * kb.unit().pow(p))
    }

    proptest! {
        #[test]
        fn round_trip_any_1024(v in 0u64..=(1 << 60)) {
            prop_assert_eq!(parse_size(&format_size(v, K), K).unwrap(), v);
        }

        #[test]
        fn round_trip_any_1000(v in 0u64..=(1 << 60)) {
            prop_assert_eq!(parse_size(&format_size(v, D), D).unwrap(), v);
        }

        #[test]
        fn round_trip_unit_multiples_1024(v in unit_multiple(K)) {
            let text = format_size(v, K);
            prop_assert!(text.ends_with(['k', 'm', 'g', 't', 'p']), "{}", text);
            prop_assert_eq!(parse_size(&text, K).unwrap(), v);
        }

        #[test]
        fn round_trip_unit_multiples_1000(v in unit_multiple(D)) {
            let text = format_size(v, D);
            prop_assert!(text.ends_with(['k', 'm', 'g', 't', 'p']), "{}", text);
            prop_assert_eq!(parse_size(&text, D).unwrap(), v);
        }

        #[test]
        fn int_round_trip(v in any::<i64>()) {
            prop_assert_eq!(parse_int(&v.to_string(), K).unwrap(), v);
        }

        #[test]
        fn percent_round_trip(p in 0.001f64..=100.0) {
            let text = format_size_value(SizeValue::Percent(p), K);
            prop_assert_eq!(parse_size_or_percent(&text, K).unwrap(), SizeValue::Percent(p));
        }
    }
}
