//! Arithmetic in option values: `(4*1024)`, `8*$mb_memory` after keyword
//! substitution. Operators + - * / % ^ and parentheses, with the usual
//! precedence (^ binds tightest and is right-associative); each number may
//! carry a unit suffix that the caller's atom parser understands.
//!
//! The evaluator is a small recursive-descent parser over `f64`:
//!
//! ```text
//! sum     := product (('+' | '-') product)*
//! product := unary (('*' | '/' | '%') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary ('^' unary)?          (right-associative)
//! primary := NUMBER | '(' sum ')'
//! ```
//!
//! A NUMBER token starts with a digit or `.` and runs over ASCII letters,
//! digits and dots, so `4k`, `1.5`, `10ms` and `0x10` are single tokens that
//! the caller's atom parser reads. Whitespace between tokens is ignored.

use crate::error::ValueError;

/// Evaluates `text` as an arithmetic expression. `atom` turns one number
/// token (digits with an optional suffix, such as `4k` or `10s`) into a
/// value.
pub fn eval(text: &str, atom: &dyn Fn(&str) -> Result<f64, ValueError>) -> Result<f64, ValueError> {
    let tokens = tokenize(text)?;
    if tokens.is_empty() {
        return Err(ValueError::new(format!(
            "`{}` is not an arithmetic expression: it is empty",
            text.trim()
        )));
    }
    let mut p = Parser {
        depth: 0,
        text: text.trim(),
        tokens: &tokens,
        pos: 0,
        atom,
    };
    let v = p.sum()?;
    if let Some(tok) = p.peek() {
        let what = match tok {
            Token::Close => "an unmatched `)`".to_string(),
            other => format!("unexpected `{}`", other.show()),
        };
        return Err(p.error(&format!("{what} after a complete expression")));
    }
    if !v.is_finite() {
        return Err(p.error("the result is too large or not a number"));
    }
    Ok(v)
}

/// Whether `text` looks like arithmetic that should be evaluated: it starts
/// with `(`.
pub fn is_expression(text: &str) -> bool {
    text.trim_start().starts_with('(')
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(String),
    Op(char),
    Open,
    Close,
}

impl Token {
    fn show(&self) -> String {
        match self {
            Token::Num(s) => s.clone(),
            Token::Op(c) => c.to_string(),
            Token::Open => "(".to_string(),
            Token::Close => ")".to_string(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, ValueError> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() || c == '.' {
            let mut end = start;
            while let Some(&(i, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '.' {
                    end = i + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(Token::Num(text[start..end].to_string()));
        } else if matches!(c, '+' | '-' | '*' | '/' | '%' | '^') {
            out.push(Token::Op(c));
            chars.next();
        } else if c == '(' {
            out.push(Token::Open);
            chars.next();
        } else if c == ')' {
            out.push(Token::Close);
            chars.next();
        } else {
            return Err(ValueError::new(format!(
                "`{}` is not an arithmetic expression: unexpected character `{c}` \
                 (use numbers, + - * / % ^ and parentheses)",
                text.trim()
            )));
        }
    }
    Ok(out)
}

/// The deepest nesting of parentheses, signs and exponents.
const MAX_DEPTH: usize = 100;

struct Parser<'a> {
    /// How deep the parser is in nested parts.
    depth: usize,
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    atom: &'a dyn Fn(&str) -> Result<f64, ValueError>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn error(&self, what: &str) -> ValueError {
        ValueError::new(format!(
            "`{}` is not a valid arithmetic expression: {what}",
            self.text
        ))
    }

    fn sum(&mut self) -> Result<f64, ValueError> {
        let mut v = self.product()?;
        while let Some(Token::Op(op @ ('+' | '-'))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let rhs = self.product()?;
            v = if op == '+' { v + rhs } else { v - rhs };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, ValueError> {
        let mut v = self.unary()?;
        while let Some(Token::Op(op @ ('*' | '/' | '%'))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let rhs = self.unary()?;
            v = match op {
                '*' => v * rhs,
                _ if rhs == 0.0 => {
                    let name = if op == '/' { "division" } else { "modulus" };
                    return Err(self.error(&format!("{name} by zero")));
                }
                '/' => v / rhs,
                _ => v % rhs,
            };
        }
        Ok(v)
    }

    /// Every nesting (a parenthesis, a sign, an exponent) passes here, so
    /// the depth is bounded here, before the stack is.
    fn unary(&mut self) -> Result<f64, ValueError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(&format!("it nests more than {MAX_DEPTH} deep")));
        }
        self.depth += 1;
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Result<f64, ValueError> {
        match self.peek() {
            Some(Token::Op('-')) => {
                self.pos += 1;
                Ok(-self.unary()?)
            }
            Some(Token::Op('+')) => {
                self.pos += 1;
                self.unary()
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<f64, ValueError> {
        let base = self.primary()?;
        if let Some(Token::Op('^')) = self.peek() {
            self.pos += 1;
            let exp = self.unary()?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<f64, ValueError> {
        match self.peek().cloned() {
            Some(Token::Num(s)) => {
                self.pos += 1;
                (self.atom)(&s).map_err(|e| self.error(&format!("bad number `{s}`: {}", e.0)))
            }
            Some(Token::Open) => {
                self.pos += 1;
                let v = self.sum()?;
                match self.peek() {
                    Some(Token::Close) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    Some(other) => {
                        let shown = other.show();
                        Err(self.error(&format!("expected `)` but found `{shown}`")))
                    }
                    None => Err(self.error("a `(` is never closed")),
                }
            }
            Some(Token::Close) => Err(self.error("expected a number before `)`")),
            Some(Token::Op(c)) => Err(self.error(&format!("expected a number before `{c}`"))),
            None => Err(self.error("it ends where a number was expected")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Result<f64, ValueError> {
        s.parse::<f64>()
            .map_err(|_| ValueError::new(format!("`{s}` is not a number")))
    }

    fn units(s: &str) -> Result<f64, ValueError> {
        match s.strip_suffix('k') {
            Some(n) => Ok(plain(n)? * 1024.0),
            None => plain(s),
        }
    }

    fn ev(s: &str) -> Result<f64, ValueError> {
        eval(s, &plain)
    }

    fn err(s: &str) -> String {
        match ev(s) {
            Ok(v) => panic!("`{s}` evaluated to {v}, expected an error"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(ev("1+2*3").unwrap(), 7.0);
        assert_eq!(ev("(1+2)*3").unwrap(), 9.0);
        assert_eq!(ev("10-4-3").unwrap(), 3.0);
        assert_eq!(ev("100/10/5").unwrap(), 2.0);
        assert_eq!(ev("2^3^2").unwrap(), 512.0);
        assert_eq!(ev("2*3^2").unwrap(), 18.0);
        assert_eq!(ev("-2^2").unwrap(), -4.0);
        assert_eq!(ev("2^-1").unwrap(), 0.5);
        assert_eq!(ev("17%5").unwrap(), 2.0);
        assert_eq!(ev("7/2").unwrap(), 3.5);
        assert_eq!(ev("--3").unwrap(), 3.0);
        assert_eq!(ev("+3").unwrap(), 3.0);
        assert_eq!(ev("1-(-2)").unwrap(), 3.0);
        assert_eq!(ev(" ( 4 * 1024 ) ").unwrap(), 4096.0);
        assert_eq!(ev("((((1))))").unwrap(), 1.0);
        assert_eq!(ev("1.5*2").unwrap(), 3.0);
        assert_eq!(ev(".5*4").unwrap(), 2.0);
    }

    #[test]
    fn atoms_carry_suffixes() {
        assert_eq!(eval("(1k*4)", &units).unwrap(), 4096.0);
        assert_eq!(eval("(10*4k)", &units).unwrap(), 40960.0);
        assert_eq!(eval("(1.5*1k)", &units).unwrap(), 1536.0);
    }

    #[test]
    fn atom_errors_name_the_token() {
        let e = eval("(4q*2)", &units).unwrap_err().0;
        assert!(e.contains("`4q`"), "{e}");
        assert!(e.contains("(4q*2)"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for deep in [
            format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("({}1)", "-".repeat(100_000)),
            format!("({})", vec!["2"; 100_000].join("^")),
        ] {
            let e = err(&deep);
            assert!(e.contains("nests more than 100 deep"), "{e}");
            assert!(e.len() < 300, "{e}");
        }
        assert_eq!(
            eval(&format!("{}1{}", "(".repeat(90), ")".repeat(90)), &plain),
            Ok(1.0)
        );
    }

    #[test]
    fn errors() {
        let e = err("");
        assert!(e.contains("empty"), "{e}");
        let e = err("   ");
        assert!(e.contains("empty"), "{e}");
        let e = err("(1/0)");
        assert!(e.contains("division by zero") && e.contains("(1/0)"), "{e}");
        let e = err("(5%0)");
        assert!(e.contains("modulus by zero") && e.contains("(5%0)"), "{e}");
        let e = err("(1+2");
        assert!(e.contains("never closed") && e.contains("(1+2"), "{e}");
        let e = err("(1+2))");
        assert!(e.contains("unmatched `)`") && e.contains("(1+2))"), "{e}");
        let e = err("(1+2) 3");
        assert!(e.contains("unexpected `3`"), "{e}");
        let e = err("1+");
        assert!(e.contains("ends where a number was expected"), "{e}");
        let e = err("*2");
        assert!(e.contains("expected a number before `*`"), "{e}");
        let e = err("()");
        assert!(e.contains("expected a number before `)`"), "{e}");
        let e = err("(1 $ 2)");
        assert!(
            e.contains("unexpected character `$`") && e.contains("(1 $ 2)"),
            "{e}"
        );
        let e = err("(2 3)");
        assert!(e.contains("expected `)` but found `3`"), "{e}");
        let e = err("10^400");
        assert!(e.contains("too large"), "{e}");
    }

    #[test]
    fn is_expression_checks_the_first_char() {
        assert!(is_expression("(1+1)"));
        assert!(is_expression("  (1"));
        assert!(!is_expression("1+1"));
        assert!(!is_expression(""));
    }
}
