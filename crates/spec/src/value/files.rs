//! File name lists (`filename=/dev/sda:/dev/sdb`): names separated by `:`,
//! with `\:` for a colon inside a name, parsed and printed back. Unlike fio,
//! which skips them, empty names are an error.

use crate::error::ValueError;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

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

    proptest! {
        #[test]
        fn files_round_trip(names in prop::collection::vec("[a-zA-Z0-9/_.:@,\\\\-]{0,12}[a-zA-Z0-9/_.:@,-]", 1..6)) {
            let text = format_files(&names);
            prop_assert_eq!(parse_files(&text).unwrap(), names, "{}", text);
        }
    }
}
