//! Errors of the job language. Every error carries the place it came from: a
//! file and line for job files, the argument position for command lines, so
//! that the message reads `FILE:LINE: message` as compilers print it.
//!
//! Messages quote the user's text, which can be megabytes long: every quoted
//! piece (between backticks) longer than a line is cut to its first 64
//! characters and its length, control characters are shown escaped, and a
//! whole message is at most 1 KiB, so that a bad input never floods the
//! terminal.

use std::fmt;
use std::path::PathBuf;

/// Where a piece of job text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A line of a job file (1-based; 0 for the file as a whole).
    File { path: PathBuf, line: usize },
    /// An argument of the command line (1-based position after `run`).
    Arg { index: usize, text: String },
    /// A value that did not come from the user (a table default, a test).
    Builtin,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File { path, line: 0 } => write!(f, "{}", show_path(path)),
            Location::File { path, line } => write!(f, "{}:{}", show_path(path), line),
            Location::Arg { index, text } => {
                write!(f, "command line argument {index} `{}`", clip(text))
            }
            Location::Builtin => write!(f, "built-in"),
        }
    }
}

/// A problem with a single value, before it is placed in a file or line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl ValueError {
    pub fn new(msg: impl Into<String>) -> Self {
        ValueError(bound_message(&msg.into()))
    }
}

/// An error in job text, with its location: `FILE:LINE: message`, or the
/// command-line argument; a problem that comes from no place the user
/// wrote (no job at all, a `--section` that names none) is its message
/// alone.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.shown())]
pub struct SpecError {
    pub location: Location,
    pub message: String,
}

impl SpecError {
    fn shown(&self) -> String {
        match self.location {
            Location::Builtin => self.message.clone(),
            _ => format!("{}: {}", self.location, self.message),
        }
    }

    pub fn new(location: Location, message: impl Into<String>) -> Self {
        SpecError {
            location,
            message: bound_message(&message.into()),
        }
    }
}

/// How many characters of a long name or value a message shows.
pub const SHOWN_CHARS: usize = 64;
/// Text up to this many characters is shown whole.
const SHOWN_WHOLE: usize = 96;
/// The longest path a location shows whole.
const SHOWN_PATH: usize = 256;
/// The longest message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// User text as a message shows it: control characters escaped (`\n`), and
/// text longer than a line cut to its first 64 characters followed by
/// `... (N bytes)`. Clipping clipped text changes nothing.
pub fn clip(text: &str) -> String {
    clip_to(text, SHOWN_CHARS, SHOWN_WHOLE)
}

fn clip_to(text: &str, keep: usize, whole: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        if c.is_control() {
            for e in c.escape_default() {
                out.push(e);
                shown += 1;
            }
        } else {
            out.push(c);
            shown += 1;
        }
        if shown > whole {
            let cut: String = out.chars().take(keep).collect();
            return format!("{cut}... ({} bytes)", text.len());
        }
    }
    out
}

fn show_path(path: &std::path::Path) -> String {
    let text = path.to_string_lossy();
    clip_to(&text, SHOWN_PATH - 32, SHOWN_PATH)
}

/// A message with each backtick-quoted piece clipped, control characters
/// escaped, and the whole cut to `MAX_MESSAGE_BYTES`: what every error of
/// this crate holds, and what a program prints of other errors that quote
/// the user's text.
pub fn bound_message(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(MAX_MESSAGE_BYTES));
    for (i, part) in msg.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(&clip(part));
        } else {
            out.push_str(&clip_to(part, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES));
        }
        if out.len() > MAX_MESSAGE_BYTES {
            break;
        }
    }
    if out.len() <= MAX_MESSAGE_BYTES {
        return out;
    }
    let mut end = MAX_MESSAGE_BYTES - 32;
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &out[..end], msg.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_to_its_start_and_length() {
        let long = "x".repeat(10_000);
        let shown = clip(&long);
        assert_eq!(shown, format!("{}... (10000 bytes)", "x".repeat(64)));
        assert_eq!(clip(&shown), shown);
        assert_eq!(clip("bs"), "bs");
        assert_eq!(clip("a\nb\u{1b}"), "a\\nb\\u{1b}");
        let multi = "é".repeat(200);
        assert_eq!(clip(&multi), format!("{}... (400 bytes)", "é".repeat(64)));
    }

    #[test]
    fn messages_clip_every_quoted_piece_and_stay_short() {
        let long = "y".repeat(1 << 20);
        let e = SpecError::new(
            Location::Arg {
                index: 3,
                text: format!("--{long}=1"),
            },
            format!("unknown option `{long}` (did you mean `bs`?)"),
        );
        let text = e.to_string();
        assert!(text.len() < 400, "{} bytes", text.len());
        assert!(
            text.contains("... (1048576 bytes)` (did you mean `bs`?)"),
            "{text}"
        );
        assert!(text.contains("... (1048580 bytes)`"), "{text}");
        // Unbalanced quotes still end in a bounded message.
        let e = ValueError::new(format!("`{long}"));
        assert!(e.0.len() <= MAX_MESSAGE_BYTES, "{}", e.0.len());
        let e = ValueError::new(format!("{long} is bad"));
        assert!(e.0.len() <= MAX_MESSAGE_BYTES);
        assert!(e.0.ends_with("... (1048583 bytes)"), "{}", &e.0[900..]);
    }
}
