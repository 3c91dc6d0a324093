//! Times as the store keeps them: UTC in RFC 3339 (`2026-11-22T06:42:16Z`)
//! for people and exports, seconds since the epoch for ordering and
//! filtering. Conversion both ways by the civil-calendar arithmetic of
//! the proleptic Gregorian calendar, and the `--since` forms the history
//! filter takes (a date, a date and time, or an age like `7d`).

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time, UTC, RFC 3339 with whole seconds.
pub fn now_rfc3339() -> String {
    format_rfc3339(now_unix())
}

/// Seconds since the epoch now.
pub fn now_unix() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// `secs` since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Seconds since the epoch of an RFC 3339 time (`2026-11-22T06:42:16Z`,
/// with optional fraction and a `Z` or `+HH:MM` offset; a space may stand
/// for the `T`), or of a bare date (`2026-11-22`, midnight UTC).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let text = text.trim();
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = digits(&text[0..4])?;
    let mo = digits(&text[5..7])?;
    let d = digits(&text[8..10])?;
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let day_secs = days_from_civil(y, mo, d) * 86_400;
    if b.len() == 10 {
        return Some(day_secs);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let h = digits(&text[11..13])?;
    let mi = digits(&text[14..16])?;
    let s = digits(&text[17..19])?;
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &frac[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && rest.as_bytes()[3] == b':' => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let oh = digits(&rest[1..3])?;
            let om = digits(&rest[4..6])?;
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    Some(day_secs + h * 3600 + mi * 60 + s - offset)
}

/// The start of a `--since` window: an RFC 3339 time or date, or an age
/// before `now` as a number and a unit (`90s`, `30m`, `12h`, `7d`, `2w`).
pub fn parse_since(text: &str, now: i64) -> Option<i64> {
    if let Some(t) = parse_rfc3339(text) {
        return Some(t);
    }
    let text = text.trim();
    let unit = text.chars().last()?;
    let per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    let n: i64 = text[..text.len() - 1].parse().ok().filter(|n| *n >= 0)?;
    Some(now - n.checked_mul(per)?)
}

fn digits(s: &str) -> Option<i64> {
    if s.bytes().all(|c| c.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (March-based era arithmetic).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        // `date -u -d @1763793736`.
        assert_eq!(format_rfc3339(1_763_793_736), "2025-11-22T06:42:16Z");
        assert_eq!(format_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn parses_what_it_formats_and_offsets() {
        for t in [0, 1, 951_782_400, 1_763_793_736, 4_102_444_800, -86_401] {
            assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t), "{t}");
        }
        assert_eq!(
            parse_rfc3339("2025-11-22T08:42:16.123+02:00"),
            Some(1_763_793_736)
        );
        assert_eq!(parse_rfc3339("2025-11-22 06:42:16Z"), Some(1_763_793_736));
        assert_eq!(parse_rfc3339("2025-11-22"), Some(1_763_769_600));
        for bad in [
            "",
            "2025-13-01",
            "2025-02-29",
            "2025-11-22T25:00:00Z",
            "2025-11-22T06:42:16",
            "2025-11-22T06:42:16+0200",
            "yesterday",
            "2025-11-22T06:42:16.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn since_takes_dates_and_ages() {
        let now = 1_000_000;
        assert_eq!(parse_since("7d", now), Some(now - 7 * 86_400));
        assert_eq!(parse_since("12h", now), Some(now - 12 * 3600));
        assert_eq!(parse_since("30m", now), Some(now - 1800));
        assert_eq!(parse_since("2w", now), Some(now - 14 * 86_400));
        assert_eq!(parse_since("1970-01-02", now), Some(86_400));
        assert_eq!(parse_since("-3d", now), None);
        assert_eq!(parse_since("d", now), None);
        assert_eq!(parse_since("5y", now), None);
    }
}
