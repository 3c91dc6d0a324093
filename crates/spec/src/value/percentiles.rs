//! Percentile lists (`percentile_list=99:99.9:99.99`): up to 20 numbers above
//! 0 and at most 100, parsed and printed back exactly. Unlike fio, which drops
//! the values past the twentieth with a warning, a longer list is an error.

use crate::error::ValueError;

/// The most percentiles fio reports.
pub const MAX_PERCENTILES: usize = 20;

/// Parses `percentile_list`: numbers above 0 and at most 100 separated by
/// `:`, at most 20 of them (fio warns and drops the rest; this refuses).
/// The order is kept; reports sort them.
pub fn parse_percentiles(text: &str) -> Result<Vec<f64>, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a percentile list (expected numbers separated by `:` \
             such as 50:99:99.9)",
        ));
    }
    let parts: Vec<&str> = t.split(':').map(str::trim).collect();
    if parts.len() > MAX_PERCENTILES {
        return Err(ValueError::new(format!(
            "`{t}` has {} percentiles; at most {MAX_PERCENTILES} are allowed",
            parts.len()
        )));
    }
    parts
        .into_iter()
        .map(|p| match p.parse::<f64>() {
            Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
            Ok(_) => Err(ValueError::new(format!(
                "in `{t}`: the percentile `{p}` is out of range (above 0 and at most 100)"
            ))),
            Err(_) if p.is_empty() => Err(ValueError::new(format!(
                "`{t}` has an empty entry (expected numbers separated by `:`)"
            ))),
            Err(_) => Err(ValueError::new(format!("in `{t}`: `{p}` is not a number"))),
        })
        .collect()
}

/// Prints percentiles separated by `:` with Rust's shortest exact float
/// form, so that `parse_percentiles` reads back the same numbers.
pub fn format_percentiles(list: &[f64]) -> String {
    list.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    // ---- percentiles (fio 3.33: `percentile_list=100.5` is refused, a
    // 21st value is dropped with "the list exceeding max length 20") ----

    #[test]
    fn percentiles() {
        assert_eq!(parse_percentiles("99.5:99.9").unwrap(), vec![99.5, 99.9]);
        assert_eq!(parse_percentiles("50:100").unwrap(), vec![50.0, 100.0]);
        assert_eq!(parse_percentiles("90:10").unwrap(), vec![90.0, 10.0]);
        assert_eq!(
            parse_percentiles(" 1 : 99.999999 ").unwrap(),
            vec![1.0, 99.999999]
        );
        assert_eq!(parse_percentiles("1e1").unwrap(), vec![10.0]);
        let twenty: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        assert_eq!(parse_percentiles(&twenty.join(":")).unwrap().len(), 20);
        assert_eq!(format_percentiles(&[99.5, 99.9, 50.0]), "99.5:99.9:50");
        assert_eq!(format_percentiles(&[0.1 + 0.2]), "0.30000000000000004");
        assert_eq!(
            parse_percentiles("0.30000000000000004").unwrap(),
            vec![0.1 + 0.2]
        );
    }

    #[test]
    fn percentile_errors() {
        let p = parse_percentiles;
        assert_err(p(""), &["empty"]);
        assert_err(p("100.5"), &["`100.5`", "out of range"]);
        assert_err(p("0:50"), &["`0`", "out of range"]);
        assert_err(p("-1:50"), &["`-1`", "out of range"]);
        assert_err(p("50::60"), &["`50::60`", "empty entry"]);
        assert_err(p("50:"), &["`50:`", "empty entry"]);
        assert_err(p("abc"), &["`abc`", "not a number"]);
        assert_err(p("nan"), &["`nan`", "out of range"]);
        let many: Vec<String> = (1..=21).map(|i| i.to_string()).collect();
        assert_err(p(&many.join(":")), &["21 percentiles", "at most 20"]);
    }

    proptest! {
        #[test]
        fn percentiles_round_trip(list in prop::collection::vec(1e-9f64..=100.0, 1..=20)) {
            let text = format_percentiles(&list);
            prop_assert_eq!(parse_percentiles(&text).unwrap(), list, "{}", text);
        }
    }
}
