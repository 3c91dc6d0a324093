//! Fill patterns (`buffer_pattern`, `verify_pattern`): fio's concatenation of
//! `0x` hex digits, quoted strings, file contents and decimal numbers, parsed
//! into at most 512 bytes and printed back as hex.

use crate::error::ValueError;

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
    use crate::value::test_util::assert_err;
    use proptest::prelude::*;

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

    proptest! {
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
    }
}
