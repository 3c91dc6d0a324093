//! Reading fio job files: `[section]` headers, `name=value` and bare `name`
//! lines, `;` and `#` comments (anywhere on a line, as fio strips them), and
//! `include FILE` lines, resolved relative to the including file, nested, with
//! a loop reported as an error.
//!
//! What is read is bounded: a job file or include must be a regular file of
//! at most 16 MiB, the job text of one run (files and includes together) is
//! at most 16 MiB, includes nest at most 16 deep, a line is at most 8190
//! bytes (fio splits longer ones), and a run has at most 4096 sections
//! (fio's own limit on jobs) and 250,000 option lines. Anything past a
//! limit is refused with an error naming it.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{clip, Location, SpecError};
use crate::raw::{RawOption, RawSection};

/// The largest job file or included file, and the most job text one run
/// reads, all its files and includes together.
pub const MAX_JOB_TEXT_BYTES: u64 = 16 << 20;
/// How deep includes may nest.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// The most sections (`[global]` included) of one run.
pub const MAX_SECTIONS: usize = 4096;
/// The most option lines of one run, files and includes together.
pub const MAX_OPTIONS: usize = 250_000;
/// The longest line, without its line break: fio reads a job file's lines
/// into a buffer of 8192 bytes and splits longer ones.
pub const MAX_LINE_BYTES: usize = 8190;

/// Reads job files for one run, keeping count against the limits.
#[derive(Debug, Default)]
pub struct Reader {
    /// Bytes of job text read so far.
    bytes: u64,
    /// Sections read so far.
    sections: usize,
    /// Option lines read so far.
    options: usize,
}

impl Reader {
    pub fn new() -> Self {
        Reader::default()
    }

    /// Reads a job file and the files it includes into sections, in order.
    pub fn read_job_file(&mut self, path: &Path) -> Result<Vec<RawSection>, SpecError> {
        let mut sections = Vec::new();
        let mut stack = Vec::new();
        self.read_into(path, None, &mut stack, &mut sections)?;
        Ok(sections)
    }

    /// Parses job text that did not come from a file (a built-in suite, a
    /// test). `name` stands in for the file name in locations; includes are
    /// resolved against the current directory.
    pub fn parse_job_text(
        &mut self,
        name: &Path,
        text: &str,
    ) -> Result<Vec<RawSection>, SpecError> {
        let mut sections = Vec::new();
        let mut stack = vec![name.to_path_buf()];
        self.parse_lines(name, text, &mut stack, &mut sections)?;
        Ok(sections)
    }

    fn read_into(
        &mut self,
        path: &Path,
        included_from: Option<Location>,
        stack: &mut Vec<PathBuf>,
        sections: &mut Vec<RawSection>,
    ) -> Result<(), SpecError> {
        let place = included_from.clone().unwrap_or(Location::File {
            path: path.to_path_buf(),
            line: 0,
        });
        let what = match included_from {
            Some(_) => format!(
                "cannot read included job file `{}`",
                clip(&path.to_string_lossy())
            ),
            None => "cannot read job file".to_string(),
        };
        // The stack holds the job file and the includes above this one.
        if stack.len() > MAX_INCLUDE_DEPTH {
            return Err(SpecError::new(
                place,
                format!("{what}: includes nest more than {MAX_INCLUDE_DEPTH} deep"),
            ));
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if stack.contains(&canonical) {
            let chain: Vec<String> = stack
                .iter()
                .chain(std::iter::once(&canonical))
                .map(|p| clip(&p.to_string_lossy()))
                .collect();
            return Err(SpecError::new(
                place,
                format!("include loop: {}", chain.join(" -> ")),
            ));
        }
        let left = MAX_JOB_TEXT_BYTES - self.bytes;
        let text = read_bounded(path, left)
            .map_err(|why| SpecError::new(place, format!("{what}: {why}")))?;
        self.bytes += text.len() as u64;
        stack.push(canonical);
        self.parse_lines(path, &text, stack, sections)?;
        stack.pop();
        Ok(())
    }

    fn parse_lines(
        &mut self,
        path: &Path,
        text: &str,
        stack: &mut Vec<PathBuf>,
        sections: &mut Vec<RawSection>,
    ) -> Result<(), SpecError> {
        // Sections read from this file; an include appends to the same list,
        // and the including file goes on adding to the last section it opened.
        let mut current: Option<usize> = None;
        for (i, raw_line) in text.lines().enumerate() {
            // Before anything else looks at it, comments included: fio
            // would read the rest of a long comment as another line.
            if raw_line.len() > MAX_LINE_BYTES {
                let location = Location::File {
                    path: path.to_path_buf(),
                    line: i + 1,
                };
                return Err(SpecError::new(
                    location,
                    format!(
                        "the line is {} bytes long; fio reads job-file lines of at most \
                         {MAX_LINE_BYTES} bytes",
                        raw_line.len()
                    ),
                ));
            }
            let line = strip_comment(raw_line);
            if line.is_empty() {
                continue;
            }
            let location = Location::File {
                path: path.to_path_buf(),
                line: i + 1,
            };
            if let Some(rest) = line.strip_prefix('[') {
                let Some(name) = rest.strip_suffix(']') else {
                    return Err(SpecError::new(
                        location,
                        format!(
                            "unterminated section header `{}`: expected `]` at the end",
                            clip(line)
                        ),
                    ));
                };
                let name = name.trim();
                if name.is_empty() {
                    return Err(SpecError::new(location, "empty section name `[]`"));
                }
                if name.contains(['[', ']']) {
                    return Err(SpecError::new(
                        location,
                        format!("section name `{}` contains a bracket", clip(name)),
                    ));
                }
                if self.sections >= MAX_SECTIONS {
                    return Err(SpecError::new(
                        location,
                        format!("more than {MAX_SECTIONS} sections: fio runs at most {MAX_SECTIONS} jobs"),
                    ));
                }
                self.sections += 1;
                sections.push(RawSection {
                    name: name.to_string(),
                    location,
                    options: Vec::new(),
                });
                current = Some(sections.len() - 1);
                continue;
            }
            if let Some(target) = include_target(line) {
                if target.is_empty() {
                    return Err(SpecError::new(location, "`include` needs a file name"));
                }
                let base = path.parent().unwrap_or(Path::new(""));
                let inc = base.join(target);
                self.read_into(&inc, Some(location), stack, sections)?;
                // Options after an include go on in the last section read.
                current = sections.len().checked_sub(1);
                continue;
            }
            if self.options >= MAX_OPTIONS {
                return Err(SpecError::new(
                    location,
                    format!("more than {MAX_OPTIONS} option lines in the job files of one run"),
                ));
            }
            self.options += 1;
            let option = split_option(line, location.clone());
            match current {
                Some(idx) => sections[idx].options.push(option),
                None => match sections.last_mut() {
                    // An included file may hold options for the section that
                    // was open where it was included.
                    Some(last) if stack.len() > 1 => last.options.push(option),
                    _ => {
                        return Err(SpecError::new(
                            location,
                            format!(
                                "option `{}` is outside any section: put it under [global] or a [job] header",
                                clip(&option.name)
                            ),
                        ))
                    }
                },
            }
        }
        Ok(())
    }
}

/// Reads a job file and the files it includes into sections, in order.
pub fn read_job_file(path: &Path) -> Result<Vec<RawSection>, SpecError> {
    Reader::new().read_job_file(path)
}

/// Parses job text that did not come from a file (a built-in suite, a test).
/// `name` stands in for the file name in locations; includes are resolved
/// against the current directory.
pub fn parse_job_text(name: &Path, text: &str) -> Result<Vec<RawSection>, SpecError> {
    Reader::new().parse_job_text(name, text)
}

/// What kind of file a non-regular file is, for the message.
fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads a regular file of at most `left` bytes (and at most
/// `MAX_JOB_TEXT_BYTES`) as text; the error says why it was not read.
/// A FIFO or device is refused before it is opened, and the file is opened
/// without blocking and checked again on its descriptor.
fn read_bounded(path: &Path, left: u64) -> Result<String, String> {
    let limit_mib = MAX_JOB_TEXT_BYTES >> 20;
    let check = |meta: &std::fs::Metadata| -> Result<(), String> {
        if !meta.is_file() {
            return Err(format!(
                "it is {}; job files must be regular files",
                kind_of(meta.file_type())
            ));
        }
        if meta.len() > MAX_JOB_TEXT_BYTES {
            return Err(format!(
                "it is {} bytes; job files are limited to {limit_mib} MiB",
                meta.len()
            ));
        }
        if meta.len() > left {
            return Err(format!(
                "the job text of one run (job files and includes together) is limited to \
                 {limit_mib} MiB"
            ));
        }
        Ok(())
    };
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    check(&meta)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    check(&meta)?;
    // The size can change under the reader (or lie, as in /proc): read at
    // most one byte past the limit to know.
    let limit = left.min(MAX_JOB_TEXT_BYTES);
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(if limit < MAX_JOB_TEXT_BYTES {
            format!(
                "the job text of one run (job files and includes together) is limited to \
                 {limit_mib} MiB"
            )
        } else {
            format!("it is larger than {limit_mib} MiB; job files are limited to {limit_mib} MiB")
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Removes a trailing comment (`;` or `#` and everything after) and blanks.
fn strip_comment(line: &str) -> &str {
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim()
}

/// `include FILE` (fio's syntax has no `=`).
fn include_target(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("include")?;
    if rest.is_empty() {
        return Some("");
    }
    if rest.starts_with([' ', '\t']) && !rest.contains('=') {
        return Some(rest.trim());
    }
    None
}

/// Splits `name=value` (blanks around `=` allowed) or a bare `name`.
pub(crate) fn split_option(text: &str, location: Location) -> RawOption {
    match text.split_once('=') {
        Some((name, value)) => RawOption {
            name: name.trim().to_string(),
            value: Some(value.trim().to_string()),
            location,
        },
        None => RawOption {
            name: text.trim().to_string(),
            value: None,
            location,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn names(s: &[RawSection]) -> Vec<&str> {
        s.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn sections_options_and_comments() {
        let text = "; leading comment\n[global]\nsize=100MB ; trailing\n\n# another\n[a]\nrw=read\nstonewall\nbs = 4k\n";
        let s = parse_job_text(Path::new("t.fio"), text).unwrap();
        assert_eq!(names(&s), ["global", "a"]);
        assert_eq!(s[0].options[0].name, "size");
        assert_eq!(s[0].options[0].value.as_deref(), Some("100MB"));
        assert_eq!(
            s[0].options[0].location,
            Location::File {
                path: "t.fio".into(),
                line: 3
            }
        );
        assert_eq!(s[1].options[1].name, "stonewall");
        assert_eq!(s[1].options[1].value, None);
        assert_eq!(s[1].options[2].name, "bs");
        assert_eq!(s[1].options[2].value.as_deref(), Some("4k"));
    }

    #[test]
    fn option_outside_section_is_an_error_with_its_line() {
        let err = parse_job_text(Path::new("x.fio"), "\nbs=4k\n[a]\n").unwrap_err();
        assert_eq!(err.to_string().split(": ").next(), Some("x.fio:2"));
        assert!(err.message.contains("outside any section"));
    }

    #[test]
    fn unterminated_header() {
        let err = parse_job_text(Path::new("x.fio"), "[global]\n[job\nrw=read\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.fio:2: unterminated section header"),
            "{err}"
        );
    }

    #[test]
    fn includes_nest_relative_to_the_including_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(
            dir.path().join("main.fio"),
            "[global]\ninclude sub/common.fio\n[b]\nrw=write\n",
        )
        .unwrap();
        fs::write(
            dir.path().join("sub/common.fio"),
            "size=1m\ninclude deeper.fio\n",
        )
        .unwrap();
        fs::write(dir.path().join("sub/deeper.fio"), "bs=8k\n[a]\nrw=read\n").unwrap();
        let s = read_job_file(&dir.path().join("main.fio")).unwrap();
        assert_eq!(names(&s), ["global", "a", "b"]);
        let g: Vec<_> = s[0].options.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(g, ["size", "bs"]);
        assert_eq!(s[1].options[0].name, "rw");
    }

    #[test]
    fn include_loop_and_missing_include() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.fio"), "[global]\ninclude b.fio\n").unwrap();
        fs::write(dir.path().join("b.fio"), "include a.fio\n").unwrap();
        let err = read_job_file(&dir.path().join("a.fio")).unwrap_err();
        assert!(err.message.contains("include loop"), "{err}");
        assert!(err.to_string().contains("b.fio:1"), "{err}");

        fs::write(dir.path().join("self.fio"), "[global]\ninclude self.fio\n").unwrap();
        let err = read_job_file(&dir.path().join("self.fio")).unwrap_err();
        assert!(err.message.contains("include loop"), "{err}");

        fs::write(
            dir.path().join("m.fio"),
            "[global]\n\ninclude nothere.fio\n",
        )
        .unwrap();
        let err = read_job_file(&dir.path().join("m.fio")).unwrap_err();
        assert!(
            err.to_string()
                .contains("m.fio:3: cannot read included job file"),
            "{err}"
        );
        assert!(err.message.contains("nothere.fio"), "{err}");
    }

    #[test]
    fn missing_job_file_names_it() {
        let err = read_job_file(Path::new("/nonexistent/job.fio")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/job.fio"), "{err}");
    }
}
