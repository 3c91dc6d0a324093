//! Help texts rendered from the option table: `iolab run --cmdhelp`,
//! `--cmdhelp=OPTION`, and the Markdown option reference in
//! `docs/options.md`.

use crate::error::{Location, SpecError};
use crate::options::{self, Category, Kind, Opt, OptDef, Support, OPTIONS};

/// `--cmdhelp` (all options, by category) or `--cmdhelp=NAME` (one option in
/// detail). `all` means every option, as in fio.
pub fn cmdhelp(name: Option<&str>) -> Result<String, SpecError> {
    match name {
        None | Some("all") | Some("") => Ok(all_options()),
        Some(n) => match options::lookup(n) {
            Some(opt) => Ok(one_option(opt)),
            None => {
                let hint = options::suggest(n)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                let what = if options::is_fio_only(n) {
                    format!("`{n}` is a fio option that iolab does not implement")
                } else {
                    format!("no option named `{n}`{hint}")
                };
                Err(SpecError::new(Location::Builtin, what))
            }
        },
    }
}

fn categories() -> Vec<Category> {
    let mut cats: Vec<Category> = OPTIONS.iter().map(|d| d.category).collect();
    cats.sort();
    cats.dedup();
    cats
}

fn all_options() -> String {
    let mut out = String::new();
    for cat in categories() {
        out.push_str(&format!("{}:\n", cat.title()));
        for d in OPTIONS.iter().filter(|d| d.category == cat) {
            out.push_str(&format!("  {:<28} {}\n", d.name, d.help));
        }
        out.push('\n');
    }
    out.push_str("`iolab run --cmdhelp=OPTION` shows one option in detail.\n");
    out
}

fn one_option(opt: Opt) -> String {
    let d = opt.def();
    let mut out = format!("{}: {}\n", d.name, d.help);
    let mut field = |k: &str, v: String| out.push_str(&format!("  {k:<10} {v}\n"));
    if !d.aliases.is_empty() {
        field("alias", d.aliases.join(", "));
    }
    field("type", d.kind.type_name().to_string());
    field("default", d.default.unwrap_or("(none)").to_string());
    if let Some(r) = range_text(d) {
        field("range", r);
    }
    if !d.unit_text().is_empty() {
        field("unit", d.unit_text().to_string());
    }
    field("category", d.category.title().to_string());
    field("example", format!("{}={}", d.name, d.example));
    if let Support::Ignored(reason) = d.support {
        field("effect", format!("none: {reason}"));
    }
    if let Kind::Choice(choices) = d.kind {
        out.push_str("  values:\n");
        for c in choices {
            let alias = if c.aliases.is_empty() {
                String::new()
            } else {
                format!(" (also {})", c.aliases.join(", "))
            };
            out.push_str(&format!("    {:<14} {}{alias}\n", c.word, c.help));
        }
        if !d.fio_only_values.is_empty() {
            out.push_str(&format!(
                "  fio also accepts, iolab does not implement: {}\n",
                d.fio_only_values.join(", ")
            ));
        }
    }
    out
}

fn range_text(d: &OptDef) -> Option<String> {
    let (min, max) = d.range?;
    Some(if max == i64::MAX {
        format!("{min} and up")
    } else {
        format!("{min} to {max}")
    })
}

/// The option reference, `docs/options.md`. A test keeps the file equal to
/// this text.
pub fn options_markdown() -> String {
    let mut out = String::from(
        "# Job options\n\n\
         Generated from iolab's option table (`crates/spec/src/options/table.rs`);\n\
         `iolab run --cmdhelp=OPTION` prints the same facts. Options fio has and iolab\n\
         does not implement are rejected by name, never silently ignored.\n\n\
         Sizes take fio's suffixes (k, m, g, t, p; KiB, MiB, ...; `kb_base` decides\n\
         which are powers of 1024), times take d, h, m, s, ms, us, and a bare number\n\
         is in the unit shown. Per-direction values are `read,write,trim`.\n",
    );
    for cat in categories() {
        out.push_str(&format!("\n## {}\n\n", cat.title()));
        out.push_str("| option | type | default | range | unit | description |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for d in OPTIONS.iter().filter(|d| d.category == cat) {
            let mut name = format!("`{}`", d.name);
            for a in d.aliases {
                name.push_str(&format!(", `{a}`"));
            }
            let mut help = d.help.to_string();
            if let Kind::Choice(choices) = d.kind {
                let words: Vec<String> = choices.iter().map(|c| format!("`{}`", c.word)).collect();
                help.push_str(&format!(": {}", words.join(", ")));
            }
            if let Support::Ignored(reason) = d.support {
                help.push_str(&format!(" (accepted, no effect: {reason})"));
            }
            out.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} |\n",
                d.kind.type_name(),
                d.default.map(|v| format!("`{v}`")).unwrap_or_default(),
                range_text(d).unwrap_or_default(),
                d.unit_text(),
                help.replace('|', "\\|"),
            ));
        }
    }
    out
}
