//! fio's number formatting, shared by the renderers: the abbreviated
//! numbers with unit prefixes ("30.2k", "118MiB/s", "7968KiB"), C's `%f`
//! family as fio prints floats (6 decimals, "nan"), the choice between
//! nsec, usec and msec for latencies, and `ctime`-style dates.

/// What an abbreviated number counts, which sets its suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A bare count: "30.2k".
    None,
    /// Bytes: "7968KiB".
    Byte,
    /// Bytes per second: "118MiB/s".
    BytePerSec,
    /// Bytes per second shown as bits: "118Gibit/s" (the number is
    /// multiplied by 8).
    BitPerSec,
}

/// fio's `num2str`: `num` with at most `maxlen` digits (a decimal point
/// counts as one), divided by 1000 or 1024 as often as needed with the
/// matching prefix, and the unit's suffix. With room left after the integer
/// part, the remainder of the last division is shown as decimals; without,
/// the number is rounded up when the remainder was at least half.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { &IEC } else { &SI };
    let suffix = match unit {
        Unit::None => "",
        Unit::Byte => "B",
        Unit::BytePerSec => "B/s",
        Unit::BitPerSec => "bit/s",
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = match unit {
        Unit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };

    let mut prefix = 0;
    let mut remainder: Option<u64> = None;
    let mut carry = false;
    while prefix < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let rem = num % thousand;
        num /= thousand;
        carry = rem >= thousand / 2;
        remainder = Some(rem);
        prefix += 1;
    }
    if prefix >= prefixes.len() {
        prefix = 0;
    }
    let Some(rem) = remainder else {
        return format!("{num}{}{suffix}", prefixes[prefix]);
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{suffix}", prefixes[prefix]);
    }
    // The remainder as a fraction with `room - 1` decimals; when it rounds
    // up to 1, the integer part takes it (fio prints "N+1." and the zeros).
    let places = (room - 1) as usize;
    let frac = format!("{:.*}", places, rem as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{suffix}", &frac[2..], prefixes[prefix])
}

/// The number of decimal digits of `n`.
pub fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// C's `%.<prec>f`, including its "nan", "-nan", "inf" spellings.
pub fn fixed(x: f64, prec: usize) -> String {
    if x.is_nan() {
        if x.is_sign_negative() {
            "-nan".to_string()
        } else {
            "nan".to_string()
        }
    } else if x.is_infinite() {
        if x < 0.0 {
            "-inf".to_string()
        } else {
            "inf".to_string()
        }
    } else {
        format!("{x:.prec$}")
    }
}

/// C's `%<width>.<prec>f`: `fixed` right-aligned in `width` columns.
pub fn fixed_w(x: f64, width: usize, prec: usize) -> String {
    format!("{:>width$}", fixed(x, prec))
}

/// C's `%f`: six decimals, as fio prints every float in JSON and terse.
pub fn f6(x: f64) -> String {
    fixed(x, 6)
}

/// A latency series scaled to the unit fio shows it in: nanoseconds
/// unless the values are large and spread enough for micro- or
/// milliseconds (min above 2 us, max above 100 us and stdev above 1 us for
/// usec; a thousand times that for msec). Min and max are divided as
/// integers, mean and stdev as floats.
pub struct ScaledLat {
    pub unit: &'static str,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
}

pub fn scale_lat(min: u64, max: u64, mean: f64, dev: f64) -> ScaledLat {
    let (unit, div) = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1_000_000)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    ScaledLat {
        unit,
        min: min / div,
        max: max / div,
        mean: mean / div as f64,
        dev: dev / div as f64,
    }
}

/// `secs` since the epoch, shifted by `utc_offset_s`, as C's `ctime`
/// prints it without the newline: "Sun Nov 22 04:31:39 2026".
pub fn ctime(secs: u64, utc_offset_s: i32) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t = secs as i64 + i64::from(utc_offset_s);
    let days = t.div_euclid(86_400);
    let sod = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        y
    )
}

/// Year, month (1-12) and day (1-31) of a day count since 1970-01-01, in
/// the proleptic Gregorian calendar (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_seen_in_fio_output() {
        // IOPS: 4 significant places, SI.
        assert_eq!(num2str(30181, 4, false, Unit::None), "30.2k");
        assert_eq!(num2str(341333, 4, false, Unit::None), "341k");
        assert_eq!(num2str(63999, 4, false, Unit::None), "64.0k");
        assert_eq!(num2str(2426, 4, false, Unit::None), "2426");
        assert_eq!(num2str(4452383, 4, false, Unit::None), "4452k");
        // Bandwidth, both bases.
        assert_eq!(num2str(123624727, 4, true, Unit::BytePerSec), "118MiB/s");
        assert_eq!(num2str(123624727, 4, false, Unit::BytePerSec), "124MB/s");
        assert_eq!(num2str(98304000, 4, true, Unit::BytePerSec), "93.8MiB/s");
        assert_eq!(num2str(146621816131, 4, true, Unit::BytePerSec), "137GiB/s");
        // Sizes.
        assert_eq!(num2str(8159232, 4, true, Unit::Byte), "7968KiB");
        assert_eq!(num2str(8159232, 4, false, Unit::Byte), "8159kB");
        assert_eq!(num2str(4096, 4, true, Unit::Byte), "4096B");
        assert_eq!(num2str(131072, 4, true, Unit::Byte), "128KiB");
        // Bits.
        assert_eq!(num2str(15825294961, 4, true, Unit::BitPerSec), "118Gibit/s");
        // Latency min/max: 6 places, no unit.
        assert_eq!(num2str(945254, 6, false, Unit::None), "945254");
        assert_eq!(num2str(1234567, 6, false, Unit::None), "1234.6k");
        assert_eq!(num2str(0, 4, false, Unit::None), "0");
    }

    #[test]
    fn remainder_rounding_up_to_one_carries() {
        // 19999 at 4 places is 19 and 999/1000 with one decimal: 0.999
        // rounds to "1.0", which carries into the integer part.
        assert_eq!(num2str(1999, 4, false, Unit::None), "1999");
        assert_eq!(num2str(19999, 4, false, Unit::None), "20.0k");
        assert_eq!(num2str(1999, 3, false, Unit::None), "2.0k");
    }

    #[test]
    fn c_floats() {
        assert_eq!(f6(28075.044177), "28075.044177");
        assert_eq!(f6(0.0), "0.000000");
        assert_eq!(fixed_w(5.72, 5, 2), " 5.72");
        assert_eq!(fixed_w(1447.244175, 5, 2), "1447.24");
        assert_eq!(fixed(f64::NAN, 2), "nan");
        assert_eq!(fixed(-f64::NAN, 2), "-nan");
    }

    #[test]
    fn latency_units() {
        let s = scale_lat(24596, 132969, 28075.044177, 5724.417257);
        assert_eq!((s.unit, s.min, s.max), ("usec", 24, 132));
        let s = scale_lat(2825, 26169, 3790.26, 1447.24);
        assert_eq!(s.unit, "nsec");
        let s = scale_lat(2_500_000, 150_000_000, 9e6, 2e6);
        assert_eq!((s.unit, s.min, s.max), ("msec", 2, 150));
    }

    #[test]
    fn ctime_like_c() {
        assert_eq!(ctime(1795321899, 0), "Sun Nov 22 04:31:39 2026");
        assert_eq!(ctime(0, 0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(0, -3600), "Wed Dec 31 23:00:00 1969");
        assert_eq!(ctime(951782400, 0), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn digit_counts() {
        assert_eq!(digits(0), 1);
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(u64::MAX), 20);
    }
}
