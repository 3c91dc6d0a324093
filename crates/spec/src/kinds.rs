//! Parsing and printing a value by its option's kind: the one place that
//! maps `Kind` to the value parsers, so the job parser, the defaults and
//! `--parse-only` all agree.

use crate::error::ValueError;
use crate::options::{suggest_word, Kind, OptDef};
use crate::value::{
    blocks, cpus, distribution, expr, files, pattern, percentiles, perdir, size, time, KbBase,
    RwMode, RwSpec, SizeValue, Value,
};

/// Parses `text` as a value of `def`'s kind. `None` is a bare option.
pub fn parse_value(def: &OptDef, text: Option<&str>, kb: KbBase) -> Result<Value, ValueError> {
    let text = match text {
        Some(t) if !t.trim().is_empty() => t.trim(),
        _ => {
            return match def.kind {
                Kind::Bool | Kind::Flag => Ok(Value::Bool(true)),
                Kind::OptStr => Ok(Value::Str(String::new())),
                kind => Err(ValueError::new(format!(
                    "a value is needed ({}=<{}>)",
                    def.name,
                    kind.type_name()
                ))),
            }
        }
    };
    let value = match def.kind {
        Kind::Bool => match int_value(text, kb)? {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            _ => {
                return Err(ValueError::new(format!(
                    "`{text}` is not a boolean: use 0 or 1"
                )))
            }
        },
        Kind::Flag => Value::Bool(int_value(text, kb)? != 0),
        Kind::Int => Value::Int(check_range(def, int_value(text, kb)?)?),
        Kind::Size => Value::Size(SizeValue::Bytes(check_size(
            def,
            size::parse_size(text, kb)?,
        )?)),
        Kind::SizeRange => match (size::parse_size(text, kb), blocks::parse_range(text, kb)) {
            (Ok(b), _) => Value::Size(SizeValue::Bytes(check_size(def, b)?)),
            (_, Ok(r)) if r.min < r.max => {
                check_size(def, r.min)?;
                check_size(def, r.max)?;
                Value::SizeRange(r)
            }
            (_, Ok(r)) => Value::Size(SizeValue::Bytes(check_size(def, r.min)?)),
            (Err(e), _) if !text.contains(['-', ':']) => return Err(e),
            (_, Err(e)) => return Err(e),
        },
        Kind::SizePct => match size::parse_size_or_percent(text, kb)? {
            SizeValue::Bytes(b) => Value::Size(SizeValue::Bytes(check_size(def, b)?)),
            p => Value::Size(p),
        },
        Kind::Time(unit) => Value::Time(time::parse_time(text, unit)?),
        Kind::Str | Kind::OptStr => Value::Str(text.to_string()),
        Kind::Choice(choices) => {
            let lower = text.to_ascii_lowercase();
            match choices
                .iter()
                .find(|c| c.word == lower || c.aliases.contains(&lower.as_str()))
            {
                Some(c) => Value::Choice(c.word),
                None => return Err(choice_error(def, text)),
            }
        }
        Kind::SizePerDir => Value::PerDir(perdir::parse_per_dir(text, &|t| {
            size::parse_size(t, kb).and_then(|b| check_size(def, b))
        })?),
        Kind::IntPerDir => Value::PerDir(perdir::parse_per_dir(text, &|t| {
            let n = check_range(def, int_value(t, kb)?)?;
            u64::try_from(n).map_err(|_| ValueError::new(format!("`{t}` must not be negative")))
        })?),
        Kind::RangePerDir => Value::Ranges(perdir::parse_per_dir(text, &|t| {
            blocks::parse_range(t, kb)
        })?),
        Kind::SplitPerDir => Value::Split(perdir::parse_per_dir(text, &|t| {
            blocks::parse_split(t, kb)
        })?),
        Kind::Rw => Value::Rw(parse_rw(text, kb)?),
        Kind::Distribution => Value::Distribution(distribution::parse_distribution_kb(text, kb)?),
        Kind::FileService => Value::FileService(distribution::parse_file_service(text)?),
        Kind::Percentiles => Value::Floats(percentiles::parse_percentiles(text)?),
        Kind::Cpus => Value::Cpus(cpus::parse_cpus(text)?),
        Kind::Files => Value::Files(files::parse_files(text)?),
        Kind::Pattern => Value::Pattern(pattern::parse_pattern(text)?),
    };
    Ok(value)
}

/// Prints a value of `def`'s kind in job-file syntax; `parse_value` reads
/// it back equal.
pub fn format_value(def: &OptDef, value: &Value, kb: KbBase) -> String {
    match value {
        Value::PerDir(p) if def.kind == Kind::IntPerDir => {
            perdir::format_per_dir(p, &|n| n.to_string())
        }
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Int(n) => n.to_string(),
        Value::Size(s) => size::format_size_value(*s, kb),
        Value::Time(us) => time::format_time(*us),
        Value::Str(s) => s.clone(),
        Value::Choice(w) => (*w).to_string(),
        Value::PerDir(p) => perdir::format_per_dir(p, &|b| size::format_size(*b, kb)),
        Value::Ranges(p) => perdir::format_per_dir(p, &|r| blocks::format_range(r, kb)),
        Value::SizeRange(r) => blocks::format_range(r, kb),
        Value::Split(p) => perdir::format_per_dir(p, &|s| blocks::format_split(s, kb)),
        Value::Rw(rw) => match rw.modifier {
            Some(n) if n < 0 => format!(
                "{}:-{}",
                rw.mode.name(),
                size::format_size(n.unsigned_abs(), kb)
            ),
            Some(n) => format!("{}:{}", rw.mode.name(), size::format_size(n as u64, kb)),
            None => rw.mode.name().to_string(),
        },
        Value::Distribution(d) => distribution::format_distribution_kb(d, kb),
        Value::FileService(f) => distribution::format_file_service(f),
        Value::Floats(f) => percentiles::format_percentiles(f),
        Value::Cpus(c) => cpus::format_cpus(c),
        Value::Files(f) => files::format_files(f),
        Value::Pattern(p) => pattern::format_pattern(p),
    }
}

fn int_value(text: &str, kb: KbBase) -> Result<i64, ValueError> {
    if expr::is_expression(text) {
        let v = expr::eval(text, &|atom| size::parse_int(atom, kb).map(|n| n as f64))?;
        return Ok(v.trunc() as i64);
    }
    size::parse_int(text, kb)
}

fn check_range(def: &OptDef, n: i64) -> Result<i64, ValueError> {
    if let Some((min, max)) = def.range {
        if n < min || n > max {
            let max_text = if max == i64::MAX {
                "no maximum".to_string()
            } else {
                format!("at most {max}")
            };
            return Err(ValueError::new(format!(
                "{n} is out of range: at least {min}, {max_text}"
            )));
        }
    }
    Ok(n)
}

fn check_size(def: &OptDef, bytes: u64) -> Result<u64, ValueError> {
    if let Some((min, max)) = def.range {
        let (min, max) = (min.max(0) as u64, max.max(0) as u64);
        if bytes < min || bytes > max {
            return Err(ValueError::new(format!(
                "{bytes} bytes is out of range: at least {min}, at most {max}"
            )));
        }
    }
    Ok(bytes)
}

fn parse_rw(text: &str, kb: KbBase) -> Result<RwSpec, ValueError> {
    let (word, modifier) = match text.split_once(':') {
        Some((w, m)) => (w, Some(m)),
        None => (text, None),
    };
    let lower = word.trim().to_ascii_lowercase();
    let mode = RwMode::from_word(&lower).ok_or_else(|| {
        let words = RwMode::ALL.iter().map(|(_, n)| *n).chain(["readwrite"]);
        let hint = suggest_word(&lower, words)
            .map(|w| format!(" (did you mean `{w}`?)"))
            .unwrap_or_default();
        let all: Vec<&str> = RwMode::ALL.iter().map(|(_, n)| *n).collect();
        ValueError::new(format!(
            "unknown mode `{word}`{hint}; valid modes: {}",
            all.join(", ")
        ))
    })?;
    let modifier = match modifier {
        None => None,
        Some(m) => {
            // A sequential mode takes a negative gap: each I/O starts that
            // far back from where the last one ended (fio's `rw=read:-8k`).
            let (back, m) = match m.trim().strip_prefix('-') {
                Some(rest) if !mode.is_random() => (true, rest),
                _ => (false, m),
            };
            let n = size::parse_size(m, kb)
                .map_err(|e| ValueError::new(format!("bad modifier in `rw={text}`: {e}")))?;
            let n = i64::try_from(n).map_err(|_| {
                ValueError::new(format!("bad modifier in `rw={text}`: `{m}` is too large"))
            })?;
            Some(if back { -n } else { n })
        }
    };
    Ok(RwSpec { mode, modifier })
}

fn choice_error(def: &OptDef, text: &str) -> ValueError {
    let Kind::Choice(choices) = def.kind else {
        return ValueError::new(format!("`{text}` is not valid for `{}`", def.name));
    };
    let words: Vec<&str> = choices.iter().map(|c| c.word).collect();
    let lower = text.to_ascii_lowercase();
    if def.fio_only_values.contains(&lower.as_str()) {
        return ValueError::new(format!(
            "`{text}` is valid in fio but iolab does not implement it; iolab accepts: {}",
            words.join(", ")
        ));
    }
    let all = choices
        .iter()
        .flat_map(|c| std::iter::once(c.word).chain(c.aliases.iter().copied()));
    let hint = suggest_word(&lower, all)
        .map(|w| format!(" (did you mean `{w}`?)"))
        .unwrap_or_default();
    ValueError::new(format!(
        "unknown value `{text}`{hint}; valid values: {}",
        words.join(", ")
    ))
}
