//! From raw sections to typed jobs: `[global]` inheritance (several globals
//! allowed, each applying to the jobs after it), command-line globals as the
//! base of every job, variable and keyword substitution, option lookup with
//! typo suggestions, `kb_base` applied before any size is read, and values
//! typed by the option table.

use std::path::{Path, PathBuf};

use crate::cmdline::CmdLine;
use crate::context::{expand_as, Context};
use crate::error::{clip, Location, SpecError};
use crate::jobfile;
use crate::jobspec::{JobSet, JobSpec};
use crate::kinds::{format_value, parse_value};
use crate::options::{self, Kind, Opt, Store};
use crate::raw::{RawOption, RawSection};
use crate::value::{KbBase, Value};

/// Where the jobs of a run come from.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Options before the first `--name`: defaults for every job.
    pub global: Vec<RawOption>,
    /// Jobs given on the command line, in order.
    pub cmd_jobs: Vec<RawSection>,
    /// Job files, each already read into sections.
    pub files: Vec<(PathBuf, Vec<RawSection>)>,
    /// `--section NAME`: only these job sections of the files run.
    pub only_sections: Vec<String>,
}

/// Reads the job files a command line names and resolves all its jobs.
pub fn load(cmd: &CmdLine, ctx: &Context) -> Result<JobSet, SpecError> {
    let mut files = Vec::new();
    let mut reader = jobfile::Reader::new();
    for path in &cmd.job_files {
        files.push((path.clone(), reader.read_job_file(path)?));
    }
    let sources = Sources {
        global: cmd.global.clone(),
        cmd_jobs: cmd.jobs.clone(),
        files,
        only_sections: cmd
            .flag_values("section")
            .into_iter()
            .map(String::from)
            .collect(),
    };
    let mut set = resolve(&sources, ctx)?;
    set.aux_path = cmd.flag("aux-path").flatten().map(PathBuf::from);
    Ok(set)
}

/// Parses job-file text (for built-in suites and tests).
pub fn parse_text(name: &str, text: &str, ctx: &Context) -> Result<JobSet, SpecError> {
    let sections = jobfile::parse_job_text(Path::new(name), text)?;
    resolve_sections(name, sections, ctx)
}

/// Resolves sections iolab built itself (a built-in suite's jobs) as one
/// job file named `name`: typed values, no text to parse back.
pub fn resolve_sections(
    name: &str,
    sections: Vec<RawSection>,
    ctx: &Context,
) -> Result<JobSet, SpecError> {
    resolve(
        &Sources {
            files: vec![(PathBuf::from(name), sections)],
            ..Sources::default()
        },
        ctx,
    )
}

/// Turns raw sections into typed jobs, in fio's order: command-line jobs
/// first, then the jobs of each file.
pub fn resolve(src: &Sources, ctx: &Context) -> Result<JobSet, SpecError> {
    let given: Vec<&RawOption> = src.global.iter().collect();
    check_section("global", &Location::Builtin, &given, ctx)?;
    let mut base = keep_last(&given);
    let mut jobs = Vec::new();
    let mut global_echo = echo(&src.global, false, ctx);

    // `--name=global` on the command line adds to the global options.
    let mut cmd_jobs = Vec::new();
    for job in &src.cmd_jobs {
        if job.is_global() {
            let all: Vec<&RawOption> = base.iter().chain(job.options.iter().skip(1)).collect();
            base = keep_last(&all);
            global_echo.extend(echo(job.options.get(1..).unwrap_or(&[]), false, ctx));
        } else {
            cmd_jobs.push(job);
        }
    }
    for job in cmd_jobs {
        let opts: Vec<&RawOption> = base.iter().chain(job.options.iter()).collect();
        let mut built = build_job(&job.name, &job.location, &opts, base.len(), ctx)?;
        built.echo = echo(&job.options, false, ctx);
        // `--name` both starts the job and names it: its files take the
        // name as substituted.
        built.section = built.name.clone();
        jobs.push(built);
    }

    for (_, sections) in &src.files {
        let mut global = base.clone();
        for section in sections {
            if section.is_global() {
                let all: Vec<&RawOption> = global.iter().chain(&section.options).collect();
                check_section("global", &section.location, &all, ctx)?;
                global = keep_last(&all);
                global_echo.extend(echo(&section.options, true, ctx));
                continue;
            }
            let opts: Vec<&RawOption> = global.iter().chain(section.options.iter()).collect();
            let mut job = build_job(&section.name, &section.location, &opts, global.len(), ctx)?;
            job.echo = echo(&section.options, true, ctx);
            if src.only_sections.is_empty() || src.only_sections.contains(&section.name) {
                jobs.push(job);
            }
        }
    }

    for name in &src.only_sections {
        if !jobs.iter().any(|j| &j.section == name) {
            return Err(SpecError::new(
                Location::Builtin,
                format!("--section `{name}`: no job section has that name"),
            ));
        }
    }
    if jobs.is_empty() {
        return Err(SpecError::new(
            Location::Builtin,
            "no jobs defined: give a job file (`iolab run job.fio`) or a job's options \
             (`iolab run --name=JOB --filename=PATH --rw=read --size=1g`); `iolab run --help` \
             says more",
        ));
    }
    Ok(JobSet {
        jobs,
        global_echo,
        aux_path: None,
    })
}

/// Options as fio echoes them in its JSON ("job options", "global
/// options"): each option by its own name (an alias gives the option it
/// stands for: `timeout=60` is `runtime`), with its value as written after
/// variable substitution (`8MB` stays `8MB`); a bare flag has an empty
/// value, which the JSON leaves out (fio keeps the object, empty if it has
/// nothing else, and writes no entry for the flag).
/// A job-file section's options are in the order fio parses them
/// (`sorted`): `kb_base` and `unit_base` first, `filename`
/// last, the others as written; a command line's are as given. The
/// options were checked before; a name that is not an option is left out.
fn echo(opts: &[RawOption], sorted: bool, ctx: &Context) -> Vec<(String, String)> {
    let mut out: Vec<(i8, String, String)> = opts
        .iter()
        .filter_map(|raw| {
            let opt = options::lookup(&raw.name)?;
            let value = match &raw.value {
                Some(written) => expand_as(written, ctx, numeric_kind(opt.def().kind))
                    .map_or_else(|_| written.clone(), |e| e.text),
                None => String::new(),
            };
            Some((echo_priority(opt), opt.name().to_string(), value))
        })
        .collect();
    if sorted {
        // Stable: options of the same priority keep their order.
        out.sort_by_key(|(prio, _, _)| std::cmp::Reverse(*prio));
    }
    out.into_iter().map(|(_, n, v)| (n, v)).collect()
}

/// fio parses a section's options by priority: these before the others,
/// `filename` after them (it needs `directory`).
fn echo_priority(opt: Opt) -> i8 {
    match opt.name() {
        "kb_base" | "unit_base" => 1,
        "filename" => -1,
        _ => 0,
    }
}

/// Checks a `[global]` section on its own, so that a bad global option is
/// reported at its line even when no job follows it.
fn check_section(
    name: &str,
    location: &Location,
    opts: &[&RawOption],
    ctx: &Context,
) -> Result<(), SpecError> {
    build_job(name, location, opts, opts.len(), ctx).map(|_| ())
}

/// The options without each one that a later one of the same name sets
/// again, in their order. A job reads its inherited options with every
/// value of an option overwriting the one before, so this changes no job;
/// it keeps the inherited list at one entry per option however many
/// `[global]` lines there are, and the work per job bounded. The options
/// were checked before (unknown names are kept as they are).
fn keep_last(opts: &[&RawOption]) -> Vec<RawOption> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<RawOption> = opts
        .iter()
        .rev()
        .filter(|o| match options::lookup(&o.name) {
            Some(opt) => seen.insert(opt),
            None => true,
        })
        .map(|o| (*o).clone())
        .collect();
    kept.reverse();
    kept
}

/// Why a value's job-file spelling would not read back as the same value,
/// if it would not: fio's job files have no way to write these.
fn unprintable(printed: &str) -> Option<String> {
    let why = if printed.contains('\n') {
        "a line break, which ends a line of a job file"
    } else if printed.contains(';') {
        "`;`, which starts a comment in a job file"
    } else if printed.contains('#') {
        "`#`, which starts a comment in a job file"
    } else if printed.contains("${") {
        "`${`, which a job file reads as a variable"
    } else if crate::context::KEYWORDS.iter().any(|k| printed.contains(k)) {
        "a `$` keyword, which a job file replaces with a number"
    } else {
        return None;
    };
    Some(format!(
        "the value holds {why}; fio's job-file syntax cannot carry it, so the job could \
         not be printed (--parse-only) or kept as job text"
    ))
}

/// Why a job name cannot be a job file's section header, if it cannot.
fn unprintable_name(name: &str) -> Option<String> {
    let why = if name.trim() != name {
        "spaces at its ends, which a section header drops".to_string()
    } else if name == "global" {
        "the name `global`, which is the section of defaults".to_string()
    } else if name.contains(['[', ']']) {
        "a bracket, which a section header cannot hold".to_string()
    } else {
        match unprintable(name) {
            Some(_) if name.contains('\n') => "a line break".to_string(),
            Some(_) => "a character a section header cannot hold (`;`, `#` or `$`)".to_string(),
            None => return None,
        }
    };
    Some(format!(
        "job name `{}` has {why}; fio's job-file syntax cannot carry it, so the job could not \
         be printed (--parse-only) or kept as job text",
        clip(name)
    ))
}

/// Looks up an option name, with the error fio users need: a typo gets the
/// closest name, a fio option iolab lacks is named as such.
pub fn find_option(raw: &RawOption) -> Result<Opt, SpecError> {
    if let Some(opt) = options::lookup(&raw.name) {
        return Ok(opt);
    }
    let message = if raw.name.is_empty() {
        "empty option name".to_string()
    } else if options::is_fio_only(&raw.name) {
        format!(
            "option `{}` is a fio option that iolab does not implement",
            clip(&raw.name)
        )
    } else if let Some(s) = options::suggest(&raw.name) {
        format!("unknown option `{}` (did you mean `{s}`?)", clip(&raw.name))
    } else {
        format!(
            "unknown option `{}` (`iolab run --cmdhelp` lists the options)",
            clip(&raw.name)
        )
    };
    Err(SpecError::new(raw.location.clone(), message))
}

/// Types a job's options: `opts` are the inherited ones (the first
/// `n_global`) followed by the job's own, later ones overriding earlier.
fn build_job(
    name: &str,
    location: &Location,
    opts: &[&RawOption],
    n_global: usize,
    ctx: &Context,
) -> Result<JobSpec, SpecError> {
    // Look up every name and substitute every value first.
    let mut typed: Vec<(Opt, Option<String>, &RawOption)> = Vec::with_capacity(opts.len());
    for raw in opts {
        let opt = find_option(raw)?;
        let value = match &raw.value {
            Some(v) => Some(
                expand_as(v, ctx, numeric_kind(opt.def().kind))
                    .map_err(|e| SpecError::new(raw.location.clone(), e.0))?
                    .text,
            ),
            None => None,
        };
        typed.push((opt, value, raw));
    }

    // kb_base decides how every size is read, wherever it is written.
    let mut kb = KbBase::K1024;
    for (opt, value, raw) in &typed {
        if *opt == Opt::KbBase {
            kb = match parse_value(opt.def(), value.as_deref(), KbBase::K1024) {
                Ok(Value::Choice("1000")) => KbBase::K1000,
                Ok(_) => KbBase::K1024,
                Err(e) => return Err(value_error(raw, e.0)),
            };
        }
    }

    let mut job = JobSpec::new(name, location.clone());
    for (i, (opt, value, raw)) in typed.into_iter().enumerate() {
        let def = opt.def();
        let parsed = parse_value(def, value.as_deref(), kb).map_err(|e| value_error(raw, e.0))?;
        if let Some(why) = unprintable(&format_value(def, &parsed, kb)) {
            return Err(value_error(raw, why));
        }
        let origin = raw.location.clone();
        let (target, v) = match (def.store, parsed) {
            (Store::Inverse(target), Value::Bool(b)) => (target, Value::Bool(!b)),
            (Store::Complement100(target), Value::Int(n)) => (target, Value::Int(100 - n)),
            (_, v) => (opt, v),
        };
        job.set(target, v, origin);
        job.set_inherited(target, i < n_global);
    }
    // `name=` in the job's own section renames the job; it is the job's
    // name, not one of its values. A `name=` in `[global]` names no job:
    // each keeps its section's name, as in fio.
    let mut name_at = location;
    let own_name = !job.is_inherited(Opt::Name);
    if let (Some(Value::Str(n)), true) = (job.take(Opt::Name), own_name) {
        if !n.is_empty() {
            name_at = opts
                .iter()
                .rev()
                .find(|o| options::lookup(&o.name) == Some(Opt::Name))
                .map_or(location, |o| &o.location);
            job.name = n;
        }
    }
    // `[global]` is checked as a job of that name; it is never printed.
    let is_defaults = n_global == opts.len() && name == "global";
    if let (false, Some(why)) = (is_defaults, unprintable_name(&job.name)) {
        return Err(SpecError::new(name_at.clone(), why));
    }
    // A section header from a job file is printable as it was read; one
    // from `--name` is the name itself.
    let from_file = matches!(location, Location::File { .. });
    if let (false, true, Some(why)) = (
        is_defaults,
        from_file && job.section != job.name,
        unprintable_name(&job.section),
    ) {
        return Err(SpecError::new(location.clone(), why));
    }
    Ok(job)
}

fn value_error(raw: &RawOption, msg: String) -> SpecError {
    let shown = match &raw.value {
        Some(v) => clip(&format!("{}={v}", raw.name)),
        None => clip(&raw.name),
    };
    SpecError::new(raw.location.clone(), format!("`{shown}`: {msg}"))
}

/// Whether a keyword in a value of this kind may stand in arithmetic
/// (file names, directories and other text take it as written).
fn numeric_kind(kind: Kind) -> bool {
    !matches!(kind, Kind::Str | Kind::OptStr | Kind::Files)
}
