//! Assertions shared by the unit tests of the value parsers.

use crate::error::ValueError;

/// Asserts that `r` is an error whose message contains every needle.
pub(super) fn assert_err<T: std::fmt::Debug>(r: Result<T, ValueError>, needles: &[&str]) {
    match r {
        Ok(v) => panic!("expected an error mentioning {needles:?}, got {v:?}"),
        Err(e) => {
            for n in needles {
                assert!(e.0.contains(n), "`{}` does not mention `{n}`", e.0);
            }
        }
    }
}
