//! `iolab run`: fio's command line, job files, `--parse-only` and
//! `--cmdhelp`.

use std::io::Write;

use anyhow::{Context as _, Result};
use iolab_spec::{cmdline, help, resolve, Context, Host, SpecError};

use crate::exit::Status;

const USAGE: &str = "\
usage: iolab run [JOBFILE...] [--option=value...] [--name=JOB --option=value...]

Runs fio job files and fio command-line jobs. Options before the first
--name apply to every job; each --name starts a job. `-option` and
`--option` both work.

Run flags:
  --output-format=FMT   normal, json, json+, terse (comma list prints each)
  --output=FILE         write the report to FILE
  --parse-only          print the resolved jobs in job-file syntax and exit
  --cmdhelp[=OPTION]    list the job options, or describe one
  --section=NAME        run only this job section (repeatable)
";

const FORMATS: [&str; 4] = ["normal", "json", "json+", "terse"];

pub fn run(args: &[String]) -> Result<Status> {
    let cmd = match cmdline::parse_args(args) {
        Ok(c) => c,
        Err(e) => return Ok(bad_input(&e)),
    };
    if cmd.flag("help").is_some() {
        print!("{USAGE}");
        return Ok(Status::Success);
    }
    if let Some(which) = cmd.flag("cmdhelp") {
        return match help::cmdhelp(which) {
            Ok(text) => {
                print!("{text}");
                Ok(Status::Success)
            }
            Err(e) => Ok(bad_input(&e)),
        };
    }
    if let Some(Some(formats)) = cmd.flag("output-format") {
        for f in formats.split(',') {
            if !FORMATS.contains(&f.trim()) {
                eprintln!(
                    "iolab: --output-format: unknown format `{f}`; valid formats: {}",
                    FORMATS.join(", ")
                );
                return Ok(Status::BadInput);
            }
        }
    }

    let ctx = Context::from_env(host());
    let jobs = match resolve::load(&cmd, &ctx) {
        Ok(j) => j,
        Err(e) => return Ok(bad_input(&e)),
    };

    if cmd.flag("parse-only").is_some() {
        let text = jobs.to_job_text();
        match cmd.flag("output") {
            Some(Some(path)) => std::fs::write(path, text)
                .with_context(|| format!("cannot write --output file `{path}`"))?,
            _ => std::io::stdout().write_all(text.as_bytes())?,
        }
        return Ok(Status::Success);
    }

    anyhow::bail!(
        "this build parses jobs but does not run them yet; `--parse-only` shows the resolved jobs"
    )
}

fn bad_input(e: &SpecError) -> Status {
    eprintln!("iolab: {e}");
    Status::BadInput
}

fn host() -> Host {
    Host {
        page_size: iolab_engine::host::page_size(),
        mb_memory: iolab_engine::host::physical_memory() >> 20,
        ncpus: iolab_engine::host::online_cpus(),
    }
}
