//! Reading fio job files: `[section]` headers, `name=value` and bare `name`
//! lines, `;` and `#` comments (anywhere on a line, as fio strips them), and
//! `include FILE` lines, resolved relative to the including file, nested, with
//! a loop reported as an error.

use std::path::{Path, PathBuf};

use crate::error::{Location, SpecError};
use crate::raw::{RawOption, RawSection};

/// Reads a job file and the files it includes into sections, in order.
pub fn read_job_file(path: &Path) -> Result<Vec<RawSection>, SpecError> {
    let mut sections = Vec::new();
    let mut stack = Vec::new();
    read_into(path, None, &mut stack, &mut sections)?;
    Ok(sections)
}

/// Parses job text that did not come from a file (a built-in suite, a test).
/// `name` stands in for the file name in locations; includes are resolved
/// against the current directory.
pub fn parse_job_text(name: &Path, text: &str) -> Result<Vec<RawSection>, SpecError> {
    let mut sections = Vec::new();
    let mut stack = vec![name.to_path_buf()];
    parse_lines(name, text, &mut stack, &mut sections)?;
    Ok(sections)
}

fn read_into(
    path: &Path,
    included_from: Option<Location>,
    stack: &mut Vec<PathBuf>,
    sections: &mut Vec<RawSection>,
) -> Result<(), SpecError> {
    let text = std::fs::read_to_string(path).map_err(|e| match &included_from {
        Some(at) => SpecError::new(
            at.clone(),
            format!("cannot read included job file `{}`: {e}", path.display()),
        ),
        None => SpecError::new(
            Location::File {
                path: path.to_path_buf(),
                line: 0,
            },
            format!("cannot read job file: {e}"),
        ),
    })?;
    let place = included_from.unwrap_or(Location::File {
        path: path.to_path_buf(),
        line: 0,
    });
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        let chain: Vec<String> = stack
            .iter()
            .chain(std::iter::once(&canonical))
            .map(|p| p.display().to_string())
            .collect();
        return Err(SpecError::new(
            place,
            format!("include loop: {}", chain.join(" -> ")),
        ));
    }
    stack.push(canonical);
    parse_lines(path, &text, stack, sections)?;
    stack.pop();
    Ok(())
}

/// Removes a trailing comment (`;` or `#` and everything after) and blanks.
fn strip_comment(line: &str) -> &str {
    let cut = line.find([';', '#']).unwrap_or(line.len());
    line[..cut].trim()
}

fn parse_lines(
    path: &Path,
    text: &str,
    stack: &mut Vec<PathBuf>,
    sections: &mut Vec<RawSection>,
) -> Result<(), SpecError> {
    // Sections read from this file; an include appends to the same list,
    // and the including file goes on adding to the last section it opened.
    let mut current: Option<usize> = None;
    for (i, raw_line) in text.lines().enumerate() {
        let location = Location::File {
            path: path.to_path_buf(),
            line: i + 1,
        };
        let line = strip_comment(raw_line);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(SpecError::new(
                    location,
                    format!("unterminated section header `{line}`: expected `]` at the end"),
                ));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(SpecError::new(location, "empty section name `[]`"));
            }
            if name.contains(['[', ']']) {
                return Err(SpecError::new(
                    location,
                    format!("section name `{name}` contains a bracket"),
                ));
            }
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
            read_into(&inc, Some(location), stack, sections)?;
            // Options after an include go on in the last section read.
            current = sections.len().checked_sub(1);
            continue;
        }
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
                            option.name
                        ),
                    ))
                }
            },
        }
    }
    Ok(())
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
