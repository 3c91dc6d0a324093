//! Per-direction values (`bs=4k,64k`, `rate=1m,,2m`): one value each for
//! read, write and trim, fio's comma list that sets them and the printer that
//! writes them back. The caller brings the item parser and printer, so one
//! list syntax serves sizes, counts, ranges and splits.
//!
//! Unlike fio, which ignores a fourth value, a fourth value is an error.

use crate::error::ValueError;

/// One value per data direction. `None` means "the option's default for this
/// direction".
#[derive(Clone, Debug, PartialEq)]
pub struct PerDir<T> {
    pub read: Option<T>,
    pub write: Option<T>,
    pub trim: Option<T>,
}

/// Every direction at its default, whatever `T` is.
impl<T> Default for PerDir<T> {
    fn default() -> Self {
        PerDir {
            read: None,
            write: None,
            trim: None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::size::{format_size, parse_size, KbBase};
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

    const K: KbBase = KbBase::K1024;

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

    fn opt_size() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![
            Just(None),
            (0u64..=(1 << 50)).prop_map(Some),
            (1u64..4096).prop_map(|n| Some(n * 4096)),
        ]
    }

    proptest! {
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
    }
}
