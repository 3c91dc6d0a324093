//! Random distributions: where offsets land (`random_distribution`: random,
//! zipf, pareto, normal, zoned, zoned_abs) and which file is served next
//! (`file_service_type`), with fio's defaults and range checks. Each has a
//! parser and a printer that round-trip.
//!
//! Unlike fio, which ignores them, extra fields (`random:5`,
//! `zipf:1.2:0.5:0.3`) are errors, and so are switch counts and centers that
//! `FileService` has no place for.

use super::percent::whole_percent;
use super::size::{format_size, parse_size, KbBase};
use crate::error::ValueError;

/// `random_distribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Random,
    Zipf {
        theta: f64,
        center: Option<f64>,
    },
    Pareto {
        h: f64,
        center: Option<f64>,
    },
    Normal {
        dev: f64,
        center: Option<f64>,
    },
    /// `zoned:ACCESS%/RANGE%:...`: per zone, the share of accesses and the
    /// share of the file it covers.
    Zoned(Vec<(f64, f64)>),
    /// `zoned_abs:ACCESS%/SIZE:...`: zones given as absolute sizes.
    ZonedAbs(Vec<(f64, u64)>),
}

/// fio's Zipf theta when `zipf` has no value.
pub const DEFAULT_ZIPF_THETA: f64 = 1.1;
/// fio's Pareto power when `pareto` has no value.
pub const DEFAULT_PARETO_H: f64 = 0.2;
/// fio's normal deviation when `normal` has no value.
pub const DEFAULT_NORMAL_DEV: f64 = 0.0;

/// Parses `random_distribution` with `kb_base=1024`; see
/// [`parse_distribution_kb`].
pub fn parse_distribution(text: &str) -> Result<Distribution, ValueError> {
    parse_distribution_kb(text, KbBase::K1024)
}

/// Parses `random_distribution`: `random`; `zipf[:THETA[:CENTER]]`,
/// `pareto[:H[:CENTER]]`, `normal[:DEV[:CENTER]]`; `zoned:A/R:A/R...`;
/// `zoned_abs:A/SIZE:A/SIZE...`. Names are lower case, as in fio.
///
/// As in fio: without a value zipf's theta is 1.1, pareto's power 0.2 and
/// normal's deviation 0; theta must not be 1; the Pareto power is above 0
/// and below 1; the deviation is at least 0 and below 100; the center is
/// between 0 and 1. In `zoned` and `zoned_abs` the access shares are whole
/// percentages adding up to exactly 100; in `zoned` the range shares are
/// whole percentages adding up to at most 100 (fio accepts less: the zones
/// then cover only the start of the file). Zone sizes are read with `kb`.
/// Unlike fio, extra fields (`random:5`, `zipf:1.2:0.5:0.3`) are errors.
pub fn parse_distribution_kb(text: &str, kb: KbBase) -> Result<Distribution, ValueError> {
    let t = text.trim();
    let (name, rest) = match t.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r)),
        None => (t, None),
    };
    match name {
        "random" => match rest {
            None => Ok(Distribution::Random),
            Some(_) => Err(ValueError::new(format!(
                "`{t}` is not a random distribution: `random` takes no value"
            ))),
        },
        "zipf" | "pareto" | "normal" => {
            let (v, center) = skew_args(t, name, rest)?;
            Ok(match name {
                "zipf" => Distribution::Zipf { theta: v, center },
                "pareto" => Distribution::Pareto { h: v, center },
                _ => Distribution::Normal { dev: v, center },
            })
        }
        "zoned" | "zoned_abs" => {
            let Some(rest) = rest.filter(|r| !r.trim().is_empty()) else {
                return Err(ValueError::new(format!(
                    "`{t}` is not a random distribution: `{name}` needs zones, such as \
                     {name}:60/10:40/90"
                )));
            };
            parse_zones(t, name, rest, kb)
        }
        _ => Err(ValueError::new(format!(
            "`{t}` is not a random distribution: unknown name `{name}` (use random, zipf, \
             pareto, normal, zoned or zoned_abs)"
        ))),
    }
}

/// Reads `[:VALUE[:CENTER]]` of zipf, pareto or normal, with fio's
/// defaults and range checks.
fn skew_args(t: &str, name: &str, rest: Option<&str>) -> Result<(f64, Option<f64>), ValueError> {
    let fields: Vec<&str> = match rest {
        None => Vec::new(),
        Some(r) => r.split(':').map(str::trim).collect(),
    };
    if fields.len() > 2 {
        return Err(ValueError::new(format!(
            "`{t}` has too many fields: expected {name}[:VALUE[:CENTER]]"
        )));
    }
    let num = |s: &str, what: &str| -> Result<f64, ValueError> {
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(ValueError::new(format!(
                "`{t}`: the {what} `{s}` is not a number"
            ))),
        }
    };
    let v = match fields.first() {
        None => default_skew(name),
        Some(s) => num(s, "value")?,
    };
    check_skew(t, name, v)?;
    let center = match fields.get(1) {
        None => None,
        Some(s) => {
            let c = num(s, "center")?;
            if !(0.0..=1.0).contains(&c) {
                return Err(ValueError::new(format!(
                    "`{t}`: the center {c} is out of range (0 <= center <= 1)"
                )));
            }
            Some(c)
        }
    };
    Ok((v, center))
}

fn default_skew(name: &str) -> f64 {
    match name {
        "zipf" => DEFAULT_ZIPF_THETA,
        "pareto" => DEFAULT_PARETO_H,
        _ => DEFAULT_NORMAL_DEV,
    }
}

/// fio's range checks of the zipf, pareto and normal values.
fn check_skew(t: &str, name: &str, v: f64) -> Result<(), ValueError> {
    let bad = match name {
        "zipf" if v == 1.0 => Some("the Zipf theta must not be 1"),
        "pareto" if !(v > 0.0 && v < 1.0) => Some("the Pareto power must be above 0 and below 1"),
        "normal" if !(0.0..100.0).contains(&v) => {
            Some("the normal deviation must be at least 0 and below 100")
        }
        _ => None,
    };
    match bad {
        Some(why) => Err(ValueError::new(format!("`{t}`: {why} (got {v})"))),
        None => Ok(()),
    }
}

fn parse_zones(t: &str, name: &str, rest: &str, kb: KbBase) -> Result<Distribution, ValueError> {
    let ctx = format!("in `{t}`");
    let mut zoned = Vec::new();
    let mut zoned_abs = Vec::new();
    let (mut access_sum, mut range_sum) = (0u32, 0u32);
    let zones: Vec<&str> = rest.split(':').collect();
    for (i, zone) in zones.iter().enumerate() {
        let zone = zone.trim();
        // fio reads the last zone of `zoned` without a range (`20/` or
        // `20`) as the rest of the region.
        let last = i + 1 == zones.len();
        let rest_of_region = match zone.split_once('/') {
            Some((a, r)) if r.trim().is_empty() => Some(a),
            None if !zone.is_empty() => Some(zone),
            _ => None,
        };
        if let (true, true, Some(a)) = (name == "zoned", last, rest_of_region) {
            let access = whole_percent(a.trim(), &ctx)?;
            access_sum += access;
            let range = 100u32.saturating_sub(range_sum);
            if range == 0 {
                return Err(ValueError::new(format!(
                    "`{t}` is not a valid zoned distribution: its last zone takes the rest of \
                     the region, and the zones before it already take all of it"
                )));
            }
            range_sum += range;
            zoned.push((f64::from(access), f64::from(range)));
            continue;
        }
        let Some((a, r)) = zone.split_once('/') else {
            return Err(ValueError::new(format!(
                "`{zone}` in `{t}` is not a zone: expected ACCESS/{} such as 60/{}",
                if name == "zoned" { "RANGE" } else { "SIZE" },
                if name == "zoned" { "10" } else { "20g" },
            )));
        };
        let access = whole_percent(a.trim(), &ctx)?;
        access_sum += access;
        if name == "zoned" {
            let range = whole_percent(r.trim(), &ctx)?;
            range_sum += range;
            zoned.push((f64::from(access), f64::from(range)));
        } else {
            let size = parse_size(r, kb).map_err(|e| ValueError::new(format!("{ctx}: {}", e.0)))?;
            zoned_abs.push((f64::from(access), size));
        }
    }
    if access_sum != 100 {
        return Err(ValueError::new(format!(
            "`{t}` is not a valid zoned distribution: the access percentages add up to \
             {access_sum}, not 100"
        )));
    }
    if range_sum > 100 {
        return Err(ValueError::new(format!(
            "`{t}` is not a valid zoned distribution: the range percentages add up to \
             {range_sum}, more than 100"
        )));
    }
    Ok(if name == "zoned" {
        Distribution::Zoned(zoned)
    } else {
        Distribution::ZonedAbs(zoned_abs)
    })
}

/// Prints a distribution with `kb_base=1024` zone sizes; see
/// [`format_distribution_kb`].
pub fn format_distribution(d: &Distribution) -> String {
    format_distribution_kb(d, KbBase::K1024)
}

/// Prints a distribution so that `parse_distribution_kb` with the same `kb`
/// reads it back. The value of zipf, pareto and normal is always printed.
pub fn format_distribution_kb(d: &Distribution, kb: KbBase) -> String {
    let skew = |name: &str, v: f64, center: &Option<f64>| match center {
        Some(c) => format!("{name}:{v}:{c}"),
        None => format!("{name}:{v}"),
    };
    match d {
        Distribution::Random => "random".to_string(),
        Distribution::Zipf { theta, center } => skew("zipf", *theta, center),
        Distribution::Pareto { h, center } => skew("pareto", *h, center),
        Distribution::Normal { dev, center } => skew("normal", *dev, center),
        Distribution::Zoned(zones) => {
            let z: Vec<String> = zones.iter().map(|(a, r)| format!("{a}/{r}")).collect();
            format!("zoned:{}", z.join(":"))
        }
        Distribution::ZonedAbs(zones) => {
            let z: Vec<String> = zones
                .iter()
                .map(|(a, s)| format!("{a}/{}", format_size(*s, kb)))
                .collect();
            format!("zoned_abs:{}", z.join(":"))
        }
    }
}

/// `file_service_type`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileService {
    Random,
    /// Switch file after N I/Os (`roundrobin:N`); None = 1.
    RoundRobin(Option<u32>),
    Sequential,
    /// The value (theta, h, deviation) and the center, when given.
    Zipf(f64, Option<f64>),
    Pareto(f64, Option<f64>),
    Normal(f64, Option<f64>),
}

/// Parses `file_service_type`: `random`, `roundrobin[:N]` (N at least 1),
/// `sequential`, `zipf[:THETA[:CENTER]]`, `pareto[:H[:CENTER]]`,
/// `normal[:DEV[:CENTER]]` (`gauss` is fio's alias of normal). Values and
/// centers default and are checked as in [`parse_distribution_kb`].
///
/// fio also takes `random:N` and `sequential:N` (switch after N I/Os);
/// `FileService` has no place for them, so they are refused with a
/// message rather than dropped.
pub fn parse_file_service(text: &str) -> Result<FileService, ValueError> {
    let t = text.trim();
    let (name, rest) = match t.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r.trim())),
        None => (t, None),
    };
    match name {
        "random" | "sequential" => match rest {
            None if name == "random" => Ok(FileService::Random),
            None => Ok(FileService::Sequential),
            Some(_) => Err(ValueError::new(format!(
                "`{t}`: a switch count for `{name}` is not supported by iolab yet (only \
                 roundrobin:N is)"
            ))),
        },
        "roundrobin" => match rest {
            None => Ok(FileService::RoundRobin(None)),
            Some(n) => match n.parse::<u32>() {
                Ok(v) if v >= 1 => Ok(FileService::RoundRobin(Some(v))),
                _ => Err(ValueError::new(format!(
                    "`{t}`: `{n}` is not a number of I/Os (expected a whole number of at least \
                     1, such as roundrobin:8)"
                ))),
            },
        },
        "zipf" | "pareto" | "normal" | "gauss" => {
            let kind = if name == "gauss" { "normal" } else { name };
            let (v, center) = skew_args(t, kind, rest)?;
            Ok(match kind {
                "zipf" => FileService::Zipf(v, center),
                "pareto" => FileService::Pareto(v, center),
                _ => FileService::Normal(v, center),
            })
        }
        _ => Err(ValueError::new(format!(
            "`{t}` is not a file service type: unknown name `{name}` (use random, roundrobin, \
             sequential, zipf, pareto, normal or gauss)"
        ))),
    }
}

/// Prints a file service type so that `parse_file_service` reads it back.
pub fn format_file_service(f: &FileService) -> String {
    match f {
        FileService::Random => "random".to_string(),
        FileService::RoundRobin(None) => "roundrobin".to_string(),
        FileService::RoundRobin(Some(n)) => format!("roundrobin:{n}"),
        FileService::Sequential => "sequential".to_string(),
        FileService::Zipf(v, c) => format!("zipf:{v}{}", center_suffix(*c)),
        FileService::Pareto(v, c) => format!("pareto:{v}{}", center_suffix(*c)),
        FileService::Normal(v, c) => format!("normal:{v}{}", center_suffix(*c)),
    }
}

/// `:CENTER` when a center is given.
fn center_suffix(center: Option<f64>) -> String {
    center.map(|c| format!(":{c}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    const D: KbBase = KbBase::K1000;

    // ---- random distributions (ranges and defaults checked with fio 3.33) ----

    #[test]
    fn distributions() {
        let p = |s: &str| parse_distribution(s).unwrap();
        assert_eq!(p("random"), Distribution::Random);
        assert_eq!(
            p("zipf:1.2"),
            Distribution::Zipf {
                theta: 1.2,
                center: None
            }
        );
        assert_eq!(
            p("zipf"),
            Distribution::Zipf {
                theta: 1.1,
                center: None
            }
        );
        assert_eq!(
            p("zipf:0.5"),
            Distribution::Zipf {
                theta: 0.5,
                center: None
            }
        );
        assert_eq!(
            p("zipf:1.2:0.25"),
            Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }
        );
        assert_eq!(
            p("zipf:1.2:1"),
            Distribution::Zipf {
                theta: 1.2,
                center: Some(1.0)
            }
        );
        assert_eq!(
            p("zipf: 1.2"),
            Distribution::Zipf {
                theta: 1.2,
                center: None
            }
        );
        assert_eq!(
            p("pareto"),
            Distribution::Pareto {
                h: 0.2,
                center: None
            }
        );
        assert_eq!(
            p("pareto:0.5"),
            Distribution::Pareto {
                h: 0.5,
                center: None
            }
        );
        assert_eq!(
            p("normal"),
            Distribution::Normal {
                dev: 0.0,
                center: None
            }
        );
        assert_eq!(
            p("normal:10"),
            Distribution::Normal {
                dev: 10.0,
                center: None
            }
        );
        assert_eq!(
            p("normal:0:0.5"),
            Distribution::Normal {
                dev: 0.0,
                center: Some(0.5)
            }
        );
        assert_eq!(
            p("zoned:60/10:30/20:8/30:2/40"),
            Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (8.0, 30.0), (2.0, 40.0)])
        );
        // fio accepts ranges adding up to less than 100.
        assert_eq!(
            p("zoned:50/40:50/40"),
            Distribution::Zoned(vec![(50.0, 40.0), (50.0, 40.0)])
        );
        // The last zone without a range takes the rest, as in fio.
        assert_eq!(
            p("zoned:50/5:30/15:20/"),
            Distribution::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)])
        );
        assert_eq!(
            p("zoned:60/10:40"),
            Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])
        );
        assert_eq!(
            p("zoned:100/100"),
            Distribution::Zoned(vec![(100.0, 100.0)])
        );
        assert_eq!(
            p("zoned_abs:60/20G:30/100G:10/500g"),
            Distribution::ZonedAbs(vec![(60.0, 20 << 30), (30.0, 100 << 30), (10.0, 500 << 30)])
        );
        assert_eq!(
            parse_distribution_kb("zoned_abs:100/4k", D).unwrap(),
            Distribution::ZonedAbs(vec![(100.0, 4000)])
        );
    }

    #[test]
    fn distribution_errors() {
        let p = parse_distribution;
        assert_err(p(""), &["unknown name ``"]);
        assert_err(p("zipf:1"), &["`zipf:1`", "must not be 1"]);
        assert_err(p("zipf:1.0"), &["`zipf:1.0`", "must not be 1"]);
        assert_err(p("zipf:1e0"), &["`zipf:1e0`", "must not be 1"]);
        assert_err(
            p("zipf:1.2:1.5"),
            &["`zipf:1.2:1.5`", "center 1.5 is out of range"],
        );
        assert_err(p("zipf:1.2:-0.1"), &["center -0.1"]);
        assert_err(
            p("zipf:1.2:0.5:0.3"),
            &["`zipf:1.2:0.5:0.3`", "too many fields"],
        );
        assert_err(p("zipf:"), &["`zipf:`", "value `` is not a number"]);
        assert_err(p("zipf:abc"), &["`zipf:abc`", "`abc`"]);
        assert_err(p("zipf:inf"), &["`zipf:inf`", "`inf`"]);
        assert_err(p("normal:10:"), &["`normal:10:`", "center ``"]);
        assert_err(p("pareto:0"), &["`pareto:0`", "above 0 and below 1"]);
        assert_err(p("pareto:1"), &["`pareto:1`", "above 0 and below 1"]);
        assert_err(p("pareto:1.5"), &["`pareto:1.5`"]);
        assert_err(p("normal:100"), &["`normal:100`", "below 100"]);
        assert_err(p("normal:-1"), &["`normal:-1`", "at least 0"]);
        assert_err(p("random:5"), &["`random:5`", "takes no value"]);
        assert_err(p("ZIPF:1.2"), &["`ZIPF:1.2`", "unknown name `ZIPF`"]);
        assert_err(p("gauss:10"), &["unknown name `gauss`"]);
        assert_err(p("zoned"), &["`zoned`", "needs zones"]);
        assert_err(p("zoned:"), &["`zoned:`", "needs zones"]);
        assert_err(
            p("zoned:60/10:30/20"),
            &["`zoned:60/10:30/20`", "add up to 90, not 100"],
        );
        assert_err(p("zoned:50/60:50/60"), &["range percentages add up to 120"]);
        assert_err(p("zoned:40:60/10"), &["`40`", "not a zone"]);
        assert_err(p("zoned:50/100:50/"), &["last zone takes the rest"]);
        assert_err(p("zoned_abs:50/1m:50/"), &["`zoned_abs:50/1m:50/`"]);
        assert_err(p("zoned:50.5/50:49.5/50"), &["`50.5`", "fractional"]);
        assert_err(p("zoned:150/50:-50/50"), &["`150`", "more than 100"]);
        assert_err(p("zoned_abs:60/20G:30/100G"), &["add up to 90, not 100"]);
        assert_err(p("zoned_abs:100/4q"), &["`zoned_abs:100/4q`", "`4q`"]);
    }

    #[test]
    fn distribution_format() {
        let f = format_distribution;
        assert_eq!(f(&Distribution::Random), "random");
        assert_eq!(
            f(&Distribution::Zipf {
                theta: 1.2,
                center: None
            }),
            "zipf:1.2"
        );
        assert_eq!(
            f(&Distribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            }),
            "zipf:1.2:0.25"
        );
        assert_eq!(
            f(&Distribution::Pareto {
                h: 0.2,
                center: None
            }),
            "pareto:0.2"
        );
        assert_eq!(
            f(&Distribution::Normal {
                dev: 0.0,
                center: Some(0.5)
            }),
            "normal:0:0.5"
        );
        assert_eq!(
            f(&Distribution::Zoned(vec![(60.0, 10.0), (40.0, 90.0)])),
            "zoned:60/10:40/90"
        );
        assert_eq!(
            f(&Distribution::ZonedAbs(vec![
                (60.0, 20 << 30),
                (40.0, 1000)
            ])),
            "zoned_abs:60/20g:40/1000"
        );
        assert_eq!(
            format_distribution_kb(&Distribution::ZonedAbs(vec![(100.0, 1000)]), D),
            "zoned_abs:100/1k"
        );
        for s in [
            "random",
            "zipf",
            "pareto:0.5:0.1",
            "normal:12.5",
            "zoned:60/10:30/20:8/30:2/40",
            "zoned_abs:60/20G:30/100G:10/500g",
        ] {
            let d = parse_distribution(s).unwrap();
            assert_eq!(parse_distribution(&f(&d)).unwrap(), d, "{s}");
        }
    }

    // ---- file service types (fio 3.33: zipf:1 and pareto:2 and normal:100
    // are refused; gauss is accepted) ----

    #[test]
    fn file_service() {
        let p = |s: &str| parse_file_service(s).unwrap();
        assert_eq!(p("random"), FileService::Random);
        assert_eq!(p("roundrobin"), FileService::RoundRobin(None));
        assert_eq!(p("roundrobin:4"), FileService::RoundRobin(Some(4)));
        assert_eq!(p("sequential"), FileService::Sequential);
        assert_eq!(p("zipf"), FileService::Zipf(1.1, None));
        assert_eq!(p("zipf:1.2"), FileService::Zipf(1.2, None));
        assert_eq!(p("zipf:1.2:0.3"), FileService::Zipf(1.2, Some(0.3)));
        assert_eq!(p("pareto"), FileService::Pareto(0.2, None));
        assert_eq!(p("pareto:0.5"), FileService::Pareto(0.5, None));
        assert_eq!(p("normal"), FileService::Normal(0.0, None));
        assert_eq!(p("normal:10"), FileService::Normal(10.0, None));
        assert_eq!(p("normal:10:1"), FileService::Normal(10.0, Some(1.0)));
        assert_eq!(p("gauss"), FileService::Normal(0.0, None));
        assert_eq!(p("gauss:5"), FileService::Normal(5.0, None));
        assert_eq!(p(" roundrobin : 8 "), FileService::RoundRobin(Some(8)));
        for f in [
            FileService::Random,
            FileService::RoundRobin(None),
            FileService::RoundRobin(Some(3)),
            FileService::Sequential,
            FileService::Zipf(1.2, None),
            FileService::Zipf(1.2, Some(0.25)),
            FileService::Pareto(0.3, Some(0.0)),
            FileService::Normal(7.5, None),
        ] {
            assert_eq!(p(&format_file_service(&f)), f);
        }
        assert_eq!(
            format_file_service(&FileService::RoundRobin(Some(3))),
            "roundrobin:3"
        );
        assert_eq!(
            format_file_service(&FileService::Normal(7.5, None)),
            "normal:7.5"
        );
        assert_eq!(
            format_file_service(&FileService::Zipf(1.2, Some(0.3))),
            "zipf:1.2:0.3"
        );
    }

    #[test]
    fn file_service_errors() {
        let p = parse_file_service;
        assert_err(p(""), &["unknown name ``"]);
        assert_err(p("RANDOM"), &["`RANDOM`", "unknown name"]);
        assert_err(p("random:8"), &["`random:8`", "not supported"]);
        assert_err(p("sequential:3"), &["`sequential:3`", "not supported"]);
        assert_err(p("roundrobin:0"), &["`roundrobin:0`", "at least 1"]);
        assert_err(p("roundrobin:abc"), &["`roundrobin:abc`", "`abc`"]);
        assert_err(p("roundrobin:-1"), &["`-1`"]);
        assert_err(p("zipf:1"), &["`zipf:1`", "must not be 1"]);
        assert_err(p("pareto:2"), &["`pareto:2`", "below 1"]);
        assert_err(p("normal:100"), &["`normal:100`", "below 100"]);
        assert_err(p("zipf:1.2:1.5"), &["`zipf:1.2:1.5`", "center"]);
        assert_err(
            p("zipf:1.2:0.5:1"),
            &["`zipf:1.2:0.5:1`", "too many fields"],
        );
        assert_err(p("zipf:x"), &["`zipf:x`", "`x`"]);
    }

    proptest! {
        #[test]
        fn distributions_round_trip(theta in 0.01f64..5.0, h in 0.01f64..0.99, dev in 0.0f64..99.9,
                                    c in prop::option::of(0.0f64..=1.0), kind in 0usize..3) {
            prop_assume!(theta != 1.0);
            let d = match kind {
                0 => Distribution::Zipf { theta, center: c },
                1 => Distribution::Pareto { h, center: c },
                _ => Distribution::Normal { dev, center: c },
            };
            prop_assert_eq!(parse_distribution(&format_distribution(&d)).unwrap(), d);
        }
    }
}
