//! What the job language reads from outside the job text: environment
//! variables for `${VAR}`, the host facts behind the keywords
//! `$pagesize`, `$mb_memory` and `$ncpus`, and the process's place in an
//! MPI run behind `$rank` and `$nranks` (0 and 1 outside one). The caller
//! fills it in, so the parser itself stays a pure function of its inputs.

use std::collections::HashMap;

use crate::error::ValueError;

/// Host facts for the reserved keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// `$pagesize`: bytes per memory page.
    pub page_size: u64,
    /// `$mb_memory`: physical memory in MiB.
    pub mb_memory: u64,
    /// `$ncpus`: online CPUs.
    pub ncpus: u64,
}

impl Host {
    /// A small fixed host (4 KiB pages, 1 GiB of memory, 2 CPUs), for tests
    /// and examples whose job text must not depend on the machine.
    pub const EXAMPLE: Host = Host {
        page_size: 4096,
        mb_memory: 1024,
        ncpus: 2,
    };
}

/// Everything substitution needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Context {
    pub host: Host,
    pub vars: HashMap<String, String>,
    /// `$rank`: this process's rank in an MPI run (0 outside one).
    pub rank: u32,
    /// `$nranks`: how many ranks the run has (1 outside one).
    pub nranks: u32,
}

impl Context {
    /// A context with the process environment.
    pub fn from_env(host: Host) -> Self {
        Context {
            host,
            vars: std::env::vars().collect(),
            rank: 0,
            nranks: 1,
        }
    }

    /// A context with no variables, for tests and built-in jobs.
    pub fn fixed(host: Host) -> Self {
        Context {
            host,
            vars: HashMap::new(),
            rank: 0,
            nranks: 1,
        }
    }
}

/// The outcome of substituting variables and keywords in a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    pub text: String,
    /// A keyword was replaced, so arithmetic in the value is evaluated.
    pub keyword: bool,
}

pub(crate) const KEYWORDS: [&str; 5] = ["$pagesize", "$mb_memory", "$ncpus", "$nranks", "$rank"];

/// Replaces `${VAR}` with the variable's value (an unset variable is an
/// error that names it) and the keywords with the host's numbers. When a
/// keyword was replaced and the value holds arithmetic, the value is wrapped
/// in parentheses so that the value parsers evaluate it: `8*$mb_memory`
/// becomes `(8*24000)`.
pub fn expand(text: &str, ctx: &Context) -> Result<Expanded, ValueError> {
    expand_as(text, ctx, true)
}

/// `expand` for a value of a given kind: a `numeric` one is wrapped for
/// arithmetic as `expand` says (`offset=$rank*64m` becomes `(2*64m)`); a
/// text one (a file name, a directory) is left as written around the
/// numbers (`directory=/mnt/$rank` becomes `/mnt/2`).
pub fn expand_as(text: &str, ctx: &Context, numeric: bool) -> Result<Expanded, ValueError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| ValueError::new(format!("`${{` without a closing `}}` in `{text}`")))?;
        let var = &after[..end];
        if var.is_empty() {
            return Err(ValueError::new(format!(
                "empty variable name `${{}}` in `{text}`"
            )));
        }
        match ctx.vars.get(var) {
            Some(v) => out.push_str(v),
            None => {
                return Err(ValueError::new(format!(
                    "environment variable `{var}` is not set (used as `${{{var}}}`)"
                )))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);

    let mut keyword = false;
    for kw in KEYWORDS {
        if out.contains(kw) {
            let n = match kw {
                "$pagesize" => ctx.host.page_size,
                "$mb_memory" => ctx.host.mb_memory,
                "$nranks" => u64::from(ctx.nranks),
                "$rank" => u64::from(ctx.rank),
                _ => ctx.host.ncpus,
            };
            out = out.replace(kw, &n.to_string());
            keyword = true;
        }
    }
    if keyword
        && numeric
        && out.contains(['+', '-', '*', '/', '%', '^'])
        && !out.contains([',', ':'])
        && !out.trim_start().starts_with('(')
    {
        out = format!("({})", out.trim());
    }
    Ok(Expanded { text: out, keyword })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        let mut c = Context::fixed(Host {
            page_size: 4096,
            mb_memory: 24000,
            ncpus: 2,
        });
        c.vars.insert("SIZE".into(), "64m".into());
        c.vars.insert("DIR".into(), "/mnt/test".into());
        c
    }

    #[test]
    fn variables_are_substituted() {
        let e = expand("${SIZE}", &ctx()).unwrap();
        assert_eq!(e.text, "64m");
        assert!(!e.keyword);
        assert_eq!(
            expand("${DIR}/f.${SIZE}", &ctx()).unwrap().text,
            "/mnt/test/f.64m"
        );
    }

    #[test]
    fn unset_variable_is_named() {
        let err = expand("${NOPE}", &ctx()).unwrap_err();
        assert!(err.0.contains("`NOPE` is not set"), "{err}");
        assert!(expand("${SIZE", &ctx()).is_err());
        assert!(expand("${}", &ctx()).is_err());
    }

    #[test]
    fn keywords_become_numbers_and_arithmetic_is_marked() {
        let e = expand("8*$mb_memory", &ctx()).unwrap();
        assert_eq!(e.text, "(8*24000)");
        assert!(e.keyword);
        assert_eq!(expand("$pagesize", &ctx()).unwrap().text, "4096");
        assert_eq!(expand("$ncpus", &ctx()).unwrap().text, "2");
        // A list keeps its shape: no parentheses around it.
        assert_eq!(expand("$pagesize,8k", &ctx()).unwrap().text, "4096,8k");
        // Without a keyword, a dash (a range) is left alone.
        assert_eq!(expand("1k-4k", &ctx()).unwrap().text, "1k-4k");
    }

    #[test]
    fn rank_keywords_are_numbers_in_sizes_and_text_in_names() {
        let mut c = ctx();
        c.rank = 2;
        c.nranks = 4;
        assert_eq!(expand("$rank*64m", &c).unwrap().text, "(2*64m)");
        assert_eq!(expand("$nranks", &c).unwrap().text, "4");
        let e = expand_as("/mnt/x-$rank/f.$rank.of.$nranks", &c, false).unwrap();
        assert_eq!(e.text, "/mnt/x-2/f.2.of.4");
        // Outside MPI a job file with them runs as rank 0 of 1.
        let e = expand_as("/mnt/$rank-of-$nranks", &ctx(), false).unwrap();
        assert_eq!(e.text, "/mnt/0-of-1");
    }
}
