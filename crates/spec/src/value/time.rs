//! Durations with fio's suffixes: d, h, m (minutes), s, ms, us (and the long
//! forms). A bare number is in the option's default unit. Kept in
//! microseconds.
//!
//! Suffixes are case-insensitive: `us`/`usec`, `ms`/`msec`, `s`/`sec`,
//! `m`/`min`, `h`/`hour`, `d`/`day`. fio itself knows only the short forms
//! and `usec`, `msec` (it reads `1sec` as 0); the long forms are iolab's.
//! A fraction outside an expression is refused (fio reads `1.5s` as 1s);
//! inside parentheses it is fine: `(1.5*1s)`. As fio's HOWTO says, a bare
//! number inside an expression is in microseconds, whatever the option's
//! default unit: `runtime=(2*60)` is 120us, `runtime=(2*60s)` is two
//! minutes.

use super::expr;
use super::size::{parse_decimal, split_number};
use crate::error::ValueError;

/// The unit of a bare number for a time option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Usec,
    Msec,
    Sec,
}

impl TimeUnit {
    /// Microseconds in one of this unit.
    pub fn micros(self) -> u64 {
        match self {
            TimeUnit::Usec => 1,
            TimeUnit::Msec => 1_000,
            TimeUnit::Sec => 1_000_000,
        }
    }
}

const SEC: u64 = 1_000_000;
const SUFFIX_HELP: &str = "use us, ms, s, m (minutes), h or d";

/// Microseconds per unit of a time suffix (case-insensitive), or None if the
/// suffix is unknown. The empty suffix is `default`.
pub fn time_suffix_micros(suffix: &str, default: TimeUnit) -> Option<u64> {
    let m = match suffix.to_ascii_lowercase().as_str() {
        "" => default.micros(),
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" | "sec" => SEC,
        "m" | "min" => 60 * SEC,
        "h" | "hour" => 3_600 * SEC,
        "d" | "day" => 86_400 * SEC,
        _ => return None,
    };
    Some(m)
}

/// Parses a duration into microseconds.
pub fn parse_time(text: &str, default: TimeUnit) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a time (expected a duration such as 10, 500ms or 2m)",
        ));
    }
    if expr::is_expression(t) {
        let v = expr::eval(t, &time_atom)?;
        if v < 0.0 {
            return Err(ValueError::new(format!(
                "`{t}` is not a time: it evaluates to {v}us, and times cannot be negative"
            )));
        }
        if v >= u64::MAX as f64 {
            return Err(ValueError::new(format!(
                "`{t}` is not a time: it evaluates to {v}us, which does not fit in 64 bits"
            )));
        }
        return Ok(v.trunc() as u64);
    }
    if t.starts_with('-') {
        return Err(ValueError::new(format!(
            "`{t}` is not a time: it cannot be negative"
        )));
    }
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(end);
    if digits.is_empty() {
        return Err(ValueError::new(format!(
            "`{t}` is not a time: expected a number such as 10, 500ms or 2m"
        )));
    }
    if suffix.starts_with('.') {
        return Err(ValueError::new(format!(
            "`{t}` is not a time: fractions are not allowed (fio would silently drop the \
             fraction); use a smaller unit (1500ms, not 1.5s) or an expression such as `({t})`"
        )));
    }
    let mult = time_suffix_micros(suffix, default).ok_or_else(|| {
        ValueError::new(format!(
            "`{t}` is not a time: unknown suffix `{suffix}` ({SUFFIX_HELP})"
        ))
    })?;
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| {
            ValueError::new(format!(
                "`{t}` is not a time: it is too long to count in microseconds"
            ))
        })
}

/// Prints microseconds with an explicit suffix, shortest exact form, so that
/// it parses back the same whatever the option's default unit: the largest
/// of d, h, m, s, ms that divides the value, else us. Zero is `0s`.
pub fn format_time(usec: u64) -> String {
    if usec == 0 {
        return "0s".to_string();
    }
    for (mult, suffix) in [
        (86_400 * SEC, "d"),
        (3_600 * SEC, "h"),
        (60 * SEC, "m"),
        (SEC, "s"),
        (1_000, "ms"),
    ] {
        if usec.is_multiple_of(mult) {
            return format!("{}{suffix}", usec / mult);
        }
    }
    format!("{usec}us")
}

/// One number token of a time expression; a bare number is microseconds.
fn time_atom(tok: &str) -> Result<f64, ValueError> {
    let (num, suffix) = split_number(tok);
    let n = parse_decimal(num, tok)?;
    let mult = time_suffix_micros(suffix, TimeUnit::Usec).ok_or_else(|| {
        ValueError::new(format!(
            "`{tok}` is not a time: unknown suffix `{suffix}` ({SUFFIX_HELP})"
        ))
    })?;
    Ok(n * mult as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(text: &str, default: TimeUnit) -> String {
        match parse_time(text, default) {
            Ok(v) => panic!("`{text}` parsed as {v}us, expected an error"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn fio_facts() {
        // Verified with fio 3.33 --time_based --runtime=X: job_runtime in ms.
        assert_eq!(parse_time("1", TimeUnit::Sec).unwrap(), 1_000_000);
        assert_eq!(parse_time("1500ms", TimeUnit::Sec).unwrap(), 1_500_000);
        assert_eq!(parse_time("1500MS", TimeUnit::Sec).unwrap(), 1_500_000);
        assert_eq!(parse_time("1500msec", TimeUnit::Sec).unwrap(), 1_500_000);
        assert_eq!(parse_time("1200000us", TimeUnit::Sec).unwrap(), 1_200_000);
        assert_eq!(parse_time("1200000usec", TimeUnit::Sec).unwrap(), 1_200_000);
        assert_eq!(parse_time("1s", TimeUnit::Sec).unwrap(), 1_000_000);
        assert_eq!(parse_time("1S", TimeUnit::Sec).unwrap(), 1_000_000);
        // From fio's HOWTO: m is minutes, h hours, d days.
        assert_eq!(parse_time("10m", TimeUnit::Sec).unwrap(), 600_000_000);
        assert_eq!(parse_time("2h", TimeUnit::Msec).unwrap(), 7_200_000_000);
        assert_eq!(parse_time("1d", TimeUnit::Usec).unwrap(), 86_400_000_000);
    }

    #[test]
    fn default_units_and_long_forms() {
        assert_eq!(parse_time("20", TimeUnit::Usec).unwrap(), 20);
        assert_eq!(parse_time("20", TimeUnit::Msec).unwrap(), 20_000);
        assert_eq!(parse_time("20", TimeUnit::Sec).unwrap(), 20_000_000);
        assert_eq!(parse_time(" 5sec ", TimeUnit::Msec).unwrap(), 5_000_000);
        assert_eq!(parse_time("3min", TimeUnit::Msec).unwrap(), 180_000_000);
        assert_eq!(parse_time("1HOUR", TimeUnit::Msec).unwrap(), 3_600_000_000);
        assert_eq!(parse_time("2day", TimeUnit::Msec).unwrap(), 172_800_000_000);
        assert_eq!(parse_time("0", TimeUnit::Sec).unwrap(), 0);
        assert_eq!(TimeUnit::Msec.micros(), 1000);
    }

    #[test]
    fn expressions() {
        assert_eq!(parse_time("(1.5*1s)", TimeUnit::Sec).unwrap(), 1_500_000);
        assert_eq!(parse_time("(2*60s)", TimeUnit::Msec).unwrap(), 120_000_000);
        assert_eq!(parse_time("(10ms+500us)", TimeUnit::Sec).unwrap(), 10_500);
        // A bare number in an expression is microseconds, as fio documents.
        assert_eq!(parse_time("(2*60)", TimeUnit::Sec).unwrap(), 120);
        assert_eq!(parse_time("(1m/7)", TimeUnit::Sec).unwrap(), 8_571_428);
        let e = err("(1s-2s)", TimeUnit::Sec);
        assert!(e.contains("`(1s-2s)`") && e.contains("negative"), "{e}");
        let e = err("(2^70)", TimeUnit::Sec);
        assert!(e.contains("`(2^70)`") && e.contains("64 bits"), "{e}");
        let e = err("(1x*2)", TimeUnit::Sec);
        assert!(
            e.contains("`1x`") && e.contains("unknown suffix `x`"),
            "{e}"
        );
        let e = err("(1s/0)", TimeUnit::Sec);
        assert!(e.contains("division by zero"), "{e}");
    }

    #[test]
    fn errors_name_the_text() {
        let e = err("", TimeUnit::Sec);
        assert!(e.contains("empty"), "{e}");
        let e = err("10x", TimeUnit::Sec);
        assert!(
            e.contains("`10x`") && e.contains("unknown suffix `x`"),
            "{e}"
        );
        assert!(e.contains("ms"), "{e}");
        let e = err("-5s", TimeUnit::Sec);
        assert!(e.contains("`-5s`") && e.contains("negative"), "{e}");
        let e = err("1.5s", TimeUnit::Sec);
        assert!(e.contains("`1.5s`") && e.contains("fractions"), "{e}");
        let e = err("s", TimeUnit::Sec);
        assert!(e.contains("`s`") && e.contains("expected a number"), "{e}");
        let e = err("99999999999999999999", TimeUnit::Usec);
        assert!(
            e.contains("`99999999999999999999`") && e.contains("too long"),
            "{e}"
        );
        let e = err("300000000d", TimeUnit::Sec);
        assert!(e.contains("`300000000d`") && e.contains("too long"), "{e}");
        let e = err("5 s", TimeUnit::Sec);
        assert!(e.contains("unknown suffix ` s`"), "{e}");
        let e = err("0x10", TimeUnit::Sec);
        assert!(e.contains("unknown suffix `x10`"), "{e}");
    }

    #[test]
    fn formatting() {
        assert_eq!(format_time(0), "0s");
        assert_eq!(format_time(20_000_000), "20s");
        assert_eq!(format_time(120_000_000), "2m");
        assert_eq!(format_time(90_000_000), "90s");
        assert_eq!(format_time(3_600_000_000), "1h");
        assert_eq!(format_time(86_400_000_000), "1d");
        assert_eq!(format_time(1500), "1500us");
        assert_eq!(format_time(1_500_000), "1500ms");
        assert_eq!(format_time(7), "7us");
        assert_eq!(format_time(u64::MAX), format!("{}us", u64::MAX));
    }

    proptest! {
        #[test]
        fn round_trip_any(v in any::<u64>()) {
            for unit in [TimeUnit::Usec, TimeUnit::Msec, TimeUnit::Sec] {
                prop_assert_eq!(parse_time(&format_time(v), unit).unwrap(), v);
            }
        }

        #[test]
        fn round_trip_whole_units(n in 1u64..100_000, i in 0usize..6) {
            let mult = [1, 1_000, SEC, 60 * SEC, 3_600 * SEC, 86_400 * SEC][i];
            let v = n * mult;
            prop_assert_eq!(parse_time(&format_time(v), TimeUnit::Sec).unwrap(), v);
        }
    }
}
