//! Each result kind as a [`Document`](crate::doc::Document): the quick
//! suite, a comparison, a metadata pass, a sweep and a run. The same
//! document feeds every exporter, so a kind's table reads the same in the
//! terminal, Markdown, CSV and HTML, and its figures appear in HTML.

pub mod compare;
pub mod meta;
pub mod quick;
pub mod run;
pub mod sweep;

use crate::doc::Note;

/// The warning codes of a result numbered in the order they were raised:
/// cells carry `wN`, the notes say what each is and where it was raised.
#[derive(Default)]
pub struct Marks {
    codes: Vec<(String, String, Vec<String>)>,
}

impl Marks {
    /// The marker of `code` raised at `at`, with its text (the first one
    /// given is kept).
    pub fn mark(&mut self, code: &str, text: &str, at: &str) -> String {
        let i = match self.codes.iter().position(|(c, _, _)| c == code) {
            Some(i) => i,
            None => {
                self.codes
                    .push((code.to_string(), text.to_string(), Vec::new()));
                self.codes.len() - 1
            }
        };
        let places = &mut self.codes[i].2;
        if !at.is_empty() && !places.iter().any(|p| p == at) {
            places.push(at.to_string());
        }
        format!("w{}", i + 1)
    }

    /// The markers of several codes, each once, in order.
    pub fn marks<'a>(
        &mut self,
        warnings: impl IntoIterator<Item = (&'a str, &'a str)>,
        at: &str,
    ) -> Vec<String> {
        let mut out: Vec<String> = warnings
            .into_iter()
            .map(|(c, t)| self.mark(c, t, at))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// One warning note per code: its text and where it was raised.
    pub fn notes(&self) -> Vec<Note> {
        self.codes
            .iter()
            .enumerate()
            .map(|(i, (code, text, at))| {
                let mut t = format!("{code}: ");
                if text.is_empty() {
                    t.push_str("iolab warns that this number may not measure what it seems to");
                } else {
                    t.push_str(text);
                }
                if !at.is_empty() {
                    t.push_str(&format!(" (at {})", at.join(", ")));
                }
                Note::warning(format!("w{}", i + 1), t)
            })
            .collect()
    }
}
