//! The one number formatter of the human formats (text, Markdown, HTML)
//! and the one definition of spread. fio's own formats keep fio's
//! formatting; CSV and JSON carry the numbers themselves.
//!
//! Numbers keep about four significant digits; from 1,000 up they are
//! whole numbers with a comma between thousands (the one separator style
//! of every command): `27,133`, `440.9`, `30.70`, `1.500`, `0.04250`.

/// A number for people.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a >= 999.5 || (v.fract() == 0.0 && a < 1e15) {
        return grouped(v.round());
    }
    if a == 0.0 {
        return "0".to_string();
    }
    let decimals = (3 - a.log10().floor() as i32).clamp(1, 9) as usize;
    format!("{v:.decimals$}")
}

/// An optional number; "-" for none.
pub fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), fmt)
}

/// A whole number with commas between thousands: `10,000`.
pub fn grouped(v: f64) -> String {
    let neg = v < 0.0;
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An integer count with the separators.
pub fn count(n: u64) -> String {
    grouped(n as f64)
}

/// A latency in nanoseconds with the unit that keeps it short: `85.0 us`,
/// `1.250 ms`, `2.000 s`; "-" for zero (none measured).
pub fn latency_ns(ns: f64) -> String {
    if !(ns.is_finite() && ns > 0.0) {
        return "-".to_string();
    }
    if ns < 1e3 {
        format!("{} ns", fmt(ns))
    } else if ns < 1e6 {
        format!("{} us", fmt(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", fmt(ns / 1e6))
    } else {
        format!("{} s", fmt(ns / 1e9))
    }
}

/// What `±` means wherever iolab prints it.
pub const SPREAD_MEANING: &str = "±N%: half the width of the 95% interval of the geometric mean \
of the runs, relative to that mean";

/// The spread of repeated runs: half the width of the 95% confidence
/// interval of their geometric mean (Student's t on the logarithms),
/// relative to the geometric mean, taking the wider side. None for fewer
/// than two runs or a value that is not positive.
pub fn spread(runs: &[f64]) -> Option<f64> {
    let (gm, lo, hi) = iolab_stats::repeat_rule::gm_interval(runs)?;
    if gm <= 0.0 {
        return None;
    }
    Some((hi / gm - 1.0).max(1.0 - lo / gm))
}

/// The interval `(lo, hi)` that [`spread`] measures.
pub fn interval(runs: &[f64]) -> Option<(f64, f64)> {
    iolab_stats::repeat_rule::gm_interval(runs).map(|(_, lo, hi)| (lo, hi))
}

/// A spread as `±2.1%`.
pub fn spread_text(s: f64) -> String {
    format!("±{}", iolab_stats::repeat_rule::percent(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_digits_and_group_thousands() {
        assert_eq!(fmt(27133.4), "27,133");
        assert_eq!(fmt(1712.5), "1,713");
        assert_eq!(fmt(999.6), "1,000");
        assert_eq!(fmt(440.94), "440.9");
        assert_eq!(fmt(30.7), "30.70");
        assert_eq!(fmt(1.5), "1.500");
        assert_eq!(fmt(0.0425), "0.04250");
        assert_eq!(fmt(3.0), "3");
        assert_eq!(fmt(0.0), "0");
        assert_eq!(fmt(-12345.0), "-12,345");
        assert_eq!(fmt(f64::NAN), "-");
        assert_eq!(count(10_000), "10,000");
        assert_eq!(count(999), "999");
    }

    #[test]
    fn latencies_take_a_short_unit() {
        assert_eq!(latency_ns(85_000.0), "85 us");
        assert_eq!(latency_ns(85_300.0), "85.30 us");
        assert_eq!(latency_ns(1_250_000.0), "1.250 ms");
        assert_eq!(latency_ns(512.0), "512 ns");
        assert_eq!(latency_ns(0.0), "-");
    }

    #[test]
    fn spread_is_the_relative_half_width_of_the_geometric_mean_interval() {
        assert_eq!(spread(&[5.0]), None);
        assert_eq!(spread(&[5.0, 5.0, 5.0]), Some(0.0));
        let s = spread(&[100.0, 102.0, 98.0, 101.0]).unwrap();
        assert!(s > 0.01 && s < 0.05, "{s}");
        assert_eq!(spread_text(0.021), "±2.1%");
    }
}
