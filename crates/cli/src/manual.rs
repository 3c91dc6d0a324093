//! Shell completions (`iolab completions bash|zsh|fish`) and man pages
//! (`iolab man`), generated from the same clap definitions that `--help`
//! prints. `run` and `sweep` take fio's job options, which clap does not
//! parse for them: for the completions and man pages only, their commands
//! get one `--OPTION` per entry of iolab's option table (with its
//! description), and their own help text as the page's extra section.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context as _, Result};
use clap::{Arg, ArgAction, Command};
use clap_complete::Shell;
use iolab_spec::options::OPTIONS;

use crate::exit::Status;

/// `cli` as completions and man pages see it: `run` and `sweep` with
/// fio's options as arguments.
pub fn documented(cli: Command) -> Command {
    cli.mut_subcommand("run", |c| with_fio_options(c, crate::run::usage()))
        .mut_subcommand("sweep", |c| with_fio_options(c, crate::sweep::usage()))
}

fn with_fio_options(cmd: Command, usage: String) -> Command {
    let mut cmd = cmd.after_long_help(usage);
    for def in OPTIONS {
        let mut arg = Arg::new(def.name)
            .long(def.name)
            .value_name("VALUE")
            .num_args(0..=1)
            .require_equals(true)
            .action(ArgAction::Append)
            .help(def.help);
        if !def.aliases.is_empty() {
            arg = arg.visible_aliases(def.aliases.iter().copied());
        }
        cmd = cmd.arg(arg);
    }
    cmd
}

/// Writes the completion script for `shell` to stdout.
pub fn completions(cli: Command, shell: Shell) -> Result<Status> {
    let mut cmd = documented(cli);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iolab", &mut out);
    crate::output::emit(None, &String::from_utf8_lossy(&out))?;
    Ok(Status::Success)
}

/// The man pages: iolab(1) on stdout, or with `dir` iolab.1 and one
/// iolab-SUB.1 per subcommand written there (new files only).
pub fn man(cli: Command, dir: Option<&Path>) -> Result<Status> {
    let cmd = documented(cli);
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        crate::output::emit(None, &String::from_utf8_lossy(&out))?;
        return Ok(Status::Success);
    };
    if !dir.is_dir() {
        eprintln!("iolab man: `{}` is not a directory", dir.display());
        return Ok(Status::BadInput);
    }
    let mut pages = vec![("iolab".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        // A page's name lives as long as the command (the program ends
        // right after).
        let name: &'static str = Box::leak(format!("iolab-{}", sub.get_name()).into_boxed_str());
        pages.push((name.to_string(), sub.clone().name(name)));
    }
    for (name, page) in pages {
        let mut text = Vec::new();
        clap_mangen::Man::new(page).render(&mut text)?;
        let path = dir.join(format!("{name}.1"));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("cannot create `{}`", path.display()))?;
        f.write_all(&text)?;
    }
    Ok(Status::Success)
}
