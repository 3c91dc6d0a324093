//! fio's command line: `[JOBFILE...] [--option=value...]`. Options before the
//! first `--name` are global, each `--name` starts a job, and job files mix
//! with options. Both `-option` and `--option` work (fio reads long options
//! with one dash too), `--option value` works for options that need a value,
//! and bare flags work. Program flags (`--output-format`, `--parse-only`, ...)
//! are told apart from job options by a table of their own.

use std::path::PathBuf;

use crate::error::{Location, SpecError};
use crate::options::{self, Kind};
use crate::raw::{RawOption, RawSection};

/// Whether a program flag takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    None,
    Optional,
    Required,
}

/// A flag of the program itself rather than of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramFlag {
    pub name: &'static str,
    pub arity: Arity,
    pub help: &'static str,
    /// fio has this flag but iolab does not implement it.
    pub fio_only: bool,
}

const fn flag(name: &'static str, arity: Arity, help: &'static str) -> ProgramFlag {
    ProgramFlag {
        name,
        arity,
        help,
        fio_only: false,
    }
}

const fn fio_flag(name: &'static str, arity: Arity) -> ProgramFlag {
    ProgramFlag {
        name,
        arity,
        help: "",
        fio_only: true,
    }
}

/// The program flags of `iolab run`, fio's where they share a name.
/// Flags the program shares with its other subcommands (where a result
/// is kept) are declared by the program and given to [`parse_args_with`].
pub static PROGRAM_FLAGS: &[ProgramFlag] = &[
    flag(
        "output",
        Arity::Required,
        "Write the report to this file instead of stdout",
    ),
    flag(
        "output-format",
        Arity::Required,
        "Report format: normal, json, json+, terse (comma list allowed)",
    ),
    flag(
        "parse-only",
        Arity::None,
        "Print the resolved jobs in job-file syntax and exit",
    ),
    flag(
        "cmdhelp",
        Arity::Optional,
        "Show help for one option, or all options",
    ),
    flag(
        "eta",
        Arity::Required,
        "When to show the status line: always, never, auto",
    ),
    flag(
        "eta-newline",
        Arity::Required,
        "Start a new status line every this many seconds",
    ),
    flag(
        "eta-interval",
        Arity::Required,
        "Refresh the status line this often",
    ),
    flag("terse-version", Arity::Required, "Terse output version (3)"),
    flag("minimal", Arity::None, "Same as --output-format=terse"),
    flag(
        "section",
        Arity::Required,
        "Run only this job section (repeatable)",
    ),
    flag(
        "warnings",
        Arity::Required,
        "Where plan warnings go besides the report: auto, stderr, report",
    ),
    flag(
        "version",
        Arity::None,
        "Print the version in fio's form, iolab's after it, and exit",
    ),
    flag(
        "repeat",
        Arity::Required,
        "Run the job set this many times (or `auto`) and summarize the spread",
    ),
    flag(
        "repeat-width",
        Arity::Required,
        "With --repeat=auto: the 95% interval's half-width to reach (default 5%)",
    ),
    flag(
        "repeat-max",
        Arity::Required,
        "With --repeat=auto: at most this many runs (default 10)",
    ),
    flag(
        "repeat-time",
        Arity::Required,
        "With --repeat=auto: start no run that would end after this time",
    ),
    flag(
        "mpi-stonewall",
        Arity::None,
        "Under MPI: each phase ends for every rank when the first finishes it",
    ),
    flag(
        "aux-path",
        Arity::Required,
        "Directory for the files a run writes beside its report (verify dumps)",
    ),
    flag("help", Arity::None, "Show usage of `iolab run`"),
    fio_flag("server", Arity::Optional),
    fio_flag("client", Arity::Required),
    fio_flag("daemonize", Arity::Required),
    fio_flag("remote-config", Arity::Required),
    fio_flag("debug", Arity::Required),
    fio_flag("showcmd", Arity::None),
    fio_flag("readonly", Arity::None),
    fio_flag("alloc-size", Arity::Required),
    fio_flag("crctest", Arity::Optional),
    fio_flag("idle-prof", Arity::Required),
    fio_flag("inflate-log", Arity::Required),
    fio_flag("trigger-file", Arity::Required),
    fio_flag("trigger-timeout", Arity::Required),
    fio_flag("trigger", Arity::Required),
    fio_flag("trigger-remote", Arity::Required),
    fio_flag("status-interval", Arity::Required),
    fio_flag("append-terse", Arity::None),
    fio_flag("bandwidth-log", Arity::None),
    fio_flag("latency-log", Arity::None),
    fio_flag("warnings-fatal", Arity::None),
    fio_flag("max-jobs", Arity::Required),
    fio_flag("enghelp", Arity::Optional),
    fio_flag("merge-blktrace-only", Arity::None),
];

/// One program flag as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagUse {
    pub name: &'static str,
    pub value: Option<String>,
    pub location: Location,
}

/// A command line split into its parts, still untyped.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CmdLine {
    pub flags: Vec<FlagUse>,
    pub job_files: Vec<PathBuf>,
    /// Options given before the first `--name`.
    pub global: Vec<RawOption>,
    /// One section per `--name`.
    pub jobs: Vec<RawSection>,
}

impl CmdLine {
    /// The last value given for a flag (`Some(None)` for a bare flag).
    pub fn flag(&self, name: &str) -> Option<Option<&str>> {
        self.flags
            .iter()
            .rev()
            .find(|f| f.name == name)
            .map(|f| f.value.as_deref())
    }

    /// Every value given for a repeatable flag.
    pub fn flag_values(&self, name: &str) -> Vec<&str> {
        self.flags
            .iter()
            .filter(|f| f.name == name)
            .filter_map(|f| f.value.as_deref())
            .collect()
    }
}

fn program_flag<'a>(name: &str, extra: &'a [ProgramFlag]) -> Option<&'a ProgramFlag> {
    PROGRAM_FLAGS.iter().chain(extra).find(|f| f.name == name)
}

/// Splits `args` (everything after `iolab run`) into flags, job files and
/// job options.
pub fn parse_args(args: &[String]) -> Result<CmdLine, SpecError> {
    parse_args_with(args, &[])
}

/// [`parse_args`] with program flags of the caller's besides
/// [`PROGRAM_FLAGS`].
pub fn parse_args_with(args: &[String], extra: &[ProgramFlag]) -> Result<CmdLine, SpecError> {
    let mut out = CmdLine::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let location = Location::Arg {
            index: i + 1,
            text: arg.clone(),
        };
        i += 1;
        let body = match arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) {
            Some(b) if !b.is_empty() => b,
            _ => {
                if arg == "-" || arg == "--" {
                    return Err(SpecError::new(
                        location,
                        "a bare dash is not an option or a job file",
                    ));
                }
                out.job_files.push(PathBuf::from(arg));
                continue;
            }
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };

        if let Some(pf) = program_flag(name, extra) {
            if pf.fio_only {
                return Err(SpecError::new(
                    location,
                    format!("`--{name}` is a fio flag that iolab does not implement"),
                ));
            }
            let value = match (pf.arity, inline) {
                (Arity::None, Some(_)) => {
                    return Err(SpecError::new(
                        location,
                        format!("`--{name}` takes no value"),
                    ))
                }
                (Arity::Required, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(SpecError::new(
                            location,
                            format!("`--{name}` needs a value"),
                        ))
                    }
                },
                (_, v) => v,
            };
            out.flags.push(FlagUse {
                name: pf.name,
                value,
                location,
            });
            continue;
        }

        // A job option. Its value may be the next argument when the option
        // cannot stand bare (fio's `--bs 4k`).
        let value = match inline {
            Some(v) => Some(v),
            None => {
                let needs_value = options::lookup(name)
                    .map(|o| !o.def().kind.bare_allowed())
                    .unwrap_or(false);
                match args.get(i) {
                    Some(next) if needs_value && !next.starts_with('-') => {
                        i += 1;
                        Some(next.clone())
                    }
                    _ => None,
                }
            }
        };
        let option = RawOption {
            name: name.to_string(),
            value,
            location: location.clone(),
        };
        if option.name == "name" {
            let job_name = match &option.value {
                Some(v) if !v.trim().is_empty() => v.trim().to_string(),
                _ => return Err(SpecError::new(location, "`--name` needs a job name")),
            };
            out.jobs.push(RawSection {
                name: job_name,
                location,
                options: vec![option],
            });
        } else if let Some(job) = out.jobs.last_mut() {
            job.options.push(option);
        } else {
            out.global.push(option);
        }
    }
    Ok(out)
}

/// Whether an option kind can be given bare on the command line.
pub fn takes_bare(kind: Kind) -> bool {
    kind.bare_allowed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_before_name_are_global_and_each_name_starts_a_job() {
        let c = parse_args(&args(
            "--size=1m -rw=read --name=a --bs 8k -direct=1 --name=b -group_reporting",
        ))
        .unwrap();
        let g: Vec<_> = c.global.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(g, ["size", "rw"]);
        assert_eq!(c.jobs.len(), 2);
        assert_eq!(c.jobs[0].name, "a");
        let a: Vec<_> = c.jobs[0]
            .options
            .iter()
            .map(|o| (o.name.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            a,
            [
                ("name", Some("a")),
                ("bs", Some("8k")),
                ("direct", Some("1"))
            ]
        );
        assert_eq!(c.jobs[1].options[1].name, "group_reporting");
        assert_eq!(c.jobs[1].options[1].value, None);
    }

    #[test]
    fn job_files_and_flags_mix_with_options() {
        let c = parse_args(&args(
            "one.fio --output-format=json,normal --parse-only two.fio --output out.txt --rw=write",
        ))
        .unwrap();
        assert_eq!(
            c.job_files,
            [PathBuf::from("one.fio"), PathBuf::from("two.fio")]
        );
        assert_eq!(c.flag("output-format"), Some(Some("json,normal")));
        assert_eq!(c.flag("parse-only"), Some(None));
        assert_eq!(c.flag("output"), Some(Some("out.txt")));
        assert_eq!(c.global[0].name, "rw");
    }

    #[test]
    fn a_bare_bool_does_not_swallow_the_next_argument() {
        let c = parse_args(&args("--name=x --time_based job.fio")).unwrap();
        assert_eq!(c.jobs[0].options[1].value, None);
        assert_eq!(c.job_files, [PathBuf::from("job.fio")]);
    }

    #[test]
    fn fio_only_and_malformed_flags() {
        let e = parse_args(&args("--server")).unwrap_err();
        assert!(
            e.message.contains("fio flag that iolab does not implement"),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("command line argument 1 `--server`"),
            "{e}"
        );
        let e = parse_args(&args("--output")).unwrap_err();
        assert!(e.message.contains("needs a value"), "{e}");
        let e = parse_args(&args("--parse-only=1")).unwrap_err();
        assert!(e.message.contains("takes no value"), "{e}");
        let e = parse_args(&args("--name=")).unwrap_err();
        assert!(e.message.contains("needs a job name"), "{e}");
    }
}
