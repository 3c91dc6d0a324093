//! The `iolab` binary: argument parsing, terminal output and exit codes.
//! Everything else lives in the library crates.

mod exit;
mod run;
mod status;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Storage and filesystem benchmark for Linux that speaks fio's job language.
#[derive(Parser, Debug)]
#[command(name = "iolab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run fio job files and fio command-line jobs:
    /// `iolab run [JOBFILE...] [--option=value...]`.
    /// `--parse-only` prints the resolved jobs; `--cmdhelp[=OPTION]` lists options.
    #[command(disable_help_flag = true)]
    Run {
        /// Job files, fio job options (`--bs=4k`, `-rw=randread`, `--name=job`)
        /// and run flags (`--output-format`, `--output`, `--parse-only`, `--cmdhelp`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Run { args }) => run::run(&args),
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            Ok(exit::Status::Success)
        }
    };
    match outcome {
        Ok(status) => status.into(),
        Err(err) => {
            eprintln!("iolab: {err:#}");
            exit::Status::Failed.into()
        }
    }
}
