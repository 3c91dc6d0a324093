//! Block sizes given as more than one value: `bsrange` ranges (`1k-4k`) and
//! `bssplit` splits (`4k/10:64k/90`), one direction each (`perdir` makes the
//! per-direction list). Each has a parser and a printer that round-trip.
//!
//! Where fio accepts garbage silently (`4k/101` in a split, percentages adding
//! up to more than 100), these parsers refuse it with a message that names the
//! text.

use super::percent::whole_percent;
use super::size::{format_size, parse_size, KbBase};
use crate::error::ValueError;

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
/// in fio. A reversed range is swapped, as fio 3.33 does: `8k-4k` is
/// `4k-8k`.
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
    let first = end(min_text, "minimum")?;
    let second = end(max_text, "maximum")?;
    Ok(BlockRange {
        min: first.min(second),
        max: first.max(second),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::perdir::parse_per_dir;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    const K: KbBase = KbBase::K1024;
    const D: KbBase = KbBase::K1000;

    // ---- block size ranges ----

    #[test]
    fn ranges() {
        let r = |min, max| BlockRange { min, max };
        assert_eq!(parse_range("1k-4k", K).unwrap(), r(1024, 4096));
        assert_eq!(parse_range("1k:4k", K).unwrap(), r(1024, 4096));
        assert_eq!(parse_range(" 512 - 64k ", K).unwrap(), r(512, 65536));
        assert_eq!(parse_range("2k-2k", K).unwrap(), r(2048, 2048));
        // fio 3.33 swaps a reversed range: `bsrange=8k-4k` runs as 4k-8k.
        assert_eq!(parse_range("8k-4k", K).unwrap(), r(4096, 8192));
        assert_eq!(parse_range("64k:512", K).unwrap(), r(512, 65536));
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
        fn range_round_trip(a in 1u64..(1 << 50), b in 1u64..(1 << 50), k in any::<bool>()) {
            let kb = if k { K } else { D };
            let r = BlockRange { min: a.min(b), max: a.max(b) };
            prop_assert_eq!(parse_range(&format_range(&r, kb), kb).unwrap(), r);
            let reversed = format!("{}-{}", format_size(r.max, kb), format_size(r.min, kb));
            prop_assert_eq!(parse_range(&reversed, kb).unwrap(), r);
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
    }
}
