//! Job text before it is typed: sections of `name[=value]` lines, each with
//! the place it was written. Job files and command lines both produce this
//! shape; `resolve` turns it into `JobSpec`s.

use crate::error::Location;

/// One option as written: `bs=4k`, or a bare `time_based`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOption {
    /// The name as written (case kept for messages).
    pub name: String,
    /// The value after `=`, trimmed; None for a bare option.
    pub value: Option<String>,
    pub location: Location,
}

/// A `[section]` of a job file, or a `--name` job of the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSection {
    pub name: String,
    pub location: Location,
    pub options: Vec<RawOption>,
}

impl RawSection {
    /// `[global]` holds defaults for the jobs after it.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

impl RawOption {
    /// An option iolab sets itself (a built-in suite's, a sweep point's):
    /// no place in a file, its value as text.
    pub fn builtin(name: &str, value: impl ToString) -> Self {
        Self {
            name: name.to_string(),
            value: Some(value.to_string()),
            location: Location::Builtin,
        }
    }

    /// A bare option iolab sets itself (`stonewall`).
    pub fn builtin_flag(name: &str) -> Self {
        Self {
            name: name.to_string(),
            value: None,
            location: Location::Builtin,
        }
    }
}

/// Why a section built by iolab cannot be written as job-file text: a
/// value holds a line break, which fio's syntax cannot carry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` holds a line break, which a job file cannot carry: {value:?}")]
pub struct UnwritableValue {
    pub name: String,
    pub value: String,
}

impl RawSection {
    /// A section iolab builds itself, with no options yet.
    pub fn builtin(name: &str) -> Self {
        Self {
            name: name.to_string(),
            location: Location::Builtin,
            options: Vec::new(),
        }
    }

    /// The section with `name=value` added.
    pub fn with(mut self, name: &str, value: impl ToString) -> Self {
        self.options.push(RawOption::builtin(name, value));
        self
    }

    /// The section with the bare option `name` added.
    pub fn with_flag(mut self, name: &str) -> Self {
        self.options.push(RawOption::builtin_flag(name));
        self
    }

    /// The section with `filename=` naming `paths`, each colon in a path
    /// written as `\:` so that a directory such as `/mnt/a:b` stays one
    /// file.
    pub fn with_files(self, paths: &[&std::path::Path]) -> Self {
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        self.with("filename", crate::value::files::format_files(&names))
    }

    /// The section as job-file text (`[name]` and one line per option),
    /// which parses back to the same section; an error when a name or a
    /// value holds a line break.
    pub fn to_text(&self) -> Result<String, UnwritableValue> {
        let check = |name: &str, value: &str| {
            if value.contains(['\n', '\r']) {
                Err(UnwritableValue {
                    name: name.to_string(),
                    value: value.to_string(),
                })
            } else {
                Ok(())
            }
        };
        check("section name", &self.name)?;
        let mut out = format!("[{}]\n", self.name);
        for o in &self.options {
            check(&o.name, &o.name)?;
            match &o.value {
                Some(v) => {
                    check(&o.name, v)?;
                    out.push_str(&format!("{}={v}\n", o.name));
                }
                None => out.push_str(&format!("{}\n", o.name)),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::parse_job_text;
    use std::path::Path;

    /// A section's name and options, without where they were written.
    type Shape = (String, Vec<(String, Option<String>)>);

    fn strip(s: Vec<RawSection>) -> Vec<Shape> {
        s.iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.options
                        .iter()
                        .map(|o| (o.name.clone(), o.value.clone()))
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_built_section_prints_as_text_that_parses_back_to_it() {
        let s = RawSection::builtin("job")
            .with_files(&[Path::new("/mnt/a:b/data"), Path::new("/tmp/x")])
            .with("bs", 4096)
            .with_flag("stonewall");
        let text = s.to_text().unwrap();
        assert_eq!(
            text,
            "[job]\nfilename=/mnt/a\\:b/data:/tmp/x\nbs=4096\nstonewall\n"
        );
        let back = parse_job_text(Path::new("t.fio"), &text).unwrap();
        assert_eq!(strip(back), strip(vec![s]));
    }

    #[test]
    fn a_value_with_a_line_break_cannot_be_written() {
        let s = RawSection::builtin("job").with_files(&[Path::new("/tmp/a\nunlink=1")]);
        let e = s.to_text().unwrap_err();
        assert_eq!(e.name, "filename");
        assert!(e.to_string().contains("line break"), "{e}");
    }
}
