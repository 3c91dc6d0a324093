//! Renderers: a `RunResult` in, bytes out. fio's normal text, terse, JSON and
//! json+, comparison tables and the HTML report.
//!
//! The fio formats reproduce fio 3.33's output for the same numbers: the
//! same lines, keys, fields, units and number formatting, so that parsers
//! written for fio read iolab's output. What only iolab knows goes under an
//! `"iolab"` key (JSON) and nowhere in the text formats. Facts about the
//! run that are not results (iolab's version, kb_base, the time zone) come
//! in [`RenderOpts`]; nothing here reads the environment.
#![forbid(unsafe_code)]

mod calc;
pub mod compare;
pub mod doc;
pub mod export;
mod json;
mod jsonw;
pub mod kinds;
pub mod meta;
mod normal;
pub mod quick;
mod ranks;
pub mod repeats;
pub mod sweep;
mod terse;
mod units;

use std::fmt;
use std::str::FromStr;

use iolab_stats::{JobResult, RunResult};

pub use normal::{laying_out, WARNING_PREFIX};
pub use units::{num2str, Unit};

/// An output format of `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// fio's human-readable report.
    Normal,
    /// fio's JSON.
    Json,
    /// fio's JSON with latency histogram bins.
    JsonPlus,
    /// fio's terse (semicolon-separated) lines, version 3.
    Terse,
}

/// A format name that is not one of fio's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("unknown output format '{0}' (expected normal, json, json+ or terse)")]
    Unknown(String),
    #[error("empty output format list")]
    Empty,
}

impl Format {
    /// fio's name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Format::Normal => "normal",
            Format::Json => "json",
            Format::JsonPlus => "json+",
            Format::Terse => "terse",
        }
    }

    /// Parses a comma-separated `--output-format` list. The result is in
    /// the order fio prints the formats in one output (terse, then JSON,
    /// then normal), whatever order the list names them in, each once;
    /// json and json+ together give json+ alone, since fio prints one JSON
    /// document and adds the bins when either asked for them.
    pub fn parse_list(s: &str) -> Result<Vec<Format>, FormatError> {
        let mut seen = [false; 4];
        for name in s.split(',') {
            let f: Format = name.trim().parse()?;
            seen[f as usize] = true;
        }
        if seen[Format::JsonPlus as usize] {
            seen[Format::Json as usize] = false;
        }
        let out: Vec<Format> = [
            Format::Terse,
            Format::JsonPlus,
            Format::Json,
            Format::Normal,
        ]
        .into_iter()
        .filter(|&f| seen[f as usize])
        .collect();
        if out.is_empty() {
            return Err(FormatError::Empty);
        }
        Ok(out)
    }
}

impl FromStr for Format {
    type Err = FormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "normal" => Ok(Format::Normal),
            "json" => Ok(Format::Json),
            "json+" => Ok(Format::JsonPlus),
            "terse" => Ok(Format::Terse),
            "" => Err(FormatError::Empty),
            other => Err(FormatError::Unknown(other.to_string())),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether bandwidth is shown in bytes or bits (fio's `unit_base`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnitBase {
    #[default]
    Bytes,
    Bits,
}

/// Run-level facts the renderers print that are not results.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOpts {
    /// iolab's name and version ("iolab-0.1.0"): the version line of the
    /// normal text and the JSON's `"iolab version"`.
    pub version: String,
    /// The fio version whose formats these are ("fio-3.33"), printed where
    /// fio prints its own version in the machine-read formats (JSON's
    /// `"fio version"`, terse field 2), so parsers that check it still
    /// accept the output.
    pub fio_version: String,
    /// fio's `kb_base`: 1024 shows sizes and bandwidth with binary prefixes
    /// first ("118MiB/s (124MB/s)"), 1000 with decimal ones first.
    pub kb_base: u32,
    /// fio's `unit_base`.
    pub unit_base: UnitBase,
    /// fio's `sig_figs`: places of abbreviated numbers (IOPS, BW, sizes).
    pub sig_figs: u32,
    /// Local time's offset from UTC in seconds: fio prints dates in local
    /// time.
    pub utc_offset_s: i32,
    /// Where and how the run was measured (host, kernel, device,
    /// filesystem and mount options, as the results store keeps it): the
    /// JSON's top-level `"iolab"` carries it as `"provenance"`.
    pub provenance: Option<serde_json::Value>,
}

impl Default for RenderOpts {
    fn default() -> Self {
        Self {
            version: concat!("iolab-", env!("CARGO_PKG_VERSION")).to_string(),
            fio_version: "fio-3.33".to_string(),
            kb_base: 1024,
            unit_base: UnitBase::Bytes,
            sig_figs: 4,
            utc_offset_s: 0,
            provenance: None,
        }
    }
}

impl RenderOpts {
    /// Whether binary prefixes come first (kb_base is a power of two).
    pub(crate) fn pow2(&self) -> bool {
        self.kb_base.is_power_of_two()
    }
}

/// Renders a run's results in one format, as fio prints them when the jobs
/// have finished. For `Normal` that is the report without the lines fio
/// prints before the run (see [`render_preamble`]); it starts, as fio's
/// does, with an empty line.
pub fn render(result: &RunResult, opts: &RenderOpts, format: Format) -> String {
    match format {
        Format::Normal => normal::render(result, opts),
        Format::Json => json::render(result, opts, false),
        Format::JsonPlus => json::render(result, opts, true),
        Format::Terse => terse::render(result, opts),
    }
}

/// The lines the normal format prints before the jobs start: one line per
/// job with its type, block sizes, engine and depth ("..." once for a
/// job's further clones), iolab's version, and "Starting N threads".
pub fn render_preamble(jobs: &[JobResult], opts: &RenderOpts) -> String {
    normal::preamble(jobs, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_lists() {
        assert_eq!(
            Format::parse_list("json,normal").unwrap(),
            vec![Format::Json, Format::Normal]
        );
        assert_eq!(
            Format::parse_list("normal, terse,json+,json").unwrap(),
            vec![Format::Terse, Format::JsonPlus, Format::Normal]
        );
        assert_eq!(
            Format::parse_list("terse,terse").unwrap(),
            vec![Format::Terse]
        );
        assert_eq!(
            Format::parse_list("json,xml"),
            Err(FormatError::Unknown("xml".into()))
        );
        assert_eq!(Format::parse_list(""), Err(FormatError::Empty));
        assert_eq!(Format::parse_list("json,"), Err(FormatError::Empty));
        assert_eq!("json+".parse::<Format>().unwrap().to_string(), "json+");
    }

    #[test]
    fn default_opts() {
        let o = RenderOpts::default();
        assert!(o.version.starts_with("iolab-"));
        assert!(o.pow2());
        assert!(!RenderOpts { kb_base: 1000, ..o }.pow2());
    }
}
