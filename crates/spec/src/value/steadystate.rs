//! Steady-state criteria (`steadystate=iops_slope:0.1%`, `bw:5m`): the metric
//! watched and its limit, absolute or a percentage of the mean, parsed and
//! printed back.

use super::size::{parse_size, KbBase};
use crate::error::ValueError;

/// The metric a steady-state criterion watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SteadyMetric {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
}

impl SteadyMetric {
    pub const ALL: [(SteadyMetric, &'static str); 4] = [
        (SteadyMetric::Iops, "iops"),
        (SteadyMetric::IopsSlope, "iops_slope"),
        (SteadyMetric::Bw, "bw"),
        (SteadyMetric::BwSlope, "bw_slope"),
    ];

    /// fio's name of the metric.
    pub fn name(self) -> &'static str {
        match self {
            SteadyMetric::Iops => "iops",
            SteadyMetric::IopsSlope => "iops_slope",
            SteadyMetric::Bw => "bw",
            SteadyMetric::BwSlope => "bw_slope",
        }
    }

    /// Whether the metric is a bandwidth (limits without `%` are bytes/s).
    pub fn is_bw(self) -> bool {
        matches!(self, SteadyMetric::Bw | SteadyMetric::BwSlope)
    }
}

/// `steadystate=METRIC:LIMIT[%]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    pub limit: f64,
    pub percent: bool,
}

/// Parses `steadystate` with `kb_base=1024`; see [`parse_steadystate_kb`].
pub fn parse_steadystate(text: &str) -> Result<SteadyState, ValueError> {
    parse_steadystate_kb(text, KbBase::K1024)
}

/// Parses `steadystate=METRIC:LIMIT[%]`: METRIC is iops, iops_slope, bw or
/// bw_slope (lower case, as in fio). A limit ending in `%` is a percentage
/// of the mean (a number, fraction allowed). Without `%`, an iops limit is
/// a number and a bw limit a size in bytes per second read with `kb`
/// (`bw:1m`), as fio reads it. A negative limit is an error.
pub fn parse_steadystate_kb(text: &str, kb: KbBase) -> Result<SteadyState, ValueError> {
    let t = text.trim();
    let Some((name, limit_text)) = t.split_once(':') else {
        return Err(ValueError::new(format!(
            "`{t}` is not a steady-state criterion: it needs a limit after `:`, such as \
             iops_slope:0.1% or bw:5m"
        )));
    };
    let name = name.trim();
    let Some(metric) = SteadyMetric::ALL
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(m, _)| *m)
    else {
        return Err(ValueError::new(format!(
            "`{t}` is not a steady-state criterion: unknown metric `{name}` (use iops, \
             iops_slope, bw or bw_slope)"
        )));
    };
    let limit_text = limit_text.trim();
    let bad_limit = |why: &str| ValueError::new(format!("`{t}`: the limit `{limit_text}` {why}"));
    let (limit, percent) = if let Some(p) = limit_text.strip_suffix('%') {
        match p.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => (v, true),
            Ok(v) if v < 0.0 => return Err(bad_limit("is negative")),
            _ => return Err(bad_limit("is not a percentage such as 0.1%")),
        }
    } else if metric.is_bw() {
        let v = parse_size(limit_text, kb)
            .map_err(|e| bad_limit(&format!("is not a bandwidth: {}", e.0)))?;
        (v as f64, false)
    } else {
        match limit_text.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => (v, false),
            Ok(v) if v < 0.0 => return Err(bad_limit("is negative")),
            _ => {
                return Err(bad_limit(
                    "is not a number or a percentage such as 2 or 0.1%",
                ))
            }
        }
    };
    Ok(SteadyState {
        metric,
        limit,
        percent,
    })
}

/// Prints a steady-state criterion so that `parse_steadystate_kb` reads it
/// back under any `kb`: the limit as a plain number (bytes per second for a
/// bw limit without `%`), followed by `%` for a percentage.
pub fn format_steadystate(s: &SteadyState) -> String {
    let pct = if s.percent { "%" } else { "" };
    format!("{}:{}{pct}", s.metric.name(), s.limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    const D: KbBase = KbBase::K1000;

    // ---- steady state ----

    #[test]
    fn steadystate() {
        let ss = |metric, limit, percent| SteadyState {
            metric,
            limit,
            percent,
        };
        let p = |s: &str| parse_steadystate(s).unwrap();
        assert_eq!(p("iops:10%"), ss(SteadyMetric::Iops, 10.0, true));
        assert_eq!(p("iops_slope:0.1%"), ss(SteadyMetric::IopsSlope, 0.1, true));
        assert_eq!(p("bw:5"), ss(SteadyMetric::Bw, 5.0, false));
        assert_eq!(p("bw_slope:0.01%"), ss(SteadyMetric::BwSlope, 0.01, true));
        assert_eq!(p("iops:2"), ss(SteadyMetric::Iops, 2.0, false));
        assert_eq!(p("iops:1.5"), ss(SteadyMetric::Iops, 1.5, false));
        assert_eq!(p("bw:1k"), ss(SteadyMetric::Bw, 1024.0, false));
        assert_eq!(
            p("bw_slope:1m"),
            ss(SteadyMetric::BwSlope, 1_048_576.0, false)
        );
        assert_eq!(p("bw:200%"), ss(SteadyMetric::Bw, 200.0, true));
        assert_eq!(p(" bw : 5 "), ss(SteadyMetric::Bw, 5.0, false));
        assert_eq!(
            parse_steadystate_kb("bw:1k", D).unwrap(),
            ss(SteadyMetric::Bw, 1000.0, false)
        );
        assert_eq!(
            format_steadystate(&ss(SteadyMetric::IopsSlope, 0.1, true)),
            "iops_slope:0.1%"
        );
        assert_eq!(
            format_steadystate(&ss(SteadyMetric::Bw, 1024.0, false)),
            "bw:1024"
        );
        assert_eq!(
            format_steadystate(&ss(SteadyMetric::Iops, 2.5, false)),
            "iops:2.5"
        );
        for s in [
            "iops:10%",
            "iops_slope:0.01%",
            "bw:5",
            "bw:1m",
            "bw_slope:0.5%",
            "iops:3.25",
        ] {
            let v = p(s);
            assert_eq!(p(&format_steadystate(&v)), v, "{s}");
            assert_eq!(
                parse_steadystate_kb(&format_steadystate(&v), D).unwrap(),
                v,
                "{s}"
            );
        }
    }

    #[test]
    fn steadystate_errors() {
        let p = parse_steadystate;
        assert_err(p("iops"), &["`iops`", "needs a limit"]);
        assert_err(p(""), &["needs a limit"]);
        assert_err(p("IOPS:10%"), &["`IOPS:10%`", "unknown metric `IOPS`"]);
        assert_err(p("slope:5"), &["unknown metric `slope`"]);
        assert_err(p("bw:abc"), &["`bw:abc`", "limit `abc`", "not a bandwidth"]);
        assert_err(p("bw:1.5"), &["`bw:1.5`", "fractions"]);
        assert_err(p("bw:-5"), &["`bw:-5`", "negative"]);
        assert_err(p("iops:-5"), &["`iops:-5`", "negative"]);
        assert_err(p("iops:-5%"), &["`iops:-5%`", "negative"]);
        assert_err(p("iops:5x"), &["`iops:5x`", "limit `5x`"]);
        assert_err(p("iops:1k"), &["`iops:1k`", "limit `1k`"]);
        assert_err(p("bw:5%%"), &["`bw:5%%`", "not a percentage"]);
        assert_err(p("iops:"), &["`iops:`", "limit ``"]);
        assert_err(p("iops:nan"), &["`iops:nan`"]);
    }

    proptest! {
        #[test]
        fn steadystate_round_trip(limit in 0.0f64..1e6, bytes in 0u64..(1 << 40), m in 0usize..4, pct in any::<bool>()) {
            let metric = SteadyMetric::ALL[m].0;
            let limit = if metric.is_bw() && !pct { bytes as f64 } else { limit };
            let s = SteadyState { metric, limit, percent: pct };
            prop_assert_eq!(parse_steadystate(&format_steadystate(&s)).unwrap(), s);
        }
    }
}
