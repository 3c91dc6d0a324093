//! The exporters: one per format, each turning a [`Document`] into bytes
//! behind the one [`Exporter`] trait. Adding a format is adding a file
//! here and a variant to [`DocFormat`].

mod csv;
mod html;
mod markdown;
mod svg;
mod text;

use std::fmt;
use std::str::FromStr;

use crate::doc::Document;

pub use self::csv::Csv;
pub use self::html::Html;
pub use self::markdown::Markdown;
pub use self::text::{bar, Style, Text};

/// Turns a document into the bytes of one format.
pub trait Exporter {
    fn export(&self, doc: &Document) -> String;
}

/// The formats of the document model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocFormat {
    /// Aligned columns for a terminal (`table`).
    Text,
    Markdown,
    Csv,
    Json,
    Html,
}

impl DocFormat {
    pub const ALL: [DocFormat; 5] = [
        DocFormat::Text,
        DocFormat::Markdown,
        DocFormat::Csv,
        DocFormat::Json,
        DocFormat::Html,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DocFormat::Text => "table",
            DocFormat::Markdown => "markdown",
            DocFormat::Csv => "csv",
            DocFormat::Json => "json",
            DocFormat::Html => "html",
        }
    }
}

impl fmt::Display for DocFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of the document formats.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown output format '{0}' (expected table, markdown, csv, json or html)")]
pub struct DocFormatError(pub String);

impl FromStr for DocFormat {
    type Err = DocFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "table" | "normal" | "text" => Ok(DocFormat::Text),
            "markdown" | "md" => Ok(DocFormat::Markdown),
            "csv" => Ok(DocFormat::Csv),
            "json" => Ok(DocFormat::Json),
            "html" => Ok(DocFormat::Html),
            other => Err(DocFormatError(other.to_string())),
        }
    }
}

/// The document as JSON: the model itself (serde), numbers as numbers.
pub struct Json;

impl Exporter for Json {
    fn export(&self, doc: &Document) -> String {
        let mut s = serde_json::to_string_pretty(doc).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The document in `format`; text in the given terminal style.
pub fn export(doc: &Document, format: DocFormat, style: Style) -> String {
    match format {
        DocFormat::Text => Text { style }.export(doc),
        DocFormat::Markdown => Markdown.export(doc),
        DocFormat::Csv => Csv.export(doc),
        DocFormat::Json => Json.export(doc),
        DocFormat::Html => Html.export(doc),
    }
}

/// The HTML page of a document.
pub fn html_of(doc: &Document) -> String {
    Html.export(doc)
}
