//! Composite values: per-direction lists (`bs=4k,64k`), block-size ranges
//! (`1k-4k`), block-size splits (`4k/10:64k/90`), CPU lists, colon-separated
//! file names with `\:` escapes, random distributions, file service types and
//! steady-state criteria. Each has a parser and a printer that round-trip.
//!
//! Where fio accepts garbage silently (a fourth direction, `4k/101` in a
//! split, an empty file name, `random:5`), these parsers refuse it with a
//! message that names the text. Each printer's output parses back to the
//! same value (exceptions are noted on the printer).

use super::size::{format_size, parse_size, KbBase};
use crate::error::ValueError;

/// One value per data direction. `None` means "the option's default for this
/// direction".
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PerDir<T> {
    pub read: Option<T>,
    pub write: Option<T>,
    pub trim: Option<T>,
}

impl<T> PerDir<T> {
    pub fn all(v: T) -> Self
    where
        T: Clone,
    {
        PerDir {
            read: Some(v.clone()),
            write: Some(v.clone()),
            trim: Some(v),
        }
    }
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// Parses fio's per-direction list: `A` (all three), `A,B` (read A, write and
/// trim B), `A,B,` (trim default), `,B` (read default, write and trim B),
/// `A,B,C`. A value not followed by a comma carries over to the directions
/// after it.
///
/// Each part is trimmed. More than three parts, or a list with no value at
/// all (`,`), is an error (fio ignores a fourth part; it refuses `,`).
pub fn parse_per_dir<T: Clone>(
    text: &str,
    item: &dyn Fn(&str) -> Result<T, ValueError>,
) -> Result<PerDir<T>, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not allowed here: expected one to three comma-separated \
             values (read,write,trim)",
        ));
    }
    let parts: Vec<&str> = t.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(ValueError::new(format!(
            "`{t}` has {} comma-separated values; at most three are allowed (read,write,trim)",
            parts.len()
        )));
    }
    if parts.iter().all(|p| p.is_empty()) {
        return Err(ValueError::new(format!(
            "`{t}` gives no value for any direction: expected one to three comma-separated \
             values (read,write,trim)"
        )));
    }
    let mut vals: [Option<T>; 3] = [None, None, None];
    for (i, part) in parts.iter().enumerate() {
        if !part.is_empty() {
            let v = item(part).map_err(|e| {
                ValueError::new(format!("in `{t}`, the {} value: {}", DIRS[i], e.0))
            })?;
            vals[i] = Some(v);
        }
    }
    // A last value without a trailing comma carries to the directions after it.
    let last = parts.len() - 1;
    if let Some(v) = vals[last].clone() {
        for slot in vals.iter_mut().skip(last + 1) {
            *slot = Some(v.clone());
        }
    }
    let [read, write, trim] = vals;
    Ok(PerDir { read, write, trim })
}

/// Prints a per-direction list so that `parse_per_dir` reads it back: `x`
/// when all three are the same, `r,w` when write and trim are the same, else
/// `r,w,t` with an empty part for a default. All three default prints as
/// the empty string, which is not a value (the option is simply not set).
pub fn format_per_dir<T: PartialEq>(v: &PerDir<T>, item: &dyn Fn(&T) -> String) -> String {
    let opt = |x: &Option<T>| x.as_ref().map(item).unwrap_or_default();
    match (&v.read, &v.write, &v.trim) {
        (None, None, None) => String::new(),
        (Some(r), Some(w), Some(t)) if r == w && w == t => item(r),
        (r, Some(w), Some(t)) if w == t => format!("{},{}", opt(r), item(w)),
        (r, w, t) => format!("{},{},{}", opt(r), opt(w), opt(t)),
    }
}

/// `bsrange=MIN-MAX` (or `MIN:MAX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRange {
    pub min: u64,
    pub max: u64,
}

/// Splits `text` at each `sep` outside parentheses.
fn split_top(text: &str, sep: impl Fn(char) -> bool) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if depth == 0 && sep(c) => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Parses a block size range `MIN-MAX` or `MIN:MAX` (`1k-4k`, `512:64k`).
/// Both ends are sizes of at least one byte. A single size is an error, as
/// in fio. Unlike fio, which swaps a reversed range (`8k-4k`), a minimum
/// above the maximum is an error.
pub fn parse_range(text: &str, kb: KbBase) -> Result<BlockRange, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a block size range (expected MIN-MAX such as 1k-4k)",
        ));
    }
    let parts = split_top(t, |c| c == '-' || c == ':');
    let [min_text, max_text] = parts[..] else {
        let what = if parts.len() == 1 {
            "it has no `-` or `:` between a minimum and a maximum"
        } else {
            "it has more than one `-` or `:`"
        };
        return Err(ValueError::new(format!(
            "`{t}` is not a block size range: {what} (expected MIN-MAX such as 1k-4k)"
        )));
    };
    let end = |s: &str, name: &str| -> Result<u64, ValueError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(ValueError::new(format!(
                "`{t}` is not a block size range: the {name} is missing (expected MIN-MAX \
                 such as 1k-4k)"
            )));
        }
        let v = parse_size(s, kb)
            .map_err(|e| ValueError::new(format!("in range `{t}`, the {name}: {}", e.0)))?;
        if v == 0 {
            return Err(ValueError::new(format!(
                "`{t}` is not a block size range: the {name} `{s}` is zero"
            )));
        }
        Ok(v)
    };
    let min = end(min_text, "minimum")?;
    let max = end(max_text, "maximum")?;
    if min > max {
        return Err(ValueError::new(format!(
            "`{t}` is not a block size range: the minimum `{}` ({min}) is larger than the \
             maximum `{}` ({max})",
            min_text.trim(),
            max_text.trim()
        )));
    }
    Ok(BlockRange { min, max })
}

/// Prints a range as `MIN-MAX` with `format_size`.
pub fn format_range(r: &BlockRange, kb: KbBase) -> String {
    format!("{}-{}", format_size(r.min, kb), format_size(r.max, kb))
}

/// One entry of `bssplit`: a block size and its share in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitEntry {
    pub bs: u64,
    pub pct: u32,
}

/// The most entries fio takes in one direction of `bssplit`.
pub const MAX_SPLIT_ENTRIES: usize = 64;

/// Parses one direction of `bssplit`: `BS/PCT` entries separated by `:`,
/// such as `4k/10:64k/50:32k/40`. The result always adds up to 100:
///
/// - Entries without a percentage (`8k/` or just `8k`) share what the given
///   percentages leave, equally, rounded down: `4k/50:8k/:16k/` is 50, 25,
///   25 and `4k:8k` is 50, 50.
/// - What is still missing after that (a rounding rest, or a total below
///   100 with no blank entries) goes to the entry with the largest share,
///   the last of them on a tie. This is what fio 3.33 does, measured with
///   write_iolog: `4k/30:8k/30` issues 30% 4k and 70% 8k, `8k/30:4k/20`
///   80% 8k, `4k:8k:16k` 33/33/34 and `4k/33:8k/:16k/:32k/` 34/22/22/22.
///
/// Unlike fio, which quietly caps them, percentages adding up to more than
/// 100 are an error, and so are a percentage above 100, a negative or
/// fractional one (fio would truncate it), and more than 64 entries.
pub fn parse_split(text: &str, kb: KbBase) -> Result<Vec<SplitEntry>, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a block size split (expected BS/PCT:BS/PCT such as \
             4k/10:64k/90)",
        ));
    }
    let parts = split_top(t, |c| c == ':');
    if parts.len() > MAX_SPLIT_ENTRIES {
        return Err(ValueError::new(format!(
            "`{t}` has {} entries; a block size split takes at most {MAX_SPLIT_ENTRIES}",
            parts.len()
        )));
    }
    let mut entries: Vec<(u64, Option<u32>)> = Vec::with_capacity(parts.len());
    for part in parts {
        let part = part.trim();
        if part.is_empty() {
            return Err(ValueError::new(format!(
                "`{t}` has an empty entry (expected BS/PCT:BS/PCT such as 4k/10:64k/90)"
            )));
        }
        let pieces = split_top(part, |c| c == '/');
        let (bs_text, pct_text) = match pieces[..] {
            [bs] => (bs.trim(), ""),
            [bs, pct] => (bs.trim(), pct.trim()),
            _ => {
                return Err(ValueError::new(format!(
                    "`{part}` in `{t}` is not a split entry: it has more than one `/` \
                     (expected BS/PCT such as 4k/10)"
                )))
            }
        };
        let bs = parse_size(bs_text, kb)
            .map_err(|e| ValueError::new(format!("in split `{t}`: {}", e.0)))?;
        if bs == 0 {
            return Err(ValueError::new(format!(
                "`{part}` in `{t}` is not a split entry: the block size is zero"
            )));
        }
        let pct = if pct_text.is_empty() {
            None
        } else {
            Some(whole_percent(pct_text, &format!("in split `{t}`"))?)
        };
        entries.push((bs, pct));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(ValueError::new(format!(
            "`{t}` is not a valid block size split: its percentages add up to {given}, \
             more than 100"
        )));
    }
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    let share = (100 - given).checked_div(blanks).unwrap_or(0);
    let mut out: Vec<SplitEntry> = entries
        .into_iter()
        .map(|(bs, pct)| SplitEntry {
            bs,
            pct: pct.unwrap_or(share),
        })
        .collect();
    let total: u32 = out.iter().map(|e| e.pct).sum();
    let largest = out.iter().map(|e| e.pct).max().unwrap_or(0);
    if let Some(e) = out.iter_mut().rev().find(|e| e.pct == largest) {
        e.pct += 100 - total;
    }
    Ok(out)
}

/// Prints one direction of `bssplit` with every percentage, such as
/// `4k/10:64k/90`.
pub fn format_split(entries: &[SplitEntry], kb: KbBase) -> String {
    entries
        .iter()
        .map(|e| format!("{}/{}", format_size(e.bs, kb), e.pct))
        .collect::<Vec<_>>()
        .join(":")
}

/// A whole percentage 0..=100 (`ctx` says where, for messages).
fn whole_percent(s: &str, ctx: &str) -> Result<u32, ValueError> {
    if let Ok(v) = s.parse::<u32>() {
        if v <= 100 {
            return Ok(v);
        }
        return Err(ValueError::new(format!(
            "{ctx}: `{s}` is more than 100 percent"
        )));
    }
    let why = match s.parse::<f64>() {
        Ok(f) if f < 0.0 => "it is negative",
        Ok(_) => "fractional percentages are not supported (fio would drop the fraction)",
        Err(_) => "expected a whole percentage such as 25",
    };
    Err(ValueError::new(format!(
        "{ctx}: `{s}` is not a percentage: {why}"
    )))
}

/// `cpus_allowed=0-3,5`: sorted, deduplicated CPU numbers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CpuList(pub Vec<u32>);

/// CPU numbers must be below this (glibc's CPU_SETSIZE, fio's limit on
/// Linux: "your OS only supports up to 1024 CPUs").
pub const MAX_CPUS: u32 = 1024;

/// Parses a CPU list: numbers and inclusive ranges separated by commas
/// (`0-3,5,7-8`). The result is sorted and without duplicates. An empty
/// item, a reversed range (`3-1`) or a CPU number of 1024 or more is an
/// error.
pub fn parse_cpus(text: &str) -> Result<CpuList, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a CPU list (expected CPU numbers and ranges such as 0-3,5)",
        ));
    }
    let cpu = |s: &str| -> Result<u32, ValueError> {
        let s = s.trim();
        let n: u32 = s.parse().map_err(|_| {
            ValueError::new(format!(
                "`{t}` is not a CPU list: `{s}` is not a CPU number (expected numbers and \
                 ranges such as 0-3,5)"
            ))
        })?;
        if n >= MAX_CPUS {
            return Err(ValueError::new(format!(
                "`{t}` is not a CPU list: CPU {n} is too large (at most {})",
                MAX_CPUS - 1
            )));
        }
        Ok(n)
    };
    let mut cpus = Vec::new();
    for item in t.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(ValueError::new(format!(
                "`{t}` is not a CPU list: it has an empty item"
            )));
        }
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (cpu(lo)?, cpu(hi)?);
                if lo > hi {
                    return Err(ValueError::new(format!(
                        "`{t}` is not a CPU list: the range `{item}` is reversed (write {hi}-{lo})"
                    )));
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(cpu(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(CpuList(cpus))
}

/// Prints a CPU list compactly: runs of consecutive CPUs as `a-b`, others
/// as single numbers, comma-separated (`0-3,5,7-8`). An empty list prints
/// as the empty string.
pub fn format_cpus(list: &CpuList) -> String {
    let mut cpus = list.0.clone();
    cpus.sort_unstable();
    cpus.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            end += 1;
            i += 1;
        }
        out.push(if end > start {
            format!("{start}-{end}")
        } else {
            start.to_string()
        });
        i += 1;
    }
    out.join(",")
}

/// Parses `filename=`: names separated by `:`, where `\:` is a colon inside
/// a name (`a\:b:c` is `a:b` and `c`). A backslash before anything else is
/// kept as it is, as fio does. Unlike fio, which skips them, empty names
/// (`a::b`, `a:`) are an error. Spaces inside the text belong to the names.
pub fn parse_files(text: &str) -> Result<Vec<String>, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a file name list (expected names separated by `:`)",
        ));
    }
    let mut names = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => names.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    names.push(cur);
    if let Some(i) = names.iter().position(String::is_empty) {
        return Err(ValueError::new(format!(
            "`{t}` has an empty file name (name {} of {}); separate names with a single `:` \
             and write `\\:` for a colon inside a name",
            i + 1,
            names.len()
        )));
    }
    Ok(names)
}

/// Prints file names separated by `:`, with each colon in a name written
/// as `\:`. A name that ends with a backslash cannot be followed by another
/// name in fio's syntax (`a\` then `b` would read as `a:b`), and names with
/// spaces at the ends of the list lose them to trimming; other lists of
/// non-empty names round-trip.
pub fn format_files(names: &[String]) -> String {
    names
        .iter()
        .map(|n| n.replace(':', "\\:"))
        .collect::<Vec<_>>()
        .join(":")
}

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
    for zone in rest.split(':') {
        let zone = zone.trim();
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
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
}

/// Parses `file_service_type`: `random`, `roundrobin[:N]` (N at least 1),
/// `sequential`, `zipf[:THETA]`, `pareto[:H]`, `normal[:DEV]` (`gauss` is
/// fio's alias of normal). Values default and are checked as in
/// [`parse_distribution_kb`].
///
/// fio also takes `random:N` and `sequential:N` (switch after N I/Os) and a
/// center after the zipf/pareto/normal value; `FileService` has no place
/// for them, so they are refused with a message rather than dropped.
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
            let v = match rest {
                None => default_skew(kind),
                Some(s) if s.contains(':') => {
                    return Err(ValueError::new(format!(
                        "`{t}`: a distribution center is not supported for \
                         file_service_type (expected {name}[:VALUE])"
                    )))
                }
                Some(s) => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    _ => {
                        return Err(ValueError::new(format!(
                            "`{t}`: the value `{s}` is not a number"
                        )))
                    }
                },
            };
            check_skew(t, kind, v)?;
            Ok(match kind {
                "zipf" => FileService::Zipf(v),
                "pareto" => FileService::Pareto(v),
                _ => FileService::Normal(v),
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
        FileService::Zipf(v) => format!("zipf:{v}"),
        FileService::Pareto(v) => format!("pareto:{v}"),
        FileService::Normal(v) => format!("normal:{v}"),
    }
}

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

/// The longest fill pattern fio takes, in bytes.
pub const MAX_PATTERN_BYTES: usize = 512;

/// Parses `buffer_pattern` / `verify_pattern` into bytes; a `'file'` part
/// is refused. See [`parse_pattern_with`].
pub fn parse_pattern(text: &str) -> Result<Vec<u8>, ValueError> {
    parse_pattern_with(text, &|name: &str| {
        Err(ValueError::new(format!(
            "reading a pattern from a file ('{name}') is not supported here"
        )))
    })
}

/// Parses a fill pattern as fio 3.33 reads it: a concatenation, without
/// spaces, of
///
/// - `0x` hex digits: the bytes in written order (`0xdeadbeef` is de ad be
///   ef; an odd digit count gets a leading 0, `0xabc` is 0a bc);
/// - a string in double quotes, taken literally (no escapes): `"abc"`;
/// - a string in single quotes, which names a file whose contents are the
///   bytes; `file` reads it (the caller knows where job files are);
/// - a decimal integer in the 32-bit signed range, stored little-endian: a
///   value of 0 or more in as few bytes as it needs (12 is 0c, 300 is 2c 01,
///   65536 is 00 00 01), a negative one in four bytes (-12 is f4 ff ff ff).
///
/// So `"abc"0x01` is 61 62 63 01. fio's `%o` (block offset, verify_pattern
/// only) is not supported. The empty pattern and an empty string `""`
/// are errors (fio aborts on them); so is a pattern of more than 512 bytes.
pub fn parse_pattern_with(
    text: &str,
    file: &dyn Fn(&str) -> Result<Vec<u8>, ValueError>,
) -> Result<Vec<u8>, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::new(
            "an empty value is not a pattern (expected 0x hex digits, \"text\" or a decimal \
             number)",
        ));
    }
    let bad = |why: String| ValueError::new(format!("`{t}` is not a pattern: {why}"));
    let bytes = t.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &t[i..];
        if rest.starts_with("0x") || rest.starts_with("0X") {
            let digits: &str = {
                let d = &rest[2..];
                let n = d.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(d.len());
                &d[..n]
            };
            if digits.is_empty() {
                return Err(bad(format!(
                    "`0x` at position {} is not followed by hex digits",
                    i + 1
                )));
            }
            let padded = if digits.len() % 2 == 1 {
                format!("0{digits}")
            } else {
                digits.to_string()
            };
            for pair in padded.as_bytes().chunks(2) {
                let hi = hex_val(pair[0]);
                let lo = hex_val(pair[1]);
                out.push((hi << 4) | lo);
            }
            i += 2 + digits.len();
        } else if let Some(q @ ('"' | '\'')) = rest.chars().next() {
            let body = &rest[1..];
            let Some(end) = body.find(q) else {
                return Err(bad(format!(
                    "the {} at position {} is never closed",
                    if q == '"' { "string" } else { "file name" },
                    i + 1
                )));
            };
            let inner = &body[..end];
            if inner.is_empty() {
                return Err(bad(format!(
                    "the {} at position {} is empty",
                    if q == '"' { "string" } else { "file name" },
                    i + 1
                )));
            }
            if q == '"' {
                out.extend_from_slice(inner.as_bytes());
            } else {
                let data = file(inner).map_err(|e| bad(e.0))?;
                if data.is_empty() {
                    return Err(bad(format!("the file '{inner}' is empty")));
                }
                out.extend_from_slice(&data);
            }
            i += 2 + end;
        } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            let sign_len = usize::from(rest.starts_with(['-', '+']));
            let n_digits = rest[sign_len..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len() - sign_len);
            let num = &rest[..sign_len + n_digits];
            if n_digits == 0 {
                return Err(bad(format!(
                    "`{num}` at position {} is not followed by digits",
                    i + 1
                )));
            }
            let v: i32 = num.parse().map_err(|_| {
                bad(format!(
                    "the number `{num}` is outside the 32-bit range (use 0x hex for wider \
                     values)"
                ))
            })?;
            if v < 0 {
                out.extend_from_slice(&v.to_le_bytes());
            } else {
                let le = v.to_le_bytes();
                let len = (4 - (v.leading_zeros() as usize) / 8).max(1);
                out.extend_from_slice(&le[..len]);
            }
            i += num.len();
        } else if rest.starts_with("%o") {
            return Err(bad(
                "the block offset `%o` is not supported by iolab yet".to_string()
            ));
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            return Err(bad(format!(
                "unexpected `{c}` at position {} (expected 0x hex digits, \"text\" or a \
                 decimal number, with nothing between them)",
                i + 1
            )));
        }
        if out.len() > MAX_PATTERN_BYTES {
            return Err(bad(format!("it is longer than {MAX_PATTERN_BYTES} bytes")));
        }
    }
    Ok(out)
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// Prints a pattern as `0x` and two hex digits per byte, which
/// `parse_pattern` reads back to the same bytes. The empty pattern prints as
/// `0x`, which is not a pattern.
pub fn format_pattern(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * bytes.len());
    s.push_str("0x");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: KbBase = KbBase::K1024;
    const D: KbBase = KbBase::K1000;

    fn size_item(s: &str) -> Result<u64, ValueError> {
        parse_size(s, K)
    }

    fn pd(text: &str) -> PerDir<u64> {
        parse_per_dir(text, &size_item).unwrap()
    }

    fn pdir(r: Option<u64>, w: Option<u64>, t: Option<u64>) -> PerDir<u64> {
        PerDir {
            read: r,
            write: w,
            trim: t,
        }
    }

    fn fmt_pd(v: &PerDir<u64>) -> String {
        format_per_dir(v, &|b: &u64| format_size(*b, K))
    }

    /// Asserts that `r` is an error whose message contains every needle.
    fn assert_err<T: std::fmt::Debug>(r: Result<T, ValueError>, needles: &[&str]) {
        match r {
            Ok(v) => panic!("expected an error mentioning {needles:?}, got {v:?}"),
            Err(e) => {
                for n in needles {
                    assert!(e.0.contains(n), "`{}` does not mention `{n}`", e.0);
                }
            }
        }
    }

    // ---- per-direction lists (fio's HOWTO rules, checked with fio 3.33
    // and write_iolog: `bs=8k,` gives 8k reads and default 4k writes) ----

    #[test]
    fn per_dir_rules() {
        let (a, b, c) = (Some(8192), Some(32768), Some(65536));
        assert_eq!(pd("8k"), pdir(a, a, a));
        assert_eq!(pd("8k,32k"), pdir(a, b, b));
        assert_eq!(pd("8k,32k,"), pdir(a, b, None));
        assert_eq!(pd(",32k"), pdir(None, b, b));
        assert_eq!(pd(",32k,"), pdir(None, b, None));
        assert_eq!(pd("8k,32k,64k"), pdir(a, b, c));
        assert_eq!(pd("8k,"), pdir(a, None, None));
        assert_eq!(pd("8k,,64k"), pdir(a, None, c));
        assert_eq!(pd(",,64k"), pdir(None, None, c));
        assert_eq!(pd(" 8k , 32k "), pdir(a, b, b));
        assert_eq!(PerDir::all(5u64), pdir(Some(5), Some(5), Some(5)));
    }

    #[test]
    fn per_dir_errors() {
        assert_err(parse_per_dir("", &size_item), &["empty"]);
        assert_err(parse_per_dir("  ", &size_item), &["empty"]);
        assert_err(
            parse_per_dir("8k,16k,32k,64k", &size_item),
            &["`8k,16k,32k,64k`", "4 comma-separated", "at most three"],
        );
        assert_err(parse_per_dir(",", &size_item), &["`,`", "no value"]);
        assert_err(parse_per_dir(",,", &size_item), &["`,,`", "no value"]);
        assert_err(
            parse_per_dir("4k,4q", &size_item),
            &["`4k,4q`", "write value", "`4q`", "unknown suffix `q`"],
        );
    }

    #[test]
    fn per_dir_format() {
        let (a, b, c) = (Some(8192), Some(32768), Some(65536));
        assert_eq!(fmt_pd(&pdir(a, a, a)), "8k");
        assert_eq!(fmt_pd(&pdir(a, b, b)), "8k,32k");
        assert_eq!(fmt_pd(&pdir(a, b, None)), "8k,32k,");
        assert_eq!(fmt_pd(&pdir(None, b, b)), ",32k");
        assert_eq!(fmt_pd(&pdir(None, b, None)), ",32k,");
        assert_eq!(fmt_pd(&pdir(a, b, c)), "8k,32k,64k");
        assert_eq!(fmt_pd(&pdir(a, None, None)), "8k,,");
        assert_eq!(fmt_pd(&pdir(b, b, None)), "32k,32k,");
        assert_eq!(fmt_pd(&pdir(None, None, None)), "");
        assert_eq!(pd("8k,32k,"), pdir(a, b, None));
        assert_eq!(pd(&fmt_pd(&pdir(a, b, None))), pdir(a, b, None));
    }

    // ---- block size ranges ----

    #[test]
    fn ranges() {
        let r = |min, max| BlockRange { min, max };
        assert_eq!(parse_range("1k-4k", K).unwrap(), r(1024, 4096));
        assert_eq!(parse_range("1k:4k", K).unwrap(), r(1024, 4096));
        assert_eq!(parse_range(" 512 - 64k ", K).unwrap(), r(512, 65536));
        assert_eq!(parse_range("2k-2k", K).unwrap(), r(2048, 2048));
        assert_eq!(parse_range("1k-4k", D).unwrap(), r(1000, 4000));
        assert_eq!(parse_range("(1k*2)-(8k-1k)", K).unwrap(), r(2048, 7168));
        assert_eq!(format_range(&r(1024, 4096), K), "1k-4k");
        assert_eq!(format_range(&r(1000, 1536), D), "1k-1536");
        let per_dir = parse_per_dir("1k-4k,8k-16k", &|s| parse_range(s, K)).unwrap();
        assert_eq!(per_dir.read, Some(r(1024, 4096)));
        assert_eq!(per_dir.write, Some(r(8192, 16384)));
        assert_eq!(per_dir.trim, Some(r(8192, 16384)));
    }

    #[test]
    fn range_errors() {
        assert_err(parse_range("", K), &["empty"]);
        // fio 3.33: `bsrange=4k` fails to parse.
        assert_err(parse_range("4k", K), &["`4k`", "no `-` or `:`"]);
        assert_err(
            parse_range("8k-4k", K),
            &["`8k-4k`", "`8k` (8192)", "`4k` (4096)"],
        );
        assert_err(parse_range("1k-4k-8k", K), &["`1k-4k-8k`", "more than one"]);
        assert_err(parse_range("1k-", K), &["`1k-`", "maximum is missing"]);
        assert_err(parse_range("-4k", K), &["`-4k`", "minimum is missing"]);
        assert_err(parse_range("1k-4q", K), &["`1k-4q`", "maximum", "`4q`"]);
        assert_err(parse_range("0-4k", K), &["`0-4k`", "minimum `0` is zero"]);
    }

    // ---- bssplit ----

    fn split(text: &str) -> Vec<(u64, u32)> {
        parse_split(text, K)
            .unwrap()
            .iter()
            .map(|e| (e.bs, e.pct))
            .collect()
    }

    #[test]
    fn split_given_percentages() {
        assert_eq!(
            split("4k/10:64k/50:32k/40"),
            vec![(4096, 10), (65536, 50), (32768, 40)]
        );
        assert_eq!(split("4k/100"), vec![(4096, 100)]);
        assert_eq!(split("4k"), vec![(4096, 100)]);
        assert_eq!(split(" 4k / 50 : 8k / 50 "), vec![(4096, 50), (8192, 50)]);
        assert_eq!(split("4k/0:8k/100"), vec![(4096, 0), (8192, 100)]);
        assert_eq!(split("4k/50:4k/50"), vec![(4096, 50), (4096, 50)]);
        assert_eq!(parse_split("4k/50:1m/50", D).unwrap()[1].bs, 1_000_000);
    }

    #[test]
    fn split_blank_percentages_share_the_rest() {
        // fio 3.33 with write_iolog (100k I/Os): 50.0 / 25.1 / 25.0.
        assert_eq!(
            split("4k/50:8k/:16k/"),
            vec![(4096, 50), (8192, 25), (16384, 25)]
        );
        // HOWTO example.
        assert_eq!(
            split("4k/50:1k/:32k/"),
            vec![(4096, 50), (1024, 25), (32768, 25)]
        );
        // fio: 50.4 / 49.6.
        assert_eq!(split("4k:8k"), vec![(4096, 50), (8192, 50)]);
        assert_eq!(
            split("4k/10:8k/:16k/"),
            vec![(4096, 10), (8192, 45), (16384, 45)]
        );
        // fio: 32.9 / 33.0 / 34.1: the rounding rest goes to the last of
        // the largest.
        assert_eq!(
            split("4k:8k:16k"),
            vec![(4096, 33), (8192, 33), (16384, 34)]
        );
        // fio: 34.1 / 22.2 / 22.0 / 21.7.
        assert_eq!(
            split("4k/33:8k/:16k/:32k/"),
            vec![(4096, 34), (8192, 22), (16384, 22), (32768, 22)]
        );
        assert_eq!(split("4k/100:8k/"), vec![(4096, 100), (8192, 0)]);
    }

    #[test]
    fn split_below_100_tops_up_the_largest() {
        // fio 3.33: 30.0 / 70.0, 30.1 / 69.9 and 79.9 / 20.1.
        assert_eq!(split("4k/30:8k/30"), vec![(4096, 30), (8192, 70)]);
        assert_eq!(split("8k/30:4k/30"), vec![(8192, 30), (4096, 70)]);
        assert_eq!(split("8k/30:4k/20"), vec![(8192, 80), (4096, 20)]);
        // fio: 19.8 / 70.1 / 10.1.
        assert_eq!(
            split("4k/20:8k/30:16k/10"),
            vec![(4096, 20), (8192, 70), (16384, 10)]
        );
        assert_eq!(split("4k/0"), vec![(4096, 100)]);
    }

    #[test]
    fn split_errors() {
        assert_err(parse_split("", K), &["empty"]);
        assert_err(
            parse_split("4k/60:8k/60", K),
            &["`4k/60:8k/60`", "add up to 120"],
        );
        assert_err(parse_split("4k/101", K), &["`101`", "more than 100"]);
        assert_err(parse_split("4k/-1:8k/", K), &["`-1`", "negative"]);
        assert_err(parse_split("4k/50.5:8k/49.5", K), &["`50.5`", "fractional"]);
        assert_err(parse_split("4k/abc", K), &["`abc`", "whole percentage"]);
        assert_err(parse_split("4q/50:8k/50", K), &["`4q/50:8k/50`", "`4q`"]);
        assert_err(
            parse_split("4k/50::8k/50", K),
            &["`4k/50::8k/50`", "empty entry"],
        );
        assert_err(
            parse_split("4k/50/2", K),
            &["`4k/50/2`", "more than one `/`"],
        );
        assert_err(parse_split("/50", K), &["empty"]);
        assert_err(parse_split("0/50:4k/50", K), &["`0/50`", "zero"]);
        let many = vec!["4k"; 65].join(":");
        assert_err(parse_split(&many, K), &["65 entries", "at most 64"]);
        assert_eq!(parse_split(&vec!["4k"; 64].join(":"), K).unwrap().len(), 64);
    }

    #[test]
    fn split_format() {
        let e = |bs, pct| SplitEntry { bs, pct };
        assert_eq!(
            format_split(&[e(4096, 10), e(65536, 50), e(32768, 40)], K),
            "4k/10:64k/50:32k/40"
        );
        assert_eq!(format_split(&[e(4000, 100)], D), "4k/100");
        let parsed = parse_split("4k/50:8k/:16k/", K).unwrap();
        assert_eq!(format_split(&parsed, K), "4k/50:8k/25:16k/25");
        let dirs = parse_per_dir("2k/50:4k/50,4k/90:8k/10", &|s| parse_split(s, K)).unwrap();
        assert_eq!(dirs.read, Some(vec![e(2048, 50), e(4096, 50)]));
        assert_eq!(dirs.write, Some(vec![e(4096, 90), e(8192, 10)]));
        assert_eq!(dirs.trim, dirs.write);
    }

    // ---- CPU lists ----

    #[test]
    fn cpus() {
        assert_eq!(
            parse_cpus("0-3,5,7-8").unwrap().0,
            vec![0, 1, 2, 3, 5, 7, 8]
        );
        assert_eq!(
            parse_cpus("0,5,8-15").unwrap().0,
            vec![0, 5, 8, 9, 10, 11, 12, 13, 14, 15]
        );
        assert_eq!(parse_cpus(" 5, 1 ,1,2-3 ").unwrap().0, vec![1, 2, 3, 5]);
        assert_eq!(parse_cpus("3-3").unwrap().0, vec![3]);
        assert_eq!(parse_cpus("1023").unwrap().0, vec![1023]);
        assert_eq!(
            format_cpus(&CpuList(vec![0, 1, 2, 3, 5, 7, 8])),
            "0-3,5,7-8"
        );
        assert_eq!(format_cpus(&CpuList(vec![8, 7, 7, 0])), "0,7-8");
        assert_eq!(format_cpus(&CpuList(vec![4])), "4");
        assert_eq!(format_cpus(&CpuList(vec![])), "");
    }

    #[test]
    fn cpu_errors() {
        assert_err(parse_cpus(""), &["empty"]);
        assert_err(parse_cpus("3-1"), &["`3-1`", "reversed"]);
        assert_err(parse_cpus("0,,1"), &["`0,,1`", "empty item"]);
        assert_err(parse_cpus("0-"), &["`0-`", "`` is not a CPU number"]);
        assert_err(parse_cpus("a"), &["`a`", "not a CPU number"]);
        assert_err(parse_cpus("-1"), &["`-1`"]);
        assert_err(parse_cpus("0-3:5"), &["`0-3:5`", "`3:5`"]);
        assert_err(parse_cpus("1024"), &["`1024`", "too large"]);
        assert_err(parse_cpus("0-4000000000"), &["too large"]);
    }

    // ---- file names (fio 3.33 with write_iolog: `a\:b:c` opens `a:b`
    // and `c`; `a\\:b` opens `a\:b`; `a\b` opens `a\b`) ----

    #[test]
    fn files() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_files("/dev/sda:/dev/sdb").unwrap(),
            v(&["/dev/sda", "/dev/sdb"])
        );
        assert_eq!(parse_files("a\\:b:c").unwrap(), v(&["a:b", "c"]));
        assert_eq!(parse_files("a\\\\:b").unwrap(), v(&["a\\:b"]));
        assert_eq!(parse_files("a\\b").unwrap(), v(&["a\\b"]));
        assert_eq!(parse_files("F\\:\\filename").unwrap(), v(&["F:\\filename"]));
        assert_eq!(
            parse_files("/dev/dsk/foo@3,0\\:c").unwrap(),
            v(&["/dev/dsk/foo@3,0:c"])
        );
        assert_eq!(parse_files(" a : b ").unwrap(), v(&["a ", " b"]));
        assert_eq!(parse_files("-").unwrap(), v(&["-"]));
        assert_eq!(format_files(&v(&["a:b", "c"])), "a\\:b:c");
        assert_eq!(format_files(&v(&["/dev/sda"])), "/dev/sda");
    }

    #[test]
    fn file_errors() {
        assert_err(parse_files(""), &["empty"]);
        assert_err(
            parse_files("a::b"),
            &["`a::b`", "empty file name", "name 2 of 3"],
        );
        assert_err(parse_files("a:"), &["`a:`", "empty file name"]);
        assert_err(parse_files(":a"), &["`:a`", "name 1 of 2"]);
    }

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
        assert_err(p("zoned:60/10:40"), &["`40`", "not a zone"]);
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
        assert_eq!(p("zipf"), FileService::Zipf(1.1));
        assert_eq!(p("zipf:1.2"), FileService::Zipf(1.2));
        assert_eq!(p("pareto"), FileService::Pareto(0.2));
        assert_eq!(p("pareto:0.5"), FileService::Pareto(0.5));
        assert_eq!(p("normal"), FileService::Normal(0.0));
        assert_eq!(p("normal:10"), FileService::Normal(10.0));
        assert_eq!(p("gauss"), FileService::Normal(0.0));
        assert_eq!(p("gauss:5"), FileService::Normal(5.0));
        assert_eq!(p(" roundrobin : 8 "), FileService::RoundRobin(Some(8)));
        for f in [
            FileService::Random,
            FileService::RoundRobin(None),
            FileService::RoundRobin(Some(3)),
            FileService::Sequential,
            FileService::Zipf(1.2),
            FileService::Pareto(0.3),
            FileService::Normal(7.5),
        ] {
            assert_eq!(p(&format_file_service(&f)), f);
        }
        assert_eq!(
            format_file_service(&FileService::RoundRobin(Some(3))),
            "roundrobin:3"
        );
        assert_eq!(format_file_service(&FileService::Normal(7.5)), "normal:7.5");
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
        assert_err(p("zipf:1.2:0.5"), &["`zipf:1.2:0.5`", "center"]);
        assert_err(p("zipf:x"), &["`zipf:x`", "`x`"]);
    }

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

    // ---- patterns (fio 3.33, buffer_pattern written with psync and read
    // back with xxd) ----

    #[test]
    fn patterns() {
        let p = |s: &str| parse_pattern(s).unwrap();
        assert_eq!(p("0xdeadbeef"), vec![0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0XDEADBEEF"), vec![0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0xabc"), vec![0x0a, 0xbc]);
        assert_eq!(p("0x1"), vec![0x01]);
        assert_eq!(p("0x00ff"), vec![0x00, 0xff]);
        assert_eq!(p("\"abc\""), b"abc".to_vec());
        assert_eq!(p("\"a\\\\b\""), b"a\\\\b".to_vec());
        assert_eq!(p("\"a'b\""), b"a'b".to_vec());
        assert_eq!(p("\"a b\""), b"a b".to_vec());
        assert_eq!(p("12"), vec![0x0c]);
        assert_eq!(p("0"), vec![0x00]);
        assert_eq!(p("255"), vec![0xff]);
        assert_eq!(p("256"), vec![0x00, 0x01]);
        assert_eq!(p("300"), vec![0x2c, 0x01]);
        assert_eq!(p("65536"), vec![0x00, 0x00, 0x01]);
        assert_eq!(p("16777215"), vec![0xff, 0xff, 0xff]);
        assert_eq!(p("16777216"), vec![0x00, 0x00, 0x00, 0x01]);
        assert_eq!(p("2147483647"), vec![0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(p("-12"), vec![0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(p("-1"), vec![0xff, 0xff, 0xff, 0xff]);
        assert_eq!(p("-256"), vec![0x00, 0xff, 0xff, 0xff]);
        assert_eq!(p("-2147483648"), vec![0x00, 0x00, 0x00, 0x80]);
        assert_eq!(p("+5"), vec![0x05]);
        assert_eq!(p("007"), vec![0x07]);
        assert_eq!(p("\"abc\"0x01"), vec![0x61, 0x62, 0x63, 0x01]);
        assert_eq!(p("0x01\"abc\""), vec![0x01, 0x61, 0x62, 0x63]);
        assert_eq!(p("12\"ab\""), vec![0x0c, 0x61, 0x62]);
        assert_eq!(p("0x12\"ab\"34"), vec![0x12, 0x61, 0x62, 0x22]);
        assert_eq!(
            p("\"abc\"-1"),
            vec![0x61, 0x62, 0x63, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(p(" 0x12 "), vec![0x12]);
        assert_eq!(p(&format!("0x{}", "ab".repeat(512))).len(), 512);
        assert_eq!(p(&format!("\"{}\"", "x".repeat(512))).len(), 512);
    }

    #[test]
    fn pattern_files_go_through_the_loader() {
        let loader = |name: &str| -> Result<Vec<u8>, ValueError> {
            match name {
                "fdata" => Ok(b"FILEDATA".to_vec()),
                "empty" => Ok(Vec::new()),
                _ => Err(ValueError::new(format!("cannot read '{name}'"))),
            }
        };
        assert_eq!(
            parse_pattern_with("'fdata'", &loader).unwrap(),
            b"FILEDATA".to_vec()
        );
        assert_eq!(
            parse_pattern_with("0xff'fdata'", &loader).unwrap(),
            [&[0xff][..], b"FILEDATA"].concat()
        );
        assert_err(
            parse_pattern_with("'nope'", &loader),
            &["`'nope'`", "cannot read 'nope'"],
        );
        assert_err(
            parse_pattern_with("'empty'", &loader),
            &["the file 'empty' is empty"],
        );
        assert_err(
            parse_pattern("'fdata'"),
            &["`'fdata'`", "file ('fdata')", "not supported"],
        );
    }

    #[test]
    fn pattern_errors() {
        let p = parse_pattern;
        assert_err(p(""), &["empty"]);
        assert_err(p("0x"), &["`0x`", "not followed by hex digits"]);
        assert_err(p("0x1g"), &["`0x1g`", "unexpected `g`"]);
        assert_err(p("0x-1"), &["`0x-1`", "not followed by hex digits"]);
        assert_err(p("1k"), &["`1k`", "unexpected `k`"]);
        assert_err(p("abc"), &["`abc`", "unexpected `a`"]);
        assert_err(p("\"\""), &["`\"\"`", "string at position 1 is empty"]);
        assert_err(p("\"\"0x01"), &["string at position 1 is empty"]);
        assert_err(p("\"ab"), &["`\"ab`", "never closed"]);
        assert_err(p("''"), &["file name at position 1 is empty"]);
        assert_err(p("0x12 \"ab\""), &["unexpected ` ` at position 5"]);
        assert_err(p("4294967295"), &["`4294967295`", "32-bit range"]);
        assert_err(p("2147483648"), &["`2147483648`", "32-bit range"]);
        assert_err(p("-2147483649"), &["32-bit range"]);
        assert_err(p("-"), &["`-`", "not followed by digits"]);
        assert_err(p("%o"), &["`%o`", "not supported"]);
        assert_err(
            p(&format!("0x{}cd", "ab".repeat(512))),
            &["longer than 512 bytes"],
        );
        assert_err(
            p(&format!("\"{}y\"", "x".repeat(512))),
            &["longer than 512 bytes"],
        );
    }

    #[test]
    fn pattern_format() {
        assert_eq!(format_pattern(&[0xde, 0xad, 0xbe, 0xef]), "0xdeadbeef");
        assert_eq!(format_pattern(&[0x00, 0x01]), "0x0001");
        assert_eq!(format_pattern(b"abc"), "0x616263");
        assert_eq!(format_pattern(&[]), "0x");
    }

    // ---- round trips ----

    fn opt_size() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![
            Just(None),
            (0u64..=(1 << 50)).prop_map(Some),
            (1u64..4096).prop_map(|n| Some(n * 4096)),
        ]
    }

    fn split_entries() -> impl Strategy<Value = Vec<SplitEntry>> {
        prop::collection::vec((1u64..(1 << 40), 0u32..=100), 1..10).prop_map(|raw| {
            // Scale the raw weights to whole percentages adding up to 100.
            let mut left = 100u32;
            let n = raw.len();
            raw.iter()
                .enumerate()
                .map(|(i, &(bs, w))| {
                    let pct = if i + 1 == n { left } else { w.min(left) };
                    left -= pct;
                    SplitEntry { bs, pct }
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn parsers_never_panic(s in "[-+0-9a-zA-Z.:/,%()*^\\\\'\" ]{0,24}") {
            use crate::value::{size, time};
            let _ = parse_per_dir(&s, &size_item);
            let _ = parse_range(&s, K);
            let _ = parse_split(&s, D);
            let _ = parse_cpus(&s);
            let _ = parse_files(&s);
            let _ = parse_distribution(&s);
            let _ = parse_file_service(&s);
            let _ = parse_steadystate(&s);
            let _ = parse_percentiles(&s);
            let _ = parse_pattern(&s);
            let _ = size::parse_size(&s, K);
            let _ = size::parse_size_or_percent(&s, K);
            let _ = size::parse_int(&s, D);
            let _ = time::parse_time(&s, time::TimeUnit::Sec);
        }

        #[test]
        fn per_dir_round_trip(r in opt_size(), w in opt_size(), t in opt_size()) {
            let v = pdir(r, w, t);
            let text = fmt_pd(&v);
            if r.is_none() && w.is_none() && t.is_none() {
                // Nothing set prints as nothing, which is not a value.
                prop_assert_eq!(text, "");
            } else {
                prop_assert_eq!(parse_per_dir(&text, &size_item).unwrap(), v, "{}", text);
            }
        }

        #[test]
        fn range_round_trip(a in 1u64..(1 << 50), b in 1u64..(1 << 50), k in any::<bool>()) {
            let kb = if k { K } else { D };
            let r = BlockRange { min: a.min(b), max: a.max(b) };
            prop_assert_eq!(parse_range(&format_range(&r, kb), kb).unwrap(), r);
        }

        #[test]
        fn split_round_trip(entries in split_entries(), k in any::<bool>()) {
            let kb = if k { K } else { D };
            let text = format_split(&entries, kb);
            prop_assert_eq!(parse_split(&text, kb).unwrap(), entries, "{}", text);
        }

        #[test]
        fn split_parse_is_stable(bs in prop::collection::vec((1u64..(1 << 30), prop::option::of(0u32..=40)), 1..6)) {
            // Whatever is blank or missing, the result adds up to 100 and
            // prints to text that parses back to itself.
            prop_assume!(bs.iter().filter_map(|e| e.1).sum::<u32>() <= 100);
            let text = bs
                .iter()
                .map(|(b, p)| match p {
                    Some(p) => format!("{b}/{p}"),
                    None => format!("{b}/"),
                })
                .collect::<Vec<_>>()
                .join(":");
            let parsed = parse_split(&text, K).unwrap();
            prop_assert_eq!(parsed.iter().map(|e| e.pct).sum::<u32>(), 100);
            prop_assert_eq!(parse_split(&format_split(&parsed, K), K).unwrap(), parsed);
        }

        #[test]
        fn cpus_round_trip(mut cpus in prop::collection::vec(0u32..MAX_CPUS, 1..64)) {
            cpus.sort_unstable();
            cpus.dedup();
            let list = CpuList(cpus);
            let text = format_cpus(&list);
            prop_assert_eq!(parse_cpus(&text).unwrap(), list, "{}", text);
        }

        #[test]
        fn files_round_trip(names in prop::collection::vec("[a-zA-Z0-9/_.:@,\\\\-]{0,12}[a-zA-Z0-9/_.:@,-]", 1..6)) {
            let text = format_files(&names);
            prop_assert_eq!(parse_files(&text).unwrap(), names, "{}", text);
        }

        #[test]
        fn percentiles_round_trip(list in prop::collection::vec(1e-9f64..=100.0, 1..=20)) {
            let text = format_percentiles(&list);
            prop_assert_eq!(parse_percentiles(&text).unwrap(), list, "{}", text);
        }

        #[test]
        fn patterns_round_trip(bytes in prop::collection::vec(any::<u8>(), 1..=512)) {
            prop_assert_eq!(parse_pattern(&format_pattern(&bytes)).unwrap(), bytes);
        }

        #[test]
        fn decimal_patterns_are_little_endian(v in any::<i32>()) {
            let bytes = parse_pattern(&v.to_string()).unwrap();
            let mut wide = [if v < 0 { 0xff } else { 0 }; 4];
            wide[..bytes.len()].copy_from_slice(&bytes);
            prop_assert_eq!(i32::from_le_bytes(wide), v);
            if v < 0 {
                prop_assert_eq!(bytes.len(), 4);
            }
        }

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

        #[test]
        fn steadystate_round_trip(limit in 0.0f64..1e6, bytes in 0u64..(1 << 40), m in 0usize..4, pct in any::<bool>()) {
            let metric = SteadyMetric::ALL[m].0;
            let limit = if metric.is_bw() && !pct { bytes as f64 } else { limit };
            let s = SteadyState { metric, limit, percent: pct };
            prop_assert_eq!(parse_steadystate(&format_steadystate(&s)).unwrap(), s);
        }
    }
}
