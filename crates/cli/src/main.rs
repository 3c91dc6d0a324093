//! The `iolab` binary: argument parsing, terminal output and exit codes.
//! Everything else lives in the library crates.
#![forbid(unsafe_code)]

mod compare;
mod diff;
mod exit;
mod export;
mod history;
mod import;
mod interrupt;
mod keep;
mod kinds;
mod manual;
mod meta;
#[cfg(feature = "mpi")]
mod mpi;
mod outargs;
mod output;
mod progress;
mod quick;
mod readback;
mod repeat;
mod report;
mod rerun;
mod run;
mod show;
mod status;
mod sweep;
mod units;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// Storage and filesystem benchmark for Linux that speaks fio's job language.
///
/// A bare `iolab` prints this help and exits with status 2 (a command
/// line without a command); it never starts a measurement. `iolab quick`
/// runs the quick suite on the current directory.
#[derive(Parser, Debug)]
#[command(name = "iolab", version, about, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run fio job files and fio command-line jobs:
    /// `iolab run [JOBFILE...] [--option=value...]`.
    /// `--parse-only` prints the resolved jobs; `--cmdhelp[=OPTION]` lists options.
    #[command(disable_help_flag = true, override_help = run::usage())]
    Run {
        /// Job files, fio job options (`--bs=4k`, `-rw=randread`, `--name=job`)
        /// and run flags (`--output-format`, `--output`, `--parse-only`, `--cmdhelp`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Format, mount and benchmark filesystems side by side:
    /// `iolab compare --fs ext4,xfs,btrfs` or `--target A=DIR --target B=DIR`.
    Compare(compare::CompareArgs),
    /// The quick suite on the filesystem of DIR (default: the current
    /// directory): sequential and random reads and writes, 4k write+fsync;
    /// a table of MB/s, IOPS and latency, kept in the results database;
    /// `--profile cdm` or `cdm-nvme` runs CrystalDiskMark 8's tests.
    Quick(quick::QuickArgs),
    /// Metadata benchmark in DIR: create, open, utime, stat, readdir,
    /// rename and unlink --files N files (one directory or a tree); a
    /// table of total ms, ms per operation, ops/s and latency percentiles.
    Meta(meta::MetaArgs),
    /// A base job run over a grid of option values:
    /// `iolab sweep [JOBFILE...] [--option=value...] --bs 4k..1m --rw read,write`.
    /// `iolab sweep --help` lists the grid flags.
    #[command(disable_help_flag = true, override_help = sweep::usage())]
    Sweep {
        /// Job files, fio job options and grid flags.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Stored results, newest first (filters: --kind, --tag, --fs,
    /// --target, --since).
    History(history::HistoryArgs),
    /// One stored result re-rendered (`--output-format normal|json|json+|terse`
    /// for runs, table formats for the others, `html` for a page with
    /// charts, `record` for everything).
    Show(show::ShowArgs),
    /// Stored results for other tools: `--output-format json|csv|markdown`
    /// (default json; `--format` is the same flag).
    Export(export::ExportArgs),
    /// Stored results as one self-contained HTML page with charts:
    /// `iolab report ID... -o report.html`; several results side by side.
    Report(report::ReportArgs),
    /// Two stored results side by side: values, ratio, and whether each
    /// difference is significant or within noise.
    Diff(diff::DiffArgs),
    /// A stored run or quick result's job file run again, as `iolab run`
    /// runs it: `iolab rerun ID [RUN FLAGS...]`.
    Rerun(rerun::RerunArgs),
    /// The shell completion script for bash, zsh or fish, on stdout:
    /// `iolab completions bash > /etc/bash_completion.d/iolab`.
    Completions {
        /// bash, zsh, fish, elvish or powershell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The man page iolab(1) on stdout, or with --dir every page
    /// (iolab.1, iolab-run.1, ...) written into DIR.
    Man {
        /// Write iolab.1 and one iolab-SUB.1 per subcommand here
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Stores a result a command could not store (the
    /// `*.unstored-*.json` file it wrote beside the database).
    Import(import::ImportArgs),
}

/// Whether the program was started as `fio` (a symlink or a copy named
/// so): then it is `iolab run` with the whole command line, so that tools
/// that drive fio drive iolab unchanged.
fn started_as_fio() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == "fio"))
        .unwrap_or(false)
}

fn main() -> ExitCode {
    if started_as_fio() {
        keep::silence();
        let args: Result<Vec<String>, _> = std::env::args_os()
            .skip(1)
            .map(|a| a.into_string())
            .collect();
        let outcome = match args {
            Ok(args) => run::run(&args),
            Err(bad) => {
                eprintln!(
                    "iolab: command line argument `{}` is not valid UTF-8",
                    iolab_spec::error::clip(&bad.to_string_lossy())
                );
                return exit::Status::BadInput.into();
            }
        };
        return finish(outcome);
    }
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run { args } => run::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Quick(args) => quick::run(&args),
        Command::Meta(args) => meta::run(&args),
        Command::Sweep { args } => sweep::run(&args),
        Command::History(args) => history::run(&args),
        Command::Show(args) => show::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Rerun(args) => rerun::run(&args),
        Command::Completions { shell } => manual::completions(Cli::command(), shell),
        Command::Man { dir } => manual::man(Cli::command(), dir.as_deref()),
    };
    finish(outcome)
}

/// The exit status of a command's outcome, its error printed.
fn finish(outcome: anyhow::Result<exit::Status>) -> ExitCode {
    match outcome {
        Ok(status) => status.into(),
        // The reader of standard output has gone (`iolab show 3 | head`):
        // nothing is left to say to it.
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        // A results database that cannot be used or read (damaged, of a
        // newer schema) is refused as a bad command line, as every
        // command refuses it before it measures.
        Err(err) if err.chain().any(|e| e.is::<iolab_store::StoreError>()) => {
            eprintln!("iolab: {}", said_once(&err));
            exit::Status::BadInput.into()
        }
        Err(err) => {
            eprintln!("iolab: {}", said_once(&err));
            exit::Status::Failed.into()
        }
    }
}

/// An error and its causes, each said once: an error whose message
/// already ends with its cause's ("`f`: Input/output error (os error
/// 5)") is not followed by the cause again, as anyhow's `{:#}` does.
pub(crate) fn said_once(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod said_once_tests {
    use super::said_once;

    #[derive(Debug)]
    struct Failed {
        source: std::io::Error,
    }

    impl std::fmt::Display for Failed {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "write `f`: {}", self.source)
        }
    }

    impl std::error::Error for Failed {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(5);
        let text = io.to_string();
        let err = anyhow::Error::new(Failed { source: io }).context("run");
        assert_eq!(said_once(&err), format!("run: write `f`: {text}"));
        assert_eq!(said_once(&anyhow::anyhow!("plain")), "plain");
    }
}
