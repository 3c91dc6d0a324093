//! Arithmetic in option values: `(4*1024)`, `8*$mb_memory` after keyword
//! substitution. Operators + - * / % ^ and parentheses, with the usual
//! precedence (^ binds tightest and is right-associative); each number may
//! carry a unit suffix that the caller's atom parser understands.

use crate::error::ValueError;

/// Evaluates `text` as an arithmetic expression. `atom` turns one number
/// token (digits with an optional suffix, such as `4k` or `10s`) into a
/// value.
pub fn eval(text: &str, atom: &dyn Fn(&str) -> Result<f64, ValueError>) -> Result<f64, ValueError> {
    let _ = (text, atom);
    Err(ValueError::new("arithmetic is not written yet"))
}

/// Whether `text` looks like arithmetic that should be evaluated: it starts
/// with `(`.
pub fn is_expression(text: &str) -> bool {
    text.trim_start().starts_with('(')
}
