//! The output flags every command takes: `--output-format` as one enum of
//! every format iolab writes, and `--output FILE` (`-o`). The clap
//! commands flatten [`OutputArgs`]; `run` and `sweep`, whose command lines
//! are fio's, parse the same names through [`OutputFormat::parse`]. Which
//! formats a command or a result kind takes is said by that command or
//! kind; an unknown name is refused with the list.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use iolab_report::export::{DocFormat, Style};

/// A format of `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
pub enum OutputFormat {
    /// fio's human-readable report (runs); the table for other kinds
    Normal,
    /// fio's JSON (runs); the result's data for other kinds
    Json,
    /// fio's JSON with latency histogram bins (runs)
    #[value(name = "json+")]
    JsonPlus,
    /// fio's terse lines (runs)
    Terse,
    /// Aligned columns for a terminal
    Table,
    /// GitHub Markdown tables
    Markdown,
    /// CSV, one block per table
    Csv,
    /// One self-contained HTML page with charts
    Html,
    /// The stored record with its provenance, as JSON (show)
    Record,
}

/// The formats of the commands that print a result's table: quick,
/// compare, meta and sweep (normal is accepted as the table).
pub const TABLE_FORMATS: [OutputFormat; 5] = [
    OutputFormat::Table,
    OutputFormat::Markdown,
    OutputFormat::Csv,
    OutputFormat::Json,
    OutputFormat::Html,
];

impl OutputFormat {
    /// A format by its name, as clap parses `--output-format`.
    pub fn parse(name: &str) -> Result<OutputFormat, String> {
        <OutputFormat as ValueEnum>::from_str(name, false).map_err(|_| {
            let all: Vec<&str> = OutputFormat::value_variants()
                .iter()
                .map(|f| f.name())
                .collect();
            format!(
                "unknown output format '{name}' (expected {})",
                all.join(", ")
            )
        })
    }

    /// The document format of a table command's `--output-format`.
    pub fn table(self) -> Result<DocFormat, String> {
        match self.doc() {
            Some(d) if self != OutputFormat::Record => Ok(d),
            _ => Err(format!(
                "output format '{}' is one of a run's (this command writes {})",
                self.name(),
                TABLE_FORMATS.map(|f| f.name()).join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Normal => "normal",
            OutputFormat::Json => "json",
            OutputFormat::JsonPlus => "json+",
            OutputFormat::Terse => "terse",
            OutputFormat::Table => "table",
            OutputFormat::Markdown => "markdown",
            OutputFormat::Csv => "csv",
            OutputFormat::Html => "html",
            OutputFormat::Record => "record",
        }
    }

    /// The document format of a table-like format (normal is the table).
    pub fn doc(self) -> Option<DocFormat> {
        match self {
            OutputFormat::Normal | OutputFormat::Table => Some(DocFormat::Text),
            OutputFormat::Markdown => Some(DocFormat::Markdown),
            OutputFormat::Csv => Some(DocFormat::Csv),
            OutputFormat::Json => Some(DocFormat::Json),
            OutputFormat::Html => Some(DocFormat::Html),
            _ => None,
        }
    }
}

/// `--output-format` and `--output`.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Output format (see each command's help for the formats it takes);
    /// `--format` is the same flag
    #[arg(long, alias = "format", value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Write to FILE instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// The document format of a command that prints a table (table by
    /// default).
    pub fn table_format(&self) -> Result<DocFormat, String> {
        self.format_or(OutputFormat::Table)
            .table()
            .map_err(|e| format!("--output-format: {e}"))
    }

    /// The format asked for, or the command's default.
    pub fn format_or(&self, default: OutputFormat) -> OutputFormat {
        self.output_format.unwrap_or(default)
    }

    /// How text goes out: the terminal's width and colour when standard
    /// output is a terminal and no file was named, plain otherwise;
    /// NO_COLOR turns colour off.
    pub fn style(&self) -> Style {
        if self.output.is_some() {
            return Style::default();
        }
        terminal_style()
    }
}

/// The style of standard output: the terminal's width, and colour as
/// anstream decides it (a terminal, NO_COLOR unset, CLICOLOR and
/// CLICOLOR_FORCE honoured); plain text of any width elsewhere.
pub fn terminal_style() -> Style {
    use std::io::IsTerminal as _;
    let color = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    if !std::io::stdout().is_terminal() {
        return Style { width: None, color };
    }
    let width = console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| cols)
        .filter(|w| *w >= 40);
    Style { width, color }
}
